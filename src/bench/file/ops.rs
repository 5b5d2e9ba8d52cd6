//! will-it-scale's file tests as benchmarks: a 4 KiB `pread`, `pwrite`, sequential
//! `read` and `write`, `lseek` alone and before a read or a write, a record lock and
//! its release, `fallocate` of 8 KiB, and the create-close-unlink of a file, each the
//! loop of one of its tests (`read1`, `pwrite2`, `lock1`, …), on a file in the run's
//! scratch directory as its tests use /tmp.
//!
//! Its tests come as "separate file" (each task its own), "same file" and "same file,
//! different offsets"; here `share=file-per-copy|one-file|page-per-copy` says which, and
//! it matters with `copies=N`. A copy's own file has no name (it is gone when the last
//! descriptor closes, however the process ends). The file every copy opens also has
//! none: the first copy to set up makes it and leaves, in the round's directory
//! ([`RunContext::copies_dir`]), a symbolic link to its descriptor in /proc, through
//! which the others open it; the session removes that directory. Each copy opens a
//! descriptor of its own, as each of will-it-scale's tasks does. Only `file.unlink`
//! makes names in the scratch directory, and removes them in its loop and on drop.
//!
//! The timed loop holds the test's calls and nothing else; like will-it-scale's loops
//! it rewinds a sequential read or write when it reaches the end of the 1 MiB file,
//! inside the loop (one call in 256).

use crate::bench::facts::*;
use crate::bench::{check, InRun, Kind, OrOs, ParamSpec, Params, Prepared, RunContext};
use crate::error::BenchError;
use crate::harness::{Body, Plan};
use crate::os::mem::Mapping;
use crate::os::ops;
use crate::os::sys;
use std::ffi::CString;
use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::Path;

/// will-it-scale's BUFLEN: the bytes of one read or write, and the page a copy owns
/// in a shared file.
const BUF: usize = 4096;
/// will-it-scale's FILESIZE: where a sequential read or write starts again.
const FILE_BYTES: u64 = 1 << 20;

/// Which file a copy works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Share {
    /// Its own file ("Separate file").
    PerCopy,
    /// The file every copy opens, at offset 0 ("Same file").
    One,
    /// The file every copy opens, at the copy's own page ("different offsets").
    PagePerCopy,
}

impl Share {
    fn of(p: &Params) -> Share {
        match p.get("share") {
            "one-file" => Share::One,
            "page-per-copy" => Share::PagePerCopy,
            _ => Share::PerCopy,
        }
    }
}

const SHARE3: ParamSpec = ParamSpec {
    name: "share",
    default: "file-per-copy",
    about:
        "file-per-copy: each copy its own file (will-it-scale's N1) · one-file: every \
            copy the same file and offset (N2) · page-per-copy: the same file, each copy \
            its own page (N3)",
    kind: Kind::Choice(&["file-per-copy", "one-file", "page-per-copy"]),
};

const SHARE2: ParamSpec = ParamSpec {
    name: "share",
    default: "file-per-copy",
    about:
        "file-per-copy: each copy its own file (will-it-scale's N1) · one-file: every \
            copy its own descriptor of the same file (N2)",
    kind: Kind::Choice(&["file-per-copy", "one-file"]),
};

/// The file a copy works on: its own descriptor, the unnamed file it made (when it
/// made it), and the offset of its page.
struct Target {
    fd: OwnedFd,
    _made: Option<File>,
    offset: u64,
}

/// Makes an unnamed file of `len` bytes in `dir`.
fn made(dir: &Path, len: u64) -> Result<File, BenchError> {
    let f = crate::bench::file::unnamed_in(dir)?;
    // Zeros by write(2), left in the page cache, as will-it-scale's set-up writes them:
    // a page written back to allocated blocks costs a write over it more (ext4 journals
    // the overwrite), so the file starts as the peer's does.
    let zeros = vec![0u8; BUF];
    let mut left = len;
    while left > 0 {
        let n = left.min(BUF as u64) as usize;
        std::io::Write::write_all(&mut &f, &zeros[..n]).or_os("writing the test file")?;
        left -= n as u64;
    }
    Ok(f)
}

/// The bytes will-it-scale's set-up writes for `op` before its loop: the 1 MiB its
/// sequential reads go through, one page (or a page per task, `page-per-copy`) where
/// its loop reads or seeks, and nothing where the loop writes into its own file or
/// only locks it.
fn initial_len(op: Op, share: Share, copies: usize) -> u64 {
    match (op, share) {
        (Op::ReadSeq, _) => FILE_BYTES,
        (Op::WriteSeq | Op::Lock | Op::Fallocate, _) => 0,
        (_, Share::PagePerCopy) => (BUF * copies.max(1)) as u64,
        (Op::Pwrite | Op::WriteSeek, Share::PerCopy) => 0,
        _ => BUF as u64,
    }
}

fn cpath(p: &Path) -> Result<CString, BenchError> {
    CString::new(p.as_os_str().as_encoded_bytes())
        .map_err(|_| BenchError::Failed("a path with a NUL byte".into()))
}

/// The file this copy works on (see the module's note), opened with `flags`.
fn target(
    cx: &RunContext,
    stem: &str,
    share: Share,
    len: u64,
    flags: libc::c_int,
) -> Result<Target, BenchError> {
    let dir = cx.scratch_dir();
    let own = made(&dir, len)?;
    let proc_path = format!("/proc/{}/fd/{}", std::process::id(), own.as_raw_fd());
    let (path, keep) = match (share, cx.copies_dir()) {
        (Share::PerCopy, _) | (_, None) => (proc_path.into(), Some(own)),
        (_, Some(shared)) => {
            let link = shared.join(format!("{stem}-shared"));
            match std::os::unix::fs::symlink(&proc_path, &link) {
                Ok(()) => (link, Some(own)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => (link, None),
                Err(e) => {
                    return Err(BenchError::os("symlink in the copies' directory", e))
                }
            }
        }
    };
    let fd = sys::open(&cpath(&path)?, flags | libc::O_CLOEXEC).map_err(|e| {
        let what = format!("opening the test file in {}", dir.display());
        if e.raw_os_error() == Some(libc::EINVAL) && flags & libc::O_DIRECT != 0 {
            BenchError::Skip(format!(
                "{} refuses O_DIRECT (direct=yes needs another --dir)",
                dir.display()
            ))
        } else {
            BenchError::os(&what, e)
        }
    })?;
    let offset = match share {
        Share::PagePerCopy => (cx.copy().map_or(0, |c| c.0) * BUF) as u64,
        _ => 0,
    };
    Ok(Target {
        fd,
        _made: keep,
        offset,
    })
}

/// A page-aligned buffer of [`BUF`] bytes, its page already faulted in.
fn buffer() -> Result<Mapping, BenchError> {
    let mut m = Mapping::anon(BUF, false).or_os("mmap")?;
    m.as_mut_slice().fill(0);
    Ok(m)
}

/// A read or write that moved other than [`BUF`] bytes: its errno, or the count.
#[cold]
#[inline(never)]
fn short(r: isize, what: &'static str) -> BenchError {
    if r < 0 {
        BenchError::last_os(what)
    } else {
        BenchError::Failed(format!("{what} moved {r} bytes, not {BUF}"))
    }
}

#[inline(always)]
fn full(r: isize, what: &'static str) -> Result<(), BenchError> {
    if r != BUF as isize {
        return Err(short(r, what));
    }
    Ok(())
}

/// The operation of one benchmark of this file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    ReadSeq,
    Pread,
    Pwrite,
    ReadSeek,
    WriteSeek,
    Lseek,
    WriteSeq,
    Lock,
    Fallocate,
}

/// One copy's body: the test's loop on its target.
struct FileOp {
    op: Op,
    t: Target,
    buf: Mapping,
    /// Where a sequential write stands.
    pos: u64,
}

impl FileOp {
    /// One untimed pass over the file from its start, left at the start again. Every
    /// round makes its file anew, and the first O_DIRECT pass over blocks just written
    /// costs about twice the passes after it, which will-it-scale's loop (pass after
    /// pass over one file) times
    /// (measurements/peers.md, "The peers whole, and three operations made the peer's").
    fn first_pass(&mut self) -> Result<(), BenchError> {
        let fd = self.t.fd.as_fd();
        for _ in 0..FILE_BYTES / BUF as u64 {
            full(ops::read(fd, self.buf.as_mut_slice()), "read")?;
        }
        check(ops::seek_to(fd, 0), "lseek")
    }

    #[inline(always)]
    fn once(&mut self) -> Result<(), BenchError> {
        let fd = self.t.fd.as_fd();
        let off = self.t.offset;
        match self.op {
            Op::ReadSeq => {
                let r = ops::read(fd, self.buf.as_mut_slice());
                check(r as i64, "read")?;
                if r == 0 {
                    check(ops::seek_to(fd, 0), "lseek")?;
                }
            }
            Op::Pread => full(ops::pread(fd, self.buf.as_mut_slice(), off), "pread")?,
            Op::Pwrite => full(ops::pwrite(fd, self.buf.as_mut_slice(), off), "pwrite")?,
            Op::ReadSeek => {
                check(ops::seek_to(fd, off), "lseek")?;
                full(ops::read(fd, self.buf.as_mut_slice()), "read")?;
            }
            Op::WriteSeek => {
                check(ops::seek_to(fd, off), "lseek")?;
                full(ops::write(fd, self.buf.as_mut_slice()), "write")?;
            }
            Op::Lseek => check(ops::seek_to(fd, off), "lseek")?,
            Op::WriteSeq => {
                full(ops::write(fd, self.buf.as_mut_slice()), "write")?;
                self.pos += BUF as u64;
                if self.pos >= FILE_BYTES {
                    self.pos = 0;
                    check(ops::seek_to(fd, 0), "lseek")?;
                }
            }
            Op::Lock => {
                check(ops::lock_first_byte(fd, true) as i64, "fcntl(F_SETLKW)")?;
                check(ops::lock_first_byte(fd, false) as i64, "fcntl(F_SETLKW)")?;
            }
            Op::Fallocate => {
                // One iteration is the test's whole cycle, so that every batch holds
                // its share of the truncations (see `FALLOCATE_CYCLE`).
                let mut pos = 0;
                while pos < FILE_BYTES {
                    check(ops::fallocate(fd, pos, FALLOCATE) as i64, "fallocate")?;
                    pos += FALLOCATE;
                }
                check(ops::ftruncate(fd, 0) as i64, "ftruncate")?;
            }
        }
        Ok(())
    }
}

impl Body for FileOp {
    #[inline(never)]
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for _ in 0..iters {
            self.once()?;
        }
        Ok(())
    }
}

/// will-it-scale's fallocate1/2 BUFLEN: FILESIZE / 128.
const FALLOCATE: u64 = FILE_BYTES / 128;
/// The fallocate calls of one cycle: 128 of them fill the file's 1 MiB, then one
/// ftruncate to 0 frees its 256 pages. The truncation costs as much as tens of calls, so
/// a batch that held a part of a cycle would hold a truncation or not, and the median
/// batch would leave it out: an iteration of the body is the whole cycle, and the
/// figure is per call.
const FALLOCATE_CYCLE: u64 = FILE_BYTES / FALLOCATE;

/// Builds `op`'s body for `p` in `cx`.
fn prepare_op(op: Op, p: &Params, cx: &RunContext) -> Result<Prepared, BenchError> {
    let share = if p.0.iter().any(|(k, _)| *k == "share") {
        Share::of(p)
    } else {
        Share::PerCopy
    };
    let direct = p.0.iter().any(|(k, v)| *k == "direct" && v == "yes");
    // Copies writing one file take its inode's lock in turn: a write may wait for it.
    let copies = crate::bench::copies::Copies::of(p).map_or(1, |c| c.n);
    let waits_for_inode = share != Share::PerCopy
        && copies > 1
        && matches!(
            op,
            Op::Pwrite | Op::WriteSeek | Op::WriteSeq | Op::Fallocate
        );
    let write = matches!(
        op,
        Op::Pwrite | Op::WriteSeek | Op::Lseek | Op::WriteSeq | Op::Lock | Op::Fallocate
    );
    let mut flags = if write { libc::O_RDWR } else { libc::O_RDONLY };
    if direct {
        flags |= libc::O_DIRECT;
    }
    let stem = match op {
        Op::Lock => "lock",
        Op::Lseek => "lseek",
        _ => "rw",
    };
    let t = if op == Op::Fallocate {
        let tmpfs = p.get("dir") == "tmpfs";
        let dir = Path::new("/dev/shm");
        if tmpfs && !dir.is_dir() {
            return Err(BenchError::Skip("dir=tmpfs: there is no /dev/shm".into()));
        }
        let dir = if tmpfs {
            dir.to_path_buf()
        } else {
            cx.scratch_dir()
        };
        let f = made(&dir, 0)?;
        let fd = f.as_fd().try_clone_to_owned().or_os("dup")?;
        Target {
            fd,
            _made: Some(f),
            offset: 0,
        }
    } else {
        let copies = cx.copy().map_or(1, |c| c.1);
        target(cx, stem, share, initial_len(op, share, copies), flags)?
    };
    let mut body = FileOp {
        op,
        t,
        buf: buffer()?,
        pos: 0,
    };
    if direct && op == Op::ReadSeq {
        body.first_pass()?;
    }
    let what = match op {
        Op::ReadSeq => "read call",
        Op::Pread => "pread call",
        Op::Pwrite => "pwrite call",
        Op::ReadSeek => "lseek+read pair",
        Op::WriteSeek => "lseek+write pair",
        Op::Lseek => "lseek call",
        Op::WriteSeq => "write call",
        Op::Lock => "lock+unlock pair",
        Op::Fallocate => "fallocate call",
    };
    let plan = Plan {
        per_iter: if op == Op::Fallocate {
            FALLOCATE_CYCLE
        } else {
            0
        },
        // Another process's lock on the same file makes F_SETLKW wait; a direct read
        // waits for the device.
        ..crate::bench::switching(op == Op::Lock || direct || waits_for_inode)
    };
    Ok(Prepared::new(Box::new(body)).op(what).plan(plan))
}

macro_rules! file_op {
    ($konst:ident, $fn:ident, $op:expr, $name:literal, $calls:literal, $about:literal, $params:expr) => {
        fn $fn(p: &Params, cx: &RunContext) -> Result<Prepared, BenchError> {
            prepare_op($op, p, cx)
        }
        #[doc = concat!("`", $name, "`.")]
        pub const $konst: InRun = InRun {
            name: $name,
            about: $about,
            origin: "",
            params: $params,
            facts: NAMED.on(Libc, $calls),
            prepare: $fn,
        };
    };
}

file_op!(
    READSEQ,
    prep_readseq,
    Op::ReadSeq,
    "file.readseq",
    "read; lseek at the file's end",
    "read(2) of 4 KiB going through a 1 MiB file, lseek back to its start at the end \
     (will-it-scale's read1-4)",
    &[
        SHARE2,
        ParamSpec {
            name: "direct",
            default: "no",
            about: "no: from the page cache · yes: O_DIRECT, from the device",
            kind: Kind::Choice(&["no", "yes"]),
        },
    ]
);
file_op!(
    PREAD,
    prep_pread,
    Op::Pread,
    "file.pread",
    "pread",
    "pread(2) of 4 KiB at one offset of a cached file (will-it-scale's pread1-3)",
    &[SHARE3]
);
file_op!(
    PWRITE,
    prep_pwrite,
    Op::Pwrite,
    "file.pwrite",
    "pwrite",
    "pwrite(2) of 4 KiB at one offset of a file (will-it-scale's pwrite1-3)",
    &[SHARE3]
);
file_op!(
    READSEEK,
    prep_readseek,
    Op::ReadSeek,
    "file.readseek",
    "lseek, then read",
    "lseek(2) to one offset, then read(2) of 4 KiB there (will-it-scale's readseek1-3)",
    &[SHARE3]
);
file_op!(
    WRITESEEK,
    prep_writeseek,
    Op::WriteSeek,
    "file.writeseek",
    "lseek, then write",
    "lseek(2) to one offset, then write(2) of 4 KiB there (will-it-scale's \
     writeseek1-3)",
    &[SHARE3]
);
file_op!(
    LSEEK,
    prep_lseek,
    Op::Lseek,
    "file.lseek",
    "lseek",
    "lseek(2) to the start of a file of one page (will-it-scale's lseek1-2)",
    &[SHARE2]
);
file_op!(
    WRITESEQ,
    prep_writeseq,
    Op::WriteSeq,
    "file.writeseq",
    "write; lseek at 1 MiB",
    "write(2) of 4 KiB going through a 1 MiB file, lseek back to its start at the end \
     (will-it-scale's write1)",
    &[]
);
file_op!(
    LOCK,
    prep_lock,
    Op::Lock,
    "file.lock",
    "fcntl(F_SETLKW), twice",
    "fcntl(F_SETLKW) write lock of a file's first byte, then its release \
     (will-it-scale's lock1-2); with copies_as=process and share=one-file the copies \
     wait for each other",
    &[SHARE2]
);
file_op!(
    FALLOCATE_,
    prep_fallocate,
    Op::Fallocate,
    "file.fallocate",
    "fallocate; ftruncate at 1 MiB",
    "fallocate(2) of the next 8 KiB of a file, ftruncate to 0 at 1 MiB (will-it-scale's \
     fallocate1-2): timed by whole cycles of 128 calls and the truncation, per call",
    &[ParamSpec {
        name: "dir",
        default: "tmpfs",
        about: "tmpfs: a file in /dev/shm (fallocate1) · scratch: in the run's scratch \
                directory, --dir (fallocate2)",
        kind: Kind::Choice(&["tmpfs", "scratch"]),
    }]
);

/// `file.unlink`.
pub const UNLINK: InRun = InRun {
    name: "file.unlink",
    facts: NAMED.on(Libc, "open, close, unlink"),
    about: "open(2) with O_CREAT of a new file, close(2), unlink(2) (will-it-scale's \
            unlink1-2): with copies, share=one-dir has every copy's file in the scratch \
            directory itself, dir-per-copy each in a directory of its own",
    origin: "",
    params: &[ParamSpec {
        name: "share",
        default: "one-dir",
        about: "one-dir: the scratch directory (--dir) itself, as unlink1's /tmp · \
                dir-per-copy: a fresh directory of its own (unlink2)",
        kind: Kind::Choice(&["one-dir", "dir-per-copy"]),
    }],
    prepare: prepare_unlink,
};

/// The name a copy creates and unlinks, removed (if it is there) on drop.
struct Unlink {
    path: CString,
    _dir: Option<tempfile::TempDir>,
}

impl Drop for Unlink {
    fn drop(&mut self) {
        ops::unlink(&self.path);
    }
}

impl Body for Unlink {
    #[inline(never)]
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for _ in 0..iters {
            let fd = ops::create(&self.path);
            check(fd as i64, "open(O_CREAT)")?;
            check(ops::close(fd) as i64, "close")?;
            check(ops::unlink(&self.path) as i64, "unlink")?;
        }
        Ok(())
    }
}

fn prepare_unlink(p: &Params, cx: &RunContext) -> Result<Prepared, BenchError> {
    let base = cx.scratch_dir();
    let fail = |e| BenchError::os(&format!("a name in {}", base.display()), e);
    // The process and the copy in the name: forked copies start with the same random
    // state, and would otherwise draw the same name.
    let prefix = format!(
        "syscost-unlink-{}-{}-",
        std::process::id(),
        cx.copy().map_or(0, |c| c.0)
    );
    let (path, dir) = if p.get("share") == "dir-per-copy" {
        let d = tempfile::Builder::new()
            .prefix(&prefix)
            .tempdir_in(&base)
            .map_err(fail)?;
        (d.path().join("willitscale"), Some(d))
    } else {
        // A name no one else uses: made and removed at once, then the loop's.
        let t = tempfile::Builder::new()
            .prefix(&prefix)
            .tempfile_in(&base)
            .map_err(fail)?;
        let path = t.path().to_path_buf();
        t.close().map_err(fail)?;
        (path, None)
    };
    let body = Unlink {
        path: cpath(&path)?,
        _dir: dir,
    };
    Ok(Prepared::new(Box::new(body)).op("create+close+unlink"))
}

/// The family's benchmarks from will-it-scale.
pub const BENCHES: &[&dyn crate::bench::Bench] = &[
    &READSEQ,
    &PREAD,
    &PWRITE,
    &READSEEK,
    &WRITESEEK,
    &LSEEK,
    &WRITESEQ,
    &LOCK,
    &FALLOCATE_,
    &UNLINK,
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn inode(t: &Target) -> u64 {
        File::from(t.fd.try_clone().unwrap())
            .metadata()
            .unwrap()
            .ino()
    }

    /// Two copies of a round: one-file and page-per-copy open the same file (the first
    /// makes it, the second opens it through the link), file-per-copy a file each; the
    /// offsets are each copy's page; no name is left in the scratch directory.
    #[test]
    fn copies_share_one_unnamed_file_or_have_their_own() {
        let scratch = tempfile::tempdir().unwrap();
        let shared = tempfile::tempdir().unwrap();
        let files = crate::bench::file::Options::in_dir(scratch.path());
        let cx =
            |i| RunContext::for_copy(files.clone(), None, (i, 2), shared.path().into());
        let (a, b) = (cx(0), cx(1));
        for (share, stem) in [(Share::One, "one"), (Share::PagePerCopy, "page")] {
            let ta = target(&a, stem, share, FILE_BYTES, libc::O_RDWR).unwrap();
            let tb = target(&b, stem, share, FILE_BYTES, libc::O_RDWR).unwrap();
            assert_eq!(inode(&ta), inode(&tb), "{share:?}");
            let want = if share == Share::One { 0 } else { BUF as u64 };
            assert_eq!((ta.offset, tb.offset), (0, want));
            assert!(
                ta._made.is_some() && tb._made.is_none(),
                "the first makes it"
            );
        }
        let ta = target(&a, "own", Share::PerCopy, FILE_BYTES, libc::O_RDWR).unwrap();
        let tb = target(&b, "own", Share::PerCopy, FILE_BYTES, libc::O_RDWR).unwrap();
        assert_ne!(inode(&ta), inode(&tb));
        assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0);
    }

    /// Each operation runs a few times on its own file, alone (no copies).
    #[test]
    fn every_operation_runs_alone() {
        let scratch = tempfile::tempdir().unwrap();
        let cx =
            RunContext::new(crate::bench::file::Options::in_dir(scratch.path()), None);
        for b in BENCHES {
            for p in crate::bench::params::expand(b.name(), b.params(), &[]).unwrap() {
                let mut prep = b.prepare(&p, &cx).unwrap();
                prep.body.reset(300).unwrap();
                prep.body
                    .run(300)
                    .unwrap_or_else(|e| panic!("{}: {e}", b.name()));
            }
        }
        assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0);
    }

    /// Copies writing one file wait for its inode's lock: their batches keep their
    /// switches; a copy alone, or with its own file, or reading, still has them flagged.
    #[test]
    fn writes_to_one_file_from_several_copies_may_wait() {
        let scratch = tempfile::tempdir().unwrap();
        let cx =
            RunContext::new(crate::bench::file::Options::in_dir(scratch.path()), None);
        let switches = |op: Op, share: &str, copies: &str| {
            let p = crate::bench::testing::kv(&[("share", share), ("copies", copies)]);
            prepare_op(op, &p, &cx).unwrap().plan.expect.switches
        };
        assert!(switches(Op::WriteSeek, "one-file", "2"));
        assert!(!switches(Op::WriteSeek, "one-file", "1"));
        assert!(!switches(Op::WriteSeek, "file-per-copy", "2"));
        assert!(!switches(Op::ReadSeek, "one-file", "2"));
    }
}
