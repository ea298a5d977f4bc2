//! The interpreter against the compiler: NVRTC compiled the same CUDA
//! kernels for many targets (sm_52 … sm_90) and in many modes (`-O3`,
//! unoptimized `O0`, debug `-G`, `lineinfo`, relocatable `rdc`). Every
//! variant of a kernel computes the same thing, through very different PTX
//! (local-memory spills, other instruction selections, libdevice code
//! inlined differently), so on the same inputs the interpreter must give the
//! same bytes for all of them wherever their values are exact. A difference
//! is an interpreter bug in one of the two instruction sequences.
//!
//! The same holds for clang and llc at -O0 and -O3 of one CUDA file, and for
//! Triton's output for sm_80 and sm_90a at two PTX versions. (`fastmath` and
//! `ftz` variants compute other values on purpose and are left out.)

use ptx_ir::interp::{self, KernelArg, Launch, RunError, RunOutput};
use ptx_ir::ir::VarDecl;
use ptx_ir::isa::{ScalarType, TypeClass};
use ptx_tests::corpus::{kernels, shared_corpus_dir};
use ptx_tests::gen::Choices;

/// Groups of variants compiled from the same source lines: the kernels use
/// `#if __CUDA_ARCH__` for newer instructions (redux, scoped and f64
/// atomics), so only targets on the same side of those tests agree.
const VARIANT_GROUPS: &[&[&str]] = &[
    &["sm_80.O3", "sm_80.O0", "sm_80.G", "sm_80.lineinfo", "sm_80.rdc", "sm_86.O3", "sm_89.O3", "sm_90.O3", "sm_90.O0", "sm_90.G"],
    &["sm_52.O3", "sm_52.O0", "sm_52.G"],
    &["sm_70.O3", "sm_75.O3"],
];

const BUFFER_BYTES: usize = 16 * 1024;

/// Random buffers, `n = 100` for 32-bit integers, 1.5 for floats.
fn launch(name: &str, params: &[VarDecl], seed: u64, block: u32) -> Launch {
    let mut l = Launch::new(name, [2, 1, 1], [block, 1, 1]);
    l.max_steps = 20_000_000;
    // Kernels with `.extern .shared` arrays (Triton's) size them at launch.
    l.dynamic_shared = 16 * 1024;
    for d in params {
        for _ in &d.names {
            let arg = if d.ty.bits() == 64 && d.ty.class() != TypeClass::Float {
                l.buffers.push(Choices::seeded(seed * 31 + l.buffers.len() as u64).bytes(BUFFER_BYTES));
                KernelArg::Buffer(l.buffers.len() - 1)
            } else if d.ty == ScalarType::F32 {
                KernelArg::Scalar { ty: d.ty, bits: 1.5f32.to_bits() as u128 }
            } else if d.ty == ScalarType::F64 {
                KernelArg::Scalar { ty: d.ty, bits: 1.5f64.to_bits() as u128 }
            } else {
                KernelArg::Scalar { ty: d.ty, bits: 100 }
            };
            l.args.push(arg);
        }
    }
    l
}


/// The first byte where two runs' exact values differ; counts the bytes
/// both know exactly in `exact_bytes`.
fn first_difference(a: &RunOutput, b: &RunOutput, exact_bytes: &mut usize) -> Option<String> {
    for (k, (x, y)) in a.buffers.iter().zip(&b.buffers).enumerate() {
        for i in 0..x.bytes.len() {
            let exact = x.quality[i] == ptx_ir::eval::Quality::Exact && y.quality[i] == ptx_ir::eval::Quality::Exact;
            *exact_bytes += exact as usize;
            if exact && x.bytes[i] != y.bytes[i] {
                let w = i / 4 * 4;
                return Some(format!("buffer {k} byte {i}: word {:02x?} vs {:02x?}", &x.bytes[w..w + 4], &y.bytes[w..w + 4]));
            }
        }
    }
    None
}

#[test]
fn compiler_variants_of_a_kernel_compute_the_same() {
    let Some(dir) = shared_corpus_dir() else {
        eprintln!("no shared corpus here; skipping");
        return;
    };
    let mut failures = Vec::new();
    let (mut compared, mut kernels_seen, mut exact_bytes, mut inexact_runs, mut not_run) = (0, 0, 0, 0, 0);
    // (files of one group, threads per block)
    let mut groups: Vec<(Vec<String>, u32)> = Vec::new();
    for family in ["k_arith", "k_warp", "k_apps1"] {
        for g in VARIANT_GROUPS {
            groups.push((g.iter().map(|v| format!("generated/nvrtc/{family}/{family}.{v}.ptx")).collect(), 64));
        }
    }
    // clang and llc, unoptimized and optimized, of one CUDA file.
    groups.push((["clang16.sm_80.O0", "clang16.sm_80.O3", "llc14.sm_75.O0"].iter().map(|v| format!("generated/llvm/clang_dev.{v}.ptx")).collect(), 64));
    // Triton for two targets and two PTX versions; a block is num_warps warps.
    for (kernel, warps) in [("vec_add.w4", 4), ("int_bitops.w4", 4), ("softmax_row.w4", 4), ("softmax_row.w8", 8)] {
        let files = ["sm_80", "sm_80.ptx87", "sm_90a", "sm_90a.ptx87"].iter().map(|v| format!("generated/triton/{kernel}.{v}.ptx")).collect();
        groups.push((files, warps * 32));
    }
    for (files, block) in &groups {
        let modules: Vec<(String, Vec<u8>)> = files
            .iter()
            .filter_map(|f| {
                let path = dir.join(f);
                std::fs::read(&path).ok().map(|t| (path.display().to_string(), t))
            })
            .collect();
        if modules.len() < 2 {
            continue;
        }
        let parsed: Vec<_> = modules.iter().map(|(n, t)| ptx_ir::parse(n, t).unwrap_or_else(|e| panic!("{e}"))).collect();
        for (kernel, params) in kernels(&parsed[0].module) {
            kernels_seen += 1;
            for seed in 1..=2u64 {
                let l = launch(&kernel, &params, seed, *block);
                let runs: Vec<Result<RunOutput, RunError>> =
                    parsed.iter().zip(&modules).map(|(p, (n, t))| interp::run(&p.module, &p.source_map, n, t, &l)).collect();
                let Some((reference, reference_run)) = modules.iter().zip(&runs).find_map(|((n, _), r)| r.as_ref().ok().map(|r| (n, r))) else {
                    // No variant runs: all must stop for the same kind of
                    // reason (an instruction the interpreter does not
                    // execute, behaviour the manual leaves undefined such as
                    // k_warp's `__syncwarp(0xffff)` from all 32 lanes, or an
                    // access beyond the random buffers).
                    let kinds: Vec<_> = runs.iter().filter_map(|r| r.as_ref().err()).map(std::mem::discriminant).collect();
                    if kinds.iter().any(|k| *k != kinds[0]) {
                        let errors: Vec<String> = runs.iter().filter_map(|r| r.as_ref().err()).map(|e| e.to_string()).collect();
                        failures.push(format!("{kernel} (seed {seed}): variants stop for different reasons:\n  {}", errors.join("\n  ")));
                    }
                    not_run += 1;
                    continue;
                };
                for ((name, _), run) in modules.iter().zip(&runs) {
                    match run {
                        Ok(out) => {
                            compared += 1;
                            inexact_runs += out.buffers.iter().any(|b| b.quality.iter().any(|q| *q != ptx_ir::eval::Quality::Exact)) as usize;
                            if let Some(d) = first_difference(reference_run, out, &mut exact_bytes) {
                                failures.push(format!("{kernel} (seed {seed}): {reference} and {name} differ at {d}"));
                            }
                        }
                        Err(e) => failures.push(format!("{kernel} (seed {seed}): {reference} runs, {name} fails: {e}")),
                    }
                }
            }
        }
    }
    println!("{kernels_seen} kernels, {compared} variant runs compared on {exact_bytes} exact bytes; {inexact_runs} runs left some bytes inexact; {not_run} launches ran in no variant");
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n"));
}
