//! Every function of every corpus file gets a CFG that agrees with its
//! terminators, holds each statement in exactly one block, and gives the body
//! back in layout order; every analysis runs on it, and both liveness
//! solvers find the same sets.

use petgraph::stable_graph::NodeIndex;
use ptx_ir::analysis::{BlockSets, FunctionAnalyses, Liveness, LivenessSolver};
use ptx_ir::cfg::{Cfg, EdgeKind};
use ptx_ir::ir::{Function, Item, Operand, Stmt};
use ptx_ir::isa::Opcode;
use ptx_tests::corpus::{manifest, own_corpus_dir, ptx_files, shared_corpus_dir};
use std::collections::BTreeSet;

fn files() -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = ptx_files(&own_corpus_dir()).into_iter().map(|p| (p.display().to_string(), std::fs::read(&p).unwrap())).collect();
    if let Some(dir) = shared_corpus_dir() {
        for e in manifest(&dir) {
            v.push((e.file.clone(), std::fs::read(dir.join(&e.file)).unwrap()));
        }
    }
    v
}

/// The successors a block must have, worked out from its statements alone.
fn expected_successors(f: &Function, cfg: &Cfg, i: usize) -> BTreeSet<(NodeIndex, EdgeKind)> {
    let body = f.body.as_ref().unwrap();
    let n = cfg.layout[i];
    let next = cfg.layout.get(i + 1).copied();
    let block_of_label = |l| cfg.layout.iter().copied().find(|b| cfg.block(*b).label == Some(l));
    let mut out = BTreeSet::new();
    let last = body[cfg.block(n).stmts.clone()].iter().rev().find_map(|s| if let Stmt::Instr(i) = s { Some(i) } else { None });
    let falls = match last {
        Some(ins) if ins.opcode == Opcode::BRA => {
            if let Some(Operand::Label(l)) = ins.operands.first() {
                out.insert((block_of_label(*l).unwrap(), EdgeKind::Taken));
            }
            ins.guard.is_some()
        }
        Some(ins) if ins.opcode == Opcode::BRX_IDX => {
            let Some(Operand::Label(t)) = ins.operands.get(1) else { panic!("brx.idx without a table") };
            let targets = body.iter().find_map(|s| match s {
                Stmt::BranchTargets(name, ts) if name == t => Some(ts.clone()),
                _ => None,
            });
            for l in targets.expect("brx.idx names a .branchtargets table") {
                out.insert((block_of_label(l).unwrap(), EdgeKind::Taken));
            }
            ins.guard.is_some()
        }
        Some(ins) if matches!(ins.opcode, o if o == Opcode::RET || o == Opcode::EXIT || o == Opcode::TRAP) => ins.guard.is_some(),
        _ => true,
    };
    if falls {
        if let Some(m) = next {
            out.insert((m, EdgeKind::FallThrough));
        }
    }
    out
}

#[test]
fn every_corpus_function_has_a_consistent_cfg() {
    let mut functions = 0;
    let mut failures = Vec::new();
    for (name, bytes) in files() {
        let Ok(p) = ptx_ir::parse(&name, &bytes) else { continue };
        for item in &p.module.items {
            let Item::Func(f) = item else { continue };
            let Some(body) = &f.body else { continue };
            functions += 1;
            let cfg = Cfg::build(f);
            if cfg.layout_statements() != (0..body.len()).collect::<Vec<_>>() {
                failures.push(format!("{name} `{}`: the layout does not give back the body", f.name));
                continue;
            }
            for (k, s) in body.iter().enumerate() {
                let b = cfg.block_of_stmt[k];
                if !cfg.block(b).stmts.contains(&k) {
                    failures.push(format!("{name} `{}`: statement {k} is not in its block", f.name));
                }
                let _ = s;
            }
            for i in 0..cfg.layout.len() {
                let n = cfg.layout[i];
                let actual: BTreeSet<(NodeIndex, EdgeKind)> = cfg.edges().filter(|(s, _, _)| *s == n).map(|(_, t, k)| (t, k)).collect();
                if actual != expected_successors(f, &cfg, i) {
                    failures.push(format!("{name} `{}`: block {i} has edges {actual:?}", f.name));
                }
            }
            let a = FunctionAnalyses::compute(f);
            assert!(a.dom.contains(cfg.entry));
            if let Some(b) = liveness_solvers_disagree(&a) {
                failures.push(format!("{name} `{}`: the two liveness solvers disagree at block {b}", f.name));
            }
        }
    }
    assert!(functions > 0);
    assert!(failures.is_empty(), "{} problems in {functions} functions:\n{}", failures.len(), failures[..failures.len().min(20)].join("\n"));
}

/// The first block whose live-in or live-out set differs between the dense
/// and the sparse liveness solver.
fn liveness_solvers_disagree(a: &FunctionAnalyses) -> Option<usize> {
    let solve = |solver| Liveness::compute_with(solver, &a.cfg, &a.locs, &a.effects);
    let (dense, sparse) = (solve(LivenessSolver::Dense), solve(LivenessSolver::Sparse));
    let set = |s: &BlockSets, b: usize| {
        let mut v = Vec::new();
        s.for_each(b, |l| v.push(l));
        v
    };
    (0..a.cfg.node_bound()).find(|&b| set(&dense.live_in, b) != set(&sparse.live_in, b) || set(&dense.live_out, b) != set(&sparse.live_out, b))
}

/// `--emit=cfg-dot` output is valid graphviz: `dot -Tsvg` accepts it for
/// every file of the project's corpus and a sample of the shared one.
#[test]
fn cfg_dot_is_valid_graphviz() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let dot = Command::new("dot").arg("-V").output();
    assert!(dot.is_ok(), "graphviz `dot` is needed for this test (tools/test.sh installs it: apt-get install graphviz)");
    let mut inputs: Vec<(String, Vec<u8>)> = ptx_files(&own_corpus_dir()).into_iter().map(|p| (p.display().to_string(), std::fs::read(&p).unwrap())).collect();
    if let Some(dir) = shared_corpus_dir() {
        for e in manifest(&dir).iter().step_by(25) {
            inputs.push((e.file.clone(), std::fs::read(dir.join(&e.file)).unwrap()));
        }
    }
    let print = |f: &Function, s: &Stmt| match s {
        Stmt::Instr(i) => {
            let mut t = String::new();
            ptx_print::write_instruction(&mut t, f, i);
            t
        }
        _ => String::new(),
    };
    for (name, bytes) in inputs {
        let Ok(p) = ptx_ir::parse(&name, &bytes) else { continue };
        let text = ptx_ir::cfg::module_dot(&p.module, &print);
        let mut child = Command::new("dot").arg("-Tsvg").stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{name}: dot rejects the CFG: {}", String::from_utf8_lossy(&out.stderr));
    }
}
