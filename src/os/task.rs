//! Tasks that hand control to each other: forked children and the pipes, futex words,
//! eventfds, signals and yields they block on, plus the vector-register dirtying that
//! makes a switch save AVX state.
//!
//! A forked child runs a closure that may only make async-signal-safe calls (the parent
//! may have other threads): no allocation, no locks, no printing. It ends with `_exit`,
//! never by returning into the parent's code. Every [`Child`] is reaped: by the owner,
//! or by its `Drop`, which kills it first. Signals go only to our own children or to
//! threads of this process; a guard refuses any pid or tid ≤ 0.
#![allow(unsafe_code)]

use super::signal::QueueInfo;
use std::io;
use std::os::fd::{OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::time::{Duration, Instant};

/// A child process this process forked. Dropping it kills and reaps it if it has not
/// been reaped yet.
#[derive(Debug)]
pub struct Child {
    pid: libc::pid_t,
    status: Option<i32>,
}

/// Ends the forked child if its closure unwinds, so no parent code runs in it.
struct ExitOnUnwind;

impl Drop for ExitOnUnwind {
    fn drop(&mut self) {
        // SAFETY: _exit ends the process at once; it is async-signal-safe.
        unsafe { libc::_exit(101) }
    }
}

/// Forks a child that runs `child` and exits with its return value (101 if it
/// panics); the parent gets a [`Child`], which kills and reaps it when dropped.
///
/// In the child: the death signal is SIGKILL (so it never outlives this thread),
/// SIGINT is ignored (the parent decides what an interrupt means), and the signal mask
/// is inherited.
///
/// # Safety
/// This process may have other threads, whose locks (the allocator's, stdio's, the
/// environment's) the child inherits held and can never see released. `child` must
/// therefore only make async-signal-safe calls: system calls and atomics on memory
/// it can reach, no allocation, no locking, no formatting or printing. It must not
/// use the child's copies of this process's owning objects (descriptors, mappings,
/// children) in ways that assume it is their only owner; the copies are never
/// dropped, as the child ends with `_exit`.
pub unsafe fn fork(child: impl FnOnce() -> i32) -> io::Result<Child> {
    // SAFETY: the caller's promise is passed on.
    unsafe { fork_with(child, true) }
}

/// The exit status of a [`fork_partner`] child that could not move to its CPUs.
pub const PARTNER_CPUS_FAILED: i32 = 4;

/// Forks a benchmark's partner, the other end of a round trip: the child first closes
/// `close` (the parent's ends of the channels, so that end of file reaches it;
/// negative entries are skipped), then moves to `cpus`, exiting with
/// [`PARTNER_CPUS_FAILED`] if it cannot, then runs `work` and exits with its value.
///
/// # Safety
/// As for [`fork`]: `work` makes only async-signal-safe calls and does not use the
/// child's copies of the parent's owning objects. Every descriptor in `close` must be
/// one the child never uses again.
pub unsafe fn fork_partner(
    close: &[RawFd],
    cpus: &[usize],
    work: impl FnOnce() -> i32,
) -> io::Result<Child> {
    // SAFETY: closing descriptors the caller gives up and setting the affinity
    // (a system call on a stack set) are async-signal-safe; `work` is the caller's.
    unsafe {
        fork(|| {
            for &fd in close {
                if fd >= 0 {
                    close_in_child(fd);
                }
            }
            if super::affinity::set_cpus(cpus).is_err() {
                return PARTNER_CPUS_FAILED;
            }
            work()
        })
    }
}

/// Like [`fork`], but the child may outlive this process (no death signal) and ignores
/// SIGINT, SIGTERM and SIGHUP: for a keeper that must act after this process dies (see
/// [`super::ipc::SysvQueue`]). It must end by itself.
///
/// # Safety
/// As for [`fork`].
pub unsafe fn fork_survivor(child: impl FnOnce() -> i32) -> io::Result<Child> {
    // SAFETY: the caller's promise is passed on.
    unsafe { fork_with(child, false) }
}

/// # Safety
/// As for [`fork`].
unsafe fn fork_with(
    child: impl FnOnce() -> i32,
    die_with_parent: bool,
) -> io::Result<Child> {
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: fork has no memory-safety preconditions; the child only runs `child`,
    // which the caller promises is async-signal-safe, and then _exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        let guard = ExitOnUnwind;
        // SAFETY: prctl, getppid, signal and _exit are async-signal-safe system calls
        // with valid arguments.
        unsafe {
            if die_with_parent {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
            } else {
                libc::signal(libc::SIGTERM, libc::SIG_IGN);
                libc::signal(libc::SIGHUP, libc::SIG_IGN);
            }
            libc::signal(libc::SIGINT, libc::SIG_IGN);
        }
        let code = child();
        std::mem::forget(guard);
        // SAFETY: as above.
        unsafe { libc::_exit(code) }
    }
    Ok(Child { pid, status: None })
}

impl Child {
    /// Owns a child this layer started another way (`posix_spawn`): from now on it is
    /// reaped by [`Child::wait`] or killed and reaped when dropped.
    pub(in crate::os) fn adopt(pid: libc::pid_t) -> Child {
        assert!(pid > 0, "a child's pid is positive");
        Child { pid, status: None }
    }

    /// Reaps it, blocking until it ends, with the resource usage of it and of its own
    /// reaped children (`wait4`). Fails if it was reaped already.
    pub fn wait_usage(&mut self) -> io::Result<(i32, super::usage::Usage)> {
        if self.status.is_some() {
            return Err(io::Error::other("the child was reaped already"));
        }
        loop {
            let mut st = 0;
            let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
            // SAFETY: `st` and `ru` are valid and writable; pid is our own unreaped
            // child.
            let r = unsafe { libc::wait4(self.pid, &mut st, 0, ru.as_mut_ptr()) };
            if r == self.pid {
                self.status = Some(st);
                // SAFETY: zeroed, then filled by the kernel; plain integers.
                let ru = unsafe { ru.assume_init() };
                return Ok((st, super::usage::Usage::from_rusage(&ru)));
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// Its process id (always > 0).
    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// Its wait status, if it has been reaped.
    pub fn status(&self) -> Option<i32> {
        self.status
    }

    /// Reaps it without blocking: its wait status if it has ended.
    pub fn try_wait(&mut self) -> io::Result<Option<i32>> {
        if self.status.is_some() {
            return Ok(self.status);
        }
        let mut st = 0;
        // SAFETY: `st` is a valid int; pid is our own unreaped child.
        let r = unsafe { libc::waitpid(self.pid, &mut st, libc::WNOHANG) };
        match r {
            0 => Ok(None),
            r if r == self.pid => {
                self.status = Some(st);
                Ok(self.status)
            }
            _ => Err(io::Error::last_os_error()),
        }
    }

    /// Reaps it, blocking until it ends.
    pub fn wait(&mut self) -> io::Result<i32> {
        if let Some(s) = self.status {
            return Ok(s);
        }
        loop {
            let mut st = 0;
            // SAFETY: `st` is a valid int; pid is our own unreaped child.
            let r = unsafe { libc::waitpid(self.pid, &mut st, 0) };
            if r == self.pid {
                self.status = Some(st);
                return Ok(st);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// Waits until it stops (SIGSTOP and the like) or ends: true when stopped; when it
    /// ended, it is reaped and false is returned.
    pub fn wait_stopped(&mut self) -> io::Result<bool> {
        if self.status.is_some() {
            return Ok(false);
        }
        loop {
            let mut st = 0;
            // SAFETY: `st` is a valid int; pid is our own unreaped child. WUNTRACED
            // reports a stop without reaping.
            let r = unsafe { libc::waitpid(self.pid, &mut st, libc::WUNTRACED) };
            if r == self.pid {
                if libc::WIFSTOPPED(st) {
                    return Ok(true);
                }
                self.status = Some(st);
                return Ok(false);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// Sends `sig` to it, unless it has been reaped (its pid may have been reused).
    pub fn signal(&self, sig: libc::c_int) -> io::Result<()> {
        if self.status.is_some() {
            return Ok(());
        }
        // SAFETY: pid > 0 is our own unreaped child.
        let r = unsafe { libc::kill(self.pid, sig) };
        super::sys::cvt(r as libc::c_long).map(|_| ())
    }

    /// Waits until `deadline` for it to end by itself, then kills and reaps it.
    /// Returns its wait status and whether it had to be killed.
    pub fn reap_by(&mut self, deadline: Instant) -> io::Result<(i32, bool)> {
        loop {
            if let Some(s) = self.try_wait()? {
                return Ok((s, false));
            }
            if Instant::now() >= deadline {
                self.signal(libc::SIGKILL)?;
                return Ok((self.wait()?, true));
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.status.is_none() {
            let _ = self.signal(libc::SIGKILL);
            let _ = self.wait();
        }
    }
}

/// A wait status in words: "exited with 3", "killed by signal 9".
pub fn describe_status(st: i32) -> String {
    if libc::WIFEXITED(st) {
        format!("exited with status {}", libc::WEXITSTATUS(st))
    } else if libc::WIFSIGNALED(st) {
        format!("killed by signal {}", libc::WTERMSIG(st))
    } else {
        format!("wait status {st:#x}")
    }
}

/// Whether a wait status is a clean exit with status 0.
pub fn exited_ok(st: i32) -> bool {
    libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0
}

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

/// Closes a raw descriptor in a forked child (whose copies of the parent's owning
/// objects are never dropped).
///
/// # Safety
/// Called in a child made by [`fork`], on a descriptor that nothing the child still
/// runs will use: its owner's copy in the child is never used or dropped again.
pub unsafe fn close_in_child(fd: RawFd) {
    // SAFETY: the caller promises no one uses `fd` in this process after this.
    unsafe { libc::close(fd) };
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

/// Sends `sig` to thread `tid` of process `tgid`; refuses ids ≤ 0.
#[inline(always)]
pub fn tgkill(tgid: libc::pid_t, tid: libc::pid_t, sig: libc::c_int) -> i64 {
    if tgid <= 0 || tid <= 0 {
        return -1;
    }
    // SAFETY: a signal to one thread named by positive ids; no memory is passed.
    unsafe { libc::syscall(libc::SYS_tgkill, tgid, tid, sig) }
}

/// Queues the signal `info` names, with its value, to process `pid` (as sigqueue(3)
/// does) or, given `tid`, to that thread of it; refuses ids ≤ 0. Returns 0, or -1 with
/// errno (EAGAIN when the receiver's user has RLIMIT_SIGPENDING signals queued).
#[inline(always)]
pub fn sigqueue(pid: libc::pid_t, tid: Option<libc::pid_t>, info: &QueueInfo) -> i64 {
    if pid <= 0 || tid.is_some_and(|t| t <= 0) {
        return -1;
    }
    let (sig, info) = (info.signo(), std::ptr::from_ref(info));
    match tid {
        // SAFETY: one process named by a positive id; `info` is a valid 128-byte
        // siginfo with si_code SI_QUEUE, read by the kernel during the call.
        None => unsafe { libc::syscall(libc::SYS_rt_sigqueueinfo, pid, sig, info) },
        // SAFETY: as above, for one thread of it.
        Some(t) => unsafe {
            libc::syscall(libc::SYS_rt_tgsigqueueinfo, pid, t, sig, info)
        },
    }
}

/// A signal set.
#[derive(Clone, Copy)]
pub struct SigSet(libc::sigset_t);

impl SigSet {
    /// The empty set.
    pub fn empty() -> SigSet {
        // SAFETY: an all-zero sigset is valid storage; sigemptyset initialises it.
        let mut s: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: `s` is valid.
        unsafe { libc::sigemptyset(&mut s) };
        SigSet(s)
    }

    /// The calling thread's current mask.
    pub fn current() -> SigSet {
        let mut s = SigSet::empty();
        // SAFETY: a null new set only reads the mask into `s`.
        unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut s.0) };
        s
    }

    /// With `sig` added.
    pub fn with(mut self, sig: libc::c_int) -> SigSet {
        // SAFETY: valid set, valid signal number.
        unsafe { libc::sigaddset(&mut self.0, sig) };
        self
    }

    /// The set's address, for a raw rt_sigsuspend (the kernel reads its first 8 bytes).
    pub fn as_ptr(&self) -> *const libc::sigset_t {
        &self.0
    }

    /// With `sig` removed.
    pub fn without(mut self, sig: libc::c_int) -> SigSet {
        // SAFETY: valid set, valid signal number.
        unsafe { libc::sigdelset(&mut self.0, sig) };
        self
    }
}

/// Blocks signals in the calling thread and restores its previous mask when dropped
/// (on the same thread).
pub struct Blocked {
    old: SigSet,
}

impl Blocked {
    /// Blocks `set` in the calling thread.
    pub fn block(set: &SigSet) -> io::Result<Blocked> {
        let mut old = SigSet::empty();
        // SAFETY: valid sets.
        let r = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set.0, &mut old.0) };
        if r != 0 {
            return Err(io::Error::from_raw_os_error(r));
        }
        Ok(Blocked { old })
    }
}

impl Drop for Blocked {
    fn drop(&mut self) {
        // SAFETY: restores a mask read from this thread.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.old.0, std::ptr::null_mut())
        };
    }
}

/// Blocks `set` in the calling thread without restoring it (for forked children and
/// threads that end soon after).
pub fn block_forever(set: &SigSet) {
    // SAFETY: valid set; a null old set is allowed.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set.0, std::ptr::null_mut()) };
}

/// sigsuspend(2): waits with `mask` in force until a handler runs. Returns -1 with
/// EINTR after a handler, as it always does.
#[inline(always)]
pub fn sigsuspend(mask: &SigSet) -> i32 {
    // SAFETY: a valid mask.
    unsafe { libc::sigsuspend(&mask.0) }
}

static DELIVERED: [AtomicU64; 65] = [const { AtomicU64::new(0) }; 65];

extern "C" fn counting_handler(sig: libc::c_int) {
    if let Some(c) = DELIVERED.get(sig as usize) {
        c.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// How many times the counting handler has run for `sig` in this process.
#[inline(always)]
pub fn delivered(sig: libc::c_int) -> u64 {
    DELIVERED
        .get(sig as usize)
        .map_or(0, |c| c.load(std::sync::atomic::Ordering::SeqCst))
}

/// Signal dispositions, masks and delivery counts are process-wide, and unit tests run
/// in threads of one process: every benchmark that installs a handler, blocks a signal
/// or arms a signalling timer holds this lock while it does.
static SIGNALS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Takes the process-wide signal lock; a poisoned lock is still a lock.
pub fn signals_lock() -> std::sync::MutexGuard<'static, ()> {
    SIGNALS.lock().unwrap_or_else(|e| e.into_inner())
}

/// A counting handler installed for a signal; the previous action is restored on drop.
pub struct Handler {
    sig: libc::c_int,
    old: super::sys::Action,
}

impl Handler {
    /// Installs a handler that counts deliveries (see [`delivered`]); delivery also
    /// ends a sigsuspend.
    pub fn counting(sig: libc::c_int) -> io::Result<Handler> {
        let old = super::sys::sigaction_get(sig)?;
        // SAFETY: an all-zero sigaction is valid; the fields are set below.
        let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
        act.sa_sigaction = counting_handler as extern "C" fn(libc::c_int) as usize;
        act.sa_flags = libc::SA_RESTART;
        // SAFETY: valid set inside `act`.
        unsafe { libc::sigemptyset(&mut act.sa_mask) };
        // SAFETY: counting_handler takes one argument and only adds to an atomic.
        let act = unsafe { super::sys::Action::from_raw(act) };
        super::sys::cvt(super::sys::sigaction_set(sig, &act) as libc::c_long)?;
        Ok(Handler { sig, old })
    }
}

impl Drop for Handler {
    fn drop(&mut self) {
        super::sys::sigaction_set(self.sig, &self.old);
    }
}

/// Which vector state a task keeps dirty before it blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vector {
    /// Nothing touched.
    Clean,
    /// ymm0–15 set to all ones.
    Avx,
    /// zmm0–31 and the opmask registers set to all ones.
    Avx512,
}

/// The widest vector state this CPU has, or None without AVX.
pub fn widest_vector() -> Option<Vector> {
    if std::arch::is_x86_feature_detected!("avx512f") {
        Some(Vector::Avx512)
    } else if std::arch::is_x86_feature_detected!("avx") {
        Some(Vector::Avx)
    } else {
        None
    }
}

/// A blocking call the ping-pong slave makes with its vector registers dirty: each
/// names its memory by reference, so the call cannot reach anything else.
pub enum DirtyCall<'a> {
    /// read(2) of up to the buffer's length from `fd` into the buffer.
    Read(RawFd, &'a mut [u8]),
    /// futex(2) FUTEX_WAIT on the word while it holds the value.
    FutexWait(&'a std::sync::atomic::AtomicU32, u32),
    /// rt_sigsuspend(2) with the mask in force.
    SigSuspend(&'a SigSet),
    /// sched_yield(2).
    Yield,
}

/// Makes `call` right after setting the vector registers of `v` to all ones in the
/// same instruction sequence, so that the task enters the kernel (and blocks, if it
/// does) with that state dirty. Returns the kernel's result (negative errno on
/// failure). `v` must be supported by the CPU (see [`widest_vector`]); an unsupported
/// one makes the call with nothing dirtied.
#[inline(always)]
pub fn syscall_dirty(v: Vector, call: DirtyCall<'_>) -> isize {
    let (nr, a) = match call {
        DirtyCall::Read(fd, buf) => (
            libc::SYS_read,
            [fd as usize, buf.as_mut_ptr() as usize, buf.len(), 0],
        ),
        DirtyCall::FutexWait(word, val) => (
            libc::SYS_futex,
            [
                word.as_ptr() as usize,
                libc::FUTEX_WAIT as usize,
                val as usize,
                0,
            ],
        ),
        DirtyCall::SigSuspend(mask) => {
            (libc::SYS_rt_sigsuspend, [mask.as_ptr() as usize, 8, 0, 0])
        }
        DirtyCall::Yield => (libc::SYS_sched_yield, [0; 4]),
    };
    // The arguments come from `call`, whose references keep its buffer, word or mask
    // alive (and the buffer exclusive) for the call: read writes at most buf.len()
    // bytes into it, FUTEX_WAIT and rt_sigsuspend only read theirs (the kernel's
    // 8-byte signal set is the start of a sigset_t), and sched_yield takes nothing.
    match v {
        // SAFETY: arguments valid for `nr`, as above.
        Vector::Clean => unsafe { syscall4(nr, a) },
        Vector::Avx if std::arch::is_x86_feature_detected!("avx") => {
            // SAFETY: the CPU has AVX (checked); arguments valid, as above.
            unsafe { syscall4_avx(nr, a) }
        }
        Vector::Avx512 if std::arch::is_x86_feature_detected!("avx512f") => {
            // SAFETY: the CPU has AVX-512F (checked); arguments valid, as above.
            unsafe { syscall4_avx512(nr, a) }
        }
        // SAFETY: arguments valid for `nr`, as above.
        _ => unsafe { syscall4(nr, a) },
    }
}

/// A raw system call with four arguments.
///
/// # Safety
/// The arguments are valid for `nr`: every pointer among them refers to live memory
/// of the size and access the call needs.
#[inline(always)]
unsafe fn syscall4(nr: libc::c_long, a: [usize; 4]) -> isize {
    let ret: isize;
    // SAFETY: the caller passes arguments valid for `nr`; rcx and r11 are declared.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") nr as isize => ret,
            in("rdi") a[0], in("rsi") a[1], in("rdx") a[2], in("r10") a[3],
            out("rcx") _, out("r11") _,
            options(nostack),
        );
    }
    ret
}

/// [`syscall4`] with ymm0–15 set to all ones first.
///
/// # Safety
/// The CPU has AVX, and the arguments are valid for `nr` (as for [`syscall4`]).
#[target_feature(enable = "avx")]
unsafe fn syscall4_avx(nr: libc::c_long, a: [usize; 4]) -> isize {
    let ret: isize;
    // SAFETY: AVX is available and the arguments valid (the caller's promise);
    // ymm0–15 are declared clobbered.
    unsafe {
        std::arch::asm!(
            "vpcmpeqd ymm0, ymm0, ymm0", "vpcmpeqd ymm1, ymm1, ymm1",
            "vpcmpeqd ymm2, ymm2, ymm2", "vpcmpeqd ymm3, ymm3, ymm3",
            "vpcmpeqd ymm4, ymm4, ymm4", "vpcmpeqd ymm5, ymm5, ymm5",
            "vpcmpeqd ymm6, ymm6, ymm6", "vpcmpeqd ymm7, ymm7, ymm7",
            "vpcmpeqd ymm8, ymm8, ymm8", "vpcmpeqd ymm9, ymm9, ymm9",
            "vpcmpeqd ymm10, ymm10, ymm10", "vpcmpeqd ymm11, ymm11, ymm11",
            "vpcmpeqd ymm12, ymm12, ymm12", "vpcmpeqd ymm13, ymm13, ymm13",
            "vpcmpeqd ymm14, ymm14, ymm14", "vpcmpeqd ymm15, ymm15, ymm15",
            "syscall",
            inlateout("rax") nr as isize => ret,
            in("rdi") a[0], in("rsi") a[1], in("rdx") a[2], in("r10") a[3],
            out("rcx") _, out("r11") _,
            out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
            out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
            out("ymm8") _, out("ymm9") _, out("ymm10") _, out("ymm11") _,
            out("ymm12") _, out("ymm13") _, out("ymm14") _, out("ymm15") _,
            options(nostack),
        );
    }
    ret
}

/// [`syscall4`] with zmm0–31 and k1–k7 set to all ones first.
///
/// # Safety
/// The CPU has AVX-512F, and the arguments are valid for `nr` (as for [`syscall4`]).
#[target_feature(enable = "avx512f")]
unsafe fn syscall4_avx512(nr: libc::c_long, a: [usize; 4]) -> isize {
    let ret: isize;
    // SAFETY: AVX-512F is available and the arguments valid (the caller's promise);
    // zmm0–31 and k1–k7 are declared clobbered.
    unsafe {
        std::arch::asm!(
            "vpternlogd zmm0, zmm0, zmm0, 0xff", "vpternlogd zmm1, zmm1, zmm1, 0xff",
            "vpternlogd zmm2, zmm2, zmm2, 0xff", "vpternlogd zmm3, zmm3, zmm3, 0xff",
            "vpternlogd zmm4, zmm4, zmm4, 0xff", "vpternlogd zmm5, zmm5, zmm5, 0xff",
            "vpternlogd zmm6, zmm6, zmm6, 0xff", "vpternlogd zmm7, zmm7, zmm7, 0xff",
            "vpternlogd zmm8, zmm8, zmm8, 0xff", "vpternlogd zmm9, zmm9, zmm9, 0xff",
            "vpternlogd zmm10, zmm10, zmm10, 0xff", "vpternlogd zmm11, zmm11, zmm11, 0xff",
            "vpternlogd zmm12, zmm12, zmm12, 0xff", "vpternlogd zmm13, zmm13, zmm13, 0xff",
            "vpternlogd zmm14, zmm14, zmm14, 0xff", "vpternlogd zmm15, zmm15, zmm15, 0xff",
            "vpternlogd zmm16, zmm16, zmm16, 0xff", "vpternlogd zmm17, zmm17, zmm17, 0xff",
            "vpternlogd zmm18, zmm18, zmm18, 0xff", "vpternlogd zmm19, zmm19, zmm19, 0xff",
            "vpternlogd zmm20, zmm20, zmm20, 0xff", "vpternlogd zmm21, zmm21, zmm21, 0xff",
            "vpternlogd zmm22, zmm22, zmm22, 0xff", "vpternlogd zmm23, zmm23, zmm23, 0xff",
            "vpternlogd zmm24, zmm24, zmm24, 0xff", "vpternlogd zmm25, zmm25, zmm25, 0xff",
            "vpternlogd zmm26, zmm26, zmm26, 0xff", "vpternlogd zmm27, zmm27, zmm27, 0xff",
            "vpternlogd zmm28, zmm28, zmm28, 0xff", "vpternlogd zmm29, zmm29, zmm29, 0xff",
            "vpternlogd zmm30, zmm30, zmm30, 0xff", "vpternlogd zmm31, zmm31, zmm31, 0xff",
            "kxnorw k1, k1, k1", "kxnorw k2, k2, k2", "kxnorw k3, k3, k3",
            "kxnorw k4, k4, k4", "kxnorw k5, k5, k5", "kxnorw k6, k6, k6",
            "kxnorw k7, k7, k7",
            "syscall",
            inlateout("rax") nr as isize => ret,
            in("rdi") a[0], in("rsi") a[1], in("rdx") a[2], in("r10") a[3],
            out("rcx") _, out("r11") _,
            out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
            out("zmm4") _, out("zmm5") _, out("zmm6") _, out("zmm7") _,
            out("zmm8") _, out("zmm9") _, out("zmm10") _, out("zmm11") _,
            out("zmm12") _, out("zmm13") _, out("zmm14") _, out("zmm15") _,
            out("zmm16") _, out("zmm17") _, out("zmm18") _, out("zmm19") _,
            out("zmm20") _, out("zmm21") _, out("zmm22") _, out("zmm23") _,
            out("zmm24") _, out("zmm25") _, out("zmm26") _, out("zmm27") _,
            out("zmm28") _, out("zmm29") _, out("zmm30") _, out("zmm31") _,
            out("k1") _, out("k2") _, out("k3") _, out("k4") _,
            out("k5") _, out("k6") _, out("k7") _,
            options(nostack),
        );
    }
    ret
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
        let cpus = super::super::affinity::allowed_cpus().unwrap();
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

    #[test]
    fn dropping_a_child_kills_and_reaps_it() {
        let (r, _w) = pipe().unwrap();
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
        let (r, _w) = pipe().unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&r);
        // SAFETY: the child only reads from a pipe into its stack.
        let mut c = unsafe {
            fork(move || {
                let mut b = [0u8; 1];
                read_fd(fd, &mut b);
                0
            })
        }
        .unwrap();
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
    fn tgkill_refuses_non_positive_ids() {
        assert_eq!(tgkill(0, 1, 0), -1);
        assert_eq!(tgkill(1, -1, 0), -1);
    }

    #[test]
    fn sigqueue_refuses_non_positive_ids() {
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
