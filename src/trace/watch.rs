//! The kernel's events while `syscost run --cull kernel` samples: recorded for the
//! whole session, joined with each batch's span, and pruned as the samples move on.

use crate::error::BenchError;
use crate::harness::{Expect, Sample};

/// The kernel's events of a session (being written: starts only once the recorder
/// lands).
pub struct Watch {}

impl Watch {
    /// Starts recording, or says in one line why the kernel's events cannot be had.
    pub fn start() -> Result<Watch, String> {
        Err("kernel event recording is not built yet".into())
    }

    /// How the events are recorded, in one line.
    pub fn method(&self) -> String {
        String::new()
    }

    /// Marks each sample with what the kernel did during it that `expect` does not
    /// excuse.
    pub fn flag(
        &mut self,
        samples: &mut [Sample],
        expect: Expect,
    ) -> Result<(), BenchError> {
        let _ = (samples, expect);
        Ok(())
    }
}
