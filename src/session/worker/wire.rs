//! What the run's parent and a worker say to each other: the messages, serialised as
//! CBOR (which, unlike JSON, carries a NaN or an infinity as it is), each framed by its
//! length (4 bytes, little-endian) on a Unix stream socket ([`crate::os::memfile::send`]).
//! A scratch file's descriptor, and a hand-over's ([`Sealed`]), travel beside their
//! message as `SCM_RIGHTS` on a one-byte message of their own.

use crate::error::BenchError;
use crate::harness::probe::Probes;
use crate::harness::{Expect, Held, Profile, Span};
use crate::results::BenchResult;
use crate::session::slot::Carried;
use serde::{Deserialize, Serialize};
use std::io::{self, Read, Write};
use std::path::PathBuf;

pub use crate::os::memfile::{recv, recv_fd, send, send_fd, MemFile};

/// The parent's requests.
#[derive(Debug, Serialize, Deserialize)]
pub enum Request {
    /// The first message: what the worker measures, and how.
    Start(Box<Start>),
    /// Instead of a start: read the machine's probes once on the home CPU, with the
    /// clock the start describes (its benchmark is not used), answer
    /// [`Reply::Probed`] and exit. A fresh process each time, as a round's.
    Probe(Box<Start>),
    /// Instead of a start: measure one round of a paired measurement (both sides
    /// prepared in this worker, `--reference`), answer [`Reply::Paired`] and exit.
    Pair(Box<PairStart>),
    /// Measure one round.
    Visit {
        /// The round (0 first).
        round: u32,
        /// The canary reading the parent took just before, ns per getpid.
        canary_ns: f64,
        /// The reading above which a round is measured again (0: none; see
        /// `method::REDO_ABOVE`).
        limit_ns: f64,
        /// The machine's floor the instance is held to, as the run knows it now.
        held: Held,
    },
    /// The kernel's verdict on the round's samples, one bit set per sample, in order
    /// (the answer to [`Reply::Spans`]).
    Flags(Vec<u16>),
    /// The scratch file asked for: on success its descriptor follows.
    Scratch(Result<(), BenchError>),
    /// Hand over what the instance has gathered ([`Reply::Handed`]); the worker then
    /// exits, and the next round is measured by a fresh one.
    Hand,
    /// Conclude and send the result; the worker then exits.
    Finish {
        /// The run was interrupted: no after step, and the result says so.
        interrupted: bool,
        /// Why the run gives it no more rounds, when it stops it early.
        stopped: Option<crate::harness::Stop>,
        /// The machine's floor it is held to, as the run knows it at the end.
        held: Held,
    },
}

/// The version of this conversation: a worker started from a binary rebuilt since the
/// run began (another protocol) is refused at once.
pub const PROTOCOL: u32 = 13;

/// The worker's messages.
#[derive(Debug, Serialize, Deserialize)]
pub enum Reply {
    /// The answer to [`Request::Start`]: the worker found its benchmark and is ready.
    Ready {
        /// [`PROTOCOL`] as the worker knows it.
        protocol: u32,
        /// The worker's crate version.
        version: String,
    },
    /// The round ended, or why it ended the instance (skipped, failed, interrupted).
    Visited(Result<Visited, BenchError>),
    /// The answer to [`Request::Probe`].
    Probed {
        /// The probes' readings.
        probes: Probes,
    },
    /// The round's samples' spans on the kernel's clock, for flagging by the kernel's
    /// events (`--cull kernel`): answered by [`Request::Flags`].
    Spans {
        /// The measuring thread.
        tid: u32,
        /// One per sample of the round.
        spans: Vec<Option<Span>>,
        /// What the operation is expected to do.
        expect: Expect,
    },
    /// A scratch file of `len` bytes is needed: answered by [`Request::Scratch`].
    NeedScratch {
        /// Its length.
        len: u64,
    },
    /// The result (None when an interrupted run never measured a round of it),
    /// without its samples: when it kept them, a [`MemFile`] of them (JSON, as
    /// [`crate::results::Samples`]) follows.
    Result {
        /// The result.
        result: Option<Box<BenchResult>>,
        /// Its samples follow as a memory file's descriptor.
        samples: bool,
    },
    /// The answer to [`Request::Pair`]: the round's pairs `(a, b)`, one per quartet,
    /// ns per operation of the reference and of the alternative, or why there are none.
    Paired(Result<Vec<(f64, f64)>, BenchError>),
    /// What the instance has gathered, for the next worker (the answer to
    /// [`Request::Hand`]): its [`Sealed`] descriptor follows.
    Handed {
        /// The encoding's length, bytes.
        bytes: u64,
    },
}

/// What a worker says of a visit that did not end its instance.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Visited {
    /// Wants more rounds (not converged, below its maximum).
    pub open: bool,
    /// The interval's relative half-width at the last look (infinite before one).
    pub ci: f64,
    /// The interval's relative floor at the last look, half a clock step per
    /// operation (0 before one).
    pub floor: f64,
    /// The machine's probes, read in the worker just before the round (None when the
    /// round was not measured, or measured as copies).
    pub probes: Option<Probes>,
}

/// One paired round: the reference's start, and the alternative's parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PairStart {
    /// The reference instance, as a worker's start.
    pub start: Start,
    /// The alternative's parameter values.
    pub other: Vec<(String, String)>,
    /// Where the alternative must live.
    pub home: crate::harness::paired::Home,
}

/// What the worker needs to measure as the parent would.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Start {
    /// The benchmark's catalogue name.
    pub bench: String,
    /// Its parameter values.
    pub params: Vec<(String, String)>,
    /// The profile.
    pub profile: Profile,
    /// The clock's name ("tsc" or "monotonic") and its calibrated tick.
    pub clock: String,
    /// Nanoseconds per tick.
    pub ns_per_tick: f64,
    /// The clock's granularity, ns.
    pub granularity_ns: f64,
    /// The clock's quantum, ns.
    pub resolution_ns: f64,
    /// `--batch`.
    pub batch: Option<u64>,
    /// Record spans for the kernel's events.
    pub spans: bool,
    /// The run's start on the clock.
    pub begin: u64,
    /// Keep the samples in the result.
    pub keep_samples: bool,
    /// The most rounds it gets.
    pub max_rounds: usize,
    /// `--dir`.
    pub dir: Option<PathBuf>,
    /// `--drop-caches`.
    pub drop_caches: bool,
    /// The profile's name for the run context (sizes the default scratch file).
    pub context_profile: Option<String>,
    /// Sample where the time goes during the timed batches at this rate, per second
    /// of running time (`syscost explain`); 0: do not.
    #[serde(default)]
    pub explain: u64,
    /// Earlier workers gathered samples for this instance: this one takes them up,
    /// from the [`Sealed`] descriptor that follows the start.
    #[serde(default)]
    pub resume: bool,
    /// The CPU to measure on: the one whose canary read fastest just before (see
    /// `Session::canary`); None: the first CPU the worker may use.
    #[serde(default)]
    pub home: Option<usize>,
}

/// What a worker handed over ([`Reply::Handed`]): its encoding, in a [`MemFile`]. The
/// parent passes the descriptor on without reading or mapping the file, so a
/// benchmark's samples never take room in the parent's memory (docs/measurements/rounds.md,
/// "Workers and hand-overs").
#[derive(Debug)]
pub struct Sealed(pub MemFile);

impl Sealed {
    /// Encodes `c` into a new memory file: the length of the rest's CBOR (8 bytes,
    /// little-endian), that CBOR, the number of samples (8 bytes), then the samples
    /// packed. The samples are streamed, so no second copy of them is made on either
    /// side (a hand-over of 100,000 samples is 12.7 MB packed).
    pub fn seal(c: &Carried) -> io::Result<Sealed> {
        let f = MemFile::create("syscost-handover")?;
        let mut head = Vec::new();
        ciborium::into_writer(c, &mut head).map_err(invalid)?;
        let mut w = io::BufWriter::with_capacity(1 << 16, f.from_start()?);
        w.write_all(&(head.len() as u64).to_le_bytes())?;
        w.write_all(&head)?;
        w.write_all(&(c.samples.len() as u64).to_le_bytes())?;
        crate::harness::packed::write(&mut w, &c.samples)?;
        w.flush()?;
        drop(w);
        Ok(Sealed(f))
    }

    /// Decodes all but the samples ([`Sealed::samples`] reads them).
    pub fn open(&self) -> io::Result<Carried> {
        self.read(false).map(|(c, _)| c)
    }

    /// Reads its samples back.
    pub fn samples(&self) -> io::Result<Vec<crate::harness::Sample>> {
        self.read(true).map(|(_, s)| s)
    }

    fn read(&self, samples: bool) -> io::Result<(Carried, Vec<crate::harness::Sample>)> {
        let total = self.0.len()?;
        let mut r = io::BufReader::with_capacity(1 << 16, self.0.from_start()?);
        let mut word = [0u8; 8];
        r.read_exact(&mut word)?;
        let head_len = u64::from_le_bytes(word);
        if head_len > total {
            return Err(invalid("a hand-over longer than its file"));
        }
        let mut head = vec![0u8; head_len as usize];
        r.read_exact(&mut head)?;
        let c: Carried = ciborium::from_reader(head.as_slice()).map_err(invalid)?;
        r.read_exact(&mut word)?;
        let n = u64::from_le_bytes(word);
        let size = crate::harness::packed::SIZE as u64;
        if n.checked_mul(size) != total.checked_sub(head_len + 16) {
            return Err(invalid("a hand-over whose samples do not fill its file"));
        }
        let n = if samples { n as usize } else { 0 };
        Ok((c, crate::harness::packed::read(&mut r, n)?))
    }
}

/// A message or file that does not decode.
fn invalid(e: impl ToString) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;

    #[test]
    fn messages_and_descriptors_cross_a_socket_pair() {
        let (mut a, mut b) = UnixStream::pair().unwrap();
        send(
            &mut a,
            &Request::Visit {
                round: 3,
                canary_ns: 71.5,
                limit_ns: 82.0,
                held: Held {
                    kind: Some(crate::harness::probe::WorkKind::Memory),
                    allows: 0.064,
                    strict: false,
                },
            },
        )
        .unwrap();
        match recv::<Request>(&mut b).unwrap() {
            Some(Request::Visit {
                round,
                canary_ns,
                limit_ns,
                held,
            }) => {
                assert_eq!((round, canary_ns, limit_ns), (3, 71.5, 82.0));
                assert_eq!(held.kind, Some(crate::harness::probe::WorkKind::Memory));
                assert_eq!(held.allows, 0.064);
            }
            other => panic!("{other:?}"),
        }
        drop(a);
        assert!(recv::<Reply>(&mut b).unwrap().is_none(), "end of stream");
    }

    #[test]
    fn a_result_with_a_nan_travels_as_it_is() {
        let doc = include_str!("../../../tests/fixtures/report-smoke.json");
        let run = crate::store::parse_document(doc.as_bytes()).unwrap();
        let mut r = run
            .results
            .into_iter()
            .find(|r| r.measured.is_some())
            .unwrap();
        r.facts.push(crate::results::Fact::new(
            "odd",
            f64::NAN,
            "ns",
            "not a number",
        ));
        let (mut a, mut b) = UnixStream::pair().unwrap();
        send(
            &mut a,
            &Reply::Result {
                result: Some(Box::new(r.clone())),
                samples: false,
            },
        )
        .unwrap();
        let Some(Reply::Result {
            result: Some(got), ..
        }) = recv::<Reply>(&mut b).unwrap()
        else {
            panic!("no result");
        };
        assert!(got.facts.last().unwrap().value.is_nan());
        let json = |r: &BenchResult| serde_json::to_string(r).unwrap();
        assert_eq!(json(&got), json(&r));
    }

    #[test]
    fn a_profile_travels_whole() {
        #[derive(Serialize, Deserialize)]
        struct One(Profile);
        let (mut a, mut b) = UnixStream::pair().unwrap();
        let custom = Profile {
            name: "mine",
            ..Profile::QUICK
        };
        for p in Profile::ALL.into_iter().chain([custom]) {
            send(&mut a, &One(p)).unwrap();
            let got = recv::<One>(&mut b).unwrap().unwrap().0;
            let name = if p.name == "mine" { "custom" } else { p.name };
            assert_eq!(got, Profile { name, ..p });
        }
    }

    #[test]
    fn an_oversized_frame_is_refused_not_allocated() {
        let (mut a, mut b) = UnixStream::pair().unwrap();
        a.write_all(&u32::MAX.to_le_bytes()).unwrap();
        let e = recv::<Reply>(&mut b).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{e}");
    }
}
