//! mbarrier objects (PTX ISA 8.7 §9.7.13.15): `mbarrier.init/inval/
//! expect_tx/complete_tx/arrive/arrive_drop/test_wait/try_wait/
//! pending_count` and `cp.async.mbarrier.arrive`, for a cluster of one CTA.
//!
//! The state of an object (§9.7.13.15.2: current phase, pending arrival
//! count, expected arrival count, tx-count) is kept beside shared memory,
//! keyed by the object's shared offset; its 8 bytes hold no defined value
//! (unspecified), and any other access to them while the object is valid is
//! undefined (§9.7.13.15) and reported. The opaque `state` an arrive returns
//! is `pending count before the arrive` (bits 0-19) | `phase` mod 2^24 (bits
//! 20-43) | an object number (bits 44-62) | `.noComplete` (bit 63): its
//! quality is unspecified (the manual leaves the contents to the
//! implementation), but test_wait decodes it and reports a state that is not
//! of the object's current or preceding phase (undefined, §9.7.13.15.16);
//! `pending_count` of a state that no `.noComplete` arrive returned is
//! reported too.
//!
//! Waiting: a `test_wait`/`try_wait` whose phase is not complete does not
//! spin in the interpreter: the thread waits (`Wait::Mbarrier`) until the
//! object's phase changes, then tests again. When no thread of the CTA can
//! run any more, the waiting threads are released once with the result
//! False (the program may do other work while polling); if that changes
//! nothing (the same threads wait at the same places and no mbarrier or copy
//! changed), the CTA is deadlocked. Asynchronous arrive-ons
//! (`cp.async.mbarrier.arrive`) and complete-tx of bulk copies happen when a
//! thread tests the object (see [`super::async_copy`]).
//!
//! Also the manual's rule that each phase must be observed complete by a
//! test_wait/try_wait before an arrive-on of the next phase (§9.7.13.15.4)
//! is checked for the arrive-ons threads execute.

use super::async_copy::CopyId;
use super::exec::{instruction_head, Cta, Flow, Wait};
use super::memory::{Global, Space};
use super::RunError;
use crate::eval::{Quality, Val};
use crate::ir::Instruction;
use crate::isa::{Mod, Opcode};
use std::collections::BTreeMap;

/// The largest expected and pending arrival count and |tx-count| (§9.7.13.15.2: 2^20 - 1).
const COUNT_MAX: i64 = (1 << 20) - 1;
const PHASE_BITS: u32 = 24;
const ID_BITS: u32 = 19;

/// One valid mbarrier object.
#[derive(Clone, Debug)]
pub struct Mbarrier {
    pub expected: u32,
    pub pending: u32,
    pub tx: i64,
    pub phase: u32,
    /// A number told apart from other objects' (in `state` values).
    pub id: u32,
    /// Has a test_wait/try_wait returned True for the preceding phase?
    pub observed: bool,
}

/// An arrive-on that `cp.async.mbarrier.arrive` triggers when the thread's
/// prior copies complete.
#[derive(Clone, Debug)]
pub struct AsyncArrival {
    pub mbar: u64,
    pub copies: Vec<CopyId>,
}

pub struct Mbarriers {
    pub objects: BTreeMap<u64, Mbarrier>,
    next_id: u32,
    /// Counts changes of mbarriers and copies (deadlock detection).
    pub epoch: u64,
    pub arrivals: Vec<AsyncArrival>,
    /// Threads released from a wait without a phase change: their next test returns False.
    released: Vec<bool>,
    /// The waiters and epoch when they were last released that way.
    last_release: Option<(u64, Vec<(usize, usize, usize)>)>,
}

impl Mbarriers {
    pub fn new(threads: usize) -> Mbarriers {
        Mbarriers { objects: BTreeMap::new(), next_id: 0, epoch: 0, arrivals: Vec::new(), released: vec![false; threads], last_release: None }
    }
}

pub fn handles(op: Opcode) -> bool {
    [
        Opcode::MBARRIER_INIT,
        Opcode::MBARRIER_INVAL,
        Opcode::MBARRIER_EXPECT_TX,
        Opcode::MBARRIER_COMPLETE_TX,
        Opcode::MBARRIER_ARRIVE,
        Opcode::MBARRIER_ARRIVE_DROP,
        Opcode::MBARRIER_TEST_WAIT,
        Opcode::MBARRIER_TRY_WAIT,
        Opcode::MBARRIER_PENDING_COUNT,
        Opcode::CP_ASYNC_MBARRIER_ARRIVE,
    ]
    .contains(&op)
}

fn state_value(m: &Mbarrier, no_complete: bool) -> u128 {
    let phase = (m.phase & ((1 << PHASE_BITS) - 1)) as u128;
    let id = (m.id & ((1 << ID_BITS) - 1)) as u128;
    (m.pending as u128 & COUNT_MAX as u128) | phase << 20 | id << 44 | (no_complete as u128) << 63
}

/// What a thread in `Wait::Mbarrier { addr }` waits for (deadlock messages).
pub fn describe_wait(addr: u64) -> String {
    if addr == super::cluster::CLUSTER_BARRIER {
        "barrier.cluster.wait (not every thread arrives)".into()
    } else {
        format!("a test of the mbarrier at shared offset 0x{addr:x} (its phase does not complete)")
    }
}

/// Releases the threads waiting on mbarriers when no thread can run; a
/// deadlock when that was already done and nothing changed since.
pub fn release_waiters(cta: &mut Cta) -> Result<bool, RunError> {
    let waiting: Vec<(usize, usize, usize)> = (0..cta.threads.len())
        .filter(|&k| matches!(cta.threads[k].wait, Wait::Mbarrier { .. }))
        .map(|k| {
            let f = cta.threads[k].frames.last().unwrap();
            (k, f.func, f.pc)
        })
        .collect();
    if waiting.is_empty() || cta.threads.iter().any(|th| th.wait == Wait::Running) {
        return Ok(false);
    }
    let exited = cta.threads.iter().filter(|th| th.wait == Wait::Exited).count() as u64;
    let snapshot = (cta.asyncs.mbarriers.epoch + (exited << 48), waiting);
    if cta.asyncs.mbarriers.last_release.as_ref() == Some(&snapshot) {
        return Err(RunError::Deadlock(cta.describe_deadlock()));
    }
    for &(k, _, _) in &snapshot.1 {
        cta.threads[k].wait = Wait::Running;
        cta.asyncs.mbarriers.released[k] = true;
    }
    cta.asyncs.mbarriers.last_release = Some(snapshot);
    Ok(true)
}

impl Cta<'_, '_> {
    /// The shared offset of the mbarrier operand `k`.
    fn mbarrier_operand(&mut self, t: usize, ins: &Instruction, k: usize) -> Result<u64, RunError> {
        let (sp, a) = self.address(t, ins, &ins.operands[k], ins.space())?;
        if sp != Space::Shared {
            return Err(self.undefined(t, &format!("`{}` on an address outside shared memory", instruction_head(ins))));
        }
        if a % 8 != 0 {
            return Err(self.undefined(t, &format!("mbarrier object at shared offset 0x{a:x}, not a multiple of 8")));
        }
        Ok(a)
    }

    /// Checks that a valid mbarrier object is at `a`.
    pub(super) fn mbarrier_at(&self, t: usize, sp: Space, a: u64) -> Result<(), RunError> {
        if sp != Space::Shared || !self.asyncs.mbarriers.objects.contains_key(&a) {
            return Err(self.undefined(t, &format!("mbarrier operation on shared offset 0x{a:x}, where no mbarrier object is initialized")));
        }
        Ok(())
    }

    /// Reports an ordinary access to the bytes of a valid mbarrier object.
    pub(super) fn check_mbarrier_bytes(&self, t: usize, sp: Space, a: u64, len: usize) -> Result<(), RunError> {
        if sp != Space::Shared || self.asyncs.mbarriers.objects.is_empty() {
            return Ok(());
        }
        if let Some((&m, _)) = self.asyncs.mbarriers.objects.range(a.saturating_sub(7)..a.saturating_add(len as u64)).next() {
            return Err(self.undefined(t, &format!("access to {len} byte(s) at shared offset 0x{a:x}, which hold the mbarrier object at 0x{m:x} (only mbarrier instructions may use it until mbarrier.inval)")));
        }
        Ok(())
    }

    fn count_operand(&mut self, t: usize, ins: &Instruction, k: usize) -> Result<i64, RunError> {
        Ok(self.immediate(t, ins, k)? as u32 as i64)
    }

    fn object(&mut self, t: usize, a: u64) -> Result<&mut Mbarrier, RunError> {
        self.mbarrier_at(t, Space::Shared, a)?;
        Ok(self.asyncs.mbarriers.objects.get_mut(&a).unwrap())
    }

    /// Completes the phase if nothing is pending (§9.7.13.15.6).
    fn maybe_complete(&mut self, a: u64) -> bool {
        let Some(m) = self.asyncs.mbarriers.objects.get_mut(&a) else { return false };
        if m.pending != 0 || m.tx != 0 {
            return false;
        }
        m.phase = m.phase.wrapping_add(1);
        m.pending = m.expected;
        m.observed = false;
        for th in &mut self.threads {
            if th.wait == (Wait::Mbarrier { addr: a }) {
                th.wait = Wait::Running;
            }
        }
        true
    }

    /// An arrive-on with `count` (§9.7.13.15.7); `by_thread`: executed by a
    /// thread (not triggered by copies). Gives the state before it.
    fn arrive_on(&mut self, t: usize, a: u64, count: i64, no_complete: bool, by_thread: bool) -> Result<u128, RunError> {
        let m = self.object(t, a)?.clone();
        if by_thread && m.phase > 0 && !m.observed {
            return Err(self.undefined(t, &format!("arrive-on for phase {} of the mbarrier at 0x{a:x} before any test_wait/try_wait returned True for phase {} (§9.7.13.15.4)", m.phase, m.phase - 1)));
        }
        if count < 1 || count > m.pending as i64 {
            return Err(self.undefined(t, &format!("arrive-on with count {count} on the mbarrier at 0x{a:x}, whose pending arrival count is {}", m.pending)));
        }
        let state = state_value(&m, no_complete);
        self.asyncs.mbarriers.epoch += 1;
        self.asyncs.mbarriers.objects.get_mut(&a).unwrap().pending -= count as u32;
        if self.maybe_complete(a) && no_complete {
            return Err(self.undefined(t, &format!("a .noComplete arrive completed the phase of the mbarrier at 0x{a:x}")));
        }
        Ok(state)
    }

    fn expect_tx(&mut self, t: usize, a: u64, n: i64) -> Result<(), RunError> {
        let m = self.object(t, a)?;
        m.tx += n;
        if m.tx > COUNT_MAX {
            let tx = m.tx;
            return Err(self.undefined(t, &format!("tx-count {tx} of the mbarrier at 0x{a:x} beyond 2^20-1")));
        }
        self.asyncs.mbarriers.epoch += 1;
        Ok(())
    }

    /// complete-tx (§9.7.13.15.5.2).
    pub(super) fn complete_tx(&mut self, t: usize, a: u64, n: i64) -> Result<(), RunError> {
        let m = self.object(t, a)?;
        m.tx -= n;
        if m.tx < -COUNT_MAX {
            let tx = m.tx;
            return Err(self.undefined(t, &format!("tx-count {tx} of the mbarrier at 0x{a:x} below -(2^20-1)")));
        }
        self.asyncs.mbarriers.epoch += 1;
        self.maybe_complete(a);
        Ok(())
    }

    /// The asynchronous work a test of the object at `a` can see complete:
    /// arrive-ons of `cp.async.mbarrier.arrive` and bulk copies' complete-tx.
    fn settle(&mut self, t: usize, a: u64, global: &mut Global) -> Result<(), RunError> {
        let (mine, rest): (Vec<AsyncArrival>, Vec<AsyncArrival>) = std::mem::take(&mut self.asyncs.mbarriers.arrivals).into_iter().partition(|x| x.mbar == a);
        self.asyncs.mbarriers.arrivals = rest;
        for arrival in mine {
            for id in arrival.copies {
                self.perform(t, id, global)?;
            }
            self.arrive_on(t, a, 1, false, false)?;
        }
        for id in self.asyncs.bulk_for(a) {
            self.perform(t, id, global)?;
        }
        Ok(())
    }

    pub(super) fn mbarrier_op(&mut self, t: usize, ins: &Instruction, global: &mut Global) -> Result<Flow, RunError> {
        let op = ins.opcode;
        if op == Opcode::MBARRIER_PENDING_COUNT {
            let s = self.immediate_state(t, ins, 1)?;
            if s >> 63 == 0 {
                return Err(self.undefined(t, "mbarrier.pending_count of a state no mbarrier.arrive.noComplete / arrive_drop.noComplete returned"));
            }
            self.write_results(t, ins, &[Val::exact(s & COUNT_MAX as u128)])?;
            return Ok(Flow::Next);
        }
        if op == Opcode::MBARRIER_INIT {
            let a = self.mbarrier_operand(t, ins, 0)?;
            let count = if ins.operands.len() > 1 { self.count_operand(t, ins, 1)? } else { return Err(self.unsupported(t, "mbarrier.init without a count")) };
            if !(1..=COUNT_MAX).contains(&count) {
                return Err(self.undefined(t, &format!("mbarrier.init with count {count}, outside 1..2^20-1")));
            }
            if self.asyncs.mbarriers.objects.contains_key(&a) {
                return Err(self.undefined(t, &format!("mbarrier.init on the valid mbarrier object at 0x{a:x} (mbarrier.inval it first)")));
            }
            self.check_async_access(t, Space::Shared, a, 8, true)?;
            self.shared.write(a, &[0; 8], Quality::Unspecified).map_err(|f| self.fault(t, f))?;
            let id = self.asyncs.mbarriers.next_id;
            self.asyncs.mbarriers.next_id = id.wrapping_add(1);
            self.asyncs.mbarriers.objects.insert(a, Mbarrier { expected: count as u32, pending: count as u32, tx: 0, phase: 0, id, observed: false });
            self.asyncs.mbarriers.epoch += 1;
            return Ok(Flow::Next);
        }
        let a = self.mbarrier_operand(t, ins, if op == Opcode::MBARRIER_INVAL || op == Opcode::MBARRIER_EXPECT_TX || op == Opcode::MBARRIER_COMPLETE_TX || op == Opcode::CP_ASYNC_MBARRIER_ARRIVE { 0 } else { 1 })?;
        self.object(t, a)?;
        if op == Opcode::MBARRIER_INVAL {
            self.asyncs.mbarriers.objects.remove(&a);
            self.asyncs.mbarriers.arrivals.retain(|x| x.mbar != a);
            self.asyncs.mbarriers.epoch += 1;
            return Ok(Flow::Next);
        }
        if op == Opcode::MBARRIER_EXPECT_TX || op == Opcode::MBARRIER_COMPLETE_TX {
            let n = self.count_operand(t, ins, 1)?;
            if op == Opcode::MBARRIER_EXPECT_TX {
                self.expect_tx(t, a, n)?;
            } else {
                self.complete_tx(t, a, n)?;
            }
            return Ok(Flow::Next);
        }
        if op == Opcode::CP_ASYNC_MBARRIER_ARRIVE {
            if !ins.has(Mod::NOINC) {
                let m = self.object(t, a)?;
                if m.pending as i64 + 1 > COUNT_MAX {
                    return Err(self.undefined(t, "cp.async.mbarrier.arrive makes the pending count exceed 2^20-1"));
                }
                m.pending += 1;
            }
            let copies = self.asyncs.outstanding(t);
            self.asyncs.mbarriers.arrivals.push(AsyncArrival { mbar: a, copies });
            self.asyncs.mbarriers.epoch += 1;
            return Ok(Flow::Next);
        }
        if op == Opcode::MBARRIER_ARRIVE || op == Opcode::MBARRIER_ARRIVE_DROP {
            let no_complete = ins.has(Mod::NOCOMPLETE);
            let mut count = 1;
            if ins.has(Mod::EXPECT_TX) {
                let n = self.count_operand(t, ins, 2)?;
                self.expect_tx(t, a, n)?;
            } else if ins.operands.len() > 2 {
                count = self.count_operand(t, ins, 2)?;
            }
            if op == Opcode::MBARRIER_ARRIVE_DROP {
                let m = self.object(t, a)?;
                if count > m.expected as i64 {
                    let e = m.expected;
                    return Err(self.undefined(t, &format!("mbarrier.arrive_drop with count {count} on an mbarrier expecting {e} arrivals")));
                }
                m.expected -= count as u32;
            }
            let state = self.arrive_on(t, a, count, no_complete, true)?;
            self.write_results(t, ins, &[Val { bits: state, quality: Quality::Unspecified }])?;
            return Ok(Flow::Next);
        }
        // test_wait / try_wait (§9.7.13.15.16).
        self.settle(t, a, global)?;
        let m = self.object(t, a)?.clone();
        let done = if ins.has(Mod::PARITY) {
            let p = self.immediate(t, ins, 2)?;
            if p > 1 {
                return Err(self.undefined(t, &format!("phaseParity {p} (only 0 and 1 are valid)")));
            }
            // The current phase is incomplete; the other parity is the preceding phase's.
            p != (m.phase & 1) as u64
        } else {
            let s = self.immediate_state(t, ins, 2)?;
            let phase = ((s >> 20) & ((1 << PHASE_BITS) - 1)) as u32;
            let id = ((s >> 44) & ((1 << ID_BITS) - 1)) as u32;
            let current = m.phase & ((1 << PHASE_BITS) - 1);
            if id != m.id & ((1 << ID_BITS) - 1) {
                return Err(self.undefined(t, &format!("`{}` with a state that no arrive on the mbarrier at 0x{a:x} returned", instruction_head(ins))));
            }
            if phase == current {
                false
            } else if phase == current.wrapping_sub(1) & ((1 << PHASE_BITS) - 1) {
                true
            } else {
                return Err(self.undefined(t, &format!("`{}` with the state of phase {phase}, neither the current phase {current} nor the preceding one", instruction_head(ins))));
            }
        };
        let released = std::mem::take(&mut self.asyncs.mbarriers.released[t]);
        if done {
            self.asyncs.mbarriers.objects.get_mut(&a).unwrap().observed = true;
        } else if !released {
            self.threads[t].wait = Wait::Mbarrier { addr: a };
            return Ok(Flow::Block);
        }
        self.write_results(t, ins, &[Val::exact(done as u128)])?;
        Ok(Flow::Next)
    }

    /// The bits of a `state` operand (whatever its quality: the interpreter made them).
    fn immediate_state(&mut self, t: usize, ins: &Instruction, k: usize) -> Result<u128, RunError> {
        let mut v: smallvec::SmallVec<[Val; 6]> = smallvec::SmallVec::new();
        self.read(t, ins, k, &ins.operands[k], &mut v)?;
        Ok(v.first().map_or(0, |x| x.bits))
    }
}
