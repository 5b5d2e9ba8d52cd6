//! The edges a newcomer meets (issue 57), run as a user runs the binary: a `--db` in a
//! directory that does not exist, errors that name the user's path in one line (no
//! temporary file, no usage text, no Rust range), a suggestion for a name a letter
//! off, counts of one in the singular, output files made as the umask says, and the
//! stored forms' rows in catalogue order. Nothing here measures: the runs come from
//! the recorded fixture (tests/fixtures/report-smoke.json).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_syscost");

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report-smoke.json")
}

fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("syscost-edges-")
        .tempdir()
        .unwrap()
}

/// Runs `syscost ARGS` with no history but the one the arguments name.
fn syscost(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env_remove("SYSCOST_DB")
        .env_remove("SYSCOST_NO_SAVE")
        .env("XDG_DATA_HOME", "/nonexistent-syscost-edges/data")
        .output()
        .expect("syscost runs")
}

/// The names of the results of the JSON document `syscost ARGS` prints, in order.
fn names_exported(args: &[&str]) -> Vec<String> {
    let doc: serde_json::Value = serde_json::from_str(&ok(args)).unwrap();
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect()
}

fn ok(args: &[&str]) -> String {
    let out = syscost(args);
    assert!(
        out.status.success(),
        "syscost {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The one line `syscost ARGS` refuses with (exit 2): it must name no temporary file,
/// hold no Rust range and run no usage text into it.
fn refusal(args: &[&str]) -> String {
    let out = syscost(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "syscost {args:?}: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "syscost {args:?}: want one line:\n{err}");
    let line = lines[0];
    assert!(line.starts_with("syscost: "), "{line}");
    for inside in [".tmp", ".syscost-", "partial", "..=", "Usage:", "usage:"] {
        assert!(
            !line.contains(inside),
            "syscost {args:?} says {inside}: {line}"
        );
    }
    line.to_string()
}

#[test]
fn a_db_in_a_missing_directory_is_refused_and_not_made() {
    let d = scratch();
    let missing = d.path().join("typo");
    let db = missing.join("h.db");
    let db = db.to_str().unwrap();
    let fixture = fixture();
    let file = fixture.to_str().unwrap();
    let out = d.path().join("r.html");
    let cases: Vec<Vec<&str>> = vec![
        vec!["run", "syscall.getpid", "--profile", "smoke", "--db", db],
        vec!["history", "--db", db],
        vec!["history", "list", "--db", db],
        vec!["history", "import", file, "--db", db],
        vec!["compare", file, file, "--db", db],
        vec!["report", file, "-o", out.to_str().unwrap(), "--db", db],
        vec!["plot", "ring", file, "--db", db],
    ];
    for args in cases {
        let line = refusal(&args);
        assert!(
            line.contains(db),
            "syscost {args:?} does not name {db}: {line}"
        );
        assert!(
            !missing.exists(),
            "syscost {args:?} made {}",
            missing.display()
        );
    }
    assert!(!out.exists());
    // The issue's own case, where the path is free to try.
    if !Path::new("/nonexistent-x").exists() {
        refusal(&["run", "syscall.getpid", "--db", "/nonexistent-x/h.db"]);
        refusal(&["history", "--db", "/nonexistent-x/h.db"]);
        assert!(!Path::new("/nonexistent-x").exists());
    }
}

#[test]
fn a_report_or_a_plot_named_for_another_format_is_refused() {
    let d = scratch();
    let fixture = fixture();
    let file = fixture.to_str().unwrap();
    for (args, named) in [
        (vec!["report", file, "-o"], "r.pdf"),
        (vec!["report", file, "-o"], "r.json"),
        (vec!["plot", "samples", file, "-o"], "p.png"),
    ] {
        let out = d.path().join(named);
        let mut args = args.clone();
        args.push(out.to_str().unwrap());
        let line = refusal(&args);
        assert!(line.contains("name the file ."), "{line}");
        assert!(!out.exists(), "syscost {args:?} wrote {named}");
    }
    // Any other name is taken as given.
    let out = d.path().join("report.htm");
    ok(&["report", file, "-o", out.to_str().unwrap()]);
    assert!(out.exists());
}

#[test]
fn run_given_a_peers_test_name_says_the_command_that_runs_it_here() {
    for (peer, bench) in [("brk2", "mem.brk"), ("lat_ctx", "ctx.ring")] {
        let line = refusal(&["run", peer]);
        let quoted = line.split('`').nth(1).unwrap_or_default();
        assert!(
            quoted.starts_with(&format!("syscost run {bench} ")),
            "{line}"
        );
        // The command it quotes runs.
        let mut args: Vec<&str> = quoted.split_whitespace().skip(1).collect();
        args.extend(["--profile", "smoke", "--no-save"]);
        ok(&args);
    }
}

#[test]
fn with_nothing_saved_every_reader_of_the_history_says_so_alike() {
    let d = scratch();
    let out = d.path().join("r.html");
    let out = out.to_str().unwrap();
    for args in [
        vec!["history", "show", "1"],
        vec!["history", "export", "1"],
        vec!["compare", "1", "2"],
        vec!["report", "1", "-o", out],
    ] {
        let line = refusal(&args);
        assert!(
            line.contains("no history at /nonexistent-syscost-edges/data/syscost/"),
            "syscost {args:?}: {line}"
        );
        assert!(!line.contains("--db /"), "syscost {args:?}: {line}");
    }
}

#[test]
fn errors_name_the_users_path_in_one_line_with_ranges_in_words() {
    let d = scratch();
    let fixture = fixture();
    let file = fixture.to_str().unwrap();
    let bad = d.path().join("no/such/dir/r.html");
    let bad = bad.to_str().unwrap();
    for args in [
        vec!["report", file, "-o", bad],
        vec!["plot", "ring", file, "-o", bad],
        vec![
            "run",
            "syscall.getpid",
            "--no-save",
            "--format",
            "json",
            "-o",
            bad,
        ],
        vec!["history", "export", file, "-o", bad],
    ] {
        let line = refusal(&args);
        assert!(line.contains(bad), "{args:?}: {line}");
    }
    let line = refusal(&["compare", "1"]);
    assert!(line.contains("only 1 was provided"), "{line}");
    for (args, want) in [
        (
            vec!["run", "syscall.getpid", "--batch", "0"],
            "1 to 1000000000",
        ),
        (
            vec!["run", "syscall.getpid", "--explain-hz", "5"],
            "100 to 100000",
        ),
        (vec!["exec", "-n", "0", "--", "true"], "1 to 100000"),
        (vec!["run", "mem.brk", "n=0", "--no-save"], "1 to "),
        (
            vec!["run", "syscall.getpid", "--cpu", "0,1"],
            "not a CPU number",
        ),
    ] {
        let line = refusal(&args);
        assert!(line.contains(want), "{args:?}: {line}");
    }
    let list = ok(&["list"]);
    let rust_range = list.as_bytes().windows(4).any(|w| {
        w[0].is_ascii_digit()
            && &w[1..3] == b".."
            && (w[3].is_ascii_digit() || w[3] == b'=')
    });
    assert!(!rust_range, "syscost list shows a Rust range");
}

#[test]
fn a_name_a_letter_off_is_suggested() {
    let line = refusal(&["run", "syscall.getpd", "--no-save"]);
    assert!(line.contains("did you mean syscall.getpid?"), "{line}");
    let line = refusal(&["list", "syscall.getpd"]);
    assert!(line.contains("did you mean syscall.getpid?"), "{line}");
    let line = refusal(&["run", "file.read", "siz=4k", "--no-save"]);
    assert!(line.contains("did you mean size?"), "{line}");
    let fixture = fixture();
    let file = fixture.to_str().unwrap();
    let line = refusal(&["plot", "samples", file, "--bench", "syscall.getpd"]);
    assert!(line.contains("did you mean syscall.getpid?"), "{line}");
    let line = refusal(&["run", "qqqqqqqqqqqq", "--no-save"]);
    assert!(!line.contains("did you mean"), "{line}");
}

#[test]
fn a_report_is_made_as_the_umask_says() {
    use std::os::unix::fs::PermissionsExt;
    let d = scratch();
    let fixture = fixture();
    for (umask, want) in [("022", 0o644), ("077", 0o600)] {
        let out = d.path().join(format!("r{umask}.html"));
        let status = Command::new("sh")
            .arg("-c")
            .arg(format!("umask {umask}; exec \"$0\" \"$@\""))
            .arg(BIN)
            .arg("report")
            .arg(&fixture)
            .arg("-o")
            .arg(&out)
            .status()
            .unwrap();
        assert!(status.success());
        let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, want, "umask {umask}: mode {mode:o}");
    }
}

/// The fixture with only its first `n` results, and those in reverse order.
fn cut_fixture(dir: &Path, n: usize) -> PathBuf {
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    let results = doc["results"].as_array_mut().unwrap();
    results.truncate(n);
    results.reverse();
    let p = dir.join(format!("first-{n}.json"));
    std::fs::write(&p, serde_json::to_string(&doc).unwrap()).unwrap();
    p
}

#[test]
fn one_result_is_counted_in_the_singular() {
    let d = scratch();
    let one = cut_fixture(d.path(), 1);
    let text = ok(&["history", "show", one.to_str().unwrap()]);
    assert!(text.contains("1 result:"), "{text}");
    assert!(!text.contains("1 results"), "{text}");
}

/// The benchmarks in the order `syscost list` gives them.
fn catalogue() -> Vec<String> {
    ok(&["list"])
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

/// Whether `names` follow the catalogue's order (a benchmark's rows together).
fn in_catalogue_order(names: &[String], catalogue: &[String]) -> bool {
    let at: Vec<usize> = names
        .iter()
        .map(|n| {
            catalogue
                .iter()
                .position(|c| c == n)
                .expect("a catalogue name")
        })
        .collect();
    at.windows(2).all(|w| w[0] <= w[1])
}

#[test]
fn stored_and_exported_forms_keep_the_catalogue_order() {
    let d = scratch();
    let catalogue = catalogue();
    // The recorded run concluded file.read before ipc.rtt, against the catalogue's
    // order; shown reversed, every row is out of it.
    let reversed = cut_fixture(d.path(), usize::MAX);
    for file in [fixture(), reversed] {
        let file = file.to_str().unwrap();
        let names = names_exported(&["history", "export", file]);
        assert!(in_catalogue_order(&names, &catalogue), "{file}: {names:?}");
        // The table `history show` prints: each benchmark's first row, in order.
        let text = ok(&["history", "show", file]);
        let first_line = |n: &str| {
            text.lines()
                .position(|l| {
                    l.split_whitespace().next().map(|w| w.trim_end_matches(':'))
                        == Some(n)
                })
                .unwrap_or_else(|| panic!("no row of {n} in:\n{text}"))
        };
        let mut firsts: Vec<(usize, String)> =
            names.iter().map(|n| (first_line(n), n.clone())).collect();
        firsts.sort();
        firsts.dedup_by(|a, b| a.1 == b.1);
        let shown: Vec<String> = firsts.into_iter().map(|(_, n)| n).collect();
        assert!(
            in_catalogue_order(&shown, &catalogue),
            "{file}: {shown:?}\n{text}"
        );
        // Imported, the history keeps it.
        let db = d.path().join("h.db");
        let db = db.to_str().unwrap();
        ok(&["history", "import", file, "--db", db]);
        let names = names_exported(&["history", "export", "last", "--db", db]);
        assert!(in_catalogue_order(&names, &catalogue), "{names:?}");
    }
}

#[test]
fn a_short_commands_user_and_system_time_carry_their_caveat() {
    let out = syscost(&["exec", "--", "true"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "note: user and system: the kernel measures the CPU time but splits it"
        ),
        "{err}"
    );
}
