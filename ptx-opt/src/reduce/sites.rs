//! Places in a module a reduction can change ([`Site`]), what a function's
//! body refers to ([`Uses`]), and the one edit most reductions share:
//! removing items, body statements and header directives ([`remove`]).
//!
//! Sites are positions in the module as it is now (item index, statement
//! index within the function's body). The search re-enumerates them after
//! every accepted change, so a site never outlives the module it names.

use ptx_ir::ir::{range_member, AddrBase, DeclName, Function, Item, LabelId, Module, Name, Operand, RegId, Stmt};
use ptx_ir::isa::StateSpace;
use rustc_hash::FxHashSet;

/// One place a reduction changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Site {
    /// `module.items[item]`.
    Item(usize),
    /// Statement `stmt` of the body of the function at `items[item]`.
    Stmt { item: usize, stmt: usize },
    /// Operand `operand` of the instruction at statement `stmt`.
    Operand { item: usize, stmt: usize, operand: usize },
    /// Header directive `k` (`.maxntid`, `.pragma` ...) of the function at `items[item]`.
    Directive { item: usize, k: usize },
    /// Parameter `k` of the function at `items[item]`.
    Param { item: usize, k: usize },
    /// Entry `k` of the module's `.target` list (`debug`, `texmode_independent`).
    Target(usize),
}

/// Every body statement of every function, in module order:
/// (item index, function, statement index, statement).
pub(crate) fn statements(m: &Module) -> impl Iterator<Item = (usize, &Function, usize, &Stmt)> {
    m.items.iter().enumerate().flat_map(|(i, item)| {
        let f = match item {
            Item::Func(f) => Some(&**f),
            _ => None,
        };
        f.into_iter().flat_map(move |f| f.body.iter().flatten().enumerate().map(move |(s, stmt)| (i, f, s, stmt)))
    })
}

/// `m` without the items, statements, directives, parameters and `.target`
/// entries named by `sites`
/// (operand sites are ignored: they are rewritten, not removed).
pub(crate) fn remove(m: &Module, sites: &[Site]) -> Module {
    let mut items = FxHashSet::default();
    let mut stmts = FxHashSet::default();
    let mut directives = FxHashSet::default();
    let mut params = FxHashSet::default();
    let mut target = FxHashSet::default();
    for s in sites {
        match *s {
            Site::Item(i) => {
                items.insert(i);
            }
            Site::Stmt { item, stmt } => {
                stmts.insert((item, stmt));
            }
            Site::Directive { item, k } => {
                directives.insert((item, k));
            }
            Site::Param { item, k } => {
                params.insert((item, k));
            }
            Site::Target(k) => {
                target.insert(k);
            }
            Site::Operand { .. } => {}
        }
    }
    let target = m.target.iter().enumerate().filter(|(k, _)| !target.contains(k)).map(|(_, t)| t.clone()).collect();
    let mut out = Module { version: m.version, target, address_size: m.address_size, items: Vec::with_capacity(m.items.len()) };
    for (i, item) in m.items.iter().enumerate() {
        if items.contains(&i) {
            continue;
        }
        let mut item = item.clone();
        if let Item::Func(f) = &mut item {
            if let Some(body) = &mut f.body {
                let mut k = 0;
                body.retain(|_| {
                    k += 1;
                    !stmts.contains(&(i, k - 1))
                });
            }
            let mut k = 0;
            f.directives.retain(|_| {
                k += 1;
                !directives.contains(&(i, k - 1))
            });
            if let Some(list) = &mut f.params {
                let mut k = 0;
                list.retain(|_| {
                    k += 1;
                    !params.contains(&(i, k - 1))
                });
            }
        }
        out.items.push(item);
    }
    out
}

/// What the statements of one function refer to.
#[derive(Default)]
pub(crate) struct Uses {
    /// Labels named by operands, `.branchtargets` lists and `.loc` function names.
    pub labels: FxHashSet<LabelId>,
    /// Registers read or written (guards included).
    pub regs: FxHashSet<RegId>,
    /// Variable, parameter and function names taken by operands,
    /// addresses, `.calltargets` lists and initializers.
    pub symbols: FxHashSet<Name>,
}

impl Uses {
    pub fn of(f: &Function) -> Uses {
        let mut u = Uses::default();
        for stmt in f.body.iter().flatten() {
            u.add_stmt(stmt);
        }
        u
    }

    fn add_stmt(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Instr(ins) => {
                ins.for_each_reg(|r, _| {
                    self.regs.insert(r);
                });
                for op in &ins.operands {
                    op.for_each_operand(&mut |o| self.add_operand(o));
                }
            }
            Stmt::BranchTargets(_, targets) => self.labels.extend(targets.iter().copied()),
            Stmt::CallTargets(_, names) => self.symbols.extend(names.iter().cloned()),
            Stmt::Decl(d) => {
                for name in d.names() {
                    if let Some(init) = name.init {
                        init.symbolic_exprs(&mut |e| {
                            e.symbols(&mut |s| {
                                self.symbols.insert(s.into());
                            })
                        });
                    }
                }
            }
            Stmt::Label(_) | Stmt::Loc(_) | Stmt::Pragma(_) | Stmt::ScopeBegin | Stmt::ScopeEnd | Stmt::CallPrototype(..) => {}
        }
    }

    fn add_operand(&mut self, o: &Operand) {
        match o {
            Operand::Label(l) => {
                self.labels.insert(*l);
            }
            Operand::Sym(s) => {
                self.symbols.insert(s.name.clone());
            }
            Operand::Addr(a) => {
                if let AddrBase::Sym(name) = &a.base {
                    self.symbols.insert(name.clone());
                }
            }
            Operand::ArrayElem(e) => {
                self.symbols.insert(e.name.clone());
            }
            _ => {}
        }
    }

    /// Does any statement of `f` name something a declaration of `space` with these names declares?
    pub fn names_any_of<'a>(&self, f: &Function, space: StateSpace, mut names: impl Iterator<Item = DeclName<'a>>) -> bool {
        if space != StateSpace::Reg {
            return names.any(|d| self.symbols.contains(d.name));
        }
        let used: FxHashSet<&str> = self.regs.iter().filter_map(|r| f.try_reg(*r)).map(|r| &*r.name).collect();
        names.any(|d| match d.range {
            None => used.contains(d.name.as_str()),
            Some(n) => used.iter().any(|u| matches!(range_member(u), Some((prefix, k)) if prefix == d.name.as_str() && k < n)),
        })
    }
}

/// Every name the module's items take the address of or call, outside the
/// item that declares it: (item index that names it, the name).
pub(crate) fn item_references(m: &Module) -> Vec<(usize, Name)> {
    let mut out = Vec::new();
    for (i, item) in m.items.iter().enumerate() {
        match item {
            Item::Func(f) => {
                let mut names: Vec<Name> = Uses::of(f).symbols.into_iter().collect();
                names.sort();
                out.extend(names.into_iter().map(|n| (i, n)));
            }
            Item::Var(v) => {
                for d in &v.decl.names {
                    if let Some(init) = &d.init {
                        init.symbolic_exprs(&mut |e| e.symbols(&mut |s| out.push((i, s.into()))));
                    }
                }
            }
            Item::Alias { aliasee, .. } => out.push((i, aliasee.clone())),
            _ => {}
        }
    }
    out
}

/// The names a module item declares (a function's name, a variable's names,
/// an alias).
pub(crate) fn declared_names(item: &Item) -> Vec<&str> {
    match item {
        Item::Func(f) => vec![&*f.name],
        Item::Var(v) => v.decl.names.iter().map(|d| &*d.name).collect(),
        Item::Alias { alias, .. } => vec![&**alias],
        _ => Vec::new(),
    }
}

/// Does this statement name `symbol` (in an operand, an address, a
/// `.calltargets` list or an initializer)?
pub(crate) fn stmt_names(stmt: &Stmt, symbol: &str) -> bool {
    let mut u = Uses::default();
    u.add_stmt(stmt);
    u.symbols.contains(symbol)
}
