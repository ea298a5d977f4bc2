//! Whether the evaluator can evaluate an instruction depends on the
//! instruction alone, never on its operand values: a value the manual
//! leaves open (or where the manual and the hardware disagree, such as a
//! 64-bit `bfe` position >= 256) is one unspecified result, not an error
//! that would stop a whole interpreter run. Every instruction of the
//! generator's catalog is evaluated on random and edge values of every
//! register operand (immediates stay as the catalog writes them).

use ptx_ir::eval::{bits_mask, eval, EvalError};
use ptx_ir::ir::{Item, Stmt};
use ptx_ir::isa::ScalarType;
use ptx_tests::gen::{self, Choices, How};

/// A value for an operand of type `ty`: edge values half of the time.
fn value(ty: ScalarType, c: &mut Choices) -> u128 {
    if ty == ScalarType::Pred {
        return c.below(2) as u128;
    }
    let bits = ty.bits().max(8);
    let edges = [0u128, 1, 2, 7, 8, 31, 32, 63, 64, 255, 256, 257, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 1 << 63, u64::MAX as u128, u128::MAX];
    let v = if c.chance(1, 2) { edges[c.below(edges.len() as u64) as usize] } else { c.bits() as u128 | (c.bits() as u128) << 64 };
    v & bits_mask(bits)
}

#[test]
fn support_does_not_depend_on_operand_values() {
    let catalog = gen::catalog();
    let text = gen::catalog_module();
    let parsed = ptx_ir::parse("catalog.ptx", text.as_bytes()).unwrap();
    let Some(Item::Func(f)) = parsed.module.items.iter().find(|i| matches!(i, Item::Func(_))) else { panic!("no probe kernel") };
    let instrs: Vec<_> = f.body.as_ref().unwrap().iter().filter_map(|s| if let Stmt::Instr(i) = s { Some(i) } else { None }).collect();
    assert_eq!(instrs.len(), catalog.templates.len() + 1, "one instruction per template, then ret");
    let mut c = Choices::seeded(7);
    let mut failures = Vec::new();
    let mut evaluated = 0;
    for (t, ins) in catalog.templates.iter().zip(&instrs) {
        for _ in 0..300 {
            let srcs: Vec<u128> = t.srcs.iter().map(|s| if let How::ImmBelow(n) = s.how { (0x96 % n) as u128 } else { value(s.ty, &mut c) }).collect();
            match eval(ins, &srcs, c.chance(1, 2)) {
                Ok(_) => evaluated += 1,
                Err(e @ (EvalError::Unsupported(_) | EvalError::BadOperands(_) | EvalError::NotPure)) => {
                    failures.push(format!("`{}` on {srcs:#x?}: {e}", t.head));
                    break;
                }
            }
        }
    }
    assert!(evaluated > 100_000, "only {evaluated} evaluations");
    assert!(failures.is_empty(), "{} catalog instructions fail on some values:\n{}", failures.len(), failures.join("\n"));
}
