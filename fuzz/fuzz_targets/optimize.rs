//! A generated kernel (the input is the generator's choice stream):
//! optimizing never panics, and the output re-parses to the same IR and
//! verifies without errors (`ptx_tests::fuzz_checks::optimize`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptx_tests::fuzz_checks;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = fuzz_checks::optimize(&fuzz_checks::kernel_of_input(data)) {
        panic!("{e}");
    }
});
