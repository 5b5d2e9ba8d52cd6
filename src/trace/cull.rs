//! (being written)

/// The names of the causes in a bit set (placeholder until the join lands).
pub fn cause_names(bits: u16) -> Vec<&'static str> {
    const NAMES: [&str; 8] = [
        "timer", "irq", "softirq", "ipi", "switch", "fault", "migrate", "lost",
    ];
    (0..8)
        .filter(|b| bits & (1 << b) != 0)
        .map(|b| NAMES[b])
        .collect()
}
