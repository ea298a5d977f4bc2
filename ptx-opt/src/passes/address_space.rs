//! `address-space`: generic loads, stores, atomics and prefetches whose
//! address provably lies in one state space become accesses of that space.
//!
//! ptxas leaves every generic `ld`/`st` generic (`LD.E`/`ST.E`, which pay
//! for the generic-to-space translation; for the stack, `LDL`/`STL` are the
//! cheap forms); it does not look through `cvta`. This pass does: an
//! address is *in space S at `x + c`* when it is
//!
//! - the result of `cvta.S.uN g, x` (the generic address of the S-space
//!   address `x`, a register or a symbol), or
//! - a copy (`mov`) of such an address, or such an address plus an
//!   immediate or a register (`add`), or minus an immediate (`sub`),
//!
//! each through one definition (the value view's versions: never through a
//! φ, so two spaces never meet). A generic `ld`/`st`/`atom`/`red`/
//! `prefetch` (any qualifiers: `.volatile`, `.relaxed.scope`, vectors,
//! cache operators) of `[g+off]` then becomes the S-space access of
//! `[x + c + off]` (where the instruction has that space: `st` not to
//! `.const`, `atom`/`red` to `.global`/`.shared`, `prefetch` to
//! `.global`/`.local`): registers added on
//! the way are added again just before the access (from the same versions:
//! every register read must still hold the value it held where the address
//! was formed, and none is a register declared inside a `{ }` block),
//! immediates fold into the offset while it fits in a signed 32-bit
//! immediate. Spaces handled: `.global`, `.shared`, `.local`,
//! `.const`. Forms the tables do not have for a space (`.v8` outside
//! `.global`) are left generic.
//!
//! **In place.** When every read of every address of one `cvta` (the
//! tree of `mov`/`add`/`sub` it feeds) is such an address computation or
//! the address of a generic access with a form in the space, and no
//! register holding one of them is merged at a φ or written in part, the
//! whole tree changes space at once: the `cvta` becomes a `mov` (the same
//! arithmetic then computes space addresses) and each access gets the
//! space. Nothing is added; below `-O3` it leaves `.local` trees, and in
//! functions that call, every tree but `.global` ones (measured: registers
//! on some kernels, see `run`). Other addresses take the path below.
//!
//! Measured (ptxas 12.9): a `clang -O0` kernel's stack slots reached
//! through `%SP` = `cvta.local %SPL` become `ld.local`/`st.local` (`LDL`/`STL`
//! instead of `LD.E`/`ST.E`).

use super::operands::{only_types, plain_reg};
use super::{Analyses, Pass, Preserves};
use crate::values::{ValueView, Version, VersionDef};
use crate::{ModuleContext, OptLevel};
use ptx_ir::ir::{Address, AddrBase, Function, Instruction, Name, Operand, RegId, Stmt};
use ptx_ir::isa::{Mod, Opcode, ScalarType, StateSpace};
use rustc_hash::FxHashMap;

pub const PASS: Pass = Pass {
    name: "address-space",
    description: "generic ld/st/atom/red/prefetch whose address comes from cvta (through mov/add) become .global/.shared/.local/.const accesses",
    run,
    preserves: Preserves::Nothing,
    edit: None,
};

/// Where a space address starts.
#[derive(Clone, Debug, PartialEq)]
enum Base {
    Reg(RegId, VersionDef),
    Sym(Name, i64),
}

/// A generic address known to be `base + regs + offset` in `space`.
#[derive(Clone, Debug, PartialEq)]
struct Origin {
    space: StateSpace,
    base: Base,
    /// Registers added on the way, with the version each add read.
    regs: Vec<(RegId, VersionDef)>,
    offset: i64,
    /// The `cvta` statement the address comes from.
    root: usize,
}

/// An integer immediate of type `ty`, as a signed number.
fn imm(o: &Operand, ty: ScalarType) -> Option<i64> {
    match o {
        Operand::Imm(i @ ptx_ir::ir::Imm::Int(_)) => Some(ptx_ir::eval::sext(ptx_ir::eval::imm_bits(i, ty), ty.bits()) as i64),
        _ => None,
    }
}

/// The opcodes that give an origin ([`origin_of`]'s `match`).
const MAKERS: &[Opcode] = &[Opcode::CVTA, Opcode::MOV, Opcode::ADD, Opcode::SUB];

/// The origin an instruction gives its destination, from the origins of
/// the versions it reads (`k`: its statement; one of [`MAKERS`]).
fn origin_of(f: &Function, view: &ValueView, origins: &FxHashMap<Version, Origin>, k: usize, ins: &Instruction, width: u32) -> Option<(RegId, Origin)> {
    if ins.guard.is_some() || ins.operands.len() < 2 {
        return None;
    }
    // Only a `cvta` starts an origin; a `mov`, `add` or `sub` passes one on
    // from a version it reads, and most read none that has one: let them go
    // before `ty()` and the operands' look-ups (renderer -O2: `origin_of`
    // cost 4.6 M over 33,399 statements; the whole run 1,254.5 -> 1,253.2 M).
    if ins.opcode != Opcode::CVTA && !view.reads(k).iter().any(|(_, v)| origins.contains_key(v)) {
        return None;
    }
    let ty = ins.ty()?;
    let dest = plain_reg(f, &ins.operands[0], Some(width))?;
    let read = |r: RegId| -> Option<(VersionDef, Option<&Origin>)> {
        let v = view.read(k, r)?;
        Some((v.def, origins.get(&v)))
    };
    match ins.opcode {
        Opcode::CVTA if !ins.has(Mod::TO) && ty.bits() == width && ins.operands.len() == 2 => {
            let space = match ins.space() {
                s @ (StateSpace::Global | StateSpace::Shared | StateSpace::Local | StateSpace::Const) => s,
                _ => return None,
            };
            let base = match &ins.operands[1] {
                Operand::Sym(s) => Base::Sym(s.name.clone(), s.offset),
                o => {
                    let x = plain_reg(f, o, Some(width))?;
                    Base::Reg(x, read(x)?.0)
                }
            };
            Some((dest, Origin { space, base, regs: Vec::new(), offset: 0, root: k }))
        }
        Opcode::MOV if ins.operands.len() == 2 && ty.bits() == width => {
            let src = plain_reg(f, &ins.operands[1], Some(width))?;
            Some((dest, read(src)?.1?.clone()))
        }
        Opcode::ADD | Opcode::SUB if ins.operands.len() == 3 && ty.bits() == width && only_types(ins) => {
            // The generic address is one operand; the other an immediate or a register.
            let sides: &[(usize, usize)] = if ins.opcode == Opcode::ADD { &[(1, 2), (2, 1)] } else { &[(1, 2)] };
            for &(a, b) in sides {
                let Some(ra) = plain_reg(f, &ins.operands[a], Some(width)) else { continue };
                let Some((_, Some(o))) = read(ra) else { continue };
                let mut o = o.clone();
                if let Some(c) = imm(&ins.operands[b], ty) {
                    let c = if ins.opcode == Opcode::SUB { c.checked_neg()? } else { c };
                    o.offset = o.offset.checked_add(c)?;
                } else if ins.opcode == Opcode::ADD {
                    let rb = plain_reg(f, &ins.operands[b], Some(width))?;
                    o.regs.push((rb, read(rb)?.0));
                } else {
                    continue;
                }
                return Some((dest, o));
            }
            None
        }
        _ => None,
    }
}

fn run(f: &Function, analyses: &mut Analyses, ctx: &ModuleContext, level: OptLevel) -> Option<Function> {
    let body = f.body.as_ref()?;
    // Every origin starts at a `cvta` (the value view is the cost of this pass).
    if !body.iter().any(|s| matches!(s, Stmt::Instr(i) if i.opcode == Opcode::CVTA)) {
        return None;
    }
    // New instructions name registers at their uses: a register declared
    // inside a `{ }` block (whose name may mean another register elsewhere,
    // or nothing) is never named by a rewrite.
    let in_blocks = analyses.block_declared_names(f);
    let width = ctx.address_size;
    let (_, _, view) = analyses.values(f);
    // Origins of versions.
    let origins = view.propagate(body, MAKERS, |k, ins, origins| origin_of(f, &view, origins, k, ins, width));
    if origins.is_empty() {
        return None;
    }
    // Trees converted in place (see the module documentation).
    let mut in_place = trees_in_place(f, body, &view, &origins, width);
    // Below -O3: not `.local` trees (Kokkos functors copied to the stack:
    // 16 kernels 2 registers more, though 25 SASS instructions fewer), and
    // in functions that call, only `.global` trees (NVRTC -O0 kernels
    // calling __syncthreads_count & co.: one kernel a register more; only
    // shared addresses live across a call: still another kernel one more).
    if level != OptLevel::O3 {
        let calls = body.iter().any(|s| matches!(s, Stmt::Instr(i) if i.opcode == Opcode::CALL));
        in_place.retain(|_, accesses| accesses.iter().all(|&(_, space)| space != StateSpace::Local && (space == StateSpace::Global || !calls)));
    }
    // The accesses to rewrite: statement, the new instruction's space and
    // address parts.
    let mut sites: Vec<(usize, Origin, i64, bool)> = Vec::new();
    for (k, s) in body.iter().enumerate() {
        let Stmt::Instr(ins) = s else { continue };
        if !matches!(ins.opcode, Opcode::LD | Opcode::ST | Opcode::ATOM | Opcode::RED | Opcode::PREFETCH) || ins.space() != StateSpace::Generic || !view.reachable(k) {
            continue;
        }
        let Some(a) = ins.operands.iter().find_map(|o| if let Operand::Addr(a) = o { Some(a) } else { None }) else { continue };
        let AddrBase::Reg(g) = a.base else { continue };
        if a.unified {
            continue;
        }
        let Some(v) = view.read(k, g) else { continue };
        let Some(o) = origins.get(&v) else { continue };
        if in_place.contains_key(&o.root) {
            continue;
        }
        if !has_form_in(ins, o.space) {
            continue;
        }
        // Every register the address was formed from must still hold that value here.
        let holds = |r: RegId, d: VersionDef| view.version_at(r, k) == d;
        if let Base::Reg(x, d) = &o.base {
            if !holds(*x, *d) {
                continue;
            }
        }
        if !o.regs.iter().all(|(r, d)| holds(*r, *d)) {
            continue;
        }
        // Below `-O3`, only `.global`, `.shared` and `.const` addresses that
        // need no new instruction (the space address itself, or a symbol,
        // plus a constant): measured over the corpus, the adds made again
        // before accesses cost ptxas two registers in some kernels (Kokkos
        // kernels 30 → 32), and `.local` accesses of a functor copied to the
        // stack two registers or up to 12 instructions in others.
        if (!o.regs.is_empty() || o.space == StateSpace::Local) && level != OptLevel::O3 {
            continue;
        }
        let named = |r: RegId| in_blocks.contains(f.regs[r.0 as usize].name.as_ref());
        if matches!(&o.base, Base::Reg(x, _) if named(*x)) || o.regs.iter().any(|(r, _)| named(*r)) {
            continue;
        }
        let Some(offset) = o.offset.checked_add(a.offset).filter(|c| i32::try_from(*c).is_ok()) else { continue };
        sites.push((k, o.clone(), offset, a.zero_written));
    }
    if sites.is_empty() && in_place.is_empty() {
        return None;
    }
    let mut g = f.clone();
    // In place first: one statement for one, indices unchanged.
    {
        let out = g.body.as_mut().expect("a body");
        for (&root, accesses) in &in_place {
            let Stmt::Instr(cvta) = &body[root] else { continue };
            let mut mov = match Instruction::new(Opcode::MOV, &[Mod::from_text(if width == 64 { ".u64" } else { ".u32" }).expect("a type")], [cvta.operands[0].clone(), cvta.operands[1].clone()]) {
                Ok(m) => m,
                Err(_) => continue,
            };
            mov.guard = cvta.guard;
            out[root] = Stmt::Instr(Box::new(mov));
            for &(k, space) in accesses {
                let Stmt::Instr(ins) = &body[k] else { continue };
                if let Some(new) = in_space(ins, space) {
                    out[k] = Stmt::Instr(Box::new(new));
                }
            }
        }
    }
    if sites.is_empty() {
        return Some(g);
    }
    let reg_ty = if width == 64 { ScalarType::U64 } else { ScalarType::U32 };
    let add_mods = [if width == 64 { Mod::S64 } else { Mod::S32 }];
    // Registers for the sums, allocated first (their declarations go at the top).
    let temps: Vec<Vec<RegId>> = sites.iter().map(|(_, o, _, _)| o.regs.iter().map(|_| g.new_reg(reg_ty)).collect()).collect();
    let added = g.body.as_ref().map_or(0, |b| b.len()) - body.len();
    let old = g.body.take().unwrap_or_default();
    let mut out = Vec::with_capacity(old.len() + sites.len());
    let mut next = 0;
    let mut changed = false;
    for (k, s) in old.into_iter().enumerate() {
        let Some((site, o, offset, zero_written)) = sites.get(next).filter(|(site, ..)| *site + added == k) else {
            out.push(s);
            continue;
        };
        let _ = site;
        let regs = &temps[next];
        next += 1;
        let Stmt::Instr(ins) = &s else {
            out.push(s);
            continue;
        };
        match rewrite(ins, o, *offset, *zero_written, regs, &add_mods) {
            Some(seq) => {
                out.extend(seq.into_iter().map(|i| Stmt::Instr(Box::new(i))));
                changed = true;
            }
            None => out.push(s),
        }
    }
    g.body = Some(out);
    changed.then_some(g)
}


/// The access in its space, preceded by the adds of the registers the
/// address was formed with; `None` if the tables have no such form.
fn rewrite(ins: &Instruction, o: &Origin, offset: i64, zero_written: bool, temps: &[RegId], add_mods: &[Mod]) -> Option<Vec<Instruction>> {
    // A symbol is an operand of `mov` only: registers are not added to one.
    if matches!(o.base, Base::Sym(..)) && !o.regs.is_empty() {
        return None;
    }
    let mut seq = Vec::with_capacity(temps.len() + 1);
    let mut base = o.base.clone();
    for ((r, _), t) in o.regs.iter().zip(temps) {
        let from = match &base {
            Base::Reg(x, _) => Operand::reg(*x),
            Base::Sym(n, off) => Operand::sym(n.clone(), *off),
        };
        seq.push(Instruction::new(Opcode::ADD, add_mods, [Operand::reg(*t), from, Operand::reg(*r)]).ok()?);
        base = Base::Reg(*t, VersionDef::Entry);
    }
    let addr = match base {
        // `[r+0]` stays spelled so (ptxas reads the two spellings differently in debug builds).
        Base::Reg(x, _) => Address { base: AddrBase::Reg(x), offset, unified: false, zero_written: zero_written && offset == 0 },
        Base::Sym(n, off) => Address { base: AddrBase::Sym(n), offset: off.checked_add(offset).filter(|c| i32::try_from(*c).is_ok())?, unified: false, zero_written: false },
    };
    let space = Mod::from_text(o.space.text())?;
    let mut mods: Vec<Mod> = ins.modifiers().map(|(_, m)| m).collect();
    mods.push(space);
    let operands = ins.operands.iter().map(|op| if let Operand::Addr(_) = op { Operand::Addr(Box::new(addr.clone())) } else { op.clone() });
    let mut new = Instruction::new(ins.opcode, &mods, operands).ok()?;
    new.guard = ins.guard;
    seq.push(new);
    Some(seq)
}

/// The roots (`cvta` statements) whose whole tree of addresses can become
/// space addresses in place, with the accesses of each tree and their
/// space: every read of every address of the tree is either a `mov`/`add`/
/// `sub` making another address of it, or the address of a generic access
/// that has a form in the space; and no register holding one is merged at
/// a φ or written in part. Only trees with an access whose address has a
/// register added on the way.
fn trees_in_place(f: &Function, body: &[Stmt], view: &ValueView, origins: &FxHashMap<Version, Origin>, width: u32) -> FxHashMap<usize, Vec<(usize, StateSpace)>> {
    let mut escaped: rustc_hash::FxHashSet<usize> = rustc_hash::FxHashSet::default();
    let mut accesses: FxHashMap<usize, Vec<(usize, StateSpace)>> = FxHashMap::default();
    let mut needs_sum: rustc_hash::FxHashSet<usize> = rustc_hash::FxHashSet::default();
    for (v, o) in origins {
        if view.needs_writes(v.reg) || matches!(&o.base, Base::Sym(..)) && !o.regs.is_empty() {
            escaped.insert(o.root);
        }
    }
    for (k, s) in body.iter().enumerate() {
        let Stmt::Instr(ins) = s else { continue };
        let held: Vec<(RegId, &Origin)> = view.reads(k).iter().filter_map(|(r, v)| origins.get(v).map(|o| (*r, o))).collect();
        if held.is_empty() {
            continue;
        }
        let reads_of = |r: RegId| {
            let mut n = 0;
            ins.for_each_reg(|x, a| n += usize::from(x == r && a.read));
            n
        };
        let single = held.len() == 1 && reads_of(held[0].0) == 1;
        let (r, o) = held[0];
        // A producer of the same tree.
        let produces = origin_of(f, view, origins, k, ins, width).is_some_and(|(_, p)| p.root == o.root);
        if single && produces {
            continue;
        }
        // An access through it.
        let through = single
            && matches!(ins.opcode, Opcode::LD | Opcode::ST | Opcode::ATOM | Opcode::RED | Opcode::PREFETCH)
            && ins.space() == StateSpace::Generic
            && ins.operands.iter().any(|op| matches!(op, Operand::Addr(a) if a.base == AddrBase::Reg(r) && !a.unified))
            && in_space(ins, o.space).is_some();
        if through {
            accesses.entry(o.root).or_default().push((k, o.space));
            if !o.regs.is_empty() {
                needs_sum.insert(o.root);
            }
            continue;
        }
        for (_, o) in held {
            escaped.insert(o.root);
        }
    }
    // Trees whose accesses all lie at the space address plus a constant are
    // the other path's (it writes them as `[sym+c]` / `[x+c]`).
    accesses.retain(|root, _| !escaped.contains(root) && needs_sum.contains(root));
    accesses
}

/// Does the manual give this generic access a form in `space`? (`st` not
/// to `.const`, `atom`/`red` to `.global`/`.shared`, `prefetch` to
/// `.global`/`.local`; `.v8`, and `.v4` of 64-bit elements, for `.global`
/// only.)
fn has_form_in(ins: &Instruction, space: StateSpace) -> bool {
    let has_space = match ins.opcode {
        Opcode::LD => true,
        Opcode::ST => space != StateSpace::Const,
        Opcode::ATOM | Opcode::RED => matches!(space, StateSpace::Global | StateSpace::Shared),
        Opcode::PREFETCH => matches!(space, StateSpace::Global | StateSpace::Local),
        _ => false,
    };
    let wide_vector = ins.has(Mod::V8) || (ins.has(Mod::V4) && ins.ty().is_some_and(|t| t.bits() == 64));
    has_space && (!wide_vector || space == StateSpace::Global)
}

/// The access in `space` with the same operands, if it has a form there.
fn in_space(ins: &Instruction, space: StateSpace) -> Option<Instruction> {
    if !has_form_in(ins, space) {
        return None;
    }
    let mut mods: Vec<Mod> = ins.modifiers().map(|(_, m)| m).collect();
    mods.push(Mod::from_text(space.text())?);
    let mut new = Instruction::new(ins.opcode, &mods, ins.operands.iter().cloned()).ok()?;
    new.guard = ins.guard;
    Some(new)
}

