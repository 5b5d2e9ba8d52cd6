//! `file.read`: one read of `size` bytes from the scratch file, by five methods, from a
//! warm or a cold page cache.
//!
//! Warm: each batch reads on from where the last one stopped, wrapping to the start
//! (untimed, before the batch) when the rest of the file is shorter than the batch.
//! Cold: each sample reads the first [`COLD_SPAN`] bytes of the file (the whole file if
//! smaller; at most [`COLD_CALLS`] reads' worth for a small size) from the start,
//! right after the file's first [`COLD_EVICT`] bytes were evicted from the page cache
//! and `mincore` found none of their pages there; samples where pages stayed are
//! counted and reported, and a cold result with any such sample says so. The rest of
//! the file stays cached, so a warm row measured next does not read 128 MiB again to
//! warm it.

use super::{IoTally, Scratch};
use crate::bench::facts::Figure::FileRead;
use crate::bench::facts::SYSCALL;
use crate::bench::facts::*;
use crate::bench::via::Via;
use crate::bench::Fact;
use crate::bench::{After, InRun, Kind, OrOs, ParamSpec, Params, Prepared, RunContext};
use crate::error::BenchError;
use crate::harness::{Body, Plan};
use crate::os::file::CFile;
use crate::os::mem::Mapping;
use crate::os::raw;
use std::cell::RefCell;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::FileExt;
use std::rc::Rc;
use std::sync::Arc;

/// Bytes read by one cold sample (or the whole file, if smaller): enough for the
/// kernel's readahead to reach its full window, few enough for small buffers.
pub const COLD_SPAN: u64 = 8 << 20;

/// Reads at most in one cold sample. Small reads would otherwise take many calls to
/// cover [`COLD_SPAN`]: 8 MiB in 8 B reads is a million calls and half a second a
/// sample, 50 rounds' worth of time, almost all of it spent in the page cache once
/// readahead has run (here 458 ns a read against 448 ns warm). With this cap an 8 B
/// sample reads the first 32 KiB, which still begins with the storage read that a cold
/// sequential read starts with, and lasts about 2 ms; sizes of 2 KiB and more are
/// bounded by the span alone. The figure of a small size then carries what readahead
/// fetches past those 32 KiB (the `storage_bytes_per_byte` fact: 10 for read, 135 for
/// a mapping's read-around here).
pub const COLD_CALLS: u64 = 4096;

/// Bytes evicted before each cold sample: the span and three times as much past it, so
/// that readahead running past the span's end finds nothing cached there either (a
/// virtio disk's readahead window is 8 MiB here: `/sys/block/vda/queue/read_ahead_kb`).
pub const COLD_EVICT: u64 = 4 * COLD_SPAN;

/// The default file size for a profile: the paper's 128 MiB, smaller in the quick and
/// smoke profiles (and for library callers that set no profile).
pub fn default_file_bytes(profile: Option<&str>) -> u64 {
    match profile {
        Some("standard") | Some("thorough") => 128 << 20,
        Some("quick") => 16 << 20,
        _ => 2 << 20,
    }
}

const METHODS: &[&str] = &["read", "pread", "buffered", "stdio", "mmap"];

/// `file.read`.
pub const READ: InRun = InRun {
    name: "file.read",
    facts: Facts {
        quotes: &[Quote {
            show: Show::Bandwidth { bytes: 65536.0 },
            ..quote(
                FileRead,
                0,
                "method=read size=65536 cache=warm",
                "read(2) of 64 KiB",
            )
        }],
        ..SYSCALL
    },
    about: "one read of `size` bytes from a file, by read, pread, BufReader, fread or a copy out of an mmap, cold or warm cache",
    origin: "manea1999 §6, figures 1–2",
    params: &[
        ParamSpec {
            name: "method",
            default: "read,pread,buffered,stdio,mmap",
            about: "read(2) · pread(2) · Rust BufReader (8 KiB buffer) · C fread · copy out of a shared mapping",
            kind: Kind::Choice(METHODS),
        },
        ParamSpec {
            name: "size",
            default: "8,4k,64k",
            about: "bytes per call; the paper swept 8,16,...,65536 (any list up to 1 MiB)",
            kind: Kind::Bytes { min: 1, max: 1 << 20 },
        },
        ParamSpec {
            name: "cache",
            default: "warm,cold",
            about: "warm: the file is in the page cache; cold: evicted before each sample and verified with mincore",
            kind: Kind::Choice(&["warm", "cold"]),
        },
        ParamSpec {
            name: "file",
            default: "0",
            about: "file size; 0: 128 MiB as in the paper (16 MiB in the quick profile, 2 MiB in smoke)",
            kind: Kind::Bytes { min: 0, max: 64 << 30 },
        },
        ParamSpec {
            about: "libc: the C library's read and pread · raw: the syscall instruction in \
                    the loop itself (method=read and pread only)",
            ..crate::bench::via::BOTH
        },
    ],
    prepare,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Method {
    Read,
    Pread,
    Buffered,
    Stdio,
    Mmap,
}

impl Method {
    fn parse(s: &str) -> Method {
        match s {
            "read" => Method::Read,
            "pread" => Method::Pread,
            "buffered" => Method::Buffered,
            "stdio" => Method::Stdio,
            _ => Method::Mmap,
        }
    }

    fn op(self, cold: bool, verified: bool) -> &'static str {
        match (self, !cold || verified) {
            (Method::Read, true) => "read call",
            (Method::Pread, true) => "pread call",
            (Method::Buffered, true) => "BufReader read",
            (Method::Stdio, true) => "fread call",
            (Method::Mmap, true) => "copy out of the mapping",
            (Method::Read, false) => "read call (cache NOT verified cold)",
            (Method::Pread, false) => "pread call (cache NOT verified cold)",
            (Method::Buffered, false) => "BufReader read (cache NOT verified cold)",
            (Method::Stdio, false) => "fread call (cache NOT verified cold)",
            (Method::Mmap, false) => "copy out of the mapping (cache NOT verified cold)",
        }
    }
}

/// What the body learns while it runs, for the after-step.
#[derive(Debug, Default)]
struct Tally {
    io: IoTally,
    /// Cold batches, and those that began with pages still cached.
    cold_batches: u64,
    unverified: u64,
    /// Bytes consumed by the batch now running.
    pending: u64,
}

struct Reader {
    method: Method,
    /// read and pread through the `syscall` instruction (`via=raw`).
    raw: bool,
    size: usize,
    len: u64,
    cold: bool,
    drop_caches: bool,
    /// This body's own open file (its own offset), and the scratch file it reads.
    file: File,
    scratch: Arc<Scratch>,
    buffered: Option<BufReader<File>>,
    stdio: Option<CFile>,
    map: Option<Mapping>,
    /// A mapping of the whole file that is never touched: mincore's window.
    probe: Option<Mapping>,
    buf: Mapping,
    pos: u64,
    calls: u64,
    tally: Rc<RefCell<Tally>>,
}

impl Reader {
    fn rewind(&mut self) -> Result<(), BenchError> {
        self.pos = 0;
        let seek = |f: &mut dyn Seek| {
            f.seek(SeekFrom::Start(0))
                .map(|_| ())
                .map_err(|e| BenchError::os("lseek", e))
        };
        match self.method {
            Method::Read => seek(&mut self.file)?,
            Method::Buffered => seek(self.buffered.as_mut().expect("buffered"))?,
            Method::Stdio => self.stdio.as_mut().expect("stdio").rewind(),
            Method::Pread | Method::Mmap => {}
        }
        Ok(())
    }

    #[inline(always)]
    fn one(&mut self) -> Result<(), BenchError> {
        let size = self.size;
        let buf = &mut self.buf.as_mut_slice()[..size];
        let got = match self.method {
            Method::Read if self.raw => raw::check(raw::read(self.file.as_fd(), buf))
                .map_err(|e| BenchError::os("read", e))?,
            Method::Pread if self.raw => {
                raw::check(raw::pread(self.file.as_fd(), buf, self.pos))
                    .map_err(|e| BenchError::os("pread", e))?
            }
            Method::Read => self.file.read(buf).map_err(|e| BenchError::os("read", e))?,
            Method::Pread => self
                .file
                .read_at(buf, self.pos)
                .map_err(|e| BenchError::os("pread", e))?,
            Method::Buffered => {
                let r = self.buffered.as_mut().expect("buffered");
                r.read_exact(buf).map_err(|e| BenchError::os("read", e))?;
                size
            }
            Method::Stdio => self.stdio.as_mut().expect("stdio").read(buf),
            Method::Mmap => {
                self.map
                    .as_ref()
                    .expect("map")
                    .copy_out(self.pos as usize, buf);
                size
            }
        };
        if got != size {
            return Err(short(got, size, self.pos));
        }
        self.pos += size as u64;
        Ok(())
    }
}

#[cold]
fn short(got: usize, size: usize, pos: u64) -> BenchError {
    BenchError::Failed(format!(
        "a read of {size} B at offset {pos} returned {got} B"
    ))
}

impl Body for Reader {
    #[inline(never)]
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        let calls = if self.cold { self.calls } else { iters };
        for _ in 0..calls {
            self.one()?;
        }
        self.tally.borrow_mut().pending = calls * self.size as u64;
        Ok(())
    }

    fn reset(&mut self, iters: u64) -> Result<(), BenchError> {
        {
            let mut t = self.tally.borrow_mut();
            let done = std::mem::take(&mut t.pending);
            t.io.mark(done);
        }
        if self.cold {
            self.rewind()?;
            if let Some(m) = &self.map {
                // Drop this process's page-table entries, or the pages stay mapped and
                // cannot be evicted.
                m.advise(libc::MADV_DONTNEED)
                    .map_err(|e| BenchError::os("madvise(DONTNEED)", e))?;
            }
            let probe = self.probe.as_ref().expect("cold has a probe");
            let left = self.scratch.evict(probe, self.drop_caches, COLD_EVICT)?;
            let mut t = self.tally.borrow_mut();
            t.cold_batches += 1;
            t.unverified += (left > 0) as u64;
            return Ok(());
        }
        let need = iters.saturating_mul(self.size as u64);
        if need > self.len {
            return Err(BenchError::Failed(format!(
                "a batch of {iters} reads of {} B overruns the {} B file; give a larger \
                 --param file",
                self.size, self.len
            )));
        }
        if self.pos + need > self.len {
            self.rewind()?;
        }
        Ok(())
    }
}

fn prepare(p: &Params, cx: &RunContext) -> Result<Prepared, BenchError> {
    let method = Method::parse(p.get("method"));
    let raw = Via::of(p)? == Via::Raw;
    if raw && !matches!(method, Method::Read | Method::Pread) {
        return Err(BenchError::Skip(format!(
            "via=raw applies to method=read and pread; method={} calls the C library or \
             Rust's std",
            p.get("method")
        )));
    }
    let size = p.int("size") as usize;
    let cold = p.get("cache") == "cold";
    let drop_caches = cx.files().drop_caches;
    let len = match p.int("file") as u64 {
        0 => default_file_bytes(cx.profile()),
        n => n,
    };
    if (size as u64) > len {
        return Err(BenchError::Skip(format!(
            "size {size} B is larger than the {len} B file"
        )));
    }
    if drop_caches && cold && !crate::os::file::is_root() {
        return Err(BenchError::Skip("--drop-caches needs root".into()));
    }
    let scratch = cx.scratch(len)?;
    let handles = Handles::open(method, &scratch)?;
    let (probe, verified) = if cold {
        let probe = scratch.map()?;
        let left = scratch.evict(&probe, drop_caches, COLD_EVICT)?;
        (Some(probe), left == 0)
    } else {
        scratch.warm()?;
        (None, true)
    };
    let span =
        len.min(COLD_SPAN).min(COLD_CALLS * size as u64) / size as u64 * size as u64;
    let calls = span / size as u64;
    let page = crate::os::mem::page_size();
    // Populated: a cold round's first sample is not warmed up (it lasts longer than
    // the warm-up), and faulting the buffer in there was set-up inside the clock.
    let buf = Mapping::anon(size.next_multiple_of(page), true)
        .or_os("mmap of the read buffer")?;
    let tally = Rc::new(RefCell::new(Tally {
        io: IoTally::new(),
        ..Tally::default()
    }));
    let mut reader = Reader {
        method,
        raw,
        size,
        len,
        cold,
        drop_caches,
        file: handles.file,
        scratch,
        buffered: handles.buffered,
        stdio: handles.stdio,
        map: handles.map,
        probe,
        buf,
        pos: 0,
        calls,
        tally: tally.clone(),
    };
    if cold {
        // One untimed read brings in what the method allocates on first use (C stdio's
        // and BufReader's buffers); every batch's reset rewinds and evicts again.
        reader.one()?;
    }
    let plan = Plan {
        fixed_batch: cold.then_some(1),
        per_iter: if cold { calls } else { 1 },
        // A warm batch reads on from where the last stopped and must fit in the file.
        max_batch: (!cold).then_some((len / size as u64).max(1)),
        // A cold read waits for storage (voluntary switches) and a mapping faults.
        ..crate::bench::expecting(cold, method == Method::Mmap, false)
    };
    let shape = Shape {
        method,
        size,
        len,
        cold,
        span,
        drop_caches,
        dir: cx.scratch_dir(),
    };
    Ok(Prepared::new(Box::new(reader))
        .op(method.op(cold, verified))
        .plan(plan)
        .after(facts(shape, tally)))
}

/// A reader's own handles on the scratch file: its own open file description (so the
/// offset is this body's alone) and, for the method that needs it, a `BufReader`, a C
/// stream or a shared mapping.
struct Handles {
    file: File,
    buffered: Option<BufReader<File>>,
    stdio: Option<CFile>,
    map: Option<Mapping>,
}

impl Handles {
    fn open(method: Method, scratch: &Scratch) -> Result<Handles, BenchError> {
        let fd_path = format!("/proc/self/fd/{}", scratch.file().as_raw_fd());
        let reopen = || File::open(&fd_path).or_os("reopening the test file");
        Ok(Handles {
            file: reopen()?,
            buffered: match method {
                Method::Buffered => Some(BufReader::with_capacity(8192, reopen()?)),
                _ => None,
            },
            stdio: match method {
                Method::Stdio => Some(CFile::open(reopen()?.as_fd()).or_os("fdopen")?),
                _ => None,
            },
            map: match method {
                Method::Mmap => Some(scratch.map()?),
                _ => None,
            },
        })
    }
}

/// What the after step says of an instance besides its tally.
struct Shape {
    method: Method,
    size: usize,
    len: u64,
    cold: bool,
    /// Bytes read from the start of the evicted file in each cold sample.
    span: u64,
    drop_caches: bool,
    dir: std::path::PathBuf,
}

/// The after step: bandwidth, read calls and faults per MB, and for a cold read the
/// bytes fetched from storage and how many batches were verified cold.
fn facts(sh: Shape, tally: Rc<RefCell<Tally>>) -> After {
    Box::new(move |_, m| {
        let t = tally.borrow();
        let a = &m.analysis;
        let mut facts = Vec::new();
        if let Some(h) = Some(a.figure()).filter(|v| v.is_finite()) {
            facts.push(Fact::new(
                "mb_per_s",
                sh.size as f64 / h * 1e3,
                "MB/s",
                "bytes per call over the median time per call (10^6 bytes per second)",
            ));
        }
        if t.io.counted() {
            facts.push(Fact::new(
                "syscalls_per_mb",
                t.io.syscalls as f64 / t.io.bytes as f64 * 1e6,
                "count",
                "read system calls per 10^6 bytes consumed, from the thread's I/O accounting",
            ));
        }
        if sh.method == Method::Mmap {
            let per_mb = 1e6 / sh.size as f64;
            facts.push(Fact::new(
                "faults_per_mb",
                (a.accounting.minor_faults + a.accounting.major_faults) * per_mb,
                "count",
                "page faults per 10^6 bytes copied out of the mapping",
            ));
        }
        facts.push(Fact::new(
            "file_mib",
            sh.len as f64 / (1 << 20) as f64,
            "MiB",
            "size of the test file",
        ));
        if sh.cold {
            facts.extend(cold_facts(&sh, &t));
        }
        Ok(facts)
    })
}

fn cold_facts(sh: &Shape, t: &Tally) -> Vec<Fact> {
    let mut facts = vec![Fact::new(
        "bytes_per_sample",
        sh.span as f64,
        "bytes",
        "read from the start of the evicted file in each sample",
    )];
    if t.io.counted() {
        facts.push(Fact::new(
            "storage_bytes_per_byte",
            t.io.storage_bytes as f64 / t.io.bytes as f64,
            "ratio",
            "bytes fetched from storage per byte consumed: about 1 when cold, more when readahead ran past the bytes read",
        ));
    }
    let ok = t.cold_batches - t.unverified;
    let about = if t.unverified == 0 {
        format!(
            "batches that began with none of the file's pages cached (mincore): all {}",
            t.cold_batches
        )
    } else {
        let fs = crate::os::file::fs_name(&sh.dir).unwrap_or("unknown");
        format!(
            "NOT verified cold: {} of {} batches began with pages still cached \
             ({fs} in {}); use --dir on a disk file system{}",
            t.unverified,
            t.cold_batches,
            sh.dir.display(),
            if sh.drop_caches {
                ""
            } else {
                " or --drop-caches (root)"
            }
        )
    };
    facts.push(Fact::new(
        "cold_verified",
        ok as f64 / t.cold_batches.max(1) as f64,
        "ratio",
        &about,
    ));
    facts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::testing::{self, fact, median, params_with};

    fn measure(params: &[&str]) -> (Vec<Fact>, f64, &'static str) {
        let p = params_with(&READ, params);
        let prep = testing::prepare(&READ, &p, &RunContext::default()).unwrap();
        let op = prep.op;
        assert!(prep.after.is_some(), "an after step");
        let (m, facts) = testing::measure(prep);
        (facts, median(&m), op)
    }

    #[test]
    fn every_method_reads_warm_with_one_call_per_read() {
        for method in METHODS {
            let m = format!("method={method}");
            let (facts, ns, _) = measure(&[&m, "size=64k", "cache=warm", "file=1m"]);
            assert!(ns > 0.0 && ns < 1e6, "{method}: {ns}");
            let per_mb = 1e6 / 65536.0;
            let calls = fact(&facts, "syscalls_per_mb");
            match *method {
                // One call per 64 KiB read, give or take the odd batch boundary.
                "read" | "pread" | "buffered" => {
                    assert!((calls - per_mb).abs() < 0.2 * per_mb, "{method}: {calls}")
                }
                "mmap" => assert!(calls < 0.1 * per_mb, "{method}: {calls}"),
                _ => assert!(calls > 0.5 * per_mb, "{method}: {calls}"),
            }
        }
    }

    #[test]
    fn cold_reads_are_evicted_and_verified_where_the_fs_allows() {
        // A file size of its own: no other test reads (and re-caches) this file.
        let (facts, ns, op) =
            measure(&["method=read", "size=64k", "cache=cold", "file=1028k"]);
        assert!(ns > 0.0 && ns < 1e7, "{ns}");
        let verified = fact(&facts, "cold_verified");
        let fs = crate::os::file::fs_name(&RunContext::default().scratch_dir());
        if matches!(fs, Some("ext4") | Some("xfs") | Some("btrfs")) {
            assert_eq!(verified, 1.0, "{facts:?}");
            assert!(!op.contains("NOT"));
            // Most bytes came from storage (readahead may have fetched a little more).
            let from_storage = fact(&facts, "storage_bytes_per_byte");
            assert!(from_storage > 0.5, "{from_storage}");
        } else if verified < 1.0 {
            assert!(op.contains("NOT verified cold"), "{op}");
        }
    }
}
