//! Axes: linear or log10 scales, nice tick steps, and tick labels that carry their
//! unit (ns, µs, ms, s; bytes).

use crate::draw::units::unit_for;

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Equal distances for equal differences.
    Linear,
    /// Equal distances for equal ratios; values ≤ 0 are not drawn.
    Log,
}

/// What an axis's values are, which decides how its ticks are chosen and labelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Units {
    /// Nanoseconds, labelled in ns, µs, ms or s.
    Ns,
    /// A plain number.
    Number,
    /// Bytes, labelled B, KiB, MiB; ticks at powers of two.
    Bytes,
    /// A ratio, labelled `1.05×`.
    Ratio,
}

/// An axis: its title, scale, domain and ticks.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub(super) title: String,
    pub(super) scale: Scale,
    pub(super) units: Units,
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) ticks: Vec<(f64, String)>,
}

impl Axis {
    /// An axis whose domain covers `values` (non-finite values, and values ≤ 0 on a log
    /// axis, are ignored), widened to nice tick values.
    pub fn fit<I: IntoIterator<Item = f64>>(
        title: &str,
        scale: Scale,
        units: Units,
        values: I,
    ) -> Axis {
        Axis::build(title, scale, units, values, 0.0)
    }

    /// Like [`Axis::fit`], but the domain is the data's range with a margin of `pad`
    /// (a fraction of the range, on the axis's scale) on each side, ticks inside it: marks
    /// at the ends of the data stay clear of the frame.
    pub fn padded<I: IntoIterator<Item = f64>>(
        title: &str,
        scale: Scale,
        units: Units,
        values: I,
        pad: f64,
    ) -> Axis {
        Axis::build(title, scale, units, values, pad)
    }

    fn build<I: IntoIterator<Item = f64>>(
        title: &str,
        scale: Scale,
        units: Units,
        values: I,
        pad: f64,
    ) -> Axis {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values {
            if v.is_finite() && (scale == Scale::Linear || v > 0.0) {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
        let ticks_of = |lo: f64, hi: f64| match scale {
            Scale::Linear => linear_ticks(lo, hi, units),
            Scale::Log => log_ticks(lo, hi, units),
        };
        let (mut dom_lo, mut dom_hi, mut ticks) = ticks_of(lo, hi);
        if pad > 0.0 {
            let (a, b) = widen(lo, hi, scale);
            let (a, b) = match scale {
                Scale::Linear => (a - pad * (b - a), b + pad * (b - a)),
                Scale::Log => {
                    let (la, lb) = (a.log10(), b.log10());
                    let m = pad * (lb - la);
                    (10f64.powf(la - m), 10f64.powf(lb + m))
                }
            };
            // The data's own ticks, else the padded range's, that fall inside.
            let within = |t: &[f64]| -> Vec<f64> {
                t.iter().copied().filter(|v| *v >= a && *v <= b).collect()
            };
            let mut inside = within(&ticks);
            if inside.len() < 2 {
                inside = within(&ticks_of(a, b).2);
            }
            if inside.len() >= 2 {
                (dom_lo, dom_hi, ticks) = (a, b, inside);
            }
        }
        let (lo, hi) = (dom_lo, dom_hi);
        let ticks = ticks
            .iter()
            .map(|&t| (t, tick_label(t, &ticks, scale, units)))
            .collect();
        Axis {
            title: title.to_string(),
            scale,
            units,
            lo,
            hi,
            ticks,
        }
    }

    /// A categorical axis: `labels[i]` at position `i`, the first at the top of a
    /// vertical axis (for one row per item).
    pub fn categories(title: &str, labels: &[String]) -> Axis {
        let n = labels.len().max(1) as f64;
        Axis {
            title: title.to_string(),
            scale: Scale::Linear,
            units: Units::Number,
            lo: n - 0.5,
            hi: -0.5,
            ticks: labels
                .iter()
                .enumerate()
                .map(|(i, l)| (i as f64, l.clone()))
                .collect(),
        }
    }

    /// The domain, low and high end.
    pub fn domain(&self) -> (f64, f64) {
        (self.lo, self.hi)
    }

    /// The ticks: value and label.
    pub fn ticks(&self) -> &[(f64, String)] {
        &self.ticks
    }

    /// The scale.
    pub fn scale(&self) -> Scale {
        self.scale
    }

    /// Where `v` falls, 0 at the low end and 1 at the high end; `None` when it cannot
    /// be drawn (not finite, or ≤ 0 on a log axis).
    pub fn frac(&self, v: f64) -> Option<f64> {
        if !v.is_finite() {
            return None;
        }
        let f = match self.scale {
            Scale::Linear => (v - self.lo) / (self.hi - self.lo),
            Scale::Log if v > 0.0 => {
                (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
            }
            Scale::Log => return None,
        };
        f.is_finite().then_some(f)
    }

    /// The value at fraction `f` of the axis (the inverse of [`Axis::frac`]).
    pub fn value_at(&self, f: f64) -> f64 {
        match self.scale {
            Scale::Linear => self.lo + f * (self.hi - self.lo),
            Scale::Log => {
                10f64.powf(self.lo.log10() + f * (self.hi.log10() - self.lo.log10()))
            }
        }
    }
}

/// Heckbert's nice number: 1, 2, 2.5, 5 or 10 times a power of ten, at least `x`.
pub fn nice_step(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return 1.0;
    }
    let p = 10f64.powf(x.log10().floor());
    let f = x / p;
    let m = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .find(|&m| f <= m * (1.0 + 1e-9))
        .unwrap_or(10.0);
    m * p
}

/// Ticks for a linear axis: about six intervals of a nice step, the domain widened to
/// whole steps. An empty or one-value range is widened first.
pub fn linear_ticks(lo: f64, hi: f64, units: Units) -> (f64, f64, Vec<f64>) {
    let (lo, hi) = widen(lo, hi, Scale::Linear);
    let raw = (hi - lo) / 6.0;
    let step = if units == Units::Bytes && raw >= 1.0 {
        2f64.powf(raw.log2().ceil())
    } else {
        nice_step(raw)
    };
    let first = (lo / step + 1e-9).floor() as i64;
    let last = (hi / step - 1e-9).ceil() as i64;
    let ticks: Vec<f64> = (first..=last).map(|k| clean(k as f64 * step)).collect();
    (first as f64 * step, last as f64 * step, ticks)
}

/// Ticks for a log axis. Bytes get powers of two (every second or third power over a
/// wide range); other units get decades (every k-th over many decades), 1-2-5 steps
/// over fewer than three decades, and linear nice ticks within one decade.
pub fn log_ticks(lo: f64, hi: f64, units: Units) -> (f64, f64, Vec<f64>) {
    let (lo, hi) = widen(lo, hi, Scale::Log);
    if units == Units::Bytes {
        let (a, b) = (lo.log2().floor() as i32, hi.log2().ceil() as i32);
        // Counted down from the top, so 64 KiB with every second power gives powers of 4.
        let every = ((b - a) as f64 / 8.0).ceil().max(1.0) as i32;
        let mut ticks: Vec<f64> = (0..)
            .map(|k| b - k * every)
            .take_while(|&e| e >= a)
            .map(|e| 2f64.powi(e))
            .collect();
        ticks.reverse();
        return (2f64.powi(a), 2f64.powi(b), ticks);
    }
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    if hi / lo < 8.0 {
        // Within about a decade: ordinary steps, positioned on the log scale.
        let (l, h, t) = linear_ticks(lo, hi, units);
        if l > 0.0 {
            return (l, h, t);
        }
        let t: Vec<f64> = t.into_iter().filter(|&v| v > 0.0).collect();
        return (t[0].min(lo), h, t);
    }
    if b - a <= 2 {
        let mut ticks = Vec::new();
        for e in a..=b {
            for m in [1.0, 2.0, 5.0] {
                ticks.push(clean(m * 10f64.powi(e)));
            }
        }
        let first = ticks
            .iter()
            .rposition(|&t| t <= lo * (1.0 + 1e-9))
            .unwrap_or(0);
        let last = ticks
            .iter()
            .position(|&t| t >= hi * (1.0 - 1e-9))
            .unwrap_or(ticks.len() - 1);
        let ticks = ticks[first..=last].to_vec();
        return (ticks[0], ticks[ticks.len() - 1], ticks);
    }
    let every = ((b - a) as f64 / 8.0).ceil().max(1.0) as i32;
    let a = a - a.rem_euclid(every);
    let b = b + (every - (b - a).rem_euclid(every)) % every;
    let ticks = (a..=b)
        .step_by(every as usize)
        .map(|e| clean(10f64.powi(e)))
        .collect();
    (10f64.powi(a), 10f64.powi(b), ticks)
}

/// A range that can hold ticks: empty → a default, one value → ±5% (or ±1).
pub(super) fn widen(lo: f64, hi: f64, scale: Scale) -> (f64, f64) {
    if !(lo.is_finite() && hi.is_finite()) || lo > hi {
        return match scale {
            Scale::Linear => (0.0, 1.0),
            Scale::Log => (1.0, 10.0),
        };
    }
    if hi > lo {
        return (lo, hi);
    }
    match scale {
        Scale::Log => (lo / 1.1, hi * 1.1),
        Scale::Linear if lo == 0.0 => (0.0, 1.0),
        Scale::Linear => (lo - lo.abs() * 0.05, hi + hi.abs() * 0.05),
    }
}

/// Rounds away floating-point dust (0.30000000000000004 → 0.3).
pub(super) fn clean(v: f64) -> f64 {
    if v == 0.0 {
        return 0.0;
    }
    let digits = 12 - v.abs().log10().floor() as i32;
    let p = 10f64.powi(digits.clamp(-300, 300));
    (v * p).round() / p
}

/// The fewest decimals (up to 6) that print `x` exactly enough.
pub(super) fn decimals_for(x: f64) -> usize {
    (0..6)
        .find(|&d| {
            let s = x * 10f64.powi(d as i32);
            (s - s.round()).abs() < 1e-6 * s.abs().max(1.0)
        })
        .unwrap_or(6)
}

/// `v` with `d` decimals.
pub(super) fn fixed(v: f64, d: usize) -> String {
    let s = format!("{v:.d$}");
    if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
        s[1..].to_string()
    } else {
        s
    }
}

/// A tick's label. Linear axes print every tick with the same unit and decimals (from
/// the step); log axes print each tick with its own unit and the fewest decimals.
pub(super) fn tick_label(v: f64, ticks: &[f64], scale: Scale, units: Units) -> String {
    let step = match (scale, ticks) {
        (Scale::Linear, [a, b, ..]) => Some(b - a),
        _ => None,
    };
    let biggest = ticks.iter().fold(0f64, |m, t| m.max(t.abs()));
    match units {
        Units::Ns => {
            let (size, unit) = unit_for(if step.is_some() { biggest } else { v });
            let d = step.map_or(decimals_for(v / size), |s| decimals_for(s / size));
            format!("{} {unit}", fixed(v / size, d))
        }
        Units::Number => number(v, step),
        Units::Ratio => format!("{}×", number(v, step)),
        Units::Bytes => bytes(v),
    }
}

pub(super) fn number(v: f64, step: Option<f64>) -> String {
    let d = step.map_or(decimals_for(v), decimals_for);
    if v.abs() >= 1e6 && step.is_none() {
        return format!("1e{}", v.log10().round());
    }
    fixed(v, d)
}

/// Bytes in B, KiB, MiB or GiB with at most two decimals.
pub fn bytes(v: f64) -> String {
    let (size, unit) = match v.abs() {
        a if a < 1024.0 => (1.0, "B"),
        a if a < 1024.0 * 1024.0 => (1024.0, "KiB"),
        a if a < 1024.0 * 1024.0 * 1024.0 => (1024.0 * 1024.0, "MiB"),
        _ => (1024.0 * 1024.0 * 1024.0, "GiB"),
    };
    let x = v / size;
    format!("{} {unit}", fixed(x, decimals_for(x).min(2)))
}
