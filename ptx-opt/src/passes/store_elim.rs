//! `store-elim`: a store that a later store overwrites before anything can
//! read it is removed.
//!
//! Within one block, a plain `st` (guarded or not) is dead when a later
//! unguarded plain `st` covers every byte of its location (same space,
//! base version and a range that contains it; [`memory::Location::covers`])
//! and nothing between may read it: no plain load that may overlap it
//! ([`memory::Location::may_overlap`]) and no clobber (atomics, barriers,
//! fences, calls, ordered accesses, anything else that touches memory).
//! The end of a block ends what is known: a store may be read on any path
//! out of it.
//!
//! Why: `-O0` producers store a variable at each assignment and again
//! after it, and ptxas keeps every store to generic or global memory it
//! cannot prove unobserved.

use super::memory::{Location, Touch};
use super::{Analyses, Pass, Preserves};
use crate::{ModuleContext, OptLevel};
use ptx_ir::ir::{Function, Stmt};
use ptx_ir::isa::Opcode;

pub const PASS: Pass = Pass {
    name: "store-elim",
    description: "removes a store that a later store to the same bytes overwrites before anything may read them",
    run,
    preserves: Preserves::Nothing,
    edit: None,
};

fn run(f: &Function, analyses: &mut Analyses, _ctx: &ModuleContext, _level: OptLevel) -> Option<Function> {
    let body = f.body.as_ref()?;
    if body.iter().filter(|s| matches!(s, Stmt::Instr(i) if i.opcode == Opcode::ST)).count() < 2 {
        return None;
    }
    let (cfg, dom, view, memory) = analyses.memory(f);
    let mut dead = vec![false; body.len()];
    let mut any = false;
    for &b in &cfg.layout {
        if !dom.contains(b) {
            continue;
        }
        // Stores not yet possibly read: (location, statement).
        let mut pending: Vec<(Location, usize)> = Vec::new();
        for k in cfg.block(b).stmts.clone() {
            let Stmt::Instr(ins) = &body[k] else { continue };
            let acc = match memory.touch(f, view, k, ins) {
                Touch::Nothing => continue,
                Touch::Clobber => {
                    pending.clear();
                    continue;
                }
                Touch::Plain(acc) => acc,
            };
            if !acc.store {
                pending.retain(|(at, _)| !at.may_overlap(&acc.at));
                continue;
            }
            if ins.guard.is_none() {
                pending.retain(|(at, j)| {
                    let covered = acc.at.covers(at);
                    if covered {
                        dead[*j] = true;
                        any = true;
                    }
                    !covered
                });
            }
            pending.push((acc.at.clone(), k));
        }
    }
    if !any {
        return None;
    }
    let mut g = f.clone();
    super::body::remove_marked(g.body.as_mut().expect("a body"), &dead);
    Some(g)
}
