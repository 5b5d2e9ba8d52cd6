//! Markdown: a GitHub-flavoured table, one row per result.

use super::Exporter;
use crate::results::{fmt_ns, BenchResult, Run, Status};

/// The head of the table of results.
const TABLE_HEAD: &str = "| benchmark | params | median | 95% CI (over rounds) | samples (clean/all) | converged |\n\
                          |---|---|--:|--:|--:|:-:|\n";

/// The Markdown exporter.
#[derive(Default)]
pub struct Markdown {
    /// The summary goes before the rows ([`Exporter::summary_first`]).
    summary_first: bool,
}

impl Exporter for Markdown {
    fn summary_first(&mut self) -> bool {
        self.summary_first = true;
        true
    }

    fn lead(&mut self, run: &Run) -> String {
        let s = super::summary::markdown(run);
        let summary = match s.trim().is_empty() {
            true => String::new(),
            false => s.trim_start_matches('\n').to_string() + "\n",
        };
        summary + TABLE_HEAD
    }

    fn header(&mut self, run: &Run) -> String {
        let title = format!(
            "clock: {} ({} ns steps) · profile: {}\n\n",
            run.clock.name,
            super::table::step_text(run.clock.resolution()),
            run.harness.profile
        );
        // With the summary first, the table's head comes after it ([`Markdown::lead`]).
        match self.summary_first {
            true => title,
            false => title + TABLE_HEAD,
        }
    }

    fn result(&mut self, r: &BenchResult) -> String {
        let (median, ci, samples, conv) = match (&r.measured, r.status) {
            (Some(m), _) => (
                fmt_ns(m.median_ns),
                format!("{} – {}", fmt_ns(m.ci_low_ns), fmt_ns(m.ci_high_ns)),
                format!("{}/{}", m.counts.clean, m.counts.total),
                if m.converged { "yes" } else { "no" }.to_string(),
            ),
            (None, status) => {
                let what = match status {
                    Status::Skipped => "skipped",
                    _ => "failed",
                };
                let median = match &r.reason {
                    Some(why) => format!("{what}: {why}"),
                    None => what.into(),
                };
                (median, String::new(), String::new(), String::new())
            }
        };
        let esc = |s: &str| s.replace('|', "\\|");
        format!(
            "| {} | {} | {median} | {ci} | {samples} | {conv} |\n",
            esc(&r.name),
            esc(&r.param_label())
        )
    }

    fn footer(&mut self, run: &Run) -> String {
        match self.summary_first {
            true => String::new(),
            false => super::summary::markdown(run),
        }
    }
}
