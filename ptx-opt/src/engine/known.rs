//! Known bits and unsigned ranges of e-class values: what the e-graph can
//! prove about a value without knowing it, as LLVM's `KnownBits` and
//! constant ranges do.
//!
//! A [`Known`] describes the full content of a register of `width` bits:
//! bits known to be 0, bits known to be 1, and an inclusive unsigned range
//! `lo..=hi`. Every node of a class computes the same value, so the facts
//! of its nodes all hold at once: merging classes (and adding a node to a
//! class) *intersects* them ([`Known::meet`]). Facts come from constants,
//! from the special registers' documented bounds (`%tid.x < 1024`, see
//! [`ptx_ir::ir::SpecialReg::max_value`]), and from the transfer functions
//! below, one per plain integer instruction; any other form (`.sat`, packed
//! types, floats, prefixes, selectors) proves nothing (the full range).
//!
//! The claims are checked against the evaluator on random programs
//! (`known/tests.rs` and `tests/tests/known_bits.rs`): a claimed bit or
//! bound is never wrong.

use super::lang::Shape;
use ptx_ir::eval::bits_mask;
use ptx_ir::ir::Prefix;
use ptx_ir::isa::{Mod, Opcode, ScalarType, SlotRole, TypeClass};

/// What is known about a value of `width` bits (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Known {
    pub width: u8,
    /// Bits known to be 0.
    pub zero: u128,
    /// Bits known to be 1.
    pub one: u128,
    /// The smallest value it can be, unsigned.
    pub lo: u128,
    /// The largest value it can be, unsigned.
    pub hi: u128,
}

fn mask(w: u32) -> u128 {
    bits_mask(w)
}

impl Known {
    /// Nothing known.
    pub fn top(width: u8) -> Known {
        Known { width, zero: 0, one: 0, lo: 0, hi: mask(width as u32) }
    }

    /// Exactly `c`.
    pub fn exact(width: u8, c: u128) -> Known {
        let c = c & mask(width as u32);
        Known { width, zero: !c & mask(width as u32), one: c, lo: c, hi: c }
    }

    /// At most `max`.
    pub fn at_most(width: u8, max: u128) -> Known {
        Known { hi: max.min(mask(width as u32)), ..Known::top(width) }.normalized().unwrap_or(Known::top(width))
    }

    /// The single value, when every bit is known.
    pub fn value(&self) -> Option<u128> {
        (self.lo == self.hi).then_some(self.lo)
    }

    /// Whether the value is below `2^(bits-1)`: as a signed number of
    /// `bits` bits (≤ width), non-negative.
    pub fn non_negative(&self, bits: u32) -> bool {
        bits >= 1 && bits <= self.width as u32 && self.hi >> (bits - 1) == 0
    }

    /// Bits and range made consistent with each other; `None` if they
    /// contradict (no value satisfies them).
    pub fn normalized(mut self) -> Option<Known> {
        let m = mask(self.width as u32);
        self.zero &= m;
        self.one &= m;
        if self.zero & self.one != 0 {
            return None;
        }
        // The range from the bits, and the bits from the range.
        self.lo = self.lo.max(self.one);
        self.hi = self.hi.min(!self.zero & m);
        if self.lo > self.hi {
            return None;
        }
        // Bits above the highest bit `hi` can have are 0; bits on which
        // `lo` and `hi` agree above their first difference are fixed.
        let diff = self.lo ^ self.hi;
        let fixed = if diff == 0 { m } else { !mask(128 - diff.leading_zeros()) & m };
        self.zero |= !self.hi & fixed;
        self.one |= self.hi & fixed;
        if self.zero & self.one != 0 {
            return None;
        }
        Some(self)
    }

    /// Both `self` and `other` hold of one value; `None` if they contradict.
    pub fn meet(&self, other: &Known) -> Option<Known> {
        if self.width != other.width {
            return None;
        }
        Known { width: self.width, zero: self.zero | other.zero, one: self.one | other.one, lo: self.lo.max(other.lo), hi: self.hi.min(other.hi) }.normalized()
    }

    /// Either `self` or `other` (a selection between them).
    pub fn join(&self, other: &Known) -> Known {
        Known { width: self.width, zero: self.zero & other.zero, one: self.one & other.one, lo: self.lo.min(other.lo), hi: self.hi.max(other.hi) }
    }

    /// Whether `v` satisfies every claim.
    pub fn admits(&self, v: u128) -> bool {
        v & self.zero == 0 && v & self.one == self.one && self.lo <= v && v <= self.hi && v <= mask(self.width as u32)
    }

    /// The low `w` bits (`w ≤ width`).
    fn truncate(&self, w: u32) -> Known {
        let m = mask(w);
        let (lo, hi) = if self.hi <= m { (self.lo, self.hi) } else { (0, m) };
        Known { width: w as u8, zero: self.zero & m, one: self.one & m, lo, hi }.normalized().unwrap_or(Known::top(w as u8))
    }

    /// Zero-extended to `w ≥ width` bits.
    fn zext(&self, w: u32) -> Known {
        // Most sources and results are read at their register's width.
        if w == self.width as u32 {
            return *self;
        }
        Known { width: w as u8, zero: self.zero | (mask(w) & !mask(self.width as u32)), ..*self }
    }

    /// Sign-extended from `width` to `w ≥ width` bits.
    fn sext(&self, w: u32) -> Known {
        let from = self.width as u32;
        if w == from {
            return *self;
        }
        let high = mask(w) & !mask(from);
        let sign = 1u128 << (from - 1);
        if self.zero & sign != 0 {
            self.zext(w)
        } else if self.one & sign != 0 {
            Known { width: w as u8, zero: self.zero, one: self.one | high, lo: self.lo | high, hi: self.hi | high }
        } else {
            Known { width: w as u8, zero: self.zero & (sign - 1), one: self.one & (sign - 1), lo: 0, hi: mask(w) }.normalized().unwrap_or(Known::top(w as u8))
        }
    }
}

/// The facts of a node's result from its children's, for a node of
/// `shape` (a register of `shape.width` bits); the full range where the
/// instruction is not one this analysis models.
pub fn of_op(shape: &Shape, kids: &[Known]) -> Known {
    let top = Known::top(shape.width);
    if !shape.known_plain() || kids.len() != shape.sources.len() {
        return top;
    }
    // Each source as the instruction reads it, at its operand type's width.
    let mut srcs: smallvec::SmallVec<[Known; 3]> = smallvec::SmallVec::new();
    for (s, k) in shape.sources.iter().zip(kids) {
        let w = match s.ty {
            Some(t) if t != ScalarType::Pred => t.bits(),
            _ => k.width as u32,
        };
        let mut v = if w < k.width as u32 { k.truncate(w) } else { k.zext(w) };
        if s.prefix == Prefix::Not {
            if v.width != 1 {
                return top;
            }
            v = Known { width: 1, zero: v.one, one: v.zero, lo: 1 - v.hi, hi: 1 - v.lo };
        }
        srcs.push(v);
    }
    let Some((ty, rt)) = result_type(shape) else { return top };
    let Some(r) = transfer(shape, ty, rt, &srcs).and_then(|r| r.normalized()) else { return top };
    // Written to a register of `shape.width` bits as `lang::extend` does.
    let r = if ty.class() == TypeClass::Signed { r.sext(shape.width as u32) } else { r.zext(shape.width as u32) };
    r.normalized().unwrap_or(top)
}

/// Instructions whose modifiers this analysis understands: the type(s),
/// `mul`/`mad`'s `.lo/.hi/.wide`; no operand selectors or vectors, no
/// negation prefix; and whose result type [`transfer`] can take (see
/// [`result_type`]), so that the nodes of other shapes (floats, predicates)
/// cost neither their children's facts nor a look at them. Computed once
/// per shape ([`Shape::known_plain`]).
pub(crate) fn plain(s: &Shape) -> bool {
    let ok_mod = |(role, m): (SlotRole, Mod)| role == SlotRole::Type || m == Mod::LO || m == Mod::HI || m == Mod::WIDE;
    let ok_result = result_type(s).is_some_and(|(ty, _)| int_type(ty) || matches!(s.opcode(), Opcode::SETP | Opcode::CVT));
    ok_result && s.ins.modifiers().all(ok_mod) && s.sources.iter().all(|x| x.sel.is_none() && !x.in_vector && x.prefix != Prefix::Neg)
}

/// The destination type of a shape and its width in bits, when the result
/// is one the transfer functions compute: not a predicate, at most 64 bits
/// and no wider than the register.
fn result_type(s: &Shape) -> Option<(ScalarType, u32)> {
    let ty = s.dest_ty.filter(|t| *t != ScalarType::Pred)?;
    let rt = ty.bits();
    (rt <= 64 && rt <= s.width as u32).then_some((ty, rt))
}

/// A scalar integer or bit type of 8 to 64 bits (not a packed one).
fn int_type(t: ScalarType) -> bool {
    use ScalarType::*;
    matches!(t, B8 | B16 | B32 | B64 | U8 | U16 | U32 | U64 | S8 | S16 | S32 | S64)
}

/// The result at `rt` bits (the destination type's width), for a shape
/// [`plain`] admits (an integer result, or `setp`/`cvt`).
fn transfer(shape: &Shape, ty: ScalarType, rt: u32, s: &[Known]) -> Option<Known> {
    let ins = &shape.ins;
    let signed = ty.class() == TypeClass::Signed;
    let same_width = |k: usize| s.get(k).is_some_and(|x| x.width as u32 == rt);
    let op = ins.opcode;
    let types = shape.types();
    match op {
        Opcode::MOV if s.len() == 1 && types.len() == 1 && same_width(0) => Some(s[0]),
        Opcode::AND | Opcode::OR | Opcode::XOR if s.len() == 2 && same_width(0) && same_width(1) => {
            let (a, b) = (&s[0], &s[1]);
            let (zero, one, lo, hi) = match op {
                Opcode::AND => (a.zero | b.zero, a.one & b.one, 0, a.hi.min(b.hi)),
                Opcode::OR => (a.zero & b.zero, a.one | b.one, a.lo.max(b.lo), mask(rt)),
                _ => ((a.zero & b.zero) | (a.one & b.one), (a.zero & b.one) | (a.one & b.zero), 0, mask(rt)),
            };
            Some(Known { width: rt as u8, zero, one, lo, hi })
        }
        Opcode::NOT if s.len() == 1 && same_width(0) => {
            let a = &s[0];
            let m = mask(rt);
            Some(Known { width: rt as u8, zero: a.one, one: a.zero, lo: m - a.hi, hi: m - a.lo })
        }
        Opcode::ADD if s.len() == 2 && same_width(0) && same_width(1) && types.len() == 1 => Some(add(&s[0], &s[1], false)),
        Opcode::SUB if s.len() == 2 && same_width(0) && same_width(1) && types.len() == 1 => {
            let b = &s[1];
            let m = mask(rt);
            let not_b = Known { width: b.width, zero: b.one, one: b.zero, lo: m - b.hi, hi: m - b.lo };
            let mut r = add(&s[0], &not_b, true);
            // No borrow: the difference of the ranges.
            if s[0].lo >= b.hi {
                r.lo = s[0].lo - b.hi;
                r.hi = s[0].hi - b.lo;
            }
            Some(r)
        }
        Opcode::MUL if s.len() == 2 && types.len() == 1 => mul(ins, signed, rt, s),
        Opcode::SHL if s.len() == 2 && same_width(0) => {
            let a = &s[0];
            let c = s[1].value()?;
            if c >= rt as u128 {
                return Some(Known::exact(rt as u8, 0));
            }
            let c = c as u32;
            let m = mask(rt);
            let (lo, hi) = if a.hi.leading_zeros() >= 128 - rt + c { (a.lo << c, a.hi << c) } else { (0, m) };
            Some(Known { width: rt as u8, zero: ((a.zero << c) | mask(c)) & m, one: (a.one << c) & m, lo, hi })
        }
        Opcode::SHR if s.len() == 2 && same_width(0) => {
            let a = &s[0];
            let arithmetic = signed && !a.non_negative(rt);
            let Some(c) = s[1].value() else {
                // An amount not known: a logical shift only makes it smaller.
                return (!signed || a.non_negative(rt)).then(|| Known { width: rt as u8, zero: !mask(128 - a.hi.leading_zeros()) & mask(rt), one: 0, lo: 0, hi: a.hi });
            };
            let c = c.min(rt as u128 - 1 + (!arithmetic) as u128) as u32;
            if c >= rt {
                return Some(Known::exact(rt as u8, 0));
            }
            if !arithmetic {
                return Some(Known { width: rt as u8, zero: (a.zero >> c) | (mask(rt) & !mask(rt - c)), one: a.one >> c, lo: a.lo >> c, hi: a.hi >> c });
            }
            let sign = 1u128 << (rt - 1);
            let fill = mask(rt) & !mask(rt - c);
            let (zero, one) = if a.one & sign != 0 { (a.zero >> c, (a.one >> c) | fill) } else { ((a.zero >> c) & mask(rt - c), (a.one >> c) & mask(rt - c)) };
            Some(Known { width: rt as u8, zero, one, lo: 0, hi: mask(rt) })
        }
        Opcode::DIV | Opcode::REM if s.len() == 2 && same_width(0) && same_width(1) => {
            let (a, d) = (&s[0], &s[1]);
            // Signed forms: only where both are non-negative (then they are the unsigned ones).
            if d.lo == 0 || (signed && !(a.non_negative(rt) && d.non_negative(rt))) {
                return None;
            }
            Some(if op == Opcode::DIV { Known { lo: a.lo / d.hi, hi: a.hi / d.lo, ..Known::top(rt as u8) } } else { Known { hi: a.hi.min(d.hi - 1), ..Known::top(rt as u8) } })
        }
        Opcode::MIN | Opcode::MAX if s.len() == 2 && same_width(0) && same_width(1) => {
            let (a, b) = (&s[0], &s[1]);
            if signed && !(a.non_negative(rt) && b.non_negative(rt)) {
                return None;
            }
            Some(if op == Opcode::MIN { Known { lo: a.lo.min(b.lo), hi: a.hi.min(b.hi), ..Known::top(rt as u8) } } else { Known { lo: a.lo.max(b.lo), hi: a.hi.max(b.hi), ..Known::top(rt as u8) } })
        }
        Opcode::SELP if s.len() == 3 && same_width(0) && same_width(1) => Some(match s[2].value() {
            Some(1) => s[0],
            Some(0) => s[1],
            _ => s[0].join(&s[1]),
        }),
        Opcode::POPC | Opcode::CLZ if s.len() == 1 => Some(Known::at_most(rt as u8, s[0].width as u128)),
        Opcode::CVT if types.len() == 2 && s.len() == 1 && int_type(types[0]) && int_type(types[1]) => {
            // `cvt.D.S`: the source at S bits, truncated or extended (by S's signedness) to D.
            let (d, src) = (types[0], types[1]);
            let a = &s[0];
            if a.width as u32 != src.bits() || d.bits() != rt {
                return None;
            }
            Some(if rt <= src.bits() {
                a.truncate(rt)
            } else if src.class() == TypeClass::Signed {
                a.sext(rt)
            } else {
                a.zext(rt)
            })
        }
        _ => None,
    }
}

/// `a + b (+ 1 if carry)` at their width: LLVM's carry-propagating known
/// bits, and the sum of the ranges when it cannot wrap.
fn add(a: &Known, b: &Known, carry: bool) -> Known {
    let w = a.width as u32;
    let m = mask(w);
    let c = carry as u128;
    // The sums with every unknown bit 1 and every unknown bit 0.
    let max_sum = ((!a.zero & m) + (!b.zero & m) + c) & m;
    let min_sum = (a.one + b.one + c) & m;
    // Where the carry into a bit is the same in both sums, it is known.
    let carry_zero = !(max_sum ^ a.zero ^ b.zero) & m;
    let carry_one = (min_sum ^ a.one ^ b.one) & m;
    let known = (a.zero | a.one) & (b.zero | b.one) & (carry_zero | carry_one);
    let (lo, hi) = match a.hi.checked_add(b.hi).and_then(|x| x.checked_add(c)) {
        Some(h) if h <= m => (a.lo + b.lo + c, h),
        _ => (0, m),
    };
    Known { width: w as u8, zero: !max_sum & known & m, one: min_sum & known, lo, hi }
}

fn mul(ins: &ptx_ir::ir::Instruction, signed: bool, rt: u32, s: &[Known]) -> Option<Known> {
    let (a, b) = (&s[0], &s[1]);
    if a.width != b.width {
        return None;
    }
    let w = a.width as u32;
    let nonneg = !signed || (a.non_negative(w) && b.non_negative(w));
    if ins.has(Mod::WIDE) {
        if rt != 2 * w || !nonneg {
            return None;
        }
        let tz = (a.zero.trailing_ones() + b.zero.trailing_ones()).min(rt);
        return Some(Known { width: rt as u8, zero: mask(tz), one: 0, lo: a.lo * b.lo, hi: a.hi * b.hi });
    }
    if ins.has(Mod::HI) || rt != w {
        return None;
    }
    // `.lo` (or no modifier): trailing zeros add up; the product's range if it cannot wrap.
    let tz = (a.zero.trailing_ones().min(w) + b.zero.trailing_ones().min(w)).min(w);
    let (lo, hi) = match a.hi.checked_mul(b.hi) {
        Some(h) if h <= mask(w) && nonneg => (a.lo * b.lo, h),
        _ => (0, mask(w)),
    };
    Some(Known { width: w as u8, zero: mask(tz), one: 0, lo, hi })
}

#[cfg(test)]
mod tests;
