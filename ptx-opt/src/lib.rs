//! ptx-opt: the PTX optimizer library (the `ptx-opt` command is the
//! `ptx-opt-cli` package, so that a compiler depending on this library
//! builds no argument parser, terminal output or allocator).
//!
//! Two ways to use it:
//!
//! **One shot** (command-line tools, compilers emitting a module once):
//! [`optimize_checked`] parses, verifies and optimizes; then
//! [`ptx_print::print_module`]. The optimizer reasons only about verified
//! input: a module the verifier rejects (a `.b64` register where
//! `mad.lo.s32` wants 32 bits, an unknown `.target` ...) comes back as its
//! diagnostics. At `-O0` the pipeline is empty: the module is printed back as
//! parsed.
//!
//! ```
//! let text = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() { ret; }\n";
//! let checked = ptx_opt::optimize_checked("k.ptx", text.as_bytes(), ptx_opt::OptLevel::O2).unwrap();
//! let out = ptx_print::print_module(&checked.module);
//! assert!(out.contains(".entry k()"));
//!
//! let bad = ".version 8.0\n.target sm_200\n.visible .entry k() { ret; }\n";
//! let errors = ptx_opt::optimize_checked("bad.ptx", bad.as_bytes(), ptx_opt::OptLevel::O0).unwrap_err();
//! assert_eq!((errors[0].line, errors[0].col), (2, 9));
//! ```
//!
//! Callers that verified the module already (or built it with the checked
//! constructors and know it is valid) call [`optimize`] directly.
//!
//! **Incremental** (JITs, IDEs, build tools that see a module change a
//! little at a time): the salsa [`db::Database`] keeps every function's parse,
//! analyses, optimized IR and text, and recomputes only the functions whose
//! text changed.
//!
//! ```
//! use ptx_opt::{db::Database, OptLevel};
//! let text = ".version 8.0\n.target sm_80\n.entry a() { ret; }\n.entry b() { ret; }\n";
//! let mut db = Database::default();
//! let file = db.add_file("k.ptx", text, OptLevel::O0);
//! let before = db.printed(file).unwrap();
//! // An editor reports a change of bytes 45..48 (`ret` in `b`): only `b` is redone.
//! let at = text.rfind("ret").unwrap();
//! db.edit(file, at..at + 3, "exit").unwrap();
//! let after = db.printed(file).unwrap();
//! assert!(before.contains("ret;") && after.contains("exit;"));
//! ```
//!
//! The optimizer's parts: [`values`] (which definition each register read
//! sees), [`engine`] (the e-graph engine), [`rules`] (its rewrite rules,
//! with a rulebook), [`passes`] (the pass pipeline per level).

pub mod cost;
pub mod db;
pub mod engine;
pub mod lower;
pub mod passes;
pub mod reduce;
pub mod rules;
pub mod values;

use ptx_ir::ir::{Function, Module, Version};
use ptx_ir::source::Diagnostic;

/// Optimization level, as `-O0` .. `-O3` on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OptLevel {
    /// Parse, validate, print: no optimization.
    O0,
    /// The e-graph engine with small limits.
    O1,
    /// The e-graph engine: never more SASS instructions or registers on
    /// the corpus (the level compiler back ends should use).
    O2,
    /// The largest e-graph limits, and the 32-bit fast path of 64-bit
    /// division (`div-bypass`: faster when the operands fit 32 bits, more
    /// static instructions, possibly more registers).
    O3,
}

/// What the passes need to know about the module a function is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModuleContext {
    pub version: Version,
    /// The `sm_NN` number of the first `.target` (0 when there is none).
    pub sm: u32,
    pub dialect: ptx_ir::eval::Dialect,
    /// `.address_size` (32 when not written, as the manual says).
    pub address_size: u32,
}

impl ModuleContext {
    pub fn of_module(m: &Module) -> ModuleContext {
        ModuleContext::new(m.version, &m.target, m.address_size)
    }

    /// From a module's `.version`, `.target` list and `.address_size`.
    pub fn new(version: Version, target: &[ptx_ir::ir::Name], address_size: Option<u32>) -> ModuleContext {
        let head = Module { version, target: target.to_vec(), address_size, items: Vec::new() };
        let sm = ptx_ir::verify::Target::of_module(&head).map_or(0, |t| t.number);
        ModuleContext { version, sm, dialect: ptx_ir::eval::Dialect::of_module(&head), address_size: address_size.unwrap_or(32) }
    }
}

/// A verified and optimized module, with the verifier's warnings.
#[derive(Clone, Debug)]
pub struct Checked {
    pub module: Module,
    pub warnings: Vec<Diagnostic>,
}

/// Parses `text` (named `file` in diagnostics), verifies it and runs the
/// pass pipeline of `level`: the optimized module and the verifier's
/// warnings, or the diagnostics (a parse error, or the verifier's errors
/// and warnings in source order) when the input is not valid PTX.
pub fn optimize_checked(file: &str, text: &[u8], level: OptLevel) -> Result<Checked, Vec<Diagnostic>> {
    let (parsed, warnings) = ptx_ir::verify::parse_and_verify(file, text)?;
    Ok(Checked { module: optimize(parsed.module, level), warnings })
}

/// Runs the pass pipeline of `level` over a module: each function on its own.
/// The module must be one the verifier accepts (`ptx_ir::verify::verify`
/// without errors): the passes assume well-typed operands and targets that
/// exist. [`optimize_checked`] verifies first.
pub fn optimize(module: Module, level: OptLevel) -> Module {
    passes::Pipeline::of_level(level).run_module(module, &mut passes::Observer::default())
}

/// Runs the pass pipeline of `level` over one function, giving a new one
/// (the input is not changed, so the incremental database can keep it).
pub fn optimize_function(f: &Function, ctx: &ModuleContext, level: OptLevel) -> Function {
    passes::run_pipeline(f, ctx, level)
}
