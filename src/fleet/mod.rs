//! The fleet view: many hosts' latest runs side by side. Hosts are grouped by the facts
//! that decide costs ([`crate::compare::cost_facts`] without the host name: CPU model,
//! kernel, hypervisor, mitigations, clocksource, ...); within each group, each
//! benchmark's figures across hosts get a median and a spread, and the hosts that stand
//! out are flagged by [`odd_ones`]. This module is pure: runs in, a [`Fleet`] out; it
//! must not read the history or print ([`crate::cli`] and [`render`] do).

pub mod render;

use crate::compare::{cost_facts, key};
use crate::results::{Run, Status};
use serde::Serialize;

/// How many scaled MADs from the group's median a host must lie to stand out: the cut
/// of Iglewicz and Hoaglin's modified z-score (|0.6745 (x − median) / MAD| > 3.5),
/// "How to Detect and Handle Outliers", ASQC 1993.
pub const MAD_CUT: f64 = 3.5;

/// The fewest hosts a group needs before any of them can stand out.
pub const MIN_HOSTS: usize = 3;

/// The verdict on one group's figures of one benchmark.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spread {
    /// The median of the hosts' figures, ns.
    pub median_ns: f64,
    /// The MAD of the hosts' figures scaled to a normal SD (× 1.4826), ns.
    pub spread_ns: f64,
    /// Half the width of the band around the median that a host's interval must leave
    /// wholly to stand out: max(3.5 × spread, threshold × median), ns.
    pub band_ns: f64,
    /// Per host, in the order given: whether it stands out.
    pub odd: Vec<bool>,
}

/// The hosts that stand out among `figures` (each host's median with its 95% interval,
/// `(median, low, high)`), by a robust test that takes each host's own interval into
/// account: with `m` the median of the medians and `s` their MAD scaled to a normal SD,
/// a host stands out when its whole interval lies outside `m ± max(3.5 s, threshold·m)`.
///
/// Invariants: the median and MAD are not moved by fewer than half the hosts being odd,
/// so one slow host cannot hide itself by widening the band; a host whose own interval
/// reaches into the band is never flagged (its difference is not established); a
/// difference below `threshold` (a fraction, as `compare`'s noise threshold) is never
/// flagged, however steady the fleet; fewer than [`MIN_HOSTS`] hosts flag none. `None`
/// for no hosts or a figure that is not finite.
pub fn odd_ones(figures: &[(f64, f64, f64)], threshold: f64) -> Option<Spread> {
    let medians: Vec<f64> = figures.iter().map(|f| f.0).collect();
    let m = crate::stats::median(&medians)?;
    let s = 1.4826 * crate::stats::mad(&medians)?;
    let band = (MAD_CUT * s).max(threshold * m.abs());
    let odd = figures
        .iter()
        .map(|&(_, lo, hi)| {
            figures.len() >= MIN_HOSTS && (lo > m + band || hi < m - band)
        })
        .collect();
    Some(Spread {
        median_ns: m,
        spread_ns: s,
        band_ns: band,
        odd,
    })
}

/// A group of hosts that share the facts deciding costs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    /// A short name, G1, G2, ... (largest group first).
    pub id: String,
    /// The facts the hosts share (host name aside).
    pub facts: Vec<(String, String)>,
    /// The hosts, by name.
    pub hosts: Vec<String>,
}

impl Group {
    /// The few facts that tell groups apart at a glance.
    pub fn summary(&self) -> String {
        let get = |k: &str| {
            self.facts
                .iter()
                .find(|(n, _)| n == k)
                .map_or("unknown", |(_, v)| v.as_str())
        };
        format!(
            "{}, {}, {}, {}",
            get("cpu"),
            get("kernel"),
            get("virtualization"),
            get("clocksource")
        )
    }
}

/// One host's latest figure of one benchmark.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostFigure {
    /// The host.
    pub host: String,
    /// The run the figure comes from.
    pub run_id: i64,
    /// Its median, ns.
    pub median_ns: f64,
    /// Its interval's low end, ns.
    pub ci_low_ns: f64,
    /// Its interval's high end, ns.
    pub ci_high_ns: f64,
    /// Its median over the group's median.
    pub ratio: f64,
    /// Whether it stands out in its group.
    pub odd: bool,
}

/// One benchmark in one group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    /// The group's id.
    pub group: String,
    /// The group's median, spread and band.
    pub spread: Spread,
    /// Each host's figure.
    pub hosts: Vec<HostFigure>,
}

/// One benchmark across the groups.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The benchmark (name and parameters, as `compare` keys it).
    pub key: String,
    /// One cell per group that measured it.
    pub cells: Vec<Cell>,
}

/// The fleet view; its JSON is what `syscost fleet --format json` writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fleet {
    /// The noise threshold, a fraction.
    pub threshold: f64,
    /// The groups of hosts.
    pub groups: Vec<Group>,
    /// One row per benchmark.
    pub rows: Vec<Row>,
}

impl Fleet {
    /// Every host that stands out: (benchmark, group, host figure).
    pub fn odd_hosts(&self) -> Vec<(&str, &str, &HostFigure)> {
        self.rows
            .iter()
            .flat_map(|r| {
                r.cells.iter().flat_map(move |c| {
                    c.hosts
                        .iter()
                        .filter(|h| h.odd)
                        .map(move |h| (r.key.as_str(), c.group.as_str(), h))
                })
            })
            .collect()
    }
}

/// The fleet view of `latest` (each host's newest run: host, run id, document), for the
/// benchmarks that `filters` select (names, globs or keys; none selects every measured
/// one).
pub fn fleet(latest: &[(String, i64, Run)], filters: &[String], threshold: f64) -> Fleet {
    // Groups: by the facts, host name left out.
    let mut groups: Vec<Group> = Vec::new();
    let mut group_of: Vec<usize> = Vec::new();
    for (host, _, run) in latest {
        let facts: Vec<(String, String)> = cost_facts(run)
            .into_iter()
            .filter(|(k, _)| k != "host")
            .collect();
        let g = match groups.iter().position(|g| g.facts == facts) {
            Some(g) => g,
            None => {
                groups.push(Group {
                    id: String::new(),
                    facts,
                    hosts: Vec::new(),
                });
                groups.len() - 1
            }
        };
        groups[g].hosts.push(host.clone());
        group_of.push(g);
    }
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by_key(|&g| std::cmp::Reverse(groups[g].hosts.len()));
    for (rank, &g) in order.iter().enumerate() {
        groups[g].id = format!("G{}", rank + 1);
    }
    // Benchmarks, in the order first seen.
    let selected = |r: &crate::results::BenchResult| {
        filters.is_empty()
            || filters
                .iter()
                .any(|f| *f == key(r) || crate::bench::matches(f, &r.name))
    };
    let mut keys: Vec<String> = Vec::new();
    for (_, _, run) in latest {
        for r in run.results.iter().filter(|r| r.status == Status::Ok) {
            let k = key(r);
            if r.measured.is_some() && selected(r) && !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    let rows = keys
        .into_iter()
        .map(|k| {
            let cells = order
                .iter()
                .filter_map(|&g| {
                    let figures: Vec<(String, i64, f64, f64, f64)> = latest
                        .iter()
                        .zip(&group_of)
                        .filter(|(_, &gi)| gi == g)
                        .filter_map(|((host, id, run), _)| {
                            let m = run
                                .results
                                .iter()
                                .filter(|r| r.status == Status::Ok && key(r) == k)
                                .find_map(|r| r.measured.as_ref())?;
                            Some((
                                host.clone(),
                                *id,
                                m.median_ns,
                                m.ci_low_ns,
                                m.ci_high_ns,
                            ))
                        })
                        .collect();
                    let triples: Vec<(f64, f64, f64)> =
                        figures.iter().map(|f| (f.2, f.3, f.4)).collect();
                    let spread = odd_ones(&triples, threshold)?;
                    let hosts = figures
                        .into_iter()
                        .zip(&spread.odd)
                        .map(|((host, run_id, m, lo, hi), &odd)| HostFigure {
                            host,
                            run_id,
                            median_ns: m,
                            ci_low_ns: lo,
                            ci_high_ns: hi,
                            ratio: m / spread.median_ns,
                            odd,
                        })
                        .collect();
                    Some(Cell {
                        group: groups[g].id.clone(),
                        spread,
                        hosts,
                    })
                })
                .collect();
            Row { key: k, cells }
        })
        .collect();
    let groups = order.iter().map(|&g| groups[g].clone()).collect();
    Fleet {
        threshold,
        groups,
        rows,
    }
}

#[cfg(test)]
mod tests;
