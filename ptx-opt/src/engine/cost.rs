//! The cost model of extraction: what one node costs in SASS instructions,
//! from the measured table ([`crate::cost`]) for the module's target.
//!
//! Constants (immediates) and leaves (values already in registers) cost
//! nothing. Costs are scaled by [`SCALE`] and an instruction a rule made
//! (rather than one of the input's) costs one unit more: between two
//! programs of equal SASS cost the extractor keeps the input's, so that a
//! rewrite is taken only when the table says it is cheaper.

use super::extract::NodeCost;
use super::facts::EGraph;
use super::lang::{Node, ShapeId};
use crate::rules::Target;
use std::cell::RefCell;

/// Units per SASS instruction.
pub const SCALE: u64 = 8;

/// Costs for one target, memoized per shape.
pub struct CostModel {
    table: crate::cost::CostModel,
    memo: RefCell<Vec<Option<u64>>>,
}

impl CostModel {
    pub fn for_target(target: Target) -> CostModel {
        let name = if target.sm == 0 { String::new() } else { format!("sm_{}", target.sm) };
        CostModel { table: crate::cost::CostModel::for_target(&name), memo: RefCell::default() }
    }

    fn shape_cost(&self, eg: &EGraph, s: ShapeId) -> u64 {
        let k = s.0 as usize;
        if let Some(Some(c)) = self.memo.borrow().get(k) {
            return *c;
        }
        let shapes = &eg.analysis.shapes;
        let c = self.table.cost(&shapes.get(s).ins) as u64 * SCALE + shapes.made_by_rule(s) as u64;
        let mut m = self.memo.borrow_mut();
        if m.len() <= k {
            m.resize(k + 1, None);
        }
        m[k] = Some(c);
        c
    }
}

impl NodeCost for CostModel {
    fn node_cost(&self, eg: &EGraph, n: &Node) -> u64 {
        match n {
            Node::Const { .. } | Node::Leaf(_) => 0,
            Node::Op(s, _) => self.shape_cost(eg, *s),
        }
    }
}
