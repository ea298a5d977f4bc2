//! ptx-opt: the PTX optimizer library and the `ptx-opt` command.
//!
//! Two ways to use it:
//!
//! **One shot** (command-line tools, compilers emitting a module once):
//! three calls, [`ptx_ir::parse`], [`optimize`], [`ptx_print::print_module`].
//! At `-O0` the pipeline is empty: the module is printed back as parsed.
//!
//! ```
//! let text = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() { ret; }\n";
//! let parsed = ptx_ir::parse("k.ptx", text.as_bytes()).unwrap();
//! let module = ptx_opt::optimize(parsed.module, ptx_opt::OptLevel::O0);
//! let out = ptx_print::print_module(&module);
//! assert!(out.contains(".entry k()"));
//! ```
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
//! db.edit(file, at..at + 3, "exit");
//! let after = db.printed(file).unwrap();
//! assert!(before.contains("ret;") && after.contains("exit;"));
//! ```

pub mod cli;
pub mod db;
pub mod lower;
pub mod run_cmd;

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
