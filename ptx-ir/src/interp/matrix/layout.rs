//! Which lane holds which matrix element: the fragment layouts of `mma`
//! (PTX ISA 8.7 §9.7.14.5.1-13, transcribed from the "row = ..., col = ..."
//! formulas under each figure), of `ldmatrix`/`stmatrix`/`movmatrix`
//! (§9.7.14.5.15-17, figures 103, 106, 108, 109), and how elements pack
//! into 32-bit registers ("elements, from low to high").

/// The element type of a matrix operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    F16,
    Bf16,
    Tf32,
    F32,
    F64,
    E4m3,
    E5m2,
    S8,
    U8,
    S4,
    U4,
    B1,
    S32,
}

impl Elem {
    pub fn from_text(t: &str) -> Option<Elem> {
        Some(match t {
            ".f16" => Elem::F16,
            ".bf16" => Elem::Bf16,
            ".tf32" => Elem::Tf32,
            ".f32" => Elem::F32,
            ".f64" => Elem::F64,
            ".e4m3" => Elem::E4m3,
            ".e5m2" => Elem::E5m2,
            ".s8" => Elem::S8,
            ".u8" => Elem::U8,
            ".s4" => Elem::S4,
            ".u4" => Elem::U4,
            ".b1" => Elem::B1,
            ".s32" => Elem::S32,
            _ => return None,
        })
    }

    /// Bits of one element in a register (and in memory).
    pub fn bits(self) -> u32 {
        match self {
            Elem::F16 | Elem::Bf16 => 16,
            Elem::Tf32 | Elem::F32 | Elem::S32 => 32,
            Elem::F64 => 64,
            Elem::E4m3 | Elem::E5m2 | Elem::S8 | Elem::U8 => 8,
            Elem::S4 | Elem::U4 => 4,
            Elem::B1 => 1,
        }
    }

    /// Elements per register (`.f64` fragments are 64-bit registers).
    pub fn per_register(self) -> u32 {
        if self == Elem::F64 {
            1
        } else {
            32 / self.bits()
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Elem::F16 | Elem::Bf16 | Elem::Tf32 | Elem::F32 | Elem::F64 | Elem::E4m3 | Elem::E5m2)
    }

    /// The value of an integer element's bits.
    pub fn int_value(self, bits: u64) -> i64 {
        match self {
            Elem::S8 => bits as u8 as i8 as i64,
            Elem::U8 => bits as u8 as i64,
            Elem::S4 => ((bits as u8 & 15) << 4) as i8 as i64 >> 4,
            Elem::U4 => (bits & 15) as i64,
            Elem::B1 => (bits & 1) as i64,
            Elem::S32 => bits as u32 as i32 as i64,
            _ => 0,
        }
    }
}

/// Which matrix of `D = A * B + C` (C and D share their layout).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    A,
    B,
    C,
}

/// An `.mMnNkK` shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub m: u32,
    pub n: u32,
    pub k: u32,
}

impl Shape {
    /// Parses `.m16n8k16`.
    pub fn from_text(t: &str) -> Option<Shape> {
        let t = t.strip_prefix(".m")?;
        let (m, rest) = t.split_once('n')?;
        let (n, k) = rest.split_once('k')?;
        Some(Shape { m: m.parse().ok()?, n: n.parse().ok()?, k: k.parse().ok()? })
    }

    /// Rows and columns of a matrix of this shape.
    pub fn dims(self, w: Which) -> (u32, u32) {
        match w {
            Which::A => (self.m, self.k),
            Which::B => (self.k, self.n),
            Which::C => (self.m, self.n),
        }
    }
}

/// Where element `i` of `lane`'s fragment of matrix `w` of an `mma` sits:
/// `(row, col)`, or None for a shape/type the manual does not define.
/// `ty` is the element type of that matrix; `row_major` the layout of A
/// (for `w == A`) or of B (for `w == B`) — only `.m8n8k4` with `.f16`
/// has column-major forms. For `.m8n8k4.f16` the row and column are within
/// the 8x8x4 product of the lane's quad-pair (see [`quad_pair`]).
pub fn mma_coord(s: Shape, w: Which, ty: Elem, row_major: bool, lane: u32, i: u32) -> Option<(u32, u32)> {
    let g = lane >> 2; // groupID
    let t = lane % 4; // threadID_in_group
    let hi = (lane >= 16) as u32 * 4;
    // The accumulator layouts shared by most shapes.
    let c_m16 = (g + 8 * (i >= 2) as u32, 2 * t + (i & 1));
    let c_m8 = (g, 2 * t + i);
    let r = match (s.m, s.n, s.k, w) {
        // §9.7.14.5.1, figures 45-51: .m8n8k4 .f16 (four 8x8x4 products).
        (8, 8, 4, Which::A) if ty == Elem::F16 => {
            if row_major {
                (lane % 4 + hi, i)
            } else {
                (i % 4 + hi, lane % 4)
            }
        }
        (8, 8, 4, Which::B) if ty == Elem::F16 => {
            if row_major {
                (lane % 4, i + hi)
            } else {
                (i, lane % 4 + hi)
            }
        }
        (8, 8, 4, Which::C) if ty == Elem::F16 => (lane % 4 + hi, i),
        (8, 8, 4, Which::C) if ty == Elem::F32 => ((lane & 1) + (i & 2) + hi, (i & 4) + (lane & 2) + (i & 1)),
        // §9.7.14.5.2, figures 52-54: .m8n8k4 .f64.
        (8, 8, 4, Which::A) if ty == Elem::F64 => (g, t),
        (8, 8, 4, Which::B) if ty == Elem::F64 => (t, g),
        (8, 8, 4, Which::C) if ty == Elem::F64 => c_m8,
        // §9.7.14.5.3-5, figures 55-63: .m8n8k16 (8-bit), .m8n8k32 (4-bit), .m8n8k128 (1-bit).
        (8, 8, 16 | 32 | 128, Which::A) => (g, t * (s.k / 4) + i),
        (8, 8, 16 | 32 | 128, Which::B) => (t * (s.k / 4) + i, g),
        (8, 8, 16 | 32 | 128, Which::C) => c_m8,
        // §9.7.14.5.6, figures 64-69: .m16n8k4 (.tf32, .f64).
        (16, 8, 4, Which::A) => (g + 8 * i, t),
        (16, 8, 4, Which::B) => (t, g),
        // §9.7.14.5.7, figures 70-77: .m16n8k8.
        (16, 8, 8, Which::A) if matches!(ty, Elem::F16 | Elem::Bf16) => (g + 8 * (i >= 2) as u32, 2 * t + (i & 1)),
        (16, 8, 8, Which::A) => (g + 8 * (i & 1), t + 4 * (i >= 2) as u32),
        (16, 8, 8, Which::B) if matches!(ty, Elem::F16 | Elem::Bf16) => (2 * t + i, g),
        (16, 8, 8, Which::B) => (t + 4 * i, g),
        // §9.7.14.5.8, figures 78-82: .m16n8k16 floating point (.f16/.bf16, .f64).
        (16, 8, 16, Which::A) if matches!(ty, Elem::F16 | Elem::Bf16) => (g + 8 * (i % 4 >= 2) as u32, 2 * t + (i & 1) + 8 * (i >= 4) as u32),
        // figure 79 (.f64): "col = (i * 2) + tig for even i, (i * 2) - 2 + tig otherwise" = 4 * (i >> 1) + tig.
        (16, 8, 16, Which::A) if ty == Elem::F64 => (g + 8 * (i & 1), 4 * (i >> 1) + t),
        (16, 8, 16, Which::B) if matches!(ty, Elem::F16 | Elem::Bf16) => (2 * t + (i & 1) + 8 * (i >= 2) as u32, g),
        (16, 8, 16, Which::B) if ty == Elem::F64 => (t + 4 * i, g),
        // §9.7.14.5.9, figures 83-85: .m16n8k16 8-bit (.s8/.u8/.e4m3/.e5m2).
        (16, 8, 16, Which::A) => (g + 8 * (i >= 4) as u32, 4 * t + (i & 3)),
        (16, 8, 16, Which::B) => (4 * t + i, g),
        // §9.7.14.5.10, figures 86-91: .m16n8k32.
        (16, 8, 32, Which::A) if matches!(ty, Elem::S4 | Elem::U4) => (g + 8 * (i >= 8) as u32, 8 * t + (i & 7)),
        (16, 8, 32, Which::A) => (g + 8 * (i % 8 >= 4) as u32, 4 * t + (i & 3) + 16 * (i >= 8) as u32),
        (16, 8, 32, Which::B) if matches!(ty, Elem::S4 | Elem::U4) => (8 * t + (i & 7), g),
        (16, 8, 32, Which::B) => (4 * t + (i & 3) + 16 * (i >= 4) as u32, g),
        // §9.7.14.5.11, figures 92-95: .m16n8k64 (4-bit).
        (16, 8, 64, Which::A) => (g + 8 * (i % 16 >= 8) as u32, 8 * t + (i & 7) + 32 * (i >= 16) as u32),
        (16, 8, 64, Which::B) => (8 * t + (i & 7) + 32 * (i >= 8) as u32, g),
        // §9.7.14.5.12, figures 96-98: .m16n8k128 (1-bit).
        (16, 8, 128, Which::A) => (g + 8 * (i >= 32) as u32, 32 * t + (i & 31)),
        (16, 8, 128, Which::B) => (32 * t + i, g),
        // §9.7.14.5.13, figures 99-102: .m16n8k256 (1-bit). The manual's
        // "col = (tig * 32) + i for i < 64" must read `i & 0x1F` like the
        // other half (with `+ i` lanes would overlap): figure 99 shows 32
        // columns per thread and half.
        (16, 8, 256, Which::A) => (g + 8 * (i % 64 >= 32) as u32, 32 * t + (i & 31) + 128 * (i >= 64) as u32),
        (16, 8, 256, Which::B) => (32 * t + (i & 31) + 128 * (i >= 32) as u32, g),
        (16, 8, _, Which::C) => c_m16,
        _ => return None,
    };
    Some(r)
}

/// Elements per lane of an `mma` fragment: the matrix's elements spread
/// over the 32 lanes (`.m8n8k4.f16`: over the 8 lanes of a quad-pair).
pub fn mma_fragment_len(s: Shape, w: Which, ty: Elem) -> u32 {
    let (r, c) = s.dims(w);
    if (s.m, s.n, s.k) == (8, 8, 4) && ty != Elem::F64 {
        r * c / 8
    } else {
        r * c / 32
    }
}

/// `.m8n8k4` with `.f16` inputs: the four products are computed by the
/// quad-pairs of lanes `4p..4p+3` and `16+4p..16+4p+3` (§9.7.14.5.1).
pub fn quad_pair(lane: u32) -> u32 {
    (lane >> 2) & 3
}

/// `ldmatrix`/`stmatrix`/`movmatrix` on an 8x8 matrix of 16-bit elements
/// (figures 103, 106, 108): lane `l` holds row `l / 4`, columns
/// `2 * (l % 4)` (low half of the register) and `2 * (l % 4) + 1` (high
/// half); with `.trans` it holds those elements of the transposed matrix,
/// i.e. `(row, col) = (2 * (l % 4) + h, l / 4)` of the matrix in memory.
pub fn m8n8_b16_coord(lane: u32, half: u32, trans: bool) -> (u32, u32) {
    let (r, c) = (lane / 4, 2 * (lane % 4) + half);
    if trans {
        (c, r)
    } else {
        (r, c)
    }
}

/// The lane and half holding element `(row, col)` of an 8x8 b16 fragment
/// (the inverse of [`m8n8_b16_coord`] without `.trans`).
pub fn m8n8_b16_holder(row: u32, col: u32) -> (u32, u32) {
    (row * 4 + col / 2, col % 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(m: u32, n: u32, k: u32) -> Shape {
        Shape { m, n, k }
    }

    /// Every (lane, element) pair lands on a distinct element of the
    /// matrix and together they cover it.
    fn assert_bijection(sh: Shape, w: Which, ty: Elem, row_major: bool) {
        let (rows, cols) = sh.dims(w);
        let n = mma_fragment_len(sh, w, ty);
        let eightfour = (sh.m, sh.n, sh.k) == (8, 8, 4) && ty != Elem::F64;
        let groups: Vec<Vec<u32>> = if eightfour { (0..4).map(|p| (0..32).filter(|l| quad_pair(*l) == p).collect()).collect() } else { vec![(0..32).collect()] };
        for lanes in groups {
            let mut seen = vec![false; (rows * cols) as usize];
            for &l in &lanes {
                for i in 0..n {
                    let (r, c) = mma_coord(sh, w, ty, row_major, l, i).unwrap_or_else(|| panic!("{sh:?} {w:?} {ty:?}"));
                    assert!(r < rows && c < cols, "{sh:?} {w:?} {ty:?} lane {l} i {i}: ({r},{c}) outside {rows}x{cols}");
                    let k = (r * cols + c) as usize;
                    assert!(!seen[k], "{sh:?} {w:?} {ty:?} lane {l} i {i}: ({r},{c}) twice");
                    seen[k] = true;
                }
            }
            assert!(seen.iter().all(|x| *x), "{sh:?} {w:?} {ty:?}: not covered");
        }
    }

    #[test]
    fn every_layout_covers_its_matrix_once() {
        use Elem::*;
        let cases: &[(Shape, Elem, Elem)] = &[
            (s(8, 8, 4), F16, F16),
            (s(8, 8, 4), F16, F32),
            (s(8, 8, 4), F64, F64),
            (s(8, 8, 16), S8, S32),
            (s(8, 8, 32), S4, S32),
            (s(8, 8, 128), B1, S32),
            (s(16, 8, 4), Tf32, F32),
            (s(16, 8, 4), F64, F64),
            (s(16, 8, 8), F16, F32),
            (s(16, 8, 8), Bf16, F32),
            (s(16, 8, 8), Tf32, F32),
            (s(16, 8, 8), F64, F64),
            (s(16, 8, 16), F16, F16),
            (s(16, 8, 16), F64, F64),
            (s(16, 8, 16), S8, S32),
            (s(16, 8, 16), E4m3, F32),
            (s(16, 8, 32), S8, S32),
            (s(16, 8, 32), S4, S32),
            (s(16, 8, 64), U4, S32),
            (s(16, 8, 128), B1, S32),
            (s(16, 8, 256), B1, S32),
        ];
        for &(sh, ab, c) in cases {
            for rm in [true, false] {
                if !rm && !((sh.m, sh.n, sh.k) == (8, 8, 4) && ab == F16) {
                    continue;
                }
                assert_bijection(sh, Which::A, ab, rm);
                assert_bijection(sh, Which::B, ab, rm);
            }
            assert_bijection(sh, Which::C, c, true);
        }
    }

    /// Entries read off the manual's figures and formulas.
    #[test]
    fn entries_from_the_manual() {
        use Elem::*;
        // Figure 78 (.m16n8k16 A .f16): lane 5 (groupID 1, tig 1): a0 (1,2), a1 (1,3), a2 (9,2), a3 (9,3), a4 (1,10), a7 (9,11).
        let a = |l, i| mma_coord(s(16, 8, 16), Which::A, F16, true, l, i).unwrap();
        assert_eq!([a(5, 0), a(5, 1), a(5, 2), a(5, 3), a(5, 4), a(5, 7)], [(1, 2), (1, 3), (9, 2), (9, 3), (1, 10), (9, 11)]);
        // Figure 80 (B): lane 6 (groupID 1, tig 2): b0 (4,1), b1 (5,1), b2 (12,1), b3 (13,1).
        let b = |l, i| mma_coord(s(16, 8, 16), Which::B, F16, true, l, i).unwrap();
        assert_eq!([b(6, 0), b(6, 1), b(6, 2), b(6, 3)], [(4, 1), (5, 1), (12, 1), (13, 1)]);
        // Figure 82 (C/D): lane 31 (groupID 7, tig 3): c0 (7,6), c1 (7,7), c2 (15,6), c3 (15,7).
        let c = |l, i| mma_coord(s(16, 8, 16), Which::C, F32, true, l, i).unwrap();
        assert_eq!([c(31, 0), c(31, 1), c(31, 2), c(31, 3)], [(7, 6), (7, 7), (15, 6), (15, 7)]);
        // Figure 71 (.m16n8k8 A .tf32): a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4); lane 9: g 2, t 1.
        let t = |i| mma_coord(s(16, 8, 8), Which::A, Tf32, true, 9, i).unwrap();
        assert_eq!([t(0), t(1), t(2), t(3)], [(2, 1), (10, 1), (2, 5), (10, 5)]);
        // Figure 87 (.m16n8k32 A .s8): lane 2 (g 0, t 2): a0 (0,8), a4 (8,8), a8 (0,24), a12 (8,24).
        let q = |i| mma_coord(s(16, 8, 32), Which::A, S8, true, 2, i).unwrap();
        assert_eq!([q(0), q(4), q(8), q(12)], [(0, 8), (8, 8), (0, 24), (8, 24)]);
        // Figure 89/90 (.m16n8k32 B .s8): lane 2: b0 (8,0), b4 (24,0).
        assert_eq!(mma_coord(s(16, 8, 32), Which::B, S8, true, 2, 4), Some((24, 0)));
        // Figure 50 (.m8n8k4 C .f32): lane 3: c0 (1,2), c2 (3,2), c5 (1,7); lane 18: c0 (4,2).
        let e = |l, i| mma_coord(s(8, 8, 4), Which::C, F32, true, l, i).unwrap();
        assert_eq!([e(3, 0), e(3, 2), e(3, 5), e(18, 0)], [(1, 2), (3, 2), (1, 7), (4, 2)]);
        // Figure 45 (.m8n8k4 A row .f16): lane 17: row 5, cols 0..3; quad-pair 0.
        assert_eq!(mma_coord(s(8, 8, 4), Which::A, F16, true, 17, 3), Some((5, 3)));
        assert_eq!(quad_pair(17), 0);
        assert_eq!(quad_pair(22), 1);
        // Figure 79 (.m16n8k16 A .f64): a5 of lane 1 (g 0, t 1): row 8, col 9.
        assert_eq!(mma_coord(s(16, 8, 16), Which::A, F64, true, 1, 5), Some((8, 9)));
    }

    #[test]
    fn ldmatrix_fragments() {
        // Figure 103: thread 0 holds row 0 cols 0,1; thread 5 row 1 cols 2,3; thread 31 row 7 cols 6,7.
        assert_eq!(m8n8_b16_coord(5, 0, false), (1, 2));
        assert_eq!(m8n8_b16_coord(5, 1, false), (1, 3));
        assert_eq!(m8n8_b16_coord(31, 1, false), (7, 7));
        assert_eq!(m8n8_b16_coord(5, 1, true), (3, 1));
        for l in 0..32 {
            for h in 0..2 {
                let (r, c) = m8n8_b16_coord(l, h, false);
                assert_eq!(m8n8_b16_holder(r, c), (l, h));
            }
        }
    }
}
