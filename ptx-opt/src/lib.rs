//! ptx-opt: the PTX optimizer library and the `ptx-opt` command.
//!
//! The one-shot path is three calls: [`ptx_ir::parse`], [`optimize`],
//! [`ptx_print::print_module`]. At `-O0` the pipeline is empty: the module is
//! printed back as parsed.
//!
//! ```
//! let text = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() { ret; }\n";
//! let parsed = ptx_ir::parse("k.ptx", text.as_bytes()).unwrap();
//! let module = ptx_opt::optimize(parsed.module, ptx_opt::OptLevel::O0);
//! let out = ptx_print::print_module(&module);
//! assert!(out.contains(".entry k()"));
//! ```

pub mod cli;
pub mod db;

use ptx_ir::ir::{Function, Item, Module};

/// Optimization level, as `-O0` .. `-O3` on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OptLevel {
    O0,
}

/// Runs the pass pipeline of `level` over a module: each function on its own.
pub fn optimize(mut module: Module, level: OptLevel) -> Module {
    if level == OptLevel::O0 {
        return module;
    }
    for item in &mut module.items {
        if let Item::Func(f) = item {
            **f = optimize_function(f, level);
        }
    }
    module
}

/// Runs the pass pipeline of `level` over one function, giving a new one
/// (the input is not changed, so the incremental database can keep it).
pub fn optimize_function(f: &Function, level: OptLevel) -> Function {
    match level {
        OptLevel::O0 => f.clone(),
    }
}
