//! Any bytes: parsing never panics; an error is a well-formed
//! `file:line:col: error: ...` diagnostic; whatever parses prints and
//! re-parses to the same IR (`ptx_tests::fuzz_checks::parse`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = ptx_tests::fuzz_checks::parse("fuzz.ptx", data) {
        panic!("{e}");
    }
});
