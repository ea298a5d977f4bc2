//! The parser's token cursor, error helpers and module-level symbol table.

use super::scope::{FuncState, KeyTable, SpareTables};
use crate::lexer::{Lexer, Token, TokenKind};
use crate::source::{Diagnostic, LineIndex, Span};
use rustc_hash::FxHashMap;
use crate::isa::{FormId, Mod, Opcode, SlotMods};
use smallvec::SmallVec;
use std::cell::OnceCell;

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
    lexer: Lexer<'a>,
    /// Tokens lexed but not consumed yet: `window[read..lexed]`, the
    /// current token first, at least [`LOOKAHEAD`] of them.
    window: [Token; WINDOW],
    read: usize,
    lexed: usize,
    /// The current token, `window[read]`, kept apart: the parser reads it
    /// several times a token, and a field is one load where an element of
    /// the window is an index computation and a load (renderer -O0 parse
    /// 226.5 -> 225.2 M host instructions, non-LTO build).
    current: Token,
    /// How many tokens the next refill of the window lexes: few right after
    /// the parser moved the lexer (it may move it again soon, and what was
    /// lexed past there is thrown away), twice as many at each refill after.
    batch: usize,
    /// Span of the last consumed token.
    prev: Span,
    lines: OnceCell<LineIndex>,
    pub globals: FxHashMap<Box<str>, GlobalKind>,
    /// Module-level names known before parsing (item-by-item parsing), borrowed.
    pub known_globals: Option<&'a FxHashMap<Box<str>, GlobalKind>>,
    /// Where the module's items start: names declared after the item being
    /// parsed are looked up there, in one scan made on the first name not
    /// declared yet (a forward reference; most modules have none).
    pub items_from: Option<usize>,
    ahead: OnceCell<FxHashMap<Box<str>, GlobalKind>>,
    pub func: Option<FuncState<'a>>,
    /// Labels used but not defined in an enclosing block: where, and the message.
    pub pending_names: Vec<(Span, String)>,
    /// Spans of the parameters of the function being parsed.
    pub param_spans: Vec<Span>,
    /// The end of the header of the function being parsed.
    pub header_end: Span,
    /// Instruction heads seen (`ld.global.f32`), each numbered.
    pub heads: Heads<'a>,
    /// Matched forms by head number ([`Head::id`]) and operand kinds
    /// (packed by [`super::instruction::kinds_key`]): two numbers, not the
    /// head's text again (hashed and compared with `memcmp` a second time
    /// for every instruction).
    pub forms: FxHashMap<(u32, u64), (FormId, SlotMods)>,
    /// Take the fast paths for plain declarations and lone literals (off
    /// only in tests, which check they give what the general parser gives).
    pub fast_paths: bool,
    /// The statements and spans of the body being parsed, kept with their
    /// room between bodies (see `body`).
    pub body_buffers: (Vec<crate::ir::Stmt>, Vec<Span>),
    /// A function's growing tables, kept with their room between functions.
    pub spare_tables: SpareTables<'a>,
}

/// The instruction heads a parser has seen, by their text's [`Key`]: a
/// head of at most 8 bytes (`mov.u32`, `bra.uni`) is found without
/// hashing or comparing its bytes one by one (renderer: 71,040 heads, 61 %
/// of them short).
pub type Heads<'a> = KeyTable<'a, Head>;

/// An instruction head as the parser first read it.
pub struct Head {
    pub opcode: Opcode,
    /// How many of the head's parts the opcode's name took.
    pub used: usize,
    /// The modifiers after them.
    pub mods: SmallVec<[Mod; 8]>,
    /// Its number among the parser's heads, in order of first use.
    pub id: u32,
}

/// How many tokens the parser can look ahead.
const LOOKAHEAD: usize = 5;

/// How many tokens are lexed ahead at most: the lexer runs in batches,
/// which costs less than a call per token.
const WINDOW: usize = 64;

/// Longest text of a token shown in a message.
const SHOW_MAX: usize = 40;

impl<'a> Parser<'a> {
    pub fn new(file: &'a str, src: &'a [u8]) -> Parser<'a> {
        let eof = Token { kind: TokenKind::Eof, span: Span::new(0, 0), glued: false };
        // A text the lexer refuses as a whole reads as that error.
        let lexer = Lexer::new(src).unwrap_or_else(|e| Lexer::failed(e));
        let mut p = Parser {
            file,
            src,
            lexer,
            window: [eof; WINDOW],
            read: 0,
            lexed: 0,
            current: eof,
            batch: WINDOW,
            prev: Span::new(0, 0),
            lines: OnceCell::new(),
            globals: FxHashMap::default(),
            known_globals: None,
            items_from: None,
            ahead: OnceCell::new(),
            func: None,
            pending_names: Vec::new(),
            param_spans: Vec::new(),
            header_end: Span::default(),
            heads: Heads::default(),
            forms: FxHashMap::default(),
            fast_paths: true,
            body_buffers: (Vec::new(), Vec::new()),
            spare_tables: SpareTables::default(),
        };
        p.lex_ahead();
        p
    }

    /// Fills the window with tokens from the lexer. Lexing stops at the
    /// first error (the lexer keeps it, and the parser reports it when it
    /// reaches it): every token after it is that `Error` token again.
    #[inline(never)]
    fn lex_ahead(&mut self) {
        let kept = self.lexed - self.read;
        self.window.copy_within(self.read..self.lexed, 0);
        let end = (kept + self.batch).min(WINDOW);
        self.lexer.lex_into(&mut self.window[kept..end]);
        self.read = 0;
        self.lexed = end;
        self.batch = (self.batch * 2).min(WINDOW);
        self.current = self.window[0];
    }

    /// A lexer of the text from byte `i` on, apart from the cursor's.
    pub fn lexer_at(&self, i: usize) -> Lexer<'a> {
        let mut lexer = self.lexer.clone();
        lexer.set_pos(i);
        lexer
    }

    /// Is `name` a module-level variable or function?
    pub fn is_global(&self, name: &str) -> bool {
        self.globals.contains_key(name) || self.known_globals.is_some_and(|g| g.contains_key(name)) || self.declared_ahead(name)
    }

    /// Is `name` declared by any item of the module (also one not parsed yet)?
    fn declared_ahead(&self, name: &str) -> bool {
        let Some(start) = self.items_from else { return false };
        let names = self.ahead.get_or_init(|| {
            let mut names = FxHashMap::default();
            for r in super::split::split_items(self.src, start) {
                for (name, kind) in super::split::item_names(&self.src[r]) {
                    names.entry(name).or_insert(kind);
                }
            }
            names
        });
        names.contains_key(name)
    }

    /// Line and column tables, built on the first error.
    pub fn lines(&self) -> &LineIndex {
        self.lines.get_or_init(|| LineIndex::new(self.src))
    }

    #[inline]
    pub fn peek(&self) -> Token {
        self.current
    }

    #[inline]
    pub fn peek_at(&self, k: usize) -> Token {
        self.window[(self.read + k.min(LOOKAHEAD - 1)) % WINDOW]
    }

    #[inline]
    pub fn kind(&self) -> TokenKind {
        self.peek().kind
    }

    #[inline]
    pub fn bump(&mut self) -> Token {
        let t = self.peek();
        if matches!(t.kind, TokenKind::Eof | TokenKind::Error) {
            return t;
        }
        self.prev = t.span;
        self.read += 1;
        if self.lexed - self.read < LOOKAHEAD {
            self.lex_ahead();
        } else {
            self.current = self.window[self.read % WINDOW];
        }
        t
    }

    /// Consumes the current token and the `k - 1` after it, which the
    /// caller has seen ([`Parser::peek_at`]) and none of which is `Eof` or
    /// `Error`: one refill test, not one a token as `k` [`Parser::bump`]s
    /// make (a plain `.loc` line is four tokens).
    #[inline]
    pub fn bump_seen(&mut self, k: usize) {
        debug_assert!((1..=LOOKAHEAD).contains(&k));
        debug_assert!((0..k).all(|j| !matches!(self.peek_at(j).kind, TokenKind::Eof | TokenKind::Error)));
        self.prev = self.window[(self.read + k - 1) % WINDOW].span;
        self.read += k;
        if self.lexed - self.read < LOOKAHEAD {
            self.lex_ahead();
        } else {
            self.current = self.window[self.read % WINDOW];
        }
    }

    /// Takes the raw text from the current token to the end of its line
    /// (`@@DWARF` lines are not tokens), and goes on lexing after it.
    /// Empty when the line ends right after the last consumed token. The
    /// text must be UTF-8 (an error at the line otherwise).
    pub fn raw_rest_of_line(&mut self) -> PResult<&'a str> {
        let from = self.prev.end as usize;
        let start = self.peek().span.start as usize;
        if self.peek().kind == TokenKind::Eof || self.src[from.min(start)..start].contains(&b'\n') {
            return Ok("");
        }
        let end = self.src[start..].iter().position(|c| *c == b'\n').map_or(self.src.len(), |k| start + k);
        let Ok(text) = std::str::from_utf8(&self.src[start..end]) else {
            return self.error_at(Span::new(start, end), "found bytes that are not UTF-8, expected the text of the line");
        };
        self.resume_after(Span::new(start, end));
        Ok(text.trim_end())
    }

    /// Consumes the source up to byte `end`, which the caller has read
    /// itself from the current token on, and goes on lexing there.
    pub fn skip_raw_to(&mut self, end: usize) {
        let start = self.peek().span.start as usize;
        self.resume_after(Span::new(start, end));
    }

    /// Makes `last` the last consumed text (the caller read the source up
    /// to its end itself) and goes on lexing after it.
    pub fn resume_after(&mut self, last: Span) {
        self.prev = last;
        self.lexer.set_pos(last.end as usize);
        self.read = 0;
        self.lexed = 0;
        self.batch = LOOKAHEAD;
        self.lex_ahead();
    }

    /// Consumes the tokens up to `last`, a token the caller lexed itself
    /// from the current token on: through the window when it holds `last`
    /// (what it lexed ahead is not lexed again), else by going on lexing
    /// after it.
    pub fn consume_through(&mut self, last: Span) {
        if self.window[self.lexed - 1].span.end < last.end {
            return self.resume_after(last);
        }
        while self.peek().span.start < last.end && !matches!(self.kind(), TokenKind::Eof | TokenKind::Error) {
            self.bump();
        }
    }

    /// Span of the last consumed token.
    pub fn prev_span(&self) -> Span {
        self.prev
    }

    /// A position marker: the current token's span (see [`Parser::span_from`]).
    pub fn mark(&self) -> Span {
        self.peek().span
    }

    /// The source text of a token.
    #[inline]
    pub fn text(&self, t: Token) -> &'a str {
        let bytes = &self.src[t.span.start as usize..t.span.end as usize];
        if t.kind == TokenKind::Error {
            // An error token spans whatever the lexer refused (a stray byte
            // 0x80..0xff, a string that is not UTF-8).
            return std::str::from_utf8(bytes).unwrap_or("");
        }
        // The lexer makes tokens only of ASCII bytes, except strings, which it
        // checks are UTF-8; a token never starts or ends inside a multi-byte
        // character. Checking again here showed up in profiles.
        debug_assert!(std::str::from_utf8(bytes).is_ok());
        // SAFETY: see above: every token's bytes are valid UTF-8.
        unsafe { std::str::from_utf8_unchecked(bytes) }
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
            TokenKind::Error => "an invalid token".to_string(),
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

    // Errors end the parse: kept out of line, so the helpers that may fail
    // (`expect_ident`, `expect`, ...) are a few instructions on their
    // happy path and inline into their callers (renderer: the error path
    // inlined into `expect_ident` gave it a 0xe8-byte frame and six saved
    // registers for each of its 230,000 calls).
    #[cold]
    #[inline(never)]
    pub fn error_at<T>(&self, span: Span, msg: impl Into<String>) -> PResult<T> {
        // A lexing error at or before this point is the real cause.
        if let Some(e) = &self.lexer.error {
            if e.span.start <= span.start.max(self.peek().span.start) && self.peek().kind == TokenKind::Error {
                return Err(Diagnostic::error(self.file, self.lines(), e.span, e.message.clone()));
            }
        }
        Err(Diagnostic::error(self.file, self.lines(), span, msg))
    }

    /// `found X, expected Y` at the current token.
    #[cold]
    #[inline(never)]
    pub fn expected<T>(&self, what: &str) -> PResult<T> {
        let t = self.peek();
        self.error_at(t.span, format!("found {}, expected {what}", self.describe(t)))
    }

    #[inline]
    pub fn expect(&mut self, k: TokenKind, what: &str) -> PResult<Token> {
        if self.at(k) {
            Ok(self.bump())
        } else {
            self.expected(what)
        }
    }

    #[inline]
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

    /// Span from a [`Parser::mark`] to the last consumed token.
    pub fn span_from(&self, mark: Span) -> Span {
        if self.prev.end >= mark.start {
            Span { start: mark.start, end: self.prev.end }
        } else {
            mark
        }
    }
}
