//! Where the operands of `wgmma.mma_async` live (PTX ISA 8.7 §9.7.15.5.1):
//! the register fragments of D and of A held by the 128 threads of a
//! warpgroup (figures 147-154), and matrices in shared memory reached
//! through a 64-bit matrix descriptor (§9.7.15.5.1.2.2) with their
//! core-matrix layout per major-ness and swizzling mode (table 37, the
//! "canonical layouts" of §9.7.15.5.1.2.1.3, figures 155-169).
//!
//! Register fragments. The figures draw the 64 rows of D (and of A) as four
//! bands of 16 rows, band `w` held by warp `w` of the warpgroup, and inside
//! a band the layout of the corresponding `mma` fragment (figure 148 against
//! figure 82: thread `T0` holds `d0, d1` at row 0, columns 0-1, `d2, d3` at
//! row 8, `d4, d5` at row 0 columns 8-9 ...). As formulas, with `w` the warp
//! of the thread in the warpgroup, `g = lane / 4`, `q = lane % 4`:
//!
//! - D (figures 148, 150, 152, 154; every shape): `d_i` at row
//!   `16w + g + 8 * ((i / 2) % 2)`, column `8 * (i / 4) + 2q + i % 2`;
//!   N/2 elements per thread.
//! - A, `.m64nNk16` (`.f16/.bf16`, figure 147): `a_i` at row
//!   `16w + g + 8 * ((i / 2) % 2)`, column `2q + i % 2 + 8 * (i / 4)`.
//! - A, `.m64nNk8` (`.tf32`, figure 149): row `16w + g + 8 * (i % 2)`,
//!   column `q + 4 * (i / 2)`.
//! - A, `.m64nNk32` (8-bit, figure 151): row `16w + g + 8 * ((i / 4) % 2)`,
//!   column `4q + i % 4 + 16 * (i / 8)`.
//! - A, `.m64nNk256` (`.b1`, figure 153): row `16w + g + 8 * ((i / 32) % 2)`,
//!   column `32q + i % 32 + 128 * (i / 64)`.
//!
//! Shared memory. A matrix is seen as `rows x K` where `rows` is M (for A)
//! or N (for B): "K-major" when K is the contiguous dimension (the default,
//! `imm-trans = 0`), "MN-major" otherwise. Addresses are counted in 16-byte
//! units ("128-bit elements"), `T = 128 / element bits` elements each; the
//! swizzle width `S` is 128, 64 or 32 bytes. From the canonical layouts:
//!
//! - K-major, no swizzle: core matrices of 8 rows x 16 bytes, rows 16
//!   bytes apart; `SBO` from one 8-row group to the next, `LBO` from one
//!   16-byte column of core matrices to the next:
//!   `start + (r / 8) * SBO + (r % 8) * 16 + (k / T) * LBO + (k % T) * size`.
//! - K-major, swizzled: rows `S` bytes apart, `SBO` between 8-row groups,
//!   `LBO` unused: `start + (r / 8) * SBO + (r % 8) * S + (k / T) * 16 + ...`.
//! - MN-major, no swizzle ("interleaved"): `start + (r / T) * SBO +
//!   (r % T) * size + (k % 8) * 16 + (k / 8) * LBO`.
//! - MN-major, swizzled: `start + (r / (T * S/16)) * LBO + ((r / T) %
//!   (S/16)) * 16 + (r % T) * size + (k % 8) * S + (k / 8) * SBO`.
//!
//! then the swizzle `Swizzle<b, 4, 3>` (b = 3, 2, 1 for 128, 64, 32 bytes)
//! on the byte address: bits `4 .. 4+b` XOR bits `7 .. 7+b`. The
//! swizzle is applied to the address itself, so a swizzled matrix's
//! repeating pattern must start on a 1024/512/256-byte boundary, which is
//! what descriptor base offset 0 means; a nonzero base offset (the manual
//! gives only its encoding, not how it shifts the pattern) is not
//! implemented.
//!
//! A manual inconsistency, noted for the record: the example of figure 165
//! (K-major, no swizzle, tf32) lists "LBO = 32*sizeof(tf32), SBO =
//! 64*sizeof(tf32)", but its exact layout `((8,2),(4,4)):((4,32),(1,64))`
//! and its descriptor encodings (LBO field 16, SBO field 8) both say LBO =
//! 256 bytes (between K columns) and SBO = 128 bytes (between 8-row
//! groups), which is also what the definitions of §9.7.15.5.1.2.1.1-2 say.
//! The code follows the definitions.

/// Element `i` of the D fragment of thread `t` (0..128 in its warpgroup):
/// `(row, column)` in the 64 x N accumulator.
pub fn d_coord(t: u32, i: u32) -> (u32, u32) {
    let (w, lane) = (t / 32, t % 32);
    let (g, q) = (lane / 4, lane % 4);
    (16 * w + g + 8 * ((i / 2) % 2), 8 * (i / 4) + 2 * q + i % 2)
}

/// Element `i` of the A fragment of thread `t` for a shape with this K
/// (16: .f16/.bf16, 8: .tf32, 32: 8-bit, 256: .b1): `(row, column)` in the
/// 64 x K matrix A; None for another K or `i` beyond the fragment.
pub fn a_coord(k: u32, t: u32, i: u32) -> Option<(u32, u32)> {
    let (w, lane) = (t / 32, t % 32);
    let (g, q) = (lane / 4, lane % 4);
    let base = 16 * w + g;
    if i >= a_len(k)? {
        return None;
    }
    Some(match k {
        16 => (base + 8 * ((i / 2) % 2), 2 * q + i % 2 + 8 * (i / 4)),
        8 => (base + 8 * (i % 2), q + 4 * (i / 2)),
        32 => (base + 8 * ((i / 4) % 2), 4 * q + i % 4 + 16 * (i / 8)),
        256 => (base + 8 * ((i / 32) % 2), 32 * q + i % 32 + 128 * (i / 64)),
        _ => return None,
    })
}

/// Elements of A per thread: 64 x K over 128 threads.
pub fn a_len(k: u32) -> Option<u32> {
    matches!(k, 8 | 16 | 32 | 256).then_some(k / 2)
}

/// The swizzling mode of a descriptor (bits 62-63).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Swizzle {
    None,
    B128,
    B64,
    B32,
}

impl Swizzle {
    /// Bytes of one swizzled row (the pattern's width); None without swizzle.
    pub fn width(self) -> Option<u64> {
        match self {
            Swizzle::None => None,
            Swizzle::B128 => Some(128),
            Swizzle::B64 => Some(64),
            Swizzle::B32 => Some(32),
        }
    }

    /// The swizzled byte address: bits `4 .. 4+b` XOR bits `7 .. 7+b`.
    pub fn apply(self, a: u64) -> u64 {
        let mask = match self {
            Swizzle::None => return a,
            Swizzle::B128 => 7,
            Swizzle::B64 => 3,
            Swizzle::B32 => 1,
        };
        a ^ (((a >> 7) & mask) << 4)
    }
}

/// A decoded matrix descriptor (§9.7.15.5.1.2.2): byte values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Descriptor {
    /// Start address in the shared state space (bits 0-13, in 16-byte units).
    pub start: u64,
    /// Leading dimension byte offset (bits 16-29, in 16-byte units).
    pub lbo: u64,
    /// Stride dimension byte offset (bits 32-45, in 16-byte units).
    pub sbo: u64,
    /// Matrix base offset (bits 49-51).
    pub base_offset: u32,
    pub swizzle: Swizzle,
}

impl Descriptor {
    pub fn decode(bits: u64) -> Descriptor {
        let field = |at: u32| ((bits >> at) & 0x3fff) << 4;
        let swizzle = match bits >> 62 {
            0 => Swizzle::None,
            1 => Swizzle::B128,
            2 => Swizzle::B64,
            _ => Swizzle::B32,
        };
        Descriptor { start: field(0), lbo: field(16), sbo: field(32), base_offset: ((bits >> 49) & 7) as u32, swizzle }
    }

    /// The byte address in shared memory of element `(r, k)` of a matrix of
    /// `elem_bits`-bit elements (`r` along M or N, `k` along K), and the
    /// bit of that byte where it starts (nonzero only for `.b1`).
    pub fn element_address(&self, elem_bits: u32, mn_major: bool, r: u32, k: u32) -> (u64, u32) {
        let t = 128 / elem_bits; // elements per 16 bytes
        let (r, k) = (r as u64, k as u64);
        let (t64, eb) = (t as u64, elem_bits as u64);
        let (bytes, bit) = match (mn_major, self.swizzle.width()) {
            (false, None) => {
                let within = (k % t64) * eb;
                ((r / 8) * self.sbo + (r % 8) * 16 + (k / t64) * self.lbo + within / 8, within % 8)
            }
            (false, Some(s)) => {
                let within = (k % t64) * eb;
                ((r / 8) * self.sbo + (r % 8) * s + (k / t64) * 16 + within / 8, within % 8)
            }
            (true, None) => {
                let within = (r % t64) * eb;
                ((r / t64) * self.sbo + (k % 8) * 16 + (k / 8) * self.lbo + within / 8, within % 8)
            }
            (true, Some(s)) => {
                let w = s / 16;
                let within = (r % t64) * eb;
                ((r / (t64 * w)) * self.lbo + ((r / t64) % w) * 16 + (k % 8) * s + (k / 8) * self.sbo + within / 8, within % 8)
            }
        };
        (self.swizzle.apply(self.start + bytes), bit as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every (thread, element) of a fragment lands on a distinct element
    /// and together they cover the matrix.
    #[test]
    fn fragments_cover_their_matrices_once() {
        for n in [8u32, 24, 256] {
            let mut seen = vec![false; (64 * n) as usize];
            for t in 0..128 {
                for i in 0..n / 2 {
                    let (r, c) = d_coord(t, i);
                    assert!(r < 64 && c < n);
                    let k = (r * n + c) as usize;
                    assert!(!seen[k], "D n{n} thread {t} element {i} twice");
                    seen[k] = true;
                }
            }
            assert!(seen.iter().all(|x| *x));
        }
        for k in [8u32, 16, 32, 256] {
            let mut seen = vec![false; (64 * k) as usize];
            for t in 0..128 {
                for i in 0..a_len(k).unwrap() {
                    let (r, c) = a_coord(k, t, i).unwrap();
                    assert!(r < 64 && c < k);
                    let x = (r * k + c) as usize;
                    assert!(!seen[x], "A k{k} thread {t} element {i} twice");
                    seen[x] = true;
                }
            }
            assert!(seen.iter().all(|x| *x), "A k{k}");
            assert_eq!(a_coord(k, 0, a_len(k).unwrap()), None);
        }
    }

    /// Entries read off the figures.
    #[test]
    fn entries_from_the_figures() {
        // Figure 148 (D, .m64nNk16): T0 holds d0,d1 at row 0 cols 0,1 and
        // d2,d3 at row 8; T5 (g 1, q 1) d4 at row 1 col 10; T33 (warp 1,
        // lane 1) d0 at row 16 col 2; T127 (warp 3, g 7, q 3) d7 at row
        // 63 col 15.
        assert_eq!([d_coord(0, 0), d_coord(0, 1), d_coord(0, 2), d_coord(0, 3)], [(0, 0), (0, 1), (8, 0), (8, 1)]);
        assert_eq!(d_coord(5, 4), (1, 10));
        assert_eq!(d_coord(33, 0), (16, 2));
        assert_eq!(d_coord(127, 7), (63, 15));
        // Last pair of an N = 256 fragment: d126, d127 of T0 at row 8, cols 248, 249; of T3 at cols 254, 255.
        assert_eq!([d_coord(0, 126), d_coord(0, 127)], [(8, 248), (8, 249)]);
        assert_eq!([d_coord(3, 126), d_coord(3, 127)], [(8, 254), (8, 255)]);
        // Figure 147 (A, .m64nNk16): T0 a0..a7 at (0,0) (0,1) (8,0) (8,1) (0,8) (0,9) (8,8) (8,9); T70 (warp 2, g 1, q 2) a0 at (33, 4).
        let a: Vec<_> = (0..8).map(|i| a_coord(16, 0, i).unwrap()).collect();
        assert_eq!(a, [(0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9), (8, 8), (8, 9)]);
        assert_eq!(a_coord(16, 70, 0), Some((33, 4)));
        // Figure 149 (A, .m64nNk8 tf32): T0 a0 (0,0) a1 (8,0) a2 (0,4) a3 (8,4); T97 (warp 3, g 0, q 1) a3 at (56, 5).
        let a: Vec<_> = (0..4).map(|i| a_coord(8, 0, i).unwrap()).collect();
        assert_eq!(a, [(0, 0), (8, 0), (0, 4), (8, 4)]);
        assert_eq!(a_coord(8, 97, 3), Some((56, 5)));
        // Figure 151 (A, .m64nNk32 8-bit): T1 (q 1) a0..a3 at row 0 cols 4..7, a4 at (8,4), a8 at (0,20), a15 at (8,23).
        assert_eq!([a_coord(32, 1, 0), a_coord(32, 1, 3), a_coord(32, 1, 4), a_coord(32, 1, 8), a_coord(32, 1, 15)], [Some((0, 4)), Some((0, 7)), Some((8, 4)), Some((0, 20)), Some((8, 23))]);
        // Figure 153 (A, .m64nNk256 b1): T2 (q 2) a0 at (0,64), a32 at (8,64), a64 at (0,192), a127 at (8,223).
        assert_eq!([a_coord(256, 2, 0), a_coord(256, 2, 32), a_coord(256, 2, 64), a_coord(256, 2, 127)], [Some((0, 64)), Some((8, 64)), Some((0, 192)), Some((8, 223))]);
    }

    #[test]
    fn descriptor_fields() {
        // §9.7.15.5.1.2.2: start bits 0-13, LBO 16-29, SBO 32-45, base offset 49-51, swizzle 62-63; each >> 4.
        let bits = (0x0040u64) | (16u64 << 16) | (64u64 << 32) | (3u64 << 49) | (2u64 << 62);
        let d = Descriptor::decode(bits);
        assert_eq!(d, Descriptor { start: 0x400, lbo: 256, sbo: 1024, base_offset: 3, swizzle: Swizzle::B64 });
        assert_eq!(Descriptor::decode(1 << 62).swizzle, Swizzle::B128);
        assert_eq!(Descriptor::decode(3 << 62).swizzle, Swizzle::B32);
        assert_eq!(Descriptor::decode(0x3fff).start, 0x3fff0);
    }

    /// A CuTe layout `(shape):(stride)` for rows and for columns, each a
    /// list of modes taken colexicographically: the element offset of (r, c).
    fn cute(rows: &[(u64, u64)], cols: &[(u64, u64)], r: u64, c: u64) -> u64 {
        let walk = |modes: &[(u64, u64)], mut x: u64| {
            let mut off = 0;
            for &(n, s) in modes {
                off += (x % n) * s;
                x /= n;
            }
            off
        };
        walk(rows, r) + walk(cols, c)
    }

    fn desc(lbo_field: u64, sbo_field: u64, swizzle: u64) -> Descriptor {
        Descriptor::decode((lbo_field << 16) | (sbo_field << 32) | (swizzle << 62))
    }

    /// The examples of §9.7.15.5.1.2.1.3 (figures 165-169): the exact
    /// layouts, with the descriptor fields the manual encodes, give the
    /// same element offsets (before swizzling) as `element_address`.
    #[test]
    fn canonical_layout_examples() {
        // Figure 165: K-major, no swizzle, tf32: ((8,2),(4,4)):((4,32),(1,64)); LBO field 16, SBO field 8.
        let d = desc(16, 8, 0);
        for r in 0..16 {
            for k in 0..16 {
                assert_eq!(d.element_address(32, false, r, k), (4 * cute(&[(8, 4), (2, 32)], &[(4, 1), (4, 64)], r as u64, k as u64), 0), "fig 165 ({r},{k})");
            }
        }
        // Figure 166: K-major, 32B swizzle, tf32: ((8,2),(4,4)):((8,64),(1,4)); SBO field 16. One
        // wgmma reads K = 8 tf32 (32 bytes); the layout's further K repeats would overlap rows.
        let d = desc(1, 16, 3);
        for r in 0..16 {
            for k in 0..8 {
                let off = 4 * cute(&[(8, 8), (2, 64)], &[(4, 1), (4, 4)], r as u64, k as u64);
                assert_eq!(d.element_address(32, false, r, k), (Swizzle::B32.apply(off), 0), "fig 166 ({r},{k})");
            }
        }
        // Figure 167: MN-major, no swizzle, bf16: ((8,1,2),(8,2)):((1,8,64),(8,128)); LBO 16, SBO 8.
        let d = desc(16, 8, 0);
        // Figure 168: MN-major, 32B swizzle, bf16: ((8,2,2),(8,2)):((1,8,128),(16,256)); LBO 16, SBO 32.
        let d32 = desc(16, 32, 3);
        // Figure 169: MN-major, 64B swizzle, bf16: ((8,4,2),(8,2)):((1,8,256),(32,512)); LBO 32, SBO 64.
        let d64 = desc(32, 64, 2);
        for k in 0..16u64 {
            for r in 0..16u64 {
                assert_eq!(d.element_address(16, true, r as u32, k as u32), (2 * cute(&[(8, 1), (1, 8), (2, 64)], &[(8, 8), (2, 128)], r, k), 0), "fig 167");
                let off = 2 * cute(&[(8, 1), (2, 8), (2, 128)], &[(8, 16), (2, 256)], r, k);
                assert_eq!(d32.element_address(16, true, r as u32, k as u32), (Swizzle::B32.apply(off), 0), "fig 168");
            }
            for r in 0..64u64 {
                let off = 2 * cute(&[(8, 1), (4, 8), (2, 256)], &[(8, 32), (2, 512)], r, k);
                assert_eq!(d64.element_address(16, true, r as u32, k as u32), (Swizzle::B64.apply(off), 0), "fig 169");
            }
        }
    }

    /// Table 37 and the swizzle functions: a 128B-swizzled K-major atom is
    /// 8 rows x 128 bytes; row `r` has its 16-byte chunks permuted by XOR
    /// with `r`, so chunk 0 of row 3 sits at chunk 3 (figure 156).
    #[test]
    fn swizzle_modes() {
        let d = Descriptor::decode((64u64 << 32) | (1 << 62)); // SBO 1024, 128B
        // f16: 8 per chunk. (row 3, k 0) -> byte 3*128 + (0 ^ 3)*16.
        assert_eq!(d.element_address(16, false, 3, 0), (3 * 128 + 3 * 16, 0));
        assert_eq!(d.element_address(16, false, 3, 9), (3 * 128 + (1 ^ 3) * 16 + 2, 0));
        assert_eq!(d.element_address(16, false, 9, 0), (1024 + 128 + 16, 0));
        // Advancing the start by 32 bytes (the next K step in the atom) XORs in chunk 2.
        let d2 = Descriptor::decode(2 | (64u64 << 32) | (1 << 62));
        assert_eq!(d2.element_address(16, false, 3, 0), (3 * 128 + (2 ^ 3) * 16, 0));
        // 64B: rows of 64 bytes, chunk ^= row % 4 ... of the 128-byte line: bits 7-8.
        assert_eq!(Swizzle::B64.apply(3 * 128 + 16), 3 * 128 + (1 ^ 3) * 16);
        assert_eq!(Swizzle::B64.apply(4 * 128), 4 * 128);
        assert_eq!(Swizzle::B32.apply(128 + 16), 128);
        // .b1: 128 elements per chunk, element 9 is bit 1 of byte 1.
        let d = desc(8, 16, 0);
        assert_eq!(d.element_address(1, false, 0, 9), (1, 1));
        assert_eq!(d.element_address(1, false, 1, 128), (16 + 128, 0));
    }
}
