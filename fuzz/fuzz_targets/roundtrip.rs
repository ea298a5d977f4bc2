//! A generated kernel (the input is the generator's choice stream): it parses,
//! and print∘parse is a fixed point.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptx_tests::gen::{kernel_from_bytes, GenOptions};

fuzz_target!(|data: &[u8]| {
    let k = kernel_from_bytes(data, &GenOptions::small());
    if let Err(e) = ptx_tests::roundtrip::round_trip("gen.ptx", k.text.as_bytes()) {
        panic!("{e}\n{}", k.text);
    }
});
