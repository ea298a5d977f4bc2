//! Declarations, initializers and constant expressions.

use crate::instruction::{write_float, write_int};
use crate::WIDTH;
use pretty::{Arena, DocAllocator, DocBuilder};
use ptx_ir::ir::{Attribute, ConstExpr, Initializer, IntList, VarDecl};
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
    if let Some(v) = d.vector {
        let _ = write!(out, " .v{v}");
    }
    out.push(' ');
    out.push_str(d.ty.text());
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
    for (k, n) in d.names.iter().enumerate() {
        out.push_str(if k == 0 { " " } else { ", " });
        out.push_str(&n.name);
        if let Some(r) = n.range {
            let _ = write!(out, "<{r}>");
        }
        for dim in &n.dims {
            match dim {
                Some(x) => {
                    let _ = write!(out, "[{x}]");
                }
                None => out.push_str("[]"),
            }
        }
        if let Some(init) = &n.init {
            out.push_str(" = ");
            write_initializer(out, init);
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
        Initializer::List(_) | Initializer::Fields(_) => {}
    }
    let arena: Arena<()> = Arena::new();
    let doc = init_doc(&arena, init);
    let _ = doc.into_doc().render_fmt(WIDTH, out);
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
    let mut col = out.len() - out.rfind('\n').map_or(0, |k| k + 1);
    let mut buf: Vec<u8> = Vec::with_capacity(l.len() * 4 + 2);
    buf.push(b'{');
    col += 1;
    let mut digits = [0u8; 20];
    for k in 0..l.len() {
        let text = decimal(l.get(k), &mut digits);
        if k > 0 {
            buf.push(b',');
            col += 1;
            if col + 1 + text.len() + 1 > WIDTH {
                buf.extend_from_slice(b"\n  ");
                col = 2;
            } else {
                buf.push(b' ');
                col += 1;
            }
        }
        buf.extend_from_slice(text);
        col += text.len();
    }
    buf.push(b'}');
    // Only ASCII was written.
    out.push_str(std::str::from_utf8(&buf).unwrap_or_default());
}

/// The decimal digits of `v`, in `buf`.
pub(crate) fn decimal(mut v: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    &buf[i..]
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
