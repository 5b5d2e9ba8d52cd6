//! `syscost repro sloan1992`: the pipeline benchmark on this machine in the paper's
//! columns, beside the nine systems of its Appendix 1.
//!
//! ctx.ring runs with processes for the paper's counts, pinned to one CPU and then
//! placed freely. Each system, the paper's and ours, gets one comparison row: µs per
//! hop at n=2, CPU/Projected at its largest n, the knee, and the growth exponent.

use super::sloan1992_data::{System, SYSTEMS};
use super::Options;
use crate::bench::{self, params, Params};
use crate::derived::ring::{self, KNEE_THRESHOLD};
use crate::error::BenchError;
use crate::os::interrupt::{interrupted, InterruptGuard};
use crate::results::{fmt_ns, RingTable};
use crate::session::Session;
use std::io::Write;
use std::process::ExitCode;

/// The paper's process counts (the largest set any system ran).
pub const COUNTS: &[u32] = &[2, 4, 8, 10, 16, 20, 32, 48, 64];

/// One comparison row.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// µs per hop at n=2.
    pub per_hop_us_at_2: f64,
    /// The largest n.
    pub largest_n: u32,
    /// CPU over projected at the largest n.
    pub cpu_over_projected: f64,
    /// Where the per-hop cost first exceeds the trend, if anywhere.
    pub knee_n: Option<u32>,
    /// The exponent of CPU time per pass against n.
    pub growth: Option<f64>,
}

/// The comparison row of one of the paper's systems (CPU time per hop).
pub fn paper_summary(s: &System) -> Summary {
    let per_hop: Vec<(f64, f64)> = s
        .rows
        .iter()
        .map(|r| (r.processes as f64, r.cpu_us_per_switch()))
        .collect();
    let per_pass: Vec<(f64, f64)> = s
        .rows
        .iter()
        .map(|r| (r.processes as f64, r.cpu_s))
        .collect();
    let largest = s.largest();
    Summary {
        per_hop_us_at_2: s.row(2).map_or(f64::NAN, |r| r.cpu_us_per_switch()),
        largest_n: largest.processes,
        cpu_over_projected: largest.cpu_over_projected(),
        knee_n: ring::knee(&per_hop, KNEE_THRESHOLD).map(|i| s.rows[i].processes),
        growth: ring::growth(&per_pass).map(|g| g.0),
    }
}

/// The comparison row of a ring table measured here.
pub fn our_summary(t: &RingTable) -> Option<Summary> {
    let first = t.rows.first()?;
    let last = t.rows.last()?;
    Some(Summary {
        per_hop_us_at_2: if first.n == 2 {
            first.per_hop_ns / 1e3
        } else {
            f64::NAN
        },
        largest_n: last.n as u32,
        cpu_over_projected: last.cpu_over_projected,
        knee_n: t.knee_n.map(|n| n as u32),
        growth: t.growth_exponent,
    })
}

fn row(label: &str, s: &Summary) -> String {
    format!(
        "{label:<52} {:>10.2} {:>6} {:>9.2} {:>8} {:>7}",
        s.per_hop_us_at_2,
        s.largest_n,
        s.cpu_over_projected,
        s.knee_n.map_or("none".to_string(), |n| format!("n={n}")),
        s.growth.map_or("-".to_string(), |g| format!("{g:.2}")),
    )
}

fn measure(session: &Session, placement: &str) -> Result<Option<RingTable>, BenchError> {
    let b = bench::find("ctx.ring")
        .ok_or_else(|| BenchError::Failed("no ctx.ring".into()))?;
    let counts: Vec<String> = COUNTS.iter().map(|n| n.to_string()).collect();
    let arg = |name: &str, values: Vec<String>| params::ParamArg {
        name: name.into(),
        values,
    };
    let args = [
        arg("n", counts),
        arg("placement", vec![placement.into()]),
        arg("kind", vec!["process".into()]),
    ];
    let sets = params::expand(b.name(), b.params(), &args)
        .map_err(|e| BenchError::Failed(e.to_string()))?;
    let mut results = Vec::new();
    for p in sets {
        let r = session.run(b, &Params(p.0))?;
        if let Some(why) = &r.reason {
            eprintln!("syscost: ctx.ring {}: {why}", r.param_label());
        }
        results.push(r);
    }
    Ok(ring::tables(&results).into_iter().next())
}

/// Runs `syscost repro sloan1992`.
pub fn run(args: &Options) -> anyhow::Result<ExitCode> {
    let facts = crate::host::collect(&[]);
    let _guard = InterruptGuard::install()?;
    let session = super::session(args, facts.invariant_tsc, 0)?;
    let mut out = crate::report::stdout();
    writeln!(
        out,
        "Sloan, \"Context Switch Time Scalability: Benchmark Results\", NCAR, 1992\n\
         The pipeline benchmark (ctx.ring, processes) on this machine ({}, {} CPUs online, profile {})\n",
        facts.cpu_model.as_deref().unwrap_or("unknown CPU"),
        facts.cpus_online,
        args.profile.name
    )?;
    let mut ours: Vec<(String, Summary)> = Vec::new();
    for placement in ["same-cpu", "free"] {
        match measure(&session, placement) {
            Ok(Some(t)) => {
                writeln!(
                    out,
                    "{}",
                    crate::report::ring::render(&t, crate::os::term::stdout_width())
                )?;
                if let Some(s) = our_summary(&t) {
                    ours.push((format!("this machine, ring {placement}"), s));
                }
            }
            Ok(None) => {
                writeln!(out, "placement={placement}: no ring could be measured\n")?
            }
            Err(BenchError::Interrupted) => {
                eprintln!("syscost: interrupted");
                return Ok(ExitCode::from(crate::os::interrupt::exit_code()));
            }
            Err(e) => writeln!(out, "placement={placement}: {e}\n")?,
        }
        if interrupted() {
            eprintln!("syscost: interrupted");
            return Ok(ExitCode::from(crate::os::interrupt::exit_code()));
        }
    }
    writeln!(
        out,
        "One row per system. The paper's per-hop figure is its CPU time / (10⁶ passes · n); ours is the\n\
         harness's median wall time per hop. The knee is where the per-hop cost first exceeds the trend\n\
         of the smaller rings by more than {:.0}%; growth is b in time per pass ∝ n^b (the paper's CPU\n\
         time; the harness's wall time here).\n",
        KNEE_THRESHOLD * 100.0
    )?;
    writeln!(
        out,
        "{:<52} {:>10} {:>6} {:>9} {:>8} {:>7}",
        "system", "µs/hop n=2", "max n", "cpu/proj", "knee", "growth"
    )?;
    for s in SYSTEMS {
        let label = format!("{} ({}, {} CPU)", s.name, s.os, s.cpus);
        writeln!(out, "{}", row(&label, &paper_summary(s)))?;
    }
    for (label, s) in &ours {
        writeln!(out, "{}", row(label, s))?;
    }
    if let Some((_, one)) = ours.first() {
        let fastest = SYSTEMS
            .iter()
            .map(|s| paper_summary(s).per_hop_us_at_2)
            .fold(f64::INFINITY, f64::min);
        writeln!(
            out,
            "\nAt n=2 a hop costs {} here on one CPU, {:.0}× less than the fastest system of 1992.",
            fmt_ns(one.per_hop_us_at_2 * 1e3),
            fastest / one.per_hop_us_at_2
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_summaries_follow_its_tables() {
        let sun280 = SYSTEMS.iter().find(|s| s.name.contains("4/280")).unwrap();
        let s = paper_summary(sun280);
        assert_eq!(s.knee_n, Some(16));
        assert_eq!(s.largest_n, 64);
        // 873 s of CPU for 2·10⁶ switches.
        assert!((s.per_hop_us_at_2 - 436.5).abs() < 0.01);
        // 96545 / 27941.
        assert!((s.cpu_over_projected - 3.455).abs() < 0.01);
        let hp = SYSTEMS
            .iter()
            .find(|s| s.name.contains("9000/720"))
            .unwrap();
        let s = paper_summary(hp);
        assert_eq!((s.knee_n, s.largest_n), (None, 48));
        assert!(s.growth.unwrap() > 1.0 && s.growth.unwrap() < 1.1);
    }
}
