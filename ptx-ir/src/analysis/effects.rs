//! What one instruction does, read from the ISA tables and its operands:
//! the register locations (and the carry flag) it reads and writes, the
//! memory it touches and in which state space, and its effect flags.

use crate::ir::{Function, Instruction, Operand, RegId, Selector};
use crate::isa::{Flags, MemAccess, Mod, StateSpace};
use smallvec::SmallVec;

/// A storage location tracked by dataflow: one lane of a register, or the carry flag.
/// Scalar registers have one lane; `.v2`/`.v4`/`.v8` registers have one per element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Loc(pub u32);

/// Numbers the locations of a function: each register's lanes, then the carry flag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocTable {
    base: Vec<u32>,
    lanes: Vec<u8>,
    carry: u32,
}

impl LocTable {
    pub fn new(f: &Function) -> LocTable {
        let mut base = Vec::with_capacity(f.regs.len());
        let mut lanes = Vec::with_capacity(f.regs.len());
        let mut n = 0u32;
        for r in &f.regs {
            let l = r.vector.unwrap_or(1).max(1);
            base.push(n);
            lanes.push(l);
            n += l as u32;
        }
        LocTable { base, lanes, carry: n }
    }
    /// Number of locations (the carry flag is the last).
    pub fn len(&self) -> usize {
        self.carry as usize + 1
    }
    pub fn is_empty(&self) -> bool {
        false
    }
    pub fn carry(&self) -> Loc {
        Loc(self.carry)
    }
    /// Every lane of a register.
    pub fn reg(&self, r: RegId) -> impl Iterator<Item = Loc> {
        self.reg_span(r).map(Loc)
    }
    /// The numbers of a register's locations, first to last.
    fn reg_span(&self, r: RegId) -> std::ops::Range<u32> {
        let b = self.base[r.0 as usize];
        b..b + self.lanes[r.0 as usize] as u32
    }
    /// The locations an operand naming `r` with selector `sel` reads or
    /// writes, as (first, count): one lane of a vector register for a
    /// component selector, else every lane (a scalar's one, whatever its
    /// selector: a register of one lane has no other).
    #[inline]
    fn lanes_named(&self, r: RegId, sel: Option<Selector>) -> (u32, u32) {
        let (base, lanes) = (self.base[r.0 as usize], self.lanes[r.0 as usize]);
        match sel.and_then(Selector::lane) {
            Some(l) if lanes > 1 => (self.lane(r, l).0, 1),
            _ => (base, lanes as u32),
        }
    }
    /// One lane of a register (lane 0 of a scalar).
    pub fn lane(&self, r: RegId, lane: u8) -> Loc {
        Loc(self.base[r.0 as usize] + (lane.min(self.lanes[r.0 as usize] - 1)) as u32)
    }
    /// The register (and lane) a location belongs to; `None` for the carry flag.
    pub fn reg_of(&self, l: Loc) -> Option<(RegId, u8)> {
        if l.0 == self.carry {
            return None;
        }
        let k = self.base.partition_point(|b| *b <= l.0) - 1;
        Some((RegId(k as u32), (l.0 - self.base[k]) as u8))
    }
}

/// A write to a location. A write that may leave the old value in place
/// (under a guard, or merging a byte/half lane) does not kill earlier writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Def {
    pub loc: Loc,
    pub kills: bool,
}

/// The effects of one instruction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Effects {
    pub uses: SmallVec<[Loc; 6]>,
    pub defs: SmallVec<[Def; 4]>,
    /// Memory accessed, with the state space.
    pub memory: SmallVec<[(MemAccess, StateSpace); 2]>,
    pub flags: Flags,
    /// Reads a special register whose value changes on its own (`%clock` ...).
    pub reads_volatile: bool,
}

impl Effects {
    /// No memory, no flags, no volatile reads: the only effect is its results.
    pub fn is_pure(&self) -> bool {
        self.memory.is_empty() && self.flags.is_empty() && !self.reads_volatile
    }
    pub fn writes_memory(&self) -> bool {
        self.memory.iter().any(|(k, _)| matches!(k, MemAccess::Store | MemAccess::Atomic))
    }
    pub fn reads_memory(&self) -> bool {
        self.memory.iter().any(|(k, _)| matches!(k, MemAccess::Load | MemAccess::Atomic))
    }
}

/// Computes the effects of an instruction of `f` (`locs` is `f`'s). Which
/// registers are read and written is [`Instruction::for_each_reg`]'s
/// answer; this adds lanes, kills, memory, the carry flag and volatile reads.
pub fn effects(f: &Function, locs: &LocTable, ins: &Instruction) -> Effects {
    let mut e = Effects::default();
    add_effects(f, locs, ins, &mut e);
    e
}

/// [`effects`] added to `e` (empty: [`Effects::default`]), in place:
/// [`crate::analysis::statement_effects`] fills its vector's slots so, not
/// moving a 104-byte value into each.
pub(crate) fn add_effects(f: &Function, locs: &LocTable, ins: &Instruction, e: &mut Effects) {
    debug_assert_eq!(locs.base.len(), f.regs.len(), "effects: a location table of another function");
    debug_assert_eq!(*e, Effects::default(), "effects: added to effects already there");
    let form = ins.form;
    let flags = form.flags();
    let guarded = ins.guard.is_some();
    // With the lanes read off the location table, the operands' memory
    // read only for forms that access it and the effects made in place,
    // renderer -O2's dce (most of it these effects and liveness) costs
    // 83.6 M instead of 89.4 M (fat LTO, callgrind).
    let Effects { uses, defs, .. } = e;
    ins.for_each_reg(#[inline(always)] |r, access| {
        let (first, count) = locs.lanes_named(r, access.sel);
        // Most registers have one lane: pushed without a loop.
        if access.read {
            if count == 1 {
                uses.push(Loc(first));
            } else {
                uses.extend((first..first + count).map(Loc));
            }
        }
        if access.write {
            let kills = !guarded && !access.merges();
            if count == 1 {
                defs.push(Def { loc: Loc(first), kills });
            } else {
                defs.extend((first..first + count).map(|l| Def { loc: Loc(l), kills }));
            }
        }
    });
    // Most forms access no memory: the operands' table is read only for
    // those that do (the form says so once: `FormId::accesses_memory`).
    if form.accesses_memory() {
        add_memory_accesses(ins, &mut e.memory);
    }
    e.reads_volatile = ins.operands.iter().any(names_a_volatile_register);
    if flags.contains(Flags::CARRY_IN) {
        e.uses.push(locs.carry());
    }
    if flags.contains(Flags::CARRY_OUT) || (flags.contains(Flags::CARRY_OUT_CC) && ins.has(Mod::CC)) {
        e.defs.push(Def { loc: locs.carry(), kills: !guarded });
    }
    // Carry flags alone are register-like dependencies, not side effects.
    e.flags = Flags::from_bits(flags.bits() & !(Flags::CARRY_IN.bits() | Flags::CARRY_OUT.bits() | Flags::CARRY_OUT_CC.bits()));
}

/// Adds the memory an instruction accesses through its address operands,
/// each with the state space its modifiers give (in order; `Generic` past
/// them).
fn add_memory_accesses(ins: &Instruction, memory: &mut SmallVec<[(MemAccess, StateSpace); 2]>) {
    // The k-th access takes the k-th space, read off the modifiers as the
    // accesses ask (most have one: the first; collecting them all cost
    // histogram -O2's effects 0.8 M).
    let mut spaces = ins.space_mods().fuse();
    for spec in ins.form.operands().iter().take(ins.operands.len()) {
        if let Some(kind) = spec.mem {
            memory.push((kind, spaces.next().unwrap_or(StateSpace::Generic)));
        }
    }
}

/// Does the operand, or one nested in it, name a special register whose
/// value changes on its own?
fn names_a_volatile_register(op: &Operand) -> bool {
    let mut volatile = false;
    op.for_each_operand(&mut |o| {
        if let Operand::SReg(s, _) = o {
            volatile |= s.is_volatile();
        }
    });
    volatile
}
