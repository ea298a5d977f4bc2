//! Turns PTX source bytes into tokens.
//!
//! Works on bytes, so any input (invalid UTF-8, NUL, very long lines) gives
//! either tokens or a positioned error, never a panic. PTX is ASCII outside
//! comments and strings.

use crate::source::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// `foo`, `%r1`, `$L__BB0_1`, `_Z3fooi`.
    Ident,
    /// A dot and a word: `.reg`, `.f32`, `.L1::evict_last`, `.x`; `.1d` when glued to a word.
    DotWord,
    /// An integer literal (decimal, `0x`, octal, `0b`, optional `U`).
    Int,
    /// A decimal floating-point literal (`1.0`, `.5`, `1e-3`).
    Float,
    /// `0f3F800000` (single precision).
    HexF32,
    /// `0d3FF0000000000000` (double precision).
    HexF64,
    /// `"..."`, span includes the quotes.
    String,
    Comma,
    Semi,
    Colon,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    LParen,
    RParen,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Lt,
    Gt,
    Le,
    Ge,
    Shl,
    Shr,
    EqEq,
    Ne,
    Amp,
    Pipe,
    Caret,
    Bang,
    Tilde,
    AndAnd,
    OrOr,
    Question,
    At,
    Eq,
    Eof,
    /// Produced by the parser's cursor where the lexer failed.
    Error,
}

impl TokenKind {
    /// How the kind is named in "expected ..." messages.
    pub fn describe(self) -> &'static str {
        use TokenKind::*;
        match self {
            Ident => "an identifier",
            DotWord => "a directive or modifier",
            Int => "an integer",
            Float | HexF32 | HexF64 => "a floating-point number",
            String => "a string",
            Comma => "`,`",
            Semi => "`;`",
            Colon => "`:`",
            LBrace => "`{`",
            RBrace => "`}`",
            LBracket => "`[`",
            RBracket => "`]`",
            LParen => "`(`",
            RParen => "`)`",
            Plus => "`+`",
            Minus => "`-`",
            Star => "`*`",
            Slash => "`/`",
            Percent => "`%`",
            Lt => "`<`",
            Gt => "`>`",
            Le => "`<=`",
            Ge => "`>=`",
            Shl => "`<<`",
            Shr => "`>>`",
            EqEq => "`==`",
            Ne => "`!=`",
            Amp => "`&`",
            Pipe => "`|`",
            Caret => "`^`",
            Bang => "`!`",
            Tilde => "`~`",
            AndAnd => "`&&`",
            OrOr => "`||`",
            Question => "`?`",
            At => "`@`",
            Eq => "`=`",
            Eof => "end of file",
            Error => "an invalid token",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
    /// No whitespace or comment separates it from the previous token.
    pub glued: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexError {
    pub span: Span,
    pub message: String,
}

/// What the lexer needs to know of a byte inside a name, one table lookup
/// per byte: whether it may follow the first byte of a name.
static BYTE_CLASS: [u8; 256] = {
    let mut t = [0; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'$' {
            t[c] |= FOLLOW;
        }
        c += 1;
    }
    t
};

/// [`BYTE_CLASS`] bit: letters, digits, `_`, `$` (mangled names run to
/// hundreds of bytes, scanned byte by byte).
const FOLLOW: u8 = 1;

/// How a token that starts with a byte is read ([`Lexer::next_token`]
/// dispatches on it, one table lookup, instead of a chain of comparisons).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Start {
    /// Whitespace between tokens.
    Blank,
    /// A name: `a`-`z`, `A`-`Z`.
    Letter,
    /// `_`, `$`, `%`: a name when a name byte follows.
    Sigil,
    /// `.`: a dot-word or a float.
    Dot,
    /// `0`-`9`: a number.
    Digit,
    /// An operator of one byte that no longer token starts with (`,`,
    /// `;`, `[`, `+` ...): its kind is [`SINGLE`]'s for the byte, read
    /// without [`operator`]'s look at the byte after it.
    Single,
    /// The first byte of an operator of one or two bytes ([`operator`]:
    /// `<`, `<<`, `<=` ...); `/` also of a comment.
    Operator,
    /// Strings and the bytes that are no token ([`Lexer::rare_token`]).
    Rare,
}

/// [`Start`] by byte.
static START: [Start; 256] = {
    let mut t = [Start::Rare; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = start_class(c as u8);
        c += 1;
    }
    t
};

/// The plain definition [`START`] is a table of.
const fn start_class(b: u8) -> Start {
    match b {
        b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c => Start::Blank,
        b'a'..=b'z' | b'A'..=b'Z' => Start::Letter,
        b'_' | b'$' | b'%' => Start::Sigil,
        b'.' => Start::Dot,
        b'0'..=b'9' => Start::Digit,
        b',' | b';' | b':' | b'{' | b'}' | b'[' | b']' | b'(' | b')' | b'+' | b'-' | b'*' | b'^' | b'~' | b'?' | b'@' => Start::Single,
        b'/' | b'<' | b'>' | b'=' | b'!' | b'&' | b'|' => Start::Operator,
        _ => Start::Rare,
    }
}

/// The token of each byte of class [`Start::Single`]: what [`operator`]
/// gives for it whatever byte follows (tested); `Error` for the other bytes.
/// A third of the tokens (matrix_free: 75,000 of 232,000) are read with
/// one lookup here, not through the dispatch on the class and the
/// comparisons of [`operator`].
static SINGLE: [TokenKind; 256] = {
    let mut t = [TokenKind::Error; 256];
    let mut c = 0;
    while c < 256 {
        if let (Start::Single, Some((kind, 1))) = (start_class(c as u8), operator(c as u8, 0)) {
            t[c] = kind;
        }
        c += 1;
    }
    t
};

#[inline]
fn is_follow(c: u8) -> bool {
    BYTE_CLASS[c as usize] & FOLLOW != 0
}

/// The end of the run of name bytes starting at `i`. Four bytes a step
/// while four are left, with one bounds check a step, not one a byte
/// (names are most of the text's bytes: renderer, 2.7 M of 3.8 M; its
/// -O0 parse 227.8 -> 226.5 M host instructions, non-LTO build).
#[inline]
fn name_end(src: &[u8], mut i: usize) -> usize {
    while let Some(&[a, b, c, d]) = src.get(i..i + 4) {
        if !is_follow(a) {
            return i;
        }
        if !is_follow(b) {
            return i + 1;
        }
        if !is_follow(c) {
            return i + 2;
        }
        if !is_follow(d) {
            return i + 3;
        }
        i += 4;
    }
    while i < src.len() && is_follow(src[i]) {
        i += 1;
    }
    i
}

/// Whether the lexer skips byte `c` as whitespace.
#[inline(always)]
pub(crate) fn is_blank(c: u8) -> bool {
    START[c as usize] == Start::Blank
}

/// Where the whitespace from `i` on ends (comments are not skipped).
#[inline]
pub(crate) fn blank_end(src: &[u8], mut i: usize) -> usize {
    while src.get(i).is_some_and(|&c| is_blank(c)) {
        i += 1;
    }
    i
}

/// The end of the identifier [`scan`] reads at byte `i` when one of the
/// common ones starts there: a letter, or `_`, `$` or `%` with a name
/// byte after it. `None` for anything else (the lone `_` included).
#[inline]
pub(crate) fn plain_ident_end(src: &[u8], i: usize) -> Option<usize> {
    let class = START[*src.get(i)? as usize];
    let next = src.get(i + 1).copied().unwrap_or(0);
    match class {
        Start::Letter => Some(name_end(src, i + 1)),
        Start::Sigil if is_follow(next) => Some(name_end(src, i + 1)),
        _ => None,
    }
}

/// The token of an operator of one or two bytes starting with `c`, `two`
/// the byte after it (0 at the end), and its length.
#[inline(always)]
const fn operator(c: u8, two: u8) -> Option<(TokenKind, usize)> {
    use TokenKind::*;
    Some(match (c, two) {
        (b',', _) => (Comma, 1),
        (b';', _) => (Semi, 1),
        (b':', _) => (Colon, 1),
        (b'{', _) => (LBrace, 1),
        (b'}', _) => (RBrace, 1),
        (b'[', _) => (LBracket, 1),
        (b']', _) => (RBracket, 1),
        (b'(', _) => (LParen, 1),
        (b')', _) => (RParen, 1),
        (b'+', _) => (Plus, 1),
        (b'-', _) => (Minus, 1),
        (b'*', _) => (Star, 1),
        (b'/', _) => (Slash, 1),
        (b'^', _) => (Caret, 1),
        (b'~', _) => (Tilde, 1),
        (b'?', _) => (Question, 1),
        (b'@', _) => (At, 1),
        (b'<', b'<') => (Shl, 2),
        (b'<', b'=') => (Le, 2),
        (b'<', _) => (Lt, 1),
        (b'>', b'>') => (Shr, 2),
        (b'>', b'=') => (Ge, 2),
        (b'>', _) => (Gt, 1),
        (b'=', b'=') => (EqEq, 2),
        (b'=', _) => (Eq, 1),
        (b'!', b'=') => (Ne, 2),
        (b'!', _) => (Bang, 1),
        (b'&', b'&') => (AndAnd, 2),
        (b'&', _) => (Amp, 1),
        (b'|', b'|') => (OrOr, 2),
        (b'|', _) => (Pipe, 1),
        _ => return None,
    })
}

/// Lexes the whole text. The last token is always `Eof`.
pub fn lex(src: &[u8]) -> Result<Vec<Token>, LexError> {
    let mut lx = Lexer::new(src)?;
    let mut toks = Vec::new();
    loop {
        let t = lx.next_token();
        if t.kind == TokenKind::Error {
            return Err(lx.error.take().expect("an `Error` token leaves its error"));
        }
        toks.push(t);
        if t.kind == TokenKind::Eof {
            return Ok(toks);
        }
    }
}

/// An on-demand lexer: the parser pulls tokens one at a time, so no token
/// array is built (memory stays proportional to the IR, not the text).
#[derive(Clone)]
pub struct Lexer<'a> {
    src: &'a [u8],
    i: usize,
    /// Where the last identifier or dot-word ended (0 for none: a token
    /// glued to the previous one starts past 0).
    wordish_end: usize,
    /// Why the last `Error` token is one; set until [`Lexer::set_pos`].
    /// Every token after it is that `Error` token again.
    pub error: Option<LexError>,
}

impl<'a> Lexer<'a> {
    /// Continues lexing at byte `i` (after raw text the parser took
    /// itself): an error before it no longer stands.
    pub fn set_pos(&mut self, i: usize) {
        self.i = i.min(self.src.len());
        self.wordish_end = 0;
        self.error = None;
    }

    pub fn new(src: &'a [u8]) -> Result<Lexer<'a>, LexError> {
        if src.len() >= u32::MAX as usize {
            return Err(LexError { span: Span::new(0, 0), message: "file is larger than 4 GiB".into() });
        }
        Ok(Lexer { src, i: 0, wordish_end: 0, error: None })
    }

    /// A lexer of no text that has already failed for `error` (a text it
    /// refuses as a whole).
    pub fn failed(error: LexError) -> Lexer<'a> {
        Lexer { src: &[], i: 0, wordish_end: 0, error: Some(error) }
    }

    /// The next token, or `None` at bytes that are no token.
    pub fn next_valid(&mut self) -> Option<Token> {
        Some(self.next_token()).filter(|t| t.kind != TokenKind::Error)
    }

    /// An `Error` token over `start..end`, for the reason `message`. The
    /// lexer stops there: it goes to the end of the text, where it gives
    /// the error again.
    #[cold]
    fn fail(&mut self, start: usize, end: usize, message: String) -> Token {
        let span = Span::new(start, end);
        self.error = Some(LexError { span, message });
        self.i = self.src.len();
        Token { kind: TokenKind::Error, span, glued: false }
    }

    /// The token at the end of the text: `Eof`, or the `Error` token again
    /// when lexing failed.
    #[cold]
    fn at_end(&self) -> Token {
        match &self.error {
            Some(e) => Token { kind: TokenKind::Error, span: e.span, glued: false },
            None => {
                let n = self.src.len();
                Token { kind: TokenKind::Eof, span: Span::new(n, n), glued: false }
            }
        }
    }

    /// Lexes a token into every slot of `out` (the text's end gives `Eof`,
    /// and an error its `Error` token, again and again). The position is
    /// kept in locals over the batch and each token written straight into
    /// its slot ([`scan`]): built in [`Lexer::next_token`] and copied, it
    /// went through the stack, and the position through `self`, once a
    /// token (renderer: `lex_into` 48.6 -> 41.3 M host instructions of its
    /// own, but the parse as a whole only 227.2 -> 227.8 M until
    /// [`Lexer::unusual_token`] took numbers, non-LTO builds).
    pub fn lex_into(&mut self, out: &mut [Token]) {
        let src = self.src;
        let mut i = self.i;
        let mut wordish_end = self.wordish_end;
        for slot in out {
            match scan(src, i) {
                Scan::Token(kind, start, end) => {
                    *slot = scanned_token(kind, start, end, i);
                    if is_wordish(kind) {
                        wordish_end = end;
                    }
                    i = end;
                }
                Scan::Unusual(what, at) => {
                    self.i = i;
                    self.wordish_end = wordish_end;
                    *slot = self.unusual_token(what, at, i);
                    i = self.i;
                    wordish_end = self.wordish_end;
                }
            }
        }
        self.i = i;
        self.wordish_end = wordish_end;
    }

    /// The next token; `Eof` at the end (and again if called after it);
    /// `Error` at bytes that are no token, with the reason in
    /// [`Lexer::error`], and again at every call after it. Most tokens
    /// are read by [`scan`]; the rest by [`Lexer::unusual_token`].
    #[inline(always)]
    pub fn next_token(&mut self) -> Token {
        let from = self.i;
        match scan(self.src, from) {
            Scan::Token(kind, start, end) => self.took(kind, start, end, from),
            Scan::Unusual(what, at) => self.unusual_token(what, at, from),
        }
    }

    /// The token `kind` over `start..end` that a scan from `from` found,
    /// the lexer moved past it.
    #[inline(always)]
    fn took(&mut self, kind: TokenKind, start: usize, end: usize, from: usize) -> Token {
        if is_wordish(kind) {
            self.wordish_end = end;
        }
        self.i = end;
        scanned_token(kind, start, end, from)
    }

    /// The token for what [`scan`] found at `at`, from `from` on, when it
    /// is no common token: the end, an error, or a token of
    /// [`Lexer::rare_token`]. Given as numbers, not a [`Scan`], so that
    /// the call does not make the batch's loop keep a `Scan` in memory
    /// (its fields were stored and loaded again at every token: renderer
    /// -O0 parse 219.2 -> 211.1 M host instructions, non-LTO build).
    #[cold]
    #[inline(never)]
    fn unusual_token(&mut self, what: Unusual, at: usize, from: usize) -> Token {
        match what {
            Unusual::End => {
                self.i = self.src.len();
                self.at_end()
            }
            Unusual::Rare => self.rare_token(at, glued(at, from)),
            Unusual::BadNumber => {
                let start = at;
                let mut end = start;
                match lex_number(self.src, &mut end) {
                    Err(m) => self.fail(start, end.max(start + 1), m),
                    // Never (`scan` found the number malformed), but a
                    // token, not a panic, if it were.
                    Ok(kind) => self.took(kind, start, end, from),
                }
            }
            Unusual::OpenComment => self.fail(at, at + 2, "unterminated comment: `/*` without `*/`".into()),
        }
    }

    /// The token at `start` when it is no name, dot-word or operator:
    /// strings, `.5`, dot-words that start with a digit (`.1d`)
    /// or `::`, a lone `%` or `_`, and the bytes that are no token.
    #[inline(never)]
    fn rare_token(&mut self, start: usize, glued: bool) -> Token {
        let src = self.src;
        let n = src.len();
        let c = src[start];
        let mut i = start + 1;
        let kind = match c {
            b'_' => TokenKind::Ident, // `_`, the sink operand
            b'%' => TokenKind::Percent,
            b'$' => return self.fail(start, i, "`$` must be followed by letters, digits, `_` or `$`".into()),
            b'.' if i < n && src[i].is_ascii_digit() && !(glued && self.wordish_end == start) => {
                lex_decimal_tail(src, &mut i);
                TokenKind::Float
            }
            b'.' => {
                i = dot_word_end(src, i);
                if i == start + 1 {
                    return self.fail(start, start + 1, "a lone `.`; expected a directive or modifier name after it".into());
                }
                self.wordish_end = i;
                TokenKind::DotWord
            }
            b'"' => match string_end(src, start) {
                Ok(end) => {
                    i = end;
                    TokenKind::String
                }
                Err((end, m)) => return self.fail(start, end, m.into()),
            },
            _ => return self.fail(start, start + 1, not_a_token(c)),
        };
        if kind == TokenKind::Ident {
            self.wordish_end = i;
        }
        self.i = i;
        Token { kind, span: Span::new(start, i), glued }
    }
}

/// Whether a token starting at `start`, found by a scan from `from`, is
/// glued to the token before it: it starts where the scan started
/// (`start >= from`), past the text's first byte. Written as one
/// comparison, `start - 1 < from` (wrapping: at 0 it is never less), for
/// a test made at every token.
#[inline(always)]
fn glued(start: usize, from: usize) -> bool {
    debug_assert!(start >= from);
    start.wrapping_sub(1) < from
}

/// The token `kind` over `start..end` found by a scan from `from`.
#[inline(always)]
fn scanned_token(kind: TokenKind, start: usize, end: usize, from: usize) -> Token {
    Token { kind, span: Span::new(start, end), glued: glued(start, from) }
}

/// Identifiers and dot-words, after which a glued `.5` is a dot-word
/// (`tex.1d`), not a number ([`Lexer::wordish_end`]).
#[inline(always)]
fn is_wordish(kind: TokenKind) -> bool {
    matches!(kind, TokenKind::Ident | TokenKind::DotWord)
}

/// What [`scan`] found after the whitespace and comments from a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scan {
    /// A name, dot-word, number or operator: its kind, start and end.
    Token(TokenKind, usize, usize),
    /// Something else, at this byte.
    Unusual(Unusual, usize),
}

/// What [`scan`] leaves to [`Lexer::unusual_token`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unusual {
    /// The end of the text.
    End,
    /// A token [`Lexer::rare_token`] reads (or a byte that is none).
    Rare,
    /// A malformed number.
    BadNumber,
    /// A `/*` without `*/`.
    OpenComment,
}

/// Skips the whitespace and comments from `from` on and reads the token
/// after them when it is a name, dot-word, number or operator, most of the
/// text: dispatched on [`START`] by the token's first byte. A pure
/// function of the text and the position, so that a batch of tokens
/// ([`Lexer::lex_into`]) keeps the position in a register.
#[inline(always)]
fn scan(src: &[u8], from: usize) -> Scan {
    let n = src.len();
    let mut start = from;
    loop {
        // Whitespace, one table lookup a byte.
        let (c, class) = loop {
            let Some(&c) = src.get(start) else { return Scan::Unusual(Unusual::End, start) };
            match START[c as usize] {
                Start::Blank => start += 1,
                class => break (c, class),
            }
        };
        // The two commonest classes first, before the byte after the
        // first is read: only the others need it.
        if class == Start::Single {
            return Scan::Token(SINGLE[c as usize], start, start + 1);
        }
        if class == Start::Letter {
            return Scan::Token(TokenKind::Ident, start, name_end(src, start + 1));
        }
        let next = if start + 1 < n { src[start + 1] } else { 0 };
        return match class {
            Start::Sigil if is_follow(next) => Scan::Token(TokenKind::Ident, start, name_end(src, start + 1)),
            Start::Dot if !next.is_ascii_digit() && is_follow(next) => Scan::Token(TokenKind::DotWord, start, dot_word_end(src, start + 1)),
            Start::Digit => {
                if let Some(end) = plain_decimal_end(src, start) {
                    return Scan::Token(TokenKind::Int, start, end);
                }
                let mut end = start;
                match lex_number(src, &mut end) {
                    Ok(k) => Scan::Token(k, start, end),
                    Err(_) => Scan::Unusual(Unusual::BadNumber, start),
                }
            }
            // A comment: skipped like whitespace (checked here, at a `/`,
            // not before every token).
            Start::Operator if c == b'/' && matches!(next, b'/' | b'*') => match comment_end(src, start) {
                Ok(end) => {
                    start = end;
                    continue;
                }
                Err(open) => Scan::Unusual(Unusual::OpenComment, open),
            },
            Start::Operator => match operator(c, next) {
                Some((k, len)) => Scan::Token(k, start, start + len),
                // Never (every byte of the class starts an operator:
                // tested), but an error, not a panic, if it did.
                None => Scan::Unusual(Unusual::Rare, start),
            },
            _ => Scan::Unusual(Unusual::Rare, start),
        };
    }
}

/// The end of the `//` or `/*` comment at `i`, or `i` when a `/*` has no `*/`.
fn comment_end(src: &[u8], i: usize) -> Result<usize, usize> {
    if src[i + 1] == b'/' {
        return Ok(src[i..].iter().position(|c| *c == b'\n').map_or(src.len(), |k| i + k));
    }
    match src[i + 2..].windows(2).position(|w| w == b"*/") {
        Some(k) => Ok(i + k + 4),
        None => Err(i),
    }
}

/// The end of a dot-word whose name starts at `i` (after the dot): name
/// bytes and `::` between them (`.shared::cta`).
#[inline]
fn dot_word_end(src: &[u8], mut i: usize) -> usize {
    loop {
        i = name_end(src, i);
        match src.get(i..i + 3) {
            Some(&[b':', b':', c]) if is_follow(c) => i += 2,
            _ => return i,
        }
    }
}

/// The end of the string literal whose `"` is at `start`, or where its
/// error ends and the error.
fn string_end(src: &[u8], start: usize) -> Result<usize, (usize, &'static str)> {
    let n = src.len();
    let mut i = start + 1;
    loop {
        if i >= n || src[i] == b'\n' {
            return Err((start + 1, "unterminated string"));
        }
        match src[i] {
            b'\\' => i += 2,
            b'"' => {
                i += 1;
                break;
            }
            _ => i += 1,
        }
    }
    let end = i.min(n);
    if std::str::from_utf8(&src[start..end]).is_err() {
        return Err((end, "string is not valid UTF-8"));
    }
    Ok(end)
}

/// Why byte `c` starts no token.
#[cold]
fn not_a_token(c: u8) -> String {
    if c == b'#' {
        return "preprocessor lines (`#...`) are not PTX; run the C preprocessor first".into();
    }
    let what = if c == 0 {
        "a NUL byte".to_string()
    } else if c >= 0x80 {
        format!("byte 0x{c:02x} (PTX is ASCII outside comments and strings)")
    } else if c < 0x20 || c == 0x7f {
        format!("control character 0x{c:02x}")
    } else {
        format!("`{}`", c as char)
    };
    format!("found {what}, expected a token")
}

fn lex_decimal_tail(src: &[u8], i: &mut usize) {
    while *i < src.len() && src[*i].is_ascii_digit() {
        *i += 1;
    }
    if *i < src.len() && (src[*i] == b'e' || src[*i] == b'E') {
        let mut j = *i + 1;
        if j < src.len() && (src[j] == b'+' || src[j] == b'-') {
            j += 1;
        }
        if j < src.len() && src[j].is_ascii_digit() {
            while j < src.len() && src[j].is_ascii_digit() {
                j += 1;
            }
            *i = j;
        }
    }
}

/// The end of the plain decimal integer at `start` (a digit): `0`, or
/// digits that do not start with `0`, followed by the end of the text or
/// a byte that is neither `.` nor a name byte (which would make it a float,
/// a suffixed, octal or malformed number). `None` for anything else, which
/// [`lex_number`] reads; where this gives an end, `lex_number` gives the
/// same `Int` (tested). Inlined in [`scan`]: `.loc` lines are three such
/// numbers (matrix_free: 28,500 numbers through `lex_number`, about 80
/// host instructions each).
#[inline(always)]
fn plain_decimal_end(src: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    if src[start] != b'0' {
        while src.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    match src.get(i) {
        Some(&c) if c == b'.' || is_follow(c) => None,
        _ => Some(i),
    }
}

fn lex_number(src: &[u8], i: &mut usize) -> Result<TokenKind, String> {
    let n = src.len();
    let start = *i;
    let next = if start + 1 < n { src[start + 1] } else { 0 };
    let kind = if src[start] == b'0' && matches!(next, b'x' | b'X') {
        *i += 2;
        let d = *i;
        while *i < n && src[*i].is_ascii_hexdigit() {
            *i += 1;
        }
        if *i == d {
            return Err("hexadecimal literal without digits".into());
        }
        if *i < n && src[*i] == b'U' {
            *i += 1;
        }
        TokenKind::Int
    } else if src[start] == b'0' && matches!(next, b'b' | b'B') {
        *i += 2;
        let d = *i;
        while *i < n && (src[*i] == b'0' || src[*i] == b'1') {
            *i += 1;
        }
        if *i == d {
            return Err("binary literal without digits".into());
        }
        if *i < n && src[*i] == b'U' {
            *i += 1;
        }
        TokenKind::Int
    } else if src[start] == b'0' && matches!(next, b'f' | b'F' | b'd' | b'D') {
        let want = if matches!(next, b'f' | b'F') { 8 } else { 16 };
        *i += 2;
        let d = *i;
        while *i < n && src[*i].is_ascii_hexdigit() {
            *i += 1;
        }
        if *i - d != want {
            return Err(format!(
                "`0{}` floating-point literal needs exactly {want} hexadecimal digits, found {}",
                next as char,
                *i - d
            ));
        }
        if want == 8 {
            TokenKind::HexF32
        } else {
            TokenKind::HexF64
        }
    } else {
        while *i < n && src[*i].is_ascii_digit() {
            *i += 1;
        }
        let mut float = false;
        if *i < n && src[*i] == b'.' && !(*i + 1 < n && src[*i + 1].is_ascii_alphabetic() && src[*i + 1] != b'e' && src[*i + 1] != b'E') {
            *i += 1;
            float = true;
        }
        let before = *i;
        lex_decimal_tail(src, i);
        if *i > before && src[before..*i].iter().any(|c| *c == b'e' || *c == b'E') {
            float = true;
        }
        if float {
            TokenKind::Float
        } else {
            if *i < n && src[*i] == b'U' {
                *i += 1;
            }
            let digits = &src[start..*i];
            if digits.len() > 1 && digits[0] == b'0' && digits.iter().take_while(|c| c.is_ascii_digit()).any(|c| *c == b'8' || *c == b'9') {
                return Err("octal literal with a digit 8 or 9".into());
            }
            TokenKind::Int
        }
    };
    if *i < n && is_follow(src[*i]) {
        while *i < n && is_follow(src[*i]) {
            *i += 1;
        }
        return Err(format!("malformed number `{}`", String::from_utf8_lossy(&src[start..*i])));
    }
    Ok(kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use TokenKind::*;

    fn kinds(s: &str) -> Vec<TokenKind> {
        lex(s.as_bytes()).unwrap().into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn instruction_tokens() {
        assert_eq!(kinds("ld.global.v4.f32 {%f1,%f2}, [%rd1+-4];"), vec![
            Ident, DotWord, DotWord, DotWord, LBrace, Ident, Comma, Ident, RBrace, Comma, LBracket, Ident, Plus, Minus, Int, RBracket, Semi, Eof
        ]);
    }

    #[test]
    fn dot_digit_is_modifier_when_glued_and_float_otherwise() {
        assert_eq!(kinds("tex.1d"), vec![Ident, DotWord, Eof]);
        assert_eq!(kinds("{.05,.1}"), vec![LBrace, Float, Comma, Float, RBrace, Eof]);
    }

    #[test]
    fn literals() {
        assert_eq!(kinds("0x1fU 017 0b101 42 1.5 1e-3 0f3F800000 0d3FF0000000000000"), vec![Int, Int, Int, Int, Float, Float, HexF32, HexF64, Eof]);
        assert!(lex(b"0f3F80").is_err());
        assert!(lex(b"12ab").is_err());
        assert!(lex(b"/* open").is_err());
        assert!(lex(b"\"open").is_err());
        assert!(lex(b"a \x00 b").is_err());
    }

    /// [`START`] against what each class means to the lexer, on every byte
    /// value: whitespace, letters, digits, the sigils and the dot, the
    /// first bytes of [`operator`] (whatever byte follows), and of those
    /// the ones [`SINGLE`] reads alone: [`operator`] gives them their
    /// `SINGLE` token of one byte, whatever byte follows.
    #[test]
    fn start_table_agrees_with_the_plain_definitions() {
        for b in 0..=255u8 {
            let class = START[b as usize];
            assert_eq!(class, start_class(b), "byte {b:#04x}");
            assert_eq!(class == Start::Blank, matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c), "byte {b:#04x}");
            assert_eq!(class == Start::Letter, b.is_ascii_alphabetic(), "byte {b:#04x}");
            assert_eq!(class == Start::Digit, b.is_ascii_digit(), "byte {b:#04x}");
            assert_eq!(class == Start::Sigil, matches!(b, b'_' | b'$' | b'%'), "byte {b:#04x}");
            assert_eq!(class == Start::Dot, b == b'.', "byte {b:#04x}");
            let mut alone = true;
            for next in 0..=255u8 {
                let op = operator(b, next);
                assert_eq!(matches!(class, Start::Operator | Start::Single), op.is_some(), "bytes {b:#04x} {next:#04x}");
                alone &= op == Some((SINGLE[b as usize], 1));
            }
            assert_eq!(class == Start::Single, alone && b != b'/', "byte {b:#04x}");
            assert_eq!(class == Start::Single, SINGLE[b as usize] != Error, "byte {b:#04x}");
            assert_eq!(is_follow(b), b.is_ascii_alphanumeric() || b == b'_' || b == b'$', "byte {b:#04x}");
        }
    }

    /// Every byte value alone, after a name and before one lexes as the
    /// byte's class says (a token, whitespace, or an error at the byte).
    #[test]
    fn every_byte_value_between_names() {
        for b in 0..=255u8 {
            let text = [b'a', b' ', b, b' ', b'z'];
            let toks = lex(&text);
            match START[b as usize] {
                Start::Blank => assert_eq!(kinds_of(&toks), vec![Ident, Ident, Eof], "byte {b:#04x}"),
                Start::Rare if b != b'"' => assert_eq!(toks.unwrap_err().span, Span::new(2, 3), "byte {b:#04x}"),
                Start::Rare => assert!(toks.is_err()),
                Start::Letter => assert_eq!(kinds_of(&toks), vec![Ident, Ident, Ident, Eof], "byte {b:#04x}"),
                Start::Sigil if b == b'_' => assert_eq!(kinds_of(&toks), vec![Ident, Ident, Ident, Eof]),
                Start::Sigil if b == b'%' => assert_eq!(kinds_of(&toks), vec![Ident, Percent, Ident, Eof]),
                Start::Sigil => assert_eq!(toks.unwrap_err().span, Span::new(2, 3)),
                Start::Digit => assert_eq!(kinds_of(&toks), vec![Ident, Int, Ident, Eof], "byte {b:#04x}"),
                Start::Dot => assert!(toks.is_err()),
                Start::Operator | Start::Single => {
                    let toks = toks.unwrap();
                    assert_eq!(toks.len(), 4, "byte {b:#04x}");
                    assert_eq!(toks[1].span, Span::new(2, 3), "byte {b:#04x}");
                }
            }
        }
        assert_eq!(kinds("a /* x */ b // y\n c"), vec![Ident, Ident, Ident, Eof]);
        assert_eq!(kinds("a / b"), vec![Ident, Slash, Ident, Eof]);
        assert_eq!(lex(b"a /* b").unwrap_err().span, Span::new(2, 4));
    }

    /// The plain decimal's fast path gives what [`lex_number`] gives
    /// wherever it answers, and answers for the plain decimals: numbers of
    /// every form, followed by every byte value and by the end of the text.
    #[test]
    fn plain_decimals_lex_as_lex_number_lexes_them() {
        let numbers = ["0", "1", "7", "9", "10", "42", "123456789", "4294967296", "99999999999999999999999", "00", "007", "08", "0x1F", "0b101", "0f3F800000", "0d3FF0000000000000", "1e5", "1E+5", "1.5", "1.", "12U", "0U", "12abc", "1_", "1$"];
        let mut fast = 0;
        for number in numbers {
            let tails: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).chain([Vec::new()]).collect();
            for tail in tails {
                let text: Vec<u8> = number.bytes().chain(tail.iter().copied()).collect();
                let mut end = 0;
                let general = lex_number(&text, &mut end).ok().map(|k| (k, end));
                if let Some(e) = plain_decimal_end(&text, 0) {
                    assert_eq!(general, Some((Int, e)), "{:?}", std::string::String::from_utf8_lossy(&text));
                    fast += 1;
                }
                // Plain: a run of digits, not `0` followed by more, then
                // the end or a byte that is neither `.` nor a name byte.
                let digits = text.iter().take_while(|c| c.is_ascii_digit()).count();
                let plain = (text[0] != b'0' || digits == 1) && text.get(digits).is_none_or(|&c| c != b'.' && !is_follow(c));
                assert_eq!(plain_decimal_end(&text, 0), plain.then_some(digits), "{:?}", std::string::String::from_utf8_lossy(&text));
            }
        }
        assert!(fast > 1000, "{fast}");
    }

    /// [`glued`]'s one comparison against its plain definition.
    #[test]
    fn glued_is_a_start_where_the_scan_started_past_the_first_byte() {
        for start in 0..6 {
            for from in 0..=start {
                assert_eq!(glued(start, from), start == from && start > 0, "start {start}, from {from}");
            }
        }
        let t = lex(b"a.b c").unwrap();
        assert_eq!(t.iter().map(|t| t.glued).collect::<Vec<_>>(), vec![false, true, false, false]);
    }

    /// [`plain_ident_end`] and [`blank_end`] against the lexer: after
    /// every pair of bytes, an identifier is found where the lexer reads one
    /// that starts with a letter or a sigil, ending where it ends, and the
    /// whitespace ends where the lexer's next token or comment starts.
    #[test]
    fn plain_identifiers_and_blanks_end_as_the_lexer_reads_them() {
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                let text = [a, b, b'x', b';'];
                let mut lexer = Lexer::new(&text).unwrap();
                let t = lexer.next_token();
                let lexed = (t.kind == Ident && t.span.start == 0 && !(a == b'_' && t.span.end == 1)).then_some(t.span.end as usize);
                assert_eq!(plain_ident_end(&text, 0), lexed, "bytes {a:#04x} {b:#04x}");
                let blank = [a, b];
                let end = blank_end(&blank, 0);
                assert!(blank[..end].iter().all(|&c| is_blank(c)) && blank.get(end).is_none_or(|&c| !is_blank(c)));
            }
        }
        assert_eq!(blank_end(b" \t\n/* */x", 0), 3);
    }

    fn kinds_of(toks: &Result<Vec<Token>, LexError>) -> Vec<TokenKind> {
        toks.as_ref().unwrap().iter().map(|t| t.kind).collect()
    }

    #[test]
    fn scoped_modifiers() {
        let t = lex(b".L2::cache_hint .shared::cta").unwrap();
        assert_eq!(t.len(), 3);
        assert_eq!(t[0].span, Span::new(0, 15));
    }
}
