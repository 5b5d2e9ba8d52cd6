//! The time a run may spend, and who gets it: the budget in proportion to the
//! selection, the rounds each instance is expected to need, and the order in which
//! the time left goes to them.

use super::instance::{self, Instance};
use crate::harness::verdict::{self, Outlook, Stop};
use crate::harness::Profile;
use crate::method;

/// How a run spends its time past the minimum rounds: within the profile's budget
/// (`syscost run`), more rounds go to the benchmarks that have not converged, those
/// that need the least time to reach their target first, up to `budget_max_rounds`;
/// without a budget (one benchmark at a time, as `repro` measures), up to `max_rounds`.
pub(super) struct Budget {
    pub(super) profile: Profile,
    /// Spread the rounds over time at the pace of the profile's span (a whole run).
    pub(super) spread: bool,
    /// The most rounds an instance gets.
    pub(super) cap: usize,
    /// The run's start, when a budget applies.
    pub(super) start: Option<std::time::Instant>,
    /// The run's budget, ns: the profile's for a whole catalogue, less for fewer
    /// instances ([`Budget::for_instances`]).
    pub(super) budget_ns: f64,
}

impl Budget {
    /// A budget of `budget_ns` (its share of [`Budget::for_instances`]) for a group.
    pub(super) fn new(profile: Profile, spread: bool, budget_ns: f64) -> Budget {
        let budgeted = spread
            && profile.budget_ns > 0
            && profile.budget_max_rounds > profile.max_rounds;
        Budget {
            profile,
            spread,
            cap: if budgeted {
                profile.budget_max_rounds
            } else {
                profile.max_rounds
            },
            start: budgeted.then(std::time::Instant::now),
            budget_ns,
        }
    }

    /// The time a run of `n` instances may take at most, ns: the profile's budget for
    /// [`method::WHOLE_CATALOGUE`] instances or more; for fewer, [`method::SMALL_RUN_ROW_SPANS`]
    /// of the profile's spans an instance, at most [`method::SMALL_RUN_MAX_SPANS`], and
    /// never less than the selection's share of the profile's budget. A cap, not a time
    /// to fill: a run ends as soon as every instance is done, so a row that converges
    /// in a second and a half answers in a second and a half, while one measured in an
    /// unsteady spell gets the rounds it needs (docs/measurements/budget.md, "A benchmark
    /// alone"). 0 for a profile without a budget.
    pub(super) fn for_instances(p: &Profile, n: usize) -> f64 {
        let whole = p.budget_ns as f64;
        let share = whole * n as f64 / method::WHOLE_CATALOGUE as f64;
        let span = p.span_ns as f64;
        let small = (n as f64 * (method::SMALL_RUN_ROW_SPANS as f64 * span))
            .min(method::SMALL_RUN_MAX_SPANS as f64 * span);
        share.max(small).min(whole)
    }

    /// The time left, ns (None without a budget).
    pub(super) fn left_ns(&self) -> Option<f64> {
        let start = self.start?;
        Some(self.budget_ns - start.elapsed().as_nanos() as f64)
    }

    /// Whether a round measured in a slow state of the machine may still be measured
    /// again: while the budget has time left (always without a budget). Once it is
    /// spent, the rounds an instance still needs for its minimum are kept as the
    /// machine gives them, so that a machine that stays slow cannot hold a small
    /// selection past its cap (docs/measurements/intervals.md, "The runs' own spread").
    pub(super) fn redoes(&self) -> bool {
        self.left_ns().is_none_or(|left| left > 0.0)
    }

    /// The canary gate, the one place a round is held back for the machine's state:
    /// whether a visit whose canary before it read `canary` waits for a later one, its
    /// instance held back `held_back` times so far and `rounds` rounds kept. Only above
    /// the run's `limit` ([`method::REDO_ABOVE`] over the base state; 0: none yet) and
    /// where the canary stands for the round (`gated`: not a free placement's, whose
    /// canary describes another CPU, nor copies', measured together, nor while
    /// explaining). While the budget has time left, always: a slow spell of seconds is
    /// waited out without costing the instance a round. Without a budget (nothing
    /// would end the wait), at most [`method::REDO_PER_KEPT`] times its rounds kept (at
    /// least the profile's minimum), so that a machine that stays slow still gives a
    /// figure. Once the budget is spent, never: the rounds an instance still needs are
    /// measured as the machine gives them, and a row whose rounds then met a slow
    /// state says so (`Why::SlowState`).
    pub(super) fn holds_back(
        &self,
        (canary, limit): (f64, f64),
        gated: bool,
        held_back: u32,
        rounds: usize,
    ) -> bool {
        if !gated || limit <= 0.0 || canary <= limit {
            return false;
        }
        match self.left_ns() {
            Some(left) => left > 0.0,
            None => {
                held_back
                    < method::REDO_PER_KEPT * rounds.max(self.profile.min_rounds) as u32
            }
        }
    }

    /// Why `inst`, past its minimum rounds, gets no more, if it does not: the budget is
    /// spent; or, past the profile's usual rounds (`max_rounds`), it cannot reach its
    /// target within the cap (the budget is a cap, not a time to fill: rounds that
    /// narrow an interval which stays above its target anyway only make the run
    /// longer); or half the clock's step per operation is wider than `target`.
    pub(super) fn stops(&self, inst: &Instance<'_>, target: f64) -> Option<Stop> {
        let left = self.left_ns();
        if left.is_some_and(|left| left <= 0.0) {
            return Some(Stop::Budget(self.outlook(inst).2));
        }
        if left.is_some() && inst.progress().rounds >= self.profile.max_rounds {
            let (feasible, _, outlook) = self.outlook(inst);
            if !feasible {
                return Some(Stop::Hopeless(outlook));
            }
        }
        (inst.progress().floor > target).then_some(Stop::ClockStep)
    }

    /// Whether `inst` can converge within the cap, what more rounds would cost it (ns:
    /// to its target, or else to the cap), and that as an [`Outlook`]
    /// ([`verdict::outlook`]).
    pub(super) fn outlook(&self, inst: &Instance<'_>) -> (bool, f64, Outlook) {
        let instance::Progress {
            rounds,
            ci,
            floor,
            spent_ns,
            held,
        } = inst.progress();
        let visit_ns = spent_ns / rounds.max(1) as f64;
        let target = held.own_target(&self.profile);
        verdict::outlook(
            &self.profile,
            self.cap,
            rounds,
            (ci, floor),
            target,
            visit_ns,
        )
    }

    /// The order in which the instances of `order` (past the minimum cycles) get their
    /// next round: any still short of its minimum rounds (a round of it was measured
    /// again) first, then those that need the least time to reach their target first,
    /// those that cannot within the cap last (they still get rounds while the budget
    /// lasts: the run's time goes where the uncertainty is).
    pub(super) fn choose(&self, all: &[Instance<'_>], order: Vec<usize>) -> Vec<usize> {
        if self.start.is_none() {
            return order;
        }
        let mut keyed: Vec<(bool, bool, f64, usize)> = order
            .into_iter()
            .map(|i| {
                let short = all[i].progress().rounds < self.profile.min_rounds;
                let (feasible, cost, _) = self.outlook(&all[i]);
                (short, feasible, cost, i)
            })
            .collect();
        keyed.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.total_cmp(&b.2)));
        keyed.into_iter().map(|(_, _, _, i)| i).collect()
    }
}

/// A group's share of a run's budget `run_ns` when `spent_ns` of it are spent: the
/// time left in proportion to the group's `len` among the `left` instances not yet
/// measured (this group's included), so that what a group leaves unspent (its rows
/// converged early) goes to the groups after it, and what one overran (a slow spell
/// waited out) comes out of theirs; never less than [`method::MIN_GROUP_SHARE`] of its share
/// of the whole budget among the run's `total` instances.
pub(super) fn group_share(
    run_ns: f64,
    spent_ns: f64,
    len: usize,
    left: usize,
    total: usize,
) -> f64 {
    let nominal = run_ns * len as f64 / total.max(1) as f64;
    let fair = (run_ns - spent_ns).max(0.0) * len as f64 / left.max(1) as f64;
    fair.max(method::MIN_GROUP_SHARE * nominal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_selection_has_time_for_each_row_up_to_a_ceiling_and_never_below_its_share()
    {
        let p = Profile::STANDARD;
        let s = |n| Budget::for_instances(&p, n) / 1e9;
        let row = (method::SMALL_RUN_ROW_SPANS * p.span_ns) as f64 / 1e9;
        let most = (method::SMALL_RUN_MAX_SPANS * p.span_ns) as f64 / 1e9;
        assert_eq!(s(1), row);
        assert_eq!(s(2), 2.0 * row);
        assert!(s(3) > s(2) && s(2) > s(1));
        // The ceiling of a small selection, then the share of the whole budget past it.
        let at_ceiling = (most / row).ceil() as usize;
        assert_eq!(s(at_ceiling), most);
        assert_eq!(s(at_ceiling + 1), most);
        assert_eq!(s(method::WHOLE_CATALOGUE), p.budget_ns as f64 / 1e9);
        assert_eq!(s(10 * method::WHOLE_CATALOGUE), s(method::WHOLE_CATALOGUE));
        let share = |n: usize| {
            p.budget_ns as f64 / 1e9 * n as f64 / method::WHOLE_CATALOGUE as f64
        };
        assert_eq!(s(200), share(200).max(most));
        // Never more than the profile's whole budget (quick: 17 s).
        let q = Profile::QUICK;
        assert_eq!(Budget::for_instances(&q, 5), q.budget_ns as f64);
        // A profile without a budget has none.
        assert_eq!(Budget::for_instances(&Profile::SMOKE, 1), 0.0);
    }

    #[test]
    fn a_group_gets_what_the_groups_before_it_left() {
        let g = |spent: f64, len, left| group_share(100.0, spent, len, left, 200);
        // The first of four groups of 50: a quarter.
        assert_eq!(g(0.0, 50, 200), 25.0);
        // The first group took only 10: the other three share 90.
        assert_eq!(g(10.0, 50, 150), 30.0);
        // It overran to 40: they share 60.
        assert_eq!(g(40.0, 50, 150), 20.0);
        // Never below half its quarter, even with the budget gone.
        assert_eq!(g(150.0, 50, 50), 12.5);
        // The last group gets all that is left.
        assert_eq!(g(70.0, 50, 50), 30.0);
    }

    #[test]
    fn a_slow_spell_is_waited_out_while_the_budget_lasts_and_no_longer() {
        let (p, slow) = (Profile::STANDARD, (200.0, 100.0));
        let mut b = Budget::new(p, true, 1e9);
        assert!(
            b.holds_back(slow, true, 1000, 0) && b.redoes(),
            "a budget just begun"
        );
        b.start = Some(std::time::Instant::now() - std::time::Duration::from_millis(900));
        assert!(b.holds_back(slow, true, 1000, 0) && b.redoes(), "90% spent");
        b.start =
            Some(std::time::Instant::now() - std::time::Duration::from_millis(1040));
        assert!(!b.holds_back(slow, true, 0, 0) && !b.redoes(), "spent");
        // Without a budget (rounds not spread), as often as method::REDO_PER_KEPT
        // times the rounds kept, at least the profile's minimum: a machine that stays
        // slow still gets a figure.
        let none = Budget::new(p, false, 1e12);
        let allowed = method::REDO_PER_KEPT * p.min_rounds as u32;
        assert!(none.holds_back(slow, true, allowed - 1, 0) && none.redoes());
        assert!(!none.holds_back(slow, true, allowed, 0));
        assert!(none.holds_back(slow, true, allowed, p.min_rounds + 1));
        // Never within the limit, nor without one, nor where the canary does not
        // stand for the round (a free placement's, copies', while explaining).
        assert!(!none.holds_back((100.0, 100.0), true, 0, 0));
        assert!(!none.holds_back((1e9, 0.0), true, 0, 0));
        assert!(!none.holds_back(slow, false, 0, 0));
    }
}
