//! Miscellaneous services: process information ($GETJPI), priority ($SETPRI), the
//! futex forms of a wake-up that finds nobody asleep ($WAKE, same process) and of a
//! hibernation with a wake-up already pending ($WAKE+$HIBER), and the conversion of
//! the time to calendar fields ($NUMTIM).

use super::{expect, expect_errno, fail, flags};
use crate::bench::facts::*;
use crate::bench::{body, OrOs, Prepared, Simple};
use crate::error::BenchError;
use crate::os::svc;
use crate::os::{sys, task};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::AtomicU32;

/// `svc.getrusage`.
pub const GETRUSAGE: Simple = Simple {
    name: "svc.getrusage",
    facts: SYSCALL.on(Libc, "getrusage"),
    about: "getrusage(RUSAGE_SELF): the process's CPU times, faults and switches",
    origin: "004 Table I: $GETJPI return current process id (250 µs)",
    params: &[],
    prepare: |_| {
        let mut ru = svc::rusage_zeroed();
        Ok(Prepared::new(body(move || {
            expect(svc::getrusage_self(&mut ru) as i64, 0, "getrusage")
        })))
    },
};

/// `svc.procstat`.
pub const PROCSTAT: Simple = Simple {
    name: "svc.procstat",
    facts: SYSCALL.on(Libc, "pread"),
    about: "pread(2) of /proc/self/stat from offset 0 into a 1 KiB buffer, on a descriptor opened in prepare: the kernel formats the whole line each time",
    origin: "004 Table I: $GETJPI return current process id (250 µs)",
    params: &[],
    prepare: |_| {
        let f = std::fs::File::open("/proc/self/stat")
            .or_os("open /proc/self/stat")?;
        let fd = OwnedFd::from(f);
        let mut buf = [0u8; 1024];
        Ok(Prepared::new(body(move || {
            let r = svc::pread(fd.as_fd(), &mut buf, 0);
            if r <= 0 {
                return Err(fail("pread /proc/self/stat"));
            }
            Ok(())
        }))
        .op("pread"))
    },
};

/// `svc.setpri`.
pub const SETPRI: Simple = Simple {
    name: "svc.setpri",
    facts: SYSCALL.on(Libc, "setpriority"),
    about: "setpriority(PRIO_PROCESS, own thread id, its current nice value): the full call with no change in effect (never raised, never lowered)",
    origin: "004 Table I: $SETPRI set (raise) process priority (123 µs)",
    params: &[],
    prepare: |_| {
        let tid = task::gettid();
        let nice =
            svc::getpriority_thread(tid).or_os("getpriority")?;
        Ok(Prepared::new(body(move || {
            expect(
                svc::setpriority_thread(tid, nice) as i64,
                0,
                "setpriority",
            )
        })))
    },
};

/// `svc.wake.self`.
pub const WAKE_SELF: Simple = Simple {
    name: "svc.wake.self",
    facts: Facts { switches: true, ..SYSCALL.on(Generic, "FUTEX_WAKE") },
    about: "FUTEX_WAKE on a word of this process that nobody waits on (returns 0): the same call as svc.ef.set_futex, standing for the other row",
    origin: "004 Table I: $WAKE wakeup (same process) (106 µs)",
    params: &[],
    prepare: flags::futex_wake_nobody,
};

/// `svc.hiber.pending`.
pub const HIBER_PENDING: Simple = Simple {
    name: "svc.hiber.pending",
    facts: SYSCALL.on(Generic, "FUTEX_WAIT"),
    about: "FUTEX_WAIT on a word whose value already differs from the expected one (a wake-up is pending): returns EAGAIN at once, the expected outcome",
    origin: "004 Table I: $WAKE+$HIBER hibernate with pending wakeup (196 µs)",
    params: &[],
    prepare: |_| {
        // The word says "woken" (1); the caller would sleep only while it is 0.
        let word = Box::new(AtomicU32::new(1));
        Ok(Prepared::new(body(move || {
            expect_errno(
                task::futex_wait(&word, 0, None),
                libc::EAGAIN,
                "futex (FUTEX_WAIT)",
            )
        }))
        .op("FUTEX_WAIT (EAGAIN)"))
    },
};

/// `svc.gmtime`.
pub const GMTIME: Simple = Simple {
    name: "svc.gmtime",
    facts: Facts { enters: Enters::Not("calendar arithmetic in the C library"), ..USER },
    about: "gmtime_r of the time read in prepare (after tzset): seconds to UTC calendar fields",
    origin: "004 Table I: $NUMTIM get system time in numeric format (278 µs)",
    params: &[],
    prepare: |_| convert(svc::gmtime, "gmtime_r"),
};

/// `svc.localtime`.
pub const LOCALTIME: Simple = Simple {
    name: "svc.localtime",
    facts: Facts {
        enters: Enters::Not(
            "calendar arithmetic in the C library, the zone read in prepare",
        ),
        ..USER
    },
    about: "localtime_r of the time read in prepare (after tzset): seconds to local calendar fields under the current TZ",
    origin: "004 Table I: $NUMTIM get system time in numeric format (278 µs)",
    params: &[],
    prepare: |_| convert(svc::localtime, "localtime_r"),
};

/// `f` is a function item, so the timed loop calls the C library directly.
fn convert<F>(f: F, what: &'static str) -> Result<Prepared, BenchError>
where
    F: Fn(&libc::time_t, &mut libc::tm) -> bool + 'static,
{
    svc::tz_init();
    let now = sys::time();
    let mut tm = svc::tm_zeroed();
    if !f(&now, &mut tm) || tm.tm_year < 70 {
        return Err(BenchError::Failed(format!(
            "{what} of the current time failed"
        )));
    }
    Ok(Prepared::new(body(move || {
        if f(std::hint::black_box(&now), &mut tm) {
            Ok(())
        } else {
            Err(fail(what))
        }
    }))
    .op(what))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::testing::sane;

    #[test]
    fn each_costs_something_plausible() {
        for b in [
            &GETRUSAGE,
            &PROCSTAT,
            &SETPRI,
            &WAKE_SELF,
            &HIBER_PENDING,
            &GMTIME,
            &LOCALTIME,
        ] {
            sane(b, &[], 1e6).expect("runs everywhere");
        }
    }

    #[test]
    fn setpri_leaves_the_nice_value_unchanged() {
        let tid = task::gettid();
        let before = svc::getpriority_thread(tid).unwrap();
        sane(&SETPRI, &[], 1e6).unwrap();
        assert_eq!(svc::getpriority_thread(tid).unwrap(), before);
    }
}
