//! lmbench's lat_fs: creating a file of `size` bytes (open with O_CREAT, a write, a
//! close) and deleting one (unlink), in a directory of its own made in the run's
//! scratch directory. `file.create` times the creations, its leftovers unlinked before
//! the next batch (untimed); `file.delete` makes the files before each batch (untimed)
//! and times their unlinks. The directory and whatever is in it are removed with the
//! body.
//!
//! lat_fs itself makes and deletes every file of its timed pass at once, tens of
//! thousands in directories of 100, the last made first: `files=N` does the same (a
//! batch of N files in directories of 100 under the body's); the default lets the
//! harness size the batch, at most 1000 files in one directory.

use crate::bench::facts::*;
use crate::bench::{Kind, OrOs, ParamSpec, Params, Prepared, RunContext};
use crate::error::BenchError;
use crate::harness::{Body, Plan};
use crate::os::peers;
use std::ffi::CString;

static PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "size",
        default: "0,1k,4k,10k",
        about: "bytes written into each file (lat_fs's four sizes)",
        kind: Kind::Bytes {
            min: 0,
            max: 1 << 20,
        },
    },
    ParamSpec {
        name: "files",
        default: "0",
        about:
            "0: the harness's batch, at most 1000 files in one directory · N: one timed \
                pass over N files in directories of 100, the last made first (lat_fs's \
                pass)",
        kind: Kind::Int {
            min: 0,
            max: 100_000,
        },
    },
];

/// Files per directory with `files=N`, as lat_fs's.
const PER_DIR: u64 = 100;

/// Files per batch at most: a batch's files fit in a small directory.
const MAX_BATCH: u64 = 1000;

/// `file.create`.
pub const CREATE: crate::bench::InRun = crate::bench::InRun {
    name: "file.create",
    facts: NAMED.on(Libc, "open, write, close"),
    about: "creating a file of `size` bytes: open(O_CREAT|O_EXCL), write, close, in a directory of the run's scratch directory (lmbench lat_fs's creations)",
    origin: "mcvoy1996 lat_fs",
    params: PARAMS,
    prepare: |p, cx| prepare(p, cx, false),
};

/// `file.delete`.
pub const DELETE: crate::bench::InRun = crate::bench::InRun {
    name: "file.delete",
    facts: NAMED.on(Libc, "unlink"),
    about: "unlink of a file of `size` bytes made (untimed) before the batch, in a directory of the run's scratch directory (lmbench lat_fs's deletions)",
    origin: "mcvoy1996 lat_fs",
    params: PARAMS,
    prepare: |p, cx| prepare(p, cx, true),
};

struct Fs {
    dir: tempfile::TempDir,
    data: Vec<u8>,
    names: Vec<CString>,
    /// Files that exist now (created and not yet unlinked).
    present: bool,
    next: u64,
    delete: bool,
    /// `files=N`: the files in directories of [`PER_DIR`], each pass the last first.
    tree: bool,
}

fn prepare(p: &Params, cx: &RunContext, delete: bool) -> Result<Prepared, BenchError> {
    let dir = tempfile::Builder::new()
        .prefix("syscost-fs-")
        .tempdir_in(cx.scratch_dir())
        .or_os("make a directory in the scratch directory")?;
    let fs = Fs {
        dir,
        data: vec![0x5a; p.int("size") as usize],
        names: Vec::new(),
        present: false,
        next: 0,
        delete,
        tree: p.int("files") > 0,
    };
    let files = p.int("files") as u64;
    let plan = if fs.tree {
        Plan {
            fixed_batch: Some(files),
            max_batch: Some(files),
            ..Plan::default()
        }
    } else {
        Plan {
            max_batch: Some(MAX_BATCH),
            ..Plan::default()
        }
    };
    Ok(Prepared::new(Box::new(fs))
        .op(if delete { "unlink" } else { "create" })
        .plan(plan))
}

impl Fs {
    fn unlink_all(&mut self) -> Result<(), BenchError> {
        if self.present {
            for n in &self.names {
                if peers::unlink(n) != 0 {
                    return Err(BenchError::last_os("unlink"));
                }
            }
            self.present = false;
        }
        Ok(())
    }
}

impl Body for Fs {
    fn reset(&mut self, iters: u64) -> Result<(), BenchError> {
        self.unlink_all()?;
        self.names.clear();
        for _ in 0..iters {
            let path = if self.tree {
                let sub = self.dir.path().join(format!("d{}", self.next / PER_DIR));
                if self.next.is_multiple_of(PER_DIR) {
                    std::fs::create_dir(&sub).map_err(|e| {
                        BenchError::os("mkdir in the scratch directory", e)
                    })?;
                }
                sub.join(format!("f{}", self.next))
            } else {
                self.dir.path().join(format!("f{}", self.next))
            };
            self.next += 1;
            self.names.push(
                CString::new(path.into_os_string().into_encoded_bytes()).map_err(
                    |_| BenchError::Failed("a NUL in the scratch path".into()),
                )?,
            );
        }
        if self.tree {
            // lat_fs's loops go from its last name to its first.
            self.names.reverse();
        }
        if self.delete {
            // Made in the order of their names; unlinked in the loop's.
            let mut made = |n: &CString| {
                if peers::create_file(n, &self.data) != 0 {
                    return Err(BenchError::last_os("create a file to delete"));
                }
                Ok(())
            };
            if self.tree {
                self.names.iter().rev().try_for_each(&mut made)?;
            } else {
                self.names.iter().try_for_each(&mut made)?;
            }
            self.present = true;
        }
        Ok(())
    }

    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        if self.names.len() as u64 != iters {
            self.reset(iters)?;
        }
        if self.delete {
            for n in &self.names {
                if peers::unlink(n) != 0 {
                    return Err(BenchError::last_os("unlink"));
                }
            }
            self.present = false;
        } else {
            self.present = true;
            for n in &self.names {
                if peers::create_file(n, &self.data) != 0 {
                    return Err(BenchError::last_os("create"));
                }
            }
        }
        Ok(())
    }
}

impl Drop for Fs {
    fn drop(&mut self) {
        let _ = self.unlink_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::testing::{harness, median, params_with};
    use crate::bench::Bench;
    use crate::harness::EmptyLoop;

    /// `files=N` times passes of N files in directories of 100, and the body's
    /// directory goes with it, whatever is left in it.
    #[test]
    fn a_pass_of_lat_fs_files_runs_and_leaves_nothing() {
        let h = harness();
        let scratch = tempfile::tempdir().unwrap();
        let cx =
            RunContext::new(crate::bench::file::Options::in_dir(scratch.path()), None);
        for b in [&CREATE as &dyn Bench, &DELETE] {
            let p = params_with(b, &["size=0", "files=250"]);
            let mut prep = b.prepare(&p, &cx).unwrap();
            assert_eq!(prep.plan.fixed_batch, Some(250));
            let m = h
                .measure(prep.body.as_mut(), &mut EmptyLoop, prep.plan)
                .unwrap();
            let med = median(&m);
            assert!(med > 0.0 && med < 1e7, "{} {med}", b.name());
            let body = std::fs::read_dir(scratch.path()).unwrap().next().unwrap();
            let dirs = std::fs::read_dir(body.unwrap().path()).unwrap().count();
            assert!(dirs >= 3, "{} {dirs}", b.name());
            drop(prep);
            assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0);
        }
    }
}
