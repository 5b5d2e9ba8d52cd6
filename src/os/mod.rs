//! The operating-system layer owns every raw contact with the kernel: system-call wrappers, clock
//! reads, pinning, resource usage, signal handling, child processes and background
//! load. It is the only module allowed to hold `unsafe` code; everything it exports is
//! a safe function or an owning type whose `Drop` releases what it holds.
//!
//! It must not know any benchmark by name, keep timing state, or print anything.

pub mod affinity;
pub mod brk;
pub mod file;
pub mod harden;
pub mod interrupt;
pub mod ipc;
pub mod load;
pub mod mem;
pub mod memfile;
pub mod ops;
pub mod peers;
pub mod perf;
pub mod placement;
pub mod raw;
pub mod sampler;
pub mod signal;
pub mod spawn;
pub mod svc;
pub mod sys;
pub mod target;
pub mod task;
pub mod term;
pub mod uring;
pub mod usage;
