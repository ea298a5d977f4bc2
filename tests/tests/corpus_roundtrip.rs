//! Every corpus file parses, and print∘parse is a fixed point. Files that
//! ptxas rejects may instead fail with a positioned diagnostic.

use ptx_tests::corpus::{manifest, ptx_files, shared_corpus_dir, own_corpus_dir};
use ptx_tests::roundtrip::round_trip;

#[test]
fn shared_corpus_round_trips() {
    let Some(dir) = shared_corpus_dir() else {
        eprintln!("no shared corpus here; skipping");
        return;
    };
    let entries = manifest(&dir);
    let mut failures = Vec::new();
    for e in &entries {
        let path = dir.join(&e.file);
        let text = std::fs::read(&path).unwrap();
        match round_trip(&e.file, &text) {
            Ok(_) => {}
            // ptxas rejects these too; a clean positioned diagnostic is the right answer.
            Err(m) if !e.ptxas_ok && m.starts_with(&format!("{}:", e.file)) => {}
            Err(m) => failures.push(format!("{} (ptxas_ok={}): {m}", e.file, e.ptxas_ok)),
        }
    }
    assert!(failures.is_empty(), "{} of {} files fail:\n{}", failures.len(), entries.len(), failures.join("\n"));
}

#[test]
fn own_corpus_round_trips() {
    let files = ptx_files(&own_corpus_dir());
    let mut failures = Vec::new();
    for p in &files {
        let text = std::fs::read(p).unwrap();
        if let Err(m) = round_trip(&p.display().to_string(), &text) {
            failures.push(m);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
