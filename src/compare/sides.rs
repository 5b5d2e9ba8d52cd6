//! One side of a comparison as several runs, and the ratio of two sides with its
//! interval, verdict, smallest visible change and the runs a side that would see a
//! change half again the threshold.
//!
//! # Runs as the unit
//!
//! A side of K ≥ 2 runs is summarised by the mean of its runs' log figures; its
//! variance is `v/K`, where `v`, one run's variance, is the larger of the sample
//! variance of those logs (the spread between runs, measured on that side) and the
//! mean of the runs' own rounds' variances (so two runs that tie by chance do not make
//! a point), on K − 1 degrees of freedom. This is how the kernel's LKP robot and
//! mmtests treat repetitions: the spread between runs holds what changes from one run
//! to the next (the machine's state, the boot, the placement), which the rounds of a
//! single run cannot see. A side of one run falls back on that run's printed interval
//! (its rounds with what the machine allows their kind, or the history's spread of its
//! earlier runs under the same labels), as a single-run comparison always did.
//!
//! The two sides give `log(B/A)` with variance `v_A/K_A + v_B/K_B` and Welch's degrees
//! of freedom; the interval is `exp(log r ± t·se)`.

use super::Verdict;
use crate::method;
use crate::stats::rounds::t975;

/// One run's figure of a row, as a side is made of them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct RunFigure {
    /// The headline, ns.
    pub mean: f64,
    /// Its standard error as its printed interval gives it (ns), for a side of one run.
    pub se: f64,
    /// The degrees of freedom of that standard error.
    pub df: usize,
    /// The relative standard error of one run from its rounds alone (its own interval,
    /// before what the machine allows or the history widened it).
    pub own_rel: f64,
}

/// A side's estimate of a row: the mean of its runs' log figures and its variance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct SideEstimate {
    /// The side's figure: its one run's, or the geometric mean of its runs'.
    pub figure: f64,
    /// The mean log figure.
    pub log_mean: f64,
    /// The variance of `log_mean`.
    pub var: f64,
    /// Its degrees of freedom.
    pub df: f64,
    /// One run's variance on the log scale (what more runs divide).
    pub per_run_var: f64,
    /// The runs.
    pub k: usize,
}

/// The side's estimate from its runs' figures of a row (`None` without one).
pub(super) fn side(figures: &[RunFigure]) -> Option<SideEstimate> {
    let ok: Vec<&RunFigure> = figures
        .iter()
        .filter(|f| f.mean.is_finite() && f.mean > 0.0)
        .collect();
    match ok.len() {
        0 => None,
        1 => {
            let f = ok[0];
            let rel = f.se / f.mean;
            let var = if rel.is_finite() {
                rel * rel
            } else {
                f64::INFINITY
            };
            Some(SideEstimate {
                figure: f.mean,
                log_mean: f.mean.ln(),
                var,
                df: f.df.max(1) as f64,
                per_run_var: var,
                k: 1,
            })
        }
        k => {
            let logs: Vec<f64> = ok.iter().map(|f| f.mean.ln()).collect();
            let between = crate::stats::sample_sd(&logs).powi(2);
            let own = ok
                .iter()
                .map(|f| f.own_rel.powi(2))
                .filter(|v| v.is_finite())
                .sum::<f64>()
                / k as f64;
            let per_run_var = between.max(own);
            let log_mean = logs.iter().sum::<f64>() / k as f64;
            Some(SideEstimate {
                figure: log_mean.exp(),
                log_mean,
                var: per_run_var / k as f64,
                df: (k - 1) as f64,
                per_run_var,
                k,
            })
        }
    }
}

/// Two sides of a row judged against a threshold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Judged {
    /// B/A.
    pub ratio: f64,
    /// Its 95% interval.
    pub low: f64,
    /// Its high end.
    pub high: f64,
    /// The verdict.
    pub verdict: Verdict,
    /// The smallest slowdown these runs call slower four times in five, as a fraction.
    pub visible: Option<f64>,
    /// The runs a side that would see a change of [`method::ASK_FOR_CHANGE`] × the
    /// threshold (None: more than [`method::MAX_RUNS_ASKED`]).
    pub asked: Option<usize>,
}

/// `t(0.975)` at Welch's (fractional) degrees of freedom, floored as tables are read; a
/// whisker below a whole number is rounding (two equal variances give exactly twice
/// the df of one).
fn t_at(df: f64) -> f64 {
    t975(((df + 1e-9).floor() as usize).max(1))
}

/// The ratio B/A of two sides, its 95% interval and what the runs can see.
pub(super) fn judge(a: &SideEstimate, b: &SideEstimate, threshold: f64) -> Judged {
    let ratio = b.figure / a.figure;
    let v = a.var + b.var;
    let (low, high, t) = if !v.is_finite() {
        (0.0, f64::INFINITY, f64::INFINITY)
    } else if v == 0.0 {
        (ratio, ratio, 0.0)
    } else {
        let df = v * v / (a.var * a.var / a.df + b.var * b.var / b.df);
        let t = t_at(df);
        let w = t * v.sqrt();
        (ratio * (-w).exp(), ratio * w.exp(), t)
    };
    Judged {
        ratio,
        low,
        high,
        verdict: super::verdict(ratio, low, high, threshold),
        visible: visible(v.sqrt(), t, threshold),
        asked: asked(a.per_run_var + b.per_run_var, threshold),
    }
}

/// The smallest true slowdown called slower four times in five by a comparison whose
/// log ratio has standard error `se` and critical value `t`: the log ratio must pass
/// both `log(1 + threshold)` and `t·se`, and is that plus `z(0.8)·se` four times in
/// five.
fn visible(se: f64, t: f64, threshold: f64) -> Option<f64> {
    let need = (1.0 + threshold).ln().max(t * se) + method::VISIBLE_POWER_Z * se;
    need.is_finite().then(|| need.exp() - 1.0)
}

/// The runs a side (K each, the two sides' one-run variances summing to `per_run`)
/// whose comparison would see a slowdown of [`method::ASK_FOR_CHANGE`] × the threshold
/// four times in five; None past [`method::MAX_RUNS_ASKED`].
fn asked(per_run: f64, threshold: f64) -> Option<usize> {
    if !per_run.is_finite() {
        return None;
    }
    let goal = method::ASK_FOR_CHANGE * threshold;
    (2..=method::MAX_RUNS_ASKED).find(|&k| {
        let se = (per_run / k as f64).sqrt();
        let df = (2 * k - 2) as f64;
        visible(se, t_at(df), threshold).is_some_and(|x| x <= goal)
    })
}
