//! The rewrite rules of the e-graph engine, one file per family (see
//! `README.md` beside this file, the rulebook).
//!
//! A [`Rule`] is directional: it finds a left-hand side rooted at a node of
//! one of its `roots` opcodes and adds an equal right-hand side to the same
//! e-class. Rules are plain Rust functions over the e-graph (matching on
//! shapes, i.e. opcodes and modifiers from the ISA tables), wrapped into egg
//! [`egg::Rewrite`]s so that egg's runner and backoff scheduler drive them.
//! Every rule lists `instances`: terms its left-hand side matches, one per
//! type it applies to, which the proof test (`tests` below and
//! `ptx-opt/tests/rules.rs`) rewrites and checks on random and edge values.

pub mod algebra;
pub mod divide;
pub mod lop3;
pub mod proof;
pub mod smt;
pub mod term;

use crate::engine::facts::{EGraph, Facts};
use crate::engine::lang::{Node, Shape};
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
}

impl Rule {
    pub fn available(&self, t: Target) -> bool {
        (t.sm == 0 || t.sm >= self.needs.sm) && t.ptx >= self.needs.ptx
    }
}

/// The rule families: the file each lives in, and its rules.
pub const FAMILIES: &[(&str, &[Rule])] = &[("algebra", algebra::RULES), ("divide", divide::RULES), ("lop3", lop3::RULES)];

/// Every rule, with its family.
pub fn all() -> impl Iterator<Item = (&'static str, &'static Rule)> {
    FAMILIES.iter().flat_map(|(f, rules)| rules.iter().map(move |r| (*f, r)))
}

/// The rules available on a target, as egg rewrites.
pub fn rewrites(t: Target) -> Vec<Rewrite<Node, Facts>> {
    all().filter(|(_, r)| r.available(t)).map(|(_, r)| rewrite(r)).collect()
}

/// One rule as an egg rewrite.
pub fn rewrite(rule: &'static Rule) -> Rewrite<Node, Facts> {
    Rewrite::new(rule.name, Search(rule), Apply(rule)).expect("rules bind no pattern variables")
}

fn var(k: usize) -> Var {
    const NAMES: [&str; 8] = ["?0", "?1", "?2", "?3", "?4", "?5", "?6", "?7"];
    NAMES[k].parse().unwrap()
}

struct Search(&'static Rule);
struct Apply(&'static Rule);

impl egg::Searcher<Node, Facts> for Search {
    fn search_eclass_with_limit(&self, egraph: &EGraph, eclass: Id, limit: usize) -> Option<SearchMatches<'_, Node>> {
        let mut found = Vec::new();
        for n in &egraph[eclass].nodes {
            if let Node::Op(s, _) = n {
                if self.0.roots.contains(&egraph.analysis.shapes.get(*s).opcode()) {
                    (self.0.search)(egraph, n, &mut found);
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
            .into_iter()
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

    fn vars(&self) -> Vec<Var> {
        Vec::new()
    }
}

impl egg::Applier<Node, Facts> for Apply {
    fn apply_one(&self, egraph: &mut EGraph, eclass: Id, subst: &Subst, _ast: Option<&egg::PatternAst<Node>>, _rule: egg::Symbol) -> Vec<Id> {
        let mut m: Match = SmallVec::new();
        for k in 0..8 {
            match subst.get(var(k)) {
                Some(id) => m.push(*id),
                None => break,
            }
        }
        match (self.0.apply)(egraph, &m) {
            Some(new) if egraph.analysis.contradiction.is_none() => {
                if egraph.union(eclass, new) {
                    vec![new]
                } else {
                    vec![]
                }
            }
            _ => vec![],
        }
    }
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

#[cfg(test)]
mod tests;
