//! The Chrome JSON sink: the Trace Event Format, `X` slices, `i` instants and `M`
//! names, with the kernel as process 0 and a thread per CPU.

use super::{interval_track, IntervalSlice, KernelSlice, Layout, Sink};
use crate::trace::format::{KernelEvent, UserEvent};
use std::io::{self, Write};

/// The sink that writes the Trace Event Format.
pub(super) struct JsonSink<W: Write> {
    out: W,
    first: bool,
    pid: u32,
}

impl<W: Write> JsonSink<W> {
    /// A sink writing the JSON document to `out`.
    pub(super) fn new(out: W) -> JsonSink<W> {
        JsonSink {
            out,
            first: true,
            pid: 0,
        }
    }
}

fn json_str(s: &str) -> String {
    // ASCII only: older viewers reject \u escapes, so anything else becomes '?'.
    let ascii: String = s
        .chars()
        .map(|c| {
            if c.is_ascii() && !c.is_ascii_control() {
                c
            } else {
                '?'
            }
        })
        .collect();
    serde_json::to_string(&ascii).unwrap_or_else(|_| "\"?\"".into())
}

fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

impl<W: Write> JsonSink<W> {
    fn item(&mut self, text: &str) -> io::Result<()> {
        if !self.first {
            self.out.write_all(b",\n")?;
        }
        self.first = false;
        self.out.write_all(text.as_bytes())
    }
}

const KERNEL_PID: u32 = 0;

fn kernel_tid(cpu: u32) -> u64 {
    1_000_000 + cpu as u64
}

impl<W: Write> Sink for JsonSink<W> {
    fn begin(&mut self, l: &Layout) -> io::Result<()> {
        let pid = l.pid;
        self.pid = pid;
        self.out
            .write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
        self.item(&format!(r#"{{"ph":"M","name":"process_name","pid":{pid},"tid":0,"args":{{"name":{}}}}}"#, json_str(&l.program)))?;
        for (tid, name) in &l.threads {
            self.item(&format!(r#"{{"ph":"M","name":"thread_name","pid":{pid},"tid":{tid},"args":{{"name":{}}}}}"#, json_str(name)))?;
        }
        for (kind, tid, name) in &l.kinds {
            let t = interval_track(*kind, *tid);
            self.item(&format!(r#"{{"ph":"M","name":"thread_name","pid":{pid},"tid":{t},"args":{{"name":{}}}}}"#, json_str(&format!("{name} intervals, thread {tid}"))))?;
        }
        if !l.cpus.is_empty() {
            self.item(&format!(r#"{{"ph":"M","name":"process_name","pid":{KERNEL_PID},"tid":0,"args":{{"name":"kernel"}}}}"#))?;
        }
        for cpu in &l.cpus {
            self.item(&format!(r#"{{"ph":"M","name":"thread_name","pid":{KERNEL_PID},"tid":{},"args":{{"name":"CPU {cpu}"}}}}"#, kernel_tid(*cpu)))?;
        }
        Ok(())
    }
    fn user(&mut self, tid: u32, e: &UserEvent, label: &str) -> io::Result<()> {
        let (pid, id, arg, cpu) = (self.pid, e.id, e.arg, e.cpu);
        self.item(&format!(r#"{{"ph":"i","s":"t","name":{},"cat":"user","ts":{},"pid":{pid},"tid":{tid},"args":{{"id":{id},"arg":{arg},"cpu":{cpu}}}}}"#, json_str(label), us(e.ts)))
    }
    fn kernel_slice(&mut self, s: &KernelSlice) -> io::Result<()> {
        self.item(&format!(r#"{{"ph":"X","name":"{}","cat":"kernel","ts":{},"dur":{},"pid":{KERNEL_PID},"tid":{},"args":{{"vector":{}}}}}"#, s.name, us(s.start), us(s.end - s.start), kernel_tid(s.cpu), s.vector))
    }
    fn kernel_instant(&mut self, e: &KernelEvent) -> io::Result<()> {
        self.item(&format!(r#"{{"ph":"i","s":"t","name":"{}","cat":"kernel","ts":{},"pid":{KERNEL_PID},"tid":{},"args":{{"tid":{},"a":{},"b":{}}}}}"#, e.kind.name(), us(e.ts), kernel_tid(e.cpu), e.tid, e.a, e.b))
    }
    fn interval(&mut self, s: &IntervalSlice<'_>) -> io::Result<()> {
        let (pid, t) = (self.pid, s.track());
        self.item(&format!(r#"{{"ph":"X","name":{},"cat":"{}","ts":{},"dur":{},"pid":{pid},"tid":{t},"args":{{"culled_by":{}}}}}"#, json_str(s.name), s.category(), us(s.start), us(s.end - s.start), json_str(&s.culled.join(","))))
    }
    fn end(&mut self) -> io::Result<()> {
        self.out.write_all(b"\n]}\n")?;
        self.out.flush()
    }
}
