//! Reading a whole trace file: its [`Index`] (one pass over the chunk headers,
//! metadata and loss records, payloads skipped), and its events, merged across
//! streams by time ([`merge`]) or read stream by stream.

use super::{
    u64_at, ChunkHeader, ChunkKind, ChunkReader, Event, FormatError, KernelEvent, Lost,
    Meta, UserEvent,
};
use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};

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
                    let lost = match h.kind {
                        ChunkKind::Meta => {
                            // A metadata object this version cannot read is skipped, as
                            // an unknown chunk is.
                            match serde_json::from_slice::<Meta>(&payload) {
                                Ok(m) => index.meta.push(m),
                                Err(_) => index.unknown_chunks += 1,
                            }
                            continue;
                        }
                        ChunkKind::UserLost => &mut index.user_lost,
                        _ => &mut index.kernel_lost,
                    };
                    let records = payload.chunks_exact(Lost::LEN);
                    lost.extend(records.map(|b| (h.stream, Lost::get(b))));
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
    let kernel = index.kernel.iter().map(|s| (true, s));
    let cursors = kernel
        .chain(index.user.iter().map(|s| (false, s)))
        .map(|(kernel, (stream, chunks))| Cursor {
            chunks: chunks.clone().into_iter(),
            kernel,
            tid: *stream,
            buf: Vec::new(),
            at: 0,
            len: 0,
        })
        .collect();
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

/// Reads the payloads of `chunks` in order, calling `f` on each.
fn for_each_payload<'c>(
    file: &std::fs::File,
    chunks: impl IntoIterator<Item = &'c ChunkHeader>,
    mut f: impl FnMut(&[u8]),
) -> Result<(), FormatError> {
    use std::os::unix::fs::FileExt;
    let mut buf = Vec::new();
    for h in chunks {
        buf.resize(h.bytes as usize, 0);
        file.read_exact_at(&mut buf, h.offset)?;
        f(&buf);
    }
    Ok(())
}

/// Reads every event of one stream's chunks in order, calling `f` on each: the fast
/// path for reductions that work thread by thread.
pub fn for_each_user_event(
    file: &std::fs::File,
    chunks: &[ChunkHeader],
    mut f: impl FnMut(&UserEvent),
) -> Result<(), FormatError> {
    for_each_payload(file, chunks, |buf| {
        for b in buf.chunks_exact(UserEvent::LEN) {
            f(&UserEvent::get(b));
        }
    })
}

/// Reads every kernel event of the given chunks (one CPU's, or every CPU's one after
/// the other), in order.
pub fn read_kernel_events<'c>(
    file: &std::fs::File,
    chunks: impl IntoIterator<Item = &'c ChunkHeader>,
) -> Result<Vec<KernelEvent>, FormatError> {
    let mut out = Vec::new();
    for_each_payload(file, chunks, |buf| {
        out.extend(buf.chunks_exact(KernelEvent::LEN).map(KernelEvent::get))
    })?;
    Ok(out)
}
