//! Helpers shared by the evaluator's families: masks, sign extension,
//! immediates.

use crate::ir::{FloatLit, Imm};
use crate::isa::{ScalarType, TypeClass};

/// The low `bits` bits set.
pub fn mask(bits: u32) -> u128 {
    if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    }
}

/// Sign-extends the low `bits` bits to i128.
pub fn sext(v: u128, bits: u32) -> i128 {
    if bits == 0 {
        return 0;
    }
    let shift = 128 - bits.min(128);
    ((v << shift) as i128) >> shift
}

/// [`mask`] for 1 to 64 bits, on 64-bit values (the interpreter's fast
/// path computes its integer forms, none wider, on them).
#[inline]
pub fn mask64(bits: u32) -> u64 {
    u64::MAX >> (64 - bits)
}

/// [`sext`] for 1 to 64 bits, on 64-bit values.
#[inline]
pub fn sext64(v: u64, bits: u32) -> i64 {
    let shift = 64 - bits;
    ((v << shift) as i64) >> shift
}

/// Truncates to `bits` bits.
pub fn trunc(v: u128, bits: u32) -> u128 {
    v & mask(bits)
}

/// Is the type signed (`.sN`, `.s16x2` ...)?
pub fn signed(t: ScalarType) -> bool {
    t.class() == TypeClass::Signed
}

/// The bit pattern an immediate has as an operand of type `ty`: integers are
/// truncated to the type's width; floating-point literals are converted to
/// the type (single-precision `0f` literals exactly; doubles rounded to
/// nearest); an integer used where a float is expected is taken as bits.
pub fn imm_bits(imm: &Imm, ty: ScalarType) -> u128 {
    let width = ty.bits().max(1);
    match imm {
        Imm::Int(l) => {
            let v = l.value as i64 as i128 as u128;
            trunc(v, width)
        }
        Imm::Float(f) => {
            let v = f.to_f64();
            match ty {
                ScalarType::F64 => match f {
                    FloatLit::F32(b) => (f32::from_bits(*b) as f64).to_bits() as u128,
                    _ => v.to_bits() as u128,
                },
                ScalarType::F32 => match f {
                    FloatLit::F32(b) => *b as u128,
                    _ => (v as f32).to_bits() as u128,
                },
                _ if ty.class() == TypeClass::Float && ty.bits() == 16 => {
                    crate::eval::convert::f64_to_format_bits(v, ty) as u128
                }
                // A float literal where bits or an integer are expected: its bits.
                _ => match f {
                    FloatLit::F32(b) => trunc(*b as u128, width),
                    _ => trunc(v.to_bits() as u128, width),
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::IntLit;

    #[test]
    fn masks_and_extension() {
        assert_eq!(mask(8), 0xff);
        assert_eq!(sext(0x80, 8), -128);
        assert_eq!(sext(0x7f, 8), 127);
        assert_eq!(trunc(0x1_0000_0001, 32), 1);
        for bits in 1..=64 {
            assert_eq!(u128::from(mask64(bits)), mask(bits), "{bits}");
            for v in [0u64, 1, 0x7f, 0x80, 0xdead_beef, 1 << 63, u64::MAX] {
                assert_eq!(i128::from(sext64(v, bits)), sext(u128::from(v), bits), "{v:#x} at {bits}");
            }
        }
    }

    #[test]
    fn immediates() {
        assert_eq!(imm_bits(&Imm::Int(IntLit::dec(-1)), ScalarType::U32), 0xffff_ffff);
        assert_eq!(imm_bits(&Imm::Float(FloatLit::F32(0x3f80_0000)), ScalarType::F32), 0x3f80_0000);
        assert_eq!(imm_bits(&Imm::Float(FloatLit::decimal("0.5".into(), 0.5f64.to_bits())), ScalarType::F32), 0x3f00_0000);
    }
}
