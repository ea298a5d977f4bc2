//! The PTX parser: tokens to [`Module`], with a [`SourceMap`] of positions.
//!
//! A hand-written recursive-descent parser over the lexer's tokens. Nested
//! scopes are handled with an explicit stack (no recursion), constant
//! expressions and initializers recurse with a depth limit, so no input can
//! overflow the stack. The first error stops the parse and is reported as
//! `file:line:col: error: found X, expected Y`.

mod cursor;
mod decl;
mod expr;
mod function;
mod instruction;
mod module;
mod scope;
pub mod split;

use crate::ir::Module;
use crate::source::{Diagnostic, Span};

pub use expr::{eval_int, ExprValue};

/// Where things came from: spans of module items and of function statements.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    /// One span per `Module::items` entry.
    pub items: Vec<Span>,
    /// For items that are functions with bodies: one span per statement.
    pub stmts: Vec<Vec<Span>>,
    /// For items that are functions: one span per parameter.
    pub params: Vec<Vec<Span>>,
    /// For items that are functions: the `)` closing the parameter list (or the name).
    pub headers: Vec<Span>,
    /// The first `.target` directive.
    pub target: Span,
}

/// A parsed module with its positions.
#[derive(Clone, Debug)]
pub struct Parsed {
    pub module: Module,
    pub source_map: SourceMap,
}

/// Parses a PTX module. `file` is only used in diagnostics.
pub fn parse(file: &str, text: &[u8]) -> Result<Parsed, Diagnostic> {
    let mut p = cursor::Parser::new(file, text);
    let (module, source_map) = p.module()?;
    Ok(Parsed { module, source_map })
}

/// Parses a PTX module from a string, discarding positions.
pub fn parse_str(text: &str) -> Result<Module, Diagnostic> {
    parse("<input>", text.as_bytes()).map(|p| p.module)
}
