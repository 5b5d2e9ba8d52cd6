//! The flame graph of an explanation, drawn by syscost as an SVG: the root is the
//! whole operation, each frame a box above its caller, the width of a box its
//! inclusive ns per operation (the root's width is the median), siblings in name order.
//! User-space frames are blue, kernel frames orange, mitigations red, scheduler green,
//! interrupts purple; each box's tooltip gives its ns per operation.

use super::{analysis, Explanation, Group};
use crate::draw::svg::{escape, Svg};
use std::collections::BTreeMap;
use std::fmt::Write;

const WIDTH: f64 = 1000.0;
const ROW: f64 = 17.0;
const TOP: f64 = 44.0;

#[derive(Default)]
struct Node {
    count: u64,
    kernel: bool,
    children: BTreeMap<String, Node>,
}

fn tree(e: &Explanation) -> Node {
    let mut root = Node::default();
    for s in &e.stacks {
        root.count += s.count;
        let mut at = &mut root;
        for (f, kernel) in s.frames() {
            at = at.children.entry(f.to_string()).or_default();
            at.count += s.count;
            at.kernel = kernel;
        }
    }
    root
}

fn depth(n: &Node) -> usize {
    1 + n.children.values().map(depth).max().unwrap_or(0)
}

fn fill(name: &str, kernel: bool) -> &'static str {
    match analysis::classify(name, kernel) {
        Group::User => "#9ecae1",
        Group::Mitigations => "#e34a33",
        Group::Scheduler => "#74c476",
        Group::Interrupts => "#9e9ac8",
        Group::Entry => "#fdae6b",
        Group::Body => "#fdd0a2",
    }
}

struct Draw<'a> {
    out: String,
    total: u64,
    ns: f64,
    rows: usize,
    op: &'a str,
}

impl Draw<'_> {
    fn node(&mut self, name: &str, n: &Node, x: f64, level: usize) {
        let w = WIDTH * n.count as f64 / self.total as f64;
        if w < 0.3 {
            return;
        }
        let y = TOP + (self.rows - 1 - level) as f64 * ROW;
        let ns = self.ns * n.count as f64 / self.total as f64;
        let label = if n.kernel {
            format!("{name} [k]")
        } else {
            name.to_string()
        };
        let color = if level == 0 {
            "#dddddd"
        } else {
            fill(name, n.kernel)
        };
        let _ = write!(
            self.out,
            r##"<g><title>{} — {:.1} ns per {} ({:.1}%)</title><rect x="{:.2}" y="{:.1}" width="{:.2}" height="{:.1}" fill="{color}" stroke="#fff" stroke-width="0.5"/>"##,
            escape(&label),
            ns,
            escape(self.op),
            100.0 * n.count as f64 / self.total as f64,
            x,
            y,
            w,
            ROW - 1.0
        );
        let chars = ((w - 6.0) / 6.5).floor().max(0.0) as usize;
        if chars >= 3 {
            let text = crate::draw::text::clip(&label, chars);
            let _ = write!(
                self.out,
                r#"<text x="{:.2}" y="{:.1}" font-size="11">{}</text>"#,
                x + 3.0,
                y + ROW - 5.0,
                escape(&text)
            );
        }
        self.out.push_str("</g>");
        let mut cx = x;
        for (child, c) in &n.children {
            self.node(child, c, cx, level + 1);
            cx += WIDTH * c.count as f64 / self.total as f64;
        }
    }
}

/// The flame graph of `e`, titled with `label` (the benchmark) and `op` (what one
/// operation is).
pub fn svg(label: &str, op: &str, e: &Explanation) -> Svg {
    let root = tree(e);
    let rows = depth(&root);
    let mut d = Draw {
        out: String::new(),
        total: root.count.max(1),
        ns: e.median_ns,
        rows,
        op,
    };
    let title = format!("where {label}'s time goes");
    let _ = write!(
        d.out,
        r#"<text x="8" y="18" font-size="14" font-weight="bold">{}</text><text x="8" y="36" font-size="11">width: ns per {} (the whole is the median, {:.1} ns); {} samples of {}; hover a box for its figure</text>"#,
        escape(&title),
        escape(op),
        e.median_ns,
        e.samples,
        escape(&e.event)
    );
    let root_label = format!("all ({label})");
    d.node(&root_label, &root, 0.0, 0);
    let body = std::mem::take(&mut d.out);
    Svg::raw(WIDTH, TOP + rows as f64 * ROW + 8.0, &title, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_spans_the_median_and_frames_sit_on_their_callers() {
        let e = crate::explain::tests::example();
        let s = svg("syscall.getpid", "call", &e).to_string();
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        // The root box: the whole width, the median in its tooltip.
        assert!(s.contains(r#"width="1000.00""#), "{s}");
        assert!(s.contains("all (syscall.getpid) — 60.0 ns per call"));
        assert!(s.contains("do_syscall_64 [k]"));
        assert!(s.contains("#e34a33"), "the mitigation is coloured as one");
        // Every tooltip's figure is at most the median.
        for t in s.split("<title>").skip(2) {
            let ns: f64 = t
                .split(" — ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert!(ns <= 60.0 + 1e-9, "{t}");
        }
    }
}
