//! Snapshot tests of the line-oriented formats: the whole text of a small run with a
//! measured result, a skip and a failure, compared line by line; the table both as it
//! is by default (one line a row) and with `--verbose` (every note beneath a row).

use super::{csv::Csv, markdown::Markdown, table::Table, Exporter};
use crate::harness::analyze::KernelCull;
use crate::results::tests::run_with_medians;
use crate::results::{Run, Status};

/// The run every snapshot renders: getpid measured (culled by kernel events, one
/// round spread noted), a skip and a failure with their reasons.
fn run() -> Run {
    let mut run = run_with_medians(&[("syscall.getpid", 85.25)]);
    run.clock.name = "tsc".into();
    run.clock.granularity_ns = 9.5;
    run.clock.read_cost_ns = 20.0;
    run.harness.ci_target = 0.01;
    run.harness.kernel_events = Some("perf tracepoints on every CPU".into());
    {
        let m = run.results[0].measured.as_mut().expect("measured");
        m.counts.total = 400;
        m.counts.clean = 380;
        m.counts.mad = 12;
        m.counts.perturbed = 8;
        m.kernel = Some(KernelCull {
            samples: 400,
            culled: 6,
            by_cause: [("timer".to_string(), 5), ("switch".to_string(), 1)]
                .into_iter()
                .collect(),
            culled_median_ns: Some(97.0),
            rusage_median_ns: Some(85.4),
            clean_median_ns: Some(85.25),
        });
    }
    run.results[0].params.insert("via".into(), "libc".into());
    for (name, status, reason) in [
        ("svc.mq.send", Status::Skipped, "no /dev/mqueue here"),
        (
            "proc.fork",
            Status::Failed,
            "fork: Resource temporarily unavailable",
        ),
    ] {
        let mut r = run_with_medians(&[(name, 1.0)]).results.remove(0);
        (r.status, r.reason, r.measured) = (status, Some(reason.into()), None);
        run.results.push(r);
    }
    run
}

fn render(e: &mut dyn Exporter, run: &Run) -> String {
    let mut s = e.header(run);
    for r in &run.results {
        s += &e.result(r);
    }
    s + &e.footer(run)
}

/// Compares line by line, so a failure names the first line that differs.
fn assert_same(got: &str, want: &str) {
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        assert_eq!(g, w, "line {} differs\n--- got:\n{got}", i + 1);
    }
    assert_eq!(
        got.lines().count(),
        want.lines().count(),
        "line count differs\n--- got:\n{got}"
    );
}

#[test]
fn the_table_of_a_small_run() {
    let got = render(&mut Table::new(100), &run());
    assert_same(&got, TABLE);
}

#[test]
fn the_table_of_a_small_run_with_every_note() {
    let mut t = Table::new(100);
    t.verbose(true);
    let got = render(&mut t, &run());
    assert_same(&got, TABLE_VERBOSE);
}

#[test]
fn the_markdown_of_a_small_run() {
    let got = render(&mut Markdown::default(), &run());
    assert_same(&got, MARKDOWN);
}

#[test]
fn the_csv_of_a_small_run_has_a_row_per_result_with_every_field() {
    let got = render(&mut Csv, &run());
    let rows: Vec<Vec<String>> = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(got.as_bytes())
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect();
    assert_eq!(rows.len(), 4, "a header and three rows");
    let width = rows[0].len();
    for r in &rows {
        assert_eq!(r.len(), width, "{r:?}");
    }
    let col = |name: &str| rows[0].iter().position(|c| c == name).expect(name);
    assert_eq!(rows[1][col("name")], "syscall.getpid");
    assert_eq!(rows[1][col("status")], "ok");
    assert_eq!(rows[1][col("median_ns")].parse::<f64>().unwrap(), 85.25);
    assert_eq!(rows[2][col("status")], "skipped");
    assert_eq!(rows[2][col("reason")], "no /dev/mqueue here");
    assert_eq!(rows[3][col("status")], "failed");
    assert_eq!(rows[3][col("median_ns")], "");
}

const TABLE: &str = r#"tsc clock, 9.5 ns steps · profile quick (target ±1.0%)
benchmark                   figure        95% CI ±%      rnds     samples outl pert target conv
syscall.getpid             85.2 ns   84.40–86.10 ±1.0%      5     380/400   12    8  ±1.0%  yes
svc.mq.send              skipped: no /dev/mqueue here
proc.fork                FAILED: fork: Resource temporarily unavailable

3 results: 1 measured (0 not converged), 1 skipped, 1 failed
figure: per operation, trimmed mean of the round medians; 95% CI, ±%: where a rerun's figure lands;
  outl, pert: samples left out; target: the ±% the row was held to; conv: reached it. -v: every
  note; docs/method.md: how a figure is made.
--cull kernel: pert also counts samples during which the kernel's events (a clock or other
  interrupt, a switch, a fault, a migration) show it did something the operation does not do.
Left out to fit 100 columns: min (in a wider terminal, and in every other format).
"#;
const TABLE_VERBOSE: &str = r#"clock tsc (9.5 ns steps, 20.0 ns per read) · profile quick (target ±1.0%)
benchmark                   figure        95% CI ±%      rnds     samples outl pert target conv
syscall.getpid             85.2 ns   84.40–86.10 ±1.0%      5     380/400   12    8  ±1.0%  yes
    kernel events culled 6 of 400 samples (1 switch, 5 timer); clean median 85.2 ns (by rusage alone
      85.4 ns), culled samples' median 97.0 ns
svc.mq.send              skipped: no /dev/mqueue here
proc.fork                FAILED: fork: Resource temporarily unavailable

3 results: 1 measured (0 not converged), 1 skipped, 1 failed
figure: per operation, empty-loop overhead subtracted: the 20% trimmed mean over rounds of each
  round's median of its clean samples (no outlier, no switch or fault); a sample is one batch's
  mean.
95% CI: where a rerun's figure lands, 95 times in 100: Yuen's interval over the round medians, √2
  wider than the mean's, and what the machine allows its kind, together (from a row's third saved
  run, the spread of its runs; the note says which set it); ±%: its half-width in percent of the
  figure.
outl: MAD outliers within their round; pert: samples with a switch or fault; rnds: rounds; target:
  the half-width the row was held to, the profile's or √2 × what the machine allows its kind,
  whichever is larger; conv: converged, its interval within it.
A result with fewer than 30 clean samples (or fewer than a tenth clean) is never converged: its
  median is that of all its samples, perturbed included, as its note says.
--cull kernel: pert also counts samples during which the kernel's events (a clock or other
  interrupt, a switch, a fault, a migration) show it did something the operation does not do.
Left out to fit 100 columns: min (in a wider terminal, and in every other format).
"#;
const MARKDOWN: &str = r#"clock: tsc (9.5 ns steps) · profile: quick

| benchmark | params | median | 95% CI (over rounds) | samples (clean/all) | converged |
|---|---|--:|--:|--:|:-:|
| syscall.getpid | via=libc | 85.2 ns | 84.4 ns – 86.1 ns | 380/400 | yes |
| svc.mq.send |  | skipped: no /dev/mqueue here |  |  |  |
| proc.fork |  | failed: fork: Resource temporarily unavailable |  |  |  |
"#;
