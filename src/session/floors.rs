//! The machine's floors over a run: every probe reading (see
//! [`crate::harness::probe`]) gathered by kind of work, and the floor and the reach each
//! kind sets for the results of that kind ([`crate::stats::rounds::floor`]): the floor
//! from the readings in the machine's base state (described below; it bounds every
//! interval), the reach from every kept round's readings (with the floor, it sets the
//! target: the canaries around a round miss slow spells that begin and end between
//! them, and the probe read just before the samples sees them as the round does).
//!
//! The readings come from where rounds are measured: each worker reads the probes
//! just before its round's samples, warm as the round is (a round measured again
//! outside the machine's base state gives none, as it gives no figure), and only
//! readings in the base state count (see `Floors::in_base_state`). So the spread of a
//! kind's readings holds what the machine does between rounds and between processes
//! over the run in the state the figures are measured in, as the rounds of a
//! benchmark of that kind see it. Before the first round, a few probe
//! processes of their own, warmed as long as a round, give the run's header its first
//! floors. Processes started only to read the probes while a small selection waits
//! between its rounds were tried and left out: on the 2-vCPU VM this project is
//! developed on, 41–48% of their getpid readings were more than 5% slow against
//! 14–20% of the workers', so they described another machine than the rounds met.

use super::canary::base_of;
use super::slot::REDO_AFTER_ABOVE;
use crate::harness::probe::{Probes, WorkKind};
use crate::harness::Held;
use crate::results::Floor;
use crate::stats::rounds;

/// The probe readings of a run so far.
#[derive(Debug, Default)]
pub(super) struct Floors {
    /// Each reading with where it was read: the instance whose worker read it, or
    /// [`PROBE_PROCESS`].
    readings: Vec<(usize, Probes)>,
    /// The rounds a floor is taken at (the profile's `max_rounds`).
    rounds: usize,
    /// Results are held to the profile's target even below the floor.
    pub(super) strict: bool,
    /// Each kind's floor and reach and the readings they were taken from: taken again
    /// once a twentieth more (at least 4) are in, as each draws [`rounds::RESAMPLES`]
    /// sets.
    cache: std::cell::RefCell<[Option<(usize, f64, f64)>; WorkKind::ALL.len()]>,
}

impl Floors {
    /// Floors taken at `rounds` rounds.
    pub(super) fn new(rounds: usize) -> Floors {
        Floors {
            readings: Vec::new(),
            rounds,
            strict: false,
            cache: Default::default(),
        }
    }

    /// Adds one reading of every probe, read by the worker of instance `at` (or by a
    /// probe process: [`PROBE_PROCESS`]).
    pub(super) fn push(&mut self, at: usize, probes: Probes) {
        self.readings.push((at, probes));
    }

    /// How many readings there are.
    pub(super) fn len(&self) -> usize {
        self.readings.len()
    }

    /// The readings by where they were read (an instance's workers, or
    /// [`PROBE_PROCESS`]).
    fn by_place(&self) -> std::collections::BTreeMap<usize, Vec<Probes>> {
        let mut by_place: std::collections::BTreeMap<usize, Vec<Probes>> =
            Default::default();
        for (at, p) in &self.readings {
            by_place.entry(*at).or_default().push(*p);
        }
        by_place
    }

    /// The readings in the machine's base state for `kind`'s floor, by where they were
    /// read: at each place, those whose system call probe reads within
    /// [`REDO_AFTER_ABOVE`] of the place's base (its
    /// [`super::canary::BASE_QUANTILE`]), as a round is kept only when the worker's
    /// getpid canary after it reads so. The floors describe how the machine moves
    /// between rounds and processes within the state the figures are measured in; the
    /// slow states themselves are the canary's, said apart. Where fewer than a floor
    /// needs ([`rounds::MIN_FLOOR_READINGS`]) of `kind` are within it over every place
    /// (the probe processes before the first round, in a slow spell of fresh
    /// processes, hold most of a kind read beside few rows), each place gives the
    /// readings nearest its base, as many as a floor needs. Places with fewer than
    /// [`MIN_AT_PLACE`] readings are left out.
    fn in_base_state(&self, kind: WorkKind) -> Vec<Vec<Probes>> {
        let by_place = self.by_place();
        let sys = WorkKind::Syscall.index();
        let places: Vec<(Vec<Probes>, f64)> = by_place
            .into_values()
            .filter(|v| v.len() >= MIN_AT_PLACE)
            .map(|v| {
                let mut calls: Vec<f64> = v
                    .iter()
                    .map(|p| p[sys])
                    .filter(|x| x.is_finite() && *x > 0.0)
                    .collect();
                let limit = if calls.is_empty() {
                    f64::INFINITY
                } else {
                    base_of(&mut calls) * (1.0 + REDO_AFTER_ABOVE)
                };
                (v, limit)
            })
            .collect();
        // A reading without a system call figure is kept: nothing says it was read in
        // a slow state.
        let slow = |p: &Probes, limit: f64| p[sys].is_finite() && p[sys] > limit;
        let of_kind = |p: &Probes| p[kind.index()].is_finite();
        let kept: usize = places
            .iter()
            .map(|(v, limit)| v.iter().filter(|p| of_kind(p) && !slow(p, *limit)).count())
            .sum();
        if kept >= rounds::MIN_FLOOR_READINGS {
            return places
                .into_iter()
                .map(|(v, limit)| v.into_iter().filter(|p| !slow(p, limit)).collect())
                .collect();
        }
        places
            .into_iter()
            .map(|(mut v, limit)| {
                let fast = v.iter().filter(|p| !slow(p, limit)).count();
                v.sort_by(|a, b| {
                    let key = |p: &Probes| if p[sys].is_finite() { p[sys] } else { 0.0 };
                    key(a).total_cmp(&key(b))
                });
                v.truncate(rounds::MIN_FLOOR_READINGS.max(fast));
                v
            })
            .collect()
    }

    /// A kind's readings in the machine's base state, each relative to the median of
    /// those read where it was (the same instance's workers, or the probe processes):
    /// so the spread is the machine's between rounds, processes and moments, not the
    /// difference between one benchmark's process and another's (a probe read beside a
    /// ring of processes, or a file's pages, is not read beside a getpid loop).
    fn of(&self, kind: WorkKind) -> Vec<f64> {
        relative(self.in_base_state(kind), kind)
    }

    /// A kind's readings wherever the machine was, each relative to the median of
    /// those read where it was (as [`Floors::of`]): every kept round's, as the rounds'
    /// own figures are, for the reach. The probe processes before the first round are
    /// no round's: their readings count only until the rounds have given a floor's
    /// worth ([`rounds::MIN_FLOOR_READINGS`]) of the kind, so that the header has a
    /// reach, and a slow spell they met does not loosen a small selection's targets.
    fn of_kept(&self, kind: WorkKind) -> Vec<f64> {
        let mut by_place = self.by_place();
        let rounds = by_place
            .iter()
            .filter(|(at, _)| **at != PROBE_PROCESS)
            .map(|(_, v)| v.iter().filter(|p| p[kind.index()].is_finite()).count())
            .sum::<usize>();
        if rounds >= rounds::MIN_FLOOR_READINGS {
            by_place.remove(&PROBE_PROCESS);
        }
        relative(by_place.into_values().collect(), kind)
    }

    /// A kind's readings in the machine's base state as read, for their median.
    fn raw(&self, kind: WorkKind) -> Vec<f64> {
        let mut xs: Vec<f64> = self
            .in_base_state(kind)
            .iter()
            .flatten()
            .map(|p| p[kind.index()])
            .filter(|x| x.is_finite())
            .collect();
        xs.sort_by(f64::total_cmp);
        xs
    }

    /// What a result of `kind` is held to now: its kind's floor and reach (0 while too
    /// few readings are in).
    pub(super) fn held(&self, kind: WorkKind) -> Held {
        let n = self.readings.len();
        let cached = self.cache.borrow()[kind.index()];
        let (floor, reach) = match cached {
            Some((at, f, r)) if n < at + (at / 20).max(4) => (f, r),
            _ => {
                let take = |xs: Vec<f64>| {
                    rounds::floor(&xs, self.rounds).map_or(0.0, |(_, f)| f)
                };
                let (f, r) = (take(self.of(kind)), take(self.of_kept(kind)));
                self.cache.borrow_mut()[kind.index()] = Some((n, f, r));
                (f, r)
            }
        };
        Held {
            kind: Some(kind),
            floor,
            reach,
            strict: self.strict,
        }
    }

    /// Every kind's floor, for the run's document (empty without enough readings).
    pub(super) fn summary(&self) -> Vec<Floor> {
        WorkKind::ALL
            .into_iter()
            .filter_map(|kind| {
                let xs = self.of(kind);
                let (_, floor) = rounds::floor(&xs, self.rounds)?;
                let mut sorted = xs.clone();
                sorted.sort_by(f64::total_cmp);
                let q = |p: f64| crate::stats::percentile_sorted(&sorted, p);
                Some(Floor {
                    kind,
                    probe: kind.probe().to_string(),
                    readings: sorted.len(),
                    median_ns: crate::stats::percentile_sorted(&self.raw(kind), 50.0),
                    spread_pct: (q(90.0) - q(10.0)) / q(50.0) * 100.0,
                    floor_pct: floor * 100.0,
                    reach_pct: rounds::floor(&self.of_kept(kind), self.rounds)
                        .map_or(floor, |(_, r)| r)
                        * 100.0,
                    rounds: self.rounds,
                })
            })
            .collect()
    }
}

/// The readings of `kind` at each place (places with fewer than [`MIN_AT_PLACE`] left
/// out), each relative to the median of its place's.
fn relative(places: Vec<Vec<Probes>>, kind: WorkKind) -> Vec<f64> {
    let mut out = Vec::new();
    for place in places {
        let mut xs: Vec<f64> = place
            .iter()
            .map(|p| p[kind.index()])
            .filter(|x| x.is_finite() && *x > 0.0)
            .collect();
        if xs.len() < MIN_AT_PLACE {
            continue;
        }
        xs.sort_by(f64::total_cmp);
        let median = crate::stats::percentile_sorted(&xs, 50.0);
        out.extend(xs.iter().map(|x| x / median));
    }
    out
}

/// Where the readings of probe processes of their own are kept apart.
pub(super) const PROBE_PROCESS: usize = usize::MAX;

/// The fewest readings at one place (an instance's workers) that count toward a floor.
const MIN_AT_PLACE: usize = 3;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_the_floor_of_its_own_readings() {
        let mut f = Floors::new(8);
        assert_eq!(f.held(WorkKind::Syscall).floor, 0.0, "none before readings");
        assert!(f.summary().is_empty());
        for i in 0..20 {
            // The system call moves ±2%, user work not at all, memory ±10%; the
            // second instance's process makes every probe twice as slow, which is its
            // own, not the machine's movement.
            let s = if i % 2 == 0 { 98.0 } else { 102.0 };
            let m = if i % 2 == 0 { 900.0 } else { 1100.0 };
            let at = i % 4 / 2;
            let k = if at == 1 { 2.0 } else { 1.0 };
            f.push(at, [s * k, k, m * k, f64::NAN, f64::NAN]);
        }
        // Two readings at a third place count for nothing.
        f.push(7, [1e6; 5]);
        f.push(7, [1.0; 5]);
        assert_eq!(f.len(), 22);
        let syscall = f.held(WorkKind::Syscall);
        let memory = f.held(WorkKind::Memory);
        assert_eq!(syscall.kind, Some(WorkKind::Syscall));
        assert!(syscall.floor > 0.01 && syscall.floor < 0.03, "{syscall:?}");
        assert!(
            (memory.floor / syscall.floor - 5.0).abs() < 1e-9,
            "{memory:?}"
        );
        assert_eq!(f.held(WorkKind::User).floor, 0.0);
        // No cross reading anywhere: no floor for that kind, and none said.
        assert_eq!(f.held(WorkKind::Cross).floor, 0.0);
        let s = f.summary();
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].kind, WorkKind::Syscall);
        assert_eq!(s[0].readings, 20);
        assert!(s[0].median_ns > 100.0 && s[0].median_ns < 200.0, "as read");
        assert!((s[0].floor_pct - syscall.floor * 100.0).abs() < 1e-9);
        // Probe processes that met a slow spell before the first round set the reach
        // only until the rounds have readings of their own.
        let mut g = Floors::new(8);
        for i in 0..24 {
            let slow = if i % 2 == 0 { 1.4 } else { 1.0 };
            g.push(
                PROBE_PROCESS,
                [100.0 * slow, 1.0, 1000.0, f64::NAN, f64::NAN],
            );
        }
        let early = g.held(WorkKind::Syscall).reach;
        assert!(early > 0.1, "{early}");
        for i in 0..12 {
            let s = if i % 2 == 0 { 99.0 } else { 101.0 };
            g.push(i % 3, [s, 1.0, 1000.0, f64::NAN, f64::NAN]);
        }
        let later = g.held(WorkKind::Syscall).reach;
        assert!(later < 0.05, "{later} after {early}");
        // Every reading is in the base state: the reach is the floor.
        assert!((syscall.reach - syscall.floor).abs() < 1e-12, "{syscall:?}");
        assert!((s[0].reach_pct - s[0].floor_pct).abs() < 1e-9, "{:?}", s[0]);
    }

    #[test]
    fn readings_outside_the_base_state_are_left_out() {
        // Twenty readings in the base state (system call 100, memory 1000 ±1%) and ten
        // in a slow state 35% up on every kind, as the VM's slow spells are: the
        // floors are the base state's, and so is the median said.
        let mut f = Floors::new(8);
        for i in 0..30 {
            let wobble = if i % 2 == 0 { 0.99 } else { 1.01 };
            let slow = if i % 3 == 2 { 1.35 } else { 1.0 };
            f.push(
                0,
                [
                    100.0 * slow,
                    1.0 * slow,
                    1000.0 * wobble * slow,
                    f64::NAN,
                    f64::NAN,
                ],
            );
        }
        let memory = f.held(WorkKind::Memory).floor;
        assert!(memory > 0.0 && memory < 0.02, "{memory}");
        assert_eq!(f.held(WorkKind::Syscall).floor, 0.0);
        // The reach holds the slow readings too, as the rounds kept beside them do: a
        // third of them 35% up is far wider than the base state's ±1%.
        let reach = f.held(WorkKind::Memory).reach;
        assert!(reach > 5.0 * memory, "{reach} against {memory}");
        assert!(f.held(WorkKind::Syscall).reach > 0.05);
        let s = f.summary();
        assert!(s[0].reach_pct > 5.0, "{:?}", s[0]);
        assert_eq!(s[0].readings, 20);
        assert!((s[0].median_ns - 100.0).abs() < 1e-9, "{:?}", s[0]);
        // A place whose readings are mostly slow (fresh processes in a slow spell)
        // still gives a floor: from the ten nearest its base.
        let mut f = Floors::new(8);
        for i in 0..24 {
            let s = if i < 4 { 100.0 } else { 150.0 + i as f64 };
            f.push(PROBE_PROCESS, [s, 1.0, 1000.0, f64::NAN, f64::NAN]);
        }
        let s = f.summary();
        assert_eq!(s.len(), 3, "{s:?}");
        assert_eq!(s[0].readings, rounds::MIN_FLOOR_READINGS);
        assert!(s[0].median_ns < 160.0, "{:?}", s[0]);
        // Places of a few rounds each (a small selection's instances) leave their
        // slow readings out too once the run has enough in the base state.
        let mut f = Floors::new(8);
        for at in 0..4 {
            for i in 0..6 {
                let slow = if i == 5 { 1.35 } else { 1.0 };
                f.push(at, [100.0 * slow, 1.0, 1000.0 * slow, f64::NAN, f64::NAN]);
            }
        }
        let s = f.summary();
        assert_eq!(s[0].readings, 20, "{s:?}");
        assert_eq!(f.held(WorkKind::Memory).floor, 0.0, "{s:?}");
        // A kind read only in the probe processes, most of them in a slow spell,
        // while the rounds' places hold plenty of the others: it keeps a floor, from
        // the readings nearest the base.
        for i in 0..24 {
            let s = if i < 6 { 100.0 } else { 150.0 + i as f64 };
            let cross = 30_000.0 + 100.0 * i as f64;
            f.push(PROBE_PROCESS, [s, 1.0, 1000.0, cross, f64::NAN]);
        }
        let cross = f.held(WorkKind::Cross).floor;
        assert!(cross > 0.0, "{:?}", f.summary());
    }
}
