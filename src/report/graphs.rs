//! The report's graphs, each a pure function from result data to an [`Svg`]: a
//! benchmark's samples over time and its distribution, sweeps with their fitted lines,
//! Sloan's ring (NCAR) graph, the 1999 file-read figure, Nagy's mailbox echo, and the
//! forest plot of a comparison; and [`plot`], which picks one for `syscost plot`.
//!
//! Drawing belongs to [`super::svg`]; this module chooses what to draw and says, as a
//! [`UsageError`], what a graph needs when the runs do not hold it. It measures nothing.

use super::svg::{color, Axis, Mark, Plot, Scale, Side, Style, Svg, Units};
use crate::compare::{key, Comparison, RunLabel, Verdict};
use crate::error::UsageError;
use crate::results::{fmt_ns, BenchResult, Measured, Run};
use crate::stats::fit::linear_fit;
use std::collections::BTreeMap;

/// The graphs `syscost plot` draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Graph {
    /// One benchmark's samples over time, with round medians and canary readings.
    Samples,
    /// One benchmark's distribution of clean samples, with the median and its CI.
    Distribution,
    /// Medians against a swept parameter, with the fitted line.
    Sweep,
    /// Sloan's graph: ring CPU time per pass against n (ctx.ring).
    Ring,
    /// The 1999 figure: file.read throughput against buffer size.
    FileRead,
    /// Nagy's mailbox echo: ipc.rtt round trip against message size.
    Mailbox,
    /// A comparison's ratios with their intervals, one row per benchmark.
    Forest,
}

/// The most sample points a samples graph draws by default; longer series are thinned
/// (every k-th clean sample; outliers are kept).
pub const MAX_POINTS: usize = 2000;

const CLEAN: &str = "#0072b2";
const OUTLIER: &str = "#d55e00";
const PERTURBED: &str = "#e69f00";
const CANARY: &str = "#cc79a7";
const INK: &str = "#000000";
const GREY: &str = "#777777";

/// How a run is named in legends.
pub fn run_name(l: &RunLabel) -> String {
    match l.id {
        Some(id) if l.reference != id.to_string() => format!("{} (#{id})", l.reference),
        _ => l.reference.clone(),
    }
}

fn measured(r: &BenchResult) -> Result<&Measured, UsageError> {
    r.measured.as_ref().ok_or_else(|| {
        UsageError::new(format!(
            "{} was not measured ({:?}: {}); choose a benchmark that was",
            key(r),
            r.status,
            r.reason.as_deref().unwrap_or("no reason given")
        ))
    })
}

fn headline(m: &Measured) -> String {
    let rounds = m.rounds.iter().filter(|r| r.median_ns.is_some()).count();
    let mut s = format!(
        "median {} (95% CI {} – {}) over {rounds} round{}",
        fmt_ns(m.median_ns),
        fmt_ns(m.ci_low_ns),
        fmt_ns(m.ci_high_ns),
        if rounds == 1 { "" } else { "s" }
    );
    if m.states.len() > 1 {
        s += &format!("; states {}", crate::harness::describe_states(&m.states));
    }
    s
}

/// A sample's kind from its flags: 0 clean, 1 outlier, 2 perturbed.
fn kind(flags: u8) -> u8 {
    if flags & 3 != 0 {
        1
    } else if flags & 4 != 0 {
        2
    } else {
        0
    }
}

/// The indices to draw: every outlier and perturbed sample (thinned too if they alone
/// exceed half the budget) and every k-th clean sample, at most `max` in all.
pub fn thin(flags: &[u8], max: usize) -> (Vec<usize>, usize) {
    let max = max.max(2);
    let special: Vec<usize> = (0..flags.len()).filter(|&i| kind(flags[i]) != 0).collect();
    let clean: Vec<usize> = (0..flags.len()).filter(|&i| kind(flags[i]) == 0).collect();
    let keep_special = every(&special, max / 2);
    let budget = max - keep_special.len().min(max / 2);
    let step = clean.len().div_ceil(budget).max(1);
    let mut out: Vec<usize> = clean.iter().copied().step_by(step).collect();
    out.extend(keep_special);
    out.sort_unstable();
    (out, step)
}

/// 2nd, 3rd, 4th, 11th, 21st.
fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

fn every(ix: &[usize], max: usize) -> Vec<usize> {
    let step = ix.len().div_ceil(max.max(1)).max(1);
    ix.iter().copied().step_by(step).collect()
}

/// A benchmark's samples over time: clean samples as dots, outliers as ×, perturbed
/// samples in orange, each round's median as a bar over the round, the headline dashed,
/// and the canary read before each round on the right axis. Rounds are drawn back to
/// back (the other benchmarks' rounds between them are left out). Without samples, the
/// round medians against the time each round began.
pub fn samples(r: &BenchResult, run: &str, max_points: usize) -> Result<Svg, UsageError> {
    let m = measured(r)?;
    let title = format!("{} — samples over time ({run})", key(r));
    let Some(s) = m.samples.as_ref().filter(|s| !s.per_op_ns.is_empty()) else {
        return Ok(round_medians(r, m, &title));
    };
    let n = s
        .per_op_ns
        .len()
        .min(s.at_ns.len())
        .min(s.flags.len())
        .min(s.round.len());
    let (offset, x, gap) = round_offsets(&s.round[..n], &s.at_ns[..n]);
    let xpos = |i: usize| {
        let (o, a, _) = offset[&s.round[i]];
        o + s.at_ns[i] - a
    };
    // The y range: clean samples and round medians; the others up to one range beyond.
    let clean: Vec<f64> = (0..n)
        .filter(|&i| kind(s.flags[i]) == 0)
        .map(|i| s.per_op_ns[i])
        .collect();
    let medians: Vec<f64> = m.rounds.iter().filter_map(|r| r.median_ns).collect();
    let base: Vec<f64> = clean.iter().chain(&medians).copied().collect();
    let (lo, hi) = min_max(if base.is_empty() { &s.per_op_ns } else { &base });
    let reach = (hi - lo).max(hi.abs() * 0.25);
    let (cap_lo, cap_hi) = ((lo - reach).max(0.0f64.min(lo)), hi + reach);
    let y = Axis::fit(
        "time per operation",
        Scale::Linear,
        Units::Ns,
        s.per_op_ns[..n]
            .iter()
            .map(|v| v.clamp(cap_lo, cap_hi))
            .chain(base.iter().copied()),
    );
    let x_axis = Axis::padded(
        "sampling time, rounds back to back",
        Scale::Linear,
        Units::Ns,
        [0.0, (x - gap).max(1.0)],
        0.01,
    );
    let (ylo, yhi) = y.domain();
    let mut p = Plot::new(&title, x_axis, y);
    p.note(&headline(m));
    let (keep, step) = thin(&s.flags[..n], max_points);
    // Per kind (clean, outlier, perturbed): on the scale, and beyond it at its edge.
    let mut groups: [Vec<(f64, f64)>; 3] = Default::default();
    let mut beyond: [Vec<(f64, f64)>; 3] = Default::default();
    for &i in &keep {
        let (v, k) = (s.per_op_ns[i], kind(s.flags[i]) as usize);
        if !v.is_finite() {
            continue;
        }
        if v > yhi || v < ylo {
            beyond[k].push((xpos(i), v.clamp(ylo, yhi)));
        } else {
            groups[k].push((xpos(i), v));
        }
    }
    let drawn_note = if step > 1 {
        format!(
            "{} of {n} samples drawn: every {} clean sample, every outlier and perturbed sample",
            keep.len(),
            ordinal(step)
        )
    } else {
        format!("all {n} samples drawn")
    };
    let off: usize = beyond.iter().map(Vec::len).sum();
    p.note(&if off > 0 {
        format!("{drawn_note}; {off} beyond the scale drawn at its edge (▲)")
    } else {
        drawn_note
    });
    draw_rounds(&mut p, &offset, gap, m, yhi);
    p.marks(&groups[0], Style::solid(CLEAN).opacity(0.6), Mark::Dot, 3.0);
    p.marks(&groups[2], Style::solid(PERTURBED), Mark::Cross, 5.0);
    p.marks(&groups[1], Style::solid(OUTLIER), Mark::Cross, 5.0);
    for (pts, c) in beyond.iter().zip([CLEAN, OUTLIER, PERTURBED]) {
        p.marks(pts, Style::solid(c), Mark::Up, 6.0);
    }
    p.hrule(m.median_ns, Style::dashed(INK).width(1.0), Side::Left);
    p.legend_mark(Style::solid(CLEAN), Mark::Circle, "clean sample");
    if !groups[1].is_empty() || !beyond[1].is_empty() {
        p.legend_mark(Style::solid(OUTLIER), Mark::Cross, "outlier");
    }
    if !groups[2].is_empty() || !beyond[2].is_empty() {
        p.legend_mark(
            Style::solid(PERTURBED),
            Mark::Cross,
            "perturbed (switch or fault)",
        );
    }
    p.legend(Style::solid(INK).width(2.5), None, "round median");
    p.legend(Style::dashed(INK).width(1.0), None, "headline");
    // The canary before each round, on the right axis.
    if let Some(c) = m.canary.as_ref().filter(|c| !c.rounds_ns.is_empty()) {
        let pts: Vec<(f64, f64)> = offset
            .values()
            .zip(&c.rounds_ns)
            .map(|(&(o, _, _), &v)| (o, v))
            .collect();
        add_canary(&mut p, &c.rounds_ns, &pts);
    }
    Ok(p.render())
}

/// Where each round's samples go on an axis that puts the rounds back to back: per
/// round, (its start on the axis, its first and last sample's time); then the axis's
/// end and the gap left between rounds.
fn round_offsets(
    round: &[u32],
    at_ns: &[f64],
) -> (BTreeMap<u32, (f64, f64, f64)>, f64, f64) {
    let mut spans: BTreeMap<u32, (f64, f64)> = BTreeMap::new();
    for (&r, &t) in round.iter().zip(at_ns) {
        let e = spans.entry(r).or_insert((t, t));
        e.0 = e.0.min(t);
        e.1 = e.1.max(t);
    }
    let total: f64 = spans.values().map(|(a, b)| b - a).sum();
    let gap = (total * 0.02).max(1.0);
    let mut offset = BTreeMap::new();
    let mut x = 0.0;
    for (&round, &(a, b)) in &spans {
        offset.insert(round, (x, a, b));
        x += b - a + gap;
    }
    (offset, x, gap)
}

/// The rounds on a samples plot: a dotted rule between rounds, their labels when there
/// are at most 12, and each round's median as a bar over the round.
fn draw_rounds(
    p: &mut Plot,
    offset: &BTreeMap<u32, (f64, f64, f64)>,
    gap: f64,
    m: &Measured,
    yhi: f64,
) {
    let labelled = offset.len() <= 12;
    for (k, (&round, &(o, a, b))) in offset.iter().enumerate() {
        if k > 0 {
            p.vrule(o - gap / 2.0, Style::dotted(GREY).width(1.0));
        }
        if labelled {
            p.text(o, yhi, &format!("r{round}"), "start", GREY);
        }
        if let Some(med) = m
            .rounds
            .iter()
            .find(|f| f.round == round)
            .and_then(|f| f.median_ns)
        {
            p.line(
                &[(o, med), (o + (b - a).max(gap / 4.0), med)],
                Style::solid(INK).width(2.5),
            );
        }
    }
}

fn add_canary(p: &mut Plot, readings: &[f64], pts: &[(f64, f64)]) {
    let mid = crate::stats::summarize(readings).map_or(f64::NAN, |s| s.median);
    let axis = Axis::fit(
        "canary: getpid before the round",
        Scale::Linear,
        Units::Ns,
        readings.iter().copied().chain([mid * 0.9, mid * 1.1]),
    );
    p.right_axis(axis);
    p.marks_on(pts, Style::solid(CANARY), Mark::Diamond, 8.0, Side::Right);
    p.legend_mark(Style::solid(CANARY), Mark::Diamond, "canary (right axis)");
}

fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter()
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        })
}

/// Round medians against the time each round began (no samples were kept).
fn round_medians(r: &BenchResult, m: &Measured, title: &str) -> Svg {
    let pts: Vec<(f64, f64)> = m
        .rounds
        .iter()
        .filter_map(|f| f.median_ns.map(|v| (f.start_ns, v)))
        .collect();
    let x = Axis::fit(
        "time since the run began",
        Scale::Linear,
        Units::Ns,
        pts.iter().map(|p| p.0).chain([0.0]),
    );
    let y = Axis::fit(
        "time per operation",
        Scale::Linear,
        Units::Ns,
        pts.iter()
            .map(|p| p.1)
            .chain([m.ci_low_ns.max(0.0), m.ci_high_ns]),
    );
    let mut p = Plot::new(title, x, y);
    p.note(&headline(m));
    p.note(&format!(
        "{}: no samples were kept (--no-samples), so only the round medians are drawn",
        key(r)
    ));
    p.hrule(m.median_ns, Style::dashed(INK).width(1.0), Side::Left);
    p.line(&pts, Style::solid(INK).width(1.0).opacity(0.5));
    p.marks(&pts, Style::solid(INK), Mark::Square, 6.0);
    p.legend_mark(Style::solid(INK), Mark::Square, "round median");
    p.legend(Style::dashed(INK).width(1.0), None, "headline");
    if let Some(c) = m.canary.as_ref().filter(|c| !c.rounds_ns.is_empty()) {
        let cpts: Vec<(f64, f64)> = m
            .rounds
            .iter()
            .zip(&c.rounds_ns)
            .map(|(f, &v)| (f.start_ns, v))
            .collect();
        add_canary(&mut p, &c.rounds_ns, &cpts);
    }
    p.render()
}

/// A benchmark's distribution: a histogram of its clean samples with the headline
/// median, its 95% CI and the pooled median of the clean samples marked. Without
/// samples, each round's median on its own row.
pub fn distribution(r: &BenchResult, run: &str) -> Result<Svg, UsageError> {
    let m = measured(r)?;
    let title = format!("{} — distribution ({run})", key(r));
    let clean: Vec<f64> = m
        .samples
        .as_ref()
        .map(|s| {
            s.per_op_ns
                .iter()
                .zip(&s.flags)
                .filter(|(v, f)| kind(**f) == 0 && v.is_finite())
                .map(|(v, _)| *v)
                .collect()
        })
        .unwrap_or_default();
    if clean.len() < 2 {
        return Ok(round_strip(r, m, &title));
    }
    let (lo, hi) = min_max(&clean);
    // The CI widens the axis by at most a quarter of the samples' range each side (a
    // wider one runs off the edge; the note gives its ends).
    let reach = (hi - lo) * 0.25;
    let x = Axis::fit(
        "time per operation",
        Scale::Linear,
        Units::Ns,
        [
            lo,
            hi,
            m.median_ns,
            m.ci_low_ns.max(lo - reach),
            m.ci_high_ns.min(hi + reach),
        ],
    );
    let (xlo, xhi) = x.domain();
    let bins = ((2.0 * (clean.len() as f64).cbrt()).round() as usize).clamp(10, 60);
    let (blo, bhi) = if hi > lo { (lo, hi) } else { (xlo, xhi) };
    let width = (bhi - blo) / bins as f64;
    let mut counts = vec![0usize; bins];
    for v in &clean {
        let b = (((v - blo) / width) as usize).min(bins - 1);
        counts[b] += 1;
    }
    let top = counts.iter().copied().max().unwrap_or(1) as f64;
    let y = Axis::fit(
        "clean samples",
        Scale::Linear,
        Units::Number,
        [0.0, (top * 1.05).max(5.0)],
    );
    let mut p = Plot::new(&title, x, y);
    p.note(&headline(m));
    let batch = if m.batch == 1 {
        "each sample is one operation".to_string()
    } else {
        format!("a sample is the mean of {} operations", m.batch)
    };
    p.note(&format!(
        "{} clean samples of {} (outliers and perturbed samples left out); {batch}",
        clean.len(),
        m.samples.as_ref().map_or(0, |s| s.per_op_ns.len()),
    ));
    p.band_x(m.ci_low_ns, m.ci_high_ns, "#f4a582", 0.45);
    let bars: Vec<(f64, f64, f64)> = counts
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let a = blo + width * i as f64;
            (a, a + width, c as f64)
        })
        .collect();
    p.bars(&bars, CLEAN);
    p.vrule(m.median_ns, Style::solid(OUTLIER).width(2.0));
    let pooled = m.clean.as_ref().map(|c| c.median);
    if let Some(pm) = pooled {
        p.vrule(pm, Style::dashed(INK).width(1.0));
    }
    p.legend(
        Style::solid("#f4a582").width(8.0).opacity(0.6),
        None,
        "95% CI of the headline",
    );
    p.legend(Style::solid(OUTLIER).width(2.0), None, "headline median");
    if pooled.is_some() {
        p.legend(
            Style::dashed(INK).width(1.0),
            None,
            "median of the pooled clean samples",
        );
    }
    Ok(p.render())
}

/// Each round's median on its own row, with the headline and its CI.
fn round_strip(r: &BenchResult, m: &Measured, title: &str) -> Svg {
    let pts: Vec<(f64, f64)> = m
        .rounds
        .iter()
        .filter_map(|f| f.median_ns.map(|v| (v, f.round as f64)))
        .collect();
    let x = Axis::fit(
        "time per operation",
        Scale::Linear,
        Units::Ns,
        pts.iter().map(|p| p.0).chain([m.ci_low_ns, m.ci_high_ns]),
    );
    let y = Axis::fit(
        "round",
        Scale::Linear,
        Units::Number,
        pts.iter().map(|p| p.1).chain([-0.5]),
    );
    let mut p = Plot::new(title, x, y);
    p.note(&headline(m));
    p.note(&format!(
        "{}: no samples were kept, so each round's median is drawn instead of a histogram",
        key(r)
    ));
    p.band_x(m.ci_low_ns, m.ci_high_ns, "#f4a582", 0.45);
    p.vrule(m.median_ns, Style::solid(OUTLIER).width(2.0));
    p.marks(&pts, Style::solid(INK), Mark::Square, 6.0);
    p.legend_mark(Style::solid(INK), Mark::Square, "round median");
    p.legend(Style::solid(OUTLIER).width(2.0), None, "headline");
    p.legend(
        Style::solid("#f4a582").width(8.0).opacity(0.6),
        None,
        "95% CI",
    );
    p.render()
}

/// A sweep's identity: benchmark, swept parameter, the other parameters.
type SweepKey = (String, String, BTreeMap<String, String>);

/// Whether `name`'s parameter `param` is a size in bytes, from the catalogue.
fn is_bytes(name: &str, param: &str) -> bool {
    crate::bench::find(name).is_some_and(|b| {
        b.params().iter().any(|p| {
            p.name == param && matches!(p.kind, crate::bench::params::Kind::Bytes { .. })
        })
    })
}

/// A measured point: (x, median, CI low, CI high).
type Point = (f64, f64, f64, f64);

/// The points of a sweep in one run, by x.
fn sweep_points(run: &Run, k: &SweepKey) -> Vec<Point> {
    let mut pts: Vec<Point> = run
        .results
        .iter()
        .filter(|r| r.name == k.0)
        .filter_map(|r| {
            let x: f64 = r.params.get(&k.1)?.parse().ok()?;
            let mut fixed = r.params.clone();
            fixed.remove(&k.1);
            let m = r.measured.as_ref()?;
            (fixed == k.2).then_some((x, m.median_ns, m.ci_low_ns, m.ci_high_ns))
        })
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    pts
}

/// `t = a + b × param, r² …`, with the sign written out.
pub fn equation(
    intercept: f64,
    slope: f64,
    param: &str,
    bytes: bool,
    r2: Option<f64>,
) -> String {
    let sign = if slope < 0.0 { "−" } else { "+" };
    let unit = if bytes { " (bytes)" } else { "" };
    let mut s = format!(
        "t = {} {sign} {} × {param}{unit}",
        fmt_ns(intercept),
        fmt_ns(slope.abs())
    );
    if let Some(r2) = r2 {
        s += &format!(", r² {r2:.2}");
    }
    s
}

fn axis_for(title: &str, units: Units, xs: &[f64]) -> Axis {
    let (lo, hi) = min_max(xs);
    let scale = if lo > 0.0 && hi / lo >= 50.0 {
        Scale::Log
    } else {
        Scale::Linear
    };
    Axis::padded(title, scale, units, xs.iter().copied(), PAD)
}

/// The margin beside the data on a parameter axis, as a fraction of its range.
const PAD: f64 = 0.04;

fn fixed_label(fixed: &BTreeMap<String, String>) -> String {
    fixed
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One graph per sweep in the runs (a sweep in several runs is overlaid): medians with
/// their CIs against the parameter, and each run's fitted line with its equation.
/// `filter` keeps sweeps whose benchmark matches it (a glob or a family).
pub fn sweeps(
    runs: &[(RunLabel, Run)],
    filter: Option<&str>,
) -> Result<Vec<Svg>, UsageError> {
    let mut keys: Vec<SweepKey> = Vec::new();
    for (_, run) in runs {
        for f in &run.sweeps {
            let k = (f.name.clone(), f.param.clone(), f.fixed.clone());
            let wanted = filter.is_none_or(|p| crate::bench::matches(p, &f.name));
            if wanted && !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    if keys.is_empty() {
        return Err(UsageError::new(match filter {
            Some(f) => format!(
                "no sweep of a benchmark matching {f:?} in these runs: a sweep needs one numeric \
                 parameter at several values, e.g. `syscost run syscall.args -p args=0,2,4,6`"
            ),
            None => "the sweep graph needs a numeric parameter swept over several values: run e.g. \
                     `syscost run syscall.args -p args=0,2,4,6`"
                .into(),
        }));
    }
    Ok(keys.iter().map(|k| sweep(runs, k)).collect())
}

fn sweep(runs: &[(RunLabel, Run)], k: &SweepKey) -> Svg {
    let bytes = is_bytes(&k.0, &k.1);
    let series: Vec<(String, Vec<Point>, &crate::results::SweepFit)> = runs
        .iter()
        .filter_map(|(l, run)| {
            let f = run
                .sweeps
                .iter()
                .find(|f| f.name == k.0 && f.param == k.1 && f.fixed == k.2)?;
            Some((run_name(l), sweep_points(run, k), f))
        })
        .collect();
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.1.iter().map(|p| p.0))
        .collect();
    let x = axis_for(&k.1, if bytes { Units::Bytes } else { Units::Number }, &xs);
    let ys = series
        .iter()
        .flat_map(|s| s.1.iter().flat_map(|p| [p.1, p.2.max(0.0), p.3]));
    let y = Axis::fit("time per operation (median)", Scale::Linear, Units::Ns, ys);
    let mut title = format!("{} against {}", k.0, k.1);
    if !k.2.is_empty() {
        title += &format!(" ({})", fixed_label(&k.2));
    }
    let mut p = Plot::new(&title, x.clone(), y);
    p.note("medians with their 95% CIs; the line is the least-squares fit through the medians");
    let many = series.len() > 1;
    for (i, (name, pts, fit)) in series.iter().enumerate() {
        let c = color(i);
        let prefix = if many {
            format!("{name}: ")
        } else {
            String::new()
        };
        let (a, b) = (fit.intercept_ns, fit.slope_ns);
        p.line(&fit_curve(&x, a, b), Style::dashed(c));
        let eq = equation(a, b, &k.1, bytes, Some(fit.r2));
        p.legend(Style::dashed(c), None, &format!("{prefix}{eq}"));
        let med: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
        let bars: Vec<(f64, f64, f64)> = pts.iter().map(|p| (p.0, p.2, p.3)).collect();
        p.error_bars_y(&bars, Style::solid(c).width(1.0));
        p.marks(&med, Style::solid(c), Mark::Circle, 6.0);
        p.legend_mark(
            Style::solid(c),
            Mark::Circle,
            &format!("{prefix}median, 95% CI"),
        );
    }
    p.render()
}

/// Points of `y = a + b·x` across the axis, evenly spaced on its scale (a curve on a
/// log axis).
fn fit_curve(x: &Axis, a: f64, b: f64) -> Vec<(f64, f64)> {
    (0..=64)
        .map(|i| {
            let v = x.value_at(i as f64 / 64.0);
            (v, a + b * v)
        })
        .collect()
}

/// Names the parameters whose values differ between the maps (empty when one map).
fn distinguishing(maps: &[&BTreeMap<String, String>]) -> Vec<String> {
    let mut keys: Vec<String> = maps.iter().flat_map(|m| m.keys().cloned()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| maps.iter().any(|m| m.get(k) != maps[0].get(k)))
        .collect()
}

fn label_of(
    run: Option<&str>,
    fixed: &BTreeMap<String, String>,
    keys: &[String],
) -> String {
    let mut parts: Vec<String> = run.map(str::to_string).into_iter().collect();
    parts.extend(
        keys.iter()
            .filter_map(|k| fixed.get(k).map(|v| format!("{k}={v}"))),
    );
    if parts.is_empty() {
        "this run".into()
    } else {
        parts.join(" ")
    }
}

/// Sloan's graph (NCAR, 1992): CPU time per pass around the ring against n for every
/// ring table in the runs, on one scale, with the Projected line (the n curve through
/// the first point), the n² curve through the first point, and the knee marked.
pub fn ring(runs: &[(RunLabel, Run)]) -> Result<Svg, UsageError> {
    let tables: Vec<(String, &crate::results::RingTable)> = runs
        .iter()
        .flat_map(|(l, r)| r.rings.iter().map(move |t| (run_name(l), t)))
        .filter(|(_, t)| !t.rows.is_empty())
        .collect();
    if tables.is_empty() {
        return Err(UsageError::new(
            "the ring graph needs a ctx.ring sweep over n: run `syscost run ctx.ring -p n=2,4,8,16`",
        ));
    }
    let fixed: Vec<&BTreeMap<String, String>> =
        tables.iter().map(|(_, t)| &t.fixed).collect();
    let keys = distinguishing(&fixed);
    let many_runs = runs.iter().filter(|(_, r)| !r.rings.is_empty()).count() > 1;
    let ns = tables
        .iter()
        .flat_map(|(_, t)| t.rows.iter().map(|r| r.n as f64));
    let x = Axis::fit(
        "n (tasks in the ring)",
        Scale::Linear,
        Units::Number,
        ns.chain([0.0]),
    );
    let ys = tables.iter().flat_map(|(_, t)| {
        t.rows
            .iter()
            .flat_map(|r| [r.cpu_us_per_pass * 1e3, r.projected_us_per_pass * 1e3])
    });
    let y = Axis::fit(
        "CPU time per pass",
        Scale::Linear,
        Units::Ns,
        ys.chain([0.0]),
    );
    let mut p = Plot::new(
        "Ring of n tasks passing a token (Sloan 1992, the NCAR graph)",
        x,
        y,
    );
    p.note(
        "CPU time of all tasks per pass (µs per pass = seconds per 10⁶ passes, the paper's unit); \
         Projected is the n curve through the first point",
    );
    for (i, (run, t)) in tables.iter().enumerate() {
        let c = color(i);
        let label = label_of(many_runs.then_some(run.as_str()), &t.fixed, &keys);
        let cpu: Vec<(f64, f64)> = t
            .rows
            .iter()
            .map(|r| (r.n as f64, r.cpu_us_per_pass * 1e3))
            .collect();
        let proj: Vec<(f64, f64)> = t
            .rows
            .iter()
            .map(|r| (r.n as f64, r.projected_us_per_pass * 1e3))
            .collect();
        let (n0, c0) = cpu[0];
        let n_max = cpu[cpu.len() - 1].0;
        let square: Vec<(f64, f64)> = (0..=48)
            .map(|k| {
                let n = n0 + (n_max - n0) * k as f64 / 48.0;
                (n, c0 * (n / n0).powi(2))
            })
            .collect();
        p.line(&square, Style::dotted(c).opacity(0.7));
        p.line(&proj, Style::dashed(c));
        p.line(&cpu, Style::solid(c).width(2.0));
        p.marks(&cpu, Style::solid(c), Mark::Circle, 6.0);
        let growth = t
            .growth_exponent
            .filter(|b| b.is_finite())
            .map_or(String::new(), |b| format!(": CPU ∝ n^{b:.2}"));
        p.legend(
            Style::solid(c).width(2.0),
            Some(Mark::Circle),
            &format!("{label}{growth}"),
        );
        if let Some(k) = t.knee_n {
            if let Some(&(n, v)) = cpu.iter().find(|p| p.0 == k as f64) {
                p.marks(&[(n, v)], Style::solid(c).width(2.0), Mark::Ring, 16.0);
                p.text(n, v, &format!("  knee n={k}"), "start", c);
            }
        }
    }
    p.legend(
        Style::solid(GREY).width(2.0),
        Some(Mark::Circle),
        "CPU per pass",
    );
    p.legend(Style::dashed(GREY), None, "Projected (∝ n)");
    p.legend(Style::dotted(GREY), None, "∝ n²");
    if tables.iter().any(|(_, t)| t.knee_n.is_some()) {
        p.legend_mark(Style::solid(INK).width(2.0), Mark::Ring, "knee");
    }
    Ok(p.render())
}

/// Results of `name` in each run that has any, as (run name, results).
fn results_of<'a>(
    runs: &'a [(RunLabel, Run)],
    name: &str,
) -> Vec<(String, Vec<&'a BenchResult>)> {
    runs.iter()
        .map(|(l, r)| {
            (
                run_name(l),
                r.results
                    .iter()
                    .filter(|x| x.name == name && x.measured.is_some())
                    .collect::<Vec<_>>(),
            )
        })
        .filter(|(_, v)| !v.is_empty())
        .collect()
}

/// Groups results by their parameters other than `swept`, in order of appearance.
fn series_by<'a>(
    results: &[&'a BenchResult],
    swept: &str,
) -> Vec<(BTreeMap<String, String>, Vec<&'a BenchResult>)> {
    let mut out: Vec<(BTreeMap<String, String>, Vec<&BenchResult>)> = Vec::new();
    for r in results {
        let mut f = r.params.clone();
        f.remove(swept);
        match out.iter_mut().find(|(k, _)| *k == f) {
            Some((_, v)) => v.push(r),
            None => out.push((f, vec![r])),
        }
    }
    out
}

fn param_f64(r: &BenchResult, p: &str) -> Option<f64> {
    r.params.get(p)?.parse().ok()
}

/// The 1999 figure (Manea, figures 1–2): file.read throughput (MB/s, 10⁶ bytes per
/// second) against the buffer size on log axes, one line per method, warm solid and
/// cold dashed; one panel per run, all on one scale.
pub fn file_read(runs: &[(RunLabel, Run)]) -> Result<Svg, UsageError> {
    let per_run = results_of(runs, "file.read");
    if per_run.is_empty() {
        return Err(UsageError::new(
            "the file-read figure needs file.read results: run \
             `syscost run file.read -p size=8,64,512,4k,64k`",
        ));
    }
    let mbs = |r: &BenchResult, ns: f64| param_f64(r, "size").map(|s| s / ns * 1e3);
    let all = per_run.iter().flat_map(|(_, v)| v.iter());
    let xs: Vec<f64> = all.clone().filter_map(|r| param_f64(r, "size")).collect();
    let ys: Vec<f64> = all
        .flat_map(|r| {
            let m = r.measured.as_ref().expect("measured");
            [m.median_ns, m.ci_low_ns, m.ci_high_ns]
                .map(|ns| mbs(r, ns).unwrap_or(f64::NAN))
        })
        .collect();
    let x = Axis::padded(
        "buffer size (bytes per call)",
        Scale::Log,
        Units::Bytes,
        xs,
        PAD,
    );
    let y = Axis::fit("throughput, MB/s", Scale::Log, Units::Number, ys);
    let methods = ["read", "pread", "buffered", "stdio", "mmap"];
    let panels: Vec<Svg> = per_run
        .iter()
        .map(|(run, rs)| {
            let title = if per_run.len() > 1 {
                format!("Reading a file by method (manea1999 figures 1–2) — {run}")
            } else {
                "Reading a file by method (manea1999 figures 1–2)".to_string()
            };
            let mut p = Plot::new(&title, x.clone(), y.clone());
            p.note("throughput = bytes per call / median time per call; warm cache solid, cold dashed; bars: 95% CI");
            let series = series_by(rs, "size");
            let fixed: Vec<&BTreeMap<String, String>> = series.iter().map(|s| &s.0).collect();
            let mut keys = distinguishing(&fixed);
            keys.retain(|k| k != "method" && k != "cache");
            for (f, rs) in &series {
                let method = f.get("method").map_or("", String::as_str);
                let cold = f.get("cache").is_some_and(|c| c == "cold");
                let ci = methods.iter().position(|m| *m == method).unwrap_or(5);
                let c = color(ci);
                let style = if cold { Style::dashed(c) } else { Style::solid(c) };
                let mut pts: Vec<Point> = rs
                    .iter()
                    .filter_map(|r| {
                        let m = r.measured.as_ref()?;
                        Some((
                            param_f64(r, "size")?,
                            mbs(r, m.median_ns)?,
                            mbs(r, m.ci_high_ns)?,
                            mbs(r, m.ci_low_ns)?,
                        ))
                    })
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                let line: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
                let bars: Vec<(f64, f64, f64)> = pts.iter().map(|p| (p.0, p.2, p.3)).collect();
                p.error_bars_y(&bars, Style::solid(c).width(1.0));
                p.line(&line, style);
                let mark = if cold { Mark::Square } else { Mark::Circle };
                p.marks(&line, Style::solid(c), mark, 6.0);
                let mut label = format!("{method} {}", if cold { "cold" } else { "warm" });
                for k in &keys {
                    if let Some(v) = f.get(k) {
                        label += &format!(" {k}={v}");
                    }
                }
                p.legend(style, Some(mark), &label);
            }
            p.render()
        })
        .collect();
    Ok(one_or_stack(
        "file.read throughput against buffer size",
        panels,
    ))
}

fn one_or_stack(title: &str, mut panels: Vec<Svg>) -> Svg {
    if panels.len() == 1 {
        panels.remove(0)
    } else {
        Svg::stack(title, &panels)
    }
}

/// MB/s (10⁶ bytes per second) from bytes per ns.
fn rate(bytes_per_ns: f64) -> String {
    let mb = bytes_per_ns * 1e3;
    if mb >= 1e3 {
        format!("{:.2} GB/s", mb / 1e3)
    } else {
        format!("{mb:.1} MB/s")
    }
}

/// Nagy's mailbox echo (VAX/VMS Table III): ipc.rtt round trip against message size,
/// one line per transport, each with the fitted line `overhead + size / bandwidth`
/// (overhead the intercept, bandwidth 1/slope); one panel per run on one scale.
pub fn mailbox(runs: &[(RunLabel, Run)]) -> Result<Svg, UsageError> {
    let per_run = results_of(runs, "ipc.rtt");
    if per_run
        .iter()
        .all(|(_, v)| series_by(v, "size").iter().all(|(_, s)| s.len() < 2))
    {
        return Err(UsageError::new(
            "the mailbox echo needs ipc.rtt at two message sizes or more: run \
             `syscost run ipc.rtt -p transport=pipe,unix_stream -p size=4,512,4096,10240`",
        ));
    }
    let all = per_run.iter().flat_map(|(_, v)| v.iter());
    let xs: Vec<f64> = all.clone().filter_map(|r| param_f64(r, "size")).collect();
    let ys: Vec<f64> = all
        .flat_map(|r| {
            let m = r.measured.as_ref().expect("measured");
            [m.median_ns, m.ci_low_ns.max(0.0), m.ci_high_ns]
        })
        .collect();
    let x = Axis::padded(
        "message size",
        Scale::Linear,
        Units::Bytes,
        xs.into_iter().chain([0.0]),
        PAD,
    );
    let y = Axis::fit(
        "round trip",
        Scale::Linear,
        Units::Ns,
        ys.into_iter().chain([0.0]),
    );
    let panels = per_run
        .iter()
        .map(|(run, rs)| {
            let title = if per_run.len() > 1 {
                format!("Mailbox echo: round trip against message size — {run}")
            } else {
                "Mailbox echo: round trip against message size (Nagy, VAX/VMS Table III)".into()
            };
            let mut p = Plot::new(&title, x.clone(), y.clone());
            p.note(
                "fitted line: round trip = overhead + size / bandwidth (bandwidth = 1/slope, \
                 message bytes per second of round trip; both directions move 2× that)",
            );
            let series = series_by(rs, "size");
            let fixed: Vec<&BTreeMap<String, String>> = series.iter().map(|s| &s.0).collect();
            let keys = distinguishing(&fixed);
            for (i, (f, rs)) in series.iter().enumerate() {
                let c = color(i);
                let mut pts: Vec<Point> = rs
                    .iter()
                    .filter_map(|r| {
                        let m = r.measured.as_ref()?;
                        Some((param_f64(r, "size")?, m.median_ns, m.ci_low_ns, m.ci_high_ns))
                    })
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                let (sx, sy): (Vec<f64>, Vec<f64>) = pts.iter().map(|p| (p.0, p.1)).unzip();
                let others: Vec<String> = keys.iter().filter(|k| *k != "transport").cloned().collect();
                let transport = f.get("transport").cloned().unwrap_or_default();
                let label = if others.is_empty() {
                    transport
                } else {
                    format!("{transport} {}", label_of(None, f, &others))
                };
                let med: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
                let bars: Vec<(f64, f64, f64)> = pts.iter().map(|p| (p.0, p.2, p.3)).collect();
                p.error_bars_y(&bars, Style::solid(c).width(1.0));
                p.marks(&med, Style::solid(c), Mark::Circle, 6.0);
                let text = match linear_fit(&sx, &sy) {
                    Some(fit) => {
                        p.line(&fit_curve(&x, fit.intercept, fit.slope), Style::dashed(c));
                        let bw = if fit.slope > 0.0 {
                            rate(1.0 / fit.slope)
                        } else {
                            "not measurable (slope ≤ 0)".into()
                        };
                        format!(
                            "{label}: overhead {}, bandwidth {bw}, r² {:.2}",
                            fmt_ns(fit.intercept),
                            fit.r2
                        )
                    }
                    None => format!("{label}: one size, no line"),
                };
                p.legend(Style::dashed(c), Some(Mark::Circle), &text);
            }
            p.render()
        })
        .collect();
    Ok(one_or_stack(
        "ipc.rtt round trip against message size",
        panels,
    ))
}

/// The forest plot of a comparison: each benchmark's ratio (other / base) with its 95%
/// interval on a log axis, a line at 1 and the ±threshold band; colour by verdict.
pub fn forest(c: &Comparison) -> Result<Svg, UsageError> {
    if c.rows.is_empty() {
        return Err(UsageError::new(format!(
            "the forest plot needs benchmarks measured in both runs; {} and {} have none in common",
            run_name(&c.base),
            run_name(&c.other)
        )));
    }
    let labels: Vec<String> = c
        .rows
        .iter()
        .map(|r| {
            let mut s = r.name.clone();
            for (k, v) in &r.params {
                s += &format!(" {k}={v}");
            }
            if s.chars().count() > 60 {
                s = s.chars().take(59).collect::<String>() + "…";
            }
            s
        })
        .collect();
    let t = c.threshold;
    let xs = c
        .rows
        .iter()
        // An interval wider than 2× either way runs off the edge (no cap at that end).
        .flat_map(|r| {
            [
                r.ratio,
                r.ci_low.max(r.ratio / 2.0),
                r.ci_high.min(r.ratio * 2.0),
            ]
        })
        .chain([1.0 / (1.0 + t), 1.0 + t]);
    let x = Axis::fit(
        &format!(
            "{} / {} (log scale; right of 1 is slower)",
            run_name(&c.other),
            run_name(&c.base)
        ),
        Scale::Log,
        Units::Ratio,
        xs,
    );
    let y = Axis::categories("", &labels);
    let height = (18.0 * c.rows.len() as f64).max(90.0);
    let mut p = Plot::new(
        &format!("{} against {}", run_name(&c.other), run_name(&c.base)),
        x,
        y,
    )
    .size(900.0, height);
    let (f, s, n) = c.tally();
    p.note(&format!(
        "ratio of medians with its 95% CI; {f} faster, {s} slower, {n} no change (noise threshold ±{:.0}%)",
        t * 100.0
    ));
    p.band_x(1.0 / (1.0 + t), 1.0 + t, "#bbbbbb", 0.35);
    p.vrule(1.0, Style::solid(INK).width(1.0));
    for (v, col, mark) in [
        (Verdict::Faster, "#009e73", Mark::Circle),
        (Verdict::Slower, OUTLIER, Mark::Square),
        (Verdict::NoChange, GREY, Mark::Diamond),
    ] {
        let rows: Vec<(usize, &crate::compare::Row)> = c
            .rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.verdict == v)
            .collect();
        let bars: Vec<(f64, f64, f64)> = rows
            .iter()
            .map(|(i, r)| (*i as f64, r.ci_low.max(1e-300), r.ci_high))
            .collect();
        let pts: Vec<(f64, f64)> =
            rows.iter().map(|(i, r)| (r.ratio, *i as f64)).collect();
        p.error_bars_x(&bars, Style::solid(col).width(1.5));
        p.marks(&pts, Style::solid(col), mark, 7.0);
        p.legend_mark(Style::solid(col), mark, v.word());
    }
    p.legend(
        Style::solid("#bbbbbb").width(8.0).opacity(0.6),
        None,
        &format!("within ±{:.0}% (noise threshold)", t * 100.0),
    );
    Ok(p.render())
}

/// Finds the one benchmark instance `filter` names (its key, or a name or glob that
/// matches one instance), in every run that measured it.
fn pick<'a>(
    runs: &'a [(RunLabel, Run)],
    filter: Option<&str>,
    graph: &str,
) -> Result<Vec<(String, &'a BenchResult)>, UsageError> {
    let all: Vec<(String, &BenchResult)> = runs
        .iter()
        .flat_map(|(l, r)| r.results.iter().map(move |x| (run_name(l), x)))
        .filter(|(_, r)| r.measured.is_some())
        .collect();
    let exact: Vec<_> = all
        .iter()
        .filter(|(_, r)| filter.is_some_and(|f| key(r) == f))
        .cloned()
        .collect();
    let chosen = if exact.is_empty() {
        all.iter()
            .filter(|(_, r)| filter.is_none_or(|f| crate::bench::matches(f, &r.name)))
            .cloned()
            .collect()
    } else {
        exact
    };
    let mut keys: Vec<String> = chosen.iter().map(|(_, r)| key(r)).collect();
    keys.dedup();
    keys.sort();
    keys.dedup();
    let list = |ks: &[String]| {
        let mut s = ks
            .iter()
            .take(8)
            .map(|k| format!("'{k}'"))
            .collect::<Vec<_>>()
            .join(", ");
        if ks.len() > 8 {
            s += &format!(", … ({} in all)", ks.len());
        }
        s
    };
    match keys.len() {
        0 => Err(UsageError::new(match filter {
            Some(f) => {
                format!("no measured benchmark matches --bench {f:?} in these runs")
            }
            None => "these runs hold no measured benchmark".into(),
        })),
        1 => Ok(chosen),
        _ => Err(UsageError::new(format!(
            "the {graph} graph draws one benchmark: name it with --bench, one of {}",
            list(&keys)
        ))),
    }
}

/// One graph as a standalone SVG document, for `syscost plot`: the sample and
/// distribution graphs need one benchmark (`bench_filter`), the forest plot a
/// comparison; the sweep graph draws every sweep matching `bench_filter`, stacked.
pub fn plot(
    graph: Graph,
    runs: &[(RunLabel, Run)],
    comparison: Option<&Comparison>,
    bench_filter: Option<&str>,
) -> Result<String, UsageError> {
    let svg = match graph {
        Graph::Samples | Graph::Distribution => {
            let name = if graph == Graph::Samples {
                "samples"
            } else {
                "distribution"
            };
            let picked = pick(runs, bench_filter, name)?;
            let panels = picked
                .iter()
                .map(|(run, r)| match graph {
                    Graph::Samples => samples(r, run, MAX_POINTS),
                    _ => distribution(r, run),
                })
                .collect::<Result<Vec<_>, _>>()?;
            one_or_stack(name, panels)
        }
        Graph::Sweep => one_or_stack("sweeps", sweeps(runs, bench_filter)?),
        Graph::Ring => ring(runs)?,
        Graph::FileRead => file_read(runs)?,
        Graph::Mailbox => mailbox(runs)?,
        Graph::Forest => forest(comparison.ok_or_else(|| {
            UsageError::new(
                "the forest plot needs a comparison: give two runs to compare",
            )
        })?)?,
    };
    Ok(svg.to_string())
}

#[cfg(test)]
#[path = "graphs_tests.rs"]
pub(crate) mod tests;
