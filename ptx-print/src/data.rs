//! Declarations, initializers and constant expressions.

use crate::instruction::{write_float, write_int};
use crate::writer::{Put, Writer};
use crate::WIDTH;
use pretty::{Arena, DocAllocator, DocBuilder};
use ptx_ir::ir::{Attribute, ConstExpr, Decl, DeclName, Initializer, IntList, VarDecl};
use ptx_ir::isa::ScalarType;
use std::fmt::Write;

/// `.global .align 4 .b8 name[16] = {...}` (without the `;`).
pub fn write_decl(out: &mut String, d: &VarDecl) {
    out.push_str(d.space.text());
    if !d.attributes().is_empty() {
        out.push_str(" .attribute(");
        for (k, a) in d.attributes().iter().enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            write_attribute(out, a);
        }
        out.push(')');
    }
    if let Some(a) = d.align() {
        let _ = write!(out, " .align {a}");
    }
    write_type(out, d.vector, d.ty);
    if let Some(p) = d.ptr() {
        out.push_str(" .ptr");
        if let Some(s) = p.space {
            out.push(' ');
            out.push_str(s.text());
        }
        if let Some(a) = p.align {
            let _ = write!(out, " .align {a}");
        }
    }
    write_names(out, d.names.iter().map(DeclName::from));
}

/// A declaration of a body (without the `;`): a plain register one, held
/// in place, as [`write_decl`] writes it as a [`VarDecl`].
pub(crate) fn write_body_decl(out: &mut impl Put, d: &Decl) {
    match d.as_var() {
        Some(v) => write_decl(out.string(), v),
        None => {
            out.str(d.space().text());
            write_type(out, d.vector(), d.ty());
            write_names(out, d.names());
        }
    }
}

/// ` .v4 .f32`: a declaration's vector width and type.
fn write_type(out: &mut impl Put, vector: Option<u8>, ty: ScalarType) {
    if let Some(v) = vector {
        out.str(" .v");
        push_u64(out, v.into());
    }
    out.byte(b' ');
    out.str(ty.text());
}

/// ` a, b[4] = {...}`: a declaration's names.
fn write_names<'a>(out: &mut impl Put, names: impl Iterator<Item = DeclName<'a>>) {
    for (k, n) in names.enumerate() {
        out.str(if k == 0 { " " } else { ", " });
        out.name(n.name);
        if let Some(r) = n.range {
            out.byte(b'<');
            push_u64(out, r.into());
            out.byte(b'>');
        }
        for dim in n.dims {
            match dim {
                Some(x) => {
                    out.byte(b'[');
                    push_u64(out, (*x).into());
                    out.byte(b']');
                }
                None => out.str("[]"),
            }
        }
        if let Some(init) = n.init {
            out.str(" = ");
            write_initializer(out.string(), init);
        }
    }
}

pub fn write_attribute(out: &mut String, a: &Attribute) {
    match a {
        Attribute::Managed => out.push_str(".managed"),
        Attribute::Unified(None) => out.push_str(".unified"),
        Attribute::Unified(Some((x, y))) => {
            let _ = write!(out, ".unified({x}, {y})");
        }
    }
}

fn write_initializer(out: &mut String, init: &Initializer) {
    match init {
        Initializer::Expr(e) => return write_expr(out, e),
        Initializer::Ints(l) => return write_int_list(out, l),
        Initializer::List(items) if write_expr_list(out, items) => return,
        Initializer::List(_) | Initializer::Fields(_) => {}
    }
    write_initializer_by_layout(out, init);
}

/// [`write_initializer`] through `pretty`'s layout of [`init_doc`].
fn write_initializer_by_layout(out: &mut String, init: &Initializer) {
    let arena: Arena<()> = Arena::new();
    let doc = init_doc(&arena, init);
    let _ = doc.into_doc().render_fmt(WIDTH, out);
}

/// A list of expressions only (`{0x2F, 0x68, ...}`, the bytes of a string
/// kept in hexadecimal) as [`init_doc`]'s layout writes it, directly: on
/// one line when it fits in [`WIDTH`] columns, else one value a line,
/// continuation lines indented by two. `false` (nothing written) for a
/// list holding another list or fields. Through `pretty` such a list cost
/// about 600 host instructions a value (complex.ptx's 75 string tables:
/// 5 M of 48 M at -O0).
fn write_expr_list(out: &mut String, items: &[Initializer]) -> bool {
    let mut pieces = Pieces::with_capacity(items.len(), 6 * items.len());
    for item in items {
        let Initializer::Expr(e) = item else { return false };
        pieces.push(|s| write_expr(s, e));
    }
    let between = if pieces.one_line_width(2) <= WIDTH { ", " } else { ",\n  " };
    out.push('{');
    for (k, piece) in pieces.iter().enumerate() {
        if k > 0 {
            out.push_str(between);
        }
        out.push_str(piece);
    }
    out.push('}');
    true
}

/// Pieces of text written one after another into one buffer, each read
/// back as a slice (a string each grew by doubling: 0.7 M host
/// instructions of complex.ptx's 7.5 M print, its parameter lists).
pub(crate) struct Pieces {
    text: String,
    ends: Vec<usize>,
}

impl Pieces {
    /// Room for `pieces` pieces of `bytes` bytes in all.
    pub(crate) fn with_capacity(pieces: usize, bytes: usize) -> Pieces {
        Pieces { text: String::with_capacity(bytes), ends: Vec::with_capacity(pieces) }
    }

    /// Adds the piece `write` writes.
    pub(crate) fn push(&mut self, write: impl FnOnce(&mut String)) {
        write(&mut self.text);
        self.ends.push(self.text.len());
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &str> {
        self.ends.iter().scan(0, |start, &end| Some(&self.text[std::mem::replace(start, end)..end]))
    }

    /// The columns of the pieces on one line with `, ` between them and
    /// `outer` columns around them (`{` and `}`).
    pub(crate) fn one_line_width(&self, outer: usize) -> usize {
        outer + self.text.len() + 2 * self.ends.len().saturating_sub(1)
    }
}

fn init_doc<'a>(arena: &'a Arena<'a>, init: &Initializer) -> DocBuilder<'a, Arena<'a>> {
    match init {
        Initializer::Expr(e) => {
            let mut s = String::new();
            write_expr(&mut s, e);
            arena.text(s)
        }
        Initializer::List(items) => {
            let inner = arena.intersperse(items.iter().map(|i| init_doc(arena, i)), arena.text(",").append(arena.line()));
            arena.text("{").append(inner.nest(2).group()).append(arena.text("}"))
        }
        Initializer::Ints(l) => {
            // Nested in a list of lists (multi-dimensional arrays): filled
            // lines, as at the top level.
            let mut s = String::new();
            write_int_list(&mut s, l);
            arena.intersperse(s.split('\n').map(|line| arena.text(line.trim_start().to_string())), arena.hardline()).nest(2)
        }
        Initializer::Fields(fields) => {
            let inner = arena.intersperse(
                fields.iter().map(|(n, e)| {
                    let mut s = String::new();
                    write_expr(&mut s, e);
                    arena.text(format!("{n} = {s}"))
                }),
                arena.text(",").append(arena.line()),
            );
            arena.text("{ ").append(inner.nest(2).group()).append(arena.text(" }"))
        }
    }
}

/// `{1, 2, 3}`: as many values on a line as fit in [`WIDTH`] columns (from
/// the column the `{` is at), continuation lines indented by two. Written
/// directly, not through `pretty`: data-heavy modules hold millions of these.
fn write_int_list(out: &mut String, l: &IntList) {
    let col = out.len() - out.rfind('\n').map_or(0, |k| k + 1);
    let mut w = Writer::new(out);
    w.byte(b'{');
    match l {
        IntList::Bytes(b) => write_values(&mut w, col + 1, b.iter().map(|&v| BYTE_DECIMALS[v as usize])),
        IntList::Words(words) => write_values(&mut w, col + 1, words.iter().map(|&v| Decimal::<20>::of(v))),
    }
    w.byte(b'}');
    w.finish();
}

/// The values of a list, separated, from column `col` on.
fn write_values<const N: usize>(w: &mut Writer, mut col: usize, values: impl Iterator<Item = Decimal<N>>) {
    for (k, digits) in values.enumerate() {
        if k > 0 {
            // The `,` and the blank after it, unless the value would end past the width.
            if col + 3 + digits.len > WIDTH {
                w.str(",\n  ");
                col = 2;
            } else {
                w.lit(b", ");
                col += 2;
            }
        }
        digits.put_to(w);
        col += digits.len;
    }
}

/// `v` in decimal, as `{v}` formats it (without the formatting machinery:
/// immediates, offsets and `.loc` numbers are on most lines).
pub(crate) fn push_u64(out: &mut impl Put, v: u64) {
    match u8::try_from(v) {
        Ok(b) => BYTE_DECIMALS[b as usize].put_to(out),
        Err(_) => Decimal::<20>::of(v).put_to(out),
    }
}

/// `v` in decimal, as `{v}` formats it.
pub(crate) fn push_i64(out: &mut impl Put, v: i64) {
    if v < 0 {
        out.byte(b'-');
    }
    push_u64(out, v.unsigned_abs());
}

/// The digits of every byte value, made once: data-heavy modules are
/// mostly byte arrays.
static BYTE_DECIMALS: [Decimal<3>; 256] = {
    let mut table = [Decimal { text: [0; 3], len: 0 }; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = Decimal::of(b as u64);
        b += 1;
    }
    table
};

/// The decimal digits of a value, from the start of a buffer of `N`
/// bytes, as many as the longest value needs (20 for `u64::MAX`): copied
/// whole, a copy of fixed size the compiler makes inline, then cut back to
/// [`Decimal::len`].
#[derive(Clone, Copy)]
struct Decimal<const N: usize> {
    text: [u8; N],
    len: usize,
}

impl<const N: usize> Decimal<N> {
    /// The digits of `v`, which has at most `N`.
    const fn of(mut v: u64) -> Decimal<N> {
        let mut text = [0u8; N];
        // The digits counted by comparisons (`ten_to_len` is 10^len; at 20
        // digits, the most a `u64` has, it is not needed again).
        let mut len = 1;
        let mut ten_to_len = 10u64;
        while len < 20 && v >= ten_to_len {
            len += 1;
            ten_to_len = ten_to_len.wrapping_mul(10);
        }
        let mut k = len;
        while k > 0 {
            k -= 1;
            text[k] = b'0' + (v % 10) as u8;
            v /= 10;
        }
        Decimal { text, len }
    }

    /// Appends the digits to `out`.
    #[inline]
    fn put_to(&self, out: &mut impl Put) {
        out.digits(&self.text, self.len);
    }
}

/// A constant expression, with parentheses wherever precedence needs them.
pub fn write_expr(out: &mut String, e: &ConstExpr) {
    write_expr_prec(out, e, 0);
}

fn write_expr_prec(out: &mut String, e: &ConstExpr, min: u8) {
    match e {
        ConstExpr::Int(i) => write_int(out, i),
        ConstExpr::Float(f) => write_float(out, f),
        ConstExpr::Sym(s) => out.push_str(s),
        ConstExpr::Generic(x) => {
            out.push_str("generic(");
            write_expr(out, x);
            out.push(')');
        }
        ConstExpr::Mask(m, x) => {
            write_int(out, m);
            out.push('(');
            write_expr(out, x);
            out.push(')');
        }
        ConstExpr::Unary(op, x) => {
            out.push_str(op.text());
            // `- -1` must not print as `--1`; parenthesize anything but a plain operand.
            let simple = matches!(**x, ConstExpr::Int(_) | ConstExpr::Float(_) | ConstExpr::Sym(_));
            if simple {
                write_expr_prec(out, x, 100);
            } else {
                out.push('(');
                write_expr(out, x);
                out.push(')');
            }
        }
        ConstExpr::Cast(signed, x) => {
            out.push_str(if *signed { "(.s64)" } else { "(.u64)" });
            out.push('(');
            write_expr(out, x);
            out.push(')');
        }
        ConstExpr::Binary(op, a, b) => {
            let p = op.precedence();
            let paren = p < min;
            if paren {
                out.push('(');
            }
            write_expr_prec(out, a, p);
            // Spaces keep `a % 7` from lexing as `a` and the name `%7`.
            out.push(' ');
            out.push_str(op.text());
            out.push(' ');
            // Left-associative: the right operand needs parentheses at equal precedence.
            write_expr_prec(out, b, p + 1);
            if paren {
                out.push(')');
            }
        }
        ConstExpr::Cond(c, a, b) => {
            if min > 0 {
                out.push('(');
            }
            write_expr_prec(out, c, 1);
            out.push_str(" ? ");
            write_expr(out, a);
            out.push_str(" : ");
            write_expr(out, b);
            if min > 0 {
                out.push(')');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body's declaration is written as its [`VarDecl`] is: the plain
    /// register ones held in place (a name, a vector, a range) and the
    /// boxed ones.
    #[test]
    fn body_declarations_are_written_as_their_var_decls() {
        use ptx_ir::ir::Declarator;
        use ptx_ir::isa::StateSpace;
        let reg = |ty, name: &str| VarDecl::new(StateSpace::Reg, ty, name);
        let mut vector = reg(ScalarType::F32, "%v");
        vector.vector = Some(4);
        let mut ranged = reg(ScalarType::Pred, "%p");
        ranged.names[0].range = Some(12);
        let mut two = reg(ScalarType::U32, "%a");
        two.names.push(Declarator::new("%b"));
        let decls = [reg(ScalarType::U32, "%r5"), reg(ScalarType::B64, "%a_long_register_name"), vector, ranged, two, VarDecl::new(StateSpace::Local, ScalarType::B8, "x").array(&[16]).aligned(8)];
        let mut plain = 0;
        for d in decls {
            let body = Decl::new(d.clone());
            plain += usize::from(body.as_var().is_none());
            let (mut written, mut expected) = (String::new(), String::new());
            write_body_decl(&mut written, &body);
            write_decl(&mut expected, &d);
            assert_eq!(written, expected);
        }
        assert_eq!(plain, 4);
    }

    /// A list of expressions written directly is written as `pretty` lays
    /// it out: lists whose one-line form is around [`WIDTH`] columns (one
    /// column short, at it, one over), of values of every length, empty,
    /// and of one value; a list holding a list goes to `pretty`.
    #[test]
    fn expression_lists_are_laid_out_as_pretty_lays_them_out() {
        use ptx_ir::ir::{IntLit, Radix};
        let hex = |v: u64| Initializer::Expr(ConstExpr::Int(IntLit { value: v, radix: Radix::Hex, unsigned: false, suffix: false }));
        let mut lists: Vec<Vec<Initializer>> = vec![Vec::new(), vec![hex(1)]];
        for count in 1..40u64 {
            for scale in [1u64, 0x100, 0x10000, 0x1000_0000] {
                lists.push((0..count).map(|k| hex(k * scale + k)).collect());
            }
        }
        // One-line forms of exactly WIDTH - 1, WIDTH and WIDTH + 1 columns:
        // `0x1` values (5 columns each with `, `, 2 for the braces) and a
        // last value longer by the rest.
        for target in [WIDTH - 1, WIDTH, WIDTH + 1] {
            for count in 2..=target / 5 {
                let rest = target - 5 * count;
                if rest <= 12 {
                    lists.push((0..count as u64).map(|k| hex(if k + 1 == count as u64 { 1 << (4 * rest) } else { 1 })).collect());
                }
            }
        }
        let mut at_width = 0;
        for items in &lists {
            let init = Initializer::List(items.clone());
            let (mut direct, mut by_layout) = (String::from("x = "), String::from("x = "));
            write_initializer(&mut direct, &init);
            write_initializer_by_layout(&mut by_layout, &init);
            assert_eq!(direct, by_layout, "{} values", items.len());
            let flat = direct.replace(",\n  ", ", ");
            at_width += usize::from((WIDTH - 1..=WIDTH + 1).contains(&(flat.len() - 4)));
        }
        assert!(at_width > 3, "too few lists near the width: {at_width}");
        let nested = Initializer::List(vec![hex(1), Initializer::List(vec![hex(2), hex(3)])]);
        assert!(!write_expr_list(&mut String::new(), match &nested { Initializer::List(l) => l, _ => unreachable!() }));
    }

    #[test]
    fn lists_are_written_as_format_writes_their_values() {
        let bytes: Vec<u8> = (0..=255).collect();
        let words: Vec<u64> = [0, 9, 10, 255, 256, 99_999, u32::MAX as u64, u64::MAX].into();
        let expected = |values: Vec<String>| format!("{{{}}}", values.join(", "));
        for (list, values) in [
            (IntList::Bytes(bytes.clone().into()), bytes.iter().map(|v| v.to_string()).collect::<Vec<_>>()),
            (IntList::Words(words.clone().into()), words.iter().map(|v| v.to_string()).collect()),
        ] {
            let mut out = String::new();
            write_int_list(&mut out, &list);
            assert_eq!(out.replace("\n  ", " "), expected(values));
        }
    }

    /// Lists longer than the writer's buffer, after text on the line:
    /// the values as `format!` writes them, and lines filled up to
    /// [`WIDTH`] (the next value would not have fit).
    #[test]
    fn long_lists_fill_their_lines() {
        let bytes: Vec<u8> = (0..3 * 1024 + 7).map(|k| (k * 37 % 256) as u8).collect();
        let words: Vec<u64> = (0..2 * 1024 + 3).map(|k| (k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (k % 64)).collect();
        for (list, values) in [
            (IntList::Bytes(bytes.clone().into()), bytes.iter().map(|v| v.to_string()).collect::<Vec<_>>()),
            (IntList::Words(words.clone().into()), words.iter().map(|v| v.to_string()).collect()),
        ] {
            let prefix = "\n.global .align 1 .b8 data[9] = ";
            let mut out = String::from(prefix);
            write_int_list(&mut out, &list);
            let text = &out[1..];
            assert_eq!(text[prefix.len() - 1..].replace("\n  ", " "), format!("{{{}}}", values.join(", ")));
            let lines: Vec<&str> = text.split('\n').collect();
            for (k, line) in lines.iter().enumerate() {
                assert!(line.len() <= WIDTH, "line {k} is {} columns", line.len());
                if let Some(next) = lines.get(k + 1) {
                    let first = next.trim_start().split([',', '}']).next().unwrap();
                    assert!(line.len() + 1 + first.len() + 1 > WIDTH, "line {k} had room for `{first}`");
                }
            }
        }
    }
}
