//! `syscost fleet`: each host's latest run from one history (typically the PostgreSQL
//! one a fleet saves into), grouped and tested by [`crate::fleet`], rendered in one of
//! four formats. It reads the history and writes; the statistics are not here.

use crate::error::UsageError;
use crate::fleet::{self, render};
use crate::store::{self, History};
use std::path::PathBuf;
use std::process::ExitCode;

/// Output formats of `fleet`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FleetFormat {
    /// Aligned text.
    Table,
    /// JSON.
    Json,
    /// GitHub-flavoured Markdown.
    Markdown,
    /// One HTML page with a strip plot per benchmark (needs -o FILE).
    Html,
}

/// Options of `syscost fleet`.
#[derive(Debug, clap::Args)]
pub struct FleetArgs {
    /// Benchmarks to show: names, globs (e.g. 'syscall.*') or keys; default every
    /// benchmark measured.
    pub benchmarks: Vec<String>,
    /// Differences smaller than PCT percent of the group's median never make a host
    /// odd.
    #[arg(long, value_name = "PCT", default_value_t = 5.0, value_parser = super::history::percent)]
    pub threshold: f64,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: FleetFormat,
    /// Write to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Exit with code 1 when any host stands out.
    #[arg(long)]
    pub fail_on_odd: bool,
    /// The history: a file or a postgres:// URL (default: $SYSCOST_DB, else
    /// $XDG_DATA_HOME/syscost/history.db).
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

/// Runs `syscost fleet`.
pub fn fleet_cmd(args: &FleetArgs) -> anyhow::Result<ExitCode> {
    if args.format == FleetFormat::Html && args.output.is_none() {
        return Err(
            UsageError::new("fleet --format html writes a file: add -o FILE").into(),
        );
    }
    let path = store::path_or_default(args.db.as_deref())?;
    let h = History::open(&path, false)?;
    let latest = h
        .latest_per_host()?
        .into_iter()
        .map(|(host, id)| Ok((host, id, h.load_with(id, false)?)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    if latest.is_empty() {
        return Err(UsageError::new(format!("no runs in {}", h.place())).into());
    }
    let f = fleet::fleet(&latest, &args.benchmarks, args.threshold / 100.0);
    if f.rows.is_empty() {
        return Err(UsageError::new(format!(
            "no measured benchmark matches {} in the hosts' latest runs",
            args.benchmarks.join(" ")
        ))
        .into());
    }
    let text = match args.format {
        FleetFormat::Table => render::text(&f),
        FleetFormat::Markdown => render::markdown(&f),
        FleetFormat::Html => render::html(&f),
        FleetFormat::Json => serde_json::to_string_pretty(&f)? + "\n",
    };
    super::report::write_out(args.output.as_deref(), text.as_bytes())?;
    if args.fail_on_odd && !f.odd_hosts().is_empty() {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
