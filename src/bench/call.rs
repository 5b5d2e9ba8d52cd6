//! `call.*`: the memo's calibration (Fig. 6): an empty function call, and the loop
//! overhead the harness subtracts from every other benchmark.

use super::facts::*;
use super::{Prepared, Simple};
use crate::error::BenchError;
use crate::harness::{Body, EmptyLoop, Plan};
use std::hint::black_box;

/// The family's benchmarks.
pub const BENCHES: &[&dyn super::Bench] = &[&EMPTY_CALL, &LOOP_OVERHEAD];

/// An empty function the compiler may not inline or remove.
#[inline(never)]
fn empty() {
    black_box(());
}

/// The same loop as the harness's empty body, plus one call to [`empty`].
struct CallLoop;

impl Body for CallLoop {
    #[inline(never)]
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for i in 0..iters {
            black_box(i);
            empty();
        }
        Ok(())
    }
}

/// `call.empty`.
pub const EMPTY_CALL: Simple = Simple {
    name: "call.empty",
    about: "call and return of an empty function that is not inlined",
    origin: "perez1976 Fig. 6 (subroutine overhead)",
    params: &[],
    facts: Facts {
        enters: Enters::Not("a function call"),
        seccomp: false,
        ..USER
    },
    prepare: |_| Ok(Prepared::new(Box::new(CallLoop))),
};

/// `call.loop`.
pub const LOOP_OVERHEAD: Simple = Simple {
    name: "call.loop",
    about:
        "one iteration of the harness's empty loop, clock reads included (not subtracted)",
    origin: "perez1976 (trace calibration); 1999 §3 (timer overhead)",
    params: &[],
    facts: Facts {
        enters: Enters::Not("the loop alone"),
        seccomp: false,
        ..USER
    },
    prepare: |_| {
        let plan = Plan {
            keep_overhead: true,
            ..Plan::default()
        };
        Ok(Prepared::new(Box::new(EmptyLoop))
            .plan(plan)
            .op("iteration"))
    },
};
