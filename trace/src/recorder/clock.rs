//! The time and the CPU an event carries: `CLOCK_MONOTONIC_RAW` through the vDSO, and
//! the CPU from glibc's restartable-sequence area when there is one (else
//! `sched_getcpu`).

use std::sync::atomic::Ordering;

/// `CLOCK_MONOTONIC_RAW`, ns: the clock every event carries.
#[inline(always)]
pub fn now() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Where glibc keeps this thread's `struct rseq` relative to the thread pointer
/// (`__rseq_offset`), once found; 0 while unknown or when the kernel has no rseq area
/// registered for this process, in which case `sched_getcpu` answers.
static RSEQ_OFFSET: std::sync::atomic::AtomicIsize =
    std::sync::atomic::AtomicIsize::new(0);

/// Looks up glibc's `__rseq_offset` and `__rseq_size` (glibc 2.35 and later); the
/// CPU is then one load from this thread's rseq area, which the kernel keeps current.
pub(super) fn find_rseq() {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: dlsym with the default handle and NUL-terminated names; the symbols,
        // when present, are glibc's exported `ptrdiff_t` and `unsigned int` variables.
        unsafe {
            let off = libc::dlsym(libc::RTLD_DEFAULT, c"__rseq_offset".as_ptr());
            let size = libc::dlsym(libc::RTLD_DEFAULT, c"__rseq_size".as_ptr());
            if off.is_null() || size.is_null() || *(size as *const u32) < 8 {
                return;
            }
            let off = *(off as *const isize);
            // The area must answer with the CPU sched_getcpu gives (a registered
            // area never reads as the unregistered value -1).
            if off != 0 && rseq_cpu(off) == libc::sched_getcpu() as u32 {
                RSEQ_OFFSET.store(off, Ordering::Relaxed);
            }
        }
    }
}

/// The CPU field of this thread's rseq area, `off` bytes from the thread pointer.
///
/// # Safety
///
/// `off` is glibc's `__rseq_offset` for a registered area.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn rseq_cpu(off: isize) -> u32 {
    let tp: *const u8;
    // SAFETY: on x86_64 Linux, %fs:0 holds the thread pointer (the TCB's own address).
    unsafe {
        std::arch::asm!("mov {}, fs:0", out(reg) tp, options(nostack, readonly, preserves_flags))
    };
    // SAFETY: the caller promises `off` locates this thread's `struct rseq`, whose
    // `cpu_id` (offset 4) the kernel updates; a volatile read sees the current value.
    unsafe { std::ptr::read_volatile(tp.offset(off).add(4) as *const u32) }
}

/// The CPU the calling thread runs on (`u32::MAX` when unknown).
#[inline(always)]
pub(super) fn cpu() -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        let off = RSEQ_OFFSET.load(Ordering::Relaxed);
        if off != 0 {
            // SAFETY: set only by `find_rseq` from glibc's offset of a registered area.
            return unsafe { rseq_cpu(off) };
        }
    }
    // SAFETY: no arguments; returns -1 on failure, which becomes u32::MAX.
    unsafe { libc::sched_getcpu() as u32 }
}
