//! Where a file that syscost writes goes, by what the path names: one writer for every
//! output path (`-o` of every command, the trace's file).
//!
//! - `-`, `/dev/stdout` (and `/dev/fd/1`, `/proc/self/fd/1`): standard output.
//! - A regular file, or a path that does not exist yet: written to a temporary file in
//!   the same directory and renamed over it, so a reader never sees half a document;
//!   an existing file's permissions are kept, and a new file gets those the umask
//!   leaves of 0666 (0644 under umask 022), as any program's output. Errors name no
//!   temporary file: the caller names the user's path.
//! - A symbolic link: followed (through every link, a dangling one included), and its
//!   final target written as above; the link itself stays a link.
//! - A character or block device, a FIFO, a socket, another `/dev/fd/N`: opened and
//!   written in place, never renamed over (as `-o /dev/null` or `-o >(jq .)` expect).
//! - A directory: refused.
//!
//! Nothing here ever replaces anything but a regular file.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// How a path is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// This process's standard output.
    Stdout,
    /// Opened and written where it is: a device, a FIFO, a socket, a descriptor.
    InPlace(PathBuf),
    /// A regular file (or a new one) at this path, the links leading to it followed:
    /// replaced whole by a rename.
    Replace(PathBuf),
}

/// The most symbolic links followed (as the kernel's ELOOP limit).
const MAX_LINKS: usize = 40;

impl Target {
    /// What `path` names now. A directory, or a link loop, is an error.
    pub fn of(path: &Path) -> io::Result<Target> {
        if path.as_os_str() == "-" {
            return Ok(Target::Stdout);
        }
        let mut p = path.to_path_buf();
        for _ in 0..MAX_LINKS {
            if let Some(t) = descriptor(&p) {
                return Ok(t);
            }
            let meta = match std::fs::symlink_metadata(&p) {
                Ok(m) => m,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Ok(Target::Replace(p));
                }
                Err(e) => return Err(e),
            };
            let ft = meta.file_type();
            if ft.is_symlink() {
                let to = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
                continue;
            }
            if ft.is_dir() {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    "it is a directory; name a file in it",
                ));
            }
            if ft.is_file() {
                return Ok(Target::Replace(p));
            }
            // A character or block device, a FIFO, a socket.
            return Ok(Target::InPlace(p));
        }
        Err(io::Error::other(format!(
            "more than {MAX_LINKS} symbolic links to follow"
        )))
    }

    /// Whether a document written here replaces the file whole (so an early, partial
    /// version can be written first and replaced later without a reader seeing both).
    pub fn replaced_whole(&self) -> bool {
        matches!(self, Target::Replace(_))
    }

    /// Checks, without leaving anything, that the target can be written: the directory
    /// of a file to replace takes a new file; a device or FIFO is not opened (a FIFO
    /// would wait for its reader).
    pub fn check(&self) -> io::Result<()> {
        match self {
            Target::Stdout | Target::InPlace(_) => Ok(()),
            Target::Replace(p) => tempfile::NamedTempFile::new_in(dir_of(p))
                .map(drop)
                .map_err(untemp),
        }
    }
}

/// The error without the temporary file's name, which the tempfile crate appends (`...
/// at path "/dir/.tmpNsW5MJ"`): the caller names the path the user gave, and the
/// temporary file is ours, not theirs.
fn untemp(e: io::Error) -> io::Error {
    if e.raw_os_error().is_some() {
        return e;
    }
    let msg = e.to_string();
    match msg.rfind(" at path \"") {
        Some(i) => io::Error::new(e.kind(), msg[..i].to_string()),
        None => e,
    }
}

/// The permissions of a new file as `open(2)` gives them: 0666 less the umask (0644
/// under umask 022), where the tempfile crate's would be 0600. Output files are made to
/// be shared.
fn new_file_mode() -> std::fs::Permissions {
    use std::os::unix::fs::PermissionsExt;
    std::fs::Permissions::from_mode(0o666)
}

/// The standard descriptors and `/dev/fd/N` names, which are written in place.
fn descriptor(p: &Path) -> Option<Target> {
    let s = p.to_str()?;
    let n = s
        .strip_prefix("/dev/fd/")
        .or_else(|| s.strip_prefix("/proc/self/fd/"))
        .map(str::to_string)
        .or_else(|| match s {
            "/dev/stdout" => Some("1".into()),
            "/dev/stderr" => Some("2".into()),
            _ => None,
        })?;
    match n.parse::<u32>().ok()? {
        1 => Some(Target::Stdout),
        _ => Some(Target::InPlace(p.to_path_buf())),
    }
}

fn dir_of(p: &Path) -> &Path {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// A file being written to a [`Target`]: [`OutFile::commit`] finishes it (renaming a
/// replacement into place); dropped uncommitted, a replacement leaves nothing behind.
pub struct OutFile {
    inner: Inner,
}

enum Inner {
    Stdout(io::Stdout),
    InPlace(File),
    Replace {
        tmp: tempfile::NamedTempFile,
        path: PathBuf,
    },
}

/// Opens `path` for writing as its [`Target`] says.
pub fn create(path: &Path) -> io::Result<OutFile> {
    let inner = match Target::of(path)? {
        Target::Stdout => Inner::Stdout(io::stdout()),
        Target::InPlace(p) => Inner::InPlace(OpenOptions::new().write(true).open(p)?),
        Target::Replace(p) => {
            // Created with 0666, which the kernel narrows by the umask; an existing
            // file's permissions are then kept.
            let tmp = tempfile::Builder::new()
                .prefix(".syscost-")
                .suffix(".partial")
                .permissions(new_file_mode())
                .tempfile_in(dir_of(&p))
                .map_err(untemp)?;
            if let Ok(meta) = std::fs::metadata(&p) {
                tmp.as_file()
                    .set_permissions(meta.permissions())
                    .map_err(untemp)?;
            }
            Inner::Replace { tmp, path: p }
        }
    };
    Ok(OutFile { inner })
}

impl OutFile {
    /// Finishes the file: flushed, and a replacement renamed into place.
    pub fn commit(self) -> io::Result<()> {
        match self.inner {
            Inner::Stdout(mut s) => s.flush(),
            Inner::InPlace(mut f) => f.flush(),
            Inner::Replace { tmp, path } => {
                tmp.as_file().sync_data().or_else(|e| {
                    // A file system without fsync still renames.
                    if e.raw_os_error() == Some(libc::EINVAL) {
                        Ok(())
                    } else {
                        Err(untemp(e))
                    }
                })?;
                tmp.persist(&path).map(drop).map_err(|e| untemp(e.error))
            }
        }
    }
}

impl Write for OutFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.inner {
            Inner::Stdout(s) => s.write(buf),
            Inner::InPlace(f) => f.write(buf),
            Inner::Replace { tmp, .. } => tmp.write(buf).map_err(untemp),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.inner {
            Inner::Stdout(s) => s.flush(),
            Inner::InPlace(f) => f.flush(),
            Inner::Replace { tmp, .. } => tmp.flush().map_err(untemp),
        }
    }
}

/// Writes `bytes` to `path` as its [`Target`] says.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = create(path)?;
    f.write_all(bytes)?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, FileTypeExt};

    #[test]
    fn each_kind_of_path_is_written_as_what_it_is() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("real.json");
        std::fs::write(&file, "old").unwrap();
        let link = d.path().join("link.json");
        symlink("real.json", &link).unwrap();
        let dangling = d.path().join("dangling.json");
        symlink("made.json", &dangling).unwrap();

        assert_eq!(Target::of(&link).unwrap(), Target::Replace(file.clone()));
        write(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");

        write(&dangling, b"made").unwrap();
        assert!(std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink());
        let made = d.path().join("made.json");
        assert_eq!(std::fs::read_to_string(made).unwrap(), "made");

        assert_eq!(Target::of(Path::new("-")).unwrap(), Target::Stdout);
        assert_eq!(
            Target::of(Path::new("/dev/stdout")).unwrap(),
            Target::Stdout
        );
        assert_eq!(
            Target::of(Path::new("/dev/null")).unwrap(),
            Target::InPlace("/dev/null".into())
        );
        write(Path::new("/dev/null"), b"gone").unwrap();
        let null = std::fs::symlink_metadata("/dev/null").unwrap().file_type();
        assert!(null.is_char_device(), "/dev/null is still a device");

        let e = Target::of(d.path()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::IsADirectory);
        // Nothing but the files named is left in the directory.
        let mut names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["dangling.json", "link.json", "made.json", "real.json"]
        );
    }

    #[test]
    fn a_replaced_file_keeps_its_permissions_and_a_loop_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("out.csv");
        std::fs::write(&file, "old").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        write(&file, b"new").unwrap();
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        let a = d.path().join("a");
        let b = d.path().join("b");
        symlink(&b, &a).unwrap();
        symlink(&a, &b).unwrap();
        assert!(Target::of(&a).is_err());
    }

    #[test]
    fn a_new_file_follows_the_umask_and_errors_name_no_temporary_file() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("report.html");
        write(&file, b"<html/>").unwrap();
        // The mode open(2) would give a new file under this process's umask.
        let probe = d.path().join("probe");
        std::fs::write(&probe, b"").unwrap();
        let want = std::fs::metadata(&probe).unwrap().permissions().mode() & 0o777;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, want, "{mode:o} against {want:o}");
        let bad = d.path().join("no/such/dir/r.html");
        let errors = [
            Target::of(&bad).unwrap().check().unwrap_err(),
            create(&bad).err().unwrap(),
            write(&bad, b"x").unwrap_err(),
        ];
        for e in errors {
            let msg = e.to_string();
            assert!(
                !msg.contains(".tmp")
                    && !msg.contains(".syscost-")
                    && !msg.contains("partial"),
                "{msg}"
            );
            assert_eq!(e.kind(), io::ErrorKind::NotFound, "{msg}");
        }
    }

    #[test]
    fn an_uncommitted_replacement_leaves_nothing() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("never.json");
        let mut f = create(&file).unwrap();
        f.write_all(b"half").unwrap();
        drop(f);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }
}
