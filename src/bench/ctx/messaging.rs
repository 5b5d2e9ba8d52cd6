//! `ctx.messaging`: `perf bench sched messaging` (hackbench) with threads (perf's `-t`):
//! `groups` groups of `fds` senders and `fds` receivers; in one operation every sender
//! writes one `size`-byte message to every receiver of its group, through a socket
//! pair (or a pipe) per receiver, and every receiver reads all it was sent. Placement
//! is the scheduler's, as in hackbench.
//!
//! The threads are made in `prepare` and wait on a futex word between operations; the
//! measuring thread releases them (one wake-up) and waits until the last receiver is
//! done. They are stopped and joined, their descriptors closed, with the body.

use crate::bench::facts::*;
use crate::bench::{Kind, OrOs, ParamSpec, Params, Prepared, Simple};
use crate::error::BenchError;
use crate::harness::Body;
use crate::os::peers::{futex_wait, futex_wake};
use crate::os::task;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

static PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "groups",
        default: "1",
        about: "groups of senders and receivers (perf's -g; its default 10)",
        kind: Kind::Int { min: 1, max: 32 },
    },
    ParamSpec {
        name: "fds",
        default: "20",
        about: "senders, and receivers, per group (hackbench's 20)",
        kind: Kind::Int { min: 1, max: 64 },
    },
    ParamSpec {
        name: "size",
        default: "100",
        about: "bytes per message (hackbench's 100)",
        kind: Kind::Bytes { min: 1, max: 4096 },
    },
    ParamSpec {
        name: "ipc",
        default: "socket",
        about: "socket: an AF_UNIX stream socket pair per receiver · pipe: a pipe (perf's -p)",
        kind: Kind::Choice(&["socket", "pipe"]),
    },
    super::placement_among(
        "free",
        "every thread placed by the scheduler, as hackbench leaves them",
        &["free"],
    ),
];

/// `ctx.messaging`.
pub const MESSAGING: Simple = Simple {
    name: "ctx.messaging",
    facts: Facts {
        serial: Some("it already uses two CPUs or a ring of tasks"),
        switches: true,
        ..NAMED.on(
            Libc,
            "the release (FUTEX_WAKE, syscall); every thread's write and read",
        )
    },
    about: "hackbench with threads: every one of `fds` senders per group writes a `size`-byte message to every receiver of its group, which reads them all: one operation is groups×fds×fds messages (perf bench sched messaging -t)",
    origin: "perf bench sched messaging",
    params: PARAMS,
    prepare,
};

#[derive(Default)]
struct Shared {
    gen: AtomicU32,
    loops: AtomicU64,
    done: AtomicU32,
    stop: AtomicBool,
}

impl Shared {
    /// Waits for the next release after `seen`; false when told to stop.
    fn next(&self, seen: &mut u32) -> bool {
        loop {
            let g = self.gen.load(Ordering::Acquire);
            if g != *seen {
                *seen = g;
                return !self.stop.load(Ordering::Acquire);
            }
            futex_wait(&self.gen, g);
        }
    }
}

struct Messaging {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
    receivers: u32,
    _fds: Vec<Arc<(OwnedFd, OwnedFd)>>,
}

fn write_all(fd: RawFd, buf: &[u8]) -> bool {
    let mut off = 0;
    while off < buf.len() {
        let n = task::write_fd(fd, &buf[off..]);
        if n <= 0 {
            return false;
        }
        off += n as usize;
    }
    true
}

fn channel(pipe: bool) -> Result<(OwnedFd, OwnedFd), BenchError> {
    if pipe {
        task::pipe().or_os("pipe")
    } else {
        task::socketpair().or_os("socketpair")
    }
}

fn prepare(p: &Params) -> Result<Prepared, BenchError> {
    let (groups, fds) = (p.int("groups") as usize, p.int("fds") as usize);
    let size = p.int("size") as usize;
    let pipe = p.get("ipc") == "pipe";
    let limit = crate::os::sys::nofile_limit();
    if (groups * fds * 2 + 64) as u64 > limit {
        return Err(BenchError::Skip(format!(
            "{} descriptors would pass the open-file limit ({limit}): fewer groups",
            groups * fds * 2
        )));
    }
    let shared = Arc::new(Shared::default());
    let mut b = Messaging {
        shared: shared.clone(),
        threads: Vec::new(),
        receivers: (groups * fds) as u32,
        _fds: Vec::new(),
    };
    let total = b.receivers;
    for _ in 0..groups {
        let chans: Vec<Arc<(OwnedFd, OwnedFd)>> = (0..fds)
            .map(|_| channel(pipe).map(Arc::new))
            .collect::<Result<_, _>>()?;
        b._fds.extend(chans.iter().cloned());
        for c in &chans {
            let (s, c) = (shared.clone(), c.clone());
            let per = (fds * size) as u64;
            b.threads.push(spawn("syscost-recv", move || {
                let mut buf = vec![0u8; size];
                let mut seen = 0;
                while s.next(&mut seen) {
                    let mut left = s.loops.load(Ordering::Acquire) * per;
                    while left > 0 {
                        let want = buf.len().min(left as usize);
                        let n = task::read_fd(c.0.as_raw_fd(), &mut buf[..want]);
                        if n <= 0 {
                            return;
                        }
                        left -= n as u64;
                    }
                    if s.done.fetch_add(1, Ordering::AcqRel) + 1 == total {
                        task::futex_wake(&s.done, 1);
                    }
                }
            })?);
        }
        for _ in 0..fds {
            let (s, outs) = (shared.clone(), chans.clone());
            b.threads.push(spawn("syscost-send", move || {
                let msg = vec![0x5au8; size];
                let mut seen = 0;
                while s.next(&mut seen) {
                    for _ in 0..s.loops.load(Ordering::Acquire) {
                        for o in &outs {
                            if !write_all(o.1.as_raw_fd(), &msg) {
                                return;
                            }
                        }
                    }
                }
            })?);
        }
    }
    Ok(Prepared::new(Box::new(b))
        .op("round of groups×fds×fds messages")
        .plan(crate::bench::blocking(true)))
}

fn spawn(
    name: &str,
    f: impl FnOnce() + Send + 'static,
) -> Result<JoinHandle<()>, BenchError> {
    std::thread::Builder::new()
        .name(name.into())
        .stack_size(64 << 10)
        .spawn(f)
        .or_os("spawn a messaging thread")
}

impl Body for Messaging {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        let s = &self.shared;
        s.done.store(0, Ordering::Release);
        s.loops.store(iters, Ordering::Release);
        s.gen.fetch_add(1, Ordering::AcqRel);
        futex_wake(&s.gen, i32::MAX);
        loop {
            let d = s.done.load(Ordering::Acquire);
            if d >= self.receivers {
                return Ok(());
            }
            let second = libc::timespec {
                tv_sec: 10,
                tv_nsec: 0,
            };
            if task::futex_wait(&s.done, d, Some(&second)) == -1
                && task::errno() == libc::ETIMEDOUT
            {
                return Err(BenchError::Failed(format!(
                    "{d} of {} receivers done after 10 s without progress: a messaging thread stopped",
                    self.receivers
                )));
            }
        }
    }
}

impl Drop for Messaging {
    fn drop(&mut self) {
        let s = &self.shared;
        s.stop.store(true, Ordering::Release);
        s.gen.fetch_add(1, Ordering::AcqRel);
        futex_wake(&s.gen, i32::MAX);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
