//! Asynchronous copies (PTX ISA 8.7 §9.7.9.25): `cp.async` with its
//! commit/wait groups, the bulk copies `cp.async.bulk` (global → shared with
//! mbarrier complete-tx, shared → global with bulk async-groups) and their
//! commit/wait, the prefetches (no-ops), `createpolicy` (an unspecified
//! opaque value: cache hints change nothing here), and the checks that nobody touches
//! the bytes of a copy before it completes.
//!
//! When a copy is performed: the interpreter performs a copy as late as the
//! program lets it — when the issuing thread's `cp.async.wait_group` /
//! `cp.async.wait_all` / `cp.async.bulk.wait_group` covers it, or, for a copy
//! an mbarrier tracks (`cp.async.mbarrier.arrive`, `.mbarrier::complete_tx`),
//! when a thread next tests that mbarrier. Until then the copy is *in
//! flight*: §9.7.9.25.1 says that reading the destination or modifying the
//! source before the copy completes is undefined, and so is a second copy
//! to the same bytes without synchronization (§9.7.9.25.3.2); every such
//! access (`ld`, `st`, `atom`, another copy, any thread) stops the run with
//! [`RunError::Undefined`] naming the copy. Performing late is one
//! execution the hardware may show; the checks make sure the program's
//! result does not depend on that choice.
//!
//! A thread that exits with copies outstanding: its `cp.async` copies that no
//! mbarrier tracks never complete (the destination bytes stay in flight, so
//! a later access by another thread is reported — no synchronization could
//! have made them visible); bulk copies to global memory are performed when
//! the CTA ends (the grid's completion makes them visible to the host).
//!
//! The tensor copies (`cp.async.bulk.tensor` ...) are issued and performed
//! by [`super::tensor`] and are in flight here like the others (their
//! elements decide which bytes they touch).
//!
//! The state of the mbarriers is in [`super::mbarrier`].

use super::exec::{instruction_head, Cta, Flow};
use super::memory::{Global, Space};
use super::RunError;
use crate::eval::{Quality, Val};
use crate::ir::{Instruction, Operand};
use crate::isa::{Mod, Opcode, ScalarType, StateSpace};
use smallvec::SmallVec;
use std::collections::{BTreeMap, VecDeque};

/// A copy's number (in issue order within the CTA).
pub type CopyId = usize;

/// One copy in flight.
#[derive(Clone, Debug)]
pub struct AsyncCopy {
    /// The issuing thread and where it issued the copy (function, statement).
    pub thread: usize,
    pub func: usize,
    pub pc: usize,
    pub what: &'static str,
    pub dst: (Space, u64),
    pub src: (Space, u64),
    /// Bytes written to `dst`; the first `src_len` come from `src`, the rest are zero.
    pub len: usize,
    pub src_len: usize,
    /// The mbarrier (shared offset) that gets complete-tx of `len` bytes.
    pub mbar: Option<u64>,
    /// A tensor copy ([`super::tensor`]): its elements; `dst`/`src` and
    /// the lengths are then the spans of the bytes it touches.
    pub tensor: Option<Box<super::tensor::TensorCopy>>,
}

/// Per-thread groups (§9.7.9.25.1.1).
#[derive(Default, Clone)]
pub(super) struct ThreadGroups {
    uncommitted: Vec<CopyId>,
    groups: VecDeque<Vec<CopyId>>,
    pub(super) bulk_uncommitted: Vec<CopyId>,
    bulk_groups: VecDeque<Vec<CopyId>>,
}

/// The asynchronous work of a CTA.
pub struct AsyncState {
    /// The copies in flight, by number (a completed copy is removed).
    copies: BTreeMap<CopyId, AsyncCopy>,
    next_id: CopyId,
    pub(super) threads: Vec<ThreadGroups>,
    /// For each byte of shared memory, how many copies in flight write it.
    shared_dst: Vec<u16>,
    pub mbarriers: super::mbarrier::Mbarriers,
    /// Each thread's place at the cluster barrier ([`super::cluster`]).
    pub cluster: Vec<super::cluster::ClusterState>,
}

impl AsyncState {
    pub fn new(threads: usize, shared_size: usize) -> AsyncState {
        AsyncState { copies: BTreeMap::new(), next_id: 0, threads: (0..threads).map(|_| ThreadGroups::default()).collect(), shared_dst: vec![0; shared_size], mbarriers: super::mbarrier::Mbarriers::new(threads), cluster: vec![Default::default(); threads] }
    }

    /// Must memory accesses be checked against copies or mbarrier objects?
    #[inline]
    pub fn watching(&self) -> bool {
        !self.copies.is_empty() || !self.mbarriers.objects.is_empty()
    }

    /// The copies of thread `t` not yet complete, in issue order (and its
    /// group lists forget the completed ones: a group whose copies have all
    /// completed is no longer pending).
    pub fn outstanding(&mut self, t: usize) -> Vec<CopyId> {
        self.prune(t);
        let g = &self.threads[t];
        g.groups.iter().flatten().chain(&g.uncommitted).copied().collect()
    }

    fn prune(&mut self, t: usize) {
        let copies = &self.copies;
        let g = &mut self.threads[t];
        g.uncommitted.retain(|id| copies.contains_key(id));
        g.bulk_uncommitted.retain(|id| copies.contains_key(id));
        for groups in [&mut g.groups, &mut g.bulk_groups] {
            for group in groups.iter_mut() {
                group.retain(|id| copies.contains_key(id));
            }
            // Only the oldest complete groups go: `wait_group N` counts the
            // N most recent groups whether or not they are complete (an empty
            // `commit_group` makes a group too), so a complete group among
            // them must keep its place.
            while groups.front().is_some_and(|group| group.is_empty()) {
                groups.pop_front();
            }
        }
    }

    /// The copy in flight an access conflicts with, if any: reading bytes a
    /// copy writes, writing bytes a copy reads or writes.
    fn conflict(&self, sp: Space, a: u64, len: usize, write: bool) -> Option<&AsyncCopy> {
        if self.copies.is_empty() {
            return None;
        }
        if sp == Space::Shared {
            let hit = (a as usize..(a as usize).saturating_add(len)).any(|k| self.shared_dst.get(k).is_some_and(|&n| n > 0));
            if !hit && !write {
                return None;
            }
        } else if sp != Space::Global {
            return None;
        }
        let overlaps = |(s, b): (Space, u64), n: usize| s == sp && n > 0 && a < b.wrapping_add(n as u64) && b < a.wrapping_add(len as u64);
        // A tensor copy's spans have gaps: its elements decide.
        let touches = |c: &AsyncCopy| c.tensor.as_ref().is_none_or(|tc| tc.touches(sp, a, len));
        self.copies.values().find(|c| (overlaps(c.dst, c.len) || (write && overlaps(c.src, c.src_len))) && touches(c))
    }

    fn mark(&mut self, c: &AsyncCopy, delta: i32) {
        if let (Some(tc), Space::Shared) = (&c.tensor, c.dst.0) {
            for &(s, e) in &tc.tile.shared_runs {
                for k in s as usize..e as usize {
                    if let Some(n) = self.shared_dst.get_mut(k) {
                        *n = (*n as i32 + delta).max(0) as u16;
                    }
                }
            }
        } else if c.dst.0 == Space::Shared {
            for k in c.dst.1 as usize..c.dst.1 as usize + c.len {
                if let Some(n) = self.shared_dst.get_mut(k) {
                    *n = (*n as i32 + delta).max(0) as u16;
                }
            }
        }
    }

    pub(super) fn add(&mut self, c: AsyncCopy) -> CopyId {
        self.mark(&c, 1);
        let id = self.next_id;
        self.next_id += 1;
        self.copies.insert(id, c);
        id
    }

    /// Takes a copy out of flight (to perform it).
    fn take(&mut self, id: CopyId) -> Option<AsyncCopy> {
        let c = self.copies.remove(&id)?;
        self.mark(&c, -1);
        Some(c)
    }

    /// The bulk copies in flight that complete-tx on the mbarrier at `mbar`.
    pub fn bulk_for(&self, mbar: u64) -> Vec<CopyId> {
        self.copies.iter().filter(|(_, c)| c.mbar == Some(mbar)).map(|(&k, _)| k).collect()
    }
}

/// Does `op` belong to this module (or to [`super::mbarrier`])?
pub fn handles(op: Opcode) -> bool {
    [
        Opcode::CP_ASYNC,
        Opcode::CP_ASYNC_COMMIT_GROUP,
        Opcode::CP_ASYNC_WAIT_GROUP,
        Opcode::CP_ASYNC_WAIT_ALL,
        Opcode::CP_ASYNC_BULK,
        Opcode::CP_ASYNC_BULK_COMMIT_GROUP,
        Opcode::CP_ASYNC_BULK_WAIT_GROUP,
        Opcode::CP_ASYNC_BULK_PREFETCH,
        Opcode::CREATEPOLICY,
    ]
    .contains(&op)
        || super::tensor::handles(op)
        || super::mbarrier::handles(op)
        || super::cluster::handles(op)
}

/// Executes an asynchronous-copy or mbarrier instruction; `None` for other opcodes.
pub fn step(cta: &mut Cta, t: usize, ins: &Instruction, global: &mut Global) -> Result<Option<Flow>, RunError> {
    let op = ins.opcode;
    if !handles(op) {
        return Ok(None);
    }
    if super::tensor::handles(op) {
        return super::tensor::step(cta, t, ins, global).map(Some);
    }
    if super::mbarrier::handles(op) {
        return cta.mbarrier_op(t, ins, global).map(Some);
    }
    if super::cluster::handles(op) {
        return cta.cluster_op(t, ins).map(Some);
    }
    let flow = if op == Opcode::CP_ASYNC {
        cta.cp_async(t, ins, global)?
    } else if op == Opcode::CP_ASYNC_COMMIT_GROUP {
        let g = &mut cta.asyncs.threads[t];
        let group = std::mem::take(&mut g.uncommitted);
        g.groups.push_back(group);
        Flow::Next
    } else if op == Opcode::CP_ASYNC_WAIT_ALL {
        let g = &mut cta.asyncs.threads[t];
        let group = std::mem::take(&mut g.uncommitted);
        g.groups.push_back(group);
        cta.wait_groups(t, 0, false, global)?;
        Flow::Next
    } else if op == Opcode::CP_ASYNC_WAIT_GROUP || op == Opcode::CP_ASYNC_BULK_WAIT_GROUP {
        let n = cta.immediate(t, ins, 0)?;
        cta.wait_groups(t, n as usize, op == Opcode::CP_ASYNC_BULK_WAIT_GROUP, global)?;
        Flow::Next
    } else if op == Opcode::CP_ASYNC_BULK_COMMIT_GROUP {
        let g = &mut cta.asyncs.threads[t];
        let group = std::mem::take(&mut g.bulk_uncommitted);
        g.bulk_groups.push_back(group);
        Flow::Next
    } else if op == Opcode::CP_ASYNC_BULK {
        cta.cp_async_bulk(t, ins, global)?
    } else if op == Opcode::CREATEPOLICY {
        // An opaque 64-bit cache policy (§9.7.9.18), only ever a hint to
        // the copies and loads that take it: its bits are left unspecified.
        cta.write_results(t, ins, &[Val::unspecified()])?;
        Flow::Next
    } else {
        // Prefetches are hints (§9.7.9.25.4.3, §9.7.9.25.5.4).
        Flow::Next
    };
    Ok(Some(flow))
}

impl Cta<'_, '_> {
    /// An integer operand that must be exactly known.
    pub(super) fn immediate(&mut self, t: usize, ins: &Instruction, k: usize) -> Result<u64, RunError> {
        let mut v: SmallVec<[Val; 6]> = SmallVec::new();
        self.read(t, ins, k, &ins.operands[k], &mut v)?;
        let x = v.first().copied().unwrap_or(Val::unspecified());
        // The message is made only for the note (most operands are exact).
        if x.quality != Quality::Exact {
            self.note_dependence(t, x.quality, &format!("operand {} of `{}`", k + 1, instruction_head(ins)));
        }
        Ok(x.bits as u64)
    }

    /// The `k`-th state space an instruction names (`.dst` then `.src`).
    fn nth_space(ins: &Instruction, k: usize) -> StateSpace {
        ins.spaces().get(k).copied().unwrap_or(StateSpace::Generic)
    }

    /// Reports an access that races with a copy in flight.
    pub(super) fn check_async_access(&self, t: usize, sp: Space, a: u64, len: usize, write: bool) -> Result<(), RunError> {
        if let Some(c) = self.asyncs.conflict(sp, a, len, write) {
            let space = if sp == Space::Shared { "shared" } else { "global" };
            let verb = if write { "writes" } else { "reads" };
            let role = if c.dst.0 == sp && a < c.dst.1 + c.len as u64 && c.dst.1 < a + len as u64 { "destination" } else { "source" };
            return Err(self.undefined(
                t,
                &format!(
                    "{verb} {len} byte(s) of {space} memory at 0x{a:x}, the {role} of `{}` issued by thread {} at {} that has not completed (no wait or mbarrier completion covers it yet)",
                    c.what,
                    self.thread_name(c.thread),
                    self.p.position(c.func, c.pc)
                ),
            ));
        }
        self.check_mbarrier_bytes(t, sp, a, len)
    }

    /// `cp.async` (§9.7.9.25.3.1).
    fn cp_async(&mut self, t: usize, ins: &Instruction, global: &mut Global) -> Result<Flow, RunError> {
        let (dsp, dst) = self.address(t, ins, &ins.operands[0], Self::nth_space(ins, 0))?;
        let (ssp, src) = self.address(t, ins, &ins.operands[1], Self::nth_space(ins, 1))?;
        let len = self.immediate(t, ins, 2)? as usize;
        if ![4, 8, 16].contains(&len) || (ins.has(Mod::CG) && len != 16) {
            return Err(self.unsupported(t, &format!("{} with cp-size {len}", instruction_head(ins))));
        }
        // After cp-size: {src-size | ignore-src}{, cache-policy}.
        let mut extra: Vec<&Operand> = ins.operands[3..].iter().collect();
        if ins.has(Mod::L2_CACHE_HINT) {
            extra.pop();
        }
        let mut src_len = len;
        if let Some(o) = extra.first() {
            let is_pred = matches!(o, Operand::Reg(r) if self.reg_width(t, r.reg).0 == ScalarType::Pred);
            let mut v: SmallVec<[Val; 6]> = SmallVec::new();
            self.read(t, ins, 3, o, &mut v)?;
            let x = v.first().copied().unwrap_or(Val::unspecified());
            self.note_dependence(t, x.quality, if is_pred { "ignore-src predicate" } else { "src-size" });
            if is_pred {
                if x.bits & 1 == 1 {
                    src_len = 0;
                }
            } else {
                let n = x.bits as u32 as usize;
                if n > len {
                    return Err(self.undefined(t, &format!("cp.async with src-size {n} greater than cp-size {len}")));
                }
                src_len = n;
            }
        }
        if dsp != Space::Shared || ssp != Space::Global {
            return Err(self.undefined(t, "cp.async destination not in shared memory or source not in global memory"));
        }
        self.check_copy_operands(t, "cp.async", (dsp, dst), (ssp, src), len, src_len, len as u64, global)?;
        let (func, pc) = self.position_of(t);
        let id = self.asyncs.add(AsyncCopy { thread: t, func, pc, what: "cp.async", dst: (dsp, dst), src: (ssp, src), len, src_len, mbar: None, tensor: None });
        self.asyncs.threads[t].uncommitted.push(id);
        Ok(Flow::Next)
    }

    /// `cp.async.bulk` (§9.7.9.25.4.1) for a cluster of one CTA.
    fn cp_async_bulk(&mut self, t: usize, ins: &Instruction, global: &mut Global) -> Result<Flow, RunError> {
        let (dsp, dst) = self.address(t, ins, &ins.operands[0], Self::nth_space(ins, 0))?;
        let (ssp, src) = self.address(t, ins, &ins.operands[1], Self::nth_space(ins, 1))?;
        let len = self.immediate(t, ins, 2)? as u32 as usize;
        if ins.has(Mod::CP_MASK) || ins.has(Mod::MULTICAST_CLUSTER) {
            return Err(self.unsupported(t, &instruction_head(ins)));
        }
        let to_shared = dsp == Space::Shared;
        if to_shared && ssp == Space::Shared {
            // "the destination must be in the shared memory of a different CTA of the cluster"
            return Err(self.undefined(t, "cp.async.bulk from shared::cta to shared::cluster needs another CTA in the cluster (the interpreter runs clusters of one CTA)"));
        }
        if !((to_shared && ssp == Space::Global) || (dsp == Space::Global && ssp == Space::Shared)) {
            return Err(self.undefined(t, "cp.async.bulk between these state spaces"));
        }
        if len % 16 != 0 {
            return Err(self.undefined(t, &format!("cp.async.bulk of {len} bytes, not a multiple of 16")));
        }
        self.check_copy_operands(t, "cp.async.bulk", (dsp, dst), (ssp, src), len, len, 16, global)?;
        let mbar = if to_shared {
            let (msp, m) = self.address(t, ins, &ins.operands[3], StateSpace::Shared)?;
            self.mbarrier_at(t, msp, m)?;
            Some(m)
        } else {
            None
        };
        let (func, pc) = self.position_of(t);
        let id = self.asyncs.add(AsyncCopy { thread: t, func, pc, what: "cp.async.bulk", dst: (dsp, dst), src: (ssp, src), len, src_len: len, mbar, tensor: None });
        if mbar.is_none() {
            self.asyncs.threads[t].bulk_uncommitted.push(id);
        }
        Ok(Flow::Next)
    }

    pub(super) fn position_of(&self, t: usize) -> (usize, usize) {
        let f = self.threads[t].frames.last().unwrap();
        (f.func, f.pc)
    }

    /// Alignment, bounds and races of a copy's operands at issue.
    #[allow(clippy::too_many_arguments)]
    fn check_copy_operands(&self, t: usize, what: &str, dst: (Space, u64), src: (Space, u64), len: usize, src_len: usize, align: u64, global: &Global) -> Result<(), RunError> {
        for (name, (sp, a)) in [("destination", dst), ("source", src)] {
            if a % align != 0 {
                return Err(self.undefined(t, &format!("{what} {name} address 0x{a:x} is not a multiple of {align}")));
            }
            let _ = sp;
        }
        // Bounds: the whole destination, the bytes read of the source.
        let mut buf = vec![0u8; len];
        self.mem_read_raw(t, global, dst.0, dst.1, &mut buf)?;
        buf.truncate(src_len);
        self.mem_read_raw(t, global, src.0, src.1, &mut buf)?;
        self.check_async_access(t, dst.0, dst.1, len, true)?;
        if src_len > 0 {
            self.check_async_access(t, src.0, src.1, src_len, false)?;
        }
        Ok(())
    }

    /// A bounds-checked read with no race check.
    fn mem_read_raw(&self, t: usize, global: &Global, sp: Space, a: u64, out: &mut [u8]) -> Result<Quality, RunError> {
        if out.is_empty() {
            return Ok(Quality::Exact);
        }
        let r = match sp {
            Space::Global => global.read(a, out),
            Space::Shared => self.shared.read(a, out),
            _ => return Err(self.undefined(t, "asynchronous copy outside shared and global memory")),
        };
        r.map_err(|f| self.fault(t, f))
    }

    /// Waits for all but the newest `n` committed groups of thread `t`
    /// (`bulk`: the bulk async-groups).
    fn wait_groups(&mut self, t: usize, n: usize, bulk: bool, global: &mut Global) -> Result<(), RunError> {
        self.asyncs.prune(t);
        loop {
            let g = &mut self.asyncs.threads[t];
            let groups = if bulk { &mut g.bulk_groups } else { &mut g.groups };
            if groups.len() <= n {
                break;
            }
            let oldest = groups.pop_front().unwrap_or_default();
            for id in oldest {
                self.perform(t, id, global)?;
            }
        }
        Ok(())
    }

    /// Performs copy `id` (if still in flight): reads the source, writes the
    /// destination, and signals complete-tx to its mbarrier. `t` is the
    /// thread whose instruction caused it (for messages).
    pub(super) fn perform(&mut self, t: usize, id: CopyId, global: &mut Global) -> Result<(), RunError> {
        let Some(c) = self.asyncs.take(id) else { return Ok(()) };
        if c.tensor.is_some() {
            return self.perform_tensor(t, c, global);
        }
        let mut bytes = vec![0u8; c.len];
        let mut quality = vec![Quality::Exact; c.len];
        for k in 0..c.src_len {
            let a = c.src.1 + k as u64;
            quality[k] = match c.src.0 {
                Space::Global => global.read(a, &mut bytes[k..k + 1]),
                _ => self.shared.read(a, &mut bytes[k..k + 1]),
            }
            .map_err(|f| self.fault(t, f))?;
        }
        match c.dst.0 {
            Space::Shared => {
                self.check_wgmma_reads(t, c.dst.1, c.len, &format!("`{}` (completing now)", c.what))?;
                self.shared.write_bytes(c.dst.1, &bytes, &quality).map_err(|f| self.fault(t, f))?
            }
            _ => {
                for k in 0..c.len {
                    global.write(c.dst.1 + k as u64, &bytes[k..k + 1], quality[k]).map_err(|f| self.fault(t, f))?;
                }
            }
        }
        self.asyncs.mbarriers.epoch += 1;
        if let Some(m) = c.mbar {
            self.complete_tx(t, m, c.len as i64)?;
        }
        Ok(())
    }

    /// At the end of the CTA: bulk copies to global memory still in flight
    /// are performed (the grid's completion makes them visible).
    pub(super) fn finish_async(&mut self, global: &mut Global) -> Result<(), RunError> {
        let ids: Vec<(CopyId, usize)> = self.asyncs.copies.iter().filter(|(_, c)| c.dst.0 == Space::Global).map(|(&k, c)| (k, c.thread)).collect();
        for (id, t) in ids {
            self.perform(t, id, global)?;
        }
        Ok(())
    }
}
