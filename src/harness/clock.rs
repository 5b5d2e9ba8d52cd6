//! The harness's clocks: a trait, the two real clocks (the TSC and CLOCK_MONOTONIC),
//! a fake clock for tests, and the choice between them.
//!
//! A clock counts ticks; it knows how many nanoseconds a tick lasts. The harness times
//! a batch as the difference of two reads. This module must not time benchmarks itself.

use crate::os::sys;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A monotonic tick counter.
pub trait Clock {
    /// A short name ("tsc", "monotonic", "fake").
    fn name(&self) -> &'static str;
    /// The current tick count.
    fn now(&self) -> u64;
    /// Nanoseconds per tick.
    fn ns_per_tick(&self) -> f64;
    /// Converts a tick difference to nanoseconds.
    fn to_ns(&self, ticks: u64) -> f64 {
        ticks as f64 * self.ns_per_tick()
    }
    /// Whether a tick is the counter's own unit (the TSC), so that a step of one tick
    /// can be told from a step the clock rounded to nanoseconds (CLOCK_MONOTONIC).
    fn raw_counter(&self) -> bool {
        false
    }
}

/// CLOCK_MONOTONIC through the vDSO; one tick is one nanosecond.
#[derive(Debug, Default, Clone, Copy)]
pub struct Monotonic;

impl Clock for Monotonic {
    fn name(&self) -> &'static str {
        "monotonic"
    }
    #[inline(always)]
    fn now(&self) -> u64 {
        sys::ts_ns(&sys::clock_gettime(libc::CLOCK_MONOTONIC))
    }
    fn ns_per_tick(&self) -> f64 {
        1.0
    }
}

/// A clock of the same kind and calibration as `c` that another thread may own (a
/// copy's, see `copies=N`); None for a clock that cannot be made again (a fake one).
pub fn same_as(c: &dyn Clock) -> Option<Box<dyn Clock + Send + Sync>> {
    named(c.name(), c.ns_per_tick())
}

/// The clock named `name` (as [`Clock::name`] says it), calibrated at `ns_per_tick`;
/// None for a name no real clock has.
pub fn named(name: &str, ns_per_tick: f64) -> Option<Box<dyn Clock + Send + Sync>> {
    match name {
        "monotonic" => Some(Box::new(Monotonic)),
        #[cfg(target_arch = "x86_64")]
        "tsc" => Some(Box::new(Tsc::with_rate(ns_per_tick))),
        _ => None,
    }
}

/// The time-stamp counter read with fenced `rdtsc`, calibrated against
/// CLOCK_MONOTONIC_RAW.
#[derive(Debug, Clone, Copy)]
pub struct Tsc {
    ns_per_tick: f64,
}

#[cfg(target_arch = "x86_64")]
impl Tsc {
    /// Calibrates the TSC: five 10 ms windows against CLOCK_MONOTONIC_RAW, the median
    /// of their rates. Takes about 50 ms.
    pub fn calibrate() -> Tsc {
        let raw = || sys::ts_ns(&sys::clock_gettime(libc::CLOCK_MONOTONIC_RAW));
        // A paired reading: the TSC between two raw reads, keeping the tightest of a few.
        let pair = || {
            (0..5)
                .map(|_| {
                    let a = raw();
                    let t = sys::rdtsc_fenced();
                    let b = raw();
                    (b - a, t, a + (b - a) / 2)
                })
                .min_by_key(|p| p.0)
                .map(|(_, t, ns)| (t, ns))
                .expect("five readings")
        };
        let mut rates: Vec<f64> = (0..5)
            .map(|_| {
                let (t0, n0) = pair();
                while raw() - n0 < crate::method::TSC_RATE_NS {}
                let (t1, n1) = pair();
                (n1 - n0) as f64 / (t1.wrapping_sub(t0)) as f64
            })
            .collect();
        rates.sort_by(f64::total_cmp);
        Tsc {
            ns_per_tick: rates[2],
        }
    }

    /// A TSC already calibrated (by the run's parent process) at `ns_per_tick`.
    pub fn with_rate(ns_per_tick: f64) -> Tsc {
        Tsc { ns_per_tick }
    }

    /// The calibrated TSC frequency in MHz.
    pub fn mhz(&self) -> f64 {
        1000.0 / self.ns_per_tick
    }
}

#[cfg(target_arch = "x86_64")]
impl Clock for Tsc {
    fn name(&self) -> &'static str {
        "tsc"
    }
    #[inline(always)]
    fn now(&self) -> u64 {
        sys::rdtsc_fenced()
    }
    fn ns_per_tick(&self) -> f64 {
        self.ns_per_tick
    }
    fn raw_counter(&self) -> bool {
        true
    }
}

/// A clock for tests: it advances only when told, so the harness's behaviour can be
/// checked exactly. Clones share one time line.
#[derive(Debug, Clone, Default)]
pub struct FakeClock {
    t: Arc<AtomicU64>,
    per_read: u64,
}

impl FakeClock {
    /// A fake clock at 0 with 1 ns ticks, where each read costs `per_read` ticks.
    pub fn new(per_read: u64) -> FakeClock {
        FakeClock {
            t: Arc::new(AtomicU64::new(0)),
            per_read,
        }
    }
    /// Moves time forward by `ticks`.
    pub fn advance(&self, ticks: u64) {
        self.t.fetch_add(ticks, Ordering::SeqCst);
    }
}

impl Clock for FakeClock {
    fn name(&self) -> &'static str {
        "fake"
    }
    fn now(&self) -> u64 {
        self.t.fetch_add(self.per_read, Ordering::SeqCst)
    }
    fn ns_per_tick(&self) -> f64 {
        1.0
    }
}

/// Which clock the harness uses, and how it behaves on this machine.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClockInfo {
    /// The clock's name.
    pub name: String,
    /// Why it was chosen.
    pub why: String,
    /// Nanoseconds per tick (for the TSC, from the calibration).
    pub ns_per_tick: f64,
    /// The smallest non-zero step seen between two successive reads, in ns: the
    /// clock's quantum or the cost of a read, whichever is larger.
    pub granularity_ns: f64,
    /// The clock's quantum, in ns: the step by which its value advances (see
    /// [`quantum_ticks`]). A duration is known to within it, however short the reads;
    /// 0 in documents written before it was recorded (read
    /// [`ClockInfo::resolution`]).
    #[serde(default)]
    pub resolution_ns: f64,
    /// The cost of one read, in ns (a loop of reads divided by their number).
    pub read_cost_ns: f64,
}

impl ClockInfo {
    /// The clock's quantum in ns: [`ClockInfo::resolution_ns`], or the granularity in
    /// a document that did not record it.
    pub fn resolution(&self) -> f64 {
        if self.resolution_ns > 0.0 {
            self.resolution_ns
        } else {
            self.granularity_ns
        }
    }
}

/// The clock's quantum in ticks, from the steps seen between successive reads (each
/// with how often it was seen): the greatest common divisor of the steps seen at least
/// [`crate::method::QUANTUM_MIN_SEEN`] times. A read can last longer than the quantum, so the
/// smallest step is not the quantum: in a VM here the TSC advances 26 ticks (10.0 ns)
/// at a time, and successive fenced reads differ by 52 or 78 ticks, never 26. A counter
/// whose unit is its own tick (`raw`) is taken at its word when the divisor is one
/// tick; a clock that rounds to nanoseconds can hide a coarser quantum in that
/// rounding, so there a divisor of one tick falls back to the smallest step (the
/// cautious answer). None when no step was seen often enough.
pub fn quantum_ticks(steps: &[(u64, u64)], raw: bool) -> Option<u64> {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    let seen: Vec<u64> = steps
        .iter()
        .filter(|&&(d, n)| d > 0 && n >= crate::method::QUANTUM_MIN_SEEN)
        .map(|&(d, _)| d)
        .collect();
    let smallest = steps.iter().map(|&(d, _)| d).filter(|&d| d > 0).min();
    // Never coarser than a step actually seen.
    match seen.iter().fold(0, |g, &d| gcd(g, d)) {
        0 => None,
        1 if !raw => smallest,
        g => smallest.map(|s| s.min(g)),
    }
}

/// Measures a clock's granularity, quantum and read cost.
pub fn characterize(clock: &dyn Clock, name: &str, why: &str) -> ClockInfo {
    // Only a store between two reads (into memory written once before, so no page
    // fault either): anything more there would space the reads out.
    let mut diffs = vec![u64::MAX; crate::method::CLOCK_READS as usize];
    let mut prev = clock.now();
    for slot in diffs.iter_mut() {
        let t = clock.now();
        *slot = t.wrapping_sub(prev);
        prev = t;
    }
    diffs.sort_unstable();
    let mut steps: Vec<(u64, u64)> = Vec::new();
    for d in diffs {
        match steps.last_mut() {
            Some((last, n)) if *last == d => *n += 1,
            _ => steps.push((d, 1)),
        }
    }
    let min_step = steps.iter().map(|&(d, _)| d).find(|&d| d > 0);
    let quantum = quantum_ticks(&steps, clock.raw_counter()).or(min_step);
    let t0 = clock.now();
    for _ in 0..crate::method::CLOCK_READS {
        std::hint::black_box(clock.now());
    }
    let t1 = clock.now();
    // NaN where no step was seen.
    let ns = |t: Option<u64>| t.map_or(f64::NAN, |t| clock.to_ns(t));
    ClockInfo {
        name: name.to_string(),
        why: why.to_string(),
        ns_per_tick: clock.ns_per_tick(),
        granularity_ns: ns(min_step),
        read_cost_ns: clock.to_ns(t1.wrapping_sub(t0))
            / crate::method::CLOCK_READS as f64,
        resolution_ns: ns(quantum),
    }
}

/// The clock the user may ask for with `--clock`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ClockChoice {
    /// The TSC where it is invariant, else CLOCK_MONOTONIC.
    Auto,
    /// The time-stamp counter (refused where the CPU has none).
    Tsc,
    /// CLOCK_MONOTONIC.
    Monotonic,
}

/// Chooses the harness clock: the TSC when the CPU says it is invariant (constant rate,
/// not stopped in idle states), otherwise CLOCK_MONOTONIC. Returns the clock and why.
pub fn choose(
    choice: ClockChoice,
    invariant_tsc: bool,
) -> Result<(Box<dyn Clock + Send + Sync>, String), String> {
    #[cfg(target_arch = "x86_64")]
    {
        match choice {
            ClockChoice::Tsc | ClockChoice::Auto if invariant_tsc => {
                let tsc = Tsc::calibrate();
                let why = format!(
                    "invariant TSC (constant_tsc, nonstop_tsc), {:.1} MHz calibrated \
                     against CLOCK_MONOTONIC_RAW; fenced rdtsc",
                    tsc.mhz()
                );
                return Ok((Box::new(tsc), why));
            }
            ClockChoice::Tsc => {
                return Err("--clock tsc: this CPU does not report an invariant TSC \
                     (constant_tsc and nonstop_tsc); use --clock monotonic"
                    .into())
            }
            _ => {}
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    if choice == ClockChoice::Tsc {
        return Err(
            "--clock tsc is only available on x86_64; use --clock monotonic".into(),
        );
    }
    let why = if choice == ClockChoice::Monotonic {
        "asked for with --clock monotonic".to_string()
    } else {
        "no invariant TSC: CLOCK_MONOTONIC through the vDSO".to_string()
    };
    Ok((Box::new(Monotonic), why))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fake_clock_advances_by_reads_and_on_demand() {
        let c = FakeClock::new(3);
        assert_eq!(c.now(), 0);
        assert_eq!(c.now(), 3);
        c.advance(100);
        assert_eq!(c.now(), 106);
    }

    #[test]
    fn the_quantum_is_the_divisor_of_the_steps_not_the_smallest_step() {
        // A TSC that advances 26 ticks at a time, read every 52 or 78 ticks.
        let vm = [(52, 10_000), (78, 9_800), (104, 30), (130, 3), (53, 1)];
        assert_eq!(quantum_ticks(&vm, true), Some(26));
        // The same steps on a clock that rounds: the divisor is kept when above one.
        assert_eq!(quantum_ticks(&vm, false), Some(26));
        // A TSC that counts every tick: reads 40-43 ticks apart.
        let metal = [(40, 500), (41, 9_000), (42, 8_000), (43, 300)];
        assert_eq!(quantum_ticks(&metal, true), Some(1));
        // The same steps in rounded nanoseconds: the smallest step, cautiously.
        assert_eq!(quantum_ticks(&metal, false), Some(40));
        // A step seen once or twice decides nothing; none seen often enough: None.
        assert_eq!(quantum_ticks(&[(7, 2), (0, 100)], true), None);
        // But the quantum is never coarser than a step seen: at most the smallest.
        assert_eq!(
            quantum_ticks(&[(52, 100), (78, 100), (13, 1)], true),
            Some(13)
        );
        assert_eq!(
            quantum_ticks(&[(20, 100), (31, 100), (19, 1)], false),
            Some(19)
        );
        assert_eq!(quantum_ticks(&[], true), None);
    }

    #[test]
    fn a_fake_clock_steps_by_its_read_cost() {
        let info = characterize(&FakeClock::new(3), "fake", "test");
        assert_eq!(info.granularity_ns, 3.0);
        assert_eq!(info.resolution_ns, 3.0);
        assert_eq!(info.resolution(), 3.0);
        let old = ClockInfo {
            granularity_ns: 20.0,
            ..ClockInfo::default()
        };
        assert_eq!(old.resolution(), 20.0);
    }

    #[test]
    fn monotonic_is_monotonic_and_characterized() {
        let info = characterize(&Monotonic, "monotonic", "test");
        assert!(info.granularity_ns >= 1.0 && info.granularity_ns < 1_000_000.0);
        assert!(info.resolution_ns >= 1.0 && info.resolution_ns <= info.granularity_ns);
        assert!(info.read_cost_ns > 0.0 && info.read_cost_ns < 100_000.0);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn tsc_calibration_agrees_with_monotonic() {
        let tsc = Tsc::calibrate();
        assert!(
            tsc.mhz() > 100.0 && tsc.mhz() < 10_000.0,
            "{} MHz",
            tsc.mhz()
        );
        let (a, m0) = (tsc.now(), Monotonic.now());
        std::thread::sleep(std::time::Duration::from_millis(20));
        let (b, m1) = (tsc.now(), Monotonic.now());
        let ratio = tsc.to_ns(b - a) / (m1 - m0) as f64;
        assert!(
            (0.9..1.1).contains(&ratio),
            "tsc/monotonic over 20 ms = {ratio}"
        );
    }
}
