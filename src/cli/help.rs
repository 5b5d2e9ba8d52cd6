//! What the command line says about itself: `--help` in plain text, shell completions
//! and the man page, all from the one clap definition.
//!
//! clap takes help from doc comments, so rustdoc's syntax would show in `--help`: an
//! enum whose variants link to their modules (``see [`json`]``) is given to clap
//! through [`PlainEnum`], which offers the same values with the links taken out. This
//! module writes nothing but completions and man pages; it must not parse options for
//! other commands.

use clap::builder::{PossibleValue, TypedValueParser};
use clap::ValueEnum;
use std::io::Write;
use std::marker::PhantomData;
use std::path::Path;

/// A value parser for a [`ValueEnum`] whose possible values' help is made plain text
/// ([`plain`]): the enum's rustdoc keeps its links, `--help` reads without them.
#[derive(Debug)]
pub struct PlainEnum<E>(PhantomData<fn() -> E>);

impl<E> PlainEnum<E> {
    /// The parser.
    pub fn new() -> Self {
        PlainEnum(PhantomData)
    }
}

impl<E> Default for PlainEnum<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> Clone for PlainEnum<E> {
    fn clone(&self) -> Self {
        Self::new()
    }
}

impl<E: ValueEnum + Clone + Send + Sync + 'static> TypedValueParser for PlainEnum<E> {
    type Value = E;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<E, clap::Error> {
        clap::builder::EnumValueParser::<E>::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            E::value_variants()
                .iter()
                .filter_map(ValueEnum::to_possible_value)
                .map(|v| match v.get_help().map(|h| plain(&h.to_string())) {
                    Some(h) => v.help(h),
                    None => v,
                }),
        ))
    }
}

/// Rustdoc text as plain text: a parenthesis that only points at an item,
/// ``(see [`json`])``, is left out; any other link ``[`x`]`` or `[x](url)` becomes
/// its text; remaining backticks become single quotes.
pub fn plain(text: &str) -> String {
    let mut s = text.to_string();
    // "(see [`x`])" and " (see [`x`])": nothing a command-line user can follow.
    while let Some(start) = s.find("(see [`") {
        let Some(len) = s[start..].find("`])") else {
            break;
        };
        let from = if s[..start].ends_with(' ') {
            start - 1
        } else {
            start
        };
        s.replace_range(from..start + len + 3, "");
    }
    // "[text](url)" -> "text"
    while let Some(mid) = s.find("](") {
        let (Some(open), Some(close)) = (s[..mid].rfind('['), s[mid..].find(')')) else {
            break;
        };
        let text = s[open + 1..mid].to_string();
        s.replace_range(open..mid + close + 1, &text);
    }
    s.replace("[`", "`").replace("`]", "`").replace('`', "'")
}

/// Writes `shell`'s completion script for `cmd` to `out`.
pub fn completions(
    shell: clap_complete::Shell,
    mut cmd: clap::Command,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let name = cmd.get_name().to_string();
    // clap_complete panics when a write fails: write into memory, then out (so a
    // closed pipe is an error like any other).
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, name, &mut script);
    out.write_all(&script)?;
    out.flush()
}

/// Writes the man page of `cmd` (section 1, roff) to `out`: the command's synopsis,
/// options and the list of its subcommands.
pub fn man(cmd: clap::Command, out: &mut dyn Write) -> std::io::Result<()> {
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut page)?;
    out.write_all(&page)?;
    out.flush()
}

/// Writes one man page per command into `dir`: `syscost.1`, and `syscost-run.1`,
/// `syscost-history-list.1`, … for every subcommand, recursively. Returns the files
/// written.
pub fn man_pages(cmd: clap::Command, dir: &Path) -> std::io::Result<Vec<String>> {
    fn walk(
        cmd: clap::Command,
        dir: &Path,
        out: &mut Vec<String>,
    ) -> std::io::Result<()> {
        let page = clap_mangen::Man::new(cmd.clone());
        out.push(page.get_filename());
        page.generate_to(dir)?;
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(sub.clone(), dir, out)?;
        }
        Ok(())
    }
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let mut written = Vec::new();
    walk(cmd, dir, &mut written)?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn rustdoc_links_become_plain_text() {
        assert_eq!(
            plain("One JSON document (see [`json`])"),
            "One JSON document"
        );
        assert_eq!(plain("For CI (see [`gbench`])."), "For CI.");
        assert_eq!(plain("uses [`Format`] here"), "uses 'Format' here");
        assert_eq!(
            plain("read [the memo](https://x.y/z) now"),
            "read the memo now"
        );
        assert_eq!(plain("`kernel` or `rusage`"), "'kernel' or 'rusage'");
        assert_eq!(plain("nothing to do"), "nothing to do");
    }
}
