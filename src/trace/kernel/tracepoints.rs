//! The tracepoints this recorder knows and what each becomes: their table, the
//! tracefs `format` files that give a record's fields, reading a field from a raw
//! record, and looking the chosen tracepoints up in tracefs.

use super::{refusal, Unavailable};
use crate::os::perf;
use crate::trace::format::KernelKind;
use std::collections::BTreeMap;

/// A tracepoint, what it becomes, and which of its fields fill `a` and `b`.
pub(super) struct Tracepoint {
    pub(super) system: &'static str,
    pub(super) name: &'static str,
    pub(super) kind: KernelKind,
    /// The field for `a` (and the task's tid when `tid_field` is set).
    pub(super) a: Option<&'static str>,
    pub(super) b: Option<&'static str>,
    /// The field holding the task the event is about, when it is not the current one.
    pub(super) tid_field: Option<&'static str>,
}

/// Builds [`TRACEPOINTS`] from lines `system:name => Kind, a, b, tid_field;`, a field
/// being a name or `_` for none.
macro_rules! tracepoints {
    ($($system:ident : $name:ident => $kind:ident, $a:tt, $b:tt, $tid:tt;)*) => {
        &[$(Tracepoint {
            system: stringify!($system),
            name: stringify!($name),
            kind: KernelKind::$kind,
            a: field!($a),
            b: field!($b),
            tid_field: field!($tid),
        }),*]
    };
}

/// A field of [`tracepoints!`]: `_` is none.
macro_rules! field {
    (_) => {
        None
    };
    ($f:ident) => {
        Some(stringify!($f))
    };
}

/// Every tracepoint this recorder knows, by the kind it records.
pub(super) const TRACEPOINTS: &[Tracepoint] = tracepoints! {
    sched:sched_switch => Switch, next_pid, prev_state, prev_pid;
    sched:sched_migrate_task => Migrate, orig_cpu, dest_cpu, pid;
    irq_vectors:local_timer_entry => TimerEntry, vector, _, _;
    irq_vectors:local_timer_exit => TimerExit, vector, _, _;
    irq:irq_handler_entry => IrqEntry, irq, _, _;
    irq:irq_handler_exit => IrqExit, irq, _, _;
    irq:softirq_entry => SoftirqEntry, vec, _, _;
    irq:softirq_exit => SoftirqExit, vec, _, _;
    irq_vectors:call_function_entry => IpiEntry, vector, _, _;
    irq_vectors:call_function_exit => IpiExit, vector, _, _;
    irq_vectors:call_function_single_entry => IpiEntry, vector, _, _;
    irq_vectors:call_function_single_exit => IpiExit, vector, _, _;
    irq_vectors:reschedule_entry => IpiEntry, vector, _, _;
    irq_vectors:reschedule_exit => IpiExit, vector, _, _;
    exceptions:page_fault_user => Fault, address, error_code, _;
};

/// The exit kind that pairs with an entry kind.
pub(super) fn exit_of(k: KernelKind) -> Option<KernelKind> {
    match k {
        KernelKind::TimerEntry => Some(KernelKind::TimerExit),
        KernelKind::IrqEntry => Some(KernelKind::IrqExit),
        KernelKind::SoftirqEntry => Some(KernelKind::SoftirqExit),
        KernelKind::IpiEntry => Some(KernelKind::IpiExit),
        _ => None,
    }
}

/// A field of a tracepoint's record: where it is and how wide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Byte offset in the raw record.
    pub offset: usize,
    /// Bytes.
    pub size: usize,
    /// Whether it is signed.
    pub signed: bool,
}

/// Parses a tracefs `format` file into its fields by name.
pub fn parse_format(text: &str) -> BTreeMap<String, Field> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("field:") else {
            continue;
        };
        let mut decl = "";
        let (mut offset, mut size, mut signed) = (None, None, false);
        for part in rest.split(';').map(str::trim) {
            if let Some(v) = part.strip_prefix("offset:") {
                offset = v.trim().parse().ok();
            } else if let Some(v) = part.strip_prefix("size:") {
                size = v.trim().parse().ok();
            } else if let Some(v) = part.strip_prefix("signed:") {
                signed = v.trim() == "1";
            } else if decl.is_empty() {
                decl = part;
            }
        }
        // "unsigned long address" → "address"; "char prev_comm[16]" → "prev_comm".
        let name = decl
            .split_whitespace()
            .last()
            .unwrap_or("")
            .split('[')
            .next()
            .unwrap_or("");
        if let (false, Some(offset), Some(size)) = (name.is_empty(), offset, size) {
            out.insert(
                name.to_string(),
                Field {
                    offset,
                    size,
                    signed,
                },
            );
        }
    }
    out
}

/// Reads an integer field from a raw record (0 when it does not fit).
pub(super) fn read_field(raw: &[u8], f: Field) -> u64 {
    let Some(bytes) = raw.get(f.offset..f.offset + f.size) else {
        return 0;
    };
    let mut v = [0u8; 8];
    let n = f.size.min(8);
    v[..n].copy_from_slice(&bytes[..n]);
    let x = u64::from_le_bytes(v);
    if f.signed && n < 8 && bytes[n - 1] & 0x80 != 0 {
        // sign-extend, then keep as the two's complement u64
        x | (!0u64 << (8 * n))
    } else {
        x
    }
}

/// How one opened event decodes.
pub(super) struct Decoder {
    pub(super) kind: KernelKind,
    pub(super) a: Option<Field>,
    pub(super) b: Option<Field>,
    pub(super) tid: Option<Field>,
}

/// A tracepoint this kernel has: its id and the fields of its record.
pub(super) type Known<'a> = (&'a Tracepoint, u64, BTreeMap<String, Field>);

/// Reads the id and record format of each chosen tracepoint from tracefs; returns where
/// tracefs was found, the tracepoints this kernel has, and the names of those it has
/// not (`system:name`). None at all is a reason to record without kernel events.
pub(super) fn tracepoint_ids<'a>(
    chosen: &[&'a Tracepoint],
) -> Result<(String, Vec<Known<'a>>, Vec<String>), Unavailable> {
    let files: Vec<String> = chosen
        .iter()
        .flat_map(|t| {
            [
                format!("events/{}/{}/id", t.system, t.name),
                format!("events/{}/{}/format", t.system, t.name),
            ]
        })
        .collect();
    let (where_, texts) = perf::read_tracefs(&files).map_err(|e| {
        refusal(
            &e,
            "tracefs is not mounted and could not be mounted privately",
        )
    })?;
    let mut ids = Vec::new();
    let mut missing = Vec::new();
    for (i, t) in chosen.iter().enumerate() {
        match (&texts[2 * i], &texts[2 * i + 1]) {
            (Ok(id), Ok(format)) => match id.trim().parse::<u64>() {
                Ok(id) => ids.push((*t, id, parse_format(format))),
                Err(_) => missing.push(format!("{}:{}", t.system, t.name)),
            },
            _ => missing.push(format!("{}:{}", t.system, t.name)),
        }
    }
    if ids.is_empty() {
        return Err(Unavailable(format!(
            "kernel events unavailable: this kernel has none of the tracepoints asked for ({})",
            missing.join(", ")
        )));
    }
    Ok((where_, ids, missing))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWITCH_FORMAT: &str = "name: sched_switch
ID: 372
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;
\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;
\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;
\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;
\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;
\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;
\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;

print fmt: \"prev_comm=%s prev_pid=%d\", REC->prev_comm, REC->prev_pid
";

    #[test]
    fn a_format_file_gives_every_fields_offset_and_size() {
        let f = parse_format(SWITCH_FORMAT);
        for (name, offset, size) in [
            ("prev_pid", 24, 4),
            ("prev_state", 32, 8),
            ("next_pid", 56, 4),
        ] {
            let g = f[name];
            assert_eq!((g.offset, g.size, g.signed), (offset, size, true), "{name}");
        }
        assert_eq!(f["prev_comm"].size, 16);
        assert_eq!(f.len(), 11);
        let mut raw = vec![0u8; 64];
        raw[24..28].copy_from_slice(&1234i32.to_le_bytes());
        raw[56..60].copy_from_slice(&(-1i32).to_le_bytes());
        assert_eq!(read_field(&raw, f["prev_pid"]), 1234);
        assert_eq!(read_field(&raw, f["next_pid"]) as i64, -1);
        assert_eq!(
            read_field(&raw[..30], f["next_pid"]),
            0,
            "past the end reads 0"
        );
        assert!(parse_format("garbage\nfield:;;;\nfield:int x;\toffset:zz;").is_empty());
    }
}
