//! The history of runs: every `run` and `repro` saved in an SQLite database, and the
//! references (`ID`, `last`, `last~N`, a JSON file) by which commands name runs.

use crate::compare::RunLabel;
use crate::error::UsageError;
use crate::report::model::Run;
use std::path::Path;

/// Resolves run references to runs: a JSON results file (as `run -o` writes).
pub fn resolve(
    refs: &[String],
    _db: Option<&Path>,
) -> anyhow::Result<Vec<(RunLabel, Run)>> {
    let mut out = Vec::new();
    for r in refs {
        let run = read_json(Path::new(r))?;
        out.push((RunLabel::of(r, None, &run), run));
    }
    Ok(out)
}

/// Reads a results document.
pub fn read_json(path: &Path) -> anyhow::Result<Run> {
    let text = std::fs::read(path)
        .map_err(|e| UsageError::new(format!("cannot read {}: {e}", path.display())))?;
    let run: Run = serde_json::from_slice(&text).map_err(|e| {
        UsageError::new(format!(
            "{}: not a syscost results document: {e}",
            path.display()
        ))
    })?;
    Ok(run)
}
