//! Reading one PTX input: a file, or standard input (`-` or no path), with
//! the name diagnostics give it, and clear errors (a directory is named as
//! one, not as an operating system error).

use std::io::Read;
use std::path::Path;

/// The bytes of an input and the name diagnostics use for it.
pub struct Input {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// Reads `path` (standard input when `None` or `-`); `Err` is the message.
pub fn read(path: Option<&Path>, stdin: &mut dyn Read) -> Result<Input, String> {
    match path.filter(|p| p.as_os_str() != "-") {
        Some(p) if p.is_dir() => Err(format!("`{}` is a directory, not a PTX file", p.display())),
        Some(p) => match std::fs::read(p) {
            Ok(bytes) => Ok(Input { name: p.display().to_string(), bytes }),
            Err(e) => Err(format!("cannot read `{}`: {e}", p.display())),
        },
        None => {
            let mut bytes = Vec::new();
            stdin.read_to_end(&mut bytes).map_err(|e| format!("cannot read standard input: {e}"))?;
            Ok(Input { name: "<stdin>".to_string(), bytes })
        }
    }
}
