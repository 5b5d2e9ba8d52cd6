//! The crate's error types: a usage error (the user can fix the command line; exit 2)
//! and a benchmark error (skip with a reason, or fail), kept apart so callers can act.

use thiserror::Error;

/// A mistake on the command line: reported as one line, exit code 2.
#[derive(Debug, Error)]
#[error("{0}")]
pub struct UsageError(pub String);

impl UsageError {
    /// A usage error with the given message.
    pub fn new(msg: impl Into<String>) -> UsageError {
        UsageError(msg.into())
    }
}

/// Why a benchmark did not produce a result.
#[derive(Debug, Error)]
pub enum BenchError {
    /// The benchmark cannot run here (no privilege, no kernel support); not a failure.
    #[error("skipped: {0}")]
    Skip(String),
    /// The operation failed; no time is reported.
    #[error("failed: {0}")]
    Failed(String),
    /// The user interrupted the run.
    #[error("interrupted")]
    Interrupted,
}

impl BenchError {
    /// A failure that names the operation and the OS error.
    pub fn os(what: &str, e: std::io::Error) -> BenchError {
        BenchError::Failed(format!("{what}: {e}"))
    }
    /// A failure from the current `errno`.
    pub fn last_os(what: &str) -> BenchError {
        BenchError::os(what, std::io::Error::last_os_error())
    }
}
