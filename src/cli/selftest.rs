//! `syscost selftest`: checks that the harness does not lie on this machine, with a
//! verdict that does not flip with the machine's state.
//!
//! Two operations of very different cost (getpid, a real system call, and
//! clock_gettime through the vDSO, which never enters the kernel) are measured by the
//! harness and by an independent plain loop timed with CLOCK_MONOTONIC, in rounds of
//! plain loop, harness, plain loop, so that each harness figure is compared with plain
//! loops run beside it in time. Then the subtraction is checked: the empty body's
//! residual is computed signed (nothing floored), and the overhead the harness
//! subtracts is compared with a plain timing of the very loop the benchmarks run.
//!
//! The verdict of each comparison ([`verdict`]) is one of three:
//! - **ok**: the harness is within [`TOLERANCE`] of the plain loops;
//! - **OFF**: it is further from them than both the tolerance and the plain loops' own
//!   spread: the harness is wrong, whatever the machine does;
//! - **UNSTEADY**: it is off by more than the tolerance but no more than the plain
//!   loops disagree among themselves, or too few rounds had plain loops that agreed:
//!   the machine, not the harness, is in question.
//!
//! Exit codes: 0 every check ok; 1 any check OFF; 3 none OFF but the machine too
//! unsteady to tell (run again on a quiet machine, or with `--cpu`).

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

/// Rounds of plain loop, harness, plain loop per operation.
pub const ROUNDS: usize = 11;
/// Calls in each plain loop.
pub const PLAIN_CALLS: u64 = 500_000;
/// How far the harness may be from the plain loops: 3%, the canary's threshold and the
/// quick profile's CI target with room for the two loops' different shapes.
pub const TOLERANCE: f64 = 0.03;
/// A round decides only if its two plain loops agree within this (the machine held
/// one speed through it).
pub const STABLE: f64 = 0.03;
/// Rounds with agreeing plain loops needed for a verdict other than unsteady.
pub const MIN_STABLE: usize = 3;
/// Plain loops spread over all rounds by more than this mean the machine is too
/// unsteady to vouch for the harness at [`TOLERANCE`] (twice it: a steady machine's
/// loops stay within a few percent).
pub const NOISE_MAX: f64 = 0.06;
/// The empty body's signed residual may be at most this fraction of the subtracted
/// overhead per operation, plus [`RESIDUAL_ABS_NS`].
pub const RESIDUAL_REL: f64 = 0.1;
/// The residual's absolute allowance, ns per operation (a clock step spread over a
/// batch is well below it).
pub const RESIDUAL_ABS_NS: f64 = 0.1;
/// The subtracted loop cost per iteration may differ from the plain timing of the same
/// loop by this fraction, plus [`LOOP_ABS_NS`].
pub const LOOP_REL: f64 = 0.25;
/// The loop comparison's absolute allowance, ns per iteration.
pub const LOOP_ABS_NS: f64 = 0.3;
/// Exit code when no check failed but the machine was too unsteady to decide.
pub const EXIT_UNSTEADY: u8 = 3;

fn monotonic_ns() -> u64 {
    sys::ts_ns(&sys::clock_gettime(libc::CLOCK_MONOTONIC))
}

/// ns per call of `calls` calls of `op`, timed as a whole (generic, so the call is
/// inlined into the loop as it is in the harness's body).
#[inline(never)]
fn plain_loop<F: Fn()>(op: F, calls: u64) -> f64 {
    let t0 = monotonic_ns();
    for _ in 0..calls {
        op();
    }
    (monotonic_ns() - t0) as f64 / calls as f64
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
            Op::Getpid => plain_loop(
                || {
                    black_box(sys::getpid());
                },
                PLAIN_CALLS,
            ),
            Op::ClockGettime => plain_loop(
                || {
                    black_box(sys::clock_gettime(libc::CLOCK_MONOTONIC));
                },
                PLAIN_CALLS,
            ),
        }
    }
}

/// One round: plain loop, harness, plain loop. The harness figure compared is the mean
/// of all its samples: like the plain loop's, a time average over every call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Round {
    /// The plain loop before, ns per call.
    pub before: f64,
    /// The harness's mean, ns per call.
    pub harness: f64,
    /// The plain loop after, ns per call.
    pub after: f64,
}

impl Round {
    fn stable(&self) -> bool {
        (self.before / self.after - 1.0).abs() <= STABLE
    }
    fn ratio(&self) -> f64 {
        self.harness / ((self.before + self.after) / 2.0)
    }
}

/// What a check concluded.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Within the tolerance.
    Ok(String),
    /// Off by more than the tolerance and the machine's own spread.
    Off(String),
    /// Cannot tell: the machine moved as much as the difference, or too few rounds held
    /// one speed.
    Unsteady(String),
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    (!v.is_empty()).then(|| v[v.len() / 2])
}

/// The verdict over rounds: the median, over every round, of the harness against the
/// mean of its two plain loops, judged against the tolerance and against the plain
/// loops' own spread over all rounds ((max − min) / median), which is a property of
/// the machine alone. Off: beyond both, with at least [`MIN_STABLE`] rounds whose plain
/// loops agreed. Unsteady: the plain loops spread more than [`NOISE_MAX`] and the
/// harness is within that spread, or too few rounds held one speed. Ok otherwise.
pub fn verdict(rounds: &[Round]) -> Verdict {
    let plain: Vec<f64> = rounds.iter().flat_map(|r| [r.before, r.after]).collect();
    let lo = plain.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = plain.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let noise = median(plain.clone()).map_or(f64::INFINITY, |m| (hi - lo) / m);
    let steady = rounds.iter().filter(|r| r.stable()).count();
    let Some(ratio) = median(rounds.iter().map(Round::ratio).collect()) else {
        return Verdict::Unsteady("no round was measured".into());
    };
    let dev = (ratio - 1.0).abs();
    let said = format!(
        "median ratio {ratio:.3} over {} rounds ({steady} steady); the plain loops spread {:.1}%",
        rounds.len(),
        noise * 100.0
    );
    if dev > TOLERANCE && dev > noise && steady >= MIN_STABLE {
        Verdict::Off(said)
    } else if noise > NOISE_MAX || steady < MIN_STABLE || dev > TOLERANCE {
        Verdict::Unsteady(said)
    } else {
        Verdict::Ok(said)
    }
}

/// The subtraction checks: the empty body's signed residual, and the overhead per
/// iteration against a plain timing of the same loop. Returns (ok, text).
fn subtraction(session: &Session) -> anyhow::Result<(bool, String)> {
    let h = session.harness();
    let m = h.measure(&mut EmptyLoop, &mut EmptyLoop, Plan::default())?;
    let k = m.batch as f64;
    let ns_per_tick = h.clock().ns_per_tick();
    let over = m.overhead.per_batch_ns;
    // Each sample against the overhead of its own round, signed.
    let signed: Vec<f64> = m
        .samples
        .iter()
        .map(|s| {
            (s.ticks as f64 - m.overhead.ticks_for(s.round) as f64) * ns_per_tick / k
        })
        .collect();
    let residual = median(signed).unwrap_or(f64::NAN);
    let per_op = m.overhead.per_op_ns;
    let res_ok = residual.abs() <= RESIDUAL_REL * per_op + RESIDUAL_ABS_NS;

    // The loop the harness subtracts, per iteration (its clock reads taken out),
    // against the benchmarks' own loop around an empty operation timed plainly.
    let read = session.clock_info().read_cost_ns;
    let subtracted = ((over - read) / k).max(0.0);
    let mut body = bench::body(|| {
        black_box(());
        Ok(())
    });
    let iters = 20_000_000;
    let plain = (0..5)
        .map(|_| {
            let t0 = monotonic_ns();
            body.run(iters)
                .map(|_| (monotonic_ns() - t0) as f64 / iters as f64)
        })
        .collect::<Result<Vec<f64>, _>>()?;
    let plain = median(plain).unwrap_or(f64::NAN);
    let loop_ok = (subtracted - plain).abs() <= LOOP_REL * plain + LOOP_ABS_NS;
    let text = format!(
        "empty body: signed residual {} per op after subtracting {} per op  {}\n\
         subtracted loop: {} per iteration (clock reads of {} per batch of {} taken out); \
         the benchmarks' loop timed plainly: {} per iteration  {}",
        fmt_ns(residual),
        fmt_ns(per_op),
        if res_ok { "ok" } else { "OFF" },
        fmt_ns(subtracted),
        fmt_ns(read),
        m.batch,
        fmt_ns(plain),
        if loop_ok { "ok" } else { "OFF" },
    );
    Ok((res_ok && loop_ok, text))
}

/// Runs `syscost selftest`.
pub fn selftest() -> anyhow::Result<ExitCode> {
    let facts = crate::store::host::collect(&[]);
    let _guard = InterruptGuard::install()?;
    // Rounds back to back: the comparison itself interleaves with the plain loops.
    let session = Session::start(SessionOptions {
        profile: Profile {
            span_ns: 0,
            ..Profile::QUICK
        },
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
    let (mut off, mut unsteady) = (false, false);
    for (label, bench, params, op) in cases {
        writeln!(out, "{label}")?;
        writeln!(
            out,
            "  {:>5} {:>12} {:>12} {:>12} {:>8}",
            "round", "plain before", "harness mean", "plain after", "ratio"
        )?;
        let mut rounds = Vec::with_capacity(ROUNDS);
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
            let round = Round {
                before,
                harness: m.raw.mean,
                after,
            };
            writeln!(
                out,
                "  {:>5} {:>12} {:>12} {:>12} {:>8.3}{}",
                i + 1,
                fmt_ns(round.before),
                fmt_ns(round.harness),
                fmt_ns(round.after),
                round.ratio(),
                if round.stable() {
                    ""
                } else {
                    "  (the machine changed speed in this round)"
                }
            )?;
            rounds.push(round);
        }
        let v = verdict(&rounds);
        let line = match &v {
            Verdict::Ok(s) => format!("ok: {s}"),
            Verdict::Off(s) => {
                off = true;
                format!("OFF: the harness disagrees with the plain loops: {s}")
            }
            Verdict::Unsteady(s) => {
                unsteady = true;
                format!(
                    "UNSTEADY: the machine moved too much to vouch for the harness: {s}"
                )
            }
        };
        writeln!(out, "  {line}\n")?;
    }

    let (sub_ok, text) = subtraction(&session)?;
    off |= !sub_ok;
    writeln!(out, "{text}\n")?;
    writeln!(
        out,
        "ratio = harness mean (all samples) / mean of the round's two plain loops; ok within \
         ±{:.0}% as the median over rounds whose plain loops agree within {:.0}%; OFF beyond \
         both that and the plain loops' own spread; UNSTEADY between",
        TOLERANCE * 100.0,
        STABLE * 100.0
    )?;
    let (word, code) = if off {
        ("OFF: the harness is wrong on this machine", 1)
    } else if unsteady {
        (
            "UNSTEADY: no check failed, but the machine moved too much to vouch for the harness",
            EXIT_UNSTEADY,
        )
    } else {
        ("ok", 0)
    };
    writeln!(out, "selftest: {word}")?;
    Ok(ExitCode::from(code))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rounds(before: f64, harness: f64, after: f64, n: usize) -> Vec<Round> {
        vec![
            Round {
                before,
                harness,
                after
            };
            n
        ]
    }

    #[test]
    fn agreeing_rounds_pass() {
        assert!(matches!(
            verdict(&rounds(100.0, 101.0, 100.5, 7)),
            Verdict::Ok(_)
        ));
    }

    #[test]
    fn a_harness_ten_percent_off_on_a_steady_machine_fails() {
        let v = verdict(&rounds(100.0, 110.0, 100.0, 7));
        assert!(matches!(v, Verdict::Off(_)), "{v:?}");
        let v = verdict(&rounds(100.0, 90.0, 100.5, 7));
        assert!(matches!(v, Verdict::Off(_)), "{v:?}");
    }

    #[test]
    fn plain_loops_that_disagree_make_it_unsteady() {
        // Each round's two plain loops differ by 10%: no round decides.
        let v = verdict(&rounds(100.0, 105.0, 110.0, 7));
        assert!(matches!(v, Verdict::Unsteady(_)), "{v:?}");
        // Steady rounds, but at speeds 10% apart, and the harness 5% off: the machine
        // moved more than the difference.
        let mut r = rounds(100.0, 105.0, 100.0, 4);
        r.extend(rounds(110.0, 115.5, 110.0, 3));
        let v = verdict(&r);
        assert!(matches!(v, Verdict::Unsteady(_)), "{v:?}");
        // The same machine with the harness 20% off still fails.
        let mut r = rounds(100.0, 120.0, 100.0, 4);
        r.extend(rounds(110.0, 132.0, 110.0, 3));
        let v = verdict(&r);
        assert!(matches!(v, Verdict::Off(_)), "{v:?}");
    }

    #[test]
    fn too_few_steady_rounds_are_unsteady_even_when_far_off() {
        let mut r = rounds(100.0, 140.0, 100.0, 2);
        r.extend(rounds(100.0, 140.0, 120.0, 5));
        assert!(matches!(verdict(&r), Verdict::Unsteady(_)));
    }

    #[test]
    fn a_machine_that_moves_is_unsteady_even_when_the_harness_agrees() {
        // Steady rounds at two speeds 20% apart, the harness right on each: the verdict
        // is about the machine, and stays the same whichever speed it was in.
        let mut r = rounds(100.0, 100.0, 100.0, 5);
        r.extend(rounds(120.0, 120.0, 120.0, 6));
        assert!(matches!(verdict(&r), Verdict::Unsteady(_)));
    }
}
