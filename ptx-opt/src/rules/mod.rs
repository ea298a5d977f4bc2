//! The rewrite rules of the e-graph engine, one file per family (see
//! `README.md` beside this file, the rulebook).
//!
//! A [`Rule`] is directional: it finds a left-hand side rooted at a node of
//! one of its `roots` opcodes and adds an equal right-hand side to the same
//! e-class. Rules are plain Rust functions over the e-graph (matching on
//! shapes, i.e. opcodes and modifiers from the ISA tables). The engine's
//! loop ([`crate::engine::saturate`]) drives them as a [`RuleSet`]; the
//! proofs and tests wrap them into egg [`egg::Rewrite`]s for egg's runner,
//! whose result that loop gives.
//! Every rule lists `instances`: terms its left-hand side matches, one per
//! type it applies to, which the proof test (`tests` below and
//! `ptx-opt/tests/rules.rs`) rewrites and checks on random and edge values.

pub mod algebra;
pub mod bitfield;
pub mod convert;
pub mod divide;
pub mod float;
pub mod lop3;
pub mod multiply;
pub mod proof;
pub mod ranges;
pub mod rule_set;
pub mod select;
pub mod smt;
pub mod term;

use crate::engine::facts::{EGraph, Facts};
use crate::engine::lang::{Node, Shape, ShapeId};
use ptx_ir::isa::{Mod, ScalarType};
use egg::{Id, Rewrite, SearchMatches, Subst, Var};
use ptx_ir::isa::Opcode;
use smallvec::SmallVec;
pub use rule_set::{RootIndex, RuleSet};
pub use term::Term;

/// The classes a match binds, in the rule's own order.
pub type Match = SmallVec<[Id; 4]>;

/// What a module offers the rules: target and PTX version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// `sm_NN` (the number); 0 when unknown.
    pub sm: u32,
    pub ptx: (u32, u32),
}

/// A rewrite rule (see the module documentation).
pub struct Rule {
    pub name: &'static str,
    /// Opcodes of the nodes the left-hand side is rooted at.
    pub roots: &'static [Opcode],
    /// Finds matches at one node (of a root opcode) of an e-class.
    pub search: fn(&EGraph, &Node, &mut Vec<Match>),
    /// Adds the right-hand side of a match; gives the class equal to the matched one.
    pub apply: fn(&mut EGraph, &Match) -> Option<Id>,
    /// Left-hand sides to prove the rule on, one per type instance it covers.
    pub instances: fn() -> Vec<Term>,
    /// The oldest target and PTX version the right-hand side's instructions need.
    pub needs: Target,
    /// Taken at `-O3` only: fewer SASS instructions, but measured to cost
    /// ptxas registers on some kernels (a value shared or widened where the
    /// input kept it narrow or recomputed), so not at `-O2`, which is never
    /// worse in instructions or registers on the corpus.
    pub only_o3: bool,
}

impl Rule {
    pub fn available(&self, t: Target) -> bool {
        (t.sm == 0 || t.sm >= self.needs.sm) && t.ptx >= self.needs.ptx
    }
}

/// The rule families: the file each lives in, and its rules.
pub const FAMILIES: &[(&str, &[Rule])] = &[("algebra", algebra::RULES), ("divide", divide::RULES), ("lop3", lop3::RULES), ("ranges", ranges::RULES), ("multiply", multiply::RULES), ("select", select::RULES), ("convert", convert::RULES), ("bitfield", bitfield::RULES), ("float", float::RULES)];

/// Every rule, with its family.
pub fn all() -> impl Iterator<Item = (&'static str, &'static Rule)> {
    FAMILIES.iter().flat_map(|(f, rules)| rules.iter().map(move |r| (*f, r)))
}

/// The rules available on a target, as egg rewrites; with `o3`, also
/// those taken at `-O3` only ([`Rule::only_o3`]).
pub fn rewrites(t: Target, o3: bool) -> Vec<Rewrite<Node, Facts>> {
    available(t, o3).map(rewrite).collect()
}

/// The rules available on a target at a level.
fn available(t: Target, o3: bool) -> impl Iterator<Item = &'static Rule> {
    all().map(|(_, r)| r).filter(move |r| r.available(t) && (o3 || !r.only_o3))
}

/// One rule as an egg rewrite.
pub fn rewrite(rule: &'static Rule) -> Rewrite<Node, Facts> {
    Rewrite::new(rule.name, Search(rule), Apply(rule)).expect("rules bind no pattern variables")
}

fn var(k: usize) -> Var {
    vars()[k]
}

/// `?0` to `?7`, the classes of a match in order.
fn vars() -> &'static [Var; 8] {
    const NAMES: [&str; 8] = ["?0", "?1", "?2", "?3", "?4", "?5", "?6", "?7"];
    // Parsed once: parsing interns the name in egg's global symbol table.
    static VARS: std::sync::OnceLock<[Var; 8]> = std::sync::OnceLock::new();
    VARS.get_or_init(|| NAMES.map(|n| n.parse().unwrap()))
}

/// A rule's search and application as egg's `Searcher` and `Applier`, for
/// egg's runner (the proofs, and the reference the engine's own loop is
/// tested against): every class is searched, and a match is a
/// substitution of `?0`, `?1`, ... by its classes in order.
struct Search(&'static Rule);
struct Apply(&'static Rule);

impl egg::Searcher<Node, Facts> for Search {
    fn search_eclass_with_limit(&self, egraph: &EGraph, eclass: Id, limit: usize) -> Option<SearchMatches<'_, Node>> {
        self.search_class(egraph, eclass, limit, &mut Vec::new())
    }

    fn vars(&self) -> Vec<Var> {
        Vec::new()
    }
}

impl Search {
    /// The matches of the rule in class `eclass`, at most `limit`;
    /// `found` is an empty list to collect them in (left empty: one list
    /// serves every class of a search).
    fn search_class(&self, egraph: &EGraph, eclass: Id, limit: usize, found: &mut Vec<Match>) -> Option<SearchMatches<'_, Node>> {
        for n in &egraph[eclass].nodes {
            if let Node::Op(s, _) = n {
                if self.0.roots.contains(&egraph.analysis.shapes.get(*s).opcode()) {
                    (self.0.search)(egraph, n, found);
                }
            }
            if found.len() >= limit {
                break;
            }
        }
        if found.is_empty() {
            return None;
        }
        found.truncate(limit);
        let substs = found
            .drain(..)
            .map(|m| {
                let mut s = Subst::with_capacity(m.len());
                for (k, id) in m.iter().enumerate() {
                    s.insert(var(k), *id);
                }
                s
            })
            .collect();
        Some(SearchMatches { eclass, substs, ast: None })
    }
}

impl egg::Applier<Node, Facts> for Apply {
    fn apply_one(&self, egraph: &mut EGraph, eclass: Id, subst: &Subst, _ast: Option<&egg::PatternAst<Node>>, _rule: egg::Symbol) -> Vec<Id> {
        match rule_set::apply_match(self.0, egraph, eclass, &match_of(subst)) {
            true => vec![egraph.find(eclass)],
            false => vec![],
        }
    }
}

/// The classes a substitution of [`Search`] binds, in order.
fn match_of(subst: &Subst) -> Match {
    let mut m: Match = SmallVec::new();
    for k in 0..8 {
        match subst.get(var(k)) {
            Some(id) => m.push(*id),
            None => break,
        }
    }
    m
}

// ----- helpers for writing rules ---------------------------------------------------

/// The shape and children of an `Op` node.
pub fn op<'a>(eg: &'a EGraph, n: &'a Node) -> Option<(&'a Shape, &'a [Id])> {
    match n {
        Node::Op(s, kids) => Some((eg.analysis.shapes.get(*s), kids)),
        _ => None,
    }
}

/// The constant value of a class, if known.
pub fn constant(eg: &EGraph, id: Id) -> Option<u128> {
    eg.analysis.constant(crate::engine::facts::class_data(eg, id))
}

/// The width of a class.
pub fn width(eg: &EGraph, id: Id) -> u8 {
    crate::engine::facts::class_data(eg, id).width()
}

/// A constant node.
pub fn konst(eg: &mut EGraph, width: u8, bits: u128) -> Id {
    eg.add(Node::Const { width, bits: bits & ptx_ir::eval::bits_mask(width as u32) })
}

/// A node of the instruction `head` on `kids`.
pub fn mk(eg: &mut EGraph, head: &'static str, kids: &[Id]) -> Id {
    let s = eg.analysis.shapes.of_text(head, kids.len() as u8);
    eg.add(Node::Op(s, kids.iter().copied().collect()))
}

/// No source of the shape has an operand prefix (`!p`, `-x`), a selector
/// or a place in a vector operand.
pub fn plain_operands(s: &Shape) -> bool {
    s.sources.iter().all(|x| x.prefix == ptx_ir::ir::Prefix::None && x.sel.is_none() && !x.in_vector)
}

/// The shape's modifiers are its types only.
pub fn types_only(s: &Shape) -> bool {
    s.ins.modifiers().all(|(r, _)| r == ptx_ir::isa::SlotRole::Type)
}

/// The comparison of a `setp`/`set`/`selp`-like shape whose modifiers are
/// that comparison and types only (no `.ftz`, no combining operation), with
/// plain operands.
pub fn plain_compare(s: &Shape) -> Option<Mod> {
    use ptx_ir::isa::SlotRole;
    if !plain_operands(s) {
        return None;
    }
    let mut cmp = None;
    for (role, m) in s.ins.modifiers() {
        match role {
            SlotRole::Type => {}
            SlotRole::Cmp if cmp.is_none() => cmp = Some(m),
            _ => return None,
        }
    }
    cmp
}

/// A node of the instruction `opcode` with modifiers `mods` (in the
/// manual's order) on `kids`, for rules whose right-hand side's modifiers
/// come from the matched instruction; `None` if the tables have no such
/// form. The width is the destination type's.
pub fn mk_with(eg: &mut EGraph, opcode: ptx_ir::isa::Opcode, mods: &[Mod], kids: &[Id]) -> Option<Id> {
    use crate::engine::lang::{type_width, DEST};
    use ptx_ir::ir::{Instruction, Operand, RegId};
    let operands = std::iter::once(Operand::reg(DEST)).chain((0..kids.len()).map(|k| Operand::reg(RegId(k as u32))));
    let ins = Instruction::new(opcode, mods, operands).ok()?;
    let width = ins.operand_type(0).map(type_width).unwrap_or(32);
    let s = eg.analysis.shapes.intern_for_rule(ins, width);
    Some(eg.add(Node::Op(s, kids.iter().copied().collect())))
}

/// The scalar integer or bit type of a shape that is a plain (non-saturating,
/// non-packed, no carry, no operand prefix) integer operation, and its width.
pub fn plain_int(s: &Shape) -> Option<(ScalarType, u8)> {
    s.plain_int()
}

/// [`plain_int`], computed once per shape by [`Shape::new`].
pub(crate) fn plain_int_of(s: &Shape) -> Option<(ScalarType, u8)> {
    use ScalarType::*;
    let ty = s.ty()?;
    if !matches!(ty, B16 | B32 | B64 | U16 | U32 | U64 | S16 | S32 | S64) {
        return None;
    }
    // Only the type and mul's `.lo`/`.hi`/`.wide` may be written: `.sat`,
    // `.relu`, `.cc`, `.shiftamt` ... change what the instruction computes.
    let plain_mod = |(role, m): (ptx_ir::isa::SlotRole, Mod)| role == ptx_ir::isa::SlotRole::Type || m == Mod::LO || m == Mod::HI || m == Mod::WIDE;
    if !s.ins.modifiers().all(plain_mod) || s.types().len() != 1 {
        return None;
    }
    if s.sources.iter().any(|x| x.prefix != ptx_ir::ir::Prefix::None || x.sel.is_some() || x.in_vector) {
        return None;
    }
    if s.width as u32 != ty.bits() {
        return None;
    }
    Some((ty, s.width))
}

/// Encodes a shape in a match (matches carry only class ids); [`unshape`] decodes it.
pub fn shape_id(s: ShapeId) -> Id {
    Id::from(s.0 as usize)
}
pub fn unshape(id: Id) -> ShapeId {
    ShapeId(usize::from(id) as u32)
}

/// A node of the shape a match carries (see [`shape_id`]) on `kids`.
pub fn same_shape(eg: &mut EGraph, s: Id, kids: &[Id]) -> Id {
    eg.add(Node::Op(unshape(s), kids.iter().copied().collect()))
}

#[cfg(test)]
mod tests;
