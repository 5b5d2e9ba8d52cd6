//! `git bisect run` driven by `syscost compare --fail-on-regression`, over small test
//! repositories whose commits change a wrapper that runs the measurement: from one
//! commit on, under a real kernel-side cost (a seccomp filter every system call pays,
//! tests/support/cost.c), at one commit on a "kernel" that lacks a system call (its
//! benchmark cannot run: tests/support/deny.c), and, in another repository, with a
//! damaged history (the tool fails). The bisect must end on the first costly commit,
//! skip the commit the gate says 125 for, and stop where the gate says 128.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Compiles `tests/support/{name}.c` into `dir`.
fn tool(dir: &Path, name: &str) -> PathBuf {
    let out = dir.join(name);
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/support/{name}.c"));
    let r = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&out)
        .arg(&src)
        .output()
        .expect("a C compiler (cc), as Rust's linker needs");
    assert!(
        r.status.success(),
        "cc {name}.c: {}",
        String::from_utf8_lossy(&r.stderr)
    );
    out
}

/// Whether git can be run; CI installs it, so there its absence fails the test.
fn have_git() -> bool {
    let ok = Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "git is missing on CI: .ci/run installs it"
        );
        eprintln!("skipped: no git here (CI installs it)");
    }
    ok
}

/// Runs git in `repo`, panicking with its output on failure; returns standard output.
fn git(repo: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "advice.detachedHead=false",
        ])
        .args(args)
        .output()
        .expect("git");
    assert!(
        o.status.success(),
        "git {args:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The selection each step measures, and how: two rows, three quick runs.
const RUN: &str =
    "run syscall.getppid syscall.mseal --profile quick --runs 3 --no-samples";

/// A repository whose commit i has `measure.sh` = `wrappers[i]` (a command line that
/// ends in "$@"); returns the commits' ids, oldest first.
fn repo(dir: &Path, wrappers: &[String]) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q"]);
    let mut ids = Vec::new();
    for (i, w) in wrappers.iter().enumerate() {
        let path = dir.join("measure.sh");
        std::fs::write(&path, format!("#!/bin/sh\n# commit {i}\nexec {w} \"$@\"\n"))
            .unwrap();
        Command::new("chmod").arg("+x").arg(&path).status().unwrap();
        git(dir, &["add", "measure.sh"]);
        git(dir, &["commit", "-q", "-m", &format!("commit {i}")]);
        ids.push(git(dir, &["rev-parse", "HEAD"]).trim().to_string());
    }
    ids
}

/// The script `git bisect run` runs at each commit: measure the commit's runs with its
/// own wrapper under a label of its own, then let the gate decide against the good
/// runs. Only the gate's code is returned: 0 good, 1 bad, 125 skip, 128 abort.
fn step_script(dir: &Path, bin: &str, db: &Path) -> PathBuf {
    let path = dir.join("step.sh");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\n\
             c=$(git rev-parse --short HEAD)\n\
             ./measure.sh {bin} {RUN} --label commit=$c --db {db} >/dev/null 2>&1\n\
             exec {bin} compare label:side=good label:commit=$c --db {db} \
             --fail-on-regression 100 >/dev/null\n",
            db = db.display()
        ),
    )
    .unwrap();
    Command::new("chmod").arg("+x").arg(&path).status().unwrap();
    path
}

/// `git bisect start BAD GOOD` then `git bisect run STEP` in `repo`: whether the run
/// ended well, and all it said.
fn bisect(repo: &Path, bad: &str, good: &str, step: &Path) -> (bool, String) {
    git(repo, &["bisect", "start", bad, good]);
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["bisect", "run"])
        .arg(step)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned()
        + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), said)
}

#[test]
#[ignore = "slow: a bisect measuring at each commit; .ci/run runs it"]
fn git_bisect_run_finds_the_first_costly_commit_skips_and_aborts_where_the_gate_says() {
    if !have_git() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_syscost");
    let cost = tool(tmp.path(), "cost");
    let deny = tool(tmp.path(), "deny");
    let db = tmp.path().join("history.db");
    // The good side, measured once, as a bisect's known-good build would be.
    let good = Command::new(&cost)
        .arg("0")
        .arg(bin)
        .args(RUN.split(' '))
        .args(["--label", "side=good", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        good.status.success(),
        "{}",
        String::from_utf8_lossy(&good.stderr)
    );

    // Commits 0-5 cost nothing; 6-8 run under a filter of 4,000 instructions (a
    // getppid here about 3 times as long, measured by a C loop: past the gate's 100%,
    // so that a noisy machine cannot blur a good commit into a bad one or back); 4 is
    // a kernel without mseal (ENOSYS, 38), whose benchmark cannot run: the gate says 125.
    let plain = format!("{} 0", cost.display());
    let costly = format!("{} 4000", cost.display());
    let lacking = format!("{} 462 38 {plain}", deny.display());
    let mut wrappers = vec![plain.clone(); 6];
    wrappers[4] = lacking;
    wrappers.extend(vec![costly; 3]);
    let dir = tmp.path().join("repo");
    let ids = repo(&dir, &wrappers);
    let step = step_script(tmp.path(), bin, &db);
    let (ok, said) = bisect(&dir, &ids[8], &ids[0], &step);
    let log = git(&dir, &["bisect", "log"]);
    assert!(ok, "{said}\n{log}");
    assert!(
        said.contains(&format!("{} is the first bad commit", ids[6])),
        "{said}\n{log}"
    );
    // The first step is commit 4 (the middle of 1-7), which the gate skipped.
    assert!(log.contains(&format!("# skip: [{}]", ids[4])), "{log}");
    git(&dir, &["bisect", "reset"]);

    // A history the tool cannot read: the gate exits 128 and the bisect stops.
    let junk = tmp.path().join("junk.db");
    std::fs::write(&junk, b"not a history").unwrap();
    let dir = tmp.path().join("broken");
    let ids = repo(&dir, &vec![plain; 4]);
    let steps = tmp.path().join("broken-steps");
    std::fs::create_dir_all(&steps).unwrap();
    let step = step_script(&steps, bin, &junk);
    let (ok, said) = bisect(&dir, &ids[3], &ids[0], &step);
    assert!(!ok, "{said}");
    assert!(said.contains("128"), "{said}");
    assert!(!said.contains("is the first bad commit"), "{said}");
}
