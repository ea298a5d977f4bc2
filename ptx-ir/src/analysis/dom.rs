//! Dominator and post-dominator trees and dominance frontiers.
//! petgraph gives dominators (`simple_fast`); post-dominators are dominators
//! of the reversed graph with a virtual exit joined to every exiting block.

use crate::cfg::Cfg;
use petgraph::algo::dominators::simple_fast;
use petgraph::graph::DiGraph;
use petgraph::stable_graph::NodeIndex;

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
    /// Tree children, sorted by node index.
    children: Vec<Vec<NodeIndex>>,
}

impl DomTree {
    fn from_idoms(n: usize, idom: Vec<Option<NodeIndex>>, roots: &[NodeIndex], reached: Vec<bool>) -> DomTree {
        let mut children = vec![Vec::new(); n];
        for (k, d) in idom.iter().enumerate() {
            if let Some(d) = d {
                children[d.index()].push(NodeIndex::new(k));
            }
        }
        for c in &mut children {
            c.sort();
        }
        let (mut pre, mut post) = (vec![0; n], vec![0; n]);
        let (mut t, mut stack) = (0u32, Vec::new());
        for &r in roots {
            stack.push((r, 0usize));
            pre[r.index()] = t;
            t += 1;
            while let Some((v, i)) = stack.pop() {
                if let Some(&c) = children[v.index()].get(i) {
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
        let d = simple_fast(&cfg.graph, cfg.entry);
        let n = cfg.node_bound();
        let mut idom = vec![None; n];
        let mut reached = vec![false; n];
        for &b in &cfg.layout {
            if d.dominators(b).is_some() {
                reached[b.index()] = true;
                idom[b.index()] = d.immediate_dominator(b);
            }
        }
        DomTree::from_idoms(n, idom, &[cfg.entry], reached)
    }

    /// The post-dominator tree: dominators of the reversed CFG from a virtual exit.
    pub fn post_dominators(cfg: &Cfg) -> DomTree {
        let n = cfg.node_bound();
        let mut g: DiGraph<(), ()> = DiGraph::with_capacity(n + 1, cfg.graph.edge_count() + 4);
        for _ in 0..=n {
            g.add_node(());
        }
        let exit = petgraph::graph::NodeIndex::new(n);
        for (src, dst, _) in cfg.edges() {
            g.add_edge(petgraph::graph::NodeIndex::new(dst.index()), petgraph::graph::NodeIndex::new(src.index()), ());
        }
        for b in cfg.exits() {
            g.add_edge(exit, petgraph::graph::NodeIndex::new(b.index()), ());
        }
        let d = simple_fast(&g, exit);
        let mut idom = vec![None; n];
        let mut reached = vec![false; n];
        let mut roots = Vec::new();
        for &b in &cfg.layout {
            let gb = petgraph::graph::NodeIndex::new(b.index());
            if d.dominators(gb).is_some() {
                reached[b.index()] = true;
                match d.immediate_dominator(gb) {
                    Some(p) if p != exit => idom[b.index()] = Some(NodeIndex::new(p.index())),
                    _ => roots.push(b),
                }
            }
        }
        roots.sort();
        DomTree::from_idoms(n, idom, &roots, reached)
    }

    pub fn idom(&self, b: NodeIndex) -> Option<NodeIndex> {
        self.idom[b.index()]
    }

    /// Is `b` in the tree (reachable from its root)?
    pub fn contains(&self, b: NodeIndex) -> bool {
        self.reached[b.index()]
    }

    /// Does `a` dominate `b` (every block dominates itself)?
    pub fn dominates(&self, a: NodeIndex, b: NodeIndex) -> bool {
        self.contains(a) && self.contains(b) && self.pre[a.index()] <= self.pre[b.index()] && self.post[b.index()] <= self.post[a.index()]
    }

    /// Blocks immediately dominated by `b`, sorted.
    pub fn children(&self, b: NodeIndex) -> &[NodeIndex] {
        &self.children[b.index()]
    }
}

/// Dominance frontiers (Cooper, Harvey, Kennedy): for each block, the blocks
/// where its dominance ends. Indexed by node index, each sorted.
pub fn dominance_frontiers(cfg: &Cfg, dom: &DomTree) -> Vec<Vec<NodeIndex>> {
    let mut df: Vec<Vec<NodeIndex>> = vec![Vec::new(); cfg.node_bound()];
    for &b in &cfg.layout {
        if !dom.contains(b) {
            continue;
        }
        let preds: Vec<NodeIndex> = cfg.predecessors(b).filter(|p| dom.contains(*p)).collect();
        if preds.len() < 2 {
            continue;
        }
        for p in preds {
            let mut runner = Some(p);
            while let Some(r) = runner {
                if Some(r) == dom.idom(b) {
                    break;
                }
                if !df[r.index()].contains(&b) {
                    df[r.index()].push(b);
                }
                runner = dom.idom(r);
            }
        }
    }
    for v in &mut df {
        v.sort();
    }
    df
}
