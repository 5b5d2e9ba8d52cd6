//! How a child ended, and waiting for one: only for a positive pid, our own child,
//! retried when a signal interrupts the wait.
#![allow(unsafe_code)]

use super::einval;
use crate::os::usage::Usage;
use std::fmt;
use std::io;
use std::mem::MaybeUninit;

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// It called `exit` (or returned from `main`) with this status.
    Exited(i32),
    /// A signal ended it.
    Signaled(i32),
}

impl ExitStatus {
    /// Decodes a `wait` status (only exits and deaths are waited for here).
    pub fn from_raw(status: libc::c_int) -> ExitStatus {
        if libc::WIFSIGNALED(status) {
            ExitStatus::Signaled(libc::WTERMSIG(status))
        } else {
            ExitStatus::Exited(libc::WEXITSTATUS(status))
        }
    }

    /// Whether it exited with status 0.
    pub fn success(&self) -> bool {
        *self == ExitStatus::Exited(0)
    }

    /// The status a shell would report: the exit status, or 128 + the signal.
    pub fn shell_code(&self) -> u8 {
        match *self {
            ExitStatus::Exited(c) => (c & 0xff) as u8,
            ExitStatus::Signaled(s) => (128 + s).clamp(0, 255) as u8,
        }
    }
}

impl fmt::Display for ExitStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ExitStatus::Exited(c) => write!(f, "exit status {c}"),
            ExitStatus::Signaled(s) => {
                write!(f, "killed by signal {s} ({})", signal_name(s))
            }
        }
    }
}

/// The usual name of a signal (`SIGKILL`), or `SIG?` for one without a common name.
pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        _ => "SIG?",
    }
}

/// Waits for our child `pid` to end and reaps it, retrying when a signal interrupts
/// the wait. Refuses a pid ≤ 0, which would wait for any child or a group.
#[inline]
pub fn wait_child(pid: libc::pid_t) -> io::Result<ExitStatus> {
    if pid <= 0 {
        return Err(einval("wait_child: pid must be positive"));
    }
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: `status` is a valid, writable int; pid names one process.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return Ok(ExitStatus::from_raw(status));
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Like [`wait_child`], with `wait4`: also returns the resource usage of the child and
/// of the descendants it waited for (`maxrss_kib` is their largest).
pub fn wait_child_usage(pid: libc::pid_t) -> io::Result<(ExitStatus, Usage)> {
    if pid <= 0 {
        return Err(einval("wait_child_usage: pid must be positive"));
    }
    let mut status: libc::c_int = 0;
    let mut ru = MaybeUninit::<libc::rusage>::zeroed();
    loop {
        // SAFETY: `status` and `ru` are valid, writable and correctly sized; pid
        // names one process.
        let r = unsafe { libc::wait4(pid, &mut status, 0, ru.as_mut_ptr()) };
        if r == pid {
            // SAFETY: zero-initialised, then filled by the kernel; all fields are
            // plain integers.
            let ru = unsafe { ru.assume_init() };
            return Ok((ExitStatus::from_raw(status), usage_of(&ru)));
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

fn usage_of(ru: &libc::rusage) -> Usage {
    Usage::from_rusage(ru)
}
