//! Every immediate the e-graph engine may write into an instruction is one
//! ptxas accepts: each source position of each instruction template of the
//! generator's catalog (every pure instruction the evaluator knows) where
//! `ptx_opt::engine::emit::immediate` gives an operand is rewritten with
//! that immediate, and the whole module is assembled.

use ptx_ir::ir::{Item, Operand, Stmt};

#[test]
fn emitted_immediates_assemble() {
    let text = ptx_tests::gen::catalog_module();
    let parsed = ptx_ir::parse("catalog.ptx", text.as_bytes()).expect("the catalog module parses");
    let mut module = parsed.module.clone();
    let mut variants = 0;
    for item in &mut module.items {
        let Item::Func(f) = item else { continue };
        let Some(body) = f.body.as_mut() else { continue };
        let mut out = Vec::with_capacity(body.len() * 2);
        for s in body.drain(..) {
            let Stmt::Instr(ins) = &s else {
                out.push(s);
                continue;
            };
            let specs = ins.form.operands();
            if ins.form.flags().is_pure() && ptx_opt::engine::emit::takes_immediates(ins) {
                for (k, op) in ins.operands.iter().enumerate() {
                    let Some(spec) = specs.get(k) else { continue };
                    let Operand::Reg(r) = op else { continue };
                    if spec.write || r.sel.is_some() || r.prefix != ptx_ir::ir::Prefix::None {
                        continue;
                    }
                    let Some(ty) = ins.operand_type(k) else { continue };
                    let width = ptx_opt::engine::lang::type_width(ty);
                    let value = if ty == ptx_ir::isa::ScalarType::F32 { 0x3fc0_0000 } else { 3 };
                    if let Some(imm) = ptx_opt::engine::emit::immediate(value, width, Some(ty)) {
                        let mut v = (**ins).clone();
                        v.operands[k] = imm;
                        out.push(Stmt::Instr(Box::new(v)));
                        variants += 1;
                    }
                }
            }
            out.push(s);
        }
        *body = out;
    }
    assert!(variants > 1000, "only {variants} variants");
    let printed = ptx_print::print_module(&module);
    if let Err(e) = ptx_tests::ptxas::assemble_for_target(&printed) {
        let lines: Vec<&str> = printed.lines().collect();
        let mut report = String::new();
        for l in e.lines() {
            if let Some(n) = l.split(", line ").nth(1).and_then(|r| r.split(';').next()).and_then(|n| n.trim().parse::<usize>().ok()) {
                report.push_str(&format!("{}\n    {}\n", l.trim(), lines.get(n - 1).unwrap_or(&"?").trim()));
            }
        }
        panic!("ptxas rejects immediates the engine may emit:\n{report}\n{}", &e[..e.len().min(2000)]);
    }
}
