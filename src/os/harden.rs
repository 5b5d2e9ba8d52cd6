//! The hardening a worker process puts on itself before it measures (issue 55): a
//! seccomp filter, a fresh user and pid namespace, no restartable-sequences
//! registration, per-task speculation controls, and moving tasks between cgroups.
//!
//! Every call here changes only the calling task (and what it starts later): a filter,
//! a namespace, an rseq registration or a speculation control belongs to the task that
//! set it and ends with it. Nothing here writes a system setting; the cgroup helpers
//! write only `tasks`/`cgroup.procs` files of directories the caller made. The callers
//! (`crate::bench::harden`) run these in a worker process only, never in the run's own.
//!
//! # Safety
//! Every `unsafe` block passes live, correctly sized values to the kernel (a filter
//! program that outlives the call, integers), reads glibc's exported rseq symbols
//! through `dlsym`, or forks a single-threaded process.
#![allow(unsafe_code)]

use super::sys::cvt;
use crate::host::parse::parse_status_field;
use std::io;
use std::path::{Path, PathBuf};

/// One classic-BPF instruction of a seccomp filter.
pub type Insn = libc::sock_filter;

/// `BPF_LD | BPF_W | BPF_ABS` (0 | 0 | 0x20): load a 32-bit word of `struct seccomp_data`.
const LD_ABS: u16 = 0x20;
/// `BPF_JMP | BPF_JEQ | BPF_K`.
const JEQ: u16 = 0x05 | 0x10;
/// `BPF_RET | BPF_K`.
const RET: u16 = 0x06;
/// `SECCOMP_RET_ALLOW`.
const ALLOW: u32 = 0x7fff_0000;
/// `offsetof(struct seccomp_data, args)`.
const ARGS: u32 = 16;

fn insn(code: u16, k: u32) -> Insn {
    Insn {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

/// An allow-all filter of `n` ≥ 2 instructions that reads the call's arguments: `n - 1`
/// loads of argument words (the six arguments' two halves in turn), then `allow`. A
/// filter that loads an argument cannot be reduced to a constant verdict, so the
/// kernel runs it on every call.
pub fn args_filter(n: usize) -> Vec<Insn> {
    let mut p: Vec<Insn> = (0..n.saturating_sub(1))
        .map(|i| insn(LD_ABS, ARGS + 4 * (i % 12) as u32))
        .collect();
    p.push(insn(RET, ALLOW));
    p
}

/// An allow-all filter of `n` ≥ 1 instructions that reads only the call's number: a
/// bare `allow` for one, else a load of the number, `n - 2` comparisons that never
/// match, and `allow`. The kernel (5.11 and later) emulates such a filter once per
/// system call number and caches the verdict, so a call pays only seccomp's entry path.
pub fn nr_filter(n: usize) -> Vec<Insn> {
    if n <= 1 {
        return vec![insn(RET, ALLOW)];
    }
    let mut p = vec![insn(LD_ABS, 0)];
    p.extend((0..n - 2).map(|i| insn(JEQ, 0x7fff_0000 + i as u32)));
    p.push(insn(RET, ALLOW));
    p
}

/// Installs `prog` as a seccomp filter on this task (on every thread of the process,
/// with `SECCOMP_FILTER_FLAG_TSYNC`, when `all_threads`), after setting no-new-privs,
/// which the kernel requires of a task without `CAP_SYS_ADMIN` and which keeps an
/// `exec` from gaining privileges. Both last as long as the task and pass to the
/// tasks it starts; neither can be taken off.
pub fn install_filter(prog: &[Insn], all_threads: bool) -> io::Result<()> {
    let flags = if all_threads {
        libc::SECCOMP_FILTER_FLAG_TSYNC
    } else {
        0
    };
    match set_filter(prog, flags)? {
        0 => Ok(()),
        tid => Err(io::Error::other(format!(
            "thread {tid} could not take the filter (TSYNC)"
        ))),
    }
}

/// Sets no-new-privs, then `seccomp(SECCOMP_SET_MODE_FILTER, flags, prog)`: the call's
/// result (0, a thread id for a TSYNC failure, or a listener's descriptor).
pub(in crate::os) fn set_filter(prog: &[Insn], flags: libc::c_ulong) -> io::Result<i64> {
    // SAFETY: prctl with integer arguments.
    let r = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    cvt(r.into())?;
    let fprog = libc::sock_fprog {
        len: u16::try_from(prog.len())
            .map_err(|_| io::Error::other("a filter of more than 65535 instructions"))?,
        filter: prog.as_ptr().cast_mut(),
    };
    // SAFETY: `fprog` points at `prog`, alive for the call; the kernel copies it.
    cvt(unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            flags,
            &fprog as *const libc::sock_fprog,
        )
    })
}

/// This task's seccomp mode (0 none, 1 strict, 2 filter) and the number of filters on
/// it, from `/proc/thread-self/status`.
pub fn seccomp_status() -> io::Result<(u32, u32)> {
    let s = std::fs::read_to_string("/proc/thread-self/status")?;
    let field = |name| parse_status_field(&s, name).map_or(0, |v| v.parse().unwrap_or(0));
    Ok((field("Seccomp"), field("Seccomp_filters")))
}

/// The threads of this process.
pub fn thread_ids() -> Vec<i32> {
    ids_in(Path::new("/proc/self/task"))
}

/// The children of every thread of this process.
pub fn child_ids() -> Vec<i32> {
    let mut out = Vec::new();
    for t in thread_ids() {
        let path = format!("/proc/self/task/{t}/children");
        if let Ok(s) = std::fs::read_to_string(path) {
            out.extend(s.split_whitespace().filter_map(|w| w.parse::<i32>().ok()));
        }
    }
    out
}

fn ids_in(dir: &Path) -> Vec<i32> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Moves this process into a fresh user namespace (mapping its own user and group to
/// root there) and a fresh pid namespace, then forks: the child, pid 1 of the new
/// namespace, returns and goes on; this process waits for it and exits with its status,
/// ignoring SIGINT (the child answers it) and dying of SIGTERM (the child then gets
/// SIGTERM as its death signal). The process must be single-threaded.
pub fn enter_user_and_pid_ns() -> io::Result<()> {
    let threads = thread_ids().len();
    if threads != 1 {
        return Err(io::Error::other(format!(
            "this process has {threads} threads; unshare(CLONE_NEWUSER) needs one"
        )));
    }
    let (uid, gid) = (super::sys::getuid(), super::sys::getgid());
    // SAFETY: unshare with flags only.
    cvt(unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWPID) }.into())?;
    std::fs::write("/proc/self/setgroups", "deny")?;
    std::fs::write("/proc/self/uid_map", format!("0 {uid} 1"))?;
    std::fs::write("/proc/self/gid_map", format!("0 {gid} 1"))?;
    // The child tells this process's end from a pipe's: its parent is outside its pid
    // namespace, where getppid and kill cannot name it.
    let (alive_r, alive_w) = crate::os::task::pipe()?;
    // SAFETY: this process is single-threaded (checked above), so the child may run
    // ordinary code.
    let pid = unsafe { libc::fork() };
    if cvt(pid.into())? == 0 {
        drop(alive_w);
        // SAFETY: prctl with integers; poll on a live descriptor. Once the death
        // signal is set, a parent that already died shows as the pipe's hang-up.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            let mut p = libc::pollfd {
                fd: std::os::fd::AsRawFd::as_raw_fd(&alive_r),
                events: libc::POLLIN,
                revents: 0,
            };
            if libc::poll(&mut p, 1, 0) != 0 {
                libc::_exit(1);
            }
        }
        return Ok(());
    }
    drop(alive_r);
    // SAFETY: setting dispositions and waiting for our own child; _exit ends this
    // process without running destructors (its descriptors, the pipe's end among
    // them, close with it).
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGTERM, libc::SIG_DFL);
        let mut status = 0;
        while libc::waitpid(pid, &mut status, 0) < 0 {
            if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                libc::_exit(2);
            }
        }
        let code = if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            128 + libc::WTERMSIG(status)
        };
        libc::_exit(code);
    }
}

/// `RSEQ_SIG`: the signature glibc registers with (x86 and arm64).
#[cfg(target_arch = "x86_64")]
const RSEQ_SIG: u32 = 0x5305_3053;
#[cfg(target_arch = "aarch64")]
const RSEQ_SIG: u32 = 0xd428_bc00;

/// The thread pointer (glibc's TCB), which `__rseq_offset` is relative to.
#[cfg(target_arch = "x86_64")]
fn thread_pointer() -> usize {
    let tp: usize;
    // SAFETY: reads the TCB's self-pointer at %fs:0, which glibc's x86-64 TLS keeps.
    unsafe { std::arch::asm!("mov {}, fs:0", out(reg) tp, options(nostack, readonly)) };
    tp
}
#[cfg(target_arch = "aarch64")]
fn thread_pointer() -> usize {
    let tp: usize;
    // SAFETY: reads tpidr_el0, the thread pointer.
    unsafe { std::arch::asm!("mrs {}, tpidr_el0", out(reg) tp, options(nostack)) };
    tp
}

/// What [`rseq_unregister`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rseq {
    /// The calling thread's registration was removed.
    Unregistered,
    /// The C library had not registered one (its tunable, or an older library).
    NotRegistered,
}

/// Removes the calling thread's restartable-sequences registration, the one glibc (2.35
/// and later) made at its start, from glibc's `__rseq_offset` and `__rseq_size`. Threads
/// created afterwards register their own; processes forked afterwards inherit none.
/// glibc reads the CPU number from the area only while the kernel keeps it current, and
/// the kernel marks it uninitialised on unregistration, so `sched_getcpu` falls back.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn rseq_unregister() -> io::Result<Rseq> {
    // SAFETY: dlsym with a NUL-terminated name; the symbols, when present, are
    // glibc's `ptrdiff_t __rseq_offset` and `unsigned int __rseq_size`.
    let (offset, size) = unsafe {
        let o = libc::dlsym(libc::RTLD_DEFAULT, c"__rseq_offset".as_ptr());
        let s = libc::dlsym(libc::RTLD_DEFAULT, c"__rseq_size".as_ptr());
        if o.is_null() || s.is_null() {
            return Ok(Rseq::NotRegistered);
        }
        (*(o as *const isize), *(s as *const u32))
    };
    if size == 0 {
        return Ok(Rseq::NotRegistered);
    }
    let area = thread_pointer().wrapping_add_signed(offset);
    // glibc 2.35–2.39 registers 32 bytes and says so in __rseq_size; later ones
    // register at least 32 and publish the feature size (20 or more) there.
    let mut last = io::Error::from_raw_os_error(libc::EINVAL);
    for len in [32u32, size, size.next_multiple_of(32)] {
        // SAFETY: rseq(UNREGISTER) with the registered area's address, length and
        // signature only compares them with the registration.
        let r = unsafe { libc::syscall(libc::SYS_rseq, area, len, 1, RSEQ_SIG) };
        if r == 0 {
            return Ok(Rseq::Unregistered);
        }
        last = io::Error::last_os_error();
    }
    Err(last)
}

/// Which speculation a per-task control disables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speculation {
    /// Speculative store bypass (Spectre v4): `PR_SPEC_STORE_BYPASS`.
    StoreBypass,
    /// Indirect branch speculation (Spectre v2, STIBP/IBPB): `PR_SPEC_INDIRECT_BRANCH`.
    IndirectBranch,
}

impl Speculation {
    fn which(self) -> libc::c_ulong {
        match self {
            Speculation::StoreBypass => libc::PR_SPEC_STORE_BYPASS as libc::c_ulong,
            Speculation::IndirectBranch => libc::PR_SPEC_INDIRECT_BRANCH as libc::c_ulong,
        }
    }
    /// The file under `/sys/devices/system/cpu/vulnerabilities/` that names its state.
    pub fn vulnerability(self) -> &'static str {
        match self {
            Speculation::StoreBypass => "spec_store_bypass",
            Speculation::IndirectBranch => "spectre_v2",
        }
    }
}

/// `PR_GET_SPECULATION_CTRL` for `s`: the kernel's bits (`PR_SPEC_PRCTL` = 1 when a
/// task may set it, `PR_SPEC_ENABLE` = 2, `PR_SPEC_DISABLE` = 4, forced = 8).
pub fn speculation(s: Speculation) -> io::Result<i32> {
    // SAFETY: prctl with integer arguments.
    let r = unsafe { libc::prctl(libc::PR_GET_SPECULATION_CTRL, s.which(), 0, 0, 0) };
    cvt(r.into()).map(|_| r)
}

/// Disables `s` for this task (and the tasks it starts).
pub fn disable_speculation(s: Speculation) -> io::Result<()> {
    // SAFETY: prctl with integer arguments.
    let r = unsafe {
        libc::prctl(
            libc::PR_SET_SPECULATION_CTRL,
            s.which(),
            libc::PR_SPEC_DISABLE as libc::c_ulong,
            0,
            0,
        )
    };
    cvt(r.into()).map(drop)
}

/// The directory of the cgroup (v1 hierarchy of the `cpu` controller, or v2) this
/// process is in, and whether it is v1; None when neither is mounted where expected.
pub fn cpu_cgroup() -> Option<(PathBuf, bool)> {
    let s = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in s.lines() {
        let mut f = line.splitn(3, ':');
        let (_, ctl, path) = (f.next()?, f.next()?, f.next()?);
        if ctl.split(',').any(|c| c == "cpu") {
            let mount = ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"]
                .into_iter()
                .map(PathBuf::from)
                .find(|m| m.join("tasks").exists())?;
            return Some((mount.join(path.trim_start_matches('/')), true));
        }
    }
    let v2 = s.lines().find_map(|l| l.strip_prefix("0::"))?;
    let root = ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
        .into_iter()
        .map(PathBuf::from)
        .find(|m| m.join("cgroup.controllers").exists())?;
    Some((root.join(v2.trim_start_matches('/')), false))
}

/// The id of task `id` (as `/proc` names it) in its own pid namespace, which is the
/// caller's for a task it started: the last field of `NSpid` (cgroupfs reads ids in
/// the writer's namespace, `/proc` names them in its mount's).
pub fn id_in_own_ns(id: i32) -> i32 {
    std::fs::read_to_string(format!("/proc/{id}/status"))
        .ok()
        .and_then(|s| parse_status_field(&s, "NSpid"))
        .and_then(|v| v.split_whitespace().last()?.parse().ok())
        .unwrap_or(id)
}

/// Moves thread `tid` (v1: its `tasks` file) or process `pid` (`cgroup.procs`), ids in
/// the caller's pid namespace, into the cgroup `dir`.
pub fn move_to_cgroup(dir: &Path, id: i32, thread: bool) -> io::Result<()> {
    let file = if thread { "tasks" } else { "cgroup.procs" };
    let file = if thread && !dir.join("tasks").exists() {
        "cgroup.threads"
    } else {
        file
    };
    std::fs::write(dir.join(file), id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_have_the_length_asked_and_end_in_allow() {
        for n in [2, 3, 256, 4096] {
            let p = args_filter(n);
            assert_eq!(p.len(), n);
            assert_eq!((p[n - 1].code, p[n - 1].k), (RET, ALLOW));
            assert!(p[..n - 1].iter().all(|i| i.code == LD_ABS && i.k >= ARGS));
        }
        for n in [1, 2, 5] {
            let p = nr_filter(n);
            assert_eq!(p.len(), n);
            assert_eq!((p[n - 1].code, p[n - 1].k), (RET, ALLOW));
            assert!(p.iter().all(|i| i.code != LD_ABS || i.k == 0));
        }
    }

    #[test]
    fn this_test_process_reads_its_own_seccomp_status() {
        // Read only: a filter installed here would stay on the test process.
        let (mode, _) = seccomp_status().unwrap();
        assert!(mode <= 2);
    }
}
