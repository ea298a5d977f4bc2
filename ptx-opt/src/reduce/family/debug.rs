//! `drop-debug`: debug information and hints that do not change what a
//! module computes: `.file`, `.section` (DWARF), `@@DWARF` lines and
//! `.pragma` items; `.loc` and `.pragma` statements; function header
//! directives (`.maxntid`, `.reqntid`, `.minnctapersm`, `.noreturn` ...);
//! options of the `.target` line after the architecture (`debug`).

use super::Family;
use crate::reduce::sites::{self, Site};
use ptx_ir::ir::{Item, Module, Stmt};

pub(crate) struct DropDebug;

impl Family for DropDebug {
    fn name(&self) -> &'static str {
        "drop-debug"
    }

    fn sites(&self, m: &Module) -> Vec<Site> {
        // The first `.target` entry is the architecture; the others are options.
        let mut out: Vec<Site> = (1..m.target.len()).map(Site::Target).collect();
        for (i, item) in m.items.iter().enumerate() {
            match item {
                Item::File(_) | Item::Section(_) | Item::Dwarf(_) | Item::Pragma(_) => out.push(Site::Item(i)),
                Item::Func(f) => {
                    out.extend((0..f.directives.len()).map(|k| Site::Directive { item: i, k }));
                    for (s, stmt) in f.body.iter().flatten().enumerate() {
                        if matches!(stmt, Stmt::Loc(_) | Stmt::Pragma(_)) {
                            out.push(Site::Stmt { item: i, stmt: s });
                        }
                    }
                }
                _ => {}
            }
        }
        out
    }

    fn apply(&self, m: &Module, chosen: &[Site]) -> Module {
        sites::remove(m, chosen)
    }
}
