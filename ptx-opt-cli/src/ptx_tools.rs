//! Where NVIDIA's ptxas is, for `ptx-opt check`: as `tools/sass-report`
//! and the test suite find it. ptxas: `$PTXAS`, then
//! `~/.cache/ptx-opt-tools/bin/ptxas` (`$PTX_TOOLS_DIR/bin` when set),
//! `~/.cache/ptx-tools/bin/ptxas`, then `PATH`; a CUDA 13 ptxas for
//! `.version`s the first one refuses: `$PTXAS13`, or `ptxas13` beside it.

use std::path::{Path, PathBuf};

/// The assemblers found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assemblers {
    pub ptxas: PathBuf,
    /// A newer ptxas to retry with when `ptxas` does not know the `.version` or target.
    pub ptxas13: Option<PathBuf>,
}

/// How to get the tools, for the error when they are missing.
pub const INSTALL_HINT: &str = "install it with `tools/setup-ptx-tools.sh` (from the ptx-opt repository; NVIDIA's wheels from PyPI into ~/.cache/ptx-opt-tools), or set PTXAS to a ptxas binary";

fn executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn from_env(var: &str) -> Option<PathBuf> {
    std::env::var_os(var).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// The directories searched after `$PTXAS`, in order.
fn tool_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let home = from_env("HOME");
    match from_env("PTX_TOOLS_DIR") {
        Some(d) => dirs.push(d.join("bin")),
        None => dirs.extend(home.iter().map(|h| h.join(".cache/ptx-opt-tools/bin"))),
    }
    dirs.extend(home.iter().map(|h| h.join(".cache/ptx-tools/bin")));
    dirs.extend(std::env::var_os("PATH").iter().flat_map(std::env::split_paths));
    dirs
}

/// The assemblers, or a message saying what is missing and how to install it.
pub fn locate() -> Result<Assemblers, String> {
    let ptxas = match from_env("PTXAS") {
        Some(p) if executable(&p) => p,
        Some(p) => return Err(format!("PTXAS is `{}`, which is not an executable file; {INSTALL_HINT}", p.display())),
        None => tool_dirs().into_iter().map(|d| d.join("ptxas")).find(|p| executable(p)).ok_or_else(|| format!("ptxas is not installed; {INSTALL_HINT}"))?,
    };
    let beside = ptxas.parent().map(|d| d.join("ptxas13"));
    let ptxas13 = from_env("PTXAS13").or(beside).filter(|p| executable(p));
    Ok(Assemblers { ptxas, ptxas13 })
}
