//! One instance of a run, seen from the session: measured here (a [`Slot`] of this
//! process, for what the catalogue cannot name) or in a worker process (a
//! [`Remote`](super::worker::Remote), started at its first round and finished, so gone,
//! as soon as it needs no more rounds).

use super::worker::{Remote, Services, Workers};
use super::*;

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
    /// The worker, from its first round until it is finished.
    remote: Option<Remote>,
    /// Wants more rounds.
    open: bool,
    /// The result, once finished.
    result: Option<BenchResult>,
}

impl<'b> Instance<'b> {
    pub(super) fn new(
        bench: &'b dyn Bench,
        params: &Params,
        workers: &Workers,
    ) -> Instance<'b> {
        match workers {
            Workers::Exec(program) if in_catalogue(bench) => {
                Instance::Away(Box::new(Away {
                    bench,
                    params: params.clone(),
                    program: program.clone(),
                    remote: None,
                    open: true,
                    result: None,
                }))
            }
            _ => Instance::Here(Box::new(Slot::new(bench, params))),
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

    /// One round. Only an interruption is returned: a skip or failure ends the
    /// instance, and its result says so.
    pub(super) fn visit(
        &mut self,
        session: &Session,
        round: u32,
        begin: u64,
        canary: f64,
    ) -> Result<(), BenchError> {
        match self {
            Instance::Here(slot) => {
                let mut flag = |s: &mut [Sample], e: Expect| session.flag_here(s, e);
                let mut env = Env {
                    clock: session.clock.as_ref(),
                    settings: session.settings,
                    context: &session.context,
                    flag: Some(&mut flag),
                };
                match slot.visit(&mut env, round, begin, canary) {
                    Ok(()) => Ok(()),
                    Err(BenchError::Interrupted) => Err(BenchError::Interrupted),
                    Err(e) => {
                        slot.end(e);
                        Ok(())
                    }
                }
            }
            Instance::Away(a) => a.visit(session, round, begin, canary),
        }
    }

    /// The result: measured (concluded now if the run ended early), skipped or failed;
    /// None when an interrupted run never reached it.
    pub(super) fn finish(
        self,
        h: &Harness<'_>,
        keep_samples: bool,
        interrupted: bool,
    ) -> Option<BenchResult> {
        match self {
            Instance::Here(slot) => slot.finish(h, keep_samples, interrupted),
            Instance::Away(mut a) => {
                if a.remote.is_some() {
                    a.finish(interrupted);
                }
                a.result
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
    ) -> Result<(), BenchError> {
        if self.remote.is_none() {
            let start = session.start_for(self.bench, &self.params, begin);
            match Remote::start(&self.program, &start) {
                Ok(r) => self.remote = Some(r),
                Err(e) => {
                    self.fail(e);
                    return Ok(());
                }
            }
        }
        let remote = self.remote.as_mut().expect("started above");
        let scratch = |len: u64| session.context.scratch(len);
        let mut flag =
            |tid: u32, s: &mut [Sample], e: Expect| session.flag_there(tid, s, e);
        let mut services = Services {
            scratch: &scratch,
            flag: Some(&mut flag),
        };
        match remote.visit(round, canary, &mut services) {
            Ok(true) => Ok(()),
            Ok(false) => {
                // Done: its result now, and the worker gone.
                self.finish(false);
                if let Some(r) = self.result.as_mut() {
                    session.keep(r);
                }
                Ok(())
            }
            Err(BenchError::Interrupted) => Err(BenchError::Interrupted),
            Err(e) if !remote.alive() => {
                self.remote = None;
                self.fail(e);
                Ok(())
            }
            Err(_) => {
                // Skipped or failed in the worker: its result says so.
                self.finish(false);
                Ok(())
            }
        }
    }

    /// Asks the worker for the result; a worker that cannot answer fails the instance.
    fn finish(&mut self, interrupted: bool) {
        self.open = false;
        if let Some(r) = self.remote.take() {
            match r.finish(interrupted) {
                Ok(result) => self.result = result,
                Err(e) => self.fail(e),
            }
        }
    }

    /// Ends the instance as failed (or skipped) without a worker's result.
    fn fail(&mut self, e: BenchError) {
        self.open = false;
        let mut slot = Slot::new(self.bench, &self.params);
        slot.end(e);
        self.result = Some(slot.result);
    }
}

/// Whether `bench` is the catalogue's entry of its name (a worker finds it by name).
fn in_catalogue(bench: &dyn Bench) -> bool {
    crate::bench::find(bench.name()).is_some_and(|b| {
        std::ptr::addr_eq(b as *const dyn Bench, bench as *const dyn Bench)
    })
}
