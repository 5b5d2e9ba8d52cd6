//! The ring table as text ([`crate::derived::ring`] makes it), and the ping-pong
//! mechanisms against the pipe.

use crate::draw::text::{grid, wrap};
use crate::results::{BenchResult, RingTable};
use std::collections::BTreeMap;

/// The table as text, in the paper's columns plus ours, no line wider than `width`
/// (columns that do not fit go into a further block under the first, which repeats n).
pub fn render(t: &RingTable, width: usize) -> String {
    let label: Vec<String> = t.fixed.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let mut out = wrap(
        &format!(
            "ring table {} {} (µs per pass = seconds per 10⁶ passes, the paper's unit)",
            t.name,
            label.join(" ")
        ),
        width,
        0,
        2,
    );
    let mut rows: Vec<Vec<String>> = vec![[
        "n",
        "per hop",
        "real µs",
        "cpu µs",
        "user µs",
        "sys µs",
        "proj µs",
        "cpu/proj",
        "vol/hop",
        "inv/hop",
        "hop−pipe",
    ]
    .iter()
    .map(|c| c.to_string())
    .collect()];
    for r in &t.rows {
        rows.push(vec![
            r.n.to_string(),
            crate::results::fmt_ns(r.per_hop_ns),
            format!("{:.1}", r.real_us_per_pass),
            format!("{:.1}", r.cpu_us_per_pass),
            format!("{:.1}", r.user_us_per_pass),
            format!("{:.1}", r.sys_us_per_pass),
            format!("{:.1}", r.projected_us_per_pass),
            format!("{:.2}", r.cpu_over_projected),
            format!("{:.2}", r.vol_per_hop),
            format!("{:.2}", r.invol_per_hop),
            crate::results::fmt_ns(r.switch_ns),
        ]);
    }
    out += &grid(&rows, &[true; 11], 1, 2, width);
    out += &wrap(
        &format!("user µs, sys µs: {}", crate::os::usage::SPLIT_CAVEAT),
        width,
        2,
        4,
    );
    let knee = match t.knee_n {
        Some(n) => format!(
            "knee at n={n}: the per-hop cost exceeds the trend of the smaller rings by more than {:.0}%",
            t.knee_threshold * 100.0
        ),
        None => format!(
            "no knee: no per-hop cost exceeds the trend of the smaller rings by more than {:.0}%",
            t.knee_threshold * 100.0
        ),
    };
    out += &wrap(&knee, width, 2, 4);
    if let (Some(b), Some(r2)) = (t.growth_exponent, t.growth_r2) {
        out += &wrap(
            &format!(
                "growth: time per pass ∝ n^{b:.2} (r² {r2:.3}; 1.00 is linear, the paper's ideal)"
            ),
            width,
            2,
            4,
        );
    }
    out
}

/// For each placement, kind and fpu of a benchmark with mechanisms against the pipe
/// (`ctx.pingpong`, [`crate::bench::Tables::AgainstPipe`]) that includes the pipe, every
/// other mechanism's round trip against the pipe's (the 1999 paper's signals-vs-pipes
/// comparison), one line each.
pub fn pingpong_contrasts(results: &[BenchResult]) -> Vec<String> {
    let mut lines = Vec::new();
    let pp: Vec<&BenchResult> = results
        .iter()
        .filter(|r| {
            crate::bench::tables(&r.name) == crate::bench::Tables::AgainstPipe
                && r.median_ns().is_some()
        })
        .collect();
    let mut seen: Vec<BTreeMap<String, String>> = Vec::new();
    for r in &pp {
        let mut fixed = r.params.clone();
        fixed.remove("mechanism");
        if seen.contains(&fixed) {
            continue;
        }
        seen.push(fixed.clone());
        let same = |r: &&&BenchResult| {
            let mut f = r.params.clone();
            f.remove("mechanism");
            f == fixed
        };
        let Some(pipe) = pp
            .iter()
            .filter(same)
            .find(|r| r.params.get("mechanism").map(String::as_str) == Some("pipe"))
            .and_then(|r| r.median_ns())
        else {
            continue;
        };
        let label: Vec<String> = fixed.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let others: Vec<String> = pp
            .iter()
            .filter(same)
            .filter_map(|r| {
                let m = r.params.get("mechanism")?;
                let rt = r.median_ns()?;
                let paired = r
                    .measured
                    .as_ref()
                    .and_then(|x| x.paired.as_ref())
                    .filter(|p| p.reference == "mechanism=pipe");
                (m != "pipe").then(|| match paired {
                    // Measured in pairs with the pipe: the drift cancelled.
                    Some(p) => format!(
                        "{m} {:.3}× [{:.3}–{:.3}] paired",
                        p.ratio, p.ratio_low, p.ratio_high
                    ),
                    None => format!("{m} {:.2}×", rt / pipe),
                })
            })
            .collect();
        if !others.is_empty() {
            lines.push(format!(
                "ping-pong vs pipe ({}, pipe round trip {}): {}",
                label.join(" "),
                crate::results::fmt_ns(pipe),
                others.join(", ")
            ));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paired_row_gives_its_ratio_with_its_interval() {
        let mut run = crate::results::tests::run_with_medians(&[
            ("ctx.pingpong", 5000.0),
            ("ctx.pingpong", 5100.0),
            ("ctx.pingpong", 9000.0),
        ]);
        for (r, m) in run.results.iter_mut().zip(["pipe", "futex", "unix"]) {
            r.params.insert("mechanism".into(), m.into());
        }
        let m = run.results[1].measured.as_mut().unwrap();
        m.paired = Some(crate::results::Paired {
            reference: "mechanism=pipe".into(),
            ratio: 0.97,
            ratio_low: 0.96,
            ratio_high: 0.98,
            diff_ns: -150.0,
            diff_low_ns: -200.0,
            diff_high_ns: -100.0,
            reference_ns: 5000.0,
            rounds: 8,
            pairs: 400,
            round_ratios: vec![0.97; 8],
            sides: "thread".into(),
        });
        let lines = pingpong_contrasts(&run.results);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].contains("futex 0.970× [0.960–0.980] paired"),
            "{lines:?}"
        );
        assert!(lines[0].contains("unix 1.80×"), "{lines:?}");
    }
}
