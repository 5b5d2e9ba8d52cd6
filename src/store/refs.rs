//! Run references: how a command names a run. `12` (a history id), `last` (the newest
//! complete run), `last~2` (the complete run two before it), `host:web-17:last` or
//! `host:web-17:last~2` (the newest complete runs of one host, in a history many hosts
//! save into), `last!` and `last!~2` (counting incomplete runs too: a run interrupted
//! by Ctrl-C is saved, but `last` passes over it), or the path of a JSON results file.
//! It parses and resolves; it must not change the history.

use super::{read_json, History};
use crate::compare::RunLabel;
use crate::error::UsageError;
use crate::results::Run;
use std::path::{Path, PathBuf};

/// How far back a `last` reference counts, and which runs it counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Back {
    /// Runs back from the newest (0 is the newest).
    pub n: usize,
    /// Whether incomplete (interrupted) runs count too: `last!~N`. `last~N` counts
    /// complete runs only.
    pub all: bool,
}

impl Back {
    /// `last~n`: complete runs only.
    pub fn complete(n: usize) -> Back {
        Back { n, all: false }
    }

    /// `last!~n`: every saved run.
    pub fn all(n: usize) -> Back {
        Back { n, all: true }
    }
}

/// A parsed run reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunRef {
    /// A history id.
    Id(i64),
    /// The newest saved run but N: `last~N` or `last!~N`.
    Latest(Back),
    /// The newest saved run of one host but N: `host:NAME:last~N` or
    /// `host:NAME:last!~N`.
    HostLatest(String, Back),
    /// A results file.
    File(PathBuf),
}

/// A `last` reference that passed over newer incomplete runs: the note a command
/// prints beside its output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The reference as written (`last`, `last~2`, `host:web-17:last`).
    pub reference: String,
    /// The complete run it names.
    pub id: i64,
    /// The incomplete runs newer than it, newest first.
    pub newer: Vec<i64>,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const SHOWN: usize = 3;
        let ids: Vec<String> =
            self.newer.iter().take(SHOWN).map(i64::to_string).collect();
        let more = self.newer.len().saturating_sub(SHOWN);
        let (runs, are, it) = match (ids.len(), more) {
            (1, _) => (format!("run {}", ids[0]), "is", "it"),
            (_, 0) => {
                let (last, rest) = ids.split_last().expect("two or more");
                (format!("runs {} and {last}", rest.join(", ")), "are", "one")
            }
            _ => (
                format!("runs {} and {more} more", ids.join(", ")),
                "are",
                "one",
            ),
        };
        write!(
            f,
            "{} is run {}: {runs}, newer, {are} incomplete (interrupted); name {it} by \
             its id, or write last! (which counts incomplete runs), to use {it}",
            self.reference, self.id
        )
    }
}

/// The runs that references name, each with the label a comparison or report shows,
/// and the `last` references that passed over newer incomplete runs.
#[derive(Debug, Default)]
pub struct Named {
    /// The runs, in the order named (a side's: oldest first).
    pub runs: Vec<(RunLabel, Run)>,
    /// The notes for `last` references that passed over incomplete runs.
    pub skipped: Vec<Skipped>,
}

impl std::str::FromStr for RunRef {
    type Err = UsageError;

    fn from_str(s: &str) -> Result<RunRef, UsageError> {
        let t = s.trim();
        if t.is_empty() {
            return Err(UsageError::new(
                "an empty run reference; use an id, last, last~N, last!~N or a JSON file",
            ));
        }
        if let Some(back) = latest(s, t)? {
            return Ok(RunRef::Latest(back));
        }
        if let Some(rest) = t.strip_prefix("host:") {
            let bad = || {
                UsageError::new(format!(
                    "run reference '{s}': write host:NAME:last or host:NAME:last~N (or \
                     last!~N), NAME as `syscost history` shows it"
                ))
            };
            let (host, which) = rest.rsplit_once(':').ok_or_else(bad)?;
            if host.is_empty() {
                return Err(bad());
            }
            return match latest(s, which)? {
                Some(back) => Ok(RunRef::HostLatest(host.to_string(), back)),
                None => Err(bad()),
            };
        }
        if t.bytes().all(|b| b.is_ascii_digit()) {
            return match t.parse::<i64>() {
                Ok(id) if id > 0 => Ok(RunRef::Id(id)),
                _ => Err(UsageError::new(format!(
                    "run reference '{s}': ids are positive numbers that `syscost history` lists"
                ))),
            };
        }
        if Path::new(t).exists() {
            return Ok(RunRef::File(PathBuf::from(t)));
        }
        Err(UsageError::new(format!(
            "run reference '{s}': not an id, last, last~N, last!~N, or an existing JSON \
             file"
        )))
    }
}

/// `last`, `last~N`, `last!` or `last!~N` as a count back; `None` for anything else.
fn latest(s: &str, t: &str) -> Result<Option<Back>, UsageError> {
    let Some(rest) = t.strip_prefix("last") else {
        return Ok(None);
    };
    let (all, rest) = match rest.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, rest),
    };
    if rest.is_empty() {
        return Ok(Some(Back { n: 0, all }));
    }
    let Some(n) = rest.strip_prefix('~') else {
        return Ok(None);
    };
    match n.parse::<usize>() {
        Ok(n) if n <= 1_000_000 => Ok(Some(Back { n, all })),
        _ => Err(UsageError::new(format!(
            "run reference '{s}': after last~ comes a count of runs back, e.g. last~1"
        ))),
    }
}

/// Opens the history lazily: only when a reference needs it.
struct Lazy<'a> {
    db: Option<&'a Path>,
    open: Option<History>,
}

impl Lazy<'_> {
    fn get(&mut self) -> anyhow::Result<&History> {
        if self.open.is_none() {
            let path = super::path_or_default(self.db)?;
            self.open = Some(History::open(&path, false)?);
        }
        Ok(self.open.as_ref().expect("opened above"))
    }
}

/// Resolves references to runs, each with the label a comparison or report shows; runs
/// from the history come without their samples unless `with_samples`.
pub fn resolve(
    refs: &[String],
    db: Option<&Path>,
    with_samples: bool,
) -> anyhow::Result<Named> {
    let mut lazy = Lazy { db, open: None };
    let mut out = Named::default();
    for s in refs {
        let r: RunRef = s.parse()?;
        let id = match r {
            RunRef::File(p) => {
                let run = read_json(&p)?;
                out.runs.push((RunLabel::of(s, None, &run), run));
                continue;
            }
            RunRef::Id(id) => id,
            RunRef::Latest(back) => nth_id(lazy.get()?, s, back, None, &mut out)?,
            RunRef::HostLatest(host, back) => {
                nth_id(lazy.get()?, s, back, Some(&host), &mut out)?
            }
        };
        let run = lazy.get()?.load_with(id, with_samples)?;
        let shown = match s.bytes().all(|b| b.is_ascii_digit()) {
            false => format!("{s} (#{id})"),
            true => format!("#{id}"),
        };
        out.runs.push((RunLabel::of(&shown, Some(id), &run), run));
    }
    Ok(out)
}

/// The id of the newest run (of `host`, if given) but `back`, as reference `s` names
/// it; a note in `out` when it passed over newer incomplete runs.
fn nth_id(
    h: &History,
    s: &str,
    back: Back,
    host: Option<&str>,
    out: &mut Named,
) -> anyhow::Result<i64> {
    let id = h.nth_latest(back.n, host, back.all)?.ok_or_else(|| {
        let entries = h.list(None, host).unwrap_or_default();
        let counted = entries.iter().filter(|e| back.all || e.complete).count();
        let runs = match back.all {
            true => crate::draw::text::count(counted, "run", "runs"),
            false => crate::draw::text::count(counted, "complete run", "complete runs"),
        };
        let place = h.place();
        let mut m = format!("run reference '{s}': the history at {place} holds {runs}");
        if let Some(host) = host {
            m += &format!(" of host '{host}' (`syscost history --host NAME` lists them)");
        }
        let broken = entries.len() - counted;
        if broken > 0 {
            m += &format!(
                ", and {broken} incomplete (last!~N counts them, or name one by its id)"
            );
        }
        UsageError::new(m)
    })?;
    note_skipped(h, s, id, back, host, out)?;
    Ok(id)
}

/// A note in `out` when `last` reference `s`, which named run `id`, passed over newer
/// incomplete runs (of `host`, if given).
fn note_skipped(
    h: &History,
    s: &str,
    id: i64,
    back: Back,
    host: Option<&str>,
    out: &mut Named,
) -> anyhow::Result<()> {
    if back.all {
        return Ok(());
    }
    let newer: Vec<i64> = h
        .list(None, host)?
        .into_iter()
        .filter(|e| e.id > id && !e.complete)
        .map(|e| e.id)
        .collect();
    if !newer.is_empty() {
        out.skipped.push(Skipped {
            reference: s.trim().to_string(),
            id,
            newer,
        });
    }
    Ok(())
}

/// Resolves one side of a comparison to its runs, oldest first: `label:NAME[,NAME…]`
/// (every complete run in the history that carries all those labels), a range of
/// history runs `FROM..TO` (ids or `last~N`, both ends included, every run between
/// them too), a list `R1,R2,…` of references, or one reference.
pub fn resolve_side(
    spec: &str,
    db: Option<&Path>,
    with_samples: bool,
) -> anyhow::Result<Named> {
    let t = spec.trim();
    // A file's name may hold '..' or ','.
    if Path::new(t).exists() {
        return resolve(&[spec.to_string()], db, with_samples);
    }
    if let Some(wanted) = t.strip_prefix("label:") {
        return labelled(spec, wanted, db, with_samples);
    }
    if let Some((from, to)) = t.split_once("..") {
        let mut lazy = Lazy { db, open: None };
        let h = lazy.get()?;
        let mut out = Named::default();
        let x = range_end(h, spec, from, &mut out)?;
        let y = range_end(h, spec, to, &mut out)?;
        let (lo, hi) = (x.min(y), x.max(y));
        let mut ids: Vec<i64> = h
            .list(None, None)?
            .into_iter()
            .map(|e| e.id)
            .filter(|id| (lo..=hi).contains(id))
            .collect();
        ids.sort_unstable();
        out.runs = load_all(h, &ids, with_samples)?;
        return Ok(out);
    }
    if t.contains(',') {
        let refs: Vec<String> = t.split(',').map(|r| r.trim().to_string()).collect();
        let mut runs = resolve(&refs, db, with_samples)?;
        runs.runs.sort_by(|a, b| {
            (a.0.started_unix_s.total_cmp(&b.0.started_unix_s)).then(a.0.id.cmp(&b.0.id))
        });
        return Ok(runs);
    }
    resolve(&[spec.to_string()], db, with_samples)
}

/// Runs `ids` of the history, each labelled by its id.
fn load_all(
    h: &History,
    ids: &[i64],
    with_samples: bool,
) -> anyhow::Result<Vec<(RunLabel, Run)>> {
    ids.iter()
        .map(|&id| {
            let run = h.load_with(id, with_samples)?;
            Ok((RunLabel::of(&format!("#{id}"), Some(id), &run), run))
        })
        .collect()
}

/// The history id an end of a range `FROM..TO` names.
fn range_end(h: &History, spec: &str, end: &str, out: &mut Named) -> anyhow::Result<i64> {
    let bad = || {
        UsageError::new(format!(
            "run range '{spec}': each end is a history id or last~N, e.g. last~5..last~3"
        ))
    };
    let (back, host) = match end.trim().parse::<RunRef>().map_err(|_| bad())? {
        RunRef::Id(id) => return Ok(id),
        RunRef::Latest(back) => (back, None),
        RunRef::HostLatest(host, back) => (back, Some(host)),
        RunRef::File(_) => return Err(bad().into()),
    };
    let Some(id) = h.nth_latest(back.n, host.as_deref(), back.all)? else {
        let which = if back.all { "run" } else { "complete run" };
        return Err(UsageError::new(format!(
            "run range '{spec}': '{end}' names no {which} in the history at {}",
            h.place()
        ))
        .into());
    };
    note_skipped(h, end, id, back, host.as_deref(), out)?;
    Ok(id)
}

/// Every complete run carrying all of `wanted`'s labels (comma-separated), oldest first.
fn labelled(
    spec: &str,
    wanted: &str,
    db: Option<&Path>,
    with_samples: bool,
) -> anyhow::Result<Named> {
    let wanted: Vec<&str> = wanted.split(',').map(str::trim).collect();
    if wanted.iter().any(|w| w.is_empty()) {
        return Err(UsageError::new(format!(
            "'{spec}': write label:NAME or label:KEY=VALUE, as given to run --label"
        ))
        .into());
    }
    let mut lazy = Lazy { db, open: None };
    let h = lazy.get()?;
    let entries = h.list(None, None)?;
    let carries = |e: &super::Entry| {
        let have: Vec<&str> = e.labels.split(',').collect();
        wanted.iter().all(|w| have.contains(w))
    };
    let mut ids: Vec<i64> = entries
        .iter()
        .filter(|e| e.complete && carries(e))
        .map(|e| e.id)
        .collect();
    if ids.is_empty() {
        let broken = entries.iter().filter(|e| !e.complete && carries(e)).count();
        return Err(UsageError::new(format!(
            "'{spec}': no complete run in the history at {} carries {}{}; `syscost \
             history` shows each run's labels",
            h.place(),
            wanted.join(" and "),
            match broken {
                0 => String::new(),
                n => format!(" ({n} interrupted ones do)"),
            }
        ))
        .into());
    }
    ids.sort_unstable();
    Ok(Named {
        runs: load_all(h, &ids, with_samples)?,
        skipped: Vec::new(),
    })
}
