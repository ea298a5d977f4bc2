//! Parse and print throughput (MB/s of PTX text) on the largest corpus file
//! (the shared corpus's when it is present, else the project's own), and on
//! a data-heavy module made here: 1.3 MB of byte-array initializers, the
//! shape of NVIDIA Warp's modules.
//! `cargo bench -p ptx-tests --bench throughput`
//!
//! It runs with the allocator the `ptx-opt` binary uses (mimalloc), and
//! large texts are parsed and printed on all of rayon's threads, as there
//! (`RAYON_NUM_THREADS=1` for one thread).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ptx_tests::corpus::{own_corpus_dir, ptx_files, shared_corpus_dir, manifest};
use std::path::PathBuf;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn largest_file() -> PathBuf {
    let mut files: Vec<PathBuf> = match shared_corpus_dir() {
        // The largest file ptxas accepts (the 32-bit ones are legacy).
        Some(dir) => manifest(&dir).into_iter().filter(|e| e.ptxas_ok).map(|e| dir.join(e.file)).collect(),
        None => ptx_files(&own_corpus_dir()),
    };
    files.sort_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0));
    files.pop().expect("a corpus file to measure")
}

fn throughput(c: &mut Criterion) {
    let path = largest_file();
    let text = std::fs::read(&path).unwrap();
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let module = ptx_ir::parse(&name, &text).unwrap().module;
    let mut g = c.benchmark_group(format!("{name} ({:.1} MB)", text.len() as f64 / 1e6));
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.sample_size(20);
    // Dropping the module is not timed: `ptx-opt` never frees it (the process ends).
    g.bench_function("parse", |b| b.iter_with_large_drop(|| ptx_ir::parse(&name, &text).unwrap()));
    g.bench_function("print", |b| b.iter(|| ptx_print::print_module(&module)));
    g.bench_function("parse+print", |b| b.iter(|| ptx_print::print_module(&ptx_ir::parse(&name, &text).unwrap().module)));
    g.finish();
}

/// Byte arrays with initializers (about 1.3 MB of text) and one kernel.
fn data_module() -> String {
    let mut out = String::from(".version 8.0\n.target sm_80\n.address_size 64\n");
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut k = 0;
    while out.len() < 1_300_000 {
        let n = 200 + (k * 37) % 3800;
        let values: Vec<String> = (0..n)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed % 256).to_string()
            })
            .collect();
        out.push_str(&format!(".visible .global .align 1 .b8 data_{k}[{n}] = {{{}}};\n", values.join(",")));
        k += 1;
    }
    out.push_str(".visible .entry k(.param .u64 p)\n{\n.reg .b64 %rd<3>;\nld.param.u64 %rd1, [p];\nmov.u64 %rd2, data_0;\nst.global.u64 [%rd1], %rd2;\nret;\n}\n");
    out
}

fn data_throughput(c: &mut Criterion) {
    let text = data_module();
    let module = ptx_ir::parse("data.ptx", text.as_bytes()).unwrap().module;
    let mut g = c.benchmark_group(format!("data-heavy module ({:.1} MB)", text.len() as f64 / 1e6));
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.sample_size(20);
    g.bench_function("parse", |b| b.iter_with_large_drop(|| ptx_ir::parse("data.ptx", text.as_bytes()).unwrap()));
    g.bench_function("print", |b| b.iter(|| ptx_print::print_module(&module)));
    g.finish();
}

criterion_group!(benches, throughput, data_throughput);
criterion_main!(benches);
