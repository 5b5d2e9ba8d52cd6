//! The slave's side of a ping-pong: everything it needs copied in, and its loop.

use super::{Mech, SLAVE_YIELDS, STOP, TO_MASTER, TO_SLAVE};
use crate::os::task::{self, DirtyCall, SharedMem, SigSet, Vector};
use std::os::fd::RawFd;
use std::sync::atomic::Ordering;

/// Everything the slave needs, copied into it; only raw descriptors and the shared
/// memory, so the slave's loop is async-signal-safe.
#[derive(Clone, Copy)]
pub(super) struct SlaveEnds {
    pub(super) mech: Mech,
    pub(super) vector: Vector,
    pub(super) inp: RawFd,
    pub(super) out: RawFd,
    pub(super) master_pid: libc::pid_t,
    pub(super) master_tid: libc::pid_t,
    pub(super) wait_mask: SigSet,
    /// SIGUSR1 deliveries counted before the slave existed.
    pub(super) signals_before: u64,
}

/// The slave's loop: wait for the master, answer, until told to stop (or end of file).
pub(super) fn slave(e: SlaveEnds, mem: &SharedMem) -> i32 {
    let to_slave = mem.word(TO_SLAVE);
    let to_master = mem.word(TO_MASTER);
    let stop = mem.word(STOP);
    let mut buf = [0u8; 8];
    let mut seen: u32 = 0;
    let mut seen_signals = e.signals_before;
    let mut yields: u64 = 0;
    loop {
        // Wait.
        match e.mech {
            Mech::Pipe | Mech::Unix | Mech::Eventfd => {
                let len = if e.mech == Mech::Eventfd { 8 } else { 1 };
                let r = task::syscall_dirty(
                    e.vector,
                    DirtyCall::Read(e.inp, &mut buf[..len]),
                );
                if r == -(libc::EINTR as isize) {
                    continue;
                }
                if r != len as isize || stop.load(Ordering::Acquire) != 0 {
                    return if r == 0 || stop.load(Ordering::Acquire) != 0 {
                        0
                    } else {
                        2
                    };
                }
            }
            Mech::Futex => {
                while to_slave.load(Ordering::Acquire) == seen {
                    task::syscall_dirty(e.vector, DirtyCall::FutexWait(to_slave, seen));
                }
                seen = to_slave.load(Ordering::Acquire);
            }
            Mech::Signal => {
                while task::delivered(libc::SIGUSR1) == seen_signals {
                    task::syscall_dirty(e.vector, DirtyCall::SigSuspend(&e.wait_mask));
                }
                seen_signals = task::delivered(libc::SIGUSR1);
            }
            Mech::Yield => {
                while to_slave.load(Ordering::Acquire) == seen
                    && stop.load(Ordering::Acquire) == 0
                {
                    task::syscall_dirty(e.vector, DirtyCall::Yield);
                    yields += 1;
                }
                seen = to_slave.load(Ordering::Acquire);
                mem.slot(SLAVE_YIELDS).store(yields, Ordering::Release);
            }
        }
        if stop.load(Ordering::Acquire) != 0 {
            return 0;
        }
        // Answer.
        match e.mech {
            Mech::Pipe | Mech::Unix => {
                if task::write_fd(e.out, &buf[..1]) != 1 {
                    return 3;
                }
            }
            Mech::Eventfd => {
                if task::write_fd(e.out, &1u64.to_ne_bytes()) != 8 {
                    return 3;
                }
            }
            Mech::Futex => {
                to_master.store(seen, Ordering::Release);
                task::futex_wake(to_master, 1);
            }
            Mech::Signal => {
                if task::tgkill(e.master_pid, e.master_tid, libc::SIGUSR2) != 0 {
                    return 3;
                }
            }
            Mech::Yield => to_master.store(seen, Ordering::Release),
        }
    }
}
