//! Timers: VMS's `$SETIMR` (set an event flag, or call an AST, at a given time) and
//! `$SCHDWK` (schedule a wake-up) are a one-shot timer armed for later; `$CANTIM`
//! cancels one or all of them. Linux has four kinds a process may arm: a timerfd, a
//! POSIX timer (timer_create, here raising a real-time signal), the ITIMER_REAL
//! interval timer and alarm(2) (which is ITIMER_REAL in whole seconds).
//!
//! Every timer is armed for 1 s (alarm: 1000 s) and re-armed or disarmed long before
//! it could expire; should one fire anyway, a counting handler takes the signal and the
//! `fired` fact says so. The signal-raising kinds hold the process-wide signal lock
//! for the body's life. Dropping the body disarms everything, deletes the POSIX timers,
//! restores the signal handler and then the ITIMER_REAL this process had before (less
//! the time elapsed since prepare).

use super::{expect, fail};
use crate::bench::facts::*;
use crate::bench::Fact;
use crate::bench::{After, Kind, ParamSpec, Params, Prepared, Simple};
use crate::error::BenchError;
use crate::harness::{Body, Plan};
use crate::os::svc::{self, PosixTimer};
use crate::os::sys;
use crate::os::task::{self, Handler};
use std::cell::Cell;
use std::os::fd::{AsFd, OwnedFd};
use std::rc::Rc;
use std::sync::MutexGuard;
use std::time::{Duration, Instant};

/// The kinds of timer.
pub const APIS: &[&str] = &["timerfd", "posix", "itimer", "alarm"];

/// How far ahead every timer is armed.
const ARM_NS: u64 = 1_000_000_000;
/// alarm(2) counts whole seconds.
const ALARM_SECS: u32 = 1000;

static API_PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "api",
    default: "timerfd,posix,itimer,alarm",
    about: "timerfd_settime, timer_settime of a timer_create(CLOCK_MONOTONIC, SIGEV_SIGNAL) timer, setitimer(ITIMER_REAL) or alarm(2)",
    kind: Kind::Choice(APIS),
}];

static ALL_PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "n",
    default: "8",
    about: "how many armed POSIX timers one operation disarms",
    kind: Kind::Int { min: 1, max: 256 },
}];

/// `svc.timer.arm`.
pub const ARM: Simple = Simple {
    name: "svc.timer.arm",
    facts: SYSCALL.on(Libc, "timerfd_settime, timer_settime, setitimer or alarm"),
    about: "re-arming an armed one-shot timer 1 s ahead (alarm: 1000 s): timerfd_settime, timer_settime, setitimer(ITIMER_REAL) or alarm; it never fires",
    origin: "004 Table I: $SETIMR set event flag at specified time (278 µs); $SCHDWK schedule wakeups (252 µs)",
    params: API_PARAMS,
    prepare: |p| prepare(p, Mode::Arm),
};

/// `svc.timer.cancel`.
pub const CANCEL: Simple = Simple {
    name: "svc.timer.cancel",
    facts: SYSCALL.on(Libc, "timerfd_settime, timer_settime, setitimer or alarm"),
    about: "disarming one armed timer (settime to zero, setitimer zero, alarm(0)); timed one at a time, the timer re-armed for 1 s (untimed) before each",
    origin: "004 Table I: $CANTIM cancel selected timer request (285 µs)",
    params: API_PARAMS,
    prepare: |p| prepare(p, Mode::Cancel),
};

/// `svc.timer.cancel_all`.
pub const CANCEL_ALL: Simple = Simple {
    name: "svc.timer.cancel_all",
    facts: SYSCALL.on(Libc, "timer_settime, n times"),
    about: "disarming all n armed POSIX timers, one timer_settime each (Linux has no call that cancels every timer); timed one round at a time, all re-armed (untimed) before each",
    origin: "004 Table I: $CANTIM cancel all timer requests (265 µs)",
    params: ALL_PARAMS,
    prepare: |p| prepare(p, Mode::CancelAll),
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    Timerfd,
    Posix,
    Itimer,
    Alarm,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Arm,
    Cancel,
    CancelAll,
}

/// What the after step reports: expiries seen, and alarm(0) calls that found no alarm.
#[derive(Debug, Default, Clone, Copy)]
struct Report {
    fired: u64,
    found_disarmed: u64,
}

struct Timers {
    api: Api,
    mode: Mode,
    tfd: Option<OwnedFd>,
    posix: Vec<PosixTimer>,
    arm: libc::itimerspec,
    zero: libc::itimerspec,
    arm_it: libc::itimerval,
    zero_it: libc::itimerval,
    /// The signal a firing timer would raise, and its deliveries before prepare.
    signal: Option<(libc::c_int, u64)>,
    /// ITIMER_REAL as it was at prepare, and when.
    saved: Option<(libc::itimerval, Instant)>,
    found_disarmed: u64,
    report: Rc<Cell<Report>>,
    // Dropped after `Drop::drop` has disarmed everything: the handler is restored,
    // then the lock released.
    handler: Option<Handler>,
    _signals: Option<MutexGuard<'static, ()>>,
}

impl Timers {
    /// Arms every timer of the body (untimed).
    fn arm_all(&self) -> Result<(), BenchError> {
        match self.api {
            Api::Timerfd => {
                if let Some(fd) = &self.tfd {
                    let r = svc::timerfd_settime(fd.as_fd(), &self.arm);
                    expect(r as i64, 0, "timerfd_settime")?;
                }
            }
            Api::Posix => {
                for t in &self.posix {
                    expect(t.set(&self.arm) as i64, 0, "timer_settime")?;
                }
            }
            Api::Itimer => {
                expect(svc::setitimer_real(&self.arm_it) as i64, 0, "setitimer")?
            }
            Api::Alarm => {
                sys::alarm(ALARM_SECS);
            }
        }
        Ok(())
    }

    /// Sets every timer to `value` (the operation of `arm` or `cancel`).
    #[inline(always)]
    fn set(&mut self, iters: u64, arm: bool) -> Result<(), BenchError> {
        let (ts, it, secs) = if arm {
            (self.arm, self.arm_it, ALARM_SECS)
        } else {
            (self.zero, self.zero_it, 0)
        };
        match self.api {
            Api::Timerfd => {
                let Some(fd) = &self.tfd else {
                    return Err(BenchError::Failed("no timerfd".into()));
                };
                let fd = fd.as_fd();
                for _ in 0..iters {
                    expect(svc::timerfd_settime(fd, &ts) as i64, 0, "timerfd_settime")?;
                }
            }
            Api::Posix => {
                for _ in 0..iters {
                    for t in &self.posix {
                        expect(t.set(&ts) as i64, 0, "timer_settime")?;
                    }
                }
            }
            Api::Itimer => {
                for _ in 0..iters {
                    expect(svc::setitimer_real(&it) as i64, 0, "setitimer")?;
                }
            }
            Api::Alarm => {
                for _ in 0..iters {
                    if sys::alarm(secs) == 0 && !arm {
                        self.found_disarmed += 1;
                    }
                }
            }
        }
        Ok(())
    }

    /// Disarms everything and gives ITIMER_REAL back its previous value.
    fn disarm(&mut self) -> Result<(), BenchError> {
        let mut result = Ok(());
        if let Some(fd) = &self.tfd {
            if svc::timerfd_settime(fd.as_fd(), &self.zero) != 0 {
                result = Err(fail("timerfd_settime (disarm)"));
            }
        }
        for t in &self.posix {
            if t.set(&self.zero) != 0 {
                result = Err(fail("timer_settime (disarm)"));
            }
        }
        if self.saved.is_some() && svc::setitimer_real(&self.zero_it) != 0 {
            result = Err(fail("setitimer (disarm)"));
        }
        result
    }
}

impl Body for Timers {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        self.set(iters, self.mode == Mode::Arm)
    }
    fn reset(&mut self, _iters: u64) -> Result<(), BenchError> {
        if self.mode == Mode::Arm {
            Ok(())
        } else {
            self.arm_all()
        }
    }
}

impl Drop for Timers {
    fn drop(&mut self) {
        let _ = self.disarm();
        self.posix.clear();
        self.tfd = None;
        let fired = self
            .signal
            .map_or(0, |(sig, before)| task::delivered(sig) - before);
        self.report.set(Report {
            fired,
            found_disarmed: self.found_disarmed,
        });
        // Our handler goes before the previous timer comes back, so that its expiry
        // reaches the previous handler.
        self.handler = None;
        if let Some((old, at)) = self.saved.take() {
            restore_itimer(old, at.elapsed());
        }
    }
}

/// Re-arms ITIMER_REAL with what was left of `old`, less `elapsed` (at least 1 µs, so
/// an expiry that fell due while we held the timer still happens).
fn restore_itimer(old: libc::itimerval, elapsed: Duration) {
    let was = old.it_value.tv_sec as u64 * 1_000_000 + old.it_value.tv_usec as u64;
    let now = left_us(was, elapsed);
    if now == 0 {
        return;
    }
    let mut v = svc::itimer_once(now);
    v.it_interval = old.it_interval;
    svc::setitimer_real(&v);
}

/// What is left of a timer that had `was` µs to run, `elapsed` later: 0 when it was
/// disarmed, at least 1 µs when it was armed.
fn left_us(was: u64, elapsed: Duration) -> u64 {
    if was == 0 {
        return 0;
    }
    was.saturating_sub(elapsed.as_micros() as u64).max(1)
}

fn prepare(p: &Params, mode: Mode) -> Result<Prepared, BenchError> {
    let api = match mode {
        Mode::CancelAll => Api::Posix,
        _ => match p.get("api") {
            "timerfd" => Api::Timerfd,
            "posix" => Api::Posix,
            "itimer" => Api::Itimer,
            _ => Api::Alarm,
        },
    };
    let os = |what: &'static str| move |e| BenchError::os(what, e);
    let signo = match api {
        Api::Timerfd => None,
        Api::Posix => Some(svc::timer_signal()),
        Api::Itimer | Api::Alarm => Some(libc::SIGALRM),
    };
    // The lock first: nothing below may race another body's signals or ITIMER_REAL.
    let signals = signo.map(|_| task::signals_lock());
    let handler = signo
        .map(Handler::counting)
        .transpose()
        .map_err(os("sigaction"))?;
    let saved = match api {
        Api::Itimer | Api::Alarm => Some((
            svc::getitimer_real().map_err(os("getitimer"))?,
            Instant::now(),
        )),
        _ => None,
    };
    let tfd = match api {
        Api::Timerfd => Some(svc::timerfd().map_err(os("timerfd_create"))?),
        _ => None,
    };
    let count = match (api, mode) {
        (Api::Posix, Mode::CancelAll) => p.int("n") as usize,
        (Api::Posix, _) => 1,
        _ => 0,
    };
    let report = Rc::new(Cell::new(Report::default()));
    let mut timers = Timers {
        api,
        mode,
        tfd,
        posix: Vec::with_capacity(count),
        arm: svc::one_shot(ARM_NS),
        zero: svc::one_shot(0),
        arm_it: svc::itimer_once(ARM_NS / 1000),
        zero_it: svc::itimer_once(0),
        signal: signo.map(|s| (s, task::delivered(s))),
        saved,
        found_disarmed: 0,
        report: report.clone(),
        handler,
        _signals: signals,
    };
    for _ in 0..count {
        timers.posix.push(posix_timer()?);
    }
    // Each arm then re-arms an armed timer.
    if mode == Mode::Arm {
        timers.arm_all()?;
    }
    let plan = Plan {
        fixed_batch: (mode != Mode::Arm).then_some(1),
        ..Plan::default()
    };
    let op = match mode {
        Mode::Arm => "re-arm",
        Mode::Cancel => "disarm",
        Mode::CancelAll => "disarm all n",
    };
    let shape = Shape {
        api,
        mode,
        signals: signo.is_some(),
        n: count.max(1) as f64,
    };
    Ok(Prepared::new(Box::new(timers))
        .op(op)
        .plan(plan)
        .after(facts(shape, report)))
}

/// One POSIX timer signalling with the benchmark's signal; running out of them (the
/// pending-signal limit) is a skip with the remedy.
fn posix_timer() -> Result<PosixTimer, BenchError> {
    match PosixTimer::new(svc::timer_signal()) {
        Ok(t) => Ok(t),
        Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => Err(BenchError::Skip(format!(
            "timer_create: no more POSIX timers ({e}); the pending-signal limit (`ulimit -i`) bounds them: use a smaller n"
        ))),
        Err(e) => Err(BenchError::os("timer_create", e)),
    }
}

/// What the after step needs to know of an instance.
#[derive(Clone, Copy)]
struct Shape {
    api: Api,
    mode: Mode,
    /// Whether the timers signal (all but timerfd).
    signals: bool,
    /// Timers disarmed per operation.
    n: f64,
}

/// The after step: expiries seen, alarms found already disarmed, and the cost per
/// timer of a disarm-all round.
fn facts(sh: Shape, report: Rc<Cell<Report>>) -> After {
    Box::new(move |_, m| {
        let r = report.get();
        let mut facts = Vec::new();
        if sh.signals {
            facts.push(Fact::new(
                "fired",
                r.fired as f64,
                "count",
                "expiries of the benchmark's timers during the run (0 expected: each is re-armed or disarmed long before it is due)",
            ));
        }
        if sh.api == Api::Alarm && sh.mode == Mode::Cancel {
            facts.push(Fact::new(
                "found_disarmed",
                r.found_disarmed as f64,
                "count",
                "alarm(0) calls that found no alarm to cancel (0 expected)",
            ));
        }
        if sh.mode == Mode::CancelAll {
            facts.push(Fact::new(
                "per_timer_ns",
                m.analysis.figure() / sh.n,
                "ns",
                "the round divided by n: one timer_settime that disarms",
            ));
        }
        Ok(facts)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::testing::{fact, prepared, sane};

    /// Our POSIX timers listed in /proc/self/timers (by their signal).
    fn ours_listed() -> usize {
        let text = std::fs::read_to_string("/proc/self/timers").unwrap_or_default();
        let want = format!("signal: {}/", svc::timer_signal());
        text.lines().filter(|l| l.starts_with(&want)).count()
    }

    fn assert_nothing_armed() {
        let _lock = task::signals_lock();
        let it = svc::getitimer_real().unwrap();
        assert_eq!(
            (it.it_value.tv_sec, it.it_value.tv_usec),
            (0, 0),
            "ITIMER_REAL left armed"
        );
        assert_eq!(sys::alarm(0), 0, "an alarm left pending");
        assert_eq!(ours_listed(), 0, "a POSIX timer left behind");
    }

    #[test]
    fn every_kind_arms_and_cancels_then_leaves_nothing_armed() {
        for api in APIS {
            for b in [&ARM, &CANCEL] {
                let facts =
                    sane(b, &[("api", api)], 1e6).expect("timers exist everywhere");
                if *api != "timerfd" {
                    assert_eq!(fact(&facts, "fired"), 0.0, "{} {api}", b.name);
                }
                assert_nothing_armed();
            }
        }
        let facts = sane(&CANCEL_ALL, &[("n", "8")], 1e6).unwrap();
        assert!(fact(&facts, "per_timer_ns") > 0.0);
        assert_nothing_armed();
    }

    #[test]
    fn a_posix_timer_is_listed_while_the_body_lives_and_gone_after() {
        let mut prep = prepared(&CANCEL_ALL, &[("n", "3")]);
        assert_eq!(ours_listed(), 3);
        prep.body.reset(1).unwrap();
        prep.body.run(1).unwrap();
        drop(prep);
        assert_nothing_armed();
    }

    #[test]
    fn a_previous_itimer_gets_what_was_left_of_it() {
        assert_eq!(left_us(5_000_000, Duration::from_secs(2)), 3_000_000);
        assert_eq!(
            left_us(5_000_000, Duration::from_secs(9)),
            1,
            "due: fire soon"
        );
        assert_eq!(
            left_us(0, Duration::from_secs(1)),
            0,
            "none: leave it disarmed"
        );
    }
}
