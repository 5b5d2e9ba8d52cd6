//! The table at 100 and 80 columns, for the rows `syscost run syscall ctx.pingpong`
//! selects (the longest ping-pong labels among them): every row's `±` stands at one
//! column and no line, notes and summary included, is wider than the terminal.

use super::layout::RowKey;
use super::table::Table;
use super::Exporter;
use crate::results::tests::run_with_medians;
use crate::results::{BenchResult, Run, Status};

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
        *r = BenchResult {
            params: RowKey::planned(*b, p).params,
            ..r.clone()
        };
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
    let mut t = Table::new(width);
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
    // The rows: the lines that end in the converged column.
    let rows: Vec<&str> = text
        .lines()
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
