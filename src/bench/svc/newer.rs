//! Newer kernel services and lmbench's lat_usleep: io_uring's NOP (the submission and
//! completion path alone), the seccomp user-notification round trip (newer perf's
//! `sched seccomp-notify`), and a short sleep by each of lat_usleep's methods.
//!
//! The seccomp filter (with no_new_privs, which it needs) goes on a thread of the body's
//! own that makes the filtered call in a loop, never on the measuring thread: the
//! measuring thread is the supervisor, whose receive-and-answer loop is what perf
//! times. The filter sends only an unallocated system call number, [`NOTIFY_NR`], to
//! the listener; the thread, its filter with it, is stopped and joined with the body.
//! The itimer sleep restores the previous ITIMER_REAL and SIGALRM disposition.

use crate::bench::facts::*;
use crate::bench::{Kind, OrOs, ParamSpec, Params, Prepared, Simple};
use crate::error::BenchError;
use crate::harness::{Body, Plan};
use crate::os::peers::{self, NotifyListener, SleepHow};
use crate::os::svc;
use crate::os::task::{self, Blocked, Handler, SigSet};
use crate::os::uring::{Ring, SetupError};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, MutexGuard};
use std::thread::JoinHandle;

/// Blocks: its voluntary switches are part of the operation.
const BLOCKS: Plan = crate::bench::blocking(true);

/// `svc.uring.nop`.
pub const URING_NOP: Simple = Simple {
    name: "svc.uring.nop",
    facts: NAMED.on(Generic, "io_uring_enter (the C library has no wrapper)"),
    about: "an IORING_OP_NOP through io_uring (raw syscalls): fill the entry, io_uring_enter(1, 0), take the completion from the ring: the submission path with no operation behind it",
    origin: "",
    params: &[],
    prepare: |_| {
        let mut ring = match Ring::new(8, Box::new([0u8])) {
            Ok(r) => r,
            Err(SetupError::Unavailable(why)) => return Err(BenchError::Skip(why)),
            Err(SetupError::Failed(e)) => return Err(BenchError::os("io_uring_setup", e)),
        };
        Ok(Prepared::new(crate::bench::body(move || {
            if !ring.queue_nop(1) {
                return Err(BenchError::Failed("io_uring: submission queue full".into()));
            }
            let r = ring.enter(1, 0, 0);
            if r != 1 {
                crate::bench::check(r, "io_uring_enter")?;
                return Err(BenchError::Failed(format!("io_uring_enter submitted {r}")));
            }
            loop {
                if let Some((_, res)) = ring.reap() {
                    if res != 0 {
                        return Err(BenchError::Failed(format!("IORING_OP_NOP gave {res}")));
                    }
                    return Ok(());
                }
                crate::bench::check(
                    ring.enter(0, 1, crate::os::uring::IORING_ENTER_GETEVENTS),
                    "io_uring_enter",
                )?;
            }
        }))
        .op("NOP submitted and reaped"))
    },
};

/// The system call number the seccomp filter sends to its listener: one no kernel
/// implements on x86-64 (below `syscall.args`'s 1000).
pub const NOTIFY_NR: u32 = 999;

/// `svc.seccomp.notify`.
pub const SECCOMP_NOTIFY: Simple = Simple {
    name: "svc.seccomp.notify",
    facts: NAMED.on(
        Libc,
        "ioctl (SECCOMP_IOCTL_NOTIF_RECV, _SEND); the notified thread's call, an unallocated number, by syscall()",
    ),
    about: "a system call a seccomp filter hands to a user-space supervisor (SECCOMP_RET_USER_NOTIF), which receives it and answers 0 (SECCOMP_IOCTL_NOTIF_RECV, _SEND): the supervisor's loop, as perf times it, one round trip per call (newer perf bench sched seccomp-notify)",
    origin: "perf bench sched seccomp-notify",
    params: &[],
    prepare: prepare_notify,
};

/// The measuring thread is the supervisor; a thread of its own carries the filter and
/// makes the call in a loop.
struct Notify {
    /// Closed first on drop: the caller's next call then fails at once (ENOSYS).
    listener: Option<NotifyListener>,
    stop: Arc<AtomicBool>,
    /// The first answer the caller saw other than 0 (-errno for a failed call), or 0.
    wrong: Arc<AtomicI64>,
    caller: Option<JoinHandle<()>>,
}

fn prepare_notify(_: &Params) -> Result<Prepared, BenchError> {
    let stop = Arc::new(AtomicBool::new(false));
    let wrong = Arc::new(AtomicI64::new(0));
    let (tx, rx) = std::sync::mpsc::channel();
    let (s, w) = (stop.clone(), wrong.clone());
    let caller = std::thread::Builder::new()
        .name("syscost-notified".into())
        .spawn(move || {
            // The filter (and no_new_privs) is this thread's alone, and ends with it.
            match NotifyListener::install(NOTIFY_NR) {
                Ok(l) => {
                    if tx.send(Ok(l)).is_err() {
                        return;
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
            while !s.load(Ordering::Acquire) {
                let r = peers::call0(NOTIFY_NR as libc::c_long);
                let got = if r == -1 {
                    -i64::from(task::errno())
                } else {
                    r
                };
                if got != 0 && !s.load(Ordering::Acquire) {
                    let _ =
                        w.compare_exchange(0, got, Ordering::AcqRel, Ordering::Acquire);
                }
            }
        })
        .or_os("spawn the notified thread")?;
    let mut b = Notify {
        listener: None,
        stop,
        wrong,
        caller: Some(caller),
    };
    let listener = rx
        .recv()
        .map_err(|_| {
            BenchError::Failed("the notified thread ended before its filter".into())
        })?
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENOSYS) => BenchError::Skip(
                "seccomp user notification: this kernel lacks it (ENOSYS)".into(),
            ),
            Some(libc::EINVAL | libc::EPERM | libc::EACCES) => {
                BenchError::Skip(format!("seccomp user notification refused: {e}"))
            }
            _ => BenchError::os("seccomp(SET_MODE_FILTER, NEW_LISTENER)", e),
        })?;
    b.listener = Some(listener);
    Ok(Prepared::new(Box::new(b)).op("notified call").plan(BLOCKS))
}

impl Body for Notify {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        let fd = self.listener.as_ref().expect("set in prepare").fd();
        for _ in 0..iters {
            while peers::notify_answer(fd, 0) != 0 {
                // A signal (Ctrl-C's, which stops the run at the next sample) before a
                // notification came: wait again.
                if task::errno() != libc::EINTR {
                    return Err(BenchError::last_os("SECCOMP_IOCTL_NOTIF_RECV/SEND"));
                }
            }
        }
        match self.wrong.load(Ordering::Acquire) {
            0 => Ok(()),
            e if e < 0 => Err(BenchError::Failed(format!(
                "the notified call failed: {}",
                std::io::Error::from_raw_os_error(-e as i32)
            ))),
            v => Err(BenchError::Failed(format!(
                "the notified call returned {v}"
            ))),
        }
    }
}

impl Drop for Notify {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // With the listener closed, a call waiting for its answer, and any later one,
        // fails at once; the caller sees the stop and ends, its filter with it.
        self.listener = None;
        if let Some(t) = self.caller.take() {
            let _ = t.join();
        }
    }
}

static USLEEP_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "method",
        default: "usleep,nanosleep,select,pselect,itimer",
        about: "usleep(3) · nanosleep(2) · select(2) on no descriptors · pselect(2) on none · itimer: setitimer(ITIMER_REAL) then sigsuspend until SIGALRM (lat_usleep's five) · itimer-periodic: lat_usleep's own itimer loop, a periodic ITIMER_REAL of `us` that its SIGALRM handler re-arms while the process waits in a long nanosleep, timed from one signal to the next",
        kind: Kind::Choice(&[
            "usleep",
            "nanosleep",
            "select",
            "pselect",
            "itimer",
            "itimer-periodic",
        ]),
    },
    ParamSpec {
        name: "us",
        default: "10",
        about: "the requested sleep in µs",
        kind: Kind::Int {
            min: 1,
            max: 100_000,
        },
    },
];

/// `svc.usleep`.
pub const USLEEP: Simple = Simple {
    name: "svc.usleep",
    facts: Facts {
        idle: |_| true,
        ..NAMED.on(
            Libc,
            "usleep, nanosleep, select or pselect; itimer: setitimer and sigsuspend",
        )
    },
    about: "one relative sleep of `us` µs by lmbench lat_usleep's `method`: the measured sleep, the timer slack included",
    origin: "mcvoy1996 lat_usleep",
    params: USLEEP_PARAMS,
    prepare: prepare_usleep,
};

fn prepare_usleep(p: &Params) -> Result<Prepared, BenchError> {
    let us = p.int("us") as u64;
    let how = match p.get("method") {
        "usleep" => SleepHow::Usleep,
        "nanosleep" => SleepHow::Nanosleep,
        "select" => SleepHow::Select,
        "pselect" => SleepHow::Pselect,
        "itimer" => return prepare_itimer(us),
        _ => return prepare_itimer_periodic(us),
    };
    Ok(Prepared::new(crate::bench::body(move || {
        crate::bench::check(peers::sleep_us(how, us).into(), "sleep")
    }))
    .op("sleep")
    .plan(BLOCKS))
}

struct Itimer {
    once: libc::itimerval,
    old_timer: libc::itimerval,
    wait: SigSet,
    _blocked: Blocked,
    _handler: Handler,
    _lock: MutexGuard<'static, ()>,
}

/// Checks that ITIMER_REAL's SIGALRM can only reach this thread and that nobody else
/// has armed the timer; returns the signal lock, held while the body lives, and the
/// timer to give back.
fn itimer_alone(
    method: &str,
) -> Result<(MutexGuard<'static, ()>, libc::itimerval), BenchError> {
    // SIGALRM from ITIMER_REAL is sent to the process: with another thread that does
    // not block it, the kernel may hand it there and this thread would never wake.
    let threads = crate::os::mem::thread_count().or_os("/proc/self")?;
    if threads != 1 {
        return Err(BenchError::Skip(format!(
            "method={method} needs a single-threaded process (SIGALRM goes to any \
             thread); this one has {threads} threads"
        )));
    }
    let lock = task::signals_lock();
    let old_timer = svc::getitimer_real().or_os("getitimer")?;
    if old_timer.it_value.tv_sec != 0 || old_timer.it_value.tv_usec != 0 {
        return Err(BenchError::Skip(
            "ITIMER_REAL is armed by someone else in this process".into(),
        ));
    }
    Ok((lock, old_timer))
}

fn prepare_itimer(us: u64) -> Result<Prepared, BenchError> {
    let (lock, old_timer) = itimer_alone("itimer")?;
    let os = |what: &'static str| move |e| BenchError::os(what, e);
    let handler = Handler::counting(libc::SIGALRM).map_err(os("sigaction"))?;
    let alrm = SigSet::empty().with(libc::SIGALRM);
    let blocked = Blocked::block(&alrm).map_err(os("pthread_sigmask"))?;
    let wait = SigSet::current().without(libc::SIGALRM);
    let b = Itimer {
        once: svc::itimer_once(us),
        old_timer,
        wait,
        _blocked: blocked,
        _handler: handler,
        _lock: lock,
    };
    Ok(Prepared::new(Box::new(b)).op("sleep").plan(BLOCKS))
}

impl Body for Itimer {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for _ in 0..iters {
            let before = task::delivered(libc::SIGALRM);
            crate::bench::check(svc::setitimer_real(&self.once).into(), "setitimer")?;
            while task::delivered(libc::SIGALRM) == before {
                task::sigsuspend(&self.wait);
            }
        }
        Ok(())
    }
}

impl Drop for Itimer {
    fn drop(&mut self) {
        svc::setitimer_real(&self.old_timer);
    }
}

/// lat_usleep's itimer loop: ITIMER_REAL periodic every `us`, its handler re-arming it
/// (`setitimer` again, as lmbench's `interval()` does) while the process waits in a
/// long nanosleep that each signal ends with EINTR. A batch arms the timer at
/// its start and disarms it at its end (as lmbench's timed interval starts the first
/// timer), so no signal comes outside a batch.
struct ItimerPeriodic {
    us: u64,
    old_timer: libc::itimerval,
    _handler: Handler,
    _lock: MutexGuard<'static, ()>,
}

/// lmbench's `sleep(100000)`, which each SIGALRM interrupts; here a second, so that a
/// wait whose signals all came before it began (a preempted check) ends anyway.
const LONG_SLEEP_US: u64 = 1_000_000;

/// Periods per batch of `method=itimer-periodic`: the timer is armed once per batch.
const PERIODS_PER_BATCH: u64 = 100;

fn prepare_itimer_periodic(us: u64) -> Result<Prepared, BenchError> {
    let (lock, old_timer) = itimer_alone("itimer-periodic")?;
    if SigSet::current().contains(libc::SIGALRM) {
        return Err(BenchError::Skip(
            "method=itimer-periodic needs SIGALRM unblocked, and this thread blocks it"
                .into(),
        ));
    }
    let handler = Handler::rearming_itimer().or_os("sigaction")?;
    let b = ItimerPeriodic {
        us,
        old_timer,
        _handler: handler,
        _lock: lock,
    };
    // lmbench times a running periodic timer, period after period; a timer armed for
    // each period (a batch of one) read more than twice its figure here, so a batch
    // holds enough periods to make its first one small.
    let plan = Plan {
        fixed_batch: Some(PERIODS_PER_BATCH),
        ..BLOCKS
    };
    Ok(Prepared::new(Box::new(b)).op("itimer period").plan(plan))
}

impl ItimerPeriodic {
    fn wait_for(&self, target: u64) -> Result<(), BenchError> {
        while task::delivered(libc::SIGALRM) < target {
            if peers::sleep_us(SleepHow::Nanosleep, LONG_SLEEP_US) != 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() != Some(libc::EINTR) {
                    return Err(BenchError::os("nanosleep", e));
                }
            }
        }
        Ok(())
    }

    fn disarm(&self) -> libc::c_int {
        // First stop the handler re-arming: a signal taken on the way only counts.
        task::set_rearm_us(0, 0);
        svc::setitimer_real(&svc::itimer_once(0))
    }
}

impl Body for ItimerPeriodic {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        let target = task::delivered(libc::SIGALRM) + iters;
        task::set_rearm_us(self.us, target);
        let armed = svc::setitimer_real(&svc::itimer_periodic(self.us));
        let waited = if armed == 0 {
            self.wait_for(target)
        } else {
            Err(BenchError::os("setitimer", std::io::Error::last_os_error()))
        };
        let disarmed = self.disarm();
        waited?;
        crate::bench::check(disarmed.into(), "setitimer")
    }
}

impl Drop for ItimerPeriodic {
    fn drop(&mut self) {
        self.disarm();
        svc::setitimer_real(&self.old_timer);
    }
}
