//! Rendering results: one small exporter per format, chosen by [`Format`], and the
//! [`Output`] that writes them as each benchmark finishes.
//!
//! Table, CSV and Markdown write a header, one block per result, and a footer. JSON,
//! Google Benchmark's JSON ([`gbench`]) and the Prometheus text format ([`prometheus`])
//! are whole documents. To a file they are written through a temporary file and a
//! rename, so a reader never sees half of one; JSON is written twice: when the run
//! begins (empty, `complete: false`, so the file is valid from the start) and when it
//! ends or is interrupted (with every result). The cost is linear in the run's size.

pub mod csv;
pub mod folded;
pub mod gbench;
pub mod graphs;
pub mod harden;
pub mod html;
pub mod json;
pub mod layout;
pub mod markdown;
pub mod prometheus;
pub mod ring;
pub mod scaling;
pub mod summary;
pub mod table;

/// A writer whose errors name what they were writing to ("writing standard output:
/// No space left on device").
pub struct Named<W> {
    inner: W,
    name: &'static str,
}

impl<W: std::io::Write> Named<W> {
    /// Wraps `inner`, called `name` in its errors.
    pub fn new(inner: W, name: &'static str) -> Named<W> {
        Named { inner, name }
    }

    fn name_it(&self, e: std::io::Error) -> std::io::Error {
        std::io::Error::new(e.kind(), format!("writing {}: {e}", self.name))
    }
}

impl<W: std::io::Write> std::io::Write for Named<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write(buf).map_err(|e| self.name_it(e))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush().map_err(|e| self.name_it(e))
    }
}

/// Standard output, locked, with errors that say so.
pub fn stdout() -> Named<std::io::StdoutLock<'static>> {
    Named::new(std::io::stdout().lock(), "standard output")
}

#[cfg(test)]
mod snapshot_tests;
#[cfg(test)]
mod table_width_tests;

use crate::error::UsageError;
use crate::os::target;
use crate::results::{BenchResult, Run};
use std::io::Write;
use std::path::{Path, PathBuf};

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned text for a terminal.
    Table,
    /// One JSON document (see [`json`]).
    Json,
    /// Comma-separated values, one row per result.
    Csv,
    /// A GitHub-flavoured Markdown table.
    Markdown,
    /// Google Benchmark's JSON, for the dashboards and CI actions that read it (see
    /// [`gbench`]).
    Gbench,
    /// The Prometheus text exposition format, for node_exporter's textfile collector
    /// (see [`prometheus`]).
    Prometheus,
    /// Folded stacks of explained results (`syscost explain`), one line per stack,
    /// for flame-graph tools (see [`crate::explain::folded`]).
    Folded,
}

impl Format {
    /// The format an output file's name asks for by its extension (`.json`, `.csv`,
    /// `.md`, `.prom`, `.folded`), for a command given `-o` without `--format`; `None`
    /// for any other name.
    pub fn of_file_name(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "json" => Format::Json,
            "csv" => Format::Csv,
            "md" | "markdown" => Format::Markdown,
            "prom" => Format::Prometheus,
            "folded" => Format::Folded,
            _ => return None,
        })
    }

    /// `--format` if given, else what the output file's name asks for, else `default`.
    pub fn chosen(
        given: Option<Format>,
        output: Option<&Path>,
        default: Format,
    ) -> Format {
        given
            .or_else(|| output.and_then(Format::of_file_name))
            .unwrap_or(default)
    }
}

/// A streaming exporter: text for the start, each result, and the end of a run.
pub trait Exporter {
    /// The rows about to be written (every one selected), before [`Exporter::header`]:
    /// a format whose columns depend on them lays itself out now, so rows written as
    /// they finish line up.
    fn plan(&mut self, rows: &[layout::RowKey]) {
        let _ = rows;
    }
    /// Every note under each result rather than the short form (`--verbose`); a
    /// format that has no short form ignores it.
    fn verbose(&mut self, on: bool) {
        let _ = on;
    }
    /// Puts the run's summary (the figures people quote) before the results rather
    /// than after them, as a file written whole at the end can: [`Exporter::lead`]
    /// then gives it and the footer leaves it out. False for a format without one.
    fn summary_first(&mut self) -> bool {
        false
    }
    /// The summary, between the header and the first result, after
    /// [`Exporter::summary_first`].
    fn lead(&mut self, run: &Run) -> String {
        let _ = run;
        String::new()
    }
    /// Text before the first result.
    fn header(&mut self, run: &Run) -> String;
    /// Text for one result.
    fn result(&mut self, r: &BenchResult) -> String;
    /// Text after the last result.
    fn footer(&mut self, run: &Run) -> String;
}

/// The exporter of `format`; a table keeps within `width` columns.
fn exporter(format: Format, width: usize) -> Option<Box<dyn Exporter>> {
    match format {
        Format::Table => Some(Box::new(table::Table::new(width))),
        Format::Csv => Some(Box::new(csv::Csv)),
        Format::Markdown => Some(Box::new(markdown::Markdown::default())),
        Format::Folded => Some(Box::new(folded::Folded)),
        Format::Json | Format::Gbench | Format::Prometheus => None,
    }
}

/// A whole-document format's text for `run`.
fn document(format: Format, run: &Run, pretty: bool) -> std::io::Result<Vec<u8>> {
    let mut text = match format {
        Format::Gbench => serde_json::to_vec_pretty(&gbench::document(run))?,
        Format::Prometheus => return Ok(prometheus::exposition(run).into_bytes()),
        _ if pretty => serde_json::to_vec_pretty(run)?,
        _ => serde_json::to_vec(run)?,
    };
    text.push(b'\n');
    Ok(text)
}

/// Where results go, in which format.
pub struct Output {
    format: Format,
    exporter: Option<Box<dyn Exporter>>,
    /// The `-o` path and what it names (None: standard output).
    path: Option<(PathBuf, target::Target)>,
    /// The streaming formats' file, from [`Output::begin`] to [`Output::finish`].
    file: Option<target::OutFile>,
    /// A file that puts the summary first: the header and the rows written so far,
    /// held until [`Output::finish`] knows the summary.
    held: Option<(Vec<u8>, Vec<u8>)>,
}

impl Output {
    /// Opens the destination: a file (as [`target`] says what the path is) or standard
    /// output (`-o -` too). Whether the file can be written is checked now, so an
    /// unwritable path fails before anything is measured, leaving nothing behind; the
    /// file itself is written only when the run begins ([`Output::begin`]), so a run
    /// that fails to start leaves no empty file.
    ///
    /// A regular file is never truncated: it is replaced by a rename when the document
    /// is ready (a textfile collector keeps serving the previous run meanwhile). A
    /// device, FIFO or socket is written in place, and a JSON document only once, at
    /// the end (a reader such as `jq` then gets one whole document).
    pub fn open(format: Format, path: Option<&Path>) -> Result<Output, UsageError> {
        let refuse = |p: &Path, e: std::io::Error| {
            UsageError::new(format!(
                "cannot write -o {}: {e}; choose a writable path",
                p.display()
            ))
        };
        let path = match path {
            Some(p) => {
                let t = target::Target::of(p).map_err(|e| refuse(p, e))?;
                t.check().map_err(|e| refuse(p, e))?;
                match t {
                    target::Target::Stdout => None,
                    t => Some((p.to_path_buf(), t)),
                }
            }
            None => None,
        };
        // Standard output's terminal sets the table's width; a file's is COLUMNS or
        // the default.
        let width = match path {
            None => crate::os::term::stdout_width(),
            Some(_) => crate::os::term::file_width(),
        };
        let mut exporter = exporter(format, width);
        // A file replaced whole at the end can have its summary at the top, where a
        // reader of a file looks first; a terminal's is the last thing printed.
        let whole = path.as_ref().is_some_and(|(_, t)| t.replaced_whole());
        let held = (whole && exporter.as_mut().is_some_and(|e| e.summary_first()))
            .then(|| (Vec::new(), Vec::new()));
        Ok(Output {
            format,
            exporter,
            path,
            file: None,
            held,
        })
    }

    /// An error writing the -o file, with the file's name.
    fn named(&self, e: std::io::Error) -> std::io::Error {
        match &self.path {
            Some((p, _)) => {
                std::io::Error::new(e.kind(), format!("writing {}: {e}", p.display()))
            }
            None => e,
        }
    }

    /// Writes `bytes` where the streaming formats go.
    fn emit(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        if let Some((_, body)) = self.held.as_mut() {
            body.extend_from_slice(bytes);
            return Ok(());
        }
        match self.file.as_mut() {
            Some(f) => f.write_all(bytes).and_then(|()| f.flush()),
            None if self.path.is_none() => {
                let mut out = stdout();
                out.write_all(bytes).and_then(|()| out.flush())
            }
            None => Ok(()),
        }
    }

    /// Every note under each row of a table (`--verbose`), rather than at most one.
    pub fn verbose(&mut self, on: bool) {
        if let Some(e) = self.exporter.as_mut() {
            e.verbose(on);
        }
    }

    /// Names every row the run will write, before [`Output::begin`], so the table
    /// lays its columns out for all of them.
    pub fn plan(&mut self, rows: &[layout::RowKey]) {
        if let Some(e) = self.exporter.as_mut() {
            e.plan(rows);
        }
    }

    /// Writes the start of the run.
    pub fn begin(&mut self, run: &Run) -> std::io::Result<()> {
        self.begin_inner(run).map_err(|e| self.named(e))
    }

    fn begin_inner(&mut self, run: &Run) -> std::io::Result<()> {
        match self.exporter.as_mut() {
            Some(e) => {
                let s = e.header(run);
                if let Some((p, _)) = &self.path {
                    self.file = Some(target::create(p)?);
                }
                match self.held.as_mut() {
                    Some((header, _)) => header.extend_from_slice(s.as_bytes()),
                    None => self.emit(s.as_bytes())?,
                }
            }
            None => {
                // An empty document marked incomplete, replaced at the end: only where
                // the end replaces it whole.
                if let (Some((p, t)), Format::Json) = (&self.path, self.format) {
                    if t.replaced_whole() {
                        target::write(p, &document(Format::Json, run, false)?)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Writes one finished result (JSON waits for [`Output::finish`]).
    pub fn result(&mut self, r: &BenchResult) -> std::io::Result<()> {
        match self.exporter.as_mut() {
            Some(e) => {
                let s = e.result(r);
                self.emit(s.as_bytes()).map_err(|e| self.named(e))
            }
            None => Ok(()),
        }
    }

    /// Writes the end of the run (the whole document, for JSON).
    pub fn finish(&mut self, run: &Run) -> std::io::Result<()> {
        self.finish_inner(run, None).map_err(|e| self.named(e))
    }

    /// [`Output::finish`] for a run whose samples are in `spill`: a JSON document is
    /// streamed, each result's samples read back as it is written.
    pub fn finish_with(
        &mut self,
        run: &Run,
        spill: Option<&crate::spill::Spill>,
    ) -> std::io::Result<()> {
        self.finish_inner(run, spill).map_err(|e| self.named(e))
    }

    fn finish_inner(
        &mut self,
        run: &Run,
        spill: Option<&crate::spill::Spill>,
    ) -> std::io::Result<()> {
        match self.exporter.as_mut() {
            Some(e) => {
                let lead = self.held.is_some().then(|| e.lead(run));
                let s = e.footer(run);
                self.emit(s.as_bytes())?;
                if let (Some((header, body)), Some(f)) =
                    (self.held.take(), self.file.as_mut())
                {
                    f.write_all(&header)?;
                    f.write_all(lead.unwrap_or_default().as_bytes())?;
                    f.write_all(&body)?;
                    f.flush()?;
                }
                if let Some(f) = self.file.take() {
                    f.commit()?;
                }
                Ok(())
            }
            None => {
                let pretty = self.path.is_none();
                let mut out: Box<dyn WriteCommit> = match &self.path {
                    Some((p, _)) => Box::new(target::create(p)?),
                    None => Box::new(stdout()),
                };
                match self.format {
                    Format::Json => {
                        crate::spill::write_json(&mut out, run, spill, pretty)?
                    }
                    _ => {
                        let bytes = document(self.format, run, pretty)?;
                        out.write_all(&bytes[..bytes.len() - 1])?;
                    }
                }
                out.write_all(b"\n")?;
                out.done()
            }
        }
    }

    /// The format in use.
    pub fn format(&self) -> Format {
        self.format
    }
}

/// A writer that is finished explicitly (a file renamed into place, standard output
/// flushed).
trait WriteCommit: Write {
    fn done(self: Box<Self>) -> std::io::Result<()>;
}

impl WriteCommit for target::OutFile {
    fn done(self: Box<Self>) -> std::io::Result<()> {
        self.commit()
    }
}

impl WriteCommit for Named<std::io::StdoutLock<'static>> {
    fn done(mut self: Box<Self>) -> std::io::Result<()> {
        self.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_document_replaces_the_file_only_when_it_is_ready() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("syscost.prom");
        std::fs::write(&path, "previous\n").unwrap();
        let run = crate::results::tests::run_with_medians(&[("syscall.getpid", 80.0)]);
        let mut out = Output::open(Format::Prometheus, Some(&path)).unwrap();
        out.begin(&run).unwrap();
        out.result(&run.results[0]).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "previous\n");
        out.finish(&run).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("syscost_op_seconds"), "{text}");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["syscost.prom"], "no temporary file left");
        assert!(
            Output::open(Format::Gbench, Some(dir.path())).is_err(),
            "a directory is refused"
        );
    }

    #[test]
    fn a_file_has_the_summary_first_and_a_terminal_has_it_last() {
        let names = [
            "syscall.getpid",
            "syscall.getppid",
            "ctx.pipe",
            "mem.mmap",
            "proc.fork",
            "file.read",
        ];
        let medians: Vec<(&str, f64)> = names.iter().map(|n| (*n, 100.0)).collect();
        let mut run = crate::results::tests::run_with_medians(&medians);
        run.results[0].params.insert("via".into(), "libc".into());
        let rows: Vec<layout::RowKey> =
            run.results.iter().map(layout::RowKey::of).collect();
        let dir = tempfile::tempdir().unwrap();
        for (format, file, first_row) in [
            (Format::Table, "run.txt", "syscall.getpid "),
            (Format::Markdown, "run.md", "| syscall.getpid |"),
        ] {
            let path = dir.path().join(file);
            let mut out = Output::open(format, Some(&path)).unwrap();
            out.plan(&rows);
            out.begin(&run).unwrap();
            for r in &run.results {
                out.result(r).unwrap();
            }
            out.finish(&run).unwrap();
            let text = std::fs::read_to_string(&path).unwrap();
            let at = |what: &str| {
                text.find(what)
                    .unwrap_or_else(|| panic!("no {what:?} in\n{text}"))
            };
            let summary = at("null system call");
            assert!(summary < at(first_row), "{text}");
            assert!(
                summary < at("benchmark"),
                "the column header follows it: {text}"
            );
            assert_eq!(text.matches("null system call").count(), 1, "{text}");
            assert!(!text.contains("summary at the end"), "{text}");
        }
        // A table that streams (to standard output, here a table rendered whole) keeps
        // the summary last and says so at the top.
        let mut t = table::Table::new(100);
        t.plan(&rows);
        let mut text = t.header(&run);
        for r in &run.results {
            text += &t.result(r);
        }
        text += &t.footer(&run);
        assert!(
            text.lines().next().unwrap().contains("summary at the end"),
            "{text}"
        );
        assert!(
            text.find("null system call") > text.find("syscall.getpid "),
            "{text}"
        );
    }
}
