//! One benchmark instance within a run (a [`Slot`]): prepared once per round,
//! measured, its rounds gathered, and turned at the end into its result, with the
//! canary readings around it and the samples kept if asked.
//!
//! A slot is what a worker process holds for its instance (see [`super::worker`]); a
//! session measures in its own process only what the catalogue cannot name.

use super::*;
use crate::bench::{copies::Copies, via};
use crate::harness::probe::{Probes, WorkKind};
use crate::harness::{Facts, Held, Stop};
use crate::method;
use crate::os::placement::{self, TaskPlace};
use crate::results::Fact;
use serde::{Deserialize, Serialize};

/// Marks a round's samples with what the kernel did during them.
pub(super) type FlagFn<'a> =
    dyn FnMut(&mut [Sample], Expect) -> Result<(), BenchError> + 'a;

/// What a slot measures with: the clock and settings of the session, the instance's
/// run context, and where the kernel's events come from (`--cull kernel`).
pub(super) struct Env<'a> {
    pub(super) clock: &'a dyn Clock,
    pub(super) settings: Settings,
    pub(super) context: &'a crate::bench::RunContext,
    /// Marks a round's samples with what the kernel did during them.
    pub(super) flag: Option<&'a mut FlagFn<'a>>,
    /// Samples where the time goes during the timed batches (`syscost explain`).
    pub(super) explain: Option<&'a mut crate::explain::Recorder>,
}

/// One instance in a run: its result so far and what the rounds have gathered.
pub(super) struct Slot<'b> {
    pub(super) bench: &'b dyn Bench,
    pub(super) params: Params,
    /// What its rounds have gathered, which a worker hands to the next one.
    pub(super) c: Carried,
    pub(super) after: Option<After>,
    pub(super) after_ns: f64,
    /// The last conclusion, once the instance is done measuring, with the floor it was
    /// judged at.
    pub(super) concluded: Option<(Analysis, Facts, Held)>,
    /// Skipped or failed.
    pub(super) ended: bool,
    /// The scheduler places the tasks (`placement=free`): where they ran is recorded
    /// per round.
    pub(super) free: bool,
    /// The most rounds it gets (0: the profile's `max_rounds`).
    pub(super) max_rounds: usize,
    /// Why the run gave it no more rounds before it converged or reached its cap.
    pub(super) stopped: Option<Stop>,
    /// The copies it runs as (`copies=N`), when asked.
    pub(super) copies: Option<Copies>,
    /// The copy each sample came from, beside `samples`, when N > 1.
    pub(super) copy_of: Vec<u16>,
    /// The CPU each copy was pinned to, and whether some shared one.
    pub(super) copy_cpus: (Vec<usize>, bool),
    /// One batch's time alone, ns (what a copies window is sized by).
    pub(super) batch_ns: f64,
    /// The machine's floor it is held to (from the run, each visit).
    pub(super) held: Held,
    /// The machine's probes read just before the last round, until the run takes them.
    pub(super) probes: Option<Probes>,
    /// Earlier workers' samples, left in their hand-over until this round is measured.
    pub(super) earlier: Option<crate::session::worker::wire::Sealed>,
}

/// What a slot has gathered, handed from one worker process to the next (see
/// [`super::worker`]): everything its later rounds and its conclusion need, the
/// benchmark's set-up excepted (each round prepares it anew anyway).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Carried {
    pub(super) result: BenchResult,
    /// The batch size and overhead, found in the first round.
    pub(super) setup: Option<(u64, Overhead)>,
    /// The ticks the overhead subtracts from the first round's batches and from each
    /// later one's ([`Overhead::ticks`], [`Overhead::later`]), which the overhead's
    /// own serialisation leaves out: without them, the next worker would subtract
    /// nothing from any round but the one its own measurement happens to land on.
    overhead_ticks: Option<(u64, Vec<u64>)>,
    pub(super) plan: Plan,
    /// Travels apart from the rest, packed (see [`crate::harness::packed`]): the rest
    /// is encoded as CBOR, they are streamed.
    #[serde(skip)]
    pub(super) samples: Vec<Sample>,
    /// The canary read before each kept round.
    pub(super) canaries: Vec<f64>,
    /// The last canary limit a visit was given above 0 ([`method::REDO_ABOVE`] over the base
    /// state; 0 before one): what its kept rounds' canary is held to at the end.
    #[serde(default)]
    pub(super) limit_seen: f64,
    pub(super) rounds: u32,
    pub(super) warmup_ns: f64,
    pub(super) elapsed_ns: f64,
    pub(super) setup_ns: f64,
    /// Where the tasks ran in each round, when the scheduler places them.
    pub(super) places: Vec<RoundPlace>,
    /// The rounds' own interval's relative half-width at the last look, before what the
    /// machine allows is added (infinite before one): what more rounds narrow.
    pub(super) last_ci: f64,
    /// The interval's relative floor at the last look when it is half a clock step per
    /// operation (see [`Analysis::relative_clock_floor`]).
    pub(super) last_floor: f64,
    /// The processes that measured it before the one holding it.
    pub(super) processes: u32,
    /// Their highest peak resident size, KiB.
    pub(super) peak_kib: Option<u64>,
}

/// How far above the run's base state, %, the canary read before a result's kept
/// rounds (`canaries`, one before each) at their median, when that lies above `limit`
/// ([`method::REDO_ABOVE`] over the base; 0: none known); None otherwise. Such rounds are kept
/// only once the run stops measuring rounds again (its budget spent, or as many
/// measured again as [`method::REDO_PER_KEPT`] allows), and then stand for the slow state,
/// which only the canary tells (docs/measurements/intervals.md, "The multiple of the runs'
/// spread"). Such a result is not converged (`Why::SlowState`).
pub(super) fn slow_rounds(canaries: &[f64], limit: f64) -> Option<f64> {
    let median = crate::stats::median(canaries)?;
    (limit > 0.0 && median > limit)
        .then(|| (median * (1.0 + method::REDO_ABOVE) / limit - 1.0) * 100.0)
}

/// Whether the scheduler places the tasks (`placement=free`).
fn free(params: &Params) -> bool {
    params
        .0
        .iter()
        .any(|(n, v)| *n == "placement" && v == "free")
}

/// Whether the canary gate applies to a visit with these parameters
/// (`Budget::holds_back`): not for a free placement, whose canary describes another
/// CPU than its tasks run on, nor for copies, which are measured together.
pub(super) fn waits(params: &Params) -> bool {
    !free(params) && Copies::of(params).is_none_or(|c| c.n <= 1)
}

/// Where an instance's tasks ran during one round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct RoundPlace {
    pub(super) round: u32,
    /// The distinct CPUs its tasks last ran on, at the round's end.
    pub(super) cpus: Vec<u32>,
    /// Migrations of its tasks during the round.
    pub(super) migrations: u64,
}

impl RoundPlace {
    fn between(round: u32, before: &[TaskPlace], after: &[TaskPlace]) -> RoundPlace {
        let mut cpus: Vec<u32> = after.iter().map(|t| t.cpu).collect();
        cpus.sort_unstable();
        cpus.dedup();
        let migrations = after
            .iter()
            .filter_map(|a| {
                let b = before.iter().find(|b| b.tid == a.tid)?;
                Some(a.migrations?.saturating_sub(b.migrations?))
            })
            .sum();
        RoundPlace {
            round,
            cpus,
            migrations,
        }
    }
}

impl<'b> Slot<'b> {
    pub(super) fn new(bench: &'b dyn Bench, params: &Params) -> Slot<'b> {
        let result = BenchResult {
            name: bench.name().to_string(),
            params: owned(params).collect(),
            entry: crate::bench::via::entry(bench, params),
            op: "call".into(),
            unit: "ns".into(),
            status: Status::Ok,
            reason: None,
            measured: None,
            facts: Vec::new(),
            explain: None,
        };
        Slot {
            bench,
            params: params.clone(),
            c: Carried {
                result,
                setup: None,
                overhead_ticks: None,
                plan: Plan::default(),
                samples: Vec::new(),
                canaries: Vec::new(),
                limit_seen: 0.0,
                rounds: 0,
                warmup_ns: 0.0,
                elapsed_ns: 0.0,
                setup_ns: 0.0,
                places: Vec::new(),
                last_ci: f64::INFINITY,
                last_floor: 0.0,
                processes: 0,
                peak_kib: None,
            },
            after: None,
            after_ns: 0.0,
            concluded: None,
            ended: false,
            free: free(params),
            max_rounds: 0,
            stopped: None,
            copies: Copies::of(params),
            copy_of: Vec::new(),
            copy_cpus: (Vec::new(), false),
            batch_ns: 0.0,
            held: Held::default(),
            probes: None,
            earlier: None,
        }
    }

    /// What it has gathered, for the next worker (this one, `peak_kib` at its peak, is
    /// done with it).
    pub(super) fn carry(mut self, peak_kib: Option<u64>) -> Result<Carried, BenchError> {
        self.gather()?;
        let c = self.c;
        Ok(Carried {
            overhead_ticks: c.setup.as_ref().map(|(_, o)| (o.ticks, o.later.clone())),
            processes: c.processes + 1,
            peak_kib: c.peak_kib.max(peak_kib),
            ..c
        })
    }

    /// Puts the earlier workers' samples back before this worker's own.
    pub(super) fn gather(&mut self) -> Result<(), BenchError> {
        if let Some(sealed) = self.earlier.take() {
            let read = sealed.samples();
            let mut all =
                read.map_err(|e| BenchError::os("earlier rounds' samples", e))?;
            all.append(&mut self.c.samples);
            self.c.samples = all;
        }
        Ok(())
    }

    /// Takes up what an earlier worker gathered for `bench` with `params`.
    pub(super) fn resume(
        bench: &'b dyn Bench,
        params: &Params,
        mut c: Carried,
    ) -> Slot<'b> {
        if let (Some((_, o)), Some((ticks, later))) =
            (c.setup.as_mut(), c.overhead_ticks.take())
        {
            o.ticks = ticks;
            o.later = later;
        }
        Slot {
            c,
            ..Slot::new(bench, params)
        }
    }

    /// The processes that have measured it, this one included.
    pub(super) fn processes(&self) -> u32 {
        self.c.processes + 1
    }

    /// Warms the body for a round: the first round calibrates the batch and times the
    /// empty loop's overhead; later ones warm it and time the empty loop again for this
    /// round. Returns the batch.
    fn warm(
        &mut self,
        h: &Harness<'_>,
        body: &mut dyn crate::harness::Body,
        plan: Plan,
        round: u32,
    ) -> Result<u64, BenchError> {
        let p = h.settings().profile;
        let (k, overhead) = match self.c.setup.clone() {
            Some(mut s) => {
                h.warm(body, s.0, p.round_warmup_ns)?;
                h.remeasure(&mut EmptyLoop, s.0, plan, &mut s.1, round)?;
                s
            }
            None => h.ready(body, &mut EmptyLoop, plan, p.warmup_ns)?,
        };
        self.c.plan = plan;
        self.c.setup = Some((k, overhead));
        Ok(k)
    }

    /// One round: sets the benchmark up anew, warms it (calibrating the batch and the
    /// empty loop's overhead in the first round), takes one round of samples, tears it
    /// down, and concludes once the profile's minimum rounds are in. `canary` is the
    /// reading taken just before; `begin` the run's start on the clock; `limit` (ns per
    /// getpid; 0 for none) what the canary gate held the round to
    /// (`Budget::holds_back`), by which its kept rounds are judged at the end
    /// ([`slow_rounds`]).
    pub(super) fn visit(
        &mut self,
        env: &mut Env<'_>,
        round: u32,
        begin: u64,
        canary: f64,
        limit: f64,
    ) -> Result<(), BenchError> {
        crate::bench::harden::check(&self.params)?;
        if let Some(copies) = self.copies.filter(|c| c.n > 1) {
            return self.visit_copies(env, round, begin, canary, copies);
        }
        // The canary stands for the rounds' machine only where it describes their CPU
        // and their rounds are not fixed: not for a free placement's rounds (another
        // CPU's), nor while explaining.
        if limit > 0.0 && !self.free && env.explain.is_none() {
            self.c.limit_seen = limit;
        }
        let p = env.settings.profile;
        let mut settings = env.settings;
        settings.usage_per_round = via::stays_in_user_space(self.bench, &self.params);
        let h = Harness::new(env.clock, settings).holding(self.held);
        self.c.canaries.push(canary);
        let c = env.clock;
        let t0 = c.now();
        // Opened before the setup, so the tasks it starts inherit the events.
        let sampler = match env.explain.as_mut() {
            Some(x) if crate::explain::sampled_round(round) => x.open(),
            _ => None,
        };
        let prepared =
            crate::bench::harden::prepare(self.bench, &self.params, env.context)?;
        let t_prepared = c.now();
        self.c.setup_ns += c.to_ns(t_prepared.wrapping_sub(t0));
        self.c.result.op = prepared.op.to_string();
        let (mut body, plan) = (prepared.body, prepared.plan);
        let k = self.warm(&h, body.as_mut(), plan, round)?;
        // The machine's probes, in this process warmed for its round, just before its
        // samples (after them, they would read what the round left behind: a ring's
        // children exiting, a file's pages, caches full of the benchmark's data). A
        // failed one only goes unread. Work that leaves a CPU idle then runs until the
        // probes' busy CPUs no longer speed it up (`method::SETTLE_NS`).
        let dir = env.context.scratch_dir();
        let extra = crate::harness::probe::Extra {
            cross: self.held.kind == Some(WorkKind::Cross),
            io: (self.held.kind == Some(WorkKind::Io)).then_some(dir.as_path()),
        };
        self.probes = h.probe(extra).ok();
        if via::leaves_cpus_idle(self.bench, &self.params) {
            h.warm(body.as_mut(), k, method::SETTLE_NS)?;
        }
        let t1 = c.now();
        self.c.warmup_ns += c.to_ns(t1.wrapping_sub(t_prepared));
        let first = self.c.samples.len();
        let before = self.free.then(placement::tasks).unwrap_or_default();
        if let Some(s) = &sampler {
            let _ = s.enable(); // a failure shows as no samples
        }
        h.collect(body.as_mut(), k, round, begin, &mut self.c.samples)?;
        let t2 = c.now();
        if let (Some(x), Some(s)) = (env.explain.as_mut(), sampler) {
            let spans: Vec<_> = self.c.samples[first..].iter().map(|s| s.span).collect();
            x.take(s, &spans, k * plan.per_iter.max(1));
        }
        if self.free {
            let after = placement::tasks();
            self.c
                .places
                .push(RoundPlace::between(round, &before, &after));
        }
        drop(body); // release descriptors, mappings and children now
        if let Some(flag) = env.flag.as_mut() {
            flag(&mut self.c.samples[first..], plan.expect)?;
        }
        self.c.elapsed_ns += c.to_ns(t2.wrapping_sub(t1));
        self.c.setup_ns += c.to_ns(c.now().wrapping_sub(t2));
        self.after = prepared.after;
        self.gather()?;
        self.count_round(&h, p);
        Ok(())
    }

    /// Counts the round just measured and, at a look ([`Profile::looks_at`]),
    /// concludes the instance when it converged or reached its cap.
    pub(super) fn count_round(&mut self, h: &Harness<'_>, p: Profile) {
        self.c.rounds += 1;
        let (rounds, cap) = (self.c.rounds as usize, self.cap(p));
        if let (true, Some((k, overhead))) = (p.looks_at(rounds, cap), &self.c.setup) {
            let (a, f) = self.conclude(h, *k, overhead);
            self.c.last_ci = a.own_relative_ci();
            self.c.last_floor = a.relative_clock_floor();
            // A free placement whose rounds found the tasks both on one CPU and on
            // several has two figures, which more rounds only count again.
            if h.decide(&a, &f).is_empty() || rounds >= cap || split(&self.c.places) {
                self.concluded = Some((a, f, h.settings().held));
            }
        }
    }

    /// Its samples so far analysed, with what its verdict weighs: the harness's facts
    /// and whether its kept rounds met the machine in a slow state ([`slow_rounds`]).
    fn conclude(&self, h: &Harness<'_>, k: u64, o: &Overhead) -> (Analysis, Facts) {
        let (a, mut f) = h.conclude(&self.c.samples, k, o, self.c.plan);
        f.slow_state = slow_rounds(&self.c.canaries, self.c.limit_seen);
        (a, f)
    }

    pub(super) fn open(&self) -> bool {
        !self.ended && self.concluded.is_none() && self.stopped.is_none()
    }

    /// The most rounds this instance gets: [`Slot::max_rounds`], else the profile's.
    pub(super) fn cap(&self, p: Profile) -> usize {
        Some(self.max_rounds)
            .filter(|&n| n > 0)
            .unwrap_or(p.max_rounds)
    }

    /// Ends the instance as skipped or failed (a failure in any round fails it).
    pub(super) fn end(&mut self, e: BenchError) {
        self.ended = true;
        self.c.samples = Vec::new();
        let (status, why) = match e {
            BenchError::Skip(why) => (Status::Skipped, why),
            BenchError::Failed(why) => (Status::Failed, why),
            BenchError::Interrupted => return,
        };
        self.c.result.status = status;
        self.c.result.reason = Some(why);
    }

    /// The result: measured (concluded now if the run ended early), skipped or failed;
    /// None when an interrupted run never reached it.
    pub(super) fn finish(
        mut self,
        h: &Harness<'_>,
        keep_samples: bool,
        interrupted: bool,
    ) -> Option<BenchResult> {
        if self.ended {
            return Some(self.c.result);
        }
        let (k, overhead) = self.c.setup.clone()?;
        if self.c.samples.is_empty() {
            return None;
        }
        let h = &h.holding(self.held);
        let (analysis, mut f, held) = match self.concluded.take() {
            Some(c) => c,
            None => {
                // Interrupted, or stopped by the run: a time its rounds did not
                // choose, so its last look, as the cap is.
                let (a, mut f) = self.conclude(h, k, &overhead);
                f.interrupted = interrupted;
                f.stopped = self.stopped.take();
                (a, f, self.held)
            }
        };
        if let Some((facts, split)) = placed(&self.c.places, &analysis) {
            self.c.result.facts.extend(facts);
            f.not_placed = split;
        }
        let why = h.holding(held).decide(&analysis, &f);
        let converged = why.is_empty();
        let m = Measurement {
            batch: k,
            overhead,
            samples: std::mem::take(&mut self.c.samples),
            analysis,
            converged,
            why,
            warmup_ns: self.c.warmup_ns,
            elapsed_ns: self.c.elapsed_ns,
        };
        // A failure in the after step fails the result but keeps what was measured.
        let mut after_failed = None;
        if let (Some(then), false) = (self.after.take(), interrupted) {
            let t0 = std::time::Instant::now();
            let facts = then(h, &m);
            self.after_ns = t0.elapsed().as_nanos() as f64;
            match facts {
                Ok(facts) => self.c.result.facts.extend(facts),
                Err(BenchError::Skip(why)) | Err(BenchError::Failed(why)) => {
                    after_failed = Some(format!("after the measurement: {why}"));
                }
                Err(BenchError::Interrupted) => {}
            }
        }
        let failed = match self.measured(m, h, keep_samples) {
            Ok(x) => {
                self.c.result.measured = Some(x);
                None
            }
            Err(e) => Some(e.to_string()),
        };
        if let Some(why) = after_failed.or(failed) {
            self.c.result.status = Status::Failed;
            self.c.result.reason = Some(why);
        }
        Some(self.c.result)
    }
}

fn canary(readings: &[f64]) -> Option<Canary> {
    let (&first, &last) = (readings.first()?, readings.last()?);
    let lo = readings.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = readings.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let change = hi / lo - 1.0;
    Some(Canary {
        before_ns: first,
        after_ns: last,
        change,
        changed: change > method::STATE_GAP,
        rounds_ns: readings.to_vec(),
    })
}

impl Slot<'_> {
    /// The figures of a finished measurement, with what the run held it to.
    fn measured(
        &self,
        m: Measurement,
        h: &Harness<'_>,
        keep_samples: bool,
    ) -> Result<Measured, BenchError> {
        let copies = self.copies.map(|c| self.copy_figures(h, &m, c));
        let a = m.analysis;
        let source = a.source();
        let raw = a
            .raw
            .clone()
            .ok_or_else(|| BenchError::Failed("no samples were taken".into()))?;
        let est = a.estimate.clone();
        let median_ns = a.figure();
        let samples = keep_samples.then(|| Samples {
            per_op_ns: a.per_op_ns.clone(),
            at_ns: m.samples.iter().map(|s| s.at_ns).collect(),
            round: m.samples.iter().map(|s| s.round).collect(),
            flags: a
                .flags
                .iter()
                .map(|f| (f.mad as u8) << 1 | (f.perturbed as u8) << 2)
                .collect(),
            invol_switches: m.samples.iter().map(|s| s.usage.invol_switches).collect(),
            vol_switches: m.samples.iter().map(|s| s.usage.vol_switches).collect(),
            faults: m
                .samples
                .iter()
                .map(|s| s.usage.minor_faults + s.usage.major_faults)
                .collect(),
        });
        let floor_pct = (self.held.allows > 0.0).then_some(self.held.allows * 100.0);
        let mut x = Measured {
            median_ns,
            ci_low_ns: est.as_ref().map_or(raw.ci_low, |e| e.ci_low),
            ci_high_ns: est.as_ref().map_or(raw.ci_high, |e| e.ci_high),
            round_sd_ns: est.as_ref().map_or(0.0, |e| e.sd),
            round_spread: est.as_ref().map_or(0.0, |e| e.spread()),
            rounds: a.rounds,
            states: a.states,
            clean: a.clean,
            raw,
            counts: a.counts,
            batch: m.batch,
            operations: a.operations,
            overhead: m.overhead,
            accounting: a.accounting,
            converged: m.converged,
            stop_reason: String::new(),
            why: m.why,
            interval_source: Some(source),
            levels: a.levels,
            modes: a.modes,
            canary: canary(&self.c.canaries),
            warmup_ns: m.warmup_ns,
            elapsed_ns: m.elapsed_ns,
            setup_ns: self.c.setup_ns,
            after_ns: self.after_ns,
            samples,
            between_runs: None,
            copies,
            kernel: a.kernel,
            basis: a.basis,
            worker_peak_kib: None,
            worker_processes: 0,
            rounds_redone: 0, // the session counts them: `Budget::holds_back`
            slow_state_pct: slow_rounds(&self.c.canaries, self.c.limit_seen),
            work: self.held.kind,
            target_pct: Some(self.held.target(&h.settings().profile) * 100.0),
            floor_pct,
            own_ci_low_ns: a.own.map(|o| o.0),
            own_ci_high_ns: a.own.map(|o| o.1),
            paired: None,
        };
        x.stop_reason = x.verdict_text();
        Ok(x)
    }
}

/// The rounds of one kind of placement (all tasks on one CPU, or on several).
#[derive(Default)]
struct Kind {
    figures: Vec<f64>,
    rounds: usize,
    migrations: u64,
    cpus: Vec<u32>,
}

/// Whether a free placement's rounds found its tasks both on one CPU and on several.
pub(super) fn split(places: &[RoundPlace]) -> bool {
    let one = places.iter().filter(|p| p.cpus.len() <= 1).count();
    one > 0 && one < places.len()
}

/// Where the scheduler put a free placement's tasks: a fact per kind of placement (all
/// tasks on one CPU, or on several) with the mean of its rounds' figures, and when the
/// rounds saw both kinds, why one mean of them is no figure. None when nothing was
/// recorded.
fn placed(places: &[RoundPlace], a: &Analysis) -> Option<(Vec<Fact>, Option<String>)> {
    if places.is_empty() {
        return None;
    }
    // All tasks on one CPU, then on several.
    let mut kinds: [Kind; 2] = Default::default();
    for p in places {
        let figure = a
            .rounds
            .iter()
            .find(|r| r.round == p.round)
            .and_then(|r| r.median_ns);
        let k = &mut kinds[usize::from(p.cpus.len() > 1)];
        k.figures.extend(figure);
        k.rounds += 1;
        k.migrations += p.migrations;
        k.cpus.extend(&p.cpus);
    }
    let total = places.len();
    let mut facts = Vec::new();
    let mut words = Vec::new();
    let names = [
        ("placed_one_cpu", "one CPU"),
        ("placed_several_cpus", "several CPUs"),
    ];
    for (mut k, (name, what)) in kinds.into_iter().zip(names) {
        if k.figures.is_empty() {
            continue;
        }
        let (rounds, migrations) = (k.rounds, k.migrations);
        let mean = k.figures.iter().sum::<f64>() / k.figures.len() as f64;
        k.cpus.sort_unstable();
        k.cpus.dedup();
        let cpus: Vec<String> = k.cpus.iter().map(u32::to_string).collect();
        facts.push(Fact::new(
            name,
            mean,
            "ns",
            &format!(
                "mean figure of the {rounds} of {total} rounds at whose end every task had \
                 last run on {what} (CPUs seen: {}; {migrations} migrations in them)",
                cpus.join(",")
            ),
        ));
        words.push(format!(
            "{what} {} in {rounds} of {total} rounds",
            crate::results::fmt_ns(mean)
        ));
    }
    let why = split(places).then(|| {
        format!(
            "the scheduler placed the tasks differently between rounds ({}): compare \
             placement=same-cpu and placement=cross-cpu (more rounds would not make one \
             figure of them: none are measured once a look sees both)",
            words.join(", ")
        )
    });
    Some((facts, why))
}
