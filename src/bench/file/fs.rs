//! lmbench's lat_fs: creating a file of `size` bytes (open with O_CREAT, a write, a
//! close) and deleting one (unlink), in a directory of its own made in the run's
//! scratch directory. `file.create` times the creations, its leftovers unlinked before
//! the next batch (untimed); `file.delete` makes the files before each batch (untimed)
//! and times their unlinks. The directory and whatever is in it are removed with the
//! body.

use crate::bench::{Kind, ParamSpec, Params, Prepared, RunContext};
use crate::error::BenchError;
use crate::harness::{Body, Plan};
use crate::os::peers;
use std::ffi::CString;

static PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "size",
    default: "0,1k,4k,10k",
    about: "bytes written into each file (lat_fs's four sizes)",
    kind: Kind::Bytes {
        min: 0,
        max: 1 << 20,
    },
}];

/// Files per batch at most: a batch's files fit in a small directory.
const MAX_BATCH: u64 = 1000;

/// `file.create`.
pub const CREATE: crate::bench::InRun = crate::bench::InRun {
    name: "file.create",
    about: "creating a file of `size` bytes: open(O_CREAT|O_EXCL), write, close, in a directory of the run's scratch directory (lmbench lat_fs's creations)",
    origin: "mcvoy1996 lat_fs",
    params: PARAMS,
    prepare: |p, cx| prepare(p, cx, false),
};

/// `file.delete`.
pub const DELETE: crate::bench::InRun = crate::bench::InRun {
    name: "file.delete",
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
}

fn prepare(p: &Params, cx: &RunContext, delete: bool) -> Result<Prepared, BenchError> {
    let dir = tempfile::Builder::new()
        .prefix("syscost-fs-")
        .tempdir_in(cx.scratch_dir())
        .map_err(|e| BenchError::os("make a directory in the scratch directory", e))?;
    let fs = Fs {
        dir,
        data: vec![0x5a; p.int("size") as usize],
        names: Vec::new(),
        present: false,
        next: 0,
        delete,
    };
    Ok(Prepared::new(Box::new(fs))
        .op(if delete { "unlink" } else { "create" })
        .plan(Plan {
            max_batch: Some(MAX_BATCH),
            ..Plan::default()
        }))
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
            let path = self.dir.path().join(format!("f{}", self.next));
            self.next += 1;
            self.names.push(
                CString::new(path.into_os_string().into_encoded_bytes()).map_err(
                    |_| BenchError::Failed("a NUL in the scratch path".into()),
                )?,
            );
        }
        if self.delete {
            for n in &self.names {
                if peers::create_file(n, &self.data) != 0 {
                    return Err(BenchError::last_os("create a file to delete"));
                }
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
