//! The fixed-size records that event chunks hold: a program's [`UserEvent`], the
//! kernel's [`KernelEvent`] and its [`KernelKind`], the [`Lost`] record of events a
//! ring dropped, and [`Event`], either source as the merge yields it.

use super::{u32_at, u64_at};
use serde::{Deserialize, Serialize};
use std::fmt;

/// One event placed by a program: 24 bytes on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserEvent {
    /// `CLOCK_MONOTONIC_RAW`, ns.
    pub ts: u64,
    /// The program's 64-bit argument.
    pub arg: u64,
    /// The program's event id.
    pub id: u32,
    /// The CPU the thread ran on when it recorded the event.
    pub cpu: u32,
}

impl UserEvent {
    /// Bytes per record.
    pub const LEN: usize = 24;

    /// Appends the record to `out`.
    pub fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.ts.to_le_bytes());
        out.extend_from_slice(&self.arg.to_le_bytes());
        out.extend_from_slice(&self.id.to_le_bytes());
        out.extend_from_slice(&self.cpu.to_le_bytes());
    }

    /// Reads a record from exactly [`UserEvent::LEN`] bytes.
    pub fn get(b: &[u8]) -> UserEvent {
        UserEvent {
            ts: u64_at(b, 0),
            arg: u64_at(b, 8),
            id: u32_at(b, 16),
            cpu: u32_at(b, 20),
        }
    }
}

/// What the kernel did, as recorded from its tracepoints.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum KernelKind {
    /// `sched:sched_switch`: `tid` left the CPU, `a` = the next task's tid, `b` = the
    /// previous task's state (0 = it was preempted while runnable).
    Switch,
    /// `sched:sched_migrate_task`: `tid` moved, `a` = from CPU, `b` = to CPU.
    Migrate,
    /// `irq_vectors:local_timer_entry`: the clock interrupt began (`tid` = the
    /// interrupted task).
    TimerEntry,
    /// `irq_vectors:local_timer_exit`.
    TimerExit,
    /// `irq:irq_handler_entry`: a device interrupt began, `a` = irq number.
    IrqEntry,
    /// `irq:irq_handler_exit`, `a` = irq number.
    IrqExit,
    /// `irq:softirq_entry`, `a` = the softirq vector.
    SoftirqEntry,
    /// `irq:softirq_exit`, `a` = the softirq vector.
    SoftirqExit,
    /// An inter-processor interrupt began (`irq_vectors:call_function*_entry`,
    /// `reschedule_entry`), `a` = vector.
    IpiEntry,
    /// An inter-processor interrupt ended, `a` = vector.
    IpiExit,
    /// `exceptions:page_fault_user`: `tid` faulted, `a` = address, `b` = error code.
    Fault,
    /// A code this version does not know.
    Other(u16),
}

/// Every kind but [`KernelKind::Other`], with its code on disk and its short name.
const KINDS: [(KernelKind, u16, &str); 11] = [
    (KernelKind::Switch, 1, "switch"),
    (KernelKind::Migrate, 2, "migrate"),
    (KernelKind::TimerEntry, 3, "timer"),
    (KernelKind::TimerExit, 4, "timer_exit"),
    (KernelKind::IrqEntry, 5, "irq"),
    (KernelKind::IrqExit, 6, "irq_exit"),
    (KernelKind::SoftirqEntry, 7, "softirq"),
    (KernelKind::SoftirqExit, 8, "softirq_exit"),
    (KernelKind::IpiEntry, 9, "ipi"),
    (KernelKind::IpiExit, 10, "ipi_exit"),
    (KernelKind::Fault, 11, "fault"),
];

impl KernelKind {
    /// Its entry in [`KINDS`] (None for [`KernelKind::Other`]).
    fn known(self) -> Option<&'static (KernelKind, u16, &'static str)> {
        KINDS.iter().find(|k| k.0 == self)
    }

    /// The code written on disk.
    pub fn code(self) -> u16 {
        match self {
            KernelKind::Other(c) => c,
            k => k.known().map_or(0, |k| k.1),
        }
    }

    /// The kind for a code.
    pub fn from_code(code: u16) -> KernelKind {
        KINDS
            .iter()
            .find(|k| k.1 == code)
            .map_or(KernelKind::Other(code), |k| k.0)
    }

    /// A short name, as `trace show` prints it and `--kernel` accepts it.
    pub fn name(self) -> String {
        match self.known() {
            Some(k) => k.2.into(),
            None => format!("kernel#{}", self.code()),
        }
    }
}

impl fmt::Display for KernelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// One kernel event: 32 bytes on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelEvent {
    /// `CLOCK_MONOTONIC_RAW`, ns.
    pub ts: u64,
    /// Kind-specific (see [`KernelKind`]).
    pub a: u64,
    /// The task the event concerns (the task interrupted, switched out, or faulting).
    pub tid: u32,
    /// The CPU it happened on.
    pub cpu: u32,
    /// What happened.
    pub kind: KernelKind,
    /// Kind-specific (see [`KernelKind`]).
    pub b: u32,
}

impl KernelEvent {
    /// Bytes per record.
    pub const LEN: usize = 32;

    /// Appends the record to `out`.
    pub fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.ts.to_le_bytes());
        out.extend_from_slice(&self.a.to_le_bytes());
        out.extend_from_slice(&self.tid.to_le_bytes());
        out.extend_from_slice(&self.cpu.to_le_bytes());
        out.extend_from_slice(&self.kind.code().to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&self.b.to_le_bytes());
    }

    /// Reads a record from exactly [`KernelEvent::LEN`] bytes.
    pub fn get(b: &[u8]) -> KernelEvent {
        KernelEvent {
            ts: u64_at(b, 0),
            a: u64_at(b, 8),
            tid: u32_at(b, 16),
            cpu: u32_at(b, 20),
            kind: KernelKind::from_code(u16::from_le_bytes([b[24], b[25]])),
            b: u32_at(b, 28),
        }
    }
}

/// Events lost between two times: 24 bytes on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lost {
    /// The last event recorded before the loss began (0 when unknown), ns.
    pub from: u64,
    /// The first event recorded after it (u64::MAX when none followed), ns.
    pub to: u64,
    /// How many events were lost.
    pub count: u64,
}

impl Lost {
    /// Bytes per record.
    pub const LEN: usize = 24;

    /// Appends the record to `out`.
    pub fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.from.to_le_bytes());
        out.extend_from_slice(&self.to.to_le_bytes());
        out.extend_from_slice(&self.count.to_le_bytes());
    }

    /// Reads a record from exactly [`Lost::LEN`] bytes.
    pub fn get(b: &[u8]) -> Lost {
        Lost {
            from: u64_at(b, 0),
            to: u64_at(b, 8),
            count: u64_at(b, 16),
        }
    }
}

/// One event of either source, as [`merge`](super::merge) yields them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A program's event, with the thread that recorded it.
    User {
        /// Thread id.
        tid: u32,
        /// The record.
        event: UserEvent,
    },
    /// A kernel event.
    Kernel(KernelEvent),
}

impl Event {
    /// Its timestamp.
    pub fn ts(&self) -> u64 {
        match self {
            Event::User { event, .. } => event.ts,
            Event::Kernel(k) => k.ts,
        }
    }

    /// The CPU it happened on.
    pub fn cpu(&self) -> u32 {
        match self {
            Event::User { event, .. } => event.cpu,
            Event::Kernel(k) => k.cpu,
        }
    }
}
