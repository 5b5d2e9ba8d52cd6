//! The JSON format: one document per run, a serialised [`Run`](crate::results::Run).
//!
//! # Schema (version 3)
//!
//! ```text
//! {
//!   "schema_version": 3,
//!   "tool": "syscost", "version": "0.1.0",
//!   "command_line": ["syscost", "run", ...],
//!   "started_unix_s": 1763700000.5,
//!   "host": { HostFacts: cpu_model, cpus_online, kernel, virtualization, clocksource,
//!             invariant_tsc, governor, smt, vulnerabilities[{name,status}], thp_enabled,
//!             loadavg, busy_processes[{pid,comm,cpu_percent}], euid, is_root,
//!             perf_event_paranoid, tracefs, ... },
//!   "clock": { "name": "tsc", "why": "...", "ns_per_tick", "granularity_ns", "read_cost_ns",
//!   "resolution_ns" },
//!   "harness": { "profile", "warmup_ns", "round_warmup_ns", "round_ns",
//!                "round_min_samples", "round_max_samples", "min_rounds", "max_rounds",
//!                "span_ns", "batch": null | k, "seed", "ci_target", "min_batch_ns",
//!                "cpu", "load", "kernel_events"?: how, "workers"?: "process",
//!                "rounds_per_worker"?, "budget_ns"?, "budget_max_rounds"? },
//!                // "budget_ns": `syscost run`'s time budget, a cap on the run (the
//!                // profile's for a whole catalogue, less for a small selection, or
//!                // --budget): past min_rounds, rounds beyond max_rounds (up to
//!                // budget_max_rounds) go to unconverged results
//!                // "workers": each benchmark measured in a worker process of its own
//!                // (absent: in the run's own process, as before this field existed);
//!                // "rounds_per_worker": the rounds each measured before a fresh one
//!                // took over (0: one for all of a benchmark's rounds)
//!   "complete": true,              // false if interrupted (or still running)
//!   "results": [ {
//!     "name": "syscall.getpid", "params": {"via": "vdso"}, "op": "call", "unit": "ns",
//!     "entry"?: "libc" | "raw" | "syscall" | "vdso" | "fault",  // how its timed calls
//!                // enter the kernel (src/bench/via.rs, docs/entry.md): its via, or the
//!                // benchmark's fixed path; absent where they do not enter it, and in
//!                // documents written before this field existed
//!     "status": "ok" | "skipped" | "failed", "reason": null | "why",
//!     "measured": null | {
//!       "median_ns",          // the headline: trimmed mean of the rounds' clean medians
//!       "ci_low_ns", "ci_high_ns",       // its 95% interval: where a rerun's median lands
//!       "rounds": [{ "round", "start_ns", "median_ns": null | ns, "clean", "total" }],
//!       "round_sd_ns", "round_spread",   // sd of the round medians; (max − min) / headline
//!       "states": [{ "median_ns", "share", "count" }],   // round medians > 3% apart
//!       "clean": Summary | null, "raw": Summary,         // pooled over rounds; batch means
//!       "counts": { "total", "mad", "perturbed", "clean", "floored",
//!                   "perturbed_by": { "vol_switches", "invol_switches", "faults",
//!                                     "kernel" } },   // samples per unexpected cause
//!       "basis": "clean" | "all",        // which samples the headline rests on
//!       "worker_peak_kib"?,              // the measuring workers' highest peak resident KiB
//!       "worker_processes"?,             // the worker processes that measured it, in turn
//!       "rounds_redone"?,                // rounds measured again: outside the base state (canary > base +5%)
//!       "slow_state_pct"?,               // kept rounds' canary above the base state, % (> 5: not converged)
//!       "work"?: "syscall" | "user" | "memory" | "cross" | "io",  // its kind of work (whose floor holds it)
//!       "target_pct"?, "floor_pct"?,     // ±% it was held to; what its kind is allowed, ±%
//!       "own_ci_low_ns"?, "own_ci_high_ns"?,  // the rounds' own interval, when what the machine allows was added to it
//!       "paired"?: { "reference": "via=libc",   // measured in pairs with that row (--reference)
//!                    "ratio", "ratio_low", "ratio_high",       // this row over the reference, 95% interval
//!                    "diff_ns", "diff_low_ns", "diff_high_ns", // this row less the reference, ns
//!                    "reference_ns", "rounds", "pairs",        // the reference in the pairs; fresh workers; quartets
//!                    "round_ratios": [..], "sides": "thread" | "threads" | "processes" },
//!       "batch", "operations",
//!       "overhead": { "per_batch_ns", "per_op_ns", "samples", "subtracted" },
//!       "accounting": { "user_ns", "sys_ns", "vol_switches", "invol_switches",
//!                       "minor_faults", "major_faults" },          // per operation
//!       "converged": bool, "stop_reason": "...",  // the verdict, and in words
//!       "why"?: [{ "why": "interrupted" | "slow_state" | "few_clean" | "few_rounds"
//!                 | "not_placed" | "budget" | "clock_step" | "wide" | "runs_spread", .. }],
//!                                    // why not converged (absent when it is)
//!       "interval_source"?: "rounds" | "clock" | "samples" | "all_samples" | "runs",
//!       "levels": [{ "median_ns", "start_ns", "duration_ns", "samples" }],  // the rounds'
//!                                    // states in time order (none in one state)
//!       "modes": [{ "center", "fraction", "low", "high" }],
//!       "canary": { "before_ns", "after_ns", "change", "changed", "rounds_ns": [..] },
//!       "warmup_ns", "elapsed_ns", "setup_ns", "after_ns",
//!       "samples": null | { "per_op_ns": [..], "at_ns": [..], "round": [..], "flags": [..],
//!                           "invol_switches": [..], "vol_switches": [..], "faults": [..] },
//!       "between_runs": null | { "runs", "sd_ns", "run_ci_low_ns", "run_ci_high_ns" },
//!       "kernel": { "samples", "culled", "by_cause": { "timer": n, .. },   // --cull kernel
//!                   "culled_median_ns", "rusage_median_ns", "clean_median_ns" },
//!       "copies"?: { "n", "mode": "process" | "thread", "cpus": [..], "online",
//!                    "oversubscribed", "copy_ns": [..], "per_copy_ns", "slowest_ns",
//!                    "spread", "throughput_ops_s" }   // run as copies (copies=N) only
//!     },
//!     "facts": [{ "name", "value", "unit", "about" }], // figures derived beyond the time
//!     "explain"?: {                  // syscost explain / run --explain (absent otherwise)
//!       "event": "cycles" | "cpu-clock", "hz", "period_ns",   // period_ns 0 for cycles
//!       "kernel": bool,              // kernel frames sampled and named
//!       "notes": ["..."],            // what is missing and why, one line each
//!       "covers": "...",             // which tasks the samples cover
//!       "samples", "samples_other_tasks", "samples_outside", "lost", "operations",
//!       "wall_ns_per_op", "sampled_ns_per_op": null | ns,  // samples × period / ops
//!       "median_ns",                 // the scale: a share × median_ns is ns per op
//!                                    // (mean of the sampled rounds' medians: odd rounds)
//!       "unsampled_median_ns": null | ns,  // the even rounds': the sampling's cost
//!       "named",                     // fraction of samples whose leaf has a name
//!       "bound_ns",                  // the widest 95% half-width of any self share
//!       "bias": "...",
//!       "groups": [Share],           // user, entry, mitigations, body, scheduler,
//!                                    // interrupts, in that order
//!       "functions": [Share],        // most self time first
//!       "stacks": [{ "user", "kernel": [outermost first], "count", "measuring" }]
//!     }  // Share: { "name", "kernel", "group": null | "user" | "entry" | "mitigations"
//!        //   | "body" | "scheduler" | "interrupts", "self_samples", "total_samples",
//!        //   "self_share", "self_ns", "self_low_ns", "self_high_ns", "total_ns",
//!        //   "total_low_ns", "total_high_ns" }   (intervals: Wilson, 95%)
//!   } ],
//!   "machine": { "readings", "spread", "states": [{ "median_ns", "share", "count" }],
//!                "unsteady", "past": { "runs", "median_ns", "low_ns", "high_ns",
//!                "ratio" },        // every canary reading of the run, grouped
//!                "floors"?: [{ "kind", "probe", "readings", "median_ns", "spread_pct",
//!                              "floor_pct", "rounds", "within_pct"?,
//!                              "between_pct"?, "past_runs"? }] },   // the machine's floors
//!   "sweeps": [ { "name", "param", "fixed": {..}, "points", "slope_ns", "intercept_ns",
//!                 "r2" } ],         // a line through the medians of each numeric sweep
//!   "rings": [ { "name": "ctx.ring", "fixed": {..}, "knee_n", "knee_threshold",
//!                "growth_exponent", "growth_r2",
//!                "rows": [{ "n", "per_hop_ns", "ci_low_ns", "ci_high_ns",
//!                           "real_us_per_pass", "cpu_us_per_pass", "user_us_per_pass",
//!                           "sys_us_per_pass", "projected_us_per_pass",
//!                           "cpu_over_projected", "vol_per_hop", "invol_per_hop",
//!                           "switch_ns" }] } ],  // Sloan's table per ctx.ring sweep
//!   "scaling"?: [ { "name", "fixed": {..},          // each benchmark run as copies
//!                   "points": [{ "n", "per_copy_ns", "slowest_ns", "throughput_ops_s",
//!                                "efficiency": null | x, "oversubscribed", "cpus": [..] }],
//!                   "fit": null | { "lambda", "sigma", "kappa", "sigma_se": null | x,
//!                                   "kappa_se": null | x, "r2", "points",
//!                                   "peak_n": null | n },
//!                   "no_fit": null | "why" } ],
//!   "labels"?: ["kernel=6.12", "base"],   // the user's labels (`run --label`), sorted;
//!                // runs with other labels never share a spread between runs
//!   "shift"?: { "rows", "moved", "median_change", "past_runs" }
//!                // the run lay far from its earlier runs, many rows moving together
//!                // beyond their spread: said, so such runs get a label; no interval moves
//! }
//! ```
//!
//! The headline and its interval (docs/method.md is the model; see
//! [`crate::stats::rounds`] for the estimator): each round's figure is the median of its
//! clean samples; `median_ns` is their 20% trimmed mean and `ci_low_ns`..`ci_high_ns`
//! its 95% interval, whose width one source set (`interval_source`): `rounds`, Yuen's
//! interval sized for a rerun, `trimmed mean ± t(0.975, h−1)·√2·se` over the R rounds (h
//! of them kept); `clock` or `samples`, half a clock step per operation or the pooled
//! samples' order-statistic interval where wider; `all_samples` (below); or `runs`: when
//! the history holds at least two earlier runs of the benchmark under the same
//! conditions (same host facts, clock, profile, load, pinning and batch), each side is
//! `q(K)·s`, where K is the number of runs including this one, s (`between_runs.sd_ns`)
//! the standard deviation of their figures (see [`crate::stats::rounds::between_runs`])
//! and q(K) the multiple that holds where the runs centre 95% of the time
//! ([`crate::stats::rounds::centre_quantile`]), never narrower than 1.96 of the
//! standard errors each side of the rounds' interval stands for, which is kept in
//! `between_runs.run_ci_*`. It is set when the run is decided and never rewritten.
//! `converged` is true when the printed half-width is within `target_pct` (the larger of
//! `ci_target` and √2 times what the machine allows its `work`, or `ci_target` alone
//! with `run --target`) and `why` is empty: at least `min_rounds` rounds with a clean sample, on
//! at least 30 clean samples that are at least a tenth of all, its rounds not in a slow
//! state, its tasks placed as asked. `machine.floors` has, per kind of work, the probe
//! (getpid, an add-multiply chain, a zero-fill fault, a wake-up round trip with another
//! CPU, a cold read; the last two only beside rows of that kind) read in each worker
//! before its round's samples: `readings`, their `median_ns`, their `spread_pct`
//! ((p90 − p10) / median, each reading taken relative to the median of the instance it
//! was read beside), and `floor_pct`, what the machine allows the kind: the 95%
//! half-width the headline of `rounds` rounds that move so would have, on the
//! interval's scale (see [`crate::stats::rounds::floor`]), which a row's interval
//! adds to its rounds' own (`own_ci_*`) as `√(a² + b²)` until it has a history
//! (`interval_source` `machine`). When the history holds three or more earlier runs under the
//! same conditions, `between_pct` is how far the kind's probe moved between the newest
//! of them (`past_runs`, at most 10: `t(0.975, K−1)·√2·s`, `s` the sd of the logs of
//! their probe medians), `within_pct` what this run's readings alone give, and
//! `floor_pct` the larger of the two. With fewer clean samples `basis` is `"all"`: `median_ns` is
//! then the median of every sample (perturbed and outliers included), `ci_low_ns`..
//! `ci_high_ns` their order-statistic interval, widened to the round medians' t interval
//! and to at least ±1% (or `ci_target`, if wider), each round's `median_ns` is the
//! median of all its samples, and `converged` is false. `counts.perturbed_by` counts the
//! perturbed samples by what the operation does not do itself: a voluntary switch (it
//! does not block), an involuntary one (neither blocks nor shares its CPU), a page
//! fault, a kernel event (`--cull kernel`); a sample may count under several. A sample is one batch of `batch`
//! operations, so the `Summary` percentiles and `modes` describe batch means,
//! not single operations (run with `--batch 1` for those). The MAD test within each
//! round is the only outlier test (its settings: `method::MAD_THRESHOLD` and
//! `method::MAD_FLOOR`). `machine.spread` is the
//! canary readings' (p90 − p10) / median, and `unsteady` says it exceeded `ci_target`.
//! `machine.past` (absent without a history holding two earlier runs under the same
//! conditions) sets the run's base state (its canary's) beside theirs: `runs` (at most 10),
//! their `median_ns`, `low_ns` and `high_ns`, and `ratio`, this run's over their median.
//! `at_ns` counts from the start of the run's first round.
//!
//! Copies (`copies=N`): the N copies time their own batches over one window, each
//! pinned to a CPU of its own while N fits (`cpus`, one per copy; empty for a single
//! copy, measured as any instance is). The headline of such a result is the median of
//! every copy's batches pooled (rounds and interval as for any result); `copy_ns` is
//! each copy's samples analysed alone, `per_copy_ns` their median, `slowest_ns` the
//! largest, `spread` (slowest − fastest) / `per_copy_ns`, and `throughput_ops_s` the
//! sum over copies of 1e9 / `copy_ns`, or, when `oversubscribed`, of each copy's
//! operations over the time all its batches took (perturbed ones too: a copy that
//! waited for its CPU did fewer). In `scaling`, `efficiency` is `throughput_ops_s` / (N ×
//! that of the `copies=1` point), and `fit` the Universal Scalability Law
//! X(N) = λN / (1 + σ(N−1) + κN(N−1)) over the points that are not oversubscribed
//! (at least three; `sigma_se`/`kappa_se` null with exactly three), `peak_n`
//! √((1−σ)/κ) (null when κ ≤ 0); see [`crate::stats::usl`].
//!
//! A `Summary` is `{ n, mean, sd, min, max, median, p1, p5, p25, p75, p95, p99, mad, cv,
//! ci_low, ci_high }`, all in ns except `n` and `cv`; `ci_low`/`ci_high` bound the 95%
//! order-statistic confidence interval of the pooled median. Sample `flags` are bits: 2 MAD
//! outlier, 4 perturbed (a switch or fault during the sample); 1, a window outlier, only
//! in documents measured before 2026-11-28. Times are ns per operation with the
//! empty-loop overhead subtracted unless `overhead.subtracted` is false. A new field may
//! be added without raising the version; a field is never renamed or removed, nor its
//! meaning changed, without raising it.
//!
//! # Versions
//!
//! - 3: removed fields that held a constant or a copy and that nothing read:
//!   `harness.window_below` and `window_above` (null since the VMS window was retired
//!   on 2026-11-28), `harness.mad_threshold` and `mad_floor` (always
//!   `method::MAD_THRESHOLD` and `method::MAD_FLOOR`), each result's `counts.window`
//!   (0 since then), `center_ns` (the median of all samples, `raw.median`) and
//!   `reach_pct` (equal to `floor_pct`), and each floor's `reach_pct` (equal to its
//!   `floor_pct`). The CSV format lost its `window_outliers` column with them. A
//!   version 2 document is still read (a file given to `report` or `compare`, a run in
//!   the history): those fields are dropped as it is read
//!   ([`crate::results::upgrade`]); a document measured before 2026-11-28 then no longer
//!   counts its window outliers apart (its `clean` count and its samples' flags keep
//!   them).
//! - 2: the first version this syscost reads; an older document is refused with one
//!   line.
