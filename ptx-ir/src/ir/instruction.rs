//! Instructions and their operands.

use super::{FloatLit, IntLit, LabelId, Name, RegId, SpecialReg};
use crate::isa::{match_form, BoolOp, CmpOp, FormId, FormMismatch, Mod, ModKind, Opcode, Rounding, ScalarType, SlotRole, StateSpace};
use crate::isa::matcher::{ParsedKind, SlotMods};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::cell::RefCell;

/// One PTX instruction: guard, opcode, the matched syntax form, modifiers
/// aligned with that form's slots, and operands.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Instruction {
    pub guard: Option<Guard>,
    pub opcode: Opcode,
    pub form: FormId,
    /// One entry per slot of `form`; `Mod::NONE` where an optional slot is empty.
    pub mods: SlotMods,
    pub operands: Operands,
}

/// An instruction's operands: three held in place (nineteen instructions in
/// twenty have at most three; four would make an instruction a larger
/// allocation, 160 bytes instead of 128).
pub type Operands = SmallVec<[Operand; 3]>;

/// `@p` or `@!p`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Guard {
    pub reg: RegId,
    pub negated: bool,
}

impl Instruction {
    /// Builds an instruction from modifiers in any order, checking them and
    /// the operands against the ISA tables (the way the parser does).
    pub fn new(opcode: Opcode, mods: &[Mod], operands: impl IntoIterator<Item = Operand>) -> Result<Instruction, FormMismatch> {
        let operands: Operands = operands.into_iter().collect();
        let kinds: SmallVec<[ParsedKind; 4]> = operands.iter().map(Operand::parsed_kind).collect();
        let (form, mods) = matched_form(opcode, mods, &kinds)?;
        Ok(Instruction { guard: None, opcode, form, mods, operands })
    }

    /// The written modifiers with the role of their slot, in canonical order.
    pub fn modifiers(&self) -> impl Iterator<Item = (SlotRole, Mod)> + '_ {
        self.form.slots().iter().zip(self.mods.iter()).filter(|(_, m)| **m != Mod::NONE).map(|(s, m)| (s.role, *m))
    }

    /// Is this modifier written?
    pub fn has(&self, m: Mod) -> bool {
        self.mods.contains(&m)
    }

    /// The data types, in slot order (`cvt.f32.s32` gives `[F32, S32]`).
    pub fn types(&self) -> SmallVec<[ScalarType; 4]> {
        self.type_mods().collect()
    }

    /// The first data type (the instruction type for most opcodes), found
    /// without collecting the others: the evaluator and the interpreter ask
    /// for it at every instruction they run.
    pub fn ty(&self) -> Option<ScalarType> {
        self.type_mods().next()
    }

    fn type_mods(&self) -> impl Iterator<Item = ScalarType> + '_ {
        self.mods_in(SlotRole::Type).filter_map(|m| match m.kind() {
            ModKind::Type(t) => Some(t),
            _ => None,
        })
    }

    /// The written modifiers of the slots of one role, in slot order: the
    /// typed accessors' scan, which classifies only the modifiers of the
    /// role it asks for (they run at every evaluated instruction).
    fn mods_in(&self, role: SlotRole) -> impl Iterator<Item = Mod> + '_ {
        self.modifiers().filter(move |(r, _)| *r == role).map(|(_, m)| m)
    }

    pub fn rounding(&self) -> Option<Rounding> {
        self.mods_in(SlotRole::Rounding).find_map(|m| match m.kind() {
            ModKind::Rounding(x) => Some(x),
            _ => None,
        })
    }

    pub fn cmp(&self) -> Option<CmpOp> {
        self.mods_in(SlotRole::Cmp).find_map(|m| match m.kind() {
            ModKind::Cmp(x) => Some(x),
            _ => None,
        })
    }

    pub fn bool_op(&self) -> Option<BoolOp> {
        self.mods_in(SlotRole::Bool).find_map(|m| match m.kind() {
            ModKind::Bool(x) => Some(x),
            _ => None,
        })
    }

    /// State-space modifiers in slot order (`cp.async.ca.shared.global` gives shared, global).
    pub fn spaces(&self) -> SmallVec<[StateSpace; 2]> {
        self.space_mods().collect()
    }

    /// The first state space, or `Generic` when none is written.
    pub fn space(&self) -> StateSpace {
        self.space_mods().next().unwrap_or(StateSpace::Generic)
    }

    /// The state-space modifiers in slot order, one at a time ([`Instruction::spaces`]).
    pub(crate) fn space_mods(&self) -> impl Iterator<Item = StateSpace> + '_ {
        self.mods_in(SlotRole::Space).filter_map(|m| match m.kind() {
            ModKind::Space(s) => Some(s),
            _ => None,
        })
    }

    /// `.v2`/`.v4`/`.v8`.
    /// The type operand position `k` expects: the form's operand type
    /// resolved against the instruction's type modifiers (`mul.wide.u32`'s
    /// result is `.u64`), or the instruction type when the form says nothing.
    pub fn operand_type(&self, k: usize) -> Option<ScalarType> {
        use crate::isa::OperandType;
        let ty = |s: u8| match self.mods.get(s as usize).map(|m| m.kind()) {
            Some(ModKind::Type(t)) => Some(t),
            _ => None,
        };
        match self.form.operands().get(k).map(|o| o.ty) {
            Some(OperandType::Slot(s)) => ty(s),
            Some(OperandType::Wide(s)) => ty(s).and_then(crate::verify::wider_type),
            Some(OperandType::Half(s)) => ty(s).and_then(crate::verify::narrower_type),
            Some(OperandType::Fixed(t)) => Some(t),
            _ => self.ty(),
        }
    }

    pub fn vector(&self) -> Option<u8> {
        self.mods_in(SlotRole::Vector).find_map(|m| match m.kind() {
            ModKind::Vector(n) => Some(n),
            _ => None,
        })
    }
}

/// Most instruction shapes [`matched_form`] remembers per thread.
const MATCHED_LIMIT: usize = 4096;

/// [`match_form`], remembered per thread: passes and back ends make the same
/// few instruction shapes many times over, and matching a form costs more
/// than the rest of making an instruction.
fn matched_form(opcode: Opcode, mods: &[Mod], kinds: &[ParsedKind]) -> Result<(FormId, SlotMods), FormMismatch> {
    type Shape = (Opcode, SmallVec<[Mod; 8]>, SmallVec<[ParsedKind; 4]>);
    thread_local! {
        static MATCHED: RefCell<FxHashMap<Shape, (FormId, SlotMods)>> = RefCell::default();
    }
    let shape: Shape = (opcode, SmallVec::from_slice(mods), SmallVec::from_slice(kinds));
    if let Some(hit) = MATCHED.with(|m| m.borrow().get(&shape).cloned()) {
        return Ok(hit);
    }
    let matched = match_form(opcode, mods, kinds)?;
    MATCHED.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() < MATCHED_LIMIT {
            m.insert(shape, matched.clone());
        }
    });
    Ok(matched)
}

/// The component or lane selector after a register: `%v.x`, `r.b0`, `r.h1`,
/// and the packed lane lists of the SIMD video instructions (`r.b3210`, `r.h10`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Selector {
    X,
    Y,
    Z,
    W,
    R,
    G,
    B,
    A,
    /// `.b` and 1–4 byte lanes (0–7), e.g. `.b0`, `.b3210`.
    Bytes(Lanes),
    /// `.h` and 1–2 half-word lanes (0–3), e.g. `.h1`, `.h10`.
    Halves(Lanes),
}

/// Up to four lane digits, as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Lanes {
    pub len: u8,
    pub digits: [u8; 4],
}

impl Lanes {
    pub fn digits(&self) -> &[u8] {
        &self.digits[..self.len as usize]
    }
}

impl Selector {
    pub fn write(self, out: &mut String) {
        use Selector::*;
        let (prefix, lanes) = match self {
            X => return out.push_str(".x"),
            Y => return out.push_str(".y"),
            Z => return out.push_str(".z"),
            W => return out.push_str(".w"),
            R => return out.push_str(".r"),
            G => return out.push_str(".g"),
            B => return out.push_str(".b"),
            A => return out.push_str(".a"),
            Bytes(l) => (".b", l),
            Halves(l) => (".h", l),
        };
        out.push_str(prefix);
        for d in lanes.digits() {
            out.push((b'0' + d) as char);
        }
    }

    pub fn from_text(s: &str) -> Option<Selector> {
        use Selector::*;
        Some(match s {
            ".x" => X,
            ".y" => Y,
            ".z" => Z,
            ".w" => W,
            ".r" => R,
            ".g" => G,
            ".b" => B,
            ".a" => A,
            _ => {
                let rest = s.strip_prefix('.')?;
                let (kind, digits) = rest.split_at(1.min(rest.len()));
                let max = match kind {
                    "b" => (4, b'7'),
                    "h" => (2, b'3'),
                    _ => return None,
                };
                if digits.is_empty() || digits.len() > max.0 || !digits.bytes().all(|c| (b'0'..=max.1).contains(&c)) {
                    return None;
                }
                let mut l = Lanes { len: digits.len() as u8, digits: [0; 4] };
                for (k, c) in digits.bytes().enumerate() {
                    l.digits[k] = c - b'0';
                }
                if kind == "b" {
                    Bytes(l)
                } else {
                    Halves(l)
                }
            }
        })
    }

    /// The vector lane a component selector names (`.x`/`.r` = 0 ...).
    pub fn lane(self) -> Option<u8> {
        use Selector::*;
        match self {
            X | R => Some(0),
            Y | G => Some(1),
            Z | B => Some(2),
            W | A => Some(3),
            _ => None,
        }
    }
}

/// A prefix operator on a register operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Prefix {
    None,
    /// `!p`: negated predicate source.
    Not,
    /// `-a`: negated source of the video `vmad`.
    Neg,
}

/// A register operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RegOperand {
    pub reg: RegId,
    pub prefix: Prefix,
    pub sel: Option<Selector>,
}

impl RegOperand {
    pub fn plain(reg: RegId) -> RegOperand {
        RegOperand { reg, prefix: Prefix::None, sel: None }
    }
}

/// An immediate operand.
#[derive(Clone, Debug, PartialEq)]
pub enum Imm {
    Int(IntLit),
    Float(FloatLit),
}

impl Eq for Imm {}
impl std::hash::Hash for Imm {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        match self {
            Imm::Int(i) => i.hash(h),
            Imm::Float(f) => f.to_f64().to_bits().hash(h),
        }
    }
}

/// The base of an address operand.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AddrBase {
    Reg(RegId),
    /// A variable (or parameter) name.
    Sym(Name),
    /// `[imm]`: an absolute address.
    Imm(u64),
}

/// `[base+offset]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Address {
    pub base: AddrBase,
    pub offset: i64,
    /// Followed by `.unified`.
    pub unified: bool,
    /// `[r+0]` rather than `[r]`: ptxas generates different code for the two
    /// in some debug builds, so the printer keeps the spelling.
    pub zero_written: bool,
}

/// `name[index]`: an array element.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ArrayElem {
    pub name: Name,
    pub index: Operand,
}

/// The predicate half of a `d|p` pair: a register, or `_` when unused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PairPred {
    Reg(RegId),
    Sink,
}

/// An instruction operand.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    Reg(RegOperand),
    /// `%r1+4`: a register plus a constant (ptxas accepts it as a source operand).
    RegOffset(RegId, i64),
    /// `%tid.x`, `%laneid`.
    SReg(SpecialReg, Option<Selector>),
    Imm(Imm),
    /// A variable or function name, with an optional byte offset (`foo+8`);
    /// boxed, as the rarer operand, so that every operand stays small.
    Sym(Box<SymOperand>),
    Label(LabelId),
    /// `{a, b, c, d}`.
    Vector(Box<[Operand]>),
    /// `p|q`, `{a, b, c, d}|p`, `_|p`, `p|_`: a result and a predicate result.
    Pair(Box<Operand>, PairPred),
    /// `_`: a result nobody reads.
    Sink,
    Addr(Box<Address>),
    /// `[tex, sampler, {x, y}]`: texture and surface operands.
    AddrList(Box<[Operand]>),
    ArrayElem(Box<ArrayElem>),
    /// `(a, b)`: call return and argument lists.
    List(Box<[Operand]>),
}

/// A variable or function name used as an operand, with a byte offset.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SymOperand {
    pub name: Name,
    pub offset: i64,
}

impl Operand {
    pub fn reg(r: RegId) -> Operand {
        Operand::Reg(RegOperand::plain(r))
    }

    pub fn sym(name: Name, offset: i64) -> Operand {
        Operand::Sym(Box::new(SymOperand { name, offset }))
    }

    /// The kind the form matcher checks.
    pub fn parsed_kind(&self) -> ParsedKind {
        match self {
            Operand::Addr(_) | Operand::AddrList(_) => ParsedKind::Address,
            Operand::ArrayElem(_) => ParsedKind::Either,
            Operand::List(_) => ParsedKind::List,
            _ => ParsedKind::Value,
        }
    }

    /// Every label this operand names, to rewrite.
    pub fn for_each_label_mut(&mut self, f: &mut impl FnMut(&mut LabelId)) {
        match self {
            Operand::Label(l) => f(l),
            Operand::Vector(v) | Operand::AddrList(v) | Operand::List(v) => v.iter_mut().for_each(|o| o.for_each_label_mut(f)),
            Operand::Pair(a, _) => a.for_each_label_mut(f),
            Operand::ArrayElem(e) => e.index.for_each_label_mut(f),
            _ => {}
        }
    }

    /// Every register this operand names (including address bases and vector elements).
    pub fn regs(&self, out: &mut SmallVec<[RegId; 4]>) {
        self.for_each_reg(|r| out.push(r));
    }
}

#[cfg(test)]
mod sizes {
    use super::*;
    use crate::ir::{Decl, Declarator, Stmt, VarDecl};
    use std::mem::size_of;

    /// A body holds one of these per statement, instruction and operand:
    /// pinned, so that a change that makes them larger (parsing slower,
    /// peak memory higher) is a decision rather than an accident. (An
    /// `Operand` is 24 bytes: an immediate's 16 and a tag; what is larger
    /// and rare, a symbol with its offset or a decimal literal's text, is
    /// boxed. An `Instruction` holds three operands inline. A `VarDecl`
    /// holds its one declarator inline, without a small vector's capacity
    /// word, and boxes its rare attributes; a body's `Decl` holds a plain
    /// register declaration in place, in 24 bytes, and boxes any other; a
    /// `Stmt` is as large as a `Loc`.)
    #[test]
    fn ir_node_sizes_are_pinned() {
        assert_eq!(size_of::<Operand>(), 24);
        assert_eq!(size_of::<Instruction>(), 120);
        assert_eq!(size_of::<Stmt>(), 32);
        assert_eq!(size_of::<VarDecl>(), 64);
        assert_eq!(size_of::<Decl>(), 24);
        assert_eq!(size_of::<Declarator>(), 48);
    }
}
