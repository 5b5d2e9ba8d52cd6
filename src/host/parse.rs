//! Pure parsers for the text of /proc and /sys files. Each takes the file's contents and
//! returns `None` (or an empty list) for anything it does not recognise; none does I/O.

use std::str::FromStr;

/// Parses a kernel CPU list such as `"0-3,8,10-11"` into sorted, distinct CPU numbers.
/// Malformed parts are skipped; an empty or blank text gives an empty list.
pub fn parse_cpu_list(text: &str) -> Vec<usize> {
    let mut cpus = Vec::new();
    for part in text
        .trim()
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        match part.split_once('-') {
            Some((lo, hi)) => {
                if let (Ok(lo), Ok(hi)) =
                    (lo.trim().parse::<usize>(), hi.trim().parse::<usize>())
                {
                    // Refuse absurd ranges rather than allocate for them.
                    if lo <= hi && hi - lo < 65_536 {
                        cpus.extend(lo..=hi);
                    }
                }
            }
            None => cpus.extend(part.parse::<usize>().ok()),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

/// Formats CPU numbers in the kernel's compact form: `[0, 1, 2, 5]` -> `"0-2,5"`.
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        while i + 1 < sorted.len() && sorted[i + 1] == sorted[i] + 1 {
            i += 1;
        }
        let end = sorted[i];
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

/// Value of the first `key : value` line of /proc/cpuinfo whose key is `key`.
fn cpuinfo_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key).then(|| v.trim())
    })
}

/// Parses /proc/cpuinfo into the CPU model name and the first CPU's feature flags.
/// The model comes from `model name` (x86), else `cpu model` or `Processor`; the flags
/// from `flags` (x86), else `Features` (Arm). Missing parts are `None` / empty.
pub fn parse_cpuinfo(text: &str) -> (Option<String>, Vec<String>) {
    let model = ["model name", "cpu model", "Processor"]
        .iter()
        .find_map(|key| cpuinfo_value(text, key))
        .filter(|m| !m.is_empty())
        .map(str::to_string);
    let flags = cpuinfo_value(text, "flags")
        .or_else(|| cpuinfo_value(text, "Features"))
        .map(|f| f.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default();
    (model, flags)
}

/// Number of `processor` entries in /proc/cpuinfo (a fallback count of online CPUs).
pub fn count_processors(text: &str) -> usize {
    text.lines()
        .filter(|l| {
            l.split_once(':')
                .is_some_and(|(k, _)| k.trim() == "processor")
        })
        .count()
}

/// The text between the first `open` and the next `close`, trimmed; `None` if absent.
fn marked(text: &str, open: char, close: char) -> Option<String> {
    let start = text.find(open)? + open.len_utf8();
    let len = text[start..].find(close)?;
    let choice = text[start..start + len].trim();
    (!choice.is_empty()).then(|| choice.to_string())
}

/// The selected choice of a sysfs menu file: `"always [madvise] never"` -> `"madvise"`.
pub fn parse_bracketed(text: &str) -> Option<String> {
    marked(text, '[', ']')
}

/// The selected choice of a debugfs menu marked with parentheses, as in
/// /sys/kernel/debug/sched/preempt: `"none voluntary (full)"` -> `"full"`.
pub fn parse_parenthesized(text: &str) -> Option<String> {
    marked(text, '(', ')')
}

/// The three load averages from /proc/loadavg (`"0.05 0.07 0.03 2/84 2401"`).
pub fn parse_loadavg(text: &str) -> Option<[f64; 3]> {
    let mut it = text.split_whitespace().map(|w| w.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

/// A `key value` line of /proc/stat, e.g. `procs_running 2` -> `Some(2)`.
pub fn parse_stat_field(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        (words.next()? == key).then(|| words.next()?.parse().ok())?
    })
}

/// The value of a `Key:\tvalue` line of /proc/self/status (or /proc/meminfo), trimmed.
pub fn parse_status_field(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k == key).then(|| v.trim().to_string())
    })
}

/// The effective uid: the second number of the `Uid:` line of /proc/self/status.
pub fn parse_euid(status: &str) -> Option<u32> {
    parse_status_field(status, "Uid")?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// The effective gid and supplementary groups from /proc/self/status.
pub fn parse_groups(status: &str) -> Vec<u32> {
    let egid = parse_status_field(status, "Gid")
        .and_then(|g| g.split_whitespace().nth(1)?.parse().ok());
    let groups = parse_status_field(status, "Groups").unwrap_or_default();
    egid.into_iter()
        .chain(groups.split_whitespace().filter_map(|g| g.parse().ok()))
        .collect()
}

/// A size line in kB (as in /proc/meminfo `MemTotal:  24684092 kB`), in KiB.
pub fn parse_kib_field(text: &str, key: &str) -> Option<u64> {
    let value = parse_status_field(text, key)?;
    let mut words = value.split_whitespace();
    let number: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") | None => Some(number),
        Some(_) => None,
    }
}

/// The page size in bytes from the first `KernelPageSize:` line of /proc/self/smaps.
pub fn parse_kernel_page_size(smaps: &str) -> Option<u64> {
    parse_kib_field(smaps, "KernelPageSize").map(|kib| kib * 1024)
}

/// Soft and hard limit of one row of /proc/self/limits, e.g. `"Max open files"` ->
/// `("1024", "524288")`; `"unlimited"` is kept as text.
pub fn parse_limits(text: &str, name: &str) -> Option<(String, String)> {
    let is_value = |w: &str| w == "unlimited" || w.parse::<u64>().is_ok();
    text.lines().find_map(|line| {
        let words: Vec<&str> = line.split_whitespace().collect();
        let at = words.iter().position(|w| is_value(w))?;
        if words[..at].join(" ") != name {
            return None;
        }
        let hard = words.get(at + 1).filter(|w| is_value(w))?;
        Some((words[at].to_string(), hard.to_string()))
    })
}

/// A whole file holding one number, such as /proc/sys/kernel/perf_event_paranoid.
pub fn parse_number<T: FromStr>(text: &str) -> Option<T> {
    text.trim().parse().ok()
}

/// A whole file holding one line of text, trimmed; `None` when blank.
pub fn parse_line(text: &str) -> Option<String> {
    let line = text.trim();
    (!line.is_empty()).then(|| line.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPUINFO: &str = "processor\t: 0
vendor_id\t: GenuineIntel
cpu family\t: 6
model\t\t: 207
model name\t: Intel(R) Xeon(R) Processor
stepping\t: 2
cpu MHz\t\t: 2300.000
flags\t\t: fpu vme tsc msr rdtscp lm constant_tsc nonstop_tsc tsc_known_freq hypervisor
bugs\t\t: spectre_v1 spectre_v2

processor\t: 1
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Processor
flags\t\t: fpu vme tsc msr rdtscp lm constant_tsc nonstop_tsc tsc_known_freq hypervisor
";

    const ARM_CPUINFO: &str = "processor\t: 0
BogoMIPS\t: 50.00
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics cpuid
CPU implementer\t: 0x41
CPU part\t: 0xd0c
";

    const STATUS: &str = "Name:\tsyscost
Umask:\t0022
State:\tR (running)
Pid:\t2401
Uid:\t1000\t0\t1000\t1000
Gid:\t100\t27\t100\t100
Groups:\t27 100 998 
CapEff:\t000001fffeffffff
Cpus_allowed:\t3
Cpus_allowed_list:\t0-1
";

    const LIMITS: &str =
        "Limit                     Soft Limit           Hard Limit           Units     
Max cpu time              unlimited            unlimited            seconds   
Max processes             96365                96365                processes 
Max open files            1024                 524288               files     
";

    const STAT: &str = "cpu  10132153 290696 3084719 46828483 16683 0 25195 0 0 0
cpu0 1393280 32966 572056 13343292 6130 0 17875 0 0 0
intr 1462898 28 0 0
ctxt 115315
btime 1769000000
processes 2401
procs_running 3
procs_blocked 0
";

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list("0-1"), vec![0, 1]);
        assert_eq!(parse_cpu_list("5"), vec![5]);
        assert_eq!(parse_cpu_list("\n"), Vec::<usize>::new());
        assert_eq!(parse_cpu_list("3,1,x,2-1,1"), vec![1, 3]);
        assert_eq!(format_cpu_list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert_eq!(format_cpu_list(&[]), "");
    }

    #[test]
    fn cpuinfo_model_and_flags() {
        let (model, flags) = parse_cpuinfo(CPUINFO);
        assert_eq!(model.as_deref(), Some("Intel(R) Xeon(R) Processor"));
        assert!(flags.contains(&"nonstop_tsc".to_string()));
        assert_eq!(flags.len(), 10);
        assert_eq!(count_processors(CPUINFO), 2);
        let (model, flags) = parse_cpuinfo(ARM_CPUINFO);
        assert_eq!(model, None);
        assert_eq!(flags.first().map(String::as_str), Some("fp"));
        assert_eq!(parse_cpuinfo(""), (None, vec![]));
    }

    #[test]
    fn menus() {
        let defrag = "always defer defer+madvise [madvise] never";
        for (text, want) in [
            ("always [madvise] never\n", Some("madvise")),
            (defrag, Some("madvise")),
            ("always madvise never", None),
        ] {
            assert_eq!(parse_bracketed(text).as_deref(), want);
        }
        let full = parse_parenthesized("none voluntary (full)\n");
        assert_eq!(full.as_deref(), Some("full"));
    }

    #[test]
    fn loadavg_and_stat() {
        assert_eq!(
            parse_loadavg("0.05 0.07 0.03 2/84 2401\n"),
            Some([0.05, 0.07, 0.03])
        );
        assert_eq!(parse_loadavg("0.05 x"), None);
        assert_eq!(parse_stat_field(STAT, "procs_running"), Some(3));
        assert_eq!(parse_stat_field(STAT, "procs_blocked"), Some(0));
        assert_eq!(parse_stat_field(STAT, "procs"), None);
    }

    #[test]
    fn status_fields() {
        for (key, want) in [
            ("CapEff", Some("000001fffeffffff")),
            ("Cpus_allowed_list", Some("0-1")),
            ("Cpus", None),
        ] {
            assert_eq!(parse_status_field(STATUS, key).as_deref(), want);
        }
        assert_eq!(parse_euid(STATUS), Some(0));
        assert_eq!(parse_groups(STATUS), vec![27, 27, 100, 998]);
        assert_eq!(parse_euid("Name:\tx\n"), None);
    }

    #[test]
    fn sizes() {
        let meminfo = "MemTotal:       24684092 kB\nMemFree:        23000000 kB\n";
        assert_eq!(parse_kib_field(meminfo, "MemTotal"), Some(24_684_092));
        assert_eq!(parse_kib_field(meminfo, "MemAvailable"), None);
        let smaps = "55d0c8a00000-55d0c8a02000 r--p 00000000 fe:01 131 /usr/bin/cat
Size:                  8 kB
KernelPageSize:        4 kB
MMUPageSize:           4 kB
";
        assert_eq!(parse_kernel_page_size(smaps), Some(4096));
        assert_eq!(parse_kernel_page_size("Size: 8 kB\n"), None);
    }

    #[test]
    fn limits() {
        let files = parse_limits(LIMITS, "Max open files");
        assert_eq!(files, Some(("1024".into(), "524288".into())));
        let procs = parse_limits(LIMITS, "Max processes");
        assert_eq!(procs, Some(("96365".into(), "96365".into())));
        let cpu = parse_limits(LIMITS, "Max cpu time");
        assert_eq!(cpu, Some(("unlimited".into(), "unlimited".into())));
        assert_eq!(parse_limits(LIMITS, "Max open"), None);
        assert_eq!(parse_limits("", "Max open files"), None);
    }

    #[test]
    fn single_values() {
        assert_eq!(parse_number::<i32>("2\n"), Some(2));
        assert_eq!(parse_number::<i32>("-1\n"), Some(-1));
        assert_eq!(parse_number::<i32>(""), None);
        let release = parse_line("6.1.0-18-amd64\n");
        assert_eq!(release.as_deref(), Some("6.1.0-18-amd64"));
        assert_eq!(parse_line(" \n"), None);
    }
}
