//! What the benchmarks of one run share: the options the command line gives them (where
//! scratch files go, how a cold page cache is made, the profile that sizes the default
//! file) and what they learn as the run goes (the scratch files already written, the
//! sizes this machine refused).
//!
//! A session owns one [`RunContext`] and hands it to every `prepare`. It ends with the
//! session, scratch files and all, so nothing a benchmark learns passes to the next run
//! in the same process (a library caller's, or a test's).

use super::file::{Options, Scratch};
use crate::error::BenchError;
use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::Arc;

/// How many scratch files are kept at most (the least recently used goes first).
const KEPT: usize = 2;

/// The shared state of one run's benchmarks.
#[derive(Default)]
pub struct RunContext {
    files: Options,
    profile: Option<&'static str>,
    /// The scratch files kept: a run interleaves the rounds of benchmarks that want
    /// files of different sizes (file.read's and mem.fault.file's), and each must not be
    /// made anew at every round. Oldest first.
    scratch: RefCell<Vec<Arc<Scratch>>>,
    /// The smallest size at which a benchmark's setup met a limit of the machine, by
    /// the benchmark's key, and why: larger sizes with the same key skip with that
    /// reason instead of trying again.
    limits: RefCell<Vec<Limit>>,
    /// Where new scratch files come from when not made here: a worker process asks the
    /// run's parent, which keeps the files for every instance.
    source: Option<ScratchSource>,
    /// Which copy of how many this context prepares for (`copies=N`), if any.
    copy: Option<(usize, usize)>,
    /// The directory the copies of one round share (see [`RunContext::copies_dir`]).
    copies_dir: Option<PathBuf>,
}

/// Makes (or finds) the scratch file of a length, for a [`RunContext`] that does not
/// make its own.
pub type ScratchSource = Box<dyn Fn(u64) -> Result<Scratch, BenchError>>;

/// A size a benchmark could not be prepared at.
struct Limit {
    key: &'static str,
    size: u64,
    why: String,
}

impl RunContext {
    /// A context for a run with these file options, measuring with the profile named
    /// `profile` (which sizes the default scratch file; `None`, the smallest).
    pub fn new(files: Options, profile: Option<&'static str>) -> RunContext {
        RunContext {
            files,
            profile,
            ..RunContext::default()
        }
    }

    /// This context with its new scratch files made by `source` instead of here.
    pub fn with_scratch_source(mut self, source: ScratchSource) -> RunContext {
        self.source = Some(source);
        self
    }

    /// A context for copy `i` of `n` (`copies=N`) with these options: its scratch
    /// files made here (a file per copy), [`RunContext::copy`] set, and the round's
    /// shared directory `dir`.
    pub fn for_copy(
        files: Options,
        profile: Option<&'static str>,
        (i, n): (usize, usize),
        dir: PathBuf,
    ) -> RunContext {
        RunContext {
            copy: Some((i, n)),
            copies_dir: Some(dir),
            ..RunContext::new(files, profile)
        }
    }

    /// The directory every copy of this round shares (on tmpfs where there is one),
    /// made and removed by the session around the round: where a benchmark's
    /// "one for all copies" resource gets a name each copy can open. None when the
    /// instance does not run as copies.
    pub fn copies_dir(&self) -> Option<&std::path::Path> {
        self.copies_dir.as_deref()
    }

    /// Which copy of how many this context prepares for, when the instance runs as
    /// copies: a benchmark with a private variant names its resource by the copy.
    pub fn copy(&self) -> Option<(usize, usize)> {
        self.copy
    }

    /// The file options (`--dir`, `--drop-caches`).
    pub fn files(&self) -> &Options {
        &self.files
    }

    /// The measurement profile's name, if the run has one.
    pub fn profile(&self) -> Option<&'static str> {
        self.profile
    }

    /// The directory scratch files go to: `--dir`, else the temporary directory.
    pub fn scratch_dir(&self) -> PathBuf {
        self.files.dir.clone().unwrap_or_else(std::env::temp_dir)
    }

    /// The scratch file of `len` bytes in [`RunContext::scratch_dir`]: the one already
    /// made if there is one, else a new one (after checking the free space).
    pub fn scratch(&self, len: u64) -> Result<Arc<Scratch>, BenchError> {
        let dir = self.scratch_dir();
        let mut kept = self.scratch.borrow_mut();
        if let Some(i) = kept.iter().position(|s| s.len() == len && s.dir() == dir) {
            let s = kept.remove(i);
            kept.push(s.clone());
            return Ok(s);
        }
        // Release the oldest one's space first, unless an instance still holds it.
        while kept.len() >= KEPT {
            kept.remove(0);
        }
        let s = Arc::new(match &self.source {
            Some(source) => source(len)?,
            None => Scratch::create(dir, len)?,
        });
        kept.push(s.clone());
        Ok(s)
    }

    /// Why a benchmark keyed `key` cannot be prepared at `size`, when a size no larger
    /// already met a limit in this run.
    pub fn known_limit(&self, key: &str, size: u64) -> Option<(u64, String)> {
        self.limits
            .borrow()
            .iter()
            .find(|l| l.key == key && size >= l.size)
            .map(|l| (l.size, l.why.clone()))
    }

    /// Records that a benchmark keyed `key` met a limit at `size` (only the smallest
    /// such size is kept).
    pub fn record_limit(&self, key: &'static str, size: u64, why: &str) {
        let mut limits = self.limits.borrow_mut();
        match limits.iter_mut().find(|l| l.key == key) {
            Some(l) if l.size <= size => {}
            Some(l) => {
                l.size = size;
                l.why = why.to_string();
            }
            None => limits.push(Limit {
                key,
                size,
                why: why.to_string(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_skips_larger_sizes_of_its_own_key_only() {
        let cx = RunContext::default();
        assert!(cx.known_limit("a", 10).is_none());
        cx.record_limit("a", 100, "too many");
        assert_eq!(
            cx.known_limit("a", 100),
            Some((100, "too many".to_string()))
        );
        assert_eq!(cx.known_limit("a", 1000).map(|l| l.0), Some(100));
        assert!(cx.known_limit("a", 99).is_none());
        assert!(cx.known_limit("b", 1000).is_none());
        // A larger limit does not replace a smaller one; a smaller one does.
        cx.record_limit("a", 500, "later");
        assert_eq!(cx.known_limit("a", 100).map(|l| l.0), Some(100));
        cx.record_limit("a", 50, "smaller");
        assert_eq!(cx.known_limit("a", 60), Some((50, "smaller".to_string())));
        // A new context knows nothing of the last.
        assert!(RunContext::default().known_limit("a", 1000).is_none());
    }

    #[test]
    fn scratch_files_are_shared_by_size_and_at_most_two_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let cx = RunContext::new(Options::in_dir(dir.path()), None);
        let a = cx.scratch(64 << 10).unwrap();
        assert_eq!(a.len(), 64 << 10);
        assert_eq!(a.dir(), dir.path());
        assert!(Arc::ptr_eq(&a, &cx.scratch(64 << 10).unwrap()));
        let b = cx.scratch(128 << 10).unwrap();
        let _c = cx.scratch(192 << 10).unwrap();
        // The oldest (a) was let go; asking again makes a new file.
        assert!(!Arc::ptr_eq(&a, &cx.scratch(64 << 10).unwrap()));
        assert_eq!(b.len(), 128 << 10);
        // Unnamed files: nothing appears in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
