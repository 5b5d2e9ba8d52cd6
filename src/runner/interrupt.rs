//! Ctrl-C and SIGTERM: the first one asks the run to stop at the next sample boundary,
//! so that every benchmark's `Drop` cleans up and what was measured is still written;
//! the handler resets itself, so a second one ends the process at once (children die
//! with it through their parent-death signal).
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_sig: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Whether SIGINT or SIGTERM has arrived since the guard was installed.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Installs the handlers; restores the previous dispositions when dropped.
pub struct InterruptGuard {
    old: Vec<(libc::c_int, libc::sigaction)>,
}

impl InterruptGuard {
    /// Installs one-shot handlers for SIGINT and SIGTERM.
    pub fn install() -> std::io::Result<InterruptGuard> {
        INTERRUPTED.store(false, Ordering::SeqCst);
        let mut old = Vec::new();
        for sig in [libc::SIGINT, libc::SIGTERM] {
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
