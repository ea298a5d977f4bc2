//! ptx-ir: the PTX ISA as data, the parser, and the typed IR.
//!
//! - [`isa`]: instruction tables compiled from `isa/*.ptxisa` (opcodes,
//!   forms, modifiers, effects) and the closed vocabulary of types,
//!   rounding modes, comparisons and state spaces.
//! - [`lexer`] and [`parse`]: PTX text to [`ir::Module`], with positions in a
//!   [`parse::SourceMap`]; errors are [`source::Diagnostic`]s.
//! - [`ir`]: the module, functions, statements, instructions and operands.
//!
//! ```
//! let m = ptx_ir::parse::parse_str(".version 8.0\n.target sm_80\n.address_size 64\n\
//!     .visible .entry k() { ret; }").unwrap();
//! assert_eq!(m.target[0].as_ref(), "sm_80");
//! ```

pub mod analysis;
pub mod cfg;
pub mod eval;
pub mod interp;
pub mod ir;
pub mod isa;
pub mod lexer;
pub mod parse;
pub mod source;
pub mod verify;

pub use parse::{parse, parse_str, Parsed};
