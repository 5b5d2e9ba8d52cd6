//! The report's graphs, each a pure function from result data to an [`Svg`]: a
//! benchmark's samples over time and its distribution, sweeps with their fitted lines,
//! Sloan's ring (NCAR) graph, the 1999 file-read figure, Nagy's mailbox echo, the
//! scaling of copies, and the forest plot of a comparison; and [`plot`], which picks one for `syscost plot`.
//!
//! Drawing belongs to [`crate::draw::svg`]; this module chooses what to draw and says, as a
//! [`UsageError`], what a graph needs when the runs do not hold it. It measures nothing.

mod samples;
mod scaling;
mod seeds;
mod sweeps;

use samples::min_max;
#[cfg(test)]
use samples::ordinal;
pub use samples::{distribution, samples, thin};
pub use scaling::scaling;
use seeds::one_or_stack;
pub use seeds::{file_read, mailbox, ring};
use sweeps::{distinguishing, fit_curve, label_of, Point, PAD};
pub use sweeps::{equation, sweeps};

use crate::compare::{key, key_of, Comparison, RunLabel, Verdict};
use crate::draw::svg::{color, Axis, Mark, Plot, Scale, Side, Style, Svg, Units};
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
    /// Where an explained benchmark's time goes (syscost explain): a flame graph,
    /// width = ns per operation.
    Flame,
    /// Throughput and efficiency against N copies, with the linear line and the
    /// fitted scalability law (copies=1,2,4).
    Scaling,
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

/// How a run is named in legends: its reference with its history id, once (the
/// reference may carry the id already: `#4`, `last (#4)`).
pub fn run_name(l: &RunLabel) -> String {
    match l.id {
        Some(id)
            if l.reference != id.to_string()
                && l.reference != format!("#{id}")
                && !l.reference.ends_with(&format!("(#{id})")) =>
        {
            format!("{} (#{id})", l.reference)
        }
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
        s += &format!("; states {}", crate::results::describe_states(&m.states));
    }
    s
}

/// The forest plot's width in px when no label is longer than 60 characters.
const FOREST_WIDTH: f64 = 900.0;

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
    // Each label whole, however long its parameters; the graph widens by what a label
    // takes past 60 characters, so the plot keeps its room beside them.
    let labels: Vec<String> = c.rows.iter().map(|r| key_of(&r.name, &r.params)).collect();
    let widest = labels
        .iter()
        .map(|l| crate::draw::svg::text_width(l))
        .fold(0.0, f64::max);
    let width =
        FOREST_WIDTH + (widest - crate::draw::svg::text_width(&"x".repeat(60))).max(0.0);
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
    .size(width, height);
    let n = c.tally();
    p.note(&format!(
        "ratio of medians with its 95% CI; {} faster, {} slower, {} no change, {} cannot tell (noise threshold ±{:.0}%)",
        n.faster,
        n.slower,
        n.same,
        n.unsure,
        t * 100.0
    ));
    p.band_x(1.0 / (1.0 + t), 1.0 + t, "#bbbbbb", 0.35);
    p.vrule(1.0, Style::solid(INK).width(1.0));
    for (v, col, mark) in [
        (Verdict::Faster, "#009e73", Mark::Circle),
        (Verdict::Slower, OUTLIER, Mark::Square),
        (Verdict::NoChange, GREY, Mark::Diamond),
        (Verdict::CannotTell, "#e69f00", Mark::Ring),
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

/// The flame graphs of the explained results `filter` names (every explained one when
/// it names none).
fn flames(
    runs: &[(RunLabel, Run)],
    filter: Option<&str>,
) -> Result<Vec<Svg>, UsageError> {
    let picked: Vec<Svg> = runs
        .iter()
        .flat_map(|(_, r)| r.results.iter())
        .filter(|r| filter.is_none_or(|f| key(r) == f || r.name == f))
        .filter_map(|r| Some(flame(r, r.explain.as_ref()?)))
        .collect();
    if picked.is_empty() {
        return Err(UsageError::new(
            "the flame graph needs an explained result: run syscost explain BENCH (or run \
             --explain) and plot that run",
        ));
    }
    Ok(picked)
}

/// One result's flame graph.
pub fn flame(r: &BenchResult, e: &crate::explain::Explanation) -> Svg {
    crate::explain::flame::svg(&r.label(), &r.op, e)
}

/// Finds the one benchmark instance `filter` names (its key, its name, or a name or
/// glob that matches one instance), in every run that measured it.
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
    // A benchmark's name alone (`syscall.getpid`, measured with its default `via`)
    // before the names it is a prefix of (`syscall.getpid.raw`).
    let named: Vec<_> = all
        .iter()
        .filter(|(_, r)| filter.is_some_and(|f| r.name == f))
        .cloned()
        .collect();
    let exact = if exact.is_empty() { named } else { exact };
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
            Some(f) => format!(
                "no measured benchmark matches --bench {f:?} in these runs{}",
                crate::error::did_you_mean(f, all.iter().map(|(_, r)| r.name.as_str()))
            ),
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
        Graph::Flame => one_or_stack("flame", flames(runs, bench_filter)?),
        Graph::Ring => ring(runs)?,
        Graph::FileRead => file_read(runs)?,
        Graph::Mailbox => mailbox(runs)?,
        Graph::Scaling => scaling(runs, bench_filter)?,
        Graph::Forest => forest(comparison.ok_or_else(|| {
            UsageError::new(
                "the forest plot needs a comparison: give two runs to compare",
            )
        })?)?,
    };
    Ok(svg.to_string())
}

#[cfg(test)]
pub(crate) mod tests;
