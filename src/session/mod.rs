//! A measuring session: the chosen clock, the pinning and background load the user asked
//! for, and the scheduler that measures benchmark instances in rounds spread over time,
//! interleaved in a shuffled order, and turns each into one [`BenchResult`].
//!
//! It owns the resources that outlive a single benchmark (the pin, the load) and
//! releases them on drop; it prints nothing.

use crate::bench::{After, Bench, Params};
use crate::error::BenchError;
use crate::harness::clock::{self, characterize, Clock, ClockChoice, ClockInfo};
use crate::harness::probe::WorkKind;
use crate::harness::{check_interrupt, Expect, Stop};
use crate::harness::{
    Analysis, EmptyLoop, Harness, Measurement, Overhead, Plan, Profile, Sample, Settings,
};
use crate::os::affinity::Pin;
use crate::os::interrupt;
use crate::os::load::Load;
use crate::results::{
    BenchResult, Canary, HarnessInfo, MachineStates, Measured, Samples, Status,
};
use anyhow::Context;
use budget::Budget;
use canary::{machine_states, Window};
use instance::Instance;
use slot::{Env, Slot};

mod budget;
mod canary;
mod copies;
mod floors;
mod group;
mod instance;
pub mod paired;
mod slot;
pub mod worker;

use crate::method;
pub use method::REDO_ABOVE;
pub use worker::Workers;

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
#[derive(Default)]
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
    _load: Option<Load>,
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
    /// The canary's readings of the last minute, over every run of this session:
    /// where its base state is read (a `repro` measures its rows one run at a time).
    window: std::cell::RefCell<Window>,
    /// Instances measured so far in this session: where the next one's probe readings
    /// are kept apart from the others'.
    measured: std::cell::Cell<usize>,
    /// The CPU whose canary read fastest at the last reading: the next worker's home
    /// (None: its first CPU, as with one CPU, `--cpu`, or no workers).
    home: std::cell::Cell<Option<usize>>,
    /// Removes the cgroups `cgroup=` made that a killed worker left (see
    /// [`crate::bench::harden::cgroup::Sweep`]).
    _cgroups: crate::bench::harden::cgroup::Sweep,
    /// The run's time budget the user gave (`run --budget`), ns, in place of the one
    /// the profile and the selection's size give ([`Session::budget_for`]).
    budget: Option<u64>,
    /// When the session started, until its first run takes it: that run's budget
    /// counts from here, so that the clock's characterisation and the first probes
    /// come out of it too (a later run's counts from its own start).
    born: std::cell::Cell<Option<std::time::Instant>>,
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
        let born = std::time::Instant::now();
        let load = match opts.load {
            0 => None,
            n => Some(Load::start(n).context("starting the background load (--load)")?),
        };
        let pin = (opts.cpu)
            .map(|c| Pin::to(c).with_context(|| format!("pinning to CPU {c} (--cpu)")))
            .transpose()?;
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
            std::cell::RefCell::new(floors::Floors::new(opts.profile.min_rounds));
        Ok(Session {
            context,
            clock,
            clock_info,
            settings,
            opts,
            seed,
            _pin: pin,
            _load: load,
            journal: None,
            kernel,
            spill: None,
            explain: 0,
            floors,
            window: Default::default(),
            measured: std::cell::Cell::new(0),
            home: std::cell::Cell::new(None),
            _cgroups: crate::bench::harden::cgroup::Sweep::start(),
            budget: None,
            born: std::cell::Cell::new(Some(born)),
        })
    }

    /// Asks every worker to sample where its benchmark's time goes during the timed
    /// batches (`syscost explain`, `run --explain`; see [`crate::explain`]), `hz`
    /// samples per second of running time (0: not). An instance measured in this
    /// process (no worker) is not explained.
    pub fn explain(&mut self, hz: u64) {
        self.explain = hz;
    }

    /// Sets what the history knows of how far the machine moves between runs, per kind
    /// of work (`store::movement`): what the machine allows a kind is
    /// the larger of that and what this run's probe readings give (docs/method.md §6).
    pub fn machine_between_runs(
        &self,
        moves: &[(crate::harness::probe::WorkKind, usize, f64)],
    ) {
        self.floors.borrow_mut().set_between(moves);
    }

    /// Holds every result to the profile's target itself, even where it lies below the
    /// machine's floor for the result's kind of work (`run --target`): the rounds try
    /// for it, and a result that misses it says why.
    pub fn hold_to_target(&mut self) {
        self.floors.get_mut().strict = true;
    }

    /// Gives every later run of [`Session::run_all`] a time budget of `ns` whatever its
    /// size (`run --budget`), in place of the profile's for its selection.
    pub fn set_budget(&mut self, ns: u64) {
        self.budget = Some(ns);
    }

    /// The time a run of `n` instances may take at most ([`Session::run_all`]), ns:
    /// the one given to [`Session::set_budget`], else the profile's for a whole
    /// catalogue and less for a small selection. None for a profile without a budget
    /// (its rounds are fixed).
    pub fn budget_for(&self, n: usize) -> Option<u64> {
        let p = &self.settings.profile;
        let budgeted = p.budget_ns > 0 && p.budget_max_rounds > p.max_rounds;
        budgeted.then(|| {
            self.budget
                .unwrap_or_else(|| Budget::for_instances(p, n.max(1)) as u64)
        })
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

    /// The harness configuration, for the result document.
    pub fn harness_info(&self) -> HarnessInfo {
        let p = self.settings.profile;
        let rounds_per_worker = match self.opts.workers {
            Workers::Exec { rounds, .. } => Some(rounds),
            Workers::Inline => None,
        };
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
            cpu: self.opts.cpu,
            load: self.opts.load,
            kernel_events: match (&self.opts.cull, &self.kernel) {
                (Cull::Rusage, _) => None,
                (Cull::Kernel, Ok(w)) => Some(w.borrow().method()),
                (Cull::Kernel, Err(why)) => Some(format!("unavailable: {why}")),
            },
            budget_ns: (p.budget_ns > 0).then_some(p.budget_ns),
            budget_max_rounds: (p.budget_ns > 0).then_some(p.budget_max_rounds),
            workers: rounds_per_worker.map(|_| "process".to_string()),
            rounds_per_worker,
        }
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
        let mut e = journal.entries();
        if e.clock.is_none() {
            e.clock = Some(self.clock_info.clone());
            // One instance at a time (`Session::run`) has no time budget.
            let mut h = self.harness_info();
            h.budget_ns = None;
            h.budget_max_rounds = None;
            e.harness = Some(h);
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
    /// more than [`method::GROUP`] instances is measured in consecutive groups of about equal
    /// size, each with its share of the run's time budget: a group's rows conclude
    /// (and are written) within seconds of its start instead of after the whole
    /// catalogue's minimum rounds, and at most [`method::GROUP`] worker processes live at once.
    fn rounds(
        &self,
        instances: &[(&dyn Bench, Params)],
        progress: &mut dyn FnMut(Step<'_>),
        concluded: &mut dyn FnMut(usize, &BenchResult),
        spread: bool,
    ) -> Result<Outcome, BenchError> {
        let mut out = Outcome::default();
        let mut machine: Vec<f64> = Vec::new();
        let mut window = self.window.borrow_mut();
        let mut rng = self.seed;
        // The budget covers the run from the session's start: the clock's
        // characterisation, the probe processes and the canary's first readings come
        // out of the first group's share, so that a small selection answers within the
        // budget its header states, not that and these.
        let started = self.born.take().unwrap_or_else(std::time::Instant::now);
        if self.first_probes().is_err() {
            out.interrupted = true;
            return Ok(out);
        }
        // The first rounds know the base state too: a tenth of a second of readings
        // before them (one per `method::BASE_THIN_NS`), unless the session's last minute
        // already has them.
        window.forget_before(std::time::Instant::now());
        let seeded = std::time::Instant::now();
        while seeded.elapsed().as_nanos() < u128::from(method::BASE_SEED_NS)
            && window.len() < method::BASE_SEED_READINGS
        {
            match self.canary().and_then(|v| check_interrupt().map(|()| v)) {
                Ok(v) => window.push(std::time::Instant::now(), v),
                Err(_) => {
                    out.interrupted = true;
                    return Ok(out);
                }
            }
        }
        let p = self.settings.profile;
        let total = instances.len().max(1);
        let size = total.div_ceil(total.div_ceil(method::GROUP));
        let run_budget = self.budget_for(total).unwrap_or(0) as f64;
        for (n, group) in instances.chunks(size).enumerate() {
            let share = budget::group_share(
                run_budget,
                started.elapsed().as_nanos() as f64,
                group.len(),
                total - n * size,
                total,
            );
            let budget = Budget::new(p, spread, share);
            let mut told = |i: usize, r: &BenchResult| concluded(n * size + i, r);
            let interrupted = self.group(
                group,
                progress,
                &mut told,
                &budget,
                &mut rng,
                (&mut machine, &mut window),
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

    /// Reads the machine's probes in fresh processes, each on the home a worker would
    /// be given at that moment, until the session has [`method::FIRST_PROBES`] readings (so
    /// that the first rounds already know the floors);
    /// a probe process that cannot be had ends it early. Only an interruption is
    /// returned.
    fn first_probes(&self) -> Result<(), BenchError> {
        while self.floors.borrow().len() < method::FIRST_PROBES {
            check_interrupt()?;
            // On the CPU a worker would measure on now (a failed reading leaves the
            // home as it was).
            let _ = self.canary();
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
                self.harness()
                    .probe(crate::harness::probe::Extra {
                        cross: true,
                        io: None,
                    })
                    .ok()
            }
        }
    }

    /// What a worker for `bench` is told.
    fn start_for(&self, bench: &str, params: &Params, begin: u64) -> worker::wire::Start {
        worker::wire::Start {
            bench: bench.to_string(),
            params: owned(params).collect(),
            profile: self.settings.profile,
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
            home: self.home.get(),
        }
    }
}

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

/// Fisher–Yates, drawing from the SplitMix64 state `rng` (the round order).
fn shuffle<T>(rng: &mut u64, v: &mut [T]) {
    for i in (1..v.len()).rev() {
        let j = (crate::stats::rounds::splitmix(rng) % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}

/// `params` as owned names and values (for a result, or a worker's start).
fn owned(params: &Params) -> impl Iterator<Item = (String, String)> + '_ {
    params.0.iter().map(|(k, v)| (k.to_string(), v.clone()))
}

#[cfg(test)]
mod tests;
