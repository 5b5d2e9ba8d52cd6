//! The ring itself: its member tasks (forked processes or threads) joined by pipes,
//! the member's loop, and the shared area where each member leaves its CPU usage.

use super::{Placement, TaskKind};
use crate::error::BenchError;
use crate::harness::Body;
use crate::os::affinity::{self, Pin};
use crate::os::interrupt;
use crate::os::task::{self, Child, SharedMem};
use crate::os::usage::{Usage, Who};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Slots per member in the shared usage area: a flag word, then the usage at the
/// first token (user, sys, vol, invol), then at end of file.
const SLOTS: usize = 9;
const STARTED: u64 = 1;
const ENDED: u64 = 2;

fn record(mem: &SharedMem, at: usize, u: &Usage) {
    mem.slot(at).store(u.user_ns, Ordering::Relaxed);
    mem.slot(at + 1).store(u.sys_ns, Ordering::Relaxed);
    mem.slot(at + 2).store(u.vol_switches, Ordering::Relaxed);
    mem.slot(at + 3).store(u.invol_switches, Ordering::Relaxed);
}

fn recorded(mem: &SharedMem, at: usize) -> Usage {
    Usage {
        user_ns: mem.slot(at).load(Ordering::Relaxed),
        sys_ns: mem.slot(at + 1).load(Ordering::Relaxed),
        vol_switches: mem.slot(at + 2).load(Ordering::Relaxed),
        invol_switches: mem.slot(at + 3).load(Ordering::Relaxed),
        ..Usage::default()
    }
}

/// A member's loop: forward every byte from `inp` to `out` until end of file. Records
/// its thread's usage at the first token and at the end. Async-signal-safe: it runs
/// in forked children.
fn serve(inp: RawFd, out: RawFd, mem: &SharedMem, member: usize) -> i32 {
    let base = member * SLOTS;
    let mut b = [0u8; 1];
    let mut started = false;
    loop {
        let r = task::read_fd(inp, &mut b);
        if r == 1 {
            if !started {
                record(mem, base + 1, &Usage::now(Who::Thread));
                mem.slot(base).fetch_or(STARTED, Ordering::Release);
                started = true;
            }
            if task::write_fd(out, &b) != 1 {
                return 3;
            }
            continue;
        }
        if r < 0 && task::errno() == libc::EINTR {
            continue;
        }
        record(mem, base + 5, &Usage::now(Who::Thread));
        mem.slot(base).fetch_or(ENDED, Ordering::Release);
        return if r == 0 { 0 } else { 2 };
    }
}

/// A live ring. Dropping it closes the measuring thread's ends, which ends every
/// member in turn at end of file, then reaps or joins them.
pub struct Ring {
    n: usize,
    inject: Option<OwnedFd>,
    back: Option<OwnedFd>,
    children: Vec<Child>,
    threads: Vec<JoinHandle<()>>,
    mem: Arc<SharedMem>,
    _pin: Option<Pin>,
}

/// Why a ring could not be built.
#[derive(Debug)]
pub enum BuildError {
    /// A limit was reached (fork, threads, descriptors): skip this n and larger.
    Limit(String),
    /// Anything else.
    Other(BenchError),
}

impl Ring {
    /// Builds a ring of `n` tasks, the calling thread included.
    pub fn build(
        n: usize,
        kind: TaskKind,
        place: &Placement,
    ) -> Result<Ring, BuildError> {
        let mem = Arc::new(
            SharedMem::new((n + 1) * SLOTS * 8)
                .map_err(|e| BuildError::Other(BenchError::os("mmap (shared)", e)))?,
        );
        let pin = match place {
            Placement::One(c) => Some(
                Pin::to(*c).map_err(|e| BuildError::Other(BenchError::os("pin", e)))?,
            ),
            Placement::Free(_) => None,
        };
        let cpus = place.cpus();
        let limit = |what: &str, i: usize, e: std::io::Error| {
            BuildError::Limit(format!("{what} failed at task {} of {n}: {e}", i + 1))
        };
        let (r0, w0) = task::pipe().map_err(|e| limit("pipe", 0, e))?;
        let mut ring = Ring {
            n,
            inject: None,
            back: None,
            children: Vec::with_capacity(if kind == TaskKind::Process { n } else { 0 }),
            threads: Vec::with_capacity(if kind == TaskKind::Thread { n } else { 0 }),
            mem,
            _pin: pin,
        };
        let inject_raw = w0.as_raw_fd();
        ring.inject = Some(w0);
        let mut prev = r0;
        for i in 1..n {
            let (r, w) = task::pipe().map_err(|e| limit("pipe", i, e))?;
            match kind {
                TaskKind::Process => {
                    let (inp, out, next) =
                        (prev.as_raw_fd(), w.as_raw_fd(), r.as_raw_fd());
                    let (cpus, mem) = (&cpus[..], &*ring.mem);
                    // SAFETY: the member gives up the injector's end and the next
                    // member's read end, and runs `serve`: reads, writes, getrusage
                    // and atomics in shared memory, no allocation or lock.
                    #[allow(unsafe_code)]
                    let child = unsafe {
                        task::fork_partner(&[inject_raw, next], cpus, || {
                            serve(inp, out, mem, i)
                        })
                    }
                    .map_err(|e| limit("fork", i, e))?;
                    ring.children.push(child);
                    drop(prev);
                    drop(w);
                }
                TaskKind::Thread => {
                    let (cpus, mem) = (cpus.clone(), ring.mem.clone());
                    let inp = prev;
                    let h = std::thread::Builder::new()
                        .name("syscost-ring".into())
                        .stack_size(64 * 1024)
                        .spawn(move || {
                            if affinity::set_cpus(&cpus).is_ok() {
                                serve(inp.as_raw_fd(), w.as_raw_fd(), &mem, i);
                            }
                            drop(inp);
                            drop(w);
                        })
                        .map_err(|e| limit("thread creation", i, e))?;
                    ring.threads.push(h);
                }
            }
            prev = r;
        }
        ring.back = Some(prev);
        Ok(ring)
    }

    /// Passes the token around the ring `passes` times.
    #[inline(always)]
    pub fn run(&mut self, passes: u64) -> Result<(), BenchError> {
        let (Some(inject), Some(back)) = (&self.inject, &self.back) else {
            return Err(BenchError::Failed("the ring is closed".into()));
        };
        let (w, r) = (inject.as_raw_fd(), back.as_raw_fd());
        let mut b = [b'x'];
        for _ in 0..passes {
            if task::write_fd(w, &b) != 1 {
                return Err(self.broken("write"));
            }
            let mut got = task::read_fd(r, &mut b);
            while got < 0 && task::errno() == libc::EINTR && !interrupt::interrupted() {
                got = task::read_fd(r, &mut b);
            }
            if got != 1 {
                return Err(self.broken("read"));
            }
        }
        Ok(())
    }

    #[cold]
    fn broken(&mut self, what: &str) -> BenchError {
        if interrupt::interrupted() {
            return BenchError::Interrupted;
        }
        let err = std::io::Error::last_os_error();
        for (i, c) in self.children.iter_mut().enumerate() {
            if let Ok(Some(st)) = c.try_wait() {
                return BenchError::Failed(format!(
                    "ring task {} (pid {}) {}",
                    i + 1,
                    c.pid(),
                    task::describe_status(st)
                ));
            }
        }
        if self.threads.iter().any(|h| h.is_finished()) {
            return BenchError::Failed("a ring thread ended".into());
        }
        BenchError::Failed(format!("{what} of the token failed: {err}"))
    }

    /// Ends the ring: closes the token's way in, so every member reads end of file in
    /// turn, then reaps or joins them (killing a process still there after a grace
    /// period). Reports a member that did not end cleanly.
    pub fn close(&mut self) -> Result<(), BenchError> {
        drop(self.inject.take());
        let deadline = Instant::now()
            + Duration::from_secs(2)
            + Duration::from_millis(self.n as u64);
        let mut trouble: Option<String> = None;
        for (i, c) in self.children.iter_mut().enumerate() {
            match c.reap_by(deadline) {
                Ok((_, true)) => {
                    trouble
                        .get_or_insert(format!("ring task {} had to be killed", i + 1));
                }
                Ok((st, false)) if !task::exited_ok(st) => {
                    trouble.get_or_insert(format!(
                        "ring task {} {}",
                        i + 1,
                        task::describe_status(st)
                    ));
                }
                Ok(_) => {}
                Err(e) => {
                    trouble.get_or_insert(format!("waitpid: {e}"));
                }
            }
        }
        self.children.clear();
        for h in self.threads.drain(..) {
            if h.join().is_err() {
                trouble.get_or_insert("a ring thread panicked".into());
            }
        }
        drop(self.back.take());
        match trouble {
            Some(t) => Err(BenchError::Failed(t)),
            None => Ok(()),
        }
    }

    /// The members' usage between their first token and end of file, summed (after
    /// [`Ring::close`]).
    pub fn members_usage(&self) -> Result<Usage, BenchError> {
        let mut total = Usage::default();
        for m in 1..self.n {
            let flags = self.mem.slot(m * SLOTS).load(Ordering::Acquire);
            if flags != STARTED | ENDED {
                return Err(BenchError::Failed(format!(
                    "ring task {m} did not report its usage"
                )));
            }
            let d = recorded(&self.mem, m * SLOTS + 5)
                .since(&recorded(&self.mem, m * SLOTS + 1));
            total.add(&d);
        }
        Ok(total)
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

impl Body for Ring {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        Ring::run(self, iters)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_member_fails_the_pass_with_its_status() {
        let place = Placement::Free(affinity::process_cpus());
        let mut ring = Ring::build(3, TaskKind::Process, &place)
            .map_err(|_| ())
            .unwrap();
        ring.run(1).unwrap();
        ring.children[0].signal(libc::SIGKILL).unwrap();
        let _ = ring.children[0].wait();
        let err = ring.run(1).unwrap_err();
        assert!(
            matches!(&err, BenchError::Failed(m) if m.contains("ring task")),
            "{err}"
        );
        assert!(ring.close().is_err());
    }
}
