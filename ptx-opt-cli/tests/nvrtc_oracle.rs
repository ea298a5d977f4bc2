//! `ptx-opt run` against an independent oracle: CUDA kernels (32- and 64-bit
//! integer intrinsics, f32 and f64 arithmetic in every rounding mode with and
//! without `-ftz`, conversions between floats, integers, f16 and bf16, half
//! arithmetic, recursion and other control flow, warp collectives, shared
//! memory, atomics, a double-buffered `cp.async` pipeline, tensor-core
//! `mma.sync` and `ldmatrix`) compiled by
//! NVIDIA's NVRTC for several targets, run by the command, and compared
//! element by element with references computed in Python with exact
//! rational arithmetic (`tests/oracle/run.py`).
//!
//! NVRTC is installed by `tools/setup-nvrtc.sh` (PyPI wheel, no GPU); when it
//! cannot be had the test fails, it never passes silently. `NVRTC_LIB` names
//! an existing installation instead.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn nvrtc_lib() -> String {
    if let Ok(dir) = std::env::var("NVRTC_LIB") {
        return dir;
    }
    let out = Command::new(repo().join("tools/setup-nvrtc.sh")).arg("--quiet").output().expect("cannot run tools/setup-nvrtc.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "tools/setup-nvrtc.sh failed (NVRTC is needed for this test; it needs python3, pip and PyPI):\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("export NVRTC_LIB='").and_then(|l| l.strip_suffix('\'')))
        .unwrap_or_else(|| panic!("tools/setup-nvrtc.sh printed no NVRTC_LIB: {stdout}"))
        .to_string()
}

#[test]
fn run_matches_an_independent_reference_on_nvrtc_kernels() {
    let work = std::env::temp_dir().join(format!("ptx-opt-nvrtc-oracle-{}", std::process::id()));
    let out = Command::new("python3")
        .arg(repo().join("tests/oracle/run.py"))
        .args(["--ptx-opt", env!("CARGO_BIN_EXE_ptx-opt"), "--nvrtc-lib", &nvrtc_lib(), "--work"])
        .arg(&work)
        .output()
        .expect("cannot run python3");
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    println!("{report}");
    let _ = std::fs::remove_dir_all(&work);
    assert!(out.status.success(), "outputs differ from the reference:\n{report}");
    // Every variant ran and was compared.
    assert_eq!(report.lines().filter(|l| l.contains("outputs match")).count(), 34, "{report}");
}
