//! Measurement profiles: how many rounds, how long each round samples, how long to warm
//! up, and how tight the round-level confidence interval must be.
//!
//! A benchmark is measured in rounds separated in time (in a run of several, the
//! rounds of all of them are interleaved in a shuffled order). Each round is a short
//! window of samples; the figure and its interval come from the rounds (see
//! [`crate::stats::rounds`]).

use serde::{Deserialize, Serialize};

/// A measurement profile. Deserialised (as a worker receives it), its name is looked
/// up again ("custom" when it names no profile), the numbers are as sent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// The profile's name.
    #[serde(deserialize_with = "known_name")]
    pub name: Name,
    /// Warm-up before a benchmark's first round (calibration included), in ns.
    pub warmup_ns: u64,
    /// Warm-up before each later round, in ns (the benchmark is set up anew).
    pub round_warmup_ns: u64,
    /// Sampling time of one round, in ns.
    pub round_ns: u64,
    /// Samples per round at least (even past `round_ns`).
    pub round_min_samples: usize,
    /// Samples per round at most. Batches last at least `min_batch_ns`, so only a
    /// benchmark timed one operation at a time (a batch of 1) reaches it: a round
    /// median of 5,000 samples is known to a fraction of a percent, and a worker that
    /// kept 50,000 a round held 40 MB of samples by its eleventh round.
    pub round_max_samples: usize,
    /// Rounds at least: the interval needs several to say anything.
    pub min_rounds: usize,
    /// Rounds at most: a benchmark whose rounds still disagree stops here, unconverged.
    pub max_rounds: usize,
    /// The minimum rounds of a run are spread over at least this much time, in ns, and
    /// later rounds follow at the same pace: a run of few benchmarks waits between
    /// rounds (timing the canary meanwhile).
    pub span_ns: u64,
    /// The target relative half-width of the round-level 95% CI.
    pub ci_target: f64,
    /// The shortest batch, in ns (batches also last ≥ 1000× the clock's granularity).
    /// Rounds, not samples, carry the interval, so batches can be long: fewer samples
    /// held in memory keep the process small, and so its forks (rings, partners) cheap.
    pub min_batch_ns: u64,
    /// Empty-loop batches timed for the overhead.
    pub overhead_samples: usize,
    /// The time budget of a whole run (`syscost run`), in ns: past its minimum rounds,
    /// a benchmark that has not converged gets more rounds only while the run is within
    /// it, the ones nearest their target first (0: no rounds past `max_rounds`).
    pub budget_ns: u64,
    /// Rounds at most within the budget (at least `max_rounds`).
    pub budget_max_rounds: usize,
}

/// A profile's name, spelt so that serde does not borrow it from the message.
type Name = &'static str;

/// A profile's name as it arrives: the known profile's, or "custom".
fn known_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    let name = String::deserialize(d)?;
    Ok(Profile::by_name(&name).map_or("custom", |p| p.name))
}

const MS: u64 = 1_000_000;

impl Profile {
    /// For tests: two short rounds, a few milliseconds.
    pub const SMOKE: Profile = Profile {
        name: "smoke",
        warmup_ns: MS,
        round_warmup_ns: 0,
        round_ns: 3 * MS,
        round_min_samples: 3,
        round_max_samples: 200,
        min_rounds: 2,
        max_rounds: 2,
        span_ns: 0,
        ci_target: 0.05,
        min_batch_ns: 2_000,
        overhead_samples: 5,
        budget_ns: 0,
        budget_max_rounds: 2,
    };
    /// A fast look: three or four short rounds.
    pub const QUICK: Profile = Profile {
        name: "quick",
        warmup_ns: 5 * MS,
        round_warmup_ns: MS,
        round_ns: 6 * MS,
        round_min_samples: 5,
        round_max_samples: 5_000,
        min_rounds: 3,
        max_rounds: 4,
        span_ns: 1_000 * MS,
        ci_target: 0.02,
        min_batch_ns: 30_000,
        overhead_samples: 21,
        budget_ns: 17_000 * MS,
        budget_max_rounds: 8,
    };
    /// The default: eight rounds spread over at least a second (in a whole run, up to
    /// 93 within its budget), ±0.5% or √2 times what the machine allows the result's
    /// kind of work, whichever is larger. Rounds are short: what widens the interval
    /// is the machine's drift between rounds, not the samples within one, so the
    /// budget buys more precision as more rounds than as longer ones. The target is
    /// tight because this machine's figures repeat closely (ten runs of a pipe round
    /// trip: medians within 0.6%); where the machine moves more, its floor sets it.
    /// Until 2026-11-28 the span was 2 s and the fewest rounds five (docs/measurements/movement.md,
    /// "The machine's movement added" and "Eight rounds at the least").
    pub const STANDARD: Profile = Profile {
        name: "standard",
        warmup_ns: 20 * MS,
        round_warmup_ns: 2 * MS,
        round_ns: 10 * MS,
        round_min_samples: 10,
        round_max_samples: 5_000,
        min_rounds: 8,
        max_rounds: 8,
        span_ns: 1_000 * MS,
        ci_target: 0.005,
        min_batch_ns: 50_000,
        overhead_samples: 51,
        budget_ns: 110_000 * MS,
        budget_max_rounds: 93,
    };
    /// Long runs: ten to thirty rounds over at least twenty seconds (in a whole run, up
    /// to 93 within its budget, the standard profile's cap: it once had 45, fewer).
    pub const THOROUGH: Profile = Profile {
        name: "thorough",
        warmup_ns: 100 * MS,
        round_warmup_ns: 10 * MS,
        round_ns: 100 * MS,
        round_min_samples: 20,
        round_max_samples: 10_000,
        min_rounds: 10,
        max_rounds: 30,
        span_ns: 20_000 * MS,
        ci_target: 0.005,
        min_batch_ns: 100_000,
        overhead_samples: 101,
        budget_ns: 900_000 * MS,
        budget_max_rounds: 93,
    };

    /// Whether the interval is looked at after `rounds` rounds, whose cap is `cap`:
    /// at the minimum, then each time the count has grown by half (5, 8, 12, 18, 27,
    /// 41, 62, 93 for the standard profile), and at the cap. So a run that keeps
    /// giving rounds to a benchmark looks a few times, not after every round (each
    /// look is a chance to stop on an interval that happens to be narrow).
    pub fn looks_at(&self, rounds: usize, cap: usize) -> bool {
        if rounds < self.min_rounds {
            return false;
        }
        if rounds >= cap {
            return true;
        }
        let mut look = self.min_rounds.max(1);
        while look < rounds {
            look = (look * crate::method::LOOK_GROWTH_HALVES)
                .div_ceil(2)
                .max(look + 1);
        }
        look == rounds
    }

    /// The first look at or after `rounds` rounds (see [`Profile::looks_at`]).
    pub fn next_look(&self, rounds: usize, cap: usize) -> usize {
        (rounds..=cap)
            .find(|&r| self.looks_at(r, cap))
            .unwrap_or(cap)
    }

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
