//! Writing an output file atomically: a temporary file beside it, renamed
//! into place, so a reader never sees half a file and a failure leaves the
//! previous contents (and never a stray temporary file).

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let file_name = path.file_name().ok_or_else(|| std::io::Error::other("the output path names no file"))?;
    if path.is_dir() {
        return Err(std::io::Error::other("it is a directory"));
    }
    let tmp = dir.join(format!(".{}.ptx-opt-{}.tmp", file_name.to_string_lossy(), std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
