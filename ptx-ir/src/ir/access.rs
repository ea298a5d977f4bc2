//! Which registers an instruction reads and writes, from the ISA tables'
//! operand flags (`out`/`inout` lines): the one walk over operands that the
//! effect analysis and the passes' rewriting share. Reading and rewriting go
//! through the same code (a macro instantiates it for `&` and `&mut`).

use super::{AddrBase, Instruction, Operand, PairPred, Prefix, RegId, RegOperand, Selector};
use smallvec::SmallVec;

/// How an instruction uses one register it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// The register's value is read (sources, address bases, guards, `!p`,
    /// and destinations written through a byte or half-word lane selector,
    /// whose other bits are kept).
    pub read: bool,
    /// The register is written.
    pub write: bool,
    /// The lane or component selector after it (`%v.x`, `%r.b0`).
    pub sel: Option<Selector>,
}

impl Access {
    const READ: Access = Access { read: true, write: false, sel: None };

    /// A write through a byte or half-word selector (`%r.h1`) keeps the
    /// register's other bits: it does not replace the whole value.
    pub fn merges(&self) -> bool {
        matches!(self.sel, Some(Selector::Bytes(_) | Selector::Halves(_)))
    }
}

/// Generates the walk over an operand (`$walk`) and over an instruction
/// (`$walk_ins`) for one mutability; `$iter` is `iter` or `iter_mut`.
macro_rules! register_walk {
    ($walk:ident, $walk_ins:ident, $walk_reg:ident, $iter:ident $(, $m:ident)?) => {
        /// A register operand: a byte or half-word lane written merges
        /// into the register (read too), and a prefixed one is read.
        #[inline(always)]
        fn $walk_reg<F: FnMut(&$($m)? RegId, Access)>(r: &$($m)? RegOperand, read: bool, write: bool, f: &mut F) {
            let merge = matches!(r.sel, Some(Selector::Bytes(_) | Selector::Halves(_)));
            let read = read || (write && merge) || r.prefix != Prefix::None;
            let sel = r.sel;
            f(&$($m)? r.reg, Access { read, write, sel });
        }

        fn $walk<F: FnMut(&$($m)? RegId, Access)>(op: &$($m)? Operand, read: bool, write: bool, f: &mut F) {
            match op {
                Operand::Reg(r) => $walk_reg(r, read, write, f),
                Operand::RegOffset(r, _) => f(r, Access::READ),
                Operand::Vector(v) | Operand::List(v) => {
                    for o in v.$iter() {
                        $walk(o, read, write, f);
                    }
                }
                Operand::Pair(first, q) => {
                    $walk(&$($m)? **first, read, write, f);
                    if let PairPred::Reg(q) = q {
                        f(q, Access { read: !write, write, sel: None });
                    }
                }
                // Registers inside addresses are always read.
                Operand::Addr(a) => {
                    if let AddrBase::Reg(r) = &$($m)? a.base {
                        f(r, Access::READ);
                    }
                }
                Operand::AddrList(v) => {
                    for o in v.$iter() {
                        $walk(o, true, false, f);
                    }
                }
                Operand::ArrayElem(e) => $walk(&$($m)? e.index, true, false, f),
                Operand::SReg(..) | Operand::Imm(_) | Operand::Sym(_) | Operand::Label(_) | Operand::Sink => {}
            }
        }

        fn $walk_ins<F: FnMut(&$($m)? RegId, Access)>(ins: &$($m)? Instruction, f: &mut F) {
            if let Some(g) = &$($m)? ins.guard {
                f(&$($m)? g.reg, Access::READ);
            }
            let specs = ins.form.operands();
            for (k, op) in ins.operands.$iter().enumerate() {
                // Operands past the form's (never made by the matcher) are skipped.
                let Some(spec) = specs.get(k) else { continue };
                // A plain register, or an operand naming none, is handled
                // here; only the rest take the recursive walk's call
                // (matrix_free -O2: 50,741 calls, most of them registers).
                match op {
                    Operand::Reg(r) => $walk_reg(r, spec.read, spec.write, f),
                    Operand::SReg(..) | Operand::Imm(_) | Operand::Sym(_) | Operand::Label(_) | Operand::Sink => {}
                    _ => $walk(op, spec.read, spec.write, f),
                }
            }
        }
    };
}

register_walk!(walk, walk_instruction, walk_reg, iter);
register_walk!(walk_mut, walk_instruction_mut, walk_reg_mut, iter_mut, mut);

/// The closure given (a closure's attributes are allowed only where it is
/// an argument).
#[inline(always)]
fn by_ref<F: FnMut(&RegId, Access)>(f: F) -> F {
    f
}

impl Instruction {
    /// Every register the instruction names (guard first, then operands in
    /// order, address bases and vector elements included), with how it is
    /// used. A register read and written by one operand is visited once.
    pub fn for_each_reg(&self, mut f: impl FnMut(RegId, Access)) {
        // Inlined where the walk calls it, with `f` (when the caller asks
        // for that) inlined in it: a call per register visited cost
        // renderer -O2's value view and effects 19 M (139,645 and 138,793
        // calls of about 87 and 51 host instructions).
        walk_instruction(self, &mut by_ref(#[inline(always)] |r: &RegId, a| f(*r, a)));
    }

    /// [`Instruction::for_each_reg`], letting `f` rewrite each register.
    pub fn for_each_reg_mut(&mut self, mut f: impl FnMut(&mut RegId, Access)) {
        walk_instruction_mut(self, &mut f);
    }

    /// Rewrites every register the instruction reads (a read-and-written
    /// operand, such as `%r.h0` as a destination, is both a use and a def).
    pub fn for_each_use_mut(&mut self, mut f: impl FnMut(&mut RegId)) {
        self.for_each_reg_mut(|r, a| {
            if a.read {
                f(r)
            }
        });
    }

    /// Rewrites every register the instruction writes.
    pub fn for_each_def_mut(&mut self, mut f: impl FnMut(&mut RegId)) {
        self.for_each_reg_mut(|r, a| {
            if a.write {
                f(r)
            }
        });
    }

    /// The registers read, in operand order (repeats kept).
    pub fn uses(&self) -> SmallVec<[RegId; 4]> {
        let mut v = SmallVec::new();
        self.for_each_reg(|r, a| {
            if a.read {
                v.push(r)
            }
        });
        v
    }

    /// The registers written, in operand order.
    pub fn defs(&self) -> SmallVec<[RegId; 4]> {
        let mut v = SmallVec::new();
        self.for_each_reg(|r, a| {
            if a.write {
                v.push(r)
            }
        });
        v
    }
}

impl Operand {
    /// Every register this operand names (address bases, vector and list
    /// elements, the predicate of a pair), in order.
    pub fn for_each_reg(&self, mut f: impl FnMut(RegId)) {
        walk(self, true, false, &mut |r: &RegId, _| f(*r));
    }

    /// [`Operand::for_each_reg`], letting `f` rewrite each register.
    pub fn for_each_reg_mut(&mut self, mut f: impl FnMut(&mut RegId)) {
        walk_mut(self, true, false, &mut |r: &mut RegId, _| f(r));
    }

    /// This operand and every operand nested in it (vector and list
    /// elements, the first half of a pair, array indices), outermost first.
    /// The operand itself is visited inline, and only an operand that
    /// nests others calls the walk: callers visit every operand of every
    /// instruction, most nest nothing, and a call per operand was about 30
    /// host instructions (dce's effects and dead-decls: 1.8 M on matrix_free).
    #[inline]
    pub fn for_each_operand<'a>(&'a self, f: &mut impl FnMut(&'a Operand)) {
        f(self);
        if matches!(self, Operand::Vector(_) | Operand::List(_) | Operand::AddrList(_) | Operand::Pair(..) | Operand::ArrayElem(_)) {
            self.for_each_nested_operand(f);
        }
    }

    /// [`Operand::for_each_operand`] of each operand nested in this one.
    fn for_each_nested_operand<'a>(&'a self, f: &mut impl FnMut(&'a Operand)) {
        match self {
            Operand::Vector(v) | Operand::List(v) | Operand::AddrList(v) => v.iter().for_each(|o| o.for_each_operand(f)),
            Operand::Pair(first, _) => first.for_each_operand(f),
            Operand::ArrayElem(e) => e.index.for_each_operand(f),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::{Item, RegId};

    fn body_instructions(src: &str) -> (crate::ir::Function, Vec<crate::ir::Instruction>) {
        let text = format!(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n{src}\n}}\n");
        let m = crate::parse_str(&text).unwrap();
        let Item::Func(f) = &m.items[0] else { panic!() };
        let ins = f.instructions().cloned().collect();
        ((**f).clone(), ins)
    }

    fn names(f: &crate::ir::Function, v: &[RegId]) -> Vec<String> {
        v.iter().map(|r| f.reg(*r).name.to_string()).collect()
    }

    #[test]
    fn uses_and_defs_follow_the_tables() {
        let (f, ins) = body_instructions(
            ".reg .b32 %r<6>; .reg .b64 %rd<3>; .reg .pred %p<3>;\n\
             @%p1 mad.lo.s32 %r1, %r2, %r3, %r4;\n\
             st.global.u32 [%rd1+4], %r5;\n\
             setp.lt.s32 %p1|%p2, %r1, %r2;\n\
             vadd.u32.u32.u32 %r1.h0, %r2, %r3, %r4;",
        );
        assert_eq!(names(&f, &ins[0].uses()), ["%p1", "%r2", "%r3", "%r4"]);
        assert_eq!(names(&f, &ins[0].defs()), ["%r1"]);
        // A store writes memory, not its address or value registers.
        assert_eq!(names(&f, &ins[1].uses()), ["%rd1", "%r5"]);
        assert!(ins[1].defs().is_empty());
        assert_eq!(names(&f, &ins[2].defs()), ["%p1", "%p2"]);
        // A half-word destination keeps the other half: read and written.
        assert_eq!(names(&f, &ins[3].defs()), ["%r1"]);
        assert_eq!(names(&f, &ins[3].uses())[0], "%r1");
    }

    #[test]
    fn rewriting_uses_leaves_defs_alone() {
        let (f, mut ins) = body_instructions(".reg .b32 %r<4>; add.s32 %r1, %r1, %r2; mov.u32 %r3, 0;");
        let r1 = ins[0].defs()[0];
        let r3 = RegId(f.regs.iter().position(|r| &*r.name == "%r3").unwrap() as u32);
        ins[0].for_each_use_mut(|r| {
            if *r == r1 {
                *r = r3
            }
        });
        assert_eq!(names(&f, &ins[0].defs()), ["%r1"]);
        assert_eq!(names(&f, &ins[0].uses()), ["%r3", "%r2"]);
        ins[0].for_each_def_mut(|r| *r = r3);
        assert_eq!(names(&f, &ins[0].defs()), ["%r3"]);
    }
}
