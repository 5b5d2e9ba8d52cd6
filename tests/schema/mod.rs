//! A mirror of the JSON result document (schema version 3), written from its description
//! in `src/report/json.rs` and `src/report/model.rs`, independently of the library's own
//! types: if the program's output drifts from the documented schema, these fail to parse
//! it. Every struct denies unknown fields; [`parse_strict`] also checks that no field is
//! missing and that every value has the documented type.

// The fields are read by serde, not by the tests: they exist to pin the schema down.
#![allow(dead_code)]

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Parses `text` as a `T`, and checks that `T` serialised again is the same JSON: a
/// missing field (which serde would accept as `None`) or a value of another type (an
/// integer where a float is documented) shows up as a difference.
pub fn parse_strict<T: DeserializeOwned + Serialize>(text: &str) -> T {
    let value: Value = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("not a JSON document: {e}\n{}", head(text)));
    let parsed: T = serde_json::from_value(value.clone())
        .unwrap_or_else(|e| panic!("does not match the documented schema: {e}"));
    let again = serde_json::to_value(&parsed).expect("serialise the mirror");
    if let Some(diff) = difference(&value, &again, "$") {
        panic!("the document differs from the documented schema at {diff}");
    }
    parsed
}

fn head(text: &str) -> &str {
    let end = text.char_indices().nth(2000).map_or(text.len(), |(i, _)| i);
    &text[..end]
}

/// The first place where `doc` (the program's output) and `mirror` differ.
fn difference(doc: &Value, mirror: &Value, path: &str) -> Option<String> {
    match (doc, mirror) {
        (Value::Object(a), Value::Object(b)) => b
            .iter()
            .find_map(|(k, v)| match a.get(k) {
                None => Some(format!("{path}.{k}: missing")),
                Some(d) => difference(d, v, &format!("{path}.{k}")),
            })
            .or_else(|| {
                a.keys()
                    .find(|k| !b.contains_key(*k))
                    .map(|k| format!("{path}.{k}: extra"))
            }),
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (d, v))| difference(d, v, &format!("{path}[{i}]"))),
        _ if doc == mirror => None,
        _ => Some(format!(
            "{path}: document has {doc}, schema type gives {mirror}"
        )),
    }
}

/// A whole run.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Run {
    pub schema_version: u32,
    pub tool: String,
    pub version: String,
    pub command_line: Vec<String>,
    pub started_unix_s: f64,
    pub host: Host,
    pub clock: Clock,
    pub harness: Harness,
    pub complete: bool,
    pub results: Vec<BenchResult>,
    pub machine: MachineStates,
    pub sweeps: Vec<SweepFit>,
    pub rings: Vec<RingTable>,
    /// Present when something ran as copies.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scaling: Vec<Scaling>,
    /// The user's labels, sorted; present when given (`run --label`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    /// Present when the run lay far from its history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shift: Option<Shift>,
}

/// A run far from its history.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shift {
    pub rows: u64,
    pub moved: u64,
    pub median_change: f64,
    pub past_runs: u64,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RingTable {
    pub name: String,
    pub fixed: BTreeMap<String, String>,
    pub rows: Vec<RingRow>,
    pub knee_n: Option<u64>,
    pub knee_threshold: f64,
    pub growth_exponent: Option<f64>,
    pub growth_r2: Option<f64>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RingRow {
    pub n: u64,
    pub per_hop_ns: Option<f64>,
    pub ci_low_ns: Option<f64>,
    pub ci_high_ns: Option<f64>,
    pub real_us_per_pass: Option<f64>,
    pub cpu_us_per_pass: Option<f64>,
    pub user_us_per_pass: Option<f64>,
    pub sys_us_per_pass: Option<f64>,
    pub projected_us_per_pass: Option<f64>,
    pub cpu_over_projected: Option<f64>,
    pub vol_per_hop: Option<f64>,
    pub invol_per_hop: Option<f64>,
    pub switch_ns: Option<f64>,
}

/// A straight line through the medians of a numeric sweep.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepFit {
    pub name: String,
    pub param: String,
    pub fixed: BTreeMap<String, String>,
    pub points: usize,
    pub slope_ns: f64,
    pub intercept_ns: f64,
    pub r2: f64,
}

/// The machine (`HostFacts` in `src/store/host.rs`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Host {
    pub hostname: Option<String>,
    pub cpu_model: Option<String>,
    pub cpus_online: usize,
    pub cpus_allowed: Vec<usize>,
    pub kernel: Option<String>,
    pub kernel_version: Option<String>,
    pub virtualization: Option<String>,
    pub clocksource: Option<String>,
    pub available_clocksources: Vec<String>,
    pub invariant_tsc: bool,
    pub tsc_flags: Vec<String>,
    pub governor: Option<String>,
    pub smt: Option<String>,
    pub threads_per_core: Option<usize>,
    pub vulnerabilities: Vec<Vulnerability>,
    pub thp_enabled: Option<String>,
    pub thp_defrag: Option<String>,
    pub loadavg: Option<[f64; 3]>,
    pub running_tasks: Option<u64>,
    pub busy_processes: Vec<BusyProcess>,
    pub memory_total_kib: Option<u64>,
    pub page_size: Option<u64>,
    pub euid: Option<u32>,
    pub cap_eff: Option<String>,
    pub is_root: bool,
    pub perf_event_paranoid: Option<i32>,
    pub tracefs: Option<String>,
    pub nohz_full: Option<String>,
    pub isolated_cpus: Option<String>,
    pub preempt_model: Option<String>,
    pub io_uring_disabled: Option<i32>,
    pub rlimit_nofile: Option<(String, String)>,
    pub rlimit_nproc: Option<(String, String)>,
}

/// One file of /sys/devices/system/cpu/vulnerabilities.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Vulnerability {
    pub name: String,
    pub status: String,
}

/// Another process using CPU.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BusyProcess {
    pub pid: u32,
    pub comm: String,
    pub cpu_percent: f64,
}

/// The harness clock (`ClockInfo`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clock {
    pub name: String,
    pub why: String,
    pub ns_per_tick: f64,
    pub granularity_ns: f64,
    pub read_cost_ns: f64,
    pub resolution_ns: f64,
}

/// The harness configuration.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Harness {
    pub profile: String,
    pub warmup_ns: u64,
    pub round_warmup_ns: u64,
    pub round_ns: u64,
    pub round_min_samples: usize,
    pub round_max_samples: usize,
    pub min_rounds: usize,
    pub max_rounds: usize,
    pub span_ns: u64,
    pub batch: Option<u64>,
    pub seed: u64,
    pub ci_target: f64,
    pub min_batch_ns: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_events: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds_per_worker: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_max_rounds: Option<usize>,
    pub cpu: Option<usize>,
    pub load: usize,
}

/// What happened to one benchmark instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Skipped,
    Failed,
}

/// How a result's timed calls enter the kernel (`entry`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryPath {
    Libc,
    Raw,
    Syscall,
    Vdso,
    Fault,
}

/// One benchmark with one set of parameter values.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchResult {
    pub name: String,
    pub params: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<EntryPath>,
    pub op: String,
    pub unit: String,
    pub status: Status,
    pub reason: Option<String>,
    pub measured: Option<Measured>,
    pub facts: Vec<Fact>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<Explain>,
}

/// Where the time went (`syscost explain`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Explain {
    pub event: String,
    pub hz: u64,
    pub period_ns: u64,
    pub kernel: bool,
    pub notes: Vec<String>,
    pub covers: String,
    pub samples: u64,
    pub samples_other_tasks: u64,
    pub samples_outside: u64,
    pub lost: u64,
    pub operations: u64,
    pub wall_ns_per_op: f64,
    pub sampled_ns_per_op: Option<f64>,
    pub median_ns: f64,
    pub unsampled_median_ns: Option<f64>,
    pub named: f64,
    pub bound_ns: f64,
    pub bias: String,
    pub groups: Vec<Share>,
    pub functions: Vec<Share>,
    pub stacks: Vec<Stack>,
}

/// A function's or a group's share as ns per operation.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Share {
    pub name: String,
    pub kernel: bool,
    pub group: Option<ExplainGroup>,
    pub self_samples: u64,
    pub total_samples: u64,
    pub self_share: f64,
    pub self_ns: f64,
    pub self_low_ns: f64,
    pub self_high_ns: f64,
    pub total_ns: f64,
    pub total_low_ns: f64,
    pub total_high_ns: f64,
}

/// The groups of an explanation.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExplainGroup {
    User,
    Entry,
    Mitigations,
    Body,
    Scheduler,
    Interrupts,
}

/// One folded stack.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stack {
    pub user: String,
    pub kernel: Vec<String>,
    pub count: u64,
    pub measuring: bool,
}

/// A named figure beside the per-operation time.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fact {
    pub name: String,
    pub value: f64,
    pub unit: String,
    pub about: String,
}

/// The figures of a measured benchmark.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Measured {
    pub median_ns: f64,
    pub ci_low_ns: f64,
    pub ci_high_ns: f64,
    pub rounds: Vec<RoundFigure>,
    pub round_sd_ns: f64,
    pub round_spread: f64,
    pub states: Vec<State>,
    pub clean: Option<Summary>,
    pub raw: Summary,
    pub counts: Counts,
    pub batch: u64,
    pub operations: u64,
    pub overhead: Overhead,
    pub accounting: Accounting,
    pub converged: bool,
    pub stop_reason: String,
    /// Why it is not converged: objects tagged by "why" (empty, and absent, when it is).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub why: Vec<Value>,
    /// "rounds", "clock", "samples", "all_samples" or "runs".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_source: Option<String>,
    pub levels: Vec<Level>,
    pub modes: Vec<Mode>,
    pub canary: Option<Canary>,
    pub warmup_ns: f64,
    pub elapsed_ns: f64,
    pub setup_ns: f64,
    pub after_ns: f64,
    pub samples: Option<Samples>,
    pub between_runs: Option<BetweenRuns>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<KernelCull>,
    /// "clean", or "all" when the clean samples were too few to rest on.
    pub basis: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_peak_kib: Option<u64>,
    /// The worker processes that measured it, one after another; absent in-process.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub worker_processes: u32,
    /// Rounds measured again (outside the machine's base state); absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rounds_redone: u32,
    /// How far above the base state the canary read before the kept rounds, %, when
    /// more than 5% (then not converged); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_state_pct: Option<f64>,
    /// Run as copies (`copies=N`) only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copies: Option<Copies>,
    /// "syscall", "user", "memory", "cross" or "io"; absent without floors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor_pct: Option<f64>,
    /// The rounds' own interval, when what the machine allows was added to it (in
    /// documents of builds before 2026-11-28, when it widened it to at least that).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_ci_low_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_ci_high_ns: Option<f64>,
    /// Measured in pairs with a reference row (`--reference`) only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired: Option<Paired>,
}

/// A row's ratio to its reference, measured in pairs.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Paired {
    pub reference: String,
    pub ratio: f64,
    pub ratio_low: f64,
    pub ratio_high: f64,
    pub diff_ns: f64,
    pub diff_low_ns: f64,
    pub diff_high_ns: f64,
    pub reference_ns: f64,
    pub rounds: u64,
    pub pairs: u64,
    pub round_ratios: Vec<f64>,
    pub sides: String,
}

/// An instance run as N copies.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Copies {
    pub n: u64,
    /// "process" or "thread".
    pub mode: String,
    pub cpus: Vec<u64>,
    pub online: u64,
    pub oversubscribed: bool,
    pub copy_ns: Vec<f64>,
    pub per_copy_ns: f64,
    pub slowest_ns: f64,
    pub spread: f64,
    pub throughput_ops_s: f64,
}

/// One benchmark's copies points and its scalability fit.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scaling {
    pub name: String,
    pub fixed: BTreeMap<String, String>,
    pub points: Vec<ScalingPoint>,
    pub fit: Option<UslFit>,
    pub no_fit: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScalingPoint {
    pub n: u64,
    pub per_copy_ns: f64,
    pub slowest_ns: f64,
    pub throughput_ops_s: f64,
    pub efficiency: Option<f64>,
    pub oversubscribed: bool,
    pub cpus: Vec<u64>,
}

/// The Universal Scalability Law fitted.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UslFit {
    pub lambda: f64,
    pub sigma: f64,
    pub kappa: f64,
    pub sigma_se: Option<f64>,
    pub kappa_se: Option<f64>,
    pub r2: f64,
    pub points: u64,
    pub peak_n: Option<f64>,
}

/// What culling by kernel events did (`--cull kernel`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelCull {
    pub samples: u64,
    pub culled: u64,
    pub by_cause: std::collections::BTreeMap<String, u64>,
    pub culled_median_ns: Option<f64>,
    pub rusage_median_ns: Option<f64>,
    pub clean_median_ns: Option<f64>,
}

/// How earlier runs widened the interval.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BetweenRuns {
    pub runs: u64,
    pub sd_ns: f64,
    pub run_ci_low_ns: f64,
    pub run_ci_high_ns: f64,
}

/// Descriptive statistics, ns except `n` and `cv`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub sd: f64,
    pub min: f64,
    pub max: f64,
    pub median: f64,
    pub p1: f64,
    pub p5: f64,
    pub p25: f64,
    pub p75: f64,
    pub p95: f64,
    pub p99: f64,
    pub mad: f64,
    pub cv: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

/// Label counts.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Counts {
    pub total: usize,
    pub mad: usize,
    pub perturbed: usize,
    pub clean: usize,
    pub floored: usize,
    pub perturbed_by: PerturbedBy,
}

/// Perturbed samples by cause.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerturbedBy {
    pub vol_switches: usize,
    pub invol_switches: usize,
    pub faults: usize,
    pub kernel: usize,
}

/// The subtracted empty-loop overhead.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Overhead {
    pub per_batch_ns: f64,
    pub per_op_ns: f64,
    pub samples: usize,
    pub subtracted: bool,
}

/// Resource usage per operation.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Accounting {
    pub user_ns: f64,
    pub sys_ns: f64,
    pub vol_switches: f64,
    pub invol_switches: f64,
    pub minor_faults: f64,
    pub major_faults: f64,
}

/// A level in time.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Level {
    pub median_ns: f64,
    pub start_ns: f64,
    pub duration_ns: f64,
    pub samples: usize,
}

/// A mode among the clean samples.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mode {
    pub center: f64,
    pub fraction: f64,
    pub low: f64,
    pub high: f64,
}

/// The getpid canary before and after.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Canary {
    pub before_ns: f64,
    pub after_ns: f64,
    pub change: f64,
    pub changed: bool,
    pub rounds_ns: Vec<f64>,
}

/// One round's figure: the median of its clean samples.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoundFigure {
    pub round: u32,
    pub start_ns: f64,
    pub median_ns: Option<f64>,
    pub clean: usize,
    pub total: usize,
}

/// A group of figures at one level.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct State {
    pub median_ns: f64,
    pub share: f64,
    pub count: usize,
}

/// The canary readings of a run, grouped.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineStates {
    pub readings: usize,
    pub spread: f64,
    pub states: Vec<State>,
    pub unsteady: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub past: Option<PastMachine>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub floors: Vec<Floor>,
}

/// The machine's floor for one kind of work.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Floor {
    /// "syscall", "user", "memory", "cross" or "io".
    pub kind: String,
    pub probe: String,
    pub readings: usize,
    pub median_ns: f64,
    pub spread_pct: f64,
    pub floor_pct: f64,
    pub rounds: usize,
    /// This run's readings' own figure, when the history's `between_pct` is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within_pct: Option<f64>,
    /// How far the probe moved between the machine's recent runs (from three).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub between_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub past_runs: Option<usize>,
}

/// A run's canary beside the same machine's earlier runs.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PastMachine {
    pub runs: usize,
    pub median_ns: f64,
    pub low_ns: f64,
    pub high_ns: f64,
    pub ratio: f64,
}

/// Per-sample columns.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Samples {
    pub per_op_ns: Vec<f64>,
    pub at_ns: Vec<f64>,
    pub round: Vec<u32>,
    pub flags: Vec<u8>,
    pub invol_switches: Vec<u64>,
    pub vol_switches: Vec<u64>,
    pub faults: Vec<u64>,
}

/// Whether a count is zero (the document leaves such a count out).
fn is_zero(n: &u32) -> bool {
    *n == 0
}
