//! `dead-decls`: declarations in a function body that nothing uses.
//!
//! - `.reg` declarators of the outermost scope none of whose registers an
//!   instruction names (a range `%r<9>` goes when none of `%r0`..`%r8` is
//!   named);
//! - `.local` and `.shared` variables of the outermost scope whose name no
//!   statement mentions (a promoted stack, a demoted array nobody reads).
//!
//! Names are compared as text, over every scope: a name used in a nested
//! block keeps an outer declaration of the same name (conservative).
//! Module-level symbols are not this pass's: the function passes see one
//! function at a time.

use super::{Analyses, Pass, Preserves};
use crate::{ModuleContext, OptLevel};
use ptx_ir::ir::{AddrBase, Function, Name, Operand, Stmt};
use ptx_ir::isa::StateSpace;
use rustc_hash::FxHashSet;

pub const PASS: Pass = Pass {
    name: "dead-decls",
    description: "removes unused .reg declarations and unused function-scope .local/.shared variables",
    run,
    preserves: Preserves::Nothing,
};

fn run(f: &Function, _analyses: &mut Analyses, _ctx: &ModuleContext, _level: OptLevel) -> Option<Function> {
    let body = f.body.as_ref()?;
    let mut regs: FxHashSet<&str> = FxHashSet::default();
    let mut syms: FxHashSet<Name> = FxHashSet::default();
    for s in body {
        match s {
            Stmt::Instr(ins) => {
                ins.for_each_reg(|r, _| {
                    if let Some(reg) = f.try_reg(r) {
                        regs.insert(reg.name.as_ref());
                    }
                });
                if let Some(g) = ins.guard {
                    if let Some(reg) = f.try_reg(g.reg) {
                        regs.insert(reg.name.as_ref());
                    }
                }
                for op in &ins.operands {
                    op.for_each_operand(&mut |o| match o {
                        Operand::Sym(n, _) => {
                            syms.insert(n.clone());
                        }
                        Operand::Addr(a) => {
                            if let AddrBase::Sym(n) = &a.base {
                                syms.insert(n.clone());
                            }
                        }
                        Operand::ArrayElem(e) => {
                            syms.insert(e.name.clone());
                        }
                        _ => {}
                    });
                }
            }
            // Initializers of other variables may take a variable's address.
            Stmt::Decl(d) if d.names.iter().any(|n| n.init.is_some()) => return None,
            _ => {}
        }
    }
    let mut depth = 0usize;
    let mut g: Option<Function> = None;
    let mut out: Vec<Stmt> = Vec::with_capacity(body.len());
    for s in body {
        match s {
            Stmt::ScopeBegin => depth += 1,
            Stmt::ScopeEnd => depth = depth.saturating_sub(1),
            Stmt::Decl(d) if depth == 0 => {
                let used = |n: &ptx_ir::ir::Declarator| match d.space {
                    StateSpace::Reg => match n.range {
                        Some(count) => (0..count).any(|i| regs.contains(format!("{}{i}", n.name).as_str())),
                        None => regs.contains(n.name.as_ref()),
                    },
                    StateSpace::Local | StateSpace::Shared => syms.contains(&n.name),
                    _ => true,
                };
                if !d.names.iter().all(used) {
                    g.get_or_insert_with(|| f.clone());
                    let names: Vec<_> = d.names.iter().filter(|n| used(n)).cloned().collect();
                    if !names.is_empty() {
                        let mut d2 = (**d).clone();
                        d2.names = names;
                        out.push(Stmt::Decl(Box::new(d2)));
                    }
                    continue;
                }
            }
            _ => {}
        }
        out.push(s.clone());
    }
    let mut g = g?;
    g.body = Some(out);
    Some(g)
}
