//! The PostgreSQL history (`--db postgres://…`): the same tables and semantics as the
//! SQLite file, in a server that a fleet's hosts save into at once. It owns the
//! connection, the database's identity (table `syscost_meta`), the migrations and the
//! saving; it runs the queries [`super::History`] writes (`?1` read as `$1`) and knows
//! nothing of documents or statistics.
//!
//! The driver is the blocking `postgres` crate (rust-postgres), without TLS: syscost
//! is a blocking program and saves one run at a time, so an async driver would only add
//! a runtime to drive by hand; see [`connect`] for what a URL asking for TLS meets.

use super::sql::{
    Backend, NewResult, Param, Row, INSERT_DOCUMENT, INSERT_RUN, MIGRATIONS_POSTGRES,
};
use crate::error::UsageError;
use postgres::config::SslMode;
use postgres::types::ToSql;
use postgres::{Client, NoTls};
use std::time::Duration;

/// What `syscost_meta.application` holds in a syscost history.
const APPLICATION: &str = "syscost history";

/// The advisory lock that serialises the making and migrating of a history ("SYCH").
const MIGRATION_LOCK: i64 = 0x5359_4348;

/// An open PostgreSQL history.
pub(super) struct Postgres {
    client: Client,
}

/// `url` with its password hidden, for messages.
pub(super) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let authority = match authority.rsplit_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((name, _)) => format!("{name}:***@{host}"),
            None => authority.to_string(),
        },
        None => authority.to_string(),
    };
    let tail: Vec<String> = tail
        .split('&')
        .map(|kv| match kv.split_once("password=") {
            Some((before, _)) => format!("{before}password=***"),
            None => kv.to_string(),
        })
        .collect();
    format!("{scheme}://{authority}{}", tail.join("&"))
}

/// The error's chain as one line (the driver's own top line is terse).
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    for c in std::iter::successors(e.source(), |c| c.source()) {
        let t = c.to_string();
        if !s.contains(&t) {
            s += &format!(": {t}");
        }
    }
    s
}

/// Connects to the server of `url`. Without TLS support in this build, a URL with
/// `sslmode=require` is refused in one line (the default, `prefer`, falls back to a
/// plain connection, as libpq does when the server offers no TLS).
fn connect(url: &str, shown: &str) -> anyhow::Result<Client> {
    let mut config: postgres::Config = url.parse().map_err(|e| {
        UsageError::new(format!(
            "{shown} is not a PostgreSQL URL this syscost understands ({}); write \
             postgres://USER:PASSWORD@HOST:PORT/DATABASE",
            chain(&e)
        ))
    })?;
    if config.get_ssl_mode() == SslMode::Require {
        return Err(UsageError::new(format!(
            "{shown} asks for TLS (sslmode=require), which this syscost does not speak: \
             reach the server over a unix socket, a trusted network or a TLS tunnel, and \
             drop sslmode=require"
        ))
        .into());
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(10));
    }
    if config.get_application_name().is_none() {
        config.application_name("syscost");
    }
    // Not a usage error (exit code 1, not 2): the URL may be right and the server down.
    config.connect(NoTls).map_err(|e| {
        anyhow::anyhow!(
            "cannot connect to the PostgreSQL history at {shown} ({}): check that the \
             server runs and listens at that host and port, and that the URL's user, \
             password and database are right (pg_hba.conf must admit this host)",
            chain(&e)
        )
    })
}

impl Postgres {
    /// Connects to the history at `url`; with `create`, makes its tables in an empty
    /// database.
    pub(super) fn open(url: &str, create: bool) -> anyhow::Result<Postgres> {
        let shown = redact(url);
        let mut db = Postgres {
            client: connect(url, &shown)?,
        };
        db.prepare(&shown, create)
            .map_err(|e| super::unusable(e, &shown))?;
        Ok(db)
    }

    /// The schema version of the database: 0 when empty; an error for a database that
    /// holds other tables and no syscost identity.
    fn version(
        client: &mut impl postgres::GenericClient,
        shown: &str,
    ) -> anyhow::Result<i32> {
        let row = client.query_one(
            "SELECT to_regclass('syscost_meta') IS NOT NULL,
                    (SELECT count(*) FROM information_schema.tables
                      WHERE table_schema = current_schema())",
            &[],
        )?;
        let (has_meta, tables): (bool, i64) = (row.get(0), row.get(1));
        if !has_meta {
            if tables > 0 {
                return Err(UsageError::new(format!(
                    "{shown} is a PostgreSQL database but not a syscost history (it holds \
                     other tables); give another database in the URL"
                ))
                .into());
            }
            return Ok(0);
        }
        let rows = client.query("SELECT key, value FROM syscost_meta", &[])?;
        let get = |k: &str| {
            rows.iter()
                .find(|r| r.get::<_, String>(0) == k)
                .map(|r| r.get::<_, String>(1))
        };
        if get("application").as_deref() != Some(APPLICATION) {
            return Err(UsageError::new(format!(
                "{shown} is a PostgreSQL database but not a syscost history; give another \
                 database in the URL"
            ))
            .into());
        }
        get("schema")
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| anyhow::anyhow!("{shown}: syscost_meta has no schema version"))
    }

    fn prepare(&mut self, shown: &str, create: bool) -> anyhow::Result<()> {
        let version = Self::version(&mut self.client, shown)?;
        super::check_not_newer(shown, version)?;
        if version == 0 && !create {
            return Err(UsageError::new(format!(
                "no history at {shown}: nothing has been saved there yet (`syscost run \
                 --db URL` saves every run)"
            ))
            .into());
        }
        if version < super::DB_SCHEMA {
            // One transaction under an advisory lock that re-reads the version: hosts
            // making the same new history at once make it once.
            let mut tx = self.client.transaction()?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
            let version = Self::version(&mut tx, shown)?;
            super::sql::migrate(MIGRATIONS_POSTGRES, version, |step| {
                tx.batch_execute(step)
            })?;
            tx.execute(
                "INSERT INTO syscost_meta (key, value) VALUES ('application', $1), ('schema', $2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                &[&APPLICATION, &super::DB_SCHEMA.to_string()],
            )?;
            tx.commit()?;
        }
        Ok(())
    }
}

impl Backend for Postgres {
    fn insert(
        &mut self,
        run: &[&dyn Param],
        body: &[u8],
        samples: &[u8],
        results: &[NewResult],
    ) -> anyhow::Result<i64> {
        let mut tx = self.client.transaction()?;
        let returning = format!("{} RETURNING id", dollars(INSERT_RUN));
        let id: i64 = tx.query_one(&returning, &pg(run))?.get(0);
        tx.execute(&dollars(INSERT_DOCUMENT), &[&id, &body, &samples])?;
        // One statement for all the results: one round trip however many there are.
        let idx: Vec<i64> = results.iter().map(|r| r.idx).collect();
        let key: Vec<&str> = results.iter().map(|r| r.key.as_str()).collect();
        let status: Vec<&str> = results.iter().map(|r| r.status).collect();
        let median: Vec<Option<f64>> = results.iter().map(|r| r.median_ns).collect();
        let low: Vec<Option<f64>> = results.iter().map(|r| r.ci_low_ns).collect();
        let high: Vec<Option<f64>> = results.iter().map(|r| r.ci_high_ns).collect();
        let rounds: Vec<Option<i64>> = results.iter().map(|r| r.rounds).collect();
        let own_low: Vec<Option<f64>> = results.iter().map(|r| r.own_ci_low_ns).collect();
        let own_high: Vec<Option<f64>> =
            results.iter().map(|r| r.own_ci_high_ns).collect();
        tx.execute(
            "INSERT INTO results (run_id, idx, key, status, median_ns, ci_low_ns,
                                  ci_high_ns, rounds, own_ci_low_ns, own_ci_high_ns)
             SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[],
                                      $5::float8[], $6::float8[], $7::float8[],
                                      $8::bigint[], $9::float8[], $10::float8[])",
            &[
                &id, &idx, &key, &status, &median, &low, &high, &rounds, &own_low,
                &own_high,
            ],
        )?;
        tx.commit()?;
        Ok(id)
    }

    fn query(
        &mut self,
        sql: &str,
        params: &[&dyn Param],
        each: &mut dyn FnMut(Row<'_>) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        for r in self.client.query(&dollars(sql), &pg(params))? {
            each(Row::Postgres(&r))?;
        }
        Ok(())
    }

    fn remove(&mut self, id: i64) -> anyhow::Result<bool> {
        let mut tx = self.client.transaction()?;
        tx.execute("DELETE FROM results WHERE run_id = $1", &[&id])?;
        tx.execute("DELETE FROM documents WHERE run_id = $1", &[&id])?;
        let n = tx.execute("DELETE FROM runs WHERE id = $1", &[&id])?;
        tx.commit()?;
        Ok(n > 0)
    }
}

/// `sql` with its parameters written as PostgreSQL reads them: `?1` as `$1`.
fn dollars(sql: &str) -> String {
    sql.replace('?', "$")
}

/// `params` as PostgreSQL binds them.
fn pg<'a>(params: &[&'a dyn Param]) -> Vec<&'a (dyn ToSql + Sync)> {
    params.iter().map(|&p| p as _).collect()
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn passwords_never_reach_a_message() {
        assert_eq!(
            redact("postgres://u:secret@db.example:5432/h"),
            "postgres://u:***@db.example:5432/h"
        );
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(
            redact("postgresql:///h?host=/run/pg&password=secret"),
            "postgresql:///h?host=/run/pg&password=***"
        );
        assert!(!redact("postgres://a:b:c@h/d").contains('b'));
    }
}
