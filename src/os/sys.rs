//! Safe wrappers around the system calls and instructions the benchmarks time.
//!
//! Each wrapper is `#[inline(always)]` so that a timed loop holds the call itself and
//! nothing else; each returns the kernel's raw result and leaves error handling to the
//! caller, outside its timed region where possible.
//!
//! # Safety
//! Every `unsafe` block here passes pointers to live, correctly sized local or borrowed
//! values to the kernel or the C library, or executes an instruction that only reads
//! state (`rdtsc`, `rdtscp`, the `syscall` instruction with a number and plain integers).
#![allow(unsafe_code)]

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd};

/// Turns a C-style `-1` result into the thread's `errno` as an `io::Error`.
#[inline(always)]
pub fn cvt(r: libc::c_long) -> io::Result<libc::c_long> {
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// Reads the time-stamp counter with `lfence` on both sides, so that the read is not
/// reordered with the instructions around it (Intel SDM, RDTSC).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn rdtsc_fenced() -> u64 {
    use std::arch::x86_64::{_mm_lfence, _rdtsc};
    // SAFETY: lfence and rdtsc only read processor state; SSE2 is baseline on x86_64.
    unsafe {
        _mm_lfence();
        let t = _rdtsc();
        _mm_lfence();
        t
    }
}

/// Reads the time-stamp counter with a plain `rdtsc`, as a program would that does not
/// care about ordering (the cost of the instruction itself).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn rdtsc() -> u64 {
    // SAFETY: rdtsc only reads processor state.
    unsafe { std::arch::x86_64::_rdtsc() }
}

/// Reads the time-stamp counter with `rdtscp`, which waits for earlier instructions.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn rdtscp() -> u64 {
    let mut aux = 0u32;
    // SAFETY: rdtscp only reads processor state and writes the TSC_AUX value into `aux`.
    unsafe { std::arch::x86_64::__rdtscp(&mut aux) }
}

/// `clock_gettime(id)` through the C library (the vDSO where the kernel offers one).
#[inline(always)]
pub fn clock_gettime(id: libc::clockid_t) -> libc::timespec {
    let mut ts = MaybeUninit::<libc::timespec>::zeroed();
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(id, ts.as_mut_ptr()) };
    // SAFETY: zero-initialised, and written by the call when it succeeds.
    unsafe { ts.assume_init() }
}

/// `clock_gettime(id)` as a real system call, bypassing the vDSO. Returns the raw result.
#[inline(always)]
pub fn clock_gettime_syscall(
    id: libc::clockid_t,
    ts: &mut libc::timespec,
) -> libc::c_long {
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    unsafe { libc::syscall(libc::SYS_clock_gettime, id as libc::c_long, ts as *mut _) }
}

/// `clock_getres(id)`: the resolution the kernel claims, or `None` if the clock is absent.
pub fn clock_getres(id: libc::clockid_t) -> Option<libc::timespec> {
    let mut ts = MaybeUninit::<libc::timespec>::zeroed();
    // SAFETY: `ts` is a valid, writable timespec.
    let r = unsafe { libc::clock_getres(id, ts.as_mut_ptr()) };
    // SAFETY: zero-initialised, and written by the call when it succeeds.
    (r == 0).then(|| unsafe { ts.assume_init() })
}

/// Nanoseconds of a `timespec`.
#[inline(always)]
pub fn ts_ns(ts: &libc::timespec) -> u64 {
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `CLOCK_MONOTONIC_RAW` in ns: the clock kernel trace events are recorded on.
#[inline(always)]
pub fn raw_ns() -> u64 {
    ts_ns(&clock_gettime(libc::CLOCK_MONOTONIC_RAW))
}

/// `gettimeofday` through the C library (vDSO).
#[inline(always)]
pub fn gettimeofday(tv: &mut libc::timeval) -> libc::c_int {
    // SAFETY: `tv` is a valid, writable timeval; the timezone pointer may be null.
    unsafe { libc::gettimeofday(tv, std::ptr::null_mut()) }
}

/// `gettimeofday` as a real system call.
#[inline(always)]
pub fn gettimeofday_syscall(tv: &mut libc::timeval) -> libc::c_long {
    // SAFETY: `tv` is a valid, writable timeval; the timezone pointer may be null.
    unsafe {
        libc::syscall(
            libc::SYS_gettimeofday,
            tv as *mut libc::timeval,
            std::ptr::null_mut::<libc::c_void>(),
        )
    }
}

/// `time(NULL)` through the C library (vDSO).
#[inline(always)]
pub fn time() -> libc::time_t {
    // SAFETY: a null pointer asks only for the return value.
    unsafe { libc::time(std::ptr::null_mut()) }
}

/// `time(NULL)` as a real system call.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn time_syscall() -> libc::c_long {
    // SAFETY: a null pointer asks only for the return value.
    unsafe { libc::syscall(libc::SYS_time, std::ptr::null_mut::<libc::time_t>()) }
}

extern "C" {
    /// glibc ≥ 2.29: `getcpu(3)`, served by the vDSO on x86_64.
    fn getcpu(cpu: *mut libc::c_uint, node: *mut libc::c_uint) -> libc::c_int;
}

/// `getcpu` through the C library (vDSO).
#[inline(always)]
pub fn getcpu_libc(cpu: &mut u32, node: &mut u32) -> libc::c_int {
    // SAFETY: both pointers refer to valid, writable u32 values.
    unsafe { getcpu(cpu, node) }
}

/// `getcpu` as a real system call.
#[inline(always)]
pub fn getcpu_syscall(cpu: &mut u32, node: &mut u32) -> libc::c_long {
    // SAFETY: both pointers refer to valid, writable u32 values; the cache pointer is null.
    unsafe {
        libc::syscall(
            libc::SYS_getcpu,
            cpu as *mut u32,
            node as *mut u32,
            std::ptr::null_mut::<libc::c_void>(),
        )
    }
}

/// Whether the kernel mapped a vDSO into this process (`AT_SYSINFO_EHDR`).
pub fn has_vdso() -> bool {
    // SAFETY: getauxval only reads the auxiliary vector.
    unsafe { libc::getauxval(libc::AT_SYSINFO_EHDR) != 0 }
}

/// A system call that reads no memory, writes none and changes nothing whatever its
/// arguments: the only kind [`raw_syscall0`] and [`raw_syscall6`] make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlainCall(usize);

impl PlainCall {
    /// getpid(2).
    pub const GETPID: PlainCall = PlainCall(libc::SYS_getpid as usize);
    /// A number no kernel implements: entry, -ENOSYS, exit.
    pub const UNIMPLEMENTED: PlainCall = PlainCall(UNIMPLEMENTED_SYSCALL);

    /// The system call number.
    pub fn number(self) -> usize {
        self.0
    }
}

/// A system call through the `syscall` instruction with six arguments, bypassing the C
/// library. Returns the kernel's raw result (a negative errno on failure).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn raw_syscall6(call: PlainCall, a: [usize; 6]) -> isize {
    let ret: isize;
    // SAFETY: the syscall instruction clobbers rcx and r11, which are declared; a
    // PlainCall reads and writes no memory whatever its arguments.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") call.0 as isize => ret,
            in("rdi") a[0], in("rsi") a[1], in("rdx") a[2],
            in("r10") a[3], in("r8") a[4], in("r9") a[5],
            lateout("rcx") _, lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

/// A system call with no arguments through the `syscall` instruction.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn raw_syscall0(call: PlainCall) -> isize {
    let ret: isize;
    // SAFETY: as for raw_syscall6; the argument registers hold whatever they held,
    // which a PlainCall may read without harm.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") call.0 as isize => ret,
            lateout("rcx") _, lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

/// `getpid()` through the C library wrapper.
#[inline(always)]
pub fn getpid() -> libc::pid_t {
    // SAFETY: getpid has no preconditions.
    unsafe { libc::getpid() }
}

/// `getpid()` through the C library's generic `syscall()` entry.
#[inline(always)]
pub fn getpid_indirect() -> libc::c_long {
    // SAFETY: SYS_getpid takes no arguments.
    unsafe { libc::syscall(libc::SYS_getpid) }
}

/// `getppid()`.
#[inline(always)]
pub fn getppid() -> libc::pid_t {
    // SAFETY: no preconditions.
    unsafe { libc::getppid() }
}

/// `getuid()`.
#[inline(always)]
pub fn getuid() -> libc::uid_t {
    // SAFETY: no preconditions.
    unsafe { libc::getuid() }
}

/// `getgid()`.
#[inline(always)]
pub fn getgid() -> libc::gid_t {
    // SAFETY: no preconditions.
    unsafe { libc::getgid() }
}

/// `setuid(uid)` as a per-thread system call (the C library's wrapper would broadcast
/// to every thread). The benchmark passes the current id, so nothing changes.
#[inline(always)]
pub fn setuid_syscall(uid: libc::uid_t) -> libc::c_long {
    // SAFETY: integer argument only.
    unsafe { libc::syscall(libc::SYS_setuid, uid as libc::c_long) }
}

/// `setgid(gid)` as a per-thread system call; the benchmark passes the current id.
#[inline(always)]
pub fn setgid_syscall(gid: libc::gid_t) -> libc::c_long {
    // SAFETY: integer argument only.
    unsafe { libc::syscall(libc::SYS_setgid, gid as libc::c_long) }
}

/// `uname()` into `buf`.
#[inline(always)]
pub fn uname(buf: &mut libc::utsname) -> libc::c_int {
    // SAFETY: `buf` is a valid, writable utsname.
    unsafe { libc::uname(buf) }
}

/// A zeroed `utsname`.
pub fn utsname_zeroed() -> libc::utsname {
    // SAFETY: utsname is plain character arrays; all-zero is a valid value.
    unsafe { std::mem::zeroed() }
}

/// `times()` into `buf`.
#[inline(always)]
pub fn times(buf: &mut libc::tms) -> libc::clock_t {
    // SAFETY: `buf` is a valid, writable tms.
    unsafe { libc::times(buf) }
}

/// A zeroed `tms`.
pub fn tms_zeroed() -> libc::tms {
    // SAFETY: tms is plain integers; all-zero is valid.
    unsafe { std::mem::zeroed() }
}

/// `alarm(secs)`; the benchmark passes 0, which cancels nothing it did not set.
#[inline(always)]
pub fn alarm(secs: u32) -> u32 {
    // SAFETY: integer argument only.
    unsafe { libc::alarm(secs) }
}

/// `kill(pid, sig)`. Refuses any pid ≤ 0 (a process group or every process) so that no
/// caller can signal what it did not create.
#[inline(always)]
pub fn kill(pid: libc::pid_t, sig: libc::c_int) -> libc::c_int {
    if pid <= 0 {
        return -1;
    }
    // SAFETY: pid is a single positive process id; integer arguments only.
    unsafe { libc::kill(pid, sig) }
}

/// A signal disposition this process may install: one the kernel reported (see
/// [`sigaction_get`]) or one made in this module's layer from a handler it wrote.
/// Outside `os/` no other can be made, so [`sigaction_set`] never installs an
/// arbitrary address as a handler.
#[derive(Clone, Copy)]
pub struct Action(libc::sigaction);

impl Action {
    /// Wraps a disposition built in the operating-system layer.
    ///
    /// # Safety
    /// `act.sa_sigaction` is `SIG_DFL`, `SIG_IGN`, or an `extern "C"` function of the
    /// form `sa_flags` names (with `SA_SIGINFO`, three arguments) that only makes
    /// async-signal-safe calls; `sa_mask` is an initialised set.
    pub(in crate::os) unsafe fn from_raw(act: libc::sigaction) -> Action {
        Action(act)
    }

    /// The handler's address (or `SIG_DFL`, `SIG_IGN`).
    pub fn handler(&self) -> libc::sighandler_t {
        self.0.sa_sigaction
    }

    /// The flags.
    pub fn flags(&self) -> libc::c_int {
        self.0.sa_flags
    }
}

/// Reads the current disposition of `sig`.
pub fn sigaction_get(sig: libc::c_int) -> io::Result<Action> {
    let mut old = MaybeUninit::<libc::sigaction>::zeroed();
    // SAFETY: a null new action only queries; `old` is valid and writable.
    let r = unsafe { libc::sigaction(sig, std::ptr::null(), old.as_mut_ptr()) };
    cvt(r as libc::c_long)?;
    // SAFETY: written by the successful call.
    Ok(Action(unsafe { old.assume_init() }))
}

/// Installs `act` for `sig`: one sigaction(2) call, 0 or -1 with errno set.
#[inline(always)]
pub fn sigaction_set(sig: libc::c_int, act: &Action) -> libc::c_int {
    // SAFETY: `act` is a disposition the kernel reported or one whose handler
    // `Action::from_raw`'s caller vouched for; no old action is requested.
    unsafe { libc::sigaction(sig, &act.0, std::ptr::null_mut()) }
}

/// `getpriority(PRIO_PROCESS, 0)`: this process's nice value.
pub fn getpriority_self() -> io::Result<i32> {
    getpriority_of(0)
}

/// `getpriority(PRIO_PROCESS, who)` with errno cleared first, as the call can return -1.
pub fn getpriority_of(who: libc::id_t) -> io::Result<i32> {
    // SAFETY: __errno_location returns this thread's errno slot.
    unsafe { *libc::__errno_location() = 0 };
    // SAFETY: integer arguments only.
    let r = unsafe { libc::getpriority(libc::PRIO_PROCESS, who) };
    let e = io::Error::last_os_error();
    if r == -1 && e.raw_os_error() != Some(0) {
        return Err(e);
    }
    Ok(r)
}

/// `setpriority(PRIO_PROCESS, 0, prio)`: this process only. The benchmark passes the
/// current value, so nothing changes.
#[inline(always)]
pub fn setpriority_self(prio: i32) -> libc::c_int {
    // SAFETY: integer arguments only; `who` 0 is the calling process.
    unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, prio) }
}

/// `dup(fd)`.
#[inline(always)]
fn dup(fd: BorrowedFd<'_>) -> libc::c_int {
    // SAFETY: fd is an open descriptor borrowed for the call.
    unsafe { libc::dup(fd.as_raw_fd()) }
}

/// `close(fd)` of an owned descriptor, with close's own result (0, or -1 with errno
/// set), which dropping an `OwnedFd` would discard.
#[inline(always)]
pub fn close_owned(fd: OwnedFd) -> libc::c_int {
    // SAFETY: `fd` is owned and consumed: nothing else holds or will use it.
    unsafe { libc::close(fd.into_raw_fd()) }
}

/// `open(path, flags)` through the C library (no `O_CREAT`: no mode is passed), the
/// new descriptor owned at once.
#[inline(always)]
pub fn open(path: &std::ffi::CStr, flags: libc::c_int) -> io::Result<OwnedFd> {
    if flags & libc::O_CREAT != 0 {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    // SAFETY: `path` is NUL-terminated and readable for the call.
    let r = cvt(unsafe { libc::open(path.as_ptr(), flags) } as libc::c_long)?;
    // SAFETY: a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(r as libc::c_int) })
}

/// Duplicates `fd` into a new owned descriptor.
#[inline(always)]
pub fn dup_owned(fd: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    let r = cvt(dup(fd) as libc::c_long)?;
    // SAFETY: dup returned a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(r as libc::c_int) })
}

/// `ioctl(fd, TCGETS)`, the modern form of `gtty`.
#[inline(always)]
pub fn tcgets(fd: BorrowedFd<'_>, t: &mut libc::termios) -> libc::c_int {
    // SAFETY: `t` is a valid, writable termios; fd is open for the call.
    unsafe { libc::ioctl(fd.as_raw_fd(), libc::TCGETS, t as *mut libc::termios) }
}

/// A zeroed `termios`.
pub fn termios_zeroed() -> libc::termios {
    // SAFETY: termios is plain integers and arrays; all-zero is valid.
    unsafe { std::mem::zeroed() }
}

/// Opens a pseudo-terminal pair (master, slave).
pub fn openpty() -> io::Result<(OwnedFd, OwnedFd)> {
    let (mut m, mut s) = (-1, -1);
    // SAFETY: m and s are valid out-pointers; name, termios and winsize may be null.
    let r = unsafe {
        libc::openpty(
            &mut m,
            &mut s,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    cvt(r as libc::c_long)?;
    // SAFETY: openpty returned two fresh descriptors that nothing else owns.
    Ok(unsafe { (OwnedFd::from_raw_fd(m), OwnedFd::from_raw_fd(s)) })
}

/// `writev(fd, iov)`.
#[inline(always)]
pub fn writev(fd: BorrowedFd<'_>, iov: &[libc::iovec]) -> libc::ssize_t {
    // SAFETY: every iovec points into memory the caller keeps alive for the call.
    unsafe { libc::writev(fd.as_raw_fd(), iov.as_ptr(), iov.len() as libc::c_int) }
}

/// `poll(fds, 0)`: a non-blocking poll.
#[inline(always)]
pub fn poll_now(fds: &mut [libc::pollfd]) -> libc::c_int {
    // SAFETY: `fds` is a valid, writable slice of pollfd.
    unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 0) }
}

/// Creates an eventfd with an initial count.
pub fn eventfd(initval: u32, flags: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: integer arguments only.
    let r = cvt(unsafe { libc::eventfd(initval, flags) } as libc::c_long)?;
    // SAFETY: a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(r as libc::c_int) })
}

/// `sched_getcpu()`, or `None` when the call fails.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: no preconditions.
    let r = unsafe { libc::sched_getcpu() };
    (r >= 0).then_some(r as usize)
}

/// `sysconf(_SC_CLK_TCK)`: the tick rate `times()` reports in.
pub fn clock_ticks_per_sec() -> i64 {
    // SAFETY: integer argument only.
    unsafe { libc::sysconf(libc::_SC_CLK_TCK) as i64 }
}

/// The `RLIMIT_NOFILE` soft limit (`u64::MAX` when unlimited).
pub fn nofile_limit() -> u64 {
    use rustix::process::{getrlimit, Resource};
    getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX)
}

/// The system-call number the `args` benchmark uses: above every number the kernel
/// implements, so the kernel only enters, finds no handler, and returns `-ENOSYS`.
pub const UNIMPLEMENTED_SYSCALL: usize = 1000;
