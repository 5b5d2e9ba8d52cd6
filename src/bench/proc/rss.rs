//! The `rss` parameter of `proc.*`: resident anonymous memory added to the process that
//! creates the work, so that what fork, vfork, exec, posix_spawn and thread creation
//! cost against the size of the address space is measured on purpose rather than
//! by accident (a measuring process that happens to have grown).
//!
//! The memory is one private anonymous mapping of `rss` bytes in base pages, every page
//! allocated and written in `prepare`, untimed: a `fork` must then copy one page-table
//! entry per page and mark every page copy-on-write. It is held by the benchmark's
//! body and unmapped when the body is dropped. Before mapping, the memory the system
//! and this process's memory cgroup can give is read; a size that does not fit (with
//! [`HEADROOM`] to spare) is skipped with both figures, never left to the OOM killer.
//!
//! This module reads /proc and the cgroup files; it must not time anything.

use crate::bench::{Kind, ParamSpec, Params};
use crate::error::BenchError;
use crate::host::parse::parse_kib_field;
use crate::os::mem::{page_size, Mapping};
use std::io;
use std::path::{Path, PathBuf};

/// The `rss` parameter.
pub const RSS: ParamSpec = ParamSpec {
    name: "rss",
    default: "0",
    about: "resident anonymous memory added to the creating process (one private \
            mapping, every 4 KiB page written in prepare, untimed); 0 adds nothing",
    kind: Kind::Bytes {
        min: 0,
        max: 64 << 30,
    },
};

/// Memory left to the rest of the machine beyond the mapping: a size that would leave
/// less is skipped.
pub const HEADROOM: u64 = 64 << 20;

/// The resident memory of one benchmark instance: nothing for `rss=0`.
#[derive(Debug)]
pub struct Ballast {
    map: Option<Mapping>,
}

impl Ballast {
    /// The memory `p`'s `rss` asks for, made resident.
    pub fn from_params(p: &Params) -> Result<Ballast, BenchError> {
        Ballast::new(p.int("rss") as u64)
    }

    /// `bytes` (rounded up to whole pages) of private anonymous memory, every page
    /// written; skipped with the reason when the system or the memory cgroup cannot
    /// give that much with [`HEADROOM`] to spare, or the kernel refuses the mapping.
    pub fn new(bytes: u64) -> Result<Ballast, BenchError> {
        if bytes == 0 {
            return Ok(Ballast { map: None });
        }
        let len = bytes.next_multiple_of(page_size() as u64);
        let limits = limits();
        check_room(len, &limits).map_err(BenchError::Skip)?;
        let map = usize::try_from(len)
            .map_err(io::Error::other)
            .and_then(Mapping::anon_resident)
            .map_err(|e| {
                BenchError::Skip(format!(
                    "rss={} MiB could not be made resident: {e} ({}; a limit such as \
                     RLIMIT_AS or strict overcommit may refuse it)",
                    mib(len),
                    describe(&limits)
                ))
            })?;
        Ok(Ballast { map: Some(map) })
    }

    /// Its size in bytes (0 for none).
    pub fn len(&self) -> usize {
        self.map.as_ref().map_or(0, Mapping::len)
    }

    /// Whether it holds no memory (`rss=0`).
    pub fn is_empty(&self) -> bool {
        self.map.is_none()
    }

    /// How many of its bytes are resident now, from `mincore`.
    pub fn resident_bytes(&self) -> io::Result<usize> {
        match &self.map {
            Some(m) => Ok(m.resident_pages()? * page_size()),
            None => Ok(0),
        }
    }

    /// Does nothing: called inside a body's closure so that the closure owns the
    /// memory, which then lives exactly as long as the body.
    #[inline(always)]
    pub fn keep(&self) {}
}

/// The process's memory as a fork sees it: its resident size and its page tables.
#[derive(Debug, Clone, Copy)]
pub struct Footprint {
    /// `VmRSS`, KiB.
    pub rss_kib: u64,
    /// `VmPTE` (page tables), KiB.
    pub pte_kib: u64,
}

impl Footprint {
    /// This process's, from /proc/self/status.
    pub fn now() -> Option<Footprint> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        Some(Footprint {
            rss_kib: parse_kib_field(&status, "VmRSS")?,
            pte_kib: parse_kib_field(&status, "VmPTE").unwrap_or(0),
        })
    }
}

fn mib(bytes: u64) -> u64 {
    bytes >> 20
}

/// Every bound on the memory this process can still get, in bytes, each with where it
/// comes from: `MemAvailable`, and what each memory cgroup above this process leaves.
fn limits() -> Vec<(String, u64)> {
    let mut out = Vec::new();
    if let Some(kib) = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| parse_kib_field(&t, "MemAvailable"))
    {
        out.push(("MemAvailable".to_string(), kib * 1024));
    }
    if let Ok(text) = std::fs::read_to_string("/proc/self/cgroup") {
        for (dir, max, current) in cgroup_dirs(&text) {
            if let Some(left) = cgroup_room(&dir, max, current) {
                out.push((format!("memory cgroup {}", dir.display()), left));
            }
        }
    }
    out
}

/// The memory cgroup directories of this process and their ancestors, with the names
/// of their limit and usage files: cgroup v2 (`0::/path`) and v1 (`N:memory:/path`).
fn cgroup_dirs(proc_cgroup: &str) -> Vec<(PathBuf, &'static str, &'static str)> {
    let mut out = Vec::new();
    for line in proc_cgroup.lines() {
        let mut f = line.splitn(3, ':');
        let (Some(id), Some(ctl), Some(path)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let (root, max, current) = if id == "0" && ctl.is_empty() {
            ("/sys/fs/cgroup", "memory.max", "memory.current")
        } else if ctl.split(',').any(|c| c == "memory") {
            (
                "/sys/fs/cgroup/memory",
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
            )
        } else {
            continue;
        };
        let mut p = Some(Path::new(path));
        while let Some(dir) = p {
            let rel = dir.strip_prefix("/").unwrap_or(dir);
            out.push((Path::new(root).join(rel), max, current));
            p = dir.parent();
        }
    }
    out
}

/// What a cgroup's limit leaves (limit − usage), when it has a limit below 1 PiB.
fn cgroup_room(dir: &Path, max: &str, current: &str) -> Option<u64> {
    let read = |f: &str| -> Option<u64> {
        std::fs::read_to_string(dir.join(f))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    let limit = read(max).filter(|&l| l < 1 << 50)?; // "max", or v1's near-2^63
    Some(limit.saturating_sub(read(current)?))
}

fn describe(limits: &[(String, u64)]) -> String {
    if limits.is_empty() {
        return "how much is free could not be read".into();
    }
    let each: Vec<String> = limits
        .iter()
        .map(|(what, b)| format!("{what}: {} MiB free", mib(*b)))
        .collect();
    each.join("; ")
}

/// Ok when `len` bytes fit under every limit with [`HEADROOM`] to spare; otherwise
/// the skip reason, naming the size and what is free.
fn check_room(len: u64, limits: &[(String, u64)]) -> Result<(), String> {
    match limits.iter().min_by_key(|(_, b)| *b) {
        Some((_, free)) if len.saturating_add(HEADROOM) > *free => Err(format!(
            "rss={} MiB needs that much resident memory plus {} MiB to spare, but only \
             {} MiB is free ({}); choose a smaller rss",
            mib(len),
            mib(HEADROOM),
            mib(*free),
            describe(limits)
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_room_check_names_the_size_and_what_is_free() {
        let limits = vec![
            ("MemAvailable".to_string(), 2048 << 20),
            ("memory cgroup /x".to_string(), 600 << 20),
        ];
        assert!(check_room(512 << 20, &limits).is_ok());
        let why = check_room(1 << 30, &limits).unwrap_err();
        assert!(why.contains("rss=1024 MiB"), "{why}");
        assert!(why.contains("only 600 MiB is free"), "{why}");
        assert!(why.contains("MemAvailable: 2048 MiB free"), "{why}");
        // Within the headroom of the limit: refused too.
        assert!(check_room(580 << 20, &limits).is_err());
        // Nothing known: tried (the kernel's refusal is then the reason).
        assert!(check_room(1 << 30, &[]).is_ok());
    }

    #[test]
    fn cgroup_paths_cover_v1_v2_and_the_ancestors() {
        let text = "4:memory:/a/b\n3:cpu:/z\n0::/c\n";
        let dirs: Vec<_> = cgroup_dirs(text)
            .into_iter()
            .map(|(d, max, _)| format!("{} {max}", d.display()))
            .collect();
        assert_eq!(
            dirs,
            [
                "/sys/fs/cgroup/memory/a/b memory.limit_in_bytes",
                "/sys/fs/cgroup/memory/a memory.limit_in_bytes",
                "/sys/fs/cgroup/memory/ memory.limit_in_bytes",
                "/sys/fs/cgroup/c memory.max",
                "/sys/fs/cgroup/ memory.max",
            ]
        );
    }

    #[test]
    fn no_rss_maps_nothing() {
        let b = Ballast::new(0).unwrap();
        assert!(b.is_empty());
        assert_eq!(b.resident_bytes().unwrap(), 0);
    }

    /// The memory is resident while the ballast lives, and the process's resident size
    /// rises by about its size, then falls back when it is dropped. Other tests run in
    /// threads of this process meanwhile, so the bounds leave them 24 MiB either way.
    #[test]
    fn the_ballast_is_resident_and_released_on_drop() {
        const LEN: u64 = 96 << 20;
        let slack = 24 << 10; // KiB
        let before = Footprint::now().unwrap();
        let b = match Ballast::new(LEN) {
            Ok(b) => b,
            Err(BenchError::Skip(why)) if why.contains("MiB free") => {
                eprintln!("skipped: {why}");
                return;
            }
            Err(e) => panic!("{e}"),
        };
        assert_eq!(b.len() as u64, LEN);
        assert_eq!(b.resident_bytes().unwrap() as u64, LEN);
        let during = Footprint::now().unwrap();
        let grew = during.rss_kib as i64 - before.rss_kib as i64;
        assert!(
            (grew - (LEN >> 10) as i64).abs() < slack,
            "VmRSS grew by {grew} KiB for a {} KiB ballast",
            LEN >> 10
        );
        // One page-table entry (8 bytes) per 4 KiB page: at least 96 MiB / 512.
        assert!(
            during.pte_kib >= before.pte_kib + (LEN >> 10) / 512 - 64,
            "VmPTE {} -> {} KiB",
            before.pte_kib,
            during.pte_kib
        );
        drop(b);
        let after = Footprint::now().unwrap();
        let fell = during.rss_kib as i64 - after.rss_kib as i64;
        assert!(
            (fell - (LEN >> 10) as i64).abs() < slack,
            "VmRSS fell by {fell} KiB when a {} KiB ballast was dropped",
            LEN >> 10
        );
    }

    #[test]
    fn more_than_is_free_is_skipped_with_the_figures() {
        let free = limits().iter().map(|(_, b)| *b).min();
        // Twice what is free, when the parameter's range allows asking for it.
        let Some(want) = free.map(|f| 2 * f).filter(|&w| w <= 64 << 30) else {
            return;
        };
        match Ballast::new(want) {
            Err(BenchError::Skip(why)) => {
                assert!(why.contains(&format!("rss={} MiB", want >> 20)), "{why}");
                assert!(why.contains("MiB free"), "{why}");
            }
            other => panic!("expected a skip, got {other:?}"),
        }
    }
}
