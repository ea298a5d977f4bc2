//! Instruction lines, operands and literals.

use crate::data::{push_i64, push_u64};
use crate::writer::{Piece, Put, Writer};
use ptx_ir::ir::{AddrBase, FloatLit, Function, Imm, Instruction, IntLit, LabelId, Operand, PairPred, Prefix, Radix, RegId};
use ptx_ir::isa::{Mod, Opcode};
use std::fmt::Write;
use std::sync::OnceLock;

/// Vector operands longer than this are wrapped (wgmma accumulators).
const WRAP_VECTOR: usize = 16;

/// `@!%p add.s32 %r1, %r2, 1;` (without indentation or newline).
pub fn write_instruction(out: &mut String, f: &Function, ins: &Instruction) {
    let mut w = Writer::new(out);
    put_instruction(&mut w, f, ins);
    w.finish();
}

/// [`write_instruction`] into a writer.
pub(crate) fn put_instruction(w: &mut Writer, f: &Function, ins: &Instruction) {
    if let Some(g) = ins.guard {
        w.byte(b'@');
        if g.negated {
            w.byte(b'!');
        }
        put_reg(w, f, g.reg);
        w.byte(b' ');
    }
    put_head(w, ins);
    for (k, op) in ins.operands.iter().enumerate() {
        w.lit(if k == 0 { b" \t" } else { b", " });
        put_operand(w, f, op);
    }
    w.byte(b';');
}

/// The instruction's head as printed: the opcode and its modifiers in the
/// form's slot order (`mul.hi.u32`, `setp.lt.and.s32`, `cvt.rn.f32.s32`).
pub fn write_head(out: &mut String, ins: &Instruction) {
    let mut w = Writer::new(out);
    put_head(&mut w, ins);
    w.finish();
}

/// [`write_head`] into a writer.
fn put_head(w: &mut Writer, ins: &Instruction) {
    let texts = head_texts();
    let name = ins.opcode.name();
    match texts.opcodes.get(ins.opcode.index()) {
        Some(p) => w.piece(p, name),
        None => w.str(name),
    }
    for &m in ins.mods.iter() {
        if m == Mod::NONE {
            continue;
        }
        match texts.mods.get(m.index()) {
            Some(p) => w.piece(p, m.text()),
            None => w.str(m.text()),
        }
    }
}

/// The texts of every opcode and modifier as [`Piece`]s, by their
/// numbers in the tables.
struct HeadTexts {
    opcodes: Vec<Piece>,
    mods: Vec<Piece>,
}

fn head_texts() -> &'static HeadTexts {
    static T: OnceLock<HeadTexts> = OnceLock::new();
    T.get_or_init(|| {
        let mut mods = vec![Piece::new("")];
        mods.extend(Mod::all().map(|m| Piece::new(m.text())));
        HeadTexts { opcodes: Opcode::all().map(|o| Piece::new(o.name())).collect(), mods }
    })
}

/// [`write_head`] into a new string.
pub fn instruction_head(ins: &Instruction) -> String {
    let mut s = String::new();
    write_head(&mut s, ins);
    s
}

/// An operand.
fn put_operand(w: &mut Writer, f: &Function, op: &Operand) {
    match op {
        Operand::Reg(r) => {
            match r.prefix {
                Prefix::None => {}
                Prefix::Not => w.byte(b'!'),
                Prefix::Neg => w.byte(b'-'),
            }
            put_reg(w, f, r.reg);
            if let Some(s) = r.sel {
                s.write(w.string());
            }
        }
        Operand::RegOffset(r, off) => {
            put_reg(w, f, *r);
            w.byte(b'+');
            push_i64(w, *off);
        }
        Operand::SReg(s, sel) => {
            w.str(s.name());
            if let Some(sel) = sel {
                sel.write(w.string());
            }
        }
        Operand::Imm(i) => put_imm(w, i),
        Operand::Sym(s) => {
            w.str(&s.name);
            put_offset(w, s.offset);
        }
        Operand::Label(l) => put_label(w, f, *l),
        Operand::Vector(v) => {
            w.byte(b'{');
            for (k, o) in v.iter().enumerate() {
                if k > 0 {
                    w.str(if v.len() > WRAP_VECTOR && k % WRAP_VECTOR == 0 { ",\n\t\t" } else { ", " });
                }
                put_operand(w, f, o);
            }
            w.byte(b'}');
        }
        Operand::Pair(p, q) => {
            put_operand(w, f, p);
            w.byte(b'|');
            match q {
                PairPred::Reg(q) => put_reg(w, f, *q),
                PairPred::Sink => w.byte(b'_'),
            }
        }
        Operand::Sink => w.byte(b'_'),
        Operand::Addr(a) => {
            w.byte(b'[');
            put_addr_inner(w, f, &a.base, a.offset);
            if a.offset == 0 && a.zero_written {
                w.lit(b"+0");
            }
            w.byte(b']');
            if a.unified {
                w.str(".unified");
            }
        }
        Operand::AddrList(items) => {
            w.byte(b'[');
            for (k, o) in items.iter().enumerate() {
                if k > 0 {
                    w.lit(b", ");
                }
                put_operand(w, f, o);
            }
            w.byte(b']');
        }
        Operand::ArrayElem(e) => {
            w.str(&e.name);
            w.byte(b'[');
            match &e.index {
                Operand::Addr(a) => put_addr_inner(w, f, &a.base, a.offset),
                other => put_operand(w, f, other),
            }
            w.byte(b']');
        }
        Operand::List(items) => {
            w.byte(b'(');
            for (k, o) in items.iter().enumerate() {
                if k > 0 {
                    w.lit(b", ");
                }
                put_operand(w, f, o);
            }
            w.byte(b')');
        }
    }
}

fn put_addr_inner(w: &mut Writer, f: &Function, base: &AddrBase, offset: i64) {
    match base {
        AddrBase::Reg(r) => put_reg(w, f, *r),
        AddrBase::Sym(s) => w.str(s),
        AddrBase::Imm(i) => push_u64(w, *i),
    }
    put_offset(w, offset);
}

/// A register's name, or a marker no parser accepts for an id past the end of the table.
#[inline]
pub(crate) fn put_reg(w: &mut impl Put, f: &Function, r: RegId) {
    match f.try_reg(r) {
        Some(reg) => w.name(&reg.name),
        None => {
            let _ = write!(w.string(), "<invalid register {}>", r.0);
        }
    }
}

/// A label's name, or a marker for an id past the end of the table.
pub(crate) fn put_label(w: &mut impl Put, f: &Function, l: LabelId) {
    match f.labels.get(l.0 as usize) {
        Some(name) => w.name(name),
        None => {
            let _ = write!(w.string(), "<invalid label {}>", l.0);
        }
    }
}

fn put_offset(w: &mut Writer, off: i64) {
    if off != 0 {
        w.byte(b'+');
        push_i64(w, off);
    }
}

pub fn write_imm(out: &mut String, i: &Imm) {
    put_imm(out, i);
}

fn put_imm(out: &mut impl Put, i: &Imm) {
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
pub(crate) fn write_int(out: &mut impl Put, l: &IntLit) {
    let negated_big = l.unsigned && !l.suffix && l.value != 0 && l.value <= i64::MAX as u64;
    let neg = negated_big || (!l.unsigned && (l.value as i64) < 0);
    let mag = if neg { l.value.wrapping_neg() } else { l.value };
    if neg {
        out.byte(b'-');
    }
    let _ = match l.radix {
        Radix::Dec => {
            push_u64(out, mag);
            Ok(())
        }
        Radix::Hex => {
            out.str("0x");
            push_hex_digits(out, mag, hex_digits(mag));
            Ok(())
        }
        Radix::Oct => write!(out.string(), "0{mag:o}"),
        Radix::Bin => write!(out.string(), "0b{mag:b}"),
    };
    if l.suffix {
        out.byte(b'U');
    }
}

pub(crate) fn write_float(out: &mut impl Put, f: &FloatLit) {
    match f {
        FloatLit::F32(b) => {
            out.str("0f");
            push_hex_digits(out, (*b).into(), 8);
        }
        FloatLit::F64(b) => {
            out.str("0d");
            push_hex_digits(out, *b, 16);
        }
        FloatLit::Dec(d) => out.str(&d.text),
    }
}

/// How many hexadecimal digits `{v:X}` writes (one for 0). Hexadecimal
/// values went through `write!` (about 300 host instructions each): the
/// string tables of nvopencc output are lists of them.
fn hex_digits(v: u64) -> u32 {
    (64 - v.leading_zeros()).div_ceil(4).max(1)
}

/// The low `n` (at most 16) hexadecimal digits of `v`, upper case, with
/// leading zeros: what `{v:08X}` writes for `n` = 8 and a 32-bit `v`.
fn push_hex_digits(out: &mut impl Put, v: u64, n: u32) {
    let n = n.min(16) as usize;
    let mut digits = [0u8; 16];
    for (k, d) in digits[..n].iter_mut().enumerate() {
        *d = b"0123456789ABCDEF"[(v >> (4 * (n - 1 - k))) as usize & 15];
    }
    out.digits(&digits, n);
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
