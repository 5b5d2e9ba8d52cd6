//! The VMS memory-management services (Nagy's Table I, "5 pages affected") with their
//! modern equivalents over `n` pages: create and delete virtual addresses (mmap and
//! munmap), expand and contract the region (brk), set protection (mprotect), map a
//! global section at chosen addresses or where the system likes (a memfd mapped with
//! or without `MAP_FIXED`), and change a mapping (mremap).
//!
//! Where a service has no undo of its own, one operation is the service and its undo,
//! so the state is the same before every iteration; the table names it ("per ... pair").

use crate::bench::facts::*;
use crate::bench::{body, check, Kind, OrOs, ParamSpec, Params, Prepared, Simple};
use crate::error::BenchError;
use crate::harness::{Body, Plan};
use crate::os::brk::{BelowBreak, Break};
use crate::os::mem::{self, page_size, Mapping};
use std::os::fd::AsFd;

const N: ParamSpec = ParamSpec {
    name: "n",
    default: "5",
    about: "pages affected (the VMS table's 5)",
    kind: Kind::Int {
        min: 1,
        max: 1 << 18,
    },
};

fn bytes(p: &Params) -> usize {
    p.int("n") as usize * page_size()
}

/// `mem.mmap`: $CRETVA + $DELTVA.
pub const MMAP: Simple = Simple {
    name: "mem.mmap",
    facts: MEMORY.on(Libc, "mmap and munmap (touch=yes: and the faults between)"),
    about: "mmap of n pages of anonymous memory and munmap of them (create and delete virtual addresses)",
    origin: "nagy VMS $CRETVA 383 µs + $DELTVA 626 µs",
    params: &[
        N,
        ParamSpec {
            name: "touch",
            default: "no",
            about: "yes: write every page between the two calls (n zero-fill faults, n pages freed)",
            kind: Kind::Choice(&["no", "yes"]),
        },
        ParamSpec {
            name: "reserve",
            default: "no",
            about: "no: MAP_NORESERVE, nothing charged · yes: a plain mmap, charged against \
                    the commit limit on map and uncharged on unmap (will-it-scale's mmap1)",
            kind: Kind::Choice(&["no", "yes"]),
        },
    ],
    prepare: |p| {
        let len = bytes(p);
        let touch = p.get("touch") == "yes";
        let reserve = p.get("reserve") == "yes";
        let page = page_size();
        let plan = crate::bench::faulting(touch);
        Ok(Prepared::new(body(move || {
            let m = Mapping::anon_reserved(len, reserve)
                .map_err(|e| BenchError::os("mmap", e))?;
            if touch {
                m.touch_write(page);
            }
            drop(m);
            Ok(())
        }))
        .op("mmap+munmap pair")
        .plan(plan))
    },
};

/// `mem.brk`: $EXPREG + $CNTREG.
pub const BRK: Simple = Simple {
    name: "mem.brk",
    facts: MEMORY.on(
        Generic,
        "brk up and down (the C library's brk would move its own idea of the break)",
    ),
    about: "brk raising the program break by n pages and lowering it back (expand and contract the region)",
    origin: "nagy VMS $EXPREG 408 µs + $CNTREG 639 µs",
    params: &[
        N,
        ParamSpec {
            name: "below",
            default: "own",
            about: "what lies below the break: own, a page taken and written as malloc's heap is \
                    (brk extends that mapping and cuts it back); untouched, a page taken and never \
                    written (the same with no anon_vma to copy: will-it-scale brk2); apart, a \
                    mapping brk may not extend, here a read-only page (brk makes a mapping and \
                    removes it, as in will-it-scale brk1's tasks, whose heap came from their parent \
                    at fork)",
            kind: Kind::Choice(&["own", "untouched", "apart"]),
        },
    ],
    prepare: |p| {
        let len = bytes(p);
        let below = match p.get("below") {
            "untouched" => BelowBreak::Untouched,
            "apart" => BelowBreak::Apart,
            _ => BelowBreak::Own,
        };
        let brk = Break::new(below).map_err(|e| {
            if Break::check().is_err() {
                BenchError::Skip(format!(
                    "brk is measured only in a single-threaded process ({e}); run it \
                     through `syscost run mem.brk`"
                ))
            } else {
                BenchError::os("placing pages below the program break", e)
            }
        })?;
        // SAFETY: nothing allocated since Break::new read the break.
        #[allow(unsafe_code)]
        let moved = unsafe { brk.grow_shrink(len) };
        if moved != 0 {
            return Err(BenchError::Failed(format!(
                "brk could not grow by {len} bytes and shrink back"
            )));
        }
        Ok(Prepared::new(Box::new(BrkBody { brk, len })).op("grow+shrink pair"))
    },
};

struct BrkBody {
    brk: Break,
    len: usize,
}

impl Body for BrkBody {
    #[inline(never)]
    fn run(&mut self, iters: u64) -> Result<(), BenchError> {
        for _ in 0..iters {
            // SAFETY: `reset` read the break again before this batch, and the harness
            // allocates nothing between a body's reset and its run; the loop itself
            // allocates only on its way out with an error.
            #[allow(unsafe_code)]
            let moved = unsafe { self.brk.grow_shrink(self.len) };
            check(moved, "brk")?;
        }
        Ok(())
    }

    fn reset(&mut self, _: u64) -> Result<(), BenchError> {
        // The harness allocated since the last batch, and malloc may have raised the
        // break: lowering it to an older place would unmap what malloc handed out. A
        // thread started since (none should be) could race malloc: that fails.
        self.brk
            .refresh()
            .map_err(|e| BenchError::Failed(format!("brk: {e}")))
    }
}

/// `mem.mprotect`: $SETPRT.
pub const MPROTECT: Simple = Simple {
    name: "mem.mprotect",
    facts: MEMORY.on(Libc, "mprotect"),
    about: "mprotect of n resident pages, alternately read-only and read-write (set protection)",
    origin: "nagy VMS $SETPRT 3690 µs",
    params: &[N],
    prepare: |p| {
        let len = bytes(p);
        // Its own place, whatever else the process maps: its cost depends on whether
        // it merges with a neighbour and how many page tables it spans.
        // (The guard pages live as long as the body.)
        let (m, guards) = Mapping::anon_isolated(len).or_os("mmap")?;
        m.advise(libc::MADV_NOHUGEPAGE)
            .or_os("madvise")?;
        m.touch_write(page_size());
        let region = (m, guards);
        let mut read_only = false;
        Ok(Prepared::new(body(move || {
            read_only = !read_only;
            let prot = if read_only {
                libc::PROT_READ
            } else {
                libc::PROT_READ | libc::PROT_WRITE
            };
            check(region.0.protect(prot) as i64, "mprotect")
        }))
        .op("mprotect call"))
    },
};

/// `mem.map_shared`: $MGBLSC.
pub const MAP_SHARED: Simple = Simple {
    name: "mem.map_shared",
    facts: MEMORY.on(Libc, "mmap, then mmap or munmap"),
    about: "map n pages of a shared memory file (memfd) at a chosen address or where the kernel likes, and take the mapping away (map global section)",
    origin: "nagy VMS $MGBLSC 1839 µs (specified addresses), 1867 µs (extending P0)",
    params: &[
        N,
        ParamSpec {
            name: "at",
            default: "fixed,any",
            about: "fixed: MAP_FIXED over a reserved range, then the reservation put back · any: the kernel chooses, then munmap",
            kind: Kind::Choice(&["fixed", "any"]),
        },
    ],
    prepare: |p| {
        let len = bytes(p);
        let fd = mem::memfd(len).or_os("memfd_create")?;
        if p.get("at") == "fixed" {
            let r = Mapping::reserve(len).or_os("mmap")?;
            return Ok(Prepared::new(body(move || {
                check(r.map_fd_here(fd.as_fd(), len), "mmap(MAP_FIXED)")?;
                check(r.rereserve(), "mmap(PROT_NONE, MAP_FIXED)")
            }))
            .op("map at the address + reservation put back"));
        }
        Ok(Prepared::new(body(move || {
            let m = Mapping::file(fd.as_fd(), len, true)
                .map_err(|e| BenchError::os("mmap", e))?;
            drop(m);
            Ok(())
        }))
        .op("mmap+munmap pair"))
    },
};

/// `mem.mremap`: change the mapping of n resident pages.
pub const MREMAP: Simple = Simple {
    name: "mem.mremap",
    facts: MEMORY.on(Libc, "mremap, twice"),
    about: "mremap moving n resident pages to another address already reserved (change mapping)",
    origin: "nagy VMS change mapping of specified addresses 2431 µs",
    params: &[N],
    prepare: |p| {
        let len = bytes(p);
        let map = |what| {
            let m = Mapping::anon(len, false).or_os(what)?;
            m.advise(libc::MADV_NOHUGEPAGE)
                .or_os("madvise")?;
            Ok::<_, BenchError>(m)
        };
        let a = map("mmap")?;
        let b = map("mmap")?;
        a.touch_write(page_size());
        if mem::mremap_move(&a, &b) != 0 || mem::mremap_move(&b, &a) != 0 {
            return Err(BenchError::Skip(format!(
                "mremap with MREMAP_DONTUNMAP is unavailable (Linux 5.7+): {}",
                std::io::Error::last_os_error()
            )));
        }
        let plan = Plan {
            per_iter: 2,
            ..Plan::default()
        };
        Ok(Prepared::new(body(move || {
            check(mem::mremap_move(&a, &b), "mremap")?;
            check(mem::mremap_move(&b, &a), "mremap")
        }))
        .op("mremap move")
        .plan(plan))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Bench;
    use crate::os::task;

    #[test]
    fn the_brk_body_never_takes_back_memory_the_c_library_took_since_prepare() {
        // The C library's malloc moves the break in this same thread between batches
        // (the harness's own vectors grow). A body that lowered the break to where it
        // was at prepare would unmap that memory under malloc's feet. A forked child is
        // single-threaded, as `syscost run` is when it measures mem.brk.
        // SAFETY: the child prepares and runs the brk body, which allocates: with the C
        // library this runs on (glibc), fork resets the allocator's locks in the child,
        // and nothing else the child does takes a lock.
        #[allow(unsafe_code)]
        let mut c = unsafe {
            task::fork(|| {
                let Ok(mut p) = BRK.prepare(
                    &Params(vec![("n", "1".to_string()), ("below", "own".to_string())]),
                    &crate::bench::RunContext::default(),
                ) else {
                    return 2;
                };
                // What malloc does when its heap grows: sbrk, then use the memory.
                let Some(mem) = crate::os::brk::sbrk_for_test(256 * page_size()) else {
                    return 3;
                };
                mem.fill(1);
                if p.body.reset(4).is_err() || p.body.run(4).is_err() {
                    return 4;
                }
                // Still ours, still mapped: a write here faults if the body unmapped it.
                mem.fill(2);
                i32::from(mem.iter().any(|&b| b != 2)) * 5
            })
        }
        .unwrap();
        let st = c.wait().unwrap();
        assert_eq!(task::describe_status(st), "exited with status 0");
    }
}
