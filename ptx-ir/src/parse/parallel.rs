//! Parsing a large module on every core: the text is cut into its items
//! ([`split::split_items`], the cut the incremental database uses), the
//! module-level names are read from every item first, and runs of
//! consecutive items are parsed at the same time, each by its own parser
//! that knows all those names.
//!
//! **The invariant:** the result is exactly the one-pass parse's: the same
//! module and the same source map. A function may name a symbol declared
//! later in both (the one-pass parser finds it by a scan ahead,
//! `Parser::is_global`), and positions are shifted from each run back to
//! the whole text. Any error, in the header or in any run, gives up here:
//! the caller parses the whole text in one pass, so a bad input gets the
//! one-pass parser's first error, with its position and message.

use super::cursor::{GlobalKind, Parser};
use super::{parse_header, split, Parsed, SourceMap};
use crate::ir::{Item, Module};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::ops::Range;

/// Runs of items per thread: enough for the threads to balance uneven
/// items, few enough that each parser's caches of instruction heads stay warm.
const RUNS_PER_THREAD: usize = 4;

/// The module, parsed a run of items per task; `None` when any part does
/// not parse on its own (the caller then parses in one pass).
pub fn parse(file: &str, text: &[u8]) -> Option<Parsed> {
    let start = split::header_end(text)?;
    let header = parse_header(file, &text[..start]).ok()?;
    let items = split::split_items(text, start);
    // Runs of items, as byte ranges, of about equal size.
    let total = items.last().map_or(0, |r| r.end) - items.first().map_or(0, |r| r.start);
    let target = total.div_ceil(rayon::current_num_threads() * RUNS_PER_THREAD).max(1);
    let runs: Vec<Range<usize>> = crate::threads::runs(items.iter().map(|r| r.len()), target).into_iter().map(|run| items[run.start].start..items[run.end - 1].end).collect();
    let names: Vec<Vec<(Box<str>, GlobalKind)>> = items.par_iter().map(|r| split::item_names(&text[r.clone()])).collect();
    let mut globals: FxHashMap<Box<str>, GlobalKind> = FxHashMap::default();
    for (name, kind) in names.into_iter().flatten() {
        globals.entry(name).or_insert(kind);
    }
    let parts: Vec<Option<(Vec<Item>, SourceMap)>> = runs.par_iter().map(|run| parse_run(file, text, run.clone(), &globals)).collect();
    let mut module = Module { version: header.version, target: header.target, address_size: header.address_size, items: Vec::with_capacity(items.len()) };
    let mut map = SourceMap { header: header.spans, ..SourceMap::default() };
    for part in parts {
        let (run_items, run_map) = part?;
        module.items.extend(run_items);
        map.items.extend(run_map.items);
        map.stmts.extend(run_map.stmts);
        map.params.extend(run_map.params);
        map.headers.extend(run_map.headers);
    }
    Some(Parsed { module, source_map: map })
}

/// The items of `range` of the text, with positions in the whole text.
fn parse_run(file: &str, text: &[u8], range: Range<usize>, globals: &FxHashMap<Box<str>, GlobalKind>) -> Option<(Vec<Item>, SourceMap)> {
    let mut p = Parser::new(file, &text[range.clone()]);
    p.known_globals = Some(globals);
    let (mut items, mut map) = (Vec::new(), SourceMap::default());
    p.items_to_end(&mut items, &mut map).ok()?;
    let delta = u32::try_from(range.start).ok()?;
    let shift = |s: &mut crate::source::Span| {
        s.start += delta;
        s.end += delta;
    };
    map.items.iter_mut().for_each(shift);
    map.stmts.iter_mut().chain(map.params.iter_mut()).flatten().for_each(shift);
    // Only functions have a header span (others keep the empty default).
    map.headers.iter_mut().zip(&items).filter(|(_, i)| matches!(i, Item::Func(_))).for_each(|(h, _)| shift(h));
    Some((items, map))
}
