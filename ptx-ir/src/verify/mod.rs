//! The verifier: checks a parsed module the way ptxas would, with
//! `file:line:col` diagnostics.
//!
//! - the `.version` and every `.target` name exist, and each target exists
//!   in the version (`header.rs`, with the facts in `target.rs`);
//! - every instruction form, type and modifier exists for the module's
//!   `.version` and `.target` (the tables' `since` lines);
//! - register operands have types the instruction allows (the tables'
//!   `types` lines under the manual's operand-type rules, §9.4, with the
//!   relaxed size rules of `ld`/`st`/`cvt`, §9.4.1);
//! - vector operands have the instruction's vector width;
//! - state spaces of named variables fit the instruction;
//! - every carry consumer (`addc`, `subc`, `madc`) has a producer (a warning:
//!   ptxas accepts it);
//! - declarations are complete (sized arrays, no incomplete entry parameters);
//! - `vote` without `.sync` is not used where PTX removed it;
//! - every name an instruction uses means, by name, the register, label or
//!   variable its id says, in the block where the instruction stands
//!   (`ir::scopes::check`: what a pass that moves code must keep true), and
//!   every id is within the function's tables.
//!
//! Where the manual and ptxas disagree, the verifier follows what ptxas
//! accepts: it must never reject a file ptxas accepts.
//!
//! A module straight from the parser needs no scope check (the parser
//! resolved its names the same way): [`verify_parsed`] skips it, except
//! under debug assertions, where it asserts it finds nothing.
//!
//! [`verify`] checks a whole module; [`verify_header`] and [`verify_item`]
//! check its parts one at a time against a [`Context`] (what an item needs
//! to know of the others), which is how the incremental database re-checks
//! only what changed.

mod declared;
mod forms;
mod header;
mod init;
mod shapes;
mod target;
mod types;

pub use declared::{registers_declared, RegProblem};
pub use target::{read_version, Target, TargetOption};
pub use types::{narrower as narrower_type, wider as wider_type};

use crate::analysis::FunctionAnalyses;
use forms::{FormFacts, ModSet};
use shapes::CleanShapes;
use crate::ir::scopes;
use crate::ir::{range_member, AddrBase, DeclName, Declarator, FuncKind, Function, Instruction, Item, Linkage, Module, Name, Operand, Stmt, VarDecl, Version};
use crate::isa::{FormId, Mod, Opcode, OperandType, ScalarType, StateSpace};
use crate::parse::{HeaderSpans, ItemSpans, SourceMap};
use crate::source::{Diagnostic, LineIndex, Span};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

/// Checks a module; returns every problem found (errors and warnings).
pub fn verify(m: &Module, map: &SourceMap, file: &str, text: &[u8]) -> Vec<Diagnostic> {
    verify_module(m, map, file, text, Origin::Any)
}

/// [`verify`] for a module just as [`crate::parse`] made it from `text`.
/// The parser resolved every name in the text, block by block, as the
/// scope check reads the printed text, so the check would find nothing:
/// it is skipped (it was about a fifth of parsing and verifying). Builds
/// with debug assertions (the test suite's) still run it and assert that.
pub fn verify_parsed(p: &crate::Parsed, file: &str, text: &[u8]) -> Vec<Diagnostic> {
    verify_module(&p.module, &p.source_map, file, text, Origin::Parsed)
}

/// Where a module being verified comes from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// Straight from the parser, unchanged.
    Parsed,
    /// Built or changed by code (or not known).
    Any,
}

fn verify_module(m: &Module, map: &SourceMap, file: &str, text: &[u8], origin: Origin) -> Vec<Diagnostic> {
    verify_module_with(m, map, file, text, origin, true)
}

/// [`verify_module`]; `shapes`: skip the instructions of a shape found
/// clean ([`CleanShapes`]; off only in tests, which check that it changes
/// nothing).
fn verify_module_with(m: &Module, map: &SourceMap, file: &str, text: &[u8], origin: Origin, shapes: bool) -> Vec<Diagnostic> {
    let lines = Lines::new(text);
    let ctx = Context::of_module(m);
    let mut out = check_header(&ctx, m.version, &m.target, &map.header, file, &lines);
    let span_of = |k: usize| map.items.get(k).copied().unwrap_or_default();
    let check = |clean: &mut CleanShapes, (k, item): (usize, &Item)| {
        let span = span_of(k);
        let spans = ItemSpansRef { item: span, stmts: map.stmts.get(k).map_or(&[], |s| s.as_slice()), params: map.params.get(k).map_or(&[], |s| s.as_slice()), header: map.headers.get(k).copied().unwrap_or(span) };
        check_item(&ctx, item, &spans, file, &lines, origin, clean)
    };
    // Items are checked on their own (against `ctx`), so a large module's
    // are checked on all threads; diagnostics stay in item order. The
    // shapes found clean are shared by the items a thread checks.
    let per_item: Vec<Vec<Diagnostic>> = if crate::threads::worth_splitting(text.len()) {
        use rayon::prelude::*;
        m.items.par_iter().enumerate().map_init(|| CleanShapes::new(shapes), check).collect()
    } else {
        let mut clean = CleanShapes::new(shapes);
        m.items.iter().enumerate().map(|item| check(&mut clean, item)).collect()
    };
    let mut leading = true;
    for ((k, item), diags) in m.items.iter().enumerate().zip(per_item) {
        let span = span_of(k);
        out.extend(diags);
        leading &= matches!(item, Item::Target(_));
        if let Some(msg) = misplaced_target(item, leading, m.address_size) {
            out.push(Diagnostic::error(file, lines.get(), span, msg));
        }
    }
    out
}

/// Parses and verifies a module: the parsed module and the verifier's
/// warnings, or every error (a parse error, or the verifier's errors and
/// warnings together, in order).
pub fn parse_and_verify(file: &str, text: &[u8]) -> Result<(crate::Parsed, Vec<Diagnostic>), Vec<Diagnostic>> {
    let parsed = crate::parse(file, text).map_err(|d| vec![d])?;
    let diags = verify_parsed(&parsed, file, text);
    if diags.iter().any(Diagnostic::is_error) {
        return Err(diags);
    }
    Ok((parsed, diags))
}

/// The module header's problems (`.version`, `.target`, `.address_size`):
/// `written` is the version as written, `spans` where each part is in `text`.
pub fn verify_header(ctx: &Context, written: Version, targets: &[Name], spans: &HeaderSpans, file: &str, text: &[u8]) -> Vec<Diagnostic> {
    check_header(ctx, written, targets, spans, file, &Lines::new(text))
}

/// One item's problems, in the module described by `ctx`; `spans` and the
/// diagnostics' positions are in `text` (the item's own text, or the whole
/// module's).
pub fn verify_item(ctx: &Context, item: &Item, spans: &ItemSpans, file: &str, text: &[u8]) -> Vec<Diagnostic> {
    let spans = ItemSpansRef { item: spans.item, stmts: &spans.stmts, params: &spans.params, header: spans.header };
    check_item(ctx, item, &spans, file, &Lines::new(text), Origin::Any, &mut CleanShapes::new(true))
}

/// ptxas accepts further `.target` directives only right after the first
/// (before `.address_size` and any other item): the error for `item`, given
/// whether only `.target` directives come before it.
pub fn misplaced_target(item: &Item, leading: bool, address_size: Option<u32>) -> Option<String> {
    let Item::Target(_) = item else { return None };
    if leading && address_size.is_none() {
        return None;
    }
    Some("a further `.target` directive may only follow the first one directly (before `.address_size` and every other directive)".to_string())
}

/// What checking one item needs to know about the rest of its module: the
/// header, the state space of every module variable and the shape of every
/// function's parameter list. Two modules whose header and declarations
/// agree have equal contexts, so an incremental caller re-checks an item
/// only when its own text or a declaration changes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Context {
    target: Option<Target>,
    /// The version as ptxas reads it ([`read_version`]).
    version: (u32, u32),
    /// `.address_size 64`.
    address_64: bool,
    globals: FxHashMap<Name, StateSpace>,
    functions: FxHashMap<Name, Signature>,
    /// By [`FormId::index`]: what the checks need to know of each form
    /// ([`FormFacts`]), found once per module. [`Verifier::availability`]
    /// checks only the requirements the module does not meet (a met one
    /// reports nothing), and nothing for most instructions: asking every
    /// requirement whether it applied to each instruction's modifiers was
    /// a tenth of verifying renderer (sm_20, where most forms have some
    /// requirement it does not meet). Each form's found when first asked
    /// for: finding all 686 forms' was 5 % of optimizing a 20 KB Triton
    /// kernel. Empty in the default context (each form's facts are found
    /// where it is used).
    forms: FormFactsCache,
}

/// [`Context::forms`]: a function of the context's other fields, so it
/// takes no part in comparing contexts (two equal contexts may have asked
/// about different forms).
#[derive(Clone, Debug, Default)]
struct FormFactsCache(Vec<std::sync::OnceLock<FormFacts>>);

impl PartialEq for FormFactsCache {
    fn eq(&self, _: &FormFactsCache) -> bool {
        true
    }
}

impl Eq for FormFactsCache {}

/// What a call is checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Signature {
    params: usize,
    results: usize,
    /// The last parameter is an unsized array, which a call may leave out.
    optional_last: bool,
}

impl Context {
    /// The context of a module with this header and items that declare `decls`.
    pub fn new<'d>(version: Version, target: &[Name], address_size: Option<u32>, decls: impl IntoIterator<Item = &'d Declarations>) -> Context {
        let mut ctx = Context { target: target.iter().find_map(|t| Target::parse(t)), version: read_version(version), address_64: address_size == Some(64), ..Context::default() };
        ctx.forms = FormFactsCache(FormId::all().map(|_| std::sync::OnceLock::new()).collect());
        for d in decls {
            ctx.globals.extend(d.variables.iter().cloned());
            ctx.functions.extend(d.functions.iter().cloned());
        }
        ctx
    }

    pub fn of_module(m: &Module) -> Context {
        let decls: Vec<Declarations> = m.items.iter().map(Declarations::of).collect();
        Context::new(m.version, &m.target, m.address_size, &decls)
    }

    /// Which of a form's requirements the module does not meet, as
    /// [`FormFacts::unmet`] has it.
    fn unmet_mask(&self, requirements: &[crate::isa::Requirement]) -> u64 {
        if requirements.len() > 64 {
            return u64::MAX;
        }
        requirements.iter().enumerate().filter(|(_, r)| self.meets(r) != (true, true)).fold(0, |mask, (k, _)| mask | 1 << k)
    }

    /// What the checks need to know of `form` in this module.
    fn form_facts(&self, form: FormId) -> FormFacts {
        let of = || FormFacts::of(form, self.unmet_mask(form.requirements()));
        match self.forms.0.get(form.index()) {
            Some(cached) => *cached.get_or_init(of),
            None => of(),
        }
    }

    /// Does the module's `.version`, and its `.target` (or the lack of
    /// one), meet requirement `r`?
    fn meets(&self, r: &crate::isa::Requirement) -> (bool, bool) {
        (r.ptx.is_none_or(|p| self.version >= p), self.target.as_ref().is_none_or(|t| t.satisfies(r.min_sm, r.exact)))
    }
}

/// What one item declares for the others: a module variable's state space,
/// a function's parameter list (see [`Context`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Declarations {
    variables: Vec<(Name, StateSpace)>,
    functions: Vec<(Name, Signature)>,
}

impl Declarations {
    pub fn of(item: &Item) -> Declarations {
        let mut d = Declarations::default();
        match item {
            Item::Var(g) => d.variables = g.decl.names.iter().map(|n| (n.name.clone(), g.decl.space)).collect(),
            Item::Func(f) => {
                let optional_last = f.params.as_ref().and_then(|p| p.last()).is_some_and(|p| p.names.iter().any(|n| n.dims.first() == Some(&None)));
                let sig = Signature { params: f.params.as_ref().map_or(0, |p| p.len()), results: f.ret.as_ref().map_or(0, |r| r.len()), optional_last };
                d.functions.push((f.name.clone(), sig));
            }
            _ => {}
        }
        d
    }
}

/// The text's line table, built on the first diagnostic (most modules
/// have none, and building it reads the whole text).
struct Lines<'t> {
    text: &'t [u8],
    index: std::sync::OnceLock<LineIndex>,
}

impl<'t> Lines<'t> {
    fn new(text: &'t [u8]) -> Lines<'t> {
        Lines { text, index: std::sync::OnceLock::new() }
    }

    fn get(&self) -> &LineIndex {
        self.index.get_or_init(|| LineIndex::new(self.text))
    }
}

/// Where the verifier finds the variable of the function a name means.
enum Locals<'f> {
    /// The general case: the scopes open at each statement.
    Walk(scopes::Walk<'f>),
    /// No name is both a variable and a register or label, and no variable
    /// is declared where another of its name is seen (blocks side by side
    /// may each declare `param0`, one block inside another may not): a name
    /// means the variable of that name seen at the statement, if any. Each
    /// name's declarations in order, with the statements that see them.
    /// Most functions are so; the walk was a tenth of verifying them, and
    /// a fifth of those that call (a call's `.param` variables live in a
    /// block of their own).
    Flat(FxHashMap<&'f str, SmallVec<[Seen; 1]>>),
}

/// A name's first byte (0 for an empty name), to tell names apart cheaply.
fn first_byte(name: &str) -> usize {
    name.as_bytes().first().map_or(0, |&b| b as usize)
}

/// The statements `from..until` that see a variable (the rest of its
/// block), and its state space.
#[derive(Clone, Copy, Debug)]
struct Seen {
    from: usize,
    until: usize,
    space: StateSpace,
}

impl<'f> Locals<'f> {
    fn of(f: &'f Function) -> Locals<'f> {
        let walk = || Locals::Walk(scopes::Walk::new(f));
        let mut vars: FxHashMap<&str, SmallVec<[Seen; 1]>> = FxHashMap::default();
        // The first bytes of the registers' names (of a range `%r<8>`, its
        // prefix): a register can be named like a variable only if their
        // names start alike, which they seldom do (`%r1` beside `param0`),
        // so the registers are looked at again only then. Collecting them
        // all for that was a third of this (renderer declares 62,608
        // registers one by one).
        let mut reg_first_bytes = [false; 256];
        for d in f.ret.iter().chain(&f.params).flatten() {
            if d.space == StateSpace::Reg {
                d.names.iter().for_each(|n| reg_first_bytes[first_byte(&n.name)] = true);
                continue;
            }
            for n in &d.names {
                let seen = vars.entry(&n.name).or_default();
                if !seen.is_empty() {
                    return walk();
                }
                seen.push(Seen { from: 0, until: usize::MAX, space: d.space });
            }
        }
        // The variables each open block declares, seen until it closes.
        let mut open: Vec<Vec<&str>> = vec![Vec::new()];
        let body = f.body.as_deref().unwrap_or(&[]);
        for (k, s) in body.iter().enumerate() {
            match s {
                Stmt::ScopeBegin => open.push(Vec::new()),
                Stmt::ScopeEnd if open.len() > 1 => {
                    for name in open.pop().unwrap() {
                        if let Some(last) = vars.get_mut(name).and_then(|seen| seen.last_mut()) {
                            last.until = k;
                        }
                    }
                }
                Stmt::Decl(d) if d.space() == StateSpace::Reg => d.names().for_each(|n| reg_first_bytes[first_byte(n.name)] = true),
                Stmt::Decl(d) => {
                    for n in d.names().filter(|n| n.name.as_str() != "_") {
                        let seen = vars.entry(n.name).or_default();
                        if seen.last().is_some_and(|s| s.until > k) {
                            return walk();
                        }
                        seen.push(Seen { from: k, until: usize::MAX, space: d.space() });
                        open.last_mut().unwrap().push(n.name);
                    }
                }
                _ => {}
            }
        }
        // A register (or a member of a range `%r<8>`) or a label named like
        // a variable may shadow it.
        // The first bytes of the variables' names: a register or label whose
        // name starts otherwise is not looked up.
        let mut first_bytes = [false; 256];
        for v in vars.keys() {
            first_bytes[first_byte(v)] = true;
        }
        let may_be_a_variable = |name: &str| first_bytes[first_byte(name)];
        let shadows = |n: DeclName| (may_be_a_variable(n.name) && vars.contains_key(n.name.as_str())) || n.range.is_some_and(|count| vars.keys().any(|v| range_member(v).is_some_and(|(prefix, k)| prefix == n.name.as_str() && k < count)));
        let regs_may_shadow = first_bytes.iter().zip(&reg_first_bytes).any(|(v, r)| *v && *r);
        let body_regs = body.iter().filter_map(|s| match s {
            Stmt::Decl(d) if d.space() == StateSpace::Reg => Some(d.names()),
            _ => None,
        });
        let mut regs = f.ret.iter().chain(&f.params).flatten().filter(|d| d.space == StateSpace::Reg).flat_map(|d| d.names.iter().map(DeclName::from)).chain(body_regs.flatten());
        if (regs_may_shadow && regs.any(shadows)) || f.labels.iter().any(|l| may_be_a_variable(l) && vars.contains_key(&**l)) {
            return walk();
        }
        Locals::Flat(vars)
    }

    /// The state space of the function's variable `name` means at statement `k`.
    fn space(&self, name: &str, k: usize) -> Option<StateSpace> {
        match self {
            Locals::Walk(w) => w.var_decl(name).map(|d| d.space),
            Locals::Flat(vars) => {
                let seen = vars.get(name)?;
                let last_from = seen.partition_point(|s| s.from <= k).checked_sub(1)?;
                Some(seen[last_from]).filter(|s| k < s.until).map(|s| s.space)
            }
        }
    }
}

/// One item's positions, borrowed from a [`SourceMap`] or an [`ItemSpans`].
struct ItemSpansRef<'a> {
    item: Span,
    stmts: &'a [Span],
    params: &'a [Span],
    header: Span,
}

fn check_header(ctx: &Context, written: Version, targets: &[Name], spans: &HeaderSpans, file: &str, lines: &Lines) -> Vec<Diagnostic> {
    let mut v = Verifier::new(ctx, file, lines);
    v.header(written, targets, spans);
    v.out
}

/// One item's problems; `clean`: the shapes of instructions found clean
/// in the module so far, which this item's add to.
fn check_item(ctx: &Context, item: &Item, spans: &ItemSpansRef, file: &str, lines: &Lines, origin: Origin, clean: &mut CleanShapes) -> Vec<Diagnostic> {
    let mut v = Verifier::new(ctx, file, lines);
    v.origin = origin;
    std::mem::swap(&mut v.clean, clean);
    let functions = &ctx.functions;
    match item {
        Item::Var(g) => {
            v.variable(&g.decl, g.linkage, spans.item);
            v.initializers(&g.decl, spans.item, functions);
        }
        Item::Func(f) => {
            v.function(f, spans.item, spans.stmts, spans.params, spans.header, functions);
            // Each message says where it is; the note says in which function.
            for d in &mut v.out {
                d.notes.push(format!("in function `{}`", f.name));
            }
        }
        Item::Target(names) => v.target_list(names, spans.stmts, spans.item),
        _ => {}
    }
    std::mem::swap(&mut v.clean, clean);
    v.out
}

/// Instructions with one plain memory operand `[base+offset]` whose state
/// space is the instruction's (bulk copies and texture, surface and
/// tensor-map operands are not).
/// (A `match`, not a list searched at every instruction.)
fn plain_address(op: Opcode) -> bool {
    matches!(op, Opcode::LD | Opcode::LDU | Opcode::ST | Opcode::ATOM | Opcode::RED | Opcode::PREFETCH | Opcode::PREFETCHU)
}

struct Verifier<'a> {
    file: &'a str,
    lines: &'a Lines<'a>,
    /// The module's header and declarations.
    ctx: &'a Context,
    out: Vec<Diagnostic>,
    origin: Origin,
    /// Shapes of instructions found clean in the module ([`CleanShapes`]).
    clean: CleanShapes,
}

impl<'a> Verifier<'a> {
    fn new(ctx: &'a Context, file: &'a str, lines: &'a Lines<'a>) -> Verifier<'a> {
        Verifier { file, lines, ctx, out: Vec::new(), origin: Origin::Any, clean: CleanShapes::new(false) }
    }


    fn error(&mut self, span: Span, msg: String) {
        self.out.push(Diagnostic::error(self.file, self.lines.get(), span, msg));
    }

    fn warning(&mut self, span: Span, msg: String) {
        self.out.push(Diagnostic::warning(self.file, self.lines.get(), span, msg));
    }

    fn variable(&mut self, d: &VarDecl, linkage: Option<Linkage>, span: Span) {
        for n in &d.names {
            if n.dims.first() == Some(&None) && n.init.is_none() && linkage != Some(Linkage::Extern) {
                self.error(span, format!("variable `{}` has an incomplete type (`[]` needs an initializer or `.extern`)", n.name));
            }
        }
    }

    /// The names and shapes of a declaration's initializers (see `init.rs`).
    fn initializers(&mut self, d: &VarDecl, span: Span, functions: &FxHashMap<Name, Signature>) {
        for n in &d.names {
            let space_of = |name: &str| self.ctx.globals.get(name).copied();
            let is_function = |name: &str| functions.contains_key(name);
            for msg in init::check(d, n, &space_of, &is_function) {
                self.error(span, msg);
            }
        }
    }

    fn function(&mut self, f: &Function, span: Span, stmts: &[Span], params: &[Span], header: Span, functions: &FxHashMap<Name, Signature>) {
        for (k, p) in f.params.iter().flatten().enumerate() {
            if !p.names.iter().any(|n: &Declarator| n.dims.first() == Some(&None)) {
                continue;
            }
            let at = params.get(k).copied().unwrap_or(span);
            if f.kind == FuncKind::Entry {
                // ptxas reports this at the end of the parameter list.
                self.error(header, format!("parameter `{}` of kernel `{}` is an incomplete array", p.names[0].name, f.name));
            } else if self.ctx.version < (6, 0) {
                self.error(at, format!("unsized array parameter `{}` requires PTX ISA version 6.0 or later", p.names[0].name));
            }
        }
        let Some(body) = &f.body else { return };
        // Names first: the other checks look registers up by id.
        let scope_errors = if self.origin == Origin::Parsed && !cfg!(debug_assertions) { Vec::new() } else { scopes::check(f) };
        debug_assert!(self.origin == Origin::Any || scope_errors.is_empty(), "the parser made a function the scope check rejects: {scope_errors:?}");
        let ids_ok = !scope_errors.iter().any(|e| e.bad_id);
        let scopes_ok = scope_errors.is_empty();
        for e in scope_errors {
            let at = e.stmt.and_then(|k| stmts.get(k)).copied().unwrap_or(span);
            self.error(at, e.message);
        }
        if !ids_ok {
            return;
        }
        // A register without a declaration of its type visible where it is
        // used (what a pass that forgot one would print) is a scope error:
        // `registers_declared`, for builders that do not verify, finds
        // nothing the scope check did not.
        debug_assert!(!scopes_ok || declared::registers_declared(f).is_empty(), "the scope check missed {:?}", declared::registers_declared(f));
        for (k, s) in body.iter().enumerate() {
            if let Stmt::Decl(d) = s {
                // Most declarations are plain registers, held in place, with
                // no initializer or array: nothing to check (renderer: 62,608).
                let Some(d) = d.as_var() else { continue };
                if d.names.iter().all(|n| n.init.is_none() && n.dims.is_empty()) {
                    continue;
                }
                self.initializers(d, stmts.get(k).copied().unwrap_or(span), functions);
                for n in &d.names {
                    if n.dims.first() == Some(&None) && n.init.is_none() && d.space != StateSpace::Param {
                        let at = stmts.get(k).copied().unwrap_or(span);
                        self.error(at, format!("variable `{}` has an incomplete type (`[]` needs an initializer)", n.name));
                    }
                }
            }
        }
        let mut has_carry_in = false;
        // Variables of the function, as each instruction sees them (blocks
        // may declare a name again).
        let mut locals = Locals::of(f);
        // Under debug assertions, the general walk checks the shortcut.
        let mut reference = (cfg!(debug_assertions) && matches!(locals, Locals::Flat(_))).then(|| scopes::Walk::new(f));
        for (k, s) in body.iter().enumerate() {
            if let Locals::Walk(walk) = &mut locals {
                walk.step(k);
            }
            if let Some(walk) = &mut reference {
                walk.step(k);
            }
            let Stmt::Instr(ins) = s else { continue };
            let facts = self.ctx.form_facts(ins.form);
            has_carry_in |= facts.carry_in;
            // An instruction of a shape found clean is clean.
            let shape = self.clean.shape(f, ins);
            if shape.is_some_and(|shape| self.clean.contains(&shape)) {
                continue;
            }
            let found_before = self.out.len();
            let at = stmts.get(k).copied().unwrap_or(span);
            let local_space = |name: &str| {
                let space = locals.space(name, k);
                debug_assert!(reference.as_ref().is_none_or(|w| w.var_decl(name).map(|d| d.space) == space), "`{name}` in `{}`", f.name);
                space
            };
            if facts.may_be_unavailable(ins) {
                self.availability(ins, facts.unmet, at);
            }
            let kinds = self.operand_types(f, ins, at);
            let vector = facts.vector(ins);
            self.vector_widths(f, ins, kinds, vector, at);
            if facts.memory {
                self.state_spaces(f, ins, &facts, &local_space, at);
            }
            self.vote_sync(ins, at);
            self.call_arity(f, ins, functions, at);
            self.operand_features(f, ins, &facts, kinds, vector, at);
            if let Some(shape) = shape.filter(|_| self.out.len() == found_before) {
                self.clean.insert(shape);
            }
        }
        if has_carry_in {
            self.carries(f, stmts, span);
        }
    }

    /// The form's version and target requirements that apply; `unmet`:
    /// those the module does not meet ([`FormFacts::unmet`]). Only for
    /// instructions to which one may apply ([`FormFacts::may_be_unavailable`]).
    fn availability(&mut self, ins: &Instruction, unmet: u64, at: Span) {
        // Each unmet requirement's modifiers are looked up in the written
        // ones: going through the written modifiers for each of them was
        // most of this check (`ld` has 15 requirements, some with 5 modifiers).
        let written = ModSet::of(&ins.mods);
        for (k, r) in ins.form.requirements().iter().enumerate() {
            // A met requirement has nothing to report.
            if k < 64 && unmet & 1 << k == 0 {
                continue;
            }
            if !r.when.is_empty() && !r.when.iter().any(|m| written.contains(*m)) {
                continue;
            }
            // The message's subject, written only for an error.
            let what = || match r.when.iter().find(|m| ins.mods.contains(&Mod(**m))) {
                Some(m) => format!("`{}` with `{}`", ins.opcode.name(), Mod(*m).text()),
                None => format!("`{}`", ins.opcode.name()),
            };
            let (version_met, target_met) = self.ctx.meets(r);
            if let (false, Some(p)) = (version_met, r.ptx) {
                let what = what();
                self.error(at, format!("{what} requires PTX ISA version {}.{} or later, but the module is .version {}.{}", p.0, p.1, self.ctx.version.0, self.ctx.version.1));
                return;
            }
            if let (false, Some(t)) = (target_met, &self.ctx.target) {
                let what = what();
                let need = if r.exact.is_empty() { format!("sm_{} or newer", r.min_sm.unwrap_or(0)) } else { r.exact.join(" or ") };
                let name = t.name.clone();
                self.error(at, format!("{what} requires .target {need}, but the module targets {name}"));
                return;
            }
        }
    }

    /// Also tells which kinds of operand the instruction has (it looks at
    /// each anyway), for the checks that look for rare ones.
    fn operand_types(&mut self, f: &Function, ins: &Instruction, at: Span) -> OperandKinds {
        let mut kinds = OperandKinds::default();
        let specs = ins.form.operands();
        let relaxed = types::relaxed_opcode(ins.opcode);
        // ptxas: "Predicate expression expected".
        if let Some(g) = ins.guard {
            let reg = f.reg(g.reg);
            if reg.ty != ScalarType::Pred {
                self.error(at, format!("the guard `{}` of `{}` is of type {}, expected .pred", reg.name, ins.opcode.name(), reg.ty.text()));
            }
        }
        // The type of the slot the last operand asked for: most ask for the
        // same one (`add.s32 d, a, b`), and looking a modifier's type up
        // was a sixth of this check.
        let mut last_slot: Option<(u8, Option<ScalarType>)> = None;
        let mut slot_type = |s: u8| match last_slot {
            Some((last, ty)) if last == s => ty,
            _ => {
                let ty = types::slot_type(ins, s as usize);
                last_slot = Some((s, ty));
                ty
            }
        };
        for (k, op) in ins.operands.iter().enumerate() {
            kinds.note(op);
            let Some(spec) = specs.get(k) else { continue };
            // Labels are branch targets (and `call`'s target lists), not values.
            if let Operand::Label(l) = op {
                if !matches!(ins.opcode, Opcode::BRA | Opcode::BRX_IDX | Opcode::CALL) {
                    self.error(at, format!("operand {} of `{}` is the label `{}`; only branches take labels", k + 1, ins.opcode.name(), f.label_name(*l)));
                    continue;
                }
            }
            // ptxas: "Result register required".
            if spec.write && spec.mem.is_none() && !matches!(op, Operand::Reg(_)) && not_a_register(op) {
                self.error(at, format!("operand {} of `{}` is a result, so it must be a register", k + 1, ins.opcode.name()));
                continue;
            }
            let expected = match spec.ty {
                OperandType::Any => continue,
                // ptxas: "Label expected": the name means a register or variable here.
                OperandType::Label => {
                    if !matches!(op, Operand::Label(_)) {
                        let what = match op {
                            Operand::Reg(r) => f.regs.get(r.reg.0 as usize).map_or(String::new(), |r| format!(" (`{}` is a register here)", r.name)),
                            Operand::Sym(s) => format!(" (`{}` is a variable or function here)", s.name),
                            _ => String::new(),
                        };
                        self.error(at, format!("operand {} of `{}` must be a label{what}", k + 1, ins.opcode.name()));
                    }
                    continue;
                }
                OperandType::Address => {
                    if let Operand::Addr(a) = op {
                        if let AddrBase::Reg(r) = a.base {
                            let ty = f.reg(r).ty;
                            if !types::is_address_type(ty) {
                                self.error(at, format!("the address register `{}` of `{}` is {}, expected a 32- or 64-bit integer", f.reg(r).name, ins.opcode.name(), ty.text()));
                            }
                        }
                    }
                    continue;
                }
                OperandType::Fixed(t) => Some(t),
                OperandType::Slot(s) => slot_type(s),
                OperandType::Wide(s) => slot_type(s).and_then(types::wider),
                OperandType::Half(s) => slot_type(s).and_then(types::narrower),
            };
            let Some(expected) = expected else { continue };
            let relaxed = relaxed && !spec.name.starts_with("cache");
            // Most operands are plain registers of an accepted type, about
            // which `check_operand` has nothing to say: not calling it saved
            // a tenth of verifying renderer.
            if let Operand::Reg(r) = op {
                if r.sel.is_none() && types::compatible(expected, f.reg(r.reg).ty, relaxed) {
                    continue;
                }
            }
            self.check_operand(f, ins, op, expected, relaxed, k, at);
        }
        kinds
    }

    #[allow(clippy::too_many_arguments)]
    fn check_operand(&mut self, f: &Function, ins: &Instruction, op: &Operand, expected: ScalarType, relaxed: bool, k: usize, at: Span) {
        match op {
            Operand::Reg(r) => {
                let reg = f.reg(r.reg);
                // A lane of a vector register, or a whole vector register in a vector position.
                let ty = reg.ty;
                if r.sel.is_some_and(|s| s.lane().is_none()) {
                    return; // byte/half selectors of the video instructions
                }
                if !types::compatible(expected, ty, relaxed) {
                    self.error(at, format!("operand {} of `{}` is `{}` of type {}, but the instruction expects {}", k + 1, ins.opcode.name(), reg.name, ty.text(), expected.text()));
                }
            }
            Operand::Vector(v) => {
                for o in v.iter() {
                    self.check_operand(f, ins, o, expected, relaxed, k, at);
                }
            }
            // ptxas: "Arguments mismatch": an integer literal where a float is
            // expected, or a float literal where a signed or unsigned integer is
            // (bit types take both).
            Operand::Imm(imm) => {
                let class = expected.class();
                let wrong = match imm {
                    crate::ir::Imm::Int(_) => class == crate::isa::TypeClass::Float,
                    crate::ir::Imm::Float(_) => matches!(class, crate::isa::TypeClass::Signed | crate::isa::TypeClass::Unsigned),
                };
                if wrong {
                    let what = if matches!(imm, crate::ir::Imm::Int(_)) { "an integer literal" } else { "a floating-point literal" };
                    self.error(at, format!("operand {} of `{}` is {what}, but the instruction expects {}", k + 1, ins.opcode.name(), expected.text()));
                }
            }
            Operand::Pair(first, q) => {
                self.check_operand(f, ins, first, expected, relaxed, k, at);
                if let crate::ir::PairPred::Reg(q) = q {
                    let ty = f.reg(*q).ty;
                    if ty != ScalarType::Pred {
                        self.error(at, format!("the second half of operand {} of `{}` is `{}` of type {}, expected .pred", k + 1, ins.opcode.name(), f.reg(*q).name, ty.text()));
                    }
                }
            }
            _ => {}
        }
    }

    /// `.vN` instructions take vectors of N elements.
    /// `vector`: the instruction's `.vN` ([`Instruction::vector`]).
    /// `kinds`: the instruction's operands' ([`OperandKinds`]).
    fn vector_widths(&mut self, f: &Function, ins: &Instruction, kinds: OperandKinds, vector: Option<u8>, at: Span) {
        // ptxas: "Unknown video selector": `.x` ... name lanes of vector registers only.
        // Only registers with a selector matter; most operands are plain
        // registers, immediates or addresses, with nothing inside.
        let with_selectors = if kinds.has(OperandKinds::SELECTORS) { ins.operands.as_slice() } else { &[] };
        for op in with_selectors {
            if !may_hold_a_selector(op) {
                continue;
            }
            op.for_each_operand(&mut |o| {
                if let Operand::Reg(r) = o {
                    if r.sel.is_some_and(|s| s.lane().is_some()) && f.reg(r.reg).vector.is_none() {
                        let mut sel = String::new();
                        r.sel.unwrap().write(&mut sel);
                        self.error(at, format!("`{}` is not a vector register, so it has no component `{sel}`", f.reg(r.reg).name));
                    }
                }
            });
        }
        let Some(n) = vector else { return };
        for (k, (op, spec)) in ins.operands.iter().zip(ins.form.operands()).enumerate() {
            // Only the data operands, those typed by the instruction's type slot.
            if !matches!(spec.ty, OperandType::Slot(_)) {
                continue;
            }
            let found = match op {
                Operand::Vector(v) => v.len(),
                Operand::Reg(r) if r.sel.is_none() && f.reg(r.reg).vector.is_some() => f.reg(r.reg).vector.unwrap() as usize,
                _ => continue,
            };
            if found != n as usize {
                self.error(at, format!("operand {} of `{}` has {found} elements, but `.v{n}` needs {n}", k + 1, ins.opcode.name()));
            }
        }
    }

    /// A named variable accessed through a state space must live in it; an
    /// immediate address needs `.local`; in a 64-bit module global and
    /// generic addresses are 64-bit. Only for forms that access memory
    /// ([`FormFacts::memory`]; most do not).
    fn state_spaces(&mut self, f: &Function, ins: &Instruction, facts: &FormFacts, locals: &dyn Fn(&str) -> Option<StateSpace>, at: Span) {
        let mut mem_k = 0;
        for (op, spec) in ins.operands.iter().zip(ins.form.operands()) {
            if spec.mem.is_none() {
                continue;
            }
            let want = facts.space(ins, mem_k);
            mem_k += 1;
            // ptxas: "Program uses 32-bit address ... conflicting with .address_size 64".
            let single = plain_address(ins.opcode);
            if let (true, true, Operand::Addr(a)) = (self.ctx.address_64, single, op) {
                if let AddrBase::Reg(r) = a.base {
                    let global_or_generic = want.is_none_or(|w| w.base() == StateSpace::Global);
                    if global_or_generic && f.reg(r).ty.bits() == 32 {
                        let space = want.map_or("generic addressing".to_string(), |w| w.text().to_string());
                        self.error(at, format!("`{}` addresses {space} with the 32-bit register `{}` in a module with .address_size 64", ins.opcode.name(), f.reg(r).name));
                    }
                }
            }
            // ptxas: "Immediate addresses allowed only for .local state space".
            if let Operand::Addr(a) = op {
                if matches!(a.base, AddrBase::Imm(_)) && want.map(|w| w.base()) != Some(StateSpace::Local) {
                    let space = want.map_or("generic addressing".to_string(), |w| w.text().to_string());
                    self.error(at, format!("`{}` uses an immediate address with {space}; immediate addresses are allowed only for .local", ins.opcode.name()));
                }
            }
            // ptxas: "State space mismatch between instruction and address":
            // generic addressing does not reach parameters.
            if let (None, true, Operand::Addr(a)) = (want, plain_address(ins.opcode), op) {
                if let AddrBase::Sym(name) = &a.base {
                    if locals(name).or_else(|| self.ctx.globals.get(name).copied()).is_some_and(|s| s.base() == StateSpace::Param) {
                        self.error(at, format!("`{}` reaches the .param variable `{name}` through generic addressing; use `{}.param`", ins.opcode.name(), ins.opcode.name()));
                    }
                }
            }
            let Some(want) = want else { continue };
            let name = match op {
                Operand::Addr(a) => match &a.base {
                    AddrBase::Sym(s) => s.clone(),
                    _ => continue,
                },
                _ => continue,
            };
            let Some(have) = locals(&name).or_else(|| self.ctx.globals.get(&name).copied()) else { continue };
            if !types::space_fits(want, have) {
                self.error(at, format!("`{}` accesses `{name}` in {}, but it is declared in {}", ins.opcode.name(), want.text(), have.text()));
            }
        }
    }

    /// `vote` and `shfl` without `.sync` are gone on sm_70 and newer from PTX 6.4.
    fn vote_sync(&mut self, ins: &Instruction, at: Span) {
        if (ins.opcode == Opcode::VOTE || ins.opcode == Opcode::SHFL) && self.ctx.version >= (6, 4) && self.ctx.target.as_ref().is_some_and(|t| t.number >= 70) {
            let name = self.ctx.target.as_ref().unwrap().name.clone();
            let op = ins.opcode.name();
            self.error(at, format!("`{op}` without `.sync` is not supported on .target {name} from PTX ISA version 6.4; use `{op}.sync`"));
        }
    }

    /// A direct call passes as many arguments (and takes as many results) as
    /// the callee declares.
    fn call_arity(&mut self, _f: &Function, ins: &Instruction, functions: &FxHashMap<Name, Signature>, at: Span) {
        if ins.opcode != Opcode::CALL {
            return;
        }
        let (mut ret, mut target, mut args) = (None, None, None);
        for op in &ins.operands {
            match op {
                Operand::List(l) if target.is_none() => ret = Some(l.len()),
                Operand::List(l) => args = Some(l.len()),
                Operand::Sym(s) if target.is_none() => target = Some(&s.name),
                _ => {}
            }
        }
        let Some((name, callee)) = target.and_then(|t| functions.get(&**t).map(|c| (t, c))) else { return };
        let (want_args, want_ret) = (callee.params, callee.results);
        let n = args.unwrap_or(0);
        let args_ok = n == want_args || (callee.optional_last && n + 1 == want_args);
        if !args_ok || ret.unwrap_or(0) != want_ret {
            self.error(at, format!("call to `{name}` passes {} argument(s) and {} result(s), but it declares {want_args} parameter(s) and {want_ret} result(s)", args.unwrap_or(0), ret.unwrap_or(0)));
        }
    }

    /// Requirements that depend on operands rather than modifiers.
    /// `facts`: its form's; `kinds`: its operands' ([`OperandKinds`]);
    /// `vector`: the instruction's `.vN` ([`Instruction::vector`]).
    fn operand_features(&mut self, f: &Function, ins: &Instruction, facts: &FormFacts, kinds: OperandKinds, vector: Option<u8>, at: Span) {
        // Texture and surface handles in registers: "indirect texture access", PTX 3.1.
        let tex_like = matches!(ins.opcode, Opcode::TEX | Opcode::TLD4 | Opcode::TXQ | Opcode::SULD | Opcode::SUST | Opcode::SURED | Opcode::SUQ);
        // `[a, b]` is the texture, surface and tensor-map operand; loads, stores
        // and atomics take a plain address (ptxas: a syntax error).
        if plain_address(ins.opcode) && kinds.has(OperandKinds::LISTS) {
            self.error(at, format!("`{}` takes an address `[base+offset]`, not a texture or surface operand `[a, b]`", ins.opcode.name()));
        }
        if tex_like && self.ctx.version < (3, 1) {
            let indirect = ins.operands.iter().any(|op| match op {
                Operand::AddrList(v) => matches!(v.first(), Some(Operand::Reg(_))),
                Operand::Addr(a) => matches!(a.base, AddrBase::Reg(_)),
                _ => false,
            });
            if indirect {
                self.error(at, format!("`{}` with a texture or surface handle in a register (indirect access) requires PTX ISA version 3.1 or later", ins.opcode.name()));
            }
        }
        // Braced vectors: 1, 2, 4 or 8 elements; without `.vN`, a braced data operand has one.
        let braced = kinds.has(OperandKinds::BRACED) && matches!(ins.opcode, Opcode::LD | Opcode::ST | Opcode::LDU | Opcode::MOV);
        if braced {
            for (k, (op, spec)) in ins.operands.iter().zip(ins.form.operands()).enumerate() {
                let Operand::Vector(v) = op else { continue };
                if !matches!(v.len(), 1 | 2 | 4 | 8) {
                    self.error(at, format!("operand {} of `{}` is a vector of {} elements; vectors have 1, 2, 4 or 8", k + 1, ins.opcode.name(), v.len()));
                } else if vector.is_none() && v.len() > 1 && ins.opcode != Opcode::MOV && matches!(spec.ty, OperandType::Slot(_)) {
                    self.error(at, format!("operand {} of `{}` is a vector of {} elements, but the instruction has no `.v{}`", k + 1, ins.opcode.name(), v.len(), v.len()));
                }
            }
        }
        // `set` with a half-precision source and an integer result: PTX 6.5.
        if ins.opcode == Opcode::SET && self.ctx.version < (6, 5) {
            let t = ins.types();
            let int_result = t.first().is_some_and(|d| matches!(d.class(), crate::isa::TypeClass::Unsigned | crate::isa::TypeClass::Signed));
            if int_result && t.iter().skip(1).any(|s| matches!(s, ScalarType::F16 | ScalarType::F16x2)) {
                self.error(at, "`set` with a half-precision source and an integer result requires PTX ISA version 6.5 or later".to_string());
            }
        }
        // `mov` between scalars: its table accepts any types (the same syntax
        // packs and unpacks vectors), so the scalar case is checked here.
        if ins.opcode == Opcode::MOV && vector.is_none() && !braced {
            if let Some(ty) = facts.ty(ins) {
                for (k, op) in ins.operands.iter().enumerate() {
                    if let Operand::Reg(r) = op {
                        if r.sel.is_none() && f.reg(r.reg).vector.is_none() {
                            let rt = f.reg(r.reg).ty;
                            if !types::compatible(ty, rt, false) {
                                self.error(at, format!("operand {} of `mov` is `{}` of type {}, but the instruction expects {}", k + 1, f.reg(r.reg).name, rt.text(), ty.text()));
                            }
                        }
                    }
                }
            }
        }
    }

    /// Every carry consumer should be reached by a carry producer. ptxas does
    /// not check this (it accepts `addc` with no `add.cc` before it, reading
    /// whatever the flag holds), so it is a warning, not an error.
    fn carries(&mut self, f: &Function, stmts: &[Span], span: Span) {
        let a = FunctionAnalyses::compute(f);
        let carry = a.locs.carry();
        for u in &a.def_use.uses {
            if u.loc == carry && u.reaching.is_empty() {
                let at = stmts.get(u.stmt).copied().unwrap_or(span);
                self.warning(at, "this instruction reads the carry flag, but no `.cc` instruction sets it before".to_string());
            }
        }
    }
}

/// Which kinds of operand an instruction has, noted by
/// [`Verifier::operand_types`] as it goes through them: the checks that look
/// for rare ones (selectors, braced vectors, `[a, b]`) skip the instructions
/// that have none, most of them, instead of each going through the operands
/// again (renderer verify_parsed 37.5 -> 34.6 M).
#[derive(Clone, Copy, Default)]
struct OperandKinds(u8);

impl OperandKinds {
    /// An operand that may hold a register with a selector ([`may_hold_a_selector`]).
    const SELECTORS: u8 = 1;
    /// A braced vector `{a, b}`.
    const BRACED: u8 = 2;
    /// A texture or surface operand `[a, b]`.
    const LISTS: u8 = 4;

    fn note(&mut self, op: &Operand) {
        // One `match` giving the operand's bits: noting the three kinds one
        // by one made the loop 3.9 M host instructions dearer on renderer,
        // more than the passes this saves.
        self.0 |= match op {
            Operand::Reg(r) => if r.sel.is_some() { Self::SELECTORS } else { 0 },
            Operand::Vector(_) => Self::SELECTORS | Self::BRACED,
            Operand::AddrList(_) => Self::SELECTORS | Self::LISTS,
            Operand::Pair(..) | Operand::ArrayElem(_) | Operand::List(_) => Self::SELECTORS,
            Operand::Imm(_) | Operand::Addr(_) | Operand::Sym(_) | Operand::Label(_) | Operand::SReg(..) | Operand::Sink | Operand::RegOffset(..) => 0,
        };
    }

    fn has(self, kind: u8) -> bool {
        self.0 & kind != 0
    }
}

/// A register with a selector, or an operand with operands inside: only
/// these matter to the selector check.
fn may_hold_a_selector(op: &Operand) -> bool {
    match op {
        Operand::Reg(r) => r.sel.is_some(),
        Operand::Imm(_) | Operand::Addr(_) | Operand::Sym(_) | Operand::Label(_) | Operand::SReg(..) | Operand::Sink | Operand::RegOffset(..) => false,
        Operand::Vector(_) | Operand::Pair(..) | Operand::AddrList(_) | Operand::ArrayElem(_) | Operand::List(_) => true,
    }
}

/// A result operand that names no register: an immediate, a special
/// register, a variable, a label or `r+offset`, alone or in a vector.
fn not_a_register(op: &Operand) -> bool {
    match op {
        Operand::Imm(_) | Operand::SReg(..) | Operand::Sym(_) | Operand::Label(_) | Operand::RegOffset(..) => true,
        Operand::Vector(v) => v.iter().any(not_a_register),
        Operand::Pair(first, _) => not_a_register(first),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn function(body: &str) -> Function {
        let text = format!(".version 8.0\n.target sm_80\n.address_size 64\n.visible .func (.param .b32 r) f(.param .b64 p, .param .b32 %p1, .reg .b32 q)\n{{\n{body}\n}}\n");
        let m = crate::parse_str(&text).unwrap_or_else(|d| panic!("{d}"));
        match m.items.into_iter().next() {
            Some(Item::Func(f)) => *f,
            _ => unreachable!(),
        }
    }

    /// The bits [`OperandKinds::note`] gives each kind of operand are what
    /// the checks that skip on them look for.
    #[test]
    fn operand_kinds_are_what_the_checks_look_for() {
        use crate::ir::{PairPred, RegId, RegOperand, Selector};
        let reg = Operand::reg(RegId(0));
        let lane = Operand::Reg(RegOperand { sel: Some(Selector::X), ..RegOperand::plain(RegId(1)) });
        let operands = [
            reg.clone(),
            lane.clone(),
            Operand::from(1i64),
            Operand::Sink,
            Operand::RegOffset(RegId(0), 4),
            Operand::Vector(Box::new([reg.clone(), lane.clone()])),
            Operand::AddrList(Box::new([reg.clone()])),
            Operand::List(Box::new([reg.clone()])),
            Operand::Pair(Box::new(reg.clone()), PairPred::Sink),
        ];
        for op in &operands {
            let mut kinds = OperandKinds::default();
            kinds.note(op);
            assert_eq!(kinds.has(OperandKinds::SELECTORS), may_hold_a_selector(op), "{op:?}");
            assert_eq!(kinds.has(OperandKinds::BRACED), matches!(op, Operand::Vector(_)), "{op:?}");
            assert_eq!(kinds.has(OperandKinds::LISTS), matches!(op, Operand::AddrList(_)), "{op:?}");
        }
        // Noted together, the kinds add up.
        let mut kinds = OperandKinds::default();
        operands.iter().for_each(|op| kinds.note(op));
        assert_eq!(kinds.0, OperandKinds::SELECTORS | OperandKinds::BRACED | OperandKinds::LISTS);
    }

    #[test]
    fn a_flat_map_stands_for_the_walk_only_when_nothing_can_shadow_a_variable() {
        // Registers in nested blocks; variables in the outermost block and
        // in blocks side by side, declared again in each (as calls declare
        // `param0`), none named like a register: the map, which agrees with
        // the walk at every statement (before, inside and after each block).
        let bodies = [
            ".reg .b64 %rd<3>;\nld.param.u64 %rd1, [p];\n{\n.reg .b32 %r<2>;\nmov.u32 %r1, q;\n}\n.local .b32 v;\nst.local.u32 [v], q;\nret;",
            "{\n.param .b32 v;\nst.param.b32 [v], q;\n}\nmov.u32 q, 1;\n{\n.local .b32 v;\n{\n.reg .b32 %r1;\nst.local.u32 [v], q;\n}\n}\n{\n.shared .b32 w;\n}\n.param .b32 v;\nret;",
        ];
        for body in bodies {
            let f = function(body);
            let Locals::Flat(vars) = Locals::of(&f) else { panic!("expected the map: {body}") };
            let flat = Locals::Flat(vars);
            let mut walk = scopes::Walk::new(&f);
            for k in 0..f.body.as_ref().unwrap().len() {
                walk.step(k);
                for name in ["p", "%p1", "r", "q", "%rd1", "v", "w", "x"] {
                    assert_eq!(flat.space(name, k), walk.var_decl(name).map(|d| d.space), "{name} at {k} in {body}");
                }
            }
        }
        // A variable declared again where one of its name is seen (in a
        // block inside its own, or in the same block), a register or range
        // member named like a parameter (in a block: beside the parameter,
        // ptxas rejects the range as declaring `%p1` again), a label named
        // like one: the walk.
        for body in [".local .b32 v;\n{\n.local .b32 v;\n}\nret;", "{\n.local .b32 v;\n{\n.param .b32 v;\n}\n}\nret;", "{\n.reg .b64 p;\n}\nret;", "{\n.reg .b32 %p<4>;\n}\nret;", "{\np:\nbra p;\n}\nret;"] {
            assert!(matches!(Locals::of(&function(body)), Locals::Walk(_)), "{body}");
        }
    }
}
