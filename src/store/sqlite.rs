//! The SQLite history: one file, bundled SQLite, nothing to install. It owns the file's
//! identity (application id, `user_version`), its locking and its SQL; it knows nothing
//! of documents or statistics (those are [`super::History`]'s).

use super::{Backend, Entry, NewResult, NewRun, PastFigure, Stored, MIGRATIONS_SQLITE};
use crate::error::UsageError;
use anyhow::Context;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use std::path::Path;
use std::time::Duration;

/// "SYCH" (syscost history): the SQLite application id of a history file.
pub(super) const APPLICATION_ID: i32 = 0x5359_4348;

/// An open SQLite history.
pub(super) struct Sqlite {
    conn: Connection,
}

impl Sqlite {
    /// Opens (or, with `create`, makes) the history file at `path`.
    pub(super) fn open(path: &Path, create: bool) -> anyhow::Result<Sqlite> {
        let shown = path.display();
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
        let db = Sqlite { conn };
        // Several processes making the same new history at once: the ones that find it
        // locked (SQLite does not wait on every lock, switching to WAL for one) try
        // again for a while.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let mut prepared = db.prepare(path);
        while prepared.as_ref().is_err_and(is_busy)
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(20));
            prepared = db.prepare(path);
        }
        prepared.map_err(|e| super::unusable(e, &shown.to_string()))?;
        Ok(db)
    }

    /// Checks the file's identity and schema, migrating an older one.
    fn prepare(&self, path: &Path) -> anyhow::Result<()> {
        let shown = path.display();
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
        super::check_not_newer(&shown.to_string(), version)?;
        // WAL lets readers and one writer go on at once; it is a property of the file.
        let _: String = self
            .conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        self.conn.execute_batch("PRAGMA foreign_keys = ON")?;
        if version < super::DB_SCHEMA {
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
        for (i, step) in MIGRATIONS_SQLITE
            .iter()
            .enumerate()
            .skip(version.max(0) as usize)
        {
            tx.execute_batch(step)
                .with_context(|| format!("migrating the history to schema {}", i + 1))?;
        }
        tx.execute_batch(&format!(
            "PRAGMA user_version = {}; PRAGMA application_id = {APPLICATION_ID};",
            super::DB_SCHEMA
        ))?;
        tx.commit()?;
        Ok(())
    }
}

fn entry(r: &rusqlite::Row<'_>) -> rusqlite::Result<Entry> {
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
}

impl Backend for Sqlite {
    fn insert(
        &mut self,
        run: &NewRun<'_>,
        body: &[u8],
        samples: &[u8],
        results: &[NewResult],
    ) -> anyhow::Result<i64> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            "INSERT INTO runs (started_unix_s, saved_unix_s, origin, hostname, kernel, command,
                               profile, complete, n_ok, n_skipped, n_failed, doc_schema,
                               conditions, labels)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            params![
                run.started_unix_s,
                run.saved_unix_s,
                run.origin,
                run.hostname,
                run.kernel,
                run.command,
                run.profile,
                run.complete,
                run.n_ok,
                run.n_skipped,
                run.n_failed,
                run.doc_schema,
                run.conditions,
                run.labels,
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
                                      ci_high_ns, rounds, own_ci_low_ns, own_ci_high_ns)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?;
            for r in results {
                insert.execute(params![
                    id,
                    r.idx,
                    r.key,
                    r.status,
                    r.median_ns,
                    r.ci_low_ns,
                    r.ci_high_ns,
                    r.rounds,
                    r.own_ci_low_ns,
                    r.own_ci_high_ns
                ])?;
            }
        }
        tx.commit()?;
        Ok(id)
    }

    fn list(
        &mut self,
        limit: Option<usize>,
        host: Option<&str>,
    ) -> anyhow::Result<Vec<Entry>> {
        let mut q = self.conn.prepare(
            "SELECT id, started_unix_s, origin, hostname, kernel, command, profile, complete,
                    n_ok, n_skipped, n_failed, labels
             FROM runs WHERE (?2 IS NULL OR hostname = ?2) ORDER BY id DESC LIMIT ?1",
        )?;
        let limit = limit.map(|l| l as i64).unwrap_or(-1);
        let rows = q.query_map(params![limit, host], entry)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn count(&mut self) -> anyhow::Result<i64> {
        Ok(self
            .conn
            .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))?)
    }

    fn nth_latest(
        &mut self,
        back: usize,
        host: Option<&str>,
        all: bool,
    ) -> anyhow::Result<Option<i64>> {
        Ok(self
            .conn
            .query_row(
                "SELECT id FROM runs WHERE (?2 IS NULL OR hostname = ?2)
                 AND (?3 OR complete <> 0)
                 ORDER BY id DESC LIMIT 1 OFFSET ?1",
                params![back as i64, host, all],
                |r| r.get(0),
            )
            .optional()?)
    }

    fn document(
        &mut self,
        id: i64,
        with_samples: bool,
    ) -> anyhow::Result<Option<Stored>> {
        let column = if with_samples { "samples" } else { "NULL" };
        Ok(self
            .conn
            .query_row(
                &format!(
                    "SELECT encoding, body, {column} FROM documents WHERE run_id = ?1"
                ),
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?)
    }

    fn remove(&mut self, id: i64) -> anyhow::Result<bool> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute("DELETE FROM results WHERE run_id = ?1", [id])?;
        tx.execute("DELETE FROM documents WHERE run_id = ?1", [id])?;
        let n = tx.execute("DELETE FROM runs WHERE id = ?1", [id])?;
        tx.commit()?;
        Ok(n > 0)
    }

    fn past_figures(
        &mut self,
        key: &str,
        conditions: &str,
        limit: usize,
    ) -> anyhow::Result<Vec<PastFigure>> {
        let mut q = self.conn.prepare_cached(
            "SELECT r.run_id, r.median_ns, coalesce(r.own_ci_low_ns, r.ci_low_ns),
                    coalesce(r.own_ci_high_ns, r.ci_high_ns)
             FROM results r JOIN runs u ON u.id = r.run_id
             WHERE r.key = ?1 AND u.conditions = ?2 AND u.origin != 'import'
               AND r.status = 'ok' AND r.median_ns IS NOT NULL
             ORDER BY r.run_id DESC LIMIT ?3",
        )?;
        let rows = q.query_map(params![key, conditions, limit as i64], |r| {
            Ok(PastFigure {
                run_id: r.get(0)?,
                median_ns: r.get(1)?,
                own_ci_low_ns: r.get(2)?,
                own_ci_high_ns: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn latest_per_host(&mut self) -> anyhow::Result<Vec<(String, i64)>> {
        let mut q = self.conn.prepare(
            "SELECT hostname, max(id) FROM runs GROUP BY hostname ORDER BY hostname",
        )?;
        let rows = q.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn recent_runs(
        &mut self,
        conditions: &str,
        limit: usize,
    ) -> anyhow::Result<Vec<i64>> {
        let mut q = self.conn.prepare_cached(
            "SELECT id FROM runs WHERE conditions = ?1 AND origin != 'import'
             ORDER BY id DESC LIMIT ?2",
        )?;
        let rows = q.query_map(params![conditions, limit as i64], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn size_bytes(&mut self) -> anyhow::Result<Option<i64>> {
        Ok(Some(self.conn.query_row(
            "SELECT (SELECT page_count FROM pragma_page_count)
                    * (SELECT page_size FROM pragma_page_size)",
            [],
            |r| r.get(0),
        )?))
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
