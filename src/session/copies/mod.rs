//! One round of an instance run as N copies (`copies=N`, N > 1): each copy a thread of
//! the measuring process or a process forked from it, pinned one per CPU while N fits
//! the CPUs it may use, sets the benchmark up for itself (untimed), warms up, and waits
//! behind a barrier; released together, every copy times its own batches on the same
//! clock from one start to one deadline, so all of them cover the same window. The
//! copies' samples come back to the slot, copy by copy.
//!
//! It owns the copies' lives: every thread is joined and every process reaped, on
//! success, on a copy's failure and on an interruption (a forked copy dies with the
//! measuring process). It does not analyse samples.

use crate::bench::copies::{Copies, CopiesAs};
use crate::bench::{Bench, Params, RunContext};
use crate::error::BenchError;
use crate::harness::clock::Clock;
use crate::harness::{Harness, Sample, Settings, Window};
use crate::os::task::{self, Child, SharedMem};
use crate::session::worker::wire;
use std::os::unix::net::UnixStream;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

mod visit;

/// How long the copies may take to set themselves up and warm before the barrier.
const READY_WITHIN: Duration = Duration::from_secs(60);

/// Why a copy stopped when another one failed (the other's reason is the round's).
const ANOTHER: &str = "another copy failed";

/// The copies' samples, or the error that says most: a copy's own failure before
/// "another copy failed".
fn worst(
    out: Vec<Vec<Sample>>,
    errors: Vec<BenchError>,
) -> Result<Vec<Vec<Sample>>, BenchError> {
    let own = |e: &BenchError| !matches!(e, BenchError::Failed(w) if w == ANOTHER);
    let i = errors.iter().position(own).unwrap_or(0);
    errors.into_iter().nth(i).map_or(Ok(out), Err)
}

/// The barrier's words in the shared page.
const READY: usize = 0;
const GO: usize = 1;
const ABORT: usize = 2;
/// The start and the deadline, 64-bit slots (words 4..8).
const START: usize = 2;
const DEADLINE: usize = 3;

/// What every copy of one round needs.
pub(super) struct Job<'a> {
    pub(super) bench: &'a dyn Bench,
    pub(super) params: &'a Params,
    pub(super) files: crate::bench::file::Options,
    pub(super) profile: Option<&'static str>,
    /// The session's clock, as every copy may read it.
    pub(super) clock: Box<dyn Clock + Send + Sync>,
    pub(super) settings: Settings,
    pub(super) copies: Copies,
    /// The batch size (calibrated alone in the first round).
    pub(super) k: u64,
    pub(super) round: u32,
    /// The run's start on the clock.
    pub(super) begin: u64,
    /// Each copy's warm-up before the barrier, ns.
    pub(super) warm_ns: u64,
    /// The window every copy times, ns.
    pub(super) window_ns: f64,
    /// The directory the copies share, removed when the round is over.
    pub(super) dir: tempfile::TempDir,
}

/// What one round of copies measured.
pub(super) struct CopyRound {
    /// Each copy's samples, copy by copy.
    pub(super) samples: Vec<Vec<Sample>>,
    /// The CPU each copy was pinned to.
    pub(super) cpus: Vec<usize>,
    /// More copies than CPUs: some share one.
    pub(super) oversubscribed: bool,
}

/// The CPU of each of `n` copies among `allowed`: one each while they fit, else in
/// turn (oversubscribed).
pub(super) fn placement(n: usize, allowed: &[usize]) -> (Vec<usize>, bool) {
    let allowed = if allowed.is_empty() {
        &[0][..]
    } else {
        allowed
    };
    let cpus = (0..n).map(|i| allowed[i % allowed.len()]).collect();
    (cpus, n > allowed.len())
}

/// A directory for the copies of one round to share: on tmpfs (`/dev/shm`) where
/// there is one, so what they make there costs no storage, else where scratch files go.
fn shared_dir(cx: &RunContext) -> Result<tempfile::TempDir, BenchError> {
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        cx.scratch_dir()
    };
    tempfile::Builder::new()
        .prefix("syscost-copies-")
        .tempdir_in(&dir)
        .map_err(|e| {
            BenchError::os(
                &format!("making the copies' directory in {}", dir.display()),
                e,
            )
        })
}

/// Runs one round of `job`'s copies and returns their samples.
pub(super) fn round(job: &Job<'_>) -> Result<CopyRound, BenchError> {
    let allowed = crate::os::affinity::allowed_cpus()
        .map_err(|e| BenchError::os("reading the CPUs this process may use", e))?;
    let (cpus, oversubscribed) = placement(job.copies.n, &allowed);
    let bar = SharedMem::new(64).map_err(|e| BenchError::os("mmap (the barrier)", e))?;
    let samples = match job.copies.mode {
        CopiesAs::Thread => threads(job, &cpus, &bar)?,
        CopiesAs::Process => processes(job, &cpus, &bar)?,
    };
    Ok(CopyRound {
        samples,
        cpus,
        oversubscribed,
    })
}

/// The copies as threads of this process.
fn threads(
    job: &Job<'_>,
    cpus: &[usize],
    bar: &SharedMem,
) -> Result<Vec<Vec<Sample>>, BenchError> {
    std::thread::scope(|s| {
        let handles: Vec<_> = cpus
            .iter()
            .enumerate()
            .map(|(i, &cpu)| {
                std::thread::Builder::new()
                    .name(format!("syscost-copy{i}"))
                    .spawn_scoped(s, move || copy(job, i, cpu, bar))
            })
            .collect();
        let released = if handles.iter().any(Result::is_err) {
            abort(bar);
            Ok(())
        } else {
            release(job, bar, &mut || Ok(()))
        };
        let mut out = Vec::new();
        let mut errors: Vec<BenchError> = released.err().into_iter().collect();
        for h in handles {
            let got = match h {
                Ok(h) => h.join().unwrap_or_else(|_| {
                    Err(BenchError::Failed("a copy's thread panicked".into()))
                }),
                Err(e) => Err(BenchError::os("starting a copy's thread", e)),
            };
            match got {
                Ok(v) => out.push(v),
                Err(e) => errors.push(e),
            }
        }
        worst(out, errors)
    })
}

/// The copies as processes forked from this one (which must be single-threaded).
fn processes(
    job: &Job<'_>,
    cpus: &[usize],
    bar: &SharedMem,
) -> Result<Vec<Vec<Sample>>, BenchError> {
    let mut kids: Vec<(Child, UnixStream)> = Vec::new();
    for (i, &cpu) in cpus.iter().enumerate() {
        let (mine, theirs) =
            UnixStream::pair().map_err(|e| BenchError::os("socketpair (a copy)", e))?;
        let forked = task::fork_alone(|| {
            let got = copy(job, i, cpu, bar);
            let mut s = theirs.try_clone().expect("a descriptor of this process");
            match wire::send(&mut s, &got) {
                Ok(()) => 0,
                Err(_) => 3,
            }
        });
        drop(theirs);
        match forked {
            Ok(c) => kids.push((c, mine)),
            Err(e) => {
                abort(bar);
                return Err(BenchError::Failed(format!(
                    "forking copy {i} (copies_as=process): {e}; copies_as=thread runs \
                     the copies as threads instead"
                )));
            }
        }
    }
    let mut dead = || {
        for (i, (c, _)) in kids.iter_mut().enumerate() {
            if let Ok(Some(st)) = c.try_wait() {
                return Err(BenchError::Failed(format!(
                    "copy {i} ended before the barrier ({})",
                    task::describe_status(st)
                )));
            }
        }
        Ok(())
    };
    release(job, bar, &mut dead)?;
    let wait = Duration::from_secs_f64(job.window_ns / 1e9) + READY_WITHIN;
    let (mut out, mut errors) = (Vec::new(), Vec::new());
    for (i, (mut child, mut s)) in kids.into_iter().enumerate() {
        let _ = s.set_read_timeout(Some(wait));
        let got = wire::recv::<Result<Vec<Sample>, BenchError>>(&mut s);
        let status = child.reap_by(Instant::now() + Duration::from_secs(2));
        match got {
            Ok(Some(Ok(v))) => out.push(v),
            Ok(Some(Err(e))) => errors.push(e),
            Ok(None) | Err(_) => {
                let how = match status {
                    Ok((st, false)) => task::describe_status(st),
                    Ok((_, true)) => "killed after it stopped answering".into(),
                    Err(e) => e.to_string(),
                };
                errors.push(BenchError::Failed(format!(
                    "copy {i} sent no samples ({how})"
                )));
            }
        }
    }
    worst(out, errors)
}

/// Waits until every copy is ready (or one failed), then sets the common start and
/// deadline and releases them. `dead` says whether a copy ended early.
fn release(
    job: &Job<'_>,
    bar: &SharedMem,
    dead: &mut dyn FnMut() -> Result<(), BenchError>,
) -> Result<(), BenchError> {
    let n = job.copies.n as u32;
    let until = Instant::now() + READY_WITHIN;
    let check = |dead: &mut dyn FnMut() -> Result<(), BenchError>| {
        if crate::os::interrupt::interrupted() {
            return Err(BenchError::Interrupted);
        }
        dead()?;
        if Instant::now() > until {
            return Err(BenchError::Failed(format!(
                "the copies were not ready within {} s",
                READY_WITHIN.as_secs()
            )));
        }
        Ok(())
    };
    while bar.word(READY).load(Ordering::Acquire) < n {
        if let Err(e) = check(dead) {
            abort(bar);
            return Err(e);
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    if bar.word(ABORT).load(Ordering::Acquire) != 0 {
        abort(bar);
        return Ok(()); // the failing copy says why
    }
    let c = job.clock.as_ref();
    let ticks = |ns: f64| (ns / c.ns_per_tick()) as u64;
    let start = c.now() + ticks(crate::method::COPIES_START_AHEAD_NS);
    bar.slot(START).store(start, Ordering::Release);
    bar.slot(DEADLINE)
        .store(start + ticks(job.window_ns), Ordering::Release);
    bar.word(GO).store(1, Ordering::Release);
    task::futex_wake(bar.word(GO), i32::MAX);
    Ok(())
}

/// Releases every copy with the abort flag set.
fn abort(bar: &SharedMem) {
    bar.word(ABORT).store(1, Ordering::Release);
    bar.word(GO).store(1, Ordering::Release);
    task::futex_wake(bar.word(GO), i32::MAX);
}

/// One copy: pin, set up, warm, wait at the barrier, time its batches until the
/// deadline. A failure before the barrier aborts the others.
fn copy(
    job: &Job<'_>,
    i: usize,
    cpu: usize,
    bar: &SharedMem,
) -> Result<Vec<Sample>, BenchError> {
    let ready = || {
        bar.word(READY).fetch_add(1, Ordering::AcqRel);
    };
    let before = (|| {
        crate::os::affinity::set_cpus(&[cpu])
            .map_err(|e| BenchError::os("pinning a copy", e))?;
        let cx = RunContext::for_copy(
            job.files.clone(),
            job.profile,
            (i, job.copies.n),
            job.dir.path().to_path_buf(),
        );
        let prepared = job.bench.prepare(job.params, &cx)?;
        let mut body = prepared.body;
        Harness::new(job.clock.as_ref(), job.settings).warm(
            body.as_mut(),
            job.k,
            job.warm_ns,
        )?;
        Ok::<_, BenchError>((cx, body))
    })();
    let clock = job.clock.as_ref();
    let (_cx, mut body) = match before {
        Ok(x) => x,
        Err(e) => {
            bar.word(ABORT).store(1, Ordering::Release);
            ready();
            return Err(e);
        }
    };
    ready();
    while bar.word(GO).load(Ordering::Acquire) == 0 {
        let t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 50_000_000,
        };
        task::futex_wait(bar.word(GO), 0, Some(&t));
    }
    if bar.word(ABORT).load(Ordering::Acquire) != 0 {
        return Err(BenchError::Failed(ANOTHER.into()));
    }
    let start = bar.slot(START).load(Ordering::Acquire);
    let deadline = bar.slot(DEADLINE).load(Ordering::Acquire);
    while clock.now() < start {
        std::hint::spin_loop();
    }
    let h = Harness::new(clock, job.settings);
    let mut out = Vec::new();
    let window = Window {
        round: job.round,
        begin: job.begin,
        deadline,
        cap: job.settings.profile.round_max_samples.max(1)
            * crate::method::COPIES_MAX_SAMPLES,
    };
    h.collect_until(body.as_mut(), job.k, window, &mut out)?;
    drop(body);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_go_one_per_cpu_then_in_turn() {
        assert_eq!(placement(2, &[0, 1]), (vec![0, 1], false));
        assert_eq!(placement(3, &[2, 5]), (vec![2, 5, 2], true));
        assert_eq!(placement(1, &[]), (vec![0], false));
    }

    /// A benchmark whose copy `fail` cannot be set up (None: every copy can).
    struct Test {
        fail: Option<usize>,
    }

    impl Bench for Test {
        fn name(&self) -> &'static str {
            "test.copies"
        }
        fn about(&self) -> &'static str {
            "a getppid, or a failure in one copy's setup"
        }
        fn facts(&self) -> crate::bench::Facts {
            crate::bench::facts::SYSCALL
        }
        fn prepare(
            &self,
            _: &Params,
            cx: &RunContext,
        ) -> Result<crate::bench::Prepared, BenchError> {
            if cx.copy().map(|c| c.0) == self.fail {
                return Err(BenchError::Failed("this copy cannot be set up".into()));
            }
            Ok(crate::bench::Prepared::new(crate::bench::body(|| {
                std::hint::black_box(rustix::process::getppid());
                Ok(())
            })))
        }
    }

    fn run(bench: &Test, mode: CopiesAs) -> Result<CopyRound, BenchError> {
        let params = Params::default();
        let dir = tempfile::tempdir().unwrap();
        let job = Job {
            bench,
            params: &params,
            files: Default::default(),
            profile: None,
            clock: Box::new(crate::harness::clock::Monotonic),
            settings: Settings::new(crate::harness::Profile::SMOKE, 25.0),
            copies: Copies { n: 2, mode },
            k: 100,
            round: 0,
            begin: 0,
            warm_ns: 1_000_000,
            window_ns: 20e6,
            dir: tempfile::Builder::new().tempdir_in(dir.path()).unwrap(),
        };
        round(&job)
    }

    /// Two thread copies time their batches over one window: each has samples, and
    /// each copy's first batch starts before the other's last one ends (a sanity
    /// check, not a timing: a loaded machine may start one late).
    #[test]
    fn thread_copies_share_one_window() {
        let got = run(&Test { fail: None }, CopiesAs::Thread).unwrap();
        assert_eq!(got.samples.len(), 2);
        assert!(got.samples.iter().all(|v| v.len() > 1));
        let span = |v: &[Sample]| {
            let last = v.last().unwrap();
            (v[0].at_ns, last.at_ns + last.ticks as f64)
        };
        let (a, b) = (span(&got.samples[0]), span(&got.samples[1]));
        assert!(a.0 < b.1 && b.0 < a.1, "{a:?} {b:?}");
    }

    /// A copy that cannot be set up fails the round with its own reason, and the
    /// other copy is released and joined (the call returns).
    #[test]
    fn a_copy_that_cannot_be_set_up_fails_the_round() {
        let e = run(&Test { fail: Some(1) }, CopiesAs::Thread)
            .err()
            .unwrap();
        assert!(e.to_string().contains("cannot be set up"), "{e}");
    }

    /// Process copies fork from a single-threaded process only: in this (threaded)
    /// test process they are refused with the way out; alone, they run.
    #[test]
    fn process_copies_run_or_say_to_use_threads() {
        match run(&Test { fail: None }, CopiesAs::Process) {
            Ok(got) => assert!(got.samples.iter().all(|v| !v.is_empty())),
            Err(e) => assert!(e.to_string().contains("copies_as=thread"), "{e}"),
        }
    }
}
