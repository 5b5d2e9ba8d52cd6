//! Which spans the kernel perturbed: the join of time spans (a trace's intervals, or a
//! harness's samples) with the kernel's events on the same clock — the memo's rule
//! that an interval holding a clock interrupt or a context switch is removed from the
//! statistics, extended to every kernel event syscost records.
//!
//! A span `[t0, t1]` of thread `tid`, which began on CPU `c0` and ended on `c1`, is
//! perturbed by:
//!
//! - **timer**, **irq**, **softirq**, **ipi**: an interrupt on `c0` or `c1` (or, for
//!   [`Query::any_cpu`], on any CPU) whose entry–exit interval overlaps the span;
//! - **switch**: a context switch on `c0` or `c1` inside the span (the thread was
//!   running there, so a switch means it left the CPU or another task came in);
//! - **fault**: a page fault by `tid` inside the span;
//! - **migrate**: `c0 ≠ c1`, or a migration of `tid` inside the span;
//! - **lost**: the kernel lost events on `c0` or `c1` during the span, so it is not
//!   known to be clean.
//!
//! Kernel entry and exit code runs outside the tracepoints, so each kernel event is
//! widened by a guard band on both sides (1 µs by default). An entry with no exit (the
//! trace ended) lasts until the end of the trace; an exit with no entry (the trace began
//! inside it) starts at the trace's start. `expect` excuses what the operation does
//! itself (a blocking operation switches; a fault benchmark faults).

use super::format::{KernelEvent, KernelKind, Lost};
use crate::harness::causes::bits;
use std::collections::BTreeMap;

/// One span to judge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Query {
    /// Start, ns.
    pub t0: u64,
    /// End, ns.
    pub t1: u64,
    /// The thread.
    pub tid: u32,
    /// The CPU at the start.
    pub c0: u32,
    /// The CPU at the end.
    pub c1: u32,
    /// Interrupts on any CPU count (a two-party operation whose partner runs
    /// elsewhere).
    pub any_cpu: bool,
    /// Causes the operation brings about itself, not counted.
    pub expect: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Interval {
    start: u64,
    end: u64,
    cause: u16,
}

/// Sorted intervals with the longest one's length, for overlap queries.
#[derive(Debug, Default, Clone)]
struct Intervals {
    v: Vec<Interval>,
    longest: u64,
}

impl Intervals {
    fn finish(&mut self) {
        self.v.sort_by_key(|i| (i.start, i.end));
        self.longest = self.v.iter().map(|i| i.end - i.start).max().unwrap_or(0);
    }

    /// The causes of every interval overlapping `[a, b]`.
    fn overlapping(&self, a: u64, b: u64) -> u16 {
        // Intervals starting after `b` cannot overlap; those starting before
        // `a − longest` end before `a`.
        let hi = self.v.partition_point(|i| i.start <= b);
        let lo_start = a.saturating_sub(self.longest);
        let lo = self.v[..hi].partition_point(|i| i.start < lo_start);
        let mut set = 0;
        for i in &self.v[lo..hi] {
            if i.end >= a {
                set |= i.cause;
            }
        }
        set
    }
}

/// Whether a sorted list holds a time in `[a, b]`.
fn any_in(sorted: &[u64], a: u64, b: u64) -> bool {
    let i = sorted.partition_point(|&t| t < a);
    i < sorted.len() && sorted[i] <= b
}

/// The kernel's events arranged for queries.
#[derive(Debug, Default, Clone)]
pub struct KernelIndex {
    interrupts: BTreeMap<u32, Intervals>,
    all_interrupts: Intervals,
    switches: BTreeMap<u32, Vec<u64>>,
    faults: BTreeMap<u32, Vec<u64>>,
    migrations: BTreeMap<u32, Vec<u64>>,
    lost: BTreeMap<u32, Intervals>,
    guard: u64,
}

/// The cause bit of an interrupt's entry or exit, and whether it is the entry.
pub(super) fn interrupt_cause(k: KernelKind) -> Option<(u16, bool)> {
    match k {
        KernelKind::TimerEntry => Some((bits::TIMER, true)),
        KernelKind::TimerExit => Some((bits::TIMER, false)),
        KernelKind::IrqEntry => Some((bits::IRQ, true)),
        KernelKind::IrqExit => Some((bits::IRQ, false)),
        KernelKind::SoftirqEntry => Some((bits::SOFTIRQ, true)),
        KernelKind::SoftirqExit => Some((bits::SOFTIRQ, false)),
        KernelKind::IpiEntry => Some((bits::IPI, true)),
        KernelKind::IpiExit => Some((bits::IPI, false)),
        _ => None,
    }
}

impl KernelIndex {
    /// Arranges `events` (any order) and the kernel's losses by CPU, with a guard
    /// band of `guard_ns` around each event. `first`–`last` is the span the trace
    /// covers (for an interrupt whose entry or exit it missed).
    pub fn new(
        events: &[KernelEvent],
        lost: &[(u32, Lost)],
        guard_ns: u64,
        first: u64,
        last: u64,
    ) -> KernelIndex {
        let mut k = KernelIndex {
            guard: guard_ns,
            ..KernelIndex::default()
        };
        let mut sorted: Vec<&KernelEvent> = events.iter().collect();
        sorted.sort_by_key(|e| e.ts);
        // Open interrupts per (CPU, cause): a stack, since interrupts nest.
        let mut open: BTreeMap<(u32, u16), Vec<u64>> = BTreeMap::new();
        let push = |k: &mut KernelIndex, cpu: u32, iv: Interval| {
            let g = guard_ns;
            let iv = Interval {
                start: iv.start.saturating_sub(g),
                end: iv.end.saturating_add(g),
                cause: iv.cause,
            };
            k.interrupts.entry(cpu).or_default().v.push(iv);
            k.all_interrupts.v.push(iv);
        };
        for e in sorted {
            if let Some((cause, entry)) = interrupt_cause(e.kind) {
                let stack = open.entry((e.cpu, cause)).or_default();
                if entry {
                    stack.push(e.ts);
                } else {
                    let start = stack.pop().unwrap_or(first.min(e.ts));
                    push(
                        &mut k,
                        e.cpu,
                        Interval {
                            start,
                            end: e.ts,
                            cause,
                        },
                    );
                }
                continue;
            }
            match e.kind {
                KernelKind::Switch => k.switches.entry(e.cpu).or_default().push(e.ts),
                KernelKind::Fault => k.faults.entry(e.tid).or_default().push(e.ts),
                KernelKind::Migrate => k.migrations.entry(e.tid).or_default().push(e.ts),
                _ => {}
            }
        }
        for ((cpu, cause), starts) in open {
            for start in starts {
                push(
                    &mut k,
                    cpu,
                    Interval {
                        start,
                        end: last.max(start),
                        cause,
                    },
                );
            }
        }
        for (cpu, l) in lost {
            k.lost.entry(*cpu).or_default().v.push(Interval {
                start: l.from,
                end: l.to,
                cause: bits::LOST,
            });
        }
        for iv in k.interrupts.values_mut().chain(k.lost.values_mut()) {
            iv.finish();
        }
        k.all_interrupts.finish();
        for v in k
            .switches
            .values_mut()
            .chain(k.faults.values_mut())
            .chain(k.migrations.values_mut())
        {
            v.sort_unstable();
        }
        k
    }

    /// What perturbed the span, as bits (0: clean).
    pub fn causes(&self, q: &Query) -> u16 {
        let g = self.guard;
        let (a, b) = (q.t0.saturating_sub(g), q.t1.saturating_add(g));
        let cpus: &[u32] = if q.c0 == q.c1 {
            &[q.c0][..]
        } else {
            &[q.c0, q.c1][..]
        };
        let mut set = 0;
        if q.any_cpu {
            set |= self.all_interrupts.overlapping(q.t0, q.t1);
        } else {
            for c in cpus {
                if let Some(iv) = self.interrupts.get(c) {
                    set |= iv.overlapping(q.t0, q.t1);
                }
            }
        }
        for c in cpus {
            if self.switches.get(c).is_some_and(|v| any_in(v, a, b)) {
                set |= bits::SWITCH;
            }
            if let Some(l) = self.lost.get(c) {
                set |= l.overlapping(q.t0, q.t1);
            }
        }
        if self.faults.get(&q.tid).is_some_and(|v| any_in(v, a, b)) {
            set |= bits::FAULT;
        }
        if q.c0 != q.c1 || self.migrations.get(&q.tid).is_some_and(|v| any_in(v, a, b)) {
            set |= bits::MIGRATE;
        }
        set & !q.expect
    }

    /// The guard band, ns.
    pub fn guard(&self) -> u64 {
        self.guard
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::testing::kernel as ev;

    fn q(t0: u64, t1: u64, c: u32) -> Query {
        Query {
            t0,
            t1,
            tid: 7,
            c0: c,
            c1: c,
            any_cpu: false,
            expect: 0,
        }
    }

    #[test]
    fn each_cause_is_found_where_it_happened_and_only_there() {
        use bits::*;
        use KernelKind::*;
        let events = [
            ev(1000, 0, 99, TimerEntry),
            ev(1100, 0, 99, TimerExit),
            ev(5000, 1, 99, IrqEntry),
            ev(5050, 1, 99, IrqExit),
            ev(9000, 0, 7, Switch),
            ev(12000, 1, 7, Fault),
            ev(12000, 1, 8, Fault),
            ev(15000, 0, 7, Migrate),
        ];
        let lost = [(
            1,
            Lost {
                from: 20_000,
                to: 21_000,
                count: 3,
            },
        )];
        let k = KernelIndex::new(&events, &lost, 10, 0, 30_000);
        let mut moved = q(100, 200, 0);
        moved.c1 = 1;
        let (anywhere, mut any_cpu) = (q(4000, 6000, 0), q(4000, 6000, 0));
        any_cpu.any_cpu = true;
        let mut excused = q(8000, 10_000, 0);
        excused.expect = SWITCH;
        for (query, want, why) in [
            (q(900, 1200, 0), TIMER, "a tick"),
            (q(1111, 1200, 0), 0, "after the exit and its guard"),
            (q(1105, 1200, 0), TIMER, "inside the guard band"),
            (q(900, 1200, 1), 0, "another CPU"),
            (q(5010, 5020, 1), IRQ, "a span inside the interrupt"),
            (q(8000, 10_000, 0), SWITCH, "a switch"),
            (q(11_000, 13_000, 1), FAULT, "its own fault only"),
            (q(14_000, 16_000, 1), MIGRATE, "a migration"),
            (q(20_500, 20_600, 1), LOST, "a loss"),
            (moved, MIGRATE, "ended on another CPU"),
            (anywhere, 0, "an interrupt on another CPU"),
            (any_cpu, IRQ, "an interrupt on any CPU"),
            (excused, 0, "an expected switch"),
        ] {
            assert_eq!(k.causes(&query), want, "{why}");
        }
    }

    #[test]
    fn an_interrupt_cut_by_the_trace_edges_covers_to_the_edge() {
        use KernelKind::*;
        let events = [ev(500, 0, 1, SoftirqExit), ev(9000, 0, 1, IpiEntry)];
        let k = KernelIndex::new(&events, &[], 0, 100, 10_000);
        assert_eq!(k.causes(&q(100, 200, 0)), bits::SOFTIRQ);
        assert_eq!(k.causes(&q(9500, 9999, 0)), bits::IPI);
        assert_eq!(k.causes(&q(600, 8000, 0)), 0);
    }

    /// The brute-force join: every event against every span.
    fn oracle(
        events: &[KernelEvent],
        guard: u64,
        first: u64,
        last: u64,
        q: &Query,
    ) -> u16 {
        let mut set = 0;
        let (a, b) = (q.t0.saturating_sub(guard), q.t1 + guard);
        let on = |cpu: u32| q.any_cpu || cpu == q.c0 || cpu == q.c1;
        for (i, e) in events.iter().enumerate() {
            if let Some((cause, true)) = interrupt_cause(e.kind) {
                // Its exit: the first later exit of the same cause on the CPU that
                // closes it (interrupts of one cause on one CPU do not nest here).
                let end = events[i + 1..]
                    .iter()
                    .find(|x| {
                        x.cpu == e.cpu && interrupt_cause(x.kind) == Some((cause, false))
                    })
                    .map_or(last.max(e.ts), |x| x.ts);
                if on(e.cpu) && e.ts.saturating_sub(guard) <= q.t1 && end + guard >= q.t0
                {
                    set |= cause;
                }
            }
            if let Some((cause, false)) = interrupt_cause(e.kind) {
                // Was it opened? Replay the entries and exits before it on its CPU.
                let mut depth = 0usize;
                for x in events[..i].iter().filter(|x| x.cpu == e.cpu) {
                    match interrupt_cause(x.kind) {
                        Some((c, true)) if c == cause => depth += 1,
                        Some((c, false)) if c == cause => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                }
                if depth == 0
                    && on(e.cpu)
                    && first.min(e.ts).saturating_sub(guard) <= q.t1
                    && e.ts + guard >= q.t0
                {
                    set |= cause;
                }
            }
            let in_span = e.ts >= a && e.ts <= b;
            match e.kind {
                KernelKind::Switch if in_span && (e.cpu == q.c0 || e.cpu == q.c1) => {
                    set |= bits::SWITCH
                }
                KernelKind::Fault if in_span && e.tid == q.tid => set |= bits::FAULT,
                KernelKind::Migrate if in_span && e.tid == q.tid => set |= bits::MIGRATE,
                _ => {}
            }
        }
        if q.c0 != q.c1 {
            set |= bits::MIGRATE;
        }
        set & !q.expect
    }

    #[test]
    fn the_index_agrees_with_the_brute_force_join_on_random_traces() {
        use KernelKind::*;
        let mut s = 0x1234_5678_9abc_def0u64;
        let mut next = move |n: u64| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s % n
        };
        for _ in 0..300 {
            let mut events = Vec::new();
            let mut t = 0;
            // Interrupts of each cause on each CPU as non-nested entry/exit pairs,
            // sometimes cut at the edges; switches, faults and migrations anywhere.
            for _ in 0..next(40) {
                t += 1 + next(500);
                let cpu = next(3) as u32;
                let (entry, exit) = *[
                    (TimerEntry, TimerExit),
                    (IrqEntry, IrqExit),
                    (SoftirqEntry, SoftirqExit),
                    (IpiEntry, IpiExit),
                ]
                .get(next(4) as usize)
                .unwrap();
                match next(10) {
                    0 => events.push(ev(t, cpu, 1, exit)),
                    1 => events.push(ev(t, cpu, 1, entry)),
                    _ => {
                        events.push(ev(t, cpu, 1, entry));
                        events.push(ev(t + 1 + next(200), cpu, 1, exit));
                    }
                }
                if next(3) == 0 {
                    let kind = [Switch, Fault, Migrate][next(3) as usize];
                    events.push(ev(
                        t + next(300),
                        next(3) as u32,
                        7 + next(2) as u32,
                        kind,
                    ));
                }
            }
            // Keep one open interrupt per (CPU, cause) at a time, as real ones are.
            events.sort_by_key(|e| e.ts);
            let mut fine = Vec::new();
            let mut open = std::collections::BTreeSet::new();
            for e in events {
                match interrupt_cause(e.kind) {
                    Some((c, true)) => {
                        if open.insert((e.cpu, c)) {
                            fine.push(e);
                        }
                    }
                    Some((c, false)) => {
                        open.remove(&(e.cpu, c));
                        fine.push(e);
                    }
                    None => fine.push(e),
                }
            }
            let last = t + 1000;
            let guard = next(30);
            let k = KernelIndex::new(&fine, &[], guard, 0, last);
            for _ in 0..50 {
                let t0 = next(last);
                let t1 = t0 + next(400);
                let c0 = next(3) as u32;
                let c1 = if next(5) == 0 { next(3) as u32 } else { c0 };
                let query = Query {
                    t0,
                    t1,
                    tid: 7,
                    c0,
                    c1,
                    any_cpu: next(4) == 0,
                    expect: if next(4) == 0 { bits::SWITCH } else { 0 },
                };
                assert_eq!(
                    k.causes(&query),
                    oracle(&fine, guard, 0, last, &query),
                    "{query:?} over {fine:?}"
                );
            }
        }
    }
}
