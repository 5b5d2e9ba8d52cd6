//! The sampling's bias measured on a known answer (`syscost explain --skid`): a loop
//! whose iteration is a user-space spin of known length and one getpid. Timed alone,
//! the spin takes `s` ns and getpid `g` ns; sampled together, the spin's function
//! should get `s` ns of each iteration. Two errors are reported: the spin's (how far
//! a share of plain user code is off), and the user instructions right after the
//! `syscall` instruction (the wrapper and the loop, a few ns of real work), which
//! receive whatever was due while the kernel's exit path ran with interrupts off.
//!
//! This runs in the calling process: it is a check of the sampler, not a benchmark.

use crate::draw::units::fmt_ns;
use crate::os::sampler::{Options, Record, Sampler};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// What the check found, ns per iteration unless said.
#[derive(Debug, Clone, PartialEq)]
pub struct Skid {
    /// The event sampled.
    pub event: &'static str,
    /// The spin timed alone.
    pub spin_ns: f64,
    /// getpid timed alone.
    pub getpid_ns: f64,
    /// One iteration, not sampled.
    pub unsampled_iter_ns: f64,
    /// One iteration while sampled.
    pub iter_ns: f64,
    /// Samples inside the sampled loop.
    pub samples: u64,
    /// What the samples gave the spin.
    pub spin_attributed_ns: f64,
    /// What they gave the user instructions that are not the spin.
    pub after_syscall_ns: f64,
    /// What they gave the kernel.
    pub kernel_ns: f64,
}

impl Skid {
    /// The spin's error: attributed minus known, ns per iteration.
    pub fn spin_error_ns(&self) -> f64 {
        self.spin_attributed_ns - self.spin_ns
    }

    /// The spin's known length while sampled: the sampling's own cost (the sampled
    /// iteration over the unsampled one) falls where the samples land, in proportion.
    pub fn spin_sampled_ns(&self) -> f64 {
        self.spin_ns * self.iter_ns / self.unsampled_iter_ns
    }
}

#[inline(never)]
fn spin(n: u64) -> u64 {
    let mut x = 0u64;
    for i in 0..n {
        x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
    }
    x
}

/// One getpid system call (rustix makes it; nothing caches it).
#[inline(never)]
fn getpid() -> rustix::process::Pid {
    rustix::process::getpid()
}

/// ns per call of `f` over about `d`.
fn per_call(d: Duration, mut f: impl FnMut()) -> f64 {
    let mut n = 0u64;
    let t = Instant::now();
    while t.elapsed() < d {
        for _ in 0..100 {
            f();
        }
        n += 100;
    }
    t.elapsed().as_nanos() as f64 / n as f64
}

/// Runs the check for about `seconds` of sampling, with a spin about `ratio` times
/// getpid's length.
pub fn check(seconds: f64, ratio: f64) -> std::io::Result<Skid> {
    let g = per_call(Duration::from_millis(200), || {
        black_box(getpid());
    });
    let mut n = 16u64;
    while per_call(Duration::from_millis(20), || {
        black_box(spin(n));
    }) < ratio * g
        && n < 1 << 24
    {
        n *= 2;
    }
    let s = per_call(Duration::from_millis(200), || {
        black_box(spin(n));
    });
    let m = per_call(Duration::from_millis(300), || {
        black_box(spin(n));
        black_box(getpid());
    });
    let mut sampler = Sampler::open(&Options {
        hz: super::HZ,
        pages: if crate::os::file::is_root() { 1024 } else { 16 },
        prefer_cycles: true,
    })?;
    let spin_at = spin as fn(u64) -> u64 as usize as u64;
    let mut names = super::symbols::User::of_self();
    let spin_name = names.name(spin_at).unwrap_or_default();
    let t0 = crate::os::sys::raw_ns();
    sampler.enable()?;
    let iter_ns = per_call(Duration::from_secs_f64(seconds), || {
        black_box(spin(n));
        black_box(getpid());
    });
    sampler.disable()?;
    let t1 = crate::os::sys::raw_ns();
    let (mut spin_k, mut user_k, mut kernel_k) = (0u64, 0u64, 0u64);
    let mut raw = Vec::new();
    sampler.drain(|r| {
        if let Record::Sample(x) = r {
            if (t0..=t1).contains(&x.time) {
                raw.push((x.kernel_frames().next().is_some(), x.ip));
            }
        }
    });
    for (kernel, ip) in raw {
        if kernel {
            kernel_k += 1;
        } else if names.name(ip).is_some_and(|f| f == spin_name) {
            spin_k += 1;
        } else {
            user_k += 1;
        }
    }
    let total = (spin_k + user_k + kernel_k).max(1) as f64;
    let share = |k: u64| k as f64 / total * iter_ns;
    Ok(Skid {
        event: sampler.kind.name(),
        spin_ns: s,
        getpid_ns: g,
        unsampled_iter_ns: m,
        iter_ns,
        samples: spin_k + user_k + kernel_k,
        spin_attributed_ns: share(spin_k),
        after_syscall_ns: share(user_k),
        kernel_ns: share(kernel_k),
    })
}

/// The check's report.
pub fn text(k: &Skid) -> String {
    format!(
        "skid check ({} at {} Hz): a user-space spin of {} (timed alone) and getpid ({} \
         alone); one iteration {} unsampled, {} while sampled, {} samples\n\
         \x20 spin: {} per iteration attributed, {} known: error {:+.1} ns ({:+.1}%); \
         {} known with the sampling's own cost spread over it: error {:+.1} ns ({:+.1}%)\n\
         \x20 user code after the syscall instruction (the wrapper and loop, a few ns of \
         work): {} attributed\n\
         \x20 kernel: {} attributed (getpid alone took {}, user side included)\n\
         \x20 reading: the spin's error is how far a share of plain user code may be off \
         here; user code after the syscall beyond a few ns is the kernel's exit path (run \
         with interrupts off), moved there by the deferred samples\n",
        k.event,
        super::HZ,
        fmt_ns(k.spin_ns),
        fmt_ns(k.getpid_ns),
        fmt_ns(k.unsampled_iter_ns),
        fmt_ns(k.iter_ns),
        k.samples,
        fmt_ns(k.spin_attributed_ns),
        fmt_ns(k.spin_ns),
        k.spin_error_ns(),
        100.0 * k.spin_error_ns() / k.spin_ns,
        fmt_ns(k.spin_sampled_ns()),
        k.spin_attributed_ns - k.spin_sampled_ns(),
        100.0 * (k.spin_attributed_ns / k.spin_sampled_ns() - 1.0),
        fmt_ns(k.after_syscall_ns),
        fmt_ns(k.kernel_ns),
        fmt_ns(k.getpid_ns),
    )
}
