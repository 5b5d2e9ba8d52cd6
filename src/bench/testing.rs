//! What the families' tests share: a benchmark prepared and measured in the smoke
//! profile, as the CLI would, and readings of what it gave.

use super::{params, Bench, Fact, Params, Prepared, RunContext};
use crate::error::BenchError;
use crate::harness::clock::Monotonic;
use crate::harness::{EmptyLoop, Harness, Measurement, Profile, Settings};

/// The smoke profile's harness on the monotonic clock.
pub fn harness() -> Harness<'static> {
    Harness::new(&Monotonic, Settings::new(Profile::SMOKE, 25.0))
}

/// The first instance of `b` for `args` (`name=value`, as on the command line) over
/// its defaults.
pub fn params_with(b: &dyn Bench, args: &[&str]) -> Params {
    let args: Vec<_> = args.iter().map(|a| a.parse().unwrap()).collect();
    params::expand(b.name(), b.params(), &args)
        .unwrap()
        .remove(0)
}

/// The parameters of `b` with `set` overriding the defaults (first of a sweep).
pub fn params_of(b: &dyn Bench, set: &[(&str, &str)]) -> Params {
    let mut p = params::expand(b.name(), b.params(), &[]).unwrap().remove(0);
    for (k, v) in set {
        p.0.iter_mut()
            .find(|(n, _)| n == k)
            .unwrap_or_else(|| panic!("{}: no parameter {k}", b.name()))
            .1 = v.to_string();
    }
    p
}

/// Prepares `b` with `p` in `cx`: when it is skipped, the reason (printed, and not
/// empty); a failure panics.
pub fn prepare(b: &dyn Bench, p: &Params, cx: &RunContext) -> Result<Prepared, String> {
    match b.prepare(p, cx) {
        Ok(prep) => Ok(prep),
        Err(BenchError::Skip(why)) => {
            assert!(!why.is_empty(), "{}: a skip needs a reason", b.name());
            eprintln!("{} {}: skipped: {why}", b.name(), p.label());
            Err(why)
        }
        Err(e) => panic!("{} {}: {e}", b.name(), p.label()),
    }
}

/// Measures `prep` in the smoke profile, drops its body, calls `between`, then runs its
/// after step: the measurement and that step's facts (none without one).
pub fn measure_then(prep: Prepared, between: impl FnOnce()) -> (Measurement, Vec<Fact>) {
    let h = harness();
    let Prepared {
        mut body,
        plan,
        after,
        ..
    } = prep;
    let m = h
        .measure(body.as_mut(), &mut EmptyLoop, plan)
        .unwrap_or_else(|e| panic!("measure: {e}"));
    drop(body);
    between();
    let facts = after.map_or_else(Vec::new, |f| {
        f(&h, &m).unwrap_or_else(|e| panic!("after: {e}"))
    });
    (m, facts)
}

/// [`measure_then`] with nothing between.
pub fn measure(prep: Prepared) -> (Measurement, Vec<Fact>) {
    measure_then(prep, || ())
}

/// Measures `b` with `set` over its defaults; None when it is skipped.
pub fn smoke(b: &dyn Bench, set: &[(&str, &str)]) -> Option<(Measurement, Vec<Fact>)> {
    let prep = prepare(b, &params_of(b, set), &RunContext::default()).ok()?;
    Some(measure(prep))
}

/// The headline median in ns.
pub fn median(m: &Measurement) -> f64 {
    m.analysis.headline().expect("samples").median
}

/// Asserts a plausible per-operation cost: above zero, below `max_ns`.
pub fn sane(b: &dyn Bench, set: &[(&str, &str)], max_ns: f64) -> Option<Vec<Fact>> {
    let (m, facts) = smoke(b, set)?;
    let med = median(&m);
    assert!(
        med > 0.0 && med < max_ns,
        "{} {set:?}: median {med} ns",
        b.name()
    );
    Some(facts)
}

/// The value of fact `name`.
pub fn fact(facts: &[Fact], name: &str) -> f64 {
    facts
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no fact {name} in {facts:?}"))
        .value
}

/// `b` prepared with `set` over its defaults, in a run of its own; a skip panics.
pub fn prepared(b: &dyn Bench, set: &[(&str, &str)]) -> Prepared {
    prepare(b, &params_of(b, set), &RunContext::default()).unwrap()
}

/// Parameter values as given, `name` and value.
pub fn kv(pairs: &[(&'static str, &str)]) -> Params {
    Params(pairs.iter().map(|(k, v)| (*k, v.to_string())).collect())
}
