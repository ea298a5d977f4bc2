//! The division lowerings (`ptx_opt::lower`) against the evaluator's `div`
//! and `rem`: wherever the original instruction's result is exact, the
//! program's must be exact and equal (where the original is unspecified —
//! division by zero, `MININT / −1` — the program may give anything).
//!
//! Divisors: 1..=1000, every power of two and 2^k ± 1, the type's extremes,
//! random ones, and their negations for signed types. Dividends: every
//! 16-bit value; for 32 and 64 bits the edge values (0, ±1, MIN, MAX, the
//! divisor ± 1, multiples of the divisor ± 1, the largest multiples) and
//! random values of random widths.

use ptx_ir::eval::{self, bits_mask, sext, Quality, Val};
use ptx_ir::ir::{Instruction, Operand, RegId};
use ptx_ir::isa::{Opcode, ScalarType, TypeClass};
use ptx_opt::lower::builder::type_mod;
use ptx_opt::lower::{div64_bypass, div_by_const, Program};
use std::collections::BTreeSet;

/// splitmix64: deterministic, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A value of `n` bits whose magnitude has a random number of bits
    /// (small values as often as large ones), random sign.
    fn value(&mut self, n: u32) -> u128 {
        let width = 1 + (self.next() % n as u64) as u32;
        let v = (self.next() as u128) & bits_mask(width);
        let v = if self.next() & 1 == 0 { v } else { v.wrapping_neg() };
        v & bits_mask(n)
    }
}

const TYPES: [ScalarType; 6] = [ScalarType::U16, ScalarType::S16, ScalarType::U32, ScalarType::S32, ScalarType::U64, ScalarType::S64];

fn signed(ty: ScalarType) -> bool {
    ty.class() == TypeClass::Signed
}

/// `div.ty`/`rem.ty d, a, b` on placeholder registers.
fn original(ty: ScalarType, rem: bool) -> Instruction {
    let op = if rem { Opcode::REM } else { Opcode::DIV };
    Instruction::new(op, &[type_mod(ty)], [0, 1, 2].map(|r| Operand::reg(RegId(r)))).unwrap()
}

/// Divisors to try at width `n` (bit patterns; negative ones for signed types).
fn divisors(n: u32, signed: bool, random: usize, seed: u64) -> BTreeSet<u128> {
    let mask = bits_mask(n);
    let mut set = BTreeSet::new();
    let mut add = |v: u128| {
        set.insert(v & mask);
        if signed {
            set.insert(v.wrapping_neg() & mask);
        }
    };
    for d in 1..=1000u128 {
        add(d);
    }
    for k in 0..n {
        let p = 1u128 << k;
        add(p);
        add(p + 1);
        add(p - 1);
        add(p.wrapping_add(3));
        add(3u128 << k);
    }
    let (max, min) = if signed { ((1u128 << (n - 1)) - 1, 1u128 << (n - 1)) } else { (mask, 1u128 << (n - 1)) };
    for k in 0..40u128 {
        add(max - k);
        add(min + k);
        add(min - k - 1);
        add(max / 3 + k);
    }
    let mut rng = Rng(seed);
    for _ in 0..random {
        add(rng.value(n));
    }
    set.remove(&0);
    set
}

/// Dividends at width `n` for divisor `d`: edge values and `random` random ones.
fn dividends(n: u32, signed: bool, d: u128, random: usize, rng: &mut Rng) -> Vec<u128> {
    let mask = bits_mask(n);
    let (max, min) = if signed { ((1u128 << (n - 1)) - 1, 1u128 << (n - 1)) } else { (mask, 0) };
    let mut v = vec![0, 1, 2, mask, mask - 1, max, max - 1, min, min + 1, d, d + 1, d.wrapping_sub(1), d.wrapping_neg()];
    let ad = if signed { sext(d, n).unsigned_abs() } else { d };
    // Multiples of the divisor and their neighbours, small and largest.
    let top = max / ad;
    for k in (0..=16u128).chain(top.saturating_sub(16)..=top) {
        let m = k.wrapping_mul(ad);
        for x in [m, m.wrapping_add(1), m.wrapping_sub(1)] {
            v.push(x);
            if signed {
                v.push(x.wrapping_neg());
            }
        }
    }
    for _ in 0..random {
        v.push(rng.value(n));
    }
    let set: BTreeSet<u128> = v.into_iter().map(|x| x & mask).collect();
    set.into_iter().collect()
}

/// Checks `program` against the original on every dividend; gives how many
/// dividends had an exact original result.
fn check_against_original(program: &Program, ty: ScalarType, rem: bool, d: u128, xs: impl IntoIterator<Item = u128>) -> usize {
    let orig = original(ty, rem);
    let mut runner = program.runner(eval::Dialect::MODERN).unwrap();
    let mut exact = 0;
    for x in xs {
        let want = eval::eval(&orig, &[x, d], false).unwrap().dests[0];
        let got = runner.run(&[Val::exact(x)]).unwrap_or_else(|e| panic!("{ty:?} rem={rem} d={d:#x} x={x:#x}: {e}\n{program:#?}"));
        if want.quality == Quality::Exact {
            exact += 1;
            assert_eq!(got, want, "{} {:#x} by {:#x}: program gives {:#x} ({:?}), the instruction {:#x}\n{program:#?}", orig.opcode.name(), x, d, got.bits, got.quality, want.bits);
        }
    }
    exact
}

#[test]
fn division_by_zero_is_never_lowered() {
    for ty in TYPES {
        for rem in [false, true] {
            assert!(div_by_const(ty, rem, 0, 80).is_none());
            // The pattern is read at the type's width: 2^n is zero too.
            assert!(div_by_const(ty, rem, 1 << ty.bits(), 80).is_none());
        }
    }
    for ty in [ScalarType::B32, ScalarType::F32, ScalarType::U8, ScalarType::Pred] {
        assert!(div_by_const(ty, false, 7, 80).is_none());
    }
}

#[test]
fn sixteen_bit_programs_match_on_every_dividend() {
    let mut total = 0;
    for ty in [ScalarType::U16, ScalarType::S16] {
        let s = signed(ty);
        // Small ones, powers of two and their neighbours, the extremes (then random ones).
        let top: u128 = if s { 0x8000 } else { 0xffff };
        let mut ds: BTreeSet<u128> = divisors(16, s, 0, 16)
            .into_iter()
            .filter(|d| {
                let a = if s { sext(*d, 16).unsigned_abs() } else { *d };
                a <= 12 || a.is_power_of_two() || (a + 1).is_power_of_two() || (a - 1).is_power_of_two() || a + 3 >= top
            })
            .collect();
        let mut rng = Rng(7 + s as u64);
        let structured = ds.len();
        while ds.len() < structured + 16 {
            ds.insert(rng.value(16).max(1));
        }
        assert!(ds.len() >= 68, "{ty:?}: {} divisors", ds.len());
        for d in ds {
            for rem in [false, true] {
                let p = div_by_const(ty, rem, d, 80).unwrap_or_else(|| panic!("{ty:?} by {d:#x}: no program"));
                total += check_against_original(&p, ty, rem, d, 0..0x1_0000);
            }
        }
    }
    assert!(total > 18_000_000, "{total} exact comparisons");
}

/// 32- and 64-bit types: every divisor of [`divisors`] on the edge values
/// and 300 random dividends; one divisor in 15 (over 100 of every kind, in
/// sorted order) on 10,000 random dividends.
fn wide_type(ty: ScalarType) {
    let n = ty.bits();
    let s = signed(ty);
    let mut rng = Rng(n as u64 * 2 + s as u64);
    let ds = divisors(n, s, 300, n as u64);
    assert!(ds.len() > 1300, "{} divisors", ds.len());
    let mut thorough = 0;
    for (k, d) in ds.into_iter().enumerate() {
        let random = if k % 15 == 0 { 10_000 } else { 300 };
        thorough += (random == 10_000) as usize;
        let xs = dividends(n, s, d, random, &mut rng);
        for rem in [false, true] {
            let p = div_by_const(ty, rem, d, 80).unwrap_or_else(|| panic!("{ty:?} by {d:#x}: no program"));
            let exact = check_against_original(&p, ty, rem, d, xs.iter().copied());
            // Only MININT / −1 is unspecified.
            let unspecified = xs.len() - exact;
            assert!(unspecified == 0 || (unspecified == 1 && s && !rem && d == bits_mask(n)), "{ty:?} by {d:#x}: {unspecified} unspecified");
        }
    }
    assert!(thorough >= 90, "{thorough} divisors on 10,000 random dividends");
}

#[test]
fn u32_programs_match() {
    wide_type(ScalarType::U32);
}

#[test]
fn s32_programs_match() {
    wide_type(ScalarType::S32);
}

#[test]
fn u64_programs_match() {
    wide_type(ScalarType::U64);
}

#[test]
fn s64_programs_match() {
    wide_type(ScalarType::S64);
}

/// The shapes the module documentation promises, by instruction count.
#[test]
fn program_shapes() {
    let len = |ty, rem, d: i128| div_by_const(ty, rem, d as u128 & bits_mask(ScalarType::bits(ty)), 80).unwrap().body.len();
    use ScalarType as T;
    assert_eq!(len(T::U32, false, 8), 1); // shr
    assert_eq!(len(T::U32, true, 8), 1); // and
    assert_eq!(len(T::U32, false, 10), 2); // mul.hi, shr
    assert_eq!(len(T::U32, false, 7), 5); // the "add" form
    assert_eq!(len(T::U32, false, 14), 3); // pre-shift, mul.hi, shr
    assert_eq!(len(T::U32, false, 0x8000_0001), 2); // setp, selp
    assert_eq!(len(T::S32, false, 3), 3); // mul.hi, shr, add
    assert_eq!(len(T::S32, false, 7), 5); // mul.hi, add, shr, shr, add
    assert_eq!(len(T::S32, false, -8), 5);
    assert_eq!(len(T::S32, false, -1), 1); // neg
    assert_eq!(len(T::S32, true, -1), 1); // 0
    assert_eq!(len(T::U16, false, 5), 3); // cvt, mul.hi.u32, cvt
    assert_eq!(len(T::U64, false, 10), 2);
}

/// The bypass against `div`/`rem` `.u64`/`.s64` by run-time values: pairs of
/// small values (the fast path), large and mixed ones (the slow path), edge
/// values and zero divisors (unspecified on both sides).
#[test]
fn bypass_matches_the_64_bit_instruction() {
    let edges: Vec<u128> = [0u128, 1, 2, 3, 7, 0xffff_ffff, 0xffff_fffe, 0x1_0000_0000, 0x1_0000_0001, 0x7fff_ffff, 0x8000_0000, 1 << 63, (1 << 63) - 1, (1 << 63) + 1, u64::MAX as u128, u64::MAX as u128 - 1, 0xffff_ffff_0000_0000, 0xffff_ffff_8000_0000]
        .to_vec();
    for ty in [ScalarType::U64, ScalarType::S64] {
        for rem in [false, true] {
            let p = div64_bypass(ty, rem).unwrap();
            let orig = original(ty, rem);
            let mut runner = p.runner(eval::Dialect::MODERN).unwrap();
            let mut rng = Rng(99 + rem as u64);
            let mut pairs: Vec<(u128, u128)> = edges.iter().flat_map(|x| edges.iter().map(move |y| (*x, *y))).collect();
            for _ in 0..20_000 {
                let small = |r: &mut Rng| (r.next() as u128) & 0xffff_ffff;
                let pair = match rng.next() % 4 {
                    0 => (small(&mut rng), small(&mut rng)),
                    1 => (rng.value(64), small(&mut rng)),
                    2 => (small(&mut rng), rng.value(64)),
                    _ => (rng.value(64), rng.value(64)),
                };
                pairs.push(pair);
            }
            let (mut fast, mut slow) = (0, 0);
            for (x, y) in pairs {
                let want = eval::eval(&orig, &[x, y], false).unwrap().dests[0];
                let got = runner.run(&[Val::exact(x), Val::exact(y)]).unwrap();
                if y == 0 {
                    assert_eq!(want.quality, Quality::Unspecified);
                    assert_eq!(got.quality, Quality::Unspecified, "{ty:?} {x:#x} by 0");
                } else if want.quality == Quality::Exact {
                    assert_eq!(got, want, "{} {x:#x} by {y:#x}", orig.opcode.name());
                }
                if (x | y) >> 32 == 0 {
                    fast += 1;
                } else {
                    slow += 1;
                }
            }
            assert!(fast > 5_000 && slow > 10_000, "fast {fast}, slow {slow}");
        }
    }
    assert!(div64_bypass(ScalarType::U32, false).is_none());
}
