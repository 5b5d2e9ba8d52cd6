//! The getpid canary: read between rounds where the workers measure, it tells the
//! machine's base state from its slow ones (a round read outside the base state is
//! measured again) and, over the run, the machine's states.

use super::slot;
use crate::bench::body;
use crate::error::BenchError;
use crate::harness::Harness;
use crate::os::sys;
use crate::results::MachineStates;
use crate::stats::{self, rounds};

/// How big a change of the canary means the machine changed speed.
pub const CANARY_THRESHOLD: f64 = 0.03;
pub(super) const CANARY_BATCH: u64 = 500;
pub(super) const CANARY_BATCHES: usize = 5;

/// The getpid canary read with `h` where the calling thread runs, ns per call.
pub(crate) fn getpid_canary(h: &Harness<'_>) -> Result<f64, BenchError> {
    let mut b = body(|| {
        std::hint::black_box(sys::getpid());
        Ok(())
    });
    h.canary(b.as_mut(), CANARY_BATCH, CANARY_BATCHES)
}

/// The canary reading above which a round is measured again: [`slot::REDO_ABOVE`]
/// above the machine's base state ([`base`] of the run's last [`REDO_WINDOW`]
/// readings; 0, no limit, before there are five).
pub(super) fn redo_limit(readings: &[f64]) -> f64 {
    base(readings).map_or(0.0, |b| b * (1.0 + slot::REDO_ABOVE))
}

/// The machine's base state: the level the getpid canary reads at when nothing slows
/// the machine, taken as the [`BASE_QUANTILE`] of the run's last [`REDO_WINDOW`]
/// readings (None before there are five). A low quantile rather than the lowest
/// reading, which one lucky reading would set; rather than the median, which a machine
/// slow for most of a run would raise to its slow state. On the 2-vCPU VM this project
/// is developed on, the canary read 137–139 ns at its base in every run of an hour and
/// 180–207 ns in slow spells that took 10–65% of a run's rounds and moved every kind of
/// benchmark with it (a zero-fill fault, a getpid, an eventfd, a `gmtime`), while runs
/// that met the machine slow for longer read 30% apart.
pub(crate) fn base(readings: &[f64]) -> Option<f64> {
    let recent = &readings[readings.len().saturating_sub(REDO_WINDOW)..];
    let mut v: Vec<f64> = recent.iter().copied().filter(|x| x.is_finite()).collect();
    if v.len() < 5 {
        return None;
    }
    Some(base_of(&mut v))
}

/// The [`BASE_QUANTILE`] of `xs` (reordered; not empty): where a set of readings
/// puts the machine's base state.
pub(super) fn base_of(xs: &mut [f64]) -> f64 {
    let k = ((xs.len() - 1) as f64 * BASE_QUANTILE).round() as usize;
    *xs.select_nth_unstable_by(k, f64::total_cmp).1
}

/// Where in the canary's readings the machine's base state is read ([`base`]).
pub const BASE_QUANTILE: f64 = 0.1;

/// How many of the run's latest canary readings its base state is read from.
pub(super) const REDO_WINDOW: usize = 1000;

/// How many more canary readings a visit takes, at most, while they read above the
/// slow-episode limit, before it goes ahead (and its round is measured again). On the
/// 2-vCPU VM this project is developed on, a slow episode met by a spinning getpid
/// loop ended within 4 readings of 2,500 calls in 14 of 24 cases and within 16 in 21:
/// 16 readings take about 6 ms there, a quarter of a round's visit.
pub(super) const SLOW_WAIT_READINGS: usize = 16;

/// The canary readings as machine states.
pub(super) fn machine_states(readings: &[f64], target: f64) -> MachineStates {
    let mut sorted: Vec<f64> =
        readings.iter().copied().filter(|x| x.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    let spread = if sorted.len() >= 2 {
        let q = |p: f64| stats::percentile_sorted(&sorted, p);
        (q(90.0) - q(10.0)) / q(50.0)
    } else {
        0.0
    };
    // Many readings form a continuum in which every neighbour is close: their states
    // are the modes of the distribution (at least 5% of readings each), not gaps.
    let states = if sorted.len() >= 20 {
        stats::modes(&sorted, 0.05, CANARY_THRESHOLD)
            .into_iter()
            .map(|m| rounds::State {
                median_ns: m.center,
                share: m.fraction,
                count: (m.fraction * sorted.len() as f64).round() as usize,
            })
            .collect()
    } else {
        rounds::states(&sorted, CANARY_THRESHOLD)
    };
    MachineStates {
        readings: sorted.len(),
        spread,
        states,
        unsteady: spread > target,
        past: None,
        floors: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::REDO_ABOVE;

    #[test]
    fn the_redo_limit_is_above_the_machines_base_state() {
        assert_eq!(redo_limit(&[70.0; 4]), 0.0, "no limit before five readings");
        assert_eq!(base(&[70.0; 4]), None);
        // The base is a low quantile, not the median: a machine slow in most readings
        // still has its base state, and one lucky reading does not set it.
        let mut readings = vec![190.0; 60];
        readings.extend([138.0; 29]);
        readings.extend([137.0; 10]);
        readings.push(120.0);
        assert_eq!(base(&readings), Some(137.0));
        let limit = redo_limit(&readings);
        assert!((limit - 137.0 * (1.0 + REDO_ABOVE)).abs() < 1e-9, "{limit}");
        // Only the latest readings count: a machine that moved for good is measured
        // as it is now.
        let mut readings = vec![70.0; 500];
        readings.extend([140.0; REDO_WINDOW]);
        assert_eq!(base(&readings), Some(140.0));
        // Non-finite readings are left out.
        assert_eq!(base(&[f64::NAN, 1.0, 2.0, 3.0, 4.0, 5.0]), Some(1.0));
    }
}
