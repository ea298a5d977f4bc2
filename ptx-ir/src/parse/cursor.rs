//! The parser's token cursor, error helpers and module-level symbol table.

use super::scope::FuncState;
use crate::lexer::{Token, TokenKind};
use crate::source::{Diagnostic, LineIndex, Span};
use rustc_hash::FxHashMap;

pub type PResult<T> = Result<T, Diagnostic>;

/// What a module-level name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GlobalKind {
    Var,
    Func,
}

pub struct Parser<'a> {
    pub file: &'a str,
    pub src: &'a [u8],
    pub toks: Vec<Token>,
    pub pos: usize,
    pub lines: &'a LineIndex,
    pub globals: FxHashMap<Box<str>, GlobalKind>,
    pub func: Option<FuncState>,
}

/// Longest text of a token shown in a message.
const SHOW_MAX: usize = 40;

impl<'a> Parser<'a> {
    pub fn new(file: &'a str, src: &'a [u8], toks: Vec<Token>, lines: &'a LineIndex) -> Parser<'a> {
        Parser { file, src, toks, pos: 0, lines, globals: FxHashMap::default(), func: None }
    }

    #[inline]
    pub fn peek(&self) -> Token {
        self.toks[self.pos]
    }

    #[inline]
    pub fn peek_at(&self, k: usize) -> Token {
        self.toks[(self.pos + k).min(self.toks.len() - 1)]
    }

    #[inline]
    pub fn kind(&self) -> TokenKind {
        self.toks[self.pos].kind
    }

    #[inline]
    pub fn bump(&mut self) -> Token {
        let t = self.toks[self.pos];
        if t.kind != TokenKind::Eof {
            self.pos += 1;
        }
        t
    }

    /// The source text of a token (tokens are ASCII outside strings, strings are checked UTF-8).
    pub fn text(&self, t: Token) -> &'a str {
        std::str::from_utf8(&self.src[t.span.start as usize..t.span.end as usize]).unwrap_or("\u{fffd}")
    }

    pub fn at(&self, k: TokenKind) -> bool {
        self.kind() == k
    }

    pub fn at_dot(&self, word: &str) -> bool {
        let t = self.peek();
        t.kind == TokenKind::DotWord && self.text(t) == word
    }

    pub fn eat(&mut self, k: TokenKind) -> bool {
        if self.at(k) {
            self.bump();
            true
        } else {
            false
        }
    }

    pub fn eat_dot(&mut self, word: &str) -> bool {
        if self.at_dot(word) {
            self.bump();
            true
        } else {
            false
        }
    }

    /// How a token is shown in "found X".
    pub fn describe(&self, t: Token) -> String {
        match t.kind {
            TokenKind::Eof => "end of file".to_string(),
            TokenKind::String => "a string".to_string(),
            _ => {
                let s = self.text(t);
                if s.len() > SHOW_MAX {
                    format!("`{}...`", &s[..SHOW_MAX])
                } else {
                    format!("`{s}`")
                }
            }
        }
    }

    pub fn error_at<T>(&self, span: Span, msg: impl Into<String>) -> PResult<T> {
        Err(Diagnostic::error(self.file, self.lines, span, msg))
    }

    /// `found X, expected Y` at the current token.
    pub fn expected<T>(&self, what: &str) -> PResult<T> {
        let t = self.peek();
        self.error_at(t.span, format!("found {}, expected {what}", self.describe(t)))
    }

    pub fn expect(&mut self, k: TokenKind, what: &str) -> PResult<Token> {
        if self.at(k) {
            Ok(self.bump())
        } else {
            self.expected(what)
        }
    }

    pub fn expect_ident(&mut self, what: &str) -> PResult<(Token, &'a str)> {
        if self.at(TokenKind::Ident) {
            let t = self.bump();
            Ok((t, self.text(t)))
        } else {
            self.expected(what)
        }
    }

    /// An unsigned integer literal (for counts, sizes, directive arguments).
    pub fn expect_u64(&mut self, what: &str) -> PResult<u64> {
        let t = self.peek();
        if t.kind != TokenKind::Int {
            return self.expected(what);
        }
        self.bump();
        match super::expr::int_literal(self.text(t)) {
            Some(l) => Ok(l.value),
            None => self.error_at(t.span, format!("integer {} does not fit in 64 bits", self.describe(t))),
        }
    }

    pub fn expect_u32(&mut self, what: &str) -> PResult<u32> {
        let t = self.peek();
        let v = self.expect_u64(what)?;
        u32::try_from(v).or_else(|_| self.error_at(t.span, format!("{} is too large, expected {what}", self.describe(t))))
    }

    /// Span from token index `start` to the previous token.
    pub fn span_from(&self, start: usize) -> Span {
        let s = self.toks[start].span;
        let e = if self.pos > start { self.toks[self.pos - 1].span } else { s };
        s.to(e)
    }
}
