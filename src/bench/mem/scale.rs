//! will-it-scale's memory tests that the rest of the family does not measure: the TLB
//! flush of `MADV_DONTNEED` on a page just written (`tlb_flush1-3`), the write fault on
//! a private mapping of a file (`page_fault2`), the mapping and unmapping of a whole
//! file (`mmap2`) and the C library's `malloc`+`free` (`malloc1-2`).
//!
//! A TLB flush reaches other CPUs only where other threads of the same address space
//! run: as will-it-scale does, run it as threads (`copies=2 copies_as=thread`), and
//! each `madvise` then sends a shootdown to the other copies' CPUs. As processes, or
//! alone, the flush stays on the measuring CPU.
//!
//! The regions are mapped before each sample by the body's `reset` and unmapped with
//! the next one, outside the clock (will-it-scale maps and unmaps them inside its loop,
//! once per 128 MiB or 1 MiB of pages); the files have no name.

use crate::bench::facts::*;
use crate::bench::{
    body, check, InRun, Kind, OrOs, ParamSpec, Params, Prepared, RunContext,
};
use crate::error::BenchError;
use crate::harness::Body;
use crate::os::mem::{page_size, Mapping};
use crate::os::ops;
use std::fs::File;
use std::os::fd::AsFd;

/// What a region maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Map {
    /// A private mapping of a file (a write copies the page).
    FilePrivate,
    /// Private anonymous memory.
    Anon,
    /// A shared mapping of a file (a write dirties the file's page).
    FileShared,
}

/// A sparse unnamed file of `len` bytes in the run's scratch directory.
fn sparse(cx: &RunContext, len: u64) -> Result<File, BenchError> {
    let dir = cx.scratch_dir();
    let f = crate::bench::file::unnamed_in(&dir)?;
    check(ops::ftruncate(f.as_fd(), len) as i64, "ftruncate")?;
    Ok(f)
}

const SIZE: ParamSpec = ParamSpec {
    name: "size",
    default: "1m",
    about: "bytes mapped per sample, a page at a time (will-it-scale maps 128 MiB, \
            1 MiB for anonymous memory)",
    kind: Kind::Bytes {
        min: 64 << 10,
        max: 1 << 30,
    },
};

/// `mem.tlb_flush`.
pub const TLB_FLUSH: InRun = InRun {
    name: "mem.tlb_flush",
    facts: Facts {
        named_only: true,
        ..MEMORY.on(
            Libc,
            "madvise; entered too by the write's and the read's page faults",
        )
    },
    about: "a write to a page, madvise(MADV_DONTNEED) of it (a TLB flush: on every CPU \
            running a thread of this process, so copies_as=thread sends shootdowns), \
            and a read of it again, per page (will-it-scale's tlb_flush1-3)",
    origin: "",
    params: &[
        ParamSpec {
            name: "map",
            default: "file-private,anon,file-shared",
            about: "file-private: a private mapping of a file (tlb_flush1) · anon: \
                    anonymous memory (tlb_flush2) · file-shared: a shared mapping of a \
                    file (tlb_flush3)",
            kind: Kind::Choice(&["file-private", "anon", "file-shared"]),
        },
        SIZE,
        ParamSpec {
            name: "thp",
            default: "system",
            about: "system: the region as the system's huge-page settings make it, as \
                    will-it-scale leaves it (a file's large folios may be mapped by a \
                    PMD, and a 4 KiB MADV_DONTNEED then splits it) · never: \
                    MADV_NOHUGEPAGE, base pages only",
            kind: Kind::Choice(&["system", "never"]),
        },
    ],
    prepare: prepare_tlb,
};

struct Tlb {
    map: Map,
    file: Option<File>,
    size: usize,
    page: usize,
    /// `thp=never`: MADV_NOHUGEPAGE on each fresh region.
    base_pages: bool,
    current: Option<Mapping>,
}

#[cold]
#[inline(never)]
fn wrong_byte(v: u8) -> BenchError {
    BenchError::Failed(format!("after MADV_DONTNEED the page read {v}"))
}

impl Body for Tlb {
    #[inline(never)]
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        let m = self.current.as_ref().expect("reset maps the region");
        // A private page reads as zero again (the file's, or the zero page); a
        // shared one as the file's page, which holds the write.
        let want = u8::from(self.map == Map::FileShared);
        for _ in 0..iters {
            let mut off = 0;
            while off < self.size {
                m.write_at(off, 1);
                check(m.dontneed(off, self.page) as i64, "madvise(MADV_DONTNEED)")?;
                let v = m.read_at(off);
                if v != want {
                    return Err(wrong_byte(v));
                }
                off += self.page;
            }
        }
        Ok(())
    }

    fn reset(&mut self, iters: u64) -> Result<(), BenchError> {
        if iters != 1 {
            return Err(BenchError::Failed("TLB batches hold one mapping".into()));
        }
        self.current = None;
        let m = match (&self.file, self.map) {
            (Some(f), Map::FileShared) => Mapping::file_rw(f.as_fd(), self.size, true),
            (Some(f), _) => Mapping::file_rw(f.as_fd(), self.size, false),
            (None, _) => Mapping::anon(self.size, false),
        }
        .map_err(|e| BenchError::os("mmap", e))?;
        if self.base_pages {
            m.advise(libc::MADV_NOHUGEPAGE)
                .map_err(|e| BenchError::os("madvise(MADV_NOHUGEPAGE)", e))?;
        }
        self.current = Some(m);
        Ok(())
    }
}

fn prepare_tlb(p: &Params, cx: &RunContext) -> Result<Prepared, BenchError> {
    let page = page_size();
    let size = (p.int("size") as usize / page * page).max(page);
    let map = match p.get("map") {
        "anon" => Map::Anon,
        "file-shared" => Map::FileShared,
        _ => Map::FilePrivate,
    };
    let file = match map {
        Map::Anon => None,
        _ => Some(sparse(cx, size as u64)?),
    };
    let body = Tlb {
        map,
        file,
        size,
        page,
        base_pages: p.get("thp") == "never",
        current: None,
    };
    Ok(Prepared::new(Box::new(body))
        .op("write+DONTNEED+read")
        .plan(crate::bench::per_page(size, page)))
}

/// `mem.fault.private`.
pub const FAULT_PRIVATE: InRun = InRun {
    name: "mem.fault.private",
    facts: Facts { named_only: true, ..MEMORY.on(Fault, "the writes' faults") },
    about: "a write to each page of a fresh private mapping of a file, per page: the \
            page cache's page is read and copied (will-it-scale's page_fault2)",
    origin: "",
    params: &[
        ParamSpec {
            default: "8m",
            about: "bytes mapped and written per sample (will-it-scale maps 128 MiB)",
            ..SIZE
        },
        ParamSpec {
            name: "unmap",
            default: "untimed",
            about: "untimed: the faults alone, the region unmapped before the next sample \
                    · timed: its munmap too, inside the clock, its cost shared by the \
                    pages (will-it-scale's loop: each of its iterations carries 1/32768 of \
                    an unmapping of 128 MiB of copied pages)",
            kind: Kind::Choice(&["untimed", "timed"]),
        },
    ],
    prepare: prepare_fault_private,
};

struct PrivateFault {
    file: File,
    size: usize,
    page: usize,
    /// Whether the munmap is inside the clock.
    unmap_timed: bool,
    current: Option<Mapping>,
}

impl Body for PrivateFault {
    #[inline(never)]
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        let m = self.current.as_ref().expect("reset maps the region");
        for _ in 0..iters {
            m.touch_write(self.page);
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
            return Err(BenchError::Failed("fault batches hold one mapping".into()));
        }
        self.current = None;
        let m = Mapping::file_rw(self.file.as_fd(), self.size, false)
            .map_err(|e| BenchError::os("mmap", e))?;
        self.current = Some(m);
        Ok(())
    }
}

fn prepare_fault_private(p: &Params, cx: &RunContext) -> Result<Prepared, BenchError> {
    let page = page_size();
    let size = (p.int("size") as usize / page * page).max(page);
    let file = sparse(cx, size as u64)?;
    // Its pages in the page cache before the first sample, as after will-it-scale's
    // first pass: the faults copy them, not read them from storage.
    Mapping::file_rw(file.as_fd(), size, true)
        .or_os("mmap")?
        .touch_read(page);
    let body = PrivateFault {
        file,
        size,
        page,
        unmap_timed: p.get("unmap") == "timed",
        current: None,
    };
    Ok(Prepared::new(Box::new(body))
        .op(if p.get("unmap") == "timed" {
            "page (its fault and 1/N of the munmap)"
        } else {
            "page"
        })
        .plan(crate::bench::per_page(size, page)))
}

/// `mem.mmap_file`.
pub const MMAP_FILE: InRun = InRun {
    name: "mem.mmap_file",
    facts: Facts {
        named_only: true,
        ..MEMORY.on(Libc, "mmap and munmap")
    },
    about: "mmap of a whole file, private and writable, and munmap of it, no page \
            touched (will-it-scale's mmap2)",
    origin: "",
    params: &[ParamSpec {
        default: "128m",
        about: "the file's size, mapped whole (will-it-scale's 128 MiB)",
        ..SIZE
    }],
    prepare: |p, cx| {
        let size = p.int("size") as usize;
        let file = sparse(cx, size as u64)?;
        Ok(Prepared::new(body(move || {
            let m = Mapping::file_rw(file.as_fd(), size, false)
                .map_err(|e| BenchError::os("mmap", e))?;
            drop(m);
            Ok(())
        }))
        .op("mmap+munmap pair"))
    },
};

/// Whether malloc is below the C library's mmap threshold (128 KiB as a process
/// starts): no call, the instance stays in user space.
fn below_mmap_threshold(p: &Params) -> bool {
    p.0.iter()
        .find(|(n, _)| *n == "size")
        .and_then(|(_, v)| v.parse::<u64>().ok())
        .is_some_and(|n| n < 128 << 10)
}

/// `mem.malloc`.
pub const MALLOC: InRun = InRun {
    name: "mem.malloc",
    facts: Facts {
        named_only: true,
        user_space: Some(below_mmap_threshold),
        ..MEMORY.on(
            Libc,
            "malloc and free: mmap and munmap above the C library's mmap threshold, no \
         call below it",
        )
    },
    about: "the C library's malloc of `size` bytes and free of them, untouched: mmap \
            and munmap above its mmap threshold (will-it-scale's malloc1), its own free \
            lists below (malloc2, no kernel entry)",
    origin: "",
    params: &[ParamSpec {
        name: "size",
        default: "128m",
        about: "bytes asked for (will-it-scale's 128 MiB and 1 KiB)",
        kind: Kind::Bytes {
            min: 1,
            max: 1 << 30,
        },
    }],
    prepare: |p, _| {
        let size = p.int("size") as usize;
        Ok(Prepared::new(body(move || {
            if !ops::malloc_free(size) {
                return Err(BenchError::Failed(format!("malloc({size}) returned NULL")));
            }
            Ok(())
        }))
        .op("malloc+free pair"))
    },
};

/// The family's benchmarks from will-it-scale.
pub const BENCHES: &[&dyn crate::bench::Bench] =
    &[&TLB_FLUSH, &FAULT_PRIVATE, &MMAP_FILE, &MALLOC];
