//! Cutting a module's text into its header and top-level items without
//! parsing them, and reading the names each item declares.
//!
//! The parser uses the names to know every module-level symbol before it
//! parses any function (so a function may name one declared later), and the
//! incremental database uses the cuts to re-parse only the items whose text
//! changed. The scan works on bytes: it skips comments and strings and
//! tracks `{}`/`()` depth; an item ends at a `;` or at the `}` closing a
//! body or section at depth 0, or where the next item starts.

use super::cursor::GlobalKind;
use crate::lexer::{Lexer, TokenKind};
use std::ops::Range;

/// Directives that start a module-level item.
fn starts_item(word: &[u8]) -> bool {
    matches!(
        word,
        b".entry"
            | b".func"
            | b".global"
            | b".const"
            | b".shared"
            | b".local"
            | b".tex"
            | b".reg"
            | b".param"
            | b".sreg"
            | b".extern"
            | b".visible"
            | b".weak"
            | b".common"
            | b".file"
            | b".section"
            | b".pragma"
            | b".alias"
            | b".target"
    )
}

/// Finds the next byte that matters inside braces: `{`, `}`, `/` (a
/// comment may start there) or `"` (a string). The scan runs before the
/// parallel parse, on one thread, over the whole text: `memchr` looks at
/// many bytes a step where a loop over the bytes took about 6 host
/// instructions each (the cut of renderer: 25.9 M host instructions of
/// its 259 M of parsing on two threads before, 4.5 M after).
struct BodySkip {
    /// The first `"` at or after the position it was searched from (the
    /// text's length when there is none): no `"` lies between that position
    /// and it, so only the other three bytes are searched up to it.
    next_quote: Option<usize>,
}

impl BodySkip {
    fn new() -> Self {
        BodySkip { next_quote: None }
    }

    /// The first of those bytes at or after `i`, or `None`.
    fn next(&mut self, src: &[u8], i: usize) -> Option<usize> {
        let quote = match self.next_quote {
            Some(q) if q >= i => q,
            _ => *self.next_quote.insert(memchr::memchr(b'"', &src[i..]).map_or(src.len(), |k| i + k)),
        };
        match memchr::memchr3(b'{', b'}', b'/', &src[i..quote]) {
            Some(k) => Some(i + k),
            None => (quote < src.len()).then_some(quote),
        }
    }
}

/// Where the first `*/` at or after `from` starts (a `/*` comment's text
/// starts at `from`). Found through the `/`s: comments are short, and a
/// `memmem` searcher made for each one cost more than the search.
fn comment_close(src: &[u8], from: usize) -> Option<usize> {
    let mut j = from;
    loop {
        let slash = j + memchr::memchr(b'/', src.get(j..)?)?;
        if slash > from && src[slash - 1] == b'*' {
            return Some(slash - 1);
        }
        j = slash + 1;
    }
}

fn is_linkage(word: &[u8]) -> bool {
    matches!(word, b".extern" | b".visible" | b".weak" | b".common")
}

fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c == b'%' || c == b':'
}

/// The byte offset where the module header (`.version`, `.target`,
/// `.address_size`) ends, or `None` if it does not lex (the parser reports why).
pub fn header_end(src: &[u8]) -> Option<usize> {
    let mut lx = Lexer::new(src).ok()?;
    let mut end = 0;
    let mut seen = [false; 3];
    loop {
        let t = lx.next_valid()?;
        let w = &src[t.span.start as usize..t.span.end as usize];
        let k = match (t.kind, w) {
            (TokenKind::DotWord, b".version") => 0,
            (TokenKind::DotWord, b".target") => 1,
            (TokenKind::DotWord, b".address_size") => 2,
            _ => return Some(end),
        };
        if seen[k] {
            return Some(end);
        }
        seen[k] = true;
        // The directive's arguments: a version, a target list, a size.
        loop {
            let a = lx.next_valid()?;
            end = a.span.end as usize;
            if a.kind == TokenKind::Eof {
                return Some(end);
            }
            if k == 1 {
                // `.target a, b, c`: continue while a comma follows.
                let save = lx_clone_pos(&lx);
                let c = lx.next_valid()?;
                if c.kind != TokenKind::Comma {
                    lx = save;
                    break;
                }
                continue;
            }
            break;
        }
    }
}

fn lx_clone_pos<'a>(lx: &Lexer<'a>) -> Lexer<'a> {
    lx.clone()
}

/// The byte ranges of the top-level items after `start`; together with
/// `0..start` they cover the text exactly. Whitespace and comments between
/// items belong to the item before them (the first item also takes those
/// before it).
pub fn split_items(src: &[u8], start: usize) -> Vec<Range<usize>> {
    let starts = item_starts(src, start, |_| false);
    ranges(src.len(), start, &starts)
}

/// Turns item start offsets into ranges covering `start..len`.
fn ranges(len: usize, start: usize, items: &[usize]) -> Vec<Range<usize>> {
    let mut out = Vec::with_capacity(items.len());
    for (k, &s) in items.iter().enumerate() {
        let e = items.get(k + 1).copied().unwrap_or(len);
        // The first item also takes the text between the header and it.
        out.push(if k == 0 { start..e } else { s..e });
    }
    if out.is_empty() && start < len {
        // Only whitespace and comments after the header.
        out.push(start..len);
    }
    out
}

/// Re-cuts `new` after an edit, reusing the cut of `old` (whose item ranges
/// are `old_ranges`) where the texts agree: only the stretch from the item
/// where they start to differ up to the point where the new cut falls back
/// onto the old one (shifted by the change in length) is scanned.
pub fn resplit_items(old: &[u8], old_ranges: &[Range<usize>], new: &[u8], start: usize) -> Recut {
    let prefix = common_prefix(old, new);
    let max_suffix = old.len().min(new.len()) - prefix;
    let suffix = common_suffix(&old[prefix..], &new[prefix..]).min(max_suffix);
    let ranges = resplit_with(old, old_ranges, new, start, prefix, suffix);
    Recut { ranges, prefix, suffix }
}

/// The result of [`resplit_items`]: the new ranges, and how many bytes at
/// the start and at the end the old and new texts share (items inside those
/// are unchanged).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recut {
    pub ranges: Vec<Range<usize>>,
    pub prefix: usize,
    pub suffix: usize,
}

fn resplit_with(old: &[u8], old_ranges: &[Range<usize>], new: &[u8], start: usize, prefix: usize, suffix: usize) -> Vec<Range<usize>> {
    if old_ranges.is_empty() || prefix < old_ranges[0].end || old_ranges[0].start != start {
        return split_items(new, start);
    }
    // The item before the one holding the first difference: its trailing
    // text may grow, and a change at an item's first byte may move its start.
    let k0 = old_ranges.partition_point(|r| r.end <= prefix).saturating_sub(1);
    let scan_from = old_ranges[k0].start.max(start);
    let delta = new.len() as isize - old.len() as isize;
    let suffix_start_new = new.len() - suffix;
    // Old item starts after the change, as they would sit in the new text.
    let old_starts: Vec<usize> = old_ranges.iter().skip(1).map(|r| r.start).collect();
    let mut resume_at = None;
    let mut scanned = item_starts(new, scan_from, |b| {
        if b < suffix_start_new {
            return false;
        }
        let old_pos = (b as isize - delta) as usize;
        if old_starts.binary_search(&old_pos).is_ok() {
            resume_at = Some(old_pos);
            true
        } else {
            false
        }
    });
    let mut starts: Vec<usize> = old_ranges.iter().take(k0).map(|r| r.start).collect();
    if k0 == 0 {
        // The first range starts at `start`; its item may start later.
        starts.clear();
    }
    starts.append(&mut scanned);
    if let Some(old_pos) = resume_at {
        let from = old_starts.partition_point(|s| *s <= old_pos);
        starts.extend(old_starts[from..].iter().map(|s| (*s as isize + delta) as usize));
    }
    ranges(new.len(), start, &starts)
}

/// Length of the common prefix, comparing blocks with `memcmp` first.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 1024;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= n && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// Length of the common suffix.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 1024;
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut k = 0;
    while k + BLOCK <= n && a[n - k - BLOCK..n - k] == b[n - k - BLOCK..n - k] {
        k += BLOCK;
    }
    while k < n && a[n - k - 1] == b[n - k - 1] {
        k += 1;
    }
    k
}

/// Offsets where items start, scanning from `start`; stops (after recording
/// it) at the first item start for which `stop` returns true.
fn item_starts(src: &[u8], start: usize, stop: impl FnMut(usize) -> bool) -> Vec<usize> {
    scan(src, start, stop)
}

/// Where the first item of `text` starts (after whitespace and comments).
pub fn item_starts_at(text: &[u8]) -> Option<usize> {
    scan(text, 0, |_| true).first().copied()
}

/// The longest word that starts an item (`.section`), with the byte after it.
const START_WORD_MAX: usize = 16;

/// After the text of one item (as [`split_items`] cut it) is replaced by
/// `text`, do the item boundaries of the whole text stay where they were
/// (only shifted by the change in length)? `first`: the item is the first
/// one (its text starts where the header ends, not at its first word);
/// `next`: the text of the item after it (empty for the last item; only its
/// first few bytes are read).
///
/// True exactly when scanning the new text finds the item's own start (at 0
/// unless `first`), no other, and then the next item's start right where the
/// new text ends: the scan is then in its initial state again, so it cuts
/// everything after as before. A comment or string left open, an open brace
/// or parenthesis, a linkage directive or a word glued to the next item, a
/// second item or an item start moved: false.
pub fn keeps_cut(text: &[u8], first: bool, next: &[u8]) -> bool {
    if next.is_empty() {
        let starts = scan(text, 0, |_| false);
        return if first { !text.is_empty() && starts.len() <= 1 } else { starts == [0] };
    }
    let mut buf = Vec::with_capacity(text.len() + START_WORD_MAX);
    buf.extend_from_slice(text);
    buf.extend_from_slice(&next[..next.len().min(START_WORD_MAX)]);
    let end = text.len();
    let starts = scan(&buf, 0, |at| at >= end);
    match starts.as_slice() {
        [s, e] => *e == end && (first || *s == 0),
        _ => false,
    }
}

/// The scan behind [`item_starts`].
fn scan(src: &[u8], start: usize, mut stop: impl FnMut(usize) -> bool) -> Vec<usize> {
    #[derive(PartialEq)]
    enum Open {
        None,
        /// A function header (its body has not started).
        FuncHeader,
        /// A function body or a section: ends at the `}` back to depth 0.
        Braced,
        Other,
    }
    let n = src.len();
    let mut items: Vec<usize> = Vec::new();
    let mut open = Open::None;
    let mut braces = 0i64;
    let mut parens = 0i64;
    let mut last_word_linkage = false;
    let mut is_func_item = false;
    // In a function header: the last word at depth 0 was a directive
    // (`.maxntid 1, 1, 1`, `.pragma "nounroll"`), so a `;` ends the
    // directive, not the item (the parser reads directives until a `;`,
    // `{` or another item follows).
    let mut after_directive = false;
    // In a variable's initializer (after `=`, up to the `;`): a dot-word is
    // a symbol there (`.b32 .debug_abbrev`), not an item.
    let mut in_init = false;
    let mut body_skip = BodySkip::new();
    let mut i = start;
    while i < n {
        // Inside braces only `{`, `}`, strings and comments matter: skip
        // everything else quickly (function bodies are most of a module).
        if braces > 0 {
            match body_skip.next(src, i) {
                Some(k) => i = k,
                None => break,
            }
        }
        let c = src[i];
        match c {
            b'/' if i + 1 < n && src[i + 1] == b'/' => {
                i = memchr::memchr(b'\n', &src[i..]).map_or(n, |k| i + k);
                continue;
            }
            b'/' if i + 1 < n && src[i + 1] == b'*' => {
                // Past the `*/`, or past the end when it is missing.
                i = comment_close(src, i + 2).map_or(n, |k| k + 2);
                continue;
            }
            b'"' => {
                i += 1;
                while i < n && src[i] != b'"' && src[i] != b'\n' {
                    i += if src[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                continue;
            }
            b'@' if braces == 0 && parens == 0 && i + 1 < n && src[i + 1] == b'@' => {
                // A PTX 1.x `@@DWARF` line is an item of its own.
                items.push(i);
                if stop(i) {
                    return items;
                }
                while i < n && src[i] != b'\n' {
                    i += 1;
                }
                open = Open::None;
                is_func_item = false;
                last_word_linkage = false;
                continue;
            }
            b'{' => {
                if braces == 0 && parens == 0 && (open == Open::FuncHeader || is_func_item || open == Open::Other && section_pending(src, items.last().copied(), i)) {
                    open = Open::Braced;
                }
                braces += 1;
            }
            b'}' => {
                braces -= 1;
                if braces <= 0 {
                    braces = 0;
                    if open == Open::Braced && parens == 0 {
                        open = Open::None;
                        is_func_item = false;
                    }
                }
            }
            b'(' => parens += 1,
            b')' => parens = (parens - 1).max(0),
            b'=' if braces == 0 && parens == 0 && open == Open::Other => in_init = true,
            b';' if braces == 0 && parens == 0 => {
                in_init = false;
                if open == Open::FuncHeader && after_directive {
                    after_directive = false;
                } else if open != Open::Braced {
                    open = Open::None;
                    is_func_item = false;
                }
            }
            b'.' if braces == 0 && parens == 0 && !in_init && dot_starts_token(src, i) => {
                let s = i;
                i += 1;
                while i < n && is_word_byte(src[i]) {
                    i += 1;
                }
                let word = &src[s..i];
                if starts_item(word) {
                    let continues = last_word_linkage || (word == b".pragma" && open == Open::FuncHeader);
                    if !continues {
                        items.push(s);
                        if stop(s) {
                            return items;
                        }
                        is_func_item = false;
                        open = Open::Other;
                        after_directive = false;
                    }
                    if word == b".entry" || word == b".func" {
                        open = Open::FuncHeader;
                        is_func_item = true;
                    }
                }
                if open == Open::FuncHeader && !starts_item(word) || word == b".pragma" {
                    after_directive = open == Open::FuncHeader;
                }
                last_word_linkage = is_linkage(word);
                continue;
            }
            c if c.is_ascii_whitespace() => {}
            _ => {
                if braces == 0 && parens == 0 && is_word_byte(c) {
                    // An identifier or number at depth 0 breaks a linkage chain.
                    last_word_linkage = false;
                    // An identifier (the function's name) is no directive argument.
                    if !c.is_ascii_digit() && (i == 0 || !is_word_byte(src[i - 1])) {
                        after_directive = false;
                    }
                }
            }
        }
        i += 1;
    }
    items
}

/// Does the `.` at `i` start a token, as the lexer reads it? Always after
/// a non-word byte or an identifier (`sm_80.entry` is `sm_80` `.entry`);
/// after a decimal number, unless it continues the number (`1.5`, `1.e3`).
fn dot_starts_token(src: &[u8], i: usize) -> bool {
    let mut j = i;
    while j > 0 && is_word_byte(src[j - 1]) {
        j -= 1;
    }
    let run = &src[j..i];
    if run.is_empty() || !run[0].is_ascii_digit() {
        return true;
    }
    let prefixed = run.len() > 1 && run[0] == b'0' && matches!(run[1], b'x' | b'X' | b'b' | b'B' | b'f' | b'F' | b'd' | b'D');
    if prefixed || !run.iter().all(u8::is_ascii_digit) {
        return true;
    }
    let next = src.get(i + 1).copied().unwrap_or(0);
    next.is_ascii_alphabetic() && next != b'e' && next != b'E'
}

/// Is the open item a `.section` (whose `{` opens its data)?
fn section_pending(src: &[u8], item_start: Option<usize>, _at: usize) -> bool {
    item_start.is_some_and(|s| src[s..].starts_with(b".section"))
}

/// Where the initializer starting at `i` ends: the `,` or `;` after it at
/// bracket depth 0. `None` when a comment or a string is in the way (the
/// lexer then reads it) or brackets do not match.
fn plain_initializer_end(text: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0u32;
    while let Some(&c) = text.get(i) {
        match c {
            b'{' | b'(' | b'[' => depth += 1,
            b'}' | b')' | b']' => depth = depth.checked_sub(1)?,
            b',' | b';' if depth == 0 => return Some(i),
            b'/' | b'"' => return None,
            _ => {}
        }
        i += 1;
    }
    None
}

/// The module-level names an item's text declares (functions, variables, aliases).
pub fn item_names(text: &[u8]) -> Vec<(Box<str>, GlobalKind)> {
    let Ok(mut lx) = Lexer::new(text) else { return Vec::new() };
    let word = |t: crate::lexer::Token| std::str::from_utf8(&text[t.span.start as usize..t.span.end as usize]).unwrap_or("");
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut kind = None;
    let mut expect_name = false;
    let mut after_alias = false;
    while let Some(t) = lx.next_valid() {
        // An initializer names nothing: skip it without tokens when it is
        // plain (no comment or string in it).
        if t.kind == TokenKind::Eq && depth == 0 && kind == Some(GlobalKind::Var) {
            if let Some(end) = plain_initializer_end(text, t.span.end as usize) {
                lx.set_pos(end);
                expect_name = false;
                continue;
            }
        }
        match t.kind {
            TokenKind::Eof => break,
            TokenKind::Semi if depth == 0 => break,
            TokenKind::LBrace if depth == 0 && kind == Some(GlobalKind::Func) => break,
            // A list of integers names nothing: skip it without tokens.
            TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace | TokenKind::Lt => depth += 1,
            TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace | TokenKind::Gt => depth -= 1,
            TokenKind::Eq if depth == 0 => expect_name = false,
            TokenKind::Comma if depth == 0 && kind == Some(GlobalKind::Var) => expect_name = true,
            TokenKind::DotWord if depth == 0 => match word(t) {
                ".entry" | ".func" => {
                    kind = Some(GlobalKind::Func);
                    expect_name = true;
                }
                ".alias" => {
                    kind = Some(GlobalKind::Func);
                    after_alias = true;
                    expect_name = true;
                }
                ".global" | ".const" | ".shared" | ".local" | ".tex" | ".reg" | ".param" | ".sreg" if kind.is_none() => {
                    kind = Some(GlobalKind::Var);
                    expect_name = true;
                }
                ".file" | ".section" | ".pragma" | ".target" if kind.is_none() => return out,
                _ => {}
            },
            TokenKind::Ident if depth == 0 && expect_name => {
                out.push((word(t).into(), kind.unwrap_or(GlobalKind::Var)));
                expect_name = false;
                if kind == Some(GlobalKind::Func) || after_alias {
                    break;
                }
            }
            _ => {}
        }
    }
    out
}
