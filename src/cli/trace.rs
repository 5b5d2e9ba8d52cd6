//! `syscost trace record|show|reduce|export`: the event trace of the 1976 memo.
//!
//! `record` runs a command with tracing on (the `syscost-trace` library in the command
//! finds its file through `SYSCOST_TRACE`) and the kernel's events recorded on every
//! CPU, and writes one file; `show` lists its events; `reduce` is the memo's `fsm`;
//! `export` writes Perfetto's protobuf or Chrome's JSON. Every command that reads a
//! trace says how many events were lost.

use crate::draw::text::count;
use crate::error::UsageError;
use crate::trace::export::{self, ExportFormat};
use crate::trace::format::{FormatError, Index};
use crate::trace::kernel::{KernelRequest, DEFAULT_KINDS};
use crate::trace::{record, reduce, show};
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `syscost trace`.
#[derive(Debug, clap::Args)]
pub struct TraceArgs {
    #[command(subcommand)]
    command: TraceCommand,
}

/// The trace commands.
#[derive(Debug, clap::Subcommand)]
enum TraceCommand {
    /// Runs a command with tracing on and writes its events and the kernel's to one file.
    Record(RecordArgs),
    /// Lists a trace's events in time order, with its header.
    Show(ShowArgs),
    /// Reduces intervals between events to statistics, all and culled (the memo's fsm).
    Reduce(ReduceArgs),
    /// Writes a trace as Perfetto protobuf or Chrome JSON.
    Export(ExportArgs),
}

/// Options of `syscost trace record`.
#[derive(Debug, clap::Args)]
struct RecordArgs {
    /// The kernel events to record: a comma-separated list of switch, migrate, timer,
    /// irq, softirq, ipi, fault; or all; or none.
    #[arg(long, value_name = "LIST", default_value = "all")]
    kernel: String,
    /// The trace file to write.
    #[arg(short, long, value_name = "FILE", default_value = "syscost.trace")]
    output: PathBuf,
    /// Ring size per thread for the command's events, bytes (default 4 MiB).
    #[arg(long, value_name = "BYTES")]
    buffer: Option<String>,
    /// The command and its arguments.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    command: Vec<OsString>,
}

/// Options of `syscost trace show`.
#[derive(Debug, clap::Args)]
struct ShowArgs {
    /// The trace file.
    file: PathBuf,
    /// Only this user event (name or id; repeatable), or kernel event kind.
    #[arg(long = "event", value_name = "NAME|ID")]
    events: Vec<String>,
    /// Only this thread (repeatable).
    #[arg(long = "thread", value_name = "TID")]
    threads: Vec<u32>,
    /// Only this CPU (repeatable).
    #[arg(long = "cpu", value_name = "N")]
    cpus: Vec<u32>,
    /// From this long after the first event (e.g. 1.5ms).
    #[arg(long, value_name = "TIME")]
    from: Option<String>,
    /// Up to this long after the first event.
    #[arg(long, value_name = "TIME")]
    to: Option<String>,
    /// Leave the kernel's events out.
    #[arg(long)]
    no_kernel: bool,
    /// Leave the program's events out.
    #[arg(long)]
    no_user: bool,
    /// At most this many events.
    #[arg(long, value_name = "N")]
    limit: Option<u64>,
    /// Output format: table, or json (one object per line).
    #[arg(long, value_enum, default_value = "table")]
    format: TableOrJson,
}

/// Options of `syscost trace reduce`.
#[derive(Debug, clap::Args)]
struct ReduceArgs {
    /// The trace file.
    file: PathBuf,
    /// The intervals, e.g. 'interval call = begin -> end' or 'interval call = begin ->
    /// end any thread' (after END: same thread, the default, or any thread; see the
    /// README).
    #[arg(long, value_name = "SPEC", conflicts_with = "spec_file")]
    spec: Option<String>,
    /// A file holding the spec.
    #[arg(long, value_name = "PATH")]
    spec_file: Option<PathBuf>,
    /// The guard band around each kernel event (e.g. 1us, 500ns).
    #[arg(long, value_name = "TIME", default_value = "1us")]
    guard: String,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: TableOrJson,
}

/// Options of `syscost trace export`.
#[derive(Debug, clap::Args)]
struct ExportArgs {
    /// The trace file.
    file: PathBuf,
    /// The format.
    #[arg(long, value_enum)]
    format: ExportFormat,
    /// The file to write.
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// Intervals to draw as slices (as for reduce).
    #[arg(long, value_name = "SPEC")]
    spec: Option<String>,
    /// The guard band around each kernel event, for marking culled intervals.
    #[arg(long, value_name = "TIME", default_value = "1us")]
    guard: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum TableOrJson {
    Table,
    Json,
}

/// Runs `syscost trace`.
pub fn trace(args: &TraceArgs) -> anyhow::Result<ExitCode> {
    match &args.command {
        TraceCommand::Record(a) => record_cmd(a),
        TraceCommand::Show(a) => show_cmd(a),
        TraceCommand::Reduce(a) => reduce_cmd(a),
        TraceCommand::Export(a) => export_cmd(a),
    }
}

fn usage(msg: String) -> anyhow::Error {
    UsageError::new(msg).into()
}

/// Opens and indexes a trace, or says in one line why it cannot be read.
fn open(path: &Path) -> anyhow::Result<(std::fs::File, Index)> {
    let file = std::fs::File::open(path)
        .map_err(|e| usage(format!("cannot read {}: {e}", path.display())))?;
    let index = Index::read(&file).map_err(|e| match e {
        FormatError::Io(e) => anyhow::anyhow!("reading {}: {e}", path.display()),
        e => usage(format!("{}: {e}", path.display())),
    })?;
    Ok((file, index))
}

fn duration(flag: &str, text: &str) -> anyhow::Result<u64> {
    show::parse_duration(text).map_err(|e| usage(format!("{flag} {e}")))
}

fn spec_text(spec: &Option<String>, file: &Option<PathBuf>) -> anyhow::Result<String> {
    match (spec, file) {
        (Some(s), _) => Ok(s.clone()),
        (None, Some(p)) => std::fs::read_to_string(p)
            .map_err(|e| usage(format!("--spec-file {}: {e}", p.display()))),
        (None, None) => Err(usage(
            "--spec or --spec-file is needed, e.g. --spec 'interval call = begin -> end'"
                .into(),
        )),
    }
}

fn lost_warnings(index: &Index) {
    if index.user_lost_total() > 0 {
        eprintln!(
            "warning: {} of the program's events were lost (its rings were full)",
            index.user_lost_total()
        );
    }
    if index.kernel_lost_total() > 0 {
        eprintln!(
            "warning: the kernel lost {}",
            count(index.kernel_lost_total(), "event", "events")
        );
    }
}

fn record_cmd(a: &RecordArgs) -> anyhow::Result<ExitCode> {
    let kinds = KernelRequest::parse_kinds(&a.kernel)
        .map_err(|e| usage(format!("--kernel: {e}")))?;
    let buffer = match &a.buffer {
        None => None,
        Some(b) => Some(
            crate::bench::params::parse_bytes(b)
                .filter(|&n| n >= syscost_trace::recorder::MIN_BUFFER)
                .ok_or_else(|| {
                    usage(format!(
                        "--buffer {b}: a size of at least {} bytes, like 64k or 4m",
                        syscost_trace::recorder::MIN_BUFFER
                    ))
                })?,
        ),
    };
    // Can the file be written? Checked as its kind asks, leaving nothing behind.
    crate::os::target::Target::of(&a.output)
        .and_then(|t| t.check())
        .map_err(|e| usage(format!("cannot write -o {}: {e}", a.output.display())))?;
    let request = KernelRequest {
        kinds,
        ..KernelRequest::all()
    };
    let mut start_error = None;
    let done = record::record(&a.command, &a.output, &request, buffer, &mut |e| {
        start_error = Some(e.kind());
    })?;
    let Some(r) = done else {
        let name = a.command[0].to_string_lossy();
        return Ok(match start_error {
            Some(std::io::ErrorKind::NotFound) => {
                eprintln!("syscost: {name}: command not found");
                ExitCode::from(127)
            }
            _ => {
                eprintln!("syscost: {name}: cannot be executed");
                ExitCode::from(126)
            }
        });
    };
    if let Some(why) = &r.kernel_unavailable {
        eprintln!("syscost: {why}; the program's own events are recorded");
    }
    if !r.user_trace {
        eprintln!(
            "syscost: the command wrote no events of its own (it does not open a trace from \
             SYSCOST_TRACE); the file holds the kernel's events"
        );
    }
    if r.user_truncated {
        eprintln!(
            "warning: the command's trace was cut short (it was killed while writing)"
        );
    }
    // A file is read back for its counts; a device or FIFO cannot be.
    let readable =
        crate::os::target::Target::of(&a.output).is_ok_and(|t| t.replaced_whole());
    if readable {
        let (file, index) = open(&a.output)?;
        drop(file);
        eprintln!(
            "syscost: wrote {}: {} events from the command ({} lost), {} from the kernel \
             ({} lost)",
            a.output.display(),
            index.user_events,
            index.user_lost_total(),
            r.kernel_events,
            r.kernel_lost
        );
    } else {
        eprintln!(
            "syscost: wrote {}: {} events from the kernel ({} lost)",
            a.output.display(),
            r.kernel_events,
            r.kernel_lost
        );
    }
    Ok(ExitCode::from(r.status.shell_code()))
}

fn show_cmd(a: &ShowArgs) -> anyhow::Result<ExitCode> {
    let (file, index) = open(&a.file)?;
    let names = index.names();
    let mut filter = show::Filter {
        threads: a.threads.clone(),
        cpus: a.cpus.clone(),
        kernel: !a.no_kernel,
        user: !a.no_user,
        limit: a.limit,
        ..show::Filter::default()
    };
    for e in &a.events {
        if let Ok(id) = e.parse::<u32>() {
            filter.events.push(id);
        } else if let Some((id, _)) = names.iter().find(|(_, n)| *n == e) {
            filter.events.push(*id);
        } else if DEFAULT_KINDS.iter().any(|k| k.name() == *e)
            || ["timer_exit", "irq_exit", "softirq_exit", "ipi_exit"]
                .contains(&e.as_str())
        {
            filter.kernel_kinds.push(e.clone());
        } else {
            return Err(usage(format!(
                "--event {e}: neither an event of this trace ({}) nor a kernel event kind",
                names.values().cloned().collect::<Vec<_>>().join(", ")
            )));
        }
    }
    // Naming only user events hides kernel events, and the other way round.
    if !filter.events.is_empty() && filter.kernel_kinds.is_empty() {
        filter.kernel = false;
    }
    if filter.events.is_empty() && !filter.kernel_kinds.is_empty() {
        filter.user = false;
    }
    filter.from_ns = a
        .from
        .as_deref()
        .map(|t| duration("--from", t))
        .transpose()?;
    filter.to_ns = a.to.as_deref().map(|t| duration("--to", t)).transpose()?;
    let mut out = std::io::BufWriter::new(crate::report::stdout());
    let json = a.format == TableOrJson::Json;
    if !json {
        write!(out, "{}", show::header(&index))?;
        writeln!(out)?;
    }
    let n = show::show(&file, &index, &filter, json, &mut out)?;
    out.flush()?;
    if !json {
        eprintln!("{} shown", count(n, "event", "events"));
    }
    lost_warnings(&index);
    Ok(ExitCode::SUCCESS)
}

fn reduce_cmd(a: &ReduceArgs) -> anyhow::Result<ExitCode> {
    let (file, index) = open(&a.file)?;
    let spec = reduce::parse_spec(&spec_text(&a.spec, &a.spec_file)?, &index.names())
        .map_err(|e| usage(format!("--spec: {e}")))?;
    let guard = duration("--guard", &a.guard)?;
    let r = reduce::reduce(&file, &index, &spec, guard)?;
    let mut out = crate::report::stdout();
    match a.format {
        TableOrJson::Table => write!(out, "{}", reduce::render(&r))?,
        TableOrJson::Json => writeln!(out, "{}", serde_json::to_string_pretty(&r)?)?,
    }
    out.flush()?;
    if a.format == TableOrJson::Json {
        lost_warnings(&index);
    }
    Ok(ExitCode::SUCCESS)
}

fn export_cmd(a: &ExportArgs) -> anyhow::Result<ExitCode> {
    let (file, index) = open(&a.file)?;
    let spec = match &a.spec {
        Some(s) => reduce::parse_spec(s, &index.names())
            .map_err(|e| usage(format!("--spec: {e}")))?,
        None => vec![],
    };
    let guard = duration("--guard", &a.guard)?;
    crate::os::target::Target::of(&a.output)
        .and_then(|t| t.check())
        .map_err(|e| usage(format!("cannot write -o {}: {e}", a.output.display())))?;
    let written = (|| -> anyhow::Result<export::Exported> {
        let mut out = std::io::BufWriter::with_capacity(
            1 << 20,
            crate::os::target::create(&a.output)?,
        );
        let n = export::export(&file, &index, &spec, guard, a.format, &mut out)?;
        out.into_inner().map_err(|e| e.into_error())?.commit()?;
        Ok(n)
    })();
    let n = written.map_err(|e| e.context(format!("writing {}", a.output.display())))?;
    eprintln!(
        "syscost: wrote {}: {} user events, {} kernel events, {} intervals",
        a.output.display(),
        n.user_events,
        n.kernel_events,
        n.intervals
    );
    if a.format == ExportFormat::ChromeJson && n.records > export::JSON_WARN_EVENTS {
        eprintln!(
            "warning: {} events in JSON: viewers struggle beyond about a million; --format perfetto scales",
            n.records
        );
    }
    lost_warnings(&index);
    Ok(ExitCode::SUCCESS)
}
