//! `syscost trace` end to end: a C program linked against libsyscost_trace.a recorded
//! with the kernel's events, then shown, reduced and exported; and the refusals (a
//! command that does not exist, a bad spec, a file that is not a trace, a normal user
//! without the privilege for kernel events).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SYSCOST: &str = env!("CARGO_BIN_EXE_syscost");

struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir()
            .join(format!("syscost-trace-cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o1777)).unwrap();
        Dir(d)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A C program that names its events, times 2000 getppid calls between `begin` and
/// `end`, and sleeps 1 ms ten times between `nap` and `woke`; or None (printed) when
/// there is no C compiler.
fn napper(dir: &Path) -> Option<PathBuf> {
    // Built beside the binary by an explicit build of the crate, or in deps/ when
    // cargo builds it as a dependency of the tool.
    let bin_dir = Path::new(SYSCOST).parent().unwrap();
    let lib = [
        bin_dir.join("libsyscost_trace.a"),
        bin_dir.join("deps/libsyscost_trace.a"),
    ]
    .into_iter()
    .find(|p| p.exists())
    .unwrap_or_else(|| panic!("libsyscost_trace.a was not built beside {SYSCOST}"));
    let src = dir.join("napper.c");
    std::fs::write(
        &src,
        r#"
#include <time.h>
#include <unistd.h>
#include <syscost_trace.h>
int main(void) {
    if (sct_open_env() != 1) return 3;
    sct_name(1, "begin"); sct_name(2, "end"); sct_name(3, "nap"); sct_name(4, "woke");
    for (int i = 0; i < 2000; i++) { sct_record(1, i); getppid(); sct_record(2, i); }
    for (int i = 0; i < 10; i++) {
        struct timespec t = {0, 1000000};
        sct_record(3, i); nanosleep(&t, 0); sct_record(4, i);
    }
    return sct_close(0) == 0 ? 0 : 4;
}
"#,
    )
    .unwrap();
    let exe = dir.join("napper");
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let cc = match Command::new("cc")
        .arg("-O2")
        .arg("-I")
        .arg(include)
        .arg(&src)
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&exe)
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            println!("SKIPPED: no C compiler: {e}");
            return None;
        }
    };
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    Some(exe)
}

fn syscost(args: &[&str]) -> Output {
    Command::new(SYSCOST)
        .args(args)
        .env("SYSCOST_NO_SAVE", "1")
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn one_line(o: &Output) -> String {
    let e = text(&o.stderr);
    let lines: Vec<&str> = e.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "want one line:\n{e}");
    assert!(!e.contains("panicked"));
    lines[0].to_string()
}

#[test]
fn a_program_is_recorded_shown_reduced_and_exported_with_the_kernels_events() {
    let dir = Dir::new("e2e");
    let Some(exe) = napper(&dir.0) else { return };
    let trace = dir.0.join("nap.trace");
    let t = trace.to_str().unwrap();
    let rec = syscost(&["trace", "record", "-o", t, "--", exe.to_str().unwrap()]);
    let err = text(&rec.stderr);
    assert_eq!(rec.status.code(), Some(0), "{err}");
    let kernel = !err.contains("kernel events unavailable");
    if !kernel {
        println!("kernel events not recorded here: {err}");
    }

    // show: the header and the events, filtered.
    let show = syscost(&["trace", "show", t, "--event", "nap", "--format", "json"]);
    assert!(show.status.success(), "{}", text(&show.stderr));
    let naps: Vec<serde_json::Value> = text(&show.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(naps.len(), 10);
    assert!(naps
        .iter()
        .all(|e| e["name"] == "nap" && e["source"] == "user"));
    assert!(naps
        .windows(2)
        .all(|w| w[0]["ts"].as_u64() <= w[1]["ts"].as_u64()));
    let head = syscost(&["trace", "show", t, "--limit", "5"]);
    let out = text(&head.stdout);
    assert!(
        out.contains("clock CLOCK_MONOTONIC_RAW")
            && out.contains("user events 4020 (0 lost)"),
        "{out}"
    );

    // reduce: the nap intervals hold the program's switches when the kernel's events
    // were recorded, so none of them is clean.
    let red = syscost(&[
        "trace",
        "reduce",
        t,
        "--format",
        "json",
        "--spec",
        "interval call = begin -> end; interval nap = nap -> woke",
    ]);
    assert!(red.status.success(), "{}", text(&red.stderr));
    let r: serde_json::Value = serde_json::from_str(&text(&red.stdout)).unwrap();
    let call = &r["intervals"][0];
    let nap = &r["intervals"][1];
    assert_eq!(call["all"]["n"], 2000);
    assert_eq!(nap["all"]["n"], 10);
    let median = nap["all"]["median_ns"].as_f64().unwrap();
    assert!(
        median > 1e6 && median < 1e9,
        "a 1 ms sleep took {median} ns"
    );
    assert!(r["event_cost_ns"].as_f64().unwrap() > 0.0);
    if kernel {
        assert!(r["culling"].as_bool().unwrap());
        assert_eq!(
            nap["culled_by"]["switch"], 10,
            "every nap shows its switch: {nap}"
        );
        assert!(nap["clean"].is_null());
    }

    // export: both formats, written whole.
    for (format, file) in [("perfetto", "nap.pftrace"), ("chrome-json", "nap.json")] {
        let out = dir.0.join(file);
        let e = syscost(&[
            "trace",
            "export",
            t,
            "--format",
            format,
            "-o",
            out.to_str().unwrap(),
            "--spec",
            "interval nap = nap -> woke",
        ]);
        assert!(e.status.success(), "{}", text(&e.stderr));
        assert!(std::fs::metadata(&out).unwrap().len() > 100);
    }
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.0.join("nap.json")).unwrap()).unwrap();
    let slices = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["name"] == "nap")
        .count();
    assert_eq!(slices, 10);
}

#[test]
fn refusals_are_one_line_and_leave_nothing() {
    let dir = Dir::new("refuse");
    let out = dir.0.join("x.trace");
    let o = out.to_str().unwrap();
    let r = syscost(&[
        "trace",
        "record",
        "-o",
        o,
        "--kernel",
        "none",
        "--",
        "/no/such/program",
    ]);
    assert_eq!(r.status.code(), Some(127));
    assert!(one_line(&r).contains("not found"));
    assert!(!out.exists());
    let r = syscost(&[
        "trace",
        "record",
        "-o",
        o,
        "--kernel",
        "timer,bogus",
        "--",
        "true",
    ]);
    assert_eq!(r.status.code(), Some(2));
    assert!(one_line(&r).contains("--kernel"));
    // A command that traces nothing still gives a file (the kernel's events, if any).
    let r = syscost(&["trace", "record", "-o", o, "--kernel", "none", "--", "true"]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    let r = syscost(&["trace", "reduce", o, "--spec", "interval a = nope -> 2"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(one_line(&r).contains("no event is named 'nope'"));
    let not_a_trace = dir.0.join("readme.txt");
    std::fs::write(&not_a_trace, "hello").unwrap();
    for cmd in ["show", "reduce"] {
        let r = syscost(&[
            "trace",
            cmd,
            not_a_trace.to_str().unwrap(),
            "--spec",
            "interval a = 1 -> 2",
        ]);
        let r = if cmd == "show" {
            syscost(&["trace", "show", not_a_trace.to_str().unwrap()])
        } else {
            r
        };
        assert_eq!(r.status.code(), Some(2), "{cmd}");
        assert!(one_line(&r).contains("not a syscost trace"), "{cmd}");
    }
    let r = syscost(&["trace", "show", o, "--from", "soon"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(one_line(&r).contains("--from"));
    let left: Vec<_> = std::fs::read_dir(&dir.0)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left.len(), 2, "only the trace and the text file: {left:?}");
}

#[test]
fn without_the_privilege_kernel_events_are_refused_in_one_line_and_user_events_still_recorded(
) {
    let is_root = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"));
    if !is_root {
        println!("SKIPPED: not root, so there is no privilege to drop");
        return;
    }
    let dir = Dir::new("nopriv");
    let Some(exe) = napper(&dir.0) else { return };
    let trace = dir.0.join("user.trace");
    let r = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            SYSCOST,
            "trace",
            "record",
            "-o",
        ])
        .arg(&trace)
        .arg("--")
        .arg(&exe)
        .env("SYSCOST_NO_SAVE", "1")
        .output();
    let Ok(r) = r else {
        println!("SKIPPED: setpriv is not installed");
        return;
    };
    let err = text(&r.stderr);
    assert_eq!(r.status.code(), Some(0), "{err}");
    let refusal: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("kernel events unavailable"))
        .collect();
    assert_eq!(refusal.len(), 1, "one line says why: {err}");
    assert!(refusal[0].contains("not permitted"), "{}", refusal[0]);
    let show = syscost(&["trace", "show", trace.to_str().unwrap(), "--limit", "1"]);
    assert!(
        text(&show.stdout).contains("user events 4020 (0 lost)"),
        "{}",
        text(&show.stdout)
    );
}
