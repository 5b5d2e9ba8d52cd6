//! The recorder end to end: what a program records reaches the file, in each thread's
//! order, with its names and totals; a full ring counts what it loses; a C program
//! linked against the static library does the same.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use syscost_trace::format::{for_each_user_event, Index, Meta};
use syscost_trace::recorder::{self, Config, MIN_BUFFER};

/// One trace per process: the tests take turns.
static TURN: Mutex<()> = Mutex::new(());

/// Each thread's events as (timestamp, id, argument), in file order.
type ByThread = std::collections::BTreeMap<u32, Vec<(u64, u32, u64)>>;

/// Every user event of the file, by thread, in file order.
fn events(path: &Path) -> (Index, ByThread) {
    let file = std::fs::File::open(path).unwrap();
    let index = Index::read(&file).unwrap();
    let mut by = std::collections::BTreeMap::new();
    for (tid, chunks) in &index.user {
        let mut v = Vec::new();
        for_each_user_event(&file, chunks, |e| v.push((e.ts, e.id, e.arg))).unwrap();
        by.insert(*tid, v);
    }
    (index, by)
}

#[test]
fn what_threads_record_reaches_the_file_in_order_with_names_and_totals() {
    let _t = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sct");
    recorder::open(&Config::new(&path)).unwrap();
    recorder::name(1, "begin").unwrap();
    recorder::name(2, "end").unwrap();
    const PER: u64 = 200_000;
    let threads: Vec<_> = (0..3u32)
        .map(|t| {
            std::thread::spawn(move || {
                for i in 0..PER {
                    syscost_trace::record(1 + t % 2, i);
                }
            })
        })
        .collect();
    for i in 0..1000 {
        syscost_trace::record(7, i);
    }
    for t in threads {
        t.join().unwrap();
    }
    let stats = recorder::close().unwrap();
    assert_eq!(stats.recorded + stats.lost, 3 * PER + 1000);
    assert!(
        stats.event_cost_ns > 0.0 && stats.event_cost_ns < 1e6,
        "{stats:?}"
    );

    let (index, by) = events(&path);
    assert_eq!(index.user_events, stats.recorded);
    assert_eq!(index.user_lost_total(), stats.lost);
    assert_eq!(by.len(), 4, "four threads");
    assert_eq!(index.names().get(&1).map(String::as_str), Some("begin"));
    assert!(index.event_cost_ns() > 0.0);
    assert!(index.meta.iter().any(
        |m| matches!(m, Meta::Close { recorded, .. } if *recorded == stats.recorded)
    ));
    for (tid, v) in &by {
        assert!(
            v.windows(2).all(|w| w[0].0 <= w[1].0),
            "thread {tid}: time goes back"
        );
        assert!(
            v.windows(2).all(|w| w[0].2 < w[1].2),
            "thread {tid}: arguments out of order"
        );
    }
    if stats.lost == 0 {
        assert!(by.values().filter(|v| v.len() as u64 == PER).count() == 3);
    }
}

#[test]
fn a_full_ring_counts_every_event_it_loses_and_never_waits() {
    let _t = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sct");
    recorder::open(&Config {
        path: path.clone(),
        buffer_bytes: MIN_BUFFER,
    })
    .unwrap();
    const N: u64 = 1_000_000;
    for i in 0..N {
        syscost_trace::record(1, i);
    }
    let stats = recorder::close().unwrap();
    let (index, by) = events(&path);
    assert_eq!(stats.recorded + stats.lost, N, "{stats:?}");
    assert!(
        stats.lost > 0,
        "a ring of {MIN_BUFFER} bytes kept up with {N} events: {stats:?}"
    );
    assert_eq!(index.user_lost_total(), stats.lost);
    let got: u64 = by.values().map(|v| v.len() as u64).sum();
    assert_eq!(got, stats.recorded);
    // Each loss window lies between the events around it.
    for (_, l) in &index.user_lost {
        assert!(l.from <= l.to && l.count > 0, "{l:?}");
    }
}

#[test]
fn recording_within_the_room_loses_nothing_however_busy_the_writer() {
    let _t = TURN.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(recorder::room(), None, "no trace open");
    let dir = tempfile::tempdir().unwrap();
    recorder::open(&Config {
        path: dir.path().join("t.sct"),
        buffer_bytes: MIN_BUFFER,
    })
    .unwrap();
    assert_eq!(
        recorder::room(),
        None,
        "no ring before this thread's first event"
    );
    syscost_trace::record(1, 0);
    let whole = recorder::room().unwrap();
    assert!(whole > 0 && whole < MIN_BUFFER, "{whole}");
    // Fill exactly the room, many times over, each time after waiting for it: never a
    // loss, whatever the writer was doing.
    let mut n = 1;
    for _ in 0..50 {
        let room = loop {
            match recorder::room().unwrap() {
                0 => std::thread::sleep(recorder::POLL),
                r => break r,
            }
        };
        for i in 0..room {
            syscost_trace::record(1, i);
        }
        n += room;
    }
    let stats = recorder::close().unwrap();
    assert_eq!(stats.lost, 0, "{stats:?}");
    assert_eq!(stats.recorded, n, "{stats:?}");
}

#[test]
fn nothing_is_recorded_without_a_trace_or_while_off() {
    let _t = TURN.lock().unwrap_or_else(|e| e.into_inner());
    syscost_trace::record(1, 1); // no trace: ignored
    assert!(recorder::stats().is_err());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sct");
    recorder::open(&Config::new(&path)).unwrap();
    assert!(
        recorder::open(&Config::new(dir.path().join("second.sct"))).is_err(),
        "one at a time"
    );
    syscost_trace::record(1, 1);
    recorder::set_enabled(false).unwrap();
    syscost_trace::record(1, 2);
    recorder::set_enabled(true).unwrap();
    syscost_trace::record(1, 3);
    let stats = recorder::close().unwrap();
    assert_eq!((stats.recorded, stats.lost), (2, 0));
    let (_, by) = events(&path);
    let args: Vec<u64> = by.values().flatten().map(|e| e.2).collect();
    assert_eq!(args, vec![1, 3]);
    assert!(recorder::close().is_err());
}

/// The static library cargo built with this test: in target/<profile>/deps/ beside the
/// test's binary, or in target/<profile>/ after an explicit build of the crate.
fn static_lib() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let deps = exe.parent()?;
    [
        deps.join("libsyscost_trace.a"),
        deps.parent()?.join("libsyscost_trace.a"),
    ]
    .into_iter()
    .find(|p| p.exists())
}

#[test]
fn a_c_program_linked_against_the_static_library_records_from_two_threads() {
    let _t = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let Some(lib) = static_lib() else {
        panic!("libsyscost_trace.a was not built next to the tests");
    };
    if std::process::Command::new("cc")
        .arg("--version")
        .output()
        .is_err()
    {
        println!("SKIPPED: no C compiler (cc) to build the C program");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("two.c");
    std::fs::write(
        &src,
        r#"
#include <pthread.h>
#include <stdio.h>
#include <syscost_trace.h>
static void *work(void *p) {
    uint32_t id = (uint32_t)(uintptr_t)p;
    for (uint64_t i = 0; i < 50000; i++) sct_record(id, i);
    return NULL;
}
int main(int argc, char **argv) {
    if (sct_open(argv[1], 0) != 0) return 3;
    sct_name(10, "left");
    sct_name(20, "right");
    pthread_t a, b;
    pthread_create(&a, NULL, work, (void *)10);
    pthread_create(&b, NULL, work, (void *)20);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    struct sct_stats s;
    if (sct_close(&s) != 0) return 4;
    printf("%llu %llu %.1f\n", (unsigned long long)s.recorded, (unsigned long long)s.lost,
           s.event_cost_ns);
    return 0;
}
"#,
    )
    .unwrap();
    let exe = dir.path().join("two");
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../include");
    let cc = std::process::Command::new("cc")
        .arg("-O2")
        .arg("-I")
        .arg(&include)
        .arg(&src)
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let path = dir.path().join("c.sct");
    let run = std::process::Command::new(&exe)
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{:?} {}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );
    let printed = String::from_utf8_lossy(&run.stdout);
    let f: Vec<&str> = printed.split_whitespace().collect();
    let (recorded, lost): (u64, u64) = (f[0].parse().unwrap(), f[1].parse().unwrap());
    assert_eq!(recorded + lost, 100_000, "{printed}");
    let (index, by) = events(&path);
    assert_eq!(index.user_events, recorded);
    assert_eq!(index.names().get(&20).map(String::as_str), Some("right"));
    let threads: Vec<_> = by.values().filter(|v| !v.is_empty()).collect();
    assert_eq!(threads.len(), 2);
    for v in threads {
        let id = v[0].1;
        assert!(v.iter().all(|e| e.1 == id), "one id per thread");
        assert!(v.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].2 < w[1].2));
    }
}

#[test]
fn a_trace_to_dev_null_opens_and_closes() {
    let _t = TURN.lock().unwrap_or_else(|e| e.into_inner());
    recorder::open(&Config::new("/dev/null")).unwrap();
    for i in 0..100_000 {
        syscost_trace::record(1, i);
    }
    let s = recorder::close().expect("closing a trace to /dev/null");
    assert_eq!(s.recorded + s.lost, 100_000);
}
