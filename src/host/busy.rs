//! Finds other processes using CPU right now: two snapshots of utime+stime from every
//! /proc/PID/stat, taken about 100 ms apart. Reads only; never signals anything.
//!
//! Times in /proc/PID/stat are in clock ticks of USER_HZ, which is 100 per second on
//! Linux (the ABI value `sysconf(_SC_CLK_TCK)` returns), so one tick is 10 ms. Over a
//! 100 ms window one tick is therefore 10% of a CPU, and a process that used 0.1 ms may
//! show one tick if it happened to cross a tick boundary. So a process counts as busy
//! only when even one tick less than measured would exceed 5% (at 100 ms: two ticks or
//! more); idle daemons then do not show up by chance, and a spinning process always does.

use super::BusyProcess;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Clock ticks per second in /proc/PID/stat (USER_HZ, 100 on Linux).
const TICKS_PER_SEC: f64 = 100.0;
/// A process is "busy" above this share of one CPU, in percent.
const BUSY_PERCENT: f64 = 5.0;
/// How many busy processes to report at most.
const MAX_BUSY: usize = 5;

/// The parts of one /proc/PID/stat line that the busy check needs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProcStat {
    pub pid: u32,
    pub ppid: u32,
    pub comm: String,
    /// utime + stime, in clock ticks.
    pub ticks: u64,
}

/// Parses /proc/PID/stat. The command name sits in parentheses and may itself contain
/// spaces and ')', so the fields are read after the *last* ')'.
pub(crate) fn parse_proc_stat(text: &str) -> Option<ProcStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    let comm = text.get(open + 1..close)?.to_string();
    // After ')': field 3 (state) is index 0, so field N is index N - 3.
    let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
    let field = |n: usize| rest.get(n - 3)?.parse::<u64>().ok();
    let ppid = u32::try_from(field(4)?).ok()?;
    let ticks = field(14)? + field(15)?;
    Some(ProcStat {
        pid,
        ppid,
        comm,
        ticks,
    })
}

/// Reads /proc/PID/stat of every process now, keyed by pid. Processes that vanish
/// while being read are simply missing.
fn snapshot() -> HashMap<u32, ProcStat> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return HashMap::new();
    };
    dir.flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter_map(|text| parse_proc_stat(&text))
        .map(|s| (s.pid, s))
        .collect()
}

/// Processes whose CPU use between two snapshots surely exceeds 5% of a CPU, busiest
/// first, at most five. Skips `own_pid`, its children, and every pid in `exclude`.
pub(crate) fn busy_between(
    before: &HashMap<u32, ProcStat>,
    after: &HashMap<u32, ProcStat>,
    elapsed: Duration,
    own_pid: u32,
    exclude: &[u32],
) -> Vec<BusyProcess> {
    let secs = elapsed.as_secs_f64();
    if secs <= 0.0 {
        return Vec::new();
    }
    let mut busy: Vec<BusyProcess> = after
        .values()
        .filter(|p| p.pid != own_pid && p.ppid != own_pid && !exclude.contains(&p.pid))
        .filter_map(|p| {
            // A pid missing earlier, or with fewer ticks now (reused), is not compared.
            let used = p.ticks.checked_sub(before.get(&p.pid)?.ticks)?;
            let percent = |ticks: u64| ticks as f64 / TICKS_PER_SEC / secs * 100.0;
            let cpu_percent = percent(used);
            let comm = p.comm.clone();
            // The least it can have used is one tick less than measured (see above).
            let surely_busy = percent(used.saturating_sub(1)) > BUSY_PERCENT;
            surely_busy.then_some(BusyProcess {
                pid: p.pid,
                comm,
                cpu_percent,
            })
        })
        .collect();
    busy.sort_by(|a, b| {
        b.cpu_percent
            .total_cmp(&a.cpu_percent)
            .then(a.pid.cmp(&b.pid))
    });
    busy.truncate(MAX_BUSY);
    busy
}

/// A first snapshot, waiting to be compared with a second one.
pub(crate) struct Sample {
    start: Instant,
    before: HashMap<u32, ProcStat>,
}

impl Sample {
    /// Takes the first snapshot.
    pub(crate) fn start() -> Self {
        Sample {
            start: Instant::now(),
            before: snapshot(),
        }
    }

    /// Waits until at least `window` has passed since `start`, takes the second snapshot
    /// and returns the busy processes.
    pub(crate) fn finish(self, window: Duration, exclude: &[u32]) -> Vec<BusyProcess> {
        if let Some(rest) = window.checked_sub(self.start.elapsed()) {
            std::thread::sleep(rest);
        }
        let after = snapshot();
        let elapsed = self.start.elapsed();
        busy_between(&self.before, &after, elapsed, std::process::id(), exclude)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(pid: u32, ppid: u32, comm: &str, ticks: u64) -> ProcStat {
        ProcStat {
            pid,
            ppid,
            comm: comm.into(),
            ticks,
        }
    }

    fn map(list: &[ProcStat]) -> HashMap<u32, ProcStat> {
        list.iter().map(|p| (p.pid, p.clone())).collect()
    }

    #[test]
    fn stat_line_with_awkward_comm() {
        let line = "2436 (cat) R 2426 2426 1836 0 -1 4194304 103 0 0 0 7 3 0 0 20 0 1 0 \
                    17935 3133440 383 18446744073709551615 94615565271040 0 0 0 0 0 0\n";
        assert_eq!(parse_proc_stat(line), Some(stat(2436, 2426, "cat", 10)));
        let odd = "77 (tmux: (x) y) S 1 77 77 0 -1 4194560 1 0 0 0 250 50 0 0 20 0 1 0 9";
        assert_eq!(parse_proc_stat(odd), Some(stat(77, 1, "tmux: (x) y", 300)));
        assert_eq!(parse_proc_stat("12 (short) S 1 2"), None);
        assert_eq!(parse_proc_stat(""), None);
    }

    #[test]
    fn busy_filters_and_ranks() {
        let own = 500;
        let before = map(&[
            stat(1, 0, "systemd", 100),
            stat(10, 1, "spinner", 1000),
            stat(11, 1, "half", 50),
            stat(12, own, "our child", 0),
            stat(own, 1, "syscost", 0),
            stat(13, 1, "excluded", 0),
            stat(14, 1, "reused", 900),
            stat(16, 1, "one tick", 70),
        ]);
        let after = map(&[
            stat(1, 0, "systemd", 100),
            stat(10, 1, "spinner", 1010),
            stat(11, 1, "half", 55),
            stat(12, own, "our child", 10),
            stat(own, 1, "syscost", 10),
            stat(13, 1, "excluded", 10),
            stat(14, 1, "reused", 1),
            stat(15, 1, "newcomer", 10),
            stat(16, 1, "one tick", 71),
        ]);
        let busy = busy_between(&before, &after, Duration::from_millis(100), own, &[13]);
        let names: Vec<&str> = busy.iter().map(|b| b.comm.as_str()).collect();
        assert_eq!(names, ["spinner", "half"]);
        assert!((busy[0].cpu_percent - 100.0).abs() < 1e-9);
        assert!((busy[1].cpu_percent - 50.0).abs() < 1e-9);
        assert!(busy_between(&before, &after, Duration::ZERO, own, &[]).is_empty());
    }

    #[test]
    fn at_most_five() {
        let before = map(&(1..=8).map(|p| stat(p, 1, "w", 0)).collect::<Vec<_>>());
        let after = map(&(1..=8)
            .map(|p| stat(p, 1, "w", u64::from(p) * 2))
            .collect::<Vec<_>>());
        let busy = busy_between(&before, &after, Duration::from_secs(1), 999, &[]);
        let pids: Vec<u32> = busy.iter().map(|b| b.pid).collect();
        assert_eq!(pids, [8, 7, 6, 5, 4]);
    }
}
