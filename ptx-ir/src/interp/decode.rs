//! The pre-decoded form of function bodies, for the interpreter's fast path
//! ([`super::fast`]): one [`FastIns`] per statement, with register operands
//! resolved to value slots, immediates converted to bits, symbols to their
//! places, branch targets to statements, the guard to a slot and a sign, and
//! the common integer instructions to an [`AluOp`] chosen once (the
//! carry forms, division, `.rn` floating-point arithmetic, comparisons,
//! also those combining a predicate, and narrowing floating-point `cvt`
//! to a [`CheckedAluOp`], which may leave a value it cannot give exactly,
//! a NaN or a division's unspecified result, to `step`). Everything
//! else decodes to [`Op::Slow`] and runs through the reference `Cta::step`
//! (exec.rs), so a form is either decoded here exactly as `step` would read
//! and write it, or not decoded at all.

use super::exec::space_of;
use super::memory::Space;
use super::program::{type_bytes, FuncLayout, VarLoc};
use crate::eval::{self, imm_bits, Quality};
use crate::ir::{AddrBase, Instruction, Name, Operand, PairPred, Prefix, RegId, Stmt};
use crate::isa::{BoolOp, CmpOp, Mod, ModKind, Opcode, ScalarType, TypeClass};
use rustc_apfloat::Round;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

/// A source operand, resolved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Src {
    /// A register's value slot, masked to the operand's type when that is
    /// narrower than the register.
    Reg { slot: u32, mask: u128 },
    /// `!p`: bit 0 of the slot inverted, then masked.
    Not { slot: u32, mask: u128 },
    /// An immediate (or `_`, which reads as 0): always exact.
    Imm(u128),
}

/// A destination register element: how a value is narrowed or extended
/// into it (`Cta::set_reg`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dst {
    pub slot: u32,
    /// Sign-extend from this many bits first (0: do not).
    pub sext_from: u32,
    /// Then keep these bits.
    pub mask: u128,
}

/// Where a memory operand points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Addr {
    /// A register's value plus an offset, in `space` (`None`: generic).
    Reg { slot: u32, space: Option<Space>, offset: u64 },
    /// A fixed place.
    Fixed { space: Space, addr: u64 },
    /// A variable of the frame's local area: `local_base + offset`.
    FrameLocal { offset: u64 },
}

/// An integer comparison (`setp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntCmp {
    Eq,
    Ne,
    LtS,
    LeS,
    GtS,
    GeS,
    LtU,
    LeU,
    GtU,
    GeU,
}

impl IntCmp {
    /// The comparison `c` of values of type class `class`, if an integer one.
    fn of(c: CmpOp, class: TypeClass) -> Option<IntCmp> {
        Some(match (c, class) {
            (CmpOp::Eq, _) => IntCmp::Eq,
            (CmpOp::Ne, _) => IntCmp::Ne,
            (CmpOp::Lt, TypeClass::Signed) => IntCmp::LtS,
            (CmpOp::Le, TypeClass::Signed) => IntCmp::LeS,
            (CmpOp::Gt, TypeClass::Signed) => IntCmp::GtS,
            (CmpOp::Ge, TypeClass::Signed) => IntCmp::GeS,
            (CmpOp::Lt | CmpOp::Lo, TypeClass::Unsigned) => IntCmp::LtU,
            (CmpOp::Le | CmpOp::Ls, TypeClass::Unsigned) => IntCmp::LeU,
            (CmpOp::Gt | CmpOp::Hi, TypeClass::Unsigned) => IntCmp::GtU,
            (CmpOp::Ge | CmpOp::Hs, TypeClass::Unsigned) => IntCmp::GeU,
            _ => return None,
        })
    }

    /// Does the comparison hold between the low `n` bits (at most 64) of
    /// `a` and `b`? (Only the signed comparisons sign-extend.) Always inlined: called
    /// from `CheckedAluOp::apply` too, it was no longer inlined into
    /// `AluOp::apply`, which took the integer loop bench 2 % more work.
    #[inline(always)]
    fn holds(self, a: u128, b: u128, n: u32) -> bool {
        let unsigned = |x: u128| x as u64 & eval::mask64(n);
        let signed = |x: u128| eval::sext64(x as u64, n);
        match self {
            IntCmp::Eq => unsigned(a) == unsigned(b),
            IntCmp::Ne => unsigned(a) != unsigned(b),
            IntCmp::LtS => signed(a) < signed(b),
            IntCmp::LeS => signed(a) <= signed(b),
            IntCmp::GtS => signed(a) > signed(b),
            IntCmp::GeS => signed(a) >= signed(b),
            IntCmp::LtU => unsigned(a) < unsigned(b),
            IntCmp::LeU => unsigned(a) <= unsigned(b),
            IntCmp::GtU => unsigned(a) > unsigned(b),
            IntCmp::GeU => unsigned(a) >= unsigned(b),
        }
    }
}

/// An integer or bitwise instruction computed without the evaluator. Each
/// computes what `eval::eval` gives for the form it was decoded from (the
/// test `fast::tests` checks that on random values); `n` is the width in bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AluOp {
    Add(u32),
    Sub(u32),
    MulLo(u32),
    MulHi { n: u32, signed: bool },
    MulWide { n: u32, signed: bool },
    MadLo(u32),
    MadHi { n: u32, signed: bool },
    MadWide { n: u32, signed: bool },
    And(u32),
    Or(u32),
    Xor(u32),
    Not(u32),
    Shl(u32),
    Shr { n: u32, signed: bool },
    Setp { cmp: IntCmp, n: u32 },
    Selp(u32),
    Mov(u32),
    /// `cvt` from one integer type to another, no `.sat`: the source of
    /// `from` bits, sign-extended when `signed`, cut to `to` bits.
    Cvt { from: u32, signed: bool, to: u32 },
}

/// The instructions of one result computed without the evaluator that
/// [`AluOp`] leaves out: the integer carry forms, which read and set the
/// carry flag, division and the floating-point operations, whose result
/// may be left to the reference path, and the rarer integer ones. Apart
/// from [`AluOp`]: in one `match` with the common operations, they made
/// those slower (about 2 % of the interpreter bench's integer loop).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckedAluOp {
    /// `add.cc`, `addc`, `addc.cc`: the sum with the carry flag added
    /// when `carry_in`, setting the flag to its carry when `carry_out`.
    AddCarry { n: u32, carry_in: bool, carry_out: bool },
    /// `sub.cc`, `subc`, `subc.cc`: `a + !b + 1`, or `+ flag` when
    /// `borrow_in` (the flag holds 1 - borrow), setting the flag when
    /// `carry_out`.
    SubCarry { n: u32, borrow_in: bool, carry_out: bool },
    /// `mad.lo.cc`, `mad.hi.cc`, `madc.lo`, `madc.hi` (and `.cc`): the low
    /// or high half of the product plus `c` and the flag when `carry_in`.
    MadCarry { n: u32, hi: bool, signed: bool, carry_in: bool, carry_out: bool },
    /// `div`: none for a zero divisor and for `MININT / -1`, whose results
    /// are unspecified (the reference path gives them).
    Div { n: u32, signed: bool },
    /// `rem`: none for a zero divisor.
    Rem { n: u32, signed: bool },
    Min { n: u32, signed: bool },
    Max { n: u32, signed: bool },
    Popc(u32),
    Clz(u32),
    Brev(u32),
    /// `setp` of two `.f32` (or `.f64` when `double`) values, no `.ftz`.
    FloatSetp { cmp: CmpOp, double: bool },
    /// `setp` combining its comparison with a predicate (`setp.lt.and.s32
    /// p, a, b, c`), one destination, no `.ftz`.
    CombinedSetp { compare: Compare, combine: BoolOp },
    /// `set` of integers, bits, `.f32` or `.f64` values into a `.u32`,
    /// `.s32` or `.f32` destination, its comparison combined with a
    /// predicate when `combine`, no `.ftz`: `true_bits` (what the
    /// evaluator writes for true) or 0.
    Set { compare: Compare, combine: Option<BoolOp>, true_bits: u32 },
    /// `slct` of `n`-bit values by a `.s32` (or `.f32` when `float`) `c`
    /// (`.ftz` flushing a subnormal `.f32` when `ftz`): `a` when `c` is
    /// at least zero, else `b`.
    Slct { n: u32, float: bool, ftz: bool },
    /// `add`, `sub`, `mul` and `fma` of `.f32` (or `.f64`) values rounding
    /// to nearest even, no `.ftz` or `.sat`: the host's IEEE arithmetic,
    /// none when the result is a NaN (whose bits the reference path gives).
    FloatArith { op: FloatOp, double: bool },
    /// `cvt` of a `.f32` (or `.f64` when `from_double`) value to a narrower
    /// `.f16`, `.bf16` or `.f32` rounding as `.rn`, `.rz`, `.rm` or `.rp`
    /// (`round`), nothing more: the evaluator's rounding of the value;
    /// none for a NaN (whose bits the reference path gives).
    FloatCvt { from_double: bool, to: ScalarType, round: Round },
    /// Any other scalar `cvt` the evaluator computes (between integer and
    /// floating-point types, with its rounding, `.sat`, `.ftz` ...), by the
    /// evaluator's own conversion; none when its result is not exact.
    Cvt(eval::ScalarCvt),
}

/// The comparison of a [`CheckedAluOp::CombinedSetp`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    /// Of integers or bits of `n` bits.
    Int { cmp: IntCmp, n: u32 },
    /// Of `.f32` (or `.f64` when `double`) values.
    Float { cmp: CmpOp, double: bool },
}

/// `setp.cmp{.bool}.type p|q, a, b{, c}` with a comparison [`compare_of`]
/// computes, no `.ftz`, its sources plain (but a `!c`): `p` is the
/// comparison (combined with `c`), `q` its negation (combined with `c`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairSetp {
    pub compare: Compare,
    pub combine: Option<BoolOp>,
}

impl PairSetp {
    /// The form `ins` (with `nsrcs` sources) is, if it is one.
    pub(super) fn of(ins: &Instruction, nsrcs: usize) -> Option<PairSetp> {
        let Some(Operand::Pair(first, _)) = ins.operands.first() else { return None };
        let &[t] = ins.types().as_slice() else { return None };
        let (cmp, combine) = comparison(ins)?;
        let first_plain = matches!(&**first, Operand::Reg(r) if r.sel.is_none() && r.prefix == Prefix::None);
        if !first_plain || nsrcs != 2 + combine.is_some() as usize || !ins.operands[1..3].iter().all(plain_operand) {
            return None;
        }
        Some(PairSetp { compare: compare_of(cmp, t)?, combine })
    }

    /// `p` and `q` from the sources' bits (`None`: no comparison of values).
    #[inline]
    pub fn apply(self, a: u128, b: u128, c: u128) -> Option<(bool, bool)> {
        let holds = self.compare.holds(a, b)?;
        let c = c & 1 == 1;
        Some((eval::combine(self.combine, holds, c), eval::combine(self.combine, !holds, c)))
    }
}

/// The arithmetic of [`CheckedAluOp::FloatArith`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatOp {
    Add,
    Sub,
    Mul,
    Fma,
}

/// An [`AluOp`] or a [`CheckedAluOp`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnyAluOp {
    Common(AluOp),
    Checked(CheckedAluOp),
}

impl From<AluOp> for AnyAluOp {
    fn from(op: AluOp) -> AnyAluOp {
        AnyAluOp::Common(op)
    }
}

impl From<CheckedAluOp> for AnyAluOp {
    fn from(op: CheckedAluOp) -> AnyAluOp {
        AnyAluOp::Checked(op)
    }
}

/// What a statement does, decoded.
#[derive(Clone, Debug, PartialEq)]
#[repr(u8)]
pub enum Op {
    /// Not an instruction (a label, a declaration ...): the next statement.
    Nop,
    /// Run through `Cta::step`.
    Slow,
    /// One of the common integer instructions (one result).
    Alu { op: AluOp, srcs: [Src; 3], dst: Option<Dst> },
    /// One of the other instructions computed here (one result).
    CheckedAlu { op: CheckedAluOp, srcs: [Src; 3], dst: Option<Dst> },
    /// `setp` writing a pair `p|q` (one result each).
    PairSetp { op: PairSetp, srcs: [Src; 3], dsts: [Option<Dst>; 2] },
    /// A pure instruction through `eval::eval` (of the statement's
    /// effective instruction), with resolved operands.
    Eval { srcs: Box<[Src]>, dsts: Box<[Option<Dst>]> },
    /// `mov` of an immediate into a register (or `_`: `None`): the value
    /// as read.
    Copy { src: Src, dst: Option<Dst> },
    /// `mov d, {a, b, ...}`: the sources' low `elem` bits side by side,
    /// the first lowest.
    Pack { srcs: Box<[Src]>, elem: u32, dst: Option<Dst> },
    /// `mov {a, b, ...}, s`: the source cut into pieces of `elem` bits,
    /// the lowest first.
    Unpack { src: Src, elem: u32, dsts: Box<[Option<Dst>]> },
    /// `ld`/`ldu`: `n` elements of `size` bytes.
    Load { addr: Addr, size: u8, n: u8, vector: bool, dsts: Box<[Option<Dst>]> },
    /// `st`: the sources' elements of `size` bytes each.
    Store { addr: Addr, size: u8, vector: bool, srcs: Box<[Src]> },
    /// `bra` to a statement of the same function.
    Branch { target: u32 },
    /// `mov` of a special register the program determines (not a clock,
    /// nor `%smid`/`%warpid`): its value, narrowed to `mask`.
    Special { reg: super::special::Special, mask: u128, dst: Dst },
    /// `mov` of the address of a variable of the frame's local area.
    FrameAddr { offset: u64, dst: Dst },
    /// `cvta`: the address moved by `shift` (added, wrapping: a space's
    /// window to or from the generic space; 0 for global and generic).
    Cvta { src: Src, shift: u64, dst: Dst },
    /// `bar`/`barrier` that waits and gives no result (not `.arrive`, not
    /// `.red`): the barrier number and the thread count it expects
    /// (`Cta::barrier`).
    Barrier { id: Src, count: Option<Src> },
}

/// A statement, decoded.
#[derive(Clone, Debug, PartialEq)]
pub struct FastIns {
    /// The guard: predicate slot and whether it is negated.
    pub guard: Option<(u32, bool)>,
    pub op: Op,
}

/// What decoding needs to know about the function and the module.
pub struct Context<'a, 'm> {
    pub layout: &'a FuncLayout<'m>,
    pub globals: &'a FxHashMap<Name, VarLoc>,
}

/// Decodes every statement of a function body.
pub fn decode_function(cx: &Context) -> Vec<FastIns> {
    let Some(body) = cx.layout.f.body.as_ref() else { return Vec::new() };
    body.iter()
        .enumerate()
        .map(|(pc, s)| match s {
            Stmt::Instr(ins) => match ins.guard.map(|g| cx.slot(g.reg, 0).map(|s| (s, g.negated))) {
                // A register outside the function's table: `step` says so.
                Some(None) => FastIns { guard: None, op: Op::Slow },
                guard => FastIns { guard: guard.flatten(), op: decode_instruction(cx, pc, ins).unwrap_or(Op::Slow) },
            },
            _ => FastIns { guard: None, op: Op::Nop },
        })
        .collect()
}

impl Context<'_, '_> {
    /// The type operand `k` of statement `pc` is read or written with.
    fn operand_type(&self, pc: usize, k: usize) -> Option<ScalarType> {
        self.layout.decoded[pc].as_ref().and_then(|d| d.operand_types.get(k).copied().flatten())
    }

    /// Is statement `pc` evaluated as written (no effective form of its own)?
    fn effective_is_written(&self, pc: usize) -> bool {
        self.layout.decoded[pc].as_ref().is_some_and(|d| d.effective.is_none())
    }

    fn slot(&self, r: RegId, lane: u8) -> Option<u32> {
        Some(self.layout.reg_base.get(r.0 as usize)? + lane as u32)
    }

    /// The slots a register operand stands for (`Cta::read`/`write_operand`):
    /// one lane when selected, every lane of a vector register, else one.
    fn lanes(&self, r: &crate::ir::RegOperand) -> Option<(u8, u8)> {
        let reg = self.layout.f.regs.get(r.reg.0 as usize)?;
        Some(match (r.sel.and_then(|s| s.lane()), reg.vector) {
            (Some(l), Some(_)) => (l, l + 1),
            (_, Some(n)) => (0, n),
            _ => (0, 1),
        })
    }

    /// A source operand as `Cta::read` reads it for an operand of type `ty`;
    /// `None` for kinds the fast path leaves to `step`.
    fn src(&self, op: &Operand, ty: Option<ScalarType>, out: &mut SmallVec<[Src; 4]>) -> Option<()> {
        match op {
            Operand::Reg(r) => {
                let rty = self.layout.f.regs.get(r.reg.0 as usize)?.ty;
                let mask = match ty {
                    Some(t) if t != ScalarType::Pred && t.bits() < rty.bits() => eval::bits_mask(t.bits()),
                    _ => u128::MAX,
                };
                let (from, to) = self.lanes(r)?;
                for l in from..to {
                    let slot = self.slot(r.reg, l)?;
                    out.push(match r.prefix {
                        Prefix::None => Src::Reg { slot, mask },
                        Prefix::Not => Src::Not { slot, mask },
                        Prefix::Neg => return None,
                    });
                }
            }
            Operand::Imm(i) => out.push(Src::Imm(imm_bits(i, ty.unwrap_or(ScalarType::B64)))),
            Operand::Sink => out.push(Src::Imm(0)),
            Operand::Vector(v) => {
                for o in v.iter() {
                    self.src(o, ty, out)?;
                }
            }
            _ => return None,
        }
        Some(())
    }

    /// A register element written with type `ty` (`Cta::set_reg`).
    fn dst(&self, r: RegId, lane: u8, ty: Option<ScalarType>) -> Option<Dst> {
        let rty = self.layout.f.regs.get(r.0 as usize)?.ty;
        let bits = rty.bits().max(1);
        let (sext_from, keep) = match ty {
            Some(w) if w.bits() < bits && w.class() == TypeClass::Signed => (w.bits(), bits),
            Some(w) if w.bits() < bits => (0, w.bits()),
            _ => (0, bits),
        };
        Some(Dst { slot: self.slot(r, lane)?, sext_from, mask: eval::bits_mask(keep) })
    }

    /// The destinations of a written operand, in the order
    /// `Cta::write_operand` consumes values (`None`: a value is consumed
    /// and not written).
    fn dsts<const N: usize>(&self, op: &Operand, ty: Option<ScalarType>, out: &mut SmallVec<[Option<Dst>; N]>) -> Option<()> {
        match op {
            Operand::Reg(r) => {
                let (from, to) = self.lanes(r)?;
                for l in from..to {
                    out.push(Some(self.dst(r.reg, l, ty)?));
                }
            }
            Operand::Vector(v) | Operand::List(v) => {
                for o in v.iter() {
                    self.dsts(o, ty, out)?;
                }
            }
            Operand::Pair(first, q) => {
                self.dsts(first, ty, out)?;
                out.push(match q {
                    PairPred::Reg(q) => Some(self.dst(*q, 0, Some(ScalarType::Pred))?),
                    _ => None,
                });
            }
            _ => out.push(None),
        }
        Some(())
    }

    /// The place of an address operand (`Cta::address`), for statement `pc`.
    fn addr(&self, pc: usize, op: &Operand, ins: &Instruction) -> Option<Addr> {
        let Operand::Addr(a) = op else { return None };
        let space = space_of(ins.space());
        let offset = a.offset as u64;
        Some(match &a.base {
            AddrBase::Reg(r) => Addr::Reg { slot: self.slot(*r, 0)?, space, offset },
            AddrBase::Imm(v) => match space {
                Some(s) => Addr::Fixed { space: s, addr: v.wrapping_add(offset) },
                // A generic immediate address: decoded at run time by `step`.
                None => return None,
            },
            AddrBase::Sym(name) => {
                let (space, at) = match self.layout.lookup(name, pc).or_else(|| self.globals.get(name).copied())? {
                    VarLoc::Global(a) => (Space::Global, a),
                    VarLoc::Const(o) => (Space::Const, o),
                    VarLoc::Shared(o) => (Space::Shared, o),
                    VarLoc::Local(o) => return Some(Addr::FrameLocal { offset: o.wrapping_add(offset) }),
                    VarLoc::ModuleLocal(o) => (Space::Local, o),
                    VarLoc::Param(o) => (Space::Param, o),
                    _ => return None,
                };
                Addr::Fixed { space, addr: at.wrapping_add(offset) }
            }
        })
    }
}

/// The written width of a type (`.pred` is one bit).
fn width(t: ScalarType) -> u32 {
    if t == ScalarType::Pred {
        1
    } else {
        t.bits()
    }
}

/// The comparison of a `setp` or `set` whose modifiers besides its types
/// are a comparison and at most a combining operation (`.lt`, `.lt.and`).
fn comparison(ins: &Instruction) -> Option<(CmpOp, Option<BoolOp>)> {
    let (cm, combine) = match other_mods(ins).as_slice() {
        [cm] => (*cm, None),
        [cm, bm] => match bm.kind() {
            ModKind::Bool(op) => (*cm, Some(op)),
            _ => return None,
        },
        _ => return None,
    };
    let ModKind::Cmp(cmp) = cm.kind() else { return None };
    Some((cmp, combine))
}

/// The modifiers that are not types.
fn other_mods(ins: &Instruction) -> SmallVec<[Mod; 4]> {
    ins.modifiers().filter(|(_, m)| !matches!(m.kind(), ModKind::Type(_))).map(|(_, m)| m).collect()
}

fn decode_instruction(cx: &Context, pc: usize, ins: &Instruction) -> Option<Op> {
    let op = ins.opcode;
    if op == Opcode::BRA {
        let Some(Operand::Label(l)) = ins.operands.first() else { return None };
        let target = cx.layout.label_stmt.get(l.0 as usize).copied().flatten()?;
        return Some(Op::Branch { target: target as u32 });
    }
    if op == Opcode::LD || op == Opcode::LDU {
        if ins.operands.len() != 2 {
            return None;
        }
        let ty = ins.types().last().copied().unwrap_or(ScalarType::B32);
        let vector = ins.vector();
        let n = vector.unwrap_or(1);
        if n > 8 || type_bytes(ty) > 16 {
            return None;
        }
        let addr = cx.addr(pc, &ins.operands[1], ins)?;
        let mut dsts: SmallVec<[Option<Dst>; 4]> = SmallVec::new();
        cx.dsts(&ins.operands[0], Some(ty), &mut dsts)?;
        return Some(Op::Load { addr, size: type_bytes(ty) as u8, n, vector: vector.is_some(), dsts: dsts.into_iter().collect() });
    }
    if op == Opcode::ST {
        if ins.operands.len() != 2 {
            return None;
        }
        let ty = ins.types().last().copied().unwrap_or(ScalarType::B32);
        if type_bytes(ty) > 16 {
            return None;
        }
        let addr = cx.addr(pc, &ins.operands[0], ins)?;
        if matches!(addr, Addr::Fixed { space: Space::Const, .. } | Addr::Reg { space: Some(Space::Const), .. }) {
            return None;
        }
        let mut srcs = SmallVec::new();
        cx.src(&ins.operands[1], cx.operand_type(pc, 1), &mut srcs)?;
        return Some(Op::Store { addr, size: type_bytes(ty) as u8, vector: ins.vector().is_some(), srcs: srcs.into_iter().collect() });
    }
    if op == Opcode::CVTA {
        return cvta(cx, pc, ins);
    }
    if op == Opcode::BAR || op == Opcode::BARRIER {
        return barrier(cx, pc, ins);
    }
    if op == Opcode::MOV {
        if ins.operands.iter().any(|o| matches!(o, Operand::Sym(_) | Operand::SReg(..))) {
            return mov_special_or_address(cx, pc, ins);
        }
        if let Some(Operand::Imm(_)) = ins.operands.get(1) {
            let mut srcs: SmallVec<[Src; 4]> = SmallVec::new();
            cx.src(&ins.operands[1], cx.operand_type(pc, 1), &mut srcs)?;
            let mut dsts: SmallVec<[Option<Dst>; 2]> = SmallVec::new();
            cx.dsts(&ins.operands[0], cx.operand_type(pc, 0), &mut dsts)?;
            return Some(Op::Copy { src: srcs[0], dst: dsts.first().copied().flatten() });
        }
        if let Some(op) = pack_or_unpack(cx, pc, ins) {
            return Some(op);
        }
    }
    // The instructions `step` handles before the pure ones.
    if !eval::handles(op) || super::warp::is_collective(op) || !ins.form.flags().is_pure() || ins.form.operands().iter().any(|o| o.mem.is_some()) {
        return None;
    }
    let mut srcs: SmallVec<[Src; 4]> = SmallVec::new();
    let mut dsts: SmallVec<[Option<Dst>; 2]> = SmallVec::new();
    for (k, (o, spec)) in ins.operands.iter().zip(ins.form.operands()).enumerate() {
        if spec.read {
            cx.src(o, cx.operand_type(pc, k), &mut srcs)?;
        }
    }
    for (k, (o, spec)) in ins.operands.iter().zip(ins.form.operands()).enumerate() {
        if spec.write {
            cx.dsts(o, cx.operand_type(pc, k), &mut dsts)?;
        }
    }
    if cx.effective_is_written(pc) && srcs.len() <= 3 {
        let mut s = [Src::Imm(0); 3];
        s[..srcs.len()].copy_from_slice(&srcs);
        match (dsts.as_slice(), alu_op(ins, srcs.len()), PairSetp::of(ins, srcs.len())) {
            (&[dst], Some(AnyAluOp::Common(op)), _) => return Some(Op::Alu { op, srcs: s, dst }),
            (&[dst], Some(AnyAluOp::Checked(op)), _) => return Some(Op::CheckedAlu { op, srcs: s, dst }),
            (&[p, q], _, Some(op)) => return Some(Op::PairSetp { op, srcs: s, dsts: [p, q] }),
            _ => {}
        }
    }
    Some(Op::Eval { srcs: srcs.into_iter().collect(), dsts: dsts.into_iter().collect() })
}

/// `mov` packing a vector of 2 or 4 elements into a `.b16`, `.b32` or
/// `.b64` register, or unpacking one into them, as the evaluator's `mov`
/// computes it (`None` for every other form, left to the evaluator).
fn pack_or_unpack(cx: &Context, pc: usize, ins: &Instruction) -> Option<Op> {
    let &[t] = ins.types().as_slice() else { return None };
    if !cx.effective_is_written(pc) || ins.vector().is_some() || ins.operands.len() != 2 || !matches!(t, ScalarType::B16 | ScalarType::B32 | ScalarType::B64) {
        return None;
    }
    let elems = |v: &[Operand]| Some(t.bits() / v.len() as u32).filter(|&e| matches!(v.len(), 2 | 4) && e >= 8);
    let mut srcs: SmallVec<[Src; 4]> = SmallVec::new();
    cx.src(&ins.operands[1], cx.operand_type(pc, 1), &mut srcs)?;
    match (&ins.operands[0], &ins.operands[1]) {
        (Operand::Reg(_), Operand::Vector(v)) if srcs.len() == v.len() => {
            let elem = elems(v)?;
            let mut dsts: SmallVec<[Option<Dst>; 1]> = SmallVec::new();
            cx.dsts(&ins.operands[0], cx.operand_type(pc, 0), &mut dsts)?;
            let &[dst] = dsts.as_slice() else { return None };
            Some(Op::Pack { srcs: srcs.into_iter().collect(), elem, dst })
        }
        (Operand::Vector(v), Operand::Reg(_) | Operand::Imm(_)) if srcs.len() == 1 => {
            let elem = elems(v)?;
            let mut dsts: SmallVec<[Option<Dst>; 4]> = SmallVec::new();
            cx.dsts(&ins.operands[0], cx.operand_type(pc, 0), &mut dsts)?;
            Some(Op::Unpack { src: srcs[0], elem, dsts: dsts.into_iter().collect() })
        }
        _ => None,
    }
}

/// The one destination of operand 0 written with type `ty`, if the
/// instruction has just that one written operand.
fn single_dst(cx: &Context, ins: &Instruction, ty: Option<ScalarType>) -> Option<Dst> {
    let specs = ins.form.operands();
    if ins.operands.len() != 2 || specs.len() != 2 || !specs[0].write || specs[0].read || specs[1].write || !specs[1].read {
        return None;
    }
    let Operand::Reg(_) = ins.operands[0] else { return None };
    let mut dsts: SmallVec<[Option<Dst>; 2]> = SmallVec::new();
    cx.dsts(&ins.operands[0], ty, &mut dsts)?;
    match dsts.as_slice() {
        [Some(d)] => Some(*d),
        _ => None,
    }
}

/// `mov d, %sreg` (`Cta::read` of a special register, then
/// `write_results`) and `mov d, var` (`Cta::symbol_value`).
fn mov_special_or_address(cx: &Context, pc: usize, ins: &Instruction) -> Option<Op> {
    let dst = single_dst(cx, ins, cx.operand_type(pc, 0))?;
    match &ins.operands[1] {
        // A clock's value is not determined by the program: `step` marks it.
        Operand::SReg(s, sel) if !s.is_volatile() => {
            let mask = cx.operand_type(pc, 1).map_or(u128::MAX, |t| eval::bits_mask(t.bits()));
            Some(Op::Special { reg: super::special::Special::of(*s, *sel), mask, dst })
        }
        Operand::Sym(s) => {
            let (name, off) = (&s.name, s.offset);
            let at = match cx.layout.lookup(name, pc).or_else(|| cx.globals.get(name).copied())? {
                VarLoc::Global(a) | VarLoc::Func(a) => a,
                VarLoc::Const(o) | VarLoc::Shared(o) | VarLoc::Param(o) | VarLoc::ModuleLocal(o) => o,
                VarLoc::Local(o) => return Some(Op::FrameAddr { offset: o.wrapping_add(off as u64), dst }),
                VarLoc::Reg(_) => return None,
            };
            Some(Op::Copy { src: Src::Imm(at.wrapping_add(off as u64) as u128), dst: Some(dst) })
        }
        _ => None,
    }
}

/// `cvta` (`Cta::cvta`): a register or immediate address, the result
/// written with no operand type.
fn cvta(cx: &Context, pc: usize, ins: &Instruction) -> Option<Op> {
    let dst = single_dst(cx, ins, None)?;
    let mut srcs: SmallVec<[Src; 4]> = SmallVec::new();
    if !matches!(ins.operands[1], Operand::Reg(_) | Operand::Imm(_)) {
        return None;
    }
    cx.src(&ins.operands[1], cx.operand_type(pc, 1), &mut srcs)?;
    let &[src] = srcs.as_slice() else { return None };
    let shift = match space_of(ins.space()) {
        Some(Space::Global) | None => 0,
        Some(s) if ins.has(Mod::TO) => s.generic_base().wrapping_neg(),
        Some(s) => s.generic_base(),
    };
    Some(Op::Cvta { src, shift, dst })
}

/// `bar.sync a{, b}` and `barrier.sync a{, b}` (`Cta::barrier`): one
/// value each for the number and the count.
fn barrier(cx: &Context, pc: usize, ins: &Instruction) -> Option<Op> {
    if ins.has(Mod::RED) || ins.has(Mod::ARRIVE) || ins.operands.is_empty() || ins.operands.len() > 2 {
        return None;
    }
    let mut srcs: SmallVec<[Src; 4]> = SmallVec::new();
    for (k, o) in ins.operands.iter().enumerate() {
        if !matches!(o, Operand::Reg(_) | Operand::Imm(_)) {
            return None;
        }
        cx.src(o, cx.operand_type(pc, k), &mut srcs)?;
    }
    if srcs.len() != ins.operands.len() {
        return None;
    }
    match srcs.as_slice() {
        [id] => Some(Op::Barrier { id: *id, count: None }),
        [id, count] => Some(Op::Barrier { id: *id, count: Some(*count) }),
        _ => None,
    }
}

/// The [`AluOp`] or [`CheckedAluOp`] that computes `ins` (with `nsrcs`
/// sources), if one does: no `.sat`, `.ftz`, rounding other than `.rn`
/// (but a narrowing floating-point `cvt`'s), packed types or video
/// selectors.
pub(super) fn alu_op(ins: &Instruction, nsrcs: usize) -> Option<AnyAluOp> {
    let types = ins.types();
    match ins.opcode {
        Opcode::CVT => return int_cvt(ins, &types, nsrcs).map(AnyAluOp::Common).or_else(|| float_cvt(ins, &types, nsrcs).or_else(|| scalar_cvt(ins, nsrcs)).map(AnyAluOp::Checked)),
        Opcode::SET => return set(ins, &types, nsrcs).map(AnyAluOp::Checked),
        Opcode::SLCT => return slct(ins, &types, nsrcs).map(AnyAluOp::Checked),
        _ => {}
    }
    let &[t] = types.as_slice() else { return None };
    let n = t.bits();
    use ScalarType as T;
    // (Packed types like `.u16x2` are of these classes too: left out by name.)
    let int = matches!(t, T::U16 | T::U32 | T::U64 | T::S16 | T::S32 | T::S64);
    let bits_type = matches!(t, T::B16 | T::B32 | T::B64);
    let signed = t.class() == TypeClass::Signed;
    let mods = other_mods(ins);
    let plain = mods.is_empty();
    if ins.operands.iter().any(|o| matches!(o, Operand::Reg(r) if r.sel.is_some() || r.prefix != Prefix::None) || matches!(o, Operand::Pair(..) | Operand::Vector(..))) {
        // A `!c` is allowed as the predicate of `selp` and of a combining `setp` only.
        if !(matches!(ins.opcode, Opcode::SELP | Opcode::SETP) && ins.operands.iter().take(3).all(plain_operand)) {
            return None;
        }
    }
    let mode = |m: Mod| mods.as_slice() == [m];
    let op: AnyAluOp = match ins.opcode {
        Opcode::ADD if int && plain && nsrcs == 2 => AluOp::Add(n).into(),
        Opcode::SUB if int && plain && nsrcs == 2 => AluOp::Sub(n).into(),
        Opcode::MUL if int && nsrcs == 2 && mode(Mod::LO) => AluOp::MulLo(n).into(),
        Opcode::MUL if int && nsrcs == 2 && mode(Mod::HI) => AluOp::MulHi { n, signed }.into(),
        Opcode::MUL if int && nsrcs == 2 && n < 64 && mode(Mod::WIDE) => AluOp::MulWide { n, signed }.into(),
        Opcode::MAD if int && nsrcs == 3 && mode(Mod::LO) => AluOp::MadLo(n).into(),
        Opcode::MAD if int && nsrcs == 3 && mode(Mod::HI) => AluOp::MadHi { n, signed }.into(),
        Opcode::MAD if int && nsrcs == 3 && n < 64 && mode(Mod::WIDE) => AluOp::MadWide { n, signed }.into(),
        Opcode::AND | Opcode::OR | Opcode::XOR | Opcode::NOT if plain && (bits_type || t == T::Pred) => {
            let w = width(t);
            match (ins.opcode, nsrcs) {
                (Opcode::AND, 2) => AluOp::And(w),
                (Opcode::OR, 2) => AluOp::Or(w),
                (Opcode::XOR, 2) => AluOp::Xor(w),
                (Opcode::NOT, 1) => AluOp::Not(w),
                _ => return None,
            }
            .into()
        }
        Opcode::SHL if plain && nsrcs == 2 && bits_type => AluOp::Shl(n).into(),
        Opcode::SHR if plain && nsrcs == 2 && (int || bits_type) => AluOp::Shr { n, signed }.into(),
        Opcode::SETP if nsrcs == 2 && (int || bits_type) => {
            let &[m] = mods.as_slice() else { return None };
            let ModKind::Cmp(c) = m.kind() else { return None };
            AluOp::Setp { cmp: IntCmp::of(c, t.class())?, n }.into()
        }
        Opcode::SELP if plain && nsrcs == 3 && (int || bits_type || matches!(t, T::F32 | T::F64)) => AluOp::Selp(n).into(),
        Opcode::MOV if plain && nsrcs == 1 && ins.vector().is_none() && (int || bits_type || matches!(t, T::F32 | T::F64 | T::Pred)) => AluOp::Mov(width(t)).into(),
        Opcode::ADD | Opcode::ADDC if int && nsrcs == 2 && only(&mods, &[Mod::CC]) && (ins.opcode == Opcode::ADDC || !plain) => {
            CheckedAluOp::AddCarry { n, carry_in: ins.opcode == Opcode::ADDC, carry_out: !plain }.into()
        }
        Opcode::SUB | Opcode::SUBC if int && nsrcs == 2 && only(&mods, &[Mod::CC]) && (ins.opcode == Opcode::SUBC || !plain) => {
            CheckedAluOp::SubCarry { n, borrow_in: ins.opcode == Opcode::SUBC, carry_out: !plain }.into()
        }
        Opcode::MAD | Opcode::MADC if int && nsrcs == 3 && only(&mods, &[Mod::LO, Mod::HI, Mod::CC]) && mods.contains(&Mod::LO) != mods.contains(&Mod::HI) && (ins.opcode == Opcode::MADC || mods.contains(&Mod::CC)) => {
            CheckedAluOp::MadCarry { n, hi: mods.contains(&Mod::HI), signed, carry_in: ins.opcode == Opcode::MADC, carry_out: mods.contains(&Mod::CC) }.into()
        }
        Opcode::DIV if int && plain && nsrcs == 2 => CheckedAluOp::Div { n, signed }.into(),
        Opcode::REM if int && plain && nsrcs == 2 => CheckedAluOp::Rem { n, signed }.into(),
        Opcode::MIN if int && plain && nsrcs == 2 => CheckedAluOp::Min { n, signed }.into(),
        Opcode::MAX if int && plain && nsrcs == 2 => CheckedAluOp::Max { n, signed }.into(),
        Opcode::POPC if plain && nsrcs == 1 && matches!(t, T::B32 | T::B64) => CheckedAluOp::Popc(n).into(),
        Opcode::CLZ if plain && nsrcs == 1 && matches!(t, T::B32 | T::B64) => CheckedAluOp::Clz(n).into(),
        Opcode::BREV if plain && nsrcs == 1 && matches!(t, T::B32 | T::B64) => CheckedAluOp::Brev(n).into(),
        Opcode::SETP if nsrcs == 2 && matches!(t, T::F32 | T::F64) => {
            let &[m] = mods.as_slice() else { return None };
            let ModKind::Cmp(cmp) = m.kind() else { return None };
            CheckedAluOp::FloatSetp { cmp: float_cmp(cmp)?, double: t == T::F64 }.into()
        }
        Opcode::SETP if nsrcs == 3 => {
            let &[cm, bm] = mods.as_slice() else { return None };
            let (ModKind::Cmp(cmp), ModKind::Bool(combine)) = (cm.kind(), bm.kind()) else { return None };
            CheckedAluOp::CombinedSetp { compare: compare_of(cmp, t)?, combine }.into()
        }
        Opcode::ADD | Opcode::SUB | Opcode::MUL | Opcode::FMA if matches!(t, T::F32 | T::F64) && only(&mods, &[Mod::RN]) && (ins.opcode != Opcode::FMA || !plain) => {
            let op = match (ins.opcode, nsrcs) {
                (Opcode::ADD, 2) => FloatOp::Add,
                (Opcode::SUB, 2) => FloatOp::Sub,
                (Opcode::MUL, 2) => FloatOp::Mul,
                (Opcode::FMA, 3) => FloatOp::Fma,
                _ => return None,
            };
            CheckedAluOp::FloatArith { op, double: t == T::F64 }.into()
        }
        _ => return None,
    };
    Some(op)
}

/// Are all of `mods` among `allowed`?
fn only(mods: &[Mod], allowed: &[Mod]) -> bool {
    mods.iter().all(|m| allowed.contains(m))
}

/// A comparison of floating-point values (not one of the unsigned
/// integer comparisons `.lo .ls .hi .hs`).
fn float_cmp(cmp: CmpOp) -> Option<CmpOp> {
    Some(cmp).filter(|c| !matches!(c, CmpOp::Lo | CmpOp::Ls | CmpOp::Hi | CmpOp::Hs))
}

/// A register without a vector selector or prefix, or an immediate.
fn plain_operand(o: &Operand) -> bool {
    matches!(o, Operand::Reg(r) if r.sel.is_none() && r.prefix == Prefix::None) || matches!(o, Operand::Imm(_))
}

/// `cvt` between integer types, if `ins` is one with nothing more (no
/// `.sat`, no rounding, a plain register or immediate source): what
/// `eval`'s integer-to-integer conversion computes.
fn int_cvt(ins: &Instruction, types: &[ScalarType], nsrcs: usize) -> Option<AluOp> {
    use ScalarType as T;
    let int = |t: ScalarType| matches!(t, T::U8 | T::U16 | T::U32 | T::U64 | T::S8 | T::S16 | T::S32 | T::S64);
    let &[d, a] = types else { return None };
    if nsrcs != 1 || !int(d) || !int(a) || !other_mods(ins).is_empty() || !ins.operands.iter().all(plain_operand) {
        return None;
    }
    Some(AluOp::Cvt { from: a.bits(), signed: a.class() == TypeClass::Signed, to: d.bits() })
}

/// Any other scalar `cvt` of a plain source that the evaluator computes.
fn scalar_cvt(ins: &Instruction, nsrcs: usize) -> Option<CheckedAluOp> {
    if nsrcs != 1 || !ins.operands.iter().all(plain_operand) {
        return None;
    }
    eval::ScalarCvt::of(ins).map(CheckedAluOp::Cvt)
}

/// The comparison `cmp` of values of type `t` computed here: of 16-, 32-
/// or 64-bit integers or bits (`n` bits wide), or of `.f32` or `.f64` values.
fn compare_of(cmp: CmpOp, t: ScalarType) -> Option<Compare> {
    use ScalarType as T;
    Some(match t {
        T::U16 | T::U32 | T::U64 | T::S16 | T::S32 | T::S64 | T::B16 | T::B32 | T::B64 => Compare::Int { cmp: IntCmp::of(cmp, t.class())?, n: t.bits() },
        T::F32 | T::F64 => Compare::Float { cmp: float_cmp(cmp)?, double: t == T::F64 },
        _ => return None,
    })
}

/// `set.cmp{.bool}.dtype.stype` into a `.u32`, `.s32` or `.f32`
/// destination with a comparison [`compare_of`] computes, nothing more (no
/// `.ftz`), its sources plain (but a `!c`).
fn set(ins: &Instruction, types: &[ScalarType], nsrcs: usize) -> Option<CheckedAluOp> {
    use ScalarType as T;
    let &[d, s] = types else { return None };
    let (cmp, combine) = comparison(ins)?;
    if nsrcs != 2 + combine.is_some() as usize || !matches!(d, T::U32 | T::S32 | T::F32) || !ins.operands.iter().take(3).all(plain_operand) {
        return None;
    }
    Some(CheckedAluOp::Set { compare: compare_of(cmp, s)?, combine, true_bits: eval::set_true(d) as u32 })
}

/// `slct{.ftz}.dtype.s32` and `slct{.ftz}.dtype.f32` of a 16-, 32- or
/// 64-bit `dtype` (not a packed one), plain sources.
fn slct(ins: &Instruction, types: &[ScalarType], nsrcs: usize) -> Option<CheckedAluOp> {
    use ScalarType as T;
    let &[d, c] = types else { return None };
    let ftz = match other_mods(ins).as_slice() {
        [] => false,
        [Mod::FTZ] => true,
        _ => return None,
    };
    if nsrcs != 3 || !matches!(c, T::S32 | T::F32) || !ins.operands.iter().all(plain_operand) {
        return None;
    }
    if !matches!(d, T::B16 | T::B32 | T::B64 | T::U16 | T::U32 | T::U64 | T::S16 | T::S32 | T::S64 | T::F32 | T::F64) {
        return None;
    }
    Some(CheckedAluOp::Slct { n: d.bits(), float: c == T::F32, ftz })
}

/// `cvt` from `.f32` or `.f64` to a narrower `.f16`, `.bf16` or `.f32`, if
/// `ins` is one with a rounding to a float (`.rn .rz .rm .rp`) and nothing
/// more (no `.ftz`, `.sat`, `.relu`, `.satfinite`; a plain source).
fn float_cvt(ins: &Instruction, types: &[ScalarType], nsrcs: usize) -> Option<CheckedAluOp> {
    use ScalarType as T;
    let &[d, a] = types else { return None };
    let &[m] = other_mods(ins).as_slice() else { return None };
    let ModKind::Rounding(r) = m.kind() else { return None };
    if nsrcs != 1 || r.is_integer() || !matches!(a, T::F32 | T::F64) || !matches!(d, T::F16 | T::Bf16 | T::F32) || d.bits() >= a.bits() || !ins.operands.iter().all(plain_operand) {
        return None;
    }
    Some(CheckedAluOp::FloatCvt { from_double: a == T::F64, to: d, round: eval::round_of(r)? })
}

/// The low `n` bits set, for a width of 1 to 128 bits (every [`AluOp`]'s:
/// `eval::bits_mask` without its test for the widths outside that).
#[inline]
fn width_mask(n: u32) -> u128 {
    u128::MAX >> (128 - n)
}

/// The quality of a result of quality `q` computed from inputs of the worst
/// quality `input` (what `Cta::step` gives a pure instruction's results).
#[inline]
pub fn result_quality(q: Quality, input: Quality) -> Quality {
    match (q, input) {
        (q, Quality::Exact) => q,
        (Quality::AnyNan, Quality::AnyNan) => Quality::AnyNan,
        (q, Quality::Approx { .. }) if q != Quality::Unspecified => super::memory::worst(q, input),
        _ => Quality::Unspecified,
    }
}

impl AluOp {
    /// The result bits from the sources' bits. No form is wider than 64
    /// bits (the decoder takes no wider type, and the wide products are of
    /// 16- and 32-bit sources), so all but the products whose high half is
    /// kept are computed on the sources' low 64 bits, which give the low
    /// bits the 128-bit arithmetic gives, in fewer host instructions.
    #[inline]
    pub fn apply(self, a: u128, b: u128, c: u128) -> u128 {
        let product = |n: u32, signed: bool| if signed { (eval::sext(a, n) * eval::sext(b, n)) as u128 } else { (a & width_mask(n)) * (b & width_mask(n)) };
        let (x, y, z) = (a as u64, b as u64, c as u64);
        let mask = eval::mask64;
        u128::from(match self {
            AluOp::Add(n) => x.wrapping_add(y) & mask(n),
            AluOp::Sub(n) => x.wrapping_sub(y) & mask(n),
            AluOp::MulLo(n) => x.wrapping_mul(y) & mask(n),
            AluOp::MulHi { n, signed } => (product(n, signed) >> n) as u64 & mask(n),
            AluOp::MulWide { n, signed } => product(n, signed) as u64 & mask(2 * n),
            AluOp::MadLo(n) => x.wrapping_mul(y).wrapping_add(z) & mask(n),
            AluOp::MadHi { n, signed } => ((product(n, signed) >> n) as u64).wrapping_add(z) & mask(n),
            AluOp::MadWide { n, signed } => (product(n, signed) as u64).wrapping_add(z) & mask(2 * n),
            AluOp::And(w) => x & y & mask(w),
            AluOp::Or(w) => (x | y) & mask(w),
            AluOp::Xor(w) => (x ^ y) & mask(w),
            AluOp::Not(w) => !x & mask(w),
            AluOp::Shl(w) => {
                let s = (b as u32).min(w);
                if s >= w {
                    0
                } else {
                    (x << s) & mask(w)
                }
            }
            AluOp::Shr { n, signed } => {
                let s = (b as u32).min(n);
                if signed {
                    (eval::sext64(x & mask(n), n) >> s.min(n - 1)) as u64 & mask(n)
                } else if s >= n {
                    0
                } else {
                    (x & mask(n)) >> s
                }
            }
            AluOp::Setp { cmp, n } => cmp.holds(a, b, n) as u64,
            AluOp::Selp(n) => (if z & 1 == 1 { x } else { y }) & mask(n),
            AluOp::Mov(w) => x & mask(w),
            AluOp::Cvt { from, signed, to } => (if signed { eval::sext64(x, from) as u64 } else { x & mask(from) }) & mask(to),
        })
    }
}

/// The value of the bits of a `.f32` (or `.f64` when `double`), exactly.
#[inline]
fn float_value(bits: u128, double: bool) -> f64 {
    if double {
        f64::from_bits(bits as u64)
    } else {
        f64::from(f32::from_bits(bits as u32))
    }
}

impl FloatOp {
    /// The operation on `x` and `y` (and `z` for `fma`, through `fma`,
    /// which rounds once).
    #[inline]
    fn apply<F: std::ops::Add<Output = F> + std::ops::Sub<Output = F> + std::ops::Mul<Output = F>>(self, x: F, y: F, z: F, fma: fn(F, F, F) -> F) -> F {
        match self {
            FloatOp::Add => x + y,
            FloatOp::Sub => x - y,
            FloatOp::Mul => x * y,
            FloatOp::Fma => fma(x, y, z),
        }
    }
}

impl Compare {
    /// Does the comparison hold between `a` and `b`? (`None` for no
    /// comparison of values: `eval::float_compare`'s integer ones.)
    #[inline]
    fn holds(self, a: u128, b: u128) -> Option<bool> {
        match self {
            Compare::Int { cmp, n } => Some(cmp.holds(a, b, n)),
            Compare::Float { cmp, double } => eval::float_compare(cmp, float_value(a, double), float_value(b, double)),
        }
    }
}

impl CheckedAluOp {
    /// The result bits from the sources' bits, reading and setting the
    /// carry flag `carry` for the carry forms; `None` (the flag untouched)
    /// when the evaluator gives no exact value for these sources.
    pub fn apply(self, a: u128, b: u128, c: u128, carry: &mut bool) -> Option<u128> {
        let mask = width_mask;
        let product = |n: u32, signed: bool| if signed { (eval::sext(a, n) * eval::sext(b, n)) as u128 } else { (a & mask(n)) * (b & mask(n)) };
        let int = |x: u128, n: u32, signed: bool| if signed { eval::sext(x, n) } else { (x & mask(n)) as i128 };
        let flag = *carry;
        // A sum of at most `n + 1` bits: its low `n`, setting the flag to
        // the carry out when asked.
        let mut carried = |sum: u128, n: u32, carry_out: bool| {
            if carry_out {
                *carry = sum >> n != 0;
            }
            sum & mask(n)
        };
        Some(match self {
            CheckedAluOp::AddCarry { n, carry_in, carry_out } => carried((a & mask(n)) + (b & mask(n)) + (carry_in && flag) as u128, n, carry_out),
            CheckedAluOp::SubCarry { n, borrow_in, carry_out } => carried((a & mask(n)) + (!b & mask(n)) + (!borrow_in || flag) as u128, n, carry_out),
            CheckedAluOp::MadCarry { n, hi, signed, carry_in, carry_out } => {
                let p = product(n, signed);
                let part = if hi { (p >> n) & mask(n) } else { p & mask(n) };
                carried(part + (c & mask(n)) + (carry_in && flag) as u128, n, carry_out)
            }
            CheckedAluOp::Div { n, signed } => {
                let (x, y) = (int(a, n, signed), int(b, n, signed));
                if y == 0 || (signed && x == -(1i128 << (n - 1)) && y == -1) {
                    return None;
                }
                (x / y) as u128 & mask(n)
            }
            CheckedAluOp::Rem { n, signed } => {
                let (x, y) = (int(a, n, signed), int(b, n, signed));
                if y == 0 {
                    return None;
                }
                (x % y) as u128 & mask(n)
            }
            CheckedAluOp::Min { n, signed } => int(a, n, signed).min(int(b, n, signed)) as u128 & mask(n),
            CheckedAluOp::Max { n, signed } => int(a, n, signed).max(int(b, n, signed)) as u128 & mask(n),
            CheckedAluOp::Popc(n) => (a & mask(n)).count_ones() as u128,
            CheckedAluOp::Clz(n) => ((a & mask(n)).leading_zeros() - (128 - n)) as u128,
            CheckedAluOp::Brev(n) => (a & mask(n)).reverse_bits() >> (128 - n),
            CheckedAluOp::FloatSetp { cmp, double } => eval::float_compare(cmp, float_value(a, double), float_value(b, double))? as u128,
            CheckedAluOp::CombinedSetp { compare, combine } => combine.apply(compare.holds(a, b)?, c & 1 == 1) as u128,
            CheckedAluOp::Set { compare, combine, true_bits } => {
                let holds = compare.holds(a, b)?;
                if eval::combine(combine, holds, c & 1 == 1) {
                    u128::from(true_bits)
                } else {
                    0
                }
            }
            CheckedAluOp::Slct { n, float, ftz } => (if eval::slct_selects_a(float, c, ftz) { a } else { b }) & mask(n),
            CheckedAluOp::FloatCvt { from_double, to, round } => eval::round_f64(float_value(a, from_double), to, round)?,
            CheckedAluOp::Cvt(cvt) => {
                let v = cvt.apply(a);
                (v.quality == Quality::Exact).then_some(v.bits)?
            }
            // A NaN's bits are the reference path's to give.
            CheckedAluOp::FloatArith { op, double: true } => {
                let f = |x: u128| f64::from_bits(x as u64);
                let r = op.apply(f(a), f(b), f(c), f64::mul_add);
                u128::from((!r.is_nan()).then_some(r.to_bits())?)
            }
            CheckedAluOp::FloatArith { op, double: false } => {
                let f = |x: u128| f32::from_bits(x as u32);
                let r = op.apply(f(a), f(b), f(c), f32::mul_add);
                u128::from((!r.is_nan()).then_some(r.to_bits())?)
            }
        })
    }
}
