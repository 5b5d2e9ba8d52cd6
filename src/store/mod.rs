//! The history of runs: every `run` and `repro` saved in an SQLite database (bundled into
//! the binary, nothing to install), and the references by which commands name runs.
//!
//! # Where it lives
//! `--db PATH`, else `$SYSCOST_DB`, else `$XDG_DATA_HOME/syscost/history.db`, else
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
//! forward inside a transaction.

pub mod refs;

use crate::error::UsageError;
use crate::results::{Run, Status, SCHEMA_VERSION};
use anyhow::Context;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use refs::{resolve, RunRef};

/// "SYCH" (syscost history): the SQLite application id of a history file.
const APPLICATION_ID: i32 = 0x5359_4348;

/// The database schema this build reads and writes.
pub const DB_SCHEMA: i32 = 1;

/// The statements that bring a database from schema `i` to `i + 1`, in order.
const MIGRATIONS: &[&str] = &[
    // 0 → 1: the first schema.
    "CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        started_unix_s REAL NOT NULL,
        saved_unix_s REAL NOT NULL,
        origin TEXT NOT NULL,
        hostname TEXT NOT NULL,
        kernel TEXT NOT NULL,
        command TEXT NOT NULL,
        profile TEXT NOT NULL,
        complete INTEGER NOT NULL,
        n_ok INTEGER NOT NULL,
        n_skipped INTEGER NOT NULL,
        n_failed INTEGER NOT NULL,
        doc_schema INTEGER NOT NULL,
        conditions TEXT NOT NULL
     );
     CREATE TABLE documents (
        run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
        encoding TEXT NOT NULL,
        body BLOB NOT NULL,
        samples BLOB NOT NULL
     );
     CREATE TABLE results (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        key TEXT NOT NULL,
        status TEXT NOT NULL,
        median_ns REAL,
        ci_low_ns REAL,
        ci_high_ns REAL,
        rounds INTEGER,
        PRIMARY KEY (run_id, idx)
     );
     CREATE INDEX results_by_key ON results(key, run_id);",
];

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
}

/// A benchmark's figure in one earlier run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PastFigure {
    /// The run.
    pub run_id: i64,
    /// Its headline, ns.
    pub median_ns: f64,
    /// Its interval's low end.
    pub ci_low_ns: f64,
    /// Its interval's high end.
    pub ci_high_ns: f64,
    /// Its rounds.
    pub rounds: i64,
}

/// The history database, open.
pub struct History {
    conn: Connection,
    path: PathBuf,
}

/// The default place of the history file, from the environment.
pub fn default_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SYSCOST_DB").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
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

/// The history file to use: `--db`, or the default.
pub fn path_or_default(db: Option<&Path>) -> Result<PathBuf, UsageError> {
    match db {
        Some(p) => Ok(p.to_path_buf()),
        None => default_path().ok_or_else(|| {
            UsageError::new(
                "no place for the history: set --db PATH, SYSCOST_DB, XDG_DATA_HOME or HOME",
            )
        }),
    }
}

fn now_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl History {
    /// Opens the history at `path`, creating it (and its directory) when `create` is
    /// true; refuses a file that is not a syscost history or is from a newer syscost.
    pub fn open(path: &Path, create: bool) -> anyhow::Result<History> {
        let shown = path.display();
        if let Some(scheme) = url_scheme(path) {
            return Err(UsageError::new(format!(
                "{shown} is a URL, not a file: this syscost keeps its history in an \
                 SQLite file only and knows no '{scheme}://' store (give a file path, or \
                 set SYSCOST_DB to one)"
            ))
            .into());
        }
        if !create && !path.exists() {
            return Err(UsageError::new(format!(
                "no history at {shown}: nothing has been saved there yet (`syscost run` saves \
                 every run; --db chooses another file)"
            ))
            .into());
        }
        if create {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
            }
        }
        let conn =
            Connection::open(path).with_context(|| format!("cannot open {shown}"))?;
        conn.busy_timeout(Duration::from_secs(10))?;
        let history = History {
            conn,
            path: path.to_path_buf(),
        };
        // Several processes making the same new history at once: the ones that find it
        // locked (SQLite does not wait on every lock, switching to WAL for one) try
        // again for a while.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let mut prepared = history.prepare();
        while prepared.as_ref().is_err_and(is_busy)
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(20));
            prepared = history.prepare();
        }
        prepared.map_err(|e| match e.downcast::<UsageError>() {
            Ok(u) => anyhow::Error::new(u),
            Err(e) => e.context(format!("{shown}: not a usable syscost history")),
        })?;
        Ok(history)
    }

    /// Checks the file's identity and schema, migrating an older one.
    fn prepare(&self) -> anyhow::Result<()> {
        let shown = self.path.display();
        // One statement, so one snapshot: another process creating the history at the
        // same time is seen either before its transaction or after it, never half way
        // (its tables without its application id).
        let (app, version, tables): (i32, i32, i64) = self
            .conn
            .query_row(
                "SELECT (SELECT application_id FROM pragma_application_id),
                        (SELECT user_version FROM pragma_user_version),
                        (SELECT count(*) FROM sqlite_master WHERE type = 'table')",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .map_err(|e| {
                UsageError::new(format!("{shown} is not an SQLite database ({e})"))
            })?;
        if app != APPLICATION_ID && (tables > 0 || version != 0) {
            return Err(UsageError::new(format!(
                "{shown} is an SQLite database but not a syscost history; choose another \
                 file with --db"
            ))
            .into());
        }
        if version > DB_SCHEMA {
            return Err(UsageError::new(format!(
                "{shown} was written by a newer syscost (history schema {version}; this one \
                 reads up to {DB_SCHEMA}); upgrade syscost or choose another file with --db"
            ))
            .into());
        }
        // WAL lets readers and one writer go on at once; it is a property of the file.
        let _: String = self
            .conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        self.conn.execute_batch("PRAGMA foreign_keys = ON")?;
        if version < DB_SCHEMA {
            self.migrate()?;
        }
        Ok(())
    }

    /// Applies the migrations from the file's version up, in one transaction that
    /// re-reads the version (another process may have migrated meanwhile).
    fn migrate(&self) -> anyhow::Result<()> {
        let tx = rusqlite::Transaction::new_unchecked(
            &self.conn,
            TransactionBehavior::Immediate,
        )?;
        let version: i32 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        for (i, step) in MIGRATIONS.iter().enumerate().skip(version.max(0) as usize) {
            tx.execute_batch(step)
                .with_context(|| format!("migrating the history to schema {}", i + 1))?;
        }
        tx.execute_batch(&format!(
            "PRAGMA user_version = {DB_SCHEMA}; PRAGMA application_id = {APPLICATION_ID};"
        ))?;
        tx.commit()?;
        Ok(())
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
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
        let body = deflate(&serde_json::to_vec(&lite)?)?;
        let count =
            |s: Status| run.results.iter().filter(|r| r.status == s).count() as i64;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            "INSERT INTO runs (started_unix_s, saved_unix_s, origin, hostname, kernel, command,
                               profile, complete, n_ok, n_skipped, n_failed, doc_schema,
                               conditions)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            params![
                run.started_unix_s,
                now_s(),
                origin.word(),
                run.host.hostname.as_deref().unwrap_or("unknown"),
                run.host.kernel.as_deref().unwrap_or("unknown"),
                command_text(&run.command_line),
                run.harness.profile,
                run.complete,
                count(Status::Ok),
                count(Status::Skipped),
                count(Status::Failed),
                run.schema_version,
                conditions(run),
            ],
        )?;
        let id = tx.last_insert_rowid();
        tx.execute(
            "INSERT INTO documents (run_id, encoding, body, samples)
             VALUES (?1, 'json+deflate', ?2, ?3)",
            params![id, body, samples],
        )?;
        {
            let mut insert = tx.prepare(
                "INSERT INTO results (run_id, idx, key, status, median_ns, ci_low_ns,
                                      ci_high_ns, rounds)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?;
            for (i, r) in run.results.iter().enumerate() {
                let m = r.measured.as_ref();
                let status = match r.status {
                    Status::Ok => "ok",
                    Status::Skipped => "skipped",
                    Status::Failed => "failed",
                };
                insert.execute(params![
                    id,
                    i as i64,
                    crate::compare::key(r),
                    status,
                    m.map(|m| m.median_ns),
                    m.map(|m| m.ci_low_ns),
                    m.map(|m| m.ci_high_ns),
                    m.map(
                        |m| m.rounds.iter().filter(|x| x.median_ns.is_some()).count()
                            as i64
                    ),
                ])?;
            }
        }
        tx.commit()?;
        Ok(id)
    }

    /// The saved runs, newest first, at most `limit` of them.
    pub fn list(&self, limit: Option<usize>) -> anyhow::Result<Vec<Entry>> {
        let mut q = self.conn.prepare(
            "SELECT id, started_unix_s, origin, hostname, kernel, command, profile, complete,
                    n_ok, n_skipped, n_failed
             FROM runs ORDER BY id DESC LIMIT ?1",
        )?;
        let limit = limit.map(|l| l as i64).unwrap_or(-1);
        let rows = q.query_map([limit], |r| {
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
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// How many runs are saved.
    pub fn count(&self) -> anyhow::Result<i64> {
        Ok(self
            .conn
            .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))?)
    }

    /// The id of the newest run but `back` (0 is the newest).
    pub fn nth_latest(&self, back: usize) -> anyhow::Result<Option<i64>> {
        Ok(self
            .conn
            .query_row(
                "SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?1",
                [back as i64],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// The document of run `id`, with its samples.
    pub fn load(&self, id: i64) -> anyhow::Result<Run> {
        self.load_with(id, true)
    }

    /// The document of run `id`, with or without its samples (reading a full run's
    /// samples takes a second; its figures alone, milliseconds).
    pub fn load_with(&self, id: i64, with_samples: bool) -> anyhow::Result<Run> {
        let column = if with_samples { "samples" } else { "NULL" };
        let row: Option<(String, Vec<u8>, Option<Vec<u8>>)> = self
            .conn
            .query_row(
                &format!(
                    "SELECT encoding, body, {column} FROM documents WHERE run_id = ?1"
                ),
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        let Some((encoding, body, samples)) = row else {
            return Err(UsageError::new(format!(
                "no run {id} in {}; `syscost history` lists the saved runs",
                self.path.display()
            ))
            .into());
        };
        if encoding != "json+deflate" {
            return Err(UsageError::new(format!(
                "run {id} is stored as '{encoding}', which this syscost cannot read"
            ))
            .into());
        }
        let damaged = || {
            format!(
                "run {id} in {}: its saved document is damaged",
                self.path.display()
            )
        };
        let json = inflate(&body).with_context(damaged)?;
        let mut run = parse_document(&json)
            .with_context(|| format!("run {id} in {}", self.path.display()))?;
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

    /// Removes run `id`; false if there was none.
    pub fn remove(&mut self, id: i64) -> anyhow::Result<bool> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute("DELETE FROM results WHERE run_id = ?1", [id])?;
        tx.execute("DELETE FROM documents WHERE run_id = ?1", [id])?;
        let n = tx.execute("DELETE FROM runs WHERE id = ?1", [id])?;
        tx.commit()?;
        Ok(n > 0)
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
        let mut q = self.conn.prepare_cached(
            "SELECT r.run_id, r.median_ns, r.ci_low_ns, r.ci_high_ns, r.rounds
             FROM results r JOIN runs u ON u.id = r.run_id
             WHERE r.key = ?1 AND u.conditions = ?2 AND u.origin != 'import'
               AND r.status = 'ok' AND r.median_ns IS NOT NULL
             ORDER BY r.run_id DESC LIMIT ?3",
        )?;
        let rows = q.query_map(params![key, conditions, limit as i64], |r| {
            Ok(PastFigure {
                run_id: r.get(0)?,
                median_ns: r.get(1)?,
                ci_low_ns: r.get(2)?,
                ci_high_ns: r.get(3)?,
                rounds: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// The run-to-run estimate uses at most this many earlier runs: the machine of a month
/// ago is not the machine of today.
pub const PAST_RUNS: usize = 20;

impl History {
    /// Widens each measured result's interval to cover the spread between runs seen in
    /// the history (the other runs of the same benchmark under the same conditions,
    /// newest first, at most [`PAST_RUNS`]), recording the run's own interval in
    /// `between_runs`. `except` is this run's id when it is saved
    /// already: it is left out, and intervals widened when it was saved are widened
    /// afresh from its own. Needs two other runs; a result without them is left as it
    /// is. Returns how many results were widened.
    pub fn widen_by_past_runs(
        &self,
        run: &mut Run,
        except: Option<i64>,
    ) -> anyhow::Result<usize> {
        use crate::stats::rounds::{between_runs, t975};
        let cond = conditions(run);
        if except.is_some() {
            // A saved run: the history may know more now than when it was saved, so its
            // own intervals are widened afresh.
            for m in run.results.iter_mut().filter_map(|r| r.measured.as_mut()) {
                if let Some(b) = m.between_runs.take() {
                    m.ci_low_ns = b.run_ci_low_ns;
                    m.ci_high_ns = b.run_ci_high_ns;
                }
            }
        }
        let mut found: Vec<(usize, f64, usize)> = Vec::new(); // (result, τ, runs)
        for (i, r) in run.results.iter().enumerate() {
            let Some(m) = r.measured.as_ref().filter(|m| m.between_runs.is_none()) else {
                continue;
            };
            let mut past =
                self.past_figures(&crate::compare::key(r), &cond, PAST_RUNS + 1)?;
            past.retain(|p| Some(p.run_id) != except);
            past.truncate(PAST_RUNS);
            if past.len() < 2 {
                continue;
            }
            let se = |lo: f64, hi: f64, rounds: i64| {
                ((hi - lo) / 2.0).max(0.0) / t975((rounds.max(2) - 1) as usize)
            };
            let now_rounds =
                m.rounds.iter().filter(|x| x.median_ns.is_some()).count() as i64;
            let mut figures: Vec<(f64, f64)> = past
                .iter()
                .map(|p| (p.median_ns, se(p.ci_low_ns, p.ci_high_ns, p.rounds)))
                .collect();
            figures.push((m.median_ns, se(m.ci_low_ns, m.ci_high_ns, now_rounds)));
            if let Some(tau) = between_runs(&figures) {
                found.push((i, tau, figures.len()));
            }
        }
        let mut widened = 0;
        for (i, tau, k) in found {
            let Some(m) = run.results[i].measured.as_mut() else {
                continue;
            };
            let own = ((m.ci_high_ns - m.ci_low_ns) / 2.0).max(0.0);
            let half = own.hypot(t975(k - 1) * tau);
            m.between_runs = Some(crate::results::BetweenRuns {
                runs: k - 1,
                sd_ns: tau,
                run_ci_low_ns: m.ci_low_ns,
                run_ci_high_ns: m.ci_high_ns,
            });
            m.ci_low_ns = m.median_ns - half;
            m.ci_high_ns = m.median_ns + half;
            widened += 1;
        }
        Ok(widened)
    }
}

/// Whether `e` is SQLite saying the file is busy or locked by another connection.
fn is_busy(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<rusqlite::Error>(),
            Some(rusqlite::Error::SqliteFailure(f, _))
                if matches!(f.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        )
    })
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
    format!(
        "{:016x} profile={} load={} cpu={} batch={}{cull}{workers}",
        fnv1a(facts.join("\n").as_bytes()),
        hs.profile,
        hs.load,
        hs.cpu.map_or("-".to_string(), |c| c.to_string()),
        hs.batch.map_or("-".to_string(), |b| b.to_string()),
    )
}

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

/// Parses a results document, refusing another tool's JSON and other schema versions
/// with one clear line before the strict parse.
pub fn parse_document(bytes: &[u8]) -> anyhow::Result<Run> {
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
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
    match value.get("schema_version").and_then(|v| v.as_u64()) {
        Some(v) if v == u64::from(SCHEMA_VERSION) => {}
        Some(v) if v > u64::from(SCHEMA_VERSION) => {
            return Err(UsageError::new(format!(
                "written by a newer syscost (results schema {v}; this one reads {SCHEMA_VERSION})"
            ))
            .into())
        }
        Some(v) => {
            return Err(UsageError::new(format!(
                "written by an older syscost (results schema {v}; this one reads \
                 {SCHEMA_VERSION}): measure again with this version"
            ))
            .into())
        }
        None => {
            return Err(
                UsageError::new("a syscost document without a schema_version").into(),
            )
        }
    }
    let run: Run = serde_json::from_value(value).map_err(|e| {
        UsageError::new(format!("a damaged syscost results document: {e}"))
    })?;
    Ok(run)
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
