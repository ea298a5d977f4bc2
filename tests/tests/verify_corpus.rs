//! The verifier accepts every corpus file that ptxas accepts (no false errors).

use ptx_tests::corpus::{manifest, own_corpus_dir, ptx_files, shared_corpus_dir};

fn verify_file(name: &str, bytes: &[u8]) -> Result<Vec<String>, String> {
    let p = ptx_ir::parse(name, bytes).map_err(|d| d.to_string())?;
    Ok(ptx_ir::verify::verify(&p.module, &p.source_map, name, bytes).iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect())
}

#[test]
fn no_false_errors_on_valid_files() {
    let mut files: Vec<(String, Vec<u8>)> = ptx_files(&own_corpus_dir()).into_iter().map(|p| (p.display().to_string(), std::fs::read(&p).unwrap())).collect();
    if let Some(dir) = shared_corpus_dir() {
        for e in manifest(&dir).into_iter().filter(|e| e.ptxas_ok) {
            files.push((e.file.clone(), std::fs::read(dir.join(&e.file)).unwrap()));
        }
    }
    let mut failures = Vec::new();
    for (name, bytes) in &files {
        match verify_file(name, bytes) {
            Ok(errors) => failures.extend(errors.into_iter().take(3)),
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{} false errors over {} files:\n{}", failures.len(), files.len(), failures[..failures.len().min(60)].join("\n"));
}
