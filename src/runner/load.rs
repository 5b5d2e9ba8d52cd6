//! Background load: N child processes that spin on the CPU while benchmarks run (the
//! seeds' "multi-user" condition).
//!
//! The children are forked from this process and only spin; each asks the kernel to
//! kill it if its parent dies, so none outlives syscost even after a SIGKILL. `Drop`
//! kills (by their own positive pids) and reaps every child.
#![allow(unsafe_code)]

use std::io;

/// A set of spinning child processes.
#[derive(Debug)]
pub struct Load {
    pids: Vec<libc::pid_t>,
}

impl Load {
    /// Starts `n` spinning children.
    pub fn start(n: usize) -> io::Result<Load> {
        let mut load = Load {
            pids: Vec::with_capacity(n),
        };
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        for _ in 0..n {
            if super::interrupt::interrupted() {
                // `load` drops and reaps the ones already started.
                return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
            }
            // SAFETY: the child runs only async-signal-safe calls (prctl, getppid,
            // _exit) and a pure spin loop; it never returns into Rust code.
            let pid = unsafe { libc::fork() };
            if pid < 0 {
                return Err(io::Error::last_os_error()); // `load` drops and reaps the others
            }
            if pid == 0 {
                spin_child(parent);
            }
            load.pids.push(pid);
        }
        Ok(load)
    }

    /// The children's process ids.
    pub fn pids(&self) -> &[libc::pid_t] {
        &self.pids
    }
}

fn spin_child(parent: libc::pid_t) -> ! {
    // SAFETY: prctl with integer arguments; getppid and _exit have no preconditions.
    unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        );
        if libc::getppid() != parent {
            libc::_exit(0);
        }
    }
    let mut x = 0u64;
    loop {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        for &pid in &self.pids {
            if pid > 0 {
                // SAFETY: pid is one of our own children (positive); signalling and
                // then waiting for it with a valid status pointer.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    let mut status = 0;
                    while libc::waitpid(pid, &mut status, 0) < 0
                        && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
                    {
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alive(pid: libc::pid_t) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| !s.contains(") Z "))
            .unwrap_or(false)
    }

    #[test]
    fn load_children_spin_then_are_reaped() {
        let load = Load::start(2).unwrap();
        let pids = load.pids().to_vec();
        assert_eq!(pids.len(), 2);
        assert!(pids.iter().all(|&p| alive(p)));
        drop(load);
        assert!(pids
            .iter()
            .all(|&p| !std::path::Path::new(&format!("/proc/{p}")).exists()));
    }
}
