//! `svc.*`: the Linux counterparts of the VAX/VMS system services timed in Nagy's
//! Table I (seed 004): event flags (eventfd and futex words), process information,
//! priority, wake/hibernate (futex), timers (timerfd, POSIX timers, ITIMER_REAL,
//! alarm), time conversion, I/O to the null device (write and io_uring) and the
//! accuracy of a relative sleep. Each entry's `origin` names the VMS service it stands
//! for and the seed's figure. `$GETTIM` (get system time) is the `clock.*` family.
//!
//! Every descriptor, timer, mapping, signal handler and child is created in `prepare`
//! and released when the body is dropped; timers are disarmed and the previous
//! `ITIMER_REAL` restored on every path. An operation whose outcome is not the expected
//! one (including an expected EAGAIN that does not come) fails the benchmark.
//!
//! Operations that must be re-armed before each one (a timer to cancel, a sleeper to
//! wake, a wake-up count to cancel) are timed one at a time (a batch of 1) and re-armed
//! in the body's `reset`, outside the clock reads.

pub mod epoll;
pub mod flags;
pub mod io;
pub mod misc;
pub mod newer;
pub mod sleep;
pub mod timer;
pub mod wake;

use crate::bench::Bench;
use crate::error::BenchError;
use crate::os::{sys, task};

/// The family, in the order of Table I.
pub const BENCHES: &[&dyn Bench] = &[
    &flags::SET,
    &flags::SET_FUTEX,
    &flags::CLEAR,
    &flags::READ,
    &flags::WAIT,
    &flags::WAIT_ANY,
    &flags::WAIT_ALL,
    &misc::GETRUSAGE,
    &misc::PROCSTAT,
    &misc::SETPRI,
    &flags::CANWAK,
    &wake::OTHER,
    &wake::LATENCY,
    &misc::WAKE_SELF,
    &misc::HIBER_PENDING,
    &timer::ARM,
    &timer::CANCEL,
    &timer::CANCEL_ALL,
    &misc::GMTIME,
    &misc::LOCALTIME,
    &io::NULL_WRITE,
    &io::URING_WRITE,
    &sleep::SLEEP,
];

/// The services beyond Table I that the peers time (lmbench's lat_usleep, perf bench
/// epoll and sched seccomp-notify) and io_uring's NOP.
pub const MORE: &[&dyn Bench] = &[
    &newer::USLEEP,
    &epoll::CTL,
    &epoll::WAIT,
    &newer::URING_NOP,
    &newer::SECCOMP_NOTIFY,
];

/// Skips when `more` extra descriptors would not fit under the soft RLIMIT_NOFILE
/// (with room for the ones already open).
fn need_fds(more: usize) -> Result<(), BenchError> {
    let limit = sys::nofile_limit();
    let open = std::fs::read_dir("/proc/self/fd").map_or(64, |d| d.count()) as u64;
    if open + more as u64 + 16 > limit {
        return Err(BenchError::Skip(format!(
            "{more} descriptors would exceed the open-file limit ({limit}, {open} open): \
             raise `ulimit -n` or use a smaller n"
        )));
    }
    Ok(())
}

/// The error for an operation whose result was not the expected one, with `errno`
/// (built off the timed path).
#[cold]
#[inline(never)]
fn fail(what: &'static str) -> BenchError {
    BenchError::last_os(what)
}

/// The error for an operation that succeeded with an unexpected result.
#[cold]
#[inline(never)]
fn unexpected(what: &'static str, got: i64) -> BenchError {
    BenchError::Failed(format!("{what}: unexpected result {got}"))
}

/// `Ok` when a call returned `want`; otherwise the call's error (-1 with errno) or
/// its unexpected result.
#[inline(always)]
fn expect(r: i64, want: i64, what: &'static str) -> Result<(), BenchError> {
    if r == want {
        Ok(())
    } else if r == -1 {
        Err(fail(what))
    } else {
        Err(unexpected(what, r))
    }
}

/// `Ok` when a call failed with `errno` `want` (the expected outcome); otherwise an
/// error that says what happened instead.
#[inline(always)]
fn expect_errno(r: i64, want: i32, what: &'static str) -> Result<(), BenchError> {
    if r == -1 && task::errno() == want {
        Ok(())
    } else if r == -1 {
        Err(fail(what))
    } else {
        Err(unexpected(what, r))
    }
}

/// The nth percentile of an ascending slice (nearest rank; NaN when empty).
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&v, 50.0), 2.0);
        assert_eq!(percentile(&v, 99.0), 4.0);
        assert_eq!(percentile(&v, 100.0), 4.0);
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert!(percentile(&[], 50.0).is_nan());
    }

    #[test]
    fn every_origin_names_table_one() {
        for b in BENCHES {
            assert!(b.name().starts_with("svc."), "{}", b.name());
            assert!(
                b.origin().starts_with("004 Table I: $"),
                "{}: {}",
                b.name(),
                b.origin()
            );
            assert!(b.origin().contains(" µs)"), "{}", b.name());
        }
    }
}
