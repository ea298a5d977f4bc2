//! Magic numbers for division by a constant (Granlund–Montgomery, "Division
//! by invariant integers using multiplication", 1994; Hacker's Delight §10).
//!
//! For a divisor `d >= 3` that is no power of two and a shift `p`, let
//! `m = ceil(2^p / d)` and `e = m·d − 2^p` (`0 < e < d`). Writing
//! `y = q·d + r`, `y·m / 2^p = q + (r + y·e/2^p) / d`, so
//!
//! - `floor(y·m / 2^p) = floor(y / d)` exactly when `r·2^p + y·e < d·2^p`
//!   (what a non-negative dividend needs), and
//! - `ceil(y·m / 2^p) = floor(y / d) + 1` exactly when `r·2^p + y·e <= d·2^p`
//!   (what a negative dividend `−y` needs: `floor(−y·m / 2^p) + 1` is then
//!   `−floor(y / d)`, the quotient rounded toward zero).
//!
//! Over `0 <= y <= Y` the left side `r·2^p + y·e` grows with `y` inside each
//! block of `d` consecutive values, so its maximum is at `y = Y` or at the
//! largest `y <= Y` with `r = d − 1`: two candidates make the check exact.
//! [`magic`] gives the smallest `p` (the smallest shift, hence the smallest
//! multiplier) that passes it. All arithmetic is on `u128`, enough for
//! 64-bit division (`p <= 128`).

/// A multiplier and the total shift `p`: the quotient is `floor(y·m / 2^p)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Magic {
    pub m: u128,
    pub p: u32,
}

/// The smallest `p >= min_p` whose `m = ceil(2^p / d)` divides every `y` in
/// `0..=pos` exactly (`floor(y·m / 2^p) = floor(y / d)`) and gives
/// `ceil(y·m / 2^p) = floor(y / d) + 1` for every `y` in `1..=neg` (the
/// magnitudes of negative dividends; `neg = 0` for unsigned division).
/// `None` when `d` is below 3 or a power of two (no such `m`: shifts do it),
/// or when `p` would pass 128.
pub fn magic(d: u128, pos: u128, neg: u128, min_p: u32) -> Option<Magic> {
    if d < 3 || d.is_power_of_two() {
        return None;
    }
    for p in min_p..=128 {
        // 2^p − 1 fits in u128 up to p = 128; d does not divide 2^p.
        let below = if p == 128 { u128::MAX } else { (1u128 << p) - 1 };
        let m = below / d + 1;
        let e = d - (below % d + 1) % d;
        if fits(d, e, p, pos, false) && fits(d, e, p, neg, true) {
            return Some(Magic { m, p });
        }
    }
    None
}

/// Does `r(y)·2^p + y·e` stay below `d·2^p` (or at most equal, `or_equal`)
/// for every `y` in `0..=top`? Checked at the two candidates of the module
/// documentation, as `y·e < (d − r)·2^p`.
fn fits(d: u128, e: u128, p: u32, top: u128, or_equal: bool) -> bool {
    let ok = |y: u128| {
        if p >= 128 {
            // (d − r)·2^p is at least 2^128, above any y·e (both below 2^64).
            return true;
        }
        let lhs = y * e;
        match (d - y % d).checked_mul(1u128 << p) {
            None => true,
            Some(rhs) => lhs < rhs || (or_equal && lhs == rhs),
        }
    };
    let last_full = if top % d == d - 1 { top } else { (top + 1).checked_sub(top % d + 2).unwrap_or(top) };
    ok(top) && ok(last_full)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every y of a small range against the definition, for the magic found
    /// and for the shift just below it (which must fail: the smallest).
    #[test]
    fn magic_is_exact_and_smallest_on_small_widths() {
        for w in [4u32, 6, 8] {
            let pos_u = (1u128 << w) - 1;
            let (pos_s, neg_s) = ((1u128 << (w - 1)) - 1, 1u128 << (w - 1));
            for d in 3..(1u128 << w) {
                for (pos, neg) in [(pos_u, 0), (pos_s, neg_s), (neg_s, pos_s)] {
                    let Some(mg) = magic(d, pos, neg, w) else {
                        assert!(d.is_power_of_two(), "no magic for {d}");
                        continue;
                    };
                    let works = |m: u128, p: u32| {
                        (0..=pos).all(|y| (y * m) >> p == y / d) && (1..=neg).all(|y| (y * m).div_ceil(1 << p) == y / d + 1)
                    };
                    assert!(works(mg.m, mg.p), "w={w} d={d} {mg:?}");
                    if mg.p > w {
                        let p = mg.p - 1;
                        assert!(!works(((1 << p) - 1) / d + 1, p), "w={w} d={d}: p={p} works too");
                    }
                }
            }
        }
    }

    #[test]
    fn known_magics() {
        // Hacker's Delight, table 10-1 / 10-2 (32 bits).
        let u32max = u32::MAX as u128;
        assert_eq!(magic(7, u32max, 0, 32), Some(Magic { m: 0x1_2492_4925, p: 35 }));
        assert_eq!(magic(10, u32max, 0, 32), Some(Magic { m: 0xCCCC_CCCD, p: 35 }));
        assert_eq!(magic(3, u32max, 0, 32), Some(Magic { m: 0xAAAA_AAAB, p: 33 }));
        assert_eq!(magic(7, (1 << 31) - 1, 1 << 31, 32), Some(Magic { m: 0x9249_2493, p: 34 }));
        assert_eq!(magic(3, (1 << 31) - 1, 1 << 31, 32), Some(Magic { m: 0x5555_5556, p: 32 }));
        // 64 bits: the largest divisors need shifts near 128 and 65-bit multipliers.
        let u64max = u64::MAX as u128;
        for d in [u64max, (1 << 63) + 1, (1 << 63) + 3, (1 << 64) / 3] {
            let mg = magic(d, u64max, 0, 64).unwrap();
            assert!(mg.p > 120 && mg.p <= 128 && mg.m >> 65 == 0, "{d:#x}: {mg:?}");
        }
        assert!(magic(1 << 20, u64max, 0, 64).is_none());
        assert!(magic(2, u64max, 0, 64).is_none());
    }
}
