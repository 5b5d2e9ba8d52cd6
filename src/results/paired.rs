//! A row's ratio to the reference value of its swept parameter, measured in pairs
//! (`syscost run … --reference NAME=VALUE`; see [`crate::stats::paired`]).

use serde::{Deserialize, Serialize};

/// The paired measurement of one row against its reference row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Paired {
    /// The reference, as `name=value` (`via=libc`).
    pub reference: String,
    /// This row's cost over the reference's: the trimmed mean of the rounds' median
    /// pair ratios.
    pub ratio: f64,
    /// The ratio's 95% interval, low end (where a rerun's ratio lands).
    pub ratio_low: f64,
    /// Its high end.
    pub ratio_high: f64,
    /// This row's cost less the reference's, ns per operation (the same estimate over
    /// the rounds' median pair differences).
    pub diff_ns: f64,
    /// The difference's interval, low end, ns.
    pub diff_low_ns: f64,
    /// Its high end, ns.
    pub diff_high_ns: f64,
    /// The reference's cost in the pairs, ns per operation (the median over rounds).
    pub reference_ns: f64,
    /// Rounds, each a fresh worker process measuring both sides.
    pub rounds: usize,
    /// Quartets (A B B A) over all rounds, each one pair.
    pub pairs: usize,
    /// Each round's median pair ratio, in the order measured.
    pub round_ratios: Vec<f64>,
    /// Where the two sides lived: `thread` (one thread, in turns), `threads` (two
    /// threads of one process taking turns under a handshake), `processes` (two
    /// processes forked for the round, taking turns so).
    pub sides: String,
}

impl Paired {
    /// The ratio's interval half-width relative to the ratio.
    pub fn relative_half_width(&self) -> f64 {
        (self.ratio_high - self.ratio_low) / 2.0 / self.ratio.abs()
    }

    /// `0.714× [0.711–0.717] vs via=libc`.
    pub fn text(&self) -> String {
        format!(
            "{:.3}× [{:.3}–{:.3}] vs {}",
            self.ratio, self.ratio_low, self.ratio_high, self.reference
        )
    }

    /// The line under the row: `paired: 0.714× [0.711–0.717] vs via=libc, −30.2 ns
    /// [−30.9 to −29.5] (12 rounds, 980 pairs)`.
    pub fn note(&self) -> String {
        let ns = |v: f64| {
            let t = crate::draw::units::fmt_ns(v.abs());
            if v < 0.0 {
                format!("−{t}")
            } else {
                format!("+{t}")
            }
        };
        format!(
            "paired: {}, {} [{} to {}] ({} rounds, {} pairs{})",
            self.text(),
            ns(self.diff_ns),
            ns(self.diff_low_ns),
            ns(self.diff_high_ns),
            self.rounds,
            self.pairs,
            match self.sides.as_str() {
                "threads" => ", two threads",
                "processes" => ", two processes",
                _ => "",
            }
        )
    }
}
