//! Files for the read benchmarks: a scratch file that has no name from the moment it
//! exists (so no exit path can leave it behind), free-space checks, cache eviction
//! (`posix_fadvise`, and the kernel's `drop_caches` when the user asks), the C
//! library's `FILE` streams, and this thread's I/O accounting.
//!
//! It must not know any benchmark by name, keep timing state, or print anything. The
//! only system-wide action, [`drop_caches`], is taken only when the caller was asked to.
//!
//! # Safety
//! The `unsafe` blocks pass valid, NUL-terminated paths and live buffers to the C
//! library, and a [`CFile`] owns its stream from `fdopen` until its `Drop` closes it.
#![allow(unsafe_code)]

use crate::host::parse::parse_status_field;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{BorrowedFd, FromRawFd, IntoRawFd, OwnedFd};
use std::path::Path;

/// Bytes available to an unprivileged user in the file system holding `dir`.
pub fn free_bytes(dir: &Path) -> io::Result<u64> {
    let st = rustix::fs::statvfs(dir)?;
    Ok(st.f_bavail * st.f_frsize)
}

/// The name of the file system type holding `dir`, for the few that matter here.
pub fn fs_name(dir: &Path) -> Option<&'static str> {
    let t = rustix::fs::statfs(dir).ok()?.f_type;
    Some(match t {
        libc::TMPFS_MAGIC => "tmpfs",
        0x858458f6 => "ramfs",
        libc::EXT4_SUPER_MAGIC => "ext4",
        libc::XFS_SUPER_MAGIC => "xfs",
        libc::BTRFS_SUPER_MAGIC => "btrfs",
        libc::NFS_SUPER_MAGIC => "nfs",
        libc::OVERLAYFS_SUPER_MAGIC => "overlayfs",
        _ => "other",
    })
}

/// A read-write file in `dir` that has no name (mode 0600): `tempfile`'s `O_TMPFILE`,
/// or where the file system lacks it, a new file unlinked at once. Its space is freed
/// when the last descriptor closes, however the process ends.
pub fn unnamed_file(dir: &Path) -> io::Result<File> {
    tempfile::tempfile_in(dir)
}

/// Fills `file` with `len` bytes of a repeating pattern and writes it to storage
/// (`fdatasync`), so that its cached pages are clean and can be evicted.
pub fn fill(file: &File, len: u64) -> io::Result<()> {
    let chunk: Vec<u8> = (0..1usize << 20).map(|i| (i % 251) as u8).collect();
    let mut w = file;
    let mut left = len;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        w.write_all(&chunk[..n])?;
        left -= n as u64;
    }
    file.sync_data()
}

/// Asks the kernel to drop the clean cached pages of the file's first `len` bytes
/// (`POSIX_FADV_DONTNEED`; `None`: the whole file).
pub fn evict(fd: BorrowedFd<'_>, len: Option<u64>) -> io::Result<()> {
    Ok(rustix::fs::fadvise(
        fd,
        0,
        len.and_then(std::num::NonZeroU64::new),
        rustix::fs::Advice::DontNeed,
    )?)
}

/// Writes every dirty page to storage and asks the kernel to drop its clean page cache
/// (`echo 1 > /proc/sys/vm/drop_caches`): a system-wide action, for `--drop-caches`
/// only, and root only.
pub fn drop_caches() -> io::Result<()> {
    rustix::fs::sync();
    std::fs::write("/proc/sys/vm/drop_caches", b"1")
}

/// Whether the process runs with an effective user id of 0.
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// A C library stream (`FILE *`) reading a file, closed on drop: the paper's `fread`.
pub struct CFile {
    f: *mut libc::FILE,
}

impl CFile {
    /// Opens a stream for reading on a duplicate of `fd` (its own file offset is shared
    /// with `fd`'s).
    pub fn open(fd: BorrowedFd<'_>) -> io::Result<CFile> {
        let dup = fd.try_clone_to_owned()?;
        let raw = dup.into_raw_fd();
        // SAFETY: `raw` is an open descriptor we own; the mode is NUL-terminated.
        let f = unsafe { libc::fdopen(raw, c"r".as_ptr()) };
        if f.is_null() {
            let e = io::Error::last_os_error();
            // SAFETY: fdopen failed, so `raw` is still ours to close.
            drop(unsafe { OwnedFd::from_raw_fd(raw) });
            return Err(e);
        }
        Ok(CFile { f })
    }

    /// `fread(buf, 1, len, f)`: the bytes read (short only at the end of the file or on
    /// an error).
    #[inline(always)]
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        // SAFETY: `buf` is a valid, writable buffer of the length passed; the stream is
        // open.
        unsafe {
            libc::fread(buf.as_mut_ptr() as *mut libc::c_void, 1, buf.len(), self.f)
        }
    }

    /// `rewind(f)`: back to the start, buffer discarded.
    pub fn rewind(&mut self) {
        // SAFETY: the stream is open.
        unsafe { libc::rewind(self.f) }
    }
}

impl Drop for CFile {
    fn drop(&mut self) {
        // SAFETY: the stream is open and closed exactly once, with its descriptor.
        unsafe { libc::fclose(self.f) };
    }
}

/// This thread's I/O accounting, from /proc/thread-self/io.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadIo {
    /// Read system calls (read, pread, readv...).
    pub syscr: u64,
    /// Bytes this thread caused to be fetched from storage.
    pub read_bytes: u64,
}

impl ThreadIo {
    /// Reads the counters; `None` where the kernel does not keep them.
    pub fn now() -> Option<ThreadIo> {
        let s = std::fs::read_to_string("/proc/thread-self/io").ok()?;
        let field = |name| parse_status_field(&s, name)?.parse().ok();
        Some(ThreadIo {
            syscr: field("syscr")?,
            read_bytes: field("read_bytes")?,
        })
    }

    /// The counts accumulated since `earlier`.
    pub fn since(&self, earlier: &ThreadIo) -> ThreadIo {
        ThreadIo {
            syscr: self.syscr.saturating_sub(earlier.syscr),
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek};
    use std::os::fd::AsFd;

    #[test]
    fn an_unnamed_file_leaves_no_entry_and_reads_back() {
        let dir = std::env::temp_dir();
        let mut f = unnamed_file(&dir).unwrap();
        fill(&f, 3 << 20).unwrap();
        assert_eq!(f.metadata().unwrap().len(), 3 << 20);
        assert!(free_bytes(&dir).unwrap() > 0);
        f.rewind().unwrap();
        let mut buf = [0u8; 4];
        f.read_exact(&mut buf).unwrap();
        assert_eq!(buf, [0, 1, 2, 3]);
        let mut c = CFile::open(f.as_fd()).unwrap();
        c.rewind();
        let mut buf = [0u8; 3];
        assert_eq!(c.read(&mut buf), 3);
        assert_eq!(buf, [0, 1, 2]);
        evict(f.as_fd(), None).unwrap();
        evict(f.as_fd(), Some(2)).unwrap();
        use std::os::unix::fs::MetadataExt;
        assert_eq!(f.metadata().unwrap().nlink(), 0, "the file has no name");
    }

    #[test]
    fn thread_io_counts_read_calls() {
        let Some(a) = ThreadIo::now() else { return };
        let mut f = File::open("/proc/self/stat").unwrap();
        let mut s = String::new();
        f.read_to_string(&mut s).unwrap();
        let b = ThreadIo::now().unwrap();
        assert!(b.since(&a).syscr >= 2);
    }
}
