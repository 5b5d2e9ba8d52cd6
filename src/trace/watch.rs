//! The kernel's events while `syscost run --cull kernel` samples: recorded for the
//! whole session, joined with each round's batches as the round ends, and pruned as
//! the samples move on.

use super::cull::{KernelIndex, Query};
use super::format::{KernelEvent, Lost};
use super::kernel::{KernelRecorder, KernelRequest};
use crate::error::BenchError;
use crate::harness::causes::bits;
use crate::harness::{Expect, Sample};

/// The guard band around each kernel event, ns: entry and exit code that runs
/// outside the tracepoints.
pub const GUARD_NS: u64 = 1_000;

/// The kernel's events of a session.
pub struct Watch {
    recorder: KernelRecorder,
    events: Vec<KernelEvent>,
    lost: Vec<(u32, Lost)>,
    tid: u32,
}

impl Watch {
    /// Starts recording every CPU's events, or says in one line why they cannot be had.
    pub fn start() -> Result<Watch, String> {
        let recorder =
            KernelRecorder::start(&KernelRequest::all()).map_err(|e| e.to_string())?;
        Ok(Watch {
            recorder,
            events: Vec::new(),
            lost: Vec::new(),
            tid: crate::os::task::gettid() as u32,
        })
    }

    /// How the events are recorded, in one line.
    pub fn method(&self) -> String {
        match self.recorder.unavailable() {
            Some(missing) => format!("{}; {missing}", self.recorder.method()),
            None => self.recorder.method().to_string(),
        }
    }

    /// Marks each sample (of the calling thread, which started the watch) with what
    /// the kernel did during it that `expect` does not excuse.
    pub fn flag(
        &mut self,
        samples: &mut [Sample],
        expect: Expect,
    ) -> Result<(), BenchError> {
        self.flag_thread(self.tid, samples, expect)
    }

    /// [`Watch::flag`] for samples the thread `tid` took (a worker process's).
    pub fn flag_thread(
        &mut self,
        tid: u32,
        samples: &mut [Sample],
        expect: Expect,
    ) -> Result<(), BenchError> {
        let d = self.recorder.drain_all().map_err(|e| {
            BenchError::Failed(format!("reading the kernel's events: {e}"))
        })?;
        self.events
            .extend(d.events.into_iter().flat_map(|(_, e)| e));
        self.lost.extend(
            d.lost
                .into_iter()
                .flat_map(|(c, l)| l.into_iter().map(move |l| (c, l))),
        );
        let spans: Vec<_> = samples.iter().filter_map(|s| s.span).collect();
        let (Some(first), Some(last)) = (spans.first(), spans.last()) else {
            return Ok(());
        };
        let mut excused = 0;
        if expect.switches || expect.preemption {
            excused |= bits::SWITCH | bits::MIGRATE;
        }
        if expect.faults {
            excused |= bits::FAULT;
        }
        let from = self
            .events
            .first()
            .map_or(first.start_ns, |e| e.ts.min(first.start_ns));
        let now = crate::os::sys::raw_ns();
        let index = KernelIndex::new(&self.events, &self.lost, GUARD_NS, from, now);
        for s in samples.iter_mut() {
            if let Some(span) = s.span {
                s.kernel = index.causes(&Query {
                    t0: span.start_ns,
                    t1: span.end_ns,
                    tid,
                    c0: span.cpu0,
                    c1: span.cpu1,
                    // The partner of a blocking operation runs on another CPU, and an
                    // interrupt there delays the operation too.
                    any_cpu: expect.switches,
                    expect: excused,
                });
            }
        }
        // Later samples begin after these: older events are no longer needed.
        let keep_from = last.end_ns.saturating_sub(1_000_000);
        self.events.retain(|e| e.ts >= keep_from);
        self.lost.retain(|(_, l)| l.to >= keep_from);
        Ok(())
    }
}
