//! What the verifier needs to know of an instruction form before it looks
//! at an instruction of it, found once per module for every form (in
//! [`super::Context`]): which of the form's requirements the module does not
//! meet, and which checks can find anything in its instructions at all.
//! Reading these from the form's slots and operands at every instruction
//! was most of what verifying an instruction cost.

use crate::isa::{Flags, FormId, SlotRole};

/// One form's facts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct FormFacts {
    /// Which of the form's requirements the module's version or target does
    /// not meet (bit `k`: requirement `k`; all ones for a form with more
    /// than 64, which none has): only those can report anything.
    pub unmet: u64,
    /// A slot of the form takes a vector width (`.v4`): an instruction of a
    /// form without one has no [`crate::ir::Instruction::vector`].
    pub vector_slot: bool,
    /// An operand accesses memory: only then are state spaces checked.
    pub memory: bool,
    /// The form reads the carry flag.
    pub carry_in: bool,
}

impl FormFacts {
    /// The facts of `form`, given which of its requirements are unmet.
    pub fn of(form: FormId, unmet: u64) -> FormFacts {
        FormFacts {
            unmet,
            vector_slot: form.slots().iter().any(|s| s.role == SlotRole::Vector),
            memory: form.operands().iter().any(|o| o.mem.is_some()),
            carry_in: form.flags().contains(Flags::CARRY_IN),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Item, Stmt};

    /// Each fact agrees with what the verifier would otherwise read at the
    /// instruction: the vector width, memory operands, the carry flag.
    #[test]
    fn facts_agree_with_the_instructions() {
        let text = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n.reg .b32 %r<9>;\n.reg .b64 %rd<3>;\n.reg .pred %p;\n\
            ld.param.u64 %rd1, [p];\nld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];\nmov.b32 %r5, %r1;\nmov.v2.b32 {%r6, %r7}, %rd2;\nadd.cc.u32 %r5, %r5, %r2;\naddc.u32 %r6, %r6, %r3;\n\
            setp.lt.u32 %p, %r5, 4;\n@%p st.global.v2.u32 [%rd1], {%r5, %r6};\natom.global.add.u32 %r8, [%rd1], 1;\nret;\n}\n";
        let m = crate::parse_str(text).unwrap_or_else(|d| panic!("{d}"));
        let Item::Func(f) = &m.items[0] else { panic!() };
        let mut seen = (false, false, false);
        for s in f.body.as_ref().unwrap() {
            let Stmt::Instr(ins) = s else { continue };
            let facts = FormFacts::of(ins.form, 0);
            assert!(facts.vector_slot || ins.vector().is_none(), "{:?}", ins.form);
            assert_eq!(facts.memory, ins.operands.iter().any(|o| matches!(o, crate::ir::Operand::Addr(_))), "{:?}", ins.form);
            assert_eq!(facts.carry_in, ins.opcode == crate::isa::Opcode::ADDC, "{:?}", ins.form);
            seen.0 |= ins.vector().is_some();
            seen.1 |= facts.memory;
            seen.2 |= facts.carry_in;
        }
        assert_eq!(seen, (true, true, true), "the kernel has an instruction of each kind");
    }
}
