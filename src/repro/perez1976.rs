//! `syscost repro perez1976`: the 1976 memo's Figures 2, 3, 4 and 6 beside this machine.

use super::perez1976_data::{Row, FIG2_EVENT, FIG3, FIG4, FIG6, PER_ARG_US};
use super::Options;
use crate::os::interrupt::{interrupted, InterruptGuard};
use crate::results::fmt_ns;
use crate::session::Session;
use crate::stats::fit::linear_fit;
use std::io::Write;
use std::process::ExitCode;

/// What stands today for a call of Figure 4.
pub enum Today {
    /// A benchmark with parameter values; `multi_user` measures it under background load.
    Bench {
        /// The benchmark.
        name: &'static str,
        /// Parameter values that differ from its defaults.
        params: &'static [(&'static str, &'static str)],
        /// Measured with one spinning process per CPU.
        multi_user: bool,
    },
    /// Not measured, and why.
    NotMeasured(&'static str),
}

const fn b(name: &'static str) -> Today {
    Today::Bench {
        name,
        params: &[],
        multi_user: false,
    }
}

/// The modern equivalent of each Figure 4 call.
pub fn today(call: &str) -> Today {
    match call {
        "alarm" => b("syscall.alarm"),
        "csw" => {
            Today::NotMeasured("the console switch register has no modern counterpart")
        }
        "dup" => b("syscall.dup_close"),
        "ggid" => b("syscall.getgid"),
        "gpid" => b("syscall.getpid"),
        "guid" => b("syscall.getuid"),
        "gtty(s)" => b("syscall.tcgets"),
        "gtty(m)" => Today::Bench {
            name: "syscall.tcgets",
            params: &[],
            multi_user: true,
        },
        "kill" => b("syscall.kill"),
        "nice" => b("syscall.setpriority"),
        "time" => Today::Bench {
            name: "syscall.time",
            params: &[("via", "syscall")],
            multi_user: false,
        },
        "times" => b("syscall.times"),
        "sig" => b("syscall.sigaction"),
        "stme" => Today::NotMeasured("it would change the system clock"),
        "sgid" => b("syscall.setgid"),
        "suid" => b("syscall.setuid"),
        _ => Today::NotMeasured("no equivalent chosen"),
    }
}

fn med(r: &Row, f: fn(&Row) -> Option<super::perez1976_data::Stat>) -> String {
    f(r).map(|s| s.med.to_string())
        .unwrap_or_else(|| "-".into())
}

/// Runs the reproduction and prints it.
pub fn run(args: &Options) -> anyhow::Result<ExitCode> {
    let facts = crate::host::collect(&[]);
    let _guard = InterruptGuard::install()?;
    let session = super::session(args, facts.invariant_tsc, 0)?;
    let cpus = facts.cpus_online.max(1);
    let mut out = crate::report::stdout();
    writeln!(
        out,
        "Perez & Raleigh, \"UNIX System Call Measurements\", Bell Laboratories, 1976\n\
         PDP-11 medians in µs (no floating point, Fig. 4) beside today's medians on this machine \
         ({})\n",
        super::machine(&facts, &session, args)
    )?;
    figure4(&mut out, &session, args, facts.invariant_tsc, cpus)?;
    figure3(&mut out, &session)?;
    figure2(&mut out, &session)?;

    // Figure 6: the subroutine call.
    let call = super::median(&session, "call.empty", &[])
        .map(fmt_ns)
        .unwrap_or_else(|e| e);
    writeln!(
        out,
        "\nFigure 6, subroutine call: {} / {} / {} µs then; call.empty {call} now",
        FIG6[0].med, FIG6[1].med, FIG6[2].med
    )?;
    writeln!(
        out,
        "\n×11/40, ×11/70: how many times faster this machine is than the PDP-11 for that call."
    )?;
    Ok(super::exit_code())
}

/// Figure 4: each call's PDP-11 medians beside today's; the multi-user rows run under a load of one spinner per CPU.
fn figure4(
    out: &mut dyn Write,
    session: &Session,
    args: &Options,
    invariant_tsc: bool,
    cpus: usize,
) -> anyhow::Result<()> {
    writeln!(
        out,
        "{:<8} {:<26} {:>6} {:>6} {:>6} {:>11} {:>9} {:>9}",
        "call", "today", "11/40", "11/45", "11/70", "today", "×11/40", "×11/70"
    )?;
    for row in FIG4 {
        let (name, value) = match today(row.call) {
            Today::NotMeasured(why) => {
                writeln!(out, "{:<8} not measured: {why}", row.call)?;
                continue;
            }
            Today::Bench {
                name,
                params,
                multi_user,
            } => {
                let v = if multi_user {
                    let loaded = super::session(args, invariant_tsc, cpus)?;
                    super::median(&loaded, name, params)
                } else {
                    super::median(session, name, params)
                };
                let label = match (params.first(), multi_user) {
                    (Some((k, v)), _) => format!("{name} {k}={v}"),
                    (None, true) => format!("{name} (load {cpus})"),
                    (None, false) => name.to_string(),
                };
                (label, v)
            }
        };
        if interrupted() {
            break;
        }
        let speedup = |us: Option<u32>, ns: f64| match us {
            Some(us) if ns > 0.0 => format!("{:.0}", us as f64 * 1000.0 / ns),
            _ => "-".into(),
        };
        match value {
            Ok(ns) => writeln!(
                out,
                "{:<8} {:<26} {:>6} {:>6} {:>6} {:>11} {:>9} {:>9}",
                row.call,
                name,
                med(row, |r| r.m40),
                med(row, |r| r.m45),
                med(row, |r| r.m70),
                fmt_ns(ns),
                speedup(row.m40.map(|s| s.med), ns),
                speedup(row.m70.map(|s| s.med), ns)
            )?,
            Err(why) => writeln!(out, "{:<8} {:<26} {why}", row.call, name)?,
        }
    }
    Ok(())
}

/// Figure 3: the cost per argument, and a direct against an indirect call.
fn figure3(out: &mut dyn Write, session: &Session) -> std::io::Result<()> {
    // Figure 3: the argument count, and direct against indirect calls.
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    writeln!(out, "\nFigure 3 (µs; 11/45 and 11/70 corrected to no floating point) beside syscall.args:")?;
    for r in FIG3 {
        let n = r.args.to_string();
        let v = super::median(session, "syscall.args", &[("args", n.as_str())]);
        if let Ok(ns) = v {
            xs.push(r.args as f64);
            ys.push(ns);
        }
        writeln!(
            out,
            "{:<12} {:>6} {:>6} {:>6}   today args={}: {}",
            r.call,
            r.m40.med,
            r.m45_nofpp,
            r.m70_nofpp,
            r.args,
            v.map(fmt_ns).unwrap_or_else(|e| e)
        )?;
    }
    let slope = linear_fit(&xs, &ys)
        .map(|f| format!("{} per argument (r² {:.2})", fmt_ns(f.slope), f.r2))
        .unwrap_or_else(|| "-".into());
    writeln!(
        out,
        "per-argument increment: {} / {} / {} µs then; {slope} now",
        PER_ARG_US[0], PER_ARG_US[1], PER_ARG_US[2]
    )?;
    let direct = super::median(session, "syscall.getpid.raw", &[]);
    let indirect = super::median(session, "syscall.getpid.indirect", &[]);
    let diff = match (direct, indirect) {
        (Ok(d), Ok(i)) => format!(
            "{} (getpid via syscall() {} − raw instruction {})",
            fmt_ns(i - d),
            fmt_ns(i),
            fmt_ns(d)
        ),
        (Err(e), _) | (_, Err(e)) => e,
    };
    writeln!(
        out,
        "direct vs indirect (I(r0+1arg) − D(r0+0args)): {} / {} / {} µs then; {diff} now",
        FIG3[1].m40.med - FIG3[0].m40.med,
        FIG3[1].m45_nofpp - FIG3[0].m45_nofpp,
        FIG3[1].m70_nofpp - FIG3[0].m70_nofpp
    )?;
    Ok(())
}

/// Figure 2: the trace's own event call, the correction applied to every interval.
fn figure2(out: &mut dyn Write, session: &Session) -> std::io::Result<()> {
    // Figure 2: the trace's own event call, the correction for every interval.
    let event = super::median(session, "trace.event", &[]);
    writeln!(
        out,
        "\nFigure 2, the event call (µs, system / user, no floating point), the trace's correction:"
    )?;
    for m in FIG2_EVENT {
        writeln!(
            out,
            "  {:<6} {:>5} / {:>5}{}",
            m.machine,
            m.nofpp.0,
            m.nofpp.1,
            m.fpp
                .map(|(s, u)| format!("   (with floating point {s} / {u})"))
                .unwrap_or_default()
        )?;
    }
    match event {
        Ok(ns) => writeln!(
            out,
            "  today  trace.event {} per user event, recorded into a per-thread ring without a \
             system call ({:.0}× the 11/70's user-program event); the kernel's events come from \
             its tracepoints",
            fmt_ns(ns),
            FIG2_EVENT[2].nofpp.1 as f64 * 1000.0 / ns
        )?,
        Err(why) => writeln!(out, "  today  trace.event: {why}")?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_figure4_call_maps_to_a_catalogue_benchmark_or_a_reason() {
        for r in FIG4 {
            match today(r.call) {
                Today::Bench { name, params, .. } => {
                    let b = crate::bench::find(name).unwrap_or_else(|| panic!("{name}"));
                    for (k, v) in params {
                        let spec =
                            b.params().iter().find(|s| s.name == *k).expect("declared");
                        spec.check(name, v).expect("valid value");
                    }
                }
                Today::NotMeasured(why) => assert!(!why.is_empty()),
            }
        }
        assert!(
            matches!(today("stme"), Today::NotMeasured(w) if w.contains("system clock"))
        );
    }
}
