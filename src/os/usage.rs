//! Resource usage (`getrusage`) snapshots and their differences.
//!
//! The harness takes a snapshot of the measuring thread after every sample, so each
//! sample carries its own switches and faults. It must not interpret the counts: that
//! is the harness's job.
#![allow(unsafe_code)]

use serde::{Deserialize, Serialize};
use std::mem::MaybeUninit;

/// What a user/system split of CPU time is, for wherever one is printed: Linux measures
/// a task's CPU time, but divides it between user and system in proportion to the timer
/// ticks that landed in each, so the split of a short span is a sample of a few ticks.
pub const SPLIT_CAVEAT: &str = "the kernel measures the CPU time but splits it into \
    user and system by where its timer ticks landed, so for a short span the split is a \
    sample of a few ticks, not a measurement (the total is one)";

/// Whose usage to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    /// The calling thread (`RUSAGE_THREAD`).
    Thread,
    /// The whole process (`RUSAGE_SELF`).
    Process,
    /// Waited-for children (`RUSAGE_CHILDREN`).
    Children,
}

/// The counters syscost keeps from a `getrusage` call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// User CPU time, in nanoseconds.
    pub user_ns: u64,
    /// System CPU time, in nanoseconds.
    pub sys_ns: u64,
    /// Voluntary context switches (the task blocked).
    pub vol_switches: u64,
    /// Involuntary context switches (the task was preempted).
    pub invol_switches: u64,
    /// Minor page faults (no I/O).
    pub minor_faults: u64,
    /// Major page faults (I/O needed).
    pub major_faults: u64,
    /// Maximum resident set size, in KiB.
    pub maxrss_kib: u64,
    /// Blocks read by the file system.
    pub in_blocks: u64,
    /// Blocks written by the file system.
    pub out_blocks: u64,
    /// Signals received.
    pub signals: u64,
}

impl Usage {
    /// Reads the usage of `who`.
    pub fn now(who: Who) -> Usage {
        let w = match who {
            Who::Thread => libc::RUSAGE_THREAD,
            Who::Process => libc::RUSAGE_SELF,
            Who::Children => libc::RUSAGE_CHILDREN,
        };
        let mut ru = MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: `ru` is a valid, writable rusage; `w` is a valid selector, so the call
        // cannot fail and leaves `ru` zeroed at worst.
        let ru = unsafe {
            libc::getrusage(w, ru.as_mut_ptr());
            ru.assume_init()
        };
        Usage::from_rusage(&ru)
    }

    /// The counters of a kernel `rusage` (from getrusage or wait4).
    pub fn from_rusage(ru: &libc::rusage) -> Usage {
        let tv =
            |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
        Usage {
            user_ns: tv(ru.ru_utime),
            sys_ns: tv(ru.ru_stime),
            vol_switches: ru.ru_nvcsw as u64,
            invol_switches: ru.ru_nivcsw as u64,
            minor_faults: ru.ru_minflt as u64,
            major_faults: ru.ru_majflt as u64,
            maxrss_kib: ru.ru_maxrss as u64,
            in_blocks: ru.ru_inblock as u64,
            out_blocks: ru.ru_oublock as u64,
            signals: ru.ru_nsignals as u64,
        }
    }

    /// The counts accumulated between `earlier` and `self` (saturating; maxrss is kept
    /// from `self`, as it is a high-water mark, not a counter).
    pub fn since(&self, earlier: &Usage) -> Usage {
        Usage {
            user_ns: self.user_ns.saturating_sub(earlier.user_ns),
            sys_ns: self.sys_ns.saturating_sub(earlier.sys_ns),
            vol_switches: self.vol_switches.saturating_sub(earlier.vol_switches),
            invol_switches: self.invol_switches.saturating_sub(earlier.invol_switches),
            minor_faults: self.minor_faults.saturating_sub(earlier.minor_faults),
            major_faults: self.major_faults.saturating_sub(earlier.major_faults),
            maxrss_kib: self.maxrss_kib,
            in_blocks: self.in_blocks.saturating_sub(earlier.in_blocks),
            out_blocks: self.out_blocks.saturating_sub(earlier.out_blocks),
            signals: self.signals.saturating_sub(earlier.signals),
        }
    }

    /// Adds another difference to this one (maxrss keeps the larger).
    pub fn add(&mut self, d: &Usage) {
        self.user_ns += d.user_ns;
        self.sys_ns += d.sys_ns;
        self.vol_switches += d.vol_switches;
        self.invol_switches += d.invol_switches;
        self.minor_faults += d.minor_faults;
        self.major_faults += d.major_faults;
        self.maxrss_kib = self.maxrss_kib.max(d.maxrss_kib);
        self.in_blocks += d.in_blocks;
        self.out_blocks += d.out_blocks;
        self.signals += d.signals;
    }
}

/// This process's peak resident size (`VmHWM` in /proc/self/status), KiB: the high-water
/// mark of its current address space only (unlike `ru_maxrss`, which keeps the largest
/// address space the process ever had, a vforked child's parent's included).
pub fn peak_resident_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    crate::host::parse::parse_kib_field(&status, "VmHWM")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_resident_size_is_read() {
        let kib = peak_resident_kib().expect("VmHWM in /proc/self/status");
        assert!(kib > 100 && kib < 64 << 20, "{kib} KiB");
    }

    #[test]
    fn since_subtracts_counters_and_keeps_maxrss() {
        let a = Usage {
            user_ns: 10,
            vol_switches: 3,
            maxrss_kib: 100,
            ..Usage::default()
        };
        let b = Usage {
            user_ns: 25,
            vol_switches: 4,
            maxrss_kib: 120,
            ..Usage::default()
        };
        let d = b.since(&a);
        assert_eq!(d.user_ns, 15);
        assert_eq!(d.vol_switches, 1);
        assert_eq!(d.maxrss_kib, 120);
        assert_eq!(a.since(&b).user_ns, 0, "saturates rather than wrapping");
    }

    #[test]
    fn thread_usage_grows_with_work() {
        let a = Usage::now(Who::Thread);
        let mut x = 0u64;
        let t = std::time::Instant::now();
        while t.elapsed().as_millis() < 30 {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let d = Usage::now(Who::Thread).since(&a);
        assert!(
            d.user_ns + d.sys_ns > 0,
            "30 ms of spinning shows some CPU time"
        );
    }
}
