//! Semantics of the convert family (see `mod.rs`).

use super::EvalResult;
use crate::ir::Instruction;
use crate::isa::Opcode;

/// The opcodes this family evaluates.
pub const OPCODES: &[Opcode] = &[];

/// Evaluates `ins` if it belongs to this family.
pub fn eval(ins: &Instruction, srcs: &[u128], carry_in: bool) -> Option<EvalResult> {
    let _ = (ins, srcs, carry_in);
    None
}

/// Converts a double to a 16-bit float format (`.f16` or `.bf16`), rounding to nearest even.
pub fn f64_to_format_bits(v: f64, ty: crate::isa::ScalarType) -> u16 {
    let _ = (v, ty);
    0
}
