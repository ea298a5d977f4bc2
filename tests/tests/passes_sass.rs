//! The passes through ptxas: every golden case's expected output (what the
//! passes write, `tests/spec/opt/*/`) assembles, and for the naive-code
//! cases (the classic passes and the whole pipeline) and the e-graph's rule
//! cases ptxas makes no more SASS instructions and uses no more registers
//! of the output than of the input, function by function;
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
    functions(ptx).into_iter().map(|(f, s)| (f, s.opcodes)).collect()
}

fn functions(ptx: &str) -> BTreeMap<String, ptxas::FunctionSass> {
    ptxas::sass_functions(ptx, None).unwrap_or_else(|e| panic!("ptxas rejects:\n{e}\n{ptx}"))
}

#[test]
fn golden_outputs_assemble_and_cases_cost_no_more() {
    let root = spec_dir("opt");
    let mut checked = 0;
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap().path();
        let pass = dir.file_name().unwrap().to_string_lossy().to_string();
        for file in ptx_tests::corpus::ptx_files(&dir) {
            let text = std::fs::read_to_string(&file).unwrap();
            let Some((input, expected)) = text.split_once(ptx_tests::spec::SEPARATOR) else { panic!("{}: no expected part", file.display()) };
            let expected = expected.trim_start_matches(|c| c != '\n');
            let after = functions(expected);
            checked += 1;
            if !["promote-local", "copy-prop", "dce", "simplify-cfg", "dead-decls", "pipeline", "egraph"].contains(&pass.as_str()) {
                continue;
            }
            let before = functions(input);
            for (f, a) in &after {
                let Some(b) = before.get(f) else { continue };
                assert!(a.opcodes.len() <= b.opcodes.len(), "{}: {f}: {} SASS instructions before, {} after", file.display(), b.opcodes.len(), a.opcodes.len());
                if let (Some(rb), Some(ra)) = (b.registers, a.registers) {
                    assert!(ra <= rb, "{}: {f}: {rb} registers before, {ra} after", file.display());
                }
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
