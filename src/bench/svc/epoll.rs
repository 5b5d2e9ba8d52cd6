//! epoll as `perf bench epoll` times it: `svc.epoll.ctl`, one epoll_ctl call cycling
//! ADD, MOD and DEL over `fds` eventfds (perf's ctl), and `svc.epoll.wait`, a wake-up
//! through epoll_wait and back between this thread and a partner thread (perf's wait,
//! whose waiters each take events a writer thread makes).
//!
//! Every descriptor is made in `prepare` and closed with the body; the partner thread
//! is stopped and joined.

use crate::bench::ctx::{place_pinned, placement_among};
use crate::bench::facts::*;
use crate::bench::{check, Kind, OrOs, ParamSpec, Params, Prepared, Simple};
use crate::error::BenchError;
use crate::harness::Body;
use crate::os::affinity::Pin;
use crate::os::peers::{epoll_create, epoll_ctl, epoll_ctl_data, epoll_wait};
use crate::os::{sys, task};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

static CTL_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "fds",
        default: "64",
        about: "eventfds the calls cycle over (perf's -f; its default 64 per thread)",
        kind: Kind::Int { min: 1, max: 4096 },
    },
    ParamSpec {
        name: "process",
        default: "single-threaded",
        about: "single-threaded: the calls' process has one thread, so the kernel looks \
                their descriptors up without taking a reference · multi-threaded: an \
                idle thread of the body's lives in the process, so each lookup takes and \
                drops one, as in perf, whose main thread waits beside its workers",
        kind: Kind::Choice(&["single-threaded", "multi-threaded"]),
    },
];

/// `svc.epoll.ctl`.
pub const CTL: Simple = Simple {
    name: "svc.epoll.ctl",
    facts: NAMED.on(Libc, "epoll_ctl"),
    about: "one epoll_ctl call on an epoll instance, in turn EPOLL_CTL_ADD, MOD and DEL of each of `fds` eventfds (perf bench epoll ctl; its threads are copies=N copies_as=thread, each with its own instance)",
    origin: "perf bench epoll ctl",
    params: CTL_PARAMS,
    prepare: prepare_ctl,
};

struct Ctl {
    ep: OwnedFd,
    fds: Vec<OwnedFd>,
    /// The next call: fd index × 3 + which op.
    next: usize,
    _idle: Option<crate::bench::sync::Idle>,
}

fn prepare_ctl(p: &Params) -> Result<Prepared, BenchError> {
    let n = p.int("fds") as usize;
    super::need_fds(n + 1)?;
    let ep = epoll_create().or_os("epoll_create1")?;
    let fds = (0..n)
        .map(|_| sys::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK))
        .collect::<Result<Vec<_>, _>>()
        .or_os("eventfd")?;
    let idle = match p.get("process") {
        "multi-threaded" => Some(crate::bench::sync::Idle::start()?),
        _ => None,
    };
    let ctl = Ctl {
        ep,
        fds,
        next: 0,
        _idle: idle,
    };
    Ok(Prepared::new(Box::new(ctl)).op("epoll_ctl"))
}

impl Body for Ctl {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        let ep = self.ep.as_raw_fd();
        for _ in 0..iters {
            let fd = self.fds[self.next / 3].as_raw_fd();
            let r = match self.next % 3 {
                0 => epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, libc::EPOLLIN as u32),
                1 => epoll_ctl(ep, libc::EPOLL_CTL_MOD, fd, libc::EPOLLOUT as u32),
                _ => epoll_ctl(ep, libc::EPOLL_CTL_DEL, fd, 0),
            };
            check(r.into(), "epoll_ctl")?;
            self.next += 1;
            if self.next == self.fds.len() * 3 {
                self.next = 0;
            }
        }
        Ok(())
    }
}

static WAIT_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "fds",
        default: "1",
        about: "eventfds in the partner's epoll set; each round trip writes the next one",
        kind: Kind::Int { min: 1, max: 1024 },
    },
    placement_among(
        "same-cpu,cross-cpu",
        "the partner thread on this CPU or on another one",
        &["same-cpu", "cross-cpu"],
    ),
];

/// `svc.epoll.wait`.
pub const WAIT: Simple = Simple {
    name: "svc.epoll.wait",
    facts: NAMED.on(Libc, "write, epoll_wait, read"),
    about: "write(2) to an eventfd a partner thread waits on in epoll_wait; it reads it and writes back an eventfd this thread waits on in epoll_wait: one round trip of two wake-ups through epoll (perf bench epoll wait)",
    origin: "perf bench epoll wait",
    params: WAIT_PARAMS,
    prepare: prepare_wait,
};

struct Wait {
    theirs: Arc<Vec<OwnedFd>>,
    ep: OwnedFd,
    mine: OwnedFd,
    next: usize,
    stop: Arc<AtomicBool>,
    partner: Option<JoinHandle<()>>,
    _pin: Option<Pin>,
}

fn partner(ep: OwnedFd, fds: &[OwnedFd], back: RawFd, stop: &AtomicBool) {
    let mut ev = [libc::epoll_event { events: 0, u64: 0 }; 8];
    let mut buf = [0u8; 8];
    let one = 1u64.to_ne_bytes();
    while !stop.load(Ordering::Acquire) {
        let n = epoll_wait(ep.as_raw_fd(), &mut ev);
        if n < 0 {
            continue;
        }
        for e in &ev[..n as usize] {
            task::read_fd(fds[e.u64 as usize].as_raw_fd(), &mut buf);
            task::write_fd(back, &one);
        }
    }
}

fn prepare_wait(p: &Params) -> Result<Prepared, BenchError> {
    let n = p.int("fds") as usize;
    super::need_fds(n + 4)?;
    let os = |what: &'static str| move |e| BenchError::os(what, e);
    let (pin, cpus) = place_pinned(p.get("placement"))?;
    let theirs: Vec<OwnedFd> = (0..n)
        .map(|_| sys::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK))
        .collect::<Result<_, _>>()
        .map_err(os("eventfd"))?;
    let their_ep = epoll_create().map_err(os("epoll_create1"))?;
    for (i, fd) in theirs.iter().enumerate() {
        let ev = libc::EPOLLIN as u32;
        let r = epoll_ctl_data(
            their_ep.as_raw_fd(),
            libc::EPOLL_CTL_ADD,
            fd.as_raw_fd(),
            ev,
            i as u64,
        );
        check(r.into(), "epoll_ctl")?;
    }
    let mine =
        sys::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK).map_err(os("eventfd"))?;
    let ep = epoll_create().map_err(os("epoll_create1"))?;
    check(
        epoll_ctl(
            ep.as_raw_fd(),
            libc::EPOLL_CTL_ADD,
            mine.as_raw_fd(),
            libc::EPOLLIN as u32,
        )
        .into(),
        "epoll_ctl",
    )?;
    let theirs = Arc::new(theirs);
    let stop = Arc::new(AtomicBool::new(false));
    let back = mine.as_raw_fd();
    let (t, s) = (theirs.clone(), stop.clone());
    let cpu = cpus.first().copied();
    let handle = std::thread::Builder::new()
        .name("syscost-epoll".into())
        .spawn(move || {
            let _pin = cpu.map(Pin::to);
            partner(their_ep, &t, back, &s);
        })
        .map_err(os("spawn the partner thread"))?;
    let b = Wait {
        theirs,
        ep,
        mine,
        next: 0,
        stop,
        partner: Some(handle),
        _pin: pin,
    };
    Ok(Prepared::new(Box::new(b))
        .op("round trip")
        .plan(crate::bench::blocking(true)))
}

impl Body for Wait {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        let one = 1u64.to_ne_bytes();
        let mut buf = [0u8; 8];
        let mut ev = [libc::epoll_event { events: 0, u64: 0 }; 1];
        for _ in 0..iters {
            let fd = self.theirs[self.next].as_raw_fd();
            self.next = (self.next + 1) % self.theirs.len();
            if task::write_fd(fd, &one) != 8 {
                return Err(BenchError::last_os("write eventfd"));
            }
            loop {
                let r = epoll_wait(self.ep.as_raw_fd(), &mut ev);
                if r == 1 {
                    break;
                }
                if r == -1 && task::errno() != libc::EINTR {
                    return Err(BenchError::last_os("epoll_wait"));
                }
            }
            if task::read_fd(self.mine.as_raw_fd(), &mut buf) != 8 {
                return Err(BenchError::last_os("read eventfd"));
            }
        }
        Ok(())
    }
}

impl Drop for Wait {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        task::write_fd(self.theirs[0].as_raw_fd(), &1u64.to_ne_bytes());
        if let Some(t) = self.partner.take() {
            let _ = t.join();
        }
    }
}
