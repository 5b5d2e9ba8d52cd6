//! `ipc.bw`: one-way streaming bandwidth (lmbench's bw_pipe, bw_unix, bw_tcp). The
//! master writes `size`-byte chunks into a byte stream; the forked receiver reads and
//! counts them. One operation is one chunk.
//!
//! So that the clock covers delivery and not only the copy into a buffer, each batch
//! ends inside the clock with the receiver's acknowledgement on the back channel,
//! carrying the byte count it read; the master checks it is exactly k × size. Before
//! each batch (untimed) the master announces the batch's byte count on the stream.

use super::link::{read_all, write_all, Link};
use super::mb_per_s;
use crate::bench::facts::Figure::MessageBandwidth;
use crate::bench::facts::*;
use crate::bench::Fact;
use crate::bench::{Kind, OrOs, ParamSpec, Params, Prepared, Simple};
use crate::error::BenchError;
use crate::harness::{Body, Plan};
use crate::os::affinity::Pin;
use crate::os::interrupt;
use crate::os::ipc::MsgBuf;
use crate::os::task::{self, Child};
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

static PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "transport",
        default: "pipe,unix_stream,tcp",
        about: "a pipe, an AF_UNIX stream socket, or TCP over 127.0.0.1 (TCP_NODELAY)",
        kind: Kind::Choice(&["pipe", "unix_stream", "tcp"]),
    },
    ParamSpec {
        name: "size",
        default: "4096,65536",
        about: "the chunk written by one write (and read by the receiver's reads)",
        kind: Kind::Bytes {
            min: 1,
            max: 16 << 20,
        },
    },
    crate::bench::ctx::placement(
        "same-cpu",
        "writer and reader on one CPU, on two different CPUs, or placed by the scheduler",
    ),
];

/// `ipc.bw`.
pub const BW: Simple = Simple {
    name: "ipc.bw",
    facts: Facts {
        quotes: &[Quote {
            show: Show::Bandwidth { bytes: 65536.0 },
            ..quote(
                MessageBandwidth,
                0,
                "transport=pipe size=65536 placement=same-cpu",
                "pipe, 64 KiB writes",
            )
        }],
        serial: Some(PARTNER),
        partner: true,
        switches: true,
        ..SYSCALL.on(Libc, "write (pipe) or send (sockets) of each chunk")
    },
    about: "one-way streaming to a forked reader: one size-byte chunk, delivery included",
    origin: "lmbench bw_pipe, bw_unix, bw_tcp; nagy (VAX/VMS) mailbox bandwidth",
    params: PARAMS,
    prepare,
};

/// Bytes a batch moves at least, so the acknowledgement that ends it is a small part.
const BATCH_BYTES: u64 = 4 << 20;

/// The receiver: for each announced count, read and count at least that many bytes
/// with `size`-byte reads, then report the count. Ends at end of file.
fn receive(port_fds: (RawFd, RawFd), buf: &mut [u8]) -> i32 {
    let (rd, wr) = port_fds;
    let mut head = [0u8; 8];
    loop {
        match read_all(rd, &mut head) {
            0 => return 0,
            8 => {}
            _ => return 2,
        }
        let want = u64::from_le_bytes(head);
        let mut count = 0u64;
        while count < want {
            let r = task::read_fd(rd, buf);
            if r > 0 {
                count += r as u64;
            } else if r < 0 && task::errno() == libc::EINTR {
                continue;
            } else {
                return 2;
            }
        }
        if write_all(wr, &count.to_le_bytes(), false) != 8 {
            return 3;
        }
    }
}

/// The writer's side.
struct Bw {
    link: Link,
    rd: RawFd,
    wr: RawFd,
    socket: bool,
    chunk: MsgBuf,
    size: usize,
    child: Option<Child>,
    _pin: Option<Pin>,
}

impl Bw {
    #[cold]
    fn broken(&mut self, what: &str) -> BenchError {
        let err = std::io::Error::last_os_error();
        if interrupt::interrupted() {
            return BenchError::Interrupted;
        }
        if let Some(Ok(Some(st))) = self.child.as_mut().map(|c| c.try_wait()) {
            return BenchError::Failed(format!(
                "the receiver {}",
                task::describe_status(st)
            ));
        }
        BenchError::Failed(format!("{what}: {err}"))
    }
}

impl Body for Bw {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for _ in 0..iters {
            if write_all(self.wr, self.chunk.text(), self.socket) != self.size as isize {
                return Err(self.broken("write"));
            }
        }
        let mut ack = [0u8; 8];
        if read_all(self.rd, &mut ack) != 8 {
            return Err(self.broken("read (acknowledgement)"));
        }
        let count = u64::from_le_bytes(ack);
        if count != iters * self.size as u64 {
            return Err(BenchError::Failed(format!(
                "the receiver counted {count} bytes, not {} ({iters} chunks of {})",
                iters * self.size as u64,
                self.size
            )));
        }
        Ok(())
    }

    fn reset(&mut self, iters: u64) -> Result<(), BenchError> {
        let head = (iters * self.size as u64).to_le_bytes();
        if write_all(self.wr, &head, self.socket) != 8 {
            return Err(self.broken("write (announcement)"));
        }
        Ok(())
    }
}

impl Drop for Bw {
    fn drop(&mut self) {
        self.link.stop();
        if let Some(mut c) = self.child.take() {
            let _ = c.reap_by(Instant::now() + Duration::from_secs(2));
        }
    }
}

fn prepare(p: &Params) -> Result<Prepared, BenchError> {
    let transport = p.get("transport");
    let size = usize::try_from(p.int("size"))
        .map_err(|_| BenchError::Failed("size out of range".into()))?;
    let where_ = p.get("placement");
    let (pin, slave_cpus) = crate::bench::ctx::place_pinned(where_)?;
    let mut link = Link::open(transport, size)?;
    if !link.is_stream() || link.master_fds.len() != 2 || link.slave_fds.len() != 2 {
        return Err(BenchError::Failed(format!(
            "{transport} is not a byte stream"
        )));
    }
    let (rd, wr) = (
        link.master_fds[0].as_raw_fd(),
        link.master_fds[1].as_raw_fd(),
    );
    let slave = (link.slave_fds[0].as_raw_fd(), link.slave_fds[1].as_raw_fd());
    let socket = transport != "pipe";
    let mut buf = vec![0u8; size];
    let close = link.master_raw();
    let cpus = &slave_cpus[..];
    let buf_ref = &mut buf[..];
    // SAFETY: the receiver gives up the master's ends and runs `receive`: reads and
    // writes into its own buffer, no allocation or lock.
    #[allow(unsafe_code)]
    let child =
        unsafe { task::fork_partner(&close, cpus, move || receive(slave, buf_ref)) }
            .or_os("fork")?;
    link.slave_fds.clear();
    let mut chunk = MsgBuf::new(size);
    for (i, b) in chunk.text_mut().iter_mut().enumerate() {
        *b = i as u8;
    }
    let bw = Bw {
        link,
        rd,
        wr,
        socket,
        chunk,
        size,
        child: Some(child),
        _pin: pin,
    };
    let plan = Plan {
        fixed_batch: Some((BATCH_BYTES / size as u64).max(4)),
        ..crate::bench::blocking(where_ != "cross-cpu")
    };
    Ok(Prepared::new(Box::new(bw))
        .op("chunk")
        .plan(plan)
        .after(Box::new(move |_, m| {
            let per = m.analysis.figure();
            Ok(vec![Fact::new(
                "bandwidth",
                mb_per_s(size as f64, per),
                "MB/s",
                "size / time per chunk, in 10^6 bytes/s, one direction, delivery included",
            )])
        })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::testing::{self, median, params_with};

    #[test]
    fn every_stream_moves_chunks_at_two_sizes() {
        for t in ["pipe", "unix_stream", "tcp"] {
            for size in ["4096", "65536"] {
                let args = [&format!("transport={t}"), &format!("size={size}")];
                let p = params_with(&BW, &args.map(String::as_str));
                let prep = prepare(&p).unwrap_or_else(|e| panic!("{t} {size}: {e}"));
                assert!(prep.after.is_some(), "{t} {size}: an after step");
                let (m, facts) = testing::measure(prep);
                let per = median(&m);
                assert!(per > 0.0 && per < 10e6, "{t} {size}: {per} ns");
                assert!(facts[0].name == "bandwidth" && facts[0].value > 0.0);
            }
        }
    }
}
