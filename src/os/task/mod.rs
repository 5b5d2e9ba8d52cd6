//! Tasks that hand control to each other: forked children and the pipes, futex words,
//! eventfds, signals and yields they block on, plus the vector-register dirtying that
//! makes a switch save AVX state.
//!
//! A forked child runs a closure that may only make async-signal-safe calls (the parent
//! may have other threads): no allocation, no locks, no printing. It ends with `_exit`,
//! never by returning into the parent's code. Every [`Child`] is reaped: by the owner,
//! or by its `Drop`, which kills it first. Signals go only to our own children or to
//! threads of this process; a guard refuses any pid or tid ≤ 0.
//!
//! Submodules: `child` (fork and the child type), `signals` (signals, masks and
//! handlers between our own tasks) and `vector` (blocking with dirty vector state).
#![allow(unsafe_code)]

mod child;
mod signals;
mod vector;

pub use child::*;
pub use signals::*;
pub use vector::*;

use std::io;
use std::os::fd::{OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, AtomicU64};

/// A pipe (read end, write end), both close-on-exec.
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?)
}

/// A connected pair of Unix stream sockets, close-on-exec.
pub fn socketpair() -> io::Result<(OwnedFd, OwnedFd)> {
    use rustix::net::{AddressFamily, SocketFlags, SocketType};
    Ok(rustix::net::socketpair(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::CLOEXEC,
        None,
    )?)
}

/// read(2) into `buf`: the byte count, or -1 with errno set.
#[inline(always)]
pub fn read_fd(fd: RawFd, buf: &mut [u8]) -> isize {
    // SAFETY: `buf` is valid for writes of its length; a bad fd is an error, not UB.
    unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) }
}

/// write(2) from `buf`: the byte count, or -1 with errno set.
#[inline(always)]
pub fn write_fd(fd: RawFd, buf: &[u8]) -> isize {
    // SAFETY: `buf` is valid for reads of its length; a bad fd is an error, not UB.
    unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) }
}

/// The errno of the last failed call on this thread.
pub fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Shared, zeroed anonymous memory (MAP_SHARED) that forked children share with the
/// parent: futex words, flags, and the slots where ring members leave their usage.
#[derive(Debug)]
pub struct SharedMem {
    ptr: *mut libc::c_void,
    len: usize,
}

// SAFETY: the memory is only reached through atomics.
unsafe impl Send for SharedMem {}
// SAFETY: as above.
unsafe impl Sync for SharedMem {}

impl SharedMem {
    /// Maps at least `bytes` bytes (one page at minimum).
    pub fn new(bytes: usize) -> io::Result<SharedMem> {
        let len = bytes.max(1).div_ceil(4096) * 4096;
        // SAFETY: a fresh anonymous mapping; no existing memory is affected.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(SharedMem { ptr, len })
    }

    /// The `i`th 32-bit word.
    pub fn word(&self, i: usize) -> &AtomicU32 {
        assert!(i < self.len / 4, "word index out of the mapping");
        // SAFETY: in bounds (checked), mapped, zero-initialised, aligned, and alive as
        // long as `self`; every access goes through the atomic.
        unsafe { &*(self.ptr as *const AtomicU32).add(i) }
    }

    /// The start of the mapping, for byte copies in and out of it.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.cast()
    }

    /// The mapping's length in bytes (whole pages).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mapping is empty (it never is: one page at least).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The `i`th 64-bit slot (overlapping words 2i and 2i+1).
    pub fn slot(&self, i: usize) -> &AtomicU64 {
        assert!(i < self.len / 8, "slot index out of the mapping");
        // SAFETY: as for `word`, with 8-byte alignment (the mapping is page-aligned).
        unsafe { &*(self.ptr as *const AtomicU64).add(i) }
    }
}

impl Drop for SharedMem {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`; no reference outlives self.
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

/// FUTEX_WAIT on a word that may be shared between processes: sleeps while the word
/// equals `expected`, at most `timeout` if given. Returns 0, or -1 with errno (EAGAIN
/// when it already differs, ETIMEDOUT).
#[inline(always)]
pub fn futex_wait(
    word: &AtomicU32,
    expected: u32,
    timeout: Option<&libc::timespec>,
) -> i64 {
    let t = timeout.map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: the word is a valid, aligned u32 and `t` null or a valid timespec for
    // the call's duration.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            t,
        )
    }
}

/// FUTEX_WAKE: wakes up to `n` waiters on the word. Returns how many woke, or -1.
#[inline(always)]
pub fn futex_wake(word: &AtomicU32, n: i32) -> i64 {
    // SAFETY: the word is a valid, aligned u32; the kernel only uses its address.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, n) }
}

/// sched_yield(2).
#[inline(always)]
pub fn yield_now() -> i32 {
    // SAFETY: no arguments, no preconditions.
    unsafe { libc::sched_yield() }
}

/// Makes this process the reaper of its orphaned descendants
/// (`PR_SET_CHILD_SUBREAPER`): a grandchild whose parent dies becomes this process's
/// child instead of init's, so a test can see and reap whatever a killed child left.
pub fn become_subreaper() -> std::io::Result<()> {
    use rustix::process::{getpid, set_child_subreaper};
    Ok(set_child_subreaper(Some(getpid()))?)
}

/// The calling thread's id.
pub fn gettid() -> libc::pid_t {
    // SAFETY: no arguments, no preconditions.
    unsafe { libc::gettid() }
}

/// The soft RLIMIT_NPROC, or None when unlimited.
pub fn nproc_limit() -> Option<u64> {
    use rustix::process::{getrlimit, Resource};
    getrlimit(Resource::Nproc).current
}

/// The effective user id.
pub fn geteuid() -> libc::uid_t {
    rustix::process::geteuid().as_raw()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::os::signal::QueueInfo;
    use std::time::{Duration, Instant};

    #[test]
    fn a_child_is_reaped_with_its_status() {
        // SAFETY: the child only returns.
        let mut c = unsafe { fork(|| 7) }.unwrap();
        let st = c.wait().unwrap();
        assert_eq!(describe_status(st), "exited with status 7");
        assert!(!exited_ok(st));
    }

    #[test]
    fn a_partner_gives_up_the_descriptors_it_is_told_to_and_keeps_to_its_cpus() {
        use std::os::fd::AsRawFd;
        let (r, w) = pipe().unwrap();
        let (rfd, wfd) = (r.as_raw_fd(), w.as_raw_fd());
        let cpus = crate::os::affinity::allowed_cpus().unwrap();
        // SAFETY: the child checks with fcntl that its copy of the write end is gone
        // (exit 1 if not), then reads from the pipe into its stack until end of file.
        let mut c = unsafe {
            fork_partner(&[wfd, -1], &cpus, || {
                if libc::fcntl(wfd, libc::F_GETFD) != -1 {
                    return 1;
                }
                let mut b = [0u8; 1];
                while read_fd(rfd, &mut b) > 0 {}
                0
            })
        }
        .unwrap();
        drop(w);
        assert_eq!(describe_status(c.wait().unwrap()), "exited with status 0");
        // A CPU the kernel cannot have: the partner stops before its work.
        let far = rustix::thread::CpuSet::MAX_CPU;
        // SAFETY: the work is never reached.
        let mut c = unsafe { fork_partner(&[], &[far], || 0) }.unwrap();
        assert_eq!(
            describe_status(c.wait().unwrap()),
            format!("exited with status {PARTNER_CPUS_FAILED}")
        );
    }

    /// A child blocked reading a pipe whose write end (returned) is never written.
    fn blocked_child() -> (Child, OwnedFd) {
        let (r, w) = pipe().unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&r);
        // SAFETY: the child only reads from a pipe into its stack.
        let c = unsafe {
            fork(move || {
                let mut b = [0u8; 1];
                read_fd(fd, &mut b); // blocks: the parent never writes
                0
            })
        }
        .unwrap();
        (c, w)
    }

    #[test]
    fn dropping_a_child_kills_and_reaps_it() {
        let (c, _w) = blocked_child();
        let pid = c.pid();
        drop(c);
        // The pid is gone: no such process (or reused by an unrelated one, which
        // kill(pid, 0) cannot tell apart, so look at our own children instead).
        let mut st = 0;
        // SAFETY: test-only waitpid on a pid we reaped.
        let r = unsafe { libc::waitpid(pid, &mut st, libc::WNOHANG) };
        assert_eq!(r, -1, "the child was already reaped");
    }

    #[test]
    fn reap_by_kills_a_child_that_does_not_end() {
        let (mut c, _w) = blocked_child();
        let (st, killed) = c
            .reap_by(Instant::now() + Duration::from_millis(20))
            .unwrap();
        assert!(killed);
        assert_eq!(describe_status(st), "killed by signal 9");
    }

    #[test]
    fn futex_words_are_shared_with_a_child() {
        let page = SharedMem::new(64).unwrap();
        let w = page.word(3);
        // SAFETY: the child only stores to shared memory and wakes a futex.
        let mut c = unsafe {
            fork(|| {
                w.store(5, std::sync::atomic::Ordering::SeqCst);
                futex_wake(w, 1);
                0
            })
        }
        .unwrap();
        while w.load(std::sync::atomic::Ordering::SeqCst) != 5 {
            futex_wait(w, 0, None);
        }
        assert!(exited_ok(c.wait().unwrap()));
    }

    #[test]
    fn dirty_syscalls_return_like_plain_ones() {
        use std::io::Write;
        use std::os::fd::AsRawFd;
        let word = std::sync::atomic::AtomicU32::new(7);
        for v in [Vector::Clean, Vector::Avx, Vector::Avx512] {
            assert_eq!(syscall_dirty(v, DirtyCall::Yield), 0);
            // The word does not hold 6: FUTEX_WAIT returns at once with EAGAIN.
            let r = syscall_dirty(v, DirtyCall::FutexWait(&word, 6));
            assert_eq!(r, -(libc::EAGAIN as isize));
            // A read takes what is there, no more than the buffer holds.
            let (r, w) = std::io::pipe().unwrap();
            (&w).write_all(b"abc").unwrap();
            let mut buf = [0u8; 2];
            assert_eq!(
                syscall_dirty(v, DirtyCall::Read(r.as_raw_fd(), &mut buf)),
                2
            );
            assert_eq!(&buf, b"ab");
        }
    }

    #[test]
    fn sigqueue_and_tgkill_refuse_non_positive_ids() {
        let info = QueueInfo::new(0);
        for id in [0, -1, -5] {
            assert_eq!(sigqueue(id, None, &info), -1);
            assert_eq!(sigqueue(id, Some(1), &info), -1);
            assert_eq!(sigqueue(1, Some(id), &info), -1);
            assert_eq!(tgkill(id, 1, 0), -1);
            assert_eq!(tgkill(1, id, 0), -1);
        }
    }
}
