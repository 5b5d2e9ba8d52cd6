//! A measuring session: the chosen clock, the pinning and background load the user asked
//! for, and the loop that turns one benchmark instance into one [`BenchResult`] (prepare
//! untimed, canary, measure, canary, clean up).
//!
//! It owns the resources that outlive a single benchmark (the pin, the load) and
//! releases them on drop; it prints nothing.

use crate::bench::{body, Bench, Params};
use crate::error::BenchError;
use crate::harness::clock::{self, characterize, Clock, ClockChoice, ClockInfo};
use crate::harness::{EmptyLoop, Harness, Measurement, Profile, Settings};
use crate::report::model::{BenchResult, Canary, HarnessInfo, Measured, Samples, Status};
use crate::runner::affinity::Pin;
use crate::runner::load::Load;
use crate::runner::sys;
use anyhow::Context;

/// How big a change of the canary means the machine changed speed.
pub const CANARY_THRESHOLD: f64 = 0.03;
const CANARY_BATCH: u64 = 1000;
const CANARY_BATCHES: usize = 7;

/// What the user asked of the session.
#[derive(Debug, Clone, Copy)]
pub struct SessionOptions {
    /// The measurement profile.
    pub profile: Profile,
    /// Which clock to time with.
    pub clock: ClockChoice,
    /// Whether the CPU reports an invariant TSC (from the host facts).
    pub invariant_tsc: bool,
    /// Pin the measuring thread to this CPU.
    pub cpu: Option<usize>,
    /// Background spinning processes.
    pub load: usize,
    /// Keep every sample in the results.
    pub keep_samples: bool,
}

/// A running session.
pub struct Session {
    clock: Box<dyn Clock + Send + Sync>,
    clock_info: ClockInfo,
    settings: Settings,
    opts: SessionOptions,
    // Dropped in declaration order: unpin, then stop and reap the load.
    _pin: Option<Pin>,
    load: Option<Load>,
}

impl Session {
    /// Starts the load (unpinned, so the scheduler places it), pins the measuring
    /// thread, chooses and characterises the clock.
    pub fn start(opts: SessionOptions) -> anyhow::Result<Session> {
        let load = match opts.load {
            0 => None,
            n => Some(Load::start(n).context("starting the background load (--load)")?),
        };
        let pin = match opts.cpu {
            Some(c) => {
                Some(Pin::to(c).with_context(|| format!("pinning to CPU {c} (--cpu)"))?)
            }
            None => None,
        };
        let (clock, why) =
            clock::choose(opts.clock, opts.invariant_tsc).map_err(anyhow::Error::msg)?;
        let name = clock.name();
        let clock_info = characterize(clock.as_ref(), name, &why);
        let settings = Settings::new(opts.profile, clock_info.granularity_ns.max(1.0));
        Ok(Session {
            clock,
            clock_info,
            settings,
            opts,
            _pin: pin,
            load,
        })
    }

    /// The harness clock and its figures.
    pub fn clock_info(&self) -> &ClockInfo {
        &self.clock_info
    }

    /// A harness on the session's clock.
    pub fn harness(&self) -> Harness<'_> {
        Harness::new(self.clock.as_ref(), self.settings)
    }

    /// The process ids of the background load.
    pub fn load_pids(&self) -> Vec<u32> {
        self.load
            .as_ref()
            .map(|l| l.pids().iter().map(|&p| p as u32).collect())
            .unwrap_or_default()
    }

    /// The harness configuration, for the result document.
    pub fn harness_info(&self) -> HarnessInfo {
        let p = self.settings.profile;
        HarnessInfo {
            profile: p.name.to_string(),
            warmup_ns: p.warmup_ns,
            min_samples: p.min_samples,
            max_samples: p.max_samples,
            min_time_ns: p.min_time_ns,
            max_time_ns: p.max_time_ns,
            ci_target: p.ci_target,
            min_batch_ns: p.min_batch_ns,
            window_below: self.settings.window.0,
            window_above: self.settings.window.1,
            mad_threshold: self.settings.mad_threshold,
            mad_floor: self.settings.mad_floor,
            pilot_samples: self.settings.pilot,
            cpu: self.opts.cpu,
            load: self.opts.load,
        }
    }

    /// The getpid canary, ns per call.
    pub fn canary(&self) -> Result<f64, BenchError> {
        let mut b = body(|| {
            std::hint::black_box(sys::getpid());
            Ok(())
        });
        self.harness()
            .canary(b.as_mut(), CANARY_BATCH, CANARY_BATCHES)
    }

    /// Measures one benchmark instance. Skips and failures become results too; only an
    /// interruption is returned as an error.
    pub fn run(
        &self,
        bench: &dyn Bench,
        params: &Params,
    ) -> Result<BenchResult, BenchError> {
        let mut result = BenchResult {
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
        };
        let outcome = self.measure(bench, params, &mut result);
        match outcome {
            Ok(m) => result.measured = Some(m),
            Err(BenchError::Interrupted) => return Err(BenchError::Interrupted),
            Err(BenchError::Skip(why)) => {
                result.status = Status::Skipped;
                result.reason = Some(why);
            }
            Err(BenchError::Failed(why)) => {
                result.status = Status::Failed;
                result.reason = Some(why);
            }
        }
        Ok(result)
    }

    fn measure(
        &self,
        bench: &dyn Bench,
        params: &Params,
        result: &mut BenchResult,
    ) -> Result<Measured, BenchError> {
        let prepared = bench.prepare(params)?;
        result.op = prepared.op.to_string();
        let (mut body, plan, then) = (prepared.body, prepared.plan, prepared.after);
        let before = self.canary()?;
        let m = self
            .harness()
            .measure(body.as_mut(), &mut EmptyLoop, plan)?;
        let after = self.canary()?;
        drop(body); // release descriptors, mappings and children now
        if let Some(then) = then {
            result.facts = then(&self.harness(), &m)?;
        }
        let change = after / before - 1.0;
        let canary = Canary {
            before_ns: before,
            after_ns: after,
            change,
            changed: change.abs() > CANARY_THRESHOLD,
        };
        measured(m, canary, self.opts.keep_samples)
    }
}

fn measured(
    m: Measurement,
    canary: Canary,
    keep_samples: bool,
) -> Result<Measured, BenchError> {
    let a = m.analysis;
    let raw = a
        .raw
        .clone()
        .ok_or_else(|| BenchError::Failed("no samples were taken".into()))?;
    let median_ns = a.headline().map(|s| s.median).unwrap_or(f64::NAN);
    let samples = keep_samples.then(|| Samples {
        per_op_ns: a.per_op_ns.clone(),
        at_ns: m.samples.iter().map(|s| s.at_ns).collect(),
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
        clean: a.clean,
        raw,
        counts: a.counts,
        pilot_ns: a.pilot_ns,
        batch: m.batch,
        operations: a.operations,
        overhead: m.overhead,
        accounting: a.accounting,
        converged: m.converged,
        stop_reason: m.stop_reason,
        levels: a.levels,
        modes: a.modes,
        canary: Some(canary),
        warmup_ns: m.warmup_ns,
        elapsed_ns: m.elapsed_ns,
        samples,
    })
}
