//! `syscost exec [-n RUNS] [--times] [--format table|json] [-o FILE] -- CMD [ARGS…]`:
//! runs a command and reports what it cost, as the getrusage and times programs of
//! Sloan (1992, Appendices 3 and 4) do.
//!
//! The command is looked up in `PATH` and started with `posix_spawnp`, inheriting
//! standard input, output and error and the environment; syscost waits for it with
//! `wait4` and reports the child's resource usage from that call: real time (wall
//! clock, `CLOCK_MONOTONIC` from just before the spawn to just after the reap), user,
//! system and total CPU time, maximum resident set size, minor and major faults, blocks
//! in and out, signals, and voluntary and involuntary switches. With `--times` it adds
//! the times(2) view: ticks per second (`sysconf(_SC_CLK_TCK)`) and the child's user
//! and system time as the `tms_cutime`/`tms_cstime` deltas across the run, in ticks and
//! µs. With `-n RUNS` the command runs that many times and each figure gets its median,
//! min, max and mean.
//!
//! The report goes to standard error (the command owns standard output), or to `-o
//! FILE`. While the command runs, syscost ignores SIGINT and SIGQUIT, as `time` does:
//! the terminal sends them to the command too, which decides; the command itself
//! starts with their default action (unless syscost was started with them ignored),
//! and syscost's own dispositions are restored afterwards. SIGPIPE, which the Rust
//! runtime ignores in syscost, is reset to its default action in the command. A run
//! killed by SIGINT or SIGQUIT ends the series. syscost signals nothing.
//!
//! Exit code: the first unsuccessful run's status (its exit status, or 128 + the
//! signal that killed it), else 0. A command that cannot be started is one error line
//! and exit 127 when it is not found, 126 when it is found but cannot be executed, as
//! shells do.
//!
//! # JSON document
//!
//! ```text
//! {
//!   "command": ["sh", "-c", "exit 3"],      // the argument vector
//!   "tics_per_sec": 100,                    // with --times, else null
//!   "runs": [                               // one per run, in order
//!     { "exit": { "code": 3, "signal": null },   // or { "code": null, "signal": 9 }
//!       "real_us": 812.4, "user_us": 0.0, "sys_us": 611.0, "cpu_us": 611.0,
//!       "maxrss_kib": 3456, "minor_faults": 120, "major_faults": 0,
//!       "in_blocks": 0, "out_blocks": 0, "signals": 0,
//!       "vol_switches": 1, "invol_switches": 0,
//!       "times": { "user_tics": 0, "sys_tics": 0, "user_us": 0.0, "sys_us": 0.0 }
//!                                         // with --times, else null
//!     } ],
//!   "summary": {                            // over the runs: each figure of a run,
//!     "real_us": { "median": …, "min": …, "max": …, "mean": … },
//!     …                                     // plus times_user_tics and
//!   },                                      // times_sys_tics with --times
//!   "exit_code": 3                          // what syscost exits with
//! }
//! ```
//!
//! Times are µs (rusage has µs resolution; times(2) counts whole ticks), sizes KiB,
//! the rest counts.

use crate::error::UsageError;
use crate::os::spawn::{self, ExitStatus, PreparedExec, Tics};
use crate::os::usage::Usage;
use crate::stats;
use serde::Serialize;
use std::ffi::OsString;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Options of `syscost exec`.
#[derive(Debug, clap::Args)]
pub struct ExecArgs {
    /// Run the command this many times and report statistics over the runs.
    #[arg(short = 'n', long = "runs", value_name = "RUNS", default_value_t = 1,
          value_parser = super::between(1u32, 100_000))]
    pub runs: u32,
    /// Also show the times(2) view: ticks per second and the child's user and system
    /// ticks.
    #[arg(long)]
    pub times: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: ExecFormat,
    /// Write the report to FILE instead of standard error.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The command and its arguments (looked up in PATH), after '--'.
    #[arg(required = true, trailing_var_arg = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

/// How `syscost exec` prints its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExecFormat {
    /// A two-column table (a statistics table with -n above 1).
    Table,
    /// A JSON document (its fields are described in src/cli/exec.rs).
    Json,
}

/// One run's figures.
#[derive(Debug, Clone, Serialize)]
struct RunFigures {
    exit: Exit,
    real_us: f64,
    user_us: f64,
    sys_us: f64,
    cpu_us: f64,
    maxrss_kib: u64,
    minor_faults: u64,
    major_faults: u64,
    in_blocks: u64,
    out_blocks: u64,
    signals: u64,
    vol_switches: u64,
    invol_switches: u64,
    times: Option<TimesView>,
}

#[derive(Debug, Clone, Copy, Serialize)]
struct Exit {
    code: Option<i32>,
    signal: Option<i32>,
}

/// The times(2) view of one run.
#[derive(Debug, Clone, Copy, Serialize)]
struct TimesView {
    user_tics: i64,
    sys_tics: i64,
    user_us: f64,
    sys_us: f64,
}

/// Median, min, max and mean of one figure over the runs.
#[derive(Debug, Clone, Copy, Serialize)]
struct Stat {
    median: f64,
    min: f64,
    max: f64,
    mean: f64,
}

#[derive(Debug, Serialize)]
struct Document<'a> {
    command: Vec<String>,
    tics_per_sec: Option<i64>,
    runs: &'a [RunFigures],
    summary: std::collections::BTreeMap<&'static str, Stat>,
    exit_code: u8,
}

/// What is a time and what is a count, for the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Us,
    Kib,
    Count,
}

type Getter = fn(&RunFigures) -> Option<f64>;

/// A figure read from the run's field of its name (a count is converted to f64).
macro_rules! field {
    ($f:ident, $label:literal, Us) => {
        (stringify!($f), $label, Unit::Us, |r| Some(r.$f))
    };
    ($f:ident, $label:literal, $unit:ident) => {
        (stringify!($f), $label, Unit::$unit, |r| Some(r.$f as f64))
    };
}

/// Every figure: JSON key, table label, unit, and how to read it from a run.
const FIGURES: &[(&str, &str, Unit, Getter)] = &[
    field!(real_us, "real", Us),
    field!(user_us, "user", Us),
    field!(sys_us, "system", Us),
    field!(cpu_us, "total CPU (user+system)", Us),
    field!(maxrss_kib, "max resident set", Kib),
    field!(minor_faults, "minor faults", Count),
    field!(major_faults, "major faults", Count),
    field!(in_blocks, "blocks in", Count),
    field!(out_blocks, "blocks out", Count),
    field!(signals, "signals", Count),
    field!(vol_switches, "voluntary switches", Count),
    field!(invol_switches, "involuntary switches", Count),
    ("times_user_tics", "user (times)", Unit::Count, |r| {
        r.times.map(|t| t.user_tics as f64)
    }),
    ("times_sys_tics", "system (times)", Unit::Count, |r| {
        r.times.map(|t| t.sys_tics as f64)
    }),
];

/// Runs `syscost exec`.
pub fn exec(args: &ExecArgs) -> anyhow::Result<ExitCode> {
    // Checked now, written (as the path's kind asks) when the command has ended.
    if let Some(path) = &args.output {
        crate::os::target::Target::of(path)
            .and_then(|t| t.check())
            .map_err(|e| {
                UsageError::new(format!("cannot write {}: {e}", path.display()))
            })?;
    }
    let name = args.command[0].clone();
    let prep = PreparedExec::new(&name, &args.command)
        .map_err(|e| UsageError::new(format!("the command: {e}")))?;
    let tck = crate::os::sys::clock_ticks_per_sec();

    let ignored = spawn::ignore_signals(&[libc::SIGINT, libc::SIGQUIT])?;
    // The command starts with SIGINT and SIGQUIT at their default action unless syscost
    // itself was started with them ignored, and SIGPIPE at its default action always
    // (the Rust runtime ignores it in syscost; std's Command resets it the same way).
    let defaults: Vec<libc::c_int> = [libc::SIGINT, libc::SIGQUIT]
        .into_iter()
        .filter(|&s| !ignored.was_ignored(s))
        .chain([libc::SIGPIPE])
        .collect();
    let mut runs = Vec::with_capacity(args.runs as usize);
    for _ in 0..args.runs {
        let before = spawn::times_now();
        let start = Instant::now();
        let mut child = match spawn::spawn(&prep, true, &defaults) {
            Ok(c) => c,
            Err(e) => {
                drop(ignored);
                return Ok(cannot_start(&name, &e));
            }
        };
        let (status, usage) = child.wait_usage()?;
        let status = ExitStatus::from_raw(status);
        let real = start.elapsed();
        let after = spawn::times_now();
        let times = args.times.then(|| times_view(&before, &after, tck));
        runs.push(figures(status, real.as_secs_f64() * 1e6, &usage, times));
        let asked_to_stop = [libc::SIGINT, libc::SIGQUIT]
            .into_iter()
            .any(|s| status == ExitStatus::Signaled(s));
        if asked_to_stop {
            break;
        }
    }
    drop(ignored);

    let statuses: Vec<ExitStatus> = runs.iter().map(|r| status_of(r.exit)).collect();
    let code = statuses
        .iter()
        .find(|s| !s.success())
        .map_or(0, |s| s.shell_code());
    let command: Vec<String> = args
        .command
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let summary = summarize(&runs);
    let text = match args.format {
        ExecFormat::Json => {
            let doc = Document {
                command,
                tics_per_sec: args.times.then_some(tck),
                runs: &runs,
                summary: summary.iter().map(|(k, _, _, s)| (*k, *s)).collect(),
                exit_code: code,
            };
            let mut s = serde_json::to_string_pretty(&doc)?;
            s.push('\n');
            s
        }
        ExecFormat::Table => table(&command, &runs, &summary, args.times.then_some(tck)),
    };
    match &args.output {
        Some(path) => crate::os::target::write(path, text.as_bytes())
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?,
        None => {
            let mut err = io::stderr();
            err.write_all(text.as_bytes())?;
            err.flush()?;
        }
    }
    Ok(ExitCode::from(code))
}

/// One line, and the shell's code: 127 not found, 126 found but not executable.
fn cannot_start(name: &std::ffi::OsStr, e: &io::Error) -> ExitCode {
    let name = name.to_string_lossy();
    let why = match e.kind() {
        io::ErrorKind::NotFound if !name.contains('/') => "not found in PATH".to_string(),
        io::ErrorKind::NotFound => "no such file".to_string(),
        io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    };
    eprintln!("syscost: cannot run '{name}': {why}");
    ExitCode::from(if e.kind() == io::ErrorKind::NotFound {
        127
    } else {
        126
    })
}

fn times_view(before: &Tics, after: &Tics, tck: i64) -> TimesView {
    let user_tics = after.child_user - before.child_user;
    let sys_tics = after.child_sys - before.child_sys;
    let us = |t: i64| t as f64 * 1e6 / tck.max(1) as f64;
    TimesView {
        user_tics,
        sys_tics,
        user_us: us(user_tics),
        sys_us: us(sys_tics),
    }
}

fn figures(
    status: ExitStatus,
    real_us: f64,
    u: &Usage,
    times: Option<TimesView>,
) -> RunFigures {
    let exit = match status {
        ExitStatus::Exited(c) => Exit {
            code: Some(c),
            signal: None,
        },
        ExitStatus::Signaled(s) => Exit {
            code: None,
            signal: Some(s),
        },
    };
    RunFigures {
        exit,
        real_us,
        user_us: u.user_ns as f64 / 1e3,
        sys_us: u.sys_ns as f64 / 1e3,
        cpu_us: (u.user_ns + u.sys_ns) as f64 / 1e3,
        maxrss_kib: u.maxrss_kib,
        minor_faults: u.minor_faults,
        major_faults: u.major_faults,
        in_blocks: u.in_blocks,
        out_blocks: u.out_blocks,
        signals: u.signals,
        vol_switches: u.vol_switches,
        invol_switches: u.invol_switches,
        times,
    }
}

fn status_of(e: Exit) -> ExitStatus {
    match (e.code, e.signal) {
        (_, Some(s)) => ExitStatus::Signaled(s),
        (c, None) => ExitStatus::Exited(c.unwrap_or(0)),
    }
}

/// Each figure that every run has, with its statistics over the runs.
fn summarize(runs: &[RunFigures]) -> Vec<(&'static str, &'static str, Unit, Stat)> {
    FIGURES
        .iter()
        .filter_map(|&(key, label, unit, get)| {
            let xs: Vec<f64> = runs.iter().map(get).collect::<Option<_>>()?;
            let s = stats::summarize(&xs)?;
            Some((
                key,
                label,
                unit,
                Stat {
                    median: s.median,
                    min: s.min,
                    max: s.max,
                    mean: s.mean,
                },
            ))
        })
        .collect()
}

/// A time in µs with a unit suited to its size.
fn fmt_us(us: f64) -> String {
    if us < 1e3 {
        format!("{us:.0} µs")
    } else if us < 1e6 {
        format!("{:.3} ms", us / 1e3)
    } else {
        format!("{:.3} s", us / 1e6)
    }
}

fn fmt_value(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Us => fmt_us(v),
        Unit::Kib => format!("{v:.0} KiB"),
        Unit::Count if v == v.trunc() => format!("{v:.0}"),
        Unit::Count => format!("{v:.1}"),
    }
}

/// Quotes an argument for display when a shell would need it.
fn shell_word(a: &str) -> String {
    let plain = !a.is_empty()
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+%@".contains(c));
    if plain {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', r"'\''"))
    }
}

fn table(
    command: &[String],
    runs: &[RunFigures],
    summary: &[(&'static str, &'static str, Unit, Stat)],
    tck: Option<i64>,
) -> String {
    let cmdline: Vec<String> = command.iter().map(|a| shell_word(a)).collect();
    let statuses: Vec<String> =
        runs.iter().map(|r| status_of(r.exit).to_string()).collect();
    let mut status = statuses.first().cloned().unwrap_or_default();
    if statuses.iter().any(|s| *s != status) {
        status = format!("differs across runs: {}", statuses.join(", "));
    }
    let mut head: Vec<(String, String)> = vec![
        ("command".into(), cmdline.join(" ")),
        ("status".into(), status),
    ];
    if runs.len() > 1 {
        head.push(("runs".into(), runs.len().to_string()));
    }
    if let Some(t) = tck {
        head.push(("tics per second".into(), t.to_string()));
    }
    let width = summary
        .iter()
        .map(|(_, l, _, _)| l.chars().count())
        .chain(head.iter().map(|(l, _)| l.chars().count()))
        .max()
        .unwrap_or(0);
    let mut s = String::new();
    for (l, v) in &head {
        s += &format!("{l:<width$}  {v}\n");
    }
    let tick_us = |tics: f64| tck.map(|t| tics * 1e6 / t.max(1) as f64);
    if runs.len() == 1 {
        for (key, label, unit, st) in summary {
            let mut v = fmt_value(st.median, *unit);
            if key.starts_with("times_") {
                let tics = if st.median == 1.0 { "tic" } else { "tics" };
                v = format!("{v} {tics} = {}", fmt_us(tick_us(st.median).unwrap_or(0.0)));
            }
            s += &format!("{label:<width$}  {v}\n");
        }
        return s + &split_caveat(summary);
    }
    let cols = ["median", "min", "max", "mean"];
    let cells: Vec<[String; 4]> = summary
        .iter()
        .map(|(key, _, unit, st)| {
            [st.median, st.min, st.max, st.mean].map(|v| {
                if key.starts_with("times_") {
                    fmt_us(tick_us(v).unwrap_or(0.0))
                } else {
                    fmt_value(v, *unit)
                }
            })
        })
        .collect();
    let w: Vec<usize> = (0..4)
        .map(|i| {
            cells
                .iter()
                .map(|c| c[i].chars().count())
                .chain([cols[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let row = |label: &str, cells: &[String]| {
        let mut line = format!("{label:<width$}");
        for (v, &n) in cells.iter().zip(&w) {
            line += &format!("  {v:>n$}");
        }
        line + "\n"
    };
    s += &row("", &cols.map(String::from));
    for ((_, label, _, _), c) in summary.iter().zip(&cells) {
        s += &row(label, c);
    }
    s + &split_caveat(summary)
}

/// CPU time below which the user/system split is said to be a sample of a few ticks
/// (at 250 Hz, a second holds 250 of them).
const SHORT_CPU_US: f64 = 1e6;

/// The caveat on user and system time, as a note under the table, when the command's
/// CPU time is short enough for the split to rest on few ticks.
fn split_caveat(summary: &[(&'static str, &'static str, Unit, Stat)]) -> String {
    let cpu = summary
        .iter()
        .find(|(key, ..)| *key == "cpu_us")
        .map(|(.., st)| st.median);
    match cpu {
        Some(us) if us < SHORT_CPU_US => format!(
            "note: user and system: {}\n",
            crate::os::usage::SPLIT_CAVEAT
        ),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(code: i32, real: f64, faults: u64, times: bool) -> RunFigures {
        let u = Usage {
            user_ns: 1_000_000,
            sys_ns: 2_000_000,
            minor_faults: faults,
            maxrss_kib: 2048,
            ..Usage::default()
        };
        let t = times.then(|| {
            times_view(
                &Tics::default(),
                &Tics {
                    child_user: 1,
                    child_sys: 2,
                    ..Tics::default()
                },
                100,
            )
        });
        figures(ExitStatus::Exited(code), real, &u, t)
    }

    #[test]
    fn figures_add_user_and_system() {
        let r = run(0, 5000.0, 10, false);
        assert_eq!(r.user_us, 1000.0);
        assert_eq!(r.sys_us, 2000.0);
        assert_eq!(r.cpu_us, 3000.0);
    }

    #[test]
    fn ticks_convert_to_microseconds() {
        let t = times_view(
            &Tics {
                child_user: 5,
                child_sys: 7,
                ..Tics::default()
            },
            &Tics {
                child_user: 8,
                child_sys: 7,
                ..Tics::default()
            },
            100,
        );
        assert_eq!((t.user_tics, t.sys_tics), (3, 0));
        assert_eq!((t.user_us, t.sys_us), (30_000.0, 0.0));
    }

    #[test]
    fn the_summary_has_every_figure_each_run_has() {
        let runs = [
            run(0, 1000.0, 10, false),
            run(0, 3000.0, 30, false),
            run(0, 2000.0, 20, false),
        ];
        let s = summarize(&runs);
        assert_eq!(
            s.len(),
            FIGURES.len() - 2,
            "no times figures without --times"
        );
        let real = s.iter().find(|f| f.0 == "real_us").unwrap().3;
        assert_eq!(
            (real.median, real.min, real.max, real.mean),
            (2000.0, 1000.0, 3000.0, 2000.0)
        );
        let with_times = summarize(&[run(0, 1.0, 1, true)]);
        assert_eq!(with_times.len(), FIGURES.len());
    }

    #[test]
    fn tables_are_aligned_and_name_the_status() {
        let one = table(
            &["true".into()],
            &[run(0, 1500.0, 10, true)],
            &summarize(&[run(0, 1500.0, 10, true)]),
            Some(100),
        );
        assert!(one.contains("status"), "{one}");
        assert!(one.contains("exit status 0"), "{one}");
        assert!(one.contains("1.500 ms"), "{one}");
        assert!(one.contains("1 tic = 10.000 ms"), "{one}");
        // 3 ms of CPU time: its user/system split is a sample of a few ticks.
        assert!(one.contains("note: user and system: the kernel"), "{one}");
        let runs = [run(0, 1000.0, 10, false), run(3, 2000.0, 10, false)];
        let many = table(
            &["sh".into(), "-c".into(), "exit 3".into()],
            &runs,
            &summarize(&runs),
            None,
        );
        assert!(many.contains("sh -c 'exit 3'"), "{many}");
        assert!(many.contains("differs across runs"), "{many}");
        let widths: Vec<usize> = many
            .lines()
            .skip(3)
            .filter(|l| !l.starts_with("note:"))
            .map(|l| l.chars().count())
            .collect();
        assert!(many.contains("note: user and system"), "{many}");
        assert!(widths.windows(2).all(|w| w[0] == w[1]), "{many}");
    }

    #[test]
    fn words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("ls"), "ls");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
