//! `syscost trace show`: a trace's header (clock, event cost, what was recorded and
//! lost) and its events in time order, filtered by event, thread, CPU and time window.

use super::format::{self, Event, Index, Meta};
use std::io::Write;

/// Which events to list.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// User event ids (empty: every id); kernel kinds are named by name.
    pub events: Vec<u32>,
    /// Kernel event kinds by name (empty: every kind).
    pub kernel_kinds: Vec<String>,
    /// Threads (empty: every thread).
    pub threads: Vec<u32>,
    /// CPUs (empty: every CPU).
    pub cpus: Vec<u32>,
    /// From this many ns after the first event.
    pub from_ns: Option<u64>,
    /// To this many ns after the first event.
    pub to_ns: Option<u64>,
    /// Include kernel events.
    pub kernel: bool,
    /// Include user events.
    pub user: bool,
    /// At most this many events.
    pub limit: Option<u64>,
}

/// Parses a duration: `1500`, `1500ns`, `2.5us`, `3ms`, `1s`, as ns.
pub fn parse_duration(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (num, mult) = if let Some(n) = s.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix("us").or_else(|| s.strip_suffix("µs")) {
        (n, 1e3)
    } else if let Some(n) = s.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1e9)
    } else {
        (s, 1.0)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a duration (e.g. 1500, 2.5us, 3ms, 1s)"))?;
    if !v.is_finite() || v < 0.0 || v * mult > u64::MAX as f64 {
        return Err(format!("'{s}' is not a duration of zero or more"));
    }
    Ok((v * mult).round() as u64)
}

/// The header lines: clock, event cost, program, what was recorded and lost.
pub fn header(index: &Index) -> String {
    let mut s = String::new();
    for m in &index.meta {
        match m {
            Meta::Open {
                clock,
                clock_check,
                event_cost_ns,
                program,
                pid,
                buffer_bytes,
                ..
            } => {
                s += &format!(
                    "program {program} (pid {pid}) · clock {clock} · event cost {event_cost_ns:.1} ns · ring {} KiB per thread\nclock check: {clock_check}\n",
                    buffer_bytes / 1024
                );
            }
            Meta::Command { argv, status } => {
                s += &format!("command: {} (exit status {status})\n", argv.join(" "));
            }
            _ => {}
        }
    }
    s += &format!(
        "user events {} ({} lost) in {} · kernel events {} ({} lost) on {}\nkernel: {}\n",
        index.user_events,
        index.user_lost_total(),
        crate::draw::text::count(index.user.len(), "thread", "threads"),
        index.kernel_events,
        index.kernel_lost_total(),
        crate::draw::text::count(index.kernel.len(), "CPU", "CPUs"),
        super::reduce::kernel_line(index)
    );
    if index.truncated {
        s += "warning: the file ends in the middle of a chunk (the recording was cut short)\n";
    }
    if index.unknown_chunks > 0 {
        s += &format!(
            "note: {} chunks of a kind this version does not read were skipped\n",
            index.unknown_chunks
        );
    }
    s
}

/// Writes the events that pass `filter`, in time order, as lines (or JSON objects, one
/// per line, with `json`). Returns how many were written.
pub fn show(
    file: &std::fs::File,
    index: &Index,
    filter: &Filter,
    json: bool,
    out: &mut dyn Write,
) -> Result<u64, anyhow::Error> {
    let names = index.names();
    let mut first: Option<u64> = None;
    let mut n = 0u64;
    for ev in format::merge(file, index)? {
        let ev = ev?;
        let t0 = *first.get_or_insert(ev.ts());
        let rel = ev.ts() - t0;
        if filter.from_ns.is_some_and(|f| rel < f) {
            continue;
        }
        if filter.to_ns.is_some_and(|t| rel > t) {
            break;
        }
        if !filter.cpus.is_empty() && !filter.cpus.contains(&ev.cpu()) {
            continue;
        }
        let line = match ev {
            Event::User { tid, event } => {
                if !filter.user
                    || (!filter.events.is_empty() && !filter.events.contains(&event.id))
                    || (!filter.threads.is_empty() && !filter.threads.contains(&tid))
                {
                    continue;
                }
                let name = names.get(&event.id).cloned().unwrap_or_default();
                if json {
                    serde_json::json!({"ts": event.ts, "rel_ns": rel, "source": "user", "tid": tid,
                        "cpu": event.cpu, "id": event.id, "name": name, "arg": event.arg})
                    .to_string()
                } else {
                    format!(
                        "{:>16.3} µs  cpu {:<3} tid {:<8} user   {:<16} arg {}",
                        rel as f64 / 1e3,
                        event.cpu,
                        tid,
                        if name.is_empty() {
                            format!("#{}", event.id)
                        } else {
                            format!("{name} #{}", event.id)
                        },
                        event.arg
                    )
                }
            }
            Event::Kernel(k) => {
                let kind = k.kind.name();
                if !filter.kernel
                    || (!filter.kernel_kinds.is_empty()
                        && !filter.kernel_kinds.contains(&kind))
                    || (!filter.threads.is_empty() && !filter.threads.contains(&k.tid))
                {
                    continue;
                }
                if json {
                    serde_json::json!({"ts": k.ts, "rel_ns": rel, "source": "kernel", "tid": k.tid,
                        "cpu": k.cpu, "kind": kind, "a": k.a, "b": k.b})
                    .to_string()
                } else {
                    format!(
                        "{:>16.3} µs  cpu {:<3} tid {:<8} kernel {:<16} {}",
                        rel as f64 / 1e3,
                        k.cpu,
                        k.tid,
                        kind,
                        kernel_detail(&k)
                    )
                }
            }
        };
        writeln!(out, "{line}")?;
        n += 1;
        if filter.limit.is_some_and(|l| n >= l) {
            break;
        }
    }
    Ok(n)
}

fn kernel_detail(k: &format::KernelEvent) -> String {
    use format::KernelKind::*;
    match k.kind {
        Switch => format!(
            "→ tid {}{}",
            k.a,
            if k.b == 0 { " (preempted)" } else { "" }
        ),
        Migrate => format!("cpu {} → {}", k.a, k.b),
        Fault => format!("address {:#x} error {:#x}", k.a, k.b),
        IrqEntry | IrqExit => format!("irq {}", k.a),
        SoftirqEntry | SoftirqExit => format!("vector {}", k.a),
        TimerEntry | TimerExit | IpiEntry | IpiExit => format!("vector {:#x}", k.a),
        Other(_) => format!("a {} b {}", k.a, k.b),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn durations_parse_with_units_and_bad_ones_are_refused() {
        use super::parse_duration as p;
        assert_eq!(p("1500"), Ok(1500));
        assert_eq!(p("2.5us"), Ok(2500));
        assert_eq!(p("3ms"), Ok(3_000_000));
        assert_eq!(p("1s"), Ok(1_000_000_000));
        assert!(
            p("-1ms").is_err()
                && p("soon").is_err()
                && p("1e300s").is_err()
                && p("NaNs").is_err()
        );
    }
}
