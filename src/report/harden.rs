//! The summary's "what hardening costs here" block: each row measured with a hardening
//! parameter (`seccomp=`, `cgroup=sibling`, `userns=1`, `rseq=off`, `spec=`, see
//! `crate::bench::harden`) beside the row of the same run that differs only in having
//! it off, with the difference and the ratio.
//!
//! Pure: it reads the run's rows and changes no figure. The ratio comes from a
//! [`Cost`], built today from the two rows' own medians and intervals (absolute, so
//! the interval holds both rows' noise), or the paired ratio the run measured
//! (`--reference`), when the hardened row carries one against that reference.

use crate::bench::harden;
use crate::draw::text::{grid, wrap};
use crate::results::{fmt_ns, BenchResult, Run};

/// The value of each hardening parameter that means "off", with the value of its
/// reference when the off value is not measured (`cgroup=sibling` against `same`).
const OFF: &[(&str, &[&str])] = &[
    (harden::SECCOMP, &["0"]),
    (harden::SECCOMP_KIND, &[]),
    (harden::SECCOMP_STACK, &[]),
    (harden::CGROUP, &["same", "none"]),
    (harden::USERNS, &["0"]),
    (harden::RSEQ, &["on"]),
    (harden::SPEC, &["none"]),
];

/// What one hardening costs on one row.
#[derive(Debug, Clone)]
pub struct Cost<'a> {
    /// The hardened row.
    pub row: &'a BenchResult,
    /// The row it is set against.
    pub reference: &'a BenchResult,
    /// Hardened minus reference, ns per operation.
    pub diff_ns: f64,
    /// Hardened over reference, with its interval.
    pub ratio: f64,
    /// The ratio's interval, low end.
    pub low: f64,
    /// The ratio's interval, high end.
    pub high: f64,
    /// Whether the ratio was measured paired in the run (else it is the two rows'
    /// medians, its interval from both rows' intervals).
    pub paired: bool,
}

/// Whether `p` is a hardening parameter at an "on" value.
fn hardened(name: &str, value: &str) -> bool {
    OFF.iter()
        .find(|(n, _)| *n == name)
        .is_some_and(|(_, off)| !off.is_empty() && !off.contains(&value))
}

/// Whether `r` turns any hardening on.
fn is_hardened(r: &BenchResult) -> bool {
    r.params.iter().any(|(n, v)| hardened(n, v))
}

/// The reference of `r`: a measured row of the same benchmark whose other parameters
/// are equal and whose hardening is off (its first off value measured, as
/// `cgroup=same` before `none`).
fn reference<'a>(r: &BenchResult, rows: &'a [BenchResult]) -> Option<&'a BenchResult> {
    let others = |x: &BenchResult| -> Vec<(String, String)> {
        x.params
            .iter()
            .filter(|(n, _)| !harden::is_param(n))
            .map(|(n, v)| (n.clone(), v.clone()))
            .collect()
    };
    let mine = others(r);
    let candidates = rows.iter().filter(|x| {
        x.name == r.name && x.measured.is_some() && !is_hardened(x) && others(x) == mine
    });
    // Prefer the reference whose off values rank first (cgroup=same over none).
    candidates.min_by_key(|x| {
        OFF.iter()
            .map(|(n, off)| match x.params.get(*n) {
                Some(v) => off.iter().position(|o| o == v).unwrap_or(off.len()),
                None => off.len(),
            })
            .sum::<usize>()
    })
}

/// Every hardened, measured row of the run with its reference, in the run's order.
pub fn costs(run: &Run) -> Vec<Cost<'_>> {
    run.results
        .iter()
        .filter(|r| r.measured.is_some() && is_hardened(r))
        .filter_map(|r| {
            let x = reference(r, &run.results)?;
            let (a, b) = (r.measured.as_ref()?, x.measured.as_ref()?);
            // Measured paired against this very reference: the pairs' ratio.
            let is_x = |reference: &str| {
                reference
                    .split_once('=')
                    .is_some_and(|(n, v)| x.params.get(n).is_some_and(|w| w == v))
            };
            if let Some(p) = a.paired.as_ref().filter(|p| is_x(&p.reference)) {
                return Some(Cost {
                    row: r,
                    reference: x,
                    diff_ns: p.diff_ns,
                    ratio: p.ratio,
                    low: p.ratio_low,
                    high: p.ratio_high,
                    paired: true,
                });
            }
            (b.median_ns > 0.0 && b.ci_low_ns > 0.0).then(|| Cost {
                row: r,
                reference: x,
                diff_ns: a.median_ns - b.median_ns,
                ratio: a.median_ns / b.median_ns,
                low: a.ci_low_ns / b.ci_high_ns,
                high: a.ci_high_ns / b.ci_low_ns,
                paired: false,
            })
        })
        .collect()
}

/// The hardening values in which `row` and `reference` differ, each side as
/// `name=value` words (`off` for a side that has none).
fn differing(row: &BenchResult, reference: &BenchResult) -> (String, String) {
    let side = |x: &BenchResult, y: &BenchResult| {
        let l = harden::label_of(
            x.params
                .iter()
                .filter(|(n, v)| y.params.get(*n) != Some(*v)),
        );
        if l.is_empty() {
            "off".to_string()
        } else {
            l
        }
    };
    (side(row, reference), side(reference, row))
}

/// The parameters other than hardening in which `c`'s row differs from another
/// cost's row of the same benchmark (` kind=thread`), so that two lines never read
/// alike; empty when none does.
fn telling(c: &Cost<'_>, costs: &[Cost<'_>]) -> String {
    let mut words = String::new();
    for (name, value) in &c.row.params {
        let varies = !harden::is_param(name)
            && costs.iter().any(|o| {
                o.row.name == c.row.name && o.row.params.get(name) != Some(value)
            });
        if varies {
            words += &format!(" {name}={value}");
        }
    }
    words
}

/// The block's text at `width` columns, or nothing when the run measured no hardening
/// beside its reference.
pub fn text(run: &Run, width: usize) -> String {
    let costs = costs(run);
    if costs.is_empty() {
        return String::new();
    }
    let mut rows: Vec<Vec<String>> = vec![vec![
        "What hardening costs here".into(),
        "figure".into(),
        "off".into(),
        "+ns".into(),
        "ratio".into(),
        "95% CI".into(),
    ]];
    let all_paired = costs.iter().all(|c| c.paired);
    for c in &costs {
        let (a, b) = (
            c.row.measured.as_ref().map_or(0.0, |m| m.median_ns),
            c.reference.measured.as_ref().map_or(0.0, |m| m.median_ns),
        );
        let (on, off) = differing(c.row, c.reference);
        rows.push(vec![
            format!("{}{} {on} vs {off}", c.row.name, telling(c, &costs)),
            fmt_ns(a),
            fmt_ns(b),
            format!("{:+.1}", c.diff_ns),
            format!("{:.3}×", c.ratio),
            format!(
                "{:.3}–{:.3}{}",
                c.low,
                c.high,
                if c.paired && !all_paired {
                    " paired"
                } else {
                    ""
                }
            ),
        ]);
    }
    let mut s = String::from("\n");
    s += &grid(&rows, &[false, true, true, true, true, true], 1, 0, width);
    let how = if all_paired {
        "ratios measured paired in this run (--reference)"
    } else if costs.iter().any(|c| c.paired) {
        "ratios marked paired measured in pairs in this run (--reference); the others \
         of the two rows' medians, each interval from both rows' intervals"
    } else {
        "ratios of the two rows' medians, each interval from both rows' intervals \
         (the two rows' noise added); the rows differ only in the hardening"
    };
    s += &wrap(how, width, 0, 2);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of getppid rows with `params` and medians, each interval ±2%.
    fn run_of(rows: &[(&[(&str, &str)], f64)]) -> Run {
        let names: Vec<(&str, f64)> =
            rows.iter().map(|(_, m)| ("syscall.getppid", *m)).collect();
        let mut run = crate::results::tests::run_with_medians(&names);
        for (r, (params, m)) in run.results.iter_mut().zip(rows) {
            r.params = params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let x = r.measured.as_mut().unwrap();
            x.ci_low_ns = m * 0.98;
            x.ci_high_ns = m * 1.02;
        }
        run
    }

    #[test]
    fn a_hardened_row_meets_its_off_twin() {
        let run = run_of(&[
            (&[("via", "raw"), ("seccomp", "0")], 100.0),
            (&[("via", "raw"), ("seccomp", "256")], 150.0),
            (&[("via", "libc"), ("seccomp", "256")], 170.0),
        ]);
        let c = costs(&run);
        assert_eq!(c.len(), 1, "the libc row has no reference");
        assert!((c[0].ratio - 1.5).abs() < 1e-9 && (c[0].diff_ns - 50.0).abs() < 1e-9);
        assert!(c[0].low < 1.5 && c[0].high > 1.5);
        let t = text(&run, 100);
        assert!(
            t.contains("seccomp=256 vs seccomp=0") && t.contains("1.500×"),
            "{t}"
        );
        let quiet = run_of(&[(&[("via", "raw")], 100.0)]);
        assert_eq!(text(&quiet, 100), "");
    }

    #[test]
    fn two_costs_of_one_benchmark_are_told_apart_by_what_else_differs() {
        let run = run_of(&[
            (&[("via", "raw"), ("seccomp", "0")], 100.0),
            (&[("via", "raw"), ("seccomp", "256")], 150.0),
            (&[("via", "libc"), ("seccomp", "0")], 110.0),
            (&[("via", "libc"), ("seccomp", "256")], 170.0),
        ]);
        assert_eq!(costs(&run).len(), 2);
        let t = text(&run, 100);
        assert!(
            t.contains("syscall.getppid via=raw seccomp=256 vs seccomp=0")
                && t.contains("syscall.getppid via=libc seccomp=256 vs seccomp=0"),
            "{t}"
        );
        // One cost alone names no other parameter.
        let one = run_of(&[
            (&[("via", "raw"), ("seccomp", "0")], 100.0),
            (&[("via", "raw"), ("seccomp", "256")], 150.0),
        ]);
        assert!(text(&one, 100).contains("syscall.getppid seccomp=256 vs"));
    }

    #[test]
    fn a_ratio_measured_paired_against_the_off_row_is_the_one_shown() {
        let mut run = run_of(&[
            (&[("via", "raw"), ("seccomp", "0")], 100.0),
            (&[("via", "raw"), ("seccomp", "256")], 150.0),
        ]);
        let paired = crate::results::Paired {
            reference: "seccomp=0".into(),
            ratio: 1.52,
            ratio_low: 1.519,
            ratio_high: 1.521,
            diff_ns: 41.5,
            diff_low_ns: 41.3,
            diff_high_ns: 41.7,
            reference_ns: 79.6,
            rounds: 41,
            pairs: 3239,
            round_ratios: vec![1.52; 41],
            sides: "threads".into(),
        };
        run.results[1].measured.as_mut().unwrap().paired = Some(paired.clone());
        let c = costs(&run);
        assert!(c[0].paired && (c[0].ratio - 1.52).abs() < 1e-12, "{c:?}");
        assert!((c[0].low - 1.519).abs() < 1e-12 && (c[0].diff_ns - 41.5).abs() < 1e-12);
        assert!(text(&run, 100).contains("measured paired in this run"));
        // Paired against another reference: the two rows' medians, as before.
        let elsewhere = crate::results::Paired {
            reference: "via=libc".into(),
            ..paired
        };
        run.results[1].measured.as_mut().unwrap().paired = Some(elsewhere);
        let c = costs(&run);
        assert!(!c[0].paired && (c[0].ratio - 1.5).abs() < 1e-9);
    }

    #[test]
    fn sibling_cgroups_are_set_against_the_same_one() {
        let run = run_of(&[
            (&[("cgroup", "same")], 1000.0),
            (&[("cgroup", "none")], 990.0),
            (&[("cgroup", "sibling")], 1100.0),
        ]);
        let c = costs(&run);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].reference.params.get("cgroup").unwrap(), "same");
    }
}
