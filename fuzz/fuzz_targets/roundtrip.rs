//! A generated kernel (the input is the generator's choice stream) is a
//! print∘parse fixed point (`ptx_tests::fuzz_checks::roundtrip`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptx_tests::fuzz_checks;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = fuzz_checks::roundtrip(&fuzz_checks::kernel_of_input(data)) {
        panic!("{e}");
    }
});
