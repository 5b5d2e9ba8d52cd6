//! A row's verdict as data: where its interval's width came from, and why it is not
//! converged. The harness, the session and the history decide these; only the outputs
//! turn them into words ([`Why::label`], [`Why::detail`]), and nothing reads the words
//! back.

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
    /// Whether this reason is about the interval's width, which the history's
    /// interval replaces when it sets the row's interval ([`judge`]).
    pub fn is_width(&self) -> bool {
        matches!(
            self,
            Why::Budget { .. }
                | Why::ClockStep
                | Why::Wide { .. }
                | Why::RunsSpread { .. }
        )
    }

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
/// kept the interval wide.
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

/// Adds `w` to `why`, keeping one reason of each kind, in the order the reasons are
/// named: what makes the figure another's first, then what kept the interval wide.
pub fn add(why: &mut Vec<Why>, w: Why) {
    match why.iter_mut().find(|x| rank(x) == rank(&w)) {
        Some(x) => *x = w,
        None => why.push(w),
    }
    why.sort_by_key(rank);
}

/// The verdict on an interval of relative half-width `half` held to `target`, given
/// the reasons that are not about width (`why`): converged when there are none and
/// the interval is within the target. When the width misses, `width` is the reason
/// added. The one rule every layer applies, so that `converged` always describes the
/// interval that is printed.
pub fn judge(half: f64, target: f64, why: &mut Vec<Why>, width: Why) -> bool {
    why.retain(|w| !w.is_width());
    let within = half.partial_cmp(&(target * (1.0 + 1e-9)));
    if !matches!(
        within,
        Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
    ) {
        add(why, width);
    }
    why.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_keep_one_of_a_kind_in_order() {
        let mut why = vec![];
        add(&mut why, Why::Wide { outlook: None });
        add(&mut why, Why::SlowState { above_pct: 20.0 });
        add(
            &mut why,
            Why::Wide {
                outlook: Some(Outlook::ClockStep),
            },
        );
        assert_eq!(why.len(), 2);
        assert!(matches!(why[0], Why::SlowState { .. }));
        assert!(matches!(why[1], Why::Wide { outlook: Some(_) }));
    }

    #[test]
    fn judging_replaces_the_width_reasons_only() {
        let mut why = vec![
            Why::SlowState { above_pct: 9.0 },
            Why::Budget {
                outlook: Outlook::NoClean,
            },
        ];
        assert!(!judge(0.01, 0.02, &mut why, Why::RunsSpread { runs: 3 }));
        assert_eq!(why, vec![Why::SlowState { above_pct: 9.0 }]);
        let mut why = vec![Why::Wide { outlook: None }];
        assert!(judge(0.01, 0.02, &mut why, Why::RunsSpread { runs: 3 }));
        assert!(!judge(0.03, 0.02, &mut why, Why::RunsSpread { runs: 3 }));
        assert_eq!(why, vec![Why::RunsSpread { runs: 3 }]);
        assert!(!judge(
            f64::NAN,
            0.02,
            &mut vec![],
            Why::Wide { outlook: None }
        ));
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
