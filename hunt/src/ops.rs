//! The candidate instruction set of the enumeration: the ISA's cheap pure
//! integer instructions (arithmetic, logic, shifts and funnel shifts,
//! min/max, compares, selects, byte permutes, width changes) at 16, 32 and
//! 64 bits and on predicates, each built from its text with the engine's
//! [`template`] (so the tables check it) and kept only if the cost table has
//! a measurement for it on the target.

use ptx_opt::engine::lang::{template, type_width, Shape};

/// One candidate instruction.
#[derive(Clone, Debug)]
pub struct Op {
    pub head: String,
    pub shape: Shape,
    /// Width of the register each source reads.
    pub widths: Vec<u8>,
    /// The first two sources may be swapped.
    pub commutative: bool,
    /// The table's SASS count with register sources (a lower bound of
    /// [`ptx_opt::engine::cost::sass_cost`] for `.b64` logic with a constant
    /// is 0, see [`Op::min_cost`]).
    pub base_cost: u32,
}

impl Op {
    /// The least this instruction can cost with some constant operand.
    pub fn min_cost(&self) -> u32 {
        use ptx_ir::isa::{Opcode, ScalarType};
        if matches!(self.shape.ins.opcode, Opcode::AND | Opcode::OR | Opcode::XOR) && self.shape.ins.ty() == Some(ScalarType::B64) {
            0
        } else {
            self.base_cost
        }
    }

    pub fn arity(&self) -> usize {
        self.widths.len()
    }
}

const CMPS_SIGNED: [&str; 6] = ["eq", "ne", "lt", "le", "gt", "ge"];
const CMPS_UNSIGNED: [&str; 4] = ["lo", "ls", "hi", "hs"];

/// The heads of the candidate set with their number of sources.
fn heads() -> Vec<(String, usize, bool)> {
    let mut v: Vec<(String, usize, bool)> = Vec::new();
    let mut add = |h: String, n: usize, comm: bool| v.push((h, n, comm));
    for w in [16, 32, 64] {
        // Simplest first: among candidates of equal cost the first found is kept.
        for (op, comm) in [("and.b", true), ("or.b", true), ("xor.b", true), ("shl.b", false), ("shr.u", false), ("shr.s", false)] {
            add(format!("{op}{w}"), 2, comm);
        }
        for (op, comm) in [("add.u", true), ("sub.u", false), ("min.u", true), ("min.s", true), ("max.u", true), ("max.s", true), ("mul.lo.u", true), ("mul.hi.u", true), ("mul.hi.s", true)] {
            add(format!("{op}{w}"), 2, comm);
        }
        for op in ["not.b", "neg.s", "abs.s", "popc.b", "clz.b", "cnot.b"] {
            add(format!("{op}{w}"), 1, false);
        }
        if w != 16 {
            add(format!("brev.b{w}"), 1, false);
        }
        for c in CMPS_SIGNED {
            add(format!("setp.{c}.s{w}"), 2, matches!(c, "eq" | "ne"));
        }
        for c in ["eq", "ne"] {
            add(format!("setp.{c}.b{w}"), 2, true);
        }
        for c in CMPS_UNSIGNED {
            add(format!("setp.{c}.u{w}"), 2, false);
        }
        add(format!("selp.b{w}"), 3, false);
        add(format!("mad.lo.u{w}"), 3, false);
    }
    for h in ["shf.l.wrap.b32", "shf.r.wrap.b32", "shf.l.clamp.b32", "shf.r.clamp.b32", "prmt.b32", "bfe.u32", "bfe.s32", "bfe.u64", "bfe.s64"] {
        add(h.to_string(), 3, false);
    }
    for h in ["and.pred", "or.pred", "xor.pred"] {
        add(h.to_string(), 2, true);
    }
    add("not.pred".to_string(), 1, false);
    // Width changes.
    for (h, n) in [
        ("cvt.u16.u32", 1),
        ("cvt.u16.u64", 1),
        ("cvt.u32.u64", 1),
        ("cvt.u32.u16", 1),
        ("cvt.s32.s16", 1),
        ("cvt.u64.u16", 1),
        ("cvt.s64.s16", 1),
        ("cvt.u64.u32", 1),
        ("cvt.s64.s32", 1),
        ("cvt.u32.u8", 1),
        ("cvt.s32.s8", 1),
        ("cvt.u64.u8", 1),
        ("cvt.s64.s8", 1),
        ("mul.wide.u16", 2),
        ("mul.wide.s16", 2),
        ("mul.wide.u32", 2),
        ("mul.wide.s32", 2),
        ("selp.u32", 3),
    ] {
        add(h.to_string(), n, h.starts_with("mul."));
    }
    v
}

/// The candidate instructions measured on `table`'s target.
pub fn candidate_ops(table: &ptx_opt::cost::CostModel) -> Vec<Op> {
    let mut ops = Vec::new();
    for (head, n, commutative) in heads() {
        let Ok(ins) = template(&head, n) else { continue };
        let look = table.lookup(&ins);
        if look.source == ptx_opt::cost::Source::Unmeasured {
            continue;
        }
        let width = ins.operand_type(0).map(type_width).unwrap_or(32);
        let shape = Shape::new(ins, width);
        let widths: Vec<u8> = shape.sources.iter().map(|s| s.ty.map(type_width).unwrap_or(32)).collect();
        if widths.len() != n {
            continue;
        }
        let base_cost = ptx_opt::engine::cost::sass_cost(table, &shape.ins, &vec![None; n]);
        ops.push(Op { head, shape, widths, commutative, base_cost });
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_candidate_set_builds_and_is_priced() {
        let table = ptx_opt::cost::CostModel::for_target("sm_80");
        let ops = candidate_ops(&table);
        let find = |h: &str| ops.iter().find(|o| o.head == h).unwrap_or_else(|| panic!("{h} missing"));
        assert_eq!(find("and.b32").base_cost, 1);
        assert_eq!(find("not.b32").base_cost, 0, "the engine's convention: a bitwise not is free");
        assert_eq!(find("selp.b32").widths, vec![32, 32, 1]);
        assert_eq!(find("shl.b64").widths, vec![64, 32]);
        assert_eq!(find("setp.lt.s32").shape.width, 1);
        assert!(ops.len() > 100, "{} ops", ops.len());
    }
}
