//! Samples packed, a fixed [`SIZE`] bytes each, little-endian: how a worker hands its
//! samples to the next one (see `session::worker`), streamed to and from a file so
//! that no second copy of them is ever held. As named CBOR fields a sample took about
//! 250 bytes and a round's few thousand took several milliseconds to decode; packed,
//! packing and unpacking are copies.

use super::{Sample, Span};
use crate::os::usage::Usage;
use std::io::{self, Read, Write};

/// Bytes per sample.
pub const SIZE: usize = 8 + 8 + 10 * 8 + 4 + 2 + 1 + 2 * 8 + 2 * 4;

/// Writes `samples` to `w`, [`SIZE`] bytes each.
pub fn write(w: &mut dyn Write, samples: &[Sample]) -> io::Result<()> {
    let mut buf = [0u8; SIZE];
    for x in samples {
        fill(&mut buf, x);
        w.write_all(&buf)?;
    }
    Ok(())
}

/// Reads `n` samples that [`write()`] wrote from `r`.
pub fn read(r: &mut dyn Read, n: usize) -> io::Result<Vec<Sample>> {
    let mut out = Vec::with_capacity(n);
    let mut buf = [0u8; SIZE];
    for _ in 0..n {
        r.read_exact(&mut buf)?;
        out.push(one(&buf));
    }
    Ok(out)
}

fn fill(out: &mut [u8; SIZE], x: &Sample) {
    let mut at = 0;
    let mut put = |b: &[u8]| {
        out[at..at + b.len()].copy_from_slice(b);
        at += b.len();
    };
    let u = &x.usage;
    put(&x.at_ns.to_le_bytes());
    put(&x.ticks.to_le_bytes());
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
        put(&v.to_le_bytes());
    }
    put(&x.round.to_le_bytes());
    put(&x.kernel.to_le_bytes());
    let span = x.span.unwrap_or(Span {
        start_ns: 0,
        end_ns: 0,
        cpu0: 0,
        cpu1: 0,
    });
    put(&[x.span.is_some() as u8]);
    put(&span.start_ns.to_le_bytes());
    put(&span.end_ns.to_le_bytes());
    put(&span.cpu0.to_le_bytes());
    put(&span.cpu1.to_le_bytes());
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
    fn packed_samples_come_back_as_they_went() {
        let samples: Vec<Sample> = (0..100).map(sample).collect();
        let mut buf = Vec::new();
        write(&mut buf, &samples).unwrap();
        assert_eq!(buf.len(), 100 * SIZE);
        assert_eq!(read(&mut buf.as_slice(), 100).unwrap(), samples);
        assert!(read(&mut [].as_slice(), 0).unwrap().is_empty());
    }

    #[test]
    fn a_torn_stream_is_refused() {
        let mut buf = Vec::new();
        write(&mut buf, &[sample(1), sample(2)]).unwrap();
        buf.pop();
        let e = read(&mut buf.as_slice(), 2).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
    }
}
