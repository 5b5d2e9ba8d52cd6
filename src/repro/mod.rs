//! `syscost repro <study>`: a seed study's own table beside today's figures on this
//! machine. The studies' figures are data in the project, typed in from the seeds and
//! tested; today's figures come from the catalogue through the same harness as
//! `syscost run`.

pub mod manea1999;
pub mod manea1999_data;
pub mod nagy_vms;
pub mod nagy_vms_data;
pub mod perez1976;
pub mod perez1976_data;
pub mod sloan1992;
pub mod sloan1992_data;

use crate::bench::{self, Params};
use crate::error::{BenchError, UsageError};
use crate::harness::Profile;
use crate::host::HostFacts;
use crate::results::Run;
use crate::session::{Journal, Session, SessionOptions};
use std::process::ExitCode;

/// The studies `repro` knows.
pub const STUDIES: &[&str] = &["perez1976", "manea1999", "sloan1992", "nagy-vms"];

/// What `repro` is asked for.
#[derive(Debug, Clone)]
pub struct Options {
    /// The study (one of [`STUDIES`]).
    pub study: String,
    /// The measurement profile.
    pub profile: Profile,
    /// The CPU to pin the measuring thread to.
    pub cpu: Option<usize>,
    /// nagy-vms's multi-user rows: this many busy background processes.
    pub load: Option<usize>,
    /// Where the study's sessions record their results.
    pub journal: Journal,
}

/// Prints the study's tables with today's figures beside them; returns the exit code
/// and, when anything was measured, today's figures as a run document.
pub fn run(args: &Options) -> anyhow::Result<(ExitCode, Option<Run>)> {
    let started = std::time::SystemTime::now();
    let code = study(args)?;
    let taken = args.journal.take();
    let run = match (taken.clock, taken.harness, !taken.results.is_empty()) {
        (Some(clock), Some(harness), true) => {
            let mut run = Run::new(crate::host::collect(&[]), started);
            run.clock = clock;
            run.harness = harness;
            run.complete = code == ExitCode::SUCCESS;
            run.results = taken.results;
            crate::derived::fill(&mut run);
            Some(run)
        }
        _ => None,
    };
    Ok((code, run))
}

fn study(args: &Options) -> anyhow::Result<ExitCode> {
    if args.load.is_some() && args.study != "nagy-vms" {
        return Err(UsageError::new(format!(
            "--load applies to nagy-vms's multi-user rows only, not to '{}'",
            args.study
        ))
        .into());
    }
    match args.study.as_str() {
        "perez1976" => perez1976::run(args),
        "manea1999" => manea1999::run(args),
        "sloan1992" => sloan1992::run(args),
        "nagy-vms" => nagy_vms::run(args),
        other => Err(UsageError::new(format!(
            "unknown study '{other}'; available: {}",
            STUDIES.join(", ")
        ))
        .into()),
    }
}

/// A session for the study with `load` busy background processes, recording its results
/// to the study's journal.
pub fn session(
    args: &Options,
    invariant_tsc: bool,
    load: usize,
) -> anyhow::Result<Session> {
    let opts = SessionOptions {
        cpu: args.cpu,
        load,
        ..SessionOptions::new(args.profile, invariant_tsc)
    };
    Ok(Session::start(opts)?.record_to(&args.journal))
}

/// The machine a study's table is put beside: "CPU, clock NAME, profile NAME".
pub fn machine(facts: &HostFacts, session: &Session, args: &Options) -> String {
    format!(
        "{}, clock {}, profile {}",
        facts.cpu_model.as_deref().unwrap_or("unknown CPU"),
        session.clock_info().name,
        args.profile.name
    )
}

/// The exit code of a study that ran to its end, or was interrupted.
pub fn exit_code() -> ExitCode {
    if crate::os::interrupt::interrupted() {
        ExitCode::from(crate::os::interrupt::exit_code())
    } else {
        ExitCode::SUCCESS
    }
}

/// Today's median for one benchmark instance, in ns, or why there is none.
pub fn median(
    session: &Session,
    name: &str,
    params: &[(&'static str, &str)],
) -> Result<f64, String> {
    let b = bench::find(name).ok_or_else(|| format!("no benchmark {name}"))?;
    let mut p = bench::params::expand(name, b.params(), &[])
        .map_err(|e| e.to_string())?
        .remove(0);
    for (k, v) in params {
        match p.0.iter_mut().find(|(n, _)| n == k) {
            Some(slot) => slot.1 = v.to_string(),
            None => return Err(format!("{name} has no parameter {k}")),
        }
    }
    let p = Params(p.0);
    match session.run(b, &p) {
        Ok(r) => r
            .median_ns()
            .ok_or_else(|| r.reason.unwrap_or_else(|| "no result".into())),
        Err(BenchError::Interrupted) => Err("interrupted".into()),
        Err(e) => Err(e.to_string()),
    }
}
