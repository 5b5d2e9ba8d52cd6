//! The JSON format: one document per run, a serialised [`Run`].
//!
//! # Schema (version 1)
//!
//! ```text
//! {
//!   "schema_version": 1,
//!   "tool": "syscost", "version": "0.1.0",
//!   "command_line": ["syscost", "run", ...],
//!   "started_unix_s": 1763700000.5,
//!   "host": { HostFacts: cpu_model, cpus_online, kernel, virtualization, clocksource,
//!             invariant_tsc, governor, smt, vulnerabilities[{name,status}], thp_enabled,
//!             loadavg, busy_processes[{pid,comm,cpu_percent}], euid, is_root,
//!             perf_event_paranoid, tracefs, ... },
//!   "clock": { "name": "tsc", "why": "...", "ns_per_tick", "granularity_ns", "read_cost_ns" },
//!   "harness": { "profile", "warmup_ns", "min_samples", "max_samples", "min_time_ns",
//!                "max_time_ns", "ci_target", "min_batch_ns", "window_below",
//!                "window_above", "mad_threshold", "mad_floor", "pilot_samples", "cpu",
//!                "load" },
//!   "complete": true,              // false if interrupted (or still running)
//!   "results": [ {
//!     "name": "syscall.getpid", "params": {"via": "vdso"}, "op": "call", "unit": "ns",
//!     "status": "ok" | "skipped" | "failed", "reason": null | "why",
//!     "measured": null | {
//!       "median_ns",                     // the headline: median of the clean samples
//!       "clean": Summary | null, "raw": Summary,
//!       "counts": { "total", "window", "mad", "perturbed", "clean", "floored" },
//!       "pilot_ns", "batch", "operations",
//!       "overhead": { "per_batch_ns", "per_op_ns", "samples", "subtracted" },
//!       "accounting": { "user_ns", "sys_ns", "vol_switches", "invol_switches",
//!                       "minor_faults", "major_faults" },          // per operation
//!       "converged": bool, "stop_reason": "...",
//!       "levels": [{ "median_ns", "start_ns", "duration_ns", "samples" }],
//!       "modes": [{ "center", "fraction", "low", "high" }],
//!       "canary": { "before_ns", "after_ns", "change", "changed" },
//!       "warmup_ns", "elapsed_ns",
//!       "samples": null | { "per_op_ns": [..], "at_ns": [..], "flags": [..],
//!                           "invol_switches": [..], "vol_switches": [..], "faults": [..] }
//!     },
//!     "facts": [{ "name", "value", "unit", "about" }]  // figures derived beyond the time
//!   } ],
//!   "sweeps": [ { "name", "param", "fixed": {..}, "points", "slope_ns", "intercept_ns",
//!                 "r2" } ],         // a line through the medians of each numeric sweep
//!   "rings": [ { "name": "ctx.ring", "fixed": {..}, "knee_n", "knee_threshold",
//!                "growth_exponent", "growth_r2",
//!                "rows": [{ "n", "per_hop_ns", "ci_low_ns", "ci_high_ns",
//!                           "real_us_per_pass", "cpu_us_per_pass", "user_us_per_pass",
//!                           "sys_us_per_pass", "projected_us_per_pass",
//!                           "cpu_over_projected", "vol_per_hop", "invol_per_hop",
//!                           "switch_ns" }] } ]   // Sloan's table per ctx.ring sweep
//! }
//! ```
//!
//! A `Summary` is `{ n, mean, sd, min, max, median, p1, p5, p25, p75, p95, p99, mad, cv,
//! ci_low, ci_high }`, all in ns except `n` and `cv`; `ci_low`/`ci_high` bound the 95%
//! confidence interval of the median. Sample `flags` are bits: 1 window outlier, 2 MAD
//! outlier, 4 perturbed (a switch or fault during the sample). Times are ns per
//! operation with the empty-loop overhead subtracted unless `overhead.subtracted` is
//! false. A new field may be added without raising the version; a field is never
//! renamed or removed, nor its meaning changed, without raising it.

use super::model::Run;
use std::path::Path;

/// Writes the document to `path` (compact, one line) through a temporary file and a
/// rename, so a reader (or an interruption) never sees half a document.
pub fn write_atomically(path: &Path, run: &Run) -> std::io::Result<()> {
    let tmp = path.with_extension("json.partial");
    let mut text = serde_json::to_vec(run).map_err(std::io::Error::other)?;
    text.push(b'\n');
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}
