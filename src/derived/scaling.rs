//! Scaling tables: the points of a benchmark run as copies (`copies=1,2,4`, its other
//! parameters fixed), each with its per-copy cost, throughput and efficiency against
//! one copy, and the Universal Scalability Law fitted over the points that are not
//! oversubscribed ([`crate::stats::usl`]), or why there is no fit.
//!
//! A pure function of the results.

use crate::bench::copies::COPIES;
use crate::results::{BenchResult, ScalingPoint, ScalingTable};
use crate::stats::usl;
use std::collections::BTreeMap;

/// The scaling table of every benchmark among `results` run as copies, in the order
/// they first appear.
pub fn tables(results: &[BenchResult]) -> Vec<ScalingTable> {
    type Key = (String, BTreeMap<String, String>);
    // (benchmark, other parameters) -> points, and the CPUs the copies could use
    let mut groups: Vec<(Key, Vec<ScalingPoint>, usize)> = Vec::new();
    for r in results {
        let Some(c) = r.measured.as_ref().and_then(|m| m.copies.as_ref()) else {
            continue;
        };
        let mut fixed = r.params.clone();
        fixed.remove(COPIES);
        let key = (r.name.clone(), fixed);
        let point = ScalingPoint {
            n: c.n,
            per_copy_ns: c.per_copy_ns,
            slowest_ns: c.slowest_ns,
            throughput_ops_s: c.throughput_ops_s,
            efficiency: None,
            oversubscribed: c.oversubscribed,
            cpus: c.cpus.clone(),
        };
        match groups.iter_mut().find(|(k, _, _)| *k == key) {
            Some((_, pts, online)) => {
                pts.push(point);
                *online = (*online).max(c.online);
            }
            None => groups.push((key, vec![point], c.online)),
        }
    }
    groups
        .into_iter()
        .map(|((name, fixed), mut points, online)| {
            points.sort_by_key(|p| p.n);
            let one = points.iter().find(|p| p.n == 1).map(|p| p.throughput_ops_s);
            for p in &mut points {
                p.efficiency = one.map(|x1| p.throughput_ops_s / (p.n as f64 * x1));
            }
            let (fit, no_fit) = fit_of(&points, online);
            ScalingTable {
                name,
                fixed,
                points,
                fit,
                no_fit,
            }
        })
        .collect()
}

/// The fit over the points that are not oversubscribed, or why there is none.
fn fit_of(
    points: &[ScalingPoint],
    online: usize,
) -> (Option<usl::UslFit>, Option<String>) {
    let usable: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| !p.oversubscribed && p.throughput_ops_s.is_finite())
        .map(|p| (p.n as f64, p.throughput_ops_s))
        .collect();
    let over = points.iter().filter(|p| p.oversubscribed).count();
    if usable.len() < 3 {
        let ns: Vec<String> = usable.iter().map(|p| p.0.to_string()).collect();
        let mut why = format!(
            "no scalability fit: it needs 3 points that are not oversubscribed, and \
             there {} {} (N = {})",
            if usable.len() == 1 { "is" } else { "are" },
            usable.len(),
            if ns.is_empty() {
                "none".into()
            } else {
                ns.join(", ")
            }
        );
        if over > 0 {
            why.push_str(&format!("; {over} oversubscribed left out"));
        }
        if online < 3 {
            why.push_str(&format!(
                "; the run had {online} CPU{} to use, so only the efficiency is \
                 reported",
                if online == 1 { "" } else { "s" }
            ));
        }
        return (None, Some(why));
    }
    match usl::fit(&usable) {
        Some(f) => (Some(f), None),
        None => (
            None,
            Some("no scalability fit: the points leave the law undetermined".into()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::copies::{Copies, CopiesAs};
    use crate::results::CopiesFigures;

    fn result(n: usize, copy_ns: Vec<f64>, over: bool) -> BenchResult {
        let doc = include_str!("../../tests/fixtures/report-smoke.json");
        let run = crate::store::parse_document(doc.as_bytes()).unwrap();
        let mut r = run
            .results
            .into_iter()
            .find(|r| r.measured.is_some())
            .unwrap();
        r.name = "syscall.getppid".into();
        r.params = [
            (COPIES.to_string(), n.to_string()),
            ("copies_as".to_string(), "process".to_string()),
        ]
        .into();
        let copies = Copies {
            n,
            mode: CopiesAs::Process,
        };
        let cpus = ((0..n).collect(), over);
        let rates: Vec<f64> = copy_ns.iter().map(|x| 1e9 / x).collect();
        r.measured.as_mut().unwrap().copies =
            Some(CopiesFigures::new(copies, copy_ns, &rates, cpus, 2));
        r
    }

    #[test]
    fn efficiency_against_one_copy_and_no_fit_below_three_points() {
        let rs = [
            result(1, vec![100.0], false),
            result(2, vec![100.0, 125.0], false),
        ];
        let t = tables(&rs);
        assert_eq!(t.len(), 1);
        let p = &t[0].points;
        assert_eq!(p[0].efficiency, Some(1.0));
        // 1e7 + 8e6 over 2 × 1e7.
        assert!((p[1].efficiency.unwrap() - 0.9).abs() < 1e-9);
        assert!(t[0].fit.is_none());
        assert!(t[0].no_fit.as_deref().unwrap().contains("needs 3 points"));
        assert_eq!(
            t[0].fixed.get("copies_as").map(String::as_str),
            Some("process")
        );
    }

    #[test]
    fn the_fit_leaves_oversubscribed_points_out() {
        let rs = [
            result(1, vec![100.0], false),
            result(2, vec![110.0; 2], false),
            result(4, vec![130.0; 4], false),
            result(8, vec![400.0; 8], true),
        ];
        let t = &tables(&rs)[0];
        let f = t.fit.as_ref().expect("three points");
        assert_eq!(f.points, 3);
        assert!(t.no_fit.is_none());
    }
}
