//! `syscost report` and `syscost plot`: runs (and their comparisons) in, one HTML report
//! or one SVG graph out. The runs arrive loaded and labelled; this module only renders
//! them (see [`crate::report::html`] and [`crate::report::graphs`]) and writes the file
//! whole, through a temporary file and a rename.

use crate::compare::{Comparison, RunLabel};
use crate::error::UsageError;
use crate::report::graphs::{self, Graph};
use crate::report::model::Run;
use std::io::Write;
use std::path::{Path, PathBuf};

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
    match out {
        Some(p) => write_atomically(p, svg.as_bytes()),
        None => {
            let mut o = std::io::stdout().lock();
            o.write_all(svg.as_bytes())?;
            o.flush()?;
            Ok(())
        }
    }
}

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`, so a
/// reader never sees half a file.
fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = temp_beside(path);
    let written = std::fs::File::create(&tmp)
        .and_then(|mut f| {
            f.write_all(bytes)?;
            f.sync_all()
        })
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(UsageError::new(format!(
            "cannot write -o {}: {e}; choose a writable path",
            path.display()
        ))
        .into());
    }
    Ok(())
}

fn temp_beside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "report".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.{}.partial", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_written_whole_and_errors_name_the_flag() {
        let dir =
            std::env::temp_dir().join(format!("syscost-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("g.svg");
        write_atomically(&p, b"<svg/>").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"<svg/>");
        let leftovers = std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(leftovers, 1, "the temporary file was left behind");
        let bad = dir.join("no/such/dir/r.html");
        let e = write_atomically(&bad, b"x").unwrap_err();
        assert!(e.downcast_ref::<UsageError>().is_some());
        assert!(format!("{e:#}").contains("-o"));
        std::fs::remove_dir_all(&dir).unwrap();
        let e = report(vec![], vec![], &p).unwrap_err();
        assert!(e.to_string().contains("at least one run"));
    }
}
