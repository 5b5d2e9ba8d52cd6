//! Ctrl-C, SIGTERM and SIGHUP: the first one asks the run to stop at the next sample
//! boundary, so that every benchmark's `Drop` cleans up and what was measured is still
//! written; a second one ends the process at once (children die with it through their
//! parent-death signal), unless it comes within [`SAME_BURST_NS`] of the first: that is
//! the same request delivered twice, as `timeout -s INT` sends it to the process and
//! then to its whole group. The run then exits with the shell's code for the signal
//! (130, 143, 129).
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(libc::SIGINT);
/// When the first stop signal came, CLOCK_MONOTONIC ns.
static FIRST_NS: AtomicU64 = AtomicU64::new(0);

/// A stop signal this soon after the first is the same request delivered twice (by
/// `timeout`, to the process and to its group, a few microseconds apart), not a user
/// asking to end at once: a person's second Ctrl-C comes later than that.
pub const SAME_BURST_NS: u64 = 500_000_000;

/// CLOCK_MONOTONIC in ns (clock_gettime is async-signal-safe).
fn monotonic_ns() -> u64 {
    super::sys::ts_ns(&super::sys::clock_gettime(libc::CLOCK_MONOTONIC))
}

/// The signals that ask a run to stop.
pub const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn on_signal(sig: libc::c_int) {
    let now = monotonic_ns();
    if !INTERRUPTED.load(Ordering::SeqCst) {
        SIGNAL.store(sig, Ordering::SeqCst);
        FIRST_NS.store(now, Ordering::SeqCst);
        INTERRUPTED.store(true, Ordering::SeqCst);
        return;
    }
    if now.saturating_sub(FIRST_NS.load(Ordering::SeqCst)) < SAME_BURST_NS {
        return;
    }
    // SAFETY: signal and raise are async-signal-safe; the default disposition ends the
    // process with this signal, as a shell expects.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
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
    _old: super::signal::SavedActions,
}

impl InterruptGuard {
    /// Installs the handlers for SIGINT, SIGTERM and SIGHUP.
    pub fn install() -> std::io::Result<InterruptGuard> {
        INTERRUPTED.store(false, Ordering::SeqCst);
        SIGNAL.store(libc::SIGINT, Ordering::SeqCst);
        let handler = on_signal as extern "C" fn(libc::c_int) as usize;
        // SAFETY: the handler only stores to atomics and makes async-signal-safe calls
        // (clock_gettime, signal, raise).
        let old = unsafe {
            super::signal::SavedActions::install(&STOP_SIGNALS, handler, libc::SA_RESTART)
        }?;
        Ok(InterruptGuard { _old: old })
    }
}
