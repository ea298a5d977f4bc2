//! What the e-graph knows about each e-class: its width, its constant
//! value when some node folds exactly, and its known bits and unsigned
//! range ([`super::known`]).
//!
//! Constant folding runs in [`egg::Analysis::make`] through the shapes'
//! evaluator ([`super::lang::Shape::eval`], i.e. `ptx_ir::eval` under the
//! module's dialect): only results of quality `Exact` fold, never a division
//! by zero, an approximation, a NaN whose payload is open, or anything the
//! manual leaves unspecified. A folded class gets a [`Node::Const`] member.
//!
//! Two classes of different widths, two different constants, or two classes
//! whose known bits or ranges exclude each other, must never merge; if a
//! rule were wrong and they did, the analysis records a contradiction and
//! the engine gives the function back unchanged.

use super::known::Known;
use super::lang::{LeafId, Node, ShapeTable};
use egg::{Analysis, DidMerge, Id};
use ptx_ir::eval::Dialect;

pub type EGraph = egg::EGraph<Node, Facts>;

/// The analysis state of one e-graph.
pub struct Facts {
    pub shapes: ShapeTable,
    /// What is known of each leaf (its width, and bounds such as `%tid.x < 1024`).
    pub leaves: Vec<Known>,
    pub dialect: Dialect,
    /// The module's target (`sm_NN`; 0 when unknown), for rules whose
    /// right-hand side depends on it.
    pub sm: u32,
    /// Set if two classes that cannot be equal were merged (a broken rule).
    pub contradiction: Option<String>,
    /// The classes each rule can match at, made at the start of each
    /// iteration of the engine's runner for that iteration's search
    /// ([`crate::rules::RootIndex`]); `None` elsewhere (every class is
    /// searched).
    pub roots: Option<crate::rules::RootIndex>,
}

impl Facts {
    pub fn new(dialect: Dialect) -> Facts {
        Facts { shapes: ShapeTable::default(), leaves: Vec::new(), dialect, sm: 0, contradiction: None, roots: None }
    }

    /// A new leaf of `width` bits.
    pub fn new_leaf(&mut self, width: u8) -> LeafId {
        self.new_known_leaf(Known::top(width))
    }

    /// What is known of a leaf class's inputs: the facts its leaf node was
    /// made with (not what merges added), the full range for other classes.
    pub fn leaves_known(&self, class: &egg::EClass<Node, ClassData>) -> Known {
        class.nodes.iter().find_map(|n| if let Node::Leaf(l) = n { Some(self.leaves[l.0 as usize]) } else { None }).unwrap_or(Known::top(class.data.width))
    }

    /// A new leaf of which `known` holds.
    pub fn new_known_leaf(&mut self, known: Known) -> LeafId {
        self.leaves.push(known);
        LeafId(self.leaves.len() as u32 - 1)
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
    /// Known bits and unsigned range.
    pub known: Known,
}

impl Analysis<Node> for Facts {
    type Data = ClassData;

    fn make(egraph: &mut EGraph, enode: &Node, _id: Id) -> ClassData {
        match enode {
            Node::Const { width, bits } => ClassData { width: *width, constant: Some(*bits), known: Known::exact(*width, *bits) },
            Node::Leaf(l) => {
                let known = egraph.analysis.leaves[l.0 as usize];
                ClassData { width: known.width, constant: known.value(), known }
            }
            Node::Op(s, kids) => {
                let shape = egraph.analysis.shapes.get(*s);
                let mut vals: smallvec::SmallVec<[(u128, u8); 4]> = smallvec::SmallVec::new();
                let mut knowns: smallvec::SmallVec<[Known; 4]> = smallvec::SmallVec::new();
                let mut all = true;
                // The children's known bits, where the analysis models the shape.
                let modelled = shape.known_plain();
                for k in kids {
                    let d = &egraph[*k].data;
                    if modelled {
                        knowns.push(d.known);
                    }
                    match d.constant {
                        Some(c) => vals.push((c, d.width)),
                        None => all = false,
                    }
                }
                let constant = if all { shape.eval(&egraph.analysis.dialect, &vals) } else { None };
                let known = match constant {
                    Some(c) => Known::exact(shape.width, c),
                    None => super::known::of_op(shape, &knowns),
                };
                let constant = constant.or(known.value());
                ClassData { width: shape.width, constant, known }
            }
        }
    }

    fn merge(&mut self, a: &mut ClassData, b: ClassData) -> DidMerge {
        if a.width != b.width {
            self.contradiction.get_or_insert_with(|| format!("merged a {}-bit class with a {}-bit class", a.width, b.width));
            return DidMerge(false, false);
        }
        let known = match a.known.meet(&b.known) {
            Some(k) => k,
            None => {
                self.contradiction.get_or_insert_with(|| format!("merged classes whose known bits exclude each other: {:?} and {:?}", a.known, b.known));
                return DidMerge(false, false);
            }
        };
        let constant = match (a.constant, b.constant) {
            (Some(x), Some(y)) if x != y => {
                self.contradiction.get_or_insert_with(|| format!("merged constants {x:#x} and {y:#x}"));
                return DidMerge(false, false);
            }
            (x, y) => x.or(y).or(known.value()),
        };
        let merged = ClassData { width: a.width, constant, known };
        let did = DidMerge(merged != *a, merged != b);
        *a = merged;
        did
    }

    fn modify(egraph: &mut EGraph, id: Id) {
        let class = &egraph[id];
        let d = class.data;
        if let Some(c) = d.constant {
            let node = Node::Const { width: d.width, bits: c };
            // A class with the node already is the class adding it gives
            // (a union with itself changes nothing).
            if !class.nodes.contains(&node) {
                let k = egraph.add(node);
                egraph.union(id, k);
            }
        }
    }
}
