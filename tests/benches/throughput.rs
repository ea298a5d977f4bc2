//! Parse and print throughput (MB/s of PTX text) on the largest corpus file:
//! the shared corpus's when it is present, else the project's own.
//! `cargo bench -p ptx-tests --bench throughput`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ptx_tests::corpus::{own_corpus_dir, ptx_files, shared_corpus_dir, manifest};
use std::path::PathBuf;

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
    g.bench_function("parse", |b| b.iter(|| ptx_ir::parse(&name, &text).unwrap()));
    g.bench_function("print", |b| b.iter(|| ptx_print::print_module(&module)));
    g.bench_function("parse+print", |b| b.iter(|| ptx_print::print_module(&ptx_ir::parse(&name, &text).unwrap().module)));
    g.finish();
}

criterion_group!(benches, throughput);
criterion_main!(benches);
