//! `ptx-opt run`'s textures, samplers and surfaces: the SPEC of
//! `--arg tex:SPEC` / `surf:SPEC` / `sampler:SPEC` (kernel parameters) and of
//! `--texture`/`--surface`/`--sampler NAME:SPEC` (module-scope names), parsed
//! into the interpreter's [`TextureDesc`] and [`SamplerDesc`].
//!
//! A SPEC is a comma-separated list of `key=value` items and flags:
//! `format=f32x4,size=64x64,data=random:1,filter=linear,address=wrap/clamp,normalized`.
//! Lists inside a value are separated by `/`.

use ptx_ir::interp::texture::{AddressMode, ChannelType, Filter, TexelFormat};
use ptx_ir::interp::{SamplerDesc, TexelData, TextureDesc};

/// What kind of resource a SPEC describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResourceKind {
    Texture,
    Surface,
    Sampler,
}

impl ResourceKind {
    pub fn name(self) -> &'static str {
        match self {
            ResourceKind::Texture => "texture",
            ResourceKind::Surface => "surface",
            ResourceKind::Sampler => "sampler",
        }
    }
}

/// Where a texture's texels come from.
#[derive(Clone, Debug, PartialEq)]
pub enum DataSpec {
    Bytes(Vec<u8>),
    /// The bytes of the buffer `--arg` with this index (0-based, the JSON's `arg`).
    Arg(usize),
}

/// A parsed SPEC.
#[derive(Clone, Debug, PartialEq)]
pub enum ResourceSpec {
    /// A texture or surface; its `data` is [`TexelData::Bytes`] until
    /// [`ResourceSpec::data`]'s buffer argument is resolved.
    Texture { kind: ResourceKind, desc: TextureDesc, data: DataSpec },
    Sampler(SamplerDesc),
}

impl ResourceSpec {
    pub fn kind(&self) -> ResourceKind {
        match self {
            ResourceSpec::Texture { kind, .. } => *kind,
            ResourceSpec::Sampler(_) => ResourceKind::Sampler,
        }
    }
}

/// `--texture NAME:SPEC` and its kin: a module-scope name and its resource.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedResource {
    pub name: String,
    pub spec: ResourceSpec,
}

/// Parses `NAME:SPEC` for `kind`.
pub fn parse_named(kind: ResourceKind, s: &str) -> Result<NamedResource, String> {
    let (name, spec) = s.split_once(':').ok_or_else(|| format!("`{s}`: a {} is NAME:SPEC (the module's .{}ref name, then its description)", kind.name(), short(kind)))?;
    if name.is_empty() {
        return Err(format!("`{s}`: the name is empty"));
    }
    Ok(NamedResource { name: name.to_string(), spec: parse_spec(kind, spec)? })
}

macro_rules! named_parser {
    ($t:ident, $kind:expr) => {
        /// A `NAME:SPEC` option value of one kind.
        #[derive(Clone, Debug, PartialEq)]
        pub struct $t(pub NamedResource);
        impl std::str::FromStr for $t {
            type Err = String;
            fn from_str(s: &str) -> Result<$t, String> {
                parse_named($kind, s).map($t)
            }
        }
    };
}
named_parser!(TextureOpt, ResourceKind::Texture);
named_parser!(SurfaceOpt, ResourceKind::Surface);
named_parser!(SamplerOpt, ResourceKind::Sampler);

fn short(k: ResourceKind) -> &'static str {
    match k {
        ResourceKind::Texture => "tex",
        ResourceKind::Surface => "surf",
        ResourceKind::Sampler => "sampler",
    }
}

/// Parses a SPEC of `kind`.
pub fn parse_spec(kind: ResourceKind, spec: &str) -> Result<ResourceSpec, String> {
    let what = |m: String| format!("{} `{spec}`: {m}", kind.name());
    let mut format = None;
    let mut size: Option<Vec<u32>> = None;
    let mut layers = None;
    let mut data = None;
    let mut sampler = SamplerDesc::default();
    let mut normalized = false;
    let mut read_normalized = false;
    for item in spec.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (key, value) = item.split_once('=').unwrap_or((item, ""));
        let is_image = kind != ResourceKind::Sampler;
        let image_only = |k: &str| if is_image { Ok(()) } else { Err(what(format!("`{k}` describes a texture or surface, not a sampler"))) };
        let texture_only = |k: &str| if kind != ResourceKind::Surface { Ok(()) } else { Err(what(format!("`{k}` is a sampler setting; a surface has none"))) };
        match key {
            "format" => {
                image_only(key)?;
                format = Some(TexelFormat::from_name(value).ok_or_else(|| what(format!("`{value}` is not a texel format (CHANNEL or CHANNELxN: u8, s8, u16, s16, u32, s32, f16, f32; N is 1, 2 or 4)")))?);
            }
            "size" => {
                image_only(key)?;
                let dims: Result<Vec<u32>, _> = value.split('x').map(|d| d.parse::<u32>()).collect();
                match dims {
                    Ok(d) if (1..=3).contains(&d.len()) && d.iter().all(|&v| v > 0) => size = Some(d),
                    _ => return Err(what(format!("`{value}` is not a size (W, WxH or WxHxD, each at least 1)"))),
                }
            }
            "layers" => {
                image_only(key)?;
                layers = Some(value.parse::<u32>().ok().filter(|&n| n > 0).ok_or_else(|| what(format!("`{value}` is not a layer count (at least 1)")))?);
            }
            "data" => {
                image_only(key)?;
                data = Some(value.to_string());
            }
            "filter" => {
                texture_only(key)?;
                sampler.filter = Filter::from_name(value).ok_or_else(|| what(format!("`{value}` is not a filter (nearest or linear)")))?;
            }
            "address" => {
                texture_only(key)?;
                let modes: Vec<&str> = value.split('/').collect();
                if modes.is_empty() || modes.len() > 3 {
                    return Err(what(format!("`{value}` gives 1 to 3 address modes (one for every dimension, or one per dimension)")));
                }
                for (k, m) in modes.iter().enumerate() {
                    sampler.address[k] = AddressMode::from_name(m).ok_or_else(|| what(format!("`{m}` is not an address mode (wrap, mirror, clamp, border, clamp_ogl)")))?;
                }
                if modes.len() == 1 {
                    sampler.address = [sampler.address[0]; 3];
                }
            }
            "border" => {
                texture_only(key)?;
                let c: Result<Vec<f32>, _> = value.split('/').map(|v| v.parse::<f32>()).collect();
                match c {
                    Ok(c) if c.len() == 4 && c.iter().all(|v| v.is_finite()) => sampler.border.copy_from_slice(&c),
                    _ => return Err(what(format!("`{value}` is not a border colour (R/G/B/A, four finite numbers)"))),
                }
            }
            "normalized" if value.is_empty() && kind == ResourceKind::Texture => normalized = true,
            "unnormalized" if value.is_empty() && kind == ResourceKind::Sampler => sampler.force_unnormalized = true,
            "read" if kind == ResourceKind::Texture => {
                read_normalized = match value {
                    "element" => false,
                    "normalized" => true,
                    _ => return Err(what(format!("`{value}` is not a read mode (element or normalized)"))),
                }
            }
            _ => return Err(what(format!("unknown item `{item}` (a {} takes {})", kind.name(), keys(kind)))),
        }
    }
    if kind == ResourceKind::Sampler {
        return Ok(ResourceSpec::Sampler(sampler));
    }
    let format = format.ok_or_else(|| what("format=... is required".into()))?;
    let size = size.ok_or_else(|| what("size=... is required".into()))?;
    let mut desc = TextureDesc::new(format, &size);
    desc.layers = layers;
    desc.normalized_coords = normalized;
    desc.read_normalized = read_normalized;
    desc.sampler = sampler;
    let len = desc.byte_len();
    if len > 1 << 30 {
        return Err(what("the texels take more than 1 GiB".into()));
    }
    let data = match data.as_deref() {
        None | Some("zeros") => DataSpec::Bytes(vec![0; len]),
        Some(d) => parse_data(d, format, len).map_err(what)?,
    };
    if let DataSpec::Bytes(b) = &data {
        desc.data = TexelData::Bytes(b.clone());
    }
    Ok(ResourceSpec::Texture { kind, desc, data })
}

fn keys(kind: ResourceKind) -> &'static str {
    match kind {
        ResourceKind::Texture => "format=, size=, layers=, data=, filter=, address=, border=, normalized, read=",
        ResourceKind::Surface => "format=, size=, layers=, data=",
        ResourceKind::Sampler => "filter=, address=, border=, unnormalized",
    }
}

fn parse_data(d: &str, format: TexelFormat, len: usize) -> Result<DataSpec, String> {
    if let Some(k) = d.strip_prefix("arg:") {
        return k.parse().map(DataSpec::Arg).map_err(|_| format!("`{d}`: arg:K takes the index of a buffer --arg (0-based, as in the output's \"arg\")"));
    }
    if let Some(seed) = d.strip_prefix("random:") {
        let seed: u64 = seed.parse().map_err(|_| format!("`{d}`: random:SEED takes an integer seed"))?;
        let ty = channel_scalar(format.channel);
        let count = len / format.channel.bytes() as usize;
        return Ok(DataSpec::Bytes(crate::launch_args::random_bytes(ty, count, seed)));
    }
    if let Some(path) = d.strip_prefix("file:") {
        let b = std::fs::read(path).map_err(|e| format!("cannot read `{path}`: {e}"))?;
        if b.len() != len {
            return Err(format!("`{path}` has {} bytes, the texels {len}", b.len()));
        }
        return Ok(DataSpec::Bytes(b));
    }
    let vals: Vec<&str> = d.split('/').collect();
    let w = format.channel.bytes() as usize;
    if vals.len() * w != len {
        return Err(format!("{} values for {} channel values (texels × channels), separated by `/`", vals.len(), len / w));
    }
    let ty = channel_scalar(format.channel);
    let mut b = Vec::with_capacity(len);
    for v in vals {
        b.extend_from_slice(&crate::launch_args::value_bits(ty, v)?.to_le_bytes()[..w]);
    }
    Ok(DataSpec::Bytes(b))
}

fn channel_scalar(c: ChannelType) -> ptx_ir::isa::ScalarType {
    use ptx_ir::isa::ScalarType as T;
    match c {
        ChannelType::U8 => T::U8,
        ChannelType::S8 => T::S8,
        ChannelType::U16 => T::U16,
        ChannelType::S16 => T::S16,
        ChannelType::U32 => T::U32,
        ChannelType::S32 => T::S32,
        ChannelType::F16 => T::F16,
        ChannelType::F32 => T::F32,
    }
}

/// Adds the resources of `o` to `launch`: `--arg tex:...` (and kin) become
/// handle arguments, `--texture NAME:...` (and kin) bindings; `data=arg:K`
/// is resolved to buffer argument K's buffer.
pub fn bind(launch: &mut ptx_ir::interp::Launch, o: &crate::args::RunArgs) -> Result<(), String> {
    use crate::launch_args::ArgSpec;
    use ptx_ir::interp::{Binding, KernelArg};
    let buffer_of_arg = crate::launch_args::buffer_of_each_arg(&o.args);
    let add = |launch: &mut ptx_ir::interp::Launch, spec: &ResourceSpec, what: &str| -> Result<Binding, String> {
        Ok(match spec {
            ResourceSpec::Sampler(s) => {
                launch.samplers.push(*s);
                Binding::Sampler(launch.samplers.len() - 1)
            }
            ResourceSpec::Texture { kind, desc, data } => {
                let mut desc = desc.clone();
                if let DataSpec::Arg(k) = data {
                    let b = buffer_of_arg.get(*k).copied().flatten().ok_or_else(|| format!("{what}: data=arg:{k} names no buffer argument (--arg {k} counting from 0 must be buf:...)"))?;
                    desc.data = TexelData::Buffer(b);
                }
                launch.textures.push(desc);
                let i = launch.textures.len() - 1;
                if *kind == ResourceKind::Surface { Binding::Surface(i) } else { Binding::Texture(i) }
            }
        })
    };
    for (k, a) in o.args.iter().enumerate() {
        if let ArgSpec::Resource(spec) = a {
            let b = add(launch, spec, &format!("--arg {}", k + 1))?;
            launch.args[k] = KernelArg::Handle(b);
        }
    }
    let named = o.textures.iter().map(|x| &x.0).chain(o.surfaces.iter().map(|x| &x.0)).chain(o.samplers.iter().map(|x| &x.0));
    for n in named {
        if launch.bindings.iter().any(|(m, _)| *m == n.name) {
            return Err(format!("`{}` is bound twice", n.name));
        }
        let b = add(launch, &n.spec, &format!("`{}`", n.name))?;
        launch.bindings.push((n.name.clone(), b));
    }
    Ok(())
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texture_specs() {
        let ResourceSpec::Texture { desc, data, .. } = parse_spec(ResourceKind::Texture, "format=u8x4,size=2x1,data=1/2/3/4/5/6/7/8,filter=linear,address=wrap/clamp,normalized,read=normalized").unwrap() else { panic!() };
        assert_eq!(desc.format, TexelFormat::new(ChannelType::U8, 4));
        assert_eq!((desc.size, desc.dims), ([2, 1, 1], 2));
        assert_eq!(data, DataSpec::Bytes(vec![1, 2, 3, 4, 5, 6, 7, 8]));
        assert_eq!(desc.sampler.address[..2], [AddressMode::Wrap, AddressMode::ClampToEdge]);
        assert!(desc.normalized_coords && desc.read_normalized);
        assert_eq!(desc.sampler.filter, Filter::Linear);
        assert!(matches!(parse_spec(ResourceKind::Surface, "format=u32,size=4,data=arg:2"), Ok(ResourceSpec::Texture { data: DataSpec::Arg(2), .. })));
        assert_eq!(parse_spec(ResourceKind::Sampler, "filter=linear,unnormalized").unwrap(), ResourceSpec::Sampler(SamplerDesc { filter: Filter::Linear, force_unnormalized: true, ..SamplerDesc::default() }));
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        let e = |k, s| parse_spec(k, s).unwrap_err();
        assert!(e(ResourceKind::Texture, "size=4").contains("format=... is required"));
        assert!(e(ResourceKind::Texture, "format=f32x3,size=4").contains("is not a texel format"));
        assert!(e(ResourceKind::Texture, "format=f32,size=4x0").contains("is not a size"));
        assert!(e(ResourceKind::Texture, "format=f32,size=2,data=1/2/3").contains("3 values for 2 channel values"));
        assert!(e(ResourceKind::Texture, "format=f32,size=2,address=sideways").contains("`sideways` is not an address mode"));
        assert!(e(ResourceKind::Surface, "format=f32,size=2,filter=linear").contains("a surface has none"));
        assert!(e(ResourceKind::Sampler, "format=f32").contains("not a sampler"));
        assert!(e(ResourceKind::Texture, "format=f32,size=2,colour=red").contains("unknown item `colour=red`"));
        assert!(parse_named(ResourceKind::Texture, "format=f32").unwrap_err().contains("NAME:SPEC"));
    }
}
