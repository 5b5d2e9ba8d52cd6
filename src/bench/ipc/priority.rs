//! The `priority` parameter of `ipc.rtt`: `M:S`, a nice value (-20..19) or `rtN`
//! (SCHED_FIFO at N, 1..99) for the master and for the slave, as the VMS study ran
//! its mailbox echo at several process priorities.
//!
//! The slave's value goes to the forked child by its pid; the master's to the
//! measuring thread only (by its thread id), and the thread's own values come back
//! when the guard is dropped. Whatever needs privilege is tried only when this process
//! holds it; otherwise the benchmark is skipped with the reason. No other process's
//! priority is ever read or changed.

use crate::bench::OrOs;
use crate::error::BenchError;
use crate::os::ipc;
use crate::os::task;

/// One task's scheduling: a nice value, or SCHED_FIFO at a real-time priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sched {
    /// SCHED_OTHER at this nice value.
    Nice(i32),
    /// SCHED_FIFO at this priority.
    Fifo(i32),
}

impl Sched {
    fn parse(s: &str) -> Result<Sched, String> {
        if let Some(n) = s.strip_prefix("rt") {
            let p: i32 = n
                .parse()
                .map_err(|_| format!("'{s}': write rtN with N a number"))?;
            if !(1..=99).contains(&p) {
                return Err(format!("'{s}': a real-time priority is 1 to 99"));
            }
            return Ok(Sched::Fifo(p));
        }
        let v: i32 = s
            .parse()
            .map_err(|_| format!("'{s}' is neither a nice value nor rtN"))?;
        if !(-20..=19).contains(&v) {
            return Err(format!("'{s}': a nice value is -20 to 19"));
        }
        Ok(Sched::Nice(v))
    }

    fn show(self) -> String {
        match self {
            Sched::Nice(n) => n.to_string(),
            Sched::Fifo(p) => format!("rt{p}"),
        }
    }
}

/// Parses `M:S` into the master's and the slave's scheduling.
pub fn parse(s: &str) -> Result<(Sched, Sched), String> {
    let (m, sl) = s.split_once(':').ok_or_else(|| {
        "write it as M:S, each a nice value -20 to 19 or rtN (SCHED_FIFO 1 to 99), e.g. 0:0, 5:-5, rt10:0".to_string()
    })?;
    Ok((Sched::parse(m.trim())?, Sched::parse(sl.trim())?))
}

/// The parameter check: the canonical `M:S`, or why the value is wrong.
pub fn check(s: &str) -> Result<String, String> {
    let (m, sl) = parse(s)?;
    Ok(format!("{}:{}", m.show(), sl.show()))
}

/// Refuses, with the reason, what this process may not do.
fn permitted(to: Sched, now_nice: i32, who: &str, undo: bool) -> Result<(), BenchError> {
    let skip = |why: String| Err(BenchError::Skip(format!("priority: {who} {why}")));
    match to {
        Sched::Fifo(p) if !ipc::may_use_fifo(p) => {
            skip(format!("rt{p} needs CAP_SYS_NICE or an RLIMIT_RTPRIO of {p}"))
        }
        Sched::Nice(n) if n < now_nice && !ipc::may_lower_nice_to(n) => skip(format!(
            "nice {n} (below the current {now_nice}) needs CAP_SYS_NICE or RLIMIT_NICE"
        )),
        Sched::Nice(n) if undo && n > now_nice && !ipc::may_lower_nice_to(now_nice) => {
            skip(format!(
                "nice {n} could not be undone back to {now_nice} without CAP_SYS_NICE or RLIMIT_NICE"
            ))
        }
        _ => Ok(()),
    }
}

fn apply(id: libc::pid_t, to: Sched) -> Result<(), BenchError> {
    let r = match to {
        Sched::Nice(n) => {
            // Leave a real-time policy first (always permitted), then set the value.
            match ipc::get_sched(id) {
                Ok((policy, _)) if policy != libc::SCHED_OTHER => {
                    ipc::set_sched(id, libc::SCHED_OTHER, 0)
                }
                Ok(_) => Ok(()),
                Err(e) => Err(e),
            }
            .and_then(|()| ipc::set_nice(id, n))
        }
        Sched::Fifo(p) => ipc::set_sched(id, libc::SCHED_FIFO, p),
    };
    r.map_err(|e| match e.raw_os_error() {
        Some(libc::EPERM | libc::EACCES) => {
            BenchError::Skip(format!("priority {}: not permitted ({e})", to.show()))
        }
        _ => BenchError::os("setpriority/sched_setscheduler", e),
    })
}

/// Gives the forked slave (our own child, pid > 0) its scheduling.
pub fn set_child(pid: libc::pid_t, to: Sched) -> Result<(), BenchError> {
    let now = ipc::get_nice(pid).or_os("getpriority")?;
    let policy = ipc::get_sched(pid).or_os("sched_getscheduler")?;
    if policy.0 == libc::SCHED_OTHER && to == Sched::Nice(now) {
        return Ok(());
    }
    permitted(to, now, "slave", false)?;
    apply(pid, to)
}

/// The measuring thread's scheduling, changed for the life of the guard.
pub struct MasterSched {
    tid: libc::pid_t,
    nice: i32,
    policy: (libc::c_int, libc::c_int),
    changed: bool,
}

impl MasterSched {
    /// Sets the calling thread's scheduling to `to` (nothing happens when it already is).
    pub fn set(to: Sched) -> Result<MasterSched, BenchError> {
        let tid = task::gettid();
        let nice = ipc::get_nice(tid).or_os("getpriority")?;
        let policy = ipc::get_sched(tid).or_os("sched_getscheduler")?;
        let mut guard = MasterSched {
            tid,
            nice,
            policy,
            changed: false,
        };
        let already = match to {
            Sched::Nice(n) => policy.0 == libc::SCHED_OTHER && n == nice,
            Sched::Fifo(p) => policy == (libc::SCHED_FIFO, p),
        };
        if !already {
            permitted(to, nice, "master", true)?;
            guard.changed = true;
            apply(tid, to)?;
        }
        Ok(guard)
    }
}

impl Drop for MasterSched {
    fn drop(&mut self) {
        if self.changed {
            let _ = ipc::set_sched(self.tid, self.policy.0, self.policy.1);
            let _ = ipc::set_nice(self.tid, self.nice);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priorities_parse_and_refuse_bad_syntax() {
        assert_eq!(parse("0:0"), Ok((Sched::Nice(0), Sched::Nice(0))));
        assert_eq!(parse("rt5:-3"), Ok((Sched::Fifo(5), Sched::Nice(-3))));
        assert_eq!(check(" 4 : rt99").unwrap(), "4:rt99");
        for bad in [
            "", "5", "0:", ":0", "x:0", "0:20", "-21:0", "rt0:0", "rt100:0", "rt:1",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_master_thread_gets_its_nice_value_back() {
        let tid = task::gettid();
        let before = ipc::get_nice(tid).unwrap();
        let target = (before + 1).min(19);
        let g = match MasterSched::set(Sched::Nice(target)) {
            Ok(g) => g,
            Err(BenchError::Skip(why)) => {
                assert!(why.contains("could not be undone"), "{why}");
                return;
            }
            Err(e) => panic!("{e}"),
        };
        assert_eq!(ipc::get_nice(tid).unwrap(), target);
        drop(g);
        assert_eq!(ipc::get_nice(tid).unwrap(), before);
    }
}
