//! The spec language of `trace reduce` ([described with the command](super)): [`parse_spec`] reads
//! `interval NAME = START -> END [scope]` statements into [`IntervalSpec`]s, resolving
//! event names, and says what is wrong with a bad one.

use std::collections::BTreeMap;

/// One side of an interval: an event id, maybe with an argument condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The event id.
    pub id: u32,
    /// The argument condition.
    pub arg: ArgCond,
}

/// An argument condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgCond {
    /// Any argument.
    Any,
    /// Exactly this argument.
    Is(u64),
    /// (END only) the same argument as its START.
    SameAsStart,
}

/// One kind of interval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntervalSpec {
    /// Its name.
    pub name: String,
    /// What begins it.
    pub start: Endpoint,
    /// What ends it.
    pub end: Endpoint,
    /// START and END must be events of the same thread.
    pub same_thread: bool,
}

/// Parses a spec; `names` resolves event names. Errors name the statement and what is
/// wrong.
pub fn parse_spec(
    text: &str,
    names: &BTreeMap<u32, String>,
) -> Result<Vec<IntervalSpec>, String> {
    let by_name: BTreeMap<&str, u32> =
        names.iter().map(|(id, n)| (n.as_str(), *id)).collect();
    let mut out: Vec<IntervalSpec> = Vec::new();
    for stmt in text
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .flat_map(|l| l.split(';'))
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let bad = |why: &str| format!("'{stmt}': {why}");
        let rest = stmt
            .strip_prefix("interval")
            .filter(|r| r.starts_with(char::is_whitespace))
            .ok_or_else(|| bad("a statement begins with 'interval'"))?;
        let (name, body) = rest
            .split_once('=')
            .ok_or_else(|| bad("write interval NAME = START -> END"))?;
        let name = name.trim();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
        {
            return Err(bad("the interval needs a name of letters, digits, _ - ."));
        }
        if out.iter().any(|s| s.name == name) {
            return Err(bad("this name is used twice"));
        }
        let (body, scope) = match body.split_once('[') {
            Some((b, s)) => (
                b,
                Some(
                    s.trim_end()
                        .strip_suffix(']')
                        .ok_or_else(|| bad("an option list ends with ']'"))?,
                ),
            ),
            None => (body, None),
        };
        let same_thread =
            match scope.map(|s| s.split_whitespace().collect::<Vec<_>>().join(" ")) {
                None => true,
                Some(s) if s == "same thread" => true,
                Some(s) if s == "any thread" => false,
                Some(s) => {
                    return Err(bad(&format!(
                        "unknown option [{s}] (same thread or any thread)"
                    )))
                }
            };
        let (start, end) = body
            .split_once("->")
            .ok_or_else(|| bad("write START -> END"))?;
        let (end, same_thread) = match (scope, unbracketed_scope(end, &by_name)) {
            (None, Some((end, same))) => (end, same),
            (Some(_), Some(_)) => return Err(bad("the scope is given twice")),
            (_, None) => (end, same_thread),
        };
        let start = endpoint(start.trim(), &by_name, false).map_err(|w| bad(&w))?;
        let end = endpoint(end.trim(), &by_name, true).map_err(|w| bad(&w))?;
        out.push(IntervalSpec {
            name: name.to_string(),
            start,
            end,
            same_thread,
        });
    }
    if out.is_empty() {
        return Err(
            "the spec names no interval (write interval NAME = START -> END)".into(),
        );
    }
    Ok(out)
}

/// An END followed by its scope without brackets, `end any thread`: the END and
/// whether it is `same thread`. None when the text does not end with a scope, or when
/// the whole text is an event's name.
fn unbracketed_scope<'a>(
    end: &'a str,
    names: &BTreeMap<&str, u32>,
) -> Option<(&'a str, bool)> {
    let end = end.trim();
    if names.contains_key(end) {
        return None;
    }
    let before = end.strip_suffix("thread")?.trim_end();
    for (word, same) in [("same", true), ("any", false)] {
        if let Some(ev) = before.strip_suffix(word) {
            if ev.ends_with(|c: char| c.is_whitespace() || c == ')')
                && !ev.trim().is_empty()
            {
                return Some((ev, same));
            }
        }
    }
    None
}

fn endpoint(
    text: &str,
    names: &BTreeMap<&str, u32>,
    is_end: bool,
) -> Result<Endpoint, String> {
    let (event, cond) = match text.split_once('(') {
        Some((e, c)) => (
            e.trim(),
            Some(
                c.trim()
                    .strip_suffix(')')
                    .ok_or("a condition ends with ')'")?
                    .trim(),
            ),
        ),
        None => (text, None),
    };
    if event.is_empty() {
        return Err("an event is missing".into());
    }
    if is_end && !names.contains_key(event) {
        if let Some((first, rest)) = event.split_once(char::is_whitespace) {
            if first.parse::<u32>().is_ok() || names.contains_key(first) {
                return Err(format!(
                    "'{}' after the END '{first}' is not a scope: write same thread \
                     (the default) or any thread, with or without brackets",
                    rest.trim()
                ));
            }
        }
    }
    let id = match event.parse::<u32>() {
        Ok(id) => id,
        Err(_) => *names.get(event).ok_or_else(|| {
            let known: Vec<&str> = names.keys().copied().collect();
            if known.is_empty() {
                format!(
                    "no event is named '{event}' in this trace (it names none; use ids)"
                )
            } else {
                format!(
                    "no event is named '{event}' in this trace (it names {})",
                    known.join(", ")
                )
            }
        })?,
    };
    let arg = match cond {
        None => ArgCond::Any,
        Some(c) => {
            let v = c
                .strip_prefix("arg")
                .map(str::trim_start)
                .and_then(|c| c.strip_prefix('='))
                .map(str::trim)
                .ok_or("a condition is (arg=N) or, on an END, (arg=start)")?;
            if v == "start" {
                if !is_end {
                    return Err("(arg=start) belongs on the END".into());
                }
                ArgCond::SameAsStart
            } else {
                ArgCond::Is(
                    v.parse()
                        .map_err(|_| format!("'{v}' is not an argument value"))?,
                )
            }
        }
    };
    Ok(Endpoint { id, arg })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> BTreeMap<u32, String> {
        BTreeMap::from([(1, "begin".to_string()), (2, "end".to_string())])
    }

    #[test]
    fn the_scope_reads_with_or_without_brackets() {
        for (text, same) in [
            ("interval a = begin -> end", true),
            ("interval a = begin -> end same thread", true),
            ("interval a = begin -> end [same thread]", true),
            ("interval a = begin -> end any thread", false),
            ("interval a = begin -> end  any   thread ", false),
            ("interval a = begin -> end [any thread]", false),
            ("interval a = begin -> end(arg=start) any thread", false),
            ("interval a = 1 -> 2 any thread; interval b = 1 -> 2", false),
        ] {
            let s = parse_spec(text, &names()).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(s[0].same_thread, same, "{text}");
            assert_eq!(s[0].end.id, 2, "{text}");
        }
        // An event whose name ends like a scope is the event.
        let odd =
            BTreeMap::from([(1, "begin".to_string()), (2, "end any thread".to_string())]);
        let s = parse_spec("interval a = begin -> end any thread", &odd).unwrap();
        assert!(s[0].same_thread && s[0].end.id == 2);
        let e = parse_spec("interval a = 1 -> 2 any thread [same thread]", &names());
        assert!(e.unwrap_err().contains("twice"));
    }

    #[test]
    fn specs_parse_and_bad_ones_say_what_is_wrong() {
        let s = parse_spec(
            "# two kinds\ninterval call = begin -> end\ninterval tagged = 1(arg=3) -> 2(arg=start) [any thread]",
            &names(),
        )
        .unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(
            s[0].start,
            Endpoint {
                id: 1,
                arg: ArgCond::Any
            }
        );
        assert!(s[0].same_thread && !s[1].same_thread);
        assert_eq!(s[1].start.arg, ArgCond::Is(3));
        assert_eq!(s[1].end.arg, ArgCond::SameAsStart);
        for (bad, says) in [
            ("", "names no interval"),
            ("intervalx = 1 -> 2", "begins with 'interval'"),
            ("interval = 1 -> 2", "name"),
            ("interval a = 1 2", "START -> END"),
            ("interval a = nope -> 2", "no event is named 'nope'"),
            ("interval a = 1(arg=start) -> 2", "belongs on the END"),
            ("interval a = 1 -> 2 [sideways]", "unknown option"),
            (
                "interval a = 1 -> end sideways",
                "'sideways' after the END 'end'",
            ),
            ("interval a = 1 -> end any threads", "is not a scope"),
            ("interval a = 1 -> 2; interval a = 1 -> 2", "used twice"),
            ("interval a = 1(arg=x) -> 2", "not an argument"),
        ] {
            let e = parse_spec(bad, &names()).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }
}
