//! The measurement core: one harness for every benchmark.
//!
//! Given a prepared operation (a [`Body`]) and a clock, the harness calibrates a batch
//! size, warms up, measures the empty loop at that size and subtracts it, then samples
//! until the median's confidence interval is tight enough or the profile's time budget
//! ends. Each sample carries its own resource usage, so perturbed samples are flagged.
//! The analysis (outliers, levels, modes, statistics) is a pure function of the samples.
//!
//! It knows no benchmark by name and never prints; it reads the clock only around the
//! body's batch and outside it keeps all bookkeeping.

pub mod analyze;
pub mod calibrate;
pub mod clock;
pub mod profile;

pub use analyze::{Analysis, Level};
pub use profile::Profile;

use crate::error::BenchError;
use crate::runner::interrupt;
use crate::runner::usage::{Usage, Who};
use calibrate::Calibration;
use clock::Clock;
use serde::{Deserialize, Serialize};

/// A prepared operation: `run(k)` performs it `k` times and nothing else.
///
/// The harness reads the clock immediately before and after `run`. An error fails the
/// whole benchmark; a body must never shorten its loop and return `Ok`.
pub trait Body {
    /// Runs the operation `iters` times.
    fn run(&mut self, iters: u64) -> Result<(), BenchError>;

    /// Re-arms the operation for the next batch of `iters` (fresh memory to fault, a
    /// file to evict from the cache, a child to share pages with). The harness calls it
    /// before every batch, outside the clock reads and the batch's resource usage; the
    /// default does nothing.
    fn reset(&mut self, iters: u64) -> Result<(), BenchError> {
        let _ = iters;
        Ok(())
    }
}

/// The harness's empty body: a loop of `iters` iterations whose counter the compiler
/// must keep. Its cost per batch is what the harness subtracts.
#[derive(Debug, Default)]
pub struct EmptyLoop;

impl Body for EmptyLoop {
    #[inline(never)]
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for i in 0..iters {
            std::hint::black_box(i);
        }
        Ok(())
    }
}

/// What an operation is expected to do to the resource counters; anything else in a
/// sample marks it perturbed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expect {
    /// The operation blocks, so voluntary switches are part of it.
    pub switches: bool,
    /// The operation faults pages, so page faults are part of it: minor faults, and
    /// major faults too (a mapped file read from storage).
    pub faults: bool,
    /// The operation involves other tasks sharing the CPU, so involuntary switches are
    /// part of it (a ring of tasks placed freely).
    pub preemption: bool,
}

/// How one benchmark wants to be measured.
#[derive(Debug, Clone, Copy, Default)]
pub struct Plan {
    /// Counters the operation itself moves.
    pub expect: Expect,
    /// Report the raw loop time, without subtracting the empty loop (the loop-overhead
    /// benchmark itself).
    pub keep_overhead: bool,
    /// A fixed batch size instead of calibration (1 for operations timed one by one).
    pub fixed_batch: Option<u64>,
    /// Operations per iteration of the body (a pass around a ring of n tasks is n
    /// hops); 0 means 1.
    pub per_iter: u64,
}

/// One timed batch.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// When the batch started, in ns since collection began.
    pub at_ns: f64,
    /// The batch's clock ticks, overhead not yet subtracted.
    pub ticks: u64,
    /// The resource usage of the measuring thread across the batch.
    pub usage: Usage,
}

/// The empty-loop overhead the harness subtracted.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Overhead {
    /// Median ns of one empty batch of the benchmark's size (clock reads included).
    pub per_batch_ns: f64,
    /// The same, per operation.
    pub per_op_ns: f64,
    /// How many empty batches were timed.
    pub samples: usize,
    /// Whether it was subtracted.
    pub subtracted: bool,
}

/// Everything the harness learned about one benchmark.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Operations per sample.
    pub batch: u64,
    /// The subtracted overhead.
    pub overhead: Overhead,
    /// The samples, in time order.
    pub samples: Vec<Sample>,
    /// The analysis of the samples.
    pub analysis: Analysis,
    /// Whether the median's CI reached the target.
    pub converged: bool,
    /// Why sampling stopped.
    pub stop_reason: String,
    /// Warm-up and calibration time, in ns.
    pub warmup_ns: f64,
    /// Sampling time, in ns.
    pub elapsed_ns: f64,
}

/// The harness settings that are not the profile.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// The profile: warm-up, sample counts, time budget, CI target.
    pub profile: Profile,
    /// The clock's measured granularity in ns; batches last at least 1000 times it.
    pub granularity_ns: f64,
    /// The VMS window around the pilot median: below and above, as fractions.
    pub window: (f64, f64),
    /// The modified z-score above which a sample is a MAD outlier.
    pub mad_threshold: f64,
    /// The MAD is taken as at least this fraction of the median (see
    /// [`crate::stats::outliers::mad_outliers_floored`]).
    pub mad_floor: f64,
    /// How many leading samples form the pilot estimate.
    pub pilot: usize,
}

impl Settings {
    /// Defaults for a profile and a clock granularity.
    pub fn new(profile: Profile, granularity_ns: f64) -> Settings {
        Settings {
            profile,
            granularity_ns,
            window: (0.25, 0.5),
            mad_threshold: 3.5,
            mad_floor: 0.005,
            pilot: 100,
        }
    }

    fn target_batch_ns(&self) -> f64 {
        (1000.0 * self.granularity_ns).max(self.profile.min_batch_ns as f64)
    }
}

/// Reads the measuring thread's resource usage.
pub type UsageFn<'a> = &'a dyn Fn() -> Usage;

fn thread_usage() -> Usage {
    Usage::now(Who::Thread)
}

/// The harness: a clock, settings, and a source of resource usage.
pub struct Harness<'a> {
    clock: &'a dyn Clock,
    settings: Settings,
    usage: UsageFn<'a>,
}

impl<'a> Harness<'a> {
    /// A harness on `clock` reading the calling thread's real resource usage.
    pub fn new(clock: &'a dyn Clock, settings: Settings) -> Harness<'a> {
        Harness {
            clock,
            settings,
            usage: &thread_usage,
        }
    }

    /// A harness with an injected usage source (for tests).
    pub fn with_usage(
        clock: &'a dyn Clock,
        settings: Settings,
        usage: UsageFn<'a>,
    ) -> Self {
        Harness {
            clock,
            settings,
            usage,
        }
    }

    /// The settings in force.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The clock in use.
    pub fn clock(&self) -> &dyn Clock {
        self.clock
    }

    /// Times one batch: the body's reset (untimed), usage, clock, the body, clock, usage.
    fn batch(
        &self,
        body: &mut dyn Body,
        k: u64,
    ) -> Result<(u64, u64, Usage), BenchError> {
        body.reset(k)?;
        let u0 = (self.usage)();
        let t0 = self.clock.now();
        body.run(k)?;
        let t1 = self.clock.now();
        let u1 = (self.usage)();
        Ok((t0, t1.wrapping_sub(t0), u1.since(&u0)))
    }

    /// Measures `body`, subtracting the cost of `baseline` (normally [`EmptyLoop`]) run
    /// with the same batch size.
    pub fn measure(
        &self,
        body: &mut dyn Body,
        baseline: &mut dyn Body,
        plan: Plan,
    ) -> Result<Measurement, BenchError> {
        let p = self.settings.profile;
        let c = self.clock;
        let start = c.now();
        let since = |t0: u64| c.to_ns(c.now().wrapping_sub(t0));

        // Calibrate the batch size; these batches are part of the warm-up.
        let k = match plan.fixed_batch {
            Some(k) => k.max(1),
            None => {
                let target = self.settings.target_batch_ns();
                let mut state = Calibration::start();
                loop {
                    match state {
                        Calibration::Done { k } => break k,
                        Calibration::Tuning { k } => {
                            let (_, ticks, _) = self.batch(body, k)?;
                            state = state.next(c.to_ns(ticks), target);
                        }
                    }
                    check_interrupt()?;
                }
            }
        };
        while since(start) < p.warmup_ns as f64 {
            self.batch(body, k)?;
            check_interrupt()?;
        }

        // The empty loop at the same batch size.
        let mut empty: Vec<u64> = Vec::with_capacity(p.overhead_samples);
        for _ in 0..p.overhead_samples {
            empty.push(self.batch(baseline, k)?.1);
        }
        empty.sort_unstable();
        let overhead_ticks = if empty.is_empty() {
            0
        } else {
            empty[empty.len() / 2]
        };
        let per_iter = plan.per_iter.max(1);
        let overhead = Overhead {
            per_batch_ns: c.to_ns(overhead_ticks),
            per_op_ns: c.to_ns(overhead_ticks) / (k * per_iter) as f64,
            samples: empty.len(),
            subtracted: !plan.keep_overhead,
        };
        let subtract = if plan.keep_overhead {
            0
        } else {
            overhead_ticks
        };
        let warmup_ns = since(start);

        // Collect until converged or out of time.
        let mut samples: Vec<Sample> = Vec::with_capacity(1024);
        let begin = c.now();
        let mut next_check = p.min_samples.max(10);
        let (converged, stop_reason) = loop {
            let (t0, ticks, usage) = self.batch(body, k)?;
            let at_ns = c.to_ns(t0.wrapping_sub(begin));
            samples.push(Sample {
                at_ns,
                ticks,
                usage,
            });
            check_interrupt()?;
            let elapsed = since(begin);
            let out_of_time =
                elapsed >= p.max_time_ns as f64 || samples.len() >= p.max_samples;
            if samples.len() < next_check && !out_of_time {
                continue;
            }
            next_check = samples.len() + (samples.len() / 8).max(10);
            let a = self.analyze(&samples, k * per_iter, subtract, plan.expect);
            let ci = a.relative_ci();
            let ok = ci <= p.ci_target;
            if ok && samples.len() >= p.min_samples && elapsed >= p.min_time_ns as f64 {
                break (
                    true,
                    format!(
                        "CI of the median ±{:.2}% after {} samples",
                        ci * 100.0,
                        samples.len()
                    ),
                );
            }
            if out_of_time {
                let what = if samples.len() >= p.max_samples {
                    "sample limit"
                } else {
                    "time budget"
                };
                let msg = format!(
                    "{what} ended with CI ±{:.2}% (target ±{:.2}%)",
                    ci * 100.0,
                    p.ci_target * 100.0
                );
                break (ok, msg);
            }
        };
        let elapsed_ns = since(begin);
        let analysis = self.analyze(&samples, k * per_iter, subtract, plan.expect);
        Ok(Measurement {
            batch: k,
            overhead,
            samples,
            analysis,
            converged,
            stop_reason,
            warmup_ns,
            elapsed_ns,
        })
    }

    fn analyze(
        &self,
        samples: &[Sample],
        k: u64,
        subtract: u64,
        expect: Expect,
    ) -> Analysis {
        analyze::analyze(
            samples,
            k,
            subtract,
            self.clock.ns_per_tick(),
            expect,
            &self.settings,
        )
    }

    /// The canary: the median per-operation time of `batches` fixed batches of `k`
    /// operations of `body`, with nothing subtracted. Measured before and after each
    /// benchmark, it tells whether the machine itself changed speed.
    pub fn canary(
        &self,
        body: &mut dyn Body,
        k: u64,
        batches: usize,
    ) -> Result<f64, BenchError> {
        let mut v = Vec::with_capacity(batches);
        for _ in 0..batches {
            v.push(self.clock.to_ns(self.batch(body, k)?.1) / k as f64);
        }
        v.sort_by(f64::total_cmp);
        Ok(v.get(v.len() / 2).copied().unwrap_or(f64::NAN))
    }
}

fn check_interrupt() -> Result<(), BenchError> {
    if interrupt::interrupted() {
        Err(BenchError::Interrupted)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
