//! The manual's operand-type rules (§9.4, tables 25–27): which register
//! types an instruction type accepts.

use crate::ir::Instruction;
use crate::isa::{ModKind, Opcode, ScalarType, StateSpace, TypeClass};

/// The data type written in slot `k` of the instruction's form.
pub fn slot_type(ins: &Instruction, k: usize) -> Option<ScalarType> {
    match ins.mods.get(k)?.kind() {
        ModKind::Type(t) => Some(t),
        _ => None,
    }
}

/// The same class at twice the width (`mul.wide.s32` gives `.s64`).
pub fn wider(t: ScalarType) -> Option<ScalarType> {
    use ScalarType::*;
    Some(match t {
        U8 => U16,
        U16 => U32,
        U32 => U64,
        S8 => S16,
        S16 => S32,
        S32 => S64,
        B8 => B16,
        B16 => B32,
        B32 => B64,
        B64 | U64 | S64 => B128,
        F16 => F32,
        F32 => F64,
        _ => return None,
    })
}

/// The same class at half the width.
pub fn narrower(t: ScalarType) -> Option<ScalarType> {
    use ScalarType::*;
    Some(match t {
        U16 => U8,
        U32 => U16,
        U64 => U32,
        S16 => S8,
        S32 => S16,
        S64 => S32,
        B16 => B8,
        B32 => B16,
        B64 => B32,
        B128 => B64,
        F32 => F16,
        F64 => F32,
        _ => return None,
    })
}

/// Instructions whose data operands may be wider than the instruction type (§9.4.1).
pub fn relaxed_opcode(op: Opcode) -> bool {
    op == Opcode::LD || op == Opcode::ST || op == Opcode::LDU || op == Opcode::CVT
}

/// A register's type as the rules see it: packed and alternate formats held
/// in registers behave as bit types of their size (ptxas treats a `.f16x2`
/// register like a `.b32` one).
const fn as_register(t: ScalarType) -> (TypeClass, u32) {
    use ScalarType::*;
    match t {
        F16x2 | Bf16x2 | U16x2 | S16x2 | F32x2 | E4m3x2 | E5m2x2 | E2m1x2 | E2m3x2 | E3m2x2 | Ue8m0x2 | E4m3x4 | E5m2x4 | E2m1x4 | E2m3x4 | E3m2x4 | S8x4 | U8x4 => {
            (TypeClass::Bits, t.bits())
        }
        _ => (t.class(), t.bits()),
    }
}

/// Formats whose registers must have exactly their size, even in `ld`/`st`/`cvt`.
const fn exact_format(t: ScalarType) -> bool {
    use ScalarType::*;
    matches!(as_register(t).0, TypeClass::Bits) && !matches!(t.class(), TypeClass::Bits) || matches!(t, Bf16 | Tf32 | E4m3 | E5m2 | E2m1 | E2m3 | E3m2 | Ue8m0)
}

/// May a register of type `reg` be an operand where the instruction expects
/// `expected`? `relaxed`: a data operand of `ld`/`st`/`cvt`, which may be wider.
pub fn compatible(expected: ScalarType, reg: ScalarType, relaxed: bool) -> bool {
    COMPATIBLE[expected as usize][relaxed as usize] & 1 << reg as usize != 0
}

/// [`by_rules`] for every pair of types, worked out by the compiler: by
/// expected type and `relaxed`, the register types accepted, as a mask by
/// `ScalarType as usize`. The verifier asks at every register operand;
/// the rules took 15 to 31 host instructions a question on renderer (a call
/// each), the table about 4, inlined.
const COMPATIBLE: [[u64; 2]; ScalarType::ALL.len()] = {
    assert!(ScalarType::ALL.len() <= 64, "a mask of register types holds 64");
    let all = ScalarType::ALL;
    let mut table = [[0u64; 2]; ScalarType::ALL.len()];
    let mut e = 0;
    while e < all.len() {
        let mut r = 0;
        while r < all.len() {
            let mut relaxed = 0;
            while relaxed < 2 {
                if by_rules(all[e], all[r], relaxed == 1) {
                    table[all[e] as usize][relaxed] |= 1 << all[r] as usize;
                }
                relaxed += 1;
            }
            r += 1;
        }
        e += 1;
    }
    table
};

/// Are two types the same? (`==` in a `const fn`.)
const fn same(a: ScalarType, b: ScalarType) -> bool {
    a as usize == b as usize
}

/// [`compatible`] by the rules, for two types.
const fn by_rules(expected: ScalarType, reg: ScalarType, relaxed: bool) -> bool {
    use TypeClass::*;
    if matches!(expected, ScalarType::Pred) || matches!(reg, ScalarType::Pred) {
        return same(expected, reg);
    }
    let (ec, eb) = as_register(expected);
    let (rc, rb) = as_register(reg);
    if matches!(ec, Opaque) || matches!(rc, Opaque) {
        return true;
    }
    // Sub-byte and 8-bit float formats live in wider registers.
    if eb < 8 || (matches!(ec, Float) && eb == 8) {
        return true;
    }
    if eb == rb {
        return match (ec, rc) {
            (Bits, _) | (_, Bits) => true,
            (Signed | Unsigned, Signed | Unsigned) => true,
            // Floating-point types agree only when they are the same type.
            (Float, Float) => same(expected, reg),
            _ => false,
        };
    }
    // Wider registers only where the relaxed rules allow them (§9.4.1); a
    // floating-point instruction type still needs an exact size unless the
    // register is a bit type; packed and alternate formats (`.e4m3x2`,
    // `.bf16`, `.tf32` ...) never take a wider register.
    relaxed && rb > eb && !(matches!(ec, Float) && !matches!(rc, Bits)) && !exact_format(expected)
}

/// Is this register type usable as an address (any 32- or 64-bit integer or
/// bit type: shared-memory addresses are often 32-bit in 64-bit modules)?
pub fn is_address_type(t: ScalarType) -> bool {
    matches!(t.class(), TypeClass::Bits | TypeClass::Unsigned | TypeClass::Signed) && matches!(t.bits(), 32 | 64)
}

/// May an instruction in state space `want` access a variable declared in `have`?
pub fn space_fits(want: StateSpace, have: StateSpace) -> bool {
    if matches!(want, StateSpace::Generic | StateSpace::Tex) || matches!(have, StateSpace::Tex | StateSpace::Generic) {
        return true;
    }
    want.base() == have.base()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScalarType::*;

    #[test]
    fn table_25() {
        assert!(compatible(U32, S32, false));
        assert!(compatible(S32, B32, false));
        assert!(compatible(B32, F32, false));
        assert!(!compatible(U32, F32, false));
        assert!(!compatible(F32, U32, false));
        assert!(compatible(F32, B32, false));
        assert!(!compatible(F32, F64, false));
        assert!(!compatible(U32, U64, false));
        assert!(!compatible(Pred, B32, false));
    }

    #[test]
    fn relaxed_sizes() {
        assert!(compatible(U8, U32, true));
        assert!(compatible(S16, B64, true));
        assert!(!compatible(U64, U32, true));
        assert!(!compatible(F32, F64, true));
        assert!(compatible(F32, B64, true));
    }

    /// The table answers as the rules do, for every pair of types.
    #[test]
    fn the_table_is_the_rules() {
        for &e in ScalarType::ALL {
            for &r in ScalarType::ALL {
                for relaxed in [false, true] {
                    assert_eq!(compatible(e, r, relaxed), by_rules(e, r, relaxed), "{e:?} {r:?} {relaxed}");
                }
            }
        }
    }

    /// A register of the instruction's own type is always accepted.
    #[test]
    fn same_type_is_compatible() {
        for &t in ScalarType::ALL {
            for relaxed in [false, true] {
                assert!(by_rules(t, t, relaxed), "{t:?}");
            }
        }
    }

    #[test]
    fn packed_registers_are_bits() {
        assert!(compatible(F16x2, B32, false));
        assert!(compatible(U32, F16x2, false));
        assert!(compatible(F16x2, F16x2, false));
    }
}
