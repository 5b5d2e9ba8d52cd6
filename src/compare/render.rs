//! Rendering comparisons: a text table for the terminal, Markdown fit for a pull-request
//! comment, and JSON (the serialised [`Comparison`] or [`Table`]).

use super::{Comparison, RunLabel, Table, Verdict};
use crate::results::fmt_ns;

fn when(unix_s: f64) -> String {
    crate::results::fmt_unix_time(unix_s)
}

fn label_line(l: &RunLabel) -> String {
    format!(
        "{} · {} · {} · {}",
        l.reference,
        l.host,
        l.kernel,
        when(l.started_unix_s)
    )
}

fn ratio_text(r: f64) -> String {
    if r.is_finite() {
        format!("{r:.3}")
    } else {
        "-".into()
    }
}

fn change_text(r: f64) -> String {
    if r.is_finite() {
        format!("{:+.1}%", (r - 1.0) * 100.0)
    } else {
        "-".into()
    }
}

/// The lines that say the runs come from different hosts or configurations.
fn differences(c: &Comparison) -> Vec<String> {
    c.host_differences
        .iter()
        .map(|d| format!("{}: {} → {}", d.fact, d.base, d.other))
        .collect()
}

/// A warning when the machine ran at another speed in B than in A.
fn machine_warning(c: &Comparison) -> Option<String> {
    let m = c.machine.as_ref().filter(|m| m.differs)?;
    Some(format!(
        "the machine ran at another speed: getpid canary {} in A, {} in B ({}); changes of \
         that size may be the machine's state, not the code: repeat both runs, or compare \
         runs whose canaries agree",
        fmt_ns(m.base_ns),
        fmt_ns(m.other_ns),
        change_text(m.ratio)
    ))
}

/// The comparison as a terminal table, as wide as standard output's terminal (or
/// `COLUMNS`, or 100).
pub fn text(c: &Comparison) -> String {
    text_at(c, crate::os::term::stdout_width())
}

/// The comparison as a terminal table no wider than `width`: columns that do not fit
/// go into a further block, which repeats the benchmark.
pub fn text_at(c: &Comparison, width: usize) -> String {
    let mut s = format!("A  {}\nB  {}\n", label_line(&c.base), label_line(&c.other));
    if let Some(w) = machine_warning(c) {
        s += &format!("\nwarning: {w}\n");
    }
    let diffs = differences(c);
    if !diffs.is_empty() {
        s += "\nwarning: the runs differ in what decides these costs; a change may be the \
              machine, not the code:\n";
        for d in diffs {
            s += &format!("  {d}\n");
        }
    }
    // Where the machine ran at another speed while a row was measured (its own
    // canaries apart by more than the threshold, the run-level warning's rule), each
    // system-call row's change at equal speed stands beside its verdict.
    let speed = shows_speed(c);
    let mut head = vec![
        "benchmark",
        "A",
        "B",
        "B/A",
        "change",
        "95% CI of B/A",
        "verdict",
    ];
    if speed {
        head.push("at equal speed");
    }
    let mut rows: Vec<Vec<String>> = vec![head.iter().map(|c| c.to_string()).collect()];
    for r in &c.rows {
        let mut row = vec![
            super::key_of(&r.name, &r.params),
            fmt_ns(r.base_ns),
            fmt_ns(r.other_ns),
            ratio_text(r.ratio),
            change_text(r.ratio),
            format!("{} – {}", ratio_text(r.ci_low), ratio_text(r.ci_high)),
            r.verdict.word().to_string(),
        ];
        if speed {
            row.push(r.at_equal_speed.map_or("–".into(), change_text));
        }
        rows.push(row);
    }
    s.push('\n');
    let right = [false, true, true, true, true, true, false, true];
    s += &crate::draw::text::grid(&rows, &right[..head.len()], 1, 0, width);
    if speed {
        s +=
            "\nat equal speed: each system-call row's change over its own canary's (the \
              machine's speed while it was measured, B over A); not a verdict, and \
              not given for other kinds of work, which the canary does not follow\n";
    }
    s += &footer(c);
    for d in &c.explains {
        s += &crate::explain::diff::text(d, 15);
    }
    s
}

fn footer(c: &Comparison) -> String {
    let (faster, slower, same) = c.tally();
    let mut s = format!(
        "\n{} compared: {slower} slower, {faster} faster, {same} no change (threshold ±{}%: \
         a change counts when its 95% interval excludes 1 and it exceeds the threshold)\n",
        c.rows.len(),
        c.threshold * 100.0
    );
    if !c.only_in_base.is_empty() {
        s += &format!("only in A: {}\n", c.only_in_base.join(", "));
    }
    if !c.only_in_other.is_empty() {
        s += &format!("only in B: {}\n", c.only_in_other.join(", "));
    }
    if !c.scaling.is_empty() {
        s += "\ncopies points (throughput of all copies; efficiency against one copy):\n";
        for x in &c.scaling {
            let fixed: Vec<String> =
                x.fixed.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let eff = |e: Option<f64>| {
                e.map_or("–".to_string(), |e| format!("{:.1}%", e * 100.0))
            };
            s += &format!(
                "  {} {} copies={}: {} → {} ({}), efficiency {} → {}\n",
                x.name,
                fixed.join(" "),
                x.n,
                crate::draw::units::fmt_rate(x.throughput_ops_s.0),
                crate::draw::units::fmt_rate(x.throughput_ops_s.1),
                change_text(x.throughput_ops_s.1 / x.throughput_ops_s.0),
                eff(x.efficiency.0),
                eff(x.efficiency.1)
            );
        }
    }
    s
}

/// Whether the comparison shows each row's change at equal machine speed: some row's
/// own canaries differ by more than the threshold (the run-level warning's rule).
fn shows_speed(c: &Comparison) -> bool {
    c.rows
        .iter()
        .any(|r| r.speed.is_some_and(|v| (v - 1.0).abs() > c.threshold))
}

/// What the "at equal speed" column is.
const SPEED_NOTE: &str = "at equal speed: each system-call row's change over its own \
                          canary's (the machine's speed while it was measured, B over \
                          A); not a verdict, and not given for other kinds of work, \
                          which the canary does not follow";

/// The comparison as GitHub-flavoured Markdown.
pub fn markdown(c: &Comparison) -> String {
    let esc = |s: &str| s.replace('|', "\\|");
    let mut s = format!(
        "**A** {}  \n**B** {}\n\n",
        esc(&label_line(&c.base)),
        esc(&label_line(&c.other))
    );
    if let Some(w) = machine_warning(c) {
        s += &format!("> **Warning:** {}\n\n", esc(&w));
    }
    let diffs = differences(c);
    if !diffs.is_empty() {
        s += "> **The runs differ in what decides these costs:** ";
        s += &esc(&diffs.join("; "));
        s += "\n\n";
    }
    let speed = shows_speed(c);
    s += "| benchmark | A | B | B/A | change | 95% CI of B/A | verdict |";
    s += if speed { " at equal speed |\n" } else { "\n" };
    s += "|---|--:|--:|--:|--:|--:|:-:|";
    s += if speed { "--:|\n" } else { "\n" };
    for r in &c.rows {
        let verdict = match r.verdict {
            Verdict::Slower => "**slower**",
            Verdict::Faster => "**faster**",
            Verdict::NoChange => "no change",
        };
        s += &format!(
            "| {} | {} | {} | {} | {} | {} – {} | {verdict} |",
            esc(&super::key_of(&r.name, &r.params)),
            fmt_ns(r.base_ns),
            fmt_ns(r.other_ns),
            ratio_text(r.ratio),
            change_text(r.ratio),
            ratio_text(r.ci_low),
            ratio_text(r.ci_high)
        );
        if speed {
            s += &format!(" {} |", r.at_equal_speed.map_or("–".into(), change_text));
        }
        s.push('\n');
    }
    if speed {
        s += &format!("\n{SPEED_NOTE}\n");
    }
    s += &footer(c).replace('\n', "  \n");
    s
}

/// What the cross-run table's last line (or row) gives: the way round of two runs
/// compared.
const GEOMEAN: &str = "ratio to A (geometric mean of X/A over the benchmarks both \
                       measured; above 1 is slower than A, as in syscost compare A B)";

/// Run `i`'s ratio to the first in `r`, with its interval where both runs have one
/// (`1.02 (0.98–1.06)`); `-` where either run lacks the benchmark.
fn table_ratio(r: &crate::compare::TableRow, i: usize) -> String {
    match (r.ratio[i], r.ci_low[i], r.ci_high[i]) {
        (Some(x), Some(lo), Some(hi)) => {
            format!("{x:.2} ({}–{})", ratio_text(lo), ratio_text(hi))
        }
        (Some(x), _, _) => format!("{x:.2}"),
        _ => "-".into(),
    }
}

/// The cross-run table for the terminal: one column per run, no line wider than
/// standard output's terminal (columns that do not fit go into a further block).
pub fn table_text(t: &Table) -> String {
    let mut s = String::new();
    for (i, l) in t.runs.iter().enumerate() {
        s += &format!("{}  {}\n", column_name(i), label_line(l));
    }
    let mut head = vec!["benchmark".to_string()];
    head.extend((0..t.runs.len()).map(column_name));
    head.extend(
        (1..t.runs.len())
            .map(|i| format!("{}/{} (95% CI)", column_name(i), column_name(0))),
    );
    let mut rows = vec![head];
    for r in &t.rows {
        let mut row = vec![r.key.clone()];
        row.extend(
            r.median_ns
                .iter()
                .map(|m| m.map(fmt_ns).unwrap_or_else(|| "-".into())),
        );
        row.extend((1..t.runs.len()).map(|i| table_ratio(r, i)));
        rows.push(row);
    }
    let right: Vec<bool> = (0..rows[0].len()).map(|i| i > 0).collect();
    s.push('\n');
    s += &crate::draw::text::grid(&rows, &right, 1, 0, crate::os::term::stdout_width());
    s += &format!("\n{GEOMEAN}:\n");
    for (i, g) in t.geomean_ratio.iter().enumerate() {
        s += &format!(
            "  {}  {} over {}\n",
            column_name(i),
            g.map(|x| format!("{x:.3}")).unwrap_or_else(|| "-".into()),
            crate::draw::text::count(t.geomean_count[i], "benchmark", "benchmarks")
        );
    }
    s
}

/// The cross-run table as Markdown.
pub fn table_markdown(t: &Table) -> String {
    let esc = |s: &str| s.replace('|', "\\|");
    let mut s = String::new();
    for (i, l) in t.runs.iter().enumerate() {
        s += &format!("**{}** {}  \n", column_name(i), esc(&label_line(l)));
    }
    s += "\n| benchmark |";
    for i in 0..t.runs.len() {
        s += &format!(" {} |", column_name(i));
    }
    for i in 1..t.runs.len() {
        s += &format!(" {}/{} (95% CI) |", column_name(i), column_name(0));
    }
    s += "\n|---|";
    s += &"--:|".repeat(t.runs.len() * 2 - 1);
    s += "\n";
    for r in &t.rows {
        s += &format!("| {} |", esc(&r.key));
        for m in &r.median_ns {
            s += &format!(" {} |", m.map(fmt_ns).unwrap_or_else(|| "-".into()));
        }
        for i in 1..t.runs.len() {
            s += &format!(" {} |", table_ratio(r, i));
        }
        s += "\n";
    }
    s += "| **ratio to A (geometric mean; above 1 is slower)** |";
    for _ in 0..t.runs.len() {
        s += " |";
    }
    for g in t.geomean_ratio.iter().skip(1) {
        s += &format!(
            " **{}** |",
            g.map(|x| format!("{x:.3}")).unwrap_or_else(|| "-".into())
        );
    }
    s += "\n";
    s
}

/// A, B, …, Z, then R27, R28, ….
pub fn column_name(i: usize) -> String {
    if i < 26 {
        ((b'A' + i as u8) as char).to_string()
    } else {
        format!("R{}", i + 1)
    }
}
