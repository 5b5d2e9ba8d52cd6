//! The analysis of a benchmark's samples: per-operation values with the overhead
//! subtracted, outlier and perturbation labels, raw and clean statistics, levels in
//! time (change points) and modes.
//!
//! A pure function of the samples and settings: no clock, no I/O.

use super::{Expect, Sample, Settings};
use crate::runner::usage::Usage;
use crate::stats::{self, changepoint, modes, outliers, Mode, Summary};
use serde::{Deserialize, Serialize};

/// Why each sample is out of the clean set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleFlags {
    /// Outside the window around the pilot estimate (VMS timing executive).
    pub window: bool,
    /// A MAD outlier (modified z-score above the threshold).
    pub mad: bool,
    /// The thread was switched out or faulted during the sample.
    pub perturbed: bool,
}

impl SampleFlags {
    /// Whether the sample is kept in the clean statistics.
    pub fn clean(&self) -> bool {
        !(self.window || self.mad || self.perturbed)
    }
}

/// A stretch of samples at one level, found by change-point detection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Level {
    /// The level's median per-operation time, in ns.
    pub median_ns: f64,
    /// When it began, in ns since sampling began.
    pub start_ns: f64,
    /// How long it lasted, in ns.
    pub duration_ns: f64,
    /// Clean samples in it.
    pub samples: usize,
}

/// Counts of labelled samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// All samples.
    pub total: usize,
    /// Outside the pilot window.
    pub window: usize,
    /// MAD outliers.
    pub mad: usize,
    /// Perturbed samples.
    pub perturbed: usize,
    /// Samples in the clean statistics.
    pub clean: usize,
    /// Samples whose subtracted value fell below zero and were floored at 0.
    pub floored: usize,
}

/// Per-operation resource usage over all samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Accounting {
    /// User CPU ns per operation.
    pub user_ns: f64,
    /// System CPU ns per operation.
    pub sys_ns: f64,
    /// Voluntary switches per operation.
    pub vol_switches: f64,
    /// Involuntary switches per operation.
    pub invol_switches: f64,
    /// Minor faults per operation.
    pub minor_faults: f64,
    /// Major faults per operation.
    pub major_faults: f64,
}

/// The result of [`analyze`].
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    /// Per-operation ns of each sample, in time order, overhead subtracted.
    pub per_op_ns: Vec<f64>,
    /// Each sample's labels.
    pub flags: Vec<SampleFlags>,
    /// The pilot estimate (median of the leading samples), in ns.
    pub pilot_ns: f64,
    /// Statistics over every sample.
    pub raw: Option<Summary>,
    /// Statistics over the clean samples.
    pub clean: Option<Summary>,
    /// Label counts.
    pub counts: Counts,
    /// Levels in time; more than one means the speed changed while sampling.
    pub levels: Vec<Level>,
    /// Modes of the clean samples; more than one means several distinct costs.
    pub modes: Vec<Mode>,
    /// Resource usage per operation.
    pub accounting: Accounting,
    /// Operations timed in all samples.
    pub operations: u64,
}

impl Analysis {
    /// The headline summary: clean if any sample is clean, else raw.
    pub fn headline(&self) -> Option<&Summary> {
        self.clean.as_ref().or(self.raw.as_ref())
    }

    /// The relative half-width of the headline median's CI (infinite when unknown).
    pub fn relative_ci(&self) -> f64 {
        self.headline().map(stats::relative_ci_half_width).unwrap_or(f64::INFINITY)
    }
}

fn perturbed(u: &Usage, expect: Expect) -> bool {
    u.invol_switches > 0
        || u.major_faults > 0
        || (!expect.switches && u.vol_switches > 0)
        || (!expect.faults && u.minor_faults > 0)
}

/// Analyses samples of `k` operations each, subtracting `overhead_ticks` per batch.
pub fn analyze(
    samples: &[Sample],
    k: u64,
    overhead_ticks: u64,
    ns_per_tick: f64,
    expect: Expect,
    s: &Settings,
) -> Analysis {
    let mut counts = Counts { total: samples.len(), ..Counts::default() };
    let per_op_ns: Vec<f64> = samples
        .iter()
        .map(|x| {
            if x.ticks < overhead_ticks {
                counts.floored += 1;
            }
            x.ticks.saturating_sub(overhead_ticks) as f64 * ns_per_tick / k as f64
        })
        .collect();
    let pilot_n = s.pilot.min(per_op_ns.len());
    let pilot_ns = stats::median(&per_op_ns[..pilot_n]).unwrap_or(f64::NAN);
    let window = outliers::window_outliers(&per_op_ns, pilot_ns, s.window.0, s.window.1);
    let mad = outliers::mad_outliers(&per_op_ns, s.mad_threshold);
    let flags: Vec<SampleFlags> = samples
        .iter()
        .enumerate()
        .map(|(i, x)| SampleFlags {
            window: window[i],
            mad: mad[i],
            perturbed: perturbed(&x.usage, expect),
        })
        .collect();
    counts.window = flags.iter().filter(|f| f.window).count();
    counts.mad = flags.iter().filter(|f| f.mad).count();
    counts.perturbed = flags.iter().filter(|f| f.perturbed).count();
    let clean_idx: Vec<usize> = (0..samples.len()).filter(|&i| flags[i].clean()).collect();
    counts.clean = clean_idx.len();
    let clean_vals: Vec<f64> = clean_idx.iter().map(|&i| per_op_ns[i]).collect();

    let levels = levels(samples, &clean_idx, &clean_vals);
    let modes = if clean_vals.len() >= 50 { modes::modes(&clean_vals, 0.05, 0.03) } else { vec![] };

    let mut total = Usage::default();
    for x in samples {
        total.add(&x.usage);
    }
    let operations = k * samples.len() as u64;
    let per = |v: u64| if operations == 0 { 0.0 } else { v as f64 / operations as f64 };
    let accounting = Accounting {
        user_ns: per(total.user_ns),
        sys_ns: per(total.sys_ns),
        vol_switches: per(total.vol_switches),
        invol_switches: per(total.invol_switches),
        minor_faults: per(total.minor_faults),
        major_faults: per(total.major_faults),
    };
    Analysis {
        raw: stats::summarize(&per_op_ns),
        clean: stats::summarize(&clean_vals),
        per_op_ns,
        flags,
        pilot_ns,
        counts,
        levels,
        modes,
        accounting,
        operations,
    }
}

/// Change points over the clean samples in time order, as levels with times.
fn levels(samples: &[Sample], clean_idx: &[usize], clean_vals: &[f64]) -> Vec<Level> {
    let n = clean_vals.len();
    if n < 40 {
        return vec![];
    }
    let min_seg = (n / 20).max(20);
    let segs = changepoint::segments(clean_vals, min_seg, 0.001, 0.02, 4);
    let end_ns = samples.last().map(|x| x.at_ns).unwrap_or(0.0);
    segs.iter()
        .map(|g| {
            let start_ns = samples[clean_idx[g.start]].at_ns;
            let stop_ns = if g.end < n { samples[clean_idx[g.end]].at_ns } else { end_ns };
            Level {
                median_ns: g.median,
                start_ns,
                duration_ns: stop_ns - start_ns,
                samples: g.end - g.start,
            }
        })
        .collect()
}
