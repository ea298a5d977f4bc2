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

use ptx_ir::ir::Module;

/// Optimization level, as `-O0` .. `-O3` on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OptLevel {
    O0,
}

/// Runs the pass pipeline of `level` over a module.
pub fn optimize(module: Module, level: OptLevel) -> Module {
    match level {
        OptLevel::O0 => module,
    }
}
