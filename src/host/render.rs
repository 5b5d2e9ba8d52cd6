//! Turns `HostFacts` into warnings (what makes numbers unstable, and what to do about it)
//! and into the aligned text that `syscost env` prints. Pure functions; no I/O.

use super::parse::format_cpu_list;
use super::HostFacts;
use std::fmt::Display;

/// Clocksources read cheaply from user space (x86 TSC, Arm generic timer).
const FAST_CLOCKS: [&str; 2] = ["tsc", "arch_sys_counter"];

/// Warnings when the system is not quiet or not set up for stable numbers, each one line
/// that says what to do. syscost itself never changes any of these settings.
pub fn warnings(f: &HostFacts) -> Vec<String> {
    let mut w = Vec::new();
    if let Some([one, _, _]) = f.loadavg.filter(|l| l[0] > 0.5) {
        w.push(format!(
            "1-minute load average is {one:.2} (above 0.5): stop other work or wait for \
             the machine to go quiet before measuring"
        ));
    }
    for b in &f.busy_processes {
        w.push(format!(
            "process {} (pid {}) is using {:.0}% of a CPU: stop it, or expect noisy \
             numbers",
            b.comm, b.pid, b.cpu_percent
        ));
    }
    if let Some(g) = f.governor.as_deref().filter(|g| *g != "performance") {
        w.push(format!(
            "CPU frequency governor is '{g}', not 'performance': for stable numbers run \
             `cpupower frequency-set -g performance` as root (syscost never changes it)"
        ));
    }
    if !f.invariant_tsc && !f.tsc_flags.is_empty() {
        w.push(
            "no invariant TSC (constant_tsc and nonstop_tsc): cycle counts drift with \
             frequency and idle states; trust the nanosecond figures, not cycles"
                .into(),
        );
    }
    w.extend(setup_warnings(f));
    w
}

/// Warnings about the platform: hypervisor, SMT, huge pages, clocksource.
fn setup_warnings(f: &HostFacts) -> Vec<String> {
    let mut w = Vec::new();
    if let Some(v) = f.virtualization.as_deref().filter(|v| *v != "none") {
        w.push(format!(
            "running under a hypervisor ({v}): numbers include hypervisor effects (VM \
             exits, steal time); compare only with runs on the same kind of VM"
        ));
    }
    if f.smt.as_deref() == Some("on") {
        w.push(
            "SMT is on: a busy sibling hyperthread adds noise; keep the measured CPU's \
             sibling idle or turn SMT off (echo off > \
             /sys/devices/system/cpu/smt/control; syscost never changes it)"
                .into(),
        );
    }
    if f.thp_enabled.as_deref() == Some("always") {
        w.push(
            "transparent huge pages are 'always': page-fault figures vary with huge-page \
             availability; for stable numbers use madvise (echo madvise > \
             /sys/kernel/mm/transparent_hugepage/enabled; syscost never changes it)"
                .into(),
        );
    }
    if let Some(c) = f
        .clocksource
        .as_deref()
        .filter(|c| !FAST_CLOCKS.contains(c))
    {
        let fix = if f.available_clocksources.iter().any(|a| a == "tsc") {
            "; tsc is available (echo tsc > /sys/devices/system/clocksource/clocksource0/\
             current_clocksource; syscost never changes it)"
        } else {
            ""
        };
        w.push(format!(
            "clocksource is '{c}', not tsc: clock reads may be slower and noisier{fix}"
        ));
    }
    w
}

/// One titled group of `key  value` lines.
type Section = (&'static str, Vec<(String, String)>);

/// Human text for `syscost env`: aligned "key  value" lines in sections (CPU, kernel,
/// clocks, memory, mitigations, load, privileges, tracing), then the warnings, each
/// prefixed "warning: ". Unknown facts read "unknown".
pub fn render(f: &HostFacts) -> String {
    let sections: [Section; 8] = [
        ("CPU", cpu_lines(f)),
        ("kernel", kernel_lines(f)),
        ("clocks", clock_lines(f)),
        ("memory", memory_lines(f)),
        ("mitigations", mitigation_lines(f)),
        ("load", load_lines(f)),
        ("privileges", privilege_lines(f)),
        ("tracing", tracing_lines(f)),
    ];
    let width = sections
        .iter()
        .flat_map(|(_, lines)| lines.iter().map(|(k, _)| k.len()))
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for (title, lines) in &sections {
        out.push_str(title);
        out.push('\n');
        for (key, value) in lines {
            out.push_str(format!("  {key:width$}  {value}").trim_end());
            out.push('\n');
        }
    }
    let warnings = warnings(f);
    if !warnings.is_empty() {
        out.push('\n');
    }
    for w in warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}

/// A fact as text, "unknown" when missing.
fn show<T: Display>(value: &Option<T>) -> String {
    value
        .as_ref()
        .map_or_else(|| "unknown".into(), T::to_string)
}

/// A list as space-separated text, `empty` when there is nothing.
fn list<T: Display>(items: &[T], empty: &str) -> String {
    let words: Vec<String> = items.iter().map(T::to_string).collect();
    if words.is_empty() {
        empty.into()
    } else {
        words.join(" ")
    }
}

/// Builds `(key, value)` pairs from string literals and values.
fn lines<const N: usize>(pairs: [(&str, String); N]) -> Vec<(String, String)> {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// "yes" or "no".
fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.into()
}

/// Text, or "unknown" when it is empty.
fn or_unknown(text: String) -> String {
    if text.is_empty() {
        "unknown".into()
    } else {
        text
    }
}

/// The CPU section.
fn cpu_lines(f: &HostFacts) -> Vec<(String, String)> {
    let online = if f.cpus_online == 0 {
        String::new()
    } else {
        f.cpus_online.to_string()
    };
    let governor = f.governor.as_deref().unwrap_or("none (no cpufreq)");
    lines([
        ("model", show(&f.cpu_model)),
        ("cpus online", or_unknown(online)),
        ("cpus allowed", or_unknown(format_cpu_list(&f.cpus_allowed))),
        ("threads per core", show(&f.threads_per_core)),
        ("smt", show(&f.smt)),
        ("governor", governor.to_string()),
        ("virtualization", show(&f.virtualization)),
    ])
}

/// The kernel section.
fn kernel_lines(f: &HostFacts) -> Vec<(String, String)> {
    let none_if_empty = |v: &Option<String>| match v.as_deref() {
        Some("") => "none".to_string(),
        _ => show(v),
    };
    lines([
        ("hostname", show(&f.hostname)),
        ("release", show(&f.kernel)),
        ("version", show(&f.kernel_version)),
        ("preempt model", show(&f.preempt_model)),
        ("nohz_full", none_if_empty(&f.nohz_full)),
        ("isolated cpus", none_if_empty(&f.isolated_cpus)),
        ("io_uring_disabled", show(&f.io_uring_disabled)),
    ])
}

/// The clocks section.
fn clock_lines(f: &HostFacts) -> Vec<(String, String)> {
    lines([
        ("clocksource", show(&f.clocksource)),
        ("available", list(&f.available_clocksources, "unknown")),
        ("invariant tsc", yes_no(f.invariant_tsc)),
        ("tsc flags", list(&f.tsc_flags, "none")),
    ])
}

/// The memory section.
fn memory_lines(f: &HostFacts) -> Vec<(String, String)> {
    let total = f
        .memory_total_kib
        .map(|k| format!("{k} KiB ({:.1} GiB)", k as f64 / (1024.0 * 1024.0)));
    lines([
        ("total", show(&total)),
        ("page size", show(&f.page_size.map(|p| format!("{p} B")))),
        ("thp enabled", show(&f.thp_enabled)),
        ("thp defrag", show(&f.thp_defrag)),
    ])
}

/// The mitigations section: one line per vulnerability file.
fn mitigation_lines(f: &HostFacts) -> Vec<(String, String)> {
    if f.vulnerabilities.is_empty() {
        return lines([("vulnerabilities", "unknown".into())]);
    }
    f.vulnerabilities
        .iter()
        .map(|v| (v.name.clone(), v.status.clone()))
        .collect()
}

/// The load section, one line per busy process.
fn load_lines(f: &HostFacts) -> Vec<(String, String)> {
    let avg = f.loadavg.map(|[a, b, c]| format!("{a:.2} {b:.2} {c:.2}"));
    let mut out = lines([
        ("load average", show(&avg)),
        ("running tasks", show(&f.running_tasks)),
    ]);
    if f.busy_processes.is_empty() {
        out.push(("busy processes".into(), "none".into()));
    }
    for b in &f.busy_processes {
        let value = format!("{} (pid {}) {:.0}%", b.comm, b.pid, b.cpu_percent);
        out.push(("busy process".into(), value));
    }
    out
}

/// The privileges section.
fn privilege_lines(f: &HostFacts) -> Vec<(String, String)> {
    let limit = |l: &Option<(String, String)>| {
        show(
            &l.as_ref()
                .map(|(soft, hard)| format!("{soft} soft, {hard} hard")),
        )
    };
    lines([
        ("euid", show(&f.euid)),
        ("root", yes_no(f.is_root)),
        ("cap_eff", show(&f.cap_eff)),
        ("open files", limit(&f.rlimit_nofile)),
        ("processes", limit(&f.rlimit_nproc)),
    ])
}

/// The tracing section.
fn tracing_lines(f: &HostFacts) -> Vec<(String, String)> {
    lines([
        (
            "tracefs",
            f.tracefs
                .clone()
                .unwrap_or_else(|| "none mounted and readable".into()),
        ),
        ("perf_event_paranoid", show(&f.perf_event_paranoid)),
    ])
}

#[cfg(test)]
mod tests {
    use super::super::{BusyProcess, Vulnerability};
    use super::*;

    /// Facts of a quiet, well set-up bare-metal machine.
    fn quiet() -> HostFacts {
        HostFacts {
            hostname: Some("bench1".into()),
            cpu_model: Some("AMD EPYC 7763 64-Core Processor".into()),
            cpus_online: 4,
            cpus_allowed: vec![0, 1, 2, 3],
            kernel: Some("6.1.0-18-amd64".into()),
            kernel_version: Some("#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1".into()),
            virtualization: Some("none".into()),
            clocksource: Some("tsc".into()),
            available_clocksources: vec!["tsc".into(), "hpet".into(), "acpi_pm".into()],
            invariant_tsc: true,
            tsc_flags: vec!["tsc".into(), "constant_tsc".into(), "nonstop_tsc".into()],
            governor: Some("performance".into()),
            smt: Some("off".into()),
            threads_per_core: Some(1),
            vulnerabilities: vec![Vulnerability {
                name: "spectre_v2".into(),
                status: "Mitigation: Retpolines".into(),
            }],
            thp_enabled: Some("madvise".into()),
            thp_defrag: Some("madvise".into()),
            loadavg: Some([0.01, 0.05, 0.0]),
            running_tasks: Some(1),
            busy_processes: vec![],
            memory_total_kib: Some(16_384 * 1024),
            page_size: Some(4096),
            euid: Some(1000),
            cap_eff: Some("0000000000000000".into()),
            is_root: false,
            perf_event_paranoid: Some(2),
            tracefs: None,
            nohz_full: Some(String::new()),
            isolated_cpus: Some(String::new()),
            preempt_model: Some("full".into()),
            io_uring_disabled: Some(0),
            rlimit_nofile: Some(("1024".into(), "524288".into())),
            rlimit_nproc: Some(("63000".into(), "63000".into())),
        }
    }

    #[test]
    fn quiet_machine_has_no_warnings() {
        assert_eq!(warnings(&quiet()), Vec::<String>::new());
    }

    #[test]
    fn noisy_machine_warns_about_each_problem() {
        let mut f = quiet();
        f.loadavg = Some([1.5, 1.0, 0.5]);
        f.busy_processes = vec![BusyProcess {
            pid: 42,
            comm: "stress".into(),
            cpu_percent: 99.6,
        }];
        f.governor = Some("powersave".into());
        f.invariant_tsc = false;
        f.virtualization = Some("kvm".into());
        f.smt = Some("on".into());
        f.thp_enabled = Some("always".into());
        f.clocksource = Some("hpet".into());
        let w = warnings(&f);
        assert_eq!(w.len(), 8, "{w:#?}");
        assert!(w[0].contains("1.50"));
        assert!(w[1].contains("stress (pid 42)") && w[1].contains("100%"));
        assert!(w[2].contains("cpupower frequency-set -g performance"));
        assert!(w[2].contains("never changes"));
        assert!(w.iter().all(|l| !l.contains('\n')));
        assert!(w[7].contains("echo tsc"));
    }

    #[test]
    fn render_is_aligned_in_sections() {
        let mut f = quiet();
        f.smt = Some("on".into());
        let text = render(&f);
        for title in ["CPU", "kernel", "clocks", "memory", "mitigations", "load"] {
            assert!(text.lines().any(|l| l == title), "missing {title}");
        }
        assert!(text.contains("  spectre_v2  ") || text.contains("spectre_v2   "));
        assert!(text.contains("Mitigation: Retpolines"));
        assert!(text.contains("16.0 GiB"));
        assert!(text.contains("\nwarning: SMT is on"));
        let value_column: Vec<usize> = text
            .lines()
            .filter(|l| l.starts_with("  "))
            .map(|l| {
                l.len()
                    - l[2..]
                        .split_once("  ")
                        .map_or(0, |(_, v)| v.trim_start().len())
            })
            .collect();
        assert!(value_column.windows(2).all(|w| w[0] == w[1]), "{text}");
    }

    #[test]
    fn unknown_facts_render_as_unknown() {
        let mut f = quiet();
        f.kernel = None;
        f.vulnerabilities.clear();
        f.cpus_online = 0;
        let text = render(&f);
        assert!(text.contains("release"));
        assert!(text
            .lines()
            .any(|l| l.starts_with("  release") && l.ends_with("unknown")));
        assert!(text.contains("vulnerabilities"));
    }
}
