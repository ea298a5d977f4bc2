//! From a function to an e-graph: which statements become e-graph values,
//! which stay in place (the *skeleton*), and the e-class of every register
//! read the engine may rewrite.
//!
//! A statement is a **value** when it is an unguarded instruction whose form
//! is pure in the ISA tables (no memory operand, no flags: no carry, no
//! synchronization, no volatile read), which the evaluator knows, with one
//! written operand that is a whole scalar register of 1, 16, 32 or 64 bits,
//! and sources that are scalar registers, immediates, vectors of those,
//! non-volatile special registers or symbols (of the module, the signature or
//! the body's leading declarations: names visible everywhere in the function). Everything else
//! is skeleton and keeps its place and order.
//!
//! Registers are values through the [`ValueView`]: each read names a version;
//! a version written by a value statement is that statement's e-class; any
//! other version (written by the skeleton, a φ, the entry) is a leaf that is
//! available only where the register still holds it. A register some
//! skeleton statement reads in a way the engine cannot rewrite (an `inout`
//! operand, a vector lane, a texture coordinate, a call list ...), or that
//! [`ValueView::needs_writes`] names, is **physical**: every write to it
//! stays a write to it, at its place.

use super::facts::{EGraph, Facts};
use super::lang::{type_width, LeafId, Node, ShapeId, TemplateView};
use crate::values::{Version, VersionDef, ValueView};
use egg::Id;
use ptx_ir::cfg::Cfg;
use ptx_ir::analysis::DomTree;
use ptx_ir::eval::{self, imm_bits, Dialect};
use ptx_ir::ir::{Function, Instruction, Operand, RegId, Selector, SpecialReg, Stmt};
use ptx_ir::isa::{Flags, ScalarType};
use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;

/// What becomes of one statement.
#[derive(Clone, Debug)]
pub enum Plan {
    /// Copied as it is (not an instruction, or unreachable).
    Keep,
    /// A skeleton instruction; `reads` are the register operands the emitter
    /// may replace, each with the class of the value it reads.
    Skeleton { reads: SmallVec<[(RegId, Id); 4]> },
    /// A value: the class of the value it writes to `dest`. With `physical`,
    /// `dest` must be written here (with that value) in the output.
    Value { class: Id, dest: RegId, physical: bool, input: Option<InputNode> },
}

/// The node a value statement is in the input: its shape, per operand the
/// class it reads, and which sources the input wrote as literals.
///
/// The build holds a plan per statement of the function at once (at the
/// run's peak memory, in the e-graph of its largest function): with a
/// register and a literal per source in place, and a flag per source that
/// the literals already say, a plan was 176 bytes; with the literals
/// copied out of the statement, 120; now 88: a literal is read in the
/// statement itself when it is written back ([`InputNode::literal`]).
#[derive(Clone, Debug)]
pub struct InputNode {
    pub shape: ShapeId,
    /// The statement's index in the body.
    stmt: u32,
    /// Bit `k`: source `k` is a literal the input wrote (an immediate).
    literals: u32,
    /// Each source's class, and the register it was read from (`None` for
    /// immediates and leaves): written back, the instruction reads the same
    /// register when it still holds the value, so that no live range grows.
    pub sources: SmallVec<[(Id, Option<RegId>); 3]>,
}

/// The most sources a value statement has ([`InputNode`] marks its
/// literals by bit): more than any instruction's operands give, vector
/// elements counted one by one.
const MAX_SOURCES: usize = 32;

impl InputNode {
    /// Did the input write source `k` as a literal?
    pub fn has_literal(&self, k: usize) -> bool {
        k < MAX_SOURCES && self.literals & (1 << k) != 0
    }

    /// The literal of source `k`, when the input wrote it as an immediate,
    /// as written (radix, float spelling); `body` is the input's body.
    pub fn literal<'b>(&self, body: &'b [Stmt], k: usize) -> Option<&'b ptx_ir::ir::Imm> {
        if !self.has_literal(k) {
            return None;
        }
        let Stmt::Instr(ins) = &body[self.stmt as usize] else { unreachable!("the statement of an input node is an instruction") };
        match source_operand(ins, k) {
            Some(Operand::Imm(i)) => Some(i),
            _ => unreachable!("a source the input wrote as a literal is an immediate"),
        }
    }
}

/// The operand of a value statement's `k`-th source, in the order
/// [`as_value`] numbers them: operands not written, a vector's elements one
/// by one.
fn source_operand(ins: &Instruction, mut k: usize) -> Option<&Operand> {
    for (op, spec) in ins.operands.iter().zip(ins.form.operands()) {
        if spec.write {
            continue;
        }
        match op {
            Operand::Vector(v) if k < v.len() => return v.iter().nth(k),
            Operand::Vector(v) => k -= v.len(),
            o if k == 0 => return Some(o),
            _ => k -= 1,
        }
    }
    None
}

/// Where a leaf's value can be found.
#[derive(Clone, Debug)]
pub enum LeafHome {
    /// In `reg` wherever the register holds `version`.
    Reg { reg: RegId, version: VersionDef },
    /// Anywhere, by `mov.TYPE d, operand` (a special register or a symbol's address).
    Materialize { ty: ScalarType, operand: Operand },
}

/// The e-graph of a function and how to put it back.
pub struct Built {
    pub egraph: EGraph,
    pub plans: Vec<Plan>,
    pub leaf_homes: Vec<LeafHome>,
    /// Number of value statements (original pure instructions).
    pub values: usize,
    /// Number of instructions of the function.
    pub instructions: usize,
}

/// How a source of a value statement feeds it (borrowed from the statement).
/// Sixteen bytes: the build holds one value statement per value statement
/// of the function at once (with the bits in place, 32 bytes, and 64 more
/// per statement of the largest matrix_free function at peak memory).
#[derive(Clone, Copy)]
enum Src<'a> {
    Reg(RegId),
    /// The literal as written and the operand's type ([`Src::imm_const`]
    /// gives its bits and width).
    Imm(ScalarType, &'a ptx_ir::ir::Imm),
    /// A special register or a symbol read as this type (a leaf found anywhere by a `mov`).
    Leaf(&'a Operand, ScalarType),
}

impl Src<'_> {
    /// An immediate's bits at the operand's width, and the width: a
    /// predicate takes only the lowest bit (`mov.pred p, 1`).
    fn imm_const(ty: ScalarType, imm: &ptx_ir::ir::Imm) -> (u128, u8) {
        if ty == ScalarType::Pred {
            (imm_bits(imm, ScalarType::B32) & 1, 1)
        } else {
            (imm_bits(imm, ty), type_width(ty))
        }
    }
}

/// The key and home of the leaf a [`Src::Leaf`] reads.
fn leaf_of(operand: &Operand, ty: ScalarType) -> (LeafKey, LeafHome) {
    let key = match operand {
        Operand::SReg(s, sel) => LeafKey::Special(*s, *sel, ty),
        Operand::Sym(s) => LeafKey::Symbol(s.name.clone(), s.offset, ty),
        _ => unreachable!("as_value takes only special registers and symbols as leaves"),
    };
    (key, LeafHome::Materialize { ty, operand: operand.clone() })
}

#[derive(Clone, PartialEq, Eq, Hash)]
enum LeafKey {
    Version(Version),
    Special(SpecialReg, Option<Selector>, ScalarType),
    Symbol(ptx_ir::ir::Name, i64, ScalarType),
}

/// What the first pass of [`build`] found a statement to be: a value
/// statement or a skeleton instruction, with its place in the list of
/// those, or neither (not an instruction). Eight bytes a statement, where
/// a value statement's or a skeleton's reads were held for every statement
/// (declarations and labels too: renderer's bodies are half declarations),
/// and written, moved and dropped with it.
#[derive(Clone, Copy)]
enum Found {
    Other,
    Value(u32),
    Skeleton(u32),
}

/// A value statement: its template (seen in the statement), destination and sources.
struct ValueStmt<'a> {
    template: TemplateView<'a>,
    dest: RegId,
    srcs: SmallVec<[Src<'a>; 3]>,
}

/// The value statement `ins` would be; `None` if it is skeleton.
fn as_value<'a>(f: &Function, ins: &'a Instruction) -> Option<ValueStmt<'a>> {
    if ins.guard.is_some() {
        return None;
    }
    let flags = ins.form.flags();
    // The carry flag is hidden state: its readers and writers stay in order.
    let carry = flags.intersects(Flags::CARRY_IN.union(Flags::CARRY_OUT)) || (flags.contains(Flags::CARRY_OUT_CC) && ins.has(ptx_ir::isa::Mod::CC));
    if !flags.is_pure() || carry {
        return None;
    }
    let specs = ins.form.operands();
    if ins.form.accesses_memory() || ins.operands.len() > specs.len() {
        return None;
    }
    if !eval::handles(ins.opcode) {
        return None;
    }
    let mut dest = None;
    let mut srcs: SmallVec<[Src<'a>; 3]> = SmallVec::new();
    for (k, (op, spec)) in ins.operands.iter().zip(specs).enumerate() {
        // Asked only of immediates, special registers and symbols.
        let ty = || ins.operand_type(k);
        if spec.write {
            if spec.read || dest.is_some() {
                return None;
            }
            let Operand::Reg(r) = op else { return None };
            let reg = f.regs.get(r.reg.0 as usize)?;
            if r.sel.is_some() || r.prefix != ptx_ir::ir::Prefix::None || reg.vector.is_some() || !matches!(type_width(reg.ty), 1 | 16 | 32 | 64) {
                return None;
            }
            dest = Some((k, r.reg));
            continue;
        }
        let mut one = |o: &'a Operand| -> Option<()> {
            match o {
                Operand::Reg(r) => {
                    let reg = f.regs.get(r.reg.0 as usize)?;
                    if reg.vector.is_some() || r.sel.is_some_and(|s| s.lane().is_some()) {
                        return None;
                    }
                    srcs.push(Src::Reg(r.reg));
                }
                Operand::Imm(i) => {
                    let t = ty()?;
                    // A predicate takes an immediate only as the source of
                    // `mov.pred` (what the emitter and `decided-setp` write).
                    if t == ScalarType::Pred && ins.opcode != ptx_ir::isa::Opcode::MOV {
                        return None;
                    }
                    srcs.push(Src::Imm(t, i));
                }
                Operand::SReg(s, _) if !s.is_volatile() => srcs.push(Src::Leaf(o, ty()?)),
                Operand::Sym(_) => {
                    let t = ty()?;
                    if !matches!(t.bits(), 32 | 64) {
                        return None;
                    }
                    srcs.push(Src::Leaf(o, t));
                }
                _ => return None,
            }
            Some(())
        };
        match op {
            // Vector elements stay registers (no immediates inside braces).
            Operand::Vector(v) => {
                for e in v.iter() {
                    if !matches!(e, Operand::Reg(_)) {
                        return None;
                    }
                    one(e)?;
                }
            }
            o => one(o)?,
        }
    }
    let (dest_index, dest) = dest?;
    if srcs.len() > MAX_SOURCES {
        return None;
    }
    // Special registers and symbols are read by `mov` only (the manual's
    // operand rules); in any other instruction the statement stays skeleton.
    if ins.opcode != ptx_ir::isa::Opcode::MOV && srcs.iter().any(|s| matches!(s, Src::Leaf(..))) {
        return None;
    }
    Some(ValueStmt { template: TemplateView { ins, dest: dest_index }, dest, srcs })
}

/// A source of a value statement, for tools that build e-graph nodes from
/// instructions the way the engine does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SourceOf {
    /// A register of this width.
    Reg(u8),
    /// An immediate: its bits at the operand's width.
    Imm(u128, u8),
    /// A special register or a symbol's address, of this width.
    Leaf(u8),
}

/// How the engine sees `ins` as a value: its shape template, the
/// destination register's width, and its sources; `None` if it is skeleton.
pub fn value_shape(f: &Function, ins: &Instruction) -> Option<(Instruction, u8, Vec<SourceOf>)> {
    value_parts(f, ins).map(|p| (p.template, p.dest_width, p.sources))
}

/// The register each source of [`value_shape`] reads, in the same order
/// (`None` for immediates, special registers and symbols), or `None` if
/// `ins` is skeleton. For tools that follow a source to its definition
/// through the [`ValueView`] (the peephole hunter, `ptx-hunt`).
pub fn value_regs(f: &Function, ins: &Instruction) -> Option<Vec<Option<RegId>>> {
    value_parts(f, ins).map(|p| p.regs)
}

/// What [`value_dest`], [`value_shape`] and [`value_regs`] give, found at once.
pub struct ValueParts {
    pub dest: RegId,
    pub template: Instruction,
    pub dest_width: u8,
    pub sources: Vec<SourceOf>,
    /// Per source, the register it reads (none for immediates and leaves).
    pub regs: Vec<Option<RegId>>,
}

/// `ins` as a value (see [`value_shape`]) with its destination and the
/// register of each source; `None` if it is skeleton.
pub fn value_parts(f: &Function, ins: &Instruction) -> Option<ValueParts> {
    let ValueStmt { template, dest, srcs } = as_value(f, ins)?;
    let reg_width = |r: RegId| type_width(f.regs[r.0 as usize].ty);
    let regs = srcs.iter().map(|s| if let Src::Reg(r) = s { Some(*r) } else { None }).collect();
    let sources = srcs
        .into_iter()
        .map(|s| match s {
            Src::Reg(r) => SourceOf::Reg(reg_width(r)),
            Src::Imm(t, i) => {
                let (b, w) = Src::imm_const(t, i);
                SourceOf::Imm(b, w)
            }
            Src::Leaf(_, t) => SourceOf::Leaf(type_width(t)),
        })
        .collect();
    Some(ValueParts { dest, template: template.template(), dest_width: reg_width(dest), sources, regs })
}

/// The register a value statement writes, or `None` if `ins` is skeleton.
pub fn value_dest(f: &Function, ins: &Instruction) -> Option<RegId> {
    as_value(f, ins).map(|v| v.dest)
}

/// Reads of `ins` the emitter can rewrite: (operand index, element index)
/// of plain scalar register sources, address bases and the guard.
///
/// With `fast`, an operand that is a register, an address or names no
/// register is decided directly, as the general work decides it (a list
/// of the operand's registers collected and searched: matrix_free -O2
/// 1.6 M host instructions for 9,300 skeleton instructions); the test
/// `rewritable_reads_fast_path_agrees` compares the two.
fn rewritable_reads(f: &Function, ins: &Instruction, fast: bool) -> (SmallVec<[RegId; 4]>, SmallVec<[RegId; 4]>) {
    let mut ok: SmallVec<[RegId; 4]> = SmallVec::new();
    let mut fixed: SmallVec<[RegId; 4]> = SmallVec::new();
    if let Some(g) = ins.guard {
        ok.push(g.reg);
    }
    let specs = ins.form.operands();
    let scalar = |r: RegId| f.regs.get(r.0 as usize).is_some_and(|x| x.vector.is_none());
    for (k, op) in ins.operands.iter().enumerate() {
        let spec = specs.get(k);
        let (read, write) = spec.map_or((true, false), |s| (s.read, s.write));
        if fast {
            // The operand's one register and whether it is rewritable, or
            // no register; `None`: left to the general work.
            let decided = match op {
                Operand::Reg(r) => Some(Some((r.reg, read && !write && r.sel.is_none() && scalar(r.reg)))),
                Operand::Addr(a) => Some(match a.base {
                    ptx_ir::ir::AddrBase::Reg(r) => Some((r, !write && scalar(r))),
                    _ => None,
                }),
                Operand::SReg(..) | Operand::Imm(_) | Operand::Sym(_) | Operand::Label(_) | Operand::Sink => Some(None),
                _ => None,
            };
            if let Some(one) = decided {
                match one {
                    Some((r, true)) => ok.push(r),
                    Some((r, false)) if read || !write => fixed.push(r),
                    _ => {}
                }
                continue;
            }
        }
        let mut all: SmallVec<[RegId; 4]> = SmallVec::new();
        op.regs(&mut all);
        // Pushed one by one: collected, each operand's list cost a
        // `SmallVec::extend` (about 120 host instructions).
        let mut rewritable: SmallVec<[RegId; 4]> = SmallVec::new();
        match op {
            Operand::Reg(r) if read && !write && r.sel.is_none() && scalar(r.reg) => rewritable.push(r.reg),
            Operand::Addr(a) if !write => {
                if let ptx_ir::ir::AddrBase::Reg(r) = a.base {
                    if scalar(r) {
                        rewritable.push(r);
                    }
                }
            }
            Operand::Vector(v) if read && !write => {
                for e in v.iter() {
                    if let Operand::Reg(r) = e {
                        if r.sel.is_none() && scalar(r.reg) {
                            rewritable.push(r.reg);
                        }
                    }
                }
            }
            _ => {}
        }
        for r in all {
            if rewritable.contains(&r) {
                ok.push(r);
            } else if read || !write {
                fixed.push(r);
            } else if let Operand::Pair(..) | Operand::Vector(_) = op {
                // Written pairs and vectors: written, not read.
            }
        }
    }
    // A register both rewritable and read in place elsewhere in the statement stays in place.
    ok.retain(|r| !fixed.contains(r));
    (ok, fixed)
}

/// Is `id` a leaf found anywhere by a `mov` (special register, symbol)?
pub(super) fn is_materialized(homes: &[LeafHome], eg: &EGraph, id: Id) -> bool {
    eg[id].nodes.iter().any(|n| matches!(n, Node::Leaf(l) if matches!(homes[l.0 as usize], LeafHome::Materialize { .. })))
}

/// Builds the e-graph of a function with a body. The statements `pinned`
/// marks (instructions naming registers of `{ }` blocks) stay skeleton.
/// The e-graph is not rebuilt: the engine rebuilds it before anything
/// reads its classes as congruence closes them.
pub fn build(f: &Function, cfg: &Cfg, dom: &DomTree, view: &ValueView, dialect: Dialect, sm: u32, pinned: &[bool]) -> Built {
    let body = f.body.as_deref().unwrap_or(&[]);
    // Instructions naming variables of nested blocks are never moved. A
    // value statement names variables only as `Sym` operands (`as_value`
    // takes no address or array element): the scope walk that finds them
    // runs only when one has such an operand.
    let lead = body.iter().take_while(|s| matches!(s, Stmt::Decl(_))).count();
    // Only a name some such declaration declares can mean a block's
    // variable (`None`: a declaration of a range of names, `p<4>`, where
    // every name is looked up).
    let mut block_var_names: Option<FxHashSet<&str>> = Some(FxHashSet::default());
    for s in &body[lead..] {
        if let Stmt::Decl(d) = s {
            if d.space() != ptx_ir::isa::StateSpace::Reg {
                for n in d.names() {
                    match (&mut block_var_names, n.range) {
                        (Some(set), None) => {
                            set.insert(n.name.as_str());
                        }
                        _ => block_var_names = None,
                    }
                }
            }
        }
    }
    let any_block_vars = body[lead..].iter().any(|s| matches!(s, Stmt::Decl(d) if d.space() != ptx_ir::isa::StateSpace::Reg));
    let mut block_vars: Option<Vec<bool>> = None;
    let mut names_block_var = |k: usize, ins: &Instruction| -> bool {
        any_block_vars
            && ins.operands.iter().any(|o| matches!(o, Operand::Sym(s) if block_var_names.as_ref().is_none_or(|set| set.contains(&*s.name))))
            && block_vars.get_or_insert_with(|| ptx_ir::ir::scopes::block_variable_users(f)).get(k).copied().unwrap_or(true)
    };
    // First pass: which statements are values, and which registers are physical.
    let mut found: Vec<Found> = Vec::with_capacity(body.len());
    // Room for every instruction in each list: grown as they filled, the
    // copies cost renderer at -O2 7.4 M host instructions (the room left
    // unused is never written).
    let instructions = body.iter().filter(|s| matches!(s, Stmt::Instr(_))).count();
    let mut values: Vec<ValueStmt> = Vec::with_capacity(instructions);
    // The rewritable reads of each skeleton instruction.
    let mut skeleton_reads: Vec<SmallVec<[RegId; 4]>> = Vec::with_capacity(instructions);
    // By register: are its writes all kept in place?
    let mut physical = vec![false; f.regs.len()];
    let mut mark_physical = |r: RegId| {
        if let Some(p) = physical.get_mut(r.0 as usize) {
            *p = true;
        }
    };
    for (k, s) in body.iter().enumerate() {
        let Stmt::Instr(ins) = s else {
            found.push(Found::Other);
            continue;
        };
        let v = match view.reachable(k) && !pinned.get(k).copied().unwrap_or(false) {
            true => as_value(f, ins).filter(|_| !names_block_var(k, ins)),
            false => None,
        };
        match v {
            Some(v) => {
                found.push(Found::Value(values.len() as u32));
                values.push(v);
            }
            None => {
                let (ok, fixed) = rewritable_reads(f, ins, true);
                fixed.into_iter().for_each(&mut mark_physical);
                found.push(Found::Skeleton(skeleton_reads.len() as u32));
                skeleton_reads.push(ok);
            }
        }
    }
    for r in 0..f.regs.len() {
        let r = RegId(r as u32);
        if view.needs_writes(r) {
            mark_physical(r);
        }
    }
    // `.reg` return parameters are read by `ret`.
    let returned: FxHashSet<&str> = f.ret.iter().flatten().filter(|d| d.space == ptx_ir::isa::StateSpace::Reg).flat_map(|d| d.names.iter().map(|n| &*n.name)).collect();
    if !returned.is_empty() {
        for (k, reg) in f.regs.iter().enumerate() {
            if returned.contains(&*reg.name) {
                mark_physical(RegId(k as u32));
            }
        }
    }
    let mut eg = EGraph::new(Facts::new(dialect));
    eg.analysis.sm = sm;
    // Room for the leaves a function commonly has, one per four or five
    // instructions (complex, histogram and matrix_free at -O2): grown
    // from nothing, the table of leaves and the two lists cost histogram
    // 1.0 M host instructions in rehashing and copying.
    let expected_leaves = instructions / 4;
    let mut leaf_homes: Vec<LeafHome> = Vec::with_capacity(expected_leaves);
    let mut leaves: FxHashMap<LeafKey, Id> = FxHashMap::with_capacity_and_hasher(expected_leaves, Default::default());
    eg.analysis.leaves.reserve(expected_leaves);
    let mut class_of_stmt: Vec<Option<Id>> = vec![None; body.len()];
    let mut plans: Vec<Plan> = std::iter::repeat_with(|| Plan::Keep).take(body.len()).collect();
    let mut n_values = 0;
    let mut leaf = |eg: &mut EGraph, key: LeafKey, width: u8, home: LeafHome, homes: &mut Vec<LeafHome>| -> Id {
        // One look-up a read (a look-up and an insertion for a new leaf
        // hashed its key twice: matrix_free -O2 has 5,600 leaves).
        let slot = match leaves.entry(key) {
            std::collections::hash_map::Entry::Occupied(e) => return *e.get(),
            std::collections::hash_map::Entry::Vacant(slot) => slot,
        };
        let known = match slot.key() {
            LeafKey::Special(s, sel, _) => s.max_value(*sel).map(|m| super::known::Known::at_most(width, m)),
            _ => None,
        };
        let l: LeafId = eg.analysis.new_known_leaf(known.unwrap_or(super::known::Known::top(width)));
        debug_assert_eq!(l.0 as usize, homes.len());
        homes.push(home);
        *slot.insert(eg.add(Node::Leaf(l)))
    };
    let reg_width = |r: RegId| type_width(f.regs[r.0 as usize].ty);
    // The class of the value a version denotes.
    let version_class = |eg: &mut EGraph, v: Version, class_of_stmt: &[Option<Id>], homes: &mut Vec<LeafHome>, leaf: &mut dyn FnMut(&mut EGraph, LeafKey, u8, LeafHome, &mut Vec<LeafHome>) -> Id| -> Id {
        if let VersionDef::Def(k) = v.def {
            if let Some(c) = class_of_stmt[k] {
                return c;
            }
        }
        leaf(eg, LeafKey::Version(v), reg_width(v.reg), LeafHome::Reg { reg: v.reg, version: v.def }, homes)
    };
    // Blocks in dominator-tree preorder: a version's definition comes before its reads.
    let mut order = Vec::with_capacity(cfg.layout.len());
    let mut stack = vec![cfg.entry];
    while let Some(b) = stack.pop() {
        order.push(b);
        for &c in dom.children(b).iter().rev() {
            stack.push(c);
        }
    }
    for b in order {
        for k in cfg.block(b).stmts.clone() {
            match found[k] {
                Found::Other => {}
                Found::Value(i) => {
                    let ValueStmt { template, dest, ref srcs } = values[i as usize];
                    let ins = template.ins;
                    // Each source's class, and with it the register it was
                    // read from: pushed together (collecting the pairs from
                    // two lists afterwards cost matrix_free -O2 2.0 M in
                    // `SmallVec::extend`).
                    let mut kids: SmallVec<[Id; 3]> = SmallVec::new();
                    let mut sources: SmallVec<[(Id, Option<RegId>); 3]> = SmallVec::new();
                    let mut literals = 0u32;
                    let reads_leaf = matches!(srcs.first(), Some(Src::Leaf(..)));
                    for (j, &s) in srcs.iter().enumerate() {
                        let reg = if let Src::Reg(r) = s { Some(r) } else { None };
                        if let Src::Imm(..) = s {
                            literals |= 1 << j;
                        }
                        let id = match s {
                            Src::Reg(r) => {
                                let v = view.read(k, r).unwrap_or(Version { reg: r, def: VersionDef::Entry });
                                version_class(&mut eg, v, &class_of_stmt, &mut leaf_homes, &mut leaf)
                            }
                            Src::Imm(t, i) => {
                                let (bits, width) = Src::imm_const(t, i);
                                eg.add(Node::Const { width, bits })
                            }
                            Src::Leaf(o, t) => {
                                let (key, home) = leaf_of(o, t);
                                leaf(&mut eg, key, type_width(t), home, &mut leaf_homes)
                            }
                        };
                        kids.push(id);
                        sources.push((id, reg));
                    }
                    let width = reg_width(dest);
                    // A `mov` of a special register or symbol is that leaf.
                    // (Not a copy of a register that holds such a leaf: that
                    // `mov` is the input's own instruction, written back as it was.)
                    let leaf_mov = reads_leaf && ins.opcode == ptx_ir::isa::Opcode::MOV && kids.len() == 1 && matches!(eg[kids[0]].nodes[0], Node::Leaf(_));
                    let (class, input) = if leaf_mov && eg[kids[0]].data.width() == width && is_materialized(&leaf_homes, &eg, kids[0]) {
                        (kids[0], None)
                    } else {
                        let shape: ShapeId = eg.analysis.shapes.intern_template_of(template, width);
                        let input = InputNode { shape, stmt: k as u32, literals, sources };
                        (eg.add(Node::Op(shape, kids)), Some(input))
                    };
                    class_of_stmt[k] = Some(class);
                    n_values += 1;
                    plans[k] = Plan::Value { class, dest, physical: physical[dest.0 as usize], input };
                }
                Found::Skeleton(i) => {
                    let mut reads: SmallVec<[(RegId, Id); 4]> = SmallVec::new();
                    for &r in &skeleton_reads[i as usize] {
                        if reads.iter().any(|(x, _)| *x == r) {
                            continue;
                        }
                        if let Some(v) = view.read(k, r) {
                            let c = version_class(&mut eg, v, &class_of_stmt, &mut leaf_homes, &mut leaf);
                            reads.push((r, c));
                        }
                    }
                    plans[k] = Plan::Skeleton { reads };
                }
            }
        }
    }
    Built { egraph: eg, plans, leaf_homes, values: n_values, instructions }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::lang::ShapeTable;
    use crate::engine::tests::kernel;

    /// The build holds a value statement per value statement, and a plan
    /// and what it found per statement of the function at once, at the
    /// run's peak memory: they stay this small.
    #[test]
    fn per_statement_sizes_are_pinned() {
        assert_eq!(size_of::<ValueStmt>(), 80);
        assert_eq!(size_of::<Found>(), 8);
        assert_eq!(size_of::<Plan>(), 88);
    }

    /// [`rewritable_reads`]' fast path decides every operand as its
    /// general work does: every instruction of the engine's sample modules
    /// and of a kernel of registers with selectors, vector registers and
    /// their lanes, written lanes, vectors, pairs, addresses read and
    /// written, guards, special registers and symbols.
    #[test]
    fn rewritable_reads_fast_path_agrees() {
        let mut functions: Vec<Function> = vec![kernel(
            ".reg .pred %p<4>; .reg .b16 %h<3>; .reg .b32 %r<8>; .reg .b64 %rd<4>; .reg .v2 .u32 %v<3>;
             ld.param.u64 %rd1, [p]; ld.global.v2.u32 {%r1, %r2}, [%rd1]; ld.global.v2.u32 %v1, [%rd1+8];
             mov.b32 %r3, {%h1, %h2}; mov.u32 %r4, %v1.x; add.u32 %r5, %r4, %v1.y; mov.u32 %v2.x, %r5;
             setp.lt.u32 %p1|%p2, %r1, %r2; @%p1 add.u32 %r6, %r1, 1; @!%p2 st.global.u32 [%rd1+4], %r6;
             mov.u32 %r7, %tid.x; mov.u64 %rd2, g; st.global.u32 [g], %r7; add.u32 %r1, %r1, %r1;
             mov.b32 %r2, 0; prmt.b32 %r3, %r1, %r2, 0x5410; st.global.v2.u32 [%rd1], %v2; st.global.u32 [%rd2], %r3;
             vadd.u32.u32.u32 %r4, %r1.b0, %r2.b1, %r3; mov.b16 %h1, 1; ret;",
        )];
        for text in crate::engine::SAMPLE_TEXTS {
            let m = ptx_ir::parse_str(text).unwrap();
            functions.extend(m.items.into_iter().filter_map(|i| match i {
                ptx_ir::ir::Item::Func(f) if f.body.is_some() => Some(*f),
                _ => None,
            }));
        }
        let mut compared = 0;
        for f in &functions {
            for ins in f.instructions() {
                assert_eq!(rewritable_reads(f, ins, true), rewritable_reads(f, ins, false), "{ins:?}");
                compared += 1;
            }
        }
        assert!(compared > 1_000, "{compared}");
    }

    /// An input node's literals, read in its statement when asked
    /// ([`InputNode::literal`]), are the immediates [`as_value`] found,
    /// source by source (the destination skipped, vectors among the
    /// sources), and no other source has one.
    #[test]
    fn input_literals_are_the_sources_written_as_immediates() {
        let f = kernel(
            ".reg .pred %p<4>; .reg .b16 %h<3>; .reg .b32 %r<8>; .reg .b64 %rd<4>; .reg .f32 %f<3>;
             ld.param.u64 %rd1, [p]; ld.global.u32 %r1, [%rd1]; ld.global.u32 %r2, [%rd1+4];
             add.u32 %r3, %r1, 0x10; add.u32 %r4, 7, %r1; mad.lo.u32 %r5, %r2, 3, 0; mov.b64 %rd2, {%r1, %r2};
             prmt.b32 %r6, %r1, 0x5410, %r2; selp.u32 %r3, %r1, 5, %p1; add.f32 %f2, %f1, 0f3F800000;
             mov.pred %p3, 1; mov.b32 %r7, {%h1, %h2}; st.global.u32 [%rd1], %r7; ret;",
        );
        let cfg = Cfg::build(&f);
        let dom = DomTree::dominators(&cfg);
        let view = ValueView::build(&f, &cfg, &dom);
        let built = build(&f, &cfg, &dom, &view, Dialect::MODERN, 80, &[]);
        let body = f.body.as_deref().unwrap();
        let mut literals = 0;
        for (k, plan) in built.plans.iter().enumerate() {
            let Plan::Value { input: Some(input), .. } = plan else { continue };
            let Stmt::Instr(ins) = &body[k] else { unreachable!() };
            let srcs = as_value(&f, ins).expect("a value statement").srcs;
            assert_eq!(input.sources.len(), srcs.len(), "{ins:?}");
            for (j, s) in srcs.iter().enumerate() {
                let expected = match s {
                    Src::Imm(_, i) => Some(*i),
                    _ => None,
                };
                assert_eq!(input.has_literal(j), expected.is_some(), "source {j} of {ins:?}");
                assert_eq!(input.literal(body, j), expected, "source {j} of {ins:?}");
                literals += expected.is_some() as usize;
            }
        }
        assert_eq!(literals, 8, "every immediate of the body");
    }

    /// The template of a value statement, made the way the module
    /// documentation of `lang` says, operand by operand.
    fn expected_template(ins: &Instruction) -> Instruction {
        let mut n = 0;
        let mut placeholder = |o: &Operand| {
            let reg = RegId(n);
            n += 1;
            match o {
                Operand::Reg(r) => Operand::Reg(ptx_ir::ir::RegOperand { reg, ..*r }),
                _ => Operand::reg(reg),
            }
        };
        let specs = ins.form.operands();
        let operands = ins
            .operands
            .iter()
            .zip(specs)
            .map(|(o, spec)| match o {
                _ if spec.write => Operand::reg(crate::engine::lang::DEST),
                Operand::Vector(v) => Operand::Vector(v.iter().map(&mut placeholder).collect()),
                o => placeholder(o),
            })
            .collect();
        Instruction { guard: None, operands, ..ins.clone() }
    }

    /// A table finds the shapes its thread made for the tables before it
    /// (`MadeShapes` in `lang`) and holds what it would have made itself:
    /// the value statements of the sample modules' functions, the rules'
    /// texts and the built templates get, function by function, the same
    /// numbers and shapes of the same content and origin whether the
    /// thread made every shape before (each module read twice) or none
    /// (the thread's shapes forgotten before each function).
    #[test]
    fn shapes_made_before_are_the_shapes_made_afresh() {
        use crate::engine::lang::{forget_made_shapes, Shape, ShapeId};
        fn shapes_of(f: &Function, forget: bool) -> ShapeTable {
            if forget {
                forget_made_shapes();
            }
            let mut t = ShapeTable::default();
            for ins in f.instructions() {
                if let Some(v) = as_value(f, ins) {
                    let width = type_width(f.regs[v.dest.0 as usize].ty);
                    let s = t.intern_template_of(v.template, width);
                    assert_eq!(t.intern(v.template.template(), width), s);
                }
            }
            for (head, n) in [("add.u32", 2), ("mul.lo.u64", 2), ("setp.lt.s32", 2), ("selp.b32", 3), ("cvt.u64.u32", 1), ("add.u32", 2)] {
                t.of_text(head, n);
            }
            t
        }
        fn same(a: &Shape, b: &Shape) -> bool {
            a.ins == b.ins && a.width == b.width && a.dest_ty == b.dest_ty && a.sources == b.sources && a.types() == b.types() && a.plain_int() == b.plain_int() && a.known_plain() == b.known_plain()
        }
        let mut compared = 0;
        for text in crate::engine::SAMPLE_TEXTS {
            let m = ptx_ir::parse_str(text).unwrap();
            let functions: Vec<&Function> = m
                .items
                .iter()
                .filter_map(|i| match i {
                    ptx_ir::ir::Item::Func(f) if f.body.is_some() => Some(&**f),
                    _ => None,
                })
                .collect();
            let afresh: Vec<ShapeTable> = functions.iter().map(|f| shapes_of(f, true)).collect();
            for _ in 0..2 {
                for (f, fresh) in functions.iter().zip(&afresh) {
                    let kept = shapes_of(f, false);
                    assert_eq!(kept.len(), fresh.len(), "{}", f.name);
                    for k in 0..kept.len() as u32 {
                        let (a, b) = (kept.get(ShapeId(k)), fresh.get(ShapeId(k)));
                        assert!(same(a, b), "shape {k} of {}: {:?} and {:?}", f.name, a.ins, b.ins);
                        assert_eq!(kept.made_by_rule(ShapeId(k)), fresh.made_by_rule(ShapeId(k)), "shape {k} of {}", f.name);
                        compared += 1;
                    }
                }
            }
        }
        assert!(compared > 1_000, "{compared}");
    }

    /// Interning a value statement through the view of its template finds
    /// the shape interning the built template finds, and the other way
    /// round: the view's key and comparison agree with [`ShapeTable::intern`]'s.
    #[test]
    fn template_views_intern_as_their_templates() {
        let f = kernel(
            ".reg .pred %p<4>; .reg .b16 %h<3>; .reg .b32 %r<8>; .reg .b64 %rd<4>; .reg .f32 %f<3>;
             ld.param.u64 %rd1, [p]; ld.global.u32 %r1, [%rd1]; ld.global.u32 %r2, [%rd1+4];
             add.u32 %r3, %r1, %r2; add.u32 %r4, %r1, 7; add.u32 %r4, 7, %r1; add.s32 %r5, %r2, %r1;
             mul.wide.u32 %rd2, %r1, 3; mov.u32 %r6, %tid.x; mov.u64 %rd3, g; mov.b64 %rd2, {%r1, %r2};
             mov.b32 %r7, {%h1, %h2}; setp.lt.u32 %p1, %r1, %r2; and.pred %p2, !%p1, %p3; selp.u32 %r3, %r1, 5, %p1;
             cvt.rn.f32.u32 %f1, %r1; add.f32 %f2, %f1, 0f3F800000; mov.pred %p3, 1; ret;",
        );
        let values: Vec<(TemplateView, u8)> = f
            .instructions()
            .filter_map(|ins| as_value(&f, ins))
            .map(|v| (v.template, type_width(f.regs[v.dest.0 as usize].ty)))
            .collect();
        // Every instruction but the loads and `ret`.
        assert_eq!(values.len(), f.instructions().count() - 4);
        for &(view, _) in &values {
            assert_eq!(view.template(), expected_template(view.ins), "{:?}", view.ins);
        }
        let mut by_view = ShapeTable::default();
        let mut built = ShapeTable::default();
        for &(view, width) in &values {
            let a = by_view.intern_template_of(view, width);
            assert_eq!(by_view.intern(view.template(), width), a, "{:?}", view.template());
            let b = built.intern(view.template(), width);
            assert_eq!(built.intern_template_of(view, width), b, "{:?}", view.template());
            assert_eq!(a, b);
        }
        // The three `add.u32` (on registers, and with an immediate either
        // side) are one shape; the others are not.
        assert_eq!(by_view.len(), values.len() - 2);
    }
}
