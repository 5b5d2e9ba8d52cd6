//! Two prepared operations measured in turns: the reference (A) and an alternative
//! (B), batches in quartets A B B A, so a drift linear over a quartet weighs both
//! alike, and both meet the same state of the machine. Each quartet gives one pair
//! `(a, b)`, ns per operation with each side's own empty loop subtracted; the
//! statistics of pairs are [`crate::stats::paired`].
//!
//! A side is a [`Turn`]: something that times one batch of its operation when asked.
//! Most sides live in the measuring thread ([`Local`]). An operation bound to the
//! thread that prepared it (a seccomp filter belongs to the thread that installed it)
//! lives in a thread of its own ([`InThread`]) that takes its turn under a handshake:
//! the measuring thread sends "go", the side's thread times its own batch with its own
//! clock reads (so the handshake stays outside the timed region) and answers. What
//! belongs to a process (a namespace, a cgroup) puts each side in a forked process of
//! its own ([`InProcess`]), under the same handshake over a socket. Like the rest of
//! the harness, it knows no benchmark and never prints.

use super::clock::Clock;
use super::{analyze, check_interrupt, EmptyLoop, Harness, Plan, Settings};
use crate::error::BenchError;
use std::sync::mpsc::{channel, Receiver, Sender};

/// Where an alternative's operation must live to be measured in pairs with the
/// reference: what decides it is a parameter's (`session::paired::home_of`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Home {
    /// In the measuring thread, beside the reference ([`Local`]).
    Shared,
    /// In a thread of its own, prepared there ([`InThread`]): what it sets up belongs
    /// to the thread (a seccomp filter, an rseq registration).
    OwnThread,
    /// In a process of its own, forked for the round ([`InProcess`]): what it sets up
    /// belongs to the process (a namespace, a cgroup). Both sides then get one, so
    /// that neither is the older process.
    OwnProcess,
}

/// A turn's outcome: ns per operation and whether the batch was perturbed.
type Answer = Result<(f64, bool), BenchError>;

/// One side of a pair: times one batch of its operation.
pub trait Turn {
    /// Times one batch: ns per operation (its empty loop subtracted) and whether the
    /// resource counters say the batch was perturbed.
    fn turn(&mut self) -> Answer;
}

/// A side measured in the calling thread.
pub struct Local<'h, 'b> {
    h: &'h Harness<'h>,
    body: &'b mut dyn super::Body,
    plan: Plan,
    k: u64,
    overhead: u64,
}

impl<'h, 'b> Local<'h, 'b> {
    /// Calibrates `body`, warms it for `warm_ns` and measures its empty loop at the
    /// batch size found: ready for turns.
    pub fn ready(
        h: &'h Harness<'h>,
        body: &'b mut dyn super::Body,
        plan: Plan,
        warm_ns: u64,
    ) -> Result<Local<'h, 'b>, BenchError> {
        let (k, overhead) = h.ready(body, &mut EmptyLoop, plan, warm_ns)?;
        Ok(Local {
            h,
            body,
            plan,
            k,
            overhead: overhead.ticks,
        })
    }
}

impl Turn for Local<'_, '_> {
    fn turn(&mut self) -> Answer {
        let (_, ticks, usage, _) = self.h.batch(self.body, self.k, false)?;
        let ops = (self.k * self.plan.per_iter.max(1)) as f64;
        let ns = self.h.clock.to_ns(ticks.saturating_sub(self.overhead)) / ops;
        let perturbed =
            analyze::perturbation(&usage, self.plan.expect) != Default::default();
        Ok((ns, perturbed))
    }
}

/// What a side in a process of its own prepares: its body, its plan, and what it holds
/// until it ends.
type Prepared = Result<(Box<dyn super::Body>, Plan, Box<dyn std::any::Any>), BenchError>;

/// The loop of a side in a thread or a process of its own: prepares its body with
/// `prepare` (its third value is held until the side ends), readies it as
/// [`Local::ready`] does and says so with `answer`, then takes a turn each time `go`
/// asks for one, until `go` or `answer` finds the other end gone. An error that stops
/// it is answered.
fn take_turns<P>(
    (clock, settings, warm_ns): (&dyn Clock, Settings, u64),
    prepare: P,
    mut go: impl FnMut() -> bool,
    mut answer: impl FnMut(Answer) -> bool,
) where
    P: FnOnce() -> Prepared,
{
    let h = Harness::new(clock, settings);
    let served = prepare().and_then(|(mut body, plan, held)| {
        let mut side = Local::ready(&h, body.as_mut(), plan, warm_ns)?;
        answer(Ok((0.0, false)));
        while go() && answer(side.turn()) {}
        // What the side prepared goes before what it holds (a cgroup is left once its
        // tasks are gone).
        drop(body);
        drop(held);
        Ok(())
    });
    if let Err(e) = served {
        answer(Err(e));
    }
}

/// A side in a thread of its own (see the module's text). Dropping it ends the
/// thread's loop; the scope it was started in joins it.
pub struct InThread {
    go: Sender<()>,
    back: Receiver<Answer>,
}

impl InThread {
    /// Starts, in `scope`, a thread that reads `clock`, prepares its
    /// body with `prepare` (in that thread, which it then belongs to), readies it as
    /// [`Local::ready`] does, and takes turns. Returns once the side is ready, or with
    /// the error that stopped it.
    pub fn start<'scope, P>(
        scope: &'scope std::thread::Scope<'scope, '_>,
        settings: Settings,
        warm_ns: u64,
        clock: &'scope (dyn Clock + Sync),
        prepare: P,
    ) -> Result<InThread, BenchError>
    where
        P: FnOnce() -> Result<(Box<dyn super::Body>, Plan), BenchError> + Send + 'scope,
    {
        let (go, wait) = channel::<()>();
        let (answer, back) = channel();
        scope.spawn(move || {
            let prepare = || {
                let (body, plan) = prepare()?;
                Ok((body, plan, Box::new(()) as Box<dyn std::any::Any>))
            };
            let go = || wait.recv().is_ok();
            take_turns((clock, settings, warm_ns), prepare, go, |turn| {
                answer.send(turn).is_ok()
            });
        });
        let side = InThread { go, back };
        match side.back.recv() {
            Ok(Ok(_)) => Ok(side),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(BenchError::Failed("the side's thread ended early".into())),
        }
    }
}

impl Turn for InThread {
    fn turn(&mut self) -> Answer {
        let lost = || BenchError::Failed("the side's thread ended early".into());
        self.go.send(()).map_err(|_| lost())?;
        self.back.recv().map_err(|_| lost())?
    }
}

/// A side in a process of its own, forked from this one (which must be
/// single-threaded) and taking turns under a handshake over a socket: a byte asks for
/// a turn, the answer is the turn's outcome. Dropping it shuts the socket down (the
/// side's process holds a copy of this end, so closing it would not be seen); the
/// process then drops what it prepared (a cgroup it made is removed) and exits, and is
/// reaped, or killed and reaped after five seconds.
pub struct InProcess {
    link: Option<std::os::unix::net::UnixStream>,
    child: crate::os::task::Child,
}

/// How long a side's process may take to release what it prepared and exit.
const SIDE_EXIT: std::time::Duration = std::time::Duration::from_secs(5);

impl InProcess {
    /// Forks the side's process, which prepares its body with `prepare` (there: what
    /// the closure sets up belongs to that process; its third value is held until the
    /// side ends), readies it as [`Local::ready`] does and takes turns. Returns once the
    /// side is ready, or with the error that stopped it.
    pub fn start<P>(
        settings: Settings,
        warm_ns: u64,
        clock: &dyn Clock,
        prepare: P,
    ) -> Result<InProcess, BenchError>
    where
        P: FnOnce() -> Prepared,
    {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair()
            .map_err(|e| BenchError::os("socketpair for a paired side", e))?;
        let child = crate::os::task::fork_alone(move || {
            // One socket both ways: a byte asks for a turn, the answer goes back.
            let link = std::cell::RefCell::new(theirs);
            let mut go = [0u8; 1];
            let go =
                || matches!(std::io::Read::read(&mut *link.borrow_mut(), &mut go), Ok(1));
            take_turns((clock, settings, warm_ns), prepare, go, |turn| {
                // Framed CBOR, as the worker protocol's messages travel. A parent that
                // is gone reads nothing: this side then ends at its next read.
                let _ = crate::os::memfile::send(&mut link.borrow_mut(), &turn);
                true
            });
            0
        })
        .map_err(|e| BenchError::Skip(format!("a paired side's process: {e}")))?;
        let mut side = InProcess {
            link: Some(ours),
            child,
        };
        side.answer().map(|_| side)
    }

    fn answer(&mut self) -> Answer {
        let lost = |e: std::io::Error| {
            BenchError::Failed(format!("the side's process ended early: {e}"))
        };
        let link = self
            .link
            .as_mut()
            .ok_or_else(|| lost(std::io::ErrorKind::BrokenPipe.into()))?;
        match crate::os::memfile::recv(link) {
            Ok(Some(turn)) => turn,
            Ok(None) => Err(lost(std::io::ErrorKind::UnexpectedEof.into())),
            Err(e) => Err(lost(e)),
        }
    }
}

impl Turn for InProcess {
    fn turn(&mut self) -> Answer {
        let link = self
            .link
            .as_mut()
            .ok_or_else(|| BenchError::Failed("the side's process ended early".into()))?;
        std::io::Write::write_all(link, b"g").map_err(|e| {
            BenchError::Failed(format!("the side's process ended early: {e}"))
        })?;
        self.answer()
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        if let Some(link) = self.link.take() {
            let _ = link.shutdown(std::net::Shutdown::Both);
        }
        let _ = self.child.reap_by(std::time::Instant::now() + SIDE_EXIT);
    }
}

/// Quartets A B B A of `a` and `b` until `ns` have passed on `h`'s clock and at least
/// `min` quartets were taken (at most `max`): the pairs `(a, b)` of the quartets none of
/// whose batches was perturbed, or all the pairs when fewer than three are clean.
pub fn quartets(
    h: &Harness<'_>,
    a: &mut dyn Turn,
    b: &mut dyn Turn,
    ns: u64,
    min: usize,
    max: usize,
) -> Result<Vec<(f64, f64)>, BenchError> {
    let start = h.clock.now();
    let mut clean = Vec::new();
    let mut all = Vec::new();
    while all.len() < max.max(1) {
        let (a1, p1) = a.turn()?;
        let (b1, p2) = b.turn()?;
        let (b2, p3) = b.turn()?;
        let (a2, p4) = a.turn()?;
        let pair = ((a1 + a2) / 2.0, (b1 + b2) / 2.0);
        all.push(pair);
        if !(p1 || p2 || p3 || p4) {
            clean.push(pair);
        }
        check_interrupt()?;
        if all.len() >= min && h.since(start) >= ns as f64 {
            break;
        }
    }
    Ok(if clean.len() >= crate::method::MIN_CLEAN_QUARTETS {
        clean
    } else {
        all
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::clock::Monotonic;
    use crate::harness::{Loop, Profile};

    fn spin(n: u32) -> impl FnMut() -> Result<(), BenchError> {
        move || {
            let mut x = 1u64;
            for i in 0..n {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005) ^ i as u64);
            }
            std::hint::black_box(x);
            Ok(())
        }
    }

    fn settings() -> Settings {
        let mut s = Settings::new(Profile::QUICK, 1.0);
        s.profile.min_batch_ns = 20_000;
        s
    }

    #[test]
    fn a_body_against_itself_reads_near_one() {
        let clock = Monotonic;
        let h = Harness::new(&clock, settings());
        let (mut x, mut y) = (Loop(spin(50)), Loop(spin(50)));
        let mut a = Local::ready(&h, &mut x, Plan::default(), 1_000_000).unwrap();
        let mut b = Local::ready(&h, &mut y, Plan::default(), 1_000_000).unwrap();
        let pairs = quartets(&h, &mut a, &mut b, 5_000_000, 5, 10_000).unwrap();
        let r = crate::stats::paired::round(&pairs).unwrap();
        // A sanity range, not a speed: identical bodies give a ratio near 1.
        assert!((0.8..1.25).contains(&r.ratio), "{r:?}");
    }

    #[test]
    fn a_side_in_its_own_thread_takes_turns_and_is_joined() {
        let clock = Monotonic;
        let h = Harness::new(&clock, settings());
        let mut x = Loop(spin(50));
        let mut a = Local::ready(&h, &mut x, Plan::default(), 1_000_000).unwrap();
        let thread = std::sync::Mutex::new(None);
        let pairs = std::thread::scope(|scope| {
            let mut b = InThread::start(scope, settings(), 1_000_000, &Monotonic, || {
                *thread.lock().unwrap() = Some(std::thread::current().id());
                let body: Box<dyn super::super::Body> = Box::new(Loop(spin(50)));
                Ok((body, Plan::default()))
            })
            .unwrap();
            quartets(&h, &mut a, &mut b, 5_000_000, 5, 10_000).unwrap()
        });
        assert_ne!(*thread.lock().unwrap(), Some(std::thread::current().id()));
        let r = crate::stats::paired::round(&pairs).unwrap();
        assert!((0.8..1.25).contains(&r.ratio), "{r:?}");
    }

    #[test]
    fn a_side_that_fails_to_prepare_says_why() {
        let e = std::thread::scope(|scope| {
            InThread::start(scope, settings(), 0, &Monotonic, || {
                Err(BenchError::Skip("not here".into()))
            })
            .err()
        });
        assert!(matches!(e, Some(BenchError::Skip(_))), "{e:?}");
    }
}
