//! A small SVG drawing layer for the report's graphs: a plot area with linear or log10
//! axes, nice ticks with unit-bearing labels, lines, marks, error bars, reference
//! lines, bands, a legend, a title and notes.
//!
//! Pure functions: a [`Plot`] is data, [`Plot::render`] turns it into an [`Svg`], and the
//! same plot always gives the same bytes (coordinates are printed with one decimal, no
//! map iteration order, no clock). It knows nothing of benchmarks; `graphs` does. Lines
//! are clipped to the plot area here (Liang–Barsky), so no element needs an `id`, and
//! several graphs can sit in one HTML page without their clip paths colliding.

mod axis;
mod render;

pub use axis::{bytes, linear_ticks, log_ticks, nice_step, Axis, Scale, Units};
use std::fmt::{self, Write};

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

/// Approximate width of `s` in px at the body font size (what the layout gives an
/// axis's labels).
pub fn text_width(s: &str) -> f64 {
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

    /// A graph drawn elsewhere (the flame graph): its size, title and SVG elements.
    pub fn raw(width: f64, height: f64, title: &str, body: String) -> Svg {
        Svg {
            width,
            height,
            title: title.to_string(),
            body,
        }
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
mod tests;
