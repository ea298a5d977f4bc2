//! A [`Program`] as PTX text: a kernel that loads the inputs from its
//! parameters, runs the body and stores the result through a pointer, so
//! that ptxas, the verifier and the interpreter can take a program.
//!
//! Register names: inputs `%a0 ...`, the k-th instruction's register
//! `%r<inputs + k>` (predicates `%p<inputs + k>`); the body's instructions
//! are printed by `ptx-print`.

use super::program::Program;
use ptx_ir::ir::{member_name, FuncKind, Function, Reg};
use ptx_ir::isa::{ScalarType, StateSpace};
use std::fmt::Write;

/// `.visible .entry name(.param .u64 name_out, .param .T name_in0, ...)`
/// computing the program and storing its result at `name_out`.
pub fn write_kernel(out: &mut String, program: &Program, name: &str) -> Result<(), String> {
    program.check()?;
    let result = program.result().expect("checked");
    let result_type = program.reg_type(result);
    if result_type == ScalarType::Pred || program.input_types().contains(&ScalarType::Pred) {
        return Err("a kernel cannot load or store a predicate".into());
    }
    let names = Function {
        linkage: None,
        kind: FuncKind::Func,
        attributes: Vec::new(),
        ret: None,
        name: name.into(),
        params: None,
        directives: Vec::new(),
        regs: program
            .types
            .iter()
            .enumerate()
            .map(|(k, t)| {
                let prefix = if k < program.inputs {
                    "%a"
                } else if *t == ScalarType::Pred {
                    "%p"
                } else {
                    "%r"
                };
                Reg { name: member_name(prefix, k as u32), ty: *t, vector: None, space: StateSpace::Reg }
            })
            .collect(),
        labels: Vec::new(),
        body: None,
        fresh: Default::default(),
    };
    let _ = write!(out, ".visible .entry {name}(\n\t.param .u64 {name}_out");
    for (k, t) in program.input_types().iter().enumerate() {
        let _ = write!(out, ",\n\t.param {} {name}_in{k}", t.text());
    }
    out.push_str(")\n{\n\t.reg .u64 %out;\n");
    for r in &names.regs {
        let _ = writeln!(out, "\t.reg {} {};", r.ty.text(), r.name);
    }
    let _ = writeln!(out, "\tld.param.u64 %out, [{name}_out];");
    for (k, t) in program.input_types().iter().enumerate() {
        let _ = writeln!(out, "\tld.param{} %a{k}, [{name}_in{k}];", t.text());
    }
    for ins in &program.body {
        out.push('\t');
        ptx_print::write_instruction(out, &names, ins);
        out.push('\n');
    }
    let _ = writeln!(out, "\tst.global{} [%out], {};\n\tret;\n}}", result_type.text(), names.regs[result.0 as usize].name);
    Ok(())
}
