//! The analysis of a benchmark's samples: per-operation values with the overhead
//! subtracted, outlier and perturbation labels, raw and clean statistics, the rounds'
//! states in time (levels) and modes.
//!
//! A pure function of the samples and settings: no clock, no I/O.

use super::{Expect, Sample, Settings, Source};
use crate::method;
use crate::os::usage::Usage;
use crate::stats::rounds::{self, RoundEstimate, State};
use crate::stats::{self, modes, outliers, Mode, Summary};
use serde::{Deserialize, Serialize};

/// Why each sample is out of the clean set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleFlags {
    /// A MAD outlier (modified z-score above the threshold).
    pub mad: bool,
    /// The thread was switched out or faulted during the sample.
    pub perturbed: bool,
}

impl SampleFlags {
    /// Whether the sample is kept in the clean statistics.
    pub fn clean(&self) -> bool {
        !(self.mad || self.perturbed)
    }
}

/// A stretch of consecutive rounds in one state ([`rounds::states`]): the run's
/// states in time order, so a reader sees when the speed changed as well as by how
/// much.
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

/// What perturbed the perturbed samples: how many samples showed each cause the
/// operation does not bring about itself (a sample with two causes counts under both).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PerturbedBy {
    /// Samples with a voluntary switch the operation does not make (it does not block).
    pub vol_switches: usize,
    /// Samples with an involuntary switch (preempted) the operation does not explain.
    pub invol_switches: usize,
    /// Samples with a page fault the operation does not take.
    pub faults: usize,
    /// Samples during which the kernel's events showed something the operation does
    /// not do (`--cull kernel`).
    pub kernel: usize,
}

impl PerturbedBy {
    /// "4026 voluntary switches, 3 faults": the causes that occurred, in a fixed order.
    pub fn describe(&self) -> String {
        [
            (self.vol_switches, "with a voluntary switch"),
            (self.invol_switches, "preempted"),
            (self.faults, "with a page fault"),
            (self.kernel, "with a kernel event"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect::<Vec<_>>()
        .join(", ")
    }
}

/// Which samples the headline and its interval rest on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Basis {
    /// The clean samples: the trimmed mean of each round's clean median, Yuen's
    /// interval over the rounds (see [`crate::stats::rounds`]).
    #[default]
    Clean,
    /// Every sample, perturbed and outliers included, because the clean ones were too
    /// few to rest on ([`too_few_clean`]): the median of all samples, with their
    /// order-statistic interval, never narrower than [`method::FEW_FLOOR`] (or the profile's
    /// target, if wider). Such a result is never converged.
    All,
}

/// Whether `clean` clean samples of `total` are too few to carry a headline: fewer
/// than [`method::MIN_CLEAN`], or fewer than a tenth of all.
pub fn too_few_clean(clean: usize, total: usize) -> bool {
    clean < method::MIN_CLEAN || clean * method::MIN_CLEAN_ONE_IN < total
}

/// Counts of labelled samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// All samples.
    pub total: usize,
    /// MAD outliers.
    pub mad: usize,
    /// Perturbed samples.
    pub perturbed: usize,
    /// Samples in the clean statistics.
    pub clean: usize,
    /// Samples whose subtracted value fell below zero and were floored at 0.
    pub floored: usize,
    /// What perturbed the perturbed samples, by cause.
    #[serde(default)]
    pub perturbed_by: PerturbedBy,
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

/// One round's figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundFigure {
    /// The round (0 first).
    pub round: u32,
    /// When its first sample started, ns since the measurement began.
    pub start_ns: f64,
    /// The median of its clean samples (None when it has none), ns per operation; of
    /// all its samples when the result rests on all ([`Basis::All`]).
    pub median_ns: Option<f64>,
    /// Its clean samples.
    pub clean: usize,
    /// All its samples.
    pub total: usize,
}

/// The result of [`analyze`].
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    /// Per-operation ns of each sample, in time order, overhead subtracted.
    pub per_op_ns: Vec<f64>,
    /// Each sample's labels.
    pub flags: Vec<SampleFlags>,
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
    /// Each round's figure, in round order.
    pub rounds: Vec<RoundFigure>,
    /// The round-level estimate: the headline and its interval. When the result rests
    /// on all samples ([`Basis::All`]), `mean` is the median of all samples and the
    /// interval their order-statistic interval, widened to at least [`method::FEW_FLOOR`] and
    /// to the round figures' own t interval.
    pub estimate: Option<RoundEstimate>,
    /// Which samples the headline rests on.
    pub basis: Basis,
    /// Groups of round figures more than [`method::STATE_GAP`] apart; more than one means the
    /// figure depended on when it was measured.
    pub states: Vec<State>,
    /// What culling by kernel events did (`--cull kernel`), when the samples carry
    /// their spans.
    pub kernel: Option<KernelCull>,
    /// The rounds' own interval (low, high, ns), when what the machine allows the
    /// result's kind was added to it ([`crate::harness::Harness::conclude`]).
    pub own: Option<(f64, f64)>,
}

/// What culling by the kernel's events did to one benchmark's samples: the memo's
/// probes at the clock interrupt and the context switch, whose presence between two
/// time stamps removes that interval from the statistics.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelCull {
    /// Samples whose span on the kernel's clock was known.
    pub samples: usize,
    /// Samples during which the kernel did something the operation does not do.
    pub culled: usize,
    /// Culled samples by cause ("timer", "irq", "switch", "fault", "migrate", …); a
    /// sample with two causes counts under both.
    pub by_cause: std::collections::BTreeMap<String, usize>,
    /// The median per-operation time of the culled samples, ns.
    pub culled_median_ns: Option<f64>,
    /// The clean median had only the resource-usage counters flagged samples, ns.
    pub rusage_median_ns: Option<f64>,
    /// The clean median with the kernel's events culled too, ns.
    pub clean_median_ns: Option<f64>,
}

impl Analysis {
    /// The distribution the headline rests on: the clean samples, or every sample
    /// when the clean ones are too few ([`Basis::All`]) or none.
    pub fn headline(&self) -> Option<&Summary> {
        match self.basis {
            Basis::Clean => self.clean.as_ref().or(self.raw.as_ref()),
            Basis::All => self.raw.as_ref(),
        }
    }

    /// The headline figure: the round-level estimate (trimmed mean of the round
    /// medians), else the median of the samples.
    pub fn figure(&self) -> f64 {
        match &self.estimate {
            Some(e) => e.center,
            None => self.headline().map_or(f64::NAN, |s| s.median),
        }
    }

    /// The relative half-width of the headline's round-level CI (infinite when
    /// unknown).
    pub fn relative_ci(&self) -> f64 {
        self.estimate
            .as_ref()
            .map_or(f64::INFINITY, RoundEstimate::relative_half_width)
    }

    /// The relative half-width of the rounds' own interval, before what the machine
    /// allows was added to it (infinite when unknown): what more rounds narrow.
    pub fn own_relative_ci(&self) -> f64 {
        match (self.own, &self.estimate) {
            (Some((lo, hi)), Some(e)) if e.center != 0.0 && e.center.is_finite() => {
                (hi - lo) / 2.0 / e.center.abs()
            }
            _ => self.relative_ci(),
        }
    }

    /// What set the interval's width ([`Source`]): the rounds, or a floor below them
    /// (half a clock step per operation, the pooled samples' interval), or all the
    /// samples when the clean ones are too few.
    pub fn source(&self) -> Source {
        match (&self.estimate, self.basis) {
            (_, Basis::All) => Source::AllSamples,
            _ if self.own.is_some() => Source::Machine,
            (Some(e), _)
                if e.floor > 0.0 && e.ci_high - e.center <= e.floor * (1.0 + 1e-12) =>
            {
                if e.floor_by_clock {
                    Source::Clock
                } else {
                    Source::Samples
                }
            }
            _ => Source::Rounds,
        }
    }

    /// The interval's floor relative to the headline when it is half a clock step per
    /// operation, which more rounds cannot lower (0 otherwise, or when unknown): see
    /// [`RoundEstimate::floor`].
    pub fn relative_clock_floor(&self) -> f64 {
        self.estimate
            .as_ref()
            .filter(|e| e.floor_by_clock)
            .map_or(0.0, RoundEstimate::relative_floor)
    }
}

/// The counters a sample's usage moved that the operation is not expected to move.
///
/// A blocking operation (`expect.switches`) excuses involuntary switches too, as
/// culling by kernel events does: once it has slept, whether the switch that puts it
/// back counts as voluntary or as a preemption depends on where the wake-up landed
/// (a disk completion's worker, the partner it woke), and a sample that waited for a
/// device cannot be told apart from one preempted meanwhile. Time a preemption added
/// shows in the outlier labels instead.
pub(super) fn perturbation(u: &Usage, expect: Expect) -> PerturbedBy {
    let blocks = expect.switches;
    PerturbedBy {
        vol_switches: (!blocks && u.vol_switches > 0) as usize,
        invol_switches: (!(expect.preemption || blocks) && u.invol_switches > 0) as usize,
        faults: (!expect.faults && (u.minor_faults > 0 || u.major_faults > 0)) as usize,
        kernel: 0,
    }
}

/// Analyses samples of `k` operations each, subtracting the overhead of each sample's
/// round from its batch. Samples the kernel perturbed ([`Sample::kernel`]) are left
/// out of the clean statistics like those the resource counters flag; when samples
/// carry spans, [`Analysis::kernel`] says what that culling changed.
pub fn analyze(
    samples: &[Sample],
    k: u64,
    overhead: &super::Overhead,
    ns_per_tick: f64,
    expect: Expect,
    s: &Settings,
) -> Analysis {
    let mut a = analyze_with(samples, k, overhead, ns_per_tick, expect, s, true);
    let spans = samples.iter().filter(|x| x.span.is_some()).count();
    if spans > 0 {
        let rusage = analyze_with(samples, k, overhead, ns_per_tick, expect, s, false);
        let mut by_cause = std::collections::BTreeMap::new();
        let mut culled = Vec::new();
        for (i, x) in samples.iter().enumerate() {
            if x.kernel != 0 {
                culled.push(a.per_op_ns[i]);
                for name in super::causes::cause_names(x.kernel) {
                    *by_cause.entry(name.to_string()).or_insert(0) += 1;
                }
            }
        }
        a.kernel = Some(KernelCull {
            samples: spans,
            culled: culled.len(),
            by_cause,
            culled_median_ns: stats::median(&culled),
            rusage_median_ns: rusage.clean.as_ref().map(|c| c.median),
            clean_median_ns: a.clean.as_ref().map(|c| c.median),
        });
    }
    a
}

/// [`analyze`], with the kernel's flags used or ignored.
fn analyze_with(
    samples: &[Sample],
    k: u64,
    overhead: &super::Overhead,
    ns_per_tick: f64,
    expect: Expect,
    s: &Settings,
    kernel: bool,
) -> Analysis {
    let mut counts = Counts {
        total: samples.len(),
        ..Counts::default()
    };
    let per_op_ns: Vec<f64> = samples
        .iter()
        .map(|x| {
            let overhead_ticks = overhead.ticks_for(x.round);
            if x.ticks < overhead_ticks {
                counts.floored += 1;
            }
            x.ticks.saturating_sub(overhead_ticks) as f64 * ns_per_tick / k as f64
        })
        .collect();
    let mut flags: Vec<SampleFlags> = samples
        .iter()
        .map(|x| {
            let mut by = perturbation(&x.usage, expect);
            by.kernel = (kernel && x.kernel != 0) as usize;
            let b = &mut counts.perturbed_by;
            b.vol_switches += by.vol_switches;
            b.invol_switches += by.invol_switches;
            b.faults += by.faults;
            b.kernel += by.kernel;
            SampleFlags {
                mad: false,
                perturbed: by != PerturbedBy::default(),
            }
        })
        .collect();

    // The only outlier test is the MAD's, within each round, one process at one moment:
    // a round in another state than the rest is a state of the rounds (below), not a run
    // of outliers (docs/measurements/harness.md, "The VMS window retired").
    let kept: Vec<usize> = (0..samples.len())
        .filter(|&i| !flags[i].perturbed)
        .collect();
    let kept_vals: Vec<f64> = kept.iter().map(|&i| per_op_ns[i]).collect();
    // Half a clock step per operation: the interval's floor below, and the least MAD,
    // so that samples one step of the clock apart are not told apart as outliers.
    let step = 0.5 * s.resolution_ns / k.max(1) as f64;
    flag_mad_outliers(samples, &kept, &per_op_ns, step, &mut flags);
    counts.mad = flags.iter().filter(|f| f.mad).count();
    counts.perturbed = flags.iter().filter(|f| f.perturbed).count();
    let clean_vals: Vec<f64> = (0..samples.len())
        .filter(|&i| flags[i].clean())
        .map(|i| per_op_ns[i])
        .collect();
    counts.clean = clean_vals.len();

    // Modes are looked for before the MAD test, which would hide a minority mode.
    let modes = if kept_vals.len() >= method::MODES_MIN {
        modes::modes(&kept_vals, method::MODE_SHARE, method::MODE_GAP)
    } else {
        vec![]
    };

    let operations = k * samples.len() as u64;
    let accounting = accounting(samples, operations);
    let clean = stats::summarize(&clean_vals);
    let raw = stats::summarize(&per_op_ns);
    let basis = if too_few_clean(counts.clean, counts.total) {
        Basis::All
    } else {
        Basis::Clean
    };
    let rounds = round_figures(samples, &per_op_ns, &flags, basis);
    let figures: Vec<f64> = rounds.iter().filter_map(|r| r.median_ns).collect();
    // The interval is never narrower than half a clock step per operation, nor than
    // the pooled samples' own interval of the median.
    let estimate = match basis {
        Basis::Clean => {
            let pooled = clean.as_ref().map_or(0.0, |c| (c.ci_high - c.ci_low) / 2.0);
            rounds::estimate(&figures, step.max(pooled)).map(|e| RoundEstimate {
                floor_by_clock: step >= pooled,
                ..e
            })
        }
        Basis::All => raw
            .as_ref()
            .and_then(|r| all_samples_estimate(r, &figures, step, s.profile.ci_target)),
    };
    let states = rounds::states(&figures, method::STATE_GAP);
    let levels = levels(&rounds, samples);
    Analysis {
        raw,
        clean,
        per_op_ns,
        flags,
        counts,
        levels,
        modes,
        accounting,
        operations,
        rounds,
        estimate,
        basis,
        states,
        kernel: None,
        own: None,
    }
}

/// The estimate of a result resting on all its samples (`raw`): their median, with
/// their order-statistic interval widened to the round figures' t interval, to half a
/// clock step per operation (`step`), and to at least [`method::FEW_FLOOR`] or `target` of the
/// median. `None` when the round figures give none.
fn all_samples_estimate(
    raw: &Summary,
    figures: &[f64],
    step: f64,
    target: f64,
) -> Option<RoundEstimate> {
    let by_rounds = rounds::estimate(figures, step)?;
    let m = raw.median;
    let half = [
        m - raw.ci_low,
        raw.ci_high - m,
        by_rounds.ci_high - by_rounds.center,
        step,
        method::FEW_FLOOR.max(target) * m.abs(),
    ]
    .into_iter()
    .filter(|h| h.is_finite())
    .fold(0.0, f64::max);
    Some(RoundEstimate {
        center: m,
        ci_low: rounds::not_negative(m, m - half),
        ci_high: m + half,
        floor_by_clock: true,
        ..by_rounds
    })
}

/// Marks the MAD outliers among the kept samples (at sample indices `kept`), round by
/// round, leaving alone a round that holds several modes. The MAD is at least `step`
/// (half a clock step per operation) as well as [`method::MAD_FLOOR`] of the median.
fn flag_mad_outliers(
    samples: &[Sample],
    kept: &[usize],
    per_op_ns: &[f64],
    step: f64,
    flags: &mut [SampleFlags],
) {
    let mut by_round: std::collections::BTreeMap<u32, Vec<usize>> = Default::default();
    for &i in kept {
        by_round.entry(samples[i].round).or_default().push(i);
    }
    for at in by_round.values() {
        let part: Vec<f64> = at.iter().map(|&i| per_op_ns[i]).collect();
        // The MAD test assumes one mode; within a round holding several (two costs
        // interleaved) it would label the minority, so it is not applied there.
        if part.len() >= method::MODE_MIN_SAMPLES
            && modes::modes(&part, method::MODE_SHARE, method::MODE_GAP).len() > 1
        {
            continue;
        }
        let mad = outliers::mad_outliers_floored(
            &part,
            method::MAD_THRESHOLD,
            method::MAD_FLOOR,
            step,
        );
        for (&i, out) in at.iter().zip(mad) {
            flags[i].mad = out;
        }
    }
}

/// The resource usage of every sample, per operation (`operations` in all).
fn accounting(samples: &[Sample], operations: u64) -> Accounting {
    let mut total = Usage::default();
    for x in samples {
        total.add(&x.usage);
    }
    let per = |v: u64| {
        if operations == 0 {
            0.0
        } else {
            v as f64 / operations as f64
        }
    };
    Accounting {
        user_ns: per(total.user_ns),
        sys_ns: per(total.sys_ns),
        vol_switches: per(total.vol_switches),
        invol_switches: per(total.invol_switches),
        minor_faults: per(total.minor_faults),
        major_faults: per(total.major_faults),
    }
}

/// How far apart (relative) two groups of round figures must be to count as two
/// machine states: the canary's threshold.
pub use method::STATE_GAP;

/// Each round's median over its clean samples, or over all its samples when the
/// result rests on all.
fn round_figures(
    samples: &[Sample],
    per_op_ns: &[f64],
    flags: &[SampleFlags],
    basis: Basis,
) -> Vec<RoundFigure> {
    let mut out: Vec<RoundFigure> = Vec::new();
    let mut vals: Vec<Vec<f64>> = Vec::new();
    for (i, x) in samples.iter().enumerate() {
        let j = match out.iter().position(|r| r.round == x.round) {
            Some(j) => j,
            None => {
                out.push(RoundFigure {
                    round: x.round,
                    start_ns: x.at_ns,
                    median_ns: None,
                    clean: 0,
                    total: 0,
                });
                vals.push(Vec::new());
                out.len() - 1
            }
        };
        out[j].total += 1;
        if flags[i].clean() {
            out[j].clean += 1;
        }
        if flags[i].clean() || basis == Basis::All {
            vals[j].push(per_op_ns[i]);
        }
    }
    for (r, v) in out.iter_mut().zip(&vals) {
        r.median_ns = stats::median_grouped(v);
    }
    out.sort_by_key(|r| r.round);
    out
}

/// The rounds' states ([`rounds::states`]) in time order: consecutive rounds in one
/// state are one level, lasting until the next level's first round. None when the
/// rounds are in one state.
fn levels(rounds: &[RoundFigure], samples: &[Sample]) -> Vec<Level> {
    let mut timed: Vec<(&RoundFigure, f64)> = rounds
        .iter()
        .filter_map(|r| r.median_ns.map(|m| (r, m)))
        .collect();
    let figures: Vec<f64> = timed.iter().map(|x| x.1).collect();
    let bounds = rounds::state_bounds(&figures, method::STATE_GAP);
    if bounds.len() < 2 {
        return vec![];
    }
    let state = |x: f64| bounds.iter().position(|&hi| x <= hi).unwrap_or(0);
    timed.sort_by(|a, b| a.0.start_ns.total_cmp(&b.0.start_ns));
    let end_ns = samples.iter().map(|x| x.at_ns).fold(0.0, f64::max);
    let mut out: Vec<(usize, Vec<f64>, Level)> = Vec::new();
    for (r, m) in timed {
        match out.last_mut() {
            Some((s, ms, l)) if *s == state(m) => {
                ms.push(m);
                l.samples += r.clean;
            }
            _ => out.push((
                state(m),
                vec![m],
                Level {
                    median_ns: m,
                    start_ns: r.start_ns,
                    duration_ns: 0.0,
                    samples: r.clean,
                },
            )),
        }
    }
    let starts: Vec<f64> = out.iter().map(|x| x.2.start_ns).skip(1).collect();
    out.into_iter()
        .enumerate()
        .map(|(i, (_, ms, l))| Level {
            median_ns: stats::median(&ms).unwrap_or(l.median_ns),
            duration_ns: starts.get(i).copied().unwrap_or(end_ns) - l.start_ns,
            ..l
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::harness::{verdict, Overhead, Profile, Why};

    /// `total` samples of 1 op each, about 54.75 µs (1 ns ticks), in `rounds` rounds:
    /// `clean` of them untouched and spread evenly, the rest with `usage`.
    pub(crate) fn samples(
        total: usize,
        clean: usize,
        rounds: u32,
        usage: Usage,
    ) -> Vec<Sample> {
        (0..total)
            .map(|i| Sample {
                at_ns: i as f64 * 1e3,
                // A little spread, so that the order statistics are not all equal.
                ticks: 54_750 + (i % 7) as u64,
                usage: if i * clean % total < clean {
                    Usage::default()
                } else {
                    usage
                },
                round: (i * rounds as usize / total) as u32,
                span: None,
                kernel: 0,
            })
            .collect()
    }

    fn zero() -> Overhead {
        Overhead {
            subtracted: true,
            ..Overhead::default()
        }
    }

    /// The analysis and verdict of `samples` under the standard profile.
    pub(crate) fn conclude(
        xs: &[Sample],
        expect: Expect,
    ) -> (Analysis, bool, Vec<crate::harness::Why>) {
        let s = Settings::new(Profile::STANDARD, 20.0);
        let a = analyze(xs, 1, &zero(), 1.0, expect, &s);
        let (ok, why) = verdict(&a, &s.profile, Default::default());
        (a, ok, why)
    }

    fn switched() -> Usage {
        Usage {
            vol_switches: 1,
            ..Usage::default()
        }
    }

    #[test]
    fn a_result_on_too_few_clean_samples_is_never_converged_nor_narrow() {
        // The reported cases: 1 clean of 4028 over 8 rounds, 1 of 8, none of 8; and
        // the edges: 29 of 29, and 40 clean of 500 (fewer than a tenth).
        for (total, clean) in [(4028, 1), (8, 1), (8, 0), (29, 29), (500, 40), (4028, 0)]
        {
            let (a, ok, why) =
                conclude(&samples(total, clean, 8, switched()), Expect::default());
            let case = format!("{clean} clean of {total}: {why:?}");
            assert_eq!(a.basis, Basis::All, "{case}");
            assert!(!ok, "{case}");
            assert!(
                a.relative_ci() >= method::FEW_FLOOR - 1e-12,
                "{case}: ±{}",
                a.relative_ci()
            );
            assert!(a.relative_ci().is_finite(), "{case}");
            assert_eq!(a.counts.clean, clean, "{case}");
            assert_eq!(a.counts.perturbed_by.vol_switches, total - clean, "{case}");
            // The figure is the median of every sample.
            let median = a.raw.as_ref().unwrap().median;
            assert_eq!(a.figure(), median, "{case}");
            assert!((54_750.0..54_757.0).contains(&a.figure()), "{case}");
            assert_eq!(why.first(), Some(&Why::FewClean), "{case}");
        }
    }

    #[test]
    fn samples_on_clock_steps_are_not_outliers_of_each_other() {
        // As svc.canwak read on a VM whose TSC moves in 10 ns steps (20 ns between two
        // reads): one operation per sample, 56% at 290 ns, 42% one step below, the rest
        // above. The 0.5% MAD floor alone (1.45 ns) made every sample at 280 an outlier,
        // and the round's median the step value 290.
        let per_round = [(290, 2811), (280, 2093), (300, 84), (310, 7), (20_040, 5)];
        let ticks_of = |rank: usize| {
            let mut below = 0;
            for &(ticks, n) in &per_round {
                below += n;
                if rank < below {
                    return ticks;
                }
            }
            unreachable!()
        };
        let mut xs = Vec::new();
        for round in 0..8u32 {
            // Interleaved as they come: the i-th sample of a round takes the value of
            // rank 7919 i mod 5000 (7919 is prime to 5000, so each rank once).
            for i in 0..5000 {
                xs.push(Sample {
                    at_ns: xs.len() as f64 * 300.0,
                    ticks: ticks_of(i * 7919 % 5000),
                    usage: Usage::default(),
                    round,
                    span: None,
                    kernel: 0,
                });
            }
        }
        let (a, _, why) = conclude(&xs, Expect::default());
        // Only the far ones (20 µs: a preemption the counters missed) are outliers.
        assert_eq!(a.counts.mad, 8 * 5, "{why:?}");
        assert_eq!(a.counts.clean, 8 * (2811 + 2093 + 84 + 7), "{why:?}");
        // Each round's median is read between the steps: of the 4995 clean, 2093 at
        // 280, and the middle (2497.5) falls 404.5 into the 2811 at 290, so
        // 285 + 10 * 404.5 / 2811 = 286.44 ns.
        for r in &a.rounds {
            let m = r.median_ns.unwrap();
            assert!((m - 286.44).abs() < 0.01, "{m} ({why:?})");
        }
        assert!((a.figure() - 286.44).abs() < 0.01, "{}", a.figure());
    }

    #[test]
    fn enough_clean_samples_carry_the_headline_and_may_converge() {
        for (total, clean) in [(30, 30), (300, 30), (4028, 4000)] {
            let (a, ok, why) =
                conclude(&samples(total, clean, 8, switched()), Expect::default());
            assert_eq!(a.basis, Basis::Clean, "{clean} of {total}: {why:?}");
            assert!(ok && why.is_empty(), "{clean} of {total}: {why:?}");
            assert_eq!(a.rounds.len(), 8);
        }
    }

    #[test]
    fn rounds_without_a_clean_sample_are_named_beside_the_measured_rounds() {
        // 1000 samples over 10 rounds; the last round's 100 all perturbed.
        let mut xs = samples(1000, 1000, 10, switched());
        for x in xs.iter_mut().filter(|x| x.round == 9) {
            x.usage = switched();
        }
        let (a, ok, why) = conclude(&xs, Expect::default());
        assert_eq!(a.basis, Basis::Clean);
        assert_eq!(a.rounds.len(), 10);
        assert_eq!(a.estimate.as_ref().map(|e| e.rounds), Some(9));
        // Nine rounds with a clean sample are more than the profile's minimum.
        assert!(ok, "{why:?}");
    }

    #[test]
    fn a_blocking_operation_excuses_the_switches_it_causes_not_its_faults() {
        let blocking = Expect {
            switches: true,
            ..Expect::default()
        };
        let woken = Usage {
            vol_switches: 3,
            invol_switches: 2,
            ..Usage::default()
        };
        assert_eq!(perturbation(&woken, blocking), PerturbedBy::default());
        let p = perturbation(&woken, Expect::default());
        assert_eq!((p.vol_switches, p.invol_switches), (1, 1));
        let faulted = Usage {
            minor_faults: 1,
            ..woken
        };
        assert_eq!(perturbation(&faulted, blocking).faults, 1);
        assert_eq!(
            PerturbedBy {
                vol_switches: 4026,
                faults: 3,
                ..PerturbedBy::default()
            }
            .describe(),
            "4026 with a voluntary switch, 3 with a page fault"
        );
    }

    #[test]
    fn the_rounds_states_in_time_order_are_the_levels() {
        let round = |i: u32, m: f64| RoundFigure {
            round: i,
            start_ns: f64::from(i) * 1e9,
            median_ns: Some(m),
            clean: 10,
            total: 10,
        };
        // 129 ns for three rounds, then 105 ns: the 2026 machine's own behaviour.
        let rounds: Vec<RoundFigure> = [129.0, 129.5, 128.8, 105.0, 105.2, 104.9]
            .iter()
            .enumerate()
            .map(|(i, &m)| round(i as u32, m))
            .collect();
        let last = samples(10, 10, 1, Usage::default());
        let l = levels(&rounds, &last);
        assert_eq!(l.len(), 2, "{l:?}");
        assert_eq!((l[0].median_ns, l[1].median_ns), (129.0, 105.0));
        assert_eq!((l[0].start_ns, l[0].duration_ns), (0.0, 3e9));
        assert_eq!((l[0].samples, l[1].samples), (30, 30));
        // One state: no levels.
        assert!(levels(&rounds[..3], &last).is_empty());
    }
}
