//! Paired ratios: one alternative against a reference measured close together in time,
//! so that a drift common to both cancels in their ratio.
//!
//! A **pair** is one quartet of batches, reference and alternative in the order A B B A
//! (a drift linear over the quartet weighs both sides alike); it gives one ratio
//! `b / a` and one difference `b − a`. A **round** is a fresh process's quartets; its
//! figure is the median of its pairs' ratios (and, apart, of their differences), so a
//! pair is never split: resampling keeps it whole. The round figures then go through
//! the same estimate as a row's ([`super::rounds::estimate`]: the 20% trimmed mean,
//! Yuen's interval times the rerun factor), because what a reader asks of a paired
//! ratio is what a row's interval promises: where a rerun's ratio lands.
//!
//! Pure: numbers in, numbers out.

use super::middle;
use super::rounds::{estimate, RoundEstimate};

/// One round's pairs reduced to its figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundPairs {
    /// The median of the pairs' ratios `b / a`.
    pub ratio: f64,
    /// The median of the pairs' differences `b − a`, ns per operation.
    pub diff_ns: f64,
    /// The median reference cost, ns per operation.
    pub a_ns: f64,
    /// The pairs it holds.
    pub pairs: usize,
}

/// A round's figures from its pairs `(a, b)`, ns per operation each: None when no pair
/// has a positive finite reference.
pub fn round(pairs: &[(f64, f64)]) -> Option<RoundPairs> {
    let ok: Vec<(f64, f64)> = pairs
        .iter()
        .copied()
        .filter(|(a, b)| a.is_finite() && b.is_finite() && *a > 0.0)
        .collect();
    if ok.is_empty() {
        return None;
    }
    let ratios: Vec<f64> = ok.iter().map(|(a, b)| b / a).collect();
    let diffs: Vec<f64> = ok.iter().map(|(a, b)| b - a).collect();
    let refs: Vec<f64> = ok.iter().map(|(a, _)| *a).collect();
    Some(RoundPairs {
        ratio: middle(ratios),
        diff_ns: middle(diffs),
        a_ns: middle(refs),
        pairs: ok.len(),
    })
}

/// The ratio's and the difference's estimates over the rounds' figures (see the
/// module's text): None before a round.
pub fn combine(rounds: &[RoundPairs]) -> Option<(RoundEstimate, RoundEstimate)> {
    let ratios: Vec<f64> = rounds.iter().map(|r| r.ratio).collect();
    let diffs: Vec<f64> = rounds.iter().map(|r| r.diff_ns).collect();
    Some((estimate(&ratios, 0.0)?, estimate(&diffs, 0.0)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_is_the_median_of_its_pairs() {
        let r = round(&[(100.0, 70.0), (110.0, 77.0), (90.0, 90.0)]).unwrap();
        assert!((r.ratio - 0.7).abs() < 1e-12, "{r:?}");
        assert_eq!(r.pairs, 3);
        assert!((r.diff_ns + 30.0).abs() < 1e-12, "{r:?}");
        assert!(round(&[(0.0, 1.0), (f64::NAN, 1.0)]).is_none());
    }

    #[test]
    fn a_drift_common_to_both_sides_cancels() {
        // The machine slows by half over the rounds; B costs 0.8 of A throughout.
        let rounds: Vec<RoundPairs> = (0..12)
            .map(|i| {
                let a = 100.0 * (1.0 + 0.05 * i as f64);
                round(&[(a, 0.8 * a), (a * 1.01, 0.8 * a * 1.01)]).unwrap()
            })
            .collect();
        let (ratio, diff) = combine(&rounds).unwrap();
        assert!((ratio.center - 0.8).abs() < 1e-9, "{ratio:?}");
        assert!(ratio.relative_half_width() < 1e-9, "{ratio:?}");
        assert!(diff.center < 0.0);
    }

    #[test]
    fn the_interval_holds_the_centre_and_widens_with_noise() {
        let noisy: Vec<RoundPairs> = [0.98, 1.03, 1.0, 0.99, 1.02, 1.01, 0.97]
            .iter()
            .map(|&q| round(&[(100.0, 100.0 * q)]).unwrap())
            .collect();
        let (ratio, _) = combine(&noisy).unwrap();
        assert!(ratio.ci_low < 1.0 && 1.0 < ratio.ci_high, "{ratio:?}");
        assert!(ratio.relative_half_width() > 0.005, "{ratio:?}");
        assert!(combine(&[]).is_none());
    }
}
