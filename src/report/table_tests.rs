//! The table's tests: its notes, its footer's lines and its rows.

use super::*;
use crate::harness::analyze::tests::{conclude, samples};
use crate::harness::Expect;
use crate::os::usage::Usage;

#[test]
fn the_footer_says_when_the_figures_are_a_state_the_machine_was_seldom_in() {
    use crate::stats::rounds::State;
    let state = |median_ns: f64, share: f64| State {
        median_ns,
        share,
        count: 1,
    };
    let mut ms = crate::results::MachineStates {
        states: vec![state(140.0, 0.28), state(187.0, 0.72)],
        ..Default::default()
    };
    assert_eq!(ms.base_ns(), Some(140.0));
    let note = base_state_note(&ms).unwrap();
    assert!(note.contains("getpid 140.0 ns, 28% of the run"), "{note}");
    assert!(note.contains("read 34% slower"), "{note}");
    ms.states = vec![state(140.0, 0.6), state(187.0, 0.4)];
    assert_eq!(base_state_note(&ms), None);
}

#[test]
fn a_rows_note_quotes_its_printed_interval_target_and_first_reason() {
    use crate::harness::verdict::{Outlook, Why};
    let mut r = crate::results::tests::run_with_medians(&[("syscall.getpid", 100.0)])
        .results
        .remove(0);
    let m = r.measured.as_mut().unwrap();
    m.converged = false;
    (m.ci_low_ns, m.ci_high_ns) = (80.0, 120.0);
    m.rounds = (0..5)
        .map(|round| crate::harness::analyze::RoundFigure {
            round,
            start_ns: 0.0,
            median_ns: Some(100.0),
            clean: 1,
            total: 1,
        })
        .collect();
    m.target_pct = Some(11.0);
    m.why = vec![
        Why::Budget {
            outlook: Outlook::More {
                rounds: 3,
                secs: 0.4,
            },
        },
        Why::Wide { outlook: None },
    ];
    let note = row_note(&r, 0.02).unwrap();
    assert_eq!(
        note,
        "not converged: ±20% after 5 rounds, target ±11% (the time budget ended)"
    );
    // A document from before the reasons were recorded: its words as they were.
    let m = r.measured.as_mut().unwrap();
    m.why.clear();
    m.stop_reason = "CI ±20% after 5 rounds".into();
    let note = row_note(&r, 0.02).unwrap();
    assert_eq!(note, "not converged: CI ±20% after 5 rounds");
    // Few clean samples: the note says how many a figure needs, not only how many of
    // them were clean (18 of 20 reads as plenty).
    let m = r.measured.as_mut().unwrap();
    m.why = vec![Why::FewClean];
    (m.counts.clean, m.counts.total) = (18, 20);
    let note = row_note(&r, 0.02).unwrap();
    assert_eq!(
        note,
        "not converged: 18 of 20 samples clean, below 30 or a tenth: the median of all \
         after 5 rounds"
    );
}

#[test]
fn the_footer_says_when_the_machine_ran_at_another_speed_than_before() {
    let past = |ratio: f64| crate::results::PastMachine {
        runs: 5,
        median_ns: 138.7,
        low_ns: 138.3,
        high_ns: 139.0,
        ratio,
    };
    let slow = past_machine_text(&past(174.9 / 138.7), 174.9);
    assert!(slow.starts_with("the machine ran 26% slower than in its last 5 runs"));
    assert!(slow.contains("getpid 174.9 ns in this run, 138.7 ns in theirs"));
    let fast = past_machine_text(&past(0.9), 124.8);
    assert!(fast.starts_with("the machine ran 10% faster"), "{fast}");
    let same = past_machine_text(&past(1.02), 141.5);
    assert!(same.starts_with("the machine ran at the speed of its last 5 runs"));
}

/// A row rendered from the analysis of `total` samples, `clean` of them clean and
/// the rest with a voluntary switch, over 8 rounds.
fn row(total: usize, clean: usize) -> String {
    let usage = Usage {
        vol_switches: 1,
        ..Usage::default()
    };
    let (a, ok, why) = conclude(&samples(total, clean, 8, usage), Expect::default());
    let e = a.estimate.clone().unwrap();
    let mut m = crate::results::tests::measured_with_median(a.figure());
    m.ci_low_ns = e.ci_low;
    m.ci_high_ns = e.ci_high;
    m.rounds = a.rounds.clone();
    m.counts = a.counts;
    m.clean = a.clean.clone();
    m.raw = a.raw.clone().unwrap();
    m.converged = ok;
    m.why = why;
    m.basis = a.basis;
    let mut r = crate::results::tests::run_with_medians(&[("svc.uring.write", 1.0)])
        .results
        .remove(0);
    r.measured = Some(m);
    Table::new(100).result(&r)
}

/// The half-width in percent printed in a row's CI column.
fn half_width(row: &str) -> f64 {
    let pct = row.split('±').nth(1).unwrap();
    pct.split('%').next().unwrap().parse().unwrap()
}

#[test]
fn a_row_on_too_few_clean_samples_says_so_and_is_not_narrow() {
    for (total, clean) in [(4028, 1), (8, 1), (8, 0), (29, 29), (500, 40)] {
        let text = row(total, clean);
        let first = text.lines().next().unwrap();
        assert!(first.trim_end().ends_with("no"), "{text}");
        assert!(half_width(first) >= 1.0, "{text}");
        assert!(first.contains(&format!("{clean}/{total}")), "{text}");
        assert!(first.contains(" 8 "), "the rounds column: {text}");
        assert!(text.contains("not converged"), "{text}");
        assert!(text.contains("median of all"), "{text}");
        assert!(!text.contains("inf"), "{text}");
        assert!(!text.contains("after 0 rounds"), "{text}");
    }
    // Enough clean samples: the ordinary row, converged.
    let text = row(4028, 4000);
    assert!(
        text.lines().next().unwrap().trim_end().ends_with("yes"),
        "{text}"
    );
}

#[test]
fn ci_is_shown_in_the_medians_unit() {
    assert_eq!(super::ci_text(85.26, 85.31, 85.3), "85.26–85.31 ±0.03%");
    assert_eq!(super::ci_text(1650.0, 1670.0, 1660.0), "1.65–1.67 ±0.6%");
    // However wide, the bounds and the percentage keep to their columns.
    let (range, rel) = super::ci_parts(-548_000.0, 41_111_000.0, 45_680.0);
    assert!(range.chars().count() <= RANGE_W, "{range}");
    assert_eq!(rel, "±>999%");
    assert_eq!(super::ci_parts(1.0, 3.0, 1.0).1, "±100%");
}

#[test]
fn the_header_says_in_plain_words_what_each_kind_is_held_to() {
    use crate::harness::probe::WorkKind;
    let floor = |kind, floor_pct| crate::results::Floor {
        kind,
        probe: String::new(),
        readings: 24,
        median_ns: 1.0,
        spread_pct: 2.0 * floor_pct,
        floor_pct,
        rounds: 8,
        within_pct: None,
        between_pct: None,
        past_runs: None,
    };
    assert_eq!(held_text(&[], 0.005), None, "no floors, no claim");
    let steady = [floor(WorkKind::Syscall, 0.2), floor(WorkKind::User, 0.1)];
    let line = held_text(&steady, 0.005).unwrap();
    assert!(line.contains("steady"), "{line}");
    let moving = [
        floor(WorkKind::Syscall, 20.0),
        floor(WorkKind::User, 0.1),
        floor(WorkKind::Cross, 30.0),
    ];
    let line = held_text(&moving, 0.005).unwrap();
    // √2 × each kind's allowance, widest first; a kind within the profile's target
    // is not named; none of the method's terms.
    assert_eq!(
        line,
        "the machine moves: targets at first ±42% cross-CPU, ±28% syscalls"
    );
    for term in ["floor", "reach", "held to", "√"] {
        assert!(!line.contains(term), "{line}");
    }
}
