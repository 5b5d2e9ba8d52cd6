//! A pool of waiter threads blocked in FUTEX_WAIT on one private word, re-armed between
//! timed operations: the other side of `sync.futex.wake`, `wake_parallel` and
//! `requeue`.
//!
//! Each waiter loops: note the gate's value, count itself armed, FUTEX_WAIT on `f1`
//! (whose value stays 0), and once woken (or woken from `f2` after a requeue) wait at
//! the gate until it moves. [`Pool::arm`] (untimed) wakes whoever sits on `f2`, moves
//! the gate and waits until every waiter is armed and asleep (state S in /proc), so each
//! timed operation finds all of them blocked on `f1`. Dropping the pool stops and joins
//! every waiter.

use crate::bench::OrOs;
use crate::error::BenchError;
use crate::os::affinity::Pin;
use crate::os::peers::{futex_wait, futex_wake};
use crate::os::task;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The words the waiters and the timed side share.
#[derive(Default)]
pub struct Words {
    /// The word the waiters block on (0 while the pool runs).
    pub f1: AtomicU32,
    /// The word `requeue` moves them to.
    pub f2: AtomicU32,
    gate: AtomicU32,
    armed: AtomicU32,
    stop: AtomicBool,
}

/// The pool.
pub struct Pool {
    /// The shared words.
    pub words: Arc<Words>,
    threads: Vec<JoinHandle<()>>,
    tids: Vec<i32>,
    armed_once: bool,
}

fn waiter(w: &Words) {
    loop {
        let r = w.gate.load(Ordering::Acquire);
        if w.stop.load(Ordering::Acquire) {
            return;
        }
        w.armed.fetch_add(1, Ordering::AcqRel);
        futex_wait(&w.f1, 0);
        while w.gate.load(Ordering::Acquire) == r && !w.stop.load(Ordering::Acquire) {
            futex_wait(&w.gate, r);
        }
    }
}

impl Pool {
    /// `n` waiters, each pinned to one of `cpus` in turn (none pinned when empty).
    pub fn new(n: usize, cpus: &[usize]) -> Result<Pool, BenchError> {
        let words = Arc::new(Words::default());
        let mut pool = Pool {
            words: words.clone(),
            threads: Vec::new(),
            tids: Vec::new(),
            armed_once: false,
        };
        let (tx, rx) = std::sync::mpsc::channel();
        for i in 0..n {
            let (w, tx) = (words.clone(), tx.clone());
            let cpu = (!cpus.is_empty()).then(|| cpus[i % cpus.len()]);
            let t = std::thread::Builder::new()
                .name("syscost-waiter".into())
                .spawn(move || {
                    let _pin = cpu.map(Pin::to);
                    let _ = tx.send(task::gettid());
                    waiter(&w);
                })
                .or_os("spawn a waiter thread")?;
            pool.threads.push(t);
        }
        for _ in 0..n {
            let tid = rx.recv_timeout(Duration::from_secs(5)).map_err(|_| {
                BenchError::Failed("a waiter thread did not start".into())
            })?;
            pool.tids.push(tid);
        }
        Ok(pool)
    }

    /// How many waiters.
    pub fn len(&self) -> usize {
        self.tids.len()
    }

    /// Whether it has none.
    pub fn is_empty(&self) -> bool {
        self.tids.is_empty()
    }

    /// Untimed: every waiter armed and asleep on `f1` again.
    pub fn arm(&mut self) -> Result<(), BenchError> {
        let w = &self.words;
        futex_wake(&w.f2, i32::MAX);
        if self.armed_once {
            w.armed.store(0, Ordering::Release);
            w.gate.fetch_add(1, Ordering::AcqRel);
            futex_wake(&w.gate, i32::MAX);
        }
        self.armed_once = true;
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut spins = 0u32;
        loop {
            if w.armed.load(Ordering::Acquire) as usize == self.tids.len()
                && self.tids.iter().all(|&t| asleep(t))
            {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(BenchError::Failed(
                    "the futex waiters did not all block within 5 s".into(),
                ));
            }
            spins += 1;
            if spins < 64 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(20));
            }
        }
    }
}

/// Whether thread `tid` of this process is asleep (state S).
fn asleep(tid: i32) -> bool {
    let Ok(s) = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")) else {
        return false;
    };
    s.rfind(')')
        .and_then(|i| s[i + 1..].split_whitespace().next())
        .is_some_and(|st| st == "S")
}

impl Drop for Pool {
    fn drop(&mut self) {
        let w = &self.words;
        w.stop.store(true, Ordering::Release);
        w.f1.store(1, Ordering::Release);
        w.gate.fetch_add(1, Ordering::AcqRel);
        futex_wake(&w.gate, i32::MAX);
        futex_wake(&w.f1, i32::MAX);
        futex_wake(&w.f2, i32::MAX);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
