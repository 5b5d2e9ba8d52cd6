//! Floods the recorder: N events from two threads into a trace file at the default
//! ring size, then prints what reached the file, what was lost, and the rates.
//!
//!     cargo run --release -p syscost-trace --example flood -- [EVENTS] [RATE] [FILE]
//!
//! EVENTS (default 10,000,000) are split between the two threads. RATE is the events
//! per second both threads together aim at (0, the default: as fast as they can). The
//! file (default in the temporary directory) is removed afterwards unless named.

use std::time::Instant;
use syscost_trace::format::Index;
use syscost_trace::recorder::{self, Config};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let events: u64 = args
        .get(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000_000);
    let rate: f64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(0.0);
    let keep = args.get(3).is_some();
    let path = args
        .get(3)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::env::temp_dir().join(format!("syscost-flood-{}.sct", std::process::id()))
        });
    recorder::open(&Config::new(&path)).expect("open");
    let per = events / 2;
    let start = Instant::now();
    let threads: Vec<_> = (0..2u32)
        .map(|t| {
            std::thread::spawn(move || {
                let begin = recorder::now();
                let ns_per_event = if rate > 0.0 { 2e9 / rate } else { 0.0 };
                for i in 0..per {
                    if ns_per_event > 0.0 {
                        // Pace: wait until this event's time comes.
                        let due = begin + (i as f64 * ns_per_event) as u64;
                        while recorder::now() < due {
                            std::hint::spin_loop();
                        }
                    }
                    syscost_trace::record(t + 1, i);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let recording = start.elapsed();
    let stats = recorder::close().expect("close");
    let total = start.elapsed();
    let file = std::fs::File::open(&path).unwrap();
    let index = Index::read(&file).unwrap();
    assert_eq!(index.user_events, stats.recorded);
    let bytes = index.bytes;
    if !keep {
        std::fs::remove_file(&path).unwrap();
    }
    println!(
        "{} events from 2 threads ({}): {} in the file, {} lost; event cost {:.1} ns",
        events,
        if rate > 0.0 {
            format!("paced at {:.1} M/s", rate / 1e6)
        } else {
            "unpaced".into()
        },
        stats.recorded,
        stats.lost,
        stats.event_cost_ns
    );
    println!(
        "recording {:.3} s ({:.1} M events/s offered); until the file was complete {:.3} s: \
         the writer wrote {:.1} M events/s ({:.0} MB/s, {} MB)",
        recording.as_secs_f64(),
        events as f64 / recording.as_secs_f64() / 1e6,
        total.as_secs_f64(),
        stats.recorded as f64 / total.as_secs_f64() / 1e6,
        bytes as f64 / total.as_secs_f64() / 1e6,
        bytes / 1_000_000
    );
}
