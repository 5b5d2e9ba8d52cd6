//! What the machine allows a result: the precision of its kind of work on this machine,
//! which its target is held to, and, until the row has a history, the least half-width
//! of its interval (docs/method.md, the `machine` source).

use super::probe;
use super::Profile;
use serde::{Deserialize, Serialize};

/// What the machine allows a result of its kind of work: the precision its kind can
/// have on this machine at the profile's rounds ([`crate::stats::rounds::floor`], drawn
/// from the probe readings of every kept round). The result's target is the larger of
/// the profile's and this: a target below it would need far more rounds than the
/// profile's, and the figure would still move by that much in a run at another time.
/// Until the row has a history it is also the least half-width of its interval
/// (`harness::at_least_what_the_machine_allows`): its rounds cannot see how far the
/// machine moves between runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Held {
    /// The kind of work the result is (None: not known, nothing allowed).
    pub kind: Option<probe::WorkKind>,
    /// What the machine allows, a relative half-width (0: not known).
    pub allows: f64,
    /// The user asked for the profile's target itself (`run --target`): it is tried
    /// even below what the machine allows, and a result that misses it says why.
    #[serde(default)]
    pub strict: bool,
}

impl Held {
    /// What the machine allows, as a number to compare (0 when not known: NaN from a
    /// document).
    pub fn machine(&self) -> f64 {
        if self.allows.is_finite() {
            self.allows
        } else {
            0.0
        }
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
