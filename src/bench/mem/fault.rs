//! Page faults: the first touch of fresh anonymous memory (zero fill), of a mapped file
//! in the page cache, and a write to a page shared copy-on-write with a child.
//!
//! Every sample touches one whole region of `size` bytes, a page at a time, and the
//! harness divides by the pages (`per_iter`), so the headline is ns per page. The region
//! is made fresh before each sample by the body's `reset`, outside the clock: the old
//! one is unmapped (or the old child reaped) and a new one mapped (or a new child
//! forked). Only the touches are timed, plus the prefault call itself where the
//! benchmark asks for one (`prefault=populate`).

use crate::bench::facts::*;
use crate::bench::Fact;
use crate::bench::{InRun, Kind, OrOs, ParamSpec, Params, Prepared, RunContext, Simple};
use crate::error::BenchError;
use crate::harness::{Body, Measurement};
use crate::os::mem::{page_size, Mapping, Sharer};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;

const SIZE: ParamSpec = ParamSpec {
    name: "size",
    default: "8m",
    about: "bytes touched per sample (the paper's 8 MiB)",
    kind: Kind::Bytes {
        min: 64 << 10,
        max: 4 << 30,
    },
};

/// Whether a sample's munmap is inside the clock (will-it-scale's page_fault loops map,
/// touch and unmap their 128 MiB each pass).
pub(crate) const UNMAP: ParamSpec = ParamSpec {
    name: "unmap",
    default: "untimed",
    about: "untimed: the faults alone, the region unmapped before the next sample · \
            timed: its munmap too, inside the clock, its cost shared by the pages (as in \
            will-it-scale's page_fault loops, which unmap each 128 MiB they touched)",
    kind: Kind::Choice(&["untimed", "timed"]),
};

/// `mem.fault.zero`.
pub const ZERO: Simple = Simple {
    name: "mem.fault.zero",
    facts: Facts {
        quotes: &[quote(
            Figure::ZeroFault,
            0,
            "page=4k prefault=none access=write",
            "per 4 KiB page",
        )],
        enters: Enters::Fixed(Fixed {
            path: Fault,
            unless: &[("prefault", "populate", Libc)],
            calls: "the touches' faults; populate: madvise(MADV_POPULATE_*) first, timed",
        }),
        ..MEMORY
    },
    about: "first touch of a page of freshly mapped anonymous memory (zero-fill fault), per page",
    origin: "manea1999 §5",
    params: &[
        SIZE,
        ParamSpec {
            name: "page",
            default: "4k",
            about: "4k: base pages (MADV_NOHUGEPAGE); thp: transparent huge pages (MADV_HUGEPAGE)",
            kind: Kind::Choice(&["4k", "thp"]),
        },
        ParamSpec {
            name: "prefault",
            default: "none",
            about: "none · populate: MADV_POPULATE_{WRITE,READ} first, timed with the touches · thread: a helper thread on another CPU prefaults each region while the previous one is touched",
            kind: Kind::Choice(&["none", "populate", "thread"]),
        },
        ParamSpec {
            name: "access",
            default: "write",
            about: "write: a zeroed page is allocated · read: the shared zero page is mapped",
            kind: Kind::Choice(&["write", "read"]),
        },
        UNMAP,
    ],
    prepare: prepare_zero,
};

/// The transparent huge page mode, e.g. "madvise", from sysfs.
fn thp_mode() -> Option<String> {
    let text =
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").ok()?;
    crate::host::parse::parse_bracketed(&text)
}

/// The huge page size, from sysfs (2 MiB on x86-64).
fn huge_page_size() -> usize {
    std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(2 << 20)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prefault {
    None,
    Populate,
    Thread,
}

/// A fresh region: aligned, advised for or against huge pages.
fn region(size: usize, page: usize, thp: bool) -> Result<Mapping, BenchError> {
    let m = if thp {
        Mapping::anon_aligned(size, page)
    } else {
        Mapping::anon(size, false)
    }
    .or_os("mmap")?;
    let advice = if thp {
        libc::MADV_HUGEPAGE
    } else {
        libc::MADV_NOHUGEPAGE
    };
    m.advise(advice).or_os("madvise(HUGEPAGE/NOHUGEPAGE)")?;
    Ok(m)
}

#[inline(always)]
fn touch(m: &Mapping, page: usize, write: bool) {
    if write {
        m.touch_write(page);
    } else {
        std::hint::black_box(m.touch_read(page));
    }
}

/// A helper thread that prefaults the regions it is given and hands them back.
struct Helper {
    to: Option<Sender<Mapping>>,
    from: Receiver<Mapping>,
    thread: Option<JoinHandle<()>>,
}

impl Helper {
    /// Starts the helper on the CPUs other than the measuring thread's.
    fn start(page: usize, write: bool) -> Result<Helper, BenchError> {
        let here = crate::os::sys::current_cpu();
        let online = std::fs::read_to_string("/sys/devices/system/cpu/online")
            .map(|t| crate::host::parse::parse_cpu_list(&t))
            .unwrap_or_default();
        let others: Vec<usize> =
            online.into_iter().filter(|&c| Some(c) != here).collect();
        if others.is_empty() {
            return Err(BenchError::Skip(
                "prefault=thread needs a second CPU for the helper thread".into(),
            ));
        }
        let (to, rx) = channel::<Mapping>();
        let (tx, from) = channel::<Mapping>();
        let thread = std::thread::Builder::new()
            .name("syscost-prefault".into())
            .spawn(move || {
                // Off the measuring thread's CPU where allowed; a cpuset may refuse it.
                let _ = crate::os::affinity::set_cpus(&others);
                for m in rx {
                    touch(&m, page, write);
                    if tx.send(m).is_err() {
                        break;
                    }
                }
            })
            .or_os("spawning the prefault thread")?;
        Ok(Helper {
            to: Some(to),
            from,
            thread: Some(thread),
        })
    }

    fn give(&self, m: Mapping) -> Result<(), BenchError> {
        self.to
            .as_ref()
            .expect("open until drop")
            .send(m)
            .map_err(|_| BenchError::Failed("the prefault thread stopped".into()))
    }

    fn take(&self) -> Result<Mapping, BenchError> {
        self.from
            .recv()
            .map_err(|_| BenchError::Failed("the prefault thread stopped".into()))
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        self.to = None; // ends the helper's loop
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct ZeroFault {
    size: usize,
    page: usize,
    thp: bool,
    write: bool,
    prefault: Prefault,
    current: Option<Mapping>,
    helper: Option<Helper>,
    /// With a helper: whether a region is with it now.
    lent: bool,
    /// Whether the munmap is inside the clock.
    unmap_timed: bool,
}

impl Body for ZeroFault {
    #[inline(never)]
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for _ in 0..iters {
            let m = self.current.as_ref().expect("reset maps a region");
            if self.prefault == Prefault::Populate {
                let advice = if self.write {
                    libc::MADV_POPULATE_WRITE
                } else {
                    libc::MADV_POPULATE_READ
                };
                m.advise(advice)
                    .map_err(|e| BenchError::os("madvise(POPULATE)", e))?;
            }
            touch(m, self.page, self.write);
        }
        if self.unmap_timed {
            if let Some(m) = self.current.take() {
                m.unmap().map_err(|e| BenchError::os("munmap", e))?;
            }
        }
        Ok(())
    }

    fn reset(&mut self, iters: u64) -> Result<(), BenchError> {
        if iters != 1 {
            return Err(BenchError::Failed("fault batches hold one region".into()));
        }
        self.current = None; // unmap the region touched last
        let Some(helper) = &self.helper else {
            self.current = Some(region(self.size, self.page, self.thp)?);
            return Ok(());
        };
        // The helper prefaulted the next region while the last one was touched; give it
        // the one after.
        if !self.lent {
            helper.give(region(self.size, self.page, self.thp)?)?;
        }
        self.current = Some(helper.take()?);
        helper.give(region(self.size, self.page, self.thp)?)?;
        self.lent = true;
        Ok(())
    }
}

fn prepare_zero(p: &Params) -> Result<Prepared, BenchError> {
    let thp = p.get("page") == "thp";
    let write = p.get("access") == "write";
    let prefault = match p.get("prefault") {
        "populate" => Prefault::Populate,
        "thread" => Prefault::Thread,
        _ => Prefault::None,
    };
    let page = if thp {
        let mode = thp_mode();
        if !matches!(mode.as_deref(), Some("always") | Some("madvise")) {
            let why = mode.map_or("no /sys/kernel/mm/transparent_hugepage".into(), |m| {
                format!("the kernel's mode is [{m}]")
            });
            return Err(BenchError::Skip(format!(
                "transparent huge pages are unavailable: {why}"
            )));
        }
        huge_page_size()
    } else {
        page_size()
    };
    let size = p.int("size") as usize / page * page;
    if size == 0 {
        return Err(BenchError::Skip(format!(
            "size is smaller than one {page} B page"
        )));
    }
    let helper = match prefault {
        Prefault::Thread => Some(Helper::start(page, write)?),
        _ => None,
    };
    let body = ZeroFault {
        size,
        page,
        thp,
        write,
        prefault,
        current: None,
        helper,
        lent: false,
        unmap_timed: p.get("unmap") == "timed",
    };
    let plan = crate::bench::per_page(size, page);
    Ok(Prepared::new(Box::new(body))
        .op(if thp { "huge page" } else { "page" })
        .plan(plan)
        .after(Box::new(move |_, m| {
            Ok(fault_facts(m, page, write, prefault))
        })))
}

fn fault_facts(
    m: &Measurement,
    page: usize,
    write: bool,
    prefault: Prefault,
) -> Vec<Fact> {
    let a = &m.analysis;
    let mut facts = vec![Fact::new(
        "minor_faults_per_page",
        a.accounting.minor_faults,
        "count",
        match prefault {
            Prefault::Thread => "on the measuring thread (the helper took the faults)",
            _ => "from getrusage over every sample (1 for one fault per page)",
        },
    )];
    if let Some(h) = Some(a.figure()).filter(|v| v.is_finite()) {
        // Only a write on the measuring thread zeroes pages in the timed region.
        if write && prefault != Prefault::Thread {
            facts.push(Fact::new(
                "gb_per_s",
                page as f64 / h,
                "GB/s",
                "zeroing bandwidth: bytes of fresh pages made ready per second",
            ));
        }
        if page > 4096 {
            facts.push(Fact::new(
                "ns_per_4k",
                h * 4096.0 / page as f64,
                "ns",
                "the median per 4 KiB, to compare with base pages",
            ));
        }
    }
    facts
}

/// `mem.fault.file`.
pub const FILE: InRun = InRun {
    name: "mem.fault.file",
    facts: MEMORY.on(Fault, "the reads' faults"),
    about: "first read of a page of a freshly mapped file that is in the page cache, per page",
    origin: "manea1999 §5–6",
    params: &[SIZE],
    prepare: prepare_file,
};

struct FileFault {
    scratch: std::sync::Arc<crate::bench::file::Scratch>,
    size: usize,
    page: usize,
    current: Option<Mapping>,
    rewarmed: std::rc::Rc<std::cell::Cell<u64>>,
}

impl Body for FileFault {
    #[inline(never)]
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for _ in 0..iters {
            let m = self.current.as_ref().expect("reset maps the file");
            std::hint::black_box(m.touch_read(self.page));
        }
        Ok(())
    }

    fn reset(&mut self, iters: u64) -> Result<(), BenchError> {
        if iters != 1 {
            return Err(BenchError::Failed("fault batches hold one mapping".into()));
        }
        self.current = None;
        let m = Mapping::file(
            std::os::fd::AsFd::as_fd(self.scratch.file()),
            self.size,
            true,
        )
        .map_err(|e| BenchError::os("mmap of the test file", e))?;
        // Another benchmark (a cold file.read) may have evicted the shared file.
        let pages = self.size / self.page;
        if m.resident_pages()
            .map_err(|e| BenchError::os("mincore", e))?
            < pages
        {
            self.scratch.warm()?;
            self.rewarmed.set(self.rewarmed.get() + 1);
        }
        self.current = Some(m);
        Ok(())
    }
}

fn prepare_file(p: &Params, cx: &RunContext) -> Result<Prepared, BenchError> {
    let page = page_size();
    let size = p.int("size") as usize / page * page;
    let scratch = cx.scratch(size as u64)?;
    // The region's page cache is of this benchmark's own making, each round: evicted
    // and read back with 1 MiB reads. The size of its folios sets how many pages one
    // fault maps, and it depended on what had last put the file in the cache: here 32
    // ns a page (one fault per 89 pages) as written or as a cold file.read's readahead
    // left it, 52 ns (one per 61) when that state turned, seconds into 2 of 12 runs,
    // and 122 ns (one per 16, the fault-around window) as read back here, in every run.
    // On a file system that does not evict on request the pages stay as they are.
    let probe = scratch.map()?;
    scratch.evict(&probe, false, size as u64)?;
    drop(probe);
    scratch.warm()?;
    let rewarmed = std::rc::Rc::new(std::cell::Cell::new(0));
    let body = FileFault {
        scratch,
        size,
        page,
        current: None,
        rewarmed: rewarmed.clone(),
    };
    let plan = crate::bench::per_page(size, page);
    Ok(Prepared::new(Box::new(body))
        .op("page")
        .plan(plan)
        .after(Box::new(move |_, m| {
            let mut facts = vec![Fact::new(
                "minor_faults_per_page",
                m.analysis.accounting.minor_faults,
                "count",
                "below 1: each fault maps several cached neighbours (fault-around, large folios)",
            )];
            if m.analysis.accounting.major_faults > 0.0 {
                facts.push(Fact::new(
                    "major_faults_per_page",
                    m.analysis.accounting.major_faults,
                    "count",
                    "pages that had to be read from storage: the file was not all cached",
                ));
            }
            if rewarmed.get() > 0 {
                facts.push(Fact::new(
                    "rewarmed",
                    rewarmed.get() as f64,
                    "count",
                    "batches before which the file had to be read back into the cache",
                ));
            }
            Ok(facts)
        })))
}

/// `mem.fault.cow`.
pub const COW: Simple = Simple {
    name: "mem.fault.cow",
    facts: MEMORY.on(Fault, "the writes' faults"),
    about:
        "write to a page shared copy-on-write with a forked child (copy fault), per page",
    origin: "DESIGN mem",
    params: &[SIZE],
    prepare: prepare_cow,
};

struct CowFault {
    region: Mapping,
    page: usize,
    child: Option<Sharer>,
}

impl Body for CowFault {
    #[inline(never)]
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for _ in 0..iters {
            self.region.touch_write(self.page);
        }
        Ok(())
    }

    fn reset(&mut self, iters: u64) -> Result<(), BenchError> {
        if iters != 1 {
            return Err(BenchError::Failed("fault batches hold one fork".into()));
        }
        self.child = None; // kill and reap the last sharer
        self.child = Some(Sharer::fork().map_err(|e| BenchError::os("fork", e))?);
        Ok(())
    }
}

fn prepare_cow(p: &Params) -> Result<Prepared, BenchError> {
    let page = page_size();
    let size = p.int("size") as usize / page * page;
    let region = region(size, page, false)?;
    region.touch_write(page);
    let body = CowFault {
        region,
        page,
        child: None,
    };
    let plan = crate::bench::per_page(size, page);
    Ok(Prepared::new(Box::new(body))
        .op("page")
        .plan(plan)
        .after(Box::new(move |_, m| {
            let mut facts = vec![Fact::new(
                "minor_faults_per_page",
                m.analysis.accounting.minor_faults,
                "count",
                "one copy fault per page shared with the child",
            )];
            if let Some(h) = Some(m.analysis.figure()).filter(|v| v.is_finite()) {
                facts.push(Fact::new(
                    "gb_per_s",
                    page as f64 / h,
                    "GB/s",
                    "bytes of pages copied per second",
                ));
            }
            Ok(facts)
        })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::testing::{self, fact, median, params_with};
    use crate::bench::Bench;

    /// Measures a benchmark in the smoke profile: the headline median and the facts.
    fn measure(b: &dyn Bench, params: &[&str]) -> Option<(f64, Vec<Fact>)> {
        let cx = RunContext::default();
        let prep = testing::prepare(b, &params_with(b, params), &cx).ok()?;
        assert!(prep.after.is_some(), "{}: an after step", b.name());
        let (m, facts) = testing::measure(prep);
        Some((median(&m), facts))
    }

    #[test]
    fn a_zero_fill_fault_is_one_minor_fault_per_page() {
        for access in ["access=write", "access=read"] {
            let (ns, facts) = measure(&ZERO, &["size=1m", access]).unwrap();
            assert!(ns > 0.0 && ns < 1e6, "{access}: {ns}");
            let faults = fact(&facts, "minor_faults_per_page");
            assert!((0.9..1.1).contains(&faults), "{access}: {faults}");
        }
    }

    #[test]
    fn populate_and_a_helper_take_the_faults() {
        let (_, facts) = measure(&ZERO, &["size=1m", "prefault=populate"]).unwrap();
        // MADV_POPULATE_WRITE faults each page in, inside the timed region.
        let faults = fact(&facts, "minor_faults_per_page");
        assert!((0.9..1.1).contains(&faults), "{faults}");
        // Read access: a fork by a concurrent test marks written pages copy-on-write,
        // and writing them would fault again; reads of the mapped pages do not.
        if let Some((ns, facts)) =
            measure(&ZERO, &["size=1m", "prefault=thread", "access=read"])
        {
            assert!(ns > 0.0 && ns < 1e6, "{ns}");
            // The measuring thread touches pages the helper already faulted.
            assert!(fact(&facts, "minor_faults_per_page") < 0.1, "{facts:?}");
        }
    }

    #[test]
    fn a_huge_page_fault_is_one_fault_per_huge_page_or_skipped() {
        let Some((ns, facts)) = measure(&ZERO, &["size=4m", "page=thp"]) else {
            return;
        };
        assert!(ns > 0.0 && ns < 1e7, "{ns}");
        // Where the kernel cannot find a free huge page it falls back to base pages
        // (512 faults per huge page); either way the count is reported.
        let faults = fact(&facts, "minor_faults_per_page");
        assert!(faults >= 0.9, "{faults}");
    }

    #[test]
    fn a_copy_on_write_fault_is_one_fault_per_page() {
        let (ns, facts) = measure(&COW, &["size=1m"]).unwrap();
        assert!(ns > 0.0 && ns < 1e6, "{ns}");
        let faults = fact(&facts, "minor_faults_per_page");
        assert!((0.9..1.1).contains(&faults), "{faults}");
    }

    #[test]
    fn a_file_fault_maps_cached_pages_without_io() {
        let (ns, facts) = measure(&FILE, &["size=1m"]).unwrap();
        assert!(ns > 0.0 && ns < 1e6, "{ns}");
        let faults = fact(&facts, "minor_faults_per_page");
        assert!(faults > 0.0 && faults <= 1.1, "{faults}");
    }
}
