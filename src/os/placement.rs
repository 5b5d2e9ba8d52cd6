//! Where this process's tasks ran: every thread of this process and of its
//! descendants, with the CPU it last ran on and how often the scheduler has moved it,
//! read from `/proc`. For benchmarks whose tasks the scheduler places (`placement=free`):
//! read before and after a round, untimed.

use std::fs;

/// One task's place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskPlace {
    /// Its thread id.
    pub tid: i32,
    /// The CPU it last ran on.
    pub cpu: u32,
    /// Its migrations so far (`se.nr_migrations` in `/proc/PID/task/TID/sched`, when
    /// the kernel shows it).
    pub migrations: Option<u64>,
}

/// Every task of this process and its descendants (those `/proc` still shows).
pub fn tasks() -> Vec<TaskPlace> {
    let mut out = Vec::new();
    let mut pids = vec![std::process::id() as i32];
    let mut seen = 0;
    while seen < pids.len() && pids.len() < 4096 {
        let pid = pids[seen];
        seen += 1;
        let Ok(dir) = fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for e in dir.flatten() {
            let Some(tid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok())
            else {
                continue;
            };
            let base = format!("/proc/{pid}/task/{tid}");
            if let Some(cpu) = fs::read_to_string(format!("{base}/stat"))
                .ok()
                .as_deref()
                .and_then(last_cpu)
            {
                let migrations = fs::read_to_string(format!("{base}/sched"))
                    .ok()
                    .as_deref()
                    .and_then(nr_migrations);
                out.push(TaskPlace {
                    tid,
                    cpu,
                    migrations,
                });
            }
            if let Ok(children) = fs::read_to_string(format!("{base}/children")) {
                pids.extend(
                    children
                        .split_whitespace()
                        .filter_map(|c| c.parse::<i32>().ok()),
                );
            }
        }
    }
    out
}

/// The `processor` field (the 39th) of a `stat` line, whose second field (the command
/// name, in parentheses) may hold spaces.
fn last_cpu(stat: &str) -> Option<u32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    // Field 3 (state) is the first after the name: field 39 is the 37th from there.
    rest.split_whitespace().nth(36)?.parse().ok()
}

/// `se.nr_migrations` of a `sched` file.
fn nr_migrations(sched: &str) -> Option<u64> {
    sched
        .lines()
        .find(|l| l.trim_start().starts_with("se.nr_migrations"))
        .and_then(|l| l.split(':').nth(1))
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stat_line_is_read_past_a_name_with_spaces_and_parentheses() {
        let fields: Vec<String> = (3..=52).map(|i| i.to_string()).collect();
        let line = format!("42 (a (b) c) {}", fields.join(" "));
        assert_eq!(last_cpu(&line), Some(39));
        assert_eq!(nr_migrations("se.nr_migrations   :   17\nx : 1"), Some(17));
    }

    #[test]
    fn this_thread_and_a_child_are_found_on_cpus_that_exist() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let all = tasks();
        let _ = child.kill();
        let _ = child.wait();
        let me = crate::os::task::gettid();
        assert!(all.iter().any(|t| t.tid == me), "{all:?}");
        assert!(all.iter().any(|t| t.tid == child.id() as i32), "{all:?}");
        let cpus = std::fs::read_to_string("/sys/devices/system/cpu/possible").unwrap();
        let last: u32 = cpus
            .trim()
            .rsplit(['-', ','])
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(all.iter().all(|t| t.cpu <= last), "{all:?} on {cpus}");
    }
}
