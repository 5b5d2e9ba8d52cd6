//! The explanation as text for a terminal: what was sampled and how well it covers the
//! operation, the groups, the top functions with self and inclusive ns per operation,
//! the bias, and what is missing.

use super::{Explanation, Share};
use crate::draw::text::{clip, grid, wrap_lines};
use std::fmt::Write;

/// How many functions the table shows.
pub const TOP: usize = 25;

fn interval(s: &Share) -> String {
    format!("{:.1}–{:.1}", s.self_low_ns, s.self_high_ns)
}

/// The text block for the explanation of `label` (a benchmark and its parameters)
/// whose operation is `op`, no line wider than `width`: sentences wrap, and the
/// tables' columns that do not fit go into a further block.
pub fn text(label: &str, op: &str, e: &Explanation, width: usize) -> String {
    let lines = lines(label, op, e, width);
    let mut out = String::new();
    for block in lines {
        match block {
            Block::Prose(p) => {
                // A line that fits keeps its alignment; a longer one wraps.
                for line in p.split_inclusive('\n') {
                    let bare = line.trim_end_matches('\n');
                    if bare.chars().count() <= width {
                        out += line;
                    } else {
                        out += &wrap_lines(bare, width);
                    }
                }
            }
            Block::Grid(rows, right) => out += &grid(&rows, &right, 1, 2, width),
        }
    }
    out
}

/// Sentences, or a table of cells (the first row its header) with each column's
/// alignment (right or not).
enum Block {
    Prose(String),
    Grid(Vec<Vec<String>>, Vec<bool>),
}

/// The group table's name for the user side when the operation enters the kernel: the
/// samples due while the entry and exit ran with interrupts off are taken on the user
/// instruction after `syscall` and count here, so the row says it holds them.
const USER_WITH_SKID: &str = "user side + skid after syscall";

/// Whether the samples saw the operation enter the kernel (so the user side holds the
/// skid of its entry and exit).
fn enters_kernel(e: &Explanation) -> bool {
    e.groups
        .iter()
        .any(|g| g.group == Some(super::Group::Entry) && g.self_samples > 0)
}

/// The narrowest the function column is cut to so the table fits in one block.
const NAME_MIN: usize = 24;
/// The widest a function's name is shown.
const NAME_MAX: usize = 48;

/// The function table's rows, its names cut so that the whole table fits `width` in
/// one block where it can (a second block would print every name again for one column).
fn function_rows(e: &Explanation, width: usize) -> Vec<Vec<String>> {
    let head = [
        format!("top {TOP} functions"),
        "self ns".into(),
        "95% interval".into(),
        "incl ns".into(),
        "group".into(),
    ];
    let mut rows: Vec<Vec<String>> = vec![head.to_vec()];
    let mut names = vec![head[0].clone()];
    for f in e.functions.iter().take(TOP) {
        names.push(if f.kernel {
            format!("{} [k]", f.name)
        } else {
            f.name.clone()
        });
        rows.push(vec![
            String::new(),
            format!("{:.2}", f.self_ns),
            interval(f),
            format!("{:.2}", f.total_ns),
            f.group.map_or("", |g| g.label()).to_string(),
        ]);
    }
    // Two columns of indent, two spaces between columns (see `draw::text::grid`).
    let others: usize = (1..5)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0) + 2)
        .sum();
    let room = width.saturating_sub(2 + others).clamp(NAME_MIN, NAME_MAX);
    for (r, name) in rows.iter_mut().zip(names) {
        r[0] = clip(&name, room);
    }
    rows
}

/// The explanation as blocks of sentences and tables.
fn lines(label: &str, op: &str, e: &Explanation, width: usize) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut o = String::new();
    let frames = if e.kernel { "kernel and user" } else { "user" };
    let period = if e.period_ns > 0 {
        format!(" (one per {} ns)", e.period_ns)
    } else {
        String::new()
    };
    let _ = writeln!(
        o,
        "\nexplain {label}: {:.1} ns per {op} (median); {} at {} Hz{period}, {frames} frames",
        e.median_ns, e.event, e.hz
    );
    let _ = writeln!(
        o,
        "  samples: {} in the timed batches ({} in tasks it started), {} outside them \
         left out, {} lost; {:.1}% with a named function",
        e.samples,
        e.samples_other_tasks,
        e.samples_outside,
        e.lost,
        e.named * 100.0
    );
    if let Some(s) = e.sampled_ns_per_op {
        let _ = writeln!(
            o,
            "  sampled running time {s:.1} ns per {op}: {:.1}% of the median; the batches' \
             wall time {:.1} ns per {op}",
            100.0 * s / e.median_ns,
            e.wall_ns_per_op
        );
        if s > e.median_ns && e.samples > 0 {
            let per_sample = (s - e.median_ns) * e.operations as f64 / e.samples as f64;
            let _ = writeln!(
                o,
                "  (the running time counts the samples' own interrupts and the slower \
                 batches the median leaves out: {:.1} µs per sample)",
                per_sample / 1000.0
            );
        }
    }
    if let Some(u) = e.unsampled_median_ns {
        let _ = writeln!(
            o,
            "  sampling's own cost: the sampled rounds' median {:.1} ns, the others' {u:.1} ns \
             ({:+.1}%); shares are of the sampled rounds",
            e.median_ns,
            100.0 * (e.median_ns / u - 1.0)
        );
    }
    let _ = writeln!(
        o,
        "  every share within ±{:.2} ns per {op} (95%, binomial over {} samples)",
        e.bound_ns, e.samples
    );
    let _ = writeln!(o, "  covers: {}", e.covers);
    o.push('\n');
    blocks.push(Block::Prose(std::mem::take(&mut o)));
    let cells = |v: &[&str]| v.iter().map(|c| c.to_string()).collect::<Vec<String>>();
    let mut groups = vec![cells(&["group", "ns/op", "95% interval", "share"])];
    let skid = enters_kernel(e);
    for g in &e.groups {
        let name = match g.group {
            Some(super::Group::User) if skid => USER_WITH_SKID.to_string(),
            _ => g.name.to_string(),
        };
        groups.push(vec![
            name,
            format!("{:.2}", g.self_ns),
            interval(g),
            format!("{:.1}%", g.self_share * 100.0),
        ]);
    }
    blocks.push(Block::Grid(groups, vec![false, true, true, true]));
    if skid {
        blocks.push(Block::Prose(format!(
            "  {USER_WITH_SKID}: the loop's own time, and the samples due while the \
             system call's entry and exit ran with interrupts off, which the timer takes on \
             the user instruction after `syscall` (see bias below; `syscost explain --skid` \
             measures how much)\n"
        )));
    }
    blocks.push(Block::Prose("\n".into()));
    let functions = function_rows(e, width);
    blocks.push(Block::Grid(functions, vec![false, true, true, true, false]));
    if e.groups
        .iter()
        .any(|g| g.group == Some(super::Group::Scheduler) && g.self_samples > 0)
    {
        let _ = writeln!(o, "\n  the switch path (inclusive ns per {op}):");
        o += &landmarks(e);
    }
    let _ = writeln!(o, "\n  bias: {}", e.bias);
    for n in &e.notes {
        let _ = writeln!(o, "  note: {n}");
    }
    blocks.push(Block::Prose(o));
    blocks
}

/// The functions of a context switch and a wake-up a kernel developer looks for: the
/// starts of their names (current and older kernels'), what they do, and whether they
/// run with interrupts off (so a cpu-clock sample cannot land in them).
pub const LANDMARKS: &[(&[&str], &str, bool)] = &[
    (&["__schedule"], "the scheduler's core", false),
    (
        &["switch_mm_irqs_off", "switch_mm"],
        "switching the address space",
        true,
    ),
    (&["__switch_to_asm"], "switching stacks", true),
    (&["__switch_to"], "switching the task's registers", true),
    (
        &["finish_task_switch"],
        "after the switch, interrupts back on",
        false,
    ),
    (&["try_to_wake_up"], "waking the other task", true),
    (&["__wake_up"], "the wait queue's wake-up", false),
    (&["anon_pipe_read", "pipe_read"], "the pipe's read", false),
    (
        &["anon_pipe_write", "pipe_write"],
        "the pipe's write",
        false,
    ),
];

/// One line per landmark: its inclusive ns per operation with the interval, or why it
/// has no sample.
fn landmarks(e: &Explanation) -> String {
    let mut o = String::new();
    let mut seen: Vec<&str> = Vec::new();
    for (prefixes, what, irqs_off) in LANDMARKS {
        let found: Vec<&Share> = e
            .functions
            .iter()
            .filter(|f| {
                f.kernel
                    && prefixes.iter().any(|p| f.name.starts_with(p))
                    && !seen.contains(&f.name.as_str())
            })
            .collect();
        if found.is_empty() {
            let why = if *irqs_off {
                ": it runs with interrupts off, so its time is counted where they come \
                 back on (finish_task_switch, _raw_spin_unlock_irqrestore)"
            } else {
                ""
            };
            let _ = writeln!(o, "    {:<32} no sample ({what}){why}", prefixes[0]);
            continue;
        }
        for f in found {
            seen.push(&f.name);
            let _ = writeln!(
                o,
                "    {:<32} {:>9.1} ns ({:.1}–{:.1}) {what}",
                f.name, f.total_ns, f.total_low_ns, f.total_high_ns
            );
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_names_groups_functions_bias_and_notes() {
        let e = crate::explain::tests::example();
        let t = text("syscall.getpid", "call", &e, 100);
        for width in [100, 80, 60] {
            let narrow = text("syscall.getpid", "call", &e, width);
            for line in narrow.lines() {
                assert!(line.chars().count() <= width, "{line}\n{narrow}");
            }
            assert!(narrow.contains("its_return_thunk [k]"), "{narrow}");
        }
        for want in [
            "explain syscall.getpid",
            "mitigations",
            "its_return_thunk [k]",
            "do_syscall_64 [k]",
            "bias:",
            "note: kernel",
            "of the median",
        ] {
            assert!(t.contains(want), "{want} missing from\n{t}");
        }
        assert_eq!(clip("abcdef", 4), "abc…");
        // getpid's user side holds the skid of its entry and exit, and says so.
        assert!(t.contains("user side + skid after syscall"), "{t}");
        let bare_row = |l: &str| {
            l.trim_start()
                .strip_prefix("user side")
                .is_some_and(|r| r.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        };
        assert!(!t.lines().any(bare_row), "{t}");
    }

    #[test]
    fn the_function_table_fits_a_pipes_80_columns_in_one_block() {
        let mut e = crate::explain::tests::example();
        // A long kernel name, as real profiles have.
        e.functions[0].name = "entry_SYSCALL_64_after_hwframe_and_some_more_words".into();
        let t = text("syscall.getpid", "call", &e, 80);
        let headers = t.lines().filter(|l| l.contains("top 25 functions")).count();
        assert_eq!(headers, 1, "the function table printed in two blocks:\n{t}");
        for line in t.lines() {
            assert!(line.chars().count() <= 80, "{line}\n{t}");
        }
    }
}
