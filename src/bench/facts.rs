//! What the catalogue knows of a benchmark beside its operation, on its entry
//! ([`super::Bench::facts`]): its kind of work, how it enters the kernel, whether it
//! stays in user space or leaves CPUs idle, whether a run of the whole catalogue
//! measures it, whether it runs as copies, which hardening parameters it takes, and the
//! tables derived from its rows. An entry names a preset here and changes what differs
//! (`Facts { kind: WorkKind::Memory, ..SYSCALL }`); no table elsewhere is keyed by its
//! name.

use super::via::EntryPath;
pub use super::via::EntryPath::{Fault, Libc, Raw, Syscall as Generic, Vdso};
pub use super::via::Fixed;
use super::{Bench, Params};
pub use crate::harness::probe::WorkKind;

/// A benchmark's facts.
#[derive(Debug, Clone, Copy)]
pub struct Facts {
    /// The kind of work whose drift its figure shares, where its parameters do not say
    /// otherwise ([`work_kind`]).
    pub kind: WorkKind,
    /// How its timed region enters the kernel.
    pub enters: Enters,
    /// Whether an instance stays in user space, where its entry path does not say
    /// ([`super::via::stays_in_user_space`]).
    pub user_space: Option<fn(&Params) -> bool>,
    /// Whether an instance's tasks leave a CPU idle beyond working across CPUs (a timed
    /// sleep; [`super::via::leaves_cpus_idle`]).
    pub idle: fn(&Params) -> bool,
    /// A run measures it only when a filter names it: the peers' tests and the newer
    /// calls, left out of the whole catalogue so that the standard profile's budget is
    /// not spread thinner.
    pub named_only: bool,
    /// Why it cannot run as copies (None: it can).
    pub serial: Option<&'static str>,
    /// It makes system calls: it takes `seccomp=`.
    pub seccomp: bool,
    /// It has a partner task to place in a sibling cgroup: it takes `cgroup=`.
    pub partner: bool,
    /// Its cost includes switches or signal deliveries, where rseq acts: it takes `rseq=`.
    pub switches: bool,
    /// The table derived from its rows beside their figures.
    pub tables: Tables,
    /// The figures of the run's summary its rows give.
    pub quotes: &'static [Quote],
}

/// How a benchmark's timed region enters the kernel ([`super::via::entry`]).
#[derive(Debug, Clone, Copy)]
pub enum Enters {
    /// Its `via` parameter says.
    Via,
    /// Its path is fixed.
    Fixed(Fixed),
    /// It does not enter the kernel; what it does instead.
    Not(&'static str),
}

/// The table a report derives from a benchmark's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tables {
    /// None.
    No,
    /// Sloan's ring table over `n` ([`crate::derived::ring`]).
    Ring,
    /// Each `mechanism` against the pipe's.
    AgainstPipe,
}

/// A figure people quote (lmbench's summary: null call, context switch, pipe round
/// trip, fork, fault, file read bandwidth…), in the order the run's summary shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    /// A null system call through the C library.
    NullLibc,
    /// A null system call, the instruction in the loop.
    NullRaw,
    /// A vDSO clock read.
    VdsoClock,
    /// A context switch on one CPU.
    SwitchSame,
    /// A context switch across CPUs.
    SwitchCross,
    /// A pipe round trip.
    PipeRtt,
    /// A signal round trip.
    SignalRtt,
    /// A fork.
    Fork,
    /// An exec.
    Exec,
    /// A zero-fill page fault.
    ZeroFault,
    /// A warm file read's bandwidth.
    FileRead,
    /// A message queue's round trip.
    MessageOverhead,
    /// A pipe's bandwidth.
    MessageBandwidth,
}

impl Figure {
    /// Every figure, in the summary's order.
    pub const ALL: [Figure; 13] = [
        Figure::NullLibc,
        Figure::NullRaw,
        Figure::VdsoClock,
        Figure::SwitchSame,
        Figure::SwitchCross,
        Figure::PipeRtt,
        Figure::SignalRtt,
        Figure::Fork,
        Figure::Exec,
        Figure::ZeroFault,
        Figure::FileRead,
        Figure::MessageOverhead,
        Figure::MessageBandwidth,
    ];

    /// What people call it.
    pub fn label(self) -> &'static str {
        match self {
            Figure::NullLibc => "null system call, libc",
            Figure::NullRaw => "null system call, raw",
            Figure::VdsoClock => "vDSO clock read",
            Figure::SwitchSame => "context switch, same CPU",
            Figure::SwitchCross => "context switch, cross CPU",
            Figure::PipeRtt => "pipe round trip",
            Figure::SignalRtt => "signal round trip",
            Figure::Fork => "fork",
            Figure::Exec => "exec",
            Figure::ZeroFault => "zero-fill page fault",
            Figure::FileRead => "file read bandwidth, warm",
            Figure::MessageOverhead => "message overhead",
            Figure::MessageBandwidth => "message bandwidth",
        }
    }
}

/// How a quoted figure is shown from its row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Show {
    /// The row's time per operation.
    Time,
    /// Half the row's time (one way of a round trip).
    Half,
    /// `bytes` divided by the row's time.
    Bandwidth {
        /// Bytes moved by one operation.
        bytes: f64,
    },
}

/// A row of a benchmark that a figure of the summary may be read from.
#[derive(Debug, Clone, Copy)]
pub struct Quote {
    /// The figure.
    pub figure: Figure,
    /// Its place among the figure's rows, best first (0 before 1).
    pub rank: u8,
    /// Parameter values the row must have, `name=value` apart by spaces (others may be
    /// anything).
    pub params: &'static str,
    /// What the figure is, in a few words (`half a pipe ping-pong`).
    pub what: &'static str,
    /// How it is shown.
    pub show: Show,
}

/// A figure shown as the row's time.
pub const fn quote(
    figure: Figure,
    rank: u8,
    params: &'static str,
    what: &'static str,
) -> Quote {
    Quote {
        figure,
        rank,
        params,
        what,
        show: Show::Time,
    }
}

/// A fixed path whose main calls are `calls`.
pub const fn fixed(path: EntryPath, calls: &'static str) -> Enters {
    Enters::Fixed(Fixed {
        path,
        unless: &[],
        calls,
    })
}

impl Facts {
    /// These facts, the benchmark's path fixed: its main calls are `calls`.
    pub const fn on(self, path: EntryPath, calls: &'static str) -> Facts {
        Facts {
            enters: fixed(path, calls),
            ..self
        }
    }
}

const fn never(_: &Params) -> bool {
    false
}

/// A system call on the path its `via` parameter names: the catalogue's common case.
pub const SYSCALL: Facts = Facts {
    kind: WorkKind::Syscall,
    enters: Enters::Via,
    user_space: None,
    idle: never,
    named_only: false,
    serial: None,
    seccomp: true,
    partner: false,
    switches: false,
    tables: Tables::No,
    quotes: &[],
};

/// A system call a run measures only when named.
pub const NAMED: Facts = Facts {
    named_only: true,
    ..SYSCALL
};

/// Page faults and mapping changes.
pub const MEMORY: Facts = Facts {
    kind: WorkKind::Memory,
    ..SYSCALL
};

/// Work in user space: a vDSO read or the C library's arithmetic.
pub const USER: Facts = Facts {
    kind: WorkKind::User,
    ..SYSCALL
};

/// Why a benchmark with a partner at the other end cannot run as copies.
pub const PARTNER: &str = "it already uses two CPUs (a partner at the other end)";

/// The kind of work an instance of `b` is, whose drift on this machine its figure
/// shares (see [`crate::harness::probe`]): the other CPU's where it is placed across
/// CPUs or by the scheduler, storage's for a cold read, user space for a vDSO call,
/// else its entry's kind.
pub fn work_kind(b: &dyn Bench, params: &Params) -> WorkKind {
    let has = |k: &str, vs: &[&str]| {
        params
            .0
            .iter()
            .any(|(n, v)| *n == k && vs.contains(&v.as_str()))
    };
    match b.facts().kind {
        _ if has("placement", &["cross-cpu", "free"]) => WorkKind::Cross,
        _ if has("cache", &["cold"]) => WorkKind::Io,
        WorkKind::Syscall if has("via", &["vdso"]) => WorkKind::User,
        kind => kind,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::params::Kind;
    use crate::bench::{
        self, copies, harden, params, peers, via, Entry, Prepared, Simple,
    };
    use crate::error::BenchError;

    /// The instances the listing shows: the defaults, then each parameter's other values
    /// one at a time (an integer at its bounds), then copies where it runs as copies.
    fn instances(b: &dyn Bench) -> Vec<Params> {
        let mut out = params::expand(b.name(), b.params(), &[]).unwrap();
        let base = out[0].clone();
        let mut vary = |name: &'static str, v: String| {
            let mut p = base.clone();
            match p.0.iter_mut().find(|(n, _)| *n == name) {
                Some(slot) => slot.1 = v,
                None => p.0.push((name, v)),
            }
            if !out.contains(&p) {
                out.push(p);
            }
        };
        for s in b.params() {
            match s.kind {
                Kind::Choice(words) => {
                    words.iter().for_each(|w| vary(s.name, w.to_string()))
                }
                Kind::Int { min, max } => {
                    vary(s.name, min.to_string());
                    vary(s.name, max.to_string());
                }
                _ => {}
            }
        }
        if copies::serial(b).is_none() {
            for (n, how) in [("2", "process"), ("2", "thread"), ("1", "thread")] {
                let mut p = base.clone();
                p.0.push((copies::COPIES, n.into()));
                p.0.push((copies::COPIES_AS, how.into()));
                out.push(p);
            }
        }
        out
    }

    /// What the functions that read a benchmark's facts say of `b`.
    fn describe(b: &dyn Bench, named_only: bool) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let n = b.name();
        let refuse = |p| harden::refusal(b, p).unwrap_or("-");
        let runs = if named_only {
            "named only"
        } else {
            "by default"
        };
        let _ = writeln!(out, "{n}\n  runs: {runs}");
        let _ = writeln!(out, "  copies: {}", copies::serial(b).unwrap_or("yes"));
        let _ = writeln!(
            out,
            "  seccomp: {}; cgroup: {}; rseq: {}",
            refuse(harden::SECCOMP),
            refuse(harden::CGROUP),
            refuse(harden::RSEQ)
        );
        if let Some(l) = via::fixed_line(b) {
            let _ = writeln!(out, "  path: {l}");
        }
        if let Some(l) = peers::like_line(n) {
            let _ = writeln!(out, "  like: {l}");
        }
        let mut quotes = b.facts().quotes.to_vec();
        quotes.sort_by_key(|q| (Figure::ALL.iter().position(|f| *f == q.figure), q.rank));
        for q in quotes {
            let params: Vec<_> = q
                .params
                .split_whitespace()
                .filter_map(|kv| kv.split_once('='))
                .collect();
            let _ = writeln!(
                out,
                "  summary: {} #{}: {:?} {} {:?}",
                q.figure.label(),
                q.rank,
                params,
                q.what,
                q.show
            );
        }
        match b.facts().tables {
            Tables::Ring => out += "  tables: ring\n",
            Tables::AgainstPipe => out += "  tables: against the pipe\n",
            Tables::No => {}
        }
        for p in instances(b) {
            let entry = via::entry(b, &p).map_or("none".to_string(), |e| e.to_string());
            let _ = writeln!(
                out,
                "  [{}] {:?} entry={entry} user={} idle={}",
                p.label(),
                work_kind(b, &p),
                via::stays_in_user_space(b, &p),
                via::leaves_cpus_idle(b, &p)
            );
        }
        out
    }

    /// What the catalogue says of each benchmark, as tests/fixtures/catalogue_facts.txt
    /// holds it: a change to a benchmark's facts shows in that file's diff. Run with
    /// `SYSCOST_BLESS=1` to write the file anew.
    #[test]
    fn the_catalogue_says_what_its_listing_holds() {
        let only = bench::named_only();
        let got: String = bench::catalogue()
            .into_iter()
            .map(|b| describe(b, only.iter().any(|o| o.name() == b.name())))
            .collect();
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/catalogue_facts.txt"
        );
        if std::env::var_os("SYSCOST_BLESS").is_some() {
            std::fs::write(path, &got).unwrap();
        }
        let want = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            got == want,
            "the catalogue's facts differ from {path}: run with SYSCOST_BLESS=1 and \
             read the diff"
        );
    }

    #[test]
    fn each_benchmark_has_the_kind_of_work_it_does() {
        let kind = |name: &str, kv: &[(&'static str, &str)]| {
            work_kind(bench::find(name).unwrap(), &bench::testing::kv(kv))
        };
        assert_eq!(kind("syscall.getpid", &[]), WorkKind::Syscall);
        assert_eq!(kind("call.empty", &[]), WorkKind::User);
        assert_eq!(kind("clock.monotonic", &[]), WorkKind::User);
        assert_eq!(kind("clock.thread_cputime", &[]), WorkKind::Syscall);
        let clock = |via| kind("syscall.clock_gettime", &[("via", via)]);
        assert_eq!(clock("vdso"), WorkKind::User);
        assert_eq!(clock("syscall"), WorkKind::Syscall);
        assert_eq!(kind("mem.fault.zero", &[]), WorkKind::Memory);
        // Placed on another CPU, or by the scheduler: the other CPU's kind of work.
        let placed = |name, at| kind(name, &[("placement", at)]);
        assert_eq!(placed("ctx.pingpong", "same-cpu"), WorkKind::Syscall);
        assert_eq!(placed("ctx.pingpong", "cross-cpu"), WorkKind::Cross);
        assert_eq!(placed("ctx.ring", "free"), WorkKind::Cross);
        assert_eq!(placed("svc.wake.latency", "cross-cpu"), WorkKind::Cross);
        // A read that waits for storage.
        assert_eq!(kind("file.read", &[("cache", "cold")]), WorkKind::Io);
        assert_eq!(kind("file.read", &[("cache", "warm")]), WorkKind::Syscall);
    }

    /// A benchmark defined here alone, in no table: every function that reads facts
    /// reads them from its entry.
    #[test]
    fn a_new_benchmark_is_one_entry() {
        const NULL: Simple = Entry {
            name: "null.sleep",
            about: "nothing, on a sleeping partner",
            origin: "",
            params: &[],
            facts: Facts {
                enters: fixed(EntryPath::Raw, "none"),
                idle: |_| true,
                serial: Some(PARTNER),
                partner: true,
                ..NAMED
            },
            prepare: |_| Err(BenchError::Skip("a test".into())),
        };
        let _: fn(&Params) -> Result<Prepared, BenchError> = NULL.prepare;
        let p = Params::default();
        let cross = Params(vec![("placement", "cross-cpu".into())]);
        assert_eq!(work_kind(&NULL, &p), WorkKind::Syscall);
        assert_eq!(work_kind(&NULL, &cross), WorkKind::Cross);
        assert_eq!(via::entry(&NULL, &p), Some(EntryPath::Raw));
        assert_eq!(via::fixed_line(&NULL).unwrap(), "raw  (none)");
        assert!(!via::stays_in_user_space(&NULL, &p));
        assert!(via::leaves_cpus_idle(&NULL, &p));
        assert_eq!(copies::serial(&NULL), Some(PARTNER));
        assert_eq!(harden::refusal(&NULL, harden::CGROUP), None);
        assert!(harden::refusal(&NULL, harden::RSEQ).is_some());
        assert!(describe(&NULL, true).contains("runs: named only"));
    }
}
