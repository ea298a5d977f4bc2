//! `vectorize`: adjacent scalar loads or stores become one `.v2`/`.v4`
//! access when the address is proven aligned.
//!
//! Within one block, plain `.global` or generic accesses ([`memory`];
//! [`VECTORIZED_SPACES`]) of one space, base
//! version, type and modifiers at offsets `o, o+e, ...` (`e` the element
//! size, 2, 4 or 8 bytes; 2 or 4 elements, at most 16 bytes; in increasing
//! offset order in the text) become one vector access when
//! - the address `base + o` is a multiple of the vector's size: the base's
//!   known alignment ([`Alignment`]) covers it and `o` is a multiple;
//! - every element moves a whole scalar register of the element's width;
//! - loads: the vector load takes the first load's place, so nothing
//!   between may write the group's bytes (no store that may overlap, no
//!   clobber), and no later element's register may be read or written
//!   (or be an address) between the first load and its own;
//! - stores: the vector store takes the last store's place, so nothing
//!   between may read or write the group's bytes (no load or store that
//!   may overlap, no clobber), and each stored register still holds its
//!   value there; immediates are not grouped (vector operands are
//!   registers).
//!
//! What proves an alignment is [`super::alignment`]'s; nothing else is
//! assumed: an address whose alignment is not proven stays scalar (a
//! misaligned vector access faults).
//!
//! Why: ptxas merges shared-memory accesses whose alignment it sees
//! itself, but it does not use `.ptr .align` (measured, ptxas 12.9: four
//! `st.global.f32` through an `.align 16` parameter stay four `STG.E`).
//! `.v8` and `.v4.b64` (global only, newest targets) are not formed.

use super::alignment::{log2_of, Alignment};
use super::memory::{Base, Location, Touch};
use super::operands::plain_reg;
use super::{Analyses, Pass, Preserves};
use crate::values::ValueView;
use crate::{ModuleContext, OptLevel};
use ptx_ir::ir::{Function, Instruction, Operand, RegId, Stmt};
use ptx_ir::isa::{Mod, StateSpace};
use rustc_hash::FxHashMap;
use std::cell::OnceCell;

pub const PASS: Pass = Pass {
    name: "vectorize",
    description: "adjacent loads or stores of one base at consecutive offsets become one .v2/.v4 access when the address is proven aligned",
    run,
    preserves: Preserves::Nothing,
    edit: None,
};

/// The spaces whose accesses are grouped. ptxas groups `.shared` accesses
/// whose alignment it sees itself, and a vector access to a `.local` array
/// keeps ptxas from turning the array into registers (measured: the CUDA
/// 2.2 SDK's fluidsGL `advectParticles_k`, 64 SASS instructions, 341 with
/// its two-float `.local` array read as one `.v2`).
const VECTORIZED_SPACES: &[StateSpace] = &[StateSpace::Global, StateSpace::Generic];

/// What each statement of one block does to memory ([`touch`]), and,
/// once a load group asks, where it reads or writes each register.
struct Touches<'a> {
    /// The block's statements.
    block: std::ops::Range<usize>,
    of: Vec<Touch<'a>>,
    /// The statements that touch memory, in order.
    accessing: Vec<usize>,
    /// Those that may write it: stores and clobbers.
    writing: Vec<usize>,
    users: OnceCell<RegUsers>,
}

/// The statements of one block that read or write each register, in order.
struct RegUsers(FxHashMap<RegId, Vec<usize>>);

impl RegUsers {
    fn of(body: &[Stmt], block: std::ops::Range<usize>) -> RegUsers {
        let mut users: FxHashMap<RegId, Vec<usize>> = FxHashMap::default();
        for k in block {
            if let Stmt::Instr(ins) = &body[k] {
                ins.for_each_reg(|r, _| {
                    let at = users.entry(r).or_default();
                    if at.last() != Some(&k) {
                        at.push(k);
                    }
                });
            }
        }
        RegUsers(users)
    }

    /// Does a statement strictly between `from` and `to` read or write `r`?
    fn touched_between(&self, r: RegId, from: usize, to: usize) -> bool {
        self.0.get(&r).is_some_and(|at| at.get(at.partition_point(|&k| k <= from)).is_some_and(|&k| k < to))
    }
}

impl<'a> Touches<'a> {
    fn of(of: Vec<Touch<'a>>, block: std::ops::Range<usize>) -> Touches<'a> {
        let (mut accessing, mut writing) = (Vec::new(), Vec::new());
        for (k, t) in block.clone().zip(&of) {
            match t {
                Touch::Nothing => continue,
                Touch::Plain(acc) if !acc.store => {}
                _ => writing.push(k),
            }
            accessing.push(k);
        }
        Touches { block, of, accessing, writing, users: OnceCell::new() }
    }

    fn at(&self, k: usize) -> &Touch<'a> {
        &self.of[k - self.block.start]
    }
}

/// One plain access of a block, with what grouping needs.
struct Scalar {
    k: usize,
    store: bool,
    at: Location,
    /// The whole register moved.
    reg: RegId,
}

fn run(f: &Function, analyses: &mut Analyses, _ctx: &ModuleContext, _level: OptLevel) -> Option<Function> {
    let body = f.body.as_ref()?;
    let (cfg, dom, view, memory) = analyses.memory(f);
    // The alignments, the costly part, are found when a first group is:
    // most functions have none. Without any known alignment the pass
    // changes nothing.
    let mut align: Option<Alignment> = None;
    let mut replaced: FxHashMap<usize, Option<Instruction>> = FxHashMap::default();
    for &b in &cfg.layout {
        if !dom.contains(b) {
            continue;
        }
        let stmts = cfg.block(b).stmts.clone();
        let touch_at = |k: usize| if let Stmt::Instr(ins) = &body[k] { memory.touch(f, view, k, ins) } else { Touch::Nothing };
        let mut scalars: Vec<Scalar> = Vec::new();
        for k in stmts.clone() {
            let (Stmt::Instr(ins), Touch::Plain(acc)) = (&body[k], touch_at(k)) else { continue };
            if !VECTORIZED_SPACES.contains(&acc.at.space) {
                continue;
            }
            if let (true, None, Some(Operand::Reg(r))) = (acc.whole, ins.guard, acc.value) {
                if plain_reg(f, &Operand::Reg(*r), None).is_some() && ins.vector().is_none() {
                    scalars.push(Scalar { k, store: acc.store, at: acc.at.clone(), reg: r.reg });
                }
            }
        }
        if scalars.len() < 2 {
            continue;
        }
        // Found when a first group of the block is checked (most blocks have none).
        let touches: OnceCell<Touches> = OnceCell::new();
        let places = Places::of(&scalars);
        let mut used = vec![false; scalars.len()];
        for i in 0..scalars.len() {
            for n in [4usize, 2] {
                if used[i] {
                    break;
                }
                let Some(group) = places.group(&scalars, &used, i, n) else { continue };
                let first = &scalars[group[0]];
                let bytes = first.at.size as u64 * n as u64;
                let align = align.get_or_insert_with(|| Alignment::of(f, view));
                if !align.any() {
                    return None;
                }
                if bytes > 16 || align.of_location(&first.at) < log2_of(bytes) || (first.at.offset as u64) % bytes != 0 {
                    continue;
                }
                let members: Vec<&Scalar> = group.iter().map(|&j| &scalars[j]).collect();
                let touches = touches.get_or_init(|| Touches::of(stmts.clone().map(touch_at).collect(), stmts.clone()));
                if !movable(body, &view, touches, &members) {
                    continue;
                }
                let Some(vector) = vector_access(body, &members, n) else { continue };
                let (at, rest): (usize, Vec<usize>) = if first.store {
                    (members[n - 1].k, members[..n - 1].iter().map(|m| m.k).collect())
                } else {
                    (members[0].k, members[1..].iter().map(|m| m.k).collect())
                };
                replaced.insert(at, Some(vector));
                for k in rest {
                    replaced.insert(k, None);
                }
                for &j in &group {
                    used[j] = true;
                }
            }
        }
    }
    if replaced.is_empty() {
        return None;
    }
    let mut g = f.clone();
    let mut out = Vec::with_capacity(body.len());
    for (k, s) in body.iter().enumerate() {
        match replaced.remove(&k) {
            Some(Some(ins)) => out.push(Stmt::Instr(Box::new(ins))),
            Some(None) => {}
            None => out.push(s.clone()),
        }
    }
    g.body = Some(out);
    Some(g)
}

/// A block's scalars by kind and address: for each (load or store, space,
/// base, size, offset), the first scalar there, and for each scalar the
/// next one at its place, in text order. A group's next member is looked
/// up, not searched for, so a block of many accesses costs time in
/// proportion to them, not their square.
struct Places<'s> {
    first: FxHashMap<(bool, StateSpace, &'s Base, u32, i64), usize>,
    next: Vec<Option<usize>>,
}

impl<'s> Places<'s> {
    fn of(scalars: &'s [Scalar]) -> Places<'s> {
        let mut first = FxHashMap::with_capacity_and_hasher(scalars.len(), Default::default());
        let mut next = vec![None; scalars.len()];
        for (j, s) in scalars.iter().enumerate().rev() {
            next[j] = first.insert((s.store, s.at.space, &s.at.base, s.at.size, s.at.offset), j);
        }
        Places { first, next }
    }

    /// `n` unused scalars of one kind starting at `i`, at consecutive
    /// offsets in text order, of one space, base and size (indices into
    /// `scalars`): each next member is the first unused scalar after the
    /// member before it at the next offset.
    fn group(&self, scalars: &[Scalar], used: &[bool], i: usize, n: usize) -> Option<Vec<usize>> {
        let first = &scalars[i];
        if !matches!(first.at.size, 2 | 4 | 8) {
            return None;
        }
        let mut group = vec![i];
        let mut offset = first.at.offset + first.at.size as i64;
        while group.len() < n {
            let after = group[group.len() - 1];
            let mut there = self.first.get(&(first.store, first.at.space, &first.at.base, first.at.size, offset)).copied();
            while let Some(j) = there.filter(|&j| j <= after || used[j]) {
                there = self.next[j];
            }
            group.push(there?);
            offset += first.at.size as i64;
        }
        Some(group)
    }
}

/// May the group's accesses be done at once (the first load's place, the
/// last store's)? See the module documentation.
fn movable(body: &[Stmt], view: &ValueView, touches: &Touches, members: &[&Scalar]) -> bool {
    let (from, to) = (members[0].k, members[members.len() - 1].k);
    let store = members[0].store;
    // Distinct registers, none of them an address of the group.
    for (i, m) in members.iter().enumerate() {
        if members[..i].iter().any(|o| o.reg == m.reg) || members.iter().any(|o| matches!(o.at.base, Base::Reg(r, _) if r == m.reg)) {
            return false;
        }
    }
    // Loads between a group of loads cannot fail it: only what writes.
    let others = if store { &touches.accessing } else { &touches.writing };
    for &k in others[others.partition_point(|&k| k <= from)..].iter().take_while(|&&k| k < to) {
        if members.iter().any(|m| m.k == k) {
            continue;
        }
        match touches.at(k) {
            Touch::Clobber => return false,
            Touch::Plain(acc) if (acc.store || store) && members.iter().any(|m| m.at.may_overlap(&acc.at)) => return false,
            _ => {}
        }
    }
    if !store {
        // A later element's register is written at the first load: nothing
        // before its own load may read or write it (the members' own
        // statements do not: their registers are distinct and none is an
        // address).
        let users = touches.users.get_or_init(|| RegUsers::of(body, touches.block.clone()));
        if members[1..].iter().any(|m| users.touched_between(m.reg, from, m.k)) {
            return false;
        }
    }
    if store {
        // Each stored register still holds, at the last store, what it held at its own.
        return members.iter().all(|m| view.read(m.k, m.reg).is_some_and(|v| view.version_at(m.reg, to) == v.def || m.k == to));
    }
    true
}

/// The vector instruction of a group: the first member's modifiers, with
/// `.vN`, and the registers in offset order.
fn vector_access(body: &[Stmt], members: &[&Scalar], n: usize) -> Option<Instruction> {
    let Stmt::Instr(first) = &body[members[0].k] else { return None };
    // Every member written with the same modifiers and address operand shape.
    for m in members {
        let Stmt::Instr(ins) = &body[m.k] else { return None };
        if ins.mods != first.mods || ins.opcode != first.opcode {
            return None;
        }
    }
    let regs: Box<[Operand]> = members.iter().map(|m| Operand::reg(m.reg)).collect();
    let mut mods: Vec<Mod> = first.modifiers().map(|(_, m)| m).collect();
    mods.push(Mod::from_text(&format!(".v{n}"))?);
    let addr = if members[0].store { first.operands.first()? } else { first.operands.get(1)? }.clone();
    let operands = if members[0].store { [addr, Operand::Vector(regs)] } else { [Operand::Vector(regs), addr] };
    Instruction::new(first.opcode, &mods, operands).ok()
}
