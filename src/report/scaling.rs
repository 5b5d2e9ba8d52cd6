//! A scaling table ([`crate::derived::scaling`] makes it) as text, and the note under a
//! result run as copies.

use crate::draw::text::{count, grid, wrap};
use crate::results::{fmt_ns, CopiesFigures, ScalingTable};

/// The note under a result run as copies: where they ran, each copy's figure, the
/// slowest, the spread and the throughput.
pub fn copies_note(c: &CopiesFigures) -> String {
    let each: Vec<String> = c.copy_ns.iter().map(|&x| fmt_ns(x)).collect();
    let place = if c.cpus.is_empty() {
        "measured as a single instance".to_string()
    } else {
        let cpus: Vec<String> = c.cpus.iter().map(usize::to_string).collect();
        format!(
            "pinned to CPUs {}{}",
            cpus.join(","),
            if c.oversubscribed {
                format!(
                    ", oversubscribed ({} copies on {})",
                    c.n,
                    count(c.online, "CPU", "CPUs")
                )
            } else {
                String::new()
            }
        )
    };
    let what = match (c.mode.as_str(), c.n) {
        ("process", 1) => "copy (process)",
        ("process", _) => "copies (processes)",
        (_, 1) => "copy (thread)",
        _ => "copies (threads)",
    };
    format!(
        "{} {what} {place}: per copy {} (copies {}), slowest {}, spread {:.1}%, {} in all",
        c.n,
        fmt_ns(c.per_copy_ns),
        each.join(", "),
        fmt_ns(c.slowest_ns),
        c.spread * 100.0,
        fmt_rate(c.throughput_ops_s)
    )
}

pub use crate::draw::units::fmt_rate;

/// A scaling table as text: the points, then the fit or why there is none; no line
/// wider than `width` (columns that do not fit go into a further block).
pub fn render(t: &ScalingTable, width: usize) -> String {
    let fixed: Vec<String> = t.fixed.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let mut s = wrap(
        &format!("scaling {} ({})", t.name, fixed.join(" ")),
        width,
        0,
        2,
    );
    let mut rows: Vec<Vec<String>> = vec![[
        "copies",
        "per copy",
        "slowest",
        "throughput",
        "efficiency",
        "cpus",
    ]
    .iter()
    .map(|c| c.to_string())
    .collect()];
    for p in &t.points {
        let cpus: Vec<String> = p.cpus.iter().map(usize::to_string).collect();
        rows.push(vec![
            p.n.to_string(),
            fmt_ns(p.per_copy_ns),
            fmt_ns(p.slowest_ns),
            fmt_rate(p.throughput_ops_s),
            p.efficiency
                .map_or("–".to_string(), |e| format!("{:.1}%", e * 100.0)),
            format!(
                "{}{}",
                if cpus.is_empty() {
                    "-".into()
                } else {
                    cpus.join(",")
                },
                if p.oversubscribed {
                    " (oversubscribed)"
                } else {
                    ""
                }
            ),
        ]);
    }
    s += &grid(&rows, &[true, true, true, true, true, false], 1, 2, width);
    match (&t.fit, &t.no_fit) {
        (Some(f), _) => {
            let se = |x: Option<f64>| {
                x.map_or(" (exact: 3 points)".into(), |e| format!(" ± {e:.2e}"))
            };
            let fit = format!(
                "USL fit over {} points: σ (contention) {:.4}{}, κ (coherency) {:.2e}{}, \
                 λ {}, R² {:.4}, {}",
                f.points,
                f.sigma,
                se(f.sigma_se),
                f.kappa,
                se(f.kappa_se),
                fmt_rate(f.lambda),
                f.r2,
                match f.peak_n {
                    Some(n) => format!("peak throughput at N ≈ {n:.1}"),
                    None => "no peak (κ ≤ 0)".into(),
                }
            );
            s += &wrap(&fit, width, 2, 4);
        }
        (None, Some(why)) => s += &wrap(why, width, 2, 4),
        (None, None) => {}
    }
    s
}
