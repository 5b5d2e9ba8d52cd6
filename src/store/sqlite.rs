//! The SQLite history: one file, bundled SQLite, nothing to install. It owns the file's
//! identity (application id, `user_version`), its locking and its saving; it runs the
//! queries [`super::History`] writes and knows nothing of documents or statistics.

use super::sql::{
    Backend, NewResult, Param, Row, INSERT_DOCUMENT, INSERT_RUN, MIGRATIONS_SQLITE,
};
use crate::error::UsageError;
use anyhow::Context;
use rusqlite::{params, Connection, TransactionBehavior};
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
        super::sql::migrate(MIGRATIONS_SQLITE, version, |step| tx.execute_batch(step))?;
        tx.execute_batch(&format!(
            "PRAGMA user_version = {}; PRAGMA application_id = {APPLICATION_ID};",
            super::DB_SCHEMA
        ))?;
        tx.commit()?;
        Ok(())
    }
}

impl Backend for Sqlite {
    fn insert(
        &mut self,
        run: &[&dyn Param],
        body: &[u8],
        samples: &[u8],
        results: &[NewResult],
    ) -> anyhow::Result<i64> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(INSERT_RUN, lite(run).as_slice())?;
        let id = tx.last_insert_rowid();
        tx.execute(INSERT_DOCUMENT, params![id, body, samples])?;
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

    fn query(
        &mut self,
        sql: &str,
        params: &[&dyn Param],
        each: &mut dyn FnMut(Row<'_>) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let mut q = self.conn.prepare_cached(sql)?;
        let mut rows = q.query(lite(params).as_slice())?;
        while let Some(r) = rows.next()? {
            each(Row::Sqlite(r))?;
        }
        Ok(())
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
}

/// `params` as SQLite binds them.
fn lite<'a>(params: &[&'a dyn Param]) -> Vec<&'a dyn rusqlite::ToSql> {
    params.iter().map(|&p| p as _).collect()
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
