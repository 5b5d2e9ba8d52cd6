//! Event flags: a VMS event flag is a bit a process sets, clears, reads and waits for.
//! Linux's nearest object is an eventfd (a counter that is "set" when non-zero and can
//! be waited for with poll or epoll); a futex word is the other, lighter one.
//! `svc.canwak` is here too: a pending wake-up count is an eventfd counter.

use super::{expect, expect_errno, fail, need_fds};
use crate::bench::facts::*;
use crate::bench::{Kind, OrOs, ParamSpec, Params, Prepared, Simple};
use crate::error::BenchError;
use crate::harness::{Body, Plan};
use crate::os::svc::{epoll_event_zeroed, poll_forever, Epoll};
use crate::os::sys::eventfd;
use crate::os::task;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::AtomicU32;

/// The value one eventfd write adds.
const ONE: [u8; 8] = 1u64.to_ne_bytes();

fn new_eventfd(init: u32, flags: libc::c_int) -> Result<OwnedFd, BenchError> {
    eventfd(init, flags | libc::EFD_CLOEXEC).or_os("eventfd")
}

/// Reads whatever count is pending, without blocking (a clear eventfd is fine).
fn drain(fd: RawFd) -> Result<(), BenchError> {
    let mut buf = [0u8; 8];
    let r = task::read_fd(fd, &mut buf);
    if r == 8 || (r == -1 && task::errno() == libc::EAGAIN) {
        Ok(())
    } else {
        Err(fail("read (draining the eventfd)"))
    }
}

/// `svc.ef.set`.
pub const SET: Simple = Simple {
    name: "svc.ef.set",
    facts: SYSCALL.on(Libc, "write"),
    about: "write(2) of 1 to an eventfd: sets the flag (the counter is drained before each batch, untimed, so it never saturates)",
    origin: "004 Table I: $SETEF set event flag (135 µs)",
    params: &[],
    prepare: |_| {
        let fd = new_eventfd(0, libc::EFD_NONBLOCK)?;
        Ok(Prepared::new(Box::new(SetFlag { fd })).op("eventfd write"))
    },
};

struct SetFlag {
    fd: OwnedFd,
}

impl Body for SetFlag {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        let fd = self.fd.as_raw_fd();
        for _ in 0..iters {
            expect(task::write_fd(fd, &ONE) as i64, 8, "write (eventfd)")?;
        }
        Ok(())
    }
    fn reset(&mut self, _iters: u64) -> Result<(), BenchError> {
        drain(self.fd.as_raw_fd())
    }
}

/// FUTEX_WAKE on a word nobody waits on: the kernel hashes the word, finds no waiter
/// and returns 0. Shared by `svc.ef.set_futex` and `svc.wake.self`.
pub(super) fn futex_wake_nobody(_: &Params) -> Result<Prepared, BenchError> {
    let word = Box::new(AtomicU32::new(0));
    Ok(Prepared::new(crate::bench::body(move || {
        expect(task::futex_wake(&word, 1), 0, "futex (FUTEX_WAKE)")
    }))
    .op("FUTEX_WAKE"))
}

/// `svc.ef.set_futex`.
pub const SET_FUTEX: Simple = Simple {
    name: "svc.ef.set_futex",
    facts: SYSCALL.on(Generic, "FUTEX_WAKE"),
    about: "FUTEX_WAKE on a word nobody waits on (returns 0): setting a futex-based flag costs this call when the flag's owner may be asleep",
    origin: "004 Table I: $SETEF set event flag (135 µs)",
    params: &[],
    prepare: futex_wake_nobody,
};

/// `svc.ef.clear`.
pub const CLEAR: Simple = Simple {
    name: "svc.ef.clear",
    facts: SYSCALL.on(Libc, "read"),
    about: "read(2) of a set eventfd, which clears it: an EFD_SEMAPHORE eventfd preloaded (untimed) with one count per read of the batch, so each timed read takes exactly one",
    origin: "004 Table I: $CLREF clear event flag (81 µs)",
    params: &[],
    prepare: |_| {
        let fd = new_eventfd(0, libc::EFD_NONBLOCK | libc::EFD_SEMAPHORE)?;
        Ok(Prepared::new(Box::new(ClearFlag { fd })).op("eventfd read"))
    },
};

struct ClearFlag {
    fd: OwnedFd,
}

impl Body for ClearFlag {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        let fd = self.fd.as_raw_fd();
        let mut buf = [0u8; 8];
        for _ in 0..iters {
            expect(task::read_fd(fd, &mut buf) as i64, 8, "read (eventfd)")?;
        }
        Ok(())
    }
    fn reset(&mut self, iters: u64) -> Result<(), BenchError> {
        let fd = self.fd.as_raw_fd();
        drain_semaphore(fd)?;
        let n = iters.to_ne_bytes();
        expect(
            task::write_fd(fd, &n) as i64,
            8,
            "write (preloading the eventfd)",
        )
    }
}

/// Empties a semaphore eventfd left non-zero by a failed batch (one count per read).
fn drain_semaphore(fd: RawFd) -> Result<(), BenchError> {
    let mut buf = [0u8; 8];
    loop {
        let r = task::read_fd(fd, &mut buf);
        if r == -1 && task::errno() == libc::EAGAIN {
            return Ok(());
        }
        if r != 8 {
            return Err(fail("read (draining the eventfd)"));
        }
    }
}

/// `svc.ef.read`.
pub const READ: Simple = Simple {
    name: "svc.ef.read",
    facts: SYSCALL.on(Libc, "read"),
    about: "non-blocking read(2) of a clear eventfd (EFD_NONBLOCK): reading the flag without waiting; EAGAIN is the expected outcome, anything else fails",
    origin: "004 Table I: $READEF read event flags (87 µs)",
    params: &[],
    prepare: |_| {
        let fd = new_eventfd(0, libc::EFD_NONBLOCK)?;
        let mut buf = [0u8; 8];
        Ok(Prepared::new(crate::bench::body(move || {
            expect_errno(
                task::read_fd(fd.as_raw_fd(), &mut buf) as i64,
                libc::EAGAIN,
                "read (a clear eventfd)",
            )
        }))
        .op("eventfd read (EAGAIN)"))
    },
};

/// `svc.ef.wait`.
pub const WAIT: Simple = Simple {
    name: "svc.ef.wait",
    facts: SYSCALL.on(Libc, "poll"),
    about: "poll(2) with no time limit on one set eventfd: returns at once with it ready",
    origin: "004 Table I: $WAITFR wait for a (set) event flag (83 µs)",
    params: &[],
    prepare: |_| {
        let fd = new_eventfd(1, 0)?;
        let mut pfd = [libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }];
        Ok(Prepared::new(crate::bench::body(move || {
            let _keep = &fd;
            expect(poll_forever(&mut pfd) as i64, 1, "poll")
        }))
        .op("poll"))
    },
};

static WAIT_N_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "n",
        default: "4",
        about: "how many event flags (eventfds, all set)",
        kind: Kind::Int { min: 1, max: 1024 },
    },
    ParamSpec {
        name: "api",
        default: "poll,epoll",
        about: "poll(2) over all n, or epoll_wait(2) on a set built in prepare",
        kind: Kind::Choice(&["poll", "epoll"]),
    },
];

/// `svc.ef.wait_any`.
pub const WAIT_ANY: Simple = Simple {
    name: "svc.ef.wait_any",
    facts: SYSCALL.on(Libc, "poll or epoll_wait"),
    about: "one wait on n set eventfds that returns once one is ready: poll(2) over all n (poll scans every one; it has no early return), or epoll_wait(2) for one event",
    origin: "004 Table I: $WFLOR wait for logical OR of (set) event flags (84 µs)",
    params: WAIT_N_PARAMS,
    prepare: |p| wait_n(p, false),
};

/// `svc.ef.wait_all`.
pub const WAIT_ALL: Simple = Simple {
    name: "svc.ef.wait_all",
    facts: SYSCALL.on(Libc, "poll or epoll_wait"),
    about: "one wait on n set eventfds plus the check that all n are ready: poll(2) returning n, or epoll_wait(2) for n events returning n",
    origin: "004 Table I: $WFLAND wait for logical AND of (set) event flags (89 µs)",
    params: WAIT_N_PARAMS,
    prepare: |p| wait_n(p, true),
};

fn wait_n(p: &Params, all: bool) -> Result<Prepared, BenchError> {
    let n = p.int("n") as usize;
    need_fds(n + 1)?;
    let fds = (0..n)
        .map(|_| new_eventfd(1, 0))
        .collect::<Result<Vec<_>, _>>()?;
    // The wait returns n when all are wanted, at least 1 otherwise.
    let want = if all { n as i64 } else { 1 };
    if p.get("api") == "poll" {
        let mut pfds: Vec<libc::pollfd> = fds
            .iter()
            .map(|f| libc::pollfd {
                fd: f.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        return Ok(Prepared::new(crate::bench::body(move || {
            let _keep = &fds;
            let r = poll_forever(&mut pfds) as i64;
            if all || r < 1 {
                expect(r, want, "poll")
            } else {
                Ok(())
            }
        }))
        .op("poll"));
    }
    let ep = Epoll::new().map_err(|e| BenchError::os("epoll_create1", e))?;
    for (i, f) in fds.iter().enumerate() {
        ep.add(f.as_fd(), libc::EPOLLIN as u32, i as u64)
            .map_err(|e| BenchError::os("epoll_ctl", e))?;
    }
    let mut events = vec![epoll_event_zeroed(); if all { n } else { 1 }];
    Ok(Prepared::new(crate::bench::body(move || {
        let _keep = &fds;
        expect(ep.wait(&mut events) as i64, want, "epoll_wait")
    }))
    .op("epoll_wait"))
}

/// `svc.canwak`.
pub const CANWAK: Simple = Simple {
    name: "svc.canwak",
    facts: Facts {
        serial: Some("it already uses two CPUs (a forked sleeper)"),
        ..SYSCALL.on(Libc, "read")
    },
    about: "cancelling pending wake-ups: a non-blocking read(2) that drains an eventfd used as the wake-up count; timed one at a time, the count preloaded (untimed) before each",
    origin: "004 Table I: $CANWAK cancel wakeups (same process) (152 µs)",
    params: &[],
    prepare: |_| {
        let fd = new_eventfd(0, libc::EFD_NONBLOCK)?;
        Ok(Prepared::new(Box::new(CancelWakes { fd, buf: [0; 8] }))
            .op("eventfd drain")
            .plan(Plan {
                fixed_batch: Some(1),
                ..Plan::default()
            }))
    },
};

struct CancelWakes {
    fd: OwnedFd,
    buf: [u8; 8],
}

impl Body for CancelWakes {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        let fd = self.fd.as_raw_fd();
        for _ in 0..iters {
            expect(task::read_fd(fd, &mut self.buf) as i64, 8, "read (eventfd)")?;
        }
        Ok(())
    }
    fn reset(&mut self, _iters: u64) -> Result<(), BenchError> {
        let fd = self.fd.as_raw_fd();
        drain(fd)?;
        // Two wake-ups pending: the drain takes both at once.
        let two = 2u64.to_ne_bytes();
        expect(
            task::write_fd(fd, &two) as i64,
            8,
            "write (pending wake-ups)",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::testing::{params_of, prepared, sane};
    use crate::bench::Bench;

    #[test]
    fn each_flag_operation_costs_something_plausible() {
        for b in [&SET, &SET_FUTEX, &CLEAR, &READ, &WAIT, &CANWAK] {
            sane(b, &[], 1e6).expect("eventfd and futex exist everywhere");
        }
        for b in [&WAIT_ANY, &WAIT_ALL] {
            for api in ["poll", "epoll"] {
                for n in ["1", "4", "64"] {
                    sane(b, &[("api", api), ("n", n)], 1e6).expect("runs");
                }
            }
        }
    }

    #[test]
    fn set_never_saturates_and_clear_takes_one_count_per_read() {
        let mut set = prepared(&SET, &[]);
        for _ in 0..3 {
            set.body.reset(1000).unwrap();
            set.body.run(1000).unwrap();
        }
        let mut clear = prepared(&CLEAR, &[]);
        clear.body.reset(10).unwrap();
        clear.body.run(10).unwrap();
        // The eleventh read finds the flag clear: the operation fails, as it must.
        assert!(clear.body.run(1).is_err());
    }

    #[test]
    fn reading_a_set_flag_is_not_the_expected_eagain() {
        // The same call on a set eventfd returns data: that must fail the benchmark.
        let fd = new_eventfd(1, libc::EFD_NONBLOCK).unwrap();
        let mut buf = [0u8; 8];
        let r = task::read_fd(fd.as_raw_fd(), &mut buf) as i64;
        assert!(expect_errno(r, libc::EAGAIN, "read").is_err());
    }

    #[test]
    fn a_huge_n_is_refused_or_skipped_with_a_reason() {
        let p = params_of(&WAIT_ALL, &[("n", "1024"), ("api", "epoll")]);
        match WAIT_ALL.prepare(&p, &crate::bench::RunContext::default()) {
            Ok(mut prep) => prep.body.run(3).unwrap(),
            Err(BenchError::Skip(why)) => assert!(why.contains("ulimit -n"), "{why}"),
            Err(e) => panic!("{e}"),
        }
    }
}
