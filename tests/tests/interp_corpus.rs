//! The reference interpreter on real kernels: every kernel of the corpora
//! (ptxas-valid files) runs on a generic launch — two CTAs of 32 threads
//! (128 for kernels using the warpgroup instructions `wgmma`),
//! 64 KiB buffers of random bytes for 64-bit parameters, 16 for 32-bit
//! integers, 1.0 for floats, zero bytes for structs. A kernel may legitimately stop (an
//! instruction the interpreter does not execute, a fault because the generic
//! arguments do not fit it, the step limit); what must never happen is a
//! panic, an internal evaluator error ("bad operands") or a launch the
//! interpreter refuses although it matches the signature. The tally is
//! printed (`--nocapture`) for the closing figures; `PTX_SURVEY_VERBOSE=1`
//! prints why each kernel that did not complete stopped.

use ptx_ir::interp::{self, RunError};
use ptx_tests::corpus::{generic_launch_in, kernels, valid_files};
use ptx_tests::gen::Choices;
use std::path::PathBuf;
use std::collections::BTreeMap;

#[test]
fn corpus_kernels_run_or_stop_cleanly() {
    let mut outcomes: BTreeMap<&str, usize> = BTreeMap::new();
    let mut unsupported: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut total = 0;
    for path in valid_files() {
        let text = std::fs::read(&path).unwrap();
        let name = path.display().to_string();
        let Ok(parsed) = ptx_ir::parse(&name, &text) else { continue };
        for (kernel, params) in kernels(&parsed.module) {
            total += 1;
            let launch = generic_launch_in(&parsed.module, &kernel, &params);
            let run = std::panic::catch_unwind(|| interp::run(&parsed.module, &parsed.source_map, &name, &text, &launch));
            if std::env::var_os("PTX_SURVEY_VERBOSE").is_some() {
                if let Ok(Err(e)) = &run {
                    println!("{name}: {kernel}: {e}");
                }
            }
            let outcome = match run {
                Err(_) => {
                    failures.push(format!("{name}: kernel {kernel}: the interpreter panicked"));
                    "panic"
                }
                Ok(Ok(_)) => "completed",
                Ok(Err(RunError::Unsupported { what, at })) => {
                    if what.contains("bad operands") {
                        failures.push(format!("{at}: kernel {kernel}: internal error: {what}"));
                    }
                    let head = what.split([' ', '(']).next().unwrap_or("").to_string();
                    *unsupported.entry(head).or_default() += 1;
                    "unsupported instruction"
                }
                Ok(Err(RunError::Launch(m))) => {
                    failures.push(format!("{name}: kernel {kernel}: launch refused: {m}"));
                    "launch refused"
                }
                Ok(Err(RunError::Fault { .. })) => "memory fault",
                Ok(Err(RunError::StepLimit { .. })) => "step limit",
                Ok(Err(RunError::Deadlock(_))) => "deadlock",
                Ok(Err(RunError::Trap { .. })) => "trap",
                Ok(Err(RunError::Undefined { .. })) => "undefined behaviour",
                Ok(Err(RunError::AssertFailed { .. })) => "failed assert",
            };
            *outcomes.entry(outcome).or_default() += 1;
        }
    }
    println!("{total} kernels:");
    for (o, n) in &outcomes {
        println!("  {n:5} {o}");
    }
    let mut top: Vec<(String, usize)> = unsupported.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1));
    println!("unsupported instructions (kernels stopped at each):");
    for (what, n) in top.iter().take(25) {
        println!("  {n:5} {what}");
    }
    assert!(total > 0, "no kernels found");
    assert!(failures.is_empty(), "{} kernels broke the interpreter:\n{}", failures.len(), failures.join("\n"));
}

/// Mutated kernels (tokens dropped, duplicated, swapped) that still parse
/// and verify are valid PTX too, often of shapes no compiler emits: the
/// interpreter runs them or stops cleanly, never panics.
#[test]
fn mutated_kernels_run_or_stop_cleanly() {
    let files: Vec<PathBuf> = valid_files().into_iter().filter(|p| std::fs::metadata(p).map(|m| m.len() < 20_000).unwrap_or(false)).collect();
    let mut choices = Choices::seeded(7);
    let (mut tried, mut ran) = (0, 0);
    let mut failures = Vec::new();
    for k in 0..6000u64 {
        let path = &files[(k as usize * 7919) % files.len()];
        let mut bytes = std::fs::read(path).unwrap();
        for _ in 0..1 + choices.below(3) {
            bytes = ptx_tests::gen::mutate(&bytes, &mut choices);
        }
        tried += 1;
        let name = format!("{} (mutant {k})", path.display());
        let Ok(parsed) = ptx_ir::parse(&name, &bytes) else { continue };
        if ptx_ir::verify::verify(&parsed.module, &parsed.source_map, &name, &bytes).iter().any(|d| d.is_error()) {
            continue;
        }
        for (kernel, params) in kernels(&parsed.module) {
            let mut launch = generic_launch_in(&parsed.module, &kernel, &params);
            launch.max_steps = 200_000;
            ran += 1;
            match std::panic::catch_unwind(|| interp::run(&parsed.module, &parsed.source_map, &name, &bytes, &launch)) {
                Err(_) => failures.push(format!("{name}: kernel {kernel}: the interpreter panicked")),
                Ok(Err(RunError::Unsupported { what, at })) if what.contains("bad operands") => failures.push(format!("{at}: kernel {kernel}: internal error: {what}")),
                Ok(Err(RunError::Launch(m))) => failures.push(format!("{name}: kernel {kernel}: launch refused: {m}")),
                _ => {}
            }
        }
    }
    println!("{tried} mutants, {ran} kernel runs");
    assert!(ran > 500, "only {ran} mutated kernels ran");
    assert!(failures.is_empty(), "{} mutated kernels broke the interpreter:\n{}", failures.len(), failures.join("\n"));
}
