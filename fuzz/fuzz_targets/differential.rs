//! A generated kernel (the input is the generator's choice stream) and its
//! optimized version compute the same buffers on the reference interpreter,
//! for one launch shape and input seed chosen by the input's length.
//! At -O0 the optimized version is the print∘parse round trip.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptx_tests::differential::{same_behaviour_with, DiffOptions, SHAPES};
use ptx_tests::gen::{kernel_from_bytes, GenOptions};

fuzz_target!(|data: &[u8]| {
    let k = kernel_from_bytes(data, &GenOptions::small());
    let parsed = ptx_ir::parse("gen.ptx", k.text.as_bytes()).unwrap_or_else(|d| panic!("a generated kernel does not parse: {d}\n{}", k.text));
    let out = ptx_opt::optimize(parsed.module, ptx_opt::OptLevel::O0);
    let printed = ptx_print::print_module(&out);
    let seed = data.len() as u64;
    let opts = DiffOptions { shapes: vec![SHAPES[data.len() % SHAPES.len()]], max_steps: 2_000_000 };
    if let Err(e) = same_behaviour_with(&k.text, &printed, &k.spec, &[seed], &opts) {
        panic!("{e}\n--- original ---\n{}\n--- optimized ---\n{printed}", k.text);
    }
});
