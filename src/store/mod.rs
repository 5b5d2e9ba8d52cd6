//! The history of runs: every `run` and `repro` saved in an SQLite database (bundled into
//! the binary, nothing to install) or, for a fleet, a PostgreSQL database; and the
//! references by which commands name runs. This module owns what a saved run is (its
//! rows, its compressed document), the queries (one SQL text for both stores) and the
//! between-run widening; the two stores (modules `sqlite` and `postgres`, behind one
//! private `Backend` trait, module `sql`) own only their connection, identity,
//! migrations and saving, so no caller ever asks which store it has. It must not
//! measure or render.
//!
//! # Where it lives
//! `--db PATH` or `--db postgres://USER:PASSWORD@HOST:PORT/DATABASE`, else `$SYSCOST_DB`
//! (either kind), else `$XDG_DATA_HOME/syscost/history.db`, else
//! `$HOME/.local/share/syscost/history.db`.
//!
//! # What it holds
//! Table `runs`: one row per saved run with the facts `history` lists (times, host,
//! kernel, command line, profile, counts, origin: run, repro or import). Table
//! `documents`: the run's whole results document (the JSON of [`crate::report::json`],
//! samples included), deflate-compressed, kept apart so that listing never reads it.
//! Table `results`: one row per benchmark instance with its headline and interval, so a
//! benchmark's past figures can be read without opening documents.
//!
//! # Safety of the file
//! Write-ahead logging and a busy timeout let several runs save at once; a save is one
//! transaction, so an interrupted save leaves nothing half-written. The file carries an
//! application id and a schema version: a file that is not a syscost history, or one
//! written by a newer syscost, is refused with one line; an older schema is migrated
//! forward inside a transaction. A PostgreSQL history has the same three tables and a
//! fourth, `syscost_meta`, that holds its identity and schema version; a database with
//! other tables and no such identity is refused in one line, and the migrations run in
//! one transaction under an advisory lock. Many hosts save into one server at once.

mod between;
#[cfg(feature = "postgres")]
mod postgres;
pub mod refs;
mod sql;
mod sqlite;

use crate::error::UsageError;
use crate::results::{Run, Status, OLDEST_READ, SCHEMA_VERSION};
use anyhow::Context;
use sql::{Backend, NewResult, Param, Row};
use std::cell::RefCell;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

pub use refs::{resolve, resolve_side, Back, Named, RunRef, Skipped};

/// The database schema this build reads and writes.
pub const DB_SCHEMA: i32 = 3;

/// An error met while checking or preparing the history at `shown`: a usage error as
/// it is, anything else as the reason the place is not a usable history.
fn unusable(e: anyhow::Error, shown: &str) -> anyhow::Error {
    match e.downcast::<UsageError>() {
        Ok(u) => anyhow::Error::new(u),
        Err(e) => e.context(format!("{shown}: not a usable syscost history")),
    }
}

/// Refuses a history written by a newer syscost.
fn check_not_newer(shown: &str, version: i32) -> Result<(), UsageError> {
    if version > DB_SCHEMA {
        return Err(UsageError::new(format!(
            "{shown} was written by a newer syscost (history schema {version}; this one \
             reads up to {DB_SCHEMA}); upgrade syscost or choose another history with --db"
        )));
    }
    Ok(())
}

/// Where a run came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `syscost run`.
    Run,
    /// `syscost repro`.
    Repro,
    /// `syscost history import`.
    Import,
}

impl Origin {
    fn word(self) -> &'static str {
        match self {
            Origin::Run => "run",
            Origin::Repro => "repro",
            Origin::Import => "import",
        }
    }
}

/// One row of `syscost history`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Entry {
    /// The run's id.
    pub id: i64,
    /// When it started, seconds since the Unix epoch.
    pub started_unix_s: f64,
    /// run, repro or import.
    pub origin: String,
    /// The host name.
    pub hostname: String,
    /// The kernel release.
    pub kernel: String,
    /// The command line.
    pub command: String,
    /// The profile.
    pub profile: String,
    /// Whether the run finished.
    pub complete: bool,
    /// Results measured.
    pub ok: i64,
    /// Results skipped.
    pub skipped: i64,
    /// Results failed.
    pub failed: i64,
    /// The user's labels, as [`labels_text`] writes them ("" for none).
    pub labels: String,
}

/// A benchmark's figure in one earlier run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PastFigure {
    /// The run.
    pub run_id: i64,
    /// Its headline, ns.
    pub median_ns: f64,
    /// Its interval from its rounds alone, before the machine's floor and the history
    /// widened it (in runs saved before this was kept, the interval as saved).
    pub own_ci_low_ns: f64,
    /// Its high end.
    pub own_ci_high_ns: f64,
}

/// The history, open: an SQLite file or a PostgreSQL database, the same to every
/// caller.
pub struct History {
    db: RefCell<Box<dyn Backend>>,
    place: String,
    last_transaction: Option<std::time::Duration>,
}

/// The default place of the history file, under `XDG_DATA_HOME` or `HOME`.
fn default_path() -> Option<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|p| !p.is_empty() && Path::new(p).is_absolute())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|p| !p.is_empty())
                .map(|h| PathBuf::from(h).join(".local/share"))
        })?;
    Some(data.join("syscost").join("history.db"))
}

/// The history file to use: `--db`, or the default. A place the user named (`--db`,
/// `SYSCOST_DB`) in a directory that does not exist is refused, naming it: a typo must
/// not become a new directory tree. Only the default place has its directory made.
pub fn path_or_default(db: Option<&Path>) -> Result<PathBuf, UsageError> {
    let named = match db {
        Some(p) => Some(("--db", p.to_path_buf())),
        None => std::env::var_os("SYSCOST_DB")
            .filter(|p| !p.is_empty())
            .map(|p| ("SYSCOST_DB", PathBuf::from(p))),
    };
    match named {
        Some((flag, p)) => {
            check_directory(flag, &p)?;
            Ok(p)
        }
        None => default_path().ok_or_else(|| {
            UsageError::new(
                "no place for the history: set --db PATH, SYSCOST_DB, XDG_DATA_HOME or HOME",
            )
        }),
    }
}

/// Refuses a history file named by `flag` whose directory does not exist.
fn check_directory(flag: &str, path: &Path) -> Result<(), UsageError> {
    if History::is_url(path) {
        return Ok(());
    }
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) if !dir.is_dir() => Err(UsageError::new(format!(
            "{flag} {}: no directory {}; make it first, or name a file in an existing \
             directory",
            path.display(),
            dir.display()
        ))),
        _ => Ok(()),
    }
}

fn now_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl History {
    /// Opens the history at `path` (a file, or a `postgres://` URL), creating it (and its
    /// directory, or its tables) when `create` is true; refuses a file or database that
    /// is not a syscost history or is from a newer syscost.
    pub fn open(path: &Path, create: bool) -> anyhow::Result<History> {
        let shown = path.display();
        let (db, place): (Box<dyn Backend>, String) = match url_scheme(path) {
            #[cfg(feature = "postgres")]
            Some("postgres" | "postgresql") => {
                let url = path.to_str().expect("a URL is text");
                let db = postgres::Postgres::open(url, create)?;
                (Box::new(db), postgres::redact(url))
            }
            Some(scheme) => {
                return Err(UsageError::new(format!(
                    "{shown} is a URL, not a file: this syscost keeps its history in an \
                     SQLite file{} and knows no '{scheme}://' store (give a file path, or \
                     set SYSCOST_DB to one)",
                    if cfg!(feature = "postgres") {
                        " or a postgres:// database"
                    } else {
                        " only (it was built without the postgres feature)"
                    }
                ))
                .into());
            }
            None => (
                Box::new(sqlite::Sqlite::open(path, create)?),
                shown.to_string(),
            ),
        };
        Ok(History {
            db: RefCell::new(db),
            place,
            last_transaction: None,
        })
    }

    /// Whether `path` names a database server rather than a file.
    pub fn is_url(path: &Path) -> bool {
        url_scheme(path).is_some()
    }

    /// Where the history is, for messages: the file, or the URL without its password.
    pub fn place(&self) -> &str {
        &self.place
    }

    /// Each host name with the id of its newest run, ordered by host name.
    pub fn latest_per_host(&self) -> anyhow::Result<Vec<(String, i64)>> {
        self.rows(
            "SELECT hostname, max(id) FROM runs GROUP BY hostname ORDER BY hostname",
            &[],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    /// The rows of query `sql` with `params` ([`Backend::query`]), each read by `read`.
    fn rows<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        read: impl Fn(&Row<'_>) -> anyhow::Result<T>,
    ) -> anyhow::Result<Vec<T>> {
        let mut out = Vec::new();
        self.db.borrow_mut().query(sql, params, &mut |r| {
            out.push(read(&r)?);
            Ok(())
        })?;
        Ok(out)
    }

    /// Saves a run in one transaction; returns its id.
    pub fn save(&mut self, run: &Run, origin: Origin) -> anyhow::Result<i64> {
        self.save_with(run, origin, None)
    }

    /// [`History::save`] of a run whose samples are in `spill` (read back one result
    /// at a time, so the run's samples are never all in memory).
    pub fn save_with(
        &mut self,
        run: &Run,
        origin: Origin,
        spill: Option<&crate::spill::Spill>,
    ) -> anyhow::Result<i64> {
        // The samples go apart, so that reading a run's figures never reads them.
        let mut z =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        crate::spill::write_samples(&mut z, run, spill)?;
        let samples = z.finish()?;
        let mut lite = run.clone();
        for r in &mut lite.results {
            if let Some(m) = r.measured.as_mut() {
                m.samples = None;
            }
        }
        self.save_json(run, origin, &serde_json::to_vec(&lite)?, &samples)
    }

    /// Saves `run` as `json`, its document without samples, and `samples`, its
    /// samples deflated.
    fn save_json(
        &mut self,
        run: &Run,
        origin: Origin,
        json: &[u8],
        samples: &[u8],
    ) -> anyhow::Result<i64> {
        let body = deflate(json)?;
        let count =
            |s: Status| run.results.iter().filter(|r| r.status == s).count() as i64;
        // The row of table `runs`, in the order of its columns in [`sql::INSERT_RUN`].
        let row: &[&dyn Param] = &[
            &run.started_unix_s,
            &now_s(),
            &origin.word(),
            &run.host.hostname.as_deref().unwrap_or("unknown"),
            &run.host.kernel.as_deref().unwrap_or("unknown"),
            &command_text(&run.command_line),
            &run.harness.profile,
            &run.complete,
            &count(Status::Ok),
            &count(Status::Skipped),
            &count(Status::Failed),
            &i64::from(run.schema_version),
            &conditions(run),
            &labels_text(&run.labels),
        ];
        let results: Vec<NewResult> = run
            .results
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let m = r.measured.as_ref();
                NewResult {
                    idx: i as i64,
                    key: crate::compare::key(r),
                    status: match r.status {
                        // In the index only (the document keeps the result as it is):
                        // a figure of a slow state is not one of the runs' spread.
                        Status::Ok if m.is_some_and(|m| m.slow_state_pct.is_some()) => {
                            "slow"
                        }
                        Status::Ok => "ok",
                        Status::Skipped => "skipped",
                        Status::Failed => "failed",
                    },
                    median_ns: m.map(|m| m.median_ns),
                    ci_low_ns: m.map(|m| m.ci_low_ns),
                    ci_high_ns: m.map(|m| m.ci_high_ns),
                    rounds: m.map(|m| {
                        m.rounds.iter().filter(|x| x.median_ns.is_some()).count() as i64
                    }),
                    own_ci_low_ns: m.map(|m| m.own_interval().0),
                    own_ci_high_ns: m.map(|m| m.own_interval().1),
                }
            })
            .collect();
        let t0 = std::time::Instant::now();
        let id = self
            .db
            .get_mut()
            .insert(row, &body, samples, &results)
            .with_context(|| format!("saving the run in {}", self.place))?;
        self.last_transaction = Some(t0.elapsed());
        Ok(id)
    }

    /// How long the last save's transaction took (its rows written and committed; the
    /// compressing before it left out), if this history has saved a run.
    pub fn last_transaction(&self) -> Option<std::time::Duration> {
        self.last_transaction
    }

    /// The saved runs (of host `host`, if given), newest first, at most `limit` of them.
    pub fn list(
        &self,
        limit: Option<usize>,
        host: Option<&str>,
    ) -> anyhow::Result<Vec<Entry>> {
        let limit = limit.map_or(i64::MAX, |l| l as i64);
        self.rows(
            "SELECT id, started_unix_s, origin, hostname, kernel, command, profile, complete,
                    n_ok, n_skipped, n_failed, labels
             FROM runs WHERE (CAST(?2 AS TEXT) IS NULL OR hostname = ?2)
             ORDER BY id DESC LIMIT ?1",
            &[&limit, &host],
            |r| {
                Ok(Entry {
                    id: r.get(0)?,
                    started_unix_s: r.get(1)?,
                    origin: r.get(2)?,
                    hostname: r.get(3)?,
                    kernel: r.get(4)?,
                    command: r.get(5)?,
                    profile: r.get(6)?,
                    complete: r.get(7)?,
                    ok: r.get(8)?,
                    skipped: r.get(9)?,
                    failed: r.get(10)?,
                    labels: r.get(11)?,
                })
            },
        )
    }

    /// How many runs are saved.
    pub fn count(&self) -> anyhow::Result<i64> {
        let n = self.rows("SELECT count(*) FROM runs", &[], |r| r.get(0))?;
        Ok(n.first().copied().unwrap_or(0))
    }

    /// The id of the newest run (of host `host`, if given) but `back` (0 is the
    /// newest), counting complete runs only (what `last~N` names) unless `all` (what
    /// `last!~N` names: incomplete, interrupted runs too).
    pub fn nth_latest(
        &self,
        back: usize,
        host: Option<&str>,
        all: bool,
    ) -> anyhow::Result<Option<i64>> {
        let ids = self.rows(
            "SELECT id FROM runs WHERE (CAST(?2 AS TEXT) IS NULL OR hostname = ?2)
             AND (?3 OR complete)
             ORDER BY id DESC LIMIT 1 OFFSET ?1",
            &[&(back as i64), &host, &all],
            |r| r.get(0),
        )?;
        Ok(ids.first().copied())
    }

    /// The document of run `id`, with its samples.
    pub fn load(&self, id: i64) -> anyhow::Result<Run> {
        self.load_with(id, true)
    }

    /// The document of run `id`, with or without its samples (reading a full run's
    /// samples takes a second; its figures alone, milliseconds).
    pub fn load_with(&self, id: i64, with_samples: bool) -> anyhow::Result<Run> {
        let (json, samples) = self.stored(id, with_samples)?;
        let damaged =
            || format!("run {id} in {}: its saved document is damaged", self.place);
        let mut run = parse_document(&json)
            .with_context(|| format!("run {id} in {}", self.place))?;
        if let Some(s) = samples {
            let columns: Vec<Option<crate::results::Samples>> =
                serde_json::from_slice(&inflate(&s).with_context(damaged)?)
                    .with_context(damaged)?;
            if columns.len() != run.results.len() {
                anyhow::bail!("{}: the samples do not match the results", damaged());
            }
            for (r, s) in run.results.iter_mut().zip(columns) {
                if let Some(m) = r.measured.as_mut() {
                    m.samples = s;
                }
            }
        }
        Ok(run)
    }

    /// Run `id`'s document as JSON, and its samples (still compressed) when asked for.
    fn stored(
        &self,
        id: i64,
        with_samples: bool,
    ) -> anyhow::Result<(Vec<u8>, Option<Vec<u8>>)> {
        // A NULL of PostgreSQL's type for bytes; to SQLite, a NULL.
        let column = if with_samples {
            "samples"
        } else {
            "CAST(NULL AS BYTEA)"
        };
        // Its encoding, its body, and its samples when asked for.
        let mut rows: Vec<(String, Vec<u8>, Option<Vec<u8>>)> = self.rows(
            &format!("SELECT encoding, body, {column} FROM documents WHERE run_id = ?1"),
            &[&id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        let Some((encoding, body, samples)) = rows.pop() else {
            return Err(UsageError::new(format!(
                "no run {id} in {}; `syscost history` lists the saved runs",
                self.place
            ))
            .into());
        };
        if encoding != "json+deflate" {
            return Err(UsageError::new(format!(
                "run {id} is stored as '{encoding}', which this syscost cannot read"
            ))
            .into());
        }
        let json = inflate(&body).with_context(|| {
            format!("run {id} in {}: its saved document is damaged", self.place)
        })?;
        Ok((json, samples))
    }

    /// Removes run `id`; false if there was none.
    pub fn remove(&mut self, id: i64) -> anyhow::Result<bool> {
        self.db.get_mut().remove(id)
    }

    /// A benchmark's figures in earlier runs under the same `conditions` (see
    /// [`conditions`]), newest first, at most `limit`. Results of incomplete runs count:
    /// each result is concluded on its own.
    pub fn past_figures(
        &self,
        key: &str,
        conditions: &str,
        limit: usize,
    ) -> anyhow::Result<Vec<PastFigure>> {
        self.rows(
            "SELECT r.run_id, r.median_ns, coalesce(r.own_ci_low_ns, r.ci_low_ns),
                    coalesce(r.own_ci_high_ns, r.ci_high_ns)
             FROM results r JOIN runs u ON u.id = r.run_id
             WHERE r.key = ?1 AND u.conditions = ?2 AND u.origin != 'import'
               AND r.status = 'ok' AND r.median_ns IS NOT NULL
             ORDER BY r.run_id DESC LIMIT ?3",
            &[&key, &conditions, &(limit as i64)],
            |r| {
                Ok(PastFigure {
                    run_id: r.get(0)?,
                    median_ns: r.get(1)?,
                    own_ci_low_ns: r.get(2)?,
                    own_ci_high_ns: r.get(3)?,
                })
            },
        )
    }
}

impl History {
    /// Sets `run.machine.past`: the run's base state (its canary's) beside those of the newest
    /// earlier runs under the same conditions (at most [`crate::method::PAST_MACHINE_RUNS`]; `except`
    /// is this run's id when it is saved already). Needs two of them with canary
    /// readings; otherwise leaves it absent. Returns whether it was set.
    pub fn machine_against_past(
        &self,
        run: &mut Run,
        except: Option<i64>,
    ) -> anyhow::Result<bool> {
        run.machine.past = None;
        let Some(now) = run.machine.base_ns() else {
            return Ok(false);
        };
        run.machine.past = beside(&self.past_machines(run, except)?, now);
        Ok(run.machine.past.is_some())
    }

    /// The machine's record of the newest earlier runs under `run`'s conditions (at
    /// most [`crate::method::PAST_MACHINE_RUNS`], `except` left out), newest first; a document this
    /// build cannot read (an older schema) is left out.
    pub fn past_machines(
        &self,
        run: &Run,
        except: Option<i64>,
    ) -> anyhow::Result<Vec<crate::results::MachineStates>> {
        // The newest runs (not imports) under the same conditions.
        let mut ids = self.rows(
            "SELECT id FROM runs WHERE conditions = ?1 AND origin != 'import'
             ORDER BY id DESC LIMIT ?2",
            &[
                &conditions(run),
                &((crate::method::PAST_MACHINE_RUNS + 1) as i64),
            ],
            |r| r.get(0),
        )?;
        ids.retain(|&id| Some(id) != except);
        ids.truncate(crate::method::PAST_MACHINE_RUNS);
        Ok(ids
            .into_iter()
            .filter_map(|id| self.machine_of(id).ok())
            .collect())
    }

    /// The canary readings of saved run `id`, read from its document alone.
    fn machine_of(&self, id: i64) -> anyhow::Result<crate::results::MachineStates> {
        #[derive(serde::Deserialize)]
        struct Doc {
            schema_version: u32,
            machine: serde_json::Value,
        }
        let doc: Doc = serde_json::from_slice(&self.stored(id, false)?.0)?;
        let mut doc = serde_json::json!({
            "schema_version": doc.schema_version,
            "machine": doc.machine,
        });
        crate::results::upgrade(&mut doc);
        Ok(serde_json::from_value(doc["machine"].take())?)
    }
}

/// A canary reading of `now_ns` beside the base states of `past`, earlier runs'
/// machines ([`History::past_machines`]); None without two of them with canary
/// readings.
pub fn beside(
    past: &[crate::results::MachineStates],
    now_ns: f64,
) -> Option<crate::results::PastMachine> {
    let past: Vec<f64> = past
        .iter()
        .filter_map(crate::results::MachineStates::base_ns)
        .collect();
    if past.len() < 2 {
        return None;
    }
    let median = crate::stats::median(&past).unwrap_or(f64::NAN);
    Some(crate::results::PastMachine {
        runs: past.len(),
        median_ns: median,
        low_ns: past.iter().copied().fold(f64::INFINITY, f64::min),
        high_ns: past.iter().copied().fold(0.0, f64::max),
        ratio: now_ns / median,
    })
}

/// How far each kind of work's probe moved between `past`, earlier runs' machines
/// ([`History::past_machines`]): per kind with three or more of them,
/// `(kind, K, t(0.975, K−1)·√2·s)`, `s` the standard deviation of the logs of their
/// probes' medians. It is how far apart two runs' figures of that kind lie when each
/// moves as the probe did between runs, which one run's readings cannot see
/// (docs/method.md §6).
pub fn movement(
    past: &[crate::results::MachineStates],
) -> Vec<(crate::harness::probe::WorkKind, usize, f64)> {
    crate::harness::probe::WorkKind::ALL
        .into_iter()
        .filter_map(|kind| {
            let logs: Vec<f64> = past
                .iter()
                .filter_map(|m| m.floors.iter().find(|f| f.kind == kind))
                .map(|f| f.median_ns)
                .filter(|x| x.is_finite() && *x > 0.0)
                .map(f64::ln)
                .collect();
            let k = logs.len();
            let s = crate::stats::rounds::between_runs(&logs)?;
            Some((
                kind,
                k,
                crate::stats::rounds::t975(k - 1) * crate::method::RERUN * s,
            ))
        })
        .collect()
}

/// The scheme of a `--db` value written as a URL (`scheme://…`), which is never taken
/// as a file name.
fn url_scheme(path: &Path) -> Option<&str> {
    let s = path.to_str()?;
    let (scheme, _) = s.split_once("://")?;
    let mut chars = scheme.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    ok.then_some(scheme)
}

/// What must be equal for two runs' figures to be repetitions of one another: the
/// facts that decide costs ([`crate::compare::cost_facts`]: host, kernel, hypervisor,
/// clocksource, mitigations, harness clock, profile, ...), hashed, and the load, the
/// pinned CPU and a fixed batch.
pub fn conditions(run: &Run) -> String {
    let facts: Vec<String> = crate::compare::cost_facts(run)
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let hs = &run.harness;
    // Culling by kernel events changes which samples are clean; runs without it keep
    // the key they always had.
    let cull = match &hs.kernel_events {
        Some(_) => " cull=kernel",
        None => "",
    };
    // Measuring in a worker process changed what the process around a benchmark is:
    // runs measured in the run's own process keep their key and stay apart.
    let workers = match &hs.workers {
        Some(w) => format!(" workers={w}"),
        None => String::new(),
    };
    // The user's labels: runs under other labels are other conditions, whatever the
    // host facts say. Unlabelled runs keep the key they always had.
    let labels = match run.labels.is_empty() {
        true => String::new(),
        false => format!(" labels={}", labels_text(&run.labels)),
    };
    format!(
        "{:016x} profile={} load={} cpu={} batch={}{cull}{workers}{labels}",
        fnv1a(facts.join("\n").as_bytes()),
        hs.profile,
        hs.load,
        hs.cpu.map_or("-".to_string(), |c| c.to_string()),
        hs.batch.map_or("-".to_string(), |b| b.to_string()),
    )
}

/// A run's labels as one text ([`crate::results::labels_text`]).
pub use crate::results::labels_text;

/// FNV-1a, 64 bits: a hash that is the same in every build (unlike std's).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn deflate(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut z =
        flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(bytes)?;
    z.finish()
}

fn inflate(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    flate2::read::DeflateDecoder::new(bytes).read_to_end(&mut out)?;
    Ok(out)
}

/// The command line as one string, each argument quoted when it needs it.
pub fn command_text(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.,=/:+@%".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Parses a results document, refusing another tool's JSON and schema versions it
/// cannot read with one clear line before the strict parse; a document of an older
/// schema it reads is brought up to this one first ([`crate::results::upgrade`]).
pub fn parse_document(bytes: &[u8]) -> anyhow::Result<Run> {
    let mut value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        UsageError::new(if e.is_eof() {
            format!("the JSON ends early (truncated?): {e}")
        } else {
            format!("not JSON: {e}")
        })
    })?;
    let tool = value.get("tool").and_then(|t| t.as_str());
    if tool != Some("syscost") {
        return Err(UsageError::new(
            "not a syscost results document (no \"tool\": \"syscost\"); syscost reads the \
             JSON that `syscost run --format json` writes",
        )
        .into());
    }
    let refused = match value.get("schema_version").and_then(|v| v.as_u64()) {
        Some(v) if v > u64::from(SCHEMA_VERSION) => Some(format!(
            "written by a newer syscost (results schema {v}; this one reads {SCHEMA_VERSION})"
        )),
        Some(v) if v < u64::from(OLDEST_READ) => Some(format!(
            "written by an older syscost (results schema {v}; this one reads \
             {OLDEST_READ} to {SCHEMA_VERSION}): measure again with this version"
        )),
        Some(_) => None,
        None => Some("a syscost document without a schema_version".to_string()),
    };
    if let Some(why) = refused {
        return Err(UsageError::new(why).into());
    }
    crate::results::upgrade(&mut value);
    serde_json::from_value(value).map_err(|e| {
        UsageError::new(format!("a damaged syscost results document: {e}")).into()
    })
}

/// Reads a results document from a file.
pub fn read_json(path: &Path) -> anyhow::Result<Run> {
    let bytes = std::fs::read(path)
        .map_err(|e| UsageError::new(format!("cannot read {}: {e}", path.display())))?;
    parse_document(&bytes).map_err(|e| match e.downcast::<UsageError>() {
        Ok(u) => UsageError::new(format!("{}: {u}", path.display())).into(),
        Err(e) => e,
    })
}

#[cfg(test)]
mod tests;
