//! The fuzz targets of `fuzz/` as ordinary tests over fixed seeds, so CI runs
//! them on stable Rust:
//!
//! - `parse`: random bytes, token soup and mutated generated kernels never
//!   panic the parser; errors are `file:line:col: error: ...` with a real
//!   position; what parses round-trips;
//! - `roundtrip`: generated kernels are a print∘parse fixed point;
//! - `optimize`: `ptx_opt::optimize` never panics on generated kernels, and its
//!   output prints, re-parses and verifies without errors;
//! - `differential`: generated kernels and their optimized versions (at
//!   `-O2`, and at `-O3` for other seeds) compute the same buffers on the
//!   reference interpreter;
//! - `incremental`: edit sequences decoded from bytes leave the incremental
//!   database agreeing with a fresh parse of the text.
//!
//! Plus the generator's own guarantees: generated kernels verify, a sample
//! assembles with ptxas, the whole instruction catalog assembles with ptxas,
//! and the catalog covers every opcode the evaluator implements.
//!
//! A failure names the seed; `ptx_tests::gen::kernel(seed, &opts)` gives the
//! kernel back (the options are chosen by `opts_for`).

use ptx_tests::differential::{self, DiffOptions, DiffStats, Shape, SHAPES};
use ptx_tests::fuzz_checks;
use ptx_tests::gen::{self, Choices, GenOptions};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Inputs per target (the differential target runs two interpreted launches per input).
const PARSE_INPUTS: u64 = 2000;
const ROUNDTRIP_INPUTS: u64 = 2000;
const OPTIMIZE_INPUTS: u64 = 2000;
const DIFFERENTIAL_INPUTS: u64 = 2000;
const INCREMENTAL_INPUTS: u64 = 600;

/// The generator options for a seed: a mix of sizes and feature sets.
fn opts_for(seed: u64) -> GenOptions {
    match seed % 8 {
        0 => GenOptions::straight_line(),
        1 | 2 | 3 => GenOptions::small(),
        4 => GenOptions { floats: false, ..GenOptions::default() },
        7 => GenOptions { async_copy: true, ..GenOptions::default() },
        _ => GenOptions::default(),
    }
}

/// A kernel for a seed: most from a seed, every fifth from random bytes read
/// as a choice stream (the fuzz targets' path).
fn kernel_for(seed: u64) -> gen::GeneratedKernel {
    if seed % 5 == 4 {
        let mut c = Choices::seeded(seed);
        let n = 64 + c.below(2048) as usize;
        let bytes: Vec<u8> = (0..n).map(|_| c.below(256) as u8).collect();
        gen::kernel_from_bytes(&bytes, &opts_for(seed))
    } else {
        gen::kernel(seed, &opts_for(seed))
    }
}

/// Runs `f` for every seed; collects failures (panics included) and reports the first few.
fn for_seeds(what: &str, seeds: std::ops::Range<u64>, f: impl Fn(u64) -> Result<(), String>) {
    let mut failures = Vec::new();
    let total = seeds.end - seeds.start;
    for seed in seeds {
        let r = catch_unwind(AssertUnwindSafe(|| f(seed)));
        let msg = match r {
            Ok(Ok(())) => continue,
            Ok(Err(m)) => m,
            Err(p) => format!("panicked: {}", p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()),
        };
        failures.push(format!("seed {seed}: {msg}"));
    }
    if !failures.is_empty() {
        let shown: Vec<&String> = failures.iter().take(5).collect();
        panic!("{what}: {} of {total} inputs failed:\n{}", failures.len(), shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n\n"));
    }
}

// ------------------------------------------------------------------------------------------------ parse

const TOKENS: &[&str] = &[
    ".version 8.3", ".target sm_90", ".address_size 64", ".visible", ".entry", ".func", ".param", ".reg", ".shared", ".local", ".global", ".const", ".b32", ".u64", ".f32", ".pred",
    ".align 8", "%r1", "%r<4>", "%p", "%tid.x", "$L1", "L:", "{", "}", "(", ")", "[", "]", ";", ",", "|", "@", "!", "-", "+", "0x", "0f3F800000", "0d", "1e400", "-0.0", "00",
    "0b101", "add.s32", "ld.global.v4.f32", "bra", "call", "ret;", "setp.lt.and.f32", "mov.b64", "cvt.rn.f16.f32", "//", "/*", "*/", "\"", "\n", " ", "\t", "::", ".", "..",
    "18446744073709551616", "-9223372036854775809", "shfl.sync.bfly.b32", ".pragma \"nounroll\";", ".loc 1 2 3", "{%r1, %r2}", "[%rd1+-4]", "gen_sh", "<", ">", "=", "\0", "\u{ff}",
];

#[test]
fn parse_never_panics() {
    for_seeds("parse", 0..PARSE_INPUTS, |seed| {
        let mut c = Choices::seeded(seed ^ 0x7061_7273);
        let bytes: Vec<u8> = match seed % 4 {
            // Random bytes.
            0 => (0..c.below(400)).map(|_| c.below(256) as u8).collect(),
            // Token soup.
            1 => {
                let mut s = String::new();
                for _ in 0..c.below(120) {
                    let t: &str = *c.pick(TOKENS);
                    s.push_str(t);
                    if c.chance(1, 2) {
                        s.push(' ');
                    }
                }
                s.into_bytes()
            }
            // Mutated generated kernels.
            _ => {
                let k = gen::kernel(seed, &GenOptions::small());
                let mut b = k.text.into_bytes();
                for _ in 0..1 + c.below(4) {
                    b = gen::mutate(&b, &mut c);
                }
                b
            }
        };
        fuzz_checks::parse("fuzz.ptx", &bytes)
    });
}

// ------------------------------------------------------------------------------------------------ roundtrip

#[test]
fn roundtrip_generated() {
    for_seeds("roundtrip", 0..ROUNDTRIP_INPUTS, |seed| {
        fuzz_checks::roundtrip(&kernel_for(seed))
    });
}

// ------------------------------------------------------------------------------------------------ optimize

#[test]
fn optimize_generated() {
    for_seeds("optimize", 10_000..10_000 + OPTIMIZE_INPUTS, |seed| {
        fuzz_checks::optimize(&kernel_for(seed)).map(|_| ())
    });
}

/// The `roundtrip` and `optimize` targets' PTX path, as `fuzz/seed-corpus.sh`
/// seeds it: every file of `tests/corpus/` and mutations of it (those that
/// still parse are PTX inputs, the rest choice streams).
#[test]
fn roundtrip_and_optimize_real_ptx_seeds() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "ptx")).collect();
    files.sort();
    assert!(files.len() >= 20, "tests/corpus has {} files", files.len());
    let ptx_inputs = std::sync::atomic::AtomicUsize::new(0);
    for_seeds("roundtrip/optimize on real PTX", 0..files.len() as u64 * 12, |seed| {
        let original = std::fs::read(&files[(seed / 12) as usize]).unwrap();
        let mut c = Choices::seeded(seed ^ 0x7265_616c);
        let mut bytes = original.clone();
        for _ in 0..seed % 12 / 3 {
            bytes = gen::mutate(&bytes, &mut c);
        }
        let input = fuzz_checks::input_of_bytes(&bytes);
        if matches!(input, fuzz_checks::FuzzInput::Ptx(_)) {
            ptx_inputs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        fuzz_checks::roundtrip_input(&input)?;
        fuzz_checks::optimize_input(&input)
    });
    // The unmutated files are all PTX inputs.
    assert!(ptx_inputs.into_inner() >= files.len() * 3, "too few inputs read as PTX");
}

// ------------------------------------------------------------------------------------------------ differential

#[test]
fn differential_generated() {
    let stats = std::sync::Mutex::new(DiffStats::default());
    for_seeds("differential", 20_000..20_000 + DIFFERENTIAL_INPUTS, |seed| {
        // One shape per kernel, in turn; one input seed.
        let shape = SHAPES[(seed % SHAPES.len() as u64) as usize];
        let s = fuzz_checks::differential(&kernel_for(seed), shape, seed, DiffOptions::default().max_steps)?;
        stats.lock().unwrap().add(s);
        Ok(())
    });
    let s = *stats.lock().unwrap();
    eprintln!("differential: {s}");
    // The comparison must not be vacuous.
    assert!(s.runs as u64 == DIFFERENTIAL_INPUTS, "{s}");
    assert!(s.inconclusive * 10 < s.runs, "too many runs fail in both modules: {s}");
    assert!(s.skipped * 20 < s.compared, "too many elements are not compared: {s}");
}

/// Kernels with warp-level matrix tiles (`mma.sync`, `movmatrix`,
/// `ldmatrix`; fragments from other lanes' words): the optimizer keeps
/// what they compute, on the whole-warp shapes.
#[test]
fn differential_generated_matrix_tiles() {
    let stats = std::sync::Mutex::new(DiffStats::default());
    let with_tiles = std::sync::atomic::AtomicUsize::new(0);
    const N: u64 = 60;
    for_seeds("differential with matrix tiles", 60_000..60_000 + N, |seed| {
        let k = gen::kernel(seed, &GenOptions::with_mma());
        if k.text.contains("mma.sync") || k.text.contains("matrix.sync") {
            with_tiles.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let shape = SHAPES[(seed % 2) as usize];
        let s = fuzz_checks::differential(&k, shape, seed, DiffOptions::default().max_steps)?;
        stats.lock().unwrap().add(s);
        Ok(())
    });
    let s = *stats.lock().unwrap();
    eprintln!("differential with matrix tiles: {s}");
    let with_tiles = with_tiles.into_inner() as u64;
    eprintln!("{with_tiles} of {N} kernels have matrix tiles");
    assert!(with_tiles * 4 > N * 3, "too few kernels with matrix tiles");
    assert!(s.runs as u64 == N, "{s}");
    assert!(s.inconclusive * 10 < s.runs, "too many runs fail in both modules: {s}");
    assert!(s.skipped * 20 < s.compared, "too many elements are not compared: {s}");
    // The fuzz target's path: inputs of length 8k + 5 make such kernels.
    for n in 0..12u64 {
        let mut c = Choices::seeded(n ^ 0x6d6d_61);
        let bytes: Vec<u8> = (0..(64 + 8 * c.below(200) + 5)).map(|_| c.below(256) as u8).collect();
        let (shape, seed) = fuzz_checks::launch_of_input(&bytes);
        let k = fuzz_checks::kernel_of_input(&bytes);
        assert!(k.spec.full_warps && shape.block.iter().product::<u32>() % 32 == 0);
        fuzz_checks::differential(&k, shape, seed, DiffOptions::default().max_steps).unwrap_or_else(|e| panic!("{e}"));
    }
    // The check can fail: two registers of an A fragment swapped change the product.
    let k = (60_000..).map(|seed| gen::kernel(seed, &GenOptions::with_mma())).find(|k| k.text.contains("mma.sync")).unwrap();
    let line = k.text.lines().find(|l| l.contains("mma.sync")).unwrap();
    let a_list = line.match_indices('{').nth(1).unwrap().0 + 1;
    let names: Vec<&str> = line[a_list..].split('}').next().unwrap().split(", ").collect();
    let swapped = line.replacen(&format!("{}, {}", names[0], names[1]), &format!("{}, {}", names[1], names[0]), 1);
    let changed = k.text.replacen(line, &swapped, 1);
    assert!(differential::same_behaviour_with(&k.text, &changed, &k.spec, &[1], &DiffOptions { shapes: vec![SHAPES[0]], ..DiffOptions::default() }).is_err(), "swapping A registers went unnoticed:\n{line}\n{swapped}");
}

/// The same at `-O3`, whose rules and passes `-O2` leaves out (widening
/// multiplies, `.local` accesses, the division bypass).
#[test]
fn differential_generated_o3() {
    let stats = std::sync::Mutex::new(DiffStats::default());
    for_seeds("differential -O3", 40_000..40_000 + DIFFERENTIAL_INPUTS / 2, |seed| {
        let shape = SHAPES[(seed % SHAPES.len() as u64) as usize];
        let s = fuzz_checks::differential_at(&kernel_for(seed), shape, seed, DiffOptions::default().max_steps, ptx_opt::OptLevel::O3)?;
        stats.lock().unwrap().add(s);
        Ok(())
    });
    let s = *stats.lock().unwrap();
    eprintln!("differential -O3: {s}");
    assert!(s.runs as u64 == DIFFERENTIAL_INPUTS / 2, "{s}");
    assert!(s.inconclusive * 10 < s.runs, "too many runs fail in both modules: {s}");
    assert!(s.skipped * 20 < s.compared, "too many elements are not compared: {s}");
}

// ------------------------------------------------------------------------------------------------ incremental

#[test]
fn incremental_edits() {
    for_seeds("incremental", 0..INCREMENTAL_INPUTS, |seed| {
        let mut c = Choices::seeded(seed ^ 0x696e_6372);
        let n = c.below(300);
        let mut bytes: Vec<u8> = Vec::new();
        if seed % 4 == 3 {
            // The text follows in the input: a generated kernel.
            bytes.push(fuzz_checks::INCREMENTAL_TEXTS.len() as u8);
            bytes.extend_from_slice(gen::kernel(seed, &GenOptions::small()).text.as_bytes());
            bytes.push(0xff);
        }
        bytes.extend((0..n).map(|_| c.below(256) as u8));
        fuzz_checks::incremental(&bytes)
    });
}

// ------------------------------------------------------------------------------------------------ the generator

#[test]
fn generated_kernels_verify_and_are_deterministic() {
    for_seeds("verify", 0..300, |seed| {
        let k = kernel_for(seed);
        if kernel_for(seed).text != k.text {
            return Err("two generations differ".into());
        }
        verifies(&k.text)
    });
    for_seeds("verify with matrix tiles", 0..40, |seed| {
        let k = gen::kernel(seed, &GenOptions::with_mma());
        verifies(&k.text)
    });
    // Empty and tiny choice streams give valid (small) kernels.
    for bytes in [&[][..], &[0u8][..], &[255u8; 7][..]] {
        let k = gen::kernel_from_bytes(bytes, &GenOptions::default());
        assert!(ptx_ir::parse("gen.ptx", k.text.as_bytes()).is_ok(), "{}", k.text);
    }
}

#[test]
fn generated_kernels_assemble_with_ptxas() {
    for seed in 0..20u64 {
        let k = kernel_for(seed * 7 + 1);
        if let Err(e) = ptx_tests::ptxas::assemble(&k.text, gen::TARGET) {
            panic!("seed {}: ptxas rejects the kernel:\n{e}\n{}", seed * 7 + 1, k.text);
        }
    }
    // Kernels with matrix tiles.
    for seed in 0..6u64 {
        let k = gen::kernel(seed, &GenOptions::with_mma());
        if let Err(e) = ptx_tests::ptxas::assemble(&k.text, gen::TARGET) {
            panic!("seed {seed} (with matrix tiles): ptxas rejects the kernel:\n{e}\n{}", k.text);
        }
    }
}

#[test]
fn catalog_assembles_with_ptxas_and_covers_the_evaluator() {
    let c = gen::catalog();
    assert!(c.templates.len() > 3000, "only {} templates survive the filter: {:?}", c.templates.len(), c.dropped.iter().take(20).collect::<Vec<_>>());
    let uncovered = gen::uncovered_opcodes();
    assert!(uncovered.is_empty(), "the evaluator implements opcodes the generator's catalog never uses: {uncovered:?} (add templates in tests/src/gen.rs)");
    let text = gen::catalog_module();
    if let Err(e) = ptx_tests::ptxas::assemble(&text, gen::TARGET) {
        panic!("ptxas rejects catalog instructions:\n{e}");
    }
}

/// The shapes the harness uses fit the generator's shared array.
#[test]
fn shapes_fit() {
    let max = GenOptions::default().max_block_threads;
    for Shape { block, .. } in SHAPES {
        assert!(block.iter().product::<u32>() <= max);
    }
}

/// The harness sees a difference when there is one: a transformation that
/// changes a constant is caught.
#[test]
fn differential_catches_a_change() {
    let mut caught = 0;
    for seed in 0..20u64 {
        let k = gen::kernel(seed, &GenOptions::straight_line());
        // One more store, to the thread's first input word.
        let pos = k.text.rfind("\tret;").unwrap();
        let t = format!("{}\tst.global.b8 [%rdu0], 7;\n{}", &k.text[..pos], &k.text[pos..]);
        if differential::same_behaviour(&k.text, &t, &k.spec, &[seed]).is_err() {
            caught += 1;
        }
    }
    assert!(caught >= 18, "{caught} of 20 changes caught");
}

/// An instruction the interpreter does not execute, dead in the original
/// and removed by the transformation, makes the run inconclusive (what the
/// original computes is not known); kept in the transformed module alone, it
/// is a difference.
#[test]
fn differential_unsupported_original_is_inconclusive() {
    // `.sat` with a dtype whose signedness differs from the final result's:
    // the interpreter leaves it open.
    let unsupported = "\t.reg .u32 %dead;\n\tvmad.u32.u32.u32.sat.shr7 %dead, %dead, -%dead, %dead;\n";
    let k = gen::kernel(3, &GenOptions::straight_line());
    let pos = k.text.rfind("\tret;").unwrap();
    let with_dead = format!("{}{unsupported}{}", &k.text[..pos], &k.text[pos..]);
    let s = differential::same_behaviour(&with_dead, &k.text, &k.spec, &[3]).unwrap();
    assert!(s.runs > 0 && s.inconclusive == s.runs, "{s}");
    let e = differential::same_behaviour(&k.text, &with_dead, &k.spec, &[3]).unwrap_err();
    assert!(e.contains("the transformed module fails"), "{e}");
}

// ------------------------------------------------------------------------------------------------ asynchronous copies

/// Generated kernels with `cp.async` (commit groups, waits, reads after
/// them) keep their behaviour at `-O2`; and a change that drops the waits
/// is caught: the interpreter reports the read of a copy in flight.
#[test]
fn async_copy_kernels_keep_their_behaviour() {
    let opts = GenOptions { async_copy: true, ..GenOptions::small() };
    let mut stats = DiffStats::default();
    let mut with_copies = 0;
    let mut caught = 0;
    for seed in 0..60u64 {
        let k = gen::kernel(seed, &opts);
        if !k.text.contains("cp.async") {
            continue;
        }
        with_copies += 1;
        if with_copies <= 3 {
            if let Err(e) = ptx_tests::ptxas::assemble(&k.text, gen::TARGET) {
                panic!("seed {seed}: ptxas rejects the kernel:\n{e}\n{}", k.text);
            }
        }
        let shape = SHAPES[(seed % SHAPES.len() as u64) as usize];
        stats.add(fuzz_checks::differential(&k, shape, seed, DiffOptions::default().max_steps).unwrap_or_else(|e| panic!("seed {seed}: {e}")));
        let no_waits: String = k.text.lines().filter(|l| !l.contains("cp.async.wait")).map(|l| format!("{l}\n")).collect();
        let opts = ptx_tests::differential::DiffOptions { shapes: vec![shape], ..DiffOptions::default() };
        if let Err(e) = ptx_tests::differential::same_behaviour_with(&k.text, &no_waits, &k.spec, &[seed], &opts) {
            assert!(e.contains("has not completed"), "seed {seed}: {e}");
            caught += 1;
        }
    }
    eprintln!("async copies: {with_copies} kernels, {caught} without waits caught; {stats}");
    assert!(with_copies >= 20, "only {with_copies} kernels with cp.async");
    assert!(caught * 2 >= with_copies, "dropping the waits was caught in only {caught} of {with_copies} kernels");
    assert!(stats.compared > 0);
}

/// A generated kernel parses and the verifier finds no error in it.
fn verifies(text: &str) -> Result<(), String> {
    let p = ptx_ir::parse("gen.ptx", text.as_bytes()).map_err(|d| d.to_string())?;
    let errors: Vec<String> = ptx_ir::verify::verify(&p.module, &p.source_map, "gen.ptx", text.as_bytes()).into_iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\n{text}", errors.join("\n")))
    }
}
