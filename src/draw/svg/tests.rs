use super::render::{clip, marks};
use super::*;

fn labels(a: &Axis) -> Vec<&str> {
    a.ticks().iter().map(|(_, s)| s.as_str()).collect()
}

#[test]
fn nice_steps_are_one_two_five() {
    assert_eq!(nice_step(0.13), 0.2);
    assert_eq!(nice_step(3.0), 5.0);
    assert_eq!(nice_step(21.0), 25.0);
    assert_eq!(nice_step(70.0), 100.0);
    assert_eq!(nice_step(1.0), 1.0);
}

#[test]
fn linear_ticks_cover_the_data_with_one_unit() {
    let a = Axis::fit("t", Scale::Linear, Units::Ns, [81.3, 102.7]);
    assert_eq!(a.domain(), (80.0, 105.0));
    assert_eq!(
        labels(&a),
        ["80 ns", "85 ns", "90 ns", "95 ns", "100 ns", "105 ns"]
    );
    let b = Axis::fit("t", Scale::Linear, Units::Ns, [0.0, 2600.0]);
    assert_eq!(
        labels(&b),
        ["0.0 µs", "0.5 µs", "1.0 µs", "1.5 µs", "2.0 µs", "2.5 µs", "3.0 µs"]
    );
    let c = Axis::fit("x", Scale::Linear, Units::Number, [0.1, 0.3]);
    assert!(labels(&c).contains(&"0.20"), "{:?}", labels(&c));
}

#[test]
fn log_ticks_are_decades_or_one_two_five() {
    let a = Axis::fit("t", Scale::Log, Units::Ns, [3.0, 2.0e6]);
    assert_eq!(a.domain(), (1.0, 1e7));
    assert_eq!(
        labels(&a),
        ["1 ns", "10 ns", "100 ns", "1 µs", "10 µs", "100 µs", "1 ms", "10 ms"]
    );
    let b = Axis::fit("r", Scale::Log, Units::Number, [3.0, 70.0]);
    assert_eq!(labels(&b), ["2", "5", "10", "20", "50", "100"]);
    let c = Axis::fit("r", Scale::Log, Units::Ratio, [0.93, 1.08]);
    assert!(c.ticks().iter().all(|(t, _)| *t > 0.0));
    assert!(c.ticks().iter().any(|(t, _)| *t == 1.0), "{:?}", labels(&c));
    // Many decades: every other one.
    let d = Axis::fit("n", Scale::Log, Units::Number, [1e-3, 1e12]);
    assert!(d.ticks().len() <= 10);
    let f = d.frac(1.0).unwrap();
    assert!(f > 0.0 && f < 1.0);
    assert_eq!(d.frac(0.0), None);
    assert_eq!(d.frac(-1.0), None);
}

#[test]
fn byte_ticks_are_powers_of_two() {
    let a = Axis::fit("size", Scale::Log, Units::Bytes, [8.0, 65536.0]);
    assert_eq!(a.domain(), (8.0, 65536.0));
    let l = labels(&a);
    assert!(l.contains(&"16 B") && l.contains(&"64 KiB"), "{l:?}");
    assert!(l.len() <= 10);
    let b = Axis::fit("size", Scale::Linear, Units::Bytes, [0.0, 65536.0]);
    assert!(labels(&b).contains(&"16 KiB"), "{:?}", labels(&b));
}

#[test]
fn padded_axes_keep_marks_off_the_frame() {
    let a = Axis::padded("args", Scale::Linear, Units::Number, [0.0, 6.0], 0.04);
    let (lo, hi) = a.domain();
    assert!(lo < 0.0 && hi > 6.0);
    assert!(a.ticks().iter().all(|(t, _)| *t >= lo && *t <= hi));
    assert_eq!(a.ticks().first().map(|t| t.0), Some(0.0));
    let b = Axis::padded("size", Scale::Log, Units::Bytes, [8.0, 65536.0], 0.04);
    assert!(b.domain().0 < 8.0 && b.domain().1 > 65536.0);
}

#[test]
fn degenerate_ranges_still_have_ticks() {
    for scale in [Scale::Linear, Scale::Log] {
        for vals in [vec![], vec![5.0], vec![f64::NAN, f64::INFINITY]] {
            let a = Axis::fit("t", scale, Units::Ns, vals.clone());
            let (lo, hi) = a.domain();
            assert!(lo < hi && lo.is_finite() && hi.is_finite(), "{vals:?}");
            assert!(a.ticks().len() >= 2);
        }
    }
}

#[test]
fn long_notes_wrap_at_spaces() {
    assert_eq!(wrap("aa bb cc", 5), ["aa bb", "cc"]);
    assert_eq!(wrap("averyverylongword x", 5), ["averyverylongword", "x"]);
    assert_eq!(wrap("", 5), [""]);
}

#[test]
fn text_is_escaped() {
    assert_eq!(
        escape(r#"<a href="x">&'</a>"#),
        "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;"
    );
    let mut p = Plot::new(
        "a < b & c",
        Axis::fit("x", Scale::Linear, Units::Number, [0.0, 1.0]),
        Axis::fit("y", Scale::Linear, Units::Number, [0.0, 1.0]),
    );
    p.legend(Style::solid(color(0)), None, "<script>");
    let s = p.render().to_string();
    assert!(s.contains("a &lt; b &amp; c"));
    assert!(!s.contains("<script>"));
}

fn sample_plot() -> Plot {
    let x = Axis::fit("x", Scale::Log, Units::Bytes, [8.0, 4096.0]);
    let y = Axis::fit("y", Scale::Linear, Units::Ns, [0.0, 300.0]);
    let mut p = Plot::new("demo", x, y);
    p.note("a note");
    let pts = [(8.0, 100.0), (64.0, 150.0), (512.0, 200.0), (4096.0, 250.0)];
    p.line(&pts, Style::solid(color(0)));
    p.marks(&pts, Style::solid(color(0)), Mark::Circle, 6.0);
    p.error_bars_y(&[(64.0, 140.0, 160.0)], Style::solid(color(0)));
    p.hrule(120.0, Style::dashed(color(1)), Side::Left);
    p.band_x(10.0, 20.0, "#ccc", 0.4);
    p.legend(Style::solid(color(0)), Some(Mark::Circle), "series");
    p
}

#[test]
fn rendering_is_deterministic_and_finite() {
    let a = sample_plot().render().to_string();
    let b = sample_plot().render().to_string();
    assert_eq!(a, b);
    assert!(a.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(!a.contains("NaN") && !a.contains("inf"));
    assert!(a.contains("stroke-dasharray"));
    assert!(!sample_plot().render().inline().contains("xmlns"));
}

#[test]
fn lines_are_clipped_to_the_plot_area() {
    let b = (0.0, 0.0, 10.0, 10.0);
    assert_eq!(
        clip((-5.0, 5.0), (5.0, 5.0), b),
        Some(((0.0, 5.0), (5.0, 5.0)))
    );
    assert_eq!(clip((-5.0, -5.0), (-1.0, 20.0), b), None);
    let x = Axis::fit("x", Scale::Linear, Units::Number, [0.0, 10.0]);
    let y = Axis::fit("y", Scale::Linear, Units::Number, [0.0, 10.0]);
    let mut p = Plot::new("clip", x, y);
    p.line(&[(0.0, 0.0), (10.0, 1e9)], Style::solid("#000"));
    let s = p.render().to_string();
    assert!(!s.contains("e+") && !s.contains("000000"), "{s}");
}

#[test]
fn dots_are_relative_moves() {
    let mut out = String::new();
    marks(
        &mut out,
        &[(10.2, 20.0), (13.0, 18.0), (15.0, 25.0)],
        &Style::solid("#000"),
        Mark::Dot,
        3.0,
    );
    assert!(out.contains(r#"d="M10 20h0m3-2h0m2 7h0""#), "{out}");
}

#[test]
fn stacked_graphs_add_their_heights() {
    let a = sample_plot().render();
    let s = Svg::stack("both", &[a.clone(), a.clone()]);
    assert_eq!(s.height, 2.0 * a.height);
    assert_eq!(s.to_string().matches("<svg").count(), 3);
}
