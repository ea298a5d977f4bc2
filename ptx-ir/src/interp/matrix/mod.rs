//! Warp-level matrix instructions (PTX ISA 8.7 §9.7.14): `mma.sync`,
//! `wmma.load/store/mma`, `ldmatrix`, `stmatrix`, `movmatrix`.
//!
//! All of them are `.sync.aligned` warp collectives: every lane of the warp
//! must execute the same instruction together ("if any thread in the warp
//! has exited, the behavior is undefined"). A lane arriving reads its
//! register operands and addresses and waits (as the other collectives of
//! `warp.rs` do); when all 32 lanes wait at the instruction, [`release`]
//! computes every lane's results, does the memory accesses (after every
//! lane's earlier stores, as on the hardware) and lets them go on. A warp
//! with fewer than 32 live lanes at such an instruction is reported as
//! undefined, and so is a warp whose lanes are stuck at different places
//! while some wait at one ([`diagnose_stuck`]).
//!
//! Files: `layout.rs` (the manual's fragment layouts), `exact.rs` (exact
//! sums of products and the quality of floating-point results: the bound
//! assumed is documented there), `mma.rs` (`mma` and the multiply shared
//! with `wmma`), `wmma.rs` (the wmma fragments: their layout is
//! unspecified by the manual and chosen there), `ldmatrix.rs` (`ldmatrix`,
//! `stmatrix`, `movmatrix`). Forms not implemented (sparse `mma.sp`,
//! block-scaled and `.kind::` forms, `.e3m2/.e2m3/.e2m1`, `ldmatrix`
//! `.m16n16`/`.m8n16`, `stmatrix .m16n8`) stop the run as unsupported.
//! The warpgroup-level `wgmma` instructions are in `wgmma/`.

mod exact;
mod layout;
mod ldmatrix;
mod mma;
mod wmma;
pub mod wgmma;

use super::exec::{instruction_head, Cta, Flow, Wait};
use super::memory::{Global, Space};
use super::RunError;
use crate::eval::{Quality, Val};
use crate::ir::{Instruction, Operand, Stmt};
use crate::isa::Opcode;

pub fn handles(op: Opcode) -> bool {
    [Opcode::MMA, Opcode::WMMA_LOAD, Opcode::WMMA_STORE, Opcode::WMMA_MMA, Opcode::LDMATRIX, Opcode::STMATRIX, Opcode::MOVMATRIX].contains(&op) || wgmma::handles(op)
}

/// What a lane brought to the collective: the values of each operand
/// position in order (registers, or for an address the generic address
/// and its quality), none for written-only operands.
pub struct LaneInputs {
    pub ops: Vec<Vec<Val>>,
}

impl LaneInputs {
    /// Flattened for `Wait::Warp`: `[count, len0, len1, ..., values ...]`.
    fn encode(&self) -> Vec<Val> {
        let mut v = vec![Val::exact(self.ops.len() as u128)];
        v.extend(self.ops.iter().map(|o| Val::exact(o.len() as u128)));
        for o in &self.ops {
            v.extend_from_slice(o);
        }
        v
    }

    fn decode(v: &[Val]) -> LaneInputs {
        let n = v[0].bits as usize;
        let mut at = 1 + n;
        let ops = (0..n)
            .map(|k| {
                let len = v[1 + k].bits as usize;
                let o = v[at..at + len].to_vec();
                at += len;
                o
            })
            .collect();
        LaneInputs { ops }
    }
}

/// What a completed matrix collective gives each lane: values for its
/// written operands, and memory writes to do (generic address, bytes,
/// quality of each byte).
pub struct Completion {
    pub results: Vec<Vec<Val>>,
    pub writes: Vec<(usize, u64, Vec<u8>, Vec<Quality>)>,
}

/// Why a collective could not be computed.
pub enum Failure {
    Unsupported(String),
    /// Undefined behaviour, reported at `lane`.
    Undefined { lane: usize, message: String },
    Fault(RunError),
}

/// Memory reads during a release: (lane, generic address, bytes) → bytes and quality.
pub trait Memory {
    fn read(&self, lane: usize, addr: u64, len: usize) -> Result<(Vec<u8>, Quality), Failure>;
}

/// A lane arrives at a matrix instruction.
pub fn arrive(cta: &mut Cta, t: usize, ins: &Instruction) -> Result<Flow, RunError> {
    if wgmma::handles(ins.opcode) {
        return wgmma::step(cta, t, ins);
    }
    if let Err(why) = check_form(ins) {
        return Err(cta.unsupported(t, &format!("{}{}", instruction_head(ins), why.map(|w| format!(" ({w})")).unwrap_or_default())));
    }
    let mut ops = Vec::with_capacity(ins.operands.len());
    for (k, (o, spec)) in ins.operands.iter().zip(ins.form.operands()).enumerate() {
        let mut vals = smallvec::SmallVec::<[Val; 6]>::new();
        match o {
            Operand::Addr(_) | Operand::ArrayElem(_) => {
                let (sp, a) = cta.address(t, ins, o, ins.space())?;
                vals.push(Val::exact(a.wrapping_add(sp.generic_base()) as u128));
            }
            _ if spec.read => cta.read_operand(t, ins, k, o, &mut vals)?,
            _ => {}
        }
        ops.push(vals.into_vec());
    }
    let frame = cta.threads[t].frames.last().unwrap();
    let (func, pc) = (frame.func, frame.pc);
    cta.threads[t].wait = Wait::Warp { func, pc, mask: u32::MAX, srcs: LaneInputs { ops }.encode() };
    Ok(Flow::Block)
}

/// Checks the form is one this module computes; `Err(reason)` otherwise.
fn check_form(ins: &Instruction) -> Result<(), Option<String>> {
    match ins.opcode {
        Opcode::MMA => mma::Form::parse(ins).map(|_| ()),
        Opcode::WMMA_LOAD | Opcode::WMMA_STORE | Opcode::WMMA_MMA => wmma::Form::parse(ins).map(|_| ()),
        _ => ldmatrix::Form::parse(ins).map(|_| ()),
    }
}

/// The instruction thread `t` waits at, if it is a matrix collective.
fn waiting_at<'a>(cta: &'a Cta, t: usize) -> Option<(usize, usize, &'a Instruction)> {
    let Wait::Warp { func, pc, .. } = &cta.threads[t].wait else { return None };
    let body = cta.p.funcs[*func].f.body.as_ref()?;
    match body.get(*pc) {
        Some(Stmt::Instr(ins)) if handles(ins.opcode) && !wgmma::handles(ins.opcode) => Some((*func, *pc, ins)),
        _ => None,
    }
}

/// Completes every matrix collective all of whose warp's live lanes have
/// arrived.
pub fn release(cta: &mut Cta, global: &mut Global) -> Result<bool, RunError> {
    let mut released = wgmma::release(cta, global)?;
    let n = cta.threads.len();
    for t in 0..n {
        let Some((func, pc, ins)) = waiting_at(cta, t) else { continue };
        let warp = cta.threads[t].linear / 32;
        let lanes: Vec<usize> = (0..n).filter(|&k| cta.threads[k].linear / 32 == warp && cta.threads[k].wait != Wait::Exited).collect();
        let here = |k: usize| matches!(&cta.threads[k].wait, Wait::Warp { func: f, pc: p, .. } if *f == func && *p == pc);
        if !lanes.iter().all(|&k| here(k)) {
            continue;
        }
        let ins = ins.clone();
        let members = lanes.iter().fold(0u32, |m, &k| m | 1 << (cta.threads[k].linear % 32));
        if members != u32::MAX {
            return Err(cta.undefined(t, &format!("`{}` is executed by lanes {members:#010x} of the warp only: `.sync.aligned` matrix instructions need all 32 lanes (the others have exited or are not in the launch)", instruction_head(&ins))));
        }
        // Thread index of each lane, and what each brought.
        let mut by_lane = [0usize; 32];
        for &k in &lanes {
            by_lane[(cta.threads[k].linear % 32) as usize] = k;
        }
        let inputs: Vec<LaneInputs> = by_lane
            .iter()
            .map(|&k| match &cta.threads[k].wait {
                Wait::Warp { srcs, .. } => LaneInputs::decode(srcs),
                _ => unreachable!(),
            })
            .collect();
        let mem = CtaMemory { cta, global, by_lane };
        let done = match ins.opcode {
            Opcode::MMA => mma::execute(&ins, &inputs),
            Opcode::WMMA_LOAD | Opcode::WMMA_STORE | Opcode::WMMA_MMA => wmma::execute(&ins, &inputs, &mem),
            _ => ldmatrix::execute(&ins, &inputs, &mem),
        };
        let done = match done {
            Ok(d) => d,
            Err(Failure::Unsupported(why)) => return Err(cta.unsupported(t, &format!("{} ({why})", instruction_head(&ins)))),
            Err(Failure::Undefined { lane, message }) => return Err(cta.undefined(by_lane[lane], &message)),
            Err(Failure::Fault(error)) => return Err(error),
        };
        for (lane, addr, bytes, quality) in &done.writes {
            let k = by_lane[*lane];
            let (sp, a) = generic(*addr);
            for (i, (b, q)) in bytes.iter().zip(quality).enumerate() {
                cta.mem_write(k, global, sp, a + i as u64, &[*b], *q)?;
            }
        }
        for (lane, r) in done.results.into_iter().enumerate() {
            let k = by_lane[lane];
            cta.threads[k].wait = Wait::Running;
            cta.threads[k].resume = Some(r.into());
        }
        released = true;
    }
    Ok(released)
}

/// A generic address as (space, address in the space); addresses outside
/// every window are left global (the access then faults there).
fn generic(a: u64) -> (Space, u64) {
    match Space::of_generic(a) {
        Some(Space::Global) | None => (Space::Global, a),
        Some(s) => (s, a - s.generic_base()),
    }
}

/// The space of a generic address, if it is in one.
pub fn space_of(a: u64) -> Option<Space> {
    Space::of_generic(a)
}

struct CtaMemory<'c, 'p, 'm> {
    cta: &'c Cta<'p, 'm>,
    global: &'c Global,
    by_lane: [usize; 32],
}

impl Memory for CtaMemory<'_, '_, '_> {
    fn read(&self, lane: usize, addr: u64, len: usize) -> Result<(Vec<u8>, Quality), Failure> {
        let (sp, a) = generic(addr);
        let mut buf = vec![0u8; len];
        let k = self.by_lane[lane];
        let q = self.cta.mem_read(k, self.global, sp, a, &mut buf).map_err(Failure::Fault)?;
        Ok((buf, q))
    }
}

/// When nothing can go on: a warp whose lanes wait at a matrix instruction
/// while others of its lanes are blocked elsewhere breaks `.aligned`.
pub fn diagnose_stuck(cta: &Cta) -> Option<RunError> {
    if let Some(e) = wgmma::diagnose_stuck(cta) {
        return Some(e);
    }
    let n = cta.threads.len();
    for t in 0..n {
        let Some((func, pc, ins)) = waiting_at(cta, t) else { continue };
        let warp = cta.threads[t].linear / 32;
        let mut here = 0u32;
        let mut elsewhere = 0u32;
        for k in 0..n {
            let th = &cta.threads[k];
            if th.linear / 32 != warp || th.wait == Wait::Exited {
                continue;
            }
            match &th.wait {
                Wait::Warp { func: f, pc: p, .. } if *f == func && *p == pc => here |= 1 << (th.linear % 32),
                _ => elsewhere |= 1 << (th.linear % 32),
            }
        }
        if elsewhere != 0 {
            return Some(cta.undefined(t, &format!("lanes {here:#010x} of the warp wait at `{}` while lanes {elsewhere:#010x} wait elsewhere: `.aligned` requires every lane of the warp to execute it together", instruction_head(ins))));
        }
    }
    None
}

/// The quality of several values together (e.g. the two halves packed in
/// one register): the worst, and the larger bound of two approximations.
pub fn combine(a: Quality, b: Quality) -> Quality {
    match (a, b) {
        (Quality::Approx { ulps: x }, Quality::Approx { ulps: y }) => Quality::Approx { ulps: x.max(y) },
        _ => super::memory::worst(a, b),
    }
}

/// Element `i` of a fragment held in registers `regs` (elements of `bits`
/// bits, packed from the low bits; `.f64` fragments one per register).
pub fn element(regs: &[Val], ty: layout::Elem, i: u32) -> Option<(u64, Quality)> {
    let per = ty.per_register();
    let r = regs.get((i / per) as usize)?;
    let bits = ty.bits();
    let shift = (i % per) * bits;
    let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
    Some(((r.bits >> shift) as u64 & mask, r.quality))
}

/// Packs elements (in order) into registers.
pub fn pack(elems: &[(u64, Quality)], ty: layout::Elem) -> Vec<Val> {
    let per = ty.per_register() as usize;
    let bits = ty.bits();
    elems
        .chunks(per)
        .map(|c| {
            let mut v = Val::exact(0);
            for (k, (b, q)) in c.iter().enumerate() {
                v.bits |= (*b as u128) << (k as u32 * bits);
                v.quality = if k == 0 { *q } else { combine(v.quality, *q) };
            }
            v
        })
        .collect()
}

#[cfg(test)]
mod tests;
