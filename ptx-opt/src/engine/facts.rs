//! What the e-graph knows about each e-class: its width and, when every
//! node of some representative folds exactly, its constant value.
//!
//! Constant folding runs in [`egg::Analysis::make`] through the shapes'
//! evaluator ([`super::lang::Shape::eval`], i.e. `ptx_ir::eval` under the
//! module's dialect): only results of quality `Exact` fold, never a division
//! by zero, an approximation, a NaN whose payload is open, or anything the
//! manual leaves unspecified. A folded class gets a [`Node::Const`] member.
//!
//! Two classes of different widths, or two different constants, must never
//! merge; if a rule were wrong and they did, the analysis records a
//! contradiction and the engine gives the function back unchanged.

use super::lang::{LeafId, Node, ShapeTable};
use egg::{Analysis, DidMerge, Id};
use ptx_ir::eval::Dialect;

pub type EGraph = egg::EGraph<Node, Facts>;

/// The analysis state of one e-graph.
pub struct Facts {
    pub shapes: ShapeTable,
    /// Width of each leaf.
    pub leaf_widths: Vec<u8>,
    pub dialect: Dialect,
    /// The module's target (`sm_NN`; 0 when unknown), for rules whose
    /// right-hand side depends on it.
    pub sm: u32,
    /// Set if two classes that cannot be equal were merged (a broken rule).
    pub contradiction: Option<String>,
}

impl Facts {
    pub fn new(dialect: Dialect) -> Facts {
        Facts { shapes: ShapeTable::default(), leaf_widths: Vec::new(), dialect, sm: 0, contradiction: None }
    }

    /// A new leaf of `width` bits.
    pub fn new_leaf(&mut self, width: u8) -> LeafId {
        self.leaf_widths.push(width);
        LeafId(self.leaf_widths.len() as u32 - 1)
    }
}

/// Facts for sm_20-and-newer semantics (what a runner starts with before
/// it is given an e-graph).
impl Default for Facts {
    fn default() -> Facts {
        Facts::new(Dialect::MODERN)
    }
}

/// Per e-class facts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassData {
    /// Width in bits of a register holding the value (1: `.pred`).
    pub width: u8,
    /// The value, when known exactly.
    pub constant: Option<u128>,
}

impl Analysis<Node> for Facts {
    type Data = ClassData;

    fn make(egraph: &mut EGraph, enode: &Node, _id: Id) -> ClassData {
        match enode {
            Node::Const { width, bits } => ClassData { width: *width, constant: Some(*bits) },
            Node::Leaf(l) => ClassData { width: egraph.analysis.leaf_widths[l.0 as usize], constant: None },
            Node::Op(s, kids) => {
                let shape = egraph.analysis.shapes.get(*s);
                let mut vals: smallvec::SmallVec<[(u128, u8); 4]> = smallvec::SmallVec::new();
                let mut all = true;
                for k in kids {
                    let d = &egraph[*k].data;
                    match d.constant {
                        Some(c) => vals.push((c, d.width)),
                        None => {
                            all = false;
                            break;
                        }
                    }
                }
                let constant = if all { shape.eval(&egraph.analysis.dialect, &vals) } else { None };
                ClassData { width: shape.width, constant }
            }
        }
    }

    fn merge(&mut self, a: &mut ClassData, b: ClassData) -> DidMerge {
        if a.width != b.width {
            self.contradiction.get_or_insert_with(|| format!("merged a {}-bit class with a {}-bit class", a.width, b.width));
            return DidMerge(false, false);
        }
        match (a.constant, b.constant) {
            (None, Some(c)) => {
                a.constant = Some(c);
                DidMerge(true, false)
            }
            (Some(_), None) => DidMerge(false, true),
            (Some(x), Some(y)) if x != y => {
                self.contradiction.get_or_insert_with(|| format!("merged constants {x:#x} and {y:#x}"));
                DidMerge(false, false)
            }
            _ => DidMerge(false, false),
        }
    }

    fn modify(egraph: &mut EGraph, id: Id) {
        let d = egraph[id].data;
        if let Some(c) = d.constant {
            let k = egraph.add(Node::Const { width: d.width, bits: c });
            egraph.union(id, k);
        }
    }
}
