//! Building a link's transports, untimed: connected stream ends, datagram pairs whose
//! buffers hold the message, POSIX and System V queues sized for it, and the private
//! directories that socket names live in until the link is built.

use super::{BenchError, MsgBuf, PosixQueue, SysvQueue};
use crate::bench::OrOs;
use crate::os::ipc;
use crate::os::task;
use std::net::{Ipv4Addr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::net::{UnixDatagram, UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

/// The four ends of a stream transport, connected: the master's read and write ends,
/// then the slave's. Sockets are duplicated, so that each side has a read and a write
/// descriptor as with pipes.
pub(super) fn streams(transport: &str) -> Result<[OwnedFd; 4], BenchError> {
    let os = |what: &'static str| move |e| BenchError::os(what, e);
    let (a, b) = match transport {
        "pipe" => {
            let (r1, w1) = task::pipe().map_err(os("pipe"))?;
            let (r2, w2) = task::pipe().map_err(os("pipe"))?;
            return Ok([r2, w1, r1, w2]);
        }
        "socketpair" => task::socketpair().map_err(os("socketpair"))?,
        "unix_stream" => {
            let dir = PrivateDir::new()?;
            let path = dir.join("s");
            let l = UnixListener::bind(&path).map_err(os("bind (unix stream)"))?;
            let c = UnixStream::connect(&path).map_err(os("connect (unix stream)"))?;
            let (s, _) = l.accept().map_err(os("accept (unix stream)"))?;
            drop(l);
            dir.remove()?;
            (OwnedFd::from(c), OwnedFd::from(s))
        }
        _ => {
            let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(no_loopback)?;
            let addr = l.local_addr().map_err(os("getsockname"))?;
            let c = TcpStream::connect(addr).map_err(no_loopback)?;
            let (s, _) = l.accept().map_err(os("accept (tcp)"))?;
            c.set_nodelay(true).map_err(os("TCP_NODELAY"))?;
            s.set_nodelay(true).map_err(os("TCP_NODELAY"))?;
            (OwnedFd::from(c), OwnedFd::from(s))
        }
    };
    let (a2, b2) = (
        a.try_clone().map_err(os("dup"))?,
        b.try_clone().map_err(os("dup"))?,
    );
    Ok([a, a2, b, b2])
}

/// A connected pair of datagram sockets (the master's, the slave's) whose buffers hold
/// `size`-byte datagrams.
pub(super) fn datagrams(
    transport: &str,
    size: usize,
) -> Result<(OwnedFd, OwnedFd), BenchError> {
    let os = |what: &'static str| move |e| BenchError::os(what, e);
    let (m, s) = if transport == "unix_dgram" {
        let dir = PrivateDir::new()?;
        let (pm, ps) = (dir.join("m"), dir.join("s"));
        let m = UnixDatagram::bind(&pm).map_err(os("bind (unix dgram)"))?;
        let s = UnixDatagram::bind(&ps).map_err(os("bind (unix dgram)"))?;
        m.connect(&ps).map_err(os("connect (unix dgram)"))?;
        s.connect(&pm).map_err(os("connect (unix dgram)"))?;
        dir.remove()?;
        (OwnedFd::from(m), OwnedFd::from(s))
    } else {
        if size > MAX_UDP {
            return Err(BenchError::Skip(format!(
                "udp carries at most {MAX_UDP} bytes in one datagram; size={size}"
            )));
        }
        let m = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).map_err(no_loopback)?;
        let s = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).map_err(no_loopback)?;
        m.connect(s.local_addr().map_err(os("getsockname"))?)
            .map_err(no_loopback)?;
        s.connect(m.local_addr().map_err(os("getsockname"))?)
            .map_err(no_loopback)?;
        (OwnedFd::from(m), OwnedFd::from(s))
    };
    fit_datagrams(&m, &s, size, transport)?;
    Ok((m, s))
}

/// The largest UDP payload over IPv4.
const MAX_UDP: usize = 65507;

fn no_loopback(e: std::io::Error) -> BenchError {
    BenchError::Skip(format!("no usable IPv4 loopback (127.0.0.1): {e}"))
}

/// A fresh directory only this user can enter (a `tempfile` directory, mode 0700),
/// for the socket names of one link.
struct PrivateDir(tempfile::TempDir);

impl PrivateDir {
    fn new() -> Result<PrivateDir, BenchError> {
        let prefix = format!("{SOCKET_DIR_PREFIX}{}-", std::process::id());
        tempfile::Builder::new()
            .prefix(&prefix)
            .tempdir_in(socket_dir_base())
            .map(PrivateDir)
            .or_os("creating a directory for the socket names")
    }

    /// The path of `name` in it.
    fn join(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }

    /// Removes the socket names and the directory; the bound sockets live on.
    fn remove(self) -> Result<(), BenchError> {
        let path = self.0.path().to_path_buf();
        self.0.close().map_err(|e| {
            BenchError::Failed(format!("could not remove {}: {e}", path.display()))
        })
    }
}

/// Where the socket directories are made: the system's temporary directory.
pub fn socket_dir_base() -> PathBuf {
    std::env::temp_dir()
}

/// The socket directories' names start with this, then the pid.
pub const SOCKET_DIR_PREFIX: &str = "syscost-ipc-";

/// Raises the send buffers for `size`-byte datagrams where needed, then sends one each
/// way (without waiting) to prove they fit; skips when they do not.
fn fit_datagrams(
    m: &OwnedFd,
    s: &OwnedFd,
    size: usize,
    name: &str,
) -> Result<(), BenchError> {
    let want = (2 * size + 4096).min(i32::MAX as usize) as i32;
    for fd in [m, s] {
        for opt in [libc::SO_SNDBUF, libc::SO_RCVBUF] {
            let now = ipc::get_sock_int(fd.as_fd(), libc::SOL_SOCKET, opt)
                .or_os("getsockopt")?;
            if now < want {
                // Best effort: the kernel caps it at net.core.[wr]mem_max.
                let _ = ipc::set_sock_int(fd.as_fd(), libc::SOL_SOCKET, opt, want);
            }
        }
    }
    let mut probe = MsgBuf::new(size);
    for (a, b) in [(m, s), (s, m)] {
        let r = ipc::send(
            a.as_raw_fd(),
            probe.text(),
            libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
        );
        if r != size as isize {
            let e = std::io::Error::last_os_error();
            let buf = ipc::get_sock_int(a.as_fd(), libc::SOL_SOCKET, libc::SO_SNDBUF)
                .unwrap_or(0);
            return Err(BenchError::Skip(format!(
                "{name}: a {size}-byte datagram does not fit ({e}); SO_SNDBUF is {buf} after raising it as far as net.core.wmem_max allows"
            )));
        }
        let got = ipc::recv(b.as_raw_fd(), probe.text_mut(), libc::MSG_TRUNC);
        if got != size as isize {
            return Err(BenchError::Failed(format!(
                "{name}: the probe datagram arrived as {got} bytes, not {size}"
            )));
        }
    }
    Ok(())
}

/// A file's integer contents, e.g. a /proc/sys limit.
fn proc_limit(path: &str) -> Option<usize> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// The name of the POSIX queue `n` of process `pid`, in direction `dir` ("m2s" or
/// "s2m"): predictable, so a test can prove none is left.
pub fn posix_queue_name(pid: u32, n: u32, dir: &str) -> String {
    format!("/syscost-ipc-{pid}-{n}-{dir}")
}

/// Two new queues (to the slave, to the master) for one message of `size` bytes each,
/// their names already unlinked.
pub(super) fn posix_pair(size: usize) -> Result<(PosixQueue, PosixQueue), BenchError> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let pid = std::process::id();
    let open = |dir: &str| {
        PosixQueue::create(&posix_queue_name(pid, n, dir), 1, size.max(1)).map_err(|e| {
            let limit = proc_limit("/proc/sys/fs/mqueue/msgsize_max")
                .map_or("unknown".to_string(), |v| v.to_string());
            match e.raw_os_error() {
                Some(libc::ENOSYS) => BenchError::Skip(format!(
                    "POSIX message queues are not available in this kernel ({e})"
                )),
                Some(libc::EINVAL) if size > 8192 => BenchError::Skip(format!(
                    "posix_mq: a {size}-byte message is above fs.mqueue.msgsize_max ({limit}) and mq_open refused a larger mq_msgsize ({e})"
                )),
                Some(libc::EMFILE | libc::ENOSPC | libc::ENFILE | libc::EPERM | libc::EACCES | libc::EINVAL) => {
                    BenchError::Skip(format!(
                        "posix_mq: mq_open of a queue for {size}-byte messages refused ({e}); fs.mqueue.msgsize_max is {limit}, RLIMIT_MSGQUEUE limits the bytes per user"
                    ))
                }
                _ => BenchError::os("mq_open", e),
            }
        })
    };
    let mut a = open("m2s")?;
    let mut b = open("s2m")?;
    a.unlink().or_os("mq_unlink")?;
    b.unlink().or_os("mq_unlink")?;
    Ok((a, b))
}

/// A private System V queue for `size`-byte messages, or a skip when the kernel's
/// limits do not allow one.
pub(super) fn sysv_queue(size: usize) -> Result<SysvQueue, BenchError> {
    let msgmax = proc_limit("/proc/sys/kernel/msgmax");
    if let Some(max) = msgmax.filter(|&m| size > m) {
        return Err(BenchError::Skip(format!(
            "sysv_msg: a {size}-byte message is above kernel.msgmax ({max} bytes, /proc/sys/kernel/msgmax)"
        )));
    }
    if let Some(mnb) = proc_limit("/proc/sys/kernel/msgmnb").filter(|&m| size > m) {
        return Err(BenchError::Skip(format!(
            "sysv_msg: a {size}-byte message is above kernel.msgmnb ({mnb} bytes per queue)"
        )));
    }
    SysvQueue::create().map_err(|e| match e.raw_os_error() {
        Some(libc::ENOSYS) => BenchError::Skip(format!(
            "System V message queues are not available in this kernel ({e})"
        )),
        Some(libc::ENOSPC) => {
            BenchError::Skip(format!("no System V message queue is free ({e})"))
        }
        _ => BenchError::os("msgget", e),
    })
}
