//! The cost model of extraction: what one node costs in SASS instructions,
//! from the measured table ([`crate::cost`]) for the module's target.
//!
//! Constants (immediates) and leaves (values already in registers) cost
//! nothing, and so do a bitwise `not` (ptxas folds it into its reader) and,
//! at `-O3`, a zero extension to 64 bits (the high half is `RZ`). Costs are scaled by [`SCALE`] and an instruction a rule made
//! (rather than one of the input's) costs one unit more: between two
//! programs of equal SASS cost the extractor keeps the input's, so that a
//! rewrite is taken only when the table says it is cheaper.

use super::extract::NodeCost;
use super::facts::EGraph;
use super::lang::{Node, ShapeId};
use crate::rules::Target;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Units per SASS instruction.
pub const SCALE: u64 = 8;

/// Costs for one target, memoized per shape.
pub struct CostModel {
    table: crate::cost::CostModel,
    /// Price zero extensions to 64 bits as free (with the `-O3` rules that make them).
    free_zext: bool,
    /// Per shape, [`Self::shape_cost`] with [`BY_HALVES`] set for a shape
    /// [`halves_cost`] may price ([`UNKNOWN`]: not asked yet). One look-up
    /// a node: the engine prices each value of the input and each node it
    /// extracts from (renderer at -O2: 245,000 nodes, 45 host instructions
    /// each when the shape was looked at again for `halves_cost`).
    memo: RefCell<Vec<u64>>,
}

/// What one table ([`CostModel`]'s, with its zero-extension rule) says a
/// shape's instruction costs in SASS instructions, kept with the shape
/// ([`super::lang::Shape`]): shapes are shared by the e-graphs of a
/// thread's functions, and pricing each shape again for each function
/// cost complex at -O2 0.67 M host instructions (1,012 shapes for 247
/// functions). One atomic word, so that a shape stays `Sync` (the rule
/// hunt shares shapes between threads): the price in the low 32 bits, the
/// zero-extension rule in bit 32, the table's family number plus one
/// above (0: not priced). A price or family too large for its bits is not
/// kept.
#[derive(Debug, Default)]
pub struct Priced(AtomicU64);

impl Clone for Priced {
    fn clone(&self) -> Priced {
        Priced(AtomicU64::new(self.0.load(Relaxed)))
    }
}

impl Priced {
    /// The word of `sass` priced by `table` with `free_zext`; `None` when
    /// it does not fit.
    fn word(table: crate::cost::CostModel, free_zext: bool, sass: u64) -> Option<u64> {
        let family = u64::try_from(table.family_number()).ok()?.checked_add(1).filter(|f| *f < 1 << 31)?;
        let sass = u32::try_from(sass).ok()?;
        Some(family << 33 | u64::from(free_zext) << 32 | u64::from(sass))
    }

    /// The price kept for `table` with `free_zext`, if it is the one kept.
    fn get(&self, table: crate::cost::CostModel, free_zext: bool) -> Option<u64> {
        let word = self.0.load(Relaxed);
        let key = Self::word(table, free_zext, 0)?;
        (word != 0 && word & !0xffff_ffff == key).then_some(word & 0xffff_ffff)
    }

    fn set(&self, table: crate::cost::CostModel, free_zext: bool, sass: u64) {
        if let Some(word) = Self::word(table, free_zext, sass) {
            self.0.store(word, Relaxed);
        }
    }
}

/// A shape not priced yet, in [`CostModel`]'s memo.
const UNKNOWN: u64 = u64::MAX;

/// A 64-bit `and`/`or`/`xor`, in [`CostModel`]'s memo: [`halves_cost`]
/// prices its nodes with a constant operand.
const BY_HALVES: u64 = 1 << 62;

impl CostModel {
    /// The model for `target`; with `free_zext`, a zero extension to 64
    /// bits costs nothing (see [`Self::shape_cost`]).
    pub fn for_target(target: Target, free_zext: bool) -> CostModel {
        let arch = (target.sm != 0).then_some(target.sm);
        CostModel { table: crate::cost::CostModel::for_arch(arch), free_zext, memo: RefCell::default() }
    }

    /// [`Self::shape_cost`] of `s`, with [`BY_HALVES`] set when
    /// [`halves_cost`] may price its nodes; asked once per shape.
    fn memo(&self, eg: &EGraph, s: ShapeId) -> u64 {
        let k = s.0 as usize;
        if let Some(&m) = self.memo.borrow().get(k) {
            if m != UNKNOWN {
                return m;
            }
        }
        let shape = eg.analysis.shapes.get(s);
        let by_halves = matches!(shape.opcode(), ptx_ir::isa::Opcode::AND | ptx_ir::isa::Opcode::OR | ptx_ir::isa::Opcode::XOR) && shape.ty() == Some(ptx_ir::isa::ScalarType::B64);
        let m = self.shape_cost(eg, s) | if by_halves { BY_HALVES } else { 0 };
        let mut memo = self.memo.borrow_mut();
        if memo.len() <= k {
            memo.resize(k + 1, UNKNOWN);
        }
        memo[k] = m;
        m
    }

    fn shape_cost(&self, eg: &EGraph, s: ShapeId) -> u64 {
        let shapes = &eg.analysis.shapes;
        let shape = shapes.get(s);
        let sass = match shape.priced.get(self.table, self.free_zext) {
            Some(sass) => sass,
            None => {
                let sass = self.sass(&shape.ins);
                shape.priced.set(self.table, self.free_zext, sass);
                sass
            }
        };
        sass * SCALE + shapes.made_by_rule(s) as u64
    }

    /// SASS instructions of a shape's instruction `ins`.
    fn sass(&self, ins: &ptx_ir::ir::Instruction) -> u64 {
        // A bitwise `not` is one LOP3 alone, but ptxas folds it into the
        // logic instruction that reads it (LOP3 takes any truth table):
        // priced as free, a rule gains nothing by absorbing it (measured: a
        // `lop3` that absorbed `not` + `and` over a shared `xor` cost one
        // SASS instruction more).
        // A zero extension to 64 bits is free where the value is used:
        // ptxas reads the high half as `RZ` (measured: `cvt.u64.u32` feeding
        // `shl` + `add` of an address costs no instruction, where
        // `cvt.s64.s32` costs the shift that makes the sign half). Priced so
        // at `-O3` only, with the rules that make zero extensions.
        let free_zext = self.free_zext && ins.opcode == ptx_ir::isa::Opcode::CVT && matches!(ins.types().as_slice(), [ptx_ir::isa::ScalarType::U64, ptx_ir::isa::ScalarType::U32 | ptx_ir::isa::ScalarType::U16]) && ins.modifiers().all(|(r, _)| r == ptx_ir::isa::SlotRole::Type);
        if folded_not(ins) || free_zext { 0 } else { self.table.cost(ins) as u64 }
    }
}

impl NodeCost for CostModel {
    fn node_cost(&self, eg: &EGraph, n: &Node) -> u64 {
        match n {
            Node::Const { .. } | Node::Leaf(_) => 0,
            Node::Op(s, kids) => {
                let m = self.memo(eg, *s);
                let halves = if m & BY_HALVES != 0 { halves_cost(eg, *s, kids) } else { None };
                debug_assert_eq!(halves, halves_cost(eg, *s, kids), "a shape halves_cost prices is not marked so");
                halves.unwrap_or(m & !BY_HALVES)
            }
        }
    }
}

/// A 64-bit `and`/`or`/`xor` with a constant is two 32-bit LOP3s, one per
/// half, and ptxas drops a half whose constant leaves it as it is (`or`,
/// `xor` with 0, `and` with all ones) or makes it a constant: the node costs
/// the halves that remain (measured: `or.b64 x, 0x80000` is one SASS
/// instruction, `or.b64 x, 0x1000080000` two, so merging two one-half `or`s
/// into one two-half `or` gains nothing).
fn halves_cost(eg: &EGraph, s: ShapeId, kids: &[egg::Id]) -> Option<u64> {
    use ptx_ir::isa::{Opcode, ScalarType};
    let shapes = &eg.analysis.shapes;
    let shape = shapes.get(s);
    if !matches!(shape.opcode(), Opcode::AND | Opcode::OR | Opcode::XOR) || shape.ty() != Some(ScalarType::B64) || kids.len() != 2 {
        return None;
    }
    let c = kids.iter().find_map(|k| eg.analysis.constant(crate::engine::facts::class_data(eg, *k)))?;
    Some(logic_halves(shape.opcode(), c) as u64 * SCALE + shapes.made_by_rule(s) as u64)
}

/// Is `ins` a bitwise `not` of a `.b16`/`.b32`/`.b64` value (free: ptxas
/// folds it into its reader, see [`CostModel`])?
pub fn folded_not(ins: &ptx_ir::ir::Instruction) -> bool {
    use ptx_ir::isa::{Opcode, ScalarType};
    ins.opcode == Opcode::NOT && ins.ty().is_some_and(|t| matches!(t, ScalarType::B16 | ScalarType::B32 | ScalarType::B64))
}

/// SASS instructions of a 64-bit `and`/`or`/`xor` (`op`) with the constant
/// `c`: the 32-bit halves the constant does not leave unchanged.
fn logic_halves(op: ptx_ir::isa::Opcode, c: u128) -> u32 {
    let c = c as u64;
    let halves = [c as u32, (c >> 32) as u32];
    halves
        .iter()
        .filter(|h| match op {
            ptx_ir::isa::Opcode::AND => **h != u32::MAX && **h != 0,
            _ => **h != 0,
        })
        .count() as u32
}

/// SASS instructions of one instruction under the extraction's convention,
/// outside an e-graph: `ins` is a shape (sources are placeholders) and
/// `constants[k]` the constant its k-th source is, if any. The table's
/// count, except a free bitwise `not` ([`folded_not`]) and a 64-bit logic
/// instruction with a constant ([`halves_cost`]'s halves). For tools that
/// price small programs the way the engine does (`ptx-hunt`).
pub fn sass_cost(table: &crate::cost::CostModel, ins: &ptx_ir::ir::Instruction, constants: &[Option<u128>]) -> u32 {
    use ptx_ir::isa::{Opcode, ScalarType};
    if folded_not(ins) {
        return 0;
    }
    if matches!(ins.opcode, Opcode::AND | Opcode::OR | Opcode::XOR) && ins.ty() == Some(ScalarType::B64) && constants.len() == 2 {
        if let Some(c) = constants.iter().flatten().next() {
            return logic_halves(ins.opcode, *c);
        }
    }
    table.cost(ins)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::facts::Facts;

    /// A node priced through its shape's memo (priced and marked once) costs
    /// what pricing it afresh gives: [`halves_cost`] for a 64-bit logic
    /// instruction with a constant operand, else the shape's cost; every
    /// node asked twice.
    #[test]
    fn nodes_priced_through_the_memo_cost_what_pricing_afresh_gives() {
        let mut eg = EGraph::new(Facts::default());
        let leaf = |eg: &mut EGraph, width: u8| {
            let l = eg.analysis.new_leaf(width);
            eg.add(Node::Leaf(l))
        };
        let (x64, y64, x32) = (leaf(&mut eg, 64), leaf(&mut eg, 64), leaf(&mut eg, 32));
        let mut c64: Vec<egg::Id> = [0x80000u128, 0x10_0008_0000, u64::MAX as u128, 0xffff_ffff, 0].iter().map(|&c| eg.add(Node::Const { width: 64, bits: c })).collect();
        c64.extend([x64, y64]);
        let c32 = eg.add(Node::Const { width: 32, bits: 7 });
        let mut nodes = Vec::new();
        for head in ["and.b64", "or.b64", "xor.b64", "add.u64", "mul.lo.u64", "and.b32", "or.b32"] {
            let s = eg.analysis.shapes.of_text(head, 2);
            let pool: Vec<egg::Id> = if head.ends_with("32") { vec![x32, c32] } else { c64.clone() };
            for &a in &pool {
                for &b in &pool {
                    nodes.push(Node::Op(s, [a, b].into_iter().collect()));
                }
            }
        }
        let not = eg.analysis.shapes.of_text("not.b64", 1);
        nodes.push(Node::Op(not, [x64].into_iter().collect()));
        let model = CostModel::for_target(Target { sm: 80, ptx: (8, 0) }, false);
        let mut by_halves = 0;
        for _ in 0..2 {
            for n in &nodes {
                let Node::Op(s, kids) = n else { unreachable!() };
                let fresh = halves_cost(&eg, *s, kids);
                by_halves += fresh.is_some() as usize;
                assert_eq!(model.node_cost(&eg, n), fresh.unwrap_or_else(|| model.shape_cost(&eg, *s)), "{:?}", eg.analysis.shapes.get(*s).ins);
            }
        }
        assert!(by_halves > 20, "{by_halves}");
    }

    /// Shapes stay shareable between threads with their kept price (the
    /// rule hunt prices shapes on several): this fails to compile if not.
    #[test]
    fn shapes_with_their_prices_are_send_and_sync() {
        fn shareable<T: Send + Sync>() {}
        shareable::<super::super::lang::Shape>();
    }

    /// A shape's price kept with it ([`Priced`]) is the price of the table
    /// that asks: the e-graphs of one thread share their shapes, and the
    /// tables of other targets, and the `-O3` pricing of zero extensions,
    /// price them anew. Each model prices each shape in e-graphs of its
    /// own and of the other models, in turn, as pricing it afresh does.
    #[test]
    fn prices_kept_with_shapes_are_each_tables_own() {
        let heads = [("cvt.u64.u32", 1), ("cvt.s64.s32", 1), ("mul.lo.u64", 2), ("mul.wide.u32", 2), ("div.u32", 2), ("popc.b64", 1), ("add.f64", 2), ("not.b32", 1), ("shl.b64", 2)];
        let models: Vec<CostModel> = [(80, false), (80, true), (50, false), (0, false), (90, true), (35, false)].iter().map(|&(sm, zext)| CostModel::for_target(Target { sm, ptx: (8, 0) }, zext)).collect();
        let mut differ = 0;
        for round in 0..2 {
            for (k, model) in models.iter().enumerate() {
                let mut eg = EGraph::new(Facts::default());
                for (head, n) in heads {
                    let s = eg.analysis.shapes.of_text(head, n);
                    let fresh = model.sass(&eg.analysis.shapes.get(s).ins) * SCALE + eg.analysis.shapes.made_by_rule(s) as u64;
                    assert_eq!(model.shape_cost(&eg, s), fresh, "{head} by model {k}, round {round}");
                    differ += (models[0].sass(&eg.analysis.shapes.get(s).ins) * SCALE + 1 != fresh) as usize;
                }
            }
        }
        assert!(differ >= 4, "{differ}");
    }
}
