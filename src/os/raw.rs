//! System calls through the `syscall` instruction written at the call site: no C
//! library function, no `call` and `ret` around the instruction, no cancellation check
//! and no `errno`. These are the `via=raw` side of the benchmarks that take a `via`
//! parameter; the `via=libc` side calls the C library's wrappers in [`super::sys`] and
//! [`super::task`].
//!
//! Each single call is `#[inline(always)]`, takes only references, borrowed or owned
//! descriptors and plain integers, and returns the kernel's raw result: a negative
//! errno on failure (see [`check`]). The `*_repeat` functions hold a whole timed loop
//! of one or two calls in one `asm!` block at a fixed, aligned placement (see
//! [`getpid_repeat`]) and return where it stopped if a call failed ([`Stopped`]). Only x86_64 has the instruction wired up; on other
//! architectures every call returns `-ENOSYS` and [`AVAILABLE`] is false, so a
//! benchmark skips `via=raw` before it builds anything.
//!
//! # Safety
//! Every `unsafe` block executes the `syscall` instruction with a number and arguments
//! that are plain integers or pointers to live, correctly sized memory the caller
//! borrows for the call, and declares the registers the instruction clobbers (`rcx`,
//! `r11`). The kernel reads and writes only the memory those pointers name.
#![allow(unsafe_code)]

use std::ffi::CStr;
use std::io;
use std::marker::PhantomData;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};

/// Whether this architecture's system-call instruction is wired up here.
pub const AVAILABLE: bool = cfg!(target_arch = "x86_64");

/// Turns a raw result (a negative errno on failure) into an `io::Result`.
#[inline(always)]
pub fn check(r: isize) -> io::Result<usize> {
    if (-4095..0).contains(&r) {
        Err(io::Error::from_raw_os_error(-r as i32))
    } else {
        Ok(r as usize)
    }
}

/// The `syscall` instruction with up to four arguments (the rest are unused by the
/// calls made here).
///
/// # Safety
/// Every pointer among the arguments names memory that is valid for what call `nr`
/// does with it (reads or writes of the sizes it is given) for the duration of the
/// call, and the call changes nothing the Rust program relies on (no memory it does
/// not own, no descriptor another owner holds).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn syscall4(nr: libc::c_long, a: usize, b: usize, c: usize, d: usize) -> isize {
    let ret: isize;
    // SAFETY: the caller vouches for the arguments; the instruction clobbers rcx and
    // r11, which are declared, and does not touch the user stack.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") nr as isize => ret,
            in("rdi") a, in("rsi") b, in("rdx") c, in("r10") d,
            lateout("rcx") _, lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
unsafe fn syscall4(_: libc::c_long, _: usize, _: usize, _: usize, _: usize) -> isize {
    -(libc::ENOSYS as isize)
}

/// write(2) of `buf` to `fd`.
#[inline(always)]
pub fn write(fd: BorrowedFd<'_>, buf: &[u8]) -> isize {
    let (p, n) = (buf.as_ptr() as usize, buf.len());
    // SAFETY: `buf` is readable for its length during the call.
    unsafe { syscall4(libc::SYS_write, fd.as_raw_fd() as usize, p, n, 0) }
}

/// read(2) from `fd` into `buf`.
#[inline(always)]
pub fn read(fd: BorrowedFd<'_>, buf: &mut [u8]) -> isize {
    let (p, n) = (buf.as_mut_ptr() as usize, buf.len());
    // SAFETY: `buf` is writable for its length during the call.
    unsafe { syscall4(libc::SYS_read, fd.as_raw_fd() as usize, p, n, 0) }
}

/// pread64(2) from `fd` at `offset` into `buf`.
#[inline(always)]
pub fn pread(fd: BorrowedFd<'_>, buf: &mut [u8], offset: u64) -> isize {
    let (p, n) = (buf.as_mut_ptr() as usize, buf.len());
    let fd = fd.as_raw_fd() as usize;
    // SAFETY: `buf` is writable for its length during the call.
    unsafe { syscall4(libc::SYS_pread64, fd, p, n, offset as usize) }
}

/// openat(2) of `path` relative to the current directory with `flags` (no `O_CREAT`:
/// no mode is passed), the new descriptor owned at once.
#[inline(always)]
pub fn open(path: &CStr, flags: libc::c_int) -> io::Result<OwnedFd> {
    if flags & libc::O_CREAT != 0 {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let dir = libc::AT_FDCWD as isize as usize;
    // SAFETY: `path` is a NUL-terminated string readable during the call.
    let r = unsafe {
        syscall4(
            libc::SYS_openat,
            dir,
            path.as_ptr() as usize,
            flags as usize,
            0,
        )
    };
    // SAFETY: a descriptor openat just returned, which nothing else owns.
    check(r).map(|fd| unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// close(2) of an owned descriptor, with close's own result (the descriptor is closed
/// whatever it is).
#[inline(always)]
pub fn close(fd: OwnedFd) -> isize {
    // SAFETY: `fd` is owned and consumed: nothing else holds or will use it.
    unsafe { syscall4(libc::SYS_close, fd.into_raw_fd() as usize, 0, 0, 0) }
}

/// dup(2) of `fd`, the new descriptor owned at once.
#[inline(always)]
pub fn dup(fd: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    // SAFETY: an integer argument.
    let r = unsafe { syscall4(libc::SYS_dup, fd.as_raw_fd() as usize, 0, 0, 0) };
    // SAFETY: a descriptor dup just returned, which nothing else owns.
    check(r).map(|fd| unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// A signal's disposition in the kernel's own layout (`struct sigaction` of
/// rt_sigaction(2), not the C library's): read with [`sigaction_get`], installed again
/// as it was with [`sigaction_set_call`].
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct KernelAction {
    handler: usize,
    flags: u64,
    restorer: usize,
    mask: u64,
}

/// Reads the kernel's disposition of `sig`.
pub fn sigaction_get(sig: libc::c_int) -> io::Result<KernelAction> {
    let mut old = KernelAction {
        handler: 0,
        flags: 0,
        restorer: 0,
        mask: 0,
    };
    let p = &mut old as *mut KernelAction as usize;
    // SAFETY: a null new action only queries; `old` is writable and the mask size
    // (8 bytes) matches its field.
    let r = unsafe { syscall4(libc::SYS_rt_sigaction, sig as usize, 0, p, 8) };
    check(r)?;
    Ok(old)
}

/// Where a [`repeat`] loop stopped early: the call that failed and its
/// raw result (a negative errno, or for the pipe pair a count other than 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped {
    /// The call's name, as its man page names it.
    pub call: &'static str,
    /// What it returned.
    pub result: isize,
}

// The repeat loops: the whole timed loop in one `asm!` block, the count in a register
// and the `syscall` instruction inside, the loop's head at the start of a 64-byte block
// (`.p2align 6`). On some CPUs (AMD with the SRSO mitigation) the same instruction
// costs more at some code placements than at others (docs/entry.md, "the call site's
// placement"); a loop the compiler places lands wherever the rest of the
// program puts it, and `scripts/via.py --sweep` found the start of a block fast for
// both the getpid loop and the pipe pair. Each iteration checks its result and leaves
// the loop at the first failure, which the function returns: a failed call fails the
// benchmark, never shortens its loop unnoticed.

/// A call without arguments, made `n` times by [`repeat`] in one aligned loop.
fn no_args(nr: libc::c_long, name: &'static str, n: u64) -> Result<(), Stopped> {
    repeat(Call::new(nr, name, [0; 4]), n)
}

/// getpid(2) `n` times in one aligned loop: the timed loop of `syscall.getpid via=raw`
/// and of `syscall.getpid.raw`.
pub fn getpid_repeat(n: u64) -> Result<(), Stopped> {
    no_args(libc::SYS_getpid, "getpid", n)
}

/// getppid(2) `n` times in one aligned loop.
pub fn getppid_repeat(n: u64) -> Result<(), Stopped> {
    no_args(libc::SYS_getppid, "getppid", n)
}

/// getuid(2) `n` times in one aligned loop.
pub fn getuid_repeat(n: u64) -> Result<(), Stopped> {
    no_args(libc::SYS_getuid, "getuid", n)
}

/// getgid(2) `n` times in one aligned loop.
pub fn getgid_repeat(n: u64) -> Result<(), Stopped> {
    no_args(libc::SYS_getgid, "getgid", n)
}

/// A number no kernel implements, `n` times: the first call fails with `-ENOSYS`.
#[cfg(test)]
fn unimplemented_repeat(n: u64) -> Result<(), Stopped> {
    no_args(
        super::sys::UNIMPLEMENTED_SYSCALL as libc::c_long,
        "unimplemented",
        n,
    )
}

/// A one-byte write(2) of `buf` to `w` then a one-byte read(2) from `r` into `buf`, `n`
/// times in one aligned loop, stopping at the first call that does not move exactly
/// one byte: the timed loop of `ipc.pipe.self via=raw` and `ctx.pipe via=raw`.
#[cfg(target_arch = "x86_64")]
#[inline(never)]
pub fn write_read_repeat(
    w: BorrowedFd<'_>,
    r: BorrowedFd<'_>,
    buf: &mut [u8; 1],
    n: u64,
) -> Result<(), Stopped> {
    if n == 0 {
        return Ok(());
    }
    let (left, ret, which): (u64, isize, u32);
    // SAFETY: `buf` is one readable and writable byte during the loop, and each call
    // moves at most one byte (rdx = 1); rsi and rdx are inputs the kernel preserves
    // across the instruction, which clobbers rax, rcx and r11 (declared), as rdi is;
    // neither the loop nor the kernel touches the user stack.
    unsafe {
        std::arch::asm!(
            ".p2align 6",
            "2:",
            "mov eax, {write}",
            "mov edi, {w:e}",
            "syscall",
            "cmp rax, 1",
            "jne 3f",
            "mov eax, {read}",
            "mov edi, {r:e}",
            "syscall",
            "cmp rax, 1",
            "jne 4f",
            "dec {n}",
            "jnz 2b",
            "jmp 5f",
            "3:",
            "mov {which:e}, 1",
            "jmp 5f",
            "4:",
            "mov {which:e}, 2",
            "5:",
            write = const libc::SYS_write,
            read = const libc::SYS_read,
            w = in(reg) w.as_raw_fd(),
            r = in(reg) r.as_raw_fd(),
            n = inout(reg) n => left,
            which = inout(reg) 0u32 => which,
            in("rsi") buf.as_mut_ptr(),
            in("rdx") 1usize,
            out("rax") ret, out("rdi") _, out("rcx") _, out("r11") _,
            options(nostack),
        );
    }
    match (left, which) {
        (0, _) => Ok(()),
        (_, 1) => Err(Stopped {
            call: "write",
            result: ret,
        }),
        _ => Err(Stopped {
            call: "read",
            result: ret,
        }),
    }
}

/// The same where the instruction is not wired up: the write fails with `-ENOSYS`.
#[cfg(not(target_arch = "x86_64"))]
pub fn write_read_repeat(
    _: BorrowedFd<'_>,
    _: BorrowedFd<'_>,
    _: &mut [u8; 1],
    n: u64,
) -> Result<(), Stopped> {
    if n == 0 {
        return Ok(());
    }
    Err(Stopped {
        call: "write",
        result: -(libc::ENOSYS as isize),
    })
}

/// One system call with its arguments, to make many times over with [`repeat`]: built
/// by a `*_call` function below from plain integers and memory it borrows for `'a`.
#[derive(Debug)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub struct Call<'a> {
    nr: libc::c_long,
    args: [usize; 4],
    name: &'static str,
    /// The result to fail with at once instead (a call refused before the kernel).
    refused: Option<isize>,
    _borrows: PhantomData<&'a mut ()>,
}

impl<'a> Call<'a> {
    fn new(nr: libc::c_long, name: &'static str, args: [usize; 4]) -> Call<'a> {
        Call {
            nr,
            args,
            name,
            refused: None,
            _borrows: PhantomData,
        }
    }

    fn refused(name: &'static str, errno: libc::c_int) -> Call<'a> {
        Call {
            nr: 0,
            args: [0; 4],
            name,
            refused: Some(-(errno as isize)),
            _borrows: PhantomData,
        }
    }

    /// The call's name, as its man page names it.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The call made once, outside a loop: its raw result.
    #[cfg(all(test, target_arch = "x86_64"))]
    fn once(self) -> isize {
        let [a, b, c, d] = self.args;
        // SAFETY: as in `repeat`, a `Call`'s arguments are valid for its call.
        let call = || unsafe { syscall4(self.nr, a, b, c, d) };
        self.refused.unwrap_or_else(call)
    }
}

/// Makes `call` `n` times in one aligned loop, the arguments in their registers
/// throughout (the kernel preserves them), stopping at the first negative result: the
/// timed loop of the `via=raw` rows of a single call (`syscall.getpid`, `uname`,
/// `times`, `kill`, `writev`, `poll`, …).
#[cfg(target_arch = "x86_64")]
#[inline(never)]
pub fn repeat(call: Call<'_>, n: u64) -> Result<(), Stopped> {
    if n == 0 {
        return Ok(());
    }
    if let Some(result) = call.refused {
        return Err(Stopped {
            call: call.name,
            result,
        });
    }
    let [a, b, c, d] = call.args;
    let (left, ret): (u64, isize);
    // SAFETY: a `Call` is only built below, each from arguments that are plain
    // integers or pointers to memory it borrows for its life (which outlasts this
    // loop), for a call that may be made with them any number of times; rdi, rsi, rdx
    // and r10 are inputs the kernel preserves across the instruction, which clobbers
    // rax, rcx and r11 (declared); neither the loop nor the kernel touches the user
    // stack.
    unsafe {
        std::arch::asm!(
            ".p2align 6",
            "2:",
            "mov eax, {nr:e}",
            "syscall",
            "test rax, rax",
            "js 3f",
            "dec {n}",
            "jnz 2b",
            "3:",
            nr = in(reg) call.nr as u32,
            n = inout(reg) n => left,
            in("rdi") a, in("rsi") b, in("rdx") c, in("r10") d,
            out("rax") ret, out("rcx") _, out("r11") _,
            options(nostack),
        );
    }
    if left == 0 {
        Ok(())
    } else {
        Err(Stopped {
            call: call.name,
            result: ret,
        })
    }
}

/// The same where the instruction is not wired up: the call fails with `-ENOSYS`.
#[cfg(not(target_arch = "x86_64"))]
pub fn repeat(call: Call<'_>, n: u64) -> Result<(), Stopped> {
    if n == 0 {
        return Ok(());
    }
    Err(Stopped {
        call: call.name,
        result: call.refused.unwrap_or(-(libc::ENOSYS as isize)),
    })
}

/// uname(2) into `buf` (the kernel's `struct new_utsname`, which has `utsname`'s
/// layout on Linux).
pub fn uname_call(buf: &mut libc::utsname) -> Call<'_> {
    let p = buf as *mut libc::utsname as usize;
    Call::new(libc::SYS_uname, "uname", [p, 0, 0, 0])
}

/// times(2) into `buf`.
pub fn times_call(buf: &mut libc::tms) -> Call<'_> {
    let p = buf as *mut libc::tms as usize;
    Call::new(libc::SYS_times, "times", [p, 0, 0, 0])
}

/// alarm(2): the benchmark passes 0, which cancels nothing it did not set.
#[cfg(target_arch = "x86_64")]
pub fn alarm_call(secs: u32) -> Call<'static> {
    Call::new(libc::SYS_alarm, "alarm", [secs as usize, 0, 0, 0])
}

/// alarm(2) does not exist on this architecture.
#[cfg(not(target_arch = "x86_64"))]
pub fn alarm_call(_: u32) -> Call<'static> {
    Call::refused("alarm", libc::ENOSYS)
}

/// kill(2) of `pid` with `sig`: any pid ≤ 0 is refused (`-EPERM`), as
/// [`super::sys::kill`] refuses it.
pub fn kill_call(pid: libc::pid_t, sig: libc::c_int) -> Call<'static> {
    if pid <= 0 {
        return Call::refused("kill", libc::EPERM);
    }
    Call::new(libc::SYS_kill, "kill", [pid as usize, sig as usize, 0, 0])
}

/// setpriority(2) of this process (`PRIO_PROCESS`, 0) to `prio`.
pub fn setpriority_self_call(prio: i32) -> Call<'static> {
    let which = libc::PRIO_PROCESS as usize;
    let args = [which, 0, prio as isize as usize, 0];
    Call::new(libc::SYS_setpriority, "setpriority", args)
}

/// setuid(2) of this thread to `uid`; the benchmark passes the current id.
pub fn setuid_call(uid: libc::uid_t) -> Call<'static> {
    Call::new(libc::SYS_setuid, "setuid", [uid as usize, 0, 0, 0])
}

/// setgid(2) of this thread to `gid`; the benchmark passes the current id.
pub fn setgid_call(gid: libc::gid_t) -> Call<'static> {
    Call::new(libc::SYS_setgid, "setgid", [gid as usize, 0, 0, 0])
}

/// ioctl(fd, TCGETS) into `t` (the kernel writes its shorter `struct termios` at the
/// start of the C library's, as the C library's `ioctl` would have it do).
pub fn tcgets_call<'a>(fd: BorrowedFd<'a>, t: &'a mut libc::termios) -> Call<'a> {
    let (fd, p) = (fd.as_raw_fd() as usize, t as *mut libc::termios as usize);
    Call::new(
        libc::SYS_ioctl,
        "ioctl(TCGETS)",
        [fd, libc::TCGETS as usize, p, 0],
    )
}

/// writev(2) of `iov` to `fd`: the caller keeps the memory the iovecs
/// point into alive while the call lives.
pub fn writev_call<'a>(fd: BorrowedFd<'a>, iov: &'a [libc::iovec]) -> Call<'a> {
    let (fd, p, n) = (fd.as_raw_fd() as usize, iov.as_ptr() as usize, iov.len());
    Call::new(libc::SYS_writev, "writev", [fd, p, n, 0])
}

/// poll(2) of `fds` with a zero timeout.
#[cfg(target_arch = "x86_64")]
pub fn poll_now_call(fds: &mut [libc::pollfd]) -> Call<'_> {
    let (p, n) = (fds.as_mut_ptr() as usize, fds.len());
    Call::new(libc::SYS_poll, "poll", [p, n, 0, 0])
}

/// poll(2) does not exist on this architecture.
#[cfg(not(target_arch = "x86_64"))]
pub fn poll_now_call(_: &mut [libc::pollfd]) -> Call<'_> {
    Call::refused("poll", libc::ENOSYS)
}

/// rt_sigaction(2) installing `act`, a disposition the kernel reported, for `sig`
/// again.
pub fn sigaction_set_call(sig: libc::c_int, act: &KernelAction) -> Call<'_> {
    let p = act as *const KernelAction as usize;
    Call::new(
        libc::SYS_rt_sigaction,
        "rt_sigaction",
        [sig as usize, p, 0, 8],
    )
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn raw_calls_agree_with_the_c_library() {
        let id = |nr, name| Call::new(nr, name, [0; 4]).once();
        let getpid = id(libc::SYS_getpid, "getpid");
        assert_eq!(getpid, super::super::sys::getpid() as isize);
        let getppid = id(libc::SYS_getppid, "getppid");
        assert_eq!(getppid, super::super::sys::getppid() as isize);
        let getuid = id(libc::SYS_getuid, "getuid");
        assert_eq!(getuid, super::super::sys::getuid() as isize);
        let (r, w) = super::super::task::pipe().unwrap();
        assert_eq!(write(w.as_fd(), b"x"), 1);
        let mut b = [0u8; 1];
        assert_eq!(read(r.as_fd(), &mut b), 1);
        assert_eq!(&b, b"x");
        let fd = open(c"/dev/null", libc::O_RDONLY | libc::O_CLOEXEC).unwrap();
        assert_eq!(close(dup(fd.as_fd()).unwrap()), 0);
        assert_eq!(close(fd), 0);
        let e = open(c"/nonexistent/x", libc::O_RDONLY).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(open(c"/dev/null", libc::O_CREAT).is_err());
        let a = sigaction_get(libc::SIGUSR2).unwrap();
        assert_eq!(sigaction_set_call(libc::SIGUSR2, &a).once(), 0);
        assert_eq!(kill_call(0, 0).once(), -(libc::EPERM as isize));
    }

    #[test]
    fn id_repeat_loops_run_and_stop_at_the_first_failure() {
        for f in [getpid_repeat, getppid_repeat, getuid_repeat, getgid_repeat] {
            assert_eq!(f(0), Ok(()));
            assert_eq!(f(1), Ok(()));
            assert_eq!(f(1000), Ok(()));
        }
        assert_eq!(unimplemented_repeat(0), Ok(()));
        let enosys = stopped("unimplemented", libc::ENOSYS);
        assert_eq!(unimplemented_repeat(1), enosys);
        assert_eq!(unimplemented_repeat(1000), enosys);
    }

    /// A loop stopped by `call`, which failed with `errno`.
    fn stopped(call: &'static str, errno: libc::c_int) -> Result<(), Stopped> {
        let result = -(errno as isize);
        Err(Stopped { call, result })
    }

    /// Bytes waiting in a non-blocking pipe, read out.
    fn drain(r: &OwnedFd) -> usize {
        let mut big = [0u8; 4096];
        match rustix::io::read(r, &mut big) {
            Ok(n) => n,
            Err(rustix::io::Errno::AGAIN) => 0,
            Err(e) => panic!("read: {e}"),
        }
    }

    /// The pipe pair runs exactly its count: each iteration writes one byte into one
    /// pipe and reads one from another that holds 10, so what the first gained and the
    /// second lost is the number of iterations; the eleventh read finds the second
    /// empty and stops the loop with its error, one write later.
    #[test]
    fn the_pipe_repeat_loop_runs_its_count_and_stops_at_a_failure() {
        use rustix::pipe::{pipe_with, PipeFlags};
        let nb = PipeFlags::NONBLOCK | PipeFlags::CLOEXEC;
        let (r1, w1) = pipe_with(nb).unwrap();
        let (r2, w2) = pipe_with(nb).unwrap();
        assert_eq!(rustix::io::write(&w2, &[b'y'; 10]).unwrap(), 10);
        let mut b = [b'x'];
        assert_eq!(write_read_repeat(w1.as_fd(), r2.as_fd(), &mut b, 0), Ok(()));
        assert_eq!(write_read_repeat(w1.as_fd(), r2.as_fd(), &mut b, 7), Ok(()));
        assert_eq!(&b, b"y");
        assert_eq!(drain(&r1), 7);
        let again = write_read_repeat(w1.as_fd(), r2.as_fd(), &mut b, 100);
        assert_eq!(again, stopped("read", libc::EAGAIN));
        assert_eq!(
            drain(&r1),
            4,
            "3 reads left in the second pipe, then the failed one"
        );
        assert_eq!(drain(&r2), 0);
        // The same pipe both ways, as the benchmarks have it: nothing left over.
        assert_eq!(
            write_read_repeat(w1.as_fd(), r1.as_fd(), &mut b, 1000),
            Ok(())
        );
        assert_eq!(drain(&r1), 0);
        // A write to the read end fails at once, and nothing is read.
        let ebadf = write_read_repeat(r1.as_fd(), r1.as_fd(), &mut b, 5);
        assert_eq!(ebadf, stopped("write", libc::EBADF));
    }

    /// A call with arguments repeats as often as asked and stops at its first failure:
    /// writev of one byte into a non-blocking pipe leaves one byte per call, until the
    /// pipe is full.
    #[test]
    fn call_repeat_loops_run_their_count_and_stop_at_a_failure() {
        use rustix::pipe::{pipe_with, PipeFlags};
        let (r, w) = pipe_with(PipeFlags::NONBLOCK | PipeFlags::CLOEXEC).unwrap();
        let byte = [b'z'];
        let iov = [libc::iovec {
            iov_base: byte.as_ptr() as *mut _,
            iov_len: 1,
        }];
        assert_eq!(repeat(writev_call(w.as_fd(), &iov), 0), Ok(()));
        assert_eq!(repeat(writev_call(w.as_fd(), &iov), 37), Ok(()));
        assert_eq!(drain(&r), 37);
        let full = repeat(writev_call(w.as_fd(), &iov), u64::MAX);
        assert_eq!(full, stopped("writev", libc::EAGAIN));
        let bad = repeat(writev_call(r.as_fd(), &iov), 5);
        assert_eq!(bad, stopped("writev", libc::EBADF));

        let mut u = super::super::sys::utsname_zeroed();
        assert_eq!(repeat(uname_call(&mut u), 3), Ok(()));
        assert_eq!(
            u.sysname[..5].iter().map(|&c| c as u8).collect::<Vec<_>>(),
            b"Linux"
        );
        let mut t = super::super::sys::tms_zeroed();
        assert_eq!(repeat(times_call(&mut t), 3), Ok(()));
        let me = super::super::sys::getpid();
        assert_eq!(repeat(kill_call(me, 0), 3), Ok(()));
        assert_eq!(kill_call(0, 0).name(), "kill");
        assert_eq!(repeat(kill_call(0, 0), 3), stopped("kill", libc::EPERM));
        assert_eq!(repeat(kill_call(0, 0), 0), Ok(()));
        let a = sigaction_get(libc::SIGUSR2).unwrap();
        assert_eq!(repeat(sigaction_set_call(libc::SIGUSR2, &a), 3), Ok(()));
        assert_eq!(repeat(setuid_call(super::super::sys::getuid()), 3), Ok(()));
        assert_eq!(repeat(setgid_call(super::super::sys::getgid()), 3), Ok(()));
        let prio = super::super::sys::getpriority_self().unwrap();
        assert_eq!(repeat(setpriority_self_call(prio), 3), Ok(()));
        let mut fds = [libc::pollfd {
            fd: w.as_raw_fd(),
            events: libc::POLLOUT,
            revents: 0,
        }];
        drain(&r);
        assert_eq!(repeat(poll_now_call(&mut fds), 3), Ok(()));
        assert_eq!(fds[0].revents, libc::POLLOUT);
    }
}
