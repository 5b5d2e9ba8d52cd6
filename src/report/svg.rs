//! A small SVG drawing layer for the report's graphs: a plot area with linear or log10
//! axes, nice ticks with unit-bearing labels, lines, marks, error bars, reference
//! lines, bands, a legend, a title and notes.
//!
//! Pure functions: a [`Plot`] is data, [`Plot::render`] turns it into an [`Svg`], and the
//! same plot always gives the same bytes (coordinates are printed with one decimal, no
//! map iteration order, no clock). It knows nothing of benchmarks; `graphs` does. Lines
//! are clipped to the plot area here (Liang–Barsky), so no element needs an `id`, and
//! several graphs can sit in one HTML page without their clip paths colliding.

use crate::results::unit_for;
use std::fmt::{self, Write};

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Equal distances for equal differences.
    Linear,
    /// Equal distances for equal ratios; values ≤ 0 are not drawn.
    Log,
}

/// What an axis's values are, which decides how its ticks are chosen and labelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Units {
    /// Nanoseconds, labelled in ns, µs, ms or s.
    Ns,
    /// A plain number.
    Number,
    /// Bytes, labelled B, KiB, MiB; ticks at powers of two.
    Bytes,
    /// A ratio, labelled `1.05×`.
    Ratio,
}

/// An axis: its title, scale, domain and ticks.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    title: String,
    scale: Scale,
    units: Units,
    lo: f64,
    hi: f64,
    ticks: Vec<(f64, String)>,
}

impl Axis {
    /// An axis whose domain covers `values` (non-finite values, and values ≤ 0 on a log
    /// axis, are ignored), widened to nice tick values.
    pub fn fit<I: IntoIterator<Item = f64>>(
        title: &str,
        scale: Scale,
        units: Units,
        values: I,
    ) -> Axis {
        Axis::build(title, scale, units, values, 0.0)
    }

    /// Like [`Axis::fit`], but the domain is the data's range with a margin of `pad`
    /// (a fraction of the range, on the axis's scale) on each side, ticks inside it: marks
    /// at the ends of the data stay clear of the frame.
    pub fn padded<I: IntoIterator<Item = f64>>(
        title: &str,
        scale: Scale,
        units: Units,
        values: I,
        pad: f64,
    ) -> Axis {
        Axis::build(title, scale, units, values, pad)
    }

    fn build<I: IntoIterator<Item = f64>>(
        title: &str,
        scale: Scale,
        units: Units,
        values: I,
        pad: f64,
    ) -> Axis {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values {
            if v.is_finite() && (scale == Scale::Linear || v > 0.0) {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
        let ticks_of = |lo: f64, hi: f64| match scale {
            Scale::Linear => linear_ticks(lo, hi, units),
            Scale::Log => log_ticks(lo, hi, units),
        };
        let (mut dom_lo, mut dom_hi, mut ticks) = ticks_of(lo, hi);
        if pad > 0.0 {
            let (a, b) = widen(lo, hi, scale);
            let (a, b) = match scale {
                Scale::Linear => (a - pad * (b - a), b + pad * (b - a)),
                Scale::Log => {
                    let (la, lb) = (a.log10(), b.log10());
                    let m = pad * (lb - la);
                    (10f64.powf(la - m), 10f64.powf(lb + m))
                }
            };
            // The data's own ticks, else the padded range's, that fall inside.
            let within = |t: &[f64]| -> Vec<f64> {
                t.iter().copied().filter(|v| *v >= a && *v <= b).collect()
            };
            let mut inside = within(&ticks);
            if inside.len() < 2 {
                inside = within(&ticks_of(a, b).2);
            }
            if inside.len() >= 2 {
                (dom_lo, dom_hi, ticks) = (a, b, inside);
            }
        }
        let (lo, hi) = (dom_lo, dom_hi);
        let ticks = ticks
            .iter()
            .map(|&t| (t, tick_label(t, &ticks, scale, units)))
            .collect();
        Axis {
            title: title.to_string(),
            scale,
            units,
            lo,
            hi,
            ticks,
        }
    }

    /// A categorical axis: `labels[i]` at position `i`, the first at the top of a
    /// vertical axis (for one row per item).
    pub fn categories(title: &str, labels: &[String]) -> Axis {
        let n = labels.len().max(1) as f64;
        Axis {
            title: title.to_string(),
            scale: Scale::Linear,
            units: Units::Number,
            lo: n - 0.5,
            hi: -0.5,
            ticks: labels
                .iter()
                .enumerate()
                .map(|(i, l)| (i as f64, l.clone()))
                .collect(),
        }
    }

    /// The domain, low and high end.
    pub fn domain(&self) -> (f64, f64) {
        (self.lo, self.hi)
    }

    /// The ticks: value and label.
    pub fn ticks(&self) -> &[(f64, String)] {
        &self.ticks
    }

    /// The scale.
    pub fn scale(&self) -> Scale {
        self.scale
    }

    /// Where `v` falls, 0 at the low end and 1 at the high end; `None` when it cannot
    /// be drawn (not finite, or ≤ 0 on a log axis).
    pub fn frac(&self, v: f64) -> Option<f64> {
        if !v.is_finite() {
            return None;
        }
        let f = match self.scale {
            Scale::Linear => (v - self.lo) / (self.hi - self.lo),
            Scale::Log if v > 0.0 => {
                (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
            }
            Scale::Log => return None,
        };
        f.is_finite().then_some(f)
    }

    /// The value at fraction `f` of the axis (the inverse of [`Axis::frac`]).
    pub fn value_at(&self, f: f64) -> f64 {
        match self.scale {
            Scale::Linear => self.lo + f * (self.hi - self.lo),
            Scale::Log => {
                10f64.powf(self.lo.log10() + f * (self.hi.log10() - self.lo.log10()))
            }
        }
    }
}

/// Heckbert's nice number: 1, 2, 2.5, 5 or 10 times a power of ten, at least `x`.
pub fn nice_step(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return 1.0;
    }
    let p = 10f64.powf(x.log10().floor());
    let f = x / p;
    let m = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .find(|&m| f <= m * (1.0 + 1e-9))
        .unwrap_or(10.0);
    m * p
}

/// Ticks for a linear axis: about six intervals of a nice step, the domain widened to
/// whole steps. An empty or one-value range is widened first.
pub fn linear_ticks(lo: f64, hi: f64, units: Units) -> (f64, f64, Vec<f64>) {
    let (lo, hi) = widen(lo, hi, Scale::Linear);
    let raw = (hi - lo) / 6.0;
    let step = if units == Units::Bytes && raw >= 1.0 {
        2f64.powf(raw.log2().ceil())
    } else {
        nice_step(raw)
    };
    let first = (lo / step + 1e-9).floor() as i64;
    let last = (hi / step - 1e-9).ceil() as i64;
    let ticks: Vec<f64> = (first..=last).map(|k| clean(k as f64 * step)).collect();
    (first as f64 * step, last as f64 * step, ticks)
}

/// Ticks for a log axis. Bytes get powers of two (every second or third power over a
/// wide range); other units get decades (every k-th over many decades), 1-2-5 steps
/// over fewer than three decades, and linear nice ticks within one decade.
pub fn log_ticks(lo: f64, hi: f64, units: Units) -> (f64, f64, Vec<f64>) {
    let (lo, hi) = widen(lo, hi, Scale::Log);
    if units == Units::Bytes {
        let (a, b) = (lo.log2().floor() as i32, hi.log2().ceil() as i32);
        // Counted down from the top, so 64 KiB with every second power gives powers of 4.
        let every = ((b - a) as f64 / 8.0).ceil().max(1.0) as i32;
        let mut ticks: Vec<f64> = (0..)
            .map(|k| b - k * every)
            .take_while(|&e| e >= a)
            .map(|e| 2f64.powi(e))
            .collect();
        ticks.reverse();
        return (2f64.powi(a), 2f64.powi(b), ticks);
    }
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    if hi / lo < 8.0 {
        // Within about a decade: ordinary steps, positioned on the log scale.
        let (l, h, t) = linear_ticks(lo, hi, units);
        if l > 0.0 {
            return (l, h, t);
        }
        let t: Vec<f64> = t.into_iter().filter(|&v| v > 0.0).collect();
        return (t[0].min(lo), h, t);
    }
    if b - a <= 2 {
        let mut ticks = Vec::new();
        for e in a..=b {
            for m in [1.0, 2.0, 5.0] {
                ticks.push(clean(m * 10f64.powi(e)));
            }
        }
        let first = ticks
            .iter()
            .rposition(|&t| t <= lo * (1.0 + 1e-9))
            .unwrap_or(0);
        let last = ticks
            .iter()
            .position(|&t| t >= hi * (1.0 - 1e-9))
            .unwrap_or(ticks.len() - 1);
        let ticks = ticks[first..=last].to_vec();
        return (ticks[0], ticks[ticks.len() - 1], ticks);
    }
    let every = ((b - a) as f64 / 8.0).ceil().max(1.0) as i32;
    let a = a - a.rem_euclid(every);
    let b = b + (every - (b - a).rem_euclid(every)) % every;
    let ticks = (a..=b)
        .step_by(every as usize)
        .map(|e| clean(10f64.powi(e)))
        .collect();
    (10f64.powi(a), 10f64.powi(b), ticks)
}

/// A range that can hold ticks: empty → a default, one value → ±5% (or ±1).
fn widen(lo: f64, hi: f64, scale: Scale) -> (f64, f64) {
    if !(lo.is_finite() && hi.is_finite()) || lo > hi {
        return match scale {
            Scale::Linear => (0.0, 1.0),
            Scale::Log => (1.0, 10.0),
        };
    }
    if hi > lo {
        return (lo, hi);
    }
    match scale {
        Scale::Log => (lo / 1.1, hi * 1.1),
        Scale::Linear if lo == 0.0 => (0.0, 1.0),
        Scale::Linear => (lo - lo.abs() * 0.05, hi + hi.abs() * 0.05),
    }
}

/// Rounds away floating-point dust (0.30000000000000004 → 0.3).
fn clean(v: f64) -> f64 {
    if v == 0.0 {
        return 0.0;
    }
    let digits = 12 - v.abs().log10().floor() as i32;
    let p = 10f64.powi(digits.clamp(-300, 300));
    (v * p).round() / p
}

/// The fewest decimals (up to 6) that print `x` exactly enough.
fn decimals_for(x: f64) -> usize {
    (0..6)
        .find(|&d| {
            let s = x * 10f64.powi(d as i32);
            (s - s.round()).abs() < 1e-6 * s.abs().max(1.0)
        })
        .unwrap_or(6)
}

/// `v` with `d` decimals.
fn fixed(v: f64, d: usize) -> String {
    let s = format!("{v:.d$}");
    if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
        s[1..].to_string()
    } else {
        s
    }
}

/// A tick's label. Linear axes print every tick with the same unit and decimals (from
/// the step); log axes print each tick with its own unit and the fewest decimals.
fn tick_label(v: f64, ticks: &[f64], scale: Scale, units: Units) -> String {
    let step = match (scale, ticks) {
        (Scale::Linear, [a, b, ..]) => Some(b - a),
        _ => None,
    };
    let biggest = ticks.iter().fold(0f64, |m, t| m.max(t.abs()));
    match units {
        Units::Ns => {
            let (size, unit) = unit_for(if step.is_some() { biggest } else { v });
            let d = step.map_or(decimals_for(v / size), |s| decimals_for(s / size));
            format!("{} {unit}", fixed(v / size, d))
        }
        Units::Number => number(v, step),
        Units::Ratio => format!("{}×", number(v, step)),
        Units::Bytes => bytes(v),
    }
}

fn number(v: f64, step: Option<f64>) -> String {
    let d = step.map_or(decimals_for(v), decimals_for);
    if v.abs() >= 1e6 && step.is_none() {
        return format!("1e{}", v.log10().round());
    }
    fixed(v, d)
}

/// Bytes in B, KiB, MiB or GiB with at most two decimals.
pub fn bytes(v: f64) -> String {
    let (size, unit) = match v.abs() {
        a if a < 1024.0 => (1.0, "B"),
        a if a < 1024.0 * 1024.0 => (1024.0, "KiB"),
        a if a < 1024.0 * 1024.0 * 1024.0 => (1024.0 * 1024.0, "MiB"),
        _ => (1024.0 * 1024.0 * 1024.0, "GiB"),
    };
    let x = v / size;
    format!("{} {unit}", fixed(x, decimals_for(x).min(2)))
}

/// Escapes text for SVG and HTML content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// A coordinate with at most one decimal: short, and the same on every machine.
fn px(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    let r = if r == 0.0 { 0.0 } else { r };
    if r.fract() == 0.0 {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

/// Colours for series, in order (colour-blind-friendly, after Okabe and Ito).
pub const PALETTE: &[&str] = &[
    "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000",
    "#999933", "#882255", "#44aa99",
];

/// The colour of series `i`.
pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// How a line or a mark is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Style {
    /// Stroke and fill colour.
    pub color: &'static str,
    /// Stroke width, px.
    pub width: f64,
    /// A dash pattern such as `"6 4"`, or none for a solid line.
    pub dash: Option<&'static str>,
    /// Opacity, 0 to 1.
    pub opacity: f64,
}

impl Style {
    /// A solid line of width 1.5.
    pub fn solid(color: &'static str) -> Style {
        Style {
            color,
            width: 1.5,
            dash: None,
            opacity: 1.0,
        }
    }

    /// A dashed line of width 1.5.
    pub fn dashed(color: &'static str) -> Style {
        Style {
            dash: Some("6 4"),
            ..Style::solid(color)
        }
    }

    /// A dotted line of width 1.5.
    pub fn dotted(color: &'static str) -> Style {
        Style {
            dash: Some("2 3"),
            ..Style::solid(color)
        }
    }

    /// This style with another width.
    pub fn width(self, width: f64) -> Style {
        Style { width, ..self }
    }

    /// This style with another opacity.
    pub fn opacity(self, opacity: f64) -> Style {
        Style { opacity, ..self }
    }

    fn stroke(&self) -> String {
        let mut s = format!(
            r#"fill="none" stroke="{}" stroke-width="{}""#,
            self.color,
            px(self.width)
        );
        if let Some(d) = self.dash {
            let _ = write!(s, r#" stroke-dasharray="{d}""#);
        }
        if self.opacity < 1.0 {
            let _ = write!(s, r#" opacity="{}""#, self.opacity);
        }
        s
    }
}

/// A mark drawn at a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// A small filled dot (cheap: one path segment per point).
    Dot,
    /// A filled circle.
    Circle,
    /// An open circle.
    Ring,
    /// A filled square.
    Square,
    /// A filled diamond.
    Diamond,
    /// An ×.
    Cross,
    /// A filled triangle pointing up (values above the scale).
    Up,
}

/// Which vertical axis a layer uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The left axis.
    Left,
    /// The right axis ([`Plot::right_axis`]).
    Right,
}

#[derive(Debug, Clone, PartialEq)]
enum Layer {
    Line(Vec<(f64, f64)>, Style, Side),
    Marks(Vec<(f64, f64)>, Style, Mark, f64, Side),
    ErrY(Vec<(f64, f64, f64)>, Style),
    ErrX(Vec<(f64, f64, f64)>, Style),
    HRule(f64, Style, Side),
    VRule(f64, Style),
    BandX(f64, f64, &'static str, f64),
    Bars(Vec<(f64, f64, f64)>, &'static str),
    Text(f64, f64, String, &'static str, &'static str),
}

/// One legend entry: how its swatch is drawn and its text.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    style: Option<Style>,
    mark: Option<Mark>,
    text: String,
}

/// A graph being built: axes, layers in drawing order, legend entries.
#[derive(Debug, Clone, PartialEq)]
pub struct Plot {
    title: String,
    notes: Vec<String>,
    x: Axis,
    y: Axis,
    y2: Option<Axis>,
    width: f64,
    height: f64,
    layers: Vec<Layer>,
    legend: Vec<Entry>,
}

const FONT: f64 = 11.0;
const CHAR_W: f64 = 6.0;
const LEGEND_ROW: f64 = 16.0;
const TITLE_ROW: f64 = 18.0;
const NOTE_ROW: f64 = 14.0;

/// `text` broken at spaces into lines of at most `max` characters (a longer word stays
/// whole on its own line).
pub fn wrap(text: &str, max: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        let n = cur.chars().count();
        if n > 0 && n + 1 + word.chars().count() > max {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    lines.push(cur);
    lines
}

/// Approximate width of `s` in px at the body font size.
fn text_width(s: &str) -> f64 {
    s.chars().count() as f64 * CHAR_W
}

impl Plot {
    /// A plot 760 px wide with a 300 px high plot area.
    pub fn new(title: &str, x: Axis, y: Axis) -> Plot {
        Plot {
            title: title.to_string(),
            notes: vec![],
            x,
            y,
            y2: None,
            width: 760.0,
            height: 300.0,
            layers: vec![],
            legend: vec![],
        }
    }

    /// Sets the whole width and the plot area's height, px.
    pub fn size(mut self, width: f64, plot_height: f64) -> Plot {
        self.width = width;
        self.height = plot_height;
        self
    }

    /// Adds a line of small print under the title.
    pub fn note(&mut self, text: &str) {
        self.notes.push(text.to_string());
    }

    /// Adds a second vertical axis on the right.
    pub fn right_axis(&mut self, axis: Axis) {
        self.y2 = Some(axis);
    }

    /// A polyline through `points` on the left axis, broken at points that cannot be
    /// drawn.
    pub fn line(&mut self, points: &[(f64, f64)], style: Style) {
        self.line_on(points, style, Side::Left);
    }

    /// A polyline on either axis.
    pub fn line_on(&mut self, points: &[(f64, f64)], style: Style, side: Side) {
        self.layers.push(Layer::Line(points.to_vec(), style, side));
    }

    /// `mark` of diameter `size` at each point on the left axis.
    pub fn marks(&mut self, points: &[(f64, f64)], style: Style, mark: Mark, size: f64) {
        self.marks_on(points, style, mark, size, Side::Left);
    }

    /// Marks on either axis.
    pub fn marks_on(
        &mut self,
        points: &[(f64, f64)],
        style: Style,
        mark: Mark,
        size: f64,
        side: Side,
    ) {
        self.layers
            .push(Layer::Marks(points.to_vec(), style, mark, size, side));
    }

    /// Vertical error bars `(x, low, high)` with short caps.
    pub fn error_bars_y(&mut self, bars: &[(f64, f64, f64)], style: Style) {
        self.layers.push(Layer::ErrY(bars.to_vec(), style));
    }

    /// Horizontal error bars `(y, low, high)` with short caps.
    pub fn error_bars_x(&mut self, bars: &[(f64, f64, f64)], style: Style) {
        self.layers.push(Layer::ErrX(bars.to_vec(), style));
    }

    /// A horizontal line across the plot at `y`.
    pub fn hrule(&mut self, y: f64, style: Style, side: Side) {
        self.layers.push(Layer::HRule(y, style, side));
    }

    /// A vertical line across the plot at `x`.
    pub fn vrule(&mut self, x: f64, style: Style) {
        self.layers.push(Layer::VRule(x, style));
    }

    /// A shaded vertical band from `x0` to `x1` (at least one pixel wide).
    pub fn band_x(&mut self, x0: f64, x1: f64, fill: &'static str, opacity: f64) {
        self.layers.push(Layer::BandX(x0, x1, fill, opacity));
    }

    /// Histogram bars `(x0, x1, height)` from the bottom of the plot.
    pub fn bars(&mut self, bars: &[(f64, f64, f64)], fill: &'static str) {
        self.layers.push(Layer::Bars(bars.to_vec(), fill));
    }

    /// Text at a data point; `anchor` is `start`, `middle` or `end`.
    pub fn text(
        &mut self,
        x: f64,
        y: f64,
        text: &str,
        anchor: &'static str,
        color: &'static str,
    ) {
        self.layers
            .push(Layer::Text(x, y, text.to_string(), anchor, color));
    }

    /// A legend entry drawn as a line with an optional mark.
    pub fn legend(&mut self, style: Style, mark: Option<Mark>, text: &str) {
        self.legend.push(Entry {
            style: Some(style),
            mark,
            text: text.to_string(),
        });
    }

    /// A legend entry drawn as a mark only.
    pub fn legend_mark(&mut self, style: Style, mark: Mark, text: &str) {
        self.legend.push(Entry {
            style: Some(style),
            mark: Some(mark),
            text: text.to_string(),
        });
        if let Some(e) = self.legend.last_mut() {
            e.style = e.style.map(|s| s.width(0.0));
        }
    }

    /// Draws the plot.
    pub fn render(&self) -> Svg {
        let layout = Layout::of(self);
        let mut out = String::new();
        self.frame(&layout, &mut out);
        for layer in &self.layers {
            self.layer(&layout, layer, &mut out);
        }
        let _ = write!(
            out,
            r##"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#444"/>"##,
            px(layout.left),
            px(layout.top),
            px(layout.w),
            px(layout.h)
        );
        self.legend_block(&layout, &mut out);
        Svg {
            width: self.width,
            height: layout.total_h,
            title: self.title.clone(),
            body: out,
        }
    }

    fn frame(&self, l: &Layout, out: &mut String) {
        let x0 = px(l.left.min(60.0));
        for (i, t) in l.title.iter().enumerate() {
            let _ = write!(
                out,
                r#"<text x="{x0}" y="{}" font-size="14" font-weight="bold">{}</text>"#,
                px(18.0 + TITLE_ROW * i as f64),
                escape(t)
            );
        }
        let below = 18.0 + TITLE_ROW * (l.title.len() - 1) as f64;
        for (i, n) in l.notes.iter().enumerate() {
            let _ = write!(
                out,
                r##"<text x="{x0}" y="{}" fill="#555">{}</text>"##,
                px(below + 16.0 + NOTE_ROW * i as f64),
                escape(n)
            );
        }
        // Grid and ticks.
        let mut grid = String::new();
        for (v, label) in self.x.ticks() {
            let Some(f) = self.x.frac(*v) else { continue };
            if !(-1e-9..=1.0 + 1e-9).contains(&f) {
                continue;
            }
            let x = l.left + f * l.w;
            let _ = write!(grid, "M{} {}V{}", px(x), px(l.top), px(l.top + l.h));
            let _ = write!(
                out,
                r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
                px(x),
                px(l.top + l.h + 15.0),
                escape(label)
            );
        }
        for (axis, right) in [(Some(&self.y), false), (self.y2.as_ref(), true)] {
            let Some(axis) = axis else { continue };
            for (v, label) in axis.ticks() {
                let Some(f) = axis.frac(*v) else { continue };
                if !(-1e-9..=1.0 + 1e-9).contains(&f) {
                    continue;
                }
                let y = l.top + (1.0 - f) * l.h;
                if !right {
                    let _ =
                        write!(grid, "M{} {}H{}", px(l.left), px(y), px(l.left + l.w));
                }
                let (x, anchor) = if right {
                    (l.left + l.w + 5.0, "start")
                } else {
                    (l.left - 5.0, "end")
                };
                let _ = write!(
                    out,
                    r#"<text x="{}" y="{}" text-anchor="{anchor}">{}</text>"#,
                    px(x),
                    px(y + 4.0),
                    escape(label)
                );
            }
        }
        let _ = write!(
            out,
            r##"<path d="{grid}" stroke="#e3e3e3" stroke-width="1" fill="none"/>"##
        );
        // Axis titles.
        let _ = write!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            px(l.left + l.w / 2.0),
            px(l.top + l.h + 33.0),
            escape(&self.x.title)
        );
        let _ = write!(
            out,
            r#"<text transform="translate({} {}) rotate(-90)" text-anchor="middle">{}</text>"#,
            px(14.0),
            px(l.top + l.h / 2.0),
            escape(&self.y.title)
        );
        if let Some(y2) = &self.y2 {
            let _ = write!(
                out,
                r#"<text transform="translate({} {}) rotate(90)" text-anchor="middle">{}</text>"#,
                px(self.width - 12.0),
                px(l.top + l.h / 2.0),
                escape(&y2.title)
            );
        }
    }

    fn y_axis(&self, side: Side) -> &Axis {
        match (side, &self.y2) {
            (Side::Right, Some(a)) => a,
            _ => &self.y,
        }
    }

    fn layer(&self, l: &Layout, layer: &Layer, out: &mut String) {
        match layer {
            Layer::Line(pts, style, side) => {
                let d = polyline(l, &self.x, self.y_axis(*side), pts);
                if !d.is_empty() {
                    let _ = write!(out, r#"<path d="{d}" {}/>"#, style.stroke());
                }
            }
            Layer::Marks(pts, style, mark, size, side) => {
                let y = self.y_axis(*side);
                let inside: Vec<(f64, f64)> = pts
                    .iter()
                    .filter_map(|&(a, b)| l.point(&self.x, y, a, b))
                    .filter(|&(a, b)| l.contains(a, b))
                    .collect();
                marks(out, &inside, style, *mark, *size);
            }
            Layer::ErrY(bars, style) => self.draw_err_y(l, bars, style, out),
            Layer::ErrX(bars, style) => self.draw_err_x(l, bars, style, out),
            Layer::HRule(v, style, side) => {
                if let Some(f) = self
                    .y_axis(*side)
                    .frac(*v)
                    .filter(|f| (0.0..=1.0).contains(f))
                {
                    let y = l.y_px(f);
                    let _ = write!(
                        out,
                        r#"<path d="M{} {}H{}" {}/>"#,
                        px(l.left),
                        px(y),
                        px(l.left + l.w),
                        style.stroke()
                    );
                }
            }
            Layer::VRule(v, style) => {
                if let Some(f) = self.x.frac(*v).filter(|f| (0.0..=1.0).contains(f)) {
                    let x = l.x_px(f);
                    let _ = write!(
                        out,
                        r#"<path d="M{} {}V{}" {}/>"#,
                        px(x),
                        px(l.top),
                        px(l.top + l.h),
                        style.stroke()
                    );
                }
            }
            Layer::BandX(x0, x1, fill, opacity) => {
                let (Some(a), Some(b)) = (self.x.frac(*x0), self.x.frac(*x1)) else {
                    return;
                };
                let (a, b) = (a.min(b).clamp(0.0, 1.0), a.max(b).clamp(0.0, 1.0));
                let (p0, p1) = (l.x_px(a), l.x_px(b));
                let w = (p1 - p0).max(1.0);
                let _ = write!(
                    out,
                    r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{fill}" opacity="{opacity}"/>"#,
                    px(p0.min(l.left + l.w - w)),
                    px(l.top),
                    px(w),
                    px(l.h)
                );
            }
            Layer::Bars(bars, fill) => self.draw_bars(l, bars, fill, out),
            Layer::Text(x, y, text, anchor, color) => {
                if let Some((a, b)) = l.point(&self.x, &self.y, *x, *y) {
                    let a = a.clamp(l.left + 2.0, l.left + l.w - 2.0);
                    let b = b.clamp(l.top + 12.0, l.top + l.h - 3.0);
                    let _ = write!(
                        out,
                        r#"<text x="{}" y="{}" text-anchor="{anchor}" fill="{color}">{}</text>"#,
                        px(a),
                        px(b),
                        escape(text)
                    );
                }
            }
        }
    }

    /// Vertical error bars (x, low, high), capped where the ends are on the plot.
    fn draw_err_y(
        &self,
        l: &Layout,
        bars: &[(f64, f64, f64)],
        style: &Style,
        out: &mut String,
    ) {
        let mut d = String::new();
        for &(x, lo, hi) in bars {
            let (Some(fx), Some(a), Some(b)) =
                (self.x.frac(x), self.y.frac(lo), self.y.frac(hi.min(1e300)))
            else {
                continue;
            };
            if !(0.0..=1.0).contains(&fx) || a.max(b) < 0.0 || a.min(b) > 1.0 {
                continue;
            }
            let px_x = l.left + fx * l.w;
            let (y0, y1) = (l.y_px(a.clamp(0.0, 1.0)), l.y_px(b.clamp(0.0, 1.0)));
            let _ = write!(d, "M{} {}V{}", px(px_x), px(y0), px(y1));
            for (f, y) in [(a, y0), (b, y1)] {
                if (0.0..=1.0).contains(&f) {
                    let _ = write!(d, "M{} {}h6", px(px_x - 3.0), px(y));
                }
            }
        }
        if !d.is_empty() {
            let _ = write!(out, r#"<path d="{d}" {}/>"#, style.stroke());
        }
    }

    /// Horizontal error bars (y, low, high), capped where the ends are on the plot.
    fn draw_err_x(
        &self,
        l: &Layout,
        bars: &[(f64, f64, f64)],
        style: &Style,
        out: &mut String,
    ) {
        let mut d = String::new();
        for &(y, lo, hi) in bars {
            let (Some(fy), Some(a), Some(b)) =
                (self.y.frac(y), self.x.frac(lo), self.x.frac(hi.min(1e300)))
            else {
                continue;
            };
            if !(0.0..=1.0).contains(&fy) || a.max(b) < 0.0 || a.min(b) > 1.0 {
                continue;
            }
            let py = l.y_px(fy);
            let (x0, x1) = (l.x_px(a.clamp(0.0, 1.0)), l.x_px(b.clamp(0.0, 1.0)));
            let _ = write!(d, "M{} {}H{}", px(x0), px(py), px(x1));
            for (f, x) in [(a, x0), (b, x1)] {
                if (0.0..=1.0).contains(&f) {
                    let _ = write!(d, "M{} {}v6", px(x), px(py - 3.0));
                }
            }
        }
        if !d.is_empty() {
            let _ = write!(out, r#"<path d="{d}" {}/>"#, style.stroke());
        }
    }

    /// Filled bars (x from, x to, height) standing on zero, clipped to the plot.
    fn draw_bars(
        &self,
        l: &Layout,
        bars: &[(f64, f64, f64)],
        fill: &str,
        out: &mut String,
    ) {
        let mut d = String::new();
        for &(x0, x1, h) in bars {
            let (Some(a), Some(b), Some(fh)) =
                (self.x.frac(x0), self.x.frac(x1), self.y.frac(h))
            else {
                continue;
            };
            let (a, b) = (a.clamp(0.0, 1.0), b.clamp(0.0, 1.0));
            let base = self.y.frac(0.0).unwrap_or(0.0).clamp(0.0, 1.0);
            let top = fh.clamp(0.0, 1.0);
            if b <= a || top <= base {
                continue;
            }
            let _ = write!(
                d,
                "M{} {}H{}V{}H{}Z",
                px(l.x_px(a)),
                px(l.y_px(base)),
                px(l.x_px(b)),
                px(l.y_px(top)),
                px(l.x_px(a))
            );
        }
        if !d.is_empty() {
            let _ = write!(
                out,
                r##"<path d="{d}" fill="{fill}" stroke="#fff" stroke-width="0.5"/>"##
            );
        }
    }

    fn legend_block(&self, l: &Layout, out: &mut String) {
        for (e, (x, y)) in self.legend.iter().zip(&l.legend_at) {
            let cy = y - 4.0;
            if let Some(s) = e.style.filter(|s| s.width > 0.0) {
                let _ = write!(
                    out,
                    r#"<path d="M{} {}h24" {}/>"#,
                    px(*x),
                    px(cy),
                    s.stroke()
                );
            }
            if let (Some(m), Some(s)) = (e.mark, e.style) {
                let s = Style { width: 1.5, ..s };
                marks(out, &[(x + 12.0, cy)], &s, m, 7.0);
            }
            let _ = write!(
                out,
                r#"<text x="{}" y="{}">{}</text>"#,
                px(x + 30.0),
                px(*y),
                escape(&e.text)
            );
        }
    }
}

/// Where everything goes.
struct Layout {
    title: Vec<String>,
    notes: Vec<String>,
    left: f64,
    top: f64,
    w: f64,
    h: f64,
    total_h: f64,
    legend_at: Vec<(f64, f64)>,
}

impl Layout {
    fn of(p: &Plot) -> Layout {
        let widest = |a: &Axis| {
            a.ticks()
                .iter()
                .map(|(_, s)| text_width(s))
                .fold(0.0, f64::max)
        };
        let left = 30.0 + widest(&p.y);
        let right = match &p.y2 {
            Some(a) => 30.0 + widest(a),
            None => 20.0,
        };
        let text_w = p.width - left.min(60.0) - 8.0;
        let title = wrap(&p.title, (text_w / 8.2) as usize);
        let notes: Vec<String> = p
            .notes
            .iter()
            .flat_map(|n| wrap(n, (text_w / CHAR_W) as usize))
            .collect();
        let top =
            28.0 + TITLE_ROW * (title.len() - 1) as f64 + NOTE_ROW * notes.len() as f64;
        let w = (p.width - left - right).max(100.0);
        let bottom = top + p.height + 42.0;
        // Legend: entries flow left to right in rows under the x-axis title.
        let mut legend_at = Vec::new();
        let (mut x, mut y) = (left, bottom + 8.0);
        for e in &p.legend {
            let ew = 30.0 + text_width(&e.text) + 18.0;
            if x > left && x + ew > left + w {
                x = left;
                y += LEGEND_ROW;
            }
            legend_at.push((x, y));
            x += ew;
        }
        let total_h = if p.legend.is_empty() {
            bottom
        } else {
            y + 10.0
        };
        Layout {
            title,
            notes,
            left,
            top,
            w,
            h: p.height,
            total_h,
            legend_at,
        }
    }

    fn x_px(&self, f: f64) -> f64 {
        self.left + f * self.w
    }

    fn y_px(&self, f: f64) -> f64 {
        self.top + (1.0 - f) * self.h
    }

    fn point(&self, x: &Axis, y: &Axis, a: f64, b: f64) -> Option<(f64, f64)> {
        Some((self.x_px(x.frac(a)?), self.y_px(y.frac(b)?)))
    }

    fn contains(&self, a: f64, b: f64) -> bool {
        let e = 0.5;
        a >= self.left - e
            && a <= self.left + self.w + e
            && b >= self.top - e
            && b <= self.top + self.h + e
    }
}

/// The path of a polyline clipped to the plot area; broken at undrawable points.
fn polyline(l: &Layout, x: &Axis, y: &Axis, pts: &[(f64, f64)]) -> String {
    let mut d = String::new();
    let mut pen: Option<(f64, f64)> = None; // last point drawn to, in px
    let mut prev: Option<(f64, f64)> = None;
    for &(a, b) in pts {
        let cur = l.point(x, y, a, b);
        if let (Some(p), Some(c)) = (prev, cur) {
            if let Some((s, e)) = clip(p, c, (l.left, l.top, l.left + l.w, l.top + l.h)) {
                if pen != Some(s) {
                    let _ = write!(d, "M{} {}", px(s.0), px(s.1));
                }
                let _ = write!(d, "L{} {}", px(e.0), px(e.1));
                pen = Some(e);
            }
        }
        prev = cur;
    }
    d
}

/// Liang–Barsky: the part of segment `p`–`q` inside the box, if any.
fn clip(
    p: (f64, f64),
    q: (f64, f64),
    (x0, y0, x1, y1): (f64, f64, f64, f64),
) -> Option<((f64, f64), (f64, f64))> {
    let (dx, dy) = (q.0 - p.0, q.1 - p.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (pk, qk) in [
        (-dx, p.0 - x0),
        (dx, x1 - p.0),
        (-dy, p.1 - y0),
        (dy, y1 - p.1),
    ] {
        if pk == 0.0 {
            if qk < 0.0 {
                return None;
            }
        } else {
            let r = qk / pk;
            if pk < 0.0 {
                t0 = t0.max(r);
            } else {
                t1 = t1.min(r);
            }
        }
    }
    (t0 <= t1).then_some((
        (p.0 + t0 * dx, p.1 + t0 * dy),
        (p.0 + t1 * dx, p.1 + t1 * dy),
    ))
}

/// One path holding every mark of a layer.
fn marks(out: &mut String, pts: &[(f64, f64)], style: &Style, mark: Mark, size: f64) {
    if pts.is_empty() {
        return;
    }
    let r = size / 2.0;
    let mut d = String::new();
    let mut at: Option<(i64, i64)> = None;
    for &(x, y) in pts {
        let _ = match mark {
            // Whole pixels, each relative to the last: a dot is 3 px wide, and a report
            // holds many thousands of them.
            Mark::Dot => {
                let p = (x.round() as i64, y.round() as i64);
                let w = match at {
                    None => write!(d, "M{} {}h0", p.0, p.1),
                    Some(q) => write!(d, "m{}{}h0", p.0 - q.0, signed(p.1 - q.1)),
                };
                at = Some(p);
                w
            }
            Mark::Circle | Mark::Ring => write!(
                d,
                "M{} {}a{r} {r} 0 1 0 {} 0a{r} {r} 0 1 0 -{} 0",
                px(x - r),
                px(y),
                px(2.0 * r),
                px(2.0 * r),
                r = px(r)
            ),
            Mark::Square => write!(
                d,
                "M{} {}h{s}v{s}h-{s}Z",
                px(x - r),
                px(y - r),
                s = px(size)
            ),
            Mark::Diamond => write!(
                d,
                "M{} {}l{r} {r}l-{r} {r}l-{r} -{r}Z",
                px(x),
                px(y - r),
                r = px(r)
            ),
            Mark::Cross => write!(
                d,
                "M{} {}l{s} {s}m0 -{s}l-{s} {s}",
                px(x - r),
                px(y - r),
                s = px(size)
            ),
            Mark::Up => write!(
                d,
                "M{} {}l{r} {s}h-{s}Z",
                px(x),
                px(y),
                r = px(r),
                s = px(size)
            ),
        };
    }
    let attrs = match mark {
        Mark::Dot => format!(
            r#"fill="none" stroke="{}" stroke-width="{}" stroke-linecap="round""#,
            style.color,
            px(size)
        ),
        Mark::Cross | Mark::Ring => format!(
            r#"fill="none" stroke="{}" stroke-width="{}""#,
            style.color,
            px(style.width.max(1.0))
        ),
        _ => format!(r#"fill="{}" stroke="none""#, style.color),
    };
    let opacity = if style.opacity < 1.0 {
        format!(r#" opacity="{}""#, style.opacity)
    } else {
        String::new()
    };
    let _ = write!(out, r#"<path d="{d}" {attrs}{opacity}/>"#);
}

/// A path number after another: a space before it unless its minus sign separates it.
fn signed(v: i64) -> String {
    if v < 0 {
        v.to_string()
    } else {
        format!(" {v}")
    }
}

/// A drawn graph: its size and its elements. `Display` writes a standalone SVG
/// document; [`Svg::inline`] the same element for an HTML page.
#[derive(Debug, Clone, PartialEq)]
pub struct Svg {
    /// Width, px.
    pub width: f64,
    /// Height, px.
    pub height: f64,
    title: String,
    body: String,
}

impl Svg {
    fn open(&self, xmlns: bool) -> String {
        format!(
            r##"<svg{} width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="{FONT}" role="img"><title>{}</title><rect width="{w}" height="{h}" fill="#fff"/>"##,
            if xmlns {
                r#" xmlns="http://www.w3.org/2000/svg""#
            } else {
                ""
            },
            escape(&self.title),
            w = px(self.width),
            h = px(self.height)
        )
    }

    /// The `<svg>` element for an HTML page (no namespace declaration, which HTML
    /// does not need).
    pub fn inline(&self) -> String {
        format!("{}{}</svg>", self.open(false), self.body)
    }

    /// Several graphs one below the other, as one graph.
    pub fn stack(title: &str, parts: &[Svg]) -> Svg {
        let width = parts.iter().fold(0.0, |m: f64, p| m.max(p.width));
        let mut body = String::new();
        let mut y = 0.0;
        for p in parts {
            let _ = write!(
                body,
                r#"<svg x="0" y="{}" width="{w}" height="{h}" viewBox="0 0 {w} {h}">{}</svg>"#,
                px(y),
                p.body,
                w = px(p.width),
                h = px(p.height)
            );
            y += p.height;
        }
        Svg {
            width,
            height: y,
            title: title.to_string(),
            body,
        }
    }
}

impl fmt::Display for Svg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}{}</svg>", self.open(true), self.body)
    }
}

#[cfg(test)]
#[path = "svg_tests.rs"]
mod tests;
