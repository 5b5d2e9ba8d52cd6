//! Signals between our own tasks: to a thread or a child we made (never to an id ≤ 0),
//! signal sets and masks, counting handlers, and the lock that serialises the tests
//! and benchmarks that change signal dispositions.
#![allow(unsafe_code)]

use crate::os::signal::QueueInfo;
use std::io;
use std::sync::atomic::AtomicU64;

/// Sends `sig` to thread `tid` of process `tgid`; refuses ids ≤ 0.
#[inline(always)]
pub fn tgkill(tgid: libc::pid_t, tid: libc::pid_t, sig: libc::c_int) -> i64 {
    if tgid <= 0 || tid <= 0 {
        return -1;
    }
    // SAFETY: a signal to one thread named by positive ids; no memory is passed.
    unsafe { libc::syscall(libc::SYS_tgkill, tgid, tid, sig) }
}

/// `raise(3)`: the C library's send of `sig` to the calling thread (glibc blocks every
/// signal around its tgkill and restores the mask after). Returns 0, or nonzero when
/// the signal could not be sent.
pub fn raise_self(sig: libc::c_int) -> libc::c_int {
    // SAFETY: the calling thread signals itself; no memory is passed.
    unsafe { libc::raise(sig) }
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

    /// Whether `sig` is in the set.
    pub fn contains(&self, sig: libc::c_int) -> bool {
        // SAFETY: valid set, valid signal number.
        unsafe { libc::sigismember(&self.0, sig) == 1 }
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

/// The period, in µs, that [`Handler::rearming_itimer`]'s handler re-arms ITIMER_REAL
/// with; 0 stops it re-arming.
static REARM_US: AtomicU64 = AtomicU64::new(0);

/// The delivery count the waiting code waits for.
static REARM_UNTIL: AtomicU64 = AtomicU64::new(0);

/// How many signals past [`REARM_UNTIL`] the re-arming handler still re-arms: the
/// waiting code disarms the timer within a period or two of its last signal, so only
/// a storm of signals (a handler slower than the period) reaches this many.
const REARM_STORM: u64 = 1000;

extern "C" fn rearming_handler(sig: libc::c_int) {
    counting_handler(sig);
    let us = REARM_US.load(std::sync::atomic::Ordering::SeqCst);
    if us != 0 {
        // As lmbench's, the timer stays periodic after the batch's last signal, so a
        // signal that comes between the waiting code's count check and its sleep is
        // followed by another. Only a storm stops it here: were the handler slower
        // than the period (a tracer, a loaded machine), each signal would be pending
        // at its return and the waiting code never run.
        let last = REARM_UNTIL.load(std::sync::atomic::Ordering::SeqCst);
        let v = if delivered(sig) < last.saturating_add(REARM_STORM) {
            crate::os::svc::itimer_periodic(us)
        } else {
            crate::os::svc::itimer_once(0)
        };
        // SAFETY: setitimer is async-signal-safe; `v` is a valid local itimerval.
        unsafe { libc::setitimer(libc::ITIMER_REAL, &v, std::ptr::null_mut()) };
    }
}

/// Sets the period the re-arming handler re-arms ITIMER_REAL with (0: it only counts)
/// while SIGALRM's delivery count is short of `until` and for a storm's length after
/// it (the waiting code disarms the timer once it has its signals). Clear it
/// before disarming the timer, or a signal taken on the way re-arms it.
pub fn set_rearm_us(us: u64, until: u64) {
    REARM_UNTIL.store(until, std::sync::atomic::Ordering::SeqCst);
    REARM_US.store(us, std::sync::atomic::Ordering::SeqCst);
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
    old: crate::os::sys::Action,
}

impl Handler {
    /// Installs a handler that counts deliveries (see [`delivered`]); delivery also
    /// ends a sigsuspend.
    pub fn counting(sig: libc::c_int) -> io::Result<Handler> {
        // SAFETY: counting_handler takes one argument and only adds to an atomic.
        unsafe { Handler::install(sig, counting_handler, libc::SA_RESTART) }
    }

    /// Installs lmbench lat_usleep's itimer handler for SIGALRM: it counts deliveries
    /// (see [`delivered`]) and, while [`set_rearm_us`] holds a period, re-arms
    /// ITIMER_REAL with it, periodic, until a storm of signals past the count it
    /// names, where it disarms the timer. No SA_RESTART, as lmbench's: a sleep the signal
    /// interrupts returns EINTR.
    pub fn rearming_itimer() -> io::Result<Handler> {
        set_rearm_us(0, 0);
        // SAFETY: rearming_handler takes one argument, adds to an atomic and calls
        // setitimer, which is async-signal-safe.
        unsafe { Handler::install(libc::SIGALRM, rearming_handler, 0) }
    }

    /// Installs `handler` for `sig` with `flags` and an empty mask.
    ///
    /// # Safety
    /// `handler` makes only async-signal-safe calls.
    unsafe fn install(
        sig: libc::c_int,
        handler: extern "C" fn(libc::c_int),
        flags: libc::c_int,
    ) -> io::Result<Handler> {
        let old = crate::os::sys::sigaction_get(sig)?;
        // SAFETY: a one-argument handler (no SA_SIGINFO) the caller vouches for.
        let act = unsafe { crate::os::signal::action_for(handler as usize, flags) };
        crate::os::sys::cvt(crate::os::sys::sigaction_set(sig, &act) as libc::c_long)?;
        Ok(Handler { sig, old })
    }
}

impl Drop for Handler {
    fn drop(&mut self) {
        crate::os::sys::sigaction_set(self.sig, &self.old);
    }
}
