//! The interpreter's own encoding of a tensor map (PTX ISA 8.7 §5.5.8: a
//! 128-byte opaque object; CUDA's real encoding is undocumented), its
//! fields ([`TensorMap`]), and the checks a map must pass before a tensor
//! copy uses it.
//!
//! Layout (little-endian; every byte not listed is zero):
//!
//! | bytes    | field                                                          |
//! |----------|----------------------------------------------------------------|
//! | 0..4     | magic `b"PTXM"`                                                |
//! | 4        | rank − 1 (`tensormap.replace .rank` writes rank − 1)           |
//! | 5        | element type (Table 32 `.elemtype` numbers)                    |
//! | 6        | interleave layout (0 none, 1 16B, 2 32B)                       |
//! | 7        | swizzle mode (0 none, 1 32B, 2 64B, 3 128B)                    |
//! | 8        | swizzle atomicity (0 16B, 1 32B, 2 32B + 8B flip, 3 64B)       |
//! | 9        | fill mode (0 zero, 1 OOB-NaN)                                  |
//! | 16..24   | global address (`.global_address`)                             |
//! | 24..44   | global dimensions, 5 × u32, in elements (`.global_dim` ord k)  |
//! | 48..80   | global strides, 4 × u64, in bytes: slot k is the stride of     |
//! |          | dimension k + 1 (`.global_stride` ord k; dimension 0's stride  |
//! |          | is the element size)                                           |
//! | 80..100  | box dimensions, 5 × u32, in elements (`.box_dim` ord k)        |
//! | 100..120 | element (traversal) strides, 5 × u32 (`.element_stride` ord k) |
//!
//! The limits checked are those of the manual (§5.5.3: the box's innermost
//! dimension a multiple of 16 bytes, traversal stride 1 in dimension 0 without
//! interleave; §5.5.7 Table 14: the valid swizzle/atomicity pairs) and of
//! CUDA's tensor-map encoder (dimensions 1..2^32, strides multiples of 16
//! below 2^40, box dimensions 1..=256, traversal strides 1..=8, a global
//! address aligned to 16 bytes, the box's inner row no wider than the swizzle
//! span, OOB-NaN fill for floating-point types only).

use std::fmt;

/// The magic word at offset 0.
pub const MAGIC: [u8; 4] = *b"PTXM";
/// Bytes of a tensor map.
pub const MAP_BYTES: usize = 128;

const RANK_AT: usize = 4;
const ELEM_AT: usize = 5;
const INTERLEAVE_AT: usize = 6;
const SWIZZLE_AT: usize = 7;
const ATOMICITY_AT: usize = 8;
const FILL_AT: usize = 9;
const ADDRESS_AT: usize = 16;
const DIMS_AT: usize = 24;
const STRIDES_AT: usize = 48;
const BOX_AT: usize = 80;
const ELEMENT_STRIDES_AT: usize = 100;

/// Element types, numbered as Table 32 (`tensormap.replace .elemtype`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElemType {
    U8,
    U16,
    U32,
    S32,
    U64,
    S64,
    F16,
    F32,
    F32Ftz,
    F64,
    Bf16,
    Tf32,
    Tf32Ftz,
}

impl ElemType {
    const ALL: [ElemType; 13] = [ElemType::U8, ElemType::U16, ElemType::U32, ElemType::S32, ElemType::U64, ElemType::S64, ElemType::F16, ElemType::F32, ElemType::F32Ftz, ElemType::F64, ElemType::Bf16, ElemType::Tf32, ElemType::Tf32Ftz];

    /// The Table 32 number.
    pub fn code(self) -> u8 {
        ElemType::ALL.iter().position(|&e| e == self).unwrap() as u8
    }

    pub fn from_code(c: u8) -> Option<ElemType> {
        ElemType::ALL.get(c as usize).copied()
    }

    pub fn bytes(self) -> usize {
        match self {
            ElemType::U8 => 1,
            ElemType::U16 | ElemType::F16 | ElemType::Bf16 => 2,
            ElemType::U32 | ElemType::S32 | ElemType::F32 | ElemType::F32Ftz | ElemType::Tf32 | ElemType::Tf32Ftz => 4,
            ElemType::U64 | ElemType::S64 | ElemType::F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, ElemType::F16 | ElemType::F32 | ElemType::F32Ftz | ElemType::F64 | ElemType::Bf16 | ElemType::Tf32 | ElemType::Tf32Ftz)
    }

    /// The name `ptx-opt run` and messages use (`f16`, `f32.ftz`, ...).
    pub fn name(self) -> &'static str {
        ["u8", "u16", "u32", "s32", "u64", "s64", "f16", "f32", "f32.ftz", "f64", "bf16", "tf32", "tf32.ftz"][self.code() as usize]
    }

    pub fn from_name(s: &str) -> Option<ElemType> {
        ElemType::ALL.iter().copied().find(|e| e.name() == s)
    }
}

/// Swizzle modes (§5.5.7), numbered as Table 32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Swizzle {
    None,
    B32,
    B64,
    B128,
}

impl Swizzle {
    /// Bytes of one row of the pattern's span (the widest inner box row).
    pub fn span(self) -> Option<usize> {
        match self {
            Swizzle::None => None,
            Swizzle::B32 => Some(32),
            Swizzle::B64 => Some(64),
            Swizzle::B128 => Some(128),
        }
    }
}

/// Swizzle atomicity (§5.5.7), numbered as Table 32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Atomicity {
    B16,
    B32,
    B32Flip8,
    B64,
}

/// Interleave layouts (§5.5.6), numbered as Table 32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interleave {
    None,
    B16,
    B32,
}

/// Out-of-bound fill (§5.5.3.3), numbered as Table 32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fill {
    Zero,
    OobNan,
}

/// A decoded tensor map: rank 1 to 5; entries beyond the rank are ignored.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorMap {
    pub elem: ElemType,
    pub rank: usize,
    pub global_address: u64,
    /// Elements per dimension (dimension 0 innermost).
    pub dims: [u64; 5],
    /// Bytes between consecutive elements of dimension k + 1.
    pub strides: [u64; 4],
    /// The bounding box: elements traversed per dimension.
    pub box_dims: [u32; 5],
    /// The traversal stride per dimension.
    pub element_strides: [u32; 5],
    pub interleave: Interleave,
    pub swizzle: Swizzle,
    pub atomicity: Atomicity,
    pub fill: Fill,
}

/// Why 128 bytes are not a map the interpreter can use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MapError {
    /// Not a valid map: using it is undefined behaviour.
    Invalid(String),
    /// A valid map of a kind the interpreter does not implement.
    Unsupported(String),
}

impl fmt::Display for MapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MapError::Invalid(m) | MapError::Unsupported(m) => f.write_str(m),
        }
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

impl TensorMap {
    /// A tile-mode map of `elem` over `dims` (innermost first) with byte
    /// `strides` for dimensions 1.., box `box_dims`, traversal strides 1, no
    /// interleave, no swizzle, zero fill; at global address 0 (set
    /// `global_address`, or let a launch argument place it).
    pub fn new(elem: ElemType, dims: &[u64], strides: &[u64], box_dims: &[u32]) -> TensorMap {
        let mut m = TensorMap { elem, rank: dims.len(), global_address: 0, dims: [1; 5], strides: [0; 4], box_dims: [1; 5], element_strides: [1; 5], interleave: Interleave::None, swizzle: Swizzle::None, atomicity: Atomicity::B16, fill: Fill::Zero };
        for (k, &d) in dims.iter().take(5).enumerate() {
            m.dims[k] = d;
        }
        for (k, &s) in strides.iter().take(4).enumerate() {
            m.strides[k] = s;
        }
        for (k, &b) in box_dims.iter().take(5).enumerate() {
            m.box_dims[k] = b;
        }
        m
    }

    /// The 128 bytes of the encoding.
    pub fn encode(&self) -> [u8; MAP_BYTES] {
        let mut b = [0u8; MAP_BYTES];
        b[..4].copy_from_slice(&MAGIC);
        b[RANK_AT] = (self.rank as u8).wrapping_sub(1);
        b[ELEM_AT] = self.elem.code();
        b[INTERLEAVE_AT] = self.interleave as u8;
        b[SWIZZLE_AT] = self.swizzle as u8;
        b[ATOMICITY_AT] = self.atomicity as u8;
        b[FILL_AT] = self.fill as u8;
        b[ADDRESS_AT..ADDRESS_AT + 8].copy_from_slice(&self.global_address.to_le_bytes());
        for k in 0..5 {
            b[DIMS_AT + 4 * k..DIMS_AT + 4 * k + 4].copy_from_slice(&(self.dims[k] as u32).to_le_bytes());
            b[BOX_AT + 4 * k..BOX_AT + 4 * k + 4].copy_from_slice(&self.box_dims[k].to_le_bytes());
            b[ELEMENT_STRIDES_AT + 4 * k..ELEMENT_STRIDES_AT + 4 * k + 4].copy_from_slice(&self.element_strides[k].to_le_bytes());
        }
        for k in 0..4 {
            b[STRIDES_AT + 8 * k..STRIDES_AT + 8 * k + 8].copy_from_slice(&self.strides[k].to_le_bytes());
        }
        b
    }

    /// Decodes and checks 128 bytes.
    pub fn decode(b: &[u8]) -> Result<TensorMap, MapError> {
        let bad = |m: String| Err(MapError::Invalid(m));
        if b.len() != MAP_BYTES {
            return bad(format!("a tensor map is {MAP_BYTES} bytes, not {}", b.len()));
        }
        if b[..4] != MAGIC {
            return bad(format!("the 128 bytes are not a tensor map (magic word {:02x}{:02x}{:02x}{:02x}, not \"PTXM\": not made by a launch argument, tensormap.replace or a copy of one)", b[0], b[1], b[2], b[3]));
        }
        let rank = b[RANK_AT] as usize + 1;
        if !(1..=5).contains(&rank) {
            return bad(format!("tensor map of rank {rank} (1 to 5)"));
        }
        let elem = match ElemType::from_code(b[ELEM_AT]) {
            Some(e) => e,
            None if (13..=15).contains(&b[ELEM_AT]) => return Err(MapError::Unsupported(format!("tensor map of sub-byte element type {} (.b4x16, .b4x16_p64, .b6x16_p32)", b[ELEM_AT]))),
            None => return bad(format!("tensor map element type {} (Table 32 defines 0 to 15)", b[ELEM_AT])),
        };
        let interleave = match b[INTERLEAVE_AT] {
            0 => Interleave::None,
            1 => Interleave::B16,
            2 => Interleave::B32,
            v => return bad(format!("tensor map interleave layout {v} (0 to 2)")),
        };
        let swizzle = match b[SWIZZLE_AT] {
            0 => Swizzle::None,
            1 => Swizzle::B32,
            2 => Swizzle::B64,
            3 => Swizzle::B128,
            v => return bad(format!("tensor map swizzle mode {v} (0 to 3)")),
        };
        let atomicity = match b[ATOMICITY_AT] {
            0 => Atomicity::B16,
            1 => Atomicity::B32,
            2 => Atomicity::B32Flip8,
            3 => Atomicity::B64,
            v => return bad(format!("tensor map swizzle atomicity {v} (0 to 3)")),
        };
        let fill = match b[FILL_AT] {
            0 => Fill::Zero,
            1 => Fill::OobNan,
            v => return bad(format!("tensor map fill mode {v} (0 or 1)")),
        };
        let mut m = TensorMap { elem, rank, global_address: u64_at(b, ADDRESS_AT), dims: [1; 5], strides: [0; 4], box_dims: [1; 5], element_strides: [1; 5], interleave, swizzle, atomicity, fill };
        for k in 0..5 {
            m.dims[k] = u32_at(b, DIMS_AT + 4 * k) as u64;
            m.box_dims[k] = u32_at(b, BOX_AT + 4 * k);
            m.element_strides[k] = u32_at(b, ELEMENT_STRIDES_AT + 4 * k);
        }
        for k in 0..4 {
            m.strides[k] = u64_at(b, STRIDES_AT + 8 * k);
        }
        m.check()?;
        Ok(m)
    }

    /// The checks of the module doc.
    pub fn check(&self) -> Result<(), MapError> {
        let bad = |m: String| Err(MapError::Invalid(m));
        if !(1..=5).contains(&self.rank) {
            return bad(format!("tensor map of rank {} (1 to 5)", self.rank));
        }
        let es = self.elem.bytes();
        if !self.global_address.is_multiple_of(16) {
            return bad(format!("tensor map global address 0x{:x} is not a multiple of 16", self.global_address));
        }
        for k in 0..self.rank {
            if self.dims[k] == 0 || self.dims[k] > u32::MAX as u64 {
                return bad(format!("tensor map dimension {k} has {} elements (1 to 2^32 - 1)", self.dims[k]));
            }
            if !(1..=256).contains(&self.box_dims[k]) {
                return bad(format!("tensor map box dimension {k} is {} (1 to 256)", self.box_dims[k]));
            }
            if !(1..=8).contains(&self.element_strides[k]) {
                return bad(format!("tensor map traversal stride {k} is {} (1 to 8)", self.element_strides[k]));
            }
            if k >= 1 {
                let s = self.strides[k - 1];
                if s == 0 || !s.is_multiple_of(16) || s >= 1 << 40 {
                    return bad(format!("tensor map stride of dimension {k} is {s} bytes (a multiple of 16 below 2^40)"));
                }
            }
        }
        if self.interleave != Interleave::None {
            return Err(MapError::Unsupported("interleaved tensor maps (§5.5.6)".into()));
        }
        if self.element_strides[0] != 1 {
            return bad(format!("tensor map traversal stride {} in dimension 0 without interleave (§5.5.3.2: it must be 1)", self.element_strides[0]));
        }
        let row = self.box_dims[0] as usize * es;
        if !row.is_multiple_of(16) {
            return bad(format!("tensor map box row of {row} bytes ({} elements of {es}): §5.5.3.1 wants a multiple of 16 bytes", self.box_dims[0]));
        }
        if let Some(span) = self.swizzle.span() {
            if row > span {
                return bad(format!("tensor map box row of {row} bytes is wider than its {span}-byte swizzle"));
            }
        }
        // §5.5.7 Table 14: only 128B swizzle takes an atomicity other than 16B.
        if self.atomicity != Atomicity::B16 && self.swizzle != Swizzle::B128 {
            return bad(format!("tensor map swizzle atomicity {:?} with swizzle {:?} (Table 14: only 128B swizzle has other atomicities)", self.atomicity, self.swizzle));
        }
        if self.atomicity == Atomicity::B32Flip8 {
            return Err(MapError::Unsupported("tensor map swizzle atomicity 32B + 8B flip".into()));
        }
        if self.fill == Fill::OobNan && !self.elem.is_float() {
            return bad(format!("tensor map OOB-NaN fill with integer element type {}", self.elem.name()));
        }
        Ok(())
    }

    /// Elements the box holds per dimension: ⌈box / traversal stride⌉.
    pub fn box_counts(&self) -> [usize; 5] {
        let mut n = [1usize; 5];
        for (k, c) in n.iter_mut().enumerate().take(self.rank) {
            *c = (self.box_dims[k] as usize).div_ceil(self.element_strides[k] as usize);
        }
        n
    }

    /// Bytes of the box in shared memory.
    pub fn box_bytes(&self) -> usize {
        self.box_counts().iter().product::<usize>() * self.elem.bytes()
    }

    /// Byte ranges of the fields `tensormap.replace` writes: `(offset, bytes)`,
    /// `None` for an ordinal out of range.
    pub fn field(name: &str, ord: u64) -> Option<(usize, usize)> {
        let ord = ord as usize;
        Some(match name {
            ".global_address" => (ADDRESS_AT, 8),
            ".rank" => (RANK_AT, 1),
            ".elemtype" => (ELEM_AT, 1),
            ".interleave_layout" => (INTERLEAVE_AT, 1),
            ".swizzle_mode" => (SWIZZLE_AT, 1),
            ".swizzle_atomicity" => (ATOMICITY_AT, 1),
            ".fill_mode" => (FILL_AT, 1),
            ".global_dim" if ord < 5 => (DIMS_AT + 4 * ord, 4),
            ".box_dim" if ord < 5 => (BOX_AT + 4 * ord, 4),
            ".element_stride" if ord < 5 => (ELEMENT_STRIDES_AT + 4 * ord, 4),
            ".global_stride" if ord < 4 => (STRIDES_AT + 8 * ord, 8),
            _ => return None,
        })
    }
}
