//! Compiles the instruction tables (`isa/*.ptxisa`) into static Rust tables.
//! See `isa/README.md` for the table format and `build/isa_dsl.rs` for the compiler.

#[path = "build/isa_dsl.rs"]
mod isa_dsl;

fn main() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("isa");
    println!("cargo:rerun-if-changed=isa");
    println!("cargo:rerun-if-changed=build");
    println!("cargo:rerun-if-changed=src/isa/vocab.rs");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("ptx-ir/isa exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ptxisa"))
        .collect();
    files.sort();
    let mut table = isa_dsl::Table::default();
    let mut errors = Vec::new();
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let text = std::fs::read_to_string(f).unwrap();
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        if let Err(e) = isa_dsl::parse_file(&format!("isa/{name}"), &text, &mut table) {
            errors.push(e.to_string());
        }
    }
    if !errors.is_empty() {
        for e in &errors {
            println!("cargo:warning={e}");
        }
        panic!("instruction tables have errors:\n{}", errors.join("\n"));
    }
    let code = isa_dsl::emit(&table).unwrap_or_else(|e| panic!("instruction tables: {e}"));
    let out = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("isa_tables.rs");
    std::fs::write(out, code).unwrap();
}
