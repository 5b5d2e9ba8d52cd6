//! One io_uring with a few entries, set up and mapped by the `io-uring` crate, and a
//! write of a buffer to a descriptor submitted and reaped one at a time.
//!
//! The crate owns the ring's descriptor and its three mappings and releases them when
//! dropped. What it cannot know is which buffers the kernel still reads: a [`Ring`]
//! therefore owns the one buffer its writes come from, counts the writes in flight, and
//! waits for them before letting the buffer go.
//!
//! # Safety
//! Every entry pushed points into the ring's own source buffer, which lives as long as
//! the ring and is never freed while a write may still read it; submission is one
//! `io_uring_enter`, made directly (see [`Ring::enter`]), with no argument structure.
#![allow(unsafe_code)]

use io_uring::{opcode, types, IoUring};
use std::io;
use std::os::fd::{AsRawFd, RawFd};

/// `io_uring_enter` flag: wait for `min_complete` completions (linux/io_uring.h).
pub const IORING_ENTER_GETEVENTS: u32 = 1;

/// Why a ring could not be set up.
#[derive(Debug)]
pub enum SetupError {
    /// The kernel has no io_uring, or it is disabled or forbidden here (ENOSYS,
    /// EPERM, EACCES): skip, with this reason.
    Unavailable(String),
    /// Anything else: a failure.
    Failed(io::Error),
}

/// An io_uring and the buffer its writes come from. A write's buffer must outlive the
/// kernel's use of it, so the ring owns it: dropping the ring first waits for the
/// writes still in flight (and if it cannot, leaks the buffer rather than free memory
/// the kernel may read); the crate then unmaps the queues and closes the descriptor.
pub struct Ring {
    ring: IoUring,
    source: Box<[u8]>,
    in_flight: u32,
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
        let ring = IoUring::new(entries).map_err(setup_error)?;
        Ok(Ring {
            ring,
            source,
            in_flight: 0,
        })
    }

    /// Queues a write of the first `len` bytes of the ring's source buffer (all of it
    /// if shorter) to `fd` (at offset 0) and makes it visible to the kernel; `enter`
    /// submits it. Returns false when the submission queue is full.
    #[inline(always)]
    pub fn queue_write(&mut self, fd: RawFd, len: usize, user_data: u64) -> bool {
        let len = len.min(self.source.len()) as u32;
        let entry = opcode::Write::new(types::Fd(fd), self.source.as_ptr(), len)
            .offset(0)
            .build()
            .user_data(user_data);
        // SAFETY: the entry reads `len` bytes of `source`, which the ring owns and
        // keeps until the kernel has completed every write (see Drop).
        let pushed = unsafe { self.ring.submission().push(&entry) }.is_ok();
        self.in_flight += pushed as u32;
        pushed
    }

    /// The buffer writes come from, to fill between writes.
    pub fn source_mut(&mut self) -> &mut [u8] {
        &mut self.source
    }

    /// `io_uring_enter(fd, to_submit, min_complete, flags)`: the number submitted.
    ///
    /// This is the system call `svc.uring.write` times, so it is made here directly:
    /// through the crate's `Submitter::enter`, the write measured 3–5% slower (after
    /// slower in 42 of 60 alternated runs, twice), and the benchmark's figure would
    /// have moved.
    #[inline(always)]
    pub fn enter(
        &self,
        to_submit: u32,
        min_complete: u32,
        flags: u32,
    ) -> io::Result<usize> {
        // SAFETY: integer arguments and a null signal mask of size 0.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_uring_enter,
                self.ring.as_raw_fd(),
                to_submit,
                min_complete,
                flags,
                std::ptr::null::<libc::sigset_t>(),
                0usize,
            )
        };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r as usize)
        }
    }

    /// Takes one completion from the queue, if there is one: its (user_data, res).
    #[inline(always)]
    pub fn reap(&mut self) -> Option<(u64, i32)> {
        let c = self.ring.completion().next()?;
        self.in_flight = self.in_flight.saturating_sub(1);
        Some((c.user_data(), c.result()))
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
            let unsubmitted = self.ring.submission().len() as u32;
            match self.enter(unsubmitted, 1, IORING_ENTER_GETEVENTS) {
                Err(e) if e.kind() != io::ErrorKind::Interrupted => break,
                _ => {}
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
    use std::os::fd::AsRawFd;

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

    #[test]
    fn a_write_to_dev_null_completes() {
        let mut ring = match Ring::new(4, Box::new([7u8; 3])) {
            Ok(r) => r,
            Err(SetupError::Unavailable(why)) => {
                eprintln!("io_uring unavailable: {why}");
                assert!(!why.is_empty());
                return;
            }
            Err(SetupError::Failed(e)) => panic!("{e}"),
        };
        let null = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .unwrap();
        assert!(ring.queue_write(null.as_raw_fd(), 3, 42));
        assert_eq!(ring.enter(1, 1, IORING_ENTER_GETEVENTS).unwrap(), 1);
        assert_eq!(ring.reap(), Some((42, 3)));
        assert_eq!(ring.reap(), None);
        // No longer than the source.
        assert!(ring.queue_write(null.as_raw_fd(), 100, 43));
        assert_eq!(ring.enter(1, 1, IORING_ENTER_GETEVENTS).unwrap(), 1);
        assert_eq!(ring.reap(), Some((43, 3)));
    }

    #[test]
    fn a_ring_dropped_with_writes_in_flight_waits_for_them() {
        let mut ring = match Ring::new(4, vec![1u8; 1 << 16].into_boxed_slice()) {
            Ok(r) => r,
            Err(SetupError::Unavailable(why)) => {
                println!("SKIPPED: {why}");
                return;
            }
            Err(SetupError::Failed(e)) => panic!("{e}"),
        };
        let (r, w) = std::io::pipe().unwrap();
        // Queued and not submitted, and submitted and not reaped: drop must submit the
        // first and wait for both, so the pipe holds both writes when it returns.
        assert!(ring.queue_write(w.as_raw_fd(), 1 << 16, 1));
        assert_eq!(ring.enter(1, 0, 0).unwrap(), 1);
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
