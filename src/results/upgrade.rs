//! Documents of an older schema this syscost still reads, brought up to
//! [`SCHEMA_VERSION`] before the strict parse (the versions are listed in
//! [`crate::report::json`]).

use super::SCHEMA_VERSION;
use serde_json::Value;

/// The oldest schema version [`upgrade`] brings up to [`SCHEMA_VERSION`].
pub const OLDEST_READ: u32 = 2;

/// Brings a document of schema 2 up to schema 3, in place: drops the fields schema 3
/// removed, which held a constant or a copy of another field and which nothing read
/// (`harness.window_below`, `window_above`, `mad_threshold`, `mad_floor`; each
/// result's `center_ns`, `reach_pct` and `counts.window`; each floor's `reach_pct`).
/// Any other document is left as it is.
pub fn upgrade(doc: &mut Value) {
    if doc.get("schema_version").and_then(Value::as_u64) != Some(2) {
        return;
    }
    let harness = ["window_below", "window_above", "mad_threshold", "mad_floor"];
    remove(doc.get_mut("harness"), &harness);
    if let Some(results) = doc.get_mut("results").and_then(Value::as_array_mut) {
        for m in results.iter_mut().filter_map(|r| r.get_mut("measured")) {
            remove(m.get_mut("counts"), &["window"]);
            remove(Some(m), &["center_ns", "reach_pct"]);
        }
    }
    let floors = doc
        .pointer_mut("/machine/floors")
        .and_then(Value::as_array_mut);
    for f in floors.into_iter().flatten() {
        remove(Some(f), &["reach_pct"]);
    }
    doc["schema_version"] = SCHEMA_VERSION.into();
}

/// Removes `keys` from `v` when it is an object.
fn remove(v: Option<&mut Value>, keys: &[&str]) {
    if let Some(o) = v.and_then(Value::as_object_mut) {
        for k in keys {
            o.remove(*k);
        }
    }
}
