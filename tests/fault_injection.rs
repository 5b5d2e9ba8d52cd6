//! Faults at random moments: `syscost run` on every family (and `repro`) is sent
//! SIGINT, SIGTERM, SIGHUP or SIGKILL at a random moment; after each trial nothing of
//! the run may remain — no process, no temporary file, no POSIX message queue, no
//! System V queue, segment or semaphore set, no mount — and the `-o` JSON file, when
//! there is one, must be a valid document that says whether it is complete. Exit
//! codes follow the shell's convention (130, 143, 129; killed by signal 9).
//!
//! `cargo test` runs [`DEFAULT_TRIALS`] trials; `scripts/faults.py` runs hundreds by
//! setting `SYSCOST_FAULT_TRIALS` (and `SYSCOST_FAULT_SEED`), and reads the summary
//! line the test prints.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use syscost::os::{sys, task};

const DEFAULT_TRIALS: usize = 8;

/// The tests of this file take turns: the fault trials count every child of this
/// process as a leftover.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The longest a run may take to stop after a signal before it counts as a hang.
const HANG: Duration = Duration::from_secs(60);

/// What each trial may run: every family, ctx.ring up to 1024 tasks, ipc.rtt on
/// every transport, a reproduction, and benchmarks run as copies.
const WORKLOADS: &[&[&str]] = &[
    &["run", "ctx.ring", "-p", "n=2,64", "-p", "placement=free"],
    &[
        "run",
        "ctx.ring",
        "-p",
        "n=1024",
        "-p",
        "kind=process,thread",
    ],
    &["run", "ctx.pingpong"],
    &[
        "run",
        "ipc.rtt",
        "-p",
        "transport=pipe,unix_stream,unix_dgram,socketpair",
        "-p",
        "size=64",
    ],
    &[
        "run",
        "ipc.rtt",
        "-p",
        "transport=posix_mq,sysv_msg,shm_futex,tcp,udp",
        "-p",
        "size=64",
    ],
    &["run", "ipc.bw"],
    &["run", "file.*"],
    &["run", "mem.*"],
    &["run", "proc.*"],
    &["run", "svc.*"],
    &["run", "signal.*"],
    &["repro", "perez1976"],
    // Copies: threads of a worker and processes forked from it, oversubscribed too,
    // with the directory the copies share.
    &[
        "run",
        "syscall.getppid",
        "mem.fault.zero",
        "ipc.pipe.self",
        "-p",
        "copies=2,3",
        "-p",
        "copies_as=process,thread",
    ],
];

const SIGNALS: &[(libc::c_int, &str)] = &[
    (libc::SIGINT, "SIGINT"),
    (libc::SIGTERM, "SIGTERM"),
    (libc::SIGHUP, "SIGHUP"),
    (libc::SIGKILL, "SIGKILL"),
];

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The directories that benchmarks run as copies share (`/dev/shm/syscost-copies-*`,
/// `syscost-share-*`), which the run removes.
fn copies_dirs() -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| {
                    n.starts_with("syscost-copies-") || n.starts_with("syscost-share-")
                })
                .collect()
        })
        .unwrap_or_default()
}

/// System V objects: the ids in /proc/sysvipc/{msg,shm,sem}.
fn sysv() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for kind in ["msg", "shm", "sem"] {
        let text =
            std::fs::read_to_string(format!("/proc/sysvipc/{kind}")).unwrap_or_default();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() > 1 {
                out.insert(format!("{kind} key {} id {}", f[0], f[1]));
            }
        }
    }
    out
}

/// POSIX message queues, read through a private mount of the mqueue file system in a
/// mount namespace of its own (nothing stays mounted); None where that is not allowed.
fn posix_queues() -> Option<BTreeSet<String>> {
    let dir = std::env::temp_dir().join(format!("syscost-mq-{}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    let out = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(format!(
            "mount -t mqueue none '{}' && ls -A '{}'",
            dir.display(),
            dir.display()
        ))
        .stderr(Stdio::null())
        .output();
    let _ = std::fs::remove_dir(&dir);
    let out = out.ok().filter(|o| o.status.success())?;
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect(),
    )
}

fn mounts() -> BTreeSet<String> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .map(|l| l.split_whitespace().nth(4).unwrap_or("").to_string())
        .collect()
}

/// Our children, with whether each has ended (a zombie): with this process a
/// subreaper, whatever a killed run left behind becomes one of them.
fn our_children() -> Vec<(u32, bool)> {
    let me = std::process::id();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
            continue;
        };
        let mut f = rest.split_whitespace();
        let state = f.next().unwrap_or("");
        let ppid = f.next().and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(me) {
            out.push((pid, state == "Z"));
        }
    }
    out
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            out.push(e.file_name().to_string_lossy().into_owned());
        }
    }
    out.sort();
    out
}

struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What one trial saw.
#[derive(Default)]
struct Tally {
    trials: usize,
    signalled: usize,
    finished_first: usize,
    documents: usize,
    incomplete_documents: usize,
    problems: Vec<String>,
}

fn wait_with_deadline(
    child: &mut Child,
    deadline: Instant,
) -> Option<std::process::ExitStatus> {
    loop {
        if let Some(s) = child.try_wait().expect("try_wait") {
            return Some(s);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn trial(g: &mut Gen, base: &Path, n: usize, t: &mut Tally) {
    // SYSCOST_FAULT_ONLY=text limits the trials to the workloads that contain it.
    let only = std::env::var("SYSCOST_FAULT_ONLY").unwrap_or_default();
    let pool: Vec<&[&str]> = WORKLOADS
        .iter()
        .copied()
        .filter(|w| w.join(" ").contains(only.as_str()))
        .collect();
    assert!(!pool.is_empty(), "no workload contains {only:?}");
    let workload = pool[g.below(pool.len() as u64) as usize];
    let (sig, sig_name) = SIGNALS[g.below(SIGNALS.len() as u64) as usize];
    // Most signals land early, when setup and children are busiest; some late.
    let delay = Duration::from_millis(if g.below(4) == 0 {
        g.below(3000)
    } else {
        g.below(800)
    });
    let what = format!(
        "trial {n}: {} with {sig_name} after {delay:?}",
        workload.join(" ")
    );
    let tmp = base.join(format!("tmp-{n}"));
    let out_dir = base.join(format!("out-{n}"));
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::create_dir_all(&out_dir).unwrap();
    let doc = out_dir.join("run.json");

    let mut cmd = Command::new(env!("CARGO_BIN_EXE_syscost"));
    cmd.args(workload)
        .args(["--profile", "smoke", "--no-save"])
        .env("TMPDIR", &tmp)
        .env("SYSCOST_NO_SAVE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if workload[0] == "run" {
        cmd.args(["--format", "json", "-o"])
            .arg(&doc)
            .arg("--dir")
            .arg(&tmp);
    }
    let mut child = cmd.spawn().expect("syscost starts");
    let pid = child.id();
    let started = Instant::now();
    while started.elapsed() < delay {
        if child.try_wait().expect("try_wait").is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    // The child is not reaped yet, so its pid still names it.
    let sent = child.try_wait().expect("try_wait").is_none();
    if sent {
        assert_eq!(sys::kill(pid as libc::pid_t, sig), 0, "{what}: kill");
        t.signalled += 1;
    } else {
        t.finished_first += 1;
    }
    let status = match wait_with_deadline(&mut child, Instant::now() + HANG) {
        Some(s) => s,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            t.problems
                .push(format!("{what}: still running {HANG:?} after the signal"));
            return;
        }
    };
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut stderr);
    }
    let last_line = stderr.lines().last().unwrap_or("").to_string();
    use std::os::unix::process::ExitStatusExt;
    if sent {
        // Stopped by the signal (128 + signal), killed by it (before the handlers
        // were in place, which a shell reports as the same 128 + signal), or it
        // arrived as the run was already ending and the run finished (0, or 1 for a
        // failed benchmark).
        let ok = status.signal() == Some(sig)
            || (sig != libc::SIGKILL
                && (status.code() == Some(128 + sig)
                    || matches!(status.code(), Some(0) | Some(1))));
        if !ok {
            t.problems
                .push(format!("{what}: exit {status:?} ({last_line})"));
        }
    } else if !matches!(status.code(), Some(0) | Some(1)) {
        t.problems
            .push(format!("{what}: finished with {status:?} ({last_line})"));
    }
    if stderr.contains("panicked") {
        t.problems.push(format!("{what}: panicked: {stderr}"));
    }

    // Children die with their parent (parent-death signal), asynchronously: allow
    // them a moment, then reap and report any that remain.
    // A leftover that has already died still had to be reaped by us: it outlived
    // its parent, if only briefly, and is counted only if it is still running.
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut left = reap_ended();
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        left = reap_ended();
    }
    if !left.is_empty() {
        for p in &left {
            sys::kill(*p as libc::pid_t, libc::SIGKILL);
        }
        for p in &left {
            let _ = syscost::os::spawn::wait_child(*p as libc::pid_t);
        }
        t.problems.push(format!(
            "{what}: {} processes left running: {left:?}",
            left.len()
        ));
    }

    let tmp_left = files_in(&tmp);
    if !tmp_left.is_empty() {
        t.problems.push(format!(
            "{what}: files left in the temporary directory: {tmp_left:?}"
        ));
    }
    let out_files = files_in(&out_dir);
    if out_files.iter().any(|f| f != "run.json") {
        t.problems.push(format!(
            "{what}: stray files beside the -o file: {out_files:?}"
        ));
    }
    if doc.exists() {
        t.documents += 1;
        match syscost::store::read_json(&doc) {
            Ok(run) => {
                if !run.complete {
                    t.incomplete_documents += 1;
                }
                if run.complete && sent && status.code() == Some(128 + sig) {
                    t.problems
                        .push(format!("{what}: stopped, yet the document says complete"));
                }
            }
            Err(e) => t
                .problems
                .push(format!("{what}: the -o document is not valid: {e:#}")),
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    let _ = std::fs::remove_dir_all(&out_dir);
    t.trials += 1;
}

/// Reaps the children that have ended (orphans handed to us as subreaper) and returns
/// those still running.
fn reap_ended() -> Vec<u32> {
    let mut running = Vec::new();
    for (pid, ended) in our_children() {
        if ended {
            let _ = syscost::os::spawn::wait_child(pid as libc::pid_t);
        } else {
            running.push(pid);
        }
    }
    running
}

#[test]
fn random_signals_leave_nothing_behind() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let trials = env_or("SYSCOST_FAULT_TRIALS", DEFAULT_TRIALS);
    let seed = env_or("SYSCOST_FAULT_SEED", 0x5eed_u64);
    if let Err(e) = task::become_subreaper() {
        println!("SKIPPED: cannot become a subreaper to find leftover processes: {e}");
        return;
    }
    let scratch = tempfile::Builder::new()
        .prefix("syscost-faults-")
        .tempdir()
        .unwrap();
    let base = scratch.path();
    let sysv_before = sysv();
    let mq_before = posix_queues();
    let mounts_before = mounts();
    let mut g = Gen(seed);
    let mut t = Tally::default();
    for n in 0..trials {
        trial(&mut g, base, n, &mut t);
        let sysv_now = sysv();
        if sysv_now != sysv_before {
            let new: Vec<_> = sysv_now.difference(&sysv_before).collect();
            t.problems
                .push(format!("trial {n}: System V objects left: {new:?}"));
        }
        if let (Some(before), Some(now)) = (&mq_before, posix_queues()) {
            if &now != before {
                let new: Vec<_> = now.difference(before).collect();
                t.problems
                    .push(format!("trial {n}: POSIX message queues left: {new:?}"));
            }
        }
        if mounts() != mounts_before {
            t.problems.push(format!("trial {n}: the mounts changed"));
        }
        let shm = copies_dirs();
        if !shm.is_empty() {
            t.problems.push(format!(
                "trial {n}: copies' directories left in /dev/shm: {shm:?}"
            ));
        }
    }
    println!(
        "faults: {} trials ({} signalled, {} finished first), {} documents ({} incomplete), \
         {} problems; POSIX queues {}",
        t.trials,
        t.signalled,
        t.finished_first,
        t.documents,
        t.incomplete_documents,
        t.problems.len(),
        if mq_before.is_some() { "checked" } else { "not checked (no private mqueue mount)" }
    );
    assert!(t.problems.is_empty(), "{}", t.problems.join("\n"));
}

/// The children of `pid` (every thread's).
fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in tasks.flatten() {
            let p = t.path().join("children");
            if let Ok(text) = std::fs::read_to_string(p) {
                out.extend(
                    text.split_whitespace()
                        .filter_map(|c| c.parse::<u32>().ok()),
                );
            }
        }
    }
    out
}

#[test]
fn a_child_killed_from_outside_fails_its_benchmark_and_the_run_goes_on() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let scratch = tempfile::Builder::new()
        .prefix("syscost-killchild-")
        .tempdir()
        .unwrap();
    let dir = scratch.path();
    let doc = dir.join("run.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_syscost"))
        .args([
            "run",
            "--profile",
            "quick",
            "--no-save",
            "--format",
            "json",
            "-o",
        ])
        .arg(&doc)
        .args([
            "ipc.rtt",
            "-p",
            "transport=pipe",
            "-p",
            "size=64",
            "syscall.getpid",
        ])
        .env("SYSCOST_NO_SAVE", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the echoing slave to appear (a child of ipc.rtt's worker process; the
    // getpid worker has none), then kill it from outside.
    let deadline = Instant::now() + Duration::from_secs(60);
    let victim = loop {
        let grandchildren: Vec<u32> = children_of(child.id())
            .into_iter()
            .flat_map(children_of)
            .collect();
        if let Some(&c) = grandchildren.first() {
            break c;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before any child"
        );
        assert!(Instant::now() < deadline, "no child appeared");
        std::thread::sleep(Duration::from_millis(1));
    };
    assert_eq!(sys::kill(victim as libc::pid_t, libc::SIGKILL), 0);
    let status =
        wait_with_deadline(&mut child, Instant::now() + HANG).expect("the run ends");
    let run = syscost::store::read_json(&doc).expect("a valid document");
    let by_name = |n: &str| run.results.iter().find(|r| r.name == n).expect(n);
    let rtt = by_name("ipc.rtt");
    assert_eq!(
        rtt.status,
        syscost::results::Status::Failed,
        "{:?}",
        rtt.reason
    );
    let reason = rtt.reason.clone().unwrap_or_default();
    assert!(!reason.is_empty() && !reason.contains('\n'), "{reason:?}");
    assert_eq!(
        by_name("syscall.getpid").status,
        syscost::results::Status::Ok
    );
    assert!(run.complete);
    assert_eq!(
        status.code(),
        Some(1),
        "a failed benchmark makes the exit code 1"
    );
    println!("killed slave {victim}: ipc.rtt failed with {reason:?}; the run went on");
}
