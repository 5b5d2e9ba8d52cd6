//! syscost signals only processes it created: a whole smoke run of the catalogue under
//! `strace -f`, with every signal-sending system call's target checked against the
//! processes and threads the run itself created (and syscost's own process).
//!
//! strace stops only on the system calls it is asked for (`--seccomp-bpf`), so the run
//! keeps its pace. Without strace, or where ptrace is not allowed, the test says it
//! skipped and why.

use std::collections::BTreeSet;
use std::process::Command;

const TRACED: &str = "trace=kill,tkill,tgkill,rt_sigqueueinfo,rt_tgsigqueueinfo,\
                      pidfd_send_signal,clone,clone3,fork,vfork";

fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("syscost-signal-targets-")
        .tempdir()
        .unwrap()
}

/// The first integer argument of a call in an strace line (`kill(123, SIGUSR1)`).
fn args_of(line: &str, call: &str) -> Option<Vec<i64>> {
    let start = line.find(&format!("{call}("))? + call.len() + 1;
    let rest = &line[start..];
    let end = rest.find(')')?;
    Some(
        rest[..end]
            .split(',')
            .map(|a| a.trim().parse::<i64>().unwrap_or(i64::MIN))
            .collect(),
    )
}

#[test]
#[ignore = "slow: the whole catalogue under strace; .ci/run runs it"]
fn every_signal_goes_to_a_process_the_run_created() {
    if Command::new("strace").arg("-V").output().is_err() {
        println!("SKIPPED: strace is not installed (.ci/run installs it where it can)");
        return;
    }
    let scratch = temp_dir();
    let dir = scratch.path();
    let log = dir.join("strace.log");
    let out = Command::new("strace")
        .args([
            "-f",
            "--seccomp-bpf",
            "-qq",
            "-e",
            TRACED,
            "-e",
            "signal=none",
            "-o",
        ])
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_syscost"))
        .args([
            "run",
            "--profile",
            "smoke",
            "--no-save",
            "--format",
            "json",
            "-o",
        ])
        .arg(dir.join("run.json"))
        .env("SYSCOST_NO_SAVE", "1")
        .output()
        .expect("strace runs");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if text.is_empty()
        && (stderr.contains("ptrace")
            || stderr.contains("PTRACE")
            || stderr.contains("seccomp"))
    {
        println!(
            "SKIPPED: strace cannot trace here: {}",
            stderr.lines().next().unwrap_or("")
        );
        return;
    }
    assert!(
        out.status.success(),
        "the smoke run under strace failed: {stderr}"
    );

    let (checked, created, bad) = check(&text);
    println!(
        "{checked} signal-sending calls, to {} processes and threads the run created",
        created
    );
    assert!(
        checked > 0,
        "the smoke run sent no signal at all: the trace saw nothing"
    );
    assert!(
        bad.is_empty(),
        "signals to processes the run did not create:\n{}",
        bad.join("\n")
    );
}

/// Checks an `strace -f` log: the signal-sending calls seen, the processes and threads
/// created, and the calls whose target the run did not create (or that is ≤ 0).
fn check(text: &str) -> (usize, usize, Vec<String>) {
    let pid_of = |line: &str| -> i64 {
        line.split_whitespace()
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or(-1)
    };
    let root = pid_of(text.lines().next().expect("strace logged something"));
    // First every process and thread the run created: with -f, a child's first calls
    // can be logged before the line where its parent's clone returns.
    let creates = |line: &&str| ["clone", "fork"].iter().any(|c| line.contains(c));
    let mut ours: BTreeSet<i64> = BTreeSet::from([root]);
    for line in text.lines().filter(creates) {
        // `clone(...) = 1234` or `<... clone3 resumed>...) = 1234`.
        if let Some(ret) = line
            .rsplit("= ")
            .next()
            .and_then(|r| r.trim().parse::<i64>().ok())
        {
            if ret > 0 {
                ours.insert(ret);
            }
        }
    }
    let mut checked = 0;
    let mut bad = Vec::new();
    for line in text.lines() {
        let caller = pid_of(line);
        if creates(&line) {
            continue;
        }
        let targets: Vec<i64> = if let Some(a) = args_of(line, "kill") {
            vec![a[0]]
        } else if let Some(a) = args_of(line, "tkill") {
            vec![a[0]]
        } else if let Some(a) = args_of(line, "tgkill") {
            vec![a[0], a[1]]
        } else if let Some(a) = args_of(line, "rt_sigqueueinfo") {
            vec![a[0]]
        } else if let Some(a) = args_of(line, "rt_tgsigqueueinfo") {
            vec![a[0], a[1]]
        } else if line.contains("pidfd_send_signal(") {
            bad.push(format!("untracked pidfd signal: {line}"));
            continue;
        } else {
            continue;
        };
        checked += 1;
        if !ours.contains(&caller) {
            bad.push(format!("sent by a process the run did not create: {line}"));
        }
        for t in targets {
            if t <= 0 || !ours.contains(&t) {
                bad.push(line.to_string());
            }
        }
    }
    (checked, ours.len() - 1, bad)
}

#[test]
fn the_check_catches_a_stranger_and_a_group() {
    let log = "100 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID) = 101\n\
               101 kill(100, SIGUSR1) = 0\n\
               100 tgkill(101, 101, SIGUSR2) = 0\n\
               100 kill(1, SIGTERM) = 0\n\
               100 kill(-101, SIGKILL) = 0\n\
               100 <... clone3 resumed>, 88) = 102\n\
               100 rt_sigqueueinfo(102, SIGRTMIN, {si_signo=SIGRTMIN}) = 0\n\
               103 kill(100, SIGUSR1) = 0\n\
               100 <... clone resumed>) = 103\n\
               999 kill(100, SIGUSR1) = 0\n";
    let (checked, created, bad) = check(log);
    // 103's call, logged before its parent's clone returns, is still its own.
    assert_eq!((checked, created), (7, 3));
    assert_eq!(bad.len(), 3, "{bad:?}");
    assert!(bad[0].contains("kill(1,") && bad[1].contains("kill(-101,"));
    assert!(bad[2].contains("not create: 999 kill"), "{bad:?}");
}
