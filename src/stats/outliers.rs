//! Outlier labelling of timing samples: the robust modified z-score of Iglewicz &
//! Hoaglin, one flag per input sample, in input order; the caller decides whether to
//! drop, keep or report labelled samples (docs/measurements/harness.md, "The VMS window
//! retired", for the fixed window that was here before).
//!
//! Pure functions only: no I/O, no clocks, no knowledge of which benchmark
//! produced the numbers, and the input is never reordered or modified.

/// Constant of the modified z-score: `Phi^-1(0.75) = 0.6745`, so that
/// `MAD / 0.6745` estimates the standard deviation of normal data.
pub const MODIFIED_Z_SCALE: f64 = 0.6745;

/// Iglewicz & Hoaglin (1993), "How to Detect and Handle Outliers", modified
/// z-score `M_i = 0.6745 (x_i - median) / MAD` with the raw (unscaled) MAD raised to
/// at least `rel_floor × |median|` and to at least `abs_floor`; a sample is an outlier
/// when `|M_i| > threshold` (3.5 is their recommendation).
///
/// The median and MAD are computed over the finite samples; a non-finite sample
/// is always labelled. When the MAD is 0 (more than half the finite samples share
/// one value, and no floor) the score is undefined and no finite sample is labelled: a
/// coarse timer that returns the same tick most of the time must not turn every
/// other reading into an outlier. Cost O(n log n).
///
/// Timing samples of a fast operation can be so tight that the MAD is a few
/// hundredths of a percent of the median; the plain score would then label half
/// the samples for differences far below anything that matters. With a floor of
/// 0.5% and the usual threshold of 3.5, nothing within about 2.6% of the median
/// is ever an outlier. `abs_floor` is for samples that sit on a clock's steps: with
/// it at a step, a value one step from the median scores 0.67, and an outlier lies
/// more than five steps out. Floors of 0 are the plain test.
pub fn mad_outliers_floored(
    xs: &[f64],
    threshold: f64,
    rel_floor: f64,
    abs_floor: f64,
) -> Vec<bool> {
    let finite: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    let (Some(center), Some(mad)) = (super::median(&finite), super::mad(&finite)) else {
        // No finite sample at all: every (non-finite) sample is labelled.
        return vec![true; xs.len()];
    };
    let floor = abs_floor.max(0.0);
    let mad = mad.max(rel_floor * center.abs()).max(floor);
    if mad == 0.0 {
        return xs.iter().map(|x| !x.is_finite()).collect();
    }
    xs.iter()
        .map(|&x| {
            !x.is_finite() || (MODIFIED_Z_SCALE * (x - center) / mad).abs() > threshold
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modified_z_score_by_hand() {
        // sorted 10 11 12 13 14 100: median (12+13)/2 = 12.5
        // |x - 12.5| = 2.5 1.5 .5 .5 1.5 87.5 -> sorted .5 .5 1.5 1.5 2.5 87.5 -> MAD 1.5
        // M(100) = .6745*87.5/1.5 = 39.35; M(10) = .6745*2.5/1.5 = 1.124;
        // M(14) = M(11) = .6745*1.5/1.5 = .6745;
        // M(12) = M(13) = .6745*.5/1.5 = .2248.
        let xs = [12.0, 100.0, 10.0, 11.0, 13.0, 14.0];
        let (f, t) = (false, true);
        for (threshold, want) in [
            (3.5, [f, t, f, f, f, f]),
            // threshold 1.0 also catches 10 (1.124) but not 14/11 (.6745)
            (1.0, [f, t, t, f, f, f]),
            // threshold .5 catches 11 and 14 as well
            (0.5, [f, t, t, t, f, t]),
        ] {
            assert_eq!(mad_outliers_floored(&xs, threshold, 0.0, 0.0), want);
        }
    }

    #[test]
    fn zero_mad_labels_nothing_finite() {
        // 3 of 5 equal -> MAD 0: deviations 0 0 0 1 99 -> median 0.
        let xs = [5.0, 5.0, 5.0, 6.0, 104.0];
        assert_eq!(mad_outliers_floored(&xs, 3.5, 0.0, 0.0), vec![false; 5]);
        // non-finite samples are labelled and do not enter the median/MAD:
        // finite part 1 2 3 4 -> median 2.5, MAD 1; M(4) = .6745*1.5 = 1.01.
        let ys = [1.0, f64::INFINITY, 2.0, 3.0, 4.0, f64::NAN];
        assert_eq!(
            mad_outliers_floored(&ys, 1.0, 0.0, 0.0),
            vec![true, true, false, false, true, true]
        );
        assert_eq!(mad_outliers_floored(&[f64::NAN], 3.5, 0.0, 0.0), vec![true]);
        assert!(mad_outliers_floored(&[], 3.5, 0.0, 0.0).is_empty());
    }

    #[test]
    fn the_floor_keeps_tight_samples_in() {
        // Median 100, MAD 0.1: plain z of 101 is 0.6745 * 1 / 0.1 = 6.7 > 3.5.
        let xs = [99.9, 100.0, 100.0, 100.1, 101.0, 100.0, 99.9];
        assert!(mad_outliers_floored(&xs, 3.5, 0.0, 0.0)[4]);
        // Floored MAD 0.5 (0.5% of 100): z = 0.6745 * 1 / 0.5 = 1.35, kept.
        assert!(!mad_outliers_floored(&xs, 3.5, 0.005, 0.0)[4]);
        // 103 is z = 0.6745 * 3 / 0.5 = 4.05 > 3.5 even with the floor.
        let ys = [99.9, 100.0, 100.0, 100.1, 103.0, 100.0, 99.9];
        assert!(mad_outliers_floored(&ys, 3.5, 0.005, 0.0)[4]);
    }

    #[test]
    fn a_clock_step_from_the_median_is_no_outlier_with_the_step_as_floor() {
        // Samples on a 10 ns lattice: MAD 0, so the 0.5% floor (1.45 ns) decides, and
        // 280 scores 0.6745 * 10 / 1.45 = 4.65: every sample one step low is labelled.
        let xs = [
            290.0, 290.0, 280.0, 290.0, 280.0, 290.0, 300.0, 290.0, 360.0,
        ];
        let plain = mad_outliers_floored(&xs, 3.5, 0.005, 0.0);
        assert!(plain[2] && plain[4] && plain[6]);
        // With the step as floor, one step is 0.67; 360 (seven steps) is 4.7.
        let stepped = mad_outliers_floored(&xs, 3.5, 0.005, 10.0);
        assert_eq!(stepped.iter().filter(|&&o| o).count(), 1);
        assert!(stepped[8]);
        // A negative or NaN floor is no floor.
        assert_eq!(mad_outliers_floored(&xs, 3.5, 0.005, f64::NAN), plain);
        assert_eq!(mad_outliers_floored(&xs, 3.5, 0.005, -1.0), plain);
    }
}
