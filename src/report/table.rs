//! The terminal table: a header naming the clock and profile, one line per result, and
//! a footer that describes the machine once, says how to read the table, and ends with
//! the [`summary`](super::summary) of the figures people quote.
//!
//! By default a row gets at most one short note beneath it ([`row_note`]: why it did
//! not converge, a failure); `--verbose` brings every note back ([`notes`]: levels,
//! modes, the rounds' spread, a canary that moved, rounds measured again, facts).
//!
//! Its columns are laid out before measuring starts ([`Layout`]), from the names
//! selected and the terminal's width, so every row streams into the same columns: the
//! `±` of every interval stands at one position, and no line is wider than the terminal
//! (notes beneath a row are wrapped).

use super::layout::{self, Layout, RowKey};
use super::Exporter;
use crate::draw::text::{clip, count, secs, wrap, wrap_after, wrap_lines};
use crate::harness::analyze::Basis;
use crate::harness::Why;
use crate::method;
use crate::results::describe_states;
use crate::results::Measured;
use crate::results::{
    describe_levels, describe_modes, fmt_ns, unit_for, BenchResult, Run, Status,
};

/// The table exporter.
pub struct Table {
    layout: Layout,
    /// The benchmark of the row written last, so a group's header is written once.
    last: Option<String>,
    /// Every note under each row, rather than at most one.
    verbose: bool,
    /// The run's CI target (a fraction), from its header.
    target: f64,
    /// How many rows the run will write ([`Exporter::plan`]).
    planned: usize,
    /// The summary goes before the rows ([`Exporter::summary_first`]).
    summary_first: bool,
}

impl Table {
    /// A table no wider than `width` columns, laid out for unknown rows until
    /// [`Exporter::plan`] names them.
    pub fn new(width: usize) -> Table {
        Table {
            layout: Layout::unplanned(width),
            last: None,
            verbose: false,
            target: f64::NAN,
            planned: 0,
            summary_first: false,
        }
    }

    /// The header line of the columns.
    fn column_header(&self) -> String {
        let l = &self.layout;
        let mut s = format!(
            "{:<nw$} {:>MEDIAN_W$} {:>RANGE_W$} {:<REL_W$} {:>ROUNDS_W$}",
            "benchmark",
            "figure",
            "95% CI",
            "±%",
            "rnds",
            nw = l.name_w,
        );
        optional(&mut s, l, "min", "samples", "outl", "pert");
        if l.columns.target {
            s += &format!(" {:>TARGET_W$}", "target");
        }
        s += &format!(" {:>CONV_W$}", "conv");
        s.trim_end().to_string() + "\n"
    }
}

use layout::{
    CONV_W, COUNT_W, MEDIAN_W, MIN_W, RANGE_W, REL_W, ROUNDS_W, SAMPLES_W, TARGET_W,
};

/// Appends the optional columns the layout shows.
fn optional(
    s: &mut String,
    l: &Layout,
    min: &str,
    samples: &str,
    outl: &str,
    pert: &str,
) {
    let c = l.columns;
    if c.min {
        *s += &format!(" {min:>MIN_W$}");
    }
    if c.samples {
        *s += &format!(" {samples:>SAMPLES_W$}");
    }
    if c.outl {
        *s += &format!(" {outl:>COUNT_W$}");
    }
    if c.pert {
        *s += &format!(" {pert:>COUNT_W$}");
    }
}

/// The one short note a row gets by default, if it needs one: its failure, or why it
/// did not converge (its interval, rounds and target, and the reason in a few words).
/// `target` is the run's CI target, a fraction. Everything else about a row (levels,
/// modes, the canary, rounds measured again, facts) is in [`notes`], shown with
/// `--verbose` and by `syscost history show RUN BENCH`.
pub fn row_note(r: &BenchResult, target: f64) -> Option<String> {
    if r.status == Status::Failed {
        return Some(format!("FAILED {}", r.reason.as_deref().unwrap_or("")));
    }
    let m = r.measured.as_ref()?;
    if m.converged {
        return None;
    }
    let rounds = m.rounds.len();
    let Some(first) = m.why.first() else {
        // A document from before the reasons were recorded: its words as they were.
        return Some(format!("not converged: {}", m.stop_reason));
    };
    if matches!(first, Why::FewClean) {
        return Some(format!(
            "not converged: {} of {} clean, below {} or a tenth: the median of all after {}",
            m.counts.clean,
            count(m.counts.total, "sample", "samples"),
            crate::method::MIN_CLEAN,
            count(rounds, "round", "rounds")
        ));
    }
    let ci = m.relative_ci() * 100.0;
    let ci = if ci.is_finite() {
        format!("±{}", pct(ci))
    } else {
        "no interval".into()
    };
    let target = m.target_pct.map_or(target, |t| t / 100.0);
    let target = if target.is_finite() {
        format!(", target ±{}", pct(target * 100.0))
    } else {
        String::new()
    };
    Some(format!(
        "not converged: {ci} after {}{target} ({})",
        count(rounds, "round", "rounds"),
        first.label()
    ))
}

/// Which state the figures are, when the machine spent most of the run in slower ones:
/// the rows are measured in its base state (rounds outside it are measured again), so
/// a reader learns that a program here pays more most of the time, and how much.
pub(crate) fn base_state_note(ms: &crate::results::MachineStates) -> Option<String> {
    let base = ms.base_ns()?;
    let at_base: f64 = ms
        .states
        .iter()
        .filter(|x| x.median_ns <= base)
        .map(|x| x.share)
        .sum();
    let total: f64 = ms.states.iter().map(|x| x.share).sum();
    let slower: f64 = ms
        .states
        .iter()
        .filter(|x| x.median_ns > base)
        .map(|x| x.share * x.median_ns)
        .sum::<f64>()
        / (total - at_base);
    (total > 0.0 && at_base < 0.5 * total).then(|| {
        format!(
            "the figures are the machine's base state's (getpid {}, {:.0}% of the run); \
             the rest of the run it read {:.0}% slower, and so would most rows",
            fmt_ns(base),
            at_base / total * 100.0,
            (slower / base - 1.0) * 100.0
        )
    })
}

/// A percentage with the digits that matter (2.3, 0.45, 12).
fn pct(x: f64) -> String {
    if x >= 10.0 {
        format!("{x:.0}%")
    } else if x >= 0.995 {
        format!("{x:.1}%")
    } else {
        format!("{x:.2}%")
    }
}

/// The lines printed under a measured result with `--verbose`, in order: failure, what one operation
/// is, convergence or disagreeing rounds, the between-runs widening, the kernel's
/// culling, the rounds' spread, levels or modes, the benchmark's facts, and a canary
/// that changed.
pub fn notes(r: &BenchResult, m: &Measured) -> Vec<String> {
    let mut notes = Vec::new();
    if r.status == Status::Failed {
        notes.push(format!("FAILED {}", r.reason.as_deref().unwrap_or("")));
    }
    if r.op != "call" {
        notes.push(format!("per {}", r.op));
    }
    if !m.converged {
        let why = if m.why.is_empty() {
            m.stop_reason.clone()
        } else {
            m.verdict_text()
        };
        notes.push(format!("not converged: {why}"));
    } else if m.interval_source.is_some() {
        notes.push(format!("converged: {}", m.verdict_text()));
    }
    if m.converged && m.states.len() > 1 {
        notes.push(format!("rounds disagree: {}", describe_states(&m.states)));
    }
    if let Some(b) = &m.between_runs {
        notes.push(between_runs_note(m, b));
    }
    if let Some(k) = &m.kernel {
        notes.push(kernel_note(k));
    }
    if let Some(c) = &m.copies {
        notes.push(super::scaling::copies_note(c));
    }
    notes.extend(round_spread_note(m));
    if let Some(l) = describe_levels(&m.levels) {
        notes.push(format!("{l} (the rounds' speed changed during the run)"));
    } else if let Some(d) = describe_modes(&m.modes) {
        notes.push(d);
    }
    for f in &r.facts {
        notes.push(format!(
            "{}: {} {} ({})",
            f.name,
            fmt_value(f.value),
            f.unit,
            f.about
        ));
    }
    if let Some(cn) = m.canary.as_ref().filter(|c| c.changed) {
        let lo = cn.rounds_ns.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = cn
            .rounds_ns
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        notes.push(format!(
            "canary getpid {}–{} over its rounds ({:.1}%): the machine changed speed between them",
            fmt_ns(lo),
            fmt_ns(hi),
            cn.change * 100.0
        ));
    }
    if m.rounds_redone > 0 {
        notes.push(format!(
            "{} measured later: the getpid canary just before {} read more than \
             {:.0}% above the machine's base state (a slow state of the machine)",
            count(m.rounds_redone, "round", "rounds"),
            if m.rounds_redone == 1 { "it" } else { "each" },
            method::REDO_ABOVE * 100.0,
        ));
    }
    notes
}

/// The rounds' medians, when they spread by more than 2%.
fn round_spread_note(m: &Measured) -> Option<String> {
    if !(m.rounds.len() > 1 && m.round_spread > 0.02) {
        return None;
    }
    let (lo, hi) = m
        .rounds
        .iter()
        .filter_map(|r| r.median_ns)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    Some(format!(
        "round medians {}–{} (spread {:.1}%)",
        fmt_ns(lo),
        fmt_ns(hi),
        m.round_spread * 100.0
    ))
}

impl Table {
    /// The footer's lines on the run's sweeps: how many were fitted, or each fit with
    /// `--verbose`.
    fn sweeps_text(&self, run: &Run) -> String {
        let mut s = String::new();
        if !self.verbose && !run.sweeps.is_empty() {
            s += &format!(
                "{} fitted with a line through their medians (--verbose lists them)\n",
                count(run.sweeps.len(), "sweep", "sweeps")
            );
        }
        for f in run.sweeps.iter().filter(|_| self.verbose) {
            let fixed: Vec<String> =
                f.fixed.iter().map(|(k, v)| format!("{k}={v}")).collect();
            s += &format!(
                "sweep {} {}{}: {} per unit of {} (line through {} medians, intercept {}, r² {:.2})\n",
                f.name,
                f.param,
                if fixed.is_empty() { String::new() } else { format!(" ({})", fixed.join(" ")) },
                fmt_ns(f.slope_ns),
                f.param,
                f.points,
                fmt_ns(f.intercept_ns),
                f.r2
            );
        }
        s
    }

    /// The footer's lines on the machine: its canary's states, which state the figures
    /// are, its speed beside earlier runs, what it allows each kind of work, and rows
    /// whose canary moved.
    fn machine_text(&self, run: &Run) -> String {
        let mut s = String::new();
        let ms = &run.machine;
        if ms.readings > 0 {
            s += &format!(
                "machine: {} canary readings, getpid {} (p10–p90 spread {:.1}%{})\n",
                ms.readings,
                if ms.states.len() > 1 {
                    format!(
                        "in {} states: {}",
                        ms.states.len(),
                        describe_states(&ms.states)
                    )
                } else {
                    ms.states
                        .first()
                        .map_or("-".into(), |x| fmt_ns(x.median_ns))
                },
                ms.spread * 100.0,
                if ms.unsteady {
                    format!(
                        "; too unsteady for the ±{}% target",
                        run.harness.ci_target * 100.0
                    )
                } else {
                    String::new()
                }
            );
            if let Some(note) = base_state_note(ms) {
                s += &wrap(&note, self.layout.width, 2, 4);
            }
            if let (Some(p), Some(now)) = (&ms.past, ms.base_ns()) {
                s += &wrap(&past_machine_text(p, now), self.layout.width, 2, 4);
            }
        }
        if self.verbose {
            if let Some(f) = floors_text(&ms.floors, run.harness.ci_target) {
                s += &format!("over the whole run, {f}\n");
            }
        }
        for line in machine_during_rows(&run.results) {
            s += &wrap(&line, self.layout.width, 2, 4);
        }
        s
    }
}

impl Exporter for Table {
    fn plan(&mut self, rows: &[RowKey]) {
        self.planned = rows.len();
        self.layout = Layout::plan(self.layout.width, rows);
    }

    fn verbose(&mut self, on: bool) {
        self.verbose = on;
    }

    fn summary_first(&mut self) -> bool {
        self.summary_first = true;
        true
    }

    fn lead(&mut self, run: &Run) -> String {
        let s = super::summary::text(run, self.layout.width);
        let summary = match s.trim().is_empty() {
            true => String::new(),
            false => s.trim_start_matches('\n').to_string() + "\n",
        };
        summary + &self.column_header()
    }

    fn header(&mut self, run: &Run) -> String {
        let h = &run.harness;
        self.target = h.ci_target;
        // The clock's read cost is for -v: the first line stays within a terminal.
        let clock = match self.verbose {
            true => format!("clock {}", clock_text(&run.clock)),
            false => format!(
                "{} clock, {} ns steps",
                run.clock.name,
                step_text(run.clock.resolution())
            ),
        };
        let mut s = format!(
            "{clock} · profile {} (target ±{})",
            h.profile,
            pct(h.ci_target * 100.0)
        );
        if let Some(b) = h.budget_ns {
            s += &format!(", budget {}", secs(b as f64 / 1e9));
        }
        if let Some(c) = h.cpu {
            s += &format!(" · pinned to CPU {c}");
        }
        if h.load > 0 {
            s += &format!(" · load {}", h.load);
        }
        if self.planned > super::summary::HANDFUL && !self.summary_first {
            s += " · summary at the end";
        }
        let mut s = wrap(&s, self.layout.width, 0, 2);
        if let Some(held) = held_text(&run.machine.floors, h.ci_target) {
            s += &wrap(&held, self.layout.width, 0, 2);
        }
        if self.verbose {
            if let Some(f) = floors_text(&run.machine.floors, h.ci_target) {
                s += &wrap(&f, self.layout.width, 0, 2);
            }
        }
        // With the summary first, the column header comes after it ([`Table::lead`]).
        if !self.summary_first {
            s += &self.column_header();
        }
        s
    }

    fn result(&mut self, r: &BenchResult) -> String {
        let l = &self.layout;
        let key = RowKey::of(r);
        let mut out = String::new();
        // What one operation is: said once in a group's header, else in the row's note.
        let per = (r.op != "call").then(|| format!("per {}", r.op));
        if self.last.as_deref() != Some(r.name.as_str()) {
            if let Some(h) = l.group_header(&key) {
                let h = match (&per, self.verbose) {
                    (Some(per), false) => format!("{h} · {per}"),
                    _ => h,
                };
                out += &clip(&h, l.width);
                out.push('\n');
            }
            self.last = Some(r.name.clone());
        }
        let name = l.label(&key);
        let nw = l.name_w;
        let Some(m) = &r.measured else {
            let what = if r.status == Status::Skipped {
                "skipped"
            } else {
                "FAILED"
            };
            let prefix = format!("{name:<nw$} {what}: ");
            return out
                + &wrap_after(&prefix, r.reason.as_deref().unwrap_or(""), l.width, 4);
        };
        // The fastest sample of those the headline rests on.
        let s = match m.basis {
            Basis::Clean => m.clean.as_ref().unwrap_or(&m.raw),
            Basis::All => &m.raw,
        };
        let (range, rel) = ci_parts(m.ci_low_ns, m.ci_high_ns, m.median_ns);
        let c = &m.counts;
        let mut line = format!(
            "{name:<nw$} {:>MEDIAN_W$} {range:>RANGE_W$} {rel:<REL_W$} {:>ROUNDS_W$}",
            fmt_ns(m.median_ns),
            m.rounds.len(),
        );
        optional(
            &mut line,
            l,
            &fmt_ns(s.min),
            &format!("{}/{}", c.clean, c.total),
            &c.mad.to_string(),
            &c.perturbed.to_string(),
        );
        if l.columns.target {
            let target = m.target_pct.unwrap_or(self.target * 100.0);
            line += &format!(" {:>TARGET_W$}", target_text(target));
        }
        line += &format!(" {:>CONV_W$}", if m.converged { "yes" } else { "no" });
        out += line.trim_end();
        out.push('\n');
        if let Some(p) = &m.paired {
            out += &wrap(&p.note(), l.width, 4, 6);
        }
        if self.verbose {
            for text in notes(r, m) {
                out += &wrap(&text, l.width, 4, 6);
            }
            return out;
        }
        // What one operation is: in a group's header, else with --verbose (and
        // `syscost list` says it for each benchmark).
        if let Some(note) = row_note(r, self.target) {
            out += &wrap(&note, l.width, 4, 6);
        }
        out
    }

    fn footer(&mut self, run: &Run) -> String {
        let n = run.results.len();
        let count = |st: Status| run.results.iter().filter(|r| r.status == st).count();
        let unconverged = run
            .results
            .iter()
            .filter(|r| r.measured.as_ref().is_some_and(|m| !m.converged))
            .count();
        let mut s =
            format!(
            "\n{}: {} measured ({unconverged} not converged), {} skipped, {} failed{}\n",
            crate::draw::text::count(n, "result", "results"),
            count(Status::Ok),
            count(Status::Skipped),
            count(Status::Failed),
            if run.complete { "" } else { " — interrupted, partial results" }
        );
        s += &self.sweeps_text(run);
        s += &self.machine_text(run);
        let w = self.layout.width;
        let mut s = wrap_lines(&s, w);
        // The ring tables are tables: written as they are.
        for t in &run.rings {
            s += "\n";
            s += &super::ring::render(t, w);
        }
        for t in &run.scaling {
            s += "\n";
            s += &super::scaling::render(t, w);
        }
        let mut rest = String::new();
        let contrasts = super::ring::pingpong_contrasts(&run.results);
        if !contrasts.is_empty() {
            rest += "\n";
            for c in contrasts {
                rest += &c;
                rest += "\n";
            }
        }
        if self.verbose {
            rest += VERBOSE_LEGEND;
        } else {
            rest += "figure: per operation, trimmed mean of the round medians; 95% CI, ±%: where \
                  a rerun's figure lands; outl, pert: samples left out; target: the ±% the row was \
                  held to; conv: reached it. -v: every note; docs/method.md: how a figure is made.\n";
        }
        const VERBOSE_LEGEND: &str = "figure: per operation, empty-loop overhead subtracted: the 20% trimmed mean over \
              rounds of each round's median of its clean samples (no outlier, no switch or fault); a \
              sample is one batch's mean.\n\
              95% CI: where a rerun's figure lands, 95 times in 100: Yuen's interval over the round \
              medians, √2 wider than the mean's, and what the machine allows its kind, together (from a \
              row's third saved run, the spread of its runs; the note says which set it); ±%: its \
              half-width in percent of the figure.\n\
              outl: MAD outliers within their round; pert: samples with a switch or fault; \
              rnds: rounds; target: the half-width the row was held to, the profile's or √2 × what the \
              machine allows its kind, whichever is larger; conv: converged, its interval within it.\n\
              A result with fewer than 30 clean samples (or fewer than a tenth clean) is never converged: \
              its median is that of all its samples, perturbed included, as its note says.\n";
        if run.harness.kernel_events.is_some() {
            rest += "--cull kernel: pert also counts samples during which the kernel's events \
                  (a clock or other interrupt, a switch, a fault, a migration) show it did \
                  something the operation does not do.\n";
        }
        let c = self.layout.columns;
        let hidden: Vec<&str> = [
            (c.min, "min"),
            (c.samples, "samples"),
            (c.target, "target"),
            (c.outl, "outl"),
            (c.pert, "pert"),
        ]
        .into_iter()
        .filter_map(|(on, name)| (!on).then_some(name))
        .collect();
        if !hidden.is_empty() {
            rest += &format!(
                "Left out to fit {w} columns: {} (in a wider terminal, and in every other format).\n",
                hidden.join(", ")
            );
        }
        s += &wrap_lines(&rest, w);
        if !self.summary_first {
            s += &super::summary::text(run, w);
        }
        // The explanations' tables are tables too: written as they are.
        for r in &run.results {
            if let Some(e) = &r.explain {
                s += &crate::explain::render::text(&r.label(), &r.op, e, w);
            }
        }
        s
    }
}

/// What the machine did during the rows' rounds, said once for the run rather than
/// under each row: rounds measured again outside the machine's base state, and rows whose rounds
/// saw the machine at several speeds (`--verbose` names them under each row).
fn machine_during_rows(results: &[BenchResult]) -> Vec<String> {
    let measured: Vec<&Measured> =
        results.iter().filter_map(|r| r.measured.as_ref()).collect();
    let mut lines = Vec::new();
    let redone: usize = measured.iter().map(|m| m.rounds_redone as usize).sum();
    let rows = measured.iter().filter(|m| m.rounds_redone > 0).count();
    if redone > 0 {
        lines.push(format!(
            "{} measured again, in {}, read outside the machine's base \
             state (getpid over {:.0}% above it before the round)",
            count(redone, "round", "rounds"),
            count(rows, "row", "rows"),
            method::REDO_ABOVE * 100.0,
        ));
    }
    let moved = measured
        .iter()
        .filter(|m| m.canary.as_ref().is_some_and(|c| c.changed))
        .count();
    if moved > 0 {
        lines.push(format!(
            "the speed changed between the rounds of {moved} of {} (getpid moved \
             over {:.0}%; -v says which)",
            crate::draw::text::count(measured.len(), "row", "rows"),
            method::STATE_GAP * 100.0
        ));
    }
    lines
}

/// A fact's value with precision suited to its size.
fn fmt_value(v: f64) -> String {
    let a = v.abs();
    if v == v.trunc() && a < 1e15 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// The interval's two halves: the bounds in the median's unit (at most
/// [`RANGE_W`] characters, so the `±` after them stands at one column) and the
/// half-width in percent.
fn ci_parts(lo: f64, hi: f64, median: f64) -> (String, String) {
    let (scale, _) = unit_for(median);
    let rel = (hi - lo) / 2.0 / median * 100.0;
    let rel = if !rel.is_finite() {
        String::new()
    } else if rel < 0.1 {
        format!("±{rel:.2}%")
    } else if rel < 100.0 {
        format!("±{rel:.1}%")
    } else if rel < 1000.0 {
        format!("±{rel:.0}%")
    } else {
        "±>999%".into()
    };
    let mut range = format!("{:.2}–{:.2}", lo / scale, hi / scale);
    if range.chars().count() > RANGE_W {
        range = format!("{:.0}–{:.0}", lo / scale, hi / scale);
    }
    if range.chars().count() > RANGE_W {
        range = "(wide)".into();
    }
    (range, rel)
}

/// The target column: a half-width in percent with the ±% column's digits, so that a
/// converged row never reads wider than its target for the rounding alone.
fn target_text(pct: f64) -> String {
    if pct < 0.1 {
        format!("±{pct:.2}%")
    } else if pct < 100.0 {
        format!("±{pct:.1}%")
    } else {
        format!("±{pct:.0}%")
    }
}

/// The header's line on how steady the machine is, in plain words: the target each kind
/// of work is held to (the profile's where the machine allows it, else √2 × what the
/// machine allows the kind, as `harness::Held::target` decides), which the rows'
/// target column repeats. `target` is the profile's, a fraction.
pub fn held_text(floors: &[crate::results::Floor], target: f64) -> Option<String> {
    if floors.is_empty() {
        return None;
    }
    let mut wider: Vec<(f64, String)> = floors
        .iter()
        .map(|f| {
            let held = crate::harness::Held {
                kind: Some(f.kind),
                allows: f.floor_pct / 100.0,
                strict: false,
            };
            (held.target_from(target) * 100.0, f.kind)
        })
        .filter(|(t, _)| *t > target * 100.0)
        .map(|(t, k)| (t, format!("±{} {}", pct(t), kind_words(k))))
        .collect();
    if wider.is_empty() {
        return Some(
            "the machine is steady: every row is held to the profile's target".into(),
        );
    }
    wider.sort_by(|a, b| b.0.total_cmp(&a.0));
    let kinds: Vec<String> = wider.into_iter().map(|(_, w)| w).collect();
    Some(format!(
        "the machine moves: targets at first {}",
        kinds.join(", ")
    ))
}

/// A kind of work in plain words, for the header.
fn kind_words(k: crate::harness::probe::WorkKind) -> &'static str {
    use crate::harness::probe::WorkKind;
    match k {
        WorkKind::Syscall => "syscalls",
        WorkKind::User => "user code",
        WorkKind::Memory => "memory",
        WorkKind::Cross => "cross-CPU",
        WorkKind::Io => "file I/O",
    }
}

/// The machine's floors in one sentence: how much each kind of work moved between
/// rounds and processes, and what a row of that kind is held to (`target`, the
/// profile's, as a fraction). None without floors.
pub fn floors_text(floors: &[crate::results::Floor], target: f64) -> Option<String> {
    let first = floors.first()?;
    let kinds: Vec<String> = floors
        .iter()
        .map(|f| {
            let between = match (f.between_pct, f.past_runs) {
                (Some(b), Some(k)) => format!("; ±{} between {k} runs", pct(b)),
                _ => String::new(),
            };
            format!(
                "{} ±{} ({}{between})",
                f.kind.name(),
                pct(f.floor_pct),
                pct(f.spread_pct)
            )
        })
        .collect();
    let between = if floors.iter().any(|f| f.between_pct.is_some()) {
        ", or how far it moved between the machine's last runs here when more"
    } else {
        ""
    };
    Some(format!(
        "machine floors from {} probe readings, what {} rounds of each kind of work can \
         reach here{between} (how much its probe moves, p10–p90): {}; until a row has a \
         history, its interval is its rounds' own and its kind's together (√(a² + b²)), \
         held to the larger of ±{}% and √2 × its kind's",
        first.readings,
        first.rounds,
        kinds.join(", "),
        target * 100.0,
    ))
}

/// The footer's line on the machine's speed beside its earlier runs.
fn past_machine_text(p: &crate::results::PastMachine, now: f64) -> String {
    let runs = format!(
        "its last {} here under the same conditions (getpid {} in this run, {} \
         in theirs, {}–{})",
        crate::draw::text::count(p.runs, "run", "runs"),
        fmt_ns(now),
        fmt_ns(p.median_ns),
        fmt_ns(p.low_ns),
        fmt_ns(p.high_ns)
    );
    if p.differs() {
        let (pct, way) = if p.ratio > 1.0 {
            ((p.ratio - 1.0) * 100.0, "slower")
        } else {
            ((1.0 - p.ratio) * 100.0, "faster")
        };
        format!(
            "the machine ran {pct:.0}% {way} than in {runs}: every figure of this run may \
             differ from theirs by about that much before anything else changed"
        )
    } else {
        format!("the machine ran at the speed of {runs}")
    }
}

/// A clock's step in ns, with the digits that matter (0.38, 10.0).
/// The harness clock as the run's header and `syscost clocks` name it: `tsc (10.0 ns
/// steps, 24.4 ns per read)`, its step being the quantum that bounds every figure.
pub(crate) fn clock_text(clock: &crate::harness::clock::ClockInfo) -> String {
    format!(
        "{} ({} ns steps, {:.1} ns per read)",
        clock.name,
        step_text(clock.resolution()),
        clock.read_cost_ns
    )
}

pub(crate) fn step_text(ns: f64) -> String {
    if ns < 1.0 {
        format!("{ns:.2}")
    } else {
        format!("{ns:.1}")
    }
}

/// The CI column as one string: the bounds and the half-width.
#[cfg(test)]
fn ci_text(lo: f64, hi: f64, median: f64) -> String {
    let (range, rel) = ci_parts(lo, hi, median);
    format!("{range} {rel}")
}

/// What the history did to a row's interval: its runs' spread, and whether it took the
/// place of the machine's floor.
pub(super) fn between_runs_note(m: &Measured, b: &crate::results::BetweenRuns) -> String {
    let pct = |lo: f64, hi: f64| (hi - lo) / 2.0 / m.median_ns * 100.0;
    let (own_low, own_high) = m.own_interval();
    let spread = format!(
        "sd {} ({:.1}%) over {} earlier runs here",
        fmt_ns(b.sd_ns),
        b.sd_ns / m.median_ns * 100.0,
        b.runs
    );
    if m.own_ci_low_ns.is_some() {
        format!(
            "interval from the spread between runs in place of its rounds and what the \
             machine allows (±{:.2}%): {spread}; this run's rounds alone ±{:.2}%",
            pct(b.run_ci_low_ns, b.run_ci_high_ns),
            pct(own_low, own_high)
        )
    } else {
        format!(
            "interval from the spread between runs: {spread}; this run alone ±{:.2}%",
            pct(own_low, own_high)
        )
    }
}

/// One line on what culling by kernel events did.
fn kernel_note(k: &crate::harness::analyze::KernelCull) -> String {
    let causes = k
        .by_cause
        .iter()
        .map(|(c, n)| format!("{n} {c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let opt = |v: Option<f64>| v.map_or("-".to_string(), fmt_ns);
    if k.culled == 0 {
        return format!(
            "kernel events: none of {} samples held one the operation does not cause",
            k.samples
        );
    }
    format!(
        "kernel events culled {} of {} samples ({causes}); clean median {} (by rusage \
         alone {}), culled samples' median {}",
        k.culled,
        k.samples,
        opt(k.clean_median_ns),
        opt(k.rusage_median_ns),
        opt(k.culled_median_ns)
    )
}

#[cfg(test)]
#[path = "table_tests.rs"]
mod tests;
