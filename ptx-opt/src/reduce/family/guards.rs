//! `drop-guards`: `@p ins` and `@!p ins` become `ins`, so a conditional
//! branch becomes unconditional and a guarded instruction always runs.

use super::Family;
use crate::reduce::sites::{self, Site};
use ptx_ir::ir::{Item, Module, Stmt};

pub(crate) struct DropGuards;

impl Family for DropGuards {
    fn name(&self) -> &'static str {
        "drop-guards"
    }

    fn sites(&self, m: &Module) -> Vec<Site> {
        sites::statements(m).filter(|(_, _, _, stmt)| matches!(stmt, Stmt::Instr(ins) if ins.guard.is_some())).map(|(item, _, stmt, _)| Site::Stmt { item, stmt }).collect()
    }

    fn apply(&self, m: &Module, chosen: &[Site]) -> Module {
        let mut out = m.clone();
        for site in chosen {
            let Site::Stmt { item, stmt } = *site else { continue };
            let Some(Item::Func(f)) = out.items.get_mut(item) else { continue };
            if let Some(Stmt::Instr(ins)) = f.body.as_mut().and_then(|b| b.get_mut(stmt)) {
                ins.guard = None;
            }
        }
        out
    }
}
