//! The metadata chunk's JSON object, [`Meta`]: what a trace says about itself (its
//! clock, event names, threads, totals, kernel side and command).

use serde::{Deserialize, Serialize};

/// A metadata chunk's JSON object. Each names its `type`; readers ignore types and
/// fields they do not know.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Meta {
    /// Written when a trace opens (the file's first chunk when a program opened it).
    Open {
        /// The clock of every timestamp: `"CLOCK_MONOTONIC_RAW"`.
        clock: String,
        /// How the clock was checked against the kernel's, in one line.
        clock_check: String,
        /// The measured cost of recording one event, ns (the memo's Fig. 2
        /// correction), and how it was measured.
        event_cost_ns: f64,
        /// How the event cost was measured.
        event_cost_method: String,
        /// The recording process.
        pid: u32,
        /// The program's name.
        program: String,
        /// Bytes of ring per thread.
        buffer_bytes: u64,
        /// Wall-clock time the trace opened, seconds since the epoch.
        opened_unix: f64,
        /// `CLOCK_MONOTONIC_RAW` when it opened, ns.
        opened_ns: u64,
    },
    /// Names for event ids.
    Names {
        /// Event ids and their names (a list of pairs: JSON object keys would be
        /// strings).
        names: Vec<(u32, String)>,
    },
    /// A thread's name.
    Thread {
        /// Thread id.
        tid: u32,
        /// Its name.
        name: String,
    },
    /// Written when a trace closes: the totals.
    Close {
        /// Events recorded into the file.
        recorded: u64,
        /// Events lost because a ring was full.
        lost: u64,
        /// `CLOCK_MONOTONIC_RAW` when it closed, ns.
        closed_ns: u64,
        /// Chunks the writer wrote.
        chunks: u64,
    },
    /// What the kernel side recorded, or why it could not.
    Kernel {
        /// The events asked for (names as in [`KernelKind::name`](super::KernelKind::name)).
        requested: Vec<String>,
        /// The events recorded.
        recorded: Vec<String>,
        /// Why some or all could not be recorded (empty when all were).
        unavailable: String,
        /// Kernel events recorded.
        events: u64,
        /// Kernel events lost.
        lost: u64,
        /// How they were collected, in one line.
        method: String,
    },
    /// The command `trace record` ran.
    Command {
        /// Program and arguments.
        argv: Vec<String>,
        /// Exit status, as the shell shows it (128 + signal for a signal).
        status: i32,
    },
}
