//! The Universal Scalability Law (Gunther): the throughput of N concurrent copies
//!
//! X(N) = λN / (1 + σ(N−1) + κN(N−1)),
//!
//! with λ one copy's throughput, σ the contention (the share of the work serialised,
//! Amdahl's fraction) and κ the coherency cost (the pairwise exchange that makes
//! throughput fall past a peak at N* = √((1−σ)/κ)).
//!
//! The fit is linear: N/X(N) = a + b(N−1) + cN(N−1) with a = 1/λ, b = σ/λ, c = κ/λ,
//! solved by ordinary least squares over the points; σ = b/a and κ = c/a, their
//! standard errors by the delta method from the coefficients' covariance. Three points
//! determine the curve exactly (no uncertainty); more give the residual variance.
//! Reference: N. J. Gunther, *Guerrilla Capacity Planning* (2007), ch. 5–6.
//!
//! Pure functions; invariants: N ≥ 1, X > 0 and finite in every point used.

use serde::{Deserialize, Serialize};

/// A fitted Universal Scalability Law.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UslFit {
    /// One copy's throughput, operations per second.
    pub lambda: f64,
    /// The contention coefficient.
    pub sigma: f64,
    /// The coefficient of coherency.
    pub kappa: f64,
    /// σ's standard error (None with exactly three points: an exact fit).
    pub sigma_se: Option<f64>,
    /// κ's standard error.
    pub kappa_se: Option<f64>,
    /// The coefficient of determination of the fitted throughputs.
    pub r2: f64,
    /// The points fitted.
    pub points: usize,
    /// The N of the greatest throughput, √((1−σ)/κ) (None when κ ≤ 0: no peak).
    pub peak_n: Option<f64>,
}

impl UslFit {
    /// The fitted throughput at `n` copies.
    pub fn throughput(&self, n: f64) -> f64 {
        self.lambda * n / (1.0 + self.sigma * (n - 1.0) + self.kappa * n * (n - 1.0))
    }
}

/// Fits the law to `(n, throughput)` points; None with fewer than three distinct N, or
/// when the points leave it undetermined.
pub fn fit(points: &[(f64, f64)]) -> Option<UslFit> {
    let pts: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|&(n, x)| n >= 1.0 && x.is_finite() && x > 0.0)
        .collect();
    let mut ns: Vec<f64> = pts.iter().map(|p| p.0).collect();
    ns.sort_by(f64::total_cmp);
    ns.dedup();
    if ns.len() < 3 {
        return None;
    }
    // Design matrix rows [1, N−1, N(N−1)], response N/X.
    let rows: Vec<[f64; 3]> = pts
        .iter()
        .map(|&(n, _)| [1.0, n - 1.0, n * (n - 1.0)])
        .collect();
    let ys: Vec<f64> = pts.iter().map(|&(n, x)| n / x).collect();
    let mut xtx = [[0.0; 3]; 3];
    let mut xty = [0.0; 3];
    for (r, y) in rows.iter().zip(&ys) {
        for i in 0..3 {
            xty[i] += r[i] * y;
            for j in 0..3 {
                xtx[i][j] += r[i] * r[j];
            }
        }
    }
    let inv = invert3(xtx)?;
    let beta: Vec<f64> = (0..3)
        .map(|i| (0..3).map(|j| inv[i][j] * xty[j]).sum())
        .collect();
    let (a, b, c) = (beta[0], beta[1], beta[2]);
    if a <= 0.0 || !a.is_finite() {
        return None;
    }
    let dof = pts.len() as f64 - 3.0;
    let (sigma, kappa) = (b / a, c / a);
    let (sigma_se, kappa_se) = if dof > 0.0 {
        let rss: f64 = rows
            .iter()
            .zip(&ys)
            .map(|(r, y)| y - (a * r[0] + b * r[1] + c * r[2]))
            .map(|e| e * e)
            .sum();
        let s2 = rss / dof;
        let cov = |i: usize, j: usize| s2 * inv[i][j];
        // The delta method for a ratio p/a.
        let ratio_se = |p: f64, i: usize| {
            let v = cov(i, i) / (a * a) + p * p * cov(0, 0) / a.powi(4)
                - 2.0 * p * cov(0, i) / a.powi(3);
            v.max(0.0).sqrt()
        };
        (Some(ratio_se(b, 1)), Some(ratio_se(c, 2)))
    } else {
        (None, None)
    };
    let mut f = UslFit {
        lambda: 1.0 / a,
        sigma,
        kappa,
        sigma_se,
        kappa_se,
        r2: f64::NAN,
        points: pts.len(),
        peak_n: (kappa > 0.0 && sigma < 1.0).then(|| ((1.0 - sigma) / kappa).sqrt()),
    };
    let mean = pts.iter().map(|p| p.1).sum::<f64>() / pts.len() as f64;
    let ss_tot: f64 = pts.iter().map(|p| (p.1 - mean).powi(2)).sum();
    let ss_res: f64 = pts
        .iter()
        .map(|&(n, x)| (x - f.throughput(n)).powi(2))
        .sum();
    f.r2 = if ss_tot > 0.0 {
        1.0 - ss_res / ss_tot
    } else {
        1.0
    };
    Some(f)
}

/// The inverse of a 3×3 matrix, None when it is singular.
fn invert3(m: [[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    let det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
        - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    let scale = m.iter().flatten().map(|x| x.abs()).fold(0.0, f64::max);
    if !det.is_finite() || det.abs() <= 1e-12 * scale.powi(3) {
        return None;
    }
    // The two indices other than `k`, in order.
    let others = |k: usize| match k {
        0 => (1, 2),
        1 => (0, 2),
        _ => (0, 1),
    };
    let mut inv = [[0.0; 3]; 3];
    for (i, row) in inv.iter_mut().enumerate() {
        for (j, x) in row.iter_mut().enumerate() {
            // The cofactor of (j, i), for the transposed adjugate.
            let ((r0, r1), (c0, c1)) = (others(j), others(i));
            let minor = m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0];
            let sign = if (i + j) % 2 == 0 { 1.0 } else { -1.0 };
            *x = sign * minor / det;
        }
    }
    Some(inv)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usl(l: f64, s: f64, k: f64, n: f64) -> f64 {
        l * n / (1.0 + s * (n - 1.0) + k * n * (n - 1.0))
    }

    #[test]
    fn recovers_sigma_and_kappa_of_exact_data() {
        let pts: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
            .iter()
            .map(|&n| (n, usl(1e7, 0.05, 0.002, n)))
            .collect();
        let f = fit(&pts).unwrap();
        assert!((f.sigma - 0.05).abs() < 1e-9, "{f:?}");
        assert!((f.kappa - 0.002).abs() < 1e-12, "{f:?}");
        assert!((f.lambda - 1e7).abs() < 1e-3, "{f:?}");
        assert!(f.r2 > 0.999_999);
        let peak = ((1.0 - 0.05) / 0.002f64).sqrt();
        assert!((f.peak_n.unwrap() - peak).abs() < 1e-6);
    }

    /// Noisy synthetic data (±1%, a fixed pseudo-random sequence): σ and κ within 10%.
    #[test]
    fn recovers_sigma_and_kappa_of_noisy_data_within_ten_percent() {
        let (sigma, kappa) = (0.08, 0.003);
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut noise = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 * 0.02 - 0.01
        };
        let mut pts = Vec::new();
        for n in 1..=48 {
            for _ in 0..3 {
                let n = n as f64;
                pts.push((n, usl(5e6, sigma, kappa, n) * (1.0 + noise())));
            }
        }
        let f = fit(&pts).unwrap();
        assert!((f.sigma / sigma - 1.0).abs() < 0.10, "{f:?}");
        assert!((f.kappa / kappa - 1.0).abs() < 0.10, "{f:?}");
        let (ss, ks) = (f.sigma_se.unwrap(), f.kappa_se.unwrap());
        assert!(ss > 0.0 && ss < sigma && ks > 0.0 && ks < kappa, "{f:?}");
    }

    #[test]
    fn three_points_fit_exactly_two_do_not() {
        let pts = [(1.0, 100.0), (2.0, 180.0), (4.0, 280.0)];
        let f = fit(&pts).unwrap();
        assert_eq!((f.sigma_se, f.kappa_se), (None, None));
        for (n, x) in pts {
            assert!((f.throughput(n) - x).abs() < 1e-6);
        }
        assert!(fit(&pts[..2]).is_none());
        assert!(fit(&[(1.0, 1.0), (1.0, 1.1), (2.0, 1.9)]).is_none());
        let linear = fit(&[(1.0, 10.0), (2.0, 20.0), (3.0, 30.0)]).unwrap();
        assert!(linear.sigma.abs() < 1e-9 && linear.peak_n.is_none());
    }
}
