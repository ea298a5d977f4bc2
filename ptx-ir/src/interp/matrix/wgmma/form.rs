//! What a `wgmma.mma_async` says (PTX ISA 8.7 §9.7.15.5.2): shape, types,
//! where A comes from, and the immediates `imm-scale-a/b` and
//! `imm-trans-a/b`, read from the typed modifiers and operands and checked
//! against the shapes and type combinations of §9.7.15.2-3.

use super::super::layout::{Elem, Shape};
use super::super::mma::{mod_texts, BitOp, Types};
use crate::ir::{Imm, Instruction, Operand};

/// A `wgmma.mma_async` form this module computes.
#[derive(Clone, Copy, Debug)]
pub struct Form {
    pub shape: Shape,
    pub types: Types,
    pub satfinite: bool,
    pub bit_op: Option<BitOp>,
    /// A in registers (`{a0, a1, a2, a3}`) rather than through `a-desc`.
    pub a_in_registers: bool,
    /// `imm-scale-a/b = -1`: every element of A/B negated.
    pub negate_a: bool,
    pub negate_b: bool,
    /// `imm-trans-a/b = 1`: A is M-major / B is N-major in shared memory.
    pub trans_a: bool,
    pub trans_b: bool,
}

/// Operand positions.
pub const D: usize = 0;
pub const A: usize = 1;
pub const B_DESC: usize = 2;
pub const SCALE_D: usize = 3;

/// The value of an immediate operand.
fn immediate(op: Option<&Operand>) -> Option<i64> {
    match op? {
        Operand::Imm(Imm::Int(i)) => Some(i.value as i64),
        _ => None,
    }
}

impl Form {
    /// The form, or why it is not one (`Err(None)`: not a dense
    /// `wgmma.mma_async` of the manual at all).
    pub fn parse(ins: &Instruction) -> Result<Form, Option<String>> {
        let mut shape = None;
        let mut types = Vec::new();
        let (mut satfinite, mut bit_op) = (false, None);
        for t in mod_texts(ins) {
            if let Some(s) = Shape::from_text(t) {
                shape = Some(s);
            } else if let Some(e) = Elem::from_text(t) {
                types.push(e);
            } else {
                match t {
                    ".sync" | ".aligned" | ".popc" => {}
                    ".satfinite" => satfinite = true,
                    ".and" => bit_op = Some(BitOp::And),
                    ".sp" => return Err(Some("sparse `wgmma.mma_async.sp` is not implemented".into())),
                    other => return Err(Some(format!("`{other}` is not implemented"))),
                }
            }
        }
        let Some(shape) = shape else { return Err(None) };
        let [d, a, b] = types[..] else { return Err(None) };
        let types = Types { d, a, b, c: d };
        use Elem::*;
        // §9.7.15.3: type combinations, and the K each implies (§9.7.15.2).
        let (k, ok_types) = match (a, b) {
            (F16, F16) => (16, matches!(d, F16 | F32)),
            (Bf16, Bf16) => (16, d == F32),
            (Tf32, Tf32) => (8, d == F32),
            (E4m3 | E5m2, E4m3 | E5m2) => (32, matches!(d, F16 | F32)),
            (S8 | U8, S8 | U8) => (32, d == S32),
            (B1, B1) => (256, d == S32 && bit_op == Some(BitOp::And)),
            _ => (0, false),
        };
        if !ok_types {
            return Err(Some(format!("no wgmma with types .{d:?}.{a:?}.{b:?}")));
        }
        // N: multiples of 8 up to 256; integer and single-bit forms: 8..32, then multiples of 16.
        let integer = matches!(a, S8 | U8 | B1);
        let n_ok = shape.n % 8 == 0 && (8..=256).contains(&shape.n) && (!integer || shape.n <= 32 || shape.n % 16 == 0);
        if shape.m != 64 || shape.k != k || !n_ok {
            return Err(Some(format!("no wgmma shape .m{}n{}k{} for .{a:?}", shape.m, shape.n, shape.k)));
        }
        if satfinite && !matches!(a, S8 | U8) {
            return Err(Some(".satfinite is only defined for the integer forms".into()));
        }
        let a_in_registers = matches!(ins.operands.get(A), Some(Operand::Vector(_)));
        let float = !integer;
        let transposable = matches!(a, F16 | Bf16);
        // Operands: d, a|a-desc, b-desc, scale-d, then for floating point
        // imm-scale-a, imm-scale-b, and for .f16/.bf16 imm-trans-a (a-desc
        // only) and imm-trans-b.
        let want = 4 + if float { 2 } else { 0 } + if transposable { if a_in_registers { 1 } else { 2 } } else { 0 };
        if ins.operands.len() != want {
            return Err(Some(format!("{} operands where the form has {want}", ins.operands.len())));
        }
        let scale = |k: usize| -> Result<bool, Option<String>> {
            match immediate(ins.operands.get(k)) {
                Some(1) => Ok(false),
                Some(-1) => Ok(true),
                _ => Err(Some("imm-scale-a/b must be the immediate 1 or -1".into())),
            }
        };
        let trans = |k: usize| -> Result<bool, Option<String>> {
            match immediate(ins.operands.get(k)) {
                Some(0) => Ok(false),
                Some(1) => Ok(true),
                _ => Err(Some("imm-trans-a/b must be the immediate 0 or 1".into())),
            }
        };
        let (negate_a, negate_b) = if float { (scale(4)?, scale(5)?) } else { (false, false) };
        let (trans_a, trans_b) = match (transposable, a_in_registers) {
            (false, _) => (false, false),
            (true, true) => (false, trans(6)?),
            (true, false) => (trans(6)?, trans(7)?),
        };
        Ok(Form { shape, types, satfinite, bit_op, a_in_registers, negate_a, negate_b, trans_a, trans_b })
    }

    /// Registers of D per thread: N/2 elements, two `.f16` per register.
    pub fn d_registers(&self) -> usize {
        let e = self.shape.n / 2;
        (if self.types.d == Elem::F16 { e / 2 } else { e }) as usize
    }
}
