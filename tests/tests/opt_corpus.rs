//! The `-O2` pipeline over every ptxas-valid corpus file: the output
//! re-parses and verifies (and prints back to itself), and every kernel the
//! interpreter runs to completion on the generic launch
//! ([`ptx_tests::corpus::generic_launch_in`]) leaves the same bytes in every
//! buffer when optimized (bytes both runs mark exact; runs whose control
//! flow or addresses depended on unspecified values are not compared).
//! Assembling the outputs with ptxas is `tools/sass-report`'s job (it
//! fails on an output ptxas rejects), run for each closing note.

use ptx_ir::interp::{self, BufferOut};
use ptx_ir::eval::Quality;
use ptx_tests::corpus::{generic_launch_in, kernels, valid_files};

/// The first byte both runs mark exact and that differs.
fn first_difference(a: &[BufferOut], b: &[BufferOut]) -> Option<String> {
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        for (i, (bx, by)) in x.bytes.iter().zip(&y.bytes).enumerate() {
            if bx != by && x.quality[i] == Quality::Exact && y.quality[i] == Quality::Exact {
                return Some(format!("buffer {k} byte {i}: {bx:#04x} before, {by:#04x} after"));
            }
        }
    }
    None
}

#[test]
fn corpus_at_o2_verifies_and_computes_the_same() {
    let (mut files, mut compared, mut kernels_seen) = (0, 0, 0);
    let mut failures = Vec::new();
    for path in valid_files() {
        let text = std::fs::read(&path).unwrap();
        let name = path.display().to_string();
        let Ok((parsed, _)) = ptx_ir::verify::parse_and_verify(&name, &text) else { continue };
        files += 1;
        let optimized = ptx_opt::optimize(parsed.module.clone(), ptx_opt::OptLevel::O2);
        let printed = ptx_print::print_module(&optimized);
        let again = match ptx_ir::verify::parse_and_verify("optimized", printed.as_bytes()) {
            Ok((p, _)) => p,
            Err(ds) => {
                failures.push(format!("{name}: the -O2 output does not verify: {}", ds.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("; ")));
                continue;
            }
        };
        if ptx_print::print_module(&again.module) != printed {
            failures.push(format!("{name}: the -O2 output does not print back to itself"));
        }
        for (kernel, params) in kernels(&parsed.module) {
            kernels_seen += 1;
            let launch = generic_launch_in(&parsed.module, &kernel, &params);
            let Ok(before) = interp::run(&parsed.module, &parsed.source_map, &name, &text, &launch) else { continue };
            if before.depends_on_unspecified.is_some() {
                continue;
            }
            let mut longer = launch.clone();
            longer.max_steps = before.steps.saturating_mul(8).max(100_000);
            match interp::run(&again.module, &again.source_map, "optimized", printed.as_bytes(), &longer) {
                Ok(after) => {
                    compared += 1;
                    if after.depends_on_unspecified.is_none() {
                        if let Some(d) = first_difference(&before.buffers, &after.buffers) {
                            failures.push(format!("{name}: kernel {kernel}: {d}"));
                        }
                    }
                }
                Err(e) => failures.push(format!("{name}: kernel {kernel}: runs before, not after -O2: {e}")),
            }
        }
    }
    println!("{files} files, {kernels_seen} kernels, {compared} compared before and after -O2");
    assert!(files > 0 && compared > 0);
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
