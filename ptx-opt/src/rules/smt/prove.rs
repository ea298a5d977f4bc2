//! The proof of one rule instance: the instance's term is added to an
//! e-graph and the rule runs on it exactly as in the concrete check
//! ([`super::super::proof::run_rule`]); then every e-class gets a
//! representative expression over the instance's variables (bottom-up:
//! leaves are fresh bit-vectors of their width, constants are constants;
//! original nodes first), and for every node `n` of every class `c` z3 must
//! find no inputs where
//!
//! `¬open(c) ∧ (¬defined(n) ∨ n ≠ rep(c))`
//!
//! `open(c)` holds where some node of `c` that the e-graph held before the
//! rule ran is not exactly determined (a division by zero ...): there the
//! manual leaves the value open and a rewrite may give any value, exactly as
//! [`super::super::proof::check_assignment`] skips such classes. A
//! representative that may be undefined stands for an unconstrained value
//! there (a fresh variable), so nothing may depend on the value a solver
//! gives to `x / 0`.

use super::bv::{Bv, Ctx, Op2};
use super::encode::encode;
use super::solve::{Answer, Z3};
use crate::engine::facts::{EGraph, Facts};
use crate::engine::lang::{LeafId, Node};
use crate::rules::proof::run_rule;
use crate::rules::{Rule, Term};
use egg::Id;
use ptx_ir::eval::Dialect;
use rustc_hash::{FxHashMap, FxHashSet};

static DUMPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// What became of one instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Every node of every class equals its class for all inputs.
    Proven,
    /// Some node has no encoding (the reasons): only the concrete check covers it.
    Concrete(Vec<String>),
    /// z3 gave up on these queries (timeouts).
    Unknown(Vec<String>),
    /// A counterexample: the class, the node, and the inputs.
    Refuted(String),
    /// The rule did not fire on its instance.
    NotFired,
    /// The e-graph or z3 failed (a contradiction, a printing error).
    Error(String),
}

/// Proves `rule` on `term` (see the module documentation).
pub fn prove_instance(z3: &mut Z3, rule: &'static Rule, term: &Term) -> Status {
    let mut eg = EGraph::new(Facts::new(Dialect::MODERN));
    let mut leaves = Vec::new();
    term.add(&mut eg, &mut leaves);
    eg.rebuild();
    let (eg, original) = match run_rule(rule, eg) {
        Ok(Some(x)) => x,
        Ok(None) => return Status::NotFired,
        Err(e) => return Status::Error(e),
    };
    // The name of each leaf class in reports: the term's variable.
    let mut names: FxHashMap<Id, String> = FxHashMap::default();
    for (k, l) in leaves.iter().enumerate() {
        if let Some(id) = l {
            names.insert(eg.find(*id), format!("x{k}"));
        }
    }
    let mut cx = Ctx::new();
    let mut var_names: Vec<String> = Vec::new();
    let mut leaf_vars: FxHashMap<LeafId, Bv> = FxHashMap::default();
    let reps = match representatives(&eg, &original, &mut cx, &names, &mut var_names, &mut leaf_vars) {
        Ok(r) => r,
        Err(why) => return Status::Concrete(why),
    };
    // What the analysis knows of each input (a bound such as `%tid.x <
    // 1024`) is assumed: rules whose side conditions are such facts are
    // proven for every input that satisfies them.
    let mut assumed = cx.t();
    for (l, v) in &leaf_vars {
        let k = eg.analysis.leaves[l.0 as usize];
        let (lo, hi, zero, one, z) = (cx.c(k.width, k.lo), cx.c(k.width, k.hi), cx.c(k.width, k.zero), cx.c(k.width, k.one), cx.c(k.width, 0));
        let above = cx.bin(Op2::Ule, lo, *v);
        let below = cx.bin(Op2::Ule, *v, hi);
        let vz = cx.and(*v, zero);
        let zeros = cx.bin(Op2::Eq, vz, z);
        let vo = cx.and(*v, one);
        let ones = cx.bin(Op2::Eq, vo, one);
        for f in [above, below, zeros, ones] {
            assumed = cx.and(assumed, f);
        }
    }
    // Each node's encoding over the representatives of its children.
    let dialect = &eg.analysis.dialect;
    let mut queries: Vec<(Bv, String)> = Vec::new();
    let mut reasons: Vec<String> = Vec::new();
    for class in eg.classes() {
        let rep = reps[&class.id];
        let mut open = cx.f();
        let mut encoded: Vec<(&Node, Bv, Bv)> = Vec::new();
        for n in &class.nodes {
            match node_enc(&eg, n, &reps, &leaf_vars, &mut cx, dialect) {
                Ok((v, d)) => {
                    if original.contains(n) {
                        let nd = cx.not(d);
                        open = cx.or(open, nd);
                    }
                    encoded.push((n, v, d));
                }
                Err(e) => reasons.push(e),
            }
        }
        let closed = cx.not(open);
        for (n, v, d) in encoded {
            let nd = cx.not(d);
            let differs = cx.ne(v, rep);
            let wrong = cx.or(nd, differs);
            let bad = cx.and(closed, wrong);
            let bad = cx.and(assumed, bad);
            if cx.as_const(bad) == Some(0) {
                continue;
            }
            queries.push((bad, format!("class {} node {}", class.id, describe(&eg, n))));
        }
    }
    if !reasons.is_empty() {
        reasons.sort();
        reasons.dedup();
        return Status::Concrete(reasons);
    }
    if queries.is_empty() {
        return Status::Proven;
    }
    let roots: Vec<Bv> = queries.iter().map(|q| q.0).collect();
    let run = |z3: &mut Z3| -> Result<Status, String> {
        z3.send(&format!("(push)\n{}", cx.smt_defs(&roots)))?;
        if let Ok(d) = std::env::var("SMT_DUMP") {
            let q = queries.iter().map(|(b, _)| format!("(push)\n(assert (= {} #b1))\n(check-sat)\n(pop)\n", cx.smt_ref(*b))).collect::<String>();
            let _ = std::fs::write(format!("{d}/{}-{}.smt2", rule.name, DUMPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)), format!("(set-logic QF_BV)\n{}{q}", cx.smt_defs(&roots)));
        }
        let mut unknown = Vec::new();
        let mut refuted = None;
        for (bad, what) in &queries {
            z3.send(&format!("(push)\n(assert (= {} #b1))\n", cx.smt_ref(*bad)))?;
            match z3.check()? {
                Answer::Unsat => {}
                Answer::Unknown => unknown.push(what.clone()),
                Answer::Sat => {
                    let terms: Vec<String> = (0..var_names.len()).map(|k| format!("v{k}")).collect();
                    let vals = z3.values(&terms)?;
                    let inputs: Vec<String> = var_names.iter().zip(vals).map(|(n, v)| format!("{n} = {v:#x}")).collect();
                    refuted = Some(format!("{what}: differs at {}", inputs.join(", ")));
                }
            }
            z3.send("(pop)\n")?;
            if refuted.is_some() {
                break;
            }
        }
        z3.send("(pop)\n")?;
        Ok(match (refuted, unknown.is_empty()) {
            (Some(r), _) => Status::Refuted(r),
            (None, true) => Status::Proven,
            (None, false) => Status::Unknown(unknown),
        })
    };
    run(z3).unwrap_or_else(Status::Error)
}

fn describe(eg: &EGraph, n: &Node) -> String {
    match n {
        Node::Op(s, kids) => {
            let s = eg.analysis.shapes.get(*s);
            let head = format!("{}{}", s.ins.opcode.name(), s.ins.modifiers().map(|(_, m)| m.text()).collect::<String>());
            format!("{head} {kids:?}")
        }
        other => format!("{other:?}"),
    }
}

/// A node's value and definedness over the representatives of its children.
fn node_enc(eg: &EGraph, n: &Node, reps: &FxHashMap<Id, Bv>, leaf_vars: &FxHashMap<LeafId, Bv>, cx: &mut Ctx, dialect: &Dialect) -> Result<(Bv, Bv), String> {
    match n {
        Node::Const { width, bits } => Ok((cx.c(*width, *bits), cx.t())),
        Node::Leaf(l) => Ok((*leaf_vars.get(l).ok_or("a leaf without a variable")?, cx.t())),
        Node::Op(s, kids) => {
            let ks: Vec<Bv> = kids.iter().map(|k| reps.get(&eg.find(*k)).copied().ok_or("a child without a representative")).collect::<Result<_, _>>()?;
            let e = encode(cx, eg.analysis.shapes.get(*s), dialect, &ks)?;
            Ok((e.value, e.defined))
        }
    }
}

/// One representative expression per class, or why some class has none.
fn representatives(
    eg: &EGraph,
    original: &FxHashSet<Node>,
    cx: &mut Ctx,
    names: &FxHashMap<Id, String>,
    var_names: &mut Vec<String>,
    leaf_vars: &mut FxHashMap<LeafId, Bv>,
) -> Result<FxHashMap<Id, Bv>, Vec<String>> {
    let mut reps: FxHashMap<Id, Bv> = FxHashMap::default();
    let dialect = &eg.analysis.dialect;
    // Leaves first: every input is a variable (each leaf its own, so that
    // two inputs merged into one class differ).
    for class in eg.classes() {
        for n in &class.nodes {
            if let Node::Leaf(l) = n {
                let (v, _) = cx.var(eg.analysis.leaves[l.0 as usize].width);
                var_names.push(names.get(&class.id).cloned().unwrap_or_else(|| format!("leaf {}", l.0)));
                leaf_vars.insert(*l, v);
                reps.entry(class.id).or_insert(v);
            }
        }
    }
    let mut failures: Vec<String> = Vec::new();
    // Original nodes first (the claim is about them), then any.
    for originals_only in [true, false] {
        let mut changed = true;
        while changed {
            changed = false;
            for class in eg.classes() {
                if reps.contains_key(&class.id) {
                    continue;
                }
                for n in &class.nodes {
                    if originals_only && !original.contains(n) {
                        continue;
                    }
                    if n.children().iter().any(|k| !reps.contains_key(&eg.find(*k))) {
                        continue;
                    }
                    match node_enc(eg, n, &reps, leaf_vars, cx, dialect) {
                        Ok((v, d)) => {
                            // Where it is undefined, any value.
                            let rep = if cx.as_const(d) == Some(1) {
                                v
                            } else {
                                let (u, _) = cx.var(cx.width(v));
                                var_names.push(format!("the open value of class {}", class.id));
                                cx.ite(d, v, u)
                            };
                            reps.insert(class.id, rep);
                            changed = true;
                            break;
                        }
                        Err(e) => failures.push(e),
                    }
                }
            }
        }
    }
    let missing: Vec<Id> = eg.classes().map(|c| c.id).filter(|c| !reps.contains_key(c)).collect();
    if !missing.is_empty() {
        failures.sort();
        failures.dedup();
        if failures.is_empty() {
            failures.push(format!("classes {missing:?} have no node over the others"));
        }
        return Err(failures);
    }
    Ok(reps)
}

use egg::Language as _;
