//! `syscost repro manea1999`: the 1999 SunOS paper's §3–§6 beside this machine: the
//! trivial calls, signals against pipes, the zero-fill page fault (and the helper
//! thread the paper suggests), and which file-read method wins at small and large
//! buffers, cold and warm.

use super::manea1999_data::*;
use super::median;
use super::Options;
use crate::os::interrupt::{interrupted, InterruptGuard};
use crate::results::fmt_ns;
use crate::session::Session;
use std::io::Write;
use std::process::ExitCode;

/// The file-read methods compared in §6, as `file.read` names them.
pub const METHODS: [&str; 5] = ["read", "pread", "buffered", "stdio", "mmap"];

/// How close to the fastest method another must be to count as a tie.
const TIE: f64 = 0.05;

/// The fastest of `(method, ns)` results, if any was measured.
pub fn winner<'a>(times: &[(&'a str, Result<f64, String>)]) -> Option<(&'a str, f64)> {
    times
        .iter()
        .filter_map(|(m, r)| r.as_ref().ok().map(|&ns| (*m, ns)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

fn show(v: &Result<f64, String>) -> String {
    match v {
        Ok(ns) => fmt_ns(*ns),
        Err(e) => e.clone(),
    }
}

/// Runs the reproduction and prints it.
pub fn run(args: &Options) -> anyhow::Result<ExitCode> {
    let facts = crate::host::collect(&[]);
    let _guard = InterruptGuard::install()?;
    let session = super::session(args, facts.invariant_tsc, 0)?;
    let mut out = crate::report::stdout();
    writeln!(
        out,
        "Operating system measurements on SunOS 5.6 (1999), §3–§6, beside this machine \
         ({})",
        super::machine(&facts, &session, args)
    )?;

    calls(&mut out, &session)?;
    round_trips(&mut out, &session)?;
    faults(&mut out, &session)?;
    file_reads(&mut out, &session, args.profile.name)?;
    Ok(super::exit_code())
}

/// §3: the trivial calls, each as a multiple of getpid, then and now.
fn calls(out: &mut dyn Write, session: &Session) -> std::io::Result<()> {
    writeln!(
        out,
        "\n§3 trivial calls       1999        ×getpid   today       ×getpid"
    )?;
    let base = median(session, CALLS[0].bench, &[]);
    for c in CALLS {
        if interrupted() {
            break;
        }
        let v = median(session, c.bench, &[]);
        let ratio = match (&v, &base) {
            (Ok(v), Ok(b)) if *b > 0.0 => format!("{:.1}", v / b),
            _ => "-".into(),
        };
        writeln!(
            out,
            "{:<20} {:>10} {:>8.1}   {:<11} {:>7}",
            c.call,
            fmt_ns(c.ns),
            c.ns / CALLS[0].ns,
            show(&v),
            ratio
        )?;
    }
    writeln!(out, "the paper: {CALLS_READING}.")?;
    Ok(())
}

/// §4: signals against pipes, the round trip on one CPU and half of it.
fn round_trips(out: &mut dyn Write, session: &Session) -> std::io::Result<()> {
    writeln!(
        out,
        "\n§4 round trip (same CPU)  1999 round trip  1999 switch   today round trip  today switch (½)"
    )?;
    for r in ROUND_TRIPS {
        if interrupted() {
            break;
        }
        let v = median(
            session,
            "ctx.pingpong",
            &[("mechanism", r.mechanism), ("placement", "same-cpu")],
        );
        let half = v.as_ref().map(|ns| fmt_ns(ns / 2.0)).unwrap_or_default();
        writeln!(
            out,
            "{:<25} {:>15} {:>12}   {:<17} {half}",
            r.mechanism,
            fmt_ns(r.round_trip_ns),
            fmt_ns(r.switch_ns),
            show(&v)
        )?;
    }
    writeln!(out, "the paper: {ROUND_TRIPS_READING}.")?;
    Ok(())
}

/// §5: the zero-fill page fault, and the paper's helper-thread remedy.
fn faults(out: &mut dyn Write, session: &Session) -> std::io::Result<()> {
    writeln!(out, "\n§5 zero-fill page fault")?;
    writeln!(
        out,
        "1999: {} per 8 KiB page ({} per 4 KiB)",
        fmt_ns(ZERO_FAULT_NS),
        fmt_ns(ZERO_FAULT_NS * 4096.0 / SUNOS_PAGE as f64)
    )?;
    let fault = |prefault: &'static str| {
        median(session, "mem.fault.zero", &[("prefault", prefault)])
    };
    let none = fault("none");
    writeln!(
        out,
        "today mem.fault.zero: {} per 4 KiB page{}",
        show(&none),
        none.as_ref()
            .map(|ns| format!(
                " ({:.0}× faster per byte than 1999)",
                ZERO_FAULT_NS / SUNOS_PAGE as f64 / (ns / 4096.0)
            ))
            .unwrap_or_default()
    )?;
    if !interrupted() {
        let thread = fault("thread");
        let populate = fault("populate");
        writeln!(
            out,
            "the paper's remedy, today: with a helper thread prefaulting, the measuring \
             thread pays {} per page; MADV_POPULATE_WRITE first, {} per page",
            show(&thread),
            show(&populate)
        )?;
    }
    writeln!(out, "the paper: {ZERO_FAULT_READING}.")?;
    Ok(())
}

/// §6: which file-read method is fastest, by buffer size, cold and warm.
fn file_reads(
    out: &mut dyn Write,
    session: &Session,
    profile: &str,
) -> std::io::Result<()> {
    writeln!(
        out,
        "\n§6 file reads: time per call, from a {} MiB test file",
        crate::bench::file::default_file_bytes(Some(profile)) >> 20
    )?;
    for (i, size) in READ_SIZES.iter().enumerate() {
        for cache in ["cold", "warm"] {
            if interrupted() {
                break;
            }
            let s = size.to_string();
            let times: Vec<(&str, Result<f64, String>)> = METHODS
                .iter()
                .map(|m| {
                    let v = median(
                        session,
                        "file.read",
                        &[("method", m), ("size", s.as_str()), ("cache", cache)],
                    );
                    (*m, v)
                })
                .collect();
            let list: Vec<String> = times
                .iter()
                .map(|(m, v)| format!("{m} {}", show(v)))
                .collect();
            let won = fastest(&times);
            writeln!(
                out,
                "{:>6} B {cache}: {}; fastest today: {won}",
                size,
                list.join(", ")
            )?;
        }
        let (paper, reading) = READ_WINNERS[i];
        writeln!(out, "  1999 fastest: {paper} ({reading})")?;
    }
    Ok(())
}

/// The fastest method, with those within [`TIE`] of it, or "-" when none was
/// measured.
fn fastest(times: &[(&str, Result<f64, String>)]) -> String {
    let Some((best, ns)) = winner(times) else {
        return "-".into();
    };
    let close: Vec<&str> = times
        .iter()
        .filter(|(m, v)| *m != best && v.as_ref().is_ok_and(|v| *v <= ns * (1.0 + TIE)))
        .map(|(m, _)| *m)
        .collect();
    if close.is_empty() {
        best.to_string()
    } else {
        format!(
            "{best}, with {} within {:.0}%",
            close.join(", "),
            TIE * 100.0
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_winner_is_the_fastest_measured_method() {
        let times = [
            ("read", Ok(200.0)),
            ("mmap", Err("skipped".to_string())),
            ("stdio", Ok(20.0)),
        ];
        assert_eq!(winner(&times), Some(("stdio", 20.0)));
        assert_eq!(winner(&[("read", Err("x".into()))]), None);
    }

    #[test]
    fn methods_within_five_percent_of_the_fastest_share_the_place() {
        let times = [
            ("read", Ok(100.0)),
            ("pread", Ok(104.0)),
            ("stdio", Ok(106.0)),
            ("mmap", Err("skipped".to_string())),
        ];
        assert_eq!(fastest(&times), "read, with pread within 5%");
        assert_eq!(fastest(&times[2..]), "stdio");
        assert_eq!(fastest(&times[3..]), "-");
    }

    #[test]
    fn every_method_and_size_is_a_valid_file_read_parameter() {
        let b = crate::bench::find("file.read").expect("file.read");
        let spec = |n: &str| *b.params().iter().find(|s| s.name == n).expect("declared");
        for m in METHODS {
            spec("method").check("file.read", m).expect("method");
        }
        for s in READ_SIZES {
            spec("size")
                .check("file.read", &s.to_string())
                .expect("size");
        }
        let zero = crate::bench::find("mem.fault.zero").expect("mem.fault.zero");
        let prefault = zero.params().iter().find(|s| s.name == "prefault").unwrap();
        for p in ["none", "thread", "populate"] {
            prefault.check("mem.fault.zero", p).expect("prefault");
        }
    }
}
