//! `trace.*`: the trace facility's own cost, which the 1976 memo measured first and
//! used as the correction for every interval (its Fig. 2).

use super::{Bench, Params, Prepared};
use crate::error::BenchError;
use crate::harness::Body;
use syscost_trace::recorder;

/// The family's benchmarks.
pub const BENCHES: &[&dyn super::Bench] = &[&Event];

/// `trace.event`.
pub struct Event;

/// An open trace whose events go to /dev/null, closed when dropped.
struct Recording {
    closed: bool,
}

impl Recording {
    fn open() -> Result<Recording, BenchError> {
        match recorder::open(&recorder::Config::new("/dev/null")) {
            Ok(()) => Ok(Recording { closed: false }),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(BenchError::Skip(
                format!("this process is already tracing ({e}); trace.event needs its own trace"),
            )),
            Err(e) => Err(BenchError::Failed(format!("opening a trace to /dev/null: {e}"))),
        }
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if !self.closed {
            let _ = recorder::close();
        }
    }
}

/// Records one event per operation, as a program linked against `syscost-trace`
/// does: `record(id, arg)` with the writer thread draining full chunks meanwhile.
struct EventLoop {
    _trace: Recording,
}

impl Body for EventLoop {
    #[inline(never)]
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for i in 0..iters {
            syscost_trace::record(1, i);
        }
        Ok(())
    }

    fn reset(&mut self, _: u64) -> Result<(), BenchError> {
        // An event lost to a full ring takes a cheaper path than one recorded: a batch
        // with losses would understate the cost, so the benchmark fails instead.
        let s = recorder::stats().map_err(|e| BenchError::Failed(e.to_string()))?;
        if s.lost > 0 {
            return Err(BenchError::Failed(format!(
                "the trace writer fell behind and {} events were lost (is the other CPU busy?)",
                s.lost
            )));
        }
        Ok(())
    }
}

impl Bench for Event {
    fn name(&self) -> &'static str {
        "trace.event"
    }
    fn about(&self) -> &'static str {
        "one time-stamped user event (CLOCK_MONOTONIC_RAW, CPU, id, argument) recorded \
         into the thread's ring by syscost-trace, the writer draining to /dev/null"
    }
    fn origin(&self) -> &'static str {
        "perez1976 Fig. 2 (the event call, the trace's correction factor)"
    }
    fn prepare(&self, _: &Params, _: &super::RunContext) -> Result<Prepared, BenchError> {
        let trace = Recording::open()?;
        Ok(Prepared::new(Box::new(EventLoop { _trace: trace })).op("event"))
    }
}
