//! What the machine allows each kind of work over a run: every probe reading (see
//! [`crate::harness::probe`]) gathered by kind, and the precision a figure of that kind
//! can have at the profile's fewest rounds when it moves as the probe does
//! ([`crate::stats::rounds::floor`]). It sets the target of the results of that kind,
//! and is added to their rounds' own intervals until they have a history.
//!
//! The readings come from where rounds are measured: each worker reads the probes
//! just before its round's samples, warm as the round is (a round measured again gives
//! none, as it gives no figure). So a kind's readings spread as the kept rounds of a
//! benchmark of that kind do, slips the canaries let through included (a slow spell
//! can begin after the canary before a round and end before the one after it). Before
//! the first round, a few probe processes of their own, warmed as long as a round, give
//! the run's header its first figures; they count only until the rounds have given
//! ten readings of the kind. Processes started only to read the probes while a small
//! selection waits between its rounds were tried and left out: on the 2-vCPU VM this
//! project is developed on, 41–48% of their getpid readings were more than 5% slow
//! against 14–20% of the workers', so they described another machine than the rounds
//! met. A floor from the base state's readings alone was also kept until 2026-11-27,
//! beside this: it set neither target nor interval once intervals were the rows' own.

use crate::harness::probe::{Probes, WorkKind};
use crate::harness::Held;
use crate::method;
use crate::results::Floor;
use crate::stats::rounds;

/// The probe readings of a run so far.
#[derive(Debug, Default)]
pub(super) struct Floors {
    /// Each reading with where it was read: the instance whose worker read it, or
    /// [`PROBE_PROCESS`].
    readings: Vec<(usize, Probes)>,
    /// The rounds the figure is taken at: the profile's `min_rounds`, the fewest a row
    /// is judged at, and at least the fewest the trimmed mean trims at (5). More
    /// rounds in one run narrow a row's own interval, not how far the machine moves
    /// between runs, which this figure stands for until the row has a history
    /// (docs/method.md §6). Below 5 the headline is a plain mean, and one stray probe
    /// reading (a probe is one short reading, a round figure the median of many
    /// samples) set it: the quick profile's 3 rounds read a cross-CPU figure of ±93%
    /// where its readings' p10–p90 spread 4.0% (2026-11-28).
    rounds: usize,
    /// Results are held to the profile's target even below what the machine allows.
    pub(super) strict: bool,
    /// Each kind's movement between the machine's recent runs, from the history
    /// (`store::movement`): `(runs, ±fraction)`, what the machine
    /// allows the kind when larger than this run's own readings give.
    between: [Option<(usize, f64)>; WorkKind::ALL.len()],
    /// Each kind's figure and the readings it was taken from: taken again once a
    /// twentieth more (at least 4) are in, as each draws [`method::RESAMPLES`] sets.
    cache: std::cell::RefCell<[Option<(usize, f64)>; WorkKind::ALL.len()]>,
}

impl Floors {
    /// Floors taken at `rounds` rounds, or at the fewest the trimmed mean trims at
    /// if more.
    pub(super) fn new(rounds: usize) -> Floors {
        let trims_from = (1.0 / method::TRIM).ceil() as usize;
        Floors {
            readings: Vec::new(),
            rounds: rounds.max(trims_from),
            strict: false,
            between: Default::default(),
            cache: Default::default(),
        }
    }

    /// Sets each kind's movement between the machine's recent runs: `(kind, runs,
    /// ±fraction)`.
    pub(super) fn set_between(&mut self, moves: &[(WorkKind, usize, f64)]) {
        for &(kind, runs, f) in moves {
            self.between[kind.index()] = f.is_finite().then_some((runs, f));
        }
    }

    /// What this run's readings alone give `kind` (0 while too few are in).
    fn within(&self, kind: WorkKind) -> f64 {
        let n = self.readings.len();
        let cached = self.cache.borrow()[kind.index()];
        match cached {
            Some((at, f))
                if n < at
                    + (at / method::FLOOR_STALE_DIV).max(method::FLOOR_STALE_MIN) =>
            {
                f
            }
            _ => {
                let f =
                    rounds::floor(&self.of_kept(kind), self.rounds).map_or(0.0, |x| x.1);
                self.cache.borrow_mut()[kind.index()] = Some((n, f));
                f
            }
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

    /// A kind's readings, each relative to the median of those read where it was (the
    /// same instance's workers, or the probe processes): so the spread is the
    /// machine's between rounds, processes and moments, not the difference between one
    /// benchmark's process and another's (a probe read beside a ring of processes, or a
    /// file's pages, is not read beside a getpid loop). The probe processes before the
    /// first round are no round's: their readings count only until the rounds have
    /// given ten ([`method::MIN_FLOOR_READINGS`]) of the kind, so that the header has a
    /// figure, and a slow spell they met does not loosen a small selection's targets.
    fn of_kept(&self, kind: WorkKind) -> Vec<f64> {
        relative(self.places(kind).into_values().collect(), kind)
    }

    /// The readings by where they were read (an instance's workers, or
    /// [`PROBE_PROCESS`]), of the places that count for a kind ([`Floors::of_kept`]).
    fn places(&self, kind: WorkKind) -> std::collections::BTreeMap<usize, Vec<Probes>> {
        let mut by_place = std::collections::BTreeMap::<usize, Vec<Probes>>::new();
        for (at, p) in &self.readings {
            by_place.entry(*at).or_default().push(*p);
        }
        // Counted as `relative` will count them: a place with fewer than
        // [`method::MIN_AT_PLACE`] readings gives none (early in a catalogue, most instances'
        // workers have read one or two).
        let rounds = by_place
            .iter()
            .filter(|(at, _)| **at != PROBE_PROCESS)
            .map(|(_, v)| v.iter().filter(|p| p[kind.index()].is_finite()).count())
            .filter(|&n| n >= method::MIN_AT_PLACE)
            .sum::<usize>();
        if rounds >= method::MIN_FLOOR_READINGS {
            by_place.remove(&PROBE_PROCESS);
        }
        by_place
    }

    /// What a result of `kind` is held to now: what the machine allows its kind, the
    /// larger of what this run's readings give (0 while too few are in) and its
    /// movement between recent runs.
    pub(super) fn held(&self, kind: WorkKind) -> Held {
        let between = self.between[kind.index()].map_or(0.0, |b| b.1);
        Held {
            kind: Some(kind),
            allows: self.within(kind).max(between),
            strict: self.strict,
        }
    }

    /// Every kind's figure, for the run's document (empty without enough readings).
    pub(super) fn summary(&self) -> Vec<Floor> {
        WorkKind::ALL
            .into_iter()
            .filter_map(|kind| {
                let xs = self.of_kept(kind);
                let (_, allows) = rounds::floor(&xs, self.rounds)?;
                let mut sorted = xs.clone();
                sorted.sort_by(f64::total_cmp);
                let q = |p: f64| crate::stats::percentile_sorted(&sorted, p);
                let mut read: Vec<f64> = self
                    .places(kind)
                    .values()
                    .flatten()
                    .map(|p| p[kind.index()])
                    .filter(|x| x.is_finite())
                    .collect();
                read.sort_by(f64::total_cmp);
                let between = self.between[kind.index()];
                let allows_pct = allows.max(between.map_or(0.0, |b| b.1)) * 100.0;
                Some(Floor {
                    kind,
                    probe: kind.probe().to_string(),
                    readings: sorted.len(),
                    median_ns: crate::stats::percentile_sorted(&read, 50.0),
                    spread_pct: (q(90.0) - q(10.0)) / q(50.0) * 100.0,
                    floor_pct: allows_pct,
                    rounds: self.rounds,
                    within_pct: between.map(|_| allows * 100.0),
                    between_pct: between.map(|b| b.1 * 100.0),
                    past_runs: between.map(|b| b.0),
                })
            })
            .collect()
    }
}

/// The readings of `kind` at each place (places with fewer than [`method::MIN_AT_PLACE`] left
/// out), each relative to the median of its place's.
fn relative(places: Vec<Vec<Probes>>, kind: WorkKind) -> Vec<f64> {
    let mut out = Vec::new();
    for place in places {
        let mut xs: Vec<f64> = place
            .iter()
            .map(|p| p[kind.index()])
            .filter(|x| x.is_finite() && *x > 0.0)
            .collect();
        if xs.len() < method::MIN_AT_PLACE {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_the_floor_of_its_own_readings() {
        // Below five rounds the trimmed mean is a plain mean: the figure is taken at five.
        assert_eq!(Floors::new(3).rounds, 5);
        assert_eq!(Floors::new(10).rounds, 10);
        let mut f = Floors::new(8);
        assert_eq!(
            f.held(WorkKind::Syscall).allows,
            0.0,
            "none before readings"
        );
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
        assert!(
            syscall.allows > 0.01 && syscall.allows < 0.03,
            "{syscall:?}"
        );
        assert!(
            (memory.allows / syscall.allows - 5.0).abs() < 1e-9,
            "{memory:?}"
        );
        assert_eq!(f.held(WorkKind::User).allows, 0.0);
        // No cross reading anywhere: no floor for that kind, and none said.
        assert_eq!(f.held(WorkKind::Cross).allows, 0.0);
        let s = f.summary();
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].kind, WorkKind::Syscall);
        assert_eq!(s[0].readings, 20);
        assert!(s[0].median_ns > 100.0 && s[0].median_ns < 200.0, "as read");
        assert!((s[0].floor_pct - syscall.allows * 100.0).abs() < 1e-9);
        assert_eq!((s[0].within_pct, s[0].between_pct), (None, None));
        // The history's movement between runs is what the machine allows a kind where
        // it is the larger, and only there.
        let within = syscall.allows;
        f.set_between(&[(WorkKind::Syscall, 6, 0.05), (WorkKind::Memory, 6, 0.001)]);
        assert_eq!(f.held(WorkKind::Syscall).allows, 0.05);
        assert_eq!(f.held(WorkKind::Memory).allows, memory.allows);
        let s = f.summary();
        assert_eq!(s[0].floor_pct, 5.0);
        assert_eq!(s[0].within_pct, Some(within * 100.0));
        assert_eq!((s[0].between_pct, s[0].past_runs), (Some(5.0), Some(6)));
        assert_eq!(s[2].floor_pct, memory.allows * 100.0);
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
        let early = g.held(WorkKind::Syscall).allows;
        assert!(early > 0.1, "{early}");
        for i in 0..12 {
            let s = if i % 2 == 0 { 99.0 } else { 101.0 };
            g.push(i % 3, [s, 1.0, 1000.0, f64::NAN, f64::NAN]);
        }
        let later = g.held(WorkKind::Syscall).allows;
        assert!(later < 0.05, "{later} after {early}");
        // Ten readings spread over places of one or two each count for nothing yet:
        // the probe processes still give the figure.
        let mut h = Floors::new(8);
        for i in 0..24 {
            let s = if i % 2 == 0 { 98.0 } else { 102.0 };
            h.push(PROBE_PROCESS, [s, 1.0, 1000.0, f64::NAN, f64::NAN]);
        }
        for at in 0..10 {
            h.push(at, [100.0, 1.0, 1000.0, f64::NAN, f64::NAN]);
        }
        assert!(h.held(WorkKind::Syscall).allows > 0.0);
    }
}
