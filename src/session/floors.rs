//! The machine's floors over a run: every probe reading (see
//! [`crate::harness::probe`]) gathered by kind of work, and the floor each kind sets for
//! the results of that kind ([`crate::stats::rounds::floor`]).
//!
//! The readings come from where rounds are measured: each worker reads the probes
//! just before its round, and while a small selection waits between its rounds, probe
//! processes of their own read them on the home CPU. So the spread of a kind's readings
//! holds what the machine does between rounds and between processes over the run, as
//! the rounds of a benchmark of that kind see it.

use crate::harness::probe::{Probes, WorkKind};
use crate::harness::Held;
use crate::results::Floor;
use crate::stats::rounds;

/// The probe readings of a run so far.
#[derive(Debug, Default)]
pub(super) struct Floors {
    readings: Vec<Probes>,
    /// The rounds a floor is taken at (the profile's `max_rounds`).
    rounds: usize,
}

impl Floors {
    /// Floors taken at `rounds` rounds.
    pub(super) fn new(rounds: usize) -> Floors {
        Floors {
            readings: Vec::new(),
            rounds,
        }
    }

    /// Adds one reading of every probe.
    pub(super) fn push(&mut self, probes: Probes) {
        self.readings.push(probes);
    }

    /// How many readings there are.
    pub(super) fn len(&self) -> usize {
        self.readings.len()
    }

    fn of(&self, kind: WorkKind) -> Vec<f64> {
        self.readings.iter().map(|p| p[kind.index()]).collect()
    }

    /// What a result of `kind` is held to now: its kind's floor (0 while too few
    /// readings are in).
    pub(super) fn held(&self, kind: WorkKind) -> Held {
        let floor = rounds::floor(&self.of(kind), self.rounds).map_or(0.0, |(_, f)| f);
        Held {
            kind: Some(kind),
            floor,
        }
    }

    /// Every kind's floor, for the run's document (empty without enough readings).
    pub(super) fn summary(&self) -> Vec<Floor> {
        WorkKind::ALL
            .into_iter()
            .filter_map(|kind| {
                let xs = self.of(kind);
                let (sd, floor) = rounds::floor(&xs, self.rounds)?;
                let mut sorted: Vec<f64> =
                    xs.iter().copied().filter(|x| x.is_finite()).collect();
                sorted.sort_by(f64::total_cmp);
                Some(Floor {
                    kind,
                    probe: kind.probe().to_string(),
                    readings: sorted.len(),
                    median_ns: crate::stats::percentile_sorted(&sorted, 50.0),
                    sd_pct: sd * 100.0,
                    floor_pct: floor * 100.0,
                    rounds: self.rounds,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_the_floor_of_its_own_readings() {
        let mut f = Floors::new(8);
        assert_eq!(f.held(WorkKind::Syscall).floor, 0.0, "none before readings");
        assert!(f.summary().is_empty());
        for i in 0..20 {
            // The system call moves ±2%, user work not at all, memory ±10%.
            let s = if i % 2 == 0 { 98.0 } else { 102.0 };
            let m = if i % 2 == 0 { 900.0 } else { 1100.0 };
            f.push([s, 1.0, m]);
        }
        assert_eq!(f.len(), 20);
        let syscall = f.held(WorkKind::Syscall);
        let memory = f.held(WorkKind::Memory);
        assert_eq!(syscall.kind, Some(WorkKind::Syscall));
        assert!(syscall.floor > 0.01 && syscall.floor < 0.03, "{syscall:?}");
        assert!(
            (memory.floor / syscall.floor - 5.0).abs() < 1e-9,
            "{memory:?}"
        );
        assert_eq!(f.held(WorkKind::User).floor, 0.0);
        let s = f.summary();
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].kind, WorkKind::Syscall);
        assert_eq!(s[0].readings, 20);
        assert!((s[0].median_ns - 100.0).abs() < 1e-9);
        assert!((s[0].floor_pct - syscall.floor * 100.0).abs() < 1e-9);
    }
}
