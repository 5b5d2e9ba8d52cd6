//! A row's verdict as data: where its interval's width came from, and why it is not
//! converged. One function decides them ([`decide`]), from the facts the harness, the
//! session and the history know of the row ([`Facts`]); only the outputs turn them
//! into words ([`Why::label`], [`Why::detail`]), and nothing reads the words back.

use serde::{Deserialize, Serialize};

/// What set the width of a row's printed interval (docs/method.md, "The interval").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The row's own rounds: Yuen's interval of the round medians, √2 wider than the
    /// mean's, so that it says where a rerun's figure lands.
    #[default]
    Rounds,
    /// Half a clock step per operation, wider than the rounds' interval: the clock
    /// cannot tell the figure more finely.
    Clock,
    /// The pooled clean samples' own interval of the median, wider than the rounds'.
    Samples,
    /// Too few clean samples: the median of every sample with its order-statistic
    /// interval, at least ±1% (or the target).
    AllSamples,
    /// Its rounds' interval with what the machine allows the row's kind of work
    /// (`harness::Held`) added as an independent error: a row without a history cannot
    /// see how far the machine moves between runs, and its kind's probes stand for it
    /// (docs/method.md, "The interval").
    Machine,
    /// The spread of the row's saved runs in the history (`between_runs`), from its
    /// third run under the same conditions.
    Runs,
}

impl Source {
    /// The source in a few words, for a row's note.
    pub fn words(self) -> &'static str {
        match self {
            Source::Rounds => "its rounds",
            Source::Clock => "half the clock's step per operation",
            Source::Samples => "its samples' interval of the median",
            Source::AllSamples => "all its samples (too few clean)",
            Source::Machine => "its rounds and what the machine allows its kind of work",
            Source::Runs => "the spread of its saved runs",
        }
    }
}

/// What more rounds would have done for a row when it was stopped
/// (`session::budget`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outlook", rename_all = "snake_case")]
pub enum Outlook {
    /// About `rounds` more rounds, `secs` seconds, would reach the target.
    More {
        /// Rounds to the look that would reach it.
        rounds: usize,
        /// Their time, s.
        secs: f64,
    },
    /// The rounds spread so that the target would need about `need` rounds, more than
    /// the profile's cap.
    BeyondCap {
        /// Rounds the target would need.
        need: usize,
        /// The cap.
        cap: usize,
    },
    /// Half the clock's step per operation is wider than the target.
    ClockStep,
    /// No round has a clean sample.
    NoClean,
}

impl Outlook {
    fn words(&self) -> String {
        match self {
            Outlook::More { rounds, secs } => {
                format!("about {rounds} more rounds ({secs:.1} s) would reach the target")
            }
            Outlook::BeyondCap { need, cap } => format!(
                "its rounds spread so that it would need about {need} rounds, more than \
                 the cap of {cap}"
            ),
            Outlook::ClockStep => {
                "half the clock's step per operation is wider than the target".into()
            }
            Outlook::NoClean => "no round has a clean sample".into(),
        }
    }
}

/// One reason a row is not converged. A converged row has none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum Why {
    /// The run was interrupted before the row was done.
    Interrupted,
    /// Its kept rounds met the machine in a slow state: the canary before them read
    /// `above_pct` % above the base state at their median.
    SlowState {
        /// How far above, %.
        above_pct: f64,
    },
    /// Too few clean samples (fewer than 30, or than a tenth): the figure is the
    /// median of all of them.
    FewClean,
    /// Fewer rounds with a clean sample than the profile's minimum.
    FewRounds {
        /// Rounds with a clean sample.
        with_clean: usize,
    },
    /// The benchmark's tasks did not stay where its placement asked.
    NotPlaced {
        /// Where they ran, for the note.
        detail: String,
    },
    /// The run's time budget ended before the interval reached the target.
    Budget {
        /// What more rounds would have done.
        outlook: Outlook,
    },
    /// Its interval cannot narrow below the target: half the clock's step per
    /// operation is wider.
    ClockStep,
    /// Its rounds spread more than the target allows at the rounds it was given.
    Wide {
        /// What more rounds would have done, when the run stopped it for that.
        outlook: Option<Outlook>,
    },
    /// Its saved runs spread more than the target: the interval from the history is
    /// wider than it.
    RunsSpread {
        /// Runs counted, this one included.
        runs: usize,
    },
}

impl Why {
    /// The reason in a few words: the summary counts rows by it.
    pub fn label(&self) -> &'static str {
        match self {
            Why::Interrupted => "interrupted",
            Why::SlowState { .. } => "its rounds met a slow state of the machine",
            Why::FewClean | Why::FewRounds { .. } => "too few clean samples",
            Why::NotPlaced { .. } => "tasks not placed as asked",
            Why::Budget { .. } => "the time budget ended",
            Why::ClockStep => "the clock's step is wider than the target",
            Why::Wide { .. } => "rounds spread too much for the target",
            Why::RunsSpread { .. } => "its saved runs spread more than the target",
        }
    }

    /// The reason in a sentence, for `--verbose` and `history show`.
    pub fn detail(&self) -> String {
        match self {
            Why::SlowState { above_pct } => format!(
                "its rounds met the machine in a slow state: the canary before them read \
                 {above_pct:.0}% above the base state at their median, so the figure is \
                 that state's"
            ),
            Why::FewRounds { with_clean } => {
                format!("only {with_clean} rounds had a clean sample")
            }
            Why::NotPlaced { detail } => format!("tasks not placed as asked: {detail}"),
            Why::Budget { outlook } => {
                format!("the run's time budget ended; {}", outlook.words())
            }
            Why::Wide {
                outlook: Some(outlook),
            } => format!("{}; {}", self.label(), outlook.words()),
            Why::RunsSpread { runs } => {
                format!("its {runs} saved runs here spread more than the target allows")
            }
            _ => self.label().to_string(),
        }
    }
}

/// The order reasons are named in: what makes the figure another's first, then what
/// kept the interval wide ([`decide`]).
fn rank(w: &Why) -> u8 {
    match w {
        Why::Interrupted => 0,
        Why::SlowState { .. } => 1,
        Why::FewClean => 2,
        Why::FewRounds { .. } => 3,
        Why::NotPlaced { .. } => 4,
        Why::Budget { .. } => 5,
        Why::RunsSpread { .. } => 6,
        Why::ClockStep => 7,
        Why::Wide { .. } => 8,
    }
}

/// Why the run gave a row no more rounds before it converged or reached its cap
/// (`session::budget`): a fact its verdict weighs ([`decide`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Stop {
    /// The run's time budget ended, with what more rounds would have done.
    Budget(Outlook),
    /// More rounds could not bring it to its target within the cap.
    Hopeless(Outlook),
    /// Half the clock's step per operation is wider than its target.
    ClockStep,
}

/// What a row's verdict weighs besides its interval: what the harness (its rounds),
/// the session (its canary, its placement, the budget) and the history (its saved
/// runs) know of it. Each layer fills in what it knows; only [`decide`] turns the
/// facts into reasons.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    /// The figure rests on all samples: the clean ones were too few.
    pub all_samples: bool,
    /// Rounds with a clean sample.
    pub with_clean: usize,
    /// The profile's minimum of them.
    pub min_rounds: usize,
    /// Half the clock's step per operation, relative to the figure: the interval
    /// cannot narrow below it.
    pub clock_floor: f64,
    /// How far above the base state, %, the canary before its kept rounds read, when
    /// they met the machine in a slow state.
    pub slow_state: Option<f64>,
    /// The run was interrupted before the row was done.
    pub interrupted: bool,
    /// Why the run gave it no more rounds, when it did so.
    pub stopped: Option<Stop>,
    /// Where its tasks ran, when not where its placement asked.
    pub not_placed: Option<String>,
    /// Its interval is the spread of this many saved runs, this one included
    /// ([`Source::Runs`]).
    pub runs: Option<usize>,
}

impl Facts {
    /// The facts a saved row's reasons record, those about its width left out: what
    /// the history weighs again when the spread of the row's runs sets its interval.
    pub fn recorded(why: &[Why]) -> Facts {
        let mut f = Facts::default();
        for w in why {
            match w {
                Why::Interrupted => f.interrupted = true,
                Why::SlowState { above_pct } => f.slow_state = Some(*above_pct),
                Why::FewClean => f.all_samples = true,
                Why::FewRounds { with_clean } => {
                    (f.with_clean, f.min_rounds) = (*with_clean, with_clean + 1);
                }
                Why::NotPlaced { detail } => f.not_placed = Some(detail.clone()),
                _ => {}
            }
        }
        f
    }
}

/// A row's verdict: why it is not converged (none: converged), from its printed
/// interval's relative half-width `half`, the `target` it is held to
/// (`harness::Held::target`) and the facts its layers know. The one place a reason
/// is made, so that `converged` always describes the interval that is printed.
///
/// The figure is another's when it rests on all samples, on fewer rounds with a clean
/// sample than the minimum, or on rounds that met a slow state, or when the tasks were
/// not placed as asked. An interval wider than the target says what kept it so: the
/// spread of the saved runs when they set it, else the clock's step when that is
/// wider than the target, else the rounds' spread; a row the run stopped (its budget,
/// or no hope of its target within the cap) and that is not converged gives the run's
/// reason in place of the rounds' spread.
pub fn decide(half: f64, target: f64, f: &Facts) -> Vec<Why> {
    let mut why = Vec::new();
    if f.all_samples {
        why.push(Why::FewClean);
    } else if f.with_clean < f.min_rounds {
        let with_clean = f.with_clean;
        why.push(Why::FewRounds { with_clean });
    }
    why.extend(f.slow_state.map(|above_pct| Why::SlowState { above_pct }));
    // Within the target give or take a rounding; a NaN width is not.
    let within = half <= target * (1.0 + 1e-9);
    if !within {
        why.push(match f.runs {
            Some(runs) => Why::RunsSpread { runs },
            None if f.clock_floor > target => Why::ClockStep,
            None => Why::Wide { outlook: None },
        });
    }
    if f.interrupted {
        why.push(Why::Interrupted);
    } else if let (Some(stop), false) = (&f.stopped, why.is_empty()) {
        why.retain(|w| !matches!(w, Why::Wide { .. }));
        why.push(match stop.clone() {
            Stop::Budget(outlook) => Why::Budget { outlook },
            Stop::ClockStep | Stop::Hopeless(Outlook::ClockStep) => Why::ClockStep,
            Stop::Hopeless(o) => Why::Wide { outlook: Some(o) },
        });
    }
    why.extend(f.not_placed.clone().map(|detail| Why::NotPlaced { detail }));
    // One of a kind, in the order they are named.
    why.sort_by_key(rank);
    why.dedup_by_key(|w| rank(w));
    why
}

/// Whether a row can reach `target` (its rounds' own, `harness::Held::own_target`)
/// within `cap` rounds under `p`, what more rounds would cost (ns: to its target, or
/// else to the cap), and that as an [`Outlook`]: after `rounds` rounds of `visit_ns`
/// each, with its rounds' relative half-width `ci` and its clock floor `floor` at the
/// last look.
pub fn outlook(
    p: &super::Profile,
    cap: usize,
    rounds: usize,
    (ci, floor): (f64, f64),
    target: f64,
    visit_ns: f64,
) -> (bool, f64, Outlook) {
    let to_cap = cap.saturating_sub(rounds) as f64 * visit_ns;
    if floor > target {
        return (false, to_cap, Outlook::ClockStep);
    }
    let Some(need) = rounds_needed(rounds, ci, target) else {
        return (false, to_cap, Outlook::NoClean);
    };
    if need > cap {
        return (false, to_cap, Outlook::BeyondCap { need, cap });
    }
    let look = p.next_look(need, cap);
    let more = look.saturating_sub(rounds);
    let cost = more as f64 * visit_ns;
    let outlook = Outlook::More {
        rounds: more,
        secs: cost / 1e9,
    };
    (true, cost, outlook)
}

/// About how many rounds an interval of relative half-width `ci` after `rounds` rounds
/// needs to reach `target`: the half-width shrinks as one over the square root of the
/// rounds (the t quantile's shrinking is left out, so the estimate errs long).
/// None when the interval is not known.
fn rounds_needed(rounds: usize, ci: f64, target: f64) -> Option<usize> {
    if !ci.is_finite() || target <= 0.0 {
        return None;
    }
    let r = rounds.max(1) as f64 * (ci / target).powi(2);
    Some((r.min(1e6).ceil() as usize).max(rounds + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_history_replaces_the_width_reasons_only() {
        let why = vec![
            Why::SlowState { above_pct: 9.0 },
            Why::Budget {
                outlook: Outlook::NoClean,
            },
        ];
        let runs = |why: &[Why]| Facts {
            runs: Some(3),
            ..Facts::recorded(why)
        };
        assert_eq!(
            decide(0.01, 0.02, &runs(&why)),
            vec![Why::SlowState { above_pct: 9.0 }]
        );
        let why = vec![Why::Wide { outlook: None }];
        assert!(decide(0.01, 0.02, &runs(&why)).is_empty());
        assert_eq!(
            decide(0.03, 0.02, &runs(&why)),
            vec![Why::RunsSpread { runs: 3 }]
        );
        assert_eq!(
            decide(f64::NAN, 0.02, &Facts::default()),
            vec![Why::Wide { outlook: None }]
        );
    }

    #[test]
    fn a_stopped_row_gives_the_runs_reason_for_its_width() {
        let stopped = |stop| Facts {
            stopped: Some(stop),
            clock_floor: 0.001,
            ..Facts::default()
        };
        let budget = Stop::Budget(Outlook::NoClean);
        assert!(decide(0.01, 0.02, &stopped(budget.clone())).is_empty());
        assert_eq!(
            decide(0.03, 0.02, &stopped(budget)),
            vec![Why::Budget {
                outlook: Outlook::NoClean
            }]
        );
        let hopeless = Stop::Hopeless(Outlook::ClockStep);
        assert_eq!(decide(0.03, 0.02, &stopped(hopeless)), vec![Why::ClockStep]);
        let interrupted = Facts {
            interrupted: true,
            ..stopped(Stop::Budget(Outlook::NoClean))
        };
        assert_eq!(
            decide(0.03, 0.02, &interrupted),
            vec![Why::Interrupted, Why::Wide { outlook: None }]
        );
    }

    #[test]
    fn the_rounds_a_benchmark_needs_grow_with_the_square_of_its_interval() {
        assert_eq!(rounds_needed(5, 0.02, 0.01), Some(20));
        assert_eq!(rounds_needed(5, 0.011, 0.01), Some(7));
        assert_eq!(rounds_needed(8, 0.005, 0.01), Some(9), "at least one more");
        assert_eq!(rounds_needed(5, f64::INFINITY, 0.01), None);
    }

    #[test]
    fn the_json_names_each_reason() {
        let w = Why::Budget {
            outlook: Outlook::More {
                rounds: 4,
                secs: 0.3,
            },
        };
        let s = serde_json::to_string(&w).unwrap();
        assert_eq!(
            s,
            r#"{"why":"budget","outlook":{"outlook":"more","rounds":4,"secs":0.3}}"#
        );
        assert_eq!(serde_json::from_str::<Why>(&s).unwrap(), w);
    }
}
