use super::*;
use crate::compare::{compare, RunLabel};
use crate::harness::analyze::RoundFigure;
use crate::host::HostFacts;
use crate::results::{Canary, Fact, HarnessInfo, Samples};

/// Hand-built runs for the graph and HTML tests.
pub(crate) mod fixture {
    use super::*;

    /// A measured result: `rounds` rounds, `per_round` samples each around `median`
    /// (a deterministic wobble), every 17th an outlier at 3×, every 23rd perturbed.
    pub(crate) fn result(
        name: &str,
        params: &[(&str, &str)],
        median: f64,
        per_round: usize,
    ) -> BenchResult {
        let mut m = crate::results::tests::measured_with_median(median);
        m.ci_low_ns = median * 0.98;
        m.ci_high_ns = median * 1.02;
        let rounds = 3u32;
        m.rounds = (0..rounds)
            .map(|r| RoundFigure {
                round: r,
                start_ns: 1e9 * r as f64 + 5e6,
                median_ns: Some(median * (1.0 + 0.01 * r as f64)),
                clean: per_round,
                total: per_round,
            })
            .collect();
        m.canary = Some(Canary {
            before_ns: 80.0,
            after_ns: 95.0,
            change: 0.18,
            changed: true,
            rounds_ns: vec![80.0, 81.0, 95.0],
        });
        if per_round > 0 {
            let mut s = Samples {
                per_op_ns: vec![],
                at_ns: vec![],
                round: vec![],
                flags: vec![],
                invol_switches: vec![],
                vol_switches: vec![],
                faults: vec![],
            };
            for r in 0..rounds {
                for i in 0..per_round {
                    let k = s.per_op_ns.len();
                    let wobble = ((k * 7919) % 101) as f64 / 100.0 - 0.5;
                    let (v, f) = if k % 17 == 16 {
                        (median * 3.0, 1u8)
                    } else if k % 23 == 22 {
                        (median * 1.15, 4u8)
                    } else {
                        (median * (1.0 + 0.05 * wobble), 0u8)
                    };
                    s.per_op_ns.push(v);
                    s.at_ns.push(m.rounds[r as usize].start_ns + 1e4 * i as f64);
                    s.round.push(r);
                    s.flags.push(f);
                    s.invol_switches.push(0);
                    s.vol_switches.push(0);
                    s.faults.push(0);
                }
            }
            m.samples = Some(s);
        }
        let mut r = crate::results::tests::run_with_medians(&[(name, median)])
            .results
            .remove(0);
        r.params = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        r.measured = Some(m);
        r
    }

    /// A ring result with the accounting facts the ring table reads.
    pub(crate) fn ring_result(n: u64, per_hop: f64) -> BenchResult {
        let ns = n.to_string();
        let mut r = result("ctx.ring", &[("n", &ns), ("kind", "process")], per_hop, 20);
        let cpu = n as f64 * per_hop / 1e3;
        r.facts = vec![
            Fact::new("cpu_us_per_pass", cpu, "us", "cpu"),
            Fact::new("real_us_per_pass", cpu, "us", "real"),
            Fact::new("user_us_per_pass", cpu / 2.0, "us", "user"),
            Fact::new("sys_us_per_pass", cpu / 2.0, "us", "sys"),
        ];
        r
    }

    /// A run holding `results`, with its sweeps and ring tables derived as a real run's.
    pub(crate) fn run(results: Vec<BenchResult>) -> Run {
        let mut run = crate::results::tests::run_with_medians(&[]);
        run.version = "0.1.0".into();
        run.command_line = ["syscost", "run", "--profile", "smoke"]
            .map(String::from)
            .to_vec();
        run.started_unix_s = 1_700_000_000.0;
        run.host = HostFacts {
            hostname: Some("vm".into()),
            cpu_model: Some("Test CPU <fast> & cheap".into()),
            kernel: Some("6.1.0-test".into()),
            ..HostFacts::default()
        };
        run.harness = HarnessInfo {
            profile: "smoke".into(),
            ci_target: 0.05,
            ..HarnessInfo::default()
        };
        run.sweeps = crate::derived::sweep::fits(&results);
        run.rings = crate::derived::ring::tables(&results);
        run.scaling = crate::derived::scaling::tables(&results);
        run.results = results;
        run
    }

    /// A run with data for every graph.
    pub(crate) fn full(scale: f64) -> Run {
        let mut rs = vec![result("syscall.getpid", &[], 100.0 * scale, 50)];
        for a in [0, 2, 4, 6] {
            let v = (80.0 + 2.0 * a as f64) * scale;
            rs.push(result("syscall.args", &[("args", &a.to_string())], v, 10));
        }
        for (n, h) in [(2, 2000.0), (4, 2100.0), (8, 2200.0), (16, 4000.0)] {
            rs.push(ring_result(n, h * scale));
        }
        for method in ["read", "mmap"] {
            for cache in ["warm", "cold"] {
                for size in [8u64, 512, 4096, 65536] {
                    let per_byte = if cache == "cold" { 1.0 } else { 0.1 };
                    let t = (300.0 + per_byte * size as f64) * scale;
                    let p = [
                        ("method", method),
                        ("cache", cache),
                        ("size", &size.to_string()),
                    ];
                    rs.push(result("file.read", &p, t, 0));
                }
            }
        }
        for transport in ["pipe", "shm_futex"] {
            for size in [4u64, 512, 4096, 10240] {
                let t = (5000.0 + 0.4 * size as f64) * scale;
                let p = [("transport", transport), ("size", &size.to_string())];
                rs.push(result("ipc.rtt", &p, t, 0));
            }
        }
        run(rs)
    }

    /// Two labelled runs and their comparison.
    pub(crate) fn pair() -> (Vec<(RunLabel, Run)>, Comparison) {
        let (a, b) = (full(1.0), full(1.1));
        let la = RunLabel::of("before.json", None, &a);
        let lb = RunLabel::of("after.json", Some(7), &b);
        let c = compare((&la, &a), (&lb, &b), 0.05);
        (vec![(la, a), (lb, b)], c)
    }
}

fn labelled(run: Run) -> Vec<(RunLabel, Run)> {
    vec![(RunLabel::of("r.json", None, &run), run)]
}

/// Every number in an SVG is finite.
fn assert_clean(svg: &str) {
    assert!(!svg.contains("NaN"), "NaN in {svg}");
    assert!(!svg.contains("inf"), "inf in {svg}");
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
}

#[test]
fn samples_graph_shows_outliers_rounds_and_the_canary() {
    let r = fixture::result("syscall.getpid", &[], 100.0, 60);
    let s = samples(&r, "r.json", MAX_POINTS).unwrap().to_string();
    assert_clean(&s);
    for want in [
        "clean sample",
        "outlier",
        "perturbed",
        "round median",
        "canary",
        "r2",
        "all 180 samples drawn",
    ] {
        assert!(s.contains(want), "missing {want}");
    }
    // Outliers at 3× lie beyond the scale and are drawn at its edge.
    assert!(s.contains("beyond the scale"));
}

#[test]
fn the_canary_shares_the_samples_axis_when_it_fits_and_a_run_is_named_once() {
    // Readings of 80 to 95 ns beside samples around 100 ns: one axis, in ns.
    let r = fixture::result("syscall.getpid", &[], 100.0, 60);
    let s = samples(&r, "r.json", MAX_POINTS).unwrap().to_string();
    assert!(
        !s.contains("right axis") && !s.contains("its own scale"),
        "{s}"
    );
    // Readings far off the samples' range: a right axis, said to be a scale of its own.
    let mut far = fixture::result("syscall.getpid", &[], 10_000.0, 60);
    far.measured
        .as_mut()
        .unwrap()
        .canary
        .as_mut()
        .unwrap()
        .rounds_ns = vec![80.0, 95.0];
    let s = samples(&far, "r.json", MAX_POINTS).unwrap().to_string();
    assert!(s.contains("its own scale"), "{s}");
    // A reference that carries its id already is not given it again.
    let run = fixture::run(vec![]);
    for (reference, want) in [("last (#4)", "last (#4)"), ("#4", "#4"), ("4", "4")] {
        let l = RunLabel::of(reference, Some(4), &run);
        assert_eq!(run_name(&l), want);
    }
    assert_eq!(run_name(&RunLabel::of("last", Some(4), &run)), "last (#4)");
}

#[test]
fn long_series_are_thinned_but_outliers_kept() {
    let r = fixture::result("syscall.getpid", &[], 100.0, 2000);
    let s = samples(&r, "r", 500).unwrap().to_string();
    assert!(s.contains("of 6000 samples drawn"), "{s}");
    let flags = &r.measured.as_ref().unwrap().samples.as_ref().unwrap().flags;
    let (keep, step) = thin(flags, 500);
    assert!(keep.len() <= 500 && step > 1);
    let outliers = flags.iter().filter(|f| **f != 0).count();
    let kept = keep.iter().filter(|&&i| flags[i] != 0).count();
    assert!(
        outliers > 250 && kept <= 250 && kept > 150,
        "{kept} of {outliers}"
    );
}

#[test]
fn ordinals_read_as_words() {
    let o: Vec<String> = [2, 3, 4, 11, 12, 21, 22, 113].map(ordinal).to_vec();
    assert_eq!(
        o,
        ["2nd", "3rd", "4th", "11th", "12th", "21st", "22nd", "113th"]
    );
}

#[test]
fn without_samples_the_round_medians_are_drawn() {
    let r = fixture::result("syscall.getpid", &[], 100.0, 0);
    let s = samples(&r, "r", MAX_POINTS).unwrap().to_string();
    assert_clean(&s);
    assert!(s.contains("only the round medians"));
    let d = distribution(&r, "r").unwrap().to_string();
    assert_clean(&d);
    assert!(d.contains("each round&#39;s median"));
}

#[test]
fn distribution_marks_median_and_ci() {
    let r = fixture::result("syscall.getpid", &[], 100.0, 60);
    let d = distribution(&r, "r").unwrap().to_string();
    assert_clean(&d);
    assert!(d.contains("95% CI of the headline") && d.contains("headline median"));
    assert!(d.contains("clean samples of 180"));
}

#[test]
fn sweep_graph_prints_the_fitted_equation() {
    let runs = labelled(fixture::full(1.0));
    let all = sweeps(&runs, None).unwrap();
    assert!(all.len() >= 3);
    let s = sweeps(&runs, Some("syscall.args")).unwrap();
    assert_eq!(s.len(), 1);
    let text = s[0].to_string();
    assert_clean(&text);
    assert!(
        text.contains("t = 80.0 ns + 2.00 ns × args, r² 1.00"),
        "{text}"
    );
    assert!(sweeps(&runs, Some("nothing.here")).is_err());
    assert_eq!(
        equation(10.0, -0.5, "n", false, None),
        "t = 10.0 ns − 0.50 ns × n"
    );
}

#[test]
fn ring_graph_overlays_runs_and_marks_the_knee() {
    let (runs, _) = fixture::pair();
    let s = ring(&runs).unwrap().to_string();
    assert_clean(&s);
    for want in [
        "Projected",
        "n²",
        "knee n=16",
        "before.json",
        "after.json (#7)",
        "NCAR",
    ] {
        assert!(s.contains(want), "missing {want}");
    }
}

#[test]
fn file_read_figure_has_one_line_per_method_and_cache() {
    let s = file_read(&labelled(fixture::full(1.0)))
        .unwrap()
        .to_string();
    assert_clean(&s);
    for want in [
        "read warm",
        "read cold",
        "mmap warm",
        "mmap cold",
        "MB/s",
        "64 KiB",
    ] {
        assert!(s.contains(want), "missing {want}");
    }
}

#[test]
fn mailbox_fit_gives_overhead_and_bandwidth() {
    let s = mailbox(&labelled(fixture::full(1.0))).unwrap().to_string();
    assert_clean(&s);
    // 5 µs + 0.4 ns per byte: 2.5 bytes per ns = 2.50 GB/s.
    assert!(
        s.contains("pipe: overhead 5.00 µs, bandwidth 2.50 GB/s"),
        "{s}"
    );
    assert!(s.contains("shm_futex"));
}

#[test]
fn forest_plot_has_a_row_per_benchmark() {
    let (_, c) = fixture::pair();
    let s = forest(&c).unwrap().to_string();
    assert_clean(&s);
    assert!(s.contains("syscall.args args=6") && s.contains("slower"));
    assert!(s.contains("noise threshold"));
}

/// The `width="…"` an SVG opens with, in px.
fn svg_width(svg: &str) -> f64 {
    let rest = &svg[svg.find("width=\"").expect("a width") + 7..];
    rest[..rest.find('"').unwrap()].parse().unwrap()
}

#[test]
fn forest_plot_labels_are_whole_and_the_graph_widens_for_them() {
    let (_, mut c) = fixture::pair();
    let narrow = svg_width(&forest(&c).unwrap().to_string());
    assert_eq!(narrow, FOREST_WIDTH);
    let long = [
        ("fpu", "clean"),
        ("kind", "process"),
        ("mechanism", "eventfd"),
        ("placement", "cross-cpu"),
        ("hugepage_fallback", "split-and-retry-with-small-pages"),
    ];
    c.rows[0].params = long
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let label = key_of(&c.rows[0].name, &c.rows[0].params);
    assert!(label.chars().count() > 100, "{label}");
    let s = forest(&c).unwrap().to_string();
    assert_clean(&s);
    assert!(s.contains(&label), "{label} cut in {s}");
    assert!(!s.contains('…'), "a label cut in {s}");
    // The graph widens by what the label takes past 60 characters.
    let extra = crate::draw::svg::text_width(&label) - 60.0 * 6.0;
    assert!(
        (svg_width(&s) - (FOREST_WIDTH + extra)).abs() < 1.0,
        "{}",
        svg_width(&s)
    );
}

#[test]
fn missing_data_gives_a_clear_error() {
    let runs = labelled(fixture::run(vec![fixture::result(
        "syscall.getpid",
        &[],
        1.0,
        5,
    )]));
    let msg = |g| plot(g, &runs, None, None).unwrap_err().to_string();
    assert!(msg(Graph::Ring).contains("syscost run ctx.ring -p n=2,4,8,16"));
    assert!(msg(Graph::FileRead).contains("file.read"));
    assert!(msg(Graph::Mailbox).contains("ipc.rtt"));
    assert!(msg(Graph::Sweep).contains("-p args="));
    assert!(msg(Graph::Forest).contains("comparison"));
    let many = labelled(fixture::full(1.0));
    let e = plot(Graph::Samples, &many, None, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("--bench"), "{e}");
    let e = plot(Graph::Samples, &many, None, Some("no.such"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no.such"), "{e}");
}

#[test]
fn plot_draws_every_graph_deterministically() {
    let (runs, c) = fixture::pair();
    for g in [
        Graph::Samples,
        Graph::Distribution,
        Graph::Sweep,
        Graph::Ring,
        Graph::FileRead,
        Graph::Mailbox,
        Graph::Forest,
    ] {
        let bench =
            matches!(g, Graph::Samples | Graph::Distribution).then_some("syscall.getpid");
        let a = plot(g, &runs, Some(&c), bench).unwrap();
        let b = plot(g, &runs, Some(&c), bench).unwrap();
        assert_eq!(a, b, "{g:?}");
        assert_clean(&a);
        assert!(a.contains("xmlns=\"http://www.w3.org/2000/svg\""));
    }
}

/// A copies sweep of four points (the last oversubscribed): the scaling graph draws
/// throughput with the linear line and the fitted law, then efficiency.
#[test]
fn scaling_graph_draws_throughput_efficiency_and_the_fit() {
    use crate::bench::copies::{Copies, CopiesAs};
    use crate::results::CopiesFigures;
    let rs: Vec<BenchResult> = [
        (1, 100.0, false),
        (2, 105.0, false),
        (4, 125.0, false),
        (8, 300.0, true),
    ]
    .iter()
    .map(|&(n, ns, over)| {
        let mut r = fixture::result(
            "syscall.getppid",
            &[("copies", &n.to_string()), ("copies_as", "thread")],
            ns,
            0,
        );
        let copy_ns = vec![ns; n];
        let rates: Vec<f64> = copy_ns.iter().map(|x| 1e9 / x).collect();
        let copies = Copies {
            n,
            mode: CopiesAs::Thread,
        };
        r.measured.as_mut().unwrap().copies = Some(CopiesFigures::new(
            copies,
            copy_ns,
            &rates,
            ((0..n).map(|i| i % 4).collect(), over),
            4,
        ));
        r
    })
    .collect();
    let run = fixture::run(rs);
    assert_eq!(run.scaling.len(), 1);
    assert!(run.scaling[0].fit.is_some(), "{:?}", run.scaling[0]);
    let runs = vec![(RunLabel::of("a.json", None, &run), run)];
    let svg = scaling(&runs, None).unwrap().to_string();
    for want in ["Throughput of N copies", "Efficiency", "σ ", "linear"] {
        assert!(svg.contains(want), "{want}");
    }
    let empty = fixture::run(vec![]);
    let none = vec![(RunLabel::of("b.json", None, &empty), empty)];
    let e = scaling(&none, None).unwrap_err().to_string();
    assert!(e.contains("copies=1,2,4"), "{e}");
}
