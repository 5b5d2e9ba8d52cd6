//! The causes by which the kernel perturbs a timed span, as bits of a sample's
//! `kernel` field ([`super::Sample::kernel`]): the trace's culling
//! ([`crate::trace::cull`]) sets them, and the analysis counts them by name.

/// Causes, as bits.
pub mod bits {
    /// A clock interrupt.
    pub const TIMER: u16 = 1;
    /// A device interrupt.
    pub const IRQ: u16 = 1 << 1;
    /// A softirq.
    pub const SOFTIRQ: u16 = 1 << 2;
    /// An inter-processor interrupt.
    pub const IPI: u16 = 1 << 3;
    /// A context switch.
    pub const SWITCH: u16 = 1 << 4;
    /// A page fault of the thread.
    pub const FAULT: u16 = 1 << 5;
    /// A migration of the thread.
    pub const MIGRATE: u16 = 1 << 6;
    /// Kernel events lost: unknown.
    pub const LOST: u16 = 1 << 7;
}

const NAMES: [&str; 8] = [
    "timer", "irq", "softirq", "ipi", "switch", "fault", "migrate", "lost",
];

/// The names of the causes in a bit set, in a fixed order.
pub fn cause_names(set: u16) -> Vec<&'static str> {
    (0..NAMES.len())
        .filter(|b| set & (1 << b) != 0)
        .map(|b| NAMES[b])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_bits_map_both_ways() {
        assert_eq!(cause_names(bits::TIMER | bits::LOST), vec!["timer", "lost"]);
        for (i, name) in NAMES.into_iter().enumerate() {
            assert_eq!(cause_names(1 << i), vec![name]);
        }
    }
}
