//! `trace.*`: the trace facility's own cost, which the 1976 memo measured first and
//! used as the correction for every interval (its Fig. 2).

use super::facts::*;
use super::{Prepared, Simple};
use crate::error::BenchError;
use crate::harness::Body;
use syscost_trace::recorder;

/// The family's benchmarks.
pub const BENCHES: &[&dyn super::Bench] = &[&EVENT];

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
/// does: `record(id, arg)` into the thread's ring, with the writer thread draining
/// full chunks meanwhile.
///
/// A batch never outruns the writer: before each batch (untimed) the body waits until
/// the ring has room for the whole batch, so no event of a timed batch is lost and
/// every one takes the path a recorded event takes. When the writer competes for the
/// CPU with the measuring thread (two CPUs, a load), the wait grows; the cost timed
/// does not.
struct EventLoop {
    _trace: Recording,
}

/// The longest wait for the writer to free room before a batch.
const ROOM_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The most events one batch may record: all chunks of a ring but the one being
/// filled, which is what a waiting batch is sure to find free.
const MAX_BATCH: u64 = (recorder::DEFAULT_BUFFER / recorder::CHUNK_BYTES as u64 - 1)
    * (recorder::CHUNK_BYTES / syscost_trace::format::UserEvent::LEN) as u64;

impl Body for EventLoop {
    #[inline(never)]
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for i in 0..iters {
            syscost_trace::record(1, i);
        }
        Ok(())
    }

    fn reset(&mut self, iters: u64) -> Result<(), BenchError> {
        // An event lost to a full ring takes a cheaper path than one recorded, so a
        // batch waits here until the ring has room for all of it.
        let start = std::time::Instant::now();
        loop {
            let room = recorder::room().ok_or_else(|| {
                BenchError::Failed(
                    "trace.event: the thread has no ring in the trace".into(),
                )
            })?;
            if room >= iters {
                break;
            }
            if start.elapsed() > ROOM_WAIT {
                return Err(BenchError::Failed(format!(
                    "the trace writer freed no room for {iters} events in {} s (room {room})",
                    ROOM_WAIT.as_secs()
                )));
            }
            std::thread::sleep(recorder::POLL);
            if crate::os::interrupt::interrupted() {
                return Err(BenchError::Interrupted);
            }
        }
        // Waiting makes losses impossible; one would mean the wait is wrong.
        let s = recorder::stats().map_err(|e| BenchError::Failed(e.to_string()))?;
        if s.lost > 0 {
            return Err(BenchError::Failed(format!(
                "{} events were lost although each batch waited for room",
                s.lost
            )));
        }
        Ok(())
    }
}

/// `trace.event`.
pub const EVENT: Simple = Simple {
    name: "trace.event",
    about:
        "one time-stamped user event (CLOCK_MONOTONIC_RAW, CPU, id, argument) recorded \
            into the thread's ring by syscost-trace, the writer draining to /dev/null",
    origin: "perez1976 Fig. 2 (the event call, the trace's correction factor)",
    params: &[],
    facts: Facts {
        enters: Enters::Not("a store into a ring in memory"),
        serial: Some("it records the kernel's events for the whole machine"),
        ..USER
    },
    prepare: |_| {
        let trace = Recording::open()?;
        // The thread's first event makes its ring (a lock and an allocation): untimed.
        syscost_trace::record(1, 0);
        let plan = crate::harness::Plan {
            max_batch: Some(MAX_BATCH),
            ..Default::default()
        };
        Ok(Prepared::new(Box::new(EventLoop { _trace: trace }))
            .op("event")
            .plan(plan))
    },
};
