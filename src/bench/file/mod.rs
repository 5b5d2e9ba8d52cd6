//! `file.*`: reading a file by read, pread, a Rust `BufReader`, the C library's
//! `fread` and a memory mapping, over buffer sizes, from a cold or a warm page cache
//! (1999 §6, its figures 1–2).
//!
//! It also defines the scratch file the file benchmarks and `mem.fault.file` read: one
//! unnamed file (see [`crate::os::file::unnamed_file`]) in the directory the user
//! chose, created once per size by the run's [`RunContext`](super::RunContext) and
//! shared by every instance of that run, so a sweep does not write 128 MiB per point.
//! Having no name, it cannot outlive the process; its space is checked before it is
//! written.
//!
//! The run's options for this family (`--dir`, `--drop-caches`) are [`Options`], which
//! the run context carries to each benchmark's `prepare`. A library caller's default
//! context gives the temporary directory, `posix_fadvise` eviction and a small file.

pub mod fs;
pub mod ops;
mod read;

pub use read::{default_file_bytes, COLD_SPAN};

use super::{Bench, OrOs};
use crate::error::BenchError;
use crate::os::file::{self as rf, ThreadIo};
use crate::os::mem::Mapping;
use std::fs::File;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

/// The family's benchmarks.
pub const BENCHES: &[&dyn Bench] = &[
    &read::READ,
    &super::shared::OPEN_CLOSE,
    &fs::CREATE,
    &fs::DELETE,
];

/// The run's options for file benchmarks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// Where the scratch file lives (`--dir`); the temporary directory when `None`.
    pub dir: Option<PathBuf>,
    /// Evict with the kernel's drop_caches instead of `posix_fadvise` (`--drop-caches`,
    /// root only).
    pub drop_caches: bool,
}

#[cfg(test)]
impl Options {
    /// The scratch file in `dir`, evicted by `posix_fadvise`: what the tests run with.
    pub(crate) fn in_dir(dir: &std::path::Path) -> Options {
        Options {
            dir: Some(dir.to_path_buf()),
            drop_caches: false,
        }
    }
}

/// Space left free beside the scratch file, so that a run never fills a file system.
const HEADROOM: u64 = 256 << 20;

/// The scratch file: `len` bytes of a pattern, written to storage, with no name.
pub struct Scratch {
    file: File,
    len: u64,
    dir: PathBuf,
}

impl Scratch {
    /// The open file.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Its length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether it is empty (never).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The directory it was made in.
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// A shared read-only mapping of the whole file, for `mincore`.
    pub fn map(&self) -> Result<Mapping, BenchError> {
        Mapping::file(self.file.as_fd(), self.len as usize, true)
            .or_os("mmap of the scratch file")
    }

    /// Reads the whole file once, so its pages are in the page cache; a file already
    /// resident page for page (`mincore`) is left alone. Reading 128 MiB again took
    /// 30–70 ms of each warm round's set-up, a third of a whole run's time in `file.*`.
    pub fn warm(&self) -> Result<(), BenchError> {
        use std::os::unix::fs::FileExt;
        const CHUNK: usize = 1 << 20;
        let page = crate::os::mem::page_size();
        let resident = self.map()?.residency(self.len as usize).or_os("mincore")?;
        let per_chunk = CHUNK / page;
        let mut buf = Vec::new();
        // Read each 1 MiB chunk that has a page missing (a cold read evicts only the
        // start of the file).
        for (c, pages) in resident.chunks(per_chunk).enumerate() {
            if pages.iter().all(|&r| r) {
                continue;
            }
            buf.resize(CHUNK, 0);
            let mut off = (c * CHUNK) as u64;
            let end = (off + CHUNK as u64).min(self.len);
            while off < end {
                let want = (end - off) as usize;
                let n = self
                    .file
                    .read_at(&mut buf[..want], off)
                    .or_os("read of the scratch file")?;
                if n == 0 {
                    break;
                }
                off += n as u64;
            }
        }
        Ok(())
    }

    /// Evicts the file's first `len` bytes from the page cache (the whole file with
    /// `--drop-caches`) and checks with `mincore` (through `map`, a mapping of the
    /// whole file that has touched nothing) that no page of them is left. Tries three
    /// times; returns how many pages stayed resident (0: verified cold).
    pub fn evict(
        &self,
        map: &Mapping,
        drop_caches: bool,
        len: u64,
    ) -> Result<usize, BenchError> {
        let len = len.min(self.len);
        let mut left = usize::MAX;
        for _ in 0..3 {
            if drop_caches {
                rf::drop_caches().or_os("writing /proc/sys/vm/drop_caches")?;
            } else {
                rf::evict(self.file.as_fd(), Some(len))
                    .or_os("posix_fadvise(DONTNEED)")?;
            }
            left = map.resident_pages_in(len as usize).or_os("mincore")?;
            if left == 0 {
                break;
            }
        }
        Ok(left)
    }
}

impl Scratch {
    /// A scratch file made elsewhere (by the run's parent process) and handed over
    /// open: `file` holds `len` bytes and lives in `dir`.
    pub fn adopt(file: File, len: u64, dir: PathBuf) -> Scratch {
        Scratch { file, len, dir }
    }

    /// Writes a new unnamed scratch file of `len` bytes of a pattern in `dir`, after
    /// checking that the file system keeps [`HEADROOM`] free beside it.
    pub(super) fn create(dir: PathBuf, len: u64) -> Result<Scratch, BenchError> {
        let free = rf::free_bytes(&dir).or_os(&format!("statvfs {}", dir.display()))?;
        if free < len + HEADROOM {
            return Err(BenchError::Skip(format!(
                "{} has {} MiB free; a {} MiB test file needs {} MiB (choose another \
                 directory with --dir, or a smaller file with --param file=...)",
                dir.display(),
                free >> 20,
                len >> 20,
                (len + HEADROOM) >> 20
            )));
        }
        let file = unnamed_in(&dir)?;
        rf::fill(&file, len).or_os("writing the test file")?;
        Ok(Scratch { file, len, dir })
    }
}

/// An unnamed file in `dir`; the error says how to choose another directory.
pub(crate) fn unnamed_in(dir: &Path) -> Result<File, BenchError> {
    rf::unnamed_file(dir).or_os(&format!(
        "creating a test file in {} (choose another with --dir)",
        dir.display()
    ))
}

/// Read system calls and storage reads of this thread, accumulated by a body between
/// its batches and read by its after-step.
#[derive(Debug, Clone, Copy, Default)]
pub struct IoTally {
    /// Read system calls.
    pub syscalls: u64,
    /// Bytes fetched from storage.
    pub storage_bytes: u64,
    /// Bytes the benchmark consumed.
    pub bytes: u64,
    /// The counters at the last reset, when the kernel keeps them.
    last: Option<ThreadIo>,
    /// What reading the counters itself costs, in read calls.
    probe_calls: u64,
}

impl IoTally {
    /// A tally, with the cost of reading the counters measured.
    pub fn new() -> IoTally {
        let a = ThreadIo::now();
        let b = ThreadIo::now();
        let probe_calls = match (a, b) {
            (Some(a), Some(b)) => b.since(&a).syscr,
            _ => 0,
        };
        IoTally {
            probe_calls,
            ..IoTally::default()
        }
    }

    /// Adds what happened since the last call (the previous batch) and the `bytes` that
    /// batch consumed.
    pub fn mark(&mut self, bytes: u64) {
        let now = ThreadIo::now();
        if let (Some(last), Some(now)) = (self.last, now) {
            let d = now.since(&last);
            self.syscalls += d.syscr.saturating_sub(self.probe_calls);
            self.storage_bytes += d.read_bytes;
            self.bytes += bytes;
        }
        self.last = now;
    }

    /// Whether any batch was counted.
    pub fn counted(&self) -> bool {
        self.bytes > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicting_the_start_leaves_the_rest_cached_and_warming_reads_back_only_that() {
        let dir = std::env::temp_dir();
        let fs = rf::fs_name(&dir);
        if !matches!(fs, Some("ext4") | Some("xfs") | Some("btrfs")) {
            eprintln!("skipped: {fs:?} does not evict on request");
            return;
        }
        let page = crate::os::mem::page_size();
        let s = Scratch::create(dir, 6 << 20).unwrap();
        s.warm().unwrap();
        let map = s.map().unwrap();
        let all = map.len().div_ceil(page);
        assert_eq!(
            map.resident_pages().unwrap(),
            all,
            "warm: every page cached"
        );
        let left = s.evict(&map, false, 2 << 20).unwrap();
        assert_eq!(left, 0, "the first 2 MiB verified cold");
        let resident = map.residency(map.len()).unwrap();
        let head = (2 << 20) / page;
        assert!(resident[..head].iter().all(|&r| !r));
        assert!(resident[head..].iter().all(|&r| r), "the rest stays cached");
        s.warm().unwrap();
        assert_eq!(map.resident_pages().unwrap(), all, "warm again");
    }
}
