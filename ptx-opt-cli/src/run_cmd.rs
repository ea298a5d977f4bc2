//! `ptx-opt run`: runs a kernel on the reference interpreter and prints the
//! buffers as JSON ([`crate::buffers_json`]).
//!
//! The module is verified first (as by `ptx-opt`): a verifier error stops
//! the run, warnings are printed; `--no-verify` skips that. The `--arg`s
//! are checked against the kernel's parameters ([`crate::param_check`])
//! before the run. Every error the command writes starts with
//! `ptx-opt run:`. The options are [`RunArgs`]; the spec tests parse a
//! `// RUN:` line with [`parse_run_args`] and run it with [`run_text`].

use crate::args::RunArgs;
use crate::diagnostics::Reporter;
use crate::launch_args::ArgSpec;
use crate::usage_error::usage_line;
use crate::{EXIT_INVALID, EXIT_OK, EXIT_USAGE};
use clap::{Args, FromArgMatches};
use ptx_ir::interp::{KernelArg, Launch, RunError};
use ptx_ir::source::{Diagnostic, Severity};
use std::io::{Read, Write};

/// The options of `ptx-opt run`, under the name the spec tests use.
pub type RunOptions = RunArgs;

/// Parses the arguments after `run` (as a `// RUN:` line writes them).
pub fn parse_run_args(args: &[String]) -> Result<RunArgs, String> {
    let cmd = RunArgs::augment_args(clap::Command::new("ptx-opt run").no_binary_name(true));
    let matches = cmd.try_get_matches_from(args).map_err(|e| crate::usage_error::from_clap("ptx-opt run", &e).lines().next().unwrap_or_default().to_string())?;
    RunArgs::from_arg_matches(&matches).map_err(|e| e.to_string())
}

/// Why a run gave no buffers.
#[derive(Debug)]
pub enum RunFailure {
    /// The parse error, or the verifier's errors and warnings.
    Invalid(Vec<Diagnostic>),
    /// The `--arg`s do not fit the kernel's parameters.
    Arguments(String),
    /// The interpreter stopped (unknown kernel, fault, deadlock, trap ...).
    Run(RunError),
}

/// What a run gave.
#[derive(Debug)]
pub struct RunOutput {
    /// The buffers and what the kernel printed ([`crate::buffers_json::run_json`]).
    pub json: String,
    /// The verifier's warnings.
    pub warnings: Vec<Diagnostic>,
    /// Set when the execution depended on a value that is not exactly
    /// determined: the buffers show one possible execution.
    pub unspecified: Option<String>,
}

/// Parses and verifies `bytes` (named `name` in diagnostics), checks the
/// arguments and runs the kernel `o` names.
pub fn run_kernel(name: &str, bytes: &[u8], o: &RunArgs) -> Result<RunOutput, RunFailure> {
    let (parsed, warnings) = if o.no_verify {
        (ptx_ir::parse(name, bytes).map_err(|d| RunFailure::Invalid(vec![d]))?, Vec::new())
    } else {
        ptx_ir::verify::parse_and_verify(name, bytes).map_err(RunFailure::Invalid)?
    };
    crate::param_check::check_args(&parsed.module, &o.kernel, &o.args).map_err(RunFailure::Arguments)?;
    let mut launch = Launch::new(&o.kernel, o.grid.0, o.block.0);
    launch.max_steps = o.max_steps;
    launch.dynamic_shared = o.dynamic_shared;
    let mut types = Vec::new();
    for a in &o.args {
        match a {
            ArgSpec::Scalar { ty, bits } => launch.args.push(KernelArg::Scalar { ty: *ty, bits: *bits }),
            ArgSpec::Bytes(b) => launch.args.push(KernelArg::Bytes(b.clone())),
            ArgSpec::Buffer { ty, bytes } => {
                launch.args.push(KernelArg::Buffer(launch.buffers.len()));
                launch.buffers.push(bytes.clone());
                types.push((launch.args.len() - 1, *ty));
            }
            // Bound below, once every buffer has its index.
            ArgSpec::Resource(_) | ArgSpec::TensorMap(_) => launch.args.push(KernelArg::Bytes(Vec::new())),
        }
    }
    crate::texture_args::bind(&mut launch, o).map_err(RunFailure::Arguments)?;
    crate::tensor_map_args::bind(&mut launch, o).map_err(RunFailure::Arguments)?;
    let out = ptx_ir::interp::run(&parsed.module, &parsed.source_map, name, bytes, &launch).map_err(RunFailure::Run)?;
    Ok(RunOutput { json: crate::buffers_json::run_json(&types, &out), warnings, unspecified: out.depends_on_unspecified.map(|w| format!("{w}; the buffers show one possible execution")) })
}

/// [`run_kernel`] as text, for the spec tests: the JSON and the warnings
/// (`file:line:col: warning: ...` lines), or the error lines.
pub fn run_text(name: &str, bytes: &[u8], o: &RunArgs) -> Result<(String, Option<String>), String> {
    let lines = |ds: &[Diagnostic]| ds.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n");
    match run_kernel(name, bytes, o) {
        Ok(out) => {
            let mut warnings: Vec<String> = out.warnings.iter().map(|d| d.to_string()).collect();
            warnings.extend(out.unspecified.map(|w| format!("warning: {w}")));
            Ok((out.json, if warnings.is_empty() { None } else { Some(warnings.join("\n")) }))
        }
        Err(RunFailure::Invalid(ds)) => Err(lines(&ds)),
        Err(RunFailure::Arguments(m)) => Err(format!("error: {m}")),
        Err(RunFailure::Run(e)) => Err(e.to_string()),
    }
}

/// Runs `ptx-opt run`; returns the exit status.
pub fn run(o: &RunArgs, stdin: &mut dyn Read, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    let reporter = Reporter::new(&o.report, "ptx-opt run");
    let Some(path) = &o.input else {
        let _ = stderr.write_all(usage_line("ptx-opt run", "which PTX file? give INPUT, a path (or `-` for standard input)").as_bytes());
        return EXIT_USAGE;
    };
    let input = match crate::input::read(Some(std::path::Path::new(path)), stdin) {
        Ok(i) => i,
        Err(m) => {
            let _ = stderr.write_all(reporter.message(path, Severity::Error, &m).as_bytes());
            return EXIT_INVALID;
        }
    };
    let out = match run_kernel(&input.name, &input.bytes, o) {
        Ok(out) => out,
        Err(failure) => {
            let text = match failure {
                RunFailure::Invalid(ds) => reporter.diagnostics(&ds, &input.bytes),
                RunFailure::Arguments(m) => reporter.message(&input.name, Severity::Error, &m),
                RunFailure::Run(RunError::Launch(m)) => reporter.message(&input.name, Severity::Error, &m),
                RunFailure::Run(e) => reporter.message(&input.name, Severity::Error, &e.to_string()),
            };
            let _ = stderr.write_all(text.as_bytes());
            return EXIT_INVALID;
        }
    };
    let mut warnings = reporter.diagnostics(&out.warnings, &input.bytes);
    if let Some(w) = &out.unspecified {
        warnings.push_str(&reporter.message(&input.name, Severity::Warning, w));
    }
    let _ = stderr.write_all(warnings.as_bytes());
    match &o.out_json {
        Some(path) => {
            if let Err(e) = crate::output_file::write_atomically(path, out.json.as_bytes()) {
                let _ = stderr.write_all(reporter.message(&path.display().to_string(), Severity::Error, &format!("cannot write `{}`: {e}", path.display())).as_bytes());
                return EXIT_INVALID;
            }
        }
        None => {
            if let Err(e) = stdout.write_all(out.json.as_bytes()).and_then(|_| stdout.flush()) {
                let _ = stderr.write_all(reporter.message("", Severity::Error, &format!("cannot write standard output: {e}")).as_bytes());
                return EXIT_INVALID;
            }
        }
    }
    EXIT_OK
}
