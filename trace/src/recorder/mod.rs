//! The recorder: per-thread rings of fixed chunks filled without locks or system
//! calls, and a writer thread that drains full chunks to the file — the memo's
//! `event` and `evproc` for threads instead of a kernel.
//!
//! # How an event travels
//!
//! [`record`] reads `CLOCK_MONOTONIC_RAW` (through the vDSO, no system call) and the
//! CPU (`sched_getcpu`, which glibc answers from the restartable-sequence area), and
//! stores a 24-byte record into the calling thread's current chunk. A thread's ring is
//! made on its first event of a trace (the only step that takes a lock). When a chunk
//! is full it is published (a release store) and the thread moves to the next one; if
//! that one has not been written out yet, the ring is full and events are counted as
//! lost, with the time window in which they were lost, until the writer frees it: the
//! memo's "missed events", never a silent drop and never a wait.
//!
//! The writer thread wakes every [`POLL`], writes every full chunk of every ring in
//! each ring's order, and marks it free. A thread that exits publishes its partial
//! chunk. [`close`] stops recording, waits a grace period for events already under
//! way, writes every partial chunk, the loss records and a `close` metadata chunk with
//! the totals, and joins the writer.
//!
//! # Limits
//!
//! One trace per process at a time. An event recorded at the very moment the trace
//! closes, by a thread suspended for longer than the grace period between its check
//! and its store, is not written; every other event is written or counted as lost. A
//! child after `fork` records nothing into its parent's trace (its events are
//! ignored); it may open a trace of its own.

use crate::format::{self, ChunkKind, Lost, Meta, UserEvent};
use std::cell::UnsafeCell;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often the writer looks for full chunks.
pub const POLL: Duration = Duration::from_micros(500);
/// How long [`close`] waits for events already under way before the last drain.
const GRACE: Duration = Duration::from_millis(2);
/// Bytes per chunk: the unit the writer writes (10,922 events).
pub const CHUNK_BYTES: usize = 256 << 10;
/// The default ring per thread: 16 chunks, 4 MiB, about 175,000 events, which the
/// writer drains within [`POLL`] at any rate a thread can record.
pub const DEFAULT_BUFFER: u64 = 16 * CHUNK_BYTES as u64;
/// The smallest ring: two chunks of the smallest size.
pub const MIN_BUFFER: u64 = 2 * MIN_CHUNK_BYTES as u64;
const MIN_CHUNK_BYTES: usize = 64 * UserEvent::LEN;

/// One record in memory: the file's 24 bytes, in the file's order (little-endian on
/// the machines this crate supports).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Rec {
    ts: u64,
    arg: u64,
    id: u32,
    cpu: u32,
}

const _: () = assert!(std::mem::size_of::<Rec>() == UserEvent::LEN);
#[cfg(not(target_endian = "little"))]
compile_error!(
    "the trace records are written in memory order, which must be little-endian"
);

/// `CLOCK_MONOTONIC_RAW`, ns: the clock every event carries.
#[inline(always)]
pub fn now() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Where glibc keeps this thread's `struct rseq` relative to the thread pointer
/// (`__rseq_offset`), once found; 0 while unknown or when the kernel has no rseq area
/// registered for this process, in which case `sched_getcpu` answers.
static RSEQ_OFFSET: std::sync::atomic::AtomicIsize =
    std::sync::atomic::AtomicIsize::new(0);

/// Looks up glibc's `__rseq_offset` and `__rseq_size` (glibc 2.35 and later); the
/// CPU is then one load from this thread's rseq area, which the kernel keeps current.
fn find_rseq() {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: dlsym with the default handle and NUL-terminated names; the symbols,
        // when present, are glibc's exported `ptrdiff_t` and `unsigned int` variables.
        unsafe {
            let off = libc::dlsym(libc::RTLD_DEFAULT, c"__rseq_offset".as_ptr());
            let size = libc::dlsym(libc::RTLD_DEFAULT, c"__rseq_size".as_ptr());
            if off.is_null() || size.is_null() || *(size as *const u32) < 8 {
                return;
            }
            let off = *(off as *const isize);
            // The area must answer with the CPU sched_getcpu gives (a registered
            // area never reads as the unregistered value -1).
            if off != 0 && rseq_cpu(off) == libc::sched_getcpu() as u32 {
                RSEQ_OFFSET.store(off, Ordering::Relaxed);
            }
        }
    }
}

/// The CPU field of this thread's rseq area, `off` bytes from the thread pointer.
///
/// # Safety
///
/// `off` is glibc's `__rseq_offset` for a registered area.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn rseq_cpu(off: isize) -> u32 {
    let tp: *const u8;
    // SAFETY: on x86_64 Linux, %fs:0 holds the thread pointer (the TCB's own address).
    unsafe {
        std::arch::asm!("mov {}, fs:0", out(reg) tp, options(nostack, readonly, preserves_flags))
    };
    // SAFETY: the caller promises `off` locates this thread's `struct rseq`, whose
    // `cpu_id` (offset 4) the kernel updates; a volatile read sees the current value.
    unsafe { std::ptr::read_volatile(tp.offset(off).add(4) as *const u32) }
}

#[inline(always)]
fn cpu() -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        let off = RSEQ_OFFSET.load(Ordering::Relaxed);
        if off != 0 {
            // SAFETY: set only by `find_rseq` from glibc's offset of a registered area.
            return unsafe { rseq_cpu(off) };
        }
    }
    // SAFETY: no arguments; returns -1 on failure, which becomes u32::MAX.
    unsafe { libc::sched_getcpu() as u32 }
}

/// One chunk: records written by its thread while it is current, then read by the
/// writer once published.
struct Chunk {
    /// Published and not yet written out.
    full: AtomicBool,
    /// Records in it (stored by the owner after each record, so the writer can read a
    /// partial chunk at close).
    len: AtomicU32,
    buf: Box<[UnsafeCell<Rec>]>,
}

// SAFETY: the buffer is written only by the ring's thread while the chunk is not
// `full`, and read by the writer only up to `len` (acquire) or once `full` (acquire);
// the thread reuses it only after the writer stores `full = false` (release).
unsafe impl Sync for Chunk {}

/// One thread's ring.
struct Ring {
    tid: u32,
    chunks: Box<[Chunk]>,
    /// The chunk the thread is filling.
    current: AtomicUsize,
    /// The next chunk the writer writes.
    drain: AtomicUsize,
    /// Events lost, and when.
    lost: Mutex<Vec<Lost>>,
    lost_count: AtomicU64,
    /// The thread has exited (its last chunk is published).
    exited: AtomicBool,
}

impl Ring {
    fn new(tid: u32, chunk_records: usize, chunks: usize) -> Ring {
        Ring {
            tid,
            chunks: (0..chunks)
                .map(|_| Chunk {
                    full: AtomicBool::new(false),
                    len: AtomicU32::new(0),
                    buf: (0..chunk_records)
                        .map(|_| UnsafeCell::new(Rec::default()))
                        .collect(),
                })
                .collect(),
            current: AtomicUsize::new(0),
            drain: AtomicUsize::new(0),
            lost: Mutex::new(Vec::new()),
            lost_count: AtomicU64::new(0),
            exited: AtomicBool::new(false),
        }
    }
}

/// What a thread keeps in its thread-local slot.
struct Producer {
    ring: Option<Arc<Ring>>,
    generation: u64,
    buf: *mut Rec,
    /// The current chunk's length, published after each record.
    len: *const AtomicU32,
    pos: u32,
    cap: u32,
    /// The ring was full at the last chunk change: events are being lost.
    stalled: bool,
    lost_from: u64,
    lost_now: u64,
    last_ts: u64,
}

impl Producer {
    const fn new() -> Producer {
        Producer {
            ring: None,
            generation: 0,
            buf: std::ptr::null_mut(),
            len: std::ptr::null(),
            pos: 0,
            cap: 0,
            stalled: false,
            lost_from: 0,
            lost_now: 0,
            last_ts: 0,
        }
    }

    #[inline(always)]
    fn record(&mut self, generation: u64, id: u32, arg: u64) {
        if self.generation != generation && !self.attach(generation) {
            return;
        }
        if self.stalled && !self.resume() {
            self.lost_now += 1;
            return;
        }
        let ts = now();
        let rec = Rec {
            ts,
            arg,
            id,
            cpu: cpu(),
        };
        // SAFETY: `buf` points to the current chunk's `cap` records, which this thread
        // alone writes while the chunk is not full; `pos < cap` holds between calls.
        unsafe { self.buf.add(self.pos as usize).write(rec) };
        self.pos += 1;
        self.last_ts = ts;
        // SAFETY: `len` points into the ring this producer holds an Arc to.
        unsafe { (*self.len).store(self.pos, Ordering::Release) };
        if self.pos == self.cap {
            self.advance();
        }
    }

    /// Joins the open trace (a new ring for this thread), or leaves events ignored
    /// when none is open or it belongs to another process.
    #[cold]
    fn attach(&mut self, generation: u64) -> bool {
        self.detach();
        let guard = STATE.lock().unwrap_or_else(|e| e.into_inner());
        let Some(open) = guard.as_ref() else {
            return false;
        };
        if open.generation != generation || open.pid != std::process::id() {
            return false;
        }
        let tid = gettid();
        let ring = Arc::new(Ring::new(tid, open.chunk_records, open.chunks));
        open.rings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(ring.clone());
        drop(guard);
        self.buf = ring.chunks[0].data();
        self.len = &ring.chunks[0].len;
        self.cap = ring.chunks[0].len_capacity();
        self.pos = 0;
        self.stalled = false;
        self.lost_now = 0;
        self.ring = Some(ring);
        self.generation = generation;
        true
    }

    /// Publishes the current chunk and moves to the next, or stalls if it is not free.
    #[cold]
    fn advance(&mut self) {
        let ring = self.ring.as_ref().expect("attached").clone();
        let i = ring.current.load(Ordering::Relaxed);
        ring.chunks[i].full.store(true, Ordering::Release);
        let next = (i + 1) % ring.chunks.len();
        if ring.chunks[next].full.load(Ordering::Acquire) {
            self.stalled = true;
            self.lost_from = self.last_ts;
            self.lost_now = 0;
            // No chunk to write into: `current` stays until `resume` takes `next`.
            self.pos = self.cap;
            return;
        }
        self.take(&ring, next);
    }

    fn take(&mut self, ring: &Ring, next: usize) {
        ring.chunks[next].len.store(0, Ordering::Relaxed);
        ring.current.store(next, Ordering::Release);
        // The chunk is free, so this thread alone may write it.
        self.buf = ring.chunks[next].data();
        self.len = &ring.chunks[next].len;
        self.pos = 0;
    }

    /// Leaves the stalled state if the writer has freed the next chunk, recording the
    /// loss and its window.
    #[cold]
    fn resume(&mut self) -> bool {
        let ring = self.ring.as_ref().expect("attached").clone();
        let i = ring.current.load(Ordering::Relaxed);
        let next = (i + 1) % ring.chunks.len();
        if ring.chunks[next].full.load(Ordering::Acquire) {
            return false;
        }
        self.take(&ring, next);
        self.stalled = false;
        self.flush_loss(&ring, now());
        true
    }

    fn flush_loss(&mut self, ring: &Ring, to: u64) {
        if self.lost_now > 0 {
            ring.lost_count.fetch_add(self.lost_now, Ordering::Relaxed);
            ring.lost
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(Lost {
                    from: self.lost_from,
                    to,
                    count: self.lost_now,
                });
            self.lost_now = 0;
        }
    }

    /// Publishes what this thread has (its partial chunk, its losses) and lets go of
    /// the ring.
    fn detach(&mut self) {
        if let Some(ring) = self.ring.take() {
            self.flush_loss(&ring, u64::MAX);
            if !self.stalled {
                let i = ring.current.load(Ordering::Relaxed);
                if self.pos > 0 {
                    ring.chunks[i].full.store(true, Ordering::Release);
                }
            }
            ring.exited.store(true, Ordering::Release);
        }
        self.generation = 0;
    }
}

impl Chunk {
    fn len_capacity(&self) -> u32 {
        self.buf.len() as u32
    }

    /// The first record, for writing through (the records are `UnsafeCell`s).
    fn data(&self) -> *mut Rec {
        UnsafeCell::raw_get(self.buf.as_ptr())
    }
}

impl Drop for Producer {
    fn drop(&mut self) {
        self.detach();
    }
}

thread_local! {
    static LOCAL: UnsafeCell<Producer> = const { UnsafeCell::new(Producer::new()) };
    static SCRATCH: UnsafeCell<Producer> = const { UnsafeCell::new(Producer::new()) };
}

static ENABLED: AtomicBool = AtomicBool::new(false);
/// Increases with every trace opened; 0 means none yet.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// Records event `id` with `arg` in the open trace; does nothing when none is open or
/// recording is off. Any thread may call it; it takes no lock and makes no system
/// call except on a thread's first event of a trace.
#[inline]
pub fn record(id: u32, arg: u64) {
    record_with(&LOCAL, &ENABLED, &GENERATION, id, arg)
}

/// The body of [`record`], with its thread-local slot and switches as arguments, so
/// that the cost measurement at open runs exactly this code on a scratch slot.
#[inline(always)]
fn record_with(
    slot: &'static std::thread::LocalKey<UnsafeCell<Producer>>,
    enabled: &AtomicBool,
    generation: &AtomicU64,
    id: u32,
    arg: u64,
) {
    if !enabled.load(Ordering::Relaxed) {
        return;
    }
    let generation = generation.load(Ordering::Relaxed);
    slot.with(|p| {
        // SAFETY: the slot is this thread's own and `record` does not re-enter it
        // (nothing it calls records events).
        unsafe { (*p.get()).record(generation, id, arg) }
    });
}

/// How many events the calling thread can record before its ring is full: the rest
/// of its current chunk and the chunks after it that the writer has freed. `None` when
/// no trace is open or this thread has not recorded into it yet (its first event makes
/// its ring). A caller that must lose nothing (the harness timing [`record`]) waits,
/// outside its timed region, until the room covers what it is about to record.
pub fn room() -> Option<u64> {
    if !ENABLED.load(Ordering::Relaxed) {
        return None;
    }
    let generation = GENERATION.load(Ordering::Relaxed);
    LOCAL.with(|p| {
        // SAFETY: this thread's own slot, read between its records (`record` does not
        // run meanwhile on this thread).
        let p = unsafe { &*p.get() };
        let ring = p.ring.as_ref().filter(|_| p.generation == generation)?;
        let n = ring.chunks.len();
        let i = ring.current.load(Ordering::Relaxed);
        let mut room = if p.stalled {
            0
        } else {
            u64::from(p.cap - p.pos)
        };
        for step in 1..n {
            let c = &ring.chunks[(i + step) % n];
            if c.full.load(Ordering::Acquire) {
                break;
            }
            room += u64::from(c.len_capacity());
        }
        Some(room)
    })
}

/// How a trace is opened.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file to write.
    pub path: PathBuf,
    /// Bytes of ring per thread (rounded to whole chunks; at least [`MIN_BUFFER`]).
    pub buffer_bytes: u64,
}

impl Config {
    /// A trace to `path` with the default ring.
    pub fn new(path: impl Into<PathBuf>) -> Config {
        Config {
            path: path.into(),
            buffer_bytes: DEFAULT_BUFFER,
        }
    }
}

/// Counts of the open (or last closed) trace.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stats {
    /// Events written to the file so far.
    pub recorded: u64,
    /// Events lost because a ring was full.
    pub lost: u64,
    /// Chunks written.
    pub chunks: u64,
    /// The measured cost of one event, ns.
    pub event_cost_ns: f64,
}

struct Open {
    generation: u64,
    pid: u32,
    chunk_records: usize,
    chunks: usize,
    rings: Arc<Mutex<Vec<Arc<Ring>>>>,
    stop: Arc<AtomicBool>,
    writer: Option<std::thread::JoinHandle<io::Result<WriterTotals>>>,
    counts: Arc<Counts>,
    event_cost_ns: f64,
    path: PathBuf,
}

#[derive(Default)]
struct Counts {
    recorded: AtomicU64,
    chunks: AtomicU64,
}

struct WriterTotals {
    recorded: u64,
    lost: u64,
    chunks: u64,
}

static STATE: Mutex<Option<Open>> = Mutex::new(None);

fn gettid() -> u32 {
    // SAFETY: no arguments.
    unsafe { libc::gettid() as u32 }
}

/// Opens a trace: measures the cost of one event, writes the file's header and an
/// `open` metadata chunk, starts the writer, and turns recording on.
pub fn open(config: &Config) -> io::Result<()> {
    let mut state = STATE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(open) = state.as_ref() {
        if open.pid == std::process::id() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("a trace is already open ({})", open.path.display()),
            ));
        }
        // Inherited from a parent across fork: not ours to close; forget it.
        std::mem::forget(state.take());
    }
    let chunk_bytes = if config.buffer_bytes >= 2 * CHUNK_BYTES as u64 {
        CHUNK_BYTES
    } else {
        ((config.buffer_bytes.max(MIN_BUFFER) / 2) as usize / UserEvent::LEN)
            .max(MIN_CHUNK_BYTES / UserEvent::LEN)
            * UserEvent::LEN
    };
    let chunk_records = chunk_bytes / UserEvent::LEN;
    let chunks = ((config.buffer_bytes / chunk_bytes as u64) as usize).max(2);
    find_rseq();
    let event_cost_ns = measure_cost();

    let mut file = BufWriter::with_capacity(1 << 20, File::create(&config.path)?);
    file.write_all(&format::file_header())?;
    let opened_ns = now();
    format::write_meta(
        &mut file,
        &Meta::Open {
            clock: "CLOCK_MONOTONIC_RAW".into(),
            clock_check: clock_check(),
            event_cost_ns,
            event_cost_method:
                "median over 9 rounds of 20,000 back-to-back events through record's own \
                 code into a ring that is not written, per event"
                    .into(),
            pid: std::process::id(),
            program: program_name(),
            buffer_bytes: (chunks * chunk_bytes) as u64,
            opened_unix: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64()),
            opened_ns,
        },
    )?;
    file.flush()?;

    let generation = GENERATION.fetch_add(1, Ordering::SeqCst) + 1;
    let rings = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let counts = Arc::new(Counts::default());
    let writer = {
        let (rings, stop, counts) = (rings.clone(), stop.clone(), counts.clone());
        std::thread::Builder::new()
            .name("syscost-trace".into())
            .spawn(move || writer(file, rings, stop, counts))?
    };
    *state = Some(Open {
        generation,
        pid: std::process::id(),
        chunk_records,
        chunks,
        rings,
        stop,
        writer: Some(writer),
        counts,
        event_cost_ns,
        path: config.path.clone(),
    });
    ENABLED.store(true, Ordering::SeqCst);
    Ok(())
}

/// The environment variable naming the file a program should trace to.
pub const ENV_PATH: &str = "SYSCOST_TRACE";
/// The environment variable giving the ring per thread, bytes.
pub const ENV_BUFFER: &str = "SYSCOST_TRACE_BUFFER";

/// Opens the trace that `SYSCOST_TRACE` names (as `syscost trace record` sets it);
/// `Ok(false)` when it names none.
pub fn open_from_env() -> io::Result<bool> {
    let Some(path) = std::env::var_os(ENV_PATH).filter(|p| !p.is_empty()) else {
        return Ok(false);
    };
    let mut config = Config::new(PathBuf::from(path));
    if let Some(b) = std::env::var(ENV_BUFFER).ok().and_then(|b| b.parse().ok()) {
        config.buffer_bytes = b;
    }
    open(&config).map(|()| true)
}

/// Turns recording on or off without closing the trace (the memo's "continue" and
/// "close"); events recorded while off are ignored, not lost.
pub fn set_enabled(on: bool) -> io::Result<()> {
    let state = STATE.lock().unwrap_or_else(|e| e.into_inner());
    match state.as_ref() {
        Some(o) if o.pid == std::process::id() => {
            ENABLED.store(on, Ordering::SeqCst);
            Ok(())
        }
        _ => Err(io::Error::new(io::ErrorKind::NotFound, "no trace is open")),
    }
}

/// Names event `id` in the trace (a `names` metadata chunk).
pub fn name(id: u32, name: &str) -> io::Result<()> {
    let state = STATE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(open) = state.as_ref().filter(|o| o.pid == std::process::id()) else {
        return Err(io::Error::new(io::ErrorKind::NotFound, "no trace is open"));
    };
    PENDING_META
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((
            open.generation,
            Meta::Names {
                names: vec![(id, name.to_string())],
            },
        ));
    Ok(())
}

/// Metadata waiting for the writer, tagged with the trace it belongs to.
static PENDING_META: Mutex<Vec<(u64, Meta)>> = Mutex::new(Vec::new());

/// The counts so far.
pub fn stats() -> io::Result<Stats> {
    let state = STATE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(open) = state.as_ref().filter(|o| o.pid == std::process::id()) else {
        return Err(io::Error::new(io::ErrorKind::NotFound, "no trace is open"));
    };
    let lost = open
        .rings
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .map(|r| r.lost_count.load(Ordering::Relaxed))
        .sum();
    Ok(Stats {
        recorded: open.counts.recorded.load(Ordering::Relaxed),
        lost,
        chunks: open.counts.chunks.load(Ordering::Relaxed),
        event_cost_ns: open.event_cost_ns,
    })
}

/// Closes the trace: stops recording, writes every partial chunk and the totals, and
/// waits for the file to be complete. Returns the final counts.
pub fn close() -> io::Result<Stats> {
    let mut state = STATE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(mut open) = state.take() else {
        return Err(io::Error::new(io::ErrorKind::NotFound, "no trace is open"));
    };
    if open.pid != std::process::id() {
        std::mem::forget(open);
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            "the trace belongs to the parent process",
        ));
    }
    ENABLED.store(false, Ordering::SeqCst);
    // The calling thread's own partial chunk is published now; other threads'
    // partial chunks are read up to their length by the writer's last pass.
    LOCAL.with(|p| {
        // SAFETY: this thread's own slot, not borrowed elsewhere right now.
        unsafe { (*p.get()).detach() }
    });
    drop(state);
    std::thread::sleep(GRACE);
    open.stop.store(true, Ordering::SeqCst);
    let totals = open
        .writer
        .take()
        .expect("a writer")
        .join()
        .map_err(|_| io::Error::other("the trace writer panicked"))??;
    Ok(Stats {
        recorded: totals.recorded,
        lost: totals.lost,
        chunks: totals.chunks,
        event_cost_ns: open.event_cost_ns,
    })
}

/// The writer thread: the memo's evproc.
fn writer(
    mut file: BufWriter<File>,
    rings: Arc<Mutex<Vec<Arc<Ring>>>>,
    stop: Arc<AtomicBool>,
    counts: Arc<Counts>,
) -> io::Result<WriterTotals> {
    let generation = GENERATION.load(Ordering::SeqCst);
    let mut named = std::collections::BTreeSet::new();
    let mut lost_total = 0u64;
    loop {
        let last = stop.load(Ordering::SeqCst);
        let snapshot: Vec<Arc<Ring>> =
            rings.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let metas: Vec<Meta> = {
            let mut pending = PENDING_META.lock().unwrap_or_else(|e| e.into_inner());
            let (mine, rest): (Vec<_>, Vec<_>) =
                pending.drain(..).partition(|(g, _)| *g == generation);
            *pending = rest;
            mine.into_iter().map(|(_, m)| m).collect()
        };
        for m in &metas {
            format::write_meta(&mut file, m)?;
        }
        for ring in &snapshot {
            if named.insert(ring.tid) {
                if let Ok(name) =
                    std::fs::read_to_string(format!("/proc/self/task/{}/comm", ring.tid))
                {
                    format::write_meta(
                        &mut file,
                        &Meta::Thread {
                            tid: ring.tid,
                            name: name.trim_end().to_string(),
                        },
                    )?;
                }
            }
            drain_ring(&mut file, ring, &counts, last)?;
        }
        // Loss records go out as they come, so a killed program's file still says
        // what was lost before it died.
        for ring in &snapshot {
            lost_total += write_losses(&mut file, ring)?;
        }
        if last {
            break;
        }
        // Rings of threads that have exited and been written out are let go.
        rings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|r| !(r.exited.load(Ordering::Acquire) && drained(r)));
        file.flush()?;
        std::thread::sleep(POLL);
    }
    let recorded = counts.recorded.load(Ordering::Relaxed);
    let chunks = counts.chunks.load(Ordering::Relaxed);
    format::write_meta(
        &mut file,
        &Meta::Close {
            recorded,
            lost: lost_total,
            closed_ns: now(),
            chunks,
        },
    )?;
    file.flush()?;
    // Make the file durable; a device or pipe (/dev/null) cannot be synced, and has
    // nothing to make durable.
    match file.into_inner().map_err(|e| e.into_error())?.sync_data() {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
        r => r?,
    }
    Ok(WriterTotals {
        recorded,
        lost: lost_total,
        chunks,
    })
}

/// Writes the ring's pending loss records; returns the events they count.
fn write_losses(file: &mut BufWriter<File>, ring: &Ring) -> io::Result<u64> {
    let lost = std::mem::take(&mut *ring.lost.lock().unwrap_or_else(|e| e.into_inner()));
    if lost.is_empty() {
        return Ok(0);
    }
    let mut p = Vec::with_capacity(lost.len() * Lost::LEN);
    let mut n = 0;
    for l in &lost {
        l.put(&mut p);
        n += l.count;
    }
    format::write_chunk(file, ChunkKind::UserLost, ring.tid, lost.len() as u32, &p)?;
    Ok(n)
}

fn drained(r: &Ring) -> bool {
    let d = r.drain.load(Ordering::Relaxed);
    !r.chunks[d].full.load(Ordering::Acquire)
}

/// Writes every full chunk of `ring` in order; with `last`, also its current partial
/// chunk up to its length.
fn drain_ring(
    file: &mut BufWriter<File>,
    ring: &Ring,
    counts: &Counts,
    last: bool,
) -> io::Result<()> {
    let n = ring.chunks.len();
    loop {
        let d = ring.drain.load(Ordering::Relaxed);
        let chunk = &ring.chunks[d];
        if chunk.full.load(Ordering::Acquire) {
            let len = chunk.len.load(Ordering::Acquire) as usize;
            write_records(file, ring.tid, chunk, len, counts)?;
            chunk.len.store(0, Ordering::Relaxed);
            chunk.full.store(false, Ordering::Release);
            ring.drain.store((d + 1) % n, Ordering::Relaxed);
            continue;
        }
        if last && d == ring.current.load(Ordering::Acquire) {
            let len = chunk.len.load(Ordering::Acquire) as usize;
            if len > 0 {
                write_records(file, ring.tid, chunk, len, counts)?;
                chunk.len.store(0, Ordering::Relaxed);
            }
        }
        return Ok(());
    }
}

fn write_records(
    file: &mut BufWriter<File>,
    tid: u32,
    chunk: &Chunk,
    len: usize,
    counts: &Counts,
) -> io::Result<()> {
    // SAFETY: the first `len` records were stored before `len` (or `full`) was
    // published with release ordering and loaded here with acquire; the owner does
    // not write them again until the chunk is marked free. Rec is plain data with no
    // padding (24 bytes, checked above), so its bytes are its file form.
    let bytes = unsafe {
        std::slice::from_raw_parts(
            chunk.data().cast::<u8>().cast_const(),
            len * UserEvent::LEN,
        )
    };
    format::write_chunk(file, ChunkKind::User, tid, len as u32, bytes)?;
    counts.recorded.fetch_add(len as u64, Ordering::Relaxed);
    counts.chunks.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// The cost of one event, ns: the median over 9 rounds of 20,000 back-to-back events
/// through [`record`]'s own code (the thread-local lookup and the checks included) into
/// a scratch ring large enough that no round fills it, and that is never written.
fn measure_cost() -> f64 {
    const N: u64 = 20_000;
    // One chunk holds a whole round, so no chunk changes hands while the clock runs.
    let ring = Arc::new(Ring::new(0, N as usize + 1, 2));
    let enabled = AtomicBool::new(true);
    let generation = AtomicU64::new(u64::MAX);
    let start_round = || {
        SCRATCH.with(|p| {
            // SAFETY: this thread's own scratch slot, used only here.
            let p = unsafe { &mut *p.get() };
            p.ring = Some(ring.clone());
            p.generation = u64::MAX;
            p.buf = ring.chunks[0].data();
            p.len = &ring.chunks[0].len;
            p.cap = ring.chunks[0].len_capacity();
            p.pos = 0;
        })
    };
    let mut rounds = Vec::with_capacity(9);
    for _ in 0..9 {
        start_round();
        let t0 = now();
        for i in 0..N {
            record_with(&SCRATCH, &enabled, &generation, 1, i);
        }
        rounds.push((now() - t0) as f64 / N as f64);
    }
    SCRATCH.with(|p| {
        // SAFETY: this thread's own scratch slot.
        let p = unsafe { &mut *p.get() };
        p.ring = None;
        p.generation = 0;
    });
    rounds.sort_by(f64::total_cmp);
    rounds[rounds.len() / 2]
}

fn clock_check() -> String {
    let source = std::fs::read_to_string(
        "/sys/devices/system/clocksource/clocksource0/current_clocksource",
    )
    .map(|s| s.trim().to_string())
    .unwrap_or_else(|_| "unknown".into());
    format!(
        "events read CLOCK_MONOTONIC_RAW through the vDSO (clocksource {source}); syscost \
         opens the kernel's perf events with use_clockid CLOCK_MONOTONIC_RAW, so both \
         sides read the same clock"
    )
}

fn program_name() -> String {
    std::fs::read_to_string("/proc/self/comm")
        .map(|s| s.trim_end().to_string())
        .unwrap_or_default()
}

/// The path of the open trace, if any.
pub fn path() -> Option<PathBuf> {
    STATE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .map(|o| o.path.clone())
}
