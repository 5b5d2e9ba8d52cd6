//! `--format folded`: the folded stacks ([`crate::explain::folded`]) of each explained
//! result, one file for the whole run.

use crate::explain::folded::lines;

/// The `--format folded` exporter: the folded stacks of each explained result, its
/// label as the root frame; nothing for a result not explained.
pub struct Folded;

impl super::Exporter for Folded {
    fn header(&mut self, _: &crate::results::Run) -> String {
        String::new()
    }
    fn result(&mut self, r: &crate::results::BenchResult) -> String {
        r.explain
            .as_ref()
            .map_or_else(String::new, |e| lines(&r.label(), e))
    }
    fn footer(&mut self, _: &crate::results::Run) -> String {
        String::new()
    }
}
