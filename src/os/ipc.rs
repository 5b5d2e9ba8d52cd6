//! Message channels for the `ipc` family: socket send/receive and buffer options,
//! POSIX message queues, System V message queues, a shared byte region for mailboxes,
//! and the scheduling priority of one thread or of one child process.
//!
//! Every named or system-wide object is owned: a [`PosixQueue`] unlinks its name and a
//! [`SysvQueue`] removes itself (`IPC_RMID`) when dropped, whatever path drops them.
//! Priorities are read and set only for ids the caller names, and a guard refuses any
//! id ≤ 0, so nothing here can reach a process it did not create.
//!
//! It must not know any benchmark by name, keep timing state, or print anything.
//!
//! # Safety
//! The `unsafe` blocks pass live, correctly sized buffers and NUL-terminated names to
//! the kernel, and [`SharedBytes`] only hands out accesses inside its own mapping.
#![allow(unsafe_code)]

use super::sys::cvt;
use super::task::SharedMem;
use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::AtomicU32;

fn refuse(id: libc::pid_t) -> io::Result<()> {
    if id <= 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("refusing process or thread id {id}"),
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Sockets

/// `send(fd, buf, flags)`: the byte count, or -1 with errno set.
#[inline(always)]
pub fn send(fd: RawFd, buf: &[u8], flags: libc::c_int) -> isize {
    // SAFETY: `buf` is valid for reads of its length; a bad fd is an error, not UB.
    unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), flags) }
}

/// `recv(fd, buf, flags)`: the byte count (with `MSG_TRUNC` on a datagram socket, the
/// datagram's real length), or -1 with errno set.
#[inline(always)]
pub fn recv(fd: RawFd, buf: &mut [u8], flags: libc::c_int) -> isize {
    // SAFETY: `buf` is valid for writes of its length; a bad fd is an error, not UB.
    unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), flags) }
}

/// Sets an integer socket option.
pub fn set_sock_int(
    fd: BorrowedFd<'_>,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    // SAFETY: the option value is a live int of the size passed.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    cvt(r as libc::c_long).map(|_| ())
}

/// `shutdown(fd, SHUT_RD)`: a receive blocked on the socket, or any later one, returns
/// 0 (end of file). Returns 0 or -1 with errno.
pub fn shutdown_read(fd: RawFd) -> libc::c_int {
    // SAFETY: integer arguments only; a bad descriptor is an error, not undefined.
    unsafe { libc::shutdown(fd, libc::SHUT_RD) }
}

/// Reads an integer socket option.
pub fn get_sock_int(
    fd: BorrowedFd<'_>,
    level: libc::c_int,
    name: libc::c_int,
) -> io::Result<libc::c_int> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `value` and `len` are live and writable; `len` holds value's size.
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&mut value as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    cvt(r as libc::c_long)?;
    Ok(value)
}

// ---------------------------------------------------------------------------------------
// POSIX message queues

/// A POSIX message queue this process created, open for reading and writing. Its name
/// is unlinked by [`PosixQueue::unlink`] or, at the latest, when it is dropped; the
/// descriptor survives `fork`.
#[derive(Debug)]
pub struct PosixQueue {
    fd: OwnedFd,
    name: Option<CString>,
}

impl PosixQueue {
    /// Creates a new queue `name` (`/something`) with `O_CREAT|O_EXCL`, holding at
    /// most `maxmsg` messages of at most `msgsize` bytes.
    pub fn create(name: &str, maxmsg: usize, msgsize: usize) -> io::Result<PosixQueue> {
        let c = CString::new(name)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in name"))?;
        // SAFETY: an all-zero mq_attr is valid; the sizes are set below.
        let mut attr: libc::mq_attr = unsafe { std::mem::zeroed() };
        attr.mq_maxmsg = maxmsg as libc::c_long;
        attr.mq_msgsize = msgsize as libc::c_long;
        // SAFETY: `c` is NUL-terminated and `attr` a valid mq_attr for the call.
        let fd = unsafe {
            libc::mq_open(
                c.as_ptr(),
                libc::O_CREAT | libc::O_EXCL | libc::O_RDWR | libc::O_CLOEXEC,
                0o600 as libc::mode_t,
                &mut attr as *mut libc::mq_attr,
            )
        };
        cvt(fd as libc::c_long)?;
        // SAFETY: on Linux a message queue descriptor is a file descriptor, fresh and
        // owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(PosixQueue { fd, name: Some(c) })
    }

    /// The raw descriptor (for a forked child).
    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Removes the name now; the queue lives on while a descriptor is open.
    pub fn unlink(&mut self) -> io::Result<()> {
        match self.name.take() {
            Some(c) => mq_unlink(&c),
            None => Ok(()),
        }
    }
}

impl Drop for PosixQueue {
    fn drop(&mut self) {
        let _ = self.unlink();
    }
}

fn mq_unlink(name: &CStr) -> io::Result<()> {
    // SAFETY: `name` is NUL-terminated.
    let r = unsafe { libc::mq_unlink(name.as_ptr()) };
    cvt(r as libc::c_long).map(|_| ())
}

/// Whether a queue called `name` exists now (it is opened without `O_CREAT` and closed
/// at once).
pub fn posix_queue_exists(name: &str) -> io::Result<bool> {
    let c = CString::new(name)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in name"))?;
    // SAFETY: `c` is NUL-terminated; without O_CREAT no attributes are read.
    let fd = unsafe { libc::mq_open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd == -1 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::ENOENT) => Ok(false),
            _ => Err(e),
        };
    }
    // SAFETY: a fresh descriptor we own, closed once.
    drop(unsafe { OwnedFd::from_raw_fd(fd) });
    Ok(true)
}

/// `mq_send(fd, buf, 0)`: 0, or -1 with errno set.
#[inline(always)]
pub fn mq_send(fd: RawFd, buf: &[u8]) -> i32 {
    // SAFETY: `buf` is valid for reads of its length.
    unsafe { libc::mq_send(fd, buf.as_ptr().cast(), buf.len(), 0) }
}

/// `mq_timedsend(fd, buf, 0, deadline)`: sends without waiting past the absolute
/// `CLOCK_REALTIME` deadline. 0, or -1 with errno set.
pub fn mq_send_by(fd: RawFd, buf: &[u8], deadline: &libc::timespec) -> i32 {
    // SAFETY: `buf` is valid for reads of its length; `deadline` is a live timespec.
    unsafe { libc::mq_timedsend(fd, buf.as_ptr().cast(), buf.len(), 0, deadline) }
}

/// `mq_receive(fd, buf)`: the message's length, or -1 with errno set.
#[inline(always)]
pub fn mq_receive(fd: RawFd, buf: &mut [u8]) -> isize {
    // SAFETY: `buf` is valid for writes of its length; a null priority is allowed.
    unsafe {
        libc::mq_receive(fd, buf.as_mut_ptr().cast(), buf.len(), std::ptr::null_mut())
    }
}

/// `mq_timedreceive(fd, buf, deadline)`: waits at most until the absolute
/// `CLOCK_REALTIME` deadline. The message's length, or -1 with errno set.
#[inline(always)]
pub fn mq_receive_by(fd: RawFd, buf: &mut [u8], deadline: &libc::timespec) -> isize {
    // SAFETY: `buf` is valid for writes of its length; `deadline` is a live timespec;
    // a null priority is allowed.
    unsafe {
        libc::mq_timedreceive(
            fd,
            buf.as_mut_ptr().cast(),
            buf.len(),
            std::ptr::null_mut(),
            deadline,
        )
    }
}

// ---------------------------------------------------------------------------------------
// System V message queues

/// A private System V message queue, removed (`IPC_RMID`) when dropped.
///
/// A System V queue outlives every process, so a SIGKILL of this process would leave
/// it behind. So a keeper process makes it and guards it: it creates the queue, sends
/// its id back, and blocks reading a pipe whose only writers are this process and the
/// children forked while the queue exists (which die with it). When the queue is
/// dropped, this process writes one byte (the keeper exits) and removes the queue;
/// when this process dies at any moment instead, even before it has read the id, the
/// keeper reads end-of-file and removes the queue itself.
#[derive(Debug)]
pub struct SysvQueue {
    id: libc::c_int,
    keeper: Option<(super::task::Child, OwnedFd)>,
}

impl SysvQueue {
    /// Creates a new `IPC_PRIVATE` queue readable and writable by this user only,
    /// through its keeper.
    pub fn create() -> io::Result<SysvQueue> {
        let (order_r, order_w) = super::task::pipe()?; // this process → keeper: 1 byte, or EOF
        let (id_r, id_w) = super::task::pipe()?; // keeper → this process: the id, or −errno
        let (keep, reply) = (order_r.as_raw_fd(), id_w.as_raw_fd());
        // SAFETY: the keeper makes only async-signal-safe system calls (close, msgget,
        // write, read, msgctl) on live buffers of its own stack. Every descriptor but
        // the two pipe ends is closed first, so the keeper holds no other pipe or
        // socket open.
        let mut keeper = unsafe {
            super::task::fork_survivor(move || {
                {
                    let (lo, hi) = (keep.min(reply), keep.max(reply));
                    if lo > 0 {
                        libc::syscall(libc::SYS_close_range, 0u32, (lo - 1) as u32, 0u32);
                    }
                    if hi > lo + 1 {
                        libc::syscall(
                            libc::SYS_close_range,
                            (lo + 1) as u32,
                            (hi - 1) as u32,
                            0u32,
                        );
                    }
                    libc::syscall(libc::SYS_close_range, (hi + 1) as u32, u32::MAX, 0u32);
                    let id = libc::msgget(libc::IPC_PRIVATE, libc::IPC_CREAT | 0o600);
                    let answer: i32 = if id < 0 {
                        -*libc::__errno_location()
                    } else {
                        id
                    };
                    libc::write(reply, (&answer as *const i32).cast(), 4);
                    libc::close(reply);
                    if id < 0 {
                        return 1;
                    }
                    let mut byte = 0u8;
                    loop {
                        let n = libc::read(keep, (&mut byte as *mut u8).cast(), 1);
                        if n < 0 && *libc::__errno_location() == libc::EINTR {
                            continue;
                        }
                        if n != 1 {
                            // End of file: every writer is gone without saying so.
                            libc::msgctl(id, libc::IPC_RMID, std::ptr::null_mut());
                        }
                        return 0;
                    }
                }
            })
        }?;
        drop(order_r);
        drop(id_w);
        let mut answer = [0u8; 4];
        let mut got = 0;
        while got < 4 {
            // SAFETY: reads into the unfilled tail of `answer`.
            let n = unsafe {
                libc::read(id_r.as_raw_fd(), answer[got..].as_mut_ptr().cast(), 4 - got)
            };
            match n {
                n if n > 0 => got += n as usize,
                0 => break,
                _ if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {}
                _ => break,
            }
        }
        let id = i32::from_ne_bytes(answer);
        if got < 4 || id < 0 {
            drop(order_w); // the keeper exits, removing nothing it did not make
            let _ = keeper.wait();
            return Err(if got < 4 {
                io::Error::other("the System V queue's keeper ended without an answer")
            } else {
                io::Error::from_raw_os_error(-id)
            });
        }
        Ok(SysvQueue {
            id,
            keeper: Some((keeper, order_w)),
        })
    }

    /// The queue's id.
    pub fn id(&self) -> libc::c_int {
        self.id
    }
}

impl Drop for SysvQueue {
    fn drop(&mut self) {
        // Remove the queue first, then release the keeper: killed in between, this
        // process leaves the keeper to find end-of-file and try a removal that finds
        // nothing; the other order would leave a window in which a kill leaves the
        // queue with nobody to remove it.
        // SAFETY: IPC_RMID takes no buffer; the id is the queue this value created.
        unsafe { libc::msgctl(self.id, libc::IPC_RMID, std::ptr::null_mut()) };
        if let Some((_, write)) = &self.keeper {
            // Tell the keeper the queue is gone (it then exits).
            // SAFETY: a one-byte write from a live byte to an open pipe.
            unsafe { libc::write(write.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
        }
        if let Some((mut keeper, write)) = self.keeper.take() {
            drop(write);
            let _ = keeper.wait();
        }
    }
}

/// A System V message buffer: a `long` type followed by room for `size` bytes.
#[derive(Debug, Clone)]
pub struct MsgBuf {
    words: Vec<u64>,
    size: usize,
}

impl MsgBuf {
    /// A zeroed buffer for messages of up to `size` bytes.
    pub fn new(size: usize) -> MsgBuf {
        MsgBuf {
            words: vec![0; 1 + size.div_ceil(8)],
            size,
        }
    }

    /// The message text (all `size` bytes).
    pub fn text(&self) -> &[u8] {
        // SAFETY: the words after the first hold at least `size` initialised bytes,
        // borrowed for as long as `self`.
        unsafe {
            std::slice::from_raw_parts(self.words.as_ptr().add(1).cast(), self.size)
        }
    }

    /// The message text, writable.
    pub fn text_mut(&mut self) -> &mut [u8] {
        // SAFETY: as for `text`, borrowed mutably.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.words.as_mut_ptr().add(1).cast(),
                self.size,
            )
        }
    }
}

/// `msgsnd` of the first `len` bytes of `buf`'s text with type `mtype` (> 0). 0, or -1
/// with errno set.
#[inline(always)]
pub fn msgsnd(
    id: libc::c_int,
    buf: &mut MsgBuf,
    len: usize,
    mtype: i64,
    flags: libc::c_int,
) -> i32 {
    buf.words[0] = mtype as u64;
    let len = len.min(buf.size);
    // SAFETY: the buffer holds a long type and at least `len` bytes of text.
    unsafe { libc::msgsnd(id, buf.words.as_ptr().cast(), len, flags) }
}

/// `msgrcv` of a message of type `mtype` into `buf`: the text's length, or -1 with
/// errno set (E2BIG when the message is longer than the buffer).
#[inline(always)]
pub fn msgrcv(id: libc::c_int, buf: &mut MsgBuf, mtype: i64) -> isize {
    // SAFETY: the buffer has room for a long type and `size` bytes of text.
    unsafe { libc::msgrcv(id, buf.words.as_mut_ptr().cast(), buf.size, mtype, 0) }
}

// ---------------------------------------------------------------------------------------
// Shared bytes

/// Shared, zeroed anonymous memory (MAP_SHARED) that a forked child shares with its
/// parent, reached by byte offset: 32-bit atomic words, and plain bytes moved by copies.
#[derive(Debug)]
pub struct SharedBytes {
    mem: SharedMem,
}

impl SharedBytes {
    /// Maps at least `bytes` bytes (whole pages).
    pub fn new(bytes: usize) -> io::Result<SharedBytes> {
        SharedMem::new(bytes).map(|mem| SharedBytes { mem })
    }

    /// The 32-bit word at byte offset `off` (a multiple of 4).
    #[inline(always)]
    pub fn word(&self, off: usize) -> &AtomicU32 {
        assert!(off.is_multiple_of(4), "unaligned word");
        self.mem.word(off / 4)
    }

    /// Copies `src` into the mapping at byte offset `off`. Callers order it against
    /// the reader with the words (release after writing, acquire before reading).
    #[inline(always)]
    pub fn write(&self, off: usize, src: &[u8]) {
        assert!(
            off + src.len() <= self.mem.len(),
            "write outside the mapping"
        );
        // SAFETY: the destination is inside the mapping (checked) and does not overlap
        // `src`, which is ordinary memory of this process.
        unsafe {
            std::ptr::copy_nonoverlapping(
                src.as_ptr(),
                self.mem.as_ptr().add(off),
                src.len(),
            )
        };
    }

    /// Copies bytes at offset `off` out of the mapping into `dst`.
    #[inline(always)]
    pub fn read(&self, off: usize, dst: &mut [u8]) {
        assert!(
            off + dst.len() <= self.mem.len(),
            "read outside the mapping"
        );
        // SAFETY: the source is inside the mapping (checked) and does not overlap
        // `dst`.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.mem.as_ptr().add(off),
                dst.as_mut_ptr(),
                dst.len(),
            )
        };
    }
}

// ---------------------------------------------------------------------------------------
// Priorities

/// The nice value of one thread or process (`getpriority(PRIO_PROCESS, id)`), id > 0.
pub fn get_nice(id: libc::pid_t) -> io::Result<i32> {
    refuse(id)?;
    super::sys::getpriority_of(id as libc::id_t)
}

/// Sets the nice value of one thread or process (id > 0).
pub fn set_nice(id: libc::pid_t, nice: i32) -> io::Result<()> {
    refuse(id)?;
    // SAFETY: integer arguments only.
    let r = unsafe { libc::setpriority(libc::PRIO_PROCESS, id as libc::id_t, nice) };
    cvt(r as libc::c_long).map(|_| ())
}

/// The scheduling policy and real-time priority of one thread or process (id > 0).
pub fn get_sched(id: libc::pid_t) -> io::Result<(libc::c_int, libc::c_int)> {
    refuse(id)?;
    // SAFETY: integer argument only.
    let policy = unsafe { libc::sched_getscheduler(id) };
    cvt(policy as libc::c_long)?;
    let mut p = libc::sched_param { sched_priority: 0 };
    // SAFETY: `p` is a live, writable sched_param.
    let r = unsafe { libc::sched_getparam(id, &mut p) };
    cvt(r as libc::c_long)?;
    Ok((policy, p.sched_priority))
}

/// Sets the scheduling policy and real-time priority of one thread or process (id > 0).
pub fn set_sched(
    id: libc::pid_t,
    policy: libc::c_int,
    prio: libc::c_int,
) -> io::Result<()> {
    refuse(id)?;
    let p = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: `p` is a live sched_param read by the call.
    let r = unsafe { libc::sched_setscheduler(id, policy, &p) };
    cvt(r as libc::c_long).map(|_| ())
}

/// The soft limit of `resource`.
pub(in crate::os) fn soft_limit(resource: libc::__rlimit_resource_t) -> io::Result<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `r` is a valid, writable rlimit.
    cvt(unsafe { libc::getrlimit(resource, &mut r) } as libc::c_long)?;
    Ok(r.rlim_cur)
}

/// The capability's bit number (linux/capability.h).
const CAP_SYS_NICE: u32 = 23;

/// Whether this process has CAP_SYS_NICE in its effective set.
pub fn has_cap_sys_nice() -> bool {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return false;
    };
    crate::host::parse::parse_status_field(&status, "CapEff")
        .and_then(|v| u64::from_str_radix(&v, 16).ok())
        .is_some_and(|caps| caps & (1 << CAP_SYS_NICE) != 0)
}

/// Whether this process may lower a nice value down to `nice` (CAP_SYS_NICE, or an
/// RLIMIT_NICE that reaches it).
pub fn may_lower_nice_to(nice: i32) -> bool {
    has_cap_sys_nice()
        || soft_limit(libc::RLIMIT_NICE)
            .is_ok_and(|lim| lim == libc::RLIM_INFINITY || 20 - lim as i64 <= nice as i64)
}

/// Whether this process may use SCHED_FIFO at `prio` (CAP_SYS_NICE, or an
/// RLIMIT_RTPRIO that reaches it).
pub fn may_use_fifo(prio: i32) -> bool {
    has_cap_sys_nice()
        || soft_limit(libc::RLIMIT_RTPRIO)
            .is_ok_and(|lim| lim == libc::RLIM_INFINITY || lim >= prio as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sysv_queue_carries_a_message_and_is_removed() {
        let q = SysvQueue::create().unwrap();
        let id = q.id();
        let mut b = MsgBuf::new(5);
        b.text_mut().copy_from_slice(b"hello");
        assert_eq!(msgsnd(id, &mut b, 5, 1, 0), 0);
        let mut r = MsgBuf::new(5);
        assert_eq!(msgrcv(id, &mut r, 1), 5);
        assert_eq!(r.text(), b"hello");
        drop(q);
        assert_eq!(msgsnd(id, &mut b, 5, 1, libc::IPC_NOWAIT), -1);
    }

    #[test]
    fn a_posix_queue_is_unlinked_when_dropped() {
        let name = format!("/syscost-os-test-{}", std::process::id());
        let q = PosixQueue::create(&name, 1, 16).unwrap();
        assert!(posix_queue_exists(&name).unwrap());
        assert_eq!(mq_send(q.raw(), b"abc"), 0);
        let mut buf = [0u8; 16];
        assert_eq!(mq_receive(q.raw(), &mut buf), 3);
        drop(q);
        assert!(!posix_queue_exists(&name).unwrap());
    }

    #[test]
    fn shared_bytes_copy_in_and_out() {
        let m = SharedBytes::new(100).unwrap();
        m.write(8, b"xyz");
        let mut out = [0u8; 3];
        m.read(8, &mut out);
        assert_eq!(&out, b"xyz");
        m.word(4).store(7, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(m.word(4).load(std::sync::atomic::Ordering::SeqCst), 7);
    }

    #[test]
    fn priorities_refuse_non_positive_ids() {
        assert!(get_nice(0).is_err());
        assert!(set_nice(-1, 0).is_err());
        assert!(set_sched(0, libc::SCHED_OTHER, 0).is_err());
    }
}
