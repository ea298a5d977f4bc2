//! How `-O2` scales with the size of one function: three shapes of a single
//! kernel made here, each at two sizes, measured in PTX instructions per
//! second. Equal throughput at both sizes means time linear in the
//! function's size; a quadratic pass halves it at the larger size.
//! `cargo bench -p ptx-tests --bench scaling`
//!
//! - `loads`: a block of global loads from two bases, interleaved, the
//!   first half at even and the second at odd element offsets of an
//!   aligned parameter (pairs a thousand instructions apart: `vectorize`).
//! - `branches`: thousands of two-way branches, each side writing a value
//!   the join reads (many blocks, many registers: liveness in `dce`).
//! - `chain`: a straight line of address arithmetic, loads and `fma`s
//!   (the e-graph engine on one large block).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ptx_opt::OptLevel;
use std::fmt::Write;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A module of one kernel `k` with these parameters, register
/// declarations and statements.
fn kernel(params: &str, regs: &str, body: &str) -> String {
    format!(".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k({params})\n{{\n{regs}{body}ret;\n}}\n")
}

fn loads(n: usize) -> String {
    let mut body = String::from("ld.param.u64 %rd1, [pa];\nld.param.u64 %rd3, [pc];\ncvta.to.global.u64 %rd4, %rd1;\ncvta.to.global.u64 %rd5, %rd3;\nmov.f32 %f1, 0f00000000;\n");
    let mut acc = 1;
    for (i, k) in (0..n / 2).map(|i| 2 * i).chain((0..n / 2).map(|i| 2 * i + 1)).enumerate() {
        let f = 2 + 2 * i;
        let _ = writeln!(body, "ld.global.f32 %f{f}, [%rd4+{}];\nadd.f32 %f{}, %f{f}, %f{acc};", 4 * k, f + 1);
        acc = f + 1;
    }
    let _ = writeln!(body, "st.global.f32 [%rd5], %f{acc};");
    kernel(".param .u64 .ptr .align 16 pa, .param .u64 pc", &format!(".reg .f32 %f<{}>;\n.reg .b64 %rd<8>;\n", 2 * n + 4), &body)
}

fn branches(n: usize) -> String {
    let mut body = String::from("ld.param.u64 %rd1, [pa];\nld.param.u32 %r1, [pn];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r2, %tid.x;\nmov.u32 %r3, 0;\n");
    let mut acc = 3;
    for i in 0..n {
        let (p, r) = (i + 1, 4 + 3 * i);
        let _ = writeln!(
            body,
            "setp.gt.s32 %p{p}, %r2, {i};\n@%p{p} bra L{i};\nadd.s32 %r{r}, %r{acc}, %r1;\nbra.uni M{i};\nL{i}:\nmul.lo.s32 %r{r}, %r{acc}, 3;\nM{i}:\nxor.b32 %r{}, %r{r}, {i};\nadd.s32 %r{}, %r{r}, %r{};",
            r + 1,
            r + 2,
            r + 1
        );
        acc = r + 2;
    }
    let _ = writeln!(body, "st.global.u32 [%rd2], %r{acc};");
    kernel(".param .u64 pa, .param .u32 pn", &format!(".reg .pred %p<{0}>;\n.reg .b32 %r<{0}>;\n.reg .b64 %rd<4>;\n", 3 * n + 8), &body)
}

fn chain(n: usize) -> String {
    let mut body = String::from("ld.param.u64 %rd1, [pa];\nld.param.u64 %rd2, [pb];\nld.param.u64 %rd3, [pc];\nmov.u32 %r1, %tid.x;\ncvta.to.global.u64 %rd4, %rd1;\ncvta.to.global.u64 %rd5, %rd2;\ncvta.to.global.u64 %rd3, %rd3;\nmov.f32 %f1, 0f00000000;\n");
    let mut acc = 1;
    for i in 0..n {
        let (r, f, d) = (2 + i, 2 + 3 * i, 6 + 3 * i);
        let _ = writeln!(
            body,
            "add.s32 %r{r}, %r1, {};\nmul.wide.s32 %rd{d}, %r{r}, 4;\nadd.s64 %rd{}, %rd4, %rd{d};\nld.global.f32 %f{f}, [%rd{}];\nadd.s64 %rd{}, %rd5, %rd{d};\nld.global.f32 %f{}, [%rd{}];\nfma.rn.f32 %f{}, %f{f}, %f{}, %f{acc};",
            i * 37,
            d + 1,
            d + 1,
            d + 2,
            f + 1,
            d + 2,
            f + 2,
            f + 1
        );
        acc = f + 2;
    }
    let _ = writeln!(body, "st.global.f32 [%rd3], %f{acc};");
    kernel(".param .u64 pa, .param .u64 pb, .param .u64 pc", &format!(".reg .b32 %r<{0}>;\n.reg .f32 %f<{0}>;\n.reg .b64 %rd<{0}>;\n", 3 * n + 8), &body)
}

fn scaling(c: &mut Criterion) {
    let shapes: [(&str, fn(usize) -> String, usize); 3] = [("loads", loads, 4000), ("branches", branches, 1000), ("chain", chain, 1000)];
    for (shape, make, n) in shapes {
        let mut g = c.benchmark_group(format!("-O2 {shape}"));
        g.sample_size(10);
        for size in [n, 2 * n] {
            let text = make(size);
            let module = ptx_ir::parse(shape, text.as_bytes()).expect("the generated kernel parses").module;
            let instructions: usize = module.items.iter().filter_map(|i| if let ptx_ir::ir::Item::Func(f) = i { Some(f.instructions().count()) } else { None }).sum();
            g.throughput(Throughput::Elements(instructions as u64));
            g.bench_function(format!("{instructions} instructions"), |b| b.iter_with_large_drop(|| ptx_opt::optimize(module.clone(), OptLevel::O2)));
        }
        g.finish();
    }
}

criterion_group!(benches, scaling);
criterion_main!(benches);
