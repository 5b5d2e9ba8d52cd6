//! The interval from the spread between a row's runs: set once, when a run with two
//! earlier ones under the same conditions is decided, and what the history knows now
//! of a saved run's rows, shown beside them.

use super::{conditions, History, Run};
use crate::method;

impl History {
    /// Sets each measured result's interval from the history, when the run is decided
    /// (the other runs of the same benchmark under the same conditions, newest first,
    /// at most [`method::PAST_RUNS`]), recording the rounds' own interval in `between_runs`.
    /// With K runs, this one included, each side becomes `q(K)·s`, where `s` is the
    /// standard deviation of their figures ([`crate::stats::rounds::between_runs`])
    /// and `q(K)` the multiple that holds where the runs centre 95% of the time
    /// ([`crate::stats::rounds::centre_quantile`]); never narrower than
    /// [`crate::stats::rounds::Z975`] times the standard error that side of the
    /// rounds' interval stands for, so figures that happen to tie do not give a point.
    /// The verdict is decided again with that interval ([`crate::harness::verdict::decide`]), so a
    /// converged row's printed interval is within its target. Needs two other runs; a
    /// result without them, or whose rounds met a slow state, keeps its rounds'
    /// interval. A saved run is never set again: it reads back as it was printed.
    /// Returns how many results were set.
    pub fn set_from_past_runs(&self, run: &mut Run) -> anyhow::Result<usize> {
        let cond = conditions(run);
        let mut found: Vec<(usize, usize, f64)> = Vec::new(); // (result, runs, s)
        for (i, r) in run.results.iter().enumerate() {
            let Some(m) = r
                .measured
                .as_ref()
                .filter(|m| m.between_runs.is_none() && m.slow_state_pct.is_none())
            else {
                continue;
            };
            if let Some((k, s)) = self.spread(r, m.median_ns, &cond, None)? {
                found.push((i, k, s));
            }
        }
        for &(i, k, s) in &found {
            if let Some(m) = run.results[i].measured.as_mut() {
                from_runs(m, s, k);
            }
        }
        Ok(found.len())
    }

    /// What the history knows now of `run`'s rows from the other runs under the same
    /// conditions (saved before or after it; `id` is its own, left out): per result,
    /// `(runs, sd_ns)` where at least two others exist. Shown beside a saved row,
    /// labelled, never in place of its interval.
    pub fn spread_now(
        &self,
        run: &Run,
        id: Option<i64>,
    ) -> anyhow::Result<Vec<Option<(usize, f64)>>> {
        let cond = conditions(run);
        run.results
            .iter()
            .map(|r| match r.measured.as_ref() {
                Some(m) => self.spread(r, m.median_ns, &cond, id),
                None => Ok(None),
            })
            .collect()
    }

    /// The spread between `r`'s figure (`figure`) and those of at most [`method::PAST_RUNS`]
    /// other runs under `cond` (`except` left out): `(K, s)`, the runs counted with
    /// this one and the standard deviation of their figures; None with fewer than two
    /// others.
    fn spread(
        &self,
        r: &crate::results::BenchResult,
        figure: f64,
        cond: &str,
        except: Option<i64>,
    ) -> anyhow::Result<Option<(usize, f64)>> {
        let mut past =
            self.past_figures(&crate::compare::key(r), cond, method::PAST_RUNS + 1)?;
        past.retain(|p| Some(p.run_id) != except);
        past.truncate(method::PAST_RUNS);
        if past.len() < 2 {
            return Ok(None);
        }
        let figures: Vec<f64> = past
            .iter()
            .map(|p| p.median_ns)
            .chain([figure])
            .filter(|f| f.is_finite())
            .collect();
        Ok(crate::stats::rounds::between_runs(&figures).map(|s| (figures.len(), s)))
    }
}

/// Sets `m`'s interval and verdict from K runs whose figures' sd is `s`, as
/// [`History::set_from_past_runs`] describes.
fn from_runs(m: &mut crate::results::Measured, s: f64, k: usize) {
    use crate::harness::verdict::{self, Facts};
    use crate::stats::rounds::{
        centre_quantile, degrees_of_freedom, not_negative, standard_error, Z975,
    };
    let now_rounds = m.rounds.iter().filter(|x| x.median_ns.is_some()).count();
    let df = degrees_of_freedom(now_rounds.max(2)).max(1);
    let least = |side: f64| Z975 * standard_error(side.max(0.0), df);
    let spread = centre_quantile(k) * s;
    let (own_low, own_high) = m.own_interval();
    m.between_runs = Some(crate::results::BetweenRuns {
        runs: k - 1,
        sd_ns: s,
        run_ci_low_ns: m.ci_low_ns,
        run_ci_high_ns: m.ci_high_ns,
    });
    let low = m.median_ns - spread.max(least(m.median_ns - own_low));
    m.ci_low_ns = not_negative(m.median_ns, low);
    m.ci_high_ns = m.median_ns + spread.max(least(own_high - m.median_ns));
    m.interval_source = Some(crate::harness::Source::Runs);
    if let Some(target) = m.target_pct {
        let facts = Facts {
            runs: Some(k),
            ..Facts::recorded(&m.why)
        };
        m.why = verdict::decide(m.relative_ci(), target / 100.0, &facts);
        m.converged = m.why.is_empty();
        m.stop_reason = m.verdict_text();
    }
}

/// Rows a run needs with two earlier runs or more before it can be said to have
/// shifted: fewer are no "many". This and the three below decide a warning only, never
/// a figure, an interval or a verdict, so they are not the method's.
const SHIFT_MIN_ROWS: usize = 3;
/// How many of its spread between runs a row must lie from its earlier runs to count
/// as moved: four, as two or three earlier runs know their spread only roughly.
const SHIFT_Z: f64 = 4.0;
/// The share of those rows that must move the same way.
const SHIFT_SHARE: f64 = 2.0 / 3.0;
/// The median change they must show: below it, the default threshold's "no change".
const SHIFT_MIN_CHANGE: f64 = 0.05;

impl History {
    /// Whether `run` lies far from its earlier runs under the same conditions, many of
    /// its rows moving together beyond their spread ([`crate::results::Shift`]): at
    /// least three rows with two earlier runs or more, of which two thirds lie beyond
    /// four times their spread the same way, with a median change past 5%
    /// (`SHIFT_*` in this module). Sets `run.shift` and returns it: a
    /// report, so that the user labels such runs (a change the host facts cannot see:
    /// a tracer, a policy, a sysctl); it changes no interval, now or later.
    pub fn shift(&self, run: &mut Run) -> anyhow::Result<Option<crate::results::Shift>> {
        let cond = conditions(run);
        let mut zs: Vec<(f64, f64)> = Vec::new(); // (z, log change)
        let mut past_runs = 0;
        for r in &run.results {
            let Some(m) = r
                .measured
                .as_ref()
                .filter(|m| r.status == crate::results::Status::Ok && m.median_ns > 0.0)
            else {
                continue;
            };
            let past =
                self.past_figures(&crate::compare::key(r), &cond, method::PAST_RUNS)?;
            let logs: Vec<f64> = past
                .iter()
                .map(|p| p.median_ns)
                .filter(|x| x.is_finite() && *x > 0.0)
                .map(f64::ln)
                .collect();
            if logs.len() < 2 {
                continue;
            }
            past_runs = past_runs.max(logs.len());
            zs.push(moved_by(m, &logs));
        }
        run.shift = judge_shift(&zs, past_runs);
        Ok(run.shift.clone())
    }
}

/// How far a row's figure lies from the mean of its earlier runs' log figures `logs`:
/// `(z, log change)`, z in units of their spread with this run's own error.
fn moved_by(m: &crate::results::Measured, logs: &[f64]) -> (f64, f64) {
    let n = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / n;
    let between = crate::stats::sample_sd(logs);
    let own = m.own_relative_se();
    let sd = (between * between + own * own)
        .sqrt()
        .max(method::MAD_FLOOR);
    let change = m.median_ns.ln() - mean;
    (change / (sd * (1.0 + 1.0 / n).sqrt()), change)
}

/// The verdict of [`History::shift`] over rows' `(z, log change)`.
fn judge_shift(zs: &[(f64, f64)], past_runs: usize) -> Option<crate::results::Shift> {
    if zs.len() < SHIFT_MIN_ROWS {
        return None;
    }
    let changes: Vec<f64> = zs.iter().map(|z| z.1).collect();
    let median = crate::stats::median(&changes)?;
    let sign = median.signum();
    let moved = zs.iter().filter(|z| z.0 * sign > SHIFT_Z).count();
    let far = (median.exp() - 1.0).abs() > SHIFT_MIN_CHANGE;
    (far && moved as f64 >= SHIFT_SHARE * zs.len() as f64).then(|| {
        crate::results::Shift {
            rows: zs.len(),
            moved,
            median_change: median.exp() - 1.0,
            past_runs,
        }
    })
}
