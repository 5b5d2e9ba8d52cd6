//! One benchmark instance within a run (a [`Slot`]): prepared once per round,
//! measured, its rounds gathered, and turned at the end into its result, with the
//! canary readings around it and the samples kept if asked.

use super::*;

/// One instance in a run: its result so far and what the rounds have gathered.
pub(super) struct Slot<'b> {
    pub(super) bench: &'b dyn Bench,
    pub(super) params: Params,
    pub(super) result: BenchResult,
    /// The batch size and overhead, found in the first round.
    pub(super) setup: Option<(u64, Overhead)>,
    pub(super) plan: Plan,
    pub(super) samples: Vec<Sample>,
    pub(super) canaries: Vec<f64>,
    pub(super) after: Option<After>,
    pub(super) rounds: u32,
    pub(super) warmup_ns: f64,
    pub(super) elapsed_ns: f64,
    pub(super) setup_ns: f64,
    pub(super) after_ns: f64,
    /// The last conclusion, once the instance is done measuring.
    pub(super) concluded: Option<(Analysis, bool, String)>,
    /// Skipped or failed.
    pub(super) ended: bool,
}

impl<'b> Slot<'b> {
    pub(super) fn new(bench: &'b dyn Bench, params: &Params) -> Slot<'b> {
        Slot {
            bench,
            params: params.clone(),
            result: BenchResult {
                name: bench.name().to_string(),
                params: params
                    .0
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.clone()))
                    .collect(),
                op: "call".into(),
                unit: "ns".into(),
                status: Status::Ok,
                reason: None,
                measured: None,
                facts: Vec::new(),
            },
            setup: None,
            plan: Plan::default(),
            samples: Vec::new(),
            canaries: Vec::new(),
            after: None,
            rounds: 0,
            warmup_ns: 0.0,
            elapsed_ns: 0.0,
            setup_ns: 0.0,
            after_ns: 0.0,
            concluded: None,
            ended: false,
        }
    }

    pub(super) fn open(&self) -> bool {
        !self.ended && self.concluded.is_none()
    }

    /// Ends the instance as skipped or failed (a failure in any round fails it).
    pub(super) fn end(&mut self, e: BenchError) {
        self.ended = true;
        self.samples = Vec::new();
        match e {
            BenchError::Skip(why) => {
                self.result.status = Status::Skipped;
                self.result.reason = Some(why);
            }
            BenchError::Failed(why) => {
                self.result.status = Status::Failed;
                self.result.reason = Some(why);
            }
            BenchError::Interrupted => {}
        }
    }

    /// The result: measured (concluded now if the run ended early), skipped or failed;
    /// None when an interrupted run never reached it.
    pub(super) fn finish(
        mut self,
        h: &Harness<'_>,
        keep_samples: bool,
        interrupted: bool,
    ) -> Option<BenchResult> {
        if self.ended {
            return Some(self.result);
        }
        let (k, overhead) = self.setup.clone()?;
        if self.samples.is_empty() {
            return None;
        }
        let (analysis, converged, stop_reason) = match self.concluded.take() {
            Some(c) => c,
            None => {
                let (a, _, why) = h.conclude(&self.samples, k, &overhead, self.plan);
                let why = if interrupted {
                    format!("interrupted: {why}")
                } else {
                    why
                };
                (a, false, why)
            }
        };
        let m = Measurement {
            batch: k,
            overhead,
            samples: std::mem::take(&mut self.samples),
            analysis,
            converged,
            stop_reason,
            warmup_ns: self.warmup_ns,
            elapsed_ns: self.elapsed_ns,
        };
        // A failure in the after step fails the result but keeps what was measured.
        let mut after_failed = None;
        if let (Some(then), false) = (self.after.take(), interrupted) {
            let t0 = std::time::Instant::now();
            let facts = then(h, &m);
            self.after_ns = t0.elapsed().as_nanos() as f64;
            match facts {
                Ok(facts) => self.result.facts = facts,
                Err(BenchError::Skip(why)) | Err(BenchError::Failed(why)) => {
                    after_failed = Some(format!("after the measurement: {why}"));
                }
                Err(BenchError::Interrupted) => {}
            }
        }
        let canary = canary(&self.canaries);
        match measured(m, canary, keep_samples) {
            Ok(mut x) => {
                x.setup_ns = self.setup_ns;
                x.after_ns = self.after_ns;
                self.result.measured = Some(x);
            }
            Err(e) => {
                self.result.status = Status::Failed;
                self.result.reason = Some(e.to_string());
            }
        }
        if let Some(why) = after_failed {
            self.result.status = Status::Failed;
            self.result.reason = Some(why);
        }
        Some(self.result)
    }
}

pub(super) fn canary(readings: &[f64]) -> Option<Canary> {
    let (&first, &last) = (readings.first()?, readings.last()?);
    let lo = readings.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = readings.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let change = hi / lo - 1.0;
    Some(Canary {
        before_ns: first,
        after_ns: last,
        change,
        changed: change > CANARY_THRESHOLD,
        rounds_ns: readings.to_vec(),
    })
}

pub(super) fn measured(
    m: Measurement,
    canary: Option<Canary>,
    keep_samples: bool,
) -> Result<Measured, BenchError> {
    let a = m.analysis;
    let raw = a
        .raw
        .clone()
        .ok_or_else(|| BenchError::Failed("no samples were taken".into()))?;
    let est = a.estimate.clone();
    let median_ns = a.figure();
    let samples = keep_samples.then(|| Samples {
        per_op_ns: a.per_op_ns.clone(),
        at_ns: m.samples.iter().map(|s| s.at_ns).collect(),
        round: m.samples.iter().map(|s| s.round).collect(),
        flags: a
            .flags
            .iter()
            .map(|f| f.window as u8 | (f.mad as u8) << 1 | (f.perturbed as u8) << 2)
            .collect(),
        invol_switches: m.samples.iter().map(|s| s.usage.invol_switches).collect(),
        vol_switches: m.samples.iter().map(|s| s.usage.vol_switches).collect(),
        faults: m
            .samples
            .iter()
            .map(|s| s.usage.minor_faults + s.usage.major_faults)
            .collect(),
    });
    Ok(Measured {
        median_ns,
        ci_low_ns: est.as_ref().map_or(raw.ci_low, |e| e.ci_low),
        ci_high_ns: est.as_ref().map_or(raw.ci_high, |e| e.ci_high),
        round_sd_ns: est.as_ref().map_or(0.0, |e| e.sd),
        round_spread: est.as_ref().map_or(0.0, |e| e.spread()),
        rounds: a.rounds,
        states: a.states,
        clean: a.clean,
        raw,
        counts: a.counts,
        center_ns: a.center_ns,
        batch: m.batch,
        operations: a.operations,
        overhead: m.overhead,
        accounting: a.accounting,
        converged: m.converged,
        stop_reason: m.stop_reason,
        levels: a.levels,
        modes: a.modes,
        canary,
        warmup_ns: m.warmup_ns,
        elapsed_ns: m.elapsed_ns,
        setup_ns: 0.0,
        after_ns: 0.0,
        samples,
        between_runs: None,
        kernel: a.kernel,
        basis: a.basis,
    })
}
