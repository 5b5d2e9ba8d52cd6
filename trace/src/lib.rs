//! syscost's event trace: time-stamped events placed by a program, on the same clock as
//! the kernel's events, written to a file that `syscost trace` reads.
//!
//! This crate is what a program links (as a Rust crate, or from C and C++ through
//! `include/syscost_trace.h` and `libsyscost_trace.a` / `.so`). [`format`](mod@format) is the file
//! format that the recorder writes and the `syscost` tool reads.

pub mod format;
pub mod recorder;

pub use recorder::{
    close, name, now, open, open_from_env, record, set_enabled, stats, Config, Stats,
};
pub mod ffi;
