//! One instance of a run, seen from the session: measured here (a [`Slot`] of this
//! process, for what the catalogue cannot name) or in worker processes (a
//! [`Remote`](super::worker::Remote), started at its first round and finished, so gone,
//! as soon as it needs no more rounds; every few rounds it hands what it gathered to a
//! fresh one, see [`ROUNDS_PER_WORKER`](crate::method::ROUNDS_PER_WORKER)).

use super::worker::wire::{MemFile, Sealed};
use super::worker::{Remote, Services, Workers};
use super::*;
use crate::harness::probe::Probes;
use crate::harness::Held;

pub(super) enum Instance<'b> {
    /// Measured in this process.
    Here(Box<Slot<'b>>),
    /// Measured in a worker process.
    Away(Box<Away<'b>>),
}

pub(super) struct Away<'b> {
    bench: &'b dyn Bench,
    params: Params,
    program: std::path::PathBuf,
    /// The rounds a worker measures before a fresh one takes over (0: all).
    term: usize,
    /// The worker, from its first round until it is finished.
    remote: Option<Remote>,
    /// Rounds the live worker has measured.
    served: usize,
    /// Wants more rounds.
    open: bool,
    /// The result, once finished.
    result: Option<BenchResult>,
    /// The result's samples, when it kept them, until the session takes them.
    samples: Option<MemFile>,
    /// What the last worker handed over, until the next one takes it up.
    carried: Option<Sealed>,
    /// The most rounds it gets (0: the profile's).
    max_rounds: usize,
    /// Where it stands, as its worker's replies said.
    progress: Progress,
}

/// Where an instance stands, for the budget (see [`Instance::progress`]).
#[derive(Clone, Copy, Default)]
pub(super) struct Progress {
    /// Rounds measured.
    pub rounds: usize,
    /// The rounds' own interval's relative half-width at the last look.
    pub ci: f64,
    /// The interval's relative floor at the last look: more rounds cannot narrow it.
    pub floor: f64,
    /// The wall time of its visits so far, ns.
    pub spent_ns: f64,
    /// The machine's floor it is held to, as of its last visit.
    pub held: Held,
}

impl<'b> Instance<'b> {
    /// An instance of `bench` with `params` that gets at most `max_rounds` rounds.
    pub(super) fn new(
        bench: &'b dyn Bench,
        params: &Params,
        workers: &Workers,
        max_rounds: usize,
    ) -> Instance<'b> {
        match workers {
            Workers::Exec { program, rounds } if in_catalogue(bench) => {
                // Copies are measured together in one window a round, and an explained
                // run's sampler gathers across rounds: both keep their worker.
                let copies =
                    crate::bench::copies::Copies::of(params).is_some_and(|c| c.n > 1);
                Instance::Away(Box::new(Away {
                    bench,
                    params: params.clone(),
                    program: program.clone(),
                    term: if copies { 0 } else { *rounds },
                    remote: None,
                    served: 0,
                    open: true,
                    carried: None,
                    result: None,
                    samples: None,
                    max_rounds,
                    progress: Progress {
                        ci: f64::INFINITY,
                        ..Progress::default()
                    },
                }))
            }
            _ => Instance::Here(Box::new(Slot {
                max_rounds,
                ..Slot::new(bench, params)
            })),
        }
    }

    pub(super) fn bench(&self) -> &'b dyn Bench {
        match self {
            Instance::Here(s) => s.bench,
            Instance::Away(a) => a.bench,
        }
    }

    pub(super) fn params(&self) -> &Params {
        match self {
            Instance::Here(s) => &s.params,
            Instance::Away(a) => &a.params,
        }
    }

    pub(super) fn open(&self) -> bool {
        match self {
            Instance::Here(s) => s.open(),
            Instance::Away(a) => a.open,
        }
    }

    /// Its result, once it is final before [`Instance::finish`]: a worker's, as soon
    /// as it needs no more rounds; one measured here, only when skipped or failed
    /// (the rest are concluded by `finish`).
    pub(super) fn concluded(&self) -> Option<&BenchResult> {
        match self {
            Instance::Here(s) => s.ended.then_some(&s.c.result),
            Instance::Away(a) if !a.open => a.result.as_ref(),
            Instance::Away(_) => None,
        }
    }

    /// Where it stands, for deciding who gets more rounds.
    pub(super) fn progress(&self) -> Progress {
        match self {
            Instance::Here(s) => Progress {
                rounds: s.c.rounds as usize,
                ci: s.c.last_ci,
                floor: s.c.last_floor,
                spent_ns: s.c.setup_ns + s.c.warmup_ns + s.c.elapsed_ns,
                held: s.held,
            },
            Instance::Away(a) => a.progress,
        }
    }

    /// Gives it no more rounds, saying why; it is concluded as it stands.
    pub(super) fn stop(&mut self, session: &Session, why: Stop) {
        match self {
            Instance::Here(s) => s.stopped = Some(why),
            Instance::Away(a) => a.finish_kept(session, Some(why)),
        }
    }

    /// Holds it to the machine's floor `held` from now on (its next visit, or its
    /// conclusion).
    pub(super) fn hold(&mut self, held: Held) {
        match self {
            Instance::Here(s) => s.held = held,
            Instance::Away(a) => a.progress.held = held,
        }
    }

    /// One round, with the machine's probes read just before it when it was measured.
    /// Only an interruption is returned: a skip or failure ends the instance, and its
    /// result says so.
    pub(super) fn visit(
        &mut self,
        session: &Session,
        round: u32,
        begin: u64,
        canary: f64,
        limit: f64,
    ) -> Result<Option<Probes>, BenchError> {
        match self {
            Instance::Here(slot) => {
                let mut flag = |s: &mut [Sample], e: Expect| match &session.kernel {
                    Ok(w) => w.borrow_mut().flag(s, e),
                    Err(_) => Ok(()),
                };
                let mut env = Env {
                    clock: session.clock.as_ref(),
                    settings: session.settings,
                    context: &session.context,
                    flag: Some(&mut flag),
                    explain: None,
                };
                match slot.visit(&mut env, round, begin, canary, limit) {
                    Ok(()) => Ok(slot.probes.take()),
                    Err(BenchError::Interrupted) => Err(BenchError::Interrupted),
                    Err(e) => {
                        slot.end(e);
                        Ok(None)
                    }
                }
            }
            Instance::Away(a) => a.visit(session, round, begin, canary, limit),
        }
    }

    /// The result: measured (concluded now if the run ended early), skipped or failed;
    /// None when an interrupted run never reached it. A worker's result comes with its
    /// kept samples apart, in a memory file, when the session has not taken them yet.
    pub(super) fn finish(
        self,
        h: &Harness<'_>,
        keep_samples: bool,
        interrupted: bool,
    ) -> Option<(BenchResult, Option<MemFile>)> {
        match self {
            Instance::Here(slot) => {
                slot.finish(h, keep_samples, interrupted).map(|r| (r, None))
            }
            Instance::Away(mut a) => {
                if a.remote.is_some() {
                    a.finish(interrupted, None);
                }
                let samples = a.samples.take();
                a.result.map(|r| (r, samples))
            }
        }
    }
}

impl Away<'_> {
    fn visit(
        &mut self,
        session: &Session,
        round: u32,
        begin: u64,
        canary: f64,
        limit: f64,
    ) -> Result<Option<Probes>, BenchError> {
        if let Err(e) = self.renew(session, begin) {
            self.fail(e);
            return Ok(None);
        }
        let remote = self.remote.as_mut().expect("started above");
        let scratch = |len: u64| session.context.scratch(len);
        let mut flag = |tid: u32, s: &mut [Sample], e: Expect| match &session.kernel {
            Ok(w) => w.borrow_mut().flag_thread(tid, s, e),
            Err(_) => Ok(()),
        };
        let mut services = Services {
            scratch: &scratch,
            flag: Some(&mut flag),
        };
        let t0 = std::time::Instant::now();
        let p = &mut self.progress;
        let visited = remote.visit(round, canary, limit, p.held, &mut services);
        p.spent_ns += t0.elapsed().as_nanos() as f64;
        p.rounds += 1;
        self.served += 1;
        match visited.map(|v| (v.open, v.ci, v.floor, v.probes)) {
            Ok((true, ci, floor, probes)) => {
                (p.ci, p.floor) = (ci, floor);
                Ok(probes)
            }
            Ok((false, _, _, probes)) => {
                // Done: its result now, and the worker gone.
                self.finish_kept(session, None);
                Ok(probes)
            }
            Err(BenchError::Interrupted) => Err(BenchError::Interrupted),
            Err(e) if !remote.alive() => {
                self.remote = None;
                self.fail(e);
                Ok(None)
            }
            Err(_) => {
                // Skipped or failed in the worker: its result says so.
                self.finish(false, None);
                Ok(None)
            }
        }
    }

    /// Starts its worker when it has none yet, or when the live one's term is over: a
    /// fresh worker then takes up what this one gathered. It starts while this one
    /// packs (no round is being measured meanwhile).
    fn renew(&mut self, session: &Session, begin: u64) -> Result<(), BenchError> {
        if self.term > 0 && self.served >= self.term && session.explain == 0 {
            if let Some(old) = self.remote.take() {
                let next = Remote::spawn(&self.program, false)?;
                self.carried = Some(old.hand()?);
                self.remote = Some(next);
            }
        }
        if self.remote.is_none() || self.carried.is_some() {
            let mut start = session.start_for(self.bench.name(), &self.params, begin);
            start.max_rounds = self.max_rounds;
            // The worker started at a hand-over, or a first one.
            let mut r = match self.remote.take() {
                Some(r) => r,
                None => Remote::spawn(&self.program, false)?,
            };
            r.begin(&self.program, start, self.carried.take().as_ref())?;
            self.remote = Some(r);
            self.served = 0;
        }
        Ok(())
    }

    /// Asks the worker for the result; a worker that cannot answer fails the instance.
    fn finish(&mut self, interrupted: bool, stopped: Option<Stop>) {
        self.open = false;
        if let Some(r) = self.remote.take() {
            match r.finish(interrupted, stopped, self.progress.held) {
                Ok((result, samples)) => {
                    self.result = result;
                    self.samples = samples;
                }
                Err(e) => self.fail(e),
            }
        }
    }

    /// [`Away::finish`], its result and samples then kept by the session.
    fn finish_kept(&mut self, session: &Session, stopped: Option<Stop>) {
        self.finish(false, stopped);
        if let Some(r) = self.result.as_mut() {
            session.keep(r, self.samples.take());
        }
    }

    /// Ends the instance as failed (or skipped) without a worker's result.
    fn fail(&mut self, e: BenchError) {
        self.open = false;
        let mut slot = Slot::new(self.bench, &self.params);
        slot.end(e);
        self.result = Some(slot.c.result);
    }
}

/// Whether `bench` is the catalogue's entry of its name (a worker finds it by name).
fn in_catalogue(bench: &dyn Bench) -> bool {
    crate::bench::find(bench.name()).is_some_and(|b| {
        std::ptr::addr_eq(b as *const dyn Bench, bench as *const dyn Bench)
    })
}
