//! A file and a sequence of edits (the input picks the file, or holds its
//! text, and encodes the edits): after each edit the incremental database's
//! answers are those of a fresh parse of the text, and invalid edit ranges
//! are refused, never a panic (`ptx_tests::fuzz_checks::incremental`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptx_tests::fuzz_checks;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = fuzz_checks::incremental(data) {
        panic!("{e}");
    }
});
