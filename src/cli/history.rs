//! `syscost history` (list, show, rm, import, export) and `syscost compare`.

use crate::compare::{self, render, RunLabel};
use crate::draw::text::{clip, grid};
use crate::error::UsageError;
use crate::report::{Format, Output};
use crate::results::{fmt_unix_time, Run};
use crate::store::{self, History, Origin};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `syscost history`'s subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum HistoryCommand {
    /// Lists the saved runs, newest first (what 'syscost history' alone does).
    List(ListArgs),
    /// Shows one run's results (an id, last, last~N, host:NAME:last~N: last counts
    /// complete runs only, last!~N interrupted ones too).
    Show {
        /// The run.
        run: String,
        /// Only the rows of these benchmarks (globs, or a family), each with every
        /// note, as 'run --verbose' prints them.
        benches: Vec<String>,
        /// Output format.
        #[arg(long, default_value = "table", value_parser = super::help::PlainEnum::<Format>::new())]
        format: Format,
        /// Every note under each row of the table (what naming benchmarks gives).
        #[arg(short, long)]
        verbose: bool,
    },
    /// Removes runs by id.
    Rm {
        /// The ids.
        #[arg(required = true)]
        ids: Vec<String>,
    },
    /// Saves results documents made elsewhere ('syscost run --format json -o FILE').
    Import {
        /// The JSON files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Writes one run's document (JSON by default) to standard output or a file.
    Export {
        /// The run.
        run: String,
        /// Output format [default: json, or what -o's extension names: .csv, .md,
        /// .prom, .folded].
        #[arg(long, value_parser = super::help::PlainEnum::<Format>::new())]
        format: Option<Format>,
        /// Write to FILE instead of standard output.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

/// Options of `syscost history list`, which `syscost history` takes too.
#[derive(Debug, Clone, clap::Args)]
pub struct ListArgs {
    /// Show at most N runs.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Show only the runs of this host (as the host column shows it).
    #[arg(long, value_name = "NAME")]
    host: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: super::TextOrJson,
}

/// Options of `syscost history`: with no subcommand it lists the runs, and takes the
/// options of `history list`.
#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    #[command(subcommand)]
    command: Option<HistoryCommand>,
    /// Show at most N runs (with no subcommand: as 'history list').
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Show only the runs of this host (with no subcommand: as 'history list').
    #[arg(long, value_name = "NAME")]
    host: Option<String>,
    /// Output format of the list, text (the default) or json (with no subcommand: as
    /// 'history list').
    #[arg(long, value_enum, value_name = "FORMAT")]
    format: Option<super::TextOrJson>,
    /// The history: a file, or a postgres://USER:PASSWORD@HOST:PORT/DATABASE URL
    /// (default: $SYSCOST_DB, else $XDG_DATA_HOME/syscost/history.db).
    #[arg(long, value_name = "PATH", global = true)]
    db: Option<PathBuf>,
}

/// Runs `syscost history`.
pub fn history(args: &HistoryArgs) -> anyhow::Result<ExitCode> {
    let path = store::path_or_default(args.db.as_deref())?;
    if let (Some(_), Some(opt)) = (
        &args.command,
        [
            (args.limit.is_some(), "--limit"),
            (args.host.is_some(), "--host"),
            (args.format.is_some(), "--format"),
        ]
        .iter()
        .find(|(given, _)| *given),
    ) {
        return Err(UsageError::new(format!(
            "history: {} before a subcommand is an option of the list; write it after \
             the subcommand, or leave the subcommand out to list the runs",
            opt.1
        ))
        .into());
    }
    let list = HistoryCommand::List(ListArgs {
        limit: args.limit,
        host: args.host.clone(),
        format: args.format.unwrap_or(super::TextOrJson::Text),
    });
    match args.command.as_ref().unwrap_or(&list) {
        HistoryCommand::List(l) => list_cmd(l, &path)?,
        HistoryCommand::Show {
            run,
            benches,
            format,
            verbose,
        } => show_cmd(run, benches, *format, *verbose, &path)?,
        HistoryCommand::Export {
            run,
            format,
            output,
        } => {
            let (_, doc) = one(run, &path)?;
            let format = Format::chosen(*format, output.as_deref(), Format::Json);
            render_run(&doc, format, output.as_deref(), false)?;
        }
        HistoryCommand::Rm { ids } => rm_cmd(ids, &path)?,
        HistoryCommand::Import { files } => import_cmd(files, &path)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `history list`: the saved runs, newest first.
fn list_cmd(args: &ListArgs, path: &Path) -> anyhow::Result<()> {
    let ListArgs {
        limit,
        host,
        format,
    } = args;
    if !History::is_url(path) && !path.exists() {
        eprintln!(
            "no runs saved yet (the history would be at {})",
            path.display()
        );
        return Ok(());
    }
    let h = History::open(path, false)?;
    let entries = h.list(*limit, host.as_deref())?;
    let mut out = crate::report::stdout();
    if *format == super::TextOrJson::Json {
        super::write_json(&mut out, &entries)?;
    } else {
        out.write_all(list_text(&entries, crate::os::term::stdout_width()).as_bytes())?;
    }
    out.flush()?;
    Ok(())
}

/// `history show RUN [BENCH…]`: one saved run as it was printed, or its rows named,
/// with every note and what the history knows of them now.
fn show_cmd(
    run: &str,
    benches: &[String],
    format: Format,
    verbose: bool,
    path: &Path,
) -> anyhow::Result<()> {
    let (label, mut doc) = one(run, path)?;
    if !doc.complete {
        // Said before the table, whose foot says it again: a partial run read as whole
        // would mislead.
        eprintln!(
            "{}: the run was interrupted; its results are partial",
            label.reference
        );
    }
    if !benches.is_empty() {
        doc.results
            .retain(|r| benches.iter().any(|b| crate::bench::matches(b, &r.name)));
        if doc.results.is_empty() {
            return Err(UsageError::new(format!(
                "history show {run}: no row of {} in that run; `syscost history \
                 show {run}` lists its rows",
                benches.join(" ")
            ))
            .into());
        }
    }
    render_run(&doc, format, None, verbose || !benches.is_empty())?;
    if !benches.is_empty() && format == Format::Table {
        history_now(&doc, label.id, path);
    }
    Ok(())
}

/// `history rm ID…`.
fn rm_cmd(ids: &[String], path: &Path) -> anyhow::Result<()> {
    let ids: Vec<i64> = ids
        .iter()
        .map(|s| match s.parse::<i64>() {
            Ok(id) if id > 0 => Ok(id),
            _ => Err(UsageError::new(format!(
                "history rm {s}: ids are positive numbers that `syscost history` lists"
            ))),
        })
        .collect::<Result<_, _>>()?;
    let mut h = History::open(path, false)?;
    let mut missing = Vec::new();
    for id in ids {
        if h.remove(id)? {
            println!("removed run {id}");
        } else {
            missing.push(id.to_string());
        }
    }
    if !missing.is_empty() {
        return Err(UsageError::new(format!(
            "no run {} in {}",
            missing.join(", "),
            h.place()
        ))
        .into());
    }
    Ok(())
}

/// `history import FILE…`: every file read before any is saved.
fn import_cmd(files: &[PathBuf], path: &Path) -> anyhow::Result<()> {
    // Read every file first, so one bad file imports none.
    let mut docs: Vec<Run> = files
        .iter()
        .map(|f| store::read_json(f))
        .collect::<anyhow::Result<_>>()?;
    for d in &mut docs {
        crate::results::in_catalogue_order(&mut d.results);
    }
    let mut h = History::open(path, true)?;
    for (f, doc) in files.iter().zip(&docs) {
        let t0 = std::time::Instant::now();
        let id = h.save(doc, Origin::Import)?;
        // The save alone (compressing, one transaction), not the reading of the
        // file: what a host's run waits for at its end.
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        println!(
            "imported {} as run {id} (saved in {:.0} ms, {:.0} ms of it the \
             transaction)",
            f.display(),
            ms(t0.elapsed()),
            h.last_transaction().map_or(0.0, ms)
        );
    }
    Ok(())
}

/// Prints, beside a saved run's rows, what the history knows of them now from its other
/// runs under the same conditions: labelled, never in place of the interval the run
/// printed. Nothing when the history cannot be read or knows too little.
fn history_now(doc: &Run, id: Option<i64>, path: &Path) {
    let Ok(h) = History::open(path, false) else {
        return;
    };
    let Ok(now) = h.spread_now(doc, id) else {
        return;
    };
    for (r, s) in doc.results.iter().zip(now) {
        let (Some(m), Some((runs, sd))) = (r.measured.as_ref(), s) else {
            continue;
        };
        let centre =
            crate::stats::rounds::centre_quantile(runs) * sd / m.median_ns * 100.0;
        println!(
            "the history now, beside this run (not its interval): {} {} over {runs} runs \
             here, this one included, sd {:.2}% of its figure; where they centre ±{centre:.2}%",
            r.name,
            r.param_label(),
            sd / m.median_ns * 100.0,
        );
    }
}

fn one(reference: &str, path: &Path) -> anyhow::Result<(RunLabel, Run)> {
    // `path` may be the default place, never made: say there is no history there, as
    // `compare` and `report` do, not that a `--db` nobody gave lacks its directory.
    if !History::is_url(path) && !path.exists() && !Path::new(reference).exists() {
        History::open(path, false)?;
    }
    let mut v = said(store::resolve(&[reference.to_string()], Some(path), true)?);
    Ok(v.remove(0))
}

/// The runs named, once each `last` that passed over newer incomplete runs is said on
/// standard error, one line each.
fn said(named: store::Named) -> Vec<(RunLabel, Run)> {
    for s in &named.skipped {
        eprintln!("{s}");
    }
    named.runs
}

/// Renders a saved run in any of `run`'s formats.
fn render_run(
    doc: &Run,
    format: Format,
    output: Option<&Path>,
    verbose: bool,
) -> anyhow::Result<()> {
    // Runs saved before the rows were put in catalogue order, and imported documents,
    // are shown and exported in it too.
    let mut doc = doc.clone();
    crate::results::in_catalogue_order(&mut doc.results);
    let doc = &doc;
    let mut out = Output::open(format, output)?;
    out.verbose(verbose);
    let rows: Vec<_> = doc
        .results
        .iter()
        .map(crate::report::layout::RowKey::of)
        .collect();
    out.plan(&rows);
    let mut header = doc.clone();
    header.results.clear();
    out.begin(&header)?;
    for r in &doc.results {
        out.result(r)?;
    }
    out.finish(doc)?;
    Ok(())
}

/// The list as text, no line wider than `width` (columns that do not fit go into a
/// further block, which repeats the id).
pub fn list_text(entries: &[store::Entry], width: usize) -> String {
    let mut rows: Vec<Vec<String>> = vec![[
        "id", "started", "origin", "host", "kernel", "ok", "skip", "fail", "command",
    ]
    .iter()
    .map(|c| c.to_string())
    .collect()];
    for e in entries {
        // The labels first, and before them whether the run was interrupted, where a
        // cut command cannot hide them (`last` passes over an incomplete run).
        let mut command = match e.labels.is_empty() {
            true => e.command.clone(),
            false => format!("[{}] {}", e.labels, e.command),
        };
        if !e.complete {
            command = format!("(incomplete) {command}");
        }
        rows.push(vec![
            e.id.to_string(),
            fmt_unix_time(e.started_unix_s),
            e.origin.to_string(),
            clip(&e.hostname, 14),
            clip(&e.kernel, 22),
            e.ok.to_string(),
            e.skipped.to_string(),
            e.failed.to_string(),
            clip(&command, 60),
        ]);
    }
    let right = [true, false, false, false, false, true, true, true, false];
    // The command, last, is cut to the room the other columns leave (at least 20
    // characters); only a terminal narrower than that wraps the columns.
    let others: Vec<Vec<String>> = rows.iter().map(|r| r[..8].to_vec()).collect();
    let used = grid(&others, &right, 8, 0, usize::MAX)
        .lines()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0);
    let room = width.saturating_sub(used + 2).max(20);
    for r in rows.iter_mut().skip(1) {
        r[8] = clip(&r[8], room);
    }
    grid(&rows, &right, 1, 0, width)
}

/// Output formats of `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareFormat {
    /// Aligned text.
    Table,
    /// JSON.
    Json,
    /// GitHub-flavoured Markdown, fit for a pull-request comment.
    Markdown,
}

/// Options of `syscost compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// Two sides (A, the base, then B), each a run (an id, last, last~N,
    /// host:NAME:last~N or a JSON file; last counts complete runs only, last!~N
    /// interrupted ones too) or several: label:NAME (every complete run carrying that
    /// label), a range last~5..last~3, or a list 3,5,7. With more than two runs: the
    /// cross-run table.
    #[arg(required = true, num_args = 2.., value_name = "SIDE")]
    pub runs: Vec<String>,
    /// Changes smaller than PCT percent count as no change.
    #[arg(long, value_name = "PCT", default_value_t = 5.0, value_parser = percent)]
    pub threshold: f64,
    /// A gate for CI and git bisect run (implies --threshold PCT): exit 1 when any
    /// benchmark is slower by more than PCT percent with significance, 125 when one
    /// cannot tell or B could not measure one that A did, 128 when the tool fails, 0
    /// otherwise.
    #[arg(long, value_name = "PCT", value_parser = percent)]
    pub fail_on_regression: Option<f64>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: CompareFormat,
    /// The history: a file or a postgres:// URL.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Pairs rows whatever their parameter NAME: with --ignore-param via, a run's
    /// via=libc rows are compared with another's via=raw rows (each run must hold one
    /// value of it).
    #[arg(long, value_name = "NAME")]
    pub ignore_param: Vec<String>,
}

/// Removes the parameters `names` from every result of `runs`, so that rows differing
/// only in them pair; an error if that leaves two rows of one run alike.
fn ignore_params(
    runs: &mut [(RunLabel, Run)],
    names: &[String],
) -> Result<(), UsageError> {
    for (label, run) in runs.iter_mut() {
        let mut seen = std::collections::BTreeSet::new();
        for r in &mut run.results {
            for n in names {
                r.params.remove(n);
            }
            if !seen.insert(compare::key(r)) {
                return Err(UsageError::new(format!(
                    "--ignore-param: {} holds two rows of {} that differ only in {}; \
                     give runs with one value of it",
                    label.reference,
                    compare::key(r),
                    names.join(", ")
                )));
            }
        }
    }
    Ok(())
}

/// Parses a percentage option.
pub(crate) fn percent(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(x) if x.is_finite() && (0.0..=1000.0).contains(&x) => Ok(x),
        _ => Err(format!("'{s}' is not a percentage between 0 and 1000")),
    }
}

/// The exit code of a gate (`--fail-on-regression`) that could not decide: a bad run
/// reference, a damaged history. Above 127, so `git bisect run` stops instead of
/// calling the commit bad.
pub const GATE_FAILED: u8 = 128;

/// The exit code of a gate that cannot tell: a row whose interval reaches past the
/// threshold, or a benchmark side A measured and side B could not. `git bisect run`
/// skips the commit.
pub const GATE_CANNOT_TELL: u8 = 125;

/// Runs `syscost compare`. With `--fail-on-regression`, every failure of the tool
/// exits [`GATE_FAILED`] (after saying why), so a bisect never takes it for "bad".
pub fn compare_cmd(args: &CompareArgs) -> anyhow::Result<ExitCode> {
    let result = compare_run(args);
    match (result, args.fail_on_regression) {
        (Err(e), Some(_)) if !super::is_broken_pipe(&e) => {
            eprintln!("syscost: {e:#}");
            eprintln!(
                "syscost: the gate could not decide (exit {GATE_FAILED}: `git bisect run` stops)"
            );
            Ok(ExitCode::from(GATE_FAILED))
        }
        (r, _) => r,
    }
}

/// The sides `compare` was given, each resolved to its runs; an error if a run is on
/// both sides.
fn sides(args: &CompareArgs) -> anyhow::Result<[Vec<(RunLabel, Run)>; 2]> {
    let side = |i: usize| store::resolve_side(&args.runs[i], args.db.as_deref(), false);
    let (a, b) = (said(side(0)?), said(side(1)?));
    if let Some(shared) = a
        .iter()
        .filter_map(|(l, _)| l.id)
        .find(|id| b.iter().any(|(l, _)| l.id == Some(*id)))
    {
        return Err(UsageError::new(format!(
            "run #{shared} is on both sides ({} and {}): a side's runs are repetitions of \
             one change, not of the other",
            args.runs[0], args.runs[1]
        ))
        .into());
    }
    Ok([a, b])
}

fn compare_run(args: &CompareArgs) -> anyhow::Result<ExitCode> {
    check_db(args.db.as_deref())?;
    if args.fail_on_regression.is_some() && args.runs.len() != 2 {
        return Err(UsageError::new(
            "--fail-on-regression compares exactly two sides (A, the base, then B)",
        )
        .into());
    }
    if args.runs.len() > 2 {
        let mut runs = said(store::resolve(&args.runs, args.db.as_deref(), false)?);
        ignore_params(&mut runs, &args.ignore_param)?;
        let refs: Vec<(RunLabel, &Run)> =
            runs.iter().map(|(l, r)| (l.clone(), r)).collect();
        let t = compare::table(&refs);
        emit(args.format, &t, render::table_text, render::table_markdown)?;
        return Ok(ExitCode::SUCCESS);
    }
    let [mut a, mut b] = sides(args)?;
    ignore_params(&mut a, &args.ignore_param)?;
    ignore_params(&mut b, &args.ignore_param)?;
    let threshold = args.fail_on_regression.unwrap_or(args.threshold) / 100.0;
    let ra: Vec<(&RunLabel, &Run)> = a.iter().map(|(l, r)| (l, r)).collect();
    let rb: Vec<(&RunLabel, &Run)> = b.iter().map(|(l, r)| (l, r)).collect();
    let c = compare::compare_sides(&ra, &rb, threshold);
    let gating = args.fail_on_regression.is_some();
    // Under the gate, B measuring none of A's benchmarks is a build that cannot run
    // them (125), not a bad command line.
    let cannot_run = gating && !c.only_in_base.is_empty();
    if c.rows.is_empty() && !cannot_run {
        return Err(UsageError::new(format!(
            "{} and {} have no measured benchmark in common",
            args.runs[0], args.runs[1]
        ))
        .into());
    }
    emit(args.format, &c, render::text, render::markdown)?;
    Ok(match gating {
        true => ExitCode::from(gate(&c)),
        false => ExitCode::SUCCESS,
    })
}

/// Writes `value` to standard output in `format`: its text, Markdown or JSON.
fn emit<T: serde::Serialize>(
    format: CompareFormat,
    value: &T,
    text: fn(&T) -> String,
    markdown: fn(&T) -> String,
) -> anyhow::Result<()> {
    let mut out = crate::report::stdout();
    match format {
        CompareFormat::Table => out.write_all(text(value).as_bytes())?,
        CompareFormat::Markdown => out.write_all(markdown(value).as_bytes())?,
        CompareFormat::Json => super::write_json(&mut out, value)?,
    }
    Ok(out.flush()?)
}

/// The gate's exit code for a comparison, said in one line on standard error: 1 for a
/// row slower, [`GATE_CANNOT_TELL`] for a row that cannot tell or a benchmark only A
/// measured, 0 otherwise.
pub fn gate(c: &compare::Comparison) -> u8 {
    let t = c.tally();
    let pct = c.threshold * 100.0;
    let count = crate::draw::text::count;
    let (code, why) = if t.slower > 0 {
        (
            1,
            format!(
                "{} slower by more than {pct}% with significance",
                count(t.slower, "benchmark", "benchmarks")
            ),
        )
    } else if t.unsure > 0 {
        (
            GATE_CANNOT_TELL,
            format!(
                "{} cannot tell at ±{pct}% (their intervals reach past it): more runs a \
                 side would (the 'sees' column)",
                count(t.unsure, "benchmark", "benchmarks")
            ),
        )
    } else if !c.only_in_base.is_empty() {
        (
            GATE_CANNOT_TELL,
            format!(
                "B did not measure {} that A did ({}): this build cannot run it",
                count(c.only_in_base.len(), "benchmark", "benchmarks"),
                c.only_in_base.join(", ")
            ),
        )
    } else {
        (
            0,
            format!(
                "no regression: {} within ±{pct}% or faster",
                count(c.rows.len(), "benchmark", "benchmarks")
            ),
        )
    };
    eprintln!("syscost: gate: {why} (exit {code})");
    code
}

/// Options of `syscost report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The runs: ids, last, last~N, host:NAME:last~N or JSON files (last counts
    /// complete runs only, last!~N interrupted ones too); with several, each is
    /// compared with the first.
    #[arg(required = true, value_name = "RUN")]
    pub runs: Vec<String>,
    /// The HTML file to write.
    #[arg(short, long, value_name = "FILE", required = true)]
    pub output: PathBuf,
    /// The comparisons' noise threshold, in percent.
    #[arg(long, value_name = "PCT", default_value_t = 5.0, value_parser = percent)]
    pub threshold: f64,
    /// The history: a file or a postgres:// URL.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

/// Options of `syscost plot`.
#[derive(Debug, clap::Args)]
pub struct PlotArgs {
    /// The graph.
    #[arg(value_enum)]
    pub graph: crate::report::graphs::Graph,
    /// The runs: ids, last, last~N, host:NAME:last~N or JSON files (last counts
    /// complete runs only, last!~N interrupted ones too; two for the forest plot: A,
    /// then B).
    #[arg(required = true, value_name = "RUN")]
    pub runs: Vec<String>,
    /// The benchmark to draw (a name, or 'name key=value...'), for samples,
    /// distribution and sweep.
    #[arg(long, value_name = "NAME")]
    pub bench: Option<String>,
    /// Write the SVG to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The forest plot's noise threshold, in percent.
    #[arg(long, value_name = "PCT", default_value_t = 5.0, value_parser = percent)]
    pub threshold: f64,
    /// The history: a file or a postgres:// URL.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

/// Runs `syscost report`.
pub fn report_cmd(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    check_db(args.db.as_deref())?;
    check_extension(&args.output, "HTML", "html")?;
    let mut runs = said(store::resolve(&args.runs, args.db.as_deref(), true)?);
    refit(&mut runs);
    let comparisons = runs
        .iter()
        .skip(1)
        .map(|(l, r)| {
            compare::compare((&runs[0].0, &runs[0].1), (l, r), args.threshold / 100.0)
        })
        .collect();
    super::report::report(runs, comparisons, &args.output)?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `syscost plot`.
pub fn plot_cmd(args: &PlotArgs) -> anyhow::Result<ExitCode> {
    check_db(args.db.as_deref())?;
    if let Some(out) = &args.output {
        check_extension(out, "SVG", "svg")?;
    }
    use crate::report::graphs::Graph;
    let forest = args.graph == Graph::Forest;
    if forest && args.runs.len() != 2 {
        return Err(UsageError::new(
            "the forest plot compares exactly two runs: A, then B",
        )
        .into());
    }
    let with_samples = matches!(args.graph, Graph::Samples | Graph::Distribution);
    let mut runs = said(store::resolve(
        &args.runs,
        args.db.as_deref(),
        with_samples,
    )?);
    refit(&mut runs);
    let comparison = forest.then(|| {
        compare::compare(
            (&runs[0].0, &runs[0].1),
            (&runs[1].0, &runs[1].1),
            args.threshold / 100.0,
        )
    });
    super::report::plot(
        args.graph,
        runs,
        comparison,
        args.bench.as_deref(),
        args.output.as_deref(),
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Fits the sweeps and ring tables again from the results (documents written by other
/// tools or trimmed by hand may lack them; the fits are the same functions of the
/// results either way).
fn refit(runs: &mut [(RunLabel, Run)]) {
    for (_, run) in runs.iter_mut() {
        crate::derived::fill(run);
    }
}

/// Refuses an output file whose extension names another format than the one the
/// command writes (`-o report.pdf` would hold HTML); any other name is taken as given.
fn check_extension(path: &Path, writes: &str, ext: &str) -> Result<(), UsageError> {
    const OTHERS: &[&str] = &[
        "pdf", "png", "jpg", "jpeg", "gif", "svg", "html", "htm", "json", "csv", "md",
        "txt",
    ];
    let given = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_lowercase);
    match given {
        Some(g)
            if g != ext && !(ext == "html" && g == "htm") && OTHERS.contains(&&*g) =>
        {
            Err(UsageError::new(format!(
                "-o {}: this command writes {writes}, not .{g}; name the file .{ext}",
                path.display()
            )))
        }
        _ => Ok(()),
    }
}

/// Refuses, before anything else, a `--db` the user gave in a directory that does not
/// exist, even when every run named is a file and the history is never opened.
fn check_db(db: Option<&Path>) -> Result<(), UsageError> {
    if db.is_some() {
        store::path_or_default(db)?;
    }
    Ok(())
}

/// Opens the history for saving a run about to be measured: `None` with `--no-save`; an
/// error for an explicit `--db` that cannot be used (before anything is measured); a
/// warning and `None` when the default place cannot be used.
pub fn open_for_saving(
    db: Option<&Path>,
    no_save: bool,
) -> anyhow::Result<Option<History>> {
    let env_no_save =
        std::env::var("SYSCOST_NO_SAVE").is_ok_and(|v| !v.is_empty() && v != "0");
    if no_save || env_no_save {
        return Ok(None);
    }
    let explicit =
        db.is_some() || std::env::var_os("SYSCOST_DB").is_some_and(|v| !v.is_empty());
    let path = match store::path_or_default(db) {
        Err(e) if explicit => {
            return Err(UsageError::new(format!(
                "{e} (--no-save measures without saving)"
            ))
            .into())
        }
        other => other,
    };
    let attempt = path
        .map_err(anyhow::Error::new)
        .and_then(|p| History::open(&p, true));
    match attempt {
        Ok(h) => Ok(Some(h)),
        Err(e) if explicit => Err(UsageError::new(format!(
            "--db / SYSCOST_DB: {e:#} (--no-save measures without saving)"
        ))
        .into()),
        Err(e) => {
            eprintln!("warning: runs will not be saved to the history: {e:#} (--no-save silences this)");
            Ok(None)
        }
    }
}

/// Saves a finished (or interrupted) run; a failure to save is a warning, never a lost
/// run. Returns the id.
pub fn save(history: Option<&mut History>, run: &Run, origin: Origin) -> Option<i64> {
    save_with(history, run, origin, None)
}

/// [`save`] of a run whose samples are in `spill`.
pub fn save_with(
    history: Option<&mut History>,
    run: &Run,
    origin: Origin,
    spill: Option<&crate::spill::Spill>,
) -> Option<i64> {
    let h = history?;
    match h.save_with(run, origin, spill) {
        Ok(id) => {
            eprintln!("saved as run {id} in {}", h.place());
            Some(id)
        }
        Err(e) => {
            eprintln!("warning: the run was not saved to the history: {e:#}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_incomplete_run_is_said_before_its_command_where_no_cut_hides_it() {
        let entry = |id, complete| store::Entry {
            id,
            started_unix_s: 1.8e9,
            origin: "run".into(),
            hostname: "h".into(),
            kernel: "6.12".into(),
            command: format!("syscost run {}", "syscall.getpid ".repeat(20)),
            profile: "standard".into(),
            complete,
            ok: 1,
            skipped: 0,
            failed: 0,
            labels: String::new(),
        };
        let text = list_text(&[entry(2, false), entry(1, true)], 100);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.iter().all(|l| l.chars().count() <= 100), "{text}");
        assert!(lines[1].contains("(incomplete) syscost run"), "{text}");
        assert!(!lines[2].contains("incomplete"), "{text}");
    }
}
