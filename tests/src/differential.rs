//! Differential testing on the reference interpreter: run an original and a
//! transformed module on the same inputs and compare every buffer.
//!
//! For each input seed and each launch shape ([`SHAPES`] by default, from one
//! thread to several CTAs with 2-D/3-D blocks and partial warps) both modules
//! run with the same random buffers and scalars ([`launch_for`]). Every
//! buffer (inputs included) is compared element by element, using the
//! interpreter's per-byte [`Quality`]:
//!
//! - both `Exact`: the bytes must be equal;
//! - `AnyNan` on either side: both must be NaN (floating-point elements;
//!   elements of other types are not compared), or hold the same bytes of
//!   the same qualities (a narrower NaN inside the element, such as an
//!   `f16x2` lane stored as `.f32`);
//! - `Approx { ulps }` on either side: floating-point elements must be
//!   within the larger bound in ulps (or both NaN); other elements must be
//!   equal; `u32::MAX` ("no useful bound") is not compared;
//! - `Unspecified` on either side: not compared.
//!
//! A run that fails is a difference unless both fail the same way (the same
//! kind of error, and for unsupported instructions the same instruction), or
//! the original alone stops at its step limit or at an instruction the
//! interpreter does not execute (a transformation may remove a dead one):
//! that run is counted as inconclusive. The transformed module gets a step
//! limit of eight times the original's steps (so a transformation that loops
//! forever is a difference, not a hang).
//!
//! One-liners for tests: [`check_round_trip_preserves_behaviour`],
//! [`check_transform`] (any `Module -> Module` function over generated
//! kernels), [`check_optimizer`].

use crate::gen::{self, BufLen, Choices, GenOptions, KernelSpec, ParamSpec};
use ptx_ir::eval::Quality;
use ptx_ir::interp::{self, KernelArg, Launch, RunError, RunOutput};
use ptx_ir::ir::Module;
use ptx_ir::isa::{ScalarType as T, TypeClass};

/// A grid and block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub grid: [u32; 3],
    pub block: [u32; 3],
}

const fn shape(grid: [u32; 3], block: [u32; 3]) -> Shape {
    Shape { grid, block }
}

/// The default shapes: a full warp, one thread, 2-D and 3-D blocks, partial
/// warps, several CTAs.
pub const SHAPES: [Shape; 5] = [
    shape([1, 1, 1], [32, 1, 1]),
    shape([2, 1, 1], [8, 4, 1]),
    shape([1, 2, 1], [40, 1, 1]),
    shape([3, 1, 1], [5, 3, 2]),
    shape([1, 1, 1], [1, 1, 1]),
];

/// What a comparison covered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiffStats {
    /// Pairs of runs (one per seed and shape).
    pub runs: usize,
    /// Runs where both modules failed the same way.
    pub inconclusive: usize,
    /// Elements compared.
    pub compared: usize,
    /// Elements not compared (unspecified, no useful bound).
    pub skipped: usize,
}

impl DiffStats {
    pub fn add(&mut self, o: DiffStats) {
        self.runs += o.runs;
        self.inconclusive += o.inconclusive;
        self.compared += o.compared;
        self.skipped += o.skipped;
    }
}

impl std::fmt::Display for DiffStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} runs ({} inconclusive), {} elements compared, {} skipped", self.runs, self.inconclusive, self.compared, self.skipped)
    }
}

/// Options of a comparison.
#[derive(Clone, Debug)]
pub struct DiffOptions {
    pub shapes: Vec<Shape>,
    /// Step limit of the original's runs.
    pub max_steps: u64,
}

impl Default for DiffOptions {
    fn default() -> DiffOptions {
        DiffOptions { shapes: SHAPES.to_vec(), max_steps: 20_000_000 }
    }
}

// ------------------------------------------------------------------------------------------------ inputs


fn elem_bytes(t: T) -> usize {
    (t.bits().max(8) / 8) as usize
}

/// The powers of two a moderate random float is scaled by: 2^-4 to 2^4.
const SCALES: [f64; 9] = [0.0625, 0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0];

/// A random value of type `t`: integers are random bits (a quarter of them
/// small), floats mostly moderate values, some integers and special values
/// (zeros, infinities, NaN, subnormals, extremes).
fn random_value(t: T, rng: &mut Choices) -> u128 {
    if t.class() != TypeClass::Float {
        let bits = t.bits().max(8);
        let v = if rng.below(4) == 0 { (rng.below(33) as i64 - 16) as u64 as u128 } else { rng.bits() as u128 | (rng.bits() as u128) << 64 };
        return v & ptx_ir::eval::bits_mask(bits);
    }
    let x: f64 = match rng.below(20) {
        0 => {
            let specials = [0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1.0, -1.0, 1.0e-40, -3.0e-39, 65504.0, 3.0e38, 1.0e-310];
            specials[rng.below(specials.len() as u64) as usize]
        }
        1 | 2 => rng.below(201) as f64 - 100.0,
        _ => {
            let u = (rng.bits() >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0;
            u * SCALES[rng.below(SCALES.len() as u64) as usize]
        }
    };
    match t {
        T::F64 => x.to_bits() as u128,
        T::F32 => (x as f32).to_bits() as u128,
        _ => ptx_ir::eval::imm_bits(&ptx_ir::ir::Imm::Float(ptx_ir::ir::FloatLit::F64(x.to_bits())), t),
    }
}

fn threads(s: &Shape) -> usize {
    s.grid.iter().chain(&s.block).map(|&d| d as usize).product()
}

/// The launch of `spec` for `shape` with inputs drawn from `seed`.
pub fn launch_for(spec: &KernelSpec, shape: &Shape, seed: u64) -> Launch {
    let mut rng = Choices::seeded(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0xD1B5_4A32_D192_ED03);
    let mut l = Launch::new(&spec.name, shape.grid, shape.block);
    let n = threads(shape);
    for p in &spec.params {
        match p {
            ParamSpec::Buffer { elem, len, .. } => {
                let count = match len {
                    BufLen::PerThread(k) => k * n,
                    BufLen::Fixed(k) => *k,
                };
                let size = elem_bytes(*elem);
                let mut bytes = Vec::with_capacity(count * size);
                for _ in 0..count {
                    bytes.extend_from_slice(&random_value(*elem, &mut rng).to_le_bytes()[..size]);
                }
                l.args.push(KernelArg::Buffer(l.buffers.len()));
                l.buffers.push(bytes);
            }
            ParamSpec::Scalar { ty, .. } => {
                let bits = random_value(*ty, &mut rng);
                l.args.push(KernelArg::Scalar { ty: *ty, bits });
            }
        }
    }
    l
}

/// The buffers of `spec`, in argument order: (name, element type).
fn buffers(spec: &KernelSpec) -> Vec<(&str, T)> {
    spec.params.iter().filter_map(|p| match p {
        ParamSpec::Buffer { name, elem, .. } => Some((name.as_str(), *elem)),
        _ => None,
    }).collect()
}

// ------------------------------------------------------------------------------------------------ comparing

fn rank(q: Quality) -> u8 {
    match q {
        Quality::Exact => 0,
        Quality::Approx { .. } => 1,
        Quality::AnyNan => 2,
        Quality::Unspecified => 3,
    }
}

fn element_quality(qs: &[Quality]) -> Quality {
    qs.iter().copied().max_by_key(|q| rank(*q)).unwrap_or(Quality::Exact)
}

fn is_nan(t: T, v: u128) -> bool {
    match t {
        T::F16 => v & 0x7c00 == 0x7c00 && v & 0x3ff != 0,
        T::Bf16 => v & 0x7f80 == 0x7f80 && v & 0x7f != 0,
        T::F32 => f32::from_bits(v as u32).is_nan(),
        T::F64 => f64::from_bits(v as u64).is_nan(),
        _ => false,
    }
}

/// Distance in units in the last place between two floats of type `t`.
fn ulp_distance(t: T, a: u128, b: u128) -> u128 {
    let bits = t.bits();
    let ordered = |v: u128| -> i128 {
        let sign = v >> (bits - 1) & 1 == 1;
        let mag = (v & ptx_ir::eval::bits_mask(bits - 1)) as i128;
        if sign {
            -mag
        } else {
            mag
        }
    };
    (ordered(a) - ordered(b)).unsigned_abs()
}

fn is_float(t: T) -> bool {
    matches!(t, T::F16 | T::Bf16 | T::F32 | T::F64)
}

fn show(t: T, v: u128, q: Quality) -> String {
    let val = match t {
        T::F32 => format!(" = {:e}", f32::from_bits(v as u32)),
        T::F64 => format!(" = {:e}", f64::from_bits(v as u64)),
        _ => String::new(),
    };
    format!("0x{v:0w$x}{val} ({q:?})", w = elem_bytes(t) * 2)
}

/// Compares two buffers; returns the first few differences.
fn compare_buffer(name: &str, t: T, a: &interp::BufferOut, b: &interp::BufferOut, stats: &mut DiffStats) -> Vec<String> {
    let size = elem_bytes(t);
    let mut diffs = Vec::new();
    if a.bytes.len() != b.bytes.len() {
        return vec![format!("buffer `{name}`: {} bytes vs {}", a.bytes.len(), b.bytes.len())];
    }
    // The common case, element by element below: every byte exact on both
    // sides and the same, every element compared and equal.
    let exact = |q: &[Quality]| q.iter().all(|q| *q == Quality::Exact);
    if a.bytes == b.bytes && exact(&a.quality) && exact(&b.quality) {
        stats.compared += a.bytes.len().div_ceil(size);
        return diffs;
    }
    for (i, (ca, cb)) in a.bytes.chunks(size).zip(b.bytes.chunks(size)).enumerate() {
        let (bytes_qa, bytes_qb) = (&a.quality[i * size..i * size + ca.len()], &b.quality[i * size..i * size + cb.len()]);
        let (qa, qb) = (element_quality(bytes_qa), element_quality(bytes_qb));
        let va = interp::memory::from_bytes(ca);
        let vb = interp::memory::from_bytes(cb);
        let same = match (qa, qb) {
            (Quality::Unspecified, _) | (_, Quality::Unspecified) => None,
            (Quality::Exact, Quality::Exact) => Some(va == vb),
            (Quality::AnyNan, Quality::AnyNan | Quality::Exact) | (Quality::Exact, Quality::AnyNan) => {
                if is_float(t) {
                    // A NaN of the element's type on both sides; or the
                    // same bytes of the same qualities, which is how both
                    // sides leave a narrower NaN inside the element (an
                    // `f16x2` lane stored with `st.f32`: 0x00007fff is no
                    // `f32` NaN).
                    Some((is_nan(t, va) && is_nan(t, vb)) || (va == vb && bytes_qa == bytes_qb))
                } else {
                    None
                }
            }
            (Quality::AnyNan, _) | (_, Quality::AnyNan) => None,
            (qa, qb) => {
                let ulps = |q: Quality| if let Quality::Approx { ulps } = q { ulps } else { 0 };
                let bound = ulps(qa).max(ulps(qb));
                if bound == u32::MAX {
                    None
                } else if is_float(t) {
                    Some((is_nan(t, va) && is_nan(t, vb)) || (!is_nan(t, va) && !is_nan(t, vb) && ulp_distance(t, va, vb) <= bound as u128))
                } else {
                    Some(va == vb)
                }
            }
        };
        match same {
            None => stats.skipped += 1,
            Some(true) => stats.compared += 1,
            Some(false) => {
                stats.compared += 1;
                if diffs.len() < 6 {
                    diffs.push(format!("buffer `{name}` element {i}: original {} vs transformed {}", show(t, va, qa), show(t, vb, qb)));
                }
            }
        }
    }
    diffs
}

/// Compares what the two runs printed, thread by thread: the order of
/// `printf`s of different threads is not determined, a thread's own order
/// is. A text showing a value that is not exactly determined is not
/// compared (but counts).
fn compare_printed(a: &[interp::Printed], b: &[interp::Printed], stats: &mut DiffStats) -> Vec<String> {
    let by_thread = |p: &[interp::Printed]| {
        let mut m: std::collections::BTreeMap<String, Vec<interp::Printed>> = Default::default();
        for x in p {
            m.entry(x.thread.clone()).or_default().push(x.clone());
        }
        m
    };
    let (ma, mb) = (by_thread(a), by_thread(b));
    let mut diffs = Vec::new();
    for thread in ma.keys().chain(mb.keys().filter(|k| !ma.contains_key(*k))) {
        let (xa, xb) = (ma.get(thread).map_or(&[][..], |v| &v[..]), mb.get(thread).map_or(&[][..], |v| &v[..]));
        if xa.len() != xb.len() {
            diffs.push(format!("thread {thread} printed {} time(s) in the original, {} in the transformed module", xa.len(), xb.len()));
            continue;
        }
        for (pa, pb) in xa.iter().zip(xb) {
            if !pa.exact || !pb.exact {
                stats.skipped += 1;
                continue;
            }
            stats.compared += 1;
            if pa.text != pb.text && diffs.len() < 6 {
                diffs.push(format!("thread {thread} printed {:?} in the original, {:?} in the transformed module", pa.text, pb.text));
            }
        }
    }
    diffs
}

fn same_failure(a: &RunError, b: &RunError) -> bool {
    match (a, b) {
        (RunError::Unsupported { what: x, .. }, RunError::Unsupported { what: y, .. }) => x == y,
        (RunError::Launch(_), RunError::Launch(_)) => true,
        (RunError::Fault { .. }, RunError::Fault { .. }) => true,
        (RunError::Deadlock(_), RunError::Deadlock(_)) => true,
        (RunError::StepLimit { .. }, RunError::StepLimit { .. }) => true,
        (RunError::Trap { .. }, RunError::Trap { .. }) => true,
        (RunError::AssertFailed { message: x, .. }, RunError::AssertFailed { message: y, .. }) => x == y,
        _ => false,
    }
}

/// A parsed module with its text (the interpreter reports positions in it)
/// and the name the runs give it.
pub struct Prepared<'a> {
    pub parsed: &'a ptx_ir::Parsed,
    pub text: &'a str,
    pub name: &'static str,
}

fn parse(name: &'static str, text: &str) -> Result<ptx_ir::Parsed, String> {
    ptx_ir::parse(name, text.as_bytes()).map_err(|d| format!("the {name} module does not parse: {d}"))
}

/// `p` laid out and pre-decoded once for the runs of a comparison (every
/// launch of a spec passes its `buffers` buffers); a module the interpreter
/// cannot prepare fails each run with that error.
fn prepare<'a>(p: &'a Prepared, buffers: usize) -> Result<interp::Prepared<'a>, RunError> {
    interp::Prepared::new(&p.parsed.module, &p.parsed.source_map, p.name, p.text.as_bytes(), buffers)
}

fn run(p: &Result<interp::Prepared, RunError>, launch: &Launch) -> Result<RunOutput, RunError> {
    match p {
        Ok(p) => p.run(launch),
        Err(e) => Err(e.clone()),
    }
}

/// Runs `original` and `transformed` (PTX texts) on the launches of `spec`
/// for every seed and shape of `opts`, and compares the buffers. Returns what
/// was compared, or a description of the first run that differs.
pub fn same_behaviour_with(original: &str, transformed: &str, spec: &KernelSpec, seeds: &[u64], opts: &DiffOptions) -> Result<DiffStats, String> {
    let (a, b) = (parse("original", original)?, parse("transformed", transformed)?);
    same_behaviour_parsed(&Prepared { parsed: &a, text: original, name: "original" }, &Prepared { parsed: &b, text: transformed, name: "transformed" }, spec, seeds, opts)
}

/// [`same_behaviour_with`] of modules the caller has parsed already (from
/// their texts: the same modules a parse here would give).
pub fn same_behaviour_parsed(a: &Prepared, b: &Prepared, spec: &KernelSpec, seeds: &[u64], opts: &DiffOptions) -> Result<DiffStats, String> {
    let names = buffers(spec);
    let (a, b) = (prepare(a, names.len()), prepare(b, names.len()));
    let mut stats = DiffStats::default();
    for &seed in seeds {
        for shape in &opts.shapes {
            let block_threads = threads(&Shape { grid: [1, 1, 1], block: shape.block });
            if block_threads > spec.max_block_threads as usize || (spec.full_warps && block_threads % 32 != 0) {
                continue;
            }
            let mut launch = launch_for(spec, shape, seed);
            launch.max_steps = opts.max_steps;
            stats.runs += 1;
            let where_ = format!("grid {:?} block {:?} input seed {seed}", shape.grid, shape.block);
            let ra = run(&a, &launch);
            if let Ok(out) = &ra {
                launch.max_steps = out.steps.saturating_mul(8).max(100_000);
            }
            let rb = run(&b, &launch);
            match (ra, rb) {
                (Ok(x), Ok(y)) => {
                    let mut diffs = Vec::new();
                    for (k, (xa, yb)) in x.buffers.iter().zip(&y.buffers).enumerate() {
                        let (name, t) = names.get(k).copied().unwrap_or(("?", T::U8));
                        diffs.extend(compare_buffer(name, t, xa, yb, &mut stats));
                    }
                    diffs.extend(compare_printed(&x.printed, &y.printed, &mut stats));
                    if !diffs.is_empty() {
                        return Err(format!("{where_}: the outputs differ:\n  {}", diffs.join("\n  ")));
                    }
                }
                (Err(e), Err(f)) if same_failure(&e, &f) => stats.inconclusive += 1,
                // The original ran out of steps, or reached an instruction the
                // interpreter does not execute: what it would compute is not
                // known, and a transformation may remove a dead one.
                (Err(RunError::StepLimit { .. } | RunError::Unsupported { .. }), Ok(_)) => stats.inconclusive += 1,
                (Err(e), Ok(_)) => return Err(format!("{where_}: the original fails ({e}) but the transformed module runs")),
                (Ok(_), Err(f)) => return Err(format!("{where_}: the transformed module fails ({f}) but the original runs")),
                (Err(e), Err(f)) => return Err(format!("{where_}: the modules fail differently:\n  original: {e}\n  transformed: {f}")),
            }
        }
    }
    Ok(stats)
}

/// [`same_behaviour_with`] with the default shapes and step limit.
pub fn same_behaviour(original: &str, transformed: &str, spec: &KernelSpec, seeds: &[u64]) -> Result<DiffStats, String> {
    same_behaviour_with(original, transformed, spec, seeds, &DiffOptions::default())
}

// ------------------------------------------------------------------------------------------------ one-liners

/// Parses `text`, prints it, and checks the printed module behaves like the
/// original on every default shape for `seeds`.
pub fn check_round_trip_preserves_behaviour(text: &str, spec: &KernelSpec, seeds: &[u64]) -> Result<DiffStats, String> {
    let parsed = ptx_ir::parse("original", text.as_bytes()).map_err(|d| d.to_string())?;
    let printed = ptx_print::print_module(&parsed.module);
    same_behaviour(text, &printed, spec, seeds)
}

/// Applies `transform` to a module and checks the result: it prints, the
/// printed text re-parses, verifies without errors, and behaves like the
/// original (`text`) for `seeds` on the default shapes.
pub fn check_module_transform(text: &str, spec: &KernelSpec, seeds: &[u64], transform: impl Fn(Module) -> Module) -> Result<DiffStats, String> {
    let parsed = ptx_ir::parse("original", text.as_bytes()).map_err(|d| d.to_string())?;
    let out = transform(parsed.module);
    let printed = ptx_print::print_module(&out);
    let again = ptx_ir::parse("transformed", printed.as_bytes()).map_err(|d| format!("the transformed module does not re-parse: {d}\n{printed}"))?;
    let errors: Vec<String> = ptx_ir::verify::verify_parsed(&again, "transformed", printed.as_bytes()).into_iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
    if !errors.is_empty() {
        return Err(format!("the transformed module does not verify:\n  {}", errors.join("\n  ")));
    }
    same_behaviour(text, &printed, spec, seeds).map_err(|e| format!("{e}\n--- transformed module ---\n{printed}"))
}

/// Generates a kernel for each of `seeds` (with `opts`), applies `transform`
/// and checks the result ([`check_module_transform`], two input seeds per
/// kernel). The error names the kernel seed and shows the original module.
///
/// ```
/// use ptx_tests::gen::GenOptions;
/// // The identity "pass": every compared element agrees.
/// let stats = ptx_tests::differential::check_transform(0..3, &GenOptions::small(), |m| m).unwrap();
/// assert!(stats.compared > 0);
/// ```
pub fn check_transform(seeds: impl IntoIterator<Item = u64>, opts: &GenOptions, transform: impl Fn(Module) -> Module) -> Result<DiffStats, String> {
    let mut stats = DiffStats::default();
    for seed in seeds {
        let k = gen::kernel(seed, opts);
        let s = check_module_transform(&k.text, &k.spec, &[seed, seed ^ 0xABCD], &transform).map_err(|e| format!("generated kernel seed {seed}: {e}\n--- original module ---\n{}", k.text))?;
        stats.add(s);
    }
    Ok(stats)
}

/// [`check_transform`] with `ptx_opt::optimize` at `level`.
pub fn check_optimizer(seeds: impl IntoIterator<Item = u64>, level: ptx_opt::OptLevel) -> Result<DiffStats, String> {
    check_transform(seeds, &GenOptions::default(), |m| ptx_opt::optimize(m, level))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer(bytes: &[u8], quality: &[Quality]) -> interp::BufferOut {
        interp::BufferOut { bytes: bytes.to_vec(), quality: quality.to_vec() }
    }

    /// An `f32` element holding an `f16` NaN in its low half (an `f16x2`
    /// result stored with `st.f32`) is no `f32` NaN: equal on both sides,
    /// it is the same; changed in its exact half, or claimed exact on one
    /// side, it differs. (Campaign input 1,410,906 at -O2 reported such an
    /// element of both modules as a difference.)
    #[test]
    fn a_narrower_nan_inside_an_element_compares_by_its_bytes() {
        use Quality::{AnyNan, Exact};
        let nan_low_half = buffer(&[0xff, 0x7f, 0, 0], &[AnyNan, AnyNan, Exact, Exact]);
        let mut stats = DiffStats::default();
        assert!(compare_buffer("b", T::F32, &nan_low_half, &nan_low_half, &mut stats).is_empty());
        let other_high_half = buffer(&[0xff, 0x7f, 1, 0], &[AnyNan, AnyNan, Exact, Exact]);
        assert_eq!(compare_buffer("b", T::F32, &nan_low_half, &other_high_half, &mut stats).len(), 1);
        let claimed_exact = buffer(&[0xff, 0x7f, 0, 0], &[Exact; 4]);
        assert_eq!(compare_buffer("b", T::F32, &nan_low_half, &claimed_exact, &mut stats).len(), 1);
        // An f32 NaN of any payload against another is still the same.
        let (nan_a, nan_b) = (buffer(&0x7fc0_0000u32.to_le_bytes(), &[AnyNan; 4]), buffer(&0x7f80_0001u32.to_le_bytes(), &[AnyNan; 4]));
        assert!(compare_buffer("b", T::F32, &nan_a, &nan_b, &mut stats).is_empty());
        assert_eq!(stats.compared, 4);
    }
}
