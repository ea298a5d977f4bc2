//! Initial contents of module variables: initializers evaluated to bytes,
//! with variable and function addresses, `generic()` and `mask()`.

use super::memory::{to_bytes, CONST_BASE};
use super::program::{Program, VarLoc};
use crate::ir::{ConstExpr, Item, UnOp};
use crate::isa::{ScalarType, StateSpace, TypeClass};
use crate::parse::{eval_int, ExprValue};

pub fn initialize(p: &mut Program) -> Result<(), String> {
    let module = p.module;
    for item in &module.items {
        let Item::Var(g) = item else { continue };
        let d = &g.decl;
        if !matches!(d.space, StateSpace::Global | StateSpace::Const) {
            continue;
        }
        for n in &d.names {
            let Some(init) = &n.init else { continue };
            let Some(loc) = p.globals.get(&n.name).copied() else { continue };
            let elem_ty = d.ty;
            let elem = (elem_ty.bits().max(8) / 8) as usize;
            let mut bytes = Vec::new();
            let mut failed = None;
            init.exprs(&mut |v| {
                if failed.is_none() {
                    match value_bits(p, v, elem_ty) {
                        Ok(bits) => bytes.extend(to_bytes(bits, elem)),
                        Err(e) => failed = Some(e),
                    }
                }
            });
            if let Some(e) = failed {
                return Err(e);
            }
            match loc {
                VarLoc::Global(addr) => {
                    let len = p.global_mem.allocs[((addr - super::memory::GLOBAL_BASE) / super::memory::GLOBAL_SLOT) as usize].bytes.len();
                    bytes.truncate(len);
                    p.global_mem.write(addr, &bytes, crate::eval::Quality::Exact).map_err(|f| f.message)?;
                }
                VarLoc::Const(off) => {
                    let end = (off as usize + bytes.len()).min(p.const_mem.bytes.len());
                    let n = end - off as usize;
                    p.const_mem.bytes[off as usize..end].copy_from_slice(&bytes[..n]);
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// The bits an initializer element stores in an element of type `ty`.
fn value_bits(p: &Program, e: &ConstExpr, ty: ScalarType) -> Result<u128, String> {
    if let Some(a) = address(p, e)? {
        return Ok(a as u128);
    }
    if let ConstExpr::Mask(m, x) = e {
        let v = match address(p, x)? {
            Some(a) => a,
            None => eval_int(x)? as u64,
        };
        let shift = m.value.trailing_zeros();
        return Ok(((v & m.value) >> shift) as u128);
    }
    let v = crate::parse::expr_value(e)?;
    Ok(match (ty.class(), v) {
        (TypeClass::Float, ExprValue::Float(f)) => f64_bits(f, ty),
        (TypeClass::Float, ExprValue::Int { value, unsigned }) => f64_bits(if unsigned { value as f64 } else { value as i64 as f64 }, ty),
        (_, ExprValue::Int { value, .. }) => value as u128 & crate::eval::bits_mask(ty.bits()),
        (_, ExprValue::Float(f)) => f.to_bits() as u128 & crate::eval::bits_mask(ty.bits()),
    })
}

fn f64_bits(f: f64, ty: ScalarType) -> u128 {
    match ty {
        ScalarType::F32 => (f as f32).to_bits() as u128,
        ScalarType::F64 => f.to_bits() as u128,
        _ => crate::eval::imm_bits(&crate::ir::Imm::Float(crate::ir::FloatLit::F64(f.to_bits())), ty),
    }
}

/// The address an initializer element names, if it names one: a variable,
/// a function, `generic(x)`, or one of those plus or minus a constant.
fn address(p: &Program, e: &ConstExpr) -> Result<Option<u64>, String> {
    Ok(match e {
        ConstExpr::Sym(s) => match p.globals.get(s) {
            Some(VarLoc::Global(a)) | Some(VarLoc::Func(a)) => Some(*a),
            Some(VarLoc::Const(o)) => Some(*o),
            Some(VarLoc::Shared(o)) => Some(*o),
            _ => return Err(format!("`{s}` has no address the interpreter knows")),
        },
        ConstExpr::Generic(x) => match &**x {
            ConstExpr::Sym(s) => match p.globals.get(s) {
                Some(VarLoc::Const(o)) => Some(CONST_BASE + o),
                Some(VarLoc::Shared(o)) => Some(super::memory::SHARED_BASE + o),
                Some(VarLoc::Global(a)) | Some(VarLoc::Func(a)) => Some(*a),
                _ => return Err(format!("`{s}` has no address the interpreter knows")),
            },
            other => address(p, other)?,
        },
        ConstExpr::Binary(op @ (crate::ir::BinOp::Add | crate::ir::BinOp::Sub), a, b) => match address(p, a)? {
            Some(base) => {
                let off = eval_int(b)?;
                Some(if *op == crate::ir::BinOp::Add { base.wrapping_add(off as u64) } else { base.wrapping_sub(off as u64) })
            }
            None => None,
        },
        ConstExpr::Unary(UnOp::Plus, x) => address(p, x)?,
        _ => None,
    })
}
