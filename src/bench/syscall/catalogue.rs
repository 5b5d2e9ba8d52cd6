//! The memo's catalogue of CPU-bound calls (Figs. 4–5) and the 1999 trivial calls, each
//! with a safe modern equivalent that changes nothing: ids are set to their current
//! values, handlers re-installed as they were, signals sent only to ourselves with 0.
//! Each takes `via=libc|raw` (the C library's wrapper, or the instruction in the loop),
//! but for setuid and setgid, whose wrappers signal every thread: `via=syscall|raw`.

use crate::bench::facts::Figure::{NullLibc, NullRaw};
use crate::bench::facts::SYSCALL;
use crate::bench::facts::*;
use crate::bench::via::{self, check_raw as raw_ok, Via};
use crate::bench::{body, check, Kind, OrOs, ParamSpec, Prepared, Simple};
use crate::error::BenchError;
use crate::os::{raw, sys};
use std::hint::black_box;
use std::os::fd::AsFd;

/// `via=syscall|raw`: the C library's generic `syscall()` (its setuid and setgid
/// wrappers would signal every thread of the process), or the instruction in the loop.
const SYSCALL_OR_RAW: &[ParamSpec] = &[ParamSpec {
    name: "via",
    default: "syscall",
    about:
        "syscall: the C library's generic syscall() (its wrapper signals every thread) · \
            raw: the syscall instruction in the loop itself",
    kind: Kind::Choice(&["syscall", "raw"]),
}];

/// `syscall.getppid`.
pub const GETPPID: Simple = Simple {
    name: "syscall.getppid",
    facts: Facts {
        quotes: &[
            quote(NullLibc, 1, "via=libc", "getppid, C library"),
            quote(NullRaw, 2, "via=raw", "getppid, syscall in the loop"),
        ],
        ..SYSCALL
    },
    about: "getppid()",
    origin: "manea1999 §3",
    params: via::ONLY_BOTH,
    prepare: |p| {
        Ok(Prepared::new(match Via::of(p)? {
            Via::Libc => body(|| {
                black_box(sys::getppid());
                Ok(())
            }),
            Via::Raw => via::repeat(|n| raw::getppid_repeat(n).map_err(via::stopped)),
        }))
    },
};

/// `syscall.getuid`.
pub const GETUID: Simple = Simple {
    name: "syscall.getuid",
    facts: SYSCALL,
    about: "getuid()",
    origin: "perez1976 Fig. 4 guid",
    params: via::ONLY_BOTH,
    prepare: |p| {
        Ok(Prepared::new(match Via::of(p)? {
            Via::Libc => body(|| {
                black_box(sys::getuid());
                Ok(())
            }),
            Via::Raw => via::repeat(|n| raw::getuid_repeat(n).map_err(via::stopped)),
        }))
    },
};

/// `syscall.getgid`.
pub const GETGID: Simple = Simple {
    name: "syscall.getgid",
    facts: SYSCALL,
    about: "getgid()",
    origin: "perez1976 Fig. 4 ggid",
    params: via::ONLY_BOTH,
    prepare: |p| {
        Ok(Prepared::new(match Via::of(p)? {
            Via::Libc => body(|| {
                black_box(sys::getgid());
                Ok(())
            }),
            Via::Raw => via::repeat(|n| raw::getgid_repeat(n).map_err(via::stopped)),
        }))
    },
};

/// `syscall.uname`.
pub const UNAME: Simple = Simple {
    name: "syscall.uname",
    facts: SYSCALL,
    about: "uname() into a struct utsname",
    origin: "manea1999 §3",
    params: via::ONLY_BOTH,
    prepare: |p| {
        let mut u = Box::new(sys::utsname_zeroed());
        Ok(Prepared::new(match Via::of(p)? {
            Via::Libc => body(move || check(sys::uname(&mut u) as i64, "uname")),
            Via::Raw => via::repeat(move |n| via::call_n(raw::uname_call(&mut u), n)),
        }))
    },
};

/// `syscall.times`.
pub const TIMES: Simple = Simple {
    name: "syscall.times",
    facts: SYSCALL,
    about: "times() into a struct tms",
    origin: "perez1976 Fig. 4 times; manea1999 §3",
    params: via::ONLY_BOTH,
    prepare: |p| {
        let mut t = sys::tms_zeroed();
        Ok(Prepared::new(match Via::of(p)? {
            Via::Libc => body(move || check(sys::times(&mut t) as i64, "times")),
            Via::Raw => via::repeat(move |n| via::call_n(raw::times_call(&mut t), n)),
        }))
    },
};

/// `syscall.dup_close`.
pub const DUP_CLOSE: Simple = Simple {
    name: "syscall.dup_close",
    facts: SYSCALL,
    about: "dup of an open descriptor, then close of the copy (one pair)",
    origin: "perez1976 Fig. 4 dup",
    params: via::ONLY_BOTH,
    prepare: |p| {
        let f = std::fs::File::open("/dev/null").or_os("open /dev/null")?;
        let b = match Via::of(p)? {
            Via::Libc => body(move || {
                let d =
                    sys::dup_owned(f.as_fd()).map_err(|e| BenchError::os("dup", e))?;
                check(sys::close_owned(d) as i64, "close")
            }),
            Via::Raw => body(move || {
                let d = raw::dup(f.as_fd()).map_err(|e| BenchError::os("dup", e))?;
                raw_ok(raw::close(d), "close")
            }),
        };
        Ok(Prepared::new(b).op("dup+close pair"))
    },
};

/// `syscall.alarm`.
pub const ALARM: Simple = Simple {
    name: "syscall.alarm",
    facts: SYSCALL,
    about: "alarm(0): cancels no alarm (syscost sets none)",
    origin: "perez1976 Fig. 4 alarm",
    params: via::ONLY_BOTH,
    prepare: |p| {
        let via = Via::of(p)?;
        // Held for the body's life: no timer benchmark arms ITIMER_REAL meanwhile.
        let lock = crate::os::task::signals_lock();
        // Look without touching: alarm(0) itself would cancel a pending alarm.
        let now = crate::os::svc::getitimer_real().or_os("getitimer")?;
        let v = now.it_value;
        if v.tv_sec != 0 || v.tv_usec != 0 {
            return Err(BenchError::Skip(
                "an alarm is pending in this process; alarm(0) would cancel it".into(),
            ));
        }
        Ok(Prepared::new(match via {
            Via::Libc => body(move || {
                let _held = &lock;
                black_box(sys::alarm(0));
                Ok(())
            }),
            Via::Raw => via::repeat(move |n| {
                let _held = &lock;
                via::call_n(raw::alarm_call(0), n)
            }),
        }))
    },
};

/// `syscall.sigaction`.
pub const SIGACTION: Simple = Simple {
    name: "syscall.sigaction",
    facts: SYSCALL,
    about: "sigaction re-installing SIGUSR2's current disposition",
    origin: "perez1976 Fig. 4 sig",
    params: via::ONLY_BOTH,
    prepare: |p| {
        let sig = libc::SIGUSR2;
        Ok(Prepared::new(match Via::of(p)? {
            Via::Libc => {
                let act = sys::sigaction_get(sig).or_os("sigaction")?;
                body(move || check(sys::sigaction_set(sig, &act) as i64, "sigaction"))
            }
            Via::Raw => {
                let act = raw::sigaction_get(sig)
                    .map_err(|e| BenchError::os("rt_sigaction", e))?;
                via::repeat(move |n| via::call_n(raw::sigaction_set_call(sig, &act), n))
            }
        }))
    },
};

/// `syscall.kill`.
pub const KILL: Simple = Simple {
    name: "syscall.kill",
    facts: SYSCALL,
    about: "kill(own pid, 0): the permission check, no signal sent",
    origin: "perez1976 Fig. 4 kill",
    params: via::ONLY_BOTH,
    prepare: |p| {
        let me = sys::getpid();
        Ok(Prepared::new(match Via::of(p)? {
            Via::Libc => body(move || check(sys::kill(me, 0) as i64, "kill")),
            Via::Raw => via::repeat(move |n| via::call_n(raw::kill_call(me, 0), n)),
        }))
    },
};

/// `syscall.setpriority`.
pub const SETPRIORITY: Simple = Simple {
    name: "syscall.setpriority",
    facts: SYSCALL,
    about: "setpriority of this process to its current nice value",
    origin: "perez1976 Fig. 4 nice",
    params: via::ONLY_BOTH,
    prepare: |p| {
        let prio = sys::getpriority_self().or_os("getpriority")?;
        Ok(Prepared::new(match Via::of(p)? {
            Via::Libc => {
                body(move || check(sys::setpriority_self(prio) as i64, "setpriority"))
            }
            Via::Raw => {
                via::repeat(move |n| via::call_n(raw::setpriority_self_call(prio), n))
            }
        }))
    },
};

/// `syscall.setuid`.
pub const SETUID: Simple = Simple {
    name: "syscall.setuid",
    facts: SYSCALL,
    about: "setuid to the current user id (the kernel call, this thread)",
    origin: "perez1976 Fig. 4 suid",
    params: SYSCALL_OR_RAW,
    prepare: |p| {
        let uid = sys::getuid();
        Ok(Prepared::new(if Via::of(p)? == Via::Raw {
            via::repeat(move |n| via::call_n(raw::setuid_call(uid), n))
        } else {
            body(move || check(sys::setuid_syscall(uid), "setuid"))
        }))
    },
};

/// `syscall.setgid`.
pub const SETGID: Simple = Simple {
    name: "syscall.setgid",
    facts: SYSCALL,
    about: "setgid to the current group id (the kernel call, this thread)",
    origin: "perez1976 Fig. 4 sgid",
    params: SYSCALL_OR_RAW,
    prepare: |p| {
        let gid = sys::getgid();
        Ok(Prepared::new(if Via::of(p)? == Via::Raw {
            via::repeat(move |n| via::call_n(raw::setgid_call(gid), n))
        } else {
            body(move || check(sys::setgid_syscall(gid), "setgid"))
        }))
    },
};

/// `syscall.tcgets`.
pub const TCGETS: Simple = Simple {
    name: "syscall.tcgets",
    facts: SYSCALL,
    about: "ioctl(TCGETS) on a pseudo-terminal syscost opens (the memo's gtty)",
    origin: "perez1976 Fig. 4 gtty",
    params: via::ONLY_BOTH,
    prepare: |p| {
        let via = Via::of(p)?;
        let (master, slave) = sys::openpty().map_err(|e| {
            BenchError::Skip(format!(
                "cannot open a pseudo-terminal ({e}); is /dev/pts mounted?"
            ))
        })?;
        let mut t = sys::termios_zeroed();
        Ok(Prepared::new(match via {
            Via::Libc => body(move || {
                let _keep = &master; // the pty lives as long as the body
                check(sys::tcgets(slave.as_fd(), &mut t) as i64, "ioctl(TCGETS)")
            }),
            Via::Raw => via::repeat(move |n| {
                let _keep = &master;
                via::call_n(raw::tcgets_call(slave.as_fd(), &mut t), n)
            }),
        }))
    },
};
