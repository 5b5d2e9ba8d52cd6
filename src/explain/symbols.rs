//! Names for sampled addresses: the kernel's from `/proc/kallsyms`, user space's from
//! the symbol tables of the files mapped where the addresses fall (syscost's own binary,
//! the C library), read from `/proc/self/maps` and the files themselves. Only symbol
//! tables: no debug information is read, so a frame is a function, never a line.
//!
//! Nothing here is timed: the worker names its samples after its timed loop ends.

use object::{Object, ObjectSegment, ObjectSymbol};
use std::collections::HashMap;
use std::path::PathBuf;

/// A sorted table of function starts and names; an address belongs to the last start
/// at or below it, up to `end`.
#[derive(Debug, Default)]
pub struct Table {
    starts: Vec<(u64, String)>,
    /// Past the last function (an address there has no name).
    end: u64,
}

impl Table {
    /// The table of `(start, name)` pairs (any order).
    pub fn new(mut starts: Vec<(u64, String)>, end: u64) -> Table {
        starts.sort_by_key(|s| s.0);
        starts.dedup_by_key(|s| s.0);
        Table { starts, end }
    }

    /// The function holding `addr`.
    pub fn name(&self, addr: u64) -> Option<&str> {
        if addr >= self.end {
            return None;
        }
        let i = self.starts.partition_point(|s| s.0 <= addr);
        i.checked_sub(1).map(|i| self.starts[i].1.as_str())
    }

    /// How many functions it knows.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether it knows none.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }
}

/// Parses `/proc/kallsyms`: text symbols only, without the `__pfx_`/`__cfi_` padding
/// labels; a module's symbols keep their module's name in brackets. Addresses all zero
/// (`kptr_restrict`, or no privilege) give an empty table.
pub fn parse_kallsyms(text: &str) -> Table {
    let mut starts = Vec::new();
    let mut end = 0u64;
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let (Some(addr), Some(kind), Some(name)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(addr, 16) else {
            continue;
        };
        if addr == 0 || !matches!(kind, "t" | "T" | "w" | "W") {
            continue;
        }
        if name.starts_with("__pfx_") || name.starts_with("__cfi_") {
            continue;
        }
        end = end.max(addr);
        let name = match f.next() {
            Some(module) => format!("{name} {module}"),
            None => name.to_string(),
        };
        // Of aliases at one address: global before local, x86-64 before ia32.
        let rank = if kind.starts_with(char::is_lowercase) {
            2
        } else if name.starts_with("__ia32_") {
            1
        } else {
            0
        };
        starts.push((addr, rank, name));
    }
    // Of aliases at one address, the global name (`__x64_sys_getpid` rather than
    // `__do_sys_getpid`).
    starts.sort_by_key(|s| (s.0, s.1));
    let starts = starts.into_iter().map(|(a, _, n)| (a, n)).collect();
    // A function's size is not listed: allow the last one a generous page.
    Table::new(starts, end.saturating_add(1 << 16))
}

/// The kernel's table, with why it is empty when it is.
pub fn kernel() -> (Table, Option<String>) {
    match std::fs::read_to_string("/proc/kallsyms") {
        Ok(text) => {
            let t = parse_kallsyms(&text);
            if t.is_empty() {
                let why = "kernel addresses are hidden in /proc/kallsyms (kernel.kptr_restrict, \
                           or not root): kernel frames are unnamed";
                (t, Some(why.into()))
            } else {
                (t, None)
            }
        }
        Err(e) => (
            Table::default(),
            Some(format!("/proc/kallsyms unreadable ({e})")),
        ),
    }
}

/// One mapping of `/proc/PID/maps` that holds code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    /// First address.
    pub start: u64,
    /// Past the last.
    pub end: u64,
    /// Offset in the file.
    pub offset: u64,
    /// The file, or a pseudo-name such as `[vdso]`.
    pub path: String,
}

/// The executable mappings of a `/proc/PID/maps` text.
pub fn parse_maps(text: &str) -> Vec<Mapping> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let range = f.next()?;
            let perms = f.next()?;
            let offset = u64::from_str_radix(f.next()?, 16).ok()?;
            let (_dev, _inode) = (f.next()?, f.next()?);
            let path = f.collect::<Vec<_>>().join(" ");
            let (s, e) = range.split_once('-')?;
            let start = u64::from_str_radix(s, 16).ok()?;
            let end = u64::from_str_radix(e, 16).ok()?;
            (perms.contains('x') && !path.is_empty()).then_some(Mapping {
                start,
                end,
                offset,
                path,
            })
        })
        .collect()
}

/// A file's functions by virtual address, and how its loaded segments map file
/// offsets to addresses.
struct File {
    table: Table,
    /// (file offset, size, virtual address) per loadable segment.
    segments: Vec<(u64, u64, u64)>,
}

fn load(path: &str) -> Option<File> {
    let data = std::fs::read(path).ok()?;
    let obj = object::File::parse(&*data).ok()?;
    let mut starts: Vec<(u64, String)> = obj
        .symbols()
        .chain(obj.dynamic_symbols())
        .filter(|s| s.kind() == object::SymbolKind::Text && s.address() != 0)
        .filter_map(|s| Some((s.address(), demangle(s.name().ok()?))))
        .collect();
    let end = starts.iter().map(|s| s.0).max().unwrap_or(0) + (1 << 16);
    starts.retain(|s| !s.1.is_empty());
    let segments = obj
        .segments()
        .map(|s| {
            let (off, size) = s.file_range();
            (off, size, s.address())
        })
        .collect();
    Some(File {
        table: Table::new(starts, end),
        segments,
    })
}

/// A Rust symbol without its hash; any other as it is.
pub fn demangle(name: &str) -> String {
    format!("{:#}", rustc_demangle::demangle(name))
}

/// Names user-space addresses of this process (and of the processes it forked, whose
/// code is mapped at the same addresses), loading each file's symbols once.
pub struct User {
    maps: Vec<Mapping>,
    files: HashMap<String, Option<File>>,
    cache: HashMap<u64, Option<String>>,
}

impl User {
    /// For the calling process as it is mapped now.
    pub fn of_self() -> User {
        let text = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
        User::new(parse_maps(&text))
    }

    /// For these mappings.
    pub fn new(maps: Vec<Mapping>) -> User {
        User {
            maps,
            files: HashMap::new(),
            cache: HashMap::new(),
        }
    }

    /// The function holding `addr`: its name, or the mapping's name when the file has
    /// no symbol there; None outside every mapping.
    pub fn name(&mut self, addr: u64) -> Option<String> {
        if let Some(n) = self.cache.get(&addr) {
            return n.clone();
        }
        let n = self.lookup(addr);
        self.cache.insert(addr, n.clone());
        n
    }

    fn lookup(&mut self, addr: u64) -> Option<String> {
        let m = self
            .maps
            .iter()
            .find(|m| m.start <= addr && addr < m.end)?
            .clone();
        if m.path.starts_with('[') {
            return Some(m.path);
        }
        let file = self
            .files
            .entry(m.path.clone())
            .or_insert_with(|| load(&m.path));
        let base = PathBuf::from(&m.path)
            .file_name()
            .map_or(m.path.clone(), |f| f.to_string_lossy().into_owned());
        let Some(file) = file else {
            return Some(format!("[{base}]"));
        };
        let off = addr - m.start + m.offset;
        let vaddr = file
            .segments
            .iter()
            .find(|&&(o, size, _)| o <= off && off < o + size)
            .map(|&(o, _, v)| off - o + v)?;
        Some(match file.table.name(vaddr) {
            Some(n) => n.to_string(),
            None => format!("[{base}]"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kallsyms_keeps_text_and_drops_padding_and_hidden_addresses() {
        let text = "ffffffff81000080 T entry_SYSCALL_64\n\
                    ffffffff81000070 T __pfx_entry_SYSCALL_64\n\
                    ffffffff81001000 D some_data\n\
                    ffffffff81002000 t helper\n\
                    ffffffff81002000 T __x64_helper\n\
                    ffffffffc0001000 t mod_fn\t[kvm]\n";
        let t = parse_kallsyms(text);
        assert_eq!(t.name(0xffffffff81000090), Some("entry_SYSCALL_64"));
        assert_eq!(
            t.name(0xffffffff81002010),
            Some("__x64_helper"),
            "the global alias"
        );
        assert_eq!(t.name(0xffffffffc0001004), Some("mod_fn [kvm]"));
        assert_eq!(t.name(0xffffffff81000000), None);
        let hidden = "0000000000000000 T entry_SYSCALL_64\n0000000000000000 t helper\n";
        assert!(parse_kallsyms(hidden).is_empty());
    }

    #[test]
    fn maps_keep_executable_file_mappings() {
        let text = "55d0c0000000-55d0c0100000 r--p 00000000 08:01 123 /usr/bin/syscost\n\
                    55d0c0100000-55d0c0500000 r-xp 00100000 08:01 123 /usr/bin/syscost\n\
                    7ffd1000-7ffd3000 r-xp 00000000 00:00 0 [vdso]\n\
                    7ffe0000-7ffe1000 rw-p 00000000 00:00 0\n";
        let m = parse_maps(text);
        assert_eq!(m.len(), 2);
        assert_eq!((m[0].start, m[0].offset), (0x55d0c0100000, 0x100000));
        assert_eq!(m[1].path, "[vdso]");
    }

    #[test]
    fn this_test_binary_names_its_own_functions() {
        let mut u = User::of_self();
        let here = this_test_binary_names_its_own_functions as fn() as usize as u64;
        let name = u.name(here).expect("mapped");
        assert!(
            name.contains("this_test_binary_names_its_own_functions"),
            "{name}"
        );
        assert_eq!(demangle("_ZN3foo3bar17h0123456789abcdefE"), "foo::bar");
    }
}
