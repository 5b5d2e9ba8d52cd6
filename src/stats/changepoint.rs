//! Level shifts in a time-ordered series of samples (e.g. a run whose cost
//! drops after the caches warm up, or jumps when the CPU frequency changes).
//! The series is cut into [`Segment`]s by binary segmentation with Pettitt's
//! rank test.
//!
//! Pure functions only: no I/O, no clocks, no knowledge of benchmarks. Time
//! order is the slice order; nothing here reorders or modifies the input.

use serde::{Deserialize, Serialize};

/// A run of consecutive samples `xs[start..end]` with one level.
///
/// Invariant: `start < end`; segments returned together are in order and
/// cover `0..n` without gaps or overlap.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// First index of the segment.
    pub start: usize,
    /// One past the last index of the segment (exclusive).
    pub end: usize,
    /// Median of `xs[start..end]`.
    pub median: f64,
}

/// Outcome of one Pettitt test on a whole slice.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Pettitt {
    /// Number of samples before the most likely change: the series changes
    /// between `xs[split - 1]` and `xs[split]`.
    pub split: usize,
    /// Statistic `K = max |U_t|` over the admissible `t`.
    pub k: f64,
    /// Approximate p-value `min(1, 2 exp(-6 K^2 / (n^3 + n^2)))`.
    pub p: f64,
}

/// Pettitt (1979), "A non-parametric approach to the change-point problem",
/// Applied Statistics 28(2): with ranks `r_i` of the samples (mid-ranks for
/// ties), `U_t = 2 sum_{i<=t} r_i - t (n + 1)` for `t = 1..n-1`; the change is
/// at the `t` maximising `|U_t|`, with `K = max |U_t|` and the approximate
/// p-value `2 exp(-6 K^2 / (n^3 + n^2))` (clamped to 1).
///
/// Only `t` with at least `min_seg` samples on each side (`min_seg` is raised
/// to 1) are considered; restricting the maximum can only lower `K`, so the
/// p-value stays conservative. `None` when no `t` is admissible
/// (`n < 2 max(min_seg, 1)`). NaN samples rank by `f64::total_cmp` and are not
/// tied with each other; filter them first. Cost O(n log n), memory O(n).
pub fn pettitt(xs: &[f64], min_seg: usize) -> Option<Pettitt> {
    let n = xs.len();
    let min_seg = min_seg.max(1);
    if n < 2 * min_seg {
        return None;
    }
    let two_ranks = doubled_mid_ranks(xs);
    let n1 = n as i64 + 1;
    let mut cum = 0i64;
    let mut best: Option<(usize, i64)> = None;
    for (i, &r2) in two_ranks.iter().enumerate().take(n - min_seg) {
        cum += r2;
        let t = i + 1;
        if t < min_seg {
            continue;
        }
        let u = (cum - t as i64 * n1).abs();
        if best.is_none_or(|(_, k)| u > k) {
            best = Some((t, u));
        }
    }
    let (split, k) = best?;
    let k = k as f64;
    let p = (2.0 * (-pettitt_score(k, n)).exp()).min(1.0);
    Some(Pettitt { split, k, p })
}

/// Binary segmentation with Pettitt's rank test ([`pettitt`]).
///
/// A segment is split at its Pettitt change point when all of these hold:
/// `p < alpha`; both sides have at least `min_seg` samples; and
/// `|median_left - median_right| / min(|median_left|, |median_right|) >= min_rel_shift`
/// (a zero denominator counts as an infinite shift when the medians differ).
/// Splitting repeats on the pieces until no segment can be split or there are
/// `max_segments` segments. Among splittable segments the most significant
/// split (largest `K^2 / (n^3 + n^2)`) is taken first, so the cap keeps the
/// strongest changes whatever their position.
///
/// Returns the segments in order covering `0..xs.len()`: one segment when no
/// change is found, an empty vec for empty input. `min_seg` and `max_segments`
/// below 1 are treated as 1. Cost O(n log n) per accepted split (each piece is
/// re-ranked); n = 1,000,000 with a handful of changes takes well under a
/// second in a release build.
pub fn segments(
    xs: &[f64],
    min_seg: usize,
    alpha: f64,
    min_rel_shift: f64,
    max_segments: usize,
) -> Vec<Segment> {
    if xs.is_empty() {
        return Vec::new();
    }
    let max_segments = max_segments.max(1);
    let try_split = |start: usize, end: usize| -> Option<(usize, f64)> {
        if max_segments == 1 {
            return None;
        }
        accepted_split(&xs[start..end], min_seg, alpha, min_rel_shift)
            .map(|(t, score)| (start + t, score))
    };
    // (start, end, best accepted split as (absolute index, score)), in order.
    let mut parts = vec![(0, xs.len(), try_split(0, xs.len()))];
    while parts.len() < max_segments {
        let best = parts
            .iter()
            .enumerate()
            .filter_map(|(i, part)| part.2.map(|(_, score)| (i, score)))
            .fold(None, |acc: Option<(usize, f64)>, (i, score)| match acc {
                Some((_, s)) if s >= score => acc,
                _ => Some((i, score)),
            });
        let Some((i, _)) = best else { break };
        let (start, end, split) = parts[i];
        let Some((mid, _)) = split else { break };
        parts[i] = (start, mid, try_split(start, mid));
        parts.insert(i + 1, (mid, end, try_split(mid, end)));
    }
    parts
        .into_iter()
        .map(|(start, end, _)| Segment {
            start,
            end,
            median: median_of(&xs[start..end]),
        })
        .collect()
}

/// The split of `xs` accepted by the rules of [`segments`], as (left length,
/// significance score), or `None`.
fn accepted_split(
    xs: &[f64],
    min_seg: usize,
    alpha: f64,
    min_rel_shift: f64,
) -> Option<(usize, f64)> {
    let test = pettitt(xs, min_seg)?;
    // p < alpha; NaN alpha accepts nothing.
    if test.p.partial_cmp(&alpha) != Some(std::cmp::Ordering::Less) {
        return None;
    }
    let left = median_of(&xs[..test.split]);
    let right = median_of(&xs[test.split..]);
    let diff = (left - right).abs();
    let denom = left.abs().min(right.abs());
    let shift = if denom > 0.0 {
        diff / denom
    } else if diff > 0.0 {
        f64::INFINITY
    } else {
        0.0
    };
    (shift >= min_rel_shift).then_some((test.split, pettitt_score(test.k, xs.len())))
}

/// `6 K^2 / (n^3 + n^2)`: the exponent of Pettitt's p-value, computed in f64
/// so that it does not overflow for large `n`.
fn pettitt_score(k: f64, n: usize) -> f64 {
    let n = n as f64;
    6.0 * k * k / (n * n * n + n * n)
}

/// Twice the 1-based mid-rank of every sample, in input order (integers, so
/// the Pettitt sums are exact). A tie group occupying sorted positions
/// `a..b` (0-based) gets mid-rank `(a + 1 + b) / 2`.
fn doubled_mid_ranks(xs: &[f64]) -> Vec<i64> {
    let mut order: Vec<(f64, usize)> = xs.iter().copied().zip(0..).collect();
    order.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let mut ranks = vec![0i64; xs.len()];
    let mut a = 0;
    while a < order.len() {
        let mut b = a + 1;
        while b < order.len() && order[b].0 == order[a].0 {
            b += 1;
        }
        let r2 = (a + 1 + b) as i64;
        for &(_, idx) in &order[a..b] {
            ranks[idx] = r2;
        }
        a = b;
    }
    ranks
}

/// Median of a non-empty slice in O(n) by selection on a copy.
fn median_of(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    let n = v.len();
    let mid = n / 2;
    let (lower, &mut upper, _) = v.select_nth_unstable_by(mid, f64::total_cmp);
    if n % 2 == 1 {
        upper
    } else {
        let below = lower
            .iter()
            .copied()
            .max_by(f64::total_cmp)
            .unwrap_or(upper);
        0.5 * (below + upper)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic jitter in [-amp, amp) from a 64-bit LCG (Knuth's MMIX constants).
    fn jitter(n: usize, amp: f64, seed: u64) -> Vec<f64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                amp * (2.0 * ((s >> 11) as f64 / (1u64 << 53) as f64) - 1.0)
            })
            .collect()
    }

    fn levels(spec: &[(usize, f64)], amp: f64, seed: u64) -> Vec<f64> {
        let total = spec.iter().map(|s| s.0).sum();
        let noise = jitter(total, amp, seed);
        let mut out = Vec::with_capacity(total);
        for &(len, level) in spec {
            for _ in 0..len {
                out.push(level + noise[out.len()]);
            }
        }
        out
    }

    fn assert_covering(segs: &[Segment], n: usize) {
        assert_eq!(segs.first().map(|s| s.start), Some(0));
        assert_eq!(segs.last().map(|s| s.end), Some(n));
        assert!(segs.windows(2).all(|w| w[0].end == w[1].start));
        assert!(segs.iter().all(|s| s.start < s.end));
    }

    #[test]
    fn pettitt_by_hand() {
        // ranks 1..6; n+1 = 7; U_t = 2*(1+..+t) - 7t:
        // U1 = 2-7 = -5, U2 = 6-14 = -8, U3 = 12-21 = -9, U4 = 20-28 = -8, U5 = 30-35 = -5
        // K = 9 at t = 3; p = 2 exp(-6*81/(216+36)) = 2 exp(-1.928571) = 0.290711
        let t = pettitt(&[1.0, 2.0, 3.0, 10.0, 11.0, 12.0], 1).unwrap();
        assert_eq!((t.split, t.k), (3, 9.0));
        assert!((t.p - 0.290_711).abs() < 1e-6, "{}", t.p);
    }

    #[test]
    fn pettitt_ties_use_mid_ranks() {
        // 5 5 1 1: the 1s share ranks 1,2 -> 1.5; the 5s share 3,4 -> 3.5.
        // U1 = 7-5 = 2, U2 = 14-10 = 4, U3 = 17-15 = 2 -> K = 4 at t = 2
        // p = 2 exp(-6*16/(64+16)) = 2 exp(-1.2) = 0.602388
        let t = pettitt(&[5.0, 5.0, 1.0, 1.0], 1).unwrap();
        assert_eq!((t.split, t.k), (2, 4.0));
        assert!((t.p - 0.602_388).abs() < 1e-6);
        // constant series: every U_t = 0 -> K = 0, p clamped to 1
        let c = pettitt(&[3.0; 10], 1).unwrap();
        assert_eq!((c.k, c.p), (0.0, 1.0));
    }

    #[test]
    fn pettitt_min_seg_restricts_the_maximum() {
        // ranks 5 1 2 3 4, n+1 = 6: U1 = 10-6 = 4, U2 = 12-12 = 0, U3 = 16-18 = -2,
        // U4 = 22-24 = -2. Unrestricted: K = 4 at t = 1. With min_seg 2, t in {2, 3}:
        // K = 2 at t = 3.
        let xs = [9.0, 1.0, 2.0, 3.0, 4.0];
        let free = pettitt(&xs, 1).unwrap();
        assert_eq!((free.split, free.k), (1, 4.0));
        let held = pettitt(&xs, 2).unwrap();
        assert_eq!((held.split, held.k), (3, 2.0));
        assert!(pettitt(&xs, 3).is_none());
        assert!(pettitt(&[], 1).is_none());
    }

    #[test]
    fn two_levels_split_near_200() {
        let xs = levels(&[(200, 129.0), (300, 105.0)], 1.5, 7);
        let segs = segments(&xs, 20, 0.001, 0.05, 8);
        assert_eq!(segs.len(), 2, "{segs:?}");
        assert_covering(&segs, 500);
        assert!(segs[0].end.abs_diff(200) <= 2);
        assert!((segs[0].median - 129.0).abs() < 1.0);
        assert!((segs[1].median - 105.0).abs() < 1.0);
    }

    #[test]
    fn constant_and_jitter_give_one_segment() {
        let c = segments(&[42.0; 300], 10, 0.01, 0.02, 8);
        assert_eq!(
            c,
            vec![Segment {
                start: 0,
                end: 300,
                median: 42.0
            }]
        );
        for seed in 1..6 {
            let xs: Vec<f64> =
                jitter(2000, 2.0, seed).iter().map(|e| 100.0 + e).collect();
            let segs = segments(&xs, 20, 0.01, 0.02, 8);
            assert_eq!(segs.len(), 1, "seed {seed}: {segs:?}");
            assert_covering(&segs, 2000);
        }
        assert!(segments(&[], 10, 0.01, 0.02, 8).is_empty());
    }

    #[test]
    fn three_levels_and_the_cap() {
        let xs = levels(&[(150, 100.0), (150, 140.0), (150, 120.0)], 1.0, 11);
        let segs = segments(&xs, 20, 0.001, 0.05, 8);
        assert_eq!(segs.len(), 3, "{segs:?}");
        assert_covering(&segs, 450);
        assert!(segs[0].end.abs_diff(150) <= 2 && segs[1].end.abs_diff(300) <= 2);
        let medians: Vec<f64> = segs.iter().map(|s| s.median.round()).collect();
        assert_eq!(medians, vec![100.0, 140.0, 120.0]);
        // at most two segments when capped; still a covering
        let capped = segments(&xs, 20, 0.001, 0.05, 2);
        assert_eq!(capped.len(), 2);
        assert_covering(&capped, 450);
        assert_eq!(segments(&xs, 20, 0.001, 0.05, 0).len(), 1);
    }

    #[test]
    fn relative_shift_threshold_gates_the_split() {
        // 100 vs 101 with jitter +-0.1: Pettitt is certain (p ~ 0), the shift is 1%.
        let xs = levels(&[(250, 100.0), (250, 101.0)], 0.1, 3);
        assert_eq!(segments(&xs, 20, 0.001, 0.05, 8).len(), 1);
        let segs = segments(&xs, 20, 0.001, 0.005, 8);
        assert_eq!(segs.len(), 2);
        assert_eq!(segs[0].end, 250);
        // min_seg too large for any split
        assert_eq!(segments(&xs, 251, 0.001, 0.005, 8).len(), 1);
    }

    #[test]
    fn long_series_exact_split() {
        // 100k samples: every sample of the first 60k is above every later one,
        // so |U_t| peaks exactly at t = 60,000.
        let xs = levels(&[(60_000, 200.0), (40_000, 150.0)], 5.0, 5);
        let segs = segments(&xs, 50, 0.001, 0.05, 16);
        assert_eq!(segs.len(), 2);
        assert_eq!(segs[0].end, 60_000);
    }

    #[test]
    fn median_of_selection() {
        assert_eq!(median_of(&[3.0, 1.0, 2.0]), 2.0);
        // 1 2 3 4 -> 2.5
        assert_eq!(median_of(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median_of(&[7.0]), 7.0);
    }
}
