use super::*;
use crate::method;
use crate::results::tests::run_with_medians;

fn label(r: &str, run: &Run) -> RunLabel {
    RunLabel::of(r, None, run)
}

/// Sets a result's interval to ±`rel` around its median, from `rounds` rounds.
fn widen(run: &mut Run, name: &str, rel: f64) {
    let m = run
        .results
        .iter_mut()
        .find(|r| r.name == name)
        .and_then(|r| r.measured.as_mut())
        .expect("measured result");
    m.ci_low_ns = m.median_ns * (1.0 - rel);
    m.ci_high_ns = m.median_ns * (1.0 + rel);
}

#[test]
fn the_same_run_is_no_change() {
    let a = run_with_medians(&[("syscall.getpid", 80.0), ("ctx.pingpong", 2800.0)]);
    let c = compare((&label("a", &a), &a), (&label("b", &a), &a), 0.05);
    assert_eq!(c.rows.len(), 2);
    for r in &c.rows {
        assert_eq!(r.ratio, 1.0);
        assert!(r.ci_low < 1.0 && r.ci_high > 1.0, "{r:?}");
        assert_eq!(r.verdict, Verdict::NoChange);
    }
    assert!(c.host_differences.is_empty());
    assert_eq!(
        c.tally(),
        Tally {
            same: 2,
            ..Tally::default()
        }
    );
}

#[test]
fn a_clear_slowdown_and_speedup_are_found() {
    let a = run_with_medians(&[("syscall.getpid", 80.0), ("ctx.pingpong", 2800.0)]);
    let b = run_with_medians(&[("syscall.getpid", 100.0), ("ctx.pingpong", 2000.0)]);
    let c = compare((&label("a", &a), &a), (&label("b", &b), &b), 0.05);
    assert_eq!(c.rows[0].verdict, Verdict::Slower);
    assert!((c.rows[0].ratio - 1.25).abs() < 1e-12);
    assert!(c.rows[0].ci_low > 1.0 && c.rows[0].ci_high > c.rows[0].ratio);
    assert_eq!(c.rows[1].verdict, Verdict::Faster);
    assert_eq!(
        c.tally(),
        Tally {
            faster: 1,
            slower: 1,
            ..Tally::default()
        }
    );
}

#[test]
fn a_significant_change_below_the_threshold_is_no_change() {
    let a = run_with_medians(&[("syscall.getpid", 80.0)]);
    let b = run_with_medians(&[("syscall.getpid", 83.0)]);
    let c = compare((&label("a", &a), &a), (&label("b", &b), &b), 0.05);
    assert!(
        c.rows[0].ci_low > 1.0,
        "3.75% with ±1% intervals is significant"
    );
    assert_eq!(c.rows[0].verdict, Verdict::NoChange);
    let c = compare((&label("a", &a), &a), (&label("b", &b), &b), 0.02);
    assert_eq!(c.rows[0].verdict, Verdict::Slower);
}

#[test]
fn wide_intervals_cannot_tell_a_large_change() {
    let mut a = run_with_medians(&[("syscall.getpid", 80.0)]);
    let mut b = run_with_medians(&[("syscall.getpid", 100.0)]);
    widen(&mut a, "syscall.getpid", 0.4);
    widen(&mut b, "syscall.getpid", 0.4);
    let c = compare((&label("a", &a), &a), (&label("b", &b), &b), 0.05);
    assert!(c.rows[0].ci_low < 1.0);
    assert_eq!(c.rows[0].verdict, Verdict::CannotTell);
    // What these runs could see is far above the 25% they read.
    assert!(
        c.rows[0].smallest_visible.unwrap() > 0.25,
        "{:?}",
        c.rows[0]
    );
}

#[test]
fn the_interval_matches_the_delta_method() {
    // Two runs of 5 rounds with ±1% intervals: the trimmed mean of 5 keeps 3, so
    // se/mean = 0.01/(t(2)·√2) each (the interval holds a rerun), the difference's is
    // √2 times that, and Welch's df for equal variances is 4.
    let a = run_with_medians(&[("x.y", 100.0)]);
    let b = run_with_medians(&[("x.y", 110.0)]);
    let c = compare((&label("a", &a), &a), (&label("b", &b), &b), 0.05);
    assert_eq!(crate::stats::rounds::degrees_of_freedom(5), 2);
    let se = (2.0f64).sqrt() * 0.01 / (t975(2) * method::RERUN);
    let w = t975(4) * se;
    let r = &c.rows[0];
    assert!((r.ci_low - 1.1 * (-w).exp()).abs() < 1e-12, "{r:?}");
    assert!((r.ci_high - 1.1 * w.exp()).abs() < 1e-12, "{r:?}");
}

#[test]
fn an_interval_the_history_set_counts_as_the_runs_spread() {
    // Both ±1%, the history's from five runs (four earlier): se/mean = 0.01/q(5) each,
    // on 4 degrees of freedom; Welch's df for equal variances is 8.
    let mut a = run_with_medians(&[("x.y", 100.0)]);
    let mut b = run_with_medians(&[("x.y", 110.0)]);
    for run in [&mut a, &mut b] {
        let m = run.results[0].measured.as_mut().unwrap();
        m.between_runs = Some(crate::results::BetweenRuns {
            runs: 4,
            sd_ns: m.median_ns * 0.01 / crate::stats::rounds::centre_quantile(5),
            run_ci_low_ns: m.ci_low_ns,
            run_ci_high_ns: m.ci_high_ns,
        });
    }
    let c = compare((&label("a", &a), &a), (&label("b", &b), &b), 0.05);
    let se = (2.0f64).sqrt() * 0.01 / crate::stats::rounds::centre_quantile(5);
    let w = t975(8) * se;
    let r = &c.rows[0];
    assert!((r.ci_low - 1.1 * (-w).exp()).abs() < 1e-12, "{r:?}");
    assert!((r.ci_high - 1.1 * w.exp()).abs() < 1e-12, "{r:?}");
}

#[test]
fn benchmarks_in_one_run_only_are_listed() {
    let a = run_with_medians(&[("a.one", 10.0), ("a.both", 20.0)]);
    let b = run_with_medians(&[("a.both", 20.0), ("a.two", 30.0)]);
    let c = compare((&label("a", &a), &a), (&label("b", &b), &b), 0.05);
    assert_eq!(c.rows.len(), 1);
    assert_eq!(c.only_in_base, ["a.one"]);
    assert_eq!(c.only_in_other, ["a.two"]);
}

#[test]
fn host_differences_are_named() {
    let a = run_with_medians(&[("x.y", 1.0)]);
    let mut b = a.clone();
    b.host.kernel = Some("6.1-other".into());
    b.host.clocksource = Some("hpet".into());
    b.host.vulnerabilities = vec![crate::host::Vulnerability {
        name: "spectre_v2".into(),
        status: "Vulnerable".into(),
    }];
    let d = host_differences(&a, &b);
    let facts: Vec<&str> = d.iter().map(|f| f.fact.as_str()).collect();
    assert_eq!(facts, ["kernel", "clocksource", "mitigation spectre_v2"]);
    assert_eq!(d[2].base, "absent");
}

#[test]
fn the_cross_run_table_is_the_way_round_of_two_runs_with_their_intervals() {
    let a = run_with_medians(&[("x.one", 100.0), ("x.two", 200.0), ("x.three", 50.0)]);
    let b = run_with_medians(&[("x.one", 50.0), ("x.two", 400.0)]);
    let c = run_with_medians(&[("x.one", 25.0), ("x.two", 50.0), ("x.three", 12.5)]);
    let t = table(&[
        (label("a", &a), &a),
        (label("b", &b), &b),
        (label("c", &c), &c),
    ]);
    assert_eq!(t.rows.len(), 3);
    // The way round of two runs compared: B/A, above 1 slower.
    assert_eq!(t.rows[0].ratio, [Some(1.0), Some(0.5), Some(0.25)]);
    assert_eq!(t.rows[2].median_ns[1], None);
    assert_eq!(t.geomean_count, [3, 2, 3]);
    // b: ratios 0.5 and 2 → 1; c: 1/4, 1/4, 1/4 → 1/4.
    assert!((t.geomean_ratio[1].unwrap() - 1.0).abs() < 1e-12);
    assert!((t.geomean_ratio[2].unwrap() - 0.25).abs() < 1e-12);
    // With the interval two runs compared give, the same for the same pair.
    let two = compare((&label("a", &a), &a), (&label("b", &b), &b), 0.05);
    let one = &two.rows[0];
    assert_eq!(t.rows[0].ratio[1], Some(one.ratio));
    assert_eq!(t.rows[0].ci_low[1], Some(one.ci_low));
    assert_eq!(t.rows[0].ci_high[1], Some(one.ci_high));
    assert_eq!(t.rows[0].ci_low[0], None);
    let text = render::table_text(&t);
    assert!(
        text.contains("B/A (95% CI)") && text.contains("C/A"),
        "{text}"
    );
    assert!(
        text.contains("0.50 (0.") && text.contains("above 1 is slower"),
        "{text}"
    );
    let md = render::table_markdown(&t);
    assert_eq!(md.lines().filter(|l| l.starts_with("| x.")).count(), 3);
}

#[test]
fn renderings_carry_every_row_and_the_verdicts() {
    let a = run_with_medians(&[("syscall.getpid", 80.0), ("x|pipe", 10.0)]);
    let b = run_with_medians(&[("syscall.getpid", 100.0), ("x|pipe", 10.0)]);
    let c = compare((&label("a", &a), &a), (&label("b", &b), &b), 0.05);
    let text = render::text(&c);
    assert!(
        text.contains("slower") && text.contains("no change"),
        "{text}"
    );
    assert!(text.contains("1 slower, 0 faster, 1 no change"), "{text}");
    let md = render::markdown(&c);
    assert!(md.contains("**slower**") && md.contains("x\\|pipe"), "{md}");
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["rows"][0]["verdict"], "slower");
}

#[test]
fn a_machine_at_another_speed_is_said() {
    use crate::stats::rounds::State;
    let state = |median_ns: f64, share: f64| State {
        median_ns,
        share,
        count: 1,
    };
    let mut a = run_with_medians(&[("x.y", 100.0)]);
    let mut b = a.clone();
    a.machine.states = vec![state(78.0, 1.0)];
    // Most of run b at 100 ns, but its base state, where its rows were measured,
    // is a's: the same speed for the figures.
    b.machine.states = vec![state(78.0, 0.3), state(100.0, 0.7)];
    let c = compare((&label("a", &a), &a), (&label("b", &b), &b), 0.05);
    assert!(!c.machine.as_ref().unwrap().differs);
    // A base state 15% slower is another speed.
    b.machine.states = vec![state(90.0, 0.8), state(100.0, 0.2)];
    let c = compare((&label("a", &a), &a), (&label("b", &b), &b), 0.05);
    let m = c.machine.as_ref().expect("both runs have canaries");
    assert_eq!(m.other_ns, 90.0);
    assert!(m.differs);
    let t = render::text_at(&c, 100);
    assert!(
        t.contains("getpid canary read")
            && t.contains("not taken for the machine's speed"),
        "{t}"
    );
    assert!(render::markdown(&c).contains("not taken for the machine's speed"));
    b.machine.states = vec![state(79.0, 1.0)];
    let c = compare((&label("a", &a), &a), (&label("b", &b), &b), 0.05);
    assert!(!c.machine.unwrap().differs);
    let none = run_with_medians(&[("x.y", 100.0)]);
    assert!(compare(
        (&label("a", &none), &none),
        (&label("b", &none), &none),
        0.05
    )
    .machine
    .is_none());
}

/// Gives every result of `run` the kind `work` and the canary `ns` before each round.
fn canaries(run: &mut Run, work: crate::harness::probe::WorkKind, ns: f64) {
    for r in &mut run.results {
        let m = r.measured.as_mut().expect("measured");
        m.work = Some(work);
        m.canary = Some(crate::results::Canary {
            before_ns: ns,
            after_ns: ns,
            change: 0.0,
            changed: false,
            rounds_ns: vec![ns; 5],
        });
    }
}

#[test]
fn a_system_call_row_s_canary_is_a_reading_that_never_adjusts_its_change() {
    use crate::harness::probe::WorkKind;
    let mut a = run_with_medians(&[("syscall.getpid", 80.0)]);
    let mut b = run_with_medians(&[("syscall.getpid", 86.0)]);
    canaries(&mut a, WorkKind::Syscall, 75.0);
    // The canary read 8% slower beside b's row: it may be the machine, or the change
    // itself (the canary is a system call). The row's change stays its own.
    canaries(&mut b, WorkKind::Syscall, 81.0);
    let c = compare((&label("a", &a), &a), (&label("b", &b), &b), 0.05);
    let r = &c.rows[0];
    assert!((r.speed.unwrap() - 1.08).abs() < 1e-12, "{r:?}");
    assert!((r.ratio - 86.0 / 80.0).abs() < 1e-12, "{r:?}");
    let t = render::text_at(&c, 200);
    assert!(!t.contains("at equal speed"), "{t}");
    // Work the system-call canary does not follow gets no such reading.
    canaries(&mut a, WorkKind::User, 75.0);
    canaries(&mut b, WorkKind::User, 81.0);
    let c = compare((&label("a", &a), &a), (&label("b", &b), &b), 0.05);
    assert_eq!(c.rows[0].speed, None);
}
