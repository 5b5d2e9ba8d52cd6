//! The hardening parameters (issue 55) go on the worker and never on the run: a
//! seccomp filter is on the measuring worker (it says so in its facts) and never on
//! the run's process nor this test's; `cgroup=same|sibling` runs or skips with a
//! reason and leaves no cgroup behind, even when its worker is SIGKILLed mid-run or
//! the whole run is; `userns=1`, `rseq=off` and `spec=` run or skip with a reason.
//! No test asserts a speed.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use syscost::bench::harden::cgroup;
use syscost::results::{BenchResult, Status};

/// The tests take turns: they look for the run's workers among its children.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn start(doc: &Path, args: &[&str], profile: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_syscost"))
        .args([
            "run",
            "--profile",
            profile,
            "--no-save",
            "--format",
            "json",
            "-o",
        ])
        .arg(doc)
        .args(args)
        .env("SYSCOST_NO_SAVE", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn results(doc: &Path) -> Vec<BenchResult> {
    syscost::store::read_json(doc)
        .expect("a valid document")
        .results
}

fn fact(r: &BenchResult, name: &str) -> Option<f64> {
    r.facts.iter().find(|f| f.name == name).map(|f| f.value)
}

fn seccomp_mode(pid: u32) -> Option<u32> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("Seccomp:"))
        .and_then(|v| v.trim().parse().ok())
}

fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in tasks.flatten() {
            if let Ok(text) = std::fs::read_to_string(t.path().join("children")) {
                out.extend(
                    text.split_whitespace()
                        .filter_map(|c| c.parse::<u32>().ok()),
                );
            }
        }
    }
    out
}

/// The cgroups a run of pid `pid` made that are still there.
fn cgroups_of(pid: u32) -> Vec<std::path::PathBuf> {
    let name = format!("{}{pid}", cgroup::PREFIX);
    cgroup::leftovers()
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy() == name))
        .collect()
}

fn wait(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        assert!(Instant::now() < deadline, "the run did not end");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_filter_goes_on_the_worker_and_never_on_the_run() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("run.json");
    let mut child = start(
        &doc,
        &[
            "syscall.getppid",
            "via=raw",
            "seccomp=0,16",
            "seccomp_stack=1,2",
        ],
        "quick",
    );
    // While it runs, the run's own process never carries a filter; a worker may.
    let mut workers_filtered = 0;
    while child.try_wait().unwrap().is_none() {
        if let Some(mode) = seccomp_mode(child.id()) {
            assert_eq!(mode, 0, "the run's own process took a seccomp filter");
        }
        workers_filtered += children_of(child.id())
            .into_iter()
            .filter(|&w| seccomp_mode(w) == Some(2))
            .count();
        std::thread::sleep(Duration::from_millis(2));
    }
    let rs = results(&doc);
    assert_eq!(rs.len(), 4, "seccomp=0,16 × seccomp_stack=1,2");
    for r in &rs {
        assert_eq!(r.status, Status::Ok, "{:?}", r.reason);
        let (n, k) = (&r.params["seccomp"], &r.params["seccomp_stack"]);
        let want = if n == "0" {
            None
        } else {
            Some(k.parse::<f64>().unwrap())
        };
        assert_eq!(
            fact(r, "harden_seccomp_filters"),
            want,
            "seccomp={n} seccomp_stack={k}: the worker reports the filters it measured with"
        );
    }
    assert_eq!(
        seccomp_mode(std::process::id()),
        Some(0),
        "this test process"
    );
    println!("workers seen with a filter: {workers_filtered} readings");
}

#[test]
fn in_process_a_hardened_instance_is_skipped_with_the_reason() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("run.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_syscost"))
        .args([
            "run",
            "--profile",
            "quick",
            "--no-save",
            "--format",
            "json",
            "-o",
        ])
        .arg(&doc)
        .args(["syscall.getppid", "seccomp=16"])
        .env("SYSCOST_WORKERS", "inline")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait(&mut child);
    let rs = results(&doc);
    assert_eq!(rs[0].status, Status::Skipped);
    assert!(
        rs[0].reason.as_deref().unwrap_or("").contains("worker"),
        "{:?}",
        rs[0].reason
    );
}

#[test]
fn cgroup_rows_run_or_skip_and_leave_no_cgroup() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("run.json");
    let mut child = start(
        &doc,
        &[
            "ctx.pingpong",
            "mechanism=pipe",
            "placement=same-cpu",
            "cgroup=same,sibling",
        ],
        "quick",
    );
    let pid = child.id();
    wait(&mut child);
    for r in &results(&doc) {
        match r.status {
            Status::Ok => {
                let sibling = r.params["cgroup"] == "sibling";
                assert_eq!(
                    fact(r, "harden_cgroup_sibling"),
                    Some(f64::from(u8::from(sibling)))
                );
            }
            Status::Skipped => {
                let why = r.reason.clone().unwrap_or_default();
                assert!(why.contains("cgroup"), "{why}");
                println!("skipped: {why}");
            }
            Status::Failed => panic!("{:?}", r.reason),
        }
    }
    assert_eq!(cgroups_of(pid), Vec::<std::path::PathBuf>::new());
}

/// Waits until the run `pid` has a worker in a cgroup of its own, and returns the
/// worker's pid; None when the run ended first (its cgroup rows skipped).
fn worker_in_cgroup(child: &mut Child) -> Option<u32> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if child.try_wait().unwrap().is_some() {
            return None;
        }
        let dirs = cgroups_of(child.id());
        let made: Vec<String> = dirs
            .iter()
            .flat_map(|d| std::fs::read_dir(d).into_iter().flatten().flatten())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        for w in children_of(child.id()) {
            if made.iter().any(|m| m == &format!("w{w}-b")) {
                return Some(w);
            }
        }
        assert!(Instant::now() < deadline, "no worker made its cgroups");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_worker_killed_mid_run_leaves_no_cgroup() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("run.json");
    let args = [
        "ctx.pingpong",
        "mechanism=pipe,futex",
        "placement=same-cpu",
        "cgroup=sibling",
    ];
    let mut child = start(&doc, &args, "standard");
    let pid = child.id();
    let Some(worker) = worker_in_cgroup(&mut child) else {
        wait(&mut child);
        let rs = results(&doc);
        assert!(
            rs.iter().all(|r| r.status == Status::Skipped),
            "ended early"
        );
        return println!("skipped: {:?}", rs[0].reason);
    };
    // SAFETY-free: a signal to a process this test's child started.
    assert_eq!(syscost::os::sys::kill(worker as i32, libc::SIGKILL), 0);
    wait(&mut child);
    let rs = results(&doc);
    assert!(
        rs.iter().any(|r| r.status == Status::Failed),
        "the killed worker's instance fails"
    );
    assert_eq!(cgroups_of(pid), Vec::<std::path::PathBuf>::new());
}

#[test]
fn a_run_killed_with_its_worker_leaves_its_cgroups_to_the_next_run() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("run.json");
    let args = [
        "ctx.pingpong",
        "mechanism=pipe",
        "placement=same-cpu",
        "cgroup=sibling",
    ];
    let mut child = start(&doc, &args, "standard");
    let pid = child.id();
    let Some(worker) = worker_in_cgroup(&mut child) else {
        wait(&mut child);
        return println!("cgroup rows skipped here");
    };
    // Both at once: nothing of the run can clean up after itself.
    assert_eq!(syscost::os::sys::kill(worker as i32, libc::SIGKILL), 0);
    assert_eq!(syscost::os::sys::kill(pid as i32, libc::SIGKILL), 0);
    wait(&mut child);
    // The partner dies with the worker; give the kernel a moment to empty the groups.
    std::thread::sleep(Duration::from_millis(200));
    let left = cgroups_of(pid);
    let next = Command::new(env!("CARGO_BIN_EXE_syscost"))
        .args(["run", "syscall.getpid", "--profile", "quick", "--no-save"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(next.success());
    assert_eq!(cgroups_of(pid), Vec::<std::path::PathBuf>::new());
    println!("left by the killed run: {left:?}; removed by the next one");
}

#[test]
#[ignore = "slow: every userns, rseq and spec row; .ci/run runs it"]
fn userns_rseq_and_spec_rows_run_or_skip_with_a_reason() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("run.json");
    let mut child = start(
        &doc,
        &[
            "ctx.pingpong",
            "mechanism=pipe",
            "placement=same-cpu",
            "userns=0,1",
            "rseq=on,off",
        ],
        "quick",
    );
    wait(&mut child);
    let doc2 = dir.path().join("spec.json");
    let mut child = start(
        &doc2,
        &["syscall.getppid", "spec=none,store_bypass,both"],
        "quick",
    );
    wait(&mut child);
    for r in results(&doc).iter().chain(&results(&doc2)) {
        match r.status {
            Status::Ok => {
                if r.params.get("userns").is_some_and(|v| v == "1") {
                    assert_eq!(fact(r, "harden_pid_in_ns"), Some(1.0));
                }
                if r.params.get("rseq").is_some_and(|v| v == "off") {
                    assert!(fact(r, "harden_rseq_unregistered").is_some());
                }
            }
            Status::Skipped => {
                let why = r.reason.clone().unwrap_or_default();
                assert!(
                    ["userns=", "rseq=", "spec="]
                        .iter()
                        .any(|w| why.contains(w)),
                    "{why}"
                );
                println!("{} {:?} skipped: {why}", r.name, r.params);
            }
            Status::Failed => panic!("{} {:?}: {:?}", r.name, r.params, r.reason),
        }
    }
}
