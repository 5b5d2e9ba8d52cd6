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
        serde_json::to_writer_pretty(&mut out, &doc)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let opt = |v: Option<f64>| v.map(fmt_ns).unwrap_or_else(|| "-".into());
    writeln!(
        out,
        "{:<26} {:>14} {:>14} {:>12}",
        "clock", "claimed res", "granularity", "cost/read"
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
    writeln!(
        out,
        "\nharness clock: {} — {}\n  granularity {}, {} per read (measured in a loop of reads)",
        info.name,
        info.why,
        fmt_ns(info.granularity_ns),
        fmt_ns(info.read_cost_ns)
    )?;
    writeln!(
        out,
        "claimed res: clock_getres (for gettimeofday and time, their units); granularity: the \
         smallest step seen between successive reads; cost/read: harness median."
    )?;
    Ok(ExitCode::SUCCESS)
}
