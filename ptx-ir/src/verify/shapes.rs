//! Instructions the verifier found nothing wrong with, by their shape: what
//! its per-instruction checks read of an instruction (opcode, form,
//! modifiers, guard type, and of each operand its kind and, for a register,
//! its type and vector width), packed into a few words. Machine-made PTX
//! repeats a few hundred shapes thousands of times (`add.s32` of three
//! `.s32` registers), and another instruction of a shape found clean in the
//! same module is clean too: the checks are functions of the shape and the
//! module's [`super::Context`]. They were most of verifying a function.
//!
//! Only instructions whose operands the shape describes whole have one:
//! registers without selectors, literals, special registers, variables,
//! labels, `_`, `r+offset` and addresses on a register or a number. Not
//! `call` (its arity check reads the callee's name), nor vectors, pairs,
//! lists, array elements, selectors or addresses on a variable (the state
//! space check reads its name).

use crate::ir::{AddrBase, Function, Imm, Instruction, Operand};
use crate::isa::Opcode;
use rustc_hash::FxHashSet;

/// An instruction's shape ([`Shape::of`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Shape([u64; WORDS]);

/// Word by word, without a branch or a call: `==` of the arrays called
/// `memcmp` (matrix_free: 22,496 calls).
impl PartialEq for Shape {
    #[inline]
    fn eq(&self, other: &Shape) -> bool {
        self.0.iter().zip(&other.0).fold(0, |diff, (a, b)| diff | (a ^ b)) == 0
    }
}

impl Eq for Shape {}

/// Word by word (an array's hash goes through its bytes).
impl std::hash::Hash for Shape {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        for w in self.0 {
            state.write_u64(w);
        }
    }
}

/// Words of a [`Shape`]: the head (opcode, form, guard, counts), the
/// modifiers four to a word, the operands two to a word.
const WORDS: usize = 1 + MODS_MAX / 4 + OPERANDS_MAX / 2;

/// The most modifiers (form slots) of an instruction with a shape.
const MODS_MAX: usize = 8;

/// The most operands of an instruction with a shape.
const OPERANDS_MAX: usize = 6;

/// An operand's kind in its shape (the low byte of its 32 bits).
mod kind {
    pub const REG: u32 = 1;
    pub const INT: u32 = 2;
    pub const FLOAT: u32 = 3;
    pub const SREG: u32 = 4;
    pub const SYM: u32 = 5;
    pub const LABEL: u32 = 6;
    pub const SINK: u32 = 7;
    pub const REG_OFFSET: u32 = 8;
    pub const ADDR_REG: u32 = 9;
    pub const ADDR_IMM: u32 = 10;
}

impl Shape {
    /// The shape of `ins`, a statement of `f` whose register ids are all in
    /// its table; `None` when the instruction has none (see the module).
    #[inline]
    pub fn of(f: &Function, ins: &Instruction) -> Option<Shape> {
        if ins.mods.len() > MODS_MAX || ins.operands.len() > OPERANDS_MAX || ins.opcode == Opcode::CALL {
            return None;
        }
        let mut words = [0u64; WORDS];
        let guard = match ins.guard {
            Some(g) => 1 + f.try_reg(g.reg)?.ty as u64,
            None => 0,
        };
        words[0] = u64::from(ins.opcode.0) | u64::from(ins.form.0) << 16 | guard << 32 | (ins.mods.len() as u64) << 40 | (ins.operands.len() as u64) << 48;
        let mods: &[crate::isa::Mod] = &ins.mods;
        for (k, m) in mods.iter().enumerate() {
            words[1 + k / 4] |= u64::from(m.0) << (16 * (k % 4));
        }
        for (k, op) in ins.operands.iter().enumerate() {
            let bits = match op {
                Operand::Reg(r) if r.sel.is_none() => {
                    let reg = f.try_reg(r.reg)?;
                    // A vector width as written in a declaration (`.v4`): 0 for none.
                    let vector = reg.vector.map_or(0, |n| u32::from(n) + 1);
                    if vector > 0xff {
                        return None;
                    }
                    kind::REG | (reg.ty as u32) << 8 | vector << 16
                }
                Operand::Imm(Imm::Int(_)) => kind::INT,
                Operand::Imm(Imm::Float(_)) => kind::FLOAT,
                Operand::SReg(..) => kind::SREG,
                Operand::Sym(_) => kind::SYM,
                Operand::Label(_) => kind::LABEL,
                Operand::Sink => kind::SINK,
                Operand::RegOffset(..) => kind::REG_OFFSET,
                Operand::Addr(a) => match a.base {
                    AddrBase::Reg(r) => kind::ADDR_REG | (f.try_reg(r)?.ty as u32) << 8,
                    AddrBase::Imm(_) => kind::ADDR_IMM,
                    AddrBase::Sym(_) => return None,
                },
                _ => return None,
            };
            words[1 + MODS_MAX / 4 + k / 2] |= u64::from(bits) << (32 * (k % 2));
        }
        Some(Shape(words))
    }
}

/// The shapes of the instructions of one module found clean so far.
#[derive(Default)]
pub(super) struct CleanShapes {
    shapes: FxHashSet<Shape>,
    /// Instructions are given shapes (off: every instruction is checked).
    on: bool,
}

impl CleanShapes {
    pub fn new(on: bool) -> CleanShapes {
        CleanShapes { shapes: FxHashSet::default(), on }
    }

    /// [`Shape::of`], or `None` when shapes are off.
    #[inline]
    pub fn shape(&self, f: &Function, ins: &Instruction) -> Option<Shape> {
        if !self.on {
            return None;
        }
        Shape::of(f, ins)
    }

    pub fn contains(&self, shape: &Shape) -> bool {
        self.shapes.contains(shape)
    }

    pub fn insert(&mut self, shape: Shape) {
        self.shapes.insert(shape);
    }
}

#[cfg(test)]
mod tests {
    use super::super::{verify_module_with, Origin};

    /// Verifies `text` with and without skipping the shapes found clean,
    /// checks both give the same diagnostics, and returns how many.
    fn both_ways(name: &str, text: &[u8]) -> usize {
        let Ok(p) = crate::parse(name, text) else { return 0 };
        let skipping = verify_module_with(&p.module, &p.source_map, name, text, Origin::Any, true);
        let checking = verify_module_with(&p.module, &p.source_map, name, text, Origin::Any, false);
        assert_eq!(skipping, checking, "{name}");
        checking.len()
    }

    /// Pairs of instructions of one shape but for one part, the first
    /// clean and the second not: the second is reported all the same.
    #[test]
    fn a_shape_found_clean_hides_no_error_of_another() {
        let decls = ".reg .u32 %r<4>;\n.reg .f32 %f<4>;\n.reg .pred %p<3>;\n.reg .b64 %rd<3>;\n.reg .v2 .u32 %v1;\n.reg .v4 .u32 %w1;\n";
        let pairs = [
            // A register's type.
            ("add.u32 %r1, %r2, %r3;", "add.u32 %r1, %r2, %f1;"),
            ("mov.u32 %r1, %r2;", "mov.u32 %r1, %f2;"),
            // A literal's kind.
            ("add.u32 %r1, %r2, 1;", "add.u32 %r1, %r2, 1.0;"),
            // The guard's type.
            ("@%p1 add.u32 %r1, %r2, %r3;", "@%r1 add.u32 %r1, %r2, %r3;"),
            // The modifiers.
            ("add.u32 %r1, %r2, %r3;", "add.u64 %r1, %r2, %r3;"),
            // A register's vector width.
            ("ld.global.v2.u32 %v1, [%rd1];", "ld.global.v2.u32 %w1, [%rd1];"),
            // An address register's type.
            ("ld.global.u32 %r1, [%rd1];", "ld.global.u32 %r1, [%r2];"),
            // An operand's kind.
            ("mov.u32 %r1, %r2;", "mov.u32 %tid.x, %r2;"),
            ("ld.global.u32 %r1, [%rd1];", "ld.global.u32 %r1, [8];"),
        ];
        for (clean, bad) in pairs {
            let text = format!(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{{\n{decls}{clean}\n{bad}\n{clean}\n{bad}\nret;\n}}\n");
            let alone = format!(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{{\n{decls}{clean}\nret;\n}}\n");
            assert_eq!(both_ways("alone.ptx", alone.as_bytes()), 0, "{clean}");
            assert!(both_ways("pair.ptx", text.as_bytes()) >= 2, "{bad} is an error, twice");
        }
    }

    /// The verifier's invalid files and valid mutants: the same
    /// diagnostics both ways.
    #[test]
    fn skipping_clean_shapes_changes_no_diagnostic() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/verify");
        let mut files = 0;
        let mut reported = 0;
        for dir in ["invalid", "valid-mutants"] {
            let mut paths: Vec<_> = std::fs::read_dir(root.join(dir)).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "ptx")).collect();
            paths.sort();
            for p in paths {
                let text = std::fs::read(&p).unwrap();
                reported += both_ways(&p.display().to_string(), &text);
                files += 1;
            }
        }
        assert!(files > 100 && reported > 50, "{files} files, {reported} diagnostics");
    }
}
