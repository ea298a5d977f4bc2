//! Writes diagnostics for people and for tools: `human` shows the source
//! line with a caret under the span (annotate-snippets, colored when asked
//! or on a terminal), `short` one `file:line:col: error: message` line,
//! `json` one JSON object per line. Also the messages that are about a
//! whole file or the command (a file that cannot be read), in the same
//! format.

use crate::args::ReportArgs;
use annotate_snippets::{AnnotationKind, Level, Renderer, Snippet};
use clap::ValueEnum;
use ptx_ir::source::{Diagnostic, Severity};
use std::io::IsTerminal;

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether to color: `auto` colors when stderr is a terminal and
    /// `NO_COLOR` is unset or empty.
    pub fn enabled(self) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }
}

/// `--error-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ErrorFormat {
    Human,
    Short,
    Json,
}

/// Spans longer than this many lines show their first line only.
const MAX_SNIPPET_LINES: u32 = 12;

/// How one command writes its diagnostics.
#[derive(Clone, Debug)]
pub struct Reporter {
    pub format: ErrorFormat,
    pub color: bool,
    /// What names the command in messages: `ptx-opt` or `ptx-opt run`.
    pub command: &'static str,
}

impl Reporter {
    pub fn new(args: &ReportArgs, command: &'static str) -> Reporter {
        Reporter { format: args.error_format, color: args.color.enabled(), command }
    }

    /// Every diagnostic about `source`, rendered, each ending with a newline.
    pub fn diagnostics(&self, ds: &[Diagnostic], source: &[u8]) -> String {
        if ds.is_empty() {
            return String::new();
        }
        let lines = LineStarts::new(source);
        ds.iter().map(|d| self.one(d, source, &lines)).collect()
    }

    fn one(&self, d: &Diagnostic, source: &[u8], lines: &LineStarts) -> String {
        match self.format {
            ErrorFormat::Json => json_line(&d.file, d.line, d.col, d.end_line, d.end_col, d.severity, &d.message, &d.notes),
            ErrorFormat::Short => self.short(d),
            ErrorFormat::Human => self.human(d, source, lines).unwrap_or_else(|| self.short(d)),
        }
    }

    /// `file:line:col: error: message`, then one line per note.
    fn short(&self, d: &Diagnostic) -> String {
        let mut s = if self.command == "ptx-opt" { format!("{d}\n") } else { format!("{}: {d}\n", self.command) };
        for n in &d.notes {
            s.push_str(&format!("{}:{}:{}: note: {n}\n", d.file, d.line, d.col));
        }
        s
    }

    /// The snippet; `None` when the position is not in `source` or the
    /// lines are not UTF-8 (then the short form is written).
    fn human(&self, d: &Diagnostic, source: &[u8], lines: &LineStarts) -> Option<String> {
        let last = if d.end_line > d.line + MAX_SNIPPET_LINES { d.line } else { d.end_line.max(d.line) };
        let from = lines.start(d.line)?;
        let to = lines.end(last, source);
        let text = std::str::from_utf8(&source[from..to]).ok()?;
        let start = (d.col as usize).checked_sub(1)?;
        let end = if last == d.end_line { lines.start(d.end_line)? - from + (d.end_col as usize).saturating_sub(1) } else { lines.end(d.line, source) - from };
        let end = end.min(text.len());
        if start > text.len() || !text.is_char_boundary(start) || !text.is_char_boundary(end) {
            return None;
        }
        // An empty span points at the character there (if the line has one).
        let end = if end > start { end } else { text[start..].chars().next().filter(|c| *c != '\n' && *c != '\r').map_or(start, |c| start + c.len_utf8()) };
        let level = match d.severity {
            Severity::Error => Level::ERROR,
            Severity::Warning => Level::WARNING,
        };
        let name = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let level = if self.command == "ptx-opt" { level } else { level.with_name(format!("{}: {name}", self.command)) };
        let snippet = Snippet::source(text).line_start(d.line as usize).path(d.file.as_str()).annotation(AnnotationKind::Primary.span(start..end));
        let mut group = level.primary_title(d.message.as_str()).element(snippet);
        for n in &d.notes {
            group = group.element(Level::NOTE.message(n.as_str()));
        }
        let renderer = if self.color { Renderer::styled() } else { Renderer::plain() };
        Some(format!("{}\n", renderer.render(&[group])))
    }

    /// A message about a whole file or about the command (`file` may be
    /// empty): `ptx-opt: message` (`ptx-opt: warning: message`), or a JSON
    /// line with line and column 0.
    pub fn message(&self, file: &str, severity: Severity, message: &str) -> String {
        match (self.format, severity) {
            (ErrorFormat::Json, _) => json_line(file, 0, 0, 0, 0, severity, message, &[]),
            (_, Severity::Error) => format!("{}: {message}\n", self.command),
            (_, Severity::Warning) => format!("{}: warning: {message}\n", self.command),
        }
    }
}

/// One diagnostic as one line of JSON.
#[allow(clippy::too_many_arguments)]
fn json_line(file: &str, line: u32, col: u32, end_line: u32, end_col: u32, severity: Severity, message: &str, notes: &[String]) -> String {
    let severity = match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let v = serde_json::json!({
        "file": file,
        "line": line,
        "column": col,
        "end_line": end_line,
        "end_column": end_col,
        "severity": severity,
        "message": message,
        "notes": notes,
    });
    format!("{v}\n")
}

/// Where each line of a source starts, to cut a diagnostic's lines out.
struct LineStarts(Vec<usize>);

impl LineStarts {
    fn new(text: &[u8]) -> LineStarts {
        LineStarts(std::iter::once(0).chain(text.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i + 1)).collect())
    }

    /// The byte where 1-based `line` starts.
    fn start(&self, line: u32) -> Option<usize> {
        self.0.get((line as usize).checked_sub(1)?).copied()
    }

    /// The byte where 1-based `line` ends (its newline, or the end of the text).
    fn end(&self, line: u32, text: &[u8]) -> usize {
        let end = self.0.get(line as usize).map_or(text.len(), |next| next - 1);
        if end > 0 && text.get(end - 1) == Some(&b'\r') { end - 1 } else { end }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptx_ir::source::{LineIndex, Span};

    const TEXT: &str = ".version 8.0\n.target sm_80\n\tfrobnicate %r1;\n";

    fn reporter(format: ErrorFormat) -> Reporter {
        Reporter { format, color: false, command: "ptx-opt" }
    }

    fn diag(start: usize, end: usize) -> Diagnostic {
        Diagnostic::error("k.ptx", &LineIndex::new(TEXT.as_bytes()), Span::new(start, end), "unknown instruction `frobnicate`").with_note("in function `k`")
    }

    #[test]
    fn human_shows_the_line_and_a_caret_under_the_span() {
        let at = TEXT.find("frob").unwrap();
        let out = reporter(ErrorFormat::Human).diagnostics(&[diag(at, at + "frobnicate".len())], TEXT.as_bytes());
        assert!(out.starts_with("error: unknown instruction `frobnicate`\n"), "{out}");
        assert!(out.contains("--> k.ptx:3:2"), "{out}");
        assert!(out.contains("3 |     frobnicate %r1;"), "{out}");
        let caret = out.lines().find(|l| l.contains('^')).unwrap();
        assert_eq!(caret.trim_start_matches([' ', '|']).len(), "frobnicate".len(), "{out}");
        assert!(out.contains("note: in function `k`"), "{out}");
        assert!(!out.contains('\u{1b}'), "no color unless asked: {out}");
        let colored = Reporter { color: true, ..reporter(ErrorFormat::Human) }.diagnostics(&[diag(at, at + 3)], TEXT.as_bytes());
        assert!(colored.contains('\u{1b}'), "{colored}");
    }

    #[test]
    fn an_empty_span_points_at_one_character() {
        let at = TEXT.find("sm_80").unwrap();
        let out = reporter(ErrorFormat::Human).diagnostics(&[diag(at, at)], TEXT.as_bytes());
        assert_eq!(out.matches('^').count(), 1, "{out}");
        // At the end of the text: still rendered, without a panic.
        let out = reporter(ErrorFormat::Human).diagnostics(&[diag(TEXT.len(), TEXT.len())], TEXT.as_bytes());
        assert!(out.contains("error: unknown instruction"), "{out}");
    }

    #[test]
    fn positions_outside_the_source_fall_back_to_the_short_form() {
        let mut d = diag(0, 3);
        d.line = 99;
        let out = reporter(ErrorFormat::Human).diagnostics(&[d], TEXT.as_bytes());
        assert!(out.starts_with("k.ptx:99:1: error: unknown instruction"), "{out}");
    }

    #[test]
    fn short_and_json() {
        let at = TEXT.find("frob").unwrap();
        let d = diag(at, at + 10);
        assert_eq!(reporter(ErrorFormat::Short).diagnostics(std::slice::from_ref(&d), TEXT.as_bytes()), "k.ptx:3:2: error: unknown instruction `frobnicate`\nk.ptx:3:2: note: in function `k`\n");
        let json = reporter(ErrorFormat::Json).diagnostics(&[d], TEXT.as_bytes());
        let v: serde_json::Value = serde_json::from_str(json.trim_end()).unwrap();
        assert_eq!(v["file"], "k.ptx");
        assert_eq!((v["line"].as_u64(), v["column"].as_u64(), v["end_line"].as_u64(), v["end_column"].as_u64()), (Some(3), Some(2), Some(3), Some(12)));
        assert_eq!(v["severity"], "error");
        assert_eq!(v["notes"][0], "in function `k`");
        let m = reporter(ErrorFormat::Json).message("x.ptx", Severity::Error, "cannot read `x.ptx`: \"quoted\"");
        let v: serde_json::Value = serde_json::from_str(m.trim_end()).unwrap();
        assert_eq!((v["line"].as_u64(), v["message"].as_str()), (Some(0), Some("cannot read `x.ptx`: \"quoted\"")));
    }
}
