//! `mem.*`: what the kernel charges for memory. Page faults (zero fill, with huge pages,
//! prefaulted by `MAP_POPULATE`-style advice or by a helper thread; a mapped file in
//! the page cache; copy-on-write after fork), after the 1999 paper's §5, and the VMS
//! memory-management services over n pages with their modern equivalents (mmap/munmap,
//! brk, mprotect, a shared mapping, mremap).
//!
//! Bodies map, unmap and fork only in `prepare` and `reset`, never in the timed `run`
//! (except where mapping is the operation); every region and child is released by
//! `Drop`.

mod fault;
pub(crate) use fault::UNMAP;
pub mod scale;
mod vms;

use super::Bench;

/// The family's benchmarks.
pub const BENCHES: &[&dyn Bench] = &[
    &fault::ZERO,
    &fault::FILE,
    &fault::COW,
    &vms::MMAP,
    &vms::BRK,
    &vms::MPROTECT,
    &vms::MAP_SHARED,
    &vms::MREMAP,
    &super::shared::FAULT_SHM,
];
