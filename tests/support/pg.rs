//! A PostgreSQL server of a test's own: a cluster made by `initdb` in a temporary
//! directory (as the `postgres` user when the test runs as root), listening on a private
//! unix socket in that directory and on a free loopback port with a password, started
//! with `pg_ctl` and stopped (then removed) when the value is dropped, also on a panic.
//! Where the server cannot be had, [`Cluster::start`] says why, and the test skips.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The password of the cluster's superuser over TCP (the socket trusts local users).
const PASSWORD: &str = "syscost-test";

/// A running test cluster.
pub struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    as_postgres: bool,
    port: u16,
}

/// The directory of the newest installed server's programs.
fn server_bin() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("SYSCOST_PG_BIN") {
        return Some(PathBuf::from(d));
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, b)| b)
}

impl Cluster {
    /// Makes and starts a cluster; `Err` says why none can be had here.
    pub fn start() -> Result<Cluster, String> {
        let bin = server_bin().ok_or(
            "no PostgreSQL server programs in /usr/lib/postgresql/*/bin (install Debian's \
             postgresql package, or set SYSCOST_PG_BIN)",
        )?;
        let as_postgres = rustix::process::geteuid().is_root();
        if as_postgres
            && !Command::new("id")
                .args(["-u", "postgres"])
                .output()
                .is_ok_and(|o| o.status.success())
        {
            return Err(
                "running as root and there is no postgres user to run initdb as".into(),
            );
        }
        let dir = tempfile::Builder::new()
            .prefix("syscost-pg")
            .tempdir()
            .map_err(|e| format!("no temporary directory: {e}"))?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free loopback port: {e}"))?
            .port();
        let cluster = Cluster {
            dir,
            bin,
            as_postgres,
            port,
        };
        std::fs::write(cluster.dir.path().join("pw"), PASSWORD)
            .map_err(|e| e.to_string())?;
        if as_postgres {
            let ok = Command::new("chown")
                .args(["-R", "postgres:"])
                .arg(cluster.dir.path())
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                return Err(
                    "cannot hand the temporary directory to the postgres user".into()
                );
            }
        }
        let data = cluster.data();
        let pw = cluster.dir.path().join("pw");
        cluster.pg(
            "initdb",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-U".as_ref(),
                "postgres".as_ref(),
                "--auth-local=trust".as_ref(),
                "--auth-host=scram-sha-256".as_ref(),
                "--pwfile".as_ref(),
                pw.as_os_str(),
                "--no-sync".as_ref(),
                "--no-instructions".as_ref(),
                "-E".as_ref(),
                "UTF8".as_ref(),
            ],
        )?;
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60",
            cluster.port,
            cluster.dir.path().display()
        );
        let log = cluster.dir.path().join("log");
        cluster.pg(
            "pg_ctl",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-l".as_ref(),
                log.as_os_str(),
                "-o".as_ref(),
                options.as_ref(),
                "-w".as_ref(),
                "-t".as_ref(),
                "60".as_ref(),
                "start".as_ref(),
            ],
        )?;
        Ok(cluster)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Runs one of the server's programs (as postgres when root); `Err` with its output.
    fn pg(&self, program: &str, args: &[&std::ffi::OsStr]) -> Result<(), String> {
        let path = self.bin.join(program);
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&path);
            c
        } else {
            Command::new(&path)
        };
        let out = cmd
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", path.display()))?;
        if out.status.success() {
            Ok(())
        } else {
            let log =
                std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default();
            Err(format!(
                "{program} failed: {}{}{log}",
                String::from_utf8_lossy(&out.stderr),
                String::from_utf8_lossy(&out.stdout)
            ))
        }
    }

    /// The URL of database `db` over the private unix socket.
    pub fn socket_url(&self, db: &str) -> String {
        let dir: String = self
            .dir
            .path()
            .to_str()
            .expect("a text path")
            .replace('/', "%2F");
        format!("postgres://postgres@{dir}:{}/{db}", self.port)
    }

    /// The URL of database `db` over loopback TCP, with the password.
    pub fn tcp_url(&self, db: &str) -> String {
        format!(
            "postgres://postgres:{PASSWORD}@127.0.0.1:{}/{db}",
            self.port
        )
    }

    /// Makes a new, empty database.
    pub fn create_db(&self, db: &str) {
        let mut c =
            postgres::Client::connect(&self.socket_url("postgres"), postgres::NoTls)
                .expect("connect to the test cluster");
        c.batch_execute(&format!("CREATE DATABASE {db}"))
            .expect("create a database");
    }

    /// Runs SQL in database `db`.
    pub fn sql(&self, db: &str, sql: &str) {
        let mut c = postgres::Client::connect(&self.socket_url(db), postgres::NoTls)
            .expect("connect to the test cluster");
        c.batch_execute(sql).expect("SQL runs");
    }

    /// Where the cluster lives.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.data();
        if data.join("postmaster.pid").exists() {
            let _ = self.pg(
                "pg_ctl",
                &[
                    "-D".as_ref(),
                    data.as_os_str(),
                    "-m".as_ref(),
                    "immediate".as_ref(),
                    "-w".as_ref(),
                    "stop".as_ref(),
                ],
            );
        }
        // The temporary directory goes with `dir`.
    }
}
