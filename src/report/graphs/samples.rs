//! One benchmark's samples: over time, round by round, and as a distribution.

use super::*;

/// A sample's kind from its flags: 0 clean, 1 outlier, 2 perturbed.
fn kind(flags: u8) -> u8 {
    if flags & 3 != 0 {
        1
    } else if flags & 4 != 0 {
        2
    } else {
        0
    }
}

/// The indices to draw: every outlier and perturbed sample (thinned too if they alone
/// exceed half the budget) and every k-th clean sample, at most `max` in all.
pub fn thin(flags: &[u8], max: usize) -> (Vec<usize>, usize) {
    let max = max.max(2);
    let special: Vec<usize> = (0..flags.len()).filter(|&i| kind(flags[i]) != 0).collect();
    let clean: Vec<usize> = (0..flags.len()).filter(|&i| kind(flags[i]) == 0).collect();
    let keep_special = every(&special, max / 2);
    let budget = max - keep_special.len().min(max / 2);
    let step = clean.len().div_ceil(budget).max(1);
    let mut out: Vec<usize> = clean.iter().copied().step_by(step).collect();
    out.extend(keep_special);
    out.sort_unstable();
    (out, step)
}

/// 2nd, 3rd, 4th, 11th, 21st.
pub(super) fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

fn every(ix: &[usize], max: usize) -> Vec<usize> {
    let step = ix.len().div_ceil(max.max(1)).max(1);
    ix.iter().copied().step_by(step).collect()
}

/// A benchmark's samples over time: clean samples as dots, outliers as ×, perturbed
/// samples in orange, each round's median as a bar over the round, the headline dashed,
/// and the canary read before each round on the right axis. Rounds are drawn back to
/// back (the other benchmarks' rounds between them are left out). Without samples, the
/// round medians against the time each round began.
pub fn samples(r: &BenchResult, run: &str, max_points: usize) -> Result<Svg, UsageError> {
    let m = measured(r)?;
    let title = format!("{} — samples over time ({run})", key(r));
    let Some(s) = m.samples.as_ref().filter(|s| !s.per_op_ns.is_empty()) else {
        return Ok(round_medians(r, m, &title));
    };
    let n = s
        .per_op_ns
        .len()
        .min(s.at_ns.len())
        .min(s.flags.len())
        .min(s.round.len());
    let (offset, x, gap) = round_offsets(&s.round[..n], &s.at_ns[..n]);
    let xpos = |i: usize| {
        let (o, a, _) = offset[&s.round[i]];
        o + s.at_ns[i] - a
    };
    // The y range: clean samples and round medians; the others up to one range beyond.
    let clean: Vec<f64> = (0..n)
        .filter(|&i| kind(s.flags[i]) == 0)
        .map(|i| s.per_op_ns[i])
        .collect();
    let medians: Vec<f64> = m.rounds.iter().filter_map(|r| r.median_ns).collect();
    let base: Vec<f64> = clean.iter().chain(&medians).copied().collect();
    let (lo, hi) = min_max(if base.is_empty() { &s.per_op_ns } else { &base });
    let reach = (hi - lo).max(hi.abs() * 0.25);
    let (cap_lo, cap_hi) = ((lo - reach).max(0.0f64.min(lo)), hi + reach);
    let fit: Vec<f64> = s.per_op_ns[..n]
        .iter()
        .map(|v| v.clamp(cap_lo, cap_hi))
        .chain(base.iter().copied())
        .collect();
    let y = Axis::fit(
        "time per operation",
        Scale::Linear,
        Units::Ns,
        fit.iter().chain(canary_on_axis(&fit, m)).copied(),
    );
    let x_axis = Axis::padded(
        "sampling time, rounds back to back",
        Scale::Linear,
        Units::Ns,
        [0.0, (x - gap).max(1.0)],
        0.01,
    );
    let (ylo, yhi) = y.domain();
    let mut p = Plot::new(&title, x_axis, y);
    p.note(&headline(m));
    let (keep, step) = thin(&s.flags[..n], max_points);
    // Per kind (clean, outlier, perturbed): on the scale, and beyond it at its edge.
    let mut groups: [Vec<(f64, f64)>; 3] = Default::default();
    let mut beyond: [Vec<(f64, f64)>; 3] = Default::default();
    for &i in &keep {
        let (v, k) = (s.per_op_ns[i], kind(s.flags[i]) as usize);
        if !v.is_finite() {
            continue;
        }
        if v > yhi || v < ylo {
            beyond[k].push((xpos(i), v.clamp(ylo, yhi)));
        } else {
            groups[k].push((xpos(i), v));
        }
    }
    let drawn_note = if step > 1 {
        format!(
            "{} of {n} samples drawn: every {} clean sample, every outlier and perturbed sample",
            keep.len(),
            ordinal(step)
        )
    } else {
        format!("all {n} samples drawn")
    };
    let off: usize = beyond.iter().map(Vec::len).sum();
    p.note(&if off > 0 {
        format!("{drawn_note}; {off} beyond the scale drawn at its edge (▲)")
    } else {
        drawn_note
    });
    draw_rounds(&mut p, &offset, gap, m, yhi);
    p.marks(&groups[0], Style::solid(CLEAN).opacity(0.6), Mark::Dot, 3.0);
    p.marks(&groups[2], Style::solid(PERTURBED), Mark::Cross, 5.0);
    p.marks(&groups[1], Style::solid(OUTLIER), Mark::Cross, 5.0);
    for (pts, c) in beyond.iter().zip([CLEAN, OUTLIER, PERTURBED]) {
        p.marks(pts, Style::solid(c), Mark::Up, 6.0);
    }
    p.hrule(m.median_ns, Style::dashed(INK).width(1.0), Side::Left);
    legends(
        &mut p,
        !groups[1].is_empty() || !beyond[1].is_empty(),
        !groups[2].is_empty() || !beyond[2].is_empty(),
    );
    // The canary before each round, on the right axis.
    if let Some(c) = m.canary.as_ref().filter(|c| !c.rounds_ns.is_empty()) {
        let pts: Vec<(f64, f64)> = offset
            .values()
            .zip(&c.rounds_ns)
            .map(|(&(o, _, _), &v)| (o, v))
            .collect();
        add_canary(&mut p, &c.rounds_ns, &pts, (ylo, yhi));
    }
    Ok(p.render())
}

/// The samples plot's legend: clean samples always, outliers and perturbed samples
/// when any are drawn, the round medians and the headline.
fn legends(p: &mut Plot, outliers: bool, perturbed: bool) {
    p.legend_mark(Style::solid(CLEAN), Mark::Circle, "clean sample");
    if outliers {
        p.legend_mark(Style::solid(OUTLIER), Mark::Cross, "outlier");
    }
    if perturbed {
        p.legend_mark(
            Style::solid(PERTURBED),
            Mark::Cross,
            "perturbed (switch or fault)",
        );
    }
    p.legend(Style::solid(INK).width(2.5), None, "round median");
    p.legend(Style::dashed(INK).width(1.0), None, "headline");
}

/// Where each round's samples go on an axis that puts the rounds back to back: per
/// round, (its start on the axis, its first and last sample's time); then the axis's
/// end and the gap left between rounds.
fn round_offsets(
    round: &[u32],
    at_ns: &[f64],
) -> (BTreeMap<u32, (f64, f64, f64)>, f64, f64) {
    let mut spans: BTreeMap<u32, (f64, f64)> = BTreeMap::new();
    for (&r, &t) in round.iter().zip(at_ns) {
        let e = spans.entry(r).or_insert((t, t));
        e.0 = e.0.min(t);
        e.1 = e.1.max(t);
    }
    let total: f64 = spans.values().map(|(a, b)| b - a).sum();
    let gap = (total * 0.02).max(1.0);
    let mut offset = BTreeMap::new();
    let mut x = 0.0;
    for (&round, &(a, b)) in &spans {
        offset.insert(round, (x, a, b));
        x += b - a + gap;
    }
    (offset, x, gap)
}

/// The rounds on a samples plot: a dotted rule between rounds, their labels when there
/// are at most 12, and each round's median as a bar over the round.
fn draw_rounds(
    p: &mut Plot,
    offset: &BTreeMap<u32, (f64, f64, f64)>,
    gap: f64,
    m: &Measured,
    yhi: f64,
) {
    let labelled = offset.len() <= 12;
    for (k, (&round, &(o, a, b))) in offset.iter().enumerate() {
        if k > 0 {
            p.vrule(o - gap / 2.0, Style::dotted(GREY).width(1.0));
        }
        if labelled {
            p.text(o, yhi, &format!("r{round}"), "start", GREY);
        }
        if let Some(med) = m
            .rounds
            .iter()
            .find(|f| f.round == round)
            .and_then(|f| f.median_ns)
        {
            p.line(
                &[(o, med), (o + (b - a).max(gap / 4.0), med)],
                Style::solid(INK).width(2.5),
            );
        }
    }
}

/// The canary's readings when the samples' axis should take them in as well: when
/// doing so at most doubles the span of `fit` (the values the axis is fitted to), so
/// the samples keep their resolution. Otherwise none: the canary gets a scale of its
/// own.
fn canary_on_axis<'a>(fit: &[f64], m: &'a Measured) -> &'a [f64] {
    let readings = m.canary.as_ref().map_or(&[][..], |c| &c.rounds_ns[..]);
    let (lo, hi) = min_max(fit);
    let (clo, chi) = min_max(readings);
    let span = hi - lo;
    let shared = span > 0.0 && chi.max(hi) - clo.min(lo) <= 2.0 * span;
    if shared {
        readings
    } else {
        &[]
    }
}

/// The canary's readings, in ns as the samples are: on the samples' axis when they fit
/// its range `(lo, hi)`, so a reading sits level with samples of the same time; else on
/// a right axis of its own, labelled as another scale.
fn add_canary(p: &mut Plot, readings: &[f64], pts: &[(f64, f64)], (lo, hi): (f64, f64)) {
    if readings.iter().all(|v| (lo..=hi).contains(v)) {
        p.marks(pts, Style::solid(CANARY), Mark::Diamond, 8.0);
        p.legend_mark(
            Style::solid(CANARY),
            Mark::Diamond,
            "canary: getpid before the round",
        );
        return;
    }
    let mid = crate::stats::summarize(readings).map_or(f64::NAN, |s| s.median);
    let axis = Axis::fit(
        "canary: getpid before the round (its own scale)",
        Scale::Linear,
        Units::Ns,
        readings.iter().copied().chain([mid * 0.9, mid * 1.1]),
    );
    p.right_axis(axis);
    p.marks_on(pts, Style::solid(CANARY), Mark::Diamond, 8.0, Side::Right);
    p.legend_mark(
        Style::solid(CANARY),
        Mark::Diamond,
        "canary (right axis, a scale of its own)",
    );
}

pub(super) fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter()
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        })
}

/// Round medians against the time each round began (no samples were kept).
fn round_medians(r: &BenchResult, m: &Measured, title: &str) -> Svg {
    let pts: Vec<(f64, f64)> = m
        .rounds
        .iter()
        .filter_map(|f| f.median_ns.map(|v| (f.start_ns, v)))
        .collect();
    let x = Axis::fit(
        "time since the run began",
        Scale::Linear,
        Units::Ns,
        pts.iter().map(|p| p.0).chain([0.0]),
    );
    let fit: Vec<f64> = pts
        .iter()
        .map(|p| p.1)
        .chain([m.ci_low_ns.max(0.0), m.ci_high_ns])
        .collect();
    let y = Axis::fit(
        "time per operation",
        Scale::Linear,
        Units::Ns,
        fit.iter().chain(canary_on_axis(&fit, m)).copied(),
    );
    let domain = y.domain();
    let mut p = Plot::new(title, x, y);
    p.note(&headline(m));
    p.note(&format!(
        "{}: no samples were kept (--no-samples), so only the round medians are drawn",
        key(r)
    ));
    p.hrule(m.median_ns, Style::dashed(INK).width(1.0), Side::Left);
    p.line(&pts, Style::solid(INK).width(1.0).opacity(0.5));
    p.marks(&pts, Style::solid(INK), Mark::Square, 6.0);
    p.legend_mark(Style::solid(INK), Mark::Square, "round median");
    p.legend(Style::dashed(INK).width(1.0), None, "headline");
    if let Some(c) = m.canary.as_ref().filter(|c| !c.rounds_ns.is_empty()) {
        let cpts: Vec<(f64, f64)> = m
            .rounds
            .iter()
            .zip(&c.rounds_ns)
            .map(|(f, &v)| (f.start_ns, v))
            .collect();
        add_canary(&mut p, &c.rounds_ns, &cpts, domain);
    }
    p.render()
}

/// A benchmark's distribution: a histogram of its clean samples with the headline
/// median, its 95% CI and the pooled median of the clean samples marked. Without
/// samples, each round's median on its own row.
pub fn distribution(r: &BenchResult, run: &str) -> Result<Svg, UsageError> {
    let m = measured(r)?;
    let title = format!("{} — distribution ({run})", key(r));
    let clean: Vec<f64> = m
        .samples
        .as_ref()
        .map(|s| {
            s.per_op_ns
                .iter()
                .zip(&s.flags)
                .filter(|(v, f)| kind(**f) == 0 && v.is_finite())
                .map(|(v, _)| *v)
                .collect()
        })
        .unwrap_or_default();
    if clean.len() < 2 {
        return Ok(round_strip(r, m, &title));
    }
    let (lo, hi) = min_max(&clean);
    // The CI widens the axis by at most a quarter of the samples' range each side (a
    // wider one runs off the edge; the note gives its ends).
    let reach = (hi - lo) * 0.25;
    let x = Axis::fit(
        "time per operation",
        Scale::Linear,
        Units::Ns,
        [
            lo,
            hi,
            m.median_ns,
            m.ci_low_ns.max(lo - reach),
            m.ci_high_ns.min(hi + reach),
        ],
    );
    let (xlo, xhi) = x.domain();
    let bins = ((2.0 * (clean.len() as f64).cbrt()).round() as usize).clamp(10, 60);
    let (blo, bhi) = if hi > lo { (lo, hi) } else { (xlo, xhi) };
    let width = (bhi - blo) / bins as f64;
    let mut counts = vec![0usize; bins];
    for v in &clean {
        let b = (((v - blo) / width) as usize).min(bins - 1);
        counts[b] += 1;
    }
    let top = counts.iter().copied().max().unwrap_or(1) as f64;
    let y = Axis::fit(
        "clean samples",
        Scale::Linear,
        Units::Number,
        [0.0, (top * 1.05).max(5.0)],
    );
    let mut p = Plot::new(&title, x, y);
    p.note(&headline(m));
    let batch = if m.batch == 1 {
        "each sample is one operation".to_string()
    } else {
        format!("a sample is the mean of {} operations", m.batch)
    };
    p.note(&format!(
        "{} clean samples of {} (outliers and perturbed samples left out); {batch}",
        clean.len(),
        m.samples.as_ref().map_or(0, |s| s.per_op_ns.len()),
    ));
    p.band_x(m.ci_low_ns, m.ci_high_ns, "#f4a582", 0.45);
    let bars: Vec<(f64, f64, f64)> = counts
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let a = blo + width * i as f64;
            (a, a + width, c as f64)
        })
        .collect();
    p.bars(&bars, CLEAN);
    p.vrule(m.median_ns, Style::solid(OUTLIER).width(2.0));
    let pooled = m.clean.as_ref().map(|c| c.median);
    if let Some(pm) = pooled {
        p.vrule(pm, Style::dashed(INK).width(1.0));
    }
    p.legend(
        Style::solid("#f4a582").width(8.0).opacity(0.6),
        None,
        "95% CI of the headline",
    );
    p.legend(Style::solid(OUTLIER).width(2.0), None, "headline median");
    if pooled.is_some() {
        p.legend(
            Style::dashed(INK).width(1.0),
            None,
            "median of the pooled clean samples",
        );
    }
    Ok(p.render())
}

/// Each round's median on its own row, with the headline and its CI.
fn round_strip(r: &BenchResult, m: &Measured, title: &str) -> Svg {
    let pts: Vec<(f64, f64)> = m
        .rounds
        .iter()
        .filter_map(|f| f.median_ns.map(|v| (v, f.round as f64)))
        .collect();
    let x = Axis::fit(
        "time per operation",
        Scale::Linear,
        Units::Ns,
        pts.iter().map(|p| p.0).chain([m.ci_low_ns, m.ci_high_ns]),
    );
    let y = Axis::fit(
        "round",
        Scale::Linear,
        Units::Number,
        pts.iter().map(|p| p.1).chain([-0.5]),
    );
    let mut p = Plot::new(title, x, y);
    p.note(&headline(m));
    p.note(&format!(
        "{}: no samples were kept, so each round's median is drawn instead of a histogram",
        key(r)
    ));
    p.band_x(m.ci_low_ns, m.ci_high_ns, "#f4a582", 0.45);
    p.vrule(m.median_ns, Style::solid(OUTLIER).width(2.0));
    p.marks(&pts, Style::solid(INK), Mark::Square, 6.0);
    p.legend_mark(Style::solid(INK), Mark::Square, "round median");
    p.legend(Style::solid(OUTLIER).width(2.0), None, "headline");
    p.legend(
        Style::solid("#f4a582").width(8.0).opacity(0.6),
        None,
        "95% CI",
    );
    p.render()
}
