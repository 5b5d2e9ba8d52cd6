//! The kernel's events, from its tracepoints, on the clock user events carry: the
//! memo's probes at the clock interrupt and the context switch, and the other things
//! a kernel does to a measurement (interrupts, faults, migrations).
//!
//! [`KernelRecorder::start`] reads each tracepoint's id and field layout from tracefs
//! (mounted privately for the moment it takes, when it is not mounted), opens every
//! requested tracepoint on every CPU asked for with `perf_event_open` on
//! `CLOCK_MONOTONIC_RAW`, and maps one ring per CPU. [`KernelRecorder::drain`] decodes
//! what the rings hold into [`KernelEvent`]s, per CPU and in time order, with the
//! kernel's own loss counts. Everything is released when the recorder is dropped.
//!
//! It needs root or `CAP_PERFMON` (tracepoints fire in the kernel, and CPU-wide events
//! are privileged at `perf_event_paranoid` ≥ 1). Where the kernel, the privileges or a
//! container's seccomp profile refuse, [`KernelRecorder::start`] says why in one line
//! and the caller goes on without kernel events; a tracepoint this kernel lacks is
//! left out and named.
//!
//! The tracepoints known, their tracefs ids and record layouts, and how a raw record
//! decodes are in `tracepoints`; this file opens them, drains the rings and reports.

mod tracepoints;

pub use tracepoints::{parse_format, Field};

use super::format::{KernelEvent, KernelKind, Lost};
use crate::os::perf::{self, Event, Record, Ring};
use std::collections::BTreeMap;
use std::fmt;
use std::io;
use tracepoints::{
    exit_of, read_field, tracepoint_ids, Decoder, Known, Tracepoint, TRACEPOINTS,
};

/// What to record.
#[derive(Debug, Clone)]
pub struct KernelRequest {
    /// The kinds of event (entry and exit kinds are opened in pairs).
    pub kinds: Vec<KernelKind>,
    /// The CPUs to record (empty: every online CPU).
    pub cpus: Vec<u32>,
    /// Data pages per CPU ring (a power of two).
    pub ring_pages: usize,
}

impl KernelRequest {
    /// The default set, on every CPU: switches, migrations, clock and other
    /// interrupts, softirqs, inter-processor interrupts and user page faults.
    pub fn all() -> KernelRequest {
        KernelRequest {
            kinds: DEFAULT_KINDS.to_vec(),
            cpus: vec![],
            ring_pages: 256,
        }
    }

    /// The kinds named in a comma-separated list (`switch,timer,irq,softirq,ipi,
    /// fault,migrate`, or `all`, or `none`).
    pub fn parse_kinds(list: &str) -> Result<Vec<KernelKind>, String> {
        let mut out = Vec::new();
        for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match word {
                "all" => out.extend_from_slice(DEFAULT_KINDS),
                "none" => {}
                w => match DEFAULT_KINDS.iter().find(|k| k.name() == w) {
                    Some(k) => out.push(*k),
                    None => {
                        return Err(format!(
                            "unknown kernel event '{w}' (choose from {}, all, none)",
                            DEFAULT_KINDS
                                .iter()
                                .map(|k| k.name())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ))
                    }
                },
            }
        }
        out.sort();
        out.dedup();
        Ok(out)
    }
}

/// The kinds recorded by default (entries; their exits come with them).
pub const DEFAULT_KINDS: &[KernelKind] = &[
    KernelKind::Switch,
    KernelKind::Migrate,
    KernelKind::TimerEntry,
    KernelKind::IrqEntry,
    KernelKind::SoftirqEntry,
    KernelKind::IpiEntry,
    KernelKind::Fault,
];

/// Why the kernel's events cannot be had, in one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable(pub String);

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unavailable {}

/// What a drain found.
#[derive(Debug, Default)]
pub struct Drained {
    /// Events by CPU, each CPU's in time order (and after every earlier drain's).
    pub events: Vec<(u32, Vec<KernelEvent>)>,
    /// Losses the kernel reported, by CPU.
    pub lost: Vec<(u32, Vec<Lost>)>,
}

/// What a recording did, when it stops.
#[derive(Debug, Default)]
pub struct Summary {
    /// The last events (see [`Drained`]).
    pub events: Vec<(u32, Vec<KernelEvent>)>,
    /// The last losses.
    pub lost: Vec<(u32, Vec<Lost>)>,
    /// The kinds recorded.
    pub recorded: Vec<KernelKind>,
    /// The kinds that could not be (empty when none).
    pub unavailable: String,
    /// How they were recorded, in one line.
    pub method: String,
}

/// How long a drained event is held back so that a later drain cannot bring an
/// earlier one on the same CPU: records in a ring are in time order but for events
/// that nest (an interrupt while another event is written), microseconds apart.
const HOLD_NS: u64 = 2_000_000;

struct CpuRing {
    cpu: u32,
    ring: Ring,
    others: Vec<Event>,
    pending: Vec<KernelEvent>,
    last_emitted: u64,
}

/// The kernel's events on some CPUs, recorded while it lives.
pub struct KernelRecorder {
    rings: Vec<CpuRing>,
    decoders: BTreeMap<u64, Decoder>,
    recorded: Vec<KernelKind>,
    missing: Vec<String>,
    method: String,
    scratch: Vec<u8>,
}

impl fmt::Debug for KernelRecorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KernelRecorder")
            .field(
                "cpus",
                &self.rings.iter().map(|r| r.cpu).collect::<Vec<_>>(),
            )
            .field("recorded", &self.recorded)
            .finish()
    }
}

fn online_cpus() -> Vec<u32> {
    let text =
        std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    let cpus: Vec<u32> = crate::host::parse::parse_cpu_list(&text)
        .into_iter()
        .map(|c| c as u32)
        .collect();
    if cpus.is_empty() {
        (0..std::thread::available_parallelism().map_or(1, |n| n.get() as u32)).collect()
    } else {
        cpus
    }
}

fn refusal(e: &io::Error, what: &str) -> Unavailable {
    let why = match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => {
            "not permitted (needs root or CAP_PERFMON; perf_event_paranoid, or a seccomp \
             profile, may forbid it)"
                .to_string()
        }
        Some(libc::ENOSYS) => "perf_event_open is not available in this kernel".into(),
        Some(libc::ENOENT) | Some(libc::ENODEV) => "this kernel has no such event".into(),
        _ => e.to_string(),
    };
    Unavailable(format!("kernel events unavailable: {what}: {why}"))
}

/// What opening the events of every CPU learns: how to decode each event, the kinds
/// recorded, and the tracepoints missing.
struct Opened<'a> {
    decoders: &'a mut BTreeMap<u64, Decoder>,
    recorded: &'a mut Vec<KernelKind>,
    missing: &'a mut Vec<String>,
}

/// Opens every known tracepoint on `cpu`, all writing into one ring of `ring_pages`
/// pages (None if the CPU has none of them).
fn open_cpu(
    cpu: u32,
    ids: &[Known<'_>],
    ring_pages: usize,
    o: &mut Opened<'_>,
) -> Result<Option<CpuRing>, Unavailable> {
    let mut ring: Option<Ring> = None;
    let mut others = Vec::new();
    for (t, tp_id, fields) in ids {
        let ev = match Event::tracepoint(*tp_id, cpu) {
            Ok(ev) => ev,
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ENOENT) | Some(libc::ENODEV)
                ) =>
            {
                let name = format!("{}:{}", t.system, t.name);
                if !o.missing.contains(&name) {
                    o.missing.push(name);
                }
                continue;
            }
            Err(e) => {
                return Err(refusal(
                    &e,
                    &format!("perf_event_open of {}:{}", t.system, t.name),
                ))
            }
        };
        let field = |n: Option<&str>| n.and_then(|n| fields.get(n).copied());
        o.decoders.insert(
            ev.id,
            Decoder {
                kind: t.kind,
                a: field(t.a),
                b: field(t.b),
                tid: field(t.tid_field),
            },
        );
        if !o.recorded.contains(&t.kind) {
            o.recorded.push(t.kind);
        }
        match &ring {
            None => {
                ring = Some(Ring::map(ev, ring_pages).map_err(|e| {
                    refusal(&e, &format!("mapping the ring of CPU {cpu}"))
                })?)
            }
            Some(r) => {
                ev.output_to(r).map_err(|e| {
                    refusal(&e, "redirecting an event into its CPU's ring")
                })?;
                others.push(ev);
            }
        }
    }
    Ok(ring.map(|ring| CpuRing {
        cpu,
        ring,
        others,
        pending: Vec::new(),
        last_emitted: 0,
    }))
}

impl KernelRecorder {
    /// Opens the requested events and starts recording.
    pub fn start(req: &KernelRequest) -> Result<KernelRecorder, Unavailable> {
        let mut kinds: Vec<KernelKind> = req.kinds.clone();
        kinds.extend(req.kinds.iter().filter_map(|k| exit_of(*k)));
        let chosen: Vec<&Tracepoint> = TRACEPOINTS
            .iter()
            .filter(|t| kinds.contains(&t.kind))
            .collect();
        if chosen.is_empty() {
            return Err(Unavailable("no kernel events were asked for".into()));
        }
        let (where_, ids, mut missing) = tracepoint_ids(&chosen)?;
        let cpus = if req.cpus.is_empty() {
            online_cpus()
        } else {
            req.cpus.clone()
        };
        let mut rings = Vec::new();
        let mut decoders = BTreeMap::new();
        let mut recorded = Vec::new();
        for &cpu in &cpus {
            let mut opened = Opened {
                decoders: &mut decoders,
                recorded: &mut recorded,
                missing: &mut missing,
            };
            if let Some(r) = open_cpu(cpu, &ids, req.ring_pages, &mut opened)? {
                rings.push(r);
            }
        }
        for r in &rings {
            for ev in std::iter::once(r.ring.event()).chain(r.others.iter()) {
                ev.enable().map_err(|e| refusal(&e, "enabling an event"))?;
            }
        }
        recorded.sort();
        let method = format!(
            "perf_event_open tracepoints on CPUs {} (CLOCK_MONOTONIC_RAW; {where_})",
            crate::host::parse::format_cpu_list(
                &rings.iter().map(|r| r.cpu as usize).collect::<Vec<_>>()
            )
        );
        Ok(KernelRecorder {
            rings,
            decoders,
            recorded,
            missing,
            method,
            scratch: Vec::new(),
        })
    }

    /// The tracepoints asked for that this kernel does not have, in one line (None
    /// when it has them all).
    pub fn unavailable(&self) -> Option<String> {
        (!self.missing.is_empty())
            .then(|| format!("not in this kernel: {}", self.missing.join(", ")))
    }

    /// How the events are recorded, in one line.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The CPUs recorded.
    pub fn cpus(&self) -> Vec<u32> {
        self.rings.iter().map(|r| r.cpu).collect()
    }

    /// Decodes what the rings hold. Each CPU's events come in time order, after those
    /// of every earlier drain; the last two milliseconds are held back for the next
    /// drain (or [`KernelRecorder::stop`]) so that a late record of a nested event
    /// still lands in order.
    pub fn drain(&mut self) -> io::Result<Drained> {
        self.drain_inner(false)
    }

    /// Decodes everything the rings hold, nothing held back: for a reader that needs
    /// every event up to now (culling a round of samples that just ended). An event
    /// that a later drain finds earlier than this one's last is moved to that time.
    pub fn drain_all(&mut self) -> io::Result<Drained> {
        self.drain_inner(true)
    }

    fn drain_inner(&mut self, all: bool) -> io::Result<Drained> {
        let mut out = Drained::default();
        let decoders = &self.decoders;
        for r in &mut self.rings {
            let mut lost = Vec::new();
            let mut newest = r.last_emitted;
            let cpu = r.cpu;
            let pending = &mut r.pending;
            r.ring
                .read(&mut self.scratch, |rec| match perf::parse(rec) {
                    Some(Record::Sample(s)) => {
                        if let Some(d) = decoders.get(&s.id) {
                            let tid =
                                d.tid.map_or(s.tid as u64, |f| read_field(s.raw, f));
                            pending.push(KernelEvent {
                                ts: s.time,
                                a: d.a.map_or(0, |f| read_field(s.raw, f)),
                                tid: tid as u32,
                                cpu: s.cpu,
                                kind: d.kind,
                                b: d.b.map_or(0, |f| read_field(s.raw, f)) as u32,
                            });
                            newest = newest.max(s.time);
                        }
                    }
                    // Lost between the newest event read before it and its own time.
                    Some(Record::Lost { count, time }) => lost.push(Lost {
                        from: newest,
                        to: if time == 0 {
                            u64::MAX
                        } else {
                            time.max(newest)
                        },
                        count,
                    }),
                    _ => {}
                });
            pending.sort_by_key(|e| e.ts);
            let newest = pending.last().map_or(newest, |e| e.ts.max(newest));
            let cut = if all {
                pending.len()
            } else {
                pending.partition_point(|e| e.ts + HOLD_NS <= newest)
            };
            let mut ready: Vec<KernelEvent> = pending.drain(..cut).collect();
            // Never go back in time across drains.
            for e in &mut ready {
                e.ts = e.ts.max(r.last_emitted);
                r.last_emitted = e.ts;
            }
            if !ready.is_empty() {
                out.events.push((cpu, ready));
            }
            if !lost.is_empty() {
                out.lost.push((cpu, lost));
            }
        }
        Ok(out)
    }

    /// Stops recording and returns the rest with what was recorded; everything is
    /// released.
    pub fn stop(mut self) -> io::Result<Summary> {
        for r in &self.rings {
            for ev in std::iter::once(r.ring.event()).chain(r.others.iter()) {
                let _ = ev.disable();
            }
        }
        let rest = self.drain_inner(true)?;
        Ok(Summary {
            events: rest.events,
            lost: rest.lost,
            recorded: self.recorded.clone(),
            unavailable: self.unavailable().unwrap_or_default(),
            method: self.method.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_from_a_list_and_unknown_ones_are_named() {
        assert_eq!(
            KernelRequest::parse_kinds("timer,switch").unwrap(),
            vec![KernelKind::Switch, KernelKind::TimerEntry]
        );
        assert_eq!(
            KernelRequest::parse_kinds("all").unwrap().len(),
            DEFAULT_KINDS.len()
        );
        assert!(KernelRequest::parse_kinds("none").unwrap().is_empty());
        let e = KernelRequest::parse_kinds("timer,bogus").unwrap_err();
        assert!(e.contains("bogus") && e.contains("switch"), "{e}");
    }

    /// This process's perf event descriptors: other tests running beside this one open
    /// and close files of their own, but only this one records kernel events.
    fn fds() -> usize {
        std::fs::read_dir("/proc/self/fd").map_or(0, |d| {
            d.flatten()
                .filter(|e| {
                    std::fs::read_link(e.path())
                        .is_ok_and(|t| t.to_string_lossy().contains("perf_event"))
                })
                .count()
        })
    }

    /// A real recording: a sleep shows its switches between two reads of the user's
    /// clock, a busy CPU takes clock interrupts, fresh pages fault, and nothing stays
    /// behind. Skipped, with the reason, where kernel events cannot be had.
    #[test]
    fn a_sleep_switches_a_spin_takes_ticks_and_touched_pages_fault_on_one_clock() {
        let fds_before = fds();
        let mut rec = match KernelRecorder::start(&KernelRequest::all()) {
            Ok(r) => r,
            Err(why) => {
                println!("SKIPPED: {why}");
                return;
            }
        };
        assert!(
            fds() > fds_before,
            "the recording holds perf event descriptors"
        );
        let me = crate::os::task::gettid() as u32;
        let raw = crate::os::sys::raw_ns;
        // A sleep: this thread leaves its CPU and comes back.
        let a = raw();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = raw();
        // A spin of 200 ms on one CPU.
        let pin = crate::os::affinity::Pin::to(rec.cpus()[0] as usize).ok();
        let s0 = raw();
        while raw() - s0 < 200_000_000 {
            std::hint::spin_loop();
        }
        let s1 = raw();
        let spin_cpu = crate::os::sys::current_cpu().unwrap_or(0) as u32;
        drop(pin);
        // Emptied rings before the faults: other tests in this process fill them with
        // their own switches and faults, and a full ring drops what comes next.
        let counted = |l: &[(u32, Vec<Lost>)]| -> u64 {
            l.iter().flat_map(|(_, l)| l).map(|l| l.count).sum()
        };
        let mut events: Vec<KernelEvent> = Vec::new();
        let d = rec.drain().unwrap();
        events.extend(d.events.into_iter().flat_map(|(_, e)| e));
        let mut lost = counted(&d.lost);
        // Fresh pages, touched: a mapping of their own (a heap allocation may reuse
        // pages another test in this process already faulted in).
        let m = crate::os::mem::Mapping::anon(4 << 20, false).unwrap();
        let f0 = raw();
        m.touch_write(4096);
        let f1 = raw();
        drop(m);
        let s = rec.stop().unwrap();
        events.extend(s.events.into_iter().flat_map(|(_, e)| e));
        lost += counted(&s.lost);
        let switched = events.iter().any(|e| {
            e.kind == KernelKind::Switch && e.tid == me && e.ts >= a && e.ts <= b
        });
        assert!(
            switched,
            "no switch of thread {me} inside its 2 ms sleep [{a}, {b}]"
        );
        let ticks = events
            .iter()
            .filter(|e| {
                e.kind == KernelKind::TimerEntry
                    && e.cpu == spin_cpu
                    && e.ts >= s0
                    && e.ts <= s1
            })
            .count();
        assert!(
            (5..=2000).contains(&ticks),
            "{ticks} clock interrupts in a 200 ms spin"
        );
        let faults = events
            .iter()
            .filter(|e| {
                e.kind == KernelKind::Fault && e.tid == me && e.ts >= f0 && e.ts <= f1
            })
            .count();
        assert!(
            faults > 0,
            "no page fault of thread {me} while it touched 4 MiB ({lost} events lost)"
        );
        assert_eq!(fds(), fds_before, "every perf event descriptor closed");
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
        assert!(
            !mounts.contains("syscost-tracefs"),
            "the private tracefs mount is gone"
        );
        println!(
            "{} events ({ticks} ticks in the spin, {faults} faults); {}",
            events.len(),
            s.method
        );
    }
}
