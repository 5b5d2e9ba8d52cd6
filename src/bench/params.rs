//! Benchmark parameters: their specifications, the parsing of `name=v1,v2` sweeps, and
//! the resolved values a benchmark's `prepare` reads.
//!
//! It validates user input into typed values with errors that name the fix; it must
//! not know any benchmark by name.

use crate::error::UsageError;

/// What values a parameter takes.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// An integer in an inclusive range.
    Int {
        /// The smallest value.
        min: i64,
        /// The largest value.
        max: i64,
    },
    /// A size in bytes, written as a number with an optional k, m or g suffix (powers of
    /// 1024), in an inclusive range.
    Bytes {
        /// The smallest value.
        min: u64,
        /// The largest value.
        max: u64,
    },
    /// One of a fixed set of words.
    Choice(&'static [&'static str]),
    /// A value in a shape the benchmark defines, checked by its own function (which
    /// returns the canonical form, or why the value is wrong).
    Pattern {
        /// The accepted shape, for `syscost list` (e.g. `M:S`).
        shape: &'static str,
        /// Checks one value.
        check: fn(&str) -> Result<String, String>,
    },
}

/// A parameter a benchmark accepts.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    /// Its name, as written in `--param name=...`.
    pub name: &'static str,
    /// The default: one value, or a comma-separated sweep.
    pub default: &'static str,
    /// What it means.
    pub about: &'static str,
    /// The values it takes.
    pub kind: Kind,
}

impl ParamSpec {
    /// Checks one value, returning it in canonical form (a number for sizes).
    pub fn check(&self, bench: &str, value: &str) -> Result<String, UsageError> {
        let bad = |why: String| {
            UsageError::new(format!(
                "{bench}: bad value '{value}' for parameter {}: {why} (see `syscost list {bench}`)",
                self.name
            ))
        };
        match self.kind {
            Kind::Int { min, max } => {
                let v: i64 = value.parse().map_err(|_| bad("not an integer".into()))?;
                if v < min || v > max {
                    return Err(bad(format!("allowed {min} to {max}")));
                }
                Ok(v.to_string())
            }
            Kind::Bytes { min, max } => {
                let v = parse_bytes(value)
                    .ok_or_else(|| bad("not a size like 64, 4k, 1m".into()))?;
                if v < min || v > max {
                    return Err(bad(format!("allowed {min} to {max} bytes")));
                }
                Ok(v.to_string())
            }
            Kind::Choice(words) => {
                if words.contains(&value) {
                    Ok(value.to_string())
                } else {
                    Err(bad(format!("one of {}", words.join(", "))))
                }
            }
            Kind::Pattern { check, .. } => check(value).map_err(bad),
        }
    }

    /// A short description of the accepted values, for `syscost list`.
    pub fn values(&self) -> String {
        match self.kind {
            Kind::Int { min, max } => format!("{min} to {max}"),
            Kind::Bytes { min, max } => format!("{min} to {max} bytes"),
            Kind::Choice(words) => words.join("|"),
            Kind::Pattern { shape, .. } => shape.to_string(),
        }
    }
}

/// Parses `64`, `4k`, `1m`, `2g` (powers of 1024) into bytes.
pub fn parse_bytes(s: &str) -> Option<u64> {
    let s = s.trim().to_ascii_lowercase();
    let (num, mult) = match s.strip_suffix(['k', 'm', 'g']) {
        Some(n) => (
            n,
            match s.as_bytes()[s.len() - 1] {
                b'k' => 1u64 << 10,
                b'm' => 1 << 20,
                _ => 1 << 30,
            },
        ),
        None => (s.as_str(), 1),
    };
    num.parse::<u64>().ok()?.checked_mul(mult)
}

/// A `--param name=v1,v2,...` as the user wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamArg {
    /// The parameter's name.
    pub name: String,
    /// Its values (more than one is a sweep).
    pub values: Vec<String>,
}

impl std::str::FromStr for ParamArg {
    type Err = UsageError;
    fn from_str(s: &str) -> Result<ParamArg, UsageError> {
        let (name, rest) = s.split_once('=').ok_or_else(|| {
            UsageError::new(format!(
                "--param '{s}': write it as name=value or name=v1,v2,..."
            ))
        })?;
        let name = name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(UsageError::new(format!(
                "--param '{s}': '{name}' is not a parameter name"
            )));
        }
        let values = split_values(rest)
            .map_err(|why| UsageError::new(format!("--param '{s}': {why}")))?;
        Ok(ParamArg {
            name: name.to_string(),
            values,
        })
    }
}

/// Splits `v1,v2,...` into values; an empty list or an empty item is an error.
pub fn split_values(s: &str) -> Result<Vec<String>, String> {
    let values: Vec<String> = s.split(',').map(|v| v.trim().to_string()).collect();
    if values.iter().any(|v| v.is_empty()) {
        return Err(
            "empty value in the list (write v1,v2,... with no empty item)".into(),
        );
    }
    Ok(values)
}

/// The resolved parameters of one benchmark instance: one value per parameter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params(pub Vec<(&'static str, String)>);

impl Params {
    /// The raw value of `name`.
    ///
    /// # Panics
    /// If the benchmark asks for a parameter its own spec does not declare (a bug in the
    /// benchmark, caught by the catalogue's tests).
    pub fn get(&self, name: &str) -> &str {
        self.0
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| {
                panic!("parameter {name} is not declared by this benchmark")
            })
    }

    /// An integer or byte-size parameter.
    pub fn int(&self, name: &str) -> i64 {
        self.get(name).parse().expect("validated integer")
    }

    /// `name=value` pairs joined by spaces, for display.
    pub fn label(&self) -> String {
        self.0
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Each instance of `base` extended by each of `extra`, in that order.
pub fn product(base: &[Params], extra: &[Params]) -> Vec<Params> {
    base.iter()
        .flat_map(|p| {
            extra.iter().map(move |e| {
                let mut q = p.clone();
                q.0.extend(e.0.iter().cloned());
                q
            })
        })
        .collect()
}

/// Expands a benchmark's parameters into every combination (the cartesian product of
/// each parameter's values: the user's, or else its default sweep).
pub fn expand(
    bench: &str,
    specs: &[ParamSpec],
    args: &[ParamArg],
) -> Result<Vec<Params>, UsageError> {
    let mut combos = vec![Params::default()];
    for spec in specs {
        let given = args.iter().rev().find(|a| a.name == spec.name);
        let raw: Vec<String> = match given {
            Some(a) => a.values.clone(),
            None => {
                split_values(spec.default).expect("catalogue defaults are well formed")
            }
        };
        let mut values = Vec::with_capacity(raw.len());
        for v in &raw {
            let v = spec.check(bench, v)?;
            if !values.contains(&v) {
                values.push(v);
            }
        }
        combos = combos
            .into_iter()
            .flat_map(|p| {
                values.iter().map(move |v| {
                    let mut q = p.clone();
                    q.0.push((spec.name, v.clone()));
                    q
                })
            })
            .collect();
    }
    Ok(combos)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ParamSpec] = &[
        ParamSpec {
            name: "n",
            default: "1,2",
            about: "",
            kind: Kind::Int { min: 1, max: 8 },
        },
        ParamSpec {
            name: "via",
            default: "a",
            about: "",
            kind: Kind::Choice(&["a", "b"]),
        },
    ];

    #[test]
    fn param_arg_parses_sweeps_and_rejects_malformed() {
        let a: ParamArg = "n=1,2,4".parse().unwrap();
        assert_eq!(a.values, ["1", "2", "4"]);
        assert!("n".parse::<ParamArg>().is_err());
        assert!("n=1,,2".parse::<ParamArg>().is_err());
        assert!("n=".parse::<ParamArg>().is_err());
        assert!("=3".parse::<ParamArg>().is_err());
    }

    #[test]
    fn expand_takes_defaults_and_overrides() {
        let all = expand("t", SPECS, &[]).unwrap();
        let labels: Vec<_> = all.iter().map(Params::label).collect();
        assert_eq!(labels, ["n=1 via=a", "n=2 via=a"]);
        let args = ["via=a,b".parse().unwrap(), "n=3".parse().unwrap()];
        let labels: Vec<_> = expand("t", SPECS, &args)
            .unwrap()
            .iter()
            .map(Params::label)
            .collect();
        assert_eq!(labels, ["n=3 via=a", "n=3 via=b"]);
    }

    #[test]
    fn expand_rejects_out_of_range_and_unknown_choices() {
        let e = expand("t", SPECS, &["n=9".parse().unwrap()]).unwrap_err();
        assert!(e.to_string().contains("allowed 1 to 8"), "{e}");
        assert!(!e.to_string().contains(".."), "{e}");
        let e = expand("t", SPECS, &["via=c".parse().unwrap()]).unwrap_err();
        assert!(e.to_string().contains("one of a, b"), "{e}");
        assert!(expand("t", SPECS, &["n=x".parse().unwrap()]).is_err());
    }

    #[test]
    fn bytes_parse_with_suffixes() {
        assert_eq!(parse_bytes("64"), Some(64));
        assert_eq!(parse_bytes("4k"), Some(4096));
        assert_eq!(parse_bytes("1M"), Some(1 << 20));
        assert_eq!(parse_bytes("k"), None);
        assert_eq!(parse_bytes("-1"), None);
    }
}
