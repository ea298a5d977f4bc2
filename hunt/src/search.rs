//! The search for a cheaper equivalent of one pattern, in the manner of a
//! superoptimizer: the pattern is *fingerprinted* (its values on a few dozen
//! random and edge inputs), candidate programs are enumerated in levels
//! (an input or a constant; one instruction over inputs and constants; two
//! instructions, the inner one's result feeding the outer one), and a
//! candidate whose values agree with the fingerprint is *verified* on many
//! more inputs (every assignment when the inputs have 16 bits or fewer).
//!
//! Only candidates strictly cheaper than the pattern are considered (the
//! bound shrinks as cheaper ones are found), so the cheapest verified
//! candidate comes out. Level-one values are kept once per fingerprint
//! (observational equivalence: the cheapest program per value vector) as
//! the inner instructions of level two; a level-two candidate must read
//! every input the pattern depends on.
//!
//! Where the pattern's value is not exactly determined (a division by
//! zero, an approximate float), any candidate value is accepted, as the
//! engine's rule proofs accept it.

use crate::dag::{Dag, Node};
use crate::inputs::{exhaustive, InputGen};
use crate::ops::Op;
use ptx_ir::eval::{bits_mask, Dialect};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

/// Constant leaves per width, at most (the pattern's own first).
const MAX_CONSTANTS: usize = 24;

/// How hard to look.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Inputs in the fingerprint.
    pub fingerprint: usize,
    /// Random inputs a fingerprint match is verified on.
    pub verify: usize,
    /// Exhaustive verification up to this many input bits.
    pub exhaustive_bits: u32,
    /// Enumerate two-instruction candidates.
    pub two_insns: bool,
    /// Level-two candidates tried per pattern, at most.
    pub budget: u64,
}

impl Default for Config {
    fn default() -> Config {
        Config { fingerprint: 16, verify: 100_000, exhaustive_bits: 16, two_insns: true, budget: 200_000 }
    }
}

/// A candidate program: a leaf (an input of the pattern when `input` is
/// set, else the constant `bits`) or an instruction over candidates.
#[derive(Clone, Debug)]
pub enum Expr {
    Leaf { width: u8, input: Option<u8>, bits: u128 },
    Op { op: usize, kids: Vec<Expr> },
}

/// A verified cheaper equivalent.
#[derive(Clone, Debug)]
pub struct Found {
    pub cost_before: u32,
    pub cost_after: u32,
    /// The candidate as a DAG over the pattern's inputs.
    pub candidate: Dag,
}

/// The enumerator for one target.
pub struct Searcher<'a> {
    pub ops: &'a [Op],
    pub table: &'a ptx_opt::cost::CostModel,
    pub dialect: Dialect,
    pub config: Config,
}

/// A value of the enumeration: its fingerprint, width, cost, program and
/// the inputs it reads (bit k: input k).
struct Val {
    vec: Vec<u128>,
    width: u8,
    cost: u32,
    expr: Expr,
    support: u8,
}

impl Searcher<'_> {
    /// The cheapest verified equivalent of `dag` strictly cheaper than it, if any.
    pub fn search(&self, dag: &Dag, seed: u64) -> Option<Found> {
        let cost_before = dag.cost(self.table);
        if cost_before == 0 {
            return None;
        }
        let width = dag.width();
        let mut gen = InputGen::new(&dag.inputs, seed);
        let tests: Vec<Vec<u128>> = match exhaustive(&dag.inputs, 6) {
            Some(all) => all,
            None => {
                let mut t: Vec<Vec<u128>> = (0..self.config.fingerprint).map(|_| gen.assignment()).collect();
                let base = gen.assignment();
                let mut rel = self.relational(dag, &base);
                // A spread of them: every third, at most half the fingerprint again.
                rel = rel.into_iter().step_by(3).take(self.config.fingerprint / 2).collect();
                t.extend(rel);
                t
            }
        };
        let target: Vec<Option<u128>> = tests.iter().map(|t| dag.eval(&self.dialect, t)).collect();
        if target.iter().filter(|t| t.is_some()).count() < tests.len().min(4) {
            return None;
        }
        let support = self.support(dag, &tests, &mut gen);
        let leaves = self.leaves(dag, &tests);
        let mut best: Option<(u32, Expr)> = None;
        let bound = |best: &Option<(u32, Expr)>| best.as_ref().map_or(cost_before, |b| b.0);

        // Level 0: an input or a constant.
        for l in leaves.iter().filter(|l| l.width == width) {
            if agrees(&l.vec, &target) && self.verify(dag, &l.expr, seed) {
                best = Some((0, l.expr.clone()));
                break;
            }
        }
        // Level 1: one instruction over leaves.
        let mut level1: FxHashMap<(u8, Vec<u128>), Val> = FxHashMap::default();
        if best.is_none() {
            for (oi, op) in self.ops.iter().enumerate() {
                if op.min_cost() >= bound(&best) {
                    continue;
                }
                let lists: Vec<Vec<&Val>> = op.widths.iter().map(|&w| leaves.iter().filter(|l| l.width == w).collect()).collect();
                for_each_combo(&lists, |kids| {
                    if kids.iter().all(|k| k.support == 0) || (op.commutative && kid_order(kids[0]) > kid_order(kids[1])) {
                        return;
                    }
                    let supp = kids.iter().fold(0, |s, k| s | k.support);
                    // Ternaries are only tried as the top instruction.
                    if op.arity() > 2 && supp & support != support {
                        return;
                    }
                    let cost = self.op_cost(op, kids.iter().map(|k| &k.expr));
                    if cost >= bound(&best) {
                        return;
                    }
                    // Kept for level two only if a one-instruction outer
                    // can still make a cheaper candidate of it.
                    let store = op.arity() <= 2 && self.config.two_insns && (cost == 0 || cost + 1 < bound(&best));
                    if !store {
                        if op.shape.width == width && supp & support == support && self.matches(op, kids.iter().map(|k| &k.vec[..]), &tests, &target) {
                            let e = Expr::Op { op: oi, kids: kids.iter().map(|k| k.expr.clone()).collect() };
                            if self.verify(dag, &e, seed) {
                                best = Some((cost, e));
                            }
                        }
                        return;
                    }
                    let Some(vec) = self.eval_vec(op, kids.iter().map(|k| &k.vec[..]), tests.len()) else { return };
                    let e = Expr::Op { op: oi, kids: kids.iter().map(|k| k.expr.clone()).collect() };
                    if op.shape.width == width && agrees(&vec, &target) && self.verify(dag, &e, seed) {
                        best = Some((cost, e.clone()));
                    }
                    let key = (op.shape.width, vec);
                    if level1.get(&key).is_none_or(|v| v.cost > cost) {
                        let vec = key.1.clone();
                        level1.insert(key, Val { vec, width: op.shape.width, cost, expr: e, support: supp });
                    }
                });
            }
        }
        // Level 2: an instruction over one level-one value and leaves.
        if self.config.two_insns && bound(&best) > 0 {
            let inner: Vec<&Val> = level1.values().collect();
            let mut tried = 0u64;
            'ops: for (oi, op) in self.ops.iter().enumerate() {
                if op.shape.width != width || op.min_cost() >= bound(&best) {
                    continue;
                }
                for pos in 0..op.arity() {
                    // A commutative instruction's inner value goes first only.
                    if op.commutative && pos == 1 {
                        continue;
                    }
                    for v in inner.iter().filter(|v| v.width == op.widths[pos]) {
                        if v.cost + op.min_cost() >= bound(&best) {
                            continue;
                        }
                        let lists: Vec<Vec<&Val>> = op
                            .widths
                            .iter()
                            .enumerate()
                            .map(|(k, &w)| if k == pos { vec![*v] } else { leaves.iter().filter(|l| l.width == w).collect() })
                            .collect();
                        for_each_combo(&lists, |kids| {
                            let supp = kids.iter().fold(0, |s, k| s | k.support);
                            if supp & support != support {
                                return;
                            }
                            let cost = v.cost + self.op_cost(op, kids.iter().map(|k| &k.expr));
                            if cost >= bound(&best) {
                                return;
                            }
                            tried += 1;
                            if self.matches(op, kids.iter().map(|k| &k.vec[..]), &tests, &target) {
                                let e = Expr::Op { op: oi, kids: kids.iter().map(|k| k.expr.clone()).collect() };
                                if self.verify(dag, &e, seed) {
                                    best = Some((cost, e));
                                }
                            }
                        });
                        if tried > self.config.budget {
                            break 'ops;
                        }
                    }
                }
            }
        }
        let (cost_after, expr) = best?;
        Some(Found { cost_before, cost_after, candidate: self.to_dag(&expr, &dag.inputs) })
    }

    /// The inputs the pattern's value depends on (bit k: input k), by
    /// changing one input at a time.
    fn support(&self, dag: &Dag, tests: &[Vec<u128>], gen: &mut InputGen) -> u8 {
        let mut s = 0u8;
        for k in 0..dag.inputs.len() {
            'tries: for t in tests.iter().take(12) {
                let base = dag.eval(&self.dialect, t);
                for _ in 0..4 {
                    let u = gen.perturb(t, k);
                    let other = dag.eval(&self.dialect, &u);
                    if base.is_some() && other.is_some() && base != other {
                        s |= 1 << k;
                        break 'tries;
                    }
                }
            }
        }
        s
    }

    /// The leaves: the pattern's inputs, then constants per width (the
    /// pattern's constants and what simple arithmetic makes of them, and
    /// the usual small ones).
    fn leaves(&self, dag: &Dag, tests: &[Vec<u128>]) -> Vec<Val> {
        let mut widths: Vec<u8> = dag.inputs.clone();
        widths.extend([dag.width(), 1, 32]);
        widths.sort();
        widths.dedup();
        let mut out: Vec<Val> = Vec::new();
        for (k, &w) in dag.inputs.iter().enumerate() {
            let vec = tests.iter().map(|t| t[k]).collect();
            out.push(Val { vec, width: w, cost: 0, expr: Expr::Leaf { width: w, input: Some(k as u8), bits: 0 }, support: 1 << k });
        }
        let consts: Vec<(u128, u8)> = dag
            .nodes
            .iter()
            .filter_map(|n| match n {
                Node::Const { width, bits } => Some((*bits, *width)),
                _ => None,
            })
            .collect();
        for &w in &widths {
            let m = bits_mask(w as u32);
            let mine: Vec<u128> = consts.iter().filter(|(b, cw)| *cw == w || *b <= m).map(|(b, _)| b & m).collect();
            let mut cs: Vec<u128> = vec![0, 1];
            if w > 1 {
                cs.extend([m, 2]);
            }
            cs.extend(&mine);
            if w > 1 {
                for &c in &mine {
                    cs.extend([!c & m, c.wrapping_neg() & m, c.wrapping_add(1) & m, c.wrapping_sub(1) & m]);
                    if c < w as u128 {
                        cs.push(w as u128 - c);
                    }
                }
                for (i, &a) in mine.iter().enumerate() {
                    for &b in &mine[i + 1..] {
                        cs.extend([a | b, a & b, a ^ b, a.wrapping_add(b) & m, a.wrapping_sub(b) & m, b.wrapping_sub(a) & m]);
                        if b < w as u128 {
                            cs.push((a << b) & m);
                        }
                    }
                }
                cs.extend([w as u128 - 1, w as u128, 1 << (w - 1)]);
            }
            let mut seen = rustc_hash::FxHashSet::default();
            for c in cs {
                if seen.insert(c) && seen.len() <= MAX_CONSTANTS {
                    out.push(Val { vec: vec![c; tests.len()], width: w, cost: 0, expr: Expr::Leaf { width: w, input: None, bits: c }, support: 0 });
                }
            }
        }
        out
    }

    fn op_cost<'e>(&self, op: &Op, kids: impl Iterator<Item = &'e Expr>) -> u32 {
        let consts: SmallVec<[Option<u128>; 3]> = kids
            .map(|k| match k {
                Expr::Leaf { input: None, bits, .. } => Some(*bits),
                _ => None,
            })
            .collect();
        let c = ptx_opt::engine::cost::sass_cost(self.table, &op.shape.ins, &consts);
        // The table measures a `cvt` alone, and finds many free (ptxas keeps
        // a narrow value in a full register and extends or truncates it
        // where it is used); two in a row are a real AND or PRMT. A
        // candidate's integer `cvt` is priced at one instruction at least,
        // so that no finding rests on that artefact.
        if op.shape.ins.opcode == ptx_ir::isa::Opcode::CVT {
            c.max(1)
        } else {
            c
        }
    }

    /// `op` over the kids' fingerprints, or `None` if it is not exactly
    /// determined on one of them.
    fn eval_vec<'v>(&self, op: &Op, kids: impl Iterator<Item = &'v [u128]> + Clone, n: usize) -> Option<Vec<u128>> {
        let kids: SmallVec<[&[u128]; 3]> = kids.collect();
        (0..n)
            .map(|i| {
                let args: SmallVec<[(u128, u8); 3]> = kids.iter().zip(&op.widths).map(|(v, &w)| (v[i], w)).collect();
                op.shape.eval(&self.dialect, &args)
            })
            .collect()
    }

    /// Does `op` over the kids agree with the target on every fingerprint input
    /// (stopping at the first disagreement)?
    fn matches<'v>(&self, op: &Op, kids: impl Iterator<Item = &'v [u128]>, tests: &[Vec<u128>], target: &[Option<u128>]) -> bool {
        let kids: SmallVec<[&[u128]; 3]> = kids.collect();
        (0..tests.len()).all(|i| {
            let Some(t) = target[i] else { return true };
            let args: SmallVec<[(u128, u8); 3]> = kids.iter().zip(&op.widths).map(|(v, &w)| (v[i], w)).collect();
            op.shape.eval(&self.dialect, &args) == Some(t)
        })
    }

    fn eval_expr(&self, e: &Expr, inputs: &[u128]) -> Option<u128> {
        match e {
            Expr::Leaf { input: Some(k), .. } => Some(inputs[*k as usize]),
            Expr::Leaf { bits, .. } => Some(*bits),
            Expr::Op { op, kids } => {
                let op = &self.ops[*op];
                let mut args: SmallVec<[(u128, u8); 3]> = SmallVec::new();
                for (k, &w) in kids.iter().zip(&op.widths) {
                    args.push((self.eval_expr(k, inputs)?, w));
                }
                op.shape.eval(&self.dialect, &args)
            }
        }
    }

    /// Does the candidate agree with the pattern wherever the pattern is
    /// determined: on every assignment of small inputs, or on a first 1,000
    /// and then `config.verify` random and edge inputs?
    pub fn verify(&self, dag: &Dag, e: &Expr, seed: u64) -> bool {
        let same = |t: &[u128]| match dag.eval(&self.dialect, t) {
            None => true,
            Some(p) => self.eval_expr(e, t) == Some(p),
        };
        if let Some(all) = exhaustive(&dag.inputs, self.config.exhaustive_bits) {
            return all.iter().all(|t| same(t));
        }
        let mut gen = InputGen::new(&dag.inputs, seed ^ 0x005e_ed0f_7e57);
        (0..1000.min(self.config.verify)).all(|_| same(&gen.assignment()))
            && (0..200).all(|_| self.relational(dag, &gen.assignment()).iter().all(|t| same(t)))
            && (1000..self.config.verify).all(|_| same(&gen.assignment()))
    }

    /// Inputs derived from `base` by setting one input to a value the DAG
    /// holds (a node's value or a constant, and one either side of it) at
    /// `base`: random bits almost never make `rcp(x) == y` or `x + 1 == 3`
    /// true, these do, so a claim that such a compare is constant fails.
    fn relational(&self, dag: &Dag, base: &[u128]) -> Vec<Vec<u128>> {
        let vals = dag.values(&self.dialect, base);
        let mut out = Vec::new();
        for (k, &w) in dag.inputs.iter().enumerate() {
            let m = bits_mask(w as u32);
            for (n, v) in dag.nodes.iter().zip(&vals) {
                let Some(v) = *v else { continue };
                if n.width() != w || matches!(n, Node::Input { index, .. } if *index as usize == k) {
                    continue;
                }
                for d in [0u128, 1, m] {
                    let mut u = base.to_vec();
                    u[k] = v.wrapping_add(d) & m;
                    out.push(u);
                }
            }
        }
        out
    }

    /// The candidate as a DAG over the pattern's inputs (numbered as in the pattern).
    fn to_dag(&self, e: &Expr, inputs: &[u8]) -> Dag {
        fn go(s: &Searcher, e: &Expr, nodes: &mut Vec<Node>) -> usize {
            match e {
                Expr::Leaf { width, input: Some(k), .. } => nodes.push(Node::Input { index: *k, width: *width }),
                Expr::Leaf { width, bits, .. } => nodes.push(Node::Const { width: *width, bits: *bits }),
                Expr::Op { op, kids } => {
                    let kids = kids.iter().map(|k| go(s, k, nodes)).collect();
                    nodes.push(Node::Op { shape: s.ops[*op].shape.clone(), kids });
                }
            }
            nodes.len() - 1
        }
        let mut nodes = Vec::new();
        go(self, e, &mut nodes);
        Dag { nodes, inputs: inputs.to_vec() }
    }
}

/// An order on kids for commutative instructions: inputs before constants.
fn kid_order(v: &Val) -> i64 {
    match &v.expr {
        Expr::Leaf { input: Some(k), .. } => *k as i64,
        Expr::Leaf { bits, .. } => 16 + (*bits as u64 as i64 & 0xffff),
        Expr::Op { .. } => -1,
    }
}

fn agrees(vec: &[u128], target: &[Option<u128>]) -> bool {
    vec.iter().zip(target).all(|(v, t)| t.is_none_or(|t| t == *v))
}

/// Calls `f` with every choice of one element per list.
fn for_each_combo<'a, T>(lists: &[Vec<&'a T>], mut f: impl FnMut(&[&'a T])) {
    if lists.iter().any(|l| l.is_empty()) {
        return;
    }
    let mut ix = vec![0usize; lists.len()];
    let mut cur: Vec<&T> = lists.iter().map(|l| l[0]).collect();
    loop {
        f(&cur);
        let mut k = lists.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            ix[k] += 1;
            if ix[k] < lists[k].len() {
                cur[k] = lists[k][ix[k]];
                break;
            }
            ix[k] = 0;
            cur[k] = lists[k][0];
        }
    }
}
