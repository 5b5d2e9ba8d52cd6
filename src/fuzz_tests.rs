//! Generated inputs for every parser and reader of the tool: the command line's
//! benchmark filters and parameters, byte sizes, run references, the results document
//! (real documents cut, flipped and spliced, and JSON-like noise), the host facts'
//! text parsers, the trace file's index, reduction specs, durations and kernel event
//! lists. None may panic; each input must be
//! answered (a value or an error) promptly.
//!
//! `cargo test` runs [`DEFAULT_INPUTS`] inputs per target; `scripts/fuzz.py` runs a
//! million or more in all by setting `SYSCOST_FUZZ_INPUTS` (inputs per target) and
//! `SYSCOST_FUZZ_SEED`, and reads the counts each target prints.

use std::time::{Duration, Instant};

/// Inputs per target in an ordinary test run.
const DEFAULT_INPUTS: usize = 3000;

/// The longest any single input may take before it counts as a hang (not a speed
/// check: the slowest real input, a whole catalogue expansion, takes well under a
/// millisecond).
const HANG: Duration = Duration::from_secs(5);

fn inputs() -> usize {
    std::env::var("SYSCOST_FUZZ_INPUTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_INPUTS)
}

fn seed(target: u64) -> u64 {
    let base = std::env::var("SYSCOST_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed);
    base ^ target.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// xorshift64*: a small generator whose sequence is the same in every build.
struct Gen(u64);

impl Gen {
    fn new(seed: u64) -> Gen {
        Gen(seed | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
    /// A string of up to `max` pieces, each a token of the grammar or a random
    /// character (ASCII, control, or beyond ASCII).
    fn text(&mut self, tokens: &[&str], max: usize) -> String {
        let n = self.below(max + 1);
        let mut s = String::new();
        for _ in 0..n {
            match self.below(10) {
                0..=5 => {
                    let t: &&str = self.pick(tokens);
                    s.push_str(t)
                }
                6 => s.push(char::from(self.below(128) as u8)),
                7 => s.push_str(&self.next().to_string()),
                8 => s.push(
                    *self.pick(&['é', 'µ', '—', '\u{0}', '\u{202e}', '😀', '\u{ffff}']),
                ),
                _ => s.push_str(&"9".repeat(self.below(40))),
            }
        }
        s
    }
    /// `bytes` with a few bytes flipped, a cut, or a piece repeated.
    fn mutate(&mut self, bytes: &[u8]) -> Vec<u8> {
        let mut b = bytes.to_vec();
        match self.below(4) {
            0 => {
                let cut = self.below(b.len() + 1);
                b.truncate(cut);
            }
            1 => {
                for _ in 0..1 + self.below(8) {
                    if !b.is_empty() {
                        let i = self.below(b.len());
                        b[i] ^= (self.next() as u8) | 1;
                    }
                }
            }
            2 => {
                if !b.is_empty() {
                    let i = self.below(b.len());
                    let j = (i + self.below(64)).min(b.len());
                    let piece = b[i..j].to_vec();
                    let at = self.below(b.len());
                    b.splice(at..at, piece);
                }
            }
            _ => {
                if !b.is_empty() {
                    let i = self.below(b.len());
                    let j = (i + self.below(256)).min(b.len());
                    b.drain(i..j);
                }
            }
        }
        b
    }
}

/// Runs `f` on `n` inputs from `make`, failing on a hang; prints the count for the
/// script.
fn drive<T>(name: &str, target: u64, make: impl FnMut(&mut Gen) -> T, f: impl FnMut(T)) {
    drive_n(name, target, inputs(), make, f)
}

/// [`drive`] with its own count.
fn drive_n<T>(
    name: &str,
    target: u64,
    n: usize,
    mut make: impl FnMut(&mut Gen) -> T,
    mut f: impl FnMut(T),
) {
    let mut g = Gen::new(seed(target));
    let start = Instant::now();
    for _ in 0..n {
        let input = make(&mut g);
        let t = Instant::now();
        f(input);
        assert!(
            t.elapsed() < HANG,
            "{name}: one input took {:?}",
            t.elapsed()
        );
    }
    println!("fuzz {name}: {n} inputs in {:.2?}", start.elapsed());
}

const PARAM_TOKENS: &[&str] = &[
    "n",
    "=",
    ",",
    "args",
    "size",
    "4k",
    "1m",
    "2g",
    "0",
    "1",
    "-1",
    "..",
    " ",
    "via",
    "libc",
    "syscall",
    "transport",
    "pipe",
    "sysv_msg",
    "placement",
    "same",
    "spread",
    "k",
    "*",
    "?",
    "syscall.",
    "ctx.",
    "ring",
    "ipc.rtt",
    "mem.",
    "fault",
    "[",
    "]",
];

#[test]
fn command_line_filters_and_parameters_never_panic() {
    drive(
        "run filters and --param",
        1,
        |g| {
            let filters: Vec<String> =
                (0..g.below(3)).map(|_| g.text(PARAM_TOKENS, 6)).collect();
            let params: Vec<String> =
                (0..g.below(4)).map(|_| g.text(PARAM_TOKENS, 8)).collect();
            (filters, params)
        },
        |(filters, params)| {
            // Sweeps can multiply: count, do not keep, what the plan holds.
            if let Ok(plan) = crate::cli::run::plan(&filters, &params) {
                assert!(plan.iter().all(|(b, _)| !b.name().is_empty()));
            }
        },
    );
}

#[test]
fn byte_sizes_and_run_references_never_panic() {
    drive(
        "byte sizes",
        2,
        |g| {
            g.text(
                &[
                    "1",
                    "4",
                    "k",
                    "m",
                    "g",
                    "K",
                    " ",
                    "-",
                    ".",
                    "e9",
                    "18446744073709551616",
                ],
                5,
            )
        },
        |s| {
            let _ = crate::bench::params::parse_bytes(&s);
            let _ = crate::bench::params::split_values(&s);
        },
    );
    drive(
        "run references",
        3,
        |g| {
            g.text(
                &[
                    "last",
                    "~",
                    "1",
                    "0",
                    "-",
                    "99999999999999999999",
                    ".json",
                    "/",
                    "id",
                ],
                5,
            )
        },
        |s| {
            let _ = s.parse::<crate::store::refs::RunRef>();
        },
    );
}

#[test]
fn results_documents_never_panic() {
    let real = include_bytes!("../tests/fixtures/report-smoke.json");
    // A whole document is parsed per input, so a fifth as many as the other targets.
    drive_n(
        "results documents (mutated)",
        4,
        inputs() / 5,
        |g| {
            let mut b = g.mutate(real);
            if g.below(4) == 0 {
                b = g.mutate(&b);
            }
            b
        },
        |b| {
            let _ = crate::store::parse_document(&b);
        },
    );
    drive(
        "results documents (JSON-like noise)",
        5,
        |g| {
            g.text(
                &[
                    "{",
                    "}",
                    "[",
                    "]",
                    ":",
                    ",",
                    "\"schema_version\"",
                    "\"results\"",
                    "1",
                    "null",
                    "true",
                    "\"",
                    "1e999",
                    "-0",
                    "\"tool\"",
                    "\"syscost\"",
                ],
                40,
            )
        },
        |s| {
            let _ = crate::store::parse_document(s.as_bytes());
        },
    );
}

#[test]
fn host_fact_parsers_never_panic() {
    let tokens = &[
        "cpu",
        "MHz",
        ":",
        "\t",
        "\n",
        "0-3",
        ",",
        "-",
        "processor",
        "flags",
        "[",
        "]",
        "(",
        ")",
        "Max",
        "processes",
        "unlimited",
        "KiB",
        "kB",
        "Uid:",
        "Groups:",
        "1",
        " ",
    ];
    drive(
        "host facts",
        6,
        |g| g.text(tokens, 30),
        |s| {
            use crate::host::parse::*;
            let _ = parse_cpu_list(&s);
            let _ = parse_cpuinfo(&s);
            let _ = count_processors(&s);
            let _ = parse_bracketed(&s);
            let _ = parse_parenthesized(&s);
            let _ = parse_loadavg(&s);
            let _ = parse_stat_field(&s, "cpu");
            let _ = parse_status_field(&s, "Uid:");
            let _ = parse_euid(&s);
            let _ = parse_groups(&s);
            let _ = parse_kib_field(&s, "MemTotal");
            let _ = parse_kernel_page_size(&s);
            let _ = parse_limits(&s, "Max processes");
            let _ = parse_number::<u64>(&s);
            let _ = parse_line(&s);
        },
    );
}

#[test]
fn trace_files_never_panic() {
    use crate::trace::format::*;
    let mut real = Vec::new();
    real.extend_from_slice(&file_header());
    write_meta(
        &mut real,
        &Meta::Names {
            names: vec![(1, "begin".into()), (2, "end".into())],
        },
    )
    .unwrap();
    let mut p = Vec::new();
    for i in 0..40u64 {
        UserEvent {
            ts: 1000 + i * 10,
            arg: i,
            id: 1 + (i % 2) as u32,
            cpu: 1,
        }
        .put(&mut p);
    }
    write_chunk(&mut real, ChunkKind::User, 7, 40, &p).unwrap();
    p.clear();
    for i in 0..10u64 {
        KernelEvent {
            ts: 1005 + i * 40,
            a: 3,
            tid: 7,
            cpu: 1,
            kind: KernelKind::TimerEntry,
            b: 0,
        }
        .put(&mut p);
    }
    write_chunk(&mut real, ChunkKind::Kernel, 1, 10, &p).unwrap();
    p.clear();
    Lost {
        from: 1,
        to: 2,
        count: 3,
    }
    .put(&mut p);
    write_chunk(&mut real, ChunkKind::UserLost, 7, 1, &p).unwrap();
    drive(
        "trace files",
        7,
        |g| {
            let mut b = g.mutate(&real);
            if g.below(3) == 0 {
                b = g.mutate(&b);
            }
            b
        },
        |b| {
            if let Ok(index) = Index::read(std::io::Cursor::new(&b)) {
                let _ = index.names();
                let _ = index.event_cost_ns();
            }
        },
    );
}

#[test]
fn trace_specs_durations_and_kernel_lists_never_panic() {
    let names = std::collections::BTreeMap::from([
        (1u32, "begin".to_string()),
        (2, "end".to_string()),
    ]);
    drive(
        "trace reduce specs",
        8,
        |g| {
            g.text(
                &[
                    "interval",
                    " ",
                    "a",
                    "=",
                    "->",
                    "begin",
                    "end",
                    "1",
                    "2",
                    "(arg=",
                    "start",
                    ")",
                    "[",
                    "]",
                    "same thread",
                    "any thread",
                    ";",
                    "\n",
                    "#",
                    "arg",
                    "(",
                ],
                24,
            )
        },
        |s| {
            if let Ok(spec) = crate::trace::reduce::parse_spec(&s, &names) {
                assert!(!spec.is_empty());
            }
        },
    );
    drive(
        "durations and kernel event lists",
        9,
        |g| {
            g.text(
                &[
                    "1", ".", "5", "ns", "us", "ms", "s", "-", "e9", "timer", ",", "all",
                    "none", "switch",
                ],
                6,
            )
        },
        |s| {
            let _ = crate::trace::show::parse_duration(&s);
            let _ = crate::trace::kernel::KernelRequest::parse_kinds(&s);
        },
    );
}
