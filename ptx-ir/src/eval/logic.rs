//! Semantics of the logic family (see `mod.rs`).

use super::EvalResult;
use crate::ir::Instruction;
use crate::isa::Opcode;

/// The opcodes this family evaluates.
pub const OPCODES: &[Opcode] = &[];

/// Evaluates `ins` if it belongs to this family.
pub fn eval(ins: &Instruction, srcs: &[u128], carry_in: bool) -> Option<EvalResult> {
    let _ = (ins, srcs, carry_in);
    None
}

#[cfg(test)]
mod probe {
    #[test]
    fn probe() {
        let body = r#"
        setp.lt.and.ftz.f32 %p1|%p2, %f1, %f2, !%p3;
        setp.lt.s32 %p1, %r1, 5;
        set.lt.f16.u32 %h1, %r1, %r2;
        set.lt.u32.f16 %r1, %h1, %h2;
        set.gt.ftz.u32.f32 %r1, %f1, %f2;
        set.ftz.gt.u32.f32 %r1, %f1, %f2;
        slct.s32.f32 %r1, %r2, %r3, %f1;
        slct.ftz.f32.f32 %f1, %f2, %f3, %f1;
        slct.f32.s32 %f1, %f2, %f3, %r1;
        mov.b64 %rd1, {%r1, %r2};
        mov.b32 {%h1, _}, %r1;
        mov.v2.b32 {%r1, %r2}, {%r3, %r4};
        mov.u32 %r1, 5;
        lop3.or.b32 %r1|%p1, %r2, %r3, %r4, 0x3f, %p2;
        lop3.and.b32 _|%p1, %r2, %r3, %r4, 0x3f, %p2;
        vadd.s32.u32.s32.sat %r1, %r2.b0, %r3.h0;
        vsub2.s32.s32.s32.sat %r1.h0, %r2.h10, %r3.h32, %r1;
        vmad.s32.s32.u32.sat %r0, %r1, %r2, -%r3;
        vset4.u32.u32.ne.add %r1, %r2.b3210, %r3.b7654, %r0;
        vshl.s32.u32.u32.clamp %r1, %r2, %r3;
        testp.notanumber.f32 %p1, %f0;
        and.pred %p1, !%p2, %p3;
        prmt.b32.f4e %r1, %r2, %r3, %r4;
        shf.l.clamp.b32 %r1, %r2, %r3, %r4;
        set.lt.and.f16x2.f16x2 %r1, %r2, %r3, %p1;
        "#;
        let text = format!(".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k() {{ .reg .b32 %r<9>; .reg .f32 %f<9>; .reg .pred %p<9>; .reg .b16 %h<9>; .reg .b64 %rd<9>; {body} ret; }}");
        let m = crate::parse::parse_str(&text).unwrap();
        for it in &m.items {
            if let crate::ir::Item::Func(f) = it {
                for i in f.instructions() {
                    println!("{} {:?} types={:?} cmp={:?} bool={:?} vec={:?}\n   ops={:?}", i.opcode.name(), i.modifiers().collect::<Vec<_>>(), i.types(), i.cmp(), i.bool_op(), i.vector(), i.operands);
                }
            }
        }
    }
}
