//! Asynchronous warpgroup matrix multiply-accumulate (PTX ISA 8.7 §9.7.15):
//! dense `wgmma.mma_async` and `wgmma.fence` / `wgmma.commit_group` /
//! `wgmma.wait_group`.
//!
//! `wgmma.mma_async.sync.aligned` is a collective over a warpgroup, four
//! contiguous warps whose first warp rank is a multiple of 4 (§9.7.15.1):
//! each of its 128 threads arrives with its D (and, for the register form,
//! A) fragment, the descriptors and `scale-d`, and waits, as the warp-level
//! matrix instructions do (`Wait::Warp`); when all 128 wait at the same
//! instruction, [`release`] reads A and B from shared memory through the
//! descriptors (`layout.rs`), computes `D = A * B (+ D)` with the exact sums
//! of `exact.rs` (floating point; accumulation of at least single
//! precision for an `.f32` D, at least half for an `.f16` D, so exactness
//! is judged at that precision; `.tf32` inputs truncated to their top 19
//! bits as §9.7.15.5.2 says) or `mma::multiply` (integers, `.b1`), and
//! lets the threads go on. A warpgroup that is not complete (threads
//! exited, or a block that is not a multiple of 128 threads) or whose
//! threads wait at different places is undefined (`.aligned`).
//!
//! The result is *pending*: each thread keeps its fragment of D with the
//! operation, which `wgmma.commit_group` batches into a group and
//! `wgmma.wait_group N` completes (writing the registers) once at most `N`
//! newer groups remain (per thread: the groups of a thread are the
//! operations it took part in). Until then the operation is in flight, and
//! the checks of the manual apply to that thread:
//!
//! - any instruction naming an accumulator or A-fragment register of an
//!   operation in flight, reading or writing it, is undefined
//!   (§9.7.15.7.3); another `wgmma.mma_async` may use in-flight
//!   accumulators of the same shape and type as its own accumulators (the
//!   ordering the manual guarantees, §9.7.15.7.1), and then reads the
//!   pending values;
//! - a `wgmma.mma_async` with no `wgmma.fence` before it in the thread, or
//!   whose accumulator or A registers were written since the thread's last
//!   `wgmma.fence` (other than by a completing wgmma), is undefined
//!   (§9.7.15.7.1). The check compares the registers with their values at
//!   the fence, so rewriting a register with the value it had goes
//!   unnoticed (the result is the same either way), and so do reads
//!   between the fence and the wgmma.
//!
//! - a store or atomic to shared-memory bytes that an operation in flight
//!   reads (the operation reads its matrices when it is issued here, at
//!   some time before its completion on the hardware) is undefined, until
//!   the first `wgmma.wait_group` of a thread of the warpgroup completes
//!   it. (Asynchronous copies into those bytes are not checked yet: they
//!   write shared memory without `Cta::mem_write`.)
//!
//! While a thread has an operation in flight, or any operation in flight
//! reads shared memory, the threads run on the checked path (the fast path
//! of `fast.rs` steps aside), so the register check is one test per
//! instruction. `wgmma.fence`, `commit_group` and `wait_group` act per
//! thread (their `.aligned` agreement across the warpgroup is not checked).
//! Not modelled: the proxy ordering of shared-memory writes before a wgmma
//! reads them (`fence.proxy.async`). Sparse `wgmma.mma_async.sp` and
//! descriptors with a nonzero base offset stop as unsupported.

mod form;
pub mod layout;
#[cfg(test)]
mod tests;

use super::exact::{self, Accumulation, Round};
use super::layout::Elem;
use super::mma::{self, Matrix};
use super::{element, pack, LaneInputs};
use crate::eval::{Quality, Val};
use crate::interp::exec::{instruction_head, Cta, Flow, Wait};
use crate::interp::memory::{Global, Space};
use crate::interp::RunError;
use crate::ir::{Imm, Instruction, Operand, Stmt};
use crate::isa::Opcode;
use form::Form;
use layout::Descriptor;
use std::collections::VecDeque;

/// Threads in a warpgroup.
const WARPGROUP: usize = 128;

pub fn handles(op: Opcode) -> bool {
    [Opcode::WGMMA_MMA_ASYNC, Opcode::WGMMA_FENCE, Opcode::WGMMA_COMMIT_GROUP, Opcode::WGMMA_WAIT_GROUP].contains(&op)
}

/// One `wgmma.mma_async` in flight, as one of its threads sees it.
struct InFlight {
    /// The operation's number in the CTA.
    op: usize,
    /// Where it was issued (function, statement).
    func: usize,
    pc: usize,
    d_slots: Vec<usize>,
    a_slots: Vec<usize>,
    /// The thread's fragment of the result, register by register.
    results: Vec<Val>,
}

/// One thread's wgmma state.
#[derive(Default)]
struct ThreadState {
    /// Frame (depth, function) and register values at its last `wgmma.fence`.
    fence: Option<((usize, usize), Vec<Val>)>,
    uncommitted: Vec<InFlight>,
    groups: VecDeque<Vec<InFlight>>,
    /// Frame depth and function of the operations in flight (all in one frame).
    depth: usize,
    func: usize,
    /// Per register slot of that frame: how many operations in flight use
    /// it as an accumulator / as an A register.
    as_d: Vec<u16>,
    as_a: Vec<u16>,
    /// For an accumulator in flight: the shape and type of the operations
    /// writing it, and the newest pending value.
    pending: Vec<((u32, u32, u32, Elem), Val)>,
    in_flight: usize,
}

impl ThreadState {
    fn ops(&self) -> impl Iterator<Item = &InFlight> {
        self.groups.iter().flatten().chain(&self.uncommitted)
    }

    fn busy(&self, s: usize) -> bool {
        self.as_d.get(s).is_some_and(|&n| n > 0) || self.as_a.get(s).is_some_and(|&n| n > 0)
    }

    fn is_d(&self, s: usize) -> bool {
        self.as_d.get(s).is_some_and(|&n| n > 0)
    }

    fn is_a(&self, s: usize) -> bool {
        self.as_a.get(s).is_some_and(|&n| n > 0)
    }
}

/// The wgmma state of a CTA.
pub struct State {
    threads: Vec<ThreadState>,
    /// Shared-memory bytes read by operations in flight: per byte, how many;
    /// per operation (number, where issued), the bytes.
    shared_read: Vec<u16>,
    reads: Vec<(usize, (usize, usize), Vec<u64>)>,
    next_op: usize,
}

impl State {
    pub fn new(threads: usize) -> State {
        State { threads: (0..threads).map(|_| ThreadState::default()).collect(), shared_read: Vec::new(), reads: Vec::new(), next_op: 0 }
    }

    /// Must thread `t` run on the checked path: it has an operation in
    /// flight, or some operation in flight reads shared memory (every
    /// shared-memory write is then checked)?
    #[inline]
    pub fn watching(&self, t: usize) -> bool {
        !self.reads.is_empty() || self.in_flight(t)
    }

    /// Do operations in flight read shared memory?
    #[inline]
    pub fn reads_shared(&self) -> bool {
        !self.reads.is_empty()
    }

    /// A write of `len` bytes at shared offset `a` while an operation in
    /// flight reads some of them: the message saying so.
    pub fn shared_write_conflict(&self, a: u64, len: usize, position: impl Fn(usize, usize) -> String) -> Option<String> {
        let hit = (a..a.saturating_add(len as u64)).find(|&b| self.shared_read.get(b as usize).is_some_and(|&n| n > 0))?;
        let (_, (func, pc), _) = self.reads.iter().find(|(_, _, bytes)| bytes.binary_search(&hit).is_ok())?;
        Some(format!(
            "writes shared memory at offset {hit:#x}, which the wgmma.mma_async at {} reads, before a wgmma.wait_group completed it (the operation reads its matrices asynchronously, §9.7.15.4)",
            position(*func, *pc)
        ))
    }

    /// The operation numbered `op` has completed: its shared-memory reads are over.
    fn reads_done(&mut self, op: usize) {
        if let Some(k) = self.reads.iter().position(|(id, _, _)| *id == op) {
            let (_, _, bytes) = self.reads.swap_remove(k);
            for b in bytes {
                self.shared_read[b as usize] -= 1;
            }
        }
    }

    /// Has thread `t` a `wgmma.mma_async` in flight (so its register
    /// accesses must be checked)?
    #[inline]
    pub fn in_flight(&self, t: usize) -> bool {
        self.threads.get(t).is_some_and(|s| s.in_flight > 0)
    }
}

/// Executes a wgmma instruction for thread `t`.
pub fn step(cta: &mut Cta, t: usize, ins: &Instruction) -> Result<Flow, RunError> {
    match ins.opcode {
        Opcode::WGMMA_FENCE => {
            let f = cta.threads[t].frames.last().unwrap();
            let snapshot = ((cta.threads[t].frames.len(), f.func), f.regs.to_vec());
            cta.wgmma.threads[t].fence = Some(snapshot);
            Ok(Flow::Next)
        }
        Opcode::WGMMA_COMMIT_GROUP => {
            let st = &mut cta.wgmma.threads[t];
            let group = std::mem::take(&mut st.uncommitted);
            st.groups.push_back(group);
            Ok(Flow::Next)
        }
        Opcode::WGMMA_WAIT_GROUP => {
            let n = match ins.operands.first() {
                Some(Operand::Imm(Imm::Int(i))) => i.value as usize,
                _ => return Err(cta.unsupported(t, "wgmma.wait_group without an integer constant")),
            };
            while cta.wgmma.threads[t].groups.len() > n {
                let group = cta.wgmma.threads[t].groups.pop_front().unwrap();
                for op in group {
                    complete(cta, t, op)?;
                }
            }
            Ok(Flow::Next)
        }
        _ => arrive(cta, t, ins),
    }
}

/// Writes a completed operation's results to thread `t`'s registers.
fn complete(cta: &mut Cta, t: usize, op: InFlight) -> Result<(), RunError> {
    let st = &mut cta.wgmma.threads[t];
    for &s in &op.d_slots {
        st.as_d[s] -= 1;
    }
    for &s in &op.a_slots {
        st.as_a[s] -= 1;
    }
    st.in_flight -= 1;
    // The first thread to see the operation complete ends its reads.
    cta.wgmma.reads_done(op.op);
    let st = &mut cta.wgmma.threads[t];
    if cta.threads[t].frames.len() != st.depth || cta.threads[t].frames.last().unwrap().func != st.func {
        return Err(cta.unsupported(t, "wgmma.wait_group in another function than its wgmma.mma_async"));
    }
    let frame = cta.threads[t].frames.last_mut().unwrap();
    let fence = st.fence.as_mut().filter(|(d, _)| *d == (st.depth, st.func));
    let mut fence = fence.map(|(_, v)| v);
    for (&s, &v) in op.d_slots.iter().zip(&op.results) {
        frame.regs[s] = v;
        // Written by the wgmma itself: no fence needed before the next one.
        if let Some(snap) = fence.as_deref_mut() {
            snap[s] = v;
        }
    }
    Ok(())
}

/// The register slots an operand names, in order (the values `read` gives).
fn slots(cta: &Cta, t: usize, op: &Operand, out: &mut Vec<usize>) {
    let f = cta.threads[t].frames.last().unwrap();
    let layout = &cta.p.funcs[f.func];
    match op {
        Operand::Reg(r) => {
            let base = layout.reg_base[r.reg.0 as usize] as usize;
            match (r.sel.and_then(|s| s.lane()), layout.f.reg(r.reg).vector) {
                (Some(l), Some(_)) => out.push(base + l as usize),
                (_, Some(n)) => out.extend(base..base + n as usize),
                _ => out.push(base),
            }
        }
        Operand::Vector(v) => v.iter().for_each(|o| slots(cta, t, o, out)),
        _ => {}
    }
}

fn reg_name(cta: &Cta, t: usize, slot: usize) -> String {
    let f = cta.threads[t].frames.last().unwrap();
    let layout = &cta.p.funcs[f.func];
    let k = layout.reg_base.partition_point(|&b| b as usize <= slot).saturating_sub(1);
    let r = &layout.f.regs[k];
    match r.vector {
        Some(_) => format!("{}[{}]", r.name, slot - layout.reg_base[k] as usize),
        None => r.name.to_string(),
    }
}

/// A thread arrives at `wgmma.mma_async`: the checks of the manual on its
/// registers, then it waits for its warpgroup.
fn arrive(cta: &mut Cta, t: usize, ins: &Instruction) -> Result<Flow, RunError> {
    let form = Form::parse(ins).map_err(|why| cta.unsupported(t, &format!("{}{}", instruction_head(ins), why.map(|w| format!(" ({w})")).unwrap_or_default())))?;
    let depth = cta.threads[t].frames.len();
    let (mut d_slots, mut a_slots) = (Vec::new(), Vec::new());
    slots(cta, t, &ins.operands[form::D], &mut d_slots);
    if form.a_in_registers {
        slots(cta, t, &ins.operands[form::A], &mut a_slots);
    }
    if d_slots.len() != form.d_registers() || (form.a_in_registers && a_slots.len() != 4) {
        return Err(cta.unsupported(t, &format!("{} with {} D and {} A registers (the form has {} and 4)", instruction_head(ins), d_slots.len(), a_slots.len(), form.d_registers())));
    }
    let head = instruction_head(ins);
    let st = &cta.wgmma.threads[t];
    let Some((fence_depth, snapshot)) = &st.fence else {
        return Err(cta.undefined(t, &format!("`{head}` without a `wgmma.fence` before it: the manual requires one before the first wgmma.mma_async of a warpgroup (§9.7.15.7.1)")));
    };
    if *fence_depth != (depth, cta.threads[t].frames.last().unwrap().func) {
        return Err(cta.undefined(t, &format!("`{head}` without a `wgmma.fence` before it in this function (§9.7.15.7.1)")));
    }
    // Registers of operations in flight.
    let acc = (form.shape.m, form.shape.n, form.shape.k, form.types.d);
    if st.in_flight > 0 {
        if st.depth != depth || st.func != cta.threads[t].frames.last().unwrap().func {
            return Err(cta.unsupported(t, "wgmma.mma_async in another function while an earlier one is in flight"));
        }
        let at = |s: usize| st.ops().find(|op| op.d_slots.contains(&s) || op.a_slots.contains(&s)).map(|op| cta.p.position(op.func, op.pc)).unwrap_or_default();
        if let Some(&s) = d_slots.iter().find(|&&s| st.is_a(s) || (st.is_d(s) && st.pending[s].0 != acc)) {
            let what = if st.is_a(s) { "an A-fragment register" } else { "an accumulator of another shape or type" };
            return Err(cta.undefined(t, &format!("`{head}` writes `{}`, {what} of the wgmma.mma_async at {} still in flight (§9.7.15.7.3)", reg_name(cta, t, s), at(s))));
        }
        if let Some(&s) = a_slots.iter().find(|&&s| st.is_d(s)) {
            return Err(cta.undefined(t, &format!("`{head}` reads `{}`, an accumulator of the wgmma.mma_async at {} still in flight (§9.7.15.7.3)", reg_name(cta, t, s), at(s))));
        }
    }
    // Accesses since the fence.
    let regs = &cta.threads[t].frames.last().unwrap().regs;
    if let Some(&s) = d_slots.iter().chain(&a_slots).find(|&&s| snapshot.get(s) != regs.get(s)) {
        return Err(cta.undefined(t, &format!("`{}` was written after the last `wgmma.fence` and before `{head}` uses it: a wgmma.fence must order the two (§9.7.15.7.1)", reg_name(cta, t, s))));
    }
    // Sources: D (pending values of chained accumulators), A or a-desc, b-desc, scale-d.
    let mut ops = Vec::with_capacity(4);
    for k in 0..4 {
        let mut vals = smallvec::SmallVec::<[Val; 6]>::new();
        match &ins.operands[k] {
            // A descriptor: the whole 64-bit register, whatever type the
            // ISA table gives the slot (`a-desc` is `any` where the two forms
            // of A share it).
            Operand::Reg(r) if (k == form::A || k == form::B_DESC) && r.sel.is_none() => vals.push(cta.reg(t, r.reg, 0)),
            o => cta.read_operand(t, ins, k, o, &mut vals)?,
        }
        ops.push(vals.into_vec());
    }
    let st = &cta.wgmma.threads[t];
    if st.in_flight > 0 {
        for (i, &s) in d_slots.iter().enumerate() {
            // The newest operation in flight writing this register.
            if st.is_d(s) {
                ops[form::D][i] = st.pending[s].1;
            }
        }
    }
    for k in [form::B_DESC, form::SCALE_D].into_iter().chain((!form.a_in_registers).then_some(form::A)) {
        let q = ops[k].first().map_or(Quality::Exact, |v| v.quality);
        cta.note_dependence(t, q, if k == form::SCALE_D { "scale-d" } else { "wgmma matrix descriptor" });
    }
    let frame = cta.threads[t].frames.last().unwrap();
    let (func, pc) = (frame.func, frame.pc);
    cta.threads[t].wait = Wait::Warp { func, pc, mask: u32::MAX, srcs: LaneInputs { ops }.encode() };
    Ok(Flow::Block)
}

/// The `wgmma.mma_async` thread `t` waits at.
fn waiting_at<'a>(cta: &'a Cta, t: usize) -> Option<(usize, usize, &'a Instruction)> {
    let Wait::Warp { func, pc, .. } = &cta.threads[t].wait else { return None };
    match cta.p.funcs[*func].f.body.as_ref()?.get(*pc) {
        Some(Stmt::Instr(ins)) if ins.opcode == Opcode::WGMMA_MMA_ASYNC => Some((*func, *pc, ins)),
        _ => None,
    }
}

/// Completes every `wgmma.mma_async` all of whose warpgroup waits at it.
pub fn release(cta: &mut Cta, global: &mut Global) -> Result<bool, RunError> {
    let mut released = false;
    let n = cta.threads.len();
    for wg in 0..n.div_ceil(WARPGROUP) {
        let group: Vec<usize> = (0..n).filter(|&k| cta.threads[k].linear as usize / WARPGROUP == wg && cta.threads[k].wait != Wait::Exited).collect();
        let Some((func, pc, ins)) = group.iter().find_map(|&k| waiting_at(cta, k)) else { continue };
        let here = |k: usize| matches!(&cta.threads[k].wait, Wait::Warp { func: f, pc: p, .. } if *f == func && *p == pc);
        if !group.iter().all(|&k| here(k)) {
            continue;
        }
        let ins = ins.clone();
        let first = group[0];
        if group.len() != WARPGROUP {
            return Err(cta.undefined(first, &format!("`{}` is executed by {} threads of warpgroup {wg} only: `.sync.aligned` wgmma needs all 128 threads of its four warps (the others have exited or are not in the launch)", instruction_head(&ins), group.len())));
        }
        let mut by_rank = [0usize; WARPGROUP];
        for &k in &group {
            by_rank[cta.threads[k].linear as usize % WARPGROUP] = k;
        }
        let inputs: Vec<LaneInputs> = by_rank
            .iter()
            .map(|&k| match &cta.threads[k].wait {
                Wait::Warp { srcs, .. } => LaneInputs::decode(srcs),
                _ => unreachable!(),
            })
            .collect();
        let form = Form::parse(&ins).map_err(|_| cta.unsupported(first, &instruction_head(&ins)))?;
        let mut read_bytes = Vec::new();
        let results = compute(cta, global, &ins, &form, &inputs, &by_rank, &mut read_bytes)?;
        let op = cta.wgmma.next_op;
        cta.wgmma.next_op += 1;
        read_bytes.sort_unstable();
        read_bytes.dedup();
        if !read_bytes.is_empty() {
            let w = &mut cta.wgmma;
            let top = *read_bytes.last().unwrap() as usize + 1;
            if w.shared_read.len() < top {
                w.shared_read.resize(top, 0);
            }
            for &b in &read_bytes {
                w.shared_read[b as usize] += 1;
            }
            w.reads.push((op, (func, pc), read_bytes));
        }
        let acc = (form.shape.m, form.shape.n, form.shape.k, form.types.d);
        for (rank, regs) in results.into_iter().enumerate() {
            let k = by_rank[rank];
            let (mut d_slots, mut a_slots) = (Vec::new(), Vec::new());
            slots(cta, k, &ins.operands[form::D], &mut d_slots);
            if form.a_in_registers {
                slots(cta, k, &ins.operands[form::A], &mut a_slots);
            }
            let depth = cta.threads[k].frames.len();
            let nslots = cta.threads[k].frames.last().unwrap().regs.len();
            let st = &mut cta.wgmma.threads[k];
            if st.as_d.len() < nslots {
                st.as_d.resize(nslots, 0);
                st.as_a.resize(nslots, 0);
                st.pending.resize(nslots, ((0, 0, 0, Elem::F32), Val::exact(0)));
            }
            for (&s, &v) in d_slots.iter().zip(&regs) {
                st.as_d[s] += 1;
                st.pending[s] = (acc, v);
            }
            for &s in &a_slots {
                st.as_a[s] += 1;
            }
            st.depth = depth;
            st.func = func;
            st.in_flight += 1;
            st.uncommitted.push(InFlight { op, func, pc, d_slots, a_slots, results: regs });
            cta.threads[k].wait = Wait::Running;
            cta.threads[k].resume = Some(Default::default());
        }
        released = true;
    }
    Ok(released)
}

/// The sign bit of a floating-point element type.
fn sign_bit(e: Elem) -> u64 {
    1 << (e.bits() - 1)
}

/// `D = A * B (+ D)` for the warpgroup: each rank's D registers.
fn compute(cta: &Cta, global: &Global, ins: &Instruction, form: &Form, inputs: &[LaneInputs], by_rank: &[usize; WARPGROUP], read_bytes: &mut Vec<u64>) -> Result<Vec<Vec<Val>>, RunError> {
    let s = form.shape;
    let ty = form.types;
    let t0 = by_rank[0];
    let head = instruction_head(ins);
    // Descriptors must agree across the warpgroup.
    let descriptor = |k: usize, name: &str| -> Result<Descriptor, RunError> {
        let bits = inputs[0].ops[k][0].bits as u64;
        if let Some(r) = (1..WARPGROUP).find(|&r| inputs[r].ops[k][0].bits as u64 != bits) {
            return Err(cta.undefined(by_rank[r], &format!("`{head}`: the {name} differs between threads of the warpgroup ({:#x} in rank 0, {:#x} here); it must be the same in all warps (§9.7.15.5.2)", bits, inputs[r].ops[k][0].bits)));
        }
        let d = Descriptor::decode(bits);
        if d.base_offset != 0 && d.swizzle != layout::Swizzle::None {
            return Err(cta.unsupported(t0, &format!("{head} (matrix descriptor with base offset {})", d.base_offset)));
        }
        Ok(d)
    };
    let mut last: Option<(u64, u64, Quality)> = None;
    let mut read = |d: &Descriptor, elem: Elem, mn_major: bool, r: u32, k: u32| -> Result<(u64, Quality), RunError> {
        let (addr, bit) = d.element_address(elem.bits(), mn_major, r, k);
        let len = (elem.bits() as usize / 8).max(1);
        // `.b1`: eight elements per byte, read once.
        let (v, q) = match last {
            Some((a, v, q)) if a == addr && elem == Elem::B1 => (v, q),
            _ => {
                let mut buf = [0u8; 4];
                let q = cta.mem_read(t0, global, Space::Shared, addr, &mut buf[..len])?;
                read_bytes.extend(addr..addr + len as u64);
                let v = u32::from_le_bytes(buf) as u64;
                last = Some((addr, v, q));
                (v, q)
            }
        };
        Ok((if elem == Elem::B1 { (v >> bit) & 1 } else { v }, q))
    };
    // A: 64 x K.
    let mut a = Matrix::new(s.m, s.k);
    if form.a_in_registers {
        let len = layout::a_len(s.k).unwrap();
        for (rank, input) in inputs.iter().enumerate() {
            for i in 0..len {
                let (r, c) = layout::a_coord(s.k, rank as u32, i).unwrap();
                let v = element(&input.ops[form::A], ty.a, i).ok_or_else(|| cta.unsupported(by_rank[rank], &format!("{head} (A fragment with too few registers)")))?;
                a.set(r, c, v);
            }
        }
    } else {
        let d = descriptor(form::A, "A matrix descriptor")?;
        for r in 0..s.m {
            for k in 0..s.k {
                a.set(r, k, read(&d, ty.a, form.trans_a, r, k)?);
            }
        }
    }
    // B: K x N, stored as N rows of K (K-major) unless transposed.
    let d = descriptor(form::B_DESC, "B matrix descriptor")?;
    let mut b = Matrix::new(s.k, s.n);
    for n in 0..s.n {
        for k in 0..s.k {
            b.set(k, n, read(&d, ty.b, form.trans_b, n, k)?);
        }
    }
    // imm-scale = -1: every element negated.
    for (m, neg, e) in [(&mut a, form.negate_a, ty.a), (&mut b, form.negate_b, ty.b)] {
        if neg {
            m.data.iter_mut().for_each(|(v, _)| *v ^= sign_bit(e));
        }
    }
    // C: the D fragments, or nothing where the owner's scale-d is false
    // (-0 for floating point: adding it changes no sum, not even a -0).
    let none = if ty.d.is_float() { sign_bit(ty.d) } else { 0 };
    let mut c = Matrix::new(s.m, s.n);
    for (rank, input) in inputs.iter().enumerate() {
        let scale = input.ops[form::SCALE_D][0];
        for i in 0..s.n / 2 {
            let (r, col) = layout::d_coord(rank as u32, i);
            let mut v = if scale.bits & 1 == 1 { element(&input.ops[form::D], ty.d, i).unwrap_or((0, Quality::Unspecified)) } else { (none, Quality::Exact) };
            if scale.quality != Quality::Exact {
                v.1 = Quality::Unspecified;
            }
            c.set(r, col, v);
        }
    }
    let d = if ty.a.is_float() {
        multiply_float(&a, &b, &c, form)
    } else if ty.a == Elem::B1 {
        multiply_bits(&a, &b, &c)
    } else {
        mma::multiply(&a, &b, &c, ty, form.satfinite, Round::Nearest, form.bit_op)
    };
    Ok((0..WARPGROUP as u32)
        .map(|rank| {
            let elems: Vec<(u64, Quality)> = (0..s.n / 2).map(|i| {
                let (r, col) = layout::d_coord(rank, i);
                d.get(r, col)
            }).collect();
            pack(&elems, ty.d)
        })
        .collect())
}

/// The floating-point `A * B + C` of wgmma: exact sums rounded once, exact
/// when every order of accumulation at the guaranteed precision agrees.
fn multiply_float(a: &Matrix, b: &Matrix, c: &Matrix, form: &Form) -> Matrix {
    let ty = form.types;
    let acc = Accumulation { acc: if ty.d == Elem::F16 { exact::F16 } else { exact::F32 }, dest: mma::format_of(ty.d), round: Round::Nearest };
    // .tf32: the low 13 bits are truncated before multiplying (§9.7.15.5.2).
    let clean = |e: Elem, (v, q): (u64, Quality)| if e == Elem::Tf32 { (v & !0x1fff, q) } else { (v, q) };
    let mut d = Matrix::new(a.rows, b.cols);
    let mut products = Vec::with_capacity(a.cols as usize);
    // A row or column with an unspecified element gives unspecified
    // results (as `exact::dot` would say), without summing.
    let unknown = |v: (u64, Quality)| v.1 == Quality::Unspecified;
    let rows_unknown: Vec<bool> = (0..a.rows).map(|i| (0..a.cols).any(|x| unknown(a.get(i, x)))).collect();
    let cols_unknown: Vec<bool> = (0..b.cols).map(|j| (0..b.rows).any(|x| unknown(b.get(x, j)))).collect();
    for i in 0..a.rows {
        for j in 0..b.cols {
            if rows_unknown[i as usize] || cols_unknown[j as usize] {
                d.set(i, j, (0, Quality::Unspecified));
                continue;
            }
            products.clear();
            products.extend((0..a.cols).map(|x| (mma::input(ty.a, clean(ty.a, a.get(i, x))), mma::input(ty.b, clean(ty.b, b.get(x, j))))));
            let out = exact::dot(&products, mma::input(ty.d, c.get(i, j)), acc);
            d.set(i, j, (out.bits as u64, out.quality));
        }
    }
    d
}

/// `.b1` with `.and.popc`: `C + popc(row of A & column of B)`, wrapping in
/// 32 bits (as `mma::multiply` computes it, on 64-bit words: K is 256).
fn multiply_bits(a: &Matrix, b: &Matrix, c: &Matrix) -> Matrix {
    let words = (a.cols as usize).div_ceil(64);
    let pack = |get: &dyn Fn(u32) -> (u64, Quality)| {
        let mut w = vec![0u64; words];
        let mut q = Quality::Exact;
        for x in 0..a.cols {
            let (v, vq) = get(x);
            w[x as usize / 64] |= (v & 1) << (x % 64);
            q = super::combine(q, vq);
        }
        (w, q)
    };
    let rows: Vec<_> = (0..a.rows).map(|i| pack(&|x| a.get(i, x))).collect();
    let cols: Vec<_> = (0..b.cols).map(|j| pack(&|x| b.get(x, j))).collect();
    let mut d = Matrix::new(a.rows, b.cols);
    for (i, (ra, qa)) in rows.iter().enumerate() {
        for (j, (cb, qb)) in cols.iter().enumerate() {
            let (cv, cq) = c.get(i as u32, j as u32);
            let popc: u32 = ra.iter().zip(cb).map(|(x, y)| (x & y).count_ones()).sum();
            let v = (cv as u32 as i32).wrapping_add(popc as i32);
            let q = super::combine(cq, super::combine(*qa, *qb));
            d.set(i as u32, j as u32, (v as u32 as u64, if q == Quality::Exact { q } else { Quality::Unspecified }));
        }
    }
    d
}

/// Checks thread `t`'s next instruction against its operations in flight.
pub fn check_access(cta: &Cta, t: usize, ins: &Instruction) -> Result<(), RunError> {
    if handles(ins.opcode) {
        return Ok(());
    }
    let st = &cta.wgmma.threads[t];
    let f = cta.threads[t].frames.last().unwrap();
    if st.in_flight == 0 || cta.threads[t].frames.len() != st.depth || f.func != st.func {
        return Ok(());
    }
    let layout = &cta.p.funcs[f.func];
    let mut hit = None;
    ins.for_each_reg(|r, access| {
        if hit.is_some() {
            return;
        }
        let base = layout.reg_base[r.0 as usize] as usize;
        let range = match (access.sel.and_then(|s| s.lane()), layout.f.reg(r).vector) {
            (Some(l), Some(_)) => base + l as usize..base + l as usize + 1,
            (_, Some(n)) => base..base + n as usize,
            _ => base..base + 1,
        };
        if let Some(s) = range.clone().find(|&s| st.busy(s)) {
            hit = Some((s, access.write));
        }
    });
    let Some((s, write)) = hit else { return Ok(()) };
    let op = st.ops().find(|op| op.d_slots.contains(&s) || op.a_slots.contains(&s)).unwrap();
    let what = if op.d_slots.contains(&s) { "an accumulator" } else { "an A-fragment register" };
    Err(cta.undefined(
        t,
        &format!(
            "`{}` {} `{}`, {what} of the wgmma.mma_async at {} still in flight: accessing it before the `wgmma.wait_group` that completes it is undefined (§9.7.15.7.3)",
            instruction_head(ins),
            if write { "writes" } else { "reads" },
            reg_name(cta, t, s),
            cta.p.position(op.func, op.pc)
        ),
    ))
}

/// When nothing can go on: a warpgroup some of whose threads wait at a
/// `wgmma.mma_async` while others wait elsewhere breaks `.aligned`.
pub fn diagnose_stuck(cta: &Cta) -> Option<RunError> {
    let n = cta.threads.len();
    for t in 0..n {
        let Some((func, pc, ins)) = waiting_at(cta, t) else { continue };
        let wg = cta.threads[t].linear as usize / WARPGROUP;
        let elsewhere = (0..n).filter(|&k| cta.threads[k].linear as usize / WARPGROUP == wg && cta.threads[k].wait != Wait::Exited).find(|&k| !matches!(&cta.threads[k].wait, Wait::Warp { func: f, pc: p, .. } if *f == func && *p == pc));
        if let Some(k) = elsewhere {
            return Some(cta.undefined(t, &format!("threads of warpgroup {wg} wait at `{}` while thread {} waits elsewhere: `.aligned` requires all 128 threads to execute it together", instruction_head(ins), cta.thread_name(k))));
        }
    }
    None
}
