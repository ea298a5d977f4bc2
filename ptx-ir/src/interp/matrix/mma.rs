//! `mma.sync.aligned` (PTX ISA 8.7 §9.7.14.5.14): `D = A * B + C` over the
//! fragments of the warp's lanes, and [`multiply`], the arithmetic shared
//! with `wmma.mma`.
//!
//! Integer forms are exact: products and sums in 64 bits, then wrapped to
//! 32 bits, or with `.satfinite` clamped to the `.s32` range (marked
//! unspecified when a partial sum could overflow in one order and not in
//! another). Single-bit forms: `popc` of the `.and`/`.xor` of a row of A
//! and a column of B, added to C. Floating-point forms: see `exact.rs`.

use super::exact::{self, Accumulation, Input, Num, Round};
use super::layout::{mma_coord, mma_fragment_len, quad_pair, Elem, Shape, Which};
use super::{element, pack, Completion, Failure, LaneInputs};
use crate::eval::Quality;
use crate::ir::Instruction;

/// Element types of D, A, B, C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Types {
    pub d: Elem,
    pub a: Elem,
    pub b: Elem,
    pub c: Elem,
}

/// The single-bit operation replacing the multiplication.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitOp {
    And,
    Xor,
}

/// What the modifiers of an `mma` say.
#[derive(Clone, Copy, Debug)]
pub struct Form {
    pub shape: Shape,
    pub types: Types,
    pub a_row: bool,
    pub b_row: bool,
    pub satfinite: bool,
    pub round: Round,
    pub bit_op: Option<BitOp>,
}

/// Modifier texts of an instruction, without the empty slots.
pub fn mod_texts(ins: &Instruction) -> Vec<&'static str> {
    ins.mods.iter().filter(|m| **m != crate::isa::Mod::NONE).map(|m| m.text()).collect()
}

/// The rounding modifier of `.f64` forms.
fn rounding(t: &str) -> Option<Round> {
    Some(match t {
        ".rn" => Round::Nearest,
        ".rz" => Round::Zero,
        ".rm" => Round::Down,
        ".rp" => Round::Up,
        _ => return None,
    })
}

/// The modifiers `mma` and `wmma` read the same way: shape, types in
/// order, `.row`/`.col` in order, `.satfinite`, the rounding, the bit
/// operation (`.popc` goes with it); `.sync` and `.aligned` say nothing.
pub struct CommonMods {
    pub shape: Option<Shape>,
    pub types: Vec<Elem>,
    pub layouts: Vec<bool>,
    pub satfinite: bool,
    pub round: Round,
    pub bit_op: Option<BitOp>,
}

impl Default for CommonMods {
    fn default() -> CommonMods {
        CommonMods { shape: None, types: Vec::new(), layouts: Vec::new(), satfinite: false, round: Round::Nearest, bit_op: None }
    }
}

impl CommonMods {
    /// Takes modifier `t` if it is one of these; false if not.
    pub fn take(&mut self, t: &str) -> bool {
        if let Some(s) = Shape::from_text(t) {
            self.shape = Some(s);
        } else if let Some(e) = Elem::from_text(t) {
            self.types.push(e);
        } else if let Some(r) = rounding(t) {
            self.round = r;
        } else {
            match t {
                ".sync" | ".aligned" | ".popc" => {}
                ".row" => self.layouts.push(true),
                ".col" => self.layouts.push(false),
                ".satfinite" => self.satfinite = true,
                ".and" => self.bit_op = Some(BitOp::And),
                ".xor" => self.bit_op = Some(BitOp::Xor),
                _ => return false,
            }
        }
        true
    }
}

impl Form {
    pub fn parse(ins: &Instruction) -> Result<Form, Option<String>> {
        let mut m = CommonMods::default();
        for t in mod_texts(ins) {
            if !m.take(t) {
                return Err(Some(format!("`{t}` is not implemented")));
            }
        }
        let CommonMods { shape, types, layouts, satfinite, round, bit_op } = m;
        let Some(shape) = shape else { return Err(None) };
        let [d, a, b, c] = types[..] else { return Err(None) };
        let [a_row, b_row] = layouts[..] else { return Err(None) };
        let form = Form { shape, types: Types { d, a, b, c }, a_row, b_row, satfinite, round, bit_op };
        // Every fragment must have a layout of the manual.
        for (w, ty) in [(Which::A, a), (Which::B, b), (Which::C, c), (Which::C, d)] {
            let row_major = if w == Which::B { b_row } else { a_row };
            if mma_coord(shape, w, ty, row_major, 0, 0).is_none() {
                return Err(Some(format!("no fragment layout for {w:?} of .m{}n{}k{} with .{ty:?}", shape.m, shape.n, shape.k)));
            }
        }
        Ok(form)
    }
}

/// A dense matrix of raw element bits with the quality of each.
#[derive(Clone, Debug)]
pub struct Matrix {
    pub rows: u32,
    pub cols: u32,
    pub data: Vec<(u64, Quality)>,
}

impl Matrix {
    pub fn new(rows: u32, cols: u32) -> Matrix {
        Matrix { rows, cols, data: vec![(0, Quality::Unspecified); (rows * cols) as usize] }
    }
    pub fn get(&self, r: u32, c: u32) -> (u64, Quality) {
        self.data[(r * self.cols + c) as usize]
    }
    pub fn set(&mut self, r: u32, c: u32, v: (u64, Quality)) {
        self.data[(r * self.cols + c) as usize] = v;
    }
}

/// `mma`: gathers A, B, C from the lanes' fragments, multiplies, and
/// hands each lane its fragment of D.
pub fn execute(ins: &Instruction, inputs: &[LaneInputs]) -> Result<Completion, Failure> {
    let form = Form::parse(ins).map_err(|w| Failure::Unsupported(w.unwrap_or_else(|| "form".into())))?;
    let s = form.shape;
    let ty = form.types;
    // Operands: d, a, b, c.
    let frag = |lane: usize, k: usize| &inputs[lane].ops[k];
    // .m8n8k4 with .f16 inputs: four independent products, one per quad-pair.
    let groups: Vec<Vec<u32>> = if (s.m, s.n, s.k) == (8, 8, 4) && ty.a == Elem::F16 {
        (0..4).map(|p| (0..32).filter(|l| quad_pair(*l) == p).collect()).collect()
    } else {
        vec![(0..32).collect()]
    };
    let mut results: Vec<Vec<(u64, Quality)>> = vec![Vec::new(); 32];
    for lanes in groups {
        let gather = |w: Which, k: usize, ety: Elem, row_major: bool| -> Result<Matrix, Failure> {
            let (rows, cols) = s.dims(w);
            let mut m = Matrix::new(rows, cols);
            let n = mma_fragment_len(s, w, ety);
            for &l in &lanes {
                for i in 0..n {
                    let (r, c) = mma_coord(s, w, ety, row_major, l, i).ok_or_else(|| Failure::Unsupported("layout".into()))?;
                    let v = element(frag(l as usize, k), ety, i).ok_or_else(|| Failure::Unsupported(format!("{w:?} fragment with too few registers")))?;
                    m.set(r, c, v);
                }
            }
            Ok(m)
        };
        let a = gather(Which::A, 1, ty.a, form.a_row)?;
        let b = gather(Which::B, 2, ty.b, form.b_row)?;
        let c = gather(Which::C, 3, ty.c, true)?;
        let d = multiply(&a, &b, &c, ty, form.satfinite, form.round, form.bit_op);
        let n = mma_fragment_len(s, Which::C, ty.d);
        for &l in &lanes {
            results[l as usize] = (0..n).map(|i| mma_coord(s, Which::C, ty.d, true, l, i).map(|(r, c)| d.get(r, c)).unwrap_or((0, Quality::Unspecified))).collect();
        }
    }
    Ok(Completion { results: results.iter().map(|e| pack(e, ty.d)).collect(), writes: Vec::new() })
}

/// The format of a floating-point element type.
pub(super) fn format_of(e: Elem) -> exact::Format {
    match e {
        Elem::F16 => exact::F16,
        Elem::Bf16 => exact::BF16,
        Elem::F64 => exact::F64,
        _ => exact::F32,
    }
}

/// A floating-point element as an input of the exact sum.
pub(super) fn input(e: Elem, (bits, quality): (u64, Quality)) -> Input {
    let mut rel_uncertainty = 0.0;
    let num = match e {
        Elem::F16 => Num::decode(bits, 5, 10, true),
        Elem::Bf16 => Num::decode(bits, 8, 7, true),
        Elem::F32 => Num::decode(bits, 8, 23, true),
        Elem::F64 => Num::decode(bits, 11, 52, true),
        Elem::E4m3 => Num::decode(bits, 4, 3, false),
        Elem::E5m2 => Num::decode(bits, 5, 2, true),
        Elem::Tf32 => {
            // "The low 13 bits of a .tf32 input are implementation-defined
            // in how they are treated": the value without them, uncertain
            // by up to one unit of the 10-bit mantissa when they are set.
            match Num::decode(bits, 8, 23, true) {
                Num::Nan => Num::Nan,
                _ => {
                    if bits & 0x1fff != 0 {
                        rel_uncertainty = (-10f64).exp2();
                    }
                    Num::decode(bits & !0x1fff, 8, 23, true)
                }
            }
        }
        _ => Num::zero(),
    };
    Input { num, quality, rel_uncertainty }
}

/// `D = A * B + C` with the arithmetic of the types (see the module doc).
pub fn multiply(a: &Matrix, b: &Matrix, c: &Matrix, ty: Types, satfinite: bool, round: Round, bit_op: Option<BitOp>) -> Matrix {
    let (m, n, k) = (a.rows, b.cols, a.cols);
    let mut d = Matrix::new(m, n);
    if ty.a.is_float() {
        // Accumulation: at least single precision, half when C and D are
        // both .f16 with .f16 inputs; .f64 in .f64.
        let acc = if ty.a == Elem::F64 {
            exact::F64
        } else if ty.a == Elem::F16 && ty.c == Elem::F16 && ty.d == Elem::F16 {
            exact::F16
        } else {
            exact::F32
        };
        let acc = Accumulation { acc, dest: format_of(ty.d), round: if ty.a == Elem::F64 { round } else { Round::Nearest } };
        let mut products = Vec::with_capacity(k as usize);
        for i in 0..m {
            for j in 0..n {
                products.clear();
                products.extend((0..k).map(|x| (input(ty.a, a.get(i, x)), input(ty.b, b.get(x, j)))));
                let out = exact::dot(&products, input(ty.c, c.get(i, j)), acc);
                d.set(i, j, (out.bits as u64, out.quality));
            }
        }
        return d;
    }
    for i in 0..m {
        for j in 0..n {
            let (cv, cq) = c.get(i, j);
            let mut quality = cq;
            let (mut pos, mut neg) = (0i64, 0i64);
            let cv = Elem::S32.int_value(cv);
            if cv >= 0 {
                pos += cv
            } else {
                neg += cv
            }
            for x in 0..k {
                let (av, aq) = a.get(i, x);
                let (bv, bq) = b.get(x, j);
                quality = super::combine(quality, super::combine(aq, bq));
                let p = match bit_op {
                    Some(BitOp::And) => (av & bv & 1) as i64,
                    Some(BitOp::Xor) => ((av ^ bv) & 1) as i64,
                    None => ty.a.int_value(av) * ty.b.int_value(bv),
                };
                if p >= 0 {
                    pos += p
                } else {
                    neg += p
                }
            }
            let sum = pos + neg;
            let (min, max) = (i32::MIN as i64, i32::MAX as i64);
            let v = if !satfinite {
                sum as i32
            } else {
                // Clamping is order-independent when no partial sum can
                // overflow, or when all terms push the same way.
                let safe = (pos <= max && neg >= min) || (sum > max && neg == 0) || (sum < min && pos == 0);
                if !safe {
                    quality = Quality::Unspecified;
                }
                sum.clamp(min, max) as i32
            };
            if quality != Quality::Exact {
                quality = Quality::Unspecified;
            }
            d.set(i, j, (v as u32 as u64, quality));
        }
    }
    d
}
