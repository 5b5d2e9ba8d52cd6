//! `ctx.ring`: Sloan's pipeline. A ring of n tasks joined by pipes passes a one-byte
//! token; every hop wakes the next task, so on one CPU every hop is a switch.
//!
//! The measuring thread is one member of the ring: it writes the token into the ring
//! and reads it back n hops later. The harness times passes and reports ns per hop.
//! After the measurement a fresh ring makes a run of its own under getrusage, as the
//! paper did: every member records its usage when the first token reaches it and
//! again at end of file, so creation and exit are left out, and the figures give the
//! paper's columns (real, CPU, user, system) and the switches per hop.
//!
//! The submodule `members` holds the ring's tasks and their loop.

mod members;

pub use members::{BuildError, Ring};

use super::home_cpu;
use crate::bench::facts::Figure::SwitchSame;
use crate::bench::facts::*;
use crate::bench::via::Via;
use crate::bench::Fact;
use crate::bench::{
    body, InRun, Kind, OrOs, ParamSpec, Params, Prepared, RunContext, Simple,
};
use crate::error::BenchError;
use crate::harness::{Body, Plan};
use crate::os::affinity;
use crate::os::task;
use crate::os::usage::{Usage, Who};
use std::os::fd::{AsFd, AsRawFd};
use std::time::Instant;

/// The paper's process counts.
pub const PAPER_COUNTS: &str = "2,4,8,10,16,20,32,48,64";

static PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "n",
        default: PAPER_COUNTS,
        about: "tasks in the ring, the measuring thread included (the paper's counts by default)",
        kind: Kind::Int { min: 2, max: 16384 },
    },
    ParamSpec {
        name: "kind",
        default: "process",
        about: "forked processes or threads of this process",
        kind: Kind::Choice(&["process", "thread"]),
    },
    super::placement_among(
        "same-cpu",
        "same-cpu pins every task to one CPU (every hop a true switch); free lets the scheduler place them (asked for, not by default: its figure is the scheduler's choice of the run)",
        &["same-cpu", "free"],
    ),
    ParamSpec {
        name: "passes",
        default: "0",
        about: "tokens each task passes per sample and in the accounting run (0: calibrated)",
        kind: Kind::Int { min: 0, max: 100_000_000 },
    },
];

/// `ctx.ring`.
pub const RING: InRun = InRun {
    name: "ctx.ring",
    facts: Facts {
        quotes: &[quote(
            SwitchSame,
            1,
            "n=2 kind=process placement=same-cpu",
            "a hop of a 2-process ring",
        )],
        serial: Some("it already uses two CPUs or a ring of tasks"),
        switches: true,
        tables: Tables::Ring,
        ..SYSCALL.on(Libc, "write and read of the token, in every member")
    },
    about: "a token passed around a ring of n tasks joined by pipes: ns per hop, with the ring's CPU accounting",
    origin: "sloan1992 (the pipeline benchmark); manea1999 §4",
    params: PARAMS,
    prepare: prepare_ring,
};

/// `ctx.pipe`: the ring's control, the token through a pipe within one task.
pub const PIPE: Simple = Simple {
    name: "ctx.pipe",
    facts: Facts {
        serial: Some("it already uses two CPUs or a ring of tasks"),
        switches: true,
        ..SYSCALL
    },
    about: "a one-byte write and read of the same pipe in one task: a hop's pipe cost without the switch",
    origin: "sloan1992 (control); lmbench lat_ctx's overhead",
    params: crate::bench::via::ONLY_BOTH,
    prepare: |p| {
        let b = match Via::of(p)? {
            Via::Libc => pipe_pass()?,
            Via::Raw => pipe_pass_raw()?,
        };
        Ok(Prepared::new(b).op("write+read of one byte"))
    },
};

/// Where the ring's tasks run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// Every task pinned to this CPU.
    One(usize),
    /// Every task may run on these CPUs.
    Free(Vec<usize>),
}

impl Placement {
    fn from_param(p: &Params) -> Result<Placement, BenchError> {
        Ok(match p.get("placement") {
            "same-cpu" => Placement::One(home_cpu()?),
            _ => Placement::Free(affinity::process_cpus()),
        })
    }
    fn cpus(&self) -> Vec<usize> {
        match self {
            Placement::One(c) => vec![*c],
            Placement::Free(v) => v.clone(),
        }
    }
}

/// Whether members are processes or threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskKind {
    /// Forked processes.
    Process,
    /// Threads of this process.
    Thread,
}

impl TaskKind {
    fn from_param(p: &Params) -> TaskKind {
        match p.get("kind") {
            "thread" => TaskKind::Thread,
            _ => TaskKind::Process,
        }
    }
    fn plural(self) -> &'static str {
        match self {
            TaskKind::Process => "processes",
            TaskKind::Thread => "threads",
        }
    }
    /// The key under which the run context keeps the smallest ring of this kind that
    /// could not be built: larger rings of the same kind skip with its reason.
    fn limit_key(self) -> &'static str {
        match self {
            TaskKind::Process => "ctx.ring processes",
            TaskKind::Thread => "ctx.ring threads",
        }
    }
}

/// The accounting run: a fresh ring, `passes` passes under getrusage.
#[derive(Debug, Clone, Copy)]
pub struct Account {
    /// Passes made.
    pub passes: u64,
    /// Wall time of the passes, ns.
    pub wall_ns: f64,
    /// Wall time of the whole run (creating, passing, ending), ns.
    pub total_ns: f64,
    /// Usage of every member during the passes, the measuring thread's included.
    pub usage: Usage,
}

/// Makes the accounting run.
pub fn account(
    n: usize,
    kind: TaskKind,
    place: &Placement,
    passes: u64,
) -> Result<Account, BenchError> {
    let t_all = Instant::now();
    // Prepare met no limit at this n; a limit met now is not kept for later rings.
    let mut ring = build(n, kind, place, &RunContext::default())?;
    ring.run(1)?; // every member records its start on this token
    let u0 = Usage::now(Who::Thread);
    let t0 = Instant::now();
    ring.run(passes)?;
    let wall_ns = t0.elapsed().as_nanos() as f64;
    let main = Usage::now(Who::Thread).since(&u0);
    ring.close()?;
    let mut usage = ring.members_usage()?;
    usage.add(&main);
    drop(ring);
    Ok(Account {
        passes,
        wall_ns,
        total_ns: t_all.elapsed().as_nanos() as f64,
        usage,
    })
}

/// Builds a ring of `n`, unless a ring of this kind no larger could not be built
/// earlier in the run (`cx` keeps the smallest such n, and learns it here).
fn build(
    n: usize,
    kind: TaskKind,
    place: &Placement,
    cx: &RunContext,
) -> Result<Ring, BenchError> {
    if let Some((m, why)) = cx.known_limit(kind.limit_key(), n as u64) {
        return Err(BenchError::Skip(format!(
            "a ring of {m} {} could not be built: {why}",
            kind.plural()
        )));
    }
    let refused = |why: String| {
        cx.record_limit(kind.limit_key(), n as u64, &why);
        Err(BenchError::Skip(why))
    };
    if let Some(why) = over_limits(n, kind)? {
        return refused(why);
    }
    match Ring::build(n, kind, place) {
        Ok(r) => Ok(r),
        Err(BuildError::Limit(why)) => refused(why),
        Err(BuildError::Other(e)) => Err(e),
    }
}

/// Which of RLIMIT_NPROC, RLIMIT_NOFILE or the kernel's task limit a ring of `n` would
/// exceed, if any, with the limit named: checked before trying.
fn over_limits(n: usize, kind: TaskKind) -> Result<Option<String>, BenchError> {
    let skip = |why: String| Ok(Some(why));
    let tasks_now = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .nth(3)?
                .split('/')
                .nth(1)?
                .parse::<u64>()
                .ok()
        })
        .unwrap_or(0);
    if let Some(max) = std::fs::read_to_string("/proc/sys/kernel/threads-max")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
    {
        if tasks_now + n as u64 + 64 > max {
            return skip(format!(
                "{n} more tasks would pass the kernel's threads-max of {max} ({tasks_now} tasks now)"
            ));
        }
    }
    if task::geteuid() != 0 {
        if let Some(limit) = task::nproc_limit() {
            if n as u64 + 16 > limit {
                return skip(format!("{n} tasks would exceed RLIMIT_NPROC ({limit})"));
            }
        }
    }
    if kind == TaskKind::Thread {
        let limit = crate::os::sys::nofile_limit();
        let open = std::fs::read_dir("/proc/self/fd")
            .map(|d| d.count() as u64)
            .unwrap_or(0);
        if open + 2 * n as u64 + 16 > limit {
            return skip(format!(
                "a ring of {n} threads needs {} descriptors; RLIMIT_NOFILE is {limit} ({open} open)",
                2 * n
            ));
        }
    }
    Ok(None)
}

/// The token through one pipe within one task: write a byte, read it back, through
/// the C library's `write` and `read`.
pub fn pipe_pass() -> Result<Box<dyn Body>, BenchError> {
    let (r, w) = task::pipe().or_os("pipe")?;
    let mut b = [b'x'];
    Ok(body(move || {
        if task::write_fd(w.as_raw_fd(), &b) != 1 {
            return Err(BenchError::last_os("write"));
        }
        if task::read_fd(r.as_raw_fd(), &mut b) != 1 {
            return Err(BenchError::last_os("read"));
        }
        Ok(())
    }))
}

/// [`pipe_pass`] through the `syscall` instruction in the loop (`ctx.pipe via=raw`): the
/// whole loop one aligned asm block ([`crate::os::raw::write_read_repeat`]).
pub fn pipe_pass_raw() -> Result<Box<dyn Body>, BenchError> {
    let (r, w) = task::pipe().or_os("pipe")?;
    let mut b = [b'x'];
    Ok(crate::bench::via::repeat(move |n| {
        crate::os::raw::write_read_repeat(w.as_fd(), r.as_fd(), &mut b, n)
            .map_err(crate::bench::via::stopped)
    }))
}

fn prepare_ring(p: &Params, cx: &RunContext) -> Result<Prepared, BenchError> {
    let n = p.int("n") as usize;
    let kind = TaskKind::from_param(p);
    let place = Placement::from_param(p)?;
    let passes = p.int("passes") as u64;
    let ring = build(n, kind, &place, cx)?;
    let plan = Plan {
        fixed_batch: (passes > 0).then_some(passes),
        per_iter: n as u64,
        ..crate::bench::blocking(true)
    };
    let after = move |h: &crate::harness::Harness<'_>,
                      m: &crate::harness::Measurement| {
        let per_hop = m.analysis.figure();
        let target_ns = (4.0 * h.settings().profile.round_ns as f64).clamp(10e6, 500e6);
        let passes = if passes > 0 {
            passes
        } else {
            ((target_ns / (per_hop * n as f64)).ceil() as u64).clamp(20, 10_000_000)
        };
        let a = account(n, kind, &place, passes)?;
        let mut pipe = pipe_pass()?;
        let pipe_ns = h.canary(pipe.as_mut(), 200, 9)?;
        Ok(facts(n, &a, per_hop, pipe_ns))
    };
    Ok(Prepared::new(Box::new(ring))
        .op("hop")
        .plan(plan)
        .after(Box::new(after)))
}

fn facts(n: usize, a: &Account, per_hop_ns: f64, pipe_ns: f64) -> Vec<Fact> {
    let pass = |ns: u64| ns as f64 / 1e3 / a.passes as f64;
    let hops = (a.passes * n as u64) as f64;
    let u = &a.usage;
    vec![
        Fact::new("passes", a.passes as f64, "count", "passes of the token in the accounting run"),
        Fact::new(
            "real_us_per_pass",
            a.wall_ns / 1e3 / a.passes as f64,
            "us",
            "wall time per pass (µs per pass = seconds per 10^6 passes, the paper's unit)",
        ),
        Fact::new("cpu_us_per_pass", pass(u.user_ns + u.sys_ns), "us", "CPU time of all n tasks per pass"),
        Fact::new("user_us_per_pass", pass(u.user_ns), "us", "user CPU time per pass"),
        Fact::new("sys_us_per_pass", pass(u.sys_ns), "us", "system CPU time per pass"),
        Fact::new("vol_per_hop", u.vol_switches as f64 / hops, "count", "voluntary switches per hop"),
        Fact::new("invol_per_hop", u.invol_switches as f64 / hops, "count", "involuntary switches per hop"),
        Fact::new(
            "setup_ms",
            (a.total_ns - a.wall_ns) / 1e6,
            "ms",
            "creating and ending the accounting ring",
        ),
        Fact::new("pipe_ns", pipe_ns, "ns", "the token through a pipe within one task (no switch)"),
        Fact::new("switch_ns", per_hop_ns - pipe_ns, "ns", "per hop minus the in-task pipe cost"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_of_processes_passes_and_accounts() {
        let place = Placement::One(home_cpu().unwrap());
        let a = account(4, TaskKind::Process, &place, 200).unwrap();
        assert_eq!(a.passes, 200);
        let per_hop_ns = a.wall_ns / 800.0;
        assert!(per_hop_ns > 0.0 && per_hop_ns < 1e6, "{per_hop_ns}");
        assert!(a.usage.vol_switches > 0);
        assert!(a.usage.user_ns + a.usage.sys_ns > 0);
    }

    #[test]
    fn a_ring_of_threads_passes_and_accounts() {
        let place = Placement::Free(affinity::process_cpus());
        let a = account(3, TaskKind::Thread, &place, 100).unwrap();
        assert!(a.wall_ns > 0.0);
        assert!(a.usage.vol_switches > 0);
    }

    #[test]
    fn a_refused_ring_skips_larger_rings_of_its_kind_in_the_same_run_only() {
        let cx = RunContext::default();
        let place = Placement::Free(affinity::process_cpus());
        // More threads than the kernel allows: refused before any is made.
        let n = 100_000_000;
        let first = build(n, TaskKind::Thread, &place, &cx).err().unwrap();
        assert!(matches!(&first, BenchError::Skip(_)), "{first}");
        let later = build(n + 1, TaskKind::Thread, &place, &cx).err().unwrap();
        assert!(
            matches!(&later, BenchError::Skip(w) if w.contains("a ring of 100000000 threads could not be built")),
            "{later}"
        );
        // Other kinds, smaller rings and other runs are not affected.
        assert!(cx
            .known_limit(TaskKind::Process.limit_key(), u64::MAX)
            .is_none());
        assert!(cx.known_limit(TaskKind::Thread.limit_key(), 3).is_none());
        let small = build(3, TaskKind::Thread, &place, &RunContext::default());
        assert!(small.is_ok(), "{:?}", small.err());
    }
}
