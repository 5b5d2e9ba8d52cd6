//! The Perfetto sink: a minimal protobuf writer, Perfetto's field numbers, and the
//! packets (clock snapshot, track descriptors, track events) an export streams.

use super::{interval_track, IntervalSlice, KernelSlice, Layout, Sink};
use crate::trace::format::{KernelEvent, UserEvent};
use std::io::{self, Write};

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

/// One annotation of a track event.
enum Note<'a> {
    Uint(&'a str, u64),
    Str(&'a str, &'a str),
}

/// The sink that writes Perfetto's protobuf.
pub(super) struct Perfetto<W: Write> {
    out: W,
    buf: Vec<u8>,
}

impl<W: Write> Perfetto<W> {
    /// A sink writing packets to `out`.
    pub(super) fn new(out: W) -> Perfetto<W> {
        Perfetto {
            out,
            buf: Vec::new(),
        }
    }

    fn packet(&mut self, body: &[u8]) -> io::Result<()> {
        self.buf.clear();
        bytes(&mut self.buf, pf::TRACE_PACKET, body);
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

impl<W: Write> Sink for Perfetto<W> {
    fn begin(&mut self, l: &Layout) -> io::Result<()> {
        self.clock_snapshot(l.first_ts)?;
        let pid = l.pid;
        self.track(PROCESS_TRACK, None, "", None, Some((pid, &l.program)))?;
        for (tid, name) in &l.threads {
            let thread = Some((pid, *tid));
            self.track(thread_track(*tid), Some(PROCESS_TRACK), name, thread, None)?;
        }
        for cpu in &l.cpus {
            self.track(
                cpu_track(*cpu),
                None,
                &format!("CPU {cpu} kernel"),
                None,
                None,
            )?;
        }
        for (kind, tid, name) in &l.kinds {
            let (track, parent) = (interval_track(*kind, *tid), Some(thread_track(*tid)));
            self.track(track, parent, &format!("{name} intervals"), None, None)?;
        }
        Ok(())
    }
    fn user(&mut self, tid: u32, e: &UserEvent, label: &str) -> io::Result<()> {
        let notes = [
            Note::Uint("arg", e.arg),
            Note::Uint("cpu", e.cpu as u64),
            Note::Uint("id", e.id as u64),
        ];
        self.event(e.ts, thread_track(tid), pf::INSTANT, label, "user", &notes)
    }
    fn kernel_slice(&mut self, s: &KernelSlice) -> io::Result<()> {
        let (track, notes) = (cpu_track(s.cpu), [Note::Uint("vector", s.vector)]);
        self.event(s.start, track, pf::SLICE_BEGIN, s.name, "kernel", &notes)?;
        self.event(s.end, track, pf::SLICE_END, "", "", &[])
    }
    fn kernel_instant(&mut self, e: &KernelEvent) -> io::Result<()> {
        let notes = [
            Note::Uint("tid", e.tid as u64),
            Note::Uint("a", e.a),
            Note::Uint("b", e.b as u64),
        ];
        let name = e.kind.name();
        self.event(e.ts, cpu_track(e.cpu), pf::INSTANT, &name, "kernel", &notes)
    }
    fn interval(&mut self, s: &IntervalSlice<'_>) -> io::Result<()> {
        let by = s.culled.join(",");
        let notes = if by.is_empty() {
            vec![]
        } else {
            vec![Note::Str("culled_by", &by)]
        };
        let (track, cat) = (s.track(), s.category());
        self.event(s.start, track, pf::SLICE_BEGIN, s.name, cat, &notes)?;
        self.event(s.end, track, pf::SLICE_END, "", "", &[])
    }
    fn end(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
