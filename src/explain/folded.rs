//! Folded stacks: one line per distinct stack, frames outermost first separated by
//! `;`, a space, and the sample count (the format of Brendan Gregg's
//! `stackcollapse-*` scripts, read by `flamegraph.pl`, inferno and speedscope). Kernel
//! frames carry the `_[k]` suffix those tools colour as the kernel's. The first frame
//! names the benchmark, so the stacks of several results share one file.

use super::Explanation;
use std::fmt::Write;

/// A frame as a folded line may hold it (no `;`, no line break).
fn clean(frame: &str) -> String {
    frame.replace([';', '\n', '\r'], ":")
}

/// The folded lines of one explanation, under the root frame `root`.
pub fn lines(root: &str, e: &Explanation) -> String {
    let mut out = String::new();
    for s in &e.stacks {
        let mut line = clean(root);
        for (f, kernel) in s.frames() {
            line.push(';');
            line.push_str(&clean(f));
            if kernel {
                line.push_str("_[k]");
            }
        }
        let _ = writeln!(out, "{line} {}", s.count);
    }
    out
}

/// One parsed folded line: its frames and count.
pub type Line = (Vec<String>, u64);

/// Parses folded text as flame-graph tools do: the count after the last space, the
/// frames before it split on `;`. An error names the first line that is not one.
pub fn parse(text: &str) -> Result<Vec<Line>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let (stack, n) = l
                .rsplit_once(' ')
                .ok_or_else(|| format!("line {}: no count", i + 1))?;
            let n = n
                .parse::<u64>()
                .map_err(|_| format!("line {}: count {n:?} is not a number", i + 1))?;
            let frames: Vec<String> = stack.split(';').map(str::to_string).collect();
            if frames.iter().any(|f| f.is_empty()) {
                return Err(format!("line {}: an empty frame", i + 1));
            }
            Ok((frames, n))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::Stack;

    #[test]
    fn folded_lines_round_trip_through_the_parser() {
        let mut e = crate::explain::tests::example();
        e.stacks.push(Stack {
            user: "<a as b>::run; odd".into(),
            kernel: vec!["entry_SYSCALL_64".into()],
            count: 3,
            measuring: false,
        });
        let text = lines("syscall.getpid", &e);
        let parsed = parse(&text).unwrap();
        assert_eq!(parsed.len(), e.stacks.len());
        let total: u64 = parsed.iter().map(|l| l.1).sum();
        assert_eq!(total, e.stacks.iter().map(|s| s.count).sum::<u64>());
        for (frames, _) in &parsed {
            assert_eq!(frames[0], "syscall.getpid");
        }
        let last = parsed.last().unwrap();
        assert_eq!(
            last.0,
            [
                "syscall.getpid",
                "<a as b>::run: odd",
                "entry_SYSCALL_64_[k]"
            ]
        );
        assert!(parse("a;b x").is_err());
        assert!(parse("a;;b 3").is_err());
    }
}
