//! The values of the special registers (`%tid`, `%ntid`, `%laneid`, ...)
//! as the interpreter gives them: one place for the reference path
//! (`Cta::special`) and the fast path (a `mov` of a special register,
//! pre-decoded once by [`super::decode`] into a [`Special`]).

use crate::ir::{Selector, SpecialReg};

/// What a thread's special registers are read from.
#[derive(Clone, Copy, Debug)]
pub struct ThreadIds {
    pub tid: [u32; 3],
    /// The thread's linear index in its CTA.
    pub linear: u32,
    pub block: [u32; 3],
    pub ctaid: [u32; 3],
    pub grid: [u32; 3],
    pub dynamic_shared: usize,
    /// Bytes of shared memory of the CTA.
    pub shared_size: usize,
    /// Instructions the thread executed (its `%clock`).
    pub clock: u64,
}

/// A special register (with its selector) resolved once: what its value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    /// Component `lane` (0-2; 3 and over read as 0) of a triple.
    Tid(usize),
    Ntid(usize),
    Ctaid(usize),
    Nctaid(usize),
    LaneId,
    WarpId,
    NWarpId,
    LaneMaskEq,
    LaneMaskLe,
    LaneMaskLt,
    LaneMaskGe,
    LaneMaskGt,
    DynamicSmem,
    TotalSmem,
    Const(u128),
    Clock,
    ClockHi,
}

impl Special {
    /// The register `s` selected by `sel`.
    pub fn of(s: SpecialReg, sel: Option<Selector>) -> Special {
        let lane = sel.and_then(|s| s.lane()).unwrap_or(0) as usize;
        match s.name() {
            "%tid" => Special::Tid(lane),
            "%ntid" => Special::Ntid(lane),
            "%ctaid" | "%clusterid" | "%cluster_ctaid" => Special::Ctaid(lane),
            "%nctaid" | "%nclusterid" | "%cluster_nctaid" => Special::Nctaid(lane),
            "%laneid" => Special::LaneId,
            "%warpid" => Special::WarpId,
            "%nwarpid" => Special::NWarpId,
            "%lanemask_eq" => Special::LaneMaskEq,
            "%lanemask_le" => Special::LaneMaskLe,
            "%lanemask_lt" => Special::LaneMaskLt,
            "%lanemask_ge" => Special::LaneMaskGe,
            "%lanemask_gt" => Special::LaneMaskGt,
            "%dynamic_smem_size" => Special::DynamicSmem,
            "%total_smem_size" | "%aggr_smem_size" => Special::TotalSmem,
            "%is_explicit_cluster" | "%cluster_ctarank" => Special::Const(0),
            "%cluster_nctarank" | "%nsmid" => Special::Const(1),
            // Clocks and timers count the thread's executed instructions.
            "%clock" | "%clock64" | "%globaltimer" | "%globaltimer_lo" => Special::Clock,
            "%clock_hi" | "%globaltimer_hi" => Special::ClockHi,
            _ => Special::Const(0),
        }
    }

    /// Its value in thread `th`.
    #[inline]
    pub fn value(self, th: &ThreadIds) -> u128 {
        let pick = |v: [u32; 3], lane: usize| if lane < 3 { v[lane] as u128 } else { 0 };
        let laneid = th.linear % 32;
        match self {
            Special::Tid(l) => pick(th.tid, l),
            Special::Ntid(l) => pick(th.block, l),
            Special::Ctaid(l) => pick(th.ctaid, l),
            Special::Nctaid(l) => pick(th.grid, l),
            Special::LaneId => laneid as u128,
            Special::WarpId => (th.linear / 32) as u128,
            Special::NWarpId => th.block.iter().product::<u32>().div_ceil(32) as u128,
            Special::LaneMaskEq => 1u128 << laneid,
            Special::LaneMaskLe => ((1u64 << (laneid + 1)) - 1) as u128,
            Special::LaneMaskLt => ((1u64 << laneid) - 1) as u128,
            Special::LaneMaskGe => (!((1u64 << laneid) - 1) & 0xffff_ffff) as u128,
            Special::LaneMaskGt => (!((1u64 << (laneid + 1)) - 1) & 0xffff_ffff) as u128,
            Special::DynamicSmem => th.dynamic_shared as u128,
            Special::TotalSmem => th.shared_size as u128,
            Special::Const(v) => v,
            Special::Clock => th.clock as u128,
            Special::ClockHi => (th.clock >> 32) as u128,
        }
    }
}

impl ThreadIds {
    /// The value of `s` (selected by `sel`) in this thread.
    pub fn value(&self, s: SpecialReg, sel: Option<Selector>) -> u128 {
        Special::of(s, sel).value(self)
    }
}
