//! Measurement profiles: how long to warm up, how many samples, how long at most, and
//! how tight the median's confidence interval must be.

use serde::Serialize;

/// A measurement profile.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Profile {
    /// The profile's name.
    pub name: &'static str,
    /// Warm-up (calibration included), in ns.
    pub warmup_ns: u64,
    /// Samples to take at least.
    pub min_samples: usize,
    /// Samples to take at most.
    pub max_samples: usize,
    /// Sampling time at least, in ns.
    pub min_time_ns: u64,
    /// Sampling time at most (the budget), in ns.
    pub max_time_ns: u64,
    /// The target relative half-width of the 95% CI of the median.
    pub ci_target: f64,
    /// The shortest batch, in ns (batches also last ≥ 1000× the clock's granularity).
    pub min_batch_ns: u64,
    /// Empty-loop batches timed for the overhead.
    pub overhead_samples: usize,
}

const MS: u64 = 1_000_000;

impl Profile {
    /// For tests: a few samples, a few milliseconds.
    pub const SMOKE: Profile = Profile {
        name: "smoke",
        warmup_ns: MS,
        min_samples: 5,
        max_samples: 200,
        min_time_ns: 0,
        max_time_ns: 20 * MS,
        ci_target: 0.05,
        min_batch_ns: 2_000,
        overhead_samples: 5,
    };
    /// A fast look: under half a second per benchmark.
    pub const QUICK: Profile = Profile {
        name: "quick",
        warmup_ns: 20 * MS,
        min_samples: 30,
        max_samples: 50_000,
        min_time_ns: 30 * MS,
        max_time_ns: 300 * MS,
        ci_target: 0.02,
        min_batch_ns: 10_000,
        overhead_samples: 21,
    };
    /// The default.
    pub const STANDARD: Profile = Profile {
        name: "standard",
        warmup_ns: 50 * MS,
        min_samples: 100,
        max_samples: 200_000,
        min_time_ns: 150 * MS,
        max_time_ns: 2_000 * MS,
        ci_target: 0.01,
        min_batch_ns: 10_000,
        overhead_samples: 51,
    };
    /// Long runs: tighter CI, more time, levels over seconds become visible.
    pub const THOROUGH: Profile = Profile {
        name: "thorough",
        warmup_ns: 200 * MS,
        min_samples: 500,
        max_samples: 1_000_000,
        min_time_ns: 2_000 * MS,
        max_time_ns: 10_000 * MS,
        ci_target: 0.005,
        min_batch_ns: 10_000,
        overhead_samples: 101,
    };

    /// Every profile, for `--profile`.
    pub const ALL: [Profile; 4] = [
        Profile::SMOKE,
        Profile::QUICK,
        Profile::STANDARD,
        Profile::THOROUGH,
    ];

    /// The profile called `name`.
    pub fn by_name(name: &str) -> Option<Profile> {
        Profile::ALL.into_iter().find(|p| p.name == name)
    }
}
