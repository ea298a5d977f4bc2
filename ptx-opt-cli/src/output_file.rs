//! Writing an output file atomically: a temporary file beside it, renamed
//! into place, so a reader never sees half a file and a failure leaves the
//! previous contents (and never a stray temporary file).

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomically_with(path, |w| w.write_all(bytes))
}

/// Has `write` write a temporary file beside `path` (buffered), then
/// renames it over `path`.
pub fn write_atomically_with(path: &Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let file_name = path.file_name().ok_or_else(|| std::io::Error::other("the output path names no file"))?;
    if path.is_dir() {
        return Err(std::io::Error::other("it is a directory"));
    }
    let tmp = dir.join(format!(".{}.ptx-opt-{}.tmp", file_name.to_string_lossy(), std::process::id()));
    let result = (|| {
        let mut f = std::io::BufWriter::with_capacity(1 << 16, std::fs::File::create(&tmp)?);
        write(&mut f)?;
        f.flush()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
