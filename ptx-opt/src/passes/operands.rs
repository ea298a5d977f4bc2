//! Operand questions several passes ask: a plain register, the symbols an
//! instruction names, the names `{ }` blocks declare.

use ptx_ir::ir::{AddrBase, Function, Instruction, Name, Operand, Prefix, RegId, Stmt};
use ptx_ir::isa::StateSpace;

/// A plain scalar register operand (no prefix or selector, not a vector
/// register), of `width` bits when a width is asked for.
pub fn plain_reg(f: &Function, o: &Operand, width: Option<u32>) -> Option<RegId> {
    match o {
        Operand::Reg(r) if r.prefix == Prefix::None && r.sel.is_none() => {
            let reg = f.try_reg(r.reg)?;
            (reg.vector.is_none() && width.is_none_or(|w| reg.ty.bits() == w)).then_some(r.reg)
        }
        _ => None,
    }
}

/// Are the instruction's only modifiers data types (no rounding, `.sat`,
/// `.cc`, space, ordering ...)?
pub fn only_types(ins: &Instruction) -> bool {
    ins.modifiers().all(|(r, _)| r == ptx_ir::isa::SlotRole::Type)
}

/// Calls `f` with every variable or function name an instruction's
/// operands name (`x`, `[x+4]`, `x[i]`).
pub fn for_each_symbol<'a>(ins: &'a Instruction, mut f: impl FnMut(&'a Name)) {
    for op in &ins.operands {
        // Most operands are registers or immediates, which name nothing:
        // not walked (renderer -O2: 7.0 M over `promote-local`'s 70,095 calls before).
        if matches!(op, Operand::Reg(_) | Operand::Imm(_)) {
            continue;
        }
        op.for_each_operand(&mut |o| match o {
            Operand::Sym(s) => f(&s.name),
            Operand::Addr(a) => {
                if let AddrBase::Sym(n) = &a.base {
                    f(n)
                }
            }
            Operand::ArrayElem(e) => f(&e.name),
            _ => {}
        });
    }
}

/// Names of the registers declared inside `{ }` blocks (members of a
/// range declaration `%r<N>` included): a rewrite never names one, since
/// the name may mean another register elsewhere, or nothing.
pub fn block_declared_names(body: &[Stmt]) -> rustc_hash::FxHashSet<String> {
    let mut names = rustc_hash::FxHashSet::default();
    let mut depth = 0usize;
    for s in body {
        match s {
            Stmt::ScopeBegin => depth += 1,
            Stmt::ScopeEnd => depth = depth.saturating_sub(1),
            Stmt::Decl(d) if depth > 0 && d.space == StateSpace::Reg => {
                for n in &d.names {
                    match n.range {
                        Some(count) => names.extend((0..count).map(|i| format!("{}{i}", n.name))),
                        None => {
                            names.insert(n.name.to_string());
                        }
                    }
                }
            }
            _ => {}
        }
    }
    names
}
