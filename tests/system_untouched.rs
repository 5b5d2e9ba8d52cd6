//! A whole smoke run of the catalogue leaves the machine as it found it: every
//! writable setting under /proc/sys (and transparent huge pages), the system clock,
//! and the nice value, scheduling policy and real-time priority of every other
//! process are the same after the run as before it.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

/// Settings the kernel itself moves while anything runs.
const VOLATILE: &[&str] = &["/proc/sys/kernel/ns_last_pid"];

fn settings() -> BTreeMap<String, String> {
    fn walk(dir: &Path, out: &mut BTreeMap<String, String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                walk(&path, out);
            } else if meta.permissions().mode() & 0o200 != 0 {
                let key = path.display().to_string();
                if VOLATILE.contains(&key.as_str()) {
                    continue;
                }
                if let Ok(v) = std::fs::read_to_string(&path) {
                    out.insert(key, v);
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(Path::new("/proc/sys"), &mut out);
    for p in [
        "/sys/kernel/mm/transparent_hugepage/enabled",
        "/sys/kernel/mm/transparent_hugepage/defrag",
    ] {
        if let Ok(v) = std::fs::read_to_string(p) {
            out.insert(p.to_string(), v);
        }
    }
    out
}

/// (pid, start time) → (nice, policy, real-time priority) of every process.
fn priorities() -> BTreeMap<(u32, u64), (i64, u64, u64)> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the command name, which may hold spaces: state is field 3.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        let field = |n: usize| f.get(n - 3).and_then(|v| v.parse::<i64>().ok());
        if let (Some(nice), Some(start), Some(rt), Some(policy)) =
            (field(19), field(22), field(40), field(41))
        {
            out.insert((pid, start as u64), (nice, policy as u64, rt as u64));
        }
    }
    out
}

/// CLOCK_REALTIME − CLOCK_MONOTONIC, ns: jumps if anyone sets the clock.
fn clock_offset() -> i128 {
    let real = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i128;
    let ts = syscost::os::sys::clock_gettime(libc::CLOCK_MONOTONIC);
    real - (ts.tv_sec as i128 * 1_000_000_000 + ts.tv_nsec as i128)
}

#[test]
#[ignore = "slow: a whole run; .ci/run runs it"]
fn a_whole_run_changes_no_setting_clock_or_priority() {
    let settings_before = settings();
    let prio_before = priorities();
    let offset_before = clock_offset();
    let scratch = tempfile::Builder::new()
        .prefix("syscost-untouched-")
        .tempdir()
        .unwrap();
    let dir = scratch.path();
    let out = Command::new(env!("CARGO_BIN_EXE_syscost"))
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
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let offset_after = clock_offset();
    let settings_after = settings();
    let prio_after = priorities();

    assert!(
        settings_before.len() > 100,
        "read only {} settings",
        settings_before.len()
    );
    let changed: Vec<String> = settings_before
        .iter()
        .filter(|(k, v)| settings_after.get(*k) != Some(*v))
        .map(|(k, v)| format!("{k}: {v:?} -> {:?}", settings_after.get(k)))
        .collect();
    assert!(
        changed.is_empty(),
        "settings changed:\n{}",
        changed.join("\n")
    );

    // NTP may slew the clock by at most 500 ppm: a few ms over a run; setting it moves
    // it by whatever was set.
    let moved_ms = (offset_after - offset_before).abs() as f64 / 1e6;
    assert!(
        moved_ms < 100.0,
        "the system clock moved by {moved_ms} ms against CLOCK_MONOTONIC"
    );

    let mut compared = 0;
    let mut moved = Vec::new();
    for (k, before) in &prio_before {
        if let Some(after) = prio_after.get(k) {
            compared += 1;
            if after != before {
                moved.push(format!("pid {}: {before:?} -> {after:?}", k.0));
            }
        }
    }
    assert!(compared > 0);
    assert!(
        moved.is_empty(),
        "other processes' priorities changed:\n{}",
        moved.join("\n")
    );
    println!(
        "{} settings, {compared} processes and the clock unchanged by a whole run",
        settings_before.len()
    );
}
