//! Matching an instruction's modifiers and operands against the forms of its opcode.
//!
//! Modifiers are matched order-insensitively across slots (producers and
//! ptxas accept many orders the manual does not show), but in order among
//! slots that accept the same token (`cvt.f32.s32`: first type is the
//! destination's). The result is slot-aligned, which is the canonical order
//! the printer uses.

use super::mismatch::{FormMismatch, Mismatch};
use super::{FormId, Mod, Opcode, OperandKind, SlotRole};
use smallvec::SmallVec;

/// Modifiers aligned with the slots of a form; `Mod::NONE` for an empty optional slot.
pub type SlotMods = SmallVec<[Mod; 8]>;

/// The syntactic kind of a parsed operand, for matching against a form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParsedKind {
    Value,
    Address,
    List,
    /// `var[i]`: an address where an address is expected, a value elsewhere.
    Either,
}

/// Finds the first form of `opcode` that takes `mods` (in written order) and
/// operands of the given kinds. Returns the form and the slot-aligned modifiers.
pub fn match_form(opcode: Opcode, mods: &[Mod], operands: &[ParsedKind]) -> Result<(FormId, SlotMods), FormMismatch> {
    let fail = |reason| Err(FormMismatch { opcode, mods: mods.into(), reason });
    let mut first_operand_error = None;
    for form in opcode.forms() {
        let Some(aligned) = assign_slots(form, mods) else { continue };
        match check_operands(form, operands) {
            Ok(()) => return Ok((form, aligned)),
            Err(e) => {
                if first_operand_error.is_none() {
                    first_operand_error = Some(e);
                }
            }
        }
    }
    if let Some(e) = first_operand_error {
        return fail(e);
    }
    for (k, m) in mods.iter().enumerate() {
        if !opcode.forms().any(|f| f.slots().iter().any(|s| s.accepts(*m))) {
            return fail(Mismatch::UnknownModifier(k));
        }
    }
    fail(Mismatch::NoForm)
}

/// Assigns written modifiers to the slots of `form`, or `None` if they do not fit.
pub fn assign_slots(form: FormId, mods: &[Mod]) -> Option<SlotMods> {
    let slots = form.slots();
    if mods.len() > slots.len() {
        return None;
    }
    let required = slots.iter().filter(|s| !s.optional).count();
    if mods.len() < required {
        return None;
    }
    let mut filled: SlotMods = SmallVec::from_elem(Mod::NONE, slots.len());
    let mut budget = 4096u32;
    if search(form, mods, 0, &mut filled, &mut budget) {
        Some(filled)
    } else {
        None
    }
}

fn search(form: FormId, mods: &[Mod], i: usize, filled: &mut SlotMods, budget: &mut u32) -> bool {
    let slots = form.slots();
    if i == mods.len() {
        return slots.iter().zip(filled.iter()).all(|(s, m)| s.optional || *m != Mod::NONE);
    }
    // Prune: the required slots still empty must fit in the tokens left.
    let empty_required = slots.iter().zip(filled.iter()).filter(|(s, m)| !s.optional && **m == Mod::NONE).count();
    if empty_required > mods.len() - i {
        return false;
    }
    for (k, s) in slots.iter().enumerate() {
        if filled[k] != Mod::NONE || !s.accepts(mods[i]) || !keeps_order(form, filled, k, mods[i]) {
            continue;
        }
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        filled[k] = mods[i];
        if search(form, mods, i + 1, filled, budget) {
            return true;
        }
        filled[k] = Mod::NONE;
    }
    false
}

/// Written order is free between unrelated slots (`ld.global.nc` = `ld.nc.global`),
/// but positional between slots where it carries meaning: every data type and
/// state space (`cvt.f32.s32`: destination first; `cp.async.bulk.shared::cluster.global`),
/// and slots that could take each other's token (`mma.row.col`). Tokens are
/// assigned in written order, so a token placed at slot `k` must not land
/// before such a slot already filled by an earlier token.
fn keeps_order(form: FormId, filled: &SlotMods, k: usize, m: Mod) -> bool {
    let slots = form.slots();
    let positional = |r: SlotRole| matches!(r, SlotRole::Type | SlotRole::Space);
    for (j, prev) in filled.iter().enumerate().skip(k + 1) {
        if *prev == Mod::NONE {
            continue;
        }
        let same_role = slots[j].role == slots[k].role && positional(slots[k].role);
        if same_role || slots[j].accepts(m) || slots[k].accepts(*prev) {
            return false;
        }
    }
    true
}

fn check_operands(form: FormId, operands: &[ParsedKind]) -> Result<(), Mismatch> {
    let (min, max) = form.operand_count();
    if operands.len() < min || operands.len() > max {
        return Err(Mismatch::OperandCount { form, min, max, found: operands.len() });
    }
    for (index, (spec, got)) in form.operands().iter().zip(operands).enumerate() {
        let ok = match (spec.kind, got) {
            (_, ParsedKind::Either) => spec.kind != OperandKind::List,
            (OperandKind::Value, ParsedKind::Value) => true,
            (OperandKind::Address, ParsedKind::Address) => true,
            (OperandKind::List, ParsedKind::List) => true,
            _ => false,
        };
        if !ok {
            return Err(Mismatch::OperandKind { form, index, expected: spec.kind });
        }
    }
    Ok(())
}

/// How far the written modifiers are from a form: the modifiers it has no
/// slot for and the required slots left empty. Used to explain a mismatch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Closest {
    pub form: FormId,
    /// Indices into the written modifiers.
    pub extra: Vec<usize>,
    /// Indices into the form's slots.
    pub missing: Vec<usize>,
}

/// The forms of `opcode` nearest to the written modifiers (fewest extra
/// plus missing), in table order.
pub fn closest_forms(opcode: Opcode, mods: &[Mod]) -> Vec<Closest> {
    let mut best: Vec<Closest> = Vec::new();
    for form in opcode.forms() {
        let slots = form.slots();
        let mut filled = vec![false; slots.len()];
        let mut extra = Vec::new();
        for (k, m) in mods.iter().enumerate() {
            match (0..slots.len()).find(|&j| !filled[j] && slots[j].accepts(*m)) {
                Some(j) => filled[j] = true,
                None => extra.push(k),
            }
        }
        let missing: Vec<usize> = (0..slots.len()).filter(|&j| !filled[j] && !slots[j].optional).collect();
        let c = Closest { form, extra, missing };
        let distance = |c: &Closest| c.extra.len() + c.missing.len();
        match best.first().map(distance) {
            Some(d) if distance(&c) > d => {}
            Some(d) if distance(&c) == d => best.push(c),
            _ => best = vec![c],
        }
    }
    best
}

/// The first of [`closest_forms`].
pub fn closest_form(opcode: Opcode, mods: &[Mod]) -> Option<Closest> {
    closest_forms(opcode, mods).into_iter().next()
}
