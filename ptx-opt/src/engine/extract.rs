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
use rustc_hash::{FxHashMap, FxHashSet};

/// The cost of one node alone (its children excluded).
pub trait NodeCost {
    fn node_cost(&self, eg: &EGraph, n: &Node) -> u64;
}

/// The choice: for each canonical class, the index of its chosen node.
pub struct Choice {
    pub node: FxHashMap<Id, usize>,
    /// The cost of the DAG of the chosen nodes reachable from the demanded classes.
    pub dag_cost: u64,
}

const INF: u64 = u64::MAX / 4;

impl Choice {
    pub fn node<'a>(&self, eg: &'a EGraph, id: Id) -> Option<&'a Node> {
        let id = eg.find(id);
        self.node.get(&id).map(|&k| &eg[id].nodes[k])
    }
}

/// Extracts the cheapest DAG computing `demanded` (canonical ids not required).
pub fn extract(eg: &EGraph, demanded: &[Id], costs: &dyn NodeCost) -> Choice {
    let classes: Vec<Id> = eg.classes().map(|c| c.id).collect();
    let node_costs: FxHashMap<Id, Vec<u64>> = classes.iter().map(|&c| (c, eg[c].nodes.iter().map(|n| costs.node_cost(eg, n)).collect())).collect();
    // Round 0 is plain tree cost (acyclic by construction: every operation
    // costs at least 1); later rounds make demanded and shared classes free
    // to their users, and a round whose choice has a cycle is discarded.
    let mut free: FxHashSet<Id> = FxHashSet::default();
    let mut choice: FxHashMap<Id, usize> = FxHashMap::default();
    let mut best_cost = INF;
    let mut best_choice = FxHashMap::default();
    for _round in 0..3 {
        // Tree costs to a fixed point; free classes cost nothing to their users.
        let mut cost: FxHashMap<Id, u64> = FxHashMap::default();
        let mut changed = true;
        let mut guard = 0;
        while changed && guard < 64 {
            changed = false;
            guard += 1;
            for &c in &classes {
                let mut best = cost.get(&c).copied().unwrap_or(INF);
                let mut pick = choice.get(&c).copied();
                for (k, n) in eg[c].nodes.iter().enumerate() {
                    let mut total = node_costs[&c][k];
                    for ch in n.children() {
                        let ch = eg.find(*ch);
                        if ch == c {
                            total = INF;
                            break;
                        }
                        let cc = if free.contains(&ch) { if cost.contains_key(&ch) { 0 } else { INF } } else { cost.get(&ch).copied().unwrap_or(INF) };
                        total = total.saturating_add(cc);
                    }
                    if total < best {
                        best = total;
                        pick = Some(k);
                        changed = true;
                    }
                }
                if best < INF {
                    cost.insert(c, best);
                }
                if let Some(p) = pick {
                    choice.insert(c, p);
                }
            }
        }
        // The chosen DAG, its exact cost, and the classes shared in it.
        let Some((dag, uses)) = dag_of(eg, &choice, demanded) else { break };
        let total: u64 = dag.iter().map(|c| choice.get(c).map_or(INF, |&k| node_costs[c][k])).fold(0u64, |a, b| a.saturating_add(b));
        if total < best_cost {
            best_cost = total;
            best_choice = choice.clone();
        }
        let mut next: FxHashSet<Id> = demanded.iter().map(|d| eg.find(*d)).collect();
        next.extend(uses.into_iter().filter(|(_, n)| *n >= 2).map(|(c, _)| c));
        if next == free {
            break;
        }
        free = next;
    }
    Choice { node: best_choice, dag_cost: best_cost }
}

/// The classes reachable from `roots` through the chosen nodes, and how
/// many chosen parents (or demands) use each; `None` if the choice has a cycle.
fn dag_of(eg: &EGraph, choice: &FxHashMap<Id, usize>, roots: &[Id]) -> Option<(Vec<Id>, FxHashMap<Id, u32>)> {
    let mut uses: FxHashMap<Id, u32> = FxHashMap::default();
    let mut order = Vec::new();
    // 0: unseen, 1: on the path, 2: done.
    let mut state: FxHashMap<Id, u8> = FxHashMap::default();
    for r in roots {
        let r = eg.find(*r);
        *uses.entry(r).or_default() += 1;
        if state.contains_key(&r) {
            continue;
        }
        let mut stack: Vec<(Id, usize)> = vec![(r, 0)];
        state.insert(r, 1);
        while let Some((c, i)) = stack.pop() {
            let kids: &[Id] = match choice.get(&c) {
                Some(&k) => eg[c].nodes[k].children(),
                None => &[],
            };
            if let Some(ch) = kids.get(i) {
                stack.push((c, i + 1));
                let ch = eg.find(*ch);
                *uses.entry(ch).or_default() += 1;
                match state.get(&ch) {
                    None => {
                        state.insert(ch, 1);
                        stack.push((ch, 0));
                    }
                    Some(1) => return None,
                    _ => {}
                }
            } else {
                state.insert(c, 2);
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
