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
pub mod causes;
pub mod clock;
mod held;
pub mod packed;
pub mod paired;
pub mod probe;
pub mod profile;
pub mod verdict;

pub use analyze::{Analysis, Level};
pub use held::Held;
pub use profile::Profile;
pub use verdict::{Facts, Source, Stop, Why};

use crate::error::BenchError;
use crate::os::interrupt;
use crate::os::usage::{Usage, Who};
use crate::stats::rounds::not_negative;
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
    /// default does nothing. Between a `reset` and its batch's `run` the harness only
    /// reads the resource usage, the CPU number and the clock: it allocates nothing, so
    /// what `reset` reads of the process (the program break) still holds in `run`.
    fn reset(&mut self, iters: u64) -> Result<(), BenchError> {
        let _ = iters;
        Ok(())
    }
}

/// A body that runs a closure `iters` times; the closure is inlined into the loop and
/// returns an error only when the operation failed. Every catalogue benchmark that
/// repeats a call is this loop, and so is [`EmptyLoop`], the baseline subtracted from
/// it.
pub struct Loop<F>(pub F);

impl<F: FnMut() -> Result<(), BenchError>> Body for Loop<F> {
    #[inline(never)]
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for _ in 0..iters {
            (self.0)()?;
        }
        Ok(())
    }
}

/// The harness's empty body: the benchmarks' own [`Loop`] around an operation that
/// does nothing the compiler may remove (an empty `black_box`), so what is subtracted
/// is the loop the benchmarks run, not a look-alike. Its cost per batch is what the
/// harness subtracts.
#[derive(Debug, Default)]
pub struct EmptyLoop;

impl Body for EmptyLoop {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        Loop(|| {
            std::hint::black_box(());
            Ok(())
        })
        .run(iters)
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
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
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
    /// The largest batch the body can run (reads that must fit in a file), if any.
    pub max_batch: Option<u64>,
}

/// One timed batch.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// When the batch started, in ns since the measurement (or the run) began.
    pub at_ns: f64,
    /// The batch's clock ticks, overhead not yet subtracted.
    pub ticks: u64,
    /// The resource usage of the measuring thread across the batch.
    pub usage: Usage,
    /// The round it belongs to (0 first).
    pub round: u32,
    /// Where the batch lies on the kernel's clock, when the harness was asked to
    /// record it ([`Settings::spans`], for culling by kernel events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<Span>,
    /// What the kernel did during the batch that the operation does not do itself
    /// (bits of [`causes::bits`]); 0 when nothing or not known.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub kernel: u16,
}

fn is_zero(v: &u16) -> bool {
    *v == 0
}

/// A batch's place on `CLOCK_MONOTONIC_RAW` (the clock the kernel's events carry) and
/// the CPUs it began and ended on. The raw clock is read just outside the harness
/// clock's two reads, so the span holds the timed region and a clock read on each
/// side, never the resource-usage calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    /// Before the batch, ns.
    pub start_ns: u64,
    /// After the batch, ns.
    pub end_ns: u64,
    /// The CPU before the batch.
    pub cpu0: u32,
    /// The CPU after the batch.
    pub cpu1: u32,
}

/// The empty-loop overhead the harness subtracted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Overhead {
    /// Median ns of one empty batch of the benchmark's size (clock reads included).
    pub per_batch_ns: f64,
    /// The same, per operation.
    pub per_op_ns: f64,
    /// How many empty batches were timed.
    pub samples: usize,
    /// Whether it was subtracted.
    pub subtracted: bool,
    /// The ticks subtracted from every batch of the first round (0 when not
    /// subtracted).
    #[serde(skip)]
    pub ticks: u64,
    /// The ticks subtracted in each later round, measured again before its samples:
    /// the empty loop's own cost moves with the machine (by a cycle or two an
    /// iteration), and a stale figure would bias cheap operations.
    #[serde(skip)]
    pub later: Vec<u64>,
}

impl Overhead {
    /// Records `ticks` as what is subtracted from the batches of `round`, in place of
    /// what was recorded for it before; other rounds keep theirs. A round between the
    /// first and `round` with nothing recorded (none is expected) takes the first
    /// round's.
    pub fn set_ticks_for(&mut self, round: u32, ticks: u64) {
        let Some(i) = (round as usize).checked_sub(1) else {
            self.ticks = ticks;
            return;
        };
        if i >= self.later.len() {
            self.later.resize(i + 1, self.ticks);
        }
        self.later[i] = ticks;
    }

    /// The ticks subtracted from a batch of `round`.
    pub fn ticks_for(&self, round: u32) -> u64 {
        match round {
            0 => self.ticks,
            r => self
                .later
                .get(r as usize - 1)
                .copied()
                .unwrap_or(self.ticks),
        }
    }
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
    /// Whether the round-level CI reached the target.
    pub converged: bool,
    /// Why it is not converged (none when it is).
    pub why: Vec<Why>,
    /// Warm-up and calibration time, in ns.
    pub warmup_ns: f64,
    /// Sampling time, in ns.
    pub elapsed_ns: f64,
}

/// The window a copy's round covers (see [`Harness::collect_until`]).
#[derive(Debug, Clone, Copy)]
pub struct Window {
    /// The round (0 first).
    pub round: u32,
    /// The run's start on the clock, ticks.
    pub begin: u64,
    /// The window's end on the clock, ticks: the last batch is the one that passes it.
    pub deadline: u64,
    /// The most samples kept.
    pub cap: usize,
}

/// The harness settings that are not the profile.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// The profile: rounds, warm-up, sampling time, CI target.
    pub profile: Profile,
    /// The clock's measured granularity in ns; batches last at least 1000 times it.
    pub granularity_ns: f64,
    /// The clock's quantum in ns ([`clock::ClockInfo::resolution_ns`]): half of it
    /// per operation is the least an interval can claim, and the least MAD.
    pub resolution_ns: f64,
    /// A fixed batch size for every benchmark (`--batch`; 1 times operations one by
    /// one), overriding calibration.
    pub batch: Option<u64>,
    /// Record each sample's [`Span`] on the kernel's clock (`--cull kernel`); off by
    /// default (two more clock reads and a CPU read, outside the timed region).
    pub spans: bool,
    /// What the result is held to besides the profile's target: the machine's floor
    /// for its kind of work (see [`Held`]). None by default.
    pub held: Held,
    /// Read the usage around each round, not each batch, for an operation that stays
    /// in user space (`bench::via::stays_in_user_space`; method.md section 1): the
    /// MAD alone judges those samples, and the round's CPU time lands on its last.
    pub usage_per_round: bool,
}

impl Settings {
    /// Defaults for a profile and a clock granularity, taken as the clock's quantum
    /// too until [`Settings::with_resolution`] says otherwise.
    pub fn new(profile: Profile, granularity_ns: f64) -> Settings {
        Settings {
            profile,
            granularity_ns,
            resolution_ns: granularity_ns,
            batch: None,
            spans: false,
            held: Held::default(),
            usage_per_round: false,
        }
    }

    /// These settings with the clock's quantum, ns (kept within 0.01 ns and the
    /// granularity; a quantum that was not found leaves the granularity).
    pub fn with_resolution(mut self, resolution_ns: f64) -> Settings {
        if resolution_ns.is_finite() && resolution_ns > 0.0 {
            self.resolution_ns = resolution_ns.max(0.01).min(self.granularity_ns);
        }
        self
    }

    fn target_batch_ns(&self) -> f64 {
        (crate::method::MIN_BATCH_STEPS * self.granularity_ns)
            .max(self.profile.min_batch_ns as f64)
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
        Harness::with_usage(clock, settings, &thread_usage)
    }

    /// The same harness holding its results to `held` (see [`Held`]).
    pub fn holding(&self, held: Held) -> Harness<'a> {
        let settings = Settings {
            held,
            ..self.settings
        };
        Harness { settings, ..*self }
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

    /// Times one batch: the body's reset (untimed), usage, clock, the body, clock, usage;
    /// with the batch's [`Span`] when `span` is set (the raw clock and the CPU read
    /// between the usage reads and the harness clock's reads, outside the timed region).
    fn batch(
        &self,
        body: &mut dyn Body,
        k: u64,
        span: bool,
    ) -> Result<(u64, u64, Usage, Option<Span>), BenchError> {
        use crate::os::sys::{current_cpu, raw_ns};
        let cpu = || current_cpu().unwrap_or(0) as u32;
        body.reset(k)?;
        let u0 = self.usage_at(false);
        let before = span.then(|| (cpu(), raw_ns()));
        let t0 = self.clock.now();
        body.run(k)?;
        let t1 = self.clock.now();
        let after = span.then(|| (raw_ns(), cpu()));
        let u1 = self.usage_at(false);
        let span = before
            .zip(after)
            .map(|((cpu0, start_ns), (end_ns, cpu1))| Span {
                start_ns,
                end_ns,
                cpu0,
                cpu1,
            });
        Ok((t0, t1.wrapping_sub(t0), u1.since(&u0), span))
    }

    /// The usage read around a batch (`round`: false) or a round (true), if it is
    /// read there ([`Settings::usage_per_round`]).
    fn usage_at(&self, round: bool) -> Usage {
        if self.settings.usage_per_round == round {
            (self.usage)()
        } else {
            Usage::default()
        }
    }

    /// Ends a round whose usage read `start`: its last sample takes the round's CPU time.
    fn round_end(&self, start: Usage, out: &mut [Sample]) {
        if let (true, Some(last)) = (self.settings.usage_per_round, out.last_mut()) {
            let d = self.usage_at(true).since(&start);
            (last.usage.user_ns, last.usage.sys_ns) = (d.user_ns, d.sys_ns);
        }
    }

    fn since(&self, t0: u64) -> f64 {
        self.clock.to_ns(self.clock.now().wrapping_sub(t0))
    }

    /// The batch size for `body`: the plan's or `--batch`'s fixed size, or calibrated
    /// so one batch lasts the target duration. Calibration batches warm the body up.
    pub fn calibrate(&self, body: &mut dyn Body, plan: Plan) -> Result<u64, BenchError> {
        let cap = plan.max_batch.unwrap_or(u64::MAX).max(1);
        if let Some(k) = plan.fixed_batch.or(self.settings.batch) {
            return Ok(k.clamp(1, cap));
        }
        let target = self.settings.target_batch_ns();
        let mut state = Calibration::start();
        loop {
            match state {
                Calibration::Done { k } => return Ok(k.min(cap)),
                Calibration::Tuning { k } | Calibration::Confirming { k } if k > cap => {
                    return Ok(cap)
                }
                Calibration::Tuning { k } | Calibration::Confirming { k } => {
                    let (_, ticks, _, _) = self.batch(body, k, false)?;
                    state = state.next(self.clock.to_ns(ticks), target);
                }
            }
            check_interrupt()?;
        }
    }

    /// Readies `body` for its first samples: calibrates its batch, warms it for
    /// `warm_ns` and measures the overhead of `baseline` at the batch size found.
    pub fn ready(
        &self,
        body: &mut dyn Body,
        baseline: &mut dyn Body,
        plan: Plan,
        warm_ns: u64,
    ) -> Result<(u64, Overhead), BenchError> {
        let k = self.calibrate(body, plan)?;
        self.warm(body, k, warm_ns)?;
        Ok((k, self.overhead(baseline, k, plan)?))
    }

    /// Runs batches of `k` for `ns` (at least one batch when `ns` > 0), untimed.
    pub fn warm(&self, body: &mut dyn Body, k: u64, ns: u64) -> Result<(), BenchError> {
        if ns == 0 {
            return Ok(());
        }
        let start = self.clock.now();
        loop {
            self.batch(body, k, false)?;
            check_interrupt()?;
            if self.since(start) >= ns as f64 {
                return Ok(());
            }
        }
    }

    /// The median cost of `baseline` (normally [`EmptyLoop`]) at batch size `k`: what
    /// is subtracted from every batch unless the plan keeps the overhead.
    pub fn overhead(
        &self,
        baseline: &mut dyn Body,
        k: u64,
        plan: Plan,
    ) -> Result<Overhead, BenchError> {
        let n = self.settings.profile.overhead_samples;
        let ticks = self.empty_ticks(baseline, k, n)?;
        let ops = (k * plan.per_iter.max(1)) as f64;
        Ok(Overhead {
            per_batch_ns: self.clock.to_ns(ticks),
            per_op_ns: self.clock.to_ns(ticks) / ops,
            samples: n,
            subtracted: !plan.keep_overhead,
            ticks: if plan.keep_overhead { 0 } else { ticks },
            later: Vec::new(),
        })
    }

    /// Measures the overhead again (fewer batches than the first time) for the
    /// samples of `round` and records it in `overhead` as that round's
    /// ([`Overhead::ticks_for`]): a round measured again after a slow episode replaces
    /// what its dropped visit measured, and the rounds after it keep their places.
    pub fn remeasure(
        &self,
        baseline: &mut dyn Body,
        k: u64,
        plan: Plan,
        overhead: &mut Overhead,
        round: u32,
    ) -> Result<(), BenchError> {
        let n = self
            .settings
            .profile
            .overhead_samples
            .clamp(1, crate::method::EMPTY_LOOP_SAMPLES_MAX);
        let ticks = self.empty_ticks(baseline, k, n)?;
        overhead.set_ticks_for(round, if plan.keep_overhead { 0 } else { ticks });
        Ok(())
    }

    /// The median ticks of `n` batches of `k` of `baseline`.
    fn empty_ticks(
        &self,
        baseline: &mut dyn Body,
        k: u64,
        n: usize,
    ) -> Result<u64, BenchError> {
        let mut empty: Vec<u64> = Vec::with_capacity(n);
        for _ in 0..n {
            empty.push(self.batch(baseline, k, false)?.1);
        }
        empty.sort_unstable();
        Ok(empty.get(empty.len() / 2).copied().unwrap_or(0))
    }

    /// One round's samples: batches of `k` for the profile's round time (at least its
    /// minimum count unless that takes four times the round time; at most its maximum
    /// count), stamped relative to `begin` (a clock
    /// reading) and with `round`, appended to `out`. The time counts resets too, so a
    /// body with a costly reset cannot stretch a round.
    pub fn collect(
        &self,
        body: &mut dyn Body,
        k: u64,
        round: u32,
        begin: u64,
        out: &mut Vec<Sample>,
    ) -> Result<(), BenchError> {
        let p = self.settings.profile;
        let at_start = self.usage_at(true);
        let start = self.clock.now();
        let mut n = 0;
        loop {
            let (t0, ticks, usage, span) = self.batch(body, k, self.settings.spans)?;
            out.push(Sample {
                at_ns: self.clock.to_ns(t0.wrapping_sub(begin)),
                ticks,
                usage,
                round,
                span,
                kernel: 0,
            });
            n += 1;
            check_interrupt()?;
            let took = self.since(start);
            // Long samples (a cold read of megabytes) end the round at four times its
            // time, even short of the minimum count: rounds, not samples, carry the
            // interval.
            if n >= p.round_max_samples
                || (n >= p.round_min_samples && took >= p.round_ns as f64)
                || (p.round_ns > 0
                    && took >= crate::method::ROUND_TIME_CAP * p.round_ns as f64)
            {
                self.round_end(at_start, out);
                return Ok(());
            }
        }
    }

    /// Takes samples of `body` at `k` until the clock passes `deadline` (ticks): a
    /// copy's round, which must cover the same window as the other copies', so it ends
    /// by the common deadline and not by its own count. At most `cap` samples are kept
    /// (the batches go on to the deadline, so the other copies keep their company).
    pub fn collect_until(
        &self,
        body: &mut dyn Body,
        k: u64,
        w: Window,
        out: &mut Vec<Sample>,
    ) -> Result<(), BenchError> {
        let at_start = self.usage_at(true);
        let first = out.len();
        loop {
            let (t0, ticks, usage, _) = self.batch(body, k, false)?;
            if out.len() < w.cap {
                out.push(Sample {
                    at_ns: self.clock.to_ns(t0.wrapping_sub(w.begin)),
                    ticks,
                    usage,
                    round: w.round,
                    span: None,
                    kernel: 0,
                });
            }
            check_interrupt()?;
            if t0.wrapping_add(ticks) >= w.deadline {
                self.round_end(at_start, &mut out[first..]);
                return Ok(());
            }
        }
    }

    /// Analyses the samples so far, with what the harness knows of the verdict
    /// ([`facts`]): whether the figure is known is [`Harness::decide`]'s, the
    /// round-level interval within the target after the profile's minimum rounds,
    /// resting on enough clean samples (a result resting on all its samples, because
    /// the clean ones were too few, is never known: see [`analyze::Basis::All`]).
    pub fn conclude(
        &self,
        samples: &[Sample],
        k: u64,
        overhead: &Overhead,
        plan: Plan,
    ) -> (Analysis, Facts) {
        let mut a =
            self.analyze(samples, k * plan.per_iter.max(1), overhead, plan.expect);
        with_the_machine(&mut a, self.settings.held);
        let f = facts(&a, &self.settings.profile);
        (a, f)
    }

    /// Why `a` is not converged given the facts `f` ([`verdict::decide`]), held to the
    /// target of the harness's settings ([`Held::target`]).
    pub fn decide(&self, a: &Analysis, f: &Facts) -> Vec<Why> {
        let target = self.settings.held.target(&self.settings.profile);
        verdict::decide(a.relative_ci(), target, f)
    }

    /// Measures `body` alone: calibration, warm-up, the overhead of `baseline` (normally
    /// [`EmptyLoop`]) at the same batch size, then rounds back to back on the same body
    /// until the round-level interval reaches the target or the profile's rounds end.
    /// A run of several benchmarks interleaves their rounds instead (see
    /// [`crate::session::Session::run_all`]).
    pub fn measure(
        &self,
        body: &mut dyn Body,
        baseline: &mut dyn Body,
        plan: Plan,
    ) -> Result<Measurement, BenchError> {
        let p = self.settings.profile;
        let start = self.clock.now();
        let (k, mut overhead) = self.ready(body, baseline, plan, p.warmup_ns)?;
        let warmup_ns = self.since(start);
        let begin = self.clock.now();
        let mut samples = Vec::new();
        let mut round = 0u32;
        let (analysis, converged, why) = loop {
            if round > 0 {
                self.warm(body, k, p.round_warmup_ns)?;
                self.remeasure(baseline, k, plan, &mut overhead, round)?;
            }
            self.collect(body, k, round, begin, &mut samples)?;
            round += 1;
            let done = round as usize >= p.max_rounds;
            if round as usize >= p.min_rounds || done {
                let (a, f) = self.conclude(&samples, k, &overhead, plan);
                let why = self.decide(&a, &f);
                if why.is_empty() || done {
                    break (a, why.is_empty(), why);
                }
            }
        };
        Ok(Measurement {
            batch: k,
            overhead,
            samples,
            analysis,
            converged,
            why,
            warmup_ns,
            elapsed_ns: self.since(begin),
        })
    }

    fn analyze(
        &self,
        samples: &[Sample],
        k: u64,
        subtract: &Overhead,
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
    /// operations of `body`, with nothing subtracted. Measured before each round of
    /// each benchmark, it tells whether the machine itself changed speed.
    pub fn canary(
        &self,
        body: &mut dyn Body,
        k: u64,
        batches: usize,
    ) -> Result<f64, BenchError> {
        let mut v = Vec::with_capacity(batches);
        for _ in 0..batches {
            v.push(self.clock.to_ns(self.batch(body, k, false)?.1) / k as f64);
        }
        v.sort_by(f64::total_cmp);
        Ok(v.get(v.len() / 2).copied().unwrap_or(f64::NAN))
    }
}

/// What the analysis `a` tells a row's verdict under `p` ([`verdict::Facts`]): whether
/// it rests on all samples, its rounds with a clean sample, the clock's floor.
pub fn facts(a: &Analysis, p: &Profile) -> Facts {
    Facts {
        all_samples: a.basis == analyze::Basis::All,
        with_clean: a.estimate.as_ref().map_or(0, |e| e.rounds),
        min_rounds: p.min_rounds,
        clock_floor: a.relative_clock_floor(),
        ..Facts::default()
    }
}

/// Whether an analysis is converged under `p` for a result held to `held`
/// ([`Held::target`]), and why not ([`verdict::decide`] on its [`facts`]).
#[cfg(test)]
pub(crate) fn verdict(a: &Analysis, p: &Profile, held: Held) -> (bool, Vec<Why>) {
    let why = verdict::decide(a.relative_ci(), held.target(p), &facts(a, p));
    (why.is_empty(), why)
}

/// Adds what the machine allows the row's kind of work ([`Held::added`]) to the
/// rounds' interval of `a` on each side, as an independent error (`√(own² + m²)`),
/// keeping the rounds' own in `a.own`; not with `--target` (`strict`), which asks for
/// the rows' own intervals. A row without a history cannot see how far the machine
/// moves between runs; its kind's probes, read in every round's process, stand for it
/// (docs/measurements/movement.md, "The machine's movement added"). From a row's third saved
/// run, the spread of its runs sets the interval instead.
fn with_the_machine(a: &mut Analysis, held: Held) {
    let m = held.added();
    if m <= 0.0 || a.basis == analyze::Basis::All {
        return;
    }
    if let Some(e) = a.estimate.as_mut() {
        // A wide interval of the rounds (two rounds far apart), or one on a machine
        // that allows ±100% or worse (a loaded one), stops at zero.
        a.own = Some((not_negative(e.center, e.ci_low), e.ci_high));
        let add = m * e.center.abs();
        e.ci_low = not_negative(e.center, e.center - (e.center - e.ci_low).hypot(add));
        e.ci_high = e.center + (e.ci_high - e.center).hypot(add);
    }
}

/// [`BenchError::Interrupted`] once the run has been interrupted.
pub(crate) fn check_interrupt() -> Result<(), BenchError> {
    if interrupt::interrupted() {
        Err(BenchError::Interrupted)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
