//! A measuring session: the chosen clock, the pinning and background load the user asked
//! for, and the scheduler that measures benchmark instances in rounds spread over time,
//! interleaved in a shuffled order, and turns each into one [`BenchResult`].
//!
//! It owns the resources that outlive a single benchmark (the pin, the load) and
//! releases them on drop; it prints nothing.

use crate::bench::{body, After, Bench, Params};
use crate::error::BenchError;
use crate::harness::clock::{self, characterize, Clock, ClockChoice, ClockInfo};
use crate::harness::probe::WorkKind;
use crate::harness::Expect;
use crate::harness::{
    Analysis, EmptyLoop, Harness, Measurement, Overhead, Plan, Profile, Sample, Settings,
};
use crate::os::affinity::Pin;
use crate::os::interrupt;
use crate::os::load::Load;
use crate::os::sys;
use crate::results::{
    BenchResult, Canary, HarnessInfo, MachineStates, Measured, Samples, Status,
};
use crate::stats::{self, rounds};
use anyhow::Context;
use instance::Instance;
use slot::{Env, Slot};

mod copies;
mod floors;
mod instance;
mod slot;
pub mod worker;

pub use slot::REDO_ABOVE;
pub use worker::Workers;

/// How big a change of the canary means the machine changed speed.
pub const CANARY_THRESHOLD: f64 = 0.03;
const CANARY_BATCH: u64 = 500;
const CANARY_BATCHES: usize = 5;

/// What the user asked of the session.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// The measurement profile.
    pub profile: Profile,
    /// Which clock to time with.
    pub clock: ClockChoice,
    /// Whether the CPU reports an invariant TSC (from the host facts).
    pub invariant_tsc: bool,
    /// Pin the measuring thread to this CPU.
    pub cpu: Option<usize>,
    /// Background spinning processes.
    pub load: usize,
    /// Keep every sample in the results.
    pub keep_samples: bool,
    /// What flags a sample as perturbed besides the resource-usage counters.
    pub cull: Cull,
    /// Where file benchmarks make their scratch file and how they empty the cache.
    pub files: crate::bench::file::Options,
    /// Where catalogue benchmarks are measured: each in a worker process, or here.
    pub workers: Workers,
}

impl SessionOptions {
    /// The options of a plain session with `profile`: the clock chosen automatically, no
    /// pinning, no load, no samples kept, culling by resource usage, scratch files in
    /// the temporary directory. `invariant_tsc` comes from the host facts.
    pub fn new(profile: Profile, invariant_tsc: bool) -> SessionOptions {
        SessionOptions {
            profile,
            clock: ClockChoice::Auto,
            invariant_tsc,
            cpu: None,
            load: 0,
            keep_samples: false,
            cull: Cull::Rusage,
            files: Default::default(),
            workers: Workers::default_for_this_process(),
        }
    }
}

/// What marks a sample perturbed (`--cull`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Cull {
    /// The measuring thread's resource usage across the batch: switches and faults
    /// the operation does not cause itself.
    #[default]
    Rusage,
    /// The resource usage, and the kernel's own events recorded while sampling (clock
    /// interrupts, other interrupts, switches, faults, migrations), joined with each
    /// batch's time span: the 1976 memo's probes.
    Kernel,
}

/// What [`Session::run_all`] measured.
pub struct Outcome {
    /// One result per instance that was measured (or skipped, or failed), in the order
    /// asked for; on an interruption, those with at least one round.
    pub results: Vec<BenchResult>,
    /// The canary readings of the run, grouped.
    pub machine: MachineStates,
    /// Whether the run was interrupted (Ctrl-C).
    pub interrupted: bool,
}

/// Where sessions copy every result of [`Session::run`], with the first session's clock
/// and harness settings: `repro` collects its figures in one so that they are saved in
/// the history like a run's. Clones share the entries.
#[derive(Debug, Clone, Default)]
pub struct Journal(std::sync::Arc<std::sync::Mutex<JournalEntries>>);

/// What a [`Journal`] holds.
#[derive(Debug, Default)]
pub struct JournalEntries {
    /// The first recording session's clock.
    pub clock: Option<ClockInfo>,
    /// The first recording session's harness settings.
    pub harness: Option<HarnessInfo>,
    /// Every result, in order.
    pub results: Vec<BenchResult>,
}

impl Journal {
    fn entries(&self) -> std::sync::MutexGuard<'_, JournalEntries> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes everything recorded so far.
    pub fn take(&self) -> JournalEntries {
        std::mem::take(&mut *self.entries())
    }
}

/// A running session.
pub struct Session {
    clock: Box<dyn Clock + Send + Sync>,
    clock_info: ClockInfo,
    settings: Settings,
    opts: SessionOptions,
    seed: u64,
    // Dropped in declaration order: unpin, then stop and reap the load.
    _pin: Option<Pin>,
    load: Option<Load>,
    journal: Option<Journal>,
    /// The kernel's events while sampling (`--cull kernel`), or why they cannot be had.
    kernel: Result<std::cell::RefCell<crate::trace::watch::Watch>, String>,
    /// What the benchmarks of this session share (options, scratch files, limits met).
    context: crate::bench::RunContext,
    /// Where finished results' samples go, when asked ([`Session::spill_samples`]).
    spill: Option<std::cell::RefCell<crate::spill::Spill>>,
    /// Workers sample where the time goes at this rate ([`Session::explain`]); 0: no.
    explain: u64,
    /// The machine's probe readings so far, over every run of this session.
    floors: std::cell::RefCell<floors::Floors>,
    /// Instances measured so far in this session: where the next one's probe readings
    /// are kept apart from the others'.
    measured: std::cell::Cell<usize>,
}

impl Session {
    /// Starts the load (unpinned, so the scheduler places it), pins the measuring
    /// thread, chooses and characterises the clock.
    pub fn start(opts: SessionOptions) -> anyhow::Result<Session> {
        Session::start_with(opts, None, None)
    }

    /// [`Session::start`] with a fixed batch size for every benchmark (`--batch`) and
    /// a seed for the round order (`--seed`; from the clock when absent).
    pub fn start_with(
        opts: SessionOptions,
        batch: Option<u64>,
        seed: Option<u64>,
    ) -> anyhow::Result<Session> {
        let load = match opts.load {
            0 => None,
            n => Some(Load::start(n).context("starting the background load (--load)")?),
        };
        let pin = match opts.cpu {
            Some(c) => {
                Some(Pin::to(c).with_context(|| format!("pinning to CPU {c} (--cpu)"))?)
            }
            None => None,
        };
        // Only a clock the user named can be refused: a usage error (exit 2).
        let (clock, why) = clock::choose(opts.clock, opts.invariant_tsc)
            .map_err(|e| anyhow::Error::new(crate::error::UsageError::new(e)))?;
        let name = clock.name();
        let clock_info = characterize(clock.as_ref(), name, &why);
        let mut settings =
            Settings::new(opts.profile, clock_info.granularity_ns.max(1.0))
                .with_resolution(clock_info.resolution_ns);
        settings.batch = batch;
        let kernel = match opts.cull {
            Cull::Rusage => Err("not asked for".to_string()),
            Cull::Kernel => crate::trace::watch::Watch::start()
                .map(std::cell::RefCell::new)
                .map_err(|e| e.to_string()),
        };
        settings.spans = kernel.is_ok();
        let seed = seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        });
        let context =
            crate::bench::RunContext::new(opts.files.clone(), Some(opts.profile.name));
        let floors =
            std::cell::RefCell::new(floors::Floors::new(opts.profile.max_rounds));
        Ok(Session {
            context,
            clock,
            clock_info,
            settings,
            opts,
            seed,
            _pin: pin,
            load,
            journal: None,
            kernel,
            spill: None,
            explain: 0,
            floors,
            measured: std::cell::Cell::new(0),
        })
    }

    /// Asks every worker to sample where its benchmark's time goes during the timed
    /// batches (`syscost explain`, `run --explain`; see [`crate::explain`]), `hz`
    /// samples per second of running time (0: not). An instance measured in this
    /// process (no worker) is not explained.
    pub fn explain(&mut self, hz: u64) {
        self.explain = hz;
    }

    /// Holds every result to the profile's target itself, even where it lies below the
    /// machine's floor for the result's kind of work (`run --target`): the rounds try
    /// for it, and a result that misses it says why.
    pub fn hold_to_target(&mut self) {
        self.floors.get_mut().strict = true;
    }

    /// Moves each result's samples to a temporary file as the result finishes, so
    /// that a long run's samples do not accumulate in memory; [`Session::take_spill`]
    /// hands the file over to write the document and the history.
    pub fn spill_samples(&mut self) -> std::io::Result<()> {
        self.spill = Some(std::cell::RefCell::new(crate::spill::Spill::new()?));
        Ok(())
    }

    /// The samples moved out of the results so far (see [`Session::spill_samples`]).
    pub fn take_spill(&mut self) -> Option<crate::spill::Spill> {
        self.spill.take().map(std::cell::RefCell::into_inner)
    }

    /// A finished result: its samples to the spill, when there is one (they stay in
    /// the result if they cannot be written). A worker's come apart, in `samples`:
    /// copied from that file to the spill without passing through this process's
    /// memory, or read into the result when there is no spill (or the copy failed).
    fn keep(&self, r: &mut BenchResult, samples: Option<worker::wire::MemFile>) {
        if let (Some(s), Some(f)) = (&self.spill, &samples) {
            match s.borrow_mut().put_file(r, f) {
                Ok(()) => return,
                Err(e) => eprintln!(
                    "warning: samples kept in memory: the spill file failed: {e}"
                ),
            }
        }
        if let Some(f) = samples {
            match f.read_json::<Samples>() {
                Ok(got) => {
                    if let Some(m) = r.measured.as_mut() {
                        m.samples = Some(got);
                    }
                }
                Err(e) => eprintln!(
                    "warning: the samples of {} could not be read back from its worker: \
                     {e}",
                    r.label()
                ),
            }
        }
        if let Some(s) = &self.spill {
            if let Err(e) = s.borrow_mut().put(r) {
                eprintln!("warning: samples kept in memory: the spill file failed: {e}");
            }
        }
    }

    /// Why kernel events could not be had when `--cull kernel` asked for them (None
    /// when they are recorded or were not asked for).
    pub fn kernel_unavailable(&self) -> Option<&str> {
        match (&self.opts.cull, &self.kernel) {
            (Cull::Kernel, Err(why)) => Some(why),
            _ => None,
        }
    }

    /// The harness clock and its figures.
    pub fn clock_info(&self) -> &ClockInfo {
        &self.clock_info
    }

    /// A harness on the session's clock.
    pub fn harness(&self) -> Harness<'_> {
        Harness::new(self.clock.as_ref(), self.settings)
    }

    /// The process ids of the background load.
    pub fn load_pids(&self) -> Vec<u32> {
        self.load
            .as_ref()
            .map(|l| l.pids().iter().map(|&p| p as u32).collect())
            .unwrap_or_default()
    }

    /// The harness configuration, for the result document.
    pub fn harness_info(&self) -> HarnessInfo {
        let p = self.settings.profile;
        HarnessInfo {
            profile: p.name.to_string(),
            warmup_ns: p.warmup_ns,
            round_warmup_ns: p.round_warmup_ns,
            round_ns: p.round_ns,
            round_min_samples: p.round_min_samples,
            round_max_samples: p.round_max_samples,
            min_rounds: p.min_rounds,
            max_rounds: p.max_rounds,
            span_ns: p.span_ns,
            batch: self.settings.batch,
            seed: self.seed,
            ci_target: p.ci_target,
            min_batch_ns: p.min_batch_ns,
            window_below: self.settings.window.0,
            window_above: self.settings.window.1,
            mad_threshold: self.settings.mad_threshold,
            mad_floor: self.settings.mad_floor,
            cpu: self.opts.cpu,
            load: self.opts.load,
            kernel_events: match (&self.opts.cull, &self.kernel) {
                (Cull::Rusage, _) => None,
                (Cull::Kernel, Ok(w)) => Some(w.borrow().method()),
                (Cull::Kernel, Err(why)) => Some(format!("unavailable: {why}")),
            },
            budget_ns: (p.budget_ns > 0).then_some(p.budget_ns),
            budget_max_rounds: (p.budget_ns > 0).then_some(p.budget_max_rounds),
            workers: match self.opts.workers {
                Workers::Exec { .. } => Some("process".to_string()),
                Workers::Inline => None,
            },
            rounds_per_worker: match self.opts.workers {
                Workers::Exec { rounds, .. } => Some(rounds),
                Workers::Inline => None,
            },
        }
    }

    /// The getpid canary, ns per call. With workers, read on the home CPU, where they
    /// measure (a VM's vCPUs can differ in speed, so a canary read elsewhere would
    /// describe another CPU).
    pub fn canary(&self) -> Result<f64, BenchError> {
        let _home = match self.opts.workers {
            Workers::Exec { .. } => crate::bench::ctx::home_cpu()
                .ok()
                .and_then(|c| crate::os::affinity::Pin::to(c).ok()),
            Workers::Inline => None,
        };
        getpid_canary(&self.harness())
    }

    /// Reads the canary for about `ns` and says how steady the machine is: the
    /// readings grouped, their spread, and whether that spread exceeds the profile's
    /// CI target (a figure this precise cannot be promised).
    pub fn steadiness(&self, ns: u64) -> Result<MachineStates, BenchError> {
        let start = std::time::Instant::now();
        let mut readings = Vec::new();
        while readings.len() < 5 || start.elapsed().as_nanos() < ns as u128 {
            readings.push(self.canary()?);
            check_interrupt()?;
        }
        Ok(machine_states(&readings, self.settings.profile.ci_target))
    }

    /// Measures one benchmark instance in rounds (see [`Session::run_all`]), back to
    /// back rather than spread over the profile's span: for callers such as `repro` that
    /// measure many instances one at a time. Skips and failures become results too;
    /// only an interruption is returned as an error.
    pub fn run(
        &self,
        bench: &dyn Bench,
        params: &Params,
    ) -> Result<BenchResult, BenchError> {
        let mut out = self.rounds(
            &[(bench, params.clone())],
            &mut |_| {},
            &mut |_, _| {},
            false,
        )?;
        if out.interrupted {
            return Err(BenchError::Interrupted);
        }
        let result = out
            .results
            .pop()
            .ok_or_else(|| BenchError::Failed("nothing was measured".into()))?;
        if let Some(j) = &self.journal {
            let mut copy = result.clone();
            if self.opts.load > 0 {
                // The same benchmark measured quietly and under load must stay apart.
                copy.params
                    .insert("load".into(), self.opts.load.to_string());
            }
            j.entries().results.push(copy);
        }
        Ok(result)
    }

    /// Copies every later result of [`Session::run`] into `journal`.
    pub fn record_to(mut self, journal: &Journal) -> Session {
        {
            let mut e = journal.entries();
            if e.clock.is_none() {
                e.clock = Some(self.clock_info.clone());
                // One instance at a time (`Session::run`) has no time budget.
                let mut h = self.harness_info();
                h.budget_ns = None;
                h.budget_max_rounds = None;
                e.harness = Some(h);
            }
        }
        self.journal = Some(journal.clone());
        self
    }

    /// Measures every instance in rounds separated in time. Each round visits the
    /// instances that are not yet done in a freshly shuffled order; each visit reads the
    /// canary, sets the benchmark up anew, warms it, takes one round of samples and
    /// tears it down. The batch size and the empty-loop overhead are found in the
    /// first round and kept. An instance is done when its round-level interval
    /// reaches the target (after the profile's minimum rounds), at its maximum rounds,
    /// or when it is skipped or fails. With few instances, the time between rounds is
    /// filled with canary readings so that the rounds span the profile's `span_ns`.
    ///
    /// `progress` is told each visit. `concluded` is told each result as soon as it is
    /// final, with its index in `instances` (an instance measured in this process, at
    /// the end of its group). An interruption ends the run: what has at least one round
    /// is still concluded and returned, with `interrupted` set.
    pub fn run_all(
        &self,
        instances: &[(&dyn Bench, Params)],
        progress: &mut dyn FnMut(Step<'_>),
        concluded: &mut dyn FnMut(usize, &BenchResult),
    ) -> Result<Outcome, BenchError> {
        self.rounds(instances, progress, concluded, true)
    }

    /// [`Session::run_all`], with the span between rounds only when `spread`. A list of
    /// more than [`GROUP`] instances is measured in consecutive groups of about equal
    /// size, each with its share of the run's time budget: a group's rows conclude
    /// (and are written) within seconds of its start instead of after the whole
    /// catalogue's minimum rounds, and at most [`GROUP`] worker processes live at once.
    fn rounds(
        &self,
        instances: &[(&dyn Bench, Params)],
        progress: &mut dyn FnMut(Step<'_>),
        concluded: &mut dyn FnMut(usize, &BenchResult),
        spread: bool,
    ) -> Result<Outcome, BenchError> {
        let mut out = Outcome {
            results: Vec::new(),
            machine: MachineStates::default(),
            interrupted: false,
        };
        let mut machine: Vec<f64> = Vec::new();
        let mut rng = SplitMix(self.seed);
        if self.first_probes().is_err() {
            out.interrupted = true;
            return Ok(out);
        }
        let p = self.settings.profile;
        let total = instances.len().max(1);
        let size = total.div_ceil(total.div_ceil(GROUP));
        let run_budget = Budget::for_instances(&p, total);
        for (n, group) in instances.chunks(size).enumerate() {
            let share = run_budget * group.len() as f64 / total as f64;
            let budget = Budget::new(p, spread, share);
            let mut told = |i: usize, r: &BenchResult| concluded(n * size + i, r);
            let interrupted = self.group(
                group,
                progress,
                &mut told,
                &budget,
                &mut rng,
                &mut machine,
                &mut out.results,
            );
            if interrupted {
                out.interrupted = true;
                break;
            }
        }
        out.machine = machine_states(&machine, self.settings.profile.ci_target);
        out.machine.floors = self.floors.borrow().summary();
        Ok(out)
    }

    /// The machine's floors as the session knows them now, after reading the probes
    /// in fresh processes if it has not yet (see [`Session::run_all`]): what a run
    /// says of the machine before its first row. Only an interruption is returned.
    pub fn floors(&self) -> Result<Vec<crate::results::Floor>, BenchError> {
        self.first_probes()?;
        Ok(self.floors.borrow().summary())
    }

    /// Reads the machine's probes in fresh processes until the session has
    /// [`FIRST_PROBES`] readings (so that the first rounds already know the floors);
    /// a probe process that cannot be had ends it early. Only an interruption is
    /// returned.
    fn first_probes(&self) -> Result<(), BenchError> {
        while self.floors.borrow().len() < FIRST_PROBES {
            check_interrupt()?;
            match self.probe_reading() {
                Some(p) => self.floors.borrow_mut().push(floors::PROBE_PROCESS, p),
                None => break,
            }
        }
        Ok(())
    }

    /// One reading of the machine's probes, in a process of its own on the home CPU
    /// as a round's worker (here, pinned there, without workers). None when it failed.
    fn probe_reading(&self) -> Option<crate::harness::probe::Probes> {
        match &self.opts.workers {
            Workers::Exec { program, .. } => {
                let start = self.start_for("", &Params(Vec::new()), 0);
                worker::Remote::probe(program, start).ok()
            }
            Workers::Inline => {
                let _home = crate::bench::ctx::home_cpu()
                    .ok()
                    .and_then(|c| crate::os::affinity::Pin::to(c).ok());
                self.harness().probe().ok()
            }
        }
    }

    /// Measures one group of instances; returns whether the run was interrupted.
    /// `concluded` is told each result once, with its index in `instances`, as soon
    /// as it is final.
    #[allow(clippy::too_many_arguments)]
    fn group(
        &self,
        instances: &[(&dyn Bench, Params)],
        progress: &mut dyn FnMut(Step<'_>),
        concluded: &mut dyn FnMut(usize, &BenchResult),
        budget: &Budget,
        rng: &mut SplitMix,
        machine: &mut Vec<f64>,
        results: &mut Vec<BenchResult>,
    ) -> bool {
        let p = self.settings.profile;
        let spread = budget.spread;
        let base = self.measured.get();
        self.measured.set(base + instances.len());
        let mut all: Vec<Instance<'_>> = instances
            .iter()
            .map(|(b, params)| Instance::new(*b, params, &self.opts.workers))
            .collect();
        let kinds: Vec<WorkKind> = instances
            .iter()
            .map(|(b, params)| crate::bench::work_kind(b.name(), params))
            .collect();
        for i in &mut all {
            i.set_max_rounds(budget.cap);
        }
        let c = self.clock.as_ref();
        let begin = c.now();
        let mut interrupted = false;
        // Which results `concluded` has been told of.
        let mut told = vec![false; all.len()];
        let mut tell = |i: usize, inst: &Instance<'_>| {
            if let Some(r) = inst.concluded().filter(|_| !told[i]) {
                told[i] = true;
                concluded(i, r);
            }
        };
        // A cycle visits every open instance once, except that past the minimum rounds
        // one the budget does not fund (`Budget::funded`) waits while the budget left is
        // needed by those it does (`Budget::defer`); so an instance's rounds are its own
        // count, not the cycle's.
        let mut cycle: u32 = 0;
        'rounds: loop {
            let mut order: Vec<usize> =
                (0..all.len()).filter(|&i| all[i].open()).collect();
            if order.is_empty() {
                break;
            }
            rng.shuffle(&mut order);
            let past_min = cycle as usize >= p.min_rounds;
            let mut funded = (Vec::new(), 0.0);
            if past_min {
                order = budget.choose(&all, order);
                funded = budget.funded(&all, &order);
            }
            for (n, &i) in order.iter().enumerate() {
                // Held to its kind's floor as the run knows it now.
                let held = self.floors.borrow().held(kinds[i]);
                all[i].hold(held);
                // An instance with a round measured again may still be short of its
                // minimum: it gets it whatever the budget.
                if past_min && all[i].progress().rounds >= p.min_rounds {
                    if let Some(why) = budget.spent(&all[i]) {
                        all[i].stop(self, why);
                        tell(i, &all[i]);
                        continue;
                    }
                    if let Some(why) = budget.hopeless(&all[i]) {
                        all[i].stop(self, why);
                        tell(i, &all[i]);
                        continue;
                    }
                    if all[i].progress().floor > held.target(&p) {
                        // More rounds cannot bring it to the target (its verdict says
                        // why).
                        all[i].stop(self, "so it got no more rounds".into());
                        tell(i, &all[i]);
                        continue;
                    }
                    if !funded.0.contains(&i) && budget.defer(funded.1) {
                        continue;
                    }
                }
                let round = all[i].progress().rounds as u32;
                progress(Step {
                    round,
                    index: n,
                    of: order.len(),
                    name: all[i].bench().name(),
                    params: all[i].params(),
                });
                // In a slow episode, keep reading for a while for it to pass (the
                // round is measured again if it does not). Only the first reading of a
                // visit describes the machine: the readings of the wait are taken
                // because the machine was slow, and counting them would let a slow
                // spell raise the limit after a few visits.
                let limit = redo_limit(machine);
                let mut canary = f64::INFINITY;
                for n in 0..=SLOW_WAIT_READINGS {
                    canary = match self.canary() {
                        Ok(v) => v,
                        Err(_) => {
                            interrupted = true;
                            break 'rounds;
                        }
                    };
                    if n == 0 {
                        machine.push(canary);
                    }
                    if limit == 0.0 || canary <= limit {
                        break;
                    }
                }
                match all[i].visit(self, round, begin, canary, limit) {
                    Err(_) => {
                        interrupted = true;
                        break 'rounds;
                    }
                    Ok(Some(probes)) => self.floors.borrow_mut().push(base + i, probes),
                    Ok(None) => {}
                }
                tell(i, &all[i]);
                if interrupt::interrupted() {
                    interrupted = true;
                    break 'rounds;
                }
            }
            // Spread the rounds in time: the first ones over the profile's span, and
            // later ones at the same pace, so that a small selection's extra rounds see
            // the machine's drift as the first ones do rather than one moment of it (a
            // whole catalogue's cycles take longer than that anyway).
            if spread {
                let until = p.span_ns as f64 * (cycle + 1) as f64 / p.min_rounds as f64;
                while c.to_ns(c.now().wrapping_sub(begin)) < until
                    && all.iter().any(Instance::open)
                {
                    match self.canary() {
                        Ok(v) => machine.push(v),
                        Err(_) => {
                            interrupted = true;
                            break 'rounds;
                        }
                    }
                    if interrupt::interrupted() {
                        interrupted = true;
                        break 'rounds;
                    }
                }
            }
            cycle += 1;
        }
        let h = self.harness();
        for (n, i) in all.into_iter().enumerate() {
            if let Some((mut r, samples)) =
                i.finish(&h, self.opts.keep_samples, interrupted)
            {
                self.keep(&mut r, samples);
                if !told[n] {
                    concluded(n, &r);
                }
                results.push(r);
            }
        }
        interrupted
    }

    /// What a worker for `bench` is told.
    fn start_for(&self, bench: &str, params: &Params, begin: u64) -> worker::wire::Start {
        worker::wire::Start {
            bench: bench.to_string(),
            params: params
                .0
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            profile: (&self.settings.profile).into(),
            clock: self.clock_info.name.clone(),
            ns_per_tick: self.clock_info.ns_per_tick,
            granularity_ns: self.settings.granularity_ns,
            resolution_ns: self.settings.resolution_ns,
            batch: self.settings.batch,
            spans: self.settings.spans,
            begin,
            keep_samples: self.opts.keep_samples,
            max_rounds: 0,
            dir: self.opts.files.dir.clone(),
            drop_caches: self.opts.files.drop_caches,
            context_profile: self.context.profile().map(str::to_string),
            explain: self.explain,
            resume: false,
        }
    }

    /// The measuring environment of an instance measured in this process.
    fn flag_here(
        &self,
        samples: &mut [Sample],
        expect: Expect,
    ) -> Result<(), BenchError> {
        match &self.kernel {
            Ok(w) => w.borrow_mut().flag(samples, expect),
            Err(_) => Ok(()),
        }
    }

    /// The kernel's verdict on a worker's samples.
    fn flag_there(
        &self,
        tid: u32,
        samples: &mut [Sample],
        expect: Expect,
    ) -> Result<(), BenchError> {
        match &self.kernel {
            Ok(w) => w.borrow_mut().flag_thread(tid, samples, expect),
            Err(_) => Ok(()),
        }
    }
}

/// The getpid canary read with `h` where the calling thread runs, ns per call.
pub(crate) fn getpid_canary(h: &Harness<'_>) -> Result<f64, BenchError> {
    let mut b = body(|| {
        std::hint::black_box(sys::getpid());
        Ok(())
    });
    h.canary(b.as_mut(), CANARY_BATCH, CANARY_BATCHES)
}

/// The canary reading above which a round is measured again: [`slot::REDO_ABOVE`]
/// above the median of the run's last [`REDO_WINDOW`] readings (0, no limit, before
/// there are five).
fn redo_limit(readings: &[f64]) -> f64 {
    let recent = &readings[readings.len().saturating_sub(REDO_WINDOW)..];
    if recent.len() < 5 {
        return 0.0;
    }
    let mut v = recent.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2] * (1.0 + slot::REDO_ABOVE)
}

/// How many of the run's latest canary readings its slow-episode limit looks at.
const REDO_WINDOW: usize = 101;

/// How many more canary readings a visit takes, at most, while they read above the
/// slow-episode limit, before it goes ahead (and its round is measured again). On the
/// 2-vCPU VM this project is developed on, a slow episode met by a spinning getpid
/// loop ended within 4 readings of 2,500 calls in 14 of 24 cases and within 16 in 21:
/// 16 readings take about 6 ms there, a quarter of a round's visit.
const SLOW_WAIT_READINGS: usize = 16;

/// How a run spends its time past the minimum rounds: within the profile's budget
/// (`syscost run`), more rounds go to the benchmarks that have not converged, those
/// that need the least time to reach their target first, up to `budget_max_rounds`;
/// without a budget (one benchmark at a time, as `repro` measures), up to `max_rounds`.
struct Budget {
    profile: Profile,
    /// Spread the rounds over time at the pace of the profile's span (a whole run).
    spread: bool,
    /// The most rounds an instance gets.
    cap: usize,
    /// The run's start, when a budget applies.
    start: Option<std::time::Instant>,
    /// The run's budget, ns: the profile's for a whole catalogue, less for fewer
    /// instances ([`Budget::for_instances`]).
    budget_ns: f64,
}

impl Budget {
    /// A budget of `budget_ns` (its share of [`Budget::for_instances`]) for a group.
    fn new(profile: Profile, spread: bool, budget_ns: f64) -> Budget {
        let budgeted = spread
            && profile.budget_ns > 0
            && profile.budget_max_rounds > profile.max_rounds;
        Budget {
            profile,
            spread,
            cap: if budgeted {
                profile.budget_max_rounds
            } else {
                profile.max_rounds
            },
            start: budgeted.then(std::time::Instant::now),
            budget_ns,
        }
    }

    /// The time a run of `n` instances may take at most, ns: the profile's budget for
    /// [`WHOLE_CATALOGUE`] instances or more, a share of it in proportion for fewer,
    /// and never less than four spans (the minimum rounds' span and three more at
    /// their pace). A cap, not a time to fill: a run ends as soon as every instance is
    /// done. So `syscost run syscall.getpid` answers within about 12 s in the standard
    /// profile however its rounds spread, where the whole catalogue's 105 s would let a
    /// row that converges slowly hold the answer for a minute and more.
    fn for_instances(p: &Profile, n: usize) -> f64 {
        let share = p.budget_ns as f64 * n as f64 / WHOLE_CATALOGUE as f64;
        share.max(4.0 * p.span_ns as f64).min(p.budget_ns as f64)
    }

    /// The time left, ns (None without a budget).
    fn left_ns(&self) -> Option<f64> {
        let start = self.start?;
        Some(self.budget_ns - start.elapsed().as_nanos() as f64)
    }

    /// Once the budget is spent, why `inst` gets no more rounds.
    fn spent(&self, inst: &Instance<'_>) -> Option<String> {
        match self.left_ns() {
            Some(left) if left <= 0.0 => Some(format!(
                "the run's time budget ({:.0} s) ended; {}",
                self.budget_ns / 1e9,
                self.outlook(inst).2
            )),
            _ => None,
        }
    }

    /// Past the profile's usual rounds (`max_rounds`), why `inst` gets no more when it
    /// cannot reach its target within the cap: the budget is a cap, not a time to
    /// fill, and rounds that narrow an interval which stays above its target anyway
    /// only make the run longer. None without a budget.
    fn hopeless(&self, inst: &Instance<'_>) -> Option<String> {
        if self.start.is_none() || inst.progress().rounds < self.profile.max_rounds {
            return None;
        }
        let (feasible, _, why) = self.outlook(inst);
        (!feasible).then_some(why)
    }

    /// Whether `inst` can converge within the cap, what more rounds would cost it (ns:
    /// to its target, or else to the cap), and that in words.
    fn outlook(&self, inst: &Instance<'_>) -> (bool, f64, String) {
        let instance::Progress {
            rounds,
            ci,
            floor,
            visit_ns,
            held,
        } = inst.progress();
        let target = held.target(&self.profile);
        let to_cap = self.cap.saturating_sub(rounds) as f64 * visit_ns;
        if floor > target {
            return (
                false,
                to_cap,
                format!(
                    "more rounds cannot narrow its interval below ±{:.2}%, half the \
                     clock's step per operation",
                    floor * 100.0
                ),
            );
        }
        let Some(need) = rounds_needed(rounds, ci, target) else {
            return (
                false,
                to_cap,
                "no round has a clean sample, so the interval cannot narrow".into(),
            );
        };
        if need > self.cap {
            return (
                false,
                to_cap,
                format!(
                    "its rounds spread so that the interval would reach the target after \
                     about {need} rounds, more than the cap of {}",
                    self.cap
                ),
            );
        }
        let look = self.profile.next_look(need, self.cap);
        let more = look.saturating_sub(rounds);
        (
            true,
            more as f64 * visit_ns,
            format!(
                "it would need about {more} more rounds ({:.1} s) to reach the target",
                more as f64 * visit_ns / 1e9
            ),
        )
    }

    /// The instances of `order` that the budget left pays for, and what they need, ns:
    /// those that can reach their target within the cap, the cheapest first (what more
    /// rounds to their target cost), as long as the sum of their needs fits in the
    /// budget left. Funding every instance that could converge within the cap would
    /// share the budget among more than it can carry, and a row that gets rounds
    /// without reaching its next look before the budget ends gains nothing from them.
    fn funded(&self, all: &[Instance<'_>], order: &[usize]) -> (Vec<usize>, f64) {
        let Some(left) = self.left_ns() else {
            return (Vec::new(), 0.0);
        };
        let needs: Vec<(f64, usize)> = order
            .iter()
            .filter(|&&i| all[i].open())
            .filter_map(|&i| {
                let (feasible, cost, _) = self.outlook(&all[i]);
                feasible.then_some((cost, i))
            })
            .collect();
        cheapest_within(needs, left)
    }

    /// Whether an instance the budget does not fund waits this cycle: while the budget
    /// left is no more than what the funded ones still need (`reserve`). A round of it
    /// would narrow an interval that stays unconverged anyway, and take the time
    /// another row needs to converge.
    fn defer(&self, reserve: f64) -> bool {
        match self.left_ns() {
            Some(left) => reserve > 0.0 && left <= reserve,
            None => false,
        }
    }

    /// The order in which the instances of `order` (past the minimum cycles) get their
    /// next round: any still short of its minimum rounds (a round of it was measured
    /// again) first, then those that need the least time to reach their target first,
    /// those that cannot within the cap last (they still get rounds while the budget
    /// lasts: the run's time goes where the uncertainty is).
    fn choose(&self, all: &[Instance<'_>], order: Vec<usize>) -> Vec<usize> {
        if self.start.is_none() {
            return order;
        }
        let mut keyed: Vec<(bool, bool, f64, usize)> = order
            .into_iter()
            .map(|i| {
                let short = all[i].progress().rounds < self.profile.min_rounds;
                let (feasible, cost, _) = self.outlook(&all[i]);
                (short, feasible, cost, i)
            })
            .collect();
        keyed.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.total_cmp(&b.2)));
        keyed.into_iter().map(|(_, _, _, i)| i).collect()
    }
}

/// Of `needs` (what each one needs, ns, and its index), those that fit in `left`
/// together, the smallest needs first, and the sum of their needs.
fn cheapest_within(mut needs: Vec<(f64, usize)>, left: f64) -> (Vec<usize>, f64) {
    needs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut ids, mut sum) = (Vec::new(), 0.0);
    for (need, i) in needs {
        if sum + need > left {
            break;
        }
        sum += need;
        ids.push(i);
    }
    (ids, sum)
}

/// About how many rounds an interval of relative half-width `ci` after `rounds` rounds
/// needs to reach `target`: the half-width shrinks as one over the square root of the
/// rounds (the t quantile's shrinking is left out, so the estimate errs long).
/// None when the interval is not known.
fn rounds_needed(rounds: usize, ci: f64, target: f64) -> Option<usize> {
    if !ci.is_finite() || target <= 0.0 {
        return None;
    }
    let r = rounds.max(1) as f64 * (ci / target).powi(2);
    Some((r.min(1e6).ceil() as usize).max(rounds + 1))
}

/// How many probe readings a session takes in probe processes before its first round.
const FIRST_PROBES: usize = 24;

/// How many instances make a whole catalogue, for the time budget: a run of this many
/// or more has the profile's whole budget ([`Budget::for_instances`]).
const WHOLE_CATALOGUE: usize = 250;

/// How many instances are measured together at most, in one group (each may hold a
/// worker process and its socket): the whole catalogue is measured in groups of about
/// this size, so that its first rows are written within seconds.
pub const GROUP: usize = 64;

/// What [`Session::run_all`] is about to measure.
pub struct Step<'a> {
    /// The round (0 first).
    pub round: u32,
    /// The position in this round's order.
    pub index: usize,
    /// How many instances this round visits.
    pub of: usize,
    /// The benchmark.
    pub name: &'static str,
    /// Its parameters.
    pub params: &'a Params,
}

/// The canary readings as machine states.
fn machine_states(readings: &[f64], target: f64) -> MachineStates {
    let mut sorted: Vec<f64> =
        readings.iter().copied().filter(|x| x.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    let spread = if sorted.len() >= 2 {
        let q = |p: f64| stats::percentile_sorted(&sorted, p);
        (q(90.0) - q(10.0)) / q(50.0)
    } else {
        0.0
    };
    // Many readings form a continuum in which every neighbour is close: their states
    // are the modes of the distribution (at least 5% of readings each), not gaps.
    let states = if sorted.len() >= 20 {
        stats::modes(&sorted, 0.05, CANARY_THRESHOLD)
            .into_iter()
            .map(|m| rounds::State {
                median_ns: m.center,
                share: m.fraction,
                count: (m.fraction * sorted.len() as f64).round() as usize,
            })
            .collect()
    } else {
        rounds::states(&sorted, CANARY_THRESHOLD)
    };
    MachineStates {
        readings: sorted.len(),
        spread,
        states,
        unsteady: spread > target,
        past: None,
        floors: Vec::new(),
    }
}

/// A small seeded generator (SplitMix64) for the round order.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Fisher–Yates.
    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
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
mod tests {
    use super::*;
    use crate::harness::Profile;

    #[test]
    fn a_small_selection_has_a_budget_in_proportion_but_never_below_four_spans() {
        let p = Profile::STANDARD;
        let s = |n| Budget::for_instances(&p, n) / 1e9;
        assert_eq!(s(1), 4.0 * p.span_ns as f64 / 1e9);
        assert_eq!(s(3), s(1));
        assert_eq!(s(WHOLE_CATALOGUE), p.budget_ns as f64 / 1e9);
        assert_eq!(s(10 * WHOLE_CATALOGUE), s(WHOLE_CATALOGUE));
        assert!(s(200) > s(100) && s(100) > s(1));
    }

    #[test]
    fn the_rounds_a_benchmark_needs_grow_with_the_square_of_its_interval() {
        assert_eq!(rounds_needed(5, 0.02, 0.01), Some(20));
        assert_eq!(rounds_needed(5, 0.011, 0.01), Some(7));
        assert_eq!(rounds_needed(8, 0.005, 0.01), Some(9), "at least one more");
        assert_eq!(rounds_needed(5, f64::INFINITY, 0.01), None);
    }

    #[test]
    fn the_budget_funds_the_smallest_needs_that_fit_together() {
        let needs = vec![(5.0, 0), (1.0, 1), (3.0, 2), (2.0, 3)];
        assert_eq!(cheapest_within(needs.clone(), 6.5), (vec![1, 3, 2], 6.0));
        // The next smallest need does not fit: none after it is funded either, so the
        // order of need is kept (a larger need never goes before a smaller one).
        assert_eq!(cheapest_within(needs.clone(), 2.5), (vec![1], 1.0));
        assert_eq!(
            cheapest_within(needs.clone(), 11.0),
            (vec![1, 3, 2, 0], 11.0)
        );
        assert_eq!(cheapest_within(needs, 0.5), (vec![], 0.0));
        assert_eq!(cheapest_within(Vec::new(), 10.0), (vec![], 0.0));
    }

    #[test]
    fn a_run_looks_at_its_interval_a_few_times_not_after_every_round() {
        let p = Profile::STANDARD;
        let looks: Vec<usize> = (1..=p.budget_max_rounds)
            .filter(|&r| p.looks_at(r, p.budget_max_rounds))
            .collect();
        assert_eq!(looks, [5, 8, 12, 18, 27, 41, 62, 93]);
        let plain: Vec<usize> = (1..=p.max_rounds)
            .filter(|&r| p.looks_at(r, p.max_rounds))
            .collect();
        assert_eq!(plain, [5, 8]);
        assert_eq!(p.next_look(6, 18), 8);
        assert_eq!(p.next_look(13, 18), 18);
        let q = Profile::QUICK;
        let quick: Vec<usize> = (1..=q.budget_max_rounds)
            .filter(|&r| q.looks_at(r, q.budget_max_rounds))
            .collect();
        assert_eq!(quick, [3, 5, 8]);
    }

    /// Takes a few microseconds per operation; its after step fails.
    const FAILS_AFTER: crate::bench::Simple = crate::bench::Simple {
        name: "test.fails_after",
        about: "",
        origin: "",
        params: &[],
        prepare: |_| {
            Ok(crate::bench::Prepared::new(crate::bench::body(|| {
                std::hint::black_box(std::time::Instant::now());
                Ok(())
            }))
            .after(Box::new(|_, _| {
                Err(BenchError::Failed("the check found a bad count".into()))
            })))
        },
    };

    /// A session of the smoke profile on the monotonic clock.
    fn smoke_session() -> Session {
        let opts = SessionOptions {
            clock: ClockChoice::Monotonic,
            ..SessionOptions::new(Profile::SMOKE, false)
        };
        Session::start(opts).unwrap()
    }

    #[test]
    fn a_failure_after_the_measurement_keeps_the_measurement() {
        let session = smoke_session();
        let r = session
            .run(&FAILS_AFTER, &crate::bench::Params(vec![]))
            .unwrap();
        assert_eq!(r.status, Status::Failed);
        let why = r.reason.as_deref().unwrap_or("");
        assert!(
            why.contains("after the measurement") && why.contains("bad count"),
            "{why}"
        );
        let median = r.median_ns().expect("the measurement is kept");
        assert!(median > 0.0 && median < 1e6, "{median}");
    }

    #[test]
    fn the_slow_episode_limit_is_above_the_median_of_the_latest_readings() {
        assert_eq!(redo_limit(&[70.0; 4]), 0.0, "no limit before five readings");
        let limit = redo_limit(&[70.0, 71.0, 200.0, 69.0, 72.0]);
        assert!((limit - 71.0 * (1.0 + REDO_ABOVE)).abs() < 1e-9, "{limit}");
        // Only the latest readings count: the machine's speed may have moved.
        let mut readings = vec![140.0; 500];
        readings.extend([70.0; REDO_WINDOW]);
        let limit = redo_limit(&readings);
        assert!((limit - 70.0 * (1.0 + REDO_ABOVE)).abs() < 1e-9, "{limit}");
    }

    /// One round of `slot` in `session`, as a worker measures it: whether it was kept.
    fn visit_in(
        session: &Session,
        slot: &mut slot::Slot<'_>,
        begin: u64,
        round: u32,
        canary: f64,
        limit: f64,
    ) -> bool {
        let mut env = slot::Env {
            clock: session.clock.as_ref(),
            settings: session.settings,
            context: &session.context,
            flag: None,
            explain: None,
        };
        slot.visit(&mut env, round, begin, canary, limit).unwrap()
    }

    #[test]
    fn a_round_in_a_slow_episode_is_measured_again_but_never_more_often_than_kept() {
        let session = smoke_session();
        let params = crate::bench::Params(vec![]);
        let mut slot = slot::Slot::new(&FAILS_AFTER, &params);
        let begin = session.clock.now();
        let visit = |slot: &mut slot::Slot<'_>, round: u32, canary: f64, limit: f64| {
            visit_in(&session, slot, begin, round, canary, limit)
        };
        // The canary before the round read above the limit: not kept.
        assert!(!visit(&mut slot, 0, 200.0, 100.0));
        assert_eq!((slot.rounds, slot.redone), (0, 1));
        assert!(slot.samples.is_empty() && slot.canaries.is_empty());
        // Again: no more rounds measured again than kept (here, one), so it is kept.
        assert!(visit(&mut slot, 0, 200.0, 100.0));
        assert_eq!((slot.rounds, slot.redone), (1, 1));
        assert!(!slot.samples.is_empty());
        // Without a limit, every round is kept.
        assert!(visit(&mut slot, 1, 1e9, 0.0));
        assert_eq!((slot.rounds, slot.redone), (2, 1));
        let kept = slot.samples.len();
        // The getpid canary after a round takes far more than a picosecond: not kept.
        assert!(!visit(&mut slot, 2, 0.0, 1e-3));
        assert_eq!((slot.rounds, slot.redone, slot.samples.len()), (2, 2, kept));
        assert!(visit(&mut slot, 2, 1e9, 0.0));
        assert_eq!((slot.rounds, slot.redone), (3, 2));
        let h = session.harness();
        let r = slot.finish(&h, false, false).expect("a result");
        let m = r.measured.expect("measured");
        assert_eq!(m.rounds_redone, 2);
        assert_eq!(m.rounds.len(), 3, "only the rounds kept");
        let json = serde_json::to_value(&m).unwrap();
        assert_eq!(json["rounds_redone"], 2);
    }

    #[test]
    fn a_hand_over_crosses_a_socket_as_a_descriptor_and_resumes_whole() {
        use std::os::unix::net::UnixStream;
        use worker::wire::{self, Reply, Sealed};
        let session = smoke_session();
        let params = crate::bench::Params(vec![]);
        let mut slot = slot::Slot::new(&FAILS_AFTER, &params);
        let begin = session.clock.now();
        assert!(visit_in(&session, &mut slot, begin, 0, 70.0, 0.0));
        let (rounds, samples) = (slot.rounds, slot.samples.len());
        assert!(samples > 0);
        // The ticks the overhead subtracts: the first round's, and one later round's.
        let mut setup = slot.setup.clone().expect("set up in the first round");
        setup.1.ticks = 61;
        setup.1.later = vec![52];
        slot.setup = Some(setup.clone());
        let sealed = Sealed::seal(&slot.carry(Some(1234))).unwrap();
        let bytes = sealed.0.len().unwrap();
        assert!(bytes > 0);
        // The worker's side: the reply, then the descriptor; dropping its own copy
        // leaves the file to the descriptor in flight.
        let (mut worker, mut parent) = UnixStream::pair().unwrap();
        wire::send(&mut worker, &Reply::Handed { bytes }).unwrap();
        sealed.0.send(&worker).unwrap();
        drop(sealed);
        match wire::recv::<Reply>(&mut parent).unwrap() {
            Some(Reply::Handed { bytes: b }) => assert_eq!(b, bytes),
            other => panic!("{other:?}"),
        }
        let got = Sealed(wire::MemFile::recv(&parent).unwrap());
        assert_eq!(got.0.len().unwrap(), bytes);
        // The next worker reads it from the start, whatever the file's offset.
        let resumed = slot::Slot::resume(&FAILS_AFTER, &params, got.open().unwrap());
        assert_eq!((resumed.rounds, resumed.samples.len()), (rounds, samples));
        assert_eq!(resumed.processes(), 2, "the worker that handed over counts");
        assert_eq!(resumed.earlier_peak_kib, Some(1234));
        let (k, o) = resumed.setup.clone().expect("the set-up travels");
        assert_eq!((k, o.ticks, &o.later), (setup.0, 61, &vec![52]));
        assert_eq!(
            (o.ticks_for(0), o.ticks_for(1), o.ticks_for(2)),
            (61, 52, 61)
        );
        // A file that is not a whole hand-over is refused, not half read.
        let torn = wire::MemFile::create("torn").unwrap();
        torn.write_json(&"not a hand-over").unwrap();
        assert!(Sealed(torn).open().is_err());
    }

    #[test]
    fn asking_for_a_tsc_the_cpu_does_not_keep_steady_is_a_usage_error() {
        let opts = SessionOptions {
            clock: ClockChoice::Tsc,
            ..SessionOptions::new(Profile::SMOKE, false)
        };
        let e = Session::start(opts).err().expect("refused");
        let usage = e.downcast_ref::<crate::error::UsageError>();
        assert!(usage.is_some(), "not a usage error: {e:#}");
        assert!(e.to_string().contains("--clock tsc"), "{e}");
    }
}
