//! The scaling graph: for each benchmark run as copies, the throughput of all copies
//! against N with the linear ideal (N × one copy) and the fitted Universal Scalability
//! Law, and beneath it the efficiency against N with the 100% line.

use super::seeds::one_or_stack;
use super::sweeps::{distinguishing, label_of};
use super::{run_name, GREY};
use crate::compare::RunLabel;
use crate::draw::svg::{color, Axis, Mark, Plot, Scale, Side, Style, Svg, Units};
use crate::error::UsageError;
use crate::results::{Run, ScalingTable};
use std::collections::BTreeMap;

/// The tables of `runs` that `filter` (a benchmark name or glob) selects.
fn tables<'a>(
    runs: &'a [(RunLabel, Run)],
    filter: Option<&str>,
) -> Vec<(String, &'a ScalingTable)> {
    runs.iter()
        .flat_map(|(l, r)| r.scaling.iter().map(move |t| (run_name(l), t)))
        .filter(|(_, t)| filter.is_none_or(|f| crate::bench::matches(f, &t.name)))
        .filter(|(_, t)| !t.points.is_empty())
        .collect()
}

/// The scaling graph of `runs` (the tables `filter` selects): throughput against N
/// above efficiency against N.
pub fn scaling(
    runs: &[(RunLabel, Run)],
    filter: Option<&str>,
) -> Result<Svg, UsageError> {
    let tables = tables(runs, filter);
    if tables.is_empty() {
        return Err(UsageError::new(
            "the scaling graph needs a benchmark run as copies: run `syscost run \
             syscall.getppid copies=1,2,4` (and name it with --bench if there are several)",
        ));
    }
    let fixed: Vec<BTreeMap<String, String>> = tables
        .iter()
        .map(|(_, t)| {
            let mut f = t.fixed.clone();
            f.insert("benchmark".into(), t.name.clone());
            f
        })
        .collect();
    let refs: Vec<&BTreeMap<String, String>> = fixed.iter().collect();
    let keys = distinguishing(&refs);
    let many_runs = runs.iter().filter(|(_, r)| !r.scaling.is_empty()).count() > 1;
    let labels: Vec<String> = tables
        .iter()
        .zip(&fixed)
        .map(|((run, _), f)| label_of(many_runs.then_some(run.as_str()), f, &keys))
        .collect();
    let n_max = tables
        .iter()
        .flat_map(|(_, t)| t.points.iter().map(|p| p.n as f64))
        .fold(1.0, f64::max);
    let n_axis = || {
        Axis::fit(
            "N (copies at once)",
            Scale::Linear,
            Units::Number,
            [0.0, n_max],
        )
    };
    Ok(one_or_stack(
        "scaling",
        vec![
            throughput(&tables, &labels, n_axis(), n_max),
            efficiency(&tables, &labels, n_axis()),
        ],
    ))
}

/// One copy's throughput of a table: its N = 1 point.
fn one(t: &ScalingTable) -> Option<f64> {
    t.points
        .iter()
        .find(|p| p.n == 1)
        .map(|p| p.throughput_ops_s)
}

fn throughput(
    tables: &[(String, &ScalingTable)],
    labels: &[String],
    x: Axis,
    n_max: f64,
) -> Svg {
    let ys = tables.iter().flat_map(|(_, t)| {
        let ideal = one(t).map(|x1| x1 * n_max);
        t.points
            .iter()
            .map(|p| p.throughput_ops_s / 1e6)
            .chain(ideal.map(|v| v / 1e6))
    });
    let y = Axis::fit(
        "throughput (million operations per second)",
        Scale::Linear,
        Units::Number,
        ys.chain([0.0]),
    );
    let mut p = Plot::new("Throughput of N copies", x, y);
    p.note(
        "solid: measured (hollow: oversubscribed, more copies than CPUs); dashed: linear, \
         N × one copy; dotted: the Universal Scalability Law fitted",
    );
    for (i, ((_, t), label)) in tables.iter().zip(labels).enumerate() {
        let c = color(i);
        let pts: Vec<(f64, f64)> = t
            .points
            .iter()
            .map(|p| (p.n as f64, p.throughput_ops_s / 1e6))
            .collect();
        let over: Vec<(f64, f64)> = t
            .points
            .iter()
            .filter(|p| p.oversubscribed)
            .map(|p| (p.n as f64, p.throughput_ops_s / 1e6))
            .collect();
        p.line(&pts, Style::solid(c).width(2.0));
        p.marks(&pts, Style::solid(c), Mark::Circle, 6.0);
        p.marks(&over, Style::solid(c), Mark::Ring, 12.0);
        if let Some(x1) = one(t) {
            p.line(
                &[(1.0, x1 / 1e6), (n_max, n_max * x1 / 1e6)],
                Style::dashed(c),
            );
        }
        let mut text = label.clone();
        if let Some(f) = &t.fit {
            let curve: Vec<(f64, f64)> = (0..=64)
                .map(|k| {
                    let n = 1.0 + (n_max - 1.0) * k as f64 / 64.0;
                    (n, f.throughput(n) / 1e6)
                })
                .collect();
            p.line(&curve, Style::dotted(c).opacity(0.8));
            text += &format!(": σ {:.3}, κ {:.1e}", f.sigma, f.kappa);
        }
        p.legend(Style::solid(c).width(2.0), Some(Mark::Circle), &text);
    }
    p.render()
}

fn efficiency(tables: &[(String, &ScalingTable)], labels: &[String], x: Axis) -> Svg {
    let ys = tables
        .iter()
        .flat_map(|(_, t)| t.points.iter().filter_map(|p| p.efficiency))
        .map(|e| e * 100.0);
    let y = Axis::fit(
        "efficiency (%)",
        Scale::Linear,
        Units::Number,
        ys.chain([0.0, 100.0]),
    );
    let mut p = Plot::new("Efficiency: throughput / (N × one copy)", x, y);
    let why: Vec<&str> = tables
        .iter()
        .filter_map(|(_, t)| t.no_fit.as_deref())
        .collect();
    match why.first() {
        Some(w) => p.note(w),
        None => p.note("100% is linear scaling"),
    }
    p.hrule(100.0, Style::dashed(GREY), Side::Left);
    for (i, ((_, t), label)) in tables.iter().zip(labels).enumerate() {
        let c = color(i);
        let pts: Vec<(f64, f64)> = t
            .points
            .iter()
            .filter_map(|p| p.efficiency.map(|e| (p.n as f64, e * 100.0)))
            .collect();
        p.line(&pts, Style::solid(c).width(2.0));
        p.marks(&pts, Style::solid(c), Mark::Circle, 6.0);
        p.legend(Style::solid(c).width(2.0), Some(Mark::Circle), label);
    }
    p.render()
}
