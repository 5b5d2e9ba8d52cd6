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

use super::cull::{KernelIndex, Query};
use super::format::{self, Event, Index, KernelEvent, KernelKind, Meta};
use super::reduce::{IntervalSpec, Pairer};
use crate::harness::causes::cause_names;
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

// ---------------------------------------------------------------------------------
// A minimal protobuf writer.

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, ((field as u64) << 3) | wire as u64);
}

fn uint(out: &mut Vec<u8>, field: u32, v: u64) {
    key(out, field, 0);
    varint(out, v);
}

fn bytes(out: &mut Vec<u8>, field: u32, b: &[u8]) {
    key(out, field, 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// Perfetto's field numbers.
mod pf {
    pub const TRACE_PACKET: u32 = 1;
    pub const CLOCK_SNAPSHOT: u32 = 6;
    pub const TIMESTAMP: u32 = 8;
    pub const SEQUENCE_ID: u32 = 10;
    pub const TRACK_EVENT: u32 = 11;
    pub const SEQUENCE_FLAGS: u32 = 13;
    pub const TIMESTAMP_CLOCK_ID: u32 = 58;
    pub const TRACK_DESCRIPTOR: u32 = 60;
    pub const SNAPSHOT_CLOCKS: u32 = 1;
    pub const SNAPSHOT_PRIMARY: u32 = 2;
    pub const CLOCK_ID: u32 = 1;
    pub const CLOCK_TIMESTAMP: u32 = 2;
    pub const TD_UUID: u32 = 1;
    pub const TD_NAME: u32 = 2;
    pub const TD_PROCESS: u32 = 3;
    pub const TD_THREAD: u32 = 4;
    pub const TD_PARENT: u32 = 5;
    pub const PD_PID: u32 = 1;
    pub const PD_NAME: u32 = 6;
    pub const THD_PID: u32 = 1;
    pub const THD_TID: u32 = 2;
    pub const THD_NAME: u32 = 5;
    pub const TE_ANNOTATIONS: u32 = 4;
    pub const TE_TYPE: u32 = 9;
    pub const TE_TRACK: u32 = 11;
    pub const TE_CATEGORIES: u32 = 22;
    pub const TE_NAME: u32 = 23;
    pub const DA_UINT: u32 = 3;
    pub const DA_STRING: u32 = 6;
    pub const DA_NAME: u32 = 10;
    pub const SLICE_BEGIN: u64 = 1;
    pub const SLICE_END: u64 = 2;
    pub const INSTANT: u64 = 3;
    /// `BUILTIN_CLOCK_MONOTONIC_RAW`.
    pub const CLOCK_MONOTONIC_RAW: u64 = 5;
    /// `SEQ_INCREMENTAL_STATE_CLEARED`.
    pub const SEQ_CLEARED: u64 = 1;
}

const SEQUENCE: u64 = 1;
const PROCESS_TRACK: u64 = 1;

fn thread_track(tid: u32) -> u64 {
    1_000_000 + tid as u64
}

fn cpu_track(cpu: u32) -> u64 {
    3_000_000_000 + cpu as u64
}

fn interval_track(kind: usize, tid: u32) -> u64 {
    ((kind as u64 + 1) << 40) | tid as u64
}

/// One annotation of a track event.
enum Note<'a> {
    Uint(&'a str, u64),
    Str(&'a str, &'a str),
}

struct Perfetto<W: Write> {
    out: W,
    buf: Vec<u8>,
    packets: u64,
}

impl<W: Write> Perfetto<W> {
    fn packet(&mut self, body: &[u8]) -> io::Result<()> {
        self.buf.clear();
        bytes(&mut self.buf, pf::TRACE_PACKET, body);
        self.packets += 1;
        self.out.write_all(&self.buf)
    }

    fn clock_snapshot(&mut self, ts: u64) -> io::Result<()> {
        let mut clock = Vec::new();
        uint(&mut clock, pf::CLOCK_ID, pf::CLOCK_MONOTONIC_RAW);
        uint(&mut clock, pf::CLOCK_TIMESTAMP, ts);
        let mut snap = Vec::new();
        bytes(&mut snap, pf::SNAPSHOT_CLOCKS, &clock);
        uint(&mut snap, pf::SNAPSHOT_PRIMARY, pf::CLOCK_MONOTONIC_RAW);
        let mut p = Vec::new();
        uint(&mut p, pf::TIMESTAMP, ts);
        bytes(&mut p, pf::CLOCK_SNAPSHOT, &snap);
        uint(&mut p, pf::SEQUENCE_ID, SEQUENCE);
        uint(&mut p, pf::SEQUENCE_FLAGS, pf::SEQ_CLEARED);
        self.packet(&p)
    }

    fn track(
        &mut self,
        uuid: u64,
        parent: Option<u64>,
        name: &str,
        thread: Option<(u32, u32)>,
        process: Option<(u32, &str)>,
    ) -> io::Result<()> {
        let mut td = Vec::new();
        uint(&mut td, pf::TD_UUID, uuid);
        if let Some(p) = parent {
            uint(&mut td, pf::TD_PARENT, p);
        }
        if !name.is_empty() {
            bytes(&mut td, pf::TD_NAME, name.as_bytes());
        }
        if let Some((pid, pname)) = process {
            let mut pd = Vec::new();
            uint(&mut pd, pf::PD_PID, pid as u64);
            bytes(&mut pd, pf::PD_NAME, pname.as_bytes());
            bytes(&mut td, pf::TD_PROCESS, &pd);
        }
        if let Some((pid, tid)) = thread {
            let mut thd = Vec::new();
            uint(&mut thd, pf::THD_PID, pid as u64);
            uint(&mut thd, pf::THD_TID, tid as u64);
            bytes(&mut thd, pf::THD_NAME, name.as_bytes());
            bytes(&mut td, pf::TD_THREAD, &thd);
        }
        let mut p = Vec::new();
        bytes(&mut p, pf::TRACK_DESCRIPTOR, &td);
        self.packet(&p)
    }

    fn event(
        &mut self,
        ts: u64,
        track: u64,
        kind: u64,
        name: &str,
        category: &str,
        notes: &[Note<'_>],
    ) -> io::Result<()> {
        let mut te = Vec::new();
        uint(&mut te, pf::TE_TYPE, kind);
        uint(&mut te, pf::TE_TRACK, track);
        if !name.is_empty() {
            bytes(&mut te, pf::TE_NAME, name.as_bytes());
        }
        if !category.is_empty() {
            bytes(&mut te, pf::TE_CATEGORIES, category.as_bytes());
        }
        for n in notes {
            let mut da = Vec::new();
            match n {
                Note::Uint(k, v) => {
                    bytes(&mut da, pf::DA_NAME, k.as_bytes());
                    uint(&mut da, pf::DA_UINT, *v);
                }
                Note::Str(k, v) => {
                    bytes(&mut da, pf::DA_NAME, k.as_bytes());
                    bytes(&mut da, pf::DA_STRING, v.as_bytes());
                }
            }
            bytes(&mut te, pf::TE_ANNOTATIONS, &da);
        }
        let mut p = Vec::new();
        uint(&mut p, pf::TIMESTAMP, ts);
        uint(&mut p, pf::TIMESTAMP_CLOCK_ID, pf::CLOCK_MONOTONIC_RAW);
        uint(&mut p, pf::SEQUENCE_ID, SEQUENCE);
        bytes(&mut p, pf::TRACK_EVENT, &te);
        self.packet(&p)
    }
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

struct PerfettoSink<W: Write> {
    p: Perfetto<W>,
}

impl<W: Write> Sink for PerfettoSink<W> {
    fn begin(
        &mut self,
        index: &Index,
        first_ts: u64,
        threads: &[(u32, String)],
        cpus: &[u32],
        kinds: &[(usize, u32, String)],
    ) -> io::Result<()> {
        self.p.clock_snapshot(first_ts)?;
        let (pid, program) = pid_of(index);
        self.p
            .track(PROCESS_TRACK, None, "", None, Some((pid, &program)))?;
        for (tid, name) in threads {
            self.p.track(
                thread_track(*tid),
                Some(PROCESS_TRACK),
                name,
                Some((pid, *tid)),
                None,
            )?;
        }
        for cpu in cpus {
            self.p.track(
                cpu_track(*cpu),
                None,
                &format!("CPU {cpu} kernel"),
                None,
                None,
            )?;
        }
        for (kind, tid, name) in kinds {
            self.p.track(
                interval_track(*kind, *tid),
                Some(thread_track(*tid)),
                &format!("{name} intervals"),
                None,
                None,
            )?;
        }
        Ok(())
    }
    fn user(
        &mut self,
        ts: u64,
        tid: u32,
        cpu: u32,
        name: &str,
        id: u32,
        arg: u64,
    ) -> io::Result<()> {
        let label = if name.is_empty() {
            format!("event {id}")
        } else {
            name.to_string()
        };
        self.p.event(
            ts,
            thread_track(tid),
            pf::INSTANT,
            &label,
            "user",
            &[
                Note::Uint("arg", arg),
                Note::Uint("cpu", cpu as u64),
                Note::Uint("id", id as u64),
            ],
        )
    }
    fn kernel_slice(
        &mut self,
        start: u64,
        end: u64,
        cpu: u32,
        name: &str,
        a: u64,
    ) -> io::Result<()> {
        self.p.event(
            start,
            cpu_track(cpu),
            pf::SLICE_BEGIN,
            name,
            "kernel",
            &[Note::Uint("vector", a)],
        )?;
        self.p
            .event(end, cpu_track(cpu), pf::SLICE_END, "", "", &[])
    }
    fn kernel_instant(&mut self, e: &KernelEvent) -> io::Result<()> {
        self.p.event(
            e.ts,
            cpu_track(e.cpu),
            pf::INSTANT,
            &e.kind.name(),
            "kernel",
            &[
                Note::Uint("tid", e.tid as u64),
                Note::Uint("a", e.a),
                Note::Uint("b", e.b as u64),
            ],
        )
    }
    fn interval(
        &mut self,
        kind: usize,
        name: &str,
        tid: u32,
        start: u64,
        end: u64,
        culled: &[&str],
    ) -> io::Result<()> {
        let by = culled.join(",");
        let notes = if by.is_empty() {
            vec![]
        } else {
            vec![Note::Str("culled_by", &by)]
        };
        let cat = if by.is_empty() {
            "interval"
        } else {
            "interval,culled"
        };
        self.p.event(
            start,
            interval_track(kind, tid),
            pf::SLICE_BEGIN,
            name,
            cat,
            &notes,
        )?;
        self.p
            .event(end, interval_track(kind, tid), pf::SLICE_END, "", "", &[])
    }
    fn end(&mut self) -> io::Result<()> {
        self.p.out.flush()
    }
}

struct JsonSink<W: Write> {
    out: W,
    first: bool,
    records: u64,
    pid: u32,
}

fn json_str(s: &str) -> String {
    // ASCII only: older viewers reject \u escapes, so anything else becomes '?'.
    let ascii: String = s
        .chars()
        .map(|c| {
            if c.is_ascii() && !c.is_ascii_control() {
                c
            } else {
                '?'
            }
        })
        .collect();
    serde_json::to_string(&ascii).unwrap_or_else(|_| "\"?\"".into())
}

fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

impl<W: Write> JsonSink<W> {
    fn item(&mut self, text: &str) -> io::Result<()> {
        if !self.first {
            self.out.write_all(b",\n")?;
        }
        self.first = false;
        self.records += 1;
        self.out.write_all(text.as_bytes())
    }
}

const KERNEL_PID: u32 = 0;

fn kernel_tid(cpu: u32) -> u64 {
    1_000_000 + cpu as u64
}

impl<W: Write> Sink for JsonSink<W> {
    fn begin(
        &mut self,
        index: &Index,
        _: u64,
        threads: &[(u32, String)],
        cpus: &[u32],
        kinds: &[(usize, u32, String)],
    ) -> io::Result<()> {
        let (pid, program) = pid_of(index);
        self.pid = pid;
        self.out
            .write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
        self.item(&format!(r#"{{"ph":"M","name":"process_name","pid":{pid},"tid":0,"args":{{"name":{}}}}}"#, json_str(&program)))?;
        for (tid, name) in threads {
            self.item(&format!(r#"{{"ph":"M","name":"thread_name","pid":{pid},"tid":{tid},"args":{{"name":{}}}}}"#, json_str(name)))?;
        }
        for (kind, tid, name) in kinds {
            let t = interval_track(*kind, *tid);
            self.item(&format!(r#"{{"ph":"M","name":"thread_name","pid":{pid},"tid":{t},"args":{{"name":{}}}}}"#, json_str(&format!("{name} intervals, thread {tid}"))))?;
        }
        if !cpus.is_empty() {
            self.item(&format!(r#"{{"ph":"M","name":"process_name","pid":{KERNEL_PID},"tid":0,"args":{{"name":"kernel"}}}}"#))?;
        }
        for cpu in cpus {
            self.item(&format!(r#"{{"ph":"M","name":"thread_name","pid":{KERNEL_PID},"tid":{},"args":{{"name":"CPU {cpu}"}}}}"#, kernel_tid(*cpu)))?;
        }
        Ok(())
    }
    fn user(
        &mut self,
        ts: u64,
        tid: u32,
        cpu: u32,
        name: &str,
        id: u32,
        arg: u64,
    ) -> io::Result<()> {
        let label = if name.is_empty() {
            format!("event {id}")
        } else {
            name.to_string()
        };
        let pid = self.pid;
        self.item(&format!(r#"{{"ph":"i","s":"t","name":{},"cat":"user","ts":{},"pid":{pid},"tid":{tid},"args":{{"id":{id},"arg":{arg},"cpu":{cpu}}}}}"#, json_str(&label), us(ts)))
    }
    fn kernel_slice(
        &mut self,
        start: u64,
        end: u64,
        cpu: u32,
        name: &str,
        a: u64,
    ) -> io::Result<()> {
        self.item(&format!(r#"{{"ph":"X","name":"{name}","cat":"kernel","ts":{},"dur":{},"pid":{KERNEL_PID},"tid":{},"args":{{"vector":{a}}}}}"#, us(start), us(end - start), kernel_tid(cpu)))
    }
    fn kernel_instant(&mut self, e: &KernelEvent) -> io::Result<()> {
        self.item(&format!(r#"{{"ph":"i","s":"t","name":"{}","cat":"kernel","ts":{},"pid":{KERNEL_PID},"tid":{},"args":{{"tid":{},"a":{},"b":{}}}}}"#, e.kind.name(), us(e.ts), kernel_tid(e.cpu), e.tid, e.a, e.b))
    }
    fn interval(
        &mut self,
        kind: usize,
        name: &str,
        tid: u32,
        start: u64,
        end: u64,
        culled: &[&str],
    ) -> io::Result<()> {
        let pid = self.pid;
        let t = interval_track(kind, tid);
        self.item(&format!(r#"{{"ph":"X","name":{},"cat":"{}","ts":{},"dur":{},"pid":{pid},"tid":{t},"args":{{"culled_by":{}}}}}"#, json_str(name), if culled.is_empty() { "interval" } else { "interval,culled" }, us(start), us(end - start), json_str(&culled.join(","))))
    }
    fn end(&mut self) -> io::Result<()> {
        self.out.write_all(b"\n]}\n")?;
        self.out.flush()
    }
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
            let mut sink = PerfettoSink {
                p: Perfetto {
                    out,
                    buf: Vec::new(),
                    packets: 0,
                },
            };
            walk(file, index, spec, guard_ns, &mut sink)
        }
        ExportFormat::ChromeJson => {
            let mut sink = JsonSink {
                out,
                first: true,
                records: 0,
                pid: 0,
            };
            walk(file, index, spec, guard_ns, &mut sink)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::format::{
        file_header, write_chunk, write_meta, ChunkKind, UserEvent,
    };
    use crate::trace::reduce::parse_spec;

    fn trace(dir: &std::path::Path) -> std::path::PathBuf {
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
        for (ts, id) in [
            (1000u64, 1u32),
            (1100, 1),
            (1150, 2),
            (1300, 2),
            (2000, 1),
            (2100, 2),
        ] {
            UserEvent {
                ts,
                arg: 0,
                id,
                cpu: 0,
            }
            .put(&mut p);
        }
        write_chunk(&mut out, ChunkKind::User, 7, 6, &p).unwrap();
        let mut k = Vec::new();
        for (ts, kind) in [
            (1120u64, KernelKind::TimerEntry),
            (1130, KernelKind::TimerExit),
            (1500, KernelKind::Switch),
        ] {
            KernelEvent {
                ts,
                a: 236,
                tid: 7,
                cpu: 0,
                kind,
                b: 0,
            }
            .put(&mut k);
        }
        write_chunk(&mut out, ChunkKind::Kernel, 0, 3, &k).unwrap();
        let path = dir.join("t.sct");
        std::fs::write(&path, out).unwrap();
        path
    }

    fn dir(name: &str) -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix(&format!("syscost-export-{name}-"))
            .tempdir()
            .unwrap()
    }

    #[test]
    fn chrome_json_parses_names_everything_and_slices_nest_per_track() {
        let d = dir("json");
        let path = trace(d.path());
        let file = std::fs::File::open(&path).unwrap();
        let index = Index::read(&file).unwrap();
        let spec = parse_spec("interval call = begin -> end", &index.names()).unwrap();
        let mut out = Vec::new();
        let n =
            export(&file, &index, &spec, 0, ExportFormat::ChromeJson, &mut out).unwrap();
        assert_eq!((n.user_events, n.kernel_events, n.intervals), (6, 3, 3));
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("{\"displayTimeUnit\":\"ns\""),
            "displayTimeUnit first"
        );
        assert!(text.is_ascii());
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        let events = doc["traceEvents"].as_array().unwrap();
        let xs: Vec<&serde_json::Value> =
            events.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(xs.len(), 4, "three intervals and one timer interrupt");
        // On each track, X events nest or follow each other.
        let mut by: BTreeMap<(u64, u64), Vec<(f64, f64)>> = BTreeMap::new();
        for x in &xs {
            let ts: f64 = x["ts"].as_f64().unwrap();
            let dur: f64 = x["dur"].as_f64().unwrap();
            by.entry((x["pid"].as_u64().unwrap(), x["tid"].as_u64().unwrap()))
                .or_default()
                .push((ts, ts + dur));
        }
        for v in by.values_mut() {
            v.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
            let mut stack: Vec<f64> = Vec::new();
            for (s, e) in v.iter() {
                while stack.last().is_some_and(|&end| end <= *s) {
                    stack.pop();
                }
                if let Some(&end) = stack.last() {
                    assert!(*e <= end, "overlapping slices on one track: {v:?}");
                }
                stack.push(*e);
            }
        }
        // The interval holding the tick says so; the nested one is 50 ns long.
        let culled: Vec<&&serde_json::Value> = xs
            .iter()
            .filter(|x| x["args"]["culled_by"] == "timer")
            .collect();
        assert_eq!(culled.len(), 2, "both intervals around the tick");
        assert!(xs.iter().any(|x| x["dur"].as_f64() == Some(0.05)));
    }

    /// Reads a protobuf message's top-level fields: (field, wire type, value or bytes).
    fn fields(mut b: &[u8]) -> Vec<(u32, u8, u64, Vec<u8>)> {
        fn varint(b: &mut &[u8]) -> u64 {
            let mut v = 0u64;
            let mut shift = 0;
            loop {
                let byte = b[0];
                *b = &b[1..];
                v |= ((byte & 0x7f) as u64) << shift;
                if byte < 0x80 {
                    return v;
                }
                shift += 7;
            }
        }
        let mut out = Vec::new();
        while !b.is_empty() {
            let k = varint(&mut b);
            let (field, wire) = ((k >> 3) as u32, (k & 7) as u8);
            match wire {
                0 => out.push((field, 0, varint(&mut b), vec![])),
                2 => {
                    let n = varint(&mut b) as usize;
                    out.push((field, 2, 0, b[..n].to_vec()));
                    b = &b[n..];
                }
                w => panic!("unexpected wire type {w}"),
            }
        }
        out
    }

    #[test]
    fn the_perfetto_trace_decodes_into_packets_on_the_raw_clock() {
        let d = dir("pf");
        let path = trace(d.path());
        let file = std::fs::File::open(&path).unwrap();
        let index = Index::read(&file).unwrap();
        let spec = parse_spec("interval call = begin -> end", &index.names()).unwrap();
        let mut out = Vec::new();
        export(&file, &index, &spec, 0, ExportFormat::Perfetto, &mut out).unwrap();
        let packets = fields(&out);
        assert!(
            packets.iter().all(|p| p.0 == 1 && p.1 == 2),
            "a Trace of packets only"
        );
        let decoded: Vec<_> = packets.iter().map(|p| fields(&p.3)).collect();
        let has = |p: &Vec<(u32, u8, u64, Vec<u8>)>, f: u32| p.iter().any(|x| x.0 == f);
        assert!(has(&decoded[0], 6), "a clock snapshot first");
        let snap = fields(&decoded[0].iter().find(|x| x.0 == 6).unwrap().3);
        assert!(
            snap.iter().any(|x| x.0 == 2 && x.2 == 5),
            "MONOTONIC_RAW is the trace's clock"
        );
        let tracks = decoded.iter().filter(|p| has(p, 60)).count();
        assert_eq!(
            tracks,
            1 + 1 + 1 + 1,
            "process, thread, CPU and interval tracks"
        );
        let events: Vec<_> = decoded.iter().filter(|p| has(p, 11)).collect();
        // 6 instants, 3 kernel (one slice = 2 packets, one instant), 3 intervals × 2.
        assert_eq!(events.len(), 6 + 3 + 6);
        for e in &events {
            assert!(
                e.iter().any(|x| x.0 == 58 && x.2 == 5),
                "every event on clock 5"
            );
            assert!(e.iter().any(|x| x.0 == 8), "every event has a timestamp");
        }
    }
}
