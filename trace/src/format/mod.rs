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
//!
//! The format is laid out here by part: the constants, [`ChunkKind`] and
//! [`FormatError`] in this file; the records a chunk holds (`records`); the metadata
//! objects (`meta`); writing and reading chunks one by one (`chunk`); and reading a
//! whole file — its index, and its events merged by time (`read`). Everything is
//! re-exported here, so every item's path is `format::…`.

mod chunk;
mod meta;
mod read;
mod records;
#[cfg(test)]
mod tests;

pub use chunk::{
    file_header, parse_chunk_header, write_chunk, write_meta, write_records, ChunkHeader,
    ChunkReader,
};
pub use meta::Meta;
pub use read::{for_each_user_event, merge, read_kernel_events, Index, Merge};
pub use records::{Event, KernelEvent, KernelKind, Lost, UserEvent};

use std::fmt;
use std::io;

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

/// Reads a little-endian u64 at byte `at` of `b`.
fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// Reads a little-endian u32 at byte `at` of `b`.
fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}
