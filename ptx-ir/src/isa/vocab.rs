//! The closed vocabulary of PTX modifiers: data types, rounding modes,
//! comparison and boolean operators, state spaces and vector widths.
//!
//! These are the modifiers whose *meaning* the optimizer matches on, so they
//! are Rust enums rather than table entries. Every other modifier (`.ftz`,
//! `.L1::evict_last`, `.m16n8k16`, ...) is an open [`crate::isa::Mod`] from the
//! instruction tables. This file is also compiled into the build script
//! (`build.rs`), which uses [`classify`] to give each table slot its role.

/// A PTX fundamental, packed or alternate-format data type (`.f32`, `.b64`, `.f16x2`, `.e4m3` ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScalarType {
    Pred,
    B8, B16, B32, B64, B128,
    U8, U16, U32, U64,
    S8, S16, S32, S64,
    F16, F16x2, F32, F64,
    Bf16, Bf16x2, Tf32,
    U16x2, S16x2,
    F32x2,
    E4m3, E5m2, E4m3x2, E5m2x2,
    E2m1, E2m1x2, E2m3, E2m3x2, E3m2, E3m2x2,
    Ue8m0, Ue8m0x2,
    E4m3x4, E5m2x4, E2m1x4, E2m3x4, E3m2x4,
    S4, U4, B1, S2, U2,
    S8x4, U8x4,
    // Texture/surface handle types used in declarations.
    Texref, Samplerref, Surfref,
}

impl ScalarType {
    /// The bit-size type of `bits` bits (`.b16`, `.b32` ...), if there is one.
    pub fn bit_sized(bits: u32) -> Option<ScalarType> {
        [ScalarType::B8, ScalarType::B16, ScalarType::B32, ScalarType::B64, ScalarType::B128].into_iter().find(|t| t.bits() == bits)
    }

    /// The signed or unsigned integer type of `bits` bits (8 to 64), if there is one.
    pub fn integer(bits: u32, signed: bool) -> Option<ScalarType> {
        let all = if signed { [ScalarType::S8, ScalarType::S16, ScalarType::S32, ScalarType::S64] } else { [ScalarType::U8, ScalarType::U16, ScalarType::U32, ScalarType::U64] };
        all.into_iter().find(|t| t.bits() == bits)
    }
}

/// Broad class of a [`ScalarType`], as the manual's operand-type rules use it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeClass { Pred, Bits, Unsigned, Signed, Float, Opaque }

macro_rules! scalar_types {
    ($( $v:ident = $s:literal, $bits:expr, $class:ident; )*) => {
        impl ScalarType {
            /// Every type, in declaration order.
            pub const ALL: &'static [ScalarType] = &[$(ScalarType::$v),*];
            /// The modifier text, with its dot (`.f32`).
            pub fn text(self) -> &'static str { match self { $(ScalarType::$v => $s,)* } }
            /// Size in bits (packed types: the whole register; `.pred`: 1; handles: 64).
            pub const fn bits(self) -> u32 { match self { $(ScalarType::$v => $bits,)* } }
            /// Its class under the manual's operand-type rules.
            pub const fn class(self) -> TypeClass { match self { $(ScalarType::$v => TypeClass::$class,)* } }
            /// Parses the modifier text (with its dot).
            pub fn from_text(s: &str) -> Option<ScalarType> { match s { $($s => Some(ScalarType::$v),)* _ => None } }
        }
    };
}
scalar_types! {
    Pred = ".pred", 1, Pred;
    B8 = ".b8", 8, Bits; B16 = ".b16", 16, Bits; B32 = ".b32", 32, Bits; B64 = ".b64", 64, Bits; B128 = ".b128", 128, Bits;
    U8 = ".u8", 8, Unsigned; U16 = ".u16", 16, Unsigned; U32 = ".u32", 32, Unsigned; U64 = ".u64", 64, Unsigned;
    S8 = ".s8", 8, Signed; S16 = ".s16", 16, Signed; S32 = ".s32", 32, Signed; S64 = ".s64", 64, Signed;
    F16 = ".f16", 16, Float; F16x2 = ".f16x2", 32, Float; F32 = ".f32", 32, Float; F64 = ".f64", 64, Float;
    Bf16 = ".bf16", 16, Float; Bf16x2 = ".bf16x2", 32, Float; Tf32 = ".tf32", 32, Float;
    U16x2 = ".u16x2", 32, Unsigned; S16x2 = ".s16x2", 32, Signed;
    F32x2 = ".f32x2", 64, Float;
    E4m3 = ".e4m3", 8, Float; E5m2 = ".e5m2", 8, Float; E4m3x2 = ".e4m3x2", 16, Float; E5m2x2 = ".e5m2x2", 16, Float;
    E2m1 = ".e2m1", 4, Float; E2m1x2 = ".e2m1x2", 8, Float; E2m3 = ".e2m3", 6, Float; E2m3x2 = ".e2m3x2", 16, Float;
    E3m2 = ".e3m2", 6, Float; E3m2x2 = ".e3m2x2", 16, Float;
    Ue8m0 = ".ue8m0", 8, Float; Ue8m0x2 = ".ue8m0x2", 16, Float;
    E4m3x4 = ".e4m3x4", 32, Float; E5m2x4 = ".e5m2x4", 32, Float; E2m1x4 = ".e2m1x4", 16, Float;
    E2m3x4 = ".e2m3x4", 32, Float; E3m2x4 = ".e3m2x4", 32, Float;
    S4 = ".s4", 4, Signed; U4 = ".u4", 4, Unsigned; B1 = ".b1", 1, Bits; S2 = ".s2", 2, Signed; U2 = ".u2", 2, Unsigned;
    S8x4 = ".s8x4", 32, Signed; U8x4 = ".u8x4", 32, Unsigned;
    Texref = ".texref", 64, Opaque; Samplerref = ".samplerref", 64, Opaque; Surfref = ".surfref", 64, Opaque;
}

/// Floating-point and integer rounding modifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rounding { Rn, Rz, Rm, Rp, Rna, Rs, Rni, Rzi, Rmi, Rpi }

impl Rounding {
    pub const ALL: &'static [Rounding] = &[Rounding::Rn, Rounding::Rz, Rounding::Rm, Rounding::Rp, Rounding::Rna, Rounding::Rs, Rounding::Rni, Rounding::Rzi, Rounding::Rmi, Rounding::Rpi];
    pub fn text(self) -> &'static str {
        match self {
            Rounding::Rn => ".rn", Rounding::Rz => ".rz", Rounding::Rm => ".rm", Rounding::Rp => ".rp",
            Rounding::Rna => ".rna", Rounding::Rs => ".rs", Rounding::Rni => ".rni", Rounding::Rzi => ".rzi",
            Rounding::Rmi => ".rmi", Rounding::Rpi => ".rpi",
        }
    }
    pub fn from_text(s: &str) -> Option<Rounding> { Rounding::ALL.iter().copied().find(|r| r.text() == s) }
    /// True for the integer rounding modes (`.rni .rzi .rmi .rpi`) used when converting to integers.
    pub fn is_integer(self) -> bool { matches!(self, Rounding::Rni | Rounding::Rzi | Rounding::Rmi | Rounding::Rpi) }
}

/// Comparison operators of `setp`, `set`, `slct`'s relatives and the video `vset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp { Eq, Ne, Lt, Le, Gt, Ge, Lo, Ls, Hi, Hs, Equ, Neu, Ltu, Leu, Gtu, Geu, Num, Nan }

impl CmpOp {
    pub const ALL: &'static [CmpOp] = &[CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge, CmpOp::Lo, CmpOp::Ls, CmpOp::Hi, CmpOp::Hs, CmpOp::Equ, CmpOp::Neu, CmpOp::Ltu, CmpOp::Leu, CmpOp::Gtu, CmpOp::Geu, CmpOp::Num, CmpOp::Nan];
    pub fn text(self) -> &'static str {
        match self {
            CmpOp::Eq => ".eq", CmpOp::Ne => ".ne", CmpOp::Lt => ".lt", CmpOp::Le => ".le", CmpOp::Gt => ".gt", CmpOp::Ge => ".ge",
            CmpOp::Lo => ".lo", CmpOp::Ls => ".ls", CmpOp::Hi => ".hi", CmpOp::Hs => ".hs",
            CmpOp::Equ => ".equ", CmpOp::Neu => ".neu", CmpOp::Ltu => ".ltu", CmpOp::Leu => ".leu", CmpOp::Gtu => ".gtu", CmpOp::Geu => ".geu",
            CmpOp::Num => ".num", CmpOp::Nan => ".nan",
        }
    }
    pub fn from_text(s: &str) -> Option<CmpOp> { CmpOp::ALL.iter().copied().find(|r| r.text() == s) }
}

/// Predicate-combining operators (`setp.lt.and.s32`, `bar.red.or.pred`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoolOp { And, Or, Xor }

impl BoolOp {
    pub fn text(self) -> &'static str { match self { BoolOp::And => ".and", BoolOp::Or => ".or", BoolOp::Xor => ".xor" } }
    pub fn from_text(s: &str) -> Option<BoolOp> {
        match s { ".and" => Some(BoolOp::And), ".or" => Some(BoolOp::Or), ".xor" => Some(BoolOp::Xor), _ => None }
    }
    /// `a op b`.
    pub fn apply(self, a: bool, b: bool) -> bool { match self { BoolOp::And => a & b, BoolOp::Or => a | b, BoolOp::Xor => a ^ b } }
}

/// A state space, with the sub-windows PTX names (`.shared::cluster`, `.param::entry`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StateSpace {
    Reg, Sreg, Const, Global, Local, Param, ParamEntry, ParamFunc,
    Shared, SharedCta, SharedCluster, Tex, Generic,
}

impl StateSpace {
    pub const ALL: &'static [StateSpace] = &[StateSpace::Reg, StateSpace::Sreg, StateSpace::Const, StateSpace::Global, StateSpace::Local, StateSpace::Param, StateSpace::ParamEntry, StateSpace::ParamFunc, StateSpace::Shared, StateSpace::SharedCta, StateSpace::SharedCluster, StateSpace::Tex];
    pub fn text(self) -> &'static str {
        match self {
            StateSpace::Reg => ".reg", StateSpace::Sreg => ".sreg", StateSpace::Const => ".const", StateSpace::Global => ".global",
            StateSpace::Local => ".local", StateSpace::Param => ".param", StateSpace::ParamEntry => ".param::entry",
            StateSpace::ParamFunc => ".param::func", StateSpace::Shared => ".shared", StateSpace::SharedCta => ".shared::cta",
            StateSpace::SharedCluster => ".shared::cluster", StateSpace::Tex => ".tex", StateSpace::Generic => "",
        }
    }
    pub fn from_text(s: &str) -> Option<StateSpace> { StateSpace::ALL.iter().copied().find(|r| r.text() == s) }
    /// The space with its sub-window dropped (`.shared::cta` -> `.shared`).
    pub fn base(self) -> StateSpace {
        match self {
            StateSpace::ParamEntry | StateSpace::ParamFunc => StateSpace::Param,
            StateSpace::SharedCta | StateSpace::SharedCluster => StateSpace::Shared,
            s => s,
        }
    }
}

/// What a modifier token means on its own, before the slot it fills says more.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ModKind {
    Type(ScalarType),
    Rounding(Rounding),
    /// A comparison. `.lo .ls .hi .hs` are comparisons only in comparison slots.
    Cmp(CmpOp),
    Bool(BoolOp),
    Space(StateSpace),
    /// `.v2`, `.v4`, `.v8`.
    Vector(u8),
    Other,
}

/// Classifies a modifier token by its text alone.
pub fn classify(text: &str) -> ModKind {
    if let Some(t) = ScalarType::from_text(text) { return ModKind::Type(t); }
    if let Some(r) = Rounding::from_text(text) { return ModKind::Rounding(r); }
    if let Some(c) = CmpOp::from_text(text) { return ModKind::Cmp(c); }
    if let Some(b) = BoolOp::from_text(text) { return ModKind::Bool(b); }
    if let Some(s) = StateSpace::from_text(text) { return ModKind::Space(s); }
    match text { ".v2" => ModKind::Vector(2), ".v4" => ModKind::Vector(4), ".v8" => ModKind::Vector(8), _ => ModKind::Other }
}

/// The role a modifier slot plays in an instruction form; accessors such as
/// `Instruction::rounding()` look for the slot with that role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SlotRole { Type, Rounding, Cmp, Bool, Space, Vector, Other }
