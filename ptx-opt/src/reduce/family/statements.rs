//! Body statements: `drop-branches` (branch instructions, so control flow
//! falls through), `drop-instructions` (any instruction), `drop-scopes`
//! (a `{ }` block's braces, its statements kept), `drop-unused-decls`
//! (declarations nothing names) and `drop-unused-labels` (labels no
//! branch or `.branchtargets` names).

use super::Family;
use crate::reduce::sites::{self, Site, Uses};
use ptx_ir::ir::{Function, Module, Stmt};
use ptx_ir::isa::Flags;

/// The statement sites of `m` that `keep` selects; `keep` sees the
/// function, what its body names, and the statement.
fn statement_sites(m: &Module, keep: impl Fn(&Function, &Uses, &Stmt) -> bool) -> Vec<Site> {
    let mut out = Vec::new();
    let mut current: Option<(usize, Uses)> = None;
    for (item, f, s, stmt) in sites::statements(m) {
        if current.as_ref().map(|(i, _)| *i) != Some(item) {
            current = Some((item, Uses::of(f)));
        }
        if let Some((_, uses)) = &current {
            if keep(f, uses, stmt) {
                out.push(Site::Stmt { item, stmt: s });
            }
        }
    }
    out
}

pub(crate) struct DropBranches;

impl Family for DropBranches {
    fn name(&self) -> &'static str {
        "drop-branches"
    }

    fn sites(&self, m: &Module) -> Vec<Site> {
        statement_sites(m, |_, _, stmt| matches!(stmt, Stmt::Instr(ins) if ins.form.flags().contains(Flags::BRANCH)))
    }

    fn apply(&self, m: &Module, chosen: &[Site]) -> Module {
        sites::remove(m, chosen)
    }
}

pub(crate) struct DropInstructions;

impl Family for DropInstructions {
    fn name(&self) -> &'static str {
        "drop-instructions"
    }

    fn sites(&self, m: &Module) -> Vec<Site> {
        statement_sites(m, |_, _, stmt| matches!(stmt, Stmt::Instr(_)))
    }

    fn apply(&self, m: &Module, chosen: &[Site]) -> Module {
        sites::remove(m, chosen)
    }
}

pub(crate) struct DropUnusedDecls;

impl Family for DropUnusedDecls {
    fn name(&self) -> &'static str {
        "drop-unused-decls"
    }

    fn sites(&self, m: &Module) -> Vec<Site> {
        statement_sites(m, |f, uses, stmt| matches!(stmt, Stmt::Decl(d) if !uses.names_any_of(f, d.space(), d.names())))
    }

    fn apply(&self, m: &Module, chosen: &[Site]) -> Module {
        sites::remove(m, chosen)
    }
}

pub(crate) struct DropUnusedLabels;

impl Family for DropUnusedLabels {
    fn name(&self) -> &'static str {
        "drop-unused-labels"
    }

    fn sites(&self, m: &Module) -> Vec<Site> {
        statement_sites(m, |_, uses, stmt| matches!(stmt, Stmt::Label(l) if !uses.labels.contains(l)))
    }

    fn apply(&self, m: &Module, chosen: &[Site]) -> Module {
        sites::remove(m, chosen)
    }
}

pub(crate) struct DropScopes;

impl Family for DropScopes {
    fn name(&self) -> &'static str {
        "drop-scopes"
    }

    /// One site per `{`; applying it removes the matching `}` too.
    fn sites(&self, m: &Module) -> Vec<Site> {
        statement_sites(m, |_, _, stmt| matches!(stmt, Stmt::ScopeBegin))
    }

    fn apply(&self, m: &Module, chosen: &[Site]) -> Module {
        let mut removed = Vec::with_capacity(chosen.len() * 2);
        for site in chosen {
            let Site::Stmt { item, stmt } = *site else { continue };
            let Some(body) = m.items.get(item).and_then(|i| match i {
                ptx_ir::ir::Item::Func(f) => f.body.as_ref(),
                _ => None,
            }) else {
                continue;
            };
            if let Some(end) = matching_end(body, stmt) {
                removed.push(Site::Stmt { item, stmt });
                removed.push(Site::Stmt { item, stmt: end });
            }
        }
        sites::remove(m, &removed)
    }
}

/// The index of the `}` that closes the `{` at `begin`.
fn matching_end(body: &[Stmt], begin: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, stmt) in body.iter().enumerate().skip(begin) {
        match stmt {
            Stmt::ScopeBegin => depth += 1,
            Stmt::ScopeEnd => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}
