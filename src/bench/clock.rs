//! `clock.*`: the cost of reading each clock a program can use (1999 §2), and the
//! clock table that `syscost clocks` surveys.

use super::facts::*;
use super::{Bench, Params, Prepared};
use crate::error::BenchError;
use crate::os::sys;
use std::hint::black_box;

/// A clock a program can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockKind {
    /// `rdtsc` (unfenced).
    Rdtsc,
    /// `rdtscp`.
    Rdtscp,
    /// `clock_gettime` with a POSIX clock id.
    Posix(libc::clockid_t),
    /// `gettimeofday` (µs).
    Gettimeofday,
    /// `time` (s).
    Time,
}

/// One row of the clock table.
#[derive(Debug, Clone, Copy)]
pub struct ClockEntry {
    /// The benchmark name, `clock.<short>`.
    pub bench: &'static str,
    /// The clock as a programmer writes it.
    pub label: &'static str,
    /// The clock.
    pub kind: ClockKind,
}

/// A row of the clock table.
const fn clock(bench: &'static str, label: &'static str, kind: ClockKind) -> ClockEntry {
    ClockEntry { bench, label, kind }
}

/// A row of the clock table for a POSIX clock.
const fn posix(
    bench: &'static str,
    label: &'static str,
    id: libc::clockid_t,
) -> ClockEntry {
    clock(bench, label, ClockKind::Posix(id))
}

/// Every clock, in survey order.
pub const CLOCKS: &[ClockEntry] = &[
    clock("clock.tsc", "rdtsc", ClockKind::Rdtsc),
    clock("clock.rdtscp", "rdtscp", ClockKind::Rdtscp),
    posix("clock.monotonic", "CLOCK_MONOTONIC", libc::CLOCK_MONOTONIC),
    posix(
        "clock.monotonic_raw",
        "CLOCK_MONOTONIC_RAW",
        libc::CLOCK_MONOTONIC_RAW,
    ),
    posix(
        "clock.monotonic_coarse",
        "CLOCK_MONOTONIC_COARSE",
        libc::CLOCK_MONOTONIC_COARSE,
    ),
    posix("clock.realtime", "CLOCK_REALTIME", libc::CLOCK_REALTIME),
    posix(
        "clock.realtime_coarse",
        "CLOCK_REALTIME_COARSE",
        libc::CLOCK_REALTIME_COARSE,
    ),
    posix("clock.boottime", "CLOCK_BOOTTIME", libc::CLOCK_BOOTTIME),
    posix(
        "clock.process_cputime",
        "CLOCK_PROCESS_CPUTIME_ID",
        libc::CLOCK_PROCESS_CPUTIME_ID,
    ),
    posix(
        "clock.thread_cputime",
        "CLOCK_THREAD_CPUTIME_ID",
        libc::CLOCK_THREAD_CPUTIME_ID,
    ),
    clock(
        "clock.gettimeofday",
        "gettimeofday",
        ClockKind::Gettimeofday,
    ),
    clock("clock.time", "time", ClockKind::Time),
];

impl ClockKind {
    /// Whether this machine has the clock.
    pub fn available(self) -> bool {
        match self {
            ClockKind::Rdtsc | ClockKind::Rdtscp => cfg!(target_arch = "x86_64"),
            ClockKind::Posix(id) => sys::clock_getres(id).is_some(),
            ClockKind::Gettimeofday | ClockKind::Time => true,
        }
    }

    /// The resolution the kernel claims (`clock_getres`), in ns; `None` for the TSC.
    pub fn claimed_resolution_ns(self) -> Option<f64> {
        match self {
            ClockKind::Posix(id) => sys::clock_getres(id).map(|t| sys::ts_ns(&t) as f64),
            ClockKind::Gettimeofday => Some(1000.0),
            ClockKind::Time => Some(1e9),
            ClockKind::Rdtsc | ClockKind::Rdtscp => None,
        }
    }

    /// Reads the clock in its own units (ticks, ns, µs or s).
    #[inline(always)]
    pub fn read(self) -> u64 {
        match self {
            #[cfg(target_arch = "x86_64")]
            ClockKind::Rdtsc => sys::rdtsc(),
            #[cfg(target_arch = "x86_64")]
            ClockKind::Rdtscp => sys::rdtscp(),
            #[cfg(not(target_arch = "x86_64"))]
            ClockKind::Rdtsc | ClockKind::Rdtscp => 0,
            ClockKind::Posix(id) => sys::ts_ns(&sys::clock_gettime(id)),
            ClockKind::Gettimeofday => {
                let mut tv = libc::timeval {
                    tv_sec: 0,
                    tv_usec: 0,
                };
                sys::gettimeofday(&mut tv);
                tv.tv_sec as u64 * 1_000_000 + tv.tv_usec as u64
            }
            ClockKind::Time => sys::time() as u64,
        }
    }

    /// Nanoseconds per unit of [`read`](Self::read), given the TSC's ns per tick.
    pub fn ns_per_unit(self, tsc_ns_per_tick: f64) -> f64 {
        match self {
            ClockKind::Rdtsc | ClockKind::Rdtscp => tsc_ns_per_tick,
            ClockKind::Posix(_) => 1.0,
            ClockKind::Gettimeofday => 1000.0,
            ClockKind::Time => 1e9,
        }
    }
}

/// The benchmark for one clock.
pub struct ClockRead(pub &'static ClockEntry);

impl Bench for ClockRead {
    fn name(&self) -> &'static str {
        self.0.bench
    }
    fn about(&self) -> &'static str {
        match self.0.kind {
            ClockKind::Rdtsc => "read the time-stamp counter with rdtsc",
            ClockKind::Rdtscp => "read the time-stamp counter with rdtscp",
            ClockKind::Posix(_) => "clock_gettime of this clock through the C library",
            ClockKind::Gettimeofday => "gettimeofday through the C library",
            ClockKind::Time => "time(NULL) through the C library",
        }
    }
    fn origin(&self) -> &'static str {
        "manea1999 §2 (choosing a time machine)"
    }
    fn facts(&self) -> Facts {
        let enters = match self.0.kind {
            ClockKind::Rdtsc => Enters::Not("the rdtsc instruction"),
            ClockKind::Rdtscp => Enters::Not("the rdtscp instruction"),
            ClockKind::Posix(
                libc::CLOCK_PROCESS_CPUTIME_ID | libc::CLOCK_THREAD_CPUTIME_ID,
            ) => {
                // The C library sends the CPU-time clocks to the kernel.
                return Facts {
                    enters: fixed(
                        Libc,
                        "clock_gettime: the vDSO reads no CPU-time clock and makes the \
                         call from its own function",
                    ),
                    ..SYSCALL
                };
            }
            ClockKind::Posix(_) => fixed(Vdso, "clock_gettime"),
            ClockKind::Gettimeofday => fixed(Vdso, "gettimeofday"),
            ClockKind::Time => fixed(Vdso, "time"),
        };
        Facts { enters, ..USER }
    }
    fn prepare(&self, _: &Params, _: &super::RunContext) -> Result<Prepared, BenchError> {
        let kind = self.0.kind;
        if !kind.available() {
            return Err(BenchError::Skip(format!(
                "{} is not available here",
                self.0.label
            )));
        }
        Ok(Prepared::new(super::body(move || {
            black_box(kind.read());
            Ok(())
        }))
        .op("read"))
    }
}

/// The family's benchmarks.
pub const BENCHES: &[&dyn Bench] = &[
    &ClockRead(&CLOCKS[0]),
    &ClockRead(&CLOCKS[1]),
    &ClockRead(&CLOCKS[2]),
    &ClockRead(&CLOCKS[3]),
    &ClockRead(&CLOCKS[4]),
    &ClockRead(&CLOCKS[5]),
    &ClockRead(&CLOCKS[6]),
    &ClockRead(&CLOCKS[7]),
    &ClockRead(&CLOCKS[8]),
    &ClockRead(&CLOCKS[9]),
    &ClockRead(&CLOCKS[10]),
    &ClockRead(&CLOCKS[11]),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_clock_has_a_benchmark_in_order() {
        assert_eq!(BENCHES.len(), CLOCKS.len());
        for (b, c) in BENCHES.iter().zip(CLOCKS) {
            assert_eq!(b.name(), c.bench);
        }
    }

    #[test]
    fn posix_clocks_read_sensible_values() {
        let m = ClockKind::Posix(libc::CLOCK_MONOTONIC);
        let (a, b) = (m.read(), m.read());
        assert!(b >= a);
        assert_eq!(m.claimed_resolution_ns(), Some(1.0));
        let secs = ClockKind::Time.read();
        let usecs = ClockKind::Gettimeofday.read() / 1_000_000;
        assert!(usecs.abs_diff(secs) <= 1);
    }
}
