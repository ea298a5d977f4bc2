//! The passes and the pipeline of each optimization level. One file per
//! pass; a pass takes a function and gives the optimized function, or
//! `None` when it changes nothing.

pub mod egraph;

use crate::{ModuleContext, OptLevel};
use ptx_ir::ir::Function;

/// A function-level pass.
pub struct Pass {
    pub name: &'static str,
    pub description: &'static str,
    pub run: fn(&Function, &ModuleContext, OptLevel) -> Option<Function>,
}

/// Every pass, by name.
pub const PASSES: &[Pass] = &[egraph::PASS];

/// The passes of a level, in order.
pub fn pipeline(level: OptLevel) -> &'static [&'static str] {
    match level {
        OptLevel::O0 => &[],
        OptLevel::O1 | OptLevel::O2 | OptLevel::O3 => &["egraph"],
    }
}

/// Looks a pass up by name.
pub fn by_name(name: &str) -> Option<&'static Pass> {
    PASSES.iter().find(|p| p.name == name)
}

/// Runs the level's pipeline over a function.
pub fn run_pipeline(f: &Function, ctx: &ModuleContext, level: OptLevel) -> Function {
    let mut cur: Option<Function> = None;
    for name in pipeline(level) {
        let pass = by_name(name).expect("pipelines name existing passes");
        if let Some(g) = (pass.run)(cur.as_ref().unwrap_or(f), ctx, level) {
            cur = Some(g);
        }
    }
    cur.unwrap_or_else(|| f.clone())
}
