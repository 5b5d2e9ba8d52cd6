//! The session's tests: a smoke session's rounds, hand-overs and failures.

use super::*;
use crate::harness::Profile;

#[test]
fn a_run_looks_at_its_interval_a_few_times_not_after_every_round() {
    let p = Profile::STANDARD;
    let looks = |p: Profile, cap: usize| -> Vec<usize> {
        (1..=cap).filter(|&r| p.looks_at(r, cap)).collect()
    };
    assert_eq!(looks(p, p.budget_max_rounds), [8, 12, 18, 27, 41, 62, 93]);
    assert_eq!(looks(p, p.max_rounds), [8]);
    assert_eq!(p.next_look(6, 18), 8);
    assert_eq!(p.next_look(9, 18), 12);
    assert_eq!(p.next_look(13, 18), 18);
    let q = Profile::QUICK;
    assert_eq!(looks(q, q.budget_max_rounds), [3, 5, 8]);
    // A longer profile never caps a row's rounds below the standard one.
    assert!(Profile::THOROUGH.budget_max_rounds >= p.budget_max_rounds);
}

/// Takes a few microseconds per operation; its after step fails.
const FAILS_AFTER: crate::bench::Simple = crate::bench::Simple {
    name: "test.fails_after",
    about: "",
    origin: "",
    params: &[],
    facts: crate::bench::facts::SYSCALL,
    prepare: |_| {
        Ok(crate::bench::Prepared::new(crate::bench::body(|| {
            std::hint::black_box(std::time::Instant::now());
            Ok(())
        }))
        .after(Box::new(|_, _| {
            Err(BenchError::Failed("the check found a bad count".into()))
        })))
    },
};

/// A session of the smoke profile on the monotonic clock.
fn smoke_session() -> Session {
    let opts = SessionOptions {
        clock: ClockChoice::Monotonic,
        ..SessionOptions::new(Profile::SMOKE, false)
    };
    Session::start(opts).unwrap()
}

#[test]
fn a_failure_after_the_measurement_keeps_the_measurement() {
    let session = smoke_session();
    let r = session
        .run(&FAILS_AFTER, &crate::bench::Params(vec![]))
        .unwrap();
    assert_eq!(r.status, Status::Failed);
    let why = r.reason.as_deref().unwrap_or("");
    assert!(
        why.contains("after the measurement") && why.contains("bad count"),
        "{why}"
    );
    let median = r.median_ns().expect("the measurement is kept");
    assert!(median > 0.0 && median < 1e6, "{median}");
}

/// Visits a slot in `session` as a worker does, in a run begun now: `(slot, round,
/// canary, limit)`.
fn visitor(session: &Session) -> impl Fn(&mut slot::Slot<'_>, u32, f64, f64) + '_ {
    let begin = session.clock.now();
    move |slot, round, canary, limit| {
        let mut env = slot::Env {
            clock: session.clock.as_ref(),
            settings: session.settings,
            context: &session.context,
            flag: None,
            explain: None,
        };
        slot.visit(&mut env, round, begin, canary, limit).unwrap()
    }
}

#[test]
fn a_slot_measures_every_round_it_is_given() {
    // The canary gate is the session's, before the visit (`Budget::holds_back`).
    let session = smoke_session();
    let params = crate::bench::Params(vec![]);
    let mut slot = slot::Slot::new(&FAILS_AFTER, &params);
    let visit = visitor(&session);
    visit(&mut slot, 0, 200.0, 100.0);
    visit(&mut slot, 1, 2e-3, 1e-3);
    assert_eq!(slot.c.rounds, 2);
    let h = session.harness();
    let m = slot.finish(&h, false, false).unwrap().measured.unwrap();
    assert_eq!(m.rounds.len(), 2);
}

#[test]
fn a_hand_over_crosses_a_socket_as_a_descriptor_and_resumes_whole() {
    use std::os::unix::net::UnixStream;
    use worker::wire::{self, Reply, Sealed};
    let session = smoke_session();
    let params = crate::bench::Params(vec![]);
    let mut slot = slot::Slot::new(&FAILS_AFTER, &params);
    visitor(&session)(&mut slot, 0, 70.0, 0.0);
    let (rounds, samples) = (slot.c.rounds, slot.c.samples.len());
    assert!(samples > 0);
    // The ticks the overhead subtracts: the first round's, and one later round's.
    let mut setup = slot.c.setup.clone().expect("set up in the first round");
    setup.1.ticks = 61;
    setup.1.later = vec![52];
    slot.c.setup = Some(setup.clone());
    let sealed = Sealed::seal(&slot.carry(Some(1234)).unwrap()).unwrap();
    let bytes = sealed.0.len().unwrap();
    assert!(bytes > 0);
    // The worker's side: the reply, then the descriptor; dropping its own copy
    // leaves the file to the descriptor in flight.
    let (mut worker, mut parent) = UnixStream::pair().unwrap();
    wire::send(&mut worker, &Reply::Handed { bytes }).unwrap();
    sealed.0.send(&worker).unwrap();
    drop(sealed);
    match wire::recv::<Reply>(&mut parent).unwrap() {
        Some(Reply::Handed { bytes: b }) => assert_eq!(b, bytes),
        other => panic!("{other:?}"),
    }
    let got = Sealed(wire::MemFile::recv(&parent).unwrap());
    assert_eq!(got.0.len().unwrap(), bytes);
    // The next worker reads it from the start, whatever the file's offset; the samples
    // stay in the file until it gathers them, after its own round.
    let mut resumed = slot::Slot::resume(&FAILS_AFTER, &params, got.open().unwrap());
    assert_eq!((resumed.c.rounds, resumed.c.samples.len()), (rounds, 0));
    resumed.earlier = Some(got);
    resumed.gather().unwrap();
    assert_eq!(resumed.c.samples.len(), samples);
    assert_eq!(resumed.processes(), 2, "the worker that handed over counts");
    assert_eq!(resumed.c.peak_kib, Some(1234));
    let (k, o) = resumed.c.setup.clone().expect("the set-up travels");
    assert_eq!((k, o.ticks, &o.later), (setup.0, 61, &vec![52]));
    assert_eq!(
        (o.ticks_for(0), o.ticks_for(1), o.ticks_for(2)),
        (61, 52, 61)
    );
    // A file that is not a whole hand-over is refused, not half read.
    let torn = wire::MemFile::create("torn").unwrap();
    torn.write_json(&"not a hand-over").unwrap();
    assert!(Sealed(torn).open().is_err());
}

#[test]
fn asking_for_a_tsc_the_cpu_does_not_keep_steady_is_a_usage_error() {
    let opts = SessionOptions {
        clock: ClockChoice::Tsc,
        ..SessionOptions::new(Profile::SMOKE, false)
    };
    let e = Session::start(opts).err().expect("refused");
    let usage = e.downcast_ref::<crate::error::UsageError>();
    assert!(usage.is_some(), "not a usage error: {e:#}");
    assert!(e.to_string().contains("--clock tsc"), "{e}");
}

#[test]
fn the_cross_probe_reads_a_round_trip_with_another_cpu_or_nothing() {
    use crate::harness::probe::{Extra, WorkKind};
    use crate::os::affinity;
    let cross_only = Extra {
        cross: true,
        io: None,
    };
    let session = smoke_session();
    let h = session.harness();
    // Unpinned, there is no home to cross from: only the other probes are read.
    let cpus = affinity::allowed_cpus().unwrap();
    if cpus.len() > 1 {
        let p = h.probe(cross_only).unwrap();
        assert!(p[WorkKind::Cross.index()].is_nan(), "{p:?}");
    }
    let _pin = affinity::Pin::to(cpus[0]).unwrap();
    let p = h.probe(cross_only).unwrap();
    let cross = p[WorkKind::Cross.index()];
    if affinity::process_cpus().len() > 1 {
        // A wake-up on another CPU and back: more than a system call, less than a
        // millisecond (a sanity range, not a speed).
        assert!(cross > 0.0 && cross < 1e6, "{p:?}");
    } else {
        assert!(cross.is_nan(), "one CPU: nothing to cross to, {p:?}");
    }
    assert!(p[..3].iter().all(|x| x.is_finite() && *x > 0.0), "{p:?}");
    // Not asked for, neither it nor the io probe is read.
    let p = h.probe(Extra::default()).unwrap();
    assert!(p[WorkKind::Cross.index()].is_nan() && p[WorkKind::Io.index()].is_nan());
}

#[test]
fn the_io_probe_reads_a_cold_page_or_nothing_and_leaves_no_file() {
    use crate::harness::probe::{Extra, WorkKind};
    let session = smoke_session();
    let h = session.harness();
    let dir = tempfile::tempdir().unwrap();
    let extra = Extra {
        cross: false,
        io: Some(dir.path()),
    };
    let p = h.probe(extra).unwrap();
    let io = p[WorkKind::Io.index()];
    match crate::os::file::fs_name(dir.path()) {
        // Pages in memory cannot be made cold.
        Some("tmpfs" | "ramfs") => assert!(io.is_nan(), "{p:?}"),
        // A read that waits for storage: more than a system call's worth, less than
        // a second (a sanity range, not a speed).
        _ => assert!(io > 100.0 && io < 1e9, "{p:?}"),
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // A directory it cannot write to fails the reading.
    let missing = dir.path().join("missing");
    let extra = Extra {
        cross: false,
        io: Some(&missing),
    };
    assert!(h.probe(extra).is_err());
}

#[test]
fn a_free_placement_is_split_once_its_rounds_saw_one_cpu_and_several() {
    use super::slot::{split, RoundPlace};
    let at = |round: u32, cpus: &[u32]| RoundPlace {
        round,
        cpus: cpus.to_vec(),
        migrations: 0,
    };
    assert!(!split(&[]));
    assert!(!split(&[at(0, &[0]), at(1, &[1]), at(2, &[0])]));
    assert!(!split(&[at(0, &[0, 1]), at(1, &[0, 1])]));
    // A task seen nowhere (it had exited) counts as one CPU, as the facts count it.
    assert!(split(&[at(0, &[]), at(1, &[0, 1])]));
    assert!(split(&[at(0, &[0]), at(1, &[0, 1]), at(2, &[1])]));
}

#[test]
fn the_canary_chooses_the_next_workers_home_among_the_first_cpus() {
    let cpus = crate::os::affinity::process_cpus();
    let with = |workers: Workers, cpu: Option<usize>| {
        let opts = SessionOptions {
            clock: ClockChoice::Monotonic,
            workers,
            cpu,
            ..SessionOptions::new(Profile::SMOKE, false)
        };
        Session::start(opts).unwrap()
    };
    let exec = || Workers::Exec {
        program: std::env::current_exe().unwrap(),
        rounds: 1,
    };
    let s = with(exec(), None);
    let v = s.canary().unwrap();
    // A sanity range, not a speed.
    assert!(v > 0.0 && v < 1e6, "{v}");
    let first = &cpus[..crate::method::HOMES.min(cpus.len())];
    let home = s.home.get().expect("a home is chosen");
    assert!(first.contains(&home), "{home} among {first:?}");
    // The next worker is told it.
    assert_eq!(
        s.start_for("syscall.getpid", &Params(vec![]), 0).home,
        Some(home)
    );
    drop(s);
    // `--cpu` keeps its CPU, and a session without workers has none to tell.
    let s = with(exec(), Some(cpus[0]));
    s.canary().unwrap();
    assert_eq!(s.home.get(), None);
    drop(s);
    let s = with(Workers::Inline, None);
    s.canary().unwrap();
    assert_eq!(s.home.get(), None);
}

#[test]
fn a_result_whose_rounds_met_a_slow_state_is_not_converged_and_says_so() {
    assert_eq!(slot::slow_rounds(&[140.0, 141.0, 139.0], 144.9), None);
    assert_eq!(slot::slow_rounds(&[190.0], 0.0), None, "no base known");
    assert_eq!(slot::slow_rounds(&[], 144.9), None);
    let pct = slot::slow_rounds(&[186.0, 187.0, 140.0], 144.9).unwrap();
    assert!((pct - 34.78).abs() < 0.01, "{pct}");
    let why = crate::harness::Why::SlowState { above_pct: pct }.detail();
    assert!(why.contains("35% above the base state"), "{why}");
    // In a slot: rounds kept in a slow state (the gate held back no more of them)
    // stand for it, and the verdict says so.
    let session = smoke_session();
    let params = crate::bench::Params(vec![]);
    let visit = visitor(&session);
    let h = session.harness();
    let measured =
        |s: slot::Slot<'_>| s.finish(&h, false, false).unwrap().measured.unwrap();
    let mut slow = slot::Slot::new(&FAILS_AFTER, &params);
    let mut round = 0;
    visit(&mut slow, round, 200.0, 100.0);
    while slow.c.rounds < 3 {
        round += 1;
        visit(&mut slow, round, 200.0, 0.0);
    }
    let m = measured(slow);
    assert!(!m.converged, "{}", m.stop_reason);
    assert!(m.stop_reason.contains("slow state"), "{}", m.stop_reason);
    // 200 ns against a base of 100 / 1.05.
    assert!((m.slow_state_pct.unwrap() - 110.0).abs() < 1e-9, "{m:?}");
    // Rounds kept at the base state say nothing of it (the limit far above what the
    // worker's own canary after each round reads).
    let mut base = slot::Slot::new(&FAILS_AFTER, &params);
    for round in 0..3 {
        visit(&mut base, round, 140.0, 1e6);
    }
    let m = measured(base);
    assert!(!m.stop_reason.contains("slow state"), "{}", m.stop_reason);
    assert_eq!(m.slow_state_pct, None);
    // Nor does a free placement's canary, which describes another CPU than its tasks'.
    let free = crate::bench::Params(vec![("placement", "free".into())]);
    let mut elsewhere = slot::Slot::new(&FAILS_AFTER, &free);
    for round in 0..3 {
        visit(&mut elsewhere, round, 200.0, 100.0);
    }
    let m = measured(elsewhere);
    assert_eq!(m.slow_state_pct, None, "{}", m.stop_reason);
}
