//! The PTX instruction set as data.
//!
//! `build.rs` compiles the tables in `ptx-ir/isa/*.ptxisa` (the manual's
//! syntax blocks plus effect lines) into the statics included here. Everything
//! that needs to know about an instruction reads these tables: the parser
//! matches modifiers and operands against the forms ([`FormId`]), the printer prints
//! modifiers in form order, and the effect analysis reads which operands are
//! written and which touch memory.

pub mod vocab;
pub mod matcher;
mod mismatch;

pub use matcher::{closest_form, closest_forms, match_form, Closest, ParsedKind, SlotMods};
pub use mismatch::{similar_modifier, FormMismatch, Mismatch};
pub use vocab::{classify, BoolOp, CmpOp, ModKind, Rounding, ScalarType, SlotRole, StateSpace, TypeClass};

use rustc_hash::FxHashMap;
use std::sync::OnceLock;

/// An opcode (`add`, `ld`, `cp.async.bulk.tensor`), an index into the tables.
/// Constants such as [`Opcode::ADD`] are generated from the tables.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Opcode(pub(crate) u16);

/// A modifier token (`.rn`, `.f32`, `.L1::evict_last`), an index into the tables.
/// `Mod::NONE` marks an optional slot left empty.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Mod(pub(crate) u16);

/// One syntax form of an opcode, an index into the tables.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FormId(pub(crate) u16);

/// How an instruction touches memory through an address operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemAccess { Load, Store, Atomic, Prefetch }

/// The syntactic kind of an operand position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OperandKind {
    /// Register, immediate, vector, symbol, label, predicate pair ...
    Value,
    /// `[...]`.
    Address,
    /// `(...)`, the return and argument lists of `call`.
    List,
}

/// Effect flags of an opcode (see `isa/README.md`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Flags(u32);

impl Flags {
    pub const NONE: Flags = Flags(0);
    /// Orders or waits for other threads or memory (barriers, fences, waits).
    pub const SYNC: Flags = Flags(1);
    /// Has an effect beyond its operands (trap, breakpoint, performance events ...).
    pub const SIDE_EFFECT: Flags = Flags(2);
    pub const BRANCH: Flags = Flags(4);
    pub const CALL: Flags = Flags(8);
    pub const RET: Flags = Flags(16);
    pub const EXIT: Flags = Flags(32);
    /// Reads the carry flag (`addc`, `subc`, `madc`).
    pub const CARRY_IN: Flags = Flags(64);
    /// Writes the carry flag (`add.cc`, `sub.cc`, `mad.cc`).
    pub const CARRY_OUT: Flags = Flags(128);
    /// Writes the carry flag when the `.cc` modifier is present (`addc.cc`).
    pub const CARRY_OUT_CC: Flags = Flags(256);
    /// Starts work that completes later (cp.async, wgmma, tcgen05 ...).
    pub const ASYNC: Flags = Flags(512);
    /// Reads state that changes on its own (clocks, timers): never merge or remove.
    pub const VOLATILE: Flags = Flags(1024);
    /// Result is an approximation (`.approx` transcendental ops).
    pub const APPROX: Flags = Flags(2048);
    /// Communicates across the lanes of a warp (shfl, vote, match, redux ...).
    pub const WARP: Flags = Flags(4096);
    /// A memory fence.
    pub const FENCE: Flags = Flags(8192);

    pub const fn union(self, o: Flags) -> Flags { Flags(self.0 | o.0) }
    pub const fn bits(self) -> u32 { self.0 }
    pub const fn from_bits(b: u32) -> Flags { Flags(b) }
    pub const fn contains(self, o: Flags) -> bool { self.0 & o.0 == o.0 }
    pub const fn intersects(self, o: Flags) -> bool { self.0 & o.0 != 0 }
    pub const fn is_empty(self) -> bool { self.0 == 0 }
    /// The flags that still allow a pure computation on operands: carry
    /// reads and writes (register-like) and approximation.
    pub const PURE: Flags = Flags(64 | 128 | 256 | 2048);
    /// No flag beyond [`Flags::PURE`]: the result depends only on the operands
    /// (and the carry flag).
    pub const fn is_pure(self) -> bool { self.0 & !Flags::PURE.0 == 0 }
}

impl std::fmt::Debug for Flags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const NAMES: [&str; 14] = ["sync", "side_effect", "branch", "call", "ret", "exit", "carry_in", "carry_out", "carry_out_cc", "async", "volatile", "approx", "warp", "fence"];
        let v: Vec<&str> = NAMES.iter().enumerate().filter(|(k, _)| self.0 & (1 << k) != 0).map(|(_, n)| *n).collect();
        write!(f, "Flags({})", v.join("|"))
    }
}

pub(crate) struct OpcodeData {
    pub name: &'static str,
    pub forms: std::ops::Range<usize>,
    pub flags: Flags,
}

/// The type an operand must have, from the table's `types` lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperandType {
    /// Not checked.
    Any,
    /// The type written in slot `k` of the form.
    Slot(u8),
    /// Twice the width of the type in slot `k` (`mul.wide` results).
    Wide(u8),
    /// Half the width of the type in slot `k`.
    Half(u8),
    /// Always this type (`.u32` shift amounts, `.pred` selectors).
    Fixed(ScalarType),
    /// An address: an integer or bit register of the address size.
    Address,
    /// A label, never a register or variable (ptxas: "Label expected").
    Label,
}

/// When an instruction form (or one of its modifiers) exists: PTX ISA
/// version and targets, from the manual's "PTX ISA notes" and "Target ISA notes".
#[derive(Clone, Copy, Debug)]
pub struct Requirement {
    pub ptx: Option<(u32, u32)>,
    /// Oldest `sm_NN` (onion-layer targets).
    pub min_sm: Option<u32>,
    /// Arch-specific targets (`sm_90a`), any of which will do.
    pub exact: &'static [&'static str],
    /// Applies only when one of these modifiers (Mod indices) is written; empty: always.
    pub when: &'static [u16],
}

/// One modifier slot of a form.
pub struct SlotData {
    /// Written in braces in the manual: may be left out.
    pub optional: bool,
    /// What the slot means (type, rounding ...), for the typed accessors.
    pub role: SlotRole,
    /// The modifiers the slot accepts, as sorted `Mod` indices.
    pub allowed: &'static [u16],
}

/// One operand position of a form.
pub struct OperandData {
    /// The manual's name(s) for it (`d`, `a`, `p|q`).
    pub name: &'static str,
    pub kind: OperandKind,
    /// A trailing operand in `{, x}`.
    pub optional: bool,
    /// The registers it names are read.
    pub read: bool,
    /// The registers it names are written.
    pub write: bool,
    /// Memory accessed through it (address operands).
    pub mem: Option<MemAccess>,
    /// The type it must have.
    pub ty: OperandType,
}

pub(crate) struct FormData {
    pub opcode: Opcode,
    pub syntax: &'static str,
    pub flags: Flags,
    pub slots: &'static [SlotData],
    pub operands: &'static [OperandData],
    /// Some operand accesses memory (its `mem`).
    pub accesses_memory: bool,
    pub requires: &'static [Requirement],
}

include!(concat!(env!("OUT_DIR"), "/isa_tables.rs"));

impl Mod {
    /// An empty optional slot.
    pub const NONE: Mod = Mod(0);

    /// The modifier's text, with its leading dot.
    pub fn text(self) -> &'static str { MOD_TEXT[self.0 as usize] }

    /// What the token means on its own.
    pub fn kind(self) -> ModKind { mod_kinds()[self.0 as usize] }

    /// Looks a modifier up by its text (with the dot).
    pub fn from_text(s: &str) -> Option<Mod> { mod_index().get(s).copied() }

    /// Every modifier of the tables.
    pub fn all() -> impl Iterator<Item = Mod> { (1..MOD_TEXT.len() as u16).map(Mod) }

    /// The modifier's number in the tables (below 65,536; 0 for [`Mod::NONE`]).
    pub fn index(self) -> usize { self.0 as usize }
}

impl std::fmt::Debug for Mod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0 == 0 { f.write_str("Mod::NONE") } else { f.write_str(self.text()) }
    }
}

fn mod_index() -> &'static FxHashMap<&'static str, Mod> {
    static M: OnceLock<FxHashMap<&'static str, Mod>> = OnceLock::new();
    M.get_or_init(|| MOD_TEXT.iter().enumerate().skip(1).map(|(k, t)| (*t, Mod(k as u16))).collect())
}

fn mod_kinds() -> &'static [ModKind] {
    static K: OnceLock<Vec<ModKind>> = OnceLock::new();
    K.get_or_init(|| MOD_TEXT.iter().map(|t| classify(t)).collect())
}

impl Opcode {
    /// The opcode as written (`cp.async.bulk`).
    pub fn name(self) -> &'static str { OPCODES[self.0 as usize].name }

    /// Looks an opcode up by its full dotted name.
    pub fn from_name(s: &str) -> Option<Opcode> { opcode_index().get(s).copied() }

    /// Its syntax forms, in table order.
    pub fn forms(self) -> impl Iterator<Item = FormId> + Clone {
        OPCODES[self.0 as usize].forms.clone().map(|k| FormId(k as u16))
    }

    /// Effect flags of any of its forms (the union).
    pub fn flags(self) -> Flags { OPCODES[self.0 as usize].flags }

    /// Every opcode of the tables.
    pub fn all() -> impl Iterator<Item = Opcode> { (0..OPCODES.len() as u16).map(Opcode) }

    /// The opcode's number in the tables (below 65,536).
    pub fn index(self) -> usize { self.0 as usize }

    /// Longest dotted prefix of `text` (`cp.async.bulk.tensor.1d.global`)
    /// that is an opcode, with the number of dot-separated parts it used.
    pub fn longest_prefix(text: &str) -> Option<(Opcode, usize)> {
        let idx = opcode_index();
        let mut best = None;
        let mut parts = 0;
        for (k, b) in text.bytes().enumerate().chain(std::iter::once((text.len(), b'.'))) {
            if b != b'.' {
                continue;
            }
            parts += 1;
            if parts > MAX_OPCODE_PARTS {
                break;
            }
            if let Some(&op) = idx.get(&text[..k]) {
                best = Some((op, parts));
            }
        }
        best
    }
}

/// The most dot-separated parts any opcode name has.
const MAX_OPCODE_PARTS: usize = 6;

impl std::fmt::Debug for Opcode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { f.write_str(self.name()) }
}

fn opcode_index() -> &'static FxHashMap<&'static str, Opcode> {
    static M: OnceLock<FxHashMap<&'static str, Opcode>> = OnceLock::new();
    M.get_or_init(|| OPCODES.iter().enumerate().map(|(k, o)| (o.name, Opcode(k as u16))).collect())
}

impl FormId {
    fn data(self) -> &'static FormData { &FORMS[self.0 as usize] }
    pub fn opcode(self) -> Opcode { self.data().opcode }
    /// The form as the table writes it (`add{.sat}.s32 d, a, b`).
    pub fn syntax(self) -> &'static str { self.data().syntax }
    pub fn slots(self) -> &'static [SlotData] { self.data().slots }
    pub fn operands(self) -> &'static [OperandData] { self.data().operands }
    /// Does some operand access memory (has a `mem`)? Read from the table
    /// made with the forms: the effect analysis asks at every instruction,
    /// and most forms have none.
    pub fn accesses_memory(self) -> bool { self.data().accesses_memory }
    /// Effect flags of this form.
    pub fn flags(self) -> Flags { self.data().flags }
    /// Version and target requirements (some apply only with certain modifiers).
    pub fn requirements(self) -> &'static [Requirement] { self.data().requires }
    /// Fewest and most operands the form takes.
    pub fn operand_count(self) -> (usize, usize) {
        let ops = self.operands();
        (ops.iter().filter(|o| !o.optional).count(), ops.len())
    }
    /// Every form of the tables.
    pub fn all() -> impl Iterator<Item = FormId> { (0..FORMS.len() as u16).map(FormId) }
    /// The form's place in the tables (the order of [`FormId::all`]), for
    /// tables indexed by form.
    pub fn index(self) -> usize { self.0 as usize }
}

impl std::fmt::Debug for FormId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { write!(f, "FormId({}: {})", self.0, self.syntax()) }
}

impl SlotData {
    /// Does this slot accept the modifier?
    pub fn accepts(&self, m: Mod) -> bool { self.allowed.binary_search(&m.0).is_ok() }
    /// The accepted modifiers.
    pub fn allowed(&self) -> impl Iterator<Item = Mod> + '_ { self.allowed.iter().map(|&k| Mod(k)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcode_names_resolve_by_longest_prefix() {
        assert_eq!(Opcode::longest_prefix("add.s32"), Some((Opcode::ADD, 1)));
        assert_eq!(Opcode::longest_prefix("cp.async.bulk.tensor.1d"), Some((Opcode::CP_ASYNC_BULK_TENSOR, 4)));
        assert_eq!(Opcode::from_name("add"), Some(Opcode::ADD));
        assert_eq!(Opcode::longest_prefix("nosuchop"), None);
    }

    #[test]
    fn modifiers_know_their_kind() {
        assert_eq!(Mod::from_text(".f32"), Some(Mod::F32));
        assert_eq!(Mod::F32.kind(), ModKind::Type(ScalarType::F32));
        assert_eq!(Mod::RN.kind(), ModKind::Rounding(Rounding::Rn));
        assert_eq!(Mod::NONE.text(), "");
    }

    /// The table's `accesses_memory` is what the operands say, on every
    /// form (the effect analysis reads the operands only when it is set).
    #[test]
    fn accesses_memory_agrees_with_the_operands() {
        let mut with = 0;
        for form in FormId::all() {
            let by_operands = form.operands().iter().any(|o| o.mem.is_some());
            assert_eq!(form.accesses_memory(), by_operands, "{form:?}");
            with += by_operands as usize;
        }
        assert!(with > 0 && with < FORMS.len(), "{with} of {} forms access memory", FORMS.len());
    }
}
