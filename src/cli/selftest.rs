//! `syscost selftest`: proves the harness does not lie on this machine. Two operations
//! of very different cost (getpid, a real system call, and clock_gettime through the
//! vDSO, which never enters the kernel) are measured by the harness and by an
//! independent plain loop timed with CLOCK_MONOTONIC — ten million calls in all, in
//! rounds of plain loop, harness, plain loop, so that each comparison is made while the
//! machine runs at one speed (this kind of VM switches between speeds every few tens of
//! milliseconds). Then the empty body is measured as a benchmark: its residual after
//! the overhead subtraction must be about zero.

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

/// Rounds of plain loop, harness, plain loop.
pub const ROUNDS: usize = 5;
/// Calls in each plain loop: 2 × ROUNDS × this is ten million calls in all.
pub const PLAIN_CALLS: u64 = 1_000_000;
/// The accepted range of harness / plain-loop ratios.
pub const RATIO_RANGE: (f64, f64) = (0.97, 1.03);
/// Plain loops before and after a round that differ by more than this mean the
/// machine changed speed during the round; such a round does not decide the verdict.
pub const STABLE: f64 = 0.03;

fn monotonic_ns() -> u64 {
    sys::ts_ns(&sys::clock_gettime(libc::CLOCK_MONOTONIC))
}

/// ns per call of `PLAIN_CALLS` calls of `op`, timed as a whole (generic, so the call
/// is inlined into the loop as it is in the harness's body).
#[inline(never)]
fn plain_loop<F: Fn()>(op: F) -> f64 {
    let t0 = monotonic_ns();
    for _ in 0..PLAIN_CALLS {
        op();
    }
    (monotonic_ns() - t0) as f64 / PLAIN_CALLS as f64
}

/// The operations compared.
#[derive(Clone, Copy)]
enum Op {
    Getpid,
    ClockGettime,
}

impl Op {
    fn plain_loop(self) -> f64 {
        match self {
            Op::Getpid => plain_loop(|| {
                black_box(sys::getpid());
            }),
            Op::ClockGettime => plain_loop(|| {
                black_box(sys::clock_gettime(libc::CLOCK_MONOTONIC));
            }),
        }
    }
}

/// One round: plain loop, harness, plain loop. The harness figure compared is the mean
/// of all its samples: like the plain loop's, a time average over every call. (Its
/// median, the headline, picks the most common speed when the machine switches between
/// speeds, so on such a machine it sits below a time average; both are printed.)
struct Round {
    before: f64,
    harness: f64,
    median: f64,
    after: f64,
}

impl Round {
    fn stable(&self) -> bool {
        (self.before / self.after - 1.0).abs() <= STABLE
    }
    fn ratio(&self) -> f64 {
        self.harness / ((self.before + self.after) / 2.0)
    }
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    (!v.is_empty()).then(|| v[v.len() / 2])
}

/// Runs `syscost selftest`.
pub fn selftest() -> anyhow::Result<ExitCode> {
    let facts = crate::store::host::collect(&[]);
    let _guard = InterruptGuard::install()?;
    let session = Session::start(SessionOptions {
        profile: Profile::QUICK,
        clock: ClockChoice::Auto,
        invariant_tsc: facts.invariant_tsc,
        cpu: None,
        load: 0,
        keep_samples: false,
    })?;
    let mut out = std::io::stdout().lock();
    let info = session.clock_info();
    writeln!(out, "harness clock: {} ({})", info.name, info.why)?;
    writeln!(
        out,
        "{ROUNDS} rounds of: plain loop of {PLAIN_CALLS} calls timed with CLOCK_MONOTONIC, \
         the harness (quick profile), the plain loop again\n"
    )?;

    let vdso = Params(vec![("via", "vdso".to_string())]);
    let find = |n: &str| bench::find(n).expect("the catalogue has it");
    let cases: [(&str, &dyn bench::Bench, Params, Op); 2] = [
        (
            "getpid (system call)",
            find("syscall.getpid"),
            Params::default(),
            Op::Getpid,
        ),
        (
            "clock_gettime (vDSO)",
            find("syscall.clock_gettime"),
            vdso,
            Op::ClockGettime,
        ),
    ];
    let mut all_ok = true;
    for (label, bench, params, op) in cases {
        writeln!(out, "{label}")?;
        writeln!(
            out,
            "  {:>5} {:>12} {:>12} {:>12} {:>12} {:>8}",
            "round", "plain before", "harness mean", "plain after", "(median)", "ratio"
        )?;
        let mut rounds = Vec::with_capacity(ROUNDS);
        let mut overhead = None;
        for i in 0..ROUNDS {
            let before = op.plain_loop();
            let r = session.run(bench, &params)?;
            let after = op.plain_loop();
            let m = r.measured.ok_or_else(|| {
                anyhow::anyhow!(
                    "{label}: the harness produced no result: {}",
                    r.reason.unwrap_or_default()
                )
            })?;
            overhead = Some((m.overhead, m.batch));
            let round = Round {
                before,
                harness: m.raw.mean,
                median: m.median_ns,
                after,
            };
            writeln!(
                out,
                "  {:>5} {:>12} {:>12} {:>12} {:>12} {:>8.3}{}",
                i + 1,
                fmt_ns(round.before),
                fmt_ns(round.harness),
                fmt_ns(round.after),
                fmt_ns(round.median),
                round.ratio(),
                if round.stable() {
                    ""
                } else {
                    "  (the machine changed speed in this round)"
                }
            )?;
            rounds.push(round);
        }
        let stable: Vec<f64> = rounds
            .iter()
            .filter(|r| r.stable())
            .map(Round::ratio)
            .collect();
        let verdict = match median(stable.clone()) {
            Some(ratio) if (RATIO_RANGE.0..=RATIO_RANGE.1).contains(&ratio) => {
                format!(
                    "ok: median ratio {ratio:.3} over {} stable rounds",
                    stable.len()
                )
            }
            Some(ratio) => {
                all_ok = false;
                format!(
                    "OUT OF RANGE: median ratio {ratio:.3} over {} stable rounds",
                    stable.len()
                )
            }
            None => {
                all_ok = false;
                "INCONCLUSIVE: the machine changed speed in every round".to_string()
            }
        };
        writeln!(out, "  {verdict}")?;
        if let Some((o, k)) = overhead {
            writeln!(
                out,
                "  overhead subtracted: {} per op ({} per batch of {k})\n",
                fmt_ns(o.per_op_ns),
                fmt_ns(o.per_batch_ns)
            )?;
        }
    }

    let m = session
        .harness()
        .measure(&mut EmptyLoop, &mut EmptyLoop, Plan::default())?;
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
        "ratio = harness mean (all samples) / mean of the round's two plain loops; accepted {}–{}, as the \
         median over rounds whose plain loops agree within {:.0}%",
        RATIO_RANGE.0,
        RATIO_RANGE.1,
        STABLE * 100.0
    )?;
    Ok(if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
