//! `ctx.pingpong`: two tasks hand control back and forth through one mechanism, and the
//! harness times the round trip. Half of it estimates one switch with the mechanism's
//! own cost included, as the 1999 paper did for signals and pipes.
//!
//! The measuring thread is the master; the slave is a forked child or a thread. The
//! slave's blocking call is made as one raw system call, so with `fpu=avx` it enters
//! the kernel with its vector registers dirty and every switch must save and restore
//! them.

//!
//! Submodules: `slave` (the other task's loop, async-signal-safe) and `master` (the
//! timed round trip and the end of the other task).

mod master;
mod slave;

use super::place;
use crate::bench::facts::Figure::{PipeRtt, SignalRtt, SwitchCross, SwitchSame};
use crate::bench::facts::*;

const PIPE_SAME: &str = "mechanism=pipe placement=same-cpu kind=process fpu=clean";
use crate::bench::Fact;
use crate::bench::{After, Kind, OrOs, ParamSpec, Params, Prepared, Simple};
use crate::error::BenchError;
use crate::os::affinity::{self, Pin};
use crate::os::task::{self, Blocked, ExitWatch, Handler, SharedMem, SigSet, Vector};
use master::{Peer, PingPong};
use slave::{slave, SlaveEnds};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, MutexGuard};

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
    facts: Facts {
        quotes: &[
            Quote {
                show: Show::Half,
                ..quote(SwitchSame, 0, PIPE_SAME, "half a pipe ping-pong")
            },
            Quote {
                show: Show::Half,
                ..quote(
                    SwitchCross,
                    0,
                    "mechanism=pipe placement=cross-cpu kind=process fpu=clean",
                    "half a pipe ping-pong",
                )
            },
            quote(PipeRtt, 1, PIPE_SAME, "pipe ping-pong, same CPU"),
            quote(
                SignalRtt,
                0,
                "mechanism=signal placement=same-cpu kind=process fpu=clean",
                "signal ping-pong, same CPU",
            ),
        ],
        enters: Enters::Fixed(Fixed {
            path: Libc,
            unless: &[("mechanism", "futex", Generic), ("mechanism", "signal", Generic)],
            calls: "the measuring task's write and read, or sched_yield; futex: FUTEX_WAKE \
                and FUTEX_WAIT; signal: tgkill, then sigsuspend (libc); the other task \
                blocks through its own syscall instruction",
        }),
        serial: Some("it already uses two CPUs or a ring of tasks"),
        partner: true,
        switches: true,
        tables: Tables::AgainstPipe,
        ..SYSCALL
    },
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

impl Mech {
    fn parse(word: &str) -> Mech {
        match word {
            "pipe" => Mech::Pipe,
            "unix" => Mech::Unix,
            "eventfd" => Mech::Eventfd,
            "futex" => Mech::Futex,
            "signal" => Mech::Signal,
            _ => Mech::Yield,
        }
    }
}

// Shared words: the round-trip sequence each way, the stop flag, and yield counts.
const TO_SLAVE: usize = 0;
const TO_MASTER: usize = 1;
const STOP: usize = 2;
const ENDED: usize = 3;
const SLAVE_YIELDS: usize = 4; // a 64-bit slot index (words 8 and 9)

/// The descriptors of a ping-pong: the master's ends (kept in [`PingPong`]) and the
/// slave's (raw numbers for its loop, and the owners, dropped once the slave has its
/// copies).
struct Channels {
    master_in: Option<OwnedFd>,
    master_out: Option<OwnedFd>,
    slave_in: RawFd,
    slave_out: RawFd,
    slave_fds: Vec<OwnedFd>,
}

impl Channels {
    /// A pipe each way, a socket pair, an eventfd each way, or nothing (the futex,
    /// signal and yield mechanisms need only shared memory).
    fn open(mech: Mech) -> Result<Channels, BenchError> {
        let os = |what: &'static str| move |e| BenchError::os(what, e);
        Ok(match mech {
            Mech::Pipe => {
                let (r1, w1) = task::pipe().map_err(os("pipe"))?;
                let (r2, w2) = task::pipe().map_err(os("pipe"))?;
                Channels {
                    slave_in: r1.as_raw_fd(),
                    slave_out: w2.as_raw_fd(),
                    master_in: Some(r2),
                    master_out: Some(w1),
                    slave_fds: vec![r1, w2],
                }
            }
            Mech::Unix => {
                let (a, b) = task::socketpair().map_err(os("socketpair"))?;
                let a2 = a.try_clone().map_err(os("dup"))?;
                Channels {
                    slave_in: b.as_raw_fd(),
                    slave_out: b.as_raw_fd(),
                    master_in: Some(a),
                    master_out: Some(a2),
                    slave_fds: vec![b],
                }
            }
            Mech::Eventfd => {
                let eventfd = || {
                    crate::os::sys::eventfd(0, libc::EFD_CLOEXEC).map_err(os("eventfd"))
                };
                let (to_slave, to_master) = (eventfd()?, eventfd()?);
                let (ts2, tm2) = (
                    to_slave.try_clone().map_err(os("dup"))?,
                    to_master.try_clone().map_err(os("dup"))?,
                );
                Channels {
                    slave_in: ts2.as_raw_fd(),
                    slave_out: tm2.as_raw_fd(),
                    master_in: Some(to_master),
                    master_out: Some(to_slave),
                    slave_fds: vec![ts2, tm2],
                }
            }
            _ => Channels {
                slave_in: -1,
                slave_out: -1,
                master_in: None,
                master_out: None,
                slave_fds: Vec::new(),
            },
        })
    }
}

/// The signal mechanism's setup: both counting handlers installed before the slave
/// exists, SIGUSR2 blocked in the master (delivered only inside sigsuspend), and the
/// process-wide signal lock held for the ping-pong's life.
struct Signals {
    handlers: Vec<Handler>,
    blocked: Option<Blocked>,
    lock: Option<MutexGuard<'static, ()>>,
}

impl Signals {
    fn install(mech: Mech, thread: bool) -> Result<Signals, BenchError> {
        if mech != Mech::Signal {
            return Ok(Signals {
                handlers: Vec::new(),
                blocked: None,
                lock: None,
            });
        }
        let os = |what: &'static str| move |e| BenchError::os(what, e);
        let lock = Some(task::signals_lock());
        let mut handlers = vec![
            Handler::counting(libc::SIGUSR1).map_err(os("sigaction"))?,
            Handler::counting(libc::SIGUSR2).map_err(os("sigaction"))?,
        ];
        if !thread {
            handlers.push(Handler::counting(libc::SIGCHLD).map_err(os("sigaction"))?);
        }
        let blocked = Some(
            Blocked::block(&SigSet::empty().with(libc::SIGUSR2))
                .map_err(os("sigprocmask"))?,
        );
        Ok(Signals {
            handlers,
            blocked,
            lock,
        })
    }
}

/// Starts the slave as a thread of this process; returns it and its thread id.
fn start_thread(
    ends: SlaveEnds,
    mem: Arc<SharedMem>,
    cpus: Vec<usize>,
    slave_fds: Vec<OwnedFd>,
) -> Result<(Peer, libc::pid_t), BenchError> {
    let usr1 = SigSet::empty().with(libc::SIGUSR1);
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::Builder::new()
        .name("syscost-pingpong".into())
        .spawn(move || {
            task::block_forever(&usr1);
            let _ = tx.send(task::gettid());
            if affinity::set_cpus(&cpus).is_err() {
                return task::PARTNER_CPUS_FAILED;
            }
            let code = slave(ends, &mem);
            drop(slave_fds);
            master::mark_ended(&mem);
            code
        })
        .or_os("thread creation")?;
    let tid = rx
        .recv()
        .map_err(|_| BenchError::Failed("the other thread did not start".into()))?;
    Ok((Peer::Thread(h), tid))
}

/// Forks the slave; returns it and its pid. The slave's descriptors are closed here
/// once the child has its copies.
fn start_process(
    ends: SlaveEnds,
    mem: &SharedMem,
    cpus: &[usize],
    ch: &mut Channels,
) -> Result<(Peer, libc::pid_t), BenchError> {
    let usr1 = SigSet::empty().with(libc::SIGUSR1);
    let (mi, mo) = (
        ch.master_in.as_ref().map_or(-1, |f| f.as_raw_fd()),
        ch.master_out.as_ref().map_or(-1, |f| f.as_raw_fd()),
    );
    // SAFETY: the slave blocks signals, closes the master's ends, sets its CPUs and
    // runs `slave`: system calls on its own descriptors and futex words in shared
    // memory, no allocation or lock; the master's objects it inherits are not touched.
    // SIGUSR1 is blocked first, before anything else the child does.
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
                return task::PARTNER_CPUS_FAILED;
            }
            slave(ends, mem)
        })
    }
    .or_os("fork")?;
    ch.slave_fds.clear();
    let pid = child.pid();
    Ok((Peer::Process(child), pid))
}

fn prepare(p: &Params) -> Result<Prepared, BenchError> {
    let mech = Mech::parse(p.get("mechanism"));
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

    let mem = Arc::new(SharedMem::new(4096).or_os("mmap (shared)")?);
    let mut ch = Channels::open(mech)?;
    let signals = Signals::install(mech, thread)?;
    let master_mask = SigSet::current()
        .without(libc::SIGUSR2)
        .without(libc::SIGCHLD);
    let pin = master_cpus.map(Pin::to).transpose().or_os("pin")?;
    let ends = SlaveEnds {
        mech,
        vector,
        inp: ch.slave_in,
        out: ch.slave_out,
        master_pid: std::process::id() as libc::pid_t,
        master_tid: task::gettid(),
        wait_mask: SigSet::current().without(libc::SIGUSR1),
        signals_before: task::delivered(libc::SIGUSR1),
    };
    let (peer, slave_tid) = if thread {
        let fds = std::mem::take(&mut ch.slave_fds);
        start_thread(ends, mem.clone(), slave_cpus, fds)?
    } else {
        start_process(ends, &mem, &slave_cpus, &mut ch)?
    };
    // A futex word, unlike a pipe, says nothing when a forked other task dies: a
    // watching process marks it (a thread other task marks its own end).
    let watch = match &peer {
        Peer::Process(c) if mech == Mech::Futex => {
            let shared: &SharedMem = &mem;
            // SAFETY: the watcher stores to shared words and wakes a futex: atomics
            // and a system call.
            #[allow(unsafe_code)]
            unsafe { ExitWatch::start(c.pid(), || master::mark_ended(shared)) }.ok()
        }
        _ => None,
    };
    let timeout = match (&peer, &watch) {
        (Peer::Process(_), None) => Some(master::TIMEOUT),
        _ => None,
    };
    let yield_report = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
    let pp = PingPong {
        timeout,
        _watch: watch,
        mech,
        mem,
        inp: ch.master_in,
        out: ch.master_out,
        peer: Some(peer),
        slave_tid,
        seq: 0,
        signals_seen: task::delivered(libc::SIGUSR2),
        wait_mask: master_mask,
        master_yields: 0,
        trips: 0,
        yield_report: yield_report.clone(),
        _handlers: signals.handlers,
        _blocked: signals.blocked,
        _pin: pin,
        _signals: signals.lock,
    };
    Ok(Prepared::new(Box::new(pp))
        .op("round trip")
        .plan(crate::bench::blocking(placement != "cross-cpu"))
        .after(facts(mech == Mech::Yield, yield_report)))
}

/// The after step: the one-way estimate, the master's switches, and for yield the
/// yields per round trip that `yield_report` holds when the body has ended.
fn facts(yields: bool, yield_report: Arc<[AtomicU64; 2]>) -> After {
    Box::new(move |_, m| {
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn make(
        mech: &str,
        placement: &str,
        kind: &str,
        fpu: &str,
    ) -> Result<Prepared, BenchError> {
        let set = [
            ("mechanism", mech),
            ("placement", placement),
            ("kind", kind),
            ("fpu", fpu),
        ];
        prepare(&crate::bench::testing::params_of(&PINGPONG, &set))
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
                // (a forked futex partner has a watcher beside it).
                let tasks = if (*mech, kind) == ("futex", "process") {
                    2
                } else {
                    1
                };
                assert_eq!(new.len(), tasks, "{mech} {kind}: the other task {new:?}");
                drop(pp);
                // ...and is gone, reaped or joined, once it is dropped.
                for task in &new {
                    match kind {
                        "process" => {
                            assert!(
                                !children().contains(task),
                                "{mech}: child {task} left"
                            );
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
    }

    #[test]
    fn a_forked_futex_partner_that_dies_ends_the_round_trip_and_its_watch() {
        let kids = || std::fs::read_to_string("/proc/thread-self/children").unwrap();
        let before = kids();
        let mut pp = make("futex", "same-cpu", "process", "clean").unwrap();
        pp.body.run(10).unwrap();
        let pid: libc::pid_t = kids()
            .split_whitespace()
            .find(|k| !before.split_whitespace().any(|b| b == *k))
            .unwrap()
            .parse()
            .unwrap();
        let mine = kids().split_whitespace().count();
        assert_eq!(
            mine,
            before.split_whitespace().count() + 2,
            "partner and watcher"
        );
        // The child this test just made, not yet reaped.
        assert_eq!(task::tgkill(pid, pid, libc::SIGKILL), 0);
        // The master waits on its futex word with no time limit: the watcher wakes it.
        let e = pp.body.run(u64::MAX).unwrap_err().to_string();
        assert!(e.contains("other task") && e.contains("signal"), "{e}");
        drop(pp);
        assert_eq!(kids(), before, "partner and watcher reaped");
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
