//! Samples packed as one byte string: how a worker hands its samples to the next one
//! (see `session::worker`). A sample is a fixed 127 bytes, little-endian, so packing
//! and unpacking are copies; as named fields, CBOR made it about 250 bytes and took
//! several milliseconds for a round's few thousand samples.

use super::{Sample, Span};
use crate::os::usage::Usage;
use serde::de::{self, Deserializer, Visitor};
use serde::Serializer;
use std::fmt;

/// Bytes per sample.
const SIZE: usize = 8 + 8 + 10 * 8 + 4 + 2 + 1 + 2 * 8 + 2 * 4;

/// Writes `samples` as one byte string (`#[serde(with = "packed")]`).
pub fn serialize<S: Serializer>(samples: &[Sample], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bytes(&pack(samples))
}

/// Reads what [`serialize`] wrote.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Sample>, D::Error> {
    d.deserialize_byte_buf(Bytes)
}

struct Bytes;

impl Visitor<'_> for Bytes {
    type Value = Vec<Sample>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "samples packed {SIZE} bytes each")
    }

    fn visit_bytes<E: de::Error>(self, b: &[u8]) -> Result<Vec<Sample>, E> {
        unpack(b).ok_or_else(|| E::invalid_length(b.len(), &self))
    }

    fn visit_byte_buf<E: de::Error>(self, b: Vec<u8>) -> Result<Vec<Sample>, E> {
        self.visit_bytes(&b)
    }
}

fn pack(samples: &[Sample]) -> Vec<u8> {
    let mut out = Vec::with_capacity(samples.len() * SIZE);
    for x in samples {
        let u = &x.usage;
        out.extend_from_slice(&x.at_ns.to_le_bytes());
        out.extend_from_slice(&x.ticks.to_le_bytes());
        for v in [
            u.user_ns,
            u.sys_ns,
            u.vol_switches,
            u.invol_switches,
            u.minor_faults,
            u.major_faults,
            u.maxrss_kib,
            u.in_blocks,
            u.out_blocks,
            u.signals,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&x.round.to_le_bytes());
        out.extend_from_slice(&x.kernel.to_le_bytes());
        let span = x.span.unwrap_or(Span {
            start_ns: 0,
            end_ns: 0,
            cpu0: 0,
            cpu1: 0,
        });
        out.push(x.span.is_some() as u8);
        out.extend_from_slice(&span.start_ns.to_le_bytes());
        out.extend_from_slice(&span.end_ns.to_le_bytes());
        out.extend_from_slice(&span.cpu0.to_le_bytes());
        out.extend_from_slice(&span.cpu1.to_le_bytes());
    }
    out
}

fn unpack(b: &[u8]) -> Option<Vec<Sample>> {
    if !b.len().is_multiple_of(SIZE) {
        return None;
    }
    Some(b.chunks_exact(SIZE).map(one).collect())
}

fn one(c: &[u8]) -> Sample {
    let mut at = 0;
    let mut take = |n: usize| {
        let s = &c[at..at + n];
        at += n;
        s
    };
    let u64_of = |s: &[u8]| u64::from_le_bytes(s.try_into().expect("8 bytes"));
    let u32_of = |s: &[u8]| u32::from_le_bytes(s.try_into().expect("4 bytes"));
    let at_ns = f64::from_le_bytes(take(8).try_into().expect("8 bytes"));
    let ticks = u64_of(take(8));
    let mut v = [0u64; 10];
    for x in &mut v {
        *x = u64_of(take(8));
    }
    let round = u32_of(take(4));
    let kernel = u16::from_le_bytes(take(2).try_into().expect("2 bytes"));
    let has_span = take(1)[0] != 0;
    let span = Span {
        start_ns: u64_of(take(8)),
        end_ns: u64_of(take(8)),
        cpu0: u32_of(take(4)),
        cpu1: u32_of(take(4)),
    };
    Sample {
        at_ns,
        ticks,
        usage: Usage {
            user_ns: v[0],
            sys_ns: v[1],
            vol_switches: v[2],
            invol_switches: v[3],
            minor_faults: v[4],
            major_faults: v[5],
            maxrss_kib: v[6],
            in_blocks: v[7],
            out_blocks: v[8],
            signals: v[9],
        },
        round,
        span: has_span.then_some(span),
        kernel,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Holder {
        #[serde(with = "super")]
        samples: Vec<Sample>,
    }

    fn sample(i: u64) -> Sample {
        Sample {
            at_ns: i as f64 * 1.5 + 0.25,
            ticks: 1_000 + i,
            usage: Usage {
                user_ns: i,
                sys_ns: 2 * i,
                vol_switches: 3,
                invol_switches: 4,
                minor_faults: 5,
                major_faults: 6,
                maxrss_kib: 7,
                in_blocks: 8,
                out_blocks: 9,
                signals: u64::MAX,
            },
            round: i as u32,
            span: i.is_multiple_of(2).then_some(Span {
                start_ns: 10 * i,
                end_ns: 10 * i + 7,
                cpu0: 1,
                cpu1: 0,
            }),
            kernel: (i % 3) as u16,
        }
    }

    #[test]
    fn packed_samples_come_back_as_they_went_through_cbor() {
        let h = Holder {
            samples: (0..100).map(sample).collect(),
        };
        let mut buf = Vec::new();
        ciborium::into_writer(&h, &mut buf).unwrap();
        assert!(buf.len() < 100 * SIZE + 32, "{} bytes", buf.len());
        let back: Holder = ciborium::from_reader(buf.as_slice()).unwrap();
        assert_eq!(back, h);
        let none = Holder { samples: vec![] };
        let mut buf = Vec::new();
        ciborium::into_writer(&none, &mut buf).unwrap();
        assert_eq!(
            ciborium::from_reader::<Holder, _>(buf.as_slice()).unwrap(),
            none
        );
    }

    #[test]
    fn a_torn_string_is_refused() {
        assert!(unpack(&[0u8; SIZE + 1]).is_none());
        assert_eq!(unpack(&[0u8; 2 * SIZE]).map(|v| v.len()), Some(2));
    }
}
