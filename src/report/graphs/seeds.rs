//! The seeds' own figures: Sloan's ring (NCAR) graph, the 1999 file-read figure and
//! Nagy's mailbox echo.

use super::*;

/// Sloan's graph (NCAR, 1992): CPU time per pass around the ring against n for every
/// ring table in the runs, on one scale, with the Projected line (the n curve through
/// the first point), the n² curve through the first point, and the knee marked.
pub fn ring(runs: &[(RunLabel, Run)]) -> Result<Svg, UsageError> {
    let tables: Vec<(String, &crate::results::RingTable)> = runs
        .iter()
        .flat_map(|(l, r)| r.rings.iter().map(move |t| (run_name(l), t)))
        .filter(|(_, t)| !t.rows.is_empty())
        .collect();
    if tables.is_empty() {
        return Err(UsageError::new(
            "the ring graph needs a ctx.ring sweep over n: run `syscost run ctx.ring -p n=2,4,8,16`",
        ));
    }
    let fixed: Vec<&BTreeMap<String, String>> =
        tables.iter().map(|(_, t)| &t.fixed).collect();
    let keys = distinguishing(&fixed);
    let many_runs = runs.iter().filter(|(_, r)| !r.rings.is_empty()).count() > 1;
    let ns = tables
        .iter()
        .flat_map(|(_, t)| t.rows.iter().map(|r| r.n as f64));
    let x = Axis::fit(
        "n (tasks in the ring)",
        Scale::Linear,
        Units::Number,
        ns.chain([0.0]),
    );
    let ys = tables.iter().flat_map(|(_, t)| {
        t.rows
            .iter()
            .flat_map(|r| [r.cpu_us_per_pass * 1e3, r.projected_us_per_pass * 1e3])
    });
    let y = Axis::fit(
        "CPU time per pass",
        Scale::Linear,
        Units::Ns,
        ys.chain([0.0]),
    );
    let mut p = Plot::new(
        "Ring of n tasks passing a token (Sloan 1992, the NCAR graph)",
        x,
        y,
    );
    p.note(
        "CPU time of all tasks per pass (µs per pass = seconds per 10⁶ passes, the paper's unit); \
         Projected is the n curve through the first point",
    );
    for (i, (run, t)) in tables.iter().enumerate() {
        let c = color(i);
        let label = label_of(many_runs.then_some(run.as_str()), &t.fixed, &keys);
        let cpu: Vec<(f64, f64)> = t
            .rows
            .iter()
            .map(|r| (r.n as f64, r.cpu_us_per_pass * 1e3))
            .collect();
        let proj: Vec<(f64, f64)> = t
            .rows
            .iter()
            .map(|r| (r.n as f64, r.projected_us_per_pass * 1e3))
            .collect();
        let (n0, c0) = cpu[0];
        let n_max = cpu[cpu.len() - 1].0;
        let square: Vec<(f64, f64)> = (0..=48)
            .map(|k| {
                let n = n0 + (n_max - n0) * k as f64 / 48.0;
                (n, c0 * (n / n0).powi(2))
            })
            .collect();
        p.line(&square, Style::dotted(c).opacity(0.7));
        p.line(&proj, Style::dashed(c));
        p.line(&cpu, Style::solid(c).width(2.0));
        p.marks(&cpu, Style::solid(c), Mark::Circle, 6.0);
        let growth = t
            .growth_exponent
            .filter(|b| b.is_finite())
            .map_or(String::new(), |b| format!(": CPU ∝ n^{b:.2}"));
        p.legend(
            Style::solid(c).width(2.0),
            Some(Mark::Circle),
            &format!("{label}{growth}"),
        );
        if let Some(k) = t.knee_n {
            if let Some(&(n, v)) = cpu.iter().find(|p| p.0 == k as f64) {
                p.marks(&[(n, v)], Style::solid(c).width(2.0), Mark::Ring, 16.0);
                p.text(n, v, &format!("  knee n={k}"), "start", c);
            }
        }
    }
    p.legend(
        Style::solid(GREY).width(2.0),
        Some(Mark::Circle),
        "CPU per pass",
    );
    p.legend(Style::dashed(GREY), None, "Projected (∝ n)");
    p.legend(Style::dotted(GREY), None, "∝ n²");
    if tables.iter().any(|(_, t)| t.knee_n.is_some()) {
        p.legend_mark(Style::solid(INK).width(2.0), Mark::Ring, "knee");
    }
    Ok(p.render())
}

/// Results of `name` in each run that has any, as (run name, results).
fn results_of<'a>(
    runs: &'a [(RunLabel, Run)],
    name: &str,
) -> Vec<(String, Vec<&'a BenchResult>)> {
    runs.iter()
        .map(|(l, r)| {
            (
                run_name(l),
                r.results
                    .iter()
                    .filter(|x| x.name == name && x.measured.is_some())
                    .collect::<Vec<_>>(),
            )
        })
        .filter(|(_, v)| !v.is_empty())
        .collect()
}

/// Groups results by their parameters other than `swept`, in order of appearance.
fn series_by<'a>(
    results: &[&'a BenchResult],
    swept: &str,
) -> Vec<(BTreeMap<String, String>, Vec<&'a BenchResult>)> {
    let mut out: Vec<(BTreeMap<String, String>, Vec<&BenchResult>)> = Vec::new();
    for r in results {
        let mut f = r.params.clone();
        f.remove(swept);
        match out.iter_mut().find(|(k, _)| *k == f) {
            Some((_, v)) => v.push(r),
            None => out.push((f, vec![r])),
        }
    }
    out
}

fn param_f64(r: &BenchResult, p: &str) -> Option<f64> {
    r.params.get(p)?.parse().ok()
}

/// The 1999 figure (Manea, figures 1–2): file.read throughput (MB/s, 10⁶ bytes per
/// second) against the buffer size on log axes, one line per method, warm solid and
/// cold dashed; one panel per run, all on one scale.
pub fn file_read(runs: &[(RunLabel, Run)]) -> Result<Svg, UsageError> {
    let per_run = results_of(runs, "file.read");
    if per_run.is_empty() {
        return Err(UsageError::new(
            "the file-read figure needs file.read results: run \
             `syscost run file.read -p size=8,64,512,4k,64k`",
        ));
    }
    let mbs = |r: &BenchResult, ns: f64| param_f64(r, "size").map(|s| s / ns * 1e3);
    let all = per_run.iter().flat_map(|(_, v)| v.iter());
    let xs: Vec<f64> = all.clone().filter_map(|r| param_f64(r, "size")).collect();
    let ys: Vec<f64> = all
        .flat_map(|r| {
            let m = r.measured.as_ref().expect("measured");
            [m.median_ns, m.ci_low_ns, m.ci_high_ns]
                .map(|ns| mbs(r, ns).unwrap_or(f64::NAN))
        })
        .collect();
    let x = Axis::padded(
        "buffer size (bytes per call)",
        Scale::Log,
        Units::Bytes,
        xs,
        PAD,
    );
    let y = Axis::fit("throughput, MB/s", Scale::Log, Units::Number, ys);
    let methods = ["read", "pread", "buffered", "stdio", "mmap"];
    let panels: Vec<Svg> = per_run
        .iter()
        .map(|(run, rs)| {
            let title = if per_run.len() > 1 {
                format!("Reading a file by method (manea1999 figures 1–2) — {run}")
            } else {
                "Reading a file by method (manea1999 figures 1–2)".to_string()
            };
            let mut p = Plot::new(&title, x.clone(), y.clone());
            p.note("throughput = bytes per call / median time per call; warm cache solid, cold dashed; bars: 95% CI");
            let series = series_by(rs, "size");
            let fixed: Vec<&BTreeMap<String, String>> = series.iter().map(|s| &s.0).collect();
            let mut keys = distinguishing(&fixed);
            keys.retain(|k| k != "method" && k != "cache");
            for (f, rs) in &series {
                let method = f.get("method").map_or("", String::as_str);
                let cold = f.get("cache").is_some_and(|c| c == "cold");
                let ci = methods.iter().position(|m| *m == method).unwrap_or(5);
                let c = color(ci);
                let style = if cold { Style::dashed(c) } else { Style::solid(c) };
                let mut pts: Vec<Point> = rs
                    .iter()
                    .filter_map(|r| {
                        let m = r.measured.as_ref()?;
                        Some((
                            param_f64(r, "size")?,
                            mbs(r, m.median_ns)?,
                            mbs(r, m.ci_high_ns)?,
                            mbs(r, m.ci_low_ns)?,
                        ))
                    })
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                let line: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
                let bars: Vec<(f64, f64, f64)> = pts.iter().map(|p| (p.0, p.2, p.3)).collect();
                p.error_bars_y(&bars, Style::solid(c).width(1.0));
                p.line(&line, style);
                let mark = if cold { Mark::Square } else { Mark::Circle };
                p.marks(&line, Style::solid(c), mark, 6.0);
                let mut label = format!("{method} {}", if cold { "cold" } else { "warm" });
                for k in &keys {
                    if let Some(v) = f.get(k) {
                        label += &format!(" {k}={v}");
                    }
                }
                p.legend(style, Some(mark), &label);
            }
            p.render()
        })
        .collect();
    Ok(one_or_stack(
        "file.read throughput against buffer size",
        panels,
    ))
}

pub(super) fn one_or_stack(title: &str, mut panels: Vec<Svg>) -> Svg {
    if panels.len() == 1 {
        panels.remove(0)
    } else {
        Svg::stack(title, &panels)
    }
}

/// MB/s (10⁶ bytes per second) from bytes per ns.
fn rate(bytes_per_ns: f64) -> String {
    let mb = bytes_per_ns * 1e3;
    if mb >= 1e3 {
        format!("{:.2} GB/s", mb / 1e3)
    } else {
        format!("{mb:.1} MB/s")
    }
}

/// Nagy's mailbox echo (VAX/VMS Table III): ipc.rtt round trip against message size,
/// one line per transport, each with the fitted line `overhead + size / bandwidth`
/// (overhead the intercept, bandwidth 1/slope); one panel per run on one scale.
pub fn mailbox(runs: &[(RunLabel, Run)]) -> Result<Svg, UsageError> {
    let per_run = results_of(runs, "ipc.rtt");
    if per_run
        .iter()
        .all(|(_, v)| series_by(v, "size").iter().all(|(_, s)| s.len() < 2))
    {
        return Err(UsageError::new(
            "the mailbox echo needs ipc.rtt at two message sizes or more: run \
             `syscost run ipc.rtt -p transport=pipe,unix_stream -p size=4,512,4096,10240`",
        ));
    }
    let all = per_run.iter().flat_map(|(_, v)| v.iter());
    let xs: Vec<f64> = all.clone().filter_map(|r| param_f64(r, "size")).collect();
    let ys: Vec<f64> = all
        .flat_map(|r| {
            let m = r.measured.as_ref().expect("measured");
            [m.median_ns, m.ci_low_ns.max(0.0), m.ci_high_ns]
        })
        .collect();
    let x = Axis::padded(
        "message size",
        Scale::Linear,
        Units::Bytes,
        xs.into_iter().chain([0.0]),
        PAD,
    );
    let y = Axis::fit(
        "round trip",
        Scale::Linear,
        Units::Ns,
        ys.into_iter().chain([0.0]),
    );
    let panels = per_run
        .iter()
        .map(|(run, rs)| {
            let title = if per_run.len() > 1 {
                format!("Mailbox echo: round trip against message size — {run}")
            } else {
                "Mailbox echo: round trip against message size (Nagy, VAX/VMS Table III)".into()
            };
            let mut p = Plot::new(&title, x.clone(), y.clone());
            p.note(
                "fitted line: round trip = overhead + size / bandwidth (bandwidth = 1/slope, \
                 message bytes per second of round trip; both directions move 2× that)",
            );
            let series = series_by(rs, "size");
            let fixed: Vec<&BTreeMap<String, String>> = series.iter().map(|s| &s.0).collect();
            let keys = distinguishing(&fixed);
            for (i, (f, rs)) in series.iter().enumerate() {
                let c = color(i);
                let mut pts: Vec<Point> = rs
                    .iter()
                    .filter_map(|r| {
                        let m = r.measured.as_ref()?;
                        Some((param_f64(r, "size")?, m.median_ns, m.ci_low_ns, m.ci_high_ns))
                    })
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                let (sx, sy): (Vec<f64>, Vec<f64>) = pts.iter().map(|p| (p.0, p.1)).unzip();
                let others: Vec<String> = keys.iter().filter(|k| *k != "transport").cloned().collect();
                let transport = f.get("transport").cloned().unwrap_or_default();
                let label = if others.is_empty() {
                    transport
                } else {
                    format!("{transport} {}", label_of(None, f, &others))
                };
                let med: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
                let bars: Vec<(f64, f64, f64)> = pts.iter().map(|p| (p.0, p.2, p.3)).collect();
                p.error_bars_y(&bars, Style::solid(c).width(1.0));
                p.marks(&med, Style::solid(c), Mark::Circle, 6.0);
                let text = match linear_fit(&sx, &sy) {
                    Some(fit) => {
                        p.line(&fit_curve(&x, fit.intercept, fit.slope), Style::dashed(c));
                        let bw = if fit.slope > 0.0 {
                            rate(1.0 / fit.slope)
                        } else {
                            "not measurable (slope ≤ 0)".into()
                        };
                        format!(
                            "{label}: overhead {}, bandwidth {bw}, r² {:.2}",
                            fmt_ns(fit.intercept),
                            fit.r2
                        )
                    }
                    None => format!("{label}: one size, no line"),
                };
                p.legend(Style::dashed(c), Some(Mark::Circle), &text);
            }
            p.render()
        })
        .collect();
    Ok(one_or_stack(
        "ipc.rtt round trip against message size",
        panels,
    ))
}
