//! The result document: what a run measured, in the form every exporter renders and the
//! JSON format serialises. See [`crate::report::json`] for the schema's description.

use crate::harness::analyze::{Accounting, Counts, RoundFigure};
use crate::harness::clock::ClockInfo;
use crate::harness::{Level, Overhead};
use crate::host::HostFacts;
use crate::stats::rounds::State;
use crate::stats::{Mode, Summary};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod machine;
mod paired;
mod upgrade;

/// A benchmark's named figure: the catalogue makes it ([`crate::bench`]), a result keeps it.
pub use crate::bench::Fact;
/// Times as every renderer prints them ([`crate::draw::units`]).
pub use crate::draw::units::{fmt_ns, unit_for};
pub use machine::{Floor, MachineStates, PastMachine};
pub use paired::Paired;
pub use upgrade::{upgrade, OLDEST_READ};

/// The version of the JSON schema; raised on any incompatible change.
pub const SCHEMA_VERSION: u32 = 3;

/// A whole run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Run {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// "syscost".
    pub tool: String,
    /// The tool's version.
    pub version: String,
    /// The command line, as given.
    pub command_line: Vec<String>,
    /// Seconds since the Unix epoch when the run began.
    pub started_unix_s: f64,
    /// The machine.
    pub host: HostFacts,
    /// The harness clock.
    pub clock: ClockInfo,
    /// The harness configuration.
    pub harness: HarnessInfo,
    /// False while the run is going on or when it was interrupted.
    pub complete: bool,
    /// One entry per benchmark instance, in the order they were asked for.
    pub results: Vec<BenchResult>,
    /// The machine's speed over the run, from the canary read before every round.
    pub machine: MachineStates,
    /// A straight line through the medians of each numeric sweep.
    pub sweeps: Vec<SweepFit>,
    /// Sloan's table for each sweep of `ctx.ring` over n.
    pub rings: Vec<RingTable>,
    /// For each benchmark run as copies, its points against N and the scalability
    /// fit (absent when nothing ran as copies).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scaling: Vec<ScalingTable>,
    /// The labels the user gave the run (`syscost run --label kernel=6.12`), sorted:
    /// what sets it apart from runs of the same machine that its host facts cannot
    /// tell (a patch, a tracer, a policy). Runs with other labels are never repetitions
    /// of it. Absent when none was given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    /// Set when the run's figures lay far outside those of its earlier runs under the
    /// same conditions, many rows moving together (a change the host facts cannot
    /// see, or the machine's state): reported, so the user can label such runs. It
    /// changes no interval. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shift: Option<Shift>,
}

/// A run's labels as one text, as `history` shows them and the history keeps them:
/// sorted, each once, separated by commas.
pub fn labels_text(labels: &[String]) -> String {
    let mut v = labels.to_vec();
    v.sort();
    v.dedup();
    v.join(",")
}

/// How a run's figures lay against its earlier runs under the same conditions, when
/// many rows moved together beyond their spread ([`Run::shift`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shift {
    /// Rows with at least two earlier runs to set them beside.
    pub rows: usize,
    /// Of those, the rows whose figure lay beyond their runs' spread in the direction
    /// most of them moved.
    pub moved: usize,
    /// The median over those rows of this figure over the earlier runs' mean, minus 1
    /// (0.3: 30% slower than before).
    pub median_change: f64,
    /// The earlier runs it was set beside, at most.
    pub past_runs: usize,
}

/// One benchmark's copies points (`copies=1,2,...` with its other parameters fixed):
/// throughput and efficiency against N, and the Universal Scalability Law fitted when
/// enough points allow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScalingTable {
    /// The benchmark.
    pub name: String,
    /// Its other parameters (`copies_as` among them).
    pub fixed: BTreeMap<String, String>,
    /// One per measured copies point, by N.
    pub points: Vec<ScalingPoint>,
    /// The fit over the points that are not oversubscribed (absent when too few).
    pub fit: Option<crate::stats::usl::UslFit>,
    /// Why there is no fit, when there is none.
    pub no_fit: Option<String>,
}

/// One copies point of a [`ScalingTable`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScalingPoint {
    /// Copies at once.
    pub n: usize,
    /// The per-copy cost (the median over copies), ns per operation.
    pub per_copy_ns: f64,
    /// The slowest copy, ns per operation.
    pub slowest_ns: f64,
    /// Operations per second of all copies.
    pub throughput_ops_s: f64,
    /// Throughput / (N × one copy's throughput); absent without a `copies=1` point.
    pub efficiency: Option<f64>,
    /// More copies than CPUs.
    pub oversubscribed: bool,
    /// The CPUs the copies were pinned to.
    pub cpus: Vec<usize>,
}

impl Run {
    /// An empty document for a run on `host` that began at `started`, with this
    /// process's command line; the caller fills in the clock and the harness.
    pub fn new(host: HostFacts, started: std::time::SystemTime) -> Run {
        Run {
            schema_version: SCHEMA_VERSION,
            tool: "syscost".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            command_line: std::env::args().collect(),
            started_unix_s: started
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs_f64())
                .unwrap_or(0.0),
            host,
            clock: ClockInfo::default(),
            harness: HarnessInfo::default(),
            complete: false,
            results: Vec::new(),
            machine: MachineStates::default(),
            sweeps: Vec::new(),
            rings: Vec::new(),
            scaling: Vec::new(),
            labels: Vec::new(),
            shift: None,
        }
    }

    /// A copy with no results (the rest of the document, for writing the results
    /// apart).
    pub fn clone_without_results(&self) -> Run {
        Run {
            schema_version: self.schema_version,
            tool: self.tool.clone(),
            version: self.version.clone(),
            command_line: self.command_line.clone(),
            started_unix_s: self.started_unix_s,
            host: self.host.clone(),
            clock: self.clock.clone(),
            harness: self.harness.clone(),
            complete: self.complete,
            results: Vec::new(),
            machine: self.machine.clone(),
            sweeps: self.sweeps.clone(),
            rings: self.rings.clone(),
            scaling: self.scaling.clone(),
            labels: self.labels.clone(),
            shift: self.shift.clone(),
        }
    }
}

/// One sweep of `ctx.ring` over n in the paper's columns, with its knee and growth.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RingTable {
    /// The benchmark ("ctx.ring").
    pub name: String,
    /// The parameters other than n.
    pub fixed: BTreeMap<String, String>,
    /// One row per n, in increasing n.
    pub rows: Vec<RingRow>,
    /// The first n whose per-hop cost exceeds the trend of the smaller rings by more
    /// than `knee_threshold`, if any.
    pub knee_n: Option<u64>,
    /// The knee's threshold, as a fraction.
    pub knee_threshold: f64,
    /// The exponent b of a power law `time per pass = a·n^b` (1.0 is linear).
    pub growth_exponent: Option<f64>,
    /// The power law's r² (in log-log space).
    pub growth_r2: Option<f64>,
}

/// One ring size. Times per pass are µs, i.e. seconds per 10⁶ passes (the paper's
/// unit, as it ran 10⁶ passes).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RingRow {
    /// Tasks in the ring.
    pub n: u64,
    /// The harness's median ns per hop.
    pub per_hop_ns: f64,
    /// Its 95% CI, low end.
    pub ci_low_ns: f64,
    /// Its 95% CI, high end.
    pub ci_high_ns: f64,
    /// Wall time per pass in the accounting run.
    pub real_us_per_pass: f64,
    /// CPU time of all tasks per pass.
    pub cpu_us_per_pass: f64,
    /// User CPU per pass.
    pub user_us_per_pass: f64,
    /// System CPU per pass.
    pub sys_us_per_pass: f64,
    /// The projection from the smallest ring: `cpu(n0)·n/n0`.
    pub projected_us_per_pass: f64,
    /// CPU over projected (1.0 is linear).
    pub cpu_over_projected: f64,
    /// Voluntary switches per hop.
    pub vol_per_hop: f64,
    /// Involuntary switches per hop.
    pub invol_per_hop: f64,
    /// Per hop minus the in-task pipe cost: the switch estimate.
    pub switch_ns: f64,
}

/// A least-squares line through the medians of a sweep of one numeric parameter.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepFit {
    /// The benchmark.
    pub name: String,
    /// The swept parameter.
    pub param: String,
    /// The other parameters, fixed along the sweep.
    pub fixed: BTreeMap<String, String>,
    /// How many values were measured.
    pub points: usize,
    /// ns per unit of the parameter.
    pub slope_ns: f64,
    /// ns at a parameter value of 0.
    pub intercept_ns: f64,
    /// The coefficient of determination of the line.
    pub r2: f64,
}

/// The harness configuration of a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HarnessInfo {
    /// The profile's name.
    pub profile: String,
    /// Warm-up before a benchmark's first round, ns.
    pub warmup_ns: u64,
    /// Warm-up before each later round, ns.
    pub round_warmup_ns: u64,
    /// Sampling time per round, ns.
    pub round_ns: u64,
    /// Samples per round at least.
    pub round_min_samples: usize,
    /// Samples per round at most.
    pub round_max_samples: usize,
    /// Rounds per benchmark at least.
    pub min_rounds: usize,
    /// Rounds per benchmark at most.
    pub max_rounds: usize,
    /// The rounds are spread over at least this long, ns.
    pub span_ns: u64,
    /// A fixed batch size for every benchmark (`--batch`), if any.
    pub batch: Option<u64>,
    /// The seed of the shuffled round order.
    pub seed: u64,
    /// Target relative half-width of the round-level 95% CI.
    pub ci_target: f64,
    /// Shortest batch, ns.
    pub min_batch_ns: u64,
    /// The CPU the measuring thread was pinned to, if any.
    pub cpu: Option<usize>,
    /// Background spinning processes during the run.
    pub load: usize,
    /// Culling by kernel events (`--cull kernel`): how they were recorded, or
    /// "unavailable: why" when they could not be (absent without the flag).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_events: Option<String>,
    /// Where the benchmarks were measured: "process" when each in a worker process of
    /// its own; absent when in the run's own process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<String>,
    /// With workers: the rounds each one measured before a fresh process took over
    /// (0: one for all of a benchmark's rounds). Absent without workers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds_per_worker: Option<usize>,
    /// The run's time budget, ns, a cap on the whole run: the profile's for a whole
    /// catalogue, a few seconds a row for a small selection, or what `--budget` gave.
    /// Past `min_rounds`, rounds beyond `max_rounds` (up to `budget_max_rounds`) go to
    /// unconverged benchmarks while the run is within it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_ns: Option<u64>,
    /// The most rounds within the budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_max_rounds: Option<usize>,
}

/// What happened to one benchmark instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Measured.
    Ok,
    /// Not run here, with a reason.
    Skipped,
    /// The operation failed; no time is reported.
    Failed,
}

/// One benchmark with one set of parameter values.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchResult {
    /// `family.name`.
    pub name: String,
    /// Parameter values.
    pub params: BTreeMap<String, String>,
    /// How its timed calls enter the kernel ([`crate::bench::via::entry`]): its `via`,
    /// or its fixed path; absent for a benchmark that does not enter the kernel, and in
    /// a document saved before this field existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<crate::bench::via::EntryPath>,
    /// What one operation is.
    pub op: String,
    /// The unit of every time below: "ns" per operation.
    pub unit: String,
    /// Ok, skipped or failed.
    pub status: Status,
    /// Why it was skipped or failed.
    pub reason: Option<String>,
    /// The measurement, when the status is ok.
    pub measured: Option<Measured>,
    /// Figures the benchmark derives beyond the per-operation time (a ring's CPU
    /// accounting, a ping-pong's one-way estimate), in the order it gives them.
    pub facts: Vec<Fact>,
    /// Where the time went, when the run was asked to explain it (`syscost explain`,
    /// `run --explain`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<crate::explain::Explanation>,
}

/// The figures of a measured benchmark.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Measured {
    /// The headline, ns per operation: the 20% trimmed mean over rounds of each round's
    /// median of its clean samples (see [`crate::stats::rounds`]).
    pub median_ns: f64,
    /// The headline's 95% interval, low end: where a rerun's headline lands (Yuen's
    /// interval over the round medians, √2 wider than the mean's; see
    /// [`crate::stats::rounds`]), never narrower than half a clock step per operation
    /// or the pooled samples' interval, with what the machine allows its kind of work
    /// added as an independent error until the row has a history (`interval_source`).
    pub ci_low_ns: f64,
    /// The headline's 95% interval, high end.
    pub ci_high_ns: f64,
    /// Each round's figure.
    pub rounds: Vec<RoundFigure>,
    /// The standard deviation of the round medians, ns.
    pub round_sd_ns: f64,
    /// The round medians' spread, (max − min) / headline.
    pub round_spread: f64,
    /// Groups of round medians more than 3% apart: more than one means the figure
    /// depended on when it was measured (the machine's states).
    pub states: Vec<State>,
    /// Statistics over the clean samples (no outliers, no perturbed samples) of every
    /// round pooled. A sample is the mean of one batch of `batch` operations, so these
    /// percentiles are of batch means, not of single operations (use `--batch 1`).
    pub clean: Option<Summary>,
    /// Statistics over every sample.
    pub raw: Summary,
    /// Label counts.
    pub counts: Counts,
    /// Operations per sample.
    pub batch: u64,
    /// Operations timed in all samples.
    pub operations: u64,
    /// The subtracted empty-loop overhead.
    pub overhead: Overhead,
    /// Resource usage per operation.
    pub accounting: Accounting,
    /// Whether the printed interval (`ci_low_ns`–`ci_high_ns`) is within `target_pct`
    /// and nothing else kept the row from its verdict (`why` is empty).
    pub converged: bool,
    /// The verdict in words, rendered from `why` and the figures when the row was
    /// decided (for readers of the JSON; syscost itself reads `why`).
    pub stop_reason: String,
    /// Why the row is not converged, as data (empty when it is): see
    /// [`crate::harness::Why`]. Absent in documents from before it was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub why: Vec<crate::harness::Why>,
    /// What set the printed interval's width: `rounds`, `clock`, `samples`,
    /// `all_samples`, `machine` or `runs` ([`crate::harness::Source`]). Absent in documents from
    /// before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_source: Option<crate::harness::Source>,
    /// Levels in time (more than one: the speed changed while sampling).
    pub levels: Vec<Level>,
    /// Modes among the clean samples (more than one: several distinct costs).
    pub modes: Vec<Mode>,
    /// The getpid canary before the first and the last round.
    pub canary: Option<Canary>,
    /// Warm-up and calibration time, ns.
    pub warmup_ns: f64,
    /// Sampling time, ns (all rounds).
    pub elapsed_ns: f64,
    /// Setting the benchmark up and tearing it down, all rounds, ns.
    pub setup_ns: f64,
    /// The benchmark's own step after the measurement (a ring's accounting run), ns.
    pub after_ns: f64,
    /// The samples, in time order (absent when the user asked for none).
    pub samples: Option<Samples>,
    /// How earlier runs of this benchmark on this machine widened the interval (absent
    /// without at least two such runs in the history).
    #[serde(default)]
    pub between_runs: Option<BetweenRuns>,
    /// What culling by the kernel's events did (`--cull kernel`; absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<crate::harness::analyze::KernelCull>,
    /// Which samples the headline rests on: `clean`, or `all` when the clean ones were
    /// too few (then the headline is the median of all samples and never converged).
    #[serde(default)]
    pub basis: crate::harness::analyze::Basis,
    /// The peak resident size (VmHWM) of the worker process that measured it, KiB, read
    /// when it concluded: the worker's own memory and the benchmark's buffers, not its
    /// children's. Absent when it was measured in the run's own process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_peak_kib: Option<u64>,
    /// The worker processes that measured it, one after another (a fresh one every
    /// few rounds, so that a state of one process is a round's, not the figure's);
    /// the peak above is the highest of theirs. Absent when measured in the run's own
    /// process.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub worker_processes: u32,
    /// Rounds measured again because the getpid canary read just before them was more
    /// than [`crate::method::REDO_ABOVE`] above the machine's base state (a slow state
    /// of the machine); their samples are not kept. Absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rounds_redone: u32,
    /// How far above the machine's base state the getpid canary read before the kept
    /// rounds, at their median, %, when more than 5%: the rounds met the machine in a
    /// slow state (kept once the run no longer measured rounds again), and the figure
    /// is that state's. Such a result is not converged, and the history leaves it out
    /// of the spread between runs. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_state_pct: Option<f64>,
    /// The per-copy figures of an instance run as copies (`copies=N`; absent
    /// otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copies: Option<CopiesFigures>,
    /// The kind of work it is, whose probe gives its floor (see
    /// [`crate::harness::probe`]); absent when the run had no floors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work: Option<crate::harness::probe::WorkKind>,
    /// The precision it was held to, ±% of the figure: the larger of the profile's
    /// target and √2 × what the machine allows its kind of work (`converged` says
    /// whether it got there). Absent in documents from before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_pct: Option<f64>,
    /// What the machine allows its kind of work when it concluded, ±% (or absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor_pct: Option<f64>,
    /// The interval this run's rounds alone gave, low end, ns, when what the machine
    /// allows its kind was added to it (`interval_source` "machine"; else absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_ci_low_ns: Option<f64>,
    /// Its high end, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_ci_high_ns: Option<f64>,
    /// Its ratio to the reference value of a swept parameter, measured in pairs
    /// (`--reference`; absent otherwise, and on the reference's own row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired: Option<Paired>,
}

impl Measured {
    /// The printed interval's half-width relative to the figure (infinite when
    /// unknown).
    pub fn relative_ci(&self) -> f64 {
        let half = (self.ci_high_ns - self.ci_low_ns) / 2.0 / self.median_ns.abs();
        if half.is_finite() {
            half
        } else {
            f64::INFINITY
        }
    }

    /// The verdict in one sentence, from `why`, the printed interval, the rounds and
    /// the target: "±0.62% after 5 rounds, within the target ±2.0% (set by its rounds)"
    /// or "±8.1% after 8 rounds, target ±2.0%: rounds spread too much for the target".
    pub fn verdict_text(&self) -> String {
        let rounds = self.rounds.len();
        let ci = self.relative_ci() * 100.0;
        let ci = if ci.is_finite() {
            format!("±{ci:.2}%")
        } else {
            "no interval".to_string()
        };
        let target = self
            .target_pct
            .map_or(String::new(), |t| format!(", target ±{t:.2}%"));
        // A `machine` interval names its two parts: the rounds' own and the kind's.
        let source = match (self.interval_source, self.own_ci_low_ns, self.floor_pct) {
            (Some(crate::harness::Source::Machine), Some(_), Some(m)) => {
                let (lo, hi) = self.own_interval();
                let own = (hi - lo) / 2.0 / self.median_ns;
                let kind = format!("what the machine allows its kind of work, ±{m:.2}%");
                format!(
                    " (width set by its rounds, ±{:.2}%, and {kind})",
                    own * 100.0
                )
            }
            (Some(s), ..) => format!(" (width set by {})", s.words()),
            (None, ..) => String::new(),
        };
        let head = format!(
            "{ci} after {rounds} {}{target}{source}",
            if rounds == 1 { "round" } else { "rounds" }
        );
        if self.converged || self.why.is_empty() {
            return head;
        }
        let why: Vec<String> = self.why.iter().map(crate::harness::Why::detail).collect();
        format!("{head}: {}", why.join("; "))
    }

    /// The interval (low, high, ns) this run's rounds gave alone: before what the
    /// machine allows widened it, and before the history's spread between runs set it.
    pub fn own_interval(&self) -> (f64, f64) {
        match (self.own_ci_low_ns, self.own_ci_high_ns, &self.between_runs) {
            (Some(lo), Some(hi), _) => (lo, hi),
            (_, _, Some(b)) => (b.run_ci_low_ns, b.run_ci_high_ns),
            _ => (self.ci_low_ns, self.ci_high_ns),
        }
    }

    /// One run's relative standard error from its rounds alone: the half of its own
    /// interval over the t its rounds' degrees of freedom gave it, as a rerun's
    /// (section 3 of docs/method.md). What a comparison floors a side's spread between
    /// runs with, and how far a run may lie from its history.
    pub fn own_relative_se(&self) -> f64 {
        use crate::stats::rounds::{degrees_of_freedom, t975};
        let (lo, hi) = self.own_interval();
        let rounds = self.rounds.iter().filter(|x| x.median_ns.is_some()).count();
        let df = degrees_of_freedom(rounds).max(1);
        ((hi - lo) / 2.0 / self.median_ns).max(0.0) / (t975(df) * crate::method::RERUN)
    }
}

/// What an instance run as N concurrent copies measured (`copies=N`): each copy timed
/// its own batches over the same window. The headline above is the median of every
/// copy's batches pooled, with the round-level interval; these are the copies apart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CopiesFigures {
    /// How many copies ran at once.
    pub n: usize,
    /// "process" or "thread".
    pub mode: String,
    /// The CPU each copy was pinned to (empty for a single copy, measured as any
    /// instance is, unpinned unless `--cpu`).
    pub cpus: Vec<usize>,
    /// The CPUs the measuring process could use.
    pub online: usize,
    /// More copies than those CPUs: some shared one (such a point is left out of
    /// the scalability fit).
    pub oversubscribed: bool,
    /// Each copy's figure (its own samples analysed alone), ns per operation.
    pub copy_ns: Vec<f64>,
    /// The per-copy cost: the median of `copy_ns`, ns per operation.
    pub per_copy_ns: f64,
    /// The slowest copy's figure, ns per operation: what a workload waits for.
    pub slowest_ns: f64,
    /// (slowest − fastest) / per-copy cost.
    pub spread: f64,
    /// Operations per second of all copies together: the sum over copies of 1e9 /
    /// `copy_ns` (each copy's rate while it runs, culled of other work's
    /// perturbation); when oversubscribed, the sum of the operations each copy did
    /// over the time all its batches took (perturbed ones too, the empty loop
    /// subtracted), so a copy that waited for its CPU counts fewer.
    pub throughput_ops_s: f64,
}

impl CopiesFigures {
    /// The figures of `copies` whose copies measured `copy_ns` and did `copy_ops_s`
    /// operations per second, pinned to `cpus` (and `oversubscribed`), with `online`
    /// CPUs to use.
    pub fn new(
        copies: crate::bench::copies::Copies,
        copy_ns: Vec<f64>,
        copy_ops_s: &[f64],
        (cpus, oversubscribed): (Vec<usize>, bool),
        online: usize,
    ) -> CopiesFigures {
        let finite: Vec<f64> =
            copy_ns.iter().copied().filter(|x| x.is_finite()).collect();
        let per_copy_ns = crate::stats::median(&finite).unwrap_or(f64::NAN);
        let slowest_ns = finite.iter().copied().fold(f64::NAN, f64::max);
        let fastest = finite.iter().copied().fold(f64::NAN, f64::min);
        let throughput_ops_s = copy_ops_s.iter().sum();
        CopiesFigures {
            n: copies.n,
            mode: copies.mode.word().to_string(),
            cpus,
            online,
            oversubscribed,
            per_copy_ns,
            slowest_ns,
            spread: (slowest_ns - fastest) / per_copy_ns,
            throughput_ops_s,
            copy_ns,
        }
    }
}

/// The spread between separate runs of one benchmark under the same conditions, from
/// the history, that the interval was set from, and the interval this run had before
/// (see [`crate::stats::rounds::between_runs`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BetweenRuns {
    /// Earlier runs that entered the estimate.
    pub runs: usize,
    /// s: the standard deviation of the figures of these runs and this one, ns.
    pub sd_ns: f64,
    /// This run's interval before the history set it (the machine's floor's), low end.
    pub run_ci_low_ns: f64,
    /// This run's own interval, high end.
    pub run_ci_high_ns: f64,
}

/// The canary: a fixed getpid batch measured before each round of the benchmark.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Canary {
    /// ns per getpid before the first round.
    pub before_ns: f64,
    /// ns per getpid before the last round.
    pub after_ns: f64,
    /// (max − min) / min over the rounds' readings.
    pub change: f64,
    /// Whether the change exceeded the threshold (the machine changed speed between
    /// this benchmark's rounds).
    pub changed: bool,
    /// Every reading, one per round.
    pub rounds_ns: Vec<f64>,
}

/// Per-sample columns.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Samples {
    /// ns per operation, overhead subtracted.
    pub per_op_ns: Vec<f64>,
    /// Start of each sample, ns since the run's first round began.
    pub at_ns: Vec<f64>,
    /// The round of each sample.
    pub round: Vec<u32>,
    /// Labels: bit 1 MAD outlier, bit 2 perturbed (bit 0, outside the VMS window, only in
    /// documents written before 2026-11-28).
    pub flags: Vec<u8>,
    /// Involuntary switches during each sample.
    pub invol_switches: Vec<u64>,
    /// Voluntary switches during each sample.
    pub vol_switches: Vec<u64>,
    /// Minor plus major faults during each sample.
    pub faults: Vec<u64>,
}

/// Puts results in the catalogue's order (`syscost list`'s), each benchmark's rows
/// keeping the order they have (their sweep's), names the catalogue does not know last:
/// the order of every stored and exported form, whatever order the rows concluded in,
/// so that two runs' rows line up.
pub fn in_catalogue_order(results: &mut [BenchResult]) {
    let names: Vec<&str> = crate::bench::catalogue().iter().map(|b| b.name()).collect();
    results.sort_by_key(|r| {
        names
            .iter()
            .position(|n| *n == r.name)
            .unwrap_or(usize::MAX)
    });
}

impl BenchResult {
    /// The name and its parameters, as tables show them (`ctx.pingpong mechanism=pipe`).
    pub fn label(&self) -> String {
        let p = self.param_label();
        if p.is_empty() {
            self.name.clone()
        } else {
            format!("{} {p}", self.name)
        }
    }

    /// The fact called `name`.
    pub fn fact(&self, name: &str) -> Option<f64> {
        self.facts.iter().find(|f| f.name == name).map(|f| f.value)
    }

    /// `params` as `name=value` joined by spaces.
    pub fn param_label(&self) -> String {
        self.params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The headline figure, when measured.
    pub fn median_ns(&self) -> Option<f64> {
        self.measured.as_ref().map(|m| m.median_ns)
    }
}

/// Whether a count is zero (serde leaves such fields out).
fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Describes levels in time, e.g. "two levels: 129 ns for 4.1 s, then 105 ns"; none
/// for one level, or for more than four (rounds that alternate between states, which
/// the states say better than a timeline).
pub fn describe_levels(levels: &[Level]) -> Option<String> {
    let count = match levels.len() {
        2 => "two",
        3 => "three",
        4 => "four",
        _ => return None,
    };
    let parts: Vec<String> = levels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            if i + 1 == levels.len() {
                fmt_ns(l.median_ns)
            } else {
                format!("{} for {}", fmt_ns(l.median_ns), fmt_secs(l.duration_ns))
            }
        })
        .collect();
    Some(format!("{count} levels: {}", parts.join(", then ")))
}

/// States as text: "85.1 ns 60%, 93.0 ns 40%".
pub fn describe_states(states: &[State]) -> String {
    states
        .iter()
        .map(|s| format!("{} {:.0}%", fmt_ns(s.median_ns), s.share * 100.0))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Describes several modes, e.g. "two modes: 105 ns (62%), 129 ns (38%)".
pub fn describe_modes(modes: &[Mode]) -> Option<String> {
    if modes.len() < 2 {
        return None;
    }
    let parts: Vec<String> = modes
        .iter()
        .map(|m| format!("{} ({:.0}%)", fmt_ns(m.center), m.fraction * 100.0))
        .collect();
    Some(format!("{} modes: {}", modes.len(), parts.join(", ")))
}

/// Formats seconds since the Unix epoch as UTC, e.g. "2026-11-23 01:47 UTC".
pub fn fmt_unix_time(unix_s: f64) -> String {
    if !unix_s.is_finite() || !(0.0..1e11).contains(&unix_s) {
        return "unknown time".into();
    }
    let secs = unix_s as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Days to a civil date (Howard Hinnant's algorithm, proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

fn fmt_secs(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.1} s", ns / 1e9)
    } else {
        format!("{:.0} ms", ns / 1e6)
    }
}

#[cfg(test)]
pub(crate) mod tests;
