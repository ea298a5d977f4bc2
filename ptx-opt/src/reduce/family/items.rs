//! Module items: `drop-items` (functions, kernels, variables and aliases
//! nothing else names), `drop-items-with-uses` (a named item together with
//! every statement and item that names it: a function with its calls, a
//! variable with its loads and stores), and `drop-unused-params`
//! (parameters no statement of their function names).

use super::Family;
use crate::reduce::sites::{self, declared_names, item_references, stmt_names, Site, Uses};
use ptx_ir::ir::{Item, Module, Name};
use rustc_hash::FxHashSet;

/// Is this an item the item families may drop?
fn droppable(item: &Item) -> bool {
    matches!(item, Item::Func(_) | Item::Var(_) | Item::Alias { .. })
}

/// Does an item other than `i` name something item `i` declares?
fn named_elsewhere(m: &Module, references: &[(usize, Name)], i: usize) -> bool {
    let Some(item) = m.items.get(i) else { return false };
    let names = declared_names(item);
    references.iter().any(|(by, name)| *by != i && names.contains(&&**name))
}

pub(crate) struct DropItems;

impl Family for DropItems {
    fn name(&self) -> &'static str {
        "drop-items"
    }

    fn sites(&self, m: &Module) -> Vec<Site> {
        let references = item_references(m);
        (0..m.items.len()).filter(|&i| droppable(&m.items[i]) && !named_elsewhere(m, &references, i)).map(Site::Item).collect()
    }

    fn apply(&self, m: &Module, chosen: &[Site]) -> Module {
        sites::remove(m, chosen)
    }
}

pub(crate) struct DropItemsWithUses;

impl Family for DropItemsWithUses {
    fn name(&self) -> &'static str {
        "drop-items-with-uses"
    }

    fn sites(&self, m: &Module) -> Vec<Site> {
        let references = item_references(m);
        (0..m.items.len()).filter(|&i| droppable(&m.items[i]) && named_elsewhere(m, &references, i)).map(Site::Item).collect()
    }

    fn apply(&self, m: &Module, chosen: &[Site]) -> Module {
        let mut names: FxHashSet<&str> = FxHashSet::default();
        for site in chosen {
            if let Site::Item(i) = site {
                if let Some(item) = m.items.get(*i) {
                    names.extend(declared_names(item));
                }
            }
        }
        let mut removed: Vec<Site> = chosen.to_vec();
        // Items that name a dropped one (an initializer taking its address,
        // an alias) go with it.
        for (by, name) in item_references(m) {
            if names.contains(&*name) && droppable(&m.items[by]) {
                removed.push(Site::Item(by));
            }
        }
        for (item, _, s, stmt) in sites::statements(m) {
            if names.iter().any(|n| stmt_names(stmt, n)) {
                removed.push(Site::Stmt { item, stmt: s });
            }
        }
        sites::remove(m, &removed)
    }
}

pub(crate) struct DropUnusedParams;

impl Family for DropUnusedParams {
    fn name(&self) -> &'static str {
        "drop-unused-params"
    }

    fn sites(&self, m: &Module) -> Vec<Site> {
        let mut out = Vec::new();
        for (i, item) in m.items.iter().enumerate() {
            let Item::Func(f) = item else { continue };
            if f.body.is_none() {
                continue;
            }
            let uses = Uses::of(f);
            for (k, p) in f.params.iter().flatten().enumerate() {
                if !uses.names_any_of(f, p.space, p.names.iter().map(ptx_ir::ir::DeclName::from)) {
                    out.push(Site::Param { item: i, k });
                }
            }
        }
        out
    }

    fn apply(&self, m: &Module, chosen: &[Site]) -> Module {
        sites::remove(m, chosen)
    }
}
