//! The table at 100 and 80 columns, for the rows `syscost run syscall ctx.pingpong`
//! selects (the longest ping-pong labels among them): every row's `±` stands at one
//! column and no line, notes and summary included, is wider than the terminal; the
//! same with every note (`--verbose`), and the ring and scaling tables.

use super::layout::RowKey;
use super::table::Table;
use super::Exporter;
use crate::results::tests::run_with_medians;
use crate::results::{Run, Status};

/// The rows of `syscost run syscall ctx.pingpong`, measured with medians from a few ns
/// to tens of µs, some with wide intervals, unconverged with long reasons, or skipped.
fn run() -> Run {
    let plan = crate::cli::run::plan(&["syscall".into(), "ctx.pingpong".into()], &[])
        .expect("a valid selection");
    let medians: Vec<(&str, f64)> = plan
        .iter()
        .enumerate()
        .map(|(i, (b, _))| (b.name(), [3.2, 85.25, 1234.5, 45678.9, 999.99][i % 5]))
        .collect();
    let mut run = run_with_medians(&medians);
    for (i, (r, (b, p))) in run.results.iter_mut().zip(&plan).enumerate() {
        r.params = RowKey::planned(*b, p).params;
        let m = r.measured.as_mut().expect("measured");
        match i % 7 {
            1 => {
                // A wide interval, and a note long enough to wrap.
                m.ci_low_ns = m.median_ns * 0.05;
                m.ci_high_ns = m.median_ns * 3.5;
                m.converged = false;
                m.stop_reason = "the run's time budget (100 s for the standard profile) \
                    ended; its rounds spread so that the interval would reach the target \
                    after about 40 rounds, more than the cap of 24"
                    .into();
            }
            3 => {
                m.ci_low_ns = -m.median_ns * 12.0;
                m.ci_high_ns = m.median_ns * 900.0;
            }
            _ => {}
        }
        if i == 5 {
            r.status = Status::Skipped;
            r.measured = None;
            r.reason = Some(
                "the kernel refuses this here (EPERM: an unprivileged user may not set \
                 a real-time priority); run as root or give CAP_SYS_NICE"
                    .into(),
            );
        }
    }
    run
}

fn render(width: usize, run: &Run) -> String {
    render_with(width, run, false)
}

fn render_with(width: usize, run: &Run, verbose: bool) -> String {
    let mut t = Table::new(width);
    t.verbose(verbose);
    let keys: Vec<RowKey> = run.results.iter().map(RowKey::of).collect();
    t.plan(&keys);
    let mut s = t.header(run);
    for r in &run.results {
        s += &t.result(r);
    }
    s + &t.footer(run)
}

fn check(width: usize) {
    let run = run();
    let text = render(width, &run);
    for line in text.lines() {
        assert!(
            line.chars().count() <= width,
            "a line wider than {width}: {line}\n{text}"
        );
    }
    // The rows: the lines before the footer that end in the converged column (the
    // summary's may too, once it wraps).
    let rows: Vec<&str> = text
        .lines()
        .take_while(|l| !l.contains(" results: "))
        .filter(|l| l.ends_with(" yes") || l.ends_with(" no"))
        .collect();
    let measured = run.results.iter().filter(|r| r.measured.is_some()).count();
    assert_eq!(rows.len(), measured, "{text}");
    let columns: std::collections::BTreeSet<usize> = rows
        .iter()
        .map(|l| l.chars().position(|c| c == '±').expect("every row has a ±"))
        .collect();
    assert_eq!(columns.len(), 1, "± at columns {columns:?}\n{text}");
    // The defaults are not in the rows, and the group headers say them once.
    assert!(!text.contains("fpu=clean kind=process mechanism"), "{text}");
    assert_eq!(
        text.matches("ctx.pingpong: mechanism placement").count(),
        1,
        "{text}"
    );
    assert!(text.contains("Summary"), "{text}");
    assert!(text.contains("null system call"), "{text}");
}

#[test]
fn at_100_columns_every_row_lines_up_and_nothing_is_wider() {
    check(100);
    let text = render(100, &run());
    assert!(text.contains(" min "), "every column at 100: {text}");
}

#[test]
fn at_80_columns_every_row_lines_up_and_nothing_is_wider() {
    check(80);
}

#[test]
fn at_60_columns_names_are_shortened_and_still_line_up() {
    check(60);
}

#[test]
fn with_every_note_no_line_is_wider_either() {
    for width in [100, 80, 60] {
        let text = render_with(width, &run(), true);
        for line in text.lines() {
            assert!(
                line.chars().count() <= width,
                "wider than {width}: {line}\n{text}"
            );
        }
    }
}

#[test]
fn the_ring_and_scaling_tables_wrap_to_the_width() {
    use crate::results::{RingRow, RingTable};
    let row = |n: u64| RingRow {
        n,
        per_hop_ns: 4_210.0,
        ci_low_ns: 4_100.0,
        ci_high_ns: 4_300.0,
        real_us_per_pass: 1_107.4,
        cpu_us_per_pass: 868.3,
        user_us_per_pass: 446.6,
        sys_us_per_pass: 421.6,
        projected_us_per_pass: 442.2,
        cpu_over_projected: 1.62,
        vol_per_hop: 1.0,
        invol_per_hop: 0.4,
        switch_ns: 3_530.0,
    };
    let t = RingTable {
        name: "ctx.ring".into(),
        fixed: [
            ("kind".to_string(), "process".to_string()),
            ("placement".to_string(), "same-cpu".to_string()),
        ]
        .into(),
        rows: vec![row(2), row(64), row(1024)],
        knee_n: Some(64),
        knee_threshold: 0.2,
        growth_exponent: Some(1.23),
        growth_r2: Some(0.956),
    };
    for width in [100, 80, 60, 40] {
        let text = super::ring::render(&t, width);
        for line in text.lines() {
            assert!(
                line.chars().count() <= width,
                "wider than {width}: {line}\n{text}"
            );
        }
        // Every column is still there, in a block of its own if need be, and each
        // block repeats n.
        for col in ["per hop", "cpu/proj", "hop−pipe"] {
            assert!(text.contains(col), "{col} at {width}:\n{text}");
        }
        // The user/sys columns say what their split is.
        assert!(
            text.contains("user µs, sys µs: the kernel measures"),
            "{text}"
        );
        let blocks = text
            .lines()
            .filter(|l| l.trim_start().starts_with("n "))
            .count();
        assert_eq!(blocks > 1, width < 100, "{width}:\n{text}");
        assert_eq!(
            text.lines()
                .filter(|l| l.trim_start().starts_with("1024"))
                .count(),
            blocks,
            "{text}"
        );
    }
}
