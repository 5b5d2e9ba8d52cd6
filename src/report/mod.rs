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
pub mod gbench;
pub mod graphs;
pub mod html;
pub mod json;
pub mod markdown;
pub mod prometheus;
pub mod ring;
pub mod svg;
pub mod sweep;
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

use crate::error::UsageError;
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
}

/// A streaming exporter: text for the start, each result, and the end of a run.
pub trait Exporter {
    /// Text before the first result.
    fn header(&mut self, run: &Run) -> String;
    /// Text for one result.
    fn result(&mut self, r: &BenchResult) -> String;
    /// Text after the last result.
    fn footer(&mut self, run: &Run) -> String;
}

fn exporter(format: Format) -> Option<Box<dyn Exporter>> {
    match format {
        Format::Table => Some(Box::new(table::Table)),
        Format::Csv => Some(Box::new(csv::Csv)),
        Format::Markdown => Some(Box::new(markdown::Markdown)),
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

/// The temporary file beside `path` that a whole document is written to first.
pub(crate) fn partial_path(path: &Path) -> std::path::PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    path.with_file_name(name)
}

/// Writes `bytes` to `path` through a temporary file beside it and a rename, so a
/// reader (or an interruption) never sees half a document.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = partial_path(path);
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
}

/// Where results go, in which format.
pub struct Output {
    format: Format,
    exporter: Option<Box<dyn Exporter>>,
    path: Option<PathBuf>,
    sink: Box<dyn Write>,
}

impl Output {
    /// Opens the destination: a file or standard output. Whether the file can be
    /// written is checked now, so an unwritable path fails before anything is measured,
    /// with a trial temporary file beside it that is removed at once; the file itself is
    /// created only when the run begins ([`Output::begin`]), so a run that fails to
    /// start leaves no empty file.
    ///
    /// A whole-document format never truncates an existing file at all: the file is
    /// replaced by a rename when the document is ready (a textfile collector keeps
    /// serving the previous run meanwhile).
    pub fn open(format: Format, path: Option<&Path>) -> Result<Output, UsageError> {
        let refuse = |p: &Path, e: std::io::Error| {
            UsageError::new(format!(
                "cannot write -o {}: {e}; choose a writable path",
                p.display()
            ))
        };
        let sink: Box<dyn Write> = match path {
            Some(p) => {
                if p.is_dir() {
                    return Err(refuse(p, std::io::Error::other("it is a directory")));
                }
                let trial = partial_path(p);
                std::fs::File::create(&trial).map_err(|e| refuse(p, e))?;
                let _ = std::fs::remove_file(&trial);
                Box::new(std::io::sink())
            }
            None => Box::new(Named::new(std::io::stdout(), "standard output")),
        };
        Ok(Output {
            format,
            exporter: exporter(format),
            path: path.map(Path::to_path_buf),
            sink,
        })
    }

    /// An error writing the -o file, with the file's name.
    fn named(&self, e: std::io::Error) -> std::io::Error {
        match &self.path {
            Some(p) => {
                std::io::Error::new(e.kind(), format!("writing {}: {e}", p.display()))
            }
            None => e,
        }
    }

    /// Writes the start of the run.
    pub fn begin(&mut self, run: &Run) -> std::io::Result<()> {
        self.begin_inner(run).map_err(|e| self.named(e))
    }

    fn begin_inner(&mut self, run: &Run) -> std::io::Result<()> {
        match self.exporter.as_mut() {
            Some(e) => {
                if let Some(p) = &self.path {
                    self.sink = Box::new(std::fs::File::create(p)?);
                }
                let s = e.header(run);
                self.sink.write_all(s.as_bytes())?;
                self.sink.flush()?;
            }
            None => {
                if let (Some(p), Format::Json) = (&self.path, self.format) {
                    write_atomically(p, &document(Format::Json, run, false)?)?;
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
                let written = self
                    .sink
                    .write_all(s.as_bytes())
                    .and_then(|()| self.sink.flush());
                written.map_err(|e| self.named(e))
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
                let s = e.footer(run);
                self.sink.write_all(s.as_bytes())?;
            }
            None if self.format == Format::Json => match &self.path {
                Some(p) => {
                    let tmp = partial_path(p);
                    let streamed = std::fs::File::create(&tmp)
                        .and_then(|mut f| {
                            crate::spill::write_json(&mut f, run, spill, false)?;
                            f.write_all(b"\n")
                        })
                        .and_then(|()| std::fs::rename(&tmp, p));
                    if streamed.is_err() {
                        let _ = std::fs::remove_file(&tmp);
                    }
                    streamed?
                }
                None => {
                    crate::spill::write_json(&mut self.sink, run, spill, true)?;
                    self.sink.write_all(b"\n")?;
                }
            },
            None => match &self.path {
                Some(p) => write_atomically(p, &document(self.format, run, false)?)?,
                None => self.sink.write_all(&document(self.format, run, true)?)?,
            },
        }
        self.sink.flush()
    }

    /// The format in use.
    pub fn format(&self) -> Format {
        self.format
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
}
