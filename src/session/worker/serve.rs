//! The worker's side: `syscost __worker FD PARENT` reads a [`Start`], then measures its
//! one instance round by round as the parent asks, and exits after sending the result.
//! It dies with its parent (SIGTERM as the death signal, which stops a round at its
//! next batch so that everything the benchmark made is released) and exits when the
//! parent's end of the socket closes.

use super::wire::{self, Reply, Request, Start, Visited};
use crate::bench::{self, Params, RunContext};
use crate::error::BenchError;
use crate::harness::clock::Clock;
use crate::harness::{Expect, Profile, Sample, Settings};
use crate::session::slot::{Env, Slot};
use std::os::unix::net::UnixStream;
use std::process::ExitCode;

/// The hidden argument that makes the binary a worker.
pub const WORKER_ARG: &str = "__worker";

/// Runs the worker whose arguments (after [`WORKER_ARG`]) are `args`: the inherited
/// socket's descriptor and the parent's pid. Prints only a worker's own error, never
/// when it was stopped or let go (a Ctrl-C, its parent gone or done with it).
pub fn serve(args: &[String]) -> ExitCode {
    let Err(e) = serve_inner(args) else {
        return ExitCode::SUCCESS;
    };
    let parent = args.get(1).and_then(|p| p.parse::<i32>().ok());
    let ppid = rustix::process::getppid().map(|p| p.as_raw_nonzero().get());
    let parent_gone = parent.is_some_and(|p| ppid != Some(p));
    match Ending::of(&e, crate::os::interrupt::interrupted(), parent_gone) {
        Ending::Stopped => ExitCode::from(crate::os::interrupt::exit_code()),
        Ending::LetGo => ExitCode::SUCCESS,
        Ending::Failed => {
            eprintln!("syscost worker: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// How a worker whose conversation ended in an error ends. A Ctrl-C reaches the whole
/// process group, the worker too; the parent then stops, closes the worker's socket or
/// exits, and says what it has to say: an error on the socket after that is no news.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// The worker saw SIGINT, SIGTERM or SIGHUP itself: it exits quietly.
    Stopped,
    /// The parent is gone, or closed its end of the socket (a broken pipe, a reset
    /// connection): it let the worker go, as when its end closes between messages; it
    /// exits quietly.
    LetGo,
    /// The worker's own error (a benchmark it does not know, a message out of turn, a
    /// failed hand-over): printed, exit 2.
    Failed,
}

impl Ending {
    /// The ending of error `e`, as the worker sees its signals and its parent then.
    fn of(e: &anyhow::Error, interrupted: bool, parent_gone: bool) -> Ending {
        use std::io::ErrorKind::{BrokenPipe, ConnectionReset};
        let closed = e.chain().any(|c| {
            c.downcast_ref::<std::io::Error>()
                .is_some_and(|io| matches!(io.kind(), BrokenPipe | ConnectionReset))
        });
        if interrupted {
            Ending::Stopped
        } else if parent_gone || closed {
            Ending::LetGo
        } else {
            Ending::Failed
        }
    }
}

fn serve_inner(args: &[String]) -> anyhow::Result<()> {
    let Some(stream) = attach(args)? else {
        return Ok(());
    };
    let _guard = crate::os::interrupt::InterruptGuard::install()?;
    let mut link = stream.try_clone()?;
    let session = args.get(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    let (start, probe) = match wire::recv::<Request>(&mut link)? {
        Some(Request::Start(start)) => (start, false),
        Some(Request::Probe(start)) => (start, true),
        Some(Request::Pair(pair)) => {
            return crate::session::paired::serve(*pair, &mut link, (stream, session));
        }
        // The parent let it go before its start (the worker it was to succeed failed
        // to hand over).
        None => return Ok(()),
        Some(other) => anyhow::bail!("the parent sent {other:?} before the start"),
    };
    if let Some(cpu) = start.home {
        crate::bench::ctx::choose_home(cpu);
    }
    if probe {
        return probe_once(&start, &mut link);
    }
    let bench = bench::find(&start.bench)
        .ok_or_else(|| anyhow::anyhow!("no benchmark is named {}", start.bench))?;
    let params = params_of(bench, &start)?;
    let _home = home_pin(bench, &start.params)?;
    // The hardening an instance asks for (seccomp=, userns=, ...) goes on this worker
    // before its first round and lasts its life; it never reaches the parent.
    let _hardened = bench::harden::apply(&params, session);
    wire::send(
        &mut link,
        &Reply::Ready {
            protocol: wire::PROTOCOL,
            version: env!("CARGO_PKG_VERSION").to_string(),
        },
    )?;
    let clock = clock_of(&start)?;
    let mut settings = settings_of(&start);
    // Explaining keeps the batches' spans: a sample counts when it falls in one.
    settings.spans = start.spans || start.explain > 0;
    let mut recorder =
        (start.explain > 0).then(|| crate::explain::Recorder::new(start.explain));
    let context = context_of(&start, stream.try_clone()?);
    let mut slot = slot_for(bench, &params, &start, &stream)?;
    loop {
        match wire::recv::<Request>(&mut link)? {
            None => return Ok(()), // the parent is gone
            Some(Request::Visit {
                round,
                canary_ns,
                limit_ns,
                held,
            }) => {
                slot.held = held;
                let mut flagger = |s: &mut [Sample], e: Expect| flag(&stream, s, e);
                let mut env = Env {
                    clock: clock.as_ref(),
                    settings,
                    context: &context,
                    flag: if start.spans {
                        Some(&mut flagger)
                    } else {
                        None
                    },
                    explain: recorder.as_mut(),
                };
                let visited =
                    slot.visit(&mut env, round, start.begin, canary_ns, limit_ns);
                wire::send(&mut link, &visited_reply(&mut slot, visited))?;
            }
            Some(Request::Hand) => {
                let peak = crate::os::usage::peak_resident_kib();
                let sealed = wire::Sealed::seal(&slot.carry(peak)?)?;
                let bytes = sealed.0.len()?;
                wire::send(&mut link, &Reply::Handed { bytes })?;
                sealed.0.send(&link)?;
                return Ok(());
            }
            Some(Request::Finish {
                interrupted,
                stopped,
                held,
            }) => {
                slot.stopped = stopped;
                slot.held = held;
                slot.gather()?;
                let h = crate::harness::Harness::new(clock.as_ref(), settings);
                let result =
                    conclude(slot, &h, start.keep_samples, interrupted, recorder);
                return send_result(&mut link, result);
            }
            Some(other) => anyhow::bail!("unexpected request {other:?}"),
        }
    }
}

/// Takes the socket the parent left this worker, once it has named itself and made
/// sure it dies with the parent: None when the parent is already gone.
fn attach(args: &[String]) -> anyhow::Result<Option<UnixStream>> {
    use anyhow::Context;
    let (fd, parent, probe) = match args {
        [fd, parent] => (fd, parent, false),
        [fd, parent, word] if word == super::PROBE_WORD => (fd, parent, true),
        _ => {
            anyhow::bail!("usage: syscost {WORKER_ARG} FD PARENT_PID [probe] (internal)")
        }
    };
    let (fd, parent) = (fd.parse::<i32>()?, parent.parse::<i32>()?);
    // The exec named it after the binary again.
    let _ = rustix::thread::set_name(if probe {
        super::PROBE_NAME
    } else {
        super::WORKER_NAME
    });
    rustix::process::set_parent_process_death_signal(Some(
        rustix::process::Signal::TERM,
    ))?;
    if rustix::process::getppid().map(|p| p.as_raw_nonzero().get()) != Some(parent) {
        // The parent died before the death signal was set.
        return Ok(None);
    }
    let stream = UnixStream::from(
        crate::os::spawn::take_inherited(fd).context("the worker's socket")?,
    );
    Ok(Some(stream))
}

/// The benchmark's parameters as the parent sent them, checked against its own.
pub(in crate::session) fn params_of(
    bench: &'static dyn bench::Bench,
    start: &wire::Start,
) -> anyhow::Result<Params> {
    let params = start
        .params
        .iter()
        .map(|(n, v)| {
            let spec = bench::copies::spec(bench, n);
            spec.map(|s| (s.name, v.clone()))
                .ok_or_else(|| anyhow::anyhow!("{} takes no {n}", start.bench))
        })
        .collect::<anyhow::Result<_>>()?;
    Ok(Params(params))
}

/// The instance this worker measures: new, or resumed from what the previous worker
/// handed over (a memory file that follows on `stream`).
fn slot_for<'a>(
    bench: &'static dyn bench::Bench,
    params: &'a Params,
    start: &wire::Start,
    stream: &UnixStream,
) -> anyhow::Result<Slot<'a>> {
    use anyhow::Context;
    let mut slot = if start.resume {
        let sealed = wire::MemFile::recv(stream)
            .map(wire::Sealed)
            .context("receiving what the previous worker handed over")?;
        let carried = sealed
            .open()
            .context("what the previous worker handed over")?;
        let mut slot = Slot::resume(bench, params, carried);
        slot.earlier = Some(sealed); // read back after this worker's round
        slot
    } else {
        Slot::new(bench, params)
    };
    slot.max_rounds = start.max_rounds;
    Ok(slot)
}

/// The answer to a visit: whether the instance wants more rounds, the interval at its
/// last look, and its probes; an error ends the slot.
fn visited_reply(slot: &mut Slot<'_>, visited: Result<(), BenchError>) -> Reply {
    if let Err(e) = visited {
        if !matches!(e, BenchError::Interrupted) {
            slot.end(e.clone());
        }
        return Reply::Visited(Err(e));
    }
    Reply::Visited(Ok(Visited {
        open: slot.open(),
        ci: slot.c.last_ci,
        floor: slot.c.last_floor,
        // A hardened worker's probes read its hardening (a filter slows the getpid
        // probe), not the machine: they stay out of the machine's floors.
        probes: slot.probes.take().filter(|_| !bench::harden::active()),
    }))
}

/// The instance's result, concluded in this worker: its explanation, when it was
/// explained, and the processes that measured it with their highest peak.
fn conclude(
    slot: Slot<'_>,
    h: &crate::harness::Harness<'_>,
    keep_samples: bool,
    interrupted: bool,
    recorder: Option<crate::explain::Recorder>,
) -> Option<crate::results::BenchResult> {
    let (processes, earlier_peak) = (slot.processes(), slot.c.peak_kib);
    let mut r = slot.finish(h, keep_samples, interrupted)?;
    r.facts.extend(bench::harden::facts());
    if let Some(x) = recorder {
        let rounds: Vec<(u32, f64)> = r
            .measured
            .iter()
            .flat_map(|m| &m.rounds)
            .filter_map(|f| Some((f.round, f.median_ns?)))
            .collect();
        r.explain = x.conclude(&rounds);
    }
    if let Some(m) = r.measured.as_mut() {
        m.worker_peak_kib = crate::os::usage::peak_resident_kib().max(earlier_peak);
        m.worker_processes = processes;
    }
    Some(r)
}

/// Sends the result to the parent. Kept samples travel in a memory file of their own,
/// which the parent copies to its spill (or reads) without the frame, the decoded
/// result and its copy all holding them at once.
fn send_result(
    link: &mut UnixStream,
    mut result: Option<crate::results::BenchResult>,
) -> anyhow::Result<()> {
    let samples = result
        .as_mut()
        .and_then(|r| r.measured.as_mut())
        .and_then(|m| m.samples.take());
    let file = match &samples {
        Some(s) => {
            let f = wire::MemFile::create("syscost-samples")?;
            f.write_json(s)?;
            Some(f)
        }
        None => None,
    };
    drop(samples);
    wire::send(
        link,
        &Reply::Result {
            result: result.map(Box::new),
            samples: file.is_some(),
        },
    )?;
    if let Some(f) = file {
        f.send(link)?;
    }
    Ok(())
}

/// Pins the worker to the home CPU (the first CPU the run may use, or `--cpu`) for a
/// benchmark that does not place its tasks itself: the vCPUs of a VM can differ in
/// speed (on the 2-vCPU VM syscost is developed on, user-space code ran 30% slower on
/// one than on the other), so a worker left to the scheduler measured on either and its
/// rounds fell into two states. A benchmark with a `placement` parameter pins its
/// measuring thread itself (same-cpu and cross-cpu on the home CPU too, free nowhere),
/// and copies (`copies=N`, N > 1) pin each copy to a CPU of its own.
pub(in crate::session) fn home_pin(
    bench: &dyn bench::Bench,
    params: &[(String, String)],
) -> anyhow::Result<Option<crate::os::affinity::Pin>> {
    let places_itself = bench.params().iter().any(|s| s.name == "placement");
    let copies = params.iter().any(|(n, v)| n == "copies" && v != "1");
    if places_itself || copies {
        return Ok(None);
    }
    let home = crate::bench::ctx::home_cpu().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(Some(crate::os::affinity::Pin::to(home)?))
}

/// Reads the machine's probes once on the home CPU and answers them (see
/// [`Request::Probe`]).
fn probe_once(start: &Start, link: &mut UnixStream) -> anyhow::Result<()> {
    let home = crate::bench::ctx::home_cpu().map_err(|e| anyhow::anyhow!("{e}"))?;
    let _pin = crate::os::affinity::Pin::to(home)?;
    let clock = clock_of(start)?;
    let h = crate::harness::Harness::new(clock.as_ref(), settings_of(start));
    let read = || {
        h.probe(crate::harness::probe::Extra {
            cross: true,
            io: None,
        })
        .map_err(|e| anyhow::anyhow!("reading the probes: {e}"))
    };
    // Warmed as long as a standard round's warm-up and samples last, since a worker
    // reads them after its round: a process fresh from exec, on a CPU that may have
    // idled, reads slow for its first milliseconds.
    let warm = std::time::Instant::now();
    while warm.elapsed() < std::time::Duration::from_nanos(crate::method::PROBE_WARMUP_NS)
    {
        read()?;
    }
    let probes = read()?;
    wire::send(link, &Reply::Probed { probes })?;
    Ok(())
}

/// The parent's clock, as it calibrated it.
pub(in crate::session) fn clock_of(
    start: &Start,
) -> anyhow::Result<Box<dyn Clock + Send + Sync>> {
    let clock = crate::harness::clock::named(&start.clock, start.ns_per_tick);
    clock.ok_or_else(|| anyhow::anyhow!("no clock is named {}", start.clock))
}

/// The parent's harness settings (the batch included; spans as each use asks).
pub(in crate::session) fn settings_of(start: &Start) -> Settings {
    let mut settings = Settings::new(start.profile, start.granularity_ns.max(1.0))
        .with_resolution(start.resolution_ns);
    settings.batch = start.batch;
    settings
}

/// The instance's run context, whose scratch files come from the parent.
pub(in crate::session) fn context_of(start: &Start, stream: UnixStream) -> RunContext {
    let files = bench::file::Options {
        dir: start.dir.clone(),
        drop_caches: start.drop_caches,
    };
    let profile = start
        .context_profile
        .as_deref()
        .and_then(Profile::by_name)
        .map(|p| p.name);
    let dir = files.dir.clone().unwrap_or_else(std::env::temp_dir);
    let stream = std::cell::RefCell::new(stream);
    RunContext::new(files, profile).with_scratch_source(Box::new(move |len| {
        let mut s = stream.borrow_mut();
        let lost = |e: std::io::Error| {
            BenchError::Failed(format!("asking the parent for the scratch file: {e}"))
        };
        wire::send(&mut s, &Reply::NeedScratch { len }).map_err(lost)?;
        match wire::recv::<Request>(&mut s).map_err(lost)? {
            Some(Request::Scratch(Ok(()))) => {
                let fd = wire::recv_fd(&s).map_err(lost)?;
                Ok(bench::file::Scratch::adopt(fd.into(), len, dir.clone()))
            }
            Some(Request::Scratch(Err(e))) => Err(e),
            other => Err(BenchError::Failed(format!(
                "the parent answered {other:?} for the scratch file"
            ))),
        }
    }))
}

/// Asks the parent to flag a round's samples by the kernel's events.
fn flag(
    stream: &UnixStream,
    samples: &mut [Sample],
    expect: Expect,
) -> Result<(), BenchError> {
    let lost = |e: std::io::Error| {
        BenchError::Failed(format!("asking the parent for the kernel's events: {e}"))
    };
    let mut s = stream.try_clone().map_err(lost)?;
    let spans = samples.iter().map(|x| x.span).collect();
    let tid = crate::os::task::gettid() as u32;
    wire::send(&mut s, &Reply::Spans { tid, spans, expect }).map_err(lost)?;
    match wire::recv::<Request>(&mut s).map_err(lost)? {
        Some(Request::Flags(bits)) if bits.len() == samples.len() => {
            for (x, b) in samples.iter_mut().zip(bits) {
                x.kernel = b;
            }
            Ok(())
        }
        other => Err(BenchError::Failed(format!(
            "the parent answered {other:?} for the kernel's events"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::Ending;
    use std::io::{Error, ErrorKind};

    #[test]
    fn a_stopped_or_let_go_worker_is_quiet_and_its_own_error_is_said() {
        let pipe = || anyhow::Error::new(Error::from(ErrorKind::BrokenPipe));
        let reset = || {
            anyhow::Error::new(Error::from_raw_os_error(libc::ECONNRESET))
                .context("sending the result")
        };
        let own = || anyhow::anyhow!("no benchmark is named syscall.nope");
        let bad = || anyhow::Error::new(Error::new(ErrorKind::InvalidData, "a message"));
        // Ctrl-C reached the worker too: whatever failed after it, quiet.
        for e in [pipe(), reset(), own()] {
            assert_eq!(Ending::of(&e, true, false), Ending::Stopped);
        }
        // The parent closed its end or died: the socket's errors are no news.
        assert_eq!(Ending::of(&pipe(), false, false), Ending::LetGo);
        assert_eq!(Ending::of(&reset(), false, false), Ending::LetGo);
        assert_eq!(Ending::of(&own(), false, true), Ending::LetGo);
        // The worker's own errors, with the parent there and no signal, are said.
        assert_eq!(Ending::of(&own(), false, false), Ending::Failed);
        assert_eq!(Ending::of(&bad(), false, false), Ending::Failed);
    }
}
