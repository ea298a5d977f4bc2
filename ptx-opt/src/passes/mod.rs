//! The passes and the pipeline of each optimization level. One file per
//! pass; a pass takes a function and gives the optimized function, or
//! `None` when it changes nothing (some also edit in place: [`Pass::edit`]).
//! [`manager`] runs them (analyses kept
//! between passes, bisection, printing, validation and timing);
//! [`analyses`] is the cache of what passes share.

pub mod address_space;
pub mod alignment;
pub mod analyses;
pub mod body;
pub mod compact_regs;
pub mod copy_prop;
pub mod dce;
pub mod dead_decls;
pub mod div_bypass;
pub mod egraph;
pub mod fold_offsets;
pub mod load_forward;
pub mod manager;
pub mod memory;
pub mod operands;
pub mod promote_local;
pub mod sccp;
pub mod simplify_cfg;
pub mod slsr;
pub mod store_elim;
pub mod vectorize;

pub use analyses::{Analyses, Preserves};
pub use manager::{Observer, PassFailure, PassTiming, Pipeline, PARALLEL_MIN_STATEMENTS};

use crate::{ModuleContext, OptLevel};
use ptx_ir::ir::Function;

/// A function-level pass.
pub struct Pass {
    pub name: &'static str,
    /// One line, for `--list-passes`.
    pub description: &'static str,
    /// The changed function, or `None` when the pass changes nothing. The
    /// analyses are those of the function given.
    pub run: fn(&Function, &mut Analyses, &ModuleContext, OptLevel) -> Option<Function>,
    /// What a change by this pass leaves valid.
    pub preserves: Preserves,
    /// The in-place form, for passes that have one ([`Edit`]); it gives the
    /// function `run` gives.
    pub edit: Option<Edit>,
}

/// A pass's in-place form: edits the function (the one its analyses are
/// of) and says whether it changed it; one that says no left it as it was.
/// The pass manager runs a pass this way when it has one ([`Pass::edit`]),
/// on its own copy of the function: a change then costs no copy of the
/// whole function (each `run` that changes something builds a new one).
pub type Edit = fn(&mut Function, &mut Analyses, &ModuleContext, OptLevel) -> bool;

/// Every pass, by name, in the order `--list-passes` shows them.
pub const PASSES: &[Pass] = &[
    promote_local::PASS,
    address_space::PASS,
    copy_prop::PASS,
    sccp::PASS,
    load_forward::PASS,
    store_elim::PASS,
    slsr::PASS,
    vectorize::PASS,
    fold_offsets::PASS,
    egraph::PASS,
    dce::PASS,
    simplify_cfg::PASS,
    dead_decls::PASS,
    compact_regs::PASS,
    div_bypass::PASS,
];

/// The passes of a level, in order: the one place pipelines are written.
///
/// - `-O1`: cheap clean-up: stack slots to registers, the e-graph with small
///   limits, dead code, branches and declarations.
/// - `-O2`: everything that never made a corpus kernel worse in SASS
///   instructions or registers.
/// - `-O3`: `-O2` with the e-graph's largest limits and -O3-only rules,
///   plus the 64-bit division fast path; run to a fixed point
///   ([`rounds`]).
///
/// `slsr` is `-O3` only: on its golden kernel it saved no SASS instruction
/// and cost two registers (38/22 → 38/24), though it saves three of 26 on
/// four unrolled rows feeding loads.
/// `fold-offsets` and `compact-regs` are in no pipeline: measured, they
/// cost registers on corpus kernels (their module docs say which).
pub fn pipeline(level: OptLevel) -> &'static [&'static str] {
    match level {
        OptLevel::O0 => &[],
        OptLevel::O1 => &["promote-local", "copy-prop", "sccp", "load-forward", "store-elim", "egraph", "dce", "simplify-cfg", "dead-decls"],
        OptLevel::O2 => &["promote-local", "copy-prop", "sccp", "address-space", "load-forward", "store-elim", "vectorize", "egraph", "dce", "simplify-cfg", "dead-decls"],
        OptLevel::O3 => &["promote-local", "copy-prop", "sccp", "address-space", "load-forward", "store-elim", "slsr", "vectorize", "egraph", "dce", "simplify-cfg", "div-bypass", "dead-decls"],
    }
}

/// How many times a level's pipeline may run over a function: `-O3` runs
/// it again while a round changes something (each pass can expose work for
/// the ones before it: a branch folded makes a block dead, a slot promoted
/// makes an address constant).
pub fn rounds(level: OptLevel) -> usize {
    if level == OptLevel::O3 {
        4
    } else {
        1
    }
}

/// Looks a pass up by name.
pub fn by_name(name: &str) -> Option<&'static Pass> {
    PASSES.iter().find(|p| p.name == name)
}

/// Runs the named passes, in order, over every function of a module (each
/// pass at the level's limits). An unknown name is an error naming it.
pub fn run_named(module: ptx_ir::ir::Module, names: &[&str], level: OptLevel) -> Result<ptx_ir::ir::Module, String> {
    let pipeline = Pipeline::named(names, level)?;
    Ok(pipeline.run_module(module, &mut Observer::default()))
}

/// Runs the level's pipeline over a function.
pub fn run_pipeline(f: &Function, ctx: &ModuleContext, level: OptLevel) -> Function {
    Pipeline::of_level(level).run_function(f, ctx, &mut Observer::default())
}
