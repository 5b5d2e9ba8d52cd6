//! `syscost trace reduce`: the memo's `fsm` — intervals named by the events that begin
//! and end them, reduced to their statistics twice, over all intervals and over those
//! the kernel left alone.
//!
//! # The spec language
//!
//! A spec is a list of statements, one per line or separated by `;`; `#` starts a
//! comment. Each statement names one kind of interval:
//!
//! ```text
//! interval NAME = START -> END
//! interval NAME = START -> END same thread
//! interval NAME = START -> END any thread
//! ```
//!
//! The scope after END is `same thread` (the default) or `any thread`; it may also be
//! written in brackets, `[any thread]`.
//!
//! `START` and `END` are event names (as the program named them with `sct_name`) or
//! numeric ids, optionally with an argument condition: `begin(arg=3)` matches only
//! events with argument 3, and `end(arg=start)` only an end whose argument equals its
//! start's. An interval runs from a START to the next matching END of the same thread
//! (the default) or of any thread; STARTs nest, so an END closes the most recent open
//! START. An END with no open START is counted as *unmatched*, a START never closed as
//! *open*: neither is dropped silently.
//!
//! # The figures
//!
//! An interval's value is `t_end − t_start − c`, where `c` is the cost of recording one
//! event, measured when the trace opened (the memo's Fig. 2 correction); the raw median
//! is reported too. For each kind: count, median, mean, SD, min, max, p90 and p99, once
//! for **all** intervals and once for the **clean** ones — those whose span held no
//! kernel event on their CPUs (a clock interrupt, another interrupt, a switch, their
//! own fault, a migration, or a kernel loss; see [`super::cull`]) — with the culled
//! counted by cause.
//!
//! Memory does not grow with the trace: user events are streamed chunk by chunk, mean
//! and SD are exact (Welford), and quantiles come from a log-linear histogram whose
//! buckets are at most 1/1024 of their value wide (quantiles within 0.05%, exact
//! below 2 µs). Kernel events are loaded, which is fine for their rates.
//!
//! # Layout
//!
//! This file holds the reduction itself ([`reduce`]) and what it reports; `spec` parses
//! the spec language; `pair` pairs STARTs with ENDs (shared with `export`); `acc` keeps
//! the streaming statistics; `render` writes the reduction as a table. Their public
//! items are re-exported here.

mod acc;
mod pair;
mod render;
mod spec;

pub use acc::{Acc, Hist, Stats};
pub use pair::{Pairer, Start};
pub use render::render;
pub use spec::{parse_spec, ArgCond, Endpoint, IntervalSpec};

use super::cull::{KernelIndex, Query};
use super::format::{self, Event, Index, KernelEvent, Meta};
use crate::harness::causes::cause_names;
use serde::Serialize;
use std::collections::BTreeMap;

/// One kind of interval, reduced.
#[derive(Debug, Clone, Serialize)]
pub struct KindResult {
    /// Its name.
    pub name: String,
    /// Over all intervals, corrected.
    pub all: Option<Stats>,
    /// Over the clean ones, corrected.
    pub clean: Option<Stats>,
    /// The median of all intervals before the correction.
    pub raw_median_ns: Option<f64>,
    /// Intervals culled, by cause (an interval with two causes counts under both).
    pub culled_by: BTreeMap<String, u64>,
    /// Intervals culled.
    pub culled: u64,
    /// ENDs with no open START.
    pub unmatched: u64,
    /// STARTs never closed.
    pub open: u64,
}

/// What `trace reduce` reports.
#[derive(Debug, Clone, Serialize)]
pub struct Reduction {
    /// The cost of one event subtracted from each interval, ns.
    pub event_cost_ns: f64,
    /// The guard band around kernel events, ns.
    pub guard_ns: u64,
    /// User events read.
    pub user_events: u64,
    /// User events the program lost (its rings were full).
    pub user_lost: u64,
    /// Kernel events read.
    pub kernel_events: u64,
    /// Kernel events the kernel lost.
    pub kernel_lost: u64,
    /// How the kernel's events were recorded, or why not.
    pub kernel: String,
    /// Whether culling could be done (kernel events present).
    pub culling: bool,
    /// The file ended in the middle of a chunk.
    pub truncated: bool,
    /// Each interval kind.
    pub intervals: Vec<KindResult>,
}

struct KindState {
    all: Acc,
    clean: Acc,
    raw: Acc,
    culled_by: BTreeMap<String, u64>,
    culled: u64,
}

/// One line on how the kernel's events were recorded, from the trace's metadata.
pub fn kernel_line(index: &Index) -> String {
    for m in index.meta.iter().rev() {
        if let Meta::Kernel {
            method,
            unavailable,
            ..
        } = m
        {
            return match (method.is_empty(), unavailable.is_empty()) {
                (false, true) => method.clone(),
                (false, false) => format!("{method}; {unavailable}"),
                (true, _) => unavailable.clone(),
            };
        }
    }
    "none recorded (no kernel section in this trace)".into()
}

/// Reduces the trace in `file` by `spec` with kernel events widened by `guard_ns`.
pub fn reduce(
    file: &std::fs::File,
    index: &Index,
    spec: &[IntervalSpec],
    guard_ns: u64,
) -> Result<Reduction, format::FormatError> {
    let cost = index.event_cost_ns();
    let kernel = format::read_kernel_events(file, index.kernel.values().flatten())?;
    let (first, last) = span_of(index, &kernel);
    let kidx = KernelIndex::new(&kernel, &index.kernel_lost, guard_ns, first, last);
    let culling = !kernel.is_empty() || !index.kernel.is_empty();
    let mut states: Vec<KindState> = spec
        .iter()
        .map(|_| KindState {
            all: Acc::default(),
            clean: Acc::default(),
            raw: Acc::default(),
            culled_by: BTreeMap::new(),
            culled: 0,
        })
        .collect();
    // User events only, in time order across threads.
    let users = Index {
        kernel: BTreeMap::new(),
        ..index.clone()
    };
    let mut pairer = Pairer::new(spec);
    for ev in format::merge(file, &users)? {
        let Event::User { tid, event } = ev? else {
            continue;
        };
        pairer.event(tid, &event, |i, start, end| {
            let st = &mut states[i];
            let raw = end.ts.saturating_sub(start.ts) as f64;
            let v = raw - cost;
            st.all.add(v);
            st.raw.add(raw);
            let causes = if culling {
                kidx.causes(&Query {
                    t0: start.ts,
                    t1: end.ts,
                    tid: start.tid,
                    c0: start.cpu,
                    c1: end.cpu,
                    any_cpu: false,
                    expect: 0,
                })
            } else {
                0
            };
            if causes == 0 {
                st.clean.add(v);
            } else {
                st.culled += 1;
                for c in cause_names(causes) {
                    *st.culled_by.entry(c.to_string()).or_insert(0) += 1;
                }
            }
        });
    }
    let intervals = spec
        .iter()
        .zip(states)
        .enumerate()
        .map(|(i, (s, st))| KindResult {
            name: s.name.clone(),
            all: st.all.summary(),
            clean: st.clean.summary(),
            raw_median_ns: st.raw.summary().map(|r| r.median_ns),
            culled_by: st.culled_by,
            culled: st.culled,
            unmatched: pairer.unmatched(i),
            open: pairer.open(i),
        })
        .collect();
    Ok(Reduction {
        event_cost_ns: cost,
        guard_ns,
        user_events: index.user_events,
        user_lost: index.user_lost_total(),
        kernel_events: index.kernel_events,
        kernel_lost: index.kernel_lost_total(),
        kernel: kernel_line(index),
        culling,
        truncated: index.truncated,
        intervals,
    })
}

/// The first and last time the trace covers (its metadata's open and close, else its
/// kernel events).
fn span_of(index: &Index, kernel: &[KernelEvent]) -> (u64, u64) {
    let mut first = kernel.iter().map(|e| e.ts).min().unwrap_or(0);
    let mut last = kernel.iter().map(|e| e.ts).max().unwrap_or(u64::MAX);
    for m in &index.meta {
        match m {
            Meta::Open { opened_ns, .. } => first = first.min(*opened_ns),
            Meta::Close { closed_ns, .. } => last = last.max(*closed_ns),
            _ => {}
        }
    }
    (first, last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::format::{KernelKind::*, Lost};
    use crate::trace::testing::{kernel, user, write_trace};

    /// A trace with two threads: thread 7 makes intervals of 100 ns at 1000, 2000,
    /// ..., one of them around a clock interrupt on its CPU, then an unmatched end and
    /// an open start; thread 8 nests one interval in another.
    fn synthetic(path: &std::path::Path) {
        let mut p = Vec::new();
        for i in 1..=10u64 {
            p.push(user(i * 1000, 1, 0));
            p.push(user(i * 1000 + 100, 2, 0));
        }
        p.push(user(20_000, 2, 0)); // unmatched
        p.push(user(21_000, 1, 0)); // open
        let q = vec![
            user(500, 1, 1),
            user(600, 1, 1),
            user(650, 2, 1), // closes the inner: 50
            user(900, 2, 1), // closes the outer: 400
        ];
        let k = [
            kernel(3040, 0, 7, TimerEntry),
            kernel(3060, 0, 7, TimerExit),
        ];
        let lost = Lost {
            from: 8010,
            to: 8050,
            count: 2,
        };
        write_trace(path, &[(7, p), (8, q)], &k, &[lost]);
    }

    #[test]
    fn intervals_pair_nest_and_cull_with_known_answers() {
        let scratch = tempfile::Builder::new()
            .prefix("syscost-reduce-")
            .tempdir()
            .unwrap();
        let dir = scratch.path();
        let path = dir.join("t.sct");
        synthetic(&path);
        let file = std::fs::File::open(&path).unwrap();
        let index = Index::read(&file).unwrap();
        let spec = parse_spec("interval call = begin -> end", &index.names()).unwrap();
        let r = reduce(&file, &index, &spec, 0).unwrap();
        let k = &r.intervals[0];
        let all = k.all.as_ref().unwrap();
        // Ten of 100 ns, and 50 and 400 from thread 8; no event cost in this trace.
        assert_eq!(all.n, 12);
        assert_eq!(
            (all.min_ns, all.max_ns, all.median_ns),
            (50.0, 400.0, 100.0)
        );
        assert_eq!((k.unmatched, k.open), (1, 1));
        // The interval at 3000 held the tick; the one at 8000 overlaps a kernel loss.
        assert_eq!(k.culled, 2);
        assert_eq!(k.culled_by["timer"], 1);
        assert_eq!(k.culled_by["lost"], 1);
        let clean = k.clean.as_ref().unwrap();
        assert_eq!(clean.n, 10);
        assert!(r.culling);
        let text = render(&r);
        assert!(text.contains("culled 2 (1 lost, 1 timer)"), "{text}");
    }
}
