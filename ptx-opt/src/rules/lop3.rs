//! `lop3` synthesis: a tree of `and`/`or`/`xor`/`not`/`lop3` on `.b32` over
//! at most three distinct inputs (immediates included) is one `lop3.b32`
//! with the tree's truth table (sm_50 and PTX ISA 4.3 or newer).
//!
//! The truth table of an input is the usual `lop3` convention: the first
//! input is `0xF0`, the second `0xCC`, the third `0xAA`; a constant 0 is
//! `0x00` and all ones `0xFF`. A tree is folded only when it absorbs at
//! least two operations and its one immediate input is a mask met with its
//! complement (a bit-select `(a & m) | (b & ~m)`; SASS LOP3 takes one
//! immediate, and ptxas fuses trees with a single mask itself): ptxas
//! fuses register-only trees itself (measured: folding them gave no fewer
//! SASS instructions, sometimes one more), but not masked ones.

use super::term::{t, Term};
use super::{constant, konst, mk, op, width, Match, Rule, Target};
use crate::engine::facts::EGraph;
use crate::engine::lang::Node;
use egg::Id;
use ptx_ir::isa::{Opcode, ScalarType};
use smallvec::SmallVec;

const INPUT_TABLES: [u8; 3] = [0xF0, 0xCC, 0xAA];
/// How deep below the root the search expands.
const MAX_DEPTH: u32 = 3;
/// How many logic nodes one root's search may expand. The search tries
/// every logic node of every class it meets, backtracking, so its cost
/// grows with the classes: no corpus root needs more than 8, but long
/// logic chains whose classes merged took thousands per root (two thirds
/// of a 50,000-instruction function's -O2 time). A count, not a clock,
/// so that the result never depends on the machine.
const EXPANSIONS_PER_ROOT: u32 = 32;

fn is_logic_b32(eg: &EGraph, n: &Node) -> bool {
    match op(eg, n) {
        Some((s, _)) => matches!(s.opcode(), Opcode::AND | Opcode::OR | Opcode::XOR | Opcode::NOT | Opcode::LOP3) && s.ty() == Some(ScalarType::B32) && s.width == 32 && s.ins.operands.len() == s.sources.len() + 1,
        None => false,
    }
}

/// A partial expansion: the inputs so far and the number of operations absorbed.
#[derive(Clone, Default)]
struct Expansion {
    inputs: SmallVec<[Id; 3]>,
    ops: u32,
    /// An immediate and its complement met as one input (`m` and `~m`).
    complemented: bool,
}

impl Expansion {
    fn input(&mut self, eg: &EGraph, id: Id) -> Option<u8> {
        if let Some(k) = self.inputs.iter().position(|x| *x == id) {
            return Some(INPUT_TABLES[k]);
        }
        // An immediate that is the complement of an input immediate is that
        // input negated (`m` and `~m` of a bit-select take one slot).
        if let Some(c) = constant(eg, id) {
            if let Some(k) = self.inputs.iter().position(|x| constant(eg, *x) == Some(!c & 0xffff_ffff)) {
                self.complemented = true;
                return Some(!INPUT_TABLES[k]);
            }
        }
        if self.inputs.len() == 3 {
            return None;
        }
        self.inputs.push(id);
        Some(INPUT_TABLES[self.inputs.len() - 1])
    }
}

/// The truth table of class `id`, expanding logic nodes while the inputs fit.
/// `left` counts down the expansions the root may still make.
fn class_table(eg: &EGraph, id: Id, depth: u32, e: &mut Expansion, left: &mut u32) -> Option<u8> {
    if let Some(c) = constant(eg, id) {
        if c == 0 {
            return Some(0x00);
        }
        if c == 0xffff_ffff {
            return Some(0xFF);
        }
    }
    // The complement of an immediate input is that input negated (whether
    // written as a constant or as `not` of one).
    if let Some(c) = constant(eg, id) {
        if e.inputs.iter().any(|x| constant(eg, *x) == Some(!c & 0xffff_ffff)) {
            return e.input(eg, id);
        }
    }
    if depth < MAX_DEPTH {
        // Try each logic node of the class; keep the first that fits.
        for n in &eg[id].nodes {
            if !is_logic_b32(eg, n) {
                continue;
            }
            let mut trial = e.clone();
            if let Some(tab) = node_table(eg, n, depth + 1, &mut trial, left) {
                *e = trial;
                return Some(tab);
            }
        }
    }
    if width(eg, id) != 32 {
        return None;
    }
    e.input(eg, id)
}

/// The truth table of a logic node over its children.
fn node_table(eg: &EGraph, n: &Node, depth: u32, e: &mut Expansion, left: &mut u32) -> Option<u8> {
    *left = left.checked_sub(1)?;
    let (s, kids) = op(eg, n)?;
    let opc = s.opcode();
    if opc == Opcode::LOP3 {
        let lut = constant(eg, kids[3])? as u8;
        let (a, b, c) = (class_table(eg, kids[0], depth, e, left)?, class_table(eg, kids[1], depth, e, left)?, class_table(eg, kids[2], depth, e, left)?);
        e.ops += 1;
        let mut out = 0u8;
        for i in 0..8 {
            let idx = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
            out |= ((lut >> idx) & 1) << i;
        }
        return Some(out);
    }
    let a = class_table(eg, kids[0], depth, e, left)?;
    let r = match opc {
        Opcode::NOT => !a,
        _ => {
            let b = class_table(eg, *kids.get(1)?, depth, e, left)?;
            match opc {
                Opcode::AND => a & b,
                Opcode::OR => a | b,
                _ => a ^ b,
            }
        }
    };
    e.ops += 1;
    Some(r)
}

fn s_lop3(eg: &EGraph, n: &Node, out: &mut Vec<Match>) {
    if !is_logic_b32(eg, n) {
        return;
    }
    let mut e = Expansion::default();
    let mut left = EXPANSIONS_PER_ROOT;
    let Some(table) = node_table(eg, n, 0, &mut e, &mut left) else { return };
    // Measured on SASS: ptxas already fuses two or three logic operations
    // on registers into one LOP3, but not those with an immediate mask (a
    // bit-select `(a & m) | (b & ~m)` stays two LOP3s); folding register-only
    // trees only moved ptxas's choices, and sometimes cost an instruction.
    // One immediate at most: SASS LOP3 takes one, a second costs a MOV
    // (measured: `(x & 2) ^ 3` as one lop3 was one instruction more). And
    // only a mask used with its complement (a bit-select): ptxas fuses a
    // tree with one mask by itself (measured: `(a & m) | ~b` as one lop3
    // was one instruction more), but not `m` and `~m` as two immediates.
    let masks = e.inputs.iter().filter(|i| constant(eg, **i).is_some()).count();
    if e.ops < 2 || masks != 1 || !e.complemented {
        return;
    }
    let mut m: Match = e.inputs.iter().copied().collect();
    m.insert(0, Id::from(table as usize));
    out.push(m);
}

fn a_lop3(eg: &mut EGraph, m: &Match) -> Option<Id> {
    let table = usize::from(m[0]) as u128;
    let mut kids: SmallVec<[Id; 4]> = m[1..].iter().copied().collect();
    while kids.len() < 3 {
        let z = konst(eg, 32, 0);
        kids.push(z);
    }
    let lut = konst(eg, 32, table);
    kids.push(lut);
    Some(mk(eg, "lop3.b32", &kids))
}

fn instances() -> Vec<Term> {
    let x = || Term::var(0, 32);
    let y = || Term::var(1, 32);
    let m = |c: u128| Term::c(32, c);
    vec![
        // bit-select with an immediate mask: (x & m) | (y & ~m)
        t("or.b32", [t("and.b32", [x(), m(0x00ff_00ff)]), t("and.b32", [y(), m(0xff00_ff00)])]),
        t("or.b32", [t("and.b32", [x(), m(0x0f0f_0f0f)]), t("and.b32", [y(), t("not.b32", [m(0x0f0f_0f0f)])])]),
        // the same with xor, a complemented register, a nested select
        t("xor.b32", [t("and.b32", [x(), m(0xffff_0000)]), t("and.b32", [y(), m(0x0000_ffff)])]),
        t("or.b32", [t("and.b32", [t("not.b32", [x()]), m(0xf0f0_f0f0)]), t("and.b32", [y(), m(0x0f0f_0f0f)])]),
        t("or.b32", [t("and.b32", [t("xor.b32", [x(), y()]), m(0x8000_0000)]), t("and.b32", [y(), m(0x7fff_ffff)])]),
    ]
}

pub static RULES: &[Rule] = &[Rule {
    name: "lop3-synthesis",
    roots: &[Opcode::AND, Opcode::OR, Opcode::XOR, Opcode::NOT, Opcode::LOP3],
    search: s_lop3,
    apply: a_lop3,
    instances,
    needs: Target { sm: 50, ptx: (4, 3) },
    only_o3: false,
}];
