//! `ctx.pingpong`: two tasks hand control back and forth through one mechanism, and the
//! harness times the round trip. Half of it estimates one switch with the mechanism's
//! own cost included, as the 1999 paper did for signals and pipes.
//!
//! The measuring thread is the master; the slave is a forked child or a thread. The
//! slave's blocking call is made as one raw system call, so with `fpu=avx` it enters
//! the kernel with its vector registers dirty and every switch must save and restore
//! them.

use super::place;
use crate::bench::{Kind, ParamSpec, Params, Prepared, Simple};
use crate::error::BenchError;
use crate::harness::{Body, Expect, Plan};
use crate::os::affinity::{self, Pin};
use crate::os::interrupt;
use crate::os::task::{
    self, Blocked, Child, DirtyCall, Handler, SharedMem, SigSet, Vector,
};
use crate::results::Fact;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The mechanisms.
pub const MECHANISMS: &[&str] = &["pipe", "unix", "eventfd", "futex", "signal", "yield"];

static PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "mechanism",
        default: "pipe,unix,eventfd,futex,signal,yield",
        about: "how the tasks wake each other: a pipe each way, a Unix socket pair, an eventfd each way, a futex word each way, SIGUSR1/SIGUSR2 to a handler, or sched_yield on one CPU",
        kind: Kind::Choice(MECHANISMS),
    },
    super::placement(
        "same-cpu,cross-cpu",
        "both tasks on one CPU, on two different CPUs, or placed by the scheduler",
    ),
    ParamSpec {
        name: "kind",
        default: "process",
        about: "the other task is a forked process or a thread",
        kind: Kind::Choice(&["process", "thread"]),
    },
    ParamSpec {
        name: "fpu",
        default: "clean",
        about: "avx: the other task dirties the AVX (AVX-512 where present) registers before it blocks",
        kind: Kind::Choice(&["clean", "avx"]),
    },
];

/// `ctx.pingpong`.
pub const PINGPONG: Simple = Simple {
    name: "ctx.pingpong",
    about: "two tasks bounce control through one mechanism: the round trip, and half of it as the one-way switch",
    origin: "manea1999 §4 (signals vs pipes); lmbench lat_ctx, lat_pipe",
    params: PARAMS,
    prepare,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mech {
    Pipe,
    Unix,
    Eventfd,
    Futex,
    Signal,
    Yield,
}

// Shared words: the round-trip sequence each way, the stop flag, and yield counts.
const TO_SLAVE: usize = 0;
const TO_MASTER: usize = 1;
const STOP: usize = 2;
const SLAVE_YIELDS: usize = 4; // a 64-bit slot index (words 8 and 9)

/// Everything the slave needs, copied into it; only raw descriptors and the shared
/// memory, so the slave's loop is async-signal-safe.
#[derive(Clone, Copy)]
struct SlaveEnds {
    mech: Mech,
    vector: Vector,
    inp: RawFd,
    out: RawFd,
    master_pid: libc::pid_t,
    master_tid: libc::pid_t,
    wait_mask: SigSet,
    /// SIGUSR1 deliveries counted before the slave existed.
    signals_before: u64,
}

/// The slave's loop: wait for the master, answer, until told to stop (or end of file).
fn slave(e: SlaveEnds, mem: &SharedMem) -> i32 {
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

enum Peer {
    Process(Child),
    Thread(JoinHandle<i32>),
}

/// The master's side of a live ping-pong.
struct PingPong {
    mech: Mech,
    mem: Arc<SharedMem>,
    inp: Option<OwnedFd>,
    out: Option<OwnedFd>,
    peer: Option<Peer>,
    slave_tid: libc::pid_t,
    seq: u32,
    signals_seen: u64,
    wait_mask: SigSet,
    master_yields: u64,
    trips: u64,
    /// Yields by both tasks and round trips, left here when the body ends.
    yield_report: Arc<[AtomicU64; 2]>,
    // Restored when dropped, after the peer has ended: the mask first, so a reply
    // still pending reaches the counting handler rather than the default action; the
    // lock is released last.
    _blocked: Option<Blocked>,
    _handlers: Vec<Handler>,
    _pin: Option<Pin>,
    _signals: Option<MutexGuard<'static, ()>>,
}

const TIMEOUT: libc::timespec = libc::timespec {
    tv_sec: 1,
    tv_nsec: 0,
};

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
                    if task::futex_wait(to_master, prev, Some(&TIMEOUT)) != 0
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

fn prepare(p: &Params) -> Result<Prepared, BenchError> {
    let mech = match p.get("mechanism") {
        "pipe" => Mech::Pipe,
        "unix" => Mech::Unix,
        "eventfd" => Mech::Eventfd,
        "futex" => Mech::Futex,
        "signal" => Mech::Signal,
        _ => Mech::Yield,
    };
    let placement = p.get("placement");
    if mech == Mech::Yield && placement != "same-cpu" {
        return Err(BenchError::Skip(
            "yield hands the CPU over only when both tasks share one: use placement=same-cpu"
                .into(),
        ));
    }
    let vector = match p.get("fpu") {
        "avx" => task::widest_vector()
            .ok_or_else(|| BenchError::Skip("this CPU has no AVX".into()))?,
        _ => Vector::Clean,
    };
    let (master_cpus, slave_cpus) = place(placement)?;
    let thread = p.get("kind") == "thread";

    let mem =
        Arc::new(SharedMem::new(4096).map_err(|e| BenchError::os("mmap (shared)", e))?);
    let os = |what: &'static str| move |e| BenchError::os(what, e);
    // Master's (inp, out) and slave's (inp, out).
    let (m_in, m_out, s_in, s_out): (Option<OwnedFd>, Option<OwnedFd>, RawFd, RawFd);
    let mut slave_fds: Vec<OwnedFd> = Vec::new();
    match mech {
        Mech::Pipe => {
            let (r1, w1) = task::pipe().map_err(os("pipe"))?;
            let (r2, w2) = task::pipe().map_err(os("pipe"))?;
            (s_in, s_out) = (r1.as_raw_fd(), w2.as_raw_fd());
            (m_in, m_out) = (Some(r2), Some(w1));
            slave_fds.extend([r1, w2]);
        }
        Mech::Unix => {
            let (a, b) = task::socketpair().map_err(os("socketpair"))?;
            let a2 = a.try_clone().map_err(os("dup"))?;
            (s_in, s_out) = (b.as_raw_fd(), b.as_raw_fd());
            (m_in, m_out) = (Some(a), Some(a2));
            slave_fds.push(b);
        }
        Mech::Eventfd => {
            let to_slave =
                crate::os::sys::eventfd(0, libc::EFD_CLOEXEC).map_err(os("eventfd"))?;
            let to_master =
                crate::os::sys::eventfd(0, libc::EFD_CLOEXEC).map_err(os("eventfd"))?;
            let (ts2, tm2) = (
                to_slave.try_clone().map_err(os("dup"))?,
                to_master.try_clone().map_err(os("dup"))?,
            );
            (s_in, s_out) = (ts2.as_raw_fd(), tm2.as_raw_fd());
            (m_in, m_out) = (Some(to_master), Some(to_slave));
            slave_fds.extend([ts2, tm2]);
        }
        _ => {
            (s_in, s_out) = (-1, -1);
            (m_in, m_out) = (None, None);
        }
    }

    // Signals: both handlers installed before the slave exists; the master blocks
    // SIGUSR2 (delivered only inside sigsuspend), the slave SIGUSR1.
    let mut handlers = Vec::new();
    let mut blocked = None;
    let signals = (mech == Mech::Signal).then(task::signals_lock);
    if mech == Mech::Signal {
        handlers.push(Handler::counting(libc::SIGUSR1).map_err(os("sigaction"))?);
        handlers.push(Handler::counting(libc::SIGUSR2).map_err(os("sigaction"))?);
        if !thread {
            handlers.push(Handler::counting(libc::SIGCHLD).map_err(os("sigaction"))?);
        }
        blocked = Some(
            Blocked::block(&SigSet::empty().with(libc::SIGUSR2))
                .map_err(os("sigprocmask"))?,
        );
    }
    let master_mask = SigSet::current()
        .without(libc::SIGUSR2)
        .without(libc::SIGCHLD);
    let pin = match master_cpus {
        Some(c) => Some(Pin::to(c).map_err(os("pin"))?),
        None => None,
    };
    let ends = SlaveEnds {
        mech,
        vector,
        inp: s_in,
        out: s_out,
        master_pid: std::process::id() as libc::pid_t,
        master_tid: task::gettid(),
        wait_mask: SigSet::current().without(libc::SIGUSR1),
        signals_before: task::delivered(libc::SIGUSR1),
    };
    let usr1 = SigSet::empty().with(libc::SIGUSR1);
    let (peer, slave_tid) = if thread {
        let (mem2, cpus) = (mem.clone(), slave_cpus.clone());
        let (tx, rx) = std::sync::mpsc::channel();
        let h = std::thread::Builder::new()
            .name("syscost-pingpong".into())
            .spawn(move || {
                task::block_forever(&usr1);
                let _ = tx.send(task::gettid());
                if affinity::set_cpus(&cpus).is_err() {
                    return 4;
                }
                let code = slave(ends, &mem2);
                drop(slave_fds);
                code
            })
            .map_err(os("thread creation"))?;
        let tid = rx
            .recv()
            .map_err(|_| BenchError::Failed("the other thread did not start".into()))?;
        (Peer::Thread(h), tid)
    } else {
        let mem_ref = &*mem;
        let cpus = &slave_cpus[..];
        let (mi, mo) = (
            m_in.as_ref().map_or(-1, |f| f.as_raw_fd()),
            m_out.as_ref().map_or(-1, |f| f.as_raw_fd()),
        );
        // SAFETY: the slave blocks signals, closes the master's ends, sets its CPUs and
        // runs `slave`: system calls on its own descriptors and futex words in shared
        // memory, no allocation or lock; the master's objects it inherits are not
        // touched.
        #[allow(unsafe_code)]
        let child = unsafe {
            task::fork(|| {
                task::block_forever(&usr1);
                // The master's ends are not the child's: end of file must reach it.
                for fd in [mi, mo] {
                    if fd >= 0 {
                        task::close_in_child(fd);
                    }
                }
                if affinity::set_cpus(cpus).is_err() {
                    return 4;
                }
                slave(ends, mem_ref)
            })
        }
        .map_err(os("fork"))?;
        drop(slave_fds);
        let pid = child.pid();
        (Peer::Process(child), pid)
    };
    let yield_report = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
    let pp = PingPong {
        mech,
        mem,
        inp: m_in,
        out: m_out,
        peer: Some(peer),
        slave_tid,
        seq: 0,
        signals_seen: task::delivered(libc::SIGUSR2),
        wait_mask: master_mask,
        master_yields: 0,
        trips: 0,
        yield_report: yield_report.clone(),
        _handlers: handlers,
        _blocked: blocked,
        _pin: pin,
        _signals: signals,
    };
    let plan = Plan {
        expect: Expect {
            switches: true,
            faults: false,
            // On one CPU the woken task preempts the waker: part of the operation.
            preemption: placement != "cross-cpu",
        },
        ..Plan::default()
    };
    let yields = mech == Mech::Yield;
    Ok(Prepared::new(Box::new(pp))
        .op("round trip")
        .plan(plan)
        .after(Box::new(move |_, m| {
            let rt = m.analysis.figure();
            let mut f = vec![Fact::new(
                "one_way_ns",
                rt / 2.0,
                "ns",
                "half the round trip: the estimated switch, mechanism included (as manea1999 §4)",
            )];
            f.push(Fact::new(
                "master_vol_per_rt",
                m.analysis.accounting.vol_switches,
                "count",
                "voluntary switches of the measuring task per round trip",
            ));
            if yields {
                let (n, trips) = (
                    yield_report[0].load(Ordering::Acquire),
                    yield_report[1].load(Ordering::Acquire),
                );
                f.push(Fact::new(
                    "yields_per_rt",
                    n as f64 / trips.max(1) as f64,
                    "count",
                    "sched_yield calls by both tasks per round trip (2 when every yield hands over)",
                ));
                f.push(Fact::new(
                    "master_invol_per_rt",
                    m.analysis.accounting.invol_switches,
                    "count",
                    "involuntary switches of the measuring task per round trip",
                ));
            }
            Ok(f)
        })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::params;

    fn make(
        mech: &str,
        placement: &str,
        kind: &str,
        fpu: &str,
    ) -> Result<Prepared, BenchError> {
        let mut p = params::expand("ctx.pingpong", PARAMS, &[])
            .unwrap()
            .remove(0);
        for (k, v) in [
            ("mechanism", mech),
            ("placement", placement),
            ("kind", kind),
            ("fpu", fpu),
        ] {
            p.0.iter_mut().find(|(n, _)| *n == k).unwrap().1 = v.to_string();
        }
        prepare(&Params(p.0))
    }

    #[test]
    fn every_mechanism_round_trips_and_stops() {
        // This thread's children, and this process's threads named like the slave.
        let children = || -> Vec<String> {
            std::fs::read_to_string("/proc/thread-self/children")
                .unwrap()
                .split_whitespace()
                .map(str::to_string)
                .collect()
        };
        let slaves = || -> Vec<String> {
            std::fs::read_dir("/proc/self/task")
                .unwrap()
                .flatten()
                .filter(|t| {
                    std::fs::read_to_string(t.path().join("comm"))
                        .is_ok_and(|c| c.trim() == "syscost-pingpon")
                })
                .map(|t| t.file_name().to_string_lossy().into_owned())
                .collect()
        };
        for mech in MECHANISMS {
            for kind in ["process", "thread"] {
                let (kids_before, slaves_before) = (children(), slaves());
                let mut pp = make(mech, "same-cpu", kind, "clean").unwrap();
                pp.body
                    .run(50)
                    .unwrap_or_else(|e| panic!("{mech} {kind}: {e}"));
                // The other task exists while the body lives...
                let new: Vec<String> = match kind {
                    "process" => children(),
                    _ => slaves(),
                }
                .into_iter()
                .filter(|t| !kids_before.contains(t) && !slaves_before.contains(t))
                .collect();
                assert_eq!(new.len(), 1, "{mech} {kind}: the other task {new:?}");
                drop(pp);
                // ...and is gone, reaped or joined, once it is dropped.
                let task = &new[0];
                match kind {
                    "process" => {
                        assert!(!children().contains(task), "{mech}: child {task} left");
                        let pid: libc::pid_t = task.parse().unwrap();
                        assert_eq!(
                            crate::os::signal::wait_state(
                                pid,
                                libc::WEXITED | libc::WNOHANG
                            ),
                            -1,
                            "{mech}: child {task} not reaped"
                        );
                    }
                    _ => assert!(
                        !std::path::Path::new(&format!("/proc/self/task/{task}"))
                            .exists(),
                        "{mech}: thread {task} not joined"
                    ),
                }
            }
        }
    }

    #[test]
    fn avx_dirtying_slaves_round_trip() {
        if task::widest_vector().is_none() {
            return;
        }
        for mech in ["pipe", "futex", "signal"] {
            let mut pp = make(mech, "free", "process", "avx").unwrap();
            pp.body.run(20).unwrap();
        }
    }

    #[test]
    fn yield_off_one_cpu_is_skipped_with_a_reason() {
        let e = make("yield", "cross-cpu", "process", "clean")
            .err()
            .unwrap();
        assert!(matches!(e, BenchError::Skip(m) if m.contains("same-cpu")));
    }
}
