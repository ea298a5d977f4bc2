//! 64-bit division by a run-time value with a 32-bit fast path (what LLVM's
//! `addBypassSlowDiv(64, 32)` does for NVPTX): ptxas turns `div`/`rem`
//! `.u64`/`.s64` into a call of a ~60-instruction subroutine, while
//! `div.u32` is ~20 inline instructions.
//!
//! When the high 32 bits of both operands are zero, the 32-bit unsigned
//! division of the low halves, zero-extended, is the 64-bit result, for
//! `.s64` too (both operands are then non-negative). One `or` and one
//! comparison decide it; the 64-bit instruction runs under the negated
//! guard and overwrites the fast result:
//!
//! ```text
//! or.b64 t, x, y;  setp.le.u64 p, t, 0xFFFFFFFF;
//! cvt.u32.u64 xl, x;  cvt.u32.u64 yl, y;  div.u32 ql, xl, yl;  cvt.u64.u32 q, ql;
//! @!p div.u64 q, x, y;        // .s64: cvt.s64.u32, div.s64
//! ```
//!
//! The fast path is not guarded: ptxas if-converts it anyway and branches
//! around the subroutine call only (see `README.md` for the SASS). A divisor
//! of zero gives an unspecified result on either path, as the original does.

use super::builder::{imm, type_mod, Builder};
use super::program::Program;
use ptx_ir::ir::{Guard, Operand};
use ptx_ir::isa::{Mod, Opcode, ScalarType};

/// `x / y` (or `x % y` with `rem`) for `ty` `.u64` or `.s64`, inputs
/// `(x, y)`, with the 32-bit fast path. `None` for other types.
pub fn div64_bypass(ty: ScalarType, rem: bool) -> Option<Program> {
    use ScalarType as T;
    if !matches!(ty, T::U64 | T::S64) {
        return None;
    }
    let (u32m, u64m, b64m) = (type_mod(T::U32), type_mod(T::U64), type_mod(T::B64));
    let op = if rem { Opcode::REM } else { Opcode::DIV };
    let mut b = Builder::new(&[ty, ty]);
    let (x, y) = (b.input(0), b.input(1));
    let both = b.push(Opcode::OR, &[b64m], &[x.clone(), y.clone()]);
    let small = b.push(Opcode::SETP, &[Mod::LE, u64m], &[both, imm(u32::MAX as u128, T::U64)]);
    let xl = b.push(Opcode::CVT, &[u32m, u64m], &[x.clone()]);
    let yl = b.push(Opcode::CVT, &[u32m, u64m], &[y.clone()]);
    let ql = b.push(op, &[u32m], &[xl, yl]);
    let q = b.push(Opcode::CVT, &[type_mod(ty), u32m], &[ql]);
    let Operand::Reg(p) = small else { return None };
    let slow = Guard { reg: p.reg, negated: true };
    b.push_guarded(slow, Some(&q), op, &[type_mod(ty)], &[x, y]);
    b.finish().ok()
}
