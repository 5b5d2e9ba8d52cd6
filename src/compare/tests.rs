use super::*;
use crate::method;
use crate::results::tests::run_with_medians;
use crate::stats::rounds::t975;

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

/// A side of runs of `x.y` at each of `medians` (±1% intervals), with `labels`.
fn side_of(medians: &[f64], labels: &[&str]) -> Vec<(RunLabel, Run)> {
    medians
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let mut run = run_with_medians(&[("x.y", *m)]);
            run.labels = labels.iter().map(|l| l.to_string()).collect();
            (RunLabel::of(&format!("#{i}"), Some(i as i64), &run), run)
        })
        .collect()
}

fn sides(a: &[(RunLabel, Run)], b: &[(RunLabel, Run)], threshold: f64) -> Comparison {
    let ra: Vec<(&RunLabel, &Run)> = a.iter().map(|(l, r)| (l, r)).collect();
    let rb: Vec<(&RunLabel, &Run)> = b.iter().map(|(l, r)| (l, r)).collect();
    compare_sides(&ra, &rb, threshold)
}

#[test]
fn the_verdict_has_four_answers() {
    // Past the threshold with the interval above 1.
    assert_eq!(verdict(1.2, 1.1, 1.3, 0.05), Verdict::Slower);
    assert_eq!(verdict(0.8, 0.7, 0.9, 0.05), Verdict::Faster);
    // The whole interval within ±5%, even when it excludes 1.
    assert_eq!(verdict(1.02, 1.01, 1.03, 0.05), Verdict::NoChange);
    assert_eq!(verdict(1.0, 0.96, 1.04, 0.05), Verdict::NoChange);
    // Reaching past the threshold on one side: these runs cannot tell.
    assert_eq!(verdict(1.04, 0.99, 1.09, 0.05), Verdict::CannotTell);
    assert_eq!(verdict(1.3, 0.9, 1.8, 0.05), Verdict::CannotTell);
    // Significant but not past the threshold, and reaching past it.
    assert_eq!(verdict(1.04, 1.01, 1.07, 0.05), Verdict::CannotTell);
}

#[test]
fn several_runs_a_side_take_their_spread_between_runs() {
    let a = side_of(&[100.0, 103.0, 97.0], &["base"]);
    let b = side_of(&[130.0, 126.0, 134.0], &["fix"]);
    let c = sides(&a, &b, 0.05);
    let r = &c.rows[0];
    assert_eq!(r.runs, (3, 3));
    assert_eq!(r.verdict, Verdict::Slower);
    // Each side's figure is the geometric mean of its runs.
    let gm =
        |xs: &[f64]| (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp();
    assert!((r.base_ns - gm(&[100.0, 103.0, 97.0])).abs() < 1e-9);
    assert!(
        (r.ratio - gm(&[130.0, 126.0, 134.0]) / gm(&[100.0, 103.0, 97.0])).abs() < 1e-12
    );
    // The interval is from the runs' spread (about 3%), wider than the rounds' ±1%.
    let sd = |xs: &[f64]| {
        let logs: Vec<f64> = xs.iter().map(|x| x.ln()).collect();
        crate::stats::sample_sd(&logs)
    };
    let se = ((sd(&[100.0, 103.0, 97.0]).powi(2) + sd(&[130.0, 126.0, 134.0]).powi(2))
        / 3.0)
        .sqrt();
    let df = 4; // Welch for two sides of three runs with about equal spreads
    let w = (r.ci_high / r.ratio).ln();
    assert!(
        (w / se - crate::stats::rounds::t975(df)).abs() < 0.5,
        "{w} {se}"
    );
    assert_eq!(c.base_runs.len(), 3);
    assert_eq!(c.other_runs.len(), 3);
    // What the runs can see, and what more runs would.
    let seen = r.smallest_visible.unwrap();
    assert!(seen > 0.05 && seen < 0.3, "{seen}");
    let k = r.runs_asked.unwrap();
    assert!(k > 3, "{k}");
    // Labelled sides: no warning about the sides' labels unless the canary moved.
    assert!(
        !c.warnings.iter().any(|w| w.contains("mixes")),
        "{:?}",
        c.warnings
    );
}

#[test]
fn two_sets_of_the_same_runs_are_no_change_or_cannot_tell() {
    let a = side_of(&[100.0, 101.0, 99.0, 100.5], &["x"]);
    let b = side_of(&[100.2, 99.4, 100.8, 99.9], &["y"]);
    let c = sides(&a, &b, 0.05);
    assert_eq!(c.rows[0].verdict, Verdict::NoChange, "{:?}", c.rows[0]);
    // Runs as noisy as the threshold cannot tell.
    let a = side_of(&[100.0, 108.0, 93.0], &["x"]);
    let b = side_of(&[102.0, 94.0, 109.0], &["y"]);
    let c = sides(&a, &b, 0.05);
    assert_eq!(c.rows[0].verdict, Verdict::CannotTell, "{:?}", c.rows[0]);
    assert!(c.rows[0].smallest_visible.unwrap() > 0.05);
}

#[test]
fn a_side_that_mixes_labels_or_holds_an_interrupted_run_is_said() {
    let mut a = side_of(&[100.0, 101.0], &["x"]);
    a[1].0.labels = vec!["z".into()];
    a[1].0.complete = false;
    let b = side_of(&[100.0], &["y"]);
    let c = sides(&a, &b, 0.05);
    let all = c.warnings.join("\n");
    assert!(
        all.contains("side A mixes runs of different labels (x / z)"),
        "{all}"
    );
    assert!(
        all.contains("side A holds 1 run that did not finish (#1)"),
        "{all}"
    );
    // One run a side says what more runs buy.
    let c = sides(&a[..1], &b, 0.05);
    assert!(
        c.warnings.iter().any(|w| w.contains("one run a side")),
        "{:?}",
        c.warnings
    );
    let t = render::text_at(&c, 100);
    assert!(t.lines().all(|l| l.chars().count() <= 100), "{t}");
    assert!(t.contains("cannot tell") || t.contains("no change"), "{t}");
}

#[test]
fn a_canary_moved_by_the_change_is_named_and_never_taken_for_the_machine() {
    use crate::stats::rounds::State;
    let state = |median_ns: f64| State {
        median_ns,
        share: 1.0,
        count: 1,
    };
    let mut a = side_of(&[100.0, 101.0], &["filter=off"]);
    let mut b = side_of(&[140.0, 141.0], &["filter=on"]);
    for (_, r) in &mut a {
        r.machine.states = vec![state(80.0)];
    }
    for (_, r) in &mut b {
        r.machine.states = vec![state(120.0)];
    }
    let c = sides(&a, &b, 0.05);
    assert_eq!(c.rows[0].verdict, Verdict::Slower);
    let w = c.warnings.join("\n");
    assert!(
        w.contains("+50.0%") && w.contains("is itself a system call"),
        "{w}"
    );
    assert!(
        w.contains("the sides' labels differ (filter=off in A, filter=on in B)"),
        "{w}"
    );
    // Nothing in the table divides the change by the canary.
    let t = render::text_at(&c, 100);
    assert!(t.contains("+39.8%") || t.contains("+40.0%"), "{t}");
}

/// Two runs of rows with long parameter names, as the catalogue's are (`ctx.pingpong`
/// with four parameters, `mem.fault.zero` with five), some B slower, one with an
/// interval wide enough to reach 1e17.
fn long_keyed_runs() -> (Run, Run) {
    let names = [
        ("call.empty", 1.3),
        ("syscall.getpid", 80.0),
        ("ctx.pingpong", 14_820.0),
        ("mem.fault.zero", 1_230.0),
        ("ipc.rtt", 9_000.0),
    ];
    let mut a = run_with_medians(&names);
    let mut b = run_with_medians(&names);
    let params: [&[(&str, &str)]; 5] = [
        &[],
        &[("via", "libc")],
        &[
            ("fpu", "clean"),
            ("kind", "process"),
            ("mechanism", "eventfd"),
            ("placement", "cross-cpu"),
        ],
        &[
            ("access", "write"),
            ("page", "4k"),
            ("prefault", "none"),
            ("size", "8388608"),
            ("unmap", "untimed"),
            ("hugepage_fallback", "split-and-retry-with-small-pages"),
        ],
        &[
            ("placement", "same-cpu"),
            ("priority", "0:0"),
            ("size", "65536"),
            ("transport", "unix_stream"),
        ],
    ];
    for run in [&mut a, &mut b] {
        for (r, p) in run.results.iter_mut().zip(params) {
            r.params = p
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        }
    }
    let m = b.results[2].measured.as_mut().unwrap();
    m.median_ns *= 11.0;
    m.ci_low_ns = m.median_ns * 1e-3;
    m.ci_high_ns = m.median_ns * 1e17;
    (a, b)
}

#[test]
fn a_comparison_with_long_parameters_is_one_table_within_the_width() {
    let (a, b) = long_keyed_runs();
    let c = compare((&label("last~1", &a), &a), (&label("last", &b), &b), 0.05);
    for width in [100, 80] {
        let t = render::text_at(&c, width);
        let wide: Vec<&str> = t.lines().filter(|l| l.chars().count() > width).collect();
        assert!(wide.is_empty(), "wider than {width}: {wide:?}\n{t}");
        // One table: one header, every name whole (a long one on its own line, above
        // its figures), every row's verdict.
        let heads = t.lines().filter(|l| l.starts_with("benchmark")).count();
        assert_eq!(heads, 1, "{width}:\n{t}");
        let flat = t.split_whitespace().collect::<Vec<_>>().join(" ");
        for r in &c.rows {
            let key = key_of(&r.name, &r.params);
            assert!(flat.contains(&key), "{width}: {key} cut:\n{t}");
        }
        let table = &t[..t.find(" compared: ").unwrap()];
        let verdicts = ["slower", "faster", "no change", "cannot tell"];
        let rows = table
            .lines()
            .filter(|l| verdicts.iter().any(|v| l.contains(v)))
            .count();
        assert_eq!(rows, c.rows.len(), "{width}:\n{t}");
        assert!(!t.contains('…'), "{width}: cut:\n{t}");
    }
    // Narrower than the figures: their columns wrap into blocks, still within the width.
    let t = render::text_at(&c, 60);
    assert!(t.lines().all(|l| l.chars().count() <= 60), "{t}");
    // At 100 the short names stay in their column, beside their figures.
    let t = render::text_at(&c, 100);
    let row = t
        .lines()
        .find(|l| l.starts_with("syscall.getpid via=libc"))
        .unwrap();
    assert!(row.contains("80.0 ns"), "{t}");
    let long =
        "ctx.pingpong fpu=clean kind=process mechanism=eventfd placement=cross-cpu";
    let i = t
        .lines()
        .position(|l| l == long)
        .expect("a line of its own");
    let figures = t.lines().nth(i + 1).unwrap();
    assert!(
        figures.starts_with(' ') && figures.contains("14.82 µs"),
        "{t}"
    );
}
