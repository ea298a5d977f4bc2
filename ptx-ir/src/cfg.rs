//! The control-flow graph of a function, held in petgraph.
//!
//! Blocks are ranges of the function's statements: a block starts at a label
//! (or the body's start) and ends after `bra`, `brx.idx`, `ret`, `exit` or
//! `trap`. A guarded branch has a taken and a fall-through edge; `brx.idx`
//! has one edge per `.branchtargets` entry; `call` and nested `{ }` scopes do
//! not end a block. Non-instruction statements (declarations, `.loc`, scope
//! braces) stay in the block where they appear, so concatenating the blocks
//! in layout order gives back the body exactly. Unreachable blocks are kept.

use crate::ir::{Function, LabelId, Operand, Stmt};
use crate::isa::{Flags, Opcode};
use petgraph::stable_graph::{NodeIndex, StableDiGraph};
use petgraph::visit::{Dfs, EdgeRef, IntoEdgeReferences, NodeIndexable};
use petgraph::Direction;
use std::fmt::Write;
use std::ops::Range;

/// A basic block: a range of statement indices of the function body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub stmts: Range<usize>,
    /// The label that starts it, if any.
    pub label: Option<LabelId>,
}

/// Why control goes from one block to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EdgeKind {
    /// A branch taken (`bra`, or one target of `brx.idx`).
    Taken,
    /// Falling through to the next block in layout order.
    FallThrough,
}

/// How a block ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Falls through or branches: it has successors.
    Continues,
    /// `ret`, `exit` or `trap` without a guard, or the end of the body.
    Leaves,
}

/// A function's control-flow graph.
#[derive(Clone, Debug)]
pub struct Cfg {
    pub graph: StableDiGraph<Block, EdgeKind>,
    /// The first block (an empty body still has one, empty, block).
    pub entry: NodeIndex,
    /// Blocks in body order.
    pub layout: Vec<NodeIndex>,
    /// For each statement, its block.
    pub block_of_stmt: Vec<NodeIndex>,
    /// Blocks that may leave the function: ending in `ret`/`exit`/`trap`
    /// (guarded or not), or with no successors. In layout order.
    pub exit_blocks: Vec<NodeIndex>,
}

/// Leaves the function (when executed).
fn leaves(opcode: Opcode) -> bool {
    opcode.flags().intersects(Flags::RET.union(Flags::EXIT)) || opcode == Opcode::TRAP
}

/// Ends a block: terminators in the manual's sense.
pub fn is_terminator(opcode: Opcode) -> bool {
    opcode.flags().intersects(Flags::BRANCH.union(Flags::RET).union(Flags::EXIT)) || opcode == Opcode::TRAP
}

/// Two CFGs are equal when they have the same blocks in the same layout
/// and the same edges (petgraph graphs have no equality of their own).
impl PartialEq for Cfg {
    fn eq(&self, o: &Cfg) -> bool {
        let blocks = |c: &Cfg| c.layout.iter().map(|n| (n.index(), c.graph[*n].clone())).collect::<Vec<_>>();
        let edges = |c: &Cfg| {
            let mut e: Vec<(usize, usize, EdgeKind)> = c.edges().map(|(a, b, k)| (a.index(), b.index(), k)).collect();
            e.sort();
            e
        };
        self.entry == o.entry && self.block_of_stmt == o.block_of_stmt && self.exit_blocks == o.exit_blocks && blocks(self) == blocks(o) && edges(self) == edges(o)
    }
}

impl Eq for Cfg {}

impl Cfg {
    /// Builds the CFG of a function (an empty graph with one empty block for a declaration).
    pub fn build(f: &Function) -> Cfg {
        let empty = Vec::new();
        let body = f.body.as_ref().unwrap_or(&empty);
        // Sized for a block per label and two edges per block, the usual
        // shape, not grown from empty (renderer -O2: `Cfg::build` 19.1 -> 18.1 M).
        let blocks = f.labels.len() + 1;
        let mut graph = StableDiGraph::with_capacity(blocks, 2 * blocks);
        let mut layout = Vec::with_capacity(blocks);
        let mut block_of_stmt = Vec::with_capacity(body.len());
        let mut label_block = vec![None; f.labels.len()];
        let mut start = 0;
        let mut label = None;
        let close = |graph: &mut StableDiGraph<Block, EdgeKind>, layout: &mut Vec<NodeIndex>, start: usize, end: usize, label: Option<LabelId>| {
            let n = graph.add_node(Block { stmts: start..end, label });
            layout.push(n);
            n
        };
        // `.branchtargets` tables by their name, found on the same walk.
        let mut tables: Vec<Option<&[LabelId]>> = vec![None; f.labels.len()];
        for (k, s) in body.iter().enumerate() {
            match s {
                Stmt::Label(l) => {
                    if k > start || label.is_some() {
                        let n = close(&mut graph, &mut layout, start, k, label);
                        block_of_stmt.resize(k, n);
                        start = k;
                    }
                    label = Some(*l);
                    label_block[l.0 as usize] = Some(layout.len());
                }
                Stmt::BranchTargets(name, targets) => tables[name.0 as usize] = Some(targets),
                Stmt::Instr(i) if is_terminator(i.opcode) => {
                    let n = close(&mut graph, &mut layout, start, k + 1, label);
                    block_of_stmt.resize(k + 1, n);
                    start = k + 1;
                    label = None;
                }
                _ => {}
            }
        }
        let k = body.len();
        if k > start || label.is_some() || layout.is_empty() {
            let n = close(&mut graph, &mut layout, start, k, label);
            block_of_stmt.resize(k, n);
        }
        // Labels map to the block they start.
        let label_node = |l: LabelId| label_block[l.0 as usize].map(|i| layout[i]);
        let mut exit_blocks = Vec::new();
        for (i, &n) in layout.iter().enumerate() {
            let next = layout.get(i + 1).copied();
            let range = graph[n].stmts.clone();
            let last = body[range].iter().rev().find_map(|s| match s {
                Stmt::Instr(ins) => Some(ins),
                _ => None,
            });
            let mut falls = true;
            if let Some(ins) = last.filter(|ins| leaves(ins.opcode)) {
                exit_blocks.push(n);
                let _ = ins;
            }
            if let Some(ins) = last.filter(|ins| is_terminator(ins.opcode)) {
                let guarded = ins.guard.is_some();
                // The targets are added as found, not gathered in a `Vec`
                // first (one allocation per branch: matrix_free -O2, 0.8 M
                // of `Cfg::build`'s 8.1 M).
                let mut add_taken = |t: NodeIndex| {
                    if !graph.edges_connecting(n, t).any(|e| *e.weight() == EdgeKind::Taken) {
                        graph.add_edge(n, t, EdgeKind::Taken);
                    }
                };
                if ins.opcode == Opcode::BRA {
                    if let Some(Operand::Label(l)) = ins.operands.first() {
                        label_node(*l).into_iter().for_each(&mut add_taken);
                    }
                } else if ins.opcode == Opcode::BRX_IDX {
                    if let Some(Operand::Label(t)) = ins.operands.get(1) {
                        tables[t.0 as usize].into_iter().flatten().filter_map(|l| label_node(*l)).for_each(&mut add_taken);
                    }
                }
                falls = guarded;
            }
            if falls {
                if let Some(m) = next {
                    graph.add_edge(n, m, EdgeKind::FallThrough);
                }
            }
        }
        for &n in &layout {
            if graph.neighbors_directed(n, Direction::Outgoing).next().is_none() && !exit_blocks.contains(&n) {
                exit_blocks.push(n);
            }
        }
        let order: Vec<usize> = {
            let mut v = vec![0; graph.node_bound()];
            for (i, n) in layout.iter().enumerate() {
                v[n.index()] = i;
            }
            v
        };
        exit_blocks.sort_by_key(|n| order[n.index()]);
        Cfg { entry: layout[0], graph, layout, block_of_stmt, exit_blocks }
    }

    /// One more than the largest node index (for vectors indexed by node).
    pub fn node_bound(&self) -> usize {
        self.graph.node_bound()
    }

    /// Every edge: source, target, kind.
    pub fn edges(&self) -> impl Iterator<Item = (NodeIndex, NodeIndex, EdgeKind)> + '_ {
        (&self.graph).edge_references().map(|e| (e.source(), e.target(), *e.weight()))
    }

    pub fn block(&self, n: NodeIndex) -> &Block {
        &self.graph[n]
    }

    pub fn successors(&self, n: NodeIndex) -> impl Iterator<Item = NodeIndex> + '_ {
        self.graph.neighbors_directed(n, Direction::Outgoing)
    }

    pub fn predecessors(&self, n: NodeIndex) -> impl Iterator<Item = NodeIndex> + '_ {
        self.graph.neighbors_directed(n, Direction::Incoming)
    }

    /// Blocks that may leave the function.
    pub fn exits(&self) -> &[NodeIndex] {
        &self.exit_blocks
    }

    /// Blocks the entry cannot reach, in layout order.
    pub fn unreachable(&self) -> Vec<NodeIndex> {
        let mut seen = vec![false; self.node_bound()];
        let mut dfs = Dfs::new(&self.graph, self.entry);
        while let Some(n) = dfs.next(&self.graph) {
            seen[n.index()] = true;
        }
        self.layout.iter().copied().filter(|n| !seen[n.index()]).collect()
    }

    /// The statement indices in layout order; equals `0..body.len()` for a CFG built from a body.
    pub fn layout_statements(&self) -> Vec<usize> {
        self.layout.iter().flat_map(|&n| self.graph[n].stmts.clone()).collect()
    }

    /// Position of each block in the layout.
    pub fn layout_index(&self) -> Vec<usize> {
        let mut v = vec![usize::MAX; self.node_bound()];
        for (i, n) in self.layout.iter().enumerate() {
            v[n.index()] = i;
        }
        v
    }
}

/// Graphviz for the CFGs of a module's functions: one subgraph per function,
/// blocks labeled with their instructions, edges labeled taken/fall-through.
pub fn module_dot(m: &crate::ir::Module, print_stmt: &dyn Fn(&Function, &Stmt) -> String) -> String {
    let mut out = String::from("digraph ptx {\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n");
    let mut fk = 0;
    for item in &m.items {
        let crate::ir::Item::Func(f) = item else { continue };
        let Some(body) = &f.body else { continue };
        let cfg = Cfg::build(f);
        let _ = writeln!(out, "  subgraph cluster_{fk} {{\n    label=\"{}\";", dot_escape(&f.name));
        let unreachable = cfg.unreachable();
        for (i, &n) in cfg.layout.iter().enumerate() {
            let b = cfg.block(n);
            let mut text = match b.label {
                Some(l) => format!("{}:\\l", dot_escape(f.label_name(l))),
                None if i == 0 => "entry:\\l".to_string(),
                None => String::new(),
            };
            for s in &body[b.stmts.clone()] {
                if matches!(s, Stmt::Instr(_)) {
                    text.push_str(&dot_escape(&print_stmt(f, s)));
                    text.push_str("\\l");
                }
            }
            let style = if unreachable.contains(&n) { ", style=dashed" } else { "" };
            let _ = writeln!(out, "    f{fk}_b{i} [label=\"{text}\"{style}];");
        }
        let index = cfg.layout_index();
        for (src, dst, kind) in cfg.edges() {
            let (a, b) = (index[src.index()], index[dst.index()]);
            let label = match kind {
                EdgeKind::Taken => "taken",
                EdgeKind::FallThrough => "fall-through",
            };
            let _ = writeln!(out, "    f{fk}_b{a} -> f{fk}_b{b} [label=\"{label}\"];");
        }
        out.push_str("  }\n");
        fk += 1;
    }
    out.push_str("}\n");
    out
}

fn dot_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                o.push('\\');
                o.push(c);
            }
            '\n' | '\t' => o.push(' '),
            _ => o.push(c),
        }
    }
    o
}
