//! `syscost list`: every benchmark with its family, description, parameters and
//! defaults.

use crate::bench;
use crate::error::UsageError;
use std::io::Write;
use std::process::ExitCode;

/// Runs `syscost list`.
pub fn list(filters: &[String]) -> anyhow::Result<ExitCode> {
    let mut selected = bench::select(filters);
    if selected.is_empty() && !filters.is_empty() {
        let names: Vec<&str> =
            filters.iter().flat_map(|f| bench::peers::find(f)).collect();
        selected = bench::catalogue()
            .into_iter()
            .filter(|b| names.contains(&b.name()))
            .collect();
    }
    if selected.is_empty() {
        let hint = match filters {
            [one] => bench::suggest(one),
            _ => String::new(),
        };
        return Err(UsageError::new(format!(
            "no benchmark matches '{}'{hint}; see `syscost list`",
            filters.join("' or '")
        ))
        .into());
    }
    let mut out = crate::report::stdout();
    let mut family = "";
    for b in selected {
        let fam = b.name().split('.').next().unwrap_or("");
        if fam != family {
            writeln!(out, "{}{fam}", if family.is_empty() { "" } else { "\n" })?;
            family = fam;
        }
        writeln!(out, "  {:<28} {}", b.name(), b.about())?;
        for p in b.params() {
            writeln!(
                out,
                "  {:<28}   {}={}  ({}; {})",
                "",
                p.name,
                p.default,
                p.values(),
                p.about
            )?;
        }
        if !b.params().iter().any(|p| p.name == "via") {
            if let Some(line) = bench::via::fixed_line(b) {
                writeln!(out, "  {:<28}   entry: {line}", "")?;
            }
        }
        if let Some(why) = bench::copies::serial(b) {
            writeln!(out, "  {:<28}   copies: no ({why})", "")?;
        }
        if bench::named_only().iter().any(|o| o.name() == b.name()) {
            let how = "only when named (a run of the whole catalogue leaves it out)";
            writeln!(out, "  {:<28}   run: {how}", "")?;
        }
        if let Some(line) = bench::peers::like_line(b.name()) {
            writeln!(out, "  {:<28}   like: {line}", "")?;
        }
        if !b.origin().is_empty() {
            writeln!(out, "  {:<28}   from: {}", "", b.origin())?;
        }
    }
    writeln!(out, "\nEvery benchmark without 'copies: no' also takes:")?;
    for s in &bench::copies::SPECS {
        writeln!(
            out,
            "  {}={}  ({}; {})",
            s.name,
            s.default,
            s.values(),
            s.about
        )?;
    }
    hardening(&mut out)?;
    writeln!(
        out,
        "\nHow the timed calls enter the kernel ('via=' where there is a choice, \
         'entry:' where not):"
    )?;
    for path in bench::via::EntryPath::ALL {
        writeln!(out, "  {:<8} {}", path.word(), path.meaning())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The hardening parameters, once: what each measures and which benchmarks take it.
fn hardening(out: &mut impl Write) -> std::io::Result<()> {
    writeln!(
        out,
        "\nWhat hardening costs: put on the worker before it measures, never on the run \
         itself (docs/benchmarks.md#hardening):"
    )?;
    for s in &bench::harden::SPECS {
        let takes = match s.name {
            bench::harden::CGROUP => "ctx.pingpong, ipc.rtt, ipc.bw",
            bench::harden::RSEQ => "ctx.*, signal.*, ipc.*, svc.wake*",
            n if n.starts_with("seccomp") => "every benchmark but call.*",
            _ => "every benchmark",
        };
        writeln!(
            out,
            "  {}={}  ({}; {}) [{takes}]",
            s.name,
            s.default,
            s.values(),
            s.about
        )?;
    }
    writeln!(
        out,
        "  seccomp=N seccomp_kind=args runs the filter on every call (N-1 argument loads); \
         seccomp=1 seccomp_kind=nr is the cached verdict: seccomp's entry path alone"
    )
}
