//! What the verifier needs to know of an instruction form before it looks
//! at an instruction of it, found once per module for every form (in
//! [`super::Context`]): which of the form's requirements the module does not
//! meet, and which checks can find anything in its instructions at all.
//! Reading these from the form's slots and operands at every instruction
//! was most of what verifying an instruction cost.

use crate::ir::Instruction;
use crate::isa::{Flags, FormId, Mod, ModKind, Requirement, ScalarType, SlotRole, StateSpace};

/// One form's facts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct FormFacts {
    /// Which of the form's requirements the module's version or target does
    /// not meet (bit `k`: requirement `k`; all ones for a form with more
    /// than 64, which none has): only those can report anything.
    pub unmet: u64,
    /// The modifiers that make an unmet requirement apply (by
    /// [`trigger_bit`]; a bit may stand for several modifiers), all ones
    /// when one applies whatever is written: an instruction none of whose
    /// modifiers has a bit here meets every requirement that applies to it.
    /// Most instructions of an old target's module are so (renderer, sm_20:
    /// `ld` and `st` have requirements for the newer cache and scope
    /// modifiers), and looking through each unmet requirement's modifiers
    /// for theirs was 5 % of verifying it.
    pub triggers: u128,
    /// Where the form's vector width (`.v4`) is written.
    pub vector: RoleSlots,
    /// Where the form's data types are written.
    pub types: RoleSlots,
    /// Where the form's state spaces are written.
    pub spaces: RoleSlots,
    /// An operand accesses memory: only then are state spaces checked.
    pub memory: bool,
    /// The form reads the carry flag.
    pub carry_in: bool,
}

/// The slots of one role in a form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RoleSlots {
    None,
    One(u8),
    Several,
}

impl RoleSlots {
    fn of(form: FormId, role: SlotRole) -> RoleSlots {
        let mut slots = form.slots().iter().enumerate().filter(|(_, s)| s.role == role).map(|(k, _)| k);
        match (slots.next(), slots.next()) {
            (None, _) => RoleSlots::None,
            (Some(k), None) => u8::try_from(k).map_or(RoleSlots::Several, RoleSlots::One),
            _ => RoleSlots::Several,
        }
    }

    /// The kind of the modifier written in the role's slot, when the form
    /// has one such slot: what the instruction's accessors find by going
    /// through all its slots. `None` with no such slot; `Err` with several.
    fn kind(self, ins: &Instruction) -> Result<Option<ModKind>, ()> {
        match self {
            RoleSlots::None => Ok(None),
            RoleSlots::One(k) => Ok(ins.mods.get(k as usize).map(|m| m.kind())),
            RoleSlots::Several => Err(()),
        }
    }
}

/// A set of modifiers (by index).
pub(super) struct ModSet([u64; MOD_WORDS]);

/// Words of 64 bits a [`ModSet`] needs for every modifier of the tables.
const MOD_WORDS: usize = crate::isa::MOD_TEXT.len().div_ceil(64);

impl ModSet {
    /// The modifiers written in an instruction's slots (with
    /// [`Mod::NONE`] for an empty one).
    pub fn of(mods: &[Mod]) -> ModSet {
        let mut set = ModSet([0; MOD_WORDS]);
        for m in mods {
            set.0[m.0 as usize / 64] |= 1 << (m.0 % 64);
        }
        set
    }

    /// Is modifier `m` (by index) in the set?
    pub fn contains(&self, m: u16) -> bool {
        self.0.get(m as usize / 64).is_some_and(|w| w & 1 << (m % 64) != 0)
    }
}

/// The bit of [`FormFacts::triggers`] that stands for modifier `m` (by index).
pub(super) fn trigger_bit(m: u16) -> u128 {
    1 << (m % 128)
}

impl FormFacts {
    /// The facts of `form`, given which of its requirements are unmet.
    pub fn of(form: FormId, unmet: u64) -> FormFacts {
        let unmet_requirements = form.requirements().iter().enumerate().filter(|(k, _)| *k >= 64 || unmet & 1 << k != 0).map(|(_, r)| r);
        FormFacts {
            unmet,
            triggers: unmet_requirements.fold(0, |bits, r: &Requirement| if r.when.is_empty() { u128::MAX } else { r.when.iter().fold(bits, |bits, &m| bits | trigger_bit(m)) }),
            vector: RoleSlots::of(form, SlotRole::Vector),
            types: RoleSlots::of(form, SlotRole::Type),
            spaces: RoleSlots::of(form, SlotRole::Space),
            memory: form.operands().iter().any(|o| o.mem.is_some()),
            carry_in: form.flags().contains(Flags::CARRY_IN),
        }
    }

    /// [`Instruction::vector`] of an instruction of this form.
    pub fn vector(&self, ins: &Instruction) -> Option<u8> {
        match self.vector.kind(ins) {
            Ok(Some(ModKind::Vector(n))) => Some(n),
            Ok(_) => None,
            Err(()) => ins.vector(),
        }
    }

    /// [`Instruction::ty`] of an instruction of this form.
    pub fn ty(&self, ins: &Instruction) -> Option<ScalarType> {
        match self.types.kind(ins) {
            Ok(Some(ModKind::Type(t))) => Some(t),
            Ok(_) => None,
            Err(()) => ins.ty(),
        }
    }

    /// The `k`th of [`Instruction::spaces`] of an instruction of this form
    /// (collecting them all was half of checking state spaces).
    pub fn space(&self, ins: &Instruction, k: usize) -> Option<StateSpace> {
        match self.spaces.kind(ins) {
            Ok(Some(ModKind::Space(s))) if k == 0 => Some(s),
            Ok(_) => None,
            Err(()) => ins.spaces().get(k).copied(),
        }
    }

    /// May an unmet requirement apply to this instruction of the form?
    pub fn may_be_unavailable(&self, ins: &Instruction) -> bool {
        self.unmet != 0 && (self.triggers == u128::MAX || ins.mods.iter().any(|m| *m != Mod::NONE && self.triggers & trigger_bit(m.0) != 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Item, Stmt};

    /// Each fact agrees with what the verifier would otherwise read at the
    /// instruction: the vector width, data type and state spaces (of forms
    /// with one slot for them and with several), memory operands, the carry flag.
    #[test]
    fn facts_agree_with_the_instructions() {
        let text = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n.reg .b32 %r<9>;\n.reg .b64 %rd<3>;\n.reg .pred %p;\n\
            ld.param.u64 %rd1, [p];\nld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];\nmov.b32 %r5, %r1;\nmov.v2.b32 {%r6, %r7}, %rd2;\nadd.cc.u32 %r5, %r5, %r2;\naddc.u32 %r6, %r6, %r3;\n\
            setp.lt.u32 %p, %r5, 4;\n@%p st.global.v2.u32 [%rd1], {%r5, %r6};\natom.global.add.u32 %r8, [%rd1], 1;\ncp.async.ca.shared.global [%r1], [%rd1], 4;\ncvt.rn.f32.s32 %r2, %r3;\nret;\n}\n";
        let m = crate::parse_str(text).unwrap_or_else(|d| panic!("{d}"));
        let Item::Func(f) = &m.items[0] else { panic!() };
        let mut seen = (false, false, false, false, false);
        for s in f.body.as_ref().unwrap() {
            let Stmt::Instr(ins) = s else { continue };
            let facts = FormFacts::of(ins.form, 0);
            assert_eq!(facts.vector(ins), ins.vector(), "{:?}", ins.form);
            assert_eq!(facts.ty(ins), ins.ty(), "{:?}", ins.form);
            for k in 0..3 {
                assert_eq!(facts.space(ins, k), ins.spaces().get(k).copied(), "{:?} {k}", ins.form);
            }
            assert_eq!(facts.memory, ins.operands.iter().any(|o| matches!(o, crate::ir::Operand::Addr(_))), "{:?}", ins.form);
            assert_eq!(facts.carry_in, ins.opcode == crate::isa::Opcode::ADDC, "{:?}", ins.form);
            seen.0 |= ins.vector().is_some();
            seen.1 |= facts.memory;
            seen.2 |= facts.carry_in;
            seen.3 |= facts.spaces == RoleSlots::Several;
            seen.4 |= facts.types == RoleSlots::Several;
        }
        assert_eq!(seen, (true, true, true, true, true), "the kernel has an instruction of each kind");
    }

    #[test]
    fn a_mod_set_holds_what_was_written() {
        let written = [Mod::NONE, Mod::from_text(".f32").unwrap(), Mod::from_text(".v4").unwrap()];
        let set = ModSet::of(&written);
        for m in Mod::all().chain([Mod::NONE]) {
            assert_eq!(set.contains(m.0), written.contains(&m), "{m:?}");
        }
        assert!(!set.contains(u16::MAX));
    }
}
