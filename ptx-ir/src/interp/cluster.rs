//! Clusters, as the interpreter launches them: a cluster of one CTA
//! (`%cluster_nctarank` is 1). `mapa` (PTX ISA 8.7 §9.7.9.23) maps an
//! address into the CTA of rank 0 — the CTA itself — and `barrier.cluster`
//! (§9.7.13.3) synchronizes the threads of the CTA: a thread's n-th `wait`
//! waits until every thread that has not exited has executed its n-th
//! `arrive`. A thread arriving twice without a `wait` between, or waiting
//! without having arrived, is undefined and reported.

use super::exec::{instruction_head, Cta, Flow, Wait};
use super::RunError;
use crate::eval::Val;
use crate::ir::Instruction;
use crate::isa::{Mod, Opcode};
use smallvec::SmallVec;

/// The `Wait::Mbarrier` address that stands for the cluster barrier.
pub const CLUSTER_BARRIER: u64 = u64::MAX;

/// A thread's `barrier.cluster.arrive`s and passed `wait`s so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClusterState {
    pub arrives: u32,
    pub waits: u32,
}

pub fn handles(op: Opcode) -> bool {
    op == Opcode::MAPA || op == Opcode::BARRIER_CLUSTER
}

impl Cta<'_, '_> {
    pub(super) fn cluster_op(&mut self, t: usize, ins: &Instruction) -> Result<Flow, RunError> {
        if ins.opcode == Opcode::MAPA {
            let mut v: SmallVec<[Val; 6]> = SmallVec::new();
            self.read(t, ins, 1, &ins.operands[1], &mut v)?;
            let a = v.first().copied().unwrap_or(Val::unspecified());
            let rank = self.immediate(t, ins, 2)?;
            if rank != 0 {
                return Err(self.undefined(t, &format!("`{}` to CTA rank {rank}, outside the cluster of 1 CTA", instruction_head(ins))));
            }
            self.write_results(t, ins, &[a])?;
            return Ok(Flow::Next);
        }
        let me = self.asyncs.cluster[t];
        if ins.has(Mod::ARRIVE) {
            if me.arrives > me.waits {
                return Err(self.undefined(t, "barrier.cluster.arrive twice before the barrier completes"));
            }
            self.asyncs.cluster[t].arrives += 1;
            self.asyncs.mbarriers.epoch += 1;
            for th in &mut self.threads {
                if th.wait == (Wait::Mbarrier { addr: CLUSTER_BARRIER }) {
                    th.wait = Wait::Running;
                }
            }
            return Ok(Flow::Next);
        }
        // wait: for every thread that has not exited to arrive in this phase.
        if me.arrives == me.waits {
            return Err(self.undefined(t, "barrier.cluster.wait without a barrier.cluster.arrive before it"));
        }
        let all_arrived = (0..self.threads.len()).all(|k| k == t || matches!(self.threads[k].wait, Wait::Exited) || self.asyncs.cluster[k].arrives >= me.arrives);
        if !all_arrived {
            self.threads[t].wait = Wait::Mbarrier { addr: CLUSTER_BARRIER };
            return Ok(Flow::Block);
        }
        self.asyncs.cluster[t].waits += 1;
        Ok(Flow::Next)
    }
}
