//! The `via` parameter: how a benchmark's timed call enters the kernel. Its words mean
//! the same wherever they appear:
//!
//! - `libc`: the C library's wrapper of the call (glibc's `write`, `getppid`, …), a
//!   function called from syscost's loop that holds the `syscall` instruction: what
//!   most programs pay, and what lmbench, `perf bench syscall` and will-it-scale time.
//!   The catalogue's default wherever there is a choice.
//! - `raw`: the `syscall` instruction written into the timed loop itself
//!   ([`crate::os::raw`]): no function call around it.
//! - `syscall`: the C library's generic `syscall()` function (for calls whose wrapper
//!   does more than the call, as `setuid`'s, which signals every thread).
//! - `vdso`: the C library's call served in user space by the vDSO, no kernel entry.
//!
//! A benchmark takes `libc,raw` where both are meaningful ([`BOTH`]), or names its
//! one path. `docs/entry.md` measures what the two cost on one machine and why they
//! differ.
//!
//! Every other benchmark's path is fixed, and [`FIXED`] says it, in the same words (and
//! `fault`, [`EntryPath::Fault`]); [`NO_ENTRY`] lists those whose timed region does not
//! enter the kernel. [`entry`] reads both: the one answer to "how does this instance
//! enter the kernel" that `syscost list`, the JSON (`entry`) and `docs/entry.md` give.

use super::{Kind, ParamSpec, Params};
use crate::error::BenchError;
use crate::harness::Body;
use crate::os::raw::{Call, Stopped};
use serde::{Deserialize, Serialize};

/// Every word of every benchmark's `via` parameter, each with one meaning.
pub const WORDS: [&str; 4] = ["libc", "raw", "syscall", "vdso"];

/// The catalogue's default where a benchmark has the choice.
pub const DEFAULT: &str = "libc";

/// The two paths into the kernel a `via` benchmark chooses between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The C library: its wrapper (`libc`), or its generic `syscall()` (`syscall`)
    /// where that is the benchmark's library side.
    Libc,
    /// The instruction in the loop.
    Raw,
}

impl Via {
    /// The path `p` names; `raw` is skipped where the instruction is not wired up.
    pub fn of(p: &Params) -> Result<Via, BenchError> {
        match p.get("via") {
            "raw" if !crate::os::raw::AVAILABLE => Err(BenchError::Skip(
                "via=raw: the syscall instruction is only wired up on x86_64".into(),
            )),
            "raw" => Ok(Via::Raw),
            _ => Ok(Via::Libc),
        }
    }
}

/// Checks a raw result ([`crate::os::raw`]) inside a timed loop: `Ok` unless it is a
/// negative errno, in which case the error (built off the hot path) names the call.
#[inline(always)]
pub fn check_raw(r: isize, what: &'static str) -> Result<(), BenchError> {
    if r < 0 {
        return Err(raw_failed(r, what));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn raw_failed(r: isize, what: &'static str) -> BenchError {
    BenchError::os(what, std::io::Error::from_raw_os_error(-r as i32))
}

/// A body whose batch is one call of `f(iters)`, a loop of its own: the `via=raw`
/// repeat loops of [`crate::os::raw`] (`getpid_repeat`, `write_read_repeat`), which
/// hold the whole timed loop at a fixed, aligned placement. Like [`crate::harness::Loop`]
/// it does the operation `iters` times and nothing else, and fails if one failed.
pub struct Repeat<F>(pub F);

impl<F: FnMut(u64) -> Result<(), BenchError>> Body for Repeat<F> {
    #[inline(never)]
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        (self.0)(iters)
    }
}

/// [`Repeat`] boxed, as [`crate::bench::body`] boxes a loop of one call.
pub fn repeat<F: FnMut(u64) -> Result<(), BenchError> + 'static>(f: F) -> Box<dyn Body> {
    Box::new(Repeat(f))
}

/// A repeat loop's early stop as the benchmark's error: the errno the call returned,
/// or (a pipe write or read that moved other than one byte) the count.
#[cold]
#[inline(never)]
pub fn stopped(s: Stopped) -> BenchError {
    match check_raw(s.result, s.call) {
        Err(e) => e,
        Ok(()) => {
            BenchError::Failed(format!("{}(2) moved {} bytes, not 1", s.call, s.result))
        }
    }
}

/// Makes `call` `n` times in its aligned loop ([`crate::os::raw::repeat`]), a failure
/// the benchmark's error: the batch of a [`repeat`] body of one call with arguments.
#[inline(always)]
pub fn call_n(call: Call<'_>, n: u64) -> Result<(), BenchError> {
    crate::os::raw::repeat(call, n).map_err(stopped)
}

/// `via=libc|raw`, default `libc`, for a benchmark whose call has a C library wrapper.
pub const BOTH: ParamSpec = ParamSpec {
    name: "via",
    default: DEFAULT,
    about:
        "libc: the C library's wrapper · raw: the syscall instruction in the loop itself",
    kind: Kind::Choice(&["libc", "raw"]),
};

/// [`BOTH`] in a list of its own, for a benchmark with no other parameter.
pub const ONLY_BOTH: &[ParamSpec] = &[BOTH];

/// How an instance's timed calls enter the kernel: the `via` words ([`WORDS`]), one
/// meaning each wherever they appear, and `fault`. The JSON writes it as the word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryPath {
    /// `libc`: a function of the C library holds the `syscall` instruction (its wrapper,
    /// as glibc's `write`, or a function it calls), called from syscost's loop, so that
    /// a return follows the kernel's; what most programs pay.
    Libc,
    /// `raw`: the `syscall` instruction in syscost's own code, no C library function
    /// around it: in the timed loop itself ([`crate::os::raw`], the aligned loops of
    /// `via=raw`, or an `asm!` block the compiler places).
    Raw,
    /// `syscall`: the C library's generic `syscall()` function, for calls it has no
    /// wrapper of (futex, tgkill, io_uring_enter) or whose wrapper does more.
    Syscall,
    /// `vdso`: the C library's call served in user space by the vDSO: no kernel entry.
    Vdso,
    /// `fault`: no call; the kernel is entered by the page faults of plain loads and
    /// stores.
    Fault,
}

impl EntryPath {
    /// Every path, in the order the words are explained.
    pub const ALL: [EntryPath; 5] = [
        EntryPath::Libc,
        EntryPath::Raw,
        EntryPath::Syscall,
        EntryPath::Vdso,
        EntryPath::Fault,
    ];

    /// The word, as `via=` and the JSON write it.
    pub fn word(self) -> &'static str {
        match self {
            EntryPath::Libc => "libc",
            EntryPath::Raw => "raw",
            EntryPath::Syscall => "syscall",
            EntryPath::Vdso => "vdso",
            EntryPath::Fault => "fault",
        }
    }

    /// The path a word names.
    pub fn from_word(w: &str) -> Option<EntryPath> {
        EntryPath::ALL.into_iter().find(|p| p.word() == w)
    }

    /// One line: what the word means.
    pub fn meaning(self) -> &'static str {
        match self {
            EntryPath::Libc => {
                "a C library function holds the syscall instruction (its wrapper)"
            }
            EntryPath::Raw => {
                "the syscall instruction in syscost's own code, no function around it"
            }
            EntryPath::Syscall => "the C library's generic syscall() function",
            EntryPath::Vdso => "served in user space by the vDSO, no kernel entry",
            EntryPath::Fault => "no call: the kernel is entered by page faults",
        }
    }
}

impl std::fmt::Display for EntryPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.word())
    }
}

/// The fixed path of a benchmark without a `via` parameter: what its timed region's
/// main calls go through, the parameter values that change it, and the rest.
#[derive(Debug, Clone, Copy)]
pub struct Fixed {
    /// The benchmark.
    pub bench: &'static str,
    /// The main calls' path.
    pub path: EntryPath,
    /// `(parameter, value, path)`: an instance with that value takes that path instead.
    pub unless: &'static [(&'static str, &'static str, EntryPath)],
    /// The calls, and the rest of the timed region's entries where it mixes paths.
    pub calls: &'static str,
}

const fn fixed(bench: &'static str, path: EntryPath, calls: &'static str) -> Fixed {
    Fixed {
        bench,
        path,
        unless: &[],
        calls,
    }
}

use EntryPath::{Fault, Libc, Raw, Syscall as Generic, Vdso};

/// The path of every benchmark that enters the kernel and has no `via` parameter, read
/// from its timed body and the `src/os` wrappers it calls. A benchmark that enters the
/// kernel is here, takes `via`, or is in [`NO_ENTRY`] (a unit test holds it).
pub const FIXED: &[Fixed] = &[
    fixed(
        "syscall.getpid.raw",
        Raw,
        "getpid: the aligned loop of syscall.getpid via=raw",
    ),
    fixed(
        "syscall.getpid.indirect",
        Generic,
        "getpid: syscall(SYS_getpid)",
    ),
    fixed(
        "syscall.args",
        Raw,
        "an unimplemented call: the instruction inlined where the compiler places it, \
         not an aligned loop",
    ),
    fixed(
        "ctx.ring",
        Libc,
        "write and read of the token, in every member",
    ),
    Fixed {
        bench: "ctx.pingpong",
        path: Libc,
        unless: &[
            ("mechanism", "futex", Generic),
            ("mechanism", "signal", Generic),
        ],
        calls: "the measuring task's write and read, or sched_yield; futex: FUTEX_WAKE \
                and FUTEX_WAIT; signal: tgkill, then sigsuspend (libc); the other task \
                blocks through its own syscall instruction",
    },
    Fixed {
        bench: "ipc.rtt",
        path: Libc,
        unless: &[("transport", "shm_futex", Generic)],
        calls: "write/send and read/recv, mq_send and mq_receive, msgsnd and msgrcv; \
                shm_futex: FUTEX_WAKE and FUTEX_WAIT",
    },
    fixed(
        "ipc.bw",
        Libc,
        "write (pipe) or send (sockets) of each chunk",
    ),
    fixed("proc.fork", Libc, "fork, then waitpid"),
    fixed(
        "proc.vfork",
        Raw,
        "vfork in an asm! block of src/os/spawn; the signal mask around it and \
         waitpid through libc",
    ),
    fixed("proc.exec", Libc, "fork, execve in the child, waitpid"),
    fixed("proc.spawn", Libc, "posix_spawn, then waitpid"),
    fixed("proc.thread", Libc, "pthread_create and pthread_join"),
    fixed("signal.install", Libc, "sigaction"),
    fixed("signal.mask", Libc, "pthread_sigmask, twice"),
    fixed(
        "signal.catch",
        Generic,
        "tgkill; the handler returns through the C library's restorer",
    ),
    fixed(
        "signal.raise",
        Libc,
        "raise: rt_sigprocmask, tgkill, rt_sigprocmask; the handler returns through the \
         C library's restorer",
    ),
    fixed(
        "signal.pending",
        Generic,
        "tgkill, then pthread_sigmask twice (libc); the handler returns through the \
         C library's restorer",
    ),
    fixed("signal.raise_blocked", Generic, "tgkill"),
    fixed(
        "signal.prot",
        Libc,
        "mprotect, in the handler and after it; entered first by the store's page \
         fault, left through the C library's restorer",
    ),
    fixed("signal.queue", Generic, "rt_sigqueueinfo"),
    fixed(
        "signal.queue_rtt",
        Generic,
        "rt_sigqueueinfo, then rt_sigtimedwait",
    ),
    fixed("signal.stop", Libc, "kill, then waitid"),
    fixed(
        "signal.cont",
        Libc,
        "kill, then waitid; FUTEX_WAIT (syscall) until the child's handler has run",
    ),
    Fixed {
        bench: "mem.fault.zero",
        path: Fault,
        unless: &[("prefault", "populate", Libc)],
        calls: "the touches' faults; populate: madvise(MADV_POPULATE_*) first, timed",
    },
    fixed("mem.fault.file", Fault, "the reads' faults"),
    fixed("mem.fault.cow", Fault, "the writes' faults"),
    fixed("mem.fault.shm", Fault, "the writes' faults"),
    fixed(
        "mem.mmap",
        Libc,
        "mmap and munmap (touch=yes: and the faults between)",
    ),
    fixed(
        "mem.brk",
        Generic,
        "brk up and down (the C library's brk would move its own idea of the break)",
    ),
    fixed("mem.mprotect", Libc, "mprotect"),
    fixed("mem.map_shared", Libc, "mmap, then mmap or munmap"),
    fixed("mem.mremap", Libc, "mremap, twice"),
    fixed("svc.ef.set", Libc, "write"),
    fixed("svc.ef.set_futex", Generic, "FUTEX_WAKE"),
    fixed("svc.ef.clear", Libc, "read"),
    fixed("svc.ef.read", Libc, "read"),
    fixed("svc.ef.wait", Libc, "poll"),
    fixed("svc.ef.wait_any", Libc, "poll or epoll_wait"),
    fixed("svc.ef.wait_all", Libc, "poll or epoll_wait"),
    fixed("svc.getrusage", Libc, "getrusage"),
    fixed("svc.procstat", Libc, "pread"),
    fixed("svc.setpri", Libc, "setpriority"),
    fixed("svc.canwak", Libc, "read"),
    fixed("svc.wake.other", Generic, "FUTEX_WAKE"),
    fixed(
        "svc.wake.latency",
        Generic,
        "FUTEX_WAKE; then, same-cpu, sched_yield (libc) until the child runs",
    ),
    fixed("svc.wake.self", Generic, "FUTEX_WAKE"),
    fixed("svc.hiber.pending", Generic, "FUTEX_WAIT"),
    fixed(
        "svc.timer.arm",
        Libc,
        "timerfd_settime, timer_settime, setitimer or alarm",
    ),
    fixed(
        "svc.timer.cancel",
        Libc,
        "timerfd_settime, timer_settime, setitimer or alarm",
    ),
    fixed("svc.timer.cancel_all", Libc, "timer_settime, n times"),
    fixed("svc.null.write", Libc, "write"),
    fixed(
        "svc.uring.write",
        Generic,
        "io_uring_enter (the C library has no wrapper)",
    ),
    fixed("svc.sleep", Libc, "clock_nanosleep"),
    // The peers' tests and the newer calls (src/bench/sync, */lm.rs, */newer.rs, ...).
    fixed("sync.futex.hash", Generic, "FUTEX_WAIT"),
    fixed("sync.futex.wake", Generic, "FUTEX_WAKE"),
    fixed("sync.futex.wake_parallel", Generic, "FUTEX_WAKE"),
    fixed("sync.futex.requeue", Generic, "FUTEX_CMP_REQUEUE"),
    fixed(
        "sync.futex.lock_pi",
        Generic,
        "FUTEX_LOCK_PI and FUTEX_UNLOCK_PI (hold_us: and nanosleep, libc)",
    ),
    fixed(
        "ctx.messaging",
        Libc,
        "the release (FUTEX_WAKE, syscall); every thread's write and read",
    ),
    fixed("ipc.fifo", Libc, "write and read"),
    fixed("ipc.sem", Libc, "semop, twice"),
    fixed("ipc.fcntl", Libc, "fcntl(F_SETLKW), four times"),
    fixed(
        "ipc.connect",
        Libc,
        "socket, connect, close (tcp: and read)",
    ),
    fixed("file.create", Libc, "open, write, close"),
    fixed("file.delete", Libc, "unlink"),
    fixed(
        "svc.usleep",
        Libc,
        "usleep, nanosleep, select or pselect; itimer: setitimer and sigsuspend",
    ),
    fixed("svc.epoll.ctl", Libc, "epoll_ctl"),
    fixed("svc.epoll.wait", Libc, "write, epoll_wait, read"),
    fixed(
        "svc.uring.nop",
        Generic,
        "io_uring_enter (the C library has no wrapper)",
    ),
    fixed(
        "svc.seccomp.notify",
        Libc,
        "ioctl (SECCOMP_IOCTL_NOTIF_RECV, _SEND); the notified thread's call, an unallocated number, by syscall()",
    ),
    fixed("syscall.getpgid", Libc, "getpgid"),
    fixed("syscall.membarrier", Generic, "membarrier"),
    fixed(
        "syscall.pidfd_open",
        Generic,
        "pidfd_open, then close (libc)",
    ),
    fixed("syscall.process_vm_readv", Libc, "process_vm_readv"),
    fixed("syscall.mseal", Generic, "mseal"),
    fixed("syscall.select", Libc, "select"),
    fixed("proc.clone3", Generic, "clone3, then waitpid (libc)"),
    fixed("clock.monotonic", Vdso, "clock_gettime"),
    fixed("clock.monotonic_raw", Vdso, "clock_gettime"),
    fixed("clock.monotonic_coarse", Vdso, "clock_gettime"),
    fixed("clock.realtime", Vdso, "clock_gettime"),
    fixed("clock.realtime_coarse", Vdso, "clock_gettime"),
    fixed("clock.boottime", Vdso, "clock_gettime"),
    fixed(
        "clock.process_cputime",
        Libc,
        "clock_gettime: the vDSO reads no CPU-time clock and makes the call from its \
         own function",
    ),
    fixed(
        "clock.thread_cputime",
        Libc,
        "clock_gettime: the vDSO reads no CPU-time clock and makes the call from its \
         own function",
    ),
    fixed("clock.gettimeofday", Vdso, "gettimeofday"),
    fixed("clock.time", Vdso, "time"),
    // will-it-scale's tests (src/bench/file/ops.rs, mem/scale.rs, sync, ipc/unix_self.rs).
    fixed("ipc.unix.self", Libc, "write, then read"),
    fixed("file.readseq", Libc, "read; lseek at the file's end"),
    fixed("file.pread", Libc, "pread"),
    fixed("file.pwrite", Libc, "pwrite"),
    fixed("file.readseek", Libc, "lseek, then read"),
    fixed("file.writeseek", Libc, "lseek, then write"),
    fixed("file.lseek", Libc, "lseek"),
    fixed("file.writeseq", Libc, "write; lseek at 1 MiB"),
    fixed("file.lock", Libc, "fcntl(F_SETLKW), twice"),
    fixed("file.fallocate", Libc, "fallocate; ftruncate at 1 MiB"),
    fixed("file.unlink", Libc, "open, close, unlink"),
    fixed(
        "mem.tlb_flush",
        Libc,
        "madvise; entered too by the write's and the read's page faults",
    ),
    fixed("mem.fault.private", Fault, "the writes' faults"),
    fixed("mem.mmap_file", Libc, "mmap and munmap"),
    fixed(
        "mem.malloc",
        Libc,
        "malloc and free: mmap and munmap above the C library's mmap threshold, no \
         call below it",
    ),
    fixed(
        "sync.mutex",
        Libc,
        "pthread_mutex_lock and unlock: atomics; FUTEX_WAIT and FUTEX_WAKE inside them \
         only when another thread holds the mutex",
    ),
    fixed("sync.futex", Generic, "FUTEX_WAKE or FUTEX_WAIT"),
    fixed("sync.yield", Libc, "sched_yield"),
    fixed("sync.eventfd", Libc, "write, then read"),
];

/// The benchmarks whose timed region does not enter the kernel, and what it does.
pub const NO_ENTRY: &[(&str, &str)] = &[
    ("call.empty", "a function call"),
    ("call.loop", "the loop alone"),
    ("clock.tsc", "the rdtsc instruction"),
    ("clock.rdtscp", "the rdtscp instruction"),
    ("svc.gmtime", "calendar arithmetic in the C library"),
    (
        "svc.localtime",
        "calendar arithmetic in the C library, the zone read in prepare",
    ),
    ("trace.event", "a store into a ring in memory"),
    (
        "sync.sem",
        "sem_wait and sem_post: atomics in the C library",
    ),
];

/// Whether an instance's timed region stays in user space: a benchmark of [`NO_ENTRY`],
/// a vDSO call, the C library's `malloc` below its mmap threshold (128 KiB as a process
/// starts), or a mutex no other copy contends for (copies as processes each lock their
/// own). The harness reads such an instance's resource usage once a round, not around
/// each batch (`usage_per_round` in [`crate::harness::Settings`]).
pub fn stays_in_user_space(bench: &str, p: &Params) -> bool {
    let value = |name: &str| {
        p.0.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    };
    match bench {
        "mem.malloc" => value("size")
            .and_then(|v| v.parse::<u64>().ok())
            .is_some_and(|n| n < 128 << 10),
        "sync.mutex" => {
            value("share") == Some("mutex-per-copy")
                || value(super::copies::COPIES_AS) != Some("thread")
                || value(super::copies::COPIES).is_none_or(|n| n == "1")
        }
        _ => match entry(bench, p) {
            Some(path) => path == EntryPath::Vdso,
            None => NO_ENTRY.iter().any(|(b, _)| *b == bench),
        },
    }
}

/// Whether an instance's tasks leave a CPU idle while they wait: work that crosses
/// CPUs or that the scheduler places ([`super::work_kind`] `Cross`), a timed sleep
/// (`svc.sleep`, `svc.usleep`), a PI lock held across a sleep (`hold_us` above 0).
/// Such a round runs its operation for [`crate::method::SETTLE_NS`] before it samples.
pub fn leaves_cpus_idle(bench: &str, p: &Params) -> bool {
    let held = || {
        p.0.iter()
            .any(|(n, v)| *n == "hold_us" && v.parse::<u64>().is_ok_and(|us| us > 0))
    };
    super::work_kind(bench, p) == crate::harness::probe::WorkKind::Cross
        || matches!(bench, "svc.sleep" | "svc.usleep")
        || (bench == "sync.futex.lock_pi" && held())
}

/// How an instance of `bench` with the parameters `p` enters the kernel in its timed
/// region: its `via` where it takes one, else its fixed path ([`FIXED`]); `None` for a
/// benchmark that does not enter it ([`NO_ENTRY`]) or one unknown.
pub fn entry(bench: &str, p: &Params) -> Option<EntryPath> {
    if let Some((_, v)) = p.0.iter().find(|(n, _)| *n == "via") {
        return EntryPath::from_word(v);
    }
    let f = FIXED.iter().find(|f| f.bench == bench)?;
    let has = |k: &str, v: &str| p.0.iter().any(|(n, x)| *n == k && x == v);
    Some(
        f.unless
            .iter()
            .find(|(k, v, _)| has(k, v))
            .map_or(f.path, |u| u.2),
    )
}

/// `bench`'s fixed path as `syscost list` shows it: the word, then in brackets the
/// parameter values that take another path and the calls (`None` for a benchmark that
/// takes `via`, or does not enter the kernel).
pub fn fixed_line(bench: &str) -> Option<String> {
    let f = FIXED.iter().find(|f| f.bench == bench)?;
    let mut other: Vec<(&str, Vec<&str>, EntryPath)> = Vec::new();
    for &(k, v, path) in f.unless {
        match other.iter_mut().find(|(ok, _, op)| *ok == k && *op == path) {
            Some(o) => o.1.push(v),
            None => other.push((k, vec![v], path)),
        }
    }
    let mut about: Vec<String> = other
        .iter()
        .map(|(k, vs, path)| format!("{k}={}: {path}", vs.join(",")))
        .collect();
    about.push(f.calls.to_string());
    Some(format!("{}  ({})", f.path, about.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{catalogue, params};
    use crate::os::raw;

    /// The benchmarks the issue names take `via=libc|raw` with the default `libc`, and
    /// no benchmark uses a word outside [`WORDS`].
    #[test]
    fn via_means_the_same_words_in_every_benchmark() {
        let mut both = Vec::new();
        for b in catalogue() {
            for p in b.params().iter().filter(|p| p.name == "via") {
                let Kind::Choice(words) = p.kind else {
                    panic!("{}: via is not a choice of words", b.name());
                };
                for w in words {
                    assert!(WORDS.contains(w), "{}: via word {w}", b.name());
                }
                if words.contains(&"libc") && words.contains(&"raw") {
                    assert_eq!(p.default, DEFAULT, "{}", b.name());
                    both.push(b.name());
                }
            }
        }
        for name in [
            "ipc.pipe.self",
            "ctx.pipe",
            "file.open_close",
            "file.read",
            "syscall.getpid",
            "syscall.getppid",
            "syscall.getuid",
            "syscall.getgid",
            "syscall.uname",
            "syscall.times",
            "syscall.dup_close",
            "syscall.kill",
            "syscall.writev",
            "syscall.poll",
        ] {
            assert!(both.contains(&name), "{name} does not take via=libc|raw");
        }
    }

    /// What stays in user space: the benchmarks without a kernel entry and vDSO calls,
    /// malloc below the mmap threshold, a mutex that no thread copy contends for.
    #[test]
    fn user_space_instances_are_those_that_never_enter_the_kernel() {
        let at = |bench: &str, pairs: &[(&'static str, &str)]| {
            let p = Params(pairs.iter().map(|(k, v)| (*k, v.to_string())).collect());
            stays_in_user_space(bench, &p)
        };
        assert!(at("call.empty", &[]));
        assert!(at("clock.monotonic", &[]));
        assert!(!at("clock.process_cputime", &[]));
        assert!(!at("syscall.getpid", &[("via", "libc")]));
        assert!(at("mem.malloc", &[("size", "1024")]));
        assert!(!at("mem.malloc", &[("size", "134217728")]));
        let mutex = |copies: &str, how: &str, share: &str| {
            at(
                "sync.mutex",
                &[("copies", copies), ("copies_as", how), ("share", share)],
            )
        };
        assert!(mutex("1", "thread", "one-mutex"));
        assert!(mutex("2", "process", "one-mutex"));
        assert!(mutex("2", "thread", "mutex-per-copy"));
        assert!(!mutex("2", "thread", "one-mutex"));
    }

    /// The instances that settle before sampling are those whose tasks wait with a CPU
    /// idle: on another CPU, on a timer, or holding a PI lock across a sleep.
    #[test]
    fn instances_that_leave_a_cpu_idle_are_cross_cpu_sleeps_and_held_pi_locks() {
        let at = |bench: &str, pairs: &[(&'static str, &str)]| {
            let p = Params(pairs.iter().map(|(k, v)| (*k, v.to_string())).collect());
            leaves_cpus_idle(bench, &p)
        };
        assert!(at("ctx.pingpong", &[("placement", "cross-cpu")]));
        assert!(at("ctx.messaging", &[("placement", "free")]));
        assert!(!at("ctx.pingpong", &[("placement", "same-cpu")]));
        assert!(at("svc.sleep", &[("ns", "10000")]));
        assert!(at("svc.usleep", &[]));
        assert!(at(
            "sync.futex.lock_pi",
            &[("hold_us", "1"), ("placement", "same-cpu")]
        ));
        assert!(!at(
            "sync.futex.lock_pi",
            &[("hold_us", "0"), ("placement", "same-cpu")]
        ));
        assert!(!at("syscall.getpid", &[("via", "libc")]));
    }

    /// A repeat body runs its batch as one call with the batch's count, and a stopped
    /// loop fails with the call's errno, or with the count a pipe call moved.
    #[test]
    fn repeat_bodies_pass_the_count_and_stops_become_errors() {
        let mut seen = Vec::new();
        let mut b = Repeat(|n| {
            seen.push(n);
            Ok(())
        });
        b.run(7).unwrap();
        b.run(0).unwrap();
        assert_eq!(seen, [7, 0]);
        let e = stopped(Stopped {
            call: "read",
            result: -(libc::EBADF as isize),
        });
        assert!(e.to_string().contains("read"), "{e}");
        let e = stopped(Stopped {
            call: "write",
            result: 0,
        });
        assert!(
            e.to_string().contains("write(2) moved 0 bytes, not 1"),
            "{e}"
        );
        let mut getpids = repeat(|n| raw::getpid_repeat(n).map_err(stopped));
        assert_eq!(getpids.run(100).is_ok(), raw::AVAILABLE);
    }

    /// Every benchmark says how it enters the kernel, in one place only: it takes
    /// `via`, or has its fixed path in [`FIXED`], or is in [`NO_ENTRY`]; and every
    /// instance of its defaults gets an entry unless it is in [`NO_ENTRY`].
    #[test]
    fn every_benchmark_says_how_it_enters_the_kernel() {
        let all = catalogue();
        for b in &all {
            let via = b.params().iter().any(|p| p.name == "via");
            let fixed = FIXED.iter().filter(|f| f.bench == b.name()).count();
            let none = NO_ENTRY.iter().filter(|(n, _)| *n == b.name()).count();
            assert_eq!(
                usize::from(via) + fixed + none,
                1,
                "{}: say how its timed region enters the kernel once: a via parameter, \
                 an entry in via::FIXED, or via::NO_ENTRY",
                b.name()
            );
            for p in params::expand(b.name(), b.params(), &[]).unwrap() {
                assert_eq!(entry(b.name(), &p).is_none(), none == 1, "{}", b.name());
            }
            assert_eq!(fixed_line(b.name()).is_some(), fixed == 1, "{}", b.name());
        }
        let names: Vec<_> = all.iter().map(|b| b.name()).collect();
        for name in FIXED
            .iter()
            .map(|f| f.bench)
            .chain(NO_ENTRY.iter().map(|n| n.0))
        {
            assert!(names.contains(&name), "{name} is not in the catalogue");
        }
        for f in FIXED {
            let b = all.iter().find(|b| b.name() == f.bench).unwrap();
            for (k, v, path) in f.unless {
                let spec = b.params().iter().find(|p| p.name == *k);
                let Some(ParamSpec {
                    kind: Kind::Choice(words),
                    ..
                }) = spec
                else {
                    panic!("{}: {k} is not a choice it takes", f.bench);
                };
                assert!(words.contains(v), "{}: {k}={v}", f.bench);
                assert_ne!(*path, f.path, "{}: {k}={v}", f.bench);
            }
        }
    }

    /// `via` decides where a benchmark takes it; elsewhere the fixed path, changed by
    /// the parameter values that change it.
    #[test]
    fn entry_follows_via_then_the_fixed_path() {
        let p = |kv: &[(&'static str, &str)]| {
            Params(kv.iter().map(|(k, v)| (*k, v.to_string())).collect())
        };
        let e = |name, kv: &[(&'static str, &str)]| entry(name, &p(kv));
        assert_eq!(e("syscall.getpid", &[("via", "raw")]), Some(EntryPath::Raw));
        assert_eq!(
            e("syscall.setuid", &[("via", "syscall")]),
            Some(EntryPath::Syscall)
        );
        assert_eq!(e("syscall.time", &[("via", "vdso")]), Some(EntryPath::Vdso));
        assert_eq!(e("syscall.getpid.raw", &[]), Some(EntryPath::Raw));
        assert_eq!(e("syscall.getpid.indirect", &[]), Some(EntryPath::Syscall));
        let mech = |m| e("ctx.pingpong", &[("mechanism", m), ("kind", "process")]);
        assert_eq!(mech("pipe"), Some(EntryPath::Libc));
        assert_eq!(mech("futex"), Some(EntryPath::Syscall));
        assert_eq!(mech("signal"), Some(EntryPath::Syscall));
        assert_eq!(
            e("mem.fault.zero", &[("prefault", "none")]),
            Some(EntryPath::Fault)
        );
        assert_eq!(
            e("mem.fault.zero", &[("prefault", "populate")]),
            Some(EntryPath::Libc)
        );
        assert_eq!(e("call.empty", &[]), None);
        assert_eq!(e("clock.tsc", &[]), None);
        assert_eq!(e("no.such", &[]), None);
        for w in WORDS {
            assert_eq!(EntryPath::from_word(w).map(|p| p.word()), Some(w));
        }
        let line = fixed_line("ctx.pingpong").unwrap();
        assert!(
            line.starts_with("libc  (mechanism=futex,signal: syscall; "),
            "{line}"
        );
        assert_eq!(fixed_line("syscall.getpid"), None);
        let json = serde_json::to_string(&EntryPath::Syscall).unwrap();
        assert_eq!(json, "\"syscall\"");
        let back: EntryPath = serde_json::from_str("\"fault\"").unwrap();
        assert_eq!(back, EntryPath::Fault);
    }

    /// `docs/entry.md`'s list of which benchmarks take which path, as [`FIXED`] and
    /// [`NO_ENTRY`] make it (in catalogue order).
    fn paths_markdown() -> String {
        let mut out = String::from(
            "| path | what it means | benchmarks without `via` |\n|---|---|---|\n",
        );
        let names: Vec<_> = catalogue().iter().map(|b| b.name()).collect();
        for path in EntryPath::ALL {
            let mut cell = Vec::new();
            for name in &names {
                let Some(f) = FIXED.iter().find(|f| f.bench == *name) else {
                    continue;
                };
                if f.path == path {
                    cell.push(format!("`{name}`"));
                }
                let vals: Vec<_> = f.unless.iter().filter(|u| u.2 == path).collect();
                if let Some((k, _, _)) = vals.first() {
                    let vs: Vec<_> = vals.iter().map(|u| u.1).collect();
                    cell.push(format!("`{name} {k}={}`", vs.join(",")));
                }
            }
            let cell = if cell.is_empty() {
                "none".to_string()
            } else {
                cell.join(", ")
            };
            out += &format!("| `{path}` | {} | {cell} |\n", path.meaning());
        }
        let none: Vec<_> = names
            .iter()
            .filter(|n| NO_ENTRY.iter().any(|(m, _)| m == *n))
            .map(|n| format!("`{n}`"))
            .collect();
        out += &format!("| none | no kernel entry | {} |\n", none.join(", "));
        out
    }

    /// The table in `docs/entry.md` is the one the code makes: it cannot drift.
    #[test]
    fn docs_list_the_paths_the_code_gives() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/entry.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let want = paths_markdown();
        assert!(
            doc.contains(&want),
            "docs/entry.md's table of paths differs from src/bench/via.rs; it should \
             read:\n\n{want}"
        );
    }

    #[test]
    fn via_parses_and_rejects_other_words() {
        let args = ["via=libc,raw".parse().unwrap()];
        let all = params::expand("t", ONLY_BOTH, &args).unwrap();
        let got: Vec<_> = all.iter().map(|p| Via::of(p).unwrap()).collect();
        assert_eq!(got, [Via::Libc, Via::Raw]);
        let e = params::expand("t", ONLY_BOTH, &["via=vdso".parse().unwrap()]);
        assert!(e.unwrap_err().to_string().contains("one of libc, raw"));
        let d = params::expand("t", ONLY_BOTH, &[]).unwrap();
        assert_eq!(d[0].label(), "via=libc");
    }
}
