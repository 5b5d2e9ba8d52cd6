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

/// Why a benchmark did not produce a result. It travels as it is between a run and its
/// workers (`session::worker::wire`).
#[derive(Debug, Clone, Error, serde::Serialize, serde::Deserialize)]
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

/// The candidate closest to `word` when it is near enough to be a slip of the hand (a
/// letter or two off, or a quarter of a long name), for a "did you mean" after an
/// unknown name; the first in `candidates`' order on a tie.
pub fn closest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let near = 2.max(word.chars().count() / 4);
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(word, c), c))
        .filter(|&(d, c)| d > 0 && d <= near && c != word)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// `" (did you mean NAME?)"` for the candidate closest to `word`, or nothing.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> String {
    closest(word, candidates)
        .map(|c| format!(" (did you mean {c}?)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_a_letter_off_finds_the_right_one() {
        let names = ["syscall.getpid", "syscall.getppid", "syscall.gettid"];
        assert_eq!(closest("syscall.getpd", names), Some("syscall.getpid"));
        assert_eq!(closest("syscall.getppidd", names), Some("syscall.getppid"));
        assert_eq!(closest("mem.brk", names), None);
        assert_eq!(did_you_mean("sze", ["size", "n"]), " (did you mean size?)");
        assert_eq!(did_you_mean("zzzzzz", ["size", "n"]), "");
    }
}
