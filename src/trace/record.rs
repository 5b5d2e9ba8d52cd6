//! `syscost trace record`: runs a command with tracing on and writes one trace file
//! holding the command's own events and the kernel's.
//!
//! The command finds its trace through the environment: `SYSCOST_TRACE` names a file in
//! a private temporary directory, which the `syscost-trace` library opens (a program
//! that never opens a trace simply records nothing). Meanwhile the kernel's events are
//! drained from their rings every few milliseconds into a second temporary file, so
//! memory stays bounded however long the command runs. When the command has ended, the
//! output is assembled — the command's chunks, then the kernel's, then what the record
//! knows (the command, its exit status, how the kernel's events were recorded or why
//! they could not be) — under a temporary name and renamed into place. The temporary
//! directory goes on every path, errors included.

use super::format::{self, ChunkKind, ChunkReader, KernelEvent, Lost, Meta};
use super::kernel::{KernelRecorder, KernelRequest};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The environment variables that tell a program where to write its trace and its ring
/// size per thread, bytes: the library's own.
pub use syscost_trace::recorder::{ENV_BUFFER, ENV_PATH};

/// How often the kernel's rings are drained while the command runs.
const DRAIN_EVERY: std::time::Duration = std::time::Duration::from_millis(20);

/// Kernel events written as chunks to a file while the command runs, with totals.
pub struct KernelSink {
    out: BufWriter<File>,
    /// Events written.
    pub events: u64,
    /// Events the kernel lost.
    pub lost: u64,
}

impl KernelSink {
    /// A sink writing chunks (no file header) to `path`.
    pub fn create(path: &Path) -> io::Result<KernelSink> {
        Ok(KernelSink {
            out: BufWriter::with_capacity(1 << 20, File::create(path)?),
            events: 0,
            lost: 0,
        })
    }

    /// Writes what a drain found: every CPU's events (in time order, as chunks of at
    /// most 64 Ki records), then every CPU's losses.
    pub fn drained(
        &mut self,
        events: &[(u32, Vec<KernelEvent>)],
        lost: &[(u32, Vec<Lost>)],
    ) -> io::Result<()> {
        for (cpu, events) in events {
            for part in events.chunks(1 << 16) {
                let (out, kind) = (&mut self.out, ChunkKind::Kernel);
                format::write_records(out, kind, *cpu, part, KernelEvent::put)?;
                self.events += part.len() as u64;
            }
        }
        for (cpu, lost) in lost.iter().filter(|(_, l)| !l.is_empty()) {
            self.lost += lost.iter().map(|l| l.count).sum::<u64>();
            let (out, kind) = (&mut self.out, ChunkKind::KernelLost);
            format::write_records(out, kind, *cpu, lost, Lost::put)?;
        }
        Ok(())
    }

    /// Flushes and closes the file.
    pub fn finish(mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Copies the chunks of a program's trace file into `out`, stopping at a chunk cut
/// short (a program killed mid-write). Returns whether it was cut short, or `None`
/// when the program wrote no trace at all.
pub fn copy_user_chunks<W: Write>(path: &Path, out: &mut W) -> io::Result<Option<bool>> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut reader = match ChunkReader::new(io::BufReader::with_capacity(1 << 20, file)) {
        Ok(r) => r,
        // A program killed before its header reached the disk left nothing usable.
        Err(format::FormatError::NotATrace) => return Ok(Some(true)),
        Err(e) => return Err(io::Error::other(e.to_string())),
    };
    let mut payload = Vec::new();
    loop {
        match reader.next_chunk(&mut payload) {
            Ok(Some(h)) => format::write_chunk(out, h.kind, h.stream, h.count, &payload)?,
            Ok(None) => return Ok(Some(reader.truncated())),
            Err(format::FormatError::Io(e)) => return Err(e),
            // A damaged chunk ends the copy like a cut one: what came before is good.
            Err(_) => return Ok(Some(true)),
        }
    }
}

/// Appends the raw chunk bytes of `path` (written by [`KernelSink`]) to `out`.
fn append_file<W: Write>(path: &Path, out: &mut W) -> io::Result<()> {
    let mut f = File::open(path)?;
    io::copy(&mut f, out)?;
    Ok(())
}

/// What one `trace record` did.
#[derive(Debug)]
pub struct Recorded {
    /// The command's exit status.
    pub status: crate::os::spawn::ExitStatus,
    /// Whether the command wrote a trace of its own.
    pub user_trace: bool,
    /// Whether its trace was cut short (killed mid-write).
    pub user_truncated: bool,
    /// Kernel events written.
    pub kernel_events: u64,
    /// Kernel events lost.
    pub kernel_lost: u64,
    /// Why the kernel's events (some or all) could not be recorded.
    pub kernel_unavailable: Option<String>,
}

/// The kernel side of a recording: drained on a thread of its own while the command
/// runs.
struct KernelThread {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<io::Result<(KernelRecorder, KernelSink)>>,
}

impl KernelThread {
    fn start(
        mut recorder: KernelRecorder,
        mut sink: KernelSink,
    ) -> io::Result<KernelThread> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("syscost-kdrain".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(DRAIN_EVERY);
                    let d = recorder.drain()?;
                    sink.drained(&d.events, &d.lost)?;
                }
                Ok((recorder, sink))
            })?;
        Ok(KernelThread { stop, handle })
    }

    fn finish(self) -> io::Result<(KernelRecorder, KernelSink)> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle
            .join()
            .map_err(|_| io::Error::other("the kernel event thread panicked"))?
    }
}

/// Runs `command` with tracing on and writes the trace to `output`.
///
/// `kernel` lists the kernel events to record (empty for none); when the kernel or the
/// privileges refuse them, the recording goes on without them and
/// [`Recorded::kernel_unavailable`] says why. `buffer` is the ring size per thread the
/// program should use, bytes.
pub fn record(
    command: &[std::ffi::OsString],
    output: &Path,
    kernel: &KernelRequest,
    buffer: Option<u64>,
    spawn_failed: &mut dyn FnMut(&io::Error),
) -> anyhow::Result<Option<Recorded>> {
    use crate::os::spawn::{self, PreparedExec};
    // Private (mode 0700) and removed when dropped, on every path out of here.
    let dir = tempfile::Builder::new()
        .prefix("syscost-trace-")
        .tempdir()?;
    let user_path = dir.path().join("user.sct");
    let kernel_path = dir.path().join("kernel.chunks");
    let env = child_env(&user_path, buffer);
    let prep = PreparedExec::with_env(&command[0], command, &env)?;
    let (kernel_thread, unavailable) = start_kernel(kernel, &kernel_path)?;

    let ignored = spawn::ignore_signals(&[libc::SIGINT, libc::SIGQUIT])?;
    let defaults: Vec<libc::c_int> = [libc::SIGINT, libc::SIGQUIT]
        .into_iter()
        .filter(|&s| !ignored.was_ignored(s))
        .chain([libc::SIGPIPE])
        .collect();
    let mut child = match spawn::spawn(&prep, true, &defaults) {
        Ok(c) => c,
        Err(e) => {
            drop(ignored);
            if let Some(t) = kernel_thread {
                let _ = t.finish();
            }
            spawn_failed(&e);
            return Ok(None);
        }
    };
    let status = child.wait().map(spawn::ExitStatus::from_raw);
    drop(ignored);
    let status = status?;

    let k = finish_kernel(kernel_thread, kernel, unavailable)?;
    let argv = command
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let command_meta = Meta::Command {
        argv,
        status: status.shell_code() as i32,
    };
    let user = assemble(output, &user_path, &kernel_path, &k.meta, &command_meta)?;
    drop(dir);
    Ok(Some(Recorded {
        status,
        user_trace: user.is_some(),
        user_truncated: user == Some(true),
        kernel_events: k.events,
        kernel_lost: k.lost,
        kernel_unavailable: k.unavailable,
    }))
}

/// The traced command's environment: ours, with the trace library told where to write
/// (`ENV_PATH`) and, if given, how large a ring to use (`ENV_BUFFER`).
fn child_env(user_path: &Path, buffer: Option<u64>) -> Vec<std::ffi::OsString> {
    let mut env: Vec<std::ffi::OsString> = std::env::vars_os()
        .filter(|(k, _)| k != ENV_PATH && k != ENV_BUFFER)
        .map(|(k, v)| {
            let mut kv = k;
            kv.push("=");
            kv.push(v);
            kv
        })
        .collect();
    let mut kv = std::ffi::OsString::from(format!("{ENV_PATH}="));
    kv.push(user_path.as_os_str());
    env.push(kv);
    if let Some(b) = buffer {
        env.push(format!("{ENV_BUFFER}={b}").into());
    }
    env
}

/// Starts recording the kernel's events into `kernel_path`, if any were asked for;
/// returns the draining thread and why some or all cannot be had.
fn start_kernel(
    kernel: &KernelRequest,
    kernel_path: &Path,
) -> io::Result<(Option<KernelThread>, Option<String>)> {
    if kernel.kinds.is_empty() {
        return Ok((None, None));
    }
    Ok(match KernelRecorder::start(kernel) {
        Ok(r) => {
            let missing = r.unavailable();
            let sink = KernelSink::create(kernel_path)?;
            (Some(KernelThread::start(r, sink)?), missing)
        }
        Err(why) => (None, Some(why.to_string())),
    })
}

/// What the kernel's recording came to.
struct KernelOutcome {
    /// The trace's kernel record, when kernel events were asked for.
    meta: Option<Meta>,
    events: u64,
    lost: u64,
    unavailable: Option<String>,
}

/// Stops the kernel's recording, writes what is left of it, and describes it.
fn finish_kernel(
    thread: Option<KernelThread>,
    kernel: &KernelRequest,
    mut unavailable: Option<String>,
) -> io::Result<KernelOutcome> {
    let (mut events, mut lost, mut recorded, mut method) = (0, 0, vec![], String::new());
    // A thread runs only when kernel events were asked for.
    if let Some(t) = thread {
        let (recorder, mut sink) = t.finish()?;
        let summary = recorder.stop()?;
        sink.drained(&summary.events, &summary.lost)?;
        (events, lost) = (sink.events, sink.lost);
        sink.finish()?;
        if unavailable.is_none() && !summary.unavailable.is_empty() {
            unavailable = Some(summary.unavailable);
        }
        recorded = summary.recorded.iter().map(|k| k.name()).collect();
        method = summary.method;
    }
    let meta = (!kernel.kinds.is_empty()).then(|| Meta::Kernel {
        requested: kernel.kinds.iter().map(|k| k.name()).collect(),
        recorded,
        unavailable: unavailable.clone().unwrap_or_default(),
        events,
        lost,
        method,
    });
    Ok(KernelOutcome {
        meta,
        events,
        lost,
        unavailable,
    })
}

/// Writes the trace file: the header, the user chunks, the kernel chunks and the
/// records (to a regular file through a temporary one renamed into place when whole,
/// removed on error; to a device or FIFO in place: see [`crate::os::target`]).
/// Returns whether the user trace was truncated (None: the program wrote none).
fn assemble(
    output: &Path,
    user_path: &Path,
    kernel_path: &Path,
    kernel_meta: &Option<Meta>,
    command_meta: &Meta,
) -> anyhow::Result<Option<bool>> {
    let assembled = (|| -> io::Result<Option<bool>> {
        let mut out =
            BufWriter::with_capacity(1 << 20, crate::os::target::create(output)?);
        out.write_all(&format::file_header())?;
        let user = copy_user_chunks(user_path, &mut out)?;
        if kernel_path.exists() {
            append_file(kernel_path, &mut out)?;
        }
        if let Some(m) = kernel_meta {
            format::write_meta(&mut out, m)?;
        }
        format::write_meta(&mut out, command_meta)?;
        out.into_inner().map_err(|e| e.into_error())?.commit()?;
        Ok(user)
    })();
    assembled.map_err(|e| anyhow::anyhow!("cannot write {}: {e}", output.display()))
}
