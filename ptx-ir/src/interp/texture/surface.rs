//! `suld`, `sust`, `sured` and `suq` (PTX ISA 8.7 §9.7.11) on a thread.
//!
//! A surface is a [`super::TextureDesc`] whose texels are rows of
//! `width × texel bytes` (then `height` rows per slice, `depth` slices per
//! layer). `.b` forms address bytes along x ("the lowest dimension
//! coordinate represents a byte offset ... not scaled"), `.p` forms samples.
//! Out-of-range coordinates follow the `.clamp` modifier: `.trap` stops the
//! run with a fault, `.clamp` uses the nearest location ("sized
//! appropriately": x is clamped to the last whole access in the row),
//! `.zero` loads zeros and drops stores; a form written without it (the
//! manual's examples do) traps. A coordinate not aligned to the access size
//! is undefined ("the access may proceed ... or the instruction may fault")
//! and is reported.
//!
//! Modelled: `suld.b`, `sust.b`, `sust.p` to surfaces of 32-bit channels
//! (f32/u32/s32: the .b32 data are stored as they are; channels the vector
//! does not give are written with unspecified values, as the manual says),
//! `sured.b`, `sured.p` with `.b32` on u32/s32 surfaces, `suq`. Unsupported:
//! `suld.p` (removed in PTX 3.0, not in the 8.7 manual), formatted stores
//! that convert (8- and 16-bit channels), `sured.p.b64`.

use super::fetch::{read_values, resolve, Access, Geometry};
use super::sample::ChannelType;
use super::{Resolved, TextureDesc};
use crate::eval::{Quality, Val};
use crate::interp::exec::{instruction_head, Cta, Flow};
use crate::interp::memory::{from_bytes, to_bytes, worst, Fault, Global};
use crate::interp::RunError;
use crate::ir::{Instruction, Operand};
use crate::isa::{Mod, Opcode, ScalarType, TypeClass};
use smallvec::SmallVec;

/// `.trap`, `.clamp`, `.zero`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OutOfRange {
    Trap,
    Clamp,
    Zero,
}

/// Where an access lands: the byte address, or nothing (`.zero` out of range).
#[allow(clippy::too_many_arguments)]
fn locate(cta: &Cta, t: usize, ins: &Instruction, surf: &TextureDesc, base: u64, geom: Geometry, coords: &[u32], x_scale: u64, size: u64) -> Result<Option<u64>, RunError> {
    let mode = if ins.has(Mod::CLAMP) {
        OutOfRange::Clamp
    } else if ins.has(Mod::ZERO) {
        OutOfRange::Zero
    } else {
        OutOfRange::Trap
    };
    let need = geom.dims + geom.array as usize;
    if coords.len() < need {
        return Err(cta.unsupported(t, &format!("{} (a coordinate vector of {} elements, {need} needed)", instruction_head(ins), coords.len())));
    }
    let (layer, c) = if geom.array { (coords[0] as i64, &coords[1..need]) } else { (0, &coords[..need]) };
    let texel = surf.format.bytes() as u64;
    let row = surf.size[0] as u64 * texel;
    let x = c[0] as i32 as i64 * x_scale as i64;
    if x.rem_euclid(size as i64) != 0 {
        return Err(cta.undefined(t, &format!("{}: x = {x} bytes is not a multiple of the access size {size}", instruction_head(ins))));
    }
    // Each coordinate and its limit (exclusive).
    let mut at: SmallVec<[(i64, i64); 4]> = SmallVec::new();
    at.push((x, (row as i64 - size as i64) / size as i64 * size as i64 + 1));
    for (k, v) in c.iter().enumerate().take(geom.dims).skip(1) {
        at.push((*v as i32 as i64, surf.size[k] as i64));
    }
    at.push((layer, surf.layers.unwrap_or(1) as i64));
    if row < size {
        return Err(cta.undefined(t, &format!("{}: a {size}-byte access to a surface row of {row} bytes", instruction_head(ins))));
    }
    let outside = at.iter().any(|&(v, lim)| v < 0 || v >= lim);
    if outside {
        match mode {
            OutOfRange::Trap => {
                let list: Vec<String> = c.iter().map(|v| (*v as i32).to_string()).collect();
                return Err(cta.fault(t, Fault { message: format!("{}: coordinates ({}) are outside surface ({}); .trap", instruction_head(ins), list.join(", "), surf.describe()) }));
            }
            OutOfRange::Zero => return Ok(None),
            OutOfRange::Clamp => {
                for (v, lim) in at.iter_mut() {
                    *v = (*v).clamp(0, *lim - 1);
                }
            }
        }
    }
    let (x, y, z) = (at[0].0 as u64, if geom.dims > 1 { at[1].0 as u64 } else { 0 }, if geom.dims > 2 { at[2].0 as u64 } else { 0 });
    let layer = at[at.len() - 1].0 as u64;
    let offset = ((layer * surf.size[2] as u64 + z) * surf.size[1] as u64 + y) * row + x;
    Ok(Some(base + offset))
}

/// `suld`, `sust`, `sured`.
pub fn access(cta: &mut Cta, t: usize, ins: &Instruction, global: &mut Global) -> Result<Flow, RunError> {
    let head = instruction_head(ins);
    let unsupported = |cta: &Cta, why: &str| cta.unsupported(t, &format!("{head} ({why})"));
    let geom = Geometry::of(ins).map_err(|w| unsupported(cta, w))?;
    let op = ins.opcode;
    let addr_k = if op == Opcode::SULD { 1 } else { 0 };
    let Some(Access { handle, coords, sampler: None }) = Access::of(ins, addr_k).filter(|a| matches!(ins.operands[addr_k], Operand::AddrList(_)) && a.sampler.is_none()) else {
        return Err(unsupported(cta, "its operands"));
    };
    let Resolved::Surface(si) = resolve(cta, t, ins, handle)? else {
        return Err(cta.fault(t, Fault { message: format!("{head}: the handle is not a surface") }));
    };
    let surf = cta.p.resources.texture(si).clone();
    let base = cta.p.resources.data_addr(si);
    geom.check(&surf).map_err(|m| cta.undefined(t, &format!("{head}: {m}")))?;
    let (c, cq) = read_values(cta, t, ins, coords)?;
    cta.note_dependence(t, cq, "surface coordinate");
    let ty = ins.types().last().copied().unwrap_or(ScalarType::B32);
    let vec = ins.vector().unwrap_or(1) as usize;
    let elem = (ty.bits() / 8) as usize;
    let formatted = ins.has(Mod::P);
    let texel = surf.format.bytes() as u64;
    match op {
        Opcode::SULD => {
            if formatted {
                return Err(unsupported(cta, "suld.p, removed in PTX ISA 3.0"));
            }
            let size = (vec * elem) as u64;
            let at = locate(cta, t, ins, &surf, base, geom, &c, 1, size)?;
            let mut vals: SmallVec<[Val; 5]> = SmallVec::new();
            for k in 0..vec {
                let v = match at {
                    Some(a) => {
                        let mut buf = [0u8; 8];
                        let q = global.read(a + (k * elem) as u64, &mut buf[..elem]).map_err(|f| cta.fault(t, f))?;
                        Val { bits: from_bytes(&buf[..elem]), quality: q }
                    }
                    None => Val::exact(0),
                };
                vals.push(v);
            }
            cta.write_collective(t, ins, &vals)?;
        }
        Opcode::SUST => {
            let mut v: SmallVec<[Val; 6]> = SmallVec::new();
            cta.read_operand(t, ins, 1, &ins.operands[1], &mut v)?;
            if formatted {
                // §9.7.11.2: the .b32 values are R, G, B, A of one sample, in the surface's format.
                let ok = matches!(surf.format.channel, ChannelType::F32 | ChannelType::U32 | ChannelType::S32);
                let typed_ok = match ty {
                    ScalarType::B32 => true,
                    ScalarType::F32 => surf.format.channel == ChannelType::F32,
                    ScalarType::U32 => surf.format.channel == ChannelType::U32,
                    ScalarType::S32 => surf.format.channel == ChannelType::S32,
                    _ => false,
                };
                if !ok || !typed_ok {
                    return Err(unsupported(cta, &format!("a formatted store of {} data to a {} surface (format conversion)", ty.text(), surf.format.name())));
                }
                let Some(a) = locate(cta, t, ins, &surf, base, geom, &c, texel, texel)? else { return Ok(Flow::Next) };
                for k in 0..surf.format.count as usize {
                    let (bits, q) = match v.get(k) {
                        Some(x) => (x.bits, worst(x.quality, cq)),
                        // "Surface sample components that do not occur in the source
                        // vector will be written with an unpredictable value."
                        None => (0, Quality::Unspecified),
                    };
                    global.write(a + 4 * k as u64, &to_bytes(bits, 4), q).map_err(|f| cta.fault(t, f))?;
                }
            } else {
                let size = (vec * elem) as u64;
                let Some(a) = locate(cta, t, ins, &surf, base, geom, &c, 1, size)? else { return Ok(Flow::Next) };
                for (k, x) in v.iter().take(vec).enumerate() {
                    global.write(a + (k * elem) as u64, &to_bytes(x.bits, elem), worst(x.quality, cq)).map_err(|f| cta.fault(t, f))?;
                }
            }
        }
        _ => reduce(cta, t, ins, global, &surf, base, geom, &c, cq)?,
    }
    Ok(Flow::Next)
}

/// `sured` (§9.7.11.3): `.add` (u32, u64, s32), `.min`/`.max` (u32, s32, u64,
/// s64), `.and`/`.or` (b32) on byte-addressed data; `.p` on sample-addressed
/// data, `.b32` read as u32 or s32 by the surface's format.
#[allow(clippy::too_many_arguments)]
fn reduce(cta: &mut Cta, t: usize, ins: &Instruction, global: &mut Global, surf: &TextureDesc, base: u64, geom: Geometry, c: &[u32], cq: Quality) -> Result<(), RunError> {
    let head = instruction_head(ins);
    let mut ty = ins.types().last().copied().unwrap_or(ScalarType::B32);
    let texel = surf.format.bytes() as u64;
    let (scale, formatted) = if ins.has(Mod::P) { (texel, true) } else { (1, false) };
    if formatted {
        let ch = surf.format.channel;
        ty = match (ty, ch) {
            (ScalarType::B32 | ScalarType::U32, ChannelType::U32) => ScalarType::U32,
            (ScalarType::B32 | ScalarType::S32, ChannelType::S32) => ScalarType::S32,
            _ => return Err(cta.unsupported(t, &format!("{head} (sample-addressed {} data on a {} surface)", ty.text(), surf.format.name()))),
        };
    }
    let size = (ty.bits() / 8) as u64;
    let mut v: SmallVec<[Val; 6]> = SmallVec::new();
    cta.read_operand(t, ins, 1, &ins.operands[1], &mut v)?;
    let b = v.first().copied().unwrap_or(Val::unspecified());
    let Some(a) = locate(cta, t, ins, surf, base, geom, c, scale, size)? else { return Ok(()) };
    let mut buf = [0u8; 8];
    let oq = global.read(a, &mut buf[..size as usize]).map_err(|f| cta.fault(t, f))?;
    let old = from_bytes(&buf[..size as usize]);
    let bits = ty.bits();
    let mask = crate::eval::bits_mask(bits);
    let bv = b.bits & mask;
    let signed = ty.class() == TypeClass::Signed;
    let less = |x: u128, y: u128| if signed { crate::eval::sext(x, bits) < crate::eval::sext(y, bits) } else { x < y };
    let text = |m: &str| ins.mods.iter().any(|x| x.text() == m);
    let new = if text(".add") {
        old.wrapping_add(bv) & mask
    } else if text(".min") {
        if less(bv, old) { bv } else { old }
    } else if text(".max") {
        if less(old, bv) { bv } else { old }
    } else if text(".and") {
        old & bv
    } else if text(".or") {
        old | bv
    } else {
        return Err(cta.unsupported(t, &head));
    };
    global.write(a, &to_bytes(new, size as usize), worst(worst(oq, b.quality), cq)).map_err(|f| cta.fault(t, f))?;
    Ok(())
}

/// `suq` (§9.7.11.4): the surface's size and array size; the channel data
/// type and order and the memory layout are unspecified.
pub fn query(cta: &mut Cta, t: usize, ins: &Instruction) -> Result<Flow, RunError> {
    let handle = match &ins.operands[1] {
        Operand::AddrList(v) if v.len() == 1 => &v[0],
        other => other,
    };
    let Resolved::Surface(si) = resolve(cta, t, ins, handle)? else {
        return Err(cta.fault(t, Fault { message: format!("{}: the handle is not a surface", instruction_head(ins)) }));
    };
    let s = cta.p.resources.texture(si);
    let dim = |k: usize| if (k as u8) < s.dims { Val::exact(s.size[k] as u128) } else { Val::unspecified() };
    let what = ins.mods.iter().map(|m| m.text()).find(|m| *m != ".b32").unwrap_or("");
    let v = match what {
        ".width" => dim(0),
        ".height" => dim(1),
        ".depth" => dim(2),
        ".array_size" => Val::exact(s.layers.unwrap_or(0) as u128),
        _ => Val::unspecified(),
    };
    cta.write_collective(t, ins, &[v])?;
    Ok(Flow::Next)
}
