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
use super::lang::{LeafId, Node, ShapeId, ShapeTable};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use egg::{Analysis, DidMerge, Id};
use ptx_ir::eval::Dialect;

pub type EGraph = egg::EGraph<Node, Facts>;

/// An e-class of [`EGraph`].
pub type EClass = egg::EClass<Node, ClassData>;

/// The e-graph's classes by id (`None` for an id that is not a class's):
/// an array index where `egraph[id]` looks the class up in egg's hash map.
pub fn classes_by_id(eg: &EGraph) -> Vec<Option<&EClass>> {
    let bound = eg.classes().map(|c| usize::from(c.id) + 1).max().unwrap_or(0);
    let mut by_id = vec![None; bound];
    for c in eg.classes() {
        by_id[usize::from(c.id)] = Some(c);
    }
    by_id
}

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
    /// [`super::known::of_op`] of each shape and children's facts asked so
    /// far: many nodes repeat a shape on children with the same facts (most
    /// often, nothing known), four asks in five on matrix_free (`make` at
    /// -O2: 12.8 → 10.6 M instructions there, 16.7 → 15.4 M on renderer;
    /// complex, with few repeats, pays 0.3 M for the table).
    op_facts: FxHashMap<OpInputs, Known>,
}

/// What [`super::known::of_op`] computes a node's facts from: its shape
/// and its children's facts.
#[derive(PartialEq, Eq)]
struct OpInputs {
    shape: ShapeId,
    kids: SmallVec<[Known; 3]>,
}

impl std::hash::Hash for OpInputs {
    /// The shape and the low 64 bits of each child's facts (values wider
    /// than 64 bits are rare; equal facts hash equally, and wider ones still
    /// compare whole): half the words of the whole facts.
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_u32(self.shape.0);
        for k in &self.kids {
            h.write_u8(k.width);
            h.write_u64(k.zero as u64);
            h.write_u64(k.one as u64);
            h.write_u64(k.lo as u64);
            h.write_u64(k.hi as u64);
        }
    }
}

impl Facts {
    pub fn new(dialect: Dialect) -> Facts {
        Facts { shapes: ShapeTable::default(), leaves: Vec::new(), dialect, sm: 0, contradiction: None, op_facts: FxHashMap::default() }
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

    /// [`super::known::of_op`] of `inputs`, computed once.
    fn of_op(&mut self, inputs: OpInputs) -> Known {
        if let Some(&k) = self.op_facts.get(&inputs) {
            return k;
        }
        let k = super::known::of_op(self.shapes.get(inputs.shape), &inputs.kids);
        self.op_facts.insert(inputs, k);
        k
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
                let mut vals: SmallVec<[(u128, u8); 4]> = SmallVec::new();
                let mut inputs = OpInputs { shape: *s, kids: SmallVec::new() };
                let mut all = true;
                // The children's known bits, where the analysis models the shape.
                let modelled = shape.known_plain();
                for k in kids {
                    let d = &egraph[*k].data;
                    if modelled {
                        inputs.kids.push(d.known);
                    }
                    match d.constant {
                        Some(c) => vals.push((c, d.width)),
                        None => all = false,
                    }
                }
                let constant = if all { shape.eval(&egraph.analysis.dialect, &vals) } else { None };
                let width = shape.width;
                let known = match constant {
                    Some(c) => Known::exact(width, c),
                    // What `of_op` gives a shape it does not model.
                    None if !modelled => Known::top(width),
                    None => egraph.analysis.of_op(inputs),
                };
                let constant = constant.or(known.value());
                ClassData { width, constant, known }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The facts of a node whose facts were computed before (the same
    /// shape on children with the same facts) are [`super::super::known::of_op`]'s.
    #[test]
    fn remembered_node_facts_are_of_op() {
        let mut eg = EGraph::new(Facts::default());
        let leaf = |eg: &mut EGraph, k: Known| {
            let l = eg.analysis.new_known_leaf(k);
            eg.add(Node::Leaf(l))
        };
        let mut kids32: Vec<Id> = vec![leaf(&mut eg, Known::top(32)), leaf(&mut eg, Known::top(32)), leaf(&mut eg, Known::at_most(32, 1000)), leaf(&mut eg, Known::at_most(32, 7))];
        kids32.push(eg.add(Node::Const { width: 32, bits: 12 }));
        let p = leaf(&mut eg, Known::top(1));
        let heads = [("add.u32", 2), ("add.s32", 2), ("and.b32", 2), ("shl.b32", 2), ("mul.lo.u32", 2), ("mul.wide.u32", 2), ("min.u32", 2), ("cvt.u64.u32", 1), ("selp.b32", 3), ("add.f32", 2)];
        let mut checked = 0;
        for round in 0..3 {
            for &(head, n) in &heads {
                let shape = eg.analysis.shapes.of_text(head, n);
                let pool = kids32.clone();
                for (i, &a) in pool.iter().enumerate() {
                    for &b in &pool[i % 3..] {
                        let kids: SmallVec<[Id; 3]> = [a, b, p].into_iter().take(n as usize).collect();
                        let id = eg.add(Node::Op(shape, kids.clone()));
                        if eg[id].data.constant.is_some() {
                            continue;
                        }
                        let knowns: Vec<Known> = kids.iter().map(|k| eg[*k].data.known).collect();
                        assert_eq!(eg[id].data.known, super::super::known::of_op(eg.analysis.shapes.get(shape), &knowns), "{head} on {knowns:?}");
                        checked += 1;
                        if round == 0 && head == "add.u32" {
                            kids32.push(id);
                        }
                    }
                }
            }
        }
        assert!(checked > 300, "{checked}");
    }
}
