//! The writer thread (the memo's evproc): it drains every ring's full chunks to the
//! file in each ring's order, frees them, writes pending metadata and loss records,
//! and at close the partial chunks and the totals.

use super::clock::now;
use super::ring::{Chunk, Ring};
use super::{GENERATION, PENDING_META, POLL};
use crate::format::{self, ChunkKind, Lost, Meta, UserEvent};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Events and chunks written so far, read by `stats` while the trace is open.
#[derive(Default)]
pub(super) struct Counts {
    pub(super) recorded: AtomicU64,
    pub(super) chunks: AtomicU64,
}

/// What the writer wrote in all, returned when it ends.
pub(super) struct WriterTotals {
    pub(super) recorded: u64,
    pub(super) lost: u64,
    pub(super) chunks: u64,
}

/// The writer thread: the memo's evproc.
pub(super) fn writer(
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
    format::write_records(file, ChunkKind::UserLost, ring.tid, &lost, Lost::put)?;
    Ok(lost.iter().map(|l| l.count).sum())
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
    // padding (24 bytes, checked in `ring`), so its bytes are its file form.
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
