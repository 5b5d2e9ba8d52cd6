//! CSV: one header row, then one row per result, written as each finishes. Quoting is
//! the `csv` crate's (RFC 4180: a field with a comma, a quote or a line break is quoted,
//! its quotes doubled).

use super::Exporter;
use crate::results::{BenchResult, Run, Status};

/// The CSV exporter.
pub struct Csv;

const COLUMNS: [&str; 33] = [
    "name",
    "params",
    "status",
    "op",
    "median_ns",
    "ci_low_ns",
    "ci_high_ns",
    "mean_ns",
    "sd_ns",
    "min_ns",
    "max_ns",
    "p1_ns",
    "p5_ns",
    "p25_ns",
    "p75_ns",
    "p95_ns",
    "p99_ns",
    "mad_ns",
    "cv",
    "samples",
    "clean",
    "mad_outliers",
    "perturbed",
    "converged",
    "batch",
    "overhead_ns_per_op",
    "canary_change",
    "levels",
    "copies",
    "per_copy_ns",
    "slowest_copy_ns",
    "throughput_ops_s",
    "reason",
];

/// One CSV record, with its line end.
fn record<I: IntoIterator<Item = S>, S: AsRef<[u8]>>(fields: I) -> String {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    // Writing to memory cannot fail, and the fields are UTF-8.
    w.write_record(fields).expect("a CSV record in memory");
    let bytes = w.into_inner().expect("a CSV record in memory");
    String::from_utf8(bytes).expect("CSV of UTF-8 fields is UTF-8")
}

impl Exporter for Csv {
    fn header(&mut self, _: &Run) -> String {
        record(COLUMNS)
    }

    fn result(&mut self, r: &BenchResult) -> String {
        let status = match r.status {
            Status::Ok => "ok",
            Status::Skipped => "skipped",
            Status::Failed => "failed",
        };
        let mut cols = vec![r.name.clone(), r.param_label(), status.into(), r.op.clone()];
        let reason = r.reason.clone().unwrap_or_default();
        match &r.measured {
            Some(m) => {
                let s = m.clean.as_ref().unwrap_or(&m.raw);
                for v in [
                    m.median_ns,
                    m.ci_low_ns,
                    m.ci_high_ns,
                    s.mean,
                    s.sd,
                    s.min,
                    s.max,
                    s.p1,
                    s.p5,
                    s.p25,
                    s.p75,
                    s.p95,
                    s.p99,
                    s.mad,
                    s.cv,
                ] {
                    cols.push(format!("{v:.4}"));
                }
                let c = &m.counts;
                for v in [c.total, c.clean, c.mad, c.perturbed] {
                    cols.push(v.to_string());
                }
                cols.push(m.converged.to_string());
                cols.push(m.batch.to_string());
                cols.push(format!("{:.4}", m.overhead.per_op_ns));
                cols.push(
                    m.canary
                        .as_ref()
                        .map(|c| format!("{:.4}", c.change))
                        .unwrap_or_default(),
                );
                let levels: Vec<String> = m
                    .levels
                    .iter()
                    .map(|l| format!("{:.2}", l.median_ns))
                    .collect();
                cols.push(levels.join(";"));
                match &m.copies {
                    Some(c) => {
                        cols.push(c.n.to_string());
                        for v in [c.per_copy_ns, c.slowest_ns, c.throughput_ops_s] {
                            cols.push(format!("{v:.4}"));
                        }
                    }
                    None => cols.extend(std::iter::repeat_n(String::new(), 4)),
                }
            }
            // Every column but the name, parameters, status, operation and reason.
            None => cols.extend(std::iter::repeat_n(String::new(), COLUMNS.len() - 5)),
        }
        cols.push(reason);
        record(&cols)
    }

    fn footer(&mut self, _: &Run) -> String {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_with_commas_quotes_and_line_breaks_are_quoted() {
        assert_eq!(record(["a", "b"]), "a,b\n");
        assert_eq!(record(["a,b", "c"]), "\"a,b\",c\n");
        assert_eq!(record(["say \"hi\""]), "\"say \"\"hi\"\"\"\n");
        assert_eq!(record(["two\nlines", ""]), "\"two\nlines\",\n");
    }

    #[test]
    fn a_result_without_a_measurement_has_every_column() {
        let mut r =
            crate::results::tests::run_with_medians(&[("x.y", 1.0)]).results[0].clone();
        r.params = [("n".to_string(), "2".to_string())].into();
        (r.status, r.reason, r.measured) =
            (Status::Skipped, Some("no, really".into()), None);
        let row = Csv.result(&r);
        let fields = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(row.as_bytes())
            .records()
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(fields.len(), COLUMNS.len());
        assert_eq!(&fields[0], "x.y");
        assert_eq!(&fields[2], "skipped");
        assert_eq!(&fields[COLUMNS.len() - 1], "no, really");
    }
}
