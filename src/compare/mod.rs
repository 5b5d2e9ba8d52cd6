//! Comparing runs: what changed between two runs and whether it is real, and the
//! seeds' cross-machine table for several runs.
//!
//! # The ratio and its interval
//!
//! For a benchmark measured in both runs A (the base) and B, the figure is the ratio
//! `r = B/A` of the two headlines (each the trimmed mean of its round medians, see
//! [`crate::stats::rounds`]). Its 95% interval is computed on the log scale from the two
//! runs' intervals: each run's standard error is recovered from its interval as
//! `se = half-width / (t(0.975, df)·√2)`, with the degrees of freedom of its rounds
//! ([`crate::stats::rounds::degrees_of_freedom`]; so the floors each run applied, the
//! clock step and the pooled interval, are kept), or, for an interval the history set
//! from K runs' spread, `se = half-width / q(K)` on K−1 degrees of freedom
//! (`store::History::set_from_past_runs`, [`crate::stats::rounds::centre_quantile`]); `log r` has the standard error
//! `√((se_A/A)² + (se_B/B)²)` (the delta method), and the degrees of freedom are
//! Welch–Satterthwaite's. The interval is `exp(log r ± t·se)`.
//!
//! Why rounds and not samples: samples within one run are correlated through the
//! machine's state at the time, so a test on them (a bootstrap of the pooled median,
//! Mann–Whitney) calls two states of the same machine a significant change. The rounds
//! of a run are separated in time and interleaved with other benchmarks, so their
//! spread is the run-to-run variation that a comparison has to beat.
//!
//! A side may hold several runs (module `sides`): then the spread between its runs,
//! measured on that side, sets its variance, and the sides' labels keep runs of another
//! change out of it.
//!
//! # The verdict
//!
//! With a noise threshold `t` (default 5%): *slower* when the interval lies above 1 and
//! `r > 1 + t`; *faster* when it lies below 1 and `r < 1/(1 + t)`; *no change* when the
//! whole interval lies within `1/(1 + t)`..`1 + t`; otherwise *cannot tell*: the
//! interval reaches past the threshold, and these runs cannot say whether a change of
//! that size happened. Each row also carries the smallest slowdown its runs would call
//! slower four times in five, and the runs a side that would see one half again the
//! threshold. A regression gate (`--fail-on-regression PCT`) exits 1 on any *slower*
//! verdict with `t = PCT`, 125 (git bisect's "skip") on *cannot tell*.

mod notes;
pub mod render;
mod sides;

use crate::method;
use crate::results::{BenchResult, Run};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a comparison says about one benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// B is faster than A, significantly and beyond the noise threshold.
    Faster,
    /// B is slower than A, significantly and beyond the noise threshold.
    Slower,
    /// The whole interval lies within the noise threshold.
    NoChange,
    /// The interval reaches past the threshold: these runs cannot say whether a change
    /// of that size happened (more runs a side would).
    CannotTell,
}

impl Verdict {
    /// The word the table prints.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoChange => "no change",
            Verdict::CannotTell => "cannot tell",
        }
    }
}

/// A run as the comparison names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunLabel {
    /// How the user referred to it (an id, `last`, a file name).
    pub reference: String,
    /// The history id, when it came from the history.
    pub id: Option<i64>,
    /// The host name.
    pub host: String,
    /// The kernel release.
    pub kernel: String,
    /// When it started, seconds since the Unix epoch.
    pub started_unix_s: f64,
    /// The user's labels (`run --label`), sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    /// Whether the run finished (false: interrupted).
    #[serde(default = "finished")]
    pub complete: bool,
}

fn finished() -> bool {
    true
}

impl RunLabel {
    /// The label of `run`, referred to as `reference`.
    pub fn of(reference: &str, id: Option<i64>, run: &Run) -> RunLabel {
        RunLabel {
            reference: reference.to_string(),
            id,
            host: run
                .host
                .hostname
                .clone()
                .unwrap_or_else(|| "unknown".into()),
            kernel: run.host.kernel.clone().unwrap_or_else(|| "unknown".into()),
            started_unix_s: run.started_unix_s,
            labels: run.labels.clone(),
            complete: run.complete,
        }
    }
}

/// A host fact that differs between two runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FactDifference {
    /// The fact, e.g. `kernel`, `clocksource`, `vulnerability spectre_v2`.
    pub fact: String,
    /// Its value in the base run.
    pub base: String,
    /// Its value in the other run.
    pub other: String,
}

/// What the two sides read of the machine: the getpid canary's base state (the median
/// over a side's runs), ns per call, and the user-space probe's median where the runs
/// have one. A reading, never an adjustment: the canary is a system call, so a change
/// on the system-call path moves it as it moves the rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineSpeed {
    /// The base side's canary.
    pub base_ns: f64,
    /// The other side's canary.
    pub other_ns: f64,
    /// other / base.
    pub ratio: f64,
    /// Whether the canary's ratio is beyond the noise threshold.
    pub differs: bool,
    /// The user-space probe's B/A (the machine's speed where no system call enters:
    /// a change to the kernel's entry path does not move it); absent where a side's
    /// runs have no probe readings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_ratio: Option<f64>,
}

/// One benchmark instance in both runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// `family.name`.
    pub name: String,
    /// Parameter values.
    pub params: BTreeMap<String, String>,
    /// The base run's headline, ns per operation.
    pub base_ns: f64,
    /// The other run's headline.
    pub other_ns: f64,
    /// other / base.
    pub ratio: f64,
    /// The ratio's 95% interval, low end.
    pub ci_low: f64,
    /// The ratio's 95% interval, high end.
    pub ci_high: f64,
    /// The verdict against the threshold.
    pub verdict: Verdict,
    /// For a row of system-call work: B's getpid canary over A's, each the mean of the
    /// readings taken before the row's rounds (the median over a side's runs). A
    /// reading, not the machine's speed: the canary is a system call, and a change on
    /// that path moves it with the row. Absent for other kinds of work and where a run
    /// has no readings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<f64>,
    /// The runs of each side that measured the row (A, B).
    pub runs: (usize, usize),
    /// The smallest slowdown these runs would call slower four times in five, as a
    /// fraction (0.08: 8%); absent when the interval is unbounded.
    pub smallest_visible: Option<f64>,
    /// The runs a side that would see a slowdown of 1.5 × the threshold four times in
    /// five; absent when more than 30 would be needed.
    pub runs_asked: Option<usize>,
}

/// The mean getpid canary before `r`'s rounds, when it is system-call work.
fn row_canary(r: &BenchResult) -> Option<f64> {
    let m = r.measured.as_ref()?;
    if m.work != Some(crate::harness::probe::WorkKind::Syscall) {
        return None;
    }
    let xs: Vec<f64> = m
        .canary
        .as_ref()?
        .rounds_ns
        .iter()
        .copied()
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Two runs, or two sides of runs, compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The base run (A): the newest of its side.
    pub base: RunLabel,
    /// The other run (B): the newest of its side.
    pub other: RunLabel,
    /// Every run of side A, oldest first.
    pub base_runs: Vec<RunLabel>,
    /// Every run of side B, oldest first.
    pub other_runs: Vec<RunLabel>,
    /// What a reader must know before trusting the rows, in words: the machine's
    /// readings, labels that differ or are mixed within a side, incomplete runs, one run
    /// a side.
    pub warnings: Vec<String>,
    /// The noise threshold, as a fraction.
    pub threshold: f64,
    /// Host facts that differ between the sides' newest runs: measured on different
    /// machines or configurations.
    pub host_differences: Vec<FactDifference>,
    /// Benchmarks measured in both, in the base run's order.
    pub rows: Vec<Row>,
    /// What each side read of the machine (the getpid canary read before every round,
    /// the user-space probe); a reading, never an adjustment of a row.
    pub machine: Option<MachineSpeed>,
    /// Benchmarks measured (status ok) only in the base run, as `name params`.
    pub only_in_base: Vec<String>,
    /// Benchmarks measured only in the other run.
    pub only_in_other: Vec<String>,
    /// Where the time of each benchmark explained in both runs changed (`syscost
    /// explain`); absent when none was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub explains: Vec<crate::explain::diff::Diff>,
    /// Each copies point (`copies=N`) measured in both: its throughput and efficiency
    /// in A and in B (empty when nothing ran as copies).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scaling: Vec<ScalingChange>,
}

/// One copies point of a benchmark in both runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScalingChange {
    /// `family.name`.
    pub name: String,
    /// Its other parameters (`copies_as` among them).
    pub fixed: BTreeMap<String, String>,
    /// Copies at once.
    pub n: usize,
    /// Operations per second of all copies, in A and in B.
    pub throughput_ops_s: (f64, f64),
    /// Efficiency against one copy, in A and in B (absent without a copies=1 point).
    pub efficiency: (Option<f64>, Option<f64>),
}

/// The copies points measured in both runs, in A's order.
fn scaling_changes(ra: &Run, rb: &Run) -> Vec<ScalingChange> {
    let ta = crate::derived::scaling::tables(&ra.results);
    let tb = crate::derived::scaling::tables(&rb.results);
    let mut out = Vec::new();
    for a in &ta {
        let Some(b) = tb.iter().find(|b| b.name == a.name && b.fixed == a.fixed) else {
            continue;
        };
        for pa in &a.points {
            if let Some(pb) = b.points.iter().find(|p| p.n == pa.n) {
                out.push(ScalingChange {
                    name: a.name.clone(),
                    fixed: a.fixed.clone(),
                    n: pa.n,
                    throughput_ops_s: (pa.throughput_ops_s, pb.throughput_ops_s),
                    efficiency: (pa.efficiency, pb.efficiency),
                });
            }
        }
    }
    out
}

/// How many rows have each verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tally {
    /// Faster.
    pub faster: usize,
    /// Slower.
    pub slower: usize,
    /// No change.
    pub same: usize,
    /// Cannot tell.
    pub unsure: usize,
}

impl Comparison {
    /// How many rows have each verdict.
    pub fn tally(&self) -> Tally {
        let count = |v| self.rows.iter().filter(|r| r.verdict == v).count();
        Tally {
            faster: count(Verdict::Faster),
            slower: count(Verdict::Slower),
            same: count(Verdict::NoChange),
            unsure: count(Verdict::CannotTell),
        }
    }
}

/// A benchmark instance's key: its name and parameters.
pub fn key(r: &BenchResult) -> String {
    key_of(&r.name, &r.params)
}

/// The key of a name and parameters: `name p1=v1 p2=v2`.
pub fn key_of(name: &str, params: &BTreeMap<String, String>) -> String {
    let mut s = name.to_string();
    for (k, v) in params {
        s += &format!(" {k}={v}");
    }
    s
}

/// A run's headline and its standard error with degrees of freedom, recovered from its
/// round-level interval.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Estimate {
    mean: f64,
    se: f64,
    df: usize,
}

fn estimate(r: &BenchResult) -> Option<Estimate> {
    // A failed result may keep its measurement; it is not compared.
    if r.status != crate::results::Status::Ok {
        return None;
    }
    let m = r.measured.as_ref()?;
    if !(m.median_ns.is_finite() && m.median_ns > 0.0) {
        return None;
    }
    // An interval from the history is `q(K)·s` of its K runs (`centre_quantile`): the
    // runs' spread is the figure's standard error, on K−1 degrees of freedom (where the
    // run's own rounds set a side instead, the larger half stands for it).
    let half = ((m.ci_high_ns - m.ci_low_ns) / 2.0).max(0.0);
    // How many standard errors each side of the interval is.
    let (df, per_se) = match &m.between_runs {
        Some(b) if b.runs >= 2 => {
            (b.runs, crate::stats::rounds::centre_quantile(b.runs + 1))
        }
        _ => {
            let rounds = m.rounds.iter().filter(|x| x.median_ns.is_some()).count();
            let df = crate::stats::rounds::degrees_of_freedom(rounds).max(1);
            (df, crate::stats::rounds::t975(df) * method::RERUN)
        }
    };
    let se = if half.is_finite() {
        half / per_se
    } else {
        f64::INFINITY
    };
    Some(Estimate {
        mean: m.median_ns,
        se,
        df,
    })
}

/// The verdict for a ratio and its interval against the noise threshold: slower or
/// faster when the interval excludes 1 and the ratio is past the threshold, no change
/// when the whole interval lies within it, else cannot tell.
pub fn verdict(ratio: f64, ci_low: f64, ci_high: f64, threshold: f64) -> Verdict {
    if ci_low > 1.0 && ratio > 1.0 + threshold {
        Verdict::Slower
    } else if ci_high < 1.0 && ratio < 1.0 / (1.0 + threshold) {
        Verdict::Faster
    } else if ci_low >= 1.0 / (1.0 + threshold) && ci_high <= 1.0 + threshold {
        Verdict::NoChange
    } else {
        Verdict::CannotTell
    }
}

/// Compares run `b` against the base `a`.
pub fn compare(a: (&RunLabel, &Run), b: (&RunLabel, &Run), threshold: f64) -> Comparison {
    compare_sides(&[a], &[b], threshold)
}

/// A row's figure in one run, for a side ([`sides::RunFigure`]).
fn run_figure(r: &BenchResult) -> Option<sides::RunFigure> {
    let e = estimate(r)?;
    let own_rel = r.measured.as_ref()?.own_relative_se();
    Some(sides::RunFigure {
        mean: e.mean,
        se: e.se,
        df: e.df,
        own_rel,
    })
}

/// The keys of the rows measured in any run of a side, in the order its runs give them.
fn side_keys(side: &[(&RunLabel, &Run)]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for (_, run) in side {
        for r in &run.results {
            if estimate(r).is_some() && seen.insert(key(r)) {
                out.push(key(r));
            }
        }
    }
    out
}

/// The median of the finite, positive values of `xs`.
fn median_of(xs: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = xs.flatten().filter(|x| x.is_finite() && *x > 0.0).collect();
    crate::stats::median(&v)
}

/// Compares side `b` against the base side `a`, each one or more runs (oldest first):
/// a row's figure on a side is its runs' geometric mean, its variance the spread
/// between them (module `sides`).
pub fn compare_sides(
    a: &[(&RunLabel, &Run)],
    b: &[(&RunLabel, &Run)],
    threshold: f64,
) -> Comparison {
    let figures = |side: &[(&RunLabel, &Run)], k: &str| -> Vec<sides::RunFigure> {
        side.iter()
            .filter_map(|(_, run)| run.results.iter().find(|r| key(r) == k))
            .filter_map(run_figure)
            .collect()
    };
    let canary = |side: &[(&RunLabel, &Run)], k: &str| {
        median_of(side.iter().map(|(_, run)| {
            run.results
                .iter()
                .find(|r| key(r) == k)
                .and_then(row_canary)
        }))
    };
    let keys_b = side_keys(b);
    let mut rows = Vec::new();
    let mut only_in_base = Vec::new();
    for k in side_keys(a) {
        let (fa, fb) = (figures(a, &k), figures(b, &k));
        let (Some(sa), Some(sb)) = (sides::side(&fa), sides::side(&fb)) else {
            only_in_base.push(k);
            continue;
        };
        let j = sides::judge(&sa, &sb, threshold);
        let r = a
            .iter()
            .find_map(|(_, run)| run.results.iter().find(|r| key(r) == k))
            .expect("a key of side A comes from one of its rows");
        rows.push(Row {
            speed: canary(a, &k).zip(canary(b, &k)).map(|(x, y)| y / x),
            name: r.name.clone(),
            params: r.params.clone(),
            base_ns: sa.figure,
            other_ns: sb.figure,
            ratio: j.ratio,
            ci_low: j.low,
            ci_high: j.high,
            verdict: j.verdict,
            runs: (sa.k, sb.k),
            smallest_visible: j.visible,
            runs_asked: j.asked,
        });
    }
    let in_a: std::collections::HashSet<String> = side_keys(a).into_iter().collect();
    let only_in_other = keys_b.into_iter().filter(|k| !in_a.contains(k)).collect();
    let (la, ra) = *a.last().expect("a side holds a run");
    let (lb, rb) = *b.last().expect("a side holds a run");
    let machine = machine_speed(a, b, threshold);
    let host_differences = host_differences(ra, rb);
    let warnings = notes::warnings(a, b, machine.as_ref(), &host_differences, threshold);
    Comparison {
        explains: explains(ra, rb),
        base: la.clone(),
        other: lb.clone(),
        base_runs: a.iter().map(|(l, _)| (*l).clone()).collect(),
        other_runs: b.iter().map(|(l, _)| (*l).clone()).collect(),
        warnings,
        threshold,
        host_differences,
        machine,
        rows,
        only_in_base,
        only_in_other,
        scaling: scaling_changes(ra, rb),
    }
}

/// The user-space probe's median in a run, where its floors hold one.
fn user_probe(run: &Run) -> Option<f64> {
    run.machine
        .floors
        .iter()
        .find(|f| f.kind == crate::harness::probe::WorkKind::User)
        .map(|f| f.median_ns)
}

/// What the two sides read of the machine: their canaries' base states and user-space
/// probes, each the median over the side's runs.
fn machine_speed(
    a: &[(&RunLabel, &Run)],
    b: &[(&RunLabel, &Run)],
    threshold: f64,
) -> Option<MachineSpeed> {
    let base = |side: &[(&RunLabel, &Run)]| {
        median_of(side.iter().map(|(_, r)| r.machine.base_ns()))
    };
    let user =
        |side: &[(&RunLabel, &Run)]| median_of(side.iter().map(|(_, r)| user_probe(r)));
    let (x, y) = base(a).zip(base(b))?;
    Some(MachineSpeed {
        base_ns: x,
        other_ns: y,
        ratio: y / x,
        differs: (y / x - 1.0).abs() > threshold,
        user_ratio: user(a).zip(user(b)).map(|(u, v)| v / u),
    })
}

/// Where the time of each benchmark explained in both runs changed.
fn explains(ra: &Run, rb: &Run) -> Vec<crate::explain::diff::Diff> {
    ra.results
        .iter()
        .filter_map(|x| {
            let y = rb.results.iter().find(|y| key(y) == key(x))?;
            let d = crate::explain::diff::diff(
                &x.label(),
                x.explain.as_ref()?,
                y.explain.as_ref()?,
            );
            Some(d)
        })
        .collect()
}

/// The facts of a run that decide what operations cost, by name, in a fixed order:
/// the host (name, CPU, CPUs online, kernel and its build, hypervisor, clocksource,
/// governor, SMT, transparent huge pages, preemption model), the harness clock and
/// profile, then one entry per speculative-execution mitigation. Two runs whose facts
/// differ measured different machines or configurations.
pub fn cost_facts(run: &Run) -> Vec<(String, String)> {
    let text = |o: &Option<String>| o.clone().unwrap_or_else(|| "unknown".into());
    let h = &run.host;
    let mut facts = vec![
        ("host".to_string(), text(&h.hostname)),
        ("cpu".into(), text(&h.cpu_model)),
        ("cpus online".into(), h.cpus_online.to_string()),
        ("kernel".into(), text(&h.kernel)),
        ("kernel build".into(), text(&h.kernel_version)),
        ("virtualization".into(), text(&h.virtualization)),
        ("clocksource".into(), text(&h.clocksource)),
        ("governor".into(), text(&h.governor)),
        ("smt".into(), text(&h.smt)),
        ("thp".into(), text(&h.thp_enabled)),
        ("preemption".into(), text(&h.preempt_model)),
        ("harness clock".into(), run.clock.name.clone()),
        ("profile".into(), run.harness.profile.clone()),
    ];
    for v in &h.vulnerabilities {
        facts.push((format!("mitigation {}", v.name), v.status.clone()));
    }
    facts
}

/// The facts that decide costs ([`cost_facts`]) and differ between the two runs; a
/// mitigation listed in one run only is "absent" in the other.
pub fn host_differences(a: &Run, b: &Run) -> Vec<FactDifference> {
    let fa = cost_facts(a);
    let fb: BTreeMap<String, String> = cost_facts(b).into_iter().collect();
    let mut out = Vec::new();
    for (name, x) in &fa {
        let y = fb.get(name).cloned().unwrap_or_else(|| "absent".into());
        if *x != y {
            out.push(FactDifference {
                fact: name.clone(),
                base: x.clone(),
                other: y,
            });
        }
    }
    let in_a: std::collections::HashSet<&String> = fa.iter().map(|(n, _)| n).collect();
    for (name, y) in cost_facts(b) {
        if !in_a.contains(&name) {
            out.push(FactDifference {
                fact: name,
                base: "absent".into(),
                other: y,
            });
        }
    }
    out
}

/// Several runs side by side: each benchmark's median per run and every run's time
/// relative to the first, as the 1976 memo set the 11/40, 11/45 and 11/70 side by side.
/// The ratios are the way round of two runs compared ([`compare`]: B/A, above 1 is
/// slower), with the same intervals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// The runs, the first being the reference.
    pub runs: Vec<RunLabel>,
    /// One row per benchmark instance measured in at least one run.
    pub rows: Vec<TableRow>,
    /// For each run, the geometric mean over the benchmarks measured in it and in the
    /// first run of (this / first): above 1 means slower than the first.
    pub geomean_ratio: Vec<Option<f64>>,
    /// How many benchmarks entered each run's geometric mean.
    pub geomean_count: Vec<usize>,
}

/// One benchmark instance across the runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableRow {
    /// `name params`.
    pub key: String,
    /// The median in each run, ns per operation (None where not measured).
    pub median_ns: Vec<Option<f64>>,
    /// this / first, for each run, as [`Row::ratio`] (None where either is missing).
    pub ratio: Vec<Option<f64>>,
    /// The ratio's 95% interval, low end, as [`Row::ci_low`] (None for the first run).
    pub ci_low: Vec<Option<f64>>,
    /// The ratio's 95% interval, high end.
    pub ci_high: Vec<Option<f64>>,
}

/// The cross-run table of `runs` (the first is the reference).
pub fn table(runs: &[(RunLabel, &Run)]) -> Table {
    let mut order: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let maps: Vec<BTreeMap<String, (f64, Option<Estimate>)>> = runs
        .iter()
        .map(|(_, run)| {
            let mut m = BTreeMap::new();
            for r in &run.results {
                let k = key(r);
                if seen.insert(k.clone()) {
                    order.push(k.clone());
                }
                if let Some(x) = r.median_ns().filter(|x| x.is_finite() && *x > 0.0) {
                    m.insert(k, (x, estimate(r)));
                }
            }
            m
        })
        .collect();
    let rows: Vec<TableRow> = order.into_iter().map(|k| table_row(k, &maps)).collect();
    let mut geomean_ratio = Vec::new();
    let mut geomean_count = Vec::new();
    for i in 0..runs.len() {
        let logs: Vec<f64> = rows
            .iter()
            .filter_map(|r| r.ratio[i])
            .map(f64::ln)
            .collect();
        geomean_count.push(logs.len());
        geomean_ratio.push(if logs.is_empty() {
            None
        } else {
            Some((logs.iter().sum::<f64>() / logs.len() as f64).exp())
        });
    }
    Table {
        runs: runs.iter().map(|(l, _)| l.clone()).collect(),
        rows,
        geomean_ratio,
        geomean_count,
    }
}

/// One benchmark's row of the cross-run table: each run's median, and its ratio to the
/// first with the interval two runs compared would give it.
fn table_row(k: String, maps: &[BTreeMap<String, (f64, Option<Estimate>)>]) -> TableRow {
    let cells: Vec<Option<(f64, Option<Estimate>)>> =
        maps.iter().map(|m| m.get(&k).copied()).collect();
    let first = cells.first().copied().flatten();
    let mut row = TableRow {
        key: k,
        median_ns: cells.iter().map(|c| c.map(|(x, _)| x)).collect(),
        ratio: Vec::new(),
        ci_low: Vec::new(),
        ci_high: Vec::new(),
    };
    for (i, c) in cells.iter().enumerate() {
        let (ratio, interval) = match (first, c) {
            (Some(_), Some(_)) if i == 0 => (Some(1.0), None),
            (Some((_, Some(a))), Some((_, Some(b)))) => {
                let one = |e: Estimate| sides::RunFigure {
                    mean: e.mean,
                    se: e.se,
                    df: e.df,
                    own_rel: 0.0,
                };
                match (sides::side(&[one(a)]), sides::side(&[one(*b)])) {
                    (Some(x), Some(y)) => {
                        let j = sides::judge(&x, &y, 0.0);
                        (Some(j.ratio), Some((j.low, j.high)))
                    }
                    _ => (None, None),
                }
            }
            (Some((f, _)), Some((x, _))) => (Some(x / f), None),
            _ => (None, None),
        };
        row.ratio.push(ratio);
        row.ci_low.push(interval.map(|i| i.0));
        row.ci_high.push(interval.map(|i| i.1));
    }
    row
}

#[cfg(test)]
mod tests;
