//! The futex operations of `perf bench futex`: `hash`, `wake`, `wake-parallel`,
//! `requeue` and `lock-pi`, each with perf's parameters where it has them (`waiters=`
//! for its `-t`, `nwakes=` for `-w`, `wakers=` for wake-parallel's `-w`, `threads=` for
//! lock-pi's `-t`), and `placement` naming where the other threads run as
//! `ctx.pingpong` does.

use super::pool::Pool;
use crate::bench::ctx::{place_pinned, placement_among};
use crate::bench::facts::*;
use crate::bench::{body, check, Kind, OrOs, ParamSpec, Params, Prepared, Simple};
use crate::error::BenchError;
use crate::harness::{Body, Plan};
use crate::os::affinity::Pin;
use crate::os::peers::{
    futex_cmp_requeue, futex_lock_pi, futex_unlock_pi, futex_wait, futex_wake,
};
use crate::os::task;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

const PLACE: ParamSpec = placement_among(
    "cross-cpu",
    "the waiters (contenders) on the measuring thread's CPU, or on another CPU, or (free) spread over every CPU in turn, the measuring thread unpinned: perf's placement, which puts thread i on CPU i mod N",
    &["same-cpu", "cross-cpu", "free"],
);

const WAITERS: ParamSpec = ParamSpec {
    name: "waiters",
    default: "2",
    about: "threads blocked on the futex (perf's -t; its default is one per CPU)",
    kind: Kind::Int { min: 1, max: 256 },
};

const REST: ParamSpec = ParamSpec {
    name: "rest_ms",
    default: "0",
    about: "ms the measuring thread sleeps, untimed, before each operation, the waiters blocked all the while: perf sleeps 100 ms, so its CPUs are idle and its caches cold when it wakes them; 0: the warm operation, straight after the waiters blocked",
    kind: Kind::Int { min: 0, max: 1000 },
};

/// Sleeps `rest` (untimed, in `reset`) when it is not zero.
fn rest(rest: std::time::Duration) {
    if !rest.is_zero() {
        std::thread::sleep(rest);
    }
}

fn rest_of(p: &Params) -> std::time::Duration {
    std::time::Duration::from_millis(p.int("rest_ms") as u64)
}

static HASH_PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "futexes",
    default: "1024",
    about: "futex words the loop cycles through (perf's -f; its default 1024)",
    kind: Kind::Int {
        min: 1,
        max: 1 << 20,
    },
}];

/// `sync.futex.hash`.
pub const HASH: Simple = Simple {
    name: "sync.futex.hash",
    facts: NAMED.on(Generic, "FUTEX_WAIT"),
    about: "FUTEX_WAIT|PRIVATE on one of `futexes` words with a value it does not hold: the hash-bucket lookup, EAGAIN at once (perf bench futex hash; its threads are copies=N copies_as=thread)",
    origin: "perf bench futex hash",
    params: HASH_PARAMS,
    prepare: |p| {
        let words: Vec<AtomicU32> = (0..p.int("futexes")).map(|_| AtomicU32::new(0)).collect();
        let mut i = 0usize;
        Ok(Prepared::new(body(move || {
            let r = futex_wait(&words[i], 1234);
            i += 1;
            if i == words.len() {
                i = 0;
            }
            if r != -1 || task::errno() != libc::EAGAIN {
                return Err(BenchError::Failed(format!(
                    "FUTEX_WAIT on a mismatched word returned {r}, not EAGAIN"
                )));
            }
            Ok(())
        }))
        .op("FUTEX_WAIT (EAGAIN)"))
    },
};

static WAKE_PARAMS: &[ParamSpec] = &[
    WAITERS,
    ParamSpec {
        name: "nwakes",
        default: "1",
        about: "waiters each FUTEX_WAKE wakes (perf's -w; its default 1)",
        kind: Kind::Int { min: 1, max: 256 },
    },
    PLACE,
    REST,
];

/// `sync.futex.wake`.
pub const WAKE: Simple = Simple {
    name: "sync.futex.wake",
    facts: NAMED.on(Generic, "FUTEX_WAKE"),
    about: "waking all `waiters` threads blocked in FUTEX_WAIT, `nwakes` per FUTEX_WAKE call, until every one is woken: the waker's time (perf bench futex wake); timed one at a time, the waiters re-blocked untimed",
    origin: "perf bench futex wake",
    params: WAKE_PARAMS,
    prepare: |p| waking(p, "nwakes", false),
};

/// `waiters` threads blocked on a word, placed as `placement` says, and a body that
/// wakes (or, `requeue`, moves) all of them, `per_call` (a parameter's name) per call.
fn waking(p: &Params, per_call: &str, requeue: bool) -> Result<Prepared, BenchError> {
    let (pin, cpus) = place_pinned(p.get("placement"))?;
    let pool = Pool::new(p.int("waiters") as usize, &cpus)?;
    Ok(one_at_a_time(Box::new(Waking {
        pool,
        nwakes: p.int(per_call) as i32,
        requeue,
        rest: rest_of(p),
        _pin: pin,
    }))
    .op(if requeue {
        "requeue of all waiters"
    } else {
        "wake of all waiters"
    }))
}

static REQUEUE_PARAMS: &[ParamSpec] = &[
    WAITERS,
    ParamSpec {
        name: "nrequeue",
        default: "1",
        about: "waiters each FUTEX_CMP_REQUEUE moves (perf's -q; its default 1)",
        kind: Kind::Int { min: 1, max: 256 },
    },
    PLACE,
    REST,
];

/// `sync.futex.requeue`.
pub const REQUEUE: Simple = Simple {
    name: "sync.futex.requeue",
    facts: NAMED.on(Generic, "FUTEX_CMP_REQUEUE"),
    about: "moving all `waiters` threads blocked on one futex word to another with FUTEX_CMP_REQUEUE, `nrequeue` per call, none woken (perf bench futex requeue); timed one at a time, the waiters woken and re-blocked untimed",
    origin: "perf bench futex requeue",
    params: REQUEUE_PARAMS,
    prepare: |p| waking(p, "nrequeue", true),
};

fn one_at_a_time(b: Box<dyn Body>) -> Prepared {
    Prepared::new(b).plan(Plan {
        fixed_batch: Some(1),
        ..Plan::default()
    })
}

/// Wakes (or requeues) every waiter of the pool, `nwakes` per call.
struct Waking {
    pool: Pool,
    nwakes: i32,
    requeue: bool,
    rest: std::time::Duration,
    _pin: Option<Pin>,
}

/// More calls than this for one operation means waiters are missing: a failure.
const MAX_CALLS: u64 = 1 << 20;

impl Body for Waking {
    fn reset(&mut self, _iters: u64) -> Result<(), BenchError> {
        self.pool.arm()?;
        rest(self.rest);
        Ok(())
    }
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for _ in 0..iters {
            let w = &self.pool.words;
            let (mut done, mut calls) = (0usize, 0u64);
            while done < self.pool.len() {
                let r = if self.requeue {
                    futex_cmp_requeue(&w.f1, &w.f2, 0, self.nwakes, 0)
                } else {
                    futex_wake(&w.f1, self.nwakes)
                };
                check(
                    r,
                    if self.requeue {
                        "FUTEX_CMP_REQUEUE"
                    } else {
                        "FUTEX_WAKE"
                    },
                )?;
                done += r as usize;
                calls += 1;
                if calls > MAX_CALLS {
                    return Err(BenchError::Failed(format!(
                        "only {done} of {} waiters found after {calls} calls",
                        self.pool.len()
                    )));
                }
            }
        }
        Ok(())
    }
}

static PARALLEL_PARAMS: &[ParamSpec] = &[
    WAITERS,
    ParamSpec {
        name: "wakers",
        default: "2",
        about: "threads waking in parallel, the measuring one included, each one FUTEX_WAKE of its share (perf's -w)",
        kind: Kind::Int { min: 1, max: 64 },
    },
    PLACE,
    REST,
];

/// `sync.futex.wake_parallel`.
pub const WAKE_PARALLEL: Simple = Simple {
    name: "sync.futex.wake_parallel",
    facts: NAMED.on(Generic, "FUTEX_WAKE"),
    about: "one FUTEX_WAKE of the measuring thread's share (waiters/wakers) of `waiters` threads blocked on one futex, as `wakers`-1 other threads, released just before, each wake theirs: one waker's call, the per-thread latency perf bench futex wake-parallel averages; timed one at a time",
    origin: "perf bench futex wake-parallel",
    params: PARALLEL_PARAMS,
    prepare: prepare_parallel,
};

/// The other wakers block on `go` (a futex word) until `reset` moves it, then make
/// their FUTEX_WAKE and report on `done`.
struct Parallel {
    pool: Pool,
    go: Arc<AtomicU32>,
    done: Arc<AtomicU32>,
    stop: Arc<AtomicBool>,
    helpers: Vec<JoinHandle<()>>,
    share: i32,
    /// Whether the other wakers were released and have yet to be waited for.
    released: bool,
    rest: std::time::Duration,
    _pin: Option<Pin>,
}

fn prepare_parallel(p: &Params) -> Result<Prepared, BenchError> {
    let waiters = p.int("waiters") as usize;
    let wakers = p.int("wakers") as usize;
    let (pin, cpus) = place_pinned(p.get("placement"))?;
    let pool = Pool::new(waiters, &cpus)?;
    if !waiters.is_multiple_of(wakers) {
        return Err(BenchError::Skip(format!(
            "waiters={waiters} is not a multiple of wakers={wakers}: each waker wakes an equal share (perf requires it too)"
        )));
    }
    let share = (waiters / wakers) as i32;
    let (go, done) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
    let stop = Arc::new(AtomicBool::new(false));
    let mut helpers = Vec::new();
    for i in 1..wakers {
        let (go, done, stop) = (go.clone(), done.clone(), stop.clone());
        let words = pool.words.clone();
        let cpu = (!cpus.is_empty()).then(|| cpus[i % cpus.len()]);
        let t = std::thread::Builder::new()
            .name("syscost-waker".into())
            .spawn(move || {
                let _pin = cpu.map(Pin::to);
                let mut seen = 0;
                while !stop.load(Ordering::Acquire) {
                    let g = go.load(Ordering::Acquire);
                    if g == seen {
                        futex_wait(&go, seen);
                        continue;
                    }
                    seen = g;
                    futex_wake(&words.f1, share);
                    done.fetch_add(1, Ordering::AcqRel);
                }
            })
            .or_os("spawn a waker thread")?;
        helpers.push(t);
    }
    let b = Parallel {
        pool,
        go,
        done,
        stop,
        helpers,
        share,
        released: false,
        rest: rest_of(p),
        _pin: pin,
    };
    Ok(one_at_a_time(Box::new(b)).op("one waker's FUTEX_WAKE of its share"))
}

impl Body for Parallel {
    /// Untimed: the other wakers' calls of the last operation ended, every waiter
    /// blocked again, and the other wakers released for this one.
    fn reset(&mut self, _iters: u64) -> Result<(), BenchError> {
        let helpers = self.helpers.len() as u32;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while self.released && self.done.load(Ordering::Acquire) < helpers {
            if std::time::Instant::now() > deadline {
                return Err(BenchError::Failed(
                    "the other waker threads did not return within 5 s".into(),
                ));
            }
            std::thread::yield_now();
        }
        self.done.store(0, Ordering::Release);
        self.pool.arm()?;
        rest(self.rest);
        self.go.fetch_add(1, Ordering::AcqRel);
        futex_wake(&self.go, i32::MAX);
        self.released = true;
        Ok(())
    }
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        if iters != 1 {
            return Err(BenchError::Failed(
                "wake-parallel batches hold one wake".into(),
            ));
        }
        let woken = futex_wake(&self.pool.words.f1, self.share);
        check(woken, "FUTEX_WAKE")?;
        if woken == 0 {
            return Err(BenchError::Failed(
                "FUTEX_WAKE found no waiter: the other wakers took them all".into(),
            ));
        }
        Ok(())
    }
}

impl Drop for Parallel {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // Moves the word they block on: each sees the stop.
        self.go.fetch_add(1, Ordering::AcqRel);
        futex_wake(&self.go, i32::MAX);
        for t in self.helpers.drain(..) {
            let _ = t.join();
        }
    }
}

static LOCK_PI_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "threads",
        default: "1,2",
        about: "threads taking the one lock, the measuring one included: 1 uncontended, 2 with a contender (perf's -t)",
        kind: Kind::Int { min: 1, max: 64 },
    },
    ParamSpec {
        name: "hold_us",
        default: "0",
        about: "µs each thread sleeps (usleep) holding the lock; perf's workers usleep(1)",
        kind: Kind::Int { min: 0, max: 1000 },
    },
    PLACE,
];

/// Whether the PI lock is held across a sleep (`hold_us` above 0): a CPU idles.
fn held(p: &Params) -> bool {
    p.0.iter()
        .any(|(n, v)| *n == "hold_us" && v.parse::<u64>().is_ok_and(|us| us > 0))
}

/// `sync.futex.lock_pi`.
pub const LOCK_PI: Simple = Simple {
    name: "sync.futex.lock_pi",
    facts: Facts {
        idle: held,
        ..NAMED.on(
            Generic,
            "FUTEX_LOCK_PI and FUTEX_UNLOCK_PI (hold_us: and nanosleep, libc)",
        )
    },
    about: "FUTEX_LOCK_PI then FUTEX_UNLOCK_PI of one private word (both in the kernel, as perf's workers make them), with threads-1 contenders doing the same (perf bench futex lock-pi)",
    origin: "perf bench futex lock-pi",
    params: LOCK_PI_PARAMS,
    prepare: prepare_lock_pi,
};

fn prepare_lock_pi(p: &Params) -> Result<Prepared, BenchError> {
    let threads = p.int("threads") as usize;
    let hold = p.int("hold_us") as u32;
    let (pin, cpus) = if threads > 1 {
        place_pinned(p.get("placement"))?
    } else {
        (None, Vec::new())
    };
    let word = Arc::new(AtomicU32::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut others = Vec::new();
    for i in 1..threads {
        let (word, stop) = (word.clone(), stop.clone());
        let cpu = (!cpus.is_empty()).then(|| cpus[i % cpus.len()]);
        let t = std::thread::Builder::new()
            .name("syscost-pi".into())
            .spawn(move || {
                let _pin = cpu.map(Pin::to);
                while !stop.load(Ordering::Acquire) {
                    if futex_lock_pi(&word) != 0 {
                        continue;
                    }
                    if hold > 0 {
                        std::thread::sleep(std::time::Duration::from_micros(hold.into()));
                    }
                    futex_unlock_pi(&word);
                }
            })
            .or_os("spawn a contender thread")?;
        others.push(t);
    }
    let b = LockPi {
        word,
        stop,
        others,
        hold,
        _pin: pin,
    };
    // With a contender the lock is handed over in the kernel and the loser sleeps; a
    // hold sleeps too: those switches are the operation's.
    Ok(Prepared::new(Box::new(b))
        .op("lock_pi+unlock_pi")
        .plan(crate::bench::switching(threads > 1 || hold > 0)))
}

struct LockPi {
    word: Arc<AtomicU32>,
    stop: Arc<AtomicBool>,
    others: Vec<JoinHandle<()>>,
    hold: u32,
    _pin: Option<Pin>,
}

impl Body for LockPi {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for _ in 0..iters {
            check(futex_lock_pi(&self.word), "FUTEX_LOCK_PI")?;
            if self.hold > 0 {
                std::thread::sleep(std::time::Duration::from_micros(self.hold.into()));
            }
            check(futex_unlock_pi(&self.word), "FUTEX_UNLOCK_PI")?;
        }
        Ok(())
    }
}

impl Drop for LockPi {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        for t in self.others.drain(..) {
            let _ = t.join();
        }
    }
}
