//! The getpid canary: read between rounds where the workers measure, it tells a slow
//! episode of the machine (a round read in one is measured again) and, over the run,
//! the machine's states.

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
/// above the median of the run's last [`REDO_WINDOW`] readings (0, no limit, before
/// there are five).
pub(super) fn redo_limit(readings: &[f64]) -> f64 {
    let recent = &readings[readings.len().saturating_sub(REDO_WINDOW)..];
    if recent.len() < 5 {
        return 0.0;
    }
    let mut v = recent.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2] * (1.0 + slot::REDO_ABOVE)
}

/// How many of the run's latest canary readings its slow-episode limit looks at.
pub(super) const REDO_WINDOW: usize = 101;

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
    fn the_slow_episode_limit_is_above_the_median_of_the_latest_readings() {
        assert_eq!(redo_limit(&[70.0; 4]), 0.0, "no limit before five readings");
        let limit = redo_limit(&[70.0, 71.0, 200.0, 69.0, 72.0]);
        assert!((limit - 71.0 * (1.0 + REDO_ABOVE)).abs() < 1e-9, "{limit}");
        // Only the latest readings count: the machine's speed may have moved.
        let mut readings = vec![140.0; 500];
        readings.extend([70.0; REDO_WINDOW]);
        let limit = redo_limit(&readings);
        assert!((limit - 70.0 * (1.0 + REDO_ABOVE)).abs() < 1e-9, "{limit}");
    }
}
