//! `syscost clocks`: every clock a program can read, with the resolution the kernel
//! claims, the smallest step actually seen, and the cost of one read measured by the
//! harness; then which clock the harness itself uses and why (1999 §2).

use crate::bench::clock::{ClockKind, ClockRead, CLOCKS};
use crate::bench::Bench;
use crate::harness::Profile;
use crate::os::interrupt::InterruptGuard;
use crate::results::fmt_ns;
use crate::session::{Session, SessionOptions};
use serde::Serialize;
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// One clock's figures.
#[derive(Debug, Serialize)]
struct ClockRow {
    clock: &'static str,
    benchmark: &'static str,
    available: bool,
    claimed_resolution_ns: Option<f64>,
    granularity_ns: Option<f64>,
    read_cost_ns: Option<f64>,
}

/// The smallest non-zero step between successive reads, in the clock's units, watching
/// for at most `budget`.
fn smallest_step(kind: ClockKind, budget: Duration) -> Option<u64> {
    let start = Instant::now();
    let mut best: Option<u64> = None;
    let mut changes = 0;
    let mut prev = kind.read();
    while changes < 1000 && start.elapsed() < budget {
        for _ in 0..64 {
            let t = kind.read();
            if t != prev {
                let d = t.wrapping_sub(prev);
                best = Some(best.map_or(d, |b| b.min(d)));
                changes += 1;
            }
            prev = t;
        }
    }
    best
}

/// The harness clock's lines: its step under the name and in the form a run's header
/// gives it (`clock tsc (10.0 ns steps, ...)`), the step that bounds every figure; then
/// its read to read and its cost per read.
fn harness_clock_text(info: &crate::harness::clock::ClockInfo) -> String {
    format!(
        "harness clock: {} — {}\n  steps: the step a duration is known to, which bounds \
         every figure (run headers give the same); per read: a loop of reads; {} read to \
         read",
        crate::report::table::clock_text(info),
        info.why,
        fmt_ns(info.granularity_ns)
    )
}

/// Runs `syscost clocks`.
pub fn clocks(json: bool) -> anyhow::Result<ExitCode> {
    let facts = crate::host::collect(&[]);
    let _guard = InterruptGuard::install()?;
    let session =
        Session::start(SessionOptions::new(Profile::QUICK, facts.invariant_tsc))?;
    // The session's clock is the calibrated TSC when the TSC is usable; otherwise rdtsc
    // ticks have no known length and their granularity is not converted.
    let info = session.clock_info().clone();
    let tsc_ns = if info.name == "tsc" {
        info.ns_per_tick
    } else {
        f64::NAN
    };
    let mut rows = Vec::new();
    for entry in CLOCKS {
        let kind = entry.kind;
        let available = kind.available();
        let budget = if kind == ClockKind::Time { 1100 } else { 150 };
        let step = available
            .then(|| smallest_step(kind, Duration::from_millis(budget)))
            .flatten();
        let cost = if available {
            let r = session.run(&ClockRead(entry), &Default::default())?;
            r.median_ns()
        } else {
            None
        };
        rows.push(ClockRow {
            clock: entry.label,
            benchmark: ClockRead(entry).name(),
            available,
            claimed_resolution_ns: kind.claimed_resolution_ns(),
            granularity_ns: step.map(|s| s as f64 * kind.ns_per_unit(tsc_ns)),
            read_cost_ns: cost,
        });
    }
    let mut out = crate::report::stdout();
    if json {
        let doc = serde_json::json!({ "clocks": rows, "harness_clock": info });
        super::write_json(&mut out, &doc)?;
        return Ok(ExitCode::SUCCESS);
    }
    let opt = |v: Option<f64>| v.map(fmt_ns).unwrap_or_else(|| "-".into());
    writeln!(
        out,
        "{:<26} {:>14} {:>14} {:>12}",
        "clock", "claimed res", "read to read", "cost/read"
    )?;
    for r in &rows {
        if !r.available {
            writeln!(out, "{:<26} not available", r.clock)?;
            continue;
        }
        writeln!(
            out,
            "{:<26} {:>14} {:>14} {:>12}",
            r.clock,
            opt(r.claimed_resolution_ns),
            opt(r.granularity_ns),
            opt(r.read_cost_ns)
        )?;
    }
    writeln!(out, "\n{}", harness_clock_text(&info))?;
    writeln!(
        out,
        "claimed res: clock_getres (for gettimeofday and time, their units); read to read: the \
         smallest difference seen between successive reads (a read can last longer than the \
         clock's step); cost/read: harness median."
    )?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::clock::ClockInfo;

    #[test]
    fn the_harness_clock_step_is_named_as_the_run_header_names_it() {
        let info = ClockInfo {
            name: "tsc".into(),
            why: "invariant TSC".into(),
            ns_per_tick: 0.385,
            granularity_ns: 20.0,
            resolution_ns: 10.0,
            read_cost_ns: 24.4,
        };
        let text = harness_clock_text(&info);
        assert!(text.contains("10.0 ns steps"), "{text}");
        assert!(text.contains("24.4 ns per read"), "{text}");
        assert!(!text.contains("granularity"), "{text}");
        // The run's header names it with the same words.
        let header = crate::report::table::clock_text(&info);
        assert!(text.contains(&header), "{text}");
    }
}
