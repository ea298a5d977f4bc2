//! Small expression terms: the instances each rule is proven on, written
//! as text-headed instructions over variables and constants.

use crate::engine::facts::EGraph;
use crate::engine::lang::Node;
use egg::Id;

/// A term over variables `Var(index, width)`.
#[derive(Clone, Debug)]
pub enum Term {
    /// An input of `width` bits; the same index is the same input.
    Var(u8, u8),
    /// An input of `width` bits known to be at most the given value (as a
    /// special register is): for rules whose side conditions are facts of
    /// the range analysis.
    Bounded(u8, u8, u128),
    /// A constant of `width` bits.
    Const(u8, u128),
    /// The instruction `head` on the given operands.
    Op(&'static str, Vec<Term>),
}

impl Term {
    pub fn var(k: u8, width: u8) -> Term {
        Term::Var(k, width)
    }
    pub fn bounded(k: u8, width: u8, max: u128) -> Term {
        Term::Bounded(k, width, max)
    }
    pub fn c(width: u8, bits: u128) -> Term {
        Term::Const(width, bits & ptx_ir::eval::bits_mask(width as u32))
    }
    pub fn op(head: &'static str, kids: Vec<Term>) -> Term {
        Term::Op(head, kids)
    }

    /// Adds the term to an e-graph; `leaves` gets the leaf class of each variable.
    pub fn add(&self, eg: &mut EGraph, leaves: &mut Vec<Option<Id>>) -> Id {
        match self {
            Term::Var(..) | Term::Bounded(..) => {
                let (k, w, max) = match self {
                    Term::Bounded(k, w, m) => (*k as usize, w, *m),
                    Term::Var(k, w) => (*k as usize, w, u128::MAX),
                    _ => unreachable!(),
                };
                if leaves.len() <= k {
                    leaves.resize(k + 1, None);
                }
                if let Some(id) = leaves[k] {
                    return id;
                }
                let l = eg.analysis.new_known_leaf(crate::engine::known::Known::at_most(*w, max));
                let id = eg.add(Node::Leaf(l));
                leaves[k] = Some(id);
                id
            }
            Term::Const(w, b) => eg.add(Node::Const { width: *w, bits: *b }),
            Term::Op(head, kids) => {
                let ids: Vec<Id> = kids.iter().map(|t| t.add(eg, leaves)).collect();
                super::mk(eg, head, &ids)
            }
        }
    }
}

/// Shorthand for instance lists: `t("add.u32", [x, c])`.
pub fn t<const N: usize>(head: &'static str, kids: [Term; N]) -> Term {
    Term::Op(head, kids.into())
}
