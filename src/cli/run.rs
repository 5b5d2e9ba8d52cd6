//! `syscost run`: select, expand sweeps, validate everything, then measure instance by
//! instance, writing each result as it finishes.

use super::RunArgs;
use crate::bench::{self, Bench, ParamArg, Params};
use crate::draw::text::{count, wrap};
use crate::error::{BenchError, UsageError};
use crate::host::{self, HostFacts};
use crate::os::interrupt::InterruptGuard;
use crate::report::layout::{self, RowKey};
use crate::report::Output;
use crate::results::{fmt_ns, Run, Status};
use crate::session::{Session, SessionOptions};
use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Every benchmark instance the arguments ask for, validated.
pub fn plan(
    filters: &[String],
    raw_params: &[String],
) -> Result<Vec<(&'static dyn Bench, Params)>, UsageError> {
    // A word with '=' is a parameter (`syscost run mem.brk n=1,64`): no benchmark
    // name holds one.
    let (words, names): (Vec<&String>, Vec<&String>) =
        filters.iter().partition(|f| f.contains('='));
    let filters: Vec<String> = names.into_iter().cloned().collect();
    let params: Vec<ParamArg> = raw_params
        .iter()
        .chain(words)
        .map(|s| s.parse())
        .collect::<Result<_, _>>()?;
    let filters = &filters[..];
    for f in filters {
        if bench::select(std::slice::from_ref(f)).is_empty() {
            let peer = bench::peers::run_hint(f);
            let hint = match peer.is_empty() {
                true => bench::suggest(f),
                false => peer,
            };
            return Err(UsageError::new(format!(
                "no benchmark matches '{f}'{hint}; see `syscost list`"
            )));
        }
    }
    let selected = bench::select_for_run(filters);
    for p in &params {
        // Copies apply to the selected benchmarks that can run as copies, as any
        // parameter applies to those that take it; when none can, say why.
        if bench::copies::is_copies_param(&p.name)
            && !selected.iter().any(|b| bench::copies::serial(*b).is_none())
        {
            if let Some(b) = selected.first() {
                bench::copies::check(*b)?;
            }
        }
        if !selected
            .iter()
            .any(|b| bench::copies::spec(*b, &p.name).is_some())
        {
            let taken = selected.iter().flat_map(|b| {
                b.params()
                    .iter()
                    .chain(bench::copies::SPECS.iter())
                    .chain(bench::harden::SPECS.iter())
                    .map(|s| s.name)
            });
            return Err(UsageError::new(format!(
                "parameter {}: no selected benchmark takes a parameter '{}'{}, given with --param or as name=value; see `syscost list` for each benchmark's parameters",
                p.name,
                p.name,
                crate::error::did_you_mean(&p.name, taken)
            )));
        }
    }
    let mut out = Vec::new();
    for b in selected {
        let mine: Vec<ParamArg> = params
            .iter()
            .filter(|p| bench::copies::spec(b, &p.name).is_some())
            .cloned()
            .collect();
        for p in bench::copies::expand(b, &mine)? {
            out.push((b, p));
        }
    }
    Ok(out)
}

/// A new result document for a run of `n` instances.
pub fn new_run(host: HostFacts, session: &Session, n: usize) -> Run {
    let mut harness = session.harness_info();
    harness.budget_ns = session.budget_for(n);
    Run {
        clock: session.clock_info().clone(),
        harness,
        ..Run::new(host, std::time::SystemTime::now())
    }
}

/// Checks `--load`: at most four busy processes per CPU.
pub fn check_load(load: usize) -> Result<(), UsageError> {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    if load > 4 * cpus {
        return Err(UsageError::new(format!(
            "--load {load}: at most {} (four per CPU) background processes",
            4 * cpus
        )));
    }
    Ok(())
}

/// Checks `--dir` (an existing directory) and `--drop-caches` (root only).
pub fn check_file_options(args: &RunArgs) -> Result<(), UsageError> {
    if let Some(dir) = &args.dir {
        if !dir.is_dir() {
            return Err(UsageError::new(format!(
                "--dir {}: not an existing directory",
                dir.display()
            )));
        }
    }
    if args.drop_caches && !crate::os::file::is_root() {
        return Err(UsageError::new(
            "--drop-caches writes /proc/sys/vm/drop_caches and needs root; without it, \
             cold reads are evicted with posix_fadvise",
        ));
    }
    Ok(())
}

/// Starts the measuring session the arguments ask for (samples kept aside, explained,
/// held to `--target`, within `--budget`), and says when `--cull kernel` cannot have
/// the kernel's events.
fn start_session(
    args: &RunArgs,
    profile: crate::harness::Profile,
    invariant_tsc: bool,
) -> anyhow::Result<Session> {
    let mut session = Session::start_with(
        SessionOptions {
            profile,
            clock: args.clock,
            invariant_tsc,
            cpu: args.cpu,
            load: args.load,
            keep_samples: !args.no_samples,
            cull: args.cull,
            files: crate::bench::file::Options {
                dir: args.dir.clone(),
                drop_caches: args.drop_caches,
            },
            workers: crate::session::Workers::default_for_this_process(),
        },
        args.batch,
        args.seed,
    )?;
    if !args.no_samples {
        session
            .spill_samples()
            .context("making the temporary file that keeps the samples")?;
    }
    session.explain(if args.explain { args.explain_hz } else { 0 });
    if args.target.is_some() {
        session.hold_to_target();
    }
    if let Some(b) = args.budget {
        session.set_budget(b);
    }
    if let Some(why) = session.kernel_unavailable() {
        warn(&format!(
            "--cull kernel: the kernel's events cannot be recorded here ({why}); \
             samples are culled by their resource usage only"
        ));
    }
    Ok(session)
}

/// What the history says of the machine's movement between runs, handed to the
/// session's floors, and a short look at the getpid canary before measuring: a warning
/// when the machine reads far from its earlier runs here (how much it moves within the
/// run is the floors' to say). Only an interruption is returned as an error; a history
/// or a canary that cannot be read is a warning.
fn look_at_the_machine(
    session: &Session,
    history: Option<&crate::store::History>,
    run: &Run,
) -> Result<(), BenchError> {
    // The earlier runs' machine, read once: how far it moves between runs goes to the
    // floors before the first round is judged, and its speed is set beside the canary's.
    let earlier = history.and_then(|h| {
        h.past_machines(run, None)
            .map_err(|e| warn(&format!("the history could not be read: {e:#}")))
            .ok()
    });
    if let Some(earlier) = &earlier {
        session.machine_between_runs(&crate::store::movement(earlier));
    }
    let m = match session.steadiness(150_000_000) {
        Ok(m) => m,
        Err(BenchError::Interrupted) => return Err(BenchError::Interrupted),
        Err(e) => {
            warn(&format!("the canary could not be read: {e}"));
            return Ok(());
        }
    };
    // How much the machine moves is said once, by the floors in the run's header.
    // Beside the same machine's earlier runs: a run about to start in a slow spell
    // can still be stopped.
    let past = earlier
        .zip(m.base_ns())
        .and_then(|(earlier, now)| Some((crate::store::beside(&earlier, now)?, now)));
    if let Some((p, now)) = past.filter(|(p, _)| (p.ratio - 1.0).abs() > START_DIFFERS) {
        warn(&format!(
            "the machine reads {:.0}% {} than in its last {} here under the same \
             conditions (getpid {} over 0.15 s, {} in theirs): this run's figures may \
             differ from theirs by about that much",
            (p.ratio - 1.0).abs() * 100.0,
            if p.ratio > 1.0 { "slower" } else { "faster" },
            count(p.runs, "run", "runs"),
            fmt_ns(now),
            fmt_ns(p.median_ns)
        ));
    }
    Ok(())
}

/// How far the canary read before measuring may lie from the earlier runs' before
/// `run` warns: wider than the footer's 5%, as 0.15 s of readings are few.
const START_DIFFERS: f64 = 0.10;

/// Writes `warning: {text}` to standard error, wrapped at the terminal's width when
/// standard error is one (a script reading a pipe gets one line).
fn warn(text: &str) {
    let line = format!("warning: {text}");
    match crate::os::term::columns_of(std::io::stderr()) {
        Some(w) => eprint!("{}", wrap(&line, w, 0, 2)),
        None => eprintln!("{line}"),
    }
}

/// The profile `run` measures with: the one named, held to `--target`, and with
/// rounds long enough to sample under `--explain`.
fn profile_of(args: &RunArgs) -> crate::harness::Profile {
    let mut profile = super::profile(&args.profile);
    if let Some(pct) = args.target {
        profile.ci_target = pct / 100.0;
    }
    if args.explain {
        profile.round_ns = profile.round_ns.max(EXPLAIN_ROUND_NS);
        profile.round_max_samples = profile.round_max_samples.max(50_000);
        // Every other round is sampled: at least one of each.
        profile.min_rounds = profile.min_rounds.max(2);
        profile.max_rounds = profile.max_rounds.max(profile.min_rounds);
    }
    profile
}

/// What the history adds to a run when it is decided: the intervals of rows it has
/// two earlier runs of, and the machine's speed beside its earlier runs. A history
/// that cannot be read is a warning.
fn beside_the_history(h: &crate::store::History, run: &mut Run) {
    if let Err(e) = h.set_from_past_runs(run) {
        warn(&format!(
            "the history could not be read for the spread between runs: {e:#}"
        ));
    }
    if let Err(e) = h.machine_against_past(run, None) {
        warn(&format!(
            "the history could not be read for the machine's earlier speed: {e:#}"
        ));
    }
    match h.shift(run) {
        Ok(Some(a)) => warn(&shift_text(&a, &run.labels)),
        Ok(None) => {}
        Err(e) => warn(&format!(
            "the history could not be read to set this run beside its earlier ones: {e:#}"
        )),
    }
}

/// The warning for a run far from its history.
fn shift_text(a: &crate::results::Shift, labels: &[String]) -> String {
    let labelled = match labels.is_empty() {
        true => "without labels".to_string(),
        false => format!("labelled {}", crate::results::labels_text(labels)),
    };
    format!(
        "{} of {} rows lie far outside their earlier runs here under the same conditions \
         ({labelled}), moving together by {:+.1}% at the median: something changed that \
         the host facts cannot see (a patch, a tracer, a filter, a sysctl, the machine's \
         state). Its rows' spread between runs counts it, as later runs' will. If the \
         change is yours, give such runs a --label so they form a side of their own.",
        a.moved,
        a.rows,
        a.median_change * 100.0
    )
}

/// The machine's facts, each warning they give said on standard error.
fn facts_warned() -> HostFacts {
    let facts = host::collect(&[]);
    for w in host::warnings(&facts) {
        warn(&w);
    }
    facts
}

/// Checks `--cpu`, `--load` and the file options before anything is measured.
fn check_options(args: &RunArgs) -> Result<(), UsageError> {
    super::check_cpu(args.cpu)?;
    if args.budget.is_some() && profile_of(args).budget_ns == 0 {
        return Err(UsageError::new(format!(
            "--budget: the {} profile has no time budget (its rounds are fixed); use \
             --profile quick, standard or thorough",
            args.profile
        )));
    }
    check_load(args.load)?;
    check_file_options(args)
}

/// Runs `syscost run`: the selection once, or `--runs K` times, each a run of its own
/// saved in the history (so each is decided beside the ones before it). The exit code
/// is the first run's that failed, or the interruption's.
pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    if args.runs <= 1 {
        return run_once(args);
    }
    if args.output.is_some() {
        return Err(UsageError::new(format!(
            "--runs {}: each run is saved in the history; -o would hold only the last \
             (write one with `syscost history export RUN -o FILE`)",
            args.runs
        ))
        .into());
    }
    let mut first_failure = None;
    for i in 1..=args.runs {
        eprintln!("syscost: run {i} of {}", args.runs);
        let code = run_once(args)?;
        if crate::os::interrupt::interrupted() {
            return Ok(code);
        }
        if code != ExitCode::SUCCESS && first_failure.is_none() {
            first_failure = Some(code);
        }
    }
    Ok(first_failure.unwrap_or(ExitCode::SUCCESS))
}

/// One run of the selection.
fn run_once(args: &RunArgs) -> anyhow::Result<ExitCode> {
    // First, so that a signal during the setup below stops the run in order too.
    let _guard = InterruptGuard::install()?;
    let instances = plan(&args.filters, &args.params)?;
    let pairs = super::paired::plan(args.reference.as_deref(), &instances)?;
    check_options(args)?;
    let profile = profile_of(args);
    let mut output = Output::open(args.chosen_format(), args.output.as_deref())?;
    output.verbose(args.verbose);
    let mut history = super::history::open_for_saving(args.db.as_deref(), args.no_save)?;

    let facts = facts_warned();
    let mut session = start_session(args, profile, facts.invariant_tsc)?;
    let mut run = new_run(facts, &session, instances.len());
    run.labels = labels_of(&args.labels);
    let rows: Vec<RowKey> = instances
        .iter()
        .map(|(b, p)| RowKey::planned(*b, p))
        .collect();
    output.plan(&rows);
    // What the machine moves by, for the header (the run's own floors end up in the
    // document).
    let looked = look_at_the_machine(&session, history.as_ref(), &run).and_then(|()| {
        run.machine.floors = session.floors()?;
        Ok(())
    });
    if let Err(BenchError::Interrupted) = looked {
        drop(session);
        output.begin(&run)?;
        output.finish(&run)?;
        eprintln!("syscost: interrupted before anything was measured");
        return Ok(ExitCode::from(crate::os::interrupt::exit_code()));
    }

    output.begin(&run)?;
    let paired = super::paired::measure(&session, &instances, &pairs);

    let progress = Progress::new(instances.len() as u64);
    let list: Vec<(&dyn Bench, Params)> =
        instances.iter().map(|(b, p)| (*b, p.clone())).collect();
    let mut rows = Rows::new(list.len());
    let mut written: std::io::Result<()> = Ok(());
    let outcome = session.run_all(
        &list,
        &mut |step| progress.show(step.round, step.name, step.params),
        &mut |i, r| {
            progress.bar.inc(1);
            let mut r = r.clone();
            paired.attach(&mut r);
            if let Some(h) = history.as_ref() {
                // The same interval the whole run gets below, so the row printed now
                // is the row saved.
                let mut one = Run {
                    results: vec![r],
                    ..run.clone()
                };
                let _ = h.set_from_past_runs(&mut one);
                r = one.results.remove(0);
            }
            for r in rows.concluded(i, r) {
                if written.is_ok() {
                    written = progress.bar.suspend(|| output.result(&r));
                }
            }
        },
    )?;
    progress.bar.finish_and_clear();
    written?;
    let interrupted = outcome.interrupted;
    run.complete = !interrupted;
    run.results = outcome.results;
    run.results.iter_mut().for_each(|r| paired.attach(r));
    crate::results::in_catalogue_order(&mut run.results);
    run.machine = outcome.machine;
    if let Some(h) = history.as_ref() {
        beside_the_history(h, &mut run);
    }
    crate::derived::fill(&mut run);
    let spill = session.take_spill();
    drop(session); // stop the load before the last write
                   // Rows of a group an interruption left unfinished.
    for r in rows.rest() {
        output.result(&r)?;
    }
    output.finish_with(&run, spill.as_ref())?;
    super::history::save_with(
        history.as_mut(),
        &run,
        crate::store::Origin::Run,
        spill.as_ref(),
    );
    if interrupted {
        eprintln!("syscost: interrupted; the rounds measured so far were written");
        return Ok(ExitCode::from(crate::os::interrupt::exit_code()));
    }
    let failed = run.results.iter().any(|r| r.status == Status::Failed);
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The labels of `--label`, sorted, each once.
fn labels_of(given: &[String]) -> Vec<String> {
    let mut v = given.to_vec();
    v.sort();
    v.dedup();
    v
}

/// The shortest round when explaining: the two sampled rounds of five then hold about
/// 5,000 samples at [`crate::explain::HZ`], so every share is known within about ±1.4%
/// of the median.
const EXPLAIN_ROUND_NS: u64 = 500_000_000;

/// Runs `syscost explain`: `run --explain` of the benchmarks named, or the bias check.
pub fn explain(mut args: super::ExplainArgs) -> anyhow::Result<ExitCode> {
    if args.skid {
        return skid(&args.run);
    }
    if args.run.filters.iter().all(|f| f.contains('=')) {
        return Err(UsageError::new(
            "explain: name the benchmark to explain, e.g. syscost explain syscall.getpid \
             (see syscost list)",
        )
        .into());
    }
    args.run.explain = true;
    if crate::session::Workers::default_for_this_process()
        == crate::session::Workers::Inline
    {
        eprintln!(
            "warning: explain samples in worker processes; with SYSCOST_WORKERS=inline \
             nothing is explained"
        );
    }
    run(&args.run)
}

/// The rows of a run, written in the catalogue's order (the selection's, which
/// `plan` gives in that order) whatever order they conclude in: a row is written once
/// every row before it has been, so two runs of one selection print their rows in one
/// order, in every format. A row that takes long holds the rows after it.
struct Rows {
    /// Concluded rows not written yet, by their index in the selection.
    waiting: Vec<Option<crate::results::BenchResult>>,
    /// The first row not written yet.
    next: usize,
}

impl Rows {
    fn new(rows: usize) -> Rows {
        Rows {
            waiting: vec![None; rows],
            next: 0,
        }
    }

    /// Row `i` concluded: the rows now ready to write, in order.
    fn concluded(
        &mut self,
        i: usize,
        r: crate::results::BenchResult,
    ) -> Vec<crate::results::BenchResult> {
        self.waiting[i] = Some(r);
        let mut ready = Vec::new();
        while let Some(r) = self.waiting.get_mut(self.next).and_then(Option::take) {
            ready.push(r);
            self.next += 1;
        }
        ready
    }

    /// The rows still waiting (behind rows an interruption left unmeasured), in order.
    fn rest(&mut self) -> Vec<crate::results::BenchResult> {
        self.waiting.iter_mut().filter_map(Option::take).collect()
    }
}

/// A progress bar on standard error, drawn only on a terminal and only once the run has
/// lasted two seconds. Its message (the benchmark, parameters away from their
/// defaults) is cut to the terminal's width, so the line never wraps.
struct Progress {
    bar: ProgressBar,
    start: Instant,
    tty: bool,
}

impl Progress {
    fn new(len: u64) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template(
            "{bar:30} {pos}/{len} rows settled {elapsed} {wide_msg}",
        ) {
            bar.set_style(style);
        }
        Progress {
            bar,
            start: Instant::now(),
            tty: std::io::stderr().is_terminal(),
        }
    }

    fn show(&self, round: u32, name: &str, p: &Params) {
        if self.tty
            && self.bar.is_hidden()
            && self.start.elapsed() > Duration::from_secs(2)
        {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        let pairs: Vec<(&str, &str)> =
            p.0.iter().map(|(k, v)| (*k, v.as_str())).collect();
        self.bar.set_message(format!(
            "round {} · {}",
            round + 1,
            layout::short_name(name, &pairs)
        ));
    }
}

/// `syscost explain --skid`.
fn skid(args: &RunArgs) -> anyhow::Result<ExitCode> {
    if let Some(c) = args.cpu {
        crate::os::affinity::set_cpus(&[c])?;
    }
    let k = crate::explain::skid::check(2.0, 4.0).map_err(|e| {
        anyhow::anyhow!(
            "explain --skid: sampling refused ({e}): it needs root, CAP_PERFMON, or \
             kernel.perf_event_paranoid ≤ 1"
        )
    })?;
    print!("{}", crate::explain::skid::text(&k));
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str], p: &[&str]) -> Result<Vec<String>, String> {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        plan(&s(v), &s(p))
            .map(|out| {
                out.iter()
                    .map(|(b, p)| format!("{} {}", b.name(), p.label()))
                    .collect()
            })
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_word_with_an_equals_sign_is_a_parameter_like_param() {
        let words = names(&["mem.brk", "n=1,64"], &[]).unwrap();
        assert_eq!(words, names(&["mem.brk"], &["n=1,64"]).unwrap());
        assert_eq!(words.len(), 2, "{words:?}");
        assert!(
            words[0].contains("n=1") && words[1].contains("n=64"),
            "{words:?}"
        );
        // As with a repeated --param, the last one given wins; words come after.
        let both = names(&["mem.brk", "n=1"], &["n=2"]).unwrap();
        assert_eq!(both, ["mem.brk n=1 below=own"]);
        // The same errors as --param: an unknown name and a bad value.
        let e = names(&["mem.brk", "nope=1"], &[]).unwrap_err();
        assert!(e.contains("nope"), "{e}");
        let e = names(&["mem.brk", "n=zero"], &[]).unwrap_err();
        assert!(e.contains("n"), "{e}");
        // Only parameters: every benchmark that takes one.
        let all = names(&["n=5"], &[]).unwrap();
        assert!(all.iter().any(|w| w.starts_with("mem.brk")), "{all:?}");
    }

    #[test]
    fn rows_are_written_in_the_selections_order_whatever_order_they_conclude_in() {
        let list = plan(
            &["syscall.getpid".into(), "mem.brk".into()],
            &["n=1,64".into()],
        )
        .unwrap();
        let list: Vec<(&dyn Bench, Params)> =
            list.iter().map(|(b, p)| (*b, p.clone())).collect();
        let n = list.len();
        assert!(n >= 3, "{n} rows");
        let row = |i: usize| {
            let name = format!("row{i}");
            let mut r = crate::results::tests::run_with_medians(&[(&name, 1.0)]).results
                [0]
            .clone();
            (r.status, r.measured) = (crate::results::Status::Skipped, None);
            r
        };
        let names = |v: Vec<crate::results::BenchResult>| -> Vec<String> {
            v.into_iter().map(|r| r.name).collect()
        };
        let mut rows = Rows::new(list.len());
        // The last row first: held until every row before it is written.
        assert!(rows.concluded(n - 1, row(n - 1)).is_empty());
        assert_eq!(names(rows.concluded(0, row(0))), ["row0"]);
        for i in 2..n - 1 {
            assert!(rows.concluded(i, row(i)).is_empty());
        }
        let all: Vec<String> = (1..n).map(|i| format!("row{i}")).collect();
        assert_eq!(names(rows.concluded(1, row(1))), all);
        assert!(rows.rest().is_empty());
        // Interrupted with a gap: what waits is written in order after it.
        let mut rows = Rows::new(list.len());
        assert!(rows.concluded(1, row(1)).is_empty());
        assert!(rows.concluded(n - 1, row(n - 1)).is_empty());
        assert_eq!(
            names(rows.rest()),
            ["row1".to_string(), format!("row{}", n - 1)]
        );
    }
}
