//! A run's kept samples on disk while the run goes on: each result's samples leave
//! memory as the result finishes, into one unnamed temporary file, and come back one
//! result at a time when the document and the history are written. The measuring
//! parent then stays small however many samples the run keeps.
//!
//! The file has no name (see [`crate::os::file::unnamed_file`]): nothing is left behind
//! on any exit.

use crate::results::{BenchResult, Run, Samples};
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};

use std::os::unix::fs::FileExt;

/// Samples kept on disk, by result.
pub struct Spill {
    file: File,
    end: u64,
    /// (result key, offset, length), in the order put.
    index: Vec<(String, u64, u64)>,
}

/// What identifies a result within a run: its name and parameters.
fn key(r: &BenchResult) -> String {
    let mut k = r.name.clone();
    for (n, v) in &r.params {
        k.push(' ');
        k.push_str(n);
        k.push('=');
        k.push_str(v);
    }
    k
}

impl Spill {
    /// An empty spill in the temporary directory.
    pub fn new() -> io::Result<Spill> {
        Ok(Spill {
            file: crate::os::file::unnamed_file(&std::env::temp_dir())?,
            end: 0,
            index: Vec::new(),
        })
    }

    /// Moves `r`'s samples, if it has any, to the file.
    pub fn put(&mut self, r: &mut BenchResult) -> io::Result<()> {
        let Some(m) = r.measured.as_mut() else {
            return Ok(());
        };
        let Some(samples) = m.samples.as_ref() else {
            return Ok(());
        };
        let bytes = serde_json::to_vec(samples)?;
        self.file.write_all_at(&bytes, self.end)?;
        m.samples = None;
        self.index.push((key(r), self.end, bytes.len() as u64));
        self.end += bytes.len() as u64;
        Ok(())
    }

    /// Appends the samples of `r` from `file`, which holds them as `put` would write
    /// them (a worker's [`MemFile`](crate::os::memfile::MemFile)), copied
    /// by the kernel where it can (`copy_file_range`, `sendfile`) rather than through
    /// this process's memory.
    pub fn put_file(
        &mut self,
        r: &BenchResult,
        file: &crate::os::memfile::MemFile,
    ) -> io::Result<()> {
        let mut src = file.from_start()?;
        let mut dst = &self.file;
        dst.seek(SeekFrom::Start(self.end))?;
        let len = io::copy(&mut src, &mut dst)?;
        self.index.push((key(r), self.end, len));
        self.end += len;
        Ok(())
    }

    /// The samples of `r`, read back (None if it had none).
    pub fn samples(&self, r: &BenchResult) -> io::Result<Option<Samples>> {
        let k = key(r);
        let Some(&(_, off, len)) = self.index.iter().find(|(x, _, _)| *x == k) else {
            return Ok(None);
        };
        let mut f = &self.file;
        f.seek(SeekFrom::Start(off))?;
        let mut bytes = Vec::with_capacity(len as usize);
        f.take(len).read_to_end(&mut bytes)?;
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(io::Error::other)
    }

    /// `r` with its samples back.
    pub fn whole(&self, r: &BenchResult) -> io::Result<BenchResult> {
        let mut r = r.clone();
        if let Some(s) = self.samples(&r)? {
            if let Some(m) = r.measured.as_mut() {
                m.samples = Some(s);
            }
        }
        Ok(r)
    }

    /// How many results have samples here.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether no result has samples here.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }
}

/// Writes `run` as its JSON document to `w`, each result's samples read back from
/// `spill` as the result is written, so the whole document is never in memory.
pub fn write_json(
    w: &mut dyn Write,
    run: &Run,
    spill: Option<&Spill>,
    pretty: bool,
) -> io::Result<()> {
    let mut w = BufWriter::with_capacity(1 << 16, w);
    let Some(spill) = spill.filter(|s| !s.is_empty()) else {
        if pretty {
            serde_json::to_writer_pretty(&mut w, run)?;
        } else {
            serde_json::to_writer(&mut w, run)?;
        }
        return w.flush();
    };
    // The document around an empty list of results, then the results one by one in
    // its place.
    let shell = run.clone_without_results();
    let text = if pretty {
        serde_json::to_string_pretty(&shell)?
    } else {
        serde_json::to_string(&shell)?
    };
    let marker = if pretty {
        "\"results\": []"
    } else {
        "\"results\":[]"
    };
    let at = match (text.find(marker), text.rfind(marker)) {
        (Some(a), Some(b)) if a == b => a,
        _ => {
            return Err(io::Error::other(
                "the document's results could not be placed",
            ))
        }
    };
    w.write_all(&text.as_bytes()[..at])?;
    w.write_all(b"\"results\":[")?;
    for (i, r) in run.results.iter().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        serde_json::to_writer(&mut w, &spill.whole(r)?)?;
    }
    w.write_all(b"]")?;
    w.write_all(&text.as_bytes()[at + marker.len()..])?;
    w.flush()
}

/// The samples of every result of `run`, in order, as the JSON list the history
/// stores (`null` for a result without), written to `w` one result at a time.
pub fn write_samples(
    w: &mut dyn Write,
    run: &Run,
    spill: Option<&Spill>,
) -> io::Result<()> {
    w.write_all(b"[")?;
    for (i, r) in run.results.iter().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        let own = r.measured.as_ref().and_then(|m| m.samples.clone());
        let s = match (own, spill) {
            (Some(s), _) => Some(s),
            (None, Some(spill)) => spill.samples(r)?,
            (None, None) => None,
        };
        serde_json::to_writer(&mut *w, &s)?;
    }
    w.write_all(b"]")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Measured;

    fn run_with_samples() -> Run {
        let doc = include_str!("../tests/fixtures/report-smoke.json");
        crate::store::parse_document(doc.as_bytes()).expect("the smoke fixture")
    }

    #[test]
    fn a_spilled_run_writes_the_same_document_as_one_in_memory() {
        let run = run_with_samples();
        let with: usize = run
            .results
            .iter()
            .filter(|r| {
                r.measured
                    .as_ref()
                    .is_some_and(|m: &Measured| m.samples.is_some())
            })
            .count();
        assert!(with > 0, "the fixture keeps samples");
        let mut whole = Vec::new();
        write_json(&mut whole, &run, None, false).unwrap();
        let mut lean = run.clone();
        let mut spill = Spill::new().unwrap();
        for r in &mut lean.results {
            spill.put(r).unwrap();
        }
        assert_eq!(spill.len(), with);
        assert!(lean
            .results
            .iter()
            .all(|r| r.measured.as_ref().is_none_or(|m| m.samples.is_none())));
        for pretty in [false, true] {
            let mut streamed = Vec::new();
            write_json(&mut streamed, &lean, Some(&spill), pretty).unwrap();
            let a: serde_json::Value = serde_json::from_slice(&whole).unwrap();
            let b: serde_json::Value = serde_json::from_slice(&streamed).unwrap();
            assert_eq!(a, b, "pretty={pretty}");
        }
        let (mut x, mut y) = (Vec::new(), Vec::new());
        write_samples(&mut x, &run, None).unwrap();
        write_samples(&mut y, &lean, Some(&spill)).unwrap();
        assert_eq!(x, y);
    }

    #[test]
    fn samples_from_a_workers_memory_file_spill_as_the_results_own_would() {
        use crate::os::memfile::MemFile;
        let run = run_with_samples();
        let mut lean = run.clone();
        let mut spill = Spill::new().unwrap();
        for r in &mut lean.results {
            // As a worker sends them: apart from the result, in a memory file.
            let Some(samples) = r.measured.as_mut().and_then(|m| m.samples.take()) else {
                continue;
            };
            let f = MemFile::create("test-samples").unwrap();
            f.write_json(&samples).unwrap();
            spill.put_file(r, &f).unwrap();
            let back: Samples = f.read_json().unwrap();
            assert_eq!(
                serde_json::to_value(&back).unwrap(),
                serde_json::to_value(&samples).unwrap()
            );
        }
        assert!(!spill.is_empty());
        let (mut whole, mut streamed) = (Vec::new(), Vec::new());
        write_json(&mut whole, &run, None, false).unwrap();
        write_json(&mut streamed, &lean, Some(&spill), false).unwrap();
        let a: serde_json::Value = serde_json::from_slice(&whole).unwrap();
        let b: serde_json::Value = serde_json::from_slice(&streamed).unwrap();
        assert_eq!(a, b);
    }
}
