//! Run references: how a command names a run. `12` (a history id), `last` (the newest
//! saved run), `last~2` (two before it), `host:web-17:last` or `host:web-17:last~2`
//! (the newest runs of one host, in a history many hosts save into), or the path of a
//! JSON results file. It parses and resolves; it must not change the history.

use super::{read_json, History};
use crate::compare::RunLabel;
use crate::error::UsageError;
use crate::results::Run;
use std::path::{Path, PathBuf};

/// A parsed run reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunRef {
    /// A history id.
    Id(i64),
    /// The newest saved run but N (0 is the newest).
    Latest(usize),
    /// The newest saved run of one host but N: `host:NAME:last~N`.
    HostLatest(String, usize),
    /// A results file.
    File(PathBuf),
}

impl std::str::FromStr for RunRef {
    type Err = UsageError;

    fn from_str(s: &str) -> Result<RunRef, UsageError> {
        let t = s.trim();
        if t.is_empty() {
            return Err(UsageError::new(
                "an empty run reference; use an id, last, last~N or a JSON file",
            ));
        }
        if let Some(back) = latest(s, t)? {
            return Ok(RunRef::Latest(back));
        }
        if let Some(rest) = t.strip_prefix("host:") {
            let bad = || {
                UsageError::new(format!(
                    "run reference '{s}': write host:NAME:last or host:NAME:last~N, NAME \
                     as `syscost history` shows it"
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
            "run reference '{s}': not an id, last, last~N, or an existing JSON file"
        )))
    }
}

/// `last` or `last~N` as a count back; `None` for anything else.
fn latest(s: &str, t: &str) -> Result<Option<usize>, UsageError> {
    let Some(rest) = t.strip_prefix("last") else {
        return Ok(None);
    };
    if rest.is_empty() {
        return Ok(Some(0));
    }
    let Some(n) = rest.strip_prefix('~') else {
        return Ok(None);
    };
    match n.parse::<usize>() {
        Ok(n) if n <= 1_000_000 => Ok(Some(n)),
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
) -> anyhow::Result<Vec<(RunLabel, Run)>> {
    let mut lazy = Lazy { db, open: None };
    let mut out = Vec::new();
    for s in refs {
        let r: RunRef = s.parse()?;
        let (id, run) = match r {
            RunRef::File(p) => (None, read_json(&p)?),
            RunRef::Id(id) => (Some(id), lazy.get()?.load_with(id, with_samples)?),
            RunRef::Latest(back) => nth_run(lazy.get()?, s, back, None, with_samples)?,
            RunRef::HostLatest(host, back) => {
                nth_run(lazy.get()?, s, back, Some(&host), with_samples)?
            }
        };
        let shown = match id {
            Some(id) if !s.bytes().all(|b| b.is_ascii_digit()) => format!("{s} (#{id})"),
            Some(id) => format!("#{id}"),
            None => s.clone(),
        };
        out.push((RunLabel::of(&shown, id, &run), run));
    }
    Ok(out)
}

/// The newest run (of `host`, if given) but `back`, as reference `s` names it.
fn nth_run(
    h: &History,
    s: &str,
    back: usize,
    host: Option<&str>,
    with_samples: bool,
) -> anyhow::Result<(Option<i64>, Run)> {
    let id = h.nth_latest(back, host)?.ok_or_else(|| {
        let runs = |n| crate::draw::text::count(n, "run", "runs");
        let place = h.place();
        UsageError::new(match host {
            None => format!(
                "run reference '{s}': the history at {place} holds {}",
                runs(h.count().unwrap_or(0) as usize)
            ),
            Some(host) => format!(
                "run reference '{s}': the history at {place} holds {} of host '{host}' \
                 (`syscost history --host NAME` lists them)",
                runs(h.list(None, Some(host)).map_or(0, |l| l.len()))
            ),
        })
    })?;
    Ok((Some(id), h.load_with(id, with_samples)?))
}

/// Resolves one side of a comparison to its runs, oldest first: `label:NAME[,NAME…]`
/// (every complete run in the history that carries all those labels), a range of
/// history runs `FROM..TO` (ids or `last~N`, both ends included), a list `R1,R2,…` of
/// references, or one reference.
pub fn resolve_side(
    spec: &str,
    db: Option<&Path>,
    with_samples: bool,
) -> anyhow::Result<Vec<(RunLabel, Run)>> {
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
        let (x, y) = (range_end(h, spec, from)?, range_end(h, spec, to)?);
        let (lo, hi) = (x.min(y), x.max(y));
        let mut ids: Vec<i64> = h
            .list(None, None)?
            .into_iter()
            .map(|e| e.id)
            .filter(|id| (lo..=hi).contains(id))
            .collect();
        ids.sort_unstable();
        return ids
            .into_iter()
            .map(|id| {
                let run = h.load_with(id, with_samples)?;
                Ok((RunLabel::of(&format!("#{id}"), Some(id), &run), run))
            })
            .collect();
    }
    if t.contains(',') {
        let refs: Vec<String> = t.split(',').map(|r| r.trim().to_string()).collect();
        let mut runs = resolve(&refs, db, with_samples)?;
        runs.sort_by(|a, b| {
            (a.0.started_unix_s.total_cmp(&b.0.started_unix_s)).then(a.0.id.cmp(&b.0.id))
        });
        return Ok(runs);
    }
    resolve(&[spec.to_string()], db, with_samples)
}

/// The history id an end of a range `FROM..TO` names.
fn range_end(h: &History, spec: &str, end: &str) -> anyhow::Result<i64> {
    let bad = || {
        UsageError::new(format!(
            "run range '{spec}': each end is a history id or last~N, e.g. last~5..last~3"
        ))
    };
    let id = match end.trim().parse::<RunRef>().map_err(|_| bad())? {
        RunRef::Id(id) => Some(id),
        RunRef::Latest(back) => h.nth_latest(back, None)?,
        RunRef::HostLatest(host, back) => h.nth_latest(back, Some(&host))?,
        RunRef::File(_) => return Err(bad().into()),
    };
    id.ok_or_else(|| {
        UsageError::new(format!(
            "run range '{spec}': '{end}' names no run in the history at {}",
            h.place()
        ))
        .into()
    })
}

/// Every complete run carrying all of `wanted`'s labels (comma-separated), oldest first.
fn labelled(
    spec: &str,
    wanted: &str,
    db: Option<&Path>,
    with_samples: bool,
) -> anyhow::Result<Vec<(RunLabel, Run)>> {
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
    ids.into_iter()
        .map(|id| {
            let run = h.load_with(id, with_samples)?;
            Ok((RunLabel::of(&format!("#{id}"), Some(id), &run), run))
        })
        .collect()
}
