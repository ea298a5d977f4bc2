//! ptx-print: emits PTX text from the `ptx-ir` IR.
//!
//! The output re-parses to an equal IR (print∘parse is a fixed point) and
//! keeps what downstream tools rely on: linkage, `.file`/`.loc` debug
//! positions, debug sections, `.pragma`s and the order of everything.
//! Modifiers are printed in the canonical order of the instruction's
//! matched form. Layout that can wrap (parameter lists, initializers, debug
//! data, long vector operands) goes through the `pretty` crate, one arena per
//! item; ordinary instruction lines are written directly, which is what
//! keeps printing fast.

mod data;
mod function;
mod instruction;
mod module;

pub use instruction::{instruction_head, write_head, write_imm, write_instruction};
pub use module::{print_module, write_header, write_item, write_separator};

/// Width the printer wraps long lists at.
pub const WIDTH: usize = 100;
