//! The `via` parameter: how a benchmark's timed call enters the kernel. Its words mean
//! the same wherever they appear:
//!
//! - `libc`: the C library's wrapper of the call (glibc's `write`, `getppid`, …), a
//!   function called from syscost's loop that holds the `syscall` instruction: what
//!   most programs pay, and what lmbench, `perf bench syscall` and will-it-scale time.
//!   The catalogue's default wherever there is a choice.
//! - `raw`: the `syscall` instruction written into the timed loop itself
//!   ([`crate::os::raw`]): no function call around it.
//! - `syscall`: the C library's generic `syscall()` function (for calls whose wrapper
//!   does more than the call, as `setuid`'s, which signals every thread).
//! - `vdso`: the C library's call served in user space by the vDSO, no kernel entry.
//!
//! A benchmark takes `libc,raw` where both are meaningful ([`BOTH`]), or names its
//! one path. `docs/entry.md` measures what the two cost on one machine and why they
//! differ.
//!
//! Every other benchmark's path is fixed, and its entry says it ([`super::Facts::enters`]), in
//! the same words (and `fault`, [`EntryPath::Fault`]), or says that its timed region
//! does not enter the kernel. [`entry`] reads it: the one answer to "how does this
//! instance enter the kernel" that `syscost list`, the JSON (`entry`) and
//! `docs/entry.md` give.

use super::{Bench, Enters, Kind, ParamSpec, Params};
use crate::error::BenchError;
use crate::harness::Body;
use crate::os::raw::{Call, Stopped};
use serde::{Deserialize, Serialize};

/// Every word of every benchmark's `via` parameter, each with one meaning.
pub const WORDS: [&str; 4] = ["libc", "raw", "syscall", "vdso"];

/// The catalogue's default where a benchmark has the choice.
pub const DEFAULT: &str = "libc";

/// The two paths into the kernel a `via` benchmark chooses between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The C library: its wrapper (`libc`), or its generic `syscall()` (`syscall`)
    /// where that is the benchmark's library side.
    Libc,
    /// The instruction in the loop.
    Raw,
}

impl Via {
    /// The path `p` names; `raw` is skipped where the instruction is not wired up.
    pub fn of(p: &Params) -> Result<Via, BenchError> {
        match p.get("via") {
            "raw" if !crate::os::raw::AVAILABLE => Err(BenchError::Skip(
                "via=raw: the syscall instruction is only wired up on x86_64".into(),
            )),
            "raw" => Ok(Via::Raw),
            _ => Ok(Via::Libc),
        }
    }
}

/// Checks a raw result ([`crate::os::raw`]) inside a timed loop: `Ok` unless it is a
/// negative errno, in which case the error (built off the hot path) names the call.
#[inline(always)]
pub fn check_raw(r: isize, what: &'static str) -> Result<(), BenchError> {
    if r < 0 {
        return Err(raw_failed(r, what));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn raw_failed(r: isize, what: &'static str) -> BenchError {
    BenchError::os(what, std::io::Error::from_raw_os_error(-r as i32))
}

/// A body whose batch is one call of `f(iters)`, a loop of its own: the `via=raw`
/// repeat loops of [`crate::os::raw`] (`getpid_repeat`, `write_read_repeat`), which
/// hold the whole timed loop at a fixed, aligned placement. Like [`crate::harness::Loop`]
/// it does the operation `iters` times and nothing else, and fails if one failed.
pub struct Repeat<F>(pub F);

impl<F: FnMut(u64) -> Result<(), BenchError>> Body for Repeat<F> {
    #[inline(never)]
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        (self.0)(iters)
    }
}

/// [`Repeat`] boxed, as [`crate::bench::body`] boxes a loop of one call.
pub fn repeat<F: FnMut(u64) -> Result<(), BenchError> + 'static>(f: F) -> Box<dyn Body> {
    Box::new(Repeat(f))
}

/// A repeat loop's early stop as the benchmark's error: the errno the call returned,
/// or (a pipe write or read that moved other than one byte) the count.
#[cold]
#[inline(never)]
pub fn stopped(s: Stopped) -> BenchError {
    match check_raw(s.result, s.call) {
        Err(e) => e,
        Ok(()) => {
            BenchError::Failed(format!("{}(2) moved {} bytes, not 1", s.call, s.result))
        }
    }
}

/// Makes `call` `n` times in its aligned loop ([`crate::os::raw::repeat`]), a failure
/// the benchmark's error: the batch of a [`repeat`] body of one call with arguments.
#[inline(always)]
pub fn call_n(call: Call<'_>, n: u64) -> Result<(), BenchError> {
    crate::os::raw::repeat(call, n).map_err(stopped)
}

/// `via=libc|raw`, default `libc`, for a benchmark whose call has a C library wrapper.
pub const BOTH: ParamSpec = ParamSpec {
    name: "via",
    default: DEFAULT,
    about:
        "libc: the C library's wrapper · raw: the syscall instruction in the loop itself",
    kind: Kind::Choice(&["libc", "raw"]),
};

/// [`BOTH`] in a list of its own, for a benchmark with no other parameter.
pub const ONLY_BOTH: &[ParamSpec] = &[BOTH];

/// How an instance's timed calls enter the kernel: the `via` words ([`WORDS`]), one
/// meaning each wherever they appear, and `fault`. The JSON writes it as the word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryPath {
    /// `libc`: a function of the C library holds the `syscall` instruction (its wrapper,
    /// as glibc's `write`, or a function it calls), called from syscost's loop, so that
    /// a return follows the kernel's; what most programs pay.
    Libc,
    /// `raw`: the `syscall` instruction in syscost's own code, no C library function
    /// around it: in the timed loop itself ([`crate::os::raw`], the aligned loops of
    /// `via=raw`, or an `asm!` block the compiler places).
    Raw,
    /// `syscall`: the C library's generic `syscall()` function, for calls it has no
    /// wrapper of (futex, tgkill, io_uring_enter) or whose wrapper does more.
    Syscall,
    /// `vdso`: the C library's call served in user space by the vDSO: no kernel entry.
    Vdso,
    /// `fault`: no call; the kernel is entered by the page faults of plain loads and
    /// stores.
    Fault,
}

impl EntryPath {
    /// Every path, in the order the words are explained.
    pub const ALL: [EntryPath; 5] = [
        EntryPath::Libc,
        EntryPath::Raw,
        EntryPath::Syscall,
        EntryPath::Vdso,
        EntryPath::Fault,
    ];

    /// The word, as `via=` and the JSON write it.
    pub fn word(self) -> &'static str {
        match self {
            EntryPath::Libc => "libc",
            EntryPath::Raw => "raw",
            EntryPath::Syscall => "syscall",
            EntryPath::Vdso => "vdso",
            EntryPath::Fault => "fault",
        }
    }

    /// The path a word names.
    pub fn from_word(w: &str) -> Option<EntryPath> {
        EntryPath::ALL.into_iter().find(|p| p.word() == w)
    }

    /// One line: what the word means.
    pub fn meaning(self) -> &'static str {
        match self {
            EntryPath::Libc => {
                "a C library function holds the syscall instruction (its wrapper)"
            }
            EntryPath::Raw => {
                "the syscall instruction in syscost's own code, no function around it"
            }
            EntryPath::Syscall => "the C library's generic syscall() function",
            EntryPath::Vdso => "served in user space by the vDSO, no kernel entry",
            EntryPath::Fault => "no call: the kernel is entered by page faults",
        }
    }
}

impl std::fmt::Display for EntryPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.word())
    }
}

/// The fixed path of a benchmark without a `via` parameter ([`super::Enters::Fixed`]):
/// what its timed region's main calls go through, the parameter values that change it,
/// and the rest, read from its timed body and the `src/os` wrappers it calls.
#[derive(Debug, Clone, Copy)]
pub struct Fixed {
    /// The main calls' path.
    pub path: EntryPath,
    /// `(parameter, value, path)`: an instance with that value takes that path instead.
    pub unless: &'static [(&'static str, &'static str, EntryPath)],
    /// The calls, and the rest of the timed region's entries where it mixes paths.
    pub calls: &'static str,
}

/// Whether an instance's timed region stays in user space: a benchmark that does not
/// enter the kernel, a vDSO call, or what its entry says ([`super::Facts::user_space`]: the C
/// library's `malloc` below its mmap threshold, a mutex no other copy contends for).
/// The harness reads such an instance's resource usage once a round, not around each
/// batch (`usage_per_round` in [`crate::harness::Settings`]).
pub fn stays_in_user_space(b: &dyn Bench, p: &Params) -> bool {
    let facts = b.facts();
    if let Some(user) = facts.user_space {
        return user(p);
    }
    match entry(b, p) {
        Some(path) => path == EntryPath::Vdso,
        None => matches!(facts.enters, Enters::Not(_)),
    }
}

/// Whether an instance's tasks leave a CPU idle while they wait: work that crosses
/// CPUs or that the scheduler places ([`super::facts::work_kind`] `Cross`), or what its
/// entry says ([`super::Facts::idle`]: a timed sleep, a PI lock held across a sleep). Such a
/// round runs its operation for [`crate::method::SETTLE_NS`] before it samples.
pub fn leaves_cpus_idle(b: &dyn Bench, p: &Params) -> bool {
    super::facts::work_kind(b, p) == crate::harness::probe::WorkKind::Cross
        || (b.facts().idle)(p)
}

/// How an instance of `b` with the parameters `p` enters the kernel in its timed
/// region: its `via` where it takes one, else its fixed path; `None` for a benchmark
/// that does not enter it.
pub fn entry(b: &dyn Bench, p: &Params) -> Option<EntryPath> {
    if let Some((_, v)) = p.0.iter().find(|(n, _)| *n == "via") {
        return EntryPath::from_word(v);
    }
    let Enters::Fixed(f) = b.facts().enters else {
        return None;
    };
    let has = |k: &str, v: &str| p.0.iter().any(|(n, x)| *n == k && x == v);
    Some(
        f.unless
            .iter()
            .find(|(k, v, _)| has(k, v))
            .map_or(f.path, |u| u.2),
    )
}

/// `b`'s fixed path as `syscost list` shows it: the word, then in brackets the
/// parameter values that take another path and the calls (`None` for a benchmark that
/// takes `via`, or does not enter the kernel).
pub fn fixed_line(b: &dyn Bench) -> Option<String> {
    let Enters::Fixed(f) = b.facts().enters else {
        return None;
    };
    let mut other: Vec<(&str, Vec<&str>, EntryPath)> = Vec::new();
    for &(k, v, path) in f.unless {
        match other.iter_mut().find(|(ok, _, op)| *ok == k && *op == path) {
            Some(o) => o.1.push(v),
            None => other.push((k, vec![v], path)),
        }
    }
    let mut about: Vec<String> = other
        .iter()
        .map(|(k, vs, path)| format!("{k}={}: {path}", vs.join(",")))
        .collect();
    about.push(f.calls.to_string());
    Some(format!("{}  ({})", f.path, about.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::testing::kv;
    use crate::bench::{catalogue, params};
    use crate::os::raw;

    /// The benchmarks the issue names take `via=libc|raw` with the default `libc`, and
    /// no benchmark uses a word outside [`WORDS`].
    #[test]
    fn via_means_the_same_words_in_every_benchmark() {
        let mut both = Vec::new();
        for b in catalogue() {
            for p in b.params().iter().filter(|p| p.name == "via") {
                let Kind::Choice(words) = p.kind else {
                    panic!("{}: via is not a choice of words", b.name());
                };
                for w in words {
                    assert!(WORDS.contains(w), "{}: via word {w}", b.name());
                }
                if words.contains(&"libc") && words.contains(&"raw") {
                    assert_eq!(p.default, DEFAULT, "{}", b.name());
                    both.push(b.name());
                }
            }
        }
        for name in [
            "ipc.pipe.self",
            "ctx.pipe",
            "file.open_close",
            "file.read",
            "syscall.getpid",
            "syscall.getppid",
            "syscall.getuid",
            "syscall.getgid",
            "syscall.uname",
            "syscall.times",
            "syscall.dup_close",
            "syscall.kill",
            "syscall.writev",
            "syscall.poll",
        ] {
            assert!(both.contains(&name), "{name} does not take via=libc|raw");
        }
    }

    /// What stays in user space: the benchmarks without a kernel entry and vDSO calls,
    /// malloc below the mmap threshold, a mutex that no thread copy contends for.
    #[test]
    fn user_space_instances_are_those_that_never_enter_the_kernel() {
        let at = |bench: &str, pairs: &[(&'static str, &str)]| {
            stays_in_user_space(crate::bench::find(bench).unwrap(), &kv(pairs))
        };
        assert!(at("call.empty", &[]));
        assert!(at("clock.monotonic", &[]));
        assert!(!at("clock.process_cputime", &[]));
        assert!(!at("syscall.getpid", &[("via", "libc")]));
        assert!(at("mem.malloc", &[("size", "1024")]));
        assert!(!at("mem.malloc", &[("size", "134217728")]));
        let mutex = |copies: &str, how: &str, share: &str| {
            at(
                "sync.mutex",
                &[("copies", copies), ("copies_as", how), ("share", share)],
            )
        };
        assert!(mutex("1", "thread", "one-mutex"));
        assert!(mutex("2", "process", "one-mutex"));
        assert!(mutex("2", "thread", "mutex-per-copy"));
        assert!(!mutex("2", "thread", "one-mutex"));
    }

    /// The instances that settle before sampling are those whose tasks wait with a CPU
    /// idle: on another CPU, on a timer, or holding a PI lock across a sleep.
    #[test]
    fn instances_that_leave_a_cpu_idle_are_cross_cpu_sleeps_and_held_pi_locks() {
        let at = |bench: &str, pairs: &[(&'static str, &str)]| {
            leaves_cpus_idle(crate::bench::find(bench).unwrap(), &kv(pairs))
        };
        assert!(at("ctx.pingpong", &[("placement", "cross-cpu")]));
        assert!(at("ctx.messaging", &[("placement", "free")]));
        assert!(!at("ctx.pingpong", &[("placement", "same-cpu")]));
        assert!(at("svc.sleep", &[("ns", "10000")]));
        assert!(at("svc.usleep", &[]));
        assert!(at(
            "sync.futex.lock_pi",
            &[("hold_us", "1"), ("placement", "same-cpu")]
        ));
        assert!(!at(
            "sync.futex.lock_pi",
            &[("hold_us", "0"), ("placement", "same-cpu")]
        ));
        assert!(!at("syscall.getpid", &[("via", "libc")]));
    }

    /// A repeat body runs its batch as one call with the batch's count, and a stopped
    /// loop fails with the call's errno, or with the count a pipe call moved.
    #[test]
    fn repeat_bodies_pass_the_count_and_stops_become_errors() {
        let mut seen = Vec::new();
        let mut b = Repeat(|n| {
            seen.push(n);
            Ok(())
        });
        b.run(7).unwrap();
        b.run(0).unwrap();
        assert_eq!(seen, [7, 0]);
        let e = stopped(Stopped {
            call: "read",
            result: -(libc::EBADF as isize),
        });
        assert!(e.to_string().contains("read"), "{e}");
        let e = stopped(Stopped {
            call: "write",
            result: 0,
        });
        assert!(
            e.to_string().contains("write(2) moved 0 bytes, not 1"),
            "{e}"
        );
        let mut getpids = repeat(|n| raw::getpid_repeat(n).map_err(stopped));
        assert_eq!(getpids.run(100).is_ok(), raw::AVAILABLE);
    }

    /// Every benchmark says how it enters the kernel: a `via` parameter exactly when
    /// its entry says so, a fixed path whose other values it takes, or none; and every
    /// instance of its defaults gets an entry unless it has none.
    #[test]
    fn every_benchmark_says_how_it_enters_the_kernel() {
        for b in catalogue() {
            let via = b.params().iter().any(|p| p.name == "via");
            let enters = b.facts().enters;
            assert_eq!(via, matches!(enters, Enters::Via), "{}", b.name());
            let none = matches!(enters, Enters::Not(_));
            for p in params::expand(b.name(), b.params(), &[]).unwrap() {
                assert_eq!(entry(b, &p).is_none(), none, "{}", b.name());
            }
            let Enters::Fixed(f) = enters else { continue };
            for (k, v, path) in f.unless {
                let spec = b.params().iter().find(|p| p.name == *k);
                let Some(ParamSpec {
                    kind: Kind::Choice(words),
                    ..
                }) = spec
                else {
                    panic!("{}: {k} is not a choice it takes", b.name());
                };
                assert!(words.contains(v), "{}: {k}={v}", b.name());
                assert_ne!(*path, f.path, "{}: {k}={v}", b.name());
            }
        }
    }

    /// `via` decides where a benchmark takes it; elsewhere the fixed path, changed by
    /// the parameter values that change it.
    #[test]
    fn entry_follows_via_then_the_fixed_path() {
        let e = |name, pairs: &[(&'static str, &str)]| {
            crate::bench::find(name).and_then(|b| entry(b, &kv(pairs)))
        };
        assert_eq!(e("syscall.getpid", &[("via", "raw")]), Some(EntryPath::Raw));
        assert_eq!(
            e("syscall.setuid", &[("via", "syscall")]),
            Some(EntryPath::Syscall)
        );
        assert_eq!(e("syscall.time", &[("via", "vdso")]), Some(EntryPath::Vdso));
        assert_eq!(e("syscall.getpid.raw", &[]), Some(EntryPath::Raw));
        assert_eq!(e("syscall.getpid.indirect", &[]), Some(EntryPath::Syscall));
        let mech = |m| e("ctx.pingpong", &[("mechanism", m), ("kind", "process")]);
        assert_eq!(mech("pipe"), Some(EntryPath::Libc));
        assert_eq!(mech("futex"), Some(EntryPath::Syscall));
        assert_eq!(mech("signal"), Some(EntryPath::Syscall));
        assert_eq!(
            e("mem.fault.zero", &[("prefault", "none")]),
            Some(EntryPath::Fault)
        );
        assert_eq!(
            e("mem.fault.zero", &[("prefault", "populate")]),
            Some(EntryPath::Libc)
        );
        assert_eq!(e("call.empty", &[]), None);
        assert_eq!(e("clock.tsc", &[]), None);
        assert_eq!(e("no.such", &[]), None);
        for w in WORDS {
            assert_eq!(EntryPath::from_word(w).map(|p| p.word()), Some(w));
        }
        let find = |n| crate::bench::find(n).unwrap();
        let line = fixed_line(find("ctx.pingpong")).unwrap();
        assert!(
            line.starts_with("libc  (mechanism=futex,signal: syscall; "),
            "{line}"
        );
        assert_eq!(fixed_line(find("syscall.getpid")), None);
        let json = serde_json::to_string(&EntryPath::Syscall).unwrap();
        assert_eq!(json, "\"syscall\"");
        let back: EntryPath = serde_json::from_str("\"fault\"").unwrap();
        assert_eq!(back, EntryPath::Fault);
    }

    /// `docs/entry.md`'s list of which benchmarks take which path, as their entries
    /// say it (in catalogue order).
    fn paths_markdown() -> String {
        let mut out = String::from(
            "| path | what it means | benchmarks without `via` |\n|---|---|---|\n",
        );
        let all = catalogue();
        for path in EntryPath::ALL {
            let mut cell = Vec::new();
            for b in &all {
                let name = b.name();
                let Enters::Fixed(f) = b.facts().enters else {
                    continue;
                };
                if f.path == path {
                    cell.push(format!("`{name}`"));
                }
                let vals: Vec<_> = f.unless.iter().filter(|u| u.2 == path).collect();
                if let Some((k, _, _)) = vals.first() {
                    let vs: Vec<_> = vals.iter().map(|u| u.1).collect();
                    cell.push(format!("`{name} {k}={}`", vs.join(",")));
                }
            }
            let cell = if cell.is_empty() {
                "none".to_string()
            } else {
                cell.join(", ")
            };
            out += &format!("| `{path}` | {} | {cell} |\n", path.meaning());
        }
        let none: Vec<_> = all
            .iter()
            .filter(|b| matches!(b.facts().enters, Enters::Not(_)))
            .map(|b| format!("`{}`", b.name()))
            .collect();
        out += &format!("| none | no kernel entry | {} |\n", none.join(", "));
        out
    }

    /// The table in `docs/entry.md` is the one the code makes: it cannot drift.
    #[test]
    fn docs_list_the_paths_the_code_gives() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/entry.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let want = paths_markdown();
        assert!(
            doc.contains(&want),
            "docs/entry.md's table of paths differs from the catalogue's entries; it \
             should read:\n\n{want}"
        );
    }

    #[test]
    fn via_parses_and_rejects_other_words() {
        let args = ["via=libc,raw".parse().unwrap()];
        let all = params::expand("t", ONLY_BOTH, &args).unwrap();
        let got: Vec<_> = all.iter().map(|p| Via::of(p).unwrap()).collect();
        assert_eq!(got, [Via::Libc, Via::Raw]);
        let e = params::expand("t", ONLY_BOTH, &["via=vdso".parse().unwrap()]);
        assert!(e.unwrap_err().to_string().contains("one of libc, raw"));
        let d = params::expand("t", ONLY_BOTH, &[]).unwrap();
        assert_eq!(d[0].label(), "via=libc");
    }
}
