//! Pinning the calling thread to one CPU, and reading which CPUs it may use.
#![allow(unsafe_code)]

use std::io;
use std::mem::MaybeUninit;
use std::sync::OnceLock;

static ORIGINAL: OnceLock<Vec<usize>> = OnceLock::new();

/// The CPUs this process could use before syscost pinned anything: captured the first
/// time a [`Pin`] is made or this is called. Tasks placed "freely" get this set.
pub fn process_cpus() -> Vec<usize> {
    ORIGINAL
        .get_or_init(|| allowed_cpus().unwrap_or_default())
        .clone()
}

/// The CPUs the calling thread may run on.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    let mut set = MaybeUninit::<libc::cpu_set_t>::zeroed();
    // SAFETY: `set` is a valid, writable cpu_set_t of the size passed.
    let r = unsafe {
        libc::sched_getaffinity(
            0,
            std::mem::size_of::<libc::cpu_set_t>(),
            set.as_mut_ptr(),
        )
    };
    super::sys::cvt(r as libc::c_long)?;
    // SAFETY: written by the successful call.
    let set = unsafe { set.assume_init() };
    // SAFETY: CPU_ISSET reads a bit of a valid set; the index is below CPU_SETSIZE.
    Ok((0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

/// Restricts the calling thread to `cpus`.
pub fn set_cpus(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: an all-zero cpu_set_t is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c >= libc::CPU_SETSIZE as usize {
            // EINVAL, as the kernel answers; no allocation (forked children call this).
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: c is below CPU_SETSIZE.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed; 0 is the calling thread.
    let r = unsafe {
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    super::sys::cvt(r as libc::c_long).map(|_| ())
}

/// Pins the calling thread to `cpu` and restores its previous CPU set when dropped.
pub struct Pin {
    previous: Vec<usize>,
}

impl Pin {
    /// Pins the calling thread to `cpu`.
    pub fn to(cpu: usize) -> io::Result<Pin> {
        let previous = allowed_cpus()?;
        let _ = ORIGINAL.set(previous.clone());
        set_cpus(&[cpu])?;
        Ok(Pin { previous })
    }
}

impl Drop for Pin {
    fn drop(&mut self) {
        let _ = set_cpus(&self.previous);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pin_restricts_then_restores() {
        let before = allowed_cpus().unwrap();
        assert!(!before.is_empty());
        let cpu = before[0];
        {
            let _p = Pin::to(cpu).unwrap();
            assert_eq!(allowed_cpus().unwrap(), vec![cpu]);
        }
        assert_eq!(allowed_cpus().unwrap(), before);
    }
}
