//! Checking rules on concrete values: after a rule has run on an e-graph,
//! every node of every e-class must compute the same bits as the others,
//! on random inputs and on the edge values of the inputs' widths. Used by
//! the rules' own proof test (`rules/tests.rs`) and by the suite's check of
//! every rule against every instruction of the ISA (`tests/tests/rules_isa.rs`).

use super::{rewrite, Rule};
use crate::engine::facts::{EGraph, Facts};
use crate::engine::known::Known;
use crate::engine::lang::Node;
use egg::Id;
use ptx_ir::eval::{bits_mask, Dialect};
use rustc_hash::FxHashMap;

/// A small deterministic generator (splitmix64).
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The edge values of a width: 0, 1, 2, 3, all ones, the sign bit and its
/// neighbours, small powers of two and alternating bits.
pub fn edge_values(w: u8) -> Vec<u128> {
    let m = bits_mask(w as u32);
    let min = 1u128 << (w.max(1) - 1);
    let mut v = vec![0, 1, 2, 3, m, m - 1, min, min - 1, min + 1, 7, 8, 9, 0x55 & m, 0xaa & m];
    v.retain(|x| *x <= m);
    v.sort();
    v.dedup();
    v
}

/// Values of every class under one assignment of the leaves; checks that
/// all nodes of a class agree. Gives an error message on a disagreement.
///
/// `original` are the nodes the e-graph held before the rule ran (with
/// canonical children): where a class holds one whose value is not exactly
/// determined (a division by zero, `MININT / -1`), a rewrite may give any
/// value there (the manual leaves it open), so that class is not compared.
pub fn check_assignment(eg: &EGraph, leaves: &FxHashMap<Id, u128>, original: &rustc_hash::FxHashSet<Node>) -> Result<(), String> {
    let classes: Vec<Id> = eg.classes().map(|c| c.id).collect();
    let val = class_values(eg, leaves);
    let node_value = |n: &Node, val: &FxHashMap<Id, u128>| node_value(eg, n, val);
    for &c in &classes {
        let Some(&v) = val.get(&c) else { continue };
        let open = eg[c].nodes.iter().any(|n| original.contains(n) && matches!(node_value(n, &val), Some(None)));
        if open {
            continue;
        }
        for n in &eg[c].nodes {
            match node_value(n, &val) {
                Some(Some(x)) if x != v => return Err(format!("class {c}: node {n:?} gives {x:#x}, another node {v:#x}")),
                Some(None) => return Err(format!("class {c}: node {n:?} is not exactly determined where another node gives {v:#x}")),
                _ => {}
            }
        }
    }
    Ok(())
}

/// The value of a node under the class values `val`: `None` for a leaf or
/// a node with an input not computed yet, `Some(None)` where its result is
/// not exactly determined.
fn node_value(eg: &EGraph, n: &Node, val: &FxHashMap<Id, u128>) -> Option<Option<u128>> {
    match n {
        Node::Const { bits, .. } => Some(Some(*bits)),
        Node::Leaf(_) => None,
        Node::Op(s, kids) => {
            let mut v = Vec::with_capacity(kids.len());
            for k in kids {
                let k = eg.find(*k);
                v.push((*val.get(&k)?, eg[k].data.width()));
            }
            Some(eg.analysis.shapes.get(*s).eval(&eg.analysis.dialect, &v))
        }
    }
}

/// The value of every class whose value some node determines exactly,
/// given the values of the leaves (computed to a fixed point).
pub fn class_values(eg: &EGraph, leaves: &FxHashMap<Id, u128>) -> FxHashMap<Id, u128> {
    let classes: Vec<Id> = eg.classes().map(|c| c.id).collect();
    let mut val: FxHashMap<Id, u128> = FxHashMap::default();
    for (id, v) in leaves {
        val.insert(eg.find(*id), *v);
    }
    let mut changed = true;
    while changed {
        changed = false;
        for &c in &classes {
            if val.contains_key(&c) {
                continue;
            }
            for n in &eg[c].nodes {
                if let Some(Some(v)) = node_value(eg, n, &val) {
                    val.insert(c, v);
                    changed = true;
                    break;
                }
            }
        }
    }
    val
}

/// A value of the leaf from the random `r`: `r` itself where the facts admit
/// it, else `r` brought into the leaf's range.
fn draw(rng: &mut Rng, k: &Known, r: u128) -> u128 {
    let r = r & bits_mask(k.width as u32);
    if k.admits(r) {
        return r;
    }
    let span = k.hi - k.lo;
    let v = k.lo + (r ^ rng.next() as u128) % span.saturating_add(1).max(1);
    let v = (v & !k.zero) | k.one;
    if k.admits(v) {
        v
    } else {
        k.lo
    }
}

/// Runs one rule on an e-graph (a few iterations, as the proofs do): gives
/// the e-graph and the nodes it held before (with canonical children), or
/// `None` when the rule did not fire.
pub fn run_rule(rule: &'static Rule, eg: EGraph) -> Result<Option<(EGraph, rustc_hash::FxHashSet<Node>)>, String> {
    let rw = [rewrite(rule)];
    let before: Vec<Node> = eg.classes().flat_map(|c| c.nodes.iter().cloned()).collect();
    let runner: egg::Runner<Node, Facts, ()> = egg::Runner::new(Facts::new(Dialect::MODERN)).with_egraph(eg).with_iter_limit(4).with_node_limit(10_000).run(&rw);
    let applied: usize = runner.iterations.iter().map(|it| it.applied.values().sum::<usize>()).sum();
    let eg = runner.egraph;
    if let Some(c) = &eg.analysis.contradiction {
        return Err(format!("contradiction: {c}"));
    }
    if applied == 0 {
        return Ok(None);
    }
    let original: rustc_hash::FxHashSet<Node> = before.into_iter().map(|n| egg::Language::map_children(n, |k| eg.find(k))).collect();
    Ok(Some((eg, original)))
}

/// Runs one rule on an e-graph whose leaves are `leaves` and checks every
/// class on `random` random assignments plus every edge value of each leaf.
/// Gives whether the rule fired.
pub fn check_rule(rule: &'static Rule, eg: EGraph, leaves: &[Id], random: usize, rng: &mut Rng) -> Result<bool, String> {
    let Some((eg, original)) = run_rule(rule, eg)? else { return Ok(false) };
    // Inputs are drawn within what the analysis knows of each leaf (a bound
    // like a special register's): rules may rely on it.
    let leaf_ids: Vec<(Id, Known)> = leaves.iter().map(|id| (*id, eg.analysis.leaves_known(&eg[*id]))).collect();
    let mut assignments: Vec<Vec<u128>> = Vec::new();
    for (k, (_, kk)) in leaf_ids.iter().enumerate() {
        let mut edges = edge_values(kk.width);
        edges.extend([kk.lo, kk.hi, kk.hi.saturating_sub(1), kk.lo + 1]);
        for e in edges.into_iter().filter(|e| kk.admits(*e)) {
            assignments.push(leaf_ids.iter().enumerate().map(|(j, (_, kj))| if j == k { e } else { let r = rng.next() as u128; draw(rng, kj, r) }).collect());
        }
    }
    for _ in 0..random {
        assignments.push(
            leaf_ids
                .iter()
                .map(|(_, kk)| {
                    let r = rng.next() as u128;
                    // Small values half of the time: divisions and shifts care.
                    let r = if rng.next() % 2 == 0 { r % 300 } else { r };
                    draw(rng, kk, r)
                })
                .collect(),
        );
    }
    for a in &assignments {
        let map: FxHashMap<Id, u128> = leaf_ids.iter().map(|(id, _)| *id).zip(a.iter().copied()).collect();
        check_assignment(&eg, &map, &original).map_err(|e| format!("inputs {a:x?}: {e}"))?;
    }
    Ok(true)
}
