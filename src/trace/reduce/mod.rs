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

use super::cull::{KernelIndex, Query};
use super::format::{self, Event, Index, KernelEvent, Meta, UserEvent};
use crate::harness::causes::cause_names;
use serde::Serialize;
use std::collections::BTreeMap;

/// One side of an interval: an event id, maybe with an argument condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The event id.
    pub id: u32,
    /// The argument condition.
    pub arg: ArgCond,
}

/// An argument condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgCond {
    /// Any argument.
    Any,
    /// Exactly this argument.
    Is(u64),
    /// (END only) the same argument as its START.
    SameAsStart,
}

/// One kind of interval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntervalSpec {
    /// Its name.
    pub name: String,
    /// What begins it.
    pub start: Endpoint,
    /// What ends it.
    pub end: Endpoint,
    /// START and END must be events of the same thread.
    pub same_thread: bool,
}

/// Parses a spec; `names` resolves event names. Errors name the statement and what is
/// wrong.
pub fn parse_spec(
    text: &str,
    names: &BTreeMap<u32, String>,
) -> Result<Vec<IntervalSpec>, String> {
    let by_name: BTreeMap<&str, u32> =
        names.iter().map(|(id, n)| (n.as_str(), *id)).collect();
    let mut out: Vec<IntervalSpec> = Vec::new();
    for stmt in text
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .flat_map(|l| l.split(';'))
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let bad = |why: &str| format!("'{stmt}': {why}");
        let rest = stmt
            .strip_prefix("interval")
            .filter(|r| r.starts_with(char::is_whitespace))
            .ok_or_else(|| bad("a statement begins with 'interval'"))?;
        let (name, body) = rest
            .split_once('=')
            .ok_or_else(|| bad("write interval NAME = START -> END"))?;
        let name = name.trim();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
        {
            return Err(bad("the interval needs a name of letters, digits, _ - ."));
        }
        if out.iter().any(|s| s.name == name) {
            return Err(bad("this name is used twice"));
        }
        let (body, scope) = match body.split_once('[') {
            Some((b, s)) => (
                b,
                Some(
                    s.trim_end()
                        .strip_suffix(']')
                        .ok_or_else(|| bad("an option list ends with ']'"))?,
                ),
            ),
            None => (body, None),
        };
        let same_thread =
            match scope.map(|s| s.split_whitespace().collect::<Vec<_>>().join(" ")) {
                None => true,
                Some(s) if s == "same thread" => true,
                Some(s) if s == "any thread" => false,
                Some(s) => {
                    return Err(bad(&format!(
                        "unknown option [{s}] (same thread or any thread)"
                    )))
                }
            };
        let (start, end) = body
            .split_once("->")
            .ok_or_else(|| bad("write START -> END"))?;
        let (end, same_thread) = match (scope, unbracketed_scope(end, &by_name)) {
            (None, Some((end, same))) => (end, same),
            (Some(_), Some(_)) => return Err(bad("the scope is given twice")),
            (_, None) => (end, same_thread),
        };
        let start = endpoint(start.trim(), &by_name, false).map_err(|w| bad(&w))?;
        let end = endpoint(end.trim(), &by_name, true).map_err(|w| bad(&w))?;
        out.push(IntervalSpec {
            name: name.to_string(),
            start,
            end,
            same_thread,
        });
    }
    if out.is_empty() {
        return Err(
            "the spec names no interval (write interval NAME = START -> END)".into(),
        );
    }
    Ok(out)
}

/// An END followed by its scope without brackets, `end any thread`: the END and
/// whether it is `same thread`. None when the text does not end with a scope, or when
/// the whole text is an event's name.
fn unbracketed_scope<'a>(
    end: &'a str,
    names: &BTreeMap<&str, u32>,
) -> Option<(&'a str, bool)> {
    let end = end.trim();
    if names.contains_key(end) {
        return None;
    }
    let before = end.strip_suffix("thread")?.trim_end();
    for (word, same) in [("same", true), ("any", false)] {
        if let Some(ev) = before.strip_suffix(word) {
            if ev.ends_with(|c: char| c.is_whitespace() || c == ')')
                && !ev.trim().is_empty()
            {
                return Some((ev, same));
            }
        }
    }
    None
}

fn endpoint(
    text: &str,
    names: &BTreeMap<&str, u32>,
    is_end: bool,
) -> Result<Endpoint, String> {
    let (event, cond) = match text.split_once('(') {
        Some((e, c)) => (
            e.trim(),
            Some(
                c.trim()
                    .strip_suffix(')')
                    .ok_or("a condition ends with ')'")?
                    .trim(),
            ),
        ),
        None => (text, None),
    };
    if event.is_empty() {
        return Err("an event is missing".into());
    }
    if is_end && !names.contains_key(event) {
        if let Some((first, rest)) = event.split_once(char::is_whitespace) {
            if first.parse::<u32>().is_ok() || names.contains_key(first) {
                return Err(format!(
                    "'{}' after the END '{first}' is not a scope: write same thread \
                     (the default) or any thread, with or without brackets",
                    rest.trim()
                ));
            }
        }
    }
    let id = match event.parse::<u32>() {
        Ok(id) => id,
        Err(_) => *names.get(event).ok_or_else(|| {
            let known: Vec<&str> = names.keys().copied().collect();
            if known.is_empty() {
                format!(
                    "no event is named '{event}' in this trace (it names none; use ids)"
                )
            } else {
                format!(
                    "no event is named '{event}' in this trace (it names {})",
                    known.join(", ")
                )
            }
        })?,
    };
    let arg = match cond {
        None => ArgCond::Any,
        Some(c) => {
            let v = c
                .strip_prefix("arg")
                .map(str::trim_start)
                .and_then(|c| c.strip_prefix('='))
                .map(str::trim)
                .ok_or("a condition is (arg=N) or, on an END, (arg=start)")?;
            if v == "start" {
                if !is_end {
                    return Err("(arg=start) belongs on the END".into());
                }
                ArgCond::SameAsStart
            } else {
                ArgCond::Is(
                    v.parse()
                        .map_err(|_| format!("'{v}' is not an argument value"))?,
                )
            }
        }
    };
    Ok(Endpoint { id, arg })
}

/// Streaming statistics of one set of values.
#[derive(Debug, Clone, Default)]
pub struct Acc {
    n: u64,
    mean: f64,
    m2: f64,
    min: f64,
    max: f64,
    hist: Hist,
}

impl Acc {
    /// Adds a value.
    pub fn add(&mut self, v: f64) {
        self.n += 1;
        if self.n == 1 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        let d = v - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (v - self.mean);
        self.hist.add(v);
    }

    /// The summary, or None without values.
    pub fn summary(&self) -> Option<Stats> {
        (self.n > 0).then(|| Stats {
            n: self.n,
            median_ns: self.hist.quantile(0.5, self.min, self.max),
            mean_ns: self.mean,
            sd_ns: if self.n > 1 {
                (self.m2 / (self.n - 1) as f64).sqrt()
            } else {
                0.0
            },
            min_ns: self.min,
            max_ns: self.max,
            p90_ns: self.hist.quantile(0.9, self.min, self.max),
            p99_ns: self.hist.quantile(0.99, self.min, self.max),
        })
    }
}

/// A log-linear histogram of non-negative values (negative ones count as 0): exact
/// integers below 2048 ns, then 1024 buckets per power of two.
#[derive(Debug, Clone, Default)]
pub struct Hist {
    counts: Vec<u64>,
    n: u64,
}

const SUB: u64 = 1024;

fn bucket(v: u64) -> usize {
    if v < 2 * SUB {
        return v as usize;
    }
    let top = 63 - v.leading_zeros() as u64; // v in [2^top, 2^(top+1))
    let shift = top - 10; // so that v >> shift is in [SUB, 2 SUB)
    (2 * SUB + (shift - 1) * SUB + ((v >> shift) - SUB)) as usize
}

fn bucket_mid(i: usize) -> f64 {
    let i = i as u64;
    if i < 2 * SUB {
        return i as f64;
    }
    let shift = (i - 2 * SUB) / SUB + 1;
    let m = (i - 2 * SUB) % SUB + SUB;
    ((m as f64) + 0.5) * (1u64 << shift) as f64
}

impl Hist {
    fn add(&mut self, v: f64) {
        let b = bucket(v.max(0.0).round() as u64);
        if b >= self.counts.len() {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] += 1;
        self.n += 1;
    }

    /// The `q` quantile (nearest rank), clamped to the exact extremes.
    fn quantile(&self, q: f64, min: f64, max: f64) -> f64 {
        if self.n == 0 {
            return f64::NAN;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return bucket_mid(i).clamp(min.max(0.0), max.max(0.0));
            }
        }
        max
    }
}

/// A summary of values, ns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    /// How many.
    pub n: u64,
    /// Median.
    pub median_ns: f64,
    /// Mean.
    pub mean_ns: f64,
    /// Standard deviation.
    pub sd_ns: f64,
    /// Minimum.
    pub min_ns: f64,
    /// Maximum.
    pub max_ns: f64,
    /// 90th percentile.
    pub p90_ns: f64,
    /// 99th percentile.
    pub p99_ns: f64,
}

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

/// An open START: when, where and by whom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Start {
    /// Its time, ns.
    pub ts: u64,
    /// Its CPU.
    pub cpu: u32,
    /// Its argument.
    pub arg: u64,
    /// Its thread.
    pub tid: u32,
}

/// Pairs STARTs with ENDs into intervals, kind by kind, as user events arrive in time
/// order: nesting, `(arg=start)` and the unmatched and open counts of the spec
/// language. Shared by `reduce` and `export`.
pub struct Pairer<'s> {
    spec: &'s [IntervalSpec],
    stacks: Vec<BTreeMap<u32, Vec<Start>>>,
    unmatched: Vec<u64>,
}

impl<'s> Pairer<'s> {
    /// A pairer for `spec`.
    pub fn new(spec: &'s [IntervalSpec]) -> Pairer<'s> {
        Pairer {
            spec,
            stacks: vec![BTreeMap::new(); spec.len()],
            unmatched: vec![0; spec.len()],
        }
    }

    /// Feeds event `e` of thread `tid`; `closed(kind, start, end)` is called for each
    /// interval it ends.
    pub fn event(
        &mut self,
        tid: u32,
        e: &UserEvent,
        mut closed: impl FnMut(usize, Start, &UserEvent),
    ) {
        for (i, s) in self.spec.iter().enumerate() {
            let key = if s.same_thread { tid } else { 0 };
            let ends = e.id == s.end.id && matches_arg(s.end.arg, e.arg);
            let starts = e.id == s.start.id && matches_arg(s.start.arg, e.arg);
            // An event that both ends and starts (A -> A) ends first: back-to-back
            // intervals.
            if ends {
                let stack = self.stacks[i].entry(key).or_default();
                let pos = match s.end.arg {
                    ArgCond::SameAsStart => stack.iter().rposition(|o| o.arg == e.arg),
                    _ => stack.len().checked_sub(1),
                };
                match pos {
                    Some(p) => closed(i, stack.remove(p), e),
                    None if !starts => self.unmatched[i] += 1,
                    None => {}
                }
            }
            if starts {
                self.stacks[i].entry(key).or_default().push(Start {
                    ts: e.ts,
                    cpu: e.cpu,
                    arg: e.arg,
                    tid,
                });
            }
        }
    }

    /// ENDs of kind `i` that had no open START.
    pub fn unmatched(&self, i: usize) -> u64 {
        self.unmatched[i]
    }

    /// STARTs of kind `i` still open.
    pub fn open(&self, i: usize) -> u64 {
        self.stacks[i].values().map(|v| v.len() as u64).sum()
    }
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
    let mut kernel: Vec<KernelEvent> = Vec::new();
    for chunks in index.kernel.values() {
        kernel.extend(format::read_kernel_events(file, chunks)?);
    }
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

fn matches_arg(c: ArgCond, arg: u64) -> bool {
    match c {
        ArgCond::Any | ArgCond::SameAsStart => true,
        ArgCond::Is(v) => v == arg,
    }
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

/// The reduction as a table: the memo's two sets of numbers.
pub fn render(r: &Reduction) -> String {
    use crate::draw::units::fmt_ns;
    let mut s = format!(
        "event cost {} subtracted from every interval · guard band {} · user events {} ({} lost) · kernel events {} ({} lost)\nkernel: {}\n",
        fmt_ns(r.event_cost_ns),
        fmt_ns(r.guard_ns as f64),
        r.user_events,
        r.user_lost,
        r.kernel_events,
        r.kernel_lost,
        r.kernel
    );
    if r.truncated {
        s += "warning: the trace ends in the middle of a chunk (the recording was cut short)\n";
    }
    if r.user_lost > 0 {
        s += &format!(
            "warning: {} user events were lost; intervals around them may be missing or unmatched\n",
            r.user_lost
        );
    }
    let row = |label: &str, st: &Option<Stats>| match st {
        Some(st) => format!(
            "  {label:<6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
            st.n,
            fmt_ns(st.median_ns),
            fmt_ns(st.mean_ns),
            fmt_ns(st.sd_ns),
            fmt_ns(st.min_ns),
            fmt_ns(st.p90_ns),
            fmt_ns(st.p99_ns),
            fmt_ns(st.max_ns)
        ),
        None => format!("  {label:<6} {:>10}\n", 0),
    };
    for k in &r.intervals {
        s += &format!(
            "\n{}\n  {:<6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
            k.name, "", "count", "median", "mean", "SD", "min", "p90", "p99", "max"
        );
        s += &row("all", &k.all);
        if r.culling {
            s += &row("clean", &k.clean);
            let causes: Vec<String> = k
                .culled_by
                .iter()
                .map(|(c, n)| format!("{n} {c}"))
                .collect();
            s += &format!(
                "  culled {}{}\n",
                k.culled,
                if causes.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", causes.join(", "))
                }
            );
        } else {
            s += "  clean: no kernel events in this trace, so nothing could be culled\n";
        }
        if let Some(raw) = k.raw_median_ns {
            s += &format!("  uncorrected median {}", fmt_ns(raw));
        }
        s += &format!("; unmatched ends {}, open starts {}\n", k.unmatched, k.open);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::format::{
        file_header, write_chunk, write_meta, ChunkKind, KernelKind, Lost, UserEvent,
    };

    fn names() -> BTreeMap<u32, String> {
        BTreeMap::from([(1, "begin".to_string()), (2, "end".to_string())])
    }

    #[test]
    fn the_scope_reads_with_or_without_brackets() {
        for (text, same) in [
            ("interval a = begin -> end", true),
            ("interval a = begin -> end same thread", true),
            ("interval a = begin -> end [same thread]", true),
            ("interval a = begin -> end any thread", false),
            ("interval a = begin -> end  any   thread ", false),
            ("interval a = begin -> end [any thread]", false),
            ("interval a = begin -> end(arg=start) any thread", false),
            ("interval a = 1 -> 2 any thread; interval b = 1 -> 2", false),
        ] {
            let s = parse_spec(text, &names()).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(s[0].same_thread, same, "{text}");
            assert_eq!(s[0].end.id, 2, "{text}");
        }
        // An event whose name ends like a scope is the event.
        let odd =
            BTreeMap::from([(1, "begin".to_string()), (2, "end any thread".to_string())]);
        let s = parse_spec("interval a = begin -> end any thread", &odd).unwrap();
        assert!(s[0].same_thread && s[0].end.id == 2);
        let e = parse_spec("interval a = 1 -> 2 any thread [same thread]", &names());
        assert!(e.unwrap_err().contains("twice"));
    }

    #[test]
    fn specs_parse_and_bad_ones_say_what_is_wrong() {
        let s = parse_spec(
            "# two kinds\ninterval call = begin -> end\ninterval tagged = 1(arg=3) -> 2(arg=start) [any thread]",
            &names(),
        )
        .unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(
            s[0].start,
            Endpoint {
                id: 1,
                arg: ArgCond::Any
            }
        );
        assert!(s[0].same_thread && !s[1].same_thread);
        assert_eq!(s[1].start.arg, ArgCond::Is(3));
        assert_eq!(s[1].end.arg, ArgCond::SameAsStart);
        for (bad, says) in [
            ("", "names no interval"),
            ("intervalx = 1 -> 2", "begins with 'interval'"),
            ("interval = 1 -> 2", "name"),
            ("interval a = 1 2", "START -> END"),
            ("interval a = nope -> 2", "no event is named 'nope'"),
            ("interval a = 1(arg=start) -> 2", "belongs on the END"),
            ("interval a = 1 -> 2 [sideways]", "unknown option"),
            (
                "interval a = 1 -> end sideways",
                "'sideways' after the END 'end'",
            ),
            ("interval a = 1 -> end any threads", "is not a scope"),
            ("interval a = 1 -> 2; interval a = 1 -> 2", "used twice"),
            ("interval a = 1(arg=x) -> 2", "not an argument"),
        ] {
            let e = parse_spec(bad, &names()).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }

    #[test]
    fn the_histogram_is_exact_low_and_within_a_twentieth_percent_high() {
        for v in [0u64, 1, 2047, 2048, 5000, 123_456, 9_876_543_210] {
            let mid = bucket_mid(bucket(v));
            assert!(
                (mid - v as f64).abs() <= (v as f64 / 2048.0).max(0.5),
                "{v} -> {mid}"
            );
        }
        let mut a = Acc::default();
        for v in 1..=1000 {
            a.add(v as f64);
        }
        let s = a.summary().unwrap();
        assert_eq!(
            (s.n, s.median_ns, s.min_ns, s.max_ns, s.p90_ns),
            (1000, 500.0, 1.0, 1000.0, 900.0)
        );
        assert!((s.mean_ns - 500.5).abs() < 1e-9);
        assert!((s.sd_ns - 288.8194360957494).abs() < 1e-6);
    }

    /// A trace with two threads: thread 7 makes intervals of 100 ns at 1000, 2000,
    /// ..., one of them around a clock interrupt on its CPU, then an unmatched end and
    /// an open start; thread 8 nests one interval in another.
    fn synthetic(path: &std::path::Path) {
        let mut out = Vec::new();
        out.extend_from_slice(&file_header());
        write_meta(
            &mut out,
            &Meta::Names {
                names: vec![(1, "begin".into()), (2, "end".into())],
            },
        )
        .unwrap();
        let mut p = Vec::new();
        let put = |p: &mut Vec<u8>, ts: u64, id: u32, cpu: u32| {
            UserEvent {
                ts,
                arg: 0,
                id,
                cpu,
            }
            .put(p)
        };
        for i in 1..=10u64 {
            put(&mut p, i * 1000, 1, 0);
            put(&mut p, i * 1000 + 100, 2, 0);
        }
        put(&mut p, 20_000, 2, 0); // unmatched
        put(&mut p, 21_000, 1, 0); // open
        write_chunk(&mut out, ChunkKind::User, 7, 22, &p).unwrap();
        let mut q = Vec::new();
        put(&mut q, 500, 1, 1);
        put(&mut q, 600, 1, 1);
        put(&mut q, 650, 2, 1); // closes the inner: 50
        put(&mut q, 900, 2, 1); // closes the outer: 400
        write_chunk(&mut out, ChunkKind::User, 8, 4, &q).unwrap();
        let mut k = Vec::new();
        for (ts, kind) in [
            (3040u64, KernelKind::TimerEntry),
            (3060, KernelKind::TimerExit),
        ] {
            KernelEvent {
                ts,
                a: 0,
                tid: 7,
                cpu: 0,
                kind,
                b: 0,
            }
            .put(&mut k);
        }
        write_chunk(&mut out, ChunkKind::Kernel, 0, 2, &k).unwrap();
        let mut l = Vec::new();
        Lost {
            from: 8010,
            to: 8050,
            count: 2,
        }
        .put(&mut l);
        write_chunk(&mut out, ChunkKind::KernelLost, 0, 1, &l).unwrap();
        std::fs::write(path, out).unwrap();
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
