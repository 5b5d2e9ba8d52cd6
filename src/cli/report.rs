//! `syscost report` and `syscost plot`: runs (and their comparisons) in, one HTML report
//! or one SVG graph out. The runs arrive loaded and labelled; this module only renders
//! them (see [`crate::report::html`] and [`crate::report::graphs`]) and writes the file
//! whole, through a temporary file and a rename.

use crate::compare::{Comparison, RunLabel};
use crate::error::UsageError;
use crate::report::graphs::{self, Graph};
use crate::results::Run;
use std::io::Write;
use std::path::Path;

/// Writes the self-contained HTML report of `runs` and `comparisons` to `out`.
pub fn report(
    runs: Vec<(RunLabel, Run)>,
    comparisons: Vec<Comparison>,
    out: &Path,
) -> anyhow::Result<()> {
    if runs.is_empty() {
        return Err(UsageError::new(
            "the report needs at least one run: name a run id, `last` or a JSON file",
        )
        .into());
    }
    let text = crate::report::html::html(&runs, &comparisons);
    write_atomically(out, text.as_bytes())
}

/// Writes one graph of `runs` as an SVG document to `out`, or to standard output.
pub fn plot(
    graph: Graph,
    runs: Vec<(RunLabel, Run)>,
    comparison: Option<Comparison>,
    bench: Option<&str>,
    out: Option<&Path>,
) -> anyhow::Result<()> {
    let svg = graphs::plot(graph, &runs, comparison.as_ref(), bench)?;
    write_out(out, svg.as_bytes())
}

/// Writes `bytes` whole to `-o`'s file ([`write_atomically`]), or to standard output.
pub(super) fn write_out(out: Option<&Path>, bytes: &[u8]) -> anyhow::Result<()> {
    match out {
        Some(p) => write_atomically(p, bytes),
        None => {
            let mut o = crate::report::stdout();
            o.write_all(bytes)?;
            Ok(o.flush()?)
        }
    }
}

/// Writes `bytes` to `path` as [`crate::os::target`] says: a regular file through a
/// temporary file beside it and a rename, so a reader (or an interruption) never sees
/// half a document; a device, FIFO or socket in place; `-` to standard output. A
/// failure names the flag.
fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    crate::os::target::write(path, bytes).map_err(|e| {
        UsageError::new(format!(
            "cannot write -o {}: {e}; choose a writable path",
            path.display()
        ))
        .into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_written_whole_and_errors_name_the_flag() {
        let scratch = tempfile::Builder::new()
            .prefix("syscost-report-")
            .tempdir()
            .unwrap();
        let dir = scratch.path();
        let p = dir.join("g.svg");
        write_atomically(&p, b"<svg/>").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"<svg/>");
        let leftovers = std::fs::read_dir(dir).unwrap().count();
        assert_eq!(leftovers, 1, "the temporary file was left behind");
        let bad = dir.join("no/such/dir/r.html");
        let e = write_atomically(&bad, b"x").unwrap_err();
        assert!(e.downcast_ref::<UsageError>().is_some());
        assert!(format!("{e:#}").contains("-o"));
        let e = report(vec![], vec![], &p).unwrap_err();
        assert!(e.to_string().contains("at least one run"));
    }
}
