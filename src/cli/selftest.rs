//! `syscost selftest`: proves the harness does not lie on this machine. Two operations
//! of very different cost (getpid, a real system call, and clock_gettime through the
//! vDSO, which never enters the kernel) are measured by the harness and by an
//! independent plain loop of ten million calls timed with CLOCK_MONOTONIC, before and
//! after; then the empty body is measured as a benchmark, whose residual after the
//! overhead subtraction must be about zero.

use crate::bench::{self, Params};
use crate::harness::clock::ClockChoice;
use crate::harness::{EmptyLoop, Plan, Profile};
use crate::report::model::fmt_ns;
use crate::runner::interrupt::InterruptGuard;
use crate::runner::sys;
use crate::session::{Session, SessionOptions};
use std::hint::black_box;
use std::io::Write;
use std::process::ExitCode;

/// Calls in each plain loop.
pub const PLAIN_CALLS: u64 = 10_000_000;
/// The accepted range of harness / plain-loop ratios.
pub const RATIO_RANGE: (f64, f64) = (0.97, 1.03);

fn monotonic_ns() -> u64 {
    sys::ts_ns(&sys::clock_gettime(libc::CLOCK_MONOTONIC))
}

/// ns per call of `PLAIN_CALLS` calls of `op`, timed as a whole.
fn plain_loop(mut op: impl FnMut()) -> f64 {
    let t0 = monotonic_ns();
    for _ in 0..PLAIN_CALLS {
        op();
    }
    (monotonic_ns() - t0) as f64 / PLAIN_CALLS as f64
}

/// Runs `syscost selftest`.
pub fn selftest() -> anyhow::Result<ExitCode> {
    let facts = crate::store::host::collect(&[]);
    let _guard = InterruptGuard::install()?;
    let session = Session::start(SessionOptions {
        profile: Profile::STANDARD,
        clock: ClockChoice::Auto,
        invariant_tsc: facts.invariant_tsc,
        cpu: None,
        load: 0,
        keep_samples: false,
    })?;
    let mut out = std::io::stdout().lock();
    let info = session.clock_info();
    writeln!(out, "harness clock: {} ({})", info.name, info.why)?;
    writeln!(out, "plain loops: {PLAIN_CALLS} calls each, timed with CLOCK_MONOTONIC\n")?;
    writeln!(
        out,
        "{:<28} {:>12} {:>12} {:>12} {:>8}  verdict",
        "operation", "plain before", "harness", "plain after", "ratio"
    )?;

    let vdso = Params(vec![("via", "vdso".to_string())]);
    let find = |n: &str| bench::find(n).expect("the catalogue has it");
    let cases: [(&str, &dyn bench::Bench, Params, fn()); 2] = [
        ("getpid (system call)", find("syscall.getpid"), Params::default(), || {
            black_box(sys::getpid());
        }),
        ("clock_gettime (vDSO)", find("syscall.clock_gettime"), vdso, || {
            black_box(sys::clock_gettime(libc::CLOCK_MONOTONIC));
        }),
    ];
    let mut all_ok = true;
    for (label, bench, params, op) in cases {
        let before = plain_loop(op);
        let r = session.run(bench, &params)?;
        let after = plain_loop(op);
        let harness = r.median_ns().ok_or_else(|| {
            anyhow::anyhow!("{label}: the harness produced no result: {}", r.reason.unwrap_or_default())
        })?;
        let plain = (before + after) / 2.0;
        let ratio = harness / plain;
        let ok = (RATIO_RANGE.0..=RATIO_RANGE.1).contains(&ratio);
        all_ok &= ok;
        writeln!(
            out,
            "{label:<28} {:>12} {:>12} {:>12} {ratio:>8.3}  {}",
            fmt_ns(before),
            fmt_ns(harness),
            fmt_ns(after),
            if ok { "ok" } else { "OUT OF RANGE" }
        )?;
        if let Some(m) = &r.measured {
            writeln!(
                out,
                "{:<28} overhead subtracted: {} per op ({} per batch of {})",
                "",
                fmt_ns(m.overhead.per_op_ns),
                fmt_ns(m.overhead.per_batch_ns),
                m.batch
            )?;
            if (before / after - 1.0).abs() > 0.03 {
                writeln!(out, "{:<28} the plain loops differ by more than 3%: the machine changed speed", "")?;
            }
        }
    }

    let m = session.harness().measure(&mut EmptyLoop, &mut EmptyLoop, Plan::default())?;
    let residual = m.analysis.headline().map(|s| s.median).unwrap_or(f64::NAN);
    let floored = m.analysis.counts.floored;
    let per_op = m.overhead.per_op_ns;
    let ok = residual.abs() <= per_op.max(0.5) * 0.1 + 0.05;
    all_ok &= ok;
    writeln!(
        out,
        "\nempty body: residual {} per op after subtracting {} per op \
         ({floored} of {} samples below the overhead, floored at 0)  {}",
        fmt_ns(residual),
        fmt_ns(per_op),
        m.analysis.counts.total,
        if ok { "ok" } else { "TOO LARGE" }
    )?;
    writeln!(
        out,
        "ratio = harness median / mean of the two plain loops; accepted {}–{}",
        RATIO_RANGE.0, RATIO_RANGE.1
    )?;
    Ok(if all_ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
