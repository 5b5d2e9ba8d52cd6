//! `signal.stop` and `signal.cont`: SIGSTOP and SIGCONT to our own forked child, each
//! with the wait until the transition has happened, timed one by one.
//!
//! Each operation needs the opposite state first, so `reset` makes the opposite
//! transition untimed (a batch of 1). The child sleeps in sigsuspend with a SIGCONT
//! handler that bumps a shared word once it runs again: a stop is complete when
//! waitid(WSTOPPED) reports it (the child itself reports, as it stops); a continue is
//! reported by waitid(WCONTINUED) as soon as SIGCONT is sent, so the operation also
//! waits for the child's word, the proof that it is running again. Both waits use
//! WNOWAIT with WEXITED, so a child that dies fails the benchmark instead of hanging
//! it and stays for its owner to reap; an unconsumed report is superseded by the next
//! transition. The child is never left stopped: SIGCONT, then SIGKILL and reap.

use crate::bench::ctx::place_pinned;
use crate::bench::ctx::placement;
use crate::bench::facts::*;
use crate::bench::{OrOs, ParamSpec, Params, Prepared, Simple};
use crate::error::BenchError;
use crate::harness::{Body, Plan};
use crate::os::affinity::Pin;
use crate::os::interrupt;
use crate::os::signal;
use crate::os::task::{self, Child, Handler, SharedMem, SigSet};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::MutexGuard;
use std::time::{Duration, Instant};

// Shared words: the child's count of SIGCONT handler runs, and its readiness.
const RESUMED: usize = 0;
const READY: usize = 1;

const WAIT: libc::c_int = libc::WEXITED | libc::WNOWAIT;

/// The child: a SIGCONT handler, then sleep forever, publishing each resumption.
/// SIGCONT stays blocked except inside sigsuspend, so a continue that lands while the
/// child is awake (publishing) runs the handler at the next sleep rather than being
/// missed; a blocked SIGCONT still continues a stopped process.
fn sleeper(mem: &SharedMem) -> i32 {
    let Ok(_handler) = Handler::counting(libc::SIGCONT) else {
        return 2;
    };
    let cont = SigSet::empty().with(libc::SIGCONT);
    task::block_forever(&cont);
    let awake = SigSet::current().without(libc::SIGCONT);
    let (resumed, ready) = (mem.word(RESUMED), mem.word(READY));
    ready.store(1, Ordering::Release);
    task::futex_wake(ready, 1);
    loop {
        let n = task::delivered(libc::SIGCONT) as u32;
        if n != resumed.load(Ordering::Relaxed) {
            resumed.store(n, Ordering::Release);
            task::futex_wake(resumed, 1);
        }
        task::sigsuspend(&awake);
    }
}

struct StopCont {
    /// Time the stop (else the continue).
    stop: bool,
    child: Child,
    pid: libc::pid_t,
    mem: SharedMem,
    stopped: bool,
    /// The child's RESUMED word before the last SIGCONT.
    resumed_before: u32,
    _lock: MutexGuard<'static, ()>,
    /// The measuring thread's pin, undone on drop (after the child is gone).
    _pin: Option<Pin>,
}

impl StopCont {
    #[inline(always)]
    fn do_stop(&mut self) -> Result<(), BenchError> {
        self.signal(libc::SIGSTOP)?;
        self.expect(libc::WSTOPPED, libc::CLD_STOPPED)?;
        self.stopped = true;
        Ok(())
    }

    #[inline(always)]
    fn do_cont(&mut self) -> Result<(), BenchError> {
        self.resumed_before = self.mem.word(RESUMED).load(Ordering::Acquire);
        self.signal(libc::SIGCONT)?;
        self.expect(libc::WCONTINUED, libc::CLD_CONTINUED)?;
        self.stopped = false;
        self.running_again()
    }

    #[inline(always)]
    fn signal(&self, sig: libc::c_int) -> Result<(), BenchError> {
        self.child
            .signal(sig)
            .map_err(|e| BenchError::os("kill", e))
    }

    #[inline(always)]
    fn expect(&self, options: libc::c_int, code: libc::c_int) -> Result<(), BenchError> {
        let got = signal::wait_state(self.pid, options | WAIT);
        if got != code {
            return Err(bad_report(got));
        }
        Ok(())
    }

    /// Waits until the child's SIGCONT handler has run after the last continue.
    #[inline(always)]
    fn running_again(&mut self) -> Result<(), BenchError> {
        let word: &AtomicU32 = self.mem.word(RESUMED);
        let before = self.resumed_before;
        let mut deadline = None;
        while word.load(Ordering::Acquire) == before {
            if task::futex_wait(word, before, Some(&TICK)) != 0
                && task::errno() == libc::ETIMEDOUT
            {
                let d = *deadline.get_or_insert_with(|| Instant::now() + LIMIT);
                check_wait(d)?;
            }
        }
        Ok(())
    }
}

const TICK: libc::timespec = libc::timespec {
    tv_sec: 0,
    tv_nsec: 10_000_000,
};
const LIMIT: Duration = Duration::from_secs(2);

#[cold]
fn check_wait(deadline: Instant) -> Result<(), BenchError> {
    if interrupt::interrupted() {
        return Err(BenchError::Interrupted);
    }
    if Instant::now() > deadline {
        return Err(BenchError::Failed(
            "the child did not run again within 2 s of SIGCONT".into(),
        ));
    }
    Ok(())
}

#[cold]
fn bad_report(code: libc::c_int) -> BenchError {
    if code == -1 {
        return BenchError::last_os("waitid");
    }
    BenchError::Failed(format!("waitid reported si_code {code} for the child"))
}

impl Body for StopCont {
    fn reset(&mut self, _iters: u64) -> Result<(), BenchError> {
        match (self.stop, self.stopped) {
            (true, true) => self.do_cont(),
            (false, false) => self.do_stop(),
            _ => Ok(()),
        }
    }

    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        if iters != 1 {
            return Err(BenchError::Failed(
                "each stop or continue needs the opposite state first: one per batch"
                    .into(),
            ));
        }
        if self.stop {
            self.do_stop()
        } else {
            self.do_cont()
        }
    }
}

impl Drop for StopCont {
    fn drop(&mut self) {
        // Never left stopped; the Child then kills and reaps it.
        let _ = self.child.signal(libc::SIGCONT);
    }
}

/// Forks the sleeping child on the CPUs `placement` gives it (pinning the measuring
/// thread too, unless free) and waits until its handler is in place.
fn start(stop: bool, placement: &str) -> Result<StopCont, BenchError> {
    let (pin, child_cpus) = place_pinned(placement)?;
    let lock = task::signals_lock();
    let mem = SharedMem::new(64).or_os("mmap (shared)")?;
    let mem_ref = &mem;
    let cpus = &child_cpus[..];
    // SAFETY: the sleeper runs `sleeper`: futex waits and atomics in shared memory, no
    // allocation or lock.
    #[allow(unsafe_code)]
    let child =
        unsafe { task::fork_partner(&[], cpus, || sleeper(mem_ref)) }.or_os("fork")?;
    let deadline = Instant::now() + LIMIT;
    let ready = mem.word(READY);
    let mut child = child;
    while ready.load(Ordering::Acquire) == 0 {
        task::futex_wait(ready, 0, Some(&TICK));
        if let Ok(Some(st)) = child.try_wait() {
            return Err(BenchError::Failed(format!(
                "the child {}",
                task::describe_status(st)
            )));
        }
        check_wait(deadline)?;
    }
    Ok(StopCont {
        stop,
        pid: child.pid(),
        child,
        mem,
        stopped: false,
        resumed_before: 0,
        _lock: lock,
        _pin: pin,
    })
}

fn prepare(p: &Params, stop: bool) -> Result<Prepared, BenchError> {
    let body = start(stop, p.get("placement"))?;
    let plan = Plan {
        fixed_batch: Some(1),
        ..crate::bench::blocking(p.get("placement") != "cross-cpu")
    };
    let op = if stop {
        "SIGSTOP + waitid until stopped"
    } else {
        "SIGCONT + waitid(WCONTINUED) + the child's handler has run"
    };
    Ok(Prepared::new(Box::new(body)).op(op).plan(plan))
}

static PARAMS: [ParamSpec; 1] = [placement(
    "same-cpu",
    "the child on this CPU (one CPU, as on the VAX), on another CPU (the signal and the report cross CPUs), or placed by the scheduler",
)];

/// `signal.stop`.
pub const STOP: Simple = Simple {
    name: "signal.stop",
    facts: Facts {
        serial: Some("it already uses two CPUs (a partner process)"),
        switches: true,
        ..SYSCALL.on(Libc, "kill, then waitid")
    },
    about: "SIGSTOP to our running child (asleep in sigsuspend) and waitid(WSTOPPED) until it has stopped; one by one, the child continued between samples",
    origin: "004 Table I: $SUSPND suspend other process (234 µs)",
    params: &PARAMS,
    prepare: |p| prepare(p, true),
};

/// `signal.cont`.
pub const CONT: Simple = Simple {
    name: "signal.cont",
    facts: Facts {
        serial: Some("it already uses two CPUs (a partner process)"),
        switches: true,
        ..SYSCALL.on(
            Libc,
            "kill, then waitid; FUTEX_WAIT (syscall) until the child's handler has run",
        )
    },
    about: "SIGCONT to our stopped child, waitid(WCONTINUED), and the wait until its SIGCONT handler has run; one by one, the child stopped between samples",
    origin: "004 Table I: $RESUME resume other process (123 µs)",
    params: &PARAMS,
    prepare: |p| prepare(p, false),
};

#[cfg(test)]
mod tests {
    use super::super::tests::smoke;
    use super::*;
    use crate::bench::testing::median;
    use crate::bench::Bench;

    #[test]
    fn stop_and_cont_run_below_ten_milliseconds_and_leave_no_child() {
        for b in [&STOP, &CONT] {
            for placement in ["same-cpu", "cross-cpu", "free"] {
                // cross-cpu is skipped (None) where this process may use one CPU.
                let Some((m, _)) = smoke(b, &[("placement", placement)]) else {
                    assert_eq!(placement, "cross-cpu", "{} skipped", b.name());
                    continue;
                };
                let med = median(&m);
                assert!(med > 0.0 && med < 1e7, "{} {placement}: {med}", b.name());
            }
        }
    }

    #[test]
    fn a_dropped_body_leaves_its_child_neither_stopped_nor_unreaped() {
        let mut b = start(false, "same-cpu").unwrap();
        b.reset(1).unwrap();
        assert!(b.stopped, "reset of signal.cont stops the child");
        let pid = b.pid;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let state = stat.rsplit_once(')').unwrap().1.split_whitespace().next();
        assert_eq!(state, Some("T"), "the child is really stopped");
        drop(b);
        // Our own child, reaped: waitpid finds no such child.
        assert_eq!(signal::wait_state(pid, libc::WEXITED | libc::WNOHANG), -1);
        assert_eq!(task::errno(), libc::ECHILD);
    }
}
