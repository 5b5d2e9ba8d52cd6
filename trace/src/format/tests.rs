//! The file format's tests: a file written chunk by chunk reads back, merges by
//! time, and survives being cut short or damaged.

use super::*;

fn sample_file(path: &std::path::Path) {
    let mut out = file_header().to_vec();
    let names = vec![(1, "begin".to_string())];
    write_meta(&mut out, &Meta::Names { names }).unwrap();
    let user = [10u64, 30, 50].map(|ts| UserEvent {
        ts,
        arg: ts * 2,
        id: 1,
        cpu: 0,
    });
    write_records(&mut out, ChunkKind::User, 7, &user, UserEvent::put).unwrap();
    let kernel = [20u64, 40].map(|ts| KernelEvent {
        ts,
        a: 1,
        tid: 7,
        cpu: 1,
        kind: KernelKind::TimerEntry,
        b: 0,
    });
    write_records(&mut out, ChunkKind::Kernel, 1, &kernel, KernelEvent::put).unwrap();
    write_chunk(&mut out, ChunkKind::Unknown(99), 0, 0, b"future").unwrap();
    let lost = Lost {
        from: 50,
        to: 60,
        count: 4,
    };
    write_records(&mut out, ChunkKind::UserLost, 7, &[lost], Lost::put).unwrap();
    std::fs::write(path, out).unwrap();
}

#[test]
fn a_file_round_trips_and_merges_by_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sct");
    sample_file(&path);
    let file = std::fs::File::open(&path).unwrap();
    let index = Index::read(&file).unwrap();
    assert_eq!(index.user_events, 3);
    assert_eq!(index.kernel_events, 2);
    assert_eq!(index.unknown_chunks, 1);
    assert_eq!(index.user_lost_total(), 4);
    assert_eq!(index.names()[&1], "begin");
    assert!(!index.truncated);
    let ts: Vec<u64> = merge(&file, &index)
        .unwrap()
        .map(|e| e.unwrap().ts())
        .collect();
    assert_eq!(ts, vec![10, 20, 30, 40, 50]);
}

#[test]
fn a_cut_file_is_read_to_its_last_whole_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sct");
    sample_file(&path);
    let full = std::fs::read(&path).unwrap();
    for cut in 0..full.len() {
        std::fs::write(&path, &full[..cut]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        match Index::read(&file) {
            Ok(index) => {
                assert!(cut >= FILE_HEADER_LEN);
                if let Ok(m) = merge(&file, &index) {
                    for e in m {
                        e.unwrap();
                    }
                }
            }
            Err(FormatError::NotATrace) => assert!(cut < FILE_HEADER_LEN),
            Err(e) => panic!("cut at {cut}: {e}"),
        }
    }
}

#[test]
fn damage_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sct");
    sample_file(&path);
    let full = std::fs::read(&path).unwrap();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..2000 {
        let mut bytes = full.clone();
        for _ in 0..3 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let at = (state % bytes.len() as u64) as usize;
            bytes[at] ^= (state >> 32) as u8 | 1;
        }
        std::fs::write(&path, &bytes).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        if let Ok(index) = Index::read(&file) {
            if let Ok(m) = merge(&file, &index) {
                for e in m {
                    let _ = e;
                }
            }
        }
    }
}
