//! The catalogue: every benchmark, one module per family, each entry a small struct
//! implementing [`Bench`]. Adding a benchmark touches its family's file: the struct and
//! one line in the family's list.
//!
//! A benchmark builds its operation untimed in `prepare` (descriptors, mappings,
//! children) and returns a [`Body`] whose `run(k)` performs the operation `k` times and
//! nothing else; dropping the body releases everything. Benchmarks never read a clock
//! and never print.

pub mod call;
pub mod clock;
pub mod context;
pub mod copies;
pub mod ctx;
pub mod facts;
pub mod file;
pub mod harden;
pub mod ipc;
pub mod mem;
pub mod params;
pub mod peers;
pub mod proc;
pub mod shared;
pub mod signal;
pub mod svc;
pub mod sync;
pub mod syscall;
#[cfg(test)]
pub(crate) mod testing;
pub mod trace;
pub mod via;

pub use context::RunContext;
pub use facts::{fixed, Enters, Facts, Tables, WorkKind};
pub use params::{Kind, ParamArg, ParamSpec, Params};

use crate::error::BenchError;
pub use crate::harness::Loop;
use crate::harness::{Body, Expect, Harness, Measurement, Plan};
use serde::{Deserialize, Serialize};

/// A step run after the measurement, once the body has been dropped: it derives facts
/// from the measurement, or makes its own untimed-by-the-harness run (a whole ring under
/// getrusage).
pub type After =
    Box<dyn FnOnce(&Harness<'_>, &Measurement) -> Result<Vec<Fact>, BenchError>>;

/// A benchmark in the catalogue.
pub trait Bench: Sync {
    /// `family.name`.
    fn name(&self) -> &'static str;
    /// One line: what is timed.
    fn about(&self) -> &'static str;
    /// Where the measurement comes from in the seeds, if anywhere.
    fn origin(&self) -> &'static str {
        ""
    }
    /// The parameters it accepts.
    fn params(&self) -> &'static [ParamSpec] {
        &[]
    }
    /// What the catalogue knows of it beside its operation.
    fn facts(&self) -> Facts;
    /// Builds the operation for one set of parameter values (untimed), in the run
    /// whose shared state is `cx`.
    fn prepare(&self, p: &Params, cx: &RunContext) -> Result<Prepared, BenchError>;
}

/// A benchmark ready to be timed.
pub struct Prepared {
    /// The operation.
    pub body: Box<dyn Body>,
    /// How the harness should measure it.
    pub plan: Plan,
    /// What one operation is, when it is more than the benchmark's name says.
    pub op: &'static str,
    /// Run after the measurement, when the body is gone.
    pub after: Option<After>,
}

impl Prepared {
    /// A body measured with the default plan.
    pub fn new(body: Box<dyn Body>) -> Prepared {
        Prepared {
            body,
            plan: Plan::default(),
            op: "call",
            after: None,
        }
    }
    /// Names what one operation is (e.g. "dup+close pair").
    pub fn op(mut self, op: &'static str) -> Prepared {
        self.op = op;
        self
    }
    /// Sets the plan.
    pub fn plan(mut self, plan: Plan) -> Prepared {
        self.plan = plan;
        self
    }
    /// Sets the step run after the measurement.
    pub fn after(mut self, after: After) -> Prepared {
        self.after = Some(after);
        self
    }
}

/// An OS call's result, its error named the way [`BenchError::os`] names it.
pub trait OrOs<T> {
    /// The value, or `BenchError::os(what, e)` for the error `e`.
    fn or_os(self, what: &str) -> Result<T, BenchError>;
}

impl<T> OrOs<T> for std::io::Result<T> {
    fn or_os(self, what: &str) -> Result<T, BenchError> {
        self.map_err(|e| BenchError::os(what, e))
    }
}

/// A plan whose operation itself moves the counters `Expect` names: it blocks
/// (`switches`), faults pages (`faults`), shares its CPU with the tasks it involves
/// (`preemption`).
pub const fn expecting(switches: bool, faults: bool, preemption: bool) -> Plan {
    Plan {
        expect: Expect {
            switches,
            faults,
            preemption,
        },
        keep_overhead: false,
        fixed_batch: None,
        per_iter: 0,
        max_batch: None,
    }
}

/// The plan of an operation that blocks, handing the CPU to another task: its voluntary
/// switches are part of it, and its involuntary ones where `preemption` (on one CPU the
/// woken task preempts the waker).
pub const fn blocking(preemption: bool) -> Plan {
    expecting(true, false, preemption)
}

/// The plan of an operation whose voluntary switches are part of it where `switches`.
pub const fn switching(switches: bool) -> Plan {
    expecting(switches, false, false)
}

/// The plan of an operation whose page faults are part of it where `faults`.
pub const fn faulting(faults: bool) -> Plan {
    expecting(false, faults, false)
}

/// The plan of a body that goes once through a region of `size` bytes per batch,
/// faulting its pages of `page` bytes: one batch of one pass, per page.
pub const fn per_page(size: usize, page: usize) -> Plan {
    Plan {
        fixed_batch: Some(1),
        per_iter: (size / page) as u64,
        ..faulting(true)
    }
}

/// Boxes a closure as a body.
pub fn body<F: FnMut() -> Result<(), BenchError> + 'static>(f: F) -> Box<dyn Body> {
    Box::new(Loop(f))
}

/// Checks a C-style result inside a timed loop: `Ok` unless it is -1, in which case the
/// error (built off the hot path) names the call and `errno`.
#[inline(always)]
pub fn check(r: i64, what: &'static str) -> Result<(), BenchError> {
    if r == -1 {
        return Err(failed(what));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn failed(what: &'static str) -> BenchError {
    BenchError::last_os(what)
}

/// A catalogue entry described by data: most benchmarks need nothing more than a name,
/// a description and a `prepare` function. `P` is that function's type: see [`Simple`]
/// and [`InRun`].
pub struct Entry<P> {
    /// `family.name`.
    pub name: &'static str,
    /// One line: what is timed.
    pub about: &'static str,
    /// Where it comes from in the seeds.
    pub origin: &'static str,
    /// Its parameters.
    pub params: &'static [ParamSpec],
    /// What the catalogue knows of it.
    pub facts: Facts,
    /// Builds the operation.
    pub prepare: P,
}

/// An entry whose `prepare` needs only the parameter values.
pub type Simple = Entry<fn(&Params) -> Result<Prepared, BenchError>>;

/// An entry whose `prepare` reads or adds to the run's shared state (its options, its
/// scratch files, the limits it met).
pub type InRun = Entry<fn(&Params, &RunContext) -> Result<Prepared, BenchError>>;

/// A `prepare` function an [`Entry`] can hold.
pub trait Prepare: Sync {
    /// Builds the operation for `p` in the run whose shared state is `cx`.
    fn call(&self, p: &Params, cx: &RunContext) -> Result<Prepared, BenchError>;
}

impl Prepare for fn(&Params) -> Result<Prepared, BenchError> {
    fn call(&self, p: &Params, _: &RunContext) -> Result<Prepared, BenchError> {
        self(p)
    }
}

impl Prepare for fn(&Params, &RunContext) -> Result<Prepared, BenchError> {
    fn call(&self, p: &Params, cx: &RunContext) -> Result<Prepared, BenchError> {
        self(p, cx)
    }
}

impl<P: Prepare> Bench for Entry<P> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn about(&self) -> &'static str {
        self.about
    }
    fn origin(&self) -> &'static str {
        self.origin
    }
    fn params(&self) -> &'static [ParamSpec] {
        self.params
    }
    fn facts(&self) -> Facts {
        self.facts
    }
    fn prepare(&self, p: &Params, cx: &RunContext) -> Result<Prepared, BenchError> {
        self.prepare.call(p, cx)
    }
}

/// Every benchmark, family by family.
pub fn catalogue() -> Vec<&'static dyn Bench> {
    [
        call::BENCHES,
        clock::BENCHES,
        syscall::BENCHES,
        ctx::BENCHES,
        ipc::BENCHES,
        proc::BENCHES,
        signal::BENCHES,
        signal::MORE,
        mem::BENCHES,
        file::BENCHES,
        file::ops::BENCHES,
        mem::scale::BENCHES,
        sync::BENCHES,
        svc::BENCHES,
        svc::MORE,
        trace::BENCHES,
    ]
    .concat()
}

/// The benchmark called exactly `name`.
pub fn find(name: &str) -> Option<&'static dyn Bench> {
    catalogue().into_iter().find(|b| b.name() == name)
}

/// The table derived from the rows of the benchmark called `name` ([`Tables::No`] for
/// a name not in the catalogue).
pub fn tables(name: &str) -> Tables {
    find(name).map_or(Tables::No, |b| b.facts().tables)
}

/// Whether `name` matches the glob `pat` (`*` any run, `?` one character). A pattern
/// without glob characters that names a benchmark of the catalogue matches that one
/// alone (`syscall.getpid` is not `syscall.getpid.raw`; `syscall.getpid*` is both);
/// any other also matches a whole family or a dotted prefix: `syscall` matches
/// `syscall.getpid`.
pub fn matches(pat: &str, name: &str) -> bool {
    if !pat.contains(['*', '?']) {
        return name == pat
            || (name.starts_with(&format!("{pat}."))
                && !catalogue().iter().any(|b| b.name() == pat));
    }
    glob(pat.as_bytes(), name.as_bytes())
}

fn glob(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() && (p[pi] == b'?' || p[pi] == s[si]) {
            pi += 1;
            si += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, si));
            pi += 1;
        } else if let Some((sp, ss)) = star {
            pi = sp + 1;
            si = ss + 1;
            star = Some((sp, ss + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// The benchmarks matching any of `filters` (all when empty), in catalogue order.
pub fn select(filters: &[String]) -> Vec<&'static dyn Bench> {
    catalogue()
        .into_iter()
        .filter(|b| filters.is_empty() || filters.iter().any(|f| matches(f, b.name())))
        .collect()
}

/// The benchmarks a run measures only when it names them (by name, family or glob):
/// a run of the whole catalogue leaves them out ([`Facts::named_only`]).
pub fn named_only() -> Vec<&'static dyn Bench> {
    catalogue()
        .into_iter()
        .filter(|b| b.facts().named_only)
        .collect()
}

/// What `syscost run` measures for `filters`: [`select`], less [`named_only`] when no
/// filter names anything.
pub fn select_for_run(filters: &[String]) -> Vec<&'static dyn Bench> {
    let only = named_only();
    select(filters)
        .into_iter()
        .filter(|b| !filters.is_empty() || !only.iter().any(|o| o.name() == b.name()))
        .collect()
}

/// `" (did you mean NAME?)"` for the benchmark or family name closest to `filter`, a word
/// that selects nothing; nothing for a glob or a word no name is near.
pub fn suggest(filter: &str) -> String {
    if filter.contains(['*', '?']) {
        return String::new();
    }
    let mut names: Vec<&str> = Vec::new();
    for b in catalogue() {
        let family = b.name().split('.').next().unwrap_or("");
        if !names.contains(&family) {
            names.push(family);
        }
        names.push(b.name());
    }
    crate::error::did_you_mean(filter, names)
}

/// A named figure a benchmark reports beside its per-operation time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fact {
    /// A short identifier, e.g. `cpu_us_per_pass`.
    pub name: String,
    /// The value.
    pub value: f64,
    /// Its unit, e.g. `us`, `ns`, `count`, `ratio`.
    pub unit: String,
    /// One line saying what it is.
    pub about: String,
}

impl Fact {
    /// A fact.
    pub fn new(name: &str, value: f64, unit: &str, about: &str) -> Fact {
        Fact {
            name: name.into(),
            value,
            unit: unit.into(),
            about: about.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::EmptyLoop;

    #[test]
    fn a_name_one_letter_off_is_suggested() {
        assert_eq!(suggest("syscall.getpd"), " (did you mean syscall.getpid?)");
        assert_eq!(suggest("sycall"), " (did you mean syscall?)");
        assert_eq!(suggest("sys*"), "");
        assert_eq!(suggest("qqqqqqqqqqqqq"), "");
    }

    #[test]
    fn globs_match_names() {
        assert!(matches("syscall.*", "syscall.getpid"));
        assert!(matches("syscall.getpid*", "syscall.getpid.raw"));
        assert!(matches("syscall.getpid*", "syscall.getpid"));
        assert!(!matches("syscall.getpid*", "syscall.getppid"));
        assert!(matches("*.getpid", "syscall.getpid"));
        assert!(matches("sys?all.time", "syscall.time"));
        assert!(matches("syscall", "syscall.time"));
        assert!(!matches("sys", "syscall.time"));
        assert!(!matches("syscall.time", "syscall.times"));
        // A name of the catalogue is that benchmark alone, not its dotted children.
        assert!(matches("syscall.getpid", "syscall.getpid"));
        assert!(!matches("syscall.getpid", "syscall.getpid.raw"));
    }

    #[test]
    fn a_run_of_the_whole_catalogue_leaves_the_named_only_benchmarks_out() {
        let all: Vec<_> = select_for_run(&[]).iter().map(|b| b.name()).collect();
        assert!(all.contains(&"syscall.getppid") && all.contains(&"file.read"));
        for b in named_only() {
            assert!(!all.contains(&b.name()), "{}", b.name());
            assert!(find(b.name()).is_some(), "{} is in the catalogue", b.name());
        }
        let sync = select_for_run(&["sync".to_string()]);
        assert!(sync.iter().any(|b| b.name() == "sync.mutex"));
        let one = select_for_run(&["mem.tlb_flush".to_string()]);
        assert_eq!(one.len(), 1);
    }

    #[test]
    fn catalogue_names_are_unique_and_well_formed() {
        let names: Vec<_> = catalogue().iter().map(|b| b.name()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "duplicate benchmark names");
        for b in catalogue() {
            let (family, rest) = b.name().split_once('.').expect("family.name");
            assert!(!family.is_empty() && !rest.is_empty(), "{}", b.name());
            assert!(!b.about().is_empty(), "{} has no description", b.name());
            assert!(
                params::expand(b.name(), b.params(), &[]).is_ok(),
                "{} defaults",
                b.name()
            );
        }
    }

    /// Whether a skip of `name` with `p` is one this machine and this test process
    /// explain: a benchmark that skips for any other reason should have run.
    pub(super) fn skip_is_expected(
        name: &str,
        p: &Params,
        why: &str,
    ) -> Result<(), String> {
        let read = |path: &str| -> Option<u64> {
            std::fs::read_to_string(path).ok()?.trim().parse().ok()
        };
        let size =
            p.0.iter()
                .find(|(k, _)| *k == "size")
                .map(|(_, v)| v.parse::<u64>());
        let root = crate::os::file::is_root();
        let cpus = crate::os::affinity::process_cpus().len();
        let label = p.label();
        let ok = match name {
            // Inherent: yield hands the CPU over only between tasks on one CPU.
            "ctx.pingpong" if label.contains("mechanism=yield") => {
                label.contains("placement=cross-cpu")
            }
            // Inherent: an inline io_uring write involves no other task to place.
            "svc.uring.write" if label.contains("issue=inline") => {
                label.contains("placement=cross-cpu")
            }
            // The system's message-size limits, read here.
            "ipc.rtt" if label.contains("transport=posix_mq") => {
                matches!((size, read("/proc/sys/fs/mqueue/msgsize_max")),
                    (Some(Ok(s)), Some(max)) if s > max)
            }
            "ipc.rtt" if label.contains("transport=sysv_msg") => {
                matches!((size, read("/proc/sys/kernel/msgmax")),
                    (Some(Ok(s)), Some(max)) if s > max)
            }
            // Inherent: a UDP datagram carries at most 65507 bytes.
            "ipc.rtt" if label.contains("transport=udp") => {
                matches!(size, Some(Ok(s)) if s > 65507)
            }
            // This test process: its executable is the test harness, not syscost (the
            // CLI tests run these), and libtest runs tests in threads.
            "proc.exec" | "proc.spawn" => why.contains("test harness"),
            "mem.brk" | "svc.usleep" => why.contains("single-threaded"),
            _ => false,
        } || (why.contains("cross-cpu") && cpus < 2)
            // The kernel lacks the call: the skips of a refused call say "(ENOSYS)".
            || why.contains("(ENOSYS)")
            || (!root && (why.contains("root") || why.contains("permitted")))
            || (why.contains("io_uring")
                && read("/proc/sys/kernel/io_uring_disabled").unwrap_or(0) != 0)
            || (why.contains("AVX") && crate::os::task::widest_vector().is_none())
            || (why.contains("loopback") && std::net::UdpSocket::bind("127.0.0.1:0").is_err())
            || (why.contains("/dev/shm") && !std::path::Path::new("/dev/shm").is_dir())
            // The scratch file's directory too full: it says how full.
            || why.contains("MiB free");
        if ok {
            Ok(())
        } else {
            Err(format!("root {root}, {cpus} CPUs: not an expected reason"))
        }
    }

    /// Every benchmark, with its default parameters, runs in the smoke profile and
    /// yields a positive, finite median below a millisecond (or is skipped, with a
    /// reason).
    #[test]
    #[ignore = "slow: the whole catalogue; .ci/run runs it"]
    fn every_benchmark_runs_in_the_smoke_profile() {
        runs_in_the_smoke_profile(catalogue());
    }

    /// The first benchmark of each family: the quick suite's share of the test above.
    #[test]
    fn the_first_of_each_family_runs_in_the_smoke_profile() {
        let mut families = std::collections::BTreeSet::new();
        let firsts = catalogue()
            .into_iter()
            .filter(|b| families.insert(b.name().split('.').next().unwrap_or_default()));
        runs_in_the_smoke_profile(firsts.collect());
    }

    fn runs_in_the_smoke_profile(benches: Vec<&'static dyn Bench>) {
        let h = testing::harness();
        let cx = RunContext::default();
        for b in benches {
            for p in params::expand(b.name(), b.params(), &[]).unwrap() {
                let mut prep = match b.prepare(&p, &cx) {
                    Ok(prep) => prep,
                    Err(BenchError::Skip(why)) => {
                        eprintln!("{} {}: skipped: {why}", b.name(), p.label());
                        if let Err(e) = skip_is_expected(b.name(), &p, &why) {
                            panic!(
                                "{} {}: skipped where it should run: {why} ({e})",
                                b.name(),
                                p.label()
                            );
                        }
                        continue;
                    }
                    Err(e) => panic!("{} {}: {e}", b.name(), p.label()),
                };
                let m = h
                    .measure(prep.body.as_mut(), &mut EmptyLoop, prep.plan)
                    .unwrap_or_else(|e| panic!("{} {}: {e}", b.name(), p.label()));
                let med = m.analysis.headline().expect("samples").median;
                // A sanity range, not a speed: on a busy machine a fork or a 1 ms sleep
                // passes a millisecond, but nothing here takes a tenth of a second.
                assert!(
                    med.is_finite() && med < 1e8,
                    "{} {}: {med}",
                    b.name(),
                    p.label()
                );
                // Cheap operations can sit at the empty loop's own cost; the raw batch
                // time must still be positive.
                assert!(
                    m.samples.iter().all(|s| s.ticks > 0),
                    "{} {}",
                    b.name(),
                    p.label()
                );
                // time() is a vDSO read of a cached second, as cheap as the empty loop,
                // and other vDSO reads (getcpu: a few ns) come close enough to it that
                // the machine's change of speed between the overhead and the samples
                // (this debug build, two rounds, tests running beside it) can floor them.
                let free = ["call.", "clock.", "syscall.time"];
                let vdso = p.label().contains("via=vdso");
                if !vdso && !free.iter().any(|f| b.name().starts_with(f)) {
                    assert!(med > 0.0, "{} {}: median {med}", b.name(), p.label());
                }
            }
        }
    }
}
