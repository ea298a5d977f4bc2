//! A small pure dataflow DAG (a *pattern*): inputs, typed constants and
//! instruction shapes over earlier nodes, in topological order with the
//! root last. Owns the DAG's bit-exact evaluation (through
//! [`Shape::eval`], the engine's semantics), its cost under the engine's
//! convention, and its canonical text (the key that groups equal patterns).

use ptx_ir::eval::Dialect;
use ptx_ir::ir::{Operand, Prefix};
use ptx_opt::engine::lang::{type_width, Shape, DEST};
use std::fmt::Write;

/// One node of a DAG.
#[derive(Clone, Debug)]
pub enum Node {
    /// The k-th input (numbered in first-use order), a register of `width` bits.
    Input { index: u8, width: u8 },
    /// A bit pattern of `width` bits.
    Const { width: u8, bits: u128 },
    /// An instruction shape over earlier nodes.
    Op { shape: Shape, kids: Vec<usize> },
}

impl Node {
    pub fn width(&self) -> u8 {
        match self {
            Node::Input { width, .. } | Node::Const { width, .. } => *width,
            Node::Op { shape, .. } => shape.width,
        }
    }
}

/// A DAG in topological order, root last.
#[derive(Clone, Debug)]
pub struct Dag {
    pub nodes: Vec<Node>,
    /// Width of each input, by index.
    pub inputs: Vec<u8>,
}

impl Dag {
    pub fn root(&self) -> usize {
        self.nodes.len() - 1
    }

    pub fn width(&self) -> u8 {
        self.nodes[self.root()].width()
    }

    /// Number of instructions.
    pub fn insns(&self) -> usize {
        self.nodes.iter().filter(|n| matches!(n, Node::Op { .. })).count()
    }

    /// The root's value (the full register content) for these input values,
    /// or `None` where some instruction's result is not exactly determined.
    pub fn eval(&self, dialect: &Dialect, inputs: &[u128]) -> Option<u128> {
        let mut vals: smallvec::SmallVec<[u128; 12]> = smallvec::SmallVec::with_capacity(self.nodes.len());
        for n in &self.nodes {
            let v = match n {
                Node::Input { index, .. } => inputs[*index as usize],
                Node::Const { bits, .. } => *bits,
                Node::Op { shape, kids } => {
                    let args: smallvec::SmallVec<[(u128, u8); 3]> = kids.iter().map(|&k| (vals[k], self.nodes[k].width())).collect();
                    shape.eval(dialect, &args)?
                }
            };
            vals.push(v);
        }
        vals.last().copied()
    }

    /// Every node's value (`None` where not exactly determined), for inputs
    /// derived from what the DAG computes.
    pub fn values(&self, dialect: &Dialect, inputs: &[u128]) -> Vec<Option<u128>> {
        let mut vals: Vec<Option<u128>> = Vec::with_capacity(self.nodes.len());
        for n in &self.nodes {
            let v = match n {
                Node::Input { index, .. } => Some(inputs[*index as usize]),
                Node::Const { bits, .. } => Some(*bits),
                Node::Op { shape, kids } => {
                    let args: Option<smallvec::SmallVec<[(u128, u8); 3]>> = kids.iter().map(|&k| Some((vals[k]?, self.nodes[k].width()))).collect();
                    args.and_then(|a| shape.eval(dialect, &a))
                }
            };
            vals.push(v);
        }
        vals
    }

    /// SASS instructions under the engine's extraction convention
    /// ([`ptx_opt::engine::cost::sass_cost`]): inputs and constants free,
    /// each instruction once.
    pub fn cost(&self, table: &ptx_opt::cost::CostModel) -> u32 {
        self.nodes
            .iter()
            .map(|n| match n {
                Node::Op { shape, kids } => {
                    let consts: smallvec::SmallVec<[Option<u128>; 3]> = kids
                        .iter()
                        .map(|&k| match self.nodes[k] {
                            Node::Const { bits, .. } => Some(bits),
                            _ => None,
                        })
                        .collect();
                    ptx_opt::engine::cost::sass_cost(table, &shape.ins, &consts)
                }
                _ => 0,
            })
            .sum()
    }

    /// The heads of the DAG's instructions the cost table has no cell for
    /// (priced by a fallback: another head of the same opcode, or the
    /// default), each with the head that priced it.
    pub fn unmeasured(&self, table: &ptx_opt::cost::CostModel) -> Vec<String> {
        use ptx_opt::cost::Source;
        let mut v: Vec<String> = self
            .nodes
            .iter()
            .filter_map(|n| match n {
                Node::Op { shape, .. } => {
                    let head = ptx_print::instruction_head(&shape.ins);
                    match table.lookup(&shape.ins).source {
                        Source::Measured | Source::OtherFamily(_) => None,
                        Source::SameTypes(h) | Source::SameOpcode(h) => Some(format!("{head} (priced as {h})")),
                        Source::Unmeasured => Some(format!("{head} (default)")),
                    }
                }
                _ => None,
            })
            .collect();
        v.dedup();
        v
    }

    /// The canonical text: one PTX line per instruction, inputs `%a0..`,
    /// temporaries `%t0..`, constants as hexadecimal immediates, preceded
    /// by a line naming the inputs and their widths. Equal texts mean equal
    /// DAGs (the head carries every modifier; a destination register wider
    /// than the instruction's type is written `%tN:WIDTH`).
    pub fn text(&self) -> String {
        let mut out = String::new();
        out.push_str("// in:");
        for (k, w) in self.inputs.iter().enumerate() {
            let _ = write!(out, " %a{k}:{w}");
        }
        out.push('\n');
        let mut temp = vec![usize::MAX; self.nodes.len()];
        let mut next = 0;
        for (i, n) in self.nodes.iter().enumerate() {
            if let Node::Op { shape, kids } = n {
                temp[i] = next;
                next += 1;
                let names: Vec<String> = kids.iter().map(|&k| self.operand(k, &temp)).collect();
                let dest = if shape.dest_ty.is_some_and(|t| type_width(t) != shape.width) { format!("%t{}:{}", temp[i], shape.width) } else { format!("%t{}", temp[i]) };
                write_insn(&mut out, shape, &dest, &names);
                out.push('\n');
            }
        }
        out
    }

    fn operand(&self, k: usize, temp: &[usize]) -> String {
        match &self.nodes[k] {
            Node::Input { index, .. } => format!("%a{index}"),
            Node::Const { width, bits } => imm_text(*bits, *width),
            Node::Op { .. } => format!("%t{}", temp[k]),
        }
    }
}

/// A constant as an immediate: decimal below 10, hexadecimal otherwise.
pub fn imm_text(bits: u128, width: u8) -> String {
    if width == 1 || bits < 10 {
        format!("{bits}")
    } else {
        format!("0x{bits:x}")
    }
}

/// Writes `shape` as a PTX instruction with destination `dest` and the k-th
/// source written `srcs[k]` (with the shape's `!`/`-` prefixes and braces).
pub fn write_insn(out: &mut String, shape: &Shape, dest: &str, srcs: &[String]) {
    out.push_str(&ptx_print::instruction_head(&shape.ins));
    let name = |r: &ptx_ir::ir::RegOperand| -> String {
        if r.reg == DEST {
            return dest.to_string();
        }
        let s = srcs.get(r.reg.0 as usize).cloned().unwrap_or_else(|| "?".into());
        match r.prefix {
            Prefix::Not => format!("!{s}"),
            Prefix::Neg => format!("-{s}"),
            Prefix::None => s,
        }
    };
    for (k, op) in shape.ins.operands.iter().enumerate() {
        out.push_str(if k == 0 { " " } else { ", " });
        match op {
            Operand::Reg(r) => out.push_str(&name(r)),
            Operand::Vector(v) => {
                let parts: Vec<String> = v.iter().map(|e| if let Operand::Reg(r) = e { name(r) } else { "?".into() }).collect();
                let _ = write!(out, "{{{}}}", parts.join(", "));
            }
            _ => out.push('?'),
        }
    }
    out.push(';');
}

/// Is every source of the shape a plain placeholder (no lane or byte
/// selectors, which this tool's text does not write)?
pub fn printable(shape: &Shape) -> bool {
    shape.sources.iter().all(|s| s.sel.is_none()) && shape.ins.operands.iter().all(|o| matches!(o, Operand::Reg(r) if r.sel.is_none()) || matches!(o, Operand::Vector(v) if v.iter().all(|e| matches!(e, Operand::Reg(r) if r.sel.is_none()))))
}
