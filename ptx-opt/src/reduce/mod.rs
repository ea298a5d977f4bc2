//! The test-case reducer: shrinks a PTX module while an *interestingness
//! test* keeps holding on it, in the manner of C-Reduce and spirv-reduce.
//!
//! The test is a closure over the printed PTX text (`true`: still
//! interesting). It may grep the text ("contains `mul.wide.u32`"), run the
//! reference interpreter ("kernel `k` stores a nonzero value"), or run a
//! command (the `ptx-opt reduce --test CMD` of the command package: `CMD
//! FILE`, interesting when it exits with status 0). The library spawns
//! nothing.
//!
//! ```
//! use ptx_opt::reduce::{reduce_source, ReduceOptions};
//! let text = ".version 8.0\n.target sm_80\n.address_size 64\n\
//!     .visible .entry k(.param .u64 p) {\n.reg .b32 %r<4>;\n.reg .b64 %rd<2>;\n\
//!     mov.u32 %r1, %tid.x;\nadd.s32 %r2, %r1, 7;\nmul.lo.s32 %r3, %r2, %r1;\n\
//!     ld.param.u64 %rd1, [p];\nst.global.u32 [%rd1], %r3;\nret;\n}\n";
//! let mut test = |ptx: &str| ptx.contains("mul.lo.s32");
//! let reduced = reduce_source("k.ptx", text.as_bytes(), &mut test, &ReduceOptions::default(), &mut |_| {}).unwrap();
//! assert!(reduced.text.contains("mul.lo.s32"));
//! assert!(reduced.after.instructions < reduced.before.instructions);
//! ```
//!
//! # How
//!
//! Every candidate is made on the IR by one *family* of reductions
//! ([`family`]), printed, parsed back and verified: a candidate that is not
//! a valid module is skipped (and counted) before the test ever sees it, so
//! the result is always valid PTX. The families, in the order each round
//! tries them:
//!
//! | family | change |
//! |---|---|
//! | `drop-debug` | `.file`, `.section`, `@@DWARF`, `.pragma`, `.loc`, function header directives, `.target` options (`debug`) |
//! | `drop-items` | functions, kernels, variables, aliases nothing names |
//! | `drop-items-with-uses` | a named item with every statement and item naming it |
//! | `drop-branches` | branch instructions |
//! | `drop-guards` | `@p` / `@!p` (a conditional branch becomes unconditional) |
//! | `drop-instructions` | any instruction |
//! | `drop-scopes` | the braces of a `{ }` block |
//! | `drop-unused-decls` | declarations nothing names |
//! | `drop-unused-labels` | labels nothing names |
//! | `to-constant-0`, `to-constant-1` | a register source becomes the immediate 0 or 1 |
//! | `drop-unused-params` | parameters nothing names |
//! | `shrink-reg-ranges` | `.reg .b32 %r<31>` to one past the highest `%rN` named |
//!
//! Each family offers its changes all at once, then in halves, quarters
//! ... down to one at a time ([`search`]); rounds repeat until one changes
//! nothing. Every accepted candidate weighs strictly less (fewer items,
//! statements, parameters, register references or declared registers), so the search ends;
//! nothing depends on hashing order or time, so the same input and test
//! give the same output.
//!
//! # Files
//!
//! `check.rs` (validity, sizes, weight), `sites.rs` (places to change,
//! what bodies name, removal), `family/` (the reductions), `search.rs`
//! (the driver).

mod check;
mod family;
mod search;
mod sites;
#[cfg(test)]
mod tests;

pub use check::Size;

use ptx_ir::ir::Module;
use ptx_ir::source::Diagnostic;
use std::fmt;

/// Limits of a reduction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReduceOptions {
    /// Stop after running the test this many times (the check of the
    /// input, which always runs, included); `None`: no limit. The result is then the
    /// smallest module found so far, with [`Reduced::stopped_early`] set.
    pub max_tests: Option<u64>,
    /// Most rounds of all families (each round but the last shrinks the module).
    pub max_rounds: u32,
}

impl Default for ReduceOptions {
    fn default() -> ReduceOptions {
        ReduceOptions { max_tests: None, max_rounds: 100 }
    }
}

/// Where a reduction is, for a progress display.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    /// The round (1, 2 ...); 0 for the check of the input.
    pub round: u32,
    /// The family being tried (`drop-instructions`), or `input`.
    pub step: &'static str,
    /// The size of the smallest interesting module so far.
    pub size: Size,
    pub tests_run: u64,
    /// Candidates accepted so far.
    pub accepted: u64,
}

/// The result of a reduction.
#[derive(Clone, Debug)]
pub struct Reduced {
    /// The smallest interesting module found.
    pub module: Module,
    /// Its text, as the test last saw it.
    pub text: String,
    /// The printed input's size.
    pub before: Size,
    pub after: Size,
    /// Times the test ran (the input's check included).
    pub tests_run: u64,
    /// Candidates that became the current module.
    pub accepted: u64,
    /// Candidates skipped because they did not parse back or verify.
    pub invalid_candidates: u64,
    /// Candidates skipped because the same text was tried before.
    pub repeated_candidates: u64,
    pub rounds: u32,
    /// The test limit stopped the search before a fixed point.
    pub stopped_early: bool,
}

/// Why there is no reduction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReduceError {
    /// The input is not valid PTX: the parse error, or the verifier's
    /// diagnostics (errors and warnings). For [`reduce`], the diagnostics
    /// of the module printed back.
    InvalidInput(Vec<Diagnostic>),
    /// The test does not hold on the (printed) input.
    NotInteresting,
}

impl fmt::Display for ReduceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReduceError::InvalidInput(diags) => {
                write!(f, "the input is not valid PTX")?;
                match diags.iter().find(|d| d.is_error()) {
                    Some(d) => write!(f, ": {d}"),
                    None => Ok(()),
                }
            }
            ReduceError::NotInteresting => write!(f, "the test does not hold on the input"),
        }
    }
}

impl std::error::Error for ReduceError {}

/// Shrinks `module` while `is_interesting` holds on its printed text.
///
/// The module is printed first; that text must parse back, verify, and be
/// interesting, or there is an error. `progress` is called when each
/// family starts and after each accepted candidate.
pub fn reduce(module: &Module, is_interesting: &mut dyn FnMut(&str) -> bool, options: &ReduceOptions, progress: &mut dyn FnMut(&Progress)) -> Result<Reduced, ReduceError> {
    let text = ptx_print::print_module(module);
    let (parsed, _warnings) = ptx_ir::verify::parse_and_verify(check::CANDIDATE_FILE, text.as_bytes()).map_err(ReduceError::InvalidInput)?;
    let start = parsed.module;
    let before = Size::of(&start, &text);
    progress(&Progress { round: 0, step: "input", size: before, tests_run: 0, accepted: 0 });
    if !is_interesting(&text) {
        return Err(ReduceError::NotInteresting);
    }
    let mut s = search::Search::new(start, text, is_interesting, progress, options);
    s.counts.tests_run = 1;
    s.run();
    let after = Size::of(&s.current, &s.text);
    let c = s.counts;
    Ok(Reduced {
        module: s.current,
        text: s.text,
        before,
        after,
        tests_run: c.tests_run,
        accepted: c.accepted,
        invalid_candidates: c.invalid,
        repeated_candidates: c.repeated,
        rounds: c.rounds,
        stopped_early: c.out_of_tests,
    })
}

/// [`reduce`] from PTX source: parses and verifies `text` (named `file` in
/// diagnostics) first; a parse error or verifier error is
/// [`ReduceError::InvalidInput`] with the input's own positions.
pub fn reduce_source(file: &str, text: &[u8], is_interesting: &mut dyn FnMut(&str) -> bool, options: &ReduceOptions, progress: &mut dyn FnMut(&Progress)) -> Result<Reduced, ReduceError> {
    let (parsed, _warnings) = ptx_ir::verify::parse_and_verify(file, text).map_err(ReduceError::InvalidInput)?;
    reduce(&parsed.module, is_interesting, options, progress)
}
