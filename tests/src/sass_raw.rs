//! Counting SASS instructions from the bytes of a cubin's `.text` section,
//! for the archs nvdisasm 13 cannot disassemble (sm_5x/6x and sm_70/72).
//!
//! Only the padding ptxas appends to every function has to be recognized; no
//! other instruction is decoded:
//!
//! - sm_70 and newer (Volta's encoding, kept through Blackwell): 16-byte
//!   instructions, the opcode in bits 0..12 of the first little-endian word
//!   and the guard predicate in bits 12..16 (7 = `PT`, unguarded). A function
//!   ends with `EXIT`, an unguarded `BRA` to itself (opcode `0x947`) and
//!   `NOP`s (`0x918`) up to the section's alignment. They are dropped as
//!   [`crate::ptxas::parse_nvdisasm`] drops them, so on sm_75 and newer the
//!   two counts agree (the cost-table generator checks that on every kernel
//!   it measures).
//! - sm_5x and sm_6x (Maxwell's encoding): 32-byte bundles of one control
//!   word and three 8-byte instructions. ptxas also fills bundles *inside*
//!   the code with `NOP`s (opcode `0x50b0` in the top 16 bits), so every
//!   `NOP` is dropped, then the final unguarded `BRA` (top 12 bits `0xe24`,
//!   predicate bits 16..20 = 7) with a backward displacement. No current
//!   disassembler reads sm_5x code, so this one is checked only by the
//!   counts it gives: one instruction for `add.s32`, `lop3.b32`, `prmt.b32`
//!   ..., as on every other family.

/// The first 64-bit word of each instruction of a function's `.text` bytes,
/// padding removed, for an `sm_NN` arch number `arch` (50 or newer).
pub fn instructions(text: &[u8], arch: u32) -> Vec<u64> {
    let word = |c: &[u8]| u64::from_le_bytes(c[..8].try_into().expect("8 bytes"));
    if arch >= 70 {
        let mut ins: Vec<u64> = text.chunks_exact(16).map(word).collect();
        while ins.last().is_some_and(|w| w & 0xfff == 0x918) {
            ins.pop();
        }
        if ins.last().is_some_and(|w| w & 0xfff == 0x947 && (w >> 12) & 0xf == 7) {
            ins.pop();
        }
        ins
    } else {
        let mut ins: Vec<u64> = text
            .chunks_exact(8)
            .enumerate()
            .filter(|(k, _)| k % 4 != 0) // the control word of each bundle
            .map(|(_, c)| word(c))
            .filter(|w| w >> 48 != 0x50b0)
            .collect();
        let backward = |w: u64| (w >> 20) & 0x80_0000 != 0;
        if ins.last().is_some_and(|&w| w >> 52 == 0xe24 && (w >> 16) & 0xf == 7 && backward(w)) {
            ins.pop();
        }
        ins
    }
}

#[cfg(test)]
mod tests {
    use super::instructions;

    fn bytes(words: &[u64]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn volta_padding_is_dropped() {
        // sm_70 code (low words, high words): MOV, LDG, EXIT, BRA self, NOP, NOP
        let text = bytes(&[
            0x0000_0a00_0001_7a02, 0x000f_e400_0000_0f00,
            0x0000_0000_0206_7381, 0x000f_e800_001f_6b00,
            0x0000_0000_0000_794d, 0x000f_ea00_0380_0000,
            0xffff_fff0_0000_7947, 0x000f_c000_0383_ffff,
            0x0000_0000_0000_7918, 0x000f_c000_0000_0000,
            0x0000_0000_0000_7918, 0x000f_c000_0000_0000,
        ]);
        let ins = instructions(&text, 70);
        assert_eq!(ins.iter().map(|w| w & 0xfff).collect::<Vec<_>>(), [0xa02, 0x381, 0x94d]);
        // a guarded BRA (predicate P0) at the end is code, not padding
        let text = bytes(&[0x0000_0000_0000_094d, 0, 0xffff_fff0_0000_0947, 0]);
        assert_eq!(instructions(&text, 75).len(), 2);
    }

    #[test]
    fn maxwell_control_words_and_nops_are_dropped() {
        // sm_52 code: control, 3 instructions (one a NOP), control, EXIT, BRA self, NOP
        let text = bytes(&[
            0x001f_c800_fe20_07f6,
            0x4c98_0780_0087_0001,
            0x50b0_0000_0007_0f00,
            0xeed5_e000_0007_0206,
            0x001f_8000_fc00_07ff,
            0xe300_0000_0007_000f,
            0xe240_0fff_ff07_000f,
            0x50b0_0000_0007_0f00,
        ]);
        assert_eq!(instructions(&text, 52), [0x4c98_0780_0087_0001, 0xeed5_e000_0007_0206, 0xe300_0000_0007_000f]);
    }
}
