//! will-it-scale's tests as benchmarks (issue 56), through the binary: each new
//! benchmark runs in the smoke profile, alone and as two copies (processes and
//! threads), with every `share=` its peer tests use; each figure is sane (above zero,
//! below a millisecond); nothing is left in the scratch directory or in the copies'
//! directories; and `syscost list` names the peers' tests. Sanity ranges only, never
//! speed.

mod schema;

use schema::{parse_strict, Run, Status};
use std::collections::BTreeSet;
use std::process::Command;

fn syscost(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_syscost"))
        .args(args)
        .output()
        .expect("run syscost");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// The copies' directories in /dev/shm now.
fn copies_dirs() -> BTreeSet<String> {
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("syscost-"))
                .collect()
        })
        .unwrap_or_default()
}

/// Runs `args` in the smoke profile with the scratch directory `dir` and checks every
/// result: measured with a sane figure, or skipped for O_DIRECT where the file system
/// refuses it.
fn sane(dir: &std::path::Path, args: &[&str]) -> usize {
    let d = dir.to_str().unwrap();
    let mut all = vec!["run", "--profile", "smoke", "--no-save", "--format", "json"];
    all.extend(["--dir", d]);
    all.extend(args);
    let (code, stdout, stderr) = syscost(&all);
    assert_eq!(code, Some(0), "syscost {args:?}:\n{stderr}");
    let run: Run = parse_strict(&stdout);
    assert!(!run.results.is_empty(), "{args:?}");
    for r in &run.results {
        let what = format!("{} {:?}", r.name, r.params);
        match r.status {
            Status::Ok => {}
            Status::Skipped => {
                let why = r.reason.as_deref().unwrap_or("");
                assert!(why.contains("O_DIRECT"), "{what}: skipped: {why}");
                continue;
            }
            Status::Failed => panic!("{what}: failed: {:?}", r.reason),
        }
        let m = r.measured.as_ref().expect("measured");
        let ns = m.copies.as_ref().map_or(m.median_ns, |c| c.per_copy_ns);
        // A sanity range, not a speed: every one of these is a few system calls or
        // page faults.
        assert!(ns > 0.0 && ns < 1e6, "{what}: {ns} ns");
        assert!(r.entry.is_some() || r.name == "sync.sem", "{what}: entry");
    }
    run.results.len()
}

#[test]
#[ignore = "slow: every new benchmark, alone and as copies; .ci/run runs it"]
fn every_new_benchmark_runs_alone_and_as_copies_and_leaves_nothing() {
    let scratch = tempfile::Builder::new()
        .prefix("syscost-peers-test-")
        .tempdir()
        .unwrap();
    let dir = scratch.path();
    let before = copies_dirs();
    let three = "share=file-per-copy,one-file,page-per-copy";
    let two = "share=file-per-copy,one-file";
    let runs: &[&[&str]] = &[
        &["file.pread", "file.pwrite", three, "copies=1,2"],
        &["file.readseek", "file.writeseek", three, "copies=2"],
        &["file.readseq", "file.lseek", "file.lock", two, "copies=1,2"],
        &["file.readseq", "direct=yes"],
        &[
            "file.writeseq",
            "file.fallocate",
            "dir=tmpfs,scratch",
            "copies=2",
        ],
        &["file.unlink", "share=one-dir,dir-per-copy", "copies=1,2"],
        &[
            "mem.tlb_flush",
            "mem.fault.private",
            "mem.malloc",
            "size=1m",
            "copies=1,2",
            "copies_as=thread",
        ],
        &["mem.mmap_file"],
        &["svc.epoll.ctl", "process=single-threaded,multi-threaded"],
        &[
            "mem.fault.zero",
            "mem.fault.shm",
            "size=1m",
            "unmap=untimed,timed",
        ],
        &["mem.malloc", "size=1k,128m"],
        // page_fault3's file on the scratch directory's file system, shared through
        // the round's directory by copies in processes of their own.
        &["mem.fault.shm", "size=1m", "dir=scratch", two, "copies=1,2"],
        // poll1-2: files with no poll method, as processes of their own.
        &["syscall.poll.file", "copies=1,2"],
        // lat_fs's pass: N files in directories of 100.
        &["file.create", "file.delete", "size=0,1k", "files=300"],
        // will-it-scale's sync.* (perf bench's sync.futex.* have waiter threads of
        // their own and are not meant as copies).
        &[
            "sync.mutex",
            "sync.sem",
            "sync.futex",
            "sync.yield",
            "sync.eventfd",
            "ipc.unix.self",
            "copies=2",
            "copies_as=thread,process",
        ],
        &[
            "sync.mutex",
            "share=one-mutex,mutex-per-copy",
            "update=none,global,local,tls",
        ],
    ];
    for args in runs {
        sane(dir, args);
    }
    let left: Vec<_> = std::fs::read_dir(dir).unwrap().collect();
    assert!(left.is_empty(), "left in the scratch directory: {left:?}");
    // Another syscost on the machine may hold a copies' directory for a moment: one of
    // ours would stay.
    let mut new: Vec<String> = Vec::new();
    for _ in 0..20 {
        new = copies_dirs().difference(&before).cloned().collect();
        if new.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    assert!(new.is_empty(), "left in /dev/shm: {new:?}");
}

#[test]
fn list_names_the_peers_tests_and_says_the_new_ones_run_when_named() {
    let (code, stdout, _) = syscost(&["list", "tlb_flush2"]);
    assert_eq!(code, Some(0));
    assert!(stdout.contains("mem.tlb_flush"), "{stdout}");
    assert!(
        stdout.contains("like: will-it-scale tlb_flush1 (map=file-private size=128m)"),
        "{stdout}"
    );
    assert!(stdout.contains("run: only when named"), "{stdout}");
    let (code, stdout, _) = syscost(&["list", "sync"]);
    assert_eq!(code, Some(0));
    assert!(
        stdout.contains("pthread_mutex1") && stdout.contains("futex4"),
        "{stdout}"
    );
}

/// lmbench lat_usleep's itimer loop, as `method=itimer-periodic` times it: each batch's
/// timer is disarmed at its end, so the worker ends, and every period lasts at least
/// the `us` asked (a sanity range, not a speed).
#[test]
fn the_periodic_itimer_ends_each_batch_and_lasts_its_period() {
    let (code, stdout, stderr) = syscost(&[
        "run",
        "svc.usleep",
        "method=itimer-periodic",
        "us=100",
        "--profile",
        "smoke",
        "--no-save",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let run: Run = parse_strict(&stdout);
    assert_eq!(run.results.len(), 1);
    let r = &run.results[0];
    assert!(matches!(r.status, Status::Ok), "{:?}", r.reason);
    let ns = r.measured.as_ref().expect("measured").median_ns;
    assert!((90e3..100e6).contains(&ns), "{ns} ns");
}
