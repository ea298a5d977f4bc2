//! The `differential` fuzz target's loop, timed phase by phase: generate a
//! kernel from bytes, optimize it (parse, optimize, print, re-parse,
//! reprint, verify), then run both parsed modules on the reference
//! interpreter and compare the buffers. Prints programs per second and how
//! the time splits between the phases (inputs are pseudo-random byte
//! strings, as libFuzzer's would be without a corpus).
//! `cargo bench -p ptx-tests --bench differential_loop [-- PROGRAMS [FIRST] [-O1|-O2|-O3]]`
//! (FIRST: the index of the first input, 0 by default: a longer campaign
//! goes on past the inputs an earlier one ran; the level is the target's,
//! `-O2`, unless given).

use ptx_ir::interp;
use ptx_tests::{differential, fuzz_checks};
use std::time::{Duration, Instant};

/// A fixed pseudo-random byte string of 16-528 bytes per index.
fn input(k: u64) -> Vec<u8> {
    let mut x = k.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let len = 16 + (next() % 512) as usize;
    (0..len).map(|_| next() as u8).collect()
}

#[derive(Default)]
struct Phases {
    generate: Duration,
    /// `fuzz_checks::differential_at`, as the target calls it (at the level given).
    target: Duration,
    optimize: Duration,
    run: Duration,
}

fn main() {
    let numbers: Vec<u64> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let programs = numbers.first().copied().unwrap_or(1000);
    let first = numbers.get(1).copied().unwrap_or(0);
    let level = match std::env::args().skip(1).find(|a| a.starts_with("-O")).as_deref() {
        Some("-O1") => ptx_opt::OptLevel::O1,
        Some("-O3") => ptx_opt::OptLevel::O3,
        Some("-O2") | None => fuzz_checks::LEVEL,
        Some(other) => panic!("unknown level `{other}` (-O1, -O2 or -O3)"),
    };
    let mut t = Phases::default();
    let mut steps = 0u64;
    let mut step_limited = 0;
    for k in first..first + programs {
        let data = input(k);
        let (shape, seed) = fuzz_checks::launch_of_input(&data);
        let s = Instant::now();
        let kernel = fuzz_checks::kernel_of_input(&data);
        t.generate += s.elapsed();
        let s = Instant::now();
        let r = fuzz_checks::differential_at(&kernel, shape, seed, 2_000_000, level);
        t.target += s.elapsed();
        assert!(r.is_ok(), "input {k}: {}", r.unwrap_err());
        // The phases of that call, repeated one by one.
        let s = Instant::now();
        let o = fuzz_checks::optimize_parsed(&kernel, level).unwrap();
        t.optimize += s.elapsed();
        let s = Instant::now();
        let mut launch = differential::launch_for(&kernel.spec, &shape, seed);
        launch.max_steps = 2_000_000;
        for (m, text) in [(&o.original, &kernel.text), (&o.parsed, &o.text)] {
            match interp::run(&m.module, &m.source_map, "k", text.as_bytes(), &launch) {
                Ok(o) => steps += o.steps,
                Err(interp::RunError::StepLimit { limit, .. }) => {
                    steps += limit;
                    step_limited += 1;
                }
                Err(_) => {}
            }
        }
        t.run += s.elapsed();
    }
    let whole = t.generate + t.target;
    let pct = |d: Duration| 100.0 * d.as_secs_f64() / whole.as_secs_f64();
    let rest = t.target.saturating_sub(t.optimize + t.run);
    println!("{programs} programs (inputs {first}..{}, {level:?}) in {:.2} s: {:.0} programs/s", first + programs, whole.as_secs_f64(), programs as f64 / whole.as_secs_f64());
    println!("  generate   {:5.1} %", pct(t.generate));
    println!("  optimize   {:5.1} % (parse, optimize, print, re-parse, reprint, verify)", pct(t.optimize));
    println!("  run        {:5.1} % (both modules: {steps} instructions, {:.1} M instructions/s; {step_limited} runs stopped at the step limit)", pct(t.run), steps as f64 / t.run.as_secs_f64() / 1e6);
    println!("  the rest   {:5.1} % (launch set-up, comparison)", pct(rest));
}
