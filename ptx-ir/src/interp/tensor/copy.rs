//! The tensor instructions on a CTA: issuing `cp.async.bulk.tensor` and
//! `cp.reduce.async.bulk.tensor` (checks, then a copy in flight in
//! [`crate::interp::async_copy`]), performing them when they complete,
//! `cp.async.bulk.prefetch.tensor`, `tensormap.replace` and
//! `tensormap.cp_fenceproxy`.

use super::map::{ElemType, Fill, MapError, TensorMap, MAP_BYTES};
use super::tile::{plan, span};
use super::{rank_of, Direction, RedOp, TensorCopy};
use crate::eval::{self, Quality, Val};
use crate::interp::async_copy::AsyncCopy;
use crate::interp::exec::{instruction_head, Cta, Flow};
use crate::interp::memory::{worst, Global, Space};
use crate::interp::RunError;
use crate::ir::{AddrBase, Address, Instruction, Operand};
use crate::isa::{Mod, Opcode, ScalarType, StateSpace};
use smallvec::SmallVec;

/// Executes one of [`super::handles`]' instructions.
pub fn step(cta: &mut Cta, t: usize, ins: &Instruction, global: &mut Global) -> Result<Flow, RunError> {
    match ins.opcode {
        Opcode::CP_ASYNC_BULK_TENSOR if matches!(ins.operands.first(), Some(Operand::AddrList(_))) => cta.tensor_copy_out(t, ins, global, None),
        Opcode::CP_ASYNC_BULK_TENSOR => cta.tensor_load(t, ins, global),
        Opcode::CP_REDUCE_ASYNC_BULK_TENSOR => {
            let op = red_op(ins).ok_or_else(|| cta.unsupported(t, &instruction_head(ins)))?;
            cta.tensor_copy_out(t, ins, global, Some(op))
        }
        Opcode::CP_ASYNC_BULK_PREFETCH_TENSOR => {
            // A hint (§9.7.9.25.5.4): only the map is checked.
            cta.tensor_operand(t, ins, 0, global, false)?;
            Ok(Flow::Next)
        }
        Opcode::TENSORMAP_REPLACE => cta.tensormap_replace(t, ins, global),
        _ => cta.tensormap_cp_fenceproxy(t, ins, global),
    }
}

fn red_op(ins: &Instruction) -> Option<RedOp> {
    [(Mod::ADD, RedOp::Add), (Mod::MIN, RedOp::Min), (Mod::MAX, RedOp::Max), (Mod::INC, RedOp::Inc), (Mod::DEC, RedOp::Dec), (Mod::AND, RedOp::And), (Mod::OR, RedOp::Or), (Mod::XOR, RedOp::Xor)].into_iter().find(|(m, _)| ins.has(*m)).map(|(_, op)| op)
}


/// The reduction of one element (§9.7.9.25.5.3: the valid pairs of
/// `.redOp` and element type): `None` for a pair the manual does not list.
/// Floating-point `.add` rounds to nearest even; an `.f32` add whose
/// inputs or result are subnormal is unspecified (the bulk reduction's
/// `.add.f32` flushes them, §9.7.9.25.4.2; the tensor form does not say).
pub fn reduce(op: RedOp, ty: ElemType, old: Val, src: Val) -> Option<Val> {
    use ElemType::*;
    let q = worst(old.quality, src.quality);
    let bits = ty.bytes() as u32 * 8;
    let mask = eval::bits_mask(bits);
    let (a, b) = (old.bits & mask, src.bits & mask);
    let float = |fop: eval::AtomicFloatOp, st: ScalarType| -> Option<Val> {
        let r = eval::atomic_float_op(fop, st, a, b)?;
        let sub = |x: u128| st == ScalarType::F32 && f32::from_bits(x as u32).is_subnormal();
        let q = if fop == eval::AtomicFloatOp::Add && (sub(a) || sub(b) || sub(r.bits)) { Quality::Unspecified } else { worst(q, r.quality) };
        Some(Val { bits: r.bits, quality: q })
    };
    let signed = matches!(ty, S32 | S64);
    let int = |f: &dyn Fn(u128, u128) -> u128| Some(Val { bits: f(a, b) & mask, quality: q });
    match (op, ty) {
        (RedOp::Add, F32) => float(eval::AtomicFloatOp::Add, ScalarType::F32),
        (RedOp::Add, F16) => float(eval::AtomicFloatOp::Add, ScalarType::F16),
        (RedOp::Add, Bf16) => float(eval::AtomicFloatOp::Add, ScalarType::Bf16),
        (RedOp::Min, F16) => float(eval::AtomicFloatOp::Min, ScalarType::F16),
        (RedOp::Min, Bf16) => float(eval::AtomicFloatOp::Min, ScalarType::Bf16),
        (RedOp::Max, F16) => float(eval::AtomicFloatOp::Max, ScalarType::F16),
        (RedOp::Max, Bf16) => float(eval::AtomicFloatOp::Max, ScalarType::Bf16),
        (RedOp::Add, U32 | S32 | U64) => int(&|a, b| a.wrapping_add(b)),
        (RedOp::Min | RedOp::Max, U32 | S32 | U64 | S64) => {
            let less = if signed { eval::sext(b, bits) < eval::sext(a, bits) } else { b < a };
            let take_src = if op == RedOp::Min { less } else { !less && a != b };
            int(&|a, b| if take_src { b } else { a })
        }
        (RedOp::Inc, U32) => int(&|a, b| if a >= b { 0 } else { a + 1 }),
        (RedOp::Dec, U32) => int(&|a, b| if a == 0 || a > b { b } else { a - 1 }),
        (RedOp::And, U32 | S32 | U64 | S64) => int(&|a, b| a & b),
        (RedOp::Or, U32 | S32 | U64 | S64) => int(&|a, b| a | b),
        (RedOp::Xor, U32 | S32 | U64 | S64) => int(&|a, b| a ^ b),
        _ => None,
    }
}

/// The quality of an element a copy moved: `.tf32` may be rounded, the
/// `.ftz` types may flush subnormals (see the module doc).
pub(super) fn copied_quality(ty: ElemType, bits: u128, q: Quality) -> Quality {
    let subnormal = f32::from_bits(bits as u32).is_subnormal();
    let changes = match ty {
        ElemType::Tf32 => bits & 0x1fff != 0,
        ElemType::Tf32Ftz => bits & 0x1fff != 0 || subnormal,
        ElemType::F32Ftz => subnormal,
        _ => false,
    };
    if changes {
        Quality::Unspecified
    } else {
        q
    }
}

/// The OOB-NaN of a floating-point type (its payload is not documented: any NaN).
fn oob_nan(ty: ElemType) -> u128 {
    match ty {
        ElemType::F16 => 0x7e00,
        ElemType::Bf16 => 0x7fc0,
        ElemType::F64 => 0x7ff8_0000_0000_0000,
        _ => 0x7fc0_0000,
    }
}

impl Cta<'_, '_> {
    fn map_error(&self, t: usize, ins: &Instruction, e: MapError) -> RunError {
        match e {
            MapError::Invalid(m) => self.undefined(t, &format!("`{}` with an invalid tensor map: {m}", instruction_head(ins))),
            MapError::Unsupported(m) => self.unsupported(t, &format!("{} with {m}", instruction_head(ins))),
        }
    }

    /// Where an operand names a tensor map: a variable (a kernel parameter,
    /// a `.const` or `.global` variable) or a generic address.
    fn map_address(&self, t: usize, ins: &Instruction, op: &Operand, space: StateSpace) -> Result<(Space, u64), RunError> {
        // What `mov %rd, param` gives for a kernel parameter is its .param
        // address, not a generic one; compilers use it as the map operand
        // as it is, and ptxas accepts that: an address in no generic window
        // and inside the parameter area is taken as that.
        if let Operand::Reg(r) = op {
            let v = self.reg(t, r.reg, 0);
            let params = self.threads[t].frames.last().map_or(0, |f| f.params.bytes.len() as u64);
            if v.is_exact() && Space::of_generic(v.bits as u64).is_none() && (v.bits as u64) < params {
                return Ok((Space::Param, v.bits as u64));
            }
        }
        let base = match op {
            Operand::Sym(s) => (AddrBase::Sym(s.name.clone()), s.offset),
            Operand::Reg(r) => (AddrBase::Reg(r.reg), 0),
            Operand::RegOffset(r, off) => (AddrBase::Reg(*r), *off),
            Operand::Addr(_) => return self.address(t, ins, op, space),
            _ => return Err(self.unsupported(t, &format!("{} with this tensor-map operand", instruction_head(ins)))),
        };
        let addr = Operand::Addr(Box::new(Address { base: base.0, offset: base.1, unified: false, zero_written: false }));
        self.address(t, ins, &addr, space)
    }

    /// The 128 bytes at a map's address, decoded.
    fn read_map(&self, t: usize, ins: &Instruction, sp: Space, a: u64, global: &Global) -> Result<TensorMap, RunError> {
        if !matches!(sp, Space::Param | Space::Const | Space::Global) {
            return Err(self.undefined(t, &format!("`{}`: the tensor map must be in .param, .const or .global memory (§9.7.9.25.5.2)", instruction_head(ins))));
        }
        if sp != Space::Param && !a.is_multiple_of(64) {
            return Err(self.undefined(t, &format!("`{}`: tensor map address 0x{a:x} is not a multiple of 64", instruction_head(ins))));
        }
        let mut b = [0u8; MAP_BYTES];
        let q = self.mem_read(t, global, sp, a, &mut b)?;
        if q != Quality::Exact {
            return Err(self.undefined(t, &format!("`{}`: the tensor map's bytes are not all exactly determined (uninitialized or computed from unspecified values)", instruction_head(ins))));
        }
        TensorMap::decode(&b).map_err(|e| self.map_error(t, ins, e))
    }

    /// Operand `k`, `[tensorMap, tensorCoords]`: the map and, when
    /// `coords` is asked for, the coordinates (one `.s32` per dimension).
    fn tensor_operand(&self, t: usize, ins: &Instruction, k: usize, global: &Global, coords: bool) -> Result<(TensorMap, Vec<i32>), RunError> {
        let Some(Operand::AddrList(items)) = ins.operands.get(k) else {
            return Err(self.unsupported(t, &format!("{} without a [tensorMap, tensorCoords] operand", instruction_head(ins))));
        };
        let (sp, a) = self.map_address(t, ins, &items[0], StateSpace::Generic)?;
        let map = self.read_map(t, ins, sp, a, global)?;
        if !coords {
            return Ok((map, Vec::new()));
        }
        let mut v: SmallVec<[Val; 6]> = SmallVec::new();
        for o in items.iter().skip(1) {
            self.read(t, ins, k, o, &mut v)?;
        }
        for x in &v {
            self.note_dependence(t, x.quality, &format!("tensor coordinate of `{}`", instruction_head(ins)));
        }
        let rank = rank_of(ins).unwrap_or(0);
        if v.len() != rank {
            return Err(self.undefined(t, &format!("`{}` with {} coordinate(s) for .{rank}d", instruction_head(ins), v.len())));
        }
        if map.rank != rank {
            return Err(self.undefined(t, &format!("`{}` (.{rank}d) with a tensor map of rank {}", instruction_head(ins), map.rank)));
        }
        Ok((map, v.iter().map(|x| x.bits as u32 as i32).collect()))
    }

    fn refuse_unsupported_modes(&self, t: usize, ins: &Instruction) -> Result<(), RunError> {
        let unsupported = [Mod::IM2COL, Mod::IM2COL_W, Mod::IM2COL_W_128, Mod::IM2COL_NO_OFFS, Mod::TILE_GATHER4, Mod::TILE_SCATTER4, Mod::MULTICAST_CLUSTER, Mod::CTA_GROUP_2];
        if unsupported.iter().any(|m| ins.has(*m)) {
            return Err(self.unsupported(t, &instruction_head(ins)));
        }
        Ok(())
    }

    /// A box larger than shared memory cannot be copied to or from it
    /// (checked before the elements are listed).
    fn check_box_size(&self, t: usize, map: &TensorMap, shared_at: u64) -> Result<(), RunError> {
        let n = map.box_bytes();
        if n as u64 > (self.shared.bytes.len() as u64).saturating_sub(shared_at) {
            return Err(self.fault(t, crate::interp::Fault { message: format!("tensor copy of a {n}-byte box at shared offset 0x{shared_at:x} is out of bounds (shared memory has {} bytes)", self.shared.bytes.len()) }));
        }
        Ok(())
    }

    /// Bounds of the bytes a copy touches: shared runs and global runs.
    fn check_tile_bounds(&self, t: usize, tile: &super::tile::Tile, global: &Global) -> Result<(), RunError> {
        let (_, end) = span(&tile.shared_runs);
        if end as usize > self.shared.bytes.len() {
            let (start, _) = span(&tile.shared_runs);
            return Err(self.fault(t, crate::interp::Fault { message: format!("tensor copy of shared bytes 0x{start:x}..0x{end:x} is out of bounds (shared memory has {} bytes)", self.shared.bytes.len()) }));
        }
        let mut buf = Vec::new();
        for &(s, e) in &tile.global_runs {
            buf.resize((e - s) as usize, 0);
            global.read(s, &mut buf).map_err(|f| self.fault(t, f))?;
        }
        Ok(())
    }

    /// `cp.async.bulk.tensor` global → shared (§9.7.9.25.5.2), tile mode.
    fn tensor_load(&mut self, t: usize, ins: &Instruction, global: &mut Global) -> Result<Flow, RunError> {
        self.refuse_unsupported_modes(t, ins)?;
        let (map, coords) = self.tensor_operand(t, ins, 1, global, true)?;
        let dspace = ins.spaces().first().copied().unwrap_or(StateSpace::Generic);
        let (dsp, dst) = self.address(t, ins, &ins.operands[0], dspace)?;
        if dsp != Space::Shared {
            return Err(self.undefined(t, "cp.async.bulk.tensor destination not in shared memory"));
        }
        if dst % 16 != 0 {
            return Err(self.undefined(t, &format!("cp.async.bulk.tensor destination 0x{dst:x} is not a multiple of 16 (§5.5.3.1)")));
        }
        let (msp, m) = self.address(t, ins, &ins.operands[2], StateSpace::Shared)?;
        self.mbarrier_at(t, msp, m)?;
        self.check_box_size(t, &map, dst)?;
        let tile = plan(&map, &coords, dst);
        self.check_tile_bounds(t, &tile, global)?;
        for &(s, e) in &tile.shared_runs {
            self.check_async_access(t, Space::Shared, s, (e - s) as usize, true)?;
        }
        for &(s, e) in &tile.global_runs {
            self.check_async_access(t, Space::Global, s, (e - s) as usize, false)?;
        }
        let (d0, d1) = span(&tile.shared_runs);
        let (s0, s1) = span(&tile.global_runs);
        let (func, pc) = self.position_of(t);
        let tc = TensorCopy { tile, elem: map.elem, fill: map.fill, direction: Direction::Load };
        self.asyncs.add(AsyncCopy { thread: t, func, pc, what: "cp.async.bulk.tensor", dst: (Space::Shared, d0), src: (Space::Global, s0), len: (d1 - d0) as usize, src_len: (s1 - s0) as usize, mbar: Some(m), tensor: Some(Box::new(tc)) });
        Ok(Flow::Next)
    }

    /// `cp.async.bulk.tensor` shared::cta → global and
    /// `cp.reduce.async.bulk.tensor` (§9.7.9.25.5.2-3), tile mode, bulk group.
    fn tensor_copy_out(&mut self, t: usize, ins: &Instruction, global: &mut Global, op: Option<RedOp>) -> Result<Flow, RunError> {
        self.refuse_unsupported_modes(t, ins)?;
        let (map, coords) = self.tensor_operand(t, ins, 0, global, true)?;
        let what = if op.is_some() { "cp.reduce.async.bulk.tensor" } else { "cp.async.bulk.tensor" };
        if let Some(op) = op {
            let z = Val::exact(0);
            if reduce(op, map.elem, z, z).is_none() {
                return Err(self.undefined(t, &format!("`{}` on a tensor of {} elements (not a pair §9.7.9.25.5.3 lists)", instruction_head(ins), map.elem.name())));
            }
        }
        let sspace = ins.spaces().get(1).copied().unwrap_or(StateSpace::Generic);
        let (ssp, src) = self.address(t, ins, &ins.operands[1], sspace)?;
        if ssp != Space::Shared {
            return Err(self.undefined(t, &format!("{what} source not in shared memory")));
        }
        if src % 16 != 0 {
            return Err(self.undefined(t, &format!("{what} source 0x{src:x} is not a multiple of 16 (§5.5.3.1)")));
        }
        self.check_box_size(t, &map, src)?;
        let tile = plan(&map, &coords, src);
        self.check_tile_bounds(t, &tile, global)?;
        for &(s, e) in &tile.shared_runs {
            self.check_async_access(t, Space::Shared, s, (e - s) as usize, false)?;
        }
        for &(s, e) in &tile.global_runs {
            self.check_async_access(t, Space::Global, s, (e - s) as usize, true)?;
        }
        let (s0, s1) = span(&tile.shared_runs);
        let (d0, d1) = span(&tile.global_runs);
        let (func, pc) = self.position_of(t);
        let direction = op.map_or(Direction::Store, Direction::Reduce);
        let tc = TensorCopy { tile, elem: map.elem, fill: map.fill, direction };
        let id = self.asyncs.add(AsyncCopy { thread: t, func, pc, what, dst: (Space::Global, d0), src: (Space::Shared, s0), len: (d1 - d0) as usize, src_len: (s1 - s0) as usize, mbar: None, tensor: Some(Box::new(tc)) });
        self.asyncs.threads[t].bulk_uncommitted.push(id);
        Ok(Flow::Next)
    }

    /// Performs a tensor copy taken out of flight (see
    /// [`crate::interp::async_copy`]); a load then signals complete-tx of
    /// the box's bytes, out-of-bound elements included.
    pub(in crate::interp) fn perform_tensor(&mut self, t: usize, c: AsyncCopy, global: &mut Global) -> Result<(), RunError> {
        let Some(tc) = c.tensor else { return Ok(()) };
        let es = tc.tile.elem_bytes;
        let mut buf = [0u8; 8];
        let fill = |q: &mut Quality, buf: &mut [u8; 8]| {
            if tc.fill == Fill::OobNan {
                *buf = (oob_nan(tc.elem) as u64).to_le_bytes();
                *q = Quality::AnyNan;
            } else {
                *buf = [0; 8];
                *q = Quality::Exact;
            }
        };
        for e in &tc.tile.elems {
            match tc.direction {
                Direction::Load => {
                    let mut q = Quality::Exact;
                    match e.global {
                        Some(g) => {
                            q = global.read(g, &mut buf[..es]).map_err(|f| self.fault(t, f))?;
                            q = copied_quality(tc.elem, u64::from_le_bytes(buf) as u128 & eval::bits_mask(es as u32 * 8), q);
                        }
                        None => fill(&mut q, &mut buf),
                    }
                    self.check_wgmma_reads(t, e.shared, es, "`cp.async.bulk.tensor` (completing now)")?;
                    self.shared.write(e.shared, &buf[..es], q).map_err(|f| self.fault(t, f))?;
                }
                Direction::Store => {
                    let Some(g) = e.global else { continue };
                    let q = self.shared.read(e.shared, &mut buf[..es]).map_err(|f| self.fault(t, f))?;
                    let q = copied_quality(tc.elem, u64::from_le_bytes(buf) as u128 & eval::bits_mask(es as u32 * 8), q);
                    global.write(g, &buf[..es], q).map_err(|f| self.fault(t, f))?;
                }
                Direction::Reduce(op) => {
                    let Some(g) = e.global else { continue };
                    let mut old = [0u8; 8];
                    buf = [0; 8];
                    let qs = self.shared.read(e.shared, &mut buf[..es]).map_err(|f| self.fault(t, f))?;
                    let qo = global.read(g, &mut old[..es]).map_err(|f| self.fault(t, f))?;
                    let src = Val { bits: u64::from_le_bytes(buf) as u128, quality: qs };
                    let prev = Val { bits: u64::from_le_bytes(old) as u128, quality: qo };
                    let Some(r) = reduce(op, tc.elem, prev, src) else { return Err(self.unsupported(t, "cp.reduce.async.bulk.tensor reduction")) };
                    global.write(g, &(r.bits as u64).to_le_bytes()[..es], r.quality).map_err(|f| self.fault(t, f))?;
                }
            }
        }
        self.asyncs.mbarriers.epoch += 1;
        if let Some(m) = c.mbar {
            self.complete_tx(t, m, (tc.tile.elems.len() * es) as i64)?;
        }
        Ok(())
    }

    /// `tensormap.replace` (§9.7.9.26) on the interpreter's encoding: writes
    /// one field (see [`super::map`]); the map is checked when a copy uses it.
    fn tensormap_replace(&mut self, t: usize, ins: &Instruction, global: &mut Global) -> Result<Flow, RunError> {
        let (sp, a) = self.address(t, ins, &ins.operands[0], ins.space())?;
        if !matches!(sp, Space::Global | Space::Shared) {
            return Err(self.undefined(t, "tensormap.replace address not in .global or .shared::cta memory"));
        }
        let Some(name) = ins.mods.iter().map(|m| m.text()).find(|m| TensorMap::field(m, 0).is_some()) else {
            return Err(self.unsupported(t, &instruction_head(ins)));
        };
        let ord = if ins.operands.len() == 3 { self.immediate(t, ins, 1)? } else { 0 };
        let Some((at, width)) = TensorMap::field(name, ord) else {
            return Err(self.undefined(t, &format!("tensormap.replace{name} with ordinal {ord} (the interpreter's maps have 5 dimensions, 4 strides)")));
        };
        let k = ins.operands.len() - 1;
        let mut v: SmallVec<[Val; 6]> = SmallVec::new();
        self.read(t, ins, k, &ins.operands[k], &mut v)?;
        let val = v.first().copied().unwrap_or(Val::unspecified());
        if width < 8 && val.bits >> (8 * width) != 0 {
            return Err(self.undefined(t, &format!("tensormap.replace{name} with value {} (the field takes {width} byte(s))", val.bits)));
        }
        self.mem_write(t, global, sp, a + at as u64, &val.bits.to_le_bytes()[..width], val.quality)?;
        Ok(Flow::Next)
    }

    /// `tensormap.cp_fenceproxy` (§9.7.13.16): copies 128 bytes of a map
    /// from shared to global memory (the proxy fence orders nothing more in
    /// the interpreter); each thread of the warp copies the same bytes.
    fn tensormap_cp_fenceproxy(&mut self, t: usize, ins: &Instruction, global: &mut Global) -> Result<Flow, RunError> {
        let (dsp, dst) = self.address(t, ins, &ins.operands[0], StateSpace::Global)?;
        let (ssp, src) = self.address(t, ins, &ins.operands[1], StateSpace::Shared)?;
        let size = self.immediate(t, ins, 2)?;
        if size != MAP_BYTES as u64 {
            return Err(self.undefined(t, &format!("tensormap.cp_fenceproxy of {size} bytes (the only valid size is 128)")));
        }
        let mut b = [0u8; MAP_BYTES];
        let mut q = [Quality::Exact; MAP_BYTES];
        for k in 0..MAP_BYTES {
            q[k] = self.mem_read(t, global, ssp, src + k as u64, &mut b[k..k + 1])?;
        }
        for k in 0..MAP_BYTES {
            self.mem_write(t, global, dsp, dst + k as u64, &b[k..k + 1], q[k])?;
        }
        Ok(Flow::Next)
    }
}
