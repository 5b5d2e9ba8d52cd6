//! Background load: N child processes that spin on the CPU while benchmarks run (the
//! seeds' "multi-user" condition).
//!
//! The children are forked from this process and only spin; each asks the kernel to
//! kill it if its parent dies, so none outlives syscost even after a SIGKILL. Each is a
//! [`Child`], killed and reaped when dropped.
#![allow(unsafe_code)]

use super::task::Child;
use std::io;

/// A spinner's name (`comm`, as `ps` shows it).
pub const LOAD_NAME: &std::ffi::CStr = c"syscost-load";

/// A set of spinning child processes, each killed and reaped when dropped.
#[derive(Debug)]
pub struct Load {
    children: Vec<Child>,
    pids: Vec<libc::pid_t>,
}

impl Load {
    /// Starts `n` spinning children.
    pub fn start(n: usize) -> io::Result<Load> {
        let mut load = Load {
            children: Vec::with_capacity(n),
            pids: Vec::with_capacity(n),
        };
        for _ in 0..n {
            if super::interrupt::interrupted() {
                // `load` drops and reaps the ones already started.
                return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
            }
            // SAFETY: the child names itself (prctl, a system call on a static
            // string) and then only spins on a register; it allocates, locks and
            // touches nothing else (fork gives it the parent-death signal).
            let child = unsafe {
                super::task::fork(|| {
                    libc::prctl(
                        libc::PR_SET_NAME,
                        LOAD_NAME.as_ptr() as libc::c_ulong,
                        0,
                        0,
                        0,
                    );
                    spin()
                })
            }?; // `load` reaps the others
            load.pids.push(child.pid());
            load.children.push(child);
        }
        Ok(load)
    }

    /// The children's process ids.
    pub fn pids(&self) -> &[libc::pid_t] {
        &self.pids
    }
}

fn spin() -> i32 {
    let mut x = 0u64;
    loop {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
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
