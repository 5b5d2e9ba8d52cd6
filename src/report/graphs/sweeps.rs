//! Sweeps: a benchmark's figure against one parameter, run by run, with the fitted
//! line and its equation.

use super::*;

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
pub(super) type Point = (f64, f64, f64, f64);

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
pub(super) const PAD: f64 = 0.04;

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
pub(super) fn fit_curve(x: &Axis, a: f64, b: f64) -> Vec<(f64, f64)> {
    (0..=64)
        .map(|i| {
            let v = x.value_at(i as f64 / 64.0);
            (v, a + b * v)
        })
        .collect()
}

/// Names the parameters whose values differ between the maps (empty when one map).
pub(super) fn distinguishing(maps: &[&BTreeMap<String, String>]) -> Vec<String> {
    let mut keys: Vec<String> = maps.iter().flat_map(|m| m.keys().cloned()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| maps.iter().any(|m| m.get(k) != maps[0].get(k)))
        .collect()
}

pub(super) fn label_of(
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
