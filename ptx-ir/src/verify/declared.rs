//! Registers and labels the printer can print: every id an instruction or
//! statement names is in the function's tables, and every register has a
//! `.reg` declaration of its type visible where it is used (the function's
//! parameters, or a declaration earlier in an enclosing scope) — otherwise
//! the printed text would not parse back. IR made by hand can break this;
//! parsed IR cannot. Runs before the other checks of a function, which
//! index the tables.

use crate::ir::{DeclName, Function, LabelId, Operand, RegId, Stmt};
use crate::isa::{ScalarType, StateSpace};
use crate::ir::{is_member_of, range_member as split_index};
use rustc_hash::{FxHashMap, FxHashSet};

/// One problem, at statement `stmt` of the body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegProblem {
    pub stmt: usize,
    pub message: String,
    /// An id past the end of a table: nothing that reads the tables can run.
    pub fatal: bool,
}

#[derive(Clone, Copy)]
enum Declared {
    Reg(ScalarType, Option<u8>),
    Var,
}

#[derive(Default)]
struct Scope<'a> {
    names: FxHashMap<&'a str, Declared>,
    /// `%r<100>`: prefix, count, type, vector.
    ranges: FxHashMap<&'a str, (u32, ScalarType, Option<u8>)>,
}

impl<'a> Scope<'a> {
    /// Declares the names of a declaration of `space`, `ty` and `vector`.
    fn declare(&mut self, space: StateSpace, ty: ScalarType, vector: Option<u8>, names: impl Iterator<Item = DeclName<'a>>) {
        for n in names.filter(|n| n.name.as_str() != "_") {
            match (space, n.range) {
                (StateSpace::Reg, Some(count)) => {
                    if !self.names.is_empty() {
                        self.names.retain(|name, _| !is_member_of(name, n.name, count));
                    }
                    self.ranges.insert(n.name, (count, ty, vector));
                }
                (StateSpace::Reg, None) => {
                    self.names.insert(n.name, Declared::Reg(ty, vector));
                }
                _ => {
                    self.names.insert(n.name, Declared::Var);
                }
            }
        }
    }
}

/// The declaration `name` resolves to, innermost scope first (as the parser resolves it).
fn lookup(scopes: &[Scope], name: &str) -> Option<Declared> {
    let split = split_index(name);
    for s in scopes.iter().rev() {
        if let Some(d) = s.names.get(name) {
            return Some(*d);
        }
        if let Some((prefix, n)) = split {
            if let Some(&(count, ty, vector)) = s.ranges.get(prefix) {
                if n < count {
                    return Some(Declared::Reg(ty, vector));
                }
            }
        }
    }
    None
}

fn type_text(ty: ScalarType, vector: Option<u8>) -> String {
    match vector {
        Some(n) => format!(".v{n} {}", ty.text()),
        None => ty.text().to_string(),
    }
}

/// Checks `f`; each register or label id is reported once, at its first bad use.
pub fn registers_declared(f: &Function) -> Vec<RegProblem> {
    let Some(body) = &f.body else { return Vec::new() };
    let mut out = Vec::new();
    let mut reported_regs: FxHashSet<RegId> = FxHashSet::default();
    let mut reported_labels: FxHashSet<LabelId> = FxHashSet::default();
    let mut scopes = vec![Scope::default()];
    // Bumped when a block opens or closes or names are declared; a register
    // found declared right at one generation (recorded in `found_at`; 0 is
    // none) is found so at every point of it.
    let mut generation = 1u32;
    let mut found_at: Vec<u32> = vec![0; f.regs.len()];
    for d in f.params.iter().flatten().chain(f.ret.iter().flatten()) {
        scopes[0].declare(d.space, d.ty, d.vector, d.names.iter().map(DeclName::from));
    }
    let mut label = |stmt: usize, l: LabelId, out: &mut Vec<RegProblem>| {
        if f.try_label_name(l).is_none() && reported_labels.insert(l) {
            let message = format!("label id {} is past the end of the label table of `{}` ({} labels)", l.0, f.name, f.labels.len());
            out.push(RegProblem { stmt, message, fatal: true });
        }
    };
    for (k, s) in body.iter().enumerate() {
        match s {
            Stmt::ScopeBegin => {
                scopes.push(Scope::default());
                generation += 1;
            }
            Stmt::ScopeEnd => {
                if scopes.len() > 1 {
                    scopes.pop();
                }
                generation += 1;
            }
            Stmt::Decl(d) => {
                scopes.last_mut().unwrap().declare(d.space(), d.ty(), d.vector(), d.names());
                generation += 1;
            }
            Stmt::Label(l) | Stmt::CallTargets(l, _) | Stmt::CallPrototype(l, _) => label(k, *l, &mut out),
            Stmt::BranchTargets(l, ts) => {
                for l in std::iter::once(l).chain(ts) {
                    label(k, *l, &mut out);
                }
            }
            Stmt::Instr(ins) => {
                for op in &ins.operands {
                    op.for_each_operand(&mut |o| {
                        if let Operand::Label(l) = o {
                            label(k, *l, &mut out);
                        }
                    });
                }
                ins.for_each_reg(|r, _| {
                    if found_at.get(r.0 as usize) == Some(&generation) || reported_regs.contains(&r) {
                        return;
                    }
                    let Some(reg) = f.try_reg(r) else {
                        let message = format!("register id {} is past the end of the register table of `{}` ({} registers)", r.0, f.name, f.regs.len());
                        out.push(RegProblem { stmt: k, message, fatal: true });
                        reported_regs.insert(r);
                        return;
                    };
                    let message = match lookup(&scopes, &reg.name) {
                        Some(Declared::Reg(ty, vector)) if (ty, vector) == (reg.ty, reg.vector) => {
                            found_at[r.0 as usize] = generation;
                            return;
                        }
                        Some(Declared::Reg(ty, vector)) => format!(
                            "register `{}` is {} in the register table, but the declaration visible here makes it {}",
                            reg.name,
                            type_text(reg.ty, reg.vector),
                            type_text(ty, vector)
                        ),
                        Some(Declared::Var) => format!("`{}` is a register in the register table, but the declaration visible here is a variable", reg.name),
                        None => format!("register `{}` has no `.reg` declaration visible here (Function::new_reg declares the registers it makes)", reg.name),
                    };
                    out.push(RegProblem { stmt: k, message, fatal: false });
                    reported_regs.insert(r);
                });
            }
            Stmt::Loc(_) | Stmt::Pragma(_) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{FuncKind, Instruction, Item, Reg, VarDecl};
    use crate::isa::{Mod, Opcode};

    fn function(src: &str) -> Function {
        let text = format!(".version 8.0\n.target sm_80\n.address_size 64\n.visible .func f(.reg .u32 a)\n{{\n{src}\n}}\n");
        let m = crate::parse_str(&text).unwrap();
        let Item::Func(f) = &m.items[0] else { panic!() };
        (**f).clone()
    }

    #[test]
    fn parsed_functions_have_no_problems() {
        let f = function(".reg .b32 %r<3>; .reg .f32 x; mov.u32 %r1, a; { .reg .u64 %r1; mov.u64 %r1, 0; } add.f32 x, x, x;");
        assert_eq!(registers_declared(&f), []);
    }

    #[test]
    fn missing_declarations_wrong_types_and_bad_ids() {
        let mut f = Function::new(FuncKind::Entry, "k");
        f.regs.push(Reg { name: "%x".into(), ty: ScalarType::U32, vector: None, space: StateSpace::Reg });
        let mov = |d: RegId| Stmt::from(Instruction::new(Opcode::MOV, &[Mod::U32], [d.into(), 1i64.into()]).unwrap());
        let body = f.body.as_mut().unwrap();
        body.push(mov(RegId(0)));
        body.push(Stmt::Decl(VarDecl::new(StateSpace::Reg, ScalarType::F32, "%x").into()));
        body.push(mov(RegId(0)));
        body.push(mov(RegId(7)));
        body.push(Stmt::Label(LabelId(2)));
        let p = registers_declared(&f);
        assert_eq!(p.iter().map(|p| (p.stmt, p.fatal)).collect::<Vec<_>>(), [(0, false), (3, true), (4, true)]);
        assert!(p[0].message.contains("`%x` has no `.reg` declaration"), "{}", p[0].message);
    }

    #[test]
    fn types_must_match_the_table() {
        let mut f = Function::new(FuncKind::Entry, "k");
        f.regs.push(Reg { name: "%x".into(), ty: ScalarType::U32, vector: None, space: StateSpace::Reg });
        let body = f.body.as_mut().unwrap();
        body.push(Stmt::Decl(VarDecl::new(StateSpace::Reg, ScalarType::F32, "%x").into()));
        body.push(Instruction::new(Opcode::MOV, &[Mod::U32], [RegId(0).into(), 1i64.into()]).unwrap().into());
        let p = registers_declared(&f);
        assert_eq!(p.len(), 1);
        assert!(p[0].message.contains(".u32 in the register table, but the declaration visible here makes it .f32"), "{}", p[0].message);
    }

    #[test]
    fn fresh_registers_are_declared() {
        let mut f = function(".reg .b32 %r<3>; ret;");
        let r = f.new_reg(ScalarType::U32);
        let body = f.body.as_mut().unwrap();
        body.insert(2, Instruction::new(Opcode::MOV, &[Mod::U32], [r.into(), 1i64.into()]).unwrap().into());
        assert_eq!(registers_declared(&f), []);
    }

    #[test]
    fn closed_scopes_hide_their_declarations() {
        let mut f = function("{ .reg .b32 %in; } ret;");
        let r = f.regs.iter().position(|r| &*r.name == "%in").unwrap() as u32;
        f.body.as_mut().unwrap().insert(3, Instruction::new(Opcode::MOV, &[Mod::B32], [RegId(r).into(), 1i64.into()]).unwrap().into());
        let p = registers_declared(&f);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].stmt, 3);
    }
}
