//! The `ptx-opt` command as a library: what the binary (`src/main.rs`) runs,
//! and what the spec tests (`ptx-tests`) call to run a kernel as
//! `ptx-opt run` does. Compilers that optimize PTX depend on the `ptx-opt`
//! library instead, which compiles none of this.

pub mod optimize_cmd;
pub mod run_cmd;

/// Exit status for success.
pub const EXIT_OK: i32 = 0;
/// Exit status for invalid input (diagnostics on stderr, nothing written).
pub const EXIT_INVALID: i32 = 1;
/// Exit status for usage errors.
pub const EXIT_USAGE: i32 = 2;
