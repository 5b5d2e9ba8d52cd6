//! `syscost trace export`: a trace in the formats trace viewers open.
//!
//! - **perfetto**: Perfetto's protobuf (`.pftrace`, for ui.perfetto.dev and
//!   trace_processor), written packet by packet so it streams whatever the size: a
//!   clock snapshot that makes `CLOCK_MONOTONIC_RAW` (builtin clock 5) the trace's
//!   clock, a process track, a track per thread and per CPU, every user event as an
//!   instant on its thread, the kernel's interrupts as slices on their CPU and its
//!   switches, faults and migrations as instants, and, with a spec, each interval of
//!   the reduction as a slice on a track of its kind and thread, marked with what
//!   culled it.
//! - **chrome-json**: the Trace Event Format (`{"displayTimeUnit":"ns","traceEvents":
//!   [...]}`), which Perfetto and chrome://tracing open: `X` events with µs times to
//!   the ns, `i` instants, `M` names; the kernel as process 0 with a thread per CPU
//!   (1000000 + CPU). Viewers struggle beyond about a million events; the export warns.
//!
//! Field numbers are those of Perfetto's protos (`protos/perfetto/trace/`).
//!
//! This file walks the trace once for both formats ([`export`]); `perfetto` and
//! `json` are the two sinks the walk feeds.

mod json;
mod perfetto;
#[cfg(test)]
mod tests;

use super::cull::{interrupt_cause, KernelIndex, Query};
use super::format::{self, Event, Index, KernelEvent, Meta, UserEvent};
use super::reduce::{IntervalSpec, Pairer};
use crate::harness::causes::cause_names;
use json::JsonSink;
use perfetto::Perfetto;
use std::collections::BTreeMap;
use std::io::{self, Write};

/// The export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// Perfetto protobuf (.pftrace).
    Perfetto,
    /// Chrome JSON trace event format.
    ChromeJson,
}

/// Events beyond which a JSON export is likely too big for a viewer.
pub const JSON_WARN_EVENTS: u64 = 1_000_000;

/// The track (Perfetto) or thread (JSON) of interval kind `kind` on thread `tid`.
fn interval_track(kind: usize, tid: u32) -> u64 {
    ((kind as u64 + 1) << 40) | tid as u64
}

// ---------------------------------------------------------------------------------
// The walk over a trace, shared by both formats.

/// What an export writes, by kind.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Exported {
    /// User events written as instants.
    pub user_events: u64,
    /// Kernel events written.
    pub kernel_events: u64,
    /// Intervals written as slices.
    pub intervals: u64,
    /// Events (records) written in all.
    pub records: u64,
}

/// What a sink declares before the events: the process, its threads, the CPUs and the
/// interval tracks.
struct Layout {
    pid: u32,
    program: String,
    first_ts: u64,
    threads: Vec<(u32, String)>,
    cpus: Vec<u32>,
    /// Interval kind, thread and the kind's name, for each track of intervals.
    kinds: Vec<(usize, u32, String)>,
}

/// An interrupt as a slice on its CPU.
struct KernelSlice {
    start: u64,
    end: u64,
    cpu: u32,
    name: &'static str,
    /// The vector (or irq number) its entry carried.
    vector: u64,
}

/// An interval of the spec as a slice on the track of its kind and thread.
struct IntervalSlice<'a> {
    kind: usize,
    name: &'a str,
    tid: u32,
    start: u64,
    end: u64,
    /// The causes that culled it (empty: clean).
    culled: Vec<&'static str>,
}

impl IntervalSlice<'_> {
    fn track(&self) -> u64 {
        interval_track(self.kind, self.tid)
    }

    fn category(&self) -> &'static str {
        if self.culled.is_empty() {
            "interval"
        } else {
            "interval,culled"
        }
    }
}

/// A sink both formats implement.
trait Sink {
    fn begin(&mut self, layout: &Layout) -> io::Result<()>;
    /// A user event as an instant; `label` is its name, or `event ID` without one.
    fn user(&mut self, tid: u32, e: &UserEvent, label: &str) -> io::Result<()>;
    fn kernel_slice(&mut self, s: &KernelSlice) -> io::Result<()>;
    fn kernel_instant(&mut self, e: &KernelEvent) -> io::Result<()>;
    fn interval(&mut self, s: &IntervalSlice<'_>) -> io::Result<()>;
    fn end(&mut self) -> io::Result<()>;
}

impl Layout {
    /// The layout of the trace `index` describes, with a track for each kind of `spec`
    /// on each thread.
    fn of(
        file: &std::fs::File,
        index: &Index,
        spec: &[IntervalSpec],
    ) -> Result<Layout, format::FormatError> {
        let mut tnames = BTreeMap::new();
        let (mut pid, mut program) = (0, "traced program".to_string());
        // The first `open` record and the last name of each thread count.
        for m in index.meta.iter().rev() {
            match m {
                Meta::Open {
                    pid: p, program: n, ..
                } => (pid, program) = (*p, n.clone()),
                Meta::Thread { tid, name } => {
                    tnames.entry(*tid).or_insert(name.clone());
                }
                _ => {}
            }
        }
        let mut name =
            |t: u32| tnames.remove(&t).unwrap_or_else(|| format!("thread {t}"));
        let threads: Vec<(u32, String)> =
            index.user.keys().map(|&t| (t, name(t))).collect();
        let kinds = spec
            .iter()
            .enumerate()
            .flat_map(|(i, s)| threads.iter().map(move |(t, _)| (i, *t, s.name.clone())))
            .collect();
        let first_ts = format::merge(file, index)?
            .next()
            .transpose()?
            .map_or(0, |e| e.ts());
        Ok(Layout {
            pid,
            program,
            first_ts,
            threads,
            cpus: index.kernel.keys().copied().collect(),
            kinds,
        })
    }
}

fn walk(
    file: &std::fs::File,
    index: &Index,
    spec: &[IntervalSpec],
    guard_ns: u64,
    sink: &mut dyn Sink,
) -> Result<Exported, anyhow::Error> {
    let names = index.names();
    let layout = Layout::of(file, index, spec)?;
    let first_ts = layout.first_ts;
    let kernel = format::read_kernel_events(file, index.kernel.values().flatten())?;
    let last_ts = kernel.iter().map(|e| e.ts).max().unwrap_or(u64::MAX);
    let kidx = KernelIndex::new(&kernel, &index.kernel_lost, guard_ns, first_ts, last_ts);
    sink.begin(&layout)?;
    let mut n = Exported::default();
    let mut open_irq: BTreeMap<(u32, u16), Vec<(u64, u64)>> = BTreeMap::new();
    let mut pairer = Pairer::new(spec);
    for ev in format::merge(file, index)? {
        match ev? {
            Event::User { tid, event } => {
                let label = match names.get(&event.id) {
                    Some(name) if !name.is_empty() => name.clone(),
                    _ => format!("event {}", event.id),
                };
                sink.user(tid, &event, &label)?;
                n.user_events += 1;
                // Intervals end inside the pairer's callback; the sink's errors are
                // kept and returned after it.
                let mut closed = Vec::new();
                pairer.event(tid, &event, |i, start, end| {
                    closed.push((i, start, end.ts, end.cpu))
                });
                for (i, start, end_ts, end_cpu) in closed {
                    let causes = kidx.causes(&Query {
                        t0: start.ts,
                        t1: end_ts,
                        tid: start.tid,
                        c0: start.cpu,
                        c1: end_cpu,
                        any_cpu: false,
                        expect: 0,
                    });
                    sink.interval(&IntervalSlice {
                        kind: i,
                        name: &spec[i].name,
                        tid: start.tid,
                        start: start.ts,
                        end: end_ts,
                        culled: cause_names(causes),
                    })?;
                    n.intervals += 1;
                }
            }
            Event::Kernel(k) => {
                n.kernel_events += 1;
                match interrupt_cause(k.kind) {
                    Some((cause, true)) => open_irq
                        .entry((k.cpu, cause))
                        .or_default()
                        .push((k.ts, k.a)),
                    Some((cause, false)) => {
                        let (start, vector) = open_irq
                            .get_mut(&(k.cpu, cause))
                            .and_then(Vec::pop)
                            .unwrap_or((first_ts.min(k.ts), k.a));
                        sink.kernel_slice(&KernelSlice {
                            start,
                            end: k.ts,
                            cpu: k.cpu,
                            name: cause_names(cause)[0],
                            vector,
                        })?;
                    }
                    None => sink.kernel_instant(&k)?,
                }
            }
        }
    }
    sink.end()?;
    n.records = n.user_events + n.kernel_events + n.intervals;
    Ok(n)
}

/// Writes the trace in `format` to `out`; `spec` (may be empty) adds its intervals.
pub fn export(
    file: &std::fs::File,
    index: &Index,
    spec: &[IntervalSpec],
    guard_ns: u64,
    format: ExportFormat,
    out: &mut dyn Write,
) -> Result<Exported, anyhow::Error> {
    match format {
        ExportFormat::Perfetto => {
            walk(file, index, spec, guard_ns, &mut Perfetto::new(out))
        }
        ExportFormat::ChromeJson => {
            walk(file, index, spec, guard_ns, &mut JsonSink::new(out))
        }
    }
}
