//! Module structure: the `.version`/`.target`/`.address_size` header and the
//! module-level directives (PTX ISA chapter 11).

use super::cursor::{GlobalKind, PResult, Parser};
use super::decl::{decl_space, DeclCtx};
use super::{Header, HeaderSpans, ItemSpans, SourceMap};
use crate::ir::{FileDecl, GlobalVar, Item, Linkage, Module, Name, Section, SectionEntry, Version};
use crate::lexer::TokenKind;
use crate::source::Span;

impl<'a> Parser<'a> {
    pub fn module(&mut self) -> PResult<(Module, SourceMap)> {
        let header = self.header()?;
        // A function may refer to a name declared after it: those are found
        // from here (`Parser::is_global`).
        self.items_from = Some(self.peek().span.start as usize);
        let mut module = Module { version: header.version, target: header.target, address_size: header.address_size, items: Vec::new() };
        let mut map = SourceMap { header: header.spans, ..SourceMap::default() };
        self.items_to_end(&mut module.items, &mut map)?;
        Ok((module, map))
    }

    /// Every item up to the end of the text, with its positions.
    pub fn items_to_end(&mut self, items: &mut Vec<Item>, map: &mut SourceMap) -> PResult<()> {
        while !self.at(TokenKind::Eof) {
            let (item, spans) = self.spanned_item()?;
            map.push(spans);
            items.push(item);
        }
        Ok(())
    }

    /// `.version`, `.target` and `.address_size`.
    pub fn header(&mut self) -> PResult<Header> {
        if !self.at_dot(".version") {
            return self.expected("`.version` (every PTX module starts with it)");
        }
        self.bump();
        let mut spans = HeaderSpans { version: self.peek().span, ..HeaderSpans::default() };
        let version = self.version()?;
        let mut target = None;
        let mut address_size = None;
        loop {
            if self.at_dot(".target") && target.is_none() {
                spans.target = self.bump().span;
                let (list, names) = self.target_list()?;
                target = Some(list);
                spans.target_names = names;
            } else if self.at_dot(".address_size") && address_size.is_none() {
                spans.address_size = Some(self.bump().span);
                let t = self.peek();
                let n = self.expect_u32("an address size (32 or 64)")?;
                if n != 32 && n != 64 {
                    return self.error_at(t.span, format!("found address size {n}, expected 32 or 64"));
                }
                address_size = Some(n);
            } else {
                break;
            }
        }
        let Some(target) = target else {
            return self.expected("`.target` after `.version`");
        };
        Ok(Header { version, target, address_size, spans })
    }

    /// One item with its positions; undefined labels are reported here.
    pub fn spanned_item(&mut self) -> PResult<(Item, ItemSpans)> {
        let start = self.mark();
        let (item, stmts) = self.item()?;
        let spans = ItemSpans {
            item: self.span_from(start),
            stmts,
            params: std::mem::take(&mut self.param_spans),
            header: std::mem::take(&mut self.header_end),
        };
        self.check_undefined_labels()?;
        Ok((item, spans))
    }

    fn version(&mut self) -> PResult<Version> {
        let t = self.peek();
        let text = self.text(t);
        let parsed = if t.kind == TokenKind::Float {
            text.split_once('.').and_then(|(a, b)| Some(Version { major: a.parse().ok()?, minor: b.parse().ok()? }))
        } else {
            None
        };
        match parsed {
            Some(v) => {
                self.bump();
                Ok(v)
            }
            None => self.expected("a version `major.minor`"),
        }
    }

    /// A `.target` list: the names and where each is.
    fn target_list(&mut self) -> PResult<(Vec<Name>, Vec<Span>)> {
        let mut list = Vec::new();
        let mut spans = Vec::new();
        loop {
            let (t, name) = self.expect_ident("a target (`sm_80`, `texmode_independent`, `debug` ...)")?;
            list.push(name.into());
            spans.push(t.span);
            if !self.eat(TokenKind::Comma) {
                break;
            }
        }
        Ok((list, spans))
    }

    /// At a `@@DWARF` line?
    pub fn at_dwarf_line(&self) -> bool {
        let (t, w) = (self.peek(), self.peek_at(2));
        t.kind == TokenKind::At && self.peek_at(1).kind == TokenKind::At && self.peek_at(1).glued && w.glued && w.kind == TokenKind::Ident && self.text(w).eq_ignore_ascii_case("dwarf")
    }

    fn item(&mut self) -> PResult<(Item, Vec<Span>)> {
        let t = self.peek();
        if self.at_dwarf_line() {
            self.bump();
            self.bump();
            self.bump();
            let text = self.raw_rest_of_line()?;
            return Ok((Item::Dwarf(text.into()), Vec::new()));
        }
        if t.kind != TokenKind::DotWord {
            return self.expected("a directive (`.entry`, `.func`, `.global` ...)");
        }
        let w = self.text(t);
        let none = Vec::new();
        match w {
            ".target" => {
                self.bump();
                let (list, names) = self.target_list()?;
                Ok((Item::Target(list), names))
            }
            ".file" => {
                self.bump();
                Ok((Item::File(self.file_decl()?), none))
            }
            ".section" => {
                self.bump();
                Ok((Item::Section(self.section()?), none))
            }
            ".pragma" => {
                self.bump();
                Ok((Item::Pragma(self.pragma_strings()?), none))
            }
            ".alias" => {
                self.bump();
                let (_, a) = self.expect_ident("the alias name")?;
                self.expect(TokenKind::Comma, "`,` after the alias name")?;
                let (_, b) = self.expect_ident("the aliased function name")?;
                self.expect(TokenKind::Semi, "`;` after .alias")?;
                self.globals.insert(a.into(), GlobalKind::Func);
                Ok((Item::Alias { alias: a.into(), aliasee: b.into() }, none))
            }
            ".version" | ".address_size" => self.error_at(t.span, format!("`{w}` may appear only once, at the start of the module")),
            ".extern" | ".visible" | ".weak" | ".common" => {
                self.bump();
                let linkage = match w {
                    ".extern" => Linkage::Extern,
                    ".visible" => Linkage::Visible,
                    ".weak" => Linkage::Weak,
                    _ => Linkage::Common,
                };
                self.linked_item(Some(linkage))
            }
            _ => self.linked_item(None),
        }
    }

    fn linked_item(&mut self, linkage: Option<Linkage>) -> PResult<(Item, Vec<Span>)> {
        let t = self.peek();
        let w = if t.kind == TokenKind::DotWord { self.text(t) } else { "" };
        match w {
            ".entry" | ".func" => {
                let (f, spans) = self.function(linkage)?;
                Ok((Item::Func(Box::new(f)), spans))
            }
            _ if decl_space(w).is_some() => {
                let decl = self.var_decl(DeclCtx::Module)?;
                Ok((Item::Var(GlobalVar { linkage, decl }), Vec::new()))
            }
            _ => self.expected("a directive (`.entry`, `.func`, `.global`, `.const`, `.shared` ...)"),
        }
    }

    fn file_decl(&mut self) -> PResult<FileDecl> {
        let index = self.expect_u32("a file index")?;
        let t = self.expect(TokenKind::String, "a file name string")?;
        let name = self.text(t).into();
        let mut f = FileDecl { index, name, timestamp: None, size: None };
        if self.eat(TokenKind::Comma) {
            f.timestamp = Some(self.expect_u64("a timestamp")?);
            if self.eat(TokenKind::Comma) {
                f.size = Some(self.expect_u64("a file size")?);
            }
        }
        Ok(f)
    }

    /// `.pragma "a", "b";` (after the directive word).
    pub fn pragma_strings(&mut self) -> PResult<Vec<Name>> {
        let mut v = Vec::new();
        loop {
            let t = self.expect(TokenKind::String, "a pragma string")?;
            v.push(self.text(t).into());
            if !self.eat(TokenKind::Comma) {
                break;
            }
        }
        self.expect(TokenKind::Semi, "`;` after .pragma")?;
        Ok(v)
    }

    fn section(&mut self) -> PResult<Section> {
        let t = self.peek();
        let name: Name = match t.kind {
            TokenKind::DotWord | TokenKind::Ident => {
                self.bump();
                self.text(t).into()
            }
            _ => return self.expected("a section name (`.debug_info` ...)"),
        };
        self.expect(TokenKind::LBrace, "`{` opening the section")?;
        let mut entries = Vec::new();
        loop {
            let t = self.peek();
            match t.kind {
                TokenKind::RBrace => {
                    self.bump();
                    break;
                }
                TokenKind::Ident if self.peek_at(1).kind == TokenKind::Colon => {
                    self.bump();
                    self.bump();
                    entries.push(SectionEntry::Label(self.text(t).into()));
                    // Old producers end a label line with `;`.
                    self.eat(TokenKind::Semi);
                }
                TokenKind::DotWord => {
                    let width = match self.text(t) {
                        ".b8" => 8,
                        ".b16" => 16,
                        ".b32" => 32,
                        ".b64" => 64,
                        _ => return self.expected("`.b8`, `.b16`, `.b32`, `.b64`, a label or `}` in a section"),
                    };
                    self.bump();
                    let mut values = Vec::new();
                    loop {
                        let at = self.mark();
                        let v = self.const_expr()?;
                        // ptxas: "Parsing error" for `11 / DW_FORM_data1` and the like.
                        if !section_value_ok(&v) {
                            return self.error_at(self.span_from(at), "found a label or symbol used in arithmetic, expected a number, `label`, `label+offset` or `label-label`");
                        }
                        // ptxas: "Illegal type for dwarf data" for an address in
                        // .b8/.b16 data, "Value out of range for type" for numbers.
                        if width < 32 && section_value_is_address(&v) {
                            return self.error_at(self.span_from(at), format!("found an address in .b{width} data, expected a number (labels need .b32 or .b64)"));
                        }
                        if let crate::ir::ConstExpr::Int(lit) = &v {
                            let signed = lit.value as i64;
                            let fits = width >= 64 || (signed >= -(1i64 << (width - 1)) && (signed as u64) < (1u64 << width)) || (lit.value >> width) == 0;
                            if !fits {
                                let sp = self.span_from(at);
                                let written = std::str::from_utf8(&self.src[sp.start as usize..sp.end as usize]).unwrap_or("?").to_string();
                                return self.error_at(sp, format!("found {written}, expected a value that fits .b{width}"));
                            }
                        }
                        values.push(v);
                        if !self.eat(TokenKind::Comma) {
                            break;
                        }
                    }
                    self.eat(TokenKind::Semi);
                    entries.push(SectionEntry::Data { width, values });
                }
                _ => return self.expected("`.b8`, `.b16`, `.b32`, `.b64`, a label or `}` in a section"),
            }
        }
        Ok(Section { name, entries })
    }

    /// Labels used but never defined: an error at their first use.
    fn check_undefined_labels(&mut self) -> PResult<()> {
        match std::mem::take(&mut self.pending_names).into_iter().next() {
            Some((span, msg)) => self.error_at(span, msg),
            None => Ok(()),
        }
    }
}

/// Does a value of section data stand for an address (`sym`, `sym+4`)?
fn section_value_is_address(e: &crate::ir::ConstExpr) -> bool {
    use crate::ir::{BinOp, ConstExpr};
    match e {
        ConstExpr::Sym(_) => true,
        ConstExpr::Binary(BinOp::Add, a, b) => section_value_is_address(a) != section_value_is_address(b),
        ConstExpr::Binary(BinOp::Sub, a, b) => section_value_is_address(a) && !section_value_is_address(b),
        _ => false,
    }
}

/// A value of section data: a number, an address (`sym`, `sym+c`, `sym-c`,
/// `c+sym`) or a difference of two addresses (`$L__end-$L__begin`).
fn section_value_ok(e: &crate::ir::ConstExpr) -> bool {
    use crate::ir::{BinOp, ConstExpr};
    /// The number of addresses a value carries (0 or 1); `None`: not a value ptxas takes.
    fn addresses(e: &ConstExpr) -> Option<u8> {
        match e {
            ConstExpr::Int(_) | ConstExpr::Float(_) => Some(0),
            ConstExpr::Sym(_) => Some(1),
            ConstExpr::Binary(BinOp::Add, a, b) => match (addresses(a)?, addresses(b)?) {
                (x, y) if x + y <= 1 => Some(x + y),
                _ => None,
            },
            ConstExpr::Binary(BinOp::Sub, a, b) => match (addresses(a)?, addresses(b)?) {
                (1, 1) => Some(0),
                (x, 0) => Some(x),
                _ => None,
            },
            ConstExpr::Generic(x) | ConstExpr::Mask(_, x) | ConstExpr::Cast(_, x) => addresses(x),
            ConstExpr::Binary(_, a, b) => (addresses(a)? == 0 && addresses(b)? == 0).then_some(0),
            ConstExpr::Unary(_, x) => (addresses(x)? == 0).then_some(0),
            ConstExpr::Cond(a, b, c) => (addresses(a)? == 0 && addresses(b)? == 0 && addresses(c)? == 0).then_some(0),
        }
    }
    addresses(e).is_some()
}
