//! Two explanations of the same benchmark side by side (`syscost compare A B` of two
//! explained runs): which functions and groups grew or shrank, in ns per operation,
//! with an interval for the difference.
//!
//! The interval is Newcombe's hybrid score interval for a difference of two
//! proportions (Newcombe 1998, method 10), built from each side's Wilson interval and
//! scaled by each side's median; the medians' own uncertainty is left out (it is the
//! comparison's ratio interval above). A function grew when the whole interval is
//! above zero, shrank when it is below.

use super::{Explanation, Share};
use crate::draw::text::{clip, count};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;

/// One function's (or group's) change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// Its name.
    pub name: String,
    /// A kernel function.
    pub kernel: bool,
    /// Self ns per operation in A.
    pub base_ns: f64,
    /// In B.
    pub other_ns: f64,
    /// B − A.
    pub delta_ns: f64,
    /// The difference's 95% interval, low end.
    pub delta_low_ns: f64,
    /// High end.
    pub delta_high_ns: f64,
    /// "grew", "shrank" or "no change".
    pub verdict: String,
}

/// The changes of one benchmark explained in both runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diff {
    /// The benchmark and its parameters.
    pub label: String,
    /// A's median, ns per operation.
    pub base_median_ns: f64,
    /// B's.
    pub other_median_ns: f64,
    /// The groups, in their reading order.
    pub groups: Vec<Change>,
    /// Every function seen in either, largest change first.
    pub functions: Vec<Change>,
}

/// One side of a change: the share, or for an absent function none of that side's
/// samples, with the interval of zero successes.
type Side<'a> = (Option<&'a Share>, &'a Explanation);

fn change(name: &str, kernel: bool, a: Side<'_>, b: Side<'_>) -> Change {
    let side = |(s, e): Side<'_>| match s {
        Some(s) => (s.self_ns, s.self_low_ns, s.self_high_ns),
        None => (
            0.0,
            0.0,
            super::analysis::wilson(0, e.samples).1 * e.median_ns,
        ),
    };
    let (pa, la, ua) = side(a);
    let (pb, lb, ub) = side(b);
    let d = pb - pa;
    let low = d - ((pb - lb).powi(2) + (ua - pa).powi(2)).sqrt();
    let high = d + ((ub - pb).powi(2) + (pa - la).powi(2)).sqrt();
    let verdict = if low > 0.0 {
        "grew"
    } else if high < 0.0 {
        "shrank"
    } else {
        "no change"
    };
    Change {
        name: name.to_string(),
        kernel,
        base_ns: pa,
        other_ns: pb,
        delta_ns: d,
        delta_low_ns: low,
        delta_high_ns: high,
        verdict: verdict.into(),
    }
}

/// A function's share in A and in B.
type Pair<'a> = (Option<&'a Share>, Option<&'a Share>);

/// The changes from `a` to `b`, explanations of the benchmark `label`.
pub fn diff(label: &str, a: &Explanation, b: &Explanation) -> Diff {
    let groups = a
        .groups
        .iter()
        .map(|g| {
            let other = b.groups.iter().find(|x| x.group == g.group);
            change(&g.name, false, (Some(g), a), (other, b))
        })
        .collect();
    let mut both: BTreeMap<(String, bool), Pair<'_>> = BTreeMap::new();
    for f in &a.functions {
        both.entry((f.name.clone(), f.kernel)).or_default().0 = Some(f);
    }
    for f in &b.functions {
        both.entry((f.name.clone(), f.kernel)).or_default().1 = Some(f);
    }
    let mut functions: Vec<Change> = both
        .into_iter()
        .map(|((name, kernel), (x, y))| change(&name, kernel, (x, a), (y, b)))
        .collect();
    functions.sort_by(|x, y| y.delta_ns.abs().total_cmp(&x.delta_ns.abs()));
    Diff {
        label: label.to_string(),
        base_median_ns: a.median_ns,
        other_median_ns: b.median_ns,
        groups,
        functions,
    }
}

/// The text of a diff: the groups, then the functions that changed (at most `top`).
pub fn text(d: &Diff, top: usize) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\nwhere {} changed (self ns per operation, A {:.1} ns → B {:.1} ns):",
        d.label, d.base_median_ns, d.other_median_ns
    );
    let row = |o: &mut String, c: &Change| {
        let name = if c.kernel {
            format!("{} [k]", c.name)
        } else {
            c.name.clone()
        };
        let _ = writeln!(
            o,
            "  {:<44} {:>9.2} {:>9.2} {:>+9.2} ({:+.2} to {:+.2})  {}",
            clip(&name, 44),
            c.base_ns,
            c.other_ns,
            c.delta_ns,
            c.delta_low_ns,
            c.delta_high_ns,
            c.verdict
        );
    };
    let _ = writeln!(
        o,
        "  {:<44} {:>9} {:>9} {:>9} {:>20}",
        "group", "A", "B", "B − A", "95% interval"
    );
    d.groups.iter().for_each(|c| row(&mut o, c));
    let changed: Vec<&Change> = d
        .functions
        .iter()
        .filter(|c| c.verdict != "no change")
        .collect();
    let _ = writeln!(
        o,
        "  {} of {} changed beyond their interval; the largest:",
        changed.len(),
        count(d.functions.len(), "function", "functions")
    );
    changed.iter().take(top).for_each(|c| row(&mut o, c));
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grown_function_is_found_and_an_unchanged_one_is_not() {
        let a = crate::explain::tests::example();
        let mut b = a.clone();
        // B: the thunk took ten times the samples, and the median grew with it.
        let mut stacks = b.stacks.clone();
        for s in &mut stacks {
            if s.kernel.last().is_some_and(|k| k == "its_return_thunk") {
                s.count *= 10;
            }
        }
        let median = 60.0 * 1072.0 / 1000.0;
        b.functions = crate::explain::analysis::functions(&stacks, median);
        b.groups = crate::explain::analysis::groups(&stacks, median);
        b.median_ns = median;
        let d = diff("syscall.getpid", &a, &b);
        let thunk = d
            .functions
            .iter()
            .find(|c| c.name == "its_return_thunk")
            .unwrap();
        assert_eq!(thunk.verdict, "grew");
        assert!(
            thunk.delta_low_ns > 0.0 && thunk.delta_ns > 4.0,
            "{thunk:?}"
        );
        assert_eq!(
            d.functions[0].name, "its_return_thunk",
            "the largest change first"
        );
        let same = d
            .functions
            .iter()
            .find(|c| c.name == "x64_sys_call")
            .unwrap();
        assert_eq!(same.verdict, "no change");
        let same = diff("x", &a, &a);
        assert!(same.functions.iter().all(|c| c.verdict == "no change"));
        assert!(text(&d, 10).contains("its_return_thunk [k]"));
    }
}
