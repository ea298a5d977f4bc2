//! PTX text (when the input parses; the corpus is seeded with real PTX) or a
//! generated kernel (the input is the generator's choice stream) is a
//! print∘parse fixed point (`ptx_tests::fuzz_checks::roundtrip_input`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptx_tests::fuzz_checks;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = fuzz_checks::roundtrip_input(&fuzz_checks::input_of_bytes(data)) {
        panic!("{e}");
    }
});
