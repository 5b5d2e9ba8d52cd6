//! Memory mappings and the calls that change them: owning types for anonymous, file
//! and reserved mappings whose `Drop` unmaps them, page touching loops, `mincore`,
//! `mprotect`, `mremap`, `memfd_create`, and a forked child that shares pages
//! copy-on-write.
//!
//! Every operation here acts only on address ranges its caller owns through one of
//! these types; nothing can unmap or replace memory it did not map. It must not know
//! any benchmark by name, keep timing state, or print anything.
//!
//! # Safety
//! A [`Mapping`] owns the range `[ptr, ptr + len)` from a successful `mmap` until its
//! `Drop` unmaps it; the raw calls below either read or write inside that range, or
//! replace it in place with `MAP_FIXED` (never leaving a hole another mapping could
//! fill). The program break is `super::brk`'s.
#![allow(unsafe_code)]

use super::sys::cvt;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::ptr;

/// The base page size.
pub fn page_size() -> usize {
    // SAFETY: integer argument only.
    let r = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if r > 0 {
        r as usize
    } else {
        4096
    }
}

fn mmap_raw(
    addr: *mut libc::c_void,
    len: usize,
    prot: libc::c_int,
    flags: libc::c_int,
    fd: libc::c_int,
) -> io::Result<*mut u8> {
    // SAFETY: without MAP_FIXED the kernel picks an unused range; with MAP_FIXED the
    // callers pass only a range they own (see the module's safety note).
    let p = unsafe { libc::mmap(addr, len, prot, flags, fd, 0) };
    if p == libc::MAP_FAILED {
        Err(io::Error::last_os_error())
    } else {
        Ok(p as *mut u8)
    }
}

/// An owned memory mapping, unmapped on drop.
#[derive(Debug)]
pub struct Mapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: a Mapping owns its range exclusively (no aliases are handed out beyond
// borrows of the Mapping itself), so moving it to another thread is sound.
unsafe impl Send for Mapping {}

impl Mapping {
    /// A private anonymous read-write mapping of `len` bytes; `populate` faults every
    /// page in before returning (`MAP_POPULATE`).
    #[inline(always)]
    pub fn anon(len: usize, populate: bool) -> io::Result<Mapping> {
        let populate = if populate { libc::MAP_POPULATE } else { 0 };
        Mapping::anon_flags(len, libc::MAP_NORESERVE | populate)
    }

    /// A private anonymous read-write mapping of `len` bytes, untouched: with
    /// `MAP_NORESERVE` as [`Mapping::anon`] unless `reserve`, where the kernel charges
    /// it against the commit limit when it maps it and uncharges it when it unmaps it,
    /// as it does a program's plain `mmap`.
    #[inline(always)]
    pub fn anon_reserved(len: usize, reserve: bool) -> io::Result<Mapping> {
        Mapping::anon_flags(len, if reserve { 0 } else { libc::MAP_NORESERVE })
    }

    /// A private anonymous read-write mapping of `len` bytes with `flags` added.
    #[inline(always)]
    fn anon_flags(len: usize, flags: libc::c_int) -> io::Result<Mapping> {
        let ptr = mmap_raw(
            ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | flags,
            -1,
        )?;
        Ok(Mapping { ptr, len })
    }

    /// A private anonymous read-write mapping of `len` bytes charged against the
    /// system's commit limit (no `MAP_NORESERVE`), in base pages (`MADV_NOHUGEPAGE`
    /// where the kernel has huge pages), every page allocated and written before
    /// returning: memory that stays resident and that a `fork` must share
    /// copy-on-write, one page-table entry per page. Where overcommit is strict, or a
    /// limit (RLIMIT_AS, RLIMIT_DATA) is in the way, the mapping is refused with an
    /// error; `MADV_POPULATE_WRITE` (Linux 5.14) then allocates every page, failing
    /// with an error rather than a signal when the memory cannot be had.
    pub fn anon_resident(len: usize) -> io::Result<Mapping> {
        let m = Mapping::anon_flags(len, 0)?;
        // A kernel without transparent huge pages refuses the advice: base pages then.
        let _ = m.advise(libc::MADV_NOHUGEPAGE);
        match m.advise(libc::MADV_POPULATE_WRITE) {
            // A kernel older than 5.14: the touches below allocate the pages.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
            r => r?,
        }
        m.touch_write(page_size());
        Ok(m)
    }

    /// A private anonymous read-write mapping of `len` bytes starting on an `align`
    /// boundary (a power of two, e.g. 2 MiB for huge pages).
    pub fn anon_aligned(len: usize, align: usize) -> io::Result<Mapping> {
        let over = Mapping::anon(len + align, false)?;
        let start = (over.ptr as usize).next_multiple_of(align);
        let (base, total) = (over.ptr as usize, over.len);
        std::mem::forget(over);
        let head = start - base;
        let tail = total - head - len;
        // SAFETY: both ranges lie inside the over-sized mapping just made and owned
        // here; what remains, [start, start + len), becomes the new Mapping.
        unsafe {
            if head > 0 {
                libc::munmap(base as *mut libc::c_void, head);
            }
            if tail > 0 {
                libc::munmap((start + len) as *mut libc::c_void, tail);
            }
        }
        Ok(Mapping {
            ptr: start as *mut u8,
            len,
        })
    }

    /// A private anonymous read-write mapping of `len` bytes whose place does not
    /// depend on what else the process has mapped: it starts on a 2 MiB boundary (so
    /// up to 512 pages lie under one page table), and an inaccessible guard page on
    /// each side (returned with it, unmapped on drop too) keeps any other mapping from
    /// touching it, so changing its protection never merges or splits it with a
    /// neighbour: both change what mprotect costs (docs/measurements/rounds.md, "Where
    /// mprotect's pages lie").
    pub fn anon_isolated(len: usize) -> io::Result<(Mapping, [Mapping; 2])> {
        const ALIGN: usize = 2 << 20;
        let page = page_size();
        let len = len.max(1).next_multiple_of(page);
        let over = Mapping::reserve(len + ALIGN + 2 * page)?;
        let (base, total) = (over.ptr as usize, over.len);
        let start = (base + page).next_multiple_of(ALIGN);
        std::mem::forget(over);
        let (guard_lo, guard_hi) = (start - page, start + len);
        let (head, tail) = (guard_lo - base, base + total - (guard_hi + page));
        // SAFETY: every range below lies inside the reservation just made and owned
        // here: its head and tail are unmapped, the two guard pages stay PROT_NONE and
        // are owned by the guards returned, and [start, start + len) is replaced
        // (MAP_FIXED) by the read-write mapping returned.
        let guards = unsafe {
            if head > 0 {
                libc::munmap(base as *mut libc::c_void, head);
            }
            if tail > 0 {
                libc::munmap((guard_hi + page) as *mut libc::c_void, tail);
            }
            [
                Mapping {
                    ptr: guard_lo as *mut u8,
                    len: page,
                },
                Mapping {
                    ptr: guard_hi as *mut u8,
                    len: page,
                },
            ]
        };
        let middle = Mapping {
            ptr: start as *mut u8,
            len,
        };
        let ptr = mmap_raw(
            start as *mut libc::c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE
                | libc::MAP_ANONYMOUS
                | libc::MAP_NORESERVE
                | libc::MAP_FIXED,
            -1,
        )?;
        debug_assert_eq!(ptr, middle.ptr);
        Ok((middle, guards))
    }

    /// An inaccessible reservation of `len` bytes of address space (`PROT_NONE`).
    pub fn reserve(len: usize) -> io::Result<Mapping> {
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
        let ptr = mmap_raw(ptr::null_mut(), len, libc::PROT_NONE, flags, -1)?;
        Ok(Mapping { ptr, len })
    }

    /// A read-only mapping of the first `len` bytes of a file, shared (the page
    /// cache's own pages) or private.
    #[inline(always)]
    pub fn file(fd: BorrowedFd<'_>, len: usize, shared: bool) -> io::Result<Mapping> {
        let flags = if shared {
            libc::MAP_SHARED
        } else {
            libc::MAP_PRIVATE
        };
        let ptr = mmap_raw(ptr::null_mut(), len, libc::PROT_READ, flags, fd.as_raw_fd())?;
        Ok(Mapping { ptr, len })
    }

    /// A writable shared mapping of `len` bytes of a file from `offset` (a multiple
    /// of the page size): a write to a page dirties the file's own page.
    pub fn file_shared_rw(
        fd: BorrowedFd<'_>,
        len: usize,
        offset: u64,
    ) -> io::Result<Mapping> {
        // SAFETY: no MAP_FIXED, so the kernel picks an unused range; the mapping is
        // owned by the returned value and unmapped once, on drop.
        let p = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                offset as libc::off_t,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapping {
            ptr: p as *mut u8,
            len,
        })
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it is empty (never: mmap refuses a zero length).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Its start address.
    pub fn addr(&self) -> usize {
        self.ptr as usize
    }

    /// `madvise(advice)` over the whole mapping.
    pub fn advise(&self, advice: libc::c_int) -> io::Result<()> {
        // SAFETY: the range is this mapping's own; advice never unmaps it (MADV_DONTNEED
        // on a private anonymous mapping zero-fills it again, on a file mapping drops
        // only this process's page-table entries).
        let r = unsafe { libc::madvise(self.ptr as *mut libc::c_void, self.len, advice) };
        cvt(r as libc::c_long).map(|_| ())
    }

    /// `mprotect(prot)` over the whole mapping; returns the raw result. Callers only
    /// pass `PROT_READ` or `PROT_READ | PROT_WRITE` to an anonymous mapping, so every
    /// later access through this type stays valid.
    #[inline(always)]
    pub fn protect(&self, prot: libc::c_int) -> libc::c_int {
        // SAFETY: the range is this mapping's own; see the doc above.
        unsafe { libc::mprotect(self.ptr as *mut libc::c_void, self.len, prot) }
    }

    /// Writes one byte at every `stride` bytes: the first write to each page of a fresh
    /// anonymous mapping takes a zero-fill fault. The mapping must be writable.
    #[inline(always)]
    pub fn touch_write(&self, stride: usize) {
        let mut off = 0;
        while off < self.len {
            // SAFETY: off < len, inside this mapping, which the callers map writable.
            unsafe { ptr::write_volatile(self.ptr.add(off), 1) };
            off += stride;
        }
    }

    /// Reads one byte at every `stride` bytes and returns their sum (so the reads are
    /// kept): a never-written anonymous page maps the shared zero page.
    #[inline(always)]
    pub fn touch_read(&self, stride: usize) -> u64 {
        let mut sum = 0u64;
        let mut off = 0;
        while off < self.len {
            // SAFETY: off < len, inside this readable mapping.
            sum += unsafe { ptr::read_volatile(self.ptr.add(off)) } as u64;
            off += stride;
        }
        sum
    }

    /// Copies `buf.len()` bytes starting at `off` out of the mapping (a read through
    /// `mmap`). Panics if the range is outside the mapping.
    #[inline(always)]
    pub fn copy_out(&self, off: usize, buf: &mut [u8]) {
        assert!(
            off <= self.len && buf.len() <= self.len - off,
            "copy_out range"
        );
        // SAFETY: the source range was checked to lie inside this readable mapping;
        // `buf` is a distinct, writable slice of the same length.
        unsafe {
            ptr::copy_nonoverlapping(self.ptr.add(off), buf.as_mut_ptr(), buf.len())
        }
    }

    /// The mapping as a mutable byte slice. Only for anonymous read-write mappings.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the range is owned by this mapping and borrowed mutably through it,
        // so no alias exists; the callers use it only on read-write anonymous mappings.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    /// How many of its pages are resident (for a file mapping: in the page cache),
    /// from `mincore`.
    pub fn resident_pages(&self) -> io::Result<usize> {
        self.resident_pages_in(self.len)
    }

    /// How many of the pages of its first `len` bytes are resident.
    pub fn resident_pages_in(&self, len: usize) -> io::Result<usize> {
        Ok(self.residency(len)?.into_iter().filter(|&r| r).count())
    }

    /// Whether each page of its first `len` bytes is resident, from `mincore`.
    pub fn residency(&self, len: usize) -> io::Result<Vec<bool>> {
        let len = len.min(self.len);
        let mut vec = vec![0u8; len.div_ceil(page_size())];
        // SAFETY: the range is within this mapping; `vec` holds one byte per page.
        let r = unsafe {
            libc::mincore(self.ptr as *mut libc::c_void, len, vec.as_mut_ptr())
        };
        cvt(r as libc::c_long)?;
        Ok(vec.into_iter().map(|b| b & 1 != 0).collect())
    }

    /// Maps `len` bytes of `fd` shared and read-only over the start of this range,
    /// replacing what was there (`MAP_FIXED`): the map-at-a-chosen-address operation.
    /// Returns the raw result (`MAP_FAILED` as -1).
    #[inline(always)]
    pub fn map_fd_here(&self, fd: BorrowedFd<'_>, len: usize) -> libc::c_long {
        assert!(len <= self.len);
        // SAFETY: MAP_FIXED replaces only pages of this mapping's own range.
        let p = unsafe {
            libc::mmap(
                self.ptr as *mut libc::c_void,
                len,
                libc::PROT_READ,
                libc::MAP_SHARED | libc::MAP_FIXED,
                fd.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            -1
        } else {
            0
        }
    }

    /// Puts an inaccessible reservation back over this whole range, replacing whatever
    /// [`Mapping::map_fd_here`] put there. Returns the raw result.
    #[inline(always)]
    pub fn rereserve(&self) -> libc::c_long {
        // SAFETY: MAP_FIXED replaces only this mapping's own range.
        let p = unsafe {
            libc::mmap(
                self.ptr as *mut libc::c_void,
                self.len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE
                    | libc::MAP_ANONYMOUS
                    | libc::MAP_NORESERVE
                    | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            -1
        } else {
            0
        }
    }
}

impl Mapping {
    /// A read-write mapping of the first `len` bytes of a file: `MAP_SHARED` (a write
    /// dirties the file's own page) or `MAP_PRIVATE` (a write copies it).
    #[inline(always)]
    pub fn file_rw(fd: BorrowedFd<'_>, len: usize, shared: bool) -> io::Result<Mapping> {
        let flags = if shared {
            libc::MAP_SHARED
        } else {
            libc::MAP_PRIVATE
        };
        let prot = libc::PROT_READ | libc::PROT_WRITE;
        let ptr = mmap_raw(ptr::null_mut(), len, prot, flags, fd.as_raw_fd())?;
        Ok(Mapping { ptr, len })
    }

    /// Writes `v` to the byte at `off` (a page fault when its page is not mapped).
    /// The mapping must be writable.
    #[inline(always)]
    pub fn write_at(&self, off: usize, v: u8) {
        assert!(off < self.len, "offset out of the mapping");
        // SAFETY: off < len, inside this mapping, which the callers map writable.
        unsafe { ptr::write_volatile(self.ptr.add(off), v) };
    }

    /// Reads the byte at `off`.
    #[inline(always)]
    pub fn read_at(&self, off: usize) -> u8 {
        assert!(off < self.len, "offset out of the mapping");
        // SAFETY: off < len, inside this readable mapping.
        unsafe { ptr::read_volatile(self.ptr.add(off)) }
    }

    /// `madvise(MADV_DONTNEED)` of the `len` bytes at `off` (page-aligned): this
    /// process's page-table entries are dropped (and the TLBs of every CPU that may
    /// hold them flushed). Returns the raw result.
    #[inline(always)]
    pub fn dontneed(&self, off: usize, len: usize) -> libc::c_int {
        assert!(off + len <= self.len, "range out of the mapping");
        // SAFETY: the range is inside this mapping; DONTNEED never unmaps it (an
        // anonymous or private page reads as zero again, a shared one as the file's).
        unsafe {
            libc::madvise(
                self.ptr.add(off) as *mut libc::c_void,
                len,
                libc::MADV_DONTNEED,
            )
        }
    }
}

impl Mapping {
    /// Unmaps the range now, with munmap's error if it fails (dropping ignores it).
    pub fn unmap(self) -> io::Result<()> {
        let (ptr, len) = (self.ptr, self.len);
        std::mem::forget(self);
        // SAFETY: the range was mapped by the value just forgotten, so it is unmapped
        // exactly once, here.
        let r = unsafe { libc::munmap(ptr as *mut libc::c_void, len) };
        super::sys::cvt(r.into()).map(drop)
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the range was mapped by this value and is unmapped exactly once.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// Moves the pages of `from` into the range of `to` (`mremap` with `MREMAP_FIXED` and
/// `MREMAP_DONTUNMAP`): `to`'s old pages are replaced, and `from` stays mapped, empty.
/// Both must be private anonymous mappings of the same length. Returns the raw result.
#[inline(always)]
pub fn mremap_move(from: &Mapping, to: &Mapping) -> libc::c_long {
    assert_eq!(from.len, to.len, "mremap_move lengths");
    // SAFETY: both ranges are owned by the callers' Mappings; MREMAP_FIXED replaces
    // only `to`'s range and MREMAP_DONTUNMAP leaves `from`'s mapped, so neither Mapping
    // loses its range and no hole appears.
    let p = unsafe {
        libc::mremap(
            from.ptr as *mut libc::c_void,
            from.len,
            to.len,
            libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED | libc::MREMAP_DONTUNMAP,
            to.ptr as *mut libc::c_void,
        )
    };
    if p == libc::MAP_FAILED {
        -1
    } else {
        0
    }
}

/// A memory file (`memfd_create`) of `len` bytes, written once so that its pages
/// exist: the modern global section.
pub fn memfd(len: usize) -> io::Result<OwnedFd> {
    let fd = rustix::fs::memfd_create(c"syscost", rustix::fs::MemfdFlags::CLOEXEC)?;
    let file = std::fs::File::from(fd);
    std::io::Write::write_all(&mut &file, &vec![1u8; len])?;
    Ok(OwnedFd::from(file))
}

/// The number of threads in this process, from /proc/self/stat.
pub fn thread_count() -> io::Result<usize> {
    let s = std::fs::read_to_string("/proc/self/stat")?;
    // The command name may hold spaces and parentheses: fields follow the last ')'.
    let rest = s.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    rest.split_whitespace()
        .nth(17) // field 20, num_threads; `rest` starts at field 3
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| io::Error::other("cannot read num_threads from /proc/self/stat"))
}

/// A forked child that does nothing but stop itself, so the parent's private pages are
/// shared with it copy-on-write while it never runs again. Killed and reaped on drop.
pub struct Sharer {
    _child: super::task::Child,
}

impl Sharer {
    /// Forks the child and waits until it has stopped (`SIGSTOP` to itself), so that it
    /// cannot take the CPU while the parent is measured.
    pub fn fork() -> io::Result<Sharer> {
        // SAFETY: the child only stops itself (getpid, kill), async-signal-safe calls
        // with integer arguments.
        let child = unsafe {
            super::task::fork(|| loop {
                libc::kill(libc::getpid(), libc::SIGSTOP);
            })
        }?;
        let mut child = child;
        if !child.wait_stopped()? {
            return Err(io::Error::other("the sharing child did not stop"));
        }
        Ok(Sharer { _child: child })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mappings_fault_touch_and_report_residency() {
        let page = page_size();
        let m = Mapping::anon(16 * page, false).unwrap();
        assert_eq!(m.resident_pages().unwrap(), 0);
        m.touch_write(page);
        assert_eq!(m.resident_pages().unwrap(), 16);
        assert_eq!(m.touch_read(page), 16);
        let mut buf = [0u8; 3];
        m.copy_out(page - 1, &mut buf);
        assert_eq!(buf, [0, 1, 0]);
        let a = Mapping::anon_aligned(4 * page, 64 * page).unwrap();
        assert_eq!(a.addr() % (64 * page), 0);
        a.touch_write(page);
    }

    #[test]
    fn a_resident_mapping_has_every_page_written() {
        let page = page_size();
        let m = Mapping::anon_resident(64 * page).unwrap();
        assert_eq!(m.resident_pages().unwrap(), 64);
        assert_eq!(m.touch_read(page), 64);
    }

    #[test]
    fn mremap_moves_pages_and_leaves_both_mapped() {
        let page = page_size();
        let a = Mapping::anon(4 * page, false).unwrap();
        let b = Mapping::anon(4 * page, false).unwrap();
        a.touch_write(page);
        assert_eq!(mremap_move(&a, &b), 0);
        assert_eq!(b.touch_read(page), 4);
        assert_eq!(a.touch_read(page), 0); // mapped, empty
        assert_eq!(mremap_move(&b, &a), 0);
        assert_eq!(a.touch_read(page), 4);
    }

    #[test]
    fn a_reservation_takes_a_memfd_and_goes_back() {
        let page = page_size();
        let fd = memfd(2 * page).unwrap();
        let r = Mapping::reserve(2 * page).unwrap();
        use std::os::fd::AsFd;
        assert_eq!(r.map_fd_here(fd.as_fd(), 2 * page), 0);
        assert_eq!(r.touch_read(page), 2);
        assert_eq!(r.rereserve(), 0);
    }

    /// The mappings of this process that overlap `[lo, hi)`: start, end, permissions.
    fn maps_within(lo: usize, hi: usize) -> Vec<(usize, usize, String)> {
        std::fs::read_to_string("/proc/self/maps")
            .unwrap()
            .lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let (range, perms) = (f.next()?, f.next()?);
                let (a, b) = range.split_once('-')?;
                let a = usize::from_str_radix(a, 16).ok()?;
                let b = usize::from_str_radix(b, 16).ok()?;
                (a < hi && b > lo).then(|| (a, b, perms.to_string()))
            })
            .collect()
    }

    #[test]
    fn an_isolated_mapping_is_aligned_and_fenced_by_guard_pages() {
        let page = page_size();
        let (m, guards) = Mapping::anon_isolated(5 * page).unwrap();
        let start = m.addr();
        assert_eq!(start % (2 << 20), 0, "on a 2 MiB boundary");
        assert_eq!(m.len(), 5 * page);
        assert_eq!(guards[0].addr(), start - page);
        assert_eq!(guards[1].addr(), start + 5 * page);
        m.touch_write(page);
        assert_eq!(m.touch_read(page), 5);
        // Read-only and back: never merged with anything, the guards stay apart.
        for prot in [libc::PROT_READ, libc::PROT_READ | libc::PROT_WRITE] {
            assert_eq!(m.protect(prot), 0);
            let maps = maps_within(start - page, start + 6 * page);
            assert_eq!(maps.len(), 3, "{maps:?}");
            assert_eq!((maps[0].0, maps[0].1), (start - page, start));
            assert!(maps[0].2.starts_with("---"), "{maps:?}");
            assert_eq!((maps[1].0, maps[1].1), (start, start + 5 * page));
            assert_eq!((maps[2].0, maps[2].1), (start + 5 * page, start + 6 * page));
            assert!(maps[2].2.starts_with("---"), "{maps:?}");
        }
    }

    #[test]
    fn thread_count_is_read() {
        assert!(thread_count().unwrap() >= 1);
    }
}
