//! Wrappers for the calls the peers' tests time and the newer calls: private futex
//! operations (wait, wake, requeue, PI lock), epoll_ctl, select and the sleeps of
//! lmbench's lat_usleep, System V semaphores, record locks, getrandom, membarrier,
//! pidfd_open, clone3, process_vm_readv, mseal and the seccomp user notification.
//!
//! Every call that a timed loop makes is `#[inline(always)]` and returns the raw
//! result (-1 with errno), leaving the error handling to the caller. Every owning type
//! releases what it holds when dropped (a semaphore set is removed), but for a sealed
//! page, which the kernel lets nobody unmap: it lasts until the process exits. Nothing
//! here signals a process or changes a system setting.
//!
//! # Safety
//! Each `unsafe` block passes pointers to live, correctly sized values owned or
//! borrowed by the caller for the duration of the call, or integers only.
#![allow(unsafe_code)]

use super::sys::cvt;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::AtomicU32;

const PRIVATE: libc::c_int = libc::FUTEX_PRIVATE_FLAG;

/// FUTEX_WAIT|PRIVATE without a time limit: sleeps while `word` equals `expected`.
/// Returns 0, or -1 with errno (EAGAIN when it already differs).
#[inline(always)]
pub fn futex_wait(word: &AtomicU32, expected: u32) -> i64 {
    // SAFETY: the word is a valid, aligned u32 for the call; no timeout.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | PRIVATE,
            expected,
            std::ptr::null::<libc::timespec>(),
        )
    }
}

/// FUTEX_WAKE|PRIVATE: wakes up to `n` waiters. Returns how many woke, or -1.
#[inline(always)]
pub fn futex_wake(word: &AtomicU32, n: i32) -> i64 {
    // SAFETY: the word is a valid, aligned u32; the kernel only uses its address.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | PRIVATE,
            n,
        )
    }
}

/// FUTEX_CMP_REQUEUE|PRIVATE: wakes up to `wake` waiters of `from` and moves up to
/// `requeue` more to `to`, if `from` still holds `expected`. Returns woken + moved.
#[inline(always)]
pub fn futex_cmp_requeue(
    from: &AtomicU32,
    to: &AtomicU32,
    wake: i32,
    requeue: i32,
    expected: u32,
) -> i64 {
    // SAFETY: both words are valid, aligned u32s; the fourth argument is a count.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            from.as_ptr(),
            libc::FUTEX_CMP_REQUEUE | PRIVATE,
            wake,
            requeue as libc::c_long,
            to.as_ptr(),
            expected,
        )
    }
}

/// FUTEX_LOCK_PI|PRIVATE: takes the PI lock word (the kernel writes this thread's id
/// into it, or queues it behind the owner, boosting it). Returns 0, or -1 with errno.
#[inline(always)]
pub fn futex_lock_pi(word: &AtomicU32) -> i64 {
    // SAFETY: the word is a valid, aligned u32; no timeout.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_LOCK_PI | PRIVATE,
            0,
            std::ptr::null::<libc::timespec>(),
        )
    }
}

/// FUTEX_UNLOCK_PI|PRIVATE: releases the PI lock word this thread owns, handing it to
/// the top waiter. Returns 0, or -1 with errno.
#[inline(always)]
pub fn futex_unlock_pi(word: &AtomicU32) -> i64 {
    // SAFETY: the word is a valid, aligned u32.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_UNLOCK_PI | PRIVATE,
        )
    }
}

/// `epoll_ctl(epfd, op, fd, {events, data: fd})`. Returns 0, or -1 with errno.
#[inline(always)]
pub fn epoll_ctl(epfd: RawFd, op: libc::c_int, fd: RawFd, events: u32) -> libc::c_int {
    epoll_ctl_data(epfd, op, fd, events, fd as u64)
}

/// `epoll_ctl(epfd, op, fd, {events, data})`. Returns 0, or -1 with errno.
#[inline(always)]
pub fn epoll_ctl_data(
    epfd: RawFd,
    op: libc::c_int,
    fd: RawFd,
    events: u32,
    data: u64,
) -> libc::c_int {
    let mut ev = libc::epoll_event { events, u64: data };
    // SAFETY: `ev` is a live epoll_event for the call.
    unsafe { libc::epoll_ctl(epfd, op, fd, &mut ev) }
}

/// `select` with a zero timeout over `set` for writing, descriptors below `nfds`.
/// Returns the number ready, or -1 with errno. `set` is overwritten with the result.
#[inline(always)]
pub fn select_write_now(nfds: libc::c_int, set: &mut FdSet) -> libc::c_int {
    let mut tv = libc::timeval {
        tv_sec: 0,
        tv_usec: 0,
    };
    // SAFETY: `set.0` and `tv` are live for the call; the other sets are null.
    unsafe {
        libc::select(
            nfds,
            std::ptr::null_mut(),
            &mut set.0,
            std::ptr::null_mut(),
            &mut tv,
        )
    }
}

/// A `fd_set`.
#[derive(Clone, Copy)]
pub struct FdSet(libc::fd_set);

impl FdSet {
    /// The set of `fds` (each below FD_SETSIZE, else an error).
    pub fn of(fds: &[RawFd]) -> io::Result<FdSet> {
        // SAFETY: an all-zero fd_set is the empty set.
        let mut s: libc::fd_set = unsafe { std::mem::zeroed() };
        for &fd in fds {
            if !(0..libc::FD_SETSIZE as RawFd).contains(&fd) {
                return Err(io::Error::other(format!(
                    "descriptor {fd} is beyond select's FD_SETSIZE ({})",
                    libc::FD_SETSIZE
                )));
            }
            // SAFETY: fd is within the set's range.
            unsafe { libc::FD_SET(fd, &mut s) };
        }
        Ok(FdSet(s))
    }
}

/// How lat_usleep sleeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SleepHow {
    /// usleep(3).
    Usleep,
    /// nanosleep(2).
    Nanosleep,
    /// select(2) on no descriptors with a timeout.
    Select,
    /// pselect(2) on no descriptors with a timeout.
    Pselect,
}

/// One relative sleep of `us` microseconds the way `how` says. Returns 0, or -1 with
/// errno.
#[inline(always)]
pub fn sleep_us(how: SleepHow, us: u64) -> libc::c_int {
    let ts = libc::timespec {
        tv_sec: (us / 1_000_000) as libc::time_t,
        tv_nsec: ((us % 1_000_000) * 1000) as libc::c_long,
    };
    let mut tv = libc::timeval {
        tv_sec: ts.tv_sec,
        tv_usec: (us % 1_000_000) as libc::suseconds_t,
    };
    let null: *mut libc::fd_set = std::ptr::null_mut();
    // SAFETY: every pointer is to a live local or null.
    unsafe {
        match how {
            SleepHow::Usleep => libc::usleep(us as libc::c_uint),
            SleepHow::Nanosleep => libc::nanosleep(&ts, std::ptr::null_mut()),
            SleepHow::Select => libc::select(0, null, null, null, &mut tv),
            SleepHow::Pselect => {
                libc::pselect(0, null, null, null, &ts, std::ptr::null())
            }
        }
    }
}

/// A private System V semaphore set, removed when dropped.
#[derive(Debug)]
pub struct SemSet {
    id: libc::c_int,
}

impl SemSet {
    /// A new private set of `n` semaphores, all 0.
    pub fn new(n: libc::c_int) -> io::Result<SemSet> {
        // SAFETY: integers only.
        let id = unsafe { libc::semget(libc::IPC_PRIVATE, n, libc::IPC_CREAT | 0o600) };
        cvt(id.into())?;
        Ok(SemSet { id })
    }

    /// Its id.
    pub fn id(&self) -> libc::c_int {
        self.id
    }
}

/// `semop` of one operation: add `delta` to semaphore `num` of set `id` (waiting while
/// it would go below 0). Returns 0, or -1 with errno (EIDRM once the set is removed).
#[inline(always)]
pub fn semop(id: libc::c_int, num: u16, delta: i16) -> libc::c_int {
    let mut op = libc::sembuf {
        sem_num: num,
        sem_op: delta,
        sem_flg: 0,
    };
    // SAFETY: `op` is one live sembuf.
    unsafe { libc::semop(id, &mut op, 1) }
}

/// `semop` of two operations applied together, as lmbench's lat_sem makes them: add
/// `take` (negative) to semaphore `from` and `give` to semaphore `to`, waiting while the
/// first would go below 0. Returns 0, or -1 with errno (EIDRM once the set is removed).
#[inline(always)]
pub fn semop_pair(
    id: libc::c_int,
    (from, take): (u16, i16),
    (to, give): (u16, i16),
) -> libc::c_int {
    let mut ops = [
        libc::sembuf {
            sem_num: from,
            sem_op: take,
            sem_flg: 0,
        },
        libc::sembuf {
            sem_num: to,
            sem_op: give,
            sem_flg: 0,
        },
    ];
    // SAFETY: `ops` is two live sembufs.
    unsafe { libc::semop(id, ops.as_mut_ptr(), 2) }
}

impl Drop for SemSet {
    fn drop(&mut self) {
        // SAFETY: integers only; removing the set wakes any waiter with EIDRM.
        unsafe { libc::semctl(self.id, 0, libc::IPC_RMID) };
    }
}

/// `fcntl(fd, F_SETLKW)` of a write lock (or an unlock) of byte 0. Returns 0, or -1.
#[inline(always)]
pub fn lock_byte(fd: RawFd, lock: bool) -> libc::c_int {
    let fl = libc::flock {
        l_type: if lock { libc::F_WRLCK } else { libc::F_UNLCK } as libc::c_short,
        l_whence: libc::SEEK_SET as libc::c_short,
        l_start: 0,
        l_len: 1,
        l_pid: 0,
    };
    // SAFETY: `fl` is a live flock for the call.
    unsafe { libc::fcntl(fd, libc::F_SETLKW, &fl) }
}

/// getrandom(2) into `buf` with `flags`. Returns the bytes written, or -1.
#[inline(always)]
pub fn getrandom(buf: &mut [u8], flags: libc::c_uint) -> isize {
    // SAFETY: `buf` is writable for its length.
    unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), flags) }
}

/// Whether this C library exports `getrandom` served by the vDSO (glibc 2.41 and
/// later route it there; earlier ones always enter the kernel). Its version.
pub fn libc_version() -> String {
    // SAFETY: gnu_get_libc_version returns a static NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(gnu_get_libc_version()) }
        .to_string_lossy()
        .into_owned()
}

extern "C" {
    fn gnu_get_libc_version() -> *const libc::c_char;
}

/// membarrier(2): `cmd` with no flags. Returns its result, or -1 with errno.
#[inline(always)]
pub fn membarrier(cmd: libc::c_int) -> i64 {
    // SAFETY: integers only.
    unsafe { libc::syscall(libc::SYS_membarrier, cmd, 0, 0) }
}

/// pidfd_open(2) of `pid`: the raw result (a descriptor the caller must close, or -1).
#[inline(always)]
pub fn pidfd_open_raw(pid: libc::pid_t) -> i64 {
    // SAFETY: integers only.
    unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) }
}

/// Takes ownership of a descriptor a raw call returned (`r` >= 0).
pub fn own_fd(r: i64) -> OwnedFd {
    // SAFETY: the caller passes a descriptor just returned to it and owned by nobody.
    unsafe { OwnedFd::from_raw_fd(r as RawFd) }
}

/// clone3(2) with `exit_signal` SIGCHLD and no flags (a fork through the new entry):
/// the child `_exit(0)`s at once, then waitpid reaps it. Returns 0, or -1 with errno.
#[inline(never)]
pub fn clone3_exit_wait() -> i64 {
    #[repr(C)]
    #[derive(Default)]
    struct CloneArgs {
        flags: u64,
        pidfd: u64,
        child_tid: u64,
        parent_tid: u64,
        exit_signal: u64,
        stack: u64,
        stack_size: u64,
        tls: u64,
        set_tid: u64,
        set_tid_size: u64,
        cgroup: u64,
    }
    let args = CloneArgs {
        exit_signal: libc::SIGCHLD as u64,
        ..CloneArgs::default()
    };
    // SAFETY: `args` is a live clone_args of the size passed. Without CLONE_VM the
    // child has its own copy of the address space and only calls _exit, which is
    // async-signal-safe.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone3,
            &args as *const CloneArgs,
            std::mem::size_of::<CloneArgs>(),
        )
    };
    if pid == 0 {
        // SAFETY: the child ends at once without running any of the parent's code.
        unsafe { libc::_exit(0) };
    }
    if pid < 0 {
        return -1;
    }
    let mut st = 0;
    // SAFETY: `st` is a live int; pid is our own child.
    let r = unsafe { libc::waitpid(pid as libc::pid_t, &mut st, 0) };
    if r == -1 {
        return -1;
    }
    0
}

/// process_vm_readv(2) of `buf.len()` bytes at `remote` in process `pid` into `buf`.
/// Returns the bytes read, or -1 with errno.
#[inline(always)]
pub fn process_vm_read(pid: libc::pid_t, buf: &mut [u8], remote: usize) -> isize {
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let far = libc::iovec {
        iov_base: remote as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: `local` names a writable buffer; the kernel checks `far` against the
    // target's address space and never writes to it.
    unsafe { libc::process_vm_readv(pid, &local, 1, &far, 1, 0) }
}

/// One page of this process sealed with mseal(2): it can be neither unmapped nor
/// changed until the process exits (so dropping this leaves the page mapped).
#[derive(Debug)]
pub struct SealedPage {
    addr: usize,
    len: usize,
}

impl SealedPage {
    /// Maps a page and seals it; ENOSYS (kernels before 6.10) as the error.
    pub fn new() -> io::Result<SealedPage> {
        let len = crate::os::mem::page_size();
        // SAFETY: a fresh anonymous mapping; nothing else refers to it.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let page = SealedPage {
            addr: p as usize,
            len,
        };
        if page.seal() != 0 {
            let e = io::Error::last_os_error();
            // SAFETY: the mapping is ours and was not sealed.
            unsafe { libc::munmap(p, len) };
            return Err(e);
        }
        Ok(page)
    }

    /// mseal(2) of the page again (a sealed range may be sealed again). Returns 0, or
    /// -1 with errno.
    #[inline(always)]
    pub fn seal(&self) -> i64 {
        // SAFETY: integers only: the kernel checks the range.
        unsafe { libc::syscall(462, self.addr, self.len, 0) }
    }
}

/// The seccomp user-notification listener of a filter installed on the calling
/// thread, which sends system call number `nr` (and only it) to the listener. The
/// thread keeps the filter (and no_new_privs) for its life: pick a number that nothing
/// else uses. Closed when dropped; the call then fails with ENOSYS.
#[derive(Debug)]
pub struct NotifyListener {
    fd: OwnedFd,
}

impl NotifyListener {
    /// Installs the filter on this thread. EACCES/EPERM/EINVAL as the kernel's refusal.
    pub fn install(nr: u32) -> io::Result<NotifyListener> {
        const RET_ALLOW: u32 = 0x7fff_0000;
        const RET_USER_NOTIF: u32 = 0x7fc0_0000;
        let f = |code: u16, jt: u8, jf: u8, k: u32| libc::sock_filter { code, jt, jf, k };
        let prog = [
            // A = seccomp_data.nr (offset 0)
            f((libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16, 0, 0, 0),
            f(
                (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
                0,
                1,
                nr,
            ),
            f((libc::BPF_RET | libc::BPF_K) as u16, 0, 0, RET_USER_NOTIF),
            f((libc::BPF_RET | libc::BPF_K) as u16, 0, 0, RET_ALLOW),
        ];
        let flags = libc::SECCOMP_FILTER_FLAG_NEW_LISTENER;
        let r = super::harden::set_filter(&prog, flags)?;
        Ok(NotifyListener { fd: own_fd(r) })
    }

    /// The listener's descriptor.
    pub fn fd(&self) -> BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.fd.as_fd()
    }
}

/// Receives one notification on `listener` and answers it: the call returns `val`
/// with no error. Returns 0, or -1 with errno (ENOENT when the caller went away).
#[inline(always)]
pub fn notify_answer(listener: BorrowedFd<'_>, val: i64) -> libc::c_int {
    // struct seccomp_notif { u64 id; u32 pid; u32 flags; seccomp_data data (64 B) }
    let mut req = [0u64; 10];
    // struct seccomp_notif_resp { u64 id; s64 val; s32 error; u32 flags; }
    const RECV: libc::c_ulong = 0xc050_2100; // SECCOMP_IOCTL_NOTIF_RECV
    const SEND: libc::c_ulong = 0xc018_2101; // SECCOMP_IOCTL_NOTIF_SEND
    let fd = listener.as_raw_fd();
    // SAFETY: `req` is an 80-byte writable buffer, the size of seccomp_notif.
    if unsafe { libc::ioctl(fd, RECV, req.as_mut_ptr()) } != 0 {
        return -1;
    }
    let resp: [u64; 3] = [req[0], val as u64, 0];
    // SAFETY: `resp` is a live 24-byte seccomp_notif_resp.
    unsafe { libc::ioctl(fd, SEND, resp.as_ptr()) }
}

/// System call number `nr` with no arguments: the raw result.
#[inline(always)]
pub fn call0(nr: libc::c_long) -> i64 {
    // SAFETY: integers only; the callers pass a number a filter intercepts or getpgid.
    unsafe { libc::syscall(nr) }
}

/// getpgid(0) through the C library.
#[inline(always)]
pub fn getpgid() -> libc::pid_t {
    // SAFETY: integers only.
    unsafe { libc::getpgid(0) }
}

/// A new close-on-exec epoll instance.
pub fn epoll_create() -> io::Result<OwnedFd> {
    // SAFETY: integer argument only.
    let r = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    cvt(r.into()).map(own_fd)
}

/// `epoll_wait(epfd, events, -1)`: the number of events written, or -1 with errno.
#[inline(always)]
pub fn epoll_wait(epfd: RawFd, events: &mut [libc::epoll_event]) -> libc::c_int {
    // SAFETY: `events` is writable; its length bounds what the kernel writes.
    unsafe {
        libc::epoll_wait(epfd, events.as_mut_ptr(), events.len() as libc::c_int, -1)
    }
}

/// mkfifo(3) at `path`, mode 0600.
pub fn mkfifo(path: &std::ffi::CStr) -> io::Result<()> {
    // SAFETY: `path` is a NUL-terminated string live for the call.
    cvt(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }.into()).map(drop)
}

/// open(path, O_CREAT|O_EXCL|O_WRONLY, 0600), a write of `data` when it is not empty,
/// and close: lmbench lat_fs's creation of one file. Returns 0, or -1 with errno.
#[inline(always)]
pub fn create_file(path: &std::ffi::CStr, data: &[u8]) -> libc::c_int {
    // SAFETY: `path` is NUL-terminated and live for the call; integers otherwise.
    let fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC,
            0o600,
        )
    };
    if fd < 0 {
        return -1;
    }
    let mut r = 0;
    if !data.is_empty() {
        // SAFETY: `data` is readable for its length; `fd` was just opened.
        let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
        if n != data.len() as isize {
            r = -1;
        }
    }
    // SAFETY: closes the descriptor opened above, exactly once.
    if unsafe { libc::close(fd) } != 0 {
        r = -1;
    }
    r
}

/// unlink(2) of `path`. Returns 0, or -1 with errno.
#[inline(always)]
pub fn unlink(path: &std::ffi::CStr) -> libc::c_int {
    // SAFETY: `path` is NUL-terminated and live for the call.
    unsafe { libc::unlink(path.as_ptr()) }
}
