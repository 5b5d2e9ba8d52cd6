//! The machine's probes: fixed operations, one per kind of work whose speed moves on
//! its own (a system call, user-space arithmetic, a zero-fill page fault, a wake-up
//! across CPUs, a read from a cold page cache), timed briefly in the process and on the
//! CPU where a round is measured.
//!
//! A probe does the same work every time, so whatever moves its reading from one
//! round (one process, one moment) to the next is the machine: a vCPU that runs at
//! another speed after it idled, a process that landed in a slower state, a host
//! whose memory system is busy. Those movements differ by kind (a vDSO clock read has
//! been seen to move −25% while the getpid canary moved +5%, and page faults to slow
//! down while neither did), so a figure is compared with the probe of its own kind
//! (see [`crate::stats::rounds::floor`]). It knows no benchmark; the catalogue says
//! which kind each benchmark is.

use super::{BenchError, Body, Harness, Loop};
use crate::method::{
    PROBE_BATCHES as BATCHES, PROBE_CROSS_BATCH as CROSS_BATCH, PROBE_IO_FILE as IO_FILE,
    PROBE_IO_READ as IO_READ, PROBE_MEMORY_PAGES as MEMORY_PAGES,
    PROBE_SYSCALL_BATCH as SYSCALL_BATCH, PROBE_USER_BATCH as USER_BATCH,
};
use crate::os::affinity;
use crate::os::mem::{page_size, Mapping};
use crate::os::sys;
use serde::{Deserialize, Serialize};

/// A kind of work whose speed the machine moves on its own.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum WorkKind {
    /// Entering the kernel and back: most of the catalogue.
    Syscall,
    /// Instructions that stay in user space (function calls, vDSO clock reads).
    User,
    /// Page faults and mapping changes: the memory system and its page tables.
    Memory,
    /// Work that crosses CPUs or that the scheduler places (`placement=cross-cpu` or
    /// `free`): it waits on another CPU, whose speed and wake-up latency move apart
    /// from the home CPU's.
    Cross,
    /// Reads that wait for storage (`cache=cold`): the disk's latency, or on a VM the
    /// host's, moves apart from any CPU's speed.
    Io,
}

impl WorkKind {
    /// Every kind, in the order of [`Probes`]' readings.
    pub const ALL: [WorkKind; 5] = [
        WorkKind::Syscall,
        WorkKind::User,
        WorkKind::Memory,
        WorkKind::Cross,
        WorkKind::Io,
    ];

    /// Its name, as the JSON spells it.
    pub fn name(self) -> &'static str {
        match self {
            WorkKind::Syscall => "syscall",
            WorkKind::User => "user",
            WorkKind::Memory => "memory",
            WorkKind::Cross => "cross",
            WorkKind::Io => "io",
        }
    }

    /// What its probe times, in a few words.
    pub fn probe(self) -> &'static str {
        match self {
            WorkKind::Syscall => "getpid",
            WorkKind::User => "an add-multiply chain",
            WorkKind::Memory => "a zero-fill page fault",
            WorkKind::Cross => "a wake-up round trip with another CPU",
            WorkKind::Io => "a 4 KiB read from a cold page cache",
        }
    }

    /// Its place in [`Probes`]' readings.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// One reading of every probe, ns per operation, indexed by [`WorkKind::index`] (NaN
/// for a probe not read).
pub type Probes = [f64; 5];

/// Which probes beyond the three always read a reading takes: each costs more, and is
/// read only beside rows of its kind (and, for `cross`, in the probe processes).
#[derive(Debug, Clone, Copy, Default)]
pub struct Extra<'a> {
    /// The cross probe ([`WorkKind::Cross`]).
    pub cross: bool,
    /// The io probe ([`WorkKind::Io`]), with the directory its unnamed file goes to.
    pub io: Option<&'a std::path::Path>,
}

impl Harness<'_> {
    /// Reads every probe once: each is the median of a few short batches, nothing
    /// subtracted. The cross probe (some milliseconds, four times the others) only with
    /// `extra.cross`; it reads
    /// NaN without, or when this thread may use no other CPU. The io probe only with
    /// `extra.io`; NaN without, or where the page cache cannot be made cold (tmpfs). A
    /// failed mapping, thread, socket or file fails the reading.
    pub fn probe(&self, extra: Extra<'_>) -> Result<Probes, BenchError> {
        let mut getpid = Loop(|| {
            std::hint::black_box(sys::getpid());
            Ok(())
        });
        let syscall = self.canary(&mut getpid, SYSCALL_BATCH, BATCHES)?;
        let mut x = 0x9e37_79b9_u64;
        let mut chain = Loop(|| {
            x = std::hint::black_box(
                x.wrapping_mul(6_364_136_223_846_793_005) ^ (x >> 7),
            );
            Ok(())
        });
        let user = self.canary(&mut chain, USER_BATCH, BATCHES)?;
        let mut faults = Faults {
            map: None,
            len: MEMORY_PAGES * page_size(),
        };
        let memory = self.canary(&mut faults, 1, BATCHES)? / MEMORY_PAGES as f64;
        let cross = if extra.cross {
            self.cross_probe()?
        } else {
            f64::NAN
        };
        let io = match extra.io {
            Some(dir) => self.io_probe(dir)?,
            None => f64::NAN,
        };
        Ok([syscall, user, memory, cross, io])
    }

    /// [`IO_READ`] bytes read (`pread`) from the start of a file of [`IO_FILE`] bytes
    /// in `dir` whose pages were evicted from the page cache just before, untimed: ns
    /// per read, NaN when the pages stayed resident (a file system in memory). The
    /// file has no name from the start, so nothing is left behind on any exit path.
    fn io_probe(&self, dir: &std::path::Path) -> Result<f64, BenchError> {
        use crate::os::file;
        use std::os::fd::AsFd;
        let f = file::unnamed_file(dir)
            .map_err(|e| BenchError::os("creating the io probe's file", e))?;
        file::fill(&f, IO_FILE as u64)
            .map_err(|e| BenchError::os("writing the io probe's file", e))?;
        let map = Mapping::file(f.as_fd(), IO_FILE, false)
            .map_err(|e| BenchError::os("mapping the io probe's file", e))?;
        let mut cold = ColdRead {
            file: &f,
            map: &map,
            buf: vec![0; IO_READ],
            resident: false,
        };
        let reading = self.canary(&mut cold, 1, BATCHES)?;
        Ok(if cold.resident { f64::NAN } else { reading })
    }

    /// A byte sent to a thread pinned on another CPU and back, over a socket pair: ns
    /// per round trip, NaN when there is no other CPU to use. The thread is joined
    /// before this returns, whatever happened.
    fn cross_probe(&self) -> Result<f64, BenchError> {
        use std::io::{Read, Write};
        use std::os::unix::net::UnixStream;
        // From the CPU this thread is pinned to (a round's home) to another one.
        let here = affinity::allowed_cpus()
            .map_err(|e| BenchError::os("sched_getaffinity", e))?;
        let other = match here.as_slice() {
            [home] => affinity::process_cpus().into_iter().find(|c| c != home),
            _ => None,
        };
        let Some(other) = other else {
            return Ok(f64::NAN);
        };
        let (mut mine, mut theirs) =
            UnixStream::pair().map_err(|e| BenchError::os("socketpair", e))?;
        let echo = std::thread::Builder::new()
            .name("syscost-cross-probe".into())
            .spawn(move || -> std::io::Result<()> {
                affinity::set_cpus(&[other])?;
                let mut b = [0u8; 1];
                loop {
                    theirs.read_exact(&mut b)?;
                    if b[0] == 0 {
                        return Ok(());
                    }
                    theirs.write_all(&b)?;
                }
            })
            .map_err(|e| BenchError::os("spawning the cross probe's thread", e))?;
        let mut b = [1u8; 1];
        let mut trip = Loop(|| {
            mine.write_all(&[1])
                .and_then(|()| mine.read_exact(&mut b))
                .map_err(|e| BenchError::os("the cross probe's round trip", e))
        });
        let reading = self.canary(&mut trip, CROSS_BATCH, BATCHES);
        // The thread ends on a zero byte, or on the socket's end if that fails.
        let _ = mine.write_all(&[0]);
        drop(mine);
        let joined = echo.join();
        let reading = reading?;
        match joined {
            Ok(Ok(())) => Ok(reading),
            Ok(Err(e)) => Err(BenchError::os("the cross probe's thread", e)),
            Err(_) => Err(BenchError::Failed(
                "the cross probe's thread panicked".into(),
            )),
        }
    }
}

/// Cold reads: each batch's reset evicts the whole file (`POSIX_FADV_DONTNEED`) and
/// checks with `mincore` that the pages read are gone; the batch reads them.
struct ColdRead<'a> {
    file: &'a std::fs::File,
    /// A mapping of the file never touched, for `mincore`.
    map: &'a Mapping,
    buf: Vec<u8>,
    /// Some page read was still resident after an eviction.
    resident: bool,
}

impl Body for ColdRead<'_> {
    fn reset(&mut self, _iters: u64) -> Result<(), BenchError> {
        use std::os::fd::AsFd;
        crate::os::file::evict(self.file.as_fd(), None)
            .map_err(|e| BenchError::os("posix_fadvise", e))?;
        let left = self
            .map
            .resident_pages_in(IO_READ)
            .map_err(|e| BenchError::os("mincore", e))?;
        self.resident |= left > 0;
        Ok(())
    }

    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        use std::os::unix::fs::FileExt;
        for _ in 0..iters {
            let n = self
                .file
                .read_at(&mut self.buf, 0)
                .map_err(|e| BenchError::os("the io probe's read", e))?;
            if n != IO_READ {
                return Err(BenchError::Failed(format!(
                    "the io probe read {n} bytes of {IO_READ}"
                )));
            }
        }
        Ok(())
    }
}

/// Zero-fill faults: each batch touches [`MEMORY_PAGES`] fresh pages of a mapping made
/// before it, untimed (see [`Body::reset`]); one operation is one batch, so the
/// reading is divided by the pages.
struct Faults {
    map: Option<Mapping>,
    len: usize,
}

impl Body for Faults {
    fn reset(&mut self, _iters: u64) -> Result<(), BenchError> {
        self.map = None;
        let m = Mapping::anon(self.len, false).map_err(|e| BenchError::os("mmap", e))?;
        // Base pages, so that each touch is one fault whatever the THP setting.
        let _ = m.advise(libc::MADV_NOHUGEPAGE);
        self.map = Some(m);
        Ok(())
    }

    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        let m = self
            .map
            .as_ref()
            .ok_or_else(|| BenchError::Failed("the probe's mapping is missing".into()))?;
        for _ in 0..iters {
            m.touch_write(page_size());
        }
        Ok(())
    }
}
