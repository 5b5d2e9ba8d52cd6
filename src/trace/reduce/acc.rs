//! Streaming statistics in constant memory: [`Acc`] (count, exact mean and SD by
//! Welford, min, max) over a log-linear [`Hist`] for the quantiles, summarised as
//! [`Stats`].

use serde::Serialize;

/// Streaming statistics of one set of values.
#[derive(Debug, Clone, Default)]
pub struct Acc {
    n: u64,
    mean: f64,
    m2: f64,
    min: f64,
    max: f64,
    hist: Hist,
}

impl Acc {
    /// Adds a value.
    pub fn add(&mut self, v: f64) {
        self.n += 1;
        if self.n == 1 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        let d = v - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (v - self.mean);
        self.hist.add(v);
    }

    /// The summary, or None without values.
    pub fn summary(&self) -> Option<Stats> {
        (self.n > 0).then(|| Stats {
            n: self.n,
            median_ns: self.hist.quantile(0.5, self.min, self.max),
            mean_ns: self.mean,
            sd_ns: if self.n > 1 {
                (self.m2 / (self.n - 1) as f64).sqrt()
            } else {
                0.0
            },
            min_ns: self.min,
            max_ns: self.max,
            p90_ns: self.hist.quantile(0.9, self.min, self.max),
            p99_ns: self.hist.quantile(0.99, self.min, self.max),
        })
    }
}

/// A log-linear histogram of non-negative values (negative ones count as 0): exact
/// integers below 2048 ns, then 1024 buckets per power of two.
#[derive(Debug, Clone, Default)]
pub struct Hist {
    counts: Vec<u64>,
    n: u64,
}

const SUB: u64 = 1024;

fn bucket(v: u64) -> usize {
    if v < 2 * SUB {
        return v as usize;
    }
    let top = 63 - v.leading_zeros() as u64; // v in [2^top, 2^(top+1))
    let shift = top - 10; // so that v >> shift is in [SUB, 2 SUB)
    (2 * SUB + (shift - 1) * SUB + ((v >> shift) - SUB)) as usize
}

fn bucket_mid(i: usize) -> f64 {
    let i = i as u64;
    if i < 2 * SUB {
        return i as f64;
    }
    let shift = (i - 2 * SUB) / SUB + 1;
    let m = (i - 2 * SUB) % SUB + SUB;
    ((m as f64) + 0.5) * (1u64 << shift) as f64
}

impl Hist {
    fn add(&mut self, v: f64) {
        let b = bucket(v.max(0.0).round() as u64);
        if b >= self.counts.len() {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] += 1;
        self.n += 1;
    }

    /// The `q` quantile (nearest rank), clamped to the exact extremes.
    fn quantile(&self, q: f64, min: f64, max: f64) -> f64 {
        if self.n == 0 {
            return f64::NAN;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return bucket_mid(i).clamp(min.max(0.0), max.max(0.0));
            }
        }
        max
    }
}

/// A summary of values, ns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    /// How many.
    pub n: u64,
    /// Median.
    pub median_ns: f64,
    /// Mean.
    pub mean_ns: f64,
    /// Standard deviation.
    pub sd_ns: f64,
    /// Minimum.
    pub min_ns: f64,
    /// Maximum.
    pub max_ns: f64,
    /// 90th percentile.
    pub p90_ns: f64,
    /// 99th percentile.
    pub p99_ns: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_histogram_is_exact_low_and_within_a_twentieth_percent_high() {
        for v in [0u64, 1, 2047, 2048, 5000, 123_456, 9_876_543_210] {
            let mid = bucket_mid(bucket(v));
            assert!(
                (mid - v as f64).abs() <= (v as f64 / 2048.0).max(0.5),
                "{v} -> {mid}"
            );
        }
        let mut a = Acc::default();
        for v in 1..=1000 {
            a.add(v as f64);
        }
        let s = a.summary().unwrap();
        assert_eq!(
            (s.n, s.median_ns, s.min_ns, s.max_ns, s.p90_ns),
            (1000, 500.0, 1.0, 1000.0, 900.0)
        );
        assert!((s.mean_ns - 500.5).abs() < 1e-9);
        assert!((s.sd_ns - 288.8194360957494).abs() < 1e-6);
    }
}
