//! The harness driven by a fake clock: every figure below is exact.

use super::clock::FakeClock;
use super::*;
use crate::method;
use crate::os::usage::Usage;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Two rounds of exactly ten samples (a round lasts at least 0 ns), up to four rounds.
const PROFILE: Profile = Profile {
    name: "test",
    warmup_ns: 50_000,
    round_warmup_ns: 0,
    round_ns: 0,
    round_min_samples: 10,
    round_max_samples: 10_000,
    min_rounds: 2,
    max_rounds: 4,
    span_ns: 0,
    ci_target: 0.01,
    min_batch_ns: 2_000,
    overhead_samples: 5,
    budget_ns: 0,
    budget_max_rounds: 4,
};

/// `n` samples in one round, one round only.
fn one_round(n: usize) -> Profile {
    Profile {
        round_min_samples: n,
        min_rounds: 1,
        max_rounds: 1,
        ..PROFILE
    }
}

/// A fake operation: each call of `run(k)` advances the fake clock by
/// `per_batch + k * (loop_ns + op_ns(call))`, and may count an involuntary switch.
struct FakeBody {
    clock: FakeClock,
    per_batch: u64,
    loop_ns: u64,
    op_ns: Box<dyn Fn(u64) -> u64>,
    switched: Box<dyn Fn(u64) -> bool>,
    switches: Arc<AtomicU64>,
    calls: u64,
}

impl FakeBody {
    fn new(clock: &FakeClock, op_ns: impl Fn(u64) -> u64 + 'static) -> FakeBody {
        FakeBody {
            clock: clock.clone(),
            per_batch: 10,
            loop_ns: 2,
            op_ns: Box::new(op_ns),
            switched: Box::new(|_| false),
            switches: Arc::new(AtomicU64::new(0)),
            calls: 0,
        }
    }
}

impl Body for FakeBody {
    fn run(&mut self, k: u64) -> Result<(), BenchError> {
        let op = (self.op_ns)(self.calls);
        if (self.switched)(self.calls) {
            self.switches.fetch_add(1, Ordering::SeqCst);
        }
        self.calls += 1;
        self.clock.advance(self.per_batch + k * (self.loop_ns + op));
        Ok(())
    }
}

fn settings(profile: Profile) -> Settings {
    Settings::new(profile, 10.0) // target batch: 1000 × 10 ns = 10 µs
}

fn measure(clock: &FakeClock, body: &mut FakeBody, profile: Profile) -> Measurement {
    let s = settings(profile);
    measure_with(clock, body, s, &Usage::default, Plan::default())
}

/// `body` measured with `s`, `usage` and `plan`, against an empty loop of no cost.
fn measure_with(
    clock: &FakeClock,
    body: &mut FakeBody,
    s: Settings,
    usage: UsageFn<'_>,
    plan: Plan,
) -> Measurement {
    let mut empty = FakeBody::new(clock, |_| 0);
    let h = Harness::with_usage(clock, s, usage);
    h.measure(body, &mut empty, plan).unwrap()
}

#[test]
fn batch_size_is_calibrated_to_the_target_duration() {
    let clock = FakeClock::new(5);
    // 100 ns per op: k=1 takes 117 ns, so k grows 100x to 100, which takes 10.2 µs ≥ 10 µs.
    let m = measure(&clock, &mut FakeBody::new(&clock, |_| 100), PROFILE);
    assert_eq!(m.batch, 100);
    // A 50 µs operation is timed one at a time.
    let m = measure(&clock, &mut FakeBody::new(&clock, |_| 50_000), PROFILE);
    assert_eq!(m.batch, 1);
}

#[test]
fn overhead_is_measured_at_the_same_batch_size_and_subtracted() {
    let clock = FakeClock::new(5);
    let m = measure(&clock, &mut FakeBody::new(&clock, |_| 100), PROFILE);
    // Empty batch of 100: 5 (clock read) + 10 (per batch) + 100 × 2 (loop) = 215 ns.
    assert_eq!(m.overhead.per_batch_ns, 215.0);
    assert_eq!(m.overhead.per_op_ns, 2.15);
    assert!(m.overhead.subtracted);
    let s = m.analysis.clean.as_ref().unwrap();
    assert_eq!((s.min, s.median, s.max), (100.0, 100.0, 100.0));
    assert_eq!(m.analysis.counts.floored, 0);

    // keep_overhead reports the raw loop: (5 + 10 + 100 × 102) / 100 = 102.15 ns.
    let plan = Plan {
        keep_overhead: true,
        ..Plan::default()
    };
    let mut body = FakeBody::new(&clock, |_| 100);
    let m = measure_with(&clock, &mut body, settings(PROFILE), &Usage::default, plan);
    assert!((m.analysis.clean.unwrap().median - 102.15).abs() < 1e-9);
}

#[test]
fn constant_samples_converge_at_the_minimum_rounds() {
    let clock = FakeClock::new(5);
    // Two rounds of 15: the 30 clean samples a converged result needs at least.
    let profile = Profile {
        round_min_samples: 15,
        ..PROFILE
    };
    let m = measure(&clock, &mut FakeBody::new(&clock, |_| 100), profile);
    assert!(m.converged && m.why.is_empty(), "{:?}", m.why);
    assert_eq!(m.samples.len(), 30);
    assert_eq!(m.analysis.rounds.len(), 2);
    assert!(m.samples[..15].iter().all(|s| s.round == 0));
    assert!(m.samples[15..].iter().all(|s| s.round == 1));
    let e = m.analysis.estimate.as_ref().unwrap();
    assert_eq!((e.center, e.sd), (100.0, 0.0));
    // Identical rounds: the interval is the floor, half a clock step per operation
    // (10 ns granularity / 100 operations / 2) or the pooled interval, whichever is wider.
    assert!(e.ci_high - e.center >= 0.05 - 1e-12, "{e:?}");
}

#[test]
fn the_interval_floor_is_half_the_clock_step_not_half_the_granularity() {
    // A 50 µs operation timed one at a time, the same every time: the interval is the
    // floor alone, half a clock step per operation.
    let floor = |resolution: Option<f64>| {
        let s = Settings::new(PROFILE, 20.0);
        let s = resolution.map_or(s, |r| s.with_resolution(r));
        let clock = FakeClock::new(5);
        let profile = Profile {
            round_min_samples: 15,
            ..PROFILE
        };
        let s = Settings { profile, ..s };
        let mut body = FakeBody::new(&clock, |_| 50_000);
        let m = measure_with(&clock, &mut body, s, &Usage::default, Plan::default());
        assert_eq!(m.batch, 1);
        let e = m.analysis.estimate.unwrap();
        e.ci_high - e.center
    };
    // Reads 20 ns apart on a clock that steps 10 ns: ±5 ns, where the granularity
    // alone would say ±10 ns.
    assert_eq!(floor(None), 10.0);
    assert_eq!(floor(Some(10.0)), 5.0);
    // A step coarser than the granularity, or none found, changes nothing.
    assert_eq!(floor(Some(40.0)), 10.0);
    assert_eq!(floor(Some(f64::NAN)), 10.0);
}

#[test]
fn twenty_clean_samples_never_converge_however_steady() {
    let clock = FakeClock::new(5);
    let profile = Profile {
        max_rounds: 2,
        ..PROFILE
    };
    let m = measure(&clock, &mut FakeBody::new(&clock, |_| 100), profile);
    assert_eq!(m.samples.len(), 20);
    assert!(!m.converged, "{:?}", m.why);
    assert_eq!(m.why.first(), Some(&Why::FewClean));
    assert_eq!(m.analysis.basis, analyze::Basis::All);
    assert!(m.analysis.relative_ci() >= method::FEW_FLOOR - 1e-12);
}

/// Six rounds of an operation whose cost alternates between 100 ns and `other` every
/// ten batches.
fn six_rounds(other: u64) -> Measurement {
    let clock = FakeClock::new(5);
    let mut body =
        FakeBody::new(&clock, move |i| if (i / 10) % 2 == 0 { 100 } else { other });
    let profile = Profile {
        min_rounds: 6,
        max_rounds: 6,
        ..PROFILE
    };
    measure(&clock, &mut body, profile)
}

#[test]
fn rounds_that_disagree_stop_unconverged_with_their_states() {
    // The machine alternates between 100 and 110 ns every ten batches: each round sees
    // mostly one state, and the round-level interval must show it.
    let m = six_rounds(110);
    assert!(!m.converged, "{:?}", m.why);
    assert_eq!(m.why, vec![Why::Wide { outlook: None }]);
    assert_eq!(m.analysis.rounds.len(), 6);
    let e = m.analysis.estimate.as_ref().unwrap();
    assert_eq!(e.rounds, 6);
    assert!(e.spread() > 0.05, "{e:?}");
    assert!(e.ci_low < 105.0 && e.ci_high > 105.0, "{e:?}");
    // A single window (the old harness) would have reported a tight interval around
    // whichever state it saw.
    assert!(m.analysis.relative_ci() > 0.01);
}

#[test]
fn rounds_that_spread_without_states_say_how_far() {
    // Two speeds 2% apart, closer than two states: the note gives the rounds' spread.
    let m = six_rounds(102);
    assert!(m.analysis.states.len() <= 1, "{:?}", m.analysis.states);
    assert!(!m.converged, "{:?}", m.why);
    assert_eq!(m.why, vec![Why::Wide { outlook: None }]);
    let e = m.analysis.estimate.as_ref().unwrap();
    assert!(e.spread() > 0.005, "{e:?}");
}

#[test]
fn a_second_mode_is_the_operations_own_and_far_strays_are_outliers() {
    let clock = FakeClock::new(5);
    // Every 10th call costs 400 ns instead of 100: a mode of its own, which the MAD test
    // leaves alone (nothing perturbed it), and the median is the majority's.
    let mut body = FakeBody::new(&clock, |i| if i % 10 == 9 { 400 } else { 100 });
    let m = measure(&clock, &mut body, one_round(200));
    let a = &m.analysis;
    let slow = a.per_op_ns.iter().filter(|&&v| v > 150.0).count();
    assert!(slow >= 19, "about one sample in ten is slow, got {slow}");
    assert_eq!(a.counts.mad, 0);
    assert_eq!(a.counts.clean, a.counts.total);
    assert_eq!(a.clean.as_ref().unwrap().max, 400.0);
    assert_eq!(a.clean.as_ref().unwrap().median, 100.0);
    assert_eq!(a.raw.as_ref().unwrap().median, 100.0);
    // One call in a hundred at 400 ns is no mode: the MAD test labels those, and only
    // those, and leaves them out.
    let mut body = FakeBody::new(&clock, |i| if i % 100 == 99 { 400 } else { 100 });
    let m = measure(&clock, &mut body, one_round(400));
    let a = &m.analysis;
    for (v, f) in a.per_op_ns.iter().zip(&a.flags) {
        assert_eq!(f.mad, *v > 150.0, "MAD label for {v}");
        assert!(!f.perturbed);
    }
    assert!(a.counts.mad >= 3, "{:?}", a.counts);
    assert_eq!(a.counts.clean, a.counts.total - a.counts.mad);
    assert_eq!(a.clean.as_ref().unwrap().max, 100.0);
    assert_eq!(a.raw.as_ref().unwrap().max, 400.0);
}

#[test]
fn perturbed_samples_are_flagged_and_excluded() {
    let clock = FakeClock::new(5);
    let mut body = FakeBody::new(&clock, |i| if i % 7 == 3 { 120 } else { 100 });
    body.switched = Box::new(|i| i % 7 == 3);
    let switches = body.switches.clone();
    let usage = move || Usage {
        invol_switches: switches.load(Ordering::SeqCst),
        ..Usage::default()
    };
    let s = settings(one_round(100));
    let m = measure_with(&clock, &mut body, s, &usage, Plan::default());
    let a = &m.analysis;
    // 120 ns is a perturbed sample, not a MAD outlier: only the switch excludes it.
    for (v, f) in a.per_op_ns.iter().zip(&a.flags) {
        assert_eq!(f.perturbed, *v == 120.0);
        assert!(!f.mad);
    }
    assert!(a.counts.perturbed >= 14);
    assert_eq!(a.clean.as_ref().unwrap().max, 100.0);
    assert_eq!(a.raw.as_ref().unwrap().max, 120.0);
    assert!(a.accounting.invol_switches > 0.0);
}

#[test]
fn usage_per_round_is_read_twice_a_round_and_lands_on_its_last_sample() {
    // Each read counts itself: 1 µs of user time and a switch more than the last.
    let (clock, reads) = (FakeClock::new(5), Arc::new(AtomicU64::new(0)));
    let seen = reads.clone();
    let usage = move || {
        let n = seen.fetch_add(1, Ordering::SeqCst) + 1;
        let (user_ns, invol_switches) = (n * 1000, n);
        Usage {
            user_ns,
            invol_switches,
            ..Usage::default()
        }
    };
    let mut s = settings(one_round(50));
    s.usage_per_round = true;
    let mut body = FakeBody::new(&clock, |_| 100);
    let m = measure_with(&clock, &mut body, s, &usage, Plan::default());
    // Calibration, warm-up and the empty loop read none; the one round two, and only
    // its last sample carries them: its CPU time, no switch to flag.
    assert_eq!(reads.load(Ordering::SeqCst), 2);
    let (last, rest) = m.samples.split_last().unwrap();
    assert!(rest.iter().all(|x| x.usage == Usage::default()));
    assert_eq!((last.usage.user_ns, last.usage.invol_switches), (1000, 0));
    assert_eq!(m.analysis.counts.perturbed, 0);
}

#[test]
fn the_canary_is_the_median_of_fixed_batches() {
    let clock = FakeClock::new(0);
    let mut body = FakeBody::new(&clock, |i| [100, 300, 100, 100, 200][i as usize % 5]);
    body.per_batch = 0;
    body.loop_ns = 0;
    let h = Harness::with_usage(&clock, settings(PROFILE), &Usage::default);
    assert_eq!(h.canary(&mut body, 1000, 5).unwrap(), 100.0);
}

#[test]
fn an_error_in_the_body_fails_the_measurement() {
    struct Failing;
    impl Body for Failing {
        fn run(&mut self, _: u64) -> Result<(), BenchError> {
            Err(BenchError::Failed("boom".into()))
        }
    }
    let clock = FakeClock::new(5);
    let h = Harness::with_usage(&clock, settings(PROFILE), &Usage::default);
    let e = h
        .measure(&mut Failing, &mut EmptyLoop, Plan::default())
        .unwrap_err();
    assert!(matches!(e, BenchError::Failed(m) if m == "boom"));
}

#[test]
fn reset_runs_before_every_batch_outside_the_clock_and_the_usage() {
    /// Costs 100 ns per operation; its reset costs 1 ms and a page fault, which must
    /// show in neither the time nor the sample's usage.
    struct Rearmed {
        clock: FakeClock,
        faults: Arc<AtomicU64>,
        resets: Vec<u64>,
        runs: u64,
    }
    impl Body for Rearmed {
        fn run(&mut self, k: u64) -> Result<(), BenchError> {
            assert_eq!(self.resets.len() as u64, self.runs + 1, "reset before run");
            assert_eq!(self.resets.last(), Some(&k), "reset told the batch size");
            self.runs += 1;
            self.clock.advance(k * 100);
            Ok(())
        }
        fn reset(&mut self, k: u64) -> Result<(), BenchError> {
            self.resets.push(k);
            self.faults.fetch_add(1, Ordering::SeqCst);
            self.clock.advance(1_000_000);
            Ok(())
        }
    }
    let clock = FakeClock::new(0);
    let faults = Arc::new(AtomicU64::new(0));
    let seen = faults.clone();
    let usage = move || Usage {
        minor_faults: seen.load(Ordering::SeqCst),
        ..Usage::default()
    };
    let mut body = Rearmed {
        clock: clock.clone(),
        faults,
        resets: vec![],
        runs: 0,
    };
    let h = Harness::with_usage(&clock, settings(PROFILE), &usage);
    let plan = Plan {
        fixed_batch: Some(4),
        ..Plan::default()
    };
    let m = h.measure(&mut body, &mut EmptyLoop, plan).unwrap();
    assert_eq!(body.resets.len() as u64, body.runs);
    assert!(body.resets.iter().all(|&k| k == 4));
    assert_eq!(m.analysis.clean.as_ref().unwrap().median, 100.0);
    assert_eq!(m.analysis.counts.perturbed, 0);
    assert_eq!(m.analysis.accounting.minor_faults, 0.0);
}

#[test]
fn expected_faults_include_major_faults() {
    let faulting = Usage {
        major_faults: 1,
        ..Usage::default()
    };
    let faults = Expect {
        faults: true,
        ..Expect::default()
    };
    assert!(analyze::perturbation(&faulting, Expect::default()) != Default::default());
    assert!(analyze::perturbation(&faulting, faults) == Default::default());
}

#[test]
fn each_rounds_overhead_lands_in_its_own_place() {
    let mut o = Overhead {
        ticks: 78,
        ..Overhead::default()
    };
    o.set_ticks_for(1, 52);
    o.set_ticks_for(2, 40);
    // Round 2 measured again after a slow episode: its second measurement replaces the
    // first, and round 3 still finds its own place.
    o.set_ticks_for(2, 45);
    o.set_ticks_for(3, 60);
    assert_eq!(o.later, vec![52, 45, 60]);
    // A round with nothing recorded takes the first round's.
    o.set_ticks_for(5, 33);
    assert_eq!(o.later, vec![52, 45, 60, 78, 33]);
    // An earlier round measured again leaves the later ones where they are.
    o.set_ticks_for(2, 47);
    assert_eq!(o.later, vec![52, 47, 60, 78, 33]);
    o.set_ticks_for(2, 45);
    let got: Vec<u64> = (0..7).map(|r| o.ticks_for(r)).collect();
    assert_eq!(got, vec![78, 52, 45, 60, 78, 33, 78]);
    // The first round measured again.
    o.set_ticks_for(0, 77);
    assert_eq!(o.ticks_for(0), 77);
}

/// A system call's result, held to the ±3% the machine allows.
fn syscall_held() -> Held {
    Held {
        kind: Some(probe::WorkKind::Syscall),
        allows: 0.03,
        strict: false,
    }
}

#[test]
fn a_result_is_judged_against_its_kinds_target_and_its_interval_stays_its_own() {
    let xs = super::analyze::tests::samples(300, 300, 8, Default::default());
    let (a, ok, _) = super::analyze::tests::conclude(&xs, Default::default());
    assert!(ok);
    let own = a.relative_ci();
    let p = Profile::STANDARD;
    let floor = syscall_held();
    // Held to what the machine allows, a row within it is converged ...
    assert_eq!(super::verdict(&a, &p, floor), (true, vec![]));
    // ... and held to a target below its interval, it is not: here the clock's step
    // sets that interval, so more rounds cannot narrow it.
    let strict = Held {
        strict: true,
        ..floor
    };
    let tight = Profile {
        ci_target: own / 2.0,
        ..p
    };
    assert_eq!(
        super::verdict(&a, &tight, strict),
        (false, vec![Why::ClockStep])
    );
    // The verdict never widens the interval: it is the rounds'.
    assert_eq!(a.relative_ci(), own);
    assert_eq!(a.source(), Source::Clock);
}

#[test]
fn what_the_machine_allows_is_added_to_the_rounds_interval_and_says_so() {
    let xs = super::analyze::tests::samples(300, 300, 8, Default::default());
    let (mut a, _, _) = super::analyze::tests::conclude(&xs, Default::default());
    let e = a.estimate.clone().unwrap();
    let own = a.relative_ci();
    let held = syscall_held();
    let mut strict = a.clone();
    super::with_the_machine(&mut a, held);
    assert_eq!(a.own, Some((e.ci_low, e.ci_high)));
    assert_eq!(a.source(), Source::Machine);
    assert_eq!(a.own_relative_ci(), own);
    // Two independent errors: the half-width is √(own² + m²) on each side.
    let got = a.estimate.clone().unwrap();
    let up = ((e.ci_high - e.center).powi(2) + (0.03 * e.center).powi(2)).sqrt();
    assert!((got.ci_high - e.center - up).abs() < 1e-9, "{got:?}");
    assert!(a.relative_ci() > 0.03 && a.relative_ci() > own);
    // Judged against it: own rounds narrower than what the machine allows are
    // within the target √2·m.
    let (ok, why) = super::verdict(&a, &Profile::STANDARD, held);
    assert!(own < 0.03 && ok && why.is_empty(), "{why:?}");
    // `--target` asks for the rounds' own interval.
    let asked = Held {
        strict: true,
        ..held
    };
    super::with_the_machine(&mut strict, asked);
    assert_eq!(strict.own, None);
    assert_eq!(strict.estimate.unwrap().ci_high, e.ci_high);
    // A machine that allows worse than ±100% (a loaded one) widens to zero, not below.
    let (mut loaded, _, _) = super::analyze::tests::conclude(&xs, Default::default());
    let wild = Held {
        allows: 5.9,
        ..held
    };
    super::with_the_machine(&mut loaded, wild);
    let w = loaded.estimate.unwrap();
    assert_eq!(w.ci_low, 0.0);
    assert!(w.ci_high / w.center > 6.9, "{w:?}");
    // Rounds whose own interval reaches below zero (two rounds far apart) keep it as
    // the printed one does: from zero, inside the printed interval.
    let (mut apart, _, _) = super::analyze::tests::conclude(&xs, Default::default());
    let e = apart.estimate.as_mut().unwrap();
    e.ci_low = -e.center;
    super::with_the_machine(&mut apart, held);
    let (lo, hi) = apart.own.unwrap();
    let printed = apart.estimate.unwrap();
    assert_eq!(lo, 0.0);
    assert!(printed.ci_low <= lo && hi <= printed.ci_high, "{printed:?}");
}

#[test]
fn a_result_is_held_to_the_larger_of_the_profile_and_what_the_machine_allows() {
    let p = Profile::STANDARD; // ±0.5%
    let none = Held::default();
    assert_eq!(none.target(&p), p.ci_target);
    let machine = syscall_held();
    // √2 times what the machine allows: the rounds may add as much as the machine.
    assert!((machine.target(&p) - 0.03 * std::f64::consts::SQRT_2).abs() < 1e-12);
    assert!((machine.own_target(&p) - 0.03).abs() < 1e-12);
    // Below the profile's target: the profile's.
    let low = Held {
        allows: 0.003,
        ..machine
    };
    assert_eq!(low.target(&p), p.ci_target);
    let own = (p.ci_target.powi(2) - 0.003f64.powi(2)).sqrt();
    assert!((low.own_target(&p) - own).abs() < 1e-12);
    // A target asked for is held whatever the machine allows.
    let strict = Held {
        strict: true,
        ..machine
    };
    assert_eq!(strict.target(&p), p.ci_target);
    assert_eq!(strict.own_target(&p), p.ci_target);
    // Not known (NaN from a document) counts for nothing.
    let unknown = Held {
        allows: f64::NAN,
        ..machine
    };
    assert_eq!(unknown.target(&p), p.ci_target);
}
