//! The JSON that `ptx-opt run` prints: every buffer argument's values
//! after the run, floats with their bit patterns, and which elements the
//! program does not determine exactly; then, when the kernel called
//! `printf`, what it printed.

use ptx_ir::eval::Quality;
use ptx_ir::isa::{ScalarType, TypeClass};
use std::fmt::Write as _;

/// `[{"arg": 0, "type": "f32", "values": [...], "bits": [...]}, ...]`; floats
/// print as numbers in the shortest form that reads back to the same value
/// (non-finite ones as the strings `"inf"`, `"-inf"` and `"nan"`: JSON has no
/// number for them), their bit patterns as hex strings; `"inexact"` lists elements whose value the program does not
/// determine exactly (unspecified NaN payloads, approximations, values the
/// manual leaves open).
pub fn buffers_json(types: &[(usize, ScalarType)], buffers: &[ptx_ir::interp::BufferOut]) -> String {
    let mut s = String::from("[\n");
    for (k, ((arg, ty), b)) in types.iter().zip(buffers).enumerate() {
        let size = (ty.bits().max(8) / 8) as usize;
        let mut values = Vec::new();
        let mut bits = Vec::new();
        let mut inexact = Vec::new();
        for (i, c) in b.bytes.chunks(size).enumerate() {
            let mut a = [0u8; 16];
            a[..c.len()].copy_from_slice(c);
            let v = u128::from_le_bytes(a);
            values.push(format_value(*ty, v));
            bits.push(format!("\"{v:#0w$x}\"", w = size * 2 + 2));
            if b.quality[i * size..(i * size + c.len()).min(b.quality.len())].iter().any(|q| *q != Quality::Exact) {
                inexact.push(i.to_string());
            }
        }
        let _ = write!(s, "  {{\"arg\": {arg}, \"type\": \"{}\", \"values\": [{}]", &ty.text()[1..], values.join(", "));
        if ty.class() == TypeClass::Float {
            let _ = write!(s, ", \"bits\": [{}]", bits.join(", "));
        }
        if !inexact.is_empty() {
            let _ = write!(s, ", \"inexact\": [{}]", inexact.join(", "));
        }
        s.push('}');
        if k + 1 < types.len() {
            s.push(',');
        }
        s.push('\n');
    }
    s.push_str("]\n");
    s
}

/// [`buffers_json`] followed, when the kernel printed something, by one
/// more element: `{"printed": [{"thread": "ctaid (0,0,0) tid (1,0,0)",
/// "text": "..."}, ...]}` in the order the interpreter ran the `printf`
/// calls; `"inexact": true` marks a text that shows a value the program does
/// not determine exactly.
pub fn run_json(types: &[(usize, ScalarType)], out: &ptx_ir::interp::RunOutput) -> String {
    let mut s = buffers_json(types, &out.buffers);
    if out.printed.is_empty() {
        return s;
    }
    s.truncate(s.len() - "]\n".len());
    if !types.is_empty() {
        s.truncate(s.len() - 1);
        s.push_str(",\n");
    }
    s.push_str("  {\"printed\": [\n");
    for (k, p) in out.printed.iter().enumerate() {
        let _ = write!(s, "    {{\"thread\": {}, \"text\": {}", serde_json::Value::from(p.thread.as_str()), serde_json::Value::from(p.text.as_str()));
        if !p.exact {
            s.push_str(", \"inexact\": true");
        }
        s.push_str(if k + 1 < out.printed.len() { "},\n" } else { "}\n" });
    }
    s.push_str("  ]}\n]\n");
    s
}

fn format_float(f: f64) -> String {
    if f.is_nan() {
        "\"nan\"".into()
    } else if f.is_infinite() {
        if f > 0.0 { "\"inf\"".into() } else { "\"-inf\"".into() }
    } else {
        format!("{f:?}")
    }
}

fn format_value(ty: ScalarType, v: u128) -> String {
    match ty {
        ScalarType::F32 => {
            let f = f32::from_bits(v as u32);
            if f.is_finite() { format!("{f:?}") } else { format_float(f as f64) }
        }
        ScalarType::F64 => format_float(f64::from_bits(v as u64)),
        ScalarType::F16 => format_float(half_to_f64(v as u16, 5, 10)),
        ScalarType::Bf16 => format_float(f32::from_bits((v as u32) << 16) as f64),
        _ if ty.class() == TypeClass::Signed => {
            let bits = ty.bits();
            (((v << (128 - bits)) as i128) >> (128 - bits)).to_string()
        }
        _ => v.to_string(),
    }
}

fn half_to_f64(h: u16, exp_bits: u32, man_bits: u32) -> f64 {
    let sign = if h >> (exp_bits + man_bits) & 1 == 1 { -1.0 } else { 1.0 };
    let e = ((h >> man_bits) & ((1 << exp_bits) - 1)) as i32;
    let m = (h & ((1 << man_bits) - 1)) as f64;
    let bias = (1 << (exp_bits - 1)) - 1;
    if e == (1 << exp_bits) - 1 {
        return if m == 0.0 { sign * f64::INFINITY } else { f64::NAN };
    }
    if e == 0 {
        return sign * m * 2f64.powi(1 - bias - man_bits as i32);
    }
    sign * (1.0 + m / (1u32 << man_bits) as f64) * 2f64.powi(e - bias)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch_args::{parse_arg, ArgSpec};

    #[test]
    fn random_floats_spread_over_minus_one_to_one() {
        for ty in ["f16", "bf16", "f32", "f64"] {
            let ArgSpec::Buffer { ty: t, bytes } = parse_arg(&format!("buf:{ty}:1000=random:1")).unwrap() else { panic!() };
            let size = (t.bits() / 8) as usize;
            let values: Vec<f64> = bytes.chunks(size).map(|c| format_value(t, u128::from_le_bytes({ let mut a = [0; 16]; a[..size].copy_from_slice(c); a })).parse().unwrap()).collect();
            assert!(values.iter().all(|f| (-1.0..1.0).contains(f)), "{ty}: out of range");
            let mut distinct = values.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            distinct.sort();
            distinct.dedup();
            assert!(distinct.len() > 500, "{ty}: only {} distinct values", distinct.len());
            assert!(values.iter().filter(|f| **f < -0.5).count() > 100 && values.iter().filter(|f| **f > 0.5).count() > 100, "{ty}: not spread");
        }
    }

    #[test]
    fn non_finite_floats_are_spelled_one_way() {
        for (ty, bits) in [(ScalarType::F32, 0x7f80_0000u128), (ScalarType::F64, 0x7ff0_0000_0000_0000), (ScalarType::F16, 0x7c00), (ScalarType::Bf16, 0x7f80)] {
            assert_eq!(format_value(ty, bits), "\"inf\"", "{ty:?}");
        }
        for (ty, bits) in [(ScalarType::F32, 0xff80_0000u128), (ScalarType::F64, 0xfff0_0000_0000_0000), (ScalarType::F16, 0xfc00), (ScalarType::Bf16, 0xff80)] {
            assert_eq!(format_value(ty, bits), "\"-inf\"", "{ty:?}");
        }
        // Every NaN, quiet or signaling, of either sign: the payload is in "bits".
        for (ty, bits) in [(ScalarType::F32, 0x7fc0_0000u128), (ScalarType::F32, 0xffbf_ffff), (ScalarType::F64, 0x7ff8_0000_0000_0001), (ScalarType::F16, 0xfe01), (ScalarType::Bf16, 0x7fc1)] {
            assert_eq!(format_value(ty, bits), "\"nan\"", "{ty:?} {bits:#x}");
        }
        assert_eq!(format_value(ScalarType::F32, 0x3f80_0000), "1.0");
        assert_eq!(format_value(ScalarType::F64, (-0.0f64).to_bits() as u128), "-0.0");
    }
}
