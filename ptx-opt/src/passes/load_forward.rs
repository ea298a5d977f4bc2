//! `load-forward`: a load of a location whose value a register already
//! holds becomes a copy of that register.
//!
//! Walking the dominator tree, the pass keeps what is known to be in
//! memory: after a plain `st [a], v` the location `a` holds `v`; after a
//! plain `ld d, [a]` it holds `d`. A later plain load of exactly that
//! location (same space, base version, offset and size) reads the register
//! instead, `mov.bN d, v` (an immediate stored: `mov` of it), when
//! - the register still holds the version that was stored or loaded (the
//!   value view), and is not declared in a `{ }` block;
//! - the load is at most [`NEAR`] statements after the store or load, or
//!   the register is read after the load anyway (no longer live range);
//! - the load reads generic, `.global` or `.param` memory
//!   ([`FORWARDED_SPACES`]);
//! - the load and the store move whole registers of the same width (no
//!   extension, no truncation, no vectors), and the load is unguarded and
//!   not `.nc` after a store;
//! - nothing between may have written the location: a plain store that may
//!   overlap it ([`memory::Location::may_overlap`]), or any clobber
//!   (atomics, barriers, fences, calls, ordered accesses ...).
//!
//! Knowledge flows into a block from its immediate dominator only when
//! that is its single predecessor (an extended basic block), except for
//! read-only memory (kernel parameters, `.const`), which nothing writes:
//! a kernel parameter is loaded once in the whole function, wherever its
//! first load dominates the others.
//!
//! Why: naive producers reload what they just stored or loaded (NVRTC
//! `-G` reloads every parameter at each use; `-O0` code reads a variable
//! back after writing it), and ptxas cannot forward through generic
//! addresses or across the accesses it cannot disambiguate.

use super::memory::{Location, Touch};
use super::{Analyses, Pass, Preserves};
use crate::values::{Version, VersionDef};
use crate::{ModuleContext, OptLevel};
use petgraph::stable_graph::NodeIndex;
use ptx_ir::ir::{Function, Instruction, Operand, RegId, Stmt};
use ptx_ir::isa::{Mod, Opcode, StateSpace};

pub const PASS: Pass = Pass {
    name: "load-forward",
    description: "a load of a location a register already holds (stored or loaded before, nothing written between) becomes a copy; kernel parameters are loaded once",
    run,
    preserves: Preserves::Cfg,
    edit: None,
};

/// The spaces whose loads are forwarded: those ptxas cannot see through
/// (generic, global) and kernel parameters. ptxas forwards `.shared` and
/// `.local` accesses at symbol addresses itself, and a copy in their place
/// measured worse (a ZLUDA test: two SASS instructions and a register more).
const FORWARDED_SPACES: &[StateSpace] = &[StateSpace::Generic, StateSpace::Global, StateSpace::Param];

/// Most locations remembered at once (the oldest are forgotten first).
const MAX_KNOWN: usize = 64;

/// A register is forwarded more than this many statements after it was
/// stored or loaded only when something reads it later anyway: reading it
/// at the load stretches its live range (measured: the Mersenne Twister
/// kernel of the CUDA 2.2 SDK, a value stored to a `.local` table and
/// loaded back 90 statements later cost one SASS instruction forwarded).
const NEAR: usize = 16;

/// What a location is known to hold.
#[derive(Clone, Debug)]
enum Held {
    /// This register, at this version.
    Reg(RegId, VersionDef),
    /// This immediate (as written in the store, at the store's type).
    Imm(u128),
}

#[derive(Clone, Debug)]
struct Known {
    at: Location,
    held: Held,
    /// Width of the value in bits.
    bits: u32,
    /// Came from a store (never forwarded into an `.nc` load).
    stored: bool,
    /// The statement that stored or loaded it.
    since: usize,
    /// The location is never written ([`Location::read_only`], asked once).
    read_only: bool,
}

fn run(f: &Function, analyses: &mut Analyses, _ctx: &ModuleContext, _level: OptLevel) -> Option<Function> {
    let body = f.body.as_ref()?;
    if !body.iter().any(|s| matches!(s, Stmt::Instr(i) if i.opcode == Opcode::LD)) {
        return None;
    }
    let in_blocks = analyses.block_declared_names(f);
    let (cfg, dom, view, memory) = analyses.memory(f);
    let syms = &memory.syms;
    // The last statement reading each version, to keep live ranges short:
    // found when a load first could reuse a register held from further back
    // than `NEAR` (most functions have none; renderer -O2: 9.9 M host
    // instructions found for every function).
    let readers = std::cell::OnceCell::new();
    let mut rewrites: Vec<(usize, Instruction)> = Vec::new();
    let mut walk: Vec<(NodeIndex, Vec<Known>)> = vec![(cfg.entry, Vec::new())];
    while let Some((b, mut known)) = walk.pop() {
        for k in cfg.block(b).stmts.clone() {
            let Stmt::Instr(ins) = &body[k] else { continue };
            let acc = match memory.touch(f, view, k, ins) {
                Touch::Nothing => continue,
                Touch::Clobber => {
                    known.retain(|x| x.read_only);
                    continue;
                }
                Touch::Plain(acc) => acc,
            };
            if acc.store {
                known.retain(|x| x.read_only || !x.at.may_overlap(&acc.at));
                if ins.guard.is_none() && acc.whole {
                    let bits = acc.at.size * 8;
                    let held = match acc.value {
                        Some(Operand::Reg(r)) if !in_blocks.contains(f.reg(r.reg).name.as_ref()) => view.read(k, r.reg).map(|v| Held::Reg(r.reg, v.def)),
                        Some(Operand::Imm(i)) => ins.ty().map(|t| Held::Imm(ptx_ir::eval::imm_bits(i, t))),
                        _ => None,
                    };
                    if let Some(held) = held {
                        remember(&mut known, Known { read_only: acc.at.read_only(syms), at: acc.at.clone(), held, bits, stored: true, since: k });
                    }
                }
                continue;
            }
            let Some(Operand::Reg(d)) = acc.value else { continue };
            if ins.guard.is_some() || !acc.whole || !FORWARDED_SPACES.contains(&acc.at.space) {
                continue;
            }
            let d = d.reg;
            let bits = acc.at.size * 8;
            let nc = ins.has(Mod::from_text(".nc").expect("a modifier"));
            let found = known.iter().rev().find(|x| {
                x.at == *acc.at
                    && x.bits == bits
                    && !(nc && x.stored)
                    && match x.held {
                        Held::Reg(r, v) => r != d && view.version_at(r, k) == v && (k - x.since <= NEAR || readers.get_or_init(|| view.readers()).get(&Version { reg: r, def: v }).is_some_and(|r| r.last > k)),
                        Held::Imm(_) => true,
                    }
            });
            if let Some(x) = found {
                let mov = match x.held {
                    Held::Reg(r, _) => Instruction::new(Opcode::MOV, &[Mod::from_text(&format!(".b{bits}")).expect("a type")], [Operand::reg(d), Operand::reg(r)]).ok(),
                    Held::Imm(c) => crate::engine::emit::const_mov(d, c, bits as u8),
                };
                if let Some(mov) = mov {
                    rewrites.push((k, mov));
                    continue;
                }
            }
            if !in_blocks.contains(f.reg(d).name.as_ref()) {
                remember(&mut known, Known { read_only: acc.at.read_only(syms), at: acc.at.clone(), held: Held::Reg(d, VersionDef::Def(k)), bits, stored: false, since: k });
            }
        }
        for &c in dom.children(b).iter().rev() {
            let only_from_b = cfg.predecessors(c).all(|p| p == b);
            let inherited = if only_from_b { known.clone() } else { known.iter().filter(|x| x.read_only).cloned().collect() };
            walk.push((c, inherited));
        }
    }
    if rewrites.is_empty() {
        return None;
    }
    let mut g = f.clone();
    let out = g.body.as_mut().expect("a body");
    for (k, mov) in rewrites {
        out[k] = Stmt::Instr(Box::new(mov));
    }
    Some(g)
}

fn remember(known: &mut Vec<Known>, x: Known) {
    known.retain(|y| y.at != x.at);
    if known.len() >= MAX_KNOWN {
        known.remove(0);
    }
    known.push(x);
}
