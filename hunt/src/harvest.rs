//! Harvesting DAGs from a function: for every pure instruction (a *value*
//! in the engine's sense, [`value_shape`]), the DAG rooted at it, grown
//! breadth-first through the operands whose one reaching definition (the
//! [`ValueView`]'s version) is itself a pure instruction, while the DAG has
//! at most `max_insns` instructions and `max_inputs` distinct inputs. Every
//! stage of the growth is kept (sizes 1, 2, ... up to the limit), so that a
//! missed rewrite is found at the smallest DAG that shows it.
//!
//! An input is a register version that is not expanded (a φ, the entry
//! value, a skeleton instruction's result, a value with readers outside the
//! DAG, or a definition left out by the limits); constants are kept. Only
//! values read by the DAG alone are expanded, so the DAG's cost is what a
//! rewrite of it would save. Instructions reading special registers or
//! symbols (the engine's leaves, read only by `mov`) are never expanded, and
//! a `mov` copy of a register is never a root.

use crate::dag::{printable, Dag, Node};
use ptx_ir::analysis::DomTree;
use ptx_ir::cfg::Cfg;
use ptx_ir::ir::{Function, RegId, Stmt};
use ptx_opt::engine::build::{value_regs, value_shape, SourceOf};
use ptx_opt::engine::lang::{type_width, Shape};
use ptx_opt::values::{ValueView, Version, VersionDef};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// How large a harvested DAG may grow.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_insns: usize,
    pub max_inputs: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_insns: 6, max_inputs: 3 }
    }
}

/// A source of a harvested instruction.
#[derive(Clone, Copy)]
enum Src {
    Reg(RegId),
    Const(u128, u8),
}

struct Value {
    shape: Shape,
    srcs: Vec<Src>,
}

fn value_of(f: &Function, ins: &ptx_ir::ir::Instruction) -> Option<Value> {
    let (tmpl, width, sources) = value_shape(f, ins)?;
    let regs = value_regs(f, ins)?;
    let mut srcs = Vec::with_capacity(sources.len());
    for (s, r) in sources.iter().zip(&regs) {
        srcs.push(match (s, r) {
            (SourceOf::Reg(_), Some(r)) => Src::Reg(*r),
            (SourceOf::Imm(b, w), None) => Src::Const(*b, *w),
            _ => return None,
        });
    }
    let shape = Shape::new(tmpl, width);
    printable(&shape).then_some(Value { shape, srcs })
}

/// The DAGs of every root of `f`: per root, its growth stages, smallest first.
pub fn harvest_function(f: &Function, limits: &Limits) -> Vec<Vec<Dag>> {
    let Some(body) = f.body.as_deref() else { return Vec::new() };
    let cfg = Cfg::build(f);
    let dom = DomTree::dominators(&cfg);
    let view = ValueView::build(f, &cfg, &dom);
    let values: Vec<Option<Value>> = body
        .iter()
        .enumerate()
        .map(|(k, s)| match s {
            Stmt::Instr(ins) if view.reachable(k) => value_of(f, ins),
            _ => None,
        })
        .collect();
    let mut readers: FxHashMap<usize, Vec<usize>> = FxHashMap::default();
    for k in 0..body.len() {
        for (_, v) in view.reads(k) {
            if let VersionDef::Def(j) = v.def {
                let r = readers.entry(j).or_default();
                if r.last() != Some(&k) {
                    r.push(k);
                }
            }
        }
    }
    let h = Harvester { f, view: &view, values: &values, readers: &readers };
    let mut out = Vec::new();
    for (k, v) in values.iter().enumerate() {
        if v.is_some() {
            let stages = h.grow(k, limits);
            if !stages.is_empty() {
                out.push(stages);
            }
        }
    }
    out
}

struct Harvester<'a> {
    f: &'a Function,
    view: &'a ValueView,
    values: &'a [Option<Value>],
    /// The statements that read the value each statement writes.
    readers: &'a FxHashMap<usize, Vec<usize>>,
}

impl Harvester<'_> {
    /// The version statement `k` reads from `r`.
    fn read(&self, k: usize, r: RegId) -> Version {
        self.view.read(k, r).unwrap_or(Version { reg: r, def: VersionDef::Entry })
    }

    /// Is the value `j` writes read only by the statements `within` (and
    /// by one at least, and never through a φ)? Only then does replacing
    /// the DAG remove `j`: a value with other readers stays an input, so that
    /// a DAG's cost is what a rewrite of it saves.
    fn only_read_by(&self, j: usize, within: &[usize]) -> bool {
        let Some(rs) = self.readers.get(&j) else { return false };
        let through_phi = self.view.reads(rs[0]).iter().any(|(r, v)| v.def == VersionDef::Def(j) && self.view.reg(*r).read_at_phi);
        !through_phi && rs.iter().all(|k| within.contains(k))
    }

    /// The value statements `k` reads.
    fn feeding(&self, k: usize) -> Vec<usize> {
        let v = self.values[k].as_ref().expect("a value statement");
        v.srcs
            .iter()
            .filter_map(|s| match s {
                Src::Reg(r) => match self.read(k, *r).def {
                    VersionDef::Def(j) if self.values.get(j).is_some_and(|x| x.is_some()) => Some(j),
                    _ => None,
                },
                Src::Const(..) => None,
            })
            .collect()
    }

    fn grow(&self, root: usize, limits: &Limits) -> Vec<Dag> {
        let mut stages = Vec::new();
        // A copy of a register (`mov` of one register) is a root the output
        // needs (a register that must be written, the emitter's re-reads):
        // it is an identity, not a missed rewrite.
        let v = self.values[root].as_ref().expect("a value statement");
        if v.shape.ins.opcode == ptx_ir::isa::Opcode::MOV && matches!(v.srcs[..], [Src::Reg(_)]) {
            return stages;
        }
        let mut expanded = vec![root];
        match self.dag(root, &expanded) {
            Some(d) if d.inputs.len() <= limits.max_inputs => stages.push(d),
            _ => return stages,
        }
        let mut queue: VecDeque<usize> = self.feeding(root).into();
        while let Some(j) = queue.pop_front() {
            if expanded.len() >= limits.max_insns {
                break;
            }
            if expanded.contains(&j) || !self.only_read_by(j, &expanded) {
                continue;
            }
            expanded.push(j);
            match self.dag(root, &expanded) {
                Some(d) if d.inputs.len() <= limits.max_inputs => {
                    stages.push(d);
                    queue.extend(self.feeding(j));
                }
                _ => {
                    expanded.pop();
                }
            }
        }
        stages
    }

    /// The DAG of `root` with the statements `expanded` as instructions:
    /// nodes in post-order from the root (operands in order), inputs
    /// numbered in first-use order.
    fn dag(&self, root: usize, expanded: &[usize]) -> Option<Dag> {
        let mut b = Builder { nodes: Vec::new(), inputs: Vec::new(), of_stmt: FxHashMap::default(), of_version: FxHashMap::default() };
        self.visit(root, expanded, &mut b)?;
        Some(Dag { nodes: b.nodes, inputs: b.inputs })
    }

    fn visit(&self, k: usize, expanded: &[usize], b: &mut Builder) -> Option<usize> {
        if let Some(&n) = b.of_stmt.get(&k) {
            return Some(n);
        }
        let v = self.values[k].as_ref()?;
        let mut kids = Vec::with_capacity(v.srcs.len());
        for s in &v.srcs {
            let n = match *s {
                Src::Const(bits, width) => {
                    b.nodes.push(Node::Const { width, bits });
                    b.nodes.len() - 1
                }
                Src::Reg(r) => {
                    let ver = self.read(k, r);
                    match ver.def {
                        VersionDef::Def(j) if expanded.contains(&j) => self.visit(j, expanded, b)?,
                        _ => match b.of_version.get(&ver) {
                            Some(&n) => n,
                            None => {
                                let width = type_width(self.f.regs.get(r.0 as usize)?.ty);
                                let index = u8::try_from(b.inputs.len()).ok()?;
                                b.inputs.push(width);
                                b.nodes.push(Node::Input { index, width });
                                b.of_version.insert(ver, b.nodes.len() - 1);
                                b.nodes.len() - 1
                            }
                        },
                    }
                }
            };
            kids.push(n);
        }
        b.nodes.push(Node::Op { shape: v.shape.clone(), kids });
        b.of_stmt.insert(k, b.nodes.len() - 1);
        Some(b.nodes.len() - 1)
    }
}

struct Builder {
    nodes: Vec<Node>,
    inputs: Vec<u8>,
    of_stmt: FxHashMap<usize, usize>,
    of_version: FxHashMap<Version, usize>,
}
