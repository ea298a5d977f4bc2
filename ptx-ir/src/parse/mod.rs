//! The PTX parser: tokens to [`Module`], with a [`SourceMap`] of positions.
//!
//! A hand-written recursive-descent parser over the lexer's tokens. Nested
//! scopes are handled with an explicit stack (no recursion), constant
//! expressions and initializers recurse with a depth limit, so no input can
//! overflow the stack. The first error stops the parse and is reported as
//! `file:line:col: error: found X, expected Y`.
//!
//! A large text is parsed a run of items per core ([`parse_in_parallel`],
//! `parallel.rs`), with exactly the one-pass result.

mod cursor;
mod decl;
mod expr;
mod function;
mod instruction;
mod module;
mod parallel;
mod scope;
pub mod split;

use crate::ir::Module;
use crate::source::{Diagnostic, Span};

pub use cursor::GlobalKind;
pub use expr::{eval as expr_value, eval_int, ExprValue};

/// Where things came from: spans of module items and of function statements.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceMap {
    /// One span per `Module::items` entry.
    pub items: Vec<Span>,
    /// For items that are functions with bodies: one span per statement.
    pub stmts: Vec<Vec<Span>>,
    /// For items that are functions: one span per parameter.
    pub params: Vec<Vec<Span>>,
    /// For items that are functions: the `)` closing the parameter list (or the name).
    pub headers: Vec<Span>,
    /// The module header's directives and their operands.
    pub header: HeaderSpans,
}

impl SourceMap {
    pub fn push(&mut self, s: ItemSpans) {
        self.items.push(s.item);
        self.stmts.push(s.stmts);
        self.params.push(s.params);
        self.headers.push(s.header);
    }
}

/// The positions of one item (see [`SourceMap`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ItemSpans {
    pub item: Span,
    /// A function's statements; for a later `.target` directive, its names.
    pub stmts: Vec<Span>,
    pub params: Vec<Span>,
    pub header: Span,
}

/// The module header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub version: crate::ir::Version,
    pub target: Vec<crate::ir::Name>,
    pub address_size: Option<u32>,
    pub spans: HeaderSpans,
}

/// Where the module header's parts are.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeaderSpans {
    /// The version number (`8.0` of `.version 8.0`).
    pub version: Span,
    /// The `.target` directive.
    pub target: Span,
    /// One span per name of the `.target` list.
    pub target_names: Vec<Span>,
    /// The `.address_size` directive, when there is one.
    pub address_size: Option<Span>,
}

/// A parsed module with its positions.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    pub module: Module,
    pub source_map: SourceMap,
}

/// Parses a PTX module. `file` is only used in diagnostics. A large text
/// is parsed on all of rayon's threads ([`crate::threads`]); the result
/// (module, positions, errors) is the same either way.
pub fn parse(file: &str, text: &[u8]) -> Result<Parsed, Diagnostic> {
    if crate::threads::worth_splitting(text.len()) {
        if let Some(p) = parallel::parse(file, text) {
            return Ok(p);
        }
    }
    parse_in_one_pass(file, text)
}

/// [`parse_in_one_pass`] without the fast paths (plain declarations, lone
/// literals), which must give exactly what it gives.
#[cfg(test)]
fn parse_without_fast_paths(file: &str, text: &[u8]) -> Result<Parsed, Diagnostic> {
    let mut p = cursor::Parser::new(file, text);
    p.fast_paths = false;
    let (module, source_map) = p.module()?;
    Ok(Parsed { module, source_map })
}

#[cfg(test)]
mod fast_path_tests;

/// Parses a PTX module from start to end on this thread.
pub fn parse_in_one_pass(file: &str, text: &[u8]) -> Result<Parsed, Diagnostic> {
    let mut p = cursor::Parser::new(file, text);
    let (module, source_map) = p.module()?;
    Ok(Parsed { module, source_map })
}

/// Parses a module a run of items per task on rayon's threads, whatever
/// its size; `None` when some part does not parse on its own (then
/// [`parse_in_one_pass`] gives the error). When it gives a module, it is
/// the one [`parse_in_one_pass`] gives, with the same positions.
pub fn parse_in_parallel(file: &str, text: &[u8]) -> Option<Parsed> {
    parallel::parse(file, text)
}

/// Parses just the module header (the text before the first item).
pub fn parse_header(file: &str, text: &[u8]) -> Result<Header, Diagnostic> {
    let mut p = cursor::Parser::new(file, text);
    let h = p.header()?;
    if !p.at(crate::lexer::TokenKind::Eof) {
        return p.expected("the end of the module header");
    }
    Ok(h)
}

/// Parses one top-level item's text (as cut by [`split::split_items`]), given
/// every module-level name. `Ok(None)` for text with no item (comments only).
/// Positions are relative to `text`.
pub fn parse_item(file: &str, text: &[u8], globals: &rustc_hash::FxHashMap<Box<str>, GlobalKind>) -> Result<Option<(crate::ir::Item, ItemSpans)>, Diagnostic> {
    let mut p = cursor::Parser::new(file, text);
    p.known_globals = Some(globals);
    if p.at(crate::lexer::TokenKind::Eof) {
        return Ok(None);
    }
    let r = p.spanned_item()?;
    if !p.at(crate::lexer::TokenKind::Eof) {
        return p.expected("the end of the item");
    }
    Ok(Some(r))
}

/// Parses a PTX module from a string, discarding positions.
pub fn parse_str(text: &str) -> Result<Module, Diagnostic> {
    parse("<input>", text.as_bytes()).map(|p| p.module)
}
