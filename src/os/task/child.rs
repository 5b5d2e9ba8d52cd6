//! Forked children: one [`Child`] type, reaped by its owner or killed and reaped by its
//! `Drop`; the one fork path, whose child may only make async-signal-safe calls; and
//! the partner start shared by the benchmarks that fork the other end of a round trip.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// A child process this process forked. Dropping it kills and reaps it if it has not
/// been reaped yet.
#[derive(Debug)]
pub struct Child {
    pid: libc::pid_t,
    status: Option<i32>,
}

/// Ends the forked child if its closure unwinds, so no parent code runs in it.
struct ExitOnUnwind;

impl Drop for ExitOnUnwind {
    fn drop(&mut self) {
        // SAFETY: _exit ends the process at once; it is async-signal-safe.
        unsafe { libc::_exit(101) }
    }
}

/// Forks a child that runs `child` and exits with its return value (101 if it
/// panics); the parent gets a [`Child`], which kills and reaps it when dropped.
///
/// In the child: the death signal is SIGKILL (so it never outlives this thread),
/// SIGINT is ignored (the parent decides what an interrupt means), and the signal mask
/// is inherited.
///
/// # Safety
/// This process may have other threads, whose locks (the allocator's, stdio's, the
/// environment's) the child inherits held and can never see released. `child` must
/// therefore only make async-signal-safe calls: system calls and atomics on memory
/// it can reach, no allocation, no locking, no formatting or printing. It must not
/// use the child's copies of this process's owning objects (descriptors, mappings,
/// children) in ways that assume it is their only owner; the copies are never
/// dropped, as the child ends with `_exit`.
pub unsafe fn fork(child: impl FnOnce() -> i32) -> io::Result<Child> {
    // SAFETY: the caller's promise is passed on.
    unsafe { fork_with(child, true) }
}

/// Forks a child of a single-threaded process that runs `child` and exits with its
/// return value, as [`fork`] does; the child may allocate and take locks, since no
/// other thread of this process can hold one. Fails (without forking) when this
/// process has more than one thread: a copy of a benchmark runs whole benchmark code.
pub fn fork_alone(child: impl FnOnce() -> i32) -> io::Result<Child> {
    let threads = crate::os::mem::thread_count()?;
    if threads != 1 {
        return Err(io::Error::other(format!(
            "this process has {threads} threads; a forked copy needs it single-threaded"
        )));
    }
    // SAFETY: with one thread in this process no lock is held by another thread, so
    // the child may run ordinary code; it ends with _exit and never drops the
    // parent's owning objects it inherited.
    unsafe { fork_with(child, true) }
}

/// The exit status of a [`fork_partner`] child that could not move to its CPUs.
pub const PARTNER_CPUS_FAILED: i32 = 4;

/// Forks a benchmark's partner, the other end of a round trip: the child first closes
/// `close` (the parent's ends of the channels, so that end of file reaches it;
/// negative entries are skipped), then moves to `cpus`, exiting with
/// [`PARTNER_CPUS_FAILED`] if it cannot, then runs `work` and exits with its value.
///
/// # Safety
/// As for [`fork`]: `work` makes only async-signal-safe calls and does not use the
/// child's copies of the parent's owning objects. Every descriptor in `close` must be
/// one the child never uses again.
pub unsafe fn fork_partner(
    close: &[RawFd],
    cpus: &[usize],
    work: impl FnOnce() -> i32,
) -> io::Result<Child> {
    // SAFETY: closing descriptors the caller gives up and setting the affinity
    // (a system call on a stack set) are async-signal-safe; `work` is the caller's.
    unsafe {
        fork(|| {
            for &fd in close {
                if fd >= 0 {
                    close_in_child(fd);
                }
            }
            if crate::os::affinity::set_cpus(cpus).is_err() {
                return PARTNER_CPUS_FAILED;
            }
            work()
        })
    }
}

/// Like [`fork`], but the child may outlive this process (no death signal) and ignores
/// SIGINT, SIGTERM and SIGHUP: for a keeper that must act after this process dies (see
/// [`crate::os::ipc::SysvQueue`]). It must end by itself.
///
/// # Safety
/// As for [`fork`].
pub unsafe fn fork_survivor(child: impl FnOnce() -> i32) -> io::Result<Child> {
    // SAFETY: the caller's promise is passed on.
    unsafe { fork_with(child, false) }
}

/// # Safety
/// As for [`fork`].
unsafe fn fork_with(
    child: impl FnOnce() -> i32,
    die_with_parent: bool,
) -> io::Result<Child> {
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: fork has no memory-safety preconditions; the child only runs `child`,
    // which the caller promises is async-signal-safe, and then _exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        let guard = ExitOnUnwind;
        // SAFETY: prctl, getppid, signal and _exit are async-signal-safe system calls
        // with valid arguments.
        unsafe {
            if die_with_parent {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
            } else {
                libc::signal(libc::SIGTERM, libc::SIG_IGN);
                libc::signal(libc::SIGHUP, libc::SIG_IGN);
            }
            libc::signal(libc::SIGINT, libc::SIG_IGN);
        }
        let code = child();
        std::mem::forget(guard);
        // SAFETY: as above.
        unsafe { libc::_exit(code) }
    }
    Ok(Child { pid, status: None })
}

impl Child {
    /// Owns a child this layer started another way (`posix_spawn`): from now on it is
    /// reaped by [`Child::wait`] or killed and reaped when dropped.
    pub(in crate::os) fn adopt(pid: libc::pid_t) -> Child {
        assert!(pid > 0, "a child's pid is positive");
        Child { pid, status: None }
    }

    /// Reaps it, blocking until it ends, with the resource usage of it and of its own
    /// reaped children (`wait4`). Fails if it was reaped already.
    pub fn wait_usage(&mut self) -> io::Result<(i32, crate::os::usage::Usage)> {
        if self.status.is_some() {
            return Err(io::Error::other("the child was reaped already"));
        }
        loop {
            let mut st = 0;
            let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
            // SAFETY: `st` and `ru` are valid and writable; pid is our own unreaped
            // child.
            let r = unsafe { libc::wait4(self.pid, &mut st, 0, ru.as_mut_ptr()) };
            if r == self.pid {
                self.status = Some(st);
                // SAFETY: zeroed, then filled by the kernel; plain integers.
                let ru = unsafe { ru.assume_init() };
                return Ok((st, crate::os::usage::Usage::from_rusage(&ru)));
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// Its process id (always > 0).
    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// Its wait status, if it has been reaped.
    pub fn status(&self) -> Option<i32> {
        self.status
    }

    /// Reaps it without blocking: its wait status if it has ended.
    pub fn try_wait(&mut self) -> io::Result<Option<i32>> {
        if self.status.is_some() {
            return Ok(self.status);
        }
        let mut st = 0;
        // SAFETY: `st` is a valid int; pid is our own unreaped child.
        let r = unsafe { libc::waitpid(self.pid, &mut st, libc::WNOHANG) };
        match r {
            0 => Ok(None),
            r if r == self.pid => {
                self.status = Some(st);
                Ok(self.status)
            }
            _ => Err(io::Error::last_os_error()),
        }
    }

    /// Reaps it, blocking until it ends.
    pub fn wait(&mut self) -> io::Result<i32> {
        if let Some(s) = self.status {
            return Ok(s);
        }
        loop {
            let mut st = 0;
            // SAFETY: `st` is a valid int; pid is our own unreaped child.
            let r = unsafe { libc::waitpid(self.pid, &mut st, 0) };
            if r == self.pid {
                self.status = Some(st);
                return Ok(st);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// Waits until it stops (SIGSTOP and the like) or ends: true when stopped; when it
    /// ended, it is reaped and false is returned.
    pub fn wait_stopped(&mut self) -> io::Result<bool> {
        if self.status.is_some() {
            return Ok(false);
        }
        loop {
            let mut st = 0;
            // SAFETY: `st` is a valid int; pid is our own unreaped child. WUNTRACED
            // reports a stop without reaping.
            let r = unsafe { libc::waitpid(self.pid, &mut st, libc::WUNTRACED) };
            if r == self.pid {
                if libc::WIFSTOPPED(st) {
                    return Ok(true);
                }
                self.status = Some(st);
                return Ok(false);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// Sends `sig` to it, unless it has been reaped (its pid may have been reused).
    pub fn signal(&self, sig: libc::c_int) -> io::Result<()> {
        if self.status.is_some() {
            return Ok(());
        }
        // SAFETY: pid > 0 is our own unreaped child.
        let r = unsafe { libc::kill(self.pid, sig) };
        crate::os::sys::cvt(r as libc::c_long).map(|_| ())
    }

    /// Waits until `deadline` for it to end by itself, then kills and reaps it.
    /// Returns its wait status and whether it had to be killed.
    pub fn reap_by(&mut self, deadline: Instant) -> io::Result<(i32, bool)> {
        loop {
            if let Some(s) = self.try_wait()? {
                return Ok((s, false));
            }
            if Instant::now() >= deadline {
                self.signal(libc::SIGKILL)?;
                return Ok((self.wait()?, true));
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.status.is_none() {
            let _ = self.signal(libc::SIGKILL);
            let _ = self.wait();
        }
    }
}

/// A wait status in words: "exited with 3", "killed by signal 9".
pub fn describe_status(st: i32) -> String {
    if libc::WIFEXITED(st) {
        format!("exited with status {}", libc::WEXITSTATUS(st))
    } else if libc::WIFSIGNALED(st) {
        format!("killed by signal {}", libc::WTERMSIG(st))
    } else {
        format!("wait status {st:#x}")
    }
}

/// Whether a wait status is a clean exit with status 0.
pub fn exited_ok(st: i32) -> bool {
    libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0
}

/// Closes a raw descriptor in a forked child (whose copies of the parent's owning
/// objects are never dropped).
///
/// # Safety
/// Called in a child made by [`fork`], on a descriptor that nothing the child still
/// runs will use: its owner's copy in the child is never used or dropped again.
pub unsafe fn close_in_child(fd: RawFd) {
    // SAFETY: the caller promises no one uses `fd` in this process after this.
    unsafe { libc::close(fd) };
}

/// A process that waits for a child of this one to end and then runs a callback: for a
/// task blocked on something the child's death does not end by itself (a futex word, a
/// datagram socket, a message queue, where a pipe would give end of file). It is a
/// process, not a thread, so that the measuring process stays single-threaded (a
/// second thread makes every descriptor lookup take a reference, which slows a same-CPU
/// pipe round trip by a few percent: docs/measurements/paired.md, "The masters' time
/// limits"). It waits in poll(2) on the child's pidfd, costs
/// nothing while the child lives, dies with the thread that started it, and is killed
/// and reaped when dropped.
#[derive(Debug)]
pub struct ExitWatch {
    _watcher: Child,
}

impl ExitWatch {
    /// Watches `pid` (a child of this process, not yet reaped); `ended` runs in the
    /// watching process once it has ended. Fails where pidfd_open(2) does (kernels
    /// before 5.3).
    ///
    /// # Safety
    /// As for [`fork`]: `ended` makes only async-signal-safe calls (system calls and
    /// atomics on shared memory, on its copies of this process's descriptors).
    pub unsafe fn start(pid: libc::pid_t, ended: impl FnOnce()) -> io::Result<ExitWatch> {
        use std::os::fd::AsRawFd;
        let r = crate::os::sys::cvt(crate::os::peers::pidfd_open_raw(pid))?;
        let pidfd = crate::os::peers::own_fd(r);
        let fd = pidfd.as_raw_fd();
        // SAFETY: the child polls a descriptor and runs `ended`, which the caller
        // promises is async-signal-safe.
        let watcher = unsafe {
            fork(move || {
                let mut fds = [libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                }];
                // Only an interrupted wait is waited again; any other failure ends the
                // watcher without a wake (a spin here would take a CPU).
                while crate::os::svc::poll_forever(&mut fds) < 0 {
                    if io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                        return 1;
                    }
                }
                ended();
                0
            })
        }?;
        Ok(ExitWatch { _watcher: watcher })
    }
}
