//! Instruction lines, operands and literals.

use crate::data::push_u64;
use ptx_ir::ir::{AddrBase, FloatLit, Function, Imm, Instruction, IntLit, LabelId, Operand, PairPred, Prefix, Radix, RegId};
use ptx_ir::isa::Mod;
use std::fmt::Write;

/// Vector operands longer than this are wrapped (wgmma accumulators).
const WRAP_VECTOR: usize = 16;

/// `@!%p add.s32 %r1, %r2, 1;` (without indentation or newline).
pub fn write_instruction(out: &mut String, f: &Function, ins: &Instruction) {
    if let Some(g) = ins.guard {
        out.push('@');
        if g.negated {
            out.push('!');
        }
        write_reg(out, f, g.reg);
        out.push(' ');
    }
    write_head(out, ins);
    for (k, op) in ins.operands.iter().enumerate() {
        out.push_str(if k == 0 { " \t" } else { ", " });
        write_operand(out, f, op);
    }
    out.push(';');
}

/// The instruction's head as printed: the opcode and its modifiers in the
/// form's slot order (`mul.hi.u32`, `setp.lt.and.s32`, `cvt.rn.f32.s32`).
pub fn write_head(out: &mut String, ins: &Instruction) {
    out.push_str(ins.opcode.name());
    for m in ins.mods.iter() {
        if *m != Mod::NONE {
            out.push_str(m.text());
        }
    }
}

/// [`write_head`] into a new string.
pub fn instruction_head(ins: &Instruction) -> String {
    let mut s = String::new();
    write_head(&mut s, ins);
    s
}

pub fn write_operand(out: &mut String, f: &Function, op: &Operand) {
    match op {
        Operand::Reg(r) => {
            match r.prefix {
                Prefix::None => {}
                Prefix::Not => out.push('!'),
                Prefix::Neg => out.push('-'),
            }
            write_reg(out, f, r.reg);
            if let Some(s) = r.sel {
                s.write(out);
            }
        }
        Operand::RegOffset(r, off) => {
            write_reg(out, f, *r);
            out.push('+');
            push_i64(out, *off);
        }
        Operand::SReg(s, sel) => {
            out.push_str(s.name());
            if let Some(sel) = sel {
                sel.write(out);
            }
        }
        Operand::Imm(i) => write_imm(out, i),
        Operand::Sym(s) => {
            out.push_str(&s.name);
            write_offset(out, s.offset);
        }
        Operand::Label(l) => write_label(out, f, *l),
        Operand::Vector(v) => {
            out.push('{');
            for (k, o) in v.iter().enumerate() {
                if k > 0 {
                    out.push_str(if v.len() > WRAP_VECTOR && k % WRAP_VECTOR == 0 { ",\n\t\t" } else { ", " });
                }
                write_operand(out, f, o);
            }
            out.push('}');
        }
        Operand::Pair(p, q) => {
            write_operand(out, f, p);
            out.push('|');
            match q {
                PairPred::Reg(q) => write_reg(out, f, *q),
                PairPred::Sink => out.push('_'),
            }
        }
        Operand::Sink => out.push('_'),
        Operand::Addr(a) => {
            out.push('[');
            write_addr_inner(out, f, &a.base, a.offset);
            if a.offset == 0 && a.zero_written {
                out.push_str("+0");
            }
            out.push(']');
            if a.unified {
                out.push_str(".unified");
            }
        }
        Operand::AddrList(items) => {
            out.push('[');
            for (k, o) in items.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                write_operand(out, f, o);
            }
            out.push(']');
        }
        Operand::ArrayElem(e) => {
            out.push_str(&e.name);
            out.push('[');
            match &e.index {
                Operand::Addr(a) => write_addr_inner(out, f, &a.base, a.offset),
                other => write_operand(out, f, other),
            }
            out.push(']');
        }
        Operand::List(items) => {
            out.push('(');
            for (k, o) in items.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                write_operand(out, f, o);
            }
            out.push(')');
        }
    }
}

fn write_addr_inner(out: &mut String, f: &Function, base: &AddrBase, offset: i64) {
    match base {
        AddrBase::Reg(r) => write_reg(out, f, *r),
        AddrBase::Sym(s) => out.push_str(s),
        AddrBase::Imm(i) => push_u64(out, *i),
    }
    write_offset(out, offset);
}

/// A register's name, or a marker no parser accepts for an id past the end of the table.
pub(crate) fn write_reg(out: &mut String, f: &Function, r: RegId) {
    match f.try_reg(r) {
        Some(reg) => out.push_str(&reg.name),
        None => {
            let _ = write!(out, "<invalid register {}>", r.0);
        }
    }
}

/// A label's name, or a marker for an id past the end of the table.
pub(crate) fn write_label(out: &mut String, f: &Function, l: LabelId) {
    match f.try_label_name(l) {
        Some(name) => out.push_str(name),
        None => {
            let _ = write!(out, "<invalid label {}>", l.0);
        }
    }
}

fn write_offset(out: &mut String, off: i64) {
    if off != 0 {
        out.push('+');
        push_i64(out, off);
    }
}

/// `v` in decimal, as `{v}` formats it.
pub(crate) fn push_i64(out: &mut String, v: i64) {
    if v < 0 {
        out.push('-');
    }
    push_u64(out, v.unsigned_abs());
}

pub fn write_imm(out: &mut String, i: &Imm) {
    match i {
        Imm::Int(l) => write_int(out, l),
        Imm::Float(f) => write_float(out, f),
    }
}

/// An integer literal in the radix it was written in; negative signed values get a `-`.
///
/// An unsigned literal without `U` that fits `.s64` can only come from negating
/// a literal above `i64::MAX` (`-9223372036854779808` is `.u64`, 2^64 minus the
/// magnitude, as ptxas reads it): it is printed negated again, so that it
/// re-parses unsigned with the same bits.
pub fn write_int(out: &mut String, l: &IntLit) {
    let negated_big = l.unsigned && !l.suffix && l.value != 0 && l.value <= i64::MAX as u64;
    let neg = negated_big || (!l.unsigned && (l.value as i64) < 0);
    let mag = if neg { l.value.wrapping_neg() } else { l.value };
    if neg {
        out.push('-');
    }
    let _ = match l.radix {
        Radix::Dec => {
            push_u64(out, mag);
            Ok(())
        }
        Radix::Hex => {
            out.push_str("0x");
            push_hex_digits(out, mag, hex_digits(mag));
            Ok(())
        }
        Radix::Oct => write!(out, "0{mag:o}"),
        Radix::Bin => write!(out, "0b{mag:b}"),
    };
    if l.suffix {
        out.push('U');
    }
}

pub fn write_float(out: &mut String, f: &FloatLit) {
    match f {
        FloatLit::F32(b) => {
            out.push_str("0f");
            push_hex_digits(out, (*b).into(), 8);
        }
        FloatLit::F64(b) => {
            out.push_str("0d");
            push_hex_digits(out, *b, 16);
        }
        FloatLit::Dec(d) => out.push_str(&d.text),
    }
}

/// The low `n` (at most 16) hexadecimal digits of `v`, upper case, with
/// leading zeros: what `{v:08X}` writes for `n` = 8 and a 32-bit `v`.
/// How many hexadecimal digits `{v:X}` writes (one for 0). Hexadecimal
/// values went through `write!` (about 300 host instructions each): the
/// string tables of nvopencc output are lists of them.
fn hex_digits(v: u64) -> u32 {
    (64 - v.leading_zeros()).div_ceil(4).max(1)
}

fn push_hex_digits(out: &mut String, v: u64, n: u32) {
    for k in (0..n.min(16)).rev() {
        out.push(char::from(b"0123456789ABCDEF"[(v >> (4 * k)) as usize & 15]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hexadecimals_as_format_writes_them() {
        for v in [0u64, 1, 9, 10, 15, 16, 0x2F, 0xFF, 0x100, 0xFFF, 0x1000, u32::MAX as u64, 1 << 32, i64::MAX as u64, u64::MAX] {
            let l = IntLit { value: v, radix: Radix::Hex, unsigned: true, suffix: false };
            let mut s = String::new();
            write_int(&mut s, &l);
            let neg = v != 0 && v <= i64::MAX as u64;
            let expected = if neg { format!("-0x{:X}", v.wrapping_neg()) } else { format!("0x{v:X}") };
            assert_eq!(s, expected, "{v}");
        }
        for v in [0u64, 5, 0x2F, 0xABCDEF, u32::MAX as u64] {
            let mut s = String::new();
            write_int(&mut s, &IntLit { value: v, radix: Radix::Hex, unsigned: false, suffix: true });
            assert_eq!(s, format!("0x{v:X}U"));
        }
    }

    #[test]
    fn decimals_as_format_writes_them() {
        for v in [0u64, 1, 9, 10, 99, 100, 4096, u32::MAX as u64, i64::MAX as u64, u64::MAX] {
            let mut s = String::new();
            push_u64(&mut s, v);
            assert_eq!(s, format!("{v}"));
        }
        for v in [0i64, -1, 1, -10, 4096, -4096, i64::MAX, i64::MIN] {
            let mut s = String::new();
            push_i64(&mut s, v);
            assert_eq!(s, format!("{v}"));
        }
    }

    #[test]
    fn hex_floats_as_format_writes_them() {
        for b in [0u32, 1, 0x3F80_0000, 0x7FC0_0000, 0x8000_0000, u32::MAX] {
            let mut s = String::new();
            write_float(&mut s, &FloatLit::F32(b));
            assert_eq!(s, format!("0f{b:08X}"));
        }
        for b in [0u64, 1, 0x3FF0_0000_0000_0000, 0x8000_0000_0000_0000, u64::MAX] {
            let mut s = String::new();
            write_float(&mut s, &FloatLit::F64(b));
            assert_eq!(s, format!("0d{b:016X}"));
        }
    }
}
