//! The calls of the peers' loops (will-it-scale's tests) that no other wrapper here
//! makes: positioned and plain reads and writes, `lseek`, record locks, `fallocate`,
//! create and unlink by path, the C library's mutex, semaphore and allocator, and the
//! private futex operations.
//!
//! Each wrapper is `#[inline(always)]` and returns the raw result (`-1` with `errno`
//! set), leaving error handling to the caller, as `sys` does. The owning types
//! ([`CMutex`], [`Semaphore`]) release what they hold on drop. It must not know any
//! benchmark by name, keep timing state, or print anything.
//!
//! # Safety
//! Every `unsafe` block passes the C library pointers to live, correctly sized values
//! the caller borrows for the call (buffers, a `flock`, a NUL-terminated path, a mutex
//! or semaphore that does not move while it is in use: both are boxed or static).
#![allow(unsafe_code)]

use std::cell::UnsafeCell;
use std::ffi::CStr;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::sync::atomic::AtomicU32;

/// `pread(fd, buf, off)`.
#[inline(always)]
pub fn pread(fd: BorrowedFd<'_>, buf: &mut [u8], off: u64) -> isize {
    // SAFETY: `buf` is writable for its length.
    unsafe {
        libc::pread(
            fd.as_raw_fd(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            off as libc::off_t,
        )
    }
}

/// `pwrite(fd, buf, off)`.
#[inline(always)]
pub fn pwrite(fd: BorrowedFd<'_>, buf: &[u8], off: u64) -> isize {
    // SAFETY: `buf` is readable for its length.
    unsafe {
        libc::pwrite(
            fd.as_raw_fd(),
            buf.as_ptr().cast(),
            buf.len(),
            off as libc::off_t,
        )
    }
}

/// `read(fd, buf)`.
#[inline(always)]
pub fn read(fd: BorrowedFd<'_>, buf: &mut [u8]) -> isize {
    // SAFETY: `buf` is writable for its length.
    unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) }
}

/// `write(fd, buf)`.
#[inline(always)]
pub fn write(fd: BorrowedFd<'_>, buf: &[u8]) -> isize {
    // SAFETY: `buf` is readable for its length.
    unsafe { libc::write(fd.as_raw_fd(), buf.as_ptr().cast(), buf.len()) }
}

/// `lseek(fd, off, SEEK_SET)`: the new offset, or -1.
#[inline(always)]
pub fn seek_to(fd: BorrowedFd<'_>, off: u64) -> i64 {
    // SAFETY: integer arguments only.
    unsafe { libc::lseek(fd.as_raw_fd(), off as libc::off_t, libc::SEEK_SET) }
}

/// `fcntl(fd, F_SETLKW, …)` of the file's first byte: a write lock (`lock`) or its
/// release. Waits while another process holds it.
#[inline(always)]
pub fn lock_first_byte(fd: BorrowedFd<'_>, lock: bool) -> libc::c_int {
    // SAFETY: flock is plain integers; all-zero is valid before the fields are set.
    let mut l: libc::flock = unsafe { std::mem::zeroed() };
    let ty = if lock { libc::F_WRLCK } else { libc::F_UNLCK };
    l.l_type = ty as libc::c_short;
    l.l_whence = libc::SEEK_SET as libc::c_short;
    l.l_start = 0;
    l.l_len = 1;
    // SAFETY: `l` is a valid flock for the call's duration.
    unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETLKW, &l as *const libc::flock) }
}

/// `fallocate(fd, 0, off, len)`: allocates the range (mode 0, the file grows).
#[inline(always)]
pub fn fallocate(fd: BorrowedFd<'_>, off: u64, len: u64) -> libc::c_int {
    // SAFETY: integer arguments only.
    unsafe { libc::fallocate(fd.as_raw_fd(), 0, off as libc::off_t, len as libc::off_t) }
}

/// `ftruncate(fd, len)`.
#[inline(always)]
pub fn ftruncate(fd: BorrowedFd<'_>, len: u64) -> libc::c_int {
    // SAFETY: integer arguments only.
    unsafe { libc::ftruncate(fd.as_raw_fd(), len as libc::off_t) }
}

/// `open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)`: the raw descriptor, or -1. The
/// caller closes it with [`close`].
#[inline(always)]
pub fn create(path: &CStr) -> RawFd {
    let flags = libc::O_RDWR | libc::O_CREAT | libc::O_CLOEXEC;
    // SAFETY: `path` is NUL-terminated and readable for the call.
    unsafe { libc::open(path.as_ptr(), flags, 0o600 as libc::c_uint) }
}

/// `close(fd)` of a raw descriptor [`create`] returned.
#[inline(always)]
pub fn close(fd: RawFd) -> libc::c_int {
    // SAFETY: the caller passes a descriptor it owns and no longer uses.
    unsafe { libc::close(fd) }
}

/// `unlink(path)`.
#[inline(always)]
pub fn unlink(path: &CStr) -> libc::c_int {
    // SAFETY: `path` is NUL-terminated and readable for the call.
    unsafe { libc::unlink(path.as_ptr()) }
}

/// `malloc(size)` and `free` of what it returned: false when malloc returned null. The
/// pointer escapes (`black_box`) so that the pair is not optimised away.
#[inline(always)]
pub fn malloc_free(size: usize) -> bool {
    // SAFETY: malloc has no preconditions; free receives what malloc returned.
    unsafe {
        let p = libc::malloc(size);
        if p.is_null() {
            return false;
        }
        libc::free(std::hint::black_box(p));
    }
    true
}

/// `syscall(SYS_futex, word, op, val, NULL)`: FUTEX_WAKE or FUTEX_WAIT, shared or
/// private (`op` with `FUTEX_PRIVATE_FLAG`). Returns the raw result.
#[inline(always)]
pub fn futex(word: &AtomicU32, op: libc::c_int, val: u32) -> i64 {
    let none = std::ptr::null::<libc::timespec>();
    // SAFETY: the word is a valid, aligned u32; no timeout.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), op, val, none) }
}

/// The C library's mutex (`pthread_mutex_t`, default attributes), usable from a
/// `static` (one for the whole process, as will-it-scale's global) or boxed.
pub struct CMutex(UnsafeCell<libc::pthread_mutex_t>);

// SAFETY: a pthread mutex is made to be locked and unlocked from any thread.
unsafe impl Sync for CMutex {}
// SAFETY: as above; it is only moved while no thread uses it.
unsafe impl Send for CMutex {}

impl CMutex {
    /// An unlocked mutex (`PTHREAD_MUTEX_INITIALIZER`).
    pub const fn new() -> CMutex {
        CMutex(UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER))
    }

    /// `pthread_mutex_lock`; 0 or an error number.
    #[inline(always)]
    pub fn lock(&self) -> libc::c_int {
        // SAFETY: the mutex is initialised and does not move while borrowed.
        unsafe { libc::pthread_mutex_lock(self.0.get()) }
    }

    /// `pthread_mutex_unlock`; 0 or an error number. Only the thread that locked it
    /// may unlock it.
    #[inline(always)]
    pub fn unlock(&self) -> libc::c_int {
        // SAFETY: as for `lock`.
        unsafe { libc::pthread_mutex_unlock(self.0.get()) }
    }
}

impl Default for CMutex {
    fn default() -> CMutex {
        CMutex::new()
    }
}

/// A POSIX semaphore private to this process (`sem_init(&s, 0, value)`), destroyed on
/// drop.
pub struct Semaphore(Box<UnsafeCell<libc::sem_t>>);

impl Semaphore {
    /// A semaphore with `value`.
    pub fn new(value: u32) -> std::io::Result<Semaphore> {
        // SAFETY: sem_t is plain data; sem_init initialises it in place, boxed so it
        // never moves.
        let s = Box::new(UnsafeCell::new(unsafe {
            std::mem::zeroed::<libc::sem_t>()
        }));
        // SAFETY: a valid, writable sem_t that lives as long as the Semaphore.
        super::sys::cvt(unsafe { libc::sem_init(s.get(), 0, value) }.into())?;
        Ok(Semaphore(s))
    }

    /// `sem_wait`; 0 or -1.
    #[inline(always)]
    pub fn wait(&self) -> libc::c_int {
        // SAFETY: initialised in `new`, not destroyed before drop.
        unsafe { libc::sem_wait(self.0.get()) }
    }

    /// `sem_post`; 0 or -1.
    #[inline(always)]
    pub fn post(&self) -> libc::c_int {
        // SAFETY: as for `wait`.
        unsafe { libc::sem_post(self.0.get()) }
    }
}

impl Drop for Semaphore {
    fn drop(&mut self) {
        // SAFETY: initialised in `new`; nobody waits on it once it is dropped.
        unsafe { libc::sem_destroy(self.0.get()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calls_do_what_they_say_on_an_unnamed_file() {
        let f = tempfile::tempfile().unwrap();
        let fd = std::os::fd::AsFd::as_fd(&f);
        assert_eq!(pwrite(fd, &[7u8; 4096], 4096), 4096);
        let mut b = [0u8; 4096];
        assert_eq!(pread(fd, &mut b, 4096), 4096);
        assert_eq!(b[0], 7);
        assert_eq!(seek_to(fd, 4096), 4096);
        assert_eq!(read(fd, &mut b), 4096);
        assert_eq!(write(fd, &b), 4096);
        assert_eq!(lock_first_byte(fd, true), 0);
        assert_eq!(lock_first_byte(fd, false), 0);
        assert_eq!(fallocate(fd, 0, 8192), 0);
        assert_eq!(ftruncate(fd, 0), 0);
        assert!(malloc_free(1024));
        let m = CMutex::new();
        assert_eq!((m.lock(), m.unlock()), (0, 0));
        let s = Semaphore::new(1).unwrap();
        assert_eq!((s.wait(), s.post()), (0, 0));
        let w = AtomicU32::new(0);
        assert_eq!(futex(&w, libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, 1), 0);
        assert_eq!(
            futex(&w, libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG, 1),
            -1
        );
    }
}
