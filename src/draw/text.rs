//! Plain text laid out for a terminal: cutting, wrapping within a width (a number kept
//! with its unit), and tables that wrap their columns into blocks. Every text renderer
//! uses these; they know nothing of results.

/// `n` and the noun for it: `one` for 1, else `many` ("1 result", "2 results").
pub fn count<N>(n: N, one: &str, many: &str) -> String
where
    N: std::fmt::Display + PartialEq + From<u8>,
{
    format!("{n} {}", if n == N::from(1) { one } else { many })
}

/// A time in seconds as a person reads it: `20 s`, `1.5 s`, `2 min`, `1 min 50 s`.
pub fn secs(s: f64) -> String {
    if s < 10.0 && (s * 10.0).round() % 10.0 != 0.0 {
        return format!("{s:.1} s");
    }
    let whole = s.round() as u64;
    match (whole / 60, whole % 60) {
        (0, s) => format!("{s} s"),
        (m, 0) if whole >= 120 => format!("{m} min"),
        (m, s) if whole >= 120 => format!("{m} min {s} s"),
        _ => format!("{whole} s"),
    }
}

/// `s` cut to `w` characters, its last one `…` when cut.
pub fn clip(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        return s.to_string();
    }
    let mut out: String = s.chars().take(w.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// The words of `text`, a number kept with the unit after it (`10.8 µs` is one word).
fn words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in text.split(' ').filter(|w| !w.is_empty()) {
        let unit = ["ns", "µs", "ms", "s", "s,", "s)", "%"]
            .iter()
            .any(|u| w.starts_with(u) && w.len() <= u.len() + 2);
        match out.last_mut() {
            Some(prev) if unit && prev.ends_with(|c: char| c.is_ascii_digit()) => {
                prev.push(' ');
                prev.push_str(w);
            }
            _ => out.push(w.to_string()),
        }
    }
    out
}

/// `text` wrapped at spaces to lines of at most `width` characters: the first line
/// indented by `first`, the rest by `rest` spaces. A number stays with its unit; a
/// word longer than a line is cut.
pub fn wrap(text: &str, width: usize, first: usize, rest: usize) -> String {
    let mut out = String::new();
    let mut line = " ".repeat(first);
    let mut len = first;
    let mut empty = true;
    for word in words(text) {
        let n = word.chars().count();
        if !empty && len + 1 + n > width {
            out += &line;
            out.push('\n');
            line = " ".repeat(rest);
            len = rest;
            empty = true;
        }
        let room = width.saturating_sub(len + usize::from(!empty)).max(1);
        let word = clip(&word, room);
        if !empty {
            line.push(' ');
            len += 1;
        }
        len += word.chars().count();
        line += &word;
        empty = false;
    }
    out += &line;
    out.push('\n');
    out
}

/// `prefix` (written as it is, spaces kept) followed by `text` wrapped at `width`,
/// continuation lines indented by `rest` spaces.
pub fn wrap_after(prefix: &str, text: &str, width: usize, rest: usize) -> String {
    let n = prefix.chars().count();
    // The first line's indentation is the prefix's room.
    let body: String = wrap(text, width, n, rest).chars().skip(n).collect();
    let mut out = String::new();
    for line in format!("{prefix}{body}").lines() {
        out += line.trim_end();
        out.push('\n');
    }
    out
}

/// Every line of `text` wrapped by [`wrap`] (continuations indented by two more spaces
/// than the line's own indentation); empty lines kept.
pub fn wrap_lines(text: &str, width: usize) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            out.push('\n');
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        out += &wrap(line.trim_start(), width, indent, indent + 2);
    }
    out
}

/// A table of `rows` (the first is the header), each column as wide as its widest cell
/// and right-aligned where `right` says so, two spaces apart, every line indented by
/// `indent`. When it is wider than `width`, it wraps: the columns after the first
/// `keep` that do not fit go into a further block beneath, which repeats the first
/// `keep` columns, so no line is wider than `width` (a cell too wide even alone is
/// cut with `…`).
pub fn grid(
    rows: &[Vec<String>],
    right: &[bool],
    keep: usize,
    indent: usize,
    width: usize,
) -> String {
    let ncols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let cell =
        |r: &Vec<String>, i: usize| r.get(i).map_or("", String::as_str).to_string();
    let w: Vec<usize> = (0..ncols)
        .map(|i| {
            rows.iter()
                .map(|r| cell(r, i).chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let keep = keep.min(ncols);
    let span = |cols: &[usize]| -> usize {
        indent
            + cols.iter().map(|&i| w[i]).sum::<usize>()
            + 2 * cols.len().saturating_sub(1)
    };
    let mut blocks: Vec<Vec<usize>> = Vec::new();
    let mut block: Vec<usize> = (0..keep).collect();
    for i in keep..ncols {
        block.push(i);
        if span(&block) > width && block.len() > keep + 1 {
            block.pop();
            blocks.push(std::mem::replace(&mut block, (0..keep).collect()));
            block.push(i);
        }
    }
    if block.len() > keep || blocks.is_empty() {
        blocks.push(block);
    }
    let mut out = String::new();
    for cols in &blocks {
        for r in rows {
            let mut line = " ".repeat(indent);
            for (n, &i) in cols.iter().enumerate() {
                if n > 0 {
                    line += "  ";
                }
                let c = cell(r, i);
                let pad = w[i].saturating_sub(c.chars().count());
                if right.get(i).copied().unwrap_or(false) {
                    line += &" ".repeat(pad);
                    line += &c;
                } else {
                    line += &c;
                    line += &" ".repeat(pad);
                }
            }
            out += &clip(line.trim_end(), width);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_read_as_a_person_says_them() {
        assert_eq!(secs(20.0), "20 s");
        assert_eq!(secs(1.5), "1.5 s");
        assert_eq!(secs(10.0), "10 s");
        assert_eq!(secs(110.0), "110 s");
        assert_eq!(secs(120.0), "2 min");
        assert_eq!(secs(900.0), "15 min");
        assert_eq!(secs(150.0), "2 min 30 s");
    }

    #[test]
    fn a_count_of_one_is_singular() {
        assert_eq!(count(1usize, "result", "results"), "1 result");
        assert_eq!(count(0u64, "result", "results"), "0 results");
        assert_eq!(count(2i64, "run", "runs"), "2 runs");
    }

    #[test]
    fn a_grid_wider_than_the_terminal_wraps_its_columns_into_blocks() {
        let rows: Vec<Vec<String>> = [
            ["n", "alpha", "beta", "gamma"],
            ["2", "1.0", "22.0", "333.0"],
            ["64", "10.0", "2.0", "3.0"],
        ]
        .iter()
        .map(|r| r.iter().map(|c| c.to_string()).collect())
        .collect();
        let right = [true; 4];
        let wide = grid(&rows, &right, 1, 2, 80);
        assert_eq!(wide.lines().count(), 3, "{wide}");
        assert_eq!(wide.lines().next().unwrap(), "   n  alpha  beta  gamma");
        assert_eq!(wide.lines().nth(2).unwrap(), "  64   10.0   2.0    3.0");
        let narrow = grid(&rows, &right, 1, 2, 18);
        assert_eq!(narrow.lines().count(), 6, "{narrow}");
        for line in narrow.lines() {
            assert!(line.chars().count() <= 18, "{narrow}");
            assert!(line.trim_start().starts_with(['n', '2', '6']), "{narrow}");
        }
        assert!(narrow.contains("gamma"), "{narrow}");
    }

    #[test]
    fn wrapping_keeps_every_line_within_the_width() {
        let text = "not converged: CI ±1.23% after 8 rounds (target ±1.00%); the rounds \
                    disagree (85.1 ns 60%, 93.0 ns 40%) and a_very_long_word_that_cannot_fit_anywhere_at_all_in_forty";
        let out = wrap(text, 40, 4, 6);
        for line in out.lines() {
            assert!(line.chars().count() <= 40, "{out}");
        }
        assert!(out.starts_with("    not converged"), "{out}");
        assert!(out.lines().nth(1).unwrap().starts_with("      "), "{out}");
        assert_eq!(wrap_lines("a\n\n  b c", 10), "a\n\n  b c\n");
        assert_eq!(wrap_after("x    skipped: ", "", 20, 4), "x    skipped:\n");
        assert_eq!(
            wrap_after("x    skipped: ", "no such file here", 20, 4),
            "x    skipped: no\n    such file here\n"
        );
        // A number and its unit stay on one line.
        assert_eq!(
            wrap("states (8.41 µs 75%, 10.8 µs 25%)", 22, 0, 2),
            "states (8.41 µs 75%,\n  10.8 µs 25%)\n"
        );
    }
}
