//! Paired alternatives (`syscost run … --reference NAME=VALUE`): an instance measured
//! against the reference value of its swept parameter, both sides in one worker
//! process per round, their batches in quartets A B B A ([`crate::harness::paired`]),
//! the rounds' median pair ratios combined as a row's round figures are
//! ([`crate::stats::paired`]). Each round is a fresh process, as a row's is, so a
//! process's state is one round's; within a round, the two sides meet the same
//! moments of the machine, so its drift cancels in their ratio.
//!
//! Where an alternative must live is decided by its parameters ([`home_of`]): the
//! measuring thread, a thread of its own (taking turns under a handshake), or, for
//! both sides, processes of their own forked by the round's worker.

use super::worker::{self, wire, Workers};
use super::Session;
use crate::bench::harden::Asked;
use crate::bench::{Bench, Params, RunContext};
use crate::error::BenchError;
use crate::harness::clock::Clock;
use crate::harness::paired::{quartets, Home, InProcess, InThread, Local};
use crate::harness::{Harness, Settings};
use crate::method;
use crate::results::Paired;
use crate::stats::paired::{combine, round, RoundPairs};
use std::os::unix::net::UnixStream;

/// Where the alternative `other` must live to be paired with `reference`: the
/// strictest either side's hardening asks for ([`crate::bench::harden::Asked`]). What a
/// namespace or a cgroup binds is a process's; a seccomp filter, the rseq
/// registration and the speculation controls are a thread's.
pub fn home_of(reference: &Params, other: &Params) -> Home {
    let (a, b) = (Asked::of(reference), Asked::of(other));
    let process = |x: &Asked| x.userns || x.cgroup.is_some();
    if process(&a) || process(&b) {
        Home::OwnProcess
    } else if a.any() || b.any() {
        Home::OwnThread
    } else {
        Home::Shared
    }
}

/// One paired round in this process: the pairs of quartets of `b` against `a`.
pub(crate) fn measure_round(
    bench: &dyn Bench,
    (a, b): (&Params, &Params),
    home: Home,
    clock: &(dyn Clock + Sync),
    settings: Settings,
    (cx, session): (&RunContext, u32),
) -> Result<Vec<(f64, f64)>, BenchError> {
    let p = settings.profile;
    let stays = |x: &Params| crate::bench::via::stays_in_user_space(bench, x);
    let mut settings = settings;
    settings.usage_per_round = stays(a) && stays(b);
    let h = Harness::new(clock, settings);
    let (ns, min, max) = (2 * p.round_ns, p.round_min_samples, p.round_max_samples);
    match home {
        Home::Shared => {
            let mut pa = bench.prepare(a, cx)?;
            let mut pb = bench.prepare(b, cx)?;
            let mut sa = Local::ready(&h, pa.body.as_mut(), pa.plan, p.warmup_ns)?;
            let mut sb = Local::ready(&h, pb.body.as_mut(), pb.plan, p.warmup_ns)?;
            quartets(&h, &mut sa, &mut sb, ns, min, max)
        }
        Home::OwnThread => std::thread::scope(|scope| {
            let (files, profile) = (cx.files().clone(), cx.profile());
            // B's thread first, so that nothing A sets up in this thread reaches it.
            let mut sb =
                InThread::start(scope, settings, p.warmup_ns, clock, move || {
                    crate::bench::harden::on_this_thread(b)?;
                    let pb = bench.prepare(b, &RunContext::new(files, profile))?;
                    Ok((pb.body, pb.plan))
                })?;
            // The reference's own hardening, if any, on this thread alone: B's thread
            // started before it, so it inherits none.
            crate::bench::harden::on_this_thread(a)?;
            let mut pa = bench.prepare(a, cx)?;
            let mut sa = Local::ready(&h, pa.body.as_mut(), pa.plan, p.warmup_ns)?;
            quartets(&h, &mut sa, &mut sb, ns, min, max)
        }),
        Home::OwnProcess => {
            // Each side in a process of its own, forked from this single-threaded one,
            // which puts on it what the side asks of a process (a namespace, a cgroup)
            // and holds that until the side ends.
            let side = |params: &Params| {
                let (files, profile) = (cx.files().clone(), cx.profile());
                let params = params.clone();
                move || {
                    let held = crate::bench::harden::apply(&params, session);
                    let prepared = crate::bench::harden::prepare(
                        bench,
                        &params,
                        &RunContext::new(files, profile),
                    )?;
                    let held: Box<dyn std::any::Any> = Box::new(held);
                    Ok((prepared.body, prepared.plan, held))
                }
            };
            let mut sa = InProcess::start(settings, p.warmup_ns, clock, side(a))?;
            let mut sb = InProcess::start(settings, p.warmup_ns, clock, side(b))?;
            quartets(&h, &mut sa, &mut sb, ns, min, max)
        }
    }
}

/// The worker's side of [`wire::Request::Pair`]: one round, answered, then exit.
pub(super) fn serve(
    pair: wire::PairStart,
    link: &mut UnixStream,
    (stream, session): (UnixStream, u32),
) -> anyhow::Result<()> {
    let start = &pair.start;
    if let Some(cpu) = start.home {
        crate::bench::ctx::choose_home(cpu);
    }
    let bench = crate::bench::find(&start.bench)
        .ok_or_else(|| anyhow::anyhow!("no benchmark is named {}", start.bench))?;
    let a = worker::params_of(bench, start)?;
    let other = wire::Start {
        params: pair.other.clone(),
        ..start.clone()
    };
    let b = worker::params_of(bench, &other)?;
    let _home = worker::home_pin(bench, &start.params)?;
    let clock = worker::clock_of(start)?;
    let cx = worker::context_of(start, stream);
    let measured = measure_round(
        bench,
        (&a, &b),
        pair.home,
        clock.as_ref(),
        worker::settings_of(start),
        (&cx, session),
    );
    let reply = wire::Reply::Paired(measured);
    wire::send(link, &reply)?;
    Ok(())
}

impl Session {
    /// Measures `other` against `reference` (two instances of `bench` that differ in
    /// the parameter named by `label`, `name=value` of the reference) in
    /// [`method::MAX_PAIR_ROUNDS`] paired rounds (the profile's `budget_max_rounds` when fewer,
    /// at least its `max_rounds`). No early stop: rounds taken within a second agreed
    /// more closely than runs did (ten runs of `ipc.pipe.self via=libc,raw`: rounds
    /// within ±0.03%, runs 0.8% apart), so the interval needs the rounds' time.
    pub fn pair(
        &self,
        bench: &'static dyn Bench,
        reference: &Params,
        other: &Params,
        label: &str,
    ) -> Result<Paired, BenchError> {
        let home = home_of(reference, other);
        let p = self.settings.profile;
        let cap = method::MAX_PAIR_ROUNDS
            .min(p.budget_max_rounds)
            .max(p.max_rounds);
        let mut rounds: Vec<RoundPairs> = Vec::new();
        for _ in 0..cap {
            if crate::os::interrupt::interrupted() {
                return Err(BenchError::Interrupted);
            }
            // Each round to the CPU whose canary reads fastest now, as a row's round
            // goes: a VM's vCPUs trade speeds, and a ratio of user-space work differs
            // between them, so rounds all on one CPU would say too little of a rerun.
            self.canary()?;
            let pairs = self.pair_round(bench, (reference, other), home)?;
            rounds.extend(round(&pairs));
        }
        let (ratio, diff) = combine(&rounds)
            .ok_or_else(|| BenchError::Failed("no paired round had a pair".into()))?;
        let mut refs: Vec<f64> = rounds.iter().map(|r| r.a_ns).collect();
        refs.sort_by(f64::total_cmp);
        Ok(Paired {
            reference: label.to_string(),
            ratio: ratio.center,
            ratio_low: ratio.ci_low,
            ratio_high: ratio.ci_high,
            diff_ns: diff.center,
            diff_low_ns: diff.ci_low,
            diff_high_ns: diff.ci_high,
            reference_ns: refs[refs.len() / 2],
            rounds: rounds.len(),
            pairs: rounds.iter().map(|r| r.pairs).sum(),
            round_ratios: rounds.iter().map(|r| r.ratio).collect(),
            sides: match home {
                Home::OwnThread => "threads",
                Home::OwnProcess => "processes",
                Home::Shared => "thread",
            }
            .to_string(),
        })
    }

    /// One paired round: in a fresh worker process, or here.
    fn pair_round(
        &self,
        bench: &'static dyn Bench,
        (a, b): (&Params, &Params),
        home: Home,
    ) -> Result<Vec<(f64, f64)>, BenchError> {
        match &self.opts.workers {
            Workers::Exec { program, .. } => {
                let begin = self.clock.now();
                let pair = wire::PairStart {
                    start: self.start_for(bench.name(), a, begin),
                    other: super::owned(b).collect(),
                    home,
                };
                worker::Remote::pair(program, pair, &|len| self.context.scratch(len))
            }
            Workers::Inline => measure_round(
                bench,
                (a, b),
                home,
                self.clock.as_ref(),
                self.settings,
                (&self.context, std::process::id()),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(v: &[(&'static str, &str)]) -> Params {
        Params(v.iter().map(|(n, v)| (*n, v.to_string())).collect())
    }

    #[test]
    fn a_side_lives_where_its_parameters_bind_it() {
        let off = params(&[("via", "raw"), ("seccomp", "0")]);
        assert_eq!(home_of(&off, &params(&[("via", "libc")])), Home::Shared);
        let on = params(&[("seccomp", "256")]);
        assert_eq!(home_of(&off, &on), Home::OwnThread);
        assert_eq!(home_of(&off, &params(&[("userns", "1")])), Home::OwnProcess);
        // rseq=on is glibc's own registration; off takes it away, on the thread.
        assert_eq!(home_of(&params(&[("rseq", "on")]), &off), Home::Shared);
        let rseq_off = params(&[("rseq", "off")]);
        assert_eq!(
            home_of(&params(&[("rseq", "on")]), &rseq_off),
            Home::OwnThread
        );
        let sibling = params(&[("cgroup", "sibling")]);
        assert_eq!(
            home_of(&params(&[("cgroup", "same")]), &sibling),
            Home::OwnProcess
        );
    }

    /// A session of `profile` measuring in this process on the monotonic clock.
    fn inline(profile: crate::harness::Profile) -> Session {
        let opts = super::super::SessionOptions {
            clock: crate::harness::clock::ClockChoice::Monotonic,
            workers: Workers::Inline,
            ..super::super::SessionOptions::new(profile, false)
        };
        Session::start(opts).unwrap()
    }

    #[test]
    fn an_operation_against_itself_reads_near_one_with_one_inside_its_interval() {
        let session = inline(crate::harness::Profile::QUICK);
        let bench = crate::bench::find("ipc.pipe.self").unwrap();
        let p = params(&[("share", "pipe-per-copy"), ("via", "libc")]);
        let got = session.pair(bench, &p, &p, "via=libc").unwrap();
        // A statistical sanity check, not a speed: identical sides give a ratio near
        // 1, and its interval holds 1 (it may miss 1 time in 20 by design; this range
        // is wider than that).
        assert!((0.8..1.25).contains(&got.ratio), "{got:?}");
        assert!(got.ratio_low < 1.05 && got.ratio_high > 0.95, "{got:?}");
        assert_eq!(got.rounds, got.round_ratios.len());
        assert_eq!(got.sides, "thread");
    }

    #[test]
    fn a_side_bound_to_its_thread_is_measured_from_a_thread_of_its_own() {
        let session = inline(crate::harness::Profile::SMOKE);
        let bench = crate::bench::find("ipc.pipe.self").unwrap();
        let p = params(&[("share", "pipe-per-copy"), ("via", "libc")]);
        let rounds: Vec<RoundPairs> = (0..3)
            .map(|_| {
                let pairs = session
                    .pair_round(bench, (&p, &p), Home::OwnThread)
                    .unwrap();
                round(&pairs).unwrap()
            })
            .collect();
        let (ratio, _) = combine(&rounds).unwrap();
        assert!((0.8..1.25).contains(&ratio.center), "{ratio:?}");
    }
}
