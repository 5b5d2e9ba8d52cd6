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

use super::cull::{KernelIndex, Query};
use super::format::{self, Event, Index, KernelEvent, KernelKind, Meta};
use super::reduce::{IntervalSpec, Pairer};
use crate::harness::causes::cause_names;
use json::JsonSink;
use perfetto::PerfettoSink;
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

/// A sink both formats implement.
trait Sink {
    fn begin(
        &mut self,
        index: &Index,
        first_ts: u64,
        threads: &[(u32, String)],
        cpus: &[u32],
        kinds: &[(usize, u32, String)],
    ) -> io::Result<()>;
    fn user(
        &mut self,
        ts: u64,
        tid: u32,
        cpu: u32,
        name: &str,
        id: u32,
        arg: u64,
    ) -> io::Result<()>;
    fn kernel_slice(
        &mut self,
        start: u64,
        end: u64,
        cpu: u32,
        name: &str,
        a: u64,
    ) -> io::Result<()>;
    fn kernel_instant(&mut self, e: &KernelEvent) -> io::Result<()>;
    fn interval(
        &mut self,
        kind: usize,
        name: &str,
        tid: u32,
        start: u64,
        end: u64,
        culled: &[&str],
    ) -> io::Result<()>;
    fn end(&mut self) -> io::Result<()>;
}

fn pid_of(index: &Index) -> (u32, String) {
    for m in &index.meta {
        if let Meta::Open { pid, program, .. } = m {
            return (*pid, program.clone());
        }
    }
    (0, "traced program".into())
}

fn thread_names(index: &Index) -> BTreeMap<u32, String> {
    let mut out = BTreeMap::new();
    for m in &index.meta {
        if let Meta::Thread { tid, name } = m {
            out.insert(*tid, name.clone());
        }
    }
    out
}

fn entry_pair(k: KernelKind) -> Option<(bool, &'static str)> {
    match k {
        KernelKind::TimerEntry => Some((true, "timer")),
        KernelKind::TimerExit => Some((false, "timer")),
        KernelKind::IrqEntry => Some((true, "irq")),
        KernelKind::IrqExit => Some((false, "irq")),
        KernelKind::SoftirqEntry => Some((true, "softirq")),
        KernelKind::SoftirqExit => Some((false, "softirq")),
        KernelKind::IpiEntry => Some((true, "ipi")),
        KernelKind::IpiExit => Some((false, "ipi")),
        _ => None,
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
    let tnames = thread_names(index);
    let threads: Vec<(u32, String)> = index
        .user
        .keys()
        .map(|t| {
            (
                *t,
                tnames
                    .get(t)
                    .cloned()
                    .unwrap_or_else(|| format!("thread {t}")),
            )
        })
        .collect();
    let cpus: Vec<u32> = index.kernel.keys().copied().collect();
    let mut kernel: Vec<KernelEvent> = Vec::new();
    for chunks in index.kernel.values() {
        kernel.extend(format::read_kernel_events(file, chunks)?);
    }
    let first_ts = format::merge(file, index)?
        .next()
        .transpose()?
        .map_or(0, |e| e.ts());
    let last_ts = kernel.iter().map(|e| e.ts).max().unwrap_or(u64::MAX);
    let kidx = KernelIndex::new(&kernel, &index.kernel_lost, guard_ns, first_ts, last_ts);
    let kinds: Vec<(usize, u32, String)> = spec
        .iter()
        .enumerate()
        .flat_map(|(i, s)| threads.iter().map(move |(t, _)| (i, *t, s.name.clone())))
        .collect();
    sink.begin(index, first_ts, &threads, &cpus, &kinds)?;
    let mut n = Exported::default();
    let mut open_irq: BTreeMap<(u32, &'static str), Vec<(u64, u64)>> = BTreeMap::new();
    let mut pairer = Pairer::new(spec);
    for ev in format::merge(file, index)? {
        match ev? {
            Event::User { tid, event } => {
                let name = names.get(&event.id).map_or("", String::as_str);
                sink.user(event.ts, tid, event.cpu, name, event.id, event.arg)?;
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
                    sink.interval(
                        i,
                        &spec[i].name,
                        start.tid,
                        start.ts,
                        end_ts,
                        &cause_names(causes),
                    )?;
                    n.intervals += 1;
                }
            }
            Event::Kernel(k) => {
                n.kernel_events += 1;
                match entry_pair(k.kind) {
                    Some((true, name)) => {
                        open_irq.entry((k.cpu, name)).or_default().push((k.ts, k.a))
                    }
                    Some((false, name)) => {
                        let (start, a) = open_irq
                            .get_mut(&(k.cpu, name))
                            .and_then(Vec::pop)
                            .unwrap_or((first_ts.min(k.ts), k.a));
                        sink.kernel_slice(start, k.ts, k.cpu, name, a)?;
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
            let mut sink = PerfettoSink::new(out);
            walk(file, index, spec, guard_ns, &mut sink)
        }
        ExportFormat::ChromeJson => {
            let mut sink = JsonSink::new(out);
            walk(file, index, spec, guard_ns, &mut sink)
        }
    }
}
