//! Writing an output file atomically: a temporary file beside it, renamed
//! into place, so a reader never sees half a file and a failure leaves the
//! previous contents (and never a stray temporary file).
//!
//! Only a regular file (or a path that does not exist yet) is replaced so.
//! - A path that is something else (`/dev/null`, `/dev/stdout`, a FIFO, a
//!   terminal) is opened and written in place: renaming over it would
//!   replace the device or pipe with a file (as root, `-o /dev/null` would
//!   turn `/dev/null` into a regular file for every later program).
//! - A symbolic link to a file stays a link: the file it names is replaced.
//! - A replaced file keeps its permissions.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` ([`write_atomically_with`]).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomically_with(path, |w| w.write_all(bytes))
}

/// Has `write` write `path` (buffered): a regular file through a temporary
/// file beside it renamed over it, anything else in place (module doc).
pub fn write_atomically_with(path: &Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> std::io::Result<()> {
    match Target::of(path)? {
        Target::InPlace => write_buffered(OpenOptions::new().write(true).open(path)?, write),
        Target::Replace { file, permissions } => replace(&file, permissions, write),
    }
}

/// How an output path is written.
#[derive(Debug, PartialEq)]
enum Target {
    /// An existing path that is not a regular file: opened and written.
    InPlace,
    /// The regular file to replace (a link's target), and the permissions
    /// of the file it replaces.
    Replace { file: PathBuf, permissions: Option<std::fs::Permissions> },
}

impl Target {
    fn of(path: &Path) -> std::io::Result<Target> {
        // `metadata` follows links: what a write to `path` would reach.
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => Err(std::io::Error::other("it is a directory")),
            Ok(m) if !m.is_file() => Ok(Target::InPlace),
            Ok(m) => {
                let link = std::fs::symlink_metadata(path)?.file_type().is_symlink();
                let file = if link { std::fs::canonicalize(path)? } else { path.to_path_buf() };
                Ok(Target::Replace { file, permissions: Some(m.permissions()) })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Target::Replace { file: path.to_path_buf(), permissions: None }),
            Err(e) => Err(e),
        }
    }
}

fn write_buffered(file: File, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> std::io::Result<()> {
    let mut f = std::io::BufWriter::with_capacity(1 << 16, file);
    write(&mut f)?;
    f.flush()
}

/// Writes a temporary file beside `path` and renames it over `path`.
fn replace(path: &Path, permissions: Option<std::fs::Permissions>, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let file_name = path.file_name().ok_or_else(|| std::io::Error::other("the output path names no file"))?;
    let tmp = dir.join(format!(".{}.ptx-opt-{}.tmp", file_name.to_string_lossy(), std::process::id()));
    let result = (|| {
        let file = File::create(&tmp)?;
        if let Some(p) = permissions {
            file.set_permissions(p)?;
        }
        write_buffered(file, write)?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ptx-opt-output-file-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// A regular file or a new path is replaced; anything else that exists
    /// is written in place; a directory is an error.
    #[test]
    fn only_regular_files_are_replaced() {
        let d = scratch("targets");
        let new = d.join("new.ptx");
        assert_eq!(Target::of(&new).unwrap(), Target::Replace { file: new.clone(), permissions: None });
        std::fs::write(&new, "x").unwrap();
        assert!(matches!(Target::of(&new).unwrap(), Target::Replace { file, permissions: Some(_) } if file == new));
        assert_eq!(Target::of(Path::new("/dev/null")).unwrap(), Target::InPlace);
        assert!(Target::of(&d).is_err());
    }

    /// Writing to `/dev/null` leaves it the device it is.
    #[test]
    fn dev_null_stays_a_device() {
        use std::os::unix::fs::FileTypeExt;
        write_atomically(Path::new("/dev/null"), b"discarded").unwrap();
        assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    }

    /// A FIFO is written through (a reader gets the bytes) and stays a FIFO.
    #[test]
    fn a_fifo_is_written_through() {
        use std::os::unix::fs::FileTypeExt;
        let d = scratch("fifo");
        let fifo = d.join("out.ptx");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            return; // no `mkfifo` here; `dev_null_stays_a_device` covers the path
        }
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        write_atomically(&fifo, b".version 8.0\n").unwrap();
        // Checked before joining: a reader of a replaced FIFO waits forever.
        assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(reader.join().unwrap(), b".version 8.0\n");
    }

    /// A link to a file stays a link; the file it names gets the bytes and
    /// keeps its permissions.
    #[test]
    fn a_link_stays_a_link_and_permissions_stay() {
        use std::os::unix::fs::PermissionsExt;
        let d = scratch("link");
        let file = d.join("real.ptx");
        let link = d.join("link.ptx");
        std::fs::write(&file, "old").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        std::os::unix::fs::symlink(&file, &link).unwrap();
        write_atomically(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o640);
        let entries: Vec<_> = std::fs::read_dir(&d).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(entries.len(), 2, "no temporary files are left behind: {entries:?}");
    }
}
