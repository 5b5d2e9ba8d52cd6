//! `ipc.rtt`: the master sends a `size`-byte message through one transport and waits
//! for the slave's whole echo through the other direction; one operation is one round
//! trip (Nagy's VMS mailbox echo, Table III).
//!
//! Checks inside the clock are O(1): the received length, and a sequence number the
//! master stamps into the first bytes of every message. Before each batch (untimed)
//! the last echo is compared byte for byte with what was sent, and the message gets a
//! new pattern, so a stale or damaged echo cannot pass.

use super::link::{Link, Port, CUT_SHORT, TIMED_OUT, TRANSPORTS};
use super::mb_per_s;
use super::priority::{self, MasterSched};
use crate::bench::facts::Figure::{MessageOverhead, PipeRtt};
use crate::bench::facts::*;
use crate::bench::Fact;
use crate::bench::{Kind, OrOs, ParamSpec, Params, Prepared, Simple};
use crate::error::BenchError;
use crate::harness::Body;
use crate::os::affinity::Pin;
use crate::os::interrupt;
use crate::os::ipc::MsgBuf;
use crate::os::task::{self, Child, ExitWatch};
use std::time::{Duration, Instant};

static PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "transport",
        default: "pipe,unix_stream,unix_dgram,socketpair,posix_mq,sysv_msg,shm_futex,tcp,udp",
        about: "two pipes; an AF_UNIX stream (bound, connected, name removed) or two AF_UNIX datagram sockets; socketpair(AF_UNIX, SOCK_STREAM); two POSIX message queues; a System V queue; two one-slot mailboxes in shared memory woken by futex; TCP (TCP_NODELAY) or UDP over 127.0.0.1",
        kind: Kind::Choice(TRANSPORTS),
    },
    ParamSpec {
        name: "size",
        default: "4,64,512,1024,4096,10240,65536",
        about: "the message size; a transport whose limits refuse it is skipped with the reason",
        kind: Kind::Bytes {
            min: 1,
            max: 16 << 20,
        },
    },
    crate::bench::ctx::placement(
        "same-cpu",
        "master and slave on one CPU, on two different CPUs, or placed by the scheduler",
    ),
    ParamSpec {
        name: "priority",
        default: "0:0",
        about: "master:slave, each a nice value (-20 to 19) or rtN (SCHED_FIFO N, 1 to 99); the master's applies to the measuring thread only and is restored",
        kind: Kind::Pattern {
            shape: "M:S",
            check: priority::check,
        },
    },
];

/// `ipc.rtt`.
pub const RTT: Simple = Simple {
    name: "ipc.rtt",
    facts: Facts {
        quotes: &[
            quote(
                PipeRtt,
                0,
                "transport=pipe size=4 placement=same-cpu",
                "4 B echo, same CPU",
            ),
            quote(
                MessageOverhead,
                0,
                "transport=posix_mq size=4 placement=same-cpu",
                "POSIX mq 4 B echo",
            ),
            quote(
                MessageOverhead,
                1,
                "transport=sysv_msg size=4 placement=same-cpu",
                "SysV msg 4 B echo",
            ),
        ],
        enters: Enters::Fixed(Fixed {
            path: Libc,
            unless: &[("transport", "shm_futex", Generic)],
            calls:
                "write/send and read/recv, mq_send and mq_receive, msgsnd and msgrcv; \
                shm_futex: FUTEX_WAKE and FUTEX_WAIT",
        }),
        serial: Some(PARTNER),
        partner: true,
        switches: true,
        ..SYSCALL
    },
    about:
        "a size-byte message to a forked slave and its whole echo back: one round trip",
    origin: "nagy (VAX/VMS) Table III mailbox echo; manea1999 §4 pipes",
    params: PARAMS,
    prepare,
};

/// What the slave does with a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(test), allow(dead_code))]
enum Echo {
    /// Sends it back unchanged.
    Faithful,
    /// Flips the last byte first (tests prove the master notices).
    Corrupt,
}

/// The slave's loop: receive, echo, until a stop message or end of file.
fn echo(port: &mut Port, buf: &mut MsgBuf, mode: Echo) -> i32 {
    loop {
        let n = port.recv(buf);
        if n == 0 {
            return 0;
        }
        if n < 0 {
            if n == -1 && task::errno() == libc::EINTR {
                continue;
            }
            return 2;
        }
        let n = n as usize;
        if n > buf.text().len() {
            return 3;
        }
        if mode == Echo::Corrupt {
            buf.text_mut()[n - 1] ^= 0xff;
        }
        if port.send(buf, n) != n as isize {
            return 3;
        }
    }
}

/// Writes the low bytes of `seq` into the start of the message.
#[inline(always)]
fn stamp(text: &mut [u8], seq: u64) {
    let n = text.len().min(8);
    text[..n].copy_from_slice(&seq.to_le_bytes()[..n]);
}

/// Whether the message starts with the low bytes of `seq`.
#[inline(always)]
fn stamped(text: &[u8], seq: u64) -> bool {
    let n = text.len().min(8);
    text[..n] == seq.to_le_bytes()[..n]
}

/// A message pattern that differs from one batch to the next.
fn fill(text: &mut [u8], generation: u64) {
    for (i, b) in text.iter_mut().enumerate() {
        *b = (i as u64)
            .wrapping_mul(31)
            .wrapping_add(generation.wrapping_mul(17)) as u8;
    }
}

/// The master's side of a live echo.
struct Rtt {
    /// Wakes the master when the slave dies ([`Link::waker`]; none for a stream, whose
    /// end of file does); ended before the slave is stopped ([`Rtt::finish`]), so
    /// that a stop is never taken for a death.
    watch: Option<ExitWatch>,
    link: Link,
    size: usize,
    out: MsgBuf,
    inp: MsgBuf,
    seq: u64,
    generation: u64,
    echoed: bool,
    child: Option<Child>,
    // Restored when dropped, after the slave has ended.
    _sched: Option<MasterSched>,
    _pin: Option<Pin>,
}

impl Rtt {
    #[inline(always)]
    fn round_trip(&mut self) -> Result<(), BenchError> {
        self.seq = self.seq.wrapping_add(1);
        stamp(self.out.text_mut(), self.seq);
        if self.link.master.send(&mut self.out, self.size) != self.size as isize {
            return Err(self.broken("send"));
        }
        let got = loop {
            let r = self.link.master.recv(&mut self.inp);
            if r >= 0 {
                break r;
            }
            self.waited(r)?;
        };
        if got != self.size as isize || !stamped(self.inp.text(), self.seq) {
            return Err(self.mismatch(got));
        }
        self.echoed = true;
        Ok(())
    }

    /// A receive that did not deliver: wait again after a timeout or an interrupted
    /// call if the slave lives and no interruption is pending; otherwise the error.
    #[cold]
    fn waited(&mut self, r: isize) -> Result<(), BenchError> {
        if r == TIMED_OUT {
            self.check_alive()?;
            self.link.master.arm();
            return Ok(());
        }
        if r == -1 && task::errno() == libc::EINTR && !interrupt::interrupted() {
            return Ok(());
        }
        Err(if r == CUT_SHORT {
            BenchError::Failed("the echo stream ended inside a message".into())
        } else {
            self.broken("receive")
        })
    }

    #[cold]
    fn mismatch(&mut self, got: isize) -> BenchError {
        if got == 0 {
            return match self.check_alive() {
                Err(e) => e,
                Ok(()) => BenchError::Failed("the slave stopped echoing".into()),
            };
        }
        BenchError::Failed(format!(
            "echo mismatch: round trip {} came back as {got} bytes (sent {}) {} its sequence stamp",
            self.seq,
            self.size,
            if stamped(self.inp.text(), self.seq) {
                "with"
            } else {
                "without"
            }
        ))
    }

    #[cold]
    fn broken(&mut self, what: &str) -> BenchError {
        let err = std::io::Error::last_os_error();
        if let Err(e) = self.check_alive() {
            return e;
        }
        BenchError::Failed(format!("{what}: {err}"))
    }

    #[cold]
    fn check_alive(&mut self) -> Result<(), BenchError> {
        if interrupt::interrupted() {
            return Err(BenchError::Interrupted);
        }
        match self.child.as_mut().map(|c| (c.pid(), c.try_wait())) {
            Some((pid, Ok(Some(st)))) => Err(BenchError::Failed(format!(
                "the slave (pid {pid}) {}",
                task::describe_status(st)
            ))),
            _ => Ok(()),
        }
    }

    /// Stops the slave and reaps it (killing it if it does not end in time).
    fn finish(&mut self) -> Result<(), BenchError> {
        // The watcher first: the slave's end below must not wake the master again.
        drop(self.watch.take());
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        self.link.stop();
        match child.reap_by(Instant::now() + Duration::from_secs(2)) {
            Ok((_, true)) => Err(BenchError::Failed(
                "the slave did not stop and was killed".into(),
            )),
            Ok((st, false)) if !task::exited_ok(st) => Err(BenchError::Failed(format!(
                "the slave {}",
                task::describe_status(st)
            ))),
            Ok(_) => Ok(()),
            Err(e) => Err(BenchError::os("waitpid", e)),
        }
    }
}

impl Body for Rtt {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for _ in 0..iters {
            self.round_trip()?;
        }
        Ok(())
    }

    fn reset(&mut self, _iters: u64) -> Result<(), BenchError> {
        if self.echoed && self.inp.text() != self.out.text() {
            let at = self
                .inp
                .text()
                .iter()
                .zip(self.out.text())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            return Err(BenchError::Failed(format!(
                "echo mismatch: the last echo differs from the message at byte {at} of {}",
                self.size
            )));
        }
        self.generation += 1;
        fill(self.out.text_mut(), self.generation);
        self.link.master.arm();
        Ok(())
    }
}

impl Drop for Rtt {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

fn prepare(p: &Params) -> Result<Prepared, BenchError> {
    make(p, Echo::Faithful)
}

fn make(p: &Params, mode: Echo) -> Result<Prepared, BenchError> {
    let rtt = build(p, mode)?;
    let size = rtt.size;
    Ok(Prepared::new(Box::new(rtt))
        .op("round trip")
        .plan(crate::bench::blocking(p.get("placement") != "cross-cpu"))
        .after(Box::new(move |_, m| {
            let rt = m.analysis.figure();
            Ok(vec![
                Fact::new(
                    "overhead_us",
                    rt / 1e3,
                    "us",
                    "one round trip (message out, whole echo back), as Nagy's mailbox overhead",
                ),
                Fact::new(
                    "bandwidth",
                    mb_per_s(2.0 * size as f64, rt),
                    "MB/s",
                    "2 x size / round trip, in 10^6 bytes/s: both directions are counted",
                ),
            ])
        })))
}

/// Builds the link, forks the slave, and applies placement and priorities.
fn build(p: &Params, mode: Echo) -> Result<Rtt, BenchError> {
    let (master_sched, slave_sched) =
        priority::parse(p.get("priority")).map_err(|why| {
            BenchError::Failed(format!(
                "ipc.rtt: bad value for parameter priority: {why}"
            ))
        })?;
    let transport = p.get("transport");
    let size = usize::try_from(p.int("size"))
        .map_err(|_| BenchError::Failed("size out of range".into()))?;
    let where_ = p.get("placement");
    let (pin, slave_cpus) = crate::bench::ctx::place_pinned(where_)?;
    let mut link = Link::open(transport, size)?;

    let mut port = link.slave.clone();
    let mut buf = MsgBuf::new(size);
    let close = link.master_raw();
    let cpus = &slave_cpus[..];
    let (port_ref, buf_ref) = (&mut port, &mut buf);
    // SAFETY: the echo gives up the master's ends and runs `echo`: receive and send on
    // its port into its own buffer, no allocation or lock.
    #[allow(unsafe_code)]
    let child = unsafe {
        task::fork_partner(&close, cpus, move || echo(port_ref, buf_ref, mode))
    }
    .or_os("fork")?;
    link.slave_fds.clear();
    let pid = child.pid();
    // A stream gives the master end of file when the slave dies; the other
    // transports need a watcher to wake it, or else a time limit.
    let watch = if link.is_stream() {
        None
    } else {
        let wake = link.waker();
        // SAFETY: the waker sends a stop message, writes a mailbox or shuts a socket:
        // system calls and atomics on the watcher's copies.
        #[allow(unsafe_code)]
        let watch = unsafe { ExitWatch::start(pid, wake) }.ok();
        if watch.is_none() {
            link.be_patient()?;
        }
        watch
    };
    let mut rtt = Rtt {
        watch,
        link,
        size,
        out: MsgBuf::new(size),
        inp: MsgBuf::new(size),
        seq: 0,
        generation: 0,
        echoed: false,
        child: Some(child),
        _sched: None,
        _pin: pin,
    };
    priority::set_child(pid, slave_sched)?;
    rtt._sched = Some(MasterSched::set(master_sched)?);
    Ok(rtt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{params, testing};

    fn params_of(pairs: &[(&str, &str)]) -> Params {
        let args: Vec<params::ParamArg> = pairs
            .iter()
            .map(|(k, v)| format!("{k}={v}").parse().unwrap())
            .collect();
        let mut all = params::expand("ipc.rtt", PARAMS, &args).unwrap();
        assert_eq!(all.len(), 1);
        all.remove(0)
    }

    /// Measures one instance in the smoke profile: the median round trip in ns, or
    /// the reason it was skipped.
    fn smoke(pairs: &[(&str, &str)]) -> Result<f64, String> {
        let prep = testing::prepare(&RTT, &params_of(pairs), &Default::default())?;
        let (m, facts) = testing::measure(prep);
        assert!(facts.iter().any(|f| f.name == "overhead_us"), "{facts:?}");
        assert!(facts.iter().any(|f| f.name == "bandwidth"), "{facts:?}");
        Ok(testing::median(&m))
    }

    #[test]
    fn every_transport_round_trips_at_two_sizes() {
        for t in TRANSPORTS {
            for size in ["4", "4096"] {
                let rt = smoke(&[("transport", t), ("size", size)])
                    .unwrap_or_else(|why| panic!("{t} {size}: skipped: {why}"));
                assert!(rt > 0.0 && rt < 10e6, "{t} {size}: {rt} ns");
            }
        }
    }

    #[test]
    fn placements_and_a_large_stream_message_round_trip() {
        for (t, size, place) in [
            ("pipe", "200k", "free"),
            ("shm_futex", "100", "cross-cpu"),
            ("udp", "65507", "same-cpu"),
        ] {
            match smoke(&[("transport", t), ("size", size), ("placement", place)]) {
                Ok(rt) => assert!(rt > 0.0 && rt < 10e6, "{t} {size}: {rt} ns"),
                Err(why) => assert!(place == "cross-cpu" && why.contains("two CPUs")),
            }
        }
    }

    #[test]
    fn size_limits_skip_with_a_reason() {
        let why = smoke(&[("transport", "udp"), ("size", "65508")]).unwrap_err();
        assert!(why.contains("65507"), "{why}");
        let msgmax: usize = std::fs::read_to_string("/proc/sys/kernel/msgmax")
            .map_or(8192, |s| s.trim().parse().unwrap());
        let over = (msgmax + 1).to_string();
        let why = smoke(&[("transport", "sysv_msg"), ("size", &over)]).unwrap_err();
        assert!(why.contains("msgmax"), "{why}");
        // Above msgsize_max a POSIX queue either opens anyway (privilege) or skips.
        match smoke(&[("transport", "posix_mq"), ("size", "16m")]) {
            Ok(rt) => assert!(rt > 0.0),
            Err(why) => assert!(why.contains("posix_mq"), "{why}"),
        }
    }

    #[test]
    fn a_corrupted_echo_fails_the_benchmark() {
        // Long messages: the byte comparison before the next batch finds it; a short
        // one: the sequence stamp inside the clock does.
        for (t, size) in [("pipe", "64"), ("shm_futex", "4096"), ("udp", "4")] {
            let mut prep = make(
                &params_of(&[("transport", t), ("size", size)]),
                Echo::Corrupt,
            )
            .unwrap();
            let body = prep.body.as_mut();
            body.reset(3).unwrap();
            let e = body.run(3).and_then(|()| body.reset(3)).unwrap_err();
            assert!(
                matches!(&e, BenchError::Failed(m) if m.contains("echo mismatch")),
                "{t} {size}: {e}"
            );
        }
        assert!(!stamped(&[1, 0, 0, 0], 2));
        assert!(stamped(&[2, 0, 0, 0, 0, 0, 0, 0, 9], 2));
    }

    #[test]
    fn a_slave_that_dies_ends_the_wait_without_a_time_limit() {
        for t in TRANSPORTS {
            let mut rtt = build(
                &params_of(&[("transport", t), ("size", "4")]),
                Echo::Faithful,
            )
            .unwrap_or_else(|e| panic!("{t}: {e}"));
            rtt.run(10).unwrap_or_else(|e| panic!("{t}: {e}"));
            assert_eq!(rtt.watch.is_some(), !rtt.link.is_stream(), "{t}: watched");
            assert!(!rtt.link.patient(), "{t}: no time limit");
            let pid = rtt.child.as_ref().unwrap().pid();
            // The child this test just made, not yet reaped.
            assert_eq!(task::tgkill(pid, pid, libc::SIGKILL), 0);
            // A stream ends by itself (the error may come before the child is a
            // zombie); the others are woken once it is one, and say how it ended.
            let e = rtt.run(u64::MAX).unwrap_err().to_string();
            let said = e.contains("slave") && e.contains("signal");
            assert!(said || rtt.link.is_stream(), "{t}: {e}");
        }
    }

    #[test]
    fn a_patient_master_sets_its_time_limit_on_every_transport() {
        // The fallback where no watcher can start (kernels before 5.3).
        for t in TRANSPORTS {
            let mut link = Link::open(t, 4).unwrap_or_else(|e| panic!("{t}: {e}"));
            link.be_patient().unwrap_or_else(|e| panic!("{t}: {e}"));
            assert!(link.patient(), "{t}");
        }
    }

    #[test]
    fn bad_priority_syntax_is_a_parameter_error() {
        let arg: params::ParamArg = "priority=5".parse().unwrap();
        let e = params::expand("ipc.rtt", PARAMS, &[arg]).unwrap_err();
        assert!(e.to_string().contains("parameter priority"), "{e}");
        let mut p = params_of(&[("transport", "pipe"), ("size", "4")]);
        p.0.iter_mut().find(|(n, _)| *n == "priority").unwrap().1 = "x:y".into();
        let e = prepare(&p).err().unwrap();
        assert!(
            matches!(&e, BenchError::Failed(m) if m.contains("parameter priority")),
            "{e}"
        );
    }

    #[test]
    fn a_slave_priority_reaches_the_child_only() {
        use crate::os::ipc::get_nice;
        let me = task::gettid();
        let before = get_nice(me).unwrap();
        let p = params_of(&[
            ("transport", "pipe"),
            ("size", "4"),
            ("priority", &format!("{before}:5")),
        ]);
        let mut rtt = build(&p, Echo::Faithful).unwrap();
        let child = rtt.child.as_ref().unwrap().pid();
        assert_eq!(get_nice(child).unwrap(), 5);
        rtt.reset(10).unwrap();
        rtt.run(10).unwrap();
        rtt.reset(10).unwrap();
        assert_eq!(get_nice(me).unwrap(), before);
        drop(rtt);
        let rt = smoke(&[("transport", "pipe"), ("size", "64"), ("priority", "0:5")]);
        match rt {
            Ok(rt) => assert!(rt > 0.0 && rt < 10e6),
            Err(why) => assert!(why.contains("priority"), "{why}"),
        }
    }
}
