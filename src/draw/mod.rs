//! The drawing toolkit every renderer shares: numbers with their units ([`units`]),
//! text laid out within a terminal's width ([`text`]) and SVG plots ([`svg`]). It knows
//! nothing of benchmarks or results, so the renderers of every layer above (the run's
//! report, a comparison, an explanation, the fleet) can use it without using each other.

pub mod svg;
pub mod text;
pub mod units;
