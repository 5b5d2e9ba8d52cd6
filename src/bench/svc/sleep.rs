//! Sleep accuracy: the seed's timing executive began each measurement with a 10 ms
//! `$SCHDWK` and `$HIBER`, trusting the wake-up to come on the tick. Here one relative
//! clock_nanosleep(CLOCK_MONOTONIC) is timed at a time; the headline is the measured
//! sleep, and the facts give how late it ended (measured − requested) over every
//! sample, as cyclictest reports it.

use super::percentile;
use crate::bench::facts::*;
use crate::bench::Fact;
use crate::bench::{Kind, ParamSpec, Params, Prepared, Simple};
use crate::error::BenchError;
use crate::harness::{Body, Plan};
use crate::os::interrupt;
use crate::os::svc;

static PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "ns",
    default: "1000,10000,100000,1000000",
    about: "the requested sleep in ns",
    kind: Kind::Int {
        min: 1,
        max: 100_000_000,
    },
}];

/// `svc.sleep`.
pub const SLEEP: Simple = Simple {
    name: "svc.sleep",
    facts: Facts { idle: |_| true, ..SYSCALL.on(Libc, "clock_nanosleep") },
    about: "one clock_nanosleep(CLOCK_MONOTONIC, relative ns), timed one at a time: the measured sleep, and its overshoot p50/p99/max as facts",
    origin: "004 Table I: $SCHDWK schedule wakeups (252 µs), the 10 ms wake-up + $HIBER the timing executive aligned to",
    params: PARAMS,
    prepare,
};

struct Sleep {
    ts: libc::timespec,
}

impl Body for Sleep {
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for _ in 0..iters {
            let r = svc::sleep_monotonic(&self.ts);
            if r != 0 {
                return Err(woken_early(r));
            }
        }
        Ok(())
    }
}

/// A sleep cut short: the user's interrupt, or a failure (a sleep ended by a signal
/// is not a sleep of the requested length).
#[cold]
fn woken_early(r: libc::c_int) -> BenchError {
    if interrupt::interrupted() {
        return BenchError::Interrupted;
    }
    if r == libc::EINTR {
        return BenchError::Failed(
            "clock_nanosleep was interrupted by a signal before it ended".into(),
        );
    }
    // clock_nanosleep returns the error number instead of setting errno.
    BenchError::os("clock_nanosleep", std::io::Error::from_raw_os_error(r))
}

fn prepare(p: &Params) -> Result<Prepared, BenchError> {
    let ns = p.int("ns") as u64;
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    let plan = Plan {
        fixed_batch: Some(1),
        ..crate::bench::switching(true)
    };
    let slack = svc::timer_slack_ns();
    Ok(Prepared::new(Box::new(Sleep { ts }))
        .op("sleep")
        .plan(plan)
        .after(Box::new(move |_, m| {
            let mut over: Vec<f64> = m
                .analysis
                .per_op_ns
                .iter()
                .filter(|x| x.is_finite())
                .map(|x| x - ns as f64)
                .collect();
            over.sort_unstable_by(f64::total_cmp);
            let mut facts = vec![
                Fact::new(
                    "overshoot_p50_ns",
                    percentile(&over, 50.0),
                    "ns",
                    "median of measured − requested over every sample",
                ),
                Fact::new(
                    "overshoot_p99_ns",
                    percentile(&over, 99.0),
                    "ns",
                    "99th percentile of measured − requested",
                ),
                Fact::new(
                    "overshoot_max_ns",
                    percentile(&over, 100.0),
                    "ns",
                    "the latest wake-up: largest measured − requested",
                ),
            ];
            if let Some(s) = slack {
                facts.push(Fact::new(
                    "timer_slack_ns",
                    s as f64,
                    "ns",
                    "the thread's timer slack (PR_GET_TIMERSLACK): how late the kernel may end a sleep to batch wake-ups",
                ));
            }
            Ok(facts)
        })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::testing::{fact, median, smoke};

    #[test]
    fn sleeps_last_at_least_what_was_asked_and_overshoot_is_ordered() {
        for ns in ["1000", "100000"] {
            let (m, facts) = smoke(&SLEEP, &[("ns", ns)]).expect("sleeps run anywhere");
            let want: f64 = ns.parse().unwrap();
            let shortest = m
                .analysis
                .per_op_ns
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min);
            assert!(shortest >= want, "{ns}: a sleep of {shortest} ns");
            assert!(median(&m) >= want && median(&m) < want + 1e8);
            let (p50, p99, max) = (
                fact(&facts, "overshoot_p50_ns"),
                fact(&facts, "overshoot_p99_ns"),
                fact(&facts, "overshoot_max_ns"),
            );
            assert!(0.0 <= p50 && p50 <= p99 && p99 <= max, "{p50} {p99} {max}");
        }
    }
}
