//! `slsr`: straight-line strength reduction of products with a register
//! stride.
//!
//! Unrolled index arithmetic computes `(b+c)*s` for several constants `c`
//! with one `b` and one run-time `s`: an `add` and a `mul` each. When an
//! earlier product `(b+c')*s` dominates a later one and `c − c' = ±1`, the
//! later one is the earlier one plus or minus `s`: one `add`/`sub`, and the
//! `add` that formed `b+c` dies (`dce`). The same for `mad.lo`:
//! `(b+c)*s + z` from `(b+c')*s + z`.
//!
//! Exact in PTX's modular arithmetic: `mul.lo` and `mad.lo` give the low
//! bits of the product, and `(b+c)·s ≡ (b+c')·s + (c−c')·s (mod 2^N)` for
//! any values, signed or unsigned. So only same-width products qualify
//! (never `mul.wide`, where `b+c` wrapping in 32 bits is not the 64-bit
//! sum), the offset's `add`/`sub` must be a plain integer one of the same
//! width (no `.sat`, no carry), and the earlier product's register must
//! still hold it at the later one (the value view). Each product is reduced
//! from the nearest earlier one with the same `b`, `s` (and `z`), so an
//! unrolled run `c = 0, 1, 2, 3` becomes `t, t+s, (t+s)+s, ...`.
//!
//! Measured (ptxas 12.9, sm_80): four rows `(b+i)*s`, `i = 0..3`, each
//! feeding a load: 26 SASS instructions before, 23 after; ptxas does not
//! do it, and the e-graph does not (a rewrite that pays only when the
//! other product exists). But on the golden kernel
//! (`tests/spec/opt/slsr/`), whose products all stay live to the stores,
//! `-O2` with it gives 38 SASS instructions and 24 registers, without it
//! 38 and 22: so it runs at `-O3` only (where register trade-offs are
//! allowed), and by name.

use super::operands::plain_reg;
use super::{Analyses, Pass, Preserves};
use crate::values::{ValueView, Version, VersionDef};
use crate::{ModuleContext, OptLevel};
use ptx_ir::ir::{Function, Instruction, Operand, RegId, Stmt};
use ptx_ir::isa::{Mod, Opcode, SlotRole, TypeClass};
use rustc_hash::FxHashMap;

pub const PASS: Pass = Pass {
    name: "slsr",
    description: "straight-line strength reduction: (b+c)*s after (b+c±1)*s becomes an add of the stride",
    run,
    preserves: Preserves::Cfg,
    edit: None,
};

/// A basis further back than this many statements is used only when it is
/// read after the product anyway (a longer live range costs registers:
/// measured, NVRTC `-O3` `conv2d_3x3_nchw` on sm_90, four more).
const NEAR: usize = 16;

/// What makes two products reducible one from the other.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    opcode: Opcode,
    ty: Mod,
    base: Version,
    stride: Version,
    /// The addend of a `mad.lo`.
    addend: Option<Version>,
}

/// One product: statement, destination, offset `c`.
struct Product {
    k: usize,
    dest: RegId,
    offset: i64,
    /// The version of `b+c` it reads (none for `b*s` itself).
    offset_reg: Option<Version>,
}

fn run(f: &Function, analyses: &mut Analyses, _ctx: &ModuleContext, _level: OptLevel) -> Option<Function> {
    let body = f.body.as_ref()?;
    if !body.iter().any(|s| matches!(s, Stmt::Instr(i) if matches!(i.opcode, Opcode::MUL | Opcode::MAD))) {
        return None;
    }
    let in_blocks = analyses.block_declared_names(f);
    let (_, dom, view) = analyses.values(f);
    // The offsets `b + c` some statement defines: its version -> (b's version, c).
    let mut offsets: FxHashMap<Version, (Version, i64)> = FxHashMap::default();
    let mut groups: FxHashMap<Key, Vec<Product>> = FxHashMap::default();
    for (k, s) in body.iter().enumerate() {
        let Stmt::Instr(ins) = s else { continue };
        if !view.reachable(k) || ins.guard.is_some() {
            continue;
        }
        if let Some((d, base, c)) = offset_of(f, &view, k, ins) {
            offsets.insert(Version { reg: d, def: VersionDef::Def(k) }, (base, c));
            continue;
        }
        let Some((keys, dest, offset, offset_reg)) = product(f, &view, &offsets, k, ins) else { continue };
        if in_blocks.contains(f.reg(dest).name.as_ref()) {
            continue;
        }
        for key in keys {
            groups.entry(key).or_default().push(Product { k, dest, offset, offset_reg });
        }
    }
    // Per version: how many statements read it, and the last one.
    let readers = view.readers();
    let mut rewrites: Vec<(usize, Instruction)> = Vec::new();
    for (key, products) in &groups {
        if products.len() < 2 {
            continue;
        }
        for (i, p) in products.iter().enumerate() {
            // The nearest earlier product that dominates this one and still holds.
            let basis = products[..i].iter().rev().find(|q| {
                let (bq, bp) = (view.block_of(q.k), view.block_of(p.k));
                (bq != bp || q.k < p.k) && dom.dominates(bq, bp) && view.version_at(q.dest, p.k) == VersionDef::Def(q.k)
            });
            let Some(q) = basis else { continue };
            // Pays only when `b+c` dies with the product (one instruction
            // less), and costs no register when the basis is read later
            // anyway or is near.
            let dies = p.offset_reg.is_some_and(|v| readers.get(&v).is_some_and(|r| r.count == 1));
            let basis_live = readers.get(&Version { reg: q.dest, def: VersionDef::Def(q.k) }).is_some_and(|r| r.last > p.k);
            if !dies || !(basis_live || p.k - q.k <= NEAR) {
                continue;
            }
            let op = match p.offset.checked_sub(q.offset) {
                Some(1) => Opcode::ADD,
                Some(-1) => Opcode::SUB,
                _ => continue,
            };
            if let Ok(ins) = Instruction::new(op, &[key.ty], [Operand::reg(p.dest), Operand::reg(q.dest), Operand::reg(key.stride.reg)]) {
                rewrites.push((p.k, ins));
            }
        }
    }
    if rewrites.is_empty() {
        return None;
    }
    // A product under two keys may have two bases: one rewrite each.
    rewrites.sort_by_key(|(k, _)| *k);
    rewrites.dedup_by_key(|(k, _)| *k);
    let mut g = f.clone();
    let out = g.body.as_mut().expect("a body");
    for (k, ins) in rewrites {
        out[k] = Stmt::Instr(Box::new(ins));
    }
    Some(g)
}

/// The integer type of a plain `add`/`sub`/`mul`/`mad` on whole registers
/// (no `.sat`, no carry, no `.wide`/`.hi`), if `ins` is one.
fn integer_type(ins: &Instruction) -> Option<ptx_ir::isa::ScalarType> {
    let ty = ins.ty()?;
    if !matches!(ty.class(), TypeClass::Signed | TypeClass::Unsigned) || !matches!(ty.bits(), 16 | 32 | 64) {
        return None;
    }
    let product = matches!(ins.opcode, Opcode::MUL | Opcode::MAD);
    ins.modifiers().all(|(r, m)| r == SlotRole::Type || (product && m.text() == ".lo")).then_some(ty)
}

/// `add d, b, c` / `sub d, b, c` with an immediate `c`: (d, b's version, ±c).
fn offset_of(f: &Function, view: &ValueView, k: usize, ins: &Instruction) -> Option<(RegId, Version, i64)> {
    let sign = match ins.opcode {
        Opcode::ADD => 1,
        Opcode::SUB => -1,
        _ => return None,
    };
    let ty = integer_type(ins)?;
    let [d, b, Operand::Imm(c)] = ins.operands.as_slice() else { return None };
    let (d, b) = (plain_reg(f, d, Some(ty.bits()))?, plain_reg(f, b, Some(ty.bits()))?);
    let c = ptx_ir::eval::sext(ptx_ir::eval::imm_bits(c, ty), ty.bits()) as i64;
    Some((d, view.read(k, b)?, c.checked_mul(sign)?))
}

/// `mul.lo d, a, s` or `mad.lo d, a, s, z` (either factor the offset one):
/// its keys (a product of two plain registers `b*s` is the basis of both
/// `(b+c)*s` and `b*(s+c)`), destination and offset.
fn product(f: &Function, view: &ValueView, offsets: &FxHashMap<Version, (Version, i64)>, k: usize, ins: &Instruction) -> Option<(Vec<Key>, RegId, i64, Option<Version>)> {
    if !matches!(ins.opcode, Opcode::MUL | Opcode::MAD) || !ins.has(Mod::from_text(".lo")?) {
        return None;
    }
    let ty = integer_type(ins)?;
    let ty_mod = *ins.mods.iter().find(|m| m.text() == ty.text())?;
    let reg = |o: &Operand| plain_reg(f, o, Some(ty.bits())).and_then(|r| view.read(k, r));
    let d = plain_reg(f, ins.operands.first()?, Some(ty.bits()))?;
    let (x, y) = (reg(ins.operands.get(1)?)?, reg(ins.operands.get(2)?)?);
    let addend = match ins.opcode {
        Opcode::MAD => Some(reg(ins.operands.get(3)?)?),
        _ => None,
    };
    // The factor that is `b + c` (or `b` itself, `c = 0`, when the other is not).
    let key = |base: Version, stride: Version| Key { opcode: ins.opcode, ty: ty_mod, base, stride, addend };
    Some(match (offsets.get(&x), offsets.get(&y)) {
        (Some(&(b, c)), _) => (vec![key(b, y)], d, c, Some(x)),
        (None, Some(&(b, c))) => (vec![key(b, x)], d, c, Some(y)),
        (None, None) => (vec![key(x, y), key(y, x)], d, 0, None),
    })
}
