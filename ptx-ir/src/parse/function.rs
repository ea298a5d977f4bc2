//! Kernels and functions (PTX ISA §11.2–11.4): headers, parameters,
//! performance directives, and bodies with nested scopes, labels,
//! declarations, `.loc`, `.pragma` and control-flow directives.

use super::cursor::{GlobalKind, PResult, Parser};
use super::decl::{decl_space, DeclCtx};
use super::scope::{Binding, FuncState};
use crate::ir::{plain_decimal, FuncDirective, FuncKind, Function, LabelId, Linkage, Loc, Prototype, Stmt, Decl, VarDecl};
use crate::lexer::{Token, TokenKind};
use crate::source::Span;

/// Deepest nesting of `{ }` scopes accepted in a body.
pub const MAX_SCOPE_DEPTH: usize = 4096;

impl<'a> Parser<'a> {
    /// Parses `.entry`/`.func` at the current token.
    pub fn function(&mut self, linkage: Option<Linkage>) -> PResult<(Function, Vec<Span>)> {
        let kind = if self.eat_dot(".entry") {
            FuncKind::Entry
        } else {
            self.bump();
            FuncKind::Func
        };
        let func = FuncState::with_spare_tables(std::mem::take(&mut self.spare_tables));
        self.func = Some(if self.fast_paths { func } else { func.without_fast_paths() });
        let mut attributes = Vec::new();
        if self.at_dot(".attribute") {
            self.bump();
            attributes = self.func_attributes()?;
        }
        let mut ret = None;
        if kind == FuncKind::Func && self.at(TokenKind::LParen) {
            ret = Some(self.param_list(DeclCtx::Param)?);
        }
        let (_, name) = self.expect_ident(if kind == FuncKind::Entry { "the kernel name" } else { "the function name" })?;
        let name: crate::ir::Name = name.into();
        self.globals.insert(name.as_str().into(), GlobalKind::Func);
        let mut params = None;
        if self.at(TokenKind::LParen) {
            let first = self.param_spans.len();
            params = Some(self.param_list(DeclCtx::Param)?);
            // Keep only the spans of the parameters proper (not the return list).
            self.param_spans.drain(..first);
        } else {
            self.param_spans.clear();
        }
        self.header_end = self.prev_span();
        let directives = self.func_directives(true)?;
        let mut body = None;
        let mut spans = Vec::new();
        let mut patch = Vec::new();
        if self.eat(TokenKind::Semi) {
            // a declaration
        } else if self.at(TokenKind::LBrace) {
            self.bump();
            let (b, s, p) = self.body()?;
            body = Some(b);
            spans = s;
            patch = p;
        } else if kind == FuncKind::Entry || !(self.at(TokenKind::DotWord) || self.at(TokenKind::Eof) || self.at_dwarf_line()) {
            // Old producers (nvopencc) write `.func` declarations without `;`,
            // the next directive (or `@@DWARF` line) following directly;
            // ptxas accepts that for `.func` only.
            return self.expected("`{` opening the body or `;` ending a declaration");
        }
        let mut fs = self.func.take().unwrap();
        if let Some(body) = &mut body {
            match fs.resolve_labels() {
                Ok(ids) => resolve_refs(body, &patch, &ids),
                // Reported at the end of the item, after any other error.
                Err((span, name, elsewhere)) => {
                    let msg = match elsewhere {
                        Some(def) => {
                            let (l, c) = self.lines().line_col(def.start);
                            format!("label `{name}` is not defined in this block or an enclosing one (the label `{name}` at {l}:{c} is in a block that does not enclose this use)")
                        }
                        None => format!("`{name}` is not declared (no register, variable, function or label of that name)"),
                    };
                    self.pending_names.push((span, msg));
                }
            }
        }
        let regs = fs.take_regs();
        self.spare_tables = fs.take_spare_tables();
        let mut labels = fs.labels;
        // Growth leaves up to half of it unused: give it back, as for the body.
        labels.shrink_to_fit();
        let f = Function { linkage, kind, attributes, ret, name, params, directives, regs, labels, body, fresh: Default::default() };
        Ok((f, spans))
    }

    fn func_attributes(&mut self) -> PResult<Vec<crate::ir::Attribute>> {
        // Same syntax as variable attributes.
        self.expect(TokenKind::LParen, "`(` after .attribute")?;
        let mut out = Vec::new();
        loop {
            if self.eat_dot(".unified") {
                if self.eat(TokenKind::LParen) {
                    let a = self.expect_u64("a uuid")?;
                    self.expect(TokenKind::Comma, "`,`")?;
                    let b = self.expect_u64("a uuid")?;
                    self.expect(TokenKind::RParen, "`)`")?;
                    out.push(crate::ir::Attribute::Unified(Some((a, b))));
                } else {
                    out.push(crate::ir::Attribute::Unified(None));
                }
            } else if self.eat_dot(".managed") {
                out.push(crate::ir::Attribute::Managed);
            } else {
                return self.expected("`.unified` or `.managed`");
            }
            if !self.eat(TokenKind::Comma) {
                break;
            }
        }
        self.expect(TokenKind::RParen, "`)` closing .attribute")?;
        Ok(out)
    }

    /// `( .param .b32 a, .reg .u64 b )`.
    pub fn param_list(&mut self, ctx: DeclCtx) -> PResult<Vec<VarDecl>> {
        self.expect(TokenKind::LParen, "`(`")?;
        let mut v = Vec::new();
        if self.eat(TokenKind::RParen) {
            return Ok(v);
        }
        loop {
            let at = self.mark();
            v.push(self.var_decl(ctx)?);
            if ctx == DeclCtx::Param {
                self.param_spans.push(at);
            }
            if !self.eat(TokenKind::Comma) {
                break;
            }
        }
        self.expect(TokenKind::RParen, "`,` or `)` in a parameter list")?;
        Ok(v)
    }

    fn dims(&mut self, what: &str) -> PResult<Vec<u32>> {
        let mut v = vec![self.expect_u32(what)?];
        while v.len() < 3 && self.eat(TokenKind::Comma) {
            v.push(self.expect_u32(what)?);
        }
        Ok(v)
    }

    /// Header directives; `header` lets old producers end each with `;`.
    fn func_directives(&mut self, header: bool) -> PResult<Vec<FuncDirective>> {
        let mut out = Vec::new();
        while self.at(TokenKind::DotWord) {
            let t = self.peek();
            let d = match self.text(t) {
                ".maxnreg" => {
                    self.bump();
                    FuncDirective::MaxNReg(self.expect_u32("a register count")?)
                }
                ".maxntid" => {
                    self.bump();
                    FuncDirective::MaxNTid(self.dims("a thread count")?)
                }
                ".reqntid" => {
                    self.bump();
                    FuncDirective::ReqNTid(self.dims("a thread count")?)
                }
                ".minnctapersm" => {
                    self.bump();
                    FuncDirective::MinNCtaPerSm(self.expect_u32("a CTA count")?)
                }
                ".maxnctapersm" => {
                    self.bump();
                    FuncDirective::MaxNCtaPerSm(self.expect_u32("a CTA count")?)
                }
                ".noreturn" => {
                    self.bump();
                    FuncDirective::NoReturn
                }
                ".explicitcluster" => {
                    self.bump();
                    FuncDirective::ExplicitCluster
                }
                ".reqnctapercluster" => {
                    self.bump();
                    FuncDirective::ReqNCtaPerCluster(self.dims("a CTA count")?)
                }
                ".maxclusterrank" => {
                    self.bump();
                    FuncDirective::MaxClusterRank(self.expect_u32("a cluster rank")?)
                }
                ".abi_preserve" => {
                    self.bump();
                    FuncDirective::AbiPreserve(self.expect_u32("a register count")?)
                }
                ".abi_preserve_control" => {
                    self.bump();
                    FuncDirective::AbiPreserveControl(self.expect_u32("a register count")?)
                }
                ".pragma" => {
                    self.bump();
                    FuncDirective::Pragma(self.pragma_strings()?)
                }
                w if header && !starts_module_item(w) => {
                    return self.error_at(
                        t.span,
                        format!("found `{w}`, expected a function directive (`.maxntid`, `.reqntid`, `.maxnreg`, `.minnctapersm`, `.noreturn` ...), `{{` or `;`"),
                    )
                }
                _ => break,
            };
            // Old producers end header directives with `;`.
            if header && !matches!(d, FuncDirective::Pragma(_)) {
                self.eat(TokenKind::Semi);
            }
            out.push(d);
        }
        Ok(out)
    }

    /// The statements after `{` up to the matching `}`, their spans, and
    /// the statements that name labels (to resolve at the end).
    fn body(&mut self) -> PResult<(Vec<Stmt>, Vec<Span>, Vec<usize>)> {
        // Filled in the parser's buffers, which keep their room from one
        // body to the next, and moved out at their exact size (growing a
        // body's own vectors by doubling and giving the unused half back
        // took two reallocations a doubling: matrix_free -O0 4.7 M
        // instructions).
        let (mut stmts, mut spans) = std::mem::take(&mut self.body_buffers);
        stmts.clear();
        spans.clear();
        let mut patch = Vec::new();
        loop {
            let t = self.peek();
            let start = self.mark();
            let refs = self.func.as_ref().unwrap().ref_count();
            let stmt = match t.kind {
                TokenKind::RBrace => {
                    self.bump();
                    if self.func.as_mut().unwrap().pop_scope() {
                        Stmt::ScopeEnd
                    } else {
                        break;
                    }
                }
                TokenKind::LBrace => {
                    self.bump();
                    let f = self.func.as_mut().unwrap();
                    if f.depth() >= MAX_SCOPE_DEPTH {
                        return self.error_at(t.span, format!("scopes nested more than {MAX_SCOPE_DEPTH} deep"));
                    }
                    f.push_scope(t.span);
                    Stmt::ScopeBegin
                }
                TokenKind::Eof => {
                    let f = self.func.as_ref().unwrap();
                    let msg = match f.open_scope_span() {
                        Some(open) => {
                            let (l, c) = self.lines().line_col(open.start);
                            format!("found end of file, expected `}}` closing the scope opened at {l}:{c}")
                        }
                        None => "found end of file, expected `}` closing the function body".to_string(),
                    };
                    return self.error_at(t.span, msg);
                }
                TokenKind::Ident if self.peek_at(1).kind == TokenKind::Colon => self.labeled()?,
                TokenKind::DotWord => match self.plain_loc_at(t) {
                    Some(loc) => Stmt::Loc(loc),
                    None => match self.body_directive(&mut stmts, &mut spans)? {
                        Some(stmt) => stmt,
                        // A run of plain declarations, pushed with their spans.
                        None => continue,
                    },
                },
                TokenKind::At | TokenKind::Ident => Stmt::Instr(self.instruction()?),
                _ => return self.expected("an instruction, a label, a declaration or `}`"),
            };
            if self.func.as_ref().unwrap().ref_count() > refs {
                patch.push(stmts.len());
            }
            spans.push(self.span_from(start));
            stmts.push(stmt);
        }
        // Exact sizes: the module is held in memory whole.
        let body: Vec<Stmt> = stmts.drain(..).collect();
        let body_spans: Vec<Span> = spans.drain(..).collect();
        self.body_buffers = (stmts, spans);
        Ok((body, body_spans, patch))
    }

    /// `name:` followed by nothing, `.branchtargets`, `.calltargets` or `.callprototype`.
    fn labeled(&mut self) -> PResult<Stmt> {
        let t = self.bump();
        self.bump(); // ':'
        let name = self.text(t);
        // A label belongs to its block; a name is declared once per block.
        let code = !(self.at_dot(".branchtargets") || self.at_dot(".calltargets") || self.at_dot(".callprototype"));
        let id = match self.func.as_mut().unwrap().define_label(name, t.span, code) {
            Ok(id) => id,
            Err((prev, binding)) => {
                let (l, c) = self.lines().line_col(prev.start);
                let msg = match binding {
                    Binding::Label { .. } => format!("label `{name}` is already defined in this block (at {l}:{c})"),
                    _ => format!("`{name}` is already declared in this block (at {l}:{c}), so it cannot also be a label here"),
                };
                return self.error_at(t.span, msg);
            }
        };
        if self.at_dot(".branchtargets") {
            self.bump();
            let mut targets = Vec::new();
            loop {
                let (lt, l) = self.expect_ident("a label")?;
                targets.push(self.func.as_mut().unwrap().use_target(l, lt.span));
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
            self.expect(TokenKind::Semi, "`;` after .branchtargets")?;
            return Ok(Stmt::BranchTargets(id, targets));
        }
        if self.at_dot(".calltargets") {
            self.bump();
            let mut targets = Vec::new();
            loop {
                let (_, f) = self.expect_ident("a function name")?;
                targets.push(f.into());
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
            self.expect(TokenKind::Semi, "`;` after .calltargets")?;
            return Ok(Stmt::CallTargets(id, targets));
        }
        if self.at_dot(".callprototype") {
            self.bump();
            let mut ret = None;
            if self.at(TokenKind::LParen) {
                ret = Some(self.param_list(DeclCtx::Proto)?);
            }
            let (_, underscore) = self.expect_ident("`_` (a prototype's name placeholder)")?;
            if underscore != "_" {
                return self.error_at(self.prev_span(), format!("found `{underscore}`, expected `_` in a .callprototype"));
            }
            let params = if self.at(TokenKind::LParen) { self.param_list(DeclCtx::Proto)? } else { Vec::new() };
            let directives = self.func_directives(false)?;
            self.expect(TokenKind::Semi, "`;` after .callprototype")?;
            return Ok(Stmt::CallPrototype(id, Box::new(Prototype { ret, params, directives })));
        }
        Ok(Stmt::Label(id))
    }

    /// A directive statement; `None` when the fast path for plain
    /// declarations read a run of them into `stmts` and `spans`.
    fn body_directive(&mut self, stmts: &mut Vec<Stmt>, spans: &mut Vec<Span>) -> PResult<Option<Stmt>> {
        let t = self.peek();
        let w = self.text(t);
        match w {
            // Past its fast path ([`Parser::plain_loc_at`]).
            ".loc" => {
                self.bump();
                self.loc().map(|l| Some(Stmt::Loc(l)))
            }
            ".pragma" => {
                self.bump();
                self.pragma_strings().map(|p| Some(Stmt::Pragma(p)))
            }
            _ if decl_space(w).is_some() => {
                if self.fast_paths && self.plain_body_decls(stmts, spans)? {
                    return Ok(None);
                }
                self.var_decl(DeclCtx::Body).map(|d| Some(Stmt::Decl(Decl::new(d))))
            }
            _ => self.error_at(t.span, format!("found `{w}`, expected an instruction, a declaration, `.loc` or `.pragma`")),
        }
    }

    /// [`Parser::plain_loc`] at the dot-word `t`, the current token, when
    /// it is `.loc`, tested first in the body's loop: compilers write one
    /// before most instructions (matrix_free: 9,479), and the general
    /// dispatch on a directive's text and its `Result` cost more than the
    /// line's reading (with [`Parser::bump_seen`]: its -O0 run 84.35 ->
    /// 83.48 M, LTO build).
    #[inline(always)]
    fn plain_loc_at(&mut self, t: Token) -> Option<Loc> {
        let start = t.span.start as usize;
        if !self.fast_paths || t.span.end as usize - start != 4 || self.src.get(start..start + 4) != Some(b".loc") {
            return None;
        }
        self.plain_loc()
    }

    /// The fast path for the commonest `.loc`, three plain decimal numbers
    /// and no `,` after them (`.loc 1 23 5`; compilers write one before most
    /// instructions): read from the tokens the cursor already holds,
    /// without the general parser's checks and messages. `None` (nothing
    /// consumed) for anything else (octal, hex or too large numbers,
    /// `function_name`, `inlined_at`); the general parser reads those.
    /// Gives the general parser's IR and positions (tested against it).
    pub(super) fn plain_loc(&mut self) -> Option<Loc> {
        let number = |k: usize| {
            let t = self.peek_at(k);
            if t.kind == TokenKind::Int {
                plain_decimal(self.text(t).as_bytes())
            } else {
                None
            }
        };
        let (file, line, col) = (number(1)?, number(2)?, number(3)?);
        if self.peek_at(4).kind == TokenKind::Comma {
            return None;
        }
        self.bump_seen(4);
        Some(Loc::new(file, line, col))
    }

    fn loc(&mut self) -> PResult<Loc> {
        let file = self.expect_u32("a file index")?;
        let line = self.expect_u32("a line number")?;
        let col = self.expect_u32("a column number")?;
        let mut loc = Loc::new(file, line, col);
        while self.eat(TokenKind::Comma) {
            let (t, w) = self.expect_ident("`function_name` or `inlined_at`")?;
            match w {
                "function_name" => {
                    // A label or section name, possibly plus an offset (`.debug_str+7`).
                    loc.inlining.get_or_insert_default().function_name = Some(self.const_expr()?);
                }
                "inlined_at" => {
                    let a = self.expect_u32("a file index")?;
                    let b = self.expect_u32("a line number")?;
                    let c = self.expect_u32("a column number")?;
                    loc.inlining.get_or_insert_default().inlined_at = Some((a, b, c));
                }
                _ => return self.error_at(t.span, format!("found `{w}`, expected `function_name` or `inlined_at`")),
            }
        }
        Ok(loc)
    }
}

/// Replaces the provisional label numbers of the statements in `patch`
/// (operands and `.branchtargets` lists) by the labels they resolved to.
fn resolve_refs(body: &mut [Stmt], patch: &[usize], ids: &[LabelId]) {
    let fix = |l: &mut LabelId| *l = ids[l.0 as usize];
    for &k in patch {
        match &mut body[k] {
            Stmt::Instr(ins) => ins.operands.iter_mut().for_each(|o| o.for_each_label_mut(&mut |l| fix(l))),
            Stmt::BranchTargets(_, targets) => targets.iter_mut().for_each(fix),
            _ => {}
        }
    }
}

/// Directives that may start the next module item (after a declaration
/// written without `;`).
fn starts_module_item(w: &str) -> bool {
    matches!(
        w,
        ".entry" | ".func" | ".global" | ".const" | ".shared" | ".local" | ".tex" | ".reg" | ".param" | ".extern" | ".visible" | ".weak" | ".common" | ".file" | ".section" | ".pragma" | ".alias" | ".target"
    )
}
