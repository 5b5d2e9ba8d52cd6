//! The trace file: a fixed header, then self-describing chunks.
//!
//! Everything is little-endian. The file opens with [`FILE_HEADER_LEN`] bytes: the magic
//! `SYSCOSTT`, the format [`VERSION`] (u32) and 52 reserved bytes. Then come chunks, each
//! a 16-byte header — kind (u16), reserved (u16), stream (u32), record count (u32),
//! payload length in bytes (u32) — and its payload:
//!
//! | kind | stream | payload |
//! |---|---|---|
//! | [`ChunkKind::Meta`] | 0 | one JSON object ([`Meta`]) |
//! | [`ChunkKind::User`] | thread id | [`UserEvent`] records, 24 bytes each, in time order |
//! | [`ChunkKind::Kernel`] | CPU | [`KernelEvent`] records, 32 bytes each, in time order |
//! | [`ChunkKind::UserLost`] | thread id | [`Lost`] records, 24 bytes each |
//! | [`ChunkKind::KernelLost`] | CPU | [`Lost`] records, 24 bytes each |
//!
//! Within one stream, chunks follow each other in time: a stream read chunk after chunk
//! is time-ordered, and [`merge`] interleaves the streams by time. Every timestamp is in
//! nanoseconds of `CLOCK_MONOTONIC_RAW`, the clock the kernel's perf events are asked to
//! use, so user and kernel events need no conversion. A reader skips chunk kinds it
//! does not know, so later versions can add kinds without breaking older readers.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Read, Seek, SeekFrom, Write};

/// The first eight bytes of every trace file.
pub const MAGIC: &[u8; 8] = b"SYSCOSTT";
/// The version of the format this code writes and reads.
pub const VERSION: u32 = 1;
/// The length of the file header.
pub const FILE_HEADER_LEN: usize = 64;
/// The length of a chunk header.
pub const CHUNK_HEADER_LEN: usize = 16;
/// The largest payload a reader accepts in one chunk (64 MiB): a bound on the memory a
/// damaged length can ask for.
pub const MAX_PAYLOAD: u32 = 64 << 20;

/// What a chunk holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChunkKind {
    /// A JSON metadata object.
    Meta,
    /// User events of one thread.
    User,
    /// Kernel events of one CPU.
    Kernel,
    /// Events a user thread lost because its ring was full.
    UserLost,
    /// Events the kernel lost on one CPU.
    KernelLost,
    /// A kind this version does not know (skipped by readers).
    Unknown(u16),
}

impl ChunkKind {
    /// The code written in the chunk header.
    pub fn code(self) -> u16 {
        match self {
            ChunkKind::Meta => 1,
            ChunkKind::User => 2,
            ChunkKind::Kernel => 3,
            ChunkKind::UserLost => 4,
            ChunkKind::KernelLost => 5,
            ChunkKind::Unknown(c) => c,
        }
    }

    /// The kind for a header code.
    pub fn from_code(code: u16) -> ChunkKind {
        match code {
            1 => ChunkKind::Meta,
            2 => ChunkKind::User,
            3 => ChunkKind::Kernel,
            4 => ChunkKind::UserLost,
            5 => ChunkKind::KernelLost,
            c => ChunkKind::Unknown(c),
        }
    }

    /// The size of one record of this kind (0 for metadata and unknown kinds).
    pub fn record_len(self) -> usize {
        match self {
            ChunkKind::User => UserEvent::LEN,
            ChunkKind::Kernel => KernelEvent::LEN,
            ChunkKind::UserLost | ChunkKind::KernelLost => Lost::LEN,
            ChunkKind::Meta | ChunkKind::Unknown(_) => 0,
        }
    }
}

/// One event placed by a program: 24 bytes on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserEvent {
    /// `CLOCK_MONOTONIC_RAW`, ns.
    pub ts: u64,
    /// The program's 64-bit argument.
    pub arg: u64,
    /// The program's event id.
    pub id: u32,
    /// The CPU the thread ran on when it recorded the event.
    pub cpu: u32,
}

impl UserEvent {
    /// Bytes per record.
    pub const LEN: usize = 24;

    /// Appends the record to `out`.
    pub fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.ts.to_le_bytes());
        out.extend_from_slice(&self.arg.to_le_bytes());
        out.extend_from_slice(&self.id.to_le_bytes());
        out.extend_from_slice(&self.cpu.to_le_bytes());
    }

    /// Reads a record from exactly [`UserEvent::LEN`] bytes.
    pub fn get(b: &[u8]) -> UserEvent {
        UserEvent {
            ts: u64_at(b, 0),
            arg: u64_at(b, 8),
            id: u32_at(b, 16),
            cpu: u32_at(b, 20),
        }
    }
}

/// What the kernel did, as recorded from its tracepoints.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum KernelKind {
    /// `sched:sched_switch`: `tid` left the CPU, `a` = the next task's tid, `b` = the
    /// previous task's state (0 = it was preempted while runnable).
    Switch,
    /// `sched:sched_migrate_task`: `tid` moved, `a` = from CPU, `b` = to CPU.
    Migrate,
    /// `irq_vectors:local_timer_entry`: the clock interrupt began (`tid` = the
    /// interrupted task).
    TimerEntry,
    /// `irq_vectors:local_timer_exit`.
    TimerExit,
    /// `irq:irq_handler_entry`: a device interrupt began, `a` = irq number.
    IrqEntry,
    /// `irq:irq_handler_exit`, `a` = irq number.
    IrqExit,
    /// `irq:softirq_entry`, `a` = the softirq vector.
    SoftirqEntry,
    /// `irq:softirq_exit`, `a` = the softirq vector.
    SoftirqExit,
    /// An inter-processor interrupt began (`irq_vectors:call_function*_entry`,
    /// `reschedule_entry`), `a` = vector.
    IpiEntry,
    /// An inter-processor interrupt ended, `a` = vector.
    IpiExit,
    /// `exceptions:page_fault_user`: `tid` faulted, `a` = address, `b` = error code.
    Fault,
    /// A code this version does not know.
    Other(u16),
}

impl KernelKind {
    /// The code written on disk.
    pub fn code(self) -> u16 {
        match self {
            KernelKind::Switch => 1,
            KernelKind::Migrate => 2,
            KernelKind::TimerEntry => 3,
            KernelKind::TimerExit => 4,
            KernelKind::IrqEntry => 5,
            KernelKind::IrqExit => 6,
            KernelKind::SoftirqEntry => 7,
            KernelKind::SoftirqExit => 8,
            KernelKind::IpiEntry => 9,
            KernelKind::IpiExit => 10,
            KernelKind::Fault => 11,
            KernelKind::Other(c) => c,
        }
    }

    /// The kind for a code.
    pub fn from_code(code: u16) -> KernelKind {
        match code {
            1 => KernelKind::Switch,
            2 => KernelKind::Migrate,
            3 => KernelKind::TimerEntry,
            4 => KernelKind::TimerExit,
            5 => KernelKind::IrqEntry,
            6 => KernelKind::IrqExit,
            7 => KernelKind::SoftirqEntry,
            8 => KernelKind::SoftirqExit,
            9 => KernelKind::IpiEntry,
            10 => KernelKind::IpiExit,
            11 => KernelKind::Fault,
            c => KernelKind::Other(c),
        }
    }

    /// A short name, as `trace show` prints it and `--kernel` accepts it.
    pub fn name(self) -> String {
        match self {
            KernelKind::Switch => "switch".into(),
            KernelKind::Migrate => "migrate".into(),
            KernelKind::TimerEntry => "timer".into(),
            KernelKind::TimerExit => "timer_exit".into(),
            KernelKind::IrqEntry => "irq".into(),
            KernelKind::IrqExit => "irq_exit".into(),
            KernelKind::SoftirqEntry => "softirq".into(),
            KernelKind::SoftirqExit => "softirq_exit".into(),
            KernelKind::IpiEntry => "ipi".into(),
            KernelKind::IpiExit => "ipi_exit".into(),
            KernelKind::Fault => "fault".into(),
            KernelKind::Other(c) => format!("kernel#{c}"),
        }
    }
}

impl fmt::Display for KernelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// One kernel event: 32 bytes on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelEvent {
    /// `CLOCK_MONOTONIC_RAW`, ns.
    pub ts: u64,
    /// Kind-specific (see [`KernelKind`]).
    pub a: u64,
    /// The task the event concerns (the task interrupted, switched out, or faulting).
    pub tid: u32,
    /// The CPU it happened on.
    pub cpu: u32,
    /// What happened.
    pub kind: KernelKind,
    /// Kind-specific (see [`KernelKind`]).
    pub b: u32,
}

impl KernelEvent {
    /// Bytes per record.
    pub const LEN: usize = 32;

    /// Appends the record to `out`.
    pub fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.ts.to_le_bytes());
        out.extend_from_slice(&self.a.to_le_bytes());
        out.extend_from_slice(&self.tid.to_le_bytes());
        out.extend_from_slice(&self.cpu.to_le_bytes());
        out.extend_from_slice(&self.kind.code().to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&self.b.to_le_bytes());
    }

    /// Reads a record from exactly [`KernelEvent::LEN`] bytes.
    pub fn get(b: &[u8]) -> KernelEvent {
        KernelEvent {
            ts: u64_at(b, 0),
            a: u64_at(b, 8),
            tid: u32_at(b, 16),
            cpu: u32_at(b, 20),
            kind: KernelKind::from_code(u16::from_le_bytes([b[24], b[25]])),
            b: u32_at(b, 28),
        }
    }
}

/// Events lost between two times: 24 bytes on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lost {
    /// The last event recorded before the loss began (0 when unknown), ns.
    pub from: u64,
    /// The first event recorded after it (u64::MAX when none followed), ns.
    pub to: u64,
    /// How many events were lost.
    pub count: u64,
}

impl Lost {
    /// Bytes per record.
    pub const LEN: usize = 24;

    /// Appends the record to `out`.
    pub fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.from.to_le_bytes());
        out.extend_from_slice(&self.to.to_le_bytes());
        out.extend_from_slice(&self.count.to_le_bytes());
    }

    /// Reads a record from exactly [`Lost::LEN`] bytes.
    pub fn get(b: &[u8]) -> Lost {
        Lost {
            from: u64_at(b, 0),
            to: u64_at(b, 8),
            count: u64_at(b, 16),
        }
    }
}

/// A metadata chunk's JSON object. Each names its `type`; readers ignore types and
/// fields they do not know.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Meta {
    /// Written when a trace opens (the file's first chunk when a program opened it).
    Open {
        /// The clock of every timestamp: `"CLOCK_MONOTONIC_RAW"`.
        clock: String,
        /// How the clock was checked against the kernel's, in one line.
        clock_check: String,
        /// The measured cost of recording one event, ns (the memo's Fig. 2
        /// correction), and how it was measured.
        event_cost_ns: f64,
        /// How the event cost was measured.
        event_cost_method: String,
        /// The recording process.
        pid: u32,
        /// The program's name.
        program: String,
        /// Bytes of ring per thread.
        buffer_bytes: u64,
        /// Wall-clock time the trace opened, seconds since the epoch.
        opened_unix: f64,
        /// `CLOCK_MONOTONIC_RAW` when it opened, ns.
        opened_ns: u64,
    },
    /// Names for event ids.
    Names {
        /// Event ids and their names (a list of pairs: JSON object keys would be
        /// strings).
        names: Vec<(u32, String)>,
    },
    /// A thread's name.
    Thread {
        /// Thread id.
        tid: u32,
        /// Its name.
        name: String,
    },
    /// Written when a trace closes: the totals.
    Close {
        /// Events recorded into the file.
        recorded: u64,
        /// Events lost because a ring was full.
        lost: u64,
        /// `CLOCK_MONOTONIC_RAW` when it closed, ns.
        closed_ns: u64,
        /// Chunks the writer wrote.
        chunks: u64,
    },
    /// What the kernel side recorded, or why it could not.
    Kernel {
        /// The events asked for (names as in [`KernelKind::name`]).
        requested: Vec<String>,
        /// The events recorded.
        recorded: Vec<String>,
        /// Why some or all could not be recorded (empty when all were).
        unavailable: String,
        /// Kernel events recorded.
        events: u64,
        /// Kernel events lost.
        lost: u64,
        /// How they were collected, in one line.
        method: String,
    },
    /// The command `trace record` ran.
    Command {
        /// Program and arguments.
        argv: Vec<String>,
        /// Exit status, as the shell shows it (128 + signal for a signal).
        status: i32,
    },
}

/// An error reading a trace file.
#[derive(Debug)]
pub enum FormatError {
    /// The file could not be read.
    Io(io::Error),
    /// Not a syscost trace.
    NotATrace,
    /// A newer format version.
    Version(u32),
    /// A damaged chunk at a byte offset.
    Damaged {
        /// Byte offset of the chunk.
        offset: u64,
        /// What is wrong.
        what: String,
    },
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormatError::Io(e) => write!(f, "{e}"),
            FormatError::NotATrace => {
                f.write_str("not a syscost trace (no SYSCOSTT header)")
            }
            FormatError::Version(v) => write!(
                f,
                "trace format version {v} is newer than this syscost reads ({VERSION})"
            ),
            FormatError::Damaged { offset, what } => {
                write!(f, "damaged trace at byte {offset}: {what}")
            }
        }
    }
}

impl std::error::Error for FormatError {}

impl From<io::Error> for FormatError {
    fn from(e: io::Error) -> Self {
        FormatError::Io(e)
    }
}

/// The file header bytes.
pub fn file_header() -> [u8; FILE_HEADER_LEN] {
    let mut h = [0u8; FILE_HEADER_LEN];
    h[..8].copy_from_slice(MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h
}

/// Writes one chunk: its header, then `payload` (whose length must be `count` records
/// of the kind, or any length for metadata).
pub fn write_chunk<W: Write>(
    out: &mut W,
    kind: ChunkKind,
    stream: u32,
    count: u32,
    payload: &[u8],
) -> io::Result<()> {
    let mut h = [0u8; CHUNK_HEADER_LEN];
    h[0..2].copy_from_slice(&kind.code().to_le_bytes());
    h[4..8].copy_from_slice(&stream.to_le_bytes());
    h[8..12].copy_from_slice(&count.to_le_bytes());
    h[12..16].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    out.write_all(&h)?;
    out.write_all(payload)
}

/// Writes a metadata chunk.
pub fn write_meta<W: Write>(out: &mut W, meta: &Meta) -> io::Result<()> {
    let body = serde_json::to_vec(meta).map_err(io::Error::other)?;
    write_chunk(out, ChunkKind::Meta, 0, 0, &body)
}

/// A chunk's header, as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkHeader {
    /// What it holds.
    pub kind: ChunkKind,
    /// Thread id or CPU.
    pub stream: u32,
    /// Records in it.
    pub count: u32,
    /// Payload bytes.
    pub bytes: u32,
    /// Byte offset of the payload in the file.
    pub offset: u64,
}

/// Reads chunks one after the other from any reader.
pub struct ChunkReader<R> {
    inner: R,
    pos: u64,
    truncated: bool,
}

impl<R: Read> ChunkReader<R> {
    /// Checks the file header and returns a reader at the first chunk.
    pub fn new(mut inner: R) -> Result<ChunkReader<R>, FormatError> {
        let mut h = [0u8; FILE_HEADER_LEN];
        match inner.read_exact(&mut h) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                return Err(FormatError::NotATrace)
            }
            Err(e) => return Err(e.into()),
        }
        if &h[..8] != MAGIC {
            return Err(FormatError::NotATrace);
        }
        let v = u32_at(&h, 8);
        if v > VERSION || v == 0 {
            return Err(FormatError::Version(v));
        }
        Ok(ChunkReader {
            inner,
            pos: FILE_HEADER_LEN as u64,
            truncated: false,
        })
    }

    /// The next chunk's header and payload, or `None` at the end. A file cut short in
    /// the middle of a chunk (a writer killed mid-write) ends at the last whole chunk:
    /// [`ChunkReader::truncated`] then says so.
    pub fn next_chunk(
        &mut self,
        payload: &mut Vec<u8>,
    ) -> Result<Option<ChunkHeader>, FormatError> {
        let header = match self.next_header()? {
            Some(h) => h,
            None => return Ok(None),
        };
        payload.clear();
        payload.resize(header.bytes as usize, 0);
        if let Err(e) = self.inner.read_exact(payload) {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                self.truncated = true;
                return Ok(None);
            }
            return Err(e.into());
        }
        self.pos += header.bytes as u64;
        Ok(Some(header))
    }

    fn next_header(&mut self) -> Result<Option<ChunkHeader>, FormatError> {
        let mut h = [0u8; CHUNK_HEADER_LEN];
        let mut got = 0;
        while got < h.len() {
            match self.inner.read(&mut h[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        if got == 0 {
            return Ok(None);
        }
        if got < h.len() {
            self.truncated = true;
            return Ok(None);
        }
        let header = parse_chunk_header(&h, self.pos)?;
        self.pos += CHUNK_HEADER_LEN as u64;
        Ok(Some(ChunkHeader {
            offset: self.pos,
            ..header
        }))
    }
}

impl<R> ChunkReader<R> {
    /// The byte offset of the next chunk.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Whether the input ended in the middle of a chunk.
    pub fn truncated(&self) -> bool {
        self.truncated
    }
}

/// Checks and decodes a chunk header found at `offset`.
pub fn parse_chunk_header(h: &[u8], offset: u64) -> Result<ChunkHeader, FormatError> {
    let kind = ChunkKind::from_code(u16::from_le_bytes([h[0], h[1]]));
    let stream = u32_at(h, 4);
    let count = u32_at(h, 8);
    let bytes = u32_at(h, 12);
    let damaged = |what: String| FormatError::Damaged { offset, what };
    if bytes > MAX_PAYLOAD {
        return Err(damaged(format!("a chunk of {bytes} bytes")));
    }
    let len = kind.record_len();
    if len > 0 && count as u64 * len as u64 != bytes as u64 {
        return Err(damaged(format!(
            "{count} records of {len} bytes in a {bytes}-byte chunk"
        )));
    }
    Ok(ChunkHeader {
        kind,
        stream,
        count,
        bytes,
        offset: offset + CHUNK_HEADER_LEN as u64,
    })
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

/// One event of either source, as [`merge`] yields them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A program's event, with the thread that recorded it.
    User {
        /// Thread id.
        tid: u32,
        /// The record.
        event: UserEvent,
    },
    /// A kernel event.
    Kernel(KernelEvent),
}

impl Event {
    /// Its timestamp.
    pub fn ts(&self) -> u64 {
        match self {
            Event::User { event, .. } => event.ts,
            Event::Kernel(k) => k.ts,
        }
    }

    /// The CPU it happened on.
    pub fn cpu(&self) -> u32 {
        match self {
            Event::User { event, .. } => event.cpu,
            Event::Kernel(k) => k.cpu,
        }
    }
}

/// What a first pass over a trace file learns: its metadata, the chunks of every
/// stream, and the loss records. Event payloads are not kept.
#[derive(Debug, Clone, Default)]
pub struct Index {
    /// Metadata chunks, in file order.
    pub meta: Vec<Meta>,
    /// Payload offsets of each user thread's chunks, in file order.
    pub user: BTreeMap<u32, Vec<ChunkHeader>>,
    /// Payload offsets of each CPU's kernel chunks, in file order.
    pub kernel: BTreeMap<u32, Vec<ChunkHeader>>,
    /// User events lost, by thread.
    pub user_lost: Vec<(u32, Lost)>,
    /// Kernel events lost, by CPU.
    pub kernel_lost: Vec<(u32, Lost)>,
    /// User events in the file.
    pub user_events: u64,
    /// Kernel events in the file.
    pub kernel_events: u64,
    /// Chunks of kinds this version does not know.
    pub unknown_chunks: u64,
    /// The file ended in the middle of a chunk.
    pub truncated: bool,
    /// The file's length.
    pub bytes: u64,
}

impl Index {
    /// Reads the index of a file: chunk headers, metadata and loss records; event
    /// payloads are skipped with seeks.
    pub fn read<R: Read + Seek>(mut file: R) -> Result<Index, FormatError> {
        let len = file.seek(SeekFrom::End(0))?;
        file.seek(SeekFrom::Start(0))?;
        let mut reader = ChunkReader::new(&mut file)?;
        let mut index = Index {
            bytes: len,
            ..Index::default()
        };
        let mut payload = Vec::new();
        while let Some(h) = reader.next_header()? {
            if h.offset + h.bytes as u64 > len {
                index.truncated = true;
                break;
            }
            match h.kind {
                ChunkKind::User | ChunkKind::Kernel | ChunkKind::Unknown(_) => {
                    reader.inner.seek(SeekFrom::Current(h.bytes as i64))?;
                    reader.pos += h.bytes as u64;
                    match h.kind {
                        ChunkKind::User => {
                            index.user_events += h.count as u64;
                            index.user.entry(h.stream).or_default().push(h);
                        }
                        ChunkKind::Kernel => {
                            index.kernel_events += h.count as u64;
                            index.kernel.entry(h.stream).or_default().push(h);
                        }
                        _ => index.unknown_chunks += 1,
                    }
                }
                ChunkKind::Meta | ChunkKind::UserLost | ChunkKind::KernelLost => {
                    payload.clear();
                    payload.resize(h.bytes as usize, 0);
                    reader.inner.read_exact(&mut payload)?;
                    reader.pos += h.bytes as u64;
                    match h.kind {
                        ChunkKind::Meta => {
                            // A metadata object this version cannot read is skipped, as
                            // an unknown chunk is.
                            match serde_json::from_slice::<Meta>(&payload) {
                                Ok(m) => index.meta.push(m),
                                Err(_) => index.unknown_chunks += 1,
                            }
                        }
                        ChunkKind::UserLost => index.user_lost.extend(
                            payload
                                .chunks_exact(Lost::LEN)
                                .map(|b| (h.stream, Lost::get(b))),
                        ),
                        _ => index.kernel_lost.extend(
                            payload
                                .chunks_exact(Lost::LEN)
                                .map(|b| (h.stream, Lost::get(b))),
                        ),
                    }
                }
            }
        }
        index.truncated |= reader.truncated;
        Ok(index)
    }

    /// User events lost in all.
    pub fn user_lost_total(&self) -> u64 {
        self.user_lost.iter().map(|(_, l)| l.count).sum()
    }

    /// Kernel events lost in all.
    pub fn kernel_lost_total(&self) -> u64 {
        self.kernel_lost.iter().map(|(_, l)| l.count).sum()
    }

    /// The measured cost of one event, ns, from the `open` metadata (0 when the trace
    /// has none: a kernel-only trace).
    pub fn event_cost_ns(&self) -> f64 {
        self.meta
            .iter()
            .find_map(|m| match m {
                Meta::Open { event_cost_ns, .. } => Some(*event_cost_ns),
                _ => None,
            })
            .unwrap_or(0.0)
    }

    /// Event names from every `names` chunk.
    pub fn names(&self) -> BTreeMap<u32, String> {
        let mut out = BTreeMap::new();
        for m in &self.meta {
            if let Meta::Names { names } = m {
                out.extend(names.iter().map(|(k, v)| (*k, v.clone())));
            }
        }
        out
    }
}

/// One stream's events, read chunk by chunk with positioned reads: memory is one chunk.
struct Cursor {
    chunks: std::vec::IntoIter<ChunkHeader>,
    kernel: bool,
    tid: u32,
    buf: Vec<u8>,
    at: usize,
    len: usize,
}

/// Yields every event of a trace file in time order, merging the streams with one
/// chunk of memory per stream (ties go to kernel events first, then by stream).
pub struct Merge<'f> {
    file: &'f std::fs::File,
    cursors: Vec<Cursor>,
    heap: std::collections::BinaryHeap<std::cmp::Reverse<(u64, usize)>>,
}

/// Merges the events of `file`, indexed by `index`, by time.
pub fn merge<'f>(
    file: &'f std::fs::File,
    index: &Index,
) -> Result<Merge<'f>, FormatError> {
    let mut cursors = Vec::new();
    for (cpu, chunks) in &index.kernel {
        cursors.push(Cursor {
            chunks: chunks.clone().into_iter(),
            kernel: true,
            tid: *cpu,
            buf: Vec::new(),
            at: 0,
            len: 0,
        });
    }
    for (tid, chunks) in &index.user {
        cursors.push(Cursor {
            chunks: chunks.clone().into_iter(),
            kernel: false,
            tid: *tid,
            buf: Vec::new(),
            at: 0,
            len: 0,
        });
    }
    let mut m = Merge {
        file,
        cursors,
        heap: std::collections::BinaryHeap::new(),
    };
    for i in 0..m.cursors.len() {
        if let Some(ts) = m.peek_ts(i)? {
            m.heap.push(std::cmp::Reverse((ts, i)));
        }
    }
    Ok(m)
}

impl Merge<'_> {
    fn peek_ts(&mut self, i: usize) -> Result<Option<u64>, FormatError> {
        use std::os::unix::fs::FileExt;
        let c = &mut self.cursors[i];
        while c.at >= c.len {
            let Some(h) = c.chunks.next() else {
                return Ok(None);
            };
            c.buf.resize(h.bytes as usize, 0);
            self.file.read_exact_at(&mut c.buf, h.offset)?;
            c.at = 0;
            c.len = h.bytes as usize;
        }
        Ok(Some(u64_at(&c.buf, c.at)))
    }
}

impl Iterator for Merge<'_> {
    type Item = Result<Event, FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        let std::cmp::Reverse((_, i)) = self.heap.pop()?;
        let c = &mut self.cursors[i];
        let event = if c.kernel {
            let e = KernelEvent::get(&c.buf[c.at..c.at + KernelEvent::LEN]);
            c.at += KernelEvent::LEN;
            Event::Kernel(e)
        } else {
            let e = UserEvent::get(&c.buf[c.at..c.at + UserEvent::LEN]);
            c.at += UserEvent::LEN;
            Event::User {
                tid: c.tid,
                event: e,
            }
        };
        match self.peek_ts(i) {
            Ok(Some(ts)) => self.heap.push(std::cmp::Reverse((ts, i))),
            Ok(None) => {}
            Err(e) => return Some(Err(e)),
        }
        Some(Ok(event))
    }
}

/// Reads every event of one stream's chunks in order, calling `f` on each: the fast
/// path for reductions that work thread by thread.
pub fn for_each_user_event(
    file: &std::fs::File,
    chunks: &[ChunkHeader],
    mut f: impl FnMut(&UserEvent),
) -> Result<(), FormatError> {
    use std::os::unix::fs::FileExt;
    let mut buf = Vec::new();
    for h in chunks {
        buf.resize(h.bytes as usize, 0);
        file.read_exact_at(&mut buf, h.offset)?;
        for b in buf.chunks_exact(UserEvent::LEN) {
            f(&UserEvent::get(b));
        }
    }
    Ok(())
}

/// Reads every kernel event of one CPU's chunks, in order.
pub fn read_kernel_events(
    file: &std::fs::File,
    chunks: &[ChunkHeader],
) -> Result<Vec<KernelEvent>, FormatError> {
    use std::os::unix::fs::FileExt;
    let mut out = Vec::new();
    let mut buf = Vec::new();
    for h in chunks {
        buf.resize(h.bytes as usize, 0);
        file.read_exact_at(&mut buf, h.offset)?;
        out.extend(buf.chunks_exact(KernelEvent::LEN).map(KernelEvent::get));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_file(path: &std::path::Path) {
        let mut out = Vec::new();
        out.extend_from_slice(&file_header());
        write_meta(
            &mut out,
            &Meta::Names {
                names: vec![(1, "begin".to_string())],
            },
        )
        .unwrap();
        let mut p = Vec::new();
        for ts in [10u64, 30, 50] {
            UserEvent {
                ts,
                arg: ts * 2,
                id: 1,
                cpu: 0,
            }
            .put(&mut p);
        }
        write_chunk(&mut out, ChunkKind::User, 7, 3, &p).unwrap();
        p.clear();
        for ts in [20u64, 40] {
            KernelEvent {
                ts,
                a: 1,
                tid: 7,
                cpu: 1,
                kind: KernelKind::TimerEntry,
                b: 0,
            }
            .put(&mut p);
        }
        write_chunk(&mut out, ChunkKind::Kernel, 1, 2, &p).unwrap();
        write_chunk(&mut out, ChunkKind::Unknown(99), 0, 0, b"future").unwrap();
        p.clear();
        Lost {
            from: 50,
            to: 60,
            count: 4,
        }
        .put(&mut p);
        write_chunk(&mut out, ChunkKind::UserLost, 7, 1, &p).unwrap();
        std::fs::write(path, out).unwrap();
    }

    #[test]
    fn a_file_round_trips_and_merges_by_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.sct");
        sample_file(&path);
        let file = std::fs::File::open(&path).unwrap();
        let index = Index::read(&file).unwrap();
        assert_eq!(index.user_events, 3);
        assert_eq!(index.kernel_events, 2);
        assert_eq!(index.unknown_chunks, 1);
        assert_eq!(index.user_lost_total(), 4);
        assert_eq!(index.names()[&1], "begin");
        assert!(!index.truncated);
        let ts: Vec<u64> = merge(&file, &index)
            .unwrap()
            .map(|e| e.unwrap().ts())
            .collect();
        assert_eq!(ts, vec![10, 20, 30, 40, 50]);
    }

    #[test]
    fn a_cut_file_is_read_to_its_last_whole_chunk() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.sct");
        sample_file(&path);
        let full = std::fs::read(&path).unwrap();
        for cut in 0..full.len() {
            std::fs::write(&path, &full[..cut]).unwrap();
            let file = std::fs::File::open(&path).unwrap();
            match Index::read(&file) {
                Ok(index) => {
                    assert!(cut >= FILE_HEADER_LEN);
                    if let Ok(m) = merge(&file, &index) {
                        for e in m {
                            e.unwrap();
                        }
                    }
                }
                Err(FormatError::NotATrace) => assert!(cut < FILE_HEADER_LEN),
                Err(e) => panic!("cut at {cut}: {e}"),
            }
        }
    }

    #[test]
    fn damage_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.sct");
        sample_file(&path);
        let full = std::fs::read(&path).unwrap();
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..2000 {
            let mut bytes = full.clone();
            for _ in 0..3 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let at = (state % bytes.len() as u64) as usize;
                bytes[at] ^= (state >> 32) as u8 | 1;
            }
            std::fs::write(&path, &bytes).unwrap();
            let file = std::fs::File::open(&path).unwrap();
            if let Ok(index) = Index::read(&file) {
                if let Ok(m) = merge(&file, &index) {
                    for e in m {
                        let _ = e;
                    }
                }
            }
        }
    }
}
