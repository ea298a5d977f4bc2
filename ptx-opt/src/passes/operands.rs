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
            Stmt::Decl(d) if depth > 0 && d.space() == StateSpace::Reg => {
                for n in d.names() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use ptx_ir::ir::Item;

    /// The names a walk of every operand, nested ones included, finds
    /// (what [`for_each_symbol`] gives without looking into registers and
    /// immediates, which name nothing).
    fn every_symbol(ins: &Instruction) -> Vec<String> {
        let mut out = Vec::new();
        for op in &ins.operands {
            op.for_each_operand(&mut |o| match o {
                Operand::Sym(s) => out.push(s.name.to_string()),
                Operand::Addr(a) => {
                    if let AddrBase::Sym(n) = &a.base {
                        out.push(n.to_string());
                    }
                }
                Operand::ArrayElem(e) => out.push(e.name.to_string()),
                _ => {}
            });
        }
        out
    }

    #[test]
    fn symbols_are_those_a_walk_of_every_operand_finds() {
        let text = ".version 8.0\n.target sm_80\n.address_size 64\n.global .u32 g[4];\n.global .u32 h;\n.func (.param .b32 r) f(.param .b32 a) { ret; }\n.entry k(.param .u64 p) { .reg .b32 %r<4>; .reg .b64 %rd<4>; .local .b32 v[2];
            mov.u64 %rd1, g;
            mov.u64 %rd2, g+8;
            cvta.local.u64 %rd3, v;
            ld.global.u32 %r1, [h+4];
            st.global.u32 [g], %r1;
            ld.global.v2.u32 {%r2, %r3}, [g];
            add.u32 %r1, %r2, 7;
            { .param .b32 x; .param .b32 y; st.param.b32 [x], %r1; call (y), f, (x); ld.param.b32 %r3, [y]; }
            ret; }";
        let m = ptx_ir::parse("t.ptx", text.as_bytes()).unwrap().module;
        let mut seen = Vec::new();
        for item in &m.items {
            let Item::Func(f) = item else { continue };
            for s in f.body.iter().flatten() {
                let Stmt::Instr(ins) = s else { continue };
                let mut ours = Vec::new();
                for_each_symbol(ins, |n| ours.push(n.to_string()));
                assert_eq!(ours, every_symbol(ins), "{ins:?}");
                seen.extend(ours);
            }
        }
        assert_eq!(seen, ["g", "g", "v", "h", "g", "g", "x", "y", "f", "x", "y"]);
    }
}
