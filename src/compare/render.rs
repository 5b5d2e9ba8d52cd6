//! Rendering comparisons: a text table for the terminal, Markdown fit for a pull-request
//! comment, and JSON (the serialised [`Comparison`] or [`Table`]).

use super::{Comparison, Row, RunLabel, Table, Verdict};
use crate::draw::text::{count, grid, wrap, wrap_lines};
use crate::results::fmt_ns;

fn when(unix_s: f64) -> String {
    crate::results::fmt_unix_time(unix_s)
}

fn label_line(l: &RunLabel) -> String {
    let mut s = format!(
        "{} · {} · {} · {}",
        l.reference,
        l.host,
        l.kernel,
        when(l.started_unix_s)
    );
    if !l.labels.is_empty() {
        s += &format!(" · [{}]", crate::results::labels_text(&l.labels));
    }
    if !l.complete {
        s += " · incomplete";
    }
    s
}

/// A side's line: its one run, or how many runs with the first and the newest.
fn side_line(runs: &[RunLabel], newest: &RunLabel) -> String {
    match runs {
        [] | [_] => label_line(newest),
        [first, ..] => format!(
            "{} runs, {} … {}",
            runs.len(),
            first.reference,
            label_line(newest)
        ),
    }
}

fn ratio_text(r: f64) -> String {
    if r.is_finite() {
        format!("{r:.3}")
    } else {
        "-".into()
    }
}

fn change_text(r: f64) -> String {
    match (r - 1.0) * 100.0 {
        c if !c.is_finite() => "-".into(),
        c if c.abs() >= 1000.0 => format!("{c:+.0}%"),
        c => format!("{c:+.1}%"),
    }
}

/// A ratio in at most five characters, for the terminal's interval column: three
/// significant digits or more below 1000 (`0.956`, `14.82`, `554.3`), whole numbers
/// to 99999, and past that a power of ten (`2e17`: a side that could not measure).
fn short_ratio(r: f64) -> String {
    match r {
        r if !r.is_finite() => "-".into(),
        r if r < 10.0 => format!("{r:.3}"),
        r if r < 100.0 => format!("{r:.2}"),
        r if r < 1000.0 => format!("{r:.1}"),
        r if r < 99_999.5 => format!("{r:.0}"),
        r => format!("{r:.0e}"),
    }
}

/// The smallest slowdown a row's runs would see (`8.1%`; `>100%` past that).
fn sees_text(r: &Row) -> String {
    match r.smallest_visible {
        Some(v) if v <= 1.0 => format!("{:.1}%", v * 100.0),
        Some(_) => ">100%".into(),
        None => "-".into(),
    }
}

/// The runs a side that would see 1.5 × the threshold (`4`; `>30` past the most asked).
fn asked_text(r: &Row) -> String {
    r.runs_asked
        .map_or(format!(">{}", crate::method::MAX_RUNS_ASKED), |k| {
            k.to_string()
        })
}

/// A ratio's interval, `0.956–1.120` (`0.022–5545`, `0.000–2e17` when a side's
/// interval is wide).
fn interval_text(r: &Row) -> String {
    format!("{}–{}", short_ratio(r.ci_low), short_ratio(r.ci_high))
}

/// The lines that say the runs come from different hosts or configurations.
fn differences(c: &Comparison) -> Vec<String> {
    c.host_differences
        .iter()
        .map(|d| format!("{}: {} → {}", d.fact, d.base, d.other))
        .collect()
}

/// The comparison as a terminal table, as wide as standard output's terminal (or
/// `COLUMNS`, or 100).
pub fn text(c: &Comparison) -> String {
    text_at(c, crate::os::term::stdout_width())
}

/// The comparison as a terminal table no wider than `width`, one table: a benchmark
/// whose name and parameters do not fit their column has them on a line of its own
/// above its figures.
pub fn text_at(c: &Comparison, width: usize) -> String {
    let mut s = format!(
        "A  {}\nB  {}\n",
        side_line(&c.base_runs, &c.base),
        side_line(&c.other_runs, &c.other)
    );
    for w in &c.warnings {
        s.push('\n');
        s += &wrap(&format!("warning: {w}"), width, 0, 2);
    }
    let diffs = differences(c);
    if !diffs.is_empty() {
        s += "\nwarning: the runs differ in what decides these costs; a change may be the \
              machine, not the code:\n";
        for d in diffs {
            s += &format!("  {d}\n");
        }
    }
    s.push('\n');
    s += &rows_text(c, width);
    s += &wrap_lines(&footer(c), width);
    for d in &c.explains {
        s += &crate::explain::diff::text(d, 15);
    }
    s
}

/// The fewest characters the benchmark column keeps beside the figures; with less room
/// every benchmark goes on a line of its own.
const MIN_KEY_COLUMN: usize = 16;

/// The table's rows, one table no wider than `width`. The benchmark column takes the
/// room the figures leave: a name with its parameters that fits stays in it; a longer
/// one goes on a line of its own (wrapped at `width`, continued indented) above its
/// figures, so nothing is cut and no column moves to a further block. With less than
/// [`MIN_KEY_COLUMN`] characters of room, every name goes on its own line and the
/// figures beneath it are indented by two. Only a terminal too narrow for the figures
/// alone wraps their columns into blocks.
fn rows_text(c: &Comparison, width: usize) -> String {
    let head = [
        "A",
        "B",
        "change",
        "95% CI B/A",
        "verdict",
        "runs",
        "sees",
        "K",
    ];
    let mut figures: Vec<Vec<String>> =
        vec![head.iter().map(|c| c.to_string()).collect()];
    let mut keys = vec!["benchmark".to_string()];
    for r in &c.rows {
        keys.push(super::key_of(&r.name, &r.params));
        figures.push(vec![
            fmt_ns(r.base_ns),
            fmt_ns(r.other_ns),
            change_text(r.ratio),
            interval_text(r),
            r.verdict.word().to_string(),
            format!("{}+{}", r.runs.0, r.runs.1),
            sees_text(r),
            asked_text(r),
        ]);
    }
    let right = [true, true, true, true, false, true, true, true];
    let alone = grid(&figures, &right, 0, 0, usize::MAX);
    let used = alone.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    if used + 2 > width {
        // Too narrow for the figures: the columns wrap into blocks, each with the names.
        let rows: Vec<Vec<String>> = keys
            .iter()
            .zip(&figures)
            .map(|(k, f)| {
                std::iter::once(k.clone())
                    .chain(f.iter().cloned())
                    .collect()
            })
            .collect();
        let right: Vec<bool> = std::iter::once(false).chain(right).collect();
        return grid(&rows, &right, 1, 0, width);
    }
    let room = width - used - 2;
    let inline = room >= MIN_KEY_COLUMN.max(keys[0].chars().count());
    let fits = |k: &String| inline && k.chars().count() <= room;
    let rows: Vec<Vec<String>> = keys
        .iter()
        .zip(&figures)
        .map(|(k, f)| {
            let key = if fits(k) { k.clone() } else { String::new() };
            std::iter::once(key).chain(f.iter().cloned()).collect()
        })
        .collect();
    let right: Vec<bool> = std::iter::once(false).chain(right).collect();
    // Without the column, the figures sit two in from the names above them.
    let lines: Vec<String> = match inline {
        true => grid(&rows, &right, 1, 0, usize::MAX)
            .lines()
            .map(str::to_string)
            .collect(),
        false => alone.lines().map(|l| format!("  {l}")).collect(),
    };
    let mut out = String::new();
    for (k, line) in keys.iter().zip(&lines) {
        if !fits(k) {
            out += &wrap(k, width, 0, 4);
        }
        out += line.trim_end();
        out.push('\n');
    }
    out
}

/// What the verdicts mean, after the counts.
fn footer(c: &Comparison) -> String {
    let t = c.tally();
    let pct = c.threshold * 100.0;
    let mut s = format!(
        "\n{} compared: {} slower, {} faster, {} no change, {} cannot tell (threshold \
         ±{pct}%)\n",
        c.rows.len(),
        t.slower,
        t.faster,
        t.same,
        t.unsure
    );
    s += &format!(
        "slower/faster: the 95% interval excludes 1 and the change passes ±{pct}%; no \
         change: the whole interval lies within ±{pct}%; cannot tell: it reaches past \
         ±{pct}%. runs: A's+B's. sees: the smallest slowdown these runs call slower 4 \
         times in 5; K: the runs a side that would see {:.1}%\n",
        crate::method::ASK_FOR_CHANGE * pct
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

/// The comparison as GitHub-flavoured Markdown.
pub fn markdown(c: &Comparison) -> String {
    let esc = |s: &str| s.replace('|', "\\|");
    let mut s = format!(
        "**A** {}  \n**B** {}\n\n",
        esc(&side_line(&c.base_runs, &c.base)),
        esc(&side_line(&c.other_runs, &c.other))
    );
    for w in &c.warnings {
        s += &format!("> **Warning:** {}\n\n", esc(w));
    }
    let diffs = differences(c);
    if !diffs.is_empty() {
        s += "> **The runs differ in what decides these costs:** ";
        s += &esc(&diffs.join("; "));
        s += "\n\n";
    }
    s += "| benchmark | A | B | B/A | change | 95% CI of B/A | verdict | runs | sees | K |\n";
    s += "|---|--:|--:|--:|--:|--:|:-:|--:|--:|--:|\n";
    for r in &c.rows {
        let verdict = match r.verdict {
            Verdict::Slower => "**slower**",
            Verdict::Faster => "**faster**",
            Verdict::NoChange => "no change",
            Verdict::CannotTell => "*cannot tell*",
        };
        s += &format!(
            "| {} | {} | {} | {} | {} | {} – {} | {verdict} | {}+{} | {} | {} |\n",
            esc(&super::key_of(&r.name, &r.params)),
            fmt_ns(r.base_ns),
            fmt_ns(r.other_ns),
            ratio_text(r.ratio),
            change_text(r.ratio),
            ratio_text(r.ci_low),
            ratio_text(r.ci_high),
            r.runs.0,
            r.runs.1,
            sees_text(r),
            asked_text(r)
        );
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

/// The cross-run table's cells: the header, then one row per benchmark (its medians,
/// then each run's ratio to the first).
fn table_rows(t: &Table) -> Vec<Vec<String>> {
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
    rows
}

/// The cross-run table for the terminal: one column per run, no line wider than
/// standard output's terminal (columns that do not fit go into a further block).
pub fn table_text(t: &Table) -> String {
    let mut s = String::new();
    for (i, l) in t.runs.iter().enumerate() {
        s += &format!("{}  {}\n", column_name(i), label_line(l));
    }
    let rows = table_rows(t);
    let right: Vec<bool> = (0..rows[0].len()).map(|i| i > 0).collect();
    s.push('\n');
    s += &grid(&rows, &right, 1, 0, crate::os::term::stdout_width());
    s += &format!("\n{GEOMEAN}:\n");
    for (i, g) in t.geomean_ratio.iter().enumerate() {
        s += &format!(
            "  {}  {} over {}\n",
            column_name(i),
            g.map(|x| format!("{x:.3}")).unwrap_or_else(|| "-".into()),
            count(t.geomean_count[i], "benchmark", "benchmarks")
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
    let rows = table_rows(t);
    s += &format!("\n| {} |\n|---|", rows[0].join(" | "));
    s += &"--:|".repeat(t.runs.len() * 2 - 1);
    s += "\n";
    for mut r in rows.into_iter().skip(1) {
        r[0] = esc(&r[0]);
        s += &format!("| {} |\n", r.join(" | "));
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
