//! Copy-in cost: system calls whose argument is an array the kernel copies in.

use crate::bench::facts::*;
use crate::bench::via::{self, Via};
use crate::bench::{body, check, Kind, OrOs, ParamSpec, Prepared, Simple};
use crate::error::BenchError;
use crate::os::{mem, raw, sys};
use std::os::fd::{AsFd, OwnedFd};

/// `syscall.writev`: n one-byte iovecs to /dev/null.
pub const WRITEV: Simple = Simple {
    name: "syscall.writev",
    facts: SYSCALL,
    about: "writev of n one-byte iovecs to /dev/null: copying in the iovec array",
    origin: "perez1976 (argument fetching), DESIGN copy-in",
    params: &[
        ParamSpec {
            name: "n",
            default: "1,8,64,512",
            about: "iovec entries (IOV_MAX is 1024)",
            kind: Kind::Int { min: 1, max: 1024 },
        },
        via::BOTH,
    ],
    prepare: |p| {
        let n = p.int("n") as usize;
        let via = Via::of(p)?;
        let null = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .or_os("open /dev/null")?;
        let byte = Box::new([0u8; 1]);
        let iov: Vec<libc::iovec> = (0..n)
            .map(|_| libc::iovec {
                iov_base: byte.as_ptr() as *mut _,
                iov_len: 1,
            })
            .collect();
        let fd = OwnedFd::from(null);
        let wrote = sys::writev(fd.as_fd(), &iov);
        if wrote != n as isize {
            return Err(BenchError::Failed(format!(
                "writev to /dev/null wrote {wrote} of {n} bytes"
            )));
        }
        Ok(Prepared::new(match via {
            Via::Libc => body(move || {
                let _keep = &byte; // the iovecs point into it
                check(sys::writev(fd.as_fd(), &iov) as i64, "writev")
            }),
            Via::Raw => via::repeat(move |n| {
                let _keep = &byte;
                via::call_n(raw::writev_call(fd.as_fd(), &iov), n)
            }),
        }))
    },
};

/// `syscall.poll`: n ready descriptors, no waiting.
pub const POLL: Simple = Simple {
    name: "syscall.poll",
    facts: SYSCALL,
    about: "poll with a zero timeout on n descriptors that are all ready (copy-in of n pollfds)",
    origin: "DESIGN copy-in",
    params: &[
        ParamSpec {
            name: "n",
            default: "1,8,64,512",
            about: "descriptors polled",
            kind: Kind::Int { min: 1, max: 4096 },
        },
        via::BOTH,
    ],
    prepare: |p| {
        let n = p.int("n") as usize;
        room_for(n)?;
        // One eventfd with a count is always readable; n duplicates are n descriptors.
        let efd = sys::eventfd(1, libc::EFD_CLOEXEC).or_os("eventfd")?;
        let fds: Vec<OwnedFd> = (0..n)
            .map(|_| sys::dup_owned(efd.as_fd()))
            .collect::<Result<_, _>>()
            .or_os("dup")?;
        polling(fds, libc::POLLIN, Via::of(p)?, efd)
    },
};

/// `syscall.poll.file`: n files with no poll method of their own.
pub const POLL_FILE: Simple = Simple {
    name: "syscall.poll.file",
    facts: NAMED,
    about: "poll with a zero timeout on n distinct files whose file system has no poll \
            method (memfds: the kernel answers with its default mask, as for will-it-scale's \
            files in /tmp), asking for POLLOUT: the descriptor walk without a driver's poll",
    origin: "will-it-scale poll1, poll2",
    params: &[
        ParamSpec {
            name: "n",
            default: "1,128",
            about: "files polled (will-it-scale: 1 in poll1, 128 in poll2)",
            kind: Kind::Int { min: 1, max: 4096 },
        },
        via::BOTH,
    ],
    prepare: |p| {
        let n = p.int("n") as usize;
        room_for(n)?;
        let fds: Vec<OwnedFd> = (0..n)
            .map(|_| mem::memfd(0))
            .collect::<Result<_, _>>()
            .or_os("memfd_create")?;
        polling(fds, libc::POLLOUT, Via::of(p)?, ())
    },
};

/// Skips when `n` descriptors (and the run's own) would pass RLIMIT_NOFILE.
fn room_for(n: usize) -> Result<(), BenchError> {
    let limit = sys::nofile_limit();
    if n as u64 + 64 > limit {
        return Err(BenchError::Skip(format!(
            "n={n} needs {n} descriptors but RLIMIT_NOFILE is {limit} (raise it with ulimit -n)"
        )));
    }
    Ok(())
}

/// The body that polls `fds` for `events` with a zero timeout; every one must be ready.
/// `keep` lives as long as the body (what the descriptors depend on).
fn polling<K: 'static>(
    fds: Vec<OwnedFd>,
    events: libc::c_short,
    via: Via,
    keep: K,
) -> Result<Prepared, BenchError> {
    let n = fds.len();
    let mut pfds: Vec<libc::pollfd> = fds
        .iter()
        .map(|f| libc::pollfd {
            fd: std::os::fd::AsRawFd::as_raw_fd(f),
            events,
            revents: 0,
        })
        .collect();
    let ready = sys::poll_now(&mut pfds);
    if ready != n as i32 {
        return Err(BenchError::Failed(format!(
            "poll found {ready} of {n} descriptors ready"
        )));
    }
    Ok(Prepared::new(match via {
        Via::Libc => body(move || {
            let _keep = (&keep, &fds); // the pollfds name these descriptors
            check(sys::poll_now(&mut pfds) as i64, "poll")
        }),
        Via::Raw => via::repeat(move |n| {
            let _keep = (&keep, &fds);
            via::call_n(raw::poll_now_call(&mut pfds), n)
        }),
    }))
}
