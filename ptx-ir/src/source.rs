//! Source positions and diagnostics.
//!
//! The IR itself holds no positions (so that two parses of equal text give
//! equal IR, and so that editing one function does not make the others look
//! changed); positions live in a [`SourceMap`](crate::parse::SourceMap) beside it.

use std::fmt;

/// A byte range in one source text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start: start as u32, end: end as u32 }
    }
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
}

/// Converts byte offsets to 1-based line and column numbers.
#[derive(Clone, Debug)]
pub struct LineIndex {
    line_starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(text: &[u8]) -> LineIndex {
        let mut line_starts = vec![0];
        for (i, b) in text.iter().enumerate() {
            if *b == b'\n' {
                line_starts.push(i as u32 + 1);
            }
        }
        LineIndex { line_starts }
    }

    /// 1-based (line, column); the column counts bytes.
    pub fn line_col(&self, offset: u32) -> (u32, u32) {
        let line = match self.line_starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l - 1,
        };
        (line as u32 + 1, offset - self.line_starts[line] + 1)
    }
}

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// A message about a place in a source file: `file:line:col: error: message`.
///
/// `line`/`col` is where the span starts and `end_line`/`end_col` the
/// position just after it (equal to the start for an empty span); both
/// 1-based, columns in bytes. `notes` say where the place is (`in function
/// `k``) or what else to know; `Display` shows only the first line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub end_line: u32,
    pub end_col: u32,
    pub message: String,
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn error(file: &str, index: &LineIndex, span: Span, message: impl Into<String>) -> Diagnostic {
        let (line, col) = index.line_col(span.start);
        let (end_line, end_col) = index.line_col(span.end.max(span.start));
        Diagnostic { severity: Severity::Error, file: file.to_string(), line, col, end_line, end_col, message: message.into(), notes: Vec::new() }
    }

    pub fn warning(file: &str, index: &LineIndex, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic { severity: Severity::Warning, ..Diagnostic::error(file, index, span, message) }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The diagnostic with one more note.
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{}:{}:{}: {}: {}", self.file, self.line, self.col, sev, self.message)
    }
}

impl std::error::Error for Diagnostic {}
