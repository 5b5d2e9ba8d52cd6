//! Every number that changes a row's figure, its interval or its verdict is a named
//! constant in `src/method.rs` (or a field of a profile in `src/harness/profile.rs`),
//! and docs/method.md §8 lists every one of them with its value.
//!
//! The first test reads the source of `harness`, `session`, `stats` and `store` (their
//! test modules left out) and fails on a number literal that is neither one of the
//! few that are never tunables (0, 1, 2, a half, unit conversions, hexadecimal bit
//! patterns, indices, shifts, the rank of a percentile) nor on a line of [`ALLOWED`],
//! each with its reason. The second checks §8's table against `src/method.rs`.

use std::path::{Path, PathBuf};

/// Lines whose numbers are not tunables: (file under src/, a piece of the line that
/// finds it, how many lines after it the entry also covers, why).
#[rustfmt::skip]
const ALLOWED: &[(&str, &str, usize, &str)] = &[
    ("harness/profile.rs", "", 0, "the profiles: per-profile tunables"),
    ("harness/packed.rs", "", 0, "a sample's byte layout"),
    ("harness/mod.rs", "resolution_ns.max(0.01)", 0, "a guard against a zero step"),
    ("harness/paired.rs", "const SIDE_EXIT", 0, "how long a side may take to exit"),
    ("harness/probe.rs", "6_364_136_223_846_793_005", 0, "Knuth's LCG multiplier"),
    ("harness/verdict.rs", "Why::FewRounds { .. } => 3", 5, "the order reasons print in"),
    ("session/canary.rs", "readings.len() < 5 ||", 0, "a warning's readings, no verdict"),
    ("session/worker/wire.rs", "pub const PROTOCOL", 0, "the worker protocol's version"),
    ("session/worker/wire.rs", "head_len + 16", 0, "the hand-over file's layout"),
    ("session/copies/mod.rs", "const READY_WITHIN", 0, "how long copies may set up"),
    ("session/copies/mod.rs", "const DEADLINE", 0, "a slot of the copies' barrier"),
    ("session/copies/mod.rs", "SharedMem::new(64)", 0, "the barrier's bytes"),
    ("session/copies/mod.rs", "Err(_) => 3,", 0, "a copy's exit status"),
    ("session/copies/mod.rs", "from_micros(200)", 0, "how often the parent polls"),
    ("session/copies/mod.rs", "tv_nsec: 50_000_000", 0, "how often a copy polls"),
    ("stats/mod.rs", "let (q1, q3) = (n / 4", 0, "the quartiles"),
    ("stats/mod.rs", "if x > 8.0 {", 0, "erf's tail is 1 to double precision"),
    ("stats/mod.rs", "(-12.0f64, 12.0f64)", 0, "a bisection's bracket"),
    ("stats/modes.rs", "const GRID_MIN", 0, "the density's numerical resolution"),
    ("stats/modes.rs", "const GRID_MAX", 0, "the density's numerical resolution"),
    ("stats/modes.rs", "const KERNEL_REACH", 0, "the Gaussian is cut where negligible"),
    ("stats/modes.rs", "iqr / 1.34", 0, "Silverman's rule of thumb"),
    ("stats/modes.rs", "0.9 * spread", 0, "Silverman's rule of thumb"),
    ("stats/modes.rs", "ys[0] - 3.0 * h", 3, "the density's grid: padding, step"),
    ("stats/outliers.rs", "MODIFIED_Z_SCALE", 0, "Iglewicz & Hoaglin's constant"),
    ("stats/rounds.rs", "const T: [f64; 30]", 8, "Student's t table, Cornish-Fisher"),
    ("stats/rounds.rs", "1.959_964", 3, "the normal 97.5% quantile, Cornish-Fisher"),
    ("stats/rounds.rs", "const Q: [f64; 19]", 7, "the exact q(K) table for K = 3..21"),
    ("stats/rounds.rs", "pub const Z975", 0, "the normal 97.5% quantile"),
    ("stats/usl.rs", "if ns.len() < 3", 0, "a fit of three parameters"),
    ("stats/usl.rs", "pts.len() as f64 - 3.0", 0, "a fit of three parameters"),
    ("store/between.rs", "const SHIFT_MIN_ROWS", 7, "a warning, never a verdict"),
    ("store/mod.rs", "pub const DB_SCHEMA", 0, "the database's version"),
    ("store/postgres.rs", "connect_timeout", 0, "a timeout"),
    ("store/refs.rs", "const SHOWN", 0, "what an error message lists"),
    ("store/sqlite.rs", "busy_timeout", 0, "a timeout"),
    ("store/sqlite.rs", "Duration::from_secs(10);", 0, "a timeout"),
    ("store/sqlite.rs", "from_millis(20)", 0, "a poll"),
];

/// The directories whose numbers are checked.
const CHECKED: [&str; 4] = ["harness", "session", "stats", "store"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// `src` with comments, strings and character literals blanked (newlines kept).
fn code_only(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |out: &mut String, s: &[char]| {
        out.extend(s.iter().map(|&ch| if ch == '\n' { '\n' } else { ' ' }));
    };
    let mut i = 0;
    while i < c.len() {
        let rest = &c[i..];
        let prev_ident = i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
        let end = if rest.starts_with(&['/', '/']) {
            rest.iter().position(|&ch| ch == '\n').unwrap_or(rest.len())
        } else if rest.starts_with(&['/', '*']) {
            let (mut depth, mut j) = (0, 0);
            loop {
                if rest[j..].starts_with(&['/', '*']) {
                    (depth, j) = (depth + 1, j + 2);
                } else if rest[j..].starts_with(&['*', '/']) {
                    (depth, j) = (depth - 1, j + 2);
                    if depth == 0 {
                        break j;
                    }
                } else {
                    j += 1;
                }
            }
        } else if let Some(n) = raw_string(rest).filter(|_| !prev_ident) {
            n
        } else if rest[0] == '"' {
            let mut j = 1;
            while rest[j] != '"' {
                j += if rest[j] == '\\' { 2 } else { 1 };
            }
            j + 1
        } else if rest[0] == '\'' && rest.get(1) == Some(&'\\') {
            2 + rest[2..].iter().position(|&ch| ch == '\'').unwrap_or(0) + 1
        } else if rest[0] == '\'' && rest.get(2) == Some(&'\'') {
            3
        } else {
            out.push(rest[0]);
            i += 1;
            continue;
        };
        blank(&mut out, &rest[..end]);
        i += end;
    }
    out
}

/// The length of a raw string (`r"…"`, `r#"…"#`, `br"…"`) at the start of `s`.
fn raw_string(s: &[char]) -> Option<usize> {
    let start = if s.first() == Some(&'b') || s.first() == Some(&'c') {
        1
    } else {
        0
    };
    if s.get(start) != Some(&'r') {
        return None;
    }
    let hashes = s[start + 1..].iter().take_while(|&&ch| ch == '#').count();
    let open = start + 1 + hashes;
    if s.get(open) != Some(&'"') {
        return None;
    }
    let close: Vec<char> = std::iter::once('"')
        .chain(std::iter::repeat_n('#', hashes))
        .collect();
    (open + 1..s.len())
        .find(|&j| s[j..].starts_with(&close))
        .map(|j| j + close.len())
}

/// `code` without its `#[cfg(test)] mod … { … }` blocks.
fn without_tests(code: &str) -> String {
    let mut out = code.to_string();
    while let Some(at) = out.find("#[cfg(test)]") {
        let rest = &out[at..];
        let Some(open) = rest.find(['{', ';']) else {
            break;
        };
        let end = if rest.as_bytes()[open] == b';' {
            at + open + 1
        } else {
            let mut depth = 0;
            let close = rest[open..]
                .char_indices()
                .find(|&(_, ch)| {
                    depth += match ch {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(rest.len(), |(j, _)| open + j + 1);
            at + close
        };
        let blanked: String = out[at..end]
            .chars()
            .map(|ch| if ch == '\n' { '\n' } else { ' ' })
            .collect();
        out.replace_range(at..end, &blanked);
    }
    out
}

/// One number literal: its line, its text, and the line's code.
struct Literal {
    line: usize,
    text: String,
    before: String,
    after: String,
}

/// The number literals of `code`, one line at a time (a tuple field, `x.0`, is none).
fn literals(code: &str) -> Vec<Literal> {
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let c: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < c.len() {
            let prev = if i > 0 { c[i - 1] } else { ' ' };
            if !c[i].is_ascii_digit()
                || prev.is_alphanumeric()
                || prev == '_'
                || prev == '.'
            {
                i += 1;
                continue;
            }
            let start = i;
            let hex = c[i] == '0' && matches!(c.get(i + 1), Some('x' | 'b' | 'o'));
            if hex {
                i += 2;
                while i < c.len() && (c[i].is_ascii_hexdigit() || c[i] == '_') {
                    i += 1;
                }
            } else {
                while i < c.len() && (c[i].is_ascii_digit() || c[i] == '_') {
                    i += 1;
                }
                if c.get(i) == Some(&'.')
                    && c.get(i + 1).is_some_and(char::is_ascii_digit)
                {
                    i += 1;
                    while i < c.len() && (c[i].is_ascii_digit() || c[i] == '_') {
                        i += 1;
                    }
                }
                if matches!(c.get(i), Some('e' | 'E'))
                    && c.get(i + 1)
                        .is_some_and(|&d| d.is_ascii_digit() || d == '-' || d == '+')
                {
                    i += 2;
                    while i < c.len() && c[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            let text: String = c[start..i].iter().collect();
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1; // a type suffix
            }
            out.push(Literal {
                line: n + 1,
                text,
                before: c[..start].iter().collect::<String>().trim_end().to_string(),
                after: c[i..].iter().collect::<String>().trim_start().to_string(),
            });
        }
    }
    out
}

/// Whether a literal is never a tunable, wherever it stands.
fn never_tunable(l: &Literal) -> bool {
    let t = l.text.replace('_', "");
    if t.starts_with("0x") || t.starts_with("0b") || t.starts_with("0o") {
        return true; // a bit pattern: a hash's or a generator's constant, a magic number
    }
    let float = t.contains('.') || t.contains('e') || t.contains('E');
    let v: f64 = t.parse().unwrap_or(f64::NAN);
    // 0, 1, 2 in arithmetic; a half; unit conversions (per cent, µs, ms, s).
    let plain = [0.0, 1.0, 2.0].contains(&v) || (float && v == 0.5);
    let unit = [1e6, 1e9].contains(&v) || (float && [100.0, 1e3].contains(&v));
    let tolerance = float && v > 0.0 && v < 1e-6;
    // An index, an array's length, a shift, a column, an exponent.
    let index =
        (l.before.ends_with('[') || l.before.ends_with(';')) && l.after.starts_with(']');
    let shift = l.before.ends_with("<<") || l.before.ends_with(">>");
    let call = l.before.ends_with(".get(") || l.before.ends_with(".powi(");
    // The rank of a percentile names a statistic (the median, the quartiles, p90−p10).
    let percentile = l.before.ends_with("q(") || l.before.contains("percentile_sorted(");
    plain || unit || tolerance || index || shift || call || percentile
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("a source directory") {
        let p = e.expect("a directory entry").path();
        // A module's tests (`tests.rs`, or a `tests/` directory beside it) are not code
        // that measures.
        if p.is_dir() && p.file_name().is_some_and(|n| n != "tests") {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs")
            && p.file_name().is_some_and(|n| n != "tests.rs")
        {
            out.push(p);
        }
    }
}

#[test]
fn every_tunable_is_in_method() {
    let mut files = Vec::new();
    for d in CHECKED {
        rust_files(&src().join(d), &mut files);
    }
    files.sort();
    let mut found = Vec::new();
    let mut used = vec![false; ALLOWED.len()];
    for path in &files {
        let name = path
            .strip_prefix(src())
            .expect("under src")
            .to_string_lossy()
            .to_string();
        let code =
            without_tests(&code_only(&std::fs::read_to_string(path).expect("source")));
        let lines: Vec<&str> = code.lines().collect();
        let mut covered = vec![false; lines.len() + 1];
        for (k, &(file, piece, more, _)) in ALLOWED.iter().enumerate() {
            if file != name {
                continue;
            }
            for (n, line) in lines.iter().enumerate() {
                if line.contains(piece) {
                    used[k] = true;
                    for c in covered.iter_mut().skip(n + 1).take(more + 1) {
                        *c = true;
                    }
                }
            }
        }
        for l in literals(&code) {
            if !covered[l.line] && !never_tunable(&l) {
                found.push(format!("src/{name}:{}: {}", l.line, l.text));
            }
        }
    }
    let stale: Vec<_> = ALLOWED
        .iter()
        .zip(&used)
        .filter(|(_, &u)| !u)
        .map(|((f, piece, ..), _)| format!("{f}: {piece}"))
        .collect();
    assert!(
        stale.is_empty(),
        "ALLOWED entries that no longer match a line:\n{}",
        stale.join("\n")
    );
    assert!(
        found.is_empty(),
        "numbers in harness, session, stats or store that are not in `method`:\n{}\n\
         If one changes a figure, an interval or a verdict, make it a documented `pub const` \
         in src/method.rs (its reason, and the docs/measurements.md section behind it or \
         \"no measurement\") and add its row to docs/method.md §8; if it does not, add its \
         line to ALLOWED in tests/tunables.rs with the reason.",
        found.join("\n")
    );
}

/// `(name, value)` of every `pub const` of src/method.rs, the value as written.
fn method_consts() -> Vec<(String, String)> {
    let code =
        code_only(&std::fs::read_to_string(src().join("method.rs")).expect("method.rs"));
    let flat = code.split_whitespace().collect::<Vec<_>>().join(" ");
    flat.split("pub const ")
        .skip(1)
        .map(|item| {
            let (name, rest) =
                item.split_once(':').expect("pub const NAME: TYPE = VALUE;");
            let value = rest.split_once('=').expect("a value").1;
            let value = value.split_once(';').expect("a `;`").0;
            (name.trim().to_string(), value.trim().to_string())
        })
        .collect()
}

/// `(name, value)` of each row of docs/method.md §8: the first cell's `NAME`, the
/// second cell's first code span.
fn section_8() -> Vec<(String, String)> {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/method.md"),
    )
    .expect("docs/method.md");
    let start = doc.find("\n## 8.").expect("docs/method.md has a §8");
    let rest = &doc[start + 1..];
    let section = &rest[..rest.find("\n## ").unwrap_or(rest.len())];
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let span =
                |cell: &str| cell.split('`').nth(1).unwrap_or_default().to_string();
            (span(cells[1]), span(cells[2]))
        })
        .collect()
}

#[test]
fn method_md_section_8_lists_every_constant_with_its_value() {
    let code = method_consts();
    let doc = section_8();
    assert!(code.len() > 40, "src/method.rs read: {code:?}");
    let missing: Vec<_> = code.iter().filter(|c| !doc.contains(c)).collect();
    let extra: Vec<_> = doc.iter().filter(|d| !code.contains(d)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "docs/method.md §8 and src/method.rs differ.\n\
         In src/method.rs, not in §8 as `| `NAME` | `VALUE` … |`: {missing:?}\n\
         In §8, not a `pub const` of src/method.rs with that value: {extra:?}"
    );
}

#[test]
fn the_scanner_finds_numbers_in_code_only() {
    let code = code_only(
        "let x = 0.37 * y.0; // 5\nlet s = \"7\"; /* 8 */ let c = '9';\nv[3] << 4",
    );
    let found: Vec<String> = literals(&code)
        .iter()
        .filter(|l| !never_tunable(l))
        .map(|l| l.text.clone())
        .collect();
    assert_eq!(found, ["0.37"]);
    let code =
        without_tests("let a = 1;\n#[cfg(test)]\nmod tests {\n fn f() { 42 }\n}\n");
    assert!(literals(&code).iter().all(|l| l.text != "42"));
}
