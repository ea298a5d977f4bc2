//! ptxas agrees the printed PTX is the same program: every corpus file that
//! ptxas accepts still assembles after a round trip through `ptx-opt -O0`, and
//! its SASS has the same instruction count per function. Identical `.text`
//! sections prove that without a disassembler; only when they differ are both
//! disassembled and counted.

use ptx_tests::corpus::{manifest, own_corpus_dir, ptx_files, shared_corpus_dir};
use ptx_tests::ptxas::{same_sass, tools};
use std::collections::HashSet;
use std::sync::Mutex;

#[test]
fn printed_corpus_assembles_to_the_same_sass() {
    let _ = tools(); // fail loudly here if ptxas cannot be had
    let mut seen = HashSet::new();
    // The project's own corpus (every file is valid PTX), then the shared one's valid files.
    let mut candidates: Vec<(String, std::path::PathBuf)> = ptx_files(&own_corpus_dir()).into_iter().map(|p| (p.display().to_string(), p)).collect();
    if let Some(dir) = shared_corpus_dir() {
        candidates.extend(manifest(&dir).into_iter().filter(|e| e.ptxas_ok).map(|e| (e.file.clone(), dir.join(&e.file))));
    }
    let files: Vec<_> = candidates
        .into_iter()
        .filter_map(|(name, path)| {
            let text = std::fs::read_to_string(path).ok()?;
            seen.insert(text.clone()).then_some((name, text))
        })
        .collect();
    assert!(!files.is_empty());
    let next = Mutex::new(0usize);
    let failures = Mutex::new(Vec::new());
    let compared = Mutex::new((0usize, 0usize));
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let k = {
                    let mut n = next.lock().unwrap();
                    *n += 1;
                    *n - 1
                };
                let Some((name, text)) = files.get(k) else { break };
                match check(name, text) {
                    Ok(by_bytes) => {
                        let mut c = compared.lock().unwrap();
                        if by_bytes { c.0 += 1 } else { c.1 += 1 }
                    }
                    Err(m) => failures.lock().unwrap().push(m),
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    let (bytes, counted) = compared.into_inner().unwrap();
    eprintln!("{} files: {bytes} with identical SASS bytes, {counted} with equal instruction counts", files.len());
    assert!(failures.is_empty(), "{} of {} files differ:\n{}", failures.len(), files.len(), failures.join("\n"));
}

/// Ok(true) when the text sections are byte-identical, Ok(false) when they
/// differ but every function has the same instruction count.
fn check(name: &str, original: &str) -> Result<bool, String> {
    let parsed = ptx_ir::parse(name, original.as_bytes()).map_err(|d| d.to_string())?;
    same_sass(name, original, &ptx_print::print_module(&parsed.module))
}
