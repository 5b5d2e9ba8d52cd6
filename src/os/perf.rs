//! The kernel's tracepoints through `perf_event_open`: events opened per CPU on the
//! `CLOCK_MONOTONIC_RAW` clock, one memory-mapped ring per CPU that the CPU's other
//! events are redirected into, and a reader of the ring's records.
//!
//! Everything here is released with its owner: the descriptors close and the rings
//! are unmapped on drop, and the kernel forgets the events with them, so nothing of
//! the tracing outlives the process. Tracefs is only read (for the events' ids and
//! field layouts), through a mount made in a mount namespace of a short-lived thread
//! of its own when it is not mounted already (see [`read_tracefs`]).
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{fence, AtomicU64, Ordering};

/// `PERF_TYPE_TRACEPOINT`.
const TYPE_TRACEPOINT: u32 = 2;
/// `PERF_SAMPLE_TID | TIME | CPU | RAW | IDENTIFIER`.
pub const SAMPLE_TYPE: u64 = (1 << 1) | (1 << 2) | (1 << 7) | (1 << 10) | (1 << 16);
pub(crate) const FLAG_SAMPLE_ID_ALL: u64 = 1 << 18;
pub(crate) const FLAG_USE_CLOCKID: u64 = 1 << 25;
pub(crate) const FLAG_DISABLED: u64 = 1;
/// `PERF_FLAG_FD_CLOEXEC`.
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;
const IOC_ENABLE: libc::c_ulong = 0x2400;
const IOC_DISABLE: libc::c_ulong = 0x2401;
const IOC_SET_OUTPUT: libc::c_ulong = 0x2405;
const IOC_ID: libc::c_ulong = 0x8008_2407;
/// `PERF_RECORD_LOST`.
pub const RECORD_LOST: u32 = 2;
/// `PERF_RECORD_SAMPLE`.
pub const RECORD_SAMPLE: u32 = 9;

/// `struct perf_event_attr` as of Linux 6.3 (`PERF_ATTR_SIZE_VER8`, 136 bytes); older
/// kernels accept it when the fields they do not know are zero.
#[repr(C)]
#[derive(Default)]
pub(crate) struct Attr {
    pub(crate) kind: u32,
    pub(crate) size: u32,
    pub(crate) config: u64,
    pub(crate) sample_period: u64,
    pub(crate) sample_type: u64,
    pub(crate) read_format: u64,
    pub(crate) flags: u64,
    pub(crate) wakeup_events: u32,
    pub(crate) bp_type: u32,
    pub(crate) config1: u64,
    pub(crate) config2: u64,
    pub(crate) branch_sample_type: u64,
    pub(crate) sample_regs_user: u64,
    pub(crate) sample_stack_user: u32,
    pub(crate) clockid: i32,
    pub(crate) sample_regs_intr: u64,
    pub(crate) aux_watermark: u32,
    pub(crate) sample_max_stack: u16,
    pub(crate) reserved_2: u16,
    pub(crate) aux_sample_size: u32,
    pub(crate) reserved_3: u32,
    pub(crate) sig_data: u64,
    pub(crate) config3: u64,
}

const _: () = assert!(std::mem::size_of::<Attr>() == 136);

/// One tracepoint opened on one CPU: every occurrence is sampled, on
/// `CLOCK_MONOTONIC_RAW`, with the task, time, CPU, raw fields and an id that tells
/// the events sharing a ring apart. The event starts disabled.
#[derive(Debug)]
pub struct Event {
    fd: OwnedFd,
    /// The kernel's id of this event (`PERF_EVENT_IOC_ID`), as samples carry it.
    pub id: u64,
}

impl Event {
    /// Opens tracepoint `tracepoint_id` on `cpu`, for every task.
    pub fn tracepoint(tracepoint_id: u64, cpu: u32) -> io::Result<Event> {
        let attr = Attr {
            kind: TYPE_TRACEPOINT,
            size: std::mem::size_of::<Attr>() as u32,
            config: tracepoint_id,
            sample_period: 1,
            sample_type: SAMPLE_TYPE,
            flags: FLAG_DISABLED | FLAG_SAMPLE_ID_ALL | FLAG_USE_CLOCKID,
            wakeup_events: 0,
            clockid: libc::CLOCK_MONOTONIC_RAW,
            ..Attr::default()
        };
        Event::open(&attr, -1, cpu as i32)
    }

    /// Opens the event `attr` describes for task `pid` (-1: every task) on `cpu` (-1:
    /// wherever the task runs), close-on-exec, with no group.
    pub(crate) fn open(attr: &Attr, pid: libc::pid_t, cpu: i32) -> io::Result<Event> {
        // SAFETY: `attr` is a valid perf_event_attr of the size it declares; the
        // kernel checks pid and cpu; no group; close-on-exec.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                attr as *const Attr,
                pid,
                cpu as libc::c_int,
                -1 as libc::c_int,
                PERF_FLAG_FD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a new descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) };
        let mut id = 0u64;
        // SAFETY: PERF_EVENT_IOC_ID writes one u64 through the pointer.
        let r = unsafe { libc::ioctl(fd.as_raw_fd(), IOC_ID, &mut id as *mut u64) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Event { fd, id })
    }

    /// Sends this event's records into `ring`'s buffer (same CPU, same clock).
    pub fn output_to(&self, ring: &Ring) -> io::Result<()> {
        self.ioctl(IOC_SET_OUTPUT, ring.event.fd.as_raw_fd())
    }

    /// Starts counting and sampling.
    pub fn enable(&self) -> io::Result<()> {
        self.ioctl(IOC_ENABLE, 0)
    }

    /// Stops.
    pub fn disable(&self) -> io::Result<()> {
        self.ioctl(IOC_DISABLE, 0)
    }

    /// `ioctl(fd, req, arg)` of a request that takes an integer (a descriptor) or none.
    fn ioctl(&self, req: libc::c_ulong, arg: libc::c_int) -> io::Result<()> {
        // SAFETY: an open perf event descriptor; the request reads no memory.
        let r = unsafe { libc::ioctl(self.fd.as_raw_fd(), req, arg) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// An event's memory-mapped ring: one metadata page and a power-of-two number of
/// data pages, unmapped on drop.
#[derive(Debug)]
pub struct Ring {
    event: Event,
    base: *mut u8,
    len: usize,
    data_offset: usize,
    data_size: usize,
}

// SAFETY: the mapping belongs to this value alone; the kernel writes the data area
// and `data_head`, this value reads them and writes `data_tail`, which is the protocol
// of the perf ring whatever thread does the reading.
unsafe impl Send for Ring {}

impl Ring {
    /// Maps `pages` data pages (a power of two) for `event`, which then owns the ring.
    pub fn map(event: Event, pages: usize) -> io::Result<Ring> {
        let page = super::mem::page_size();
        let pages = pages.next_power_of_two().max(1);
        let len = (pages + 1) * page;
        // SAFETY: a shared mapping of a perf event descriptor, of the length the perf
        // ABI asks for; the result is checked.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                event.fd.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base = base.cast::<u8>();
        // SAFETY: the first page is `struct perf_event_mmap_page`; data_offset and
        // data_size sit at bytes 1040 and 1048 (0 on kernels before 4.1).
        let (off, size) = unsafe {
            (
                std::ptr::read_volatile(base.add(1040).cast::<u64>()) as usize,
                std::ptr::read_volatile(base.add(1048).cast::<u64>()) as usize,
            )
        };
        let (data_offset, data_size) = if size == 0 {
            (page, pages * page)
        } else {
            (off, size)
        };
        Ok(Ring {
            event,
            base,
            len,
            data_offset,
            data_size,
        })
    }

    /// The ring's own event.
    pub fn event(&self) -> &Event {
        &self.event
    }

    fn head(&self) -> &AtomicU64 {
        // SAFETY: data_head is an aligned u64 at byte 1024 of the metadata page, which
        // stays mapped as long as `self`.
        unsafe { &*self.base.add(1024).cast::<AtomicU64>() }
    }

    fn tail(&self) -> &AtomicU64 {
        // SAFETY: data_tail is an aligned u64 at byte 1032 of the metadata page.
        unsafe { &*self.base.add(1032).cast::<AtomicU64>() }
    }

    /// Calls `f` with every record now in the ring (header included, a record that
    /// wraps the ring's end copied whole into `scratch`), then frees their space.
    pub fn read(&mut self, scratch: &mut Vec<u8>, mut f: impl FnMut(&[u8])) {
        let head = self.head().load(Ordering::Acquire);
        let mut tail = self.tail().load(Ordering::Relaxed);
        // SAFETY: the data area lies within the mapping.
        let data = unsafe {
            std::slice::from_raw_parts(self.base.add(self.data_offset), self.data_size)
        };
        while tail < head {
            let at = (tail % self.data_size as u64) as usize;
            let copy = |scratch: &mut Vec<u8>, at: usize, n: usize| {
                scratch.clear();
                let first = n.min(self.data_size - at);
                scratch.extend_from_slice(&data[at..at + first]);
                scratch.extend_from_slice(&data[..n - first]);
            };
            copy(scratch, at, 8);
            let size = u16::from_le_bytes([scratch[6], scratch[7]]) as usize;
            if size < 8 || (head - tail) < size as u64 {
                break; // damaged or incomplete: stop here, keep the rest unread
            }
            copy(scratch, at, size);
            f(scratch);
            tail += size as u64;
        }
        // Everything read must be read before the kernel may overwrite it.
        fence(Ordering::SeqCst);
        self.tail().store(tail, Ordering::Release);
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `map`; nothing refers to it after.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// A decoded `PERF_RECORD_SAMPLE` of [`SAMPLE_TYPE`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample<'a> {
    /// The event's id.
    pub id: u64,
    /// The current task's process id.
    pub pid: u32,
    /// The current task's thread id.
    pub tid: u32,
    /// `CLOCK_MONOTONIC_RAW`, ns.
    pub time: u64,
    /// The CPU.
    pub cpu: u32,
    /// The tracepoint's raw record (common fields first).
    pub raw: &'a [u8],
}

/// A record of the ring, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record<'a> {
    /// A sample.
    Sample(Sample<'a>),
    /// Records the kernel could not write because the ring was full: `count` lost
    /// before `time`.
    Lost {
        /// How many.
        count: u64,
        /// When the kernel noticed, ns (0 if unknown).
        time: u64,
    },
    /// Any other record type.
    Other(u32),
}

/// The little-endian u32 at `at` in a record (None past its end).
pub(crate) fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The little-endian u64 at `at` in a record (None past its end).
pub(crate) fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Decodes one record (header included) of an event opened with [`SAMPLE_TYPE`] and
/// `sample_id_all`; `None` when it is too short for what it claims.
pub fn parse(rec: &[u8]) -> Option<Record<'_>> {
    let kind = u32_at(rec, 0)?;
    let body = rec.get(8..)?;
    match kind {
        RECORD_SAMPLE => {
            // identifier, pid/tid, time, cpu/res, raw size + raw.
            let id = u64_at(body, 0)?;
            let pid = u32_at(body, 8)?;
            let tid = u32_at(body, 12)?;
            let time = u64_at(body, 16)?;
            let cpu = u32_at(body, 24)?;
            let size = u32_at(body, 32)? as usize;
            let raw = body.get(36..36 + size)?;
            Some(Record::Sample(Sample {
                id,
                pid,
                tid,
                time,
                cpu,
                raw,
            }))
        }
        RECORD_LOST => {
            // id, lost, then the sample_id fields: pid/tid, time, cpu/res, identifier.
            let count = u64_at(body, 8)?;
            let time = u64_at(body, 24).unwrap_or(0);
            Some(Record::Lost { count, time })
        }
        other => Some(Record::Other(other)),
    }
}

/// Reads files of tracefs: from its usual mount points when it is mounted, else
/// through a mount of its own in a private mount namespace of a short-lived thread
/// (root only), which ends with the thread. `paths` are relative to tracefs's root;
/// each gives its text or the error reading it.
pub fn read_tracefs(paths: &[String]) -> io::Result<(String, Vec<io::Result<String>>)> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let mounted = mounts
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() > 2 && f[2] == "tracefs").then(|| f[1].to_string())
        })
        .chain(
            mounts
                .lines()
                .filter(|l| l.split_whitespace().nth(2) == Some("debugfs"))
                .filter_map(|l| l.split_whitespace().nth(1))
                .map(|m| format!("{m}/tracing")),
        )
        .find(|m| std::path::Path::new(m).join("events").is_dir());
    if let Some(root) = mounted {
        let texts = paths
            .iter()
            .map(|p| std::fs::read_to_string(format!("{root}/{p}")))
            .collect();
        return Ok((format!("tracefs at {root}"), texts));
    }
    let paths = paths.to_vec();
    std::thread::Builder::new()
        .name("syscost-tracefs".into())
        .spawn(move || read_private_tracefs(&paths))?
        .join()
        .map_err(|_| io::Error::other("the tracefs reader panicked"))?
}

/// In this thread: a mount namespace of its own, with every mount private so nothing
/// propagates back, tracefs mounted on a new temporary directory, the files read, and
/// the mount and directory removed. The namespace goes with the thread.
fn read_private_tracefs(
    paths: &[String],
) -> io::Result<(String, Vec<io::Result<String>>)> {
    // SAFETY: unshare with a flag only; it affects this thread (CLONE_NEWNS implies
    // CLONE_FS, which a thread may unshare alone).
    super::sys::cvt(unsafe { libc::unshare(libc::CLONE_NEWNS) }.into())?;
    let root = c"/";
    // SAFETY: NUL-terminated strings and null data; makes every mount of this thread's
    // new namespace private, so the tracefs mount below cannot propagate elsewhere.
    let r = unsafe {
        libc::mount(
            std::ptr::null(),
            root.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    };
    super::sys::cvt(r.into())?;
    let dir = std::env::temp_dir().join(format!(
        "syscost-tracefs-{}-{}",
        std::process::id(),
        super::task::gettid()
    ));
    std::fs::create_dir(&dir)?;
    let cdir = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())
        .map_err(|_| io::Error::other("a temporary path with a NUL byte"))?;
    // SAFETY: NUL-terminated strings; mounts tracefs read-only on the new directory
    // in this thread's private namespace.
    let r = unsafe {
        libc::mount(
            c"nodev".as_ptr(),
            cdir.as_ptr(),
            c"tracefs".as_ptr(),
            libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        )
    };
    if r != 0 {
        let e = io::Error::last_os_error();
        let _ = std::fs::remove_dir(&dir);
        return Err(e);
    }
    let texts = paths
        .iter()
        .map(|p| std::fs::read_to_string(dir.join(p)))
        .collect();
    // SAFETY: unmounts what this thread mounted above, by its NUL-terminated path.
    unsafe { libc::umount2(cdir.as_ptr(), libc::MNT_DETACH) };
    std::fs::remove_dir(&dir)?;
    Ok((
        "tracefs mounted privately for the ids and formats, then unmounted".into(),
        texts,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(id: u64, tid: u32, time: u64, cpu: u32, raw: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&RECORD_SAMPLE.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes()); // size, filled below
        b.extend_from_slice(&id.to_le_bytes());
        b.extend_from_slice(&tid.to_le_bytes());
        b.extend_from_slice(&tid.to_le_bytes());
        b.extend_from_slice(&time.to_le_bytes());
        b.extend_from_slice(&cpu.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&(raw.len() as u32).to_le_bytes());
        b.extend_from_slice(raw);
        while b.len() % 8 != 0 {
            b.push(0);
        }
        let n = b.len() as u16;
        b[6..8].copy_from_slice(&n.to_le_bytes());
        b
    }

    #[test]
    fn samples_and_losses_decode_and_short_records_do_not() {
        let raw = [1u8, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
        let rec = sample(77, 1234, 5_000_000_000, 1, &raw);
        match parse(&rec) {
            Some(Record::Sample(s)) => {
                assert_eq!(
                    (s.id, s.tid, s.time, s.cpu, s.raw),
                    (77, 1234, 5_000_000_000, 1, &raw[..])
                );
            }
            other => panic!("{other:?}"),
        }
        for cut in 0..rec.len() - 4 {
            assert!(
                !matches!(parse(&rec[..cut]), Some(Record::Sample(_))),
                "cut {cut}"
            );
        }
        let mut lost = Vec::new();
        lost.extend_from_slice(&RECORD_LOST.to_le_bytes());
        lost.extend_from_slice(&[0, 0, 56, 0]);
        lost.extend_from_slice(&9u64.to_le_bytes()); // id
        lost.extend_from_slice(&42u64.to_le_bytes()); // lost
        lost.extend_from_slice(&[0; 8]); // pid, tid
        lost.extend_from_slice(&7u64.to_le_bytes()); // time
        lost.extend_from_slice(&[0; 16]); // cpu, identifier
        assert_eq!(parse(&lost), Some(Record::Lost { count: 42, time: 7 }));
        assert_eq!(parse(&[3, 0, 0, 0, 0, 0, 8, 0]), Some(Record::Other(3)));
    }
}
