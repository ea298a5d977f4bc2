//! Variable declarations (PTX ISA §5.4) in every state space: module
//! variables, function parameters and body declarations, with alignment,
//! vectors, `.ptr` attributes, arrays, `%r<N>` ranges and initializers.

use super::cursor::{GlobalKind, PResult, Parser};
use super::expr::{eval_int, MAX_EXPR_DEPTH};
use crate::ir::{Attribute, ConstExpr, Decl, Declarator, Declarators, FloatLit, Imm, Initializer, IntList, IntListBuilder, PtrAttr, Stmt, VarDecl};
use crate::isa::{ScalarType, StateSpace};
use crate::lexer::{blank_end, is_blank, plain_ident_end, Lexer, Token, TokenKind};
use crate::source::Span;

/// Where a declaration appears; decides what it may contain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeclCtx {
    /// Module scope: ends with `;`, may have initializers.
    Module,
    /// Function body: ends with `;`, declares names in the current scope.
    Body,
    /// A function parameter: one name, no `;`.
    Param,
    /// A `.callprototype` parameter: one name (usually `_`), declares nothing.
    Proto,
}

/// State spaces a declaration may start with.
pub fn decl_space(word: &str) -> Option<StateSpace> {
    Some(match word {
        ".reg" => StateSpace::Reg,
        ".sreg" => StateSpace::Sreg,
        ".const" => StateSpace::Const,
        ".global" => StateSpace::Global,
        ".local" => StateSpace::Local,
        ".param" => StateSpace::Param,
        ".shared" => StateSpace::Shared,
        ".tex" => StateSpace::Tex,
        _ => return None,
    })
}

impl<'a> Parser<'a> {
    /// Parses a declaration starting at its state-space directive.
    pub fn var_decl(&mut self, ctx: DeclCtx) -> PResult<VarDecl> {
        let t = self.peek();
        let Some(space) = (if t.kind == TokenKind::DotWord { decl_space(self.text(t)) } else { None }) else {
            return self.expected("a state space (`.reg`, `.param`, `.global` ...)");
        };
        self.bump();
        let mut decl = VarDecl { space, vector: None, ty: ScalarType::B8, names: Declarators::new(), attrs: None };
        let mut ty = None;
        while self.at(TokenKind::DotWord) {
            let t = self.peek();
            let w = self.text(t);
            match w {
                ".align" => {
                    self.bump();
                    let a = self.expect_u64("an alignment in bytes")?;
                    if !a.is_power_of_two() {
                        return self.error_at(self.prev_span(), format!("alignment {a} is not a power of two"));
                    }
                    decl.attrs.get_or_insert_default().align = Some(a);
                }
                ".attribute" => {
                    self.bump();
                    decl.attrs.get_or_insert_default().attributes = self.attributes()?;
                }
                ".ptr" => {
                    self.bump();
                    let mut p = PtrAttr { space: None, align: None };
                    if self.at(TokenKind::DotWord) {
                        if let Some(s @ (StateSpace::Global | StateSpace::Shared | StateSpace::Const | StateSpace::Local)) = decl_space(self.text(self.peek())) {
                            self.bump();
                            p.space = Some(s);
                        }
                    }
                    if self.eat_dot(".align") {
                        let a = self.expect_u64("an alignment in bytes")?;
                        p.align = Some(a);
                    }
                    decl.attrs.get_or_insert_default().ptr = Some(p);
                }
                ".v2" | ".v4" | ".v8" => {
                    self.bump();
                    decl.vector = Some(w[2..].parse().unwrap());
                }
                _ => match ScalarType::from_text(w) {
                    Some(t) if ty.is_none() => {
                        self.bump();
                        ty = Some(t);
                    }
                    _ => break,
                },
            }
        }
        let Some(ty) = ty else {
            return self.expected("a type (`.b32`, `.f32`, `.u64` ...)");
        };
        decl.ty = ty;
        loop {
            decl.names.push(self.declarator(&decl, ctx)?);
            if matches!(ctx, DeclCtx::Param | DeclCtx::Proto) || !self.eat(TokenKind::Comma) {
                break;
            }
        }
        if matches!(ctx, DeclCtx::Module | DeclCtx::Body) {
            self.expect(TokenKind::Semi, "`;` after a declaration")?;
        }
        Ok(decl)
    }

    /// `name` declared again in a scope that declares it at `prev` (for a
    /// range `name` is `prefix<count>`: it declares its members too).
    #[cold]
    fn redeclared<T>(&self, name: &str, span: Span, prev: Span) -> PResult<T> {
        let (l, c) = self.lines().line_col(prev.start);
        let what = if name.ends_with('>') { "declares a name" } else { "is" };
        self.error_at(span, format!("`{name}` {what} already declared in this scope (at {l}:{c})"))
    }

    /// The fast path for runs of the commonest body declaration, one plain
    /// name of a scalar type (`.reg .u32 %r1;`, `.local .b32 x;`; old-style
    /// PTX declares each register on a line of its own, tens of thousands
    /// in a kernel): read with a lexer of its own from the current token
    /// on, without the cursor's window or the general loop over modifiers
    /// and declarator parts, and where a declaration repeats the bytes of
    /// the one before up to its name ([`DeclPrefix`]), from the bytes
    /// without making tokens. Binds each, pushes its statement and span,
    /// and moves the cursor past the last. Stops before anything else
    /// (another modifier, a vector, `<N>`, an array, an initializer,
    /// several names, `_`), which the general parser reads; reads nothing
    /// then. Says whether it read any. Gives the general parser's IR,
    /// bindings, positions and errors (tested against it).
    pub(super) fn plain_body_decls(&mut self, stmts: &mut Vec<Stmt>, spans: &mut Vec<Span>) -> PResult<bool> {
        let first = self.peek();
        let Ok(mut lexer) = Lexer::new(self.src) else { return Ok(false) };
        lexer.set_pos(first.span.end as usize);
        let mut prefixes = DeclPrefixes::default();
        let mut last_semi = None;
        loop {
            let (start, d) = match last_semi.and_then(|semi| prefixes.decl_after(self.src, semi)) {
                Some(found) => found,
                None => {
                    let space = match last_semi {
                        None => first,
                        Some(semi) => {
                            lexer.set_pos(semi.end as usize);
                            lexer.next_token()
                        }
                    };
                    let Some(d) = self.plain_decl(space, &mut lexer) else { break };
                    prefixes.remember(self.src, space.span.start as usize, &d);
                    (space.span.start, d)
                }
            };
            let f = self.func.as_mut().expect("body declarations are parsed inside a function");
            if let Err(prev) = f.bind_decl(d.space, d.name, d.ty, None, None, d.name_span) {
                return self.redeclared(d.name, d.name_span, prev);
            }
            stmts.push(Stmt::Decl(Decl::plain(d.space, d.ty, d.name)));
            spans.push(Span { start, end: d.semi.end });
            last_semi = Some(d.semi);
        }
        let Some(semi) = last_semi else { return Ok(false) };
        self.consume_through(semi);
        Ok(true)
    }

    /// The plain declaration that starts with the token `space` and goes on
    /// with the tokens of `lexer`: `.space .type name ;`; `None` for
    /// anything else.
    fn plain_decl(&self, space: Token, lexer: &mut Lexer<'a>) -> Option<PlainDecl<'a>> {
        let mut next = |kind: TokenKind| Some(lexer.next_token()).filter(|t| t.kind == kind);
        if space.kind != TokenKind::DotWord {
            return None;
        }
        let space = decl_space(self.text(space))?;
        let ty = ScalarType::from_text(self.text(next(TokenKind::DotWord)?))?;
        let name_token = next(TokenKind::Ident)?;
        let name = self.text(name_token);
        if name == "_" {
            return None;
        }
        let semi = next(TokenKind::Semi)?.span;
        Some(PlainDecl { space, ty, name, name_span: name_token.span, semi })
    }

    fn attributes(&mut self) -> PResult<Vec<Attribute>> {
        self.expect(TokenKind::LParen, "`(` after .attribute")?;
        let mut out = Vec::new();
        loop {
            if self.eat_dot(".managed") {
                out.push(Attribute::Managed);
            } else if self.eat_dot(".unified") {
                if self.eat(TokenKind::LParen) {
                    let a = self.expect_u64("a uuid")?;
                    self.expect(TokenKind::Comma, "`,` between the two uuid halves")?;
                    let b = self.expect_u64("a uuid")?;
                    self.expect(TokenKind::RParen, "`)`")?;
                    out.push(Attribute::Unified(Some((a, b))));
                } else {
                    out.push(Attribute::Unified(None));
                }
            } else {
                return self.expected("`.managed` or `.unified`");
            }
            if !self.eat(TokenKind::Comma) {
                break;
            }
        }
        self.expect(TokenKind::RParen, "`)` closing .attribute")?;
        Ok(out)
    }

    fn declarator(&mut self, decl: &VarDecl, ctx: DeclCtx) -> PResult<Declarator> {
        let (nt, name) = self.expect_ident("a name to declare")?;
        let mut d = Declarator::new(name);
        if self.at(TokenKind::Lt) {
            self.bump();
            let n = self.expect_u32("a register count")?;
            self.expect(TokenKind::Gt, "`>` closing a parameterized name")?;
            d.range = Some(n);
        }
        let mut dims = Vec::new();
        while self.at(TokenKind::LBracket) {
            self.bump();
            if self.eat(TokenKind::RBracket) {
                dims.push(None);
                continue;
            }
            let st = self.peek().span;
            let e = self.const_expr()?;
            let n = match eval_int(&e) {
                Ok(n) if n >= 0 => n as u64,
                Ok(n) => return self.error_at(st, format!("array size {n} is negative")),
                Err(m) => return self.error_at(st, m),
            };
            self.expect(TokenKind::RBracket, "`]` closing an array size")?;
            dims.push(Some(n));
        }
        d.dims = dims.into_boxed_slice();
        if d.range.is_some() && (!d.dims.is_empty()) {
            return self.error_at(nt.span, "a parameterized name `name<N>` cannot be an array");
        }
        if self.at(TokenKind::Eq) {
            if matches!(ctx, DeclCtx::Param | DeclCtx::Proto) {
                return self.error_at(self.peek().span, "parameters cannot have initializers");
            }
            if d.range.is_some() {
                return self.error_at(self.peek().span, "a parameterized name `name<N>` cannot have an initializer");
            }
            self.bump();
            d.init = Some(Box::new(self.initializer(0)?));
        }
        // Bind the name.
        let span = nt.span;
        match ctx {
            DeclCtx::Module => {
                self.globals.insert(name.into(), GlobalKind::Var);
            }
            DeclCtx::Body | DeclCtx::Param => {
                if name != "_" {
                    let f = self.func.as_mut().expect("body declarations are parsed inside a function");
                    let bound = f.bind_decl(decl.space, name, decl.ty, decl.vector, d.range, span);
                    if let Err(prev) = bound {
                        return match d.range {
                            // The prefix or one of the members (`%r5` before `%r<9>`).
                            Some(count) => self.redeclared(&format!("{name}<{count}>"), span, prev),
                            None => self.redeclared(name, span, prev),
                        };
                    }
                }
            }
            DeclCtx::Proto => {}
        }
        Ok(d)
    }

    /// A literal the next token ends (`,` or `}`: a value of a list), as
    /// [`Parser::const_expr`] reads it, consumed; `None`, with nothing
    /// consumed, for anything else and for a literal that does not fit
    /// (the general path reports it). A string table kept in hexadecimal
    /// (`{0x2f, 0x68, ...}`) went through the expression parser value by
    /// value: 25,000 host instructions a table on complex.ptx.
    fn lone_literal_expr(&mut self) -> Option<ConstExpr> {
        let t = self.peek();
        if !self.fast_paths || !matches!(self.peek_at(1).kind, TokenKind::Comma | TokenKind::RBrace) {
            return None;
        }
        let e = match self.literal_imm(t)? {
            Imm::Int(i) => ConstExpr::Int(i),
            Imm::Float(f) => ConstExpr::Float(f),
        };
        self.bump();
        Some(e)
    }

    fn initializer(&mut self, depth: u32) -> PResult<Initializer> {
        if depth > MAX_EXPR_DEPTH {
            return self.error_at(self.peek().span, format!("initializer nested more than {MAX_EXPR_DEPTH} levels deep"));
        }
        if !self.at(TokenKind::LBrace) {
            if let Some(e) = self.lone_literal_expr() {
                return Ok(Initializer::Expr(e));
            }
            return Ok(Initializer::Expr(self.const_expr()?));
        }
        if let Some((list, end)) = scan_int_list(self.src, self.peek().span.start as usize) {
            self.skip_raw_to(end);
            return Ok(Initializer::Ints(list));
        }
        if let Some((items, end)) = scan_hex_float_list(self.src, self.peek().span.start as usize) {
            self.skip_raw_to(end);
            return Ok(Initializer::list(items));
        }
        self.bump();
        if self.at(TokenKind::Ident) && self.peek_at(1).kind == TokenKind::Eq {
            let mut fields = Vec::new();
            loop {
                let (_, name) = self.expect_ident("a field name")?;
                self.expect(TokenKind::Eq, "`=` after a field name")?;
                let v = self.const_expr()?;
                fields.push((name.into(), v));
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
            self.expect(TokenKind::RBrace, "`}` closing the fields")?;
            return Ok(Initializer::Fields(fields));
        }
        let mut items = Vec::new();
        if !self.at(TokenKind::RBrace) {
            loop {
                items.push(self.initializer(depth + 1)?);
                if !self.eat(TokenKind::Comma) {
                    break;
                }
                if self.at(TokenKind::RBrace) {
                    break;
                }
            }
        }
        self.expect(TokenKind::RBrace, "`,` or `}` in an initializer list")?;
        Ok(Initializer::list(items))
    }
}

/// A plain body declaration read from the source bytes
/// ([`Parser::plain_body_decls`]).
struct PlainDecl<'a> {
    space: StateSpace,
    ty: ScalarType,
    name: &'a str,
    name_span: Span,
    semi: Span,
}

/// The bytes of a plain declaration from its state space to its name
/// (`.reg .f32 ` of `.reg .f32 %f1;`), which the next declarations of a
/// run mostly repeat: compared as two words, not lexed again. Kept only
/// when they are 8 to 16 bytes and end in whitespace: the same bytes at
/// a token's start are then the same two words and the whitespace, and
/// the type's word ends before the name whatever the name is.
#[derive(Clone, Copy)]
struct DeclPrefix {
    len: usize,
    /// Its first and last 8 bytes (the same ones when it has 8).
    head: u64,
    tail: u64,
    space: StateSpace,
    ty: ScalarType,
}

/// The 8 bytes at `i`, when there are 8.
#[inline(always)]
fn word_at(src: &[u8], i: usize) -> Option<u64> {
    Some(u64::from_le_bytes(src.get(i..i + 8)?.try_into().ok()?))
}

impl DeclPrefix {
    /// The prefix of the plain declaration `d` whose state space starts
    /// at byte `start`, when it is one to keep.
    fn new(src: &[u8], start: usize, d: &PlainDecl) -> Option<DeclPrefix> {
        let len = d.name_span.start as usize - start;
        if !(8..=16).contains(&len) || !is_blank(src[start + len - 1]) {
            return None;
        }
        Some(DeclPrefix { len, head: word_at(src, start)?, tail: word_at(src, start + len - 8)?, space: d.space, ty: d.ty })
    }

    /// The plain declaration that starts at byte `start` with these
    /// bytes: a name the lexer reads as a common identifier and `;` right
    /// after it. `None` for anything else (other bytes, more after the
    /// name), which the lexer reads.
    #[inline]
    fn decl_at<'a>(&self, src: &'a [u8], start: usize) -> Option<PlainDecl<'a>> {
        if word_at(src, start)? != self.head || word_at(src, start + self.len - 8)? != self.tail {
            return None;
        }
        let name_start = start + self.len;
        let name_end = plain_ident_end(src, name_start)?;
        if src.get(name_end) != Some(&b';') {
            return None;
        }
        // SAFETY: an identifier's bytes are ASCII (`plain_ident_end`).
        let name = unsafe { std::str::from_utf8_unchecked(&src[name_start..name_end]) };
        let name_span = Span::new(name_start, name_end);
        Some(PlainDecl { space: self.space, ty: self.ty, name, name_span, semi: Span::new(name_end, name_end + 1) })
    }
}

/// The prefixes ([`DeclPrefix`]) of the last few plain declarations of a
/// run that had new ones: old-style PTX declares registers of a few types
/// in turns (renderer: 62,608 declarations, the type changing at 13,555
/// of them).
#[derive(Default)]
struct DeclPrefixes {
    kept: [Option<DeclPrefix>; DECL_PREFIXES_KEPT],
    /// Where the next one is kept (over the oldest).
    next: usize,
}

/// How many prefixes [`DeclPrefixes`] keeps.
const DECL_PREFIXES_KEPT: usize = 4;

impl DeclPrefixes {
    /// Keeps the prefix of the plain declaration `d` whose state space
    /// starts at byte `start`, when it is one to keep.
    fn remember(&mut self, src: &[u8], start: usize, d: &PlainDecl) {
        if let Some(p) = DeclPrefix::new(src, start, d) {
            self.kept[self.next] = Some(p);
            self.next = (self.next + 1) % DECL_PREFIXES_KEPT;
        }
    }

    /// The plain declaration after the `;` at `semi` that starts with one
    /// of the prefixes after whitespace ([`DeclPrefix::decl_at`]), and where
    /// it starts. `None` for anything else (a comment first, other bytes),
    /// which the lexer reads.
    #[inline]
    fn decl_after<'a>(&self, src: &'a [u8], semi: Span) -> Option<(u32, PlainDecl<'a>)> {
        let start = blank_end(src, semi.end as usize);
        self.kept.iter().flatten().find_map(|p| p.decl_at(src, start)).map(|d| (start as u32, d))
    }
}

/// The fast path for the commonest initializer, a list of plain decimal
/// integers (`{0, 12, 255}`, the bulk of data-heavy modules): scans the bytes
/// from the `{` at `start` without making tokens. Returns the list and the
/// byte after its `}`, or `None` for anything else (another literal form, a
/// comment, an overflow, an empty or malformed list), which the general
/// parser then reads, and reports, as usual. Accepts exactly what the
/// general parser reads as such a list (a trailing comma included).
fn scan_int_list(src: &[u8], start: usize) -> Option<(IntList, usize)> {
    let mut list = IntListBuilder::new();
    let end = scan_ints(src, start, |v| list.push(v))?;
    Some((list.finish()?, end))
}

/// A list of hexadecimal floating-point literals (`{0f3F800000,
/// 0fBF800000}`: `0f` and eight digits, `0d` and sixteen), read from the
/// `{` at `start` without making tokens, as [`scan_int_list`] reads
/// integers: the items the general parser makes of it and the byte after
/// its `}`. `None` for anything else (another literal, a comment, a
/// literal with more or fewer digits, an empty list), which the general
/// parser then reads, and reports, as usual. Tables of `float` and
/// `double` constants are written so; through tokens and the expression
/// parser each value cost about 540 host instructions.
fn scan_hex_float_list(src: &[u8], start: usize) -> Option<(Vec<Initializer>, usize)> {
    let mut items = Vec::new();
    let mut i = blank_end(src, start + 1);
    loop {
        if *src.get(i)? != b'0' {
            return None;
        }
        let f32 = match *src.get(i + 1)? {
            b'f' | b'F' => true,
            b'd' | b'D' => false,
            _ => return None,
        };
        let digits = if f32 { 8 } else { 16 };
        let mut bits: u64 = 0;
        let mut not_hex = 0;
        for &h in src.get(i + 2..i + 2 + digits)? {
            let v = HEX_DIGIT_VALUES[h as usize];
            not_hex |= v;
            bits = bits << 4 | u64::from(v & 15);
        }
        if not_hex > 15 {
            return None;
        }
        let lit = if f32 { FloatLit::F32(bits as u32) } else { FloatLit::F64(bits) };
        items.push(Initializer::Expr(ConstExpr::Float(lit)));
        // Only blanks, then `,` or `}`: a further hexadecimal digit or
        // letter makes another literal or token, left to the general parser.
        i = blank_end(src, i + 2 + digits);
        match *src.get(i)? {
            b',' => {
                i = blank_end(src, i + 1);
                if *src.get(i)? == b'}' {
                    return Some((items, i + 1));
                }
            }
            b'}' => return Some((items, i + 1)),
            _ => return None,
        }
    }
}

/// The value of each byte as a hexadecimal digit, `NOT_HEX` for a byte
/// that is none: a run of digits is checked once, by or-ing their values.
static HEX_DIGIT_VALUES: [u8; 256] = {
    let mut table = [NOT_HEX; 256];
    let mut b = 0;
    while b < 256 {
        if let Some(v) = (b as u8 as char).to_digit(16) {
            table[b] = v as u8;
        }
        b += 1;
    }
    table
};
const NOT_HEX: u8 = 0x10;

/// The number of ASCII digits that start `window` (eight bytes) and their
/// value, when there are one to seven (the byte after them is in the
/// window). Found on the whole window at once, without a branch per digit
/// (a list's numbers have one, two or three digits at random, and a loop
/// per digit mispredicts its exit once a number):
/// - a byte is a digit when its high nibble is 3 and its low nibble plus 6
///   stays below 16 (neither step carries into the next byte);
/// - the digits, moved to the top of the word behind zeros, are combined
///   pairwise by multiplication (two digits, then four, then eight).
#[inline]
fn leading_digits(window: &[u8]) -> Option<(usize, u64)> {
    const HIGH: u64 = 0xf0f0_f0f0_f0f0_f0f0;
    const LOW: u64 = 0x0f0f_0f0f_0f0f_0f0f;
    let w = u64::from_le_bytes(window.try_into().ok()?);
    // A nonzero byte where the byte is not a digit; the first one ends the number.
    let not_digit = ((w & HIGH) ^ 0x3030_3030_3030_3030) | (((w & LOW) + 0x0606_0606_0606_0606) & HIGH);
    let n = (not_digit.trailing_zeros() / 8) as usize;
    if n == 0 || n == 8 {
        return None;
    }
    // The digits' values, the first in the lowest byte, shifted so that the
    // last is in the highest byte and zeros lead.
    let mut x = (w & LOW) << (8 * (8 - n));
    x = (x * 10 + (x >> 8)) & 0x00ff_00ff_00ff_00ff;
    x = (x * 100 + (x >> 16)) & 0x0000_ffff_0000_ffff;
    x = (x * 10_000 + (x >> 32)) & 0xffff_ffff;
    Some((n, x))
}

fn scan_ints(src: &[u8], start: usize, mut push: impl FnMut(u64)) -> Option<usize> {
    // Past the run of common items, the byte under the scan is kept in
    // `c`; running off the end gives `None` (a list ends with its `}`).
    let is_blank = |c: u8| matches!(c, b' ' | b'\t' | b'\r' | b'\n');
    let mut i = start + 1;
    loop {
        // A run of the common items, one to three digits (no leading zero)
        // then `, `, each read from one window: what the rest of the loop
        // reads them as, a third of its work (data-heavy modules hold
        // millions of byte values written so).
        let mut after_comma = false;
        while let Some((n, v)) = src.get(i..i + 8).and_then(leading_digits) {
            if n > 3 || src[i + n] != b',' || src[i + n + 1] != b' ' || (n > 1 && src[i] == b'0') {
                break;
            }
            push(v);
            i += n + 2;
            after_comma = true;
        }
        let mut c = *src.get(i)?;
        while is_blank(c) {
            i += 1;
            c = *src.get(i)?;
        }
        // A trailing comma.
        if after_comma && c == b'}' {
            return Some(i + 1);
        }
        let digits = i;
        let mut value: u64 = 0;
        match src.get(i..i + 8).and_then(leading_digits) {
            // One to seven digits and the byte after them, in one window.
            Some((n, v)) => {
                value = v;
                i += n;
                c = src[i];
            }
            None => {
                while c.is_ascii_digit() {
                    value = value.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
                    i += 1;
                    c = *src.get(i)?;
                }
            }
        }
        // The value as read when it is one digit, or a few more without a
        // leading zero (always in range); else what the rule for plain
        // decimals says: `None` for no digits, an octal number (`017`)
        // or an overflow.
        let n = i - digits;
        if n != 1 && (n > crate::ir::DIGITS_THAT_FIT_U64 || n == 0 || src[digits] == b'0') {
            value = crate::ir::plain_decimal_u64(&src[digits..i])?;
        }
        push(value);
        while is_blank(c) {
            i += 1;
            c = *src.get(i)?;
        }
        match c {
            b',' => {
                i += 1;
                c = *src.get(i)?;
                while is_blank(c) {
                    i += 1;
                    c = *src.get(i)?;
                }
                if c == b'}' {
                    return Some(i + 1);
                }
            }
            b'}' => return Some(i + 1),
            _ => return None,
        }
    }
}
