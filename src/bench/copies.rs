//! Copies: the two parameters every benchmark whose operation can run in parallel
//! accepts (`copies=1,2,4` and `copies_as=process|thread`), which benchmarks cannot,
//! and the expansion of a benchmark's parameters with them.
//!
//! It owns the names, the values and the refusal; it does not run copies (the session
//! does, see `crate::session`); a benchmark's entry says whether it can
//! ([`super::Facts::serial`]).

use super::params::{self, Kind, ParamArg, ParamSpec, Params};
use super::Bench;
use crate::error::UsageError;

/// The parameter that runs N copies of the operation at once.
pub const COPIES: &str = "copies";
/// The parameter that says whether the copies are processes or threads.
pub const COPIES_AS: &str = "copies_as";

/// The most copies a point may ask for.
pub const MAX_COPIES: i64 = 256;

/// The two copies parameters, as `syscost list` shows them and the worker checks them.
pub const SPECS: [ParamSpec; 2] = [
    ParamSpec {
        name: COPIES,
        default: "1",
        about: "run N copies of the operation at once, one per CPU while N ≤ the CPUs \
                online (above: oversubscribed), started together behind a barrier; \
                a sweep (copies=1,2,4) gives throughput, efficiency and a scalability \
                fit",
        kind: Kind::Int {
            min: 1,
            max: MAX_COPIES,
        },
    },
    ParamSpec {
        name: COPIES_AS,
        default: "process",
        about: "each copy a process of its own, or a thread of one process (sharing its \
                address space, its descriptor table and their locks)",
        kind: Kind::Choice(&["process", "thread"]),
    },
];

/// How the copies of a point run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopiesAs {
    /// Each copy a forked process.
    Process,
    /// Each copy a thread of the measuring process.
    Thread,
}

impl CopiesAs {
    /// The parameter's word.
    pub fn word(self) -> &'static str {
        match self {
            CopiesAs::Process => "process",
            CopiesAs::Thread => "thread",
        }
    }
}

/// The copies one instance asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Copies {
    /// How many run at once.
    pub n: usize,
    /// Processes or threads.
    pub mode: CopiesAs,
}

impl Copies {
    /// The copies `p` asks for; None when it has no `copies` parameter (a run that
    /// did not ask for copies).
    pub fn of(p: &Params) -> Option<Copies> {
        let n = p.0.iter().find(|(k, _)| *k == COPIES)?.1.parse().ok()?;
        let mode = match p.0.iter().find(|(k, _)| *k == COPIES_AS) {
            Some((_, v)) if v == "thread" => CopiesAs::Thread,
            _ => CopiesAs::Process,
        };
        Some(Copies { n, mode })
    }
}

/// Why `b` cannot run as copies, or None when it can.
pub fn serial(b: &dyn Bench) -> Option<&'static str> {
    b.facts().serial
}

/// Whether `name` is one of the copies parameters.
pub fn is_copies_param(name: &str) -> bool {
    name == COPIES || name == COPIES_AS
}

/// The specification of parameter `name` of `b`: its own, or a copies parameter when
/// it can run as copies.
pub fn spec(b: &dyn Bench, name: &str) -> Option<ParamSpec> {
    b.params()
        .iter()
        .copied()
        .find(|s| s.name == name)
        .or_else(|| {
            (serial(b).is_none() && is_copies_param(name))
                .then(|| SPECS.iter().copied().find(|s| s.name == name))
                .flatten()
        })
        .or_else(|| super::harden::spec(b, name))
}

/// The one-line refusal of copies for `b`, or Ok when it can run as copies.
pub fn check(b: &dyn Bench) -> Result<(), UsageError> {
    match serial(b) {
        None => Ok(()),
        Some(why) => Err(UsageError::new(format!(
            "{} cannot run as copies ({why}); `syscost list` says which benchmarks can: \
             drop copies=/copies_as= or select others",
            b.name()
        ))),
    }
}

/// Every combination of `b`'s parameters, as [`params::expand`] makes them, with the
/// copies parameters added when `args` give them (and not otherwise: a run without
/// copies keeps its labels), and then the hardening parameters they give (see
/// [`super::harden::cross`]). A benchmark that cannot run as copies refuses them.
pub fn expand(b: &dyn Bench, args: &[ParamArg]) -> Result<Vec<Params>, UsageError> {
    let rest: Vec<ParamArg> = args
        .iter()
        .filter(|a| !super::harden::is_param(&a.name))
        .cloned()
        .collect();
    super::harden::cross(b, args, expand_copies(b, &rest)?)
}

fn expand_copies(b: &dyn Bench, args: &[ParamArg]) -> Result<Vec<Params>, UsageError> {
    let own: Vec<ParamArg> = args
        .iter()
        .filter(|a| !is_copies_param(&a.name))
        .cloned()
        .collect();
    let base = params::expand(b.name(), b.params(), &own)?;
    let asked = args.iter().any(|a| is_copies_param(&a.name));
    if !asked {
        return Ok(base);
    }
    check(b)?;
    if !args.iter().any(|a| a.name == COPIES) {
        return Err(UsageError::new(format!(
            "{}: copies_as= says how copies run; give copies=N too (copies=1,2,4)",
            b.name()
        )));
    }
    let extra = params::expand(b.name(), &SPECS, args)?;
    Ok(params::product(&base, &extra))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_sweep_and_refusal() {
        let getppid = crate::bench::find("syscall.getppid").unwrap();
        let args: Vec<ParamArg> = vec!["copies=1,2".parse().unwrap()];
        let labels: Vec<String> = expand(getppid, &args)
            .unwrap()
            .iter()
            .map(Params::label)
            .collect();
        assert_eq!(
            labels,
            [
                "via=libc copies=1 copies_as=process",
                "via=libc copies=2 copies_as=process"
            ]
        );
        assert_eq!(expand(getppid, &[]).unwrap()[0].label(), "via=libc");
        let ring = crate::bench::find("ctx.ring").unwrap();
        let e = expand(ring, &args).unwrap_err().to_string();
        assert!(
            e.contains("cannot run as copies") && !e.contains('\n'),
            "{e}"
        );
        let only_as: Vec<ParamArg> = vec!["copies_as=thread".parse().unwrap()];
        assert!(expand(getppid, &only_as).is_err());
        let p = &expand(getppid, &["copies=3".parse().unwrap(), only_as[0].clone()])
            .unwrap()[0];
        assert_eq!(
            Copies::of(p),
            Some(Copies {
                n: 3,
                mode: CopiesAs::Thread
            })
        );
    }
}
