//! Textures, samplers and surfaces of a launch (PTX ISA 8.7 §5.3, §9.7.10,
//! §9.7.11): what a launch gives ([`TextureDesc`], [`SamplerDesc`],
//! [`Binding`]), how they are bound to the module's `.texref`/`.samplerref`/
//! `.surfref`/`.tex` names and to kernel parameters (handles), and the
//! dispatch of the texture and surface instructions to [`fetch`] (tex, tld4,
//! txq, istypep) and [`surface`] (suld, sust, sured, suq). The sampling
//! arithmetic itself (address modes, filtering, texel formats) is in
//! [`sample`].
//!
//! Texel data live in global memory: each texture's bytes are an allocation
//! of their own, or a launch buffer ([`TexelData::Buffer`]), so surface
//! stores show in that buffer and every byte keeps its quality.
//!
//! A handle is a 64-bit value: the address of a module-scope opaque variable
//! (what `mov.u64 %rd, tex;` gives, as the manual says), or, for handles
//! passed as kernel arguments ([`crate::interp::KernelArg::Handle`]: texture
//! objects of bindless code, `.param .texref` parameters), a value in a range
//! of its own ([`handle_value`]).

mod fetch;
pub mod sample;
mod surface;

use super::exec::{Cta, Flow};
use super::memory::{Global, GLOBAL_BASE, GLOBAL_SLOT};
use super::program::VarLoc;
use super::{KernelArg, Launch, RunError};
use crate::ir::{ConstExpr, FuncKind, Initializer, Item, Module, Name, Operand, Stmt};
use crate::isa::{Opcode, ScalarType, StateSpace};
use rustc_hash::FxHashMap;

pub use sample::{AddressMode, ChannelType, Filter, TexelFormat};

/// Texel data of a texture or surface.
#[derive(Clone, Debug, PartialEq)]
pub enum TexelData {
    /// The bytes, row after row (x fastest, then y, then z, then the layer).
    Bytes(Vec<u8>),
    /// The bytes of launch buffer `k` (surface stores show there).
    Buffer(usize),
}

/// Sampler state: the manual's `filter_mode` and `addr_mode_{0,1,2}` (§5.3.2),
/// plus the border colour `clamp_to_border` gives and, for independent-mode
/// samplers, `force_unnormalized_coords`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SamplerDesc {
    pub filter: Filter,
    /// One per dimension (x, y, z).
    pub address: [AddressMode; 3],
    /// Channels r, g, b, a of the border colour (`clamp_to_border`).
    pub border: [f32; 4],
    /// `force_unnormalized_coords` (independent mode only, §5.3.2).
    pub force_unnormalized: bool,
}

impl Default for SamplerDesc {
    fn default() -> SamplerDesc {
        SamplerDesc { filter: Filter::Nearest, address: [AddressMode::ClampToEdge; 3], border: [0.0; 4], force_unnormalized: false }
    }
}

/// A texture (or surface) given to a launch.
#[derive(Clone, Debug, PartialEq)]
pub struct TextureDesc {
    pub format: TexelFormat,
    /// Width, height and depth in texels; only the first `dims` count.
    pub size: [u32; 3],
    /// 1, 2 or 3: the texture's dimensionality (`.1d`, `.2d`, `.3d`).
    pub dims: u8,
    /// `Some(n)`: an array of `n` layers (`.a1d`, `.a2d`).
    pub layers: Option<u32>,
    pub data: TexelData,
    /// `normalized_coords`: coordinates in [0, 1) rather than [0, N).
    pub normalized_coords: bool,
    /// Integer texels read as floats in [0, 1] (unsigned) or [-1, 1]
    /// (signed) — CUDA's `cudaReadModeNormalizedFloat`.
    pub read_normalized: bool,
    /// The texture's own sampler state (unified mode).
    pub sampler: SamplerDesc,
}

impl TextureDesc {
    /// A texture of `size` (1 to 3 dimensions) with zeroed texels and the default sampler.
    pub fn new(format: TexelFormat, size: &[u32]) -> TextureDesc {
        let mut s = [1u32; 3];
        for (k, v) in size.iter().take(3).enumerate() {
            s[k] = *v;
        }
        let mut t = TextureDesc { format, size: s, dims: size.len().clamp(1, 3) as u8, layers: None, data: TexelData::Bytes(Vec::new()), normalized_coords: false, read_normalized: false, sampler: SamplerDesc::default() };
        t.data = TexelData::Bytes(vec![0; t.byte_len()]);
        t
    }

    /// Texels in all layers.
    pub fn texel_count(&self) -> u64 {
        self.size.iter().take(self.dims as usize).map(|&v| v as u64).product::<u64>() * self.layers.unwrap_or(1) as u64
    }

    /// Bytes the texels take.
    pub fn byte_len(&self) -> usize {
        (self.texel_count() * self.format.bytes() as u64) as usize
    }

    /// `f32x4 64x64` for messages.
    pub fn describe(&self) -> String {
        let size: Vec<String> = self.size.iter().take(self.dims as usize).map(|v| v.to_string()).collect();
        let layers = self.layers.map_or(String::new(), |n| format!(" [{n} layers]"));
        format!("{} {}{layers}", self.format.name(), size.join("x"))
    }
}

/// A launch resource: an index into [`Launch::textures`] (textures and
/// surfaces) or [`Launch::samplers`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Binding {
    Texture(usize),
    Sampler(usize),
    Surface(usize),
}

impl Binding {
    fn kind(self) -> Kind {
        match self {
            Binding::Texture(_) => Kind::Texture,
            Binding::Sampler(_) => Kind::Sampler,
            Binding::Surface(_) => Kind::Surface,
        }
    }
}

/// What a handle names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Texture,
    Sampler,
    Surface,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Texture => "texture",
            Kind::Sampler => "sampler",
            Kind::Surface => "surface",
        }
    }

    fn of_type(t: ScalarType) -> Option<Kind> {
        match t {
            ScalarType::Texref => Some(Kind::Texture),
            ScalarType::Samplerref => Some(Kind::Sampler),
            ScalarType::Surfref => Some(Kind::Surface),
            _ => None,
        }
    }
}

/// Where handles given as kernel arguments live: `HANDLE_BASE + kind << 32 + index`,
/// outside every generic-address window.
pub const HANDLE_BASE: u64 = 0x0000_2000_0000_0000;

/// The 64-bit value a kernel argument [`KernelArg::Handle`] passes.
pub fn handle_value(b: Binding) -> u64 {
    let (kind, index) = match b {
        Binding::Texture(i) => (1u64, i),
        Binding::Sampler(i) => (2, i),
        Binding::Surface(i) => (3, i),
    };
    HANDLE_BASE + (kind << 32) + index as u64
}

fn binding_of_value(v: u64) -> Option<Binding> {
    let off = v.checked_sub(HANDLE_BASE)?;
    let (kind, index) = (off >> 32, (off & 0xffff_ffff) as usize);
    match kind {
        1 => Some(Binding::Texture(index)),
        2 => Some(Binding::Sampler(index)),
        3 => Some(Binding::Surface(index)),
        _ => None,
    }
}

/// A module-scope `.texref`/`.samplerref`/`.surfref` variable (or a PTX 1.x `.tex` name).
#[derive(Clone, Debug)]
struct ModuleHandle {
    kind: Kind,
    binding: Option<Binding>,
    /// Sampler state from the declaration's initializer (`= { filter_mode = linear }`).
    init: Option<SamplerDesc>,
}

/// The launch's textures, samplers and surfaces, bound to the module.
#[derive(Clone, Debug, Default)]
pub struct Resources {
    textures: Vec<TextureDesc>,
    samplers: Vec<SamplerDesc>,
    /// Global address of each texture's first texel.
    data_addr: Vec<u64>,
    names: FxHashMap<Name, ModuleHandle>,
    /// Addresses of module-scope opaque variables.
    by_addr: FxHashMap<u64, Name>,
    /// `.target texmode_independent`.
    independent: bool,
}

/// What a handle resolves to.
#[derive(Clone, Copy, Debug)]
pub enum Resolved {
    Texture(usize),
    Sampler(SamplerDesc),
    Surface(usize),
}

/// Texture and surface instructions.
pub fn handles(op: Opcode) -> bool {
    matches!(op, Opcode::TEX | Opcode::TLD4 | Opcode::TXQ | Opcode::ISTYPEP | Opcode::SULD | Opcode::SUST | Opcode::SURED | Opcode::SUQ)
}

/// Executes a texture or surface instruction.
pub fn execute(cta: &mut Cta, t: usize, ins: &crate::ir::Instruction, global: &mut Global) -> Result<Flow, RunError> {
    match ins.opcode {
        Opcode::TEX | Opcode::TLD4 => fetch::texture_fetch(cta, t, ins, global),
        Opcode::TXQ => fetch::query(cta, t, ins),
        Opcode::ISTYPEP => fetch::istypep(cta, t, ins),
        Opcode::SUQ => surface::query(cta, t, ins),
        _ => surface::access(cta, t, ins, global),
    }
}

impl Resources {
    /// Binds `launch`'s textures to `module`: places the texel data in
    /// global memory and checks every binding and handle argument.
    pub fn new(module: &Module, launch: &Launch, kernel: &crate::ir::Function, global: &mut Global, buffer_allocs: &[usize], globals: &FxHashMap<Name, VarLoc>) -> Result<Resources, String> {
        let mut r = Resources { textures: launch.textures.clone(), samplers: launch.samplers.clone(), independent: module.target.iter().any(|t| &**t == "texmode_independent"), ..Default::default() };
        for (k, tex) in launch.textures.iter().enumerate() {
            check_texture(k, tex, launch)?;
            let addr = match &tex.data {
                TexelData::Bytes(b) => global.alloc(format!("texture {k}"), b.clone()),
                TexelData::Buffer(i) => GLOBAL_BASE + buffer_allocs[*i] as u64 * GLOBAL_SLOT,
            };
            r.data_addr.push(addr);
        }
        for (k, s) in launch.samplers.iter().enumerate() {
            check_sampler(&format!("sampler {k}"), s, None)?;
        }
        // Module-scope opaque variables and `.tex` names.
        for item in &module.items {
            let Item::Var(g) = item else { continue };
            let kind = match (g.decl.space, Kind::of_type(g.decl.ty)) {
                (_, Some(k)) => k,
                (StateSpace::Tex, None) => Kind::Texture,
                _ => continue,
            };
            for n in &g.decl.names {
                let init = match n.init.as_deref() {
                    Some(Initializer::Fields(fields)) if kind != Kind::Surface => Some(sampler_of_fields(&n.name, fields)?),
                    _ => None,
                };
                if let Some(VarLoc::Global(a)) = globals.get(&n.name) {
                    r.by_addr.insert(*a, n.name.clone());
                }
                r.names.insert(n.name.clone(), ModuleHandle { kind, binding: None, init });
            }
        }
        for (name, b) in &launch.bindings {
            r.check_binding(b, launch).map_err(|m| format!("binding `{name}`: {m}"))?;
            let Some(h) = r.names.get_mut(name.as_str()) else {
                let mut known: Vec<String> = r.names.iter().map(|(n, h)| format!("{} `{n}`", h.kind.name())).collect();
                known.sort();
                let list = if known.is_empty() { "none".to_string() } else { known.join(", ") };
                return Err(format!("binding `{name}`: the module declares no texture, sampler or surface of that name (it declares: {list})"));
            };
            if h.kind != b.kind() {
                return Err(format!("binding `{name}`: `{name}` is a {}, the launch binds a {} to it", h.kind.name(), b.kind().name()));
            }
            h.binding = Some(*b);
        }
        for a in &launch.args {
            if let KernelArg::Handle(b) = a {
                r.check_binding(b, launch)?;
            }
        }
        // Kernel parameters of opaque types take handles of their kind.
        let decls = kernel.params.iter().flatten().flat_map(|d| d.names.iter().map(move |n| (d, n)));
        for (k, (a, (d, nm))) in launch.args.iter().zip(decls).enumerate() {
            if let Some(kind) = Kind::of_type(d.ty) {
                match a {
                    KernelArg::Handle(b) if b.kind() == kind => {}
                    _ => return Err(format!("parameter {k} (`{}`) is a .{}ref: pass a {} handle (KernelArg::Handle, `--arg {}:...`)", nm.name, kind_ref(kind), kind.name(), arg_prefix(kind))),
                }
            }
        }
        // Every module-scope name the kernel's code uses must be bound.
        let mut missing: Vec<String> = Vec::new();
        for item in &module.items {
            let Item::Func(f) = item else { continue };
            if f.kind == FuncKind::Entry && f.name != kernel.name {
                continue;
            }
            for s in f.body.iter().flatten() {
                let Stmt::Instr(ins) = s else { continue };
                if !handles(ins.opcode) {
                    continue;
                }
                ins.operands.iter().for_each(|o| {
                    o.for_each_operand(&mut |x| {
                        if let Operand::Sym(s) = x {
                            let n = &s.name;
                            if let Some(h) = r.names.get(n) {
                                if h.binding.is_none() && h.init.is_none() && !missing.iter().any(|m| m.ends_with(&format!("`{n}`"))) {
                                    missing.push(format!("{} `{n}`", h.kind.name()));
                                }
                            }
                        }
                    })
                });
            }
        }
        if !missing.is_empty() {
            return Err(format!("kernel `{}` uses {} the launch does not bind: {} (bind each with --texture/--sampler/--surface NAME:SPEC)", kernel.name, if missing.len() == 1 { "a name" } else { "names" }, missing.join(", ")));
        }
        Ok(r)
    }

    fn check_binding(&self, b: &Binding, launch: &Launch) -> Result<(), String> {
        let (n, len) = match b {
            Binding::Texture(i) | Binding::Surface(i) => (*i, launch.textures.len()),
            Binding::Sampler(i) => (*i, launch.samplers.len()),
        };
        if n >= len {
            let what = if matches!(b, Binding::Sampler(_)) { "samplers" } else { "textures" };
            return Err(format!("{} {n} does not exist (the launch has {len} {what})", b.kind().name()));
        }
        Ok(())
    }

    /// What a handle value names (an argument handle or the address of a module variable).
    pub fn resolve_value(&self, v: u64) -> Result<Resolved, String> {
        if let Some(b) = binding_of_value(v) {
            let ok = match b {
                Binding::Texture(i) | Binding::Surface(i) => i < self.textures.len(),
                Binding::Sampler(i) => i < self.samplers.len(),
            };
            if ok {
                return Ok(self.resolved(b));
            }
        }
        match self.by_addr.get(&v) {
            Some(name) => self.resolve_name(name).unwrap_or_else(|| Err(format!("0x{v:x} is not a handle"))),
            None => Err(format!("0x{v:x} is not a texture, sampler or surface handle (a .texref/.samplerref/.surfref address or a handle the launch passes)")),
        }
    }

    /// What a module-scope name names, if it is an opaque variable.
    pub fn resolve_name(&self, name: &str) -> Option<Result<Resolved, String>> {
        let h = self.names.get(name)?;
        Some(match (h.binding, h.init) {
            (Some(b), _) => Ok(self.resolved(b)),
            (None, Some(s)) if h.kind == Kind::Sampler => Ok(Resolved::Sampler(s)),
            _ => Err(format!("{} `{name}` is not bound by the launch", h.kind.name())),
        })
    }

    /// The kind of opaque variable at address `v`, if any.
    pub fn kind_of_value(&self, v: u64) -> Option<Kind> {
        if let Some(b) = binding_of_value(v) {
            let ok = match b {
                Binding::Texture(i) | Binding::Surface(i) => i < self.textures.len(),
                Binding::Sampler(i) => i < self.samplers.len(),
            };
            return ok.then(|| b.kind());
        }
        self.by_addr.get(&v).and_then(|n| self.names.get(n)).map(|h| h.kind)
    }

    fn resolved(&self, b: Binding) -> Resolved {
        match b {
            Binding::Texture(i) => Resolved::Texture(i),
            Binding::Surface(i) => Resolved::Surface(i),
            Binding::Sampler(i) => Resolved::Sampler(self.samplers[i]),
        }
    }

    pub fn texture(&self, i: usize) -> &TextureDesc {
        &self.textures[i]
    }

    pub fn data_addr(&self, i: usize) -> u64 {
        self.data_addr[i]
    }

    pub fn independent(&self) -> bool {
        self.independent
    }
}

fn kind_ref(k: Kind) -> &'static str {
    match k {
        Kind::Texture => "tex",
        Kind::Sampler => "sampler",
        Kind::Surface => "surf",
    }
}

fn arg_prefix(k: Kind) -> &'static str {
    match k {
        Kind::Texture => "tex",
        Kind::Sampler => "sampler",
        Kind::Surface => "surf",
    }
}

fn check_texture(k: usize, t: &TextureDesc, launch: &Launch) -> Result<(), String> {
    let what = format!("texture {k} ({})", t.describe());
    if !(1..=3).contains(&t.dims) {
        return Err(format!("{what}: a texture has 1, 2 or 3 dimensions, not {}", t.dims));
    }
    if t.size.iter().take(t.dims as usize).any(|&s| s == 0) || t.layers == Some(0) {
        return Err(format!("{what}: every dimension and the layer count must be at least 1"));
    }
    if t.layers.is_some() && t.dims == 3 {
        return Err(format!("{what}: arrays are of 1d or 2d textures"));
    }
    if t.texel_count() > 1 << 28 {
        return Err(format!("{what}: more than 2^28 texels"));
    }
    if ![1, 2, 4].contains(&t.format.count) {
        return Err(format!("{what}: a texel has 1, 2 or 4 channels, not {}", t.format.count));
    }
    let need = t.byte_len();
    let have = match &t.data {
        TexelData::Bytes(b) => b.len(),
        TexelData::Buffer(i) => match launch.buffers.get(*i) {
            Some(b) => b.len(),
            None => return Err(format!("{what}: its data is buffer {i}, but the launch has {} buffers", launch.buffers.len())),
        },
    };
    if have < need {
        return Err(format!("{what}: its data has {have} bytes, the texels need {need}"));
    }
    if t.read_normalized && !t.format.channel.normalizable() {
        return Err(format!("{what}: only 8- and 16-bit integer texels can be read as normalized floats"));
    }
    check_sampler(&what, &t.sampler, Some(t))
}

fn check_sampler(what: &str, s: &SamplerDesc, t: Option<&TextureDesc>) -> Result<(), String> {
    if let Some(t) = t {
        if !t.normalized_coords && s.address.iter().take(t.dims as usize).any(|m| matches!(m, AddressMode::Wrap | AddressMode::Mirror)) {
            return Err(format!("{what}: the wrap and mirror address modes need normalized coordinates"));
        }
        if s.filter == Filter::Linear && !(t.format.channel.is_float() || t.read_normalized) {
            return Err(format!("{what}: linear filtering needs floating-point texels or normalized-float reads"));
        }
    }
    if s.border.iter().any(|c| !c.is_finite()) {
        return Err(format!("{what}: the border colour must be finite"));
    }
    Ok(())
}

/// Sampler state from a declaration's initializer (§5.3: `filter_mode = nearest`,
/// `addr_mode_0 = clamp_to_border`, `force_unnormalized_coords = 1` ...); fields
/// the initializer leaves out keep their defaults (nearest, clamp_to_edge).
fn sampler_of_fields(name: &str, fields: &[(Name, ConstExpr)]) -> Result<SamplerDesc, String> {
    let mut s = SamplerDesc::default();
    for (field, value) in fields {
        let word = match value {
            ConstExpr::Sym(w) => w.to_string(),
            other => crate::parse::eval_int(other).map(|v| v.to_string()).unwrap_or_default(),
        };
        let bad = || format!("`{name}`: `{field} = {word}` is not a sampler setting the interpreter knows");
        match &**field {
            "filter_mode" => s.filter = Filter::from_name(&word).ok_or_else(bad)?,
            "addr_mode_0" | "addr_mode_1" | "addr_mode_2" => {
                let k = (field.as_bytes()[10] - b'0') as usize;
                s.address[k] = AddressMode::from_name(&word).ok_or_else(bad)?;
            }
            "force_unnormalized_coords" => {
                s.force_unnormalized = match word.as_str() {
                    "1" | "true" => true,
                    "0" | "false" => false,
                    _ => return Err(bad()),
                }
            }
            // Texture fields (width, normalized_coords ...) in a .texref initializer:
            // the launch's description gives them.
            _ => {}
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests;
