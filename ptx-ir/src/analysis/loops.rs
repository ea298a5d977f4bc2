//! Natural loops: back edges, loop bodies, nesting depth, and irreducible flow.

use super::dom::DomTree;
use crate::cfg::Cfg;
use petgraph::stable_graph::NodeIndex;

/// A natural loop: a header that dominates every block of the body, and the
/// back edges into it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loop {
    pub header: NodeIndex,
    /// Sorted, includes the header.
    pub body: Vec<NodeIndex>,
    /// Sources of the back edges to the header, sorted.
    pub latches: Vec<NodeIndex>,
    /// Index of the innermost enclosing loop in `LoopForest::loops`.
    pub parent: Option<usize>,
    /// 1 for an outermost loop.
    pub depth: u32,
}

/// All loops of a function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopForest {
    /// Outer loops before the loops they contain.
    pub loops: Vec<Loop>,
    /// Loop nesting depth of each block (0 outside loops), by node index.
    pub depth: Vec<u32>,
    /// Edges that close a cycle whose target does not dominate the source:
    /// the flow is irreducible there and the cycle is not a natural loop.
    pub irreducible_edges: Vec<(NodeIndex, NodeIndex)>,
}

impl LoopForest {
    pub fn compute(cfg: &Cfg, dom: &DomTree) -> LoopForest {
        let n = cfg.node_bound();
        // Back edges, and retreating edges found by a DFS from the entry.
        let mut headers: Vec<(NodeIndex, Vec<NodeIndex>)> = Vec::new();
        let mut irreducible_edges = Vec::new();
        let mut state = vec![0u8; n]; // 0 new, 1 on stack, 2 done
        let mut stack: Vec<(NodeIndex, Vec<NodeIndex>, usize)> = Vec::new();
        let succs = |b: NodeIndex| {
            let mut v: Vec<NodeIndex> = cfg.successors(b).collect();
            v.sort();
            v.dedup();
            v
        };
        state[cfg.entry.index()] = 1;
        stack.push((cfg.entry, succs(cfg.entry), 0));
        while let Some((b, ss, i)) = stack.pop() {
            if let Some(&s) = ss.get(i) {
                stack.push((b, ss, i + 1));
                match state[s.index()] {
                    0 => {
                        state[s.index()] = 1;
                        let v = succs(s);
                        stack.push((s, v, 0));
                    }
                    1 => {
                        if dom.dominates(s, b) {
                            match headers.iter_mut().find(|(h, _)| *h == s) {
                                Some((_, l)) => l.push(b),
                                None => headers.push((s, vec![b])),
                            }
                        } else {
                            irreducible_edges.push((b, s));
                        }
                    }
                    _ => {
                        // A cross or forward edge; a back edge to a dominator
                        // reached by another path is still a back edge.
                        if dom.dominates(s, b) {
                            match headers.iter_mut().find(|(h, _)| *h == s) {
                                Some((_, l)) => l.push(b),
                                None => headers.push((s, vec![b])),
                            }
                        }
                    }
                }
            } else {
                state[b.index()] = 2;
            }
        }
        let mut loops: Vec<Loop> = headers
            .into_iter()
            .map(|(h, mut latches)| {
                latches.sort();
                latches.dedup();
                let mut in_body = vec![false; n];
                in_body[h.index()] = true;
                let mut work: Vec<NodeIndex> = latches.clone();
                while let Some(b) = work.pop() {
                    if in_body[b.index()] {
                        continue;
                    }
                    in_body[b.index()] = true;
                    work.extend(cfg.predecessors(b).filter(|p| dom.contains(*p)));
                }
                let body: Vec<NodeIndex> = (0..n).filter(|&k| in_body[k]).map(NodeIndex::new).collect();
                Loop { header: h, body, latches, parent: None, depth: 0 }
            })
            .collect();
        // Outer loops first: larger bodies contain smaller ones.
        loops.sort_by(|a, b| b.body.len().cmp(&a.body.len()).then(a.header.cmp(&b.header)));
        for i in 0..loops.len() {
            let parent = (0..i).rev().find(|&j| loops[j].body.binary_search(&loops[i].header).is_ok());
            loops[i].parent = parent;
            loops[i].depth = parent.map_or(1, |p| loops[p].depth + 1);
        }
        let mut depth = vec![0u32; n];
        for l in &loops {
            for b in &l.body {
                depth[b.index()] = depth[b.index()].max(l.depth);
            }
        }
        LoopForest { loops, depth, irreducible_edges }
    }

    pub fn is_reducible(&self) -> bool {
        self.irreducible_edges.is_empty()
    }
}
