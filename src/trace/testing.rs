//! Hand-written trace files and events for the tests of `cull`, `export` and `reduce`.

use super::format::{
    file_header, write_meta, write_records, ChunkKind, KernelEvent, KernelKind, Lost,
    Meta, UserEvent,
};

/// A user event with argument 0.
pub(crate) fn user(ts: u64, id: u32, cpu: u32) -> UserEvent {
    UserEvent {
        ts,
        arg: 0,
        id,
        cpu,
    }
}

/// A kernel event with `a` and `b` 0.
pub(crate) fn kernel(ts: u64, cpu: u32, tid: u32, kind: KernelKind) -> KernelEvent {
    KernelEvent {
        ts,
        a: 0,
        tid,
        cpu,
        kind,
        b: 0,
    }
}

/// Writes a trace to `path`: events 1 and 2 named `begin` and `end`, each thread's user
/// events, then CPU 0's kernel events and its losses (when there are any).
pub(crate) fn write_trace(
    path: &std::path::Path,
    user: &[(u32, Vec<UserEvent>)],
    kernel: &[KernelEvent],
    lost: &[Lost],
) {
    let mut out = file_header().to_vec();
    let names = vec![(1, "begin".into()), (2, "end".into())];
    write_meta(&mut out, &Meta::Names { names }).unwrap();
    for (tid, events) in user {
        write_records(&mut out, ChunkKind::User, *tid, events, UserEvent::put).unwrap();
    }
    write_records(&mut out, ChunkKind::Kernel, 0, kernel, KernelEvent::put).unwrap();
    if !lost.is_empty() {
        write_records(&mut out, ChunkKind::KernelLost, 0, lost, Lost::put).unwrap();
    }
    std::fs::write(path, out).unwrap();
}
