//! `div-bypass`: 64-bit division and remainder by a run-time value get a
//! 32-bit fast path, as LLVM's `addBypassSlowDiv(64, 32)` does for NVPTX.
//!
//! ptxas calls a ~60-instruction subroutine for `div`/`rem` `.u64`/`.s64`;
//! when both operands fit in 32 unsigned bits (for `.s64`: are non-negative
//! and below 2^32), `div.u32` of the low halves, zero-extended, is the same
//! value, and costs ~20 inline instructions. The pass writes
//!
//! ```text
//!     or.b64 t, x, y;  setp.gt.u64 p, t, 0xFFFFFFFF;  @p bra SLOW;
//!     cvt.u32.u64 xl, x;  cvt.u32.u64 yl, y;  div.u32 ql, xl, yl;  cvt.u64.u32 d, ql;
//!     bra DONE;
//! SLOW:
//!     div.u64 d, x, y;
//! DONE:
//! ```
//!
//! (with branches, not guards: ptxas if-converts a guarded 32-bit path, so
//! the 64-bit path would execute it too). Measured with ptxas 12.9 on sm_80
//! (`ptx-opt/src/lower/README.md`): `div.u64` 70 instructions static and
//! executed become 97 static, 25 executed on the 32-bit path and 77 on the
//! 64-bit path; `rem.s64` 80 → 107 static, 25 and 87 executed. Division by
//! a constant is the e-graph's (run before this pass); an unguarded
//! instruction with a register divisor only. A divisor of zero gives an
//! unspecified value on either path, as the original does.
//!
//! In the `-O3` pipeline only: measured over the shared corpus, the fast
//! path costs registers in some kernels (Kokkos kernels 30 → 33), which
//! `-O2` never does.

use super::{Analyses, Pass, Preserves};
use crate::{ModuleContext, OptLevel};
use ptx_ir::ir::{Function, Guard, Instruction, IntLit, Imm, Operand, RegId, Stmt};
use ptx_ir::isa::{Mod, Opcode, ScalarType};

pub const PASS: Pass = Pass {
    name: "div-bypass",
    description: "a 32-bit fast path for 64-bit division and remainder by a run-time value",
    run,
    preserves: Preserves::Nothing,
    edit: None,
};

/// The division this pass rewrites: (rem?, x, y, d).
fn candidate(f: &Function, ins: &Instruction) -> Option<(bool, Operand, RegId, RegId)> {
    if ins.guard.is_some() || !matches!(ins.opcode, Opcode::DIV | Opcode::REM) || !matches!(ins.ty(), Some(ScalarType::U64 | ScalarType::S64)) {
        return None;
    }
    if ins.modifiers().count() != 1 || ins.operands.len() != 3 {
        return None;
    }
    let reg = |o: &Operand| match o {
        Operand::Reg(r) if r.sel.is_none() && r.prefix == ptx_ir::ir::Prefix::None && f.regs.get(r.reg.0 as usize).is_some_and(|x| x.vector.is_none() && x.ty.bits() == 64) => Some(r.reg),
        _ => None,
    };
    let d = reg(&ins.operands[0])?;
    let y = reg(&ins.operands[2])?;
    let x = match &ins.operands[1] {
        Operand::Imm(i) => Operand::Imm(i.clone()),
        o => Operand::reg(reg(o)?),
    };
    Some((ins.opcode == Opcode::REM, x, y, d))
}

fn run(f: &Function, _analyses: &mut Analyses, _ctx: &ModuleContext, level: OptLevel) -> Option<Function> {
    if level < OptLevel::O2 {
        return None;
    }
    let body = f.body.as_ref()?;
    if !body.iter().any(|s| matches!(s, Stmt::Instr(i) if candidate(f, i).is_some())) {
        return None;
    }
    let mut g = f.clone();
    // Registers and labels first, with the body in place (so that fresh names
    // avoid every name it uses); then the body is rebuilt.
    struct Fresh {
        t: RegId,
        p: RegId,
        xl: RegId,
        yl: RegId,
        ql: RegId,
        q: Option<RegId>,
        slow: ptx_ir::ir::LabelId,
        done: ptx_ir::ir::LabelId,
    }
    let sites: Vec<(usize, bool, Operand, RegId, RegId)> = body
        .iter()
        .enumerate()
        .filter_map(|(k, s)| match s {
            Stmt::Instr(i) => candidate(f, i).map(|(rem, x, y, d)| (k, rem, x, y, d)),
            _ => None,
        })
        .collect();
    let mut fresh = Vec::with_capacity(sites.len());
    for (_, _, x, y, d) in &sites {
        // Write the destination directly unless it is also an operand.
        let aliases = Operand::reg(*d) == *x || d == y;
        let dty = g.regs[d.0 as usize].ty;
        fresh.push(Fresh {
            t: g.new_reg(ScalarType::B64),
            p: g.new_reg(ScalarType::Pred),
            xl: g.new_reg(ScalarType::U32),
            yl: g.new_reg(ScalarType::U32),
            ql: g.new_reg(ScalarType::U32),
            q: aliases.then(|| g.new_reg(dty)),
            slow: g.new_label(),
            done: g.new_label(),
        });
    }
    let added = g.body.as_ref().map_or(0, |b| b.len()) - body.len();
    let old = g.body.take().unwrap_or_default();
    let mut out = Vec::with_capacity(old.len() + 16 * sites.len());
    let mut next = 0;
    for (k, s) in old.into_iter().enumerate() {
        let Some(&(site, rem, ref x, y, d)) = sites.get(next).filter(|(site, ..)| *site + added == k) else {
            out.push(s);
            continue;
        };
        let _ = site;
        let Stmt::Instr(ins) = &s else { return None };
        let fr = &fresh[next];
        next += 1;
        let q = fr.q.unwrap_or(d);
        let i = |op: Opcode, mods: &[Mod], ops: Vec<Operand>| Instruction::new(op, mods, ops).ok();
        let op32 = if rem { Opcode::REM } else { Opcode::DIV };
        let big = Operand::Imm(Imm::Int(IntLit::dec(u32::MAX as i64)));
        let seq = [
            i(Opcode::OR, &[Mod::B64], vec![Operand::reg(fr.t), x.clone(), Operand::reg(y)]),
            i(Opcode::SETP, &[Mod::GT, Mod::U64], vec![Operand::reg(fr.p), Operand::reg(fr.t), big]),
            i(Opcode::BRA, &[], vec![Operand::Label(fr.slow)]).map(|mut b| {
                b.guard = Some(Guard { reg: fr.p, negated: false });
                b
            }),
            i(Opcode::CVT, &[Mod::U32, Mod::U64], vec![Operand::reg(fr.xl), x.clone()]),
            i(Opcode::CVT, &[Mod::U32, Mod::U64], vec![Operand::reg(fr.yl), Operand::reg(y)]),
            i(op32, &[Mod::U32], vec![Operand::reg(fr.ql), Operand::reg(fr.xl), Operand::reg(fr.yl)]),
            i(Opcode::CVT, &[Mod::U64, Mod::U32], vec![Operand::reg(q), Operand::reg(fr.ql)]),
            i(Opcode::BRA, &[], vec![Operand::Label(fr.done)]),
        ];
        let mut slow_div = (**ins).clone();
        slow_div.operands[0] = Operand::reg(q);
        for ins in seq {
            out.push(Stmt::Instr(Box::new(ins?)));
        }
        out.push(Stmt::Label(fr.slow));
        out.push(Stmt::Instr(Box::new(slow_div)));
        out.push(Stmt::Label(fr.done));
        if fr.q.is_some() {
            let mov = Instruction::new(Opcode::MOV, &[Mod::B64], [Operand::reg(d), Operand::reg(q)]).ok()?;
            out.push(Stmt::Instr(Box::new(mov)));
        }
    }
    g.body = Some(out);
    Some(g)
}
