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
