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

use super::{header, items_parse, parsed_item, whole, Database, ItemSource, ParsedItem, SourceFile};
use ptx_ir::source::Diagnostic;
use ptx_ir::verify::{misplaced_target, verify_header, verify_item, Context, Declarations};

/// What an item declares for the others, `None` when it does not parse
/// (unchanged by edits inside a function body that parses, so neither
/// [`verify_context`] nor [`items_parse`](super::items_parse) is recomputed
/// for them).
#[salsa::tracked(returns(ref))]
pub(super) fn item_declarations(db: &dyn salsa::Database, item: ItemSource) -> Option<Declarations> {
    match parsed_item(db, item) {
        Ok(ParsedItem { item: Some(i), .. }) => Some(Declarations::of(i)),
        Ok(ParsedItem { item: None, .. }) => Some(Declarations::default()),
        Err(_) => None,
    }
}

/// What verifying one item needs of the rest of its file. Equal after an
/// edit that changes no header or declaration, so the queries of the other
/// items keep their results. Items read it through [`SourceFile::context`],
/// the copy the [`Database`] keeps.
#[salsa::tracked(returns(ref))]
pub fn verify_context(db: &dyn salsa::Database, file: SourceFile) -> Context {
    let Ok(h) = header(db, file) else { return Context::default() };
    Context::new(h.version, &h.target, h.address_size, file.items(db).iter().filter_map(|i| item_declarations(db, *i).as_ref()))
}

/// One item's verifier diagnostics, positions relative to its text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ItemVerdict {
    /// The text holds an item (not only comments).
    pub is_item: bool,
    /// The text does not parse (the error is in [`diagnostics`](super::diagnostics)).
    pub parse_error: bool,
    /// The newlines in the item's text and the bytes after the last one
    /// (where the next item starts).
    pub extent: (u32, u32),
    pub diagnostics: Vec<Diagnostic>,
    /// For a `.target` directive: the error it is unless only `.target`
    /// directives come before it and there is no `.address_size`.
    pub misplaced: Option<Diagnostic>,
}

/// One item's verifier diagnostics, positions relative to its text.
#[salsa::tracked(returns(ref))]
pub fn verified_item(db: &dyn salsa::Database, item: ItemSource) -> ItemVerdict {
    let extent = extent(item.text(db));
    let (i, spans) = match parsed_item(db, item) {
        Ok(ParsedItem { item: Some(i), spans }) => (i, spans),
        Ok(_) => return ItemVerdict { extent, ..ItemVerdict::default() },
        Err(_) => return ItemVerdict { extent, parse_error: true, ..ItemVerdict::default() },
    };
    let file = item.file(db);
    let text = item.text(db).as_bytes();
    let diagnostics = verify_item(file.context(db), i, spans, file.name(db), text);
    let misplaced = misplaced_target(i, false, None).map(|msg| Diagnostic::error(file.name(db), &ptx_ir::source::LineIndex::new(text), spans.item, msg));
    ItemVerdict { is_item: true, parse_error: false, extent, diagnostics, misplaced }
}

/// The newlines in `text` and the bytes after the last one.
fn extent(text: &str) -> (u32, u32) {
    let newlines = text.bytes().filter(|b| *b == b'\n').count() as u32;
    let tail = text.len() - text.rfind('\n').map_or(0, |k| k + 1);
    (newlines, tail as u32)
}

/// Every verifier diagnostic of the file (errors and warnings), with
/// positions in the file, in order; empty while the file does not parse
/// (its parse errors are [`diagnostics`](super::diagnostics)).
#[salsa::tracked(returns(ref))]
pub fn verifier_diagnostics(db: &dyn salsa::Database, file: SourceFile) -> Vec<Diagnostic> {
    if !items_parse(db, file) {
        // What a fresh parse of the whole text gives, verified whole.
        return whole(db, file).as_ref().map_or_else(|_| Vec::new(), |w| w.verifier.clone());
    }
    let Ok(h) = header(db, file) else { return Vec::new() };
    let mut out = verify_header(file.context(db), h.version, &h.target, &h.spans, file.name(db), file.header_text(db).as_bytes());
    // Lines before the current item, and bytes of its first line before it.
    let (mut lines, mut col) = extent(file.header_text(db));
    let mut leading = true;
    for item in file.items(db) {
        let moved = |d: &Diagnostic| Diagnostic {
            line: d.line + lines,
            col: if d.line == 1 { d.col + col } else { d.col },
            end_line: d.end_line + lines,
            end_col: if d.end_line == 1 { d.end_col + col } else { d.end_col },
            ..d.clone()
        };
        let verdict = verified_item(db, *item);
        if verdict.parse_error {
            return Vec::new();
        }
        out.extend(verdict.diagnostics.iter().map(moved));
        // Text that holds no item (comments) does not end the leading `.target` lines.
        if verdict.is_item {
            leading &= verdict.misplaced.is_some();
        }
        if let Some(d) = verdict.misplaced.as_ref().filter(|_| !leading || h.address_size.is_some()) {
            out.push(moved(d));
        }
        let (n, tail) = verdict.extent;
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
