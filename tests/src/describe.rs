//! Text descriptions of a function's CFG and analyses, for specification
//! tests whose expected results are checked by reading them.

use ptx_ir::analysis::{dominance_frontiers, FunctionAnalyses, Loc};
use ptx_ir::cfg::EdgeKind;
use ptx_ir::ir::{Function, Item, Module};
use petgraph::stable_graph::NodeIndex;
use std::fmt::Write;

/// Describes every function with a body.
pub fn describe_module(m: &Module) -> String {
    let mut out = String::new();
    for item in &m.items {
        if let Item::Func(f) = item {
            if f.body.is_some() {
                describe_function(&mut out, f);
            }
        }
    }
    out
}

fn block_name(f: &Function, a: &FunctionAnalyses, n: NodeIndex) -> String {
    match a.cfg.block(n).label {
        Some(l) => f.label_name(l).to_string(),
        None => format!("b{}", a.cfg.layout.iter().position(|x| *x == n).unwrap()),
    }
}

fn loc_name(f: &Function, a: &FunctionAnalyses, l: Loc) -> String {
    match a.locs.reg_of(l) {
        None => "CC".to_string(),
        Some((r, lane)) => {
            let reg = f.reg(r);
            if reg.vector.is_some() {
                format!("{}.{}", reg.name, ["x", "y", "z", "w", "4", "5", "6", "7"][lane as usize])
            } else {
                reg.name.to_string()
            }
        }
    }
}

pub fn describe_function(out: &mut String, f: &Function) {
    let a = FunctionAnalyses::compute(f);
    let bn = |n: NodeIndex| block_name(f, &a, n);
    let _ = writeln!(out, "function {}", f.name);
    let unreachable = a.cfg.unreachable();
    let df = dominance_frontiers(&a.cfg, &a.dom);
    for &n in &a.cfg.layout {
        let mut succ: Vec<(NodeIndex, EdgeKind)> = a.cfg.edges().filter(|(s, _, _)| *s == n).map(|(_, t, k)| (t, k)).collect();
        succ.sort();
        let succ: Vec<String> = succ
            .iter()
            .map(|(t, k)| format!("{}{}", bn(*t), if *k == EdgeKind::FallThrough { " (fall-through)" } else { "" }))
            .collect();
        let names = |v: &mut dyn Iterator<Item = usize>| -> String {
            let mut names: Vec<String> = v.map(|i| loc_name(f, &a, Loc(i as u32))).collect();
            names.sort();
            names.join(" ")
        };
        let _ = writeln!(
            out,
            "  block {}{}: stmts {:?} -> [{}]",
            bn(n),
            if unreachable.contains(&n) { " (unreachable)" } else { "" },
            a.cfg.block(n).stmts,
            succ.join(", ")
        );
        let _ = writeln!(
            out,
            "    idom {}  ipdom {}  frontier [{}]  loop depth {}",
            a.dom.idom(n).map(bn).unwrap_or("-".into()),
            a.post_dom.idom(n).map(bn).unwrap_or("-".into()),
            df.of(n).iter().map(|b| bn(*b)).collect::<Vec<_>>().join(" "),
            a.loops.depth[n.index()]
        );
        let (mut live_in, mut live_out) = (Vec::new(), Vec::new());
        a.liveness.live_in.for_each(n.index(), |l| live_in.push(l));
        a.liveness.live_out.for_each(n.index(), |l| live_out.push(l));
        let _ = writeln!(out, "    live in [{}]  live out [{}]", names(&mut live_in.into_iter()), names(&mut live_out.into_iter()));
    }
    for l in &a.loops.loops {
        let _ = writeln!(
            out,
            "  loop {} depth {}: body [{}] latches [{}]",
            bn(l.header),
            l.depth,
            l.body.iter().map(|b| bn(*b)).collect::<Vec<_>>().join(" "),
            l.latches.iter().map(|b| bn(*b)).collect::<Vec<_>>().join(" ")
        );
    }
    for (s, t) in &a.loops.irreducible_edges {
        let _ = writeln!(out, "  irreducible edge {} -> {}", bn(*s), bn(*t));
    }
    // Def-use: each use with the statements whose definitions reach it.
    for u in &a.def_use.uses {
        let defs: Vec<String> = u.reaching.iter().map(|d| format!("s{}", a.def_use.defs[*d as usize].stmt)).collect();
        let _ = writeln!(out, "  use s{} {} <- [{}]{}", u.stmt, loc_name(f, &a, u.loc), defs.join(" "), if u.from_entry { " + entry" } else { "" });
    }
}
