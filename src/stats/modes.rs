//! Several modes (clusters of typical values) among samples, regardless of
//! time order: e.g. a system call that is cheap on one path and expensive on
//! another. Found with a Gaussian kernel density estimate on the log scale.
//!
//! In the harness a sample is the mean of one batch of operations, so these are
//! modes of batch means: a slow path taken by one call in fifty shifts every batch
//! a little instead of forming a mode of its own. Only with batches of one
//! operation (`syscost run --batch 1`) are they modes of single operations.
//!
//! Pure functions only: no I/O, no clocks, no knowledge of benchmarks. The
//! input is never modified.

use serde::{Deserialize, Serialize};

/// Fewest grid points of the density estimate.
const GRID_MIN: usize = 512;
/// Most grid points of the density estimate (used when the data span many
/// bandwidths, so that the grid stays finer than a quarter bandwidth).
const GRID_MAX: usize = 8192;
/// The kernel is cut off at this many bandwidths.
const KERNEL_REACH: f64 = 4.0;

/// One mode of a sample.
///
/// Invariants: `low <= center <= high` up to grid resolution, `0 < fraction <= 1`,
/// and the fractions of the modes returned together sum to 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mode {
    /// Location of the density peak, in sample units.
    pub center: f64,
    /// Fraction of the (positive, finite) samples in this mode's basin.
    pub fraction: f64,
    /// Smallest sample in the basin.
    pub low: f64,
    /// Largest sample in the basin.
    pub high: f64,
}

/// Modes of a positive sample.
///
/// Method: Gaussian kernel density estimate of `ln(x)` with Silverman's robust
/// rule-of-thumb bandwidth `h = 0.9 min(sd, IQR/1.34) n^(-1/5)` (Silverman 1986,
/// "Density Estimation for Statistics and Data Analysis", eq. 3.31; IQR by
/// Hyndman & Fan type 7). If one of `sd`, `IQR/1.34` is 0 (heavily tied data,
/// e.g. a coarse timer) the other is used; if both are 0 the sample is one mode.
/// Quantised data (a timer that ticks in whole nanoseconds) would otherwise put
/// a peak on every tick once `h` falls below the tick, so `h` is floored at half
/// the median gap between consecutive distinct log-values, but never above
/// `ln(1 + min_rel_sep) / 2`: smoothing on that scale can only join peaks that
/// `min_rel_sep` would merge anyway, so genuinely separate modes survive (and
/// `min_rel_sep <= 0` disables the floor).
/// The data are linearly binned onto a grid of 512 points (up to 8192 when the
/// data span more than ~128 bandwidths) and convolved with the kernel cut at
/// 4h, so the cost is O(n log n) for the sort plus O(grid * kernel width).
///
/// Every local maximum of the density starts as a candidate; basins are split
/// at the lowest density between neighbouring peaks. Neighbours are merged
/// (keeping the higher peak) while the valley between them is at least 0.5x
/// the smaller peak's density or their centers differ relatively by less than
/// `min_rel_sep` (`|c2 - c1| / min(c1, c2)`); then a basin holding fewer than
/// `min_fraction` of the samples (or none) is merged into the neighbour across
/// the higher valley, and the checks repeat until nothing changes.
///
/// Non-finite and non-positive values are ignored; `fraction` is relative to
/// the remaining samples. Returns the modes sorted by center; a unimodal
/// sample gives exactly one mode with fraction 1.0 spanning `[min, max]`; no
/// usable sample gives an empty vec.
pub fn modes(xs: &[f64], min_fraction: f64, min_rel_sep: f64) -> Vec<Mode> {
    let mut sorted: Vec<f64> = xs
        .iter()
        .copied()
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    if sorted.is_empty() {
        return Vec::new();
    }
    sorted.sort_unstable_by(f64::total_cmp);
    let ys: Vec<f64> = sorted.iter().map(|x| x.ln()).collect();
    let n = ys.len();
    let Some(silverman) = bandwidth(&ys) else {
        let center = super::percentile_sorted(&sorted, 50.0);
        return vec![Mode {
            center,
            fraction: 1.0,
            low: sorted[0],
            high: sorted[n - 1],
        }];
    };
    let cap = if min_rel_sep > 0.0 {
        0.5 * min_rel_sep.ln_1p()
    } else {
        0.0
    };
    let h = silverman.max(resolution_floor(&ys).min(cap));
    let kde = Kde::new(&ys, h);
    let mut groups: Vec<Group> = Vec::new();
    let mut valleys: Vec<f64> = Vec::new();
    for peak in local_maxima(&kde.density) {
        if let Some(prev) = groups.last_mut() {
            let (at, depth) = lowest_between(&kde.density, prev.peak, peak);
            // Samples left of the valley belong to the previous basin.
            prev.end = ys.partition_point(|&y| y < kde.position(at as f64));
            valleys.push(depth);
        }
        let height = kde.density[peak];
        groups.push(Group {
            peak,
            height,
            center: kde.center(peak),
            end: n,
        });
    }
    merge_groups(&mut groups, &mut valleys, n, min_fraction, min_rel_sep);
    let mut start = 0;
    groups
        .iter()
        .map(|g| {
            let mode = Mode {
                center: g.center,
                fraction: (g.end - start) as f64 / n as f64,
                low: sorted[start],
                high: sorted[g.end - 1],
            };
            start = g.end;
            mode
        })
        .collect()
}

/// A candidate mode: its peak on the grid and where its basin ends.
#[derive(Debug, Clone, Copy)]
struct Group {
    /// Grid index of the highest density in the basin.
    peak: usize,
    /// Density at `peak`.
    height: f64,
    /// Peak location in sample units.
    center: f64,
    /// One past the last sorted-sample index in the basin.
    end: usize,
}

/// Merges neighbouring groups until every remaining one is a separate mode;
/// `valleys[i]` is the density of the valley between groups `i` and `i + 1`.
fn merge_groups(
    groups: &mut Vec<Group>,
    valleys: &mut Vec<f64>,
    n: usize,
    min_fraction: f64,
    min_rel_sep: f64,
) {
    while groups.len() > 1 {
        // 1. The neighbouring pair that is most clearly a single mode.
        let mut worst: Option<(usize, f64)> = None;
        for (i, pair) in groups.windows(2).enumerate() {
            let ratio = valleys[i] / pair[0].height.min(pair[1].height);
            let (a, b) = (pair[0].center, pair[1].center);
            let close = (b - a).abs() / a.min(b) < min_rel_sep;
            if (ratio >= crate::method::MODE_VALLEY || close)
                && worst.is_none_or(|(_, r)| ratio > r)
            {
                worst = Some((i, ratio));
            }
        }
        if let Some((i, _)) = worst {
            merge_pair(groups, valleys, i);
            continue;
        }
        // 2. The smallest basin under min_fraction (or empty).
        let mut smallest: Option<(usize, usize)> = None;
        let mut start = 0;
        for (i, g) in groups.iter().enumerate() {
            let count = g.end - start;
            start = g.end;
            let small = count == 0 || (count as f64) < min_fraction * n as f64;
            if small && smallest.is_none_or(|(_, c)| count < c) {
                smallest = Some((i, count));
            }
        }
        let Some((i, _)) = smallest else { break };
        // Merge across the higher valley (the only one at either end).
        let left = i.checked_sub(1).map(|j| valleys[j]);
        let right = valleys.get(i).copied();
        match (left, right) {
            (Some(l), Some(r)) if l > r => merge_pair(groups, valleys, i - 1),
            (Some(_), None) => merge_pair(groups, valleys, i - 1),
            _ => merge_pair(groups, valleys, i),
        }
    }
}

/// Merges groups `i` and `i + 1`, keeping the higher peak and the union basin.
fn merge_pair(groups: &mut Vec<Group>, valleys: &mut Vec<f64>, i: usize) {
    let right = groups.remove(i + 1);
    valleys.remove(i);
    let left = &mut groups[i];
    if right.height > left.height {
        left.peak = right.peak;
        left.height = right.height;
        left.center = right.center;
    }
    left.end = right.end;
}

/// Silverman's robust bandwidth on sorted log-values, or `None` when the
/// data have no spread.
fn bandwidth(ys: &[f64]) -> Option<f64> {
    let n = ys.len();
    // All equal (checked directly: the rounded mean of equal values can differ
    // from them and fake a tiny positive sd).
    if n < 2 || ys[0] == ys[n - 1] {
        return None;
    }
    let sd = super::sample_sd(ys);
    let iqr = super::percentile_sorted(ys, 75.0) - super::percentile_sorted(ys, 25.0);
    let robust = iqr / 1.34;
    let spread = match (sd > 0.0, robust > 0.0) {
        (true, true) => sd.min(robust),
        (true, false) => sd,
        (false, true) => robust,
        (false, false) => return None,
    };
    let h = 0.9 * spread * (n as f64).powf(-0.2);
    (h.is_finite() && h > 0.0).then_some(h)
}

/// Half the median positive gap between consecutive sorted log-values (0 when
/// all are equal): the finest scale quantised data can resolve.
fn resolution_floor(ys: &[f64]) -> f64 {
    let mut gaps: Vec<f64> = ys
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|g| *g > 0.0)
        .collect();
    if gaps.is_empty() {
        return 0.0;
    }
    gaps.sort_unstable_by(f64::total_cmp);
    0.5 * super::percentile_sorted(&gaps, 50.0)
}

/// A binned Gaussian kernel density estimate on an even grid.
struct Kde {
    /// Log-value of grid point 0.
    lo: f64,
    /// Grid spacing.
    dx: f64,
    /// Unnormalised density at each grid point (only ratios matter here).
    density: Vec<f64>,
}

impl Kde {
    /// Bins sorted `ys` linearly onto the grid and convolves with the kernel.
    fn new(ys: &[f64], h: f64) -> Kde {
        let lo = ys[0] - 3.0 * h;
        let span = ys[ys.len() - 1] + 3.0 * h - lo;
        let wanted = (span / (h / 4.0)).ceil();
        let points = if wanted >= GRID_MAX as f64 {
            GRID_MAX
        } else {
            (wanted as usize + 1).max(GRID_MIN)
        };
        let dx = span / (points - 1) as f64;
        let mut weight = vec![0.0; points];
        for &y in ys {
            let pos = ((y - lo) / dx).clamp(0.0, (points - 1) as f64);
            let i = (pos.floor() as usize).min(points - 2);
            let frac = pos - i as f64;
            weight[i] += 1.0 - frac;
            weight[i + 1] += frac;
        }
        let reach = ((KERNEL_REACH * h / dx).ceil() as usize).min(points - 1);
        let kernel: Vec<f64> = (0..=reach)
            .map(|j| {
                let u = j as f64 * dx / h;
                (-0.5 * u * u).exp()
            })
            .collect();
        let mut density = vec![0.0; points];
        for (i, &w) in weight.iter().enumerate().filter(|(_, w)| **w > 0.0) {
            let first = i.saturating_sub(reach);
            let last = (i + reach).min(points - 1);
            for (j, d) in density.iter_mut().enumerate().take(last + 1).skip(first) {
                *d += w * kernel[i.abs_diff(j)];
            }
        }
        Kde { lo, dx, density }
    }

    /// Log-value at a (fractional) grid index.
    fn position(&self, index: f64) -> f64 {
        self.lo + index * self.dx
    }

    /// Peak location in sample units, refined by a parabola through the
    /// peak and its two neighbours (moves it by at most half a grid step).
    fn center(&self, peak: usize) -> f64 {
        let f = &self.density;
        let mut offset = 0.0;
        if peak > 0 && peak + 1 < f.len() {
            let curvature = f[peak - 1] - 2.0 * f[peak] + f[peak + 1];
            if curvature < 0.0 {
                offset = (0.5 * (f[peak - 1] - f[peak + 1]) / curvature).clamp(-0.5, 0.5);
            }
        }
        self.position(peak as f64 + offset).exp()
    }
}

/// Indices of the local maxima with positive density (first point of a plateau).
fn local_maxima(f: &[f64]) -> Vec<usize> {
    (0..f.len())
        .filter(|&i| {
            let rises = i == 0 || f[i] > f[i - 1];
            let falls = i + 1 == f.len() || f[i] >= f[i + 1];
            rises && falls && f[i] > 0.0
        })
        .collect()
}

/// Index and density of the lowest point strictly between two grid indices.
fn lowest_between(f: &[f64], a: usize, b: usize) -> (usize, f64) {
    let mut lowest = (a, f[a]);
    for (i, &y) in f.iter().enumerate().take(b).skip(a + 1) {
        if y < lowest.1 {
            lowest = (i, y);
        }
    }
    lowest
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The next state of a 64-bit LCG, shifted to 53 bits.
    fn lcg(s: &mut u64) -> f64 {
        *s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*s >> 11) as f64
    }

    /// Deterministic values in [center*(1-rel), center*(1+rel)) from a 64-bit LCG.
    fn cluster(n: usize, center: f64, rel: f64, seed: u64) -> Vec<f64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                center * (1.0 + rel * (2.0 * lcg(&mut s) / (1u64 << 53) as f64 - 1.0))
            })
            .collect()
    }

    #[test]
    fn silverman_bandwidth_by_hand() {
        // ys 0..4: sd = sqrt(10/4) = 1.581139; type-7 IQR = 3 - 1 = 2, /1.34 = 1.492537;
        // h = 0.9 * 1.492537 * 5^-0.2 (= 0.724780) = 0.973585
        let h = bandwidth(&[0.0, 1.0, 2.0, 3.0, 4.0]).unwrap();
        assert!((h - 0.973_585).abs() < 1e-6, "{h}");
        // IQR 0 (four equal of five), sd > 0 -> sd is used:
        // mean 0.2, ss = 4*.04 + .64 = .8, sd = sqrt(.2) = .447214; h = .9*.447214*.724780 = .291718
        let h = bandwidth(&[0.0, 0.0, 0.0, 0.0, 1.0]).unwrap();
        assert!((h - 0.291_718).abs() < 1e-6, "{h}");
        assert!(bandwidth(&[2.0, 2.0, 2.0]).is_none());
        assert!(bandwidth(&[2.0]).is_none());
    }

    #[test]
    fn resolution_floor_by_hand() {
        // positive gaps of 0 0 1 2 4: 1 1 2 -> median 1 -> floor .5
        assert_eq!(resolution_floor(&[0.0, 0.0, 1.0, 2.0, 4.0]), 0.5);
        // gaps .5 2.5 (the tie adds none) -> median 1.5 -> floor .75
        assert_eq!(resolution_floor(&[0.0, 0.5, 0.5, 3.0]), 0.75);
        assert_eq!(resolution_floor(&[1.0, 1.0]), 0.0);
    }

    #[test]
    fn two_equal_clusters() {
        let mut xs = cluster(1000, 100.0, 0.03, 1);
        xs.extend(cluster(1000, 150.0, 0.03, 2));
        let m = modes(&xs, 0.05, 0.1);
        assert_eq!(m.len(), 2, "{m:?}");
        // The valley lies in the empty gap [103, 145.5], so the basins split 1000/1000.
        assert_eq!(m[0].fraction, 0.5);
        assert_eq!(m[1].fraction, 0.5);
        assert!((m[0].center - 100.0).abs() < 3.0 && (m[1].center - 150.0).abs() < 4.5);
        assert!(m[0].low >= 97.0 && m[0].high < 103.0 && m[1].low >= 145.5);
        // min_rel_sep 0.6 > (150 - 100)/100 forbids two modes that close.
        assert_eq!(modes(&xs, 0.05, 0.6).len(), 1);
    }

    #[test]
    fn one_cluster_is_one_mode() {
        let xs = cluster(5000, 100.0, 0.05, 9);
        let m = modes(&xs, 0.05, 0.1);
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!(m[0].fraction, 1.0);
        let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
        let max = xs.iter().copied().fold(0.0, f64::max);
        assert_eq!((m[0].low, m[0].high), (min, max));
        assert!((m[0].center - 100.0).abs() < 5.0);
    }

    #[test]
    fn small_cluster_follows_min_fraction() {
        // 970 near 100, 30 near 300 (3%).
        let mut xs = cluster(970, 100.0, 0.02, 4);
        xs.extend(cluster(30, 300.0, 0.02, 5));
        let merged = modes(&xs, 0.05, 0.1);
        assert_eq!(merged.len(), 1);
        assert_eq!(merged[0].fraction, 1.0);
        assert!((merged[0].center - 100.0).abs() < 2.0, "{merged:?}");
        let kept = modes(&xs, 0.01, 0.1);
        assert_eq!(kept.len(), 2, "{kept:?}");
        assert!((kept[0].fraction - 0.97).abs() < 1e-12);
        assert!((kept[1].fraction - 0.03).abs() < 1e-12);
    }

    #[test]
    fn three_modes_in_order() {
        let mut xs = cluster(5000, 400.0, 0.02, 3);
        xs.extend(cluster(25000, 100.0, 0.02, 6));
        xs.extend(cluster(15000, 200.0, 0.02, 8));
        let m = modes(&xs, 0.05, 0.1);
        assert_eq!(m.len(), 3, "{m:?}");
        let f: Vec<f64> = m.iter().map(|m| m.fraction).collect();
        // 25000/45000, 15000/45000, 5000/45000
        assert!((f[0] - 5.0 / 9.0).abs() < 1e-12);
        assert!((f[1] - 3.0 / 9.0).abs() < 1e-12);
        assert!((f[2] - 1.0 / 9.0).abs() < 1e-12);
        assert!(m.windows(2).all(|w| w[0].center < w[1].center));
        assert!((f.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn heavy_ties_still_split() {
        // 800 readings of exactly 100 and 200 of exactly 200: IQR of the logs is 0,
        // so the sd-based bandwidth is used, and the two values are two modes.
        let mut xs = vec![100.0; 800];
        xs.extend(vec![200.0; 200]);
        let m = modes(&xs, 0.05, 0.1);
        assert_eq!(m.len(), 2, "{m:?}");
        assert_eq!((m[0].fraction, m[1].fraction), (0.8, 0.2));
        assert_eq!(
            (m[0].low, m[0].high, m[1].low, m[1].high),
            (100.0, 100.0, 200.0, 200.0)
        );
        assert!((m[0].center / 100.0 - 1.0).abs() < 0.01);
        assert!((m[1].center / 200.0 - 1.0).abs() < 0.01);
    }

    /// Standard normal deviates by Box-Muller from a 64-bit LCG.
    fn normals(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed;
        let mut unit = move || (lcg(&mut s) + 0.5) / (1u64 << 53) as f64;
        (0..n)
            .map(|_| {
                let (a, b) = (unit(), unit());
                (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
            })
            .collect()
    }

    #[test]
    fn quantised_timer_is_one_mode() {
        // A 1 ns timer reading ~100 ns with sd 2-3 ns: every sample sits on an integer
        // tick. Silverman's h is then ~0.2 tick, which alone would make a comb of
        // peaks (0.01 apart in ln x) and, after merging, spurious modes ~3% apart.
        // The floor is min(.5 * ln(101/100), .5 * ln(1.03)) = .005 (half a tick).
        for (n, sd, seed) in [(50_000, 2.0, 1), (200_000, 2.0, 2), (100_000, 3.0, 3)] {
            let xs: Vec<f64> = normals(n, seed)
                .iter()
                .map(|z| (100.0 + sd * z).round())
                .collect();
            let m = modes(&xs, 0.05, 0.03);
            assert_eq!(m.len(), 1, "n {n} sd {sd}: {m:?}");
            assert!((m[0].center - 100.0).abs() < 1.0);
            // with min_rel_sep 0 the floor is off and the ticks show through
            assert!(modes(&xs, 0.05, 0.0).len() > 3);
        }
    }

    #[test]
    fn degenerate_inputs() {
        assert!(modes(&[], 0.05, 0.1).is_empty());
        assert!(modes(&[-1.0, 0.0, f64::NAN], 0.05, 0.1).is_empty());
        for (xs, x) in [(&[42.0, -3.0, f64::INFINITY][..], 42.0), (&[7.0; 50], 7.0)] {
            let (center, fraction, low, high) = (x, 1.0, x, x);
            let want = Mode {
                center,
                fraction,
                low,
                high,
            };
            assert_eq!(modes(xs, 0.05, 0.1), vec![want]);
        }
    }

    #[test]
    fn far_outlier_does_not_make_a_mode() {
        // One sample 10^7 x away stretches the grid to GRID_MAX; it stays in a basin
        // under min_fraction and is merged, so the result is one mode.
        let mut xs = cluster(2000, 100.0, 0.05, 12);
        xs.push(1e9);
        let m = modes(&xs, 0.05, 0.1);
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!((m[0].fraction, m[0].high), (1.0, 1e9));
        assert!((m[0].center - 100.0).abs() < 5.0);
    }

    #[test]
    fn a_mode_has_the_fields_the_schema_names() {
        // report::json's schema: "modes": [{ "center", "fraction", "low", "high" }].
        let m = Mode {
            center: 1.5,
            fraction: 0.25,
            low: 1.0,
            high: 2.0,
        };
        let v = serde_json::to_value(m).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"center": 1.5, "fraction": 0.25, "low": 1.0, "high": 2.0})
        );
    }
}
