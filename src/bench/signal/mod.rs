//! `signal.*`: what Linux charges for signals, after the VMS AST services of Nagy's
//! Table I (004) and the signals-vs-pipes contrast of the 1999 paper (003 §4).
//!
//! In this thread: installing a handler, masking a signal, raising one and having it
//! delivered at once or after an unblock, and a protection fault repaired by a SIGSEGV
//! handler. Across processes: a real-time signal queued with a value to our own child,
//! one queued there and back, and stopping and continuing the child. The signal
//! ping-pong between two tasks is `ctx.pingpong mechanism=signal`, whose footer sets it
//! beside the pipe; it is not repeated here.
//!
//! Every body holds [`crate::os::task::signals_lock`] for its life, uses only
//! SIGUSR1, SIGUSR2, SIGSEGV (its own page's faults), SIGSTOP/SIGCONT and SIGRTMIN+n,
//! signals only this thread or its own child, and puts back every handler and mask it
//! changed when dropped; children are reaped on every path.

mod local;
mod remote;
mod stop;

use super::Bench;
use crate::error::BenchError;
use crate::os::task;

/// The family's benchmarks.
pub const BENCHES: &[&dyn Bench] = &[
    &local::INSTALL,
    &local::MASK,
    &local::CATCH,
    &local::PENDING,
    &local::RAISE_BLOCKED,
    &local::PROT,
    &remote::QUEUE,
    &remote::QUEUE_RTT,
    &stop::STOP,
    &stop::CONT,
];

/// The family's benchmarks from its peers (named only): will-it-scale's signal1.
pub const MORE: &[&dyn Bench] = &[&local::RAISE];

/// Fails unless a counter of handler runs moved by exactly `k` since `before`.
#[inline(always)]
fn expect_runs(
    what: &'static str,
    before: u64,
    now: u64,
    k: u64,
) -> Result<(), BenchError> {
    if now.wrapping_sub(before) != k {
        return Err(runs_mismatch(what, now.wrapping_sub(before), k));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn runs_mismatch(what: &str, got: u64, k: u64) -> BenchError {
    BenchError::Failed(format!("{what} ran {got} times in a batch of {k}"))
}

/// Fails on a nonzero error number from a pthread-style call.
#[inline(always)]
fn check_errno(r: libc::c_int, what: &'static str) -> Result<(), BenchError> {
    if r != 0 {
        return Err(BenchError::os(what, std::io::Error::from_raw_os_error(r)));
    }
    Ok(())
}

/// The measuring thread's process and thread ids.
fn own_ids() -> (libc::pid_t, libc::pid_t) {
    (std::process::id() as libc::pid_t, task::gettid())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{testing, Fact};
    use crate::harness::Measurement;
    use crate::os::signal::same_action;
    use crate::os::sys;
    use crate::os::task::SigSet;

    /// The signals the family touches, and their dispositions now.
    fn dispositions() -> Vec<(libc::c_int, sys::Action)> {
        let rt = crate::os::signal::rt_signal;
        [
            libc::SIGUSR1,
            libc::SIGUSR2,
            libc::SIGSEGV,
            libc::SIGCONT,
            libc::SIGCHLD,
            rt(1),
            rt(2),
        ]
        .into_iter()
        .map(|s| (s, sys::sigaction_get(s).unwrap()))
        .collect()
    }

    fn mask_bits() -> Vec<bool> {
        let m = SigSet::current();
        (1..=64)
            .map(|s| crate::os::signal::is_member(&m, s))
            .collect()
    }

    /// Prepares `b` with `set` over its defaults and measures it in the smoke profile:
    /// the measurement and the facts of its after step. The body's drop must have put
    /// back the signals' dispositions and the mask.
    pub(super) fn smoke(
        b: &dyn Bench,
        set: &[(&str, &str)],
    ) -> Option<(Measurement, Vec<Fact>)> {
        // Read under the lock: every other holder has put its handlers back by then.
        let state = || {
            let _lock = task::signals_lock();
            (dispositions(), mask_bits())
        };
        let before = state();
        let cx = crate::bench::RunContext::default();
        let prep = testing::prepare(b, &testing::params_of(b, set), &cx).ok()?;
        Some(testing::measure_then(prep, || {
            let after_drop = state();
            for ((s, a), (_, b2)) in before.0.iter().zip(&after_drop.0) {
                assert!(
                    same_action(a, b2),
                    "{}: signal {s} not restored: {:#x}/{:#x} then {:#x}/{:#x}",
                    b.name(),
                    a.handler(),
                    a.flags(),
                    b2.handler(),
                    b2.flags()
                );
            }
            assert_eq!(before.1, after_drop.1, "{}: mask not restored", b.name());
        }))
    }

    #[test]
    fn the_family_is_in_the_catalogue_with_origins() {
        for b in BENCHES {
            assert!(crate::bench::find(b.name()).is_some(), "{}", b.name());
            assert!(b.origin().starts_with("004 Table I:"), "{}", b.name());
        }
    }
}
