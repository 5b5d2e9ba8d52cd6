//! The fleet view as text, Markdown and an HTML page with one strip plot per benchmark
//! (its JSON is the serde form of [`super::Fleet`]). Pure: a fleet in, a string out.

use super::{Cell, Fleet};
use crate::draw::svg::{escape, Axis, Mark, Plot, Scale, Style, Units};
use crate::results::fmt_ns;
use std::fmt::Write;

/// Dots of hosts that stand out.
const ODD: &str = "#d55e00";
/// Dots of the others.
const HOST: &str = "#0072b2";

fn cell_text(c: &Cell) -> String {
    // One host has a figure and no spread: "±0" would claim one.
    let mut s = match c.hosts.len() {
        1 => format!("{} (1)", fmt_ns(c.spread.median_ns)),
        n => format!(
            "{} ±{} ({n})",
            fmt_ns(c.spread.median_ns),
            fmt_ns(c.spread.spread_ns)
        ),
    };
    for h in c.hosts.iter().filter(|h| h.odd) {
        let _ = write!(s, " odd: {} {:+.0}%", h.host, (h.ratio - 1.0) * 100.0);
    }
    s
}

/// The groups, one line each.
fn groups_text(f: &Fleet, bullet: &str) -> String {
    let mut s = String::new();
    for g in &f.groups {
        let _ = writeln!(
            s,
            "{bullet}{}: {} host(s): {}",
            g.id,
            g.hosts.len(),
            g.summary()
        );
    }
    s
}

fn rows(f: &Fleet) -> Vec<Vec<String>> {
    f.rows
        .iter()
        .map(|r| {
            let mut v = vec![r.key.clone()];
            for g in &f.groups {
                v.push(
                    r.cells
                        .iter()
                        .find(|c| c.group == g.id)
                        .map_or("-".into(), cell_text),
                );
            }
            v
        })
        .collect()
}

fn legend(f: &Fleet) -> String {
    format!(
        "each cell: the group's median ±spread (MAD × 1.4826) (hosts); a host is odd when \
         its whole 95% interval lies beyond max(3.5 spreads, {:.0}%) of the median\n",
        f.threshold * 100.0
    )
}

/// The fleet as aligned text, as wide as standard output's terminal (or `COLUMNS`,
/// or 100).
pub fn text(f: &Fleet) -> String {
    text_at(f, crate::os::term::stdout_width())
}

/// [`text`] no wider than `width`: the group columns that do not fit go into a further
/// block, which repeats the benchmark.
pub fn text_at(f: &Fleet, width: usize) -> String {
    let mut head = vec!["benchmark".to_string()];
    head.extend(f.groups.iter().map(|g| g.id.clone()));
    let mut table = vec![head];
    table.extend(rows(f));
    let mut s = groups_text(f, "");
    s.push('\n');
    let left = vec![false; table[0].len()];
    s += &crate::draw::text::grid(&table, &left, 1, 0, width);
    s.push('\n');
    s += &crate::draw::text::wrap_lines(&(legend(f) + &odd_text(f)), width);
    s
}

fn odd_text(f: &Fleet) -> String {
    let odd = f.odd_hosts();
    if odd.is_empty() {
        return "no host stands out\n".into();
    }
    let mut s = format!("{} odd host figure(s):\n", odd.len());
    for (k, g, h) in odd {
        let _ = writeln!(
            s,
            "  {} in {g}: {k} {} [{}, {}], {:+.1}% from the group's median (run {})",
            h.host,
            fmt_ns(h.median_ns),
            fmt_ns(h.ci_low_ns),
            fmt_ns(h.ci_high_ns),
            (h.ratio - 1.0) * 100.0,
            h.run_id
        );
    }
    s
}

/// The fleet as GitHub-flavoured Markdown.
pub fn markdown(f: &Fleet) -> String {
    let mut s = groups_text(f, "- ");
    s.push('\n');
    let _ = writeln!(
        s,
        "| benchmark | {} |",
        f.groups
            .iter()
            .map(|g| g.id.as_str())
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let _ = writeln!(s, "|---|{}", "---|".repeat(f.groups.len()));
    for r in rows(f) {
        let cells: Vec<String> = r.iter().map(|c| c.replace('|', "\\|")).collect();
        let _ = writeln!(s, "| {} |", cells.join(" | "));
    }
    s.push('\n');
    s += &legend(f);
    s.push('\n');
    s += &odd_text(f);
    s
}

/// The fleet as one self-contained HTML page: the table, then one strip plot per
/// benchmark (one dot per host with its interval, a row per group, odd hosts marked).
pub fn html(f: &Fleet) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>syscost fleet</title><style>body{font-family:sans-serif;margin:20px}\
         table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;\
         font-size:13px}svg{max-width:100%;height:auto;display:block}</style></head><body>\n\
         <h1>syscost fleet</h1>\n<h2>Groups</h2><ul>",
    );
    for g in &f.groups {
        let _ = write!(
            out,
            "<li><b>{}</b>: {} host(s): {}</li>",
            g.id,
            g.hosts.len(),
            escape(&g.summary())
        );
    }
    out += "</ul>\n<h2>Benchmarks</h2><table><tr><th>benchmark</th>";
    for g in &f.groups {
        let _ = write!(out, "<th>{}</th>", g.id);
    }
    out += "</tr>\n";
    for r in rows(f) {
        out += "<tr>";
        for c in r {
            let _ = write!(out, "<td>{}</td>", escape(&c));
        }
        out += "</tr>\n";
    }
    let _ = write!(
        out,
        "</table>\n<p>{}</p><pre>{}</pre>\n<h2>Strip plots</h2>\n",
        escape(&legend(f)),
        escape(&odd_text(f))
    );
    for r in &f.rows {
        out += "<figure>";
        out += &strip(f, r).inline();
        out += "</figure>\n";
    }
    out += "</body></html>\n";
    out
}

/// One benchmark's strip plot: a row per group, a dot per host.
fn strip(f: &Fleet, r: &super::Row) -> crate::draw::svg::Svg {
    let labels: Vec<String> = r.cells.iter().map(|c| c.group.clone()).collect();
    let xs = r
        .cells
        .iter()
        .flat_map(|c| c.hosts.iter().flat_map(|h| [h.ci_low_ns, h.ci_high_ns]));
    let x = Axis::padded("time per operation", Scale::Linear, Units::Ns, xs, 0.05);
    let y = Axis::categories("", &labels);
    let mut p =
        Plot::new(&r.key, x, y).size(900.0, (40.0 * labels.len() as f64).max(60.0));
    let n_odd: usize = r
        .cells
        .iter()
        .map(|c| c.hosts.iter().filter(|h| h.odd).count())
        .sum();
    p.note(&format!(
        "one dot per host with its 95% interval; {n_odd} odd (threshold {:.0}%)",
        f.threshold * 100.0
    ));
    for (i, c) in r.cells.iter().enumerate() {
        let y = i as f64;
        for (odd, col, mark) in [(false, HOST, Mark::Circle), (true, ODD, Mark::Square)] {
            let hosts: Vec<_> = c.hosts.iter().filter(|h| h.odd == odd).collect();
            // Spread the dots a little up and down so equal figures stay apart.
            let jitter = |j: usize| y + ((j % 7) as f64 - 3.0) * 0.04;
            let bars: Vec<(f64, f64, f64)> = hosts
                .iter()
                .enumerate()
                .map(|(j, h)| (jitter(j), h.ci_low_ns, h.ci_high_ns))
                .collect();
            let pts: Vec<(f64, f64)> = hosts
                .iter()
                .enumerate()
                .map(|(j, h)| (h.median_ns, jitter(j)))
                .collect();
            p.error_bars_x(&bars, Style::solid(col).width(1.0).opacity(0.6));
            p.marks(&pts, Style::solid(col), mark, 6.0);
            for (h, (px, py)) in hosts.iter().zip(&pts).filter(|_| odd) {
                p.text(*px, *py - 0.25, &h.host, "middle", ODD);
            }
        }
        p.marks(
            &[(c.spread.median_ns, y)],
            Style::solid("#000000"),
            Mark::Diamond,
            9.0,
        );
    }
    p.legend_mark(Style::solid(HOST), Mark::Circle, "host");
    p.legend_mark(Style::solid(ODD), Mark::Square, "odd host");
    p.legend_mark(Style::solid("#000000"), Mark::Diamond, "group median");
    p.render()
}
