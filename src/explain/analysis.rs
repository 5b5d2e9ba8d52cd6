//! From sample counts to nanoseconds per operation: each function's self and inclusive
//! share of the samples taken inside the timed batches, times the benchmark's median,
//! with a binomial (Wilson score) interval; and the shares grouped as a kernel
//! developer reads them. Pure functions.
//!
//! Invariants: the self shares of all functions add up to 1 (every sample has one
//! leaf), so their ns per operation add up to the median; an inclusive share is at
//! least its self share. The interval treats samples as independent draws, which
//! periodic sampling of a periodic loop only approximates (Wilson 1927; Brown, Cai
//! and DasGupta 2001 for why not the Wald interval).

use super::{Group, Share, Stack};
use std::collections::BTreeMap;

/// The Wilson score interval of `k` successes in `n` trials at 95%: (low, high).
pub fn wilson(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let (k, n) = (k as f64, n as f64);
    let z = 1.959_963_984_540_054_f64;
    let p = k / n;
    let d = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / d;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / d;
    let low = if k == 0.0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let high = if k == n {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    (low, high)
}

/// Whether a frame's name is a name (not `[unknown]`, `[vdso]`, `[libc.so.6]`).
pub fn is_named(frame: &str) -> bool {
    !frame.is_empty() && !frame.starts_with('[')
}

/// The share `k` of `n` samples as ns per operation of a `median_ns` operation.
fn share(
    name: &str,
    kernel: bool,
    group: Option<Group>,
    k: u64,
    t: u64,
    n: u64,
    m: f64,
) -> Share {
    let (lo, hi) = wilson(k, n);
    let (tlo, thi) = wilson(t, n);
    let f = |c: u64| if n == 0 { 0.0 } else { c as f64 / n as f64 };
    Share {
        name: name.to_string(),
        kernel,
        group,
        self_samples: k,
        total_samples: t,
        self_share: f(k),
        self_ns: f(k) * m,
        self_low_ns: lo * m,
        self_high_ns: hi * m,
        total_ns: f(t) * m,
        total_low_ns: tlo * m,
        total_high_ns: thi * m,
    }
}

/// Every function's self and inclusive share as ns per operation, most self time
/// first (then inclusive, then name).
pub fn functions(stacks: &[Stack], median_ns: f64) -> Vec<Share> {
    let n: u64 = stacks.iter().map(|s| s.count).sum();
    // (name, kernel) -> (self, inclusive)
    let mut counts: BTreeMap<(String, bool), (u64, u64)> = BTreeMap::new();
    for s in stacks {
        let frames = s.frames();
        for (i, &(name, kernel)) in frames.iter().enumerate() {
            let first = frames[..i].iter().all(|&f| f != (name, kernel));
            let e = counts.entry((name.to_string(), kernel)).or_default();
            if first {
                e.1 += s.count;
            }
            if i + 1 == frames.len() {
                e.0 += s.count;
            }
        }
    }
    // A function's group: that of most of the samples it is the leaf of (a spin
    // unlock after a wake-up is the scheduler's), else its name's.
    let mut leaf_groups: BTreeMap<(String, bool), BTreeMap<u8, u64>> = BTreeMap::new();
    for s in stacks {
        if let Some(&(name, kernel)) = s.frames().last() {
            let g = group_of(s) as u8;
            *leaf_groups
                .entry((name.to_string(), kernel))
                .or_default()
                .entry(g)
                .or_default() += s.count;
        }
    }
    let mut out: Vec<Share> = counts
        .into_iter()
        .map(|((name, kernel), (k, t))| {
            let most = leaf_groups.get(&(name.clone(), kernel)).and_then(|m| {
                let (&g, _) = m.iter().max_by_key(|(_, &c)| c)?;
                Group::ALL.iter().copied().find(|x| *x as u8 == g)
            });
            let g = Some(most.unwrap_or_else(|| classify(&name, kernel)));
            share(&name, kernel, g, k, t, n, median_ns)
        })
        .collect();
    out.sort_by(|a, b| {
        (b.self_samples, b.total_samples)
            .cmp(&(a.self_samples, a.total_samples))
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}

/// The share of each group (a sample's group is its stack's, see [`group_of`]), in
/// the order of [`Group::ALL`], empty groups included.
pub fn groups(stacks: &[Stack], median_ns: f64) -> Vec<Share> {
    let n: u64 = stacks.iter().map(|s| s.count).sum();
    Group::ALL
        .iter()
        .map(|&g| {
            let k = stacks
                .iter()
                .filter(|s| group_of(s) == g)
                .map(|s| s.count)
                .sum();
            share(g.label(), false, Some(g), k, k, n, median_ns)
        })
        .collect()
}

/// The fraction of samples whose leaf frame has a name.
pub fn named_fraction(stacks: &[Stack]) -> f64 {
    let n: u64 = stacks.iter().map(|s| s.count).sum();
    let named: u64 = stacks
        .iter()
        .filter(|s| s.frames().last().is_some_and(|f| is_named(f.0)))
        .map(|s| s.count)
        .sum();
    if n == 0 {
        0.0
    } else {
        named as f64 / n as f64
    }
}

const ENTRY: &[&str] = &[
    "entry_SYSCALL_64",
    "entry_SYSRETQ",
    "do_syscall_64",
    "x64_sys_call",
    "syscall_exit_to_user_mode",
    "syscall_enter_from_user_mode",
    "syscall_return_via_sysret",
    "exit_to_user_mode",
    "arch_exit_to_user_mode",
    "syscall_trace_enter",
    "fpregs_assert_state_consistent",
    "entry_SYSCALL_compat",
    "do_fast_syscall_32",
    "el0_svc",
    "invoke_syscall",
];
const MITIGATION: &[&str] = &[
    "its_return_thunk",
    "__x86_return_thunk",
    "retbleed_return_thunk",
    "call_depth_return_thunk",
    "srso_",
    "__x86_indirect_thunk_",
    "__x86_indirect_its_thunk_",
    "__x86_indirect_call_thunk_",
    "__x86_indirect_jump_thunk_",
    "clear_bhb_loop",
    "__clear_bhb_loop",
    "__fill_rsb",
    "fill_return_buffer",
    "x86_clear_cpu_buffers",
    "mds_clear_cpu_buffers",
    "clear_cpu_buffers",
    "write_ibpb",
    "entry_ibpb",
    "cond_mitigation",
    "l1d_flush",
    "vmx_l1d_flush",
    "__x86_clear_cpu_buffers",
];
const SCHEDULER: &[&str] = &[
    "__schedule",
    "schedule",
    "preempt_schedule",
    "context_switch",
    "__switch_to",
    "switch_mm",
    "finish_task_switch",
    "pick_next_task",
    "try_to_wake_up",
    "ttwu_",
    "wake_up_",
    "__wake_up",
    "autoremove_wake_function",
    "default_wake_function",
    "enqueue_task",
    "dequeue_task",
    "enqueue_entity",
    "dequeue_entity",
    "update_curr",
    "update_load_avg",
    "set_next_entity",
    "put_prev_",
    "check_preempt",
    "wakeup_preempt",
    "select_task_rq",
    "resched_curr",
    "prepare_task_switch",
    "yield",
    "do_sched_yield",
    "__x64_sys_sched_yield",
];
const INTERRUPT: &[&str] = &[
    "asm_sysvec_",
    "sysvec_",
    "__sysvec_",
    "asm_common_interrupt",
    "common_interrupt",
    "irq_exit",
    "__irq_exit",
    "irqentry_",
    "handle_softirqs",
    "__do_softirq",
    "do_softirq",
    "hrtimer_interrupt",
    "__hrtimer_run_queues",
    "handle_irq",
];

fn starts(name: &str, list: &[&str]) -> bool {
    list.iter().any(|p| name.starts_with(p))
}

/// The group a function belongs to by its name alone (a user function is user side).
pub fn classify(name: &str, kernel: bool) -> Group {
    if !kernel {
        Group::User
    } else if starts(name, MITIGATION) {
        Group::Mitigations
    } else if starts(name, INTERRUPT) {
        Group::Interrupts
    } else if starts(name, SCHEDULER) {
        Group::Scheduler
    } else if starts(name, ENTRY) {
        Group::Entry
    } else {
        Group::Body
    }
}

/// A sample's group: user side when it was in user space; else interrupts when an
/// interrupt is on its stack, mitigations when its leaf is one, the scheduler when
/// it is on its stack, entry and exit when its leaf is there, else the call's body.
pub fn group_of(s: &Stack) -> Group {
    let Some(leaf) = s.kernel.last() else {
        return Group::User;
    };
    let on_stack = |g| s.kernel.iter().any(|f| classify(f, true) == g);
    match classify(leaf, true) {
        Group::Mitigations => Group::Mitigations,
        _ if on_stack(Group::Interrupts) => Group::Interrupts,
        _ if on_stack(Group::Scheduler) => Group::Scheduler,
        g => g,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stack(user: &str, kernel: &[&str], count: u64) -> Stack {
        Stack {
            user: user.into(),
            kernel: kernel.iter().map(|s| s.to_string()).collect(),
            count,
            measuring: true,
        }
    }

    #[test]
    fn wilson_brackets_the_share_and_narrows_with_samples() {
        let (lo, hi) = wilson(50, 100);
        assert!(lo < 0.5 && 0.5 < hi && (hi - lo) > 0.15, "{lo} {hi}");
        let (lo2, hi2) = wilson(5000, 10000);
        assert!(hi2 - lo2 < 0.03);
        assert_eq!(wilson(0, 10).0, 0.0);
        assert_eq!(wilson(10, 10).1, 1.0);
        assert_eq!(wilson(0, 0), (0.0, 1.0));
    }

    #[test]
    fn self_times_add_up_to_the_median_and_inclusive_counts_once() {
        let entry = ["entry_SYSCALL_64", "do_syscall_64"];
        let stacks = [
            stack("bench::run", &[], 40),
            stack("bench::run", &entry, 45),
            stack(
                "bench::run",
                &[entry[0], entry[1], "x64_sys_call", "__x64_sys_getpid"],
                10,
            ),
            stack("bench::run", &[entry[0], entry[1], "its_return_thunk"], 5),
            // recursion: inclusive counts a function once per sample
            stack("bench::run", &["f", "f"], 0),
        ];
        let f = functions(&stacks, 100.0);
        let sum: f64 = f.iter().map(|s| s.self_ns).sum();
        assert!((sum - 100.0).abs() < 1e-9, "{sum}");
        let get = |n: &str| f.iter().find(|s| s.name == n).unwrap();
        assert_eq!(get("do_syscall_64").self_samples, 45);
        assert_eq!(get("do_syscall_64").total_samples, 60);
        assert_eq!(get("bench::run").total_samples, 100);
        assert!((get("bench::run").self_ns - 40.0).abs() < 1e-9);
        assert_eq!(f[0].name, "do_syscall_64", "most self time first");
        let g = groups(&stacks, 100.0);
        let by = |gr: Group| g.iter().find(|s| s.group == Some(gr)).unwrap().self_ns;
        assert!((by(Group::User) - 40.0).abs() < 1e-9);
        assert!((by(Group::Entry) - 45.0).abs() < 1e-9);
        assert!((by(Group::Body) - 10.0).abs() < 1e-9);
        assert!((by(Group::Mitigations) - 5.0).abs() < 1e-9);
        assert!((named_fraction(&stacks) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn groups_are_recognised_by_symbol() {
        assert_eq!(classify("its_return_thunk", true), Group::Mitigations);
        assert_eq!(
            classify("__x86_indirect_thunk_rax", true),
            Group::Mitigations
        );
        assert_eq!(classify("clear_bhb_loop", true), Group::Mitigations);
        assert_eq!(classify("switch_mm_irqs_off", true), Group::Scheduler);
        assert_eq!(classify("pipe_read", true), Group::Body);
        assert_eq!(classify("main", false), Group::User);
        let woken = stack(
            "w",
            &[
                "entry_SYSCALL_64",
                "pipe_write",
                "__wake_up_sync_key",
                "_raw_spin_unlock_irqrestore",
            ],
            1,
        );
        assert_eq!(group_of(&woken), Group::Scheduler);
        let tick = stack(
            "w",
            &[
                "asm_sysvec_apic_timer_interrupt",
                "sysvec_apic_timer_interrupt",
                "tick_sched_handle",
            ],
            1,
        );
        assert_eq!(group_of(&tick), Group::Interrupts);
        let unnamed = [
            stack("[unknown]", &[], 1),
            stack("u", &["[unknown]"], 1),
            stack("u", &[], 2),
        ];
        assert!((named_fraction(&unnamed) - 0.5).abs() < 1e-9);
    }
}
