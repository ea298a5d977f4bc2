//! A generated kernel (the input is the generator's choice stream) and its
//! optimized version compute the same buffers on the reference interpreter,
//! for a launch shape and input seed chosen by the input
//! (`ptx_tests::fuzz_checks::differential`). One input in eight makes a
//! kernel with warp-level matrix tiles (`mma.sync`, `ldmatrix`,
//! `movmatrix`), run on a whole-warp shape.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptx_tests::fuzz_checks;

fuzz_target!(|data: &[u8]| {
    let (shape, seed) = fuzz_checks::launch_of_input(data);
    if let Err(e) = fuzz_checks::differential(&fuzz_checks::kernel_of_input(data), shape, seed, 2_000_000) {
        panic!("{e}");
    }
});
