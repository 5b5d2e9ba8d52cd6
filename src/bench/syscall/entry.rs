//! Entry paths: getpid three ways, the argument count, and vDSO against real calls.

use crate::bench::facts::Figure::{NullLibc, NullRaw, VdsoClock};
use crate::bench::facts::*;
use crate::bench::via::{self, Via};
use crate::bench::{body, check, Kind, ParamSpec, Params, Prepared, Simple};
use crate::error::BenchError;
use crate::os::{raw, sys};
use std::hint::black_box;

/// `syscall.getpid`: the C library wrapper, or (`via=raw`) the instruction in the loop,
/// as `syscall.getpid.raw`.
pub const GETPID: Simple = Simple {
    name: "syscall.getpid",
    facts: Facts {
        quotes: &[
            quote(NullLibc, 0, "via=libc", "getpid, C library"),
            quote(NullRaw, 1, "via=raw", "getpid, syscall in the loop"),
        ],
        ..SYSCALL
    },
    about: "getpid() through the C library wrapper (via=raw: the syscall instruction in the loop)",
    origin: "perez1976 Fig. 4 gpid; manea1999 §3",
    params: via::ONLY_BOTH,
    prepare: |p| {
        Ok(Prepared::new(match Via::of(p)? {
            Via::Libc => body(|| {
                black_box(sys::getpid());
                Ok(())
            }),
            Via::Raw => getpid_repeat(),
        }))
    },
};

/// `syscall.getpid.raw`: the `syscall` instruction, no library in between.
pub const GETPID_RAW: Simple = Simple {
    name: "syscall.getpid.raw",
    facts: Facts {
        quotes: &[quote(NullRaw, 0, "", "getpid, syscall in the loop")],
        ..SYSCALL.on(Raw, "getpid: the aligned loop of syscall.getpid via=raw")
    },
    about: "getpid through the syscall instruction itself (the memo's direct call)",
    origin: "perez1976 Fig. 3 D(r0+0args)",
    params: &[],
    prepare: prepare_getpid_raw,
};

/// getpid in its aligned loop ([`raw::getpid_repeat`]): the body of `syscall.getpid
/// via=raw` and of `syscall.getpid.raw`.
fn getpid_repeat() -> Box<dyn crate::harness::Body> {
    via::repeat(|n| raw::getpid_repeat(n).map_err(via::stopped))
}

/// The same aligned loop as `syscall.getpid via=raw`.
#[cfg(target_arch = "x86_64")]
fn prepare_getpid_raw(_: &Params) -> Result<Prepared, BenchError> {
    Ok(Prepared::new(getpid_repeat()))
}

#[cfg(not(target_arch = "x86_64"))]
fn prepare_getpid_raw(_: &Params) -> Result<Prepared, BenchError> {
    Err(BenchError::Skip(
        "the raw syscall instruction is only wired up on x86_64".into(),
    ))
}

/// `syscall.getpid.indirect`: the generic `syscall(SYS_getpid)` entry.
pub const GETPID_INDIRECT: Simple = Simple {
    name: "syscall.getpid.indirect",
    facts: SYSCALL.on(Generic, "getpid: syscall(SYS_getpid)"),
    about: "getpid through the C library's generic syscall() (the memo's indirect call)",
    origin: "perez1976 Fig. 3 I(r0+1arg)",
    params: &[],
    prepare: |_| {
        Ok(Prepared::new(body(|| {
            black_box(sys::getpid_indirect());
            Ok(())
        })))
    },
};

/// `syscall.args`: entry and exit with 0..6 arguments.
pub const ARGS: Simple = Simple {
    name: "syscall.args",
    facts: SYSCALL.on(
        Raw,
        "an unimplemented call: the instruction inlined where the compiler places it, \
         not an aligned loop",
    ),
    about: "a system call number the kernel does not implement, with n arguments: entry and exit only",
    origin: "perez1976 Fig. 3 (per-argument cost)",
    params: &[ParamSpec {
        name: "args",
        default: "0,1,2,3,4,5,6",
        about: "arguments passed in registers",
        kind: Kind::Int { min: 0, max: 6 },
    }],
    prepare: prepare_args,
};

#[cfg(target_arch = "x86_64")]
fn prepare_args(p: &Params) -> Result<Prepared, BenchError> {
    const NR: sys::PlainCall = sys::PlainCall::UNIMPLEMENTED;
    let r = sys::raw_syscall6(NR, [0; 6]);
    if r != -(libc::ENOSYS as isize) {
        return Err(BenchError::Failed(format!(
            "system call {} returned {r}, not -ENOSYS: the kernel implements it",
            NR.number()
        )));
    }
    let n = p.int("args") as usize;
    // Each count is its own monomorphic loop, so a loop holds exactly n argument moves.
    macro_rules! with_args {
        ($($a:expr),*) => {
            body(move || {
                let r = sys::raw_syscall6(NR, [$($a),*]);
                black_box(r);
                Ok(())
            })
        };
    }
    let b = match n {
        0 => body(|| {
            black_box(sys::raw_syscall0(NR));
            Ok(())
        }),
        1 => with_args!(black_box(1), 0, 0, 0, 0, 0),
        2 => with_args!(black_box(1), black_box(2), 0, 0, 0, 0),
        3 => with_args!(black_box(1), black_box(2), black_box(3), 0, 0, 0),
        4 => with_args!(black_box(1), black_box(2), black_box(3), black_box(4), 0, 0),
        5 => with_args!(
            black_box(1),
            black_box(2),
            black_box(3),
            black_box(4),
            black_box(5),
            0
        ),
        _ => with_args!(
            black_box(1),
            black_box(2),
            black_box(3),
            black_box(4),
            black_box(5),
            black_box(6)
        ),
    };
    Ok(Prepared::new(b))
}

#[cfg(not(target_arch = "x86_64"))]
fn prepare_args(_: &Params) -> Result<Prepared, BenchError> {
    Err(BenchError::Skip(
        "the raw syscall instruction is only wired up on x86_64".into(),
    ))
}

const VIA: &[ParamSpec] = &[ParamSpec {
    name: "via",
    default: "vdso,syscall",
    about: "vdso: the C library's call, served in user space by the vDSO; syscall: a real system call through the C library's generic syscall()",
    kind: Kind::Choice(&["vdso", "syscall"]),
}];

fn vdso_or_skip(p: &Params) -> Result<bool, BenchError> {
    let vdso = p.get("via") == "vdso";
    if vdso && !sys::has_vdso() {
        return Err(BenchError::Skip(
            "the kernel maps no vDSO into this process".into(),
        ));
    }
    Ok(vdso)
}

/// `syscall.clock_gettime`.
pub const CLOCK_GETTIME: Simple = Simple {
    name: "syscall.clock_gettime",
    facts: Facts {
        quotes: &[quote(VdsoClock, 0, "via=vdso", "clock_gettime")],
        ..SYSCALL
    },
    about: "clock_gettime(CLOCK_MONOTONIC) through the vDSO, or as a real system call",
    origin: "manea1999 §2",
    params: VIA,
    prepare: |p| {
        let b = if vdso_or_skip(p)? {
            body(|| {
                black_box(sys::clock_gettime(libc::CLOCK_MONOTONIC));
                Ok(())
            })
        } else {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            body(move || {
                check(
                    sys::clock_gettime_syscall(libc::CLOCK_MONOTONIC, &mut ts),
                    "clock_gettime",
                )
            })
        };
        Ok(Prepared::new(b))
    },
};

/// `syscall.gettimeofday`.
pub const GETTIMEOFDAY: Simple = Simple {
    name: "syscall.gettimeofday",
    facts: SYSCALL,
    about: "gettimeofday through the vDSO, or as a real system call",
    origin: "manea1999 §2",
    params: VIA,
    prepare: |p| {
        let vdso = vdso_or_skip(p)?;
        let mut tv = libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        };
        let b = if vdso {
            body(move || check(sys::gettimeofday(&mut tv) as i64, "gettimeofday"))
        } else {
            body(move || check(sys::gettimeofday_syscall(&mut tv), "gettimeofday"))
        };
        Ok(Prepared::new(b))
    },
};

/// `syscall.time`.
pub const TIME: Simple = Simple {
    name: "syscall.time",
    facts: SYSCALL,
    about: "time(NULL) through the vDSO, or as a real system call",
    origin: "perez1976 Fig. 4 time",
    params: VIA,
    prepare: prepare_time,
};

fn prepare_time(p: &Params) -> Result<Prepared, BenchError> {
    if vdso_or_skip(p)? {
        return Ok(Prepared::new(body(|| check(sys::time(), "time"))));
    }
    #[cfg(target_arch = "x86_64")]
    return Ok(Prepared::new(body(|| check(sys::time_syscall(), "time"))));
    #[cfg(not(target_arch = "x86_64"))]
    Err(BenchError::Skip(
        "this architecture has no time system call".into(),
    ))
}

/// `syscall.getcpu`.
pub const GETCPU: Simple = Simple {
    name: "syscall.getcpu",
    facts: SYSCALL,
    about: "getcpu through the vDSO, or as a real system call",
    origin: "",
    params: VIA,
    prepare: |p| {
        let vdso = vdso_or_skip(p)?;
        let (mut cpu, mut node) = (0u32, 0u32);
        let b = if vdso {
            body(move || check(sys::getcpu_libc(&mut cpu, &mut node) as i64, "getcpu"))
        } else {
            body(move || check(sys::getcpu_syscall(&mut cpu, &mut node), "getcpu"))
        };
        Ok(Prepared::new(b))
    },
};
