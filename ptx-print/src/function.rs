//! Function headers and bodies.

use crate::data::{push_u64, write_attribute, write_body_decl, write_decl, write_expr, Pieces};
use crate::instruction::{put_instruction, put_label};
use crate::writer::Writer;
use crate::WIDTH;
use pretty::{Arena, DocAllocator};
use ptx_ir::ir::{FuncDirective, FuncKind, Function, Stmt, VarDecl};
use std::fmt::Write;

/// Deepest indentation printed.
const MAX_INDENT: usize = Writer::MAX_TABS;

pub fn write_function(out: &mut String, f: &Function) {
    if let Some(l) = f.linkage {
        out.push_str(l.text());
        out.push(' ');
    }
    out.push_str(match f.kind {
        FuncKind::Entry => ".entry",
        FuncKind::Func => ".func",
    });
    if !f.attributes.is_empty() {
        out.push_str(" .attribute(");
        for (k, a) in f.attributes.iter().enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            write_attribute(out, a);
        }
        out.push(')');
    }
    if let Some(ret) = &f.ret {
        out.push(' ');
        write_params(out, ret);
    }
    out.push(' ');
    out.push_str(&f.name);
    if let Some(params) = &f.params {
        write_params(out, params);
    }
    out.push('\n');
    for d in &f.directives {
        write_directive(out, d);
        out.push('\n');
    }
    let Some(body) = &f.body else {
        out.push_str(";\n");
        return;
    };
    out.push_str("{\n");
    let mut w = Writer::new(out);
    let mut depth = 1usize;
    for s in body {
        if matches!(s, Stmt::ScopeEnd) {
            depth = depth.saturating_sub(1).max(1);
        }
        // Indentation follows nested scopes, up to a limit (deeply nested
        // machine-made scopes would otherwise make the output quadratic).
        let indent = if matches!(s, Stmt::Label(_) | Stmt::BranchTargets(..) | Stmt::CallTargets(..) | Stmt::CallPrototype(..)) { 0 } else { depth.min(MAX_INDENT) };
        w.tabs(indent);
        put_stmt(&mut w, f, s);
        w.byte(b'\n');
        if matches!(s, Stmt::ScopeBegin) {
            depth += 1;
        }
    }
    w.lit(b"}\n");
    w.finish();
}

/// `(.param .u64 a, .param .u32 b)`, one parameter per line when it does not fit.
fn write_params(out: &mut String, params: &[VarDecl]) {
    if params.is_empty() {
        out.push_str("()");
        return;
    }
    let mut pieces = Pieces::with_capacity(params.len(), 48 * params.len());
    for p in params {
        pieces.push(|s| write_decl(s, p));
    }
    let items: Vec<&str> = pieces.iter().collect();
    if !write_params_directly(out, &items) {
        write_params_pretty(out, &items);
    }
}

/// `(a, b)` on one line if it fits in [`WIDTH`] columns, else one
/// parameter per line indented by 4: what [`write_params_pretty`] renders,
/// written without building the document when the choice is clear (plain
/// ASCII items, a one-line width not within a few columns of [`WIDTH`]).
/// False (nothing written) otherwise.
fn write_params_directly(out: &mut String, items: &[&str]) -> bool {
    const MARGIN: usize = 4;
    if !items.iter().all(|s| s.is_ascii() && !s.contains('\n')) {
        return false;
    }
    let flat = 2 + items.iter().map(|s| s.len()).sum::<usize>() + 2 * (items.len() - 1);
    if flat + MARGIN <= WIDTH {
        out.push('(');
        for (k, s) in items.iter().enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            out.push_str(s);
        }
        out.push(')');
    } else if flat > WIDTH + MARGIN {
        out.push('(');
        for (k, s) in items.iter().enumerate() {
            out.push_str(if k > 0 { ",\n    " } else { "\n    " });
            out.push_str(s);
        }
        out.push_str("\n)");
    } else {
        return false;
    }
    true
}

fn write_params_pretty(out: &mut String, items: &[&str]) {
    let arena: Arena<()> = Arena::new();
    let items = items.iter().map(|s| arena.text(s.to_string()));
    let doc = arena
        .text("(")
        .append(arena.line_().append(arena.intersperse(items, arena.text(",").append(arena.line()))).nest(4))
        .append(arena.line_())
        .append(arena.text(")"))
        .group();
    let _ = doc.into_doc().render_fmt(WIDTH, out);
}

fn write_dims(out: &mut String, v: &[u32]) {
    for (k, x) in v.iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{x}");
    }
}

fn write_directive(out: &mut String, d: &FuncDirective) {
    let _ = match d {
        FuncDirective::MaxNReg(n) => write!(out, ".maxnreg {n}"),
        FuncDirective::MaxNTid(v) => {
            out.push_str(".maxntid ");
            write_dims(out, v);
            Ok(())
        }
        FuncDirective::ReqNTid(v) => {
            out.push_str(".reqntid ");
            write_dims(out, v);
            Ok(())
        }
        FuncDirective::MinNCtaPerSm(n) => write!(out, ".minnctapersm {n}"),
        FuncDirective::MaxNCtaPerSm(n) => write!(out, ".maxnctapersm {n}"),
        FuncDirective::NoReturn => write!(out, ".noreturn"),
        FuncDirective::ExplicitCluster => write!(out, ".explicitcluster"),
        FuncDirective::ReqNCtaPerCluster(v) => {
            out.push_str(".reqnctapercluster ");
            write_dims(out, v);
            Ok(())
        }
        FuncDirective::MaxClusterRank(n) => write!(out, ".maxclusterrank {n}"),
        FuncDirective::Pragma(p) => write!(out, ".pragma {};", p.join(", ")),
        FuncDirective::AbiPreserve(n) => write!(out, ".abi_preserve {n}"),
        FuncDirective::AbiPreserveControl(n) => write!(out, ".abi_preserve_control {n}"),
    };
}

#[inline(always)]
fn put_stmt(w: &mut Writer, f: &Function, s: &Stmt) {
    match s {
        Stmt::Instr(i) => put_instruction(w, f, i),
        Stmt::Label(l) => {
            put_label(w, f, *l);
            w.byte(b':');
        }
        Stmt::Decl(d) => {
            write_body_decl(w, d);
            w.byte(b';');
        }
        Stmt::Loc(l) => {
            w.lit(b".loc ");
            for (k, n) in [l.file, l.line, l.col].into_iter().enumerate() {
                if k > 0 {
                    w.byte(b' ');
                }
                push_u64(w, n.into());
            }
            if let Some(fname) = l.function_name() {
                w.str(", function_name ");
                write_expr(w.string(), fname);
            }
            if let Some((a, b, c)) = l.inlined_at() {
                let _ = write!(w.string(), ", inlined_at {a} {b} {c}");
            }
        }
        Stmt::ScopeBegin => w.byte(b'{'),
        Stmt::ScopeEnd => w.byte(b'}'),
        other => write_rare_stmt(w.string(), f, other),
    }
}

/// The statements [`put_stmt`] leaves to a string.
fn write_rare_stmt(out: &mut String, f: &Function, s: &Stmt) {
    match s {
        Stmt::Instr(_) | Stmt::Label(_) | Stmt::Decl(_) | Stmt::Loc(_) | Stmt::ScopeBegin | Stmt::ScopeEnd => {
            let mut w = Writer::new(out);
            put_stmt(&mut w, f, s);
            w.finish();
        }
        Stmt::Pragma(p) => {
            let _ = write!(out, ".pragma {};", p.join(", "));
        }
        Stmt::BranchTargets(l, ts) => {
            put_label(out, f, *l);
            out.push_str(": .branchtargets ");
            for (k, t) in ts.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                put_label(out, f, *t);
            }
            out.push(';');
        }
        Stmt::CallTargets(l, ts) => {
            put_label(out, f, *l);
            let _ = write!(out, ": .calltargets {};", ts.join(", "));
        }
        Stmt::CallPrototype(l, p) => {
            put_label(out, f, *l);
            out.push_str(": .callprototype ");
            if let Some(r) = &p.ret {
                write_params(out, r);
                out.push(' ');
            }
            out.push('_');
            out.push(' ');
            write_params(out, &p.params);
            for d in &p.directives {
                out.push(' ');
                write_directive(out, d);
            }
            out.push(';');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The direct writing of a parameter list is the document's rendering,
    /// on either side of the width (and leaves the boundary to the document).
    #[test]
    fn parameter_lists_are_written_as_the_document_renders_them() {
        let mut x = 12345u64;
        let mut answered = 0;
        for n in 1..14 {
            for _ in 0..40 {
                let items: Vec<String> = (0..n)
                    .map(|_| {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        format!(".param .u64 p{}", "x".repeat((x >> 59) as usize))
                    })
                    .collect();
                let items: Vec<&str> = items.iter().map(String::as_str).collect();
                let mut direct = String::new();
                let mut pretty = String::new();
                write_params_pretty(&mut pretty, &items);
                if write_params_directly(&mut direct, &items) {
                    answered += 1;
                    assert_eq!(direct, pretty, "{items:?}");
                } else {
                    assert!(direct.is_empty());
                }
            }
        }
        assert!(answered > 400, "{answered}");
    }
}
