//! The two directions between the master and its forked slave, for each transport:
//! how they are built (untimed, every name removed before measuring) and how one
//! message crosses them ([`Port::send`], [`Port::recv`]), on either side.
//!
//! A [`Port`] holds raw descriptors and ids only, so the slave's copy works in a forked
//! child without allocating. The [`Link`] owns everything: the master's descriptors, the
//! queues and the shared mailbox region; the slave's descriptors are handed to the
//! fork and closed in the parent right after it.
//!
//! The submodule `build` makes each transport's ends, sockets, queues and names.

mod build;

use crate::bench::OrOs;
use build::{datagrams, posix_pair, streams, sysv_queue};
pub use build::{posix_queue_name, socket_dir_base, SOCKET_DIR_PREFIX};

use crate::error::BenchError;
use crate::os::interrupt;
use crate::os::ipc::{self, MsgBuf, PosixQueue, SharedBytes, SysvQueue};
use crate::os::sys;
use crate::os::task;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The transports, in the order of the default sweep.
pub const TRANSPORTS: &[&str] = &[
    "pipe",
    "unix_stream",
    "unix_dgram",
    "socketpair",
    "posix_mq",
    "sysv_msg",
    "shm_futex",
    "tcp",
    "udp",
];

/// A receive that waited past the master's time limit ([`Link::be_patient`]); the
/// caller checks the slave is alive and waits again.
pub const TIMED_OUT: isize = -2;

/// A stream ended in the middle of a message.
pub const CUT_SHORT: isize = -3;

/// How long a patient master ([`Link::be_patient`]) waits for a reply before it
/// checks that the slave lives.
const PATIENCE: Duration = Duration::from_secs(1);

/// System V message types: one queue carries both directions.
const TO_SLAVE: i64 = 1;
const TO_MASTER: i64 = 2;

/// Where each shared mailbox keeps its words and bytes: a sequence word (the futex),
/// the length, then the message from byte 64.
const SEQ: usize = 0;
const LEN: usize = 4;
const BYTES: usize = 64;
/// A length that means "stop".
const STOP: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
enum Way {
    /// Bytes: the whole message is moved by repeated reads and writes.
    Stream { rd: RawFd, wr: RawFd, socket: bool },
    /// One connected datagram socket each side.
    Dgram { fd: RawFd },
    /// A POSIX queue each way.
    Mq { rd: RawFd, wr: RawFd },
    /// One System V queue, a message type each way.
    Sysv { id: i32, rd: i64, wr: i64 },
    /// Two one-slot mailboxes in shared memory, at these offsets.
    Shm { inbox: usize, outbox: usize },
}

/// One side's view of the link.
#[derive(Debug, Clone)]
pub struct Port {
    way: Way,
    shm: Option<Arc<SharedBytes>>,
    /// The last mailbox sequence number seen.
    seen: u32,
    /// Whether receives give up after a second ([`Link::be_patient`]).
    patient: bool,
    /// The absolute CLOCK_REALTIME deadline of a POSIX-queue receive.
    deadline: libc::timespec,
}

impl Port {
    fn new(way: Way, shm: Option<Arc<SharedBytes>>, patient: bool) -> Port {
        Port {
            way,
            shm,
            seen: 0,
            patient,
            deadline: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
        }
    }

    /// Sets the POSIX-queue receive deadline a second from now (call it outside
    /// the clock, before each batch).
    pub fn arm(&mut self) {
        if self.patient {
            let mut now = sys::clock_gettime(libc::CLOCK_REALTIME);
            now.tv_sec += PATIENCE.as_secs() as libc::time_t;
            self.deadline = now;
        }
    }

    /// Sends the first `len` bytes of `buf`: `len`, or -1 with errno set.
    #[inline(always)]
    pub fn send(&mut self, buf: &mut MsgBuf, len: usize) -> isize {
        match self.way {
            Way::Stream { wr, socket, .. } => write_all(wr, &buf.text()[..len], socket),
            Way::Dgram { fd } => ipc::send(fd, &buf.text()[..len], libc::MSG_NOSIGNAL),
            Way::Mq { wr, .. } => match ipc::mq_send(wr, &buf.text()[..len]) {
                0 => len as isize,
                _ => -1,
            },
            Way::Sysv { id, wr, .. } => match ipc::msgsnd(id, buf, len, wr, 0) {
                0 => len as isize,
                _ => -1,
            },
            Way::Shm { outbox, .. } => {
                let m = self.shm.as_deref().expect("shm port has its mapping");
                m.write(outbox + BYTES, &buf.text()[..len]);
                mail(m, outbox, len as u32);
                len as isize
            }
        }
    }

    /// Receives one message into `buf`: its length (which may exceed the buffer for a
    /// datagram or mailbox, so the caller can tell), 0 at end of file or on a stop
    /// message, -1 with errno set, or [`TIMED_OUT`]. A stream receive reads exactly
    /// the buffer's size.
    #[inline(always)]
    pub fn recv(&mut self, buf: &mut MsgBuf) -> isize {
        let r = match self.way {
            Way::Stream { rd, .. } => read_all(rd, buf.text_mut()),
            Way::Dgram { fd } => ipc::recv(fd, buf.text_mut(), libc::MSG_TRUNC),
            Way::Mq { rd, .. } if self.patient => {
                ipc::mq_receive_by(rd, buf.text_mut(), &self.deadline)
            }
            Way::Mq { rd, .. } => ipc::mq_receive(rd, buf.text_mut()),
            Way::Sysv { id, rd, .. } => ipc::msgrcv(id, buf, rd),
            Way::Shm { inbox, .. } => return self.take(inbox, buf),
        };
        if r == -1 && self.patient {
            let e = task::errno();
            if e == libc::EAGAIN || e == libc::ETIMEDOUT {
                return TIMED_OUT;
            }
        }
        r
    }

    /// Waits for the mailbox at `inbox` to change, then copies its message out.
    #[inline(always)]
    fn take(&mut self, inbox: usize, buf: &mut MsgBuf) -> isize {
        let m = self.shm.as_deref().expect("shm port has its mapping");
        let seq = m.word(inbox + SEQ);
        loop {
            let now = seq.load(Ordering::Acquire);
            if now != self.seen {
                self.seen = now;
                break;
            }
            let timeout = libc::timespec {
                tv_sec: PATIENCE.as_secs() as libc::time_t,
                tv_nsec: 0,
            };
            let t = self.patient.then_some(&timeout);
            if task::futex_wait(seq, now, t) != 0
                && task::errno() == libc::ETIMEDOUT
                && seq.load(Ordering::Acquire) == now
            {
                return TIMED_OUT;
            }
        }
        let len = m.word(inbox + LEN).load(Ordering::Relaxed);
        if len == STOP {
            return 0;
        }
        let text = buf.text_mut();
        let n = (len as usize).min(text.len());
        m.read(inbox + BYTES, &mut text[..n]);
        len as isize
    }

    /// Asks the other side to stop, without waiting (a stream ends when its
    /// descriptors are closed instead).
    pub fn stop(&mut self) {
        let empty = &[0u8; 0][..];
        match self.way {
            Way::Stream { .. } => {}
            Way::Dgram { fd } => {
                ipc::send(fd, empty, libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL);
            }
            Way::Mq { wr, .. } => {
                let past = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                };
                ipc::mq_send_by(wr, empty, &past);
            }
            Way::Sysv { id, wr, .. } => {
                let mut b = MsgBuf::new(0);
                ipc::msgsnd(id, &mut b, 0, wr, libc::IPC_NOWAIT);
            }
            Way::Shm { outbox, .. } => {
                if let Some(m) = self.shm.as_deref() {
                    mail(m, outbox, STOP);
                }
            }
        }
    }
}

/// Publishes a mailbox's new length and wakes its reader.
#[inline(always)]
fn mail(m: &SharedBytes, off: usize, len: u32) {
    m.word(off + LEN).store(len, Ordering::Relaxed);
    let seq: &AtomicU32 = m.word(off + SEQ);
    seq.fetch_add(1, Ordering::Release);
    task::futex_wake(seq, 1);
}

/// Writes all of `buf`, retrying partial writes and interrupted calls: its length, or
/// -1 with errno set.
#[inline(always)]
pub fn write_all(fd: RawFd, buf: &[u8], socket: bool) -> isize {
    let mut done = 0;
    while done < buf.len() {
        let r = if socket {
            ipc::send(fd, &buf[done..], libc::MSG_NOSIGNAL)
        } else {
            task::write_fd(fd, &buf[done..])
        };
        if r > 0 {
            done += r as usize;
        } else if r < 0 && task::errno() == libc::EINTR && !interrupt::interrupted() {
            continue;
        } else {
            return -1;
        }
    }
    done as isize
}

/// Reads until `buf` is full: its length, 0 at end of file before any byte,
/// [`CUT_SHORT`] at an end of file inside the message, or -1 with errno set.
#[inline(always)]
pub fn read_all(fd: RawFd, buf: &mut [u8]) -> isize {
    let mut done = 0;
    while done < buf.len() {
        let r = task::read_fd(fd, &mut buf[done..]);
        if r > 0 {
            done += r as usize;
        } else if r == 0 {
            return if done == 0 { 0 } else { CUT_SHORT };
        } else if task::errno() == libc::EINTR && !interrupt::interrupted() {
            continue;
        } else {
            return -1;
        }
    }
    done as isize
}

/// Both directions between the master and the slave, and everything they hold.
pub struct Link {
    /// The master's side.
    pub master: Port,
    /// The slave's side (copied into the child).
    pub slave: Port,
    /// Descriptors only the master uses: the child closes its copies, and the master
    /// closes them to end a stream slave.
    pub master_fds: Vec<OwnedFd>,
    /// Descriptors only the slave uses: moved into the fork, closed in the parent.
    pub slave_fds: Vec<OwnedFd>,
    /// Queues both sides use; removed when the link is dropped.
    queues: Vec<PosixQueue>,
    sysv: Option<SysvQueue>,
}

impl Link {
    /// Builds the link for `transport` and messages of `size` bytes; names (socket
    /// paths, queue names) are gone when it returns.
    pub fn open(transport: &str, size: usize) -> Result<Link, BenchError> {
        let mut link = Link {
            master: Port::new(Way::Dgram { fd: -1 }, None, false),
            slave: Port::new(Way::Dgram { fd: -1 }, None, false),
            master_fds: Vec::new(),
            slave_fds: Vec::new(),
            queues: Vec::new(),
            sysv: None,
        };
        match transport {
            "pipe" | "socketpair" | "unix_stream" | "tcp" => {
                let [m_rd, m_wr, s_rd, s_wr] = streams(transport)?;
                link.set_stream(m_rd, m_wr, s_rd, s_wr, transport != "pipe");
            }
            "unix_dgram" | "udp" => {
                let (m, s) = datagrams(transport, size)?;
                link.set_dgram(m, s);
            }
            "posix_mq" => link.set_posix(posix_pair(size)?),
            "sysv_msg" => link.set_sysv(sysv_queue(size)?),
            "shm_futex" => link.set_shm(size)?,
            other => {
                return Err(BenchError::Failed(format!("unknown transport {other}")));
            }
        }
        Ok(link)
    }

    /// A POSIX queue each way: (to the slave, to the master).
    fn set_posix(&mut self, (to_slave, to_master): (PosixQueue, PosixQueue)) {
        self.master.way = Way::Mq {
            rd: to_master.raw(),
            wr: to_slave.raw(),
        };
        self.slave.way = Way::Mq {
            rd: to_slave.raw(),
            wr: to_master.raw(),
        };
        self.queues = vec![to_slave, to_master];
    }

    /// One System V queue, a message type each way.
    fn set_sysv(&mut self, q: SysvQueue) {
        let id = q.id();
        self.master.way = Way::Sysv {
            id,
            rd: TO_MASTER,
            wr: TO_SLAVE,
        };
        self.slave.way = Way::Sysv {
            id,
            rd: TO_SLAVE,
            wr: TO_MASTER,
        };
        self.sysv = Some(q);
    }

    /// Two mailboxes of `size` bytes in one shared mapping, each on its own lines.
    fn set_shm(&mut self, size: usize) -> Result<(), BenchError> {
        let second = (BYTES + size).div_ceil(64) * 64;
        let m = Arc::new(SharedBytes::new(2 * second).or_os("mmap (shared mailboxes)")?);
        self.master = Port::new(
            Way::Shm {
                inbox: second,
                outbox: 0,
            },
            Some(m.clone()),
            false,
        );
        self.slave = Port::new(
            Way::Shm {
                inbox: 0,
                outbox: second,
            },
            Some(m),
            false,
        );
        Ok(())
    }

    fn set_stream(
        &mut self,
        m_rd: OwnedFd,
        m_wr: OwnedFd,
        s_rd: OwnedFd,
        s_wr: OwnedFd,
        socket: bool,
    ) {
        self.master.way = Way::Stream {
            rd: m_rd.as_raw_fd(),
            wr: m_wr.as_raw_fd(),
            socket,
        };
        self.slave.way = Way::Stream {
            rd: s_rd.as_raw_fd(),
            wr: s_wr.as_raw_fd(),
            socket,
        };
        self.master_fds = vec![m_rd, m_wr];
        self.slave_fds = vec![s_rd, s_wr];
    }

    fn set_dgram(&mut self, m: OwnedFd, s: OwnedFd) {
        self.master.way = Way::Dgram { fd: m.as_raw_fd() };
        self.slave.way = Way::Dgram { fd: s.as_raw_fd() };
        self.master_fds = vec![m];
        self.slave_fds = vec![s];
    }

    /// The raw descriptors of the master's side, for the child to close.
    pub fn master_raw(&self) -> [RawFd; 2] {
        let mut out = [-1; 2];
        for (o, f) in out.iter_mut().zip(&self.master_fds) {
            *o = f.as_raw_fd();
        }
        out
    }

    /// Ends the slave: a stop message, and the master's descriptors closed (end of
    /// file for a stream).
    pub fn stop(&mut self) {
        self.master.stop();
        self.master_fds.clear();
    }

    /// What wakes the master, blocked on its receive, once the slave has died: the
    /// stop message the slave's side would send (a queue, a mailbox), or the master's
    /// datagram socket shut for reading; a stream needs nothing (its end of file).
    /// The master then reads 0 and looks at the slave. Meant for a watching process
    /// ([`crate::os::task::ExitWatch`]), which has its own copies of the descriptors
    /// and the mapping; it makes only system calls and atomic stores.
    pub fn waker(&self) -> impl FnOnce() {
        // Made here, not in the watcher: it must not allocate.
        let (mut empty, shm) = (MsgBuf::new(0), self.slave.shm.clone());
        let (master, slave) = (self.master.way, self.slave.way);
        move || match (master, slave) {
            (Way::Dgram { fd }, _) => {
                ipc::shutdown_read(fd);
            }
            (_, Way::Mq { wr, .. }) => {
                let now = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                };
                ipc::mq_send_by(wr, &[], &now);
            }
            (_, Way::Sysv { id, wr, .. }) => {
                ipc::msgsnd(id, &mut empty, 0, wr, libc::IPC_NOWAIT);
            }
            (_, Way::Shm { outbox, .. }) => {
                if let Some(m) = shm.as_deref() {
                    mail(m, outbox, STOP);
                }
            }
            _ => {}
        }
    }

    /// Makes the master's receives give up after a second so that it can look
    /// whether the slave lives, where nothing wakes it when the slave dies (no
    /// [`Link::waker`] could be set up). A time limit arms a timer at every wait, which
    /// costs a same-CPU round trip a few percent (measurements/paired.md, "The
    /// masters' time limits").
    pub fn be_patient(&mut self) -> Result<(), BenchError> {
        self.master.patient = true;
        if let (Way::Dgram { .. }, Some(fd)) = (self.master.way, self.master_fds.first())
        {
            use rustix::net::sockopt::{set_socket_timeout, Timeout};
            set_socket_timeout(fd, Timeout::Recv, Some(PATIENCE))
                .map_err(|e| BenchError::os("SO_RCVTIMEO", e.into()))?;
        }
        Ok(())
    }

    /// Whether the master's receives have a time limit ([`Link::be_patient`]).
    #[cfg(test)]
    pub fn patient(&self) -> bool {
        self.master.patient
    }

    /// Whether the transport is a byte stream.
    pub fn is_stream(&self) -> bool {
        matches!(self.master.way, Way::Stream { .. })
    }
}
