//! Host facts: reads, from /proc and /sys, the facts about this machine that decide what
//! the operating system charges for its services (CPU model and count, kernel and its
//! preemption model, clocksource and TSC, frequency governor, SMT, speculative-execution
//! mitigations, transparent huge pages, current load and busy processes, privileges,
//! tracing), and turns them into warnings and a human-readable summary. It only reads:
//! it must not change any system setting, signal any process, or run benchmarks. A fact
//! that cannot be read is `None`, an empty list or "unknown", never a panic.
//!
//! Submodules: `parse` (pure text parsers), `virt` (hypervisor and preemption
//! classification), `busy` (the busy-process sample) and `render` (warnings and text).

mod busy;
pub mod parse;
mod render;
mod virt;

pub use render::{render, warnings};

use parse::{
    count_processors, parse_bracketed, parse_cpu_list, parse_cpuinfo, parse_euid,
    parse_groups, parse_kernel_page_size, parse_kib_field, parse_limits, parse_line,
    parse_loadavg, parse_number, parse_stat_field, parse_status_field,
};
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::time::Duration;

/// Everything `collect` learns about the host; see the `//!` text for what each covers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostFacts {
    /// /proc/sys/kernel/hostname.
    pub hostname: Option<String>,
    /// `model name` from /proc/cpuinfo.
    pub cpu_model: Option<String>,
    /// CPUs listed in /sys/devices/system/cpu/online (0 when unknown).
    pub cpus_online: usize,
    /// `Cpus_allowed_list` of this process, from /proc/self/status (empty when unknown).
    pub cpus_allowed: Vec<usize>,
    /// Kernel release, /proc/sys/kernel/osrelease.
    pub kernel: Option<String>,
    /// Kernel build text (`uname -v`), /proc/sys/kernel/version.
    pub kernel_version: Option<String>,
    /// Hypervisor name ("kvm", "firecracker", "unknown hypervisor", ...) or "none".
    pub virtualization: Option<String>,
    /// Current clocksource.
    pub clocksource: Option<String>,
    /// Available clocksources.
    pub available_clocksources: Vec<String>,
    /// cpuinfo has both `constant_tsc` and `nonstop_tsc`.
    pub invariant_tsc: bool,
    /// Which of tsc, constant_tsc, nonstop_tsc, rdtscp, tsc_known_freq cpuinfo lists.
    pub tsc_flags: Vec<String>,
    /// cpufreq governor of cpu0; `None` when there is no cpufreq (common in VMs).
    pub governor: Option<String>,
    /// /sys/devices/system/cpu/smt/control ("on", "off", "notsupported", ...).
    pub smt: Option<String>,
    /// Number of CPUs in cpu0's thread_siblings_list.
    pub threads_per_core: Option<usize>,
    /// Every file of /sys/devices/system/cpu/vulnerabilities, sorted by name.
    pub vulnerabilities: Vec<Vulnerability>,
    /// Selected transparent-huge-page mode ("always", "madvise", "never").
    pub thp_enabled: Option<String>,
    /// Selected transparent-huge-page defrag mode.
    pub thp_defrag: Option<String>,
    /// The 1, 5 and 15 minute load averages.
    pub loadavg: Option<[f64; 3]>,
    /// `procs_running` from /proc/stat (includes this process).
    pub running_tasks: Option<u64>,
    /// Up to 5 other processes surely above 5% of a CPU in a ~100 ms sample (one tick
    /// is 10 ms, so at least two ticks), busiest first.
    pub busy_processes: Vec<BusyProcess>,
    /// MemTotal from /proc/meminfo, in KiB.
    pub memory_total_kib: Option<u64>,
    /// Base page size in bytes, from the first `KernelPageSize` of /proc/self/smaps.
    pub page_size: Option<u64>,
    /// Effective uid.
    pub euid: Option<u32>,
    /// Effective capability mask (hex), `CapEff` of /proc/self/status.
    pub cap_eff: Option<String>,
    /// The effective uid is 0.
    pub is_root: bool,
    /// /proc/sys/kernel/perf_event_paranoid.
    pub perf_event_paranoid: Option<i32>,
    /// Path of a tracefs whose `trace` file this process may read.
    pub tracefs: Option<String>,
    /// /sys/devices/system/cpu/nohz_full ("" when readable but empty).
    pub nohz_full: Option<String>,
    /// /sys/devices/system/cpu/isolated ("" when readable but empty).
    pub isolated_cpus: Option<String>,
    /// Preemption model ("full", "voluntary", "PREEMPT_DYNAMIC", "PREEMPT_RT", ...).
    pub preempt_model: Option<String>,
    /// /proc/sys/kernel/io_uring_disabled (absent before Linux 6.6).
    pub io_uring_disabled: Option<i32>,
    /// Soft and hard "Max open files" from /proc/self/limits.
    pub rlimit_nofile: Option<(String, String)>,
    /// Soft and hard "Max processes" from /proc/self/limits.
    pub rlimit_nproc: Option<(String, String)>,
}

/// One file of /sys/devices/system/cpu/vulnerabilities.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Vulnerability {
    /// File name, e.g. "spectre_v2".
    pub name: String,
    /// Its contents, e.g. "Mitigation: Retpolines" ("unknown" if unreadable).
    pub status: String,
}

/// Another process found using CPU while the facts were collected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BusyProcess {
    /// Process id.
    pub pid: u32,
    /// Command name from /proc/PID/stat.
    pub comm: String,
    /// Share of one CPU during the sample, in percent (may exceed 100 for many threads).
    pub cpu_percent: f64,
}

/// How long the busy-process sample spans.
const BUSY_WINDOW: Duration = Duration::from_millis(100);
const CPU_SYS: &str = "/sys/devices/system/cpu";
const CLOCK_SYS: &str = "/sys/devices/system/clocksource/clocksource0";
const THP_SYS: &str = "/sys/kernel/mm/transparent_hugepage";
const TSC_FLAGS: [&str; 5] = [
    "tsc",
    "constant_tsc",
    "nonstop_tsc",
    "rdtscp",
    "tsc_known_freq",
];

/// Reads every fact. Takes about 100 ms (the busy-process sample). `exclude` are pids
/// not to list as busy (the caller's own children, e.g. its background load).
pub fn collect(exclude: &[u32]) -> HostFacts {
    let sample = busy::Sample::start();
    let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
    let status = read("/proc/self/status").unwrap_or_default();
    let limits = read("/proc/self/limits").unwrap_or_default();
    let version = read_line("/proc/sys/kernel/version");
    let (cpu_model, flags) = parse_cpuinfo(&cpuinfo);
    let (invariant_tsc, tsc_flags) = tsc_facts(&flags);
    let clocks = read_with(&format!("{CLOCK_SYS}/available_clocksource"), words);
    let euid = parse_euid(&status);
    let facts = HostFacts {
        hostname: read_line("/proc/sys/kernel/hostname"),
        cpu_model,
        cpus_online: cpus_online(&cpuinfo),
        cpus_allowed: parse_status_field(&status, "Cpus_allowed_list")
            .map_or_else(Vec::new, |l| parse_cpu_list(&l)),
        kernel: read_line("/proc/sys/kernel/osrelease"),
        virtualization: virtualization(&flags, clocks.as_deref().unwrap_or_default()),
        clocksource: read_line(&format!("{CLOCK_SYS}/current_clocksource")),
        available_clocksources: clocks.unwrap_or_default(),
        invariant_tsc,
        tsc_flags,
        governor: read_line(&format!("{CPU_SYS}/cpu0/cpufreq/scaling_governor")),
        smt: read_line(&format!("{CPU_SYS}/smt/control")),
        threads_per_core: threads_per_core(),
        vulnerabilities: vulnerabilities(),
        thp_enabled: read_with(&format!("{THP_SYS}/enabled"), parse_bracketed),
        thp_defrag: read_with(&format!("{THP_SYS}/defrag"), parse_bracketed),
        loadavg: read_with("/proc/loadavg", parse_loadavg),
        running_tasks: read_with("/proc/stat", |t| parse_stat_field(t, "procs_running")),
        busy_processes: Vec::new(),
        memory_total_kib: read_with("/proc/meminfo", |t| parse_kib_field(t, "MemTotal")),
        page_size: page_size(),
        euid,
        cap_eff: parse_status_field(&status, "CapEff"),
        is_root: euid == Some(0),
        perf_event_paranoid: read_with(
            "/proc/sys/kernel/perf_event_paranoid",
            parse_number,
        ),
        tracefs: tracefs(euid, &parse_groups(&status)),
        nohz_full: read_with(&format!("{CPU_SYS}/nohz_full"), trimmed),
        isolated_cpus: read_with(&format!("{CPU_SYS}/isolated"), trimmed),
        preempt_model: preempt_model(version.as_deref()),
        kernel_version: version,
        io_uring_disabled: read_with("/proc/sys/kernel/io_uring_disabled", parse_number),
        rlimit_nofile: parse_limits(&limits, "Max open files"),
        rlimit_nproc: parse_limits(&limits, "Max processes"),
    };
    let busy_processes = sample.finish(BUSY_WINDOW, exclude);
    HostFacts {
        busy_processes,
        ..facts
    }
}

/// A whole file as text; `None` if it cannot be read.
fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// A file run through a parser; `None` if unreadable or not understood.
fn read_with<T>(path: &str, parse: impl FnOnce(&str) -> Option<T>) -> Option<T> {
    parse(&read(path)?)
}

/// A one-line file, trimmed; `None` if unreadable or blank.
fn read_line(path: &str) -> Option<String> {
    read_with(path, parse_line)
}

/// The whole text trimmed, kept even when empty (an empty CPU list means "none").
fn trimmed(text: &str) -> Option<String> {
    Some(text.trim().to_string())
}

/// The whitespace-separated words of a text.
fn words(text: &str) -> Option<Vec<String>> {
    Some(text.split_whitespace().map(str::to_string).collect())
}

/// Whether the TSC is invariant (constant_tsc and nonstop_tsc), and which TSC flags of
/// `TSC_FLAGS` the cpuinfo flags contain.
fn tsc_facts(flags: &[String]) -> (bool, Vec<String>) {
    let has = |flag: &str| flags.iter().any(|f| f == flag);
    let present = TSC_FLAGS
        .iter()
        .filter(|f| has(f))
        .map(|f| f.to_string())
        .collect();
    (has("constant_tsc") && has("nonstop_tsc"), present)
}

/// Hardware threads per core: the size of cpu0's thread_siblings_list.
fn threads_per_core() -> Option<usize> {
    let path = format!("{CPU_SYS}/cpu0/topology/thread_siblings_list");
    read_with(&path, |t| Some(parse_cpu_list(t).len())).filter(|&n| n > 0)
}

/// At most `limit` bytes from the start of a file (for files that are large or binary).
fn read_head(path: &str, limit: u64) -> Option<Vec<u8>> {
    let mut head = Vec::new();
    let file = std::fs::File::open(path).ok()?;
    file.take(limit).read_to_end(&mut head).ok()?;
    Some(head)
}

/// Online CPUs from sysfs, else the number of `processor` entries in cpuinfo, else 0.
fn cpus_online(cpuinfo: &str) -> usize {
    match read(&format!("{CPU_SYS}/online")).map(|t| parse_cpu_list(&t).len()) {
        Some(n) if n > 0 => n,
        _ => count_processors(cpuinfo),
    }
}

/// Gathers hypervisor evidence that any user can read (cpuinfo flag, DMI, clocksources,
/// Xen) and names the hypervisor: the same machine gets one name whoever runs syscost.
fn virtualization(flags: &[String], clocksources: &[String]) -> Option<String> {
    let x86 = cfg!(any(target_arch = "x86", target_arch = "x86_64"));
    let flag = flags.iter().any(|f| f == "hypervisor");
    let dmi = ["sys_vendor", "product_name", "bios_vendor"]
        .iter()
        .filter_map(|f| read_line(&format!("/sys/class/dmi/id/{f}")))
        .collect();
    let evidence = virt::VirtEvidence {
        hypervisor_flag: (flag || (x86 && !flags.is_empty())).then_some(flag),
        dmi,
        clocksources: clocksources.to_vec(),
        xen_type: read_line("/sys/hypervisor/type"),
    };
    virt::classify(&evidence)
}

/// Every vulnerability file, sorted by name; an unreadable one has status "unknown".
fn vulnerabilities() -> Vec<Vulnerability> {
    let Ok(dir) = std::fs::read_dir(format!("{CPU_SYS}/vulnerabilities")) else {
        return Vec::new();
    };
    let mut list: Vec<Vulnerability> = dir
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| Vulnerability {
            name: e.file_name().to_string_lossy().into_owned(),
            status: std::fs::read_to_string(e.path())
                .ok()
                .and_then(|t| parse_line(&t))
                .unwrap_or_else(|| "unknown".into()),
        })
        .collect();
    list.sort_by(|a, b| a.name.cmp(&b.name));
    list
}

/// Page size from the head of /proc/self/smaps (the first mapping is enough).
fn page_size() -> Option<u64> {
    let head = read_head("/proc/self/smaps", 16 * 1024)?;
    parse_kernel_page_size(&String::from_utf8_lossy(&head))
}

/// The first tracefs mount whose `trace` file this process may read. Judged from the
/// file's permission bits, not by opening it: on older kernels opening `trace` pauses
/// tracing, and this module must not disturb anyone's trace session.
fn tracefs(euid: Option<u32>, groups: &[u32]) -> Option<String> {
    ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .iter()
        .find(|dir| {
            std::fs::metadata(format!("{dir}/trace")).is_ok_and(|m| {
                m.is_file() && may_read(m.mode(), m.uid(), m.gid(), euid, groups)
            })
        })
        .map(|dir| dir.to_string())
}

/// Whether permission bits `mode` (owner `uid`, group `gid`) let `euid` with `groups`
/// read a file. Root may read anything.
fn may_read(mode: u32, uid: u32, gid: u32, euid: Option<u32>, groups: &[u32]) -> bool {
    match euid {
        Some(0) => true,
        Some(me) if me == uid => mode & 0o400 != 0,
        _ if groups.contains(&gid) => mode & 0o040 != 0,
        _ => mode & 0o004 != 0,
    }
}

/// Preemption model from debugfs if readable, else from the version text and cmdline.
fn preempt_model(version: Option<&str>) -> Option<String> {
    let debugfs = read("/sys/kernel/debug/sched/preempt");
    let cmdline = read("/proc/cmdline");
    virt::preempt_model(debugfs.as_deref(), version, cmdline.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsc() {
        let flags: Vec<String> = ["fpu", "tsc", "rdtscp", "constant_tsc", "nonstop_tsc"]
            .iter()
            .map(|f| f.to_string())
            .collect();
        let (invariant, present) = tsc_facts(&flags);
        assert!(invariant);
        assert_eq!(present, ["tsc", "constant_tsc", "nonstop_tsc", "rdtscp"]);
        assert_eq!(
            tsc_facts(&flags[..3]),
            (false, vec!["tsc".into(), "rdtscp".into()])
        );
        assert_eq!(tsc_facts(&[]), (false, vec![]));
    }

    #[test]
    fn read_permissions() {
        assert!(may_read(0o600, 5, 5, Some(0), &[]));
        assert!(may_read(0o600, 1000, 5, Some(1000), &[]));
        assert!(!may_read(0o600, 5, 5, Some(1000), &[5]));
        assert!(may_read(0o640, 0, 27, Some(1000), &[27]));
        assert!(!may_read(0o640, 0, 27, Some(1000), &[100]));
        assert!(may_read(0o644, 0, 0, None, &[]));
    }

    #[test]
    fn collect_on_this_machine() {
        let facts = collect(&[]);
        assert!(facts.cpus_online >= 1);
        assert!(facts.kernel.is_some());
        assert!(!facts.cpus_allowed.is_empty());
        assert!(facts.loadavg.is_some());
        assert!(facts
            .busy_processes
            .iter()
            .all(|b| b.pid != std::process::id()));
        assert_eq!(facts.is_root, facts.euid == Some(0));
        let text = render(&facts);
        assert!(text.contains("kernel"));
        let json = serde_json::to_string(&facts).expect("facts serialise");
        let back: HostFacts = serde_json::from_str(&json).expect("facts deserialise");
        // Floats may differ in the last bit after a JSON round trip; compare the rest.
        assert_eq!(back.kernel, facts.kernel);
        assert_eq!(back.vulnerabilities, facts.vulnerabilities);
        assert_eq!(back.rlimit_nofile, facts.rlimit_nofile);
    }
}
