//! Sampling a task and the tasks it starts with `perf_event_open`: one event per
//! online CPU for the calling thread, inherited by the threads and processes it makes
//! after the events are opened, each with a ring of its own (the kernel refuses a ring
//! for an inherited event not bound to a CPU). Each sample carries the instruction
//! pointer, the task, the time on `CLOCK_MONOTONIC_RAW` (the clock of the harness's
//! batch spans), the CPU, the period and the kernel's call chain, and the user-space
//! instruction pointer at the moment the task entered the kernel (`PERF_SAMPLE_REGS_USER`
//! with the IP register only: the user stack is not walked, because syscost is built
//! without frame pointers and a walk would invent frames).
//!
//! The event is the hardware cycle counter where the machine has one, else the
//! software `cpu-clock` (an hrtimer, so a sample is deferred while interrupts are off:
//! it lands where they are enabled again). Without the right to sample the kernel
//! (root, `CAP_PERFMON`, or `perf_event_paranoid` ≤ 1) the events are opened for user
//! space alone and the sampler says so. Everything closes and unmaps on drop.

use super::perf::{self, u32_at, u64_at, Attr, Event, Ring};
use std::io;

const TYPE_HARDWARE: u32 = 0;
const TYPE_SOFTWARE: u32 = 1;
const HW_CPU_CYCLES: u64 = 0;
const SW_CPU_CLOCK: u64 = 0;
const SAMPLE_IP: u64 = 1;
const SAMPLE_TID: u64 = 1 << 1;
const SAMPLE_TIME: u64 = 1 << 2;
const SAMPLE_CALLCHAIN: u64 = 1 << 5;
const SAMPLE_CPU: u64 = 1 << 7;
const SAMPLE_PERIOD: u64 = 1 << 8;
const SAMPLE_REGS_USER: u64 = 1 << 12;
/// The sample layout this module asks for and [`parse`] reads.
pub const SAMPLE_TYPE: u64 = SAMPLE_IP
    | SAMPLE_TID
    | SAMPLE_TIME
    | SAMPLE_CALLCHAIN
    | SAMPLE_CPU
    | SAMPLE_PERIOD
    | SAMPLE_REGS_USER;
const FLAG_INHERIT: u64 = 1 << 1;
const FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
const FLAG_EXCLUDE_HV: u64 = 1 << 6;
const FLAG_FREQ: u64 = 1 << 10;
const FLAG_EXCLUDE_CALLCHAIN_USER: u64 = 1 << 22;
/// `PERF_REG_X86_IP`: the one user register sampled.
#[cfg(target_arch = "x86_64")]
const REG_IP: u64 = 8;
#[cfg(not(target_arch = "x86_64"))]
const REG_IP: u64 = 32; // arm64's PERF_REG_ARM64_PC
/// Call-chain entries at or above this are context markers (`PERF_CONTEXT_MAX`).
const CONTEXT_MAX: u64 = (-4095i64) as u64;

/// What is counted between samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The hardware cycle counter, sampled at a frequency (the period varies).
    Cycles,
    /// The software CPU clock: one sample per `period` ns of the task's running time.
    CpuClock,
}

impl Kind {
    /// perf's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Cycles => "cycles",
            Kind::CpuClock => "cpu-clock",
        }
    }
}

/// What to sample and how often.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Samples per second of running time (the cpu-clock period is its inverse).
    pub hz: u64,
    /// Data pages per CPU's ring (rounded up to a power of two).
    pub pages: usize,
    /// Try the cycle counter first.
    pub prefer_cycles: bool,
}

/// The open events, one per online CPU, disabled until [`Sampler::enable`].
#[derive(Debug)]
pub struct Sampler {
    rings: Vec<Ring>,
    /// The event counted.
    pub kind: Kind,
    /// The period in ns (cpu-clock) or 0 (cycles, at a frequency).
    pub period_ns: u64,
    /// Kernel frames are sampled (else user space only).
    pub kernel: bool,
    /// Why kernel frames are not sampled, when they are not.
    pub refused: Option<String>,
    scratch: Vec<u8>,
}

fn attr(kind: Kind, o: &Options, kernel: bool) -> Attr {
    let (type_, config, period, freq) = match kind {
        Kind::Cycles => (TYPE_HARDWARE, HW_CPU_CYCLES, o.hz, FLAG_FREQ),
        Kind::CpuClock => (TYPE_SOFTWARE, SW_CPU_CLOCK, 1_000_000_000 / o.hz.max(1), 0),
    };
    let mut flags = perf::FLAG_DISABLED
        | FLAG_INHERIT
        | FLAG_EXCLUDE_HV
        | FLAG_EXCLUDE_CALLCHAIN_USER
        | perf::FLAG_USE_CLOCKID
        | freq;
    if !kernel {
        flags |= FLAG_EXCLUDE_KERNEL;
    }
    Attr {
        kind: type_,
        size: std::mem::size_of::<Attr>() as u32,
        config,
        sample_period: period,
        sample_type: SAMPLE_TYPE,
        flags,
        wakeup_events: 0,
        clockid: libc::CLOCK_MONOTONIC_RAW,
        sample_regs_user: 1 << REG_IP,
        sample_max_stack: 64,
        ..Attr::default()
    }
}

/// The online CPUs.
pub fn online_cpus() -> Vec<i32> {
    let text =
        std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    let cpus = crate::host::parse::parse_cpu_list(text.trim());
    if cpus.is_empty() {
        (0..std::thread::available_parallelism().map_or(1, |n| n.get()) as i32).collect()
    } else {
        cpus.into_iter().map(|c| c as i32).collect()
    }
}

/// What the kernel's refusal to sample it means, in one line.
pub fn why_no_kernel(e: &io::Error) -> String {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    format!(
        "kernel frames not sampled ({e}): they need root, CAP_PERFMON, or \
         kernel.perf_event_paranoid ≤ 1 (it is {paranoid}); user-space frames only"
    )
}

impl Sampler {
    /// Opens the events for the calling thread and what it starts from now on: cycles
    /// if asked and available, else cpu-clock; kernel and user space if allowed, else
    /// user space alone (with [`Sampler::refused`] saying why). An error when not even
    /// user space may be sampled.
    pub fn open(o: &Options) -> io::Result<Sampler> {
        let kinds: &[Kind] = if o.prefer_cycles {
            &[Kind::Cycles, Kind::CpuClock]
        } else {
            &[Kind::CpuClock]
        };
        let mut refused = None;
        let mut last = io::Error::other("no event to try");
        for &kind in kinds {
            for kernel in [true, false] {
                match Sampler::open_as(kind, o, kernel) {
                    Ok(mut s) => {
                        s.refused = refused;
                        return Ok(s);
                    }
                    Err(e) => {
                        let denied =
                            matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM));
                        if kernel && denied {
                            refused = Some(why_no_kernel(&e));
                            last = e;
                            continue;
                        }
                        last = e;
                        break; // this kind does not exist here: the next kind
                    }
                }
            }
        }
        Err(last)
    }

    fn open_as(kind: Kind, o: &Options, kernel: bool) -> io::Result<Sampler> {
        let a = attr(kind, o, kernel);
        let tid = super::task::gettid();
        let mut rings = Vec::new();
        for cpu in online_cpus() {
            let ev = Event::open(&a, tid, cpu)?;
            rings.push(Ring::map(ev, o.pages)?);
        }
        Ok(Sampler {
            rings,
            kind,
            period_ns: if kind == Kind::CpuClock {
                a.sample_period
            } else {
                0
            },
            kernel,
            refused: None,
            scratch: Vec::new(),
        })
    }

    /// Starts sampling (the inherited events of tasks started since follow).
    pub fn enable(&self) -> io::Result<()> {
        self.rings.iter().try_for_each(|r| r.event().enable())
    }

    /// Stops sampling.
    pub fn disable(&self) -> io::Result<()> {
        self.rings.iter().try_for_each(|r| r.event().disable())
    }

    /// Calls `f` with every record now in the rings, then frees their space.
    pub fn drain(&mut self, mut f: impl FnMut(Record<'_>)) {
        let scratch = &mut self.scratch;
        for r in &mut self.rings {
            r.read(scratch, |rec| {
                if let Some(x) = parse(rec) {
                    f(x)
                }
            });
        }
    }
}

/// A decoded sample of [`SAMPLE_TYPE`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample<'a> {
    /// Where the task was.
    pub ip: u64,
    /// Its process.
    pub pid: u32,
    /// Its thread.
    pub tid: u32,
    /// `CLOCK_MONOTONIC_RAW`, ns.
    pub time: u64,
    /// The CPU.
    pub cpu: u32,
    /// The period this sample stands for (ns for cpu-clock, cycles for cycles).
    pub period: u64,
    /// The call chain as the kernel wrote it: context markers and addresses, the
    /// leaf first (kernel entries only: user entries are excluded).
    pub chain: &'a [u8],
    /// The user-space instruction pointer when the task was last in user space (the
    /// sampled one when it is there now); None for a kernel thread.
    pub user_ip: Option<u64>,
}

impl Sample<'_> {
    /// The kernel addresses of the call chain, leaf first (markers dropped).
    pub fn kernel_frames(&self) -> impl Iterator<Item = u64> + '_ {
        self.chain
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .filter(|&a| a < CONTEXT_MAX)
    }
}

/// A record of a sampling ring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record<'a> {
    /// A sample.
    Sample(Sample<'a>),
    /// Samples the kernel dropped because the ring was full.
    Lost(u64),
    /// Any other record.
    Other(u32),
}

/// Decodes one record (header included) of [`SAMPLE_TYPE`]; None when it is shorter
/// than it claims.
pub fn parse(rec: &[u8]) -> Option<Record<'_>> {
    let kind = u32_at(rec, 0)?;
    let b = rec.get(8..)?;
    match kind {
        perf::RECORD_SAMPLE => {
            let ip = u64_at(b, 0)?;
            let pid = u32_at(b, 8)?;
            let tid = u32_at(b, 12)?;
            let time = u64_at(b, 16)?;
            let cpu = u32_at(b, 24)?;
            let period = u64_at(b, 32)?;
            let nr = usize::try_from(u64_at(b, 40)?).ok()?;
            let end = 48usize.checked_add(nr.checked_mul(8)?)?;
            let chain = b.get(48..end)?;
            let abi = u64_at(b, end)?;
            let user_ip = if abi == 0 {
                None
            } else {
                Some(u64_at(b, end + 8)?)
            };
            Some(Record::Sample(Sample {
                ip,
                pid,
                tid,
                time,
                cpu,
                period,
                chain,
                user_ip,
            }))
        }
        perf::RECORD_LOST => Some(Record::Lost(u64_at(b, 8)?)),
        other => Some(Record::Other(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sample record as the kernel writes one.
    pub(crate) fn record(
        ip: u64,
        tid: u32,
        time: u64,
        chain: &[u64],
        user: Option<u64>,
    ) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&perf::RECORD_SAMPLE.to_le_bytes());
        b.extend_from_slice(&[0, 0, 0, 0]);
        b.extend_from_slice(&ip.to_le_bytes());
        b.extend_from_slice(&tid.to_le_bytes());
        b.extend_from_slice(&tid.to_le_bytes());
        b.extend_from_slice(&time.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&50_000u64.to_le_bytes());
        b.extend_from_slice(&(chain.len() as u64).to_le_bytes());
        for a in chain {
            b.extend_from_slice(&a.to_le_bytes());
        }
        match user {
            Some(u) => {
                b.extend_from_slice(&2u64.to_le_bytes());
                b.extend_from_slice(&u.to_le_bytes());
            }
            None => b.extend_from_slice(&0u64.to_le_bytes()),
        }
        let n = b.len() as u16;
        b[6..8].copy_from_slice(&n.to_le_bytes());
        b
    }

    #[test]
    fn a_sample_with_a_kernel_chain_and_a_user_ip_decodes() {
        let marker = (-128i64) as u64; // PERF_CONTEXT_KERNEL
        let rec = record(
            0xffff_1000,
            42,
            9,
            &[marker, 0xffff_1000, 0xffff_2000],
            Some(0x5000),
        );
        let Some(Record::Sample(s)) = parse(&rec) else {
            panic!("not a sample")
        };
        assert_eq!(
            (s.ip, s.tid, s.time, s.cpu, s.period),
            (0xffff_1000, 42, 9, 1, 50_000)
        );
        assert_eq!(
            s.kernel_frames().collect::<Vec<_>>(),
            [0xffff_1000, 0xffff_2000]
        );
        assert_eq!(s.user_ip, Some(0x5000));
        for cut in 0..rec.len() {
            assert!(
                !matches!(parse(&rec[..cut]), Some(Record::Sample(_))),
                "cut {cut}"
            );
        }
        let kthread = record(0xffff_1000, 7, 9, &[], None);
        let Some(Record::Sample(s)) = parse(&kthread) else {
            panic!("not a sample")
        };
        assert_eq!(s.user_ip, None);
    }
}
