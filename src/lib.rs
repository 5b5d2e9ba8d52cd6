//! syscost measures what Linux charges for its services — system calls, clocks,
//! context switches, signals, faults, file reads — with statistics a performance
//! engineer can trust.
//!
//! The library is the whole tool; `main.rs` only dispatches to a worker or to
//! [`cli::main`]. The modules form layers, each using only those below it (lowest
//! first): [`error`], [`stats`], [`host`] and [`draw`] (the drawing toolkit); [`os`],
//! the only place with raw system calls; [`harness`], the measurement core;
//! [`bench`](mod@bench) (the catalogue), [`trace`] and [`explain`]; [`results`], the
//! result model; [`derived`] and [`spill`]; [`session`], which measures a run in worker
//! processes; [`compare`]; [`report`] (the renderers) and [`store`] (the history);
//! [`fleet`]; [`repro`]; and [`cli`] on top. `ARCHITECTURE.md` maps them, and
//! `scripts/layers.py` checks that no use goes up a layer.

pub mod bench;
pub mod cli;
pub mod compare;
pub mod derived;
pub mod draw;
pub mod error;
pub mod explain;
pub mod fleet;
pub mod harness;
pub mod host;
pub mod method;
pub mod os;
pub mod report;
pub mod repro;
pub mod results;
pub mod session;
pub mod spill;
pub mod stats;
pub mod store;
pub mod trace;

#[cfg(test)]
mod fuzz_tests;
