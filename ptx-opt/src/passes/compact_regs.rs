//! `compact-regs`: each register range of the outermost scope is
//! renumbered densely, in order of first use, and declares exactly the
//! members used (`%r<23>` with 9 registers left after the other passes
//! becomes `%r<10>`, members `%r1`..`%r9`; from `%r0` when the range used
//! its member 0).
//!
//! Only names change: instructions refer to registers by id, so nothing
//! else moves. A function is left alone when a new name could mean another
//! register somewhere: a name declared inside a `{ }` block, or a register
//! of the function outside the range, already called that. Entries of the
//! register table nothing names any more keep their ids and old names
//! (they are not declared, and nothing prints them).
//!
//! In no level's pipeline (run it with `--passes`): ptxas's allocation does
//! depend on names. Measured over the corpus at -O2 (ptxas 12.9): 55
//! kernels used more registers, NVRTC `-G` kernels up to 10 more (debug
//! targets, which ptxas does not optimize, allocate in the order the names
//! give) and a ZLUDA kernel one more; none used fewer.

use super::{Analyses, Pass, Preserves};
use crate::{ModuleContext, OptLevel};
use ptx_ir::ir::{member_name, range_member, DeclName, Function, Name, RegId, Stmt};
use ptx_ir::isa::StateSpace;
use rustc_hash::{FxHashMap, FxHashSet};

pub const PASS: Pass = Pass {
    name: "compact-regs",
    description: "renumbers each register range densely in first-use order and declares exactly the registers used",
    run,
    preserves: Preserves::Cfg,
    edit: None,
};

fn run(f: &Function, _analyses: &mut Analyses, _ctx: &ModuleContext, _level: OptLevel) -> Option<Function> {
    let body = f.body.as_ref()?;
    let in_blocks = super::operands::block_declared_names(body);
    // Ranges of the outermost scope: prefix -> (statement, declared count).
    let mut ranges: FxHashMap<Name, (usize, u32)> = FxHashMap::default();
    let mut depth = 0usize;
    for (k, s) in body.iter().enumerate() {
        match s {
            Stmt::ScopeBegin => depth += 1,
            Stmt::ScopeEnd => depth = depth.saturating_sub(1),
            Stmt::Decl(d) if depth == 0 && d.space() == StateSpace::Reg && d.name_count() == 1 => {
                if let Some(DeclName { name, range: Some(count), .. }) = d.name(0) {
                    ranges.insert(name.clone(), (k, count));
                }
            }
            _ => {}
        }
    }
    if ranges.is_empty() {
        return None;
    }
    // Registers in order of first use, grouped by range.
    let mut seen: FxHashSet<RegId> = FxHashSet::default();
    let mut members: FxHashMap<Name, Vec<RegId>> = FxHashMap::default();
    for s in body {
        let Stmt::Instr(ins) = s else { continue };
        ins.for_each_reg(|r, _| {
            if !seen.insert(r) {
                return;
            }
            let Some(reg) = f.try_reg(r) else { return };
            if in_blocks.contains(reg.name.as_ref()) {
                return;
            }
            if let Some((prefix, n)) = range_member(&reg.name) {
                if ranges.get(prefix).is_some_and(|&(_, count)| n < count) {
                    members.entry(prefix.into()).or_default().push(r);
                }
            }
        });
    }
    let mut g = f.clone();
    let mut changed = false;
    let mut renamed: FxHashSet<RegId> = FxHashSet::default();
    let mut counts: Vec<(usize, u32)> = Vec::new();
    for (prefix, &(at, count)) in &ranges {
        let used = members.get(prefix).map_or(&[][..], Vec::as_slice);
        let first = u32::from(!used.iter().any(|&r| range_member(&f.reg(r).name).is_some_and(|(_, n)| n == 0)));
        let new_count = first + used.len() as u32;
        let names: Vec<Name> = (0..used.len()).map(|i| member_name(prefix, first + i as u32)).collect();
        // A new name must not be a name of the function outside this range.
        let clash = names.iter().any(|n| in_blocks.contains(n.as_ref())) || f.regs.iter().enumerate().any(|(i, r)| !used.contains(&RegId(i as u32)) && seen.contains(&RegId(i as u32)) && names.contains(&r.name));
        if clash {
            return None;
        }
        for (&r, n) in used.iter().zip(names) {
            if g.regs[r.0 as usize].name != n {
                g.regs[r.0 as usize].name = n;
                changed = true;
            }
            renamed.insert(r);
        }
        if new_count != count {
            counts.push((at, new_count));
            changed = true;
        }
    }
    if !changed {
        return None;
    }
    let out = g.body.as_mut().expect("a body");
    for (at, n) in counts {
        if let Stmt::Decl(d) = &mut out[at] {
            // Nothing of the range is used (`n == 0`): `dead-decls` removes it; keep it valid.
            if let Some(mut range) = d.range_mut() {
                range.set(Some(n));
            }
        }
    }
    g.fresh = Default::default();
    Some(g)
}
