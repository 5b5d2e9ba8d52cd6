//! What the machine allows a result: how far its kind of work moves between runs on
//! this machine, which the result's interval adds to its rounds' own until the row has
//! a history, and which sets its target (docs/method.md, the `machine` source).

use super::probe;
use super::Profile;
use serde::{Deserialize, Serialize};

/// What the machine allows a result of its kind of work: the precision its kind can
/// have on this machine at the profile's fewest rounds ([`crate::stats::rounds::floor`],
/// drawn from the probe readings of every kept round), a relative half-width `m`.
/// It stands for how far the machine moves between runs, which a row's rounds cannot
/// see: until the row has a history its interval is its rounds' own and `m` combined
/// as two independent errors, `√(own² + m²)` (`harness::with_the_machine`). Its target
/// is the larger of the profile's and `√2·m`: the row is converged once its own
/// rounds add no more to its interval than the machine does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Held {
    /// The kind of work the result is (None: not known, nothing allowed).
    pub kind: Option<probe::WorkKind>,
    /// What the machine allows, a relative half-width (0: not known).
    pub allows: f64,
    /// The user asked for the profile's target itself (`run --target`): the interval
    /// is the rounds' own, held to that target even below what the machine allows,
    /// and a result that misses it says why.
    #[serde(default)]
    pub strict: bool,
}

impl Held {
    /// What the interval adds to the rounds' own (0 with `--target`, or when not
    /// known: NaN from a document).
    pub fn added(&self) -> f64 {
        if self.strict || !self.allows.is_finite() {
            0.0
        } else {
            self.allows
        }
    }

    /// The relative half-width a result's printed interval is held to under `p`.
    pub fn target(&self, p: &Profile) -> f64 {
        self.target_from(p.ci_target)
    }

    /// The relative half-width a result's printed interval is held to under a profile
    /// whose own target is `ci_target`: the larger of it and `√2·m`.
    pub fn target_from(&self, ci_target: f64) -> f64 {
        ci_target.max(std::f64::consts::SQRT_2 * self.added())
    }

    /// The most the rounds' own relative half-width may be for the printed interval to
    /// be within [`Held::target`]: what more rounds must bring it to.
    pub fn own_target(&self, p: &Profile) -> f64 {
        let (t, m) = (self.target(p), self.added());
        (t * t - m * m).max(0.0).sqrt()
    }
}
