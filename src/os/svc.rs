//! Wrappers for the system services the `svc` family times: readiness waits (poll,
//! epoll), process information (getrusage, pread of a /proc file), thread priority,
//! timers (timerfd, POSIX timers, ITIMER_REAL), calendar conversion and relative
//! sleeps.
//!
//! Every call that a timed loop makes is `#[inline(always)]` and returns the raw
//! result, leaving the error handling to the caller. Every owning type releases what it
//! holds when dropped: timers are deleted, descriptors closed. Nothing here signals a
//! process or changes another process's settings.
//!
//! # Safety
//! Each `unsafe` block passes pointers to live, correctly sized values owned or
//! borrowed by the caller for the duration of the call, or integers only.
#![allow(unsafe_code)]

use super::sys::cvt;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

extern "C" {
    /// `tzset(3)`: reads TZ and the zone files once, so later conversions reuse them.
    fn tzset();
}

/// `poll(fds, -1)`: waits without a time limit until a descriptor is ready. Returns
/// the number of ready descriptors, or -1 with errno.
#[inline(always)]
pub fn poll_forever(fds: &mut [libc::pollfd]) -> libc::c_int {
    // SAFETY: `fds` is a valid, writable slice of pollfd for the call.
    unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) }
}

/// An epoll instance, closed when dropped.
#[derive(Debug)]
pub struct Epoll {
    fd: OwnedFd,
}

impl Epoll {
    /// A new, empty, close-on-exec epoll instance.
    pub fn new() -> io::Result<Epoll> {
        super::peers::epoll_create().map(|fd| Epoll { fd })
    }

    /// Adds `fd`, watched level-triggered for `events`, tagged with `data`.
    pub fn add(&self, fd: BorrowedFd<'_>, events: u32, data: u64) -> io::Result<()> {
        let (epfd, add) = (self.fd.as_raw_fd(), libc::EPOLL_CTL_ADD);
        let r = super::peers::epoll_ctl_data(epfd, add, fd.as_raw_fd(), events, data);
        cvt(r as libc::c_long).map(|_| ())
    }

    /// `epoll_wait(events, -1)`: the number of ready events written, or -1 with errno.
    #[inline(always)]
    pub fn wait(&self, events: &mut [libc::epoll_event]) -> libc::c_int {
        // SAFETY: `events` is a valid, writable slice; its length bounds what the
        // kernel writes.
        unsafe {
            libc::epoll_wait(
                self.fd.as_raw_fd(),
                events.as_mut_ptr(),
                events.len() as libc::c_int,
                -1,
            )
        }
    }
}

/// A zeroed `epoll_event`.
pub fn epoll_event_zeroed() -> libc::epoll_event {
    libc::epoll_event { events: 0, u64: 0 }
}

/// A zeroed `rusage`.
pub fn rusage_zeroed() -> libc::rusage {
    // SAFETY: rusage is plain integers; all-zero is valid.
    unsafe { std::mem::zeroed() }
}

/// `getrusage(RUSAGE_SELF)` into `ru`: 0, or -1 with errno.
#[inline(always)]
pub fn getrusage_self(ru: &mut libc::rusage) -> libc::c_int {
    // SAFETY: `ru` is a valid, writable rusage.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, ru) }
}

/// `pread(fd, buf, offset)`: the byte count, or -1 with errno.
#[inline(always)]
pub fn pread(fd: BorrowedFd<'_>, buf: &mut [u8], offset: i64) -> isize {
    // SAFETY: `buf` is valid for writes of its length; fd is open for the call.
    unsafe {
        libc::pread(
            fd.as_raw_fd(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            offset as libc::off_t,
        )
    }
}

/// `getpriority(PRIO_PROCESS, tid)`: the nice value of one thread of this process.
/// Refuses ids ≤ 0.
pub fn getpriority_thread(tid: libc::pid_t) -> io::Result<i32> {
    if tid <= 0 {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    super::sys::getpriority_of(tid as libc::id_t)
}

/// `setpriority(PRIO_PROCESS, tid, prio)` for one thread of this process: 0, or -1
/// with errno. Refuses ids ≤ 0. Callers pass the thread's current value.
#[inline(always)]
pub fn setpriority_thread(tid: libc::pid_t, prio: i32) -> libc::c_int {
    if tid <= 0 {
        return -1;
    }
    // SAFETY: integer arguments only; `tid` is a positive thread id.
    unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, prio) }
}

/// A one-shot `itimerspec` expiring after `ns` nanoseconds (0 disarms).
pub fn one_shot(ns: u64) -> libc::itimerspec {
    libc::itimerspec {
        it_interval: libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        },
        it_value: libc::timespec {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (ns % 1_000_000_000) as libc::c_long,
        },
    }
}

/// A non-blocking, close-on-exec timerfd on CLOCK_MONOTONIC, closed when dropped
/// (which disarms it).
pub fn timerfd() -> io::Result<OwnedFd> {
    // SAFETY: integer arguments only.
    let r = unsafe {
        libc::timerfd_create(
            libc::CLOCK_MONOTONIC,
            libc::TFD_CLOEXEC | libc::TFD_NONBLOCK,
        )
    };
    cvt(r as libc::c_long)?;
    // SAFETY: a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(r) })
}

/// `timerfd_settime(fd, 0, value)` (relative): 0, or -1 with errno.
#[inline(always)]
pub fn timerfd_settime(fd: BorrowedFd<'_>, value: &libc::itimerspec) -> libc::c_int {
    // SAFETY: `value` is a valid itimerspec; no old value is requested.
    unsafe { libc::timerfd_settime(fd.as_raw_fd(), 0, value, std::ptr::null_mut()) }
}

/// `timerfd_gettime(fd)`: the time left before expiry.
pub fn timerfd_gettime(fd: BorrowedFd<'_>) -> io::Result<libc::itimerspec> {
    let mut v = one_shot(0);
    // SAFETY: `v` is a valid, writable itimerspec.
    let r = unsafe { libc::timerfd_gettime(fd.as_raw_fd(), &mut v) };
    cvt(r as libc::c_long)?;
    Ok(v)
}

/// A POSIX timer on CLOCK_MONOTONIC that raises `signo` in this process on expiry.
/// Dropping it deletes it, which disarms it.
#[derive(Debug)]
pub struct PosixTimer {
    id: libc::timer_t,
}

impl PosixTimer {
    /// Creates a disarmed timer. The caller must have a handler for, or block,
    /// `signo` before arming it.
    pub fn new(signo: libc::c_int) -> io::Result<PosixTimer> {
        // SAFETY: an all-zero sigevent is valid; the fields used are set below.
        let mut ev: libc::sigevent = unsafe { std::mem::zeroed() };
        ev.sigev_notify = libc::SIGEV_SIGNAL;
        ev.sigev_signo = signo;
        let mut id = MaybeUninit::<libc::timer_t>::zeroed();
        // SAFETY: `ev` and `id` are valid for the call.
        let r = unsafe {
            libc::timer_create(libc::CLOCK_MONOTONIC, &mut ev, id.as_mut_ptr())
        };
        cvt(r as libc::c_long)?;
        // SAFETY: written by the successful call.
        let id = unsafe { id.assume_init() };
        Ok(PosixTimer { id })
    }

    /// `timer_settime(id, 0, value)` (relative): 0, or -1 with errno.
    #[inline(always)]
    pub fn set(&self, value: &libc::itimerspec) -> libc::c_int {
        // SAFETY: `id` is a live timer of ours; `value` is a valid itimerspec.
        unsafe { libc::timer_settime(self.id, 0, value, std::ptr::null_mut()) }
    }

    /// The time left before expiry (zero when disarmed).
    pub fn get(&self) -> io::Result<libc::itimerspec> {
        let mut v = one_shot(0);
        // SAFETY: `id` is a live timer of ours; `v` is writable.
        let r = unsafe { libc::timer_gettime(self.id, &mut v) };
        cvt(r as libc::c_long)?;
        Ok(v)
    }
}

impl Drop for PosixTimer {
    fn drop(&mut self) {
        // SAFETY: deletes the timer created in `new`, exactly once.
        unsafe { libc::timer_delete(self.id) };
    }
}

/// An `itimerval` expiring once after `us` microseconds (0 disarms).
pub fn itimer_once(us: u64) -> libc::itimerval {
    libc::itimerval {
        it_interval: libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        },
        it_value: libc::timeval {
            tv_sec: (us / 1_000_000) as libc::time_t,
            tv_usec: (us % 1_000_000) as libc::suseconds_t,
        },
    }
}

/// An `itimerval` expiring after `us` microseconds and every `us` after that.
pub fn itimer_periodic(us: u64) -> libc::itimerval {
    let once = itimer_once(us);
    libc::itimerval {
        it_interval: once.it_value,
        it_value: once.it_value,
    }
}

/// `getitimer(ITIMER_REAL)`: this process's real-time interval timer.
pub fn getitimer_real() -> io::Result<libc::itimerval> {
    let mut v = itimer_once(0);
    // SAFETY: `v` is a valid, writable itimerval.
    let r = unsafe { libc::getitimer(libc::ITIMER_REAL, &mut v) };
    cvt(r as libc::c_long)?;
    Ok(v)
}

/// `setitimer(ITIMER_REAL, value)`: 0, or -1 with errno. This process's timer only.
#[inline(always)]
pub fn setitimer_real(value: &libc::itimerval) -> libc::c_int {
    // SAFETY: `value` is a valid itimerval; no old value is requested.
    unsafe { libc::setitimer(libc::ITIMER_REAL, value, std::ptr::null_mut()) }
}

/// Reads the time-zone settings once (`tzset(3)`).
pub fn tz_init() {
    // SAFETY: no arguments; glibc's tzset takes its own lock.
    unsafe { tzset() }
}

/// A zeroed `tm`.
pub fn tm_zeroed() -> libc::tm {
    // SAFETY: tm is integers and a nullable pointer; all-zero is valid.
    unsafe { std::mem::zeroed() }
}

/// `gmtime_r(t)` into `out`: whether it succeeded.
#[inline(always)]
pub fn gmtime(t: &libc::time_t, out: &mut libc::tm) -> bool {
    // SAFETY: both pointers refer to valid values for the call.
    !unsafe { libc::gmtime_r(t, out) }.is_null()
}

/// `localtime_r(t)` into `out`: whether it succeeded.
#[inline(always)]
pub fn localtime(t: &libc::time_t, out: &mut libc::tm) -> bool {
    // SAFETY: both pointers refer to valid values for the call.
    !unsafe { libc::localtime_r(t, out) }.is_null()
}

/// `clock_nanosleep(CLOCK_MONOTONIC, 0, ts)`: a relative sleep. Returns 0 or an error
/// number (EINTR when a handler ran), as the call itself does.
#[inline(always)]
pub fn sleep_monotonic(ts: &libc::timespec) -> libc::c_int {
    // SAFETY: `ts` is a valid timespec; the remaining time is not requested.
    unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, 0, ts, std::ptr::null_mut()) }
}

/// The calling thread's timer slack in ns (`PR_GET_TIMERSLACK`): how late the kernel
/// may let a sleep end so it can coalesce wake-ups.
pub fn timer_slack_ns() -> Option<u64> {
    // SAFETY: PR_GET_TIMERSLACK takes no pointer; the rest are ignored zeros.
    let r = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
    (r >= 0).then_some(r as u64)
}

/// The usable real-time signal the `svc` timers raise on expiry (SIGRTMIN + 5), so
/// that they share no signal with other families.
pub fn timer_signal() -> libc::c_int {
    libc::SIGRTMIN() + 5
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_posix_timer_arms_and_disarms() {
        let _lock = super::super::task::signals_lock();
        let t = PosixTimer::new(timer_signal()).unwrap();
        assert_eq!(t.set(&one_shot(10_000_000_000)), 0);
        assert!(t.get().unwrap().it_value.tv_sec > 0);
        assert_eq!(t.set(&one_shot(0)), 0);
        let left = t.get().unwrap().it_value;
        assert_eq!((left.tv_sec, left.tv_nsec), (0, 0));
    }

    #[test]
    fn priority_ids_must_be_positive() {
        assert_eq!(setpriority_thread(0, 0), -1);
        assert_eq!(setpriority_thread(-1, 0), -1);
        assert!(getpriority_thread(-1).is_err());
    }
}
