//! The specification suites under `tests/spec/` (see `ptx_tests::spec`).

use ptx_tests::spec::{check_dir, opt_outcome, parse_outcome, run_outcome, spec_dir};

/// Invalid input: each case gives one `input.ptx:LINE:COL: error: ...` diagnostic.
#[test]
fn parse_errors() {
    check_dir(&spec_dir("parse-errors"), |input| {
        let out = parse_outcome(input);
        // Kept in the outcome (not a panic) so that blessing shows it for review.
        if out.starts_with("input.ptx:") { out } else { format!("UNEXPECTEDLY PARSED:\n{out}") }
    });
}

/// Valid input printed canonically: producers' modifier orders, literal forms,
/// layout; and the printed text is a print∘parse fixed point.
#[test]
fn printing() {
    check_dir(&spec_dir("print"), |input| {
        let out = parse_outcome(input);
        if out.starts_with("input.ptx:") {
            return format!("UNEXPECTED ERROR: {out}");
        }
        match ptx_tests::roundtrip::round_trip(ptx_tests::spec::INPUT_NAME, input.as_bytes()) {
            Ok(_) => out,
            Err(e) => format!("NOT A FIXED POINT: {e}\n{out}"),
        }
    });
}

/// CFG and analyses of hand-written functions, described as text: blocks and
/// edges, (post-)dominators, frontiers, loops, liveness, def-use chains.
#[test]
fn analyses() {
    check_dir(&spec_dir("analysis"), |input| match ptx_ir::parse(ptx_tests::spec::INPUT_NAME, input.as_bytes()) {
        Ok(p) => ptx_tests::describe::describe_module(&p.module),
        Err(d) => format!("UNEXPECTED ERROR: {d}"),
    });
}

/// Kernels run on the reference interpreter (the `// RUN:` line gives the
/// launch): the buffers they leave, or the error that stopped them
/// (out-of-bounds access, deadlock, unsupported instruction, step limit, trap).
#[test]
fn runs() {
    check_dir(&spec_dir("run"), run_outcome);
}

/// Golden tests of the optimizer, one directory per pass (`tests/spec/opt/PASS/`):
/// the passes on the first line, the input, the expected output; cases with
/// a `// RUN:` line are also run before and after on the interpreter.
#[test]
fn optimizations() {
    let root = spec_dir("opt");
    let mut dirs: Vec<_> = std::fs::read_dir(&root).unwrap().flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    assert!(!dirs.is_empty());
    for d in dirs {
        check_dir(&d, opt_outcome);
    }
}
