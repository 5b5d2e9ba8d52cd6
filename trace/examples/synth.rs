//! Writes a synthetic trace of about SIZE bytes for measuring the tools that read
//! traces: four threads each alternating `begin` (1) and `end` (2) events 100–140 ns
//! apart, 1 µs between intervals, and clock interrupts on two CPUs every 4 ms.
//!
//!     cargo run --release -p syscost-trace --example synth -- SIZE_MB PATH

use std::io::{BufWriter, Write};
use syscost_trace::format::{
    file_header, write_chunk, write_meta, ChunkKind, KernelEvent, KernelKind, Meta,
    UserEvent,
};

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let mb: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1024);
    let path = args.get(2).expect("PATH");
    let mut out = BufWriter::with_capacity(8 << 20, std::fs::File::create(path)?);
    out.write_all(&file_header())?;
    write_meta(
        &mut out,
        &Meta::Names {
            names: vec![(1, "begin".into()), (2, "end".into())],
        },
    )?;
    let per_chunk: u64 = 10_922;
    let chunks = (mb << 20) / (per_chunk * 24);
    let threads = 4u64;
    let mut t = vec![1_000_000_000u64; threads as usize];
    let mut buf = Vec::with_capacity(per_chunk as usize * 24);
    let mut seed = 88172645463325252u64;
    let mut tick = 1_000_000_000u64;
    for c in 0..chunks {
        let th = (c % threads) as usize;
        buf.clear();
        for i in 0..per_chunk {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let id = 1 + (i % 2) as u32;
            t[th] += if id == 1 { 1000 } else { 100 + seed % 40 };
            UserEvent {
                ts: t[th],
                arg: i / 2,
                id,
                cpu: th as u32 % 2,
            }
            .put(&mut buf);
        }
        write_chunk(
            &mut out,
            ChunkKind::User,
            100 + th as u32,
            per_chunk as u32,
            &buf,
        )?;
        // Clock interrupts up to this chunk's time, on both CPUs.
        let until = *t.iter().min().unwrap();
        let mut k = Vec::new();
        let mut n = 0;
        while tick < until {
            for (kind, dt) in [(KernelKind::TimerEntry, 0), (KernelKind::TimerExit, 1500)]
            {
                KernelEvent {
                    ts: tick + dt,
                    a: 236,
                    tid: 100,
                    cpu: 0,
                    kind,
                    b: 0,
                }
                .put(&mut k);
                n += 1;
            }
            tick += 4_000_000;
        }
        if n > 0 {
            write_chunk(&mut out, ChunkKind::Kernel, 0, n, &k)?;
        }
    }
    out.flush()?;
    Ok(())
}
