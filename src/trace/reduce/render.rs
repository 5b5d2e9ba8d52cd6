//! The reduction as text: the table `trace reduce` prints, all intervals and the
//! clean ones per kind, with what was culled and why.

use super::{Reduction, Stats};

/// The reduction as a table: the memo's two sets of numbers.
pub fn render(r: &Reduction) -> String {
    use crate::draw::units::fmt_ns;
    let mut s = format!(
        "event cost {} subtracted from every interval · guard band {} · user events {} ({} lost) · kernel events {} ({} lost)\nkernel: {}\n",
        fmt_ns(r.event_cost_ns),
        fmt_ns(r.guard_ns as f64),
        r.user_events,
        r.user_lost,
        r.kernel_events,
        r.kernel_lost,
        r.kernel
    );
    if r.truncated {
        s += "warning: the trace ends in the middle of a chunk (the recording was cut short)\n";
    }
    if r.user_lost > 0 {
        s += &format!(
            "warning: {} user events were lost; intervals around them may be missing or unmatched\n",
            r.user_lost
        );
    }
    let row = |label: &str, st: &Option<Stats>| match st {
        Some(st) => format!(
            "  {label:<6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
            st.n,
            fmt_ns(st.median_ns),
            fmt_ns(st.mean_ns),
            fmt_ns(st.sd_ns),
            fmt_ns(st.min_ns),
            fmt_ns(st.p90_ns),
            fmt_ns(st.p99_ns),
            fmt_ns(st.max_ns)
        ),
        None => format!("  {label:<6} {:>10}\n", 0),
    };
    for k in &r.intervals {
        s += &format!(
            "\n{}\n  {:<6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
            k.name, "", "count", "median", "mean", "SD", "min", "p90", "p99", "max"
        );
        s += &row("all", &k.all);
        if r.culling {
            s += &row("clean", &k.clean);
            let causes: Vec<String> = k
                .culled_by
                .iter()
                .map(|(c, n)| format!("{n} {c}"))
                .collect();
            s += &format!(
                "  culled {}{}\n",
                k.culled,
                if causes.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", causes.join(", "))
                }
            );
        } else {
            s += "  clean: no kernel events in this trace, so nothing could be culled\n";
        }
        if let Some(raw) = k.raw_median_ns {
            s += &format!("  uncorrected median {}", fmt_ns(raw));
        }
        s += &format!("; unmatched ends {}, open starts {}\n", k.unmatched, k.open);
    }
    s
}
