//! `promote-local`: stack slots become registers (mem2reg for `.local`).
//!
//! Naive producers keep every local variable in a `.local` array (clang's
//! `__local_depot`, reached as `%SPL` = `mov __local_depot0` and `%SP` =
//! `cvta.local %SPL`), and ptxas cannot see through the generic address:
//! each slot stays in memory (`LD.E`/`ST.E`, or `LDL`/`STL`). This pass
//! gives a slot a register when
//!
//! - the variable is declared in the function body (outermost scope, one
//!   declaration of the name), in `.local`;
//! - every address of it is known: the symbol itself, a copy (`mov`) of it,
//!   its generic address (`cvta.local`) or back (`cvta.to.local`), plus or
//!   minus constants (`add`/`sub` of an immediate), each through one
//!   definition (the value view's versions; a register holding an address
//!   is never merged at a φ nor written under a guard);
//! - no address escapes: every read of a register holding one is the
//!   address of a `ld`/`st` of the matching space (`.local` for the local
//!   address, generic for the generic one) or makes another address as
//!   above. A stored address, an argument, a comparison, an `atom` or any
//!   other use keeps the whole variable in memory;
//! - the accesses to the slot's bytes all have one offset and one size (2,
//!   4 or 8 bytes), are scalar and plain (only type and space modifiers: no
//!   `.volatile`, cache or ordering qualifiers), and move whole registers of
//!   the access size, or wider integer registers (a load into a wider
//!   register extends as `ld` does: sign for `.s` types, zero otherwise; a
//!   store from a wider register keeps the low bits).
//!
//! The slot is then a register (of the type its accesses' registers share,
//! else `.bN`): `st [a], v` becomes `mov` (or `cvt`
//! narrowing) into it, `ld d, [a]` a `mov` (or `cvt` widening) out of it,
//! each keeping its guard. Registers are variables in PTX, so no φ is built:
//! ptxas (and the value view) make SSA of them. Every replacement is one
//! statement for one, so the CFG is preserved. Slots that overlap other
//! accesses, 1-byte slots and vector accesses stay in memory. The address
//! computations left without readers are removed by `dce`, the declaration
//! by `dead-decls`.
//!
//! Below `-O3`, each loop that held a promoted slot gets `.pragma
//! "nounroll"` in its header (unless it has one): with the slot in a
//! register ptxas sees the trip count and unrolls loops it left rolled
//! before, which shortens each iteration but adds static instructions
//! (measured: a clang `-O0` `row_max` kernel, 63 SASS instructions as
//! input, 84 unrolled, fewer than 63 rolled). `-O3` leaves ptxas free.
//!
//! Correctness rests on `.local` being private to the thread: no other
//! thread, and no callee without the address, can read or write the slot.

use super::operands::{for_each_symbol, only_types, plain_reg};
use super::{Analyses, Pass, Preserves};
use crate::lower::builder::{imm, type_mod};
use crate::values::{ValueView, Version};
use crate::{ModuleContext, OptLevel};
use ptx_ir::ir::{AddrBase, Function, Instruction, Name, Operand, Prefix, RegId, Stmt};
use ptx_ir::isa::{Mod, ModKind, Opcode, ScalarType, SlotRole, StateSpace, TypeClass};
use rustc_hash::FxHashMap;

pub const PASS: Pass = Pass {
    name: "promote-local",
    description: "function-scope .local variables (clang's __local_depot stack) whose address does not escape: slots accessed at one offset and size become registers",
    run,
    preserves: Preserves::Cfg,
    edit: Some(edit),
};

/// Which address of a variable a register holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// The `.local` address (`mov r, var`).
    Local,
    /// The generic address (`cvta.local`).
    Generic,
}

/// An address of variable `var` (an index into the candidates) plus `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Origin {
    var: usize,
    kind: Kind,
    offset: i64,
}

/// A candidate variable.
struct Var {
    name: Name,
    bytes: u64,
    escaped: bool,
}

/// One access of a variable's bytes.
struct Access {
    stmt: usize,
    var: usize,
    offset: i64,
    bytes: u64,
    /// The access could become a register move (scalar, plain, sizes match).
    plain: bool,
}

/// What the pass changes in a function: a register per promoted slot, the
/// accesses' replacements (by statement of the input), and the statements
/// (of the input) a `nounroll` pragma goes before.
#[derive(Debug, PartialEq)]
struct Promotion {
    slot_types: Vec<ScalarType>,
    /// The registers [`apply`] declares, in order ([`Function::new_reg`]
    /// numbers a new register after the function's).
    slots: Vec<RegId>,
    new_stmt: FxHashMap<usize, Instruction>,
    nounroll_at: Vec<usize>,
}

fn run(f: &Function, analyses: &mut Analyses, ctx: &ModuleContext, level: OptLevel) -> Option<Function> {
    let p = promotion(f, analyses, ctx, level)?;
    let mut g = f.clone();
    apply(&mut g, p);
    Some(g)
}

/// [`run`] in place.
fn edit(f: &mut Function, analyses: &mut Analyses, ctx: &ModuleContext, level: OptLevel) -> bool {
    let Some(p) = promotion(f, analyses, ctx, level) else { return false };
    apply(f, p);
    true
}

/// Declares the slots' registers and puts the replacements and pragmas in.
fn apply(g: &mut Function, p: Promotion) {
    let before = g.body.as_ref().map_or(0, |b| b.len());
    for (&t, &slot) in p.slot_types.iter().zip(&p.slots) {
        let declared = g.new_reg(t);
        debug_assert_eq!(declared, slot, "a new register is numbered after the function's");
    }
    let out = g.body.as_mut().expect("a body");
    let added = out.len() - before;
    for (k, ins) in p.new_stmt {
        out[k + added] = Stmt::Instr(Box::new(ins));
    }
    for at in p.nounroll_at.into_iter().rev() {
        out.insert(at + added, Stmt::Pragma(vec![NOUNROLL.into()]));
    }
}

/// The slots of `f` to promote and how, if any.
fn promotion(f: &Function, analyses: &mut Analyses, ctx: &ModuleContext, level: OptLevel) -> Option<Promotion> {
    promotion_by(f, analyses, ctx, level, Holders::Marked)
}

/// How [`promotion_by`] tells the registers that may hold an address.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Holders {
    /// Those an address was made into: the others are let go unlooked.
    Marked,
    /// Every register is looked up (the general path, for tests).
    #[cfg_attr(not(test), allow(dead_code))]
    All,
}

/// [`promotion`], with the registers that may hold an address told as `holders` says.
fn promotion_by(f: &Function, analyses: &mut Analyses, ctx: &ModuleContext, level: OptLevel, holders_by: Holders) -> Option<Promotion> {
    let body = f.body.as_ref()?;
    let mut vars = candidates(body);
    if vars.is_empty() {
        return None;
    }
    let index: FxHashMap<Name, usize> = vars.iter().enumerate().map(|(i, v)| (v.name.clone(), i)).collect();
    let width = ctx.address_size;
    let (cfg, dom, view) = analyses.values(f);

    // Origins of versions.
    // `holders`: the registers some version of which has an origin (every
    // fact `propagate` keeps is one `produced` returned), so an operand in
    // no holder is no address without a hash lookup (renderer -O2:
    // `propagate` 14.3 -> 10.6 M, the walk's lookups and symbol walks with it).
    let mut holders = vec![holders_by == Holders::All; f.regs.len()];
    let origins = view.propagate(body, PRODUCERS, |k, ins, origins| {
        let made = produced(f, &view, origins, &holders, &index, k, ins, width);
        if let Some((dest, _)) = made {
            holders[dest.0 as usize] = true;
        }
        made
    });

    // A register holding an address must be a plain SSA value.
    for (v, o) in &origins {
        if view.needs_writes(v.reg) {
            vars[o.var].escaped = true;
        }
    }
    // An escape is never taken back: once every candidate has escaped, no
    // slot can be promoted, so the walk below would find nothing (renderer
    // -O2: each function's one candidate escapes about halfway through it).
    if all_escaped(&vars) {
        return None;
    }

    // Every use of an address or a symbol: an access, a producer, or an escape.
    let mut accesses: Vec<Access> = Vec::new();
    for (k, s) in body.iter().enumerate() {
        let Stmt::Instr(ins) = s else { continue };
        if !view.reachable(k) {
            // Never executed; an unreachable use of a symbol still keeps
            // it (the statement stays in the text).
            let mut escaped = false;
            for_each_symbol(ins, |n| {
                if let Some(&i) = index.get(n) {
                    vars[i].escaped = true;
                    escaped = true;
                }
            });
            if escaped && all_escaped(&vars) {
                return None;
            }
            continue;
        }
        if classify(f, &view, &origins, &holders, &index, k, ins, width, &mut vars, &mut accesses) && all_escaped(&vars) {
            return None;
        }
    }

    // Slots: accesses grouped by overlapping byte ranges, per variable.
    accesses.retain(|a| !vars[a.var].escaped);
    accesses.sort_by_key(|a| (a.var, a.offset, a.stmt));
    let mut slots: Vec<(usize, usize)> = Vec::new(); // ranges of `accesses`
    let mut i = 0;
    while i < accesses.len() {
        let mut j = i + 1;
        let mut end = accesses[i].offset + accesses[i].bytes as i64;
        while j < accesses.len() && accesses[j].var == accesses[i].var && accesses[j].offset < end {
            end = end.max(accesses[j].offset + accesses[j].bytes as i64);
            j += 1;
        }
        slots.push((i, j));
        i = j;
    }
    let mut promoted: Vec<(usize, usize, u64)> = Vec::new(); // (first, end, bytes)
    for &(a, b) in &slots {
        let group = &accesses[a..b];
        let first = &group[0];
        let inside = first.offset >= 0 && (first.offset as u64).checked_add(first.bytes).is_some_and(|e| e <= vars[first.var].bytes);
        if inside && matches!(first.bytes, 2 | 4 | 8) && group.iter().all(|x| x.plain && x.offset == first.offset && x.bytes == first.bytes) {
            promoted.push((a, b, first.bytes));
        }
    }
    if promoted.is_empty() {
        return None;
    }

    let slot_types: Vec<ScalarType> = promoted.iter().map(|&(a, b, bytes)| slot_type(f, body, &accesses[a..b], bytes as u32 * 8)).collect();
    let slots: Vec<RegId> = (0..slot_types.len()).map(|k| RegId((f.regs.len() + k) as u32)).collect();
    let mut new_stmt: FxHashMap<usize, Instruction> = FxHashMap::default();
    for ((&(a, b, bytes), &slot), &slot_ty) in promoted.iter().zip(&slots).zip(&slot_types) {
        for acc in &accesses[a..b] {
            let Stmt::Instr(ins) = &body[acc.stmt] else { unreachable!("accesses are instructions") };
            match replacement(f, ins, slot, bytes as u32 * 8, slot_ty) {
                Some(r) => {
                    new_stmt.insert(acc.stmt, r);
                }
                // A form the tables refuse: give up on the function rather
                // than leave a slot half in memory.
                None => return None,
            }
        }
    }
    // Below -O3, loops that kept a slot keep ptxas's unrolling decision.
    let nounroll_at = if level < OptLevel::O3 { loops_touched(cfg, dom, body, new_stmt.keys().copied()) } else { Vec::new() };
    Some(Promotion { slot_types, slots, new_stmt, nounroll_at })
}

/// The pragma string that keeps ptxas from unrolling a loop.
const NOUNROLL: &str = "\"nounroll\"";

/// Where a `nounroll` pragma goes for each loop containing one of the
/// statements `touched` (just after its header's label), in statement
/// order; loops that have one already are skipped.
fn loops_touched(cfg: &ptx_ir::cfg::Cfg, dom: &ptx_ir::analysis::DomTree, body: &[Stmt], touched: impl Iterator<Item = usize>) -> Vec<usize> {
    let forest = ptx_ir::analysis::LoopForest::compute(cfg, dom);
    let touched: Vec<usize> = touched.collect();
    let mut at: Vec<usize> = Vec::new();
    for l in &forest.loops {
        if !l.body.iter().any(|b| touched.iter().any(|&k| cfg.block_of_stmt.get(k) == Some(b))) {
            continue;
        }
        let range = cfg.block(l.header).stmts.clone();
        let mut k = range.start;
        while k < range.end && matches!(body[k], Stmt::Label(_)) {
            k += 1;
        }
        let has = body[range.start..range.end].iter().take_while(|s| !matches!(s, Stmt::Instr(_))).any(|s| matches!(s, Stmt::Pragma(p) if p.iter().any(|x| x.as_ref() == NOUNROLL)));
        if !has && !at.contains(&k) {
            at.push(k);
        }
    }
    at.sort_unstable();
    at
}

/// Has every candidate escaped (nothing left to promote)?
fn all_escaped(vars: &[Var]) -> bool {
    vars.iter().all(|v| v.escaped)
}

/// The `.local` variables declared once, at the outermost scope of `body`,
/// with their sizes in bytes.
fn candidates(body: &[Stmt]) -> Vec<Var> {
    let mut depth = 0usize;
    let mut seen: FxHashMap<Name, usize> = FxHashMap::default();
    let mut vars: Vec<Var> = Vec::new();
    for s in body {
        match s {
            Stmt::ScopeBegin => depth += 1,
            Stmt::ScopeEnd => depth = depth.saturating_sub(1),
            // Not `.reg`: a boxed declaration.
            Stmt::Decl(d) if d.space() != StateSpace::Reg => {
                let Some(d) = d.as_var() else { continue };
                for dn in &d.names {
                    *seen.entry(dn.name.clone()).or_insert(0) += 1;
                    if depth > 0 || d.space != StateSpace::Local || dn.range.is_some() || dn.init.is_some() {
                        continue;
                    }
                    let elem = (d.ty.bits() as u64 / 8).max(1) * d.vector.map_or(1, u64::from);
                    let Some(count) = dn.dims.iter().try_fold(1u64, |acc, d| acc.checked_mul((*d)?)) else { continue };
                    let Some(bytes) = elem.checked_mul(count) else { continue };
                    vars.push(Var { name: dn.name.clone(), bytes, escaped: false });
                }
            }
            _ => {}
        }
    }
    vars.retain(|v| seen.get(&v.name) == Some(&1));
    vars
}

/// The opcodes that make an address from another ([`produced`]'s `match`).
const PRODUCERS: &[Opcode] = &[Opcode::MOV, Opcode::CVTA, Opcode::ADD, Opcode::SUB];

/// The address an instruction makes from a variable (its destination and
/// origin), if it is a producer.
/// `holders` marks the registers with an origin in `origins`.
#[allow(clippy::too_many_arguments)]
fn produced(f: &Function, view: &ValueView, origins: &FxHashMap<Version, Origin>, holders: &[bool], index: &FxHashMap<Name, usize>, k: usize, ins: &Instruction, width: u32) -> Option<(RegId, Origin)> {
    if !PRODUCERS.contains(&ins.opcode) || ins.guard.is_some() || ins.operands.len() < 2 {
        return None;
    }
    // An address is made from a symbol or a register holding one; most
    // `mov`s and `add`s read neither, and are let go before `ty()`.
    if !ins.operands[1..].iter().any(|o| match o {
        Operand::Sym(_) => true,
        Operand::Reg(r) => holds(holders, r.reg),
        _ => false,
    }) {
        return None;
    }
    let ty = ins.ty()?;
    if ty.bits() != width || !matches!(ty.class(), TypeClass::Bits | TypeClass::Unsigned | TypeClass::Signed) {
        return None;
    }
    let dest = plain_reg(f, &ins.operands[0], Some(width))?;
    let origin = |o: &Operand| -> Option<Origin> {
        let r = plain_reg(f, o, Some(width))?;
        origins.get(&view.read(k, r)?).copied()
    };
    let sym = |o: &Operand| -> Option<(usize, i64)> {
        match o {
            Operand::Sym(s) => Some((*index.get(&s.name)?, s.offset)),
            _ => None,
        }
    };
    match ins.opcode {
        Opcode::MOV if ins.operands.len() == 2 && only_types(ins) => {
            if let Some((var, offset)) = sym(&ins.operands[1]) {
                return Some((dest, Origin { var, kind: Kind::Local, offset }));
            }
            Some((dest, origin(&ins.operands[1])?))
        }
        Opcode::CVTA if ins.operands.len() == 2 && ins.space() == StateSpace::Local && ins.spaces().len() == 1 => {
            let to = ins.has(Mod::TO);
            if !to {
                if let Some((var, offset)) = sym(&ins.operands[1]) {
                    return Some((dest, Origin { var, kind: Kind::Generic, offset }));
                }
            }
            let o = origin(&ins.operands[1])?;
            match (to, o.kind) {
                (false, Kind::Local) => Some((dest, Origin { kind: Kind::Generic, ..o })),
                (true, Kind::Generic) => Some((dest, Origin { kind: Kind::Local, ..o })),
                _ => None,
            }
        }
        Opcode::ADD | Opcode::SUB if ins.operands.len() == 3 && only_types(ins) => {
            let sides: &[(usize, usize)] = if ins.opcode == Opcode::ADD { &[(1, 2), (2, 1)] } else { &[(1, 2)] };
            for &(a, b) in sides {
                let Some(o) = origin(&ins.operands[a]) else { continue };
                let Operand::Imm(i @ ptx_ir::ir::Imm::Int(_)) = &ins.operands[b] else { return None };
                let c = ptx_ir::eval::sext(ptx_ir::eval::imm_bits(i, ty), ty.bits()) as i64;
                let c = if ins.opcode == Opcode::SUB { c.checked_neg()? } else { c };
                return Some((dest, Origin { offset: o.offset.checked_add(c)?, ..o }));
            }
            None
        }
        _ => None,
    }
}

/// Records what instruction `k` does with the variables: an access (pushed
/// to `accesses`), a producer (nothing to record), or an escape (then it
/// returns true).
#[allow(clippy::too_many_arguments)]
fn classify(f: &Function, view: &ValueView, origins: &FxHashMap<Version, Origin>, holders: &[bool], index: &FxHashMap<Name, usize>, k: usize, ins: &Instruction, width: u32, vars: &mut [Var], accesses: &mut Vec<Access>) -> bool {
    // The registers read that hold addresses, and the symbols named.
    let held: Vec<(RegId, Origin)> = view.reads(k).iter().filter(|(r, _)| holds(holders, *r)).filter_map(|(r, v)| origins.get(v).map(|o| (*r, *o))).collect();
    let mut syms: Vec<usize> = Vec::new();
    for_each_symbol(ins, |n| {
        if let Some(&i) = index.get(n) {
            syms.push(i);
        }
    });
    if held.is_empty() && syms.is_empty() {
        return false;
    }
    let reads_of = |r: RegId| {
        let mut n = 0;
        ins.for_each_reg(|x, a| n += usize::from(x == r && a.read));
        n
    };
    // A producer reads one address once, in its source slot.
    if produced(f, view, origins, holders, index, k, ins, width).is_some() && held.len() + syms.len() == 1 && held.iter().all(|(r, _)| reads_of(*r) == 1) {
        return false;
    }
    // A load or a store through one address, read once.
    if let Some(acc) = access(f, view, origins, index, k, ins) {
        let through_reg = held.len() == 1 && syms.is_empty() && reads_of(held[0].0) == 1;
        let through_sym = held.is_empty() && syms.len() == 1;
        if through_reg || through_sym {
            accesses.push(acc);
            return false;
        }
    }
    for (_, o) in held {
        vars[o.var].escaped = true;
    }
    for v in syms {
        vars[v].escaped = true;
    }
    true
}

/// Does some version of register `r` hold an address ([`promotion`]'s `holders`)?
fn holds(holders: &[bool], r: RegId) -> bool {
    holders.get(r.0 as usize).copied().unwrap_or(false)
}

/// A `ld`/`st` of a variable at a known offset.
fn access(f: &Function, view: &ValueView, origins: &FxHashMap<Version, Origin>, index: &FxHashMap<Name, usize>, k: usize, ins: &Instruction) -> Option<Access> {
    let (data, addr) = match ins.opcode {
        Opcode::LD if ins.operands.len() == 2 => (0, 1),
        Opcode::ST if ins.operands.len() == 2 => (1, 0),
        _ => return None,
    };
    let Operand::Addr(a) = &ins.operands[addr] else { return None };
    if a.unified {
        return None;
    }
    let space = ins.space();
    let (var, offset) = match &a.base {
        AddrBase::Reg(r) => {
            let o = origins.get(&view.read(k, *r)?)?;
            let kind = if space == StateSpace::Local { Kind::Local } else { Kind::Generic };
            if space != StateSpace::Local && space != StateSpace::Generic || o.kind != kind {
                return None;
            }
            (o.var, o.offset.checked_add(a.offset)?)
        }
        AddrBase::Sym(n) if space == StateSpace::Local => (*index.get(n)?, a.offset),
        _ => return None,
    };
    let ty = ins.ty()?;
    let lanes = u64::from(ins.vector().unwrap_or(1));
    let bytes = (u64::from(ty.bits()) / 8).max(1) * lanes;
    // Plain: type and space modifiers only, scalar, a register of the access
    // size (or a wider integer register), or an immediate stored.
    let mods_plain = ins.modifiers().all(|(r, m)| r == SlotRole::Type || (r == SlotRole::Space && matches!(m.kind(), ModKind::Space(_))));
    let plain = mods_plain && lanes == 1 && data_fits(f, &ins.operands[data], ty, ins.opcode == Opcode::ST);
    Some(Access { stmt: k, var, offset, bytes, plain })
}

/// Can the data operand move to or from a register of the type's size?
fn data_fits(f: &Function, o: &Operand, ty: ScalarType, store: bool) -> bool {
    let n = ty.bits();
    let int = matches!(ty.class(), TypeClass::Bits | TypeClass::Unsigned | TypeClass::Signed);
    match o {
        Operand::Reg(r) if r.prefix == Prefix::None && r.sel.is_none() => {
            let Some(reg) = f.regs.get(r.reg.0 as usize) else { return false };
            let w = reg.ty.bits();
            reg.vector.is_none() && reg.ty != ScalarType::Pred && (w == n || (int && w > n && matches!(w, 32 | 64) && matches!(reg.ty.class(), TypeClass::Bits | TypeClass::Unsigned | TypeClass::Signed)))
        }
        Operand::Imm(_) => store,
        _ => false,
    }
}

/// The bit-size type of a slot (2, 4 or 8 bytes).
fn bits_type(bits: u32) -> ScalarType {
    ScalarType::bit_sized(bits).expect("slots are 16, 32 or 64 bits")
}

/// The integer type of a slot or of a register wider than it (16 to 64 bits).
fn int_type(bits: u32, signed: bool) -> ScalarType {
    ScalarType::integer(bits, signed).expect("slots and registers are 16, 32 or 64 bits")
}

/// The slot register's type: the type of every data register of the
/// slot's size its accesses move (`.f32` for a float variable, so copies of
/// it need no change of type), else `.bN`; `.bN` too when a float slot
/// would take an immediate or a `cvt` from a wider register.
fn slot_type(f: &Function, body: &[Stmt], group: &[Access], bits: u32) -> ScalarType {
    let mut common: Option<ScalarType> = None;
    // An immediate stored, or a wider register moved through `cvt`: the
    // slot must be an integer (or bit) register.
    let mut needs_int = false;
    for acc in group {
        let Stmt::Instr(ins) = &body[acc.stmt] else { continue };
        let data = if ins.opcode == Opcode::LD { &ins.operands[0] } else { &ins.operands[1] };
        match data {
            Operand::Reg(r) if f.reg(r.reg).ty.bits() == bits => match common {
                None => common = Some(f.reg(r.reg).ty),
                Some(t) if t == f.reg(r.reg).ty => {}
                Some(_) => return bits_type(bits),
            },
            _ => needs_int = true,
        }
    }
    // Types `mov` takes as they are.
    const MOVABLE: &[ScalarType] = &[ScalarType::U16, ScalarType::S16, ScalarType::U32, ScalarType::S32, ScalarType::U64, ScalarType::S64, ScalarType::F32, ScalarType::F64, ScalarType::B16, ScalarType::B32, ScalarType::B64];
    match common {
        Some(t) if MOVABLE.contains(&t) && !(needs_int && t.class() == TypeClass::Float) => t,
        _ => bits_type(bits),
    }
}

/// The register move that replaces an access of a promoted slot (`slot`,
/// `bits` wide, of type `slot_ty`), keeping the guard.
fn replacement(f: &Function, ins: &Instruction, slot: RegId, bits: u32, slot_ty: ScalarType) -> Option<Instruction> {
    let ty = ins.ty()?;
    let mut new = match ins.opcode {
        Opcode::LD => {
            let d = &ins.operands[0];
            let Operand::Reg(r) = d else { return None };
            let w = f.reg(r.reg).ty.bits();
            if w == bits {
                Instruction::new(Opcode::MOV, &[type_mod(slot_ty)], [d.clone(), Operand::reg(slot)]).ok()?
            } else {
                // `ld` extends: sign for signed types, zero otherwise.
                let signed = ty.class() == TypeClass::Signed;
                Instruction::new(Opcode::CVT, &[type_mod(int_type(w, signed)), type_mod(int_type(bits, signed))], [d.clone(), Operand::reg(slot)]).ok()?
            }
        }
        Opcode::ST => {
            let v = &ins.operands[1];
            match v {
                Operand::Imm(i) => Instruction::new(Opcode::MOV, &[type_mod(slot_ty)], [Operand::reg(slot), imm(ptx_ir::eval::imm_bits(i, ty), slot_ty)]).ok()?,
                Operand::Reg(r) if f.reg(r.reg).ty.bits() == bits => Instruction::new(Opcode::MOV, &[type_mod(slot_ty)], [Operand::reg(slot), v.clone()]).ok()?,
                Operand::Reg(r) => {
                    // `st` from a wider register keeps the low bits.
                    let w = f.reg(r.reg).ty.bits();
                    Instruction::new(Opcode::CVT, &[type_mod(int_type(bits, false)), type_mod(int_type(w, false))], [Operand::reg(slot), v.clone()]).ok()?
                }
                _ => return None,
            }
        }
        _ => return None,
    };
    new.guard = ins.guard;
    Some(new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptx_ir::ir::Item;

    /// Letting go of the registers no address was made into finds what
    /// looking every register up finds: promoted slots, escapes through
    /// stores, register offsets, overlaps, guards and depots.
    #[test]
    fn marked_holders_find_what_looking_up_all_finds() {
        let texts = [
            include_str!("../../../tests/spec/opt/promote-local/escapes-and-overlaps.ptx"),
            include_str!("../../../tests/spec/opt/promote-local/depot-slots.ptx"),
            include_str!("../../../tests/spec/opt/promote-local/types-and-guards.ptx"),
        ];
        let (mut functions, mut promoted) = (0, 0);
        for text in texts {
            // A case is its input, then the expected output (from the second `.version`).
            let second = text.match_indices(".version").nth(1).map_or(text.len(), |(i, _)| i);
            let m = ptx_ir::parse_str(&text[..second]).unwrap_or_else(|d| panic!("{d}"));
            let ctx = ModuleContext::of_module(&m);
            for item in &m.items {
                let Item::Func(f) = item else { continue };
                functions += 1;
                let all = promotion_by(f, &mut Analyses::default(), &ctx, OptLevel::O2, Holders::All);
                let marked = promotion_by(f, &mut Analyses::default(), &ctx, OptLevel::O2, Holders::Marked);
                promoted += usize::from(all.is_some());
                assert_eq!(marked, all, "{}", f.name);
            }
        }
        assert!(functions >= 3 && promoted >= 3, "{functions} functions, {promoted} promoting");
    }
}
