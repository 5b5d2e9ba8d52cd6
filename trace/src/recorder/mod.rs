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
//!
//! # Layout
//!
//! This file holds the public calls (open, record, name, stats, close) and the state
//! of the open trace; `clock` reads the time and CPU an event carries; `ring` is the
//! per-thread ring and the producer side that fills it; `writer` is the thread that
//! drains the rings to the file.

mod clock;
mod ring;
mod writer;

pub use clock::now;

use crate::format::{self, Meta, UserEvent};
use clock::find_rseq;
use ring::{Producer, Ring};
use std::cell::UnsafeCell;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use writer::{writer, Counts, WriterTotals};

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

/// Runs `f` on the trace this process opened, or fails: no trace is open.
fn with_open<T>(f: impl FnOnce(&Open) -> T) -> io::Result<T> {
    let state = STATE.lock().unwrap_or_else(|e| e.into_inner());
    match state.as_ref().filter(|o| o.pid == std::process::id()) {
        Some(open) => Ok(f(open)),
        None => Err(io::Error::new(io::ErrorKind::NotFound, "no trace is open")),
    }
}

/// Turns recording on or off without closing the trace (the memo's "continue" and
/// "close"); events recorded while off are ignored, not lost.
pub fn set_enabled(on: bool) -> io::Result<()> {
    with_open(|_| ENABLED.store(on, Ordering::SeqCst))
}

/// Names event `id` in the trace (a `names` metadata chunk).
pub fn name(id: u32, name: &str) -> io::Result<()> {
    with_open(|open| {
        let names = vec![(id, name.to_string())];
        let mut pending = PENDING_META.lock().unwrap_or_else(|e| e.into_inner());
        pending.push((open.generation, Meta::Names { names }));
    })
}

/// Metadata waiting for the writer, tagged with the trace it belongs to.
static PENDING_META: Mutex<Vec<(u64, Meta)>> = Mutex::new(Vec::new());

/// The counts so far.
pub fn stats() -> io::Result<Stats> {
    with_open(|open| {
        let rings = open.rings.lock().unwrap_or_else(|e| e.into_inner());
        let lost = rings.iter().map(|r| r.lost_count.load(Ordering::Relaxed));
        Stats {
            lost: lost.sum(),
            recorded: open.counts.recorded.load(Ordering::Relaxed),
            chunks: open.counts.chunks.load(Ordering::Relaxed),
            event_cost_ns: open.event_cost_ns,
        }
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
