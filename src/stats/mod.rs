//! Descriptive statistics for timing samples: the [`Summary`] of one sample
//! (mean, spread, type-7 percentiles, MAD and a distribution-free confidence
//! interval of the median), plus the sub-modules for outliers, rounds,
//! multi-modality and curve fits.
//!
//! Everything here is a pure function of its arguments. This module must not do
//! I/O, read clocks, spawn threads, or know about any particular benchmark: it
//! turns numbers into numbers and nothing else.

pub mod fit;
pub mod modes;
pub mod outliers;
pub mod paired;
pub mod rounds;
pub mod usl;

pub use modes::{modes, Mode};

use serde::{Deserialize, Serialize};

/// Descriptive statistics of one sample.
///
/// Invariants (for a sample built by [`summarize`]): `n >= 1`, every field is
/// finite, `min <= p1 <= p5 <= p25 <= median <= p75 <= p95 <= p99 <= max`,
/// `ci_low <= median <= ci_high`, `sd >= 0`, `mad >= 0`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (divisor `n - 1`); 0 when `n == 1`.
    pub sd: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
    /// Median (type-7 50th percentile, i.e. the usual median).
    pub median: f64,
    /// 1st percentile (type 7).
    pub p1: f64,
    /// 5th percentile (type 7).
    pub p5: f64,
    /// 25th percentile (type 7).
    pub p25: f64,
    /// 75th percentile (type 7).
    pub p75: f64,
    /// 95th percentile (type 7).
    pub p95: f64,
    /// 99th percentile (type 7).
    pub p99: f64,
    /// Raw median absolute deviation from the median (NOT scaled by 1.4826).
    pub mad: f64,
    /// Coefficient of variation `sd / mean`; 0 when `mean == 0`.
    pub cv: f64,
    /// Lower end of the 95% order-statistic confidence interval of the median.
    pub ci_low: f64,
    /// Upper end of the 95% order-statistic confidence interval of the median.
    pub ci_high: f64,
}

/// Summarizes a sample. Returns `None` for an empty sample or when any value is
/// not finite (NaN or infinite).
///
/// Cost: one copy and one sort, O(n log n).
pub fn summarize(xs: &[f64]) -> Option<Summary> {
    let sorted = sorted_finite(xs)?;
    let n = sorted.len();
    let mean = sorted.iter().sum::<f64>() / n as f64;
    let sd = sample_sd(&sorted);
    let median = percentile_sorted(&sorted, 50.0);
    let (ci_low, ci_high) = median_ci(&sorted, crate::method::SUMMARY_CI_CONFIDENCE);
    Some(Summary {
        n,
        mean,
        sd,
        min: sorted[0],
        max: sorted[n - 1],
        median,
        p1: percentile_sorted(&sorted, 1.0),
        p5: percentile_sorted(&sorted, 5.0),
        p25: percentile_sorted(&sorted, 25.0),
        p75: percentile_sorted(&sorted, 75.0),
        p95: percentile_sorted(&sorted, 95.0),
        p99: percentile_sorted(&sorted, 99.0),
        mad: mad_about(&sorted, median),
        cv: if mean == 0.0 { 0.0 } else { sd / mean },
        ci_low,
        ci_high,
    })
}

/// Percentile `p` (in percent, clamped to `[0, 100]`) of an ascending slice by
/// linear interpolation between order statistics: Hyndman & Fan (1996),
/// "Sample quantiles in statistical packages", definition 7 (the default of R
/// and NumPy). With `h = (n - 1) p / 100`, the result is
/// `x[floor(h)] + (h - floor(h)) (x[floor(h) + 1] - x[floor(h)])` (0-based).
///
/// The slice must be non-empty and sorted ascending; both are checked only by
/// `debug_assert!`. In release builds it never panics: an empty slice or a NaN
/// `p` gives NaN, and an unsorted slice gives an unspecified value.
pub fn percentile_sorted(sorted: &[f64], p: f64) -> f64 {
    debug_assert!(!sorted.is_empty(), "percentile of an empty sample");
    debug_assert!(
        sorted.windows(2).all(|w| w[0] <= w[1]),
        "percentile_sorted needs ascending input"
    );
    if sorted.is_empty() || p.is_nan() {
        return f64::NAN;
    }
    let h = (sorted.len() - 1) as f64 * p.clamp(0.0, 100.0) / 100.0;
    let lo = h.floor() as usize;
    match sorted.get(lo + 1) {
        Some(&next) => sorted[lo] + (h - lo as f64) * (next - sorted[lo]),
        None => sorted[lo],
    }
}

/// Median of a sample (mean of the two middle values for even `n`). `None` for
/// an empty sample or when any value is not finite.
pub fn median(xs: &[f64]) -> Option<f64> {
    sorted_finite(xs).map(|s| percentile_sorted(&s, 50.0))
}

/// The median of values that fall on a lattice (a clock's step: an operation timed one
/// at a time by a clock that advances in 10 ns steps reads 210, 220 or 230 ns), read as
/// grouped data: each value stands for the step around it, and the median is
/// interpolated within the run of values equal to the plain median, by how far into
/// that run the middle rank falls. So a round whose samples are 60% 220 ns and 40%
/// 210 ns gives 216.7 ns, and one with 40% and 60% gives 213.3 ns, where the plain
/// median jumps between 210 and 220 with the slightest shift. Values without ties at
/// the median give the plain median. The step is the smallest gap between distinct
/// values of the middle half. `None` as [`median`].
pub fn median_grouped(xs: &[f64]) -> Option<f64> {
    let s = sorted_finite(xs)?;
    let m = percentile_sorted(&s, 50.0);
    let lo = s.partition_point(|&x| x < m);
    let hi = s.partition_point(|&x| x <= m);
    let ties = hi - lo;
    if ties < 2 {
        return Some(m);
    }
    let n = s.len();
    let (q1, q3) = (n / 4, (3 * n / 4).min(n - 1));
    let step = s[q1..=q3]
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|&d| d > 0.0)
        .fold(f64::INFINITY, f64::min);
    let step = if step.is_finite() {
        step
    } else {
        // The middle half is one value: the nearest distinct neighbour sets the step.
        let below = lo.checked_sub(1).map(|i| m - s[i]);
        let above = s.get(hi).map(|&x| x - m);
        match (below, above) {
            (Some(b), Some(a)) => b.min(a),
            (Some(d), None) | (None, Some(d)) => d,
            (None, None) => return Some(m),
        }
    };
    let into = (n as f64 / 2.0 - lo as f64) / ties as f64;
    Some(m - step / 2.0 + step * into.clamp(0.0, 1.0))
}

/// Raw median absolute deviation `median(|x_i - median(x)|)`, not scaled to be
/// a consistent estimator of the normal sigma (multiply by 1.4826 for that).
/// `None` for an empty sample or when any value is not finite.
pub fn mad(xs: &[f64]) -> Option<f64> {
    let s = sorted_finite(xs)?;
    Some(mad_about(&s, percentile_sorted(&s, 50.0)))
}

/// Distribution-free confidence interval of the median from order statistics
/// (Conover, "Practical Nonparametric Statistics", 3rd ed., §3.2, the
/// quantile-test interval with p = 1/2).
///
/// The interval is `[x_(j), x_(n+1-j)]` (1-based ranks) where `j` is the largest
/// rank with `P(B <= j - 1) <= (1 - confidence) / 2` for `B ~ Binomial(n, 1/2)`,
/// so its coverage `1 - 2 P(B <= j - 1)` is at least `confidence`. The binomial
/// tail is exact for `n <=` [`crate::method::EXACT_BINOMIAL_MAX_N`] (1000); above that `j` comes
/// from the continuity-corrected normal approximation
/// `j = floor(n/2 - z sqrt(n)/2 + 1/2)`, `z` the `(1 + confidence)/2` normal
/// quantile.
///
/// When no interval reaches the confidence (tiny `n`, e.g. `n <= 5` at 95%), or
/// `confidence >= 1`, the result is `(min, max)`. `confidence <= 0` (or NaN)
/// gives the narrowest interval around the middle order statistic(s).
/// An empty slice gives `(NaN, NaN)`. `sorted` must be ascending (debug-checked).
pub fn median_ci(sorted: &[f64], confidence: f64) -> (f64, f64) {
    debug_assert!(
        sorted.windows(2).all(|w| w[0] <= w[1]),
        "median_ci needs ascending input"
    );
    let n = sorted.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let j = median_ci_rank(n, confidence);
    (sorted[j - 1], sorted[n - j])
}

/// Lower 1-based rank `j` of the median interval, `1 <= j <= (n + 1) / 2`.
fn median_ci_rank(n: usize, confidence: f64) -> usize {
    let middle = n.div_ceil(2);
    if confidence.is_nan() || confidence <= 0.0 {
        return middle;
    }
    if confidence >= 1.0 {
        return 1;
    }
    let tail = (1.0 - confidence) / 2.0;
    let j = if n <= crate::method::EXACT_BINOMIAL_MAX_N {
        // Walk the Binomial(n, 1/2) pmf upwards: pmf(0) = 2^-n, which is a
        // normal f64 for n <= 1000; pmf(k + 1) = pmf(k) (n - k) / (k + 1).
        // Find the largest j with cdf(j - 1) <= tail.
        let mut pmf = 0.5f64.powi(n as i32);
        let mut cdf = 0.0;
        let mut j = 0;
        while j < middle {
            cdf += pmf;
            if cdf > tail {
                break;
            }
            pmf *= (n - j) as f64 / (j + 1) as f64;
            j += 1;
        }
        j
    } else {
        let z = normal_quantile(1.0 - tail);
        let nf = n as f64;
        // Below 1 (or NaN) the cast gives 0, which the clamp below raises to 1.
        (nf / 2.0 - z * nf.sqrt() / 2.0 + 0.5).floor() as usize
    };
    j.clamp(1, middle)
}

/// The median as the middle value, or the mean of the middle two for an even count
/// (not [`percentile_sorted`]'s interpolation, which can differ in the last bit); NaN
/// when empty.
fn middle(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Sorted copy of `xs`, or `None` when empty or holding a non-finite value.
fn sorted_finite(xs: &[f64]) -> Option<Vec<f64>> {
    if xs.is_empty() || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let mut s = xs.to_vec();
    s.sort_unstable_by(f64::total_cmp);
    Some(s)
}

/// The sample standard deviation (divisor `n - 1`; 0 for fewer than two values), in
/// two passes: stable even when the mean is large against the spread.
pub fn sample_sd(xs: &[f64]) -> f64 {
    let n = xs.len();
    if n < 2 {
        return 0.0;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    (xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64).sqrt()
}

/// Median of `|x - center|` over a non-empty slice (in any order).
fn mad_about(xs: &[f64], center: f64) -> f64 {
    let mut dev: Vec<f64> = xs.iter().map(|x| (x - center).abs()).collect();
    dev.sort_unstable_by(f64::total_cmp);
    percentile_sorted(&dev, 50.0)
}

/// Standard normal CDF via `erf`, with `erf` from the everywhere-convergent
/// positive series `erf(x) = 2/sqrt(pi) e^{-x^2} sum_k 2^k x^{2k+1} / (2k+1)!!`
/// (Abramowitz & Stegun 7.1.6); no cancellation, relative error ~1e-15 for the
/// |x| <= 8 that matters here.
fn normal_cdf(z: f64) -> f64 {
    let x = (z / std::f64::consts::SQRT_2).abs();
    if x > 8.0 {
        return if z > 0.0 { 1.0 } else { 0.0 };
    }
    let x2 = x * x;
    let mut term = x;
    let mut sum = x;
    let mut k = 0.0;
    while term > sum * 1e-17 {
        k += 1.0;
        term *= 2.0 * x2 / (2.0 * k + 1.0);
        sum += term;
    }
    let erf = 2.0 / std::f64::consts::PI.sqrt() * (-x2).exp() * sum;
    if z >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// Standard normal quantile for `p` in (0, 1), by bisection on [`normal_cdf`]
/// (to about 1e-12 in z, far finer than one order-statistic rank needs).
fn normal_quantile(p: f64) -> f64 {
    let (mut lo, mut hi) = (-12.0f64, 12.0f64);
    for _ in 0..80 {
        let mid = 0.5 * (lo + hi);
        if normal_cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_median_on_a_clock_lattice_moves_with_the_share_at_each_step() {
        let round = |at_220: usize, at_210: usize| {
            let mut v = vec![220.0; at_220];
            v.extend(std::iter::repeat_n(210.0, at_210));
            v.push(230.0);
            median_grouped(&v).unwrap()
        };
        // 60% at 220 (and one at 230): the middle rank lies a sixth into the 220s.
        let a = round(60, 40);
        assert!(
            (a - (215.0 + 10.0 * (50.5 - 40.0) / 60.0)).abs() < 1e-9,
            "{a}"
        );
        let b = round(40, 60);
        assert!(b > 210.0 && b < 215.0 && b < a, "{b}");
        // The plain median jumps a whole step between the two.
        assert_eq!(median(&[210.0, 220.0, 220.0]), Some(220.0));
        assert!(median_grouped(&[210.0, 220.0, 220.0]).unwrap() < 220.0);
    }

    #[test]
    fn a_median_without_ties_is_the_plain_median() {
        let v = [3.0, 1.5, 2.25, 9.0, 4.0, 2.0];
        assert_eq!(median_grouped(&v), median(&v));
        assert_eq!(median_grouped(&[5.0, 5.0, 5.0]), Some(5.0));
        assert_eq!(median_grouped(&[]), None);
    }
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn summary_of_classic_eight_values() {
        let xs = [9.0, 2.0, 4.0, 5.0, 4.0, 7.0, 4.0, 5.0];
        let s = summarize(&xs).unwrap();
        // sorted: 2 4 4 4 5 5 7 9; sum 40 -> mean 5.
        // squared deviations 9+1+1+1+0+0+4+16 = 32 -> sd = sqrt(32/7) = 2.138090.
        assert_eq!(s.n, 8);
        assert!(close(s.mean, 5.0, 1e-12));
        assert!(close(s.sd, (32.0f64 / 7.0).sqrt(), 1e-12));
        assert!(close(s.sd, 2.138_090, 1e-6));
        assert_eq!((s.min, s.max), (2.0, 9.0));
        // Type 7, h = 7p/100 (0-based):
        // median h=3.5 -> 4 + .5(5-4) = 4.5; p25 h=1.75 -> 4; p75 h=5.25 -> 5 + .25*2 = 5.5
        // p1 h=.07 -> 2 + .07*2 = 2.14; p5 h=.35 -> 2.7; p95 h=6.65 -> 7 + .65*2 = 8.3;
        // p99 h=6.93 -> 8.86.
        assert!(close(s.median, 4.5, 1e-12));
        assert!(close(s.p25, 4.0, 1e-12));
        assert!(close(s.p75, 5.5, 1e-12));
        assert!(close(s.p1, 2.14, 1e-12));
        assert!(close(s.p5, 2.7, 1e-12));
        assert!(close(s.p95, 8.3, 1e-12));
        assert!(close(s.p99, 8.86, 1e-12));
        // |x - 4.5| sorted: .5 .5 .5 .5 .5 2.5 2.5 4.5 -> median .5
        assert!(close(s.mad, 0.5, 1e-12));
        // cv = 2.138090 / 5
        assert!(close(s.cv, 0.427_618, 1e-6));
        // n=8: P(B<=0) = 1/256 <= .025 < P(B<=1) = 9/256 -> j = 1 -> (min, max).
        assert_eq!((s.ci_low, s.ci_high), (2.0, 9.0));
    }

    #[test]
    fn summary_single_value_and_rejections() {
        let s = summarize(&[3.25]).unwrap();
        assert_eq!(s.n, 1);
        assert_eq!(s.sd, 0.0);
        assert_eq!(s.cv, 0.0);
        assert_eq!((s.median, s.p1, s.p99, s.mad), (3.25, 3.25, 3.25, 0.0));
        assert_eq!((s.ci_low, s.ci_high), (3.25, 3.25));
        assert!(summarize(&[]).is_none());
        assert!(summarize(&[1.0, f64::NAN]).is_none());
        assert!(summarize(&[1.0, f64::INFINITY]).is_none());
        // mean 0 -> cv 0 (not NaN); values -1, 1: sd = sqrt(2/1)
        let z = summarize(&[-1.0, 1.0]).unwrap();
        assert_eq!(z.cv, 0.0);
        assert!(close(z.sd, 2f64.sqrt(), 1e-12));
    }

    #[test]
    fn percentile_type7_edges() {
        let s = [10.0, 20.0, 30.0, 40.0];
        assert_eq!(percentile_sorted(&s, 0.0), 10.0);
        assert_eq!(percentile_sorted(&s, 100.0), 40.0);
        // out-of-range p is clamped
        assert_eq!(percentile_sorted(&s, -5.0), 10.0);
        assert_eq!(percentile_sorted(&s, 250.0), 40.0);
        // p=10: h = 3*.1 = .3 -> 10 + .3*10 = 13
        assert!(close(percentile_sorted(&s, 10.0), 13.0, 1e-12));
        // p=90: h = 2.7 -> 30 + .7*10 = 37
        assert!(close(percentile_sorted(&s, 90.0), 37.0, 1e-12));
        assert!(percentile_sorted(&s, f64::NAN).is_nan());
        assert_eq!(percentile_sorted(&[7.0], 33.0), 7.0);
    }

    #[test]
    fn median_and_mad_free_functions() {
        // odd n: sorted 1 2 3 4 100 -> median 3; |x-3| = 2 1 0 1 97 -> sorted 0 1 1 2 97 -> 1
        let xs = [100.0, 1.0, 3.0, 2.0, 4.0];
        assert_eq!(median(&xs), Some(3.0));
        assert_eq!(mad(&xs), Some(1.0));
        // even n: 1 2 3 4 -> 2.5; deviations 1.5 .5 .5 1.5 -> 1.0
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(mad(&[4.0, 1.0, 3.0, 2.0]), Some(1.0));
        assert_eq!(median(&[]), None);
        assert_eq!(mad(&[f64::NAN]), None);
    }

    #[test]
    fn median_ci_exact_small_n() {
        let s: Vec<f64> = (1..=10).map(f64::from).collect();
        // n=10: cdf(1) = 11/1024 = .0107 <= .025 < cdf(2) = 56/1024 = .0547
        // -> j = 2, interval [x_(2), x_(9)] = [2, 9] (Conover's table agrees).
        assert_eq!(median_ci(&s, 0.95), (2.0, 9.0));
        // 90%: tail .05; cdf(2) = .0547 > .05 -> still j = 2.
        assert_eq!(median_ci(&s, 0.90), (2.0, 9.0));
        // 80%: tail .10; cdf(2) = .0547 <= .1 < cdf(3) = 176/1024 = .172 -> j = 3.
        assert_eq!(median_ci(&s, 0.80), (3.0, 8.0));
        // n=5: cdf(0) = 1/32 = .03125 > .025 -> no interval reaches 95% -> (min, max)
        assert_eq!(median_ci(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.95), (1.0, 5.0));
        // confidence >= 1 -> (min, max); confidence 0 -> middle order statistics
        assert_eq!(median_ci(&s, 1.0), (1.0, 10.0));
        assert_eq!(median_ci(&s, 0.0), (5.0, 6.0));
        assert!(median_ci(&[], 0.95).0.is_nan());
    }

    #[test]
    fn median_ci_exact_n_1000_and_normal_branch() {
        // n=1000 (exact branch, 2^-1000 must not underflow): by exact summation in
        // Python (math.comb), cdf(468) = .0231 <= .025 < cdf(469) = .0268, so j = 469
        // and the interval is [x_(469), x_(532)].
        let s: Vec<f64> = (1..=1000).map(f64::from).collect();
        assert_eq!(median_ci(&s, 0.95), (469.0, 532.0));
        // n=2000 (normal branch): z = 1.959964, sqrt(2000) = 44.72136,
        // j = floor(1000 - 1.959964*44.72136/2 + .5) = floor(956.674) = 956,
        // upper rank 2000 - 956 + 1 = 1045. (Exact binomial also gives j = 956.)
        let s: Vec<f64> = (1..=2000).map(f64::from).collect();
        assert_eq!(median_ci(&s, 0.95), (956.0, 1045.0));
    }

    #[test]
    fn normal_helpers() {
        // Phi(1.959964) = .975, Phi(0) = .5, Phi(-1) = .158655 (tables)
        assert!(close(normal_cdf(0.0), 0.5, 1e-15));
        assert!(close(normal_cdf(-1.0), 0.158_655_25, 1e-8));
        assert!(close(normal_quantile(0.975), 1.959_964, 1e-6));
        assert!(close(normal_quantile(0.995), 2.575_829, 1e-6));
    }
}
