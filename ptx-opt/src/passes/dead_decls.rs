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
//! Module-level symbols are [`dead_symbols`]'s, which the pass manager runs
//! after the functions (the incremental database, which optimizes one
//! function at a time, does not).

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

/// The module-level half of `dead-decls` (the pass manager runs it after
/// the functions when the pipeline has `dead-decls`): internal functions
/// (`.func` without `.visible`, `.extern`, `.weak` or `.common`) and
/// internal `.global`, `.shared` and `.const` variables that no other item
/// names (an instruction, a `.calltargets` list, an initializer, an
/// `.alias`) are removed, until nothing more goes. Modules with debug
/// sections are left alone (DWARF names symbols from outside the code).
/// Returns how many items went.
pub fn dead_symbols(m: &mut ptx_ir::ir::Module) -> usize {
    use ptx_ir::ir::{FuncKind, Item};
    if m.items.iter().any(|i| matches!(i, Item::Section(_) | Item::Dwarf(_))) {
        return 0;
    }
    let mut removed = 0;
    loop {
        // Names each item mentions.
        let named: Vec<FxHashSet<String>> = m.items.iter().map(names_in_item).collect();
        let internal = |i: &Item| -> Option<Vec<String>> {
            match i {
                Item::Func(f) if f.kind == FuncKind::Func && f.linkage.is_none() => Some(vec![f.name.to_string()]),
                Item::Var(v) if v.linkage.is_none() && matches!(v.decl.space, StateSpace::Global | StateSpace::Shared | StateSpace::Const) => Some(v.decl.names.iter().map(|n| n.name.to_string()).collect()),
                _ => None,
            }
        };
        let dead: Vec<usize> = (0..m.items.len())
            .filter(|&k| internal(&m.items[k]).is_some_and(|names| names.iter().all(|n| named.iter().enumerate().all(|(j, s)| j == k || !s.contains(n)))))
            .collect();
        if dead.is_empty() {
            return removed;
        }
        removed += dead.len();
        let mut k = 0;
        m.items.retain(|_| {
            k += 1;
            !dead.contains(&(k - 1))
        });
    }
}

/// Every variable or function name an item mentions (declared names of a
/// function's prototypes and of an item's own declaration excluded).
fn names_in_item(item: &ptx_ir::ir::Item) -> FxHashSet<String> {
    use ptx_ir::ir::scopes::{names_used, NameUse};
    use ptx_ir::ir::Item;
    let mut out = FxHashSet::default();
    let init = |d: &ptx_ir::ir::VarDecl, out: &mut FxHashSet<String>| {
        for n in &d.names {
            if let Some(i) = &n.init {
                i.exprs(&mut |e| e.symbols(&mut |s| {
                    out.insert(s.to_string());
                }));
            }
        }
    };
    match item {
        Item::Func(f) => {
            for s in f.body.iter().flatten() {
                match s {
                    Stmt::Instr(ins) => {
                        for u in names_used(ins) {
                            if let NameUse::Var(v) = u {
                                out.insert(v.to_string());
                            }
                        }
                    }
                    Stmt::CallTargets(_, names) => out.extend(names.iter().map(|n| n.to_string())),
                    Stmt::Decl(d) => init(d, &mut out),
                    _ => {}
                }
            }
        }
        Item::Var(v) => init(&v.decl, &mut out),
        Item::Alias { aliasee, .. } => {
            out.insert(aliasee.to_string());
        }
        _ => {}
    }
    out
}
