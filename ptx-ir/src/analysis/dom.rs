//! Dominator and post-dominator trees and dominance frontiers.
//! Immediate dominators come from Cooper, Harvey and Kennedy's iterative
//! algorithm over reverse postorder, on plain index vectors (petgraph's
//! `simple_fast`, which hashes every node, is the reference in the tests);
//! post-dominators are dominators of the reversed graph with a virtual
//! exit joined to every exiting block.

use super::Groups;
use crate::cfg::Cfg;
use petgraph::stable_graph::NodeIndex;

/// A graph as the dominator search reads it: nodes `0..n`, each with its
/// successors and predecessors, all nodes' in one list per direction
/// ([`Groups`]; a `SmallVec` per node and direction, `vec![..; n]` cloning
/// each, cost matrix_free -O2's `dominators` 1.3 M of its 5.7 M).
struct Adjacency {
    succ: Groups,
    pred: Groups,
}

impl Adjacency {
    fn new(n: usize, edges: impl Iterator<Item = (usize, usize)>) -> Adjacency {
        let forward: Vec<(u32, u32)> = edges.map(|(from, to)| (from as u32, to as u32)).collect();
        let backward: Vec<(u32, u32)> = forward.iter().map(|&(from, to)| (to, from)).collect();
        Adjacency { succ: Groups::of(n, &forward), pred: Groups::of(n, &backward) }
    }

    /// The CFG's blocks and edges, each block's successors and
    /// predecessors read from the graph block by block (in the graph's
    /// order, not the edges': the immediate dominators are the same), not
    /// sorted out of a list of edges (renderer -O2: `dominators` 5.10 -> 4.78 M).
    fn of_cfg(cfg: &Cfg) -> Adjacency {
        let (n, edges) = (cfg.node_bound(), cfg.graph.edge_count());
        let succ = Groups::by_key(n, edges, |v, list| list.extend(cfg.successors(NodeIndex::new(v)).map(|w| w.index() as u32)));
        let pred = Groups::by_key(n, edges, |v, list| list.extend(cfg.predecessors(NodeIndex::new(v)).map(|w| w.index() as u32)));
        Adjacency { succ, pred }
    }

    /// The immediate dominator of every node `root` reaches (the root is
    /// its own); `None` for the nodes it does not reach.
    fn immediate_dominators(&self, root: usize) -> Vec<Option<u32>> {
        let n = self.succ.keys();
        // Postorder numbers by an explicit depth-first search.
        const UNSEEN: u32 = u32::MAX;
        let mut post = vec![UNSEEN; n];
        let mut order: Vec<u32> = Vec::with_capacity(n);
        let mut seen = vec![false; n];
        let mut stack: Vec<(u32, usize)> = vec![(root as u32, 0)];
        seen[root] = true;
        while let Some(&mut (v, ref mut next)) = stack.last_mut() {
            if let Some(&w) = self.succ.get(v as usize).get(*next) {
                *next += 1;
                if !seen[w as usize] {
                    seen[w as usize] = true;
                    stack.push((w, 0));
                }
            } else {
                post[v as usize] = order.len() as u32;
                order.push(v);
                stack.pop();
            }
        }
        let mut idom: Vec<Option<u32>> = vec![None; n];
        idom[root] = Some(root as u32);
        let intersect = |idom: &[Option<u32>], mut a: u32, mut b: u32| {
            while a != b {
                while post[a as usize] < post[b as usize] {
                    a = idom[a as usize].expect("a processed node has an immediate dominator");
                }
                while post[b as usize] < post[a as usize] {
                    b = idom[b as usize].expect("a processed node has an immediate dominator");
                }
            }
            a
        };
        let mut changed = true;
        while changed {
            changed = false;
            // Reverse postorder, the root (last in postorder) left out.
            for &v in order.iter().rev().skip(1) {
                let mut new = None;
                for &p in self.pred.get(v as usize) {
                    if idom[p as usize].is_none() {
                        continue;
                    }
                    new = Some(match new {
                        None => p,
                        Some(d) => intersect(&idom, p, d),
                    });
                }
                if new.is_some() && idom[v as usize] != new {
                    idom[v as usize] = new;
                    changed = true;
                }
            }
        }
        idom
    }
}

/// A dominator (or post-dominator) tree over a CFG's blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DomTree {
    /// Immediate dominator by node index; `None` for the root and for blocks
    /// the root does not reach (or, for post-dominators, that reach no exit).
    idom: Vec<Option<NodeIndex>>,
    /// Pre/post order numbers in the tree, for O(1) dominance queries.
    pre: Vec<u32>,
    post: Vec<u32>,
    /// Whether the node is in the tree at all.
    reached: Vec<bool>,
    /// Tree children of each node, sorted by node index (a `Vec` per node
    /// cost matrix_free -O2's `from_idoms` 0.8 M of growing).
    children: Groups<NodeIndex>,
}

impl DomTree {
    fn from_idoms(n: usize, idom: Vec<Option<NodeIndex>>, roots: &[NodeIndex], reached: Vec<bool>) -> DomTree {
        // Children pushed in node order: each node's come out sorted.
        let pairs: Vec<(u32, NodeIndex)> = idom.iter().enumerate().filter_map(|(k, d)| d.map(|d| (d.index() as u32, NodeIndex::new(k)))).collect();
        let children = Groups::of(n, &pairs);
        let (mut pre, mut post) = (vec![0; n], vec![0; n]);
        let (mut t, mut stack) = (0u32, Vec::new());
        for &r in roots {
            stack.push((r, 0usize));
            pre[r.index()] = t;
            t += 1;
            while let Some((v, i)) = stack.pop() {
                if let Some(&c) = children.get(v.index()).get(i) {
                    stack.push((v, i + 1));
                    pre[c.index()] = t;
                    t += 1;
                    stack.push((c, 0));
                } else {
                    post[v.index()] = t;
                    t += 1;
                }
            }
        }
        DomTree { idom, pre, post, reached, children }
    }

    /// The dominator tree of `cfg` rooted at its entry.
    pub fn dominators(cfg: &Cfg) -> DomTree {
        let n = cfg.node_bound();
        let found = Adjacency::of_cfg(cfg).immediate_dominators(cfg.entry.index());
        let reached: Vec<bool> = found.iter().map(Option::is_some).collect();
        let idom = found.iter().enumerate().map(|(b, d)| d.filter(|&d| d as usize != b).map(|d| NodeIndex::new(d as usize))).collect();
        DomTree::from_idoms(n, idom, &[cfg.entry], reached)
    }

    /// The post-dominator tree: dominators of the reversed CFG from a virtual exit.
    pub fn post_dominators(cfg: &Cfg) -> DomTree {
        let n = cfg.node_bound();
        let exit = n;
        let reversed = cfg.edges().map(|(a, b, _)| (b.index(), a.index()));
        let graph = Adjacency::new(n + 1, reversed.chain(cfg.exits().iter().map(|b| (exit, b.index()))));
        let found = graph.immediate_dominators(exit);
        let mut idom = vec![None; n];
        let mut reached = vec![false; n];
        let mut roots = Vec::new();
        for &b in &cfg.layout {
            match found[b.index()] {
                None => {}
                Some(p) if p as usize == exit => {
                    reached[b.index()] = true;
                    roots.push(b);
                }
                Some(p) => {
                    reached[b.index()] = true;
                    idom[b.index()] = Some(NodeIndex::new(p as usize));
                }
            }
        }
        roots.sort();
        DomTree::from_idoms(n, idom, &roots, reached)
    }

    #[inline]
    pub fn idom(&self, b: NodeIndex) -> Option<NodeIndex> {
        self.idom[b.index()]
    }

    /// Is `b` in the tree (reachable from its root)?
    #[inline]
    pub fn contains(&self, b: NodeIndex) -> bool {
        self.reached[b.index()]
    }

    /// Does `a` dominate `b` (every block dominates itself)?
    #[inline]
    pub fn dominates(&self, a: NodeIndex, b: NodeIndex) -> bool {
        self.contains(a) && self.contains(b) && self.pre[a.index()] <= self.pre[b.index()] && self.post[b.index()] <= self.post[a.index()]
    }

    /// Blocks immediately dominated by `b`, sorted.
    #[inline]
    pub fn children(&self, b: NodeIndex) -> &[NodeIndex] {
        self.children.get(b.index())
    }
}

/// Each block's dominance frontier ([`dominance_frontiers`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frontiers(Groups<NodeIndex>);

impl Frontiers {
    /// The frontier of block `b`, sorted.
    #[inline]
    pub fn of(&self, b: NodeIndex) -> &[NodeIndex] {
        self.0.get(b.index())
    }
}

/// Dominance frontiers (Cooper, Harvey, Kennedy): for each block, the blocks
/// where its dominance ends. Found as (block, frontier block) pairs, each
/// once, then listed per block (a `Vec` per block, and one of predecessors
/// per join, cost matrix_free -O2's `dominance_frontiers` 1.8 M of its 3.1 M).
pub fn dominance_frontiers(cfg: &Cfg, dom: &DomTree) -> Frontiers {
    let n = cfg.node_bound();
    let mut pairs: Vec<(u32, NodeIndex)> = Vec::new();
    // Per block, the last join whose frontier walk reached it (the walks
    // of one join's predecessors meet: each block gets the join once).
    let mut reached_for: Vec<Option<NodeIndex>> = vec![None; n];
    for &b in &cfg.layout {
        if !dom.contains(b) {
            continue;
        }
        if cfg.predecessors(b).filter(|p| dom.contains(*p)).nth(1).is_none() {
            continue;
        }
        for p in cfg.predecessors(b).filter(|p| dom.contains(*p)) {
            let mut runner = Some(p);
            while let Some(r) = runner {
                if Some(r) == dom.idom(b) {
                    break;
                }
                if reached_for[r.index()] != Some(b) {
                    reached_for[r.index()] = Some(b);
                    pairs.push((r.index() as u32, b));
                }
                runner = dom.idom(r);
            }
        }
    }
    let mut df = Groups::of(n, &pairs);
    for v in 0..n {
        df.get_mut(v).sort();
    }
    Frontiers(df)
}

#[cfg(test)]
mod tests {
    use super::Adjacency;
    use crate::eval::test_rng::Rng;
    use petgraph::algo::dominators::simple_fast;
    use petgraph::graph::{DiGraph, NodeIndex};

    /// Immediate dominators as petgraph's `simple_fast` finds them.
    fn reference(n: usize, edges: &[(usize, usize)], root: usize) -> Vec<Option<u32>> {
        let mut g: DiGraph<(), ()> = DiGraph::new();
        for _ in 0..n {
            g.add_node(());
        }
        for &(a, b) in edges {
            g.add_edge(NodeIndex::new(a), NodeIndex::new(b), ());
        }
        let d = simple_fast(&g, NodeIndex::new(root));
        (0..n)
            .map(|v| {
                let v = NodeIndex::new(v);
                d.dominators(v)?;
                Some(d.immediate_dominator(v).unwrap_or(v).index() as u32)
            })
            .collect()
    }

    #[test]
    fn immediate_dominators_match_petgraphs_on_random_graphs() {
        let mut rng = Rng::new(7);
        for case in 0..2000 {
            let n = 1 + (rng.next() % 24) as usize;
            let m = (rng.next() % (3 * n as u64 + 1)) as usize;
            let edges: Vec<(usize, usize)> = (0..m).map(|_| ((rng.next() % n as u64) as usize, (rng.next() % n as u64) as usize)).collect();
            let root = (rng.next() % n as u64) as usize;
            let ours = Adjacency::new(n, edges.iter().copied()).immediate_dominators(root);
            assert_eq!(ours, reference(n, &edges, root), "case {case}: {n} nodes, root {root}, edges {edges:?}");
        }
    }

    /// The adjacency read block by block from a CFG gives the immediate
    /// dominators the one sorted out of the CFG's edges gives.
    #[test]
    fn adjacency_of_a_cfg_gives_the_dominators_of_its_edges() {
        let text = ".version 8.0\n.target sm_80\n.address_size 64\n.entry k(.param .u64 p) { .reg .b32 %r<5>; .reg .pred %p<3>; .reg .b64 %rd1;
            ld.param.u64 %rd1, [p];
            ld.global.u32 %r1, [%rd1];
            setp.eq.u32 %p1, %r1, 0;
            @%p1 bra ELSE;
            mov.u32 %r2, 1;
            bra JOIN;
        ELSE:
            mov.u32 %r2, 2;
        JOIN:
            mov.u32 %r3, 4;
        L:
            add.u32 %r3, %r3, 1;
            setp.eq.u32 %p2, %r3, 7;
            @%p2 bra SKIP;
            setp.ne.u32 %p2, %r3, 9;
            @%p2 bra L;
        SKIP:
            @%p1 bra JOIN;
            ret;
        DEAD:
            bra L; }";
        let m = crate::parse_str(text).unwrap();
        let crate::ir::Item::Func(f) = &m.items[0] else { panic!("a function") };
        let cfg = crate::cfg::Cfg::build(f);
        let by_edges = Adjacency::new(cfg.node_bound(), cfg.edges().map(|(a, b, _)| (a.index(), b.index())));
        let want = by_edges.immediate_dominators(cfg.entry.index());
        assert!(want.iter().filter(|d| d.is_some()).count() > 5 && want.contains(&None), "a test with joins, loops and an unreachable block");
        assert_eq!(Adjacency::of_cfg(&cfg).immediate_dominators(cfg.entry.index()), want);
    }

    #[test]
    fn a_diamond_inside_a_loop() {
        // 0 → 1 → {2, 3} → 4 → 1, 4 → 5.
        let edges = [(0, 1), (1, 2), (1, 3), (2, 4), (3, 4), (4, 1), (4, 5)];
        let idom = Adjacency::new(6, edges.iter().copied()).immediate_dominators(0);
        assert_eq!(idom, vec![Some(0), Some(0), Some(1), Some(1), Some(1), Some(4)]);
    }
}
