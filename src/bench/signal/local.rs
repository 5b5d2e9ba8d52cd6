//! Signals within the measuring thread: install a handler, block and unblock, raise and
//! catch at once, raise while blocked and take it at the unblock, the raise alone, and a
//! protection fault repaired by a SIGSEGV handler.

use super::{check_errno, expect_runs, own_ids};
use crate::bench::facts::*;
use crate::bench::Fact;
use crate::bench::{check, Prepared, Simple};
use crate::error::BenchError;
use crate::harness::{Body, EmptyLoop, Harness, Measurement, Plan};
use crate::os::signal::{self, ProtTrap, QueueInfo, SavedAction, SavedMask};
use crate::os::sys;
use crate::os::task::{self, Handler, SigSet};
use std::sync::MutexGuard;

/// The signal the one-thread benchmarks raise.
const SIG: libc::c_int = libc::SIGUSR1;

fn os(what: &'static str) -> impl Fn(std::io::Error) -> BenchError {
    move |e| BenchError::os(what, e)
}

/// The median of a measurement, NaN without samples.
fn median(m: &Measurement) -> f64 {
    m.analysis.figure()
}

/// Measures another body with the harness after the main measurement (its own lock and
/// restore): its median per operation.
fn measure_alone(h: &Harness<'_>, mut p: Prepared) -> Result<f64, BenchError> {
    let m = h.measure(p.body.as_mut(), &mut EmptyLoop, p.plan)?;
    Ok(median(&m))
}

// ---------------------------------------------------------------------------------
// signal.install

struct Install {
    acts: [sys::Action; 2],
    _old: SavedAction,
    _lock: MutexGuard<'static, ()>,
}

impl Body for Install {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for _ in 0..iters {
            check(
                sys::sigaction_set(libc::SIGUSR2, &self.acts[0]) as i64,
                "sigaction",
            )?;
            check(
                sys::sigaction_set(libc::SIGUSR2, &self.acts[1]) as i64,
                "sigaction",
            )?;
        }
        Ok(())
    }
}

/// `signal.install`.
pub const INSTALL: Simple = Simple {
    name: "signal.install",
    facts: Facts { switches: true, ..SYSCALL.on(Libc, "sigaction") },
    about: "sigaction installing a handler for SIGUSR2, alternately one of two (every call changes the disposition; syscall.sigaction re-installs the same one)",
    origin: "004 Table I: no own row; the setup of every AST service (003 §4 signal())",
    params: &[],
    prepare: |_| {
        let lock = task::signals_lock();
        let old = SavedAction::save(libc::SIGUSR2).map_err(os("sigaction"))?;
        let body = Install {
            acts: signal::two_actions(),
            _old: old,
            _lock: lock,
        };
        Ok(Prepared::new(Box::new(body))
            .op("sigaction call")
            .plan(Plan {
                per_iter: 2,
                ..Plan::default()
            }))
    },
};

// ---------------------------------------------------------------------------------
// signal.mask

struct Mask {
    set: SigSet,
    _mask: SavedMask,
    _lock: MutexGuard<'static, ()>,
}

impl Body for Mask {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for _ in 0..iters {
            check_errno(
                signal::change_mask(libc::SIG_BLOCK, &self.set),
                "sigprocmask",
            )?;
            check_errno(
                signal::change_mask(libc::SIG_UNBLOCK, &self.set),
                "sigprocmask",
            )?;
        }
        Ok(())
    }
}

fn prepare_mask() -> Result<Prepared, BenchError> {
    let lock = task::signals_lock();
    let saved = SavedMask::save();
    let set = SigSet::empty().with(SIG);
    check_errno(signal::change_mask(libc::SIG_UNBLOCK, &set), "sigprocmask")?;
    let body = Mask {
        set,
        _mask: saved,
        _lock: lock,
    };
    Ok(Prepared::new(Box::new(body)).op("block+unblock pair (two rt_sigprocmask calls)"))
}

/// `signal.mask`.
pub const MASK: Simple = Simple {
    name: "signal.mask",
    facts: Facts {
        switches: true,
        ..SYSCALL.on(Libc, "pthread_sigmask, twice")
    },
    about: "pthread_sigmask blocking SIGUSR1 and unblocking it again, nothing pending",
    origin: "004 Table I: $SETAST enable/disable ASTs (117 µs)",
    params: &[],
    prepare: |_| prepare_mask(),
};

// ---------------------------------------------------------------------------------
// signal.catch

struct Catch {
    ids: (libc::pid_t, libc::pid_t),
    _held: Installed,
}

impl Body for Catch {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        let before = task::delivered(SIG);
        for _ in 0..iters {
            check(task::tgkill(self.ids.0, self.ids.1, SIG), "tgkill")?;
        }
        expect_runs("the handler", before, task::delivered(SIG), iters)
    }
}

/// `signal.catch`.
pub const CATCH: Simple = Simple {
    name: "signal.catch",
    facts: Facts {
        switches: true,
        ..SYSCALL.on(
            Generic,
            "tgkill; the handler returns through the C library's restorer",
        )
    },
    about: "tgkill SIGUSR1 to this thread with a counting handler installed: the send, the delivery on the way out of the kernel, the handler and sigreturn",
    origin: "004 Table I: $DCLAST declare and call an AST (484 µs)",
    params: &[],
    prepare: |_| {
        let (_, held) = with_handler(libc::SIG_UNBLOCK)?;
        let body = Catch {
            ids: own_ids(),
            _held: held,
        };
        Ok(Prepared::new(Box::new(body)).op("send+delivery+handler+sigreturn"))
    },
};

// ---------------------------------------------------------------------------------
// signal.raise

struct Raise {
    _held: Installed,
}

impl Body for Raise {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        let before = task::delivered(SIG);
        for _ in 0..iters {
            if task::raise_self(SIG) != 0 {
                return Err(BenchError::last_os("raise"));
            }
        }
        expect_runs("the handler", before, task::delivered(SIG), iters)
    }
}

/// `signal.raise`: `signal.catch` sent as the C library's raise sends it.
pub const RAISE: Simple = Simple {
    name: "signal.raise",
    facts: Facts {
        switches: true,
        ..NAMED.on(
            Libc,
            "raise: rt_sigprocmask, tgkill, rt_sigprocmask; the handler returns through the \
         C library's restorer",
        )
    },
    about: "raise(SIGUSR1) with a counting handler installed: the C library blocks every \
            signal, sends it with tgkill and restores the mask, then the delivery, the \
            handler and sigreturn (will-it-scale's signal1; signal.catch is the tgkill alone)",
    origin: "will-it-scale signal1",
    params: &[],
    prepare: |_| {
        let (_, held) = with_handler(libc::SIG_UNBLOCK)?;
        let body = Raise {
            _held: held,
        };
        Ok(Prepared::new(Box::new(body)).op("raise+delivery+handler+sigreturn"))
    },
};

// ---------------------------------------------------------------------------------
// signal.pending

struct Pending {
    ids: (libc::pid_t, libc::pid_t),
    set: SigSet,
    _held: Installed,
}

impl Body for Pending {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        let before = task::delivered(SIG);
        for _ in 0..iters {
            check(task::tgkill(self.ids.0, self.ids.1, SIG), "tgkill")?;
            check_errno(
                signal::change_mask(libc::SIG_UNBLOCK, &self.set),
                "sigprocmask",
            )?;
            check_errno(
                signal::change_mask(libc::SIG_BLOCK, &self.set),
                "sigprocmask",
            )?;
        }
        expect_runs("the handler", before, task::delivered(SIG), iters)
    }
}

/// The counting handler for SIG and this thread's old mask, put back when dropped (in
/// this order), then the lock released.
struct Installed {
    _mask: SavedMask,
    _handler: Handler,
    _lock: MutexGuard<'static, ()>,
}

/// Under the lock, installs the counting handler for SIG and blocks (`SIG_BLOCK`) or
/// unblocks it in this thread; the handler and the old mask come back when dropped.
fn with_handler(how: libc::c_int) -> Result<(SigSet, Installed), BenchError> {
    let lock = task::signals_lock();
    let handler = Handler::counting(SIG).map_err(os("sigaction"))?;
    let saved = SavedMask::save();
    let set = SigSet::empty().with(SIG);
    check_errno(signal::change_mask(how, &set), "sigprocmask")?;
    let held = Installed {
        _mask: saved,
        _handler: handler,
        _lock: lock,
    };
    Ok((set, held))
}

/// `signal.pending`.
pub const PENDING: Simple = Simple {
    name: "signal.pending",
    facts: Facts {
        switches: true,
        ..SYSCALL.on(
            Generic,
            "tgkill, then pthread_sigmask twice (libc); the handler returns through the \
         C library's restorer",
        )
    },
    about: "with SIGUSR1 blocked, tgkill it to this thread (it stays pending), unblock it (the handler runs on the way out), block it again",
    origin: "004 Table I: $DCLAST declare AST, delivery disabled (201 µs)",
    params: &[],
    prepare: |_| {
        let (set, held) = with_handler(libc::SIG_BLOCK)?;
        let body = Pending {
            ids: own_ids(),
            set,
            _held: held,
        };
        Ok(Prepared::new(Box::new(body))
            .op("raise while blocked + unblock with delivery + re-block")
            .after(Box::new(|h, m| {
                let pair = measure_alone(h, prepare_mask()?)?;
                Ok(vec![
                    Fact::new(
                        "mask_pair_ns",
                        pair,
                        "ns",
                        "block+unblock with nothing pending, measured alone (signal.mask)",
                    ),
                    Fact::new(
                        "raise_and_delivery_ns",
                        median(m) - pair,
                        "ns",
                        "the operation less the mask pair: raise while blocked, delivery and handler",
                    ),
                ])
            })))
    },
};

// ---------------------------------------------------------------------------------
// signal.raise_blocked

struct RaiseBlocked {
    ids: (libc::pid_t, libc::pid_t),
    set: SigSet,
    raised: bool,
    info: QueueInfo,
    _held: Installed,
}

const NO_WAIT: libc::timespec = libc::timespec {
    tv_sec: 0,
    tv_nsec: 0,
};

impl Body for RaiseBlocked {
    fn reset(&mut self, _iters: u64) -> Result<(), BenchError> {
        if self.raised {
            // The standard signal keeps one instance pending: take it, untimed.
            let r = signal::take_pending(&self.set, &mut self.info, &NO_WAIT);
            if r != SIG as libc::c_long {
                return Err(BenchError::Failed(format!(
                    "the raised SIGUSR1 was not pending: {}",
                    std::io::Error::last_os_error()
                )));
            }
            self.raised = false;
        }
        Ok(())
    }

    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        if iters != 1 {
            return Err(BenchError::Failed(
                "a blocked standard signal does not queue: one raise per batch".into(),
            ));
        }
        check(task::tgkill(self.ids.0, self.ids.1, SIG), "tgkill")?;
        self.raised = true;
        Ok(())
    }
}

impl Drop for RaiseBlocked {
    fn drop(&mut self) {
        let _ = self.reset(1);
    }
}

/// `signal.raise_blocked`.
pub const RAISE_BLOCKED: Simple = Simple {
    name: "signal.raise_blocked",
    facts: Facts { switches: true, ..SYSCALL.on(Generic, "tgkill") },
    about: "tgkill SIGUSR1 to this thread while it is blocked: the raise alone, timed one by one (the pending signal is taken by sigtimedwait between samples)",
    origin: "004 Table I: $DCLAST declare AST, delivery disabled (201 µs)",
    params: &[],
    prepare: |_| {
        let (set, held) = with_handler(libc::SIG_BLOCK)?;
        let body = RaiseBlocked {
            ids: own_ids(),
            set,
            raised: false,
            info: QueueInfo::new(0),
            _held: held,
        };
        Ok(Prepared::new(Box::new(body))
            .op("tgkill of a blocked signal")
            .plan(Plan {
                fixed_batch: Some(1),
                ..Plan::default()
            }))
    },
};

// ---------------------------------------------------------------------------------
// signal.prot

struct Prot {
    trap: ProtTrap,
    _lock: MutexGuard<'static, ()>,
}

impl Body for Prot {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        let before = ProtTrap::repaired();
        for _ in 0..iters {
            self.trap.write();
            check(self.trap.protect(false) as i64, "mprotect")?;
        }
        expect_runs("the SIGSEGV handler", before, ProtTrap::repaired(), iters)
    }
}

/// mprotect of the trap's page, alternately writable and read-only, with no fault.
struct Toggle {
    trap: ProtTrap,
    writable: bool,
    _lock: MutexGuard<'static, ()>,
}

impl Body for Toggle {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for _ in 0..iters {
            self.writable = !self.writable;
            check(self.trap.protect(self.writable) as i64, "mprotect")?;
        }
        Ok(())
    }
}

fn new_trap() -> Result<(ProtTrap, MutexGuard<'static, ()>), BenchError> {
    let lock = task::signals_lock();
    let trap = ProtTrap::new().map_err(os("protection trap"))?;
    Ok((trap, lock))
}

/// `signal.prot`.
pub const PROT: Simple = Simple {
    name: "signal.prot",
    facts: Facts {
        switches: true,
        ..SYSCALL.on(
            Libc,
            "mprotect, in the handler and after it; entered first by the store's page \
         fault, left through the C library's restorer",
        )
    },
    about: "a write to a read-only page: the fault, a SIGSEGV handler that mprotects the page writable, sigreturn and the retried write; then mprotect read-only again",
    origin: "004 Table I: $SETPRT set protection on pages (3690 µs, 5 pages), here from a fault handler",
    params: &[],
    prepare: |_| {
        let (trap, lock) = new_trap()?;
        let body = Prot { trap, _lock: lock };
        Ok(Prepared::new(Box::new(body))
            .op("fault+handler(mprotect rw)+sigreturn+write, then mprotect ro")
            .plan(crate::bench::faulting(true))
            .after(Box::new(|h, m| {
                let (trap, lock) = new_trap()?;
                let toggle = Toggle {
                    trap,
                    writable: false,
                    _lock: lock,
                };
                let one = measure_alone(h, Prepared::new(Box::new(toggle)))?;
                Ok(vec![
                    Fact::new(
                        "reprotect_ns",
                        one,
                        "ns",
                        "one mprotect of the page measured alone (alternately rw and ro, no fault)",
                    ),
                    Fact::new(
                        "trap_ns",
                        median(m) - 2.0 * one,
                        "ns",
                        "the operation less its two mprotect calls: fault, signal delivery, handler entry, sigreturn, retried write",
                    ),
                ])
            })))
    },
};

#[cfg(test)]
mod tests {
    use super::super::tests::smoke;
    use super::*;
    use crate::bench::testing::{fact, median, prepared};
    use crate::bench::Bench;

    #[test]
    fn each_runs_below_a_millisecond_and_restores_the_signals() {
        for b in [
            &INSTALL,
            &MASK,
            &CATCH,
            &RAISE,
            &PENDING,
            &RAISE_BLOCKED,
            &PROT,
        ] {
            let (m, _) = smoke(b, &[]).expect("nothing here needs a privilege");
            let med = median(&m);
            assert!(med > 0.0 && med < 1e6, "{}: {med}", b.name());
        }
    }

    #[test]
    fn pending_and_prot_split_off_their_mask_and_mprotect_calls() {
        let (_, f) = smoke(&PENDING, &[]).unwrap();
        let pair = fact(&f, "mask_pair_ns");
        assert!(pair > 0.0 && pair < 1e6, "{pair}");
        assert!(fact(&f, "raise_and_delivery_ns").is_finite());
        let (_, f) = smoke(&PROT, &[]).unwrap();
        let one = fact(&f, "reprotect_ns");
        assert!(one > 0.0 && one < 1e6, "{one}");
        assert!(fact(&f, "trap_ns").is_finite());
    }

    #[test]
    fn a_missing_delivery_fails_the_batch() {
        // A catch body whose signal is blocked: the handler never runs.
        let mut p = prepared(&CATCH, &[]);
        let set = SigSet::empty().with(SIG);
        assert_eq!(signal::change_mask(libc::SIG_BLOCK, &set), 0);
        let e = p.body.run(3).unwrap_err();
        assert!(e.to_string().contains("ran 0 times"), "{e}");
        drop(p);
        assert!(
            !signal::is_pending(SIG),
            "the body's drop restored the mask"
        );
    }

    #[test]
    fn the_fault_handler_leaves_foreign_faults_alone() {
        // Only a fault inside the trap's page is repaired: the handler must not claim
        // others. A forked child faults on an address outside it and must die of SIGSEGV.
        // One binding: the tuple drops the trap before the lock (two bindings would
        // release the lock first).
        let _held = new_trap().unwrap();
        // SAFETY: the child maps, protects and writes one page: system calls and a
        // store, no allocation or lock.
        #[allow(unsafe_code)]
        let mut c = unsafe {
            task::fork(|| {
                let bad = crate::os::mem::Mapping::reserve(4096).unwrap();
                // A write to an inaccessible reservation: a real crash.
                let _ = bad.protect(libc::PROT_NONE);
                bad.touch_write(4096);
                0
            })
        }
        .unwrap();
        let st = c.wait().unwrap();
        assert_eq!(task::describe_status(st), "killed by signal 11");
    }
}
