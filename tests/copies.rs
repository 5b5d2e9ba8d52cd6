//! `copies=N`: benchmarks run as N concurrent copies (processes or threads), through
//! the binary: the JSON document follows the schema mirror with the copies and the
//! scaling table, the text and CSV formats show them, a benchmark that cannot run as
//! copies refuses in one line, and no copy is left behind. Sanity ranges only, never
//! speed.

mod schema;

use schema::{parse_strict, Run};
use std::process::Command;

struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// The tests take turns: one checks that no copies' directory is left, which another
/// test's run would hold for a moment.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn syscost(args: &[&str]) -> Out {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = Command::new(env!("CARGO_BIN_EXE_syscost"))
        .args(args)
        .output()
        .expect("run syscost");
    Out {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into(),
        stderr: String::from_utf8_lossy(&out.stderr).into(),
    }
}

fn success(args: &[&str]) -> Out {
    let out = syscost(args);
    assert_eq!(out.code, Some(0), "syscost {args:?}:\n{}", out.stderr);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    out
}

fn smoke(benches: &[&str], more: &[&str]) -> Out {
    let mut args = vec!["run", "--profile", "smoke", "--no-save"];
    args.extend(benches);
    args.extend(more);
    success(&args)
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[test]
fn copies_follow_the_schema_with_their_scaling_table() {
    for mode in ["process", "thread"] {
        let as_ = format!("copies_as={mode}");
        let out = smoke(
            &["syscall.getppid", "copies=1,2", &as_],
            &["--format", "json"],
        );
        let run: Run = parse_strict(&out.stdout);
        assert_eq!(run.results.len(), 2);
        for r in &run.results {
            let m = r.measured.as_ref().expect("measured");
            let c = m.copies.as_ref().expect("copies figures");
            assert_eq!(c.mode, mode);
            assert_eq!(c.copy_ns.len() as u64, c.n);
            assert_eq!(r.params.get("copies"), Some(&c.n.to_string()));
            for x in c.copy_ns.iter().chain([&c.per_copy_ns, &c.slowest_ns]) {
                assert!(*x > 0.0 && *x < 1e6, "{mode}: {x}");
            }
            assert!(c.slowest_ns >= c.per_copy_ns);
            assert!(c.throughput_ops_s > 1e3 && c.throughput_ops_s < 1e10);
            if c.n == 2 {
                assert_eq!(c.cpus.len(), 2);
                assert_eq!(c.oversubscribed, cpus() < 2);
                if cpus() >= 2 {
                    assert_ne!(c.cpus[0], c.cpus[1], "one CPU each");
                }
            }
        }
        assert_eq!(run.scaling.len(), 1);
        let t = &run.scaling[0];
        assert_eq!(t.fixed.get("copies_as").map(String::as_str), Some(mode));
        let ns: Vec<u64> = t.points.iter().map(|p| p.n).collect();
        assert_eq!(ns, [1, 2]);
        assert_eq!(t.points[0].efficiency, Some(1.0));
        // A sanity range: two copies do between nothing and three copies' work.
        let e = t.points[1].efficiency.expect("efficiency");
        assert!(e > 0.05 && e < 1.5, "{e}");
        assert!(t.fit.is_none());
        assert!(t.no_fit.as_deref().unwrap().contains("needs 3 points"));
    }
}

#[test]
fn each_copy_keeps_its_own_figure_over_rounds() {
    // Over several rounds, the copies' figures are each copy's own samples analysed
    // alone, not the row's figure repeated, and the CPUs are the copies'.
    let out = success(&[
        "run",
        "syscall.getppid",
        "copies=2",
        "--profile",
        "quick",
        "--no-save",
        "--format",
        "json",
    ]);
    let run: Run = parse_strict(&out.stdout);
    let m = run.results[0].measured.as_ref().expect("measured");
    assert!(m.rounds.len() >= 3, "{}", m.rounds.len());
    let c = m.copies.as_ref().expect("copies figures");
    assert_eq!(c.copy_ns.len(), 2);
    // Two copies' own figures differ; the row's repeated would not.
    assert_ne!(c.copy_ns[0], c.copy_ns[1], "{}", m.median_ns);
    assert_eq!(c.cpus.len(), 2);
}

#[test]
fn oversubscribed_points_are_labelled_and_left_out_of_the_fit() {
    let over = (cpus() + 1).to_string();
    let sweep = format!("copies=1,{over}");
    let out = smoke(
        &["syscall.getppid", &sweep, "copies_as=thread"],
        &["--format", "json"],
    );
    let run: Run = parse_strict(&out.stdout);
    let t = &run.scaling[0];
    let last = t.points.last().unwrap();
    assert!(last.oversubscribed, "{last:?}");
    assert!(t
        .no_fit
        .as_deref()
        .unwrap()
        .contains("oversubscribed left out"));
}

#[test]
fn text_and_csv_show_copies() {
    // The scaling table by default; each copy's figures in the note that --verbose
    // prints under the row.
    let plain = smoke(&["syscall.getppid", "copies=1,2"], &[]);
    assert!(
        plain.stdout.contains("scaling syscall.getppid"),
        "{}",
        plain.stdout
    );
    assert!(plain.stdout.contains("efficiency"), "{}", plain.stdout);
    let out = smoke(&["syscall.getppid", "copies=1,2"], &["--verbose"]);
    assert!(
        out.stdout.contains("scaling syscall.getppid"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("2 copies (processes)"),
        "{}",
        out.stdout
    );
    let csv = smoke(&["syscall.getppid", "copies=2"], &["--format", "csv"]).stdout;
    let header = csv.lines().next().unwrap();
    assert!(header.contains("copies,per_copy_ns,slowest_copy_ns,throughput_ops_s"));
    let row = csv.lines().nth(1).unwrap();
    assert!(row.contains(",2,"), "{row}");
}

#[test]
fn a_benchmark_that_cannot_run_as_copies_refuses_in_one_line() {
    for args in [
        &["run", "ctx.ring", "copies=2"][..],
        &["run", "ipc.rtt", "-p", "copies=1,2"],
        &["run", "syscall.getppid", "copies_as=thread"],
        &["run", "ctx", "copies=2"],
    ] {
        let out = syscost(args);
        assert_eq!(out.code, Some(2), "{args:?}: {}", out.stderr);
        let lines: Vec<&str> = out.stderr.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(lines.len(), 1, "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty());
    }
    // In a selection where some can, copies apply to those (as any parameter applies
    // to the benchmarks that take it), and the others run as they are.
    let out = smoke(
        &["syscall.getppid", "ctx.pingpong", "copies=2"],
        &[
            "-p",
            "mechanism=pipe",
            "-p",
            "placement=same-cpu",
            "--format",
            "json",
        ],
    );
    let run: Run = parse_strict(&out.stdout);
    for r in &run.results {
        let copies = r.measured.as_ref().and_then(|m| m.copies.as_ref());
        assert_eq!(copies.is_some(), r.name == "syscall.getppid", "{}", r.name);
    }
    let list = success(&["list", "ctx.ring", "syscall.getppid"]).stdout;
    assert!(list.contains("copies: no"), "{list}");
    assert!(list.contains("copies=1  (1 to 256; run N copies"), "{list}");
}

#[test]
fn shared_and_private_variants_run_as_copies() {
    let out = smoke(
        &[
            "file.open_close",
            "mem.fault.shm",
            "ipc.pipe.self",
            "copies=2",
        ],
        &["--format", "json"],
    );
    let run: Run = parse_strict(&out.stdout);
    let shares: Vec<&str> = run
        .results
        .iter()
        .map(|r| r.params.get("share").map(String::as_str).unwrap_or(""))
        .collect();
    assert_eq!(
        shares,
        // In catalogue order: ipc, mem, file.
        [
            "one-fifo",
            "pipe-per-copy",
            "one-file",
            "file-per-copy",
            "one-file",
            "file-per-copy"
        ]
    );
    for r in &run.results {
        assert!(r.measured.is_some(), "{} {:?}", r.name, r.reason);
    }
    // The copies' directory is gone (looked at in this test's turn).
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let left: Vec<_> = std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| {
                    n.starts_with("syscost-copies-") || n.starts_with("syscost-share-")
                })
                .collect()
        })
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn the_scaling_plot_draws_a_copies_run_and_says_what_it_needs_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("run.json");
    let doc = doc.to_str().unwrap();
    smoke(
        &["syscall.getppid", "copies=1,2"],
        &["--format", "json", "-o", doc],
    );
    let svg = success(&["plot", "scaling", doc]).stdout;
    assert!(
        svg.starts_with("<svg") && svg.contains("Efficiency"),
        "{svg}"
    );
    let plain = dir.path().join("plain.json");
    let plain = plain.to_str().unwrap();
    smoke(&["syscall.getppid"], &["--format", "json", "-o", plain]);
    let out = syscost(&["plot", "scaling", plain]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("copies=1,2,4"), "{}", out.stderr);
}
