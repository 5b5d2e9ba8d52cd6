//! The terminal table's layout, computed from the names selected before anything is
//! measured: how wide the name column is, which optional columns fit the terminal, how
//! each row is labelled, and the word wrapping of the lines beneath rows.
//!
//! A benchmark measured with several parameter combinations is a *group*: a header line
//! names it, the parameters its rows share (defaults included, once) and the ones that
//! vary, and each row is labelled by the varying values alone, aligned as columns. A
//! benchmark measured once is labelled by its name and any parameter set away from its
//! default (`mem.brk n=64`); its defaults are in `syscost list`. Only the table's text
//! changes: JSON, CSV and the history keep every name and parameter.
//!
//! It measures nothing and knows no benchmark by name; defaults come from the catalogue.

use crate::bench::{Bench, Params};
use crate::draw::text::clip;
use crate::results::BenchResult;
use std::collections::{BTreeMap, HashMap};

/// One row to be laid out: a benchmark's name and its parameter values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowKey {
    /// `family.name`.
    pub name: String,
    /// Parameter values by name.
    pub params: BTreeMap<String, String>,
}

impl RowKey {
    /// The key of an instance about to be measured.
    pub fn planned(b: &dyn Bench, p: &Params) -> RowKey {
        RowKey {
            name: b.name().to_string(),
            params: p
                .0
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        }
    }

    /// The key of a result.
    pub fn of(r: &BenchResult) -> RowKey {
        RowKey {
            name: r.name.clone(),
            params: r.params.clone(),
        }
    }
}

/// Whether `value` is the catalogue's single default of `bench`'s parameter `key` (a
/// default that sweeps several values is never left out).
pub fn is_default(bench: &str, key: &str, value: &str) -> bool {
    let Some(b) = crate::bench::find(bench) else {
        return false;
    };
    b.params().iter().any(|s| {
        s.name == key
            && !s.default.contains(',')
            && s.check(bench, s.default).is_ok_and(|d| d == value)
    })
}

/// `name` and its parameters away from their defaults, `k=v` (for one line such as
/// the progress bar's).
pub fn short_name(name: &str, params: &[(&str, &str)]) -> String {
    let mut s = name.to_string();
    for (k, v) in params {
        if !is_default(name, k, v) {
            s += &format!(" {k}={v}");
        }
    }
    s
}

/// The parameter names of `bench` in the order its specification gives them (names it
/// does not declare last, alphabetically).
fn spec_order(bench: &str, keys: impl IntoIterator<Item = String>) -> Vec<String> {
    let order: Vec<&str> = crate::bench::find(bench)
        .map(|b| b.params().iter().map(|s| s.name).collect())
        .unwrap_or_default();
    let mut keys: Vec<String> = keys.into_iter().collect();
    keys.sort_by_key(|k| {
        (
            order.iter().position(|o| o == k).unwrap_or(usize::MAX),
            k.clone(),
        )
    });
    keys
}

/// A benchmark's rows as the table shows them.
#[derive(Debug, Clone, Default)]
struct Group {
    /// The parameters whose values differ between rows, in the specification's order,
    /// with the width of their widest value.
    varying: Vec<(String, usize)>,
    /// The parameters every row shares, in the specification's order.
    fixed: Vec<(String, String)>,
    /// Whether rows write `key=value` (short enough) or the values alone under the
    /// keys named in the group's header.
    keyed: bool,
}

/// A group's rows write `key=value` when their labels stay this short.
pub const KEYED_MAX: usize = 24;

impl Group {
    fn of(name: &str, rows: &[&RowKey]) -> Group {
        let keys = spec_order(
            name,
            rows.iter()
                .flat_map(|r| r.params.keys().cloned())
                .collect::<std::collections::BTreeSet<_>>(),
        );
        let mut g = Group::default();
        for k in keys {
            let values: Vec<&str> = rows
                .iter()
                .map(|r| r.params.get(&k).map_or("-", String::as_str))
                .collect();
            if rows.len() > 1 && values.iter().any(|v| *v != values[0]) {
                let w = values.iter().map(|v| v.chars().count()).max().unwrap_or(1);
                g.varying.push((k, w));
            } else {
                g.fixed.push((k, values[0].to_string()));
            }
        }
        let keyed_w = 2 + g
            .varying
            .iter()
            .map(|(k, w)| k.len() + 2 + w)
            .sum::<usize>();
        g.keyed = keyed_w <= KEYED_MAX + 1;
        g
    }
}

/// The optional columns, in the order they are given up when the terminal is narrow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Columns {
    /// The fastest clean sample.
    pub min: bool,
    /// Outliers rejected.
    pub outl: bool,
    /// Perturbed samples.
    pub pert: bool,
    /// Clean and total samples.
    pub samples: bool,
    /// The target the row was held to: given up last.
    pub target: bool,
}

/// Widths of the fixed columns (each is preceded by one space).
pub const MEDIAN_W: usize = 9;
/// The interval's bounds, right-aligned so that the `±` after them stands at one column.
pub const RANGE_W: usize = 13;
/// The interval's half-width in percent (`±0.03%`, `±12.5%`).
pub const REL_W: usize = 7;
/// The rounds column.
pub const ROUNDS_W: usize = 4;
/// The target column: the half-width the row was held to (`±0.5%`, `±39%`).
pub const TARGET_W: usize = 6;
/// The converged column.
pub const CONV_W: usize = 4;
/// The fastest sample's column.
pub const MIN_W: usize = 9;
/// The samples column (`clean/total`).
pub const SAMPLES_W: usize = 11;
/// The outlier and perturbed columns.
pub const COUNT_W: usize = 4;
/// The narrowest name column, however narrow the terminal.
pub const MIN_NAME_W: usize = 12;
/// The name column's width when nothing was planned.
pub const UNPLANNED_NAME_W: usize = 24;

impl Columns {
    /// Every column.
    pub const ALL: Columns = Columns {
        min: true,
        outl: true,
        pert: true,
        samples: true,
        target: true,
    };

    /// The columns that remain after giving up the first `n` (min, outl, pert,
    /// samples, target).
    fn dropping(n: usize) -> Columns {
        Columns {
            min: n < 1,
            outl: n < 2,
            pert: n < 3,
            samples: n < 4,
            target: n < 5,
        }
    }

    /// The width of everything right of the name column.
    pub fn width(&self) -> usize {
        let mut w = 1 + MEDIAN_W + 1 + RANGE_W + 1 + REL_W + 1 + ROUNDS_W + 1 + CONV_W;
        for (on, cw) in [
            (self.min, MIN_W),
            (self.outl, COUNT_W),
            (self.pert, COUNT_W),
            (self.samples, SAMPLES_W),
            (self.target, TARGET_W),
        ] {
            if on {
                w += 1 + cw;
            }
        }
        w
    }
}

/// The table's layout for one run.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The width no line may exceed.
    pub width: usize,
    /// The name column's width.
    pub name_w: usize,
    /// The optional columns shown.
    pub columns: Columns,
    groups: HashMap<String, Group>,
}

impl Layout {
    /// A layout for rows not known in advance: a fixed name column, as many columns as
    /// fit `width`.
    pub fn unplanned(width: usize) -> Layout {
        Layout::fit(width, UNPLANNED_NAME_W, HashMap::new())
    }

    /// The layout for `rows` (the whole selection, in any order) at `width` columns.
    pub fn plan(width: usize, rows: &[RowKey]) -> Layout {
        let mut by_name: BTreeMap<&str, Vec<&RowKey>> = BTreeMap::new();
        for r in rows {
            by_name.entry(&r.name).or_default().push(r);
        }
        let groups: HashMap<String, Group> = by_name
            .iter()
            .map(|(n, rs)| (n.to_string(), Group::of(n, rs)))
            .collect();
        let mut layout = Layout::fit(width, 0, groups);
        let need = rows
            .iter()
            .map(|r| layout.full_label(r).chars().count())
            .max()
            .unwrap_or(UNPLANNED_NAME_W)
            .max("benchmark".len());
        layout = Layout::fit(width, need, layout.groups);
        layout
    }

    /// The most columns with which a name column of `need` fits `width`; with none of
    /// the optional ones but the target, the name column shrinks to what is left (at
    /// least [`MIN_NAME_W`]), and the target goes only when even that does not fit.
    fn fit(width: usize, need: usize, groups: HashMap<String, Group>) -> Layout {
        for n in 0..=4 {
            let columns = Columns::dropping(n);
            if need + columns.width() <= width {
                return Layout {
                    width,
                    name_w: need,
                    columns,
                    groups,
                };
            }
        }
        let mut columns = Columns::dropping(4);
        if width < MIN_NAME_W + columns.width() {
            columns = Columns::dropping(5);
        }
        Layout {
            width,
            name_w: width.saturating_sub(columns.width()).max(MIN_NAME_W),
            columns,
            groups,
        }
    }

    /// The row's label before any shortening.
    fn full_label(&self, r: &RowKey) -> String {
        match self.groups.get(&r.name) {
            Some(g) if !g.varying.is_empty() => {
                let mut s = String::from(" ");
                for (k, w) in &g.varying {
                    let v = r.params.get(k).map_or("-", String::as_str);
                    if g.keyed {
                        let w = w + k.len() + 1;
                        s += &format!(" {:<w$}", format!("{k}={v}"));
                    } else {
                        s += &format!(" {v:<w$}");
                    }
                }
                // A parameter the plan did not know (a result from elsewhere).
                for (k, v) in &r.params {
                    let known = g.varying.iter().any(|(x, _)| x == k)
                        || g.fixed.iter().any(|(x, y)| x == k && y == v);
                    if !known {
                        s += &format!(" {k}={v}");
                    }
                }
                s.trim_end().to_string()
            }
            _ => {
                let keys = spec_order(&r.name, r.params.keys().cloned());
                let pairs: Vec<(&str, &str)> = keys
                    .iter()
                    .map(|k| (k.as_str(), r.params[k].as_str()))
                    .collect();
                short_name(&r.name, &pairs)
            }
        }
    }

    /// The row's label, shortened with `…` to the name column.
    pub fn label(&self, r: &RowKey) -> String {
        clip(&self.full_label(r), self.name_w)
    }

    /// The line that opens a group of rows of `r`'s benchmark, if it has one:
    /// the name, the varying parameters when the labels beneath show their values
    /// alone, and the shared ones.
    pub fn group_header(&self, r: &RowKey) -> Option<String> {
        let g = self.groups.get(&r.name).filter(|g| !g.varying.is_empty())?;
        let keys: Vec<&str> = g.varying.iter().map(|(k, _)| k.as_str()).collect();
        let mut s = if g.keyed {
            r.name.clone()
        } else {
            format!("{}: {}", r.name, keys.join(" "))
        };
        if !g.fixed.is_empty() {
            let fixed: Vec<String> =
                g.fixed.iter().map(|(k, v)| format!("{k}={v}")).collect();
            s += &format!(" · {}", fixed.join(" "));
        }
        Some(clip(&s, self.width))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str, params: &[(&str, &str)]) -> RowKey {
        RowKey {
            name: name.into(),
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn defaults_leave_the_name_and_varying_values_become_columns() {
        let rows = [
            key("syscall.getpid", &[]),
            key("mem.brk", &[("n", "64")]),
            key("proc.fork", &[("rss", "0")]),
            key(
                "ctx.pingpong",
                &[
                    ("mechanism", "pipe"),
                    ("placement", "same-cpu"),
                    ("kind", "process"),
                    ("fpu", "clean"),
                ],
            ),
            key(
                "ctx.pingpong",
                &[
                    ("mechanism", "eventfd"),
                    ("placement", "cross-cpu"),
                    ("kind", "process"),
                    ("fpu", "clean"),
                ],
            ),
        ];
        let l = Layout::plan(100, &rows);
        assert_eq!(l.label(&rows[0]), "syscall.getpid");
        assert_eq!(l.label(&rows[1]), "mem.brk n=64");
        assert_eq!(l.label(&rows[2]), "proc.fork");
        assert_eq!(l.label(&rows[3]), "  pipe    same-cpu");
        assert_eq!(l.label(&rows[4]), "  eventfd cross-cpu");
        assert_eq!(
            l.group_header(&rows[3]).unwrap(),
            "ctx.pingpong: mechanism placement · kind=process fpu=clean"
        );
        assert_eq!(l.group_header(&rows[0]), None);
        let args = [
            key("syscall.args", &[("args", "0")]),
            key("syscall.args", &[("args", "6")]),
        ];
        let la = Layout::plan(100, &args);
        assert_eq!(la.label(&args[0]), "  args=0");
        assert_eq!(la.group_header(&args[0]).unwrap(), "syscall.args");
        assert_eq!(l.columns, Columns::ALL);
        assert_eq!(l.name_w, "  eventfd cross-cpu".len());
    }

    #[test]
    fn a_narrow_terminal_gives_up_columns_then_shortens_names() {
        let rows = [key("syscall.getpid.indirect", &[])];
        let wide = Layout::plan(110, &rows);
        assert_eq!(wide.columns, Columns::ALL);
        let narrow = Layout::plan(80, &rows);
        assert!(!narrow.columns.min && !narrow.columns.samples && narrow.columns.target);
        assert!(narrow.name_w + narrow.columns.width() <= 80);
        let tiny = Layout::plan(40, &rows);
        assert_eq!(tiny.name_w, MIN_NAME_W);
        assert_eq!(tiny.label(&rows[0]).chars().count(), MIN_NAME_W);
        assert!(tiny.label(&rows[0]).ends_with('…'));
    }
}
