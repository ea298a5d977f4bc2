//! Checks `ptx-opt run`'s `--arg`s against the kernel's parameters before
//! the run: their number, and each one's type and size, with messages that
//! name the parameter and both types.

use crate::launch_args::ArgSpec;
use crate::texture_args::ResourceKind;
use ptx_ir::ir::{FuncKind, Item, Module, VarDecl};
use ptx_ir::isa::{ScalarType, TypeClass};

/// One kernel parameter: its declaration and its name's array dimensions.
struct Param<'m> {
    decl: &'m VarDecl,
    name: &'m str,
    dims: &'m [Option<u64>],
}

impl Param<'_> {
    /// `.u64 in`, `.b8 bias[8]`, `.v2 .f32 x`.
    fn describe(&self) -> String {
        let vector = self.decl.vector.map_or(String::new(), |n| format!(".v{n} "));
        let dims: String = self.dims.iter().map(|d| d.map_or("[]".to_string(), |n| format!("[{n}]"))).collect();
        format!("{vector}{} {}{dims}", self.decl.ty.text(), self.name)
    }

    /// Bytes the parameter holds.
    fn size(&self) -> u64 {
        let elem = (self.decl.ty.bits().max(8) / 8) as u64 * self.decl.vector.unwrap_or(1) as u64;
        elem * self.dims.iter().map(|d| d.unwrap_or(0)).product::<u64>()
    }

    /// A plain scalar (no vector, no array).
    fn scalar(&self) -> Option<ScalarType> {
        (self.decl.vector.is_none() && self.dims.is_empty()).then_some(self.decl.ty)
    }
}

/// Whether a scalar argument of type `arg` may be passed for a parameter of
/// type `param`: the same size, and the same kind of number (integers for
/// integers, floats for floats) unless one of them is a `.bN` type.
fn scalar_fits(arg: ScalarType, param: ScalarType) -> bool {
    if arg.bits() != param.bits() {
        return false;
    }
    let integer = |c: TypeClass| matches!(c, TypeClass::Signed | TypeClass::Unsigned);
    let (a, p) = (arg.class(), param.class());
    a == TypeClass::Bits || p == TypeClass::Bits || a == p || (integer(a) && integer(p))
}

fn arg_text(a: &ArgSpec) -> String {
    match a {
        ArgSpec::Scalar { ty, .. } => format!("a {} scalar", ty.text()),
        ArgSpec::Buffer { ty, .. } => format!("a buffer of {}", ty.text()),
        ArgSpec::Bytes(b) => format!("{} byte(s)", b.len()),
        ArgSpec::Resource(r) => format!("a {}", r.kind().name()),
        ArgSpec::TensorMap(_) => "a tensor map".to_string(),
    }
}

fn opaque_kind(t: ScalarType) -> Option<ResourceKind> {
    match t {
        ScalarType::Texref => Some(ResourceKind::Texture),
        ScalarType::Surfref => Some(ResourceKind::Surface),
        ScalarType::Samplerref => Some(ResourceKind::Sampler),
        _ => None,
    }
}

fn arg_prefix(k: ResourceKind) -> &'static str {
    match k {
        ResourceKind::Texture => "tex",
        ResourceKind::Surface => "surf",
        ResourceKind::Sampler => "sampler",
    }
}

/// `Err` with the message when `args` do not fit kernel `kernel`'s
/// parameters; `Ok` also when there is no such kernel (the interpreter
/// says so, listing the kernels).
pub fn check_args(module: &Module, kernel: &str, args: &[ArgSpec]) -> Result<(), String> {
    let Some(f) = module.items.iter().find_map(|i| match i {
        Item::Func(f) if f.kind == FuncKind::Entry && &*f.name == kernel && f.body.is_some() => Some(f),
        _ => None,
    }) else {
        return Ok(());
    };
    let params: Vec<Param> = f.params.iter().flatten().flat_map(|d| d.names.iter().map(move |n| Param { decl: d, name: &n.name, dims: &n.dims })).collect();
    if params.len() != args.len() {
        let list: Vec<String> = params.iter().map(Param::describe).collect();
        return Err(format!("kernel `{kernel}` takes {} parameter(s) ({}), {} --arg given", params.len(), list.join(", "), args.len()));
    }
    for (k, (a, p)) in args.iter().zip(&params).enumerate() {
        let mismatch = |why: &str| Err(format!("--arg {n} is {}, but parameter {n} of `{kernel}` is `{}`{why}", arg_text(a), p.describe(), n = k + 1));
        if let Some(kind) = p.scalar().and_then(opaque_kind) {
            match a {
                ArgSpec::Resource(r) if r.kind() == kind => continue,
                _ => return mismatch(&format!(" (pass {}:SPEC)", arg_prefix(kind))),
            }
        }
        match a {
            ArgSpec::Resource(_) => match p.scalar() {
                Some(pt) if pt.bits() == 64 && matches!(pt.class(), TypeClass::Bits | TypeClass::Unsigned | TypeClass::Signed) => {}
                _ => return mismatch(" (a handle is passed as a .texref/.surfref/.samplerref parameter or a .u64 object)"),
            },
            ArgSpec::Scalar { ty, .. } => match p.scalar() {
                Some(pt) if scalar_fits(*ty, pt) => {}
                Some(pt) => return mismatch(&format!(" (pass {}:VALUE)", &pt.text()[1..])),
                None if p.size() == 128 => return mismatch(" (pass its 128 bytes as bytes:HEX, or a tensor map as tmap:SPEC)"),
                None => return mismatch(&format!(" (pass its {} bytes as bytes:HEX)", p.size())),
            },
            ArgSpec::Buffer { .. } => match p.scalar() {
                Some(pt) if pt.bits() == 64 && matches!(pt.class(), TypeClass::Bits | TypeClass::Unsigned | TypeClass::Signed) => {}
                _ => return mismatch(" (a buffer is passed as a .u64, .s64 or .b64 pointer parameter)"),
            },
            ArgSpec::Bytes(b) if b.len() as u64 != p.size() => return mismatch(&format!(" ({} bytes)", p.size())),
            ArgSpec::Bytes(_) => {}
            ArgSpec::TensorMap(_) if p.size() != 128 || p.scalar().is_some() => return mismatch(" (a tensor map is passed as a 128-byte .b8 array parameter)"),
            ArgSpec::TensorMap(_) => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch_args::parse_arg;

    const SCALE: &str = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry scale(.param .u64 in, .param .u32 k, .param .f32 x, .param .align 4 .b8 bias[8], .param .b32 raw)\n{\n\tret;\n}\n";

    fn check(specs: &[&str]) -> Result<(), String> {
        let m = ptx_ir::parse("k.ptx", SCALE.as_bytes()).unwrap().module;
        let args: Vec<ArgSpec> = specs.iter().map(|s| parse_arg(s).unwrap()).collect();
        check_args(&m, "scale", &args)
    }

    #[test]
    fn arguments_fit_their_parameters() {
        assert_eq!(check(&["buf:f32:4=zeros", "u32:3", "f32:1.5", "bytes:0000000001000000", "f32:2"]), Ok(()));
        // Integers of the parameter's size, signed or not; anything of its size for .bN.
        assert_eq!(check(&["buf:u8:1=zeros", "s32:-1", "f32:1.5", "bytes:0000000001000000", "u32:7"]), Ok(()));
        assert_eq!(check(&["buf:u8:1=zeros", "b32:1", "b32:0x3f800000", "bytes:0000000001000000", "s32:7"]), Ok(()));
    }

    #[test]
    fn mismatches_name_the_parameter_and_both_types() {
        let e = check(&["buf:f32:4=zeros", "f32:3", "f32:1.5", "bytes:0000000001000000", "u32:7"]).unwrap_err();
        assert_eq!(e, "--arg 2 is a .f32 scalar, but parameter 2 of `scale` is `.u32 k` (pass u32:VALUE)");
        let e = check(&["buf:f32:4=zeros", "u64:3", "f32:1.5", "bytes:0000000001000000", "u32:7"]).unwrap_err();
        assert!(e.contains("is a .u64 scalar, but parameter 2 of `scale` is `.u32 k`"), "{e}");
        let e = check(&["buf:f32:4=zeros", "u32:3", "u32:1", "bytes:0000000001000000", "u32:7"]).unwrap_err();
        assert!(e.contains("--arg 3 is a .u32 scalar, but parameter 3 of `scale` is `.f32 x` (pass f32:VALUE)"), "{e}");
        let e = check(&["f64:0", "u32:3", "f32:1.5", "bytes:0000000001000000", "u32:7"]).unwrap_err();
        assert_eq!(e, "--arg 1 is a .f64 scalar, but parameter 1 of `scale` is `.u64 in` (pass u64:VALUE)");
        // A pointer parameter may take an integer address too.
        assert_eq!(check(&["u64:0", "u32:3", "f32:1.5", "bytes:0000000001000000", "u32:7"]), Ok(()));
        let e = check(&["buf:f32:4=zeros", "buf:u32:1=zeros", "f32:1.5", "bytes:0000000001000000", "u32:7"]).unwrap_err();
        assert!(e.contains("--arg 2 is a buffer of .u32, but parameter 2 of `scale` is `.u32 k` (a buffer is passed as a .u64"), "{e}");
        let e = check(&["buf:f32:4=zeros", "u32:3", "f32:1.5", "bytes:00000000", "u32:7"]).unwrap_err();
        assert!(e.contains("--arg 4 is 4 byte(s), but parameter 4 of `scale` is `.b8 bias[8]` (8 bytes)"), "{e}");
        let e = check(&["buf:f32:4=zeros", "u32:3", "f32:1.5", "u64:1", "u32:7"]).unwrap_err();
        assert!(e.contains("(pass its 8 bytes as bytes:HEX)"), "{e}");
    }

    #[test]
    fn a_wrong_count_lists_the_parameters() {
        let e = check(&["u32:1"]).unwrap_err();
        assert_eq!(e, "kernel `scale` takes 5 parameter(s) (.u64 in, .u32 k, .f32 x, .b8 bias[8], .b32 raw), 1 --arg given");
        // No such kernel: the interpreter's message lists the kernels.
        let m = ptx_ir::parse("k.ptx", SCALE.as_bytes()).unwrap().module;
        assert_eq!(check_args(&m, "nope", &[]), Ok(()));
    }
}
