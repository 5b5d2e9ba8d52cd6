use super::*;
use crate::harness::analyze::{Accounting, Counts};

/// A measured result with only its median filled in, for exporter tests.
pub(crate) fn measured_with_median(median_ns: f64) -> Measured {
    let summary = crate::stats::summarize(&[median_ns]).expect("one value");
    Measured {
        median_ns,
        ci_low_ns: median_ns,
        ci_high_ns: median_ns,
        rounds: vec![],
        round_sd_ns: 0.0,
        round_spread: 0.0,
        states: vec![],
        clean: Some(summary.clone()),
        raw: summary,
        counts: Counts::default(),
        batch: 1,
        operations: 1,
        overhead: Overhead {
            subtracted: true,
            ..Overhead::default()
        },
        accounting: Accounting::default(),
        converged: true,
        stop_reason: String::new(),
        why: vec![],
        interval_source: None,
        levels: vec![],
        modes: vec![],
        canary: None,
        warmup_ns: 0.0,
        elapsed_ns: 0.0,
        setup_ns: 0.0,
        after_ns: 0.0,
        samples: None,
        between_runs: None,
        copies: None,
        kernel: None,
        basis: Default::default(),
        worker_peak_kib: None,
        worker_processes: 0,
        rounds_redone: 0,
        slow_state_pct: None,
        work: None,
        target_pct: None,
        floor_pct: None,
        own_ci_low_ns: None,
        own_ci_high_ns: None,
        paired: None,
    }
}

/// A complete run on host `testhost`, kernel `6.0-test`, profile quick, with one
/// measured result per `(name, median)` (five rounds at the median, a ±1% interval).
pub(crate) fn run_with_medians(results: &[(&str, f64)]) -> Run {
    let host = HostFacts {
        hostname: Some("testhost".into()),
        kernel: Some("6.0-test".into()),
        ..HostFacts::default()
    };
    Run {
        version: "0.0.0".into(),
        command_line: vec!["syscost".into(), "run".into()],
        started_unix_s: 1.7e9,
        harness: HarnessInfo {
            profile: "quick".into(),
            ..HarnessInfo::default()
        },
        complete: true,
        results: results
            .iter()
            .map(|&(name, m)| {
                let mut measured = measured_with_median(m);
                measured.ci_low_ns = m * 0.99;
                measured.ci_high_ns = m * 1.01;
                measured.rounds = (0..5)
                    .map(|i| RoundFigure {
                        round: i,
                        start_ns: 0.0,
                        median_ns: Some(m),
                        clean: 1,
                        total: 1,
                    })
                    .collect();
                BenchResult {
                    name: name.into(),
                    params: BTreeMap::new(),
                    entry: None,
                    op: "call".into(),
                    unit: "ns".into(),
                    status: Status::Ok,
                    reason: None,
                    measured: Some(measured),
                    facts: vec![],
                    explain: None,
                }
            })
            .collect(),
        ..Run::new(host, std::time::UNIX_EPOCH)
    }
}

#[test]
fn results_go_in_catalogue_order_each_benchmarks_rows_kept_in_theirs() {
    let mut run = run_with_medians(&[
        ("syscall.getppid", 1.0),
        ("nosuch.bench", 2.0),
        ("syscall.getpid", 3.0),
        ("call.empty", 4.0),
        ("syscall.getpid", 5.0),
    ]);
    in_catalogue_order(&mut run.results);
    let order: Vec<(&str, f64)> = run
        .results
        .iter()
        .map(|r| (r.name.as_str(), r.measured.as_ref().unwrap().median_ns))
        .collect();
    assert_eq!(
        order,
        [
            ("call.empty", 4.0),
            ("syscall.getpid", 3.0),
            ("syscall.getpid", 5.0),
            ("syscall.getppid", 1.0),
            ("nosuch.bench", 2.0),
        ]
    );
}

#[test]
fn unix_times_read_as_utc_dates() {
    assert_eq!(fmt_unix_time(0.0), "1970-01-01 00:00 UTC");
    assert_eq!(fmt_unix_time(951_782_400.0), "2000-02-29 00:00 UTC");
    assert_eq!(fmt_unix_time(1_795_398_420.0), "2026-11-23 01:47 UTC");
    assert_eq!(fmt_unix_time(f64::NAN), "unknown time");
    assert_eq!(fmt_unix_time(-5.0), "unknown time");
}

#[test]
fn ns_formatting_picks_units() {
    assert_eq!(fmt_ns(3.456), "3.46 ns");
    assert_eq!(fmt_ns(104.94), "104.9 ns");
    assert_eq!(fmt_ns(22_252.75), "22.25 µs");
    assert_eq!(fmt_ns(73_136_770.0), "73.14 ms");
    assert_eq!(fmt_ns(f64::NAN), "-");
}

#[test]
fn levels_read_like_a_sentence() {
    let l = |m: f64, s: f64, d: f64| Level {
        median_ns: m,
        start_ns: s,
        duration_ns: d,
        samples: 10,
    };
    assert_eq!(describe_levels(&[l(129.0, 0.0, 4.1e9)]), None);
    assert_eq!(
        describe_levels(&[l(129.0, 0.0, 4.1e9), l(105.0, 4.1e9, 2e9)]).unwrap(),
        "two levels: 129.0 ns for 4.1 s, then 105.0 ns"
    );
    let alternating: Vec<Level> = (0..5)
        .map(|i| l([129.0, 105.0][i % 2], i as f64, 1.0))
        .collect();
    assert_eq!(describe_levels(&alternating), None);
}

#[test]
fn a_machine_interval_names_its_two_parts() {
    let mut m = measured_with_median(100.0);
    (m.ci_low_ns, m.ci_high_ns) = (90.0, 110.0);
    (m.own_ci_low_ns, m.own_ci_high_ns) = (Some(99.0), Some(101.0));
    m.floor_pct = Some(9.95);
    m.target_pct = Some(14.07);
    m.interval_source = Some(crate::harness::Source::Machine);
    let text = m.verdict_text();
    assert!(
        text.starts_with("±10.00% after 0 rounds, target ±14.07% (width set by its rounds, ±1.00%, and what the machine allows its kind of work, ±9.95%)"),
        "{text}"
    );
    m.interval_source = Some(crate::harness::Source::Rounds);
    assert!(
        m.verdict_text().ends_with("(width set by its rounds)"),
        "{}",
        m.verdict_text()
    );
}
