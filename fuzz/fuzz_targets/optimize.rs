//! PTX text the verifier accepts (the corpus is seeded with real PTX) or a
//! generated kernel (the input is the generator's choice stream): optimizing
//! never panics, and the output re-parses, prints back to the same text and
//! verifies without errors (`ptx_tests::fuzz_checks::optimize_input`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptx_tests::fuzz_checks;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = fuzz_checks::optimize_input(&fuzz_checks::input_of_bytes(data)) {
        panic!("{e}");
    }
});
