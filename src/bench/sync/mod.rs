//! `sync.*`: the costs of synchronising tasks as will-it-scale measures them: the C
//! library's mutex (contended when copies share it), a POSIX semaphore, the futex
//! calls alone, `sched_yield` alone and an eventfd's write and read.
//!
//! will-it-scale's mutex tests lock one global `pthread_mutex_t`: its threads share
//! it, and contend for it on their CPUs; its processes each have their own copy, and do
//! not. `share=one-mutex` is that global (a `static` of this process): with
//! `copies=2 copies_as=thread` the two copies contend for it, each pinned to a CPU of
//! its own (the copies' placement, one per CPU); as processes or alone, no one else
//! takes it. `share=mutex-per-copy` is each copy's own (`pthread_mutex2`).
//!
//! Bodies lock and unlock on the thread that runs them; nothing outlives the body.
//!
//! `sync.futex.*` ([`futex`]) are futex operations as `perf bench futex` times them:
//! the hash lookup of a wait that returns at once (`hash`), waking blocked waiters
//! (`wake`, and `wake_parallel` with several wakers), moving them to another word
//! (`requeue`) and the priority-inheriting lock (`lock_pi`). Their waiters and
//! contenders are threads of the measuring process, created in `prepare` and joined
//! when the body is dropped.

pub mod futex;
pub mod pool;

use crate::bench::facts::*;
use crate::bench::{body, check, Bench, InRun, Kind, OrOs, ParamSpec, Params, Prepared};
use crate::error::BenchError;
use crate::os::ops::{self, CMutex, Semaphore};
use crate::os::{sys, task};
use std::cell::Cell;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// The family.
pub const BENCHES: &[&dyn Bench] = &[
    &MUTEX,
    &SEM,
    &FUTEX,
    &YIELD,
    &EVENTFD,
    &futex::HASH,
    &futex::WAKE,
    &futex::WAKE_PARALLEL,
    &futex::REQUEUE,
    &futex::LOCK_PI,
];

/// will-it-scale's global mutex: one for the whole process.
static ONE: CMutex = CMutex::new();
/// pthread_mutex3's global counter, updated under the lock.
static GLOBAL: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// pthread_mutex5's thread-local counter.
    static TLS: Cell<u64> = const { Cell::new(0) };
}

/// `sync.mutex`.
pub const MUTEX: InRun = InRun {
    name: "sync.mutex",
    facts: Facts {
        user_space: Some(uncontended),
        ..NAMED.on(
            Libc,
            "pthread_mutex_lock and unlock: atomics; FUTEX_WAIT and FUTEX_WAKE inside them \
         only when another thread holds the mutex",
        )
    },
    about: "pthread_mutex_lock and pthread_mutex_unlock (will-it-scale's \
            pthread_mutex1-5): with copies_as=thread and share=one-mutex the copies \
            contend for one mutex from their CPUs, futex calls when it is taken",
    origin: "",
    params: &[
        ParamSpec {
            name: "share",
            default: "one-mutex",
            about: "one-mutex: one global mutex of the process, shared by thread copies \
                    (pthread_mutex1,3-5) · mutex-per-copy: each copy its own \
                    (pthread_mutex2)",
            kind: Kind::Choice(&["one-mutex", "mutex-per-copy"]),
        },
        ParamSpec {
            name: "update",
            default: "none",
            about: "what is done under the lock: none (pthread_mutex1) · global: a \
                    counter of the process (3) · local: one on the stack (4) · tls: a \
                    thread-local one (5)",
            kind: Kind::Choice(&["none", "global", "local", "tls"]),
        },
        ParamSpec {
            name: "process",
            default: "single-threaded",
            about: "single-threaded: no thread of the body's own, so a process of one \
                    thread (copies as processes, or alone) gets the C library's path \
                    without an atomic instruction, as will-it-scale's processes do · \
                    multi-threaded: an idle thread of the body's lives in the process, \
                    so the library takes its atomic path, as in will-it-scale's thread \
                    mode, whose main thread is one more",
            kind: Kind::Choice(&["single-threaded", "multi-threaded"]),
        },
    ],
    prepare: |p, _| prepare_mutex(p),
};

/// A mutex call that returned an error number.
#[cold]
#[inline(never)]
fn mutex_failed(r: libc::c_int, what: &'static str) -> BenchError {
    BenchError::os(what, std::io::Error::from_raw_os_error(r))
}

#[derive(Clone, Copy)]
enum Update {
    None,
    Global,
    Local,
    Tls,
}

/// Whether no other copy contends for the mutex (copies as processes each lock their
/// own): the lock and unlock stay in user space.
fn uncontended(p: &Params) -> bool {
    let value = |name: &str| {
        p.0.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    };
    value("share") == Some("mutex-per-copy")
        || value(crate::bench::copies::COPIES_AS) != Some("thread")
        || value(crate::bench::copies::COPIES).is_none_or(|n| n == "1")
}

fn prepare_mutex(p: &Params) -> Result<Prepared, BenchError> {
    let idle = match p.get("process") {
        "multi-threaded" => Some(Idle::start()?),
        _ => None,
    };
    let update = match p.get("update") {
        "global" => Update::Global,
        "local" => Update::Local,
        "tls" => Update::Tls,
        _ => Update::None,
    };
    // One closure per mutex and update, so the timed loop holds the calls and the
    // update alone, no choice among them.
    macro_rules! with_update {
        ($m:expr) => {
            match update {
                Update::None => mutex_body($m, || {}, idle),
                Update::Global => mutex_body(
                    $m,
                    || {
                        GLOBAL
                            .store(GLOBAL.load(Ordering::Relaxed) + 1, Ordering::Relaxed)
                    },
                    idle,
                ),
                Update::Local => {
                    let mut local = 0u64;
                    mutex_body($m, move || *std::hint::black_box(&mut local) += 1, idle)
                }
                Update::Tls => mutex_body($m, || TLS.with(|c| c.set(c.get() + 1)), idle),
            }
        };
    }
    // Where thread copies contend, a lock that waits in the kernel is the operation:
    // its batches are kept, not flagged for their switches.
    let plan = crate::bench::switching(!uncontended(p));
    Ok(if p.get("share") == "mutex-per-copy" {
        with_update!(Box::new(CMutex::new()))
    } else {
        with_update!(&ONE)
    }
    .op("lock+unlock pair")
    .plan(plan))
}

/// Lock, `update`, unlock, in the body's loop; `idle` lives as long as the body.
fn mutex_body(
    m: impl std::ops::Deref<Target = CMutex> + 'static,
    mut update: impl FnMut() + 'static,
    idle: Option<Idle>,
) -> Prepared {
    Prepared::new(body(move || {
        let _ = &idle;
        let r = m.lock();
        if r != 0 {
            return Err(mutex_failed(r, "pthread_mutex_lock"));
        }
        update();
        let r = m.unlock();
        if r != 0 {
            return Err(mutex_failed(r, "pthread_mutex_unlock"));
        }
        Ok(())
    }))
}

/// An idle thread of the body's own, so that the process has more than one: the C
/// library's locks take their atomic path, and the kernel takes a reference on each
/// descriptor a call looks up (a shared descriptor table). Stopped and joined on drop.
pub(crate) struct Idle {
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Idle {
    /// Starts the idle thread.
    pub(crate) fn start() -> Result<Idle, BenchError> {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("syscost-idle".into())
            .spawn(move || {
                let _ = rx.recv();
            })
            .or_os("spawn the idle thread")?;
        Ok(Idle {
            stop: Some(tx),
            thread: Some(thread),
        })
    }
}

impl Drop for Idle {
    fn drop(&mut self) {
        // Closing the channel ends the thread's wait.
        self.stop = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `sync.sem`.
pub const SEM: InRun = InRun {
    name: "sync.sem",
    facts: Facts {
        enters: Enters::Not("sem_wait and sem_post: atomics in the C library"),
        ..NAMED
    },
    about: "sem_wait and sem_post of a POSIX semaphore of this task's own, value 1 \
            (will-it-scale's posix_semaphore1): atomics in the C library, never waits",
    origin: "",
    params: &[],
    prepare: |_, _| {
        let s = Semaphore::new(1).or_os("sem_init")?;
        Ok(Prepared::new(body(move || {
            check(s.wait() as i64, "sem_wait")?;
            check(s.post() as i64, "sem_post")
        }))
        .op("wait+post pair"))
    },
};

/// `sync.futex`.
pub const FUTEX: InRun = InRun {
    name: "sync.futex",
    facts: NAMED.on(Generic, "FUTEX_WAKE or FUTEX_WAIT"),
    about:
        "futex(2) alone (will-it-scale's futex1-4): FUTEX_WAKE of a word nobody waits \
            on, or FUTEX_WAIT on a word whose value differs (EAGAIN at once); shared or \
            FUTEX_PRIVATE_FLAG",
    origin: "",
    params: &[
        ParamSpec {
            name: "op",
            default: "wake,wait",
            about: "wake: FUTEX_WAKE, returns 0 (futex1, 3) · wait: FUTEX_WAIT for a \
                    value the word does not hold, returns EAGAIN (futex2, 4)",
            kind: Kind::Choice(&["wake", "wait"]),
        },
        ParamSpec {
            name: "private",
            default: "no,yes",
            about: "no: a key any process could share (futex1, 2) · yes: \
                    FUTEX_PRIVATE_FLAG (futex3, 4)",
            kind: Kind::Choice(&["no", "yes"]),
        },
    ],
    prepare: |p, _| prepare_futex(p),
};

#[cold]
#[inline(never)]
fn futex_unexpected(r: i64, errno: i32) -> BenchError {
    BenchError::Failed(format!(
        "futex returned {r} (errno {errno}), not the expected outcome"
    ))
}

fn prepare_futex(p: &Params) -> Result<Prepared, BenchError> {
    let wait = p.get("op") == "wait";
    let private = p.get("private") == "yes";
    let op = match (wait, private) {
        (false, false) => libc::FUTEX_WAKE,
        (false, true) => libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
        (true, false) => libc::FUTEX_WAIT,
        (true, true) => libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
    };
    let word = Box::new(AtomicU32::new(0));
    let body = if wait {
        body(move || {
            let r = ops::futex(&word, op, 1);
            if r != -1 {
                return Err(futex_unexpected(r, 0));
            }
            let e = task::errno();
            if e != libc::EAGAIN {
                return Err(futex_unexpected(r, e));
            }
            Ok(())
        })
    } else {
        body(move || {
            let r = ops::futex(&word, op, 1);
            if r != 0 {
                return Err(futex_unexpected(r, task::errno()));
            }
            Ok(())
        })
    };
    Ok(Prepared::new(body).op(if wait { "FUTEX_WAIT" } else { "FUTEX_WAKE" }))
}

/// `sync.yield`.
pub const YIELD: InRun = InRun {
    name: "sync.yield",
    facts: NAMED.on(Libc, "sched_yield"),
    about: "sched_yield(2) with no other task waiting for the CPU (will-it-scale's \
            sched_yield): the scheduler's pick, back to the caller",
    origin: "",
    params: &[],
    prepare: |_, _| {
        Ok(Prepared::new(body(|| {
            check(task::yield_now() as i64, "sched_yield")
        })))
    },
};

/// `sync.eventfd`.
pub const EVENTFD: InRun = InRun {
    name: "sync.eventfd",
    facts: NAMED.on(Libc, "write, then read"),
    about: "write(2) of 8 bytes (1) to an eventfd, then read(2) of its count back, by \
            one task (will-it-scale's eventfd1)",
    origin: "",
    params: &[],
    prepare: |_, _| {
        let fd = sys::eventfd(0, libc::EFD_CLOEXEC).or_os("eventfd")?;
        let one = 1u64.to_ne_bytes();
        let mut got = [0u8; 8];
        Ok(Prepared::new(body(move || {
            let raw = fd.as_raw_fd();
            if task::write_fd(raw, &one) != 8 {
                return Err(BenchError::last_os("write"));
            }
            if task::read_fd(raw, &mut got) != 8 {
                return Err(BenchError::last_os("read"));
            }
            Ok(())
        }))
        .op("write+read pair"))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::testing::kv;

    /// Thread copies of one mutex wait for it in the kernel, and those waits are the
    /// operation: their batches keep their switches. Alone, as processes, or each with
    /// its own mutex, a switch still flags a batch.
    #[test]
    fn only_contended_mutex_batches_keep_their_switches() {
        let switches = |copies: &str, how: &str, share: &str| {
            let p = kv(&[
                ("share", share),
                ("update", "none"),
                ("process", "single-threaded"),
                ("copies", copies),
                ("copies_as", how),
            ]);
            prepare_mutex(&p).unwrap().plan.expect.switches
        };
        assert!(switches("2", "thread", "one-mutex"));
        assert!(!switches("1", "thread", "one-mutex"));
        assert!(!switches("2", "process", "one-mutex"));
        assert!(!switches("2", "thread", "mutex-per-copy"));
    }

    /// A PI lock handed to a contender, or held across a sleep, blocks: its batches
    /// keep their switches (they were all left out as perturbed).
    #[test]
    fn pi_lock_batches_that_wait_keep_their_switches() {
        let switches = |threads: &str, hold: &str| {
            let p = kv(&[
                ("threads", threads),
                ("hold_us", hold),
                ("placement", "same-cpu"),
            ]);
            let prepared = (futex::LOCK_PI.prepare)(&p).unwrap();
            prepared.plan.expect.switches
        };
        assert!(!switches("1", "0"));
        assert!(switches("1", "1"));
        assert!(switches("2", "0"));
    }
}
