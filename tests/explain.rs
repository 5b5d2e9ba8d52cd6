//! `syscost explain` end to end: the JSON document's explanation against the schema
//! mirror and its invariants (self times add up to the median, groups in order, frames
//! named), the folded stacks as flame-graph tools read them (inferno when it is
//! installed, else an independent parse of the format), the partner of a ping-pong
//! covered, the flame graph and the comparison of two explained runs, and the refusal
//! without the right to sample the kernel. Sampling the kernel needs root (or
//! CAP_PERFMON, or kernel.perf_event_paranoid ≤ 1): without it these tests say why they
//! skip and pass. No test asserts a time.

mod schema;

use schema::{parse_strict, ExplainGroup, Run};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_syscost");

/// Why the kernel cannot be sampled here, if it cannot.
fn cannot_sample() -> Option<String> {
    // SAFETY-free: reading our own effective uid from /proc.
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let root = status
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(2))
        == Some("0");
    let paranoid: i32 = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(4);
    if !root && paranoid > 1 {
        return Some(format!(
            "not root and kernel.perf_event_paranoid is {paranoid}: kernel sampling refused"
        ));
    }
    if !Path::new("/proc/sys/kernel/perf_event_paranoid").exists() {
        return Some("no perf_event_open in this kernel".into());
    }
    None
}

fn syscost(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("SYSCOST_DB", "/nonexistent/never-written.db")
        .output()
        .expect("syscost runs")
}

fn ok(args: &[&str]) -> String {
    let out = syscost(args);
    assert!(
        out.status.success(),
        "syscost {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn scratch(name: &str) -> PathBuf {
    let d =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("syscost-explain-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("a scratch directory");
    d
}

fn explain_json(args: &[&str]) -> (String, Run) {
    let mut all = vec!["explain"];
    all.extend(args);
    all.extend(["--profile", "smoke", "--no-save", "--format", "json"]);
    let text = ok(&all);
    let run: Run = parse_strict(&text);
    (text, run)
}

#[test]
fn getpid_is_explained_with_named_functions_that_add_up_to_the_median() {
    if let Some(why) = cannot_sample() {
        eprintln!("skipped: {why}");
        return;
    }
    let (_, run) = explain_json(&["syscall.getpid.raw"]);
    let r = &run.results[0];
    let e = r.explain.as_ref().expect("an explanation");
    assert!(e.kernel, "root samples the kernel: {:?}", e.notes);
    assert!(e.samples > 0 && e.operations > 0);
    assert!(e.named >= 0.9, "named {}", e.named);
    let sum: f64 = e.functions.iter().map(|f| f.self_ns).sum();
    assert!(
        (sum / e.median_ns - 1.0).abs() < 1e-6,
        "{sum} vs {}",
        e.median_ns
    );
    let groups: Vec<&ExplainGroup> =
        e.groups.iter().filter_map(|g| g.group.as_ref()).collect();
    assert_eq!(
        groups,
        [
            &ExplainGroup::User,
            &ExplainGroup::Entry,
            &ExplainGroup::Mitigations,
            &ExplainGroup::Body,
            &ExplainGroup::Scheduler,
            &ExplainGroup::Interrupts
        ]
    );
    assert!(
        e.functions
            .iter()
            .any(|f| f.kernel && f.name.contains("getpid")),
        "the call's own function is named"
    );
    for f in &e.functions {
        assert!(
            f.self_low_ns <= f.self_ns && f.self_ns <= f.self_high_ns,
            "{f:?}"
        );
        assert!(f.total_ns + 1e-9 >= f.self_ns, "{f:?}");
    }
    assert!(
        e.unsampled_median_ns.is_some(),
        "the unsampled round is kept"
    );
    assert!(e.sampled_ns_per_op.is_some_and(|s| s > 0.0));
}

/// Parses folded stacks independently: `frame;frame;... count` per line.
fn check_folded(text: &str) -> u64 {
    let mut total = 0;
    for line in text.lines() {
        let (stack, n) = line.rsplit_once(' ').expect("a count after a space");
        total += n.parse::<u64>().expect("a count");
        assert!(stack.split(';').all(|f| !f.is_empty()), "{line}");
        assert!(!line.contains('\t'), "{line}");
    }
    total
}

#[test]
fn folded_stacks_are_read_by_a_flame_graph_tool() {
    if let Some(why) = cannot_sample() {
        eprintln!("skipped: {why}");
        return;
    }
    let dir = scratch("folded");
    let folded = dir.join("getpid.folded");
    let f = folded.to_str().unwrap();
    ok(&[
        "explain",
        "syscall.getpid.raw",
        "--profile",
        "smoke",
        "--no-save",
        "--format",
        "folded",
        "-o",
        f,
    ]);
    let text = std::fs::read_to_string(&folded).unwrap();
    assert!(check_folded(&text) > 0);
    assert!(text.lines().all(|l| l.starts_with("syscall.getpid.raw;")));
    assert!(text.contains("_[k]"), "kernel frames are marked");
    let inferno = ["inferno-flamegraph", "/root/.cargo/bin/inferno-flamegraph"]
        .into_iter()
        .find(|p| {
            Command::new(p)
                .arg("--help")
                .output()
                .is_ok_and(|o| o.status.success())
        });
    match inferno {
        Some(tool) => {
            let out = Command::new(tool).arg(&folded).output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let svg = String::from_utf8_lossy(&out.stdout);
            assert!(
                svg.contains("<svg") && svg.contains("do_syscall_64"),
                "inferno drew it"
            );
        }
        None => eprintln!(
            "inferno-flamegraph is not installed: the format was parsed here only"
        ),
    }
}

#[test]
fn a_pingpong_partner_is_sampled_and_the_switch_is_named() {
    if let Some(why) = cannot_sample() {
        eprintln!("skipped: {why}");
        return;
    }
    let (_, run) = explain_json(&[
        "ctx.pingpong",
        "mechanism=pipe",
        "placement=same-cpu",
        "kind=process",
    ]);
    let e = run.results[0].explain.as_ref().expect("an explanation");
    assert!(e.samples_other_tasks > 0, "the partner process is covered");
    assert!(e.stacks.iter().any(|s| !s.measuring));
    for want in ["__schedule", "pipe_read", "pipe_write"] {
        assert!(
            e.functions
                .iter()
                .any(|f| f.kernel && f.name.contains(want)),
            "{want} missing"
        );
    }
    let sched = e
        .groups
        .iter()
        .find(|g| g.group == Some(ExplainGroup::Scheduler))
        .unwrap();
    assert!(sched.self_samples > 0);
}

#[test]
#[ignore = "slow: two explained runs; .ci/run runs it"]
fn two_explained_runs_compare_by_function_and_plot_as_flame_graphs() {
    if let Some(why) = cannot_sample() {
        eprintln!("skipped: {why}");
        return;
    }
    let dir = scratch("compare");
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    for p in [&a, &b] {
        let (text, _) = explain_json(&["syscall.getpid.raw"]);
        std::fs::write(p, text).unwrap();
    }
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let text = ok(&["compare", a, b]);
    assert!(text.contains("where syscall.getpid.raw changed"), "{text}");
    assert!(text.contains("mitigations"), "{text}");
    let svg = ok(&["plot", "flame", a]);
    assert!(
        svg.starts_with("<svg") && svg.contains("ns per call"),
        "{svg}"
    );
    let html = dir.join("r.html");
    ok(&["report", a, "-o", html.to_str().unwrap()]);
    let html = std::fs::read_to_string(html).unwrap();
    assert!(
        html.contains("where syscall.getpid.raw&#39;s time goes")
            || html.contains("where syscall.getpid.raw")
    );
    // The history keeps the explanation: exported, drawn and folded again.
    let db = dir.join("history.db");
    let db = db.to_str().unwrap();
    ok(&[
        "explain",
        "syscall.getpid.raw",
        "--profile",
        "smoke",
        "--db",
        db,
        "-o",
        "/dev/null",
    ]);
    let doc = ok(&["history", "export", "last", "--db", db]);
    let saved: Run = parse_strict(&doc);
    assert!(saved.results[0]
        .explain
        .as_ref()
        .is_some_and(|e| e.samples > 0));
    assert!(ok(&["plot", "flame", "last", "--db", db]).starts_with("<svg"));
    let folded = ok(&["history", "show", "last", "--db", db, "--format", "folded"]);
    assert!(check_folded(&folded) > 0);
    // A run never explained has no flame graph, and says what to do.
    let plain = dir.join("plain.json");
    let text = ok(&[
        "run",
        "call.empty",
        "--profile",
        "smoke",
        "--no-save",
        "--format",
        "json",
    ]);
    std::fs::write(&plain, text).unwrap();
    let out = syscost(&["plot", "flame", plain.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("syscost explain"));
}

#[test]
fn without_the_right_to_sample_the_kernel_one_line_says_what_is_needed() {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|s| s.trim().parse::<i32>().ok());
    let setpriv = Path::new("/usr/bin/setpriv");
    if cannot_sample().is_some() || paranoid.is_none_or(|p| p < 2) || !setpriv.exists() {
        eprintln!("skipped: needs root (to become nobody with setpriv) and perf_event_paranoid ≥ 2");
        return;
    }
    let out = Command::new(setpriv)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(BIN)
        .args([
            "explain",
            "syscall.getpid.raw",
            "--profile",
            "smoke",
            "--no-save",
            "--format",
            "json",
        ])
        .env("SYSCOST_DB", "/nonexistent/never-written.db")
        .env("TMPDIR", "/tmp")
        .output()
        .unwrap();
    if out.status.code() == Some(126)
        || String::from_utf8_lossy(&out.stderr).contains("Permission denied")
    {
        eprintln!("skipped: nobody cannot run {BIN}");
        return;
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run: Run = parse_strict(&String::from_utf8_lossy(&out.stdout));
    let e = run.results[0]
        .explain
        .as_ref()
        .expect("an explanation of user space");
    assert!(!e.kernel);
    assert_eq!(e.notes.len(), 1, "{:?}", e.notes);
    for word in ["root", "CAP_PERFMON", "perf_event_paranoid"] {
        assert!(e.notes[0].contains(word), "{}", e.notes[0]);
    }
    assert!(
        e.stacks.iter().all(|s| s.kernel.is_empty()),
        "user frames only"
    );
    assert!(e.samples > 0, "the user side is still sampled");
}

#[test]
fn explain_without_a_benchmark_is_a_usage_error_naming_what_to_give() {
    for args in [&["explain"][..], &["explain", "n=1"][..]] {
        let out = syscost(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("syscost explain syscall.getpid"), "{err}");
    }
}

#[test]
fn the_skid_check_splits_a_known_iteration() {
    if let Some(why) = cannot_sample() {
        eprintln!("skipped: {why}");
        return;
    }
    let text = ok(&["explain", "--skid"]);
    for want in [
        "skid check (",
        "spin:",
        "known",
        "user code after the syscall",
        "kernel:",
    ] {
        assert!(text.contains(want), "{want} missing from\n{text}");
    }
    let samples: u64 = text
        .split(" samples")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("a sample count");
    assert!(samples > 0, "{text}");
}
