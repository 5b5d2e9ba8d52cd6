//! Hardening: the parameters that measure what a hardened process pays (issue 55),
//! which every benchmark takes where they make sense, as every benchmark takes
//! `copies=`: `seccomp=N` (with `seccomp_kind=args|nr` and `seccomp_stack=K`),
//! `cgroup=same|sibling` on the benchmarks with a partner task, `userns=1`, `rseq=off`
//! and `spec=store_bypass|indirect_branch|both`.
//!
//! It owns the names, the values, which benchmarks take which, and their application
//! in a worker process ([`apply`], called once by the worker before its first round,
//! and [`prepare`], which the slot calls in place of the benchmark's own): a filter,
//! namespace, unregistration or speculation control is set on the worker and the
//! tasks it starts, never on the run's own process, which measures none of them
//! (measured in-process, an instance that asks for them is skipped with the reason).
//! Every cgroup made is removed by the worker on its way out, and by the run at its
//! end and its next start when a worker was killed ([`cgroup::sweep`]).

pub mod cgroup;

use super::params::{self, Kind, ParamArg, ParamSpec, Params};
use super::{Bench, Fact, Prepared, RunContext};
use crate::error::{BenchError, UsageError};
use crate::os::harden::{self as os, Speculation};
use std::sync::Mutex;

/// An allow-all seccomp filter of N instructions (0: none).
pub const SECCOMP: &str = "seccomp";
/// What the filter reads: the arguments (run on every call) or the number (cached).
pub const SECCOMP_KIND: &str = "seccomp_kind";
/// How many such filters are stacked.
pub const SECCOMP_STACK: &str = "seccomp_stack";
/// The partner task's cgroup.
pub const CGROUP: &str = "cgroup";
/// A fresh user and pid namespace.
pub const USERNS: &str = "userns";
/// The restartable-sequences registration.
pub const RSEQ: &str = "rseq";
/// Per-task speculation controls.
pub const SPEC: &str = "spec";

/// The most instructions of one filter (the kernel's `BPF_MAXINSNS`).
pub const MAX_INSNS: i64 = 4096;
/// The kernel's bound on a call's stacked filters: their instructions plus 4 per
/// filter (`MAX_INSNS_PER_PATH`).
const MAX_PATH: i64 = 32768;

/// The hardening parameters, as `syscost list` shows them.
pub const SPECS: [ParamSpec; 7] = [
    ParamSpec {
        name: SECCOMP,
        default: "0",
        about: "install an allow-all seccomp filter of N instructions in the worker \
                before it measures (0: none); with seccomp_kind=args the kernel runs it \
                on every call: what a container runtime's filter costs",
        kind: Kind::Int {
            min: 0,
            max: MAX_INSNS,
        },
    },
    ParamSpec {
        name: SECCOMP_KIND,
        default: "args",
        about: "args: the filter loads the call's arguments (N-1 loads, then allow), so \
                its verdict cannot be cached and it runs on every call; nr: it reads \
                only the call's number, which the kernel (5.11+) caches as a constant \
                allow: only seccomp's entry path is paid (seccomp=1 seccomp_kind=nr \
                is that path alone)",
        kind: Kind::Choice(&["args", "nr"]),
    },
    ParamSpec {
        name: SECCOMP_STACK,
        default: "1",
        about: "K such filters stacked, as nested sandboxes install them; the kernel \
                runs each",
        kind: Kind::Int { min: 1, max: 64 },
    },
    ParamSpec {
        name: CGROUP,
        default: "none",
        about: "on benchmarks with a partner task: both tasks in one fresh cgroup of \
                the cpu controller (same), or the partner in a sibling one (sibling), \
                as perf bench sched pipe -G; removed when the worker ends",
        kind: Kind::Choice(&["none", "same", "sibling"]),
    },
    ParamSpec {
        name: USERNS,
        default: "0",
        about: "1: the worker measures from inside a fresh user namespace (its user \
                mapped to root there) and pid namespace (it is pid 1)",
        kind: Kind::Choice(&["0", "1"]),
    },
    ParamSpec {
        name: RSEQ,
        default: "on",
        about: "off: the measuring thread's restartable-sequences registration is \
                removed (the kernel then skips the rseq update on each return to user \
                space after a switch or a signal); partner threads keep theirs",
        kind: Kind::Choice(&["on", "off"]),
    },
    ParamSpec {
        name: SPEC,
        default: "none",
        about: "disable speculation for the worker with prctl(PR_SET_SPECULATION_CTRL): \
                store_bypass (SSBD), indirect_branch (STIBP/IBPB), both; skipped with \
                the kernel's word where it does not allow it per task",
        kind: Kind::Choice(&["none", "store_bypass", "indirect_branch", "both"]),
    },
];

/// Whether `name` is one of the hardening parameters.
pub fn is_param(name: &str) -> bool {
    SPECS.iter().any(|s| s.name == name)
}

/// Why `b` does not take hardening parameter `name`, or None when it does (its entry
/// says: [`super::Facts::seccomp`], `partner`, `switches`).
pub fn refusal(b: &dyn Bench, name: &str) -> Option<&'static str> {
    let f = b.facts();
    match name {
        SECCOMP | SECCOMP_KIND | SECCOMP_STACK if !f.seccomp => {
            Some("it makes no system call")
        }
        CGROUP if !f.partner => Some("it has no partner task"),
        RSEQ if !f.switches => Some("it has no switch or signal delivery"),
        _ => None,
    }
}

/// The specification of hardening parameter `name` when `b` takes it.
pub fn spec(b: &dyn Bench, name: &str) -> Option<ParamSpec> {
    let s = SPECS.iter().copied().find(|s| s.name == name)?;
    refusal(b, name).is_none().then_some(s)
}

/// Every instance of `base` crossed with the hardening values `args` give (and only
/// those: a run without them keeps its labels). `seccomp_kind` and `seccomp_stack`
/// need `seccomp`; a one-instruction filter reads no argument.
pub fn cross(
    b: &dyn Bench,
    args: &[ParamArg],
    base: Vec<Params>,
) -> Result<Vec<Params>, UsageError> {
    let given: Vec<ParamSpec> = SPECS
        .iter()
        .copied()
        .filter(|s| args.iter().any(|a| a.name == s.name))
        .collect();
    if given.is_empty() {
        return Ok(base);
    }
    for s in &given {
        if let Some(why) = refusal(b, s.name) {
            return Err(UsageError::new(format!(
                "{} takes no {}= ({why}); `syscost list` says which benchmarks take it",
                b.name(),
                s.name
            )));
        }
    }
    let companion = given
        .iter()
        .any(|s| s.name == SECCOMP_KIND || s.name == SECCOMP_STACK);
    if companion && !given.iter().any(|s| s.name == SECCOMP) {
        return Err(UsageError::new(format!(
            "{}: seccomp_kind= and seccomp_stack= describe a filter; give seccomp=N \
             too (seccomp=0,256)",
            b.name()
        )));
    }
    let extra = params::expand(b.name(), &given, args)?;
    for e in &extra {
        check_filter(b.name(), e)?;
    }
    Ok(params::product(&base, &extra))
}

fn check_filter(bench: &str, p: &Params) -> Result<(), UsageError> {
    let Some(f) = Filter::of(p) else {
        return Ok(());
    };
    if f.args && f.insns == 1 {
        return Err(UsageError::new(format!(
            "{bench}: seccomp=1 seccomp_kind=args: a one-instruction filter can only \
             return, reads no argument and is cached; use seccomp_kind=nr for the entry \
             path, or seccomp=2 or more"
        )));
    }
    if (f.insns as i64 + 4) * f.stack as i64 > MAX_PATH {
        return Err(UsageError::new(format!(
            "{bench}: {} filters of {} instructions pass the kernel's {MAX_PATH} \
             instructions per call (each filter counts 4 more): fewer or shorter",
            f.stack, f.insns
        )));
    }
    Ok(())
}

fn value<'a>(p: &'a Params, name: &str) -> Option<&'a str> {
    p.0.iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.as_str())
}

/// The seccomp filter an instance asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Filter {
    /// Instructions per filter.
    pub insns: usize,
    /// Reads the arguments (else only the number).
    pub args: bool,
    /// Filters stacked.
    pub stack: usize,
}

impl Filter {
    /// The filter `p` asks for; None for none (no `seccomp`, or 0).
    pub fn of(p: &Params) -> Option<Filter> {
        let insns: usize = value(p, SECCOMP)?.parse().ok()?;
        (insns > 0).then(|| Filter {
            insns,
            args: value(p, SECCOMP_KIND) != Some("nr"),
            stack: value(p, SECCOMP_STACK)
                .and_then(|v| v.parse().ok())
                .unwrap_or(1),
        })
    }
    fn program(self) -> Vec<os::Insn> {
        if self.args {
            os::args_filter(self.insns)
        } else {
            os::nr_filter(self.insns)
        }
    }
}

/// What an instance asks the worker to put on itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Asked {
    /// The seccomp filter.
    pub filter: Option<Filter>,
    /// `cgroup=same` (false) or `sibling` (true).
    pub cgroup: Option<bool>,
    /// A fresh user and pid namespace.
    pub userns: bool,
    /// No rseq registration.
    pub rseq_off: bool,
    /// Speculation disabled.
    pub spec: Vec<Speculation>,
}

impl Asked {
    /// What `p` asks for.
    pub fn of(p: &Params) -> Asked {
        Asked {
            filter: Filter::of(p),
            cgroup: match value(p, CGROUP) {
                Some("same") => Some(false),
                Some("sibling") => Some(true),
                _ => None,
            },
            userns: value(p, USERNS) == Some("1"),
            rseq_off: value(p, RSEQ) == Some("off"),
            spec: match value(p, SPEC) {
                Some("store_bypass") => vec![Speculation::StoreBypass],
                Some("indirect_branch") => vec![Speculation::IndirectBranch],
                Some("both") => {
                    vec![Speculation::StoreBypass, Speculation::IndirectBranch]
                }
                _ => Vec::new(),
            },
        }
    }
    /// Whether it asks for anything.
    pub fn any(&self) -> bool {
        *self != Asked::default()
    }
}

/// What this process put on itself: set once by [`apply`] in a worker.
struct State {
    /// Why it could not (the instance is then skipped with it).
    error: Option<String>,
    /// The partner's cgroup, for `cgroup=sibling`.
    partner: Option<std::path::PathBuf>,
    /// What it reports with its result.
    facts: Vec<Fact>,
    /// It was asked for a seccomp filter.
    filtered: bool,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn state() -> std::sync::MutexGuard<'static, Option<State>> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Held by the worker for its life: removes the cgroups it made when dropped.
pub struct Applied {
    cgroups: Option<cgroup::Pair>,
}

impl Drop for Applied {
    fn drop(&mut self) {
        drop(self.cgroups.take());
        *state() = None;
    }
}

/// Puts on this worker process what `p` asks for, in the order that lets each step
/// run: the namespaces (which fork: the caller goes on as the namespace's pid 1), the
/// cgroups, rseq, speculation, and the seccomp filter last, so that it applies to every
/// call of the rounds, set-up and timed loop alike, and to the partner tasks started
/// after it. A step that cannot be taken is kept as the instance's skip; nothing is
/// undone, since none of it outlives the worker. Call it in a worker only, once, before
/// its first round, and hold the result until the worker ends.
pub fn apply(p: &Params, session_pid: u32) -> Applied {
    let asked = Asked::of(p);
    let mut applied = Applied { cgroups: None };
    if !asked.any() {
        return applied;
    }
    let mut facts = Vec::new();
    let mut partner = None;
    // Its pid in the run's namespace names its cgroups (in a fresh one it is 1).
    let worker = std::process::id();
    let result = (|| -> Result<(), String> {
        if asked.userns {
            os::enter_user_and_pid_ns().map_err(|e| {
                format!("userns=1: unshare(CLONE_NEWUSER|CLONE_NEWPID) and fork: {e}")
            })?;
            facts.push(Fact::new(
                "harden_pid_in_ns",
                f64::from(rustix::process::getpid().as_raw_nonzero().get()),
                "count",
                "the worker's pid in its pid namespace (1: a fresh one)",
            ));
        }
        if let Some(sibling) = asked.cgroup {
            let pair = cgroup::Pair::make(session_pid, worker)?;
            if sibling {
                partner = Some(pair.partner().to_path_buf());
            }
            facts.push(Fact::new(
                "harden_cgroup_sibling",
                f64::from(u8::from(sibling)),
                "count",
                "1: the partner measured in a sibling cgroup; 0: in the same one",
            ));
            applied.cgroups = Some(pair);
        }
        on_this_task(p, &asked, &mut facts, os::thread_ids().len() > 1)
    })();
    *state() = Some(State {
        error: result.err(),
        partner,
        facts,
        filtered: asked.filter.is_some(),
    });
    applied
}

/// The steps of `asked` that belong to a task rather than a process: rseq,
/// speculation and the seccomp filter last (over every thread of the process when
/// `all_threads`), each said in `facts`.
fn on_this_task(
    p: &Params,
    asked: &Asked,
    facts: &mut Vec<Fact>,
    all_threads: bool,
) -> Result<(), String> {
    if asked.rseq_off {
        let how = os::rseq_unregister()
            .map_err(|e| format!("rseq=off: rseq(RSEQ_FLAG_UNREGISTER): {e}"))?;
        facts.push(Fact::new(
            "harden_rseq_unregistered",
            f64::from(u8::from(how == os::Rseq::Unregistered)),
            "count",
            "1: the measuring thread's rseq registration removed; 0: it had none",
        ));
    }
    for &s in &asked.spec {
        speculation_off(s)
            .map_err(|e| format!("spec={}: {e}", value(p, SPEC).unwrap_or("")))?;
    }
    if let Some(f) = asked.filter {
        for _ in 0..f.stack {
            os::install_filter(&f.program(), all_threads).map_err(|e| {
                format!("seccomp={}: installing the filter: {e}", f.insns)
            })?;
        }
    }
    Ok(())
}

/// Puts on the calling thread alone what `p` asks for of a thread (rseq, speculation,
/// the seccomp filter), for a side of a paired measurement that lives in a thread of
/// its own (`session::paired`); the process is left as it was. What belongs to a
/// process (namespaces, cgroups) is refused: such a pair's sides get processes of their
/// own (`session::paired::home_of`).
pub fn on_this_thread(p: &Params) -> Result<(), BenchError> {
    let asked = Asked::of(p);
    if asked.userns || asked.cgroup.is_some() {
        return Err(BenchError::Skip(
            "userns= and cgroup= belong to a process, not to a side's thread".into(),
        ));
    }
    on_this_task(p, &asked, &mut Vec::new(), false).map_err(BenchError::Skip)
}

/// Disables speculation `s` for this task, or says why the kernel does not allow it,
/// in its own word.
fn speculation_off(s: Speculation) -> Result<(), String> {
    let word = || {
        let path = format!(
            "/sys/devices/system/cpu/vulnerabilities/{}",
            s.vulnerability()
        );
        std::fs::read_to_string(path)
            .map(|w| format!("{}: {}", s.vulnerability(), w.trim()))
            .unwrap_or_else(|_| format!("{}: unknown", s.vulnerability()))
    };
    let bits = os::speculation(s).map_err(|e| format!("PR_GET_SPECULATION_CTRL: {e}"))?;
    if bits & libc::PR_SPEC_PRCTL as i32 == 0 {
        return Err(format!(
            "the kernel does not let a task control it (PR_GET_SPECULATION_CTRL {bits:#x}; {})",
            word()
        ));
    }
    os::disable_speculation(s)
        .map_err(|e| format!("PR_SET_SPECULATION_CTRL: {e}; {}", word()))
}

/// What this worker reports of its hardening with its result: each step it took, read
/// back from the kernel where the kernel says (the seccomp mode and filters of the
/// measuring thread now).
pub fn facts() -> Vec<Fact> {
    let Some(st) = state().as_ref().map(|s| s.facts.clone()) else {
        return Vec::new();
    };
    let mut out = st;
    let filtered = state().as_ref().is_some_and(|s| s.filtered);
    if let (true, Ok((mode, filters))) = (filtered, os::seccomp_status()) {
        out.push(Fact::new(
            "harden_seccomp_filters",
            f64::from(filters),
            "count",
            &format!("seccomp filters on the measuring thread at its end (mode {mode})"),
        ));
    }
    out
}

/// Whether this process put some hardening on itself (see [`apply`]).
pub fn active() -> bool {
    state().is_some()
}

/// Whether this process may measure `p`: Ok when it asks for no hardening or this
/// worker put it on; else the skip, with why.
pub fn check(p: &Params) -> Result<(), BenchError> {
    if !Asked::of(p).any() {
        return Ok(());
    }
    match state().as_ref() {
        None => Err(BenchError::Skip(
            "hardening parameters are put on a worker process, never on the run's own: \
             this one measures in-process (unset SYSCOST_WORKERS=inline, or run the \
             syscost binary)"
                .into(),
        )),
        Some(State {
            error: Some(why), ..
        }) => Err(BenchError::Skip(why.clone())),
        Some(_) => Ok(()),
    }
}

/// Prepares `b` for `p` as its own `prepare` does, after [`check`]; with
/// `cgroup=sibling`, then moves the tasks the set-up started (the partner) into the
/// sibling cgroup.
pub fn prepare(
    b: &dyn Bench,
    p: &Params,
    cx: &RunContext,
) -> Result<Prepared, BenchError> {
    check(p)?;
    let partner = state().as_ref().and_then(|s| s.partner.clone());
    let Some(dir) = partner else {
        return b.prepare(p, cx);
    };
    let (threads, children) = (os::thread_ids(), os::child_ids());
    let prepared = b.prepare(p, cx)?;
    let new_threads: Vec<i32> = os::thread_ids()
        .into_iter()
        .filter(|t| !threads.contains(t))
        .collect();
    let new_children: Vec<i32> = os::child_ids()
        .into_iter()
        .filter(|c| !children.contains(c))
        .collect();
    if new_threads.is_empty() && new_children.is_empty() {
        return Err(BenchError::Failed(
            "cgroup=sibling: the set-up started no partner task to place".into(),
        ));
    }
    let moved = new_threads
        .iter()
        .map(|&t| (t, true))
        .chain(new_children.iter().map(|&c| (c, false)));
    for (id, thread) in moved {
        os::move_to_cgroup(&dir, os::id_in_own_ns(id), thread).map_err(|e| {
            BenchError::Failed(format!(
                "cgroup=sibling: moving task {id} into {}: {e}",
                dir.display()
            ))
        })?;
    }
    Ok(prepared)
}

/// The hardening parameters of `p`, as `name=value` (empty when none).
pub fn label(p: &Params) -> String {
    label_of(p.0.iter().map(|(n, v)| (*n, v)))
}

/// The hardening parameters among `pairs`, as `name=value` (empty when none).
pub fn label_of<N: AsRef<str>, V: AsRef<str>>(
    pairs: impl Iterator<Item = (N, V)>,
) -> String {
    pairs
        .filter(|(n, _)| is_param(n.as_ref()))
        .map(|(n, v)| format!("{}={}", n.as_ref(), v.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests;
