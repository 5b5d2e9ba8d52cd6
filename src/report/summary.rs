//! The summary at the end of a run: one screen with the figures people quote (lmbench's
//! summary: null call, context switch, pipe round trip, fork, fault, file read
//! bandwidth…), each picked from a catalogue row its benchmark's entry names
//! ([`crate::bench::Facts::quotes`]), with its interval, and how many rows converged
//! and why the others did not.
//!
//! It is a pure function of the results: it measures nothing and changes no figure (a
//! half round trip or a bandwidth is the row's own median and interval, scaled).

use crate::bench::facts::{Figure, Quote, Show};
use crate::draw::text::{grid, wrap};
use crate::results::{fmt_ns, BenchResult, Run, Status};

/// A run shows a summary when it has more results than this.
pub const HANDFUL: usize = 5;

/// Whether `r` is a measured row of `bench` that `q` describes. A row recorded before
/// its benchmark took `via` went through the C library, so it matches `via=libc`.
fn matches(bench: &str, q: &Quote, r: &BenchResult) -> bool {
    r.name == bench
        && r.measured.is_some()
        && q.params.split_whitespace().all(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            match r.params.get(k) {
                Some(got) => got == v,
                None => (k, v) == ("via", crate::bench::via::DEFAULT),
            }
        })
}

/// Each figure whose benchmark was measured, with the row and the quote (from the
/// benchmark's entry, [`crate::bench::Facts::quotes`]) it is read from.
pub fn pick(results: &[BenchResult]) -> Vec<(Figure, &'static Quote, &BenchResult)> {
    let catalogue = crate::bench::catalogue();
    Figure::ALL
        .into_iter()
        .filter_map(|f| {
            let mut from: Vec<(&str, &'static Quote)> = catalogue
                .iter()
                .flat_map(|b| b.facts().quotes.iter().map(move |q| (b.name(), q)))
                .filter(|(_, q)| q.figure == f)
                .collect();
            from.sort_by_key(|(_, q)| q.rank);
            from.into_iter().find_map(|(bench, q)| {
                let r = results.iter().find(|r| matches(bench, q, r))?;
                Some((f, q, r))
            })
        })
        .collect()
}

/// A figure's value and interval as text: `(value, low–high)`.
pub fn shown(s: &Quote, r: &BenchResult) -> (String, String) {
    let m = r.measured.as_ref().expect("picked rows are measured");
    // The value, then the interval's low and high ends: a bandwidth's low end is the
    // time's high one.
    let (fmt, v, lo, hi): (fn(f64) -> String, _, _, _) = match s.show {
        Show::Time => (fmt_ns, m.median_ns, m.ci_low_ns, m.ci_high_ns),
        Show::Half => (
            fmt_ns,
            m.median_ns / 2.0,
            m.ci_low_ns / 2.0,
            m.ci_high_ns / 2.0,
        ),
        Show::Bandwidth { bytes } => (
            fmt_bw,
            bytes / m.median_ns,
            bytes / m.ci_high_ns,
            bytes / m.ci_low_ns,
        ),
    };
    (fmt(v), format!("{}–{}", fmt(lo), fmt(hi)))
}

/// What a figure is, and its paired ratio to its reference when the run measured one
/// (`getpid, syscall in the loop; 0.714× [0.711–0.717] vs via=libc, paired`): the two
/// null-system-call paths side by side, with the drift cancelled.
fn what(s: &Quote, r: &BenchResult) -> String {
    match r.measured.as_ref().and_then(|m| m.paired.as_ref()) {
        Some(p) => format!("{}; {}, paired", s.what, p.text()),
        None => s.what.to_string(),
    }
}

/// Bytes per nanosecond (GB/s) in a readable unit.
fn fmt_bw(bytes_per_ns: f64) -> String {
    if !bytes_per_ns.is_finite() || bytes_per_ns <= 0.0 {
        return "-".into();
    }
    if bytes_per_ns >= 1.0 {
        format!("{bytes_per_ns:.2} GB/s")
    } else {
        format!("{:.0} MB/s", bytes_per_ns * 1e3)
    }
}

/// The reasons rows did not converge, each with how many, most frequent first: each
/// row counted under its first reason ([`crate::harness::Why::label`]; "other" for a
/// row of a document from before the reasons were recorded).
pub fn reasons(results: &[BenchResult]) -> Vec<(&'static str, usize)> {
    let mut counts: Vec<(&'static str, usize)> = Vec::new();
    for m in results.iter().filter_map(|r| r.measured.as_ref()) {
        if m.converged {
            continue;
        }
        let why = m.why.first().map_or("other", crate::harness::Why::label);
        match counts.iter_mut().find(|(w, _)| *w == why) {
            Some((_, n)) => *n += 1,
            None => counts.push((why, 1)),
        }
    }
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    counts
}

/// The summary's text at `width` columns, or nothing for a run of a handful of results
/// or fewer.
pub fn text(run: &Run, width: usize) -> String {
    let hardening = super::harden::text(run, width);
    if run.results.len() <= HANDFUL {
        return hardening;
    }
    let picked = pick(&run.results);
    let mut rows: Vec<[String; 5]> = vec![[
        "Summary".into(),
        "figure".into(),
        "95% CI".into(),
        "conv".into(),
        "from".into(),
    ]];
    for (f, src, r) in picked {
        let (v, ci) = shown(src, r);
        let conv = r.measured.as_ref().is_some_and(|m| m.converged);
        rows.push([
            f.label().to_string(),
            v,
            ci,
            if conv { "yes" } else { "no" }.into(),
            what(src, r),
        ]);
    }
    let line = converged_line(run);
    if rows.len() == 1 {
        return "\n".to_string()
            + &wrap(&format!("Summary: {line}"), width, 0, 2)
            + &hardening;
    }
    let rows: Vec<Vec<String>> = rows.into_iter().map(Vec::from).collect();
    let mut s = String::from("\n");
    s += &grid(&rows, &[false, true, true, true, false], 1, 0, width);
    s += &wrap(&line, width, 0, 2);
    s + &hardening
}

/// The summary as a Markdown table (and the converged count), or nothing for a run of
/// a handful of results or fewer.
pub fn markdown(run: &Run) -> String {
    if run.results.len() <= HANDFUL {
        return String::new();
    }
    let esc = |s: &str| s.replace('|', "\\|");
    let mut s = String::from(
        "\n**Summary**: the figures people quote\n\n\
         | figure | median | 95% CI | from |\n|---|--:|--:|---|\n",
    );
    for (f, src, r) in pick(&run.results) {
        let (v, ci) = shown(src, r);
        s += &format!(
            "| {} | {v} | {ci} | {} `{}` |\n",
            f.label(),
            esc(&what(src, r)),
            esc(format!("{} {}", r.name, r.param_label()).trim_end())
        );
    }
    s += &format!("\n{}\n", converged_line(run));
    s
}

/// How many rows converged, why the others did not, and how many were skipped or
/// failed.
pub fn converged_line(run: &Run) -> String {
    let measured = run.results.iter().filter(|r| r.measured.is_some()).count();
    let converged = run
        .results
        .iter()
        .filter(|r| r.measured.as_ref().is_some_and(|m| m.converged))
        .count();
    let count = |st: Status| run.results.iter().filter(|r| r.status == st).count();
    let mut line = format!("{converged} of {measured} measured rows converged");
    let why = reasons(&run.results);
    if !why.is_empty() {
        let parts: Vec<String> = why.iter().map(|(w, n)| format!("{n} {w}")).collect();
        line += &format!("; not converged: {}", parts.join(", "));
    }
    let (sk, fa) = (count(Status::Skipped), count(Status::Failed));
    if sk + fa > 0 {
        line += &format!("; {sk} skipped, {fa} failed");
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::tests::run_with_medians;

    /// A row: a name, its parameters and its median.
    type Row<'a> = (&'a str, &'a [(&'a str, &'a str)], f64);

    #[test]
    fn rows_are_counted_under_their_first_reason() {
        use crate::harness::verdict::{Outlook, Why};
        let mut run = run_with_medians(&[("a.x", 1.0), ("a.y", 2.0), ("a.z", 3.0)]);
        let reasons_of = [
            vec![
                Why::SlowState { above_pct: 35.0 },
                Why::Budget {
                    outlook: Outlook::NoClean,
                },
            ],
            vec![Why::Budget {
                outlook: Outlook::More {
                    rounds: 4,
                    secs: 0.3,
                },
            }],
            vec![],
        ];
        for (r, why) in run.results.iter_mut().zip(reasons_of) {
            let m = r.measured.as_mut().unwrap();
            m.converged = why.is_empty();
            m.why = why;
        }
        let mut got = reasons(&run.results);
        got.sort();
        assert_eq!(
            got,
            vec![
                ("its rounds met a slow state of the machine", 1),
                ("the time budget ended", 1)
            ]
        );
    }

    /// A run of `rows`, every one measured and converged.
    fn run_of(rows: &[Row<'_>]) -> Run {
        let names: Vec<(&str, f64)> = rows.iter().map(|(n, _, m)| (*n, *m)).collect();
        let mut run = run_with_medians(&names);
        for (r, (_, params, _)) in run.results.iter_mut().zip(rows) {
            r.params = params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        }
        run
    }

    const PIPE_SAME: &[(&str, &str)] = &[
        ("mechanism", "pipe"),
        ("placement", "same-cpu"),
        ("kind", "process"),
        ("fpu", "clean"),
    ];
    const PIPE_CROSS: &[(&str, &str)] = &[
        ("mechanism", "pipe"),
        ("placement", "cross-cpu"),
        ("kind", "process"),
        ("fpu", "clean"),
    ];

    #[test]
    fn each_figure_comes_from_its_row_and_unselected_ones_are_left_out() {
        let run = run_of(&[
            ("syscall.getpid", &[("via", "libc")], 80.0),
            ("syscall.getpid", &[("via", "raw")], 70.0),
            ("syscall.getppid", &[], 90.0),
            ("syscall.clock_gettime", &[("via", "syscall")], 60.0),
            ("syscall.clock_gettime", &[("via", "vdso")], 20.0),
            ("ctx.pingpong", PIPE_SAME, 4000.0),
            ("ctx.pingpong", PIPE_CROSS, 9000.0),
            (
                "file.read",
                &[("method", "read"), ("size", "65536"), ("cache", "warm")],
                6553.6,
            ),
        ]);
        let picked: Vec<(&str, &str, String)> = pick(&run.results)
            .into_iter()
            .map(|(f, s, r)| (f.label(), s.what, shown(s, r).0))
            .collect();
        assert_eq!(
            picked,
            [
                (
                    "null system call, libc",
                    "getpid, C library",
                    "80.0 ns".to_string()
                ),
                (
                    "null system call, raw",
                    "getpid, syscall in the loop",
                    "70.0 ns".into()
                ),
                ("vDSO clock read", "clock_gettime", "20.0 ns".into()),
                (
                    "context switch, same CPU",
                    "half a pipe ping-pong",
                    "2.00 µs".into()
                ),
                (
                    "context switch, cross CPU",
                    "half a pipe ping-pong",
                    "4.50 µs".into()
                ),
                (
                    "pipe round trip",
                    "pipe ping-pong, same CPU",
                    "4.00 µs".into()
                ),
                (
                    "file read bandwidth, warm",
                    "read(2) of 64 KiB",
                    "10.00 GB/s".into()
                ),
            ]
        );
        let text = text(&run, 100);
        assert!(text.contains("8 of 8 measured rows converged"), "{text}");
        assert!(!text.contains("fork"), "fork was not selected: {text}");
        for line in text.lines() {
            assert!(line.chars().count() <= 100, "{text}");
        }
    }

    #[test]
    fn a_handful_of_rows_has_no_summary_and_reasons_are_counted() {
        let mut run = run_of(&[("syscall.getpid", &[], 80.0)]);
        assert_eq!(text(&run, 100), "");
        let mut more = run_of(&[
            ("syscall.getuid", &[], 1.0),
            ("syscall.getgid", &[], 1.0),
            ("syscall.uname", &[], 1.0),
            ("syscall.times", &[], 1.0),
            ("syscall.kill", &[], 1.0),
        ]);
        use crate::harness::verdict::{Outlook, Why};
        let wide = Why::Wide { outlook: None };
        for (r, why) in more.results.iter_mut().zip([
            wide.clone(),
            wide,
            Why::Budget {
                outlook: Outlook::NoClean,
            },
            Why::FewClean,
        ]) {
            let m = r.measured.as_mut().unwrap();
            m.converged = false;
            m.why = vec![why];
        }
        run.results.append(&mut more.results);
        assert_eq!(
            reasons(&run.results),
            [
                ("rounds spread too much for the target", 2),
                ("the time budget ended", 1),
                ("too few clean samples", 1)
            ]
        );
        let text = text(&run, 100);
        assert!(text.contains("null system call"), "{text}");
        assert!(text.contains("2 of 6 measured rows converged"), "{text}");
        assert!(
            text.contains("2 rounds spread too much for the target"),
            "{text}"
        );
        let md = markdown(&run);
        // A row from before via existed reads as via=libc.
        assert!(md.contains("| null system call, libc | 80.0 ns |"), "{md}");
        assert!(md.contains("2 of 6 measured rows converged"), "{md}");
    }
}
