//! The report: one self-contained HTML file (inline CSS and inline SVG; no script, font,
//! image or network reference of any kind) that opens offline in any browser.
//!
//! Sections, in order: the runs (host, kernel, profile, date, command line), a summary
//! of every result, each comparison (table and forest plot), the sweeps, the ring
//! (NCAR) graph, the file-read figure, the mailbox echo, and every benchmark's samples
//! and distribution. A graph whose data the runs lack is left out with one line saying
//! what it needs. A pure function of its inputs: the same runs give the same bytes.

use super::graphs::{self, run_name};
use crate::compare::{key, Comparison, RunLabel};
use crate::draw::svg::{escape, Svg};
use crate::error::UsageError;
use crate::results::describe_states;
use crate::results::{fmt_ns, fmt_unix_time, BenchResult, Run, Status};
use std::fmt::Write;

/// The most sample points one samples graph draws in the report; longer series are
/// thinned (every k-th clean sample, outliers kept), which the graph's note says.
pub const REPORT_MAX_POINTS: usize = 800;

const CSS: &str = "\
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1240px;padding:0 16px 40px;color:#222}\
h1{font-size:22px;margin:18px 0 4px}h2{font-size:18px;border-bottom:2px solid #ddd;padding-bottom:2px;margin-top:32px}\
h3{font-size:15px;margin:22px 0 6px}\
nav a{margin-right:12px}\
table{border-collapse:collapse;margin:8px 0;font-size:13px}\
th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}\
th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\
tr.skipped td{color:#888}tr.failed td{color:#b00}\
.slower{color:#b34700;font-weight:600}.faster{color:#00734d;font-weight:600}\
figure{margin:10px 0}figcaption{font-size:12px;color:#555}\
svg{max-width:100%;height:auto;display:block}\
.pair{display:grid;grid-template-columns:1fr 1fr;gap:8px}\
p.none{color:#666;font-style:italic}code{font-size:12px}\
";

/// The report of `runs` and `comparisons` as one HTML document.
pub fn html(runs: &[(RunLabel, Run)], comparisons: &[Comparison]) -> String {
    let mut out = String::new();
    let title = match runs.first() {
        Some((l, r)) => {
            format!(
                "syscost report — {} — {}",
                l.host,
                fmt_unix_time(r.started_unix_s)
            )
        }
        None => "syscost report".into(),
    };
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\"><title>{}</title>\
         <style>{CSS}</style></head><body>\n<h1>{}</h1>\n",
        escape(&title),
        escape(&title)
    );
    out += "<nav><a href=\"#runs\">Runs</a><a href=\"#quoted\">Quoted figures</a>\
            <a href=\"#summary\">Summary</a>\
            <a href=\"#comparisons\">Comparisons</a><a href=\"#sweeps\">Sweeps</a>\
            <a href=\"#ring\">Ring</a><a href=\"#file-read\">File read</a>\
            <a href=\"#mailbox\">Mailbox echo</a><a href=\"#scaling\">Scaling</a>\
            <a href=\"#benchmarks\">Benchmarks</a></nav>\n";
    runs_section(&mut out, runs);
    quoted_section(&mut out, runs);
    summary_section(&mut out, runs);
    comparisons_section(&mut out, comparisons);
    section(&mut out, "sweeps", "Sweeps", |o| {
        match graphs::sweeps(runs, None) {
            Ok(all) => {
                o.push_str("<div class=\"pair\">");
                for s in all {
                    figure(o, &s, "");
                }
                o.push_str("</div>\n");
            }
            Err(e) => none(o, "sweep graph", &e),
        }
    });
    section(
        &mut out,
        "ring",
        "Ring of tasks (Sloan 1992, the NCAR graph)",
        |o| graph_or_why(o, "ring graph", graphs::ring(runs), ""),
    );
    section(
        &mut out,
        "file-read",
        "Reading a file (manea1999 figures 1–2)",
        |o| graph_or_why(o, "file-read figure", graphs::file_read(runs), ""),
    );
    section(
        &mut out,
        "mailbox",
        "Mailbox echo (Nagy, VAX/VMS Table III)",
        |o| graph_or_why(o, "mailbox echo", graphs::mailbox(runs), ""),
    );
    section(&mut out, "scaling", "Scaling across CPUs (copies)", |o| {
        graph_or_why(o, "scaling graph", graphs::scaling(runs, None), "")
    });
    benchmarks_section(&mut out, runs);
    out += "</body></html>\n";
    out
}

fn section(out: &mut String, id: &str, title: &str, body: impl FnOnce(&mut String)) {
    let _ = writeln!(out, "<section id=\"{id}\"><h2>{}</h2>", escape(title));
    body(out);
    out.push_str("</section>\n");
}

fn figure(out: &mut String, svg: &Svg, caption: &str) {
    out.push_str("<figure>");
    out.push_str(&svg.inline());
    if !caption.is_empty() {
        let _ = write!(out, "<figcaption>{}</figcaption>", escape(caption));
    }
    out.push_str("</figure>\n");
}

fn none(out: &mut String, what: &str, why: &UsageError) {
    let _ = writeln!(
        out,
        "<p class=\"none\">No {what}: {}</p>",
        escape(&why.to_string())
    );
}

fn graph_or_why(out: &mut String, what: &str, g: Result<Svg, UsageError>, caption: &str) {
    match g {
        Ok(s) => figure(out, &s, caption),
        Err(e) => none(out, what, &e),
    }
}

fn opt(s: &Option<String>) -> String {
    s.clone().unwrap_or_else(|| "unknown".into())
}

fn runs_section(out: &mut String, runs: &[(RunLabel, Run)]) {
    section(out, "runs", "Runs", |o| {
        if runs.is_empty() {
            o.push_str("<p class=\"none\">No runs were given.</p>\n");
            return;
        }
        o.push_str("<table><tr><th></th>");
        for (l, _) in runs {
            let _ = write!(o, "<th>{}</th>", escape(&run_name(l)));
        }
        o.push_str("</tr>\n");
        type Fact = (&'static str, fn(&RunLabel, &Run) -> String);
        let facts: [Fact; 14] = [
            ("host", |_, r| opt(&r.host.hostname)),
            ("CPU", |_, r| {
                format!("{} ({} online)", opt(&r.host.cpu_model), r.host.cpus_online)
            }),
            ("kernel", |_, r| {
                format!("{} {}", opt(&r.host.kernel), opt(&r.host.kernel_version))
            }),
            ("virtualization", |_, r| opt(&r.host.virtualization)),
            ("preemption", |_, r| opt(&r.host.preempt_model)),
            ("clocksource", |_, r| opt(&r.host.clocksource)),
            ("harness clock", |_, r| {
                format!(
                    "{} ({} ns steps, {:.1} ns per read)",
                    r.clock.name,
                    super::table::step_text(r.clock.resolution()),
                    r.clock.read_cost_ns
                )
            }),
            ("profile", |_, r| {
                format!(
                    "{} (CI target ±{}%, seed {})",
                    r.harness.profile,
                    r.harness.ci_target * 100.0,
                    r.harness.seed
                )
            }),
            ("started", |_, r| fmt_unix_time(r.started_unix_s)),
            ("complete", |_, r| {
                if r.complete {
                    "yes"
                } else {
                    "no (interrupted or running)"
                }
                .into()
            }),
            ("load average", |_, r| {
                r.host.loadavg.map_or("unknown".into(), |l| {
                    format!("{:.2} {:.2} {:.2}", l[0], l[1], l[2])
                })
            }),
            ("machine states", |_, r| {
                let m = &r.machine;
                let mut s = format!(
                    "{} canary readings: {}; spread {:.1}%",
                    m.readings,
                    describe_states(&m.states),
                    m.spread * 100.0
                );
                if m.unsteady {
                    s += " (too unsteady for the profile's CI target)";
                }
                s
            }),
            ("results", |_, r| {
                let ok = r.results.iter().filter(|x| x.status == Status::Ok).count();
                format!("{} ({ok} measured)", r.results.len())
            }),
            ("command line", |_, r| r.command_line.join(" ")),
        ];
        for (name, f) in facts {
            let _ = write!(o, "<tr><th>{name}</th>");
            for (l, r) in runs {
                let _ = write!(o, "<td>{}</td>", escape(&f(l, r)));
            }
            o.push_str("</tr>\n");
        }
        o.push_str("</table>\n");
    });
}

fn status_row(r: &BenchResult) -> (&'static str, String) {
    match r.status {
        Status::Ok => ("", String::new()),
        Status::Skipped => (
            "skipped",
            format!("skipped: {}", r.reason.as_deref().unwrap_or("")),
        ),
        Status::Failed => (
            "failed",
            format!("FAILED: {}", r.reason.as_deref().unwrap_or("")),
        ),
    }
}

/// The figures people quote ([`super::summary`]), per run, with how many rows converged.
fn quoted_section(out: &mut String, runs: &[(RunLabel, Run)]) {
    section(out, "quoted", "The figures people quote", |o| {
        for (l, run) in runs {
            if runs.len() > 1 {
                let _ = writeln!(o, "<h3>{}</h3>", escape(&run_name(l)));
            }
            let picked = super::summary::pick(&run.results);
            if picked.is_empty() {
                o.push_str("<p>None of their benchmarks was measured in this run.</p>\n");
                continue;
            }
            o.push_str(
                "<table><tr><th>what</th><th>figure</th><th>95% CI</th>\
                 <th>converged</th><th>from</th></tr>\n",
            );
            for (f, src, r) in picked {
                let (v, ci) = super::summary::shown(src, r);
                let conv = r.measured.as_ref().is_some_and(|m| m.converged);
                let _ = writeln!(
                    o,
                    "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                     <td>{}</td><td>{} ({} {})</td></tr>",
                    escape(f.label()),
                    escape(&v),
                    escape(&ci),
                    if conv { "yes" } else { "no" },
                    escape(src.what),
                    escape(&r.name),
                    escape(&r.param_label())
                );
            }
            o.push_str("</table>\n");
            let _ =
                writeln!(o, "<p>{}</p>", escape(&super::summary::converged_line(run)));
        }
    });
}

fn summary_section(out: &mut String, runs: &[(RunLabel, Run)]) {
    section(out, "summary", "Summary of every result", |o| {
        for (i, (l, run)) in runs.iter().enumerate() {
            if runs.len() > 1 {
                let _ = writeln!(o, "<h3>{}</h3>", escape(&run_name(l)));
            }
            o.push_str(
                "<table><tr><th>benchmark</th><th>params</th><th>figure</th>\
                 <th>95% CI (rounds)</th><th>rounds</th><th>states / notes</th></tr>\n",
            );
            for (j, r) in run.results.iter().enumerate() {
                let (class, status) = status_row(r);
                let _ = write!(
                    o,
                    "<tr class=\"{class}\"><td>{}</td><td>{}</td>",
                    link(i, j, r),
                    escape(&r.param_label())
                );
                match &r.measured {
                    Some(m) => {
                        let rounds =
                            m.rounds.iter().filter(|x| x.median_ns.is_some()).count();
                        let half =
                            (m.ci_high_ns - m.ci_low_ns) / 2.0 / m.median_ns * 100.0;
                        let mut notes = Vec::new();
                        if m.states.len() > 1 {
                            notes.push(format!("states {}", describe_states(&m.states)));
                        }
                        if !m.converged {
                            notes.push("not converged".into());
                        }
                        if let Some(b) = &m.between_runs {
                            notes.push(super::table::between_runs_note(m, b));
                        }
                        let notes = notes.join("; ");
                        let _ = writeln!(
                            o,
                            "<td class=\"n\">{}</td><td class=\"n\">{} – {} (±{:.1}%)</td>\
                             <td class=\"n\">{rounds}</td><td>{}</td></tr>",
                            fmt_ns(m.median_ns),
                            fmt_ns(m.ci_low_ns),
                            fmt_ns(m.ci_high_ns),
                            if half.is_finite() { half } else { 0.0 },
                            escape(&notes)
                        );
                    }
                    None => {
                        let _ = writeln!(
                            o,
                            "<td class=\"n\">-</td><td></td><td></td><td>{}</td></tr>",
                            escape(&status)
                        );
                    }
                }
            }
            o.push_str("</table>\n");
        }
    });
}

fn anchor(run: usize, result: usize) -> String {
    format!("b{run}-{result}")
}

fn link(run: usize, result: usize, r: &BenchResult) -> String {
    if r.measured.is_some() {
        format!(
            "<a href=\"#{}\">{}</a>",
            anchor(run, result),
            escape(&r.name)
        )
    } else {
        escape(&r.name)
    }
}

fn comparisons_section(out: &mut String, comparisons: &[Comparison]) {
    section(out, "comparisons", "Comparisons", |o| {
        if comparisons.is_empty() {
            o.push_str(
                "<p class=\"none\">No comparison: a comparison needs two runs compared.</p>\n",
            );
        }
        for c in comparisons {
            let n = c.tally();
            let _ = write!(
                o,
                "<h3>{} against {} (base)</h3>\n<p>{} faster, {} slower, {} no change, {} \
                 cannot tell at a noise threshold of ±{:.0}%.</p>\n",
                escape(&run_name(&c.other)),
                escape(&run_name(&c.base)),
                n.faster,
                n.slower,
                n.same,
                n.unsure,
                c.threshold * 100.0
            );
            if !c.host_differences.is_empty() {
                o.push_str("<p>The runs differ in:</p><ul>");
                for d in &c.host_differences {
                    let _ = write!(
                        o,
                        "<li>{}: {} → {}</li>",
                        escape(&d.fact),
                        escape(&d.base),
                        escape(&d.other)
                    );
                }
                o.push_str("</ul>\n");
            }
            if !c.rows.is_empty() {
                o.push_str(
                    "<table><tr><th>benchmark</th><th>params</th><th>base</th><th>other</th>\
                     <th>ratio</th><th>95% CI</th><th>verdict</th></tr>\n",
                );
            }
            for r in &c.rows {
                let class = match r.verdict {
                    crate::compare::Verdict::Slower => "slower",
                    crate::compare::Verdict::Faster => "faster",
                    crate::compare::Verdict::NoChange => "",
                    crate::compare::Verdict::CannotTell => "unsure",
                };
                let params: Vec<String> =
                    r.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
                let _ = writeln!(
                    o,
                    "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                     <td class=\"n\">{}</td><td class=\"n\">{} – {}</td>\
                     <td class=\"{class}\">{}</td></tr>",
                    escape(&r.name),
                    escape(&params.join(" ")),
                    fmt_ns(r.base_ns),
                    fmt_ns(r.other_ns),
                    num3(r.ratio),
                    num3(r.ci_low),
                    num3(r.ci_high),
                    r.verdict.word()
                );
            }
            if !c.rows.is_empty() {
                o.push_str("</table>\n");
            }
            for (what, list) in [
                ("only in the base run", &c.only_in_base),
                ("only in the other run", &c.only_in_other),
            ] {
                if !list.is_empty() {
                    let _ = writeln!(o, "<p>Measured {what}: {}</p>", escape(&few(list)));
                }
            }
            graph_or_why(o, "forest plot", graphs::forest(c), "");
        }
    });
}

/// A ratio with three decimals, or `-` when it is not a number.
fn num3(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.3}")
    } else {
        "-".into()
    }
}

/// The first ten of a list, and how many more.
fn few(list: &[String]) -> String {
    let mut s = list.iter().take(10).cloned().collect::<Vec<_>>().join(", ");
    if list.len() > 10 {
        s += &format!(" … and {} more", list.len() - 10);
    }
    s
}

fn benchmarks_section(out: &mut String, runs: &[(RunLabel, Run)]) {
    section(
        out,
        "benchmarks",
        "Every benchmark: samples and distribution",
        |o| {
            let _ = writeln!(
            o,
            "<p>Left: samples in time, rounds back to back, with each round's median and the \
             getpid canary read before it (on the samples' axis where it fits their range, \
             else on a right axis of its own). Right: the clean samples' histogram \
             with the headline median and its 95% CI. Series longer than {REPORT_MAX_POINTS} \
             points are thinned for drawing (every k-th clean sample, every outlier kept); \
             each graph says so.</p>"
        );
            for (i, (l, run)) in runs.iter().enumerate() {
                for (j, r) in run.results.iter().enumerate() {
                    if r.measured.is_none() {
                        continue;
                    }
                    let name = run_name(l);
                    let _ = write!(
                        o,
                        "<h3 id=\"{}\">{}{}</h3>\n<div class=\"pair\">",
                        anchor(i, j),
                        escape(&key(r)),
                        if runs.len() > 1 {
                            format!(" — {}", escape(&name))
                        } else {
                            String::new()
                        }
                    );
                    graph_or_why(
                        o,
                        "samples graph",
                        graphs::samples(r, &name, REPORT_MAX_POINTS),
                        "",
                    );
                    graph_or_why(o, "distribution", graphs::distribution(r, &name), "");
                    o.push_str("</div>\n");
                    if let Some(e) = &r.explain {
                        figure(o, &graphs::flame(r, e), &explained(e, &r.op));
                    }
                }
            }
        },
    );
}

/// A flame graph's caption: the groups' ns per operation and the sampling's notes.
fn explained(e: &crate::explain::Explanation, op: &str) -> String {
    let groups: Vec<String> = e
        .groups
        .iter()
        .map(|g| format!("{} {:.1} ns", g.name, g.self_ns))
        .collect();
    let mut s = format!(
        "Where the time goes, per {op} ({} samples of {}, each share ±{:.1} ns at most): {}.",
        e.samples,
        e.event,
        e.bound_ns,
        groups.join(", ")
    );
    for n in &e.notes {
        s += &format!(" {n}.");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::graphs::tests::fixture;

    #[test]
    fn the_report_is_self_contained_and_has_every_section() {
        let (runs, c) = fixture::pair();
        let h = html(&runs, std::slice::from_ref(&c));
        for bad in [
            "http://", "https://", "src=", "<script", "<link", "<img", "url(", "@import",
        ] {
            assert!(!h.contains(bad), "the report holds {bad}");
        }
        for id in [
            "runs",
            "quoted",
            "summary",
            "comparisons",
            "sweeps",
            "ring",
            "file-read",
            "mailbox",
            "benchmarks",
        ] {
            assert!(
                h.contains(&format!("<section id=\"{id}\">")),
                "no section {id}"
            );
        }
        // Host text is escaped.
        assert!(h.contains("Test CPU &lt;fast&gt; &amp; cheap"));
        // Forest plot, sweeps, ring, file read, mailbox, and two graphs per result.
        let measured: usize = runs.iter().map(|(_, r)| r.results.len()).sum();
        assert!(h.matches("<svg").count() >= 2 * measured + 5);
        assert!(!h.contains("NaN"));
        assert_eq!(h, html(&runs, &[c]));
    }

    #[test]
    fn missing_graphs_are_named_with_what_they_need() {
        let run = fixture::run(vec![fixture::result("syscall.getpid", &[], 100.0, 5)]);
        let runs = vec![(RunLabel::of("one.json", None, &run), run)];
        let h = html(&runs, &[]);
        assert!(h.contains("No ring graph: the ring graph needs a ctx.ring sweep"));
        assert!(h.contains("No file-read figure:"));
        assert!(h.contains("No mailbox echo:"));
        assert!(h.contains("No sweep graph:"));
        assert!(h.contains("No comparison"));
    }
}
