//! A minimal io_uring through the raw system calls: one ring with a few entries, its
//! submission and completion queues mapped into this process, and a write of a buffer
//! to a descriptor submitted and reaped one at a time.
//!
//! The kernel's structures are declared here by hand (linux/io_uring.h); only the
//! fields this module uses are read. The `io-uring` crate was tried for the setup and
//! the queues: `svc.uring.write` times filling the entry, the system call and taking
//! the completion, and through the crate that write measured about 2% slower (slower
//! in 96 of 150 alternated pairs with `wait=wait`), so the ring stays raw: here the
//! ring is the thing measured. Dropping a [`Ring`] unmaps all three mappings and
//! then closes the ring's descriptor.
//!
//! # Safety
//! The mappings are made from the offsets the kernel returned by io_uring_setup and
//! live as long as the ring; the head and tail words shared with the kernel are read
//! and written only through atomics; an SQE slot is written only while this process
//! owns it (between the completion of its previous use and the next tail update).
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};

const IORING_OFF_SQ_RING: i64 = 0;
const IORING_OFF_CQ_RING: i64 = 0x800_0000;
const IORING_OFF_SQES: i64 = 0x1000_0000;
const IORING_OP_WRITE: u8 = 23;
/// `io_uring_enter` flag: wait for `min_complete` completions.
pub const IORING_ENTER_GETEVENTS: u32 = 1;
/// Submission flag: do not try the request inline, hand it to an io-wq worker thread.
pub const IOSQE_ASYNC: u8 = 1 << 4;

#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct SqOffsets {
    head: u32,
    tail: u32,
    ring_mask: u32,
    ring_entries: u32,
    flags: u32,
    dropped: u32,
    array: u32,
    resv1: u32,
    user_addr: u64,
}

#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct CqOffsets {
    head: u32,
    tail: u32,
    ring_mask: u32,
    ring_entries: u32,
    overflow: u32,
    cqes: u32,
    flags: u32,
    resv1: u32,
    user_addr: u64,
}

#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct Params {
    sq_entries: u32,
    cq_entries: u32,
    flags: u32,
    sq_thread_cpu: u32,
    sq_thread_idle: u32,
    features: u32,
    wq_fd: u32,
    resv: [u32; 3],
    sq_off: SqOffsets,
    cq_off: CqOffsets,
}

#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct Sqe {
    opcode: u8,
    flags: u8,
    ioprio: u16,
    fd: i32,
    off: u64,
    addr: u64,
    len: u32,
    rw_flags: u32,
    user_data: u64,
    buf_index: u16,
    personality: u16,
    splice_fd_in: i32,
    addr3: u64,
    pad2: u64,
}

#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct Cqe {
    user_data: u64,
    res: i32,
    flags: u32,
}

const _: () = assert!(std::mem::size_of::<Sqe>() == 64);
const _: () = assert!(std::mem::size_of::<Cqe>() == 16);
const _: () = assert!(std::mem::size_of::<Params>() == 120);

/// One shared mapping, unmapped when dropped.
struct Map {
    ptr: *mut u8,
    len: usize,
}

impl Map {
    fn new(fd: RawFd, len: usize, offset: i64) -> io::Result<Map> {
        // SAFETY: a fresh shared mapping of the ring at a kernel-defined offset; no
        // existing memory is affected.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd,
                offset as libc::off_t,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Map {
            ptr: ptr.cast(),
            len,
        })
    }

    /// The u32 at byte offset `off`, shared with the kernel.
    fn word(&self, off: u32) -> *const AtomicU32 {
        debug_assert!(off as usize + 4 <= self.len);
        // SAFETY: the kernel's offsets lie inside the mapping and are 4-byte aligned.
        unsafe { self.ptr.add(off as usize).cast::<AtomicU32>() }
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`; no pointer into it is used
        // after the ring is dropped.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// Why a ring could not be set up.
#[derive(Debug)]
pub enum SetupError {
    /// The kernel has no io_uring, or it is disabled or forbidden here (ENOSYS,
    /// EPERM, EACCES): skip, with this reason.
    Unavailable(String),
    /// Anything else: a failure.
    Failed(io::Error),
}

/// An io_uring with its queues mapped, and the buffer its writes come from. A write's
/// buffer must outlive the kernel's use of it, so the ring owns it: dropping the ring
/// first waits for the writes still in flight (and if it cannot, leaks the buffer
/// rather than free memory the kernel may read). Fields are then dropped in order: the
/// mappings, then the descriptor.
pub struct Ring {
    source: Box<[u8]>,
    in_flight: u32,
    /// Flags set on every submission entry (e.g. [`IOSQE_ASYNC`]).
    sqe_flags: u8,
    sq_ring: Map,
    cq_ring: Map,
    sqes: Map,
    sq_head: *const AtomicU32,
    sq_tail: *const AtomicU32,
    sq_mask: u32,
    sq_array: *mut u32,
    cq_head: *const AtomicU32,
    cq_tail: *const AtomicU32,
    cq_mask: u32,
    cqes: *const Cqe,
    fd: OwnedFd,
}

/// `/proc/sys/kernel/io_uring_disabled`: 0 allowed, 1 only for privileged or
/// `io_uring_group` members, 2 disabled (absent on kernels without the knob).
pub fn disabled_setting() -> Option<u32> {
    std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Sorts an io_uring_setup error: no kernel support, or a refusal, is a reason to
/// skip; anything else is a failure.
pub fn setup_error(e: io::Error) -> SetupError {
    match e.raw_os_error() {
        Some(libc::ENOSYS) => SetupError::Unavailable(
            "io_uring_setup: this kernel has no io_uring (ENOSYS)".into(),
        ),
        Some(libc::EPERM) | Some(libc::EACCES) => SetupError::Unavailable(format!(
            "io_uring_setup refused ({e}); /proc/sys/kernel/io_uring_disabled is {}",
            disabled_setting().map_or("absent".to_string(), |v| v.to_string())
        )),
        _ => SetupError::Failed(e),
    }
}

impl Ring {
    /// A ring of `entries` submission entries whose writes come from `source`.
    pub fn new(entries: u32, source: Box<[u8]>) -> Result<Ring, SetupError> {
        let mut p = Params::default();
        // SAFETY: `p` is a valid, writable io_uring_params the kernel fills in.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_uring_setup,
                entries as libc::c_long,
                &mut p as *mut Params,
            )
        };
        if r < 0 {
            return Err(setup_error(io::Error::last_os_error()));
        }
        // SAFETY: a fresh descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(r as RawFd) };
        let raw = fd.as_raw_fd();
        let fail = SetupError::Failed;
        let sq_len = p.sq_off.array as usize + p.sq_entries as usize * 4;
        let cq_len = p.cq_off.cqes as usize + p.cq_entries as usize * 16;
        let sq_ring = Map::new(raw, sq_len, IORING_OFF_SQ_RING).map_err(fail)?;
        let cq_ring = Map::new(raw, cq_len, IORING_OFF_CQ_RING).map_err(fail)?;
        let sqes =
            Map::new(raw, p.sq_entries as usize * 64, IORING_OFF_SQES).map_err(fail)?;
        // SAFETY: the masks lie inside the rings (offsets from the kernel); they are
        // constant after setup.
        let (sq_mask, cq_mask) = unsafe {
            (
                (*sq_ring.word(p.sq_off.ring_mask)).load(Ordering::Relaxed),
                (*cq_ring.word(p.cq_off.ring_mask)).load(Ordering::Relaxed),
            )
        };
        Ok(Ring {
            source,
            in_flight: 0,
            sqe_flags: 0,
            sq_head: sq_ring.word(p.sq_off.head),
            sq_tail: sq_ring.word(p.sq_off.tail),
            sq_mask,
            sq_array: sq_ring.word(p.sq_off.array) as *mut u32,
            cq_head: cq_ring.word(p.cq_off.head),
            cq_tail: cq_ring.word(p.cq_off.tail),
            cq_mask,
            // SAFETY: the CQE array's offset lies inside the CQ ring mapping.
            cqes: unsafe { cq_ring.ptr.add(p.cq_off.cqes as usize) }.cast::<Cqe>(),
            sq_ring,
            cq_ring,
            sqes,
            fd,
        })
    }

    /// Queues a write of the first `len` bytes of the ring's source buffer (all of it
    /// if shorter) to `fd` (at offset 0) and makes it visible to the kernel; `enter`
    /// submits it. Returns false when the submission queue is full.
    #[inline(always)]
    pub fn queue_write(&mut self, fd: RawFd, len: usize, user_data: u64) -> bool {
        self.push(Sqe {
            opcode: IORING_OP_WRITE,
            flags: self.sqe_flags,
            fd,
            addr: self.source.as_ptr() as u64,
            len: len.min(self.source.len()) as u32,
            user_data,
            ..Sqe::default()
        })
    }

    /// Queues an `IORING_OP_NOP` (no operation: the submission and completion path
    /// alone) and makes it visible to the kernel. Returns false when the queue is full.
    #[inline(always)]
    pub fn queue_nop(&mut self, user_data: u64) -> bool {
        self.push(Sqe {
            opcode: 0, // IORING_OP_NOP
            flags: self.sqe_flags,
            fd: -1,
            user_data,
            ..Sqe::default()
        })
    }

    /// Writes `sqe` into the next free slot of the submission queue and publishes it
    /// to the kernel; false when the queue is full.
    #[inline(always)]
    fn push(&mut self, sqe: Sqe) -> bool {
        // SAFETY: head and tail are words of the live SQ ring mapping.
        let (head, tail) = unsafe {
            (
                (*self.sq_head).load(Ordering::Acquire),
                (*self.sq_tail).load(Ordering::Relaxed),
            )
        };
        if tail.wrapping_sub(head) > self.sq_mask {
            return false;
        }
        let idx = tail & self.sq_mask;
        // SAFETY: slot `idx` is inside the SQE array and not owned by the kernel (the
        // queue is not full); the array entry likewise; the tail store publishes both.
        unsafe {
            self.sqes.ptr.cast::<Sqe>().add(idx as usize).write(sqe);
            self.sq_array.add(idx as usize).write(idx);
            (*self.sq_tail).store(tail.wrapping_add(1), Ordering::Release);
        }
        self.in_flight += 1;
        true
    }

    /// Sets the flags of every later submission entry ([`IOSQE_ASYNC`]: each write is
    /// handed to a kernel worker instead of being tried inline).
    pub fn set_sqe_flags(&mut self, flags: u8) {
        self.sqe_flags = flags;
    }

    /// Confines this thread's io-wq workers (the kernel threads that run requests handed
    /// off with [`IOSQE_ASYNC`]) to `cpus`: `IORING_REGISTER_IOWQ_AFF` for the workers
    /// to come, and the workers that already exist (named `iou-wrk-<this thread's id>`,
    /// kept by the kernel across rings until they idle out) moved there too, since the
    /// registration alone does not move them. Returns how many existing workers moved.
    pub fn set_worker_cpus(&self, cpus: &[usize]) -> io::Result<usize> {
        self.register_worker_cpus(cpus)?;
        let own = format!("iou-wrk-{}", rustix::thread::gettid().as_raw_nonzero());
        let mut moved = 0;
        for e in std::fs::read_dir("/proc/self/task")?.flatten() {
            let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
            let tid = e.file_name().to_str().and_then(|t| t.parse::<i32>().ok());
            if let (true, Some(tid)) = (comm.trim_end() == own, tid) {
                match super::affinity::set_thread_cpus(tid, cpus) {
                    Ok(()) => moved += 1,
                    // It exited meanwhile.
                    Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(moved)
    }

    fn register_worker_cpus(&self, cpus: &[usize]) -> io::Result<()> {
        const IORING_REGISTER_IOWQ_AFF: libc::c_long = 17;
        // SAFETY: an all-zero cpu_set_t is a valid empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
        for &c in cpus.iter().filter(|&&c| c < max) {
            // SAFETY: CPU_SET writes one bit of `set`, and `c` lies inside it.
            unsafe { libc::CPU_SET(c, &mut set) };
        }
        // SAFETY: `set` is a valid cpu_set_t of the size passed, read by the kernel.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_uring_register,
                self.fd.as_raw_fd(),
                IORING_REGISTER_IOWQ_AFF,
                &set as *const libc::cpu_set_t,
                std::mem::size_of::<libc::cpu_set_t>(),
            )
        };
        super::sys::cvt(r).map(drop)
    }

    /// `io_uring_enter(fd, to_submit, min_complete, flags)`: the number submitted, or
    /// -1 with errno.
    #[inline(always)]
    pub fn enter(&self, to_submit: u32, min_complete: u32, flags: u32) -> i64 {
        // SAFETY: integer arguments and a null signal mask.
        unsafe {
            libc::syscall(
                libc::SYS_io_uring_enter,
                self.fd.as_raw_fd(),
                to_submit,
                min_complete,
                flags,
                std::ptr::null::<libc::sigset_t>(),
                0usize,
            )
        }
    }

    /// Takes one completion from the queue, if there is one: its (user_data, res).
    #[inline(always)]
    pub fn reap(&mut self) -> Option<(u64, i32)> {
        // SAFETY: head and tail are words of the live CQ ring mapping; the entry at
        // `head` is the kernel's until the head store below gives it back.
        unsafe {
            let head = (*self.cq_head).load(Ordering::Relaxed);
            let tail = (*self.cq_tail).load(Ordering::Acquire);
            if head == tail {
                return None;
            }
            let c = self.cqes.add((head & self.cq_mask) as usize).read();
            (*self.cq_head).store(head.wrapping_add(1), Ordering::Release);
            self.in_flight = self.in_flight.saturating_sub(1);
            Some((c.user_data, c.res))
        }
    }

    /// Bytes mapped for the three regions (for tests).
    pub fn mapped_bytes(&self) -> usize {
        self.sq_ring.len + self.cq_ring.len + self.sqes.len
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // Queued writes may not even be submitted yet: submit them, then wait for every
        // completion (a write to a slow file may take long, never forever; a signal
        // retries a few times).
        let mut tries = 0;
        while self.in_flight > 0 && tries < 100 {
            tries += 1;
            // SAFETY: head and tail are words of the live SQ ring mapping.
            let unsubmitted = unsafe {
                (*self.sq_tail)
                    .load(Ordering::Relaxed)
                    .wrapping_sub((*self.sq_head).load(Ordering::Acquire))
            };
            let r = self.enter(unsubmitted, 1, IORING_ENTER_GETEVENTS);
            if r < 0
                && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR)
            {
                break;
            }
            while self.reap().is_some() {}
        }
        if self.in_flight > 0 {
            // The kernel may still read it: better lost than freed.
            std::mem::forget(std::mem::take(&mut self.source));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_skips_with_a_reason_and_other_errors_fail() {
        for errno in [libc::ENOSYS, libc::EPERM, libc::EACCES] {
            match setup_error(io::Error::from_raw_os_error(errno)) {
                SetupError::Unavailable(why) => assert!(why.contains("io_uring")),
                SetupError::Failed(e) => panic!("{errno}: {e}"),
            }
        }
        assert!(matches!(
            setup_error(io::Error::from_raw_os_error(libc::ENOMEM)),
            SetupError::Failed(_)
        ));
    }

    /// A ring of 4 entries writing from `source`, or `None` (the test skips) where the
    /// kernel refuses io_uring, with its reason.
    fn ring_or_skip(source: Box<[u8]>) -> Option<Ring> {
        match Ring::new(4, source) {
            Ok(r) => Some(r),
            Err(SetupError::Unavailable(why)) => {
                assert!(!why.is_empty());
                println!("SKIPPED: {why}");
                None
            }
            Err(SetupError::Failed(e)) => panic!("{e}"),
        }
    }

    fn dev_null() -> std::fs::File {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .unwrap()
    }

    #[test]
    fn a_write_to_dev_null_completes() {
        let Some(mut ring) = ring_or_skip(Box::new([7u8; 3])) else {
            return;
        };
        assert!(ring.mapped_bytes() > 0);
        let null = dev_null();
        assert!(ring.queue_write(null.as_raw_fd(), 3, 42));
        assert_eq!(ring.enter(1, 1, IORING_ENTER_GETEVENTS), 1);
        assert_eq!(ring.reap(), Some((42, 3)));
        assert_eq!(ring.reap(), None);
        // No longer than the source.
        assert!(ring.queue_write(null.as_raw_fd(), 100, 43));
        assert_eq!(ring.enter(1, 1, IORING_ENTER_GETEVENTS), 1);
        assert_eq!(ring.reap(), Some((43, 3)));
    }

    #[test]
    fn existing_workers_are_moved_where_they_are_confined() {
        let Some(mut ring) = ring_or_skip(Box::new([1u8])) else {
            return;
        };
        let null = dev_null();
        // A write handed off makes this thread's first io-wq worker.
        ring.set_sqe_flags(IOSQE_ASYNC);
        assert!(ring.queue_write(null.as_raw_fd(), 1, 1));
        assert_eq!(ring.enter(1, 1, IORING_ENTER_GETEVENTS), 1);
        assert_eq!(ring.reap(), Some((1, 1)));
        let cpu = *crate::os::affinity::allowed_cpus().unwrap().last().unwrap();
        let moved = ring.set_worker_cpus(&[cpu]).unwrap();
        assert!(moved >= 1, "no worker found to move");
        let own = format!("iou-wrk-{}", rustix::thread::gettid().as_raw_nonzero());
        for e in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
            let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
            if comm.trim_end() == own {
                let status = std::fs::read_to_string(e.path().join("status")).unwrap();
                let line = status
                    .lines()
                    .find(|l| l.starts_with("Cpus_allowed_list:"))
                    .unwrap();
                assert_eq!(line.split_whitespace().nth(1), Some(&*cpu.to_string()));
            }
        }
    }

    #[test]
    fn a_ring_dropped_with_writes_in_flight_waits_for_them() {
        let Some(mut ring) = ring_or_skip(vec![1u8; 1 << 16].into_boxed_slice()) else {
            return;
        };
        let (r, w) = std::io::pipe().unwrap();
        // Queued and not submitted, and submitted and not reaped: drop must submit the
        // first and wait for both, so the pipe holds both writes when it returns.
        assert!(ring.queue_write(w.as_raw_fd(), 1 << 16, 1));
        assert_eq!(ring.enter(1, 0, 0), 1);
        assert!(ring.queue_write(w.as_raw_fd(), 10, 2));
        let reader = std::thread::spawn(move || {
            use std::io::Read;
            let mut all = Vec::new();
            (&r).read_to_end(&mut all).unwrap();
            all.len()
        });
        drop(ring);
        drop(w);
        assert_eq!(reader.join().unwrap(), (1 << 16) + 10);
    }
}
