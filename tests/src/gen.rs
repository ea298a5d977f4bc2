//! Random valid PTX kernels, deterministic by seed, for differential testing
//! and fuzzing.
//!
//! [`kernel`] (from a seed) and [`kernel_from_bytes`] (from a fuzzer's input,
//! read as a stream of choices) write a module with one `.entry`
//! (`gen_kernel`) and sometimes a few `.func`s it calls. The kernels:
//!
//! - parse, verify without errors, and assemble with ptxas (target `sm_90`,
//!   PTX 8.3);
//! - use only instructions the evaluator implements: the catalog of
//!   instruction templates ([`catalog`]) is written by hand over every family
//!   of `ptx_ir::eval` (integer, extended precision, logic, shifts, `prmt`,
//!   video, compare/select, float `f32`/`f64`/`f16`/`bf16` and packed forms
//!   with their rounding, `.ftz`, `.sat`, approximations, and `cvt` between all
//!   integer and float types), then filtered once per process: every template
//!   must parse, verify and evaluate (an eval probe on sample values) or it is
//!   dropped;
//! - contain straight-line code, if/else on data-dependent predicates,
//!   bounded counter loops (constant or data-dependent trip counts), guarded
//!   instructions (`@p`, `@!p`), carry chains (`add.cc`/`addc`), loads from
//!   input buffers, local memory, atomics on the thread's own slots,
//!   reductions (`red`) on a shared accumulator, shared-memory exchanges
//!   between barriers, asynchronous copies into shared memory (`cp.async`
//!   with commit groups and waits, an option), warp collectives (`shfl.sync`, `vote.sync`,
//!   `redux.sync`, `match.sync`, `elect.sync`, `activemask`) and calls to
//!   generated `.func`s; with [`GenOptions::mma`], warp-level matrix tiles
//!   (`mma.sync` on fragments loaded from another lane's input words,
//!   `movmatrix`, `ldmatrix` on rows the lanes stored to shared memory),
//!   which need whole warps ([`KernelSpec::full_warps`]);
//! - read every register only after writing it, and are free of data races:
//!   each thread writes only its own slots of the global buffers (indexed by
//!   its global thread id), shared memory is written to the thread's own slot
//!   and read from another's only between two barriers, barriers and warp
//!   collectives sit only where control flow is uniform, and the only
//!   accesses several threads make to one global location are commutative
//!   integer reductions;
//! - end by storing every value of the kernel's top scope to the output
//!   buffers, at the thread's global id, so what they compute is observable.
//!
//! The kernel's parameters are described by a [`KernelSpec`] (buffers with
//! element types and sizes per thread, scalars), which
//! [`crate::differential`] uses to build launches.

use ptx_ir::isa::{ScalarType as T, TypeClass};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::OnceLock;

// ================================================================================================
// Choices
// ================================================================================================

/// Where the generator's decisions come from: a seeded PRNG, or the bytes of
/// a fuzzer's input (each decision reads the next one to eight bytes; when
/// the bytes run out every decision is 0, which ends blocks early and picks
/// the first alternative).
#[derive(Clone, Debug)]
pub struct Choices {
    state: u64,
    bytes: Option<(Vec<u8>, usize)>,
}

impl Choices {
    pub fn seeded(seed: u64) -> Choices {
        Choices { state: seed ^ 0x5851_F42D_4C95_7F2D, bytes: None }
    }

    pub fn from_bytes(data: &[u8]) -> Choices {
        Choices { state: 0, bytes: Some((data.to_vec(), 0)) }
    }

    #[inline]
    fn splitmix(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n <= 1`).
    pub fn below(&mut self, n: u64) -> u64 {
        if n <= 1 {
            return 0;
        }
        match &mut self.bytes {
            None => ((self.splitmix() as u128 * n as u128) >> 64) as u64,
            Some((data, pos)) => {
                let need = if n <= 1 << 8 {
                    1
                } else if n <= 1 << 16 {
                    2
                } else if n <= 1 << 32 {
                    4
                } else {
                    8
                };
                if *pos >= data.len() {
                    return 0;
                }
                let mut v = 0u64;
                for k in 0..need {
                    if let Some(b) = data.get(*pos + k) {
                        v |= (*b as u64) << (8 * k);
                    }
                }
                *pos += need;
                v % n
            }
        }
    }

    /// A byte stream that has run out (a seeded stream never does).
    pub fn exhausted(&self) -> bool {
        matches!(&self.bytes, Some((d, pos)) if *pos >= d.len())
    }

    /// `n` random bytes (for buffers): eight per draw.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(n + 8);
        while out.len() < n {
            out.extend_from_slice(&self.bits().to_le_bytes());
        }
        out.truncate(n);
        out
    }

    /// Raw bits (for immediates and data).
    #[inline]
    pub fn bits(&mut self) -> u64 {
        match self.bytes {
            None => self.splitmix(),
            Some(_) => self.below(u64::MAX),
        }
    }

    /// True with probability `num/den`; false once the bytes have run out.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) >= den - num
    }

    /// An index chosen by weight; 0 once the bytes have run out.
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|&w| w as u64).sum();
        let mut r = self.below(total.max(1));
        for (k, &w) in weights.iter().enumerate() {
            if r < w as u64 {
                return k;
            }
            r -= w as u64;
        }
        0
    }

    pub fn pick<'a, X>(&mut self, v: &'a [X]) -> &'a X {
        &v[self.below(v.len() as u64) as usize]
    }
}

/// A mutation of PTX text for parser fuzzing: flips, inserts or deletes
/// bytes, drops, duplicates or swaps tokens and lines, truncates.
pub fn mutate(b: &[u8], c: &mut Choices) -> Vec<u8> {
    let mut v = b.to_vec();
    if v.is_empty() {
        return vec![c.below(256) as u8];
    }
    let n = v.len() as u64;
    let at = c.below(n) as usize;
    // The extent of the token (run of non-space bytes) at `k`.
    let token = |v: &[u8], k: usize| -> std::ops::Range<usize> {
        let (mut s, mut e) = (k, k);
        while s > 0 && !v[s - 1].is_ascii_whitespace() {
            s -= 1;
        }
        while e < v.len() && !v[e].is_ascii_whitespace() {
            e += 1;
        }
        s..e.max(s + 1).min(v.len())
    };
    let line = |v: &[u8], k: usize| -> std::ops::Range<usize> {
        let s = v[..k].iter().rposition(|&x| x == b'\n').map_or(0, |p| p + 1);
        let e = v[k..].iter().position(|&x| x == b'\n').map_or(v.len(), |p| k + p + 1);
        s..e
    };
    match c.below(9) {
        0 => v[at] ^= 1 << c.below(8),
        1 => v[at] = c.below(256) as u8,
        2 => v.insert(at, *c.pick(b"{}()[];,.%|@!-+0x\n\"/*")),
        3 => {
            let r = token(&v, at);
            v.drain(r);
        }
        4 => {
            let r = token(&v, at);
            let t = v[r.clone()].to_vec();
            let to = c.below(n) as usize;
            v.splice(to..to, t.into_iter().chain(std::iter::once(b' ')));
        }
        5 => {
            let r = line(&v, at);
            v.drain(r);
        }
        6 => {
            let r = line(&v, at);
            let l = v[r.clone()].to_vec();
            v.splice(r.start..r.start, l);
        }
        7 => {
            let (r1, r2) = (line(&v, at), line(&v, c.below(n) as usize));
            if r1.end <= r2.start {
                let (a, b) = (v[r1.clone()].to_vec(), v[r2.clone()].to_vec());
                v.splice(r2, a);
                v.splice(r1, b);
            }
        }
        _ => v.truncate(at),
    }
    v
}

// ================================================================================================
// Options and the kernel description
// ================================================================================================

/// What the generator may use.
#[derive(Clone, Debug)]
pub struct GenOptions {
    /// Statements in the kernel body, nested ones included (roughly).
    pub stmts: usize,
    /// Nesting depth of if/else and loops.
    pub max_depth: u32,
    /// Most iterations of one loop.
    pub max_trips: u32,
    pub branches: bool,
    pub loops: bool,
    /// Guarded (`@p`) instructions.
    pub guards: bool,
    /// Shared memory exchanges with barriers, `bar.red`.
    pub shared: bool,
    /// Asynchronous copies (`cp.async`) from the input buffer into the
    /// thread's shared slot, in commit groups, read after the waits that
    /// complete them (needs `shared`).
    pub async_copy: bool,
    /// Warp collectives.
    pub warp: bool,
    /// Calls to generated `.func`s.
    pub calls: bool,
    /// Loads, local memory, atomics, reductions.
    pub memory: bool,
    /// Floating-point instructions and values.
    pub floats: bool,
    /// Approximate instructions (`.approx`, `div.full`).
    pub approx: bool,
    /// Video instructions (`vadd`, `vadd2`, `vset4` ...).
    pub video: bool,
    /// Warp-level matrix tiles (`mma.sync`, `movmatrix`, `ldmatrix` with
    /// `shared`): fragments loaded from another lane's input words, the
    /// results kept as values. Such kernels need whole warps
    /// ([`KernelSpec::full_warps`]). Off by default.
    pub mma: bool,
    /// The largest block (threads) a launch may use: sizes the shared array.
    pub max_block_threads: u32,
}

impl Default for GenOptions {
    fn default() -> GenOptions {
        GenOptions {
            stmts: 40,
            max_depth: 3,
            max_trips: 5,
            branches: true,
            loops: true,
            guards: true,
            shared: true,
            async_copy: false,
            warp: true,
            calls: true,
            memory: true,
            floats: true,
            approx: true,
            video: true,
            mma: false,
            max_block_threads: 128,
        }
    }
}

impl GenOptions {
    /// Small kernels (for fuzzing and the many-seed tests).
    pub fn small() -> GenOptions {
        GenOptions { stmts: 24, max_depth: 2, max_trips: 4, ..GenOptions::default() }
    }

    /// [`GenOptions::small`] with matrix tiles.
    pub fn with_mma() -> GenOptions {
        GenOptions { mma: true, ..GenOptions::small() }
    }

    /// Straight-line integer code only.
    pub fn straight_line() -> GenOptions {
        GenOptions { branches: false, loops: false, guards: false, shared: false, warp: false, calls: false, memory: false, ..GenOptions::default() }
    }
}

/// How long a buffer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufLen {
    /// This many elements per thread of the launch (grid × block).
    PerThread(usize),
    /// This many elements.
    Fixed(usize),
}

/// One kernel parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamSpec {
    /// A pointer to a fresh global buffer with random contents (integers:
    /// random bits; floats: mostly small values, some special ones).
    Buffer { name: String, elem: T, len: BufLen, output: bool },
    /// A scalar, drawn at random for each run.
    Scalar { name: String, ty: T },
}

/// How to launch a kernel: what [`crate::differential`] needs.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelSpec {
    pub name: String,
    pub params: Vec<ParamSpec>,
    /// The largest block (threads) the kernel supports.
    pub max_block_threads: u32,
    /// The kernel runs warp-wide `.aligned` matrix instructions: launches
    /// must have whole warps (blocks of a multiple of 32 threads).
    pub full_warps: bool,
}

/// A generated module.
#[derive(Clone, Debug)]
pub struct GeneratedKernel {
    pub text: String,
    pub spec: KernelSpec,
}

/// The target and version of generated modules.
pub const TARGET: &str = "sm_90";
pub const VERSION: &str = "8.3";
/// The kernel's name.
pub const KERNEL: &str = "gen_kernel";

/// A kernel from a seed.
pub fn kernel(seed: u64, opts: &GenOptions) -> GeneratedKernel {
    generate(Choices::seeded(seed), opts)
}

/// A kernel from a fuzzer's input, read as a stream of choices.
pub fn kernel_from_bytes(data: &[u8], opts: &GenOptions) -> GeneratedKernel {
    generate(Choices::from_bytes(data), opts)
}

// ================================================================================================
// Types, registers
// ================================================================================================

/// What a register holds, as the generator sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Pred,
    I16,
    I32,
    I64,
    F16,
    Bf16,
    F32,
    F64,
}

impl Kind {
    const ALL: [Kind; 8] = [Kind::Pred, Kind::I16, Kind::I32, Kind::I64, Kind::F16, Kind::Bf16, Kind::F32, Kind::F64];

    fn is_float(self) -> bool {
        matches!(self, Kind::F16 | Kind::Bf16 | Kind::F32 | Kind::F64)
    }
}

fn is_int(t: T) -> bool {
    matches!(t, T::U8 | T::U16 | T::U32 | T::U64 | T::S8 | T::S16 | T::S32 | T::S64 | T::B8 | T::B16 | T::B32 | T::B64)
}

fn is_8bit(t: T) -> bool {
    matches!(t, T::U8 | T::S8 | T::B8)
}

/// The kind of value an operand of instruction type `t` holds.
fn kind_of(t: T) -> Kind {
    match t {
        T::Pred => Kind::Pred,
        T::B8 | T::U8 | T::S8 | T::B16 | T::U16 | T::S16 | T::E4m3x2 | T::E5m2x2 => Kind::I16,
        T::B32 | T::U32 | T::S32 | T::U16x2 | T::S16x2 | T::F16x2 | T::Bf16x2 => Kind::I32,
        T::B64 | T::U64 | T::S64 => Kind::I64,
        T::F16 => Kind::F16,
        T::Bf16 => Kind::Bf16,
        T::F32 => Kind::F32,
        T::F64 => Kind::F64,
        _ => Kind::I32,
    }
}

/// Whether a register declared `decl` may be an operand of instruction type
/// `ty` (the manual's §9.4 rules; `.b8`/`.u8`/`.s8` only in `cvt`, with
/// the relaxed rule that the register may be wider).
pub fn reg_ok(decl: T, ty: T) -> bool {
    if decl == ty {
        return true;
    }
    if decl == T::Pred || ty == T::Pred {
        return false;
    }
    if is_8bit(ty) {
        return is_int(decl) && (16..=32).contains(&decl.bits());
    }
    if decl.bits() != ty.bits() {
        return false;
    }
    if decl.class() == TypeClass::Bits || ty.class() == TypeClass::Bits {
        return true;
    }
    is_int(decl) && is_int(ty)
}

/// Register declaration types for a fresh destination of instruction type `ty`.
fn fresh_decls(ty: T) -> &'static [T] {
    match ty {
        T::Pred => &[T::Pred],
        T::B16 | T::U16 | T::S16 => &[T::U16, T::S16, T::B16],
        T::U8 | T::S8 | T::B8 => &[T::U16, T::S16, T::U32, T::S32],
        T::B32 | T::U32 | T::S32 => &[T::U32, T::S32, T::B32],
        T::B64 | T::U64 | T::S64 => &[T::U64, T::S64, T::B64],
        T::F16 => &[T::F16, T::F16, T::B16],
        T::Bf16 | T::E4m3x2 | T::E5m2x2 => &[T::B16],
        T::F32 => &[T::F32, T::F32, T::F32, T::B32],
        T::F64 => &[T::F64, T::F64, T::B64],
        _ => &[T::B32],
    }
}

/// The kind a fresh register of declaration `decl` written as instruction type `ty` holds.
fn dest_kind(ty: T, decl: T) -> Kind {
    if is_int(ty) && decl.bits() != ty.bits() {
        kind_of(decl)
    } else {
        kind_of(ty)
    }
}

fn reg_prefix(decl: T) -> &'static str {
    match decl {
        T::Pred => "%p",
        T::B16 => "%hb",
        T::U16 => "%hu",
        T::S16 => "%hs",
        T::F16 => "%hf",
        T::B32 => "%rb",
        T::U32 => "%ru",
        T::S32 => "%rs",
        T::F32 => "%f",
        T::B64 => "%rdb",
        T::U64 => "%rdu",
        T::S64 => "%rds",
        T::F64 => "%fd",
        _ => "%rx",
    }
}

/// Register names of one function: `%ru7` is the 8th `.u32`.
#[derive(Default, Clone)]
struct RegFile {
    counts: BTreeMap<T, u32>,
}

impl RegFile {
    fn fresh(&mut self, decl: T) -> String {
        let n = self.counts.entry(decl).or_insert(0);
        *n += 1;
        format!("{}{}", reg_prefix(decl), *n - 1)
    }

    fn declarations(&self) -> String {
        let mut s = String::new();
        for (t, n) in &self.counts {
            let _ = writeln!(s, "\t.reg {} {}<{}>;", t.text(), reg_prefix(*t), n);
        }
        s
    }
}

// ================================================================================================
// The catalog of instruction templates
// ================================================================================================

/// Families, for weights and options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    IntArith,
    IntBits,
    Logic,
    Shift,
    Compare,
    Select,
    Move,
    F32,
    F64,
    Half,
    Approx,
    CvtInt,
    CvtFloat,
    Video,
}

const CLASSES: [Class; 14] = [
    Class::IntArith,
    Class::IntBits,
    Class::Logic,
    Class::Shift,
    Class::Compare,
    Class::Select,
    Class::Move,
    Class::F32,
    Class::F64,
    Class::Half,
    Class::Approx,
    Class::CvtInt,
    Class::CvtFloat,
    Class::Video,
];

impl Class {
    fn weight(self) -> u32 {
        match self {
            Class::IntArith => 16,
            Class::IntBits => 8,
            Class::Logic => 9,
            Class::Shift => 5,
            Class::Compare => 9,
            Class::Select => 5,
            Class::Move => 3,
            Class::F32 => 13,
            Class::F64 => 6,
            Class::Half => 6,
            Class::Approx => 3,
            Class::CvtInt => 6,
            Class::CvtFloat => 9,
            Class::Video => 2,
        }
    }

    fn allowed(self, o: &GenOptions) -> bool {
        match self {
            Class::F32 | Class::F64 | Class::Half | Class::CvtFloat => o.floats,
            Class::Approx => o.floats && o.approx,
            Class::Video => o.video,
            _ => true,
        }
    }
}

/// How a source operand is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// A register, or (not as the first source) sometimes an immediate.
    Val,
    /// A register.
    Reg,
    /// A predicate register, maybe written `!p`.
    NotPred,
    /// An immediate in `0..n`.
    ImmBelow(u32),
    /// A divisor: a register made positive and nonzero first, or such an immediate.
    Divisor,
    /// A register masked to `0..=m` first, or such an immediate.
    Masked(u32),
    /// A register maybe written `-a` (`vmad`).
    MaybeNeg,
}

/// One source operand of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Src {
    pub ty: T,
    pub how: How,
    /// A selector written after the register (`.b1`, `.h10` of the video instructions).
    pub sel: &'static str,
}

/// One instruction template: a head and typed operands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tmpl {
    pub class: Class,
    pub head: String,
    /// Destination types (two for `p|q` and `d|p`).
    pub dsts: Vec<T>,
    /// The two destinations are a pair `a|b`.
    pub pair: bool,
    /// A selector after the destination (`d.b0`).
    pub dsel: &'static str,
    pub srcs: Vec<Src>,
}

fn v(ty: T) -> Src {
    Src { ty, how: How::Val, sel: "" }
}
fn r(ty: T) -> Src {
    Src { ty, how: How::Reg, sel: "" }
}
fn np() -> Src {
    Src { ty: T::Pred, how: How::NotPred, sel: "" }
}
fn imm(ty: T, n: u32) -> Src {
    Src { ty, how: How::ImmBelow(n), sel: "" }
}
fn masked(ty: T, m: u32) -> Src {
    Src { ty, how: How::Masked(m), sel: "" }
}
fn sel(mut s: Src, sel: &'static str) -> Src {
    s.sel = sel;
    s
}

struct Builder {
    out: Vec<Tmpl>,
}

impl Builder {
    fn add(&mut self, class: Class, head: impl Into<String>, dsts: &[T], srcs: Vec<Src>) {
        self.out.push(Tmpl { class, head: head.into(), dsts: dsts.to_vec(), pair: false, dsel: "", srcs });
    }
    fn pair(&mut self, class: Class, head: impl Into<String>, dsts: &[T], srcs: Vec<Src>) {
        self.out.push(Tmpl { class, head: head.into(), dsts: dsts.to_vec(), pair: true, dsel: "", srcs });
    }
}

fn opt(s: &str, on: bool) -> &str {
    if on {
        s
    } else {
        ""
    }
}

const INT_TYPES: [T; 6] = [T::U16, T::U32, T::U64, T::S16, T::S32, T::S64];
const BIT_TYPES: [T; 3] = [T::B16, T::B32, T::B64];
const FLOAT_CMP: [&str; 14] = [".eq", ".ne", ".lt", ".le", ".gt", ".ge", ".equ", ".neu", ".ltu", ".leu", ".gtu", ".geu", ".num", ".nan"];
const SIGNED_CMP: [&str; 6] = [".eq", ".ne", ".lt", ".le", ".gt", ".ge"];
const UNSIGNED_CMP: [&str; 10] = [".eq", ".ne", ".lt", ".le", ".gt", ".ge", ".lo", ".ls", ".hi", ".hs"];
const BOOL_OPS: [&str; 3] = [".and", ".or", ".xor"];
const RND: [&str; 4] = [".rn", ".rz", ".rm", ".rp"];
const IRND: [&str; 4] = [".rni", ".rzi", ".rmi", ".rpi"];
const CVT_TYPES: [T; 12] = [T::U8, T::U16, T::U32, T::U64, T::S8, T::S16, T::S32, T::S64, T::Bf16, T::F16, T::F32, T::F64];

fn wide(t: T) -> T {
    match t {
        T::U16 => T::U32,
        T::S16 => T::S32,
        T::U32 => T::U64,
        T::S32 => T::S64,
        _ => t,
    }
}

/// Every value of integer type `a` is a value of integer type `d`.
fn int_range_within(a: T, d: T) -> bool {
    let range = |t: T| -> (i128, i128) {
        let n = t.bits();
        if t.class() == TypeClass::Signed {
            (-(1i128 << (n - 1)), (1i128 << (n - 1)) - 1)
        } else {
            (0, (1i128 << n) - 1)
        }
    };
    let ((alo, ahi), (dlo, dhi)) = (range(a), range(d));
    dlo <= alo && ahi <= dhi
}

fn cmp_ops(t: T) -> &'static [&'static str] {
    match t.class() {
        TypeClass::Float => &FLOAT_CMP,
        TypeClass::Signed => &SIGNED_CMP,
        TypeClass::Unsigned => &UNSIGNED_CMP,
        _ => &[".eq", ".ne"],
    }
}

fn build_catalog() -> Vec<Tmpl> {
    let mut b = Builder { out: Vec::new() };
    use Class::*;
    // ---- integer arithmetic (§9.7.1) --------------------------------------------------------
    for t in INT_TYPES {
        let n = t.text();
        for op in ["add", "sub"] {
            b.add(IntArith, format!("{op}{n}"), &[t], vec![v(t), v(t)]);
        }
        for m in [".lo", ".hi"] {
            b.add(IntArith, format!("mul{m}{n}"), &[t], vec![v(t), v(t)]);
            b.add(IntArith, format!("mad{m}{n}"), &[t], vec![v(t), v(t), v(t)]);
        }
        if t.bits() < 64 {
            b.add(IntArith, format!("mul.wide{n}"), &[wide(t)], vec![v(t), v(t)]);
            b.add(IntArith, format!("mad.wide{n}"), &[wide(t)], vec![v(t), v(t), v(wide(t))]);
        }
        b.add(IntArith, format!("sad{n}"), &[t], vec![v(t), v(t), v(t)]);
        for op in ["div", "rem"] {
            b.add(IntArith, format!("{op}{n}"), &[t], vec![v(t), Src { ty: t, how: How::Divisor, sel: "" }]);
        }
        for op in ["min", "max"] {
            b.add(IntArith, format!("{op}{n}"), &[t], vec![v(t), v(t)]);
        }
        if t.class() == TypeClass::Signed {
            b.add(IntArith, format!("abs{n}"), &[t], vec![r(t)]);
            b.add(IntArith, format!("neg{n}"), &[t], vec![r(t)]);
        }
    }
    for op in ["add", "sub"] {
        b.add(IntArith, format!("{op}.sat.s32"), &[T::S32], vec![v(T::S32), v(T::S32)]);
    }
    for t in [T::U16x2, T::S16x2] {
        b.add(IntArith, format!("add{}", t.text()), &[t], vec![r(t), r(t)]);
        for op in ["min", "max"] {
            b.add(IntArith, format!("{op}{}", t.text()), &[t], vec![r(t), r(t)]);
        }
    }
    for op in ["min", "max"] {
        b.add(IntArith, format!("{op}.relu.s32"), &[T::S32], vec![v(T::S32), v(T::S32)]);
        b.add(IntArith, format!("{op}.relu.s16x2"), &[T::S16x2], vec![r(T::S16x2), r(T::S16x2)]);
    }
    b.add(IntArith, "mad.hi.sat.s32", &[T::S32], vec![v(T::S32), v(T::S32), v(T::S32)]);
    for t in [T::U32, T::S32] {
        for m in [".lo", ".hi"] {
            b.add(IntArith, format!("mul24{m}{}", t.text()), &[t], vec![v(t), v(t)]);
            b.add(IntArith, format!("mad24{m}{}", t.text()), &[t], vec![v(t), v(t), v(t)]);
        }
    }
    b.add(IntArith, "mad24.hi.sat.s32", &[T::S32], vec![v(T::S32), v(T::S32), v(T::S32)]);
    for a in [T::U32, T::S32] {
        for bt in [T::U32, T::S32] {
            let d = if a == T::U32 && bt == T::U32 { T::U32 } else { T::S32 };
            b.add(IntArith, format!("dp4a{}{}", a.text(), bt.text()), &[d], vec![v(a), v(bt), v(d)]);
            for m in [".lo", ".hi"] {
                b.add(IntArith, format!("dp2a{m}{}{}", a.text(), bt.text()), &[d], vec![v(a), v(bt), v(d)]);
            }
        }
    }
    // ---- bit manipulation ---------------------------------------------------------------
    for t in [T::B32, T::B64] {
        let n = t.text();
        b.add(IntBits, format!("popc{n}"), &[T::U32], vec![r(t)]);
        b.add(IntBits, format!("clz{n}"), &[T::U32], vec![r(t)]);
        b.add(IntBits, format!("brev{n}"), &[t], vec![r(t)]);
        b.add(IntBits, format!("bfi{n}"), &[t], vec![v(t), v(t), masked(T::U32, if t == T::B64 { 255 } else { 63 }), masked(T::U32, if t == T::B64 { 255 } else { 63 })]);
    }
    for t in [T::U32, T::U64, T::S32, T::S64] {
        let n = t.text();
        for s in ["", ".shiftamt"] {
            b.add(IntBits, format!("bfind{s}{n}"), &[T::U32], vec![r(t)]);
        }
        let m = if t.bits() == 64 { 255 } else { 63 };
        b.add(IntBits, format!("bfe{n}"), &[t], vec![r(t), masked(T::U32, m), masked(T::U32, m)]);
    }
    b.add(IntBits, "fns.b32", &[T::B32], vec![r(T::B32), masked(T::B32, 31), v(T::B32)]);
    for m in [".clamp", ".wrap"] {
        for t in [T::U32, T::S32] {
            b.add(IntBits, format!("szext{m}{}", t.text()), &[t], vec![r(t), v(T::U32)]);
        }
        b.add(IntBits, format!("bmsk{m}.b32"), &[T::B32], vec![v(T::U32), v(T::U32)]);
    }
    // ---- logic and shifts (§9.7.8) --------------------------------------------------------
    for t in [T::Pred, T::B16, T::B32, T::B64] {
        let n = t.text();
        for op in ["and", "or", "xor"] {
            let s = if t == T::Pred { r(t) } else { v(t) };
            b.add(Logic, format!("{op}{n}"), &[t], vec![r(t), s]);
        }
        b.add(Logic, format!("not{n}"), &[t], vec![r(t)]);
        if t != T::Pred {
            b.add(Logic, format!("cnot{n}"), &[t], vec![r(t)]);
        }
    }
    b.add(Logic, "lop3.b32", &[T::B32], vec![r(T::B32), v(T::B32), v(T::B32), imm(T::B32, 256)]);
    for op in [".or", ".and"] {
        b.pair(Logic, format!("lop3{op}.b32"), &[T::B32, T::Pred], vec![r(T::B32), v(T::B32), v(T::B32), imm(T::B32, 256), r(T::Pred)]);
    }
    for dir in [".l", ".r"] {
        for m in [".clamp", ".wrap"] {
            b.add(Shift, format!("shf{dir}{m}.b32"), &[T::B32], vec![r(T::B32), v(T::B32), v(T::U32)]);
        }
    }
    for t in BIT_TYPES {
        b.add(Shift, format!("shl{}", t.text()), &[t], vec![r(t), masked(T::U32, 80)]);
    }
    for t in [T::B16, T::B32, T::B64, T::U16, T::U32, T::U64, T::S16, T::S32, T::S64] {
        b.add(Shift, format!("shr{}", t.text()), &[t], vec![r(t), masked(T::U32, 80)]);
    }
    for m in ["", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"] {
        b.add(Shift, format!("prmt.b32{m}"), &[T::B32], vec![r(T::B32), v(T::B32), v(T::B32)]);
    }
    // ---- moves ----------------------------------------------------------------------------
    for t in [T::Pred, T::B16, T::U16, T::S16, T::B32, T::U32, T::S32, T::B64, T::U64, T::S64, T::F32, T::F64] {
        if t.class() == TypeClass::Float {
            b.add(F32, format!("mov{}", t.text()), &[t], vec![v(t)]);
        } else {
            b.add(Move, format!("mov{}", t.text()), &[t], vec![v(t)]);
        }
    }
    // ---- compare and select (§9.7.7) --------------------------------------------------------
    let cmp_types = [T::B16, T::B32, T::B64, T::U16, T::U32, T::U64, T::S16, T::S32, T::S64, T::F32, T::F64];
    for t in cmp_types {
        let class = if t.class() == TypeClass::Float { if t == T::F32 { F32 } else { F64 } } else { Compare };
        for c in cmp_ops(t) {
            for ftz in ["", ".ftz"] {
                if ftz == ".ftz" && t != T::F32 {
                    continue;
                }
                b.add(class, format!("setp{c}{ftz}{}", t.text()), &[T::Pred], vec![r(t), v(t)]);
                b.pair(class, format!("setp{c}{ftz}{}", t.text()), &[T::Pred, T::Pred], vec![r(t), v(t)]);
                for bo in BOOL_OPS {
                    b.add(class, format!("setp{c}{bo}{ftz}{}", t.text()), &[T::Pred], vec![r(t), v(t), np()]);
                    b.pair(class, format!("setp{c}{bo}{ftz}{}", t.text()), &[T::Pred, T::Pred], vec![r(t), v(t), np()]);
                }
                for d in [T::U32, T::S32, T::F32] {
                    b.add(class, format!("set{c}{ftz}{}{}", d.text(), t.text()), &[d], vec![r(t), v(t)]);
                    let bo = BOOL_OPS[(c.len() + d.bits() as usize) % 3];
                    b.add(class, format!("set{c}{bo}{ftz}{}{}", d.text(), t.text()), &[d], vec![r(t), v(t), np()]);
                }
            }
        }
        let sclass = if t.class() == TypeClass::Float { class } else { Select };
        b.add(sclass, format!("selp{}", t.text()), &[t], vec![r(t), v(t), r(T::Pred)]);
        b.add(sclass, format!("slct{}.s32", t.text()), &[t], vec![r(t), v(t), v(T::S32)]);
        b.add(sclass, format!("slct{}.f32", t.text()), &[t], vec![r(t), v(t), r(T::F32)]);
        b.add(sclass, format!("slct.ftz{}.f32", t.text()), &[t], vec![r(t), v(t), r(T::F32)]);
    }
    for t in [T::F16, T::Bf16, T::F16x2, T::Bf16x2] {
        let ftzs: &[&str] = if matches!(t, T::F16 | T::F16x2) { &["", ".ftz"] } else { &[""] };
        let packed = matches!(t, T::F16x2 | T::Bf16x2);
        for c in FLOAT_CMP {
            for ftz in ftzs {
                if packed {
                    b.pair(Half, format!("setp{c}{ftz}{}", t.text()), &[T::Pred, T::Pred], vec![r(t), r(t)]);
                    b.pair(Half, format!("setp{c}.and{ftz}{}", t.text()), &[T::Pred, T::Pred], vec![r(t), r(t), np()]);
                    b.add(Half, format!("set{c}{ftz}{}{}", t.text(), t.text()), &[t], vec![r(t), r(t)]);
                    b.add(Half, format!("set{c}{ftz}.u32{}", t.text()), &[T::U32], vec![r(t), r(t)]);
                } else {
                    b.add(Half, format!("setp{c}{ftz}{}", t.text()), &[T::Pred], vec![r(t), r(t)]);
                    b.add(Half, format!("setp{c}.or{ftz}{}", t.text()), &[T::Pred], vec![r(t), r(t), np()]);
                    b.add(Half, format!("set{c}{ftz}{}{}", t.text(), T::F32.text()), &[t], vec![r(T::F32), r(T::F32)]);
                    b.add(Half, format!("set{c}{ftz}.u32{}", t.text()), &[T::U32], vec![r(t), r(t)]);
                    b.add(Half, format!("set{c}.xor{ftz}.s16{}", t.text()), &[T::S16], vec![r(t), r(t), np()]);
                }
            }
        }
    }
    for t in [T::F32, T::F64] {
        let c = if t == T::F32 { F32 } else { F64 };
        for op in [".finite", ".infinite", ".number", ".notanumber", ".normal", ".subnormal"] {
            b.add(c, format!("testp{op}{}", t.text()), &[T::Pred], vec![r(t)]);
        }
        b.add(c, format!("copysign{}", t.text()), &[t], vec![r(t), r(t)]);
    }
    // ---- f32 and f64 arithmetic (§9.7.3) ------------------------------------------------------
    for op in ["add", "sub", "mul"] {
        for rnd in ["", ".rn", ".rz", ".rm", ".rp"] {
            for ftz in [false, true] {
                for sat in [false, true] {
                    b.add(F32, format!("{op}{rnd}{}{}.f32", opt(".ftz", ftz), opt(".sat", sat)), &[T::F32], vec![r(T::F32), v(T::F32)]);
                }
            }
            b.add(F64, format!("{op}{rnd}.f64"), &[T::F64], vec![r(T::F64), v(T::F64)]);
        }
    }
    for op in ["fma", "mad"] {
        for rnd in RND {
            for ftz in [false, true] {
                for sat in [false, true] {
                    b.add(F32, format!("{op}{rnd}{}{}.f32", opt(".ftz", ftz), opt(".sat", sat)), &[T::F32], vec![r(T::F32), v(T::F32), v(T::F32)]);
                }
            }
            b.add(F64, format!("{op}{rnd}.f64"), &[T::F64], vec![r(T::F64), v(T::F64), v(T::F64)]);
        }
    }
    for rnd in RND {
        for ftz in ["", ".ftz"] {
            b.add(F32, format!("div{rnd}{ftz}.f32"), &[T::F32], vec![r(T::F32), v(T::F32)]);
            b.add(F32, format!("rcp{rnd}{ftz}.f32"), &[T::F32], vec![r(T::F32)]);
            b.add(F32, format!("sqrt{rnd}{ftz}.f32"), &[T::F32], vec![r(T::F32)]);
        }
        b.add(F64, format!("div{rnd}.f64"), &[T::F64], vec![r(T::F64), v(T::F64)]);
        b.add(F64, format!("rcp{rnd}.f64"), &[T::F64], vec![r(T::F64)]);
        b.add(F64, format!("sqrt{rnd}.f64"), &[T::F64], vec![r(T::F64)]);
    }
    for ftz in ["", ".ftz"] {
        b.add(F32, format!("abs{ftz}.f32"), &[T::F32], vec![r(T::F32)]);
        b.add(F32, format!("neg{ftz}.f32"), &[T::F32], vec![r(T::F32)]);
        for op in ["min", "max"] {
            for nan in ["", ".NaN"] {
                for xs in ["", ".xorsign.abs"] {
                    b.add(F32, format!("{op}{ftz}{nan}{xs}.f32"), &[T::F32], vec![r(T::F32), v(T::F32)]);
                }
            }
        }
    }
    for op in ["abs", "neg"] {
        b.add(F64, format!("{op}.f64"), &[T::F64], vec![r(T::F64)]);
    }
    for op in ["min", "max"] {
        b.add(F64, format!("{op}.f64"), &[T::F64], vec![r(T::F64), v(T::F64)]);
    }
    // ---- approximations -------------------------------------------------------------------------
    for ftz in ["", ".ftz"] {
        b.add(Approx, format!("div.approx{ftz}.f32"), &[T::F32], vec![r(T::F32), v(T::F32)]);
        b.add(Approx, format!("div.full{ftz}.f32"), &[T::F32], vec![r(T::F32), v(T::F32)]);
        for op in ["rcp", "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2"] {
            b.add(Approx, format!("{op}.approx{ftz}.f32"), &[T::F32], vec![r(T::F32)]);
        }
    }
    b.add(Approx, "tanh.approx.f32", &[T::F32], vec![r(T::F32)]);
    b.add(Approx, "rcp.approx.ftz.f64", &[T::F64], vec![r(T::F64)]);
    b.add(Approx, "rsqrt.approx.f64", &[T::F64], vec![r(T::F64)]);
    b.add(Approx, "rsqrt.approx.ftz.f64", &[T::F64], vec![r(T::F64)]);
    for t in [T::F16, T::F16x2, T::Bf16, T::Bf16x2] {
        b.add(Approx, format!("tanh.approx{}", t.text()), &[t], vec![r(t)]);
        let ftz = if matches!(t, T::Bf16 | T::Bf16x2) { ".ftz" } else { "" };
        b.add(Approx, format!("ex2.approx{ftz}{}", t.text()), &[t], vec![r(t)]);
    }
    // ---- half precision (§9.7.4) --------------------------------------------------------------
    for t in [T::F16, T::F16x2, T::Bf16, T::Bf16x2] {
        let n = t.text();
        let is_f16 = matches!(t, T::F16 | T::F16x2);
        for op in ["add", "sub", "mul"] {
            for rnd in ["", ".rn"] {
                if is_f16 {
                    for ftz in [false, true] {
                        for sat in [false, true] {
                            b.add(Half, format!("{op}{rnd}{}{}{n}", opt(".ftz", ftz), opt(".sat", sat)), &[t], vec![r(t), r(t)]);
                        }
                    }
                } else {
                    b.add(Half, format!("{op}{rnd}{n}"), &[t], vec![r(t), r(t)]);
                }
            }
        }
        if is_f16 {
            for ftz in [false, true] {
                for sat in [false, true] {
                    b.add(Half, format!("fma.rn{}{}{n}", opt(".ftz", ftz), opt(".sat", sat)), &[t], vec![r(t), r(t), r(t)]);
                }
                b.add(Half, format!("fma.rn{}.relu{n}", opt(".ftz", ftz)), &[t], vec![r(t), r(t), r(t)]);
                b.add(Half, format!("neg{}{n}", opt(".ftz", ftz)), &[t], vec![r(t)]);
                b.add(Half, format!("abs{}{n}", opt(".ftz", ftz)), &[t], vec![r(t)]);
            }
        } else {
            for relu in ["", ".relu"] {
                b.add(Half, format!("fma.rn{relu}{n}"), &[t], vec![r(t), r(t), r(t)]);
            }
            b.add(Half, format!("neg{n}"), &[t], vec![r(t)]);
            b.add(Half, format!("abs{n}"), &[t], vec![r(t)]);
        }
        for op in ["min", "max"] {
            for ftz in ["", ".ftz"] {
                if ftz == ".ftz" && !is_f16 {
                    continue;
                }
                for nan in ["", ".NaN"] {
                    for xs in ["", ".xorsign.abs"] {
                        b.add(Half, format!("{op}{ftz}{nan}{xs}{n}"), &[t], vec![r(t), r(t)]);
                    }
                }
            }
        }
    }
    // ---- conversions (§9.7.9.21, 22) ------------------------------------------------------------
    for d in CVT_TYPES {
        for a in CVT_TYPES {
            let (df, af) = (d.class() == TypeClass::Float, a.class() == TypeClass::Float);
            let class = if df || af { CvtFloat } else { CvtInt };
            let f32_involved = d == T::F32 || a == T::F32;
            let ftzs: &[&str] = if f32_involved { &["", ".ftz"] } else { &[""] };
            let rnds: Vec<&str> = match (df, af) {
                (false, false) => vec![""],
                (false, true) => IRND.to_vec(),
                (true, false) => RND.to_vec(),
                (true, true) if d == a => IRND.to_vec(),
                (true, true) if d.bits() < a.bits() || (d == T::Bf16 && a == T::F16) || (d == T::F16 && a == T::Bf16) => RND.to_vec(),
                (true, true) => vec![""],
            };
            // ptxas: no `.bf16` with 8-bit integers; `.sat` only where it can clamp, never from `.bf16`.
            if (d == T::Bf16 && is_8bit(a)) || (a == T::Bf16 && is_8bit(d)) {
                continue;
            }
            let sat_ok = a != T::Bf16 && (df || af || !int_range_within(a, d));
            for rnd in &rnds {
                for ftz in ftzs {
                    for sat in ["", ".sat"] {
                        if (!df && !af && d == a && sat.is_empty()) || (!sat.is_empty() && !sat_ok) {
                            continue;
                        }
                        b.add(class, format!("cvt{rnd}{ftz}{sat}{}{}", d.text(), a.text()), &[d], vec![r(a)]);
                    }
                }
            }
        }
    }
    for d in [T::F16, T::Bf16] {
        for rnd in [".rn", ".rz"] {
            for relu in ["", ".relu"] {
                for sf in ["", ".satfinite"] {
                    if relu.is_empty() && sf.is_empty() {
                        continue;
                    }
                    b.add(CvtFloat, format!("cvt{rnd}{relu}{sf}{}.f32", d.text()), &[d], vec![r(T::F32)]);
                }
            }
        }
    }
    for d in [T::F16x2, T::Bf16x2] {
        for rnd in [".rn", ".rz"] {
            for relu in ["", ".relu"] {
                for sf in ["", ".satfinite"] {
                    b.add(CvtFloat, format!("cvt{rnd}{relu}{sf}{}.f32", d.text()), &[d], vec![r(T::F32), r(T::F32)]);
                }
            }
        }
    }
    for f8 in [T::E4m3x2, T::E5m2x2] {
        for relu in ["", ".relu"] {
            b.add(CvtFloat, format!("cvt.rn.satfinite{relu}{}.f32", f8.text()), &[f8], vec![r(T::F32), r(T::F32)]);
            b.add(CvtFloat, format!("cvt.rn.satfinite{relu}{}.f16x2", f8.text()), &[f8], vec![r(T::F16x2)]);
            b.add(CvtFloat, format!("cvt.rn{relu}.f16x2{}", f8.text()), &[T::F16x2], vec![r(f8)]);
        }
    }
    for t in [T::U16, T::S16] {
        b.add(CvtInt, format!("cvt.pack.sat{}.s32", t.text()), &[T::U32], vec![r(T::S32), r(T::S32)]);
    }
    for t in [T::U8, T::S8, T::U4, T::S4, T::U2, T::S2] {
        b.add(CvtInt, format!("cvt.pack.sat{}.s32.b32", t.text()), &[T::U32], vec![r(T::S32), r(T::S32), r(T::B32)]);
    }
    // ---- video (§9.7.10) ------------------------------------------------------------------------------
    let bsels = ["", ".b0", ".b1", ".b2", ".b3", ".h0", ".h1"];
    let mut k = 0usize;
    for op in ["vadd", "vsub", "vabsdiff", "vmin", "vmax"] {
        for d in [T::U32, T::S32] {
            for a in [T::U32, T::S32] {
                for bt in [T::U32, T::S32] {
                    for sat in ["", ".sat"] {
                        k += 1;
                        let (sa, sb) = (bsels[k % 7], bsels[(k / 7) % 7]);
                        let h = format!("{op}{}{}{}{sat}", d.text(), a.text(), bt.text());
                        b.add(Video, h.clone(), &[d], vec![sel(r(a), sa), sel(r(bt), sb)]);
                        let op2 = [".add", ".min", ".max"][k % 3];
                        b.add(Video, format!("{h}{op2}"), &[d], vec![sel(r(a), sa), sel(r(bt), sb), r(T::U32)]);
                    }
                }
            }
        }
    }
    for op in ["vshl", "vshr"] {
        for d in [T::U32, T::S32] {
            for a in [T::U32, T::S32] {
                for m in [".clamp", ".wrap"] {
                    k += 1;
                    b.add(Video, format!("{op}{}{}.u32{}{m}", d.text(), a.text(), opt(".sat", k % 2 == 0)), &[d], vec![r(a), r(T::U32)]);
                }
            }
        }
    }
    for d in [T::U32, T::S32] {
        for a in [T::U32, T::S32] {
            for bt in [T::U32, T::S32] {
                for scale in ["", ".shr7", ".shr15"] {
                    k += 1;
                    b.add(Video, format!("vmad{}{}{}{}{scale}", d.text(), a.text(), bt.text(), opt(".sat", k % 2 == 0)), &[d], vec![Src { ty: a, how: How::MaybeNeg, sel: "" }, Src { ty: bt, how: How::MaybeNeg, sel: "" }, Src { ty: T::U32, how: How::MaybeNeg, sel: "" }]);
                }
                b.add(Video, format!("vmad{}{}{}.po", d.text(), a.text(), bt.text()), &[d], vec![r(a), r(bt), r(T::U32)]);
            }
        }
    }
    for a in [T::U32, T::S32] {
        for bt in [T::U32, T::S32] {
            for c in [".eq", ".ne", ".lt", ".le", ".gt", ".ge"] {
                k += 1;
                b.add(Video, format!("vset{}{}{c}", a.text(), bt.text()), &[T::U32], vec![r(a), r(bt)]);
                b.add(Video, format!("vset{}{}{c}{}", a.text(), bt.text(), [".add", ".min", ".max"][k % 3]), &[T::U32], vec![r(a), r(bt), r(T::U32)]);
                b.add(Video, format!("vset2{}{}{c}", a.text(), bt.text()), &[T::U32], vec![r(a), r(bt), r(T::U32)]);
                b.add(Video, format!("vset2{}{}{c}.add", a.text(), bt.text()), &[T::U32], vec![r(a), r(bt), r(T::U32)]);
                b.add(Video, format!("vset4{}{}{c}", a.text(), bt.text()), &[T::U32], vec![r(a), r(bt), r(T::U32)]);
                b.add(Video, format!("vset4{}{}{c}.add", a.text(), bt.text()), &[T::U32], vec![r(a), r(bt), r(T::U32)]);
            }
        }
    }
    for op in ["vadd2", "vsub2", "vavrg2", "vabsdiff2", "vmin2", "vmax2", "vadd4", "vsub4", "vavrg4", "vabsdiff4", "vmin4", "vmax4"] {
        for d in [T::U32, T::S32] {
            for a in [T::U32, T::S32] {
                for bt in [T::U32, T::S32] {
                    for m in ["", ".sat", ".add"] {
                        b.add(Video, format!("{op}{}{}{}{m}", d.text(), a.text(), bt.text()), &[d], vec![r(a), r(bt), r(T::U32)]);
                    }
                }
            }
        }
    }
    b.out
}

/// Why a template was left out of the catalog.
#[derive(Clone, Debug)]
pub struct Dropped {
    pub line: String,
    pub why: String,
}

/// The catalog after filtering: the templates the generator uses.
pub struct Catalog {
    pub templates: Vec<Tmpl>,
    /// Template indices by class.
    by_class: BTreeMap<Class, Vec<usize>>,
    pub dropped: Vec<Dropped>,
}

/// Probe registers: one name per (declaration type, operand position).
fn probe_reg(decl: T, k: usize) -> String {
    format!("{}{}", reg_prefix(decl), k)
}

/// The declaration type a probe uses for an operand of type `ty`.
pub fn probe_decl(ty: T) -> T {
    fresh_decls(ty)[0]
}

/// A line instantiating `t` with probe registers (immediates for immediate operands).
fn probe_line(t: &Tmpl) -> String {
    let mut ops = Vec::new();
    let dsts: Vec<String> = t.dsts.iter().enumerate().map(|(k, d)| probe_reg(probe_decl(*d), k)).collect();
    if t.pair {
        ops.push(format!("{}|{}", dsts[0], dsts[1]));
    } else {
        for d in &dsts {
            ops.push(format!("{d}{}", t.dsel));
        }
    }
    for (k, s) in t.srcs.iter().enumerate() {
        match s.how {
            How::ImmBelow(n) => ops.push(format!("{}", 0x96 % n)),
            _ => ops.push(format!("{}{}", probe_reg(probe_decl(s.ty), 4 + k), s.sel)),
        }
    }
    format!("\t{} {};", t.head, ops.join(", "))
}

/// Values a probe evaluates an operand of type `ty` on.
fn probe_value(ty: T, set: usize) -> u128 {
    let f16 = [0x3e00u128, 0xc180, 0x0001];
    let bf16 = [0x3fc0u128, 0xc030, 0x0001];
    match ty {
        T::Pred => 1,
        T::F16 => f16[set],
        T::Bf16 => bf16[set],
        T::F16x2 => f16[set] | f16[(set + 1) % 3] << 16,
        T::Bf16x2 => bf16[set] | bf16[(set + 1) % 3] << 16,
        T::F32 => [1.5f32, -2.75, 3.0e-3][set].to_bits() as u128,
        T::F64 => [1.5f64, -2.75, 3.0e-3][set].to_bits() as u128,
        T::E4m3x2 | T::E5m2x2 => [0x3838u128, 0xb040, 0x0101][set],
        _ => [6u128, 0x1234_5678_9abc_def1, 2][set] & ptx_ir::eval::bits_mask(ty.bits().max(8)),
    }
}

fn probe_module(lines: &[String]) -> String {
    let mut decls = String::new();
    for t in [T::Pred, T::B16, T::U16, T::S16, T::F16, T::B32, T::U32, T::S32, T::F32, T::B64, T::U64, T::S64, T::F64] {
        let _ = writeln!(decls, "\t.reg {} {}<12>;", t.text(), reg_prefix(t));
    }
    let mut s = format!(".version {VERSION}\n.target {TARGET}\n.address_size 64\n\n.visible .entry probe()\n{{\n{decls}");
    for l in lines {
        s.push_str(l);
        s.push('\n');
    }
    s.push_str("\tret;\n}\n");
    s
}

/// The header lines of the probe module before the first instruction.
const PROBE_HEADER_LINES: u32 = 19;

fn filter_catalog(all: Vec<Tmpl>) -> Catalog {
    let mut dropped = Vec::new();
    let mut keep: Vec<Tmpl> = all;
    // Parse (dropping lines that do not), then verify, then evaluate.
    let parsed = loop {
        let lines: Vec<String> = keep.iter().map(probe_line).collect();
        let text = probe_module(&lines);
        match ptx_ir::parse("probe.ptx", text.as_bytes()) {
            Ok(p) => break (p, text),
            Err(d) => {
                let k = d.line.checked_sub(PROBE_HEADER_LINES + 1).map(|k| k as usize).filter(|k| *k < keep.len());
                match k {
                    Some(k) => {
                        dropped.push(Dropped { line: lines[k].trim().to_string(), why: format!("does not parse: {}", d.message) });
                        keep.remove(k);
                    }
                    None => panic!("the probe module does not parse outside the instructions: {d}\n{text}"),
                }
            }
        }
    };
    let (p, text) = parsed;
    let diags = ptx_ir::verify::verify_parsed(&p, "probe.ptx", text.as_bytes());
    let mut bad: BTreeMap<usize, String> = BTreeMap::new();
    for d in diags.iter().filter(|d| d.is_error()) {
        if let Some(k) = d.line.checked_sub(PROBE_HEADER_LINES + 1).map(|k| k as usize).filter(|k| *k < keep.len()) {
            bad.entry(k).or_insert_with(|| format!("verify: {}", d.message));
        } else {
            panic!("the probe module has an error outside the instructions: {d}");
        }
    }
    let ptx_ir::ir::Item::Func(f) = p.module.items.iter().find(|i| matches!(i, ptx_ir::ir::Item::Func(_))).expect("probe kernel") else { unreachable!() };
    let instrs: Vec<&ptx_ir::ir::Instruction> = f.body.as_ref().unwrap().iter().filter_map(|s| if let ptx_ir::ir::Stmt::Instr(i) = s { Some(&**i) } else { None }).collect();
    assert_eq!(instrs.len(), keep.len() + 1, "one instruction per template plus ret");
    for (k, (t, ins)) in keep.iter().zip(&instrs).enumerate() {
        if bad.contains_key(&k) {
            continue;
        }
        if !ptx_ir::eval::handles(ins.opcode) {
            bad.insert(k, format!("the evaluator does not handle `{}`", ins.opcode.name()));
            continue;
        }
        let mut last = String::new();
        let ok = (0..3).any(|set| {
            let srcs: Vec<u128> = t.srcs.iter().enumerate().map(|(k, s)| match s.how {
                How::ImmBelow(n) => (0x96 % n) as u128,
                _ => probe_value(s.ty, (set + k) % 3),
            }).collect();
            match ptx_ir::eval::eval(ins, &srcs, false) {
                Ok(_) => true,
                Err(e) => {
                    last = e.to_string();
                    false
                }
            }
        });
        if !ok {
            bad.insert(k, format!("eval: {last}"));
        }
    }
    let lines: Vec<String> = keep.iter().map(probe_line).collect();
    let mut templates = Vec::new();
    for (k, t) in keep.into_iter().enumerate() {
        match bad.remove(&k) {
            Some(why) => dropped.push(Dropped { line: lines[k].trim().to_string(), why }),
            None => templates.push(t),
        }
    }
    let mut by_class: BTreeMap<Class, Vec<usize>> = BTreeMap::new();
    for (k, t) in templates.iter().enumerate() {
        by_class.entry(t.class).or_default().push(k);
    }
    Catalog { templates, by_class, dropped }
}

/// The filtered catalog (built once per process).
pub fn catalog() -> &'static Catalog {
    static C: OnceLock<Catalog> = OnceLock::new();
    C.get_or_init(|| filter_catalog(build_catalog()))
}

/// A module with every catalog template once (for checking them with ptxas).
pub fn catalog_module() -> String {
    let lines: Vec<String> = catalog().templates.iter().map(probe_line).collect();
    probe_module(&lines)
}

/// The kernel of [`catalog_module`], parsed: every pure instruction of the
/// catalog, for tests that run something over each of them.
pub fn catalog_kernel() -> ptx_ir::ir::Function {
    let text = catalog_module();
    let parsed = ptx_ir::parse("catalog.ptx", text.as_bytes()).expect("the catalog module parses");
    parsed
        .module
        .items
        .into_iter()
        .find_map(|i| match i {
            ptx_ir::ir::Item::Func(f) if f.body.is_some() => Some(*f),
            _ => None,
        })
        .expect("the catalog kernel")
}

/// The evaluator's opcodes no catalog template uses (the generator never
/// produces them), by name.
pub fn uncovered_opcodes() -> Vec<&'static str> {
    let c = catalog();
    let used: std::collections::BTreeSet<&str> = c.templates.iter().map(|t| ptx_ir::isa::Opcode::longest_prefix(&t.head).map(|(o, _)| o.name()).unwrap_or("")).collect();
    // The carry chains are written by the generator itself.
    let special = ["addc", "subc", "madc"];
    let mut out: Vec<&'static str> = ptx_ir::isa::Opcode::all().filter(|o| ptx_ir::eval::handles(*o)).map(|o| o.name()).filter(|n| !used.contains(n) && !special.contains(n)).collect();
    out.sort();
    out.dedup();
    out
}

// ================================================================================================
// The generator
// ================================================================================================

#[derive(Clone, Debug)]
struct Var {
    name: String,
    decl: T,
    kind: Kind,
    assignable: bool,
}

#[derive(Clone, Copy)]
struct Ctx {
    /// Every thread of the CTA runs this code together (barriers and warp collectives allowed).
    uniform: bool,
    depth: u32,
    in_func: bool,
}

#[derive(Clone, Debug)]
struct FuncSig {
    name: String,
    params: Vec<T>,
    ret: T,
    reg_abi: bool,
}

/// Elements per thread of the input buffers.
const IN_U32: usize = 8;
const IN_F32: usize = 8;
const IN_F64: usize = 4;
const IN_U64: usize = 4;
/// The thread's own scratch words (atomics, stores and loads back).
const ACC_U32: usize = 4;
/// Words of the reduction buffer every thread `red`s into.
const RED_U32: usize = 8;
const RED_U64: usize = 4;
/// Bytes of local memory.
const LOCAL_BYTES: usize = 64;

struct Gen<'o> {
    c: Choices,
    o: &'o GenOptions,
    cat: &'static Catalog,
    regs: RegFile,
    pool: Vec<Var>,
    body: Vec<String>,
    indent: usize,
    labels: u32,
    uniq: u32,
    funcs: Vec<FuncSig>,
    budget: usize,
    no_guards: bool,
    /// Registers the instruction being built reads already; negations left (`vmad`).
    used: Vec<String>,
    negs_left: u32,
    /// Registers of the kernel prologue.
    k: KRegs,
}

#[derive(Default, Clone)]
struct KRegs {
    lt: String,
    nt: String,
    in_u32: String,
    in_f32: String,
    in_f64: String,
    in_u64: String,
    acc: String,
    red: String,
    sh_base: String,
    sh_own: String,
}

fn generate(c: Choices, o: &GenOptions) -> GeneratedKernel {
    let mut g = Gen { c, o, cat: catalog(), regs: RegFile::default(), pool: Vec::new(), body: Vec::new(), indent: 1, labels: 0, uniq: 0, funcs: Vec::new(), budget: 0, no_guards: false, used: Vec::new(), negs_left: 0, k: KRegs::default() };
    let mut text = format!(".version {VERSION}\n.target {TARGET}\n.address_size 64\n\n");
    if o.shared {
        // 16-byte aligned for the matrix tiles' `ldmatrix` rows.
        let _ = writeln!(text, ".shared .align {} .b8 gen_sh[{}];", if o.mma { 16 } else { 8 }, o.max_block_threads as usize * 8);
    }
    // Functions first (a function may call the ones before it).
    if o.calls {
        let n = g.c.below(3);
        for _ in 0..n {
            text.push_str(&g.function());
            text.push('\n');
        }
    }
    let (kernel_text, spec) = g.kernel_text();
    text.push_str(&kernel_text);
    GeneratedKernel { text, spec }
}

impl Gen<'_> {
    // ---- output ------------------------------------------------------------------------------------

    fn emit(&mut self, line: impl AsRef<str>) {
        let mut s = "\t".repeat(self.indent);
        s.push_str(line.as_ref());
        self.body.push(s);
    }

    fn label(&mut self) -> String {
        self.labels += 1;
        format!("$Lgen_{}", self.labels)
    }

    fn fresh(&mut self, decl: T, kind: Kind) -> Var {
        Var { name: self.regs.fresh(decl), decl, kind, assignable: true }
    }

    fn define(&mut self, var: Var) -> String {
        let n = var.name.clone();
        self.pool.push(var);
        n
    }

    // ---- values -----------------------------------------------------------------------------------

    /// An immediate of integer or f32/f64 type `ty`, as text.
    fn imm_text(&mut self, ty: T) -> String {
        match ty {
            T::F32 => {
                let nice = [0.0f32, 1.0, -1.0, 0.5, 2.0, -0.25, 3.0, 1.5, 100.0, -7.5, 1.0e-3, 65504.0];
                if self.c.chance(1, 5) {
                    let f = *self.c.pick(&[0.5f64, 1.5, -2.25, 3.0, 100.0, -0.125]);
                    return format!("{f:?}");
                }
                let bits = if self.c.chance(1, 8) { self.c.bits() as u32 } else { self.c.pick(&nice).to_bits() };
                format!("0f{bits:08X}")
            }
            T::F64 => {
                let nice = [0.0f64, 1.0, -1.0, 0.5, 2.0, -0.25, 3.0, 1.5, 1.0e10, -7.5, 1.0e-3];
                let bits = if self.c.chance(1, 8) { self.c.bits() } else { self.c.pick(&nice).to_bits() };
                format!("0d{bits:016X}")
            }
            _ => {
                let bits = ty.bits().clamp(8, 64);
                let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
                let x = match self.c.below(6) {
                    0 => self.c.below(17),
                    1 => 1u64 << self.c.below(bits as u64),
                    2 => (1u64 << self.c.below(bits as u64)).wrapping_sub(1),
                    3 => mask,
                    4 => mask >> 1,
                    _ => self.c.bits() & mask,
                };
                let signed = ty.class() == TypeClass::Signed;
                if signed && self.c.chance(1, 3) && x != 0 && x <= (mask >> 1) {
                    return format!("-{}", x.min(1 << 20));
                }
                match self.c.below(5) {
                    0 => format!("0x{x:X}"),
                    1 => format!("0x{x:x}"),
                    2 if x > 0 && x < 4096 => format!("0{x:o}"),
                    _ => {
                        if signed && x > (mask >> 1) {
                            // Two's complement of a negative value of the type.
                            let neg = (!x & mask) + 1;
                            format!("-{neg}")
                        } else {
                            format!("{x}")
                        }
                    }
                }
            }
        }
    }

    fn can_imm(ty: T) -> bool {
        (is_int(ty) && !is_8bit(ty)) || ty == T::F32 || ty == T::F64
    }

    /// Variables usable as a source of type `ty`.
    fn candidates(&self, ty: T, same_kind: bool) -> Vec<usize> {
        let want = kind_of(ty);
        self.pool
            .iter()
            .enumerate()
            .filter(|(_, v)| reg_ok(v.decl, ty) && (!same_kind || v.kind == want || (is_8bit(ty) && matches!(v.kind, Kind::I16 | Kind::I32))))
            .map(|(k, _)| k)
            .collect()
    }

    /// A register holding a value usable as type `ty` (created if none).
    /// Registers already used by the instruction being built are avoided
    /// most of the time.
    fn reg(&mut self, ty: T) -> String {
        let same = self.candidates(ty, true);
        let list = if same.is_empty() || self.c.chance(1, 30) { self.candidates(ty, false) } else { same };
        if list.is_empty() {
            return self.materialize(ty);
        }
        let fresh: Vec<usize> = list.iter().copied().filter(|k| !self.used.contains(&self.pool[*k].name)).collect();
        let list = if fresh.is_empty() || self.c.chance(1, 8) { list } else { fresh };
        // Prefer recent values a little.
        let n = list.len() as u64;
        let k = if self.c.chance(1, 2) { n - 1 - self.c.below(n.min(6)) } else { self.c.below(n) };
        let name = self.pool[list[k as usize]].name.clone();
        self.used.push(name.clone());
        name
    }

    /// A fresh register holding some value of type `ty`.
    fn materialize(&mut self, ty: T) -> String {
        let decl = *self.c.pick(fresh_decls(ty));
        let var = self.fresh(decl, dest_kind(ty, decl));
        let name = var.name.clone();
        match ty {
            T::Pred => {
                let x = self.reg(T::U32);
                let i = self.imm_text(T::U32);
                self.emit(format!("setp.lt.u32 {name}, {x}, {i};"));
            }
            T::F16 | T::Bf16 | T::E4m3x2 | T::E5m2x2 => {
                let b = *self.c.pick(&[0x3c00u32, 0xbc00, 0x4248, 0x3f80, 0xc040, 0x0000, 0x7bff]);
                self.emit(format!("mov.b16 {name}, 0x{b:04X};"));
            }
            T::F16x2 | T::Bf16x2 | T::U16x2 | T::S16x2 => {
                let b = self.c.bits() as u32 & 0x3fff_3fff;
                self.emit(format!("mov.b32 {name}, 0x{b:08X};"));
            }
            _ if is_8bit(ty) => {
                let i = self.imm_text(T::U16);
                self.emit(format!("mov{} {name}, {i};", if decl.bits() == 16 { ".b16" } else { ".b32" }));
            }
            _ => {
                let i = self.imm_text(ty);
                self.emit(format!("mov{} {name}, {i};", ty.text()));
            }
        }
        self.define(var)
    }

    /// A source operand's text (may emit instructions that prepare it).
    fn source(&mut self, s: &Src, first: bool) -> String {
        let t = s.ty;
        match s.how {
            How::Val => {
                if !first && Self::can_imm(t) && self.c.chance(1, 5) {
                    self.imm_text(t)
                } else {
                    format!("{}{}", self.reg(t), s.sel)
                }
            }
            How::Reg => format!("{}{}", self.reg(t), s.sel),
            How::NotPred => {
                let p = self.reg(T::Pred);
                if self.c.chance(1, 3) {
                    format!("!{p}")
                } else {
                    p
                }
            }
            How::ImmBelow(n) => format!("{}", self.c.below(n as u64)),
            How::MaybeNeg => {
                let x = self.reg(t);
                if self.negs_left > 0 && self.c.chance(1, 3) {
                    self.negs_left -= 1;
                    format!("-{x}")
                } else {
                    x
                }
            }
            How::Masked(m) => {
                if self.c.chance(1, 3) {
                    return format!("{}", self.c.below(m as u64 + 1));
                }
                let x = self.reg(t);
                let bt = bits_type(t);
                let decl_ = *self.c.pick(fresh_decls(t));
                let var = self.fresh(decl_, kind_of(t));
                let name = var.name.clone();
                // Not a power of two minus one: `rem` keeps the whole range.
                if (m + 1).is_power_of_two() {
                    self.emit(format!("and{} {name}, {x}, {m};", bt.text()));
                } else {
                    self.emit(format!("rem.u32 {name}, {x}, {};", m + 1));
                }
                self.define(var)
            }
            How::Divisor => {
                if self.c.chance(1, 4) {
                    let x = 1 + self.c.below(1000);
                    return format!("{x}");
                }
                let x = self.reg(t);
                let bt = bits_type(t);
                let decl_ = *self.c.pick(fresh_decls(t));
                let var = self.fresh(decl_, kind_of(t));
                let name = var.name.clone();
                if t.class() == TypeClass::Signed {
                    let max = ptx_ir::eval::bits_mask(t.bits()) >> 1;
                    self.emit(format!("and{} {name}, {x}, {max};", bt.text()));
                    self.emit(format!("or{} {name}, {name}, 1;", bt.text()));
                } else {
                    self.emit(format!("or{} {name}, {x}, 1;", bt.text()));
                }
                self.define(var)
            }
        }
    }

    /// Assignable variables of kind `kind` whose register fits instruction type `ty`.
    fn assignable(&self, ty: T) -> Vec<usize> {
        self.pool.iter().enumerate().filter(|(_, v)| v.assignable && reg_ok(v.decl, ty) && v.kind == dest_kind(ty, v.decl)).map(|(k, _)| k).collect()
    }

    /// A guard for an instruction writing existing variables, or "".
    fn guard(&mut self) -> String {
        if !self.o.guards || self.no_guards || !self.c.chance(1, 5) {
            return String::new();
        }
        let p = self.reg(T::Pred);
        if self.c.chance(1, 2) {
            format!("@!{p} ")
        } else {
            format!("@{p} ")
        }
    }

    /// Emits one instance of template `t`.
    fn instance(&mut self, t: &Tmpl) {
        self.used.clear();
        self.negs_left = 1;
        let srcs: Vec<String> = t.srcs.iter().enumerate().map(|(k, s)| self.source(s, k == 0)).collect();
        // Destinations: existing variables (maybe guarded) or fresh ones.
        let mut existing: Vec<usize> = Vec::new();
        if self.c.chance(1, 3) {
            for d in &t.dsts {
                let c: Vec<usize> = self.assignable(*d).into_iter().filter(|k| !existing.contains(k)).collect();
                if c.is_empty() {
                    existing.clear();
                    break;
                }
                existing.push(*self.c.pick(&c));
            }
        }
        let (guard, dnames, fresh): (String, Vec<String>, Vec<Var>) = if !existing.is_empty() {
            let g = self.guard();
            (g, existing.iter().map(|k| self.pool[*k].name.clone()).collect(), Vec::new())
        } else {
            let vars: Vec<Var> = t.dsts.iter().map(|d| {
                let decl = *self.c.pick(fresh_decls(*d));
                self.fresh(decl, dest_kind(*d, decl))
            }).collect();
            (String::new(), vars.iter().map(|v| v.name.clone()).collect(), vars)
        };
        let mut ops = Vec::new();
        if t.pair {
            ops.push(format!("{}|{}", dnames[0], dnames[1]));
        } else {
            for d in &dnames {
                ops.push(format!("{d}{}", t.dsel));
            }
        }
        ops.extend(srcs);
        self.emit(format!("{guard}{} {};", t.head, ops.join(", ")));
        for v in fresh {
            self.define(v);
        }
    }

    fn pure_instruction(&mut self) {
        let weights: Vec<u32> = CLASSES.iter().map(|c| if c.allowed(self.o) && self.cat.by_class.contains_key(c) { c.weight() } else { 0 }).collect();
        let class = CLASSES[self.c.weighted(&weights)];
        let Some(list) = self.cat.by_class.get(&class) else { return };
        let mut k = *self.c.pick(list);
        // Floating-point `.sat` forms fail to evaluate on -0.0 results (the manual is silent
        // there), which makes the whole run inconclusive: fewer of them.
        if matches!(class, Class::F32 | Class::Half) && self.cat.templates[k].head.contains(".sat") && self.c.chance(2, 3) {
            k = *self.c.pick(list);
        }
        let t = self.cat.templates[k].clone();
        self.instance(&t);
    }

    /// `add.cc` / `addc` chains, `sub.cc`/`subc`, `mad.cc`/`madc`.
    fn carry_chain(&mut self) {
        let ty = *self.c.pick(&[T::U32, T::S32, T::U64, T::S64]);
        let n = 2 + self.c.below(3);
        let first = *self.c.pick(&["add.cc", "sub.cc", "mad.lo.cc", "mad.hi.cc"]);
        for k in 0..n {
            let last = k + 1 == n;
            let op = if k == 0 {
                first.to_string()
            } else {
                let base = *self.c.pick(&["addc", "subc", "madc.lo", "madc.hi"]);
                if last && self.c.chance(1, 2) {
                    base.to_string()
                } else {
                    format!("{base}.cc")
                }
            };
            let nsrc = if op.starts_with("mad") { 3 } else { 2 };
            let srcs: Vec<Src> = (0..nsrc).map(|_| v(ty)).collect();
            let t = Tmpl { class: Class::IntArith, head: format!("{op}{}", ty.text()), dsts: vec![ty], pair: false, dsel: "", srcs };
            // Chain members are never guarded: a skipped producer would leave the carry stale.
            self.no_guards = true;
            self.instance(&t);
            self.no_guards = false;
        }
    }

    /// `mov` packing two halves or unpacking into halves (ptxas wants the
    /// vector's registers declared alike).
    fn pack_unpack(&mut self) {
        let (half, whole) = if self.c.chance(1, 2) { (T::B16, T::B32) } else { (T::B32, T::B64) };
        let (hkind, wkind) = if half == T::B16 { (Kind::I16, Kind::I32) } else { (Kind::I32, Kind::I64) };
        if self.c.chance(1, 2) {
            self.used.clear();
            let a = self.reg(half);
            let decl = self.pool.iter().find(|v| v.name == a).map(|v| v.decl).unwrap_or(half);
            let alike: Vec<String> = self.pool.iter().filter(|v| v.decl == decl && reg_ok(v.decl, half)).map(|v| v.name.clone()).collect();
            let b = self.c.pick(&alike).clone();
            let (x, y) = if self.c.chance(1, 2) { (a, b) } else { (b, a) };
            let d = *self.c.pick(fresh_decls(whole));
            let var = self.fresh(d, wkind);
            self.emit(format!("mov{} {}, {{{x}, {y}}};", whole.text(), var.name));
            self.define(var);
        } else {
            self.used.clear();
            let x = self.reg(whole);
            let d = *self.c.pick(fresh_decls(half));
            let (a, b) = (self.fresh(d, hkind), self.fresh(d, hkind));
            self.emit(format!("mov{} {{{}, {}}}, {x};", whole.text(), a.name, b.name));
            self.define(a);
            self.define(b);
        }
    }

    // ---- memory -----------------------------------------------------------------------------------------

    fn memory(&mut self) {
        let k = self.k.clone();
        match self.c.below(9) {
            // Loads from the thread's slice of an input buffer.
            0 | 1 => {
                let (base, ty, total_bytes) = match self.c.below(5) {
                    0 => (k.in_u32.clone(), *self.c.pick(&[T::U32, T::S32, T::B32]), IN_U32 * 4),
                    1 if self.o.floats => (k.in_f32.clone(), T::F32, IN_F32 * 4),
                    2 if self.o.floats => (k.in_f64.clone(), T::F64, IN_F64 * 8),
                    3 => (k.in_u64.clone(), *self.c.pick(&[T::U64, T::S64, T::B64]), IN_U64 * 8),
                    _ => (k.in_u32.clone(), *self.c.pick(&[T::U16, T::S16, T::U8, T::S8]), IN_U32 * 4),
                };
                let size = (ty.bits() / 8) as usize;
                let nc = if self.c.chance(1, 3) { ".nc" } else { "" };
                let vec = if size >= 4 && self.c.chance(1, 4) { if size == 4 && self.c.chance(1, 2) { 4 } else { 2 } } else { 1 };
                let slots = total_bytes / (size * vec);
                let off = self.c.below(slots as u64) as usize * size * vec;
                // Sub-word loads may go to wider registers (zero- or sign-extended).
                let decl = if size <= 2 { *self.c.pick(&[T::U16, T::S16, T::U32, T::S32]) } else { *self.c.pick(fresh_decls(ty)) };
                let vars: Vec<Var> = (0..vec).map(|_| self.fresh(decl, dest_kind(ty, decl))).collect();
                let d = if vec == 1 { vars[0].name.clone() } else { format!("{{{}}}", vars.iter().map(|v| v.name.as_str()).collect::<Vec<_>>().join(", ")) };
                let vs = if vec == 1 { String::new() } else { format!(".v{vec}") };
                self.emit(format!("ld.global{nc}{vs}{} {d}, [{base}+{off}];", ty.text()));
                for v in vars {
                    self.define(v);
                }
            }
            // Local memory: store, load back.
            2 | 3 => {
                let ty = *self.c.pick(&[T::U32, T::B64, T::F32, T::U16, T::S32]);
                if ty == T::F32 && !self.o.floats {
                    return;
                }
                let size = (ty.bits() / 8) as usize;
                let off = self.c.below((LOCAL_BYTES / size) as u64) as usize * size;
                if self.c.chance(1, 2) {
                    let x = self.reg(ty);
                    self.emit(format!("st.local{} [gen_loc+{off}], {x};", ty.text()));
                } else {
                    let decl = *self.c.pick(fresh_decls(ty));
                    let var = self.fresh(decl, dest_kind(ty, decl));
                    self.emit(format!("ld.local{} {}, [gen_loc+{off}];", ty.text(), var.name));
                    self.define(var);
                }
            }
            // Atomics on the thread's own scratch words; stores and loads there.
            4 | 5 => {
                let off = self.c.below(ACC_U32 as u64) * 4;
                let acc = k.acc.clone();
                match self.c.below(4) {
                    0 => {
                        let x = self.reg(T::U32);
                        self.emit(format!("st.global.u32 [{acc}+{off}], {x};"));
                    }
                    1 => {
                        let var = self.fresh(T::U32, Kind::I32);
                        self.emit(format!("ld.global.u32 {}, [{acc}+{off}];", var.name));
                        self.define(var);
                    }
                    _ => {
                        let (op, ty) = *self.c.pick(&[
                            (".add", T::U32),
                            (".add", T::S32),
                            (".and", T::B32),
                            (".or", T::B32),
                            (".xor", T::B32),
                            (".min", T::U32),
                            (".max", T::S32),
                            (".exch", T::B32),
                            (".inc", T::U32),
                            (".dec", T::U32),
                            (".cas", T::B32),
                        ]);
                        let a = self.reg(ty);
                        let extra = if op == ".cas" { format!(", {}", self.reg(ty)) } else { String::new() };
                        let decl = *self.c.pick(fresh_decls(ty));
                        let var = self.fresh(decl, Kind::I32);
                        self.emit(format!("atom.global{op}{} {}, [{acc}+{off}], {a}{extra};", ty.text(), var.name));
                        self.define(var);
                    }
                }
            }
            // Reductions every thread makes into one buffer (commutative integer operations only).
            6 => {
                let (op, ty, wide) = *self.c.pick(&[
                    (".add", T::U32, false),
                    (".add", T::U64, true),
                    (".and", T::B32, false),
                    (".or", T::B32, false),
                    (".xor", T::B32, false),
                    (".min", T::U32, false),
                    (".max", T::S32, false),
                    (".min", T::S64, true),
                    (".xor", T::B64, true),
                ]);
                let off = if wide { RED_U32 as u64 * 4 + self.c.below(RED_U64 as u64) * 8 } else { self.c.below(RED_U32 as u64) * 4 };
                let x = self.reg(ty);
                let red = k.red.clone();
                self.emit(format!("red.global{op}{} [{red}+{off}], {x};", ty.text()));
            }
            // Atomics on the thread's own shared slot.
            7 if self.o.shared && !self.k.sh_own.is_empty() => {
                let x = self.reg(T::U32);
                let var = self.fresh(T::U32, Kind::I32);
                let op = *self.c.pick(&[".add", ".max", ".inc", ".min"]);
                let own = k.sh_own.clone();
                self.emit(format!("atom.shared{op}.u32 {}, [{own}], {x};", var.name));
                self.define(var);
            }
            _ => self.pack_unpack(),
        }
    }

    // ---- shared memory and barriers (uniform code only) ---------------------------------------------

    fn barrier_text(&mut self) -> &'static str {
        *self.c.pick(&["bar.sync 0;", "barrier.sync 0;", "bar.sync 0;", "barrier.sync.aligned 0;", "bar.sync 1;"])
    }

    fn shared_exchange(&mut self) {
        let k = self.k.clone();
        if self.c.chance(1, 5) {
            // bar.red: a reduction over the CTA's predicates (also a barrier).
            let p = self.reg(T::Pred);
            match self.c.below(3) {
                0 => {
                    let var = self.fresh(T::U32, Kind::I32);
                    self.emit(format!("bar.red.popc.u32 {}, 0, {p};", var.name));
                    self.define(var);
                }
                n => {
                    let var = self.fresh(T::Pred, Kind::Pred);
                    let op = if n == 1 { ".and" } else { ".or" };
                    self.emit(format!("bar.red{op}.pred {}, 0, {p};", var.name));
                    self.define(var);
                }
            }
            return;
        }
        let mut kinds = vec![(T::U32, T::B32), (T::U64, T::B64), (T::U16, T::B16)];
        if self.o.floats {
            kinds.extend([(T::F32, T::F32), (T::F64, T::F64)]);
        }
        let (ty, st) = *self.c.pick(&kinds);
        let x = self.reg(ty);
        self.emit(format!("st.shared{} [{}], {x};", st.text(), k.sh_own));
        let b = self.barrier_text();
        self.emit(b);
        // The partner: another thread of the CTA.
        let part = self.fresh(T::U32, Kind::I32);
        let pn = part.name.clone();
        match self.c.below(3) {
            0 => {
                let d = 1 + self.c.below(40);
                self.emit(format!("add.u32 {pn}, {}, {d};", k.lt));
                self.emit(format!("rem.u32 {pn}, {pn}, {};", k.nt));
            }
            1 => {
                self.emit(format!("sub.u32 {pn}, {}, 1;", k.nt));
                self.emit(format!("sub.u32 {pn}, {pn}, {};", k.lt));
            }
            _ => {
                let m = 1 + self.c.below(31);
                let p = self.regs.fresh(T::Pred);
                self.emit(format!("xor.b32 {pn}, {}, {m};", k.lt));
                self.emit(format!("setp.lt.u32 {p}, {pn}, {};", k.nt));
                self.emit(format!("selp.u32 {pn}, {pn}, {}, {p};", k.lt));
            }
        }
        let addr = self.regs.fresh(T::U64);
        self.emit(format!("mul.wide.u32 {addr}, {pn}, 8;"));
        self.emit(format!("add.s64 {addr}, {addr}, {};", k.sh_base));
        let decl = *self.c.pick(fresh_decls(ty));
        let var = self.fresh(decl, dest_kind(ty, decl));
        self.emit(format!("ld.shared{} {}, [{addr}];", st.text(), var.name));
        let b = self.barrier_text();
        self.emit(b);
        self.define(var);
    }

    /// `cp.async` into the thread's 8-byte shared slot: either one copy of
    /// 4 or 8 bytes (maybe with a data-dependent src-size, zero-filling the
    /// rest), or two 4-byte copies in two commit groups with `wait_group 1`
    /// (the older one complete) read before `wait_group 0`; sometimes a
    /// barrier and a read of another thread's slot follow. Every copy is
    /// complete at the end, and the slot is read only after the wait that
    /// completes its copy.
    fn async_copy(&mut self) {
        let k = self.k.clone();
        let own = &k.sh_own;
        let word = |g: &mut Self| 4 * g.c.below(IN_U32 as u64 - 1) as usize;
        let load = |g: &mut Self, off: usize, ty: T| {
            let decl = *g.c.pick(fresh_decls(ty));
            let var = g.fresh(decl, dest_kind(ty, decl));
            g.emit(format!("ld.shared{} {}, [{own}+{off}];", if ty == T::U64 { ".b64" } else { ".b32" }, var.name));
            g.define(var);
        };
        match self.c.below(3) {
            0 => {
                let off = word(self) & !7;
                let size = *self.c.pick(&[4usize, 8]);
                let src_size = if self.c.chance(1, 2) {
                    let x = self.reg(T::U32);
                    let n = self.regs.fresh(T::U32);
                    self.emit(format!("and.b32 {n}, {x}, 7;"));
                    self.emit(format!("min.u32 {n}, {n}, {size};"));
                    format!(", {n}")
                } else {
                    String::new()
                };
                self.emit(format!("cp.async.ca.shared.global [{own}], [{}+{off}], {size}{src_size};", k.in_u32));
                if self.c.chance(1, 2) {
                    self.emit("cp.async.wait_all;");
                } else {
                    self.emit("cp.async.commit_group;");
                    self.emit("cp.async.wait_group 0;");
                }
                load(self, 0, if size == 8 { T::U64 } else { T::U32 });
            }
            _ => {
                let (a, b) = (word(self), word(self));
                self.emit(format!("cp.async.ca.shared.global [{own}], [{}+{a}], 4;", k.in_u32));
                self.emit("cp.async.commit_group;");
                self.emit(format!("cp.async.ca.shared.global [{own}+4], [{}+{b}], 4;", k.in_u32));
                self.emit("cp.async.commit_group;");
                self.emit("cp.async.wait_group 1;");
                load(self, 0, T::U32);
                self.emit("cp.async.wait_group 0;");
                load(self, 4, T::U32);
            }
        }
        if self.c.chance(1, 3) {
            // Another thread's copy, after a barrier.
            let b = self.barrier_text();
            self.emit(b);
            let pn = self.regs.fresh(T::U32);
            self.emit(format!("sub.u32 {pn}, {}, 1;", k.nt));
            self.emit(format!("sub.u32 {pn}, {pn}, {};", k.lt));
            let addr = self.regs.fresh(T::U64);
            self.emit(format!("mul.wide.u32 {addr}, {pn}, 8;"));
            self.emit(format!("add.s64 {addr}, {addr}, {};", k.sh_base));
            let var = self.fresh(T::U32, Kind::I32);
            self.emit(format!("ld.shared.u32 {}, [{addr}];", var.name));
            let b = self.barrier_text();
            self.emit(b);
            self.define(var);
        }
    }

    // ---- warp collectives (uniform code only) -------------------------------------------------------

    fn warp_op(&mut self) {
        let m = self.regs.fresh(T::B32);
        self.emit(format!("activemask.b32 {m};"));
        match self.c.below(7) {
            0 | 1 => {
                let mode = *self.c.pick(&[".up", ".down", ".bfly", ".idx"]);
                let ty = if self.o.floats && self.c.chance(1, 3) { T::F32 } else { T::B32 };
                let a = self.reg(ty);
                let b = if self.c.chance(1, 2) { format!("{}", self.c.below(32)) } else { self.reg(T::U32) };
                // The clamp: the last lane of the (possibly partial) warp, so no lane reads outside it.
                let c = if mode == ".up" {
                    "0".to_string()
                } else {
                    let c = self.regs.fresh(T::U32);
                    self.emit(format!("popc.b32 {c}, {m};"));
                    self.emit(format!("sub.u32 {c}, {c}, 1;"));
                    c
                };
                let decl = if ty == T::F32 { T::F32 } else { *self.c.pick(&[T::B32, T::U32]) };
                let d = self.fresh(decl, kind_of(ty));
                if self.c.chance(1, 2) {
                    let p = self.fresh(T::Pred, Kind::Pred);
                    self.emit(format!("shfl.sync{mode}.b32 {}|{}, {a}, {b}, {c}, {m};", d.name, p.name));
                    self.define(p);
                } else {
                    self.emit(format!("shfl.sync{mode}.b32 {}, {a}, {b}, {c}, {m};", d.name));
                }
                self.define(d);
            }
            2 => {
                let a = self.source(&np(), false);
                if self.c.chance(1, 3) {
                    let d = self.fresh(T::B32, Kind::I32);
                    self.emit(format!("vote.sync.ballot.b32 {}, {a}, {m};", d.name));
                    self.define(d);
                } else {
                    let mode = *self.c.pick(&[".all", ".any", ".uni"]);
                    let d = self.fresh(T::Pred, Kind::Pred);
                    self.emit(format!("vote.sync{mode}.pred {}, {a}, {m};", d.name));
                    self.define(d);
                }
            }
            3 => {
                let (op, ty) = *self.c.pick(&[(".add", T::U32), (".add", T::S32), (".min", T::U32), (".min", T::S32), (".max", T::U32), (".max", T::S32), (".and", T::B32), (".or", T::B32), (".xor", T::B32)]);
                let a = self.reg(ty);
                let decl_ = *self.c.pick(fresh_decls(ty));
                let d = self.fresh(decl_, Kind::I32);
                self.emit(format!("redux.sync{op}{} {}, {a}, {m};", ty.text(), d.name));
                self.define(d);
            }
            4 => {
                let ty = *self.c.pick(&[T::B32, T::B64]);
                let a = self.reg(ty);
                let d = self.fresh(T::B32, Kind::I32);
                if self.c.chance(1, 2) {
                    self.emit(format!("match.any.sync{} {}, {a}, {m};", ty.text(), d.name));
                } else {
                    let p = self.fresh(T::Pred, Kind::Pred);
                    self.emit(format!("match.all.sync{} {}|{}, {a}, {m};", ty.text(), d.name, p.name));
                    self.define(p);
                }
                self.define(d);
            }
            5 => {
                let d = self.fresh(T::U32, Kind::I32);
                let p = self.fresh(T::Pred, Kind::Pred);
                self.emit(format!("elect.sync {}|{}, {m};", d.name, p.name));
                self.define(d);
                self.define(p);
            }
            _ => {
                self.emit(format!("bar.warp.sync {m};"));
                let d = self.fresh(T::B32, Kind::I32);
                self.emit(format!("mov.b32 {}, {m};", d.name));
                self.define(d);
            }
        }
    }

    // ---- warp-level matrix tiles (uniform code, whole warps) ----------------------------------------

    /// The address of the input words of thread `lt ^ m` (a lane of the
    /// same warp: the optimizer sees lane-indexed address arithmetic).
    fn partner_words(&mut self, base: &str, bytes_per_thread: u32) -> String {
        let lt = self.k.lt.clone();
        let m = 1 + self.c.below(31);
        let (p, d, a) = (self.regs.fresh(T::U32), self.regs.fresh(T::S32), self.regs.fresh(T::U64));
        self.emit(format!("xor.b32 {p}, {lt}, {m};"));
        self.emit(format!("sub.s32 {d}, {p}, {lt};"));
        self.emit(format!("mul.wide.s32 {a}, {d}, {bytes_per_thread};"));
        self.emit(format!("add.s64 {a}, {a}, {base};"));
        a
    }

    /// Fresh 32-bit destinations, kept as values of the top scope.
    fn fresh_words(&mut self, n: usize, decl: T) -> Vec<String> {
        (0..n)
            .map(|_| {
                let kind = if decl == T::F32 { Kind::F32 } else { Kind::I32 };
                let v = self.fresh(decl, kind);
                self.define(v)
            })
            .collect()
    }

    fn matrix_tile(&mut self) {
        let k = self.k.clone();
        let addr = self.partner_words(&k.in_u32, (IN_U32 * 4) as u32);
        let w: Vec<String> = (0..8).map(|_| self.regs.fresh(T::B32)).collect();
        self.emit(format!("ld.global.v4.b32 {{{}, {}, {}, {}}}, [{addr}];", w[0], w[1], w[2], w[3]));
        self.emit(format!("ld.global.v4.b32 {{{}, {}, {}, {}}}, [{addr}+16];", w[4], w[5], w[6], w[7]));
        let list = |v: &[String]| format!("{{{}}}", v.join(", "));
        let choice = self.c.below(if self.o.shared { 5 } else { 4 });
        match choice {
            0 | 1 => {
                // Integer: exact, with wrap-around or saturation.
                let sat = if self.c.chance(1, 2) { ".satfinite" } else { "" };
                let (at, bt) = (*self.c.pick(&[".s8", ".u8"]), *self.c.pick(&[".s8", ".u8"]));
                let (shape, na, nb) = if choice == 0 { ("m16n8k16", 2, 1) } else { ("m16n8k32", 4, 2) };
                let c: Vec<String> = (0..4).map(|_| self.reg(T::B32)).collect();
                let d = self.fresh_words(4, T::B32);
                self.emit(format!("mma.sync.aligned.{shape}.row.col{sat}.s32{at}{bt}.s32 {}, {}, {}, {};", list(&d), list(&w[..na]), list(&w[na..na + nb]), list(&c)));
            }
            2 => {
                // f16 x f16 + f32: values on a grid where the sum is exact
                // (sign, exponent 1..4, two mantissa bits: multiples of 0.5).
                let h: Vec<String> = (0..6).map(|_| self.regs.fresh(T::B32)).collect();
                for (x, src) in h.iter().zip(&w) {
                    self.emit(format!("and.b32 {x}, {src}, 0x8F008F00;"));
                    self.emit(format!("or.b32 {x}, {x}, 0x40004000;"));
                }
                let c: Vec<String> = (0..4)
                    .map(|j| {
                        let f = self.regs.fresh(T::F32);
                        let i = self.regs.fresh(T::S32);
                        self.emit(format!("shr.s32 {i}, {}, 20;", w[4 + j % 4]));
                        self.emit(format!("cvt.rn.f32.s32 {f}, {i};"));
                        f
                    })
                    .collect();
                let d = self.fresh_words(4, T::F32);
                self.emit(format!("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {}, {}, {}, {};", list(&d), list(&h[..4]), list(&h[4..6]), list(&c)));
            }
            3 => {
                // movmatrix: a transpose between lanes.
                let d = self.fresh_words(1, T::B32);
                self.emit(format!("movmatrix.sync.aligned.m8n8.trans.b16 {}, {};", d[0], w[0]));
            }
            _ => {
                // ldmatrix from rows the lanes stored to their own shared slots.
                let (base, own, lt) = (k.sh_base.clone(), k.sh_own.clone(), k.lt.clone());
                self.emit(format!("st.shared.v2.b32 [{own}], {{{}, {}}};", w[0], w[1]));
                let b = self.barrier_text();
                self.emit(b);
                // Row of lane l: 16 bytes at 16 * (l % 16) in the warp's 256 bytes.
                let (x, y, a) = (self.regs.fresh(T::U32), self.regs.fresh(T::U32), self.regs.fresh(T::U64));
                self.emit(format!("and.b32 {x}, {lt}, -32;"));
                self.emit(format!("and.b32 {y}, {lt}, 15;"));
                self.emit(format!("shl.b32 {x}, {x}, 3;"));
                self.emit(format!("shl.b32 {y}, {y}, 4;"));
                self.emit(format!("add.u32 {x}, {x}, {y};"));
                self.emit(format!("cvt.u64.u32 {a}, {x};"));
                self.emit(format!("add.s64 {a}, {a}, {base};"));
                let n = *self.c.pick(&[1usize, 2, 4]);
                let trans = if self.c.chance(1, 2) { ".trans" } else { "" };
                let d = self.fresh_words(n, T::B32);
                self.emit(format!("ldmatrix.sync.aligned.m8n8.x{n}{trans}.shared.b16 {}, [{a}];", list(&d)));
                let b = self.barrier_text();
                self.emit(b);
            }
        }
    }

    // ---- control flow ---------------------------------------------------------------------------------

    fn block(&mut self, ctx: Ctx, mut n: usize) {
        let mark = self.pool.len();
        while n > 0 && self.budget > 0 && !self.c.exhausted() {
            let used = self.statement(ctx, n);
            n = n.saturating_sub(used.max(1));
        }
        self.pool.truncate(mark);
    }

    /// One statement; returns how many statements it used.
    fn statement(&mut self, ctx: Ctx, room: usize) -> usize {
        self.budget = self.budget.saturating_sub(1);
        let nested = ctx.depth < self.o.max_depth && room >= 3 && self.budget >= 3;
        let w = [
            60,                                                                      // pure (maybe guarded)
            0,
            4,                                                                       // carry chain
            if self.o.memory && !ctx.in_func { 10 } else { 0 },                      // memory
            if nested && self.o.branches { 7 } else { 0 },                           // if/else
            if nested && self.o.loops { 4 } else { 0 },                              // loop
            if ctx.uniform && self.o.shared && !ctx.in_func { 4 } else { 0 },        // shared
            if ctx.uniform && self.o.shared && self.o.async_copy && !ctx.in_func { 4 } else { 0 }, // cp.async
            if ctx.uniform && self.o.warp && !ctx.in_func { 4 } else { 0 },          // warp
            if self.o.calls && !self.funcs.is_empty() { 3 } else { 0 },              // call
            3,                                                                       // pack/unpack
            if ctx.uniform && self.o.mma && !ctx.in_func { 30 } else { 0 },          // matrix tile
        ];
        match self.c.weighted(&w) {
            0 | 1 => {
                self.pure_instruction();
                1
            }
            2 => {
                self.carry_chain();
                1
            }
            3 => {
                self.memory();
                1
            }
            4 => self.if_else(ctx, room),
            5 => self.lp(ctx, room),
            6 => {
                self.shared_exchange();
                1
            }
            7 => {
                self.async_copy();
                1
            }
            8 => {
                self.warp_op();
                1
            }
            9 => {
                self.call(ctx);
                1
            }
            10 => {
                self.pack_unpack();
                1
            }
            _ => {
                self.matrix_tile();
                1
            }
        }
    }

    /// A predicate that differs between threads (usually).
    fn condition(&mut self) -> String {
        if self.c.chance(1, 3) {
            return self.reg(T::Pred);
        }
        let mut types = vec![T::U32, T::S32, T::U64, T::S16];
        if self.o.floats {
            types.extend([T::F32, T::F64]);
        }
        let ty = *self.c.pick(&types);
        let op = *self.c.pick(cmp_ops(ty));
        let a = self.reg(ty);
        let b = if self.c.chance(1, 3) { self.imm_text(ty) } else { self.reg(ty) };
        let var = self.fresh(T::Pred, Kind::Pred);
        let p = var.name.clone();
        self.emit(format!("setp{op}{} {p}, {a}, {b};", ty.text()));
        self.define(var)
    }

    fn if_else(&mut self, ctx: Ctx, room: usize) -> usize {
        let p = self.condition();
        let neg = if self.c.chance(1, 2) { "!" } else { "" };
        let inner = Ctx { uniform: false, depth: ctx.depth + 1, ..ctx };
        let then_n = 1 + self.c.below((room as u64 / 2).max(1)) as usize;
        let else_n = if self.c.chance(1, 2) { 1 + self.c.below((room as u64 / 3).max(1)) as usize } else { 0 };
        let (l_else, l_end) = (self.label(), self.label());
        if else_n == 0 {
            self.emit(format!("@{neg}{p} bra {l_end};"));
            self.indent += 1;
            self.block(inner, then_n);
            self.indent -= 1;
        } else {
            self.emit(format!("@{neg}{p} bra {l_else};"));
            self.indent += 1;
            self.block(inner, then_n);
            let uni = if self.c.chance(1, 2) { ".uni" } else { "" };
            self.emit(format!("bra{uni} {l_end};"));
            self.indent -= 1;
            self.body.push(format!("{l_else}:"));
            self.indent += 1;
            self.block(inner, else_n);
            self.indent -= 1;
        }
        self.body.push(format!("{l_end}:"));
        1 + then_n + else_n
    }

    fn lp(&mut self, ctx: Ctx, room: usize) -> usize {
        let body_n = 1 + self.c.below((room as u64 / 2).max(1)) as usize;
        let i = self.fresh(T::U32, Kind::I32);
        let iname = i.name.clone();
        let (head, cond) = (self.label(), self.label());
        let constant = ctx.uniform || self.c.chance(1, 2);
        let p = self.regs.fresh(T::Pred);
        self.emit(format!("mov.u32 {iname}, 0;"));
        // The counter is readable in the body but never written there.
        self.pool.push(Var { assignable: false, ..i });
        if constant {
            // do { body } while (++i < n): a uniform loop when its context is.
            let trips = 1 + self.c.below(self.o.max_trips as u64);
            self.body.push(format!("{head}:"));
            self.indent += 1;
            self.block(Ctx { depth: ctx.depth + 1, ..ctx }, body_n);
            self.emit(format!("add.u32 {iname}, {iname}, 1;"));
            self.emit(format!("setp.lt.u32 {p}, {iname}, {trips};"));
            self.emit(format!("@{p} bra {head};"));
            self.indent -= 1;
        } else {
            // while (i < n) { body; ++i } with n from data: 0..max_trips-1 iterations.
            let n = self.regs.fresh(T::U32);
            let x = self.reg(T::U32);
            let m = self.o.max_trips.max(1);
            self.emit(format!("rem.u32 {n}, {x}, {m};"));
            self.emit(format!("bra {cond};"));
            self.body.push(format!("{head}:"));
            self.indent += 1;
            self.block(Ctx { uniform: false, depth: ctx.depth + 1, ..ctx }, body_n);
            self.emit(format!("add.u32 {iname}, {iname}, 1;"));
            self.indent -= 1;
            self.body.push(format!("{cond}:"));
            self.emit(format!("setp.lt.u32 {p}, {iname}, {n};"));
            self.emit(format!("@{p} bra {head};"));
        }
        1 + body_n
    }

    // ---- functions and calls -----------------------------------------------------------------------

    fn call(&mut self, ctx: Ctx) {
        let f = self.c.pick(&self.funcs).clone();
        let args: Vec<String> = f.params.iter().map(|t| self.reg(*t)).collect();
        let decl = *self.c.pick(fresh_decls(f.ret));
        let var = self.fresh(decl, kind_of(f.ret));
        let uni = if ctx.uniform && self.c.chance(1, 2) { ".uni" } else { "" };
        if f.reg_abi {
            self.emit(format!("call{uni} ({}), {}, ({});", var.name, f.name, args.join(", ")));
        } else {
            self.uniq += 1;
            let u = self.uniq;
            self.emit("{");
            self.indent += 1;
            let mut names = Vec::new();
            for (k, (t, a)) in f.params.iter().zip(&args).enumerate() {
                let pn = format!("gen_pa{u}_{k}");
                self.emit(format!(".param {} {pn};", param_type(*t).text()));
                self.emit(format!("st.param{} [{pn}], {a};", param_type(*t).text()));
                names.push(pn);
            }
            let rn = format!("gen_pr{u}");
            self.emit(format!(".param {} {rn};", param_type(f.ret).text()));
            self.emit(format!("call{uni} ({rn}), {}, ({});", f.name, names.join(", ")));
            self.emit(format!("ld.param{} {}, [{rn}];", param_type(f.ret).text(), var.name));
            self.indent -= 1;
            self.emit("}");
        }
        self.define(var);
    }

    /// A `.func` (its text); registers it for calls.
    fn function(&mut self) -> String {
        let saved_regs = std::mem::take(&mut self.regs);
        let saved_pool = std::mem::take(&mut self.pool);
        let saved_body = std::mem::take(&mut self.body);
        let mut kinds = vec![T::U32, T::S32, T::B64];
        if self.o.floats {
            kinds.extend([T::F32, T::F64]);
        }
        let nparams = 1 + self.c.below(3) as usize;
        let params: Vec<T> = (0..nparams).map(|_| *self.c.pick(&kinds)).collect();
        let ret = *self.c.pick(&kinds);
        let reg_abi = self.c.chance(1, 3);
        let name = format!("gen_f{}", self.funcs.len());
        let mut header_params = Vec::new();
        let ret_decl;
        if reg_abi {
            for (k, t) in params.iter().enumerate() {
                let pn = format!("%gen_a{k}");
                header_params.push(format!(".reg {} {pn}", t.text()));
                self.pool.push(Var { name: pn, decl: *t, kind: kind_of(*t), assignable: true });
            }
            ret_decl = format!(".reg {} %gen_ret", ret.text());
        } else {
            for (k, t) in params.iter().enumerate() {
                header_params.push(format!(".param {} gen_a{k}", param_type(*t).text()));
            }
            ret_decl = format!(".param {} gen_ret", param_type(ret).text());
            for (k, t) in params.iter().enumerate() {
                let decl = *self.c.pick(fresh_decls(*t));
                let var = self.fresh(decl, kind_of(*t));
                self.emit(format!("ld.param{} {}, [gen_a{k}];", param_type(*t).text(), var.name));
                self.define(var);
            }
        }
        // A few seed values so every kind exists.
        self.seed_kinds(true);
        let ctx = Ctx { uniform: false, depth: 1, in_func: true };
        self.budget = 6 + self.c.below(12) as usize;
        let early = self.c.chance(1, 4);
        let n = self.budget;
        self.block_keep(ctx, n / 2 + 1);
        if early {
            // An early return (the result written first).
            let x = self.reg(ret);
            self.write_ret(reg_abi, ret, &x);
            let p = self.reg(T::Pred);
            self.emit(format!("@{p} ret;"));
        }
        self.block_keep(ctx, n / 2 + 1);
        let x = self.reg(ret);
        self.write_ret(reg_abi, ret, &x);
        self.emit("ret;");
        let body = std::mem::replace(&mut self.body, saved_body);
        let regs = std::mem::replace(&mut self.regs, saved_regs);
        self.pool = saved_pool;
        self.funcs.push(FuncSig { name: name.clone(), params, ret, reg_abi });
        format!(".func ({ret_decl}) {name}({})\n{{\n{}{}\n}}\n", header_params.join(", "), regs.declarations(), body.join("\n"))
    }

    fn write_ret(&mut self, reg_abi: bool, ret: T, x: &str) {
        if reg_abi {
            self.emit(format!("mov{} %gen_ret, {x};", ret.text()));
        } else {
            self.emit(format!("st.param{} [gen_ret], {x};", param_type(ret).text()));
        }
    }

    /// A block whose new values stay visible afterwards (top level of a body).
    fn block_keep(&mut self, ctx: Ctx, mut n: usize) {
        while n > 0 && self.budget > 0 && !self.c.exhausted() {
            let used = self.statement(ctx, n);
            n = n.saturating_sub(used.max(1));
        }
    }

    /// Makes sure every kind has a value (converting from what exists).
    fn seed_kinds(&mut self, in_func: bool) {
        let _ = in_func;
        for kind in Kind::ALL {
            if self.pool.iter().any(|v| v.kind == kind) {
                continue;
            }
            if kind.is_float() && !self.o.floats {
                continue;
            }
            let line_var = match kind {
                Kind::Pred => {
                    let _ = self.materialize(T::Pred);
                    continue;
                }
                Kind::I16 => (T::U16, "cvt.u16.u32", T::U32),
                Kind::I32 => {
                    let _ = self.materialize(T::U32);
                    continue;
                }
                Kind::I64 => (T::U64, "cvt.u64.u32", T::U32),
                Kind::F32 => (T::F32, "cvt.rn.f32.s32", T::S32),
                Kind::F64 => (T::F64, "cvt.rn.f64.s32", T::S32),
                Kind::F16 => (T::F16, "cvt.rn.f16.f32", T::F32),
                Kind::Bf16 => (T::Bf16, "cvt.rn.bf16.f32", T::F32),
            };
            let (ty, op, from) = line_var;
            let x = self.reg(from);
            let decl = fresh_decls(ty)[0];
            let var = self.fresh(decl, kind);
            self.emit(format!("{op} {}, {x};", var.name));
            self.define(var);
        }
    }

    // ---- the kernel -------------------------------------------------------------------------------------

    fn ro(&mut self, decl: T, kind: Kind) -> String {
        let name = self.regs.fresh(decl);
        self.pool.push(Var { name: name.clone(), decl, kind, assignable: false });
        name
    }

    fn kernel_text(&mut self) -> (String, KernelSpec) {
        let o = self.o;
        let mut params: Vec<ParamSpec> = vec![
            ParamSpec::Buffer { name: "gen_in_u32".into(), elem: T::U32, len: BufLen::PerThread(IN_U32), output: false },
            ParamSpec::Buffer { name: "gen_in_f32".into(), elem: T::F32, len: BufLen::PerThread(IN_F32), output: false },
            ParamSpec::Buffer { name: "gen_in_f64".into(), elem: T::F64, len: BufLen::PerThread(IN_F64), output: false },
            ParamSpec::Buffer { name: "gen_in_u64".into(), elem: T::U64, len: BufLen::PerThread(IN_U64), output: false },
            ParamSpec::Buffer { name: "gen_acc".into(), elem: T::U32, len: BufLen::PerThread(ACC_U32), output: true },
            ParamSpec::Buffer { name: "gen_red".into(), elem: T::U32, len: BufLen::Fixed(RED_U32 + 2 * RED_U64), output: true },
            ParamSpec::Scalar { name: "gen_s_u32".into(), ty: T::U32 },
            ParamSpec::Scalar { name: "gen_s_s64".into(), ty: T::S64 },
        ];
        if o.floats {
            params.push(ParamSpec::Scalar { name: "gen_s_f32".into(), ty: T::F32 });
            params.push(ParamSpec::Scalar { name: "gen_s_f64".into(), ty: T::F64 });
        }
        // Prologue: ids.
        let tid: Vec<String> = ["x", "y", "z"].iter().map(|d| {
            let r = self.ro(T::U32, Kind::I32);
            self.emit(format!("mov.u32 {r}, %tid.{d};"));
            r
        }).collect();
        let ntid: Vec<String> = ["x", "y", "z"].iter().map(|d| {
            let r = self.ro(T::U32, Kind::I32);
            self.emit(format!("mov.u32 {r}, %ntid.{d};"));
            r
        }).collect();
        let ctaid: Vec<String> = ["x", "y", "z"].iter().map(|d| {
            let r = self.ro(T::U32, Kind::I32);
            self.emit(format!("mov.u32 {r}, %ctaid.{d};"));
            r
        }).collect();
        let nctaid: Vec<String> = ["x", "y", "z"].iter().map(|d| {
            let r = self.regs.fresh(T::U32);
            self.emit(format!("mov.u32 {r}, %nctaid.{d};"));
            r
        }).collect();
        let lt = self.ro(T::U32, Kind::I32);
        self.emit(format!("mad.lo.u32 {lt}, {}, {}, {};", tid[2], ntid[1], tid[1]));
        self.emit(format!("mad.lo.u32 {lt}, {lt}, {}, {};", ntid[0], tid[0]));
        let nt = self.ro(T::U32, Kind::I32);
        self.emit(format!("mul.lo.u32 {nt}, {}, {};", ntid[0], ntid[1]));
        self.emit(format!("mul.lo.u32 {nt}, {nt}, {};", ntid[2]));
        let bl = self.regs.fresh(T::U32);
        self.emit(format!("mad.lo.u32 {bl}, {}, {}, {};", ctaid[2], nctaid[1], ctaid[1]));
        self.emit(format!("mad.lo.u32 {bl}, {bl}, {}, {};", nctaid[0], ctaid[0]));
        let gtid = self.ro(T::U32, Kind::I32);
        self.emit(format!("mad.lo.u32 {gtid}, {bl}, {nt}, {lt};"));
        let lane = self.ro(T::U32, Kind::I32);
        self.emit(format!("mov.u32 {lane}, %laneid;"));
        // Buffer pointers: the thread's slice of each.
        let ptr = |g: &mut Self, param: &str, stride: usize, per_thread: bool| -> String {
            let p = g.regs.fresh(T::U64);
            g.emit(format!("ld.param.u64 {p}, [{param}];"));
            g.emit(format!("cvta.to.global.u64 {p}, {p};"));
            if per_thread {
                g.emit(format!("mad.wide.u32 {p}, {gtid}, {stride}, {p};"));
            }
            p
        };
        self.k.in_u32 = ptr(self, "gen_in_u32", IN_U32 * 4, true);
        self.k.in_f32 = ptr(self, "gen_in_f32", IN_F32 * 4, true);
        self.k.in_f64 = ptr(self, "gen_in_f64", IN_F64 * 8, true);
        self.k.in_u64 = ptr(self, "gen_in_u64", IN_U64 * 8, true);
        self.k.acc = ptr(self, "gen_acc", ACC_U32 * 4, true);
        self.k.red = ptr(self, "gen_red", 0, false);
        self.k.lt = lt.clone();
        self.k.nt = nt.clone();
        if o.shared {
            let base = self.regs.fresh(T::U64);
            self.emit(format!("mov.u64 {base}, gen_sh;"));
            let own = self.regs.fresh(T::U64);
            self.emit(format!("mul.wide.u32 {own}, {lt}, 8;"));
            self.emit(format!("add.s64 {own}, {own}, {base};"));
            self.k.sh_base = base;
            self.k.sh_own = own;
        }
        // Local memory starts defined.
        for off in (0..LOCAL_BYTES).step_by(8) {
            self.emit(format!("st.local.u64 [gen_loc+{off}], 0;"));
        }
        // Scalars.
        let s = self.regs.fresh(T::U32);
        self.emit(format!("ld.param.u32 {s}, [gen_s_u32];"));
        self.pool.push(Var { name: s, decl: T::U32, kind: Kind::I32, assignable: true });
        let s = self.regs.fresh(T::S64);
        self.emit(format!("ld.param.s64 {s}, [gen_s_s64];"));
        self.pool.push(Var { name: s, decl: T::S64, kind: Kind::I64, assignable: true });
        if o.floats {
            let s = self.regs.fresh(T::F32);
            self.emit(format!("ld.param.f32 {s}, [gen_s_f32];"));
            self.pool.push(Var { name: s, decl: T::F32, kind: Kind::F32, assignable: true });
            let s = self.regs.fresh(T::F64);
            self.emit(format!("ld.param.f64 {s}, [gen_s_f64];"));
            self.pool.push(Var { name: s, decl: T::F64, kind: Kind::F64, assignable: true });
        }
        // Initial values from the inputs.
        let k = self.k.clone();
        for j in 0..3 {
            let decl = *self.c.pick(&[T::U32, T::S32, T::B32]);
            let var = self.fresh(decl, Kind::I32);
            self.emit(format!("ld.global.u32 {}, [{}+{}];", var.name, k.in_u32, 4 * j));
            self.define(var);
        }
        for j in 0..2 {
            let var = self.fresh(T::U64, Kind::I64);
            self.emit(format!("ld.global.u64 {}, [{}+{}];", var.name, k.in_u64, 8 * j));
            self.define(var);
        }
        if o.floats {
            for j in 0..3 {
                let var = self.fresh(T::F32, Kind::F32);
                self.emit(format!("ld.global.f32 {}, [{}+{}];", var.name, k.in_f32, 4 * j));
                self.define(var);
            }
            for j in 0..2 {
                let var = self.fresh(T::F64, Kind::F64);
                self.emit(format!("ld.global.f64 {}, [{}+{}];", var.name, k.in_f64, 8 * j));
                self.define(var);
            }
        }
        self.seed_kinds(false);
        // The body.
        self.budget = o.stmts.max(1);
        let ctx = Ctx { uniform: true, depth: 0, in_func: false };
        let n = if self.c.bytes.is_some() { self.budget } else { o.stmts / 2 + self.c.below(o.stmts as u64 / 2 + 1) as usize };
        self.block_keep(ctx, n);
        // Epilogue: every value of the top scope to the output buffers.
        let mut groups: BTreeMap<Kind, Vec<Var>> = BTreeMap::new();
        for v in self.pool.clone() {
            groups.entry(v.kind).or_default().push(v);
        }
        let outputs: [(Kind, &str, T, T); 7] = [
            (Kind::I16, "gen_out_u16", T::U16, T::B16),
            (Kind::F16, "gen_out_f16", T::F16, T::B16),
            (Kind::Bf16, "gen_out_bf16", T::Bf16, T::B16),
            (Kind::I32, "gen_out_u32", T::U32, T::B32),
            (Kind::F32, "gen_out_f32", T::F32, T::B32),
            (Kind::I64, "gen_out_u64", T::U64, T::B64),
            (Kind::F64, "gen_out_f64", T::F64, T::B64),
        ];
        // Predicates go to the u32 buffer as 0/1.
        if let Some(preds) = groups.remove(&Kind::Pred) {
            for p in preds {
                let r = self.regs.fresh(T::U32);
                self.emit(format!("selp.u32 {r}, 1, 0, {};", p.name));
                groups.entry(Kind::I32).or_default().push(Var { name: r, decl: T::U32, kind: Kind::I32, assignable: false });
            }
        }
        for (kind, name, elem, st) in outputs {
            let Some(vars) = groups.get(&kind) else { continue };
            let size = (elem.bits() / 8) as usize;
            params.push(ParamSpec::Buffer { name: name.into(), elem, len: BufLen::PerThread(vars.len()), output: true });
            let p = ptr(self, name, vars.len() * size, true);
            for (j, v) in vars.clone().iter().enumerate() {
                let sty = if v.decl == T::F32 || v.decl == T::F64 { v.decl } else { st };
                self.emit(format!("st.global{} [{p}+{}], {};", sty.text(), j * size, v.name));
            }
        }
        self.emit("ret;");
        let plist: Vec<String> = params.iter().map(|p| match p {
            ParamSpec::Buffer { name, .. } => format!("\t.param .u64 {name}"),
            ParamSpec::Scalar { name, ty } => format!("\t.param {} {name}", ty.text()),
        }).collect();
        let text = format!(
            ".visible .entry {KERNEL}(\n{}\n)\n{{\n\t.local .align 8 .b8 gen_loc[{LOCAL_BYTES}];\n{}{}\n}}\n",
            plist.join(",\n"),
            self.regs.declarations(),
            self.body.join("\n")
        );
        (text, KernelSpec { name: KERNEL.into(), params, max_block_threads: o.max_block_threads, full_warps: o.mma })
    }
}

/// The `.b` type of a width (for masks).
fn bits_type(t: T) -> T {
    match t.bits() {
        16 => T::B16,
        64 => T::B64,
        _ => T::B32,
    }
}

/// The type a `.param` of a value of type `t` is declared with.
fn param_type(t: T) -> T {
    t
}
