//! Sweeps: when a numeric parameter takes several values while the others stay fixed,
//! a straight line through the medians says what each unit of the parameter costs (the
//! memo's per-argument increment, the copy-in cost per iovec or descriptor).
//!
//! A pure function of the results.

use crate::results::{BenchResult, SweepFit};
use crate::stats::fit::linear_fit;
use std::collections::BTreeMap;

/// A sweep's identity: the benchmark, the swept parameter, and the other parameters.
type SweepKey = (String, String, BTreeMap<String, String>);

/// The fits of every numeric sweep among `results`, in the order the sweeps appear.
pub fn fits(results: &[BenchResult]) -> Vec<SweepFit> {
    // (name, swept parameter, the other parameters) -> points
    let mut groups: Vec<(SweepKey, Vec<(f64, f64)>)> = Vec::new();
    for r in results {
        let Some(median) = r.median_ns() else {
            continue;
        };
        for (param, value) in &r.params {
            // Copies are no cost parameter: their sweep is the scaling table.
            let Ok(x) = value.parse::<f64>() else {
                continue;
            };
            if param == crate::bench::copies::COPIES {
                continue;
            }
            let mut fixed = r.params.clone();
            fixed.remove(param);
            let key = (r.name.clone(), param.clone(), fixed);
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, pts)) => pts.push((x, median)),
                None => groups.push((key, vec![(x, median)])),
            }
        }
    }
    groups
        .into_iter()
        .filter(|(_, pts)| pts.len() >= 2)
        .filter_map(|((name, param, fixed), pts)| {
            let (xs, ys): (Vec<f64>, Vec<f64>) = pts.iter().copied().unzip();
            let f = linear_fit(&xs, &ys)?;
            Some(SweepFit {
                name,
                param,
                fixed,
                points: pts.len(),
                slope_ns: f.slope,
                intercept_ns: f.intercept,
                r2: f.r2,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{tests::run_with_medians, Status};

    fn result(name: &str, params: &[(&str, &str)], median: Option<f64>) -> BenchResult {
        let mut run = run_with_medians(&[(name, median.unwrap_or(0.0))]);
        let mut r = run.results.remove(0);
        r.params = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        if median.is_none() {
            r.status = Status::Skipped;
            r.measured = None;
        }
        r
    }

    #[test]
    fn a_numeric_sweep_gets_a_line_and_choices_do_not() {
        let rs = vec![
            result("s.args", &[("args", "0")], Some(80.0)),
            result("s.args", &[("args", "2")], Some(84.0)),
            result("s.args", &[("args", "4")], Some(88.0)),
            result("s.time", &[("via", "vdso")], Some(2.0)),
            result("s.time", &[("via", "syscall")], Some(85.0)),
            result("s.poll", &[("n", "1")], Some(100.0)),
            result("s.poll", &[("n", "8")], None),
        ];
        let f = fits(&rs);
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].name.as_str(), f[0].param.as_str(), f[0].points),
            ("s.args", "args", 3)
        );
        assert!((f[0].slope_ns - 2.0).abs() < 1e-12);
        assert!((f[0].intercept_ns - 80.0).abs() < 1e-12);
    }
}
