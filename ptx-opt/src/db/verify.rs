//! The verifier in the incremental database: each item is verified on its
//! own against a [`Context`] (the header and every declaration's shape), so
//! an edit re-verifies only the edited item, plus the others when the edit
//! changes the header or a declaration.
//!
//! Queries: [`verify_context`] (per file), [`verified_item`] (per item,
//! positions relative to the item's text), [`verifier_diagnostics`] (per
//! file, positions in the file). [`Database::verifier_diagnostics`] gives
//! them; [`Database::printed`] fails on the first verifier error, as the
//! command does.

use super::{diagnostics, header, parsed_item, Database, ItemSource, ParsedItem, SourceFile};
use ptx_ir::ir::Item;
use ptx_ir::source::Diagnostic;
use ptx_ir::verify::{misplaced_target, verify_header, verify_item, Context};

/// What verifying one item needs of the rest of its file. Equal after an
/// edit that changes no header or declaration, so the queries of the other
/// items keep their results.
#[salsa::tracked(returns(ref))]
pub fn verify_context(db: &dyn salsa::Database, file: SourceFile) -> Context {
    let Ok(h) = header(db, file) else { return Context::default() };
    let items: Vec<_> = file.items(db).iter().filter_map(|i| parsed_item(db, *i).as_ref().ok().and_then(|p| p.item.clone())).collect();
    Context::new(h.version, &h.target, h.address_size, items.iter().map(|i| &**i))
}

/// One item's verifier diagnostics, positions relative to its text.
#[salsa::tracked(returns(ref))]
pub fn verified_item(db: &dyn salsa::Database, item: ItemSource) -> Vec<Diagnostic> {
    let Ok(ParsedItem { item: Some(i), spans }) = parsed_item(db, item) else { return Vec::new() };
    let file = item.file(db);
    verify_item(verify_context(db, file), i, spans, file.name(db), item.text(db).as_bytes())
}

/// Where an item's text starts: how many lines come before it and how many
/// bytes of its first line.
#[salsa::tracked(returns(copy))]
fn item_extent(db: &dyn salsa::Database, item: ItemSource) -> (u32, u32) {
    extent(item.text(db))
}

/// The newlines in `text` and the bytes after the last one.
fn extent(text: &str) -> (u32, u32) {
    let newlines = text.bytes().filter(|b| *b == b'\n').count() as u32;
    let tail = text.len() - text.rfind('\n').map_or(0, |k| k + 1);
    (newlines, tail as u32)
}

/// Every verifier diagnostic of the file (errors and warnings), with
/// positions in the file, in order; empty while the file does not parse
/// (its parse errors are [`diagnostics`]).
#[salsa::tracked(returns(ref))]
pub fn verifier_diagnostics(db: &dyn salsa::Database, file: SourceFile) -> Vec<Diagnostic> {
    if !diagnostics(db, file).is_empty() {
        return Vec::new();
    }
    let Ok(h) = header(db, file) else { return Vec::new() };
    let ctx = verify_context(db, file);
    let mut out = verify_header(ctx, h.version, &h.target, &h.spans, file.name(db), file.header_text(db).as_bytes());
    // Lines before the current item, and bytes of its first line before it.
    let (mut lines, mut col) = extent(file.header_text(db));
    let mut leading = true;
    for item in file.items(db) {
        let moved = |d: &Diagnostic| Diagnostic { line: d.line + lines, col: if d.line == 1 { d.col + col } else { d.col }, ..d.clone() };
        out.extend(verified_item(db, *item).iter().map(moved));
        if let Ok(ParsedItem { item: Some(i), spans }) = parsed_item(db, *item) {
            leading &= matches!(&**i, Item::Target(_));
            if let Some(msg) = misplaced_target(i, leading, h.address_size) {
                let local = ptx_ir::source::LineIndex::new(item.text(db).as_bytes());
                out.push(moved(&Diagnostic::error(file.name(db), &local, spans.item, msg)));
            }
        }
        let (n, tail) = item_extent(db, *item);
        col = if n == 0 { col + tail } else { tail };
        lines += n;
    }
    out
}

impl Database {
    /// The verifier's diagnostics of a file (errors and warnings), with
    /// file positions; empty while the file does not parse.
    pub fn verifier_diagnostics(&self, file: SourceFile) -> &[Diagnostic] {
        verifier_diagnostics(self, file)
    }

    /// The first verifier error of a file, if any.
    pub(super) fn first_verifier_error(&self, file: SourceFile) -> Option<&Diagnostic> {
        verifier_diagnostics(self, file).iter().find(|d| d.is_error())
    }
}
