//! Whether a candidate is a module at all, and how big it is: the printed
//! text must parse back and pass the verifier ([`valid`]); [`Size`] is what
//! the user sees shrink, [`weight`] is what the search makes strictly smaller
//! at every step (so it ends).

use ptx_ir::ir::{Item, Module, Stmt};
use ptx_ir::isa::StateSpace;

/// The file name parse and verifier diagnostics of candidates carry.
pub(crate) const CANDIDATE_FILE: &str = "candidate.ptx";

/// The module `text` parses to, when it parses and the verifier reports
/// no error (warnings are allowed: the input may have them too).
pub(crate) fn valid(text: &str) -> Option<Module> {
    let parsed = ptx_ir::parse(CANDIDATE_FILE, text.as_bytes()).ok()?;
    let diagnostics = ptx_ir::verify::verify_parsed(&parsed, CANDIDATE_FILE, text.as_bytes());
    if diagnostics.iter().any(|d| d.is_error()) {
        return None;
    }
    Some(parsed.module)
}

/// The size of a printed module.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Size {
    pub bytes: usize,
    pub lines: usize,
    /// Instructions in all function bodies.
    pub instructions: usize,
}

impl Size {
    pub fn of(module: &Module, text: &str) -> Size {
        let instructions = module
            .items
            .iter()
            .map(|item| match item {
                Item::Func(f) => f.instructions().count(),
                _ => 0,
            })
            .sum();
        Size { bytes: text.len(), lines: text.lines().count(), instructions }
    }
}

/// Everything a reduction can take away, counted: `.target` entries, items, section entries,
/// body statements, header directives, parameters, register references
/// (guards and register operands), and registers declared (`%r<31>` is 31). Every reduction lowers it, and the search
/// accepts only candidates that do, so the search reaches a fixed point.
pub(crate) fn weight(module: &Module) -> usize {
    let mut w = module.items.len() + module.target.len();
    for item in &module.items {
        match item {
            Item::Section(s) => w += s.entries.len(),
            Item::Func(f) => {
                w += f.directives.len() + f.params.as_ref().map_or(0, Vec::len);
                for stmt in f.body.iter().flatten() {
                    w += 1;
                    match stmt {
                        Stmt::Instr(ins) => ins.for_each_reg(|_, _| w += 1),
                        Stmt::Decl(d) if d.space() == StateSpace::Reg => w += d.names().map(|n| n.range.map_or(1, |r| r as usize)).sum::<usize>(),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    const KERNEL: &str = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() {\n.reg .b32 %r<3>;\nadd.s32 %r1, %r2, 1;\nret;\n}\n";

    #[test]
    fn a_module_with_an_undeclared_register_is_not_valid() {
        assert!(valid(KERNEL).is_some());
        assert!(valid(&KERNEL.replace(".reg .b32 %r<3>;\n", "")).is_none());
        assert!(valid("not ptx").is_none());
    }

    #[test]
    fn weight_counts_statements_and_register_references() {
        let m = valid(KERNEL).expect("the kernel is valid");
        // One target, one item; a decl (3 registers), add (2 registers), ret.
        assert_eq!(weight(&m), 1 + 1 + 3 + 3 + 2);
        let size = Size::of(&m, KERNEL);
        assert_eq!((size.lines, size.instructions), (8, 2));
    }
}
