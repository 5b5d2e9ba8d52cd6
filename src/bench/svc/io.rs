//! I/O to the null device: VMS's `$QIOW` to NLA0: is a synchronous write(2) to
//! /dev/null; its `$QIO` (queue, then collect the completion) is an io_uring write,
//! submitted and reaped through the raw system calls.
//!
//! An io_uring write is one of two different things, and `issue` names which:
//! `inline`, the kernel tries the write within `io_uring_enter` and posts its
//! completion before returning (a /dev/null write supports non-blocking issue, so it
//! never leaves the thread); `worker`, `IOSQE_ASYNC` hands it to an io-wq kernel
//! thread, which the submitter waits for, so each write includes waking a worker and
//! being woken by it, and costs what those wake-ups cost where they land (an idle CPU
//! in a VM wakes slowly). A kernel that cannot issue the write inline punts it to a
//! worker too; `inline` then says so (`blocked_per_write` near 1).

use super::{expect, fail};
use crate::bench::facts::*;
use crate::bench::Fact;
use crate::bench::{body, Kind, OrOs, ParamSpec, Params, Prepared, Simple};
use crate::error::BenchError;
use crate::harness::Body;
use crate::os::interrupt;
use crate::os::task;
use crate::os::uring::{Ring, SetupError, IORING_ENTER_GETEVENTS, IOSQE_ASYNC};
use std::cell::Cell;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::rc::Rc;

fn open_null() -> Result<File, BenchError> {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .or_os("open /dev/null")
}

/// `svc.null.write`.
pub const NULL_WRITE: Simple = Simple {
    name: "svc.null.write",
    facts: SYSCALL.on(Libc, "write"),
    about: "write(2) of 1 byte to /dev/null, opened in prepare",
    origin: "004 Table I: $QIOW to NLA0: (871 µs)",
    params: &[],
    prepare: |_| {
        let null = open_null()?;
        let byte = [0u8; 1];
        Ok(Prepared::new(body(move || {
            expect(
                task::write_fd(null.as_raw_fd(), &byte) as i64,
                1,
                "write /dev/null",
            )
        }))
        .op("write"))
    },
};

static URING_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "wait",
        default: "reap,wait",
        about: "reap: io_uring_enter(1, 0) then take the completion from the ring (entering again with GETEVENTS only if it is not there); wait: io_uring_enter(1, 1, GETEVENTS)",
        kind: Kind::Choice(&["reap", "wait"]),
    },
    ParamSpec {
        name: "issue",
        default: "inline,worker",
        about: "inline: the kernel issues the write within io_uring_enter; worker: IOSQE_ASYNC hands it to an io-wq kernel thread and the submitter waits for it (wake-ups both ways)",
        kind: Kind::Choice(&["inline", "worker"]),
    },
    crate::bench::ctx::placement_among(
        "same-cpu,cross-cpu",
        "issue=worker: the measuring thread pinned, the io-wq workers confined to its CPU or to another (IORING_REGISTER_IOWQ_AFF); inline takes same-cpu only",
        &["same-cpu", "cross-cpu"],
    ),
];

/// `svc.uring.write`.
pub const URING_WRITE: Simple = Simple {
    name: "svc.uring.write",
    facts: Facts {
        serial: Some("its io-wq workers already use other CPUs"),
        ..SYSCALL.on(Generic, "io_uring_enter (the C library has no wrapper)")
    },
    about: "an IORING_OP_WRITE of 1 byte to /dev/null through io_uring (raw syscalls): fill the entry, submit, reap the completion and check it wrote 1 byte",
    origin: "004 Table I: $QIO to NLA0: (813 µs); $QIOW (871 µs)",
    params: URING_PARAMS,
    prepare: prepare_uring,
};

struct UringWrite {
    ring: Ring,
    /// The measuring thread's pin (worker rows), undone when dropped.
    _pin: Option<crate::os::affinity::Pin>,
    null: File,
    wait: bool,
    /// Completions that were not in the ring right after a `reap` submission.
    late: u64,
    ops: u64,
    report: Rc<Cell<(u64, u64)>>,
}

impl UringWrite {
    #[inline(always)]
    fn one(&mut self) -> Result<(), BenchError> {
        if !self.ring.queue_write(self.null.as_raw_fd(), 1, 1) {
            return Err(BenchError::Failed(
                "io_uring: the submission queue is full".into(),
            ));
        }
        let (min, flags) = if self.wait {
            (1, IORING_ENTER_GETEVENTS)
        } else {
            (0, 0)
        };
        expect(self.ring.enter(1, min, flags), 1, "io_uring_enter")?;
        self.ops += 1;
        loop {
            if let Some((_, res)) = self.ring.reap() {
                return expect(res as i64, 1, "io_uring write of 1 byte to /dev/null");
            }
            if self.wait {
                return Err(BenchError::Failed(
                    "io_uring_enter waited for a completion, but the ring has none"
                        .into(),
                ));
            }
            self.late += 1;
            self.get_events()?;
        }
    }

    #[cold]
    fn get_events(&mut self) -> Result<(), BenchError> {
        if self.ring.enter(0, 1, IORING_ENTER_GETEVENTS) == -1 {
            if task::errno() != libc::EINTR {
                return Err(fail("io_uring_enter (GETEVENTS)"));
            }
            if interrupt::interrupted() {
                return Err(BenchError::Interrupted);
            }
        }
        Ok(())
    }
}

impl Body for UringWrite {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for _ in 0..iters {
            self.one()?;
        }
        Ok(())
    }
}

impl Drop for UringWrite {
    fn drop(&mut self) {
        self.report.set((self.late, self.ops));
    }
}

fn prepare_uring(p: &Params) -> Result<Prepared, BenchError> {
    let ring = match Ring::new(8, Box::new([0u8])) {
        Ok(r) => r,
        Err(SetupError::Unavailable(why)) => return Err(BenchError::Skip(why)),
        Err(SetupError::Failed(e)) => return Err(BenchError::os("io_uring_setup", e)),
    };
    let mut ring = ring;
    let worker = p.get("issue") == "worker";
    let placement = p.get("placement");
    let mut pin = None;
    if worker {
        ring.set_sqe_flags(IOSQE_ASYNC);
        // Where the worker runs decides the cost: two wake-ups on one CPU, or two
        // cross-CPU wake-ups (to a CPU that may have gone idle meanwhile). Left free,
        // the scheduler picks one or the other from run to run.
        let (mine, workers) = crate::bench::ctx::place_pinned(placement)?;
        ring.set_worker_cpus(&workers)
            .or_os("io_uring_register(IOWQ_AFF)")?;
        pin = mine;
    } else if placement != "same-cpu" {
        return Err(BenchError::Skip(
            "an inline write involves no other task: placement applies to issue=worker"
                .into(),
        ));
    }
    let wait = p.get("wait") == "wait";
    let report = Rc::new(Cell::new((0, 0)));
    let body = UringWrite {
        ring,
        _pin: pin,
        null: open_null()?,
        wait,
        late: 0,
        ops: 0,
        report: report.clone(),
    };
    // Handed to a worker, the write waits for it: the switches are the operation's.
    let plan = crate::bench::switching(worker);
    let prep = Prepared::new(Box::new(body))
        .op(if worker {
            "write handed to a kernel worker and reaped"
        } else {
            "write submitted and reaped"
        })
        .plan(plan);
    Ok(prep.after(Box::new(move |_, m| {
        let (late, ops) = report.get();
        let mut facts = vec![Fact::new(
            "blocked_per_write",
            m.analysis.accounting.vol_switches,
            "count",
            if worker {
                "voluntary switches per write: the submitter sleeping until the worker's completion (below 1 when the worker finished first)"
            } else {
                "voluntary switches per write: 0 when the kernel completed the write inline; near 1 means it punted the writes to a worker (this row then measures a worker)"
            },
        )];
        if !wait {
            facts.push(Fact::new(
                "inline_fraction",
                1.0 - late as f64 / ops.max(1) as f64,
                "ratio",
                "writes whose completion was already in the ring when io_uring_enter returned (the rest needed an enter with GETEVENTS)",
            ));
        }
        Ok(facts)
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::testing::{fact, sane};

    #[test]
    fn null_writes_cost_something_plausible() {
        sane(&NULL_WRITE, &[], 1e6).unwrap();
    }

    #[test]
    fn uring_writes_complete_or_skip_with_a_reason() {
        // A skip is allowed only where the kernel refuses io_uring.
        let allowed = crate::os::uring::disabled_setting() == Some(0);
        for (issue, placement) in [
            ("inline", "same-cpu"),
            ("worker", "same-cpu"),
            ("worker", "cross-cpu"),
        ] {
            for wait in ["reap", "wait"] {
                let set = [("wait", wait), ("issue", issue), ("placement", placement)];
                if placement == "cross-cpu"
                    && crate::os::affinity::process_cpus().len() < 2
                {
                    continue;
                }
                match sane(&URING_WRITE, &set, 1e7) {
                    Some(facts) => {
                        if wait == "reap" {
                            let f = fact(&facts, "inline_fraction");
                            assert!((0.0..=1.0).contains(&f), "{f}");
                        }
                        let b = fact(&facts, "blocked_per_write");
                        assert!((0.0..=2.0).contains(&b), "{issue} {wait}: {b}");
                    }
                    None => assert!(!allowed, "io_uring is enabled here but was skipped"),
                }
            }
        }
    }
}
