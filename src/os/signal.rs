//! Signal plumbing for the `signal` family: dispositions saved and restored, the
//! calling thread's mask changed and restored, pending signals taken without a handler
//! (`rt_sigtimedwait`), the `siginfo` a queued signal carries, `waitid` for a child's
//! stop and continue, and a protection trap: a read-only page whose write fault a
//! SIGSEGV handler repairs.
//!
//! Everything here acts on this process, its own threads or its own children: the
//! queueing calls live in [`super::task`] behind its guard against ids ≤ 0. Every type
//! restores what it changed when dropped. It must not know any benchmark by name, keep
//! timing state, or print anything.
//!
//! # Safety
//! The blocks below pass pointers to live, correctly sized values (sigaction, sigset,
//! siginfo, timespec) to the kernel. The SIGSEGV handler only reads atomics and the
//! kernel's `siginfo`, and makes the async-signal-safe calls `mprotect`, `sigaction`
//! and `raise`; it changes protection only on the one page a live [`ProtTrap`] owns.
#![allow(unsafe_code)]

use super::mem::{page_size, Mapping};
use super::sys;
use super::task::SigSet;
use std::io;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

// ---------------------------------------------------------------------------------
// Dispositions

static RUNS: [AtomicU64; 2] = [const { AtomicU64::new(0) }; 2];

extern "C" fn first_handler(_sig: libc::c_int) {
    RUNS[0].fetch_add(1, Ordering::Relaxed);
}

extern "C" fn second_handler(_sig: libc::c_int) {
    RUNS[1].fetch_add(1, Ordering::Relaxed);
}

/// A disposition with `handler`, `flags` and an empty mask.
///
/// # Safety
/// As for [`sys::Action::from_raw`]: `handler` is `SIG_DFL`, `SIG_IGN` or an
/// async-signal-safe `extern "C"` function of the form `flags` names.
pub(super) unsafe fn action_for(handler: usize, flags: libc::c_int) -> sys::Action {
    // SAFETY: an all-zero sigaction is valid storage; the fields are set below.
    let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
    act.sa_sigaction = handler;
    act.sa_flags = flags;
    // SAFETY: the set inside `act` is valid for writes.
    unsafe { libc::sigemptyset(&mut act.sa_mask) };
    // SAFETY: the caller vouches for the handler; the mask is initialised.
    unsafe { sys::Action::from_raw(act) }
}

/// Two different actions (two handlers that only count their runs), for a benchmark
/// that alternates between them.
pub fn two_actions() -> [sys::Action; 2] {
    let handlers = [first_handler as extern "C" fn(libc::c_int), second_handler];
    // SAFETY: both handlers are one-argument functions that only add to an atomic.
    handlers.map(|h| unsafe { action_for(h as usize, libc::SA_RESTART) })
}

/// SA_RESTORER, which the C library adds to every action it installs.
const SA_RESTORER: libc::c_int = 0x0400_0000;

/// Whether two dispositions name the same handler with the same flags (apart from the
/// C library's SA_RESTORER, absent from a disposition never set).
pub fn same_action(a: &sys::Action, b: &sys::Action) -> bool {
    a.handler() == b.handler() && (a.flags() & !SA_RESTORER) == (b.flags() & !SA_RESTORER)
}

/// The disposition a signal had when this was made, put back when it is dropped.
pub struct SavedAction {
    sig: libc::c_int,
    old: sys::Action,
}

impl SavedAction {
    /// Reads and keeps the current disposition of `sig`.
    pub fn save(sig: libc::c_int) -> io::Result<SavedAction> {
        Ok(SavedAction {
            sig,
            old: sys::sigaction_get(sig)?,
        })
    }
}

impl Drop for SavedAction {
    fn drop(&mut self) {
        sys::sigaction_set(self.sig, &self.old);
    }
}

/// The dispositions [`SavedActions::install`] replaced, put back (last first) when
/// dropped.
pub(in crate::os) struct SavedActions {
    old: Vec<(libc::c_int, libc::sigaction)>,
}

impl SavedActions {
    /// Installs `handler` with `flags` and an empty mask for each of `sigs`, keeping
    /// what each had; on a failure the ones installed already are put back.
    ///
    /// # Safety
    /// As for [`action_for`].
    pub(in crate::os) unsafe fn install(
        sigs: &[libc::c_int],
        handler: libc::sighandler_t,
        flags: libc::c_int,
    ) -> io::Result<SavedActions> {
        let mut saved = SavedActions { old: Vec::new() };
        for &sig in sigs {
            // SAFETY: an all-zero sigaction is valid; we fill handler, flags and mask.
            let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
            act.sa_sigaction = handler;
            act.sa_flags = flags;
            // SAFETY: `act.sa_mask` is a valid sigset_t owned by `act`.
            unsafe { libc::sigemptyset(&mut act.sa_mask) };
            // SAFETY: a zeroed sigaction receives the old disposition.
            let mut prev: libc::sigaction = unsafe { std::mem::zeroed() };
            // SAFETY: both pointers refer to valid sigaction values; the caller vouches
            // for the handler.
            let r = unsafe { libc::sigaction(sig, &act, &mut prev) };
            sys::cvt(r.into())?; // dropping `saved` puts the others back
            saved.old.push((sig, prev));
        }
        Ok(saved)
    }

    /// Each signal with the disposition it had before.
    pub(in crate::os) fn old(&self) -> &[(libc::c_int, libc::sigaction)] {
        &self.old
    }
}

impl Drop for SavedActions {
    fn drop(&mut self) {
        for (sig, prev) in self.old.iter().rev() {
            // SAFETY: restores a disposition previously returned by the kernel.
            unsafe { libc::sigaction(*sig, prev, std::ptr::null_mut()) };
        }
    }
}

// ---------------------------------------------------------------------------------
// Masks

/// `pthread_sigmask(how, set)` on the calling thread (one `rt_sigprocmask`): 0, or an
/// error number.
#[inline(always)]
pub fn change_mask(how: libc::c_int, set: &SigSet) -> libc::c_int {
    // SAFETY: a valid set; a null old set is allowed.
    unsafe { libc::pthread_sigmask(how, set.as_ptr(), std::ptr::null_mut()) }
}

/// Whether `sig` is in `set`.
pub fn is_member(set: &SigSet, sig: libc::c_int) -> bool {
    // SAFETY: a valid set and signal number.
    unsafe { libc::sigismember(set.as_ptr(), sig) == 1 }
}

/// The calling thread's mask when this was made, put back when it is dropped (on the
/// same thread).
pub struct SavedMask(SigSet);

impl SavedMask {
    /// Keeps the calling thread's current mask.
    pub fn save() -> SavedMask {
        SavedMask(SigSet::current())
    }
}

impl Drop for SavedMask {
    fn drop(&mut self) {
        change_mask(libc::SIG_SETMASK, &self.0);
    }
}

/// Whether `sig` is pending for the calling thread or its process.
pub fn is_pending(sig: libc::c_int) -> bool {
    // SAFETY: an all-zero sigset is valid storage for sigpending to fill.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is valid for writes; sigismember reads it.
    unsafe { libc::sigpending(&mut set) == 0 && libc::sigismember(&set, sig) == 1 }
}

/// Takes one pending signal of `set` (which must be blocked) without running a handler,
/// waiting at most `timeout`: the signal's number and its siginfo, or -1 with errno
/// (EAGAIN after the timeout, EINTR).
#[inline(always)]
pub fn take_pending(
    set: &SigSet,
    info: &mut QueueInfo,
    timeout: &libc::timespec,
) -> libc::c_long {
    // SAFETY: valid set, a 128-byte siginfo buffer and a timespec, all live for the
    // call; the kernel reads 8 bytes of the set.
    unsafe {
        libc::syscall(
            libc::SYS_rt_sigtimedwait,
            set.as_ptr(),
            std::ptr::from_mut(info),
            std::ptr::from_ref(timeout),
            8usize,
        )
    }
}

/// The soft RLIMIT_SIGPENDING (queued signals per user), or None when unlimited.
pub fn sigpending_limit() -> io::Result<Option<u64>> {
    let cur = super::ipc::soft_limit(libc::RLIMIT_SIGPENDING)?;
    Ok((cur != libc::RLIM_INFINITY).then_some(cur))
}

/// The `n`th real-time signal (SIGRTMIN + n).
pub fn rt_signal(n: libc::c_int) -> libc::c_int {
    libc::SIGRTMIN() + n
}

// ---------------------------------------------------------------------------------
// Queued signals

/// The kernel's `siginfo` for a signal queued by a process (`si_code` SI_QUEUE), laid
/// out as on x86-64 and 128 bytes long: what `rt_sigqueueinfo` reads and
/// `rt_sigtimedwait` fills.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct QueueInfo {
    signo: libc::c_int,
    errno: libc::c_int,
    code: libc::c_int,
    _align: libc::c_int,
    pid: libc::pid_t,
    uid: libc::uid_t,
    value: usize,
    _rest: [u64; 12],
}

const _: () = assert!(std::mem::size_of::<QueueInfo>() == 128);

impl QueueInfo {
    /// A signal `sig` sent by this process, carrying 0.
    pub fn new(sig: libc::c_int) -> QueueInfo {
        QueueInfo {
            signo: sig,
            errno: 0,
            code: libc::SI_QUEUE,
            _align: 0,
            pid: sys::getpid(),
            uid: sys::getuid(),
            value: 0,
            _rest: [0; 12],
        }
    }

    /// The signal's number.
    pub fn signo(&self) -> libc::c_int {
        self.signo
    }

    /// The value it carries (`si_value`).
    pub fn value(&self) -> usize {
        self.value
    }

    /// Sets the value it carries.
    #[inline(always)]
    pub fn set_value(&mut self, v: usize) {
        self.value = v;
    }
}

// ---------------------------------------------------------------------------------
// Stop and continue

/// `waitid(P_PID, pid, options)` for a stop or continue report of our own child: the
/// report's `si_code` (CLD_STOPPED, CLD_CONTINUED...), or -1 with errno. Refuses ids
/// ≤ 0. Restarted after EINTR.
#[inline(always)]
pub fn wait_state(pid: libc::pid_t, options: libc::c_int) -> libc::c_int {
    if pid <= 0 {
        return -1;
    }
    loop {
        // SAFETY: an all-zero siginfo is valid storage for the kernel to fill.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is valid for writes; pid names one process.
        let r =
            unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, options) };
        if r == 0 {
            return info.si_code;
        }
        if super::task::errno() != libc::EINTR {
            return -1;
        }
    }
}

// ---------------------------------------------------------------------------------
// The protection trap

static TRAP_START: AtomicUsize = AtomicUsize::new(0);
static TRAP_LEN: AtomicUsize = AtomicUsize::new(0);
static TRAPS: AtomicU64 = AtomicU64::new(0);

extern "C" fn on_segv(
    sig: libc::c_int,
    info: *mut libc::siginfo_t,
    _ctx: *mut libc::c_void,
) {
    let start = TRAP_START.load(Ordering::Acquire);
    let len = TRAP_LEN.load(Ordering::Acquire);
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let (code, addr) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
    if start != 0 && code > 0 && addr >= start && addr < start + len {
        // SAFETY: [start, start + len) is the page a live ProtTrap owns (it clears
        // TRAP_START before unmapping); making it writable invalidates nothing.
        let r = unsafe {
            libc::mprotect(
                start as *mut libc::c_void,
                len,
                libc::PROT_READ | libc::PROT_WRITE,
            )
        };
        if r == 0 {
            TRAPS.fetch_add(1, Ordering::Relaxed);
            return;
        }
    }
    // Not our fault: the default action, so that a real crash still crashes. A fault
    // recurs when the instruction runs again; a signal sent by a process is sent again
    // and arrives when this handler returns.
    // SAFETY: SIG_DFL is no function.
    let dfl = unsafe { action_for(libc::SIG_DFL, 0) };
    sys::sigaction_set(sig, &dfl);
    if code <= 0 {
        // SAFETY: raise has no memory preconditions.
        unsafe { libc::raise(sig) };
    }
}

/// One read-only page whose write fault a SIGSEGV handler repairs by making it
/// writable; the write then runs again and succeeds. Only one may live at a time
/// (callers hold [`super::task::signals_lock`]); dropping it restores SIGSEGV's
/// previous disposition and unmaps the page.
pub struct ProtTrap {
    page: Mapping,
    _old: SavedAction,
}

impl ProtTrap {
    /// Maps the page (resident, then read-only) and installs the handler.
    pub fn new() -> io::Result<ProtTrap> {
        let len = page_size();
        let page = Mapping::anon(len, true)?;
        page.touch_write(len);
        sys::cvt(page.protect(libc::PROT_READ) as libc::c_long)?;
        if TRAP_START
            .compare_exchange(0, page.addr(), Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return Err(io::Error::new(
                io::ErrorKind::AddrInUse,
                "another protection trap is live",
            ));
        }
        TRAP_LEN.store(len, Ordering::Release);
        let saved = SavedAction::save(libc::SIGSEGV);
        let installed = saved.and_then(|s| {
            let on_segv = on_segv
                as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void);
            // SAFETY: on_segv takes the three SA_SIGINFO arguments and makes only
            // async-signal-safe calls (mprotect, sigaction, raise).
            let act = unsafe { action_for(on_segv as usize, libc::SA_SIGINFO) };
            sys::cvt(sys::sigaction_set(libc::SIGSEGV, &act) as libc::c_long)?;
            Ok(s)
        });
        match installed {
            Ok(old) => Ok(ProtTrap { page, _old: old }),
            Err(e) => {
                TRAP_START.store(0, Ordering::Release);
                Err(e)
            }
        }
    }

    /// Writes one byte to the page: a fault and the handler's repair when the page is
    /// read-only, a plain store when it is writable.
    #[inline(always)]
    pub fn write(&self) {
        // SAFETY: the page is mapped for the life of self; if it is read-only, the
        // fault is repaired by the handler and the store runs again.
        unsafe { std::ptr::write_volatile(self.page.addr() as *mut u8, 1) };
    }

    /// mprotect of the page to read-only (or writable): the raw result.
    #[inline(always)]
    pub fn protect(&self, writable: bool) -> libc::c_int {
        let prot = if writable {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        self.page.protect(prot)
    }

    /// How many faults the handler has repaired in this process.
    #[inline(always)]
    pub fn repaired() -> u64 {
        TRAPS.load(Ordering::Relaxed)
    }
}

impl Drop for ProtTrap {
    fn drop(&mut self) {
        // The handler stops claiming the page before it is unmapped; SIGSEGV's old
        // disposition comes back when `_old` drops, then the page goes.
        TRAP_START.store(0, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queued_signal_comes_back_with_its_value_and_sender() {
        let _lock = super::super::task::signals_lock();
        let sig = rt_signal(3);
        let _mask = SavedMask::save();
        assert_eq!(change_mask(libc::SIG_BLOCK, &SigSet::empty().with(sig)), 0);
        let mut info = QueueInfo::new(sig);
        info.set_value(0x5157);
        let me = sys::getpid();
        assert_eq!(
            super::super::task::sigqueue(me, Some(super::super::task::gettid()), &info),
            0
        );
        assert!(is_pending(sig));
        let mut got = QueueInfo::new(0);
        let zero = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let r = take_pending(&SigSet::empty().with(sig), &mut got, &zero);
        assert_eq!(r, sig as libc::c_long);
        assert_eq!((got.signo(), got.value(), got.pid), (sig, 0x5157, me));
        assert!(!is_pending(sig));
    }

    #[test]
    fn wait_state_refuses_non_positive_ids() {
        for pid in [0, -1, -5] {
            assert_eq!(wait_state(pid, libc::WSTOPPED | libc::WNOHANG), -1);
        }
    }
}
