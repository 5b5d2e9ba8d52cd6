//! The peers' tests and where each lives in the catalogue: will-it-scale, `perf bench`
//! (its sched, syscall, futex and epoll collections) and lmbench's OS tests, named as
//! their users type them. `syscost list` prints a `like:` line on each benchmark from
//! this table, `syscost list NAME` finds a benchmark by a peer's test name, and
//! docs/benchmarks.md carries the same table for readers.

/// A benchmark suite whose tests the catalogue covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Peer {
    /// antonblanchard/will-it-scale, run by the kernel's LKP robot.
    WillItScale,
    /// `perf bench` (sched, syscall, futex, epoll).
    PerfBench,
    /// lmbench's OS tests.
    Lmbench,
}

impl Peer {
    /// The suite's name as its users say it.
    pub fn word(self) -> &'static str {
        match self {
            Peer::WillItScale => "will-it-scale",
            Peer::PerfBench => "perf bench",
            Peer::Lmbench => "lmbench",
        }
    }
}

/// Where a peer's test lives here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Here {
    /// A benchmark of the catalogue, with the parameter values that make it the peer's
    /// operation (`""` when its defaults do), e.g. `("file.read", "size=1M")`.
    Bench(&'static str, &'static str),
    /// Not measured here, and why.
    Not(&'static str),
}

/// One of a peer's tests.
#[derive(Debug, Clone, Copy)]
pub struct PeerTest {
    /// The suite.
    pub peer: Peer,
    /// The test as the suite's users type it (`tlb_flush1`, `futex requeue`, `lat_ctx`).
    pub test: &'static str,
    /// Where it lives here.
    pub here: Here,
}

const fn wis(test: &'static str, here: Here) -> PeerTest {
    PeerTest {
        peer: Peer::WillItScale,
        test,
        here,
    }
}

const fn perf(test: &'static str, here: Here) -> PeerTest {
    PeerTest {
        peer: Peer::PerfBench,
        test,
        here,
    }
}

const fn lm(test: &'static str, here: Here) -> PeerTest {
    PeerTest {
        peer: Peer::Lmbench,
        test,
        here,
    }
}

use Here::Bench as B;

/// will-it-scale's 60 tests (tests/*.c), each run by it as processes and as threads;
/// here `copies=N copies_as=process|thread` does the same. docs/benchmarks.md's table
/// "will-it-scale" is this one (a unit test holds them together).
pub const WILL_IT_SCALE: &[PeerTest] = &[
    wis("brk1", B("mem.brk", "n=1 below=apart")),
    wis("brk2", B("mem.brk", "n=1 below=untouched")),
    wis(
        "context_switch1",
        B("ctx.pingpong", "mechanism=pipe placement=same-cpu"),
    ),
    wis("dup1", B("syscall.dup_close", "")),
    wis("eventfd1", B("sync.eventfd", "")),
    wis("fallocate1", B("file.fallocate", "dir=tmpfs")),
    wis("fallocate2", B("file.fallocate", "dir=scratch")),
    wis("futex1", B("sync.futex", "op=wake private=no")),
    wis("futex2", B("sync.futex", "op=wait private=no")),
    wis("futex3", B("sync.futex", "op=wake private=yes")),
    wis("futex4", B("sync.futex", "op=wait private=yes")),
    wis("getppid1", B("syscall.getppid", "")),
    wis("lock1", B("file.lock", "share=file-per-copy")),
    wis("lock2", B("file.lock", "share=one-file")),
    wis("lseek1", B("file.lseek", "share=file-per-copy")),
    wis("lseek2", B("file.lseek", "share=one-file")),
    wis("malloc1", B("mem.malloc", "size=128m")),
    wis("malloc2", B("mem.malloc", "size=1k")),
    wis("mmap1", B("mem.mmap", "n=32768 reserve=yes")),
    wis("mmap2", B("mem.mmap_file", "size=128m")),
    wis(
        "open1",
        B("file.open_close", "share=file-per-copy mode=readwrite"),
    ),
    wis(
        "open2",
        B("file.open_close", "share=file-per-copy mode=readwrite"),
    ),
    wis(
        "open3",
        B("file.open_close", "share=one-file mode=readwrite"),
    ),
    wis(
        "page_fault1",
        B(
            "mem.fault.zero",
            "page=4k prefault=none access=write size=128m unmap=timed",
        ),
    ),
    wis(
        "page_fault2",
        B("mem.fault.private", "size=128m unmap=timed"),
    ),
    wis(
        "page_fault3",
        B(
            "mem.fault.shm",
            "share=file-per-copy size=128m unmap=timed dir=scratch",
        ),
    ),
    wis("pipe1", B("ipc.pipe.self", "share=pipe-per-copy")),
    wis("poll1", B("syscall.poll.file", "n=1")),
    wis("poll2", B("syscall.poll.file", "n=128")),
    wis("posix_semaphore1", B("sync.sem", "")),
    wis("pread1", B("file.pread", "share=file-per-copy")),
    wis("pread2", B("file.pread", "share=one-file")),
    wis("pread3", B("file.pread", "share=page-per-copy")),
    wis(
        "pthread_mutex1",
        B("sync.mutex", "share=one-mutex update=none"),
    ),
    wis(
        "pthread_mutex2",
        B("sync.mutex", "share=mutex-per-copy update=none"),
    ),
    wis(
        "pthread_mutex3",
        B("sync.mutex", "share=one-mutex update=global"),
    ),
    wis(
        "pthread_mutex4",
        B("sync.mutex", "share=one-mutex update=local"),
    ),
    wis(
        "pthread_mutex5",
        B("sync.mutex", "share=one-mutex update=tls"),
    ),
    wis("pwrite1", B("file.pwrite", "share=file-per-copy")),
    wis("pwrite2", B("file.pwrite", "share=one-file")),
    wis("pwrite3", B("file.pwrite", "share=page-per-copy")),
    wis("read1", B("file.readseq", "share=file-per-copy direct=no")),
    wis("read2", B("file.readseq", "share=one-file direct=no")),
    wis("read3", B("file.readseq", "share=file-per-copy direct=yes")),
    wis("read4", B("file.readseq", "share=one-file direct=yes")),
    wis("readseek1", B("file.readseek", "share=file-per-copy")),
    wis("readseek2", B("file.readseek", "share=one-file")),
    wis("readseek3", B("file.readseek", "share=page-per-copy")),
    wis("sched_yield", B("sync.yield", "")),
    wis("signal1", B("signal.raise", "")),
    wis(
        "tlb_flush1",
        B("mem.tlb_flush", "map=file-private size=128m"),
    ),
    wis("tlb_flush2", B("mem.tlb_flush", "map=anon")),
    wis(
        "tlb_flush3",
        B("mem.tlb_flush", "map=file-shared size=128m"),
    ),
    wis("unix1", B("ipc.unix.self", "")),
    wis("unlink1", B("file.unlink", "share=one-dir")),
    wis("unlink2", B("file.unlink", "share=dir-per-copy")),
    wis("write1", B("file.writeseq", "")),
    wis("writeseek1", B("file.writeseek", "share=file-per-copy")),
    wis("writeseek2", B("file.writeseek", "share=one-file")),
    wis("writeseek3", B("file.writeseek", "share=page-per-copy")),
];

/// `perf bench`'s sched, syscall, futex and epoll benchmarks, as `perf bench COLLECTION
/// NAME`: those of Debian's perf 6.1, and the ones newer perf adds (sched
/// seccomp-notify, syscall getpgid, fork and execve).
pub const PERF_BENCH: &[PeerTest] = &[
    perf("sched messaging", B("ctx.messaging", "groups=1")),
    perf("sched pipe", B("ctx.pingpong", "mechanism=pipe")),
    perf("sched seccomp-notify", B("svc.seccomp.notify", "")),
    perf("syscall basic", B("syscall.getppid", "")),
    perf("syscall getpgid", B("syscall.getpgid", "")),
    perf("syscall fork", B("proc.fork", "")),
    perf("syscall execve", B("proc.exec", "")),
    perf(
        "futex hash",
        B("sync.futex.hash", "copies=2 copies_as=thread"),
    ),
    perf(
        "futex wake",
        B("sync.futex.wake", "waiters=2 placement=free rest_ms=100"),
    ),
    perf(
        "futex wake-parallel",
        B(
            "sync.futex.wake_parallel",
            "waiters=2 wakers=2 placement=free rest_ms=100",
        ),
    ),
    perf(
        "futex requeue",
        B("sync.futex.requeue", "waiters=2 placement=free rest_ms=100"),
    ),
    perf(
        "futex lock-pi",
        B("sync.futex.lock_pi", "threads=2 hold_us=1"),
    ),
    perf("epoll wait", B("svc.epoll.wait", "placement=cross-cpu")),
    perf(
        "epoll ctl",
        B("svc.epoll.ctl", "fds=64 process=multi-threaded"),
    ),
];

/// lmbench's 23 OS tests, with a row more for a test whose method word selects another
/// operation (`lat_proc exec`, `lat_sig catch`).
pub const LMBENCH: &[PeerTest] = &[
    lm(
        "bw_file_rd",
        B("file.read", "method=read size=64k cache=warm"),
    ),
    lm(
        "bw_mmap_rd",
        B("file.read", "method=mmap size=64k cache=warm"),
    ),
    lm("bw_pipe", B("ipc.bw", "transport=pipe size=64k")),
    lm("bw_tcp", B("ipc.bw", "transport=tcp size=64k")),
    lm("bw_unix", B("ipc.bw", "transport=unix_stream size=64k")),
    lm("lat_connect", B("ipc.connect", "transport=tcp")),
    lm("lat_ctx", B("ctx.ring", "n=2 kind=process")),
    lm("lat_fcntl", B("ipc.fcntl", "")),
    lm("lat_fifo", B("ipc.fifo", "")),
    lm("lat_fs", B("file.create", "size=0 files=20000")),
    lm("lat_fs delete", B("file.delete", "size=0 files=20000")),
    lm("lat_mmap", B("mem.map_shared", "at=any")),
    lm("lat_pagefault", B("mem.fault.file", "")),
    lm("lat_pipe", B("ipc.rtt", "transport=pipe size=1")),
    lm("lat_proc", B("proc.fork", "")),
    lm("lat_proc exec", B("proc.exec", "")),
    lm("lat_select", B("syscall.select", "n=200")),
    lm("lat_sem", B("ipc.sem", "")),
    lm("lat_sig", B("signal.install", "")),
    lm("lat_sig catch", B("signal.catch", "")),
    lm("lat_sig prot", B("signal.prot", "")),
    lm("lat_syscall", B("syscall.getppid", "")),
    lm("lat_syscall write", B("svc.null.write", "")),
    lm("lat_tcp", B("ipc.rtt", "transport=tcp size=1")),
    lm("lat_udp", B("ipc.rtt", "transport=udp size=4")),
    lm("lat_unix", B("ipc.rtt", "transport=socketpair size=1")),
    lm(
        "lat_unix_connect",
        B("ipc.connect", "transport=unix placement=cross-cpu"),
    ),
    lm("lat_usleep", B("svc.usleep", "")),
];

/// Every peer test the table knows.
pub fn all() -> impl Iterator<Item = &'static PeerTest> {
    WILL_IT_SCALE.iter().chain(PERF_BENCH).chain(LMBENCH)
}

/// The peers' tests that benchmark `name` measures, with the parameter values that make
/// it each one.
pub fn like(name: &str) -> Vec<(&'static PeerTest, &'static str)> {
    all()
        .filter_map(|t| match t.here {
            B(bench, with) if bench == name => Some((t, with)),
            _ => None,
        })
        .collect()
}

/// The `like:` line for benchmark `name`: `will-it-scale tlb_flush1 (copies=2), perf bench
/// futex requeue`; `None` when no peer's test is measured by it.
pub fn like_line(name: &str) -> Option<String> {
    let tests = like(name);
    if tests.is_empty() {
        return None;
    }
    let words: Vec<String> = tests
        .iter()
        .map(|(t, with)| match *with {
            "" => format!("{} {}", t.peer.word(), t.test),
            w => format!("{} {} ({w})", t.peer.word(), t.test),
        })
        .collect();
    Some(words.join(", "))
}

/// The benchmarks that measure a peer's test called `word` (`tlb_flush1`, `lat_ctx`,
/// `futex requeue`, or `perf bench futex requeue`), for `syscost list WORD`.
pub fn find(word: &str) -> Vec<&'static str> {
    let mut names = Vec::new();
    for (_, bench, _) in named(word) {
        if !names.contains(&bench) {
            names.push(bench);
        }
    }
    names
}

/// The peer tests called `word`, each with its benchmark and parameter values.
fn named(
    word: &str,
) -> impl Iterator<Item = (&'static PeerTest, &'static str, &'static str)> {
    let word = word.trim().to_string();
    all().filter_map(move |t| {
        let full = format!("{} {}", t.peer.word(), t.test);
        let hit = t.test.eq_ignore_ascii_case(&word) || full.eq_ignore_ascii_case(&word);
        match t.here {
            B(bench, with) if hit => Some((t, bench, with)),
            _ => None,
        }
    })
}

/// What `syscost run` adds when given a peer's test name as a benchmark: the command
/// that runs it here with the peer's values (for will-it-scale's tlb_flush1, `syscost
/// run mem.tlb_flush map=file-private size=128m`), or nothing for another word.
pub fn run_hint(word: &str) -> String {
    let lines: Vec<String> = named(word)
        .map(|(t, bench, with)| {
            let cmd = format!("syscost run {bench} {with}");
            format!("{}'s {} is `{}`", t.peer.word(), t.test, cmd.trim_end())
        })
        .collect();
    match lines.is_empty() {
        true => String::new(),
        false => format!("; {}", lines.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench;

    #[test]
    fn every_peer_test_names_a_benchmark_that_takes_its_values_or_says_why_not() {
        for t in all() {
            match t.here {
                B(name, with) => {
                    let b = bench::find(name).unwrap_or_else(|| {
                        panic!("{} {}: no benchmark {name}", t.peer.word(), t.test)
                    });
                    for pair in with.split_whitespace() {
                        let (p, v) = pair.split_once('=').expect("name=value");
                        let spec = b
                            .params()
                            .iter()
                            .chain(bench::copies::SPECS.iter())
                            .find(|s| s.name == p)
                            .unwrap_or_else(|| panic!("{name} takes no {p}"));
                        spec.check(name, v).expect("a value the benchmark takes");
                    }
                }
                Here::Not(why) => assert!(!why.is_empty(), "{}: a reason", t.test),
            }
        }
    }

    #[test]
    fn no_peer_test_is_listed_twice() {
        let mut seen = std::collections::HashSet::new();
        for t in all() {
            assert!(seen.insert((t.peer, t.test)), "{} twice", t.test);
        }
    }

    /// The rows of docs/benchmarks.md's table under `### {peer}` (up to the next
    /// heading): (test, benchmark or `None` for "not measured", with or why), or `None`
    /// when the page has no such heading.
    fn doc_rows(doc: &str, peer: Peer) -> Option<Vec<(String, Option<String>, String)>> {
        let head = format!("### {}", peer.word());
        let start = doc.lines().position(|l| l.trim() == head)?;
        let cell = |c: &str| c.trim().trim_matches('`').to_string();
        let rows = doc
            .lines()
            .skip(start + 1)
            .take_while(|l| !l.starts_with('#'))
            .filter(|l| l.starts_with("| `"))
            .map(|l| {
                let c: Vec<&str> = l.trim().trim_matches('|').split('|').collect();
                let bench = cell(c[1]);
                let here = (bench != "not measured").then_some(bench);
                (cell(c[0]), here, cell(c[2]))
            })
            .collect();
        Some(rows)
    }

    /// docs/benchmarks.md's "The peers' tests" tables are the ones here: each peer with
    /// a heading there has its table row for row (will-it-scale must have one).
    #[test]
    fn the_docs_tables_of_the_peers_tests_are_these() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/benchmarks.md");
        let doc = std::fs::read_to_string(path).unwrap();
        assert!(
            doc_rows(&doc, Peer::WillItScale).is_some(),
            "### will-it-scale"
        );
        for peer in [Peer::WillItScale, Peer::PerfBench, Peer::Lmbench] {
            let Some(rows) = doc_rows(&doc, peer) else {
                continue;
            };
            let want: Vec<(String, Option<String>, String)> = all()
                .filter(|t| t.peer == peer)
                .map(|t| match t.here {
                    B(b, with) => (t.test.to_string(), Some(b.to_string()), with.into()),
                    Here::Not(why) => (t.test.to_string(), None, why.to_string()),
                })
                .collect();
            assert_eq!(rows, want, "docs/benchmarks.md's {} table", peer.word());
        }
    }

    #[test]
    fn will_it_scale_has_its_sixty_tests() {
        assert_eq!(WILL_IT_SCALE.len(), 60);
        for name in ["tlb_flush1", "pthread_mutex5", "writeseek3", "unix1"] {
            assert!(WILL_IT_SCALE.iter().any(|t| t.test == name), "{name}");
        }
    }

    #[test]
    fn a_peer_test_finds_its_benchmark_and_the_benchmark_names_it() {
        assert_eq!(find("pipe1"), vec!["ipc.pipe.self"]);
        assert_eq!(find("will-it-scale pipe1"), vec!["ipc.pipe.self"]);
        assert!(find("no_such_test").is_empty());
        let line = like_line("ctx.pingpong").unwrap();
        assert!(
            line.contains("perf bench sched pipe (mechanism=pipe)"),
            "{line}"
        );
    }
}
