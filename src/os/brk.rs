//! The program break, moved up and back by `mem.brk`: what lies below it decides
//! whether the kernel extends a mapping or makes one.
//!
//! # Safety
//! [`Break`] moves the program break only in a single-threaded process, above pages it
//! took itself through the C library, and puts it back before returning.

#![allow(unsafe_code)]

use super::mem::{page_size, thread_count};
use super::sys::cvt;
use std::io;

/// What lies just below the program break where [`Break`] moves it. It decides the
/// kernel's work: whether brk can extend the mapping below and cut it back, or must make
/// a mapping of its own and remove it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BelowBreak {
    /// A page the process took through the C library and wrote, as `malloc`'s heap is:
    /// brk extends that mapping and cuts it back, and the cut copies and unlinks its
    /// anon_vma chain.
    Own,
    /// A page the process took and never wrote (will-it-scale's brk2), above a
    /// read-only page that keeps it apart from the heap: brk extends and cuts a mapping
    /// that has no anon_vma.
    Untouched,
    /// A mapping brk may not extend: a read-only page here. will-it-scale's brk1 meets
    /// the same in its tasks, whose heap came from their parent at fork (the kernel
    /// does not extend a mapping still shared with a parent): brk makes a mapping of its
    /// own and removes it.
    Apart,
}

/// The program break, moved and put back by [`Break::grow_shrink`], above a page or two
/// of its own that set what lies below it ([`BelowBreak`]). It exists only in a
/// single-threaded process (checked when made and by [`Break::refresh`]) and cannot
/// leave the thread that made it, because the C library's `malloc` also moves the
/// break: another thread doing so between the two moves would lose memory. This
/// thread's own `malloc` moves it too, between batches, so the break is read again
/// before each one ([`Break::refresh`]), and where it moved the pages below are placed
/// again; putting it back to an older place would unmap memory `malloc` has handed out.
/// The pages placed last are given back on drop when nothing was allocated above them
/// (earlier ones, below `malloc`'s memory, stay until the process ends).
pub struct Break {
    base: usize,
    below: BelowBreak,
    placed: usize,
    _not_send: std::marker::PhantomData<*const ()>,
}

impl Break {
    /// Places what `below` asks just below the break, if this process has one thread.
    pub fn new(below: BelowBreak) -> io::Result<Break> {
        Break::check()?;
        let mut b = Break {
            base: 0,
            below,
            placed: 0,
            _not_send: std::marker::PhantomData,
        };
        b.place()?;
        Ok(b)
    }

    /// The kernel's break now.
    fn now() -> usize {
        // SAFETY: brk(0) only queries the current break.
        unsafe { libc::syscall(libc::SYS_brk, 0usize) as usize }
    }

    /// Takes `len` bytes above the break through the C library (`sbrk`, which keeps the
    /// library's own idea of the break), returning where they start.
    fn take(len: usize) -> io::Result<usize> {
        // SAFETY: sbrk moves the break through the C library, which owns it; the new
        // bytes belong to nobody else.
        let p = unsafe { libc::sbrk(len as libc::intptr_t) };
        if p as isize == -1 {
            return Err(io::Error::last_os_error());
        }
        Ok(p as usize)
    }

    /// Takes the page or two that set what lies below the break, and reads the break.
    fn place(&mut self) -> io::Result<()> {
        let page = page_size();
        let start = Break::take(page)?;
        match self.below {
            // SAFETY: the page at `start` was just taken and is writable.
            BelowBreak::Own => unsafe { (start as *mut u8).write_volatile(1) },
            BelowBreak::Untouched | BelowBreak::Apart => {
                // SAFETY: the page is this process's own, just taken and unused.
                let r = unsafe {
                    libc::mprotect(start as *mut libc::c_void, page, libc::PROT_READ)
                };
                cvt(r as libc::c_long)?;
            }
        }
        self.placed = page;
        if self.below == BelowBreak::Untouched {
            Break::take(page)?;
            self.placed += page;
        }
        self.base = Break::now();
        if self.base != start + self.placed {
            return Err(io::Error::other(
                "the break moved while syscost placed pages below it",
            ));
        }
        Ok(())
    }

    /// Reads the break again, after checking that the process still has one thread:
    /// the C library's `malloc` in this thread may have moved it since, and then the
    /// pages below it are placed again. Call it before every batch of
    /// [`Break::grow_shrink`], with no allocation in between.
    pub fn refresh(&mut self) -> io::Result<()> {
        Break::check()?;
        if Break::now() != self.base {
            self.place()?;
        }
        Ok(())
    }

    /// Where the break is moved from.
    pub fn base(&self) -> usize {
        self.base
    }

    /// Fails unless the process has exactly one thread.
    pub fn check() -> io::Result<()> {
        match thread_count()? {
            1 => Ok(()),
            n => Err(io::Error::other(format!(
                "the process has {n} threads, and the C library's malloc may move the \
                 program break in any of them"
            ))),
        }
    }

    /// Raises the break by `len` bytes and lowers it back to where it was: two `brk`
    /// system calls. Returns -1 if either did not land where asked.
    ///
    /// # Safety
    /// The break must be where this `Break` last read it: nothing may have allocated
    /// since [`Break::new`] or the last [`Break::refresh`] (the C library's `malloc`
    /// raises the break when its heap grows). Otherwise the second call lowers the
    /// break below memory `malloc` handed out, and unmaps it.
    #[inline(always)]
    pub unsafe fn grow_shrink(&self, len: usize) -> libc::c_long {
        let up = self.base + len;
        // SAFETY: the new pages above the break belong to nobody else (the process is
        // single-threaded, the caller promises the break was read since anything last
        // allocated, and nothing runs between the two calls); the second call restores
        // the break the C library knows.
        let (a, b) = unsafe {
            (
                libc::syscall(libc::SYS_brk, up),
                libc::syscall(libc::SYS_brk, self.base),
            )
        };
        if a as usize == up && b as usize == self.base {
            0
        } else {
            -1
        }
    }
}

impl Drop for Break {
    fn drop(&mut self) {
        if Break::now() == self.base {
            // SAFETY: nothing was allocated above the pages placed last: giving them
            // back through the C library keeps its idea of the break.
            unsafe { libc::sbrk(-(self.placed as libc::intptr_t)) };
        }
    }
}

/// Moves the break up by `len` bytes through the C library (`sbrk`), as `malloc` does
/// when its heap grows, and returns the new memory; `None` if the break cannot move.
#[cfg(test)]
pub(crate) fn sbrk_for_test(len: usize) -> Option<&'static mut [u8]> {
    // SAFETY: sbrk moves the break through the C library, which owns it.
    let taken = unsafe { libc::sbrk(len as libc::intptr_t) };
    if taken as isize == -1 {
        return None;
    }
    // SAFETY: sbrk returned `len` fresh writable bytes at `taken`, which nothing else
    // uses and the C library never takes back.
    Some(unsafe { std::slice::from_raw_parts_mut(taken as *mut u8, len) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// /proc/self/maps read into `buf` without allocating (the break must not move).
    fn maps_into(buf: &mut [u8]) -> usize {
        // SAFETY: a NUL-terminated path; reads into a buffer this function owns.
        let fd = unsafe { libc::open(c"/proc/self/maps".as_ptr(), libc::O_RDONLY) };
        assert!(fd >= 0);
        let mut n = 0;
        loop {
            // SAFETY: the buffer's remaining bytes are writable.
            let r =
                unsafe { libc::read(fd, buf[n..].as_mut_ptr().cast(), buf.len() - n) };
            if r <= 0 {
                break;
            }
            n += r as usize;
        }
        // SAFETY: fd is open and ours.
        unsafe { libc::close(fd) };
        n
    }

    /// The start and protections of the mapping that holds `addr`, from maps text.
    fn mapping_at(maps: &str, addr: usize) -> Option<(usize, &str)> {
        maps.lines().find_map(|l| {
            let (range, rest) = l.split_once(' ')?;
            let (a, b) = range.split_once('-')?;
            let (a, b) = (
                usize::from_str_radix(a, 16).ok()?,
                usize::from_str_radix(b, 16).ok()?,
            );
            (a <= addr && addr < b).then(|| (a, &rest[..4]))
        })
    }

    #[test]
    fn what_lies_below_the_break_decides_whether_brk_extends_a_mapping() {
        for below in [BelowBreak::Own, BelowBreak::Untouched, BelowBreak::Apart] {
            // SAFETY: the child allocates only before placing the break and after
            // putting it back; glibc resets the allocator's locks in a forked child.
            let mut c = unsafe {
                super::super::task::fork(move || {
                    let mut buf = vec![0u8; 1 << 20];
                    let before = Break::now();
                    let Ok(b) = Break::new(below) else { return 2 };
                    let up = b.base() + page_size();
                    // Single-threaded child: nothing allocates until the break is back
                    // where the C library left it.
                    let grown = libc::syscall(libc::SYS_brk, up) as usize;
                    let n = maps_into(&mut buf);
                    let back = libc::syscall(libc::SYS_brk, b.base()) as usize;
                    if grown != up || back != b.base() {
                        return 3;
                    }
                    let Ok(maps) = std::str::from_utf8(&buf[..n]) else {
                        return 4;
                    };
                    let Some((start, _)) = mapping_at(maps, b.base()) else {
                        return 4;
                    };
                    let Some((_, prot)) = mapping_at(maps, b.base() - 1) else {
                        return 5;
                    };
                    let ok = match below {
                        BelowBreak::Own | BelowBreak::Untouched => {
                            start < b.base() && prot.starts_with("rw")
                        }
                        BelowBreak::Apart => start == b.base() && prot.starts_with("r-"),
                    };
                    if !ok {
                        return 6;
                    }
                    // Nothing allocated since: the placed pages are given back.
                    drop(b);
                    i32::from(Break::now() != before) * 7
                })
            }
            .unwrap();
            let st = c.wait().unwrap();
            assert_eq!(
                super::super::task::describe_status(st),
                "exited with status 0",
                "{below:?}"
            );
        }
    }
}
