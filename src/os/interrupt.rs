//! Ctrl-C, SIGTERM and SIGHUP: the first one asks the run to stop at the next sample
//! boundary, so that every benchmark's `Drop` cleans up and what was measured is still
//! written; the handler resets itself, so a second one ends the process at once
//! (children die with it through their parent-death signal). The run then exits with
//! the shell's code for the signal (130, 143, 129).
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(libc::SIGINT);

/// The signals that ask a run to stop.
pub const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn on_signal(sig: libc::c_int) {
    SIGNAL.store(sig, Ordering::SeqCst);
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Whether SIGINT, SIGTERM or SIGHUP has arrived since the guard was installed.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// The exit code for an interrupted run: 128 plus the signal that stopped it, as
/// shells report a process the signal killed (130 for SIGINT, 143 for SIGTERM, 129 for
/// SIGHUP).
pub fn exit_code() -> u8 {
    128 + SIGNAL.load(Ordering::SeqCst) as u8
}

/// Installs the handlers; restores the previous dispositions when dropped.
pub struct InterruptGuard {
    old: Vec<(libc::c_int, libc::sigaction)>,
}

impl InterruptGuard {
    /// Installs one-shot handlers for SIGINT, SIGTERM and SIGHUP.
    pub fn install() -> std::io::Result<InterruptGuard> {
        INTERRUPTED.store(false, Ordering::SeqCst);
        SIGNAL.store(libc::SIGINT, Ordering::SeqCst);
        let mut old = Vec::new();
        for sig in STOP_SIGNALS {
            // SAFETY: an all-zero sigaction is valid; we fill handler, flags and mask.
            let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
            act.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            act.sa_flags = libc::SA_RESETHAND | libc::SA_RESTART;
            // SAFETY: `act.sa_mask` is a valid sigset_t owned by `act`.
            unsafe { libc::sigemptyset(&mut act.sa_mask) };
            // SAFETY: a zeroed sigaction receives the old disposition.
            let mut prev: libc::sigaction = unsafe { std::mem::zeroed() };
            // SAFETY: both pointers refer to valid sigaction values; the handler only
            // stores to an atomic, which is async-signal-safe.
            let r = unsafe { libc::sigaction(sig, &act, &mut prev) };
            super::sys::cvt(r as libc::c_long)?;
            old.push((sig, prev));
        }
        Ok(InterruptGuard { old })
    }
}

impl Drop for InterruptGuard {
    fn drop(&mut self) {
        for (sig, prev) in &self.old {
            // SAFETY: restores a disposition previously returned by the kernel.
            unsafe { libc::sigaction(*sig, prev, std::ptr::null_mut()) };
        }
    }
}
