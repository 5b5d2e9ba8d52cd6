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
use crate::harness::Body;
use crate::os::raw::{Call, Stopped};

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

#[cfg(test)]
mod tests {
    use super::*;
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
