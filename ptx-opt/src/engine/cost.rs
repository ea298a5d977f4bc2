//! The cost model of extraction: what one node costs in SASS instructions.
//!
//! Operations cost what the measured table says for the module's target
//! (see `ptx-opt/src/cost/`); constants (immediates) and leaves (values
//! already in registers) cost nothing.

use super::extract::NodeCost;
use super::facts::EGraph;
use super::lang::Node;
use crate::rules::Target;
use ptx_ir::isa::{Opcode, ScalarType};

/// Costs for one target.
pub struct CostModel {
    pub target: Target,
}

impl CostModel {
    pub fn for_target(target: Target) -> CostModel {
        CostModel { target }
    }
}

impl NodeCost for CostModel {
    fn node_cost(&self, eg: &EGraph, n: &Node) -> u64 {
        match n {
            Node::Const { .. } | Node::Leaf(_) => 0,
            Node::Op(s, _) => {
                let shape = eg.analysis.shapes.get(*s);
                let ins = &shape.ins;
                let wide = ins.ty().is_some_and(|t| t.bits() == 64);
                match ins.opcode {
                    Opcode::DIV | Opcode::REM if ins.ty().is_some_and(|t| t != ScalarType::F32 && t != ScalarType::F64) => {
                        if wide { 80 } else { 14 }
                    }
                    Opcode::MUL | Opcode::MAD if wide => 4,
                    Opcode::MOV => 1,
                    _ => if wide { 2 } else { 1 },
                }
            }
        }
    }
}
