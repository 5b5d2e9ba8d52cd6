//! A memory file (`memfd_create`) that travels between processes as a descriptor over
//! a Unix socket (`SCM_RIGHTS`): the transport of a worker's bulk
//! ([`crate::session::worker`]) and of the samples a run keeps ([`crate::spill`]); and
//! the framing of the messages that cross such a socket ([`send`], [`recv`]).

use serde::{Deserialize, Serialize};
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::net::UnixStream;

/// A memory file (`memfd_create`) that travels between processes as a descriptor
/// ([`MemFile::send`], [`MemFile::recv`]): how a worker's bulk (a hand-over, a
/// result's samples) reaches its reader without passing through the parent's memory.
/// The file is gone when the last process holding it closes it, so nothing is left
/// behind on any exit.
pub struct MemFile(std::fs::File);

impl MemFile {
    /// A new, empty one, named `name` (as `/proc/PID/fd` shows it).
    pub fn create(name: &str) -> io::Result<MemFile> {
        let fd = rustix::fs::memfd_create(name, rustix::fs::MemfdFlags::CLOEXEC)?;
        Ok(MemFile(std::fs::File::from(fd)))
    }

    /// Writes `value` into it as JSON, from its current offset.
    pub fn write_json<T: Serialize>(&self, value: &T) -> io::Result<()> {
        let mut w = io::BufWriter::with_capacity(1 << 16, &self.0);
        serde_json::to_writer(&mut w, value)?;
        w.flush()
    }

    /// Reads what [`MemFile::write_json`] wrote, from its start.
    pub fn read_json<T: for<'de> Deserialize<'de>>(&self) -> io::Result<T> {
        let r = io::BufReader::with_capacity(1 << 16, self.from_start()?);
        Ok(serde_json::from_reader(r)?)
    }

    /// The file, its offset at its start.
    pub fn from_start(&self) -> io::Result<&std::fs::File> {
        use std::io::{Seek, SeekFrom};
        let mut f = &self.0;
        f.seek(SeekFrom::Start(0))?;
        Ok(&self.0)
    }

    /// Its length, bytes.
    pub fn len(&self) -> io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Sends its descriptor (see [`send_fd`]).
    pub fn send(&self, s: &UnixStream) -> io::Result<()> {
        send_fd(s, self.0.as_fd())
    }

    /// Receives one that [`MemFile::send`] sent.
    pub fn recv(s: &UnixStream) -> io::Result<MemFile> {
        recv_fd(s).map(|fd| MemFile(std::fs::File::from(fd)))
    }
}

impl std::fmt::Debug for MemFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.len() {
            Ok(n) => write!(f, "MemFile({n} bytes)"),
            Err(e) => write!(f, "MemFile(unknown length: {e})"),
        }
    }
}

/// Sends `fd` as one byte with `SCM_RIGHTS`.
pub fn send_fd(s: &UnixStream, fd: BorrowedFd<'_>) -> io::Result<()> {
    use rustix::net::{sendmsg, SendAncillaryBuffer, SendAncillaryMessage, SendFlags};
    use std::mem::MaybeUninit;
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    let fds = [fd];
    if !control.push(SendAncillaryMessage::ScmRights(&fds)) {
        return Err(io::Error::other("no room for the descriptor"));
    }
    let byte = [0u8];
    sendmsg(
        s.as_fd(),
        &[io::IoSlice::new(&byte)],
        &mut control,
        SendFlags::NOSIGNAL,
    )?;
    Ok(())
}

/// Receives the descriptor [`send_fd`] sent.
pub fn recv_fd(s: &UnixStream) -> io::Result<OwnedFd> {
    use rustix::net::{recvmsg, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags};
    use std::mem::MaybeUninit;
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let mut byte = [0u8];
    let got = recvmsg(
        s.as_fd(),
        &mut [io::IoSliceMut::new(&mut byte)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )?;
    if got.bytes != 1 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the descriptor did not arrive",
        ));
    }
    for msg in control.drain() {
        if let RecvAncillaryMessage::ScmRights(mut fds) = msg {
            if let Some(fd) = fds.next() {
                return Ok(fd);
            }
        }
    }
    Err(invalid("a message without the descriptor"))
}

/// The largest message [`recv`] accepts (a result with every sample of a long run kept).
const MAX_MESSAGE: usize = 1 << 30;

/// Writes one message on a stream socket: its CBOR (which, unlike JSON, carries a NaN
/// or an infinity as it is), framed by its length (4 bytes, little-endian). The
/// worker protocol ([`crate::session::worker`]) and a paired side's turns
/// ([`crate::harness::paired`]) both travel so.
pub fn send<T: Serialize>(s: &mut UnixStream, msg: &T) -> io::Result<()> {
    let mut body = Vec::new();
    ciborium::into_writer(msg, &mut body).map_err(invalid)?;
    let len = u32::try_from(body.len()).map_err(|_| invalid("message too long"))?;
    // The length, then the body, without a copy of the body (a hand-over's can be
    // megabytes).
    s.write_all(&len.to_le_bytes())?;
    s.write_all(&body)
}

/// Reads one message [`send`] wrote; `Ok(None)` at the end of the stream before a
/// message begins.
pub fn recv<T: for<'de> Deserialize<'de>>(s: &mut UnixStream) -> io::Result<Option<T>> {
    let mut len = [0u8; 4];
    match io::Read::read_exact(s, &mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_MESSAGE {
        return Err(invalid(format!("a message of {len} bytes")));
    }
    let mut body = vec![0u8; len];
    io::Read::read_exact(s, &mut body)?;
    ciborium::from_reader(body.as_slice())
        .map(Some)
        .map_err(invalid)
}

fn invalid(e: impl ToString) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, SeekFrom};

    #[test]
    fn a_descriptor_and_a_memory_file_cross_a_socket() {
        let (a, b) = UnixStream::pair().unwrap();
        let file = tempfile::tempfile().unwrap();
        (&file).write_all(b"scratch").unwrap();
        send_fd(&a, file.as_fd()).unwrap();
        let mut f = std::fs::File::from(recv_fd(&b).unwrap());
        f.seek(SeekFrom::Start(0)).unwrap();
        let mut got = String::new();
        f.read_to_string(&mut got).unwrap();
        assert_eq!(got, "scratch");

        let m = MemFile::create("test-memfile").unwrap();
        assert!(m.is_empty().unwrap());
        m.write_json(&vec![1u32, 2, 3]).unwrap();
        m.send(&a).unwrap();
        let back = MemFile::recv(&b).unwrap();
        assert_eq!(back.read_json::<Vec<u32>>().unwrap(), vec![1, 2, 3]);
        assert_eq!(back.len().unwrap(), m.len().unwrap());
    }
}
