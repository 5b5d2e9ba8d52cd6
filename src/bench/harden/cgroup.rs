//! The cgroups `cgroup=same|sibling` measures in, and their removal.
//!
//! A worker makes two sibling cgroups of the `cpu` controller beside the run's own,
//! `syscost-<run pid>/w<worker pid>-a` and `-b`, and moves itself into `a` (its partner,
//! started later, follows it, or is moved to `b` for `sibling`), so both values put the
//! two tasks one level down in fresh groups and differ only in sharing one. The worker
//! removes both on its way out (success, error, Ctrl-C); when it is killed, the run
//! removes its `syscost-<pid>` directory at its end, and a later run removes those of
//! runs that are gone ([`Sweep`]). Only empty directories named so are removed; nothing
//! else in cgroupfs is written.

use crate::os::harden as os;
use std::path::{Path, PathBuf};

/// The prefix of every cgroup a run makes.
pub const PREFIX: &str = "syscost-";

/// Where this process's runs make their cgroups: its own cgroup of the `cpu`
/// controller, with cgroup v1; or why not.
fn home() -> Result<PathBuf, String> {
    match os::cpu_cgroup() {
        Some((dir, true)) => Ok(dir),
        Some((dir, false)) => Err(format!(
            "cgroup=: only cgroup v1's cpu hierarchy is supported yet; this machine has \
             cgroup v2 ({}), where sibling cpu groups need the cpu controller in a \
             parent's subtree_control, a setting syscost does not change",
            dir.display()
        )),
        None => Err("cgroup=: no cgroup of the cpu controller is mounted".into()),
    }
}

/// The two sibling cgroups of one worker; dropped, it moves the worker back and
/// removes them.
pub struct Pair {
    original: PathBuf,
    a: PathBuf,
    b: PathBuf,
}

impl Pair {
    /// Makes the pair for the worker `worker` (its pid in the run's pid namespace) of
    /// the run `session_pid` and moves this process into `a`; the reason, for the
    /// skip, when cgroupfs cannot be written.
    pub fn make(session_pid: u32, worker: u32) -> Result<Pair, String> {
        let original = home()?;
        let run = original.join(format!("{PREFIX}{session_pid}"));
        let me = worker;
        let pair = Pair {
            a: run.join(format!("w{me}-a")),
            b: run.join(format!("w{me}-b")),
            original,
        };
        let made = |e: std::io::Error, p: &Path| {
            format!(
                "cgroup=: cgroupfs is not writable here ({}: {e})",
                p.display()
            )
        };
        match std::fs::create_dir(&run) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(made(e, &run)),
        }
        for d in [&pair.a, &pair.b] {
            std::fs::create_dir(d).map_err(|e| made(e, d))?;
        }
        os::move_to_cgroup(&pair.a, std::process::id() as i32, false).map_err(|e| {
            format!("cgroup=: moving the worker into {}: {e}", pair.a.display())
        })?;
        Ok(pair)
    }

    /// The partner's cgroup for `sibling`.
    pub fn partner(&self) -> &Path {
        &self.b
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        let _ = os::move_to_cgroup(&self.original, std::process::id() as i32, false);
        let _ = std::fs::remove_dir(&self.a);
        let _ = std::fs::remove_dir(&self.b);
        if let Some(run) = self.a.parent() {
            // Fails while another worker of the run has its pair there.
            let _ = std::fs::remove_dir(run);
        }
    }
}

/// Removes the cgroups of runs that are gone (at its making) and this run's own (when
/// dropped): the directories `syscost-<pid>` beside this process's cgroup whose pid is
/// no live process, or this one's, and the empty groups in them. A group that still
/// holds a task stays (rmdir refuses it).
pub struct Sweep {
    own: u32,
}

impl Sweep {
    /// Removes what runs that are gone left, and returns the guard of this run's.
    pub fn start() -> Sweep {
        let own = std::process::id();
        sweep(|pid| pid != own && !Path::new(&format!("/proc/{pid}")).exists());
        Sweep { own }
    }
}

impl Drop for Sweep {
    fn drop(&mut self) {
        let own = self.own;
        sweep(|pid| pid == own);
    }
}

/// Removes every `syscost-<pid>` directory (and the groups in it) whose pid `gone`
/// accepts; returns the directories that stayed.
pub fn sweep(gone: impl Fn(u32) -> bool) -> Vec<PathBuf> {
    let Ok(dir) = home() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut stayed = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !gone(pid) {
            continue;
        }
        let run = e.path();
        if let Ok(groups) = std::fs::read_dir(&run) {
            for g in groups.flatten() {
                if g.path().is_dir() {
                    let _ = std::fs::remove_dir(g.path());
                }
            }
        }
        if std::fs::remove_dir(&run).is_err() {
            stayed.push(run);
        }
    }
    stayed
}

/// The `syscost-<pid>` directories beside this process's cgroup now (for tests and
/// checks).
pub fn leftovers() -> Vec<PathBuf> {
    let Ok(dir) = home() else {
        return Vec::new();
    };
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(PREFIX))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}
