//! The interpreter's pre-decoded fast path checked by the reference path:
//! generated kernels (before and after optimization, on every default
//! launch shape) and the corpora's kernels give the same `RunOutput` —
//! buffers, qualities, step count, dependence note — or the same error
//! (message, thread and position) with `interp::run` as with
//! `interp::run_without_fast_path`.

use ptx_ir::interp::{self, Launch};
use ptx_tests::corpus::{generic_launch, kernels, valid_files};
use ptx_tests::differential::{launch_for, SHAPES};
use ptx_tests::gen::{self, GenOptions};

fn same_both_ways(name: &str, text: &[u8], launch: &Launch) -> Result<(), String> {
    let parsed = ptx_ir::parse(name, text).map_err(|d| d.to_string())?;
    let fast = interp::run(&parsed.module, &parsed.source_map, name, text, launch);
    let slow = interp::run_without_fast_path(&parsed.module, &parsed.source_map, name, text, launch);
    if fast != slow {
        return Err(format!("{name}: kernel {}: the fast path gives\n  {fast:?}\nthe reference path\n  {slow:?}", launch.kernel));
    }
    Ok(())
}

#[test]
fn generated_kernels_run_the_same_on_both_paths() {
    let mut failures = Vec::new();
    for (seed, opts) in (0..24).map(|s| (s, GenOptions::default())).chain((100..160).map(|s| (s, GenOptions::small()))) {
        let k = gen::kernel(seed, &opts);
        let parsed = ptx_ir::parse("gen.ptx", k.text.as_bytes()).unwrap();
        let optimized = ptx_print::print_module(&ptx_opt::optimize(parsed.module.clone(), ptx_opt::OptLevel::O2));
        for (n, shape) in SHAPES.iter().enumerate() {
            let mut launch = launch_for(&k.spec, shape, seed + n as u64);
            launch.max_steps = 2_000_000;
            for text in [&k.text, &optimized] {
                if let Err(e) = same_both_ways(&format!("seed {seed}"), text.as_bytes(), &launch) {
                    failures.push(format!("{e}\n{text}"));
                }
            }
            // A step limit reached half-way stops both at the same instruction.
            if let Ok(out) = interp::run(&parsed.module, &parsed.source_map, "gen.ptx", k.text.as_bytes(), &launch) {
                launch.max_steps = out.steps / 2;
                if let Err(e) = same_both_ways(&format!("seed {seed} (step limit)"), k.text.as_bytes(), &launch) {
                    failures.push(e);
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn corpus_kernels_run_the_same_on_both_paths() {
    let mut failures = Vec::new();
    let mut kernels_run = 0;
    // Every fourth file (the whole corpus runs in `interp_corpus`), short runs:
    // enough instruction forms and error paths at a small share of the suite's time.
    for path in valid_files().into_iter().step_by(4) {
        let text = std::fs::read(&path).unwrap();
        let name = path.display().to_string();
        let Ok(parsed) = ptx_ir::parse(&name, &text) else { continue };
        for (kernel, params) in kernels(&parsed.module) {
            let mut launch = generic_launch(&kernel, &params);
            // (Long kernels stop at the same step on both paths.)
            launch.max_steps = launch.max_steps.min(20_000);
            kernels_run += 1;
            if let Err(e) = same_both_ways(&name, &text, &launch) {
                failures.push(e);
            }
        }
    }
    println!("{kernels_run} corpus kernels compared");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
