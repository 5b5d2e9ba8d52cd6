//! `syscost run … --reference NAME=VALUE`: which rows are measured in pairs with which
//! reference row, checked before anything is measured, and the pairs measured.

use crate::bench::{Bench, Params};
use crate::error::{BenchError, UsageError};
use crate::results::Paired;
use crate::session::Session;

/// Each instance that is not the reference, with the index of its reference (the
/// instance of the same benchmark whose other parameters are the same).
#[derive(Debug, Default)]
pub struct Pairs {
    /// `(other, reference)` indexes into the instances.
    pub pairs: Vec<(usize, usize)>,
    /// `NAME=VALUE`.
    pub label: String,
}

/// The pairs `--reference` asks for over `instances`, or the usage error that says
/// what is wrong with it: not `NAME=VALUE`, a parameter no selected benchmark takes, a
/// parameter not swept, or a value not among the swept ones.
pub fn plan(
    reference: Option<&str>,
    instances: &[(&'static dyn Bench, Params)],
) -> Result<Pairs, UsageError> {
    let Some(text) = reference else {
        return Ok(Pairs::default());
    };
    let (name, value) = text
        .split_once('=')
        .filter(|(n, v)| !n.is_empty() && !v.is_empty() && !v.contains(','))
        .ok_or_else(|| {
            UsageError::new(format!(
                "--reference {text}: give one value of a swept parameter as NAME=VALUE, \
                 e.g. -p via=libc,raw --reference via=libc"
            ))
        })?;
    let takes = |b: &dyn Bench| crate::bench::copies::spec(b, name).is_some();
    if !instances.iter().any(|(b, _)| takes(*b)) {
        let names = instances
            .iter()
            .flat_map(|(b, _)| b.params().iter().map(|s| s.name));
        return Err(UsageError::new(format!(
            "--reference {text}: no selected benchmark takes a parameter '{name}'{}",
            crate::error::did_you_mean(name, names)
        )));
    }
    let value_of =
        |p: &Params| p.0.iter().find(|(n, _)| *n == name).map(|(_, v)| v.clone());
    let mut swept: Vec<String> =
        instances.iter().filter_map(|(_, p)| value_of(p)).collect();
    swept.sort();
    swept.dedup();
    if swept.len() < 2 {
        return Err(UsageError::new(format!(
            "--reference {text}: '{name}' is not swept; give it two values or more, \
             e.g. -p {name}={value},OTHER --reference {text}"
        )));
    }
    if !swept.iter().any(|v| v == value) {
        return Err(UsageError::new(format!(
            "--reference {text}: {value} is not among the swept values of {name} ({})",
            swept.join(", ")
        )));
    }
    let rest = |p: &Params| -> Vec<(&'static str, String)> {
        p.0.iter().filter(|(n, _)| *n != name).cloned().collect()
    };
    let mut pairs = Vec::new();
    for (i, (b, p)) in instances.iter().enumerate() {
        if value_of(p).is_none_or(|v| v == value) {
            continue;
        }
        let found = instances.iter().position(|(rb, rp)| {
            rb.name() == b.name()
                && value_of(rp).as_deref() == Some(value)
                && rest(rp) == rest(p)
        });
        if let Some(j) = found {
            pairs.push((i, j));
        }
    }
    Ok(Pairs {
        pairs,
        label: format!("{name}={value}"),
    })
}

/// Measures every pair, in order: one result per pair, or the error that stopped it (a
/// skip, a failure: said once on standard error); an interruption ends the pairs, and
/// the rows after them end as an interrupted run's do.
pub fn measure(
    session: &Session,
    instances: &[(&'static dyn Bench, Params)],
    pairs: &Pairs,
) -> Measured {
    let mut out = Vec::new();
    for &(i, j) in &pairs.pairs {
        let (b, other) = &instances[i];
        let one = session.pair(*b, &instances[j].1, other, &pairs.label);
        if let Err(BenchError::Interrupted) = one {
            // The rows that follow see it too, and the run ends in order.
            break;
        }
        out.push((i, one));
    }
    let keys = instances
        .iter()
        .map(|(b, p)| (b.name(), p.clone()))
        .collect();
    let measured = Measured { got: out, keys };
    measured.warn();
    measured
}

/// The pairs measured, by instance.
pub struct Measured {
    /// `(instance, what its pairs gave)`.
    got: Vec<(usize, Result<Paired, BenchError>)>,
    /// Each instance's benchmark and parameters, to find a result's instance.
    keys: Vec<(&'static str, Params)>,
}

impl Measured {
    /// Gives result `r` its paired measurement, when it has one.
    pub fn attach(&self, r: &mut crate::results::BenchResult) {
        let mine = |(i, _): &&(usize, Result<Paired, BenchError>)| {
            let (name, p) = &self.keys[*i];
            *name == r.name && p.0.iter().all(|(n, v)| r.params.get(*n) == Some(v))
        };
        if let (Some((_, Ok(p))), Some(m)) =
            (self.got.iter().find(mine), r.measured.as_mut())
        {
            m.paired = Some(p.clone());
        }
    }

    /// Says once on standard error which pairs were skipped or failed, and why.
    fn warn(&self) {
        for (i, got) in &self.got {
            if let Err(e) = got {
                let (name, p) = &self.keys[*i];
                eprintln!("warning: {name} {}: not measured in pairs: {e}", p.label());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planned(words: &[&str], reference: &str) -> Result<Pairs, UsageError> {
        let words: Vec<String> = words.iter().map(|s| s.to_string()).collect();
        let list = super::super::run::plan(&words, &[]).unwrap();
        plan(Some(reference), &list)
    }

    #[test]
    fn each_other_value_is_paired_with_the_reference() {
        let p = planned(
            &["ipc.pipe.self", "via=libc,raw", "share=one-fifo"],
            "via=libc",
        )
        .unwrap();
        assert_eq!(p.pairs, [(1, 0)], "{p:?}");
        assert_eq!(p.label, "via=libc");
    }

    #[test]
    fn a_bad_reference_is_a_usage_error_that_says_why() {
        let e = |w: &[&str], r| planned(w, r).unwrap_err().to_string();
        let unknown = e(&["ipc.pipe.self", "via=libc,raw"], "vai=libc");
        assert!(unknown.contains("no selected benchmark takes"), "{unknown}");
        let not_swept = e(&["ipc.pipe.self", "via=libc"], "via=libc");
        assert!(not_swept.contains("not swept"), "{not_swept}");
        let absent = e(&["ipc.pipe.self", "via=libc,raw"], "via=vdso");
        assert!(absent.contains("not among the swept values"), "{absent}");
        let shape = e(&["ipc.pipe.self", "via=libc,raw"], "via");
        assert!(shape.contains("NAME=VALUE"), "{shape}");
    }
}
