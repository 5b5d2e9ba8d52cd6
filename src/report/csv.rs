//! CSV: one header row, then one row per result, written as each finishes.

use super::Exporter;
use crate::results::{BenchResult, Run, Status};

/// The CSV exporter.
pub struct Csv;

const COLUMNS: &str =
    "name,params,status,op,median_ns,ci_low_ns,ci_high_ns,mean_ns,sd_ns,\
min_ns,max_ns,p1_ns,p5_ns,p25_ns,p75_ns,p95_ns,p99_ns,mad_ns,cv,samples,clean,\
window_outliers,mad_outliers,perturbed,converged,batch,overhead_ns_per_op,\
canary_change,levels,reason";

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl Exporter for Csv {
    fn header(&mut self, _: &Run) -> String {
        format!("{COLUMNS}\n")
    }

    fn result(&mut self, r: &BenchResult) -> String {
        let status = match r.status {
            Status::Ok => "ok",
            Status::Skipped => "skipped",
            Status::Failed => "failed",
        };
        let mut cols = vec![
            field(&r.name),
            field(&r.param_label()),
            status.into(),
            field(&r.op),
        ];
        let reason = field(r.reason.as_deref().unwrap_or(""));
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
                for v in [c.total, c.clean, c.window, c.mad, c.perturbed] {
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
                cols.push(field(&levels.join(";")));
            }
            None => cols.extend(std::iter::repeat_n(String::new(), 25)),
        }
        cols.push(reason);
        format!("{}\n", cols.join(","))
    }

    fn footer(&mut self, _: &Run) -> String {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_row_has_as_many_fields_as_the_header() {
        let n = super::COLUMNS.split(',').count();
        // name, params, status, op + 15 stats + 5 counts + converged, batch, overhead,
        // canary, levels + reason
        assert_eq!(n, 4 + 15 + 5 + 5 + 1);
        assert_eq!(super::field("a,b"), "\"a,b\"");
        assert_eq!(super::field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
