//! Building a [`Program`] instruction by instruction: each instruction gets
//! the next placeholder register as its destination, typed from the ISA
//! tables; an instruction the tables reject is remembered and reported by
//! [`Builder::finish`] (never a panic).

use super::program::Program;

use ptx_ir::ir::{Guard, Imm, Instruction, IntLit, Operand, Radix, RegId};
use ptx_ir::isa::{Mod, Opcode, ScalarType, TypeClass};

/// A program under construction.
pub struct Builder {
    program: Program,
    error: Option<String>,
}

impl Builder {
    /// A program with inputs of these types.
    pub fn new(inputs: &[ScalarType]) -> Builder {
        Builder { program: Program { inputs: inputs.len(), types: inputs.to_vec(), body: Vec::new() }, error: None }
    }

    /// Input `k` as an operand.
    pub fn input(&self, k: usize) -> Operand {
        Operand::reg(RegId(k as u32))
    }

    /// Appends `opcode.mods d, srcs...` writing a new register; gives `d`.
    pub fn push(&mut self, opcode: Opcode, mods: &[Mod], srcs: &[Operand]) -> Operand {
        self.append(None, None, opcode, mods, srcs)
    }

    /// Appends `@guard opcode.mods d, srcs...`. `d` is `into` (a register
    /// written before, which keeps its value when the guard is false) or,
    /// without it, a new register (unwritten when the guard is false).
    pub fn push_guarded(&mut self, guard: Guard, into: Option<&Operand>, opcode: Opcode, mods: &[Mod], srcs: &[Operand]) -> Operand {
        self.append(Some(guard), into, opcode, mods, srcs)
    }

    fn append(&mut self, guard: Option<Guard>, into: Option<&Operand>, opcode: Opcode, mods: &[Mod], srcs: &[Operand]) -> Operand {
        let own = RegId(self.program.types.len() as u32);
        let dest = into.cloned().unwrap_or(Operand::reg(own));
        let operands = std::iter::once(dest.clone()).chain(srcs.iter().cloned());
        let built = Instruction::new(opcode, mods, operands).map_err(|e| format!("`{}` {mods:?}: {e:?}", opcode.name()));
        let ty = built.as_ref().ok().and_then(|ins| ins.operand_type(0));
        match (built, ty) {
            (Ok(mut ins), Some(ty)) => {
                ins.guard = guard;
                self.program.body.push(ins);
                self.program.types.push(ty);
            }
            (Ok(_), None) => self.fail(format!("`{}`: the destination has no type", opcode.name())),
            (Err(e), _) => self.fail(e),
        }
        dest
    }

    /// Makes [`Builder::finish`] fail with `message` (a lowering that finds
    /// no sequence).
    pub fn fail(&mut self, message: String) {
        self.error.get_or_insert(message);
        // Keep the register numbering going so later operands stay distinct.
        self.program.types.push(ScalarType::B32);
    }

    /// The program, or the first instruction the tables rejected, or what
    /// [`Program::check`] finds wrong.
    pub fn finish(self) -> Result<Program, String> {
        if let Some(e) = self.error {
            return Err(e);
        }
        self.program.check()?;
        Ok(self.program)
    }
}

/// The type modifier of a scalar type (`.u32`).
pub fn type_mod(t: ScalarType) -> Mod {
    Mod::from_text(t.text()).expect("every scalar type is a modifier of the tables")
}

/// An integer immediate with the bit pattern `bits` at the width of `ty`,
/// written as a signed decimal for signed types, unsigned otherwise (hex
/// beyond the `.s64` range).
pub fn imm(bits: u128, ty: ScalarType) -> Operand {
    let width = ty.bits().clamp(1, 64);
    let bits = (bits & ((1u128 << width) - 1)) as u64;
    let lit = if ty.class() == TypeClass::Signed {
        let shift = 64 - width;
        IntLit::dec(((bits << shift) as i64) >> shift)
    } else if bits <= i64::MAX as u64 {
        IntLit::dec(bits as i64)
    } else {
        IntLit { value: bits, radix: Radix::Hex, unsigned: true, suffix: false }
    };
    Operand::Imm(Imm::Int(lit))
}
