//! The passes and the pipeline of each optimization level. One file per
//! pass; a pass takes a function and gives the optimized function, or
//! `None` when it changes nothing.

pub mod address_space;
pub mod div_bypass;
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
pub const PASSES: &[Pass] = &[address_space::PASS, egraph::PASS, div_bypass::PASS];

/// The passes of a level, in order.
pub fn pipeline(level: OptLevel) -> &'static [&'static str] {
    match level {
        OptLevel::O0 => &[],
        OptLevel::O1 => &["address-space", "egraph"],
        OptLevel::O2 => &["address-space", "egraph"],
        OptLevel::O3 => &["address-space", "egraph", "div-bypass"],
    }
}

/// Looks a pass up by name.
pub fn by_name(name: &str) -> Option<&'static Pass> {
    PASSES.iter().find(|p| p.name == name)
}

/// Runs the named passes, in order, over every function of a module (each
/// pass at the level's limits). An unknown name is an error naming it.
pub fn run_named(mut module: ptx_ir::ir::Module, names: &[&str], level: OptLevel) -> Result<ptx_ir::ir::Module, String> {
    let passes: Vec<&Pass> = names.iter().map(|n| by_name(n).ok_or_else(|| format!("unknown pass `{n}` (passes: {})", PASSES.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")))).collect::<Result<_, _>>()?;
    let ctx = ModuleContext::of_module(&module);
    for item in &mut module.items {
        if let ptx_ir::ir::Item::Func(f) = item {
            for pass in &passes {
                if let Some(g) = (pass.run)(f, &ctx, level) {
                    **f = g;
                }
            }
        }
    }
    Ok(module)
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
