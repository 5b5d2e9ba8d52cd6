//! The C interface (`include/syscost_trace.h`): the same recorder for C and C++
//! programs, linked statically (`libsyscost_trace.a`) or dynamically
//! (`libsyscost_trace.so`). Functions return 0 or a negated `errno`.

use crate::recorder;
use std::ffi::{c_char, c_int, CStr};
use std::path::PathBuf;

/// The counts `sct_stat` fills in.
#[repr(C)]
#[derive(Debug, Default)]
pub struct SctStats {
    /// Events written to the file so far.
    pub recorded: u64,
    /// Events lost because a thread's ring was full.
    pub lost: u64,
    /// Chunks written.
    pub chunks: u64,
    /// The measured cost of one event, ns.
    pub event_cost_ns: f64,
}

impl From<recorder::Stats> for SctStats {
    fn from(s: recorder::Stats) -> SctStats {
        SctStats {
            recorded: s.recorded,
            lost: s.lost,
            chunks: s.chunks,
            event_cost_ns: s.event_cost_ns,
        }
    }
}

fn errno_of(e: &std::io::Error) -> c_int {
    -(e.raw_os_error().unwrap_or(match e.kind() {
        std::io::ErrorKind::AlreadyExists => libc::EBUSY,
        std::io::ErrorKind::NotFound => libc::ENOENT,
        _ => libc::EIO,
    }))
}

fn result(r: std::io::Result<()>) -> c_int {
    match r {
        Ok(()) => 0,
        Err(e) => errno_of(&e),
    }
}

/// Opens a trace to `path` with `buffer_bytes` of ring per thread (0: the default).
/// A null `path` opens the file `SYSCOST_TRACE` names (and `-ENOENT` if it names none).
///
/// # Safety
///
/// `path` is null or points to a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn sct_open(path: *const c_char, buffer_bytes: u64) -> c_int {
    if path.is_null() {
        return match recorder::open_from_env() {
            Ok(true) => 0,
            Ok(false) => -libc::ENOENT,
            Err(e) => errno_of(&e),
        };
    }
    // SAFETY: the caller promises a NUL-terminated string.
    let bytes = unsafe { CStr::from_ptr(path) }.to_bytes();
    let path = PathBuf::from(
        <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(bytes),
    );
    let mut config = recorder::Config::new(path);
    if buffer_bytes > 0 {
        config.buffer_bytes = buffer_bytes;
    }
    result(recorder::open(&config))
}

/// Opens the trace that `SYSCOST_TRACE` names; 1 if it named one, 0 if not, or a
/// negated errno.
#[no_mangle]
pub extern "C" fn sct_open_env() -> c_int {
    match recorder::open_from_env() {
        Ok(true) => 1,
        Ok(false) => 0,
        Err(e) => errno_of(&e),
    }
}

/// Records event `id` with `arg`; nothing when no trace is open or recording is off.
#[no_mangle]
pub extern "C" fn sct_record(id: u32, arg: u64) {
    recorder::record(id, arg)
}

/// Turns recording on (non-zero) or off (0) without closing the trace.
#[no_mangle]
pub extern "C" fn sct_enable(on: c_int) -> c_int {
    result(recorder::set_enabled(on != 0))
}

/// Names event `id`.
///
/// # Safety
///
/// `name` points to a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn sct_name(id: u32, name: *const c_char) -> c_int {
    if name.is_null() {
        return -libc::EINVAL;
    }
    // SAFETY: the caller promises a NUL-terminated string.
    let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
    result(recorder::name(id, &name))
}

/// Fills `out` with the counts so far.
///
/// # Safety
///
/// `out` points to a writable `struct sct_stats`.
#[no_mangle]
pub unsafe extern "C" fn sct_stat(out: *mut SctStats) -> c_int {
    if out.is_null() {
        return -libc::EINVAL;
    }
    match recorder::stats() {
        Ok(s) => {
            // SAFETY: the caller promises a writable struct.
            unsafe { out.write(s.into()) };
            0
        }
        Err(e) => errno_of(&e),
    }
}

/// Closes the trace, writing everything recorded; `out`, when not null, receives the
/// final counts.
///
/// # Safety
///
/// `out` is null or points to a writable `struct sct_stats`.
#[no_mangle]
pub unsafe extern "C" fn sct_close(out: *mut SctStats) -> c_int {
    match recorder::close() {
        Ok(s) => {
            if !out.is_null() {
                // SAFETY: the caller promises a writable struct.
                unsafe { out.write(s.into()) };
            }
            0
        }
        Err(e) => errno_of(&e),
    }
}

/// `CLOCK_MONOTONIC_RAW` in ns: the clock of every event.
#[no_mangle]
pub extern "C" fn sct_now() -> u64 {
    recorder::now()
}
