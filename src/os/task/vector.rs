//! Blocking with the vector registers dirty: the AVX or AVX-512 state set to all ones
//! in the same instruction sequence as the system call, so a switch must save it.
#![allow(unsafe_code)]

use super::SigSet;
use std::os::fd::RawFd;

/// Which vector state a task keeps dirty before it blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vector {
    /// Nothing touched.
    Clean,
    /// ymm0–15 set to all ones.
    Avx,
    /// zmm0–31 and the opmask registers set to all ones.
    Avx512,
}

/// The widest vector state this CPU has, or None without AVX.
pub fn widest_vector() -> Option<Vector> {
    if std::arch::is_x86_feature_detected!("avx512f") {
        Some(Vector::Avx512)
    } else if std::arch::is_x86_feature_detected!("avx") {
        Some(Vector::Avx)
    } else {
        None
    }
}

/// A blocking call the ping-pong slave makes with its vector registers dirty: each
/// names its memory by reference, so the call cannot reach anything else.
pub enum DirtyCall<'a> {
    /// read(2) of up to the buffer's length from `fd` into the buffer.
    Read(RawFd, &'a mut [u8]),
    /// futex(2) FUTEX_WAIT on the word while it holds the value.
    FutexWait(&'a std::sync::atomic::AtomicU32, u32),
    /// rt_sigsuspend(2) with the mask in force.
    SigSuspend(&'a SigSet),
    /// sched_yield(2).
    Yield,
}

/// Makes `call` right after setting the vector registers of `v` to all ones in the
/// same instruction sequence, so that the task enters the kernel (and blocks, if it
/// does) with that state dirty. Returns the kernel's result (negative errno on
/// failure). `v` must be supported by the CPU (see [`widest_vector`]); an unsupported
/// one makes the call with nothing dirtied.
#[inline(always)]
pub fn syscall_dirty(v: Vector, call: DirtyCall<'_>) -> isize {
    let (nr, a) = match call {
        DirtyCall::Read(fd, buf) => (
            libc::SYS_read,
            [fd as usize, buf.as_mut_ptr() as usize, buf.len(), 0],
        ),
        DirtyCall::FutexWait(word, val) => (
            libc::SYS_futex,
            [
                word.as_ptr() as usize,
                libc::FUTEX_WAIT as usize,
                val as usize,
                0,
            ],
        ),
        DirtyCall::SigSuspend(mask) => {
            (libc::SYS_rt_sigsuspend, [mask.as_ptr() as usize, 8, 0, 0])
        }
        DirtyCall::Yield => (libc::SYS_sched_yield, [0; 4]),
    };
    // The arguments come from `call`, whose references keep its buffer, word or mask
    // alive (and the buffer exclusive) for the call: read writes at most buf.len()
    // bytes into it, FUTEX_WAIT and rt_sigsuspend only read theirs (the kernel's
    // 8-byte signal set is the start of a sigset_t), and sched_yield takes nothing.
    match v {
        // SAFETY: arguments valid for `nr`, as above.
        Vector::Clean => unsafe { syscall4(nr, a) },
        Vector::Avx if std::arch::is_x86_feature_detected!("avx") => {
            // SAFETY: the CPU has AVX (checked); arguments valid, as above.
            unsafe { syscall4_avx(nr, a) }
        }
        Vector::Avx512 if std::arch::is_x86_feature_detected!("avx512f") => {
            // SAFETY: the CPU has AVX-512F (checked); arguments valid, as above.
            unsafe { syscall4_avx512(nr, a) }
        }
        // SAFETY: arguments valid for `nr`, as above.
        _ => unsafe { syscall4(nr, a) },
    }
}

/// A raw system call with four arguments.
///
/// # Safety
/// The arguments are valid for `nr`: every pointer among them refers to live memory
/// of the size and access the call needs.
#[inline(always)]
unsafe fn syscall4(nr: libc::c_long, a: [usize; 4]) -> isize {
    let ret: isize;
    // SAFETY: the caller passes arguments valid for `nr`; rcx and r11 are declared.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") nr as isize => ret,
            in("rdi") a[0], in("rsi") a[1], in("rdx") a[2], in("r10") a[3],
            out("rcx") _, out("r11") _,
            options(nostack),
        );
    }
    ret
}

/// [`syscall4`] with ymm0–15 set to all ones first.
///
/// # Safety
/// The CPU has AVX, and the arguments are valid for `nr` (as for [`syscall4`]).
#[target_feature(enable = "avx")]
unsafe fn syscall4_avx(nr: libc::c_long, a: [usize; 4]) -> isize {
    let ret: isize;
    // SAFETY: AVX is available and the arguments valid (the caller's promise);
    // ymm0–15 are declared clobbered.
    unsafe {
        std::arch::asm!(
            "vpcmpeqd ymm0, ymm0, ymm0", "vpcmpeqd ymm1, ymm1, ymm1",
            "vpcmpeqd ymm2, ymm2, ymm2", "vpcmpeqd ymm3, ymm3, ymm3",
            "vpcmpeqd ymm4, ymm4, ymm4", "vpcmpeqd ymm5, ymm5, ymm5",
            "vpcmpeqd ymm6, ymm6, ymm6", "vpcmpeqd ymm7, ymm7, ymm7",
            "vpcmpeqd ymm8, ymm8, ymm8", "vpcmpeqd ymm9, ymm9, ymm9",
            "vpcmpeqd ymm10, ymm10, ymm10", "vpcmpeqd ymm11, ymm11, ymm11",
            "vpcmpeqd ymm12, ymm12, ymm12", "vpcmpeqd ymm13, ymm13, ymm13",
            "vpcmpeqd ymm14, ymm14, ymm14", "vpcmpeqd ymm15, ymm15, ymm15",
            "syscall",
            inlateout("rax") nr as isize => ret,
            in("rdi") a[0], in("rsi") a[1], in("rdx") a[2], in("r10") a[3],
            out("rcx") _, out("r11") _,
            out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
            out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
            out("ymm8") _, out("ymm9") _, out("ymm10") _, out("ymm11") _,
            out("ymm12") _, out("ymm13") _, out("ymm14") _, out("ymm15") _,
            options(nostack),
        );
    }
    ret
}

/// [`syscall4`] with zmm0–31 and k1–k7 set to all ones first.
///
/// # Safety
/// The CPU has AVX-512F, and the arguments are valid for `nr` (as for [`syscall4`]).
#[target_feature(enable = "avx512f")]
unsafe fn syscall4_avx512(nr: libc::c_long, a: [usize; 4]) -> isize {
    let ret: isize;
    // SAFETY: AVX-512F is available and the arguments valid (the caller's promise);
    // zmm0–31 and k1–k7 are declared clobbered.
    unsafe {
        std::arch::asm!(
            "vpternlogd zmm0, zmm0, zmm0, 0xff", "vpternlogd zmm1, zmm1, zmm1, 0xff",
            "vpternlogd zmm2, zmm2, zmm2, 0xff", "vpternlogd zmm3, zmm3, zmm3, 0xff",
            "vpternlogd zmm4, zmm4, zmm4, 0xff", "vpternlogd zmm5, zmm5, zmm5, 0xff",
            "vpternlogd zmm6, zmm6, zmm6, 0xff", "vpternlogd zmm7, zmm7, zmm7, 0xff",
            "vpternlogd zmm8, zmm8, zmm8, 0xff", "vpternlogd zmm9, zmm9, zmm9, 0xff",
            "vpternlogd zmm10, zmm10, zmm10, 0xff", "vpternlogd zmm11, zmm11, zmm11, 0xff",
            "vpternlogd zmm12, zmm12, zmm12, 0xff", "vpternlogd zmm13, zmm13, zmm13, 0xff",
            "vpternlogd zmm14, zmm14, zmm14, 0xff", "vpternlogd zmm15, zmm15, zmm15, 0xff",
            "vpternlogd zmm16, zmm16, zmm16, 0xff", "vpternlogd zmm17, zmm17, zmm17, 0xff",
            "vpternlogd zmm18, zmm18, zmm18, 0xff", "vpternlogd zmm19, zmm19, zmm19, 0xff",
            "vpternlogd zmm20, zmm20, zmm20, 0xff", "vpternlogd zmm21, zmm21, zmm21, 0xff",
            "vpternlogd zmm22, zmm22, zmm22, 0xff", "vpternlogd zmm23, zmm23, zmm23, 0xff",
            "vpternlogd zmm24, zmm24, zmm24, 0xff", "vpternlogd zmm25, zmm25, zmm25, 0xff",
            "vpternlogd zmm26, zmm26, zmm26, 0xff", "vpternlogd zmm27, zmm27, zmm27, 0xff",
            "vpternlogd zmm28, zmm28, zmm28, 0xff", "vpternlogd zmm29, zmm29, zmm29, 0xff",
            "vpternlogd zmm30, zmm30, zmm30, 0xff", "vpternlogd zmm31, zmm31, zmm31, 0xff",
            "kxnorw k1, k1, k1", "kxnorw k2, k2, k2", "kxnorw k3, k3, k3",
            "kxnorw k4, k4, k4", "kxnorw k5, k5, k5", "kxnorw k6, k6, k6",
            "kxnorw k7, k7, k7",
            "syscall",
            inlateout("rax") nr as isize => ret,
            in("rdi") a[0], in("rsi") a[1], in("rdx") a[2], in("r10") a[3],
            out("rcx") _, out("r11") _,
            out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
            out("zmm4") _, out("zmm5") _, out("zmm6") _, out("zmm7") _,
            out("zmm8") _, out("zmm9") _, out("zmm10") _, out("zmm11") _,
            out("zmm12") _, out("zmm13") _, out("zmm14") _, out("zmm15") _,
            out("zmm16") _, out("zmm17") _, out("zmm18") _, out("zmm19") _,
            out("zmm20") _, out("zmm21") _, out("zmm22") _, out("zmm23") _,
            out("zmm24") _, out("zmm25") _, out("zmm26") _, out("zmm27") _,
            out("zmm28") _, out("zmm29") _, out("zmm30") _, out("zmm31") _,
            out("k1") _, out("k2") _, out("k3") _, out("k4") _,
            out("k5") _, out("k6") _, out("k7") _,
            options(nostack),
        );
    }
    ret
}
