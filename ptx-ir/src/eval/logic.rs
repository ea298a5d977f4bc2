//! Semantics of the logic family (see `mod.rs`).

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
