//! The passes through ptxas: every golden case's expected output (what the
//! passes write, `tests/spec/opt/*/`) assembles, and for the naive-code
//! cases (the classic passes and the whole pipeline) ptxas makes no more
//! SASS instructions of the output than of the input, kernel by kernel;
//! the README's example (clang -O0 saxpy) loses its generic memory
//! instructions (`LD.E`/`ST.E`) and a third of its instructions at -O2.

use ptx_tests::ptxas;
use ptx_tests::spec::spec_dir;
use std::collections::BTreeMap;

/// Generic loads, stores and atomics among a function's SASS opcodes.
fn generic(ops: &[String]) -> usize {
    ops.iter().filter(|o| ["LD.E", "ST.E", "ATOM.E", "RED.E"].iter().any(|g| o.as_str() == *g || o.starts_with(&format!("{g}.")))).count()
}

fn counts(ptx: &str) -> BTreeMap<String, Vec<String>> {
    ptxas::sass_opcodes(ptx, None).unwrap_or_else(|e| panic!("ptxas rejects:\n{e}\n{ptx}"))
}

#[test]
fn golden_outputs_assemble_and_naive_cases_shrink() {
    let root = spec_dir("opt");
    let mut checked = 0;
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap().path();
        let pass = dir.file_name().unwrap().to_string_lossy().to_string();
        for file in ptx_tests::corpus::ptx_files(&dir) {
            let text = std::fs::read_to_string(&file).unwrap();
            let Some((input, expected)) = text.split_once(ptx_tests::spec::SEPARATOR) else { panic!("{}: no expected part", file.display()) };
            let expected = expected.trim_start_matches(|c| c != '\n');
            let after = counts(expected);
            checked += 1;
            if !["promote-local", "copy-prop", "dce", "simplify-cfg", "dead-decls", "pipeline"].contains(&pass.as_str()) {
                continue;
            }
            let before = counts(input);
            for (f, ops) in &after {
                let b = before.get(f).map_or(usize::MAX, Vec::len);
                assert!(ops.len() <= b, "{}: {f}: {b} SASS instructions before, {} after", file.display(), ops.len());
            }
        }
    }
    assert!(checked > 10);
}

#[test]
fn readme_example_loses_its_generic_accesses() {
    let path = ptx_tests::corpus::repo_root().join("examples/saxpy-O0.ptx");
    let text = std::fs::read_to_string(&path).unwrap();
    let checked = ptx_opt::optimize_checked("saxpy-O0.ptx", text.as_bytes(), ptx_opt::OptLevel::O2).unwrap();
    let out = ptx_print::print_module(&checked.module);
    let (before, after) = (counts(&text), counts(&out));
    let (b, a) = (&before["saxpy"], &after["saxpy"]);
    println!("saxpy-O0: {} -> {} SASS instructions, generic memory {} -> {}", b.len(), a.len(), generic(b), generic(a));
    assert!(generic(b) >= 3 && generic(a) == 0, "{b:?}\n{a:?}");
    assert!(a.len() * 3 <= b.len() * 2, "{} -> {}", b.len(), a.len());
}
