//! Numbers with their units, as every renderer prints them: times in ns, µs, ms or s
//! with 3–4 significant digits, and rates in k/M/G operations per second.

/// The unit [`fmt_ns`] uses for a value: its size in ns and its name.
pub fn unit_for(ns: f64) -> (f64, &'static str) {
    match ns.abs() {
        a if a < 1e3 => (1.0, "ns"),
        a if a < 1e6 => (1e3, "µs"),
        a if a < 1e9 => (1e6, "ms"),
        _ => (1e9, "s"),
    }
}

/// Formats nanoseconds with a unit that keeps 3–4 significant digits.
pub fn fmt_ns(ns: f64) -> String {
    if !ns.is_finite() {
        return "-".into();
    }
    let (scale, unit) = unit_for(ns);
    let decimals = if scale == 1.0 && ns.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{:.*} {unit}", decimals, ns / scale)
}

/// Operations per second, in k/M/G.
pub fn fmt_rate(x: f64) -> String {
    if !x.is_finite() {
        return "–".into();
    }
    let (v, u) = if x >= 1e9 {
        (x / 1e9, "G")
    } else if x >= 1e6 {
        (x / 1e6, "M")
    } else if x >= 1e3 {
        (x / 1e3, "k")
    } else {
        (x, "")
    };
    format!("{v:.3} {u}op/s")
}
