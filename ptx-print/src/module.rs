//! Module header and module-level items.

use crate::data::{write_decl, write_expr};
use crate::function::write_function;
use ptx_ir::ir::{Item, Module, SectionEntry};
use std::fmt::Write;

/// Prints a whole module. A large module's items are printed a run per
/// task on rayon's threads ([`ptx_ir::threads`]) and joined: the same text.
pub fn print_module(m: &Module) -> String {
    let estimate = estimate_len(&m.items);
    let mut out = String::with_capacity(estimate);
    write_header(&mut out, m);
    if !ptx_ir::threads::worth_splitting(estimate) {
        write_items(&mut out, &m.items, 0..m.items.len());
        return out;
    }
    use rayon::prelude::*;
    // A round of runs, one per thread, is printed at once and appended
    // before the next: at most a round's texts exist beside the output.
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
        texts.iter().for_each(|t| out.push_str(t));
    }
    out
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
