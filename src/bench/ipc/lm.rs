//! lmbench's remaining IPC tests: a byte through two named FIFOs and back to a forked
//! child (lat_fifo), a System V semaphore handed to it and back (lat_sem), a record
//! lock handed to it and back as lat_fcntl does, and connection setup over TCP and
//! AF_UNIX (lat_connect, lat_unix_connect) to an accepting thread.
//!
//! The FIFOs and lock files are made in the run's scratch directory and unlinked as
//! soon as they are open; the socket is bound in a directory of its own there, removed
//! with the body or with a failed setup. The child is
//! killed and reaped with the body (it only ever blocks in its next read, semop or
//! lock), the semaphore set is removed, the accepting thread stopped and joined.

use crate::bench::ctx::place_pinned;
use crate::bench::facts::*;
use crate::bench::{check, Kind, OrOs, ParamSpec, Params, Prepared, RunContext};
use crate::error::BenchError;
use crate::harness::{Body, Plan};
use crate::os::affinity::Pin;
use crate::os::peers::{self, SemSet};
use crate::os::task::{self, Child};
use std::ffi::CString;
use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Blocks: voluntary switches are part of the operation.
const BLOCKS: Plan = crate::bench::blocking(true);

static PLACED: &[ParamSpec] = &[crate::bench::ctx::placement_among(
    "same-cpu",
    "this thread and the other task on one CPU, or on two",
    &["same-cpu", "cross-cpu"],
)];

/// A name in the scratch directory no other run or instance uses.
fn scratch_name(cx: &RunContext, what: &str) -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    cx.scratch_dir()
        .join(format!("syscost-{what}-{}-{n}", std::process::id()))
}

fn cstr(p: &std::path::Path) -> Result<CString, BenchError> {
    CString::new(p.as_os_str().as_encoded_bytes())
        .map_err(|_| BenchError::Failed("a scratch path holds a NUL byte".into()))
}

/// `ipc.fifo`.
pub const FIFO: crate::bench::InRun = crate::bench::InRun {
    name: "ipc.fifo",
    facts: Facts { switches: true, ..NAMED.on(Libc, "write and read") },
    about: "a 1-byte write into a named FIFO a forked child reads, and its 1-byte answer through a second FIFO: one round trip (lmbench lat_fifo)",
    origin: "mcvoy1996 lat_fifo",
    params: PLACED,
    prepare: prepare_fifo,
};

struct Fifo {
    to: OwnedFd,
    from: OwnedFd,
    _child: Child,
    _pin: Option<Pin>,
}

fn open_fifo(cx: &RunContext) -> Result<OwnedFd, BenchError> {
    let path = scratch_name(cx, "fifo");
    peers::mkfifo(&cstr(&path)?).or_os("mkfifo")?;
    open_unlinked(&path, false, "open the FIFO")
}

/// Opens `path` for reading and writing (`create`: a new file, which must not exist)
/// and removes its name at once, whether or not the open succeeded: the descriptor is
/// all that is left of it.
fn open_unlinked(
    path: &std::path::Path,
    create: bool,
    what: &'static str,
) -> Result<OwnedFd, BenchError> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(create)
        .open(path);
    let _ = std::fs::remove_file(path);
    Ok(OwnedFd::from(f.or_os(what)?))
}

fn prepare_fifo(p: &Params, cx: &RunContext) -> Result<Prepared, BenchError> {
    let (pin, cpus) = place_pinned(p.get("placement"))?;
    let (to, from) = (open_fifo(cx)?, open_fifo(cx)?);
    let (a, b) = (to.as_raw_fd(), from.as_raw_fd());
    // SAFETY: the child reads and writes two inherited descriptors: system calls only.
    #[allow(unsafe_code)]
    let child = unsafe {
        task::fork_partner(&[], &cpus, move || {
            let mut c = [0u8; 1];
            while task::read_fd(a, &mut c) == 1 {
                if task::write_fd(b, &c) != 1 {
                    return 1;
                }
            }
            0
        })
    }
    .or_os("fork")?;
    let f = Fifo {
        to,
        from,
        _child: child,
        _pin: pin,
    };
    Ok(Prepared::new(Box::new(f)).op("round trip").plan(BLOCKS))
}

impl Body for Fifo {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        let mut c = [7u8; 1];
        for _ in 0..iters {
            if task::write_fd(self.to.as_raw_fd(), &c) != 1 {
                return Err(BenchError::last_os("write FIFO"));
            }
            if task::read_fd(self.from.as_raw_fd(), &mut c) != 1 {
                return Err(BenchError::last_os("read FIFO"));
            }
        }
        Ok(())
    }
}

/// `ipc.sem`.
pub const SEM: crate::bench::Simple = crate::bench::Simple {
    name: "ipc.sem",
    facts: Facts { switches: true, ..NAMED.on(Libc, "semop, twice") },
    about: "one semop that takes System V semaphore 1 and gives semaphore 0, as a forked child's semop takes 0 and gives 1 back: one round trip per call (lmbench lat_sem's loop; lat_sem prints half of it)",
    origin: "mcvoy1996 lat_sem",
    params: PLACED,
    prepare: prepare_sem,
};

struct Sem {
    // Removed before the child is reaped: its semop then fails and it exits.
    set: SemSet,
    _child: Child,
    _pin: Option<Pin>,
}

fn prepare_sem(p: &Params) -> Result<Prepared, BenchError> {
    let (pin, cpus) = place_pinned(p.get("placement"))?;
    let set = SemSet::new(2).map_err(|e| match e.raw_os_error() {
        Some(libc::ENOSPC | libc::ENOSYS | libc::EPERM) => {
            BenchError::Skip(format!("semget refused: {e}"))
        }
        _ => BenchError::os("semget", e),
    })?;
    let id = set.id();
    // SAFETY: the child makes semop calls on the set: system calls only.
    #[allow(unsafe_code)]
    let child = unsafe {
        task::fork_partner(&[], &cpus, move || {
            // lmbench's writer: give 1 once, then take 0 and give 1 in each call.
            if peers::semop(id, 1, 1) != 0 {
                return 1;
            }
            while peers::semop_pair(id, (0, -1), (1, 1)) == 0 {}
            0
        })
    }
    .or_os("fork")?;
    let s = Sem {
        set,
        _child: child,
        _pin: pin,
    };
    Ok(Prepared::new(Box::new(s)).op("round trip").plan(BLOCKS))
}

impl Body for Sem {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        let id = self.set.id();
        for _ in 0..iters {
            check(peers::semop_pair(id, (1, -1), (0, 1)).into(), "semop")?;
        }
        Ok(())
    }
}

/// `ipc.fcntl`.
pub const FCNTL: crate::bench::InRun = crate::bench::InRun {
    name: "ipc.fcntl",
    facts: Facts { switches: true, ..NAMED.on(Libc, "fcntl(F_SETLKW), four times") },
    about: "lmbench lat_fcntl's handoff of two fcntl(F_SETLKW) record locks between this process and a forked child: lock 1, unlock 2, lock 2, unlock 1 against the child's unlock 1, lock 2, unlock 2, lock 1; a lock waits only when the child took it first, which on one CPU comes in stretches the scheduler decides, so same-cpu batches are 10000 calls long and the figure their mean, as lmbench's",
    origin: "mcvoy1996 lat_fcntl",
    params: PLACED,
    prepare: prepare_fcntl,
};

struct Fcntl {
    fds: [OwnedFd; 2],
    // Killed (its locks go with it) before the descriptors close.
    _child: Child,
    _pin: Option<Pin>,
}

fn lock_file(cx: &RunContext) -> Result<OwnedFd, BenchError> {
    open_unlinked(&scratch_name(cx, "lock"), true, "create a lock file")
}

/// procA calls in one `placement=same-cpu` batch. On one CPU the loop alternates, a
/// few milliseconds at a time, between stretches where the woken child does not run
/// (so no lock waits: four uncontended calls, about 2 µs a procA on the 2-CPU VM of
/// 2026-11-28) and stretches of real hand-offs (about 11.3 µs a procA). Calibrated
/// batches (a few dozen calls) fall in one stretch or the other, their median in the
/// first and the hand-off batches culled as outliers; lmbench times one loop of about
/// 100 ms, the mean over both. A batch of this many calls (about 40 ms there) spans
/// several alternations, so the figure is that mean too (docs/measurements/peers.md,
/// "lat_fcntl's hand-off").
const FCNTL_SAME_CPU_BATCH: u64 = 10_000;

fn prepare_fcntl(p: &Params, cx: &RunContext) -> Result<Prepared, BenchError> {
    let same_cpu = p.get("placement") == "same-cpu";
    let (pin, cpus) = place_pinned(p.get("placement"))?;
    let fds = [lock_file(cx)?, lock_file(cx)?];
    let (a, b) = (fds[0].as_raw_fd(), fds[1].as_raw_fd());
    check(peers::lock_byte(a, true).into(), "fcntl lock")?;
    check(peers::lock_byte(b, true).into(), "fcntl lock")?;
    // SAFETY: the child makes fcntl calls on inherited descriptors: system calls only.
    #[allow(unsafe_code)]
    let child = unsafe {
        task::fork_partner(&[], &cpus, move || loop {
            // lmbench's procB.
            if peers::lock_byte(a, false) != 0
                || peers::lock_byte(b, true) != 0
                || peers::lock_byte(b, false) != 0
                || peers::lock_byte(a, true) != 0
            {
                return 1;
            }
        })
    }
    .or_os("fork")?;
    let f = Fcntl {
        fds,
        _child: child,
        _pin: pin,
    };
    let plan = if same_cpu {
        Plan {
            fixed_batch: Some(FCNTL_SAME_CPU_BATCH),
            max_batch: Some(FCNTL_SAME_CPU_BATCH),
            ..BLOCKS
        }
    } else {
        BLOCKS
    };
    Ok(Prepared::new(Box::new(f))
        .op("lock handoff (lmbench's procA)")
        .plan(plan))
}

impl Body for Fcntl {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        let (a, b) = (self.fds[0].as_raw_fd(), self.fds[1].as_raw_fd());
        for _ in 0..iters {
            check(peers::lock_byte(a, true).into(), "fcntl lock 1")?;
            check(peers::lock_byte(b, false).into(), "fcntl unlock 2")?;
            check(peers::lock_byte(b, true).into(), "fcntl lock 2")?;
            check(peers::lock_byte(a, false).into(), "fcntl unlock 1")?;
        }
        Ok(())
    }
}

static CONNECT_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "transport",
        default: "tcp,unix",
        about: "tcp: 127.0.0.1, the server closing first (so no TIME_WAIT piles up on this side) and the client reading its end of file · unix: an AF_UNIX stream socket bound in the scratch directory, closed by the client at once",
        kind: Kind::Choice(&["tcp", "unix"]),
    },
    crate::bench::ctx::placement_among(
        "same-cpu",
        "the accepting thread on this CPU, or on another one",
        &["same-cpu", "cross-cpu"],
    ),
];

/// `ipc.connect`.
pub const CONNECT: crate::bench::InRun = crate::bench::InRun {
    name: "ipc.connect",
    facts: Facts {
        switches: true,
        ..NAMED.on(Libc, "socket, connect, close (tcp: and read)")
    },
    about: "socket, connect to a listening socket whose thread accepts and closes it, and close: connection setup (lmbench lat_connect, lat_unix_connect)",
    origin: "mcvoy1996 lat_connect, lat_unix_connect",
    params: CONNECT_PARAMS,
    prepare: prepare_connect,
};

enum Server {
    Tcp(std::net::SocketAddr),
    /// The socket's path, in a directory of its own that is removed with the body (on
    /// success, error or Ctrl-C, which stops the run at a sample boundary), its name
    /// with it.
    Unix {
        path: PathBuf,
        _dir: tempfile::TempDir,
    },
}

struct Connect {
    server: Server,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
    _pin: Option<Pin>,
}

fn prepare_connect(p: &Params, cx: &RunContext) -> Result<Prepared, BenchError> {
    let (pin, cpus) = place_pinned(p.get("placement"))?;
    let os = |what: &'static str| move |e| BenchError::os(what, e);
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let cpu = cpus.first().copied();
    let (server, acceptor) = if p.get("transport") == "tcp" {
        let l = std::net::TcpListener::bind("127.0.0.1:0")
            .map_err(|e| BenchError::Skip(format!("no loopback TCP socket here: {e}")))?;
        let addr = l.local_addr().map_err(os("getsockname"))?;
        let t = std::thread::Builder::new()
            .name("syscost-accept".into())
            .spawn(move || {
                let _pin = cpu.map(Pin::to);
                while !s.load(Ordering::Acquire) {
                    drop(l.accept());
                }
            });
        (Server::Tcp(addr), t)
    } else {
        let base = cx.scratch_dir();
        let dir = tempfile::Builder::new()
            .prefix(&format!("syscost-sock-{}-", std::process::id()))
            .tempdir_in(&base)
            .map_err(|e| {
                BenchError::os(&format!("a directory in {}", base.display()), e)
            })?;
        let path = dir.path().join("s");
        let l = std::os::unix::net::UnixListener::bind(&path).map_err(os("bind"))?;
        let t = std::thread::Builder::new()
            .name("syscost-accept".into())
            .spawn(move || {
                let _pin = cpu.map(Pin::to);
                while !s.load(Ordering::Acquire) {
                    drop(l.accept());
                }
            });
        (Server::Unix { path, _dir: dir }, t)
    };
    let c = Connect {
        server,
        stop,
        acceptor: Some(acceptor.map_err(os("spawn the accepting thread"))?),
        _pin: pin,
    };
    Ok(Prepared::new(Box::new(c)).op("connect+close").plan(BLOCKS))
}

impl Connect {
    fn one(&self) -> Result<(), BenchError> {
        match &self.server {
            Server::Tcp(addr) => {
                let mut s = std::net::TcpStream::connect(addr)
                    .map_err(|e| BenchError::os("connect", e))?;
                let mut b = [0u8; 1];
                // The server's close: end of file.
                let _ = s.read(&mut b);
            }
            Server::Unix { path, .. } => {
                drop(
                    std::os::unix::net::UnixStream::connect(path)
                        .map_err(|e| BenchError::os("connect", e))?,
                );
            }
        }
        Ok(())
    }
}

impl Body for Connect {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for _ in 0..iters {
            self.one()?;
        }
        Ok(())
    }
}

impl Drop for Connect {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // One more connection wakes the accepting thread, which sees the stop.
        let _ = self.one();
        if let Some(t) = self.acceptor.take() {
            let _ = t.join();
        }
        // The socket's directory goes with `server`.
    }
}
