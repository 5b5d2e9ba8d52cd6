//! End-to-end tests of the `syscost` binary, run as a user runs it: `list`; `run` in JSON
//! (checked against an independent mirror of the documented schema, see `schema`), CSV
//! and Markdown, to standard output and to `-o FILE`; parameter sweeps; bad input, which
//! must be refused with exit 2 and one line; `env`, `clocks` and `repro`; and that no
//! process is left behind by `--load`, on a normal exit or on Ctrl-C. They check shapes,
//! exit codes and sanity ranges only, never speeds; every run uses `--profile smoke`
//! except the interrupted one, which never finishes.

mod schema;

use schema::{parse_strict, BenchResult, Host, Run, Status};
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// Running the binary

/// Tests run side by side, except the two that audit processes: they run alone, so that
/// no other test's child is mistaken for a leftover or a zombie.
static PROCESSES: RwLock<()> = RwLock::new(());

fn shared() -> RwLockReadGuard<'static, ()> {
    PROCESSES.read().unwrap_or_else(|e| e.into_inner())
}

fn exclusive() -> RwLockWriteGuard<'static, ()> {
    PROCESSES.write().unwrap_or_else(|e| e.into_inner())
}

/// Longer than any invocation here should take; past it, the child is killed.
const TIMEOUT: Duration = Duration::from_secs(60);

/// A finished invocation.
struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// A running invocation, its output collected by two threads (so a full pipe never
/// blocks it).
struct Running {
    args: Vec<String>,
    child: Child,
    stdout: JoinHandle<String>,
    stderr: JoinHandle<String>,
}

impl Running {
    /// Starts `syscost ARGS`. Takes no lock: the caller holds one.
    fn start(args: &[&str]) -> Running {
        Running::start_env(args, &[])
    }

    /// Starts `syscost ARGS` with `env` added to its environment.
    fn start_env(args: &[&str], env: &[(&str, &str)]) -> Running {
        let mut command = Command::new(env!("CARGO_BIN_EXE_syscost"));
        command.envs(env.iter().copied());
        // Nothing is saved to the user's history unless a test names its own --db.
        if !args.contains(&"--db") {
            command.env("SYSCOST_NO_SAVE", "1");
        }
        let mut child = command
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start syscost");
        let stdout = drain(child.stdout.take().expect("piped stdout"));
        let stderr = drain(child.stderr.take().expect("piped stderr"));
        let args = args.iter().map(|a| a.to_string()).collect();
        Running {
            args,
            child,
            stdout,
            stderr,
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The pids of its children now.
    /// Its descendants now: its children (the worker processes, the load) and
    /// theirs (a benchmark's partners, a ring's members).
    fn children(&self) -> Vec<u32> {
        let all = processes();
        let mut out: Vec<u32> = vec![self.pid()];
        let mut i = 0;
        while i < out.len() {
            let parent = out[i];
            out.extend(all.iter().filter(|p| p.ppid == parent).map(|p| p.pid));
            i += 1;
        }
        out.remove(0);
        out
    }

    /// Its children that are worker processes.
    fn workers(&self) -> Vec<u32> {
        processes()
            .into_iter()
            .filter(|p| p.ppid == self.pid() && is_worker(p.pid))
            .map(|p| p.pid)
            .collect()
    }

    /// Its children that are the load's spinners (named so right after their fork).
    fn spinners(&self) -> Vec<u32> {
        processes()
            .into_iter()
            .filter(|p| p.ppid == self.pid() && p.comm == "syscost-load")
            .map(|p| p.pid)
            .collect()
    }

    /// Waits for it to exit, calling `watch` every few milliseconds meanwhile.
    fn finish_watching(mut self, mut watch: impl FnMut(&Running)) -> Out {
        let deadline = Instant::now() + TIMEOUT;
        let status = loop {
            watch(&self);
            if let Some(status) = self.child.try_wait().expect("wait for syscost") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("syscost {:?} still running after {TIMEOUT:?}", self.args);
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        let stdout = self.stdout.join().expect("stdout reader");
        let stderr = self.stderr.join().expect("stderr reader");
        Out {
            code: status.code(),
            stdout,
            stderr,
        }
    }

    fn finish(self) -> Out {
        self.finish_watching(|_| {})
    }
}

fn drain(mut pipe: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        pipe.read_to_end(&mut bytes).expect("read syscost's output");
        String::from_utf8(bytes).expect("syscost writes UTF-8")
    })
}

/// Runs `syscost ARGS` to the end.
fn syscost(args: &[&str]) -> Out {
    let _lock = shared();
    Running::start(args).finish()
}

/// Runs `syscost ARGS`, which must succeed.
fn success(args: &[&str]) -> Out {
    let out = syscost(args);
    assert_eq!(
        out.code,
        Some(0),
        "syscost {args:?} failed:\n{}",
        out.stderr
    );
    assert_no_panic(args, &out.stderr);
    out
}

/// Runs `syscost ARGS`, which must be refused as a usage error: exit 2, nothing on
/// standard output, no panic. Returns standard error.
fn refused(args: &[&str]) -> String {
    let out = syscost(args);
    assert_eq!(
        out.code,
        Some(2),
        "syscost {args:?}: stderr:\n{}",
        out.stderr
    );
    assert_eq!(out.stdout, "", "syscost {args:?} wrote to stdout");
    assert_no_panic(args, &out.stderr);
    out.stderr
}

/// The only non-empty line of `stderr`.
fn one_line<'a>(args: &[&str], stderr: &'a str) -> &'a str {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines.len(),
        1,
        "syscost {args:?}: want one line on stderr:\n{stderr}"
    );
    lines[0]
}

fn assert_no_panic(args: &[&str], stderr: &str) {
    let lower = stderr.to_lowercase();
    assert!(
        !lower.contains("panicked") && !lower.contains("backtrace"),
        "syscost {args:?} panicked:\n{stderr}"
    );
}

/// `syscost run BENCHES --profile smoke EXTRA...`, which must succeed.
fn run_smoke(benches: &[&str], extra: &[&str]) -> Out {
    let mut args = vec!["run"];
    args.extend(benches);
    args.extend(["--profile", "smoke"]);
    args.extend(extra);
    success(&args)
}

/// `syscost run BENCHES --profile smoke --format json EXTRA...`, parsed.
fn run_json(benches: &[&str], extra: &[&str]) -> Run {
    let mut more = vec!["--format", "json"];
    more.extend(extra);
    parse_strict(&run_smoke(benches, &more).stdout)
}

// ---------------------------------------------------------------------------------------
// Files and processes

/// A fresh directory under the system's temporary directory, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("syscost-cli-test-{}-{tag}-{n}", std::process::id());
        let path = std::env::temp_dir().join(name);
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir(&path).expect("create a temporary directory");
        TempDir(path)
    }

    /// The names of the files in it, sorted.
    fn entries(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .expect("list the temporary directory")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `syscost run BENCHES --profile smoke --format FORMAT -o DIR/out.FORMAT`; checks
/// that nothing went to standard output and that the file is the only one left (no
/// temporary file); returns its text.
fn run_to_file(format: &str, benches: &[&str]) -> String {
    let dir = TempDir::new(format);
    let name = format!("out.{format}");
    let file = dir.0.join(&name);
    let path = file.to_str().expect("a UTF-8 temporary path");
    let out = run_smoke(benches, &["--format", format, "-o", path]);
    assert_eq!(out.stdout, "", "-o {format}: nothing should go to stdout");
    assert_eq!(dir.entries(), [name], "-o {format}: one file, no leftovers");
    std::fs::read_to_string(&file).expect("read the output file")
}

/// One line of /proc/PID/stat.
#[derive(Debug)]
#[allow(dead_code)] // `comm` is there for the failure messages
struct Proc {
    pid: u32,
    ppid: u32,
    state: char,
    comm: String,
}

/// Whether `pid` is a syscost worker: named so from its fork on, and started as
/// `syscost __worker FD PARENT`.
fn is_worker(pid: u32) -> bool {
    let named = std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .is_ok_and(|c| c.trim() == "syscost-worker");
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
    // A probe process (the machine's probes, read once) is started as a worker with
    // one more word.
    let probe = args.get(4) == Some(&&b"probe"[..]);
    (named || args.get(1) == Some(&&b"__worker"[..])) && !probe
}

/// Every process now.
fn processes() -> Vec<Proc> {
    std::fs::read_dir("/proc")
        .expect("read /proc")
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter_map(proc_stat)
        .collect()
}

fn proc_stat(pid: u32) -> Option<Proc> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (head, tail) = stat.rsplit_once(')')?;
    let comm = head.split_once('(')?.1.to_string();
    let mut fields = tail.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some(Proc {
        pid,
        ppid,
        state,
        comm,
    })
}

/// Checks, once syscost `parent` has exited and been reaped, that none of its children
/// (`seen` while it ran, or any process still naming it as parent) remains, and that
/// this test process has no zombie child.
fn assert_nothing_left(parent: u32, seen: &BTreeSet<u32>) {
    let all = processes();
    let left: Vec<&Proc> = all
        .iter()
        .filter(|p| p.ppid == parent || seen.contains(&p.pid))
        .collect();
    assert!(
        left.is_empty(),
        "left behind by syscost (pid {parent}): {left:?}"
    );
    let me = std::process::id();
    let zombies: Vec<&Proc> = all
        .iter()
        .filter(|p| p.ppid == me && p.state == 'Z')
        .collect();
    assert!(
        zombies.is_empty(),
        "zombie children of the test process: {zombies:?}"
    );
}

/// Sends SIGINT to one child process (by its own positive pid, never a group).
fn interrupt(child: &Running) {
    send(child, libc::SIGINT);
}

/// Sends `sig` to the running syscost (never to pid ≤ 0).
#[allow(unsafe_code)]
fn send(child: &Running, sig: libc::c_int) {
    let pid = libc::pid_t::try_from(child.pid()).expect("a pid fits in pid_t");
    assert!(pid > 0, "refusing to signal pid {pid}");
    // SAFETY: kill has no memory-safety preconditions; `pid` is positive, so the signal
    // goes to that one process, our child, which is not yet reaped (its pid is not reused).
    let r = unsafe { libc::kill(pid, sig) };
    assert_eq!(
        r,
        0,
        "kill({pid}, {sig}): {}",
        std::io::Error::last_os_error()
    );
}

/// The ids of the System V message queues now.
fn sysv_queue_ids() -> BTreeSet<String> {
    std::fs::read_to_string("/proc/sysvipc/msg")
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
        .collect()
}

// ---------------------------------------------------------------------------------------
// Checking output

/// The benchmark names `list` printed (lines indented by exactly two spaces).
fn listed(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("  "))
        .filter(|l| !l.starts_with(char::is_whitespace))
        .filter_map(|l| l.split_whitespace().next())
        .collect()
}

/// Splits one CSV record into fields, honouring double quotes.
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        let field = fields.last_mut().expect("at least one field");
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(String::new()),
            _ => field.push(c),
        }
    }
    assert!(!quoted, "unbalanced quotes in CSV line {line:?}");
    fields
}

/// Sanity checks for one measured result: plausible figures, consistent statistics and
/// sample columns.
fn check_measured(r: &BenchResult) {
    let what = format!("{} {:?}", r.name, r.params);
    assert_eq!(r.status, Status::Ok, "{what}: {:?}", r.reason);
    assert_eq!(r.unit, "ns", "{what}");
    let m = r
        .measured
        .as_ref()
        .unwrap_or_else(|| panic!("{what}: no figures"));
    assert!(
        m.median_ns.is_finite() && m.median_ns < 1e6,
        "{what}: {}",
        m.median_ns
    );
    if r.name.starts_with("syscall.") {
        assert!(m.median_ns > 0.0, "{what}: a system call costs something");
    }
    assert!(m.counts.clean <= m.counts.total, "{what}: {:?}", m.counts);
    assert!(m.counts.total >= 1, "{what}: {:?}", m.counts);
    assert!(!m.stop_reason.is_empty(), "{what}: no stop reason");
    // The headline is the 20% trimmed mean of the round medians, inside its own
    // interval; or,
    // resting on too few clean samples, the median of all samples, never converged and
    // never narrower than ±1%.
    let figures: Vec<f64> = m.rounds.iter().filter_map(|r| r.median_ns).collect();
    assert!(!m.rounds.is_empty(), "{what}: no rounds");
    let few = m.counts.clean < 30 || m.counts.clean * 10 < m.counts.total;
    assert_eq!(
        m.basis == "all",
        few,
        "{what}: basis {} with {:?}",
        m.basis,
        m.counts
    );
    if few {
        assert!(!m.converged, "{what}: converged on {:?}", m.counts);
        assert_eq!(
            m.median_ns, m.raw.median,
            "{what}: not the median of all samples"
        );
        let half = (m.ci_high_ns - m.ci_low_ns) / 2.0 / m.median_ns.abs();
        assert!(half >= 0.01 - 1e-9, "{what}: ±{half} on {:?}", m.counts);
    } else if !figures.is_empty() {
        let mut sorted = figures.clone();
        sorted.sort_by(f64::total_cmp);
        let g = sorted.len() / 5;
        let kept = &sorted[g..sorted.len() - g];
        let mean = kept.iter().sum::<f64>() / kept.len() as f64;
        assert!(
            (mean - m.median_ns).abs() <= 1e-9 * mean.abs().max(1.0),
            "{what}: the headline {} is not the trimmed mean of the round medians {figures:?}",
            m.median_ns
        );
    }
    assert!(
        m.ci_low_ns <= m.median_ns && m.median_ns <= m.ci_high_ns,
        "{what}: headline outside its CI: {} {}–{}",
        m.median_ns,
        m.ci_low_ns,
        m.ci_high_ns
    );
    assert_eq!(
        m.rounds.iter().map(|r| r.total).sum::<usize>(),
        m.counts.total,
        "{what}: every sample belongs to a round"
    );
    let headline = m.clean.as_ref().unwrap_or(&m.raw);
    assert!(
        headline.ci_low <= headline.median && headline.median <= headline.ci_high,
        "{what}: pooled median outside its CI: {headline:?}"
    );
    assert_eq!(
        m.clean.as_ref().map_or(0, |c| c.n),
        m.counts.clean,
        "{what}"
    );
    assert_eq!(m.raw.n, m.counts.total, "{what}");
    let s = m
        .samples
        .as_ref()
        .unwrap_or_else(|| panic!("{what}: no samples"));
    let lengths = [
        s.per_op_ns.len(),
        s.at_ns.len(),
        s.round.len(),
        s.flags.len(),
        s.invol_switches.len(),
        s.vol_switches.len(),
        s.faults.len(),
    ];
    assert!(
        lengths.iter().all(|&n| n == m.counts.total),
        "{what}: {lengths:?}"
    );
    assert!(
        s.flags.iter().all(|&f| f < 8),
        "{what}: flags use bits 0-2 only"
    );
}

// ---------------------------------------------------------------------------------------
// list

#[test]
fn list_shows_the_catalogue() {
    let out = success(&["list"]);
    let names = listed(&out.stdout);
    for name in [
        "syscall.getpid",
        "syscall.args",
        "call.empty",
        "clock.monotonic",
    ] {
        assert!(
            names.contains(&name),
            "`list` lacks {name}:\n{}",
            out.stdout
        );
    }
    assert!(
        out.stdout.contains("args=0,1,2,3,4,5,6"),
        "syscall.args' default sweep"
    );
}

#[test]
fn list_filters_by_glob() {
    let out = success(&["list", "syscall.get*"]);
    let names = listed(&out.stdout);
    assert!(names.contains(&"syscall.getpid"), "{}", out.stdout);
    assert!(!names.contains(&"call.empty"), "{}", out.stdout);
}

#[test]
fn list_refuses_a_filter_that_matches_nothing() {
    let args = ["list", "nosuch"];
    let line = one_line(&args, &refused(&args)).to_string();
    assert!(line.contains("nosuch"), "{line}");
}

// ---------------------------------------------------------------------------------------
// run: JSON

#[test]
fn run_json_follows_the_schema() {
    let run = run_json(&["syscall.getpid*", "call.empty"], &[]);
    assert_eq!(run.schema_version, 3);
    assert_eq!(run.tool, "syscost");
    assert!(run.complete, "a finished run is complete");
    assert_eq!(run.harness.profile, "smoke");
    assert_eq!(run.harness.load, 0);
    assert!(run.host.cpus_online >= 1);
    assert!(
        run.clock.read_cost_ns > 0.0 && run.clock.ns_per_tick > 0.0,
        "{:?}",
        run.clock
    );
    let names: BTreeSet<&str> = run.results.iter().map(|r| r.name.as_str()).collect();
    let want = [
        "call.empty",
        "syscall.getpid",
        "syscall.getpid.indirect",
        "syscall.getpid.raw",
    ];
    assert_eq!(names, BTreeSet::from(want));
    assert_eq!(run.results.len(), 4);
    run.results.iter().for_each(check_measured);
    assert!(
        run.sweeps.is_empty(),
        "no parameter was swept: {:?}",
        run.sweeps
    );
}

#[test]
fn a_run_states_the_machines_floors_and_each_rows_target() {
    let run = run_json(&["syscall.getppid", "call.empty", "mem.brk"], &[]);
    let kinds: Vec<&str> = run.machine.floors.iter().map(|f| f.kind.as_str()).collect();
    // The cross probe needs another CPU to cross to; the probe processes before the
    // first round read it whatever the rows.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus > 1 {
        assert_eq!(kinds, ["syscall", "user", "memory", "cross"]);
    } else {
        assert_eq!(kinds, ["syscall", "user", "memory"]);
    }
    for f in &run.machine.floors {
        // The 24 probe processes before the first round at least.
        assert!(f.readings >= 10, "{f:?}");
        assert!(f.median_ns > 0.0 && f.median_ns < 1e6, "{f:?}");
        // Two rounds (the smoke profile) of a wake-up across CPUs, whose readings have a
        // long tail (an idle CPU woken), may lie further apart than the figure itself.
        let most = if f.kind == "cross" {
            f64::INFINITY
        } else {
            100.0
        };
        assert!(f.floor_pct >= 0.0 && f.floor_pct < most, "{f:?}");
        assert!(f.spread_pct >= 0.0, "{f:?}");
    }
    let smoke_target: f64 = 5.0; // the smoke profile's ±5%
    for (name, kind) in [
        ("syscall.getppid", "syscall"),
        ("call.empty", "user"),
        ("mem.brk", "memory"),
    ] {
        let r = run.results.iter().find(|r| r.name == name).expect(name);
        let m = r.measured.as_ref().expect("measured");
        assert_eq!(m.work.as_deref(), Some(kind), "{}", r.name);
        let target = m.target_pct.expect("a target");
        let floor = m.floor_pct.unwrap_or(0.0);
        // Held to the larger of the profile's and √2 times what the machine allows.
        assert!(
            (target - smoke_target.max(std::f64::consts::SQRT_2 * floor)).abs() < 1e-9,
            "{}: held to ±{target}% with the floor at ±{floor}%",
            r.name
        );
        // Its interval is its rounds' and what the machine allows together, judged
        // against that target: converged only within it, and not converged only with
        // a reason of its own.
        let half = (m.ci_high_ns - m.ci_low_ns) / 2.0 / m.median_ns * 100.0;
        assert!(m.interval_source.is_some(), "{}: {m:?}", r.name);
        if m.converged {
            assert!(half <= target * (1.0 + 1e-9), "{}: {m:?}", r.name);
            assert!(m.why.is_empty(), "{}: {m:?}", r.name);
        } else {
            assert!(!m.why.is_empty(), "{}: {m:?}", r.name);
        }
    }
    // In plain words at the top of the table, each row with its own target; the
    // method's terms only with -v, once at the top, once at the foot.
    let out = run_smoke(&["syscall.getppid"], &[]).stdout;
    assert!(!out.contains("machine floors"), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    let columns = lines
        .iter()
        .position(|l| l.starts_with("benchmark"))
        .expect("a column header");
    assert!(lines[columns].contains("target"), "{out}");
    assert!(
        lines[..columns]
            .iter()
            .any(|l| l.starts_with("the machine ")),
        "{out}"
    );
    let out = run_smoke(&["syscall.getppid"], &["-v"]).stdout;
    assert_eq!(out.matches("machine floors").count(), 2, "{out}");
}

#[test]
fn a_target_asked_for_is_held_even_below_the_floor() {
    let run = run_json(&["syscall.getppid"], &["--target", "0.01"]);
    let m = run.results[0].measured.as_ref().expect("measured");
    assert_eq!(m.target_pct, Some(0.01));
    assert!((run.harness.ci_target - 0.0001).abs() < 1e-12);
    for bad in ["0", "100", "-1", "x"] {
        let opt = format!("--target={bad}");
        let args = ["run", "syscall.getppid", opt.as_str()];
        let line = one_line(&args, &refused(&args)).to_string();
        assert!(line.contains("--target"), "{args:?}: {line}");
    }
}

#[test]
fn a_run_states_its_budget_and_takes_one_given() {
    // One benchmark alone: ten spans a row (10 s in the quick profile, whose whole
    // catalogue has 17 s); --budget in its place, stated in the document and the header.
    let one = |extra: &[&str]| {
        let mut args = vec!["run", "syscall.getppid", "--profile", "quick", "--no-save"];
        args.extend(extra);
        success(&args)
    };
    let run: Run = parse_strict(&one(&["--format", "json"]).stdout);
    assert_eq!(run.harness.budget_ns, Some(10_000_000_000));
    let run: Run = parse_strict(&one(&["--format", "json", "--budget", "3s"]).stdout);
    assert_eq!(run.harness.budget_ns, Some(3_000_000_000));
    let table = one(&["--budget", "1.5m"]).stdout;
    let header = table.lines().next().unwrap_or("");
    assert!(header.contains("budget 90 s"), "{table}");
    for bad in ["0", "abc", "-2s", "3d"] {
        let opt = format!("--budget={bad}");
        let args = ["run", "syscall.getppid", opt.as_str()];
        let line = one_line(&args, &refused(&args)).to_string();
        assert!(line.contains("--budget"), "{args:?}: {line}");
    }
    // The smoke profile's rounds are fixed: a budget would do nothing.
    let args = [
        "run",
        "syscall.getppid",
        "--profile",
        "smoke",
        "--budget",
        "5s",
    ];
    let line = one_line(&args, &refused(&args)).to_string();
    assert!(line.contains("no time budget"), "{line}");
}

#[test]
fn a_run_stopped_by_timeout_is_saved_incomplete_and_its_workers_say_nothing() {
    // `timeout -s INT` sends the signal to syscost and then to its whole group: one
    // request delivered twice within microseconds, which must not end the run at once.
    let dir = TempDir::new("timeout");
    let db = dir.0.join("history.db");
    let db = db.to_str().unwrap();
    let out = {
        let _lock = shared();
        Command::new("timeout")
            .args(["-s", "INT", "4"])
            .arg(env!("CARGO_BIN_EXE_syscost"))
            .args(["run", "syscall", "ctx", "--profile", "quick", "--db", db])
            .output()
            .expect("run timeout (coreutils)")
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    // timeout says 124 when it had to stop the command.
    assert_eq!(out.status.code(), Some(124), "stderr:\n{stderr}");
    assert!(!stderr.contains("syscost worker"), "stderr:\n{stderr}");
    assert!(stderr.contains("interrupted"), "stderr:\n{stderr}");
    let list = success(&["history", "--db", db]).stdout;
    assert!(list.contains("(incomplete)"), "{list}");
}

#[test]
fn last_passes_over_an_interrupted_run_and_says_so() {
    let dir = TempDir::new("incomplete");
    let db = dir.0.join("history.db");
    let db = db.to_str().unwrap();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/report-smoke.json");
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&fixture).unwrap()).unwrap();
    let broken = dir.0.join("broken.json");
    doc["complete"] = Value::Bool(false);
    std::fs::write(&broken, doc.to_string()).unwrap();
    let fixture = fixture.to_str().unwrap();
    success(&["history", "--db", db, "import", fixture]);
    success(&["history", "--db", db, "import", broken.to_str().unwrap()]);
    // The list marks run 2 where no cut can hide it.
    let list = success(&["history", "--db", db]).stdout;
    let two = list
        .lines()
        .find(|l| l.trim_start().starts_with("2 "))
        .unwrap();
    assert!(two.contains("(incomplete)"), "{list}");
    // last is run 1, and says which newer run it passed over.
    let shown = success(&["history", "--db", db, "export", "last"]);
    let run: Value = serde_json::from_str(&shown.stdout).unwrap();
    assert_eq!(run["complete"], Value::Bool(true));
    assert_eq!(
        shown.stderr.trim(),
        "last is run 1: run 2, newer, is incomplete (interrupted); name it by its id, or \
         write last! (which counts incomplete runs), to use it"
    );
    // Shown by its id, it is said to be partial before its table.
    let partial = success(&["history", "--db", db, "show", "2"]).stderr;
    assert_eq!(
        partial.trim(),
        "#2: the run was interrupted; its results are partial"
    );
    // last! names the interrupted run, and says nothing more.
    let all = success(&["history", "--db", db, "export", "last!"]);
    let run: Value = serde_json::from_str(&all.stdout).unwrap();
    assert_eq!(run["complete"], Value::Bool(false));
    assert_eq!(all.stderr, "");
    // Nothing complete before run 1: last~1 is refused, naming the incomplete one.
    let e = refused(&["history", "--db", db, "export", "last~1"]);
    assert!(
        e.contains("1 complete run") && e.contains("1 incomplete"),
        "{e}"
    );
}

/// A document of the previous schema, schema 2 (written by
/// `syscost run syscall.getpid --profile smoke --format json`), is read as a file and
/// from the history, and exported in this schema.
#[test]
fn a_document_of_the_previous_schema_is_read_and_exported_in_this_one() {
    let dir = TempDir::new("schema2");
    let db = dir.0.join("history.db");
    let db = db.to_str().unwrap();
    let old = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/schema2-getpid.json"
    );
    success(&["history", "--db", db, "import", old]);
    let run: Run =
        parse_strict(&success(&["history", "--db", db, "export", "last"]).stdout);
    assert_eq!(run.schema_version, 3);
    let shown = success(&["compare", old, "last", "--db", db]).stdout;
    assert!(shown.contains("syscall.getpid"), "{shown}");
}

#[test]
fn compare_pairs_rows_across_a_parameter_it_is_told_to_ignore() {
    let dir = TempDir::new("ignore-param");
    let file = |via: &str| dir.0.join(format!("{via}.json")).display().to_string();
    for via in ["libc", "raw"] {
        let p = format!("via={via}");
        let out = file(via);
        run_smoke(
            &["syscall.getppid"],
            &["-p", &p, "--no-save", "--format", "json", "-o", &out],
        );
    }
    let (libc, raw) = (file("libc"), file("raw"));
    // Without it, the two paths are different rows.
    let apart = syscost(&["compare", &libc, &raw]);
    assert_ne!(apart.code, Some(0), "{}", apart.stdout);
    assert!(
        apart.stderr.contains("no measured benchmark in common"),
        "{}",
        apart.stderr
    );
    let paired = success(&["compare", &libc, &raw, "--ignore-param", "via"]).stdout;
    assert!(paired.contains("syscall.getppid"), "{paired}");
    let json = success(&[
        "compare",
        &libc,
        &raw,
        "--ignore-param",
        "via",
        "--format",
        "json",
    ])
    .stdout;
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let text = v.to_string();
    assert!(text.contains("syscall.getppid"), "{text}");
}

#[test]
fn run_json_without_samples() {
    let run = run_json(&["syscall.getppid"], &["--no-samples"]);
    assert_eq!(run.results.len(), 1);
    let m = run.results[0].measured.as_ref().expect("measured");
    assert!(m.samples.is_none(), "--no-samples leaves the columns out");
    assert!(m.median_ns > 0.0 && m.median_ns < 1e6, "{}", m.median_ns);
}

#[test]
fn run_sweeps_a_parameter() {
    let run = run_json(&["syscall.args"], &["--param", "args=0,3,6"]);
    assert_eq!(run.results.len(), 3);
    assert!(run.results.iter().all(|r| r.name == "syscall.args"));
    let mut args: Vec<&str> = run
        .results
        .iter()
        .map(|r| r.params["args"].as_str())
        .collect();
    args.sort();
    assert_eq!(args, ["0", "3", "6"]);
    run.results.iter().for_each(check_measured);
    assert_eq!(
        run.sweeps.len(),
        1,
        "one line through the sweep: {:?}",
        run.sweeps
    );
    let fit = &run.sweeps[0];
    assert_eq!(
        (fit.name.as_str(), fit.param.as_str(), fit.points),
        ("syscall.args", "args", 3)
    );
    assert!((0.0..=1.0).contains(&fit.r2), "{fit:?}");
}

/// `via=libc,raw` measures each call both ways, names the path in the JSON's parameters,
/// and the default is the C library's wrapper; a word a benchmark does not take is
/// refused. Sanity ranges only: which path is faster is the machine's business.
#[test]
fn run_sweeps_the_entry_path() {
    let run = run_json(
        &["syscall.getppid", "ipc.pipe.self"],
        &["-p", "via=libc,raw", "-p", "share=pipe-per-copy"],
    );
    let mut got: Vec<String> = run
        .results
        .iter()
        .map(|r| format!("{} {}", r.name, r.params["via"]))
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            "ipc.pipe.self libc",
            "ipc.pipe.self raw",
            "syscall.getppid libc",
            "syscall.getppid raw"
        ]
    );
    run.results.iter().for_each(check_measured);
    let run = run_json(&["file.open_close"], &["share=file-per-copy"]);
    assert_eq!(run.results[0].params["via"], "libc", "the default path");
    let e = refused(&["run", "syscall.clock_gettime", "-p", "via=raw"]);
    assert!(e.contains("one of vdso, syscall"), "{e}");
    let list = success(&["list", "syscall.setuid"]).stdout;
    assert!(list.contains("via=syscall  (syscall|raw"), "{list}");
    assert!(!list.contains("entry: "), "via says it: {list}");
    let list = success(&["list", "ctx.pingpong", "mem.brk", "call.empty"]).stdout;
    assert!(
        list.contains("entry: libc  (mechanism=futex,signal: syscall; "),
        "{list}"
    );
    assert!(list.contains("entry: syscall  (brk up and down"), "{list}");
    assert_eq!(
        list.matches("entry: ").count(),
        2,
        "none for call.empty: {list}"
    );
}

// ---------------------------------------------------------------------------------------
// run: output files

#[test]
fn run_writes_json_to_a_file() {
    let run: Run = parse_strict(&run_to_file("json", &["syscall.getppid", "call.empty"]));
    assert!(run.complete);
    assert_eq!(run.results.len(), 2);
    run.results.iter().for_each(check_measured);
    // How each enters the kernel: its via (libc by default), or no entry at all.
    let entry = |name: &str| run.results.iter().find(|r| r.name == name).map(|r| r.entry);
    assert_eq!(
        entry("syscall.getppid"),
        Some(Some(schema::EntryPath::Libc))
    );
    assert_eq!(entry("call.empty"), Some(None));
}

#[test]
fn run_writes_csv_to_a_file() {
    let text = run_to_file("csv", &["syscall.getppid", "call.empty"]);
    let mut lines = text.lines();
    let header = csv_fields(lines.next().expect("a header row"));
    assert_eq!(header[..3], ["name", "params", "status"], "{header:?}");
    let median = header
        .iter()
        .position(|h| h == "median_ns")
        .expect("a median_ns column");
    let rows: Vec<Vec<String>> = lines.map(csv_fields).collect();
    assert_eq!(rows.len(), 2, "one row per result:\n{text}");
    for row in &rows {
        assert_eq!(
            row.len(),
            header.len(),
            "as many fields as the header: {row:?}"
        );
        assert!(
            ["syscall.getppid", "call.empty"].contains(&row[0].as_str()),
            "{row:?}"
        );
        assert_eq!(row[2], "ok", "{row:?}");
        let ns: f64 = row[median].parse().expect("median_ns is a number");
        assert!(ns.is_finite() && ns < 1e6, "{row:?}");
    }
}

#[test]
fn run_writes_markdown_to_a_file() {
    let text = run_to_file("markdown", &["syscall.getppid", "call.empty"]);
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().position(|l| l.starts_with("| benchmark |"));
    let at = at.unwrap_or_else(|| panic!("no table header row:\n{text}"));
    let cells = |l: &str| l.matches('|').count();
    let rule = lines.get(at + 1).expect("a separator row");
    assert!(
        rule.starts_with("|-") || rule.starts_with("|:"),
        "separator: {rule}"
    );
    assert!(
        rule.chars().all(|c| "|-: ".contains(c)),
        "separator: {rule}"
    );
    assert_eq!(cells(rule), cells(lines[at]));
    let rows: Vec<&str> = lines[at + 2..]
        .iter()
        .copied()
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert_eq!(rows.len(), 2, "one row per result:\n{text}");
    assert!(
        rows.iter().all(|r| cells(r) == cells(lines[at])),
        "{rows:?}"
    );
}

#[test]
fn run_refuses_an_unwritable_output() {
    let args = ["run", "syscall.getpid", "--profile", "smoke"];
    let args = [
        &args[..],
        &["--format", "json", "-o", "/nonexistent-dir/x.json"],
    ]
    .concat();
    let line = one_line(&args, &refused(&args)).to_string();
    assert!(line.contains("-o"), "{line}");
}

// ---------------------------------------------------------------------------------------
// Bad input

#[test]
fn bad_input_is_refused_in_one_line() {
    let cases: [&[&str]; 8] = [
        &["run", "nosuch.bench"],
        &["run", "syscall.getpid", "--param", "foo=1"],
        &["run", "syscall.args", "--param", "args=9"],
        &["run", "syscall.args", "--param", "args=1,,2"],
        &["run", "syscall.args", "--param", "args"],
        &["run", "syscall.getpid", "--cpu", "999"],
        &["run", "syscall.getpid", "--load", "100000"],
        &["repro", "nosuch"],
    ];
    for args in cases {
        let args = [args, &["--profile", "smoke"]].concat();
        let line = one_line(&args, &refused(&args)).to_string();
        assert!(line.starts_with("syscost: "), "{args:?}: {line}");
    }
}

/// Values clap rejects: exit 2, one line naming the value, no panic.
#[test]
fn bad_option_values_are_refused_in_one_line() {
    for option in ["--profile", "--format"] {
        let args = ["run", "syscall.getpid", option, "nope"];
        let line = one_line(&args, &refused(&args)).to_string();
        assert!(line.contains("'nope'"), "{args:?}: {line}");
    }
}

// ---------------------------------------------------------------------------------------
// env, clocks, repro

#[test]
fn env_describes_the_machine() {
    let out = success(&["env"]).stdout;
    // The value printed beside a fact's name ("  name   value").
    let fact = |name: &str| -> String {
        out.lines()
            .find_map(|l| {
                let rest = l.trim_start().strip_prefix(name)?;
                rest.starts_with("  ").then(|| rest.trim().to_string())
            })
            .unwrap_or_else(|| panic!("no '{name}' line in:\n{out}"))
    };
    let read = |path: &str| std::fs::read_to_string(path).map(|s| s.trim().to_string());
    assert_eq!(fact("release"), read("/proc/sys/kernel/osrelease").unwrap());
    assert_eq!(fact("hostname"), read("/proc/sys/kernel/hostname").unwrap());
    let online = read("/sys/devices/system/cpu/online").unwrap();
    let count: usize = online
        .split(',')
        .map(|r| match r.split_once('-') {
            Some((a, b)) => b.parse::<usize>().unwrap() - a.parse::<usize>().unwrap() + 1,
            None => 1,
        })
        .sum();
    assert_eq!(fact("cpus online"), count.to_string());
    if let Ok(cs) =
        read("/sys/devices/system/clocksource/clocksource0/current_clocksource")
    {
        assert_eq!(fact("clocksource"), cs);
    }
    let meminfo = read("/proc/meminfo").unwrap();
    let total = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .map(|v| v.trim().trim_end_matches("kB").trim().to_string())
        .unwrap();
    assert!(
        fact("total").starts_with(&format!("{total} KiB")),
        "{}",
        fact("total")
    );
    let page = Command::new("getconf").arg("PAGESIZE").output().unwrap();
    let page = String::from_utf8_lossy(&page.stdout).trim().to_string();
    assert_eq!(fact("page size"), format!("{page} B"));
    // Every mitigation the kernel reports, with its words.
    if let Ok(dir) = std::fs::read_dir("/sys/devices/system/cpu/vulnerabilities") {
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let status = read(&e.path().to_string_lossy()).unwrap();
            assert_eq!(fact(&name), status, "mitigation {name}");
        }
    }
}

#[test]
fn env_json_follows_the_schema() {
    let host: Host = parse_strict(&success(&["env", "--format", "json"]).stdout);
    assert!(host.cpus_online >= 1, "{host:?}");
}

#[test]
fn clocks_json_lists_the_monotonic_clock() {
    let out = success(&["clocks", "--format", "json"]);
    let doc: Value = serde_json::from_str(&out.stdout).expect("clocks prints JSON");
    let clocks = doc["clocks"].as_array().expect("a `clocks` array");
    let mono = clocks.iter().find(|c| c["clock"] == "CLOCK_MONOTONIC");
    let mono = mono.unwrap_or_else(|| panic!("no CLOCK_MONOTONIC entry: {clocks:?}"));
    let cost = mono["read_cost_ns"]
        .as_f64()
        .expect("read_cost_ns is a number");
    assert!(cost > 0.0 && cost < 1e6, "{mono}");
}

#[test]
fn repro_perez1976_prints_the_table() {
    let out = success(&["repro", "perez1976", "--profile", "smoke"]);
    let row = |call: &str| {
        let found = out
            .stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(call));
        found.unwrap_or_else(|| panic!("no row {call}:\n{}", out.stdout))
    };
    row("gpid");
    let stme = row("stme");
    assert!(
        stme.contains("not measured: it would change the system clock"),
        "{stme}"
    );
    assert!(
        out.stdout.contains("per-argument increment"),
        "{}",
        out.stdout
    );
}

// ---------------------------------------------------------------------------------------
// Processes

#[test]
#[ignore = "slow: a run beside two spinners, every other test waiting; .ci/run runs it"]
fn load_leaves_no_process_behind() {
    let _alone = exclusive();
    let args = ["run", "--profile", "smoke", "--load", "2", "syscall.getpid"];
    let child = Running::start(&[&args[..], &["--format", "json"]].concat());
    let pid = child.pid();
    let mut seen = BTreeSet::new();
    let mut load = BTreeSet::new();
    let out = child.finish_watching(|c| {
        seen.extend(c.children());
        load.extend(c.spinners());
    });
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let run: Run = parse_strict(&out.stdout);
    assert_eq!(run.harness.load, 2);
    assert!(
        !load.is_empty() && load.len() <= 2,
        "not the 2 spinners --load 2 asked for: {load:?}"
    );
    assert_nothing_left(pid, &seen);
}

#[test]
fn each_benchmark_is_measured_in_a_worker_process_of_its_own() {
    let _alone = exclusive();
    let args = [
        "run",
        "--profile",
        "smoke",
        "syscall.getpid",
        "proc.fork",
        "--format",
        "json",
    ];
    // A fresh worker every round, then one for all of an instance's rounds.
    for term in [1, 0] {
        let child = Running::start_env(
            &args,
            &[("SYSCOST_ROUNDS_PER_WORKER", &term.to_string())],
        );
        let pid = child.pid();
        let mut seen = BTreeSet::new();
        let mut workers = BTreeSet::new();
        let mut live = 0;
        let out = child.finish_watching(|c| {
            let now = c.workers();
            live = live.max(now.len());
            workers.extend(now);
            seen.extend(c.children());
        });
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        let run: Run = parse_strict(&out.stdout);
        assert_eq!(run.harness.workers.as_deref(), Some("process"));
        assert!(run.results.len() >= 2, "{} results", run.results.len());
        let mut processes = 0;
        for r in &run.results {
            assert_eq!(r.status, Status::Ok, "{}: {:?}", r.name, r.reason);
            let m = r.measured.as_ref().expect("figures");
            assert!(
                m.median_ns > 0.0 && m.median_ns < 1e8,
                "{}: {}",
                r.name,
                m.median_ns
            );
            // Every round reaches the result, whichever process measured it.
            let rounds: Vec<u32> = m.rounds.iter().map(|f| f.round).collect();
            let expected: Vec<u32> = (0..rounds.len() as u32).collect();
            assert_eq!(rounds, expected, "{}", r.name);
            // A round measured again (a slow spell) stays with its worker.
            let want = if term == 1 { m.rounds.len() as u32 } else { 1 };
            assert_eq!(m.worker_processes, want, "{} (term {term})", r.name);
            processes += m.worker_processes as usize;
        }
        // One live worker per instance at most, and no more than the results name;
        // with a fresh worker every round, one more while a hand-over is under way
        // (the next worker starts while the old one packs, and visits are one at a
        // time).
        let most = run.results.len() + usize::from(term == 1);
        assert!(
            live >= 1 && live <= most,
            "{live} workers alive at once (term {term})"
        );
        assert!(
            workers.len() <= processes,
            "workers seen: {workers:?}, results name {processes} (term {term})"
        );
        assert_nothing_left(pid, &seen);
    }
}

#[test]
fn a_worker_that_dies_fails_its_benchmark_and_the_run_goes_on() {
    let _alone = exclusive();
    let args = [
        "run",
        "--profile",
        "quick",
        "syscall.getppid",
        "--format",
        "json",
    ];
    let child = Running::start(&args);
    let pid = child.pid();
    let started = Instant::now();
    let mut seen = BTreeSet::new();
    let victim = loop {
        assert!(started.elapsed() < TIMEOUT, "no worker was ever started");
        if let Some(&w) = child.workers().first() {
            break w;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    seen.insert(victim);
    // Our grandchild, killed as a crash would.
    let r = kill_9(victim);
    assert!(r, "the worker {victim} could not be signalled");
    let out = child.finish_watching(|c| seen.extend(c.children()));
    assert_eq!(out.code, Some(1), "stderr:\n{}", out.stderr);
    assert_no_panic(&args, &out.stderr);
    let run: Run = parse_strict(&out.stdout);
    assert!(run.complete, "the run went on to its end");
    let r = &run.results[0];
    assert_eq!(r.status, Status::Failed, "{:?}", r.reason);
    let why = r.reason.as_deref().unwrap_or("");
    assert!(
        why.contains("worker process") && why.contains("signal 9"),
        "{why}"
    );
    assert_nothing_left(pid, &seen);
}

/// Sends SIGKILL to `pid` with the `kill` command (this test crate has no unsafe).
fn kill_9(pid: u32) -> bool {
    Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn interrupt_keeps_what_was_measured_and_stops_the_load() {
    let _alone = exclusive();
    let started = Instant::now();
    let args = ["run", "--profile", "thorough", "--load", "1", "syscall.*"];
    let child = Running::start(&[&args[..], &["--format", "json"]].concat());
    let pid = child.pid();
    let mut seen = BTreeSet::new();
    while seen.is_empty() || started.elapsed() < Duration::from_millis(1500) {
        assert!(
            started.elapsed() < TIMEOUT,
            "the background load never started"
        );
        seen.extend(child.children());
        std::thread::sleep(Duration::from_millis(10));
    }
    interrupt(&child);
    let out = child.finish_watching(|c| seen.extend(c.children()));
    assert_eq!(out.code, Some(130), "stderr:\n{}", out.stderr);
    assert_no_panic(&args, &out.stderr);
    assert!(out.stderr.contains("interrupted"), "{}", out.stderr);
    let run: Run = parse_strict(&out.stdout);
    assert!(!run.complete, "an interrupted run is not complete");
    assert_nothing_left(pid, &seen);
}

// ---------------------------------------------------------------------------------------
// proc.*: the helper is the real binary here

#[test]
fn proc_exec_and_spawn_run_the_real_helper() {
    let run = run_json(&["proc.exec", "proc.spawn"], &[]);
    let names: Vec<&str> = run.results.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["proc.exec", "proc.spawn"]);
    for r in &run.results {
        assert_eq!(r.status, Status::Ok, "{}: {:?}", r.name, r.reason);
        let m = r.measured.as_ref().expect("figures");
        // Long operations, timed one by one: a positive, finite time (no upper bound:
        // a debug build on a loaded machine may take milliseconds).
        assert!(m.median_ns.is_finite() && m.median_ns > 0.0, "{}", r.name);
        assert_eq!(m.batch, 1, "{}: timed one by one", r.name);
        let fact = |n: &str| {
            r.facts
                .iter()
                .find(|f| f.name == n)
                .unwrap_or_else(|| panic!("{}: no fact {n}: {:?}", r.name, r.facts))
                .value
        };
        let (p50, p90, p99, max) = (
            fact("p50_us"),
            fact("p90_us"),
            fact("p99_us"),
            fact("max_us"),
        );
        assert!(
            0.0 < p50 && p50 <= p90 && p90 <= p99 && p99 <= max,
            "{}: {p50} {p90} {p99} {max}",
            r.name
        );
    }
}

#[test]
fn the_helper_mode_exits_at_once() {
    let out = syscost(&["--syscost-helper-exit"]);
    assert_eq!(out.code, Some(0));
    assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("", ""));
}

// ---------------------------------------------------------------------------------------
// exec

/// A strict mirror of `syscost exec --format json` (documented in `src/cli/exec.rs`).
mod exec_doc {
    #![allow(dead_code)]
    use serde::{Deserialize, Serialize};
    use std::collections::BTreeMap;

    #[derive(Debug, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Doc {
        pub command: Vec<String>,
        pub tics_per_sec: Option<i64>,
        pub runs: Vec<Run>,
        pub summary: BTreeMap<String, Stat>,
        pub exit_code: u8,
    }

    #[derive(Debug, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Run {
        pub exit: Exit,
        pub real_us: f64,
        pub user_us: f64,
        pub sys_us: f64,
        pub cpu_us: f64,
        pub maxrss_kib: u64,
        pub minor_faults: u64,
        pub major_faults: u64,
        pub in_blocks: u64,
        pub out_blocks: u64,
        pub signals: u64,
        pub vol_switches: u64,
        pub invol_switches: u64,
        pub times: Option<Times>,
    }

    #[derive(Debug, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Exit {
        pub code: Option<i32>,
        pub signal: Option<i32>,
    }

    #[derive(Debug, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Times {
        pub user_tics: i64,
        pub sys_tics: i64,
        pub user_us: f64,
        pub sys_us: f64,
    }

    #[derive(Debug, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Stat {
        pub median: f64,
        pub min: f64,
        pub max: f64,
        pub mean: f64,
    }
}

/// The value in the second column of the table row labelled `label`.
fn exec_row<'a>(table: &'a str, label: &str) -> &'a str {
    table
        .lines()
        .find_map(|l| {
            let rest = l.strip_prefix(label)?;
            rest.starts_with("  ").then(|| rest.trim())
        })
        .unwrap_or_else(|| panic!("no row {label}:\n{table}"))
}

#[test]
fn exec_reports_the_childs_usage() {
    let out = success(&["exec", "--", "true"]);
    assert_eq!(out.stdout, "", "the report goes to stderr");
    assert_eq!(exec_row(&out.stderr, "command"), "true");
    assert_eq!(exec_row(&out.stderr, "status"), "exit status 0");
    for label in [
        "real",
        "user",
        "system",
        "total CPU (user+system)",
        "max resident set",
        "minor faults",
        "major faults",
        "blocks in",
        "blocks out",
        "signals",
        "voluntary switches",
        "involuntary switches",
    ] {
        exec_row(&out.stderr, label);
    }
    assert!(exec_row(&out.stderr, "max resident set").ends_with(" KiB"));
}

#[test]
fn exec_returns_the_commands_status() {
    let out = syscost(&["exec", "--", "sh", "-c", "exit 3"]);
    assert_eq!(out.code, Some(3), "{}", out.stderr);
    assert_eq!(exec_row(&out.stderr, "status"), "exit status 3");
    let out = syscost(&["exec", "--", "sh", "-c", "kill -KILL $$"]);
    assert_eq!(out.code, Some(128 + 9), "{}", out.stderr);
    assert!(
        exec_row(&out.stderr, "status").contains("SIGKILL"),
        "{}",
        out.stderr
    ); // SIGPIPE is at its default action in the command, not ignored as in syscost.
    let out = syscost(&["exec", "--", "sh", "-c", "kill -PIPE $$; exit 7"]);
    assert_eq!(out.code, Some(128 + 13), "{}", out.stderr);
}

#[test]
fn exec_leaves_standard_output_to_the_command() {
    let dir = TempDir::new("exec");
    let file = dir.0.join("report.json");
    let f = file.to_str().expect("a UTF-8 temporary path");
    let args = ["exec", "--format", "json", "-o", f, "--", "echo", "hello"];
    let out = success(&args);
    assert_eq!(out.stdout, "hello\n");
    assert_eq!(out.stderr, "");
    let doc: exec_doc::Doc =
        parse_strict(&std::fs::read_to_string(&file).expect("report"));
    assert_eq!(doc.command, ["echo", "hello"]);
}

#[test]
fn exec_json_gives_statistics_over_the_runs() {
    let out = success(&["exec", "-n", "3", "--format", "json", "--", "true"]);
    let doc: exec_doc::Doc = parse_strict(&out.stderr);
    assert_eq!(doc.command, ["true"]);
    assert_eq!(doc.runs.len(), 3);
    assert_eq!(doc.exit_code, 0);
    assert_eq!(doc.tics_per_sec, None);
    for r in &doc.runs {
        assert_eq!((r.exit.code, r.exit.signal), (Some(0), None));
        assert!(r.real_us > 0.0 && r.real_us < 60e6, "{r:?}");
        assert!((r.cpu_us - r.user_us - r.sys_us).abs() < 1e-6, "{r:?}");
        assert!(r.maxrss_kib > 0 && r.minor_faults > 0, "{r:?}");
        assert!(r.times.is_none());
    }
    let keys: Vec<&str> = doc.summary.keys().map(String::as_str).collect();
    for k in ["real_us", "cpu_us", "maxrss_kib", "vol_switches"] {
        assert!(keys.contains(&k), "{keys:?}");
    }
    for (k, s) in &doc.summary {
        assert!(
            s.min <= s.median && s.median <= s.max && s.min <= s.mean && s.mean <= s.max,
            "{k}: {s:?}"
        );
    }
    let real: Vec<f64> = doc.runs.iter().map(|r| r.real_us).collect();
    let s = &doc.summary["real_us"];
    assert_eq!(s.min, real.iter().cloned().fold(f64::INFINITY, f64::min));
}

#[test]
fn exec_times_shows_tics() {
    let out = success(&["exec", "--times", "--", "true"]);
    let tics: i64 = exec_row(&out.stderr, "tics per second")
        .parse()
        .expect("a number");
    assert!(tics > 0, "{tics}");
    let user = exec_row(&out.stderr, "user (times)");
    assert!(
        user.contains(" tics = ") || user.contains(" tic = "),
        "{user}"
    );
    let out = success(&["exec", "--times", "--format", "json", "--", "true"]);
    let doc: exec_doc::Doc = parse_strict(&out.stderr);
    assert_eq!(doc.tics_per_sec, Some(tics));
    let t = doc.runs[0].times.as_ref().expect("the times view");
    assert!(t.user_tics >= 0 && t.sys_tics >= 0, "{t:?}");
    assert!(doc.summary.contains_key("times_user_tics"));
}

#[test]
fn exec_refuses_a_command_it_cannot_start() {
    let args = ["exec", "--", "syscost-no-such-command"];
    let out = syscost(&args);
    assert_eq!(out.code, Some(127), "{}", out.stderr);
    assert_no_panic(&args, &out.stderr);
    let line = one_line(&args, &out.stderr);
    assert!(line.contains("syscost-no-such-command"), "{line}");
    // Found but not executable: 126, as shells say.
    let dir = TempDir::new("exec-noexec");
    let file = dir.0.join("not-executable");
    std::fs::write(&file, "#!/bin/sh\n").expect("write");
    let f = file.to_str().expect("a UTF-8 temporary path");
    let args = ["exec", "--", f];
    let out = syscost(&args);
    assert_eq!(out.code, Some(126), "{}", out.stderr);
    one_line(&args, &out.stderr);
    // No command at all is a usage error.
    refused(&["exec"]);
    refused(&["exec", "-n", "0", "--", "true"]);
}

#[test]
fn exec_survives_sigint_while_the_command_runs() {
    let _lock = shared();
    let child = Running::start(&["exec", "--", "sleep", "1"]);
    // syscost ignores SIGINT before it starts the command: wait for the command.
    let started = Instant::now();
    while child.children().is_empty() {
        assert!(started.elapsed() < TIMEOUT, "the command never started");
        std::thread::sleep(Duration::from_millis(5));
    }
    interrupt(&child); // syscost only: the command, not signalled, runs on
    let out = child.finish();
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(exec_row(&out.stderr, "status"), "exit status 0");
}

#[test]
fn exec_stops_the_series_when_the_command_is_interrupted() {
    let args = ["exec", "-n", "3", "--format", "json", "--"];
    let out = syscost(&[&args[..], &["sh", "-c", "kill -INT $$; exit 0"]].concat());
    let doc: exec_doc::Doc = parse_strict(&out.stderr);
    // Started with SIGINT ignored (a background job of a non-interactive shell is),
    // syscost leaves it ignored in the command, as `time` does: the shell survives.
    if sigint_ignored_here() {
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        assert_eq!(doc.runs.len(), 3, "the ignored SIGINT ends nothing");
        return;
    }
    assert_eq!(out.code, Some(128 + 2), "{}", out.stderr);
    assert_eq!(doc.runs.len(), 1, "a run killed by SIGINT ends the series");
    assert_eq!(doc.runs[0].exit.signal, Some(2));
    assert_eq!(doc.exit_code, 130);
}

/// Whether this test process was started with SIGINT ignored (/proc/self/status).
fn sigint_ignored_here() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let mask = status
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .expect("a SigIgn line");
    mask & (1 << (libc::SIGINT - 1)) != 0
}

// Memory and file benchmarks

fn fact(r: &BenchResult, name: &str) -> f64 {
    let f = r.facts.iter().find(|f| f.name == name);
    f.unwrap_or_else(|| panic!("{} has no fact {name}: {:?}", r.name, r.facts))
        .value
}

/// brk runs only in a single-threaded process, which `syscost run` is; the fault
/// benchmarks account one minor fault per page.
#[test]
fn memory_benchmarks_run_and_account_their_faults() {
    let run = run_json(&["mem.brk", "mem.fault.zero", "mem.fault.cow"], &[]);
    assert_eq!(run.results.len(), 3);
    for r in &run.results {
        assert_eq!(r.status, Status::Ok, "{}: {:?}", r.name, r.reason);
        let m = r.measured.as_ref().expect("measured");
        assert!(m.median_ns > 0.0 && m.median_ns < 1e6, "{}", r.name);
        if r.name.starts_with("mem.fault.") {
            let faults = fact(r, "minor_faults_per_page");
            assert!((0.9..1.1).contains(&faults), "{}: {faults}", r.name);
        }
    }
}

/// The test file goes to --dir, leaves nothing there, and every cold sample is
/// verified out of the cache on a disk file system.
#[test]
fn file_reads_use_dir_and_leave_nothing_behind() {
    let dir = TempDir::new("file");
    let path = dir.0.to_str().expect("a UTF-8 temporary path");
    let extra = ["--dir", path, "-p", "method=read,mmap", "-p", "size=4k"];
    let run = run_json(&["file.read"], &extra);
    assert_eq!(run.results.len(), 4);
    for r in &run.results {
        assert_eq!(r.status, Status::Ok, "{}: {:?}", r.name, r.reason);
        assert!(fact(r, "mb_per_s") > 0.0);
        if r.params["cache"] == "cold" && !r.op.contains("NOT verified") {
            assert_eq!(fact(r, "cold_verified"), 1.0, "{:?}", r.facts);
        }
    }
    assert!(dir.entries().is_empty(), "left behind: {:?}", dir.entries());
}

#[test]
fn a_missing_dir_is_refused_in_one_line() {
    let args = [
        "run",
        "file.read",
        "--dir",
        "/nonexistent/syscost",
        "--profile",
        "smoke",
    ];
    let line = one_line(&args, &refused(&args)).to_string();
    assert!(line.contains("--dir"), "{line}");
}

#[test]
#[ignore = "slow: every section of a paper; perez1976 is the fast repro; .ci/run runs it"]
fn repro_manea1999_prints_every_section() {
    let out = success(&["repro", "manea1999", "--profile", "smoke"]);
    for needle in [
        "§3",
        "getppid()",
        "§4",
        "signal",
        "§5",
        "§6",
        "fastest today",
    ] {
        assert!(out.stdout.contains(needle), "no {needle}:\n{}", out.stdout);
    }
}

#[test]
#[ignore = "slow: the whole reproduction; .ci/run runs it"]
fn repro_nagy_vms_prints_both_tables() {
    let out = success(&["repro", "nagy-vms", "--profile", "smoke", "--load", "1"]);
    let text = &out.stdout;
    for needle in [
        "Table I",
        "Event flag services",
        "$DCLAST",
        "Memory management services",
        "Table III",
        "Shared memory",
        "beside 1 spinning",
    ] {
        assert!(text.contains(needle), "no {needle}:\n{text}");
    }
    for bad in ["no benchmark", "has no parameter"] {
        assert!(!text.contains(bad), "{bad}:\n{text}");
    }
    // Every Table I counterpart has a median or says why not: a line naming a
    // benchmark carries a time or a reason after the "-".
    let timed = |l: &str| [" ns ", " µs ", " ms "].iter().any(|u| l.contains(u));
    let analogs: Vec<&str> = text
        .lines()
        .take_while(|l| !l.starts_with("Table III"))
        .filter(|l| l.contains("svc.") || l.contains("signal.") || l.contains("mem."))
        .collect();
    assert!(analogs.len() >= 35, "{}", analogs.len());
    for l in analogs {
        let reason = l
            .split_once(" -  ")
            .is_some_and(|(_, why)| !why.trim().is_empty());
        assert!(timed(l) || reason, "neither a time nor a reason: {l}");
    }
    let rows = text
        .lines()
        .filter(|l| {
            ["Single user", "Multi-user", "Shared memory"]
                .iter()
                .any(|c| l.starts_with(c))
        })
        .count();
    assert_eq!(rows, 8, "{text}");
}

#[test]
fn repro_load_is_for_nagy_vms_only_and_bounded() {
    let args = ["repro", "sloan1992", "--load", "1", "--profile", "smoke"];
    let line = one_line(&args, &refused(&args)).to_string();
    assert!(line.contains("--load"), "{line}");
    // Refused before anything runs, like `run --load`.
    let args = [
        "repro",
        "nagy-vms",
        "--load",
        "100000",
        "--profile",
        "smoke",
    ];
    let line = one_line(&args, &refused(&args)).to_string();
    assert!(line.contains("--load 100000"), "{line}");
}

// ---------------------------------------------------------------------------------------
// Context switches

#[test]
fn ring_json_has_the_papers_table() {
    let run = run_json(
        &["ctx.ring"],
        &["-p", "n=2,4,8", "-p", "placement=same-cpu"],
    );
    assert_eq!(run.results.len(), 3);
    for r in &run.results {
        check_measured(r);
        let fact = |name: &str| r.facts.iter().find(|f| f.name == name).map(|f| f.value);
        let per_hop = r.measured.as_ref().unwrap().median_ns;
        assert!(per_hop > 0.0 && per_hop < 1e6, "{per_hop}");
        // On one CPU every hop is a switch: the ring's tasks switch at least once per
        // hop in all (voluntarily, or preempted by the task they woke).
        let switches = fact("vol_per_hop").unwrap() + fact("invol_per_hop").unwrap();
        assert!(switches > 0.9, "{switches} switches per hop");
        assert!(fact("cpu_us_per_pass").unwrap() > 0.0);
        assert!(fact("pipe_ns").unwrap() > 0.0);
    }
    assert_eq!(run.rings.len(), 1);
    let t = &run.rings[0];
    let ns: Vec<u64> = t.rows.iter().map(|r| r.n).collect();
    assert_eq!(ns, [2, 4, 8]);
    assert_eq!(
        t.rows[0].cpu_over_projected,
        Some(1.0),
        "projected from the smallest ring"
    );
    assert!(t.growth_exponent.is_some());
}

#[test]
fn pingpong_reports_the_one_way_estimate_and_the_contrast() {
    // The facts under each row are notes that --verbose prints.
    let out = run_smoke(
        &["ctx.pingpong"],
        &[
            "-p",
            "mechanism=pipe,signal",
            "-p",
            "placement=same-cpu",
            "--verbose",
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stdout.contains("one_way_ns"), "{}", out.stdout);
    // By default, one line a row: the group's header says what one operation is.
    let plain = run_smoke(
        &["ctx.pingpong"],
        &["-p", "mechanism=pipe,signal", "-p", "placement=same-cpu"],
    );
    assert_eq!(plain.code, Some(0), "{}", plain.stderr);
    assert!(!plain.stdout.contains("one_way_ns"), "{}", plain.stdout);
    assert!(
        plain.stdout.contains("· per round trip"),
        "{}",
        plain.stdout
    );
    assert!(
        out.stdout.contains("ping-pong vs pipe") && out.stdout.contains("signal "),
        "{}",
        out.stdout
    );
}

#[test]
fn an_interrupted_ring_of_256_leaves_no_process() {
    let _alone = exclusive();
    let args = [
        "run",
        "ctx.ring",
        "-p",
        "n=256",
        "-p",
        "placement=free",
        "--profile",
        "thorough",
    ];
    let child = Running::start(&args);
    let pid = child.pid();
    let started = Instant::now();
    let mut seen = BTreeSet::new();
    // Wait until the ring is built (255 children), then interrupt it mid-run.
    while seen.len() < 255 {
        assert!(
            started.elapsed() < TIMEOUT,
            "the ring never formed: {}",
            seen.len()
        );
        seen.extend(child.children());
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(200));
    interrupt(&child);
    let out = child.finish_watching(|c| seen.extend(c.children()));
    assert_eq!(out.code, Some(130), "stderr:\n{}", out.stderr);
    assert_no_panic(&args, &out.stderr);
    assert_nothing_left(pid, &seen);
}

#[test]
#[ignore = "slow: the ring at every size; perez1976 is the fast repro; .ci/run runs it"]
fn repro_sloan1992_prints_the_nine_systems_beside_this_machine() {
    let out = success(&["repro", "sloan1992", "--profile", "smoke"]);
    for needle in [
        "Sun Microsystems Sun-4/280",
        "n=16",
        "this machine, ring same-cpu",
        "this machine, ring free",
        "ring table ctx.ring",
    ] {
        assert!(out.stdout.contains(needle), "no {needle}:\n{}", out.stdout);
    }
}

// ---------------------------------------------------------------------------------------
// ipc.*: message round trips and streams between two processes

#[test]
#[ignore = "slow: every transport of ipc.rtt; .ci/run runs it"]
fn ipc_rtt_measures_or_skips_every_transport() {
    let run = run_json(&["ipc.rtt"], &["-p", "size=4,4096"]);
    let transports = [
        "pipe",
        "unix_stream",
        "unix_dgram",
        "socketpair",
        "posix_mq",
        "sysv_msg",
        "shm_futex",
        "tcp",
        "udp",
    ];
    assert_eq!(run.results.len(), 2 * transports.len());
    for t in transports {
        for size in ["4", "4096"] {
            let r = run
                .results
                .iter()
                .find(|r| r.params["transport"] == t && r.params["size"] == size)
                .unwrap_or_else(|| panic!("no result for {t} size={size}"));
            match r.status {
                Status::Skipped => {
                    let why = r.reason.as_deref().unwrap_or("");
                    assert!(why.len() > 10, "{t} {size}: skipped without a reason");
                }
                _ => {
                    check_measured(r);
                    let m = r.measured.as_ref().expect("figures");
                    assert!(m.median_ns > 0.0 && m.median_ns < 10e6, "{t} {size}");
                    assert!(fact(r, "overhead_us") > 0.0, "{t} {size}");
                    assert!(fact(r, "bandwidth") > 0.0, "{t} {size}");
                }
            }
        }
    }
}

#[test]
fn ipc_bw_reports_the_bandwidth() {
    let run = run_json(
        &["ipc.bw"],
        &["-p", "transport=pipe,tcp", "-p", "size=4096"],
    );
    assert_eq!(run.results.len(), 2);
    for r in &run.results {
        check_measured(r);
        assert!(fact(r, "bandwidth") > 0.0, "{:?}", r.params);
    }
}

/// The System V queues now, as (id, last sender pid, last receiver pid).
fn sysv_queues() -> Vec<(u64, u32, u32)> {
    let text = std::fs::read_to_string("/proc/sysvipc/msg").unwrap_or_default();
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((
                f.get(1)?.parse().ok()?,
                f.get(5)?.parse().ok()?,
                f.get(6)?.parse().ok()?,
            ))
        })
        .collect()
}

/// `ipcs -q -p` as (id, last sender pid, last receiver pid), or None without ipcs.
fn ipcs_queues() -> Option<Vec<(u64, u32, u32)>> {
    let out = Command::new("ipcs").args(["-q", "-p"]).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    Some(
        text.lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                Some((
                    f.first()?.parse().ok()?,
                    f.get(2)?.parse().ok()?,
                    f.get(3)?.parse().ok()?,
                ))
            })
            .collect(),
    )
}

/// Queues that are new since `before` and were used by `ours` (or never used at all).
fn new_queues(
    before: &[(u64, u32, u32)],
    now: &[(u64, u32, u32)],
    ours: &BTreeSet<u32>,
) -> Vec<(u64, u32, u32)> {
    now.iter()
        .filter(|q| !before.iter().any(|b| b.0 == q.0))
        .filter(|q| ours.contains(&q.1) || ours.contains(&q.2) || (q.1 == 0 && q.2 == 0))
        .copied()
        .collect()
}

#[test]
fn an_interrupted_ipc_run_leaves_no_queue_socket_or_process() {
    let _alone = exclusive();
    let sysv_before = sysv_queues();
    let ipcs_before = ipcs_queues();
    let args = [
        "run",
        "ipc.rtt",
        "-p",
        "transport=posix_mq,sysv_msg,unix_stream,unix_dgram,shm_futex",
        "--profile",
        "standard",
    ];
    let child = Running::start(&args);
    let pid = child.pid();
    let started = Instant::now();
    let mut seen = BTreeSet::new();
    while seen.is_empty() || started.elapsed() < Duration::from_millis(1500) {
        assert!(started.elapsed() < TIMEOUT, "no slave was ever forked");
        seen.extend(child.children());
        std::thread::sleep(Duration::from_millis(5));
    }
    interrupt(&child);
    let out = child.finish_watching(|c| seen.extend(c.children()));
    assert_eq!(out.code, Some(130), "stderr:\n{}", out.stderr);
    assert_no_panic(&args, &out.stderr);
    assert_nothing_left(pid, &seen);

    let mut ours = seen.clone();
    ours.insert(pid);
    let left = new_queues(&sysv_before, &sysv_queues(), &ours);
    assert!(left.is_empty(), "System V queues left: {left:?}");
    if let (Some(before), Some(now)) = (ipcs_before, ipcs_queues()) {
        let left = new_queues(&before, &now, &ours);
        assert!(left.is_empty(), "ipcs -q shows queues left: {left:?}");
    }

    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    let prefix = format!("syscost-ipc-{pid}-");
    if let Some(dir) = mounts
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.get(2) == Some(&"mqueue"))
        .and_then(|f| f.get(1).map(|d| d.to_string()))
    {
        let names: Vec<String> = std::fs::read_dir(&dir)
            .expect("list the mqueue file system")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.starts_with(&prefix))
            .collect();
        assert!(names.is_empty(), "POSIX queues left in {dir}: {names:?}");
    }
    // Whether or not the mqueue file system is mounted, open every name the run could
    // have used: none may exist.
    for n in 0..64 {
        for dir in ["m2s", "s2m"] {
            let name = syscost::bench::ipc::link::posix_queue_name(pid, n, dir);
            let exists = syscost::os::ipc::posix_queue_exists(&name)
                .unwrap_or_else(|e| panic!("mq_open {name}: {e}"));
            assert!(!exists, "POSIX queue {name} was left");
        }
    }
    let base = syscost::bench::ipc::link::socket_dir_base();
    let sockets: Vec<String> = std::fs::read_dir(&base)
        .expect("list the temporary directory")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(&prefix))
        .collect();
    assert!(
        sockets.is_empty(),
        "socket directories left in {}: {sockets:?}",
        base.display()
    );
}

#[test]
#[ignore = "slow: the whole svc family; .ci/run runs it"]
fn svc_runs_every_service_or_skips_it_with_a_reason() {
    let run = run_json(&["svc"], &[]);
    assert!(run.complete);
    let names: BTreeSet<&str> = run.results.iter().map(|r| r.name.as_str()).collect();
    for want in [
        "svc.ef.set",
        "svc.wake.other",
        "svc.timer.cancel_all",
        "svc.sleep",
    ] {
        assert!(names.contains(want), "no {want}: {names:?}");
    }
    for r in &run.results {
        let what = format!("{} {:?}", r.name, r.params);
        if r.status == Status::Skipped {
            assert!(
                r.reason.as_deref().is_some_and(|s| !s.is_empty()),
                "{what}: skipped without a reason"
            );
            continue;
        }
        let fact = |name: &str| r.facts.iter().find(|f| f.name == name).map(|f| f.value);
        if r.name == "svc.sleep" {
            // A sleep lasts at least what it asked for, so it may pass 1 ms.
            assert_eq!(r.status, Status::Ok, "{what}: {:?}", r.reason);
            let asked: f64 = r.params["ns"].parse().unwrap();
            let m = r.measured.as_ref().expect("measured");
            assert!(m.median_ns >= asked, "{what}: {}", m.median_ns);
            assert!(fact("overshoot_p50_ns").unwrap() >= 0.0, "{what}");
            continue;
        }
        check_measured(r);
        assert!(r.measured.as_ref().unwrap().median_ns > 0.0, "{what}");
        if r.name.starts_with("svc.wake.") && r.name != "svc.wake.self" {
            assert!(fact("woken_fraction").unwrap() > 0.5, "{what}");
        }
        if r.name.starts_with("svc.timer.")
            && r.params.get("api").map(String::as_str) != Some("timerfd")
        {
            assert_eq!(fact("fired"), Some(0.0), "{what}: a timer fired");
        }
    }
}

#[test]
#[ignore = "slow: the whole signal family; .ci/run runs it"]
fn the_signal_family_measures_or_skips_and_leaves_no_child() {
    let _alone = exclusive();
    let args = ["run", "signal", "--profile", "smoke", "--format", "json"];
    let child = Running::start(&args);
    let pid = child.pid();
    let mut seen = BTreeSet::new();
    let out = child.finish_watching(|c| seen.extend(c.children()));
    assert_eq!(out.code, Some(0), "stderr:\n{}", out.stderr);
    assert_no_panic(&args, &out.stderr);
    assert_nothing_left(pid, &seen);
    assert!(
        !seen.is_empty(),
        "queue, queue_rtt, stop and cont fork children"
    );
    let run: Run = parse_strict(&out.stdout);
    let names: BTreeSet<&str> = run.results.iter().map(|r| r.name.as_str()).collect();
    // The ten of the family's own, and will-it-scale's signal1 (signal.raise): named
    // by the family's name, a run selects its named-only benchmarks too.
    assert_eq!(names.len(), 11, "{names:?}");
    assert!(names.contains("signal.raise"), "{names:?}");
    for r in &run.results {
        match r.status {
            Status::Skipped => assert!(
                r.reason.as_deref().is_some_and(|w| !w.is_empty()),
                "{} skipped without a reason",
                r.name
            ),
            _ => check_measured(r),
        }
    }
}

// ---------------------------------------------------------------------------------------
// history and compare

#[test]
fn a_run_slower_than_the_machines_earlier_runs_says_so_before_and_after() {
    use syscost::store::{History, Origin};
    let dir = TempDir::new("spell");
    let path = dir.0.join("history.db");
    let db = path.to_str().expect("UTF-8 path");
    for _ in 0..2 {
        run_smoke(&["syscall.getpid"], &["--db", db]);
    }
    // The same runs again, as if the machine had read its canary four times faster
    // then; the real ones removed.
    {
        let mut h = History::open(&path, false).expect("the history");
        for id in [1, 2] {
            let mut run = h.load(id).expect("run");
            for s in &mut run.machine.states {
                s.median_ns /= 4.0;
            }
            h.save(&run, Origin::Run).expect("save");
            assert!(h.remove(id).expect("remove"));
        }
    }
    let out = run_smoke(&["syscall.getpid"], &["--db", db]);
    let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let before = flat(&out.stderr);
    assert!(
        before.contains("the machine reads")
            && before.contains("slower than in its last 2 runs"),
        "{}",
        out.stderr
    );
    let after = flat(&out.stdout);
    assert!(
        after.contains("the machine ran")
            && after.contains("slower than in its last 2 runs"),
        "{}",
        out.stdout
    );
}

#[test]
fn the_machines_movement_between_its_runs_is_what_it_allows_where_larger() {
    let dir = TempDir::new("movement");
    let path = dir.0.join("history.db");
    let db = path.to_str().expect("UTF-8 path");
    let mut runs: Vec<Run> = Vec::new();
    // Three runs of one row, then a row the history has no run of: its interval is
    // the machine source's.
    for name in [
        "syscall.getpid",
        "syscall.getpid",
        "syscall.getpid",
        "syscall.getppid",
    ] {
        runs.push(run_json(&[name], &["--db", db]));
    }
    // Two earlier runs do not say how far the machine moves between runs; three do.
    for f in runs[..3].iter().flat_map(|r| &r.machine.floors) {
        assert_eq!(
            (f.between_pct, f.past_runs, f.within_pct),
            (None, None, None),
            "{f:?}"
        );
    }
    let fourth = &runs[3];
    for f in &fourth.machine.floors {
        let past: Vec<f64> = runs[..3]
            .iter()
            .filter_map(|r| r.machine.floors.iter().find(|g| g.kind == f.kind))
            .map(|g| g.median_ns.ln())
            .collect();
        if past.len() < 3 {
            continue;
        }
        let mean = past.iter().sum::<f64>() / 3.0;
        let s = (past.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
        let between = f.between_pct.expect("three earlier runs");
        assert_eq!(f.past_runs, Some(3), "{f:?}");
        // t(0.975, 2) · √2 · s, in %.
        assert!(
            (between - 4.303 * std::f64::consts::SQRT_2 * s * 100.0).abs() < 1e-6,
            "{f:?} against the earlier runs' medians {past:?}"
        );
        let within = f.within_pct.expect("beside it");
        assert!((f.floor_pct - within.max(between)).abs() < 1e-9, "{f:?}");
    }
    // The row is held to at least its kind's movement between runs.
    let m = fourth.results[0].measured.as_ref().expect("measured");
    assert!(
        m.between_runs.is_none(),
        "no run of its own in the history: {m:?}"
    );
    let kind = fourth
        .machine
        .floors
        .iter()
        .find(|f| Some(f.kind.as_str()) == m.work.as_deref())
        .expect("its kind's floor");
    let between = kind.between_pct.expect("three earlier runs");
    assert!(
        m.floor_pct.expect("held") >= between - 1e-9,
        "{m:?} beside {kind:?}"
    );
}

#[test]
fn runs_are_saved_listed_compared_exported_and_removed() {
    let dir = TempDir::new("history");
    let db = dir.0.join("history.db");
    let db = db.to_str().expect("UTF-8 path");
    // Rows whose rounds met the machine in a slow state (a loaded machine's, as under
    // cargo's parallel tests), which stay out of the spread between runs.
    let mut slow = BTreeSet::new();
    let mut first: Option<Run> = None;
    for expect_id in ["1", "2"] {
        let out = run_smoke(
            &["syscall.getpid*", "syscall.getppid"],
            &["--db", db, "--format", "json"],
        );
        assert!(
            out.stderr.contains(&format!("saved as run {expect_id} in")),
            "{}",
            out.stderr
        );
        let run: Run = parse_strict(&out.stdout);
        for r in &run.results {
            if r.measured
                .as_ref()
                .is_some_and(|m| m.slow_state_pct.is_some())
            {
                slow.insert(r.name.clone());
            }
        }
        first.get_or_insert(run);
    }
    // A third run has two earlier ones: its intervals are set from the spread between
    // runs, in place of the machine's floor: q(3) = 2.8137 times the three figures'
    // standard deviation each side, or, where that is narrower, 1.96 of the standard
    // errors that side of the rounds' own interval stands for (less than the side
    // itself).
    let third = run_json(&["syscall.getpid*", "syscall.getppid"], &["--db", db]);
    for r in &third.results {
        let m = r.measured.as_ref().expect("measured");
        if m.slow_state_pct.is_some() || slow.contains(&r.name) {
            // Its own figure, or one of the two before it, is a slow state's: fewer
            // than two of the base state's runs to take a spread from.
            assert!(m.between_runs.is_none(), "{m:?}");
            assert!(m.slow_state_pct.is_none() || !m.converged, "{m:?}");
            continue;
        }
        let b = m.between_runs.as_ref().expect("widened by the history");
        assert_eq!(b.runs, 2);
        assert!(b.sd_ns >= 0.0 && b.sd_ns.is_finite());
        let (own_low, own_high) = match (m.own_ci_low_ns, m.own_ci_high_ns) {
            (Some(lo), Some(hi)) => (lo, hi),
            _ => (b.run_ci_low_ns, b.run_ci_high_ns),
        };
        assert!(
            own_low >= b.run_ci_low_ns && own_high <= b.run_ci_high_ns,
            "{m:?}"
        );
        let spread = 2.8137 * b.sd_ns;
        // The low side stops at zero (a time is not negative).
        for (side, own, most) in [
            (
                m.median_ns - m.ci_low_ns,
                m.median_ns - own_low,
                m.median_ns,
            ),
            (
                m.ci_high_ns - m.median_ns,
                own_high - m.median_ns,
                f64::INFINITY,
            ),
        ] {
            let eps = 1e-9 * m.median_ns;
            assert!(side >= spread.min(most) - eps, "{m:?}");
            assert!(side <= spread + eps || side < own, "{m:?}");
            assert!(side > 0.0, "{m:?}");
        }
    }
    // Run 1 reads back with the intervals and verdicts it printed, now that the
    // history holds two runs after it: in `history export` and `history show`.
    let printed = first.expect("run 1");
    for args in [
        vec!["history", "--db", db, "export", "1"],
        vec!["history", "--db", db, "show", "1", "--format", "json"],
    ] {
        let back: Run = parse_strict(&success(&args).stdout);
        assert_eq!(back.results.len(), printed.results.len(), "{args:?}");
        for (a, b) in printed.results.iter().zip(&back.results) {
            let (a, b) = (a.measured.as_ref(), b.measured.as_ref());
            let (a, b) = (a.expect("measured"), b.expect("measured"));
            assert_eq!(
                (a.ci_low_ns, a.ci_high_ns),
                (b.ci_low_ns, b.ci_high_ns),
                "{args:?}"
            );
            assert_eq!((a.converged, &a.why), (b.converged, &b.why), "{args:?}");
        }
    }
    // And its canary is set beside theirs.
    let past = third
        .machine
        .past
        .as_ref()
        .expect("beside the earlier runs");
    assert_eq!(past.runs, 2);
    assert!(past.low_ns > 0.0 && past.low_ns <= past.median_ns);
    assert!(
        past.median_ns <= past.high_ns && past.ratio > 0.0,
        "{past:?}"
    );
    success(&["history", "--db", db, "rm", "3"]);
    let listed = success(&["history", "--db", db, "list", "--format", "json"]).stdout;
    let entries: Value = serde_json::from_str(&listed).expect("history list JSON");
    let ids: Vec<i64> = entries
        .as_array()
        .expect("a list")
        .iter()
        .map(|e| e["id"].as_i64().expect("id"))
        .collect();
    assert_eq!(ids, [2, 1], "newest first");
    assert_eq!(entries[0]["ok"], 4);

    // Two runs of the same build: rows for every benchmark, each with a verdict.
    let table = success(&["compare", "last~1", "last", "--db", db]).stdout;
    assert!(
        table.contains("syscall.getppid") && table.contains("4 compared"),
        "{table}"
    );
    let json = success(&["compare", "1", "2", "--db", db, "--format", "json"]).stdout;
    let c: Value = serde_json::from_str(&json).expect("compare JSON");
    let rows = c["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 4);
    for r in rows {
        let (lo, ratio, hi) = (
            r["ci_low"].as_f64().unwrap(),
            r["ratio"].as_f64().unwrap(),
            r["ci_high"].as_f64().unwrap(),
        );
        assert!(lo > 0.0 && lo <= ratio && ratio <= hi, "{r}");
        assert!(["faster", "slower", "no_change", "cannot_tell"]
            .contains(&r["verdict"].as_str().unwrap()));
    }
    let md =
        success(&["compare", "1", "2", "1", "--db", db, "--format", "markdown"]).stdout;
    assert!(md.contains("ratio to A"), "{md}");

    // Export, then import: the same document, so every ratio is exactly 1.
    let file = dir.0.join("two.json");
    let file = file.to_str().unwrap();
    success(&["history", "--db", db, "export", "2", "-o", file]);
    let exported: Run = parse_strict(&std::fs::read_to_string(file).expect("exported"));
    assert_eq!(exported.results.len(), 4);
    let out = success(&["history", "--db", db, "import", file]).stdout;
    assert!(out.contains("as run 4"), "{out}");
    let json = success(&["compare", file, "4", "--db", db, "--format", "json"]).stdout;
    let c: Value = serde_json::from_str(&json).unwrap();
    for r in c["rows"].as_array().unwrap() {
        assert_eq!(r["ratio"].as_f64(), Some(1.0));
        // One run a side: no change when its interval lies within ±5%, else these
        // runs cannot tell; never a change.
        assert!(
            ["no_change", "cannot_tell"].contains(&r["verdict"].as_str().unwrap()),
            "{r}"
        );
    }
    // A gate with an unreachable threshold never finds a regression. Smoke runs of one
    // run a side may still have an interval past ×10 (few rounds, t at 1 or 2 degrees
    // of freedom): then it cannot tell (125), which a bisect skips.
    let gate = syscost(&[
        "compare",
        "1",
        "2",
        "--db",
        db,
        "--fail-on-regression",
        "900",
    ]);
    assert!(
        matches!(gate.code, Some(0 | 125)) && gate.stderr.contains("syscost: gate: "),
        "{:?} {}",
        gate.code,
        gate.stderr
    );
    let shown = success(&["history", "--db", db, "show", "last"]).stdout;
    assert!(shown.contains("syscall.getpid"), "{shown}");
    assert!(shown.contains("syscall.getppid"), "{shown}");
    // One benchmark's rows alone, as `run --verbose` prints them; a name the run lacks
    // is refused in one line.
    let one = success(&["history", "--db", db, "show", "last", "syscall.getppid"]).stdout;
    assert!(one.contains("syscall.getppid"), "{one}");
    assert!(!one.contains("syscall.getpid "), "{one}");
    assert!(
        one.contains("figure: per operation, empty-loop overhead subtracted"),
        "the verbose legend: {one}"
    );
    let e = refused(&["history", "--db", db, "show", "last", "proc.nosuch"]);
    assert!(one_line(&[], &e).contains("no row of proc.nosuch"), "{e}");

    success(&["history", "--db", db, "rm", "1"]);
    let e = refused(&["history", "--db", db, "show", "1"]);
    assert!(one_line(&[], &e).contains("no run 1"), "{e}");
    let e = refused(&["compare", "2", "last~5", "--db", db]);
    assert!(one_line(&[], &e).contains("holds 2 complete runs"), "{e}");
}

#[test]
fn bad_run_references_and_documents_are_refused_in_one_line() {
    let dir = TempDir::new("badrefs");
    let db = dir.0.join("none.db");
    let db = db.to_str().unwrap();
    let cut = dir.0.join("cut.json");
    std::fs::write(
        &cut,
        r#"{"schema_version": 2, "tool": "syscost", "results": ["#,
    )
    .unwrap();
    let other = dir.0.join("other.json");
    std::fs::write(&other, r#"{"context": {}, "benchmarks": []}"#).unwrap();
    let future = dir.0.join("future.json");
    std::fs::write(&future, r#"{"schema_version": 99, "tool": "syscost"}"#).unwrap();
    let foreign = dir.0.join("foreign.db");
    std::fs::write(&foreign, "not a database, just text long enough to be read").unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["compare", "1", "2", "--db", db], "no history"),
        (
            vec!["compare", cut.to_str().unwrap(), cut.to_str().unwrap()],
            "truncated",
        ),
        (
            vec!["compare", other.to_str().unwrap(), other.to_str().unwrap()],
            "not a syscost",
        ),
        (
            vec![
                "compare",
                future.to_str().unwrap(),
                future.to_str().unwrap(),
            ],
            "newer syscost",
        ),
        (vec!["compare", "nosuchfile.json", "1"], "not an id"),
        (vec!["compare", "0", "1"], "positive"),
        (vec!["compare", "1"], "SIDE"),
        (
            vec!["compare", "1", "2", "--threshold", "lots"],
            "percentage",
        ),
        (vec!["history", "--db", foreign.to_str().unwrap()], "not"),
        (vec!["history", "--db", db, "rm", "x"], "positive numbers"),
        (
            vec!["history", "--db", db, "import", other.to_str().unwrap()],
            "not a syscost",
        ),
        (
            vec!["run", "syscall.getpid", "--db", "/proc/nonexistent/h.db"],
            "--db",
        ),
    ];
    for (args, want) in cases {
        let e = refused(&args);
        let line = one_line(&args, &e);
        assert!(line.contains(want), "syscost {args:?}: {line}");
    }
    // Under a gate (`git bisect run`), a command the tool cannot carry out is its own
    // failure, 128, which stops a bisect, never 2, which would call the commit bad.
    for (args, want) in [
        (
            vec!["compare", "1", "2", "3", "--fail-on-regression", "5"],
            "exactly two",
        ),
        (vec!["compare", "1", "--fail-on-regression", "5"], "SIDE"),
        (
            vec!["compare", "1", "2", "--db", db, "--fail-on-regression", "5"],
            "no history",
        ),
    ] {
        let out = syscost(&args);
        assert_eq!(out.code, Some(128), "syscost {args:?}: {}", out.stderr);
        assert!(
            out.stderr.contains(want),
            "syscost {args:?}: {}",
            out.stderr
        );
        assert_no_panic(&args, &out.stderr);
    }
    assert!(
        !std::path::Path::new(db).exists(),
        "reading must not create a history"
    );
}

// ---------------------------------------------------------------------------------------
// Exports for other tools

#[test]
fn gbench_export_has_a_repetition_per_round_and_aggregates() {
    let text = run_to_file("gbench", &["syscall.getppid", "call.empty"]);
    let doc: Value = serde_json::from_str(&text).expect("Google Benchmark JSON");
    assert!(doc["context"]["date"].is_string() && doc["context"]["num_cpus"].is_u64());
    let benches = doc["benchmarks"].as_array().expect("benchmarks");
    // A benchmark's parameters follow its name (`syscall.getppid/via:libc`).
    for name in ["syscall.getppid/via:libc", "call.empty"] {
        let mine: Vec<&Value> =
            benches.iter().filter(|b| b["run_name"] == name).collect();
        let reps = mine.iter().filter(|b| b["run_type"] == "iteration").count();
        let aggs: Vec<&str> = mine
            .iter()
            .filter(|b| b["run_type"] == "aggregate")
            .map(|b| b["aggregate_name"].as_str().unwrap())
            .collect();
        // One entry per round with a clean median (smoke measures two rounds).
        assert!((1..=2).contains(&reps), "{name}: {reps} repetitions");
        for b in mine.iter().filter(|b| b["run_type"] == "iteration") {
            assert_eq!(b["repetitions"].as_u64(), Some(reps as u64), "{b}");
        }
        assert_eq!(aggs, ["mean", "median", "stddev", "cv"]);
        for b in &mine {
            assert_eq!(b["time_unit"], "ns");
            let t = b["real_time"].as_f64().expect("real_time");
            assert!(t.is_finite() && (0.0..1e6).contains(&t), "{b}");
        }
    }
}

#[test]
fn prometheus_export_is_valid_exposition_text() {
    let text = run_to_file("prometheus", &["syscall.getppid", "ctx.pingpong"]);
    let mut declared = BTreeSet::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let name = rest.split(' ').next().unwrap();
            assert!(declared.insert(name.to_string()), "{name} declared twice");
            assert!(rest.ends_with(" gauge"), "{line}");
            continue;
        }
        if line.starts_with("# HELP ") {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').expect("series and value");
        let name = series.split('{').next().unwrap();
        assert!(declared.contains(name), "{name} used before its TYPE line");
        assert!(name.starts_with("syscost_"), "{line}");
        let v: f64 = value.parse().expect("a number");
        assert!(v.is_finite(), "{line}");
        if name == "syscost_op_seconds" {
            // A yield hands the CPU to whatever else is runnable on it: beside the
            // other tests' runs, a scheduler slice (1.4 ms seen).
            let most = if series.contains("mechanism=\"yield\"") {
                0.1
            } else {
                1e-3
            };
            assert!(v > 0.0 && v < most, "{line}: a sanity range, not a speed");
        }
    }
    assert!(
        text.contains("syscost_op_seconds{benchmark=\"syscall.getppid\",via=\"libc\"}"),
        "{text}"
    );
    assert!(
        text.contains("mechanism=\""),
        "parameters become labels: {text}"
    );
}

// ---------------------------------------------------------------------------------------
// report and plot

#[test]
fn report_and_plot_write_self_contained_files() {
    let dir = TempDir::new("report");
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/report-smoke.json"
    );
    let html = dir.0.join("r.html");
    let out = success(&["report", fixture, fixture, "-o", html.to_str().unwrap()]);
    assert_eq!(out.stdout, "");
    let text = std::fs::read_to_string(&html).expect("the report");
    assert!(
        text.starts_with("<!DOCTYPE html>"),
        "{}",
        &text[..100.min(text.len())]
    );
    assert!(text.matches("<svg").count() >= 3, "graphs in the report");
    for external in ["src=\"http", "href=\"http", "<script src", "<link"] {
        assert!(
            !text.contains(external),
            "the report refers outside itself: {external}"
        );
    }
    let svg = dir.0.join("f.svg");
    success(&[
        "plot",
        "forest",
        fixture,
        fixture,
        "-o",
        svg.to_str().unwrap(),
    ]);
    let s = std::fs::read_to_string(&svg).expect("the forest plot");
    assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
    let sweep = success(&["plot", "sweep", fixture]).stdout;
    assert!(sweep.starts_with("<svg"), "{sweep}");
    assert_eq!(
        dir.entries(),
        ["f.svg", "r.html"],
        "no temporary files left"
    );

    for (args, want) in [
        (vec!["plot", "forest", fixture], "two runs"),
        (vec!["plot", "samples", fixture], "--bench"),
        (vec!["plot", "nosuch", fixture], "nosuch"),
        (vec!["report", fixture], "--output"),
    ] {
        let e = refused(&args);
        assert!(one_line(&args, &e).contains(want), "syscost {args:?}: {e}");
    }
}

#[test]
fn a_sysv_queue_does_not_outlive_a_sigkill() {
    if !std::path::Path::new("/proc/sysvipc/msg").exists() {
        eprintln!("skipped: no /proc/sysvipc/msg (System V IPC is not in this kernel)");
        return;
    }
    let _alone = exclusive();
    let before = sysv_queue_ids();
    let args = [
        "run",
        "ipc.rtt",
        "-p",
        "transport=sysv_msg",
        "--profile",
        "thorough",
    ];
    let mut child = Running::start(&args);
    let deadline = Instant::now() + Duration::from_secs(20);
    let ours = loop {
        let new: BTreeSet<String> =
            sysv_queue_ids().difference(&before).cloned().collect();
        if !new.is_empty() {
            break new;
        }
        if let Ok(Some(status)) = child.child.try_wait() {
            panic!("syscost ended ({status:?}) before it made a queue");
        }
        assert!(
            Instant::now() < deadline,
            "no System V queue appeared in 20 s"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    send(&child, libc::SIGKILL);
    let out = child.finish();
    assert_eq!(out.code, None, "killed by a signal");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left: Vec<String> = sysv_queue_ids().intersection(&ours).cloned().collect();
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "queues {left:?} outlived the SIGKILL"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_run_that_fails_to_start_leaves_no_output_file_and_names_what_failed() {
    let scratch = tempfile::Builder::new()
        .prefix("syscost-nostart-")
        .tempdir()
        .unwrap();
    let dir = scratch.path();
    for format in ["table", "csv", "json"] {
        let out = dir.join(format!("out.{format}"));
        let args = [
            "run",
            "--db",
            "/proc/no-such-dir/history.db",
            "--format",
            format,
            "-o",
            out.to_str().unwrap(),
            "syscall.getpid",
        ];
        let stderr = refused(&args);
        let line = one_line(&args, &stderr);
        assert!(line.contains("--db"), "{line}");
        assert!(!out.exists(), "{format}: an empty -o file was left");
    }
    assert_eq!(
        std::fs::read_dir(dir).unwrap().count(),
        0,
        "nothing beside it either"
    );
}

#[test]
fn cull_kernel_follows_the_schema_and_says_what_it_culled_or_why_not() {
    let run = run_json(&["syscall.getpid"], &["--cull", "kernel"]);
    let method = run
        .harness
        .kernel_events
        .clone()
        .expect("the run says how kernel events went");
    let m = run.results[0].measured.as_ref().expect("measured");
    if method.starts_with("unavailable: ") {
        println!("kernel events unavailable here: {method}");
        assert!(m.kernel.is_none());
        return;
    }
    let k = m
        .kernel
        .as_ref()
        .expect("culling by kernel events is reported");
    assert!(k.samples > 0 && k.culled <= k.samples);
    let by: u64 = k.by_cause.values().sum();
    assert!(by >= k.culled, "every culled sample has a cause");
    for cause in k.by_cause.keys() {
        assert!(
            ["timer", "irq", "softirq", "ipi", "switch", "fault", "migrate", "lost"]
                .contains(&cause.as_str()),
            "{cause}"
        );
    }
    assert!(k.clean_median_ns.unwrap() > 0.0 && k.clean_median_ns.unwrap() < 1e6);
    // Without the flag there is no kernel section at all.
    let plain = run_json(&["syscall.getpid"], &[]);
    assert!(plain.harness.kernel_events.is_none());
    assert!(plain.results[0].measured.as_ref().unwrap().kernel.is_none());
}

#[test]
fn a_full_standard_output_is_named_in_one_line() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        println!("SKIPPED: no /dev/full here");
        return;
    };
    for args in [&["env", "--format", "json"][..], &["list"], &["clocks"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_syscost"))
            .args(args)
            .env("SYSCOST_NO_SAVE", "1")
            .stdout(full.try_clone().unwrap())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        let last = err.lines().last().unwrap_or("");
        assert!(
            last.starts_with("syscost: writing standard output: No space left"),
            "{args:?}: {err}"
        );
    }
}

/// `syscost history` alone is `history list`, with its options (as README shows it);
/// a list option before another subcommand is refused in one line.
#[test]
fn history_alone_lists_with_the_list_options() {
    let dir = TempDir::new("history-alone");
    let db = dir.0.join("history.db");
    let db = db.to_str().expect("UTF-8 path");
    for _ in 0..3 {
        run_smoke(&["syscall.getpid"], &["--db", db]);
    }
    let alone = success(&["history", "--db", db, "--limit", "2", "--format", "json"]);
    let list = success(&[
        "history", "list", "--db", db, "--limit", "2", "--format", "json",
    ]);
    let entries: Value = serde_json::from_str(&alone.stdout).expect("history JSON");
    assert_eq!(
        entries.as_array().map(Vec::len),
        Some(2),
        "{}",
        alone.stdout
    );
    assert_eq!(alone.stdout, list.stdout);
    let text = success(&["history", "--limit", "1", "--db", db]).stdout;
    assert_eq!(text.lines().count(), 2, "a header and one run:\n{text}");
    assert_eq!(
        text,
        success(&["history", "list", "--limit=1", "--db", db]).stdout
    );
    let args = ["history", "--limit", "1", "show", "last", "--db", db];
    let e = refused(&args);
    assert!(
        one_line(&args, &e).contains("--limit before a subcommand"),
        "{e}"
    );
    // The history file still comes before or after a subcommand.
    success(&["history", "--db", db, "show", "last"]);
}
