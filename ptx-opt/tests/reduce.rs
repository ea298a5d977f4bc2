//! The test-case reducer (`ptx_opt::reduce`) on a real module: NVRTC's
//! output for seven warp-level kernels with line info
//! (`tests/data/k_warp.sm_80.lineinfo.ptx`), with a grep-like test, an
//! interpreter-based test, an input the test rejects, and twice the same
//! reduction.

use ptx_ir::eval::Quality;
use ptx_ir::interp::{KernelArg, Launch};
use ptx_ir::isa::ScalarType;
use ptx_opt::reduce::{reduce, reduce_source, Progress, ReduceError, ReduceOptions, Reduced};
use std::time::Instant;

const K_WARP: &str = include_str!("data/k_warp.sm_80.lineinfo.ptx");

/// The reduced text parses and the verifier reports no error.
fn assert_valid(text: &str) {
    let verified = ptx_ir::verify::parse_and_verify("reduced.ptx", text.as_bytes());
    assert!(verified.is_ok(), "the reduced module is not valid: {verified:?}\n{text}");
}

fn report(name: &str, r: &Reduced, started: Instant) {
    eprintln!(
        "{name}: {} -> {} bytes, {} -> {} lines, {} -> {} instructions; {} tests, {} accepted, {} invalid, {} repeated, {} rounds, {:?}\n{}",
        r.before.bytes,
        r.after.bytes,
        r.before.lines,
        r.after.lines,
        r.before.instructions,
        r.after.instructions,
        r.tests_run,
        r.accepted,
        r.invalid_candidates,
        r.repeated_candidates,
        r.rounds,
        started.elapsed(),
        r.text
    );
}

fn reduce_k_warp(test: &mut dyn FnMut(&str) -> bool) -> Reduced {
    let mut steps = 0;
    let reduced = reduce_source("k_warp.ptx", K_WARP.as_bytes(), test, &ReduceOptions::default(), &mut |_: &Progress| steps += 1);
    assert!(steps > 0, "progress was never reported");
    match reduced {
        Ok(r) => r,
        Err(e) => panic!("reduction failed: {e}"),
    }
}

#[test]
fn grep_test_reduces_a_real_module_to_the_instruction() {
    let started = Instant::now();
    let r = reduce_k_warp(&mut |ptx: &str| ptx.contains("mul.wide.u32"));
    report("mul.wide.u32", &r, started);
    assert_valid(&r.text);
    assert!(r.text.contains("mul.wide.u32"));
    assert_eq!(r.before.bytes, ptx_print::print_module(&ptx_ir::parse_str(K_WARP).expect("the input parses")).len());
    assert!(r.before.instructions > 300, "{:?}", r.before);
    assert!(r.after.instructions <= 2, "{}", r.text);
    assert!(r.after.lines <= 15, "{}", r.text);
    // No debug information and one function left.
    assert!(!r.text.contains(".loc") && !r.text.contains(".file"), "{}", r.text);
    assert_eq!(r.text.matches(".entry").count() + r.text.matches(".func").count(), 1, "{}", r.text);
    assert!(!r.stopped_early);
}

/// Runs `warp_reduce_shfl` (`out[0] += warp sum of in[tid]` over one warp)
/// on a module's text: is some byte of `out` exactly known and nonzero?
fn stores_nonzero(ptx: &str) -> bool {
    let Ok(parsed) = ptx_ir::parse("candidate.ptx", ptx.as_bytes()) else { return false };
    let mut launch = Launch::new("warp_reduce_shfl", [1, 1, 1], [32, 1, 1]);
    launch.buffers.push(1.0f32.to_le_bytes().repeat(32));
    launch.buffers.push(vec![0; 4]);
    launch.args = vec![KernelArg::Buffer(0), KernelArg::Buffer(1), KernelArg::Scalar { ty: ScalarType::U32, bits: 32 }];
    launch.max_steps = 100_000;
    let Ok(out) = ptx_ir::interp::run(&parsed.module, &parsed.source_map, "candidate.ptx", ptx.as_bytes(), &launch) else { return false };
    let Some(result) = out.buffers.get(1) else { return false };
    result.bytes.iter().zip(&result.quality).any(|(b, q)| *b != 0 && *q == Quality::Exact)
}

#[test]
fn interpreter_test_keeps_a_kernel_that_stores() {
    assert!(stores_nonzero(K_WARP), "the property must hold on the input");
    let started = Instant::now();
    let r = reduce_k_warp(&mut stores_nonzero);
    report("stores nonzero", &r, started);
    assert_valid(&r.text);
    assert!(stores_nonzero(&r.text));
    assert!(r.text.contains(".entry warp_reduce_shfl"));
    // The warp reduction is gone: a store (or atomic) of a constant is enough.
    assert!(!r.text.contains("shfl.sync"), "{}", r.text);
    assert!(r.after.instructions <= 4, "{}", r.text);
}

#[test]
fn a_test_that_does_not_hold_on_the_input_is_an_error() {
    let mut runs = 0;
    let mut never = |_: &str| {
        runs += 1;
        false
    };
    let e = reduce_source("k_warp.ptx", K_WARP.as_bytes(), &mut never, &ReduceOptions::default(), &mut |_| {});
    assert_eq!(e.as_ref().err(), Some(&ReduceError::NotInteresting));
    assert_eq!(e.err().map(|e| e.to_string()).as_deref(), Some("the test does not hold on the input"));
    assert_eq!(runs, 1);
}

#[test]
fn invalid_input_is_an_error_with_its_position() {
    let bad = ".version 8.0\n.target sm_80\n.visible .entry k() {\nfrobnicate;\n}\n";
    match reduce_source("bad.ptx", bad.as_bytes(), &mut |_| true, &ReduceOptions::default(), &mut |_| {}) {
        Err(ReduceError::InvalidInput(d)) => assert_eq!((d[0].file.as_str(), d[0].line), ("bad.ptx", 4)),
        other => panic!("expected an invalid-input error, got {other:?}"),
    }
}

#[test]
fn the_same_input_and_test_give_the_same_result() {
    let run = || {
        let module = ptx_ir::parse_str(K_WARP).expect("the input parses");
        let mut test = |ptx: &str| ptx.contains("atom.global.cas.b32") && ptx.contains("bra");
        let r = reduce(&module, &mut test, &ReduceOptions::default(), &mut |_| {});
        r.map(|r| (r.text, r.tests_run, r.accepted, r.invalid_candidates))
    };
    let first = run();
    eprintln!("{first:?}");
    assert!(first.as_ref().is_ok_and(|(text, ..)| text.contains("atom.global.cas.b32") && text.contains("bra")), "{first:?}");
    assert_eq!(first, run());
}

#[test]
fn the_test_limit_stops_with_the_smallest_module_so_far() {
    let options = ReduceOptions { max_tests: Some(10), ..ReduceOptions::default() };
    let r = reduce_source("k_warp.ptx", K_WARP.as_bytes(), &mut |ptx| ptx.contains("mul.wide.u32"), &options, &mut |_| {});
    let r = r.expect("the input is interesting");
    assert!(r.stopped_early);
    assert_eq!(r.tests_run, 10);
    assert!(r.after.bytes < r.before.bytes);
    assert_valid(&r.text);
}

