//! The CUDA runtime functions a kernel calls as `.extern .func` without a
//! body: `vprintf` (device-side `printf`) and `__assertfail` (a failed
//! `assert`).
//!
//! `vprintf(.param .b64 format, .param .b64 args)` formats the C format
//! string at the generic address `format` with the argument buffer at
//! `args`, laid out as NVCC does: the arguments after their default
//! promotions (char/short → int, float → double), each at an offset that is
//! a multiple of its size. Conversions `%d %i %u %o %x %X %c %s %p %f %F %e
//! %E %g %G %%` with flags `-+ #0`, width, precision and the length
//! modifiers `hh h l ll j z t` (LP64: `%ld` is 8 bytes); anything else
//! (`%n`, `%a`, `*` widths, `%Lf`) stops the run as unsupported. The text
//! goes to [`super::Printed`] in execution order. CUDA's `printf` returns
//! the number of arguments parsed (CUDA C++ Programming Guide, "Formatted
//! Output"): so does this. A line printed from a value that is not exactly
//! determined (or a string with such bytes) is marked `exact: false`.
//!
//! `__assertfail(message, file, line, function, charSize)` stops the run
//! with [`RunError::AssertFailed`].

use super::exec::{Cta, Flow};
use super::memory::{from_bytes, Global};
use super::program::VarLoc;
use super::{Printed, RunError};
use crate::eval::{Quality, Val};
use crate::ir::{Instruction, Operand};
use smallvec::SmallVec;

/// Longest string read from device memory.
const MAX_STRING: usize = 1 << 16;

/// Is `name` a built-in the interpreter carries out?
pub fn is_builtin(name: &str) -> bool {
    name == "vprintf" || name == "__assertfail"
}

impl Cta<'_, '_> {
    /// Calls built-in `name` with the call's argument list; writes the
    /// return value to its return list.
    pub(super) fn call_builtin(&mut self, t: usize, ins: &Instruction, name: &str, ret: Option<&[Operand]>, args: Option<&[Operand]>, global: &Global) -> Result<Flow, RunError> {
        let args = args.unwrap_or(&[]);
        let mut vals = Vec::new();
        for a in args {
            vals.push(self.call_argument(t, ins, a)?);
        }
        let arg = |k: usize| vals.get(k).copied().unwrap_or(Val::unspecified());
        if name == "__assertfail" {
            let text = |cta: &Self, k: usize| cta.c_string(t, global, arg(k).bits as u64, None).map(|(s, _)| String::from_utf8_lossy(&s).into_owned()).unwrap_or_else(|_| "?".into());
            let message = text(self, 0);
            let file = text(self, 1);
            let function = text(self, 3);
            return Err(RunError::AssertFailed { message, file, line: arg(2).bits as u32, function, thread: self.thread_name(t), at: self.here(t) });
        }
        let (text, exact, count) = self.format(t, global, arg(0), arg(1))?;
        self.printed.push(Printed { thread: self.thread_name(t), text, exact });
        if let Some(Operand::Sym(r)) = ret.and_then(|r| r.first()) {
            let f = self.threads[t].frames.last().unwrap();
            if let Some(VarLoc::Param(o)) = self.p.funcs[f.func].lookup(&r.name, f.pc) {
                let bytes = (count as u32).to_le_bytes();
                let _ = self.threads[t].frames.last_mut().unwrap().params.write(o, &bytes, Quality::Exact);
            }
        } else if let Some(Operand::Reg(r)) = ret.and_then(|r| r.first()) {
            self.write_operand(t, &Operand::Reg(*r), None, &mut [Val::exact(count as u128)].iter())?;
        }
        Ok(Flow::Next)
    }

    /// The value of one call argument: a `.param` variable's first 8 bytes or an operand.
    fn call_argument(&self, t: usize, ins: &Instruction, a: &Operand) -> Result<Val, RunError> {
        let f = self.threads[t].frames.last().unwrap();
        match a {
            Operand::Sym(s) => match self.p.funcs[f.func].lookup(&s.name, f.pc) {
                Some(VarLoc::Param(o)) => {
                    let size = self.p.funcs[f.func].param_size_at(VarLoc::Param(o)).min(8);
                    let (b, q) = f.params.read_bytes(o, size).map_err(|e| self.fault(t, e))?;
                    let quality = q.iter().fold(Quality::Exact, |a, q| super::memory::worst(a, *q));
                    Ok(Val { bits: from_bytes(&b), quality })
                }
                _ => Err(self.unsupported(t, "call argument that is not a .param variable")),
            },
            other => {
                let mut v: SmallVec<[Val; 6]> = SmallVec::new();
                self.read(t, ins, 0, other, &mut v)?;
                Ok(v.first().copied().unwrap_or(Val::unspecified()))
            }
        }
    }

    /// Reads bytes at a generic address.
    fn generic_bytes(&self, t: usize, global: &Global, a: u64, out: &mut [u8]) -> Result<Quality, RunError> {
        let (sp, off) = self.generic(t, a)?;
        self.mem_read(t, global, sp, off, out)
    }

    /// A NUL-terminated string at a generic address (at most `limit` bytes).
    fn c_string(&self, t: usize, global: &Global, a: u64, limit: Option<usize>) -> Result<(Vec<u8>, bool), RunError> {
        let mut s = Vec::new();
        let mut exact = true;
        let mut b = [0u8; 1];
        loop {
            if limit.is_some_and(|l| s.len() >= l) {
                break;
            }
            if s.len() >= MAX_STRING {
                return Err(self.fault(t, super::Fault { message: format!("no NUL within {MAX_STRING} bytes of the string at 0x{a:x}") }));
            }
            let q = self.generic_bytes(t, global, a + s.len() as u64, &mut b)?;
            exact &= q == Quality::Exact;
            if b[0] == 0 {
                break;
            }
            s.push(b[0]);
        }
        Ok((s, exact))
    }

    /// Formats `vprintf(fmt, args)`: the text, whether it is exact, the number of arguments.
    fn format(&self, t: usize, global: &Global, fmt: Val, args: Val) -> Result<(String, bool, usize), RunError> {
        self.note_dependence(t, fmt.quality, "vprintf format address");
        self.note_dependence(t, args.quality, "vprintf argument buffer address");
        let (spec, mut exact) = self.c_string(t, global, fmt.bits as u64, None)?;
        let mut out: Vec<u8> = Vec::new();
        let mut offset = 0u64;
        let mut count = 0usize;
        let mut k = 0;
        while k < spec.len() {
            let c = spec[k];
            k += 1;
            if c != b'%' {
                out.push(c);
                continue;
            }
            let conv = parse_conversion(&spec, &mut k).map_err(|m| self.unsupported(t, &format!("vprintf format `{}` ({m})", String::from_utf8_lossy(&spec))))?;
            if conv.kind == b'%' {
                out.push(b'%');
                continue;
            }
            let size = conv.arg_size();
            offset = offset.div_ceil(size as u64) * size as u64;
            let mut buf = [0u8; 8];
            let q = self.generic_bytes(t, global, (args.bits as u64).wrapping_add(offset), &mut buf[..size])?;
            exact &= q == Quality::Exact;
            offset += size as u64;
            count += 1;
            let value = u64::from_le_bytes(buf);
            let text = match conv.kind {
                b's' => {
                    if value == 0 {
                        pad(&conv, b"(null)".to_vec(), false)
                    } else {
                        let (s, e) = self.c_string(t, global, value, conv.precision)?;
                        exact &= e;
                        pad(&conv, s, false)
                    }
                }
                _ => conv.render(value),
            };
            out.extend(text);
        }
        Ok((String::from_utf8_lossy(&out).into_owned(), exact, count))
    }
}

/// One `%...` conversion.
#[derive(Clone, Debug, Default)]
struct Conversion {
    minus: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: usize,
    precision: Option<usize>,
    /// Length modifier: 0 none, 1 `h`, 2 `hh`, 8 `l`/`ll`/`j`/`z`/`t`.
    length: u8,
    kind: u8,
}

fn parse_conversion(s: &[u8], k: &mut usize) -> Result<Conversion, String> {
    let mut c = Conversion::default();
    let at = |k: usize| s.get(k).copied().unwrap_or(0);
    loop {
        match at(*k) {
            b'-' => c.minus = true,
            b'+' => c.plus = true,
            b' ' => c.space = true,
            b'#' => c.alt = true,
            b'0' => c.zero = true,
            _ => break,
        }
        *k += 1;
    }
    let number = |k: &mut usize| {
        let mut n = 0usize;
        while at(*k).is_ascii_digit() {
            n = n.saturating_mul(10).saturating_add((at(*k) - b'0') as usize);
            *k += 1;
        }
        n.min(4096)
    };
    if at(*k) == b'*' {
        return Err("`*` width".into());
    }
    c.width = number(k);
    if at(*k) == b'.' {
        *k += 1;
        if at(*k) == b'*' {
            return Err("`*` precision".into());
        }
        c.precision = Some(number(k));
    }
    match at(*k) {
        b'h' if at(*k + 1) == b'h' => {
            c.length = 2;
            *k += 2;
        }
        b'h' => {
            c.length = 1;
            *k += 1;
        }
        b'l' if at(*k + 1) == b'l' => {
            c.length = 8;
            *k += 2;
        }
        b'l' | b'j' | b'z' | b't' => {
            c.length = 8;
            *k += 1;
        }
        b'L' | b'q' => return Err("`L`/`q` length".into()),
        _ => {}
    }
    c.kind = at(*k);
    *k += 1;
    match c.kind {
        b'd' | b'i' | b'u' | b'o' | b'x' | b'X' | b'c' | b's' | b'p' | b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'%' => Ok(c),
        0 => Err("the format ends inside a conversion".into()),
        other => Err(format!("conversion `%{}`", other as char)),
    }
}

/// Pads `body` to the width (`numeric`: zero padding may apply, after any sign or prefix).
fn pad(c: &Conversion, body: Vec<u8>, numeric: bool) -> Vec<u8> {
    if body.len() >= c.width {
        return body;
    }
    let fill = c.width - body.len();
    if c.minus {
        let mut b = body;
        b.extend(std::iter::repeat_n(b' ', fill));
        return b;
    }
    if numeric && c.zero {
        // Zeros go after the sign and the 0x prefix.
        let mut split = 0;
        if matches!(body.first(), Some(b'+' | b'-' | b' ')) {
            split = 1;
        }
        if body.len() >= split + 2 && body[split] == b'0' && matches!(body[split + 1], b'x' | b'X') {
            split += 2;
        }
        let mut b = body[..split].to_vec();
        b.extend(std::iter::repeat_n(b'0', fill));
        b.extend_from_slice(&body[split..]);
        return b;
    }
    let mut b: Vec<u8> = std::iter::repeat_n(b' ', fill).collect();
    b.extend(body);
    b
}

impl Conversion {
    /// Bytes the argument takes in the buffer.
    fn arg_size(&self) -> usize {
        match self.kind {
            b's' | b'p' | b'f' | b'F' | b'e' | b'E' | b'g' | b'G' => 8,
            _ if self.length == 8 => 8,
            _ => 4,
        }
    }

    fn render(&self, v: u64) -> Vec<u8> {
        match self.kind {
            b'c' => pad(self, vec![v as u8], false),
            b'p' => {
                if v == 0 {
                    pad(self, b"(nil)".to_vec(), false)
                } else {
                    pad(self, format!("0x{v:x}").into_bytes(), true)
                }
            }
            b'd' | b'i' => {
                let x: i64 = match self.length {
                    8 => v as i64,
                    2 => v as i8 as i64,
                    1 => v as i16 as i64,
                    _ => v as u32 as i32 as i64,
                };
                let sign = if x < 0 { "-" } else if self.plus { "+" } else if self.space { " " } else { "" };
                self.integer(sign, x.unsigned_abs().to_string(), "")
            }
            b'u' | b'o' | b'x' | b'X' => {
                let x: u64 = match self.length {
                    8 => v,
                    2 => v as u8 as u64,
                    1 => v as u16 as u64,
                    _ => v as u32 as u64,
                };
                let (digits, prefix) = match self.kind {
                    b'u' => (x.to_string(), ""),
                    b'o' => (format!("{x:o}"), ""),
                    b'x' => (format!("{x:x}"), if self.alt && x != 0 { "0x" } else { "" }),
                    _ => (format!("{x:X}"), if self.alt && x != 0 { "0X" } else { "" }),
                };
                let digits = if self.kind == b'o' && self.alt && !digits.starts_with('0') { format!("0{digits}") } else { digits };
                self.integer("", digits, prefix)
            }
            _ => self.float(f64::from_bits(v)),
        }
    }

    /// An integer with precision (minimum digits) and padding.
    fn integer(&self, sign: &str, digits: String, prefix: &str) -> Vec<u8> {
        let digits = match self.precision {
            Some(0) if digits == "0" => String::new(),
            Some(p) if digits.len() < p => format!("{}{digits}", "0".repeat(p - digits.len())),
            _ => digits,
        };
        let c = Conversion { zero: self.zero && self.precision.is_none(), ..self.clone() };
        pad(&c, format!("{sign}{prefix}{digits}").into_bytes(), true)
    }

    fn float(&self, x: f64) -> Vec<u8> {
        let upper = self.kind.is_ascii_uppercase();
        let sign = if x.is_sign_negative() { "-" } else if self.plus { "+" } else if self.space { " " } else { "" };
        if !x.is_finite() {
            let t = if x.is_nan() { "nan" } else { "inf" };
            let t = if upper { t.to_uppercase() } else { t.to_string() };
            let c = Conversion { zero: false, ..self.clone() };
            return pad(&c, format!("{sign}{t}").into_bytes(), true);
        }
        let a = x.abs();
        let p = self.precision.unwrap_or(6);
        let body = match self.kind.to_ascii_lowercase() {
            b'f' => fixed(a, p, self.alt),
            b'e' => exponent(a, p, self.alt),
            _ => general(a, p, self.alt),
        };
        let body = if upper { body.to_uppercase() } else { body };
        pad(self, format!("{sign}{body}").into_bytes(), true)
    }
}

/// `%f` of a non-negative finite value (Rust's formatting rounds the exact
/// binary value correctly, half to even, as glibc does).
fn fixed(a: f64, p: usize, alt: bool) -> String {
    let s = format!("{a:.p$}");
    if alt && p == 0 {
        format!("{s}.")
    } else {
        s
    }
}

/// `%e`: `d.ddde±XX`.
fn exponent(a: f64, p: usize, alt: bool) -> String {
    let s = format!("{a:.p$e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = exp.parse().unwrap_or(0);
    let dot = if alt && p == 0 { "." } else { "" };
    format!("{mantissa}{dot}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
}

/// `%g`: C11 §7.21.6.1: with P the precision (1 if 0) and X the exponent of
/// the `%e` form, `%f` with precision P-1-X if P > X >= -4, else `%e` with
/// P-1; trailing zeros removed unless `#`.
fn general(a: f64, p: usize, alt: bool) -> String {
    let p = p.max(1);
    let e_form = format!("{a:.prec$e}", prec = p - 1);
    let x: i64 = e_form.split_once('e').map_or(0, |(_, e)| e.parse().unwrap_or(0));
    let s = if (p as i64) > x && x >= -4 { fixed(a, (p as i64 - 1 - x) as usize, alt) } else { exponent(a, p - 1, alt) };
    if alt {
        return s;
    }
    let (m, e) = match s.find('e') {
        Some(i) => (s[..i].to_string(), s[i..].to_string()),
        None => (s.clone(), String::new()),
    };
    let m = if m.contains('.') { m.trim_end_matches('0').trim_end_matches('.').to_string() } else { m };
    format!("{m}{e}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(spec: &str, v: u64) -> String {
        let mut k = 1;
        let c = parse_conversion(spec.as_bytes(), &mut k).unwrap();
        assert_eq!(k, spec.len(), "{spec}");
        String::from_utf8(c.render(v)).unwrap()
    }

    /// Expected strings are what C's printf gives (C11 §7.21.6.1).
    #[test]
    fn conversions_follow_c() {
        assert_eq!(fmt("%d", (-42i32) as u32 as u64), "-42");
        assert_eq!(fmt("%5d", 42), "   42");
        assert_eq!(fmt("%-5d", 42), "42   ");
        assert_eq!(fmt("%05d", (-42i32) as u32 as u64), "-0042");
        assert_eq!(fmt("%+d", 7), "+7");
        assert_eq!(fmt("% d", 7), " 7");
        assert_eq!(fmt("%.3d", 7), "007");
        assert_eq!(fmt("%.0d", 0), "");
        assert_eq!(fmt("%i", 0xffff_ffff), "-1");
        assert_eq!(fmt("%u", 0xffff_ffff), "4294967295");
        assert_eq!(fmt("%ld", u64::MAX), "-1");
        assert_eq!(fmt("%llu", u64::MAX), "18446744073709551615");
        assert_eq!(fmt("%lx", 0xdead_beef_0000_0001), "deadbeef00000001");
        assert_eq!(fmt("%x", 255), "ff");
        assert_eq!(fmt("%X", 255), "FF");
        assert_eq!(fmt("%#x", 255), "0xff");
        assert_eq!(fmt("%#x", 0), "0");
        assert_eq!(fmt("%08x", 255), "000000ff");
        assert_eq!(fmt("%#08x", 255), "0x0000ff");
        assert_eq!(fmt("%o", 8), "10");
        assert_eq!(fmt("%#o", 8), "010");
        assert_eq!(fmt("%hd", 0x1_8000), "-32768");
        assert_eq!(fmt("%hhu", 0x1ff), "255");
        assert_eq!(fmt("%c", 65), "A");
        assert_eq!(fmt("%3c", 65), "  A");
        assert_eq!(fmt("%p", 0x1000), "0x1000");
        assert_eq!(fmt("%p", 0), "(nil)");
        let f = |x: f64| x.to_bits();
        assert_eq!(fmt("%f", f(1.5)), "1.500000");
        assert_eq!(fmt("%.2f", f(2.675)), "2.67"); // 2.675 is 2.67499999... in binary
        assert_eq!(fmt("%.0f", f(0.5)), "0");
        assert_eq!(fmt("%.0f", f(1.5)), "2");
        assert_eq!(fmt("%#.0f", f(1.0)), "1.");
        assert_eq!(fmt("%8.3f", f(-3.14159)), "  -3.142");
        assert_eq!(fmt("%08.3f", f(-3.14159)), "-003.142");
        assert_eq!(fmt("%e", f(12345.678)), "1.234568e+04");
        assert_eq!(fmt("%E", f(0.000123)), "1.230000E-04");
        assert_eq!(fmt("%.2e", f(0.0)), "0.00e+00");
        assert_eq!(fmt("%e", f(1e300)), "1.000000e+300");
        assert_eq!(fmt("%g", f(100000.0)), "100000");
        assert_eq!(fmt("%g", f(1000000.0)), "1e+06");
        assert_eq!(fmt("%g", f(0.0001)), "0.0001");
        assert_eq!(fmt("%g", f(0.00001)), "1e-05");
        assert_eq!(fmt("%g", f(3.14159265)), "3.14159");
        assert_eq!(fmt("%.3g", f(1234.5)), "1.23e+03");
        assert_eq!(fmt("%#g", f(1.0)), "1.00000");
        assert_eq!(fmt("%G", f(1e-10)), "1E-10");
        assert_eq!(fmt("%g", f(0.0)), "0");
        assert_eq!(fmt("%f", f(f64::INFINITY)), "inf");
        assert_eq!(fmt("%F", f(f64::NEG_INFINITY)), "-INF");
        assert_eq!(fmt("%5f", f(f64::NAN)), "  nan");
        assert_eq!(fmt("%f", f(-0.0)), "-0.000000");
        assert_eq!(fmt("%+.1f", f(2.0)), "+2.0");
    }

    #[test]
    fn argument_sizes_follow_the_promotions() {
        let size = |s: &str| {
            let mut k = 1;
            parse_conversion(s.as_bytes(), &mut k).unwrap().arg_size()
        };
        assert_eq!(size("%d"), 4);
        assert_eq!(size("%hhd"), 4);
        assert_eq!(size("%c"), 4);
        assert_eq!(size("%ld"), 8);
        assert_eq!(size("%lld"), 8);
        assert_eq!(size("%f"), 8);
        assert_eq!(size("%s"), 8);
        assert_eq!(size("%p"), 8);
    }

    #[test]
    fn unsupported_conversions_are_refused() {
        for s in ["%n", "%a", "%*d", "%.*f", "%Lf", "%"] {
            let mut k = 1;
            assert!(parse_conversion(s.as_bytes(), &mut k).is_err(), "{s}");
        }
    }
}

