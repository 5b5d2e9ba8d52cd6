//! The master's side of a live ping-pong: the timed round trip, and the end that
//! stops, reaps or joins the other task.

use super::{Mech, ENDED, SLAVE_YIELDS, STOP, TO_MASTER, TO_SLAVE};
use crate::error::BenchError;
use crate::harness::Body;
use crate::os::affinity::Pin;
use crate::os::interrupt;
use crate::os::task::{self, Blocked, Child, ExitWatch, Handler, SharedMem, SigSet};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The other task.
pub(super) enum Peer {
    Process(Child),
    Thread(JoinHandle<i32>),
}

/// The master's side of a live ping-pong.
pub(super) struct PingPong {
    pub(super) mech: Mech,
    pub(super) mem: Arc<SharedMem>,
    pub(super) inp: Option<OwnedFd>,
    pub(super) out: Option<OwnedFd>,
    pub(super) peer: Option<Peer>,
    pub(super) slave_tid: libc::pid_t,
    pub(super) seq: u32,
    pub(super) signals_seen: u64,
    pub(super) wait_mask: SigSet,
    pub(super) master_yields: u64,
    pub(super) trips: u64,
    /// Yields by both tasks and round trips, left here when the body ends.
    pub(super) yield_report: Arc<[AtomicU64; 2]>,
    /// The futex wait's time limit: none while something marks the other task's end
    /// ([`mark_ended`]), [`TIMEOUT`] otherwise.
    pub(super) timeout: Option<libc::timespec>,
    /// Marks a forked other task's end when it dies; joined when dropped.
    pub(super) _watch: Option<ExitWatch>,
    // Restored when dropped, after the peer has ended: the mask first, so a reply
    // still pending reaches the counting handler rather than the default action; the
    // lock is released last.
    pub(super) _blocked: Option<Blocked>,
    pub(super) _handlers: Vec<Handler>,
    pub(super) _pin: Option<Pin>,
    pub(super) _signals: Option<MutexGuard<'static, ()>>,
}

/// How long the master's futex wait lasts before it looks whether the other task
/// lives, where nothing tells it ([`ExitWatch`] could not start). Only there: a timed
/// wait arms a timer at every sleep, which cost 5% of a same-CPU round trip here
/// (4.06 µs against 4.26 µs, 2026-11-28).
pub(super) const TIMEOUT: libc::timespec = libc::timespec {
    tv_sec: 1,
    tv_nsec: 0,
};

/// Marks in `mem` that the other task has ended, so that a master waiting on its futex
/// word wakes and stops ([`PingPong::ended`]): the flag, then a change of the word
/// the master waits on (a wake the master is not yet asleep for would be lost; a
/// changed word makes its next wait return at once), then the wake.
pub(super) fn mark_ended(mem: &SharedMem) {
    mem.word(ENDED).store(1, Ordering::Release);
    let w = mem.word(TO_MASTER);
    w.fetch_xor(1 << 31, Ordering::AcqRel);
    task::futex_wake(w, i32::MAX);
}

impl PingPong {
    #[inline(always)]
    fn round_trip(&mut self) -> Result<(), BenchError> {
        match self.mech {
            Mech::Pipe | Mech::Unix | Mech::Eventfd => {
                let (w, r) = match (&self.out, &self.inp) {
                    (Some(w), Some(r)) => (w.as_raw_fd(), r.as_raw_fd()),
                    _ => return Err(BenchError::Failed("closed".into())),
                };
                let mut buf = 1u64.to_ne_bytes();
                let len = if self.mech == Mech::Eventfd { 8 } else { 1 };
                if task::write_fd(w, &buf[..len]) != len as isize {
                    return Err(self.broken("write"));
                }
                let mut got = task::read_fd(r, &mut buf[..len]);
                while got < 0 && task::errno() == libc::EINTR && !interrupt::interrupted()
                {
                    got = task::read_fd(r, &mut buf[..len]);
                }
                if got != len as isize {
                    return Err(self.broken("read"));
                }
            }
            Mech::Futex => {
                self.seq = self.seq.wrapping_add(1);
                let (to_slave, to_master) =
                    (self.mem.word(TO_SLAVE), self.mem.word(TO_MASTER));
                to_slave.store(self.seq, Ordering::Release);
                task::futex_wake(to_slave, 1);
                let prev = self.seq.wrapping_sub(1);
                while to_master.load(Ordering::Acquire) != self.seq {
                    if self.mem.word(ENDED).load(Ordering::Relaxed) != 0 {
                        return Err(self.ended());
                    }
                    if task::futex_wait(to_master, prev, self.timeout.as_ref()) != 0
                        && task::errno() == libc::ETIMEDOUT
                    {
                        check_alive(&mut self.peer)?;
                    }
                }
            }
            Mech::Signal => {
                let want = self.signals_seen + 1;
                if task::tgkill(self.slave_pid(), self.slave_tid, libc::SIGUSR1) != 0 {
                    return Err(self.broken("tgkill"));
                }
                while task::delivered(libc::SIGUSR2) < want {
                    task::sigsuspend(&self.wait_mask);
                    if task::delivered(libc::SIGUSR2) < want {
                        self.check_alive()?;
                    }
                }
                self.signals_seen = want;
            }
            Mech::Yield => {
                self.seq = self.seq.wrapping_add(1);
                let (to_slave, to_master) =
                    (self.mem.word(TO_SLAVE), self.mem.word(TO_MASTER));
                to_slave.store(self.seq, Ordering::Release);
                let mut spins = 0u64;
                while to_master.load(Ordering::Acquire) != self.seq {
                    task::yield_now();
                    spins += 1;
                    if spins.is_multiple_of(1_000_000) {
                        check_alive(&mut self.peer)?;
                    }
                }
                self.master_yields += spins;
                self.trips += 1;
            }
        }
        Ok(())
    }

    fn slave_pid(&self) -> libc::pid_t {
        match &self.peer {
            Some(Peer::Process(c)) => c.pid(),
            _ => std::process::id() as libc::pid_t,
        }
    }

    /// What to say once the other task has marked itself ended ([`mark_ended`]).
    #[cold]
    fn ended(&mut self) -> BenchError {
        match self.check_alive() {
            Err(e) => e,
            Ok(()) => BenchError::Failed("the other task ended".into()),
        }
    }

    #[cold]
    fn check_alive(&mut self) -> Result<(), BenchError> {
        check_alive(&mut self.peer)
    }

    #[cold]
    fn broken(&mut self, what: &str) -> BenchError {
        let err = std::io::Error::last_os_error();
        match self.check_alive() {
            Err(e) => e,
            Ok(()) => BenchError::Failed(format!("{what}: {err}")),
        }
    }

    /// Stops the slave and reaps or joins it.
    fn finish(&mut self) -> Result<(), BenchError> {
        let Some(peer) = self.peer.take() else {
            return Ok(());
        };
        self.report_yields();
        self.mem.word(STOP).store(1, Ordering::Release);
        match self.mech {
            Mech::Pipe | Mech::Unix => {
                // End of file reaches the slave once every master copy is closed.
                drop(self.out.take());
                drop(self.inp.take());
            }
            Mech::Eventfd => {
                if let Some(w) = &self.out {
                    task::write_fd(w.as_raw_fd(), &1u64.to_ne_bytes());
                }
            }
            Mech::Futex => {
                let w = self.mem.word(TO_SLAVE);
                w.fetch_add(1, Ordering::AcqRel);
                task::futex_wake(w, 1);
            }
            Mech::Signal => {
                let pid = match &peer {
                    Peer::Process(c) => c.pid(),
                    Peer::Thread(_) => std::process::id() as libc::pid_t,
                };
                task::tgkill(pid, self.slave_tid, libc::SIGUSR1);
            }
            Mech::Yield => {}
        }
        let result = match peer {
            Peer::Process(mut c) => {
                match c.reap_by(Instant::now() + Duration::from_secs(2)) {
                    Ok((_, true)) => {
                        Err("the other task did not stop and was killed".to_string())
                    }
                    Ok((st, false)) if !task::exited_ok(st) => {
                        Err(format!("the other task {}", task::describe_status(st)))
                    }
                    Ok(_) => Ok(()),
                    Err(e) => Err(format!("waitpid: {e}")),
                }
            }
            Peer::Thread(h) => match h.join() {
                Ok(0) => Ok(()),
                Ok(code) => Err(format!("the other thread stopped with code {code}")),
                Err(_) => Err("the other thread panicked".into()),
            },
        };
        drop(self.out.take());
        drop(self.inp.take());
        result.map_err(BenchError::Failed)
    }

    fn report_yields(&self) {
        let slave = self.mem.slot(SLAVE_YIELDS).load(Ordering::Acquire);
        self.yield_report[0].store(self.master_yields + slave, Ordering::Release);
        self.yield_report[1].store(self.trips, Ordering::Release);
    }
}

#[cold]
fn check_alive(peer: &mut Option<Peer>) -> Result<(), BenchError> {
    if interrupt::interrupted() {
        return Err(BenchError::Interrupted);
    }
    match peer {
        Some(Peer::Process(c)) => match c.try_wait() {
            Ok(Some(st)) => Err(BenchError::Failed(format!(
                "the other task (pid {}) {}",
                c.pid(),
                task::describe_status(st)
            ))),
            _ => Ok(()),
        },
        Some(Peer::Thread(h)) if h.is_finished() => {
            Err(BenchError::Failed("the other thread ended".into()))
        }
        _ => Ok(()),
    }
}

impl Body for PingPong {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for _ in 0..iters {
            self.round_trip()?;
        }
        Ok(())
    }
}

impl Drop for PingPong {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}
