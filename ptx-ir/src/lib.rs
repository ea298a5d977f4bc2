//! ptx-ir: the PTX ISA as data, the parser, the typed IR, its analyses and
//! verifier, and an interpreter.
//!
//! - [`isa`]: instruction tables compiled from `isa/*.ptxisa` (opcodes,
//!   forms, modifiers, effects) and the closed vocabulary of types,
//!   rounding modes, comparisons and state spaces.
//! - [`lexer`] and [`parse`](mod@parse): PTX text to [`ir::Module`], with positions in a
//!   [`parse::SourceMap`]; errors are [`source::Diagnostic`]s.
//! - [`ir`]: the module, functions, statements, instructions and operands;
//!   [`ir::ModuleBuilder`] to build modules, [`ir::FuncCursor`] to edit bodies.
//! - [`cfg`](mod@cfg) and [`analysis`]: control flow, effects, dominators, loops,
//!   liveness, def-use chains.
//! - [`verify`]: the checks ptxas makes, as `file:line:col` diagnostics.
//! - [`eval`] and [`interp`]: bit-exact semantics and a reference interpreter.
//!
//! Text comes back from the IR through the `ptx-print` crate
//! (`ptx_print::print_module`).
//!
//! # Parse, walk, verify
//!
//! ```
//! use ptx_ir::ir::{Item, Stmt};
//! use ptx_ir::isa::Opcode;
//! let text = ".version 8.0\n.target sm_80\n.address_size 64\n\
//!     .visible .entry k(.param .u64 p) {\n.reg .b64 %rd<2>;\n\
//!     ld.param.u64 %rd1, [p];\nret;\n}\n";
//! let parsed = ptx_ir::parse("k.ptx", text.as_bytes()).unwrap(); // Err: a Diagnostic
//! for item in &parsed.module.items {
//!     let Item::Func(f) = item else { continue };
//!     for ins in f.instructions() {
//!         // Typed accessors read the modifiers through the form's slots.
//!         if ins.opcode == Opcode::LD {
//!             assert_eq!(ins.space(), ptx_ir::isa::StateSpace::Param);
//!             assert_eq!(f.reg(ins.defs()[0]).name.as_ref(), "%rd1");
//!         }
//!     }
//! }
//! let diags = ptx_ir::verify::verify(&parsed.module, &parsed.source_map, "k.ptx", text.as_bytes());
//! assert!(diags.iter().all(|d| !d.is_error()));
//! ```
//!
//! # Build
//!
//! ```
//! use ptx_ir::ir::{Address, ModuleBuilder};
//! use ptx_ir::isa::ScalarType::U32;
//! let mut m = ModuleBuilder::new("8.0", "sm_80", 64);
//! let mut k = m.entry("k");
//! let n = k.param(U32, "n");
//! let [a, b] = k.regs(U32);
//! k.ins("ld.param.u32", (a, n)).unwrap();
//! k.ins("mad.lo.s32", [b, a, a, a]).unwrap();
//! k.ins("ret", ()).unwrap();
//! let module = m.finish().unwrap();
//! ```
//!
//! # Edit
//!
//! A pass walks a body with [`ir::Function::cursor`], makes registers with
//! [`ir::Function::new_reg`] (declared for it) and rewrites operands with
//! [`ir::Instruction::for_each_use_mut`] / [`ir::Instruction::for_each_def_mut`];
//! see [`ir::FuncCursor`]. Analyses are plain values computed from the
//! function: recompute the ones an edit invalidates (ARCHITECTURE.md lists which).

pub mod analysis;
pub mod cfg;
pub mod eval;
pub mod interp;
pub mod ir;
pub mod isa;
pub mod lexer;
pub mod parse;
pub mod source;
pub mod threads;
pub mod verify;

pub use parse::{parse, parse_str, Parsed};
