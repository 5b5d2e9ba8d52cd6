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
//! # The verdict
//!
//! With a noise threshold `t` (default 5%): *slower* when the interval lies above 1 and
//! `r > 1 + t`; *faster* when it lies below 1 and `r < 1/(1 + t)`; otherwise *no
//! change* (either not significant or within the noise threshold). A regression gate
//! (`--fail-on-regression PCT`) fails on any *slower* verdict with `t = PCT`.

pub mod render;

use crate::method;
use crate::results::{BenchResult, Run};
use crate::stats::rounds::t975;
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
    /// Not significant, or within the noise threshold.
    NoChange,
}

impl Verdict {
    /// The word the table prints.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoChange => "no change",
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

/// The getpid canary of two runs: the mean of each run's canary states weighted by
/// their shares, ns per call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineSpeed {
    /// The base run's canary.
    pub base_ns: f64,
    /// The other run's canary.
    pub other_ns: f64,
    /// other / base.
    pub ratio: f64,
    /// Whether the ratio is beyond the noise threshold: the machine ran at another
    /// speed, and changes of that size may be the machine.
    pub differs: bool,
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
    /// readings taken before the row's rounds (how much faster or slower the machine
    /// itself ran while this row was measured). Absent for other kinds of work, which
    /// the system-call canary does not follow (docs/measurements.md, "Isolation, and how
    /// much of it the machine's speed explains"), and where a run has no readings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<f64>,
    /// `ratio / speed`: the change at equal machine speed. Not a verdict: a reading of
    /// how much of the change the machine's speed explains.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_equal_speed: Option<f64>,
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

/// Two runs compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The base run (A).
    pub base: RunLabel,
    /// The other run (B).
    pub other: RunLabel,
    /// The noise threshold, as a fraction.
    pub threshold: f64,
    /// Host facts that differ: measured on different machines or configurations.
    pub host_differences: Vec<FactDifference>,
    /// Benchmarks measured in both, in the base run's order.
    pub rows: Vec<Row>,
    /// The machine's speed in each run, from the getpid canary read before every round:
    /// when it differs, part of every change may be the machine (its states), not the
    /// code.
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

impl Comparison {
    /// How many rows have each verdict: (faster, slower, no change).
    pub fn tally(&self) -> (usize, usize, usize) {
        let count = |v| self.rows.iter().filter(|r| r.verdict == v).count();
        (
            count(Verdict::Faster),
            count(Verdict::Slower),
            count(Verdict::NoChange),
        )
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

/// The ratio b/a with its 95% interval (delta method on the log scale, Welch's degrees
/// of freedom).
fn ratio_interval(a: Estimate, b: Estimate) -> (f64, f64, f64) {
    let ratio = b.mean / a.mean;
    let va = (a.se / a.mean).powi(2);
    let vb = (b.se / b.mean).powi(2);
    let v = va + vb;
    if !v.is_finite() {
        return (ratio, 0.0, f64::INFINITY);
    }
    if v == 0.0 {
        return (ratio, ratio, ratio);
    }
    let df = v * v / (va * va / a.df as f64 + vb * vb / b.df as f64);
    // Floored, as Welch's df is used with tables; a whisker below a whole number is
    // rounding (two equal variances give exactly twice the df of one).
    let t = t975(((df + 1e-9).floor() as usize).max(1));
    let w = t * v.sqrt();
    (ratio, ratio * (-w).exp(), ratio * w.exp())
}

/// The verdict for a ratio and its interval against the noise threshold.
pub fn verdict(ratio: f64, ci_low: f64, ci_high: f64, threshold: f64) -> Verdict {
    if ci_low > 1.0 && ratio > 1.0 + threshold {
        Verdict::Slower
    } else if ci_high < 1.0 && ratio < 1.0 / (1.0 + threshold) {
        Verdict::Faster
    } else {
        Verdict::NoChange
    }
}

/// Compares run `b` against the base `a`.
pub fn compare(a: (&RunLabel, &Run), b: (&RunLabel, &Run), threshold: f64) -> Comparison {
    let (la, ra) = a;
    let (lb, rb) = b;
    let measured = |run: &Run| -> BTreeMap<String, Estimate> {
        run.results
            .iter()
            .filter_map(|r| estimate(r).map(|e| (key(r), e)))
            .collect()
    };
    let ea = measured(ra);
    let eb = measured(rb);
    let mut rows = Vec::new();
    let mut only_in_base = Vec::new();
    for r in &ra.results {
        let k = key(r);
        let Some(&x) = ea.get(&k) else { continue };
        match eb.get(&k) {
            Some(&y) => {
                let (ratio, lo, hi) = ratio_interval(x, y);
                let other = rb.results.iter().find(|o| key(o) == k);
                let speed = row_canary(r)
                    .zip(other.and_then(row_canary))
                    .map(|(a, b)| b / a);
                rows.push(Row {
                    speed,
                    at_equal_speed: speed.map(|v| ratio / v),
                    name: r.name.clone(),
                    params: r.params.clone(),
                    base_ns: x.mean,
                    other_ns: y.mean,
                    ratio,
                    ci_low: lo,
                    ci_high: hi,
                    verdict: verdict(ratio, lo, hi, threshold),
                });
            }
            None => only_in_base.push(k),
        }
    }
    let only_in_other = rb
        .results
        .iter()
        .map(key)
        .filter(|k| eb.contains_key(k) && !ea.contains_key(k))
        .collect();
    let machine = ra
        .machine
        .base_ns()
        .zip(rb.machine.base_ns())
        .map(|(x, y)| MachineSpeed {
            base_ns: x,
            other_ns: y,
            ratio: y / x,
            differs: (y / x - 1.0).abs() > threshold,
        });
    let explains = ra
        .results
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
        .collect();
    Comparison {
        explains,
        base: la.clone(),
        other: lb.clone(),
        threshold,
        host_differences: host_differences(ra, rb),
        machine,
        rows,
        only_in_base,
        only_in_other,
        scaling: scaling_changes(ra, rb),
    }
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
                let (r, lo, hi) = ratio_interval(a, *b);
                (Some(r), Some((lo, hi)))
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
