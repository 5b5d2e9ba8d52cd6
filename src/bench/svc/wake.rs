//! Waking another process: VMS's `$WAKE` of a hibernating process is a FUTEX_WAKE of a
//! forked child blocked in FUTEX_WAIT on a shared word.
//!
//! Each wake must find the sleeper asleep, so the operation is timed one at a time: in
//! the body's `reset` (untimed) the waker waits until the child has announced the word
//! value it waits on and /proc shows it sleeping (state S), then changes the word. The
//! timed operation is the FUTEX_WAKE alone (`svc.wake.other`), or the FUTEX_WAKE and
//! the wait until the child reports that it runs again (`svc.wake.latency`, whose facts
//! give the child's own view: from just before the wake to just after its wait
//! returned, both read from CLOCK_MONOTONIC). A wake that finds nobody (returns 0) is
//! counted, not hidden: the `woken_fraction` fact says how many were real.
//!
//! On one CPU the woken child may preempt the waker inside the timed call: that switch
//! is part of what a same-CPU wake costs, so preemption is expected there.
//!
//! On two CPUs the cost depends on what the sleeper's CPU is doing when the wake comes:
//! an idle CPU must be sent an interrupt to run the child (on a VM whose idle vCPU is
//! halted, an exit to the hypervisor on the waker's side), while a CPU still on its
//! way into idle, or polling, or running something else, is only told to reschedule.
//! So the waker lets the sleeper's CPU settle (untimed, [`SETTLE`] after the child is
//! seen asleep) and every cross-CPU wake is a wake of a child whose CPU has gone idle;
//! the `target_idle_exits` fact counts, from the kernel's cpuidle counters, how often
//! that CPU left an idle state per wake (about 1 when every wake found it idle, 0 when
//! something else kept it busy).

use super::{fail, percentile};
use crate::bench::ctx::place_pinned;
use crate::bench::facts::*;
use crate::bench::Fact;
use crate::bench::{ParamSpec, Params, Prepared, Simple};
use crate::error::BenchError;
use crate::harness::{Body, Plan};
use crate::os::affinity::Pin;
use crate::os::interrupt;
use crate::os::svc;
use crate::os::sys;
use crate::os::task::{self, Child, SharedMem};
use std::cell::Cell;
use std::fs::File;
use std::os::fd::AsFd;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

// Shared memory: 32-bit words and 64-bit slots (slot i overlaps words 2i, 2i+1).
const WORD: usize = 0; // the futex word the child sleeps on; only the waker changes it
const STOP: usize = 1;
const WAITING_ON: usize = 1; // slot: the word value the child waits on, plus 1
const WOKE_AT: usize = 2; // slot: CLOCK_MONOTONIC ns just after the child's wait returned
const WOKE_FOR: usize = 3; // slot: the word value it was woken for, plus 1 (0: none yet)

static PARAMS: &[ParamSpec] = &[crate::bench::ctx::placement(
    "same-cpu,cross-cpu",
    "waker and sleeper on one CPU, on two different CPUs, or placed by the scheduler",
)];

/// `svc.wake.other`.
pub const OTHER: Simple = Simple {
    name: "svc.wake.other",
    facts: Facts {
        serial: Some("it already uses two CPUs (a forked sleeper)"),
        switches: true,
        ..SYSCALL.on(Generic, "FUTEX_WAKE")
    },
    about: "the waker's cost of a FUTEX_WAKE that wakes a forked child asleep in FUTEX_WAIT; timed one at a time, each after the child is seen asleep (untimed)",
    origin: "004 Table I: $WAKE wakeup (other process) (127 µs)",
    params: PARAMS,
    prepare: |p| prepare(p, false),
};

/// `svc.wake.latency`.
pub const LATENCY: Simple = Simple {
    name: "svc.wake.latency",
    facts: Facts {
        serial: Some("it already uses two CPUs (a forked sleeper)"),
        switches: true,
        ..SYSCALL.on(
            Generic,
            "FUTEX_WAKE; then, same-cpu, sched_yield (libc) until the child runs",
        )
    },
    about: "FUTEX_WAKE of a sleeping forked child until the waker sees it run again; facts: the child's own wake-up latency (just before the wake to just after its wait returns) p50/p99/max",
    origin: "004 Table I: $WAKE wakeup (other process) (127 µs), as the sleeper sees it",
    params: PARAMS,
    prepare: |p| prepare(p, true),
};

/// The sleeper: announce, wait, record when it ran again, until told to stop.
/// Async-signal-safe: atomics, futex calls and the vDSO clock only.
fn sleeper(mem: &SharedMem) -> i32 {
    let word = mem.word(WORD);
    loop {
        let v = word.load(Ordering::Acquire);
        if mem.word(STOP).load(Ordering::Acquire) != 0 {
            return 0;
        }
        mem.slot(WAITING_ON).store(v as u64 + 1, Ordering::Release);
        task::futex_wait(word, v, None);
        let t = sys::ts_ns(&sys::clock_gettime(libc::CLOCK_MONOTONIC));
        let now = word.load(Ordering::Acquire);
        if now != v {
            mem.slot(WOKE_AT).store(t, Ordering::Release);
            mem.slot(WOKE_FOR).store(now as u64 + 1, Ordering::Release);
        }
    }
}

/// Totals left by the body when it is dropped.
#[derive(Debug, Default, Clone)]
struct Report {
    wakes: u64,
    /// Idle-state exits of the sleeper's CPU over the body's life (cross-CPU, where
    /// the kernel counts them).
    idle_exits: Option<u64>,
    woken: u64,
    latencies_ns: Vec<f64>,
}

struct Wake {
    mem: SharedMem,
    child: Option<Child>,
    /// /proc/<child>/stat, read to see it sleeping.
    stat: File,
    same_cpu: bool,
    latency: bool,
    /// The word value the next wake announces, plus 1 (as the child records it).
    next: u64,
    /// CLOCK_MONOTONIC ns just before the last wake (latency mode).
    t0: u64,
    pending: bool,
    wakes: u64,
    woken: u64,
    latencies: Vec<f64>,
    report: Rc<Cell<Option<Report>>>,
    /// The sleeper's CPU (cross-CPU) and its idle-exit count when the body was made.
    target: Option<(usize, u64)>,
    _pin: Option<Pin>,
}

/// How long the waker lets the sleeper's CPU settle into idle after the child is seen
/// asleep (cross-CPU): /proc shows the child sleeping as soon as its state is set,
/// before its CPU has switched away and entered an idle state.
pub const SETTLE: Duration = Duration::from_micros(30);

/// How many times `cpu` has left an idle state, summed over its cpuidle states (None
/// where the kernel has no cpuidle driver for it).
fn idle_exits(cpu: usize) -> Option<u64> {
    let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle");
    let mut total = None;
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        if !e.file_name().to_string_lossy().starts_with("state") {
            continue;
        }
        let n: u64 = std::fs::read_to_string(e.path().join("usage"))
            .ok()?
            .trim()
            .parse()
            .ok()?;
        total = Some(total.unwrap_or(0) + n);
    }
    total
}

impl Wake {
    /// Waits (untimed) until the child waits on the current word value and sleeps.
    fn wait_for_sleeper(&mut self) -> Result<(), BenchError> {
        let v = self.mem.word(WORD).load(Ordering::Acquire);
        let start = Instant::now();
        let mut spins = 0u64;
        loop {
            let announced =
                self.mem.slot(WAITING_ON).load(Ordering::Acquire) == v as u64 + 1;
            if announced && self.sleeping()? {
                return Ok(());
            }
            spins += 1;
            if self.same_cpu || spins > 100 {
                task::yield_now();
            } else {
                std::hint::spin_loop();
            }
            if spins.is_multiple_of(256) {
                self.check(start)?;
            }
        }
    }

    /// Whether /proc shows the child in an interruptible sleep.
    fn sleeping(&self) -> Result<bool, BenchError> {
        let mut buf = [0u8; 512];
        let n = svc::pread(self.stat.as_fd(), &mut buf, 0);
        if n <= 0 {
            return Err(fail("pread /proc/<child>/stat"));
        }
        let line = &buf[..n as usize];
        // The state follows the command name, which ends at the last ')'.
        let state = line
            .iter()
            .rposition(|&b| b == b')')
            .and_then(|i| line.get(i + 2))
            .copied();
        Ok(state == Some(b'S'))
    }

    #[cold]
    fn check(&mut self, start: Instant) -> Result<(), BenchError> {
        if interrupt::interrupted() {
            return Err(BenchError::Interrupted);
        }
        if let Some(c) = &mut self.child {
            if let Ok(Some(st)) = c.try_wait() {
                return Err(BenchError::Failed(format!(
                    "the sleeping child {}",
                    task::describe_status(st)
                )));
            }
        }
        if start.elapsed() > Duration::from_secs(5) {
            return Err(BenchError::Failed(
                "the child did not go to sleep within 5 s".into(),
            ));
        }
        Ok(())
    }

    /// Records the last wake's latency as the child saw it.
    fn collect(&mut self) {
        if !self.pending {
            return;
        }
        self.pending = false;
        let woke_for = self.mem.slot(WOKE_FOR).load(Ordering::Acquire);
        if woke_for == self.next {
            let at = self.mem.slot(WOKE_AT).load(Ordering::Acquire);
            self.latencies.push(at.saturating_sub(self.t0) as f64);
        }
    }

    /// Waits (timed, latency mode) until the child reports that it runs again.
    #[inline(always)]
    fn wait_until_running(&mut self) -> Result<(), BenchError> {
        let want = self.next;
        let start = Instant::now();
        let mut spins = 0u64;
        while self.mem.slot(WOKE_FOR).load(Ordering::Acquire) != want {
            if self.same_cpu {
                task::yield_now();
            } else {
                std::hint::spin_loop();
            }
            spins += 1;
            if spins.is_multiple_of(1 << 16) {
                self.check(start)?;
            }
        }
        Ok(())
    }
}

impl Body for Wake {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for _ in 0..iters {
            if self.latency {
                self.t0 = sys::ts_ns(&sys::clock_gettime(libc::CLOCK_MONOTONIC));
            }
            let r = task::futex_wake(self.mem.word(WORD), 1);
            if r == -1 {
                return Err(fail("futex (FUTEX_WAKE)"));
            }
            self.wakes += 1;
            self.woken += r as u64;
            if self.latency {
                self.pending = true;
                if r == 1 {
                    self.wait_until_running()?;
                }
            }
        }
        Ok(())
    }

    fn reset(&mut self, _iters: u64) -> Result<(), BenchError> {
        self.collect();
        self.wait_for_sleeper()?;
        if !self.same_cpu {
            let asleep = Instant::now();
            while asleep.elapsed() < SETTLE {
                std::hint::spin_loop();
            }
        }
        // The change the wake announces: the child, once woken, sees the new value
        // and records it plus 1.
        let new = self
            .mem
            .word(WORD)
            .fetch_add(1, Ordering::AcqRel)
            .wrapping_add(1);
        self.next = new as u64 + 1;
        Ok(())
    }
}

impl Drop for Wake {
    fn drop(&mut self) {
        self.collect();
        let idle_exits = self
            .target
            .and_then(|(cpu, at)| Some(idle_exits(cpu)?.saturating_sub(at)));
        self.report.set(Some(Report {
            wakes: self.wakes,
            idle_exits,
            woken: self.woken,
            latencies_ns: std::mem::take(&mut self.latencies),
        }));
        self.mem.word(STOP).store(1, Ordering::Release);
        self.mem.word(WORD).fetch_add(1, Ordering::AcqRel);
        task::futex_wake(self.mem.word(WORD), 1);
        if let Some(mut c) = self.child.take() {
            let _ = c.reap_by(Instant::now() + Duration::from_secs(2));
        }
    }
}

fn prepare(p: &Params, latency: bool) -> Result<Prepared, BenchError> {
    let same_cpu = p.get("placement") == "same-cpu";
    let (pin, child_cpus) = place_pinned(p.get("placement"))?;
    let os = |what: &'static str| move |e| BenchError::os(what, e);
    let mem = SharedMem::new(4096).map_err(os("mmap (shared)"))?;
    let (mem_ref, cpus) = (&mem, &child_cpus[..]);
    // SAFETY: the sleeper runs `sleeper`: futex waits and atomics in shared memory, no
    // allocation or lock (the closure captures only references, so nothing is freed
    // in the child either).
    #[allow(unsafe_code)]
    let child = unsafe { task::fork_partner(&[], cpus, || sleeper(mem_ref)) }
        .map_err(os("fork"))?;
    let stat = File::open(format!("/proc/{}/stat", child.pid()))
        .map_err(os("open /proc/<child>/stat"))?;
    let report = Rc::new(Cell::new(None));
    let target = match (same_cpu, child_cpus.as_slice()) {
        (false, &[cpu]) => idle_exits(cpu).map(|n| (cpu, n)),
        _ => None,
    };
    let body = Wake {
        target,
        mem,
        child: Some(child),
        stat,
        same_cpu,
        latency,
        next: 0,
        t0: 0,
        pending: false,
        wakes: 0,
        woken: 0,
        latencies: Vec::with_capacity(1 << 16),
        report: report.clone(),
        _pin: pin,
    };
    let plan = Plan {
        fixed_batch: Some(1),
        // The waker blocks only in the latency mode's wait on one CPU (a yield).
        ..crate::bench::expecting(false, false, same_cpu)
    };
    let op = if latency {
        "wake until the sleeper runs"
    } else {
        "FUTEX_WAKE of a sleeper"
    };
    Ok(Prepared::new(Box::new(body))
        .op(op)
        .plan(plan)
        .after(Box::new(move |_, _| {
            let r = report.take().unwrap_or_default();
            let mut facts = vec![Fact::new(
                "woken_fraction",
                r.woken as f64 / r.wakes.max(1) as f64,
                "ratio",
                "wakes that found the child asleep and woke it (FUTEX_WAKE returned 1); warm-up included",
            )];
            if let Some(exits) = r.idle_exits {
                facts.push(Fact::new(
                    "target_idle_exits",
                    exits as f64 / r.wakes.max(1) as f64,
                    "ratio",
                    "times the sleeper's CPU left an idle state, per wake (cpuidle counters; about 1: every wake found it idle; warm-up included)",
                ));
            }
            if latency {
                let mut l = r.latencies_ns;
                l.sort_unstable_by(f64::total_cmp);
                facts.push(Fact::new(
                    "latency_p50_ns",
                    percentile(&l, 50.0),
                    "ns",
                    "the child's wake-up latency: CLOCK_MONOTONIC just before FUTEX_WAKE to just after its FUTEX_WAIT returned, median",
                ));
                facts.push(Fact::new(
                    "latency_p99_ns",
                    percentile(&l, 99.0),
                    "ns",
                    "the child's wake-up latency, 99th percentile",
                ));
                facts.push(Fact::new(
                    "latency_max_ns",
                    percentile(&l, 100.0),
                    "ns",
                    "the child's wake-up latency, largest",
                ));
                facts.push(Fact::new(
                    "latency_samples",
                    l.len() as f64,
                    "count",
                    "wake-ups timed by the child (warm-up included)",
                ));
            }
            Ok(facts)
        })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::testing::{fact, prepared, sane};

    #[test]
    fn wakes_are_real_and_latencies_ordered() {
        for placement in ["same-cpu", "cross-cpu"] {
            let Some(facts) = sane(&OTHER, &[("placement", placement)], 1e6) else {
                continue; // one CPU: cross-cpu is skipped with a reason
            };
            let woken = fact(&facts, "woken_fraction");
            assert!(woken > 0.9, "{placement}: woken fraction {woken}");
            if placement == "cross-cpu" && idle_exits(0).is_some() {
                // About 1 on a quiet machine; 0 while other work (parallel tests)
                // keeps the sleeper's CPU busy.
                let exits = fact(&facts, "target_idle_exits");
                assert!((0.0..1e4).contains(&exits), "idle exits per wake {exits}");
            }
            let facts = sane(&LATENCY, &[("placement", placement)], 1e6).unwrap();
            let (p50, p99, max) = (
                fact(&facts, "latency_p50_ns"),
                fact(&facts, "latency_p99_ns"),
                fact(&facts, "latency_max_ns"),
            );
            assert!(fact(&facts, "latency_samples") > 0.0);
            assert!(0.0 < p50 && p50 <= p99 && p99 <= max, "{p50} {p99} {max}");
        }
    }

    #[test]
    fn the_child_is_reaped_when_the_body_is_dropped() {
        let mut prep = prepared(&OTHER, &[("placement", "same-cpu")]);
        prep.body.reset(1).unwrap();
        prep.body.run(1).unwrap();
        let children = || {
            std::fs::read_to_string(format!(
                "/proc/self/task/{}/children",
                task::gettid()
            ))
            .unwrap_or_default()
        };
        assert!(!children().trim().is_empty(), "the sleeper exists");
        drop(prep);
        assert!(children().trim().is_empty(), "{}", children());
    }
}
