//! The ring table: Sloan's columns for every sweep over n of a benchmark whose entry
//! asks for it (`ctx.ring`), with the
//! projection from the smallest ring, the knee, and the growth exponent. A pure
//! function of the results (the per-hop medians and each result's accounting facts).

use crate::bench::Tables;
use crate::results::{BenchResult, RingRow, RingTable};
use crate::stats::fit::{linear_fit, power_law};
use std::collections::BTreeMap;

/// A knee is where the per-hop cost exceeds the trend of the smaller rings by more
/// than this fraction.
pub const KNEE_THRESHOLD: f64 = 0.20;

/// The index of the first point whose `y` exceeds both the least-squares line through
/// the points before it (extrapolated to its `x`) and the previous `y` by more than
/// `threshold`; at least two earlier points are needed. Points must be sorted by `x`.
pub fn knee(points: &[(f64, f64)], threshold: f64) -> Option<usize> {
    (2..points.len()).find(|&i| {
        let (xs, ys): (Vec<f64>, Vec<f64>) = points[..i].iter().copied().unzip();
        let trend = linear_fit(&xs, &ys)
            .map(|f| f.intercept + f.slope * points[i].0)
            .unwrap_or(f64::NAN);
        let expected = trend.max(points[i - 1].1);
        expected > 0.0 && points[i].1 > expected * (1.0 + threshold)
    })
}

/// The exponent of a power law `y = a·n^b` through the points, with its r².
pub fn growth(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    if points.len() < 2 {
        return None;
    }
    let (xs, ys): (Vec<f64>, Vec<f64>) = points.iter().copied().unzip();
    power_law(&xs, &ys).map(|f| (f.slope, f.r2))
}

/// The ring tables among `results`: one per combination of the other parameters.
pub fn tables(results: &[BenchResult]) -> Vec<RingTable> {
    let mut groups: Vec<(BTreeMap<String, String>, Vec<&BenchResult>)> = Vec::new();
    let ring = |r: &&BenchResult| crate::bench::tables(&r.name) == Tables::Ring;
    for r in results.iter().filter(ring) {
        // A ring without its accounting run (a run interrupted before it) has no row:
        // its columns would be unknown, and a table is only of what was measured.
        if r.median_ns().is_none() || r.fact("cpu_us_per_pass").is_none() {
            continue;
        }
        let mut fixed = r.params.clone();
        fixed.remove("n");
        match groups.iter_mut().find(|(k, _)| *k == fixed) {
            Some((_, v)) => v.push(r),
            None => groups.push((fixed, vec![r])),
        }
    }
    groups
        .into_iter()
        .map(|(fixed, mut rs)| {
            rs.sort_by_key(|r| n_of(r));
            table(fixed, &rs)
        })
        .collect()
}

fn n_of(r: &BenchResult) -> u64 {
    r.params.get("n").and_then(|v| v.parse().ok()).unwrap_or(0)
}

fn table(fixed: BTreeMap<String, String>, rs: &[&BenchResult]) -> RingTable {
    let first = rs[0];
    let n0 = n_of(first) as f64;
    let cpu0 = first.fact("cpu_us_per_pass").unwrap_or(f64::NAN);
    let rows: Vec<RingRow> = rs
        .iter()
        .map(|r| {
            let n = n_of(r);
            let m = r.measured.as_ref();
            let s = m.map(|m| m.clean.as_ref().unwrap_or(&m.raw));
            let fact = |name: &str| r.fact(name).unwrap_or(f64::NAN);
            let projected = cpu0 * n as f64 / n0;
            RingRow {
                n,
                per_hop_ns: r.median_ns().unwrap_or(f64::NAN),
                ci_low_ns: s.map_or(f64::NAN, |s| s.ci_low),
                ci_high_ns: s.map_or(f64::NAN, |s| s.ci_high),
                real_us_per_pass: fact("real_us_per_pass"),
                cpu_us_per_pass: fact("cpu_us_per_pass"),
                user_us_per_pass: fact("user_us_per_pass"),
                sys_us_per_pass: fact("sys_us_per_pass"),
                projected_us_per_pass: projected,
                cpu_over_projected: fact("cpu_us_per_pass") / projected,
                vol_per_hop: fact("vol_per_hop"),
                invol_per_hop: fact("invol_per_hop"),
                switch_ns: fact("switch_ns"),
            }
        })
        .collect();
    let per_hop: Vec<(f64, f64)> =
        rows.iter().map(|r| (r.n as f64, r.per_hop_ns)).collect();
    let per_pass: Vec<(f64, f64)> = per_hop.iter().map(|&(n, h)| (n, n * h)).collect();
    let knee_n = knee(&per_hop, KNEE_THRESHOLD).map(|i| rows[i].n);
    let g = growth(&per_pass);
    RingTable {
        name: first.name.clone(),
        fixed,
        rows,
        knee_n,
        knee_threshold: KNEE_THRESHOLD,
        growth_exponent: g.map(|g| g.0),
        growth_r2: g.map(|g| g.1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repro::sloan1992_data::SYSTEMS;

    fn per_hop(name: &str) -> Vec<(f64, f64)> {
        let s = SYSTEMS.iter().find(|s| s.name.contains(name)).unwrap();
        s.rows
            .iter()
            .map(|r| (r.processes as f64, r.cpu_us_per_switch()))
            .collect()
    }

    fn knee_n(name: &str) -> Option<f64> {
        let p = per_hop(name);
        knee(&p, KNEE_THRESHOLD).map(|i| p[i].0)
    }

    #[test]
    fn the_papers_knees_are_found_where_it_saw_them() {
        // Register banks: 16 on the Sun-4/280, 32 on the Sun-4/470.
        assert_eq!(knee_n("4/280"), Some(16.0));
        assert_eq!(knee_n("4/470"), Some(64.0));
        // Near-linear systems have none.
        assert_eq!(knee_n("9000/720"), None);
        assert_eq!(knee_n("4/630"), None);
        assert_eq!(knee_n("IBM 370"), None);
        assert_eq!(knee_n("Data General"), None);
        assert_eq!(knee_n("Solbourne"), None);
    }

    #[test]
    fn growth_is_one_for_a_linear_ring_and_more_for_a_knee() {
        let linear: Vec<(f64, f64)> =
            (1..10).map(|i| (i as f64 * 4.0, i as f64 * 10.0)).collect();
        let (b, r2) = growth(&linear).unwrap();
        assert!((b - 1.0).abs() < 1e-9 && (r2 - 1.0).abs() < 1e-9);
        let sun: Vec<(f64, f64)> =
            per_hop("4/280").iter().map(|&(n, h)| (n, n * h)).collect();
        assert!(growth(&sun).unwrap().0 > 1.2);
    }

    #[test]
    fn a_flat_series_has_no_knee_and_a_jump_has_one() {
        let flat = [(2.0, 1.0), (4.0, 1.01), (8.0, 0.99), (16.0, 1.0)];
        assert_eq!(knee(&flat, 0.25), None);
        let jump = [(2.0, 1.0), (4.0, 1.0), (8.0, 1.0), (16.0, 1.5)];
        assert_eq!(knee(&jump, 0.25), Some(3));
        assert_eq!(knee(&jump[..2], 0.25), None);
    }

    #[test]
    fn an_interrupted_ring_without_its_accounting_has_no_row_and_the_document_reads_back()
    {
        use crate::results::{tests::run_with_medians, Fact};
        let mut run = run_with_medians(&[("ctx.ring", 900.0), ("ctx.ring", 950.0)]);
        for (r, n) in run.results.iter_mut().zip(["2", "4"]) {
            r.params.insert("n".into(), n.into());
        }
        // Only n=2 got its accounting run before the interruption.
        run.results[0].facts = [
            "real_us_per_pass",
            "cpu_us_per_pass",
            "user_us_per_pass",
            "sys_us_per_pass",
            "vol_per_hop",
            "invol_per_hop",
            "switch_ns",
        ]
        .iter()
        .map(|f| Fact::new(f, 1.0, "x", "test"))
        .collect();
        run.rings = tables(&run.results);
        assert_eq!(run.rings.len(), 1);
        assert_eq!(run.rings[0].rows.len(), 1);
        let text = serde_json::to_string(&run).unwrap();
        crate::store::parse_document(text.as_bytes()).expect("reads back");
    }
}
