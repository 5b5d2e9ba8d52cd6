//! What the machine allows a result: the floor and the reach of its kind of work that
//! its target is held to. They set the target only; the interval is the row's own.

use super::probe;
use super::Profile;
use serde::{Deserialize, Serialize};

/// What the machine allows a result of its kind of work: the precision its kind can
/// have on this machine at the profile's rounds ([`crate::stats::rounds::floor`]), in
/// two readings. The result's target is the larger of the profile's, the `floor` and
/// the `reach`: a target below them would need far more rounds than the profile's,
/// and the figure would still move by that much in a run at another time. They never
/// widen the row's interval: a row whose rounds agree says so.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Held {
    /// The kind of work the result is (None: not known, no floor).
    pub kind: Option<probe::WorkKind>,
    /// The floor, a relative half-width (0: none known): from the kind's probe
    /// readings in the machine's base state, how far a rerun lands even when a run's
    /// rounds agree.
    pub floor: f64,
    /// The reach, a relative half-width (0: none known): the same taken over every
    /// kept round's probe reading, the slow states the canaries let through included,
    /// as the rounds' own figures are: the precision rounds of this kind can reach on
    /// this machine now.
    #[serde(default)]
    pub reach: f64,
    /// The user asked for the profile's target itself (`run --target`): it is tried
    /// even below the floor, and a result that misses it says why.
    #[serde(default)]
    pub strict: bool,
}

/// A floor or reach as a number to compare: 0 when it is not known (NaN from a document).
fn known(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

impl Held {
    /// The larger of the floor and the reach (0 when neither is known): the precision
    /// the machine allows.
    pub fn machine(&self) -> f64 {
        known(self.floor).max(known(self.reach))
    }

    /// The relative half-width a result is held to under `p`.
    pub fn target(&self, p: &Profile) -> f64 {
        if self.strict {
            p.ci_target
        } else {
            p.ci_target.max(self.machine())
        }
    }
}
