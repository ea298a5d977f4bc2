//! Module header and module-level items.

use crate::data::{write_decl, write_expr};
use crate::function::write_function;
use ptx_ir::ir::{Item, Module, SectionEntry};
use std::fmt::Write;

/// Prints a whole module.
pub fn print_module(m: &Module) -> String {
    let mut out = String::with_capacity(estimate_len(&m.items));
    let printed = emit_module(m, &mut out);
    debug_assert!(printed.is_ok(), "printing into a string cannot fail");
    out
}

/// Prints a whole module into `w` as it goes: the text [`print_module`]
/// gives, without ever holding all of it (a large module's rounds, below,
/// or a small module's items one at a time).
pub fn write_module(m: &Module, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    emit_module(m, &mut Writing { w, piece: String::new() })
}

/// Where a module's text goes as it is printed.
trait Sink {
    /// The string to print the next piece into.
    fn buffer(&mut self) -> &mut String;
    /// The piece printed into [`Sink::buffer`] is complete.
    fn piece_done(&mut self) -> std::io::Result<()>;
    /// A piece printed elsewhere (a thread's run of items).
    fn put(&mut self, text: &str) -> std::io::Result<()>;
}

/// A string holds the whole text: pieces are printed straight into it.
impl Sink for String {
    fn buffer(&mut self) -> &mut String {
        self
    }

    fn piece_done(&mut self) -> std::io::Result<()> {
        Ok(())
    }

    fn put(&mut self, text: &str) -> std::io::Result<()> {
        self.push_str(text);
        Ok(())
    }
}

/// A writer is handed each piece when it is complete.
struct Writing<'w> {
    w: &'w mut dyn std::io::Write,
    piece: String,
}

impl Sink for Writing<'_> {
    fn buffer(&mut self) -> &mut String {
        &mut self.piece
    }

    fn piece_done(&mut self) -> std::io::Result<()> {
        self.w.write_all(self.piece.as_bytes())?;
        self.piece.clear();
        Ok(())
    }

    fn put(&mut self, text: &str) -> std::io::Result<()> {
        self.w.write_all(text.as_bytes())
    }
}

/// Prints a module a piece at a time into `sink`. A large module's items
/// are printed a run per task on rayon's threads ([`ptx_ir::threads`]) and
/// handed over in order: the same text.
fn emit_module(m: &Module, sink: &mut dyn Sink) -> std::io::Result<()> {
    write_header(sink.buffer(), m);
    sink.piece_done()?;
    let estimate = estimate_len(&m.items);
    if !ptx_ir::threads::worth_splitting(estimate) {
        for k in 0..m.items.len() {
            write_items(sink.buffer(), &m.items, k..k + 1);
            sink.piece_done()?;
        }
        return Ok(());
    }
    use rayon::prelude::*;
    // A round of runs, one per thread, is printed at once and handed over
    // before the next: at most a round's texts exist at a time.
    let threads = rayon::current_num_threads();
    let runs = ptx_ir::threads::runs(m.items.iter().map(item_len), estimate.div_ceil(threads * ROUNDS));
    for round in runs.chunks(threads) {
        let texts: Vec<String> = round
            .par_iter()
            .map(|run| {
                let mut text = String::with_capacity(estimate_len(&m.items[run.clone()]));
                write_items(&mut text, &m.items, run.clone());
                text
            })
            .collect();
        for t in &texts {
            sink.put(t)?;
        }
    }
    Ok(())
}

/// Rounds a large module is printed in (see [`print_module`]).
const ROUNDS: usize = 4;

/// Items `run` of `items`, each after its separator.
fn write_items(out: &mut String, items: &[Item], run: std::ops::Range<usize>) {
    let mut prev_func = run.start > 0 && matches!(items[run.start - 1], Item::Func(_));
    for item in &items[run] {
        write_separator(out, item, prev_func);
        prev_func = matches!(item, Item::Func(_));
        write_item(out, item);
    }
}

/// `.version`, `.target`, `.address_size`.
pub fn write_header(out: &mut String, m: &Module) {
    let _ = writeln!(out, ".version {}.{}", m.version.major, m.version.minor);
    let _ = writeln!(out, ".target {}", m.target.join(", "));
    if let Some(a) = m.address_size {
        let _ = writeln!(out, ".address_size {a}");
    }
}

/// The blank line that sets functions apart from what surrounds them.
pub fn write_separator(out: &mut String, item: &Item, prev_was_func: bool) {
    if matches!(item, Item::Func(_)) || prev_was_func {
        out.push('\n');
    }
}

/// One module-level item.
pub fn write_item(out: &mut String, item: &Item) {
    match item {
        Item::Target(t) => {
            let _ = writeln!(out, ".target {}", t.join(", "));
        }
        Item::File(f) => {
            let _ = write!(out, ".file {} {}", f.index, f.name);
            if let Some(t) = f.timestamp {
                let _ = write!(out, ", {t}");
                if let Some(s) = f.size {
                    let _ = write!(out, ", {s}");
                }
            }
            out.push('\n');
        }
        Item::Section(s) => {
            let _ = writeln!(out, ".section {}\n{{", s.name);
            for e in &s.entries {
                match e {
                    SectionEntry::Label(l) => {
                        let _ = writeln!(out, "{l}:");
                    }
                    SectionEntry::Data { width, values } => {
                        let _ = write!(out, ".b{width} ");
                        for (k, v) in values.iter().enumerate() {
                            if k > 0 {
                                out.push(',');
                            }
                            write_expr(out, v);
                        }
                        out.push('\n');
                    }
                }
            }
            out.push_str("}\n");
        }
        Item::Pragma(p) => {
            let _ = writeln!(out, ".pragma {};", p.join(", "));
        }
        Item::Alias { alias, aliasee } => {
            let _ = writeln!(out, ".alias {alias}, {aliasee};");
        }
        Item::Var(v) => {
            if let Some(l) = v.linkage {
                out.push_str(l.text());
                out.push(' ');
            }
            write_decl(out, &v.decl);
            out.push_str(";\n");
        }
        Item::Func(f) => write_function(out, f),
        Item::Dwarf(text) => {
            if text.is_empty() {
                out.push_str("@@DWARF\n");
            } else {
                let _ = writeln!(out, "@@DWARF {text}");
            }
        }
    }
}

/// A guess at the printed size (at least 4 KiB), so the output buffer is
/// not regrown many times.
fn estimate_len(items: &[Item]) -> usize {
    4096 + items.iter().map(item_len).sum::<usize>()
}

/// About how many bytes `item` prints to.
fn item_len(item: &Item) -> usize {
    match item {
        Item::Func(f) => 64 + f.body.as_ref().map_or(0, |b| b.len() * 32),
        Item::Section(s) => 16 + s.entries.len() * 24,
        _ => 64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes `room` bytes, then fails.
    struct Full {
        room: usize,
    }

    impl std::io::Write for Full {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if buf.len() > self.room {
                return Err(std::io::Error::other("no room left"));
            }
            self.room -= buf.len();
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_writer_gets_the_text_a_string_gets_and_its_errors_are_returned() {
        let body = "\tmov.u32 %r1, 1;\n".repeat(50);
        let text = format!(".version 8.0\n.target sm_80\n.address_size 64\n.global .b32 g;\n.visible .entry k()\n{{\n.reg .b32 %r<2>;\n{body}ret;\n}}\n");
        let m = ptx_ir::parse_str(&text).unwrap();
        let printed = print_module(&m);
        let mut streamed = Vec::new();
        write_module(&m, &mut streamed).unwrap();
        assert_eq!(String::from_utf8(streamed).unwrap(), printed);
        assert!(write_module(&m, &mut Full { room: printed.len() }).is_ok());
        for room in [0, 10, printed.len() / 2, printed.len() - 1] {
            assert!(write_module(&m, &mut Full { room }).is_err(), "{room} bytes of {}", printed.len());
        }
    }
}
