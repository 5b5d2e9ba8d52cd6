//! `syscost run … --reference NAME=VALUE`, through the binary: the paired row's ratio in
//! the JSON document (checked against the schema mirror) and under the row in the
//! table, and a bad reference refused in one line. Sanity ranges only, never speed.

mod schema;

use schema::{parse_strict, Run};
use std::process::Command;

struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn syscost(args: &[&str]) -> Out {
    let out = Command::new(env!("CARGO_BIN_EXE_syscost"))
        .args(args)
        .env("SYSCOST_NO_SAVE", "1")
        .output()
        .expect("run syscost");
    Out {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into(),
        stderr: String::from_utf8_lossy(&out.stderr).into(),
    }
}

const PIPE: &[&str] = &[
    "run",
    "ipc.pipe.self",
    "-p",
    "via=libc,raw",
    "share=one-fifo",
    "--profile",
    "smoke",
];

#[test]
fn the_other_value_carries_its_ratio_to_the_reference() {
    let mut args = PIPE.to_vec();
    args.extend(["--reference", "via=libc", "--format", "json"]);
    let out = syscost(&args);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let run: Run = parse_strict(&out.stdout);
    assert_eq!(run.results.len(), 2);
    for r in &run.results {
        let m = r.measured.as_ref().expect("measured");
        let via = r.params["via"].as_str();
        match (via, &m.paired) {
            ("libc", None) => {}
            ("raw", Some(p)) => {
                assert_eq!(p.reference, "via=libc");
                assert!(p.ratio_low <= p.ratio && p.ratio <= p.ratio_high, "{p:?}");
                assert!(p.diff_low_ns <= p.diff_ns && p.diff_ns <= p.diff_high_ns);
                // A sanity range: the two paths cost the same order of time.
                assert!((0.2..5.0).contains(&p.ratio), "{p:?}");
                assert!(p.rounds >= 1 && p.pairs >= p.rounds, "{p:?}");
                assert_eq!(p.round_ratios.len() as u64, p.rounds);
                assert_eq!(p.sides, "thread");
            }
            other => panic!("via={via}: {other:?}"),
        }
    }
}

#[test]
fn the_table_shows_the_ratio_under_its_row() {
    let mut args = PIPE.to_vec();
    args.extend(["--reference", "via=libc"]);
    let out = syscost(&args);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let line = out
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("paired:"))
        .unwrap_or_else(|| panic!("no paired line:\n{}", out.stdout));
    assert!(
        line.contains("× [") && line.contains("vs via=libc"),
        "{line}"
    );
}

#[test]
fn a_bad_reference_is_refused_in_one_line() {
    for (reference, says) in [
        ("vai=libc", "no selected benchmark takes a parameter 'vai'"),
        ("share=one-fifo", "'share' is not swept"),
        (
            "via=vdso",
            "vdso is not among the swept values of via (libc, raw)",
        ),
        ("via", "NAME=VALUE"),
    ] {
        let mut args = PIPE.to_vec();
        args.extend(["--reference", reference]);
        let out = syscost(&args);
        assert_eq!(out.code, Some(2), "--reference {reference}: {}", out.stderr);
        assert_eq!(out.stdout, "");
        let lines: Vec<&str> = out.stderr.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(lines.len(), 1, "{}", out.stderr);
        assert!(
            lines[0].contains(says),
            "--reference {reference}: {}",
            lines[0]
        );
    }
}

/// The workers (and the processes they forked) whose run is `run_pid`: a worker's
/// command line is `syscost __worker FD RUN_PID`, and a paired side forked from one
/// keeps it.
fn workers_of(run_pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let words: Vec<&[u8]> = cmd.split(|&b| b == 0).collect();
        let is_ours = words.iter().any(|w| *w == b"__worker")
            && words.last().is_some_and(|w| w.is_empty())
            && words
                .iter()
                .rev()
                .nth(1)
                .is_some_and(|w| *w == run_pid.to_string().as_bytes());
        if is_ours {
            found.push(pid);
        }
    }
    found
}

#[test]
fn a_side_bound_to_its_process_is_paired_in_processes_of_their_own() {
    let child = Command::new(env!("CARGO_BIN_EXE_syscost"))
        .args([
            "run",
            "syscall.getppid",
            "-p",
            "userns=0,1",
            "--reference",
            "userns=0",
            "--profile",
            "smoke",
            "--format",
            "json",
        ])
        .env("SYSCOST_NO_SAVE", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run syscost");
    let run_pid = child.id();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let run: Run = parse_strict(&String::from_utf8_lossy(&out.stdout));
    let hardened = run
        .results
        .iter()
        .find(|r| r.params["userns"] == "1")
        .expect("the userns=1 row");
    match hardened.measured.as_ref().and_then(|m| m.paired.as_ref()) {
        Some(p) => {
            assert_eq!(p.reference, "userns=0");
            assert_eq!(p.sides, "processes");
            assert!(p.ratio_low <= p.ratio && p.ratio <= p.ratio_high, "{p:?}");
            // A sanity range: getppid costs the same order of time in a namespace.
            assert!((0.2..5.0).contains(&p.ratio), "{p:?}");
            assert!(p.rounds >= 1 && p.pairs >= p.rounds, "{p:?}");
        }
        // A kernel that refuses user namespaces skips the row, and says why.
        None => assert!(
            hardened
                .reason
                .as_deref()
                .is_some_and(|w| w.contains("userns=")),
            "neither paired nor skipped with the reason: {:?}; {stderr}",
            hardened.reason
        ),
    }
    // Every side's process was reaped, the namespace's pid 1 with its parent.
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(workers_of(run_pid), Vec::<u32>::new());
}

#[test]
fn a_pair_of_file_reads_gets_the_run_s_scratch_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = syscost(&[
        "run",
        "file.read",
        "-p",
        "method=read,pread",
        "size=8",
        "cache=warm",
        "--reference",
        "method=read",
        "--profile",
        "smoke",
        "--dir",
        dir.path().to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        !out.stderr.contains("not measured in pairs"),
        "{}",
        out.stderr
    );
    let run: Run = parse_strict(&out.stdout);
    let pread = run
        .results
        .iter()
        .find(|r| r.params["method"] == "pread")
        .expect("the pread row");
    let p = pread
        .measured
        .as_ref()
        .and_then(|m| m.paired.as_ref())
        .expect("paired against read");
    assert!((0.2..5.0).contains(&p.ratio), "{p:?}");
    // The scratch file is the run's, and went with it.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
