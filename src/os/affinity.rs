//! Pinning the calling thread to one CPU, and reading which CPUs it may use.

use rustix::thread::{sched_getaffinity, sched_setaffinity, CpuSet};
use std::io;
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
    let set = sched_getaffinity(None)?;
    Ok((0..CpuSet::MAX_CPU).filter(|&c| set.is_set(c)).collect())
}

/// Restricts the calling thread to `cpus`. It neither allocates nor takes a lock, so a
/// forked child may call it.
pub fn set_cpus(cpus: &[usize]) -> io::Result<()> {
    Ok(sched_setaffinity(None, &cpu_set(cpus)?)?)
}

/// Restricts thread `tid` of this process to `cpus`.
pub fn set_thread_cpus(tid: i32, cpus: &[usize]) -> io::Result<()> {
    let set = cpu_set(cpus)?;
    let pid = rustix::process::Pid::from_raw(tid)
        .ok_or_else(|| io::Error::from_raw_os_error(libc::ESRCH))?;
    Ok(sched_setaffinity(Some(pid), &set)?)
}

/// The set of `cpus`.
fn cpu_set(cpus: &[usize]) -> io::Result<CpuSet> {
    let mut set = CpuSet::new();
    for &c in cpus {
        if c >= CpuSet::MAX_CPU {
            // EINVAL, as the kernel answers.
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        set.set(c);
    }
    Ok(set)
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
