//! Stand-alone checker for instruction tables, for working on a table without
//! building the crate: `rustc --edition 2021 -O ptx-ir/build/isa_check.rs -o /tmp/isa-check`
//! then `/tmp/isa-check ptx-ir/isa/*.ptxisa [draft.ptxisa]`. Prints every form as compiled.
#[allow(dead_code)]
mod isa_dsl;

fn main() {
    let mut table = isa_dsl::Table::default();
    let mut ok = true;
    let verbose = std::env::args().any(|a| a == "-v");
    for f in std::env::args().skip(1).filter(|a| a != "-v") {
        let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{f}: {e}"));
        if let Err(e) = isa_dsl::parse_file(&f, &text, &mut table) {
            eprintln!("error: {e}");
            ok = false;
        }
    }
    if let Err(e) = isa_dsl::emit(&table) {
        eprintln!("error: {e}");
        ok = false;
    }
    if verbose {
        for f in &table.forms {
            let slots: Vec<String> = f
                .slots
                .iter()
                .map(|s| format!("{}{}{}:{:?}", if s.optional { "{" } else { "" }, s.allowed.join("|"), if s.optional { "}" } else { "" }, s.role))
                .collect();
            let ops: Vec<String> = f.operands.iter().map(|o| format!("{}{:?}{}", o.names.join("|"), o.kind, if o.optional { "?" } else { "" })).collect();
            println!("{:<24} {}  ::  {}", f.opcode, slots.join(" "), ops.join(", "));
        }
    }
    println!("{} opcodes, {} forms", table.opcodes.len(), table.forms.len());
    std::process::exit(if ok { 0 } else { 1 });
}
