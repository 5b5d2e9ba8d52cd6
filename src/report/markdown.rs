//! Markdown: a GitHub-flavoured table, one row per result.

use super::Exporter;
use crate::results::{fmt_ns, BenchResult, Run, Status};

/// The Markdown exporter.
pub struct Markdown;

impl Exporter for Markdown {
    fn header(&mut self, run: &Run) -> String {
        format!(
            "clock: {} ({} ns steps) · profile: {}\n\n\
             | benchmark | params | median | 95% CI (over rounds) | samples (clean/all) | converged |\n\
             |---|---|--:|--:|--:|:-:|\n",
            run.clock.name,
            super::table::step_text(run.clock.resolution()),
            run.harness.profile
        )
    }

    fn result(&mut self, r: &BenchResult) -> String {
        let (median, ci, samples, conv) = match (&r.measured, r.status) {
            (Some(m), _) => (
                fmt_ns(m.median_ns),
                format!("{} – {}", fmt_ns(m.ci_low_ns), fmt_ns(m.ci_high_ns)),
                format!("{}/{}", m.counts.clean, m.counts.total),
                if m.converged { "yes" } else { "no" }.to_string(),
            ),
            (None, Status::Skipped) => (
                match &r.reason {
                    Some(why) => format!("skipped: {why}"),
                    None => "skipped".into(),
                },
                String::new(),
                String::new(),
                String::new(),
            ),
            (None, _) => (
                match &r.reason {
                    Some(why) => format!("failed: {why}"),
                    None => "failed".into(),
                },
                String::new(),
                String::new(),
                String::new(),
            ),
        };
        let esc = |s: &str| s.replace('|', "\\|");
        format!(
            "| {} | {} | {median} | {ci} | {samples} | {conv} |\n",
            esc(&r.name),
            esc(&r.param_label())
        )
    }

    fn footer(&mut self, run: &Run) -> String {
        super::summary::markdown(run)
    }
}
