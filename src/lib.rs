//! syscost measures what Linux charges for its services — system calls, clocks,
//! context switches, signals, faults, file reads — with statistics a performance
//! engineer can trust.
//!
//! The library is the whole tool; `main.rs` only calls [`cli::main`]. The tree follows
//! the architecture: [`cli`] turns arguments into one validated configuration,
//! [`harness`] measures any prepared operation, [`stats`] holds the pure statistics,
//! [`bench`](mod@bench) is the catalogue, [`os`] is the only place with raw system calls,
//! [`report`] renders results, [`host`] reads the machine's facts, [`store`] keeps the
//! history of runs, [`compare`] compares runs, and [`repro`] puts the seed studies'
//! tables beside today's figures.

pub mod bench;
pub mod cli;
pub mod compare;
pub mod derive;
pub mod draw;
pub mod error;
pub mod explain;
pub mod fleet;
pub mod harness;
pub mod host;
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
