//! Pairing STARTs with ENDs: [`Pairer`] turns user events, in time order, into the
//! intervals a spec names, kind by kind, with nesting, `(arg=start)` and the counts of
//! unmatched ENDs and open STARTs. Shared by `reduce` and `export`.

use super::{ArgCond, IntervalSpec};
use crate::trace::format::UserEvent;
use std::collections::BTreeMap;

/// An open START: when, where and by whom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Start {
    /// Its time, ns.
    pub ts: u64,
    /// Its CPU.
    pub cpu: u32,
    /// Its argument.
    pub arg: u64,
    /// Its thread.
    pub tid: u32,
}

/// Pairs STARTs with ENDs into intervals, kind by kind, as user events arrive in time
/// order: nesting, `(arg=start)` and the unmatched and open counts of the spec
/// language. Shared by `reduce` and `export`.
pub struct Pairer<'s> {
    spec: &'s [IntervalSpec],
    stacks: Vec<BTreeMap<u32, Vec<Start>>>,
    unmatched: Vec<u64>,
}

impl<'s> Pairer<'s> {
    /// A pairer for `spec`.
    pub fn new(spec: &'s [IntervalSpec]) -> Pairer<'s> {
        Pairer {
            spec,
            stacks: vec![BTreeMap::new(); spec.len()],
            unmatched: vec![0; spec.len()],
        }
    }

    /// Feeds event `e` of thread `tid`; `closed(kind, start, end)` is called for each
    /// interval it ends.
    pub fn event(
        &mut self,
        tid: u32,
        e: &UserEvent,
        mut closed: impl FnMut(usize, Start, &UserEvent),
    ) {
        for (i, s) in self.spec.iter().enumerate() {
            let key = if s.same_thread { tid } else { 0 };
            let ends = e.id == s.end.id && matches_arg(s.end.arg, e.arg);
            let starts = e.id == s.start.id && matches_arg(s.start.arg, e.arg);
            // An event that both ends and starts (A -> A) ends first: back-to-back
            // intervals.
            if ends {
                let stack = self.stacks[i].entry(key).or_default();
                let pos = match s.end.arg {
                    ArgCond::SameAsStart => stack.iter().rposition(|o| o.arg == e.arg),
                    _ => stack.len().checked_sub(1),
                };
                match pos {
                    Some(p) => closed(i, stack.remove(p), e),
                    None if !starts => self.unmatched[i] += 1,
                    None => {}
                }
            }
            if starts {
                self.stacks[i].entry(key).or_default().push(Start {
                    ts: e.ts,
                    cpu: e.cpu,
                    arg: e.arg,
                    tid,
                });
            }
        }
    }

    /// ENDs of kind `i` that had no open START.
    pub fn unmatched(&self, i: usize) -> u64 {
        self.unmatched[i]
    }

    /// STARTs of kind `i` still open.
    pub fn open(&self, i: usize) -> u64 {
        self.stacks[i].values().map(|v| v.len() as u64).sum()
    }
}

fn matches_arg(c: ArgCond, arg: u64) -> bool {
    match c {
        ArgCond::Any | ArgCond::SameAsStart => true,
        ArgCond::Is(v) => v == arg,
    }
}
