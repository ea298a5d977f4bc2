//! Bit-vector expressions: a hash-consed arena of SMT-LIB `QF_BV` terms
//! (widths 1 to 128), with a concrete evaluator that follows the SMT-LIB
//! semantics exactly (division by zero included) and a printer to SMT-LIB2
//! that names every shared node once (`define-fun`), so that large programs
//! (64-bit magic-number divisions) stay linear in size.
//!
//! Truth values are bit-vectors of width 1 (`#b1` true): comparisons give
//! one, `ite` takes one as its condition.

use ptx_ir::eval::{bits_mask, sext};
use rustc_hash::FxHashMap;
use std::fmt::Write;

/// A node of a [`Ctx`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Bv(u32);

impl Bv {
    /// Its position in the context (an index into [`Ctx::eval_all`]'s values).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Operations of one operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op1 {
    Not,
    Neg,
}

/// Operations of two operands of one width (`Concat`: any widths). The
/// comparisons give one bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op2 {
    Add,
    Sub,
    Mul,
    And,
    Or,
    Xor,
    Shl,
    Lshr,
    Ashr,
    Udiv,
    Urem,
    Sdiv,
    Srem,
    Eq,
    Ult,
    Ule,
    Slt,
    Sle,
    Concat,
}

/// One node.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Expr {
    /// The k-th variable of the context.
    Var(u32),
    Const(u128),
    Un(Op1, Bv),
    Bin(Op2, Bv, Bv),
    /// `ite c a b` with a one-bit `c`.
    Ite(Bv, Bv, Bv),
    /// Bits `hi..=lo`.
    Extract(u8, u8, Bv),
    /// Zero- or sign-extension by this many bits.
    Zext(u8, Bv),
    Sext(u8, Bv),
}

/// An arena of shared expressions. Nodes are created after their operands,
/// so index order is a topological order.
#[derive(Default)]
pub struct Ctx {
    exprs: Vec<Expr>,
    widths: Vec<u8>,
    index: FxHashMap<(Expr, u8), Bv>,
    /// The width of each variable.
    vars: Vec<u8>,
}

fn m(w: u8) -> u128 {
    bits_mask(w as u32)
}

/// SMT-LIB `bvudiv`/`bvurem` (by zero: all ones / the dividend).
fn udiv(a: u128, b: u128, w: u8) -> u128 {
    if b == 0 {
        m(w)
    } else {
        a / b
    }
}
fn urem(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        a % b
    }
}

/// The value of `op` on the values of its operands (of width `wa` and `wb`).
fn apply2(op: Op2, a: u128, b: u128, wa: u8, wb: u8) -> u128 {
    let w = wa;
    let msk = m(w);
    let neg = |x: u128| x.wrapping_neg() & msk;
    let msb = |x: u128| (x >> (w - 1)) & 1 == 1;
    let r = match op {
        Op2::Add => a.wrapping_add(b),
        Op2::Sub => a.wrapping_sub(b),
        Op2::Mul => a.wrapping_mul(b),
        Op2::And => a & b,
        Op2::Or => a | b,
        Op2::Xor => a ^ b,
        Op2::Shl => {
            if b >= w as u128 {
                0
            } else {
                a << b
            }
        }
        Op2::Lshr => {
            if b >= w as u128 {
                0
            } else {
                a >> b
            }
        }
        Op2::Ashr => (sext(a, w as u32) >> b.min(w as u128 - 1)) as u128,
        Op2::Udiv => udiv(a, b, w),
        Op2::Urem => urem(a, b),
        // SMT-LIB: by the magnitudes, the sign fixed after.
        Op2::Sdiv => match (msb(a), msb(b)) {
            (false, false) => udiv(a, b, w),
            (true, false) => neg(udiv(neg(a), b, w)),
            (false, true) => neg(udiv(a, neg(b), w)),
            (true, true) => udiv(neg(a), neg(b), w),
        },
        Op2::Srem => match (msb(a), msb(b)) {
            (false, false) => urem(a, b),
            (true, false) => neg(urem(neg(a), b)),
            (false, true) => urem(a, neg(b)),
            (true, true) => neg(urem(neg(a), neg(b))),
        },
        Op2::Eq => (a == b) as u128,
        Op2::Ult => (a < b) as u128,
        Op2::Ule => (a <= b) as u128,
        Op2::Slt => (sext(a, w as u32) < sext(b, w as u32)) as u128,
        Op2::Sle => (sext(a, w as u32) <= sext(b, w as u32)) as u128,
        Op2::Concat => return (a << wb) | b,
    };
    match op {
        Op2::Eq | Op2::Ult | Op2::Ule | Op2::Slt | Op2::Sle => r,
        _ => r & msk,
    }
}

impl Ctx {
    pub fn new() -> Ctx {
        Ctx::default()
    }

    pub fn width(&self, b: Bv) -> u8 {
        self.widths[b.0 as usize]
    }

    pub fn expr(&self, b: Bv) -> &Expr {
        &self.exprs[b.0 as usize]
    }

    /// The widths of the variables, by index.
    pub fn var_widths(&self) -> &[u8] {
        &self.vars
    }

    /// The constant value of a node, if it is one.
    pub fn as_const(&self, b: Bv) -> Option<u128> {
        match self.expr(b) {
            Expr::Const(v) => Some(*v),
            _ => None,
        }
    }

    fn intern(&mut self, e: Expr, w: u8) -> Bv {
        debug_assert!((1..=128).contains(&w), "width {w}");
        if let Some(&b) = self.index.get(&(e.clone(), w)) {
            return b;
        }
        let b = Bv(self.exprs.len() as u32);
        self.exprs.push(e.clone());
        self.widths.push(w);
        self.index.insert((e, w), b);
        b
    }

    /// Adds a node; folds it when every operand is a constant.
    fn mk(&mut self, e: Expr, w: u8) -> Bv {
        let operands: Vec<Bv> = operands(&e);
        if !operands.is_empty() && operands.iter().all(|o| self.as_const(*o).is_some()) {
            let v = self.value_of(&e, w, &|b| self.as_const(b).unwrap_or(0));
            return self.intern(Expr::Const(v), w);
        }
        self.intern(e, w)
    }

    /// A fresh variable of `w` bits; gives it and its index.
    pub fn var(&mut self, w: u8) -> (Bv, u32) {
        let k = self.vars.len() as u32;
        self.vars.push(w);
        (self.intern(Expr::Var(k), w), k)
    }

    pub fn c(&mut self, w: u8, v: u128) -> Bv {
        self.intern(Expr::Const(v & m(w)), w)
    }
    pub fn t(&mut self) -> Bv {
        self.c(1, 1)
    }
    pub fn f(&mut self) -> Bv {
        self.c(1, 0)
    }

    pub fn un(&mut self, op: Op1, a: Bv) -> Bv {
        let w = self.width(a);
        self.mk(Expr::Un(op, a), w)
    }

    /// A two-operand node. Operands of different widths (other than for
    /// `Concat`) are a bug of the caller: a debug assertion fails; release
    /// builds zero-extend the narrower one.
    pub fn bin(&mut self, op: Op2, a: Bv, b: Bv) -> Bv {
        let (wa, wb) = (self.width(a), self.width(b));
        if op == Op2::Concat {
            return self.mk(Expr::Bin(op, a, b), wa + wb);
        }
        debug_assert_eq!(wa, wb, "{op:?} on widths {wa} and {wb}");
        let (a, b) = if wa == wb { (a, b) } else { (self.fit(a, wa.max(wb)), self.fit(b, wa.max(wb))) };
        let w = match op {
            Op2::Eq | Op2::Ult | Op2::Ule | Op2::Slt | Op2::Sle => 1,
            _ => wa.max(wb),
        };
        if a == b {
            match op {
                Op2::Eq | Op2::Ule | Op2::Sle => return self.c(1, 1),
                Op2::Ult | Op2::Slt => return self.c(1, 0),
                Op2::Sub | Op2::Xor => return self.c(w, 0),
                Op2::And | Op2::Or => return a,
                _ => {}
            }
        }
        // Identities with one constant operand (the bits of the result are
        // the other operand's, or the constant's).
        let ones = m(w);
        for (x, y) in [(a, b), (b, a)] {
            let Some(c) = self.as_const(x) else { continue };
            match op {
                Op2::And if c == 0 => return x,
                Op2::And if c == ones => return y,
                Op2::Or if c == ones => return x,
                Op2::Or | Op2::Xor | Op2::Add if c == 0 => return y,
                _ => {}
            }
        }
        self.mk(Expr::Bin(op, a, b), w)
    }

    pub fn ite(&mut self, c: Bv, a: Bv, b: Bv) -> Bv {
        debug_assert_eq!(self.width(c), 1);
        match self.as_const(c) {
            Some(1) => return a,
            Some(_) => return b,
            None => {}
        }
        if a == b {
            return a;
        }
        let w = self.width(a);
        self.mk(Expr::Ite(c, a, b), w)
    }

    /// Bits `hi..=lo` of `a`.
    pub fn extract(&mut self, hi: u8, lo: u8, a: Bv) -> Bv {
        if lo == 0 && hi + 1 == self.width(a) {
            return a;
        }
        self.mk(Expr::Extract(hi, lo, a), hi - lo + 1)
    }

    /// `a` as `n` bits: its low bits, or zero-extended.
    pub fn fit(&mut self, a: Bv, n: u8) -> Bv {
        let w = self.width(a);
        if n == w {
            a
        } else if n < w {
            self.extract(n - 1, 0, a)
        } else {
            self.mk(Expr::Zext(n - w, a), n)
        }
    }

    /// `a` as `n` bits: its low bits, or sign-extended (`signed`) or zero-extended.
    pub fn ext(&mut self, a: Bv, n: u8, signed: bool) -> Bv {
        let w = self.width(a);
        if signed && n > w {
            self.mk(Expr::Sext(n - w, a), n)
        } else {
            self.fit(a, n)
        }
    }

    pub fn bit(&mut self, a: Bv, i: u8) -> Bv {
        self.extract(i, i, a)
    }

    // ----- shorthands -------------------------------------------------------------

    pub fn not(&mut self, a: Bv) -> Bv {
        self.un(Op1::Not, a)
    }
    pub fn neg(&mut self, a: Bv) -> Bv {
        self.un(Op1::Neg, a)
    }
    pub fn and(&mut self, a: Bv, b: Bv) -> Bv {
        self.bin(Op2::And, a, b)
    }
    pub fn or(&mut self, a: Bv, b: Bv) -> Bv {
        self.bin(Op2::Or, a, b)
    }
    pub fn xor(&mut self, a: Bv, b: Bv) -> Bv {
        self.bin(Op2::Xor, a, b)
    }
    pub fn add(&mut self, a: Bv, b: Bv) -> Bv {
        self.bin(Op2::Add, a, b)
    }
    pub fn sub(&mut self, a: Bv, b: Bv) -> Bv {
        self.bin(Op2::Sub, a, b)
    }
    pub fn mul(&mut self, a: Bv, b: Bv) -> Bv {
        self.bin(Op2::Mul, a, b)
    }
    pub fn eq(&mut self, a: Bv, b: Bv) -> Bv {
        self.bin(Op2::Eq, a, b)
    }
    pub fn ne(&mut self, a: Bv, b: Bv) -> Bv {
        let e = self.eq(a, b);
        self.not(e)
    }
    /// `a < b`, signed or unsigned.
    pub fn lt(&mut self, a: Bv, b: Bv, signed: bool) -> Bv {
        self.bin(if signed { Op2::Slt } else { Op2::Ult }, a, b)
    }
    /// `a <= b`, signed or unsigned.
    pub fn le(&mut self, a: Bv, b: Bv, signed: bool) -> Bv {
        self.bin(if signed { Op2::Sle } else { Op2::Ule }, a, b)
    }
    pub fn min(&mut self, a: Bv, b: Bv, signed: bool) -> Bv {
        let c = self.lt(b, a, signed);
        self.ite(c, b, a)
    }
    pub fn max(&mut self, a: Bv, b: Bv, signed: bool) -> Bv {
        let c = self.lt(a, b, signed);
        self.ite(c, b, a)
    }

    // ----- concrete evaluation ----------------------------------------------------

    fn value_of(&self, e: &Expr, w: u8, val: &dyn Fn(Bv) -> u128) -> u128 {
        let v = match e {
            Expr::Var(_) => 0,
            Expr::Const(c) => *c,
            Expr::Un(Op1::Not, a) => !val(*a),
            Expr::Un(Op1::Neg, a) => val(*a).wrapping_neg(),
            Expr::Bin(op, a, b) => apply2(*op, val(*a), val(*b), self.width(*a), self.width(*b)),
            Expr::Ite(c, a, b) => {
                if val(*c) & 1 == 1 {
                    val(*a)
                } else {
                    val(*b)
                }
            }
            Expr::Extract(_, lo, a) => val(*a) >> lo,
            Expr::Zext(_, a) => val(*a),
            Expr::Sext(_, a) => sext(val(*a), self.width(*a) as u32) as u128,
        };
        v & m(w)
    }

    /// The values of every node up to `upto` (inclusive) under `vars`
    /// (indexed by variable; values beyond a variable's width are cut).
    pub fn eval_all(&self, upto: Bv, vars: &[u128]) -> Vec<u128> {
        let n = upto.0 as usize + 1;
        let mut vals: Vec<u128> = Vec::with_capacity(n);
        for k in 0..n {
            let w = self.widths[k];
            let v = match &self.exprs[k] {
                Expr::Var(i) => vars.get(*i as usize).copied().unwrap_or(0) & m(w),
                e => self.value_of(e, w, &|b: Bv| vals[b.0 as usize]),
            };
            vals.push(v);
        }
        vals
    }

    /// The value of one node under `vars`.
    pub fn eval(&self, b: Bv, vars: &[u128]) -> u128 {
        self.eval_all(b, vars)[b.0 as usize]
    }

    // ----- SMT-LIB2 ---------------------------------------------------------------

    /// How a node is referred to in SMT-LIB: a constant inline, a variable
    /// `vK`, any other node by its definition's name `nK`.
    pub fn smt_ref(&self, b: Bv) -> String {
        match self.expr(b) {
            Expr::Const(v) => format!("(_ bv{v} {})", self.width(b)),
            Expr::Var(k) => format!("v{k}"),
            _ => format!("n{}", b.0),
        }
    }

    /// Declarations of every variable and definitions of every node that
    /// `roots` need, in dependency order (once per scope).
    pub fn smt_defs(&self, roots: &[Bv]) -> String {
        let mut need = vec![false; self.exprs.len()];
        let mut stack: Vec<Bv> = roots.to_vec();
        while let Some(b) = stack.pop() {
            if std::mem::replace(&mut need[b.0 as usize], true) {
                continue;
            }
            stack.extend(operands(self.expr(b)));
        }
        let mut out = String::new();
        for (k, w) in self.vars.iter().enumerate() {
            let _ = writeln!(out, "(declare-const v{k} (_ BitVec {w}))");
        }
        for (k, needed) in need.iter().enumerate() {
            let b = Bv(k as u32);
            if !needed || matches!(self.expr(b), Expr::Const(_) | Expr::Var(_)) {
                continue;
            }
            let _ = writeln!(out, "(define-fun n{k} () (_ BitVec {}) {})", self.width(b), self.smt_body(b));
        }
        out
    }

    fn smt_body(&self, b: Bv) -> String {
        let r = |x: &Bv| self.smt_ref(*x);
        match self.expr(b) {
            Expr::Const(_) | Expr::Var(_) => self.smt_ref(b),
            Expr::Un(op, a) => format!("({} {})", if *op == Op1::Not { "bvnot" } else { "bvneg" }, r(a)),
            Expr::Bin(op, a, c) => {
                let name = match op {
                    Op2::Add => "bvadd",
                    Op2::Sub => "bvsub",
                    Op2::Mul => "bvmul",
                    Op2::And => "bvand",
                    Op2::Or => "bvor",
                    Op2::Xor => "bvxor",
                    Op2::Shl => "bvshl",
                    Op2::Lshr => "bvlshr",
                    Op2::Ashr => "bvashr",
                    Op2::Udiv => "bvudiv",
                    Op2::Urem => "bvurem",
                    Op2::Sdiv => "bvsdiv",
                    Op2::Srem => "bvsrem",
                    Op2::Concat => "concat",
                    Op2::Eq => "=",
                    Op2::Ult => "bvult",
                    Op2::Ule => "bvule",
                    Op2::Slt => "bvslt",
                    Op2::Sle => "bvsle",
                };
                match op {
                    Op2::Eq | Op2::Ult | Op2::Ule | Op2::Slt | Op2::Sle => format!("(ite ({name} {} {}) #b1 #b0)", r(a), r(c)),
                    _ => format!("({name} {} {})", r(a), r(c)),
                }
            }
            Expr::Ite(c, a, e) => format!("(ite (= {} #b1) {} {})", r(c), r(a), r(e)),
            Expr::Extract(hi, lo, a) => format!("((_ extract {hi} {lo}) {})", r(a)),
            Expr::Zext(k, a) => format!("((_ zero_extend {k}) {})", r(a)),
            Expr::Sext(k, a) => format!("((_ sign_extend {k}) {})", r(a)),
        }
    }
}

/// The operands of an expression.
fn operands(e: &Expr) -> Vec<Bv> {
    match e {
        Expr::Var(_) | Expr::Const(_) => vec![],
        Expr::Un(_, a) | Expr::Extract(_, _, a) | Expr::Zext(_, a) | Expr::Sext(_, a) => vec![*a],
        Expr::Bin(_, a, b) => vec![*a, *b],
        Expr::Ite(c, a, b) => vec![*c, *a, *b],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smt_lib_division_and_shifts() {
        assert_eq!(apply2(Op2::Udiv, 5, 0, 8, 8), 0xff);
        assert_eq!(apply2(Op2::Urem, 5, 0, 8, 8), 5);
        // -7 / 2 = -3 (toward zero), -7 rem 2 = -1 (sign of the dividend).
        assert_eq!(apply2(Op2::Sdiv, 0xf9, 2, 8, 8), 0xfd);
        assert_eq!(apply2(Op2::Srem, 0xf9, 2, 8, 8), 0xff);
        assert_eq!(apply2(Op2::Sdiv, 0xf9, 0, 8, 8), 1);
        assert_eq!(apply2(Op2::Ashr, 0x80, 200, 8, 8), 0xff);
        assert_eq!(apply2(Op2::Shl, 0x81, 8, 8, 8), 0);
        assert_eq!(apply2(Op2::Concat, 0xa, 0x5, 4, 4), 0xa5);
    }

    #[test]
    fn folds_constants_and_shares_nodes() {
        let mut cx = Ctx::new();
        let (x, _) = cx.var(32);
        let one = cx.c(32, 1);
        let a = cx.add(x, one);
        assert_eq!(cx.add(x, one), a);
        let two = cx.add(one, one);
        assert_eq!(cx.as_const(two), Some(2));
        let h = cx.extract(31, 16, a);
        assert_eq!(cx.eval(h, &[0xffff_ffff]), 0);
        assert_eq!(cx.eval(h, &[0x1_ffff]), 2);
        assert!(cx.smt_defs(&[h]).contains("((_ extract 31 16) n"));
    }
}
