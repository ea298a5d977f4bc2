//! `ptx-opt run --arg tmap:SPEC`: a tensor map (a `.param .align 64 .b8
//! name[128]` parameter) over one of the run's buffer arguments, parsed into
//! the interpreter's [`TensorMap`].
//!
//! A SPEC is comma-separated `key=value` items:
//! `buf=0,type=f16,dims=64x64,strides=128,box=16x16,swizzle=128B`.
//! Dimensions are listed innermost first; `strides` gives the byte strides
//! of dimensions 1 and up (one fewer than `dims`, default: packed rows).

use ptx_ir::interp::tensor::{Atomicity, ElemType, Fill, Swizzle, TensorMap};

/// A parsed `tmap:SPEC`.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorMapSpec {
    /// The `--arg` (0-based) whose buffer the map describes.
    pub arg: usize,
    /// Bytes from the buffer's start to the tensor's first element.
    pub offset: u64,
    pub map: TensorMap,
}

fn list(key: &str, v: &str) -> Result<Vec<u64>, String> {
    v.split('x').map(|p| p.trim().parse::<u64>().map_err(|_| format!("{key}=`{v}`: `{p}` is not a non-negative integer"))).collect()
}

/// Parses the SPEC after `tmap:`.
pub fn parse(spec: &str) -> Result<TensorMapSpec, String> {
    let err = |m: String| format!("`tmap:{spec}`: {m}");
    let (mut arg, mut offset, mut elem, mut dims, mut strides, mut boxes, mut estrides) = (None, 0u64, None, None, None, None, None);
    let (mut swizzle, mut atomicity, mut fill) = (Swizzle::None, Atomicity::B16, Fill::Zero);
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = item.split_once('=').ok_or_else(|| err(format!("`{item}` is not KEY=VALUE")))?;
        match k {
            "buf" => arg = Some(v.parse::<usize>().map_err(|_| err(format!("buf=`{v}` is not an argument index (0-based)")))?),
            "offset" => offset = v.parse().map_err(|_| err(format!("offset=`{v}` is not a byte count")))?,
            "type" => elem = Some(ElemType::from_name(v).ok_or_else(|| err(format!("type=`{v}` is not a tensor element type (u8 u16 u32 s32 u64 s64 f16 f32 f32.ftz f64 bf16 tf32 tf32.ftz)")))?),
            "dims" => dims = Some(list(k, v).map_err(err)?),
            "strides" => strides = Some(list(k, v).map_err(err)?),
            "box" => boxes = Some(list(k, v).map_err(err)?),
            "estrides" => estrides = Some(list(k, v).map_err(err)?),
            "swizzle" => {
                swizzle = match v {
                    "none" => Swizzle::None,
                    "32B" => Swizzle::B32,
                    "64B" => Swizzle::B64,
                    "128B" => Swizzle::B128,
                    _ => return Err(err(format!("swizzle=`{v}` is not none, 32B, 64B or 128B"))),
                }
            }
            "atomicity" => {
                atomicity = match v {
                    "16B" => Atomicity::B16,
                    "32B" => Atomicity::B32,
                    "64B" => Atomicity::B64,
                    _ => return Err(err(format!("atomicity=`{v}` is not 16B, 32B or 64B"))),
                }
            }
            "fill" => {
                fill = match v {
                    "zero" => Fill::Zero,
                    "nan" => Fill::OobNan,
                    _ => return Err(err(format!("fill=`{v}` is not zero or nan"))),
                }
            }
            _ => return Err(err(format!("unknown item `{item}`"))),
        }
    }
    let arg = arg.ok_or_else(|| err("buf=K (the buffer argument, 0-based) is required".into()))?;
    let elem = elem.ok_or_else(|| err("type=... is required".into()))?;
    let dims = dims.ok_or_else(|| err("dims=D0xD1... is required".into()))?;
    if dims.is_empty() || dims.len() > 5 {
        return Err(err(format!("{} dimensions (1 to 5)", dims.len())));
    }
    let rank = dims.len();
    let strides = match strides {
        Some(s) if s.len() != rank - 1 => return Err(err(format!("strides= takes {} value(s) (dimensions 1 to {}), {} given", rank - 1, rank - 1, s.len()))),
        Some(s) => s,
        None => (1..rank).map(|k| dims[..k].iter().product::<u64>() * elem.bytes() as u64).collect(),
    };
    let boxes = boxes.ok_or_else(|| err("box=B0xB1... is required".into()))?;
    if boxes.len() != rank {
        return Err(err(format!("box= takes {rank} value(s), {} given", boxes.len())));
    }
    let fits = |v: &[u64], what: &str| -> Result<Vec<u32>, String> { v.iter().map(|&x| u32::try_from(x).map_err(|_| err(format!("{what} {x} is too large")))).collect() };
    let mut map = TensorMap::new(elem, &dims, &strides, &fits(&boxes, "box dimension")?);
    if let Some(e) = estrides {
        if e.len() != rank {
            return Err(err(format!("estrides= takes {rank} value(s), {} given", e.len())));
        }
        for (k, v) in fits(&e, "traversal stride")?.into_iter().enumerate() {
            map.element_strides[k] = v;
        }
    }
    map.swizzle = swizzle;
    map.atomicity = atomicity;
    map.fill = fill;
    // The address is the buffer's; check the rest now.
    map.global_address = offset;
    map.check().map_err(|e| err(e.to_string()))?;
    map.global_address = 0;
    Ok(TensorMapSpec { arg, offset, map })
}

/// Resolves `buf=K` of every `tmap:` argument of `o` to its buffer.
pub fn bind(launch: &mut ptx_ir::interp::Launch, o: &crate::args::RunArgs) -> Result<(), String> {
    use crate::launch_args::ArgSpec;
    let buffer_of_arg = crate::launch_args::buffer_of_each_arg(&o.args);
    for (k, a) in o.args.iter().enumerate() {
        if let ArgSpec::TensorMap(s) = a {
            let buffer = buffer_of_arg.get(s.arg).copied().flatten().ok_or_else(|| format!("--arg {}: buf={} names no buffer argument (--arg {} counting from 0 must be buf:...)", k + 1, s.arg, s.arg))?;
            launch.args[k] = ptx_ir::interp::KernelArg::TensorMap { buffer, offset: s.offset, map: s.map.clone() };
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensor_map_specs() {
        let s = parse("buf=0,type=f16,dims=64x64,strides=128,box=16x16,swizzle=128B").unwrap();
        assert_eq!((s.arg, s.offset, s.map.rank, s.map.dims[..2].to_vec(), s.map.strides[0], s.map.box_dims[..2].to_vec()), (0, 0, 2, vec![64, 64], 128, vec![16, 16]));
        assert_eq!(s.map.swizzle, Swizzle::B128);
        // Packed strides by default; traversal strides, fill.
        let s = parse("buf=2,type=u32,dims=8x4x3,box=8x2x1,estrides=1x2x1,fill=zero,offset=64").unwrap();
        assert_eq!((s.map.strides[..2].to_vec(), s.map.element_strides[1], s.offset), (vec![32, 128], 2, 64));
    }

    #[test]
    fn bad_tensor_map_specs_say_what_is_wrong() {
        let e = |s| parse(s).unwrap_err();
        assert!(e("type=f16,dims=64,box=16").contains("buf=K"));
        assert!(e("buf=0,type=f17,dims=64,box=16").contains("not a tensor element type"));
        assert!(e("buf=0,type=f16,dims=64x64,strides=128x4,box=16x16").contains("strides= takes 1 value"));
        assert!(e("buf=0,type=f16,dims=64x64,box=16").contains("box= takes 2"));
        assert!(e("buf=0,type=f16,dims=64x64,strides=100,box=16x16").contains("multiple of 16"));
        assert!(e("buf=0,type=f16,dims=64x64,box=4x4").contains("multiple of 16 bytes"));
        assert!(e("buf=0,type=f16,dims=64x64,box=64x4,swizzle=64B").contains("wider than its 64-byte swizzle"));
        assert!(e("buf=0,type=u8,dims=64,box=16,fill=nan").contains("OOB-NaN"));
        assert!(e("buf=0,type=f16,dims=64,box=16,swizzle=16B").contains("not none, 32B"));
        assert!(e("buf=0,type=f16,dims=64,box=16,colour=red").contains("unknown item"));
    }
}
