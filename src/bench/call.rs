//! `call.*`: the memo's calibration (Fig. 6): an empty function call, and the loop
//! overhead the harness subtracts from every other benchmark.

use super::facts::*;
use super::{Bench, Params, Prepared};
use crate::error::BenchError;
use crate::harness::{Body, EmptyLoop, Plan};
use std::hint::black_box;

/// The family's benchmarks.
pub const BENCHES: &[&dyn super::Bench] = &[&EmptyCall, &LoopOverhead];

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
pub struct EmptyCall;

impl Bench for EmptyCall {
    fn name(&self) -> &'static str {
        "call.empty"
    }
    fn about(&self) -> &'static str {
        "call and return of an empty function that is not inlined"
    }
    fn origin(&self) -> &'static str {
        "perez1976 Fig. 6 (subroutine overhead)"
    }
    fn facts(&self) -> Facts {
        Facts {
            enters: Enters::Not("a function call"),
            seccomp: false,
            ..USER
        }
    }
    fn prepare(&self, _: &Params, _: &super::RunContext) -> Result<Prepared, BenchError> {
        Ok(Prepared::new(Box::new(CallLoop)))
    }
}

/// `call.loop`.
pub struct LoopOverhead;

impl Bench for LoopOverhead {
    fn name(&self) -> &'static str {
        "call.loop"
    }
    fn about(&self) -> &'static str {
        "one iteration of the harness's empty loop, clock reads included (not subtracted)"
    }
    fn origin(&self) -> &'static str {
        "perez1976 (trace calibration); 1999 §3 (timer overhead)"
    }
    fn facts(&self) -> Facts {
        Facts {
            enters: Enters::Not("the loop alone"),
            seccomp: false,
            ..USER
        }
    }
    fn prepare(&self, _: &Params, _: &super::RunContext) -> Result<Prepared, BenchError> {
        let plan = Plan {
            keep_overhead: true,
            ..Plan::default()
        };
        Ok(Prepared::new(Box::new(EmptyLoop))
            .plan(plan)
            .op("iteration"))
    }
}
