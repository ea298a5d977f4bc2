//! The values of `ptx-opt run`'s options: `--arg` specs (scalars, buffers,
//! by-value bytes) and `--grid`/`--block` dimensions, parsed from text.

use ptx_ir::isa::{ScalarType, TypeClass};

/// A parsed `--arg`.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgSpec {
    Scalar { ty: ScalarType, bits: u128 },
    Buffer { ty: ScalarType, bytes: Vec<u8> },
    /// A parameter passed by value as bytes (a struct).
    Bytes(Vec<u8>),
    /// A texture, surface or sampler handle (`tex:SPEC`, `surf:SPEC`, `sampler:SPEC`).
    Resource(crate::texture_args::ResourceSpec),
    /// A tensor map over a buffer argument (`tmap:SPEC`).
    TensorMap(crate::tensor_map_args::TensorMapSpec),
}

impl std::str::FromStr for ArgSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<ArgSpec, String> {
        parse_arg(s)
    }
}

/// `--grid`/`--block`: X[,Y[,Z]], each at least 1 (missing ones are 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims(pub [u32; 3]);

impl std::str::FromStr for Dims {
    type Err = String;
    fn from_str(s: &str) -> Result<Dims, String> {
        dims(s).map(Dims)
    }
}

fn dims(s: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("takes X[,Y[,Z]], found `{s}`"));
    }
    let mut d = [1u32; 3];
    for (k, p) in parts.iter().enumerate() {
        d[k] = p.trim().parse().map_err(|_| format!("`{p}` is not a positive integer"))?;
        if d[k] == 0 {
            return Err("dimensions must be at least 1".to_string());
        }
    }
    Ok(d)
}

fn scalar_type(s: &str) -> Result<ScalarType, String> {
    let t = ScalarType::from_text(&format!(".{s}")).ok_or_else(|| format!("`{s}` is not a PTX type (u32, s64, f32, b16 ...)"))?;
    if matches!(t.class(), TypeClass::Opaque) || t == ScalarType::Pred {
        return Err(format!("`{s}` cannot be a kernel argument"));
    }
    Ok(t)
}

/// The bits of one value of type `ty` written as text.
pub fn value_bits(ty: ScalarType, v: &str) -> Result<u128, String> {
    let bits = ty.bits();
    let mask = if bits >= 128 { u128::MAX } else { (1u128 << bits) - 1 };
    let v = v.trim();
    let hex = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X"));
    if let Some(h) = hex {
        return u128::from_str_radix(h, 16).map(|x| x & mask).map_err(|_| format!("`{v}` is not a hexadecimal number"));
    }
    match ty.class() {
        TypeClass::Float => {
            let f: f64 = v.parse().map_err(|_| format!("`{v}` is not a number"))?;
            Ok(match ty {
                ScalarType::F64 => f.to_bits() as u128,
                ScalarType::F32 => (f as f32).to_bits() as u128,
                _ => ptx_ir::eval::imm_bits(&ptx_ir::ir::Imm::Float(ptx_ir::ir::FloatLit::F64(f.to_bits())), ty),
            })
        }
        TypeClass::Signed => {
            let x: i128 = v.parse().map_err(|_| format!("`{v}` is not an integer"))?;
            let min = -(1i128 << (bits - 1));
            let max = (1i128 << (bits - 1)) - 1;
            if x < min || x > max {
                return Err(format!("{v} does not fit in {}", ty.text()));
            }
            Ok(x as u128 & mask)
        }
        _ => {
            if let Some(neg) = v.strip_prefix('-') {
                let x: i128 = neg.parse().map_err(|_| format!("`{v}` is not an integer"))?;
                return Ok((-x) as u128 & mask);
            }
            let x: u128 = v.parse().map_err(|_| format!("`{v}` is not an integer"))?;
            if bits < 128 && x > mask {
                return Err(format!("{v} does not fit in {}", ty.text()));
            }
            Ok(x)
        }
    }
}

/// For each `--arg`, the launch buffer it makes: buffer arguments get
/// buffers 0, 1, ... in order; other arguments none.
pub fn buffer_of_each_arg(args: &[ArgSpec]) -> Vec<Option<usize>> {
    let mut next = 0;
    args.iter()
        .map(|a| {
            matches!(a, ArgSpec::Buffer { .. }).then(|| {
                next += 1;
                next - 1
            })
        })
        .collect()
}

/// Parses one `--arg`.
pub fn parse_arg(spec: &str) -> Result<ArgSpec, String> {
    if let Some(rest) = spec.strip_prefix("buf:") {
        let (head, init) = rest.split_once('=').ok_or_else(|| format!("`{spec}`: a buffer is buf:TYPE:COUNT=INIT"))?;
        let (ty, count) = head.split_once(':').ok_or_else(|| format!("`{spec}`: a buffer is buf:TYPE:COUNT=INIT"))?;
        let ty = scalar_type(ty)?;
        let count: usize = count.parse().map_err(|_| format!("`{spec}`: `{count}` is not an element count"))?;
        let size = (ty.bits().max(8) / 8) as usize;
        if count.checked_mul(size).is_none_or(|n| n > 1 << 30) {
            return Err(format!("`{spec}`: the buffer is too large"));
        }
        let bytes = if init == "zeros" {
            vec![0; count * size]
        } else if let Some(seed) = init.strip_prefix("random:") {
            let seed: u64 = seed.parse().map_err(|_| format!("`{spec}`: random:SEED takes an integer seed"))?;
            random_bytes(ty, count, seed)
        } else if let Some(path) = init.strip_prefix("file:") {
            let b = std::fs::read(path).map_err(|e| format!("`{spec}`: cannot read `{path}`: {e}"))?;
            if b.len() != count * size {
                return Err(format!("`{spec}`: `{path}` has {} bytes, the buffer {}", b.len(), count * size));
            }
            b
        } else {
            let vals: Vec<&str> = init.split(',').collect();
            if vals.len() != count {
                return Err(format!("`{spec}`: {} values for {count} elements", vals.len()));
            }
            let mut b = Vec::with_capacity(count * size);
            for v in vals {
                b.extend_from_slice(&value_bits(ty, v)?.to_le_bytes()[..size]);
            }
            b
        };
        return Ok(ArgSpec::Buffer { ty, bytes });
    }
    use crate::texture_args::{parse_spec, ResourceKind};
    for (prefix, kind) in [("tex:", ResourceKind::Texture), ("surf:", ResourceKind::Surface), ("sampler:", ResourceKind::Sampler)] {
        if let Some(rest) = spec.strip_prefix(prefix) {
            return parse_spec(kind, rest).map(ArgSpec::Resource);
        }
    }
    if let Some(rest) = spec.strip_prefix("tmap:") {
        return crate::tensor_map_args::parse(rest).map(ArgSpec::TensorMap);
    }
    if let Some(hex) = spec.strip_prefix("bytes:") {
        let hex: String = hex.chars().filter(|c| *c != '_').collect();
        if hex.is_empty() || !hex.len().is_multiple_of(2) || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
            return Err(format!("`{spec}`: bytes:HEX takes an even number of hex digits, two per byte in memory order"));
        }
        let bytes = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
        return Ok(ArgSpec::Bytes(bytes));
    }
    let (ty, v) = spec.split_once(':').ok_or_else(|| format!("`{spec}`: an argument is TYPE:VALUE, buf:TYPE:COUNT=INIT, bytes:HEX, tex:SPEC, surf:SPEC, sampler:SPEC or tmap:SPEC"))?;
    let ty = scalar_type(ty)?;
    Ok(ArgSpec::Scalar { ty, bits: value_bits(ty, v)? })
}

/// Deterministic values: integers get random bits, floats uniform values in [-1, 1).
pub fn random_bytes(ty: ScalarType, count: usize, seed: u64) -> Vec<u8> {
    let mut s = seed ^ 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        // splitmix64
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let size = (ty.bits().max(8) / 8) as usize;
    let mut out = Vec::with_capacity(count * size);
    for _ in 0..count {
        let r = next();
        let bits: u128 = match ty {
            ScalarType::F32 => ((((r >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0) as f32).to_bits() as u128,
            ScalarType::F64 => ((((r >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0).to_bits()) as u128,
            _ if ty.class() == TypeClass::Float => ptx_ir::eval::imm_bits(&ptx_ir::ir::Imm::Float(ptx_ir::ir::FloatLit::F64(((((r >> 11) as f64) / (1u64 << 53) as f64) * 2.0 - 1.0).to_bits())), ty),
            _ => r as u128 | ((next() as u128) << 64),
        };
        out.extend_from_slice(&bits.to_le_bytes()[..size]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_specs() {
        assert_eq!(parse_arg("u32:1000"), Ok(ArgSpec::Scalar { ty: ScalarType::U32, bits: 1000 }));
        assert_eq!(parse_arg("s64:-3"), Ok(ArgSpec::Scalar { ty: ScalarType::S64, bits: (-3i64 as u64) as u128 }));
        assert_eq!(parse_arg("f32:0.5"), Ok(ArgSpec::Scalar { ty: ScalarType::F32, bits: 0x3f00_0000 }));
        assert_eq!(parse_arg("f64:0x3ff0000000000000"), Ok(ArgSpec::Scalar { ty: ScalarType::F64, bits: 0x3ff0_0000_0000_0000 }));
        assert_eq!(parse_arg("buf:u32:4=1,2,3,4"), Ok(ArgSpec::Buffer { ty: ScalarType::U32, bytes: vec![1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0] }));
        assert_eq!(parse_arg("buf:u32:2=zeros"), Ok(ArgSpec::Buffer { ty: ScalarType::U32, bytes: vec![0; 8] }));
        assert_eq!(parse_arg("buf:f32:3=random:7"), parse_arg("buf:f32:3=random:7"));
        assert!(parse_arg("buf:u32:3=1,2").is_err());
        assert!(parse_arg("u8:300").is_err());
        assert!(parse_arg("q32:1").is_err());
        assert!(parse_arg("buf:f32:2=random:x").is_err());
    }

    #[test]
    fn dimensions() {
        assert_eq!("4".parse(), Ok(Dims([4, 1, 1])));
        assert_eq!("4, 2,3".parse(), Ok(Dims([4, 2, 3])));
        assert!("0".parse::<Dims>().is_err());
        assert!("1,2,3,4".parse::<Dims>().is_err());
        assert!("x".parse::<Dims>().is_err());
    }
}
