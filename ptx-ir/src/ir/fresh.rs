//! Fresh registers and labels: names that collide with no name of the
//! function, with their `.reg` declaration kept in step, made without
//! rescanning the function on each call.
//!
//! The first call scans the function once and keeps the *stems* of its names
//! (a name without its trailing digits: `%r` for `%r12`), including the
//! module symbols its instructions name. The fresh registers of one type are
//! the members of one parameterized declaration at the top of the body,
//! `.reg .u32 %tu32_<N>;`, whose prefix is no stem in use: no other name in
//! the function can be that prefix followed by digits. Each further register
//! grows `N` by one, in place. Registers pushed onto [`Function::regs`]
//! directly are seen on the next call (their stems are added); names added
//! to declarations by hand are not.

use super::{AddrBase, Function, LabelId, Name, Operand, Reg, RegId, Stmt, VarDecl};
use crate::isa::{ScalarType, StateSpace};
use rustc_hash::FxHashSet;
use std::fmt;

/// What [`Function::new_reg`] and [`Function::new_label`] remember between
/// calls. Not part of the function's meaning: always equal to another.
/// A pass that renames registers or declared names by hand resets it
/// (`f.fresh = FreshNames::default()`): the next call scans again.
#[derive(Clone, Default)]
pub struct FreshNames {
    /// Stems of every name of the function; `None` until the first call.
    stems: Option<FxHashSet<Box<str>>>,
    /// How many of `Function::regs` / `Function::labels` are in `stems`.
    regs_seen: usize,
    labels_seen: usize,
    /// One range declaration per register type.
    decls: Vec<FreshDecl>,
    /// The prefix of fresh labels and the next number.
    label_prefix: Option<Box<str>>,
    next_label: u32,
}

#[derive(Clone)]
struct FreshDecl {
    ty: ScalarType,
    prefix: Box<str>,
    /// Where the declaration was last seen in the body (checked before use).
    at: usize,
}

impl PartialEq for FreshNames {
    fn eq(&self, _: &FreshNames) -> bool {
        true
    }
}

impl fmt::Debug for FreshNames {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FreshNames")
    }
}

/// A function body as the fresh-name code sees it: a `Vec`, or the two
/// halves of a [`super::FuncCursor`].
pub(crate) trait Body {
    fn len(&self) -> usize;
    fn stmt(&self, i: usize) -> Option<&Stmt>;
    fn stmt_mut(&mut self, i: usize) -> Option<&mut Stmt>;
    /// Inserts a statement at index 0 (a cursor stays on its statement).
    fn insert_first(&mut self, s: Stmt);
}

impl Body for Vec<Stmt> {
    fn len(&self) -> usize {
        Vec::len(self)
    }
    fn stmt(&self, i: usize) -> Option<&Stmt> {
        self.get(i)
    }
    fn stmt_mut(&mut self, i: usize) -> Option<&mut Stmt> {
        self.get_mut(i)
    }
    fn insert_first(&mut self, s: Stmt) {
        self.insert(0, s)
    }
}

/// `%r12` gives `%r`.
fn stem(name: &str) -> &str {
    name.trim_end_matches(|c: char| c.is_ascii_digit())
}

fn add_stem(stems: &mut FxHashSet<Box<str>>, name: &str) {
    let s = stem(name);
    if !stems.contains(s) {
        stems.insert(s.into());
    }
}

/// The stems of every name the function declares or mentions.
fn scan(f: &Function, body: &impl Body) -> FxHashSet<Box<str>> {
    let mut stems = FxHashSet::default();
    let decl_names = |stems: &mut FxHashSet<Box<str>>, d: &VarDecl| d.names.iter().for_each(|n| add_stem(stems, &n.name));
    for d in f.params.iter().flatten().chain(f.ret.iter().flatten()) {
        decl_names(&mut stems, d);
    }
    for r in &f.regs {
        add_stem(&mut stems, &r.name);
    }
    for l in &f.labels {
        add_stem(&mut stems, l);
    }
    for i in 0..body.len() {
        match body.stmt(i) {
            Some(Stmt::Decl(d)) => d.names().for_each(|n| add_stem(&mut stems, n.name)),
            Some(Stmt::Instr(ins)) => {
                for op in &ins.operands {
                    op.for_each_operand(&mut |o| match o {
                        Operand::Sym(s) => add_stem(&mut stems, &s.name),
                        Operand::Addr(a) => {
                            if let AddrBase::Sym(name) = &a.base {
                                add_stem(&mut stems, name)
                            }
                        }
                        Operand::ArrayElem(e) => add_stem(&mut stems, &e.name),
                        _ => {}
                    });
                }
            }
            Some(Stmt::CallTargets(_, names)) => names.iter().for_each(|n| add_stem(&mut stems, n)),
            Some(Stmt::CallPrototype(_, p)) => {
                for d in p.params.iter().chain(p.ret.iter().flatten()) {
                    decl_names(&mut stems, d);
                }
            }
            _ => {}
        }
    }
    stems
}

/// Is `s` the fresh declaration of `ty` with this prefix?
fn is_fresh_decl(s: Option<&Stmt>, ty: ScalarType, prefix: &str) -> bool {
    match s {
        Some(Stmt::Decl(d)) => {
            d.space() == StateSpace::Reg && d.ty() == ty && d.vector().is_none() && d.name_count() == 1 && d.name(0).is_some_and(|n| n.name.as_str() == prefix && n.range.is_some())
        }
        _ => false,
    }
}

fn range_decl(ty: ScalarType, prefix: &str, count: u32) -> Stmt {
    let mut decl = VarDecl::new(StateSpace::Reg, ty, prefix);
    decl.names[0].range = Some(count);
    Stmt::Decl(decl.into())
}

impl FreshNames {
    /// Brings `stems` up to date with the function (a full scan the first time).
    fn update(&mut self, f: &Function, body: &impl Body) {
        let stems = match &mut self.stems {
            Some(s) if f.regs.len() >= self.regs_seen && f.labels.len() >= self.labels_seen => s,
            _ => {
                self.stems = Some(scan(f, body));
                self.regs_seen = f.regs.len();
                self.labels_seen = f.labels.len();
                return;
            }
        };
        for r in &f.regs[self.regs_seen..] {
            add_stem(stems, &r.name);
        }
        for l in &f.labels[self.labels_seen..] {
            add_stem(stems, l);
        }
        self.regs_seen = f.regs.len();
        self.labels_seen = f.labels.len();
    }

    /// A prefix `{lead}{k}{tail}` (no `k` for the first) that is no stem in use; reserves it.
    fn unused_prefix(&mut self, lead: &str, tail: &str) -> Box<str> {
        let stems = self.stems.as_mut().expect("scanned");
        let mut k = 0u32;
        loop {
            let cand = if k == 0 { format!("{lead}{tail}") } else { format!("{lead}{k}{tail}") };
            if !stems.contains(cand.as_str()) {
                let cand: Box<str> = cand.into();
                stems.insert(cand.clone());
                return cand;
            }
            k += 1;
        }
    }

    /// The index of the fresh declaration `k` in the body, re-creating it if
    /// it was removed (counting the registers that still carry its prefix).
    fn locate(&mut self, k: usize, regs: &[Reg], body: &mut impl Body) -> usize {
        let (ty, at) = (self.decls[k].ty, self.decls[k].at);
        if is_fresh_decl(body.stmt(at), ty, &self.decls[k].prefix) {
            return at;
        }
        let prefix = self.decls[k].prefix.clone();
        if let Some(i) = (0..body.len()).find(|&i| is_fresh_decl(body.stmt(i), ty, &prefix)) {
            self.decls[k].at = i;
            return i;
        }
        let count = regs
            .iter()
            .filter_map(|r| r.name.strip_prefix(&*prefix)?.parse::<u32>().ok())
            .max()
            .map_or(0, |n| n + 1);
        self.insert_first(body, range_decl(ty, &prefix, count));
        self.decls[k].at = 0;
        0
    }

    fn insert_first(&mut self, body: &mut impl Body, s: Stmt) {
        body.insert_first(s);
        for d in &mut self.decls {
            d.at += 1;
        }
    }
}

/// `prefix` followed by `n` in decimal (without `format!`: this is the
/// hot part of making a register).
fn numbered(prefix: &str, mut n: u32) -> Name {
    let mut digits = [0u8; 10];
    let mut k = digits.len();
    loop {
        k -= 1;
        digits[k] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut s = String::with_capacity(prefix.len() + digits.len() - k);
    s.push_str(prefix);
    s.extend(digits[k..].iter().map(|d| *d as char));
    s.into()
}

/// A fresh register of type `ty` in `f`, whose body is `body` (taken out of `f`).
pub(crate) fn new_reg(f: &mut Function, body: &mut impl Body, ty: ScalarType) -> RegId {
    let mut fresh = std::mem::take(&mut f.fresh);
    fresh.update(f, body);
    let k = match fresh.decls.iter().position(|d| d.ty == ty) {
        Some(k) => k,
        None => {
            let prefix = fresh.unused_prefix("%t", &format!("{}_", ty.text().trim_start_matches('.')));
            fresh.insert_first(body, range_decl(ty, &prefix, 0));
            fresh.decls.push(FreshDecl { ty, prefix, at: 0 });
            fresh.decls.len() - 1
        }
    };
    let at = fresh.locate(k, &f.regs, body);
    let Some(Stmt::Decl(d)) = body.stmt_mut(at) else { unreachable!("located a declaration") };
    let mut range = d.range_mut().expect("a declaration of one name");
    let n = range.get().unwrap_or(0);
    range.set(Some(n + 1));
    let name = numbered(&fresh.decls[k].prefix, n);
    f.regs.push(Reg { name, ty, vector: None, space: StateSpace::Reg });
    // Its stem is the reserved prefix: already known.
    fresh.regs_seen = f.regs.len();
    f.fresh = fresh;
    RegId(f.regs.len() as u32 - 1)
}

/// A fresh label of `f` (not placed: push a [`Stmt::Label`] for it).
pub(crate) fn new_label(f: &mut Function, body: &impl Body) -> LabelId {
    let mut fresh = std::mem::take(&mut f.fresh);
    fresh.update(f, body);
    if fresh.label_prefix.is_none() {
        fresh.label_prefix = Some(fresh.unused_prefix("$Lt", "_"));
    }
    let name = numbered(fresh.label_prefix.as_deref().unwrap_or_default(), fresh.next_label);
    fresh.next_label += 1;
    f.labels.push(name);
    fresh.labels_seen = f.labels.len();
    f.fresh = fresh;
    LabelId(f.labels.len() as u32 - 1)
}

impl Function {
    /// A new register of type `ty` with a name no other name of the function
    /// has, declared at the top of the body (`.reg .u32 %tu32_<N>;` grows by
    /// one). Amortized O(1): the function is scanned once, on the first call.
    ///
    /// # Panics
    /// If the function has no body (a declaration).
    pub fn new_reg(&mut self, ty: ScalarType) -> RegId {
        let mut body = self.body.take().expect("Function::new_reg: the function has no body");
        let r = new_reg(self, &mut body, ty);
        self.body = Some(body);
        r
    }

    /// A new label with a name no other name of the function has. It is not
    /// placed: insert a [`Stmt::Label`] where it belongs.
    pub fn new_label(&mut self) -> LabelId {
        let had_body = self.body.is_some();
        let body = self.body.take().unwrap_or_default();
        let l = new_label(self, &body);
        if had_body {
            self.body = Some(body);
        }
        l
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_in_decimal() {
        for n in [0, 7, 10, 4096, u32::MAX] {
            assert_eq!(&*numbered("%t", n), format!("%t{n}"));
        }
        assert_eq!(stem("%r12"), "%r");
        assert_eq!(stem("%tu32_"), "%tu32_");
    }
}
