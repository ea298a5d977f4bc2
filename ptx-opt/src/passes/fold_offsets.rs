//! `fold-offsets`: constants added to an address register move into the
//! access's immediate offset.
//!
//! For an access `[r+c]` (any instruction with an address operand: loads,
//! stores, atomics, prefetches ...) where the version of `r` it reads was
//! written by an unguarded `add r, b, imm` / `add r, imm, b` / `sub r, b,
//! imm` (type modifiers only, 64-bit registers), and `b` still holds, at
//! the access, the version that add read: the address becomes `[b+c+imm]`,
//! followed through chains of such adds. 64-bit only, where the add and the
//! address arithmetic wrap alike (mod 2^64); the offset must stay a signed
//! 32-bit immediate. Registers declared inside `{ }` blocks are never named
//! by a rewrite. The adds left without readers are `dce`'s. Statements are
//! changed in place: the CFG is preserved.
//!
//! In no level's pipeline (run it with `--passes`): measured over the
//! corpus at -O2 (ptxas 12.9), it made 16 kernels longer and 64 use more
//! registers, as the base stays live beside the sums ptxas would have kept
//! (NVRTC `-G` kernels up to 24 registers more; an NVRTC -O3 kernel whose
//! stack was addressed as `[%SPL+24]` instead of `[%rd3]`, 839 → 935
//! instructions), against a few Triton kernels a little shorter (softmax
//! 217 → 205). ptxas folds constant offsets itself.

use super::{Analyses, Pass, Preserves};
use crate::values::{ValueView, VersionDef};
use crate::{ModuleContext, OptLevel};
use ptx_ir::ir::{AddrBase, Function, Imm, Operand, Prefix, RegId, Stmt};
use ptx_ir::isa::Opcode;

pub const PASS: Pass = Pass {
    name: "fold-offsets",
    description: "add r, base, C feeding addresses: the access reads [base+C] (64-bit, signed 32-bit offsets)",
    run,
    preserves: Preserves::Cfg,
    edit: None,
};

/// How many adds a chain is followed through.
const CHAIN: usize = 8;

fn run(f: &Function, analyses: &mut Analyses, _ctx: &ModuleContext, _level: OptLevel) -> Option<Function> {
    let body = f.body.as_ref()?;
    let in_blocks = analyses.block_declared_names(f);
    let (cfg, dom) = analyses.cfg_dom(f);
    let view = ValueView::build(f, cfg, dom);
    let mut g: Option<Function> = None;
    for (k, s) in body.iter().enumerate() {
        let Stmt::Instr(ins) = s else { continue };
        if !view.reachable(k) {
            continue;
        }
        let Some(pos) = ins.operands.iter().position(|o| matches!(o, Operand::Addr(a) if matches!(a.base, AddrBase::Reg(_)) && !a.unified)) else { continue };
        let Operand::Addr(a) = &ins.operands[pos] else { continue };
        let AddrBase::Reg(r) = a.base else { continue };
        // Never a register the instruction also writes or reads elsewhere.
        let mut uses = 0;
        ins.for_each_reg(|x, _| uses += usize::from(x == r));
        if uses != 1 || f.try_reg(r).is_none_or(|x| x.ty.bits() != 64 || x.vector.is_some()) {
            continue;
        }
        let (mut base, mut offset) = (r, a.offset);
        let mut version = view.read(k, r);
        for _ in 0..CHAIN {
            let Some(v) = version else { break };
            let VersionDef::Def(d) = v.def else { break };
            let Some((b, imm)) = add_of_constant(f, body, d) else { break };
            let Some(bv) = view.read(d, b) else { break };
            if view.version_at(b, k) != bv.def || in_blocks.contains(f.reg(b).name.as_ref()) {
                break;
            }
            let Some(o) = offset.checked_add(imm).filter(|o| i32::try_from(*o).is_ok()) else { break };
            (base, offset, version) = (b, o, Some(bv));
        }
        if base == r {
            continue;
        }
        let h = g.get_or_insert_with(|| f.clone());
        let Some(Stmt::Instr(ins)) = h.body.as_mut().and_then(|b| b.get_mut(k)) else { continue };
        if let Operand::Addr(a) = &mut ins.operands[pos] {
            a.base = AddrBase::Reg(base);
            a.offset = offset;
            a.zero_written = false;
        }
    }
    g
}

/// `add r, b, imm`, `add r, imm, b` or `sub r, b, imm` at statement `d`,
/// unguarded, 64-bit, type modifiers only: `b` and the signed constant.
fn add_of_constant(f: &Function, body: &[Stmt], d: usize) -> Option<(RegId, i64)> {
    let Stmt::Instr(ins) = body.get(d)? else { return None };
    if !matches!(ins.opcode, Opcode::ADD | Opcode::SUB) || ins.guard.is_some() || ins.operands.len() != 3 || !super::operands::only_types(ins) {
        return None;
    }
    let ty = ins.ty()?;
    if ty.bits() != 64 || !matches!(ty.class(), ptx_ir::isa::TypeClass::Bits | ptx_ir::isa::TypeClass::Unsigned | ptx_ir::isa::TypeClass::Signed) {
        return None;
    }
    let reg = |o: &Operand| match o {
        Operand::Reg(r) if r.prefix == Prefix::None && r.sel.is_none() && f.try_reg(r.reg).is_some_and(|x| x.ty.bits() == 64 && x.vector.is_none()) => Some(r.reg),
        _ => None,
    };
    let konst = |o: &Operand| match o {
        Operand::Imm(i @ Imm::Int(_)) => Some(ptx_ir::eval::imm_bits(i, ty) as u64 as i64),
        _ => None,
    };
    let (b, c) = match (reg(&ins.operands[1]), konst(&ins.operands[2])) {
        (Some(b), Some(c)) => (b, c),
        _ if ins.opcode == Opcode::ADD => (reg(&ins.operands[2])?, konst(&ins.operands[1])?),
        _ => return None,
    };
    let c = if ins.opcode == Opcode::SUB { c.checked_neg()? } else { c };
    Some((b, c))
}
