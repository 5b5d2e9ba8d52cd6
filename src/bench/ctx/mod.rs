//! Context switches: a ring of n tasks passing a token (Sloan's pipeline, 1992), and
//! two tasks bouncing control through one mechanism at a time (Manea, 1999 §4).
//!
//! Tasks are forked processes or threads of this process. Every task is created in
//! `prepare` and ended, reaped or joined when the body is dropped; nothing here signals
//! a process it did not create.

pub mod messaging;
pub mod pingpong;
pub mod ring;

use crate::bench::{Bench, Kind, OrOs, ParamSpec};
use crate::error::BenchError;
use crate::os::affinity::{self, Pin};

/// The family.
pub const BENCHES: &[&dyn Bench] = &[
    &ring::RING,
    &ring::PIPE,
    &pingpong::PINGPONG,
    &messaging::MESSAGING,
];

/// The words of every benchmark's `placement` parameter, each with one meaning wherever
/// it appears: `same-cpu` puts every task of the benchmark on one CPU (see
/// [`home_cpu`]), `cross-cpu` puts the other task on a CPU of its own (see
/// [`other_cpu`]), `free` leaves them all to the scheduler.
pub const PLACEMENTS: [&str; 3] = ["same-cpu", "cross-cpu", "free"];

/// The `placement` parameter: `default` (one word or a sweep) and what it means for
/// this benchmark, over all of [`PLACEMENTS`].
pub const fn placement(default: &'static str, about: &'static str) -> ParamSpec {
    placement_among(default, about, &PLACEMENTS)
}

/// [`placement`] for a benchmark that takes only some of the words (a leading part or
/// a selection of [`PLACEMENTS`], never a word of its own: a test checks).
pub const fn placement_among(
    default: &'static str,
    about: &'static str,
    words: &'static [&'static str],
) -> ParamSpec {
    ParamSpec {
        name: "placement",
        default,
        about,
        kind: Kind::Choice(words),
    }
}

/// The CPU that tasks placed on one CPU share: the measuring thread's CPU when it is
/// pinned to one (`--cpu`), else the one this process was told to measure on
/// ([`choose_home`]), else the first CPU this process may use.
pub fn home_cpu() -> Result<usize, BenchError> {
    let now = affinity::allowed_cpus().or_os("sched_getaffinity")?;
    let chosen = CHOSEN.load(std::sync::atomic::Ordering::Relaxed);
    home_among(&now, &affinity::process_cpus(), chosen)
        .ok_or_else(|| BenchError::Failed("this process may use no CPU".into()))
}

/// [`home_cpu`] for a thread allowed `now`, in a process that may use `cpus` and was
/// told `chosen` (`usize::MAX`: nothing).
fn home_among(now: &[usize], cpus: &[usize], chosen: usize) -> Option<usize> {
    match now {
        [one] => Some(*one),
        _ if cpus.contains(&chosen) => Some(chosen),
        _ => cpus.first().copied(),
    }
}

/// The home CPU this process was told to measure on (`usize::MAX`: none).
static CHOSEN: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(usize::MAX);

/// Makes `cpu` this process's home CPU ([`home_cpu`]) when it may use it: a worker
/// told by its parent which CPU read the machine fastest before its round.
pub fn choose_home(cpu: usize) {
    CHOSEN.store(cpu, std::sync::atomic::Ordering::Relaxed);
}

/// A CPU other than `home` that this process may use.
pub fn other_cpu(home: usize) -> Option<usize> {
    affinity::process_cpus().into_iter().find(|&c| c != home)
}

/// [`place`], with the measuring thread pinned at once: the pin (undone on drop) and
/// the other task's CPUs.
pub fn place_pinned(placement: &str) -> Result<(Option<Pin>, Vec<usize>), BenchError> {
    let (mine, other) = place(placement)?;
    Ok((mine.map(Pin::to).transpose().or_os("pin")?, other))
}

/// The CPUs of a two-task `placement`: the measuring thread's CPU (None: left
/// unpinned) and the other task's. `same-cpu` shares [`home_cpu`], `cross-cpu` adds
/// [`other_cpu`] (skipped, with the reason, when there is none), anything else is free.
/// Nothing is pinned here (see [`place_pinned`]).
pub fn place(placement: &str) -> Result<(Option<usize>, Vec<usize>), BenchError> {
    let home = home_cpu()?;
    Ok(match placement {
        "same-cpu" => (Some(home), vec![home]),
        "cross-cpu" => {
            let other = other_cpu(home).ok_or_else(|| {
                BenchError::Skip(
                    "cross-cpu needs two CPUs; this process may use one".into(),
                )
            })?;
            (Some(home), vec![other])
        }
        _ => (None, affinity::process_cpus()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_home_is_the_pinned_cpu_else_the_chosen_one_else_the_first() {
        const NONE: usize = usize::MAX;
        // Pinned to one CPU (--cpu): that one, whatever was chosen.
        assert_eq!(home_among(&[3], &[0, 1, 2, 3], 1), Some(3));
        // Told which: that one, when the process may use it.
        assert_eq!(home_among(&[0, 1], &[0, 1], 1), Some(1));
        assert_eq!(home_among(&[0, 1], &[0, 1], 7), Some(0));
        // Told nothing: the first CPU the process may use.
        assert_eq!(home_among(&[2, 5], &[2, 5], NONE), Some(2));
        assert_eq!(home_among(&[], &[], NONE), None);
    }

    #[test]
    fn placement_means_the_same_words_in_every_benchmark() {
        let mut takers = 0;
        for b in crate::bench::catalogue() {
            for p in b.params().iter().filter(|p| p.name == "placement") {
                takers += 1;
                let Kind::Choice(words) = p.kind else {
                    panic!("{}: placement is not a choice of words", b.name());
                };
                for w in words {
                    assert!(PLACEMENTS.contains(w), "{}: placement word {w}", b.name());
                }
                for d in p.default.split(',') {
                    assert!(words.contains(&d), "{}: default {d}", b.name());
                }
            }
        }
        // ctx.ring, ctx.pipe, ctx.pingpong, ipc.rtt, ipc.bw, svc.wake.*, signal.*.
        assert!(takers >= 8, "only {takers} benchmarks take a placement");
    }
}
