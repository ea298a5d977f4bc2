//! What `load-forward` and `store-elim` know about memory: which accesses
//! are plain, the location one touches, whether two locations may overlap,
//! and which instructions end everything known about memory.
//!
//! A **plain access** is an unguarded-or-guarded `ld`/`st` without
//! `.volatile`, `.mmio`, `.relaxed`, `.acquire`, `.release` or `.unified`
//! (cache hints such as `.ca`, `.cs`, `.L2::128B` do not change what a
//! thread reads or writes). Its **location** is the state space (sub-windows
//! dropped), the address base (a register *version* of the value view, a
//! symbol, or an absolute address), the offset and the size in bytes.
//!
//! Two locations may overlap unless their spaces cannot alias (two
//! different named spaces; generic aliases every space), or they have the
//! same base and disjoint byte ranges, or they are different symbols.
//! Kernel parameters (the `.param`s of an `.entry`'s signature) and
//! `.const` are never written by a kernel (the manual's state-space table:
//! read-only), so what is known of them survives every write and
//! synchronization. A `.param` declared in the body (a call's argument or
//! return value) is ordinary memory that a `call` writes. A symbol declared
//! inside a `{ }` block may share its name with another block's (every
//! call block declares its own `retval0`): accesses through such names are
//! clobbers, never compared.
//!
//! Anything else that touches memory or orders it (atomics, reductions,
//! barriers, fences, calls, warp collectives, asynchronous copies, ordered
//! loads) is a **clobber**: after it nothing known about writable memory
//! holds. The memory model allows the rest: between two synchronizing
//! operations, a thread's weak accesses see its own writes, and a write of
//! another thread to the same location would be a data race.

use crate::values::{ValueView, VersionDef};
use ptx_ir::ir::{AddrBase, FuncKind, Function, Instruction, Name, Operand, RegId, Stmt};
use rustc_hash::FxHashSet;
use ptx_ir::isa::{Flags, MemAccess, Mod, ModKind, Opcode, SlotRole, StateSpace};

/// Modifiers that order an access or make it observable.
const ORDERED: [Mod; 5] = [Mod::VOLATILE, Mod::MMIO, Mod::RELAXED, Mod::ACQUIRE, Mod::RELEASE];

/// Does the modifier order an access or make it observable (`.volatile`,
/// `.mmio`, `.relaxed`, `.acquire`, `.release`)?
pub fn orders(m: Mod) -> bool {
    ORDERED.contains(&m)
}

/// The base of an address: a register as one version, a symbol, a number.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Base {
    Reg(RegId, VersionDef),
    Sym(Name),
    Abs(u64),
}

/// The bytes one access touches.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Location {
    pub space: StateSpace,
    pub base: Base,
    pub offset: i64,
    pub size: u32,
}

/// Names that decide how a function's symbols are treated.
pub struct Symbols {
    /// The signature's parameters, when the function is a kernel.
    kernel_params: FxHashSet<Name>,
    /// Declared inside some `{ }` block (any state space).
    scoped: FxHashSet<Name>,
}

impl Symbols {
    pub fn of(f: &Function) -> Symbols {
        let mut kernel_params = FxHashSet::default();
        if f.kind == FuncKind::Entry {
            for d in f.params.iter().flatten() {
                kernel_params.extend(d.names.iter().map(|n| n.name.clone()));
            }
        }
        let mut scoped = FxHashSet::default();
        let mut depth = 0usize;
        for s in f.body.iter().flatten() {
            match s {
                Stmt::ScopeBegin => depth += 1,
                Stmt::ScopeEnd => depth = depth.saturating_sub(1),
                Stmt::Decl(d) if depth > 0 => scoped.extend(d.names().map(|n| n.name.clone())),
                _ => {}
            }
        }
        Symbols { kernel_params, scoped }
    }

    /// Is the name declared inside some `{ }` block?
    pub fn is_scoped(&self, name: &Name) -> bool {
        self.scoped.contains(name)
    }
}

impl Location {
    /// Never written while the function runs: `.const`, or a kernel
    /// parameter by name.
    pub fn read_only(&self, syms: &Symbols) -> bool {
        self.space == StateSpace::Const || (self.space == StateSpace::Param && matches!(&self.base, Base::Sym(s) if syms.kernel_params.contains(s) && !syms.scoped.contains(s)))
    }

    /// May the two share a byte?
    pub fn may_overlap(&self, other: &Location) -> bool {
        if self.space != other.space && self.space != StateSpace::Generic && other.space != StateSpace::Generic {
            return false;
        }
        match (&self.base, &other.base) {
            (a, b) if a == b => self.offset < other.offset + other.size as i64 && other.offset < self.offset + self.size as i64,
            (Base::Sym(_), Base::Sym(_)) if self.space == other.space => false,
            _ => true,
        }
    }

    /// Does this cover every byte of `other`?
    pub fn covers(&self, other: &Location) -> bool {
        self.space == other.space && self.base == other.base && self.offset <= other.offset && other.offset + other.size as i64 <= self.offset + self.size as i64
    }
}

/// A plain `ld` or `st`.
pub struct Access<'a> {
    pub store: bool,
    pub at: &'a Location,
    /// The register loaded into or stored from, or the stored immediate
    /// (`None` for vectors, for which nothing is forwarded).
    pub value: Option<&'a Operand>,
    /// The instruction's type has as many bits as the value's register
    /// (no extension on a load, no truncation on a store).
    pub whole: bool,
}

/// What one instruction does to memory.
pub enum Touch<'a> {
    /// Nothing.
    Nothing,
    /// A plain access.
    Plain(Access<'a>),
    /// Anything else that reads, writes or orders memory.
    Clobber,
}

/// [`Touch`] of the statements of one function, each found when first
/// asked for and kept with the function's other analyses
/// ([`super::Analyses::memory`]): `load-forward`, `store-elim` and
/// `vectorize` each ask about every instruction, and most functions come
/// out of all three as they went in (renderer -O2: 19.8 M host
/// instructions of `touch` and 5.8 M of [`Symbols::of`] over the three,
/// before they shared them).
pub struct Touches {
    pub syms: Symbols,
    kept: Vec<std::cell::OnceCell<Kept>>,
}

/// A statement's [`Touch`] as kept: a plain access's value by its operand's place.
#[derive(Debug, PartialEq)]
enum Kept {
    Nothing,
    Plain { store: bool, at: Location, value: Option<u8>, whole: bool },
    Clobber,
}

impl Touches {
    pub fn of(f: &Function) -> Touches {
        let n = f.body.as_ref().map_or(0, |b| b.len());
        Touches { syms: Symbols::of(f), kept: (0..n).map(|_| std::cell::OnceCell::new()).collect() }
    }

    /// What statement `k`'s instruction `ins` does to memory (`view` is
    /// the value view of `f`, whose statements these are).
    #[inline]
    pub fn touch<'a>(&'a self, f: &Function, view: &ValueView, k: usize, ins: &'a Instruction) -> Touch<'a> {
        let kept = match self.kept[k].get() {
            Some(kept) => kept,
            None => self.first_touch(f, view, k, ins),
        };
        // Kept only while the function is the one it was found for.
        debug_assert!(*kept == touch(f, &self.syms, view, k, ins), "statement {k} of `{}`: a kept memory touch is stale", f.name);
        match kept {
            Kept::Nothing => Touch::Nothing,
            Kept::Clobber => Touch::Clobber,
            Kept::Plain { store, at, value, whole } => Touch::Plain(Access { store: *store, at, value: value.map(|v| &ins.operands[v as usize]), whole: *whole }),
        }
    }

    /// The first ask about statement `k` (out of line: the passes' loops
    /// ask about every statement, and the later asks are a load).
    #[inline(never)]
    fn first_touch(&self, f: &Function, view: &ValueView, k: usize, ins: &Instruction) -> &Kept {
        self.kept[k].get_or_init(|| touch(f, &self.syms, view, k, ins))
    }
}

/// What statement `k`'s instruction does to memory.
fn touch(f: &Function, syms: &Symbols, view: &ValueView, k: usize, ins: &Instruction) -> Kept {
    if matches!(ins.opcode, Opcode::LD | Opcode::ST) {
        return plain_access(f, syms, view, k, ins).unwrap_or(Kept::Clobber);
    }
    // What `effects` gives of flags and memory, without its register
    // lanes: the form's flags but the carry's, its memory operands' kinds.
    let carry = Flags::CARRY_IN.bits() | Flags::CARRY_OUT.bits() | Flags::CARRY_OUT_CC.bits();
    let flags = Flags::from_bits(ins.form.flags().bits() & !carry & !Flags::APPROX.bits());
    // The operands are read only for a form that accesses memory (the
    // table says so once: most do not).
    let memory = ins.form.operands().iter().take(ins.operands.len()).filter_map(|spec| spec.mem);
    if flags != Flags::NONE || (ins.form.accesses_memory() && memory.into_iter().any(|k| k != MemAccess::Prefetch && !(k == MemAccess::Load && ins.opcode == Opcode::LDU))) {
        Kept::Clobber
    } else {
        Kept::Nothing
    }
}

/// The plain access statement `k` makes, if it is one.
fn plain_access(f: &Function, syms: &Symbols, view: &ValueView, k: usize, ins: &Instruction) -> Option<Kept> {
    let store = match ins.opcode {
        Opcode::LD => false,
        Opcode::ST => true,
        _ => return None,
    };
    // The type, vector and space (`Instruction::ty`, `vector`, `space`:
    // the first of each) in one pass over the modifiers, which the three
    // would make each (every pass asks about every `ld` and `st`).
    let (mut ty, mut vector, mut space) = (None, None, None);
    for (role, m) in ins.modifiers() {
        if orders(m) {
            return None;
        }
        match (role, m.kind()) {
            (SlotRole::Type, ModKind::Type(t)) if ty.is_none() => ty = Some(t),
            (SlotRole::Vector, ModKind::Vector(n)) if vector.is_none() => vector = Some(n),
            (SlotRole::Space, ModKind::Space(s)) if space.is_none() => space = Some(s),
            _ => {}
        }
    }
    let ty = ty?;
    let lanes = vector.unwrap_or(1) as u32;
    // The address and value operands' places.
    let (addr, value_at): (usize, u8) = if store { (0, 1) } else { (1, 0) };
    let (addr, value) = (ins.operands.get(addr)?, ins.operands.get(value_at as usize)?);
    let Operand::Addr(a) = addr else { return None };
    if a.unified {
        return None;
    }
    let base = match &a.base {
        AddrBase::Reg(r) => Base::Reg(*r, view.read(k, *r).map_or_else(|| view.version_at(*r, k), |v| v.def)),
        AddrBase::Sym(s) if !syms.scoped.contains(s) => Base::Sym(s.clone()),
        AddrBase::Sym(_) => return None,
        AddrBase::Imm(n) => Base::Abs(*n),
    };
    let size = (ty.bits() / 8).max(1) * lanes;
    let at = Location { space: space.unwrap_or(StateSpace::Generic).base(), base, offset: a.offset, size };
    let (value, whole) = match value {
        Operand::Reg(r) if lanes == 1 && r.sel.is_none() && r.prefix == ptx_ir::ir::Prefix::None && f.reg(r.reg).vector.is_none() => (Some(value_at), f.reg(r.reg).ty.bits() == ty.bits()),
        Operand::Imm(_) if store && lanes == 1 => (Some(value_at), true),
        _ => (None, false),
    };
    Some(Kept::Plain { store, at, value, whole })
}
