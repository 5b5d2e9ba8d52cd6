//! `syscost selftest`: checks that the harness does not lie on this machine, with a
//! verdict that does not flip with the machine's state.
//!
//! Every check is a comparison in many short rounds of *reference, harness,
//! reference*, so that each harness figure is compared with references taken a few
//! milliseconds before and after it, whatever the machine did between rounds. A plain
//! loop, the reference of the first three checks, is timed with CLOCK_MONOTONIC in
//! chunks of tens of microseconds, and its figure is the median chunk.
//! - Two operations of very different cost (getpid, a real system call, and
//!   clock_gettime through the vDSO, which never enters the kernel): the harness's
//!   headline figure against a plain loop of the same call, net of the same plain loop
//!   around nothing.
//! - The loop the harness subtracts ([`EmptyLoop`] at the benchmark's batch size, a
//!   clock read taken out) against a plain timing of the very loop the benchmarks run
//!   ([`bench::body`] around an empty operation): a baseline that is not the
//!   benchmarks' loop shows here.
//! - The empty body's residual: that same benchmarks' loop around nothing measured by
//!   the harness, its median batch minus the overhead subtracted from it, signed
//!   (nothing floored), judged against the overhead measured before and after it.
//!
//! Each check's verdict is [`verdict`], a pure function of its rounds: a round counts
//! only when its two references agree within the check's tolerance (the machine held
//! one speed through it), and the median over those rounds of harness / reference is
//! judged against the tolerance widened by how much those adjacent references
//! themselves disagree. It is one of:
//! - **ok**: within that allowance;
//! - **OFF**: beyond it, with the median's whole 95% interval beyond it too: the
//!   harness is wrong, whatever the machine does;
//! - **UNSTEADY**: fewer than [`MIN_STEADY`] rounds held one speed, or the median is
//!   beyond the allowance but its interval is not: the machine, not the harness, is in
//!   question.
//!
//! Exit codes: 0 every check ok; 1 any check OFF; 3 ([`EXIT_UNSTEADY`]) none OFF but
//! the machine too unsteady to tell (run again on a quieter machine, or with fewer
//! other tasks).

use crate::bench::{self, Params};
use crate::error::BenchError;
use crate::harness::{EmptyLoop, Harness, Plan, Profile, Settings};
use crate::os::interrupt::InterruptGuard;
use crate::os::sys;
use crate::results::fmt_ns;
use crate::session::{Session, SessionOptions};
use crate::stats;
use std::hint::black_box;
use std::io::Write;
use std::process::ExitCode;

/// How far the harness's figure may be from the plain loops, relative: 3%, the gap at
/// which the harness itself tells two of the machine's states apart, and wider than
/// what remains of the two loops' different shapes once each has taken out its own
/// empty loop (a fraction of a cycle per call, under 2% of the cheaper operation).
pub const TOLERANCE: f64 = 0.03;
/// How far the subtracted loop may be from the plain timing of the benchmarks' loop,
/// relative to it: half of its cost, under one cycle per iteration. An error that size
/// biased every figure by at most 1.5% of the cheapest benchmark (clock_gettime through
/// the vDSO) where it was measured; a baseline that is a different loop costs a whole
/// cycle or more and shows (the loops' costs: docs/measurements/harness.md, "The
/// selftest's loops").
pub const LOOP_TOLERANCE: f64 = 0.5;
/// How far the empty body's signed residual may be from zero, relative to the
/// overhead subtracted per operation (at most half a cycle). Tighter than
/// [`LOOP_TOLERANCE`] because body and baseline are timed
/// by the same harness and clock, a millisecond apart.
pub const RESIDUAL_TOLERANCE: f64 = 0.3;
/// Rounds whose plain loops agreed that a check collects before its verdict (fewer
/// if [`MAX_ROUNDS`] come first). Stopping depends on the plain loops only, never on
/// the harness's figures, so it does not bias the verdict.
pub const STEADY_WANTED: usize = 31;
/// Rounds at most per check (about 2 s of the getpid check's rounds).
pub const MAX_ROUNDS: usize = 120;
/// Rounds whose plain loops agreed needed for a verdict other than unsteady: with
/// nine, the median's 95% order-statistic interval leaves out the most extreme round
/// at each end (up to five it is their whole range), so one stray round decides
/// nothing.
pub const MIN_STEADY: usize = 9;
/// Exit code when no check failed but the machine was too unsteady to decide.
pub const EXIT_UNSTEADY: u8 = 3;

const MS: u64 = 1_000_000;

/// The harness in the operation checks: the quick profile with two 2 ms rounds and a
/// 1 ms warm-up, back to back (no span), so that the plain loops around a harness
/// figure lie within about 10 ms of each other: the cost of clock_gettime can jump
/// between states a few times in 20 ms (docs/measurements/harness.md, "The selftest's
/// loops"), and the shorter the round, the fewer rounds such a jump spoils. How long a
/// round samples does not change what a sample measures.
const PROFILE: Profile = Profile {
    name: "selftest",
    warmup_ns: MS,
    round_warmup_ns: MS / 4,
    round_ns: 2 * MS,
    min_rounds: 2,
    max_rounds: 2,
    span_ns: 0,
    ..Profile::QUICK
};

/// The harness in the subtraction checks: two 1 ms rounds, so that the overhead is
/// measured before and after the first round's samples.
const LOOP_PROFILE: Profile = Profile {
    name: "selftest-loop",
    warmup_ns: MS,
    round_warmup_ns: 0,
    round_ns: MS,
    ..PROFILE
};

/// A plain loop is timed in this many chunks of tens of microseconds each (a few
/// milliseconds in all), and its figure is the median chunk: a burst of another task
/// or of a hypervisor (which can take the CPU for tenths of a millisecond at a time)
/// spoils a few chunks, not the figure, as the harness's median is robust to a few
/// spoilt batches. Each operation's chunk is sized to a similar length from its cost
/// (docs/measurements/harness.md, "The selftest's loops").
const CHUNKS: usize = 21;
/// getpid calls per chunk.
const GETPID_CHUNK: u64 = 1_000;
/// clock_gettime calls per chunk.
const CLOCK_CHUNK: u64 = 4_000;
/// Empty iterations per chunk.
const EMPTY_CHUNK: u64 = 100_000;

fn monotonic_ns() -> u64 {
    sys::ts_ns(&sys::clock_gettime(libc::CLOCK_MONOTONIC))
}

/// The median over [`CHUNKS`] chunks of `calls` calls of `op`, each timed as a whole
/// with CLOCK_MONOTONIC, in ns per call.
fn median_chunk(
    calls: u64,
    mut op: impl FnMut(u64) -> Result<(), BenchError>,
) -> anyhow::Result<f64> {
    let mut v = Vec::with_capacity(CHUNKS);
    for _ in 0..CHUNKS {
        let t0 = monotonic_ns();
        op(calls)?;
        v.push((monotonic_ns() - t0) as f64 / calls as f64);
    }
    stats::median(&v).ok_or_else(|| anyhow::anyhow!("the plain loop measured nothing"))
}

/// `calls` calls of `op` (generic, so the call is inlined into the loop as it is in the
/// harness's body).
#[inline(never)]
fn plain_loop<F: Fn()>(op: F, calls: u64) -> Result<(), BenchError> {
    for _ in 0..calls {
        op();
    }
    Ok(())
}

/// The operations compared.
#[derive(Clone, Copy)]
enum Op {
    Getpid,
    ClockGettime,
}

impl Op {
    /// ns per call in a plain loop (the median chunk), net of the same loop around
    /// nothing timed right after it: what the harness reports is net of its loop too.
    fn plain(self) -> anyhow::Result<f64> {
        let op = match self {
            Op::Getpid => median_chunk(GETPID_CHUNK, |n| {
                plain_loop(
                    || {
                        black_box(sys::getpid());
                    },
                    n,
                )
            })?,
            Op::ClockGettime => median_chunk(CLOCK_CHUNK, |n| {
                plain_loop(
                    || {
                        black_box(sys::clock_gettime(libc::CLOCK_MONOTONIC));
                    },
                    n,
                )
            })?,
        };
        let empty = median_chunk(EMPTY_CHUNK, |n| plain_loop(|| black_box(()), n))?;
        Ok(op - empty)
    }
}

/// One round: reference, harness, reference (a plain loop, or the overhead), in ns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Round {
    /// The reference before.
    pub before: f64,
    /// The harness.
    pub harness: f64,
    /// The reference after.
    pub after: f64,
}

impl Round {
    /// How much the two references disagree, relative.
    fn drift(&self) -> f64 {
        (self.before / self.after - 1.0).abs()
    }
    /// The harness against the mean of the two references.
    fn ratio(&self) -> f64 {
        self.harness / ((self.before + self.after) / 2.0)
    }
    /// Whether every figure is a positive number and the references agree within
    /// `tolerance`.
    fn steady(&self, tolerance: f64) -> bool {
        let finite = [self.before, self.harness, self.after]
            .iter()
            .all(|x| x.is_finite() && *x > 0.0);
        finite && self.drift() <= tolerance
    }
}

/// What a check concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Within the allowance.
    Ok,
    /// Beyond it, with the whole interval: the harness is wrong.
    Off,
    /// Cannot tell: too few rounds held one speed, or the rounds scatter too much.
    Unsteady,
}

/// A check's verdict with the figures behind it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judgement {
    /// The verdict.
    pub kind: Kind,
    /// Rounds measured.
    pub rounds: usize,
    /// Rounds whose references agreed within the tolerance.
    pub steady: usize,
    /// The median over those rounds of harness / reference.
    pub ratio: f64,
    /// Its 95% order-statistic interval.
    pub ci: (f64, f64),
    /// The median over those rounds of how much the two references disagreed.
    pub drift: f64,
    /// The allowance: the tolerance plus that drift.
    pub allowed: f64,
}

/// Counts the rounds whose references agree within `tolerance`.
fn steady(rounds: &[Round], tolerance: f64) -> usize {
    rounds.iter().filter(|r| r.steady(tolerance)).count()
}

/// The verdict over rounds, with `tolerance` relative. A round is steady when its two
/// references agree within `tolerance`; only steady rounds are judged. With fewer than
/// [`MIN_STEADY`] of them, unsteady. Otherwise the median over them of harness /
/// reference is compared with 1 ± (`tolerance` + the median disagreement of their
/// references): ok within; off when the median's whole 95% order-statistic interval
/// ([`stats::median_ci`]) lies beyond it; unsteady when only the median does.
pub fn verdict(rounds: &[Round], tolerance: f64) -> Judgement {
    let kept: Vec<&Round> = rounds.iter().filter(|r| r.steady(tolerance)).collect();
    let mut ratios: Vec<f64> = kept.iter().map(|r| r.ratio()).collect();
    ratios.sort_by(f64::total_cmp);
    let drifts: Vec<f64> = kept.iter().map(|r| r.drift()).collect();
    let drift = stats::median(&drifts).unwrap_or(0.0);
    let allowed = tolerance + drift;
    let ratio = stats::median(&ratios).unwrap_or(f64::NAN);
    let ci = stats::median_ci(&ratios, 0.95);
    let kind = if kept.len() < MIN_STEADY {
        Kind::Unsteady
    } else if (ratio - 1.0).abs() <= allowed {
        Kind::Ok
    } else if ci.0 > 1.0 + allowed || ci.1 < 1.0 - allowed {
        Kind::Off
    } else {
        Kind::Unsteady
    };
    Judgement {
        kind,
        rounds: rounds.len(),
        steady: kept.len(),
        ratio,
        ci,
        drift,
        allowed,
    }
}

impl Judgement {
    /// The verdict and its figures, on one line; `refs` names the two measurements
    /// around the harness's ("plain loops").
    fn line(&self, refs: &str) -> String {
        let word = match self.kind {
            Kind::Ok => "ok",
            Kind::Off => "OFF: the harness disagrees",
            Kind::Unsteady if self.steady < MIN_STEADY => {
                "UNSTEADY: too few rounds held one speed"
            }
            Kind::Unsteady => "UNSTEADY: the rounds scatter too much to tell",
        };
        format!(
            "{word}: median {:.3} (95% CI {:.3}–{:.3}) over the {} of {} rounds whose \
             {refs} agreed within the tolerance; allowed 1 ± {:.3} (the tolerance + the \
             {refs}' own {:.1}%)",
            self.ratio,
            self.ci.0,
            self.ci.1,
            self.steady,
            self.rounds,
            self.allowed,
            self.drift * 100.0
        )
    }
}

/// The range of the references over all rounds, as text (the machine's states).
fn range(rounds: &[Round]) -> String {
    let plain = rounds.iter().flat_map(|r| [r.before, r.after]);
    let lo = plain.clone().fold(f64::INFINITY, f64::min);
    let hi = plain.fold(f64::NEG_INFINITY, f64::max);
    format!("{}–{}", fmt_ns(lo), fmt_ns(hi))
}

/// The harness's headline figure (the trimmed mean of its rounds' medians) against the plain
/// loop's median chunk of the same operation: both robust to a burst that spoils a
/// few batches or chunks.
fn operation(
    session: &Session,
    bench: &dyn bench::Bench,
    params: &Params,
    op: Op,
) -> anyhow::Result<Vec<Round>> {
    let mut rounds = Vec::with_capacity(MAX_ROUNDS);
    while rounds.len() < MAX_ROUNDS && steady(&rounds, TOLERANCE) < STEADY_WANTED {
        let before = op.plain()?;
        let r = session.run(bench, params)?;
        let after = op.plain()?;
        let m = r.measured.ok_or_else(|| {
            anyhow::anyhow!(
                "{}: the harness produced no result: {}",
                bench.name(),
                r.reason.unwrap_or_default()
            )
        })?;
        rounds.push(Round {
            before,
            harness: m.median_ns,
            after,
        });
    }
    Ok(rounds)
}

/// The subtraction checks' rounds, each around one measurement by the harness of the
/// benchmarks' loop around an empty operation (two short rounds, [`LOOP_PROFILE`]):
/// - the loop the harness subtracted per iteration (its empty loop's median batch, one
///   clock read taken out) against the same body timed plainly before and after;
/// - the body's median batch of the first round, per operation, against the overhead
///   measured before it (and subtracted from it) and after it: the ratio less 1 is the
///   signed residual a benchmark of an operation that costs nothing would report,
///   relative to the overhead.
///
/// Rounds are taken until both have [`STEADY_WANTED`] steady ones, or [`MAX_ROUNDS`].
fn subtraction(session: &Session) -> anyhow::Result<(Vec<Round>, Vec<Round>)> {
    let base = session.harness();
    let settings = Settings {
        profile: LOOP_PROFILE,
        ..*base.settings()
    };
    let h = Harness::new(base.clock(), settings);
    let ns_per_tick = h.clock().ns_per_tick();
    let read = session.clock_info().read_cost_ns;
    let mut body = bench::body(|| {
        black_box(());
        Ok(())
    });
    let (mut subtracted, mut residual) = (Vec::new(), Vec::new());
    while subtracted.len() < MAX_ROUNDS
        && (steady(&subtracted, LOOP_TOLERANCE) < STEADY_WANTED
            || steady(&residual, RESIDUAL_TOLERANCE) < STEADY_WANTED)
    {
        let before = median_chunk(EMPTY_CHUNK, |n| body.run(n))?;
        let m = h.measure(body.as_mut(), &mut EmptyLoop, Plan::default())?;
        let after = median_chunk(EMPTY_CHUNK, |n| body.run(n))?;
        let k = m.batch as f64;
        let per_op = |ticks: u64| ticks as f64 * ns_per_tick / k;
        let first: Vec<f64> = m
            .samples
            .iter()
            .filter(|s| s.round == 0)
            .map(|s| per_op(s.ticks))
            .collect();
        subtracted.push(Round {
            before,
            harness: (m.overhead.ticks_for(0) as f64 * ns_per_tick - read) / k,
            after,
        });
        residual.push(Round {
            before: per_op(m.overhead.ticks_for(0)),
            harness: stats::median(&first).unwrap_or(f64::NAN),
            after: per_op(m.overhead.ticks_for(1)),
        });
    }
    Ok((subtracted, residual))
}

/// The harness's figure against a plain loop's, for getpid and the vDSO clock read.
fn check_operations(out: &mut dyn Write, session: &Session) -> anyhow::Result<Vec<Kind>> {
    let vdso = Params(vec![("via", "vdso".to_string())]);
    let find = |n: &str| bench::find(n).expect("the catalogue has it");
    let cases: [(&str, &dyn bench::Bench, Params, Op); 2] = [
        (
            "getpid (system call)",
            find("syscall.getpid"),
            Params(vec![("via", "libc".to_string())]),
            Op::Getpid,
        ),
        (
            "clock_gettime (vDSO)",
            find("syscall.clock_gettime"),
            vdso,
            Op::ClockGettime,
        ),
    ];
    let mut kinds = Vec::new();
    for (label, bench, params, op) in cases {
        let r = operation(session, bench, &params, op)?;
        let j = verdict(&r, TOLERANCE);
        writeln!(
            out,
            "{label}: the harness's figure / the plain loop's, net of its empty loop \
             (plain {}), tolerance ±{:.0}%\n  {}\n",
            range(&r),
            TOLERANCE * 100.0,
            j.line("plain loops")
        )?;
        kinds.push(j.kind);
    }
    Ok(kinds)
}

/// The loop the harness subtracts against the benchmarks' loop timed plainly, and the
/// residual left when the harness measures an empty body.
fn check_loops(out: &mut dyn Write, session: &Session) -> anyhow::Result<Vec<Kind>> {
    let mut kinds = Vec::new();
    let (subtracted, residual) = subtraction(session)?;
    let j = verdict(&subtracted, LOOP_TOLERANCE);
    writeln!(
        out,
        "subtracted loop: the harness's empty loop per iteration (a clock read taken \
         out) / the benchmarks' loop timed plainly ({} per iteration), tolerance \
         ±{:.0}%\n  {}\n",
        range(&subtracted),
        LOOP_TOLERANCE * 100.0,
        j.line("plain loops")
    )?;
    kinds.push(j.kind);
    let j = verdict(&residual, RESIDUAL_TOLERANCE);
    let signed: Vec<f64> = residual.iter().map(|r| r.harness - r.before).collect();
    writeln!(
        out,
        "empty body: the benchmarks' loop around nothing measured by the harness / the \
         overhead it subtracts ({} per op): signed residual {:+.3} ns per op, tolerance \
         ±{:.0}%\n  {}\n",
        range(&residual),
        stats::median(&signed).unwrap_or(f64::NAN),
        RESIDUAL_TOLERANCE * 100.0,
        j.line("overheads")
    )?;
    kinds.push(j.kind);
    Ok(kinds)
}

/// The verdict of every check: off if any is off, else unsteady if any is, else ok;
/// with the exit code.
fn conclusion(kinds: &[Kind]) -> (&'static str, u8) {
    if kinds.contains(&Kind::Off) {
        ("OFF: the harness is wrong on this machine", 1)
    } else if kinds.contains(&Kind::Unsteady) {
        (
            "UNSTEADY: the machine is unsteady; no check failed, but it moved too \
             much to vouch for the harness",
            EXIT_UNSTEADY,
        )
    } else {
        ("ok", 0)
    }
}

/// Runs `syscost selftest`.
pub fn selftest() -> anyhow::Result<ExitCode> {
    let facts = crate::host::collect(&[]);
    let _guard = InterruptGuard::install()?;
    let session = Session::start(SessionOptions::new(PROFILE, facts.invariant_tsc))?;
    let mut out = crate::report::stdout();
    let info = session.clock_info();
    writeln!(out, "harness clock: {} ({})", info.name, info.why)?;
    writeln!(
        out,
        "each check: rounds of plain loop, harness, plain loop until {STEADY_WANTED} \
         rounds whose plain loops agree (or {MAX_ROUNDS} rounds); plain loops timed with \
         CLOCK_MONOTONIC, their figure the median of {CHUNKS} chunks\n"
    )?;

    let mut kinds = check_operations(&mut out, &session)?;
    kinds.extend(check_loops(&mut out, &session)?);
    let (word, code) = conclusion(&kinds);
    writeln!(out, "selftest: {word}")?;
    Ok(ExitCode::from(code))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` rounds with the harness at `off` × the plain loops, which are `gap` apart,
    /// around a machine speed that wanders by up to 20% from round to round.
    fn rounds(off: f64, gap: f64, n: usize) -> Vec<Round> {
        (0..n)
            .map(|i| {
                let speed = 100.0 * (1.0 + 0.2 * ((i * 7) % 10) as f64 / 10.0);
                let jitter = 1.0 + 0.004 * ((i * 3) % 5) as f64 - 0.008;
                Round {
                    before: speed,
                    harness: speed * (1.0 + gap / 2.0) * off * jitter,
                    after: speed * (1.0 + gap),
                }
            })
            .collect()
    }

    #[test]
    fn agreeing_rounds_pass_even_when_the_machine_moves_between_them() {
        let j = verdict(&rounds(1.0, 0.005, 15), TOLERANCE);
        assert_eq!(j.kind, Kind::Ok, "{j:?}");
        assert!((j.ratio - 1.0).abs() < 0.01, "{j:?}");
    }

    #[test]
    fn a_harness_ten_percent_off_on_a_steady_machine_fails() {
        for off in [1.1, 0.9, 1.05] {
            let j = verdict(&rounds(off, 0.005, 15), TOLERANCE);
            assert_eq!(j.kind, Kind::Off, "{off}: {j:?}");
        }
    }

    #[test]
    fn plain_loops_that_disagree_make_it_unsteady() {
        // Each round's two plain loops 10% apart: no round decides, even with the
        // harness far off.
        for off in [1.0, 1.3] {
            let j = verdict(&rounds(off, 0.1, 40), TOLERANCE);
            assert_eq!(j.kind, Kind::Unsteady, "{off}: {j:?}");
            assert_eq!(j.steady, 0);
        }
    }

    #[test]
    fn too_few_steady_rounds_are_unsteady() {
        let mut r = rounds(1.2, 0.0, MIN_STEADY - 1);
        r.extend(rounds(1.2, 0.1, 30));
        assert_eq!(verdict(&r, TOLERANCE).kind, Kind::Unsteady);
        r.extend(rounds(1.2, 0.0, 1));
        assert_eq!(verdict(&r, TOLERANCE).kind, Kind::Off);
    }

    #[test]
    fn a_median_beyond_the_allowance_with_an_interval_across_it_is_unsteady() {
        // Harness / plain 1.09 in eight rounds, 0.97 in seven: the median, 1.09, is
        // beyond 1 ± 3%, but its interval, 0.97–1.09, reaches back within it.
        let r: Vec<Round> = (0..15)
            .map(|i| Round {
                before: 100.0,
                harness: if i % 2 == 0 { 109.0 } else { 97.0 },
                after: 100.0,
            })
            .collect();
        let j = verdict(&r, TOLERANCE);
        assert_eq!(j.kind, Kind::Unsteady, "{j:?}");
    }

    #[test]
    fn the_allowance_widens_with_the_plain_loops_own_disagreement() {
        // Plain loops 2.5% apart in every round (steady at 3%), harness 4.5% off the
        // midpoint: within 3% + 2.5%.
        let j = verdict(&rounds(1.045, 0.025, 15), TOLERANCE);
        assert_eq!(j.kind, Kind::Ok, "{j:?}");
        assert!((j.allowed - 0.055).abs() < 0.001, "{j:?}");
    }

    #[test]
    fn nothing_measured_is_unsteady() {
        assert_eq!(verdict(&[], TOLERANCE).kind, Kind::Unsteady);
        let nan = Round {
            before: 1.0,
            harness: f64::NAN,
            after: 1.0,
        };
        assert_eq!(verdict(&[nan; 20], TOLERANCE).kind, Kind::Unsteady);
    }
}
