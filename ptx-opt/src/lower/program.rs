//! Straight-line programs over placeholder registers, and the runner that
//! gives their exact meaning with the evaluator.
//!
//! A [`Program`] is what a lowering produces and what a rewrite rule's two
//! sides are checked as: `inputs` input registers `RegId(0..inputs)`, then a
//! body of instructions made with [`Instruction::new`] (so checked against
//! the ISA tables), whose operands are placeholder registers and immediates.
//!
//! The registers an instruction writes:
//!
//! - the k-th instruction writes `RegId(inputs + k)` (its one written
//!   operand, a plain register; `d|p` pairs, vectors and sinks are not used);
//! - a guarded instruction (`@p`, `@!p` on a placeholder predicate) may
//!   instead write a register written before it: when the guard is false that
//!   register keeps its value. This is how a program says "one of two
//!   computations" without branches (`@p div.u32 ...; @!p div.u64 ...`).
//!   A guarded instruction writing its own register leaves it unwritten when
//!   the guard is false.
//!
//! Reading an unwritten register gives an unspecified value, as reading an
//! uninitialized register does in PTX; so does reading the carry flag before
//! an instruction of the program wrote it. The result is the register the
//! last instruction writes.
//!
//! [`Program::runner`] carries the body out with [`ptx_ir::eval::eval`] and
//! carries values' qualities the way the reference interpreter does (a value
//! computed from an unspecified one is unspecified; a guard that is not
//! exact makes what its instruction writes unspecified). Build programs with
//! [`super::builder::Builder`].

use ptx_ir::eval::{self, Dialect, EvalError, Quality, Val};
use ptx_ir::interp::memory::worst;
use ptx_ir::ir::{Instruction, Operand, Prefix, RegId};
use ptx_ir::isa::{Flags, Mod, ScalarType};
use ptx_ir::verify::Target;
use smallvec::SmallVec;

/// A straight-line program (see the module documentation for its rules).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Program {
    /// Inputs are `RegId(0..inputs)`.
    pub inputs: usize,
    /// The type of every placeholder register: the inputs', then the
    /// destination type of each instruction (`inputs + body.len()` entries).
    pub types: Vec<ScalarType>,
    pub body: Vec<Instruction>,
}

impl Program {
    /// The types of the inputs.
    pub fn input_types(&self) -> &[ScalarType] {
        &self.types[..self.inputs]
    }

    pub fn reg_type(&self, r: RegId) -> ScalarType {
        self.types[r.0 as usize]
    }

    /// The register the k-th instruction writes (`None` when its written
    /// operand is not one plain register).
    pub fn dest(&self, k: usize) -> Option<RegId> {
        let ins = self.body.get(k)?;
        let mut written = ins.operands.iter().zip(ins.form.operands()).filter(|(_, spec)| spec.write);
        let (op, _) = written.next()?;
        if written.next().is_some() {
            return None;
        }
        match op {
            Operand::Reg(r) if r.prefix == Prefix::None && r.sel.is_none() => Some(r.reg),
            _ => None,
        }
    }

    /// The register holding the result: what the last instruction writes.
    pub fn result(&self) -> Option<RegId> {
        self.dest(self.body.len().checked_sub(1)?)
    }

    /// The type of the result.
    pub fn result_type(&self) -> Option<ScalarType> {
        self.result().map(|r| self.reg_type(r))
    }

    /// Checks the rules of the module documentation: one written plain
    /// register per instruction, the one it may write, its type, and that
    /// every register read (and every guard) was written before.
    pub fn check(&self) -> Result<(), String> {
        if self.types.len() != self.inputs + self.body.len() {
            return Err(format!("{} register types for {} inputs and {} instructions", self.types.len(), self.inputs, self.body.len()));
        }
        if self.body.is_empty() {
            return Err("the program has no instruction".into());
        }
        for (k, ins) in self.body.iter().enumerate() {
            let own = RegId((self.inputs + k) as u32);
            let at = |what: String| format!("instruction {k} (`{}`): {what}", ins.opcode.name());
            let Some(d) = self.dest(k) else { return Err(at("does not write exactly one plain register".into())) };
            if !(d == own || (ins.guard.is_some() && d < own)) {
                return Err(at(format!("writes %{} instead of %{}", d.0, own.0)));
            }
            let dest_index = ins.form.operands().iter().position(|o| o.write).unwrap_or(0);
            match ins.operand_type(dest_index) {
                Some(t) if t == self.reg_type(d) && t == self.reg_type(own) => {}
                t => return Err(at(format!("writes a {t:?} value into a {:?} register", self.reg_type(d)))),
            }
            let mut read: SmallVec<[RegId; 4]> = SmallVec::new();
            for (op, spec) in ins.operands.iter().zip(ins.form.operands()) {
                if spec.read {
                    op.regs(&mut read);
                }
            }
            if let Some(g) = ins.guard {
                if self.types.get(g.reg.0 as usize) != Some(&ScalarType::Pred) {
                    return Err(at("its guard is not a predicate register".into()));
                }
                read.push(g.reg);
            }
            if let Some(r) = read.iter().find(|r| **r >= own) {
                return Err(at(format!("reads %{} before it is written", r.0)));
            }
        }
        Ok(())
    }

    /// The result for exact input bits, with the modern dialect (sm_20 and newer).
    pub fn eval(&self, inputs: &[u128]) -> Result<Val, EvalError> {
        let vals: SmallVec<[Val; 4]> = inputs.iter().map(|b| Val::exact(*b)).collect();
        self.runner(Dialect::MODERN)?.run(&vals)
    }

    /// A runner for many inputs under a module's dialect; checks the program
    /// once (see [`Program::check`]) and works out where every source comes from.
    pub fn runner(&self, dialect: Dialect) -> Result<Runner<'_>, EvalError> {
        self.check().map_err(EvalError::BadOperands)?;
        let mut steps = Vec::with_capacity(self.body.len());
        for (k, ins) in self.body.iter().enumerate() {
            let mut srcs = SmallVec::new();
            for (j, (op, spec)) in ins.operands.iter().zip(ins.form.operands()).enumerate() {
                if spec.read {
                    self.sources(ins, j, op, &mut srcs)?;
                }
            }
            steps.push(Step {
                ins: eval::effective(ins, &dialect).into_owned(),
                dest: self.dest(k).expect("checked"),
                srcs,
                reads_carry: ins.form.flags().contains(Flags::CARRY_IN),
            });
        }
        Ok(Runner { program: self, steps, regs: vec![None; self.types.len()], bits: SmallVec::new() })
    }

    /// Where the values of source operand `k` of `ins` come from (a vector
    /// gives one per element).
    fn sources(&self, ins: &Instruction, k: usize, op: &Operand, out: &mut SmallVec<[Source; 4]>) -> Result<(), EvalError> {
        let ty = ins.operand_type(k);
        match op {
            Operand::Reg(r) => {
                if r.sel.is_some() {
                    return Err(EvalError::Unsupported("a register selector in a program".into()));
                }
                let width = self.reg_type(r.reg).bits();
                // A narrower operand type reads the register's low bits.
                let read_width = match ty {
                    Some(t) if t != ScalarType::Pred && t.bits() < width => t.bits(),
                    _ => width,
                };
                out.push(Source::Reg { reg: r.reg, prefix: r.prefix, width, mask: eval::bits_mask(read_width) });
            }
            Operand::Imm(i) => out.push(Source::Const(eval::imm_bits(i, ty.unwrap_or(ScalarType::B64)))),
            Operand::Vector(v) => {
                for o in v.iter() {
                    self.sources(ins, k, o, out)?;
                }
            }
            _ => return Err(EvalError::Unsupported(format!("`{}` with an operand that is no placeholder register or immediate", ins.opcode.name()))),
        }
        Ok(())
    }

    /// Do the target `sm_NN` and PTX ISA `version` have every instruction
    /// of the program (the ISA tables' `since` lines)?
    pub fn available(&self, sm: u32, version: (u32, u32)) -> bool {
        let Some(target) = Target::parse(&format!("sm_{sm}")) else { return false };
        let mods = all_mods();
        self.body.iter().all(|ins| {
            ins.form.requirements().iter().all(|r| {
                let applies = r.when.is_empty() || r.when.iter().any(|m| mods.get(*m as usize).is_some_and(|m| ins.mods.contains(m)));
                !applies || (r.ptx.is_none_or(|p| version >= p) && target.satisfies(r.min_sm, r.exact))
            })
        })
    }
}

/// Runs a checked program on many inputs (buffers reused between runs).
pub struct Runner<'p> {
    program: &'p Program,
    steps: Vec<Step>,
    regs: Vec<Option<Val>>,
    bits: SmallVec<[u128; 6]>,
}

/// One instruction, prepared.
struct Step {
    /// The instruction as the dialect reads it ([`eval::effective`]).
    ins: Instruction,
    dest: RegId,
    srcs: SmallVec<[Source; 4]>,
    reads_carry: bool,
}

/// Where a source value comes from.
#[derive(Clone, Copy)]
enum Source {
    /// A register of `width` bits, with its operand prefix, read through `mask`.
    Reg { reg: RegId, prefix: Prefix, width: u32, mask: u128 },
    /// An immediate's bits at the operand's type.
    Const(u128),
}

impl Runner<'_> {
    /// Runs the body on input values (bits and quality) and gives the result.
    pub fn run(&mut self, inputs: &[Val]) -> Result<Val, EvalError> {
        let p = self.program;
        if inputs.len() != p.inputs {
            return Err(EvalError::BadOperands(format!("{} inputs given, the program takes {}", inputs.len(), p.inputs)));
        }
        self.regs.iter_mut().for_each(|r| *r = None);
        for (k, v) in inputs.iter().enumerate() {
            let width = p.types[k].bits().max(1);
            self.regs[k] = Some(Val { bits: v.bits & eval::bits_mask(width), quality: v.quality });
        }
        // The carry flag: unknown until an instruction of the program writes it.
        let mut carry: Option<bool> = None;
        for step in &self.steps {
            let executes = match step.ins.guard {
                None => Some(true),
                Some(g) => {
                    let v = read_reg(&self.regs, g.reg);
                    (v.quality == Quality::Exact).then_some((v.bits & 1 != 0) != g.negated)
                }
            };
            if executes == Some(false) {
                continue;
            }
            let mut input_quality = if step.reads_carry && carry.is_none() { Quality::Unspecified } else { Quality::Exact };
            self.bits.clear();
            for src in &step.srcs {
                let v = match *src {
                    Source::Const(bits) => bits,
                    Source::Reg { reg, prefix, width, mask } => {
                        let v = read_reg(&self.regs, reg);
                        if v.quality != Quality::Exact {
                            input_quality = worst(input_quality, v.quality);
                        }
                        let bits = match prefix {
                            Prefix::None => v.bits,
                            Prefix::Not => (v.bits & 1) ^ 1,
                            Prefix::Neg => v.bits.wrapping_neg() & eval::bits_mask(width),
                        };
                        bits & mask
                    }
                };
                self.bits.push(v);
            }
            let r = eval::eval(&step.ins, &self.bits, carry.unwrap_or(false))?;
            let Some(v) = r.dests.first() else { return Err(EvalError::BadOperands(format!("`{}` gave no result", step.ins.opcode.name()))) };
            let v = match executes {
                Some(_) => Val { bits: v.bits, quality: combined_quality(v.quality, input_quality) },
                None => Val::unspecified(),
            };
            if let Some(c) = r.carry_out {
                carry = (executes.is_some() && input_quality == Quality::Exact).then_some(c);
            }
            self.regs[step.dest.0 as usize] = Some(v);
        }
        let result = self.steps.last().expect("checked").dest;
        Ok(read_reg(&self.regs, result))
    }
}

/// The value of a register; unspecified when it was never written.
fn read_reg(regs: &[Option<Val>], r: RegId) -> Val {
    regs.get(r.0 as usize).copied().flatten().unwrap_or_else(Val::unspecified)
}

/// The quality of a result computed from inputs of quality `inputs` (the
/// reference interpreter's rule: only exact inputs give the evaluator's
/// quality; approximate inputs keep a non-NaN result approximate).
fn combined_quality(result: Quality, inputs: Quality) -> Quality {
    match (result, inputs) {
        (q, Quality::Exact) => q,
        (Quality::AnyNan, Quality::AnyNan) => Quality::AnyNan,
        (q, Quality::Approx { .. }) if q != Quality::Unspecified => worst(q, inputs),
        _ => Quality::Unspecified,
    }
}

/// The modifiers by table index (`Mod::all` gives them in index order from
/// 1; index 0 is `Mod::NONE`), to read a requirement's `when` list.
fn all_mods() -> &'static [Mod] {
    static MODS: std::sync::OnceLock<Vec<Mod>> = std::sync::OnceLock::new();
    MODS.get_or_init(|| std::iter::once(Mod::NONE).chain(Mod::all()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::builder::{imm, type_mod, Builder};
    use ptx_ir::ir::Guard;
    use ptx_ir::isa::Opcode;

    const U32: ScalarType = ScalarType::U32;

    fn guard(p: &Operand, negated: bool) -> Guard {
        let Operand::Reg(r) = p else { panic!("not a register") };
        Guard { reg: r.reg, negated }
    }

    /// `x < 10 ? 2x : x + 1`, the guarded instruction writing an earlier register.
    fn select_program() -> Program {
        let mut b = Builder::new(&[U32]);
        let x = b.input(0);
        let p = b.push(Opcode::SETP, &[Mod::LT, type_mod(U32)], &[x.clone(), imm(10, U32)]);
        let a = b.push(Opcode::ADD, &[type_mod(U32)], &[x.clone(), imm(1, U32)]);
        b.push_guarded(guard(&p, false), Some(&a), Opcode::MUL, &[Mod::LO, type_mod(U32)], &[x, imm(2, U32)]);
        b.finish().unwrap()
    }

    #[test]
    fn a_false_guard_keeps_the_register() {
        let p = select_program();
        assert_eq!(p.result(), Some(RegId(2)));
        assert_eq!(p.eval(&[3]).unwrap(), Val::exact(6));
        assert_eq!(p.eval(&[10]).unwrap(), Val::exact(11));
        // A register wider than the input's type is cut to it.
        assert_eq!(p.eval(&[(1 << 32) | 3]).unwrap(), Val::exact(6));
        // An unknown input makes the guard unknown: the result is unspecified.
        let mut r = p.runner(Dialect::MODERN).unwrap();
        assert_eq!(r.run(&[Val::unspecified()]).unwrap().quality, Quality::Unspecified);
    }

    #[test]
    fn a_false_guard_on_a_new_register_leaves_it_unwritten() {
        let mut b = Builder::new(&[U32]);
        let x = b.input(0);
        let p = b.push(Opcode::SETP, &[Mod::LT, type_mod(U32)], &[x.clone(), imm(10, U32)]);
        let a = b.push_guarded(guard(&p, true), None, Opcode::ADD, &[type_mod(U32)], &[x, imm(1, U32)]);
        b.push(Opcode::ADD, &[type_mod(U32)], &[a, imm(1, U32)]);
        let p = b.finish().unwrap();
        assert_eq!(p.eval(&[12]).unwrap(), Val::exact(14));
        assert_eq!(p.eval(&[3]).unwrap().quality, Quality::Unspecified);
    }

    #[test]
    fn the_carry_flag_flows_and_starts_unknown() {
        // 64-bit addition from 32-bit halves: add.cc then addc.
        let mut b = Builder::new(&[U32, U32]);
        let (x, y) = (b.input(0), b.input(1));
        b.push(Opcode::ADD, &[Mod::CC, type_mod(U32)], &[x, y]);
        b.push(Opcode::ADDC, &[type_mod(U32)], &[imm(0, U32), imm(0, U32)]);
        let p = b.finish().unwrap();
        assert_eq!(p.eval(&[u32::MAX as u128, 1]).unwrap(), Val::exact(1));
        assert_eq!(p.eval(&[5, 1]).unwrap(), Val::exact(0));
        let mut b = Builder::new(&[U32]);
        let x = b.input(0);
        b.push(Opcode::ADDC, &[type_mod(U32)], &[x, imm(0, U32)]);
        assert_eq!(b.finish().unwrap().eval(&[5]).unwrap().quality, Quality::Unspecified);
    }

    #[test]
    fn check_finds_broken_programs() {
        let good = select_program();
        assert!(good.check().is_ok());
        // An unguarded instruction writing an earlier register.
        let mut p = good.clone();
        p.body[2].guard = None;
        assert!(p.check().unwrap_err().contains("writes %2 instead of %3"), "{:?}", p.check());
        // Reading a register before it is written.
        let mut p = good.clone();
        p.body.swap(0, 1);
        assert!(p.check().is_err());
        // Too few register types.
        let mut p = good.clone();
        p.types.pop();
        assert!(p.check().is_err());
        assert!(p.eval(&[1]).is_err());
        // A wrong number of inputs is an error, not a panic.
        assert!(good.eval(&[1, 2]).is_err());
        // An instruction the tables reject is reported by the builder.
        let mut b = Builder::new(&[U32]);
        let x = b.input(0);
        b.push(Opcode::MUL, &[Mod::HI, type_mod(ScalarType::F32)], &[x.clone(), x]);
        assert!(b.finish().is_err());
    }

    #[test]
    fn availability_follows_the_tables() {
        let mut b = Builder::new(&[ScalarType::B32]);
        let x = b.input(0);
        b.push(Opcode::ADD, &[type_mod(ScalarType::U16x2)], &[x.clone(), x]);
        let packed = b.finish().unwrap();
        assert!(packed.available(90, (8, 0)));
        assert!(!packed.available(80, (8, 0)));
        assert!(!packed.available(90, (7, 8)));
        assert!(select_program().available(10, (1, 0)));
    }
}
