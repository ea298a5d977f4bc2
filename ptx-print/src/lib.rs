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
//!
//! Printing never fails or panics: IR the verifier would reject (a register
//! or label id past the end of its table) prints a `<invalid register N>`
//! marker that does not parse, and `ptx_ir::verify::registers_declared`
//! says what is wrong.
//!
//! # Parse, print
//!
//! ```
//! let text = ".version 8.0\n.target sm_80\n.address_size 64\n\
//!     .visible .entry k() { ret; }";
//! let module = ptx_ir::parse_str(text).unwrap();
//! let printed = ptx_print::print_module(&module);
//! assert_eq!(ptx_print::print_module(&ptx_ir::parse_str(&printed).unwrap()), printed);
//! ```
//!
//! # Build, print
//!
//! ```
//! use ptx_ir::ir::{Address, ModuleBuilder};
//! use ptx_ir::isa::ScalarType::{U32, U64};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut m = ModuleBuilder::new("8.0", "sm_80", 64);
//! let mut k = m.entry("store_tid");
//! let out = k.param(U64, "out");
//! let [p, q] = k.regs(U64);
//! let [tid] = k.regs(U32);
//! k.ins("ld.param.u64", (p, out))?;
//! k.ins("cvta.to.global.u64", [p, p])?;
//! k.ins("mov.u32", (tid, k.sreg("%tid.x")?))?;
//! k.ins("mul.wide.u32", (q, tid, 4))?;
//! k.ins("add.s64", [q, q, p])?;
//! k.ins("st.global.u32", (Address::reg(q), tid))?;
//! k.ins("ret", ())?;
//! let text = ptx_print::print_module(&m.finish()?);
//! assert!(text.contains("st.global.u32 \t[%tu64_1], %tu32_0;"), "{text}");
//! # Ok(()) }
//! ```

mod data;
mod function;
mod instruction;
mod module;
mod writer;

pub use instruction::{instruction_head, write_head, write_imm, write_instruction};
pub use function::write_function;
pub use module::{print_module, write_header, write_item, write_module, write_separator};

/// Width the printer wraps long lists at.
pub const WIDTH: usize = 100;
