//! Batch-size calibration as a small state machine: grow the batch until one batch
//! lasts at least the target duration, then collect with that size.
//!
//! It only decides sizes from measured durations; it never reads a clock itself.

use crate::method;

/// Where calibration stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Calibration {
    /// Still tuning: time a batch of `k` next.
    Tuning {
        /// The next batch size to time.
        k: u64,
    },
    /// A batch of `k` reached the target; time one more of the same size before
    /// accepting it, so a cold first batch (page faults, a cold cache) cannot settle the
    /// size.
    Confirming {
        /// The batch size to confirm.
        k: u64,
    },
    /// Done: collect with batches of `k`.
    Done {
        /// The batch size to collect with.
        k: u64,
    },
}

/// The largest batch size calibration will choose.
pub const MAX_BATCH: u64 = 1 << 32;

impl Calibration {
    /// The starting state: one operation per batch.
    pub fn start() -> Calibration {
        Calibration::Tuning { k: 1 }
    }

    /// The next state after a batch of the current size lasted `batch_ns`.
    ///
    /// A batch at or above `target_ns` ends tuning. Below it, the size grows toward
    /// 1.2× the target by the measured rate, by at least 2× and at most 100× a step
    /// (a first batch is often slow and cold; a too-fast one may be below the clock's
    /// resolution and read as 0).
    pub fn next(self, batch_ns: f64, target_ns: f64) -> Calibration {
        let (k, confirming) = match self {
            Calibration::Done { .. } => return self,
            Calibration::Tuning { k } => (k, false),
            Calibration::Confirming { k } => (k, true),
        };
        if batch_ns >= target_ns || k >= MAX_BATCH {
            return if confirming || k >= MAX_BATCH {
                Calibration::Done { k }
            } else {
                Calibration::Confirming { k }
            };
        }
        let want = if batch_ns > 0.0 {
            (k as f64 * method::BATCH_AIM * target_ns / batch_ns).ceil() as u64
        } else {
            k.saturating_mul(method::BATCH_GROWTH_MAX)
        };
        // A confirmation that came in short was a slow first batch: resize from the
        // faster rate (it may be less than a doubling).
        let lo = if confirming {
            k + 1
        } else {
            k.saturating_mul(2)
        };
        let k = want
            .clamp(lo, k.saturating_mul(method::BATCH_GROWTH_MAX))
            .min(MAX_BATCH);
        Calibration::Tuning { k }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_operations_stay_at_one() {
        let s = Calibration::start().next(2e6, 1e4);
        assert_eq!(s, Calibration::Confirming { k: 1 });
        assert_eq!(s.next(2e6, 1e4), Calibration::Done { k: 1 });
    }

    #[test]
    fn a_slow_first_batch_does_not_settle_the_size() {
        // The first call faults and takes 20 µs; the next takes 100 ns: grow.
        let s = Calibration::start().next(20_000.0, 10_000.0);
        assert_eq!(s, Calibration::Confirming { k: 1 });
        let s = s.next(100.0, 10_000.0);
        assert_eq!(s, Calibration::Tuning { k: 100 });
    }

    #[test]
    fn grows_toward_target_with_bounded_steps() {
        // 100 ns per op, target 10 µs: 1 -> 100 (capped at 100x, want 120), then done.
        let s = Calibration::start().next(100.0, 10_000.0);
        assert_eq!(s, Calibration::Tuning { k: 100 });
        let s = s.next(10_000.0, 10_000.0);
        assert_eq!(s, Calibration::Confirming { k: 100 });
        assert_eq!(s.next(10_100.0, 10_000.0), Calibration::Done { k: 100 });
        // At 1 µs for k=4 and target 10 µs: want ceil(4*1.2*10) = 48.
        assert_eq!(
            Calibration::Tuning { k: 4 }.next(1000.0, 10_000.0),
            Calibration::Tuning { k: 48 }
        );
        // A batch that read as zero grows 100x.
        assert_eq!(
            Calibration::Tuning { k: 3 }.next(0.0, 10.0),
            Calibration::Tuning { k: 300 }
        );
        // Slightly short grows at least 2x.
        assert_eq!(
            Calibration::Tuning { k: 10 }.next(9_900.0, 10_000.0),
            Calibration::Tuning { k: 20 }
        );
    }
}
