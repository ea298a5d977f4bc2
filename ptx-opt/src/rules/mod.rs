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
pub mod select;
pub mod smt;
pub mod term;

use crate::engine::facts::{EGraph, Facts};
use crate::engine::lang::{Node, Shape, ShapeId};
use ptx_ir::isa::{Mod, ScalarType};
use egg::{Id, Rewrite, SearchMatches, Subst, Var};
use ptx_ir::isa::Opcode;
use smallvec::SmallVec;
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

/// The rules available on a target, as the engine's loop takes them
/// ([`crate::engine::saturate`]): each rule's search, in [`rewrites`]'
/// order.
pub struct RuleSet {
    searches: Vec<Search>,
}

impl RuleSet {
    /// [`rewrites`]' rules, made once per thread for each target and level
    /// (a module of many small functions made them again for each).
    pub fn shared(t: Target, o3: bool) -> std::rc::Rc<RuleSet> {
        type Made = Vec<((Target, bool), std::rc::Rc<RuleSet>)>;
        thread_local! {
            static MADE: std::cell::RefCell<Made> = const { std::cell::RefCell::new(Vec::new()) };
        }
        MADE.with(|made| {
            let mut made = made.borrow_mut();
            if let Some((_, r)) = made.iter().find(|(k, _)| *k == (t, o3)) {
                return r.clone();
            }
            let searches = available(t, o3).map(Search::of).collect();
            let r = std::rc::Rc::new(RuleSet { searches });
            made.push(((t, o3), r.clone()));
            r
        })
    }

    pub fn len(&self) -> usize {
        self.searches.len()
    }

    pub fn is_empty(&self) -> bool {
        self.searches.is_empty()
    }

    pub fn name(&self, k: usize) -> &'static str {
        self.searches[k].rule.name
    }

    /// Rule `k`'s matches, at most `limit` (egg's `search_with_limit`).
    pub fn search(&self, k: usize, egraph: &EGraph, limit: usize) -> Vec<SearchMatches<'_, Node>> {
        egg::Searcher::search_with_limit(&self.searches[k], egraph, limit)
    }

    /// Applies rule `k` to its matches; gives how many changed the
    /// e-graph (what egg's `Rewrite::apply` gives, counted).
    pub fn apply(&self, k: usize, egraph: &mut EGraph, matches: &[SearchMatches<'_, Node>]) -> usize {
        let rule = self.searches[k].rule;
        matches.iter().flat_map(|m| m.substs.iter().map(move |s| (m.eclass, s))).filter(|(eclass, subst)| apply_subst(rule, egraph, *eclass, subst)).count()
    }
}

/// The rules available on a target at a level.
fn available(t: Target, o3: bool) -> impl Iterator<Item = &'static Rule> {
    all().map(|(_, r)| r).filter(move |r| r.available(t) && (o3 || !r.only_o3))
}

/// One rule as an egg rewrite.
pub fn rewrite(rule: &'static Rule) -> Rewrite<Node, Facts> {
    Rewrite::new(rule.name, Search::of(rule), Apply(rule)).expect("rules bind no pattern variables")
}

fn var(k: usize) -> Var {
    vars()[k]
}

/// The variable of a substitution that holds the number of its match in
/// the iteration's [`RootIndex::matches`] (not a class id).
fn match_number_var() -> Var {
    vars()[8]
}

/// `?0` to `?7`, the classes of a match in order, and `?match`.
fn vars() -> &'static [Var; 9] {
    const NAMES: [&str; 9] = ["?0", "?1", "?2", "?3", "?4", "?5", "?6", "?7", "?match"];
    // Parsed once: parsing interns the name in egg's global symbol table.
    static VARS: std::sync::OnceLock<[Var; 9]> = std::sync::OnceLock::new();
    VARS.get_or_init(|| NAMES.map(|n| n.parse().unwrap()))
}

/// The search of a rule, with the [`RootIndex`] mask of its root opcodes
/// (made once with the rewrite, not at each search).
struct Search {
    rule: &'static Rule,
    mask: u64,
}

impl Search {
    fn of(rule: &'static Rule) -> Search {
        Search { rule, mask: root_mask(rule.roots) }
    }
}
struct Apply(&'static Rule);

impl egg::Searcher<Node, Facts> for Search {
    fn search_eclass_with_limit(&self, egraph: &EGraph, eclass: Id, limit: usize) -> Option<SearchMatches<'_, Node>> {
        self.search_class(egraph, eclass, limit, &mut Vec::new())
    }

    /// egg's search over every class, restricted to the classes the
    /// iteration's [`RootIndex`] lists with a node of one of the rule's
    /// root opcodes (the others match nothing), in the same order; without
    /// an index, over every class.
    fn search_with_limit(&self, egraph: &EGraph, mut limit: usize) -> Vec<SearchMatches<'_, Node>> {
        let mut ms = Vec::new();
        let mut found = Vec::new();
        let mut visit = |eclass: Id, limit: &mut usize| {
            if let Some(m) = self.search_class(egraph, eclass, *limit, &mut found) {
                *limit -= m.substs.len();
                ms.push(m);
            }
        };
        match &egraph.analysis.roots {
            // No class has a node of a root opcode: nothing to visit (on
            // complex.ptx's 247 e-graphs, most rules in most iterations).
            Some(index) if index.present & self.mask == 0 => {}
            Some(index) => {
                for &(eclass, m) in &index.classes {
                    if limit == 0 {
                        break;
                    }
                    if m & self.mask != 0 {
                        visit(eclass, &mut limit);
                    }
                }
            }
            None => {
                for eclass in egraph.classes().map(|c| c.id) {
                    if limit == 0 {
                        break;
                    }
                    visit(eclass, &mut limit);
                }
            }
        }
        ms
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
                if self.rule.roots.contains(&egraph.analysis.shapes.get(*s).opcode()) {
                    (self.rule.search)(egraph, n, found);
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
        let substs = match &egraph.analysis.roots {
            // Kept in the iteration's table; the substitution holds its
            // number (one pair, no allocation; a match of four classes
            // would spill egg's substitution to the heap, and building it
            // pair by pair cost about 750 host instructions per matched
            // class on matrix_free).
            Some(index) => {
                let mut table = index.matches.borrow_mut();
                found
                    .drain(..)
                    .map(|m| {
                        let mut s = Subst::with_capacity(1);
                        s.insert(match_number_var(), Id::from(table.len()));
                        table.push(m);
                        s
                    })
                    .collect()
            }
            None => found
                .drain(..)
                .map(|m| {
                    let mut s = Subst::with_capacity(m.len());
                    for (k, id) in m.iter().enumerate() {
                        s.insert(var(k), *id);
                    }
                    s
                })
                .collect(),
        };
        Some(SearchMatches { eclass, substs, ast: None })
    }
}

/// The classes of an e-graph that have a node of some rule's root opcode,
/// in egg's class order, each with the mask of the root opcodes it has
/// (bit `i`: [`root_opcodes`]`()[i]`). Made by the engine's loop ([`crate::engine::saturate`]) at
/// the start of each iteration, before the search, over the e-graph the
/// search then reads ([`crate::engine::facts::Facts::roots`]): each rule
/// then visits only the classes it can match instead of every class.
pub struct RootIndex {
    classes: Vec<(Id, u64)>,
    /// The union of the classes' masks.
    present: u64,
    /// The matches the iteration's searches found, every rule's, in the
    /// order found; a substitution holds the number of its match here
    /// ([`match_number_var`]). Filled by the search (which sees the
    /// e-graph only by `&`), read by the applications that follow it in
    /// the same iteration, dropped with the index before the next.
    matches: std::cell::RefCell<Vec<Match>>,
}

/// Every rule's root opcodes, without repeats (at most 64: one bit each).
fn root_opcodes() -> &'static [Opcode] {
    static ROOTS: std::sync::OnceLock<Vec<Opcode>> = std::sync::OnceLock::new();
    ROOTS.get_or_init(|| {
        let mut v: Vec<Opcode> = all().flat_map(|(_, r)| r.roots.iter().copied()).collect();
        v.sort();
        v.dedup();
        v
    })
}

/// The mask of `roots` in [`RootIndex`] bits (all bits if there are too
/// many root opcodes to index: every class is then visited).
fn root_mask(roots: &[Opcode]) -> u64 {
    let all = root_opcodes();
    if all.len() > 64 {
        return u64::MAX;
    }
    roots.iter().filter_map(|o| all.binary_search(o).ok()).fold(0, |m, i| m | 1 << i)
}

impl RootIndex {
    /// The index of `egraph` as it is now (clean: after a rebuild).
    pub fn of(egraph: &EGraph) -> RootIndex {
        let all = root_opcodes();
        // Per shape, its root bit (shapes are few; nodes are many).
        let mut of_shape: Vec<Option<u64>> = vec![None; egraph.analysis.shapes.len()];
        let mut classes = Vec::new();
        for c in egraph.classes() {
            let mut m = 0u64;
            for n in &c.nodes {
                if let Node::Op(s, _) = n {
                    let bit = match of_shape.get(s.0 as usize).copied().flatten() {
                        Some(b) => b,
                        None => {
                            let b = if all.len() > 64 { 1 } else { all.binary_search(&egraph.analysis.shapes.get(*s).opcode()).map_or(0, |i| 1 << i) };
                            if let Some(e) = of_shape.get_mut(s.0 as usize) {
                                *e = Some(b);
                            }
                            b
                        }
                    };
                    m |= bit;
                }
            }
            if m != 0 {
                classes.push((c.id, if all.len() > 64 { u64::MAX } else { m }));
            }
        }
        let present = classes.iter().fold(0, |p, (_, m)| p | m);
        RootIndex { classes, present, matches: std::cell::RefCell::default() }
    }
}

impl egg::Applier<Node, Facts> for Apply {
    fn apply_one(&self, egraph: &mut EGraph, eclass: Id, subst: &Subst, _ast: Option<&egg::PatternAst<Node>>, _rule: egg::Symbol) -> Vec<Id> {
        match apply_subst(self.0, egraph, eclass, subst) {
            true => vec![egraph.find(eclass)],
            false => vec![],
        }
    }
}

/// Adds the right-hand side of the match `subst` numbers and merges it
/// into `eclass`; says whether that changed the e-graph.
fn apply_subst(rule: &Rule, egraph: &mut EGraph, eclass: Id, subst: &Subst) -> bool {
    let m = match_of(egraph, subst);
    match (rule.apply)(egraph, &m) {
        Some(new) if egraph.analysis.contradiction.is_none() => egraph.union(eclass, new),
        _ => false,
    }
}

/// The match a substitution of [`Search`] stands for: the one it numbers in
/// the iteration's table, or its classes in order (a search without the
/// index).
fn match_of(egraph: &EGraph, subst: &Subst) -> Match {
    let numbered = subst.get(match_number_var()).and_then(|k| {
        let index = egraph.analysis.roots.as_ref()?;
        let m = index.matches.borrow().get(usize::from(*k)).cloned();
        debug_assert!(m.is_some(), "a match number past the iteration's table");
        m
    });
    if let Some(m) = numbered {
        return m;
    }
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
    eg[id].data.constant
}

/// The width of a class.
pub fn width(eg: &EGraph, id: Id) -> u8 {
    eg[id].data.width
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
