//! Newer calls that no classic peer times and kernel engineers now measure: getrandom
//! (the kernel's, and the vDSO's where the C library routes it there), membarrier,
//! pidfd_open, process_vm_readv and mseal; and getpgid, newer perf's `syscall getpgid`.
//! A call the kernel refuses (ENOSYS on an older kernel, EPERM, EINVAL for a command it
//! lacks) is skipped with the kernel's reason.

use crate::bench::facts::*;
use crate::bench::{body, check, Kind, OrOs, ParamSpec, Prepared, Simple};
use crate::error::BenchError;
use crate::os::peers;
use std::hint::black_box;

/// The skip for a call the kernel refused with `e` in prepare.
fn refused(call: &str, e: std::io::Error) -> BenchError {
    match e.raw_os_error() {
        Some(libc::ENOSYS) => {
            BenchError::Skip(format!("{call}: this kernel lacks it (ENOSYS)"))
        }
        Some(libc::EPERM | libc::EACCES) => {
            BenchError::Skip(format!("{call}: not permitted here ({e})"))
        }
        Some(libc::EINVAL) => {
            BenchError::Skip(format!("{call}: refused by this kernel ({e})"))
        }
        _ => BenchError::os(call, e),
    }
}

/// `syscall.getpgid`.
pub const GETPGID: Simple = Simple {
    name: "syscall.getpgid",
    facts: NAMED.on(Libc, "getpgid"),
    about: "getpgid(0): this process's group (newer perf bench syscall getpgid)",
    origin: "perf bench syscall getpgid",
    params: &[],
    prepare: |_| {
        Ok(Prepared::new(body(|| {
            black_box(peers::getpgid());
            Ok(())
        })))
    },
};

static RANDOM_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "size",
        default: "16",
        about: "bytes asked for",
        kind: Kind::Bytes { min: 1, max: 1 << 20 },
    },
    ParamSpec {
        name: "via",
        default: "libc",
        about: "libc: the C library's getrandom (a system call before glibc 2.41) · vdso: the vDSO's, where the C library routes getrandom there (glibc 2.41+; skipped otherwise)",
        kind: Kind::Choice(&["libc", "vdso"]),
    },
];

/// `syscall.getrandom`.
pub const GETRANDOM: Simple = Simple {
    name: "syscall.getrandom",
    facts: NAMED,
    about: "getrandom(buf, size, 0): random bytes from the kernel's generator, or from the vDSO's",
    origin: "",
    params: RANDOM_PARAMS,
    prepare: |p| {
        let size = p.int("size") as usize;
        if p.get("via") == "vdso" {
            let v = peers::libc_version();
            let newer = v
                .split('.')
                .nth(1)
                .and_then(|m| m.parse::<u32>().ok())
                .is_some_and(|m| m >= 41);
            if !newer {
                return Err(BenchError::Skip(format!(
                    "glibc {v} makes getrandom a system call; its vDSO getrandom came in 2.41"
                )));
            }
        }
        let mut buf = vec![0u8; size];
        peers::getrandom(&mut buf, 0);
        Ok(Prepared::new(body(move || {
            let r = peers::getrandom(&mut buf, 0);
            if r != buf.len() as isize {
                return Err(BenchError::last_os("getrandom"));
            }
            Ok(())
        })))
    },
};

const PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
const REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;
const GLOBAL_EXPEDITED: libc::c_int = 1 << 1;
const REGISTER_GLOBAL_EXPEDITED: libc::c_int = 1 << 2;

static MEMBARRIER_PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "cmd",
    default: "private_expedited",
    about: "private_expedited: an IPI to the CPUs running this process's threads · global_expedited: to those running any registered process",
    kind: Kind::Choice(&["private_expedited", "global_expedited"]),
}];

/// `syscall.membarrier`.
pub const MEMBARRIER: Simple = Simple {
    name: "syscall.membarrier",
    facts: NAMED.on(Generic, "membarrier"),
    about: "membarrier(MEMBARRIER_CMD_*_EXPEDITED): a memory barrier on every CPU running the process's threads (the process registered in prepare)",
    origin: "",
    params: MEMBARRIER_PARAMS,
    prepare: |p| {
        let (register, cmd) = match p.get("cmd") {
            "global_expedited" => (REGISTER_GLOBAL_EXPEDITED, GLOBAL_EXPEDITED),
            _ => (REGISTER_PRIVATE_EXPEDITED, PRIVATE_EXPEDITED),
        };
        if peers::membarrier(register) != 0 {
            return Err(refused("membarrier register", std::io::Error::last_os_error()));
        }
        Ok(Prepared::new(body(move || check(peers::membarrier(cmd), "membarrier"))))
    },
};

/// `syscall.pidfd_open`.
pub const PIDFD_OPEN: Simple = Simple {
    name: "syscall.pidfd_open",
    facts: NAMED.on(Generic, "pidfd_open, then close (libc)"),
    about: "pidfd_open of this process, then close of the descriptor (one pair)",
    origin: "",
    params: &[],
    prepare: |_| {
        let pid = std::process::id() as libc::pid_t;
        let r = peers::pidfd_open_raw(pid);
        if r < 0 {
            return Err(refused("pidfd_open", std::io::Error::last_os_error()));
        }
        drop(peers::own_fd(r));
        Ok(Prepared::new(body(move || {
            let r = peers::pidfd_open_raw(pid);
            check(r, "pidfd_open")?;
            drop(peers::own_fd(r));
            Ok(())
        }))
        .op("pidfd_open+close pair"))
    },
};

static VM_PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "size",
    default: "8,4k",
    about: "bytes read per call",
    kind: Kind::Bytes {
        min: 1,
        max: 1 << 24,
    },
}];

/// `syscall.process_vm_readv`.
pub const PROCESS_VM_READV: Simple = Simple {
    name: "syscall.process_vm_readv",
    facts: NAMED.on(Libc, "process_vm_readv"),
    about: "process_vm_readv of `size` bytes from a buffer of a process (this one, by its pid: the same path as another's, the permission check passing at once) into a local one",
    origin: "",
    params: VM_PARAMS,
    prepare: |p| {
        let size = p.int("size") as usize;
        let pid = std::process::id() as libc::pid_t;
        let src = vec![7u8; size];
        let mut dst = vec![0u8; size];
        let at = src.as_ptr() as usize;
        if peers::process_vm_read(pid, &mut dst, at) < 0 {
            return Err(refused("process_vm_readv", std::io::Error::last_os_error()));
        }
        Ok(Prepared::new(body(move || {
            let _keep = &src;
            if peers::process_vm_read(pid, &mut dst, at) != size as isize {
                return Err(BenchError::last_os("process_vm_readv"));
            }
            Ok(())
        })))
    },
};

/// `syscall.mseal`.
pub const MSEAL: Simple = Simple {
    name: "syscall.mseal",
    facts: NAMED.on(Generic, "mseal"),
    about: "mseal(2) of a page already sealed (sealing again succeeds): the call and its walk of the mappings; the one sealed page stays mapped until the process exits (the kernel lets nobody unmap it)",
    origin: "",
    params: &[],
    prepare: |_| {
        let page = peers::SealedPage::new().map_err(|e| refused("mseal", e))?;
        Ok(Prepared::new(body(move || check(page.seal(), "mseal"))))
    },
};

static SELECT_PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "n",
    default: "10,100,200",
    about: "descriptors in the set (lmbench lat_select's default 200)",
    kind: Kind::Int { min: 1, max: 1000 },
}];

/// `syscall.select`.
pub const SELECT: Simple = Simple {
    name: "syscall.select",
    facts: NAMED.on(Libc, "select"),
    about: "select(2) with a zero timeout on n descriptors of a file (/dev/null, opened n times), all ready for writing: lmbench lat_select's file case",
    origin: "mcvoy1996 lat_select",
    params: SELECT_PARAMS,
    prepare: |p| {
        let n = p.int("n") as usize;
        let files = (0..n)
            .map(|_| std::fs::OpenOptions::new().write(true).open("/dev/null"))
            .collect::<Result<Vec<_>, _>>()
            .or_os("open /dev/null")?;
        let fds: Vec<i32> = files.iter().map(std::os::fd::AsRawFd::as_raw_fd).collect();
        let set = peers::FdSet::of(&fds).map_err(|e| BenchError::Skip(e.to_string()))?;
        let nfds = fds.iter().max().map_or(0, |m| m + 1);
        Ok(Prepared::new(body(move || {
            let _keep = &files;
            let mut s = set;
            let r = peers::select_write_now(nfds, &mut s);
            if r != n as i32 {
                check(r.into(), "select")?;
                return Err(BenchError::Failed(format!("select found {r} of {n} ready")));
            }
            Ok(())
        })))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{tests::skip_is_expected, Params};
    use std::io::Error;

    /// The kernel's refusal faked: mseal's ENOSYS (kernels before 6.10) makes a skip
    /// the catalogue's smoke test accepts; a refusal nothing here explains does not.
    #[test]
    fn a_call_the_kernel_lacks_is_an_expected_skip() {
        let none = Params(vec![]);
        let skip = |errno| match refused("mseal", Error::from_raw_os_error(errno)) {
            BenchError::Skip(why) => why,
            other => panic!("errno {errno}: {other}"),
        };
        assert_eq!(
            skip_is_expected("syscall.mseal", &none, &skip(libc::ENOSYS)),
            Ok(())
        );
        assert!(skip_is_expected("syscall.mseal", &none, &skip(libc::EINVAL)).is_err());
        let other = refused("mseal", Error::from_raw_os_error(libc::EIO));
        assert!(matches!(other, BenchError::Failed(_)), "{other}");
    }
}
