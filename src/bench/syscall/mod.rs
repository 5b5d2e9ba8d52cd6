//! `syscall.*`: what entering the kernel costs. getpid through the raw instruction, the
//! C library wrapper and the generic `syscall()` entry (the memo's direct and indirect
//! calls); vDSO calls beside the same call made as a real system call; the argument
//! count; copy-in; and the memo's catalogue of CPU-bound calls with safe modern
//! equivalents (1976 Figs. 3–5, 1999 §3).

mod catalogue;
mod copyin;
mod entry;
mod newer;

use super::Bench;

/// The family's benchmarks.
pub const BENCHES: &[&dyn Bench] = &[
    &entry::GETPID,
    &entry::GETPID_RAW,
    &entry::GETPID_INDIRECT,
    &entry::ARGS,
    &entry::CLOCK_GETTIME,
    &entry::GETTIMEOFDAY,
    &entry::TIME,
    &entry::GETCPU,
    &copyin::WRITEV,
    &copyin::POLL,
    &copyin::POLL_FILE,
    &catalogue::GETPPID,
    &catalogue::GETUID,
    &catalogue::GETGID,
    &catalogue::UNAME,
    &catalogue::TIMES,
    &catalogue::DUP_CLOSE,
    &catalogue::ALARM,
    &catalogue::SIGACTION,
    &catalogue::KILL,
    &catalogue::SETPRIORITY,
    &catalogue::SETUID,
    &catalogue::SETGID,
    &catalogue::TCGETS,
    &newer::GETPGID,
    &newer::GETRANDOM,
    &newer::MEMBARRIER,
    &newer::PIDFD_OPEN,
    &newer::PROCESS_VM_READV,
    &newer::MSEAL,
    &newer::SELECT,
];
