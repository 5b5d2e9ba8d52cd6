//! Turning a [`Plot`] into an [`Svg`]: the layout (title, plot area, legend, notes),
//! the frame and ticks, each layer clipped to the plot area, and the legend.

use super::{escape, px, text_width, wrap, Axis, Layer, Mark, Plot, Side, Style, Svg};
use super::{CHAR_W, LEGEND_ROW, NOTE_ROW, TITLE_ROW};
use std::fmt::Write;

impl Plot {
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
            Layer::ErrY(bars, style) => self.draw_err(l, bars, style, true, out),
            Layer::ErrX(bars, style) => self.draw_err(l, bars, style, false, out),
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

    /// Error bars, capped where the ends are on the plot: vertical ones (x, low, high),
    /// or horizontal ones (y, low, high).
    fn draw_err(
        &self,
        l: &Layout,
        bars: &[(f64, f64, f64)],
        style: &Style,
        vertical: bool,
        out: &mut String,
    ) {
        let (at_axis, span_axis) = match vertical {
            true => (&self.x, &self.y),
            false => (&self.y, &self.x),
        };
        let mut d = String::new();
        for &(at, lo, hi) in bars {
            let (Some(f), Some(a), Some(b)) = (
                at_axis.frac(at),
                span_axis.frac(lo),
                span_axis.frac(hi.min(1e300)),
            ) else {
                continue;
            };
            if !(0.0..=1.0).contains(&f) || a.max(b) < 0.0 || a.min(b) > 1.0 {
                continue;
            }
            let (a0, b0) = (a.clamp(0.0, 1.0), b.clamp(0.0, 1.0));
            let (at, p0, p1) = match vertical {
                true => (l.x_px(f), l.y_px(a0), l.y_px(b0)),
                false => (l.y_px(f), l.x_px(a0), l.x_px(b0)),
            };
            let _ = match vertical {
                true => write!(d, "M{} {}V{}", px(at), px(p0), px(p1)),
                false => write!(d, "M{} {}H{}", px(p0), px(at), px(p1)),
            };
            for (f, p) in [(a, p0), (b, p1)] {
                if (0.0..=1.0).contains(&f) {
                    let _ = match vertical {
                        true => write!(d, "M{} {}h6", px(at - 3.0), px(p)),
                        false => write!(d, "M{} {}v6", px(p), px(at - 3.0)),
                    };
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
pub(super) fn clip(
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
pub(super) fn marks(
    out: &mut String,
    pts: &[(f64, f64)],
    style: &Style,
    mark: Mark,
    size: f64,
) {
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
