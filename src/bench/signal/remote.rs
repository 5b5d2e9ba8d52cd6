//! Real-time signals queued with a value to our own forked child: the sender's cost
//! (`signal.queue`), and the round trip with the child queueing an acknowledgement back
//! to the measuring thread (`signal.queue_rtt`).
//!
//! Both sides block their signal and take it with `rt_sigtimedwait`, so no handler and
//! no default action is ever involved; the measuring thread drains any late
//! acknowledgement before its mask is put back.

use super::{check_errno, own_ids};
use crate::bench::ctx::{place_pinned, placement};
use crate::bench::facts::Figure::SignalRtt;
use crate::bench::facts::*;
use crate::bench::Fact;
use crate::bench::{check, OrOs, ParamSpec, Params, Prepared, Simple};
use crate::error::BenchError;
use crate::harness::Body;
use crate::os::affinity::{self, Pin};
use crate::os::interrupt;
use crate::os::signal::{self, QueueInfo, SavedMask};
use crate::os::task::{self, Child, SharedMem, SigSet};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The value that tells the child to exit.
const STOP: usize = usize::MAX;
// Shared words: signals the child took, values out of order.
const RECEIVED: usize = 0;
const DISORDER: usize = 1;

const SECOND: libc::timespec = libc::timespec {
    tv_sec: 1,
    tv_nsec: 0,
};
const NO_WAIT: libc::timespec = libc::timespec {
    tv_sec: 0,
    tv_nsec: 0,
};

/// Where the child runs relative to the measuring thread.
static QUEUE_PARAMS: [ParamSpec; 1] = [placement(
    "cross-cpu",
    "the child on this CPU (it may preempt the sender), on another CPU, or placed by the scheduler",
)];

static RTT_PARAMS: [ParamSpec; 1] = [placement(
    "same-cpu",
    "the child on this CPU, on another CPU, or placed by the scheduler",
)];

/// The child's side: takes `req` signals (blocked, inherited) until STOP, counting them
/// and checking their order; with `ack`, queues each value back to the parent's thread.
fn child(
    req: libc::c_int,
    ack: Option<(libc::c_int, libc::pid_t, libc::pid_t)>,
    mem: &SharedMem,
) -> i32 {
    let set = SigSet::empty().with(req);
    let mut info = QueueInfo::new(0);
    let mut reply = ack.map(|(sig, _, _)| QueueInfo::new(sig));
    let (received, disorder) = (mem.word(RECEIVED), mem.word(DISORDER));
    loop {
        let r = signal::take_pending(&set, &mut info, &SECOND);
        if r != req as libc::c_long {
            match task::errno() {
                libc::EAGAIN | libc::EINTR => continue,
                _ => return 2,
            }
        }
        if info.value() == STOP {
            return 0;
        }
        let n = received.load(Ordering::Relaxed).wrapping_add(1);
        if info.value() as u32 != n {
            disorder.fetch_add(1, Ordering::Relaxed);
        }
        if let (Some(reply), Some((_, pid, tid))) = (reply.as_mut(), ack) {
            reply.set_value(info.value());
            if task::sigqueue(pid, Some(tid), reply) != 0 {
                return 3;
            }
        }
        received.store(n, Ordering::Release);
        task::futex_wake(received, 1);
    }
}

/// What the body found when it ended, for the after step.
type Report = Arc<Mutex<Option<Result<u64, String>>>>;

/// The parent's side of either benchmark.
struct Queue {
    child: Option<Child>,
    pid: libc::pid_t,
    info: QueueInfo,
    sent: u64,
    mem: SharedMem,
    /// RLIMIT_SIGPENDING, if any: a batch must stay well below it.
    limit: Option<u64>,
    /// The round trip's acknowledgement signal, blocked in this thread.
    ack: Option<(SigSet, libc::c_int, QueueInfo)>,
    report: Report,
    // Put back in this order once the child is gone: the mask, the CPUs, the lock.
    _mask: Option<SavedMask>,
    _pin: Option<Pin>,
    _lock: MutexGuard<'static, ()>,
}

impl Queue {
    /// Waits until the child has taken every signal sent (pacing, untimed).
    fn drained(&mut self, within: Duration) -> Result<(), BenchError> {
        let deadline = Instant::now() + within;
        let wait = libc::timespec {
            tv_sec: 0,
            tv_nsec: 1_000_000,
        };
        loop {
            let now = self.mem.word(RECEIVED).load(Ordering::Acquire);
            if now == self.sent as u32 {
                return Ok(());
            }
            if interrupt::interrupted() {
                return Err(BenchError::Interrupted);
            }
            alive(&mut self.child)?;
            if Instant::now() > deadline {
                return Err(BenchError::Failed(format!(
                    "the child took {now} of {} signals",
                    self.sent as u32
                )));
            }
            task::futex_wait(self.mem.word(RECEIVED), now, Some(&wait));
        }
    }

    /// Waits for the acknowledgement of `seq`.
    #[inline(always)]
    fn await_ack(&mut self, seq: u64) -> Result<(), BenchError> {
        let Some((set, sig, got)) = self.ack.as_mut() else {
            return Ok(());
        };
        loop {
            let r = signal::take_pending(set, got, &SECOND);
            if r == *sig as libc::c_long && got.value() as u64 == seq {
                return Ok(());
            }
            if r > 0 {
                return Err(wrong_ack(r, got.value(), seq));
            }
            waited(&mut self.child)?;
        }
    }

    /// Stops the child and reaps it; what it received.
    fn finish(&mut self) -> Result<u64, String> {
        let drained = self.drained(Duration::from_secs(2));
        let got = self.mem.word(RECEIVED).load(Ordering::Acquire);
        let disorder = self.mem.word(DISORDER).load(Ordering::Acquire);
        let Some(mut c) = self.child.take() else {
            return Err("no child".into());
        };
        self.info.set_value(STOP);
        task::sigqueue(self.pid, None, &self.info);
        let reaped = c.reap_by(Instant::now() + Duration::from_secs(2));
        // Late acknowledgements are taken before the mask comes back.
        if let Some((set, _, got)) = self.ack.as_mut() {
            while signal::take_pending(set, got, &NO_WAIT) > 0 {}
        }
        drained.map_err(|e| e.to_string())?;
        match reaped {
            Ok((_, true)) => return Err("the child did not stop and was killed".into()),
            Ok((st, false)) if !task::exited_ok(st) => {
                return Err(format!("the child {}", task::describe_status(st)))
            }
            Ok(_) => {}
            Err(e) => return Err(format!("waitpid: {e}")),
        }
        if disorder != 0 {
            return Err(format!("{disorder} values arrived out of order"));
        }
        Ok(got as u64)
    }
}

/// Fails if the child has ended.
#[cold]
fn alive(child: &mut Option<Child>) -> Result<(), BenchError> {
    if let Some(c) = child.as_mut() {
        if let Ok(Some(st)) = c.try_wait() {
            return Err(BenchError::Failed(format!(
                "the child {}",
                task::describe_status(st)
            )));
        }
    }
    Ok(())
}

/// After a wait that took nothing: an error unless it timed out or a handler
/// interrupted it, the run was not interrupted and the child lives.
#[cold]
fn waited(child: &mut Option<Child>) -> Result<(), BenchError> {
    let e = task::errno();
    if e != libc::EAGAIN && e != libc::EINTR {
        return Err(BenchError::os(
            "sigtimedwait",
            std::io::Error::from_raw_os_error(e),
        ));
    }
    if interrupt::interrupted() {
        return Err(BenchError::Interrupted);
    }
    alive(child)
}

#[cold]
fn wrong_ack(sig: libc::c_long, value: usize, seq: u64) -> BenchError {
    BenchError::Failed(format!(
        "signal {sig} with value {value} while waiting for {seq}"
    ))
}

impl Body for Queue {
    fn reset(&mut self, iters: u64) -> Result<(), BenchError> {
        if let Some(limit) = self.limit {
            if iters > limit / 4 {
                return Err(BenchError::Failed(format!(
                    "a batch of {iters} could overflow RLIMIT_SIGPENDING ({limit})"
                )));
            }
        }
        self.drained(Duration::from_secs(2))
    }

    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for _ in 0..iters {
            self.sent += 1;
            self.info.set_value(self.sent as u32 as usize);
            check(
                task::sigqueue(self.pid, None, &self.info),
                "rt_sigqueueinfo",
            )?;
            self.await_ack(self.sent as u32 as u64)?;
        }
        Ok(())
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        let r = self.finish();
        if let Ok(mut slot) = self.report.lock() {
            *slot = Some(r);
        }
    }
}

fn prepare(p: &Params, rtt: bool) -> Result<Prepared, BenchError> {
    let (pin, child_cpus) = place_pinned(p.get("placement"))?;
    let lock = task::signals_lock();
    let (req, ack_sig) = (signal::rt_signal(1), signal::rt_signal(2));
    let mem = SharedMem::new(64).or_os("mmap (shared)")?;
    let limit = signal::sigpending_limit().or_os("getrlimit")?;
    // Block both before the fork: the child inherits the block on its signal, this
    // thread keeps the acknowledgement blocked for the round trip.
    let saved = SavedMask::save();
    let both = SigSet::empty().with(req).with(ack_sig);
    check_errno(signal::change_mask(libc::SIG_BLOCK, &both), "sigprocmask")?;
    let (me, tid) = own_ids();
    let ack = rtt.then_some((ack_sig, me, tid));
    let mem_ref = &mem;
    let cpus = &child_cpus[..];
    // SAFETY: the receiver sets its CPUs and runs `child`: sigtimedwait, sigqueue,
    // futex and atomics in shared memory, no allocation or lock.
    #[allow(unsafe_code)]
    let c = unsafe {
        task::fork(|| {
            if affinity::set_cpus(cpus).is_err() {
                return 4;
            }
            child(req, ack, mem_ref)
        })
    }
    .or_os("fork")?;
    let mask = if rtt {
        Some(saved)
    } else {
        // The sender never receives its own signal: its mask comes back now.
        drop(saved);
        None
    };
    let report: Report = Arc::new(Mutex::new(None));
    let body = Queue {
        pid: c.pid(),
        child: Some(c),
        info: QueueInfo::new(req),
        sent: 0,
        mem,
        limit,
        ack: rtt.then(|| (SigSet::empty().with(ack_sig), ack_sig, QueueInfo::new(0))),
        report: report.clone(),
        _mask: mask,
        _pin: pin,
        _lock: lock,
    };
    let plan = crate::bench::expecting(rtt, false, p.get("placement") != "cross-cpu");
    let op = if rtt {
        "round trip (queue, child takes and queues back, take)"
    } else {
        "rt_sigqueueinfo call"
    };
    Ok(Prepared::new(Box::new(body))
        .op(op)
        .plan(plan)
        .after(Box::new(move |_, _| {
            let r = report
                .lock()
                .map_err(|_| BenchError::Failed("report".into()))?
                .take();
            match r {
                Some(Ok(n)) => Ok(vec![Fact::new(
                    "child_received",
                    n as f64,
                    "count",
                    "signals the child took, in order, all of those sent (mod 2^32)",
                )]),
                Some(Err(e)) => Err(BenchError::Failed(e)),
                None => Err(BenchError::Failed("the body did not report".into())),
            }
        })))
}

/// `signal.queue`.
pub const QUEUE: Simple = Simple {
    name: "signal.queue",
    facts: Facts {
        serial: Some("it already uses two CPUs (a partner process)"),
        switches: true,
        ..SYSCALL.on(Generic, "rt_sigqueueinfo")
    },
    about: "rt_sigqueueinfo (sigqueue without glibc's getpid/getuid) of SIGRTMIN+1 with a value to our child, which takes them with sigtimedwait: the sender's cost",
    origin: "004 Table I: USER_DCLINA queue network AST for another process (371 µs)",
    params: &QUEUE_PARAMS,
    prepare: |p| prepare(p, false),
};

/// `signal.queue_rtt`.
pub const QUEUE_RTT: Simple = Simple {
    name: "signal.queue_rtt",
    facts: Facts {
        quotes: &[quote(SignalRtt, 1, "placement=same-cpu", "sigqueue echo, same CPU")],
        serial: Some("it already uses two CPUs (a partner process)"),
        switches: true,
        ..SYSCALL.on(Generic, "rt_sigqueueinfo, then rt_sigtimedwait")
    },
    about: "SIGRTMIN+1 queued to our child, which takes it with sigtimedwait and queues SIGRTMIN+2 with the same value back to this thread, taken with sigtimedwait: the round trip",
    origin: "004 Table I: USER_DCLNPA queue and deliver network process AST (982 µs)",
    params: &RTT_PARAMS,
    prepare: |p| prepare(p, true),
};

#[cfg(test)]
mod tests {
    use super::super::tests::smoke;
    use super::*;
    use crate::bench::testing::{fact, median};
    use crate::bench::Bench;

    #[test]
    fn queue_and_round_trip_run_in_every_placement_and_the_child_gets_all() {
        for b in [&QUEUE, &QUEUE_RTT] {
            for placement in ["same-cpu", "cross-cpu", "free"] {
                let Some((m, facts)) = smoke(b, &[("placement", placement)]) else {
                    assert_eq!(placement, "cross-cpu", "{} skipped", b.name());
                    continue;
                };
                let med = median(&m);
                assert!(med > 0.0 && med < 1e6, "{} {placement}: {med}", b.name());
                let got = fact(&facts, "child_received");
                assert!(got >= 1.0, "{} {placement}: {got}", b.name());
            }
        }
    }

    #[test]
    fn a_dead_child_fails_the_round_trip() {
        let p = Params(vec![("placement", "free".to_string())]);
        let mut prep = prepare(&p, true).unwrap();
        prep.body.run(3).unwrap();
        // Kill our own child behind the body's back: the next trip must fail, not hang.
        let kids = std::fs::read_to_string("/proc/thread-self/children").unwrap();
        let pid: libc::pid_t = kids.split_whitespace().last().unwrap().parse().unwrap();
        assert!(pid > 0);
        assert_eq!(crate::os::sys::kill(pid, libc::SIGKILL), 0);
        let e = prep.body.run(1).unwrap_err();
        assert!(e.to_string().contains("killed by signal 9"), "{e}");
    }
}
