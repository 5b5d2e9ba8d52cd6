//! Figures derived from a run's results once its benchmarks are measured: the fitted
//! sweeps ([`sweep`]), Sloan's ring tables ([`ring`]) and the scaling tables of copies
//! ([`scaling`]). Pure functions of the results; the run keeps what they return
//! ([`fill`]), and the renderers, the comparison and the history read it there.

pub mod ring;
pub mod scaling;
pub mod sweep;

use crate::results::Run;

/// Fills the run's derived tables from its results.
pub fn fill(run: &mut Run) {
    run.sweeps = sweep::fits(&run.results);
    run.rings = ring::tables(&run.results);
    run.scaling = scaling::tables(&run.results);
}
