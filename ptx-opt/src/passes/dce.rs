//! `dce`: instructions whose results nobody reads, and that do nothing
//! else, are removed.
//!
//! Effects come from the ISA tables ([`ptx_ir::analysis::effects`]): an
//! instruction is removable when every location it writes (registers,
//! lanes, the carry flag) is dead after it (backward liveness, repeated
//! until nothing more dies, so chains die whole), and it has no effect but
//! its results:
//!
//! - no flag beyond `.approx` (never a barrier, fence, branch, call,
//!   `ret`/`exit`, warp-collective, asynchronous or side-effecting
//!   instruction);
//! - no read of a special register that changes on its own (`%clock`);
//! - memory only read, by a plain `ld`/`ldu` (a load without `.volatile`,
//!   `.mmio`, `.relaxed` or `.acquire`: a dead weak load of any space has no
//!   observable effect; stores and atomics are never dead).
//!
//! Registers a function returns in (PTX 1.x `.reg` return parameters) stay
//! live at its exits. Statements are removed, so the CFG is rebuilt.

use super::{Analyses, Pass, Preserves};
use crate::{ModuleContext, OptLevel};
use ptx_ir::analysis::{statement_effects, BitSet, Effects, Liveness, LocTable};
use ptx_ir::ir::{Function, Instruction, Stmt};
use ptx_ir::isa::{Flags, MemAccess, Opcode, StateSpace};

pub const PASS: Pass = Pass {
    name: "dce",
    description: "removes instructions whose results are never read and that have no other effect (effects from the ISA tables; plain loads included)",
    run,
    preserves: Preserves::Nothing,
    edit: Some(edit),
};

/// Has the instruction no effect but the locations it writes?
pub fn only_writes_results(ins: &Instruction, e: &Effects) -> bool {
    if e.defs.is_empty() || e.reads_volatile {
        return false;
    }
    if Flags::from_bits(e.flags.bits() & !Flags::APPROX.bits()) != Flags::NONE {
        return false;
    }
    if e.memory.is_empty() {
        return true;
    }
    matches!(ins.opcode, Opcode::LD | Opcode::LDU)
        && e.memory.iter().all(|(k, _)| *k == MemAccess::Load)
        // Ordered loads and loads of device registers are observable
        // (no load takes `.release`).
        && !ins.modifiers().any(|(_, m)| super::memory::orders(m))
}

fn run(f: &Function, analyses: &mut Analyses, _ctx: &ModuleContext, _level: OptLevel) -> Option<Function> {
    let dead = dead_statements(f, analyses)?;
    let mut g = f.clone();
    super::body::remove_marked(g.body.as_mut().expect("a body"), &dead);
    Some(g)
}

/// [`run`] in place ([`super::Edit`]).
pub fn edit(f: &mut Function, analyses: &mut Analyses, _ctx: &ModuleContext, _level: OptLevel) -> bool {
    let Some(dead) = dead_statements(f, analyses) else { return false };
    super::body::remove_marked(f.body.as_mut().expect("a body"), &dead)
}

/// The statements to remove (`None` when there is none).
fn dead_statements(f: &Function, analyses: &mut Analyses) -> Option<Vec<bool>> {
    let body = f.body.as_ref()?;
    let cfg = analyses.cfg(f);
    let locs = LocTable::new(f);
    let mut fx = statement_effects(f, &locs);
    // Return registers stay live at the exits.
    let mut kept = BitSet::new(locs.len());
    for d in f.ret.iter().flatten().filter(|d| d.space == StateSpace::Reg) {
        for n in &d.names {
            if let Some(k) = f.regs.iter().position(|r| r.name == n.name) {
                for l in locs.reg(ptx_ir::ir::RegId(k as u32)) {
                    kept.insert(l.0 as usize);
                }
            }
        }
    }
    let mut dead = vec![false; body.len()];
    let mut any = false;
    loop {
        let live = Liveness::compute(cfg, &locs, &fx);
        let mut found = false;
        // Did a statement found dead read a location? Removing dead
        // statements that read nothing leaves every location's liveness as
        // it was: another round would find nothing more.
        let mut found_reads = false;
        // One set walked back through each block in turn.
        let mut l = BitSet::new(locs.len());
        for &b in &cfg.layout {
            live.live_out.copy_into(b.index(), &mut l);
            for k in cfg.block(b).stmts.clone().rev() {
                let Some(e) = &fx[k] else { continue };
                let Stmt::Instr(ins) = &body[k] else { continue };
                let unread = e.defs.iter().all(|d| !l.contains(d.loc.0 as usize) && !kept.contains(d.loc.0 as usize));
                if unread && only_writes_results(ins, e) {
                    dead[k] = true;
                    found = true;
                    found_reads |= !e.uses.is_empty();
                    fx[k] = None;
                    continue;
                }
                for d in &e.defs {
                    if d.kills {
                        l.remove(d.loc.0 as usize);
                    }
                }
                for u in &e.uses {
                    l.insert(u.0 as usize);
                }
            }
        }
        any |= found;
        if !found_reads {
            break;
        }
    }
    any.then_some(dead)
}
