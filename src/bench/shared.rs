//! Shared against private: benchmarks whose copies (`copies=N`) either all use one
//! kernel object or each use their own, so that the cost of sharing shows as the
//! difference between two rows. The parameter `share` names what is shared:
//! `one-file` (every copy the same file) or `file-per-copy`, `one-fifo` or
//! `pipe-per-copy`. What the address space shares is `copies_as=thread` against
//! `copies_as=process` on any benchmark (`mem.mmap`: one address space's lock, or one
//! each).
//!
//! The objects every copy shares get their names in the round's directory
//! ([`RunContext::copies_dir`]); a run without copies has one copy, and `share` then
//! makes no difference (its objects go to a directory of its own). Names are made in
//! `prepare`; the timed loops hold only the operation. `mem.fault.shm dir=scratch`'s
//! file, in the run's scratch directory, has no name; the round's directory holds a
//! link to it (see `scratch_file`).

use super::via::{self, check_raw, Via};
use super::{check, InRun, Kind, ParamSpec, Params, Prepared, RunContext};
use crate::bench::facts::*;
use crate::bench::OrOs;
use crate::error::BenchError;
use crate::harness::Body;
use crate::os::mem::{page_size, Mapping};
use crate::os::{raw, sys, task};
use rustix::fs::{Mode, OFlags};
use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::PathBuf;

/// Where one copy's object lives: the shared name or its own, in the round's
/// directory (or a directory of its own, kept alive by the body).
struct Place {
    path: PathBuf,
    shared: bool,
    _own: Option<tempfile::TempDir>,
}

/// The place of the object `stem` for the copy `cx` prepares, shared by all copies
/// when `shared`.
fn place(cx: &RunContext, stem: &str, shared: bool) -> Result<Place, BenchError> {
    let (dir, own) = match cx.copies_dir() {
        Some(d) => (d.to_path_buf(), None),
        None => {
            let shm = std::path::Path::new("/dev/shm");
            let base = if shm.is_dir() {
                shm.to_path_buf()
            } else {
                cx.scratch_dir()
            };
            let t = tempfile::Builder::new()
                .prefix("syscost-share-")
                .tempdir_in(&base)
                .map_err(|e| {
                    BenchError::os(&format!("a directory in {}", base.display()), e)
                })?;
            (t.path().to_path_buf(), Some(t))
        }
    };
    let name = if shared {
        format!("{stem}-shared")
    } else {
        format!("{stem}-copy{}", cx.copy().map_or(0, |c| c.0))
    };
    Ok(Place {
        path: dir.join(name),
        shared,
        _own: own,
    })
}

/// Opens (creating) a regular file of the round's directory for reading and writing.
fn open_file(path: &std::path::Path) -> Result<OwnedFd, BenchError> {
    rustix::fs::open(
        path,
        OFlags::RDWR | OFlags::CREATE | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )
    .map_err(|e| BenchError::os(&format!("open {}", path.display()), e.into()))
}

/// Opens (creating) a file with no name in the run's scratch directory (`--dir`), as
/// will-it-scale's page_fault3 unlinks the file it makes in /tmp. When `shared` and
/// the instance runs as copies, the first copy to set up leaves in the round's
/// directory a symbolic link to its descriptor in /proc, through which the others
/// open the same file (as the file.* benchmarks share theirs); the session removes
/// the directory, and the file goes with the last descriptor.
fn scratch_file(
    cx: &RunContext,
    stem: &str,
    shared: bool,
) -> Result<OwnedFd, BenchError> {
    let dir = cx.scratch_dir();
    let fd = OwnedFd::from(crate::os::file::unnamed_file(&dir).map_err(|e| {
        let what = format!("a file in {} (choose another with --dir)", dir.display());
        BenchError::os(&what, e)
    })?);
    let Some(link) = cx
        .copies_dir()
        .filter(|_| shared)
        .map(|d| d.join(format!("{stem}-shared")))
    else {
        return Ok(fd);
    };
    let target = format!("/proc/{}/fd/{}", std::process::id(), fd.as_raw_fd());
    match std::os::unix::fs::symlink(&target, &link) {
        Ok(()) => Ok(fd),
        // Another copy made the file first: this one opens that file.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            rustix::fs::open(&link, OFlags::RDWR | OFlags::CLOEXEC, Mode::empty())
                .map_err(|e| BenchError::os("open of the copies' shared file", e.into()))
        }
        Err(e) => Err(BenchError::os("symlink in the copies' directory", e)),
    }
}

const FILE_SHARE: &[&str] = &["one-file", "file-per-copy"];

/// `file.open_close`.
pub const OPEN_CLOSE: InRun = InRun {
    name: "file.open_close",
    facts: SYSCALL,
    about: "open(2) of a file on tmpfs by its path, then close(2): with copies, \
                share=one-file has every copy open the same file (one dentry and inode, \
                their reference counts bouncing between CPUs), file-per-copy a file each",
    origin: "",
    params: &[
        ParamSpec {
            name: "share",
            default: "one-file,file-per-copy",
            about:
                "one-file: every copy opens the same path · file-per-copy: each its own",
            kind: Kind::Choice(FILE_SHARE),
        },
        ParamSpec {
            name: "mode",
            default: "read",
            about: "read: O_RDONLY · readwrite: O_RDWR, as will-it-scale's open1-3 (the \
                    kernel takes write access to the file and its mount on each open)",
            kind: Kind::Choice(&["read", "readwrite"]),
        },
        via::BOTH,
    ],
    prepare: prepare_open_close,
};

fn prepare_open_close(p: &Params, cx: &RunContext) -> Result<Prepared, BenchError> {
    let via = Via::of(p)?;
    let place = place(cx, "open", p.get("share") == "one-file")?;
    drop(open_file(&place.path)?);
    let path = CString::new(place.path.as_os_str().as_encoded_bytes())
        .map_err(|_| BenchError::Failed("a path with a NUL byte".into()))?;
    let access = match p.get("mode") {
        "readwrite" => libc::O_RDWR,
        _ => libc::O_RDONLY,
    };
    let flags = access | libc::O_CLOEXEC;
    let body = match via {
        Via::Libc => super::body(move || {
            let _keep = &place;
            let fd = sys::open(&path, flags).map_err(|e| BenchError::os("open", e))?;
            check(sys::close_owned(fd) as i64, "close")
        }),
        Via::Raw => super::body(move || {
            let _keep = &place;
            let fd = raw::open(&path, flags).map_err(|e| BenchError::os("open", e))?;
            check_raw(raw::close(fd), "close")
        }),
    };
    Ok(Prepared::new(body).op("open+close pair"))
}

/// `mem.fault.shm`.
pub const FAULT_SHM: InRun =
    InRun {
        name: "mem.fault.shm",
        facts: MEMORY.on(Fault, "the writes' faults"),
        about: "a write to each page of a fresh MAP_SHARED mapping of a file whose pages \
                are in memory, per page (will-it-scale's page_fault3): on tmpfs, or with \
                dir=scratch in the run's scratch directory (--dir); with copies, \
                share=one-file maps every copy's slice of one file (one page cache and its \
                locks), file-per-copy a file each",
        origin: "",
        params: &[
            ParamSpec {
                name: "size",
                default: "4m",
                about: "bytes each copy maps and writes per sample",
                kind: Kind::Bytes {
                    min: 64 << 10,
                    max: 1 << 30,
                },
            },
            ParamSpec {
                name: "share",
                default: "one-file,file-per-copy",
                about: "one-file: every copy maps its own slice of the same file · \
                        file-per-copy: each its own file",
                kind: Kind::Choice(FILE_SHARE),
            },
            ParamSpec {
                name: "dir",
                default: "tmpfs",
                about: "tmpfs: a file on /dev/shm · scratch: a file with no name in the run's \
                        scratch directory, --dir (page_fault3's /tmp)",
                kind: Kind::Choice(&["tmpfs", "scratch"]),
            },
            crate::bench::mem::UNMAP,
        ],
        prepare: prepare_fault_shm,
    };

struct ShmFault {
    file: OwnedFd,
    offset: u64,
    size: usize,
    page: usize,
    current: Option<Mapping>,
    /// Whether the munmap is inside the clock.
    unmap_timed: bool,
    /// The name of a file on tmpfs, removed with the body.
    _place: Option<Place>,
}

impl Body for ShmFault {
    #[inline(never)]
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for _ in 0..iters {
            let m = self.current.as_ref().expect("reset maps the slice");
            m.touch_write(self.page);
        }
        if self.unmap_timed {
            if let Some(m) = self.current.take() {
                m.unmap().map_err(|e| BenchError::os("munmap", e))?;
            }
        }
        Ok(())
    }

    fn reset(&mut self, iters: u64) -> Result<(), BenchError> {
        if iters != 1 {
            return Err(BenchError::Failed("fault batches hold one mapping".into()));
        }
        self.current = None;
        let m = Mapping::file_shared_rw(self.file.as_fd(), self.size, self.offset)
            .map_err(|e| BenchError::os("mmap of the shared file", e))?;
        self.current = Some(m);
        Ok(())
    }
}

fn prepare_fault_shm(p: &Params, cx: &RunContext) -> Result<Prepared, BenchError> {
    let page = page_size();
    let size = (p.int("size") as usize / page * page).max(page);
    let shared = p.get("share") == "one-file";
    let (i, n) = cx.copy().unwrap_or((0, 1));
    let (offset, len) = if shared {
        ((i * size) as u64, (n * size) as u64)
    } else {
        (0, size as u64)
    };
    let (file, place) = if p.get("dir") == "scratch" {
        (scratch_file(cx, "fault", shared)?, None)
    } else {
        let place = place(cx, "fault", shared)?;
        (open_file(&place.path)?, Some(place))
    };
    let st = rustix::fs::fstat(&file).map_err(|e| BenchError::os("fstat", e.into()))?;
    if (st.st_size as u64) < len {
        rustix::fs::ftruncate(&file, len)
            .map_err(|e| BenchError::os("ftruncate of the shared file", e.into()))?;
    }
    // Its pages in memory before the first sample: the faults map them, not fill them.
    let m = Mapping::file_shared_rw(file.as_fd(), size, offset)
        .or_os("mmap of the shared file")?;
    m.touch_write(page);
    drop(m);
    let body = ShmFault {
        file,
        offset,
        size,
        page,
        current: None,
        unmap_timed: p.get("unmap") == "timed",
        _place: place,
    };
    let plan = crate::bench::per_page(size, page);
    Ok(Prepared::new(Box::new(body)).op("page").plan(plan))
}

/// A write or read of the pipe through the C library that moved no byte or failed.
#[cold]
#[inline(never)]
fn pipe_failed(what: &'static str) -> BenchError {
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(0) | None => BenchError::Failed(format!("{what}(2) moved no byte")),
        _ => BenchError::os(what, e),
    }
}

/// `ipc.pipe.self`.
pub const PIPE_SELF: InRun =
    InRun {
        name: "ipc.pipe.self",
        facts: Facts { switches: true, ..SYSCALL },
        about: "write(2) of 1 byte into a pipe, then read(2) of 1 byte from it, by one task \
                (no partner, no switch): with copies, share=one-fifo has every copy use the \
                same FIFO (one pipe and its lock), pipe-per-copy a pipe each",
        origin: "",
        params: &[
            ParamSpec {
                name: "share",
                default: "one-fifo,pipe-per-copy",
                about: "one-fifo: every copy writes and reads one named FIFO · \
                        pipe-per-copy: each its own pipe",
                kind: Kind::Choice(&["one-fifo", "pipe-per-copy"]),
            },
            via::BOTH,
        ],
        prepare: prepare_pipe_self,
    };

fn prepare_pipe_self(p: &Params, cx: &RunContext) -> Result<Prepared, BenchError> {
    let place = place(cx, "fifo", p.get("share") == "one-fifo")?;
    let (r, w) = if place.shared {
        match rustix::fs::mknodat(
            rustix::fs::CWD,
            &place.path,
            rustix::fs::FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        ) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(BenchError::os("mkfifo", e.into())),
        }
        // O_RDWR on a FIFO opens without waiting for a partner (Linux).
        let fd =
            rustix::fs::open(&place.path, OFlags::RDWR | OFlags::CLOEXEC, Mode::empty())
                .map_err(|e| BenchError::os("open of the FIFO", e.into()))?;
        let w = fd.try_clone().or_os("dup of the FIFO")?;
        (fd, w)
    } else {
        rustix::pipe::pipe().map_err(|e| BenchError::os("pipe", e.into()))?
    };
    // The byte lives in the body, as the C loops' byte is a static one: on the stack of
    // the timed loop it made the raw pair slower here (docs/entry.md).
    let mut b = [0u8; 1];
    let body = match Via::of(p)? {
        Via::Libc => super::body(move || {
            let _keep = &place;
            if task::write_fd(w.as_raw_fd(), &b) != 1 {
                return Err(pipe_failed("write"));
            }
            if task::read_fd(r.as_raw_fd(), &mut b) != 1 {
                return Err(pipe_failed("read"));
            }
            Ok(())
        }),
        // The whole loop in one aligned asm block (os::raw::write_read_repeat): a loop
        // the compiler placed sat at a slow placement here (docs/entry.md).
        Via::Raw => via::repeat(move |n| {
            let _keep = &place;
            raw::write_read_repeat(w.as_fd(), r.as_fd(), &mut b, n).map_err(via::stopped)
        }),
    };
    Ok(Prepared::new(body).op("write+read pair"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::testing::{harness, median};
    use crate::bench::{params, Bench};
    use crate::harness::EmptyLoop;

    /// Each variant runs alone and as copy 1 of 2 in a shared directory, and the
    /// shared names are the same for two copies while the private ones differ.
    #[test]
    fn shared_and_private_variants_run_and_name_their_objects() {
        let h = harness();
        let dir = tempfile::tempdir().unwrap();
        let cx1 = |i| {
            RunContext::for_copy(
                Default::default(),
                None,
                (i, 2),
                dir.path().to_path_buf(),
            )
        };
        for b in [&OPEN_CLOSE as &dyn Bench, &FAULT_SHM, &PIPE_SELF] {
            for p in params::expand(b.name(), b.params(), &[]).unwrap() {
                for cx in [RunContext::default(), cx1(1)] {
                    let mut prep = b.prepare(&p, &cx).unwrap();
                    let m = h
                        .measure(prep.body.as_mut(), &mut EmptyLoop, prep.plan)
                        .unwrap();
                    let med = median(&m);
                    assert!(med > 0.0 && med < 1e7, "{} {med}", b.name());
                }
            }
        }
        let shared = |cx: &RunContext| place(cx, "x", true).unwrap().path;
        let own = |cx: &RunContext| place(cx, "x", false).unwrap().path;
        assert_eq!(shared(&cx1(0)), shared(&cx1(1)));
        assert_ne!(own(&cx1(0)), own(&cx1(1)));
    }

    /// `dir=scratch` maps a file with no name in the scratch directory: it runs alone
    /// and as two live copies, the copies of one-file open one file and those of
    /// file-per-copy one each, and nothing is left in the directory.
    #[test]
    fn fault_shm_in_the_scratch_directory_shares_its_file_and_leaves_nothing() {
        let h = harness();
        let scratch = tempfile::tempdir().unwrap();
        let files = || crate::bench::file::Options::in_dir(scratch.path());
        let args = ["dir=scratch", "size=256k", "unmap=untimed,timed"]
            .map(|a| a.parse().unwrap());
        for p in params::expand(FAULT_SHM.name, FAULT_SHM.params, &args).unwrap() {
            // A round's directory, its copies prepared together as a session's are.
            let round = tempfile::tempdir().unwrap();
            let cx = |i| RunContext::for_copy(files(), None, (i, 2), round.path().into());
            let (cx0, cx1) = (cx(0), cx(1));
            let alone = RunContext::new(files(), None);
            let mut preps: Vec<Prepared> = [&alone, &cx0, &cx1]
                .iter()
                .map(|cx| FAULT_SHM.prepare(&p, cx).unwrap())
                .collect();
            for prep in &mut preps {
                let m = h
                    .measure(prep.body.as_mut(), &mut EmptyLoop, prep.plan)
                    .unwrap();
                let med = median(&m);
                assert!(med > 0.0 && med < 1e7, "{med}");
            }
        }
        let round = tempfile::tempdir().unwrap();
        let cx = |i| RunContext::for_copy(files(), None, (i, 2), round.path().into());
        let ino = |i, shared| {
            let fd = scratch_file(&cx(i), "y", shared).unwrap();
            (rustix::fs::fstat(&fd).unwrap().st_ino, fd)
        };
        let (first, _keep) = ino(0, true);
        assert_eq!(first, ino(1, true).0);
        let (own, _keep) = ino(0, false);
        assert_ne!(own, ino(1, false).0);
        assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0);
    }
}
