//! `ptx-opt run`: runs a kernel on the reference interpreter and prints the
//! buffers as JSON.
//!
//! ```text
//! ptx-opt run INPUT --kernel NAME --grid X[,Y[,Z]] --block X[,Y[,Z]] [--arg SPEC]...
//!         [--out-json FILE] [--max-steps N] [--dynamic-shared BYTES] [--no-verify]
//! ```
//! The module is verified first (as by `ptx-opt`): a verifier error stops
//! the run, warnings are printed; `--no-verify` skips that.
//! Each `--arg` is one kernel parameter, in order: a scalar `TYPE:VALUE`
//! (`u32:1000`, `s64:-3`, `f32:0.5`, `f64:0x3ff0000000000000` — a hex value
//! of a float type is its bit pattern) or a fresh global buffer
//! `buf:TYPE:COUNT=INIT` with `INIT` one of `zeros`, `random:SEED`,
//! `V1,V2,...` (COUNT values) or `file:PATH` (COUNT elements' bytes), or a
//! by-value parameter `bytes:HEX` (a struct's bytes in memory order).

use ptx_ir::eval::Quality;
use ptx_ir::interp::{KernelArg, Launch};
use ptx_ir::isa::{ScalarType, TypeClass};
use std::fmt::Write as _;
use std::io::Write;

pub const USAGE: &str = "\
usage: ptx-opt run INPUT --kernel NAME --grid X[,Y[,Z]] --block X[,Y[,Z]] [--arg SPEC]...
                   [--out-json FILE] [--max-steps N] [--dynamic-shared BYTES] [--no-verify]

Runs a kernel on the reference interpreter (no GPU) and prints every buffer
argument as JSON: [{\"arg\": INDEX, \"type\": \"f32\", \"values\": [...], \"bits\": [...]}].
The module is verified first (--no-verify skips that): a verifier error
stops the run.

argument SPECs, one per kernel parameter, in order:
  TYPE:VALUE              a scalar: u32:1000, s64:-3, f32:0.5, f64:0x3ff0000000000000
                          (a hex value of a float type is its bit pattern)
  buf:TYPE:COUNT=INIT     a pointer to a fresh global buffer of COUNT elements;
                          INIT is zeros, random:SEED (integers: random bits;
                          floats: uniform in [-1, 1)), V1,V2,... (COUNT values)
                          or file:PATH (the file holds exactly the buffer's bytes)
  bytes:HEX               a parameter passed by value (a .b8 array, a struct):
                          its bytes in memory order, bytes:0100000002000000

exit status: 0 success; 1 invalid input, unsupported instruction,
out-of-bounds access, deadlock, trap or step limit; 2 usage error
";

/// A parsed `--arg`.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgSpec {
    Scalar { ty: ScalarType, bits: u128 },
    Buffer { ty: ScalarType, bytes: Vec<u8> },
    /// A parameter passed by value as bytes (a struct).
    Bytes(Vec<u8>),
}

/// The options of `ptx-opt run`.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOptions {
    pub input: Option<String>,
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub args: Vec<ArgSpec>,
    pub out_json: Option<String>,
    pub max_steps: u64,
    pub dynamic_shared: usize,
    /// Run without verifying the module first.
    pub no_verify: bool,
}

fn dims(s: &str, what: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("{what} takes X[,Y[,Z]], found `{s}`"));
    }
    let mut d = [1u32; 3];
    for (k, p) in parts.iter().enumerate() {
        d[k] = p.trim().parse().map_err(|_| format!("{what}: `{p}` is not a positive integer"))?;
        if d[k] == 0 {
            return Err(format!("{what}: dimensions must be at least 1"));
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
            random_values(ty, count, seed)
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
    if let Some(hex) = spec.strip_prefix("bytes:") {
        let hex: String = hex.chars().filter(|c| *c != '_').collect();
        if hex.is_empty() || hex.len() % 2 != 0 || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
            return Err(format!("`{spec}`: bytes:HEX takes an even number of hex digits, two per byte in memory order"));
        }
        let bytes = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
        return Ok(ArgSpec::Bytes(bytes));
    }
    let (ty, v) = spec.split_once(':').ok_or_else(|| format!("`{spec}`: an argument is TYPE:VALUE, buf:TYPE:COUNT=INIT or bytes:HEX"))?;
    let ty = scalar_type(ty)?;
    Ok(ArgSpec::Scalar { ty, bits: value_bits(ty, v)? })
}

/// Deterministic values: integers get random bits, floats uniform values in [-1, 1).
fn random_values(ty: ScalarType, count: usize, seed: u64) -> Vec<u8> {
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

/// Parses the arguments after `run`.
pub fn parse_run_args(args: &[String]) -> Result<RunOptions, String> {
    let mut o = RunOptions { input: None, kernel: String::new(), grid: [1, 1, 1], block: [1, 1, 1], args: Vec::new(), out_json: None, max_steps: ptx_ir::interp::DEFAULT_MAX_STEPS, dynamic_shared: 0, no_verify: false };
    let (mut grid, mut block) = (false, false);
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        i += 1;
        let mut value = |name: &str| -> Result<String, String> {
            let v = args.get(i).cloned().ok_or_else(|| format!("`{name}` needs a value"))?;
            i += 1;
            Ok(v)
        };
        match a {
            "--kernel" => o.kernel = value(a)?,
            "--grid" => {
                o.grid = dims(&value(a)?, "--grid")?;
                grid = true;
            }
            "--block" => {
                o.block = dims(&value(a)?, "--block")?;
                block = true;
            }
            "--arg" => o.args.push(parse_arg(&value(a)?)?),
            "--out-json" => o.out_json = Some(value(a)?),
            "--max-steps" => o.max_steps = value(a)?.parse().map_err(|_| "--max-steps takes a number".to_string())?,
            "--dynamic-shared" => o.dynamic_shared = value(a)?.parse().map_err(|_| "--dynamic-shared takes a byte count".to_string())?,
            "--no-verify" => o.no_verify = true,
            "-" => o.input = None,
            _ if a.starts_with("--") => return Err(format!("unknown option `{a}` of `run`")),
            _ => {
                if o.input.is_some() {
                    return Err(format!("more than one input: `{a}`"));
                }
                o.input = Some(a.to_string());
            }
        }
    }
    if o.kernel.is_empty() {
        return Err("`run` needs --kernel NAME".into());
    }
    if !grid || !block {
        return Err("`run` needs --grid and --block".into());
    }
    Ok(o)
}

/// Parses and verifies `bytes` (named `name` in diagnostics), runs the
/// kernel `o` names and gives the buffers as JSON ([`buffers_json`]) with
/// the warnings (the verifier's, and one when the execution depended on a
/// value that is not exactly determined), or the diagnostics.
pub fn run_text(name: &str, bytes: &[u8], o: &RunOptions) -> Result<(String, Option<String>), String> {
    let lines = |ds: &[ptx_ir::source::Diagnostic]| ds.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n");
    let (parsed, mut warnings) = if o.no_verify {
        (ptx_ir::parse(name, bytes).map_err(|d| d.to_string())?, Vec::new())
    } else {
        let (parsed, diags) = ptx_ir::verify::parse_and_verify(name, bytes).map_err(|ds| lines(&ds))?;
        (parsed, diags.iter().map(|d| d.to_string()).collect())
    };
    let mut launch = Launch::new(&o.kernel, o.grid, o.block);
    launch.max_steps = o.max_steps;
    launch.dynamic_shared = o.dynamic_shared;
    let mut types = Vec::new();
    for a in &o.args {
        match a {
            ArgSpec::Scalar { ty, bits } => launch.args.push(KernelArg::Scalar { ty: *ty, bits: *bits }),
            ArgSpec::Bytes(b) => launch.args.push(KernelArg::Bytes(b.clone())),
            ArgSpec::Buffer { ty, bytes } => {
                launch.args.push(KernelArg::Buffer(launch.buffers.len()));
                launch.buffers.push(bytes.clone());
                types.push((launch.args.len() - 1, *ty));
            }
        }
    }
    let out = ptx_ir::interp::run(&parsed.module, &parsed.source_map, name, bytes, &launch).map_err(|e| e.to_string())?;
    warnings.extend(out.depends_on_unspecified.map(|w| format!("warning: {w}; the buffers show one possible execution")));
    let warning = if warnings.is_empty() { None } else { Some(warnings.join("\n")) };
    Ok((buffers_json(&types, &out.buffers), warning))
}

/// Runs the `run` subcommand; returns the exit status.
pub fn run(args: &[String], stdin: &mut dyn std::io::Read, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    let o = match parse_run_args(args) {
        Ok(o) => o,
        Err(m) => {
            let _ = writeln!(stderr, "ptx-opt run: {m}\n\n{USAGE}");
            return crate::EXIT_USAGE;
        }
    };
    let (name, bytes) = match &o.input {
        Some(p) => match std::fs::read(p) {
            Ok(b) => (p.clone(), b),
            Err(e) => {
                let _ = writeln!(stderr, "ptx-opt: cannot read `{p}`: {e}");
                return crate::EXIT_INVALID;
            }
        },
        None => {
            let mut b = Vec::new();
            if let Err(e) = stdin.read_to_end(&mut b) {
                let _ = writeln!(stderr, "ptx-opt: cannot read standard input: {e}");
                return crate::EXIT_INVALID;
            }
            ("<stdin>".to_string(), b)
        }
    };
    let json = match run_text(&name, &bytes, &o) {
        Ok((json, warning)) => {
            if let Some(w) = warning {
                let _ = writeln!(stderr, "{w}");
            }
            json
        }
        Err(e) => {
            let _ = writeln!(stderr, "{e}");
            return crate::EXIT_INVALID;
        }
    };
    match &o.out_json {
        Some(path) => {
            if let Err(e) = crate::optimize_cmd::write_atomically(std::path::Path::new(path), json.as_bytes()) {
                let _ = writeln!(stderr, "ptx-opt: cannot write `{path}`: {e}");
                return crate::EXIT_INVALID;
            }
        }
        None => {
            let _ = stdout.write_all(json.as_bytes());
        }
    }
    crate::EXIT_OK
}

/// `[{"arg": 0, "type": "f32", "values": [...], "bits": [...]}, ...]`; floats
/// print as numbers in the shortest form that reads back to the same value
/// (NaN and infinities as strings), their bit patterns as hex strings; `"inexact"` lists elements whose value the program does not
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

fn format_float(f: f64) -> String {
    if f.is_nan() {
        "\"NaN\"".into()
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
}
