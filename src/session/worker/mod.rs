//! Each benchmark instance measured in a process of its own: the seam between the run
//! (its parent) and the measuring.
//!
//! The parent keeps the orchestration: the rounds and their shuffled order, the canary,
//! the pin and the background load, the kernel's events, the scratch files, the results.
//! A worker is the `syscost` binary started again with a hidden argument, for one
//! instance: it sets the benchmark up, measures one round when asked, keeps its
//! samples, concludes, and sends back its result. Its address space is the binary's
//! and its own instance's, the same whatever else the run selected, so a figure does
//! not depend on its neighbours (fork copies the page tables of the process that
//! forks; a process that has measured two hundred benchmarks is not the process a user
//! forks from).
//!
//! The conversation ([`wire`]): `Start`, then `Visit` per round (answered `Visited`,
//! possibly after the worker asked for a scratch file or for the kernel's verdict on its
//! samples), then `Finish` (answered with the result, its kept samples apart in a
//! memory file), or, once the worker has measured [`method::ROUNDS_PER_WORKER`] rounds and the
//! instance wants more, `Hand` (answered with what it gathered, in a memory file whose
//! descriptor the parent passes on unread with the next worker's `Start`). The bulk of
//! a benchmark (its samples) so never passes through the parent's memory.

mod serve;
pub mod wire;

pub(super) use serve::{clock_of, context_of, home_pin, params_of, settings_of};
pub use serve::{serve, WORKER_ARG};

use crate::bench::file::Scratch;
use crate::error::BenchError;
use crate::harness::probe::Probes;
use crate::harness::{Expect, Held, Sample, Span};
use crate::method;
use crate::os::spawn::{spawn_keeping, PreparedExec};
use crate::os::task::{describe_status, Child};
use crate::results::BenchResult;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wire::{Reply, Request, Start, Visited};

/// A worker's name (`comm`, as `ps` shows it).
pub const WORKER_NAME: &std::ffi::CStr = c"syscost-worker";

/// A probe process's name: it reads the machine's probes once and exits.
pub const PROBE_NAME: &std::ffi::CStr = c"syscost-probe";

/// The word after a probe process's arguments.
pub const PROBE_WORD: &str = "probe";

static SELF_EXEC: AtomicBool = AtomicBool::new(false);

/// Declares that this process's executable is the `syscost` binary, which serves
/// [`WORKER_ARG`]: sessions started from now on measure in worker processes. The
/// binary's `main` calls it; a library caller (a test) measures in its own process.
pub fn enable_self_exec() {
    SELF_EXEC.store(true, Ordering::SeqCst);
}

/// Where a session measures: in worker processes of this program, or here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Workers {
    /// Each instance in processes of its own, started from this program: a fresh one
    /// every `rounds` rounds (0: one for all its rounds).
    Exec {
        /// This program.
        program: PathBuf,
        /// The rounds a worker measures before it hands over to a fresh one.
        rounds: usize,
    },
    /// In the session's own process (a library caller, or `SYSCOST_WORKERS=inline` to
    /// compare).
    Inline,
}

/// [`method::ROUNDS_PER_WORKER`], or `SYSCOST_ROUNDS_PER_WORKER` when it is set to a number (a
/// value that is not one is reported and ignored).
fn rounds_per_worker() -> usize {
    match std::env::var("SYSCOST_ROUNDS_PER_WORKER") {
        Err(_) => method::ROUNDS_PER_WORKER,
        Ok(v) => v.trim().parse().unwrap_or_else(|_| {
            eprintln!(
                "warning: SYSCOST_ROUNDS_PER_WORKER={v:?} is not a number of rounds; \
                 using {}",
                method::ROUNDS_PER_WORKER
            );
            method::ROUNDS_PER_WORKER
        }),
    }
}

impl Workers {
    /// Worker processes when this process is the `syscost` binary (see
    /// [`enable_self_exec`]) and `SYSCOST_WORKERS` is not `inline`; else inline.
    pub fn default_for_this_process() -> Workers {
        if !SELF_EXEC.load(Ordering::SeqCst)
            || std::env::var_os("SYSCOST_WORKERS").is_some_and(|v| v == "inline")
        {
            return Workers::Inline;
        }
        let rounds = rounds_per_worker();
        match std::env::current_exe() {
            Ok(program) => Workers::Exec { program, rounds },
            Err(_) => Workers::Inline,
        }
    }
}

/// The kernel's verdict on samples of a thread.
pub(super) type ThreadFlagFn<'a> =
    dyn FnMut(u32, &mut [Sample], Expect) -> Result<(), BenchError> + 'a;

/// What the parent does for a worker in the middle of a round.
pub(super) struct Services<'a> {
    /// The scratch file of a length.
    pub scratch: &'a dyn Fn(u64) -> Result<Arc<Scratch>, BenchError>,
    /// The kernel's verdict on samples of a thread, when kernel events are recorded.
    pub flag: Option<&'a mut ThreadFlagFn<'a>>,
}

/// A running worker, seen from the parent. Dropping it closes the socket (the worker
/// then exits, releasing what it made) and reaps it, killing it after two seconds.
pub(super) struct Remote {
    stream: UnixStream,
    child: Option<Child>,
}

/// How long a worker may take to exit once asked.
const EXIT_GRACE: Duration = Duration::from_secs(2);

impl Remote {
    /// Starts `program` as a worker, which then waits for its start
    /// ([`Remote::begin`]): a fresh worker starts while the one it succeeds packs what
    /// it gathered. As a probe process when `probe` (named [`PROBE_NAME`], with
    /// [`PROBE_WORD`] after its arguments, so that it is told from a worker at once).
    pub(super) fn spawn(program: &Path, probe: bool) -> Result<Remote, BenchError> {
        let failed = |what: &str, e: std::io::Error| {
            BenchError::Failed(format!(
                "starting the worker process ({}): {what}: {e}",
                program.display()
            ))
        };
        let (mine, theirs) = UnixStream::pair().map_err(|e| failed("socketpair", e))?;
        let fd = std::os::fd::AsRawFd::as_raw_fd(&theirs);
        let mut args = vec![
            program.as_os_str().to_owned(),
            WORKER_ARG.into(),
            fd.to_string().into(),
            std::process::id().to_string().into(),
        ];
        if probe {
            args.push(PROBE_WORD.into());
        }
        let exec = PreparedExec::new(program.as_os_str(), &args)
            .map_err(|e| failed("its arguments", e))?;
        let name = if probe { PROBE_NAME } else { WORKER_NAME };
        let child =
            spawn_keeping(&exec, theirs.as_fd(), name).map_err(|e| failed("fork", e))?;
        drop(theirs);
        Ok(Remote {
            stream: mine,
            child: Some(child),
        })
    }

    /// Sends a worker [`Remote::spawn`] started from `program` its start, with what
    /// the worker before it handed over when there is one (`start.resume` is set
    /// from it), and waits until it is ready.
    pub(super) fn begin(
        &mut self,
        program: &Path,
        mut start: Start,
        resume: Option<&wire::Sealed>,
    ) -> Result<(), BenchError> {
        start.resume = resume.is_some();
        let sent = wire::send(&mut self.stream, &Request::Start(Box::new(start)))
            .and_then(|()| resume.map_or(Ok(()), |s| s.0.send(&self.stream)));
        if let Err(e) = sent {
            return Err(self.died(&format!("sending it its benchmark: {e}")));
        }
        match self.recv()? {
            Reply::Ready { protocol, version }
                if protocol == wire::PROTOCOL && version == env!("CARGO_PKG_VERSION") =>
            {
                Ok(())
            }
            Reply::Ready { protocol, version } => Err(self.died(&format!(
                "{} is syscost {version} (worker protocol {protocol}), not the {} \
                 (protocol {}) that started the run: was it rebuilt meanwhile?",
                program.display(),
                env!("CARGO_PKG_VERSION"),
                wire::PROTOCOL
            ))),
            other => Err(self.died(&format!("it answered {other:?} to its start"))),
        }
    }

    /// One round (see [`Visited`]). A skip or a failure is the instance's end (its
    /// result says so); an interruption is returned.
    pub(super) fn visit(
        &mut self,
        round: u32,
        canary_ns: f64,
        limit_ns: f64,
        held: Held,
        services: &mut Services<'_>,
    ) -> Result<Visited, BenchError> {
        self.send(&Request::Visit {
            round,
            canary_ns,
            limit_ns,
            held,
        })?;
        loop {
            match self.recv()? {
                Reply::Visited(visited) => return visited,
                Reply::NeedScratch { len } => {
                    self.give_scratch((services.scratch)(len))?
                }
                Reply::Spans { tid, spans, expect } => {
                    let bits = flags(services, tid, &spans, expect)?;
                    self.send(&Request::Flags(bits))?;
                }
                Reply::Result { .. }
                | Reply::Ready { .. }
                | Reply::Handed { .. }
                | Reply::Paired(_)
                | Reply::Probed { .. } => {
                    return Err(self.died("it answered out of turn"))
                }
            }
        }
    }

    /// Asks for what the instance has gathered, for the next worker, and reaps this
    /// one.
    pub(super) fn hand(mut self) -> Result<wire::Sealed, BenchError> {
        self.send(&Request::Hand)?;
        let carried = match self.recv()? {
            Reply::Handed { .. } => wire::MemFile::recv(&self.stream)
                .map(wire::Sealed)
                .map_err(|e| {
                self.died(&format!("receiving what it handed over: {e}"))
            })?,
            other => return Err(self.died(&format!("it answered {other:?}"))),
        };
        self.reap();
        Ok(carried)
    }

    /// Whether the worker is still there (not reaped after it stopped answering).
    pub(super) fn alive(&self) -> bool {
        self.child.is_some()
    }

    /// Starts `program` as a worker that reads the machine's probes once on the home
    /// CPU, with the clock `start` describes, and reaps it (see [`Request::Probe`]).
    pub(super) fn probe(program: &Path, start: Start) -> Result<Probes, BenchError> {
        let mut r = Remote::spawn(program, true)?;
        r.send(&Request::Probe(Box::new(start)))?;
        let probes = match r.recv()? {
            Reply::Probed { probes } => probes,
            other => return Err(r.died(&format!("it answered {other:?} to a probe"))),
        };
        r.reap();
        Ok(probes)
    }

    /// Starts `program` as a worker that measures one paired round (see
    /// [`Request::Pair`]) and reaps it: the round's pairs. A scratch file the worker
    /// asks for comes from `scratch`, as a visit's does.
    pub(super) fn pair(
        program: &Path,
        pair: wire::PairStart,
        scratch: &dyn Fn(u64) -> Result<Arc<Scratch>, BenchError>,
    ) -> Result<Vec<(f64, f64)>, BenchError> {
        let mut r = Remote::spawn(program, false)?;
        r.send(&Request::Pair(Box::new(pair)))?;
        let answer = loop {
            match r.recv()? {
                Reply::Paired(pairs) => break pairs,
                Reply::NeedScratch { len } => r.give_scratch(scratch(len))?,
                other => return Err(r.died(&format!("it answered {other:?} to a pair"))),
            }
        };
        r.reap();
        answer
    }

    /// Answers the worker's request for a scratch file: the file's descriptor, or why
    /// there is none.
    fn give_scratch(
        &mut self,
        got: Result<Arc<Scratch>, BenchError>,
    ) -> Result<(), BenchError> {
        match got {
            Ok(s) => {
                self.send(&Request::Scratch(Ok(())))?;
                wire::send_fd(&self.stream, s.file().as_fd())
                    .map_err(|e| self.died(&format!("sending the file: {e}")))
            }
            Err(e) => self.send(&Request::Scratch(Err(e))),
        }
    }

    /// Asks for the result, with its kept samples apart when it kept them, and reaps
    /// the worker.
    pub(super) fn finish(
        mut self,
        interrupted: bool,
        stopped: Option<crate::harness::Stop>,
        held: Held,
    ) -> Result<(Option<BenchResult>, Option<wire::MemFile>), BenchError> {
        self.send(&Request::Finish {
            interrupted,
            stopped,
            held,
        })?;
        let result = match self.recv()? {
            Reply::Result { result, samples } => {
                let file = if samples {
                    Some(wire::MemFile::recv(&self.stream).map_err(|e| {
                        self.died(&format!("receiving the result's samples: {e}"))
                    })?)
                } else {
                    None
                };
                (result.map(|b| *b), file)
            }
            other => return Err(self.died(&format!("it answered {other:?}"))),
        };
        self.reap();
        Ok(result)
    }

    /// Reaps the worker, killing it after [`EXIT_GRACE`], if it is still there.
    fn reap(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.reap_by(Instant::now() + EXIT_GRACE);
        }
    }

    fn send(&mut self, r: &Request) -> Result<(), BenchError> {
        wire::send(&mut self.stream, r).map_err(|e| self.died(&e.to_string()))
    }

    fn recv(&mut self) -> Result<Reply, BenchError> {
        match wire::recv::<Reply>(&mut self.stream) {
            Ok(Some(r)) => Ok(r),
            Ok(None) => Err(self.died("it closed its socket")),
            Err(e) => Err(self.died(&e.to_string())),
        }
    }

    /// The worker stopped answering: reaps it and says how it ended.
    fn died(&mut self, what: &str) -> BenchError {
        let how = match self.child.take() {
            Some(mut c) => match c.reap_by(Instant::now() + EXIT_GRACE) {
                Ok((st, false)) => describe_status(st),
                Ok((_, true)) => "killed after it stopped answering".to_string(),
                Err(e) => format!("not reaped: {e}"),
            },
            None => "already reaped".to_string(),
        };
        BenchError::Failed(format!("the worker process failed ({what}; {how})"))
    }
}

impl Drop for Remote {
    fn drop(&mut self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
        self.reap();
    }
}

/// The kernel's verdict on spans a worker sent.
fn flags(
    services: &mut Services<'_>,
    tid: u32,
    spans: &[Option<Span>],
    expect: Expect,
) -> Result<Vec<u16>, BenchError> {
    let mut samples: Vec<Sample> = spans
        .iter()
        .map(|&span| Sample {
            at_ns: 0.0,
            ticks: 0,
            usage: Default::default(),
            round: 0,
            span,
            kernel: 0,
        })
        .collect();
    if let Some(f) = services.flag.as_mut() {
        f(tid, &mut samples, expect)?;
    }
    Ok(samples.iter().map(|s| s.kernel).collect())
}
