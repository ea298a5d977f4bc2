//! The print∘parse check: parse, print, re-parse, compare the IR.

use ptx_ir::ir::Module;

/// The outcome of a round trip.
pub struct RoundTrip {
    pub module: Module,
    pub printed: String,
}

/// Parses `text`, prints it (into a string, and as it goes into a writer:
/// the same text), re-parses the output and checks the two IRs are equal
/// and that printing again gives the same text. Returns the first
/// parse's module and the printed text, or a message saying what differed.
pub fn round_trip(name: &str, text: &[u8]) -> Result<RoundTrip, String> {
    let first = ptx_ir::parse(name, text).map_err(|d| d.to_string())?;
    let printed = ptx_print::print_module(&first.module);
    let mut streamed = Vec::new();
    ptx_print::write_module(&first.module, &mut streamed).map_err(|e| format!("printing into a vector failed: {e}"))?;
    if streamed != printed.as_bytes() {
        return Err("printing into a writer gives another text than printing into a string".into());
    }
    let second = ptx_ir::parse(&format!("{name} (printed)"), printed.as_bytes()).map_err(|d| format!("the printed text does not parse: {d}"))?;
    if second.module != first.module {
        return Err(format!("re-parsing the printed text gives a different IR: {}", first_difference(&first.module, &second.module)));
    }
    let again = ptx_print::print_module(&second.module);
    if again != printed {
        return Err("printing the re-parsed module gives different text".into());
    }
    Ok(RoundTrip { module: first.module, printed })
}

/// A short description of where two modules first differ.
pub fn first_difference(a: &Module, b: &Module) -> String {
    if a.version != b.version || a.target != b.target || a.address_size != b.address_size {
        return "module header".into();
    }
    if a.items.len() != b.items.len() {
        return format!("{} items vs {}", a.items.len(), b.items.len());
    }
    for (k, (x, y)) in a.items.iter().zip(&b.items).enumerate() {
        if x == y {
            continue;
        }
        if let (ptx_ir::ir::Item::Func(f), ptx_ir::ir::Item::Func(g)) = (x, y) {
            if let (Some(bf), Some(bg)) = (&f.body, &g.body) {
                for (s, (p, q)) in bf.iter().zip(bg).enumerate() {
                    if p != q {
                        return format!("function `{}` statement {s}: {p:?} vs {q:?}", f.name);
                    }
                }
            }
            return format!("function `{}` header or tables", f.name);
        }
        return format!("item {k}: {x:?} vs {y:?}");
    }
    "nothing".into()
}
