//! The Prometheus text exposition format (version 0.0.4), for node_exporter's textfile
//! collector: `syscost run --format prometheus -o /var/lib/node_exporter/syscost.prom`
//! (written through a temporary file and a rename, as the collector asks).
//!
//! # Metrics
//! Every series of a result carries the labels `benchmark` (`family.name`) and one
//! label per parameter (its name, made a valid label name: characters other than
//! `[A-Za-z0-9_]` become `_`, and a leading digit gets a `_`). Times are seconds, the
//! base unit.
//!
//! | metric | type | value |
//! |---|---|---|
//! | `syscost_op_seconds` | gauge | the headline per operation |
//! | `syscost_op_ci_low_seconds` | gauge | its 95% interval, low end |
//! | `syscost_op_ci_high_seconds` | gauge | its 95% interval, high end |
//! | `syscost_op_rounds` | gauge | rounds measured |
//! | `syscost_op_converged` | gauge | 1 when the interval met the target |
//! | `syscost_copies_per_copy_seconds` | gauge | run as copies (label `copies`): the median over copies |
//! | `syscost_copies_slowest_seconds` | gauge | the slowest copy |
//! | `syscost_copies_throughput_ops_per_second` | gauge | operations per second of all copies |
//! | `syscost_copies_efficiency` | gauge | throughput / (N × one copy's), per `copies` point |
//! | `syscost_usl_sigma`, `syscost_usl_kappa` | gauge | the scalability fit, where one was made |
//! | `syscost_result_status` | gauge | 1 for the result's status, label `status` (ok, skipped, failed) |
//! | `syscost_run_timestamp_seconds` | gauge | when the run began (Unix time) |
//! | `syscost_run_complete` | gauge | 1 when the run finished |
//! | `syscost_info` | gauge | 1, labels `version`, `host`, `kernel`, `profile`, `clock` |
//!
//! Label values escape `\`, `"` and newlines. A value that is not finite is left out.

use crate::results::{Run, Status};
use std::collections::BTreeMap;
use std::fmt::Write;

/// A valid label name for `s`.
pub fn label_name(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    // Names starting with "__" are reserved for Prometheus's own use.
    while out.starts_with("__") {
        out.remove(0);
    }
    out
}

/// A label value escaped for the text format.
pub fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn labels(pairs: &[(String, String)]) -> String {
    let inner: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    format!("{{{}}}", inner.join(","))
}

/// One metric family: its help text and its samples (labels, value).
struct Family {
    help: &'static str,
    samples: Vec<(String, f64)>,
}

/// The metric families of one exposition, by name.
#[derive(Default)]
struct Families(BTreeMap<&'static str, Family>);

impl Families {
    /// Adds a sample (a non-finite value is left out).
    fn add(&mut self, name: &'static str, help: &'static str, l: String, v: f64) {
        if v.is_finite() {
            self.0
                .entry(name)
                .or_insert_with(|| Family {
                    help,
                    samples: Vec::new(),
                })
                .samples
                .push((l, v));
        }
    }
}

/// The exposition for `run`.
pub fn exposition(run: &Run) -> String {
    let mut f = Families::default();
    run_metrics(&mut f, run);
    let mut seen = std::collections::HashSet::new();
    for r in &run.results {
        result_metrics(&mut f, r, &mut seen);
    }
    for t in &run.scaling {
        scaling_metrics(&mut f, t);
    }
    let mut out = String::new();
    for (name, f) in &f.0 {
        let _ = writeln!(out, "# HELP {name} {}", f.help);
        let _ = writeln!(out, "# TYPE {name} gauge");
        for (l, v) in &f.samples {
            let _ = writeln!(out, "{name}{l} {v:e}");
        }
    }
    out
}

/// The run's own metrics: what measured it, when, and whether it finished.
fn run_metrics(f: &mut Families, run: &Run) {
    let h = &run.host;
    f.add(
        "syscost_info",
        "The syscost run: version, host, kernel, profile and clock.",
        labels(&[
            ("version".into(), run.version.clone()),
            ("host".into(), h.hostname.clone().unwrap_or_default()),
            ("kernel".into(), h.kernel.clone().unwrap_or_default()),
            ("profile".into(), run.harness.profile.clone()),
            ("clock".into(), run.clock.name.clone()),
        ]),
        1.0,
    );
    f.add(
        "syscost_run_timestamp_seconds",
        "When the run began, seconds since the Unix epoch.",
        String::new(),
        run.started_unix_s,
    );
    f.add(
        "syscost_run_complete",
        "1 when the run finished, 0 when it was interrupted.",
        String::new(),
        if run.complete { 1.0 } else { 0.0 },
    );
}

/// One result's metrics, unless its labels were `seen` already (the same series twice
/// would be invalid).
fn result_metrics(
    f: &mut Families,
    r: &crate::results::BenchResult,
    seen: &mut std::collections::HashSet<String>,
) {
    let mut pairs = vec![("benchmark".to_string(), r.name.clone())];
    for (k, v) in &r.params {
        let mut name = label_name(k);
        if name == "benchmark" || name == "status" {
            name = format!("param_{name}");
        }
        pairs.push((name, v.clone()));
    }
    let base = labels(&pairs);
    if !seen.insert(base.clone()) {
        return;
    }
    let status = match r.status {
        Status::Ok => "ok",
        Status::Skipped => "skipped",
        Status::Failed => "failed",
    };
    let mut with_status = pairs.clone();
    with_status.push(("status".into(), status.into()));
    f.add(
        "syscost_result_status",
        "1 for the status of each benchmark (ok, skipped, failed).",
        labels(&with_status),
        1.0,
    );
    let Some(m) = &r.measured else { return };
    for (name, help, v) in [
        (
            "syscost_op_seconds",
            "The cost of one operation: the trimmed mean over rounds of each round's median.",
            m.median_ns * 1e-9,
        ),
        (
            "syscost_op_ci_low_seconds",
            "Low end of the 95% interval of syscost_op_seconds.",
            m.ci_low_ns * 1e-9,
        ),
        (
            "syscost_op_ci_high_seconds",
            "High end of the 95% interval of syscost_op_seconds.",
            m.ci_high_ns * 1e-9,
        ),
        ("syscost_op_rounds", "Rounds measured.", m.rounds.len() as f64),
        (
            "syscost_op_converged",
            "1 when the interval reached the row's target.",
            if m.converged { 1.0 } else { 0.0 },
        ),
    ] {
        f.add(name, help, base.clone(), v);
    }
    if let Some(c) = &m.copies {
        for (name, help, v) in [
            (
                "syscost_copies_per_copy_seconds",
                "Run as copies: the median over copies of each copy's cost per operation.",
                c.per_copy_ns * 1e-9,
            ),
            (
                "syscost_copies_slowest_seconds",
                "Run as copies: the slowest copy's cost per operation.",
                c.slowest_ns * 1e-9,
            ),
            (
                "syscost_copies_throughput_ops_per_second",
                "Run as copies: operations per second of all copies together.",
                c.throughput_ops_s,
            ),
        ] {
            f.add(name, help, base.clone(), v);
        }
    }
}

/// A scaling table's metrics: each point's efficiency and the fit's coefficients.
fn scaling_metrics(f: &mut Families, t: &crate::results::ScalingTable) {
    let mut pairs = vec![("benchmark".to_string(), t.name.clone())];
    for (k, v) in &t.fixed {
        pairs.push((label_name(k), v.clone()));
    }
    for p in &t.points {
        let mut with_n = pairs.clone();
        with_n.push(("copies".into(), p.n.to_string()));
        if let Some(e) = p.efficiency {
            f.add(
                "syscost_copies_efficiency",
                "Run as copies: throughput / (copies × one copy's throughput).",
                labels(&with_n),
                e,
            );
        }
    }
    if let Some(fit) = &t.fit {
        for (name, help, v) in [
            (
                "syscost_usl_sigma",
                "Universal Scalability Law: contention σ.",
                fit.sigma,
            ),
            (
                "syscost_usl_kappa",
                "Universal Scalability Law: coherency κ.",
                fit.kappa,
            ),
        ] {
            f.add(name, help, labels(&pairs), v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::tests::run_with_medians;

    /// Checks one line against the exposition grammar (a comment, or `name{labels} value`).
    fn valid(line: &str) -> bool {
        if let Some(rest) = line.strip_prefix("# ") {
            return rest.starts_with("HELP ") || rest.starts_with("TYPE ");
        }
        let name_end = line
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(line.len());
        if name_end == 0 || line.starts_with(|c: char| c.is_ascii_digit()) {
            return false;
        }
        let mut rest = &line[name_end..];
        if let Some(body) = rest.strip_prefix('{') {
            // Labels: name="value" pairs, values with \\, \" and \n escapes only.
            let mut chars = body.char_indices().peekable();
            let mut in_value = false;
            let mut end = None;
            while let Some((i, c)) = chars.next() {
                match (in_value, c) {
                    (true, '\\') => match chars.next() {
                        Some((_, '\\' | '"' | 'n')) => {}
                        _ => return false,
                    },
                    (true, '"') => in_value = false,
                    (true, '\n') => return false,
                    (true, _) => {}
                    (false, '"') => in_value = true,
                    (false, '}') => {
                        end = Some(i);
                        break;
                    }
                    (false, c) if c.is_ascii_alphanumeric() || "_=,".contains(c) => {}
                    _ => return false,
                }
            }
            let Some(end) = end else { return false };
            rest = &body[end + 1..];
        }
        let Some(value) = rest.strip_prefix(' ') else {
            return false;
        };
        value.parse::<f64>().is_ok()
    }

    #[test]
    fn every_line_is_valid_and_families_are_declared_once() {
        let mut run = run_with_medians(&[("syscall.getpid", 80.0), ("ipc.rtt", 3000.0)]);
        run.results[1]
            .params
            .insert("1odd-name".into(), "a\"b\\c\nd".into());
        let mut failed = run.results[0].clone();
        failed.name = "x.failed".into();
        failed.status = Status::Failed;
        failed.measured = None;
        run.results.push(failed);
        run.results.push(run.results[0].clone()); // a duplicate is written once
        let text = exposition(&run);
        for line in text.lines() {
            assert!(valid(line), "invalid line: {line:?}");
        }
        let types: Vec<&str> = text.lines().filter(|l| l.starts_with("# TYPE")).collect();
        let unique: std::collections::HashSet<&&str> = types.iter().collect();
        assert_eq!(types.len(), unique.len());
        assert!(
            text.contains("syscost_op_seconds{benchmark=\"syscall.getpid\"} 8e-8"),
            "{text}"
        );
        assert!(text.contains("_1odd_name=\"a\\\"b\\\\c\\nd\""), "{text}");
        assert!(text.contains("status=\"failed\"} 1e0"), "{text}");
        let series: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.rsplit_once(' ').unwrap().0)
            .collect();
        let unique: std::collections::HashSet<&&str> = series.iter().collect();
        assert_eq!(series.len(), unique.len(), "no series twice");
        assert_eq!(label_name("__x"), "_x");
        assert_eq!(label_name(""), "_");
    }
}
