//! Where an operation's time goes (`syscost explain`, `run --explain`): while a
//! benchmark's timed batches run in its worker, the measuring task and the tasks it
//! starts are sampled with `perf_event_open` ([`crate::os::sampler`]); the samples that
//! fall inside a batch (by the batches' spans on `CLOCK_MONOTONIC_RAW`) are named
//! ([`symbols`]) and folded into stacks, and each function's share of them becomes ns
//! per operation with an interval ([`analysis`]). This module owns the explanation's
//! data and its recording; the worker and the slot only call [`Recorder`] around the
//! timed loop. It must not time anything, nor change what is timed: the events are
//! opened before the benchmark is set up and read after its batches end.
//!
//! Output: the text table ([`render`]), folded stacks ([`folded`]), a flame graph
//! ([`flame`]), the difference of two explanations ([`diff`]) and the sampling's bias
//! measured on a case with a known answer ([`skid`]).

pub mod analysis;
pub mod diff;
pub mod flame;
pub mod folded;
pub mod render;
pub mod skid;
pub mod symbols;

use crate::harness::Span;
use crate::os::sampler::{self, Record, Sampler};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Samples per second of running time, by default (`--explain-hz`). On this kind of
/// VM, 20 kHz made getpid 40% slower while 5 kHz left it within its interval.
pub const HZ: u64 = 5_000;

/// Whether round `round` is sampled: every other one, so that the rounds between
/// measure the operation undisturbed and the difference is the sampling's own cost.
pub fn sampled_round(round: u32) -> bool {
    round % 2 == 1
}

/// What the sampling is known to get wrong, stated with every explanation.
pub const BIAS: &str = "cpu-clock is an hrtimer: a sample due while interrupts are off \
    (the system call's entry and exit, a context switch) is taken when they are enabled \
    again, so time moves from the entry code, sysret and the switch onto the first \
    instruction after interrupts return (do_syscall_64, finish_task_switch, the user \
    instruction after the syscall); cycles on a real PMU skid a few instructions only. \
    `syscost explain --skid` measures it on a known answer.";

/// The groups a kernel developer reads a profile in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    /// In user space (the benchmark's loop, the C library's wrapper).
    User,
    /// System call entry and exit, dispatch.
    Entry,
    /// Speculative-execution mitigations recognised by symbol: return thunks,
    /// retpolines, RSB filling, BHB clearing, VERW buffer clearing, IBPB, L1D flush.
    Mitigations,
    /// The call's own work.
    Body,
    /// The scheduler: switch, wake-up, run-queue accounting.
    Scheduler,
    /// Interrupts and softirqs taken during the operation.
    Interrupts,
}

impl Group {
    /// Every group, in reading order.
    pub const ALL: [Group; 6] = [
        Group::User,
        Group::Entry,
        Group::Mitigations,
        Group::Body,
        Group::Scheduler,
        Group::Interrupts,
    ];

    /// Its name in tables.
    pub fn label(self) -> &'static str {
        match self {
            Group::User => "user side",
            Group::Entry => "entry and exit",
            Group::Mitigations => "mitigations",
            Group::Body => "the call's own body",
            Group::Scheduler => "scheduler and switch",
            Group::Interrupts => "interrupts",
        }
    }
}

/// One distinct call stack and how many samples had it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stack {
    /// The user-space function the task was in, or entered the kernel from (the
    /// user stack is not walked); empty for a kernel thread.
    pub user: String,
    /// The kernel's frames, outermost first; empty when the sample was in user space.
    pub kernel: Vec<String>,
    /// Samples with this stack.
    pub count: u64,
    /// Taken in the measuring task (false: in a task it started, e.g. a partner).
    pub measuring: bool,
}

impl Stack {
    /// Its frames outermost first, each with whether it is the kernel's.
    pub fn frames(&self) -> Vec<(&str, bool)> {
        let user = (!self.user.is_empty()).then_some((self.user.as_str(), false));
        user.into_iter()
            .chain(self.kernel.iter().map(|k| (k.as_str(), true)))
            .collect()
    }
}

/// A function's (or a group's) share of the samples as ns per operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Share {
    /// The function (or group) name.
    pub name: String,
    /// A kernel function.
    pub kernel: bool,
    /// Its group (a function's by its name; a group's own).
    pub group: Option<Group>,
    /// Samples with it as the leaf.
    pub self_samples: u64,
    /// Samples with it anywhere on the stack.
    pub total_samples: u64,
    /// `self_samples` over all samples.
    pub self_share: f64,
    /// Self time, ns per operation (share × median).
    pub self_ns: f64,
    /// The 95% Wilson interval of the self time, low end.
    pub self_low_ns: f64,
    /// High end.
    pub self_high_ns: f64,
    /// Inclusive time, ns per operation.
    pub total_ns: f64,
    /// The 95% interval of the inclusive time, low end.
    pub total_low_ns: f64,
    /// High end.
    pub total_high_ns: f64,
}

/// Where one benchmark's time went, per operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Explanation {
    /// The event sampled: `cycles` or `cpu-clock`.
    pub event: String,
    /// Samples per second of running time asked for.
    pub hz: u64,
    /// The cpu-clock period, ns (0 for cycles).
    pub period_ns: u64,
    /// Kernel frames were sampled and named.
    pub kernel: bool,
    /// What is missing and why, in one line each (no right to sample the kernel,
    /// kallsyms hidden, samples lost).
    pub notes: Vec<String>,
    /// Which tasks the samples cover.
    pub covers: String,
    /// Samples inside the timed batches (the ones explained).
    pub samples: u64,
    /// Of them, in tasks the measuring task started.
    pub samples_other_tasks: u64,
    /// Samples outside the batches (the harness's bookkeeping), left out.
    pub samples_outside: u64,
    /// Samples the kernel dropped (ring full).
    pub lost: u64,
    /// Operations in the sampled batches.
    pub operations: u64,
    /// The batches' wall time per operation (clock reads included), ns.
    pub wall_ns_per_op: f64,
    /// Sampled running time per operation (samples × period / operations), ns; the
    /// check that the samples cover the operation (cpu-clock only).
    pub sampled_ns_per_op: Option<f64>,
    /// The mean of the sampled rounds' medians, ns per operation: the scale of every
    /// share (only every other round is sampled).
    pub median_ns: f64,
    /// The mean of the other rounds' medians (None with no such round): the operation
    /// undisturbed by the sampling.
    pub unsampled_median_ns: Option<f64>,
    /// The fraction of samples whose leaf function has a name.
    pub named: f64,
    /// The widest 95% half-width of any share, in ns per operation (bounds them all).
    pub bound_ns: f64,
    /// The sampling's known bias.
    pub bias: String,
    /// The groups, in [`Group::ALL`] order.
    pub groups: Vec<Share>,
    /// Every function, most self time first.
    pub functions: Vec<Share>,
    /// The distinct stacks, most samples first.
    pub stacks: Vec<Stack>,
}

impl Explanation {
    /// The sum of the functions' self times, ns per operation.
    pub fn self_sum_ns(&self) -> f64 {
        self.functions.iter().map(|f| f.self_ns).sum()
    }
}

/// A raw stack: the measuring task or not, the user address, the kernel addresses
/// leaf first.
type RawStack = (bool, Option<u64>, Vec<u64>);

/// The worker's side: opens the sampler before each round's setup, and gathers the
/// samples of the round's timed batches.
pub struct Recorder {
    options: sampler::Options,
    stacks: HashMap<RawStack, u64>,
    notes: Vec<String>,
    event: Option<(sampler::Kind, u64, bool)>,
    outside: u64,
    lost: u64,
    operations: u64,
    wall_ns: u64,
    period_sum: u128,
    tid: u32,
}

impl Recorder {
    /// A recorder sampling `hz` times per second of running time, cycles preferred.
    pub fn new(hz: u64) -> Recorder {
        Recorder {
            options: sampler::Options {
                hz: hz.max(1),
                pages: 512,
                prefer_cycles: true,
            },
            stacks: HashMap::new(),
            notes: Vec::new(),
            event: None,
            outside: 0,
            lost: 0,
            operations: 0,
            wall_ns: 0,
            period_sum: 0,
            tid: crate::os::task::gettid() as u32,
        }
    }

    fn note(&mut self, n: String) {
        if !self.notes.contains(&n) {
            self.notes.push(n);
        }
    }

    /// Opens the events (disabled) for the calling thread and what it starts from now
    /// on; None, with a note, when sampling is refused.
    pub fn open(&mut self) -> Option<Sampler> {
        self.tid = crate::os::task::gettid() as u32;
        let mut o = self.options;
        if !crate::os::file::is_root() {
            o.pages = 16; // within perf_event_mlock_kb for a user
        }
        match Sampler::open(&o) {
            Ok(s) => {
                if let Some(why) = &s.refused {
                    self.note(why.clone());
                }
                self.event = Some((s.kind, s.period_ns, s.kernel));
                Some(s)
            }
            Err(e) => {
                self.note(format!(
                    "sampling refused ({e}): it needs root, CAP_PERFMON, or \
                     kernel.perf_event_paranoid ≤ 2 for user space and ≤ 1 for the kernel"
                ));
                None
            }
        }
    }

    /// Reads the round's samples after its batches: those inside a batch's span are
    /// kept, the others counted. `spans` are the round's batches; `ops` operations each.
    pub fn take(&mut self, mut s: Sampler, spans: &[Option<Span>], ops: u64) {
        if let Err(e) = s.disable() {
            self.note(format!("the sampler could not be stopped: {e}"));
        }
        let spans: Vec<Span> = spans.iter().flatten().copied().collect();
        self.operations += ops * spans.len() as u64;
        self.wall_ns += spans
            .iter()
            .map(|s| s.end_ns.saturating_sub(s.start_ns))
            .sum::<u64>();
        let mut got = Vec::new();
        s.drain(|r| match r {
            Record::Sample(x) => {
                let i = spans.partition_point(|s| s.start_ns <= x.time);
                let inside = i > 0 && x.time <= spans[i - 1].end_ns;
                if inside {
                    let key = (x.tid == self.tid, x.user_ip, x.kernel_frames().collect());
                    got.push((key, x.period));
                } else {
                    self.outside += 1;
                }
            }
            Record::Lost(n) => self.lost += n,
            Record::Other(_) => {}
        });
        for (key, period) in got {
            *self.stacks.entry(key).or_default() += 1;
            self.period_sum += period as u128;
        }
    }

    /// The explanation, scaled by the mean median of the sampled rounds (`rounds`:
    /// each round's number and median); None when nothing was ever opened and nothing
    /// noted.
    pub fn conclude(mut self, rounds: &[(u32, f64)]) -> Option<Explanation> {
        if self.event.is_none() && self.notes.is_empty() {
            return None;
        }
        let mean = |sampled: bool| {
            let v: Vec<f64> = rounds
                .iter()
                .filter(|r| sampled_round(r.0) == sampled)
                .map(|r| r.1)
                .collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        };
        let unsampled = mean(false);
        let median_ns = mean(true).or(unsampled)?;
        let (kind, period_ns, kernel) =
            self.event.unwrap_or((sampler::Kind::CpuClock, 0, false));
        let (ktab, hidden) = if kernel {
            symbols::kernel()
        } else {
            (symbols::Table::default(), None)
        };
        if let Some(h) = hidden {
            self.note(h);
        }
        if self.lost > 0 {
            self.note(format!(
                "{} lost (the ring was full)",
                crate::draw::text::count(self.lost, "sample", "samples")
            ));
        }
        let mut user = symbols::User::of_self();
        let mut folded: HashMap<(bool, String, Vec<String>), u64> = HashMap::new();
        for ((measuring, uip, kips), n) in std::mem::take(&mut self.stacks) {
            let u = match uip {
                Some(a) => user.name(a).unwrap_or_else(|| "[unknown]".into()),
                None => String::new(),
            };
            let k: Vec<String> = kips
                .iter()
                .rev()
                .map(|&a| ktab.name(a).unwrap_or("[unknown]").to_string())
                .collect();
            *folded.entry((measuring, u, k)).or_default() += n;
        }
        let mut stacks: Vec<Stack> = folded
            .into_iter()
            .map(|((measuring, user, kernel), count)| Stack {
                user,
                kernel,
                count,
                measuring,
            })
            .collect();
        stacks
            .sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.kernel.cmp(&b.kernel)));
        let mut e = self.explanation(kind, period_ns, kernel, stacks, median_ns);
        e.unsampled_median_ns = unsampled;
        Some(e)
    }

    fn explanation(
        &self,
        kind: sampler::Kind,
        period_ns: u64,
        kernel: bool,
        stacks: Vec<Stack>,
        median_ns: f64,
    ) -> Explanation {
        let samples: u64 = stacks.iter().map(|s| s.count).sum();
        let other: u64 = stacks
            .iter()
            .filter(|s| !s.measuring)
            .map(|s| s.count)
            .sum();
        let ops = self.operations.max(1) as f64;
        let functions = analysis::functions(&stacks, median_ns);
        let bound_ns = functions
            .iter()
            .map(|f| (f.self_high_ns - f.self_low_ns) / 2.0)
            .fold(0.0, f64::max);
        Explanation {
            event: kind.name().to_string(),
            hz: self.options.hz,
            period_ns,
            kernel,
            notes: self.notes.clone(),
            covers: "the measuring thread and the threads and processes it started \
                     while setting up (inherited events); not idle time nor other tasks"
                .into(),
            samples,
            samples_other_tasks: other,
            samples_outside: self.outside,
            lost: self.lost,
            operations: self.operations,
            wall_ns_per_op: self.wall_ns as f64 / ops,
            sampled_ns_per_op: (kind == sampler::Kind::CpuClock && samples > 0)
                .then(|| self.period_sum as f64 / ops),
            median_ns,
            unsampled_median_ns: None,
            named: analysis::named_fraction(&stacks),
            bound_ns,
            bias: BIAS.to_string(),
            groups: analysis::groups(&stacks, median_ns),
            functions,
            stacks,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An explanation of a getpid-like call from made-up stacks.
    pub(crate) fn example() -> Explanation {
        let k = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let st = |user: &str, kernel: Vec<String>, count| Stack {
            user: user.into(),
            kernel,
            count,
            measuring: true,
        };
        let stacks = vec![
            st("bench::run", k(&["entry_SYSCALL_64", "do_syscall_64"]), 466),
            st("bench::run", vec![], 414),
            st(
                "bench::run",
                k(&[
                    "entry_SYSCALL_64",
                    "do_syscall_64",
                    "x64_sys_call",
                    "__x64_sys_getpid",
                    "__task_pid_nr_ns",
                ]),
                77,
            ),
            st(
                "bench::run",
                k(&["entry_SYSCALL_64", "do_syscall_64", "x64_sys_call"]),
                17,
            ),
            st(
                "bench::run",
                k(&["entry_SYSCALL_64", "do_syscall_64", "its_return_thunk"]),
                8,
            ),
            st("[unknown]", vec![], 18),
        ];
        let mut r = Recorder::new(HZ);
        r.operations = 10_000;
        r.wall_ns = 600_000;
        r.period_sum = 1000 * 50_000;
        r.notes.push("kernel frames: an example note".into());
        r.explanation(sampler::Kind::CpuClock, 50_000, true, stacks, 60.0)
    }

    #[test]
    fn an_explanation_scales_shares_by_the_median() {
        let e = example();
        assert_eq!(e.samples, 1000);
        assert!((e.self_sum_ns() - 60.0).abs() < 1e-9);
        assert!((e.named - 0.982).abs() < 1e-9);
        assert_eq!(e.sampled_ns_per_op, Some(5000.0));
        let m = e
            .groups
            .iter()
            .find(|g| g.group == Some(Group::Mitigations))
            .unwrap();
        assert_eq!(m.self_samples, 8);
        assert!(e.bound_ns > 0.0 && e.bound_ns < 3.0, "{}", e.bound_ns);
    }
}
