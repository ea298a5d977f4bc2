//! Tensor maps and the tensor copies (PTX ISA 8.7 §5.5, §9.7.9.25.5,
//! §9.7.9.26, §9.7.13.16): `cp.async.bulk.tensor` in tile mode (global →
//! shared with mbarrier complete-tx, shared::cta → global with bulk
//! async-groups), `cp.reduce.async.bulk.tensor` (tile mode),
//! `cp.async.bulk.prefetch.tensor` (checks the map, no memory effect),
//! `tensormap.replace` and `tensormap.cp_fenceproxy` on the interpreter's own
//! map encoding ([`map`]); the elements a copy moves are in [`tile`], the
//! instructions in `copy.rs`.
//!
//! A map comes with the launch ([`crate::interp::KernelArg::TensorMap`]: a
//! `.param .align 64 .b8 name[128]` grid constant), or lies in global or
//! constant memory (its bytes made by [`TensorMap::encode`], e.g. in a
//! launch buffer at [`buffer_address`]). The map operand is a generic
//! address, a variable's name, or — as compilers write it — the `.param`
//! address `mov` gives for a kernel parameter. A copy decodes the map when it is
//! issued; bytes that are not a valid map are undefined behaviour
//! ([`crate::interp::RunError::Undefined`]). The copies run through
//! [`super::async_copy`]: in flight until the mbarrier test or bulk wait
//! that completes them, with every access to their bytes before that
//! reported.
//!
//! Not executed (`RunError::Unsupported`): `.im2col*`, `.tile::gather4`,
//! `.tile::scatter4`, `.multicast::cluster`, `.cta_group::2`, interleaved
//! maps, sub-byte element types, 32B + 8B-flip swizzle atomicity.
//!
//! Element types whose copy may change the bits (§5.5.1: `.tf32` is rounded
//! to nearest even; the `.ftz` types may flush subnormals) keep their bits
//! and are marked unspecified where the change could show: a `.tf32`
//! element whose low 13 bits are not zero, a subnormal `.f32.ftz`.

mod copy;
pub mod map;
#[cfg(test)]
mod tests;
pub mod tile;

pub use map::{Atomicity, ElemType, Fill, Interleave, MapError, Swizzle, TensorMap};

use super::memory::{Space, GLOBAL_BASE, GLOBAL_SLOT};
use crate::isa::Opcode;

/// The tensor's rank a tensor instruction names (`.1d` ... `.5d`).
pub fn rank_of(ins: &crate::ir::Instruction) -> Option<usize> {
    ins.mods.iter().find_map(|m| match m.text() {
        ".1d" => Some(1),
        ".2d" => Some(2),
        ".3d" => Some(3),
        ".4d" => Some(4),
        ".5d" => Some(5),
        _ => None,
    })
}

/// The global address of launch buffer `k` (buffers are the first global
/// allocations): where a map in a buffer can point.
pub fn buffer_address(k: usize) -> u64 {
    GLOBAL_BASE + k as u64 * GLOBAL_SLOT
}

/// What a tensor copy does with its elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Global → shared (out-of-bound elements filled).
    Load,
    /// Shared → global (out-of-bound elements not written).
    Store,
    /// Shared combined into global by a `.redOp`.
    Reduce(RedOp),
}

/// The reductions of `cp.reduce.async.bulk.tensor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedOp {
    Add,
    Min,
    Max,
    Inc,
    Dec,
    And,
    Or,
    Xor,
}

/// A tensor copy in flight.
#[derive(Clone, Debug)]
pub struct TensorCopy {
    pub tile: tile::Tile,
    pub elem: ElemType,
    pub fill: Fill,
    pub direction: Direction,
}

impl TensorCopy {
    /// Does the copy touch `[a, a + len)` of space `sp`?
    pub fn touches(&self, sp: Space, a: u64, len: usize) -> bool {
        let runs = if sp == Space::Shared { &self.tile.shared_runs } else { &self.tile.global_runs };
        tile::touches(runs, a, len)
    }
}

/// The opcodes of this module.
pub fn handles(op: Opcode) -> bool {
    [Opcode::CP_ASYNC_BULK_TENSOR, Opcode::CP_REDUCE_ASYNC_BULK_TENSOR, Opcode::CP_ASYNC_BULK_PREFETCH_TENSOR, Opcode::TENSORMAP_REPLACE, Opcode::TENSORMAP_CP_FENCEPROXY].contains(&op)
}

pub(super) use copy::step;
