//! The properties the fuzz targets check, one function per target, shared by
//! the cargo-fuzz binaries (`fuzz/fuzz_targets/`) and the seeded tests of the
//! suite (`tests/tests/fuzz_seeded.rs`), so both check exactly the same
//! thing. Each returns a message saying what broke; a panic inside is a
//! failure too.

use crate::differential::{self, DiffOptions, DiffStats, Shape};
use crate::gen::{self, GenOptions, GeneratedKernel};

/// The optimization level the `optimize` and `differential` targets use.
/// The targets grow with the pipeline: raise it as passes land.
pub const LEVEL: ptx_opt::OptLevel = ptx_opt::OptLevel::O2;

/// `parse`: any bytes. An error must be `NAME:LINE:COL: error: ...` with a
/// position inside the input; what parses must be a print∘parse fixed point.
pub fn parse(name: &str, bytes: &[u8]) -> Result<(), String> {
    match ptx_ir::parse(name, bytes) {
        Err(d) => {
            let s = d.to_string();
            let lines = bytes.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
            let well_formed = s.starts_with(&format!("{name}:{}:{}: error: ", d.line, d.col)) && d.line >= 1 && d.col >= 1 && d.line <= lines;
            if well_formed {
                Ok(())
            } else {
                Err(format!("badly formed diagnostic: {s}"))
            }
        }
        Ok(_) => crate::roundtrip::round_trip(name, bytes).map(|_| ()),
    }
}

/// `roundtrip`: a generated kernel is a print∘parse fixed point.
pub fn roundtrip(k: &GeneratedKernel) -> Result<(), String> {
    crate::roundtrip::round_trip("gen.ptx", k.text.as_bytes()).map(|_| ()).map_err(|e| format!("{e}\n--- kernel ---\n{}", k.text))
}

/// What a fuzzer's input to `roundtrip` and `optimize` stands for: PTX text
/// when it parses (the targets are seeded with real PTX files, and mutations
/// that still parse stay PTX), otherwise the generator's choice stream.
pub enum FuzzInput {
    Ptx(String),
    Generated(GeneratedKernel),
}

/// Reads a fuzzer's input (see [`FuzzInput`]).
pub fn input_of_bytes(data: &[u8]) -> FuzzInput {
    match std::str::from_utf8(data) {
        Ok(text) if ptx_ir::parse("fuzz.ptx", data).is_ok() => FuzzInput::Ptx(text.to_string()),
        _ => FuzzInput::Generated(kernel_of_input(data)),
    }
}

/// `roundtrip` on any input: PTX text or a generated kernel.
pub fn roundtrip_input(input: &FuzzInput) -> Result<(), String> {
    match input {
        FuzzInput::Ptx(text) => crate::roundtrip::round_trip("fuzz.ptx", text.as_bytes()).map(|_| ()),
        FuzzInput::Generated(k) => roundtrip(k),
    }
}

/// `optimize` on any input: PTX text the verifier accepts (text it refuses
/// is not optimized, as `ptx-opt` refuses it) or a generated kernel.
pub fn optimize_input(input: &FuzzInput) -> Result<(), String> {
    match input {
        FuzzInput::Ptx(text) => optimize_text("fuzz.ptx", text).map(|_| ()),
        FuzzInput::Generated(k) => optimize(k).map(|_| ()),
    }
}

/// Optimizes PTX text the verifier accepts and checks the output as
/// [`optimize`] does. Text that does not verify gives `Ok(None)`.
pub fn optimize_text(name: &str, text: &str) -> Result<Option<String>, String> {
    let Ok((parsed, _)) = ptx_ir::verify::parse_and_verify(name, text.as_bytes()) else { return Ok(None) };
    let out = ptx_opt::optimize(parsed.module, LEVEL);
    check_optimized(text, &ptx_print::print_module(&out)).map(Some)
}

/// `optimize`: optimizing a generated kernel does not panic; the output
/// re-parses, prints back to the same text and verifies without errors. Returns the
/// optimized text.
pub fn optimize(k: &GeneratedKernel) -> Result<String, String> {
    let parsed = ptx_ir::parse("gen.ptx", k.text.as_bytes()).map_err(|d| format!("a generated kernel does not parse: {d}\n--- kernel ---\n{}", k.text))?;
    let out = ptx_opt::optimize(parsed.module, LEVEL);
    check_optimized(&k.text, &ptx_print::print_module(&out))
}

/// The output of the optimizer re-parses, prints back to the same text and
/// verifies without errors; gives the text back.
fn check_optimized(input: &str, printed: &str) -> Result<String, String> {
    let printed = printed.to_string();
    let fail = |what: String| format!("{what}\n--- input ---\n{input}\n--- optimized ---\n{printed}");
    let again = ptx_ir::parse("optimized.ptx", printed.as_bytes()).map_err(|d| fail(format!("the optimized module does not re-parse: {d}")))?;
    // The optimizer's tables (register order, new temporaries) need not be
    // the parser's, so the property is on the text: printing what the
    // printed text parses to gives that text again.
    let reprinted = ptx_print::print_module(&again.module);
    if reprinted != printed {
        return Err(fail(format!("printing the re-parsed optimized module gives other text:\n{reprinted}")));
    }
    let errors: Vec<String> = ptx_ir::verify::verify(&again.module, &again.source_map, "optimized.ptx", printed.as_bytes()).into_iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
    if !errors.is_empty() {
        return Err(fail(format!("the optimized module does not verify:\n{}", errors.join("\n"))));
    }
    Ok(printed)
}

/// `differential`: a generated kernel and its optimized version compute the
/// same buffers on the reference interpreter, for one launch shape and
/// input seed.
pub fn differential(k: &GeneratedKernel, shape: Shape, input_seed: u64, max_steps: u64) -> Result<DiffStats, String> {
    let optimized = optimize(k)?;
    let opts = DiffOptions { shapes: vec![shape], max_steps };
    differential::same_behaviour_with(&k.text, &optimized, &k.spec, &[input_seed], &opts).map_err(|e| format!("{e}\n--- kernel ---\n{}\n--- optimized ---\n{optimized}", k.text))
}

/// The kernel a fuzzer's input stands for: the bytes are the generator's
/// choices (small kernels, so that the targets run fast).
pub fn kernel_of_input(data: &[u8]) -> GeneratedKernel {
    gen::kernel_from_bytes(data, &GenOptions::small())
}

/// The launch shape and input seed a fuzzer's input runs with.
pub fn launch_of_input(data: &[u8]) -> (Shape, u64) {
    (differential::SHAPES[data.len() % differential::SHAPES.len()], data.len() as u64)
}
