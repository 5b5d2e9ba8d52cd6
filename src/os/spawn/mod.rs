//! Creating work on purpose: child processes by `fork`, `vfork`, `fork`+`execve` and
//! `posix_spawn`, threads by `pthread_create`, and reaping what was created.
//!
//! Every function that creates a child also reaps it before returning, on every path,
//! so no zombie outlives a call; [`super::task::Child`] owns a started child and reaps
//! it when dropped (killing it first, as it is our own child and nothing else's). A forked
//! child runs only async-signal-safe calls (`execve`, `_exit`): everything it needs,
//! the path, argv and the environment, is built beforehand in a [`PreparedExec`], so a
//! possibly multi-threaded parent never allocates or locks in the child. No function
//! here signals or waits for a process id ≤ 0 (a group, or every process).
//!
//! `vfork` is not called through the C library: a function that returns twice on a
//! shared stack cannot be called soundly from Rust. One `asm!` block makes the system
//! call, and the child, still inside that block, makes `exit_group(0)` at once, so it
//! never touches the stack or memory.
//!
//! The submodule `status` says how a child ended and reaps it.
#![allow(unsafe_code)]

mod status;

pub use status::{signal_name, wait_child, wait_child_usage, ExitStatus};
use std::ffi::{CString, OsStr, OsString};
use std::fmt;
use std::io;
use std::mem::MaybeUninit;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The argument that makes the `syscost` binary exit at once with status 0: the tiny
/// helper that `proc.exec` and `proc.spawn` start. Hidden from `--help`.
pub const HELPER_ARG: &str = "--syscost-helper-exit";

fn einval(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, what.to_string())
}

/// `fork()`; the child `_exit(0)`s at once; the parent reaps it.
pub fn fork_exit_wait() -> io::Result<ExitStatus> {
    // SAFETY: the child makes only `_exit`, which is async-signal-safe, and never
    // returns into Rust code (no destructor, no atexit handler runs in it).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: ends the child at once.
        unsafe { libc::_exit(0) }
    }
    wait_child(pid)
}

/// `vfork()`; the child `exit_group(0)`s at once without touching memory; the parent,
/// resumed when the child has exited, reaps it.
///
/// Signals are blocked across the call, as the C library's `posix_spawn` does, so that
/// no handler can run in the child on the shared stack; the previous mask is restored
/// in the parent. The cost includes those two `rt_sigprocmask` calls (well under a
/// microsecond).
#[cfg(target_arch = "x86_64")]
pub fn vfork_exit_wait() -> io::Result<ExitStatus> {
    let mut all = MaybeUninit::<libc::sigset_t>::zeroed();
    let mut old = MaybeUninit::<libc::sigset_t>::zeroed();
    // SAFETY: both sets are valid, writable sigset_t values; sigfillset initialises
    // `all`, and pthread_sigmask writes the previous mask into `old`.
    let r = unsafe {
        libc::sigfillset(all.as_mut_ptr());
        libc::pthread_sigmask(libc::SIG_SETMASK, all.as_ptr(), old.as_mut_ptr())
    };
    if r != 0 {
        return Err(io::Error::from_raw_os_error(r));
    }
    let ret: isize;
    // SAFETY: the system call creates a child that shares our memory and stack and
    // suspends us until it exits. In the child (rax = 0) the block goes straight to
    // `exit_group(0)` without a single memory access or stack use, and with every
    // signal blocked no handler can run in it (glibc leaves its two internal signals
    // unblocked, but sends them only to threads it created, which the child is not);
    // so when we resume, memory, the stack and every register but rax, rcx, r11 (and
    // rdi, declared clobbered) are as we left them. The parent falls through to label
    // 2 with the pid or -errno in rax.
    unsafe {
        std::arch::asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            "mov eax, {exit_group}",
            "xor edi, edi",
            "syscall",
            "ud2",
            "2:",
            exit_group = const libc::SYS_exit_group,
            inlateout("rax") libc::SYS_vfork as isize => ret,
            out("rcx") _,
            out("r11") _,
            out("rdi") _,
            options(nostack),
        );
    }
    // SAFETY: restores the mask saved above, which the kernel filled in.
    unsafe {
        libc::pthread_sigmask(libc::SIG_SETMASK, old.as_ptr(), std::ptr::null_mut())
    };
    if ret < 0 {
        return Err(io::Error::from_raw_os_error(-ret as i32));
    }
    wait_child(ret as libc::pid_t)
}

/// `vfork()` is implemented for x86_64 only.
#[cfg(not(target_arch = "x86_64"))]
pub fn vfork_exit_wait() -> io::Result<ExitStatus> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "vfork is implemented for x86_64 only",
    ))
}

/// A program, its argument vector and its environment, built untimed as C strings and
/// null-terminated pointer arrays, so that a forked child only has to call `execve`.
pub struct PreparedExec {
    path: CString,
    _args: Vec<CString>,
    argv: Vec<*const libc::c_char>,
    _env: Vec<CString>,
    envp: Vec<*const libc::c_char>,
}

impl fmt::Debug for PreparedExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreparedExec")
            .field("path", &self.path)
            .field("args", &self._args)
            .finish_non_exhaustive()
    }
}

fn cstring(s: &OsStr) -> io::Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| einval("an argument contains a NUL byte"))
}

impl PreparedExec {
    /// Runs `program` (a path, or with [`spawn`]'s `search_path` a name looked up in
    /// `PATH`) with `args` as its whole argument vector (`args[0]` is its name) and
    /// this process's environment as it is now.
    pub fn new(program: &OsStr, args: &[OsString]) -> io::Result<PreparedExec> {
        let env: Vec<OsString> = std::env::vars_os()
            .map(|(k, v)| {
                let mut kv = k;
                kv.push("=");
                kv.push(v);
                kv
            })
            .collect();
        PreparedExec::with_env(program, args, &env)
    }

    /// Like [`PreparedExec::new`] with the environment given as `NAME=value` strings.
    pub fn with_env(
        program: &OsStr,
        args: &[OsString],
        env: &[OsString],
    ) -> io::Result<PreparedExec> {
        let path = cstring(program)?;
        let args: Vec<CString> =
            args.iter().map(|a| cstring(a)).collect::<io::Result<_>>()?;
        let env: Vec<CString> =
            env.iter().map(|e| cstring(e)).collect::<io::Result<_>>()?;
        let argv = args
            .iter()
            .map(|a| a.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect();
        let envp = env
            .iter()
            .map(|e| e.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect();
        Ok(PreparedExec {
            path,
            _args: args,
            argv,
            _env: env,
            envp,
        })
    }

    /// The argument vector as one line, for messages.
    pub fn command_line(&self) -> String {
        self._args
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The helper: `path HELPER_ARG`, which exits at once when `path` is syscost.
    pub fn helper(path: &Path) -> io::Result<PreparedExec> {
        PreparedExec::new(
            path.as_os_str(),
            &[path.as_os_str().to_owned(), HELPER_ARG.into()],
        )
    }
}

/// `fork()` then `execve` of the prepared program in the child (`_exit(127)` if the
/// exec fails, as shells do); the parent reaps it.
pub fn fork_exec_wait(p: &PreparedExec) -> io::Result<ExitStatus> {
    let (path, argv, envp) = (p.path.as_ptr(), p.argv.as_ptr(), p.envp.as_ptr());
    // SAFETY: the child makes only `execve` and `_exit`, both async-signal-safe, with
    // pointers into `p`, which was built before the fork and lives in the child's copy
    // of memory; both arrays end with a null pointer. It never returns into Rust code.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: see above.
        unsafe {
            libc::execve(path, argv, envp);
            libc::_exit(127)
        }
    }
    wait_child(pid)
}

/// Starts the prepared program with `posix_spawn` (`posix_spawnp`, which looks the
/// name up in `PATH`, when `search_path`). The C library reports a program that could
/// not be executed as an error here, not as a child exiting 127. Each signal in
/// `default_signals` is reset to its default action in the child (the rest of the
/// dispositions and the signal mask are inherited).
pub fn spawn(
    p: &PreparedExec,
    search_path: bool,
    default_signals: &[libc::c_int],
) -> io::Result<super::task::Child> {
    let mut pid: libc::pid_t = 0;
    let mut attr = MaybeUninit::<libc::posix_spawnattr_t>::zeroed();
    let use_attr = !default_signals.is_empty();
    if use_attr {
        // SAFETY: `attr` is a valid, writable posix_spawnattr_t.
        let r = unsafe { libc::posix_spawnattr_init(attr.as_mut_ptr()) };
        if r != 0 {
            return Err(io::Error::from_raw_os_error(r));
        }
        let mut set = MaybeUninit::<libc::sigset_t>::zeroed();
        // SAFETY: `attr` was initialised above; `set` is a valid sigset_t, initialised
        // by sigemptyset before it is read.
        let r = unsafe {
            libc::sigemptyset(set.as_mut_ptr());
            for &s in default_signals {
                libc::sigaddset(set.as_mut_ptr(), s);
            }
            match libc::posix_spawnattr_setsigdefault(attr.as_mut_ptr(), set.as_ptr()) {
                0 => libc::posix_spawnattr_setflags(
                    attr.as_mut_ptr(),
                    libc::POSIX_SPAWN_SETSIGDEF as libc::c_short,
                ),
                e => e,
            }
        };
        if r != 0 {
            // SAFETY: initialised above and no longer used.
            unsafe { libc::posix_spawnattr_destroy(attr.as_mut_ptr()) };
            return Err(io::Error::from_raw_os_error(r));
        }
    }
    let attr_ptr = if use_attr {
        attr.as_ptr()
    } else {
        std::ptr::null()
    };
    let f = if search_path {
        libc::posix_spawnp
    } else {
        libc::posix_spawn
    };
    // SAFETY: `pid` is writable; the path and both null-terminated arrays live in `p`
    // for the duration of the call; no file actions; `attr_ptr` is null or an
    // initialised attribute object. The arrays are only read, although the C prototype
    // takes `*const *mut c_char`.
    let r = unsafe {
        f(
            &mut pid,
            p.path.as_ptr(),
            std::ptr::null(),
            attr_ptr,
            p.argv.as_ptr() as *const *mut libc::c_char,
            p.envp.as_ptr() as *const *mut libc::c_char,
        )
    };
    if use_attr {
        // SAFETY: initialised above and no longer used.
        unsafe { libc::posix_spawnattr_destroy(attr.as_mut_ptr()) };
    }
    if r != 0 {
        return Err(io::Error::from_raw_os_error(r));
    }
    Ok(super::task::Child::adopt(pid))
}

/// `posix_spawn` of the prepared program (by path), then reaps it.
pub fn spawn_wait(p: &PreparedExec) -> io::Result<ExitStatus> {
    spawn(p, false, &[])?.wait().map(ExitStatus::from_raw)
}

extern "C" fn nothing(_: *mut libc::c_void) -> *mut libc::c_void {
    std::ptr::null_mut()
}

/// `pthread_create` of a thread that returns at once, with default attributes, then
/// `pthread_join`.
pub fn thread_create_join() -> io::Result<()> {
    let mut t = MaybeUninit::<libc::pthread_t>::zeroed();
    // SAFETY: `t` is writable; null attributes mean the defaults; the start routine is
    // a valid `extern "C"` function that ignores its (null) argument.
    let r = unsafe {
        libc::pthread_create(
            t.as_mut_ptr(),
            std::ptr::null(),
            nothing,
            std::ptr::null_mut(),
        )
    };
    if r != 0 {
        return Err(io::Error::from_raw_os_error(r));
    }
    // SAFETY: pthread_create succeeded, so `t` holds a joinable thread, joined once.
    let r = unsafe { libc::pthread_join(t.assume_init(), std::ptr::null_mut()) };
    if r != 0 {
        return Err(io::Error::from_raw_os_error(r));
    }
    Ok(())
}

/// The calling process's user and system CPU time and its waited-for children's, from
/// `times()`, in clock ticks (see [`super::sys::clock_ticks_per_sec`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tics {
    /// This process's user time (`tms_utime`).
    pub user: i64,
    /// This process's system time (`tms_stime`).
    pub sys: i64,
    /// Waited-for children's user time (`tms_cutime`).
    pub child_user: i64,
    /// Waited-for children's system time (`tms_cstime`).
    pub child_sys: i64,
}

/// Reads `times()`.
pub fn times_now() -> Tics {
    let mut t = MaybeUninit::<libc::tms>::zeroed();
    // SAFETY: `t` is a valid, writable tms; times cannot fail with a valid pointer.
    let t = unsafe {
        libc::times(t.as_mut_ptr());
        t.assume_init()
    };
    Tics {
        user: t.tms_utime as i64,
        sys: t.tms_stime as i64,
        child_user: t.tms_cutime as i64,
        child_sys: t.tms_cstime as i64,
    }
}

/// A signal disposition saved by [`ignore_signals`] and restored on drop.
pub struct IgnoredSignals {
    old: super::signal::SavedActions,
}

impl fmt::Debug for IgnoredSignals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sigs: Vec<_> = self.old.old().iter().map(|(s, _)| *s).collect();
        f.debug_struct("IgnoredSignals")
            .field("signals", &sigs)
            .finish()
    }
}

impl IgnoredSignals {
    /// Whether `sig` was already ignored before (then a child should inherit that).
    pub fn was_ignored(&self, sig: libc::c_int) -> bool {
        self.old
            .old()
            .iter()
            .any(|(s, a)| *s == sig && a.sa_sigaction == libc::SIG_IGN)
    }
}

/// Ignores `sigs` in this process until the guard is dropped, as `time` does for
/// SIGINT and SIGQUIT while its child runs (the terminal sends them to the child too).
pub fn ignore_signals(sigs: &[libc::c_int]) -> io::Result<IgnoredSignals> {
    // SAFETY: SIG_IGN is no function.
    let old = unsafe { super::signal::SavedActions::install(sigs, libc::SIG_IGN, 0) }?;
    Ok(IgnoredSignals { old })
}

/// Starts the prepared program as a child named `name` (its `comm`, from the fork on)
/// that keeps `keep` open across the exec (every other descriptor of this process is
/// close-on-exec), with the death signal and ignored SIGINT of
/// [`super::task::fork`]'s children. The child `_exit(127)`s if the exec fails. The
/// returned [`super::task::Child`] kills and reaps it when dropped.
pub fn spawn_keeping(
    p: &PreparedExec,
    keep: std::os::fd::BorrowedFd<'_>,
    name: &std::ffi::CStr,
) -> io::Result<super::task::Child> {
    use std::os::fd::AsRawFd;
    let (path, argv, envp) = (p.path.as_ptr(), p.argv.as_ptr(), p.envp.as_ptr());
    let fd = keep.as_raw_fd();
    let name = name.as_ptr();
    // SAFETY: the child makes only `prctl`, `fcntl`, `execve` and `_exit`, all
    // async-signal-safe system calls, with pointers into `p` and `name`, built before
    // the fork and alive in the child's copy of memory; both arrays end with a null
    // pointer. It never returns into Rust code, so it uses none of this process's
    // owning objects.
    unsafe {
        super::task::fork(|| {
            libc::prctl(libc::PR_SET_NAME, name as libc::c_ulong, 0, 0, 0);
            if libc::fcntl(fd, libc::F_SETFD, 0) == -1 {
                return 126;
            }
            libc::execve(path, argv, envp);
            127
        })
    }
}

/// Takes ownership of the descriptor `fd` that this process was started with (the
/// worker's end of its socket, see [`spawn_keeping`]), marking it close-on-exec. Only
/// the first call succeeds, so no descriptor is owned twice.
pub fn take_inherited(fd: i32) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    use std::sync::atomic::{AtomicBool, Ordering};
    static TAKEN: AtomicBool = AtomicBool::new(false);
    if fd < 3 {
        return Err(einval("an inherited descriptor is 3 or above"));
    }
    // SAFETY: F_GETFD only reads the descriptor's flags.
    super::sys::cvt(unsafe { libc::fcntl(fd, libc::F_GETFD) }.into())?;
    if TAKEN.swap(true, Ordering::SeqCst) {
        return Err(io::Error::other(
            "the inherited descriptor was taken already",
        ));
    }
    // SAFETY: F_SETFD sets the flags of an open descriptor.
    super::sys::cvt(unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) }.into())?;
    // SAFETY: the descriptor is open (checked above), it was left open across the exec
    // for this process to own, and the flag above makes this the only owner made.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gone(pid: libc::pid_t) -> bool {
        !Path::new(&format!("/proc/{pid}")).exists()
    }

    #[test]
    fn fork_exit_wait_reaps_a_successful_child() {
        for _ in 0..3 {
            assert_eq!(fork_exit_wait().unwrap(), ExitStatus::Exited(0));
        }
    }

    #[test]
    fn vfork_exit_wait_reaps_a_successful_child() {
        if cfg!(not(target_arch = "x86_64")) {
            return;
        }
        for _ in 0..3 {
            assert_eq!(vfork_exit_wait().unwrap(), ExitStatus::Exited(0));
        }
        // The parent's stack and registers survived: keep computing with them.
        let v: Vec<u64> = (0..100).collect();
        assert_eq!(v.iter().sum::<u64>(), 4950);
    }

    #[test]
    fn threads_are_created_and_joined() {
        for _ in 0..3 {
            thread_create_join().unwrap();
        }
    }

    fn sh(script: &str) -> PreparedExec {
        PreparedExec::new(
            OsStr::new("/bin/sh"),
            &["sh".into(), "-c".into(), script.into()],
        )
        .unwrap()
    }

    #[test]
    fn exec_and_spawn_report_the_exit_status() {
        if !Path::new("/bin/sh").exists() {
            return;
        }
        for (script, code) in [("exit 0", 0), ("exit 3", 3)] {
            let status = fork_exec_wait(&sh(script)).unwrap();
            assert_eq!(status, ExitStatus::Exited(code));
        }
        assert_eq!(spawn_wait(&sh("exit 5")).unwrap(), ExitStatus::Exited(5));
        let killed = spawn_wait(&sh("kill -9 $$")).unwrap();
        assert_eq!(killed, ExitStatus::Signaled(libc::SIGKILL));
        assert_eq!(killed.shell_code(), 137);
        assert_eq!(killed.to_string(), "killed by signal 9 (SIGKILL)");
    }

    #[test]
    fn a_missing_program_fails_clearly() {
        let p = PreparedExec::new(
            OsStr::new("/nonexistent/syscost-no-such-program"),
            &["x".into()],
        )
        .unwrap();
        assert_eq!(fork_exec_wait(&p).unwrap(), ExitStatus::Exited(127));
        let e = spawn_wait(&p).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        let p = PreparedExec::new(
            OsStr::new("syscost-no-such-program-in-path"),
            &["x".into()],
        )
        .unwrap();
        assert_eq!(
            spawn(&p, true, &[]).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
    }

    #[test]
    fn wait4_reports_the_childs_usage() {
        if !Path::new("/bin/sh").exists() {
            return;
        }
        let mut c = spawn(&sh("exit 0"), false, &[libc::SIGINT]).unwrap();
        let (status, usage) = c.wait_usage().unwrap();
        assert!(ExitStatus::from_raw(status).success());
        assert!(c.wait_usage().is_err(), "reaped once only");
        assert!(usage.maxrss_kib > 0);
        assert!(usage.minor_faults > 0);
    }

    #[test]
    fn dropping_a_child_kills_and_reaps_it() {
        if !Path::new("/bin/sh").exists() {
            return;
        }
        let c = spawn(&sh("sleep 30"), false, &[]).unwrap();
        let pid = c.pid();
        drop(c);
        assert!(gone(pid), "child {pid} left behind");
    }

    #[test]
    fn non_positive_pids_are_refused() {
        for pid in [0, -1] {
            let kind = wait_child(pid).unwrap_err().kind();
            assert_eq!(kind, io::ErrorKind::InvalidInput);
        }
        assert!(wait_child_usage(-1).is_err());
    }

    #[test]
    fn exit_statuses_map_to_shell_codes() {
        assert_eq!(ExitStatus::Exited(0).shell_code(), 0);
        assert_eq!(ExitStatus::Exited(3).shell_code(), 3);
        assert_eq!(ExitStatus::Signaled(libc::SIGINT).shell_code(), 130);
        assert!(ExitStatus::Exited(0).success());
        assert!(!ExitStatus::Signaled(9).success());
    }

    #[test]
    fn ignored_signals_are_restored() {
        let before = super::super::sys::sigaction_get(libc::SIGQUIT).unwrap();
        {
            let g = ignore_signals(&[libc::SIGQUIT]).unwrap();
            let now = super::super::sys::sigaction_get(libc::SIGQUIT).unwrap();
            assert_eq!(now.handler(), libc::SIG_IGN);
            assert_eq!(
                g.was_ignored(libc::SIGQUIT),
                before.handler() == libc::SIG_IGN
            );
        }
        let after = super::super::sys::sigaction_get(libc::SIGQUIT).unwrap();
        assert_eq!(after.handler(), before.handler());
    }
}
