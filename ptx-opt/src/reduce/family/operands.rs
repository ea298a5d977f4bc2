//! `to-constant-0`, `to-constant-1`: a register source operand becomes the
//! immediate 0 or 1 of the operand's type (`0f3F800000` for a `.f32`
//! one), so the instructions that computed the register can go next round.
//!
//! Only where an immediate is ordinary PTX: sources of pure instructions
//! (arithmetic, logic, comparisons, conversions, moves), the value stored
//! by `st`, the operands of `atom`/`red` after the address, and the lane,
//! clamp and mask operands of `shfl`. Predicates, vectors, addresses and
//! selected lanes (`%r.h0`) are left alone: the verifier does not check
//! every position ptxas refuses an immediate in, so this family does not
//! guess beyond those.

use super::Family;
use crate::reduce::sites::{self, Site};
use ptx_ir::ir::{FloatLit, Imm, Instruction, IntLit, Item, Module, Operand, Prefix, Stmt};
use ptx_ir::isa::{Opcode, OperandKind, ScalarType, TypeClass};

/// Replace register sources by this value (0 or 1).
pub(crate) struct ToConstant(pub u8);

impl Family for ToConstant {
    fn name(&self) -> &'static str {
        if self.0 == 0 {
            "to-constant-0"
        } else {
            "to-constant-1"
        }
    }

    fn sites(&self, m: &Module) -> Vec<Site> {
        let mut out = Vec::new();
        for (item, _, stmt, s) in sites::statements(m) {
            let Stmt::Instr(ins) = s else { continue };
            for k in 0..ins.operands.len() {
                if immediate_for(ins, k, self.0).is_some() {
                    out.push(Site::Operand { item, stmt, operand: k });
                }
            }
        }
        out
    }

    fn apply(&self, m: &Module, chosen: &[Site]) -> Module {
        let mut out = m.clone();
        for site in chosen {
            let Site::Operand { item, stmt, operand } = *site else { continue };
            let Some(Item::Func(f)) = out.items.get_mut(item) else { continue };
            let Some(Stmt::Instr(ins)) = f.body.as_mut().and_then(|b| b.get_mut(stmt)) else { continue };
            if let Some(imm) = immediate_for(ins, operand, self.0) {
                if let Some(op) = ins.operands.get_mut(operand) {
                    *op = Operand::Imm(imm);
                }
            }
        }
        out
    }
}

/// Do sources of this instruction take immediates (see the module doc)?
fn takes_immediates(ins: &Instruction) -> bool {
    ins.form.flags().is_pure() || [Opcode::ST, Opcode::ATOM, Opcode::RED, Opcode::SHFL_SYNC, Opcode::SHFL].contains(&ins.opcode)
}

/// The immediate `value` that may replace operand `k` of `ins`: `None`
/// when the operand is not a plain register source or its type has no
/// simple literal.
fn immediate_for(ins: &Instruction, k: usize, value: u8) -> Option<Imm> {
    let spec = ins.form.operands().get(k)?;
    if !takes_immediates(ins) || spec.kind != OperandKind::Value || spec.write || !spec.read || spec.mem.is_some() {
        return None;
    }
    match ins.operands.get(k)? {
        Operand::Reg(r) if r.prefix == Prefix::None && r.sel.is_none() => {}
        _ => return None,
    }
    let ty = ins.operand_type(k)?;
    literal(ty, value)
}

/// `value` (0 or 1) as a literal of type `ty`.
fn literal(ty: ScalarType, value: u8) -> Option<Imm> {
    let one = value != 0;
    match (ty.class(), ty) {
        (TypeClass::Bits | TypeClass::Unsigned | TypeClass::Signed, _) if (8..=64).contains(&ty.bits()) && !is_packed(ty) => Some(Imm::Int(IntLit::dec(i64::from(value)))),
        (TypeClass::Float, ScalarType::F32) => Some(Imm::Float(FloatLit::F32(if one { 1.0f32.to_bits() } else { 0 }))),
        (TypeClass::Float, ScalarType::F64) => Some(Imm::Float(FloatLit::F64(if one { 1.0f64.to_bits() } else { 0 }))),
        _ => None,
    }
}

/// Packed integer types (`.u16x2`, `.s8x4` ...) have no scalar literal.
fn is_packed(ty: ScalarType) -> bool {
    matches!(ty, ScalarType::U16x2 | ScalarType::S16x2 | ScalarType::S8x4 | ScalarType::U8x4)
}
