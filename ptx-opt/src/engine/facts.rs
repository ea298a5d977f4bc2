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
/// As long as the facts' table of data ([`class_data`]): every id egg made
/// has its entry there (a walk over the classes for their largest id was
/// 1.5 M host instructions on renderer at -O2).
pub fn classes_by_id(eg: &EGraph) -> Vec<Option<&EClass>> {
    let bound = eg.analysis.data_of.len();
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
    op_facts: FxHashMap<OpInputs, ClassData>,
    /// The facts of the classes whose facts are not in place
    /// ([`ClassData::Stored`]), each once, and where each is.
    stored: Vec<Known>,
    stored_at: FxHashMap<Known, u32>,
    /// The class [`Analysis::make`] made last, and whether its data is a
    /// constant that its one node is not: egg modifies a new class right
    /// after making it, and [`Analysis::modify`] then needs not look the
    /// class up to find it has nothing to add (matrix_free -O2: 24,600
    /// adds). Cleared by [`Analysis::merge`], which egg calls after a
    /// `make` that is not of a new class (`remake`).
    made: Option<(Id, bool)>,
    /// Each class's data by id, current for canonical ids
    /// ([`class_data`]): set when [`Analysis::make`] makes a class, and
    /// by [`Analysis::modify`], which egg calls whenever a class's data
    /// changes (a union, a merge of facts). Read where egg's `egraph[id]`
    /// hashes the id to find the class (renderer at -O2: 73,427 look-ups
    /// of the children's data in `make`, 3.5 M host instructions).
    data_of: Vec<ClassData>,
}

/// The data of the class of `id` (`egraph[id].data`, read from
/// [`Facts`]'s table by the canonical id instead of egg's class map).
pub fn class_data(eg: &EGraph, id: Id) -> ClassData {
    let d = eg.analysis.data_of[usize::from(eg.find(id))];
    debug_assert_eq!(d, eg[id].data, "the facts' table is out of step with class {id}");
    d
}

/// What [`super::known::of_op`] computes a node's facts from: its shape
/// and its children's facts (as their classes' data: equal data, equal facts).
#[derive(PartialEq, Eq)]
struct OpInputs {
    shape: ShapeId,
    kids: SmallVec<[ClassData; 3]>,
}

/// Hashed in words: the shape with the number of children, then a word
/// per child (its kind, width and stored number) and its constant's bits
/// (the derived hash wrote the kind, the width and the bits apart: a
/// look-up per node made, matrix_free -O2 0.9 M host instructions).
/// Equal inputs give equal words; only the table of facts asked hashes them.
impl std::hash::Hash for OpInputs {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_u64(u64::from(self.shape.0) | (self.kids.len() as u64) << 32);
        for d in &self.kids {
            match *d {
                ClassData::Top { width } => h.write_u64(u64::from(width)),
                ClassData::Exact { width, bits } => {
                    h.write_u64(1 << 8 | u64::from(width));
                    h.write_u64(bits);
                }
                ClassData::Stored { width, at } => h.write_u64(2 << 8 | u64::from(width) | u64::from(at) << 32),
            }
        }
    }
}

impl Facts {
    pub fn new(dialect: Dialect) -> Facts {
        Facts { shapes: ShapeTable::default(), leaves: Vec::new(), dialect, sm: 0, contradiction: None, op_facts: FxHashMap::default(), stored: Vec::new(), stored_at: FxHashMap::default(), made: None, data_of: Vec::new() }
    }

    /// A new leaf of `width` bits.
    pub fn new_leaf(&mut self, width: u8) -> LeafId {
        self.new_known_leaf(Known::top(width))
    }

    /// What is known of a leaf class's inputs: the facts its leaf node was
    /// made with (not what merges added), the full range for other classes.
    pub fn leaves_known(&self, class: &egg::EClass<Node, ClassData>) -> Known {
        class.nodes.iter().find_map(|n| if let Node::Leaf(l) = n { Some(self.leaves[l.0 as usize]) } else { None }).unwrap_or(Known::top(class.data.width()))
    }

    /// The data of [`super::known::of_op`] of `inputs`, computed once.
    fn of_op(&mut self, inputs: OpInputs) -> ClassData {
        if let Some(&d) = self.op_facts.get(&inputs) {
            return d;
        }
        let kids: SmallVec<[Known; 3]> = inputs.kids.iter().map(|&d| self.known(d)).collect();
        let d = self.data(super::known::of_op(self.shapes.get(inputs.shape), &kids));
        self.op_facts.insert(inputs, d);
        d
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

/// Per e-class facts: the class's [`Known`], from which its width and its
/// constant follow (a class is constant exactly when its range is one
/// value: `make` and `merge` always kept a constant beside the facts equal
/// to [`Known::value`]). Sixteen bytes, where the width, the constant and
/// the facts in place took 128: every class of egg's class map carries one
/// (zoneplate -O2: 1.28 MB of a 3.95 MB heap peak was that map), and egg
/// moves classes when the map grows. The two common facts are in place,
/// the others in [`Facts`]'s table, once each ([`Facts::data`]); equal
/// data are equal facts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClassData {
    /// Nothing known: [`Known::top`].
    Top { width: u8 },
    /// Exactly `bits` ([`Known::exact`]), a value of at most 64 bits.
    Exact { width: u8, bits: u64 },
    /// Other facts: [`Facts`]'s stored facts number `at`.
    Stored { width: u8, at: u32 },
}

impl ClassData {
    /// Width in bits of a register holding the value (1: `.pred`).
    pub fn width(&self) -> u8 {
        match *self {
            ClassData::Top { width } | ClassData::Exact { width, .. } | ClassData::Stored { width, .. } => width,
        }
    }
}

impl Facts {
    /// The data of a class of which `known` is known: in place when it is
    /// nothing or one value of at most 64 bits (as [`Known::exact`] makes
    /// it), else stored once.
    pub fn data(&mut self, known: Known) -> ClassData {
        let width = known.width;
        if let Some(c) = known.value() {
            if let Ok(bits) = u64::try_from(c) {
                if known == Known::exact(width, c) {
                    return ClassData::Exact { width, bits };
                }
            }
        } else if known == Known::top(width) {
            return ClassData::Top { width };
        }
        let next = self.stored.len() as u32;
        let at = *self.stored_at.entry(known).or_insert(next);
        if at == next {
            self.stored.push(known);
        }
        ClassData::Stored { width, at }
    }

    /// [`Facts::data`] of `Known::exact(width, c)`, without building the facts
    /// when the value fits in place.
    pub fn exact(&mut self, width: u8, c: u128) -> ClassData {
        match u64::try_from(c & ptx_ir::eval::bits_mask(width as u32)) {
            Ok(bits) => ClassData::Exact { width, bits },
            Err(_) => self.data(Known::exact(width, c)),
        }
    }

    /// What is known of a class's value.
    pub fn known(&self, d: ClassData) -> Known {
        match d {
            ClassData::Top { width } => Known::top(width),
            ClassData::Exact { width, bits } => Known::exact(width, bits as u128),
            ClassData::Stored { at, .. } => self.stored[at as usize],
        }
    }

    /// A class's value, when known exactly.
    pub fn constant(&self, d: ClassData) -> Option<u128> {
        match d {
            ClassData::Top { .. } => None,
            ClassData::Exact { bits, .. } => Some(bits as u128),
            ClassData::Stored { at, .. } => self.stored[at as usize].value(),
        }
    }
}

impl Analysis<Node> for Facts {
    type Data = ClassData;

    fn make(egraph: &mut EGraph, enode: &Node, id: Id) -> ClassData {
        let d = Self::make_data(egraph, enode);
        // A new class (egg numbers them in order); a class made again
        // (`remake`) keeps its data until it is merged and modified.
        let table = &mut egraph.analysis.data_of;
        let k = usize::from(id);
        if k == table.len() {
            table.push(d);
        } else if k > table.len() {
            table.resize(k + 1, d);
        }
        let needs_const = match egraph.analysis.constant(d) {
            Some(c) => *enode != Node::Const { width: d.width(), bits: c },
            None => false,
        };
        egraph.analysis.made = Some((id, needs_const));
        d
    }

    fn merge(&mut self, a: &mut ClassData, b: ClassData) -> DidMerge {
        self.made = None;
        self.merge_data(a, b)
    }

    fn modify(egraph: &mut EGraph, id: Id) {
        // A class just made from one node: a constant node only if the
        // node is not that constant.
        if egraph.analysis.made.take() == Some((id, false)) {
            debug_assert!(egraph.analysis.constant(egraph[id].data).is_none_or(|c| egraph[id].nodes.contains(&Node::Const { width: egraph[id].data.width(), bits: c })), "a new class's constant node missing");
            return;
        }
        let d = egraph[id].data;
        egraph.analysis.data_of[usize::from(id)] = d;
        if let Some(c) = egraph.analysis.constant(d) {
            let node = Node::Const { width: d.width(), bits: c };
            // A class with the node already is the class adding it gives
            // (a union with itself changes nothing).
            if !egraph[id].nodes.contains(&node) {
                let k = egraph.add(node);
                egraph.union(id, k);
            }
        }
    }
}

impl Facts {
    /// The data of a new class of `enode` ([`Analysis::make`]).
    fn make_data(egraph: &mut EGraph, enode: &Node) -> ClassData {
        match enode {
            Node::Const { width, bits } => egraph.analysis.exact(*width, *bits),
            Node::Leaf(l) => {
                let known = egraph.analysis.leaves[l.0 as usize];
                egraph.analysis.data(known)
            }
            Node::Op(s, kids) => {
                let shape = egraph.analysis.shapes.get(*s);
                let mut vals: SmallVec<[(u128, u8); 4]> = SmallVec::new();
                let mut inputs = OpInputs { shape: *s, kids: SmallVec::new() };
                let mut all = true;
                // The children's facts, where the analysis models the shape.
                let modelled = shape.known_plain();
                for k in kids {
                    let d = class_data(egraph, *k);
                    if modelled {
                        inputs.kids.push(d);
                    }
                    match egraph.analysis.constant(d) {
                        Some(c) => vals.push((c, d.width())),
                        None => all = false,
                    }
                }
                let constant = if all { shape.eval(&egraph.analysis.dialect, &vals) } else { None };
                let width = shape.width;
                match constant {
                    Some(c) => egraph.analysis.exact(width, c),
                    // What `of_op` gives a shape it does not model.
                    None if !modelled => ClassData::Top { width },
                    None => egraph.analysis.of_op(inputs),
                }
            }
        }
    }

    /// [`Analysis::merge`].
    fn merge_data(&mut self, a: &mut ClassData, b: ClassData) -> DidMerge {
        if a.width() != b.width() {
            self.contradiction.get_or_insert_with(|| format!("merged a {}-bit class with a {}-bit class", a.width(), b.width()));
            return DidMerge(false, false);
        }
        // Equal facts in place meet as themselves (both are normalized).
        if *a == b && !matches!(b, ClassData::Stored { .. }) {
            return DidMerge(false, false);
        }
        let (ka, kb) = (self.known(*a), self.known(b));
        let known = match ka.meet(&kb) {
            Some(k) => k,
            None => {
                self.contradiction.get_or_insert_with(|| format!("merged classes whose known bits exclude each other: {ka:?} and {kb:?}"));
                return DidMerge(false, false);
            }
        };
        if let (Some(x), Some(y)) = (ka.value(), kb.value()) {
            if x != y {
                self.contradiction.get_or_insert_with(|| format!("merged constants {x:#x} and {y:#x}"));
                return DidMerge(false, false);
            }
        }
        let merged = self.data(known);
        let did = DidMerge(merged != *a, merged != b);
        *a = merged;
        did
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words the inputs of `of_op` hash to follow equality: equal
    /// inputs hash alike, and the inputs here (children differing in
    /// number, order, kind, width, constant or stored number; shapes) each
    /// hash otherwise.
    #[test]
    fn op_inputs_hash_as_equality_says() {
        use std::hash::BuildHasher;
        let hash = |i: &OpInputs| rustc_hash::FxBuildHasher.hash_one(i);
        let data = [ClassData::Top { width: 32 }, ClassData::Top { width: 64 }, ClassData::Exact { width: 32, bits: 0 }, ClassData::Exact { width: 32, bits: 32 }, ClassData::Stored { width: 32, at: 0 }, ClassData::Stored { width: 32, at: 1 }];
        let mut inputs = Vec::new();
        for shape in [0, 1] {
            inputs.push(OpInputs { shape: ShapeId(shape), kids: SmallVec::new() });
            for &a in &data {
                inputs.push(OpInputs { shape: ShapeId(shape), kids: [a].into_iter().collect() });
                for &b in &data {
                    inputs.push(OpInputs { shape: ShapeId(shape), kids: [a, b].into_iter().collect() });
                }
            }
        }
        let mut seen: FxHashMap<u64, usize> = FxHashMap::default();
        for (k, i) in inputs.iter().enumerate() {
            let again = OpInputs { shape: i.shape, kids: i.kids.clone() };
            assert!(again == *i && hash(&again) == hash(i));
            if let Some(other) = seen.insert(hash(i), k) {
                panic!("inputs {k} and {other} hash alike: {:?} and {:?}", i.kids, inputs[other].kids);
            }
        }
    }

    /// Facts and class data go back and forth unchanged, a class's constant
    /// is its facts' value, and equal data are equal facts: facts in place
    /// for nothing known and for one value of up to 64 bits, stored once
    /// otherwise. [`Facts::exact`]'s shortcut gives [`Facts::data`]'s data.
    #[test]
    fn class_data_keeps_the_facts() {
        let mut f = Facts::default();
        let mut seen: Vec<(Known, ClassData)> = Vec::new();
        let values = [0u128, 1, 7, 0x8000_0000, u32::MAX as u128, u64::MAX as u128, 1u128 << 64, u128::MAX, 0xdead_beef_0000_0001_0000_0000_ffff_ffff];
        for width in [1u8, 8, 16, 32, 64, 128] {
            let mut knowns = vec![Known::top(width), Known::at_most(width, 1000), Known::at_most(width, 0)];
            for &c in &values {
                knowns.push(Known::exact(width, c));
                assert_eq!(f.exact(width, c), f.data(Known::exact(width, c)), "exact({width}, {c:#x})");
                if let Some(k) = Known::top(width).meet(&Known::exact(width, c)) {
                    knowns.push(Known { zero: k.zero & !1, one: k.one & !1, lo: k.lo & !1, ..k });
                }
            }
            for k in knowns {
                let d = f.data(k);
                assert_eq!(d.width(), width);
                assert_eq!(f.known(d), k, "{d:?}");
                assert_eq!(f.constant(d), k.value(), "{k:?}");
                assert_eq!(d == ClassData::Top { width }, k == Known::top(width));
                for &(k2, d2) in &seen {
                    assert_eq!(d == d2, k == k2, "{k:?} {k2:?}");
                }
                // Equal facts in place meet as themselves (`merge`'s shortcut).
                if !matches!(d, ClassData::Stored { .. }) {
                    assert_eq!(k.meet(&k), Some(k));
                    let mut a = d;
                    let did = f.merge(&mut a, d);
                    assert!(a == d && !did.0 && !did.1);
                }
                seen.push((k, d));
            }
        }
        assert!(f.stored.len() < seen.len());
    }

    /// Every class whose value is known holds its constant node, whether
    /// it was made so (a constant, a folded instruction, a leaf known to be
    /// one value), or became so by a merge: `modify`'s shortcut for a class
    /// just made adds what the general path adds.
    #[test]
    fn constant_classes_hold_their_constant() {
        let mut eg = EGraph::new(Facts::default());
        let add = eg.analysis.shapes.of_text("add.u32", 2);
        let and = eg.analysis.shapes.of_text("and.b32", 2);
        let shr = eg.analysis.shapes.of_text("shr.u32", 2);
        let mut ids = Vec::new();
        for k in [Known::top(32), Known::at_most(32, 7), Known::at_most(32, 0)] {
            let l = eg.analysis.new_known_leaf(k);
            ids.push(eg.add(Node::Leaf(l)));
        }
        let x = ids[0];
        for c in [0u128, 3, 12, 0xffff_ffff] {
            ids.push(eg.add(Node::Const { width: 32, bits: c }));
        }
        for round in 0..2 {
            let pool = ids.clone();
            for &a in &pool {
                for &b in &pool {
                    for s in [add, and, shr] {
                        ids.push(eg.add(Node::Op(s, [a, b].into_iter().collect())));
                    }
                }
            }
            if round == 0 {
                // A merge that makes a class constant.
                let k = eg.add(Node::Const { width: 32, bits: 5 });
                eg.union(x, k);
                eg.rebuild();
            }
            let mut constants = 0;
            for c in eg.classes() {
                if let Some(v) = eg.analysis.constant(c.data) {
                    assert!(c.nodes.contains(&Node::Const { width: c.data.width(), bits: v }), "{v:#x}: {:?}", c.nodes);
                    constants += 1;
                }
            }
            assert!(constants > 10, "{constants}");
        }
    }

    /// The facts' table of class data ([`class_data`]) gives what egg's
    /// classes hold, for every id (canonical or merged away), and
    /// [`classes_by_id`], sized by that table, every class: after the
    /// build of each function of corpus files (before it is rebuilt),
    /// after the rebuild, and after the rules ran on it (unions, merged
    /// facts, folded constants).
    #[test]
    fn the_table_of_class_data_is_eggs() {
        use crate::engine::{build, saturate};
        use ptx_ir::analysis::DomTree;
        use ptx_ir::cfg::Cfg;
        fn same(eg: &EGraph) -> usize {
            let bound = eg.classes().map(|c| usize::from(c.id) + 1).max().unwrap_or(0);
            for k in 0..bound {
                let id = Id::from(k);
                assert_eq!(eg.analysis.data_of[usize::from(eg.find(id))], eg[id].data, "class {k}");
            }
            // The classes by id, sized by the table: every class at its id, nothing else.
            let by_id = classes_by_id(eg);
            assert!(eg.classes().all(|c| by_id[usize::from(c.id)].is_some_and(|b| std::ptr::eq(b, c))));
            assert_eq!(by_id.iter().flatten().count(), eg.number_of_classes());
            bound
        }
        let texts = super::super::SAMPLE_TEXTS;
        let (mut ids, mut merged) = (0, 0);
        for text in texts {
            let m = ptx_ir::parse_str(text).unwrap();
            let ctx = crate::ModuleContext::of_module(&m);
            let target = crate::rules::Target { sm: ctx.sm, ptx: (ctx.version.major, ctx.version.minor) };
            for f in m.items.iter().filter_map(|i| match i {
                ptx_ir::ir::Item::Func(f) if f.body.is_some() => Some(f),
                _ => None,
            }) {
                let cfg = Cfg::build(f);
                let dom = DomTree::dominators(&cfg);
                let view = crate::values::ValueView::build(f, &cfg, &dom);
                let mut eg = build::build(f, &cfg, &dom, &view, ctx.dialect, ctx.sm, &[]).egraph;
                same(&eg);
                eg.rebuild();
                same(&eg);
                let rules = crate::rules::RuleSet::shared(target, true);
                saturate::saturate(&mut eg, &rules, &saturate::Limits { iterations: 16, nodes: 10_000, search_budget: 800_000 });
                let bound = same(&eg);
                ids += bound;
                merged += bound - eg.number_of_classes();
            }
        }
        assert!(ids > 1_000 && merged > 50, "{ids} ids, {merged} merged away");
    }

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
                        if eg.analysis.constant(eg[id].data).is_some() {
                            continue;
                        }
                        let knowns: Vec<Known> = kids.iter().map(|k| eg.analysis.known(eg[*k].data)).collect();
                        assert_eq!(eg.analysis.known(eg[id].data), super::super::known::of_op(eg.analysis.shapes.get(shape), &knowns), "{head} on {knowns:?}");
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
