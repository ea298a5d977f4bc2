//! What a module's `.target` and `.version` add to the meaning of an
//! instruction as written, so that [`super::eval`] (which reads only the
//! instruction) computes what the hardware computes:
//!
//! - For `sm_1x` targets, single-precision instructions flush subnormal
//!   inputs and results to sign-preserving zero as if `.ftz` were written
//!   (the manual's "sm_1x" notes of `add`, `sub`, `mul`, `mad`, `div`, `min`,
//!   `max`, `abs`, `neg`, `rcp`, `sqrt`, `rsqrt`, `sin`, `cos`, `lg2`, `ex2`,
//!   `set`, `setp`, `slct`, `cvt`; ptxas emits `FADD.FTZ`/`FFMA.FTZ` for
//!   them). Exception: up to PTX ISA 1.4 only `cvt.f32.f16`, `cvt.f16.f32`
//!   and `cvt.f32.f32` flush.
//! - `mad.f32` without a rounding modifier is `mad.rn.f32` ("ptxas silently
//!   defaults to mad.rn.f32"; for sm_1x code run on sm_20 and newer it is
//!   `fma.rn.ftz.f32`, which the first rule gives).

use crate::ir::{Instruction, Module};
use crate::isa::{Mod, ModKind, Opcode, ScalarType};
use crate::verify::Target;
use std::borrow::Cow;

/// The target-dependent rules of one module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dialect {
    /// `sm_1x`: single precision flushes subnormals by default.
    pub flush_f32: bool,
    /// PTX ISA 1.4 or older (the `cvt` exception to `flush_f32`).
    pub ptx_1_4_or_older: bool,
}

impl Dialect {
    /// sm_20 and newer: instructions mean what they say.
    pub const MODERN: Dialect = Dialect { flush_f32: false, ptx_1_4_or_older: false };

    /// The dialect of a module, from its `.target` and `.version`.
    pub fn of_module(m: &Module) -> Dialect {
        let flush_f32 = Target::of_module(m).is_some_and(|t| t.number < 20);
        let v = m.version;
        Dialect { flush_f32, ptx_1_4_or_older: (v.major, v.minor) <= (1, 4) }
    }
}

/// `ins` with the modifiers the dialect implies written out (or `ins` itself
/// when it implies none).
pub fn effective<'a>(ins: &'a Instruction, d: &Dialect) -> Cow<'a, Instruction> {
    let types = ins.types();
    if !types.contains(&ScalarType::F32) {
        return Cow::Borrowed(ins);
    }
    let mut extra: smallvec::SmallVec<[Mod; 2]> = smallvec::SmallVec::new();
    if ins.opcode == Opcode::MAD && !ins.modifiers().any(|(_, m)| matches!(m.kind(), ModKind::Rounding(_))) {
        extra.push(Mod::RN);
    }
    if d.flush_f32 && !ins.has(Mod::FTZ) && flushes_on_sm_1x(ins, &types, d) {
        extra.push(Mod::FTZ);
    }
    if extra.is_empty() {
        return Cow::Borrowed(ins);
    }
    let mut mods: smallvec::SmallVec<[Mod; 8]> = ins.modifiers().map(|(_, m)| m).collect();
    mods.extend(extra.iter().copied());
    match Instruction::new(ins.opcode, &mods, ins.operands.iter().cloned()) {
        Ok(mut e) => {
            e.guard = ins.guard;
            Cow::Owned(e)
        }
        // No form takes the modifier: the instruction has nothing to flush
        // (or round) beyond what it says.
        Err(_) => Cow::Borrowed(ins),
    }
}

fn flushes_on_sm_1x(ins: &Instruction, types: &[ScalarType], d: &Dialect) -> bool {
    if ins.opcode == Opcode::CVT && d.ptx_1_4_or_older {
        let half_or_single = |t: &ScalarType| matches!(t, ScalarType::F32 | ScalarType::F16);
        return types.len() == 2 && types.iter().all(half_or_single);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::eval;

    fn module(target: &str, version: &str, body: &str) -> Module {
        let text = format!(".version {version}\n.target {target}\n.entry k() {{\n.reg .f32 %f<4>;\n.reg .b16 %h<2>;\n.reg .f64 %fd<2>;\n.reg .b32 %r<2>;\n.reg .pred %p<2>;\n{body}\nret;\n}}\n");
        crate::parse("t.ptx", text.as_bytes()).unwrap_or_else(|e| panic!("{e}")).module
    }

    fn first_instruction(m: &Module) -> &Instruction {
        m.items
            .iter()
            .find_map(|i| match i {
                crate::ir::Item::Func(f) => f.body.as_ref()?.iter().find_map(|s| match s {
                    crate::ir::Stmt::Instr(i) => Some(i),
                    _ => None,
                }),
                _ => None,
            })
            .unwrap()
    }

    const SUB: u128 = 1; // the smallest positive f32 subnormal

    fn result(target: &str, version: &str, body: &str, srcs: &[u128]) -> u128 {
        let m = module(target, version, body);
        let ins = first_instruction(&m);
        let e = effective(ins, &Dialect::of_module(&m));
        eval(&e, srcs, false).unwrap().dests[0].bits
    }

    #[test]
    fn sm_1x_single_precision_flushes_subnormals() {
        // sm_13: add.f32 is add.ftz.f32, the subnormal sum flushes to +0.
        assert_eq!(result("sm_13", "1.4", "add.f32 %f1, %f2, %f3;", &[SUB, 0]), 0);
        assert_eq!(result("sm_20", "2.0", "add.f32 %f1, %f2, %f3;", &[SUB, 0]), SUB);
        // Comparisons too: a subnormal is not greater than zero on sm_1x.
        assert_eq!(result("sm_10", "1.0", "setp.gt.f32 %p1, %f2, %f3;", &[SUB, 0]), 0);
        assert_eq!(result("sm_20", "2.0", "setp.gt.f32 %p1, %f2, %f3;", &[SUB, 0]), 1);
    }

    #[test]
    fn mad_f32_without_rounding_is_fused_round_to_nearest() {
        // (1 + 2^-12)^2 - 1 = 2^-11 + 2^-24, exact only when fused.
        let a = 0x3f80_0800;
        let fused = 0x3a00_0400;
        assert_eq!(result("sm_80", "8.0", "mad.f32 %f1, %f2, %f2, %f3;", &[a, a, 0xbf80_0000]), fused);
        assert_eq!(result("sm_13", "1.4", "mad.f32 %f1, %f2, %f2, %f3;", &[a, a, 0xbf80_0000]), fused);
        // sm_1x: the fused form flushes, a subnormal product gives 0.
        assert_eq!(result("sm_13", "1.4", "mad.f32 %f1, %f2, %f3, %f3;", &[SUB, 0x3f80_0000, 0]), 0);
        assert_eq!(result("sm_80", "8.0", "mad.rn.f32 %f1, %f2, %f3, %f3;", &[SUB, 0x3f80_0000, 0]), SUB);
    }

    #[test]
    fn ptx_1_4_cvt_flushes_only_between_half_and_single() {
        // cvt.f64.f32 keeps the subnormal up to PTX 1.4 on sm_1x ...
        let m = module("sm_13", "1.4", "cvt.f64.f32 %fd1, %f1;");
        let ins = first_instruction(&m);
        assert!(matches!(effective(ins, &Dialect::of_module(&m)), Cow::Borrowed(_)));
        // ... and flushes from PTX 1.5 on.
        let m = module("sm_13", "1.5", "cvt.f64.f32 %fd1, %f1;");
        let ins = first_instruction(&m);
        assert!(effective(ins, &Dialect::of_module(&m)).has(Mod::FTZ));
        // cvt.f32.f32 flushes in both.
        assert_eq!(result("sm_13", "1.4", "cvt.rni.f32.f32 %f1, %f2;", &[0x8000_0001]), 0x8000_0000);
    }

    #[test]
    fn modern_targets_and_other_types_are_untouched() {
        let m = module("sm_80", "8.0", "add.f32 %f1, %f2, %f3;");
        assert!(matches!(effective(first_instruction(&m), &Dialect::of_module(&m)), Cow::Borrowed(_)));
        let m = module("sm_13", "1.4", "add.f64 %fd1, %fd1, %fd1;");
        assert!(matches!(effective(first_instruction(&m), &Dialect::of_module(&m)), Cow::Borrowed(_)));
    }
}
