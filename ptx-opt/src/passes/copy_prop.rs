//! `copy-prop`: reads of a copy read its source instead.
//!
//! For `mov d, s` (unguarded, both plain scalar registers of one type), a
//! read that sees this version of `d` (the value view's versions) reads `s`
//! instead when `s` still holds, at that read, the version the `mov` read
//! (chains of copies are followed to the first source that still holds).
//! The source must be a value, not a variable: a register merged at a φ
//! (a loop-carried variable) or written in part keeps its copies, since
//! reading it past the copy stretches its live range over its next write
//! (measured: two NVRTC `-O0` stencil and scan kernels, +1 to +2 SASS
//! instructions and a register each, when loop-carried sources were
//! propagated). The copy itself stays for `dce` to remove once nothing reads it; reads
//! that cannot be redirected keep it alive. Registers declared inside
//! `{ }` blocks are never named by a rewrite (the name may mean another
//! register at the read). Statements are changed in place: the CFG is
//! preserved, and the value view is updated in place
//! ([`super::Analyses::reads_renamed`]).
//!
//! Why, when ptxas propagates copies itself: the other passes see through
//! the copies it removes (`promote-local` leaves one per load and store),
//! and the output reads as what it computes.

use super::operands::{only_types, plain_reg};
use super::{Analyses, Pass, Preserves};
use crate::values::Version;
use crate::{ModuleContext, OptLevel};
use ptx_ir::ir::{Function, RegId, Stmt};
use ptx_ir::isa::Opcode;
use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;

pub const PASS: Pass = Pass {
    name: "copy-prop",
    description: "reads of a register copy (mov d, s) read the source when it still holds the copied value",
    run,
    preserves: Preserves::Cfg,
    edit: Some(edit),
};

fn run(f: &Function, analyses: &mut Analyses, _ctx: &ModuleContext, _level: OptLevel) -> Option<Function> {
    let renames = renames(f, analyses);
    if renames.is_empty() {
        return None;
    }
    let mut g = f.clone();
    apply(&mut g, analyses, &renames);
    Some(g)
}

/// [`run`] in place ([`super::Edit`]).
pub fn edit(f: &mut Function, analyses: &mut Analyses, _ctx: &ModuleContext, _level: OptLevel) -> bool {
    let renames = renames(f, analyses);
    if renames.is_empty() {
        return false;
    }
    apply(f, analyses, &renames);
    true
}

/// The reads each statement renames: (statement, [(from, to)]), in order.
type Renames = Vec<(usize, Vec<(RegId, RegId)>)>;

/// Renames the reads of `g` (the function the analyses are of) and brings
/// the value view up to date.
fn apply(g: &mut Function, analyses: &mut Analyses, renames: &Renames) {
    let body = g.body.as_mut().expect("a body");
    let mut changed: Vec<usize> = Vec::with_capacity(renames.len());
    for (j, renames) in renames {
        let Some(Stmt::Instr(ins)) = body.get_mut(*j) else { continue };
        changed.push(*j);
        ins.for_each_reg_mut(|reg, access| {
            if access.read && !access.write {
                if let Some((_, to)) = renames.iter().find(|(from, _)| from == reg) {
                    *reg = *to;
                }
            }
        });
    }
    // Only reads changed: the view is brought up to date, not built again.
    analyses.reads_renamed(g, &changed);
}

/// The versions a chain of copies went through. Most chains are a copy or
/// two: the first few are kept in a short list, not in a hash set made for
/// every read followed (renderer: 18,000 sets, about 200 host instructions
/// each); a long chain keeps the rest in a set.
#[derive(Default)]
struct Visited {
    few: SmallVec<[Version; VISITED_LISTED]>,
    many: FxHashSet<Version>,
}

/// The versions [`Visited`] keeps in its list.
const VISITED_LISTED: usize = 8;

impl Visited {
    /// Adds `v`; whether it was not there yet.
    fn first_visit(&mut self, v: Version) -> bool {
        if self.few.contains(&v) || (!self.many.is_empty() && self.many.contains(&v)) {
            return false;
        }
        if self.few.len() < VISITED_LISTED {
            self.few.push(v);
        } else {
            self.many.insert(v);
        }
        true
    }
}

/// What [`run`] renames in `f`.
fn renames(f: &Function, analyses: &mut Analyses) -> Renames {
    let Some(body) = f.body.as_ref() else { return Vec::new() };
    if !body.iter().any(|s| matches!(s, Stmt::Instr(i) if i.opcode == Opcode::MOV && i.guard.is_none() && matches!(i.operands.get(1), Some(ptx_ir::ir::Operand::Reg(_))))) {
        return Vec::new();
    }
    let in_blocks = analyses.block_declared_names(f);
    let (_, _, view) = analyses.values(f);
    // Copies: the version of `d` a `mov` makes -> the version of `s` it read.
    let mut copies: FxHashMap<Version, Version> = FxHashMap::default();
    for (k, s) in body.iter().enumerate() {
        let Stmt::Instr(ins) = s else { continue };
        if ins.opcode != Opcode::MOV || ins.guard.is_some() || ins.operands.len() != 2 || !view.reachable(k) || !only_types(ins) {
            continue;
        }
        let (Some(d), Some(src)) = (plain_reg(f, &ins.operands[0], None), plain_reg(f, &ins.operands[1], None)) else { continue };
        if d == src || f.reg(d).ty != f.reg(src).ty || view.needs_writes(d) || view.needs_writes(src) || in_blocks.contains(f.reg(src).name.as_ref()) {
            continue;
        }
        let Some(sv) = view.read(k, src) else { continue };
        copies.insert(Version { reg: d, def: crate::values::VersionDef::Def(k) }, sv);
    }
    if copies.is_empty() {
        return Vec::new();
    }
    // The registers some copy writes: a read of any other starts no chain,
    // and is passed over without a lookup in `copies` (renderer: most of
    // 140,000 reads).
    let mut copied = vec![false; f.regs.len()];
    for v in copies.keys() {
        copied[v.reg.0 as usize] = true;
    }
    let mut out: Renames = Vec::new();
    for (j, s) in body.iter().enumerate() {
        let Stmt::Instr(_) = s else { continue };
        let mut renames: Vec<(RegId, RegId)> = Vec::new();
        for (r, v) in view.reads(j) {
            if copied.get(v.reg.0 as usize) == Some(&false) {
                continue;
            }
            // Follow the chain while the source still holds its version here.
            let mut to: Option<RegId> = None;
            let mut cur = *v;
            let mut seen = Visited::default();
            while let Some(src) = copies.get(&cur) {
                if !seen.first_visit(cur) || view.version_at(src.reg, j) != src.def {
                    break;
                }
                to = Some(src.reg);
                cur = *src;
            }
            if let Some(to) = to {
                renames.push((*r, to));
            }
        }
        if !renames.is_empty() {
            out.push((j, renames));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::VersionDef;

    /// [`Visited`] answers as a set does, below and past the versions its
    /// list keeps.
    #[test]
    fn visited_versions_are_a_set() {
        let v = |k: usize| Version { reg: RegId((k % 3) as u32), def: VersionDef::Def(k) };
        for n in [1, VISITED_LISTED - 1, VISITED_LISTED, VISITED_LISTED + 1, 3 * VISITED_LISTED] {
            let mut seen = Visited::default();
            let mut set = FxHashSet::default();
            for k in (0..n).chain((0..n).rev()).chain(n..n + 2) {
                assert_eq!(seen.first_visit(v(k)), set.insert(v(k)), "{n} versions, then {k}");
            }
        }
    }
}
