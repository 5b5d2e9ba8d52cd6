//! The getpid canary: read between rounds where the workers measure, it tells the
//! machine's base state from its slow ones (a round read outside the base state is
//! measured again) and, over the run, the machine's states.

use super::{check_interrupt, Workers};
use crate::bench::body;
use crate::error::BenchError;
use crate::harness::Harness;
use crate::method;
use crate::os::sys;
use crate::results::MachineStates;
use crate::stats::{self, rounds};

/// The getpid canary read with `h` where the calling thread runs, ns per call: the
/// median of 5 batches of 500.
pub(crate) fn getpid_canary(h: &Harness<'_>) -> Result<f64, BenchError> {
    let mut b = body(|| {
        std::hint::black_box(sys::getpid());
        Ok(())
    });
    h.canary(b.as_mut(), method::CANARY_BATCH, method::CANARY_BATCHES)
}

/// The canary's readings of the last [`method::BASE_WINDOW_NS`], thinned to one per
/// [`method::BASE_THIN_NS`] so that they weigh the machine's states by the time it spends in
/// them (a run reads the canary back to back while it paces its rounds, and once a
/// visit otherwise): where the run reads the machine's base state ([`Window::base`]).
#[derive(Debug, Default)]
pub(super) struct Window {
    /// (when, ns per getpid), oldest first.
    readings: std::collections::VecDeque<(std::time::Instant, f64)>,
}

impl Window {
    /// Forgets the readings older than [`method::BASE_WINDOW_NS`] before `now`.
    pub(super) fn forget_before(&mut self, now: std::time::Instant) {
        while let Some(&(first, _)) = self.readings.front() {
            if now.saturating_duration_since(first).as_nanos()
                <= u128::from(method::BASE_WINDOW_NS)
            {
                break;
            }
            self.readings.pop_front();
        }
    }

    /// How many readings it holds.
    pub(super) fn len(&self) -> usize {
        self.readings.len()
    }

    /// Takes a reading made at `at` (a non-finite one, or one within [`method::BASE_THIN_NS`]
    /// of the last taken, is left out) and forgets those older than
    /// [`method::BASE_WINDOW_NS`].
    pub(super) fn push(&mut self, at: std::time::Instant, ns: f64) {
        if !ns.is_finite() {
            return;
        }
        if let Some(&(last, _)) = self.readings.back() {
            if at.saturating_duration_since(last).as_nanos()
                < u128::from(method::BASE_THIN_NS)
            {
                return;
            }
        }
        self.readings.push_back((at, ns));
        self.forget_before(at);
    }

    /// The machine's base state: the level the getpid canary reads at when nothing
    /// slows the machine, taken as the [`method::BASE_QUANTILE`] of the window's readings
    /// (None before there are five). A low quantile rather than the lowest reading,
    /// which one lucky reading would set; rather than the median, which a machine
    /// slow for most of a run would raise to its slow state; over a window in time
    /// rather than the latest readings, which a slow spell read visit after visit
    /// would fill within seconds. On the 2-vCPU VM this project is developed on, the
    /// canary read 137–139 ns at its base in every run of an hour and 180–207 ns in
    /// slow spells that took 10–65% of a run's rounds and moved every kind of
    /// benchmark with it (a zero-fill fault, a getpid, an eventfd, a `gmtime`), while
    /// runs that met the machine slow for longer read 30% apart.
    pub(super) fn base(&self) -> Option<f64> {
        if self.readings.len() < method::BASE_MIN_READINGS {
            return None;
        }
        let mut v: Vec<f64> = self.readings.iter().map(|r| r.1).collect();
        Some(base_of(&mut v))
    }

    /// The canary reading above which a round is measured again: [`method::REDO_ABOVE`]
    /// above the base state (0, no limit, before there is one).
    pub(super) fn limit(&self) -> f64 {
        self.base().map_or(0.0, |b| b * (1.0 + method::REDO_ABOVE))
    }
}

/// The [`method::BASE_QUANTILE`] of `xs` (reordered; not empty): where a set of readings
/// puts the machine's base state.
pub(super) fn base_of(xs: &mut [f64]) -> f64 {
    let k = ((xs.len() - 1) as f64 * method::BASE_QUANTILE).round() as usize;
    *xs.select_nth_unstable_by(k, f64::total_cmp).1
}

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
    let states = if sorted.len() >= method::STATES_MIN_READINGS {
        stats::modes(&sorted, method::STATE_SHARE, method::STATE_GAP)
            .into_iter()
            .map(|m| rounds::State {
                median_ns: m.center,
                share: m.fraction,
                count: (m.fraction * sorted.len() as f64).round() as usize,
            })
            .collect()
    } else {
        rounds::states(&sorted, method::STATE_GAP)
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

impl super::Session {
    /// The getpid canary, ns per call. With workers, read where they measure: on each
    /// of the first [`method::HOMES`] CPUs the run may use, and the next worker measures on the
    /// one that read fastest (`--cpu` keeps that CPU). A VM's vCPUs run at different
    /// speeds at any moment and trade them every few seconds (on the 2-vCPU VM this
    /// project is developed on, getpid read 139 ns on one and about 195 ns on the other,
    /// and the two swapped within a minute), so a run bound to one of them would wait
    /// out, or measure, every spell its host gives that one.
    pub fn canary(&self) -> Result<f64, BenchError> {
        let h = self.harness();
        let cpus = match self.opts.workers {
            Workers::Exec { .. } if self.opts.cpu.is_none() => {
                let mut all = crate::os::affinity::process_cpus();
                all.truncate(method::HOMES);
                all
            }
            Workers::Exec { .. } => crate::bench::ctx::home_cpu().into_iter().collect(),
            Workers::Inline => Vec::new(),
        };
        let mut fastest: Option<(f64, usize)> = None;
        for cpu in cpus {
            let Ok(_pin) = crate::os::affinity::Pin::to(cpu) else {
                continue;
            };
            let v = getpid_canary(&h)?;
            if fastest.is_none_or(|(f, _)| v < f) {
                fastest = Some((v, cpu));
            }
        }
        match fastest {
            Some((v, cpu)) => {
                if self.opts.cpu.is_none() {
                    self.home.set(Some(cpu));
                }
                Ok(v)
            }
            None => getpid_canary(&h),
        }
    }

    /// Reads the canary for about `ns` and says how steady the machine is: the
    /// readings grouped, their spread, and whether that spread exceeds the profile's
    /// CI target (a figure this precise cannot be promised).
    pub fn steadiness(&self, ns: u64) -> Result<MachineStates, BenchError> {
        let start = std::time::Instant::now();
        let mut readings = Vec::new();
        while readings.len() < 5 || start.elapsed().as_nanos() < ns as u128 {
            readings.push(self.canary()?);
            check_interrupt()?;
        }
        Ok(machine_states(&readings, self.settings.profile.ci_target))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_redo_limit_is_above_the_machines_base_state() {
        use std::time::{Duration, Instant};
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut w = Window::default();
        for n in 0..4 {
            w.push(ms(20 * n), 70.0);
        }
        assert_eq!(w.limit(), 0.0, "no limit before five readings");
        assert_eq!(w.base(), None);
        // The base is a low quantile, not the median: a machine slow in most readings
        // still has its base state, and one lucky reading does not set it.
        let mut w = Window::default();
        let mut t = 0;
        let put = |w: &mut Window, t: &mut u64, v: f64, n: usize| {
            for _ in 0..n {
                w.push(ms(*t), v);
                *t += 20;
            }
        };
        put(&mut w, &mut t, 190.0, 60);
        put(&mut w, &mut t, 138.0, 29);
        put(&mut w, &mut t, 137.0, 10);
        put(&mut w, &mut t, 120.0, 1);
        assert_eq!(w.base(), Some(137.0));
        let limit = w.limit();
        assert!(
            (limit - 137.0 * (1.0 + method::REDO_ABOVE)).abs() < 1e-9,
            "{limit}"
        );
        // Readings closer together than the thinning count once: a slow spell read
        // back to back does not outweigh the time the machine spent at its base.
        let mut w = Window::default();
        put(&mut w, &mut t, 137.0, 10);
        let at = t;
        for n in 0..10_000 {
            w.push(ms(at) + Duration::from_micros(n), 190.0);
        }
        assert_eq!(w.readings.len(), 11);
        assert_eq!(w.base(), Some(137.0));
        // Only the readings of the last minute count: a machine that moved for good
        // is measured as it is now.
        let mut w = Window::default();
        put(&mut w, &mut t, 70.0, 500);
        let mut late = t + method::BASE_WINDOW_NS / 1_000_000;
        for _ in 0..100 {
            w.push(ms(late), 140.0);
            late += 20;
        }
        assert_eq!(w.base(), Some(140.0));
        // A session's next run, minutes later, forgets them all and reads anew.
        let len = w.len();
        w.forget_before(ms(late));
        assert_eq!(w.len(), len);
        w.forget_before(ms(late) + Duration::from_nanos(method::BASE_WINDOW_NS) * 2);
        assert_eq!((w.len(), w.base()), (0, None));
        // Non-finite readings are left out.
        let mut w = Window::default();
        w.push(ms(0), f64::NAN);
        assert!(w.readings.is_empty());
    }
}
