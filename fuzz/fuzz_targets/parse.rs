//! Any bytes: parsing never panics; whatever parses prints and re-parses to the same IR.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = ptx_ir::parse("fuzz.ptx", data) {
        let printed = ptx_print::print_module(&p.module);
        let again = ptx_ir::parse("printed.ptx", printed.as_bytes()).expect("printed PTX parses");
        assert!(again.module == p.module, "print∘parse is not a fixed point");
    }
});
