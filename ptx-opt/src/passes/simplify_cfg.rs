//! `simplify-cfg`: branches on constants, unreachable code, branches to
//! the next statement and labels nothing names.
//!
//! In order, to a fixed point:
//!
//! 1. A branch (`bra`, any `.uni`) guarded by a predicate whose value is a
//!    constant (the version it reads is written by an unguarded
//!    `mov.pred p, 0|1`, as the e-graph leaves a decided `setp`) becomes an
//!    unconditional branch, or is removed when never taken.
//! 2. A branch whose target is the next statement (only labels, `.loc`
//!    and pragmas between) is removed, guarded or not: both ways lead there.
//!    A branch to a block that only branches on (an unguarded `bra M`)
//!    goes to `M` directly (jump threading over empty blocks), when both
//!    the branch and `M` are outside `{ }` blocks (so the name means the
//!    same label at the branch).
//! 3. Instructions of blocks the entry does not reach are removed.
//! 4. Labels nothing names (no branch, `.branchtargets` table or other
//!    operand) are removed, which merges straight-line blocks. Not in
//!    functions with debug line information (`.loc`): debug sections may
//!    name labels from outside the function.
//!
//! Nothing is duplicated or moved, so convergence points of warp-synchronous
//! code (`bar.warp.sync`, `.aligned` barriers) stay where they are: a branch
//! on a constant is taken by every thread alike. Functions with a
//! `brx.idx` whose table is not a `.branchtargets` of the function are
//! left alone (their successors are not known).

use super::{Analyses, Pass, Preserves};
use crate::values::{ValueView, VersionDef};
use crate::{ModuleContext, OptLevel};
use ptx_ir::cfg::Cfg;
use ptx_ir::ir::{Function, Imm, LabelId, Operand, Stmt};
use ptx_ir::isa::Opcode;
use rustc_hash::FxHashSet;

pub const PASS: Pass = Pass {
    name: "simplify-cfg",
    description: "folds branches on constant predicates, removes unreachable code, branches to the next statement and unused labels",
    run,
    preserves: Preserves::Nothing,
    edit: Some(edit),
};

fn run(f: &Function, analyses: &mut Analyses, _ctx: &ModuleContext, _level: OptLevel) -> Option<Function> {
    let decided = decided_branches(f, analyses)?;
    // Most functions have nothing for steps 2 and 3 either, and many
    // nothing for step 4: then no copy.
    let first = decided.is_empty().then(|| FirstRound::of(f, analyses));
    if first.as_ref().is_some_and(|r| !r.changes) {
        let named = unused_labels(f)?;
        let mut g = f.clone();
        remove_labels(&mut g, &named);
        return Some(g);
    }
    let mut g = f.clone();
    simplify(&mut g, &decided, first).then_some(g)
}

/// [`run`] in place ([`super::Edit`]).
pub fn edit(f: &mut Function, analyses: &mut Analyses, _ctx: &ModuleContext, _level: OptLevel) -> bool {
    let Some(decided) = decided_branches(f, analyses) else { return false };
    let first = decided.is_empty().then(|| FirstRound::of(f, analyses));
    if first.as_ref().is_some_and(|r| !r.changes) {
        return remove_unused_labels(f);
    }
    simplify(f, &decided, first)
}

/// Step 1's branches to fold in `f` as given (see [`constant_branches`]);
/// `None` when the function is left alone.
fn decided_branches(f: &Function, analyses: &mut Analyses) -> Option<Vec<(usize, bool)>> {
    let body = f.body.as_ref()?;
    if !tables_known(body) {
        return None;
    }
    // Step 1 on the function given (its analyses are cached), when some
    // guarded branch reads a predicate a `mov` of a constant writes (the
    // value view is the cost of this pass).
    let constant_preds: FxHashSet<ptx_ir::ir::RegId> = body
        .iter()
        .filter_map(|s| match s {
            Stmt::Instr(i) if i.opcode == Opcode::MOV && i.ty() == Some(ptx_ir::isa::ScalarType::Pred) && matches!(i.operands.get(1), Some(Operand::Imm(_))) => super::operands::plain_reg(f, &i.operands[0], None),
            _ => None,
        })
        .collect();
    let candidates = body.iter().any(|s| matches!(s, Stmt::Instr(i) if i.opcode == Opcode::BRA && i.guard.is_some_and(|g| constant_preds.contains(&g.reg))));
    Some(if candidates {
        let (_, _, view) = analyses.values(f);
        constant_branches(f, view)
    } else {
        Vec::new()
    })
}

/// Folds the `decided` branches of `h` (step 1), then steps 2 to 4 to a
/// fixed point; says whether anything changed. `first` is what the first
/// round of steps 2 and 3 finds in `h` as given (only when `decided` is
/// empty: folding changes `h`).
fn simplify(h: &mut Function, decided: &[(usize, bool)], first: Option<FirstRound>) -> bool {
    if !decided.is_empty() {
        let out = h.body.as_mut().expect("a body");
        let mut k = 0;
        out.retain_mut(|s| {
            k += 1;
            match decided.iter().find(|(at, _)| *at == k - 1) {
                Some((_, true)) => {
                    if let Stmt::Instr(ins) = s {
                        ins.guard = None;
                    }
                    true
                }
                Some((_, false)) => false,
                None => true,
            }
        });
    }
    let changed = steps_2_and_3(h, first);
    // Step 4.
    let labels = remove_unused_labels(h);
    changed || !decided.is_empty() || labels
}

/// Steps 2 and 3 in rounds, each step removing all it finds per round,
/// until a round changes nothing; says whether one did. Step 3 looks again
/// only after step 2 changed something: right after it removed the
/// instructions of unreachable blocks, it finds none (an emptied block is
/// as unreachable as before, and no path from the entry went through it),
/// and each look builds a CFG (renderer -O2: 157 of them here, 17 M host
/// instructions, before this). The first round is `first`'s when given
/// (what it finds in `h` as given).
fn steps_2_and_3(h: &mut Function, first: Option<FirstRound>) -> bool {
    // The first round: step 3 looks whatever step 2 did.
    let changed = match first {
        Some(found) => found.apply(h),
        None => thread_jumps(h) | remove_branches_to_next(h) | remove_unreachable(h),
    };
    if !changed {
        return false;
    }
    loop {
        if !(thread_jumps(h) | remove_branches_to_next(h)) {
            return true;
        }
        remove_unreachable(h);
    }
}

/// What the first round of steps 2 and 3 finds in a function as it is:
/// the jumps to thread, then, when there is none, the branches to the next
/// statement, and when there is none of those either, the unreachable
/// instructions (from the cached CFG). Asked to know whether the pass
/// changes anything; the first round takes it rather than looking again
/// (each was found twice: renderer -O2's simplify-cfg 37.2 -> 31.9 M host
/// instructions).
struct FirstRound {
    threads: Vec<(usize, LabelId)>,
    to_next: Option<Vec<bool>>,
    unreachable: Option<Vec<bool>>,
    /// Would the first round change the function?
    changes: bool,
}

impl FirstRound {
    /// `analyses` are `f`'s.
    fn of(f: &Function, analyses: &mut Analyses) -> FirstRound {
        let Some(body) = f.body.as_ref() else { return FirstRound { threads: Vec::new(), to_next: None, unreachable: None, changes: false } };
        let threads = jump_threads(f.labels.len(), body);
        if !threads.is_empty() {
            return FirstRound { threads, to_next: None, unreachable: None, changes: true };
        }
        let to_next = branches_to_next(body);
        if to_next.contains(&true) {
            return FirstRound { threads, to_next: Some(to_next), unreachable: None, changes: true };
        }
        let unreachable = unreachable_instructions(f, analyses.cfg(f));
        let changes = unreachable.contains(&true);
        FirstRound { threads, to_next: Some(to_next), unreachable: Some(unreachable), changes }
    }

    /// The first round on `h`, the function it was found in; says whether
    /// it changed anything. A finding is taken while `h` is unchanged,
    /// else looked for again.
    fn apply(self, h: &mut Function) -> bool {
        let threaded = apply_jump_threads(h, &self.threads);
        let to_next = match (threaded, &self.to_next) {
            (false, Some(marked)) => remove_marked_statements(h, marked),
            _ => remove_branches_to_next(h),
        };
        let unreachable = match (threaded || to_next, &self.unreachable) {
            (false, Some(marked)) => remove_marked_statements(h, marked),
            _ => remove_unreachable(h),
        };
        threaded | to_next | unreachable
    }
}

/// Removes the statements `marked` of `f`'s body; says whether any went.
fn remove_marked_statements(f: &mut Function, marked: &[bool]) -> bool {
    f.body.as_mut().is_some_and(|body| super::body::remove_marked(body, marked))
}

/// Every `brx.idx` names a `.branchtargets` table of the function.
fn tables_known(body: &[Stmt]) -> bool {
    let tables: FxHashSet<LabelId> = body.iter().filter_map(|s| if let Stmt::BranchTargets(l, _) = s { Some(*l) } else { None }).collect();
    body.iter().all(|s| match s {
        Stmt::Instr(i) if i.opcode == Opcode::BRX_IDX => matches!(i.operands.get(1), Some(Operand::Label(l)) if tables.contains(l)),
        _ => true,
    })
}

/// Guarded branches whose guard is a constant: (statement, taken).
fn constant_branches(f: &Function, view: &ValueView) -> Vec<(usize, bool)> {
    let body = f.body.as_deref().unwrap_or_default();
    let mut out = Vec::new();
    for (k, s) in body.iter().enumerate() {
        let Stmt::Instr(ins) = s else { continue };
        let Some(guard) = ins.guard else { continue };
        if ins.opcode != Opcode::BRA || !view.reachable(k) {
            continue;
        }
        let Some(v) = view.read(k, guard.reg) else { continue };
        let VersionDef::Def(d) = v.def else { continue };
        let Some(Stmt::Instr(def)) = body.get(d) else { continue };
        if def.opcode != Opcode::MOV || def.guard.is_some() || def.operands.len() != 2 || def.ty() != Some(ptx_ir::isa::ScalarType::Pred) {
            continue;
        }
        let Operand::Imm(Imm::Int(lit)) = &def.operands[1] else { continue };
        let value = lit.value != 0;
        out.push((k, value != guard.negated));
    }
    out
}

/// Removes every branch to the statement right after it (only labels,
/// `.loc` and pragmas between); says whether it removed any.
fn remove_branches_to_next(f: &mut Function) -> bool {
    let Some(body) = f.body.as_mut() else { return false };
    let drop = branches_to_next(body);
    super::body::remove_marked(body, &drop)
}

/// Per statement: is it a branch to the statement right after it?
fn branches_to_next(body: &[Stmt]) -> Vec<bool> {
    let reaches_next = |k: usize| {
        let Stmt::Instr(ins) = &body[k] else { return false };
        let (Opcode::BRA, Some(Operand::Label(target))) = (ins.opcode, ins.operands.first()) else { return false };
        for s in &body[k + 1..] {
            match s {
                Stmt::Label(l) if l == target => return true,
                Stmt::Label(_) | Stmt::Loc(_) | Stmt::Pragma(_) => {}
                _ => return false,
            }
        }
        false
    };
    (0..body.len()).map(reaches_next).collect()
}

/// Retargets every branch to a block that only branches on (see the module
/// documentation); says whether it changed any.
fn thread_jumps(f: &mut Function) -> bool {
    let Some(body) = f.body.as_ref() else { return false };
    let threads = jump_threads(f.labels.len(), body);
    apply_jump_threads(f, &threads)
}

/// Retargets the branches of [`jump_threads`]' answer; says whether there
/// was any.
fn apply_jump_threads(f: &mut Function, threads: &[(usize, LabelId)]) -> bool {
    let Some(body) = f.body.as_mut() else { return false };
    for &(k, to) in threads {
        if let Stmt::Instr(ins) = &mut body[k] {
            ins.operands[0] = Operand::Label(to);
        }
    }
    !threads.is_empty()
}

/// The branches [`thread_jumps`] retargets: (statement, new target), in a
/// body of a function with `labels` labels.
fn jump_threads(labels: usize, body: &[Stmt]) -> Vec<(usize, LabelId)> {
    // One walk over the body, the depth in `{ }` blocks counted as it goes
    // (not a list of every statement's depth read by three more walks:
    // renderer -O2, 244 calls: 19.9 -> 8.3 M host instructions).
    // Per label: is it at depth 0.
    let mut outer = vec![false; labels];
    // Per label at depth 0 followed by an unguarded `bra` to a label (only
    // labels, `.loc` and pragmas between): (label, that target).
    let mut hops: Vec<(LabelId, LabelId)> = Vec::new();
    // The branches at depth 0 to a label: (statement, target).
    let mut branches: Vec<(usize, LabelId)> = Vec::new();
    let mut depth = 0usize;
    for (k, s) in body.iter().enumerate() {
        match s {
            Stmt::ScopeBegin => depth += 1,
            Stmt::ScopeEnd => depth = depth.saturating_sub(1),
            Stmt::Label(l) if depth == 0 => {
                outer[l.0 as usize] = true;
                if let Some(m) = unguarded_jump_at(&body[k + 1..]) {
                    hops.push((*l, m));
                }
            }
            Stmt::Instr(ins) if depth == 0 && ins.opcode == Opcode::BRA => {
                if let Some(Operand::Label(target)) = ins.operands.first() {
                    branches.push((k, *target));
                }
            }
            _ => {}
        }
    }
    // For each label at depth 0: the target (also at depth 0) of the
    // unguarded `bra` right after it.
    let mut forward: Vec<Option<LabelId>> = vec![None; labels];
    for &(l, m) in &hops {
        if outer[m.0 as usize] {
            forward[l.0 as usize] = Some(m);
        }
    }
    let mut threads = Vec::new();
    for &(k, target) in &branches {
        // Follow the chain, stopping at a cycle (an empty infinite loop).
        let mut to = target;
        let mut seen: FxHashSet<LabelId> = FxHashSet::default();
        while let Some(next) = forward[to.0 as usize] {
            if !seen.insert(to) || next == to {
                break;
            }
            to = next;
        }
        // Every hop is an unconditional jump with no other effect: any label
        // on the chain is the same place.
        if to != target {
            threads.push((k, to));
        }
    }
    threads
}

/// The target of the unguarded `bra` to a label that `rest` starts with,
/// past labels, `.loc` and pragmas.
fn unguarded_jump_at(rest: &[Stmt]) -> Option<LabelId> {
    for t in rest {
        match t {
            Stmt::Label(_) | Stmt::Loc(_) | Stmt::Pragma(_) => {}
            Stmt::Instr(i) if i.opcode == Opcode::BRA && i.guard.is_none() => {
                return match i.operands.first() {
                    Some(Operand::Label(m)) => Some(*m),
                    _ => None,
                };
            }
            _ => return None,
        }
    }
    None
}

/// Removes the instructions of blocks the entry does not reach; says
/// whether it removed any.
fn remove_unreachable(f: &mut Function) -> bool {
    let drop = unreachable_instructions(f, &Cfg::build(f));
    let Some(body) = f.body.as_mut() else { return false };
    super::body::remove_marked(body, &drop)
}

/// Per statement: is it an instruction of a block the entry does not
/// reach (`cfg` is `f`'s)?
fn unreachable_instructions(f: &Function, cfg: &Cfg) -> Vec<bool> {
    let Some(body) = f.body.as_ref() else { return Vec::new() };
    let mut drop = vec![false; body.len()];
    for b in cfg.unreachable() {
        for k in cfg.block(b).stmts.clone() {
            drop[k] = matches!(body[k], Stmt::Instr(_));
        }
    }
    drop
}

/// Removes the labels nothing names (not in functions with `.loc`); says
/// whether it removed any.
fn remove_unused_labels(f: &mut Function) -> bool {
    let Some(named) = unused_labels(f) else { return false };
    remove_labels(f, &named);
    true
}

/// Removes the labels not `named` (per label id).
fn remove_labels(f: &mut Function, named: &[bool]) {
    if let Some(body) = f.body.as_mut() {
        body.retain(|s| !matches!(s, Stmt::Label(l) if !named[l.0 as usize]));
    }
}

/// Per label id, does something name it, when some label is named by
/// nothing (and the function has no `.loc`).
fn unused_labels(f: &Function) -> Option<Vec<bool>> {
    let body = f.body.as_ref()?;
    if body.iter().any(|s| matches!(s, Stmt::Loc(_))) {
        return None;
    }
    let mut named = vec![false; f.labels.len()];
    // Per label id, is it defined in the body: noted on the way, not
    // looked for by another walk over the body (renderer -O2: 0.4 M host
    // instructions).
    let mut defined = vec![false; f.labels.len()];
    for s in body.iter() {
        match s {
            Stmt::Instr(ins) => {
                for op in &ins.operands {
                    op.for_each_operand(&mut |o| {
                        if let Operand::Label(l) = o {
                            named[l.0 as usize] = true;
                        }
                    });
                }
            }
            Stmt::Label(l) => defined[l.0 as usize] = true,
            Stmt::BranchTargets(l, targets) => {
                named[l.0 as usize] = true;
                for t in targets {
                    named[t.0 as usize] = true;
                }
            }
            Stmt::CallTargets(l, _) | Stmt::CallPrototype(l, _) => {
                named[l.0 as usize] = true;
            }
            _ => {}
        }
    }
    if !defined.iter().zip(&named).any(|(&d, &n)| d && !n) {
        return None;
    }
    Some(named)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn function(body: &str) -> Function {
        let text = format!(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n{body}\n}}\n");
        let m = ptx_ir::parse_str(&text).unwrap();
        let ptx_ir::ir::Item::Func(f) = m.items.into_iter().find(|i| matches!(i, ptx_ir::ir::Item::Func(_))).unwrap() else { unreachable!() };
        *f
    }

    /// Steps 2 and 3 as every round of them, step 3 looking each time.
    fn every_step_every_round(h: &mut Function) -> bool {
        let mut changed = false;
        while thread_jumps(h) | remove_branches_to_next(h) | remove_unreachable(h) {
            changed = true;
        }
        changed
    }

    /// Step 3 looking again only after step 2 changed something gives the
    /// function and the answer of every step in every round: on chains of
    /// jumps, branches to the next statement that removing unreachable code
    /// makes, and unreachable code that threading makes.
    #[test]
    fn steps_2_and_3_as_every_step_every_round() {
        let bodies = [
            // Unreachable code between a branch and its target: removing it
            // makes the branch one to the next statement.
            ".reg .b32 %r<4>; .reg .pred %p<2>; mov.u32 %r1, %tid.x; setp.eq.u32 %p1, %r1, 0; @%p1 bra L2; bra L1; add.u32 %r2, %r1, 1; L1: add.u32 %r3, %r1, 2; L2: ret;",
            // A chain of jumps over empty blocks, whose hops become unreachable.
            ".reg .b32 %r<4>; .reg .pred %p<2>; mov.u32 %r1, %tid.x; setp.eq.u32 %p1, %r1, 0; @%p1 bra A; bra C; A: bra B; B: bra C; add.u32 %r2, %r1, 1; C: ret;",
            // Nothing to do.
            ".reg .b32 %r<4>; mov.u32 %r1, %tid.x; add.u32 %r2, %r1, 1; ret;",
            // A branch to the next statement only (the first round's
            // finding taken, and its unreachable code looked for again).
            ".reg .b32 %r<4>; .reg .pred %p<2>; mov.u32 %r1, %tid.x; setp.eq.u32 %p1, %r1, 0; @%p1 bra L1; L1: add.u32 %r2, %r1, 1; ret;",
            // A branch to the next statement and unreachable code after it
            // (found again once the branch went: the statements moved).
            ".reg .b32 %r<4>; .reg .pred %p<2>; mov.u32 %r1, %tid.x; setp.eq.u32 %p1, %r1, 0; @%p1 bra L1; L1: add.u32 %r2, %r1, 1; ret; add.u32 %r3, %r1, 2;",
            // Unreachable code only, and a loop.
            ".reg .b32 %r<4>; .reg .pred %p<2>; mov.u32 %r1, 0; L: add.u32 %r1, %r1, 1; setp.lt.u32 %p1, %r1, 9; @%p1 bra L; ret; add.u32 %r2, %r1, 1; bra L;",
        ];
        for body in bodies {
            let mut a = function(body);
            let mut b = a.clone();
            // The first round as found beforehand, as `edit` and `run` take it.
            let mut c = a.clone();
            let first = FirstRound::of(&c, &mut Analyses::default());
            assert_eq!(steps_2_and_3(&mut a, None), every_step_every_round(&mut b), "{body}");
            assert_eq!(a, b, "{body}");
            assert_eq!(first.changes, every_step_every_round(&mut function(body)), "{body}");
            assert_eq!(steps_2_and_3(&mut c, Some(first)), every_step_every_round(&mut function(body)), "{body}");
            assert_eq!(c, b, "{body}");
        }
    }
}
