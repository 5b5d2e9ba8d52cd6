use super::*;
use crate::results::tests::run_with_medians;
use rusqlite::Connection;
use std::path::Path;

mod older;

fn temp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// Why opening the history at `path` is refused, as the user reads it (the chain).
fn refused(path: &Path, create: bool) -> String {
    format!("{:#}", History::open(path, create).err().expect("refused"))
}

/// Why `bytes` are refused as a results document.
fn doc_refused(bytes: &[u8]) -> String {
    parse_document(bytes).unwrap_err().to_string()
}

/// Opens one history (a new one the first time), whichever the store.
type Opener<'a> = &'a (dyn Fn() -> History + Sync);

/// A history test that runs on any store.
type StoreTest = fn(Opener<'_>);

/// The history tests that run against SQLite in [`on_sqlite`] and against PostgreSQL
/// in [`on_postgres`], each with the name of its database.
const STORE_TESTS: &[(&str, StoreTest)] = &[
    ("saves", saves_lists_loads_and_removes),
    ("concurrent", concurrent_writers_all_land),
    (
        "widening",
        past_runs_set_the_interval_only_under_the_same_conditions,
    ),
    (
        "canary",
        a_runs_canary_is_set_beside_the_same_machines_earlier_runs,
    ),
    (
        "floor",
        the_spread_between_runs_sets_the_interval_and_its_verdict,
    ),
    (
        "slow",
        a_figure_of_a_slow_state_stays_out_of_the_runs_spread,
    ),
    (
        "movement",
        the_machines_movement_between_runs_is_read_from_their_probes,
    ),
    ("labels", runs_of_other_labels_never_share_a_spread),
    ("shift", a_run_far_from_its_history_is_said_and_still_pooled),
    ("older", older::a_document_of_the_previous_schema_is_read),
];

/// The store tests on SQLite, each in a file of its own in a directory that opening
/// makes, whose integrity is checked after it.
#[test]
fn on_sqlite() {
    let dir = temp();
    for (name, test) in STORE_TESTS {
        let path = dir.path().join(name).join("history.db");
        test(&|| History::open(&path, true).expect("open the sqlite history"));
        let c = Connection::open(&path).unwrap();
        let check: String = c
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok", "{name}");
    }
}

fn saves_lists_loads_and_removes(open: Opener<'_>) {
    let mut h = open();
    let run = run_with_medians(&[("syscall.getpid", 80.0), ("ctx.pingpong", 2800.0)]);
    let a = h.save(&run, Origin::Run).expect("save");
    let b = h.save(&run, Origin::Import).expect("save");
    assert!(b > a);
    let list = h.list(None, None).expect("list");
    assert_eq!(list.iter().map(|e| e.id).collect::<Vec<_>>(), [b, a]);
    assert_eq!(list[0].origin, "import");
    assert_eq!(list[0].ok, 2);
    let back = h.load(a).expect("load");
    assert_eq!(back.results.len(), 2);
    assert_eq!(back.results[1].median_ns(), Some(2800.0));
    assert_eq!(h.nth_latest(0, None, false).unwrap(), Some(b));
    assert_eq!(h.nth_latest(1, None, false).unwrap(), Some(a));
    assert_eq!(h.nth_latest(2, None, false).unwrap(), None);
    let past = h
        .past_figures("syscall.getpid", &conditions(&run), 10)
        .unwrap();
    assert_eq!(past.len(), 1, "imports are not repetitions");
    assert_eq!(past[0].run_id, a);
    assert!(h.remove(a).unwrap());
    assert!(!h.remove(a).unwrap());
    assert_eq!(h.count().unwrap(), 1);
    let err = h.load(a).unwrap_err().to_string();
    assert!(err.contains("no run"), "{err}");
}

#[test]
fn refuses_a_foreign_database_and_a_newer_schema() {
    let dir = temp();
    let foreign = dir.path().join("other.db");
    let sql = |path: &Path, sql: &str| Connection::open(path).unwrap().execute_batch(sql);
    sql(&foreign, "CREATE TABLE t (x)").unwrap();
    let e = refused(&foreign, true);
    assert!(e.contains("not a syscost history"), "{e}");

    let newer = dir.path().join("newer.db");
    drop(History::open(&newer, true).unwrap());
    sql(&newer, "PRAGMA user_version = 99").unwrap();
    let e = refused(&newer, false);
    assert!(e.contains("newer syscost"), "{e}");

    let text = dir.path().join("text.db");
    std::fs::write(
        &text,
        "this is not sqlite at all, just some text to fill a page",
    )
    .unwrap();
    let e = refused(&text, false);
    assert!(e.contains("not"), "{e}");

    let missing = dir.path().join("missing.db");
    let e = refused(&missing, false);
    assert!(e.contains("no history"), "{e}");
    assert!(
        !missing.exists(),
        "opening to read must not create the file"
    );
}

fn concurrent_writers_all_land(open: Opener<'_>) {
    drop(open());
    let run = run_with_medians(&[("syscall.getpid", 80.0)]);
    std::thread::scope(|s| {
        for w in 0..4 {
            let mut run = run.clone();
            run.host.hostname = Some(format!("host-{w}"));
            s.spawn(move || {
                let mut h = open();
                for _ in 0..10 {
                    h.save(&run, Origin::Run).unwrap();
                }
            });
        }
    });
    let h = open();
    assert_eq!(h.count().unwrap(), 40);
    let latest = h.latest_per_host().unwrap();
    assert_eq!(latest.len(), 4, "{latest:?}");
    for (host, id) in latest {
        let runs = h.list(None, Some(&host)).unwrap();
        assert_eq!(runs.len(), 10);
        assert_eq!(runs[0].id, id);
        assert_eq!(h.nth_latest(0, Some(&host), false).unwrap(), Some(id));
        assert_eq!(
            h.nth_latest(9, Some(&host), false).unwrap(),
            Some(runs[9].id)
        );
        assert_eq!(h.nth_latest(10, Some(&host), false).unwrap(), None);
    }
}

#[test]
fn documents_are_checked_before_they_are_read() {
    let run = run_with_medians(&[("syscall.getpid", 80.0)]);
    let good = serde_json::to_vec(&run).unwrap();
    assert!(parse_document(&good).is_ok());
    let cut = &good[..good.len() / 2];
    let e = doc_refused(cut);
    assert!(e.contains("truncated"), "{e}");
    let e = doc_refused(br#"{"benchmarks": []}"#);
    assert!(e.contains("not a syscost results document"), "{e}");
    let mut v: serde_json::Value = serde_json::from_slice(&good).unwrap();
    v["schema_version"] = (SCHEMA_VERSION + 1).into();
    let e = doc_refused(v.to_string().as_bytes());
    assert!(e.contains("newer syscost"), "{e}");
    v["schema_version"] = (crate::results::OLDEST_READ - 1).into();
    let e = doc_refused(v.to_string().as_bytes());
    assert!(e.contains("older syscost"), "{e}");
    v["schema_version"] = SCHEMA_VERSION.into();
    v["results"] = "nope".into();
    let e = doc_refused(v.to_string().as_bytes());
    assert!(e.contains("damaged"), "{e}");
    assert!(parse_document(b"").is_err());
    assert!(parse_document(b"[1,2]").is_err());
}

#[test]
fn references_parse() {
    for (text, want) in [
        ("last", RunRef::Latest(Back::complete(0))),
        ("last~3", RunRef::Latest(Back::complete(3))),
        ("last!", RunRef::Latest(Back::all(0))),
        ("last!~3", RunRef::Latest(Back::all(3))),
        ("17", RunRef::Id(17)),
        (
            "host:web-17:last",
            RunRef::HostLatest("web-17".into(), Back::complete(0)),
        ),
        (
            "host:a:b:last~2",
            RunRef::HostLatest("a:b".into(), Back::complete(2)),
        ),
        (
            "host:web:last!~1",
            RunRef::HostLatest("web".into(), Back::all(1)),
        ),
    ] {
        assert_eq!(text.parse::<RunRef>().unwrap(), want);
    }
    for bad in [
        "",
        "0",
        "last~",
        "last~x",
        "-1",
        "99999999999999999999",
        "no/such/file.json",
        "host:",
        "host:web",
        "host::last",
        "host:web:first",
        "host:w:last~x",
        "last~18446744073709551616",
        "~",
        "last~~1",
        "last!!",
        "last~1!",
        "last!~",
        "host:web:last!x",
        "9223372036854775808",
        "\u{0}",
    ] {
        assert!(bad.parse::<RunRef>().is_err(), "{bad:?} accepted");
    }
}

#[test]
fn command_lines_are_quoted_only_where_needed() {
    let args: Vec<String> = ["syscost", "run", "syscall.*", "-p", "n=2,4"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(command_text(&args), "syscost run 'syscall.*' -p n=2,4");
}

fn past_runs_set_the_interval_only_under_the_same_conditions(open: Opener<'_>) {
    let mut h = open();
    // Earlier runs at 80 and 100 ns, each with a ±1% interval.
    for m in [80.0, 100.0, 80.0, 100.0] {
        h.save(&run_with_medians(&[("syscall.getpid", m)]), Origin::Run)
            .unwrap();
    }
    let mut now = run_with_medians(&[("syscall.getpid", 90.0), ("x.new", 5.0)]);
    assert_eq!(h.set_from_past_runs(&mut now).unwrap(), 1);
    let m = now.results[0].measured.as_ref().unwrap();
    let b = m.between_runs.as_ref().expect("widened");
    assert_eq!(b.runs, 4);
    assert_eq!((b.run_ci_low_ns, b.run_ci_high_ns), (89.1, 90.9));
    // The five figures' standard deviation, 10 ns, times q(5) each side.
    assert!((b.sd_ns - 10.0).abs() < 1e-9, "{b:?}");
    let side = crate::stats::rounds::centre_quantile(5) * 10.0;
    assert!((m.ci_low_ns - (90.0 - side)).abs() < 1e-9, "{m:?}");
    assert!((m.ci_high_ns - (90.0 + side)).abs() < 1e-9, "{m:?}");
    assert!(m.ci_low_ns < 80.0 && m.ci_high_ns > 100.0, "{m:?}");
    // A side of the rounds' own interval far wider than the runs' spread keeps at
    // least 1.96 of the standard errors it stands for.
    let mut lopsided = run_with_medians(&[("syscall.getpid", 90.0)]);
    let m = lopsided.results[0].measured.as_mut().unwrap();
    (m.ci_low_ns, m.ci_high_ns) = (89.9, 200.0);
    assert_eq!(h.set_from_past_runs(&mut lopsided).unwrap(), 1);
    let m = lopsided.results[0].measured.as_ref().unwrap();
    let kept =
        crate::stats::rounds::Z975 * crate::stats::rounds::standard_error(110.0, 2);
    assert!(kept > side, "{kept} {side}");
    assert!((m.ci_high_ns - (90.0 + kept)).abs() < 1e-9, "{m:?}");
    assert!((m.ci_low_ns - (90.0 - side)).abs() < 1e-9, "{m:?}");
    let new = now.results[1].measured.as_ref().unwrap();
    assert!(new.between_runs.is_none());

    // Another profile is another condition: nothing to widen by.
    let mut other = run_with_medians(&[("syscall.getpid", 90.0)]);
    other.harness.profile = "standard".into();
    assert_eq!(h.set_from_past_runs(&mut other).unwrap(), 0);
    let mut loaded = run_with_medians(&[("syscall.getpid", 90.0)]);
    loaded.harness.load = 1;
    assert_eq!(h.set_from_past_runs(&mut loaded).unwrap(), 0);

    // Another host's runs never widen this host's interval, however many there are.
    for m in [50.0, 150.0, 50.0, 150.0] {
        let mut far = run_with_medians(&[("syscall.getpid", m)]);
        far.host.hostname = Some("elsewhere".into());
        h.save(&far, Origin::Run).unwrap();
    }
    let mut again = run_with_medians(&[("syscall.getpid", 90.0)]);
    assert_eq!(h.set_from_past_runs(&mut again).unwrap(), 1);
    let b = again.results[0].measured.as_ref().unwrap();
    assert_eq!(
        b.between_runs.as_ref().unwrap().runs,
        4,
        "only testhost's runs"
    );
    assert!(b.ci_low_ns > 40.0 && b.ci_high_ns < 140.0, "{b:?}");
}

/// A run of getpid at `m` ns whose rounds gave ±`own` (relative), held to ±0.5%.
fn floored(m: f64, own: f64) -> Run {
    let mut run = run_with_medians(&[("syscall.getpid", m)]);
    let x = run.results[0].measured.as_mut().unwrap();
    (x.ci_low_ns, x.ci_high_ns) = (m * (1.0 - own), m * (1.0 + own));
    x.target_pct = Some(0.5);
    run
}

fn the_spread_between_runs_sets_the_interval_and_its_verdict(open: Opener<'_>) {
    use crate::harness::{Source, Why};
    let mut h = open();
    // Runs that agree within 0.1%, each ±0.2% by its rounds: the interval is the
    // history's.
    for m in [100.0, 100.1] {
        h.save(&floored(m, 0.002), Origin::Run).unwrap();
    }
    let mut now = floored(99.9, 0.002);
    // Its rounds were wider than the target when the run stopped it.
    let x = now.results[0].measured.as_mut().unwrap();
    x.converged = false;
    x.why = vec![Why::Wide { outlook: None }];
    assert_eq!(h.set_from_past_runs(&mut now).unwrap(), 1);
    let m = now.results[0].measured.as_ref().unwrap();
    let b = m.between_runs.as_ref().unwrap();
    assert_eq!(
        (b.run_ci_low_ns, b.run_ci_high_ns),
        (99.9 * 0.998, 99.9 * 1.002)
    );
    // Judged again against the interval it prints: within ±0.5%, converged.
    assert_eq!(m.interval_source, Some(Source::Runs));
    assert!(m.converged && m.why.is_empty(), "{m:?}");
    assert!(m
        .stop_reason
        .contains("width set by the spread of its saved runs"));
    assert!(b.sd_ns > 0.0 && b.sd_ns < 0.3, "{b:?}");
    let half = (m.ci_high_ns - m.ci_low_ns) / 2.0 / m.median_ns;
    assert!(half > 0.002 && half < 0.015, "{m:?}");
    assert_eq!(m.own_interval(), (99.9 * 0.998, 99.9 * 1.002));
    // Saved, the index keeps the rounds' own interval beside the one the history gave.
    h.save(&now, Origin::Run).unwrap();
    let cond = conditions(&now);
    let past = h.past_figures("syscall.getpid", &cond, 1).unwrap();
    assert_eq!(
        (past[0].own_ci_low_ns, past[0].own_ci_high_ns),
        (99.9 * 0.998, 99.9 * 1.002)
    );
    // Runs 10% apart: the interval is wider than the floor.
    for m in [90.0, 110.0, 90.0, 110.0] {
        h.save(&floored(m, 0.002), Origin::Run).unwrap();
    }
    let mut wide = floored(100.0, 0.002);
    assert_eq!(h.set_from_past_runs(&mut wide).unwrap(), 1);
    let m = wide.results[0].measured.as_ref().unwrap();
    assert!(m.ci_low_ns < 97.0 && m.ci_high_ns > 103.0, "{m:?}");
    // Wider than its target: not converged, for its runs' spread.
    assert!(!m.converged);
    assert!(matches!(m.why[..], [Why::RunsSpread { .. }]), "{:?}", m.why);
}

fn a_figure_of_a_slow_state_stays_out_of_the_runs_spread(open: Opener<'_>) {
    let mut h = open();
    let slow = |m: f64| {
        let mut run = floored(m, 0.002);
        run.results[0].measured.as_mut().unwrap().slow_state_pct = Some(35.0);
        run
    };
    h.save(&floored(137.4, 0.002), Origin::Run).unwrap();
    // A run met in a slow spell keeps its own interval, with or without a history.
    let mut spell = slow(187.2);
    assert_eq!(h.set_from_past_runs(&mut spell).unwrap(), 0);
    h.save(&spell, Origin::Run).unwrap();
    h.save(&floored(137.6, 0.002), Origin::Run).unwrap();
    let mut spell = slow(186.0);
    assert_eq!(h.set_from_past_runs(&mut spell).unwrap(), 0);
    let m = spell.results[0].measured.as_ref().unwrap();
    assert_eq!((m.ci_low_ns, m.ci_high_ns), (186.0 * 0.998, 186.0 * 1.002));
    // The next run's spread is the base state's runs' alone: 137.4, 137.6 and its own.
    let mut now = floored(137.5, 0.002);
    assert_eq!(h.set_from_past_runs(&mut now).unwrap(), 1);
    let m = now.results[0].measured.as_ref().unwrap();
    let b = m.between_runs.as_ref().unwrap();
    assert_eq!(b.runs, 2);
    assert!((b.sd_ns - 0.1).abs() < 1e-9, "{b:?}");
    assert!(m.ci_high_ns < 138.0, "{m:?}");
}

#[test]
fn runs_that_tie_give_an_interval_not_a_point() {
    // The same figure three times: not a point, the rounds' own standard error.
    let dir = temp();
    let mut h = History::open(&dir.path().join("tied.db"), true).unwrap();
    for _ in 0..2 {
        h.save(&floored(100.0, 0.01), Origin::Run).unwrap();
    }
    let mut tied = floored(100.0, 0.01);
    assert_eq!(h.set_from_past_runs(&mut tied).unwrap(), 1);
    let m = tied.results[0].measured.as_ref().unwrap();
    let kept = crate::stats::rounds::Z975 * crate::stats::rounds::standard_error(1.0, 2);
    assert!((m.ci_high_ns - 100.0 - kept).abs() < 1e-9, "{m:?}");
    assert!((100.0 - m.ci_low_ns - kept).abs() < 1e-9, "{m:?}");
}

#[test]
fn a_history_of_the_first_schema_is_brought_up_to_date() {
    let dir = temp();
    let path = dir.path().join("old.db");
    let c = Connection::open(&path).unwrap();
    c.execute_batch(sql::MIGRATIONS_SQLITE[0]).unwrap();
    c.execute_batch(&format!(
        "PRAGMA user_version = 1; PRAGMA application_id = {};",
        sqlite::APPLICATION_ID
    ))
    .unwrap();
    drop(c);
    its_runs_count(History::open(&path, true).unwrap());
    let c = Connection::open(&path).unwrap();
    let v: i32 = c
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, DB_SCHEMA);
}

/// Saves two runs in a history migrated from the first schema, and checks that their
/// figures set a third run's interval.
fn its_runs_count(mut h: History) {
    for m in [100.0, 100.1] {
        h.save(&floored(m, 0.002), Origin::Run).unwrap();
    }
    let mut now = floored(99.9, 0.002);
    assert_eq!(h.set_from_past_runs(&mut now).unwrap(), 1);
}

/// A run whose canary read `ns` throughout.
fn run_at_speed(ns: f64) -> Run {
    let mut run = run_with_medians(&[("syscall.getpid", 90.0)]);
    run.machine = crate::results::MachineStates {
        readings: 100,
        states: vec![crate::stats::rounds::State {
            median_ns: ns,
            share: 1.0,
            count: 100,
        }],
        ..Default::default()
    };
    run
}

fn a_runs_canary_is_set_beside_the_same_machines_earlier_runs(open: Opener<'_>) {
    let mut h = open();
    // One earlier run is not enough to say what the machine's speed was.
    h.save(&run_at_speed(140.0), Origin::Run).unwrap();
    let mut now = run_at_speed(175.0);
    assert!(!h.machine_against_past(&mut now, None).unwrap());
    assert_eq!(now.machine.past, None);
    for ns in [138.0, 139.0] {
        h.save(&run_at_speed(ns), Origin::Run).unwrap();
    }
    // Imports and other hosts do not count.
    h.save(&run_at_speed(500.0), Origin::Import).unwrap();
    let mut far = run_at_speed(60.0);
    far.host.hostname = Some("elsewhere".into());
    h.save(&far, Origin::Run).unwrap();
    assert!(h.machine_against_past(&mut now, None).unwrap());
    let p = now.machine.past.clone().expect("set");
    assert_eq!(p.runs, 3);
    assert_eq!((p.median_ns, p.low_ns, p.high_ns), (139.0, 138.0, 140.0));
    assert!((p.ratio - 175.0 / 139.0).abs() < 1e-12, "{p:?}");
    assert!(p.differs());
    // A run already saved is left out of its own comparison.
    let id = h.save(&now, Origin::Run).unwrap();
    let mut saved = h.load_with(id, false).unwrap();
    assert!(h.machine_against_past(&mut saved, Some(id)).unwrap());
    assert_eq!(saved.machine.past.as_ref().unwrap().runs, 3);
    // Within 5% of them: the same speed.
    let mut steady = run_at_speed(141.0);
    assert!(h.machine_against_past(&mut steady, None).unwrap());
    let p = steady.machine.past.unwrap();
    assert_eq!(p.runs, 4);
    assert!(!p.differs(), "{p:?}");
    // Without canary readings there is nothing to set beside them.
    let mut blind = run_with_medians(&[("syscall.getpid", 90.0)]);
    assert!(!h.machine_against_past(&mut blind, None).unwrap());
}

/// A run whose probes read `syscall_ns` for getpid and 1000 ns for a fault.
fn run_with_probes(syscall_ns: f64) -> Run {
    use crate::harness::probe::WorkKind;
    let mut run = run_with_medians(&[("syscall.getpid", 90.0)]);
    run.machine.floors = [(WorkKind::Syscall, syscall_ns), (WorkKind::Memory, 1000.0)]
        .into_iter()
        .map(|(kind, median_ns)| crate::results::Floor {
            kind,
            probe: kind.probe().to_string(),
            readings: 40,
            median_ns,
            spread_pct: 3.0,
            floor_pct: 1.0,
            rounds: 8,
            within_pct: None,
            between_pct: None,
            past_runs: None,
        })
        .collect();
    run
}

fn the_machines_movement_between_runs_is_read_from_their_probes(open: Opener<'_>) {
    use crate::harness::probe::WorkKind;
    let mut h = open();
    for ns in [100.0, 103.0] {
        h.save(&run_with_probes(ns), Origin::Run).unwrap();
    }
    // Two runs do not say how far the machine moves.
    assert_eq!(
        super::movement(&h.past_machines(&run_with_probes(0.0), None).unwrap()),
        vec![]
    );
    h.save(&run_with_probes(97.0), Origin::Run).unwrap();
    // Another host's runs do not count.
    let mut far = run_with_probes(500.0);
    far.host.hostname = Some("elsewhere".into());
    h.save(&far, Origin::Run).unwrap();
    let moves = super::movement(&h.past_machines(&run_with_probes(0.0), None).unwrap());
    let logs = [100.0f64.ln(), 103.0f64.ln(), 97.0f64.ln()];
    let mean = logs.iter().sum::<f64>() / 3.0;
    let s = (logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
    let syscall = moves.iter().find(|m| m.0 == WorkKind::Syscall).unwrap();
    assert_eq!(syscall.1, 3);
    // t(0.975, 2) = 4.303, times √2: about ±18% for three runs 3% apart.
    assert!(
        (syscall.2 - 4.303 * std::f64::consts::SQRT_2 * s).abs() < 1e-3,
        "{moves:?}"
    );
    // A probe that read alike in every run moved by nothing.
    let memory = moves.iter().find(|m| m.0 == WorkKind::Memory).unwrap();
    assert_eq!((memory.1, memory.2), (3, 0.0));
    assert!(moves
        .iter()
        .all(|m| m.0 == WorkKind::Syscall || m.0 == WorkKind::Memory));
}

/// The same history tests against a real PostgreSQL server (a cluster of the test's
/// own), one database each; skipped with the reason where no server can be had.
#[cfg(feature = "postgres")]
#[test]
fn on_postgres() {
    let cluster = match pg::Cluster::start() {
        Ok(c) => c,
        Err(why) => {
            eprintln!("skipped: no PostgreSQL server: {why}");
            return;
        }
    };
    for (name, test) in STORE_TESTS {
        cluster.create_db(name);
        let url = cluster.tcp_url(name);
        test(&|| {
            History::open(Path::new(&url), true).expect("open the postgres history")
        });
    }
    // A history of the first schema is brought up to date when opened, and its runs
    // count.
    cluster.create_db("first_schema");
    cluster.sql("first_schema", sql::MIGRATIONS_POSTGRES[0]);
    cluster.sql(
        "first_schema",
        "INSERT INTO syscost_meta (key, value) VALUES ('application', 'syscost history'), \
         ('schema', '1')",
    );
    let url = cluster.tcp_url("first_schema");
    its_runs_count(History::open(Path::new(&url), false).expect("migrated"));
    // Reading a database nothing was saved in is refused, and creates nothing.
    cluster.create_db("empty");
    let e = refused(Path::new(&cluster.socket_url("empty")), false);
    assert!(e.contains("no history"), "{e}");
    // A database of another application is refused in one line.
    cluster.create_db("other_app");
    cluster.sql("other_app", "CREATE TABLE accounts (id int)");
    let e = refused(Path::new(&cluster.socket_url("other_app")), true);
    assert!(
        e.contains("not a syscost history") && !e.contains('\n'),
        "{e}"
    );
    // A newer syscost's history is refused.
    cluster.sql(
        "saves",
        "UPDATE syscost_meta SET value = '99' WHERE key = 'schema'",
    );
    let e = refused(Path::new(&cluster.tcp_url("saves")), false);
    assert!(e.contains("newer syscost"), "{e}");
    // A wrong password: one line naming the server, never the password.
    let wrong = cluster.tcp_url("saves").replace("syscost-test", "hunter2");
    let e = refused(Path::new(&wrong), false);
    assert!(
        e.contains("cannot connect") && e.contains("127.0.0.1"),
        "{e}"
    );
    assert!(!e.contains("hunter2"), "{e}");
}

#[cfg(feature = "postgres")]
#[path = "../../tests/support/pg.rs"]
mod pg;

#[test]
fn damaged_documents_never_panic() {
    // Truncations and byte flips of a real document: each is an error or a document,
    // never a panic.
    let run = run_with_medians(&[("syscall.getpid", 80.0), ("ctx.pingpong", 2800.0)]);
    let good = serde_json::to_vec(&run).unwrap();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || crate::stats::rounds::splitmix(&mut state);
    let mut errors = 0;
    for cut in 0..good.len() {
        errors += usize::from(parse_document(&good[..cut]).is_err());
    }
    assert_eq!(errors, good.len(), "every strict prefix is refused");
    for _ in 0..5000 {
        let mut bytes = good.clone();
        for _ in 0..1 + next() % 4 {
            let i = (next() % bytes.len() as u64) as usize;
            bytes[i] = (next() & 0xff) as u8;
        }
        let _ = parse_document(&bytes);
    }
}

#[test]
fn a_url_is_never_a_file_name() {
    assert_eq!(
        url_scheme(Path::new("postgres://u@h:5432/db")),
        Some("postgres")
    );
    assert_eq!(url_scheme(Path::new("sqlite+x://f")), Some("sqlite+x"));
    assert_eq!(url_scheme(Path::new("/tmp/a://b")), None);
    assert_eq!(url_scheme(Path::new("history.db")), None);
    let d = tempfile::tempdir().unwrap();
    let url = d.path().join("x").join("postgres://h/db");
    assert!(
        url_scheme(&url).is_none(),
        "a path with a directory before it"
    );
    let e = refused(Path::new("mysql://h/db"), true);
    assert!(e.contains("mysql://"), "{e}");
    assert!(!Path::new("mysql:").exists(), "nothing was created");
}

/// A result's `entry` is saved and loaded with its run, and is no part of a row's key: a
/// run saved before the field existed (no `entry`) pairs with one that has it.
#[test]
fn entries_round_trip_and_leave_a_rows_key_alone() {
    use crate::bench::via::EntryPath;
    let dir = temp();
    let mut h = History::open(&dir.path().join("history.db"), true).expect("create");
    let old = run_with_medians(&[("syscall.getpid", 80.0)]);
    assert_eq!(old.results[0].entry, None);
    let doc = serde_json::to_string(&old).unwrap();
    assert!(!doc.contains("\"entry\""), "no entry, no field");
    let a = h.save(&old, Origin::Run).expect("save");
    let mut new = old.clone();
    new.results[0].entry = Some(EntryPath::Libc);
    let b = h.save(&new, Origin::Run).expect("save");
    assert_eq!(h.load(a).unwrap().results[0].entry, None);
    assert_eq!(h.load(b).unwrap().results[0].entry, Some(EntryPath::Libc));
    let past = h
        .past_figures("syscall.getpid", &conditions(&new), 10)
        .unwrap();
    let ids: Vec<_> = past.iter().map(|p| p.run_id).collect();
    assert!(ids.contains(&a) && ids.contains(&b), "{ids:?}");
}

/// A run of three rows at `scale` times 80 ns, 1 µs and 50 µs, with `labels`.
fn three_rows(scale: f64, labels: &[&str]) -> Run {
    let mut run = run_with_medians(&[
        ("syscall.getppid", 80.0 * scale),
        ("ctx.pingpong", 1000.0 * scale),
        ("proc.fork", 50_000.0 * scale),
    ]);
    run.labels = labels.iter().map(|l| l.to_string()).collect();
    run
}

fn runs_of_other_labels_never_share_a_spread(open: Opener<'_>) {
    let mut h = open();
    // Side a at 1.00 ± 1%, side b (a change the host facts cannot see) 40% slower.
    for (scale, label) in [
        (1.0, "a"),
        (1.4, "b"),
        (1.01, "a"),
        (1.41, "b"),
        (0.99, "a"),
    ] {
        h.save(&three_rows(scale, &[label]), Origin::Run).unwrap();
    }
    let mut now = three_rows(1.0, &["a"]);
    assert_eq!(h.set_from_past_runs(&mut now).unwrap(), 3);
    for r in &now.results {
        let m = r.measured.as_ref().unwrap();
        assert_eq!(m.between_runs.as_ref().unwrap().runs, 3, "{m:?}");
        // Only side a's spread: about 1%, never the 40% between the sides.
        assert!(m.relative_ci() < 0.05, "{} {}", r.name, m.relative_ci());
    }
    // An unlabelled run has no earlier runs under its conditions here.
    assert_eq!(h.set_from_past_runs(&mut three_rows(1.0, &[])).unwrap(), 0);
    // The history lists each run's labels.
    let list = h.list(None, None).unwrap();
    assert_eq!(list[0].labels, "a");
    assert_eq!(list[1].labels, "b");
    let mut two = three_rows(1.0, &["tracer=on", "kernel=6.12"]);
    two.labels.sort();
    h.save(&two, Origin::Run).unwrap();
    assert_eq!(
        h.list(Some(1), None).unwrap()[0].labels,
        "kernel=6.12,tracer=on"
    );
    assert!(conditions(&two).contains("labels=kernel=6.12,tracer=on"));
}

fn a_run_far_from_its_history_is_said_and_still_pooled(open: Opener<'_>) {
    let mut h = open();
    for scale in [1.0, 1.01, 0.99] {
        h.save(&three_rows(scale, &[]), Origin::Run).unwrap();
    }
    // A run within the spread is not said.
    let mut same = three_rows(1.005, &[]);
    assert_eq!(h.shift(&mut same).unwrap(), None);
    assert!(same.shift.is_none());
    // Every row 30% slower: a change the history cannot see.
    let mut moved = three_rows(1.3, &[]);
    let a = h.shift(&mut moved).unwrap().expect("said");
    assert_eq!((a.rows, a.moved, a.past_runs), (3, 3, 3));
    assert!((a.median_change - 0.3).abs() < 1e-3, "{a:?}");
    // A report, not a condition: the run's key is the one it would have had.
    let key = conditions(&moved);
    moved.shift = None;
    assert_eq!(key, conditions(&moved));
    h.save(&moved, Origin::Run).unwrap();
    let mut later = three_rows(1.0, &[]);
    assert_eq!(h.set_from_past_runs(&mut later).unwrap(), 3);
    let m = later.results[0].measured.as_ref().unwrap();
    assert_eq!(m.between_runs.as_ref().unwrap().runs, 4);
    // One row moving alone is not "many rows together".
    let mut one = three_rows(1.0, &[]);
    one.results[0].measured.as_mut().unwrap().median_ns *= 1.5;
    assert_eq!(h.shift(&mut one).unwrap(), None);
}

#[test]
fn a_side_is_a_label_a_range_or_a_list_of_runs() {
    let dir = temp();
    let path = dir.path().join("history.db");
    let mut h = History::open(&path, true).unwrap();
    for (scale, label) in [(1.0, "a"), (1.4, "b"), (1.01, "a"), (1.41, "b")] {
        h.save(&three_rows(scale, &[label]), Origin::Run).unwrap();
    }
    let mut broken = three_rows(1.0, &["a"]);
    broken.complete = false;
    h.save(&broken, Origin::Run).unwrap();
    let ids = |spec: &str| -> Vec<i64> {
        resolve_side(spec, Some(&path), false)
            .unwrap()
            .runs
            .iter()
            .map(|(l, _)| l.id.unwrap())
            .collect()
    };
    // Every complete run carrying the label, oldest first; the interrupted one left out.
    assert_eq!(ids("label:a"), [1, 3]);
    assert_eq!(ids("label:b"), [2, 4]);
    assert_eq!(ids("last~3..last~1"), [1, 2, 3]);
    assert_eq!(ids("3..1"), [1, 2, 3]);
    assert_eq!(ids("4,2"), [2, 4]);
    // `last` is the newest complete run; `last!` counts the interrupted one too, and a
    // range holds every run between its ends.
    assert_eq!(ids("last"), [4]);
    assert_eq!(ids("last!"), [5]);
    assert_eq!(ids("last~1..last!"), [3, 4, 5]);
    let err =
        |spec: &str| format!("{:#}", resolve_side(spec, Some(&path), false).unwrap_err());
    let e = err("label:c");
    assert!(
        e.contains("no complete run") && e.contains("carries c"),
        "{e}"
    );
    let e = err("label:");
    assert!(e.contains("label:NAME"), "{e}");
    let e = err("last..nope");
    assert!(e.contains("each end is a history id or last~N"), "{e}");
    let e = err("last~9..last");
    assert!(e.contains("names no complete run"), "{e}");
}

/// Saves runs of `host`, complete or not, in order; their ids.
fn save_runs(h: &mut History, host: &str, complete: &[bool]) -> Vec<i64> {
    complete
        .iter()
        .map(|&done| {
            let mut run = three_rows(1.0, &[]);
            run.host.hostname = Some(host.to_string());
            run.complete = done;
            h.save(&run, Origin::Run).unwrap()
        })
        .collect()
}

#[test]
fn last_names_complete_runs_and_says_which_newer_ones_it_passed_over() {
    let dir = temp();
    let path = dir.path().join("history.db");
    let mut h = History::open(&path, true).unwrap();
    // 1 and 2 complete, 3 interrupted, 4 complete, 5 and 6 interrupted; then host b's.
    let ids = save_runs(&mut h, "a", &[true, true, false, true, false, false]);
    assert_eq!(ids, [1, 2, 3, 4, 5, 6]);
    save_runs(&mut h, "b", &[true, false]);
    assert_eq!(h.nth_latest(0, Some("a"), false).unwrap(), Some(4));
    assert_eq!(h.nth_latest(0, Some("a"), true).unwrap(), Some(6));
    let named = |r: &str| resolve(&[r.to_string()], Some(&path), false).unwrap();
    let one = |r: &str| {
        let n = named(r);
        (n.runs[0].0.id.unwrap(), n.skipped)
    };
    // `last` passes over 6 and 5, newer and interrupted, and says so.
    let (id, skipped) = one("host:a:last");
    assert_eq!(id, 4);
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0].newer, [6, 5]);
    let said = skipped[0].to_string();
    assert!(
        said.starts_with(
            "host:a:last is run 4: runs 6 and 5, newer, are incomplete (interrupted)"
        ),
        "{said}"
    );
    assert!(
        said.contains("by its id") && said.contains("last!"),
        "{said}"
    );
    // last~1 counts complete runs: 2, passing over 3 as well.
    let (id, skipped) = one("host:a:last~1");
    assert_eq!((id, skipped[0].newer.clone()), (2, vec![6, 5, 3]));
    // Over all hosts: the newest complete run is b's; 8, newer, is interrupted.
    let (id, skipped) = one("last");
    assert_eq!((id, skipped[0].newer.clone()), (7, vec![8]));
    let said = skipped[0].to_string();
    assert_eq!(
        said,
        "last is run 7: run 8, newer, is incomplete (interrupted); name it by its id, or \
         write last! (which counts incomplete runs), to use it"
    );
    // `last!` counts every run and says nothing; an id names an interrupted run.
    assert_eq!(one("last!"), (8, vec![]));
    assert_eq!(one("host:a:last!~1"), (5, vec![]));
    assert_eq!(one("3"), (3, vec![]));
    assert!(!named("3").runs[0].0.complete);
    // Host b's own: 8 is interrupted, its newest.
    assert_eq!(one("host:b:last").1[0].newer, [8]);
    // Counting back past the complete runs says how many there are of each kind.
    let e = format!(
        "{:#}",
        resolve(&["host:a:last~3".into()], Some(&path), false).unwrap_err()
    );
    assert!(
        e.contains("holds 3 complete runs") && e.contains("3 incomplete"),
        "{e}"
    );
    assert!(e.contains("last!~N"), "{e}");
    // A side's notes come back with its runs.
    let side = resolve_side("last~1..last", Some(&path), false).unwrap();
    let side_ids: Vec<i64> = side.runs.iter().map(|(l, _)| l.id.unwrap()).collect();
    assert_eq!(side_ids, [4, 5, 6, 7]);
    assert_eq!(side.skipped.len(), 2, "{:?}", side.skipped);
}
