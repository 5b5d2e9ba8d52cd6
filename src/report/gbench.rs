//! Google Benchmark's JSON (`--benchmark_format=json`), so that the dashboards and CI
//! actions that track Google Benchmark results (github-action-benchmark's `googlecpp`
//! tool, Bencher's adapter, compare.py) read syscost's figures.
//!
//! # Mapping
//! - `context`: the run's date (RFC 3339, UTC), host name, executable (`syscost`),
//!   CPUs online, `mhz_per_cpu` 0 (not read), `cpu_scaling_enabled` (a cpufreq governor
//!   other than `performance`), `caches` empty, the load averages,
//!   `library_build_type` "release", plus syscost's own keys (`syscost_version`,
//!   `kernel`, `profile`, `clock`).
//! - A benchmark's name is `family.name` followed by its parameters in key order as
//!   `/key:value` (Google Benchmark's spelling of named arguments), e.g.
//!   `ipc.rtt/placement:same-cpu/size:64/transport:pipe`.
//! - Each measured round is one `"run_type": "iteration"` entry (`repetitions` = the
//!   rounds, `repetition_index` = the round), whose `real_time` and `cpu_time` are the
//!   round's median, ns per operation, and `iterations` the operations timed in that
//!   round's clean samples. Then four `"run_type": "aggregate"` entries over the rounds,
//!   as Google Benchmark writes for repetitions: `mean` (syscost's headline), `median`,
//!   `stddev` and `cv` (`aggregate_unit` "percentage", as a fraction).
//! - `cpu_time` equals `real_time`: syscost times wall-clock on a pinned, otherwise idle
//!   thread; its CPU accounting is per operation in the syscost JSON, not here.
//! - A benchmark run as copies (`copies=N`) has `threads` N (1 otherwise), and its
//!   `mean` aggregate the copies' total throughput as `items_per_second`.
//! - A skipped or failed benchmark is one entry with `error_occurred: true` and its
//!   reason as `error_message`.

use crate::results::{fmt_unix_time, BenchResult, Run, Status};
use serde_json::{json, Value};

/// The name a result has in Google Benchmark's form.
pub fn name(r: &BenchResult) -> String {
    let mut s = r.name.clone();
    for (k, v) in &r.params {
        s += &format!("/{k}:{v}");
    }
    s
}

fn rfc3339(unix_s: f64) -> String {
    // fmt_unix_time gives "YYYY-MM-DD HH:MM UTC".
    let t = fmt_unix_time(unix_s);
    match t.strip_suffix(" UTC") {
        Some(d) => format!("{}:00+00:00", d.replacen(' ', "T", 1)),
        None => t,
    }
}

/// The document for `run`.
pub fn document(run: &Run) -> Value {
    let h = &run.host;
    let context = json!({
        "date": rfc3339(run.started_unix_s),
        "host_name": h.hostname.clone().unwrap_or_default(),
        "executable": "syscost",
        "num_cpus": h.cpus_online,
        "mhz_per_cpu": 0,
        "cpu_scaling_enabled": h.governor.as_deref().is_some_and(|g| g != "performance"),
        "caches": [],
        "load_avg": h.loadavg.map(|l| l.to_vec()).unwrap_or_default(),
        "library_build_type": "release",
        "syscost_version": run.version,
        "kernel": h.kernel.clone().unwrap_or_default(),
        "profile": run.harness.profile,
        "clock": run.clock.name,
    });
    let mut benchmarks = Vec::new();
    for (family, r) in run.results.iter().enumerate() {
        let name = name(r);
        let copies = r.measured.as_ref().and_then(|m| m.copies.as_ref());
        let threads = copies.map_or(1, |c| c.n);
        let base = |run_name: &str| {
            json!({
                "name": run_name,
                "family_index": family,
                "per_family_instance_index": 0,
                "run_name": name,
                "threads": threads,
                "time_unit": "ns",
            })
        };
        let Some(m) = r.measured.as_ref().filter(|_| r.status == Status::Ok) else {
            benchmarks.push(not_measured(r, base(&name)));
            continue;
        };
        let rounds: Vec<(usize, f64, u64)> = m
            .rounds
            .iter()
            .filter_map(|x| x.median_ns.map(|v| (x.round as usize, v, x.clean as u64)))
            .collect();
        let n = rounds.len().max(1);
        for (i, &(_, v, clean)) in rounds.iter().enumerate() {
            let mut e = base(&name);
            e["run_type"] = "iteration".into();
            e["repetitions"] = n.into();
            e["repetition_index"] = i.into();
            e["iterations"] = (clean * m.batch).into();
            e["real_time"] = v.into();
            e["cpu_time"] = v.into();
            benchmarks.push(e);
        }
        let values: Vec<f64> = rounds.iter().map(|r| r.1).collect();
        let median = crate::stats::median(&values).unwrap_or(m.median_ns);
        let aggregates = [
            ("mean", m.median_ns, "time"),
            ("median", median, "time"),
            ("stddev", m.round_sd_ns, "time"),
            (
                "cv",
                if m.median_ns != 0.0 {
                    m.round_sd_ns / m.median_ns
                } else {
                    0.0
                },
                "percentage",
            ),
        ];
        for (agg, v, unit) in aggregates {
            let mut e = base(&format!("{name}_{agg}"));
            e["run_type"] = "aggregate".into();
            e["repetitions"] = n.into();
            e["aggregate_name"] = agg.into();
            e["aggregate_unit"] = unit.into();
            e["iterations"] = n.into();
            e["real_time"] = finite(v);
            e["cpu_time"] = finite(v);
            if let (Some(c), "mean") = (copies, agg) {
                e["items_per_second"] = finite(c.throughput_ops_s);
            }
            benchmarks.push(e);
        }
    }
    json!({ "context": context, "benchmarks": benchmarks })
}

/// The entry of a benchmark that was skipped or failed: an error, with its reason.
fn not_measured(r: &crate::results::BenchResult, mut e: Value) -> Value {
    e["run_type"] = "iteration".into();
    e["repetitions"] = 1.into();
    e["repetition_index"] = 0.into();
    e["iterations"] = 0.into();
    e["real_time"] = 0.into();
    e["cpu_time"] = 0.into();
    e["error_occurred"] = true.into();
    let what = if r.status == Status::Skipped {
        "skipped"
    } else {
        "failed"
    };
    let why = r.reason.as_deref().unwrap_or("no reason given");
    e["error_message"] = format!("{what}: {why}").into();
    e
}

fn finite(v: f64) -> Value {
    if v.is_finite() {
        v.into()
    } else {
        0.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::tests::run_with_medians;

    #[test]
    fn rounds_become_repetitions_with_aggregates() {
        let mut run = run_with_medians(&[("syscall.getpid", 80.0), ("ipc.rtt", 3000.0)]);
        run.results[1].params.insert("size".into(), "64".into());
        run.results[1]
            .params
            .insert("transport".into(), "pipe".into());
        let mut skipped = run.results[0].clone();
        skipped.name = "svc.rt".into();
        skipped.status = Status::Skipped;
        skipped.measured = None;
        skipped.reason = Some("needs CAP_SYS_NICE".into());
        run.results.push(skipped);
        let d = document(&run);
        let b = d["benchmarks"].as_array().unwrap();
        // Five rounds and four aggregates each, then one error entry.
        assert_eq!(b.len(), 9 + 9 + 1);
        assert_eq!(b[0]["name"], "syscall.getpid");
        assert_eq!(b[0]["run_type"], "iteration");
        assert_eq!(b[0]["repetitions"], 5);
        assert_eq!(b[4]["repetition_index"], 4);
        assert_eq!(b[5]["name"], "syscall.getpid_mean");
        assert_eq!(b[5]["aggregate_name"], "mean");
        assert_eq!(b[5]["real_time"], 80.0);
        assert_eq!(b[8]["aggregate_unit"], "percentage");
        assert_eq!(b[9]["name"], "ipc.rtt/size:64/transport:pipe");
        assert_eq!(b[9]["family_index"], 1);
        assert_eq!(b[18]["error_occurred"], true);
        assert!(b[18]["error_message"]
            .as_str()
            .unwrap()
            .contains("CAP_SYS_NICE"));
        for e in b {
            for key in [
                "name",
                "run_name",
                "run_type",
                "iterations",
                "real_time",
                "cpu_time",
                "time_unit",
            ] {
                assert!(e.get(key).is_some(), "{key} missing in {e}");
            }
        }
        assert_eq!(d["context"]["date"], "2023-11-14T22:13:00+00:00");
        assert_eq!(d["context"]["host_name"], "testhost");
    }
}
