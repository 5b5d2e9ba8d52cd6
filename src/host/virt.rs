//! Classifies the hypervisor (if any) and the kernel's preemption model from evidence
//! already read by `collect`. Pure functions; no I/O.

/// What the system shows about a hypervisor, gathered from /proc and /sys.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct VirtEvidence {
    /// `Some(true)` when cpuinfo has the x86 `hypervisor` flag, `Some(false)` when an x86
    /// flags line lacks it, `None` when there are no x86 flags to judge by.
    pub hypervisor_flag: Option<bool>,
    /// DMI strings: sys_vendor, product_name, bios_vendor (whichever were readable).
    pub dmi: Vec<String>,
    /// Available clocksources; paravirtual ones name the hypervisor family.
    pub clocksources: Vec<String>,
    /// Contents of /sys/hypervisor/type (Xen only).
    pub xen_type: Option<String>,
}

/// DMI substrings (lower case, searched in all DMI strings joined) and the name each
/// implies. Order matters: cloud vendors before the generic KVM/QEMU strings they may
/// also contain.
const DMI_NAMES: &[(&str, &str)] = &[
    ("amazon ec2", "amazon"),
    ("google compute engine", "google"),
    ("firecracker", "firecracker"),
    ("openstack", "kvm"),
    ("kvm", "kvm"),
    ("qemu", "qemu"),
    ("vmware", "vmware"),
    ("virtualbox", "virtualbox"),
    ("innotek", "virtualbox"),
    ("xen", "xen"),
    ("parallels", "parallels"),
    ("bochs", "bochs"),
    ("bhyve", "bhyve"),
    ("cloud hypervisor", "cloud-hypervisor"),
];

/// Paravirtual clocksources and the hypervisor family they belong to.
const CLOCK_NAMES: &[(&str, &str)] = &[
    ("kvm-clock", "kvm"),
    ("hyperv_clocksource_tsc_page", "microsoft"),
    ("hyperv_clocksource_msr", "microsoft"),
    ("xen", "xen"),
];

/// Names the hypervisor: e.g. "kvm", "firecracker", "vmware", "unknown hypervisor", or
/// "none" on bare metal. `None` when there is no way to tell (non-x86 without evidence).
pub(crate) fn classify(e: &VirtEvidence) -> Option<String> {
    if e.xen_type.as_deref().map(str::trim) == Some("xen") {
        return Some("xen".into());
    }
    // On x86 the hypervisor flag is authoritative; DMI strings such as "Amazon EC2" also
    // appear on bare-metal instances, so they only name a hypervisor already detected.
    if e.hypervisor_flag == Some(false) {
        return Some("none".into());
    }
    let dmi = e.dmi.join(" ").to_lowercase();
    let from_dmi = if dmi.contains("microsoft") && dmi.contains("virtual machine") {
        Some("microsoft")
    } else {
        DMI_NAMES
            .iter()
            .find(|(needle, _)| dmi.contains(needle))
            .map(|(_, n)| *n)
    };
    let from_clock = || {
        CLOCK_NAMES
            .iter()
            .find(|(cs, _)| e.clocksources.iter().any(|c| c == cs))
            .map(|(_, n)| *n)
    };
    match from_dmi.or_else(from_clock) {
        Some(name) => Some(name.into()),
        None if e.hypervisor_flag == Some(true) => Some("unknown hypervisor".into()),
        None => None,
    }
}

/// The preemption model. From /sys/kernel/debug/sched/preempt (`"none voluntary (full)"`)
/// when readable; otherwise from the `uname -v` text (PREEMPT_RT, PREEMPT_DYNAMIC,
/// PREEMPT_LAZY, PREEMPT), with a dynamic kernel's `preempt=` boot option if given.
/// A version text naming none of them means "none or voluntary".
pub(crate) fn preempt_model(
    debugfs: Option<&str>,
    version: Option<&str>,
    cmdline: Option<&str>,
) -> Option<String> {
    if let Some(mode) = debugfs.and_then(super::parse::parse_parenthesized) {
        return Some(mode);
    }
    let words: Vec<&str> = version?.split_whitespace().collect();
    let known = ["PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT_LAZY", "PREEMPT"];
    let Some(model) = known.iter().find(|k| words.contains(k)) else {
        return Some("none or voluntary".into());
    };
    let boot_choice = cmdline.and_then(|c| {
        c.split_whitespace()
            .find_map(|w| w.strip_prefix("preempt="))
    });
    Some(match (*model, boot_choice) {
        ("PREEMPT_DYNAMIC", Some(mode)) => format!("PREEMPT_DYNAMIC (preempt={mode})"),
        (model, _) => model.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence(flag: Option<bool>) -> VirtEvidence {
        VirtEvidence {
            hypervisor_flag: flag,
            ..Default::default()
        }
    }

    #[test]
    fn bare_metal_and_unknown() {
        let mut e = evidence(Some(false));
        e.dmi = vec!["Amazon EC2".into(), "m5.metal".into()];
        assert_eq!(classify(&e).as_deref(), Some("none"));
        assert_eq!(
            classify(&evidence(Some(true))).as_deref(),
            Some("unknown hypervisor")
        );
        assert_eq!(classify(&evidence(None)), None);
    }

    #[test]
    fn named_hypervisors() {
        let mut e = evidence(Some(true));
        e.dmi = vec!["QEMU".into(), "Standard PC (Q35 + ICH9, 2009)".into()];
        assert_eq!(classify(&e).as_deref(), Some("qemu"));
        e.dmi = vec!["VMware, Inc.".into(), "VMware Virtual Platform".into()];
        assert_eq!(classify(&e).as_deref(), Some("vmware"));
        e.dmi = vec!["Microsoft Corporation".into(), "Virtual Machine".into()];
        assert_eq!(classify(&e).as_deref(), Some("microsoft"));
        e.dmi = vec!["Amazon EC2".into(), "c6i.large".into()];
        assert_eq!(classify(&e).as_deref(), Some("amazon"));
    }

    #[test]
    fn what_any_user_can_read_names_it() {
        // Root alone may read the ACPI tables (Firecracker's "FIRECK"): evidence only
        // root sees would give two names for one machine, and two histories.
        let mut e = evidence(Some(true));
        e.clocksources = vec!["tsc".into(), "kvm-clock".into()];
        assert_eq!(classify(&e).as_deref(), Some("kvm"));
        let mut xen = evidence(None);
        xen.xen_type = Some("xen\n".into());
        assert_eq!(classify(&xen).as_deref(), Some("xen"));
    }

    #[test]
    fn preemption() {
        let dynamic = Some("#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)");
        let rt = Some("#1 SMP PREEMPT_RT Debian 6.1.76-1");
        let plain = Some("#1 SMP Debian 5.10.209-2 (2024-01-31)");
        let voluntary = Some("ro quiet preempt=voluntary");
        let dynamic_voluntary = Some("PREEMPT_DYNAMIC (preempt=voluntary)");
        for (debugfs, version, cmdline, want) in [
            (Some("none voluntary (full)\n"), dynamic, None, Some("full")),
            (None, dynamic, voluntary, dynamic_voluntary),
            (None, dynamic, None, Some("PREEMPT_DYNAMIC")),
            (None, rt, None, Some("PREEMPT_RT")),
            (None, plain, None, Some("none or voluntary")),
            (None, None, None, None),
        ] {
            let model = preempt_model(debugfs, version, cmdline);
            assert_eq!(model.as_deref(), want, "{version:?} {cmdline:?}");
        }
    }
}
