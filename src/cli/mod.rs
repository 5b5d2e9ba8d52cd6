//! The command line: arguments in, one validated configuration per command, results out.
//!
//! Errors are reported once, here, as one line: a mistake the user can fix exits with
//! 2, a failure while measuring with 1; a closed output pipe ends the program quietly.

mod clocks;
mod exec;
mod fleet;
pub mod help;
mod history;
mod list;
mod paired;
mod report;
pub(crate) mod run;
mod selftest;
mod trace;

pub use history::{open_for_saving, save};
pub use run::check_load;

use crate::error::UsageError;
use crate::harness::clock::ClockChoice;
use crate::report::Format;
use clap::{CommandFactory, Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Measures what Linux charges for its services.
#[derive(Debug, Parser)]
#[command(name = "syscost", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Lists the benchmarks with their parameters and defaults.
    List {
        /// Globs over benchmark names (e.g. 'syscall.*').
        filters: Vec<String>,
    },
    /// Measures benchmarks and prints a table (or JSON, CSV, Markdown).
    Run(RunArgs),
    /// Measures a benchmark and shows where its time goes: each kernel and user
    /// function's ns per operation, grouped (entry and exit, mitigations, the call's
    /// body, scheduler, interrupts), from samples taken during the timed batches.
    ///
    /// E.g. syscost explain syscall.getpid; syscost explain ctx.pingpong mechanism=pipe
    /// placement=same-cpu --format folded > pingpong.folded. Kernel frames need root,
    /// CAP_PERFMON or kernel.perf_event_paranoid <= 1; without them user frames only.
    Explain(ExplainArgs),
    /// Shows the facts about this machine that decide these costs.
    Env {
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: TextOrJson,
    },
    /// Surveys every clock: claimed resolution, measured granularity, cost per read.
    Clocks {
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: TextOrJson,
    },
    /// Checks the harness against an independent plain loop on this machine.
    Selftest,
    /// Prints a seed study's table beside today's figures on this machine.
    Repro(ReproArgs),
    /// Lists, shows, removes, imports and exports saved runs.
    History(history::HistoryArgs),
    /// Compares two runs (ratio, interval, verdict) or several (a cross-run table).
    Compare(history::CompareArgs),
    /// Writes one self-contained HTML report of runs: graphs, tables, comparisons.
    Report(history::ReportArgs),
    /// Writes one graph of runs as an SVG file.
    Plot(history::PlotArgs),
    /// Shows many hosts' latest figures side by side, grouped by the facts that decide
    /// costs, and flags the hosts that stand out in their group.
    Fleet(fleet::FleetArgs),
    /// Records, shows, reduces and exports event traces (the 1976 memo's trace and fsm).
    Trace(trace::TraceArgs),
    /// Runs a command and reports its resource usage (wait4's rusage; times(2) with
    /// --times), to standard error.
    Exec(exec::ExecArgs),
    /// Writes a shell completion script to standard output.
    ///
    /// Install it where the shell looks for completions, e.g. syscost completions bash
    /// > ~/.local/share/bash-completion/completions/syscost
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Writes the man page (roff) to standard output, or one page per command.
    ///
    /// Install it on the manual path, e.g. syscost man >
    /// ~/.local/share/man/man1/syscost.1 (or syscost man --dir
    /// ~/.local/share/man/man1 for a page per command: man syscost-run).
    Man {
        /// Write syscost.1 and one page per subcommand (syscost-run.1,
        /// syscost-history-list.1, ...) into DIR instead.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

/// A `--target` percentage: above 0 and below 100.
fn target_pct(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("'{s}' is not a percentage (e.g. 0.5)"))?;
    if v > 0.0 && v < 100.0 {
        Ok(v)
    } else {
        Err(format!(
            "{v} is not a target: give a percentage above 0 and below 100"
        ))
    }
}

/// `--budget`: a duration in s (the default unit), ms or m, as ns; more than zero and
/// at most a day.
fn budget_ns(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, unit) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1e9)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60e9)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3600e9)
    } else {
        (t, 1e9)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a duration (e.g. 30s, 2m, 500ms)"))?;
    let ns = v * unit;
    if !(1e6..=86_400e9).contains(&ns) {
        return Err(format!(
            "'{s}': give a budget from 1ms to a day (e.g. 30s, 2m)"
        ));
    }
    Ok(ns.round() as u64)
}

/// `--cpu`: one CPU's number; a list or a range is refused in words.
fn cpu_number(s: &str) -> Result<usize, String> {
    s.parse()
        .map_err(|_| format!("'{s}' is not a CPU number: give one, such as 0"))
}

/// A run's label (`--label`): KEY=VALUE or a word, of letters, digits and `._+-:/@`,
/// at most 100 characters (a comma separates labels where the history lists them).
fn run_label(s: &str) -> Result<String, String> {
    let t = s.trim();
    let ok = |c: char| c.is_ascii_alphanumeric() || "._+-:/@=".contains(c);
    if t.is_empty() || t.len() > 100 {
        return Err(format!(
            "'{s}': a label is KEY=VALUE or a word of 1 to 100 characters"
        ));
    }
    if let Some(c) = t.chars().find(|&c| !ok(c)) {
        return Err(format!(
            "'{s}': a label holds letters, digits and . _ + - : / @ =, not '{c}'"
        ));
    }
    if t.starts_with('=') || t.ends_with('=') || t.matches('=').count() > 1 {
        return Err(format!(
            "'{s}': write KEY=VALUE (one '=' with a word each side) or a word"
        ));
    }
    Ok(t.to_string())
}

/// A value parser for a whole number from `lo` to `hi`, whose refusal says the range in
/// words ("from 1 to 1024"), not in Rust's `1..=1024` as clap's ranged parsers do.
pub(crate) fn between<T>(
    lo: T,
    hi: T,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy + Send + Sync + 'static,
{
    move |s: &str| match s.parse::<T>() {
        Ok(v) if v >= lo && v <= hi => Ok(v),
        _ => Err(format!("'{s}' is not a whole number from {lo} to {hi}")),
    }
}

/// Options of `syscost run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Globs over benchmark names (e.g. 'syscall.*'); a family name selects the family;
    /// a word with '=' is a parameter, as with --param (e.g. n=2,4,8).
    pub filters: Vec<String>,
    /// A parameter value or sweep, e.g. --param args=0,1,2 (repeatable).
    #[arg(long = "param", short = 'p', value_name = "NAME=V1,V2,...")]
    pub params: Vec<String>,
    /// Measure each other value of the swept parameter NAME in pairs with VALUE, in
    /// one worker, batches taking turns: each row gets its ratio to the reference with
    /// an interval in which a drift of the machine cancels (e.g. -p via=libc,raw
    /// --reference via=libc).
    #[arg(long, value_name = "NAME=VALUE")]
    pub reference: Option<String>,
    /// Measurement profile: how many rounds, how long, how precise.
    ///
    /// smoke: two short rounds a benchmark, to check that everything runs (about 20 s
    /// for the catalogue); quick: a fast look (about 35 s); standard: the default
    /// (about two minutes); thorough: for figures to publish (up to a quarter of an
    /// hour). The README says more.
    #[arg(long, default_value = "standard", value_parser = ["smoke", "quick", "standard", "thorough"])]
    pub profile: String,
    /// Hold every row's own interval (its rounds alone, nothing added for how far the
    /// machine moves) to ±PCT%, instead of the larger of the profile's target and 1.41
    /// times what the machine allows its kind of work: tried within the profile's
    /// rounds, and a row that misses it says why.
    #[arg(long, value_name = "PCT", value_parser = target_pct)]
    pub target: Option<f64>,
    /// The most the run may take, e.g. 30s or 2m (a plain number is seconds): rows
    /// still stop as soon as they converge. Without it, the profile's budget for the
    /// whole catalogue (110 s standard) and about ten seconds a row for a small
    /// selection, at most a minute; the header says which.
    #[arg(long, value_name = "DURATION", value_parser = budget_ns)]
    pub budget: Option<u64>,
    /// Pin the measuring thread to this CPU.
    #[arg(long, value_parser = cpu_number)]
    pub cpu: Option<usize>,
    /// Keep N busy background processes running while measuring (multi-user).
    #[arg(long, default_value_t = 0)]
    pub load: usize,
    /// Output format [default: table, or what -o's extension names: .json, .csv, .md,
    /// .prom, .folded].
    #[arg(long, value_parser = help::PlainEnum::<Format>::new())]
    pub format: Option<Format>,
    /// Write results to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Clock for the harness.
    #[arg(long, value_enum, default_value = "auto")]
    pub clock: ClockChoice,
    /// Leave the per-sample columns out of JSON output.
    #[arg(long)]
    pub no_samples: bool,
    /// Directory for the test file of file.* and mem.fault.file (default: the temporary
    /// directory); use a disk file system for cold reads.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Evict the test file with the kernel's drop_caches, which empties the page cache
    /// of the whole machine, instead of posix_fadvise (root only).
    #[arg(long)]
    pub drop_caches: bool,
    /// Time every benchmark in batches of exactly N operations instead of calibrated
    /// batches; 1 times operations one by one, so percentiles and modes are of single
    /// operations (the clock's read cost and granularity then weigh on cheap ones).
    #[arg(long, value_name = "N", value_parser = between(1u64, 1_000_000_000))]
    pub batch: Option<u64>,
    /// Seed of the shuffled round order (default: from the clock; the run records it).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// The history to save the run in: a file or a postgres:// URL (default:
    /// $SYSCOST_DB, else $XDG_DATA_HOME/syscost/history.db).
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Do not save the run in the history.
    #[arg(long)]
    pub no_save: bool,
    /// A label for the run, KEY=VALUE or a word (repeatable): what sets it apart that
    /// the host facts cannot see (e.g. --label kernel=6.12-rc3+fix, --label tracer=on).
    /// Runs with other labels never share a spread between runs; a side written
    /// label:VALUE in compare takes every run that carries one.
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = run_label)]
    pub labels: Vec<String>,
    /// Measure the selection K times, each a run of its own in the history (for a
    /// comparison with several runs a side: docs/history.md).
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = between(1u64, 100))]
    pub runs: u64,
    /// What else marks a sample perturbed: 'kernel' records the kernel's events while
    /// sampling (clock and other interrupts, switches, faults, migrations; root or
    /// CAP_PERFMON) and leaves out every batch one fell in; 'rusage' only the resource
    /// counters.
    #[arg(long, value_enum, default_value = "rusage")]
    pub cull: crate::session::Cull,
    /// Also sample where each benchmark's time goes, as syscost explain does (each
    /// round then lasts at least 500 ms, so the samples bound every share).
    #[arg(long)]
    pub explain: bool,
    /// Samples per second of running time when explaining: more bound the shares
    /// closer, and perturb the operation more (each sample is an interrupt).
    #[arg(long, value_name = "HZ", default_value_t = crate::explain::HZ,
          value_parser = between(100u64, 100_000))]
    pub explain_hz: u64,
    /// Every note under each row of the table (the rounds' spread, levels, modes, the
    /// canary, rounds measured again, facts), not only why a row did not converge.
    #[arg(short, long)]
    pub verbose: bool,
}

impl RunArgs {
    /// `--format`, else what `-o`'s extension names, else the table.
    pub fn chosen_format(&self) -> Format {
        Format::chosen(self.format, self.output.as_deref(), Format::Table)
    }
}

/// Options of `syscost explain`: those of `run`, and the sampling's bias check.
#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    /// What to measure, and how (the options of syscost run).
    #[command(flatten)]
    pub run: RunArgs,
    /// Instead of a benchmark, measure the sampling's bias on a known answer: a
    /// user-space spin of known length beside a getpid, whose split the samples
    /// should reproduce.
    #[arg(long)]
    pub skid: bool,
}

/// Options of `syscost repro`.
#[derive(Debug, clap::Args)]
pub struct ReproArgs {
    /// The study: perez1976, manea1999, sloan1992 or nagy-vms.
    pub study: String,
    /// Measurement profile.
    #[arg(long, default_value = "quick", value_parser = ["smoke", "quick", "standard", "thorough"])]
    pub profile: String,
    /// Pin the measuring thread to this CPU.
    #[arg(long, value_parser = cpu_number)]
    pub cpu: Option<usize>,
    /// Spinning background processes for nagy-vms's multi-user rows (default: one per
    /// CPU this process may use).
    #[arg(long, value_name = "N")]
    pub load: Option<usize>,
    /// The history file to save the figures in.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Do not save the figures in the history.
    #[arg(long)]
    pub no_save: bool,
}

/// Text or JSON output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TextOrJson {
    /// Text for a terminal.
    Text,
    /// JSON.
    Json,
}

/// Parses the arguments, runs the command, reports an error once, and chooses the exit
/// code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) if e.use_stderr() => {
            eprintln!("{}", one_line(&e.render().to_string()));
            // A gate's bad command line is the tool's failure, which `git bisect run`
            // must stop on, not a bad commit.
            return ExitCode::from(if gate_asked() {
                history::GATE_FAILED
            } else {
                2
            });
        }
        Err(e) => {
            let _ = e.print(); // --help, --version
            return ExitCode::SUCCESS;
        }
    };
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("syscost: {e:#}");
            ExitCode::from(if e.downcast_ref::<UsageError>().is_some() {
                2
            } else {
                1
            })
        }
    }
}

/// Whether the command line asks `compare` for a gate (`--fail-on-regression`).
fn gate_asked() -> bool {
    let args: Vec<String> = std::env::args().skip(1).collect();
    args.iter().any(|a| a == "compare")
        && args.iter().any(|a| a.starts_with("--fail-on-regression"))
}

/// Folds clap's several-line message into one line: the message and its tips, without
/// the usage text (which would run into the message) or the pointer to --help.
fn one_line(msg: &str) -> String {
    let parts: Vec<&str> = msg
        .lines()
        .map(str::trim)
        .take_while(|l| {
            !l.starts_with("Usage:") && !l.starts_with("For more information")
        })
        .filter(|l| !l.is_empty())
        .collect();
    // A line that ends in a colon introduces the next ("not provided:" and the
    // arguments), so it runs on with a space; other lines are separate tips.
    let mut line = String::new();
    for p in parts {
        if !line.is_empty() {
            line.push_str(if line.ends_with(':') { " " } else { "; " });
        }
        line.push_str(p);
    }
    format!(
        "syscost: {} (see --help)",
        line.trim_start_matches("error: ")
    )
}

pub(crate) fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::List { filters } => list::list(&filters),
        Command::Run(args) => run::run(&args),
        Command::Explain(args) => run::explain(args),
        Command::Env { format } => env(format),
        Command::Clocks { format } => clocks::clocks(format == TextOrJson::Json),
        Command::Selftest => selftest::selftest(),
        Command::Repro(args) => repro(&args),
        Command::Exec(args) => exec::exec(&args),
        Command::Trace(args) => trace::trace(&args),
        Command::History(args) => history::history(&args),
        Command::Compare(args) => history::compare_cmd(&args),
        Command::Report(args) => history::report_cmd(&args),
        Command::Plot(args) => history::plot_cmd(&args),
        Command::Fleet(args) => fleet::fleet_cmd(&args),
        Command::Completions { shell } => {
            help::completions(shell, Cli::command(), &mut crate::report::stdout())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man { dir: None } => {
            help::man(Cli::command(), &mut crate::report::stdout())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man { dir: Some(dir) } => {
            let written = help::man_pages(Cli::command(), &dir).map_err(|e| {
                anyhow::anyhow!(
                    "man --dir {}: {e} (give an existing directory)",
                    dir.display()
                )
            })?;
            eprintln!("wrote {} man pages in {}", written.len(), dir.display());
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn env(format: TextOrJson) -> anyhow::Result<ExitCode> {
    let facts = crate::host::collect(&[]);
    let mut out = crate::report::stdout();
    match format {
        TextOrJson::Text => {
            out.write_all(crate::host::render(&facts).as_bytes())?;
            out.flush()?;
            out.write_all(steadiness(&facts)?.as_bytes())?;
        }
        TextOrJson::Json => write_json(&mut out, &facts)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes `value` as pretty JSON and a line end.
fn write_json(out: &mut impl Write, value: &impl serde::Serialize) -> anyhow::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    Ok(out.write_all(b"\n")?)
}

/// One second of getpid canary readings, and which profiles' CI targets the machine is
/// too unsteady for.
fn steadiness(facts: &crate::host::HostFacts) -> anyhow::Result<String> {
    use crate::harness::Profile;
    use crate::session::{Session, SessionOptions};
    let session =
        Session::start(SessionOptions::new(Profile::STANDARD, facts.invariant_tsc))?;
    let m = session.steadiness(1_000_000_000)?;
    let states = crate::results::describe_states(&m.states);
    let too: Vec<String> = [Profile::THOROUGH, Profile::STANDARD, Profile::QUICK]
        .iter()
        .filter(|p| m.spread > p.ci_target)
        .map(|p| format!("{} (±{}%)", p.name, p.ci_target * 100.0))
        .collect();
    let verdict = if too.is_empty() {
        "steady enough for every profile's target".to_string()
    } else {
        format!(
            "too unsteady for the CI target of {}: expect wide intervals, named states \
             and unconverged results there",
            too.join(", ")
        )
    };
    Ok(format!(
        "\nsteadiness: {} getpid canary readings over 1 s: {states}; p10–p90 spread {:.1}%\n  {verdict}\n",
        m.readings,
        m.spread * 100.0
    ))
}

/// Runs `syscost repro`: checks the options, runs the study, and saves today's
/// figures in the history.
fn repro(args: &ReproArgs) -> anyhow::Result<ExitCode> {
    let mut history = open_for_saving(args.db.as_deref(), args.no_save)?;
    check_cpu(args.cpu)?;
    if let Some(n) = args.load {
        check_load(n)?;
    }
    let opts = crate::repro::Options {
        study: args.study.clone(),
        profile: profile(&args.profile),
        cpu: args.cpu,
        load: args.load,
        journal: crate::session::Journal::default(),
    };
    let (code, run) = crate::repro::run(&opts)?;
    if let Some(run) = run {
        save(history.as_mut(), &run, crate::store::Origin::Repro);
    }
    Ok(code)
}

/// Validates `--cpu` against the CPUs this process may use.
pub fn check_cpu(cpu: Option<usize>) -> Result<(), UsageError> {
    let Some(c) = cpu else { return Ok(()) };
    let allowed = crate::os::affinity::allowed_cpus().map_err(|e| {
        UsageError::new(format!("--cpu: cannot read this process's CPUs: {e}"))
    })?;
    if !allowed.contains(&c) {
        let list = crate::host::parse::format_cpu_list(&allowed);
        return Err(UsageError::new(format!(
            "--cpu {c}: no such CPU for this process; choose one of {list}"
        )));
    }
    Ok(())
}

/// The profile called `name` (clap has already checked it is one of the four).
pub fn profile(name: &str) -> crate::harness::Profile {
    crate::harness::Profile::by_name(name).unwrap_or(crate::harness::Profile::STANDARD)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_errors_fold_into_one_line_without_usage_text() {
        for args in [
            &["syscost", "compare", "1"][..],
            &["syscost", "run", "--foo"],
            &["syscost", "run", "syscall.getpid", "--batch", "0"],
            &["syscost", "exec", "-n", "100001", "--", "true"],
        ] {
            let e = Cli::try_parse_from(args).unwrap_err();
            let line = one_line(&e.render().to_string());
            assert_eq!(line.lines().count(), 1, "{line}");
            assert!(
                line.starts_with("syscost: ") && line.ends_with(" (see --help)"),
                "{line}"
            );
            assert!(!line.contains("Usage") && !line.contains("..="), "{line}");
        }
        let e = Cli::try_parse_from(["syscost", "run", "--foo"]).unwrap_err();
        let line = one_line(&e.render().to_string());
        assert!(line.contains("found; tip:"), "{line}");
        let e = Cli::try_parse_from(["syscost", "run", "--batch", "0"]).unwrap_err();
        let line = one_line(&e.render().to_string());
        assert!(line.contains("from 1 to 1000000000"), "{line}");
        // A line that introduces the next runs on into it.
        let e = Cli::try_parse_from(["syscost", "compare"]).unwrap_err();
        let line = one_line(&e.render().to_string());
        assert!(line.contains("not provided: <SIDE>"), "{line}");
    }

    #[test]
    fn a_budget_is_a_duration_in_seconds_by_default() {
        assert_eq!(budget_ns("30"), Ok(30_000_000_000));
        assert_eq!(budget_ns("30s"), Ok(30_000_000_000));
        assert_eq!(budget_ns("2m"), Ok(120_000_000_000));
        assert_eq!(budget_ns("1.5s"), Ok(1_500_000_000));
        assert_eq!(budget_ns("500ms"), Ok(500_000_000));
        for bad in ["", "0", "-3s", "abc", "2d", "25h", "nan", "0.1ms"] {
            assert!(budget_ns(bad).is_err(), "{bad}");
        }
        let a = Cli::try_parse_from(["syscost", "run", "--budget", "20s"]).unwrap();
        let Command::Run(r) = a.command else {
            panic!("not a run")
        };
        assert_eq!(r.budget, Some(20_000_000_000));
    }
}
