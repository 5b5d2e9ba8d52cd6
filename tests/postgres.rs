//! The PostgreSQL history end to end, against a real server of the test's own
//! (`support/pg.rs`): simulated hosts save into it at once, and every command that reads
//! the history reads it back (history list/show/export/rm, host references, compare,
//! report, plot, fleet, run). Skipped, saying why, where no server can be had. Built
//! only with the `postgres` feature (the default).
#![cfg(feature = "postgres")]

#[path = "support/pg.rs"]
mod pg;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SYSCOST: &str = env!("CARGO_BIN_EXE_syscost");

fn syscost(args: &[&str]) -> Output {
    Command::new(SYSCOST)
        .args(args)
        .env_remove("SYSCOST_DB")
        .env("SYSCOST_NO_SAVE", "")
        .output()
        .expect("run syscost")
}

fn ok(args: &[&str]) -> String {
    let out = syscost(args);
    assert!(
        out.status.success(),
        "syscost {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// The fixture document as host `host`, its getpid at `getpid` ns (±1%).
fn doc_of(host: &str, getpid: f64, dir: &Path, n: usize) -> PathBuf {
    let text =
        std::fs::read_to_string("tests/fixtures/report-smoke.json").expect("fixture");
    let mut v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    v["host"]["hostname"] = host.into();
    for r in v["results"].as_array_mut().expect("results") {
        if r["name"] == "syscall.getpid" {
            let m = &mut r["measured"];
            m["median_ns"] = getpid.into();
            m["ci_low_ns"] = (getpid * 0.99).into();
            m["ci_high_ns"] = (getpid * 1.01).into();
        }
    }
    let path = dir.join(format!("{host}-{n}.json"));
    std::fs::write(&path, v.to_string()).expect("write");
    path
}

#[test]
fn a_fleet_saves_into_one_postgres_history_and_every_reader_reads_it() {
    let cluster = match pg::Cluster::start() {
        Ok(c) => c,
        Err(why) => {
            eprintln!("skipped: no PostgreSQL server: {why}");
            return;
        }
    };
    cluster.create_db("fleet");
    let url = cluster.tcp_url("fleet");
    let db = url.as_str();
    let files = tempfile::tempdir().expect("temp dir");
    // Eight hosts, two runs each, imported by eight processes at once; web-5 is 30%
    // slower at getpid.
    let hosts: Vec<String> = (0..8).map(|i| format!("web-{i}")).collect();
    let children: Vec<_> = hosts
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let base = if i == 5 {
                130.0
            } else {
                100.0 + i as f64 * 0.3
            };
            let a = doc_of(h, base, files.path(), 0);
            let b = doc_of(h, base * 1.001, files.path(), 1);
            Command::new(SYSCOST)
                .args(["history", "import", "--db", db])
                .arg(a)
                .arg(b)
                .output()
        })
        .map(|o| o.expect("spawn"))
        .collect();
    for c in &children {
        assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
    }
    let list: serde_json::Value =
        serde_json::from_str(&ok(&["history", "--db", db, "--format", "json"])).unwrap();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 16, "every run landed once");
    let mut ids: Vec<i64> = list.iter().map(|e| e["id"].as_i64().unwrap()).collect();
    ids.dedup();
    assert_eq!(ids.len(), 16);
    // One host's runs, and references to them.
    let of3 = ok(&["history", "list", "--host", "web-3", "--db", db]);
    assert_eq!(of3.lines().count(), 3, "{of3}");
    let shown = ok(&["history", "show", "host:web-3:last", "--db", db]);
    assert!(shown.contains("getpid"), "{shown}");
    let out = files.path().join("export.json");
    ok(&[
        "history",
        "export",
        "host:web-3:last~1",
        "--db",
        db,
        "-o",
        out.to_str().unwrap(),
    ]);
    let back: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(back["host"]["hostname"], "web-3");
    let e = syscost(&["history", "show", "host:nobody:last", "--db", db]);
    assert_eq!(e.status.code(), Some(2));
    // Comparison, report and plot of two hosts' runs.
    let cmp: serde_json::Value = serde_json::from_str(&ok(&[
        "compare",
        "host:web-0:last",
        "host:web-5:last",
        "--db",
        db,
        "--format",
        "json",
    ]))
    .unwrap();
    assert!(cmp["rows"].as_array().is_some_and(|r| !r.is_empty()));
    let html = files.path().join("r.html");
    ok(&[
        "report",
        "host:web-0:last",
        "last",
        "--db",
        db,
        "-o",
        html.to_str().unwrap(),
    ]);
    assert!(std::fs::read_to_string(&html).unwrap().contains("<svg"));
    let svg = ok(&[
        "plot",
        "forest",
        "host:web-0:last",
        "host:web-5:last",
        "--db",
        db,
    ]);
    assert!(svg.starts_with("<svg") || svg.starts_with("<?xml"), "{svg}");
    // The fleet: one group, web-5 the odd one.
    let f: serde_json::Value = serde_json::from_str(&ok(&[
        "fleet",
        "syscall.getpid",
        "--db",
        db,
        "--format",
        "json",
    ]))
    .unwrap();
    assert_eq!(f["groups"].as_array().unwrap().len(), 1);
    let odd: Vec<&str> = f["rows"][0]["cells"][0]["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["odd"] == true)
        .map(|h| h["host"].as_str().unwrap())
        .collect();
    assert_eq!(odd, ["web-5"]);
    let page = files.path().join("fleet.html");
    ok(&[
        "fleet",
        "--db",
        db,
        "--format",
        "html",
        "-o",
        page.to_str().unwrap(),
    ]);
    assert!(std::fs::read_to_string(&page).unwrap().contains("web-5"));
    let md = ok(&[
        "fleet",
        "syscall.getpid",
        "--db",
        db,
        "--format",
        "markdown",
    ]);
    assert!(
        md.contains("| benchmark |") && md.contains("odd: web-5"),
        "{md}"
    );
    assert_eq!(
        syscost(&["fleet", "syscall.getpid", "--db", db, "--fail-on-odd"])
            .status
            .code(),
        Some(1)
    );
    // Removing a run.
    let first = ids.last().unwrap().to_string();
    ok(&["history", "rm", &first, "--db", db]);
    assert_eq!(
        ok(&["history", "--db", db]).lines().count(),
        16,
        "header and 15 runs"
    );
    // A measured run saves into it through SYSCOST_DB, and is the newest.
    let run = Command::new(SYSCOST)
        .args([
            "run",
            "--profile",
            "smoke",
            "syscall.getpid",
            "--format",
            "json",
        ])
        .env("SYSCOST_DB", db)
        .env_remove("SYSCOST_NO_SAVE")
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let saved = String::from_utf8_lossy(&run.stderr);
    assert!(
        saved.contains("saved as run") && !saved.contains("syscost-test"),
        "{saved}"
    );
    let newest: serde_json::Value = serde_json::from_str(&ok(&[
        "history", "--db", db, "--format", "json", "--limit", "1",
    ]))
    .unwrap();
    assert_eq!(newest[0]["origin"], "run");
    // A database of another application: refused in one line, exit code 2.
    cluster.create_db("app");
    cluster.sql("app", "CREATE TABLE orders (id int)");
    let e = syscost(&["history", "--db", &cluster.socket_url("app")]);
    let msg = String::from_utf8_lossy(&e.stderr);
    assert_eq!(e.status.code(), Some(2), "{msg}");
    assert!(
        msg.contains("not a syscost history") && msg.lines().count() == 1,
        "{msg}"
    );
    // A server that is not there: one line naming it.
    drop(cluster);
    let e = syscost(&["history", "--db", db]);
    let msg = String::from_utf8_lossy(&e.stderr);
    assert_eq!(e.status.code(), Some(1), "{msg}");
    assert!(
        msg.contains("cannot connect") && msg.lines().count() == 1,
        "{msg}"
    );
}
