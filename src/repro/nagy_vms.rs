//! `syscost repro nagy-vms`: the VAX/VMS system service timings beside this machine.
//! Table I: every service in µs beside the median of its modern counterparts and how
//! many times faster today is. Table III: the mailbox echo between a master and a slave
//! at the paper's priorities, single-user and under background load (multi-user), and
//! across CPUs through shared memory; today's overhead and bandwidth come from the same
//! straight-line fit over message sizes that the paper's two columns imply.

use super::median;
use super::nagy_vms_data::*;
use super::Options;
use crate::os::interrupt::{interrupted, InterruptGuard};
use crate::results::fmt_ns;
use crate::session::Session;
use crate::stats::fit::linear_fit;
use std::io::Write;
use std::process::ExitCode;

/// How a Table III condition is measured today.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Today {
    /// The `ipc.rtt` transport.
    pub transport: &'static str,
    /// The `ipc.rtt` placement.
    pub placement: &'static str,
    /// Whether the background load runs.
    pub loaded: bool,
}

/// The closest transport for each condition: a mailbox is a named kernel queue that
/// keeps message boundaries, as a POSIX message queue does; the shared-memory row put
/// the two processes on two machines and the mailboxes in memory both could reach,
/// which is a shared-memory ring between two CPUs.
pub fn today(condition: Condition) -> Today {
    match condition {
        Condition::SingleUser => Today {
            transport: "posix_mq",
            placement: "same-cpu",
            loaded: false,
        },
        Condition::MultiUser => Today {
            transport: "posix_mq",
            placement: "same-cpu",
            loaded: true,
        },
        Condition::SharedMemory => Today {
            transport: "shm_futex",
            placement: "cross-cpu",
            loaded: false,
        },
    }
}

/// A straight line through (message size, round trip): the intercept is the overhead
/// of one echo and the slope the time per byte of message. The round trip carries the
/// message both ways, so the bandwidth with both directions counted is 2/slope.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EchoFit {
    /// Overhead of one round trip, in ns.
    pub overhead_ns: f64,
    /// Bytes per second, both directions counted; `None` when the round trip does not
    /// grow with the size (noise larger than the copying, as across idle CPUs).
    pub bytes_per_s: Option<f64>,
    /// How many sizes were fitted.
    pub points: usize,
}

/// Fits (size in bytes, round trip in ns) points; `None` with fewer than two sizes.
pub fn echo_fit(points: &[(u64, f64)]) -> Option<EchoFit> {
    let xs: Vec<f64> = points.iter().map(|p| p.0 as f64).collect();
    let ys: Vec<f64> = points.iter().map(|p| p.1).collect();
    let f = linear_fit(&xs, &ys)?;
    Some(EchoFit {
        overhead_ns: f.intercept,
        bytes_per_s: (f.slope > 0.0).then(|| 2.0 / f.slope * 1e9),
        points: points.len(),
    })
}

fn label(a: &Analog) -> String {
    let mut s = a.bench.to_string();
    for (k, v) in a.params {
        s.push_str(&format!(" {k}={v}"));
    }
    s
}

fn open(args: &Options, load: usize) -> anyhow::Result<Session> {
    super::session(args, crate::host::collect(&[]).invariant_tsc, load)
}

/// Runs the reproduction and prints it.
pub fn run(args: &Options) -> anyhow::Result<ExitCode> {
    let facts = crate::host::collect(&[]);
    let _guard = InterruptGuard::install()?;
    let session = open(args, 0)?;
    let mut out = crate::report::stdout();
    writeln!(
        out,
        "VAX/VMS system service timings (ACNET design note 16.0) beside this machine \
         ({})",
        super::machine(&facts, &session, args)
    )?;
    table_i(&session, &mut out)?;
    if !interrupted() {
        let load = args
            .load
            .unwrap_or_else(|| crate::os::affinity::process_cpus().len().max(1));
        table_iii(args, session, load, &mut out)?;
    }
    Ok(super::exit_code())
}

fn table_i(session: &Session, out: &mut impl Write) -> anyhow::Result<()> {
    writeln!(
        out,
        "\nTable I: VMS services (µs, the paper's {NULL_OVERHEAD_US:.0} µs timing \
         overhead already subtracted) beside today's counterparts"
    )?;
    writeln!(
        out,
        "{:<13} {:<42} {:>7}   {:<34} {:>10} {:>9}",
        "service", "", "VMS", "today", "median", "×faster"
    )?;
    // Rows that share a counterpart ($SETAST and USER_SETINA) show one measurement.
    let mut seen: std::collections::HashMap<String, Result<f64, String>> =
        std::collections::HashMap::new();
    for g in TABLE_I {
        writeln!(out, "{}", g.title)?;
        for r in g.rows {
            if interrupted() {
                return Ok(());
            }
            let head = format!("{:<13} {:<42} {:>5.0}µs", r.service, r.what, r.us);
            if r.analogs.is_empty() {
                let why = no_analog_reason(r).unwrap_or("no counterpart");
                writeln!(out, "{head}   {why}")?;
                continue;
            }
            for (i, a) in r.analogs.iter().enumerate() {
                let v = seen
                    .entry(label(a))
                    .or_insert_with(|| median(session, a.bench, a.params))
                    .clone();
                let vms_us = match a.pair {
                    Some(p) => {
                        r.us + g
                            .rows
                            .iter()
                            .find(|o| o.service == p)
                            .map_or(0.0, |o| o.us)
                    }
                    None => r.us,
                };
                let ratio = match &v {
                    Ok(ns) if *ns > 0.0 => format!("{:.0}", vms_us * 1000.0 / ns),
                    _ => "-".into(),
                };
                let lead = if i == 0 {
                    head.clone()
                } else {
                    " ".repeat(head.chars().count())
                };
                let (shown, note) = match &v {
                    Ok(ns) => (fmt_ns(*ns), String::new()),
                    Err(e) => ("-".to_string(), format!("  {e}")),
                };
                let pair = a
                    .pair
                    .map(|p| format!("  (with {p}: {vms_us:.0} µs together)"))
                    .unwrap_or_default();
                writeln!(
                    out,
                    "{lead}   {:<34} {:>10} {:>9}{pair}{note}",
                    label(a),
                    shown,
                    ratio
                )?;
            }
        }
    }
    Ok(())
}

/// A size not measured: (transport, size, reason).
type Skip = (&'static str, String, String);

fn table_iii(
    args: &Options,
    quiet: Session,
    load: usize,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let sizes: Vec<String> = SIZES.iter().map(|s| s.to_string()).collect();
    writeln!(
        out,
        "\nTable III: mailbox echo, master to slave and back, {} B to {} B; today's \
         overhead and bandwidth are the intercept and 2/slope of a line through the \
         round trips (both directions counted); multi-user rows run beside {load} \
         spinning processes",
        SIZES[0],
        SIZES[SIZES.len() - 1]
    )?;
    writeln!(
        out,
        "{:<14} {:>6} {:>5} {:>9} {:>6}   {:<10} {:<10} {:<10} {:>10} {:>12} {:>10} {:>9}",
        "condition",
        "master",
        "slave",
        "ovhd ms",
        "KB/s",
        "transport",
        "placement",
        "priority",
        "rtt 4 B",
        "overhead",
        "MB/s",
        "×faster"
    )?;
    // One session at a time, since the load and the pin are process-wide: a change of
    // condition ends the current session (stopping its load) before the next starts.
    let mut current: (bool, Session) = (false, quiet);
    // (transport, size, reason) and the priorities it applied to.
    let mut skipped: Vec<(Skip, Vec<String>)> = Vec::new();
    let mut flat = false;
    for m in TABLE_III {
        if interrupted() {
            break;
        }
        let t = today(m.condition);
        if current.0 != t.loaded {
            let next_load = if t.loaded { load } else { 0 };
            drop(current);
            current = (t.loaded, open(args, next_load)?);
        }
        let session = &current.1;
        let priority =
            format!("{}:{}", linux_priority(m.master), linux_priority(m.slave));
        let (points, rtt4) = echo_sizes(session, &t, &priority, &sizes, &mut skipped);
        let (overhead, bw, ratio) = fit_columns(&points, m.overhead_ms, &mut flat);
        writeln!(
            out,
            "{:<14} {:>6} {:>5} {:>9.3} {:>6.0}   {:<10} {:<10} {:<10} {:>10} {:>12} {:>10} {:>9}",
            m.condition.title(),
            m.master,
            m.slave,
            m.overhead_ms,
            m.kb_per_s,
            t.transport,
            t.placement,
            priority,
            rtt4,
            overhead,
            bw,
            ratio
        )?;
    }
    drop(current);
    table_iii_notes(out, &skipped, flat)?;
    writeln!(out, "the paper: {TABLE_III_READING}.")?;
    Ok(())
}

/// Measures the echo of one Table III row at every size; returns the (size, ns) points
/// measured and the first size's round trip as the table prints it, and adds the sizes not measured to
/// `skipped` with the priority they applied to.
fn echo_sizes(
    session: &Session,
    t: &Today,
    priority: &str,
    sizes: &[String],
    skipped: &mut Vec<(Skip, Vec<String>)>,
) -> (Vec<(u64, f64)>, String) {
    let mut points = Vec::new();
    let mut first: Option<Result<f64, String>> = None;
    for s in sizes {
        if interrupted() {
            break;
        }
        let v = median(
            session,
            "ipc.rtt",
            &[
                ("transport", t.transport),
                ("placement", t.placement),
                ("priority", priority),
                ("size", s.as_str()),
            ],
        );
        match &v {
            Ok(ns) => points.push((s.parse::<u64>().unwrap_or(0), *ns)),
            Err(e) => {
                let key = (t.transport, s.clone(), e.clone());
                match skipped.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, prios)) => prios.push(priority.to_string()),
                    None => skipped.push((key, vec![priority.to_string()])),
                }
            }
        }
        if first.is_none() {
            first = Some(v);
        }
    }
    let rtt4 = match &first {
        Some(Ok(ns)) => fmt_ns(*ns),
        _ => "-".into(),
    };
    (points, rtt4)
}

/// The overhead, MB/s and ×faster columns from the line through `points`; sets `flat`
/// when the round trips do not grow with the size.
fn fit_columns(
    points: &[(u64, f64)],
    paper_ms: f64,
    flat: &mut bool,
) -> (String, String, String) {
    let Some(f) = echo_fit(points) else {
        return ("-".into(), "-".into(), "-".into());
    };
    let bw = match f.bytes_per_s {
        Some(b) => format!("{:.1}", b / 1e6),
        None => {
            *flat = true;
            "flat".into()
        }
    };
    let ratio = if f.overhead_ns > 0.0 {
        format!("{:.0}", paper_ms * 1e6 / f.overhead_ns)
    } else {
        "-".into()
    };
    (fmt_ns(f.overhead_ns), bw, ratio)
}

/// The lines under Table III: sizes not measured, and what "flat" means.
fn table_iii_notes(
    out: &mut impl Write,
    skipped: &[(Skip, Vec<String>)],
    flat: bool,
) -> std::io::Result<()> {
    for ((transport, size, why), prios) in skipped {
        writeln!(
            out,
            "  not measured: {transport} at {size} B (priorities {}): {why}",
            prios.join(", ")
        )?;
    }
    if flat {
        writeln!(
            out,
            "  flat: the round trips do not grow with the message size; the variation \
             between sizes is larger than the cost of copying, so no bandwidth can be read"
        )?;
    }
    writeln!(
        out,
        "priorities: VMS 16..31 (real-time) as SCHED_FIFO 1..16 (rtN), used only where \
         permitted; VMS 0..15 as nice 4-p (the default interactive priority 4 is nice 0)"
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_reads_overhead_and_bandwidth_off_a_line() {
        // 50 µs plus 2 ns per byte of message: 1 GB/s both ways.
        let pts: Vec<(u64, f64)> = [4u64, 64, 512, 4096]
            .iter()
            .map(|&s| (s, 50_000.0 + 2.0 * s as f64))
            .collect();
        let f = echo_fit(&pts).unwrap();
        assert!((f.overhead_ns - 50_000.0).abs() < 1e-6);
        assert!((f.bytes_per_s.unwrap() - 1e9).abs() < 1.0);
        assert_eq!(f.points, 4);
    }

    #[test]
    fn fit_needs_two_sizes_and_reads_no_bandwidth_off_a_flat_line() {
        assert!(echo_fit(&[(4, 100.0)]).is_none());
        assert_eq!(
            echo_fit(&[(4, 100.0), (64, 90.0)]).unwrap().bytes_per_s,
            None
        );
        assert!(echo_fit(&[(4, 100.0), (64, 110.0)])
            .unwrap()
            .bytes_per_s
            .is_some());
    }

    fn accepts(bench: &str, params: &[(&str, &str)]) -> Result<(), String> {
        let b =
            crate::bench::find(bench).ok_or_else(|| format!("no benchmark {bench}"))?;
        let args: Vec<crate::bench::ParamArg> = params
            .iter()
            .map(|(k, v)| crate::bench::ParamArg {
                name: k.to_string(),
                values: vec![v.to_string()],
            })
            .collect();
        crate::bench::params::expand(bench, b.params(), &args)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn every_counterpart_is_in_the_catalogue_with_its_parameters() {
        for g in TABLE_I {
            for r in g.rows {
                for a in r.analogs {
                    accepts(a.bench, a.params).unwrap();
                }
            }
        }
        for m in TABLE_III {
            let t = today(m.condition);
            let priority =
                format!("{}:{}", linux_priority(m.master), linux_priority(m.slave));
            for s in SIZES {
                let size = s.to_string();
                accepts(
                    "ipc.rtt",
                    &[
                        ("transport", t.transport),
                        ("placement", t.placement),
                        ("priority", &priority),
                        ("size", &size),
                    ],
                )
                .unwrap();
            }
        }
    }

    #[test]
    fn conditions_map_to_transports() {
        assert_eq!(today(Condition::SingleUser).transport, "posix_mq");
        assert!(today(Condition::MultiUser).loaded);
        assert!(!today(Condition::SingleUser).loaded);
        assert_eq!(today(Condition::SharedMemory).placement, "cross-cpu");
    }
}
