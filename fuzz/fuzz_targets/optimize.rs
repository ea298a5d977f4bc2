//! A generated kernel (the input is the generator's choice stream): optimizing
//! never panics, and the output re-parses to the same IR and verifies without
//! errors. At -O0 the pipeline is empty; the target grows with the passes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptx_tests::gen::{kernel_from_bytes, GenOptions};

fuzz_target!(|data: &[u8]| {
    let k = kernel_from_bytes(data, &GenOptions::small());
    let parsed = ptx_ir::parse("gen.ptx", k.text.as_bytes()).unwrap_or_else(|d| panic!("a generated kernel does not parse: {d}\n{}", k.text));
    let out = ptx_opt::optimize(parsed.module, ptx_opt::OptLevel::O0);
    let printed = ptx_print::print_module(&out);
    let again = ptx_ir::parse("optimized.ptx", printed.as_bytes()).unwrap_or_else(|d| panic!("the optimized module does not re-parse: {d}\n{printed}"));
    assert!(again.module == out, "re-parsing the optimized module gives a different IR\n{printed}");
    let errors: Vec<String> = ptx_ir::verify::verify(&again.module, &again.source_map, "optimized.ptx", printed.as_bytes()).into_iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
    assert!(errors.is_empty(), "the optimized module does not verify:\n{}\n{printed}", errors.join("\n"));
});
