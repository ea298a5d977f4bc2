//! Instruction statements (PTX ISA §4.3.2, §6): guard, opcode and modifiers
//! matched against the ISA tables, and operands resolved to registers,
//! special registers, variables, labels and immediates.

use super::cursor::{Head, PResult, Parser};
use super::expr::to_imm;
use super::scope::{Binding, Key};
use crate::ir::{Address, AddrBase, ArrayElem, Guard, Imm, Instruction, Operand, Operands, PairPred, Prefix, RegId, RegOperand, Selector, SpecialReg};
use crate::isa::{match_form, Mismatch, Mod, Opcode, SlotMods};
use crate::isa::matcher::ParsedKind;
use crate::lexer::{Token, TokenKind};
use crate::source::Span;
use smallvec::SmallVec;

/// Most operands an instruction may have (wgmma has about 140 in vectors; this counts top-level ones).
const MAX_OPERANDS: usize = 64;
/// Deepest nesting of vectors and lists in an operand.
const MAX_OPERAND_DEPTH: u32 = 8;

impl<'a> Parser<'a> {
    /// An instruction statement, boxed here: built in place, not built
    /// and then copied into the box (120 bytes an instruction; renderer
    /// -O0 parse 204.1 -> 201.4 M host instructions, non-LTO build).
    pub fn instruction(&mut self) -> PResult<Box<Instruction>> {
        let start = self.mark();
        let mut guard = None;
        if self.eat(TokenKind::At) {
            let negated = self.eat(TokenKind::Bang);
            let (t, name) = self.expect_ident("a predicate register after `@`")?;
            let reg = self.resolve_reg(name, t.span)?;
            guard = Some(Guard { reg, negated });
        }
        let (head, _) = self.expect_ident("an instruction")?;
        // The opcode and its modifiers: a word and the dot-words glued to
        // it, kept as the first and the last ([`Parser::head_parts`]).
        let mut last = head;
        while self.at(TokenKind::DotWord) && self.peek().glued {
            last = self.bump();
        }
        let whole_bytes = &self.src[head.span.start as usize..last.span.end as usize];
        debug_assert!(whole_bytes.is_ascii());
        // SAFETY: the parts are glued tokens (no byte between them), an
        // identifier and dot-words, which the lexer makes of ASCII bytes only.
        let whole_name: &'a str = unsafe { std::str::from_utf8_unchecked(whole_bytes) };
        // Real files repeat a few hundred instruction heads many times over.
        let head_key = Key::new(whole_name);
        let (opcode, used, head_id) = match self.heads.get(&head_key) {
            Some(h) => (h.opcode, h.used, h.id),
            None => {
                let Some((opcode, used)) = Opcode::longest_prefix(whole_name) else {
                    return self.error_at(head.span, format!("unknown instruction `{}`", self.text(head)));
                };
                let mut mods: SmallVec<[Mod; 8]> = SmallVec::new();
                for t in &self.head_parts(head, last)[used..] {
                    match Mod::from_text(self.text(*t)) {
                        Some(m) => mods.push(m),
                        None => return self.error_at(t.span, format!("`{}` is not a modifier of `{}`", self.text(*t), opcode.name())),
                    }
                }
                let id = self.heads.len() as u32;
                let filed = self.heads.insert_new(head_key, Head { opcode, used, mods, id });
                debug_assert!(filed.is_ok(), "a head filed twice");
                (opcode, used, id)
            }
        };
        // Operands.
        let mut operands: Operands = SmallVec::new();
        let mut spans: SmallVec<[Span; 4]> = SmallVec::new();
        if !self.at(TokenKind::Semi) {
            loop {
                if operands.len() >= MAX_OPERANDS {
                    return self.error_at(self.peek().span, format!("more than {MAX_OPERANDS} operands"));
                }
                let s = self.mark();
                operands.push(self.operand(opcode, 0)?);
                spans.push(self.span_from(s));
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
        }
        if !self.at(TokenKind::Semi) {
            return self.expected("`,` or `;` after an operand");
        }
        let end = self.bump();
        let key = kinds_key(&operands);
        if let Some(key) = key {
            if let Some((form, slot_mods)) = self.forms.get(&(head_id, key)) {
                // `from_slice` copies; `clone` would push the modifiers one by one.
                return Ok(Box::new(Instruction { guard, opcode, form: *form, mods: SlotMods::from_slice(slot_mods), operands }));
            }
        }
        let whole = start.to(end.span);
        let kinds: SmallVec<[ParsedKind; 4]> = operands.iter().map(Operand::parsed_kind).collect();
        let Some(Head { mods, .. }) = self.heads.get(&head_key) else { unreachable!("the head is filed above") };
        match match_form(opcode, mods, &kinds) {
            Ok((form, slot_mods)) => {
                if let Some(key) = key {
                    self.forms.insert((head_id, key), (form, SlotMods::from_slice(&slot_mods)));
                }
                Ok(Box::new(Instruction { guard, opcode, form, mods: slot_mods, operands }))
            }
            Err(e) => {
                // The message names the head as written: modifiers are
                // tokens glued to the opcode, so their texts are the written text.
                let at = match e.reason {
                    Mismatch::UnknownModifier(k) => self.head_parts(head, last).get(used + k).map_or(head.span, |t| t.span),
                    Mismatch::NoForm => head.span,
                    Mismatch::OperandCount { .. } => whole,
                    Mismatch::OperandKind { index, .. } => spans[index],
                };
                self.error_at(at, e.to_string())
            }
        }
    }

    /// The tokens of the instruction head from `head` to `last` (the word
    /// and the dot-words glued to it), lexed again: only a head not seen
    /// before and an error need them, so reading a head keeps only its
    /// first and last token, not every part pushed into a vector
    /// (renderer: 71,040 heads, 72 of them new; with the lexer's one-test
    /// `glued` and `::` check, its -O0 parse 225.2 -> 219.2 M host
    /// instructions, non-LTO build). The lexer reads them as it did,
    /// starting at the head's word.
    #[cold]
    fn head_parts(&self, head: Token, last: Token) -> SmallVec<[Token; 12]> {
        let mut lexer = self.lexer_at(head.span.start as usize);
        let mut parts: SmallVec<[Token; 12]> = SmallVec::new();
        loop {
            let t = lexer.next_token();
            if matches!(t.kind, TokenKind::Eof | TokenKind::Error) || t.span.start >= last.span.end {
                break;
            }
            parts.push(t);
        }
        debug_assert_eq!(parts.first().map(|t| t.span), Some(head.span));
        debug_assert_eq!(parts.last().map(|t| t.span), Some(last.span));
        parts
    }

    /// Resolves a name that must be a register (guards, pairs).
    fn resolve_reg(&mut self, name: &'a str, span: Span) -> PResult<RegId> {
        match self.func.as_mut().unwrap().lookup(name) {
            Some(Binding::Reg(r)) => Ok(r),
            Some(Binding::Var) => self.error_at(span, format!("`{name}` is a variable, expected a register")),
            Some(Binding::Label { .. }) => self.error_at(span, format!("`{name}` is a label, expected a register")),
            None => self.error_at(span, format!("`{name}` is not a declared register")),
        }
    }

    /// A selector glued to the operand before it (`%r1.x`, `%r2.b0`).
    /// Inlined, so that the common case (none follows) costs a test, not a
    /// call (renderer: 148,754 calls, 22 host instructions each).
    #[inline]
    fn selector(&mut self) -> Option<Selector> {
        let t = self.peek();
        if t.kind == TokenKind::DotWord && t.glued {
            return self.glued_selector(t);
        }
        None
    }

    /// [`Parser::selector`] at the glued dot-word `t`.
    #[inline(never)]
    fn glued_selector(&mut self, t: Token) -> Option<Selector> {
        let s = Selector::from_text(self.text(t))?;
        self.bump();
        Some(s)
    }

    /// An operand, possibly with a predicate result: `p|q`, `{a,b}|p`, `_|p`.
    /// Inlined, so that a lone register ([`Parser::lone_register`]) costs
    /// no call (renderer -O0 parse 204.6 -> 204.1 M host instructions,
    /// non-LTO build).
    #[inline]
    fn operand(&mut self, opcode: Opcode, depth: u32) -> PResult<Operand> {
        match self.lone_register(depth) {
            Some(reg) => Ok(Operand::reg(reg)),
            None => self.general_operand(opcode, depth),
        }
    }

    /// [`Parser::operand`] past its fast path.
    #[inline(never)]
    fn general_operand(&mut self, opcode: Opcode, depth: u32) -> PResult<Operand> {
        let first = self.single_operand(opcode, depth)?;
        if self.at(TokenKind::Pipe) && matches!(first, Operand::Reg(_) | Operand::Vector(_) | Operand::Sink) {
            self.bump();
            let (qt, q) = self.expect_ident("a predicate after `|`")?;
            let q = if q == "_" { PairPred::Sink } else { PairPred::Reg(self.resolve_reg(q, qt.span)?) };
            return Ok(Operand::Pair(Box::new(first), q));
        }
        Ok(first)
    }

    fn single_operand(&mut self, opcode: Opcode, depth: u32) -> PResult<Operand> {
        if depth > MAX_OPERAND_DEPTH {
            return self.error_at(self.peek().span, "operands nested too deeply");
        }
        let t = self.peek();
        if let Some(imm) = self.lone_literal(t) {
            self.bump();
            return Ok(Operand::Imm(imm));
        }
        match t.kind {
            TokenKind::LBrace => {
                self.bump();
                let v = self.operands_until(TokenKind::RBrace, "`,` or `}` in a vector operand", opcode, depth)?;
                Ok(Operand::Vector(v))
            }
            TokenKind::LBracket => self.address(opcode, depth),
            TokenKind::LParen if opcode == Opcode::CALL => {
                self.bump();
                let v = self.operands_until(TokenKind::RParen, "`,` or `)` in an argument list", opcode, depth)?;
                Ok(Operand::List(v))
            }
            TokenKind::Bang if self.peek_at(1).kind == TokenKind::Ident => {
                self.bump();
                let (nt, name) = self.expect_ident("a predicate")?;
                let reg = self.resolve_reg(name, nt.span)?;
                Ok(Operand::Reg(RegOperand { reg, prefix: Prefix::Not, sel: None }))
            }
            TokenKind::Minus if self.peek_at(1).kind == TokenKind::Ident && self.is_reg_name(self.peek_at(1)) => {
                self.bump();
                let (nt, name) = self.expect_ident("a register")?;
                let reg = self.resolve_reg(name, nt.span)?;
                let sel = self.selector();
                Ok(Operand::Reg(RegOperand { reg, prefix: Prefix::Neg, sel }))
            }
            TokenKind::Ident if !self.is_constant_name(t) => self.name_operand(opcode, depth),
            _ => {
                let e = self.const_expr()?;
                match to_imm(&e) {
                    Ok(i) => Ok(Operand::Imm(i)),
                    Err(m) => self.error_at(t.span, m),
                }
            }
        }
    }

    /// The operands of a vector `{a, b}` or an argument list `(a, b)` after
    /// its opening bracket, to the `close` one (`what` is expected
    /// otherwise). Gathered in place and allocated once at their number:
    /// a vector grew by reallocating then shrank to fit (renderer, 5,237
    /// lists: 1.2 M host instructions).
    fn operands_until(&mut self, close: TokenKind, what: &str, opcode: Opcode, depth: u32) -> PResult<Box<[Operand]>> {
        let mut v: SmallVec<[Operand; 4]> = SmallVec::new();
        if !self.at(close) {
            loop {
                v.push(self.operand(opcode, depth + 1)?);
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
        }
        self.expect(close, what)?;
        Ok(v.into_boxed_slice())
    }

    /// `WARP_SZ` is a constant unless the function declares that name.
    /// Inlined, and the name's length tested first: asked of every name
    /// operand (renderer: 161,035 calls, 20 host instructions each).
    #[inline]
    fn is_constant_name(&mut self, t: Token) -> bool {
        (t.span.end - t.span.start) as usize == "WARP_SZ".len() && self.text(t) == "WARP_SZ" && self.warp_sz_is_constant()
    }

    /// Whether no name `WARP_SZ` is declared where the parser is.
    #[inline(never)]
    fn warp_sz_is_constant(&mut self) -> bool {
        self.func.as_mut().is_none_or(|f| f.lookup("WARP_SZ").is_none())
    }

    fn is_reg_name(&mut self, t: Token) -> bool {
        let name = self.text(t);
        matches!(self.func.as_mut().unwrap().lookup(name), Some(Binding::Reg(_)))
    }

    /// An operand that starts with a name: register (with selector or `|q`),
    /// special register, variable or function (with `+offset` or `[index]`), label, `_`.
    fn name_operand(&mut self, opcode: Opcode, depth: u32) -> PResult<Operand> {
        let (t, name) = self.expect_ident("an operand")?;
        if name == "_" {
            return Ok(Operand::Sink);
        }
        let binding = self.func.as_mut().unwrap().lookup(name);
        match binding {
            Some(Binding::Reg(reg)) => {
                let sel = self.selector();
                if sel.is_none() && matches!(self.kind(), TokenKind::Plus | TokenKind::Minus) {
                    let off = self.offset()?;
                    return Ok(Operand::RegOffset(reg, off));
                }
                Ok(Operand::Reg(RegOperand { reg, prefix: Prefix::None, sel }))
            }
            Some(Binding::Var) => self.symbol_operand(name, opcode, depth),
            Some(Binding::Label { .. }) => {
                let f = self.func.as_mut().unwrap();
                Ok(Operand::Label(f.use_label(name, t.span, binding)))
            }
            None => {
                if let Some(sr) = SpecialReg::from_name(name) {
                    let sel = self.selector();
                    return Ok(Operand::SReg(sr, sel));
                }
                // Branch targets are labels even when a module symbol has the same name.
                if !opcode.flags().contains(crate::isa::Flags::BRANCH) && self.is_global(name) {
                    return self.symbol_operand(name, opcode, depth);
                }
                let f = self.func.as_mut().unwrap();
                Ok(Operand::Label(f.use_label(name, t.span, None)))
            }
        }
    }

    fn symbol_operand(&mut self, name: &'a str, opcode: Opcode, depth: u32) -> PResult<Operand> {
        if self.at(TokenKind::LBracket) {
            self.bump();
            let index = self.operand(opcode, depth + 1)?;
            let index = self.maybe_offset(index)?;
            self.expect(TokenKind::RBracket, "`]` closing an array index")?;
            return Ok(Operand::ArrayElem(Box::new(ArrayElem { name: name.into(), index })));
        }
        let off = self.offset()?;
        Ok(Operand::sym(name.into(), off))
    }

    /// The fast path for the commonest operand, a register named with a
    /// `%` that the next token ends (`,`, `;`): its register, as
    /// [`Parser::single_operand`] and [`Parser::operand`] give it (no
    /// selector, offset or `|q` can follow), consumed. `None`, nothing
    /// consumed, for anything else, which the general path reads (a name
    /// that is no register is looked up again there; looking up a name
    /// changes nothing unless it is a register). Renderer: 143,000 of its
    /// 180,000 operands; its -O0 parse 211.1 -> 204.6 M host instructions
    /// (non-LTO build).
    #[inline]
    fn lone_register(&mut self, depth: u32) -> Option<RegId> {
        let t = self.peek();
        if t.kind != TokenKind::Ident || !self.fast_paths || depth > MAX_OPERAND_DEPTH {
            return None;
        }
        if !matches!(self.peek_at(1).kind, TokenKind::Comma | TokenKind::Semi) {
            return None;
        }
        // Register names start with `%` (by convention; the test is for
        // speed only: a name that is no register is looked up twice); `_`
        // (the sink) and `WARP_SZ` (a constant while no name of the
        // function is it) do not.
        let name = self.text(t);
        if !name.starts_with('%') {
            return None;
        }
        let Some(Binding::Reg(reg)) = self.func.as_mut()?.lookup(name) else { return None };
        self.bump();
        Some(reg)
    }

    /// The fast path for the commonest constant expression, a lone literal
    /// `t` that the next token ends (`,`, `;`, `}`, `]`, `)`): its
    /// immediate, as [`to_imm`] gives it for the expression. `None` for
    /// anything else, and for a literal that does not fit (the general
    /// path reports it).
    #[inline]
    fn lone_literal(&self, t: Token) -> Option<Imm> {
        if !matches!(t.kind, TokenKind::Int | TokenKind::Float | TokenKind::HexF32 | TokenKind::HexF64) || !self.fast_paths {
            return None;
        }
        if !matches!(self.peek_at(1).kind, TokenKind::Comma | TokenKind::Semi | TokenKind::RBrace | TokenKind::RBracket | TokenKind::RParen) {
            return None;
        }
        self.literal_imm(t)
    }

    /// The literal token `t` as an immediate; `None` for another token and
    /// for a literal that does not fit.
    pub(super) fn literal_imm(&self, t: Token) -> Option<Imm> {
        match t.kind {
            TokenKind::Int => super::expr::int_literal(self.text(t)).map(Imm::Int),
            TokenKind::Float | TokenKind::HexF32 | TokenKind::HexF64 => super::expr::float_literal(t.kind, self.text(t)).map(Imm::Float),
            _ => None,
        }
    }

    /// `reg+imm` inside an array index.
    fn maybe_offset(&mut self, index: Operand) -> PResult<Operand> {
        if let Operand::Reg(r) = &index {
            let off = self.offset()?;
            if off != 0 {
                return Ok(Operand::Addr(Box::new(Address { base: AddrBase::Reg(r.reg), offset: off, unified: false, zero_written: false })));
            }
        }
        Ok(index)
    }

    /// An optional `+expr` / `-expr` byte offset.
    fn offset(&mut self) -> PResult<i64> {
        let neg = match self.kind() {
            TokenKind::Plus => false,
            TokenKind::Minus => true,
            _ => return Ok(0),
        };
        self.bump();
        let t = self.peek();
        if let Some(Imm::Int(l)) = self.lone_literal(t) {
            self.bump();
            let v = l.value as i64;
            return Ok(if neg { v.wrapping_neg() } else { v });
        }
        let e = self.offset_expr()?;
        match super::expr::eval_int(&e) {
            Ok(v) => Ok(if neg { v.wrapping_neg() } else { v }),
            Err(m) => self.error_at(t.span, m),
        }
    }

    /// The expression after `+` in an address: a unary expression and any
    /// further `+`/`-` terms (`[r+4+8]`, `[r+-4]`).
    fn offset_expr(&mut self) -> PResult<crate::ir::ConstExpr> {
        self.const_expr()
    }

    fn address(&mut self, opcode: Opcode, depth: u32) -> PResult<Operand> {
        let open = self.bump();
        // `[a, b, ...]`: texture and surface operands.
        let first_start = self.mark();
        let first = self.address_base(opcode, depth)?;
        if self.at(TokenKind::Comma) {
            let mut items: SmallVec<[Operand; 4]> = smallvec::smallvec![match first {
                (Some(base), 0, false) => match base {
                    AddrBase::Reg(r) => Operand::reg(r),
                    AddrBase::Sym(s) => Operand::sym(s, 0),
                    AddrBase::Imm(i) => Operand::Imm(Imm::Int(crate::ir::IntLit::dec(i as i64))),
                },
                _ => return self.error_at(self.span_from(first_start), "found an offset address, expected a texture or surface name"),
            }];
            while self.eat(TokenKind::Comma) {
                items.push(self.operand(opcode, depth + 1)?);
            }
            self.expect(TokenKind::RBracket, "`]` closing the operand list")?;
            return Ok(Operand::AddrList(items.into_boxed_slice()));
        }
        self.expect(TokenKind::RBracket, "`]` closing an address")?;
        let (base, offset, zero_written) = first;
        let Some(base) = base else {
            return self.error_at(open.span, "empty address");
        };
        let unified = if self.at_dot(".unified") && self.peek().glued {
            self.bump();
            true
        } else {
            false
        };
        Ok(Operand::Addr(Box::new(Address { base, offset, unified, zero_written })))
    }

    /// Inside `[...]`: a register or variable with an optional offset, or an absolute address.
    /// Returns the base, the offset, and whether an offset was written although zero.
    fn address_base(&mut self, opcode: Opcode, depth: u32) -> PResult<(Option<AddrBase>, i64, bool)> {
        let t = self.peek();
        if t.kind == TokenKind::Ident && !self.is_constant_name(t) {
            let name = self.text(t);
            let binding = self.func.as_mut().and_then(|f| f.lookup(name));
            let base = match binding {
                Some(Binding::Reg(r)) => {
                    self.bump();
                    AddrBase::Reg(r)
                }
                Some(Binding::Var) => {
                    self.bump();
                    AddrBase::Sym(name.into())
                }
                Some(Binding::Label { .. }) => {
                    return self.error_at(t.span, format!("`{name}` is a label here, expected a register or variable in an address"));
                }
                None if self.is_global(name) => {
                    self.bump();
                    AddrBase::Sym(name.into())
                }
                None => {
                    // Texture/sampler handles passed as parameters are variables too;
                    // anything else is an undeclared name.
                    return self.error_at(t.span, format!("`{name}` is not a declared register or variable"));
                }
            };
            // ptxas takes `[r+-4]` but not `[r-4]` ("Parsing error near '-'").
            if self.at(TokenKind::Minus) {
                return self.expected("`+` and the offset (a negative offset is written `[r+-4]`), or `]`");
            }
            let written = self.at(TokenKind::Plus);
            let off = self.offset()?;
            let _ = (opcode, depth);
            return Ok((Some(base), off, written && off == 0));
        }
        if matches!(t.kind, TokenKind::RBracket) {
            return Ok((None, 0, false));
        }
        let e = self.const_expr()?;
        match super::expr::eval_int(&e) {
            Ok(v) => Ok((Some(AddrBase::Imm(v as u64)), 0, false)),
            Err(m) => self.error_at(t.span, m),
        }
    }
}

/// The operand kinds of an instruction packed into one number, the key of
/// [`Parser::forms`] beside the head (a vector of kinds would be allocated
/// and copied for every instruction): two bits a kind and a leading 1 that
/// marks the count. `None` past 31 operands (then the form is matched anew).
pub(super) fn kinds_key(operands: &[Operand]) -> Option<u64> {
    if operands.len() > 31 {
        return None;
    }
    let mut key: u64 = 1;
    for o in operands {
        key = key << 2
            | match o.parsed_kind() {
                ParsedKind::Value => 0,
                ParsedKind::Address => 1,
                ParsedKind::List => 2,
                ParsedKind::Either => 3,
            };
    }
    Some(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{AddrBase, Address};

    #[test]
    fn kinds_keys_differ_by_kind_and_count() {
        let v = || Operand::reg(RegId(0));
        let a = || Operand::Addr(Box::new(Address { base: AddrBase::Reg(RegId(0)), offset: 0, unified: false, zero_written: false }));
        let keys = [kinds_key(&[]), kinds_key(&[v()]), kinds_key(&[v(), v()]), kinds_key(&[a(), v()]), kinds_key(&[v(), a()]), kinds_key(&[Operand::List(Box::new([]))])];
        for (i, x) in keys.iter().enumerate() {
            assert!(x.is_some());
            for y in &keys[i + 1..] {
                assert_ne!(x, y);
            }
        }
        assert_eq!(kinds_key(&vec![v(); 31]).map(|k| k >> 62), Some(1));
        assert_eq!(kinds_key(&vec![v(); 32]), None);
    }
}
