//! Documents of the previous schema in a history.

use super::Opener;
use crate::store::{deflate, parse_document, Origin};

/// A run saved by a syscost of schema 2 (tests/fixtures/schema2-getpid.json, written by
/// `syscost run syscall.getpid --profile smoke --format json`) loads without the fields
/// schema 3 removed and with nothing else lost; its machine is set beside a new run's;
/// it compares.
pub(super) fn a_document_of_the_previous_schema_is_read(open: Opener<'_>) {
    let old = include_bytes!("../../../tests/fixtures/schema2-getpid.json");
    let run = parse_document(old).expect("a schema 2 document is read");
    let mut doc: serde_json::Value = serde_json::from_slice(old).unwrap();
    let samples = [doc["results"][0]["measured"]["samples"].take()];
    let samples = deflate(&serde_json::to_vec(&samples).unwrap()).unwrap();
    let mut h = open();
    let json = serde_json::to_vec(&doc).unwrap();
    let id = h.save_json(&run, Origin::Run, &json, &samples).unwrap();
    let back = h.load(id).expect("loaded");
    let mut upgraded: serde_json::Value = serde_json::from_slice(old).unwrap();
    crate::results::upgrade(&mut upgraded);
    assert_eq!(serde_json::to_value(&back).unwrap(), upgraded);
    let (was, is) = (String::from_utf8_lossy(old), upgraded.to_string());
    for gone in [
        "window_below",
        "mad_floor",
        "center_ns",
        "reach_pct",
        "\"window\"",
    ] {
        assert!(was.contains(gone) && !is.contains(gone), "{gone}");
    }
    assert_eq!(
        h.past_machines(&run, None).unwrap()[0].floors,
        run.machine.floors
    );
    let label = crate::compare::RunLabel::of("1", Some(id), &back);
    let c = crate::compare::compare((&label, &back), (&label, &run), 0.05);
    assert_eq!(c.rows.len(), 1, "{c:?}");
}
