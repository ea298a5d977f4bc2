//! Bit-exact semantics of PTX's pure instructions on concrete values.
//!
//! [`eval`] takes an instruction and the bit patterns of its source
//! operands and gives the bit patterns of its results, following the
//! manual's Semantics sections: wrap-around, `.sat`, shift clamping,
//! `.ftz`, every rounding mode, NaN rules, signed and unsigned variants.
//! Values the manual leaves open are marked, never invented:
//!
//! - [`Quality::Unspecified`]: the manual gives no value (integer division by
//!   zero), or it and the hardware disagree (a 64-bit `bfe` position >= 256);
//!   nothing may be folded from it.
//!
//! Whether an instruction can be evaluated depends on the instruction alone:
//! [`EvalError::Unsupported`] never depends on the source values (a run of
//! the interpreter would otherwise stop for some threads' values).
//! - [`Quality::AnyNan`]: some NaN, payload unspecified (single-precision
//!   arithmetic returns "an unspecified NaN").
//! - [`Quality::Approx`]: an `.approx` result, within the manual's error bound
//!   of the exact value given; never constant-folded.
//!
//! Operand conventions: `srcs` are the instruction's read operands in order
//! (a vector operand contributes its elements in order; an immediate is
//! already converted with [`imm_bits`]); results are the written operands in
//! order (a `d|p` pair gives two results, a vector one per element). Values
//! sit in the low bits of a `u128`, as wide as the operand's type.
//! Operand modifiers are the caller's job: a `!p` source arrives already
//! inverted and a `-a` source already negated (two's complement at the
//! operand's width); only `vmad`, whose `-` negates a product, undoes that.
//! Video selectors (`a.b1`, `d.h0`) are applied here, on whole registers.
//!
//! For packed results (`.f16x2`, `.e4m3x2`...) [`Quality::AnyNan`] means
//! "the NaN lanes may hold any NaN, the other lanes are exact";
//! one unspecified lane makes the whole value [`Quality::Unspecified`].
//!
//! One file per family: `int.rs` (integer and extended precision),
//! `logic.rs` (logic, shifts, `prmt`, `mov`), `compare.rs` (`setp`, `set`,
//! `selp`, `slct`), `float.rs` (floating-point arithmetic, half precision,
//! approximate functions), `convert.rs` (`cvt`, `cvt.pack`), and `bits.rs`
//! (shared helpers). `dialect.rs` turns an instruction as written into what
//! it means under the module's `.target` (sm_1x flushing, legacy defaults):
//! callers evaluate [`effective`]`(ins, dialect)`, not `ins`.

mod bits;
mod compare;
mod convert;
pub mod dialect;
mod float;
mod ieee_bits;
mod int;
mod logic;
#[cfg(test)]
pub(crate) mod test_rng;

pub use bits::{imm_bits, mask as bits_mask, mask64, sext, sext64};
pub(crate) use compare::{combine, float_compare, set_true, slct_selects_a};
pub(crate) use convert::{round_of, ScalarCvt};
pub(crate) use ieee_bits::from_f64 as round_f64;
pub use dialect::{effective, Dialect};
pub use float::{atomic_op as atomic_float_op, AtomicFloatOp};

use crate::ir::Instruction;
use crate::isa::Opcode;
use smallvec::SmallVec;

/// How much a result value can be relied on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Quality {
    /// Exactly this bit pattern.
    Exact,
    /// Some NaN of the result's type; which one is unspecified.
    AnyNan,
    /// An approximation: within `ulps` units in the last place of this value
    /// (or, for results near zero, the manual's absolute bound).
    Approx { ulps: u32 },
    /// The manual gives no value at all.
    Unspecified,
}

/// One result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Val {
    pub bits: u128,
    pub quality: Quality,
}

impl Val {
    pub fn exact(bits: u128) -> Val {
        Val { bits, quality: Quality::Exact }
    }
    pub fn unspecified() -> Val {
        Val { bits: 0, quality: Quality::Unspecified }
    }
    pub fn is_exact(&self) -> bool {
        self.quality == Quality::Exact
    }
}

/// The results of one instruction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Eval {
    /// One per written operand element, in order.
    pub dests: SmallVec<[Val; 2]>,
    /// The carry flag after the instruction, when it writes it.
    pub carry_out: Option<bool>,
}

impl Eval {
    pub fn one(v: Val) -> Eval {
        Eval { dests: smallvec::smallvec![v], carry_out: None }
    }
    pub fn exact(bits: u128) -> Eval {
        Eval::one(Val::exact(bits))
    }
}

/// Why an instruction cannot be evaluated here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvalError {
    /// Not a pure instruction (memory, control, synchronization ...).
    NotPure,
    /// A pure instruction or form this evaluator does not implement.
    Unsupported(String),
    /// The operands do not match the instruction (a bug in the caller).
    BadOperands(String),
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EvalError::NotPure => f.write_str("not a pure instruction"),
            EvalError::Unsupported(s) => write!(f, "unsupported: {s}"),
            EvalError::BadOperands(s) => write!(f, "bad operands: {s}"),
        }
    }
}

pub type EvalResult = Result<Eval, EvalError>;

/// Evaluates a pure instruction on the bit patterns of its sources.
/// `carry_in` is the carry flag before it (read by `addc`, `subc`, `madc`).
pub fn eval(ins: &Instruction, srcs: &[u128], carry_in: bool) -> EvalResult {
    let op = ins.opcode;
    let mut candidates = families_of(op);
    while candidates != 0 {
        let k = candidates.trailing_zeros() as usize;
        candidates &= candidates - 1;
        if let Some(r) = FAMILIES[k].1(ins, srcs, carry_in) {
            return r;
        }
    }
    if ins.form.flags().is_pure() && ins.form.operands().iter().all(|o| o.mem.is_none()) {
        Err(EvalError::Unsupported(format!("`{}`", op.name())))
    } else {
        Err(EvalError::NotPure)
    }
}

/// An evaluator of one family of opcodes: `None` when the instruction is
/// not its to evaluate (another family's opcode, or its opcode on types
/// another family takes, as `add.f32` for `int`).
type FamilyEval = fn(&Instruction, &[u128], bool) -> Option<EvalResult>;

/// The families, each with its opcodes, in the order they are asked.
const FAMILIES: [(&[Opcode], FamilyEval); 5] =
    [(int::OPCODES, int::eval), (logic::OPCODES, logic::eval), (compare::OPCODES, compare::eval), (float::OPCODES, float::eval), (convert::OPCODES, convert::eval)];

/// The families listing `op`, as bits in [`FAMILIES`] order (worked out
/// once for every opcode: [`eval`] runs for every constant fold and every
/// interpreted instruction).
fn families_of(op: Opcode) -> u8 {
    static TABLE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        Opcode::all().map(|o| FAMILIES.iter().enumerate().filter(|(_, (ops, _))| ops.contains(&o)).fold(0u8, |m, (k, _)| m | 1 << k)).collect()
    });
    table[op.0 as usize]
}

/// The opcodes the evaluator handles (for tests and the interpreter).
pub fn handles(op: Opcode) -> bool {
    families_of(op) != 0
}

/// Checks the number of sources.
pub(crate) fn arity(srcs: &[u128], n: usize, ins: &Instruction) -> Result<(), EvalError> {
    if srcs.len() < n {
        return Err(EvalError::BadOperands(format!("`{}` needs {n} sources, got {}", ins.opcode.name(), srcs.len())));
    }
    Ok(())
}
