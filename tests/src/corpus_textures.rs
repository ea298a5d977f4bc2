//! Default textures, samplers and surfaces for the corpus survey's generic
//! launch (a default of this test harness only: `ptx-opt run` asks for
//! every texture explicitly).
//!
//! Every texture or surface a kernel's code names — a module-scope
//! `.texref`/`.surfref`/`.tex` name, a `.param .texref` parameter, or a
//! `.u64` parameter loaded (`ld.param.u64`) into the register a texture
//! instruction uses as its handle — gets a small resource shaped by its
//! first use:
//! - a texture read by `tex`/`tld4`: the instruction's geometry (1d: 1024
//!   texels, 2d: 32×32, 3d: 8×8×8, arrays of 4 layers), four channels of
//!   the destination type (`.f32` → f32x4 of values in [-10, 10], `.u32`/`.s32`
//!   → u32x4/s32x4 of values in [0, 256) — kernels often use texels as
//!   indices —, `.f16` → f16x4), nearest filtering, clamp
//!   to the edge, unnormalized coordinates (which `.s32` and `.f32`
//!   coordinates both accept); only queried (`txq`): a 1d f32x4 texture;
//! - a surface: the geometry (1d: 1024 texels, 2d: 64×64, 3d: 16×16×16) of
//!   one u32 channel, values in [0, 256);
//! - a module `.samplerref` without an initializer: the default sampler.

use crate::gen::Choices;
use ptx_ir::interp::texture::{ChannelType, TexelFormat};
use ptx_ir::interp::{Binding, KernelArg, Launch, SamplerDesc, TexelData, TextureDesc};
use ptx_ir::ir::{FuncKind, Function, Initializer, Instruction, Item, Module, Operand, RegId, Stmt};
use ptx_ir::isa::{Opcode, ScalarType, StateSpace};

/// Where a handle operand comes from.
#[derive(Clone, PartialEq, Eq)]
enum Source {
    Module(String),
    Param(usize),
}

/// What a kernel's first use of a handle asks for.
#[derive(Clone, Copy)]
enum Want {
    Texture { dims: u8, array: bool, dtype: Option<ScalarType> },
    Surface { dims: u8, array: bool },
    Sampler,
}

fn geometry(ins: &Instruction) -> (u8, bool) {
    for m in ins.mods.iter() {
        match m.text() {
            ".1d" => return (1, false),
            ".2d" | ".2dms" | ".cube" => return (2, false),
            ".3d" => return (3, false),
            ".a1d" => return (1, true),
            ".a2d" | ".a2dms" | ".acube" => return (2, true),
            _ => {}
        }
    }
    (1, false)
}

/// The handle and sampler operands of a texture or surface instruction.
fn handle_operands(ins: &Instruction) -> (Option<&Operand>, Option<&Operand>) {
    let k = if matches!(ins.opcode, Opcode::SUST | Opcode::SURED) { 0 } else { 1 };
    match ins.operands.get(k) {
        Some(Operand::AddrList(v)) if v.len() == 3 => (Some(&v[0]), Some(&v[1])),
        Some(Operand::AddrList(v)) => (v.first(), None),
        Some(Operand::Addr(a)) => match &a.base {
            ptx_ir::ir::AddrBase::Sym(_) | ptx_ir::ir::AddrBase::Reg(_) => (Some(&ins.operands[k]), None),
            _ => (None, None),
        },
        other => (other, None),
    }
}

/// The kernel parameter or module name a register was loaded from.
fn register_source(f: &Function, r: RegId, params: &[String]) -> Option<Source> {
    for s in f.body.iter().flatten() {
        let Stmt::Instr(i) = s else { continue };
        if !matches!(i.operands.first(), Some(Operand::Reg(d)) if d.reg == r) {
            continue;
        }
        match (i.opcode, i.operands.get(1)) {
            (Opcode::LD, Some(Operand::Addr(a))) => {
                if let ptx_ir::ir::AddrBase::Sym(n) = &a.base {
                    if let Some(k) = params.iter().position(|p| **p == **n) {
                        return Some(Source::Param(k));
                    }
                }
            }
            (Opcode::MOV, Some(Operand::Sym(s))) => return Some(Source::Module(s.name.to_string())),
            _ => {}
        }
    }
    None
}

fn source_of(op: &Operand, f: &Function, params: &[String]) -> Option<Source> {
    match op {
        Operand::Sym(s) => Some(match params.iter().position(|p| **p == *s.name) {
            Some(k) => Source::Param(k),
            None => Source::Module(s.name.to_string()),
        }),
        Operand::Reg(r) => register_source(f, r.reg, params),
        Operand::Addr(a) => match &a.base {
            ptx_ir::ir::AddrBase::Sym(n) => source_of(&Operand::sym(n.clone(), 0), f, params),
            ptx_ir::ir::AddrBase::Reg(r) => register_source(f, *r, params),
            _ => None,
        },
        _ => None,
    }
}

fn texture_for(want: Want, seed: u64) -> Option<TextureDesc> {
    let (dims, array, fmt, sizes): (u8, bool, TexelFormat, [&[u32]; 3]) = match want {
        Want::Texture { dims, array, dtype } => {
            let channel = match dtype {
                Some(ScalarType::U32) => ChannelType::U32,
                Some(ScalarType::S32) => ChannelType::S32,
                Some(ScalarType::F16) => ChannelType::F16,
                _ => ChannelType::F32,
            };
            (dims, array, TexelFormat::new(channel, 4), [&[1024], &[32, 32], &[8, 8, 8]])
        }
        Want::Surface { dims, array } => (dims, array, TexelFormat::new(ChannelType::U32, 1), [&[1024], &[64, 64], &[16, 16, 16]]),
        Want::Sampler => return None,
    };
    let mut t = TextureDesc::new(fmt, sizes[dims as usize - 1]);
    if array {
        t.layers = Some(4);
    }
    let mut rng = Choices::seeded(seed);
    let n = t.byte_len();
    let bytes = match fmt.channel {
        ChannelType::F32 => (0..n / 4).flat_map(|_| ((rng.below(2001) as f32 - 1000.0) / 100.0).to_le_bytes()).collect(),
        // Halves in [-2, 2): sign, exponent 13..15, random mantissa.
        ChannelType::F16 => (0..n / 2).flat_map(|_| ((rng.below(2) << 15 | (13 + rng.below(3)) << 10 | rng.below(1024)) as u16).to_le_bytes()).collect(),
        // Small integers: kernels often use texels as indices.
        _ => (0..n / 4).flat_map(|_| (rng.below(256) as u32).to_le_bytes()).collect(),
    };
    t.data = TexelData::Bytes(bytes);
    Some(t)
}

/// Binds a default resource to every texture, sampler and surface kernel
/// `kernel` of `module` uses (see the module comment).
pub fn bind_default_textures(module: &Module, kernel: &str, launch: &mut Launch) {
    let Some(kf) = module.items.iter().find_map(|i| match i {
        Item::Func(f) if f.kind == FuncKind::Entry && &*f.name == kernel && f.body.is_some() => Some(f),
        _ => None,
    }) else {
        return;
    };
    let params: Vec<String> = kf.params.iter().flatten().flat_map(|d| d.names.iter().map(|n| n.name.to_string())).collect();
    // Module samplers with an initializer need no binding.
    let initialized: Vec<String> = module
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Var(g) => Some(g),
            _ => None,
        })
        .flat_map(|g| g.decl.names.iter())
        .filter(|n| matches!(n.init.as_deref(), Some(Initializer::Fields(_))))
        .map(|n| n.name.to_string())
        .collect();
    let opaque: Vec<String> = module
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Var(g) if matches!(g.decl.ty, ScalarType::Texref | ScalarType::Samplerref | ScalarType::Surfref) || g.decl.space == StateSpace::Tex => Some(g),
            _ => None,
        })
        .flat_map(|g| g.decl.names.iter().map(|n| n.name.to_string()))
        .collect();
    let param_types: Vec<ScalarType> = kf.params.iter().flatten().flat_map(|d| d.names.iter().map(|_| d.ty)).collect();
    let mut wants: Vec<(Source, Want)> = Vec::new();
    let funcs = module.items.iter().filter_map(|i| match i {
        Item::Func(f) if f.body.is_some() && (f.kind != FuncKind::Entry || &*f.name == kernel) => Some(f),
        _ => None,
    });
    for f in funcs {
        let fparams: &[String] = if &*f.name == kernel { &params } else { &[] };
        for s in f.body.iter().flatten() {
            let Stmt::Instr(ins) = s else { continue };
            let (dims, array) = geometry(ins);
            let want = match ins.opcode {
                Opcode::TEX | Opcode::TLD4 => Want::Texture { dims, array, dtype: ins.types().first().copied() },
                Opcode::TXQ => Want::Texture { dims: 1, array: false, dtype: None },
                Opcode::SULD | Opcode::SUST | Opcode::SURED | Opcode::SUQ => Want::Surface { dims, array },
                _ => continue,
            };
            let (handle, sampler) = handle_operands(ins);
            let mut add = |op: Option<&Operand>, want: Want| {
                let Some(src) = op.and_then(|o| source_of(o, f, fparams)) else { return };
                if let Source::Module(n) = &src {
                    if !opaque.contains(n) || initialized.contains(n) {
                        return;
                    }
                }
                // A declared .texref/.surfref/.samplerref gets its own kind, wherever it stands.
                let declared = match &src {
                    Source::Module(n) => module_type(module, n),
                    Source::Param(k) => param_types.get(*k).copied(),
                };
                let want = fit(declared, want);
                // A txq-only use yields to a later fetch's shape.
                match wants.iter_mut().find(|(s, _)| *s == src) {
                    Some((_, w @ Want::Texture { dtype: None, .. })) if matches!(want, Want::Texture { dtype: Some(_), .. }) => *w = want,
                    Some(_) => {}
                    None => wants.push((src, want)),
                }
            };
            // A txq of a module .samplerref is a sampler query.
            let want = match (ins.opcode, handle) {
                (Opcode::TXQ, Some(Operand::Sym(s))) if is_sampler(module, &s.name) => Want::Sampler,
                _ => want,
            };
            add(handle, want);
            add(sampler, Want::Sampler);
        }
    }
    // Opaque parameters the code does not use still take a handle of their kind.
    for (k, t) in param_types.iter().enumerate() {
        if matches!(t, ScalarType::Texref | ScalarType::Surfref | ScalarType::Samplerref) && !wants.iter().any(|(s, _)| *s == Source::Param(k)) {
            wants.push((Source::Param(k), fit(Some(*t), Want::Texture { dims: 1, array: false, dtype: None })));
        }
    }
    for (k, (src, want)) in wants.into_iter().enumerate() {
        let seed = 0x7e47 + k as u64;
        let binding = match (want, texture_for(want, seed)) {
            (Want::Sampler, _) | (_, None) => {
                launch.samplers.push(SamplerDesc::default());
                Binding::Sampler(launch.samplers.len() - 1)
            }
            (Want::Surface { .. }, Some(t)) => {
                launch.textures.push(t);
                Binding::Surface(launch.textures.len() - 1)
            }
            (_, Some(t)) => {
                launch.textures.push(t);
                Binding::Texture(launch.textures.len() - 1)
            }
        };
        match src {
            Source::Module(n) => launch.bindings.push((n, binding)),
            Source::Param(k) => {
                if k < launch.args.len() {
                    launch.args[k] = KernelArg::Handle(binding);
                }
            }
        }
    }
}

/// The declared type of a module variable.
fn module_type(module: &Module, name: &str) -> Option<ScalarType> {
    module.items.iter().find_map(|i| match i {
        Item::Var(g) if g.decl.names.iter().any(|n| &*n.name == name) => Some(if g.decl.space == StateSpace::Tex { ScalarType::Texref } else { g.decl.ty }),
        _ => None,
    })
}

/// `want` made to fit a handle of declared type `t` (an opaque type decides the kind).
fn fit(t: Option<ScalarType>, want: Want) -> Want {
    let (dims, array) = match want {
        Want::Texture { dims, array, .. } | Want::Surface { dims, array } => (dims, array),
        Want::Sampler => (1, false),
    };
    match (t, want) {
        (Some(ScalarType::Texref), Want::Texture { .. }) | (Some(ScalarType::Surfref), Want::Surface { .. }) | (Some(ScalarType::Samplerref), Want::Sampler) => want,
        (Some(ScalarType::Texref), _) => Want::Texture { dims, array, dtype: None },
        (Some(ScalarType::Surfref), _) => Want::Surface { dims, array },
        (Some(ScalarType::Samplerref), _) => Want::Sampler,
        _ => want,
    }
}

fn is_sampler(module: &Module, name: &str) -> bool {
    module.items.iter().any(|i| matches!(i, Item::Var(g) if g.decl.ty == ScalarType::Samplerref && g.decl.names.iter().any(|n| &*n.name == name)))
}
