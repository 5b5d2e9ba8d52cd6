//! The figures of the 1999 study of operating-system costs on SunOS 5.6 (seed 003),
//! typed in from the paper, with the paper's reading of each, in our words. All times
//! are nanoseconds, averages over many iterations with the timer's own overhead
//! subtracted.

/// A trivial system call of §3.
#[derive(Debug, Clone, Copy)]
pub struct Call {
    /// The call as the paper names it.
    pub call: &'static str,
    /// Today's benchmark.
    pub bench: &'static str,
    /// Average ns over 1,000,000 iterations.
    pub ns: f64,
}

/// §3: the trivial calls, and `times()` for comparison.
pub const CALLS: &[Call] = &[
    Call {
        call: "getpid()",
        bench: "syscall.getpid",
        ns: 1_888.95,
    },
    Call {
        call: "getppid()",
        bench: "syscall.getppid",
        ns: 1_867.89,
    },
    Call {
        call: "uname()",
        bench: "syscall.uname",
        ns: 3_980.82,
    },
    Call {
        call: "times()",
        bench: "syscall.times",
        ns: 9_667.44,
    },
];

/// The paper's reading of §3.
pub const CALLS_READING: &str =
    "getpid and getppid cost the same: both only fetch a value the kernel \
     keeps; uname pays for filling its structure, times for reading the clock and \
     converting it to ticks";

/// A round trip of §4.
#[derive(Debug, Clone, Copy)]
pub struct RoundTrip {
    /// The mechanism as `ctx.pingpong` names it.
    pub mechanism: &'static str,
    /// Average round trip, ns (100,000 iterations).
    pub round_trip_ns: f64,
    /// The paper's switch estimate: half the round trip.
    pub switch_ns: f64,
}

/// §4: signals against pipes between two processes.
pub const ROUND_TRIPS: &[RoundTrip] = &[
    RoundTrip {
        mechanism: "signal",
        round_trip_ns: 85_644.9,
        switch_ns: 42_822.45,
    },
    RoundTrip {
        mechanism: "pipe",
        round_trip_ns: 44_505.5,
        switch_ns: 22_252.75,
    },
];

/// The paper's reading of §4.
pub const ROUND_TRIPS_READING: &str =
    "both take two switches per round trip; signals also update the pending \
     queues and run a handler, so they cost about twice as much as pipes";

/// §5: the zero-filled page fault, ns per 8 KiB SunOS page (an 8 MB region, 1,024,000
/// faults averaged).
pub const ZERO_FAULT_NS: f64 = 73_136.77;

/// The SunOS page size of §5, bytes.
pub const SUNOS_PAGE: u64 = 8192;

/// The paper's reading of §5.
pub const ZERO_FAULT_READING: &str =
    "clearing fresh pages is expensive: allocate large memory once at start-up, or \
     have a helper thread touch it before it is needed";

/// §6: the file-read conclusions (figures 1 and 2): a 128 MB file, buffers of 8 to
/// 65536 bytes, a cold cache.
pub const READ_SIZES: [u64; 2] = [8, 65_536];

/// What the paper found at small and at large buffers.
pub const READ_WINNERS: [(&str, &str); 2] = [
    (
        "mmap",
        "figure 2: at small buffers mmap was fastest",
    ),
    (
        "stdio",
        "figure 1: at large buffers fread beat read, and mmap fell behind as each buffer spanned more 8 KiB pages",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_switch_estimate_is_half_the_round_trip() {
        for r in ROUND_TRIPS {
            assert!((r.round_trip_ns / 2.0 - r.switch_ns).abs() < 0.01, "{r:?}");
        }
        assert!(ROUND_TRIPS[0].round_trip_ns > 1.9 * ROUND_TRIPS[1].round_trip_ns);
    }

    #[test]
    fn every_call_names_a_catalogue_benchmark() {
        for c in CALLS {
            assert!(crate::bench::find(c.bench).is_some(), "{}", c.bench);
        }
        assert!(CALLS[3].ns > 5.0 * CALLS[0].ns, "times is about 5x getpid");
    }
}
