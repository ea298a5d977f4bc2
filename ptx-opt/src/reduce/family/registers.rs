//! `shrink-reg-ranges`: a register range declaration `.reg .b32 %r<31>;`
//! shrinks to the highest member the function still names plus one
//! (`%r<6>` when `%r5` is the highest).

use super::Family;
use crate::reduce::sites::{self, Site, Uses};
use ptx_ir::ir::{range_member, DeclName, Function, Item, Module, Name, Stmt};
use ptx_ir::isa::StateSpace;

pub(crate) struct ShrinkRegRanges;

impl Family for ShrinkRegRanges {
    fn name(&self) -> &'static str {
        "shrink-reg-ranges"
    }

    fn sites(&self, m: &Module) -> Vec<Site> {
        let mut out = Vec::new();
        let mut current: Option<(usize, Vec<(Name, u32)>)> = None;
        for (item, f, s, stmt) in sites::statements(m) {
            let Stmt::Decl(d) = stmt else { continue };
            if d.space() != StateSpace::Reg {
                continue;
            }
            if current.as_ref().map(|(i, _)| *i) != Some(item) {
                current = Some((item, used_members(f)));
            }
            let Some((_, used)) = &current else { continue };
            if d.names().any(|n| shrunk(n, used).is_some()) {
                out.push(Site::Stmt { item, stmt: s });
            }
        }
        out
    }

    fn apply(&self, m: &Module, chosen: &[Site]) -> Module {
        let mut out = m.clone();
        for site in chosen {
            let Site::Stmt { item, stmt } = *site else { continue };
            let Some(Item::Func(f)) = out.items.get_mut(item) else { continue };
            let used = used_members(f);
            let Some(Stmt::Decl(d)) = f.body.as_mut().and_then(|b| b.get_mut(stmt)) else { continue };
            d.modify(|d| {
                for n in &mut d.names {
                    if let Some(len) = shrunk(DeclName::from(&*n), &used) {
                        n.range = Some(len);
                    }
                }
            });
        }
        out
    }
}

/// The registers `f` names that are range members: (prefix, index).
fn used_members(f: &Function) -> Vec<(Name, u32)> {
    let mut out: Vec<(Name, u32)> = Uses::of(f).regs.iter().filter_map(|r| f.try_reg(*r)).filter_map(|r| range_member(&r.name)).map(|(p, k)| (p.into(), k)).collect();
    out.sort();
    out
}

/// The smaller range `d` could have: one past its highest used member,
/// when that is less than its range and something is used.
fn shrunk(d: DeclName, used: &[(Name, u32)]) -> Option<u32> {
    let n = d.range?;
    let highest = used.iter().filter(|(p, k)| p == d.name && *k < n).map(|(_, k)| *k).max()?;
    let len = highest.checked_add(1)?;
    (len < n).then_some(len)
}
