//! The event trace of the 1976 memo: user events from programs that link
//! `syscost-trace`, kernel events from the kernel's tracepoints on the same clock, and
//! what `syscost trace` does with them.
//!
//! [`kernel`] records the kernel's events, [`cull`] decides which intervals the kernel
//! perturbed, [`reduce`] is the memo's `fsm`, [`export`] writes formats other tools
//! open, [`show`] lists events.

pub mod cull;
pub mod export;
pub mod kernel;
pub mod record;
pub mod reduce;
pub mod show;
#[cfg(test)]
mod testing;
pub mod watch;

pub use syscost_trace::format;
