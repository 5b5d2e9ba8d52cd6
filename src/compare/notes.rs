//! The warnings a comparison states before its rows, in words: what the machine read,
//! labels that differ or are mixed within a side, incomplete runs, one run a side.

use super::{FactDifference, MachineSpeed, RunLabel};
use crate::results::{fmt_ns, Run};

/// `+12.3%` for a ratio of 1.123.
fn change(r: f64) -> String {
    format!("{:+.1}%", (r - 1.0) * 100.0)
}

/// A side's labels as one text ("no labels" for none), and whether its runs disagree.
fn side_labels(side: &[(&RunLabel, &Run)]) -> (String, bool) {
    let texts: std::collections::BTreeSet<String> = side
        .iter()
        .map(|(l, _)| crate::results::labels_text(&l.labels))
        .collect();
    let shown = |t: &String| match t.is_empty() {
        true => "no labels".to_string(),
        false => t.clone(),
    };
    let all: Vec<String> = texts.iter().map(shown).collect();
    (all.join(" / "), texts.len() > 1)
}

/// The warnings of a comparison of side `b` against `a` (oldest run first in each),
/// with the machine's readings and the host facts that differ.
pub(super) fn warnings(
    a: &[(&RunLabel, &Run)],
    b: &[(&RunLabel, &Run)],
    machine: Option<&MachineSpeed>,
    host: &[FactDifference],
    threshold: f64,
) -> Vec<String> {
    let mut out = Vec::new();
    for (name, side) in [("A", a), ("B", b)] {
        let broken: Vec<&str> = side
            .iter()
            .filter(|(l, _)| !l.complete)
            .map(|(l, _)| l.reference.as_str())
            .collect();
        if !broken.is_empty() {
            out.push(format!(
                "side {name} holds {} that did not finish ({}): its rows are what it \
                 measured before it stopped",
                crate::draw::text::count(broken.len(), "run", "runs"),
                broken.join(", ")
            ));
        }
        let (labels, mixed) = side_labels(side);
        if mixed {
            out.push(format!(
                "side {name} mixes runs of different labels ({labels}): runs with other \
                 labels are not repetitions of one another, and their spread is not the \
                 machine's"
            ));
        }
    }
    let (la, _) = side_labels(a);
    let (lb, _) = side_labels(b);
    let labels_differ = la != lb;
    if let Some(m) = machine.filter(|m| m.differs) {
        out.push(canary_text(m, labels_differ.then_some((&la, &lb)), host));
    }
    if let Some(u) = machine
        .and_then(|m| m.user_ratio)
        .filter(|u| (u - 1.0).abs() > threshold)
    {
        out.push(format!(
            "user-space work read {} in B against A (the user-space probe, which no \
             change to the kernel's entry path moves): the machine itself ran at another \
             speed, and changes of about that size may be the machine's",
            change(u)
        ));
    }
    if a.len() == 1 && b.len() == 1 {
        out.push(
            "one run a side: each row's interval is that run's own, and changes smaller \
             than its 'sees' column go unseen; measure several runs a side (`syscost run \
             --runs K --label NAME`) and compare the sides (`label:NAME`, or a range \
             such as last~5..last~3)"
                .to_string(),
        );
    }
    out
}

/// The warning when the getpid canary read differently on the two sides: what it read,
/// why it is not taken as the machine's speed, and what else differs.
fn canary_text(
    m: &MachineSpeed,
    labels: Option<(&String, &String)>,
    host: &[FactDifference],
) -> String {
    let mut s = format!(
        "the getpid canary read {} in A and {} in B ({}). The canary is itself a system \
         call: a change on the system-call path (a patch, a mitigation, a filter, a \
         tracer) moves it as it moves the rows, so it is not taken for the machine's \
         speed and no row is adjusted by it",
        fmt_ns(m.base_ns),
        fmt_ns(m.other_ns),
        change(m.ratio)
    );
    if let Some(u) = m.user_ratio {
        s += &format!("; user-space work read {}", change(u));
    }
    if let Some((la, lb)) = labels {
        s += &format!("; the sides' labels differ ({la} in A, {lb} in B)");
    }
    if !host.is_empty() {
        let facts: Vec<&str> = host.iter().map(|d| d.fact.as_str()).collect();
        s += &format!("; their host facts differ ({})", facts.join(", "));
    }
    s
}
