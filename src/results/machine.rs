//! The machine's record over a run: its canary's states, its floors per kind of work,
//! and its speed beside its earlier runs.

use crate::method;
use crate::stats::rounds::State;
use serde::{Deserialize, Serialize};

/// The machine's states over a run: every canary reading (ns per getpid, timed before
/// each round of each benchmark and between rounds) grouped into levels.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineStates {
    /// How many canary readings were taken.
    pub readings: usize,
    /// The readings' spread, (max − min) / median.
    pub spread: f64,
    /// Groups of readings more than 3% apart; more than one means the machine ran at
    /// several speeds during the run.
    pub states: Vec<State>,
    /// Whether the machine was too unsteady for the profile's CI target (the
    /// canary's spread exceeded it).
    pub unsteady: bool,
    /// This run's canary beside the same machine's earlier runs in the history, under
    /// the same conditions (absent without two of them, or without a history).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub past: Option<PastMachine>,
    /// How much the machine moved between rounds for each kind of work, from its
    /// probes, and the floor that sets for the results of that kind (empty when the
    /// run read no probes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub floors: Vec<Floor>,
}

/// The machine's floor for one kind of work over a run (see
/// [`crate::stats::rounds::floor`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Floor {
    /// The kind of work.
    pub kind: crate::harness::probe::WorkKind,
    /// What its probe times.
    pub probe: String,
    /// Probe readings taken: one before each round in its worker, a few first in probes'.
    pub readings: usize,
    /// Their median, ns per operation.
    pub median_ns: f64,
    /// Their spread, (p90 − p10) / median, %: how much the machine moved between
    /// rounds and processes.
    pub spread_pct: f64,
    /// What the machine allows this kind of work, ±%: a figure moving as the probe does,
    /// at the profile's fewest rounds. Until a row has a history, its interval adds this
    /// to its rounds' own (√(a² + b²)), held to √2 times it at least (docs/method.md §6).
    pub floor_pct: f64,
    /// The rounds the floor is taken at.
    pub rounds: usize,
    /// How far this kind's probe moved within this run alone, ±% (what `floor_pct` was
    /// before the history's figure below was known; absent in older documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within_pct: Option<f64>,
    /// How far this kind's probe moved between the machine's recent runs, ±%
    /// (`t(0.975, K−1)·√2·s` over their probe medians' logs), from three such runs;
    /// `floor_pct` is the larger of this and `within_pct` (docs/method.md §6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub between_pct: Option<f64>,
    /// The runs `between_pct` is taken over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub past_runs: Option<usize>,
}

impl MachineStates {
    /// The run's base state as its canary read it, ns per getpid: the median of the
    /// state that holds the readings' [`method::BASE_QUANTILE`]. It is the state the rows'
    /// figures are measured in (rounds outside it are measured again), so it is what
    /// is set beside earlier runs: "the machine ran 10% slower" says that the rows
    /// moved by about that much. None without readings.
    pub fn base_ns(&self) -> Option<f64> {
        let mut states: Vec<&State> = self
            .states
            .iter()
            .filter(|x| x.median_ns.is_finite() && x.median_ns > 0.0)
            .collect();
        states.sort_by(|a, b| a.median_ns.total_cmp(&b.median_ns));
        let total: f64 = states.iter().map(|x| x.share).sum();
        let mut below = 0.0;
        for x in &states {
            below += x.share;
            if below >= method::BASE_QUANTILE * total {
                return Some(x.median_ns);
            }
        }
        None
    }
}

/// A run's canary beside the earlier runs of the same machine: whether the machine
/// itself ran at another speed, which moves every figure of the run with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PastMachine {
    /// How many earlier runs (the newest, at most ten).
    pub runs: usize,
    /// Their base states' median (the canary's, [`MachineStates::base_ns`]), ns per getpid.
    pub median_ns: f64,
    /// The lowest of their base states (canary), ns.
    pub low_ns: f64,
    /// The highest, ns.
    pub high_ns: f64,
    /// This run's base state over their median.
    pub ratio: f64,
}

impl PastMachine {
    /// A ratio this far from 1 says the machine ran at another speed: the threshold
    /// `compare` takes for noise by default.
    pub const DIFFERS: f64 = 0.05;

    /// Whether this run's machine ran at another speed than in the earlier runs.
    pub fn differs(&self) -> bool {
        (self.ratio - 1.0).abs() > Self::DIFFERS
    }
}
