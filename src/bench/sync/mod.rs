//! `sync.*`: futex operations as `perf bench futex` times them: the hash lookup of a
//! wait that returns at once (`hash`), waking blocked waiters (`wake`, and
//! `wake_parallel` with several wakers), moving them to another word (`requeue`) and
//! the priority-inheriting lock (`lock_pi`). Every futex is private (perf's default).
//!
//! Waiters and contenders are threads of the measuring process, created in `prepare`
//! and joined when the body is dropped; nothing here touches another process.

pub mod futex;
pub mod pool;

use crate::bench::Bench;

/// The family.
pub const BENCHES: &[&dyn Bench] = &[
    &futex::HASH,
    &futex::WAKE,
    &futex::WAKE_PARALLEL,
    &futex::REQUEUE,
    &futex::LOCK_PI,
];
