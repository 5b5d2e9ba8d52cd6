//! `proc.clone3`: process creation through clone3(2), the newer entry with its
//! arguments in a structure (the one pidfds, cgroups and set_tid come through): with
//! no flags and SIGCHLD as the exit signal it is a fork, so it stands beside
//! `proc.fork`. Skipped with the kernel's reason where clone3 is refused (ENOSYS
//! before 5.3, or a seccomp policy that answers ENOSYS or EPERM).

use super::ONE_BY_ONE;
use crate::bench::facts::*;
use crate::bench::{body, Prepared, Simple};
use crate::error::BenchError;
use crate::os::peers;

/// `proc.clone3`.
pub const CLONE3: Simple = Simple {
    name: "proc.clone3",
    facts: NAMED.on(Generic, "clone3, then waitpid (libc)"),
    about: "clone3 with no flags and SIGCHLD as the exit signal (a fork by the newer call); the child _exit(0)s at once; waitpid reaps it",
    origin: "",
    params: &[],
    prepare: |_| {
        if peers::clone3_exit_wait() != 0 {
            let e = std::io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(libc::ENOSYS | libc::EPERM) => {
                    BenchError::Skip(format!("clone3 refused here: {e}"))
                }
                _ => BenchError::os("clone3", e),
            });
        }
        Ok(Prepared::new(body(|| {
            if peers::clone3_exit_wait() != 0 {
                return Err(BenchError::last_os("clone3 or waitpid"));
            }
            Ok(())
        }))
        .op("clone3+exit+wait")
        .plan(ONE_BY_ONE))
    },
};
