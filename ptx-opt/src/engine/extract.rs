//! Choosing one node per e-class, aware of sharing.
//!
//! egg's `Extractor` minimizes tree cost, which pays a value used twice
//! twice. Here a value that is demanded by the skeleton, or shared by two
//! chosen parents, is paid once: it is a *root* whose cost counts once in
//! the total, and costs nothing to the nodes that use it. The extractor
//! alternates between choosing (a fixed point of tree costs in which roots
//! are free) and recomputing the roots from the chosen DAG, a few rounds;
//! the result's cost is the exact cost of the chosen DAG (every chosen class
//! counted once), which the engine compares with the input's before it
//! accepts a rewrite.

use super::facts::EGraph;
use super::lang::Node;
use egg::{Id, Language};
use rustc_hash::FxHashSet;

/// The cost of one node alone (its children excluded).
pub trait NodeCost {
    fn node_cost(&self, eg: &EGraph, n: &Node) -> u64;
}

/// The choice: for each canonical class, the index of its chosen node.
pub struct Choice {
    /// By class id: the index of the chosen node, [`NONE`] for a class
    /// without one (and for ids that are not canonical classes).
    chosen: Vec<u32>,
    /// The cost of the DAG of the chosen nodes reachable from the demanded classes.
    pub dag_cost: u64,
}

const INF: u64 = u64::MAX / 4;

/// No node chosen.
const NONE: u32 = u32::MAX;

impl Choice {
    pub fn node<'a>(&self, eg: &'a EGraph, id: Id) -> Option<&'a Node> {
        let id = eg.find(id);
        self.index(id).map(|k| &eg[id].nodes[k])
    }

    /// The index of the chosen node of the canonical class `class`.
    pub fn index(&self, class: Id) -> Option<usize> {
        self.chosen.get(usize::from(class)).filter(|k| **k != NONE).map(|k| *k as usize)
    }
}

/// Extracts the cheapest DAG computing `demanded` (canonical ids not
/// required); `by_id` is the e-graph's classes by id
/// ([`super::facts::classes_by_id`], which the engine's walk reads too).
pub fn extract(eg: &EGraph, by_id: &[Option<&super::facts::EClass>], demanded: &[Id], costs: &dyn NodeCost) -> Choice {
    // Dense numbering of the classes, in id order (children are mostly made
    // before their parents, so the fixed point converges in a few sweeps).
    // Placed by id rather than sorted: ids are dense (sorting was 1.1 M of
    // extract's host instructions on matrix_free at -O2).
    let bound = by_id.len();
    let classes: Vec<&super::facts::EClass> = by_id.iter().flatten().copied().collect();
    let mut index = vec![u32::MAX; bound];
    for (k, c) in classes.iter().enumerate() {
        index[usize::from(c.id)] = k as u32;
    }
    let ix = |id: Id| index[usize::from(eg.find(id))] as usize;
    // Per class its nodes, per node its own cost and its children by index,
    // in flat arrays (class `c`'s nodes are `first[c]..first[c + 1]`).
    // Sized once (grown by doubling, the arrays' growth was a tenth of
    // extract's 19.3 M host instructions on matrix_free at -O2).
    let (node_count, kid_count) = classes.iter().flat_map(|c| &c.nodes).fold((0, 0), |(n, k), node| (n + 1, k + node.children().len()));
    let mut nodes = Nodes { first: Vec::with_capacity(classes.len() + 1), own: Vec::with_capacity(node_count), kids_first: Vec::with_capacity(node_count + 1), kids: Vec::with_capacity(kid_count) };
    nodes.kids_first.push(0);
    for c in &classes {
        nodes.first.push(nodes.own.len() as u32);
        for n in &c.nodes {
            nodes.own.push(costs.node_cost(eg, n));
            nodes.kids.extend(n.children().iter().map(|k| ix(*k) as u32));
            nodes.kids_first.push(nodes.kids.len() as u32);
        }
    }
    nodes.first.push(nodes.own.len() as u32);
    let n = classes.len();
    let demanded_ix: Vec<usize> = demanded.iter().map(|d| ix(*d)).collect();
    // Round 0 is plain tree cost (acyclic by construction: every operation
    // costs at least 1); later rounds make demanded and shared classes free
    // to their users, and a round whose choice has a cycle is discarded.
    let mut free = vec![false; n];
    let mut choice: Vec<u32> = vec![NONE; n];
    let mut best_cost = INF;
    let mut best_choice: Vec<u32> = Vec::new();
    let mut cost: Vec<u64> = vec![INF; n];
    for _round in 0..3 {
        // Tree costs to a fixed point; free classes cost nothing to their users.
        cost.iter_mut().for_each(|c| *c = INF);
        let mut changed = true;
        let mut sweeps = 0;
        while changed && sweeps < 64 {
            changed = false;
            sweeps += 1;
            // Whether a class read the cost of a class after it, which this
            // sweep had not computed yet. If none did, every class was
            // computed from its children's final costs: the sweep reached
            // the fixed point, and another would change nothing (a node
            // left early, its partial total already no better, stays so:
            // costs only fall). Most e-graphs are in this order (children
            // made before parents), so this saves the confirming sweep.
            let mut read_ahead = false;
            for c in 0..n {
                let mut best = cost[c];
                for (k, node) in nodes.of(c).enumerate() {
                    let mut total = nodes.own[node];
                    for &ch in nodes.kids_of(node) {
                        let ch = ch as usize;
                        read_ahead |= ch > c;
                        let cc = if ch == c { INF } else if free[ch] && cost[ch] < INF { 0 } else { cost[ch] };
                        total = total.saturating_add(cc);
                        if total >= best {
                            break;
                        }
                    }
                    if total < best {
                        best = total;
                        choice[c] = k as u32;
                        changed = true;
                    }
                }
                cost[c] = best;
            }
            if !read_ahead {
                break;
            }
        }
        // The chosen DAG, its exact cost, and the classes shared in it.
        let Some((dag, uses)) = dag_of(&nodes, &choice, &demanded_ix) else { break };
        let total: u64 = dag.iter().map(|&c| if choice[c] == NONE { INF } else { nodes.own[nodes.first[c] as usize + choice[c] as usize] }).fold(0u64, |a, b| a.saturating_add(b));
        if total < best_cost {
            best_cost = total;
            best_choice = choice.clone();
        }
        let mut next = vec![false; n];
        for &d in &demanded_ix {
            next[d] = true;
        }
        for (c, u) in uses.iter().enumerate() {
            if *u >= 2 {
                next[c] = true;
            }
        }
        if next == free {
            break;
        }
        free = next;
    }
    let mut chosen = vec![NONE; bound];
    for (c, k) in classes.iter().zip(&best_choice) {
        chosen[usize::from(c.id)] = *k;
    }
    Choice { chosen, dag_cost: best_cost }
}

/// The nodes of an e-graph's classes (numbered densely) in flat arrays.
struct Nodes {
    /// Per class, its first node; one more entry at the end.
    first: Vec<u32>,
    /// Per node, its own cost.
    own: Vec<u64>,
    /// Per node, its first child in `kids`; one more entry at the end.
    kids_first: Vec<u32>,
    /// The children of every node, by class number.
    kids: Vec<u32>,
}

impl Nodes {
    /// The nodes of class `c`.
    fn of(&self, c: usize) -> std::ops::Range<usize> {
        self.first[c] as usize..self.first[c + 1] as usize
    }

    fn kids_of(&self, node: usize) -> &[u32] {
        &self.kids[self.kids_first[node] as usize..self.kids_first[node + 1] as usize]
    }
}

/// The classes reachable from `roots` through the chosen nodes, and how
/// many chosen parents (or demands) use each; `None` if the choice has a cycle.
fn dag_of(nodes: &Nodes, choice: &[u32], roots: &[usize]) -> Option<(Vec<usize>, Vec<u32>)> {
    let n = nodes.first.len() - 1;
    let mut uses = vec![0u32; n];
    let mut order = Vec::new();
    // 0: unseen, 1: on the path, 2: done.
    let mut state = vec![0u8; n];
    // The children of class `c`'s chosen node: where they are in `nodes.kids`.
    let kids_of = |c: usize| -> std::ops::Range<u32> {
        match choice[c] {
            NONE => 0..0,
            k => {
                let node = nodes.first[c] as usize + k as usize;
                nodes.kids_first[node]..nodes.kids_first[node + 1]
            }
        }
    };
    // One stack for every root (a stack per root was an allocation per
    // demanded value), of each class on the path and its children still
    // to visit (found again from its chosen node at every step, they were
    // a third of extract's host instructions on matrix_free at -O2).
    let mut stack: Vec<(usize, std::ops::Range<u32>)> = Vec::new();
    for &r in roots {
        uses[r] += 1;
        if state[r] != 0 {
            continue;
        }
        stack.push((r, kids_of(r)));
        state[r] = 1;
        while let Some((c, kids)) = stack.last_mut() {
            let c = *c;
            if let Some(at) = kids.next() {
                let ch = nodes.kids[at as usize] as usize;
                uses[ch] += 1;
                match state[ch] {
                    0 => {
                        state[ch] = 1;
                        stack.push((ch, kids_of(ch)));
                    }
                    1 => return None,
                    _ => {}
                }
            } else {
                stack.pop();
                state[c] = 2;
                order.push(c);
            }
        }
    }
    Some((order, uses))
}

/// The exact cost of the DAG the input program computes: each value
/// statement's class with its original node, once.
pub fn dag_cost_of(eg: &EGraph, nodes: &[(Id, Node)], costs: &dyn NodeCost) -> u64 {
    let mut seen: FxHashSet<Id> = FxHashSet::default();
    let mut total = 0u64;
    for (c, n) in nodes {
        if seen.insert(eg.find(*c)) {
            total = total.saturating_add(costs.node_cost(eg, n));
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::facts::Facts;

    /// Prices a leaf below a constant.
    struct LeavesCheap;

    impl NodeCost for LeavesCheap {
        fn node_cost(&self, _: &EGraph, n: &Node) -> u64 {
            if matches!(n, Node::Leaf(_)) {
                1
            } else {
                5
            }
        }
    }

    /// Each class gets its cheapest node, found from any id of the class.
    #[test]
    fn the_cheapest_node_is_chosen_and_found_from_any_id() {
        let mut eg = EGraph::new(Facts::new(ptx_ir::eval::Dialect::MODERN));
        let l = eg.analysis.new_leaf(32);
        let leaf = eg.add(Node::Leaf(l));
        let seven = eg.add(Node::Const { width: 32, bits: 7 });
        let nine = eg.add(Node::Const { width: 32, bits: 9 });
        eg.union(seven, leaf);
        eg.rebuild();
        let choice = extract(&eg, &crate::engine::facts::classes_by_id(&eg), &[seven], &LeavesCheap);
        for id in [seven, leaf] {
            assert_eq!(choice.node(&eg, id), Some(&Node::Leaf(l)));
        }
        assert_eq!(choice.node(&eg, nine), Some(&Node::Const { width: 32, bits: 9 }));
        assert_eq!(choice.dag_cost, 1, "the demanded class only, with its leaf");
    }
}
