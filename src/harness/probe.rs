//! The machine's probes: three fixed operations, one per kind of work whose speed
//! moves on its own (a system call, user-space arithmetic, a zero-fill page fault),
//! timed briefly in the process and on the CPU where a round has just been measured.
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
}

impl WorkKind {
    /// Every kind, in the order of [`Probes`]' readings.
    pub const ALL: [WorkKind; 3] = [WorkKind::Syscall, WorkKind::User, WorkKind::Memory];

    /// Its name, as the JSON spells it.
    pub fn name(self) -> &'static str {
        match self {
            WorkKind::Syscall => "syscall",
            WorkKind::User => "user",
            WorkKind::Memory => "memory",
        }
    }

    /// What its probe times, in a few words.
    pub fn probe(self) -> &'static str {
        match self {
            WorkKind::Syscall => "getpid",
            WorkKind::User => "an add-multiply chain",
            WorkKind::Memory => "a zero-fill page fault",
        }
    }

    /// Its place in [`Probes`]' readings.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// One reading of every probe, ns per operation, indexed by [`WorkKind::index`].
pub type Probes = [f64; 3];

/// getpid calls in one syscall probe batch.
const SYSCALL_BATCH: u64 = 300;
/// Steps of the add-multiply chain in one user probe batch.
const USER_BATCH: u64 = 4_000;
/// Pages faulted in one memory probe batch.
const MEMORY_PAGES: usize = 32;
/// Batches per probe: the reading is their median.
const BATCHES: usize = 5;

impl Harness<'_> {
    /// Reads every probe once (about half a millisecond): each is the median of a few
    /// short batches, nothing subtracted. A failed mapping fails the reading.
    pub fn probe(&self) -> Result<Probes, BenchError> {
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
        Ok([syscall, user, memory])
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
