//! The `ptx-opt` command as a library: what the binary (`src/main.rs`) runs
//! ([`command::parse`], then [`command::run`]; [`command::main_with`] is
//! both, for tests), and what the spec tests (`ptx-tests`) call to
//! run a kernel as `ptx-opt run` does ([`run_cmd::run_text`]). Compilers
//! that optimize PTX depend on the `ptx-opt` library instead, which
//! compiles none of this (no clap, terminal output, JSON or allocator).
//!
//! The parts: [`args`] (the grammar), [`command`] (dispatch),
//! [`usage_error`]; the optimize command [`optimize_cmd`] over
//! [`optimize_one`], with [`batch_inputs`] and [`batch`] for many files,
//! [`stats`] (`--stats`) and [`remarks`] (`--remarks`);
//! `run`: [`run_cmd`], [`launch_args`], [`texture_args`], [`tensor_map_args`], [`param_check`], [`buffers_json`];
//! `reduce`: [`reduce_cmd`], [`reduce_test_cmd`] (the test command run on each candidate: process spawning stays out of the library); `check`: [`check_cmd`], [`sass`] (ptxas runs
//! and SASS counts), [`ptx_tools`] (where ptxas is);
//! shared: [`diagnostics`], [`input`], [`output_file`].

pub mod args;
pub mod batch;
pub mod batch_inputs;
pub mod buffers_json;
pub mod check_cmd;
pub mod command;
pub mod diagnostics;
pub mod input;
pub mod launch_args;
pub mod optimize_cmd;
pub mod optimize_one;
pub mod output_file;
pub mod param_check;
pub mod ptx_tools;
pub mod reduce_cmd;
pub mod reduce_test_cmd;
pub mod remarks;
pub mod run_cmd;
pub mod sass;
pub mod stats;
pub mod tensor_map_args;
pub mod texture_args;
pub mod usage_error;

/// Exit status for success.
pub const EXIT_OK: i32 = 0;
/// Exit status for invalid input (diagnostics on stderr; nothing written
/// for it; with many files: any file failed).
pub const EXIT_INVALID: i32 = 1;
/// Exit status for usage errors.
pub const EXIT_USAGE: i32 = 2;
