//! Every command that writes a file, against every kind of target: a regular file, a new
//! path, a symbolic link to a file, a dangling link, a character device made with
//! mknod, a FIFO with a reader, a directory, a read-only directory (a read-only tmpfs
//! for root), a full device (/dev/full) and a full file system (a small tmpfs, filled).
//! After each, the target is the kind of object it was and the content is where it
//! should be. The table of results is printed (`--nocapture` shows it).

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Runs syscost; nothing is saved unless a `--db` is named.
fn syscost(args: &[String]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_syscost"));
    if !args.iter().any(|a| a == "--db") {
        c.env("SYSCOST_NO_SAVE", "1");
    }
    c.args(args)
        .stdin(Stdio::null())
        .output()
        .expect("start syscost")
}

fn p(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// A command's arguments, given the target path.
type ArgsFn = Box<dyn Fn(&Path) -> Vec<String>>;

/// A writing command: its name, its arguments given the target, and whether it writes
/// JSON (then the content must parse).
struct Writer {
    name: &'static str,
    args: ArgsFn,
    json: bool,
}

/// What the kind of a path is now.
fn kind(p: &Path) -> &'static str {
    match std::fs::symlink_metadata(p) {
        Err(_) => "missing",
        Ok(m) => {
            let t = m.file_type();
            if t.is_symlink() {
                "symlink"
            } else if t.is_file() {
                "file"
            } else if t.is_dir() {
                "dir"
            } else if t.is_char_device() {
                "chardev"
            } else if t.is_fifo() {
                "fifo"
            } else {
                "other"
            }
        }
    }
}

fn mknod_null(p: &Path) -> bool {
    Command::new("mknod")
        .args(["-m", "666"])
        .arg(p)
        .args(["c", "1", "3"])
        .status()
        .is_ok_and(|s| s.success())
}

/// A tmpfs mounted on a directory for one case, unmounted when dropped.
struct Mount(std::path::PathBuf);

impl Mount {
    fn tmpfs(dir: &Path, options: &str) -> Option<Mount> {
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs"])
            .arg(dir)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Mount(dir.to_path_buf()))
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

fn mkfifo(p: &Path) -> bool {
    Command::new("mkfifo")
        .arg(p)
        .status()
        .is_ok_and(|s| s.success())
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        .unwrap_or(false)
}

/// Checks written content: not empty, and a JSON document when the command writes one.
fn content_ok(bytes: &[u8], json: bool) -> Result<(), String> {
    if bytes.is_empty() {
        return Err("empty".into());
    }
    if json {
        serde_json::from_slice::<serde_json::Value>(bytes)
            .map_err(|e| format!("not one JSON document: {e}"))?;
    }
    Ok(())
}

/// The error output is one line naming the path.
fn one_line_naming(out: &Output, path: &Path) -> Result<(), String> {
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| !l.starts_with("warning:") && !l.trim().is_empty())
        .collect();
    if lines.len() != 1 || !lines[0].contains(&*path.to_string_lossy()) {
        return Err(format!(
            "error output {lines:?} does not name {}",
            path.display()
        ));
    }
    if err.contains("panicked") {
        return Err("panicked".into());
    }
    Ok(())
}

/// Runs `w` against one kind of target in a fresh directory; Ok(what happened) or
/// Err(what is wrong). `Ok("skipped: …")` when the target cannot be made here.
fn case(w: &Writer, target: &str, scratch: &Path) -> Result<String, String> {
    let dir = scratch.join(format!("{}-{target}", w.name.replace(' ', "_")));
    std::fs::create_dir(&dir).unwrap();
    let code = |o: &Output| o.status.code().unwrap_or(-1);
    match target {
        "regular" | "new" | "symlink" | "dangling" => {
            let real = dir.join("real.out");
            let path = match target {
                "regular" => {
                    std::fs::write(&real, "old").unwrap();
                    real.clone()
                }
                "new" => real.clone(),
                _ => {
                    if target == "symlink" {
                        std::fs::write(&real, "old").unwrap();
                    }
                    let link = dir.join("link.out");
                    std::os::unix::fs::symlink("real.out", &link).unwrap();
                    link
                }
            };
            let out = syscost(&(w.args)(&path));
            if code(&out) != 0 {
                return Err(format!(
                    "exit {}: {}",
                    code(&out),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            let want = if path == real { "file" } else { "symlink" };
            if kind(&path) != want || kind(&real) != "file" {
                return Err(format!(
                    "{} is a {}, {} a {}",
                    path.display(),
                    kind(&path),
                    real.display(),
                    kind(&real)
                ));
            }
            let bytes = std::fs::read(&real).unwrap();
            if bytes == b"old" {
                return Err("the old content is still there".into());
            }
            content_ok(&bytes, w.json)?;
            let names = std::fs::read_dir(&dir).unwrap().count();
            let expected = if path == real { 1 } else { 2 };
            if names != expected {
                return Err(format!(
                    "{names} entries left in the directory, not {expected}"
                ));
            }
            Ok(format!("ok, {want} kept"))
        }
        "chardev" => {
            let node = dir.join("null");
            if !mknod_null(&node) {
                return Ok("skipped: mknod refused here".into());
            }
            let out = syscost(&(w.args)(&node));
            if code(&out) != 0 {
                return Err(format!(
                    "exit {}: {}",
                    code(&out),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            match kind(&node) {
                "chardev" => Ok("ok, device kept".into()),
                k => Err(format!("the device became a {k}")),
            }
        }
        "fifo" => {
            let fifo = dir.join("pipe");
            if !mkfifo(&fifo) {
                return Ok("skipped: mkfifo refused here".into());
            }
            let reading = fifo.clone();
            let reader = std::thread::spawn(move || {
                let mut got = Vec::new();
                let mut f = std::fs::File::open(&reading).unwrap();
                f.read_to_end(&mut got).unwrap();
                got
            });
            let out = syscost(&(w.args)(&fifo));
            if code(&out) != 0 {
                // Unblock the reader before failing.
                drop(std::fs::OpenOptions::new().write(true).open(&fifo));
                let _ = reader.join();
                return Err(format!(
                    "exit {}: {}",
                    code(&out),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            let got = reader.join().unwrap();
            if kind(&fifo) != "fifo" {
                return Err(format!("the FIFO became a {}", kind(&fifo)));
            }
            content_ok(&got, w.json)?;
            Ok(format!("ok, reader got {} bytes", got.len()))
        }
        "directory" => {
            let out = syscost(&(w.args)(&dir));
            if code(&out) == 0 {
                return Err("a directory was accepted".into());
            }
            one_line_naming(&out, &dir)?;
            if std::fs::read_dir(&dir).unwrap().count() != 0 || kind(&dir) != "dir" {
                return Err("the directory changed".into());
            }
            Ok(format!("refused (exit {})", code(&out)))
        }
        "read-only dir" => {
            // Root writes through permission bits: a read-only file system, where one
            // can be mounted, else the bits (which bind everyone else).
            let _mount = if is_root() {
                match Mount::tmpfs(&dir, "ro,size=64k") {
                    Some(m) => Some(m),
                    None => {
                        return Ok("skipped: root, and no tmpfs could be mounted".into())
                    }
                }
            } else {
                std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555))
                    .unwrap();
                None
            };
            let path = dir.join("out");
            let out = syscost(&(w.args)(&path));
            let left = std::fs::read_dir(&dir).unwrap().count();
            if !is_root() {
                std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))
                    .unwrap();
            }
            if code(&out) == 0 {
                return Err("a read-only directory was written".into());
            }
            one_line_naming(&out, &path)?;
            if left != 0 {
                return Err("something was left in the directory".into());
            }
            Ok(format!("refused (exit {})", code(&out)))
        }
        "full fs" => {
            let Some(_mount) = Mount::tmpfs(&dir, "size=64k") else {
                return Ok("skipped: no tmpfs could be mounted (needs root)".into());
            };
            let fill = dir.join("fill");
            let mut f = std::fs::File::create(&fill).unwrap();
            let block = [0u8; 4096];
            while std::io::Write::write_all(&mut f, &block).is_ok() {}
            drop(f);
            let path = dir.join("out");
            let out = syscost(&(w.args)(&path));
            let left: Vec<_> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            if code(&out) == 0 {
                return Err("a full file system was written without an error".into());
            }
            one_line_naming(&out, &path)?;
            if left.len() != 1 {
                return Err(format!("left in the full file system: {left:?}"));
            }
            Ok(format!("refused (exit {})", code(&out)))
        }
        "full" => {
            let full = Path::new("/dev/full");
            if kind(full) != "chardev" {
                return Ok("skipped: no /dev/full".into());
            }
            let out = syscost(&(w.args)(full));
            if code(&out) == 0 {
                return Err("a full device was written without an error".into());
            }
            one_line_naming(&out, full)?;
            if kind(full) != "chardev" {
                return Err("/dev/full is no longer a device".into());
            }
            Ok(format!("refused (exit {})", code(&out)))
        }
        other => panic!("no target {other}"),
    }
}

#[test]
#[ignore = "slow: every writer into every kind of target; .ci/run runs it"]
fn every_writer_keeps_every_kind_of_target_what_it_is() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().to_path_buf();
    // A history with one run (samples kept) and a trace file, for the commands that
    // read them.
    let db = root.join("history.db");
    let db_s = db.to_string_lossy().into_owned();
    let made = syscost(&s(&[
        "run",
        "syscall.getpid",
        "--profile",
        "smoke",
        "--db",
        &db_s,
    ]));
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let trace = root.join("t.trace");
    let traced = syscost(
        &[
            s(&["trace", "record", "-o"]),
            vec![trace.to_string_lossy().into_owned()],
            s(&["--", "true"]),
        ]
        .concat(),
    );
    assert!(
        traced.status.success(),
        "{}",
        String::from_utf8_lossy(&traced.stderr)
    );
    let trace_s = trace.to_string_lossy().into_owned();

    let run = |format: &'static str| -> ArgsFn {
        Box::new(move |t: &Path| {
            s(&[
                "run",
                "syscall.getpid",
                "--profile",
                "smoke",
                "--no-save",
                "--format",
                format,
                "-o",
                &p(t),
            ])
        })
    };
    let db1 = db_s.clone();
    let db2 = db_s.clone();
    let db3 = db_s.clone();
    let tr = trace_s.clone();
    let writers = vec![
        Writer {
            name: "run json",
            args: run("json"),
            json: true,
        },
        Writer {
            name: "run csv",
            args: run("csv"),
            json: false,
        },
        Writer {
            name: "run prometheus",
            args: run("prometheus"),
            json: false,
        },
        Writer {
            name: "run gbench",
            args: run("gbench"),
            json: true,
        },
        Writer {
            name: "history export",
            args: Box::new(move |t| {
                s(&["history", "export", "last", "--db", &db1, "-o", &p(t)])
            }),
            json: true,
        },
        Writer {
            name: "report",
            args: Box::new(move |t| s(&["report", "last", "--db", &db2, "-o", &p(t)])),
            json: false,
        },
        Writer {
            name: "plot",
            args: Box::new(move |t| {
                s(&[
                    "plot",
                    "distribution",
                    "last",
                    "--bench",
                    "syscall.getpid",
                    "--db",
                    &db3,
                    "-o",
                    &p(t),
                ])
            }),
            json: false,
        },
        Writer {
            name: "trace record",
            args: Box::new(move |t| s(&["trace", "record", "-o", &p(t), "--", "true"])),
            json: false,
        },
        Writer {
            name: "trace export",
            args: Box::new(move |t| {
                s(&["trace", "export", "--format", "perfetto", "-o", &p(t), &tr])
            }),
            json: false,
        },
        Writer {
            name: "exec",
            args: Box::new(move |t| s(&["exec", "-o", &p(t), "--", "true"])),
            json: false,
        },
    ];
    let targets = [
        "regular",
        "new",
        "symlink",
        "dangling",
        "chardev",
        "fifo",
        "directory",
        "read-only dir",
        "full",
        "full fs",
    ];
    let mut failures = Vec::new();
    let mut table = String::from("command          target          result\n");
    for w in &writers {
        for t in targets {
            let r = case(w, t, &root);
            let shown = match &r {
                Ok(x) => x.clone(),
                Err(e) => format!("FAIL: {e}"),
            };
            table.push_str(&format!("{:<16} {:<15} {shown}\n", w.name, t));
            if let Err(e) = r {
                failures.push(format!("{} × {t}: {e}", w.name));
            }
        }
    }
    println!("{table}");
    assert!(failures.is_empty(), "{table}\n{}", failures.join("\n"));
}

/// `-o` without `--format` writes what the file's name asks for (`.csv` a CSV, `.json`
/// JSON); a name that asks for nothing gets the command's default; `--format` wins.
#[test]
fn an_output_file_gets_the_format_its_name_asks_for() {
    let d = tempfile::tempdir().unwrap();
    let run = |name: &str, extra: &[&str]| -> String {
        let path = d.path().join(name);
        let mut args = s(&[
            "run",
            "syscall.getpid",
            "--profile",
            "smoke",
            "-o",
            &p(&path),
        ]);
        args.extend(s(extra));
        let out = syscost(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::read_to_string(&path).unwrap()
    };
    assert!(run("r.csv", &[]).starts_with("name,params,status,"));
    assert!(serde_json::from_str::<serde_json::Value>(&run("r.json", &[])).is_ok());
    assert!(run("r.MD", &[]).contains("| benchmark |"));
    let table = run("r.out", &[]);
    let first = table.lines().next().unwrap_or("");
    assert!(
        first.contains(" clock, ") && first.contains("profile smoke"),
        "the table: {table}"
    );
    assert!(run("r2.json", &["--format", "csv"]).starts_with("name,params,status,"));
}
