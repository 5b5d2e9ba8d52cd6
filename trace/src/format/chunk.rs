//! Chunks one at a time: the file header, writing a chunk (and a metadata chunk), and
//! [`ChunkReader`], which checks the header and reads chunk after chunk from any
//! reader, stopping cleanly at a file cut short.

use super::{
    u32_at, ChunkKind, FormatError, Meta, CHUNK_HEADER_LEN, FILE_HEADER_LEN, MAGIC,
    MAX_PAYLOAD, VERSION,
};
use std::io::{self, Read, Write};

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

/// Writes `records` as one chunk of `kind` for `stream`, each record's bytes appended
/// by `put` (e.g. [`UserEvent::put`](super::UserEvent::put)).
pub fn write_records<W: Write, R>(
    out: &mut W,
    kind: ChunkKind,
    stream: u32,
    records: &[R],
    put: impl Fn(&R, &mut Vec<u8>),
) -> io::Result<()> {
    let mut payload = Vec::with_capacity(records.len() * kind.record_len());
    for r in records {
        put(r, &mut payload);
    }
    write_chunk(out, kind, stream, records.len() as u32, &payload)
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
    // The reader, the offset of what it reads next, and whether the input ended
    // mid-chunk: the index (`read`) skips payloads through them.
    pub(super) inner: R,
    pub(super) pos: u64,
    pub(super) truncated: bool,
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

    /// The next chunk's header, its payload not read (`None` at the end, or at a
    /// header cut short).
    pub(super) fn next_header(&mut self) -> Result<Option<ChunkHeader>, FormatError> {
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
