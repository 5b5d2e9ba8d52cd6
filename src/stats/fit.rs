//! Straight-line and power-law fits, e.g. of cost against buffer size or
//! against the number of threads, to report a per-unit slope or a scaling
//! exponent.
//!
//! Pure functions only: no I/O, no clocks, no knowledge of benchmarks.

/// Result of an ordinary least-squares line `y = intercept + slope * x`.
///
/// Invariants: `0 <= r2 <= 1`; `slope_stderr >= 0` (infinite when there are
/// no residual degrees of freedom).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinearFit {
    /// Fitted slope.
    pub slope: f64,
    /// Fitted intercept (value at `x = 0`).
    pub intercept: f64,
    /// Coefficient of determination `1 - SSE/SST`; 1 when all `y` are equal
    /// (the line fits them exactly).
    pub r2: f64,
    /// Standard error of the slope `sqrt(SSE / (n - 2) / Sxx)`;
    /// `f64::INFINITY` when `n == 2` (serde_json writes that as `null`).
    pub slope_stderr: f64,
}

/// Ordinary least squares `y = intercept + slope * x` (centred sums, so large
/// offsets in `x` or `y` do not cost precision).
///
/// `None` when the slices differ in length, there are fewer than 2 points,
/// any value is not finite, or all `x` are equal. Cost O(n).
pub fn linear_fit(xs: &[f64], ys: &[f64]) -> Option<LinearFit> {
    let n = xs.len();
    if n != ys.len() || n < 2 || xs.iter().chain(ys).any(|v| !v.is_finite()) {
        return None;
    }
    let nf = n as f64;
    let mx = xs.iter().sum::<f64>() / nf;
    let my = ys.iter().sum::<f64>() / nf;
    let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in xs.iter().zip(ys) {
        let (dx, dy) = (x - mx, y - my);
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    if sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let sse: f64 = xs
        .iter()
        .zip(ys)
        .map(|(x, y)| {
            let e = y - intercept - slope * x;
            e * e
        })
        .sum();
    let r2 = if syy > 0.0 {
        (1.0 - sse / syy).clamp(0.0, 1.0)
    } else {
        1.0
    };
    let slope_stderr = if n > 2 {
        (sse / (nf - 2.0) / sxx).sqrt()
    } else {
        f64::INFINITY
    };
    Some(LinearFit {
        slope,
        intercept,
        r2,
        slope_stderr,
    })
}

/// Power law `y = a * x^b` fitted as the line `ln y = ln a + b ln x`: the
/// result's `slope` is the exponent `b`, `intercept` is `ln a`, and `r2` and
/// `slope_stderr` are on the log-log scale.
///
/// `None` when any value is not strictly positive and finite, or for the same
/// reasons as [`linear_fit`].
pub fn power_law(xs: &[f64], ys: &[f64]) -> Option<LinearFit> {
    if xs.iter().chain(ys).any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    let lx: Vec<f64> = xs.iter().map(|x| x.ln()).collect();
    let ly: Vec<f64> = ys.iter().map(|y| y.ln()).collect();
    linear_fit(&lx, &ly)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn line_by_hand() {
        // x 1..5, y 2 4 5 4 5: means 3 and 4; Sxx = 10;
        // Sxy = (-2)(-2) + (-1)(0) + 0 + (1)(0) + (2)(1) = 6 -> slope .6, intercept 4 - 1.8 = 2.2
        // fitted 2.8 3.4 4.0 4.6 5.2, residuals -.8 .6 1 -.6 -.2 -> SSE = 2.4; SST = 6
        // r2 = 1 - 2.4/6 = .6; stderr = sqrt(2.4/3/10) = sqrt(.08) = .2828427
        let f =
            linear_fit(&[1.0, 2.0, 3.0, 4.0, 5.0], &[2.0, 4.0, 5.0, 4.0, 5.0]).unwrap();
        assert!(close(f.slope, 0.6));
        assert!(close(f.intercept, 2.2));
        assert!(close(f.r2, 0.6));
        assert!(close(f.slope_stderr, 0.08f64.sqrt()));
    }

    #[test]
    fn exact_line_and_degenerate_inputs() {
        // y = 7 - 2x through three points: SSE 0 -> r2 1, stderr 0
        let f = linear_fit(&[0.0, 1.0, 3.0], &[7.0, 5.0, 1.0]).unwrap();
        assert!(close(f.slope, -2.0) && close(f.intercept, 7.0));
        assert!(close(f.r2, 1.0) && close(f.slope_stderr, 0.0));
        // two points: exact, but no degrees of freedom for the error
        let two = linear_fit(&[1.0, 3.0], &[10.0, 14.0]).unwrap();
        assert!(close(two.slope, 2.0) && close(two.intercept, 8.0));
        assert_eq!(two.slope_stderr, f64::INFINITY);
        // flat y: slope 0, r2 defined as 1
        let flat = linear_fit(&[1.0, 2.0, 3.0], &[4.0, 4.0, 4.0]).unwrap();
        assert_eq!((flat.slope, flat.r2), (0.0, 1.0));
        assert!(linear_fit(&[1.0], &[1.0]).is_none());
        assert!(linear_fit(&[2.0, 2.0, 2.0], &[1.0, 2.0, 3.0]).is_none());
        assert!(linear_fit(&[1.0, 2.0], &[1.0]).is_none());
        assert!(linear_fit(&[1.0, f64::NAN], &[1.0, 2.0]).is_none());
    }

    #[test]
    fn large_offset_keeps_precision() {
        // x = 1e9 + i, y = 3 + 0.5 i: the naive sum-of-squares formula loses all
        // digits here; centred sums recover slope .5 and intercept 3 - .5e9.
        let xs: Vec<f64> = (0..10).map(|i| 1e9 + f64::from(i)).collect();
        let ys: Vec<f64> = (0..10).map(|i| 3.0 + 0.5 * f64::from(i)).collect();
        let f = linear_fit(&xs, &ys).unwrap();
        assert!(close(f.slope, 0.5), "{f:?}");
        assert!((f.intercept - (3.0 - 0.5e9)).abs() < 1e-3);
    }

    #[test]
    fn power_law_by_hand() {
        // y = 3 x^2 exactly: b = 2, ln a = ln 3 = 1.0986123, r2 = 1
        let f = power_law(&[1.0, 2.0, 4.0, 8.0], &[3.0, 12.0, 48.0, 192.0]).unwrap();
        assert!(close(f.slope, 2.0) && close(f.intercept, 3f64.ln()) && close(f.r2, 1.0));
        // ln x = 0 1 2, ln y = 0 1 3: means 1 and 4/3; Sxx = 2;
        // Sxy = (-1)(-4/3) + 0 + (1)(5/3) = 3 -> b = 1.5, ln a = 4/3 - 1.5 = -1/6
        // residuals 1/6 -1/3 1/6 -> SSE = 1/6; SST = 16/9 + 1/9 + 25/9 = 14/3
        // r2 = 1 - (1/6)/(14/3) = 27/28; stderr = sqrt((1/6)/1/2) = sqrt(1/12)
        let e = std::f64::consts::E;
        let g = power_law(&[1.0, e, e * e], &[1.0, e, e * e * e]).unwrap();
        assert!(close(g.slope, 1.5) && close(g.intercept, -1.0 / 6.0));
        assert!(close(g.r2, 27.0 / 28.0));
        assert!(close(g.slope_stderr, (1.0f64 / 12.0).sqrt()));
        assert!(power_law(&[1.0, 0.0], &[1.0, 2.0]).is_none());
        assert!(power_law(&[1.0, 2.0], &[1.0, -2.0]).is_none());
    }
}
