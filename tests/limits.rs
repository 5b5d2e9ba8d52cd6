//! Limits and refusals: a smoke run of the catalogue under each limit a real machine
//! may impose — resource limits lowered, a cgroup's pids limit, a read-only, full,
//! missing or tmpfs `--dir`, a full temporary directory, system calls refused the way a
//! container's seccomp profile refuses them (io_uring, perf_event_open, real-time
//! scheduling, System V IPC), no /dev/shm, and a normal user instead of root.
//!
//! Under each, every benchmark must be measured, skipped with a one-line reason, or
//! failed with one; the run must end on its own with exit code 0 or 1 (a usage error
//! with 2 and one line), never a panic or a signal; and nothing may be left in its
//! temporary directory. Conditions this machine cannot set up (not root, no C compiler
//! for the seccomp wrapper, no cgroup pids controller) are printed as skipped.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A run that takes longer than this under a limit counts as hung.
const HANG: Duration = Duration::from_secs(600);

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let p = std::env::temp_dir()
            .join(format!("syscost-limits-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        // Open to the normal user of the unprivileged conditions, as /tmp is.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o1777)).unwrap();
        Scratch(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        .unwrap_or(false)
}

/// Compiles tests/support/deny.c (a seccomp wrapper) into `dir`.
fn deny_tool(dir: &Path) -> Result<PathBuf, String> {
    let out = dir.join("deny");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/deny.c");
    let r = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&out)
        .arg(&src)
        .output()
        .map_err(|e| format!("no C compiler: {e}"))?;
    if !r.status.success() {
        return Err(format!("cc failed: {}", String::from_utf8_lossy(&r.stderr)));
    }
    Ok(out)
}

/// What one condition's run did.
struct Outcome {
    code: Option<i32>,
    signal: Option<i32>,
    core: Option<PathBuf>,
    stderr: String,
    doc: Option<serde_json::Value>,
}

/// Runs `prefix… syscost run --profile smoke <args> -o DOC` with TMPDIR set to `tmp`.
fn run_under(prefix: &[String], args: &[&str], tmp: &Path, doc: &Path) -> Outcome {
    let bin = env!("CARGO_BIN_EXE_syscost");
    // A crash leaves a core file (core_pattern "core" on most machines) in the
    // scratch directory the run starts in, for the failure message to point at.
    let mut argv: Vec<String> = ["prlimit", "--core=unlimited", "--"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    argv.extend(prefix.iter().cloned());
    argv.push(bin.to_string());
    argv.extend(
        [
            "run",
            "--profile",
            "smoke",
            "--no-save",
            "--format",
            "json",
            "-o",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    argv.push(doc.display().to_string());
    argv.extend(args.iter().map(|s| s.to_string()));
    let start = Instant::now();
    let cwd = doc.parent().expect("the document's directory");
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(cwd)
        .env("TMPDIR", tmp)
        .env("SYSCOST_NO_SAVE", "1")
        .output()
        .expect("the run starts");
    assert!(
        start.elapsed() < HANG,
        "{argv:?} took {:?}",
        start.elapsed()
    );
    let doc = std::fs::read(doc)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    use std::os::unix::process::ExitStatusExt;
    let core = std::fs::read_dir(cwd).ok().and_then(|d| {
        d.flatten().map(|e| e.path()).find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("core"))
        })
    });
    Outcome {
        code: out.status.code(),
        signal: out.status.signal(),
        core,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        doc,
    }
}

/// Checks one condition's outcome; returns its problems and a one-line summary.
fn judge(name: &str, o: &Outcome, tmp: &Path) -> (Vec<String>, String) {
    let mut problems = Vec::new();
    if o.stderr.contains("panicked") {
        problems.push(format!("{name}: panicked: {}", o.stderr));
    }
    match o.code {
        Some(0) | Some(1) => {}
        Some(2) => {
            let lines: Vec<&str> = o
                .stderr
                .lines()
                .filter(|l| !l.starts_with("warning:"))
                .collect();
            if lines.len() != 1 {
                problems.push(format!(
                    "{name}: a usage error in {} lines: {lines:?}",
                    lines.len()
                ));
            }
        }
        other => {
            // Keep a core file, if the crash left one, where the next person can find it.
            let kept = o.core.as_ref().and_then(|c| {
                let to = std::env::temp_dir().join(format!(
                    "syscost-limits-core-{}-{}",
                    std::process::id(),
                    name.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
                ));
                std::fs::rename(c, &to).ok().map(|()| to)
            });
            problems.push(format!(
                "{name}: exit {other:?} (signal {:?}; core {kept:?}): {}",
                o.signal, o.stderr
            ))
        }
    }
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    if let Some(doc) = &o.doc {
        for r in doc["results"].as_array().into_iter().flatten() {
            let status = r["status"].as_str().unwrap_or("?").to_string();
            if status != "ok" {
                let reason = r["reason"].as_str().unwrap_or("");
                if reason.trim().is_empty() || reason.contains('\n') {
                    problems.push(format!(
                        "{name}: {} {status} without a one-line reason: {reason:?}",
                        r["name"]
                    ));
                }
            }
            *counts.entry(status).or_insert(0) += 1;
        }
    } else if o.code != Some(2) {
        problems.push(format!(
            "{name}: no valid -o document (exit {:?}): {}",
            o.code, o.stderr
        ));
    }
    let left: Vec<String> = std::fs::read_dir(tmp)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    if !left.is_empty() {
        problems.push(format!("{name}: left in the temporary directory: {left:?}"));
    }
    let summary = format!("{name}: exit {:?}, {counts:?}", o.code);
    (problems, summary)
}

/// A condition: its name, the command prefix that sets it up (or why it cannot be set
/// up here), and the run's arguments.
type Condition = (String, Result<Vec<String>, String>, Vec<String>);

/// A cgroup (v1 pids controller or v2) with `pids.max`, removed when dropped.
struct PidsCgroup(PathBuf);

impl PidsCgroup {
    fn new(max: u32) -> Result<PidsCgroup, String> {
        for base in [
            "/sys/fs/cgroup/pids",
            "/sys/fs/cgroup/unified",
            "/sys/fs/cgroup",
        ] {
            let dir =
                Path::new(base).join(format!("syscost-limits-{}", std::process::id()));
            if std::fs::create_dir(&dir).is_ok() {
                if std::fs::write(dir.join("pids.max"), max.to_string()).is_ok() {
                    return Ok(PidsCgroup(dir));
                }
                let _ = std::fs::remove_dir(&dir);
            }
        }
        Err("no writable cgroup with a pids controller".into())
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
#[ignore = "slow: the catalogue under each limit; .ci/run runs it"]
fn every_limit_gives_a_skip_or_an_error_line_never_a_panic_or_leftover() {
    let root = is_root();
    let tools = Scratch::new("tools");
    let deny = deny_tool(&tools.0);
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<String>>();
    let deny_prefix = |nrs: &str, errno: i32| -> Option<Vec<String>> {
        deny.as_ref()
            .ok()
            .map(|d| vec![d.display().to_string(), nrs.to_string(), errno.to_string()])
    };
    // (name, command prefix or why the condition cannot be set up, run arguments)
    let mut conditions: Vec<Condition> = vec![
        (
            "RLIMIT_NOFILE 24".into(),
            Ok(s(&["prlimit", "--nofile=24", "--"])),
            vec![],
        ),
        (
            "RLIMIT_AS 1 GiB".into(),
            Ok(s(&["prlimit", "--as=1073741824", "--"])),
            vec![],
        ),
        (
            "RLIMIT_MEMLOCK 0".into(),
            Ok(s(&["prlimit", "--memlock=0", "--"])),
            vec![],
        ),
        (
            "--dir missing".into(),
            Ok(vec![]),
            s(&["--dir", "/nonexistent/syscost-dir", "file.*"]),
        ),
    ];
    let nonroot = |extra: &[&str]| -> Result<Vec<String>, String> {
        if !root {
            return Err("not root: cannot switch to another user".into());
        }
        let mut v = s(&[
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
        ]);
        v.extend(s(extra));
        Ok(v)
    };
    conditions.push(("a normal user".into(), nonroot(&[]), vec![]));
    conditions.push((
        "a normal user, RLIMIT_NPROC 40".into(),
        nonroot(&["prlimit", "--nproc=40", "--"]),
        vec![],
    ));
    let seccomp = |name: &str, nrs: &str, errno: i32| {
        (
            name.to_string(),
            deny_prefix(nrs, errno).ok_or_else(|| deny.as_ref().unwrap_err().clone()),
            vec![],
        )
    };
    // x86_64 numbers: io_uring_setup 425; perf_event_open 298; sched_setscheduler 144,
    // sched_setattr 314, sched_setparam 142; msgget 68, shmget 29, semget 64.
    conditions.push(seccomp("io_uring refused", "425", libc::EPERM));
    conditions.push(seccomp("perf_event_open refused", "298", libc::EACCES));
    conditions.push(seccomp(
        "real-time priority refused",
        "144,314,142",
        libc::EPERM,
    ));
    conditions.push(seccomp("System V IPC at zero", "68,29,64", libc::ENOSPC));
    let mount_ns = |script: &str| -> Result<Vec<String>, String> {
        if !root {
            return Err("not root: cannot mount".into());
        }
        Ok(s(&[
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            script,
            "sh",
        ]))
    };
    // `sh -c SCRIPT sh CMD…`: the script sets up the mount, then execs "$@".
    let rd = Scratch::new("ro");
    let full = Scratch::new("full");
    let tmpfs = Scratch::new("tmpfs");
    conditions.push((
        "--dir read-only".into(),
        mount_ns(&format!(
            "mount -t tmpfs -o ro,size=1m none '{}' && exec \"$@\"",
            rd.0.display()
        )),
        s(&[
            "--dir",
            &rd.0.display().to_string(),
            "file.*",
            "mem.fault.file",
        ]),
    ));
    conditions.push((
        "--dir full".into(),
        mount_ns(&format!(
            "mount -t tmpfs -o size=64k none '{}' && exec \"$@\"",
            full.0.display()
        )),
        s(&[
            "--dir",
            &full.0.display().to_string(),
            "file.*",
            "mem.fault.file",
        ]),
    ));
    conditions.push((
        "--dir on tmpfs".into(),
        mount_ns(&format!(
            "mount -t tmpfs -o size=1g none '{}' && exec \"$@\"",
            tmpfs.0.display()
        )),
        s(&[
            "--dir",
            &tmpfs.0.display().to_string(),
            "file.*",
            "mem.fault.file",
        ]),
    ));
    conditions.push((
        "no /dev/shm".into(),
        mount_ns("mount -t tmpfs -o ro,size=4k none /dev/shm && exec \"$@\""),
        vec![],
    ));
    let cgroup = if root {
        PidsCgroup::new(24)
    } else {
        Err("not root".into())
    };
    conditions.push((
        "a cgroup with pids.max 24".into(),
        cgroup
            .as_ref()
            .map(|c| {
                s(&[
                    "sh",
                    "-c",
                    &format!("echo $$ > '{}/cgroup.procs' && exec \"$@\"", c.0.display()),
                    "sh",
                ])
            })
            .map_err(|e| e.clone()),
        vec![],
    ));

    // Two lanes run at once (a smoke run keeps about one CPU busy): both conditions of
    // the normal user share a lane, as RLIMIT_NPROC counts every process of its user.
    let mut lanes: [Vec<&Condition>; 2] = [Vec::new(), Vec::new()];
    let (user, other): (Vec<_>, Vec<_>) = conditions
        .iter()
        .partition(|c| c.0.starts_with("a normal user"));
    lanes[0].extend(user);
    for c in other {
        let lane = usize::from(lanes[1].len() < lanes[0].len());
        lanes[lane].push(c);
    }
    let mut problems: Vec<String> = std::thread::scope(|scope| {
        let running: Vec<_> = lanes
            .iter()
            .enumerate()
            .map(|(lane, conditions)| {
                scope.spawn(move || {
                    let mut problems = Vec::new();
                    for (i, (name, prefix, args)) in conditions.iter().enumerate() {
                        let prefix = match prefix {
                            Ok(p) => p,
                            Err(why) => {
                                println!("SKIPPED {name}: {why}");
                                continue;
                            }
                        };
                        // The temporary directory is small for one condition: "the
                        // temporary directory full" rides along with the missing --dir
                        // (which never gets that far).
                        let tmp = Scratch::new(&format!("tmp{lane}-{i}"));
                        let out = Scratch::new(&format!("out{lane}-{i}"));
                        let args: Vec<&str> = args.iter().map(String::as_str).collect();
                        let o = run_under(prefix, &args, &tmp.0, &out.0.join("run.json"));
                        let (p, summary) = judge(name, &o, &tmp.0);
                        println!("{summary}");
                        problems.extend(p);
                    }
                    problems
                })
            })
            .collect();
        running
            .into_iter()
            .flat_map(|r| r.join().expect("a lane of the test panicked"))
            .collect()
    });
    // The temporary directory full: TMPDIR on a 64 KiB tmpfs.
    if root {
        let tmp = Scratch::new("tmpfull");
        let out = Scratch::new("out2");
        let prefix = mount_ns(&format!(
            "mount -t tmpfs -o size=64k none '{}' && exec \"$@\"",
            tmp.0.display()
        ))
        .unwrap();
        let o = run_under(
            &prefix,
            &["file.*", "mem.*", "ipc.*", "svc.*"],
            &tmp.0,
            &out.0.join("run.json"),
        );
        let (p, summary) = judge("the temporary directory full", &o, &tmp.0);
        println!("{summary}");
        problems.extend(p);
    } else {
        println!("SKIPPED the temporary directory full: not root");
    }
    drop(cgroup);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
