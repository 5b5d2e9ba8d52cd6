//! The export's tests: a small trace exported in both formats, the JSON parsed and its
//! slices checked to nest per track, the protobuf decoded packet by packet.

use super::*;
use crate::trace::format::KernelKind;
use crate::trace::reduce::parse_spec;
use crate::trace::testing;

fn trace(dir: &std::path::Path) -> std::path::PathBuf {
    let user = [
        (1000, 1),
        (1100, 1),
        (1150, 2),
        (1300, 2),
        (2000, 1),
        (2100, 2),
    ];
    let user = user.map(|(ts, id)| testing::user(ts, id, 0)).to_vec();
    let kernel = [
        (1120, KernelKind::TimerEntry),
        (1130, KernelKind::TimerExit),
        (1500, KernelKind::Switch),
    ];
    let kernel = kernel.map(|(ts, kind)| KernelEvent {
        a: 236,
        ..testing::kernel(ts, 0, 7, kind)
    });
    let path = dir.join("t.sct");
    testing::write_trace(&path, &[(7, user)], &kernel, &[]);
    path
}

fn dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("syscost-export-{name}-"))
        .tempdir()
        .unwrap()
}

#[test]
fn chrome_json_parses_names_everything_and_slices_nest_per_track() {
    let d = dir("json");
    let path = trace(d.path());
    let file = std::fs::File::open(&path).unwrap();
    let index = Index::read(&file).unwrap();
    let spec = parse_spec("interval call = begin -> end", &index.names()).unwrap();
    let mut out = Vec::new();
    let n = export(&file, &index, &spec, 0, ExportFormat::ChromeJson, &mut out).unwrap();
    assert_eq!((n.user_events, n.kernel_events, n.intervals), (6, 3, 3));
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.starts_with("{\"displayTimeUnit\":\"ns\""),
        "displayTimeUnit first"
    );
    assert!(text.is_ascii());
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let xs: Vec<&serde_json::Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    assert_eq!(xs.len(), 4, "three intervals and one timer interrupt");
    // On each track, X events nest or follow each other.
    let mut by: BTreeMap<(u64, u64), Vec<(f64, f64)>> = BTreeMap::new();
    for x in &xs {
        let ts: f64 = x["ts"].as_f64().unwrap();
        let dur: f64 = x["dur"].as_f64().unwrap();
        by.entry((x["pid"].as_u64().unwrap(), x["tid"].as_u64().unwrap()))
            .or_default()
            .push((ts, ts + dur));
    }
    for v in by.values_mut() {
        v.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        let mut stack: Vec<f64> = Vec::new();
        for (s, e) in v.iter() {
            while stack.last().is_some_and(|&end| end <= *s) {
                stack.pop();
            }
            if let Some(&end) = stack.last() {
                assert!(*e <= end, "overlapping slices on one track: {v:?}");
            }
            stack.push(*e);
        }
    }
    // The interval holding the tick says so; the nested one is 50 ns long.
    let culled: Vec<&&serde_json::Value> = xs
        .iter()
        .filter(|x| x["args"]["culled_by"] == "timer")
        .collect();
    assert_eq!(culled.len(), 2, "both intervals around the tick");
    assert!(xs.iter().any(|x| x["dur"].as_f64() == Some(0.05)));
}

/// Reads a protobuf message's top-level fields: (field, wire type, value or bytes).
fn fields(mut b: &[u8]) -> Vec<(u32, u8, u64, Vec<u8>)> {
    fn varint(b: &mut &[u8]) -> u64 {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let byte = b[0];
            *b = &b[1..];
            v |= ((byte & 0x7f) as u64) << shift;
            if byte < 0x80 {
                return v;
            }
            shift += 7;
        }
    }
    let mut out = Vec::new();
    while !b.is_empty() {
        let k = varint(&mut b);
        let (field, wire) = ((k >> 3) as u32, (k & 7) as u8);
        match wire {
            0 => out.push((field, 0, varint(&mut b), vec![])),
            2 => {
                let n = varint(&mut b) as usize;
                out.push((field, 2, 0, b[..n].to_vec()));
                b = &b[n..];
            }
            w => panic!("unexpected wire type {w}"),
        }
    }
    out
}

#[test]
fn the_perfetto_trace_decodes_into_packets_on_the_raw_clock() {
    let d = dir("pf");
    let path = trace(d.path());
    let file = std::fs::File::open(&path).unwrap();
    let index = Index::read(&file).unwrap();
    let spec = parse_spec("interval call = begin -> end", &index.names()).unwrap();
    let mut out = Vec::new();
    export(&file, &index, &spec, 0, ExportFormat::Perfetto, &mut out).unwrap();
    let packets = fields(&out);
    assert!(
        packets.iter().all(|p| p.0 == 1 && p.1 == 2),
        "a Trace of packets only"
    );
    let decoded: Vec<_> = packets.iter().map(|p| fields(&p.3)).collect();
    let has = |p: &Vec<(u32, u8, u64, Vec<u8>)>, f: u32| p.iter().any(|x| x.0 == f);
    assert!(has(&decoded[0], 6), "a clock snapshot first");
    let snap = fields(&decoded[0].iter().find(|x| x.0 == 6).unwrap().3);
    assert!(
        snap.iter().any(|x| x.0 == 2 && x.2 == 5),
        "MONOTONIC_RAW is the trace's clock"
    );
    let tracks = decoded.iter().filter(|p| has(p, 60)).count();
    assert_eq!(
        tracks,
        1 + 1 + 1 + 1,
        "process, thread, CPU and interval tracks"
    );
    let events: Vec<_> = decoded.iter().filter(|p| has(p, 11)).collect();
    // 6 instants, 3 kernel (one slice = 2 packets, one instant), 3 intervals × 2.
    assert_eq!(events.len(), 6 + 3 + 6);
    for e in &events {
        assert!(
            e.iter().any(|x| x.0 == 58 && x.2 == 5),
            "every event on clock 5"
        );
        assert!(e.iter().any(|x| x.0 == 8), "every event has a timestamp");
    }
}
