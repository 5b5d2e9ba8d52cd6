//! `ipc.unix.self`: will-it-scale's unix1, the Unix-socket twin of `ipc.pipe.self`: one
//! task writes a byte into one end of a connected stream socket pair and reads it from
//! the other; no partner, no switch. Each copy has its own pair.

use crate::bench::facts::*;
use crate::bench::{body, InRun, OrOs, Prepared};
use crate::error::BenchError;
use crate::os::task;
use std::os::fd::AsRawFd;

/// A write or read of the socket that moved no byte or failed.
#[cold]
#[inline(never)]
fn moved_none(what: &'static str) -> BenchError {
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(0) | None => BenchError::Failed(format!("{what}(2) moved no byte")),
        _ => BenchError::os(what, e),
    }
}

/// `ipc.unix.self`.
pub const UNIX_SELF: InRun = InRun {
    name: "ipc.unix.self",
    facts: Facts {
        switches: true,
        ..NAMED.on(Libc, "write, then read")
    },
    about: "write(2) of 1 byte into a Unix stream socket pair, then read(2) of it from \
            the other end, by one task (will-it-scale's unix1)",
    origin: "",
    params: &[],
    prepare: |_, _| {
        let (r, w) = task::socketpair().or_os("socketpair")?;
        let mut b = [0u8; 1];
        Ok(Prepared::new(body(move || {
            if task::write_fd(w.as_raw_fd(), &b) != 1 {
                return Err(moved_none("write"));
            }
            if task::read_fd(r.as_raw_fd(), &mut b) != 1 {
                return Err(moved_none("read"));
            }
            Ok(())
        }))
        .op("write+read pair"))
    },
};
