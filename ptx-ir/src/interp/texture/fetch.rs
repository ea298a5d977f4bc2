//! `tex`, `tld4`, `txq` and `istypep` (PTX ISA 8.7 §9.7.10.3-6) on a
//! thread: operands in, results out; the sampling is [`super::sample`].
//!
//! Modelled: geometries 1d, 2d, 3d, a1d and a2d; `.f32` coordinates
//! (nearest and linear filtering, normalized or not) and `.s32` coordinates
//! (texel indices: nearest, unnormalized); destination types `.f32`, `.u32`,
//! `.s32` and `.f16` where the texel format reads as that type without a
//! conversion the manual leaves open; the offset operand `e`; the optional
//! destination predicate (always true: every texel is resident); `.base`,
//! `.level` and `.grad`, which read level 0 — a launch's textures have one
//! level, and every LOD of a texture with one level selects it. Channels the
//! texel format lacks are unspecified, and so is a texel the launch has
//! overwritten (through a buffer or a surface): the texture cache is not
//! coherent with the launch's own stores. Stopping as unsupported: cube maps,
//! multisample textures, depth compare (`f`), `.v2.f16x2`.

use super::sample::{self, AddressMode, Filter, Plan, Readout};
use super::{Kind, Resolved, TextureDesc};
use crate::eval::{Quality, Val};
use crate::interp::exec::{Cta, Flow};
use crate::interp::memory::{worst, Global};
use crate::interp::program::VarLoc;
use crate::interp::RunError;
use crate::ir::{AddrBase, Instruction, Operand};
use crate::isa::{Mod, Opcode, ScalarType};
use smallvec::SmallVec;

/// Geometry of a texture or surface instruction: dimensions, and whether
/// the first coordinate is a layer index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub dims: usize,
    pub array: bool,
}

impl Geometry {
    /// The geometry modifier of `ins`, or the unsupported one's name.
    pub fn of(ins: &Instruction) -> Result<Geometry, &'static str> {
        for m in ins.mods.iter() {
            let g = match m.text() {
                ".1d" => Geometry { dims: 1, array: false },
                ".2d" => Geometry { dims: 2, array: false },
                ".3d" => Geometry { dims: 3, array: false },
                ".a1d" => Geometry { dims: 1, array: true },
                ".a2d" => Geometry { dims: 2, array: true },
                ".cube" => return Err("cube-map textures (.cube)"),
                ".acube" => return Err("cube-map array textures (.acube)"),
                ".2dms" => return Err("multisample textures (.2dms)"),
                ".a2dms" => return Err("multisample texture arrays (.a2dms)"),
                _ => continue,
            };
            return Ok(g);
        }
        Err("a texture instruction without a geometry")
    }

    /// Checks that texture or surface `t` has this geometry.
    pub fn check(self, t: &TextureDesc) -> Result<(), String> {
        if t.dims as usize != self.dims || t.layers.is_some() != self.array {
            let want = format!("{}{}d", if self.array { "a" } else { "" }, self.dims);
            let have = format!("{}{}d", if t.layers.is_some() { "a" } else { "" }, t.dims);
            return Err(format!("a .{want} access to a {have} texture or surface ({}): the manual defines no result", t.describe()));
        }
        Ok(())
    }
}

/// The handle, optional sampler and coordinate operands of a texture or surface access.
pub struct Access<'i> {
    pub handle: &'i Operand,
    pub sampler: Option<&'i Operand>,
    pub coords: &'i Operand,
}

impl<'i> Access<'i> {
    /// `[a, c]`, `[a, b, c]`, or the PTX 1.x spelling `a, c` at operand `k`.
    pub fn of(ins: &'i Instruction, k: usize) -> Option<Access<'i>> {
        match ins.operands.get(k)? {
            Operand::AddrList(v) if v.len() == 2 => Some(Access { handle: &v[0], sampler: None, coords: &v[1] }),
            Operand::AddrList(v) if v.len() == 3 => Some(Access { handle: &v[0], sampler: Some(&v[1]), coords: &v[2] }),
            h @ Operand::Sym(_) => Some(Access { handle: h, sampler: None, coords: ins.operands.get(k + 1)? }),
            _ => None,
        }
    }
}

/// What a handle operand names.
pub fn resolve(cta: &Cta, t: usize, ins: &Instruction, op: &Operand) -> Result<Resolved, RunError> {
    let res = &cta.p.resources;
    let value = match op {
        Operand::Sym(s) if s.offset == 0 => {
            let name = &s.name;
            let f = cta.threads[t].frames.last().unwrap();
            if let Some(VarLoc::Param(off)) = cta.p.funcs[f.func].lookup(name, f.pc) {
                let mut b = [0u8; 8];
                let q = f.params.read(off, &mut b).map_err(|e| cta.fault(t, e))?;
                cta.note_dependence(t, q, "texture handle");
                u64::from_le_bytes(b)
            } else {
                return match res.resolve_name(name) {
                    Some(r) => r.map_err(RunError::Launch),
                    None => Err(cta.unsupported(t, &format!("{} on `{name}`, which is no texture, sampler or surface", ins.opcode.name()))),
                };
            }
        }
        Operand::Addr(a) if a.offset == 0 => match &a.base {
            AddrBase::Sym(name) => return resolve(cta, t, ins, &Operand::sym(name.clone(), 0)),
            AddrBase::Reg(r) => return resolve(cta, t, ins, &Operand::reg(*r)),
            AddrBase::Imm(v) => *v,
        },
        Operand::Reg(r) => {
            // The whole register: the form gives the bracketed operand no type.
            let x = cta.reg(t, r.reg, 0);
            cta.note_dependence(t, x.quality, "texture handle");
            x.bits as u64
        }
        _ => return Err(cta.unsupported(t, &format!("{} with this handle operand", ins.opcode.name()))),
    };
    res.resolve_value(value).map_err(|m| cta.fault(t, crate::interp::memory::Fault { message: m }))
}

/// The values of a coordinate (or offset) operand and their worst quality.
pub fn read_values(cta: &Cta, t: usize, ins: &Instruction, op: &Operand) -> Result<(SmallVec<[u32; 6]>, Quality), RunError> {
    let mut v: SmallVec<[Val; 6]> = SmallVec::new();
    cta.read_operand(t, ins, 1, op, &mut v)?;
    let q = v.iter().fold(Quality::Exact, |a, x| worst(a, x.quality));
    Ok((v.iter().map(|x| x.bits as u32).collect(), q))
}

fn readout(t: ScalarType) -> Option<Readout> {
    match t {
        ScalarType::F32 => Some(Readout::F32),
        ScalarType::F16 => Some(Readout::F16),
        ScalarType::U32 => Some(Readout::U32),
        ScalarType::S32 => Some(Readout::S32),
        _ => None,
    }
}

/// `tex` and `tld4`.
pub fn texture_fetch(cta: &mut Cta, t: usize, ins: &Instruction, global: &Global) -> Result<Flow, RunError> {
    let head = crate::interp::exec::instruction_head(ins);
    let unsupported = |cta: &Cta, why: &str| cta.unsupported(t, &format!("{head} ({why})"));
    let geom = Geometry::of(ins).map_err(|w| unsupported(cta, w))?;
    let gather = ins.opcode == Opcode::TLD4;
    let types = ins.types();
    let (dtype, ctype) = match types.as_slice() {
        [d, c] => (*d, *c),
        _ => return Err(unsupported(cta, "its types")),
    };
    let out = readout(dtype).ok_or_else(|| unsupported(cta, &format!("{} results", dtype.text())))?;
    if !matches!(ctype, ScalarType::F32 | ScalarType::S32) {
        return Err(unsupported(cta, &format!("{} coordinates", ctype.text())));
    }
    let Some(access) = Access::of(ins, 1) else { return Err(unsupported(cta, "its operands")) };
    // Extra operands after the texture operand, by their names in the form.
    let mut offsets: SmallVec<[i64; 4]> = SmallVec::new();
    let mut extra_quality = Quality::Exact;
    let first_extra = if matches!(ins.operands[1], Operand::AddrList(_)) { 2 } else { 3 };
    for k in first_extra..ins.operands.len() {
        let name = ins.form.operands().get(k).map_or("", |o| o.name);
        let op = &ins.operands[k];
        match name {
            // Level 0 is the only level; the LOD and gradients select it whatever their values.
            "lod" | "dPdx" | "dPdy" => {}
            "e" if matches!(op, Operand::Vector(_)) => {
                let (v, q) = read_values(cta, t, ins, op)?;
                extra_quality = worst(extra_quality, q);
                for x in v {
                    let o = x as i32 as i64;
                    if !(-8..=7).contains(&o) {
                        return Err(cta.undefined(t, &format!("texture offset {o} is outside the manual's range -8 to +7")));
                    }
                    offsets.push(o);
                }
            }
            _ => return Err(unsupported(cta, "depth compare")),
        }
    }
    let Resolved::Texture(ti) = resolve(cta, t, ins, access.handle)? else {
        return Err(cta.fault(t, crate::interp::memory::Fault { message: format!("{head}: the handle is not a texture") }));
    };
    let sampler = match access.sampler {
        Some(s) => match resolve(cta, t, ins, s)? {
            Resolved::Sampler(s) => Some(s),
            _ => return Err(cta.fault(t, crate::interp::memory::Fault { message: format!("{head}: the sampler operand is not a sampler") })),
        },
        None => None,
    };
    let res = &cta.p.resources;
    let tex = res.texture(ti).clone();
    geom.check(&tex).map_err(|m| cta.undefined(t, &format!("{head}: {m}")))?;
    let (s, normalized) = match sampler {
        Some(s) => (s, tex.normalized_coords && !s.force_unnormalized),
        None => (tex.sampler, tex.normalized_coords),
    };
    let (coords, coord_quality) = read_values(cta, t, ins, access.coords)?;
    let need = geom.dims + geom.array as usize;
    if coords.len() < need {
        return Err(unsupported(cta, &format!("a coordinate vector of {} elements, {need} needed", coords.len())));
    }
    cta.note_dependence(t, coord_quality, "texture coordinate");
    let (layer, c) = if geom.array { (coords[0], &coords[1..need]) } else { (0, &coords[..need]) };
    let layers = tex.layers.unwrap_or(1);
    // The manual does not say what an array index past the last layer reads.
    let layer_ok = layer < layers;
    let layer = layer.min(layers - 1);
    let size: SmallVec<[u32; 3]> = tex.size[..geom.dims].iter().copied().collect();
    let modes: SmallVec<[AddressMode; 3]> = s.address[..geom.dims].iter().copied().collect();
    let mut coord_finite = true;
    let plan: Plan = if ctype == ScalarType::S32 {
        if s.filter == Filter::Linear || normalized {
            return Err(unsupported(cta, "integer coordinates on a texture with linear filtering or normalized coordinates"));
        }
        let i: SmallVec<[i64; 3]> = c.iter().enumerate().map(|(k, &x)| x as i32 as i64 + offsets.get(k).copied().unwrap_or(0)).collect();
        if gather {
            return Err(unsupported(cta, "integer coordinates"));
        }
        sample::plan_int(&i, &size, &modes)
    } else {
        let u: SmallVec<[f64; 3]> = c
            .iter()
            .enumerate()
            .map(|(k, &x)| {
                let x = f32::from_bits(x) as f64;
                coord_finite &= x.is_finite();
                let x = if x.is_finite() { x } else { 0.0 };
                (if normalized { x * size[k] as f64 } else { x }) + offsets.get(k).copied().unwrap_or(0) as f64
            })
            .collect();
        if gather {
            if geom.dims != 2 {
                return Err(unsupported(cta, "tld4 of this geometry"));
            }
            sample::plan_gather([u[0], u[1]], [size[0], size[1]], [modes[0], modes[1]])
        } else {
            sample::plan_float(&u, &size, &modes, s.filter)
        }
    };
    // The texels the plan reads: raw channels and the quality of their bytes.
    let fmt = tex.format;
    let texel_bytes = fmt.bytes() as usize;
    let mut texels: SmallVec<[Texel; 8]> = SmallVec::new();
    for tap in &plan.taps {
        match tap.at {
            Some([x, y, z]) => {
                let index = (((layer as u64 * tex.size[2] as u64 + z as u64) * tex.size[1] as u64 + y as u64) * tex.size[0] as u64) + x as u64;
                let addr = res.data_addr(ti) + index * texel_bytes as u64;
                let mut buf = [0u8; 16];
                let q = global.read(addr, &mut buf[..texel_bytes]).map_err(|f| cta.fault(t, f))?;
                // The texture cache is not coherent with stores of the same launch: a
                // texel the launch has overwritten reads as an unspecified value.
                let start = (index * texel_bytes as u64) as usize;
                let initial = match &tex.data {
                    super::TexelData::Bytes(b) => b.get(start..start + texel_bytes),
                    super::TexelData::Buffer(k) => cta.launch.buffers.get(*k).and_then(|b| b.get(start..start + texel_bytes)),
                };
                let q = if initial == Some(&buf[..texel_bytes]) { q } else { Quality::Unspecified };
                texels.push((Some(fmt.channels(&buf[..texel_bytes])), q, tap.weight));
            }
            None => texels.push((None, Quality::Exact, tap.weight)),
        }
    }
    let comp = if gather {
        ["r", "g", "b", "a"].iter().position(|c| ins.mods.iter().any(|m| m.text() == format!(".{c}"))).unwrap_or(0)
    } else {
        0
    };
    let mut results: SmallVec<[Val; 5]> = SmallVec::new();
    for k in 0..4 {
        let v = if gather {
            // Component `comp` of each footprint texel.
            let (raw, q, _) = texels[k];
            convert(cta, t, &head, &tex, s.border, comp, raw, q, out)?
        } else if texels.len() == 1 {
            let (raw, q, _) = texels[0];
            convert(cta, t, &head, &tex, s.border, k, raw, q, out)?
        } else {
            linear(cta, t, &head, &tex, s.border, k, &texels, geom.dims)?
        };
        let exact_inputs = plan.ambiguous || !layer_ok || !coord_finite || coord_quality != Quality::Exact || extra_quality != Quality::Exact;
        results.push(if exact_inputs { Val { bits: v.bits, quality: Quality::Unspecified } } else { v });
    }
    // The destination predicate: the texels are resident.
    results.push(Val::exact(1));
    cta.write_collective(t, ins, &results)?;
    Ok(Flow::Next)
}

/// A texel a fetch read: its raw channels (None: the border colour), the
/// quality of its bytes and its weight.
type Texel = (Option<[u64; 4]>, Quality, f64);

/// Channel `k` of one texel (or the border colour) as the destination type.
#[allow(clippy::too_many_arguments)]
fn convert(cta: &Cta, t: usize, head: &str, tex: &TextureDesc, border: [f32; 4], k: usize, raw: Option<[u64; 4]>, q: Quality, out: Readout) -> Result<Val, RunError> {
    let fmt = tex.format;
    if k >= fmt.count as usize {
        // The manual does not say what the channels a format lacks read as.
        return Ok(Val::unspecified());
    }
    let unsupported = |why: String| cta.unsupported(t, &format!("{head} ({why})"));
    let ch = fmt.channel;
    Ok(match out {
        Readout::F32 => match raw {
            None => Val::exact(border[k].to_bits() as u128),
            Some(r) => match (ch, tex.read_normalized) {
                (sample::ChannelType::F32, _) => Val { bits: r[k] as u32 as u128, quality: q },
                (sample::ChannelType::F16, _) => {
                    let v = sample::f16_to_f64(r[k] as u16) as f32;
                    Val { bits: v.to_bits() as u128, quality: if v.is_nan() { worst(q, Quality::AnyNan) } else { q } }
                }
                (c, true) if c.normalizable() => {
                    let v = sample::channel_float(r[k], c, true).unwrap() as f32;
                    Val { bits: v.to_bits() as u128, quality: worst(q, sample::normalized_quality(r[k], c)) }
                }
                _ => return Err(unsupported(format!("{} texels read as .f32 without normalized-float reads", ch.name()))),
            },
        },
        Readout::U32 | Readout::S32 => {
            if ch.is_float() || tex.read_normalized || ch.is_signed() != (out == Readout::S32) {
                return Err(unsupported(format!("{}{} texels read as {}", ch.name(), if tex.read_normalized { " (normalized)" } else { "" }, if out == Readout::S32 { ".s32" } else { ".u32" })));
            }
            match raw {
                Some(r) => Val { bits: r[k] as u32 as u128, quality: q },
                None if border[k] == 0.0 => Val::exact(0),
                None => return Err(unsupported("a non-zero border colour read as an integer".into())),
            }
        }
        Readout::F16 => {
            if ch != sample::ChannelType::F16 || tex.read_normalized {
                return Err(unsupported(format!("{} texels read as .f16", ch.name())));
            }
            match raw {
                Some(r) => Val { bits: r[k] as u16 as u128, quality: q },
                None if border[k] == 0.0 => Val::exact(border[k].to_bits() as u128 >> 16),
                None => return Err(unsupported("a non-zero border colour read as .f16".into())),
            }
        }
    })
}

/// Channel `k` of a linear blend of texels.
#[allow(clippy::too_many_arguments)]
fn linear(cta: &Cta, t: usize, head: &str, tex: &TextureDesc, border: [f32; 4], k: usize, texels: &[Texel], dims: usize) -> Result<Val, RunError> {
    if k >= tex.format.count as usize {
        return Ok(Val::unspecified());
    }
    let mut values: SmallVec<[(f64, f64); 8]> = SmallVec::new();
    let mut q = Quality::Exact;
    for (raw, tq, w) in texels {
        let v = match raw {
            None => border[k] as f64,
            Some(r) => {
                if tex.read_normalized {
                    q = worst(q, sample::normalized_quality(r[k], tex.format.channel));
                }
                match sample::channel_float(r[k], tex.format.channel, tex.read_normalized) {
                    Some(v) => v,
                    None => return Err(cta.unsupported(t, &format!("{head} (linear filtering of integer texels)"))),
                }
            }
        };
        q = worst(q, *tq);
        values.push((v, *w));
    }
    let (r, bq) = sample::blend(&values, dims);
    Ok(Val { bits: r.to_bits() as u128, quality: worst(q, bq) })
}

/// `txq` (§9.7.10.5): texture attributes from the launch's description,
/// sampler attributes from the texture (unified mode) or the sampler.
/// Values the interpreter cannot know are unspecified: the channel data
/// type and order (enums of the source language's API), a dimension the
/// texture does not have, attributes of a level other than 0.
pub fn query(cta: &mut Cta, t: usize, ins: &Instruction) -> Result<Flow, RunError> {
    let head = crate::interp::exec::instruction_head(ins);
    let what = ins.mods.iter().map(|m| m.text()).find(|m| !matches!(*m, ".level" | ".b32")).unwrap_or("");
    let handle = match &ins.operands[1] {
        Operand::AddrList(v) if v.len() == 1 => &v[0],
        other => other,
    };
    let mut lod_ok = true;
    if ins.has(Mod::LEVEL) {
        let (v, q) = read_values(cta, t, ins, &ins.operands[2])?;
        lod_ok = q == Quality::Exact && v.first() == Some(&0);
    }
    let resolved = resolve(cta, t, ins, handle)?;
    let independent = cta.p.resources.independent();
    let exact = |v: u32| Val::exact(v as u128);
    let sampler_query = |s: &super::SamplerDesc| -> Option<Val> {
        Some(match what {
            ".filter_mode" => exact(s.filter.query_value()),
            ".addr_mode_0" => exact(s.address[0].query_value()),
            ".addr_mode_1" => exact(s.address[1].query_value()),
            ".addr_mode_2" => exact(s.address[2].query_value()),
            _ => return None,
        })
    };
    let v = match resolved {
        Resolved::Texture(i) => {
            let tex = cta.p.resources.texture(i);
            let dim = |k: usize| if (k as u8) < tex.dims { exact(tex.size[k]) } else { Val::unspecified() };
            match what {
                ".width" => dim(0),
                ".height" => dim(1),
                ".depth" => dim(2),
                ".normalized_coords" => exact(tex.normalized_coords as u32),
                ".array_size" => exact(tex.layers.unwrap_or(0)),
                ".num_mipmap_levels" | ".num_samples" => exact(0),
                ".channel_data_type" | ".channel_order" | ".force_unnormalized_coords" => Val::unspecified(),
                // Independent mode: a .texref's sampler fields are ignored (§5.3, Table 11).
                _ if independent => Val::unspecified(),
                _ => sampler_query(&tex.sampler).ok_or_else(|| cta.unsupported(t, &head))?,
            }
        }
        Resolved::Sampler(s) => match what {
            ".force_unnormalized_coords" => exact(s.force_unnormalized as u32),
            _ => sampler_query(&s).ok_or_else(|| cta.unsupported(t, &format!("{head} (a texture attribute of a sampler)")))?,
        },
        Resolved::Surface(_) => return Err(cta.unsupported(t, &format!("{head} (txq of a surface)"))),
    };
    let v = if lod_ok { v } else { Val { bits: v.bits, quality: Quality::Unspecified } };
    cta.write_collective(t, ins, &[v])?;
    Ok(Flow::Next)
}

/// `istypep` (§9.7.10.6): whether the register holds a handle of the type.
pub fn istypep(cta: &mut Cta, t: usize, ins: &Instruction) -> Result<Flow, RunError> {
    let mut v: SmallVec<[Val; 6]> = SmallVec::new();
    cta.read_operand(t, ins, 1, &ins.operands[1], &mut v)?;
    let x = v.first().copied().unwrap_or(Val::unspecified());
    let want = if ins.has(Mod::TEXREF) {
        Kind::Texture
    } else if ins.has(Mod::SAMPLERREF) {
        Kind::Sampler
    } else {
        Kind::Surface
    };
    let is = cta.p.resources.kind_of_value(x.bits as u64) == Some(want);
    let quality = if x.quality == Quality::Exact { Quality::Exact } else { Quality::Unspecified };
    cta.write_collective(t, ins, &[Val { bits: is as u128, quality }])?;
    Ok(Flow::Next)
}
