//! `proc.*`: what creating work costs. fork+exit+wait, vfork+exit+wait, fork+exec of a
//! tiny helper+wait, posix_spawn of the helper+wait, and thread create+join (sloan1992:
//! the pipeline's ring is built by fork, and its cost of creation must stay small
//! against the switches it measures).
//!
//! Each operation is long (tens to hundreds of µs) and blocks in `wait`, so it is timed
//! one by one (a batch of 1) with switches, faults and preemption expected; after the
//! measurement each benchmark reports the distribution of every operation timed as
//! facts: p50, p90, p99 and max in µs (all samples, not only the clean ones, since the
//! tail is the point of a distribution). A child that does not exit with status 0
//! fails the benchmark with its status; every child is reaped on every path (see
//! [`crate::os::spawn`]).
//!
//! The helper of `proc.exec` and `proc.spawn` is the syscost binary itself, started
//! with [`spawn::HELPER_ARG`], which makes it exit at once. Its path is the current
//! executable (under whatever name it was installed), or `SYSCOST_HELPER` when set; in
//! a unit test's harness, which is not syscost, the two are skipped unless it is set.
//!
//! What these cost depends on the size of the creating process: a fork copies its page
//! tables and marks its private pages copy-on-write. Each takes the parameter
//! [`rss::RSS`]: resident anonymous memory added to the process in `prepare` (see
//! [`rss`]); the default, 0, measures the process as it is. Each result reports the
//! process's resident size and page tables while it was measured.

pub mod clone3;
pub mod rss;

use crate::bench::facts::Figure::{Exec, Fork};
use crate::bench::facts::*;
use crate::bench::Fact;
use crate::bench::{body, Bench, OrOs, Params, Prepared, Simple};
use crate::error::BenchError;
use crate::harness::{Harness, Measurement, Plan};
use crate::os::spawn::{self, ExitStatus, PreparedExec};
use crate::stats::percentile_sorted;
use rss::{Ballast, Footprint, RSS};
use std::io;
use std::path::PathBuf;

/// The family's benchmarks.
pub const BENCHES: &[&dyn Bench] =
    &[&FORK, &VFORK, &EXEC, &SPAWN, &THREAD, &clone3::CLONE3];

/// The environment variable that names the helper program instead of the current
/// executable.
pub const HELPER_ENV: &str = "SYSCOST_HELPER";

/// One operation per sample; waiting blocks, the child faults, and the child may run
/// on our CPU.
const ONE_BY_ONE: Plan = Plan {
    fixed_batch: Some(1),
    ..crate::bench::expecting(true, true, true)
};

/// `proc.fork`.
pub const FORK: Simple = Simple {
    name: "proc.fork",
    facts: Facts {
        quotes: &[quote(Fork, 0, "rss=0", "fork, _exit, waitpid")],
        ..SYSCALL.on(Libc, "fork, then waitpid")
    },
    about: "fork(); the child _exit(0)s at once; waitpid reaps it (grows with the parent's memory)",
    origin: "sloan1992 (the ring is built by fork), mcvoy1996 lat_proc fork",
    params: &[RSS],
    prepare: |p| {
        let (held, size) = ballast(p)?;
        check_once(spawn::fork_exit_wait(), "fork")?;
        Ok(Prepared::new(body(move || {
            held.keep();
            reaped(spawn::fork_exit_wait(), "fork")
        }))
        .op("fork+exit+wait")
        .plan(ONE_BY_ONE)
        .after(Box::new(move |h, m| distribution(h, m, size))))
    },
};

/// `proc.vfork`.
pub const VFORK: Simple = Simple {
    name: "proc.vfork",
    facts: SYSCALL.on(
        Raw,
        "vfork in an asm! block of src/os/spawn; the signal mask around it and \
         waitpid through libc",
    ),
    about:
        "vfork(); the child exit_group(0)s at once, sharing our memory; waitpid reaps it",
    origin: "sloan1992, DESIGN process creation",
    params: &[RSS],
    prepare: |p| {
        match spawn::vfork_exit_wait() {
            Err(e) if e.kind() == io::ErrorKind::Unsupported => {
                return Err(BenchError::Skip(e.to_string()))
            }
            r => check_once(r, "vfork")?,
        }
        let (held, size) = ballast(p)?;
        Ok(Prepared::new(body(move || {
            held.keep();
            reaped(spawn::vfork_exit_wait(), "vfork")
        }))
        .op("vfork+exit+wait")
        .plan(ONE_BY_ONE)
        .after(Box::new(move |h, m| distribution(h, m, size))))
    },
};

/// `proc.exec`.
pub const EXEC: Simple = Simple {
    name: "proc.exec",
    facts: Facts {
        quotes: &[quote(Exec, 0, "rss=0", "fork, execve, waitpid")],
        serial: Some("it needs the syscost binary as a single-threaded process"),
        ..SYSCALL.on(Libc, "fork, execve in the child, waitpid")
    },
    about: "fork(), then execve of a helper that exits at once (syscost itself); waitpid reaps it",
    origin: "sloan1992, mcvoy1996 lat_proc exec",
    params: &[RSS],
    prepare: |p| {
        let prep = helper()?;
        let (held, size) = ballast(p)?;
        check_helper(spawn::fork_exec_wait(&prep), &prep)?;
        Ok(Prepared::new(body(move || {
            held.keep();
            reaped(spawn::fork_exec_wait(&prep), "fork+exec of the helper")
        }))
        .op("fork+exec+exit+wait")
        .plan(ONE_BY_ONE)
        .after(Box::new(move |h, m| distribution(h, m, size))))
    },
};

/// `proc.spawn`.
pub const SPAWN: Simple = Simple {
    name: "proc.spawn",
    facts: Facts {
        serial: Some("it needs the syscost binary as a single-threaded process"),
        ..SYSCALL.on(Libc, "posix_spawn, then waitpid")
    },
    about:
        "posix_spawn of a helper that exits at once (syscost itself); waitpid reaps it",
    origin: "sloan1992, DESIGN process creation",
    params: &[RSS],
    prepare: |p| {
        let prep = helper()?;
        let (held, size) = ballast(p)?;
        check_helper(spawn::spawn_wait(&prep), &prep)?;
        Ok(Prepared::new(body(move || {
            held.keep();
            reaped(spawn::spawn_wait(&prep), "posix_spawn of the helper")
        }))
        .op("spawn+exit+wait")
        .plan(ONE_BY_ONE)
        .after(Box::new(move |h, m| distribution(h, m, size))))
    },
};

/// `proc.thread`.
pub const THREAD: Simple = Simple {
    name: "proc.thread",
    facts: SYSCALL.on(Libc, "pthread_create and pthread_join"),
    about: "pthread_create of a thread that returns at once, default attributes, then pthread_join",
    origin: "DESIGN process creation",
    params: &[RSS],
    prepare: |p| {
        let (held, size) = ballast(p)?;
        spawn::thread_create_join().or_os("pthread_create")?;
        Ok(Prepared::new(body(move || {
            held.keep();
            spawn::thread_create_join()
                .map_err(|e| BenchError::os("pthread_create/join", e))
        }))
        .op("create+join")
        .plan(ONE_BY_ONE)
        .after(Box::new(move |h, m| distribution(h, m, size))))
    },
};

/// Ok when the child exited with status 0; otherwise a failure naming the status.
#[inline(always)]
fn reaped(r: io::Result<ExitStatus>, what: &'static str) -> Result<(), BenchError> {
    match r {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(child_failed(what, s)),
        Err(e) => Err(BenchError::os(what, e)),
    }
}

#[cold]
#[inline(never)]
fn child_failed(what: &str, s: ExitStatus) -> BenchError {
    BenchError::Failed(format!(
        "{what}: the child ended with {s}, not exit status 0"
    ))
}

/// The untimed first run: the same check as in the loop.
fn check_once(r: io::Result<ExitStatus>, what: &'static str) -> Result<(), BenchError> {
    reaped(r, what)
}

/// The helper program, prepared: `SYSCOST_HELPER` if set, else the current executable
/// when it is syscost; skipped otherwise.
fn helper() -> Result<PreparedExec, BenchError> {
    let path = match std::env::var_os(HELPER_ENV) {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => {
            let exe = std::env::current_exe().or_os("finding the current executable")?;
            // A unit test's harness is not syscost; syscost under any file name is.
            if cfg!(test) {
                return Err(BenchError::Skip(format!(
                    "the helper is the syscost binary, but this process is {}, a test \
                     harness; set {HELPER_ENV} to syscost's path",
                    exe.display()
                )));
            }
            exe
        }
    };
    PreparedExec::helper(&path).or_os(&format!("helper {}", path.display()))
}

/// Runs the helper once untimed, so a wrong path fails with a clear message.
fn check_helper(
    r: io::Result<ExitStatus>,
    prep: &PreparedExec,
) -> Result<(), BenchError> {
    let prep = prep.command_line();
    match r {
        Ok(s) if s.success() => Ok(()),
        Ok(ExitStatus::Exited(127)) => Err(BenchError::Failed(format!(
            "the helper `{prep}` could not be executed (exit status 127)"
        ))),
        Ok(s) => Err(BenchError::Failed(format!(
            "the helper `{prep}` ended with {s}; it must be syscost, which exits with 0 \
             when given {}",
            spawn::HELPER_ARG
        ))),
        Err(e) => Err(BenchError::Failed(format!(
            "the helper `{prep}` could not be started: {e}"
        ))),
    }
}

/// The memory `p`'s `rss` asks for, made resident, and the process's footprint with
/// it, read once here: the facts report it after the body (and the memory) is gone.
fn ballast(p: &Params) -> Result<(Ballast, Option<Footprint>), BenchError> {
    let held = Ballast::from_params(p)?;
    Ok((held, Footprint::now()))
}

/// p50, p90, p99 and max of every operation timed, in µs, and the creating process's
/// resident size and page tables while it was measured.
fn distribution(
    _h: &Harness<'_>,
    m: &Measurement,
    size: Option<Footprint>,
) -> Result<Vec<Fact>, BenchError> {
    let mut all = m.analysis.per_op_ns.clone();
    all.retain(|x| x.is_finite());
    if all.is_empty() {
        return Ok(Vec::new());
    }
    all.sort_unstable_by(f64::total_cmp);
    let us = |p: f64| percentile_sorted(&all, p) / 1000.0;
    let mut facts = vec![
        Fact::new("p50_us", us(50.0), "us", "median of every operation timed"),
        Fact::new(
            "p90_us",
            us(90.0),
            "us",
            "90th percentile of every operation",
        ),
        Fact::new(
            "p99_us",
            us(99.0),
            "us",
            "99th percentile of every operation",
        ),
        Fact::new("max_us", us(100.0), "us", "slowest operation timed"),
    ];
    if let Some(f) = size {
        facts.push(Fact::new(
            "parent_rss_kib",
            f.rss_kib as f64,
            "KiB",
            "the creating process's resident size, rss= included (fork shares every \
             private page copy-on-write)",
        ));
        facts.push(Fact::new(
            "parent_pte_kib",
            f.pte_kib as f64,
            "KiB",
            "the creating process's page tables (what fork copies)",
        ));
    }
    Ok(facts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::testing::{self, fact as value, params_with};

    fn run(b: &dyn Bench) -> Option<Vec<Fact>> {
        run_with(b, &[])
    }

    fn run_with(b: &dyn Bench, args: &[&str]) -> Option<Vec<Fact>> {
        let cx = crate::bench::RunContext::default();
        let prep = testing::prepare(b, &params_with(b, args), &cx).ok()?;
        assert_eq!(prep.plan.fixed_batch, Some(1));
        assert!(prep.after.is_some(), "an after step");
        let (m, facts) = testing::measure(prep);
        assert!(m.samples.iter().all(|s| s.ticks > 0));
        Some(facts)
    }

    #[test]
    fn each_reports_an_ordered_distribution() {
        for b in [&FORK, &VFORK, &THREAD] {
            let facts = run(b).expect("fork, vfork and threads run anywhere");
            let (p50, p90, p99, max) = (
                value(&facts, "p50_us"),
                value(&facts, "p90_us"),
                value(&facts, "p99_us"),
                value(&facts, "max_us"),
            );
            assert!(
                p50 > 0.0 && p50 <= p90 && p90 <= p99 && p99 <= max,
                "{}",
                b.name
            );
        }
    }

    /// With `rss=48m`, the prepared benchmark holds the memory resident until it is
    /// dropped, and its facts report it. Other tests run in threads of this process,
    /// so the bounds leave them 16 MiB.
    #[test]
    fn rss_is_resident_while_prepared_and_released_on_drop() {
        const KIB: i64 = 48 << 10;
        let near = |grew: i64| (grew - KIB).abs() < 16 << 10;
        let rss = || Footprint::now().unwrap().rss_kib as i64;
        for b in [&FORK, &VFORK, &THREAD] {
            let p = params_with(b, &["rss=48m"]);
            assert_eq!(p.label(), "rss=50331648");
            let before = rss();
            let prep = b.prepare(&p, &crate::bench::RunContext::default()).unwrap();
            let held = rss();
            drop(prep);
            let after = rss();
            assert!(
                near(held - before) && near(held - after),
                "{}: VmRSS {before} KiB, {held} KiB prepared, {after} KiB dropped",
                b.name
            );
            let facts = run_with(b, &["rss=48m"]).expect("runs anywhere with 48 MiB");
            assert!(value(&facts, "parent_rss_kib") >= (KIB - 4096) as f64);
            // One 8-byte page-table entry per 4 KiB page.
            assert!(value(&facts, "parent_pte_kib") >= (KIB / 512) as f64);
        }
    }

    #[test]
    fn the_helper_is_skipped_in_a_test_harness_and_runs_when_named() {
        // The test harness is not syscost: without SYSCOST_HELPER both are skipped,
        // with a reason that says how to fix it.
        if std::env::var_os(HELPER_ENV).is_none() {
            for b in [&EXEC, &SPAWN] {
                match b
                    .prepare(&params_with(b, &[]), &crate::bench::RunContext::default())
                {
                    Err(BenchError::Skip(why)) => {
                        assert!(why.contains(HELPER_ENV), "{why}")
                    }
                    Err(e) => panic!("{}: {e}", b.name),
                    Ok(_) => panic!("{} should be skipped in a test harness", b.name),
                }
            }
        }
        // The helper machinery itself works with any program that exits 0 on its
        // argument.
        if std::path::Path::new("/bin/true").exists() {
            let prep = PreparedExec::helper(std::path::Path::new("/bin/true")).unwrap();
            check_helper(spawn::fork_exec_wait(&prep), &prep).unwrap();
            check_helper(spawn::spawn_wait(&prep), &prep).unwrap();
            let bad = PreparedExec::helper(std::path::Path::new("/bin/false")).unwrap();
            let e = check_helper(spawn::spawn_wait(&bad), &bad).unwrap_err();
            assert!(e.to_string().contains("exit status 1"), "{e}");
            let missing =
                PreparedExec::helper(std::path::Path::new("/nonexistent/syscost"))
                    .unwrap();
            assert!(check_helper(spawn::fork_exec_wait(&missing), &missing)
                .unwrap_err()
                .to_string()
                .contains("127"));
        }
    }

    #[test]
    fn a_failing_child_fails_the_benchmark() {
        let e = reaped(Ok(ExitStatus::Exited(3)), "fork").unwrap_err();
        assert!(matches!(e, BenchError::Failed(_)));
        assert!(e.to_string().contains("exit status 3"), "{e}");
        let e = reaped(Ok(ExitStatus::Signaled(libc::SIGSEGV)), "fork").unwrap_err();
        assert!(e.to_string().contains("SIGSEGV"), "{e}");
        assert!(reaped(Ok(ExitStatus::Exited(0)), "fork").is_ok());
    }

    #[test]
    fn resident_size_is_read() {
        assert!(Footprint::now().is_some_and(|f| f.rss_kib > 0 && f.pte_kib > 0));
    }
}
