//! `wmma.load`, `wmma.store`, `wmma.mma` (PTX ISA 8.7 §9.7.14.4).
//!
//! The manual leaves the fragment layout unspecified ("the distribution of
//! fragments loaded by the threads in a warp is unspecified and is target
//! architecture dependent"); it fixes only the number of registers of each
//! fragment (§9.7.14.4.1). This interpreter's layout: a fragment of a
//! `rows x cols` matrix holds `E = rows * cols / 32` distinct elements per
//! lane; element slot `s` of lane `l` (slots numbered from the low bits of
//! the first register) is element `e = (s % E) * 32 + l` of the matrix in
//! row-major order, i.e. `(e / cols, e % cols)`, whatever the memory
//! layout (`.row`/`.col`) it was loaded from. Fragments with more slots
//! than `E` (the `.f16` A and B fragments: 8 `.f16x2` registers) repeat
//! the elements, and `wmma.mma` reads the first copy. Programs that only
//! manipulate fragments uniformly (the manual's rule: every element with
//! the same operation, order unchanged) behave as on any GPU; programs
//! that give elements of a fragment different roles depend on this choice,
//! and their results may differ on hardware.
//!
//! Memory: the address and `stride` must be the same in every lane
//! (undefined otherwise); `stride` counts elements (default: the leading
//! dimension, §9.7.14.4.2); rows (or columns) start at addresses aligned
//! to the fragment's size in bytes. Accesses are bounds-checked like any
//! load or store, in `.global` or `.shared` memory (generic addresses must
//! point into one of them).

use super::exact::Round;
use super::layout::{Elem, Shape, Which};
use super::mma::{multiply, BitOp, CommonMods, Matrix, Types};
use super::{element, pack, space_of, Completion, Failure, LaneInputs, Memory};
use crate::eval::Quality;
use crate::interp::memory::Space;
use crate::ir::Instruction;
use crate::isa::Opcode;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Load(Which),
    Store,
    Mma,
}

#[derive(Clone, Copy, Debug)]
pub struct Form {
    pub op: Op,
    pub shape: Shape,
    /// load/store: the memory layout (wmma.mma's layouts only name how
    /// its operands were loaded, which the fragments do not depend on).
    pub row: bool,
    /// load/store: the element type; mma: D, A, B, C.
    pub types: Types,
    pub satfinite: bool,
    pub round: Round,
    pub bit_op: Option<BitOp>,
}

impl Form {
    pub fn parse(ins: &Instruction) -> Result<Form, Option<String>> {
        let mut m = CommonMods::default();
        let mut which = None;
        for t in super::mma::mod_texts(ins) {
            if m.take(t) || t.starts_with(".shared") || t == ".global" {
                continue;
            }
            match t {
                ".a" => which = Some(Which::A),
                ".b" => which = Some(Which::B),
                ".c" | ".d" => which = Some(Which::C),
                other => return Err(Some(format!("`{other}` is not implemented"))),
            }
        }
        let CommonMods { shape, types, layouts, satfinite, round, bit_op } = m;
        let Some(shape) = shape else { return Err(None) };
        let op = match ins.opcode {
            Opcode::WMMA_LOAD => Op::Load(which.ok_or(None)?),
            Opcode::WMMA_STORE => Op::Store,
            _ => Op::Mma,
        };
        if satfinite && types.first().is_some_and(|t| t.is_float()) {
            return Err(Some("floating-point .satfinite (removed in PTX ISA 6.5)".into()));
        }
        let types = match (op, &types[..]) {
            (Op::Mma, [d, c]) => Types { d: *d, a: Elem::F16, b: Elem::F16, c: *c },
            (Op::Mma, [d, a, b, c]) => Types { d: *d, a: *a, b: *b, c: *c },
            (Op::Load(_) | Op::Store, [t]) => Types { d: *t, a: *t, b: *t, c: *t },
            _ => return Err(None),
        };
        let row = match layouts[..] {
            [r] | [r, _] => r,
            _ => return Err(None),
        };
        Ok(Form { op, shape, row, types, satfinite, round, bit_op })
    }
}

/// Registers of a fragment (§9.7.14.4.1): `.f16` A and B fragments are 8
/// `.f16x2` registers whatever the shape; the others hold each element
/// once. (The manual's table gives one `.f64` register for the `.m8n8k4`
/// accumulator, but 8x8 elements over 32 lanes need two, as its own
/// example `wmma.store.d.sync.aligned.m8n8k4.row.f64 [ptr], {d0, d1}` has.)
pub fn registers(s: Shape, w: Which, ty: Elem) -> u32 {
    let (r, c) = s.dims(w);
    if ty == Elem::F16 && w != Which::C {
        8
    } else {
        (r * c / 32).div_ceil(ty.per_register())
    }
}

/// Row and column of slot `slot` of `lane`'s fragment (the layout of the module doc).
pub fn slot_coord(s: Shape, w: Which, lane: u32, slot: u32) -> (u32, u32) {
    let (r, c) = s.dims(w);
    let distinct = r * c / 32;
    let e = (slot % distinct) * 32 + lane;
    (e / c, e % c)
}

/// The default stride: the leading dimension (§9.7.14.4.2).
fn default_stride(s: Shape, w: Which, row: bool) -> u32 {
    let (r, c) = s.dims(w);
    if row {
        c
    } else {
        r
    }
}

/// The address and stride all lanes give (they must agree).
fn address_and_stride(inputs: &[LaneInputs], addr_op: usize, stride_op: Option<usize>, default: u32) -> Result<(u64, u64), Failure> {
    let get = |l: usize| -> Result<(u64, u64, Quality), Failure> {
        let a = inputs[l].ops[addr_op].first().ok_or_else(|| Failure::Unsupported("address".into()))?;
        let (s, sq) = match stride_op.and_then(|k| inputs[l].ops.get(k)).and_then(|o| o.first()) {
            Some(v) => (v.bits as u32 as u64, v.quality),
            None => (default as u64, Quality::Exact),
        };
        Ok((a.bits as u64, s, super::combine(a.quality, sq)))
    };
    let (a0, s0, q0) = get(0)?;
    if q0 != Quality::Exact {
        return Err(Failure::Undefined { lane: 0, message: "the address or stride of a wmma access is not exactly determined".into() });
    }
    for l in 1..32 {
        let (a, s, _) = get(l)?;
        if (a, s) != (a0, s0) {
            return Err(Failure::Undefined { lane: l, message: format!("wmma address/stride 0x{a:x}/{s} of lane {l} differs from lane 0's 0x{a0:x}/{s0}: all lanes must give the same") });
        }
    }
    if s0 < default as u64 {
        return Err(Failure::Undefined { lane: 0, message: format!("wmma stride {s0} is below the matrix's leading dimension {default}") });
    }
    Ok((a0, s0))
}

/// Byte address and bit offset of element `(r, c)`.
fn place(base: u64, stride: u64, row: bool, ty: Elem, r: u32, c: u32) -> (u64, u32) {
    let linear = if row { r as u64 * stride + c as u64 } else { c as u64 * stride + r as u64 };
    let bit = linear * ty.bits() as u64;
    (base + bit / 8, (bit % 8) as u32)
}

/// Checks the space and the alignment of a wmma access.
fn check_access(base: u64, stride: u64, ty: Elem, regs: u32) -> Result<(), Failure> {
    match space_of(base) {
        Some(Space::Global | Space::Shared) => {}
        _ => return Err(Failure::Undefined { lane: 0, message: format!("wmma access at 0x{base:x}, which is not in .global or .shared memory") }),
    }
    let reg_bytes = if ty == Elem::F64 { 8 } else { 4 };
    let frag = regs as u64 * reg_bytes;
    let stride_bytes = stride * ty.bits() as u64 / 8;
    if base % frag != 0 || stride_bytes % frag != 0 {
        return Err(Failure::Undefined { lane: 0, message: format!("wmma rows must start at addresses aligned to the fragment size ({frag} bytes): address 0x{base:x}, stride {stride_bytes} bytes") });
    }
    Ok(())
}

pub fn execute(ins: &Instruction, inputs: &[LaneInputs], mem: &dyn Memory) -> Result<Completion, Failure> {
    let form = Form::parse(ins).map_err(|w| Failure::Unsupported(w.unwrap_or_else(|| "form".into())))?;
    let s = form.shape;
    match form.op {
        Op::Load(w) => {
            // Operands: r, [p], stride.
            let ty = form.types.d;
            let regs = registers(s, w, ty);
            let given = ins.operands.first().map(count_regs).unwrap_or(0);
            if given != regs as usize {
                return Err(Failure::Unsupported(format!("a fragment of {given} registers (this shape and type take {regs})")));
            }
            let (base, stride) = address_and_stride(inputs, 1, (inputs[0].ops.len() > 2).then_some(2), default_stride(s, w, form.row))?;
            check_access(base, stride, ty, regs)?;
            let slots = regs * ty.per_register();
            let mut results = Vec::with_capacity(32);
            for lane in 0..32u32 {
                let mut elems = Vec::with_capacity(slots as usize);
                for slot in 0..slots {
                    let (r, c) = slot_coord(s, w, lane, slot);
                    let (addr, bit) = place(base, stride, form.row, ty, r, c);
                    let len = (ty.bits() as usize).div_ceil(8);
                    let (bytes, q) = mem.read(lane as usize, addr, len)?;
                    let raw = bytes.iter().rev().fold(0u64, |v, b| v << 8 | *b as u64);
                    let mask = if ty.bits() == 64 { u64::MAX } else { (1u64 << ty.bits()) - 1 };
                    elems.push(((raw >> bit) & mask, q));
                }
                results.push(pack(&elems, ty));
            }
            Ok(Completion { results, writes: Vec::new() })
        }
        Op::Store => {
            // Operands: [p], r, stride.
            let ty = form.types.d;
            let regs = registers(s, Which::C, ty);
            let given = ins.operands.get(1).map(count_regs).unwrap_or(0);
            if given != regs as usize {
                return Err(Failure::Unsupported(format!("a fragment of {given} registers (this shape and type take {regs})")));
            }
            let (base, stride) = address_and_stride(inputs, 0, (inputs[0].ops.len() > 2).then_some(2), default_stride(s, Which::C, form.row))?;
            check_access(base, stride, ty, regs)?;
            let mut writes = Vec::new();
            let bytes = (ty.bits() / 8) as usize;
            for lane in 0..32u32 {
                for slot in 0..regs * ty.per_register() {
                    let (r, c) = slot_coord(s, Which::C, lane, slot);
                    let (v, q) = element(&inputs[lane as usize].ops[1], ty, slot).ok_or_else(|| Failure::Unsupported("fragment".into()))?;
                    let (addr, _) = place(base, stride, form.row, ty, r, c);
                    writes.push((lane as usize, addr, v.to_le_bytes()[..bytes].to_vec(), vec![q; bytes]));
                }
            }
            Ok(Completion { results: vec![Vec::new(); 32], writes })
        }
        Op::Mma => {
            let ty = form.types;
            let (rows_c, cols_c) = s.dims(Which::C);
            // Operands d, a, b, c: gather each matrix from the first copy of each slot.
            let gather = |w: Which, k: usize, ety: Elem| -> Result<Matrix, Failure> {
                let (rows, cols) = s.dims(w);
                let given = ins.operands.get(k).map(count_regs).unwrap_or(0);
                let regs = registers(s, w, ety);
                if given != regs as usize {
                    return Err(Failure::Unsupported(format!("a {w:?} fragment of {given} registers (this shape and type take {regs})")));
                }
                let mut m = Matrix::new(rows, cols);
                for lane in 0..32u32 {
                    for slot in 0..rows * cols / 32 {
                        let (r, c) = slot_coord(s, w, lane, slot);
                        let v = element(&inputs[lane as usize].ops[k], ety, slot).ok_or_else(|| Failure::Unsupported("fragment".into()))?;
                        m.set(r, c, v);
                    }
                }
                Ok(m)
            };
            let a = gather(Which::A, 1, ty.a)?;
            let b = gather(Which::B, 2, ty.b)?;
            let c = gather(Which::C, 3, ty.c)?;
            let given = ins.operands.first().map(count_regs).unwrap_or(0);
            let regs_d = registers(s, Which::C, ty.d);
            if given != regs_d as usize {
                return Err(Failure::Unsupported(format!("a D fragment of {given} registers (this shape and type take {regs_d})")));
            }
            if ty.a.is_float() != ty.c.is_float() || (ty.c == Elem::S32) != (ty.d == Elem::S32) {
                return Err(Failure::Unsupported("mixed integer and floating-point types".into()));
            }
            let d = multiply(&a, &b, &c, ty, form.satfinite, form.round, form.bit_op);
            let results = (0..32u32)
                .map(|lane| {
                    let elems: Vec<(u64, Quality)> = (0..rows_c * cols_c / 32).map(|slot| {
                        let (r, c) = slot_coord(s, Which::C, lane, slot);
                        d.get(r, c)
                    }).collect();
                    pack(&elems, ty.d)
                })
                .collect();
            Ok(Completion { results, writes: Vec::new() })
        }
    }
}

/// Registers named by a fragment operand (`{r0, r1, ...}`).
fn count_regs(o: &crate::ir::Operand) -> usize {
    match o {
        crate::ir::Operand::Vector(v) => v.len(),
        _ => 1,
    }
}
