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

use super::{Kind, ParamSpec, Params};
use crate::error::BenchError;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{catalogue, params};

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
