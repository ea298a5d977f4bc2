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
    dead_statements_by(f, analyses, Rounds::UntilNoneCanDie)
}

/// When [`dead_statements_by`] stops repeating its rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rounds {
    /// After a round whose dead statements read nothing (the general
    /// rule, kept for the test comparing the two).
    #[cfg(test)]
    UntilNothingDiesThatRead,
    /// Also after a round where no statement could die next round. A
    /// location's liveness depends only on the statements that read or
    /// write it, and removing a write after which it is dead changes
    /// nothing: only the locations the dead statements read (`freed`) can
    /// die. So the first statement of a block to die next round writes one
    /// of them, is removable, and writes nothing read further down its
    /// block by a statement that stays (`local`) nor kept live at the
    /// exits. On renderer -O2 every one of the 78 repeat rounds found
    /// nothing (each a liveness computation and a walk).
    UntilNoneCanDie,
}

fn dead_statements_by(f: &Function, analyses: &mut Analyses, rounds: Rounds) -> Option<Vec<bool>> {
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
        // The locations the statements found dead this round read.
        let mut freed = BitSet::new(locs.len());
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
                    for u in &e.uses {
                        freed.insert(u.0 as usize);
                    }
                    fx[k] = None;
                    continue;
                }
                l.step_back(e);
            }
        }
        any |= found;
        if !found_reads || (rounds == Rounds::UntilNoneCanDie && !may_die_next(body, cfg, &fx, &kept, &freed, locs.len())) {
            break;
        }
    }
    any.then_some(dead)
}

/// Can a statement die in another round, after one whose dead statements
/// read the locations `freed` ([`Rounds::UntilNoneCanDie`])? The first
/// statement of a block to die then writes one of them, has no effect but
/// its results, and writes nothing read further down its block by a
/// statement that stays (`local`) nor kept live at the exits. Asked only
/// after a round whose dead statements read something, by a walk of its
/// own: kept in the round's walk, this bookkeeping cost matrix_free -O2
/// more than the rounds it saved (1.9 M against 0.4 M).
fn may_die_next(body: &[Stmt], cfg: &ptx_ir::cfg::Cfg, fx: &[Option<Effects>], kept: &BitSet, freed: &BitSet, locations: usize) -> bool {
    let mut local = BitSet::new(locations);
    let none = BitSet::new(locations);
    for &b in &cfg.layout {
        // Emptied by copying, not allocated, per block.
        local.clone_from(&none);
        for k in cfg.block(b).stmts.clone().rev() {
            let Some(e) = &fx[k] else { continue };
            let Stmt::Instr(ins) = &body[k] else { continue };
            if e.defs.iter().any(|d| freed.contains(d.loc.0 as usize))
                && e.defs.iter().all(|d| !local.contains(d.loc.0 as usize) && !kept.contains(d.loc.0 as usize))
                && only_writes_results(ins, e)
            {
                return true;
            }
            local.step_back(e);
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptx_ir::ir::Item;

    /// Stopping once no removable statement writes a location the dead
    /// ones read finds the same statements as repeating until a round
    /// kills no reader: chains in a block, across blocks, around a loop
    /// (where only the full recomputation sees a loop-carried value die),
    /// and guarded writes.
    #[test]
    fn stopping_early_finds_what_repeating_finds() {
        let text = ".version 8.0\n.target sm_80\n.address_size 64\n\
            .visible .entry chain(.param .u64 p)\n{\n.reg .b32 %r<8>;\n.reg .b64 %rd<3>;\n\
            ld.param.u64 %rd1, [p];\nld.global.u32 %r1, [%rd1];\nadd.s32 %r2, %r1, 1;\nmul.lo.s32 %r3, %r2, %r2;\n\
            st.global.u32 [%rd1], %r1;\nret;\n}\n\
            .visible .entry across(.param .u64 p)\n{\n.reg .b32 %r<8>;\n.reg .b64 %rd<3>;\n.reg .pred %p<3>;\n\
            ld.param.u64 %rd1, [p];\nld.global.u32 %r1, [%rd1];\nsetp.eq.s32 %p1, %r1, 0;\nadd.s32 %r2, %r1, 3;\n\
            @%p1 bra L1;\nadd.s32 %r3, %r2, 1;\nL1:\nmov.u32 %r4, %r2;\n@%p1 mov.u32 %r4, 7;\nret;\n}\n\
            .visible .entry loop(.param .u64 p)\n{\n.reg .b32 %r<8>;\n.reg .b64 %rd<3>;\n.reg .pred %p<3>;\n\
            ld.param.u64 %rd1, [p];\nmov.u32 %r1, 0;\nmov.u32 %r5, 0;\nmov.u32 %r6, 5;\nL1:\nadd.s32 %r5, %r5, 1;\nmov.u32 %r2, %r1;\nmov.u32 %r7, %r6;\n\
            add.s32 %r1, %r1, 2;\nsetp.lt.s32 %p1, %r5, 10;\n@%p1 bra L1;\nst.global.u32 [%rd1], %r5;\nret;\n}\n";
        let m = ptx_ir::parse_str(text).unwrap_or_else(|d| panic!("{d}"));
        let mut functions = 0;
        for item in &m.items {
            let Item::Func(f) = item else { continue };
            functions += 1;
            let general = dead_statements_by(f, &mut Analyses::default(), Rounds::UntilNothingDiesThatRead);
            let early = dead_statements_by(f, &mut Analyses::default(), Rounds::UntilNoneCanDie);
            assert!(general.is_some(), "{}: something dies", f.name);
            assert_eq!(early, general, "{}", f.name);
        }
        assert_eq!(functions, 3);
    }
}
