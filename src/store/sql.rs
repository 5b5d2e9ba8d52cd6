//! What the two stores share: the schema each one's migrations make, the rows a save
//! writes, and the [`Backend`] through which [`super::History`] runs the same SQL on
//! either.

use anyhow::Context;

/// The statements that bring an SQLite history from schema `i` to `i + 1`, in order.
pub(super) const MIGRATIONS_SQLITE: &[&str] = &[
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
    // 1 → 2: each result's interval from its rounds alone, before the machine's floor
    // (NULL where the floor did not widen it, and in runs saved before).
    "ALTER TABLE results ADD COLUMN own_ci_low_ns REAL;
     ALTER TABLE results ADD COLUMN own_ci_high_ns REAL;",
    // 2 → 3: the user's labels of each run (`run --label`), as `labels_text` writes
    // them ('' for none and in runs saved before).
    "ALTER TABLE runs ADD COLUMN labels TEXT NOT NULL DEFAULT '';",
];

/// The statements that bring a PostgreSQL history from schema `i` to `i + 1`: the same
/// tables and columns as [`MIGRATIONS_SQLITE`], in PostgreSQL's types, and its identity.
#[cfg(feature = "postgres")]
pub(super) const MIGRATIONS_POSTGRES: &[&str] = &[
    // 0 → 1: the first schema.
    "CREATE TABLE syscost_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
     CREATE TABLE runs (
        id BIGSERIAL PRIMARY KEY,
        started_unix_s DOUBLE PRECISION NOT NULL,
        saved_unix_s DOUBLE PRECISION NOT NULL,
        origin TEXT NOT NULL,
        hostname TEXT NOT NULL,
        kernel TEXT NOT NULL,
        command TEXT NOT NULL,
        profile TEXT NOT NULL,
        complete BOOLEAN NOT NULL,
        n_ok BIGINT NOT NULL,
        n_skipped BIGINT NOT NULL,
        n_failed BIGINT NOT NULL,
        doc_schema BIGINT NOT NULL,
        conditions TEXT NOT NULL
     );
     CREATE INDEX runs_by_host ON runs(hostname, id);
     CREATE TABLE documents (
        run_id BIGINT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
        encoding TEXT NOT NULL,
        body BYTEA NOT NULL,
        samples BYTEA NOT NULL
     );
     CREATE TABLE results (
        run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        idx BIGINT NOT NULL,
        key TEXT NOT NULL,
        status TEXT NOT NULL,
        median_ns DOUBLE PRECISION,
        ci_low_ns DOUBLE PRECISION,
        ci_high_ns DOUBLE PRECISION,
        rounds BIGINT,
        PRIMARY KEY (run_id, idx)
     );
     CREATE INDEX results_by_key ON results(key, run_id);",
    // 1 → 2: as in SQLite.
    "ALTER TABLE results ADD COLUMN own_ci_low_ns DOUBLE PRECISION;
     ALTER TABLE results ADD COLUMN own_ci_high_ns DOUBLE PRECISION;",
    // 2 → 3: as in SQLite.
    "ALTER TABLE runs ADD COLUMN labels TEXT NOT NULL DEFAULT '';",
];

/// Applies the migrations `steps` from schema `version` up, each by `run`.
pub(super) fn migrate<E: std::error::Error + Send + Sync + 'static>(
    steps: &[&str],
    version: i32,
    mut run: impl FnMut(&str) -> Result<(), E>,
) -> anyhow::Result<()> {
    for (i, step) in steps.iter().enumerate().skip(version.max(0) as usize) {
        run(step)
            .with_context(|| format!("migrating the history to schema {}", i + 1))?;
    }
    Ok(())
}

/// Saves a run's row of table `runs`, its values in the order of these columns.
pub(super) const INSERT_RUN: &str =
    "INSERT INTO runs (started_unix_s, saved_unix_s, origin, hostname, kernel, command,
                       profile, complete, n_ok, n_skipped, n_failed, doc_schema,
                       conditions, labels)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)";

/// Saves a run's document: the run's id, the body, the samples.
pub(super) const INSERT_DOCUMENT: &str =
    "INSERT INTO documents (run_id, encoding, body, samples)
     VALUES (?1, 'json+deflate', ?2, ?3)";

/// A row of table `results` that a save writes.
pub(super) struct NewResult {
    pub(super) idx: i64,
    pub(super) key: String,
    pub(super) status: &'static str,
    pub(super) median_ns: Option<f64>,
    pub(super) ci_low_ns: Option<f64>,
    pub(super) ci_high_ns: Option<f64>,
    pub(super) rounds: Option<i64>,
    pub(super) own_ci_low_ns: Option<f64>,
    pub(super) own_ci_high_ns: Option<f64>,
}

/// What a store does: it runs SQL, nothing more. [`super::History`] holds one and writes
/// the queries (documents, compression, widening too), so the same code runs on either.
pub(super) trait Backend: Send {
    /// Saves one run's rows in one transaction (`run`: its row of table `runs`, as
    /// [`INSERT_RUN`] takes it); returns its id.
    fn insert(
        &mut self,
        run: &[&dyn Param],
        body: &[u8],
        samples: &[u8],
        results: &[NewResult],
    ) -> anyhow::Result<i64>;
    /// Runs query `sql`, its parameters written `?1`, `?2`, … (PostgreSQL's store reads
    /// every `?` as `$`, so no other `?` may appear), handing `each` every row.
    fn query(
        &mut self,
        sql: &str,
        params: &[&dyn Param],
        each: &mut dyn FnMut(Row<'_>) -> anyhow::Result<()>,
    ) -> anyhow::Result<()>;
    /// Removes a run in one transaction; false if there was none.
    fn remove(&mut self, id: i64) -> anyhow::Result<bool>;
}

/// A value a query binds, which either store takes.
#[cfg(feature = "postgres")]
pub(super) trait Param: rusqlite::ToSql + postgres::types::ToSql + Sync {}
#[cfg(feature = "postgres")]
impl<T: rusqlite::ToSql + postgres::types::ToSql + Sync> Param for T {}
/// A value a query binds.
#[cfg(not(feature = "postgres"))]
pub(super) trait Param: rusqlite::ToSql {}
#[cfg(not(feature = "postgres"))]
impl<T: rusqlite::ToSql> Param for T {}

/// A value a query reads from a column, which either store gives.
#[cfg(feature = "postgres")]
pub(super) trait Column:
    rusqlite::types::FromSql + for<'a> postgres::types::FromSql<'a>
{
}
#[cfg(feature = "postgres")]
impl<T: rusqlite::types::FromSql + for<'a> postgres::types::FromSql<'a>> Column for T {}
/// A value a query reads from a column.
#[cfg(not(feature = "postgres"))]
pub(super) trait Column: rusqlite::types::FromSql {}
#[cfg(not(feature = "postgres"))]
impl<T: rusqlite::types::FromSql> Column for T {}

/// A row of a query's answer, from either store.
pub(super) enum Row<'a> {
    Sqlite(&'a rusqlite::Row<'a>),
    #[cfg(feature = "postgres")]
    Postgres(&'a postgres::Row),
}

impl Row<'_> {
    /// Column `i`.
    pub(super) fn get<T: Column>(&self, i: usize) -> anyhow::Result<T> {
        Ok(match self {
            Row::Sqlite(r) => r.get(i)?,
            #[cfg(feature = "postgres")]
            Row::Postgres(r) => r.try_get(i)?,
        })
    }
}
