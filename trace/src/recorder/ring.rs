//! A thread's ring of fixed chunks and the producer that fills it: the lock-free path
//! of [`record`](super::record), the chunk hand-over to the writer, and the loss
//! windows counted while the ring is full.

use super::clock::{cpu, now};
use super::{gettid, STATE};
use crate::format::{Lost, UserEvent};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// One record in memory: the file's 24 bytes, in the file's order (little-endian on
/// the machines this crate supports).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(super) struct Rec {
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

/// One chunk: records written by its thread while it is current, then read by the
/// writer once published.
pub(super) struct Chunk {
    /// Published and not yet written out.
    pub(super) full: AtomicBool,
    /// Records in it (stored by the owner after each record, so the writer can read a
    /// partial chunk at close).
    pub(super) len: AtomicU32,
    buf: Box<[UnsafeCell<Rec>]>,
}

// SAFETY: the buffer is written only by the ring's thread while the chunk is not
// `full`, and read by the writer only up to `len` (acquire) or once `full` (acquire);
// the thread reuses it only after the writer stores `full = false` (release).
unsafe impl Sync for Chunk {}

/// One thread's ring.
pub(super) struct Ring {
    pub(super) tid: u32,
    pub(super) chunks: Box<[Chunk]>,
    /// The chunk the thread is filling.
    pub(super) current: AtomicUsize,
    /// The next chunk the writer writes.
    pub(super) drain: AtomicUsize,
    /// Events lost, and when.
    pub(super) lost: Mutex<Vec<Lost>>,
    pub(super) lost_count: AtomicU64,
    /// The thread has exited (its last chunk is published).
    pub(super) exited: AtomicBool,
}

impl Ring {
    pub(super) fn new(tid: u32, chunk_records: usize, chunks: usize) -> Ring {
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
pub(super) struct Producer {
    pub(super) ring: Option<Arc<Ring>>,
    pub(super) generation: u64,
    pub(super) buf: *mut Rec,
    /// The current chunk's length, published after each record.
    pub(super) len: *const AtomicU32,
    pub(super) pos: u32,
    pub(super) cap: u32,
    /// The ring was full at the last chunk change: events are being lost.
    pub(super) stalled: bool,
    lost_from: u64,
    lost_now: u64,
    last_ts: u64,
}

impl Producer {
    pub(super) const fn new() -> Producer {
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
    pub(super) fn record(&mut self, generation: u64, id: u32, arg: u64) {
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
    pub(super) fn detach(&mut self) {
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
    pub(super) fn len_capacity(&self) -> u32 {
        self.buf.len() as u32
    }

    /// The first record, for writing through (the records are `UnsafeCell`s).
    pub(super) fn data(&self) -> *mut Rec {
        UnsafeCell::raw_get(self.buf.as_ptr())
    }
}

impl Drop for Producer {
    fn drop(&mut self) {
        self.detach();
    }
}
