//! The IR as a library: a back end's kernel built with the builder (printed,
//! re-parsed, verified, assembled by ptxas), a pass's edits through the
//! cursor on generated kernels (checked on the interpreter), and IR that the
//! verifier rejects printing without a panic.

#[path = "../../ptx-opt/examples/build_kernel.rs"]
mod build_kernel;

use ptx_ir::ir::{FuncKind, Function, Instruction, Item, LabelId, Module, Operand, Reg, RegId, Stmt};
use ptx_ir::isa::{Mod, Opcode, ScalarType, StateSpace};
use ptx_ir::parse::SourceMap;
use ptx_tests::gen::GenOptions;

fn errors(text: &str) -> Vec<String> {
    let parsed = ptx_ir::parse("built.ptx", text.as_bytes()).unwrap_or_else(|d| panic!("{d}\n{text}"));
    ptx_ir::verify::verify(&parsed.module, &parsed.source_map, "built.ptx", text.as_bytes()).into_iter().map(|d| d.to_string()).collect()
}

#[test]
fn the_example_kernel_prints_verifies_and_assembles() {
    let module = build_kernel::build().unwrap();
    let text = ptx_print::print_module(&module);
    assert_eq!(errors(&text), Vec::<String>::new(), "{text}");
    // Printing is a fixed point from the first print on.
    let again = ptx_print::print_module(&ptx_ir::parse_str(&text).unwrap());
    assert_eq!(again, text);
    // About as many builder lines as PTX lines (the body: 12 instructions, 2 declarations).
    let body = text.lines().filter(|l| l.starts_with('\t')).count();
    assert_eq!(body, 14, "{text}");
    ptx_tests::ptxas::assemble_for_target(&text).unwrap_or_else(|e| panic!("ptxas rejects the built kernel:\n{e}\n{text}"));
}

/// An e-graph's re-emission: every pure, unguarded instruction with one
/// whole-register result computes into a fresh temporary, copied to the
/// old register by a `mov` inserted after it.
fn through_temporaries(mut m: Module) -> Module {
    for item in &mut m.items {
        let Item::Func(f) = item else { continue };
        if f.body.is_none() {
            continue;
        }
        let mut cur = f.cursor();
        while let Some(ins) = cur.next_instruction() {
            let mut whole = true;
            ins.for_each_reg(|_, a| whole &= !(a.write && a.sel.is_some()));
            let defs = ins.defs();
            if ins.guard.is_some() || !ins.form.flags().is_pure() || defs.len() != 1 || !whole {
                continue;
            }
            let mut renamed = ins.clone();
            let d = defs[0];
            let reg = cur.reg(d).clone();
            let Some(ty) = Mod::from_text(reg.ty.text()).filter(|_| reg.vector.is_none()) else { continue };
            let Ok(_) = Instruction::new(Opcode::MOV, &[ty], [Operand::reg(d), Operand::reg(d)]) else { continue };
            let t = cur.new_reg(reg.ty);
            renamed.for_each_def_mut(|r| *r = t);
            let mov = Instruction::new(Opcode::MOV, &[ty], [Operand::reg(d), Operand::reg(t)]).unwrap();
            cur.replace(renamed);
            cur.insert_after(mov);
            cur.next(); // past the mov
        }
    }
    m
}

#[test]
fn rewriting_through_fresh_registers_keeps_behaviour() {
    let stats = ptx_tests::differential::check_transform(0..12, &GenOptions::small(), through_temporaries).unwrap_or_else(|e| panic!("{e}"));
    assert!(stats.compared > 0);
    // The transform did something on these kernels.
    let k = ptx_tests::gen::kernel(1, &GenOptions::small());
    let before = ptx_ir::parse_str(&k.text).unwrap();
    let after = through_temporaries(before.clone());
    let count = |m: &Module| m.items.iter().map(|i| if let Item::Func(f) = i { f.instructions().count() } else { 0 }).sum::<usize>();
    assert!(count(&after) > count(&before));
}

#[test]
fn bad_ids_and_missing_declarations_are_errors_not_panics() {
    let mut f = Function::new(FuncKind::Entry, "k");
    f.regs.push(Reg { name: "%nodecl".into(), ty: ScalarType::U32, vector: None, space: StateSpace::Reg });
    let mov = |d: u32| Stmt::from(Instruction::new(Opcode::MOV, &[Mod::U32], [Operand::reg(RegId(d)), 1i64.into()]).unwrap());
    let body = f.body.as_mut().unwrap();
    body.push(mov(0));
    body.push(mov(9));
    body.push(Stmt::Label(LabelId(4)));
    body.push(Stmt::Instr(Box::new(Instruction::new(Opcode::BRA, &[], [Operand::Label(LabelId(5))]).unwrap())));
    let m = Module { version: ptx_ir::ir::Version { major: 8, minor: 0 }, target: vec!["sm_80".into()], address_size: Some(64), items: vec![Item::Func(Box::new(f))] };
    let text = ptx_print::print_module(&m);
    assert!(text.contains("mov.u32 \t<invalid register 9>, 1;") && text.contains("<invalid label 4>:") && text.contains("bra \t<invalid label 5>;"), "{text}");
    let diags: Vec<String> = ptx_ir::verify::verify(&m, &SourceMap::default(), "k.ptx", b"").into_iter().map(|d| d.message).collect();
    // Ids outside the tables first (the other checks look registers up by id).
    assert_eq!(diags.len(), 3, "{diags:#?}");
    assert!(diags[0].contains("register #9 is not in the register table"), "{diags:#?}");
    assert!(diags[1].contains("label #4") && diags[2].contains("label #5"), "{diags:#?}");
    // With the ids mended, the missing declaration is reported.
    let Item::Func(f) = &m.items[0] else { unreachable!() };
    let mut f = (**f).clone();
    f.body.as_mut().unwrap().truncate(1);
    let m = Module { items: vec![Item::Func(Box::new(f))], ..m };
    let diags: Vec<String> = ptx_ir::verify::verify(&m, &SourceMap::default(), "k.ptx", b"").into_iter().map(|d| d.message).collect();
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(diags[0].contains("%nodecl"), "{diags:#?}");
}

#[test]
fn fresh_names_avoid_every_name_in_the_function() {
    // Names that look like fresh ones already exist: a register range, a
    // local variable, a parameter and a module variable the body names.
    let text = ".version 8.0\n.target sm_80\n.address_size 64\n.global .u32 %tf32_3;\n\
        .visible .entry k(.param .u32 %tu64_0)\n{\n.reg .u32 %tu32_<4>;\n.local .u32 %tpred_9;\n\
        ld.global.u32 %tu32_0, [%tf32_3];\nret;\n}\n";
    let mut m = ptx_ir::parse_str(text).unwrap();
    let Item::Func(f) = &mut m.items[1] else { panic!() };
    let types = [ScalarType::U32, ScalarType::U64, ScalarType::Pred, ScalarType::F32, ScalarType::U32];
    let fresh: Vec<RegId> = types.iter().map(|t| f.new_reg(*t)).collect();
    let names: Vec<&str> = fresh.iter().map(|r| &*f.reg(*r).name).collect();
    assert_eq!(names, ["%t1u32_0", "%t1u64_0", "%t1pred_0", "%t1f32_0", "%t1u32_1"]);
    // Use each before the `ret`; the printed module parses and verifies.
    let at = f.body.as_ref().unwrap().len() - 1;
    for r in fresh {
        let ty = f.reg(r).ty;
        let v: Operand = if ty == ScalarType::F32 { 2.5f32.into() } else { 1i64.into() };
        let mov = Instruction::new(Opcode::MOV, &[Mod::from_text(ty.text()).unwrap()], [Operand::reg(r), v]).unwrap();
        f.body.as_mut().unwrap().insert(at, mov.into());
    }
    let out = ptx_print::print_module(&m);
    assert_eq!(errors(&out), Vec::<String>::new(), "{out}");
    assert!(out.contains(".reg .u32 %t1u32_<2>;"), "{out}");
}

#[test]
fn a_hundred_thousand_statements_edit_in_one_pass() {
    // 100k instructions; every one gets a fresh result register through the
    // cursor. Quadratic work here would take minutes; linear is a blink.
    let mut f = Function::new(FuncKind::Entry, "big");
    let r = f.new_reg(ScalarType::U32);
    let body = f.body.as_mut().unwrap();
    for k in 0..100_000i64 {
        body.push(Instruction::new(Opcode::ADD, &[Mod::U32], [Operand::reg(r), Operand::reg(r), k.into()]).unwrap().into());
    }
    let mut cur = f.cursor();
    while cur.next_instruction().is_some() {
        let t = cur.new_reg(ScalarType::U32);
        cur.instruction_mut().unwrap().for_each_def_mut(|d| *d = t);
    }
    drop(cur);
    assert_eq!(f.regs.len(), 100_001);
    assert_eq!(ptx_ir::verify::registers_declared(&f), []);
    let Some(Stmt::Decl(d)) = f.body.as_ref().unwrap().first() else { panic!() };
    assert_eq!(d.name(0).unwrap().range, Some(100_001));
}
