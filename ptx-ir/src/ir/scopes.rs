//! Block scoping of the names in a function body, as ptxas reads PTX (and
//! as the parser resolves them): what a register, variable or label name
//! means at a statement, the scope-safety check the verifier runs
//! ([`check`]), the normalization that lets passes move code
//! ([`flatten_names`]), and which instructions name variables of a block
//! ([`block_variable_users`]).
//!
//! The rules (PTX ISA §9.7.12.1 `{ }`, and ptxas where the manual is silent):
//! - Registers, variables and labels belong to the `{ }` block that declares
//!   them; an inner block may declare a name again and shadow the outer one.
//! - A register or variable name means, at the point of use, the
//!   declaration found in the innermost open block among those declared so
//!   far; within one block, registers and variables (range members
//!   included) come before labels.
//! - A branch target (`bra`, `.branchtargets`) means the label of that name
//!   in the innermost enclosing block that defines one, before or after the
//!   branch. A name that at the point of use already means a
//!   `.branchtargets`/`.calltargets`/`.callprototype` label (the table of
//!   `brx.idx`, the prototype of `call`) means that one.
//!
//! The IR numbers registers and labels ([`RegId`], [`LabelId`]) but the
//! printer writes names, so an instruction moved across a `}` may come to
//! mean another register or label of the same name. [`check`] finds every
//! such use; after [`flatten_names`] no register or label name is declared
//! twice in a function and every `.reg` declaration is at the top of the
//! body, so a pure instruction can move anywhere in the function.

use super::{AddrBase, Declarator, Function, Instruction, LabelId, Name, Operand, RegId, Stmt, VarDecl};
use super::range_member;
use crate::isa::StateSpace;
use rustc_hash::{FxHashMap, FxHashSet};

/// The `{ }` blocks of a body: the block of each statement (0: the body
/// itself; a `{` belongs to the block it opens, a `}` to the enclosing one)
/// and each block's parent.
#[derive(Clone, Debug, Default)]
pub struct ScopeTree {
    pub stmt_scope: Vec<u32>,
    /// By block number; the body is its own parent.
    pub parent: Vec<u32>,
    /// The first `}` that closes nothing, or the first `{` never closed.
    pub unbalanced: Option<usize>,
}

impl ScopeTree {
    pub fn of(body: &[Stmt]) -> ScopeTree {
        let mut t = ScopeTree { stmt_scope: Vec::with_capacity(body.len()), parent: vec![0], unbalanced: None };
        let mut open = vec![(0u32, 0usize)];
        for (k, s) in body.iter().enumerate() {
            match s {
                Stmt::ScopeBegin => {
                    t.parent.push(open.last().unwrap().0);
                    open.push((t.parent.len() as u32 - 1, k));
                }
                Stmt::ScopeEnd if open.len() > 1 => {
                    open.pop();
                }
                Stmt::ScopeEnd => {
                    t.unbalanced.get_or_insert(k);
                }
                _ => {}
            }
            t.stmt_scope.push(open.last().unwrap().0);
        }
        if open.len() > 1 {
            t.unbalanced.get_or_insert(open[1].1);
        }
        t
    }

    /// Is block `outer` block `inner` or one that encloses it?
    pub fn encloses(&self, outer: u32, mut inner: u32) -> bool {
        loop {
            if inner == outer {
                return true;
            }
            if inner == 0 {
                return false;
            }
            inner = self.parent[inner as usize];
        }
    }
}

/// A declaration of a register or variable name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Site {
    /// Declarator `name` of declaration `decl` of the return list (`ret`) or
    /// of the parameter list of the signature.
    Param { ret: bool, decl: u32, name: u32 },
    /// Declarator `name` of the declaration statement `stmt`; `member` is
    /// the index within a register range (`%r<100>`).
    Body { stmt: u32, name: u32, member: Option<u32> },
}

/// What a name means at a point of the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Meaning {
    Reg(Site),
    Var(Site),
    /// `code`: a position in the code (`L:`), not a `.branchtargets`,
    /// `.calltargets` or `.callprototype` label.
    Label { id: LabelId, code: bool },
}

/// The names of one open block, declared so far.
#[derive(Default)]
struct Open<'f> {
    id: u32,
    names: FxHashMap<&'f str, Meaning>,
    ranges: FxHashMap<&'f str, (u32, Site)>,
    labels: FxHashMap<&'f str, Meaning>,
}

/// Walks a body statement by statement, knowing what each name means there.
/// Call [`Walk::step`] for every statement in order, then ask about it.
pub struct Walk<'f> {
    f: &'f Function,
    pub tree: ScopeTree,
    open: Vec<Open<'f>>,
    /// Every label definition by block and name (the block rule of branches).
    block_labels: FxHashMap<(u32, &'f str), LabelId>,
    /// The statement defining each label (the first, if defined twice).
    pub label_stmt: Vec<Option<usize>>,
}

impl<'f> Walk<'f> {
    pub fn new(f: &'f Function) -> Walk<'f> {
        let body: &[Stmt] = f.body.as_deref().unwrap_or(&[]);
        let tree = ScopeTree::of(body);
        let mut block_labels = FxHashMap::default();
        let mut label_stmt = vec![None; f.labels.len()];
        for (k, s) in body.iter().enumerate() {
            if let Some((l, _)) = label_def(s) {
                if let Some(name) = f.labels.get(l.0 as usize) {
                    block_labels.entry((tree.stmt_scope[k], &**name)).or_insert(l);
                    label_stmt[l.0 as usize].get_or_insert(k);
                }
            }
        }
        let mut w = Walk { f, tree, open: vec![Open::default()], block_labels, label_stmt };
        for (ret, list) in [(true, &f.ret), (false, &f.params)] {
            for (d, decl) in list.iter().flatten().enumerate() {
                for (n, name) in decl.names.iter().enumerate() {
                    let site = Site::Param { ret, decl: d as u32, name: n as u32 };
                    w.declare(decl, name, site);
                }
            }
        }
        w
    }

    fn declare(&mut self, decl: &'f VarDecl, name: &'f Declarator, site: Site) {
        if &*name.name == "_" {
            return;
        }
        let top = self.open.last_mut().unwrap();
        match (decl.space, name.range) {
            (StateSpace::Reg, Some(n)) => {
                top.ranges.insert(&name.name, (n, site));
            }
            (StateSpace::Reg, None) => {
                top.names.insert(&name.name, Meaning::Reg(site));
            }
            _ => {
                top.names.insert(&name.name, Meaning::Var(site));
            }
        }
    }

    /// Applies statement `k` (the next one): opens or closes a block,
    /// declares names, defines a label.
    pub fn step(&mut self, k: usize) {
        let f = self.f;
        let Some(s) = f.body.as_ref().and_then(|b| b.get(k)) else { return };
        match s {
            Stmt::ScopeBegin => {
                let id = self.tree.stmt_scope[k];
                self.open.push(Open { id, ..Open::default() });
            }
            Stmt::ScopeEnd => {
                if self.open.len() > 1 {
                    self.open.pop();
                }
            }
            Stmt::Decl(d) => {
                for (n, name) in d.names.iter().enumerate() {
                    self.declare(d, name, Site::Body { stmt: k as u32, name: n as u32, member: None });
                }
            }
            _ => {
                if let Some((l, code)) = label_def(s) {
                    if let Some(name) = f.labels.get(l.0 as usize) {
                        self.open.last_mut().unwrap().labels.entry(name).or_insert(Meaning::Label { id: l, code });
                    }
                }
            }
        }
    }

    /// What `name` means here as an operand: innermost block first, among
    /// the names declared so far.
    pub fn lookup(&self, name: &str) -> Option<Meaning> {
        let split = range_member(name);
        for o in self.open.iter().rev() {
            if let Some(m) = o.names.get(name) {
                return Some(*m);
            }
            if let Some((prefix, i)) = split {
                if let Some(&(count, site)) = o.ranges.get(prefix) {
                    if i < count {
                        return Some(Meaning::Reg(match site {
                            Site::Body { stmt, name, .. } => Site::Body { stmt, name, member: Some(i) },
                            p => p,
                        }));
                    }
                }
            }
            if let Some(m) = o.labels.get(name) {
                return Some(*m);
            }
        }
        None
    }

    /// The label a branch here to `name` goes to (the block rule).
    pub fn branch_target(&self, name: &str) -> Option<LabelId> {
        let mut scope = self.open.last().unwrap().id;
        loop {
            if let Some(l) = self.block_labels.get(&(scope, name)) {
                return Some(*l);
            }
            if scope == 0 {
                return None;
            }
            scope = self.tree.parent[scope as usize];
        }
    }

    /// What a label operand written `name` here means: a label, or the
    /// register or variable that takes the name.
    pub fn label_operand(&self, name: &str) -> Result<Option<LabelId>, Meaning> {
        match self.lookup(name) {
            Some(Meaning::Label { id, code: false }) => Ok(Some(id)),
            Some(m @ (Meaning::Reg(_) | Meaning::Var(_))) => Err(m),
            _ => Ok(self.branch_target(name)),
        }
    }

    /// The declaration of the variable `name` means here, if a variable of
    /// the function (not a module variable).
    pub fn var_decl(&self, name: &str) -> Option<&'f VarDecl> {
        match self.lookup(name)? {
            Meaning::Var(site) => site_decl(self.f, site).map(|(d, _)| d),
            _ => None,
        }
    }

    /// The block open here.
    pub fn scope(&self) -> u32 {
        self.open.last().unwrap().id
    }
}

/// The label a statement defines, and whether it is a code position.
fn label_def(s: &Stmt) -> Option<(LabelId, bool)> {
    match s {
        Stmt::Label(l) => Some((*l, true)),
        Stmt::BranchTargets(l, _) | Stmt::CallTargets(l, _) | Stmt::CallPrototype(l, _) => Some((*l, false)),
        _ => None,
    }
}

/// A name an instruction uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameUse<'a> {
    Reg(RegId),
    Label(LabelId),
    /// A variable or function (`[x]`, `x+4`, `x[i]`, `call f`).
    Var(&'a str),
}

/// Every name an instruction uses: its guard, registers, labels and
/// variables, in operand order.
pub fn names_used(ins: &Instruction) -> Vec<NameUse<'_>> {
    let mut out = Vec::new();
    if let Some(g) = ins.guard {
        out.push(NameUse::Reg(g.reg));
    }
    for op in &ins.operands {
        op.walk(&mut |o| match o {
            Operand::Reg(r) => out.push(NameUse::Reg(r.reg)),
            Operand::RegOffset(r, _) => out.push(NameUse::Reg(*r)),
            Operand::Pair(_, super::PairPred::Reg(r)) => out.push(NameUse::Reg(*r)),
            Operand::Label(l) => out.push(NameUse::Label(*l)),
            Operand::Sym(s, _) => out.push(NameUse::Var(s)),
            Operand::ArrayElem(e) => out.push(NameUse::Var(&e.name)),
            Operand::Addr(a) => match &a.base {
                AddrBase::Reg(r) => out.push(NameUse::Reg(*r)),
                AddrBase::Sym(s) => out.push(NameUse::Var(s)),
                AddrBase::Imm(_) => {}
            },
            _ => {}
        });
    }
    out
}

/// A violation of the scoping rules: the statement (if any) and the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopeError {
    pub stmt: Option<usize>,
    pub message: String,
    /// A register or label id outside the function's tables.
    pub bad_id: bool,
}

/// Checks that the function means by every name what its ids say:
/// every register, label and variable an instruction names is declared in a
/// block open there and, looked up by name as a reader of the printed text
/// would, is that same register or label (not one of the same name that
/// shadows it, nor one of another block); no two registers of the same name
/// resolve to one declaration; each register has its declaration's type;
/// blocks are balanced; no name is declared twice in one block; and every
/// id is within the function's tables.
pub fn check(f: &Function) -> Vec<ScopeError> {
    let mut c = Checker { f, out: Vec::new() };
    let Some(body) = &f.body else { return c.out };
    if !c.ids_in_range(body) {
        return c.out;
    }
    let mut w = Walk::new(f);
    if let Some(k) = w.tree.unbalanced {
        let what = if matches!(body[k], Stmt::ScopeEnd) { "a `}` closes no block" } else { "a `{` is never closed" };
        c.error(Some(k), what.to_string());
        return c.out;
    }
    let mut reg_site: Vec<Option<Site>> = vec![None; f.regs.len()];
    let mut site_reg: FxHashMap<Site, RegId> = FxHashMap::default();
    // Declared names by block (and whether as a range's prefix); labels so far.
    let mut declared: FxHashMap<(u32, &str), (usize, bool)> = FxHashMap::default();
    let mut labels_so_far: FxHashSet<(u32, &str)> = FxHashSet::default();
    for (k, s) in body.iter().enumerate() {
        w.step(k);
        let scope = w.tree.stmt_scope[k];
        match s {
            Stmt::Instr(ins) => c.instruction(&w, k, ins, &mut reg_site, &mut site_reg),
            Stmt::Decl(d) => {
                for n in d.names.iter().filter(|n| &*n.name != "_") {
                    if let Some((prev, _)) = declared.insert((scope, &n.name), (k, n.range.is_some())) {
                        c.error(Some(k), format!("`{}` is declared twice in one block (statements {prev} and {k})", n.name));
                    } else if labels_so_far.contains(&(scope, &*n.name)) {
                        c.error(Some(k), format!("`{}` is a label of this block, so it cannot also be declared here", n.name));
                    }
                }
            }
            Stmt::BranchTargets(_, targets) => {
                for t in targets {
                    let name = f.label_name(*t);
                    match w.branch_target(name) {
                        Some(l) if l == *t => {}
                        Some(_) => c.error(Some(k), format!("the `.branchtargets` label `{name}` here means another label of that name (the printed text would bind it differently)")),
                        None => c.error(Some(k), format!("the `.branchtargets` label `{name}` is not defined in this block or an enclosing one")),
                    }
                }
            }
            _ => {}
        }
        if let Some((l, _)) = label_def(s) {
            let name = f.label_name(l);
            if w.label_stmt[l.0 as usize] != Some(k) {
                c.error(Some(k), format!("label `{name}` (label #{}) is defined twice", l.0));
            } else if w.block_labels.get(&(scope, name)) != Some(&l) {
                c.error(Some(k), format!("label `{name}` is defined twice in one block"));
            }
            if let Some((prev, false)) = declared.get(&(scope, name)) {
                c.error(Some(k), format!("`{name}` is declared in this block (statement {prev}), so it cannot also be a label here"));
            }
            labels_so_far.insert((scope, name));
        }
    }
    c.out
}

struct Checker<'f> {
    f: &'f Function,
    out: Vec<ScopeError>,
}

impl<'f> Checker<'f> {
    fn error(&mut self, stmt: Option<usize>, msg: String) {
        self.out.push(ScopeError { stmt, message: format!("in function `{}`: {msg}", self.f.name), bad_id: false });
    }

    fn bad_id(&mut self, stmt: usize, msg: String) {
        self.error(Some(stmt), msg);
        self.out.last_mut().unwrap().bad_id = true;
    }

    /// Every register and label id within the tables; false (with errors) if not.
    fn ids_in_range(&mut self, body: &[Stmt]) -> bool {
        let (nregs, nlabels) = (self.f.regs.len(), self.f.labels.len());
        let before = self.out.len();
        for (k, s) in body.iter().enumerate() {
            let mut labels: Vec<LabelId> = Vec::new();
            match s {
                Stmt::Instr(ins) => {
                    for u in names_used(ins) {
                        match u {
                            NameUse::Reg(r) if r.0 as usize >= nregs => self.bad_id(k, format!("register #{} is not in the register table ({nregs} registers)", r.0)),
                            NameUse::Label(l) => labels.push(l),
                            _ => {}
                        }
                    }
                }
                Stmt::BranchTargets(l, t) => {
                    labels.push(*l);
                    labels.extend(t);
                }
                _ => labels.extend(label_def(s).map(|(l, _)| l)),
            }
            for l in labels {
                if l.0 as usize >= nlabels {
                    self.bad_id(k, format!("label #{} is not in the label table ({nlabels} labels)", l.0));
                }
            }
        }
        self.out.len() == before
    }

    fn instruction(&mut self, w: &Walk<'f>, k: usize, ins: &Instruction, reg_site: &mut [Option<Site>], site_reg: &mut FxHashMap<Site, RegId>) {
        let f = self.f;
        for u in names_used(ins) {
            match u {
                NameUse::Reg(r) => {
                    let reg = f.reg(r);
                    let site = match w.lookup(&reg.name) {
                        Some(Meaning::Reg(site)) => site,
                        None => {
                            self.error(Some(k), format!("register `{}` is not declared in a block open here", reg.name));
                            continue;
                        }
                        Some(m) => {
                            self.error(Some(k), format!("register `{}`: the name means {} here", reg.name, describe(m)));
                            continue;
                        }
                    };
                    match reg_site[r.0 as usize] {
                        None => reg_site[r.0 as usize] = Some(site),
                        Some(s) if s == site => {}
                        Some(_) => {
                            self.error(Some(k), format!("register `{}` here means another declaration of that name than at its other uses (moved across a `}}`, or shadowed)", reg.name));
                            continue;
                        }
                    }
                    match site_reg.get(&site) {
                        None => {
                            site_reg.insert(site, r);
                            if let Some((ty, vector)) = declared_type(f, site) {
                                if (ty, vector) != (reg.ty, reg.vector) {
                                    self.error(Some(k), format!("register `{}` is {} in the register table but declared {}", reg.name, type_text(reg.ty, reg.vector), type_text(ty, vector)));
                                }
                            }
                        }
                        Some(other) if *other == r => {}
                        Some(other) => self.error(Some(k), format!("registers #{} and #{} are both named `{}` and mean the same declaration here: printed, they would be one register", other.0, r.0, reg.name)),
                    }
                }
                NameUse::Label(l) => {
                    let name = f.label_name(l);
                    match w.label_operand(name) {
                        Ok(Some(found)) if found == l => {
                            if let Some(def) = w.label_stmt[l.0 as usize] {
                                let directive = !matches!(f.body.as_ref().unwrap()[def], Stmt::Label(_));
                                if directive && def > k {
                                    // ptxas: "Unknown symbol" (a table or prototype must come first).
                                    self.error(Some(k), format!("`{}` names `{name}` before its definition; a `.branchtargets`, `.calltargets` or `.callprototype` label must be defined before use", ins.opcode.name()));
                                }
                            }
                        }
                        Ok(Some(_)) => self.error(Some(k), format!("label `{name}` here means another label of that name (of an inner or enclosing block)")),
                        Ok(None) => self.error(Some(k), format!("label `{name}` is not defined in this block or an enclosing one")),
                        Err(m) => self.error(Some(k), format!("label `{name}`: the name means {} here", describe(m))),
                    }
                }
                NameUse::Var(name) => {
                    if let Some(m @ (Meaning::Reg(_) | Meaning::Label { .. })) = w.lookup(name) {
                        self.error(Some(k), format!("variable `{name}`: the name means {} here", describe(m)));
                    }
                }
            }
        }
    }
}

fn describe(m: Meaning) -> &'static str {
    match m {
        Meaning::Reg(_) => "a register",
        Meaning::Var(_) => "a variable",
        Meaning::Label { .. } => "a label",
    }
}

fn type_text(ty: crate::isa::ScalarType, vector: Option<u8>) -> String {
    match vector {
        Some(n) => format!(".v{n}{}", ty.text()),
        None => ty.text().to_string(),
    }
}

/// The declaration a site is in.
fn site_decl(f: &Function, site: Site) -> Option<(&VarDecl, &Declarator)> {
    let d = match site {
        Site::Param { ret, decl, .. } => (if ret { &f.ret } else { &f.params }).as_ref()?.get(decl as usize)?,
        Site::Body { stmt, .. } => match f.body.as_ref()?.get(stmt as usize)? {
            Stmt::Decl(d) => d,
            _ => return None,
        },
    };
    let n = match site {
        Site::Param { name, .. } | Site::Body { name, .. } => name,
    };
    Some((d, d.names.get(n as usize)?))
}

/// The type and vector width a register site declares.
fn declared_type(f: &Function, site: Site) -> Option<(crate::isa::ScalarType, Option<u8>)> {
    site_decl(f, site).map(|(d, _)| (d.ty, d.vector))
}

/// For each statement: does the instruction name a variable declared in the
/// body (a `.param` of a call block, a `.local` or `.shared` of a block, or
/// any declared after the body's leading declarations)? Such a name means
/// that declaration only where it is visible: a pass must not move these
/// instructions (signature parameters, module variables and variables of
/// the leading declarations are visible everywhere).
pub fn block_variable_users(f: &Function) -> Vec<bool> {
    let Some(body) = &f.body else { return Vec::new() };
    let lead = leading_decls(body);
    let mut w = Walk::new(f);
    let mut out = vec![false; body.len()];
    for (k, s) in body.iter().enumerate() {
        w.step(k);
        let Stmt::Instr(ins) = s else { continue };
        out[k] = names_used(ins).iter().any(|u| match u {
            NameUse::Var(name) => matches!(w.lookup(name), Some(Meaning::Var(Site::Body { stmt, .. })) if stmt as usize >= lead),
            _ => false,
        });
    }
    out
}

/// Does the instruction at statement `k` name a block's variable (see
/// [`block_variable_users`], which answers for every statement at once)?
pub fn names_block_variable(f: &Function, k: usize) -> bool {
    block_variable_users(f).get(k).copied().unwrap_or(false)
}

/// How many statements open the body with declarations only.
fn leading_decls(body: &[Stmt]) -> usize {
    body.iter().take_while(|s| matches!(s, Stmt::Decl(_))).count()
}

/// Gives every register and label of `f` a name declared once in the
/// function, and moves every `.reg` declaration to the body's leading
/// declarations, so that a register name means the same register anywhere
/// in the function: afterwards a pure instruction can be moved anywhere
/// without changing what its names mean.
///
/// Only names that shadow or collide are changed, deterministically: the
/// first declaration (signature, then body order; registers before labels)
/// keeps its name, the others become `name_N`, with `N` the smallest number
/// that makes a name used nowhere in the function (no register, label,
/// variable or referenced symbol, no member of any range). A register range
/// declared in a block moves whole when none of its names is taken, else it
/// becomes a list of the members in use. Variables declared in blocks stay
/// where they are (see [`block_variable_users`]), and so do the blocks.
///
/// Fails, changing nothing, when [`check`] finds a problem.
pub fn flatten_names(f: &mut Function) -> Result<(), Vec<ScopeError>> {
    let errors = check(f);
    if !errors.is_empty() {
        return Err(errors);
    }
    if f.body.is_none() {
        return Ok(());
    }
    let plan = Plan::make(f);
    plan.apply(f);
    Ok(())
}

/// What [`flatten_names`] renames and moves.
struct Plan {
    /// New names of registers and labels (by id); `None`: unchanged.
    reg_names: Vec<Option<Name>>,
    label_names: Vec<Option<Name>>,
    /// New declarator lists of `.reg` declaration statements, by statement.
    decls: FxHashMap<usize, Vec<Declarator>>,
    /// `.reg` declaration statements to move to the leading declarations.
    moved: Vec<usize>,
    lead: usize,
}

/// The names a function uses, for picking new ones.
struct Taken {
    /// Every name written anywhere in the function (also the old ones).
    all: FxHashSet<Name>,
    /// Every register range prefix declared anywhere, with the largest count.
    ranges: FxHashMap<Name, u32>,
}

impl Taken {
    fn covered(&self, name: &str) -> bool {
        range_member(name).is_some_and(|(p, i)| self.ranges.get(p).is_some_and(|&n| i < n))
    }

    /// `base_N` for the smallest `N` naming nothing in the function; taken at once.
    fn fresh(&mut self, base: &str) -> Name {
        let mut n = 1u32;
        loop {
            let cand: Name = format!("{base}_{n}").into();
            if !self.all.contains(&cand) && !self.covered(&cand) {
                self.all.insert(cand.clone());
                return cand;
            }
            n += 1;
        }
    }
}

impl Plan {
    fn make(f: &Function) -> Plan {
        let body = f.body.as_ref().unwrap();
        let lead = leading_decls(body);
        // Which declaration each register is: from its uses, then unused
        // table entries to unused declarations of their name, in order.
        let mut w = Walk::new(f);
        let mut reg_site: Vec<Option<Site>> = vec![None; f.regs.len()];
        for (k, s) in body.iter().enumerate() {
            w.step(k);
            if let Stmt::Instr(ins) = s {
                for u in names_used(ins) {
                    if let NameUse::Reg(r) = u {
                        if let Some(Meaning::Reg(site)) = w.lookup(&f.reg(r).name) {
                            reg_site[r.0 as usize] = Some(site);
                        }
                    }
                }
            }
        }
        let mut site_regs: FxHashMap<Site, Vec<RegId>> = FxHashMap::default();
        for (r, s) in reg_site.iter().enumerate() {
            if let Some(s) = s {
                site_regs.entry(*s).or_default().push(RegId(r as u32));
            }
        }
        let sites = reg_sites(f);
        let mut unused: FxHashMap<&str, Vec<Site>> = FxHashMap::default();
        for &(site, d) in sites.iter().rev() {
            if d.range.is_none() && !site_regs.contains_key(&site) {
                unused.entry(&d.name).or_default().push(site);
            }
        }
        for (r, reg) in f.regs.iter().enumerate() {
            if reg_site[r].is_some() {
                continue;
            }
            if let Some(site) = unused.get_mut(&*reg.name).and_then(|v| v.pop()) {
                reg_site[r] = Some(site);
                site_regs.entry(site).or_default().push(RegId(r as u32));
            }
        }

        // Names that registers must not take: labels, variables, symbols.
        let mut taken = Taken { all: FxHashSet::default(), ranges: FxHashMap::default() };
        let mut fixed: FxHashSet<Name> = FxHashSet::default();
        for r in &f.regs {
            taken.all.insert(r.name.clone());
        }
        for l in &f.labels {
            taken.all.insert(l.clone());
        }
        for_each_fixed_name(f, &mut |n| {
            fixed.insert(n.into());
        });
        taken.all.extend(fixed.iter().cloned());
        for &(_, d) in &sites {
            taken.all.insert(d.name.clone());
            if let Some(n) = d.range {
                let e = taken.ranges.entry(d.name.clone()).or_insert(0);
                *e = (*e).max(n);
            }
        }

        // Registers: the first declaration of a name keeps it.
        let mut claimed: FxHashSet<Name> = FxHashSet::default();
        let mut claimed_ranges: FxHashMap<Name, u32> = FxHashMap::default();
        let mut claimed_by_prefix: FxHashMap<Name, Vec<u32>> = FxHashMap::default();
        let covered_by_claimed = |cr: &FxHashMap<Name, u32>, name: &str| range_member(name).is_some_and(|(p, i)| cr.get(p).is_some_and(|&n| i < n));
        let fixed_by_prefix = {
            let mut m: FxHashMap<&str, Vec<u32>> = FxHashMap::default();
            for n in &fixed {
                if let Some((p, i)) = range_member(n) {
                    m.entry(p).or_default().push(i);
                }
            }
            m
        };
        let claim = |name: &Name, claimed: &mut FxHashSet<Name>, by_prefix: &mut FxHashMap<Name, Vec<u32>>| {
            claimed.insert(name.clone());
            if let Some((p, i)) = range_member(name) {
                by_prefix.entry(p.into()).or_default().push(i);
            }
        };
        let mut plan = Plan { reg_names: vec![None; f.regs.len()], label_names: vec![None; f.labels.len()], decls: FxHashMap::default(), moved: Vec::new(), lead };
        let mut new_lists: FxHashMap<usize, Vec<Declarator>> = FxHashMap::default();
        for &(site, d) in &sites {
            let regs = site_regs.get(&site).map(|v| v.as_slice()).unwrap_or(&[]);
            let stmt = match site {
                Site::Body { stmt, .. } => Some(stmt as usize),
                Site::Param { .. } => None,
            };
            let free = |name: &str, claimed: &FxHashSet<Name>, cr: &FxHashMap<Name, u32>| !fixed.contains(name) && !claimed.contains(name) && !covered_by_claimed(cr, name);
            let mut decl_out: Vec<Declarator> = Vec::new();
            match d.range {
                None => {
                    let name = if stmt.is_none() || free(&d.name, &claimed, &claimed_ranges) { d.name.clone() } else { taken.fresh(&d.name) };
                    claim(&name, &mut claimed, &mut claimed_by_prefix);
                    for r in regs {
                        if f.regs[r.0 as usize].name != name {
                            plan.reg_names[r.0 as usize] = Some(name.clone());
                        }
                    }
                    decl_out.push(Declarator { name, ..d.clone() });
                }
                Some(count) => {
                    let clash = |ms: Option<&Vec<u32>>| ms.is_some_and(|v| v.iter().any(|&i| i < count));
                    let whole = stmt.is_none()
                        || !(claimed_ranges.contains_key(&d.name)
                            || clash(claimed_by_prefix.get(&d.name))
                            || clash(fixed_by_prefix.get(&*d.name)));
                    if whole {
                        claimed_ranges.insert(d.name.clone(), count);
                        decl_out.push(d.clone());
                    } else {
                        // Only the members in use, each under a name of its own.
                        let mut members: Vec<(u32, RegId)> = regs
                            .iter()
                            .map(|&r| {
                                let i = match reg_site[r.0 as usize] {
                                    Some(Site::Body { member: Some(i), .. }) => i,
                                    _ => 0,
                                };
                                (i, r)
                            })
                            .collect();
                        members.sort();
                        for (_, r) in members {
                            let old = &f.regs[r.0 as usize].name;
                            let name = if free(old, &claimed, &claimed_ranges) { old.clone() } else { taken.fresh(old) };
                            claim(&name, &mut claimed, &mut claimed_by_prefix);
                            if *old != name {
                                plan.reg_names[r.0 as usize] = Some(name.clone());
                            }
                            decl_out.push(Declarator { name, range: None, dims: Vec::new(), init: None });
                        }
                    }
                }
            }
            if let Some(k) = stmt {
                new_lists.entry(k).or_default().extend(decl_out);
            }
        }
        // Labels: after the registers, in order of definition.
        let mut label_claimed: FxHashSet<Name> = FxHashSet::default();
        for k in 0..body.len() {
            let Some((l, _)) = label_def(&body[k]) else { continue };
            let old = &f.labels[l.0 as usize];
            let free = !fixed.contains(old) && !claimed.contains(old) && !covered_by_claimed(&claimed_ranges, old) && !label_claimed.contains(old);
            let name = if free { old.clone() } else { taken.fresh(old) };
            label_claimed.insert(name.clone());
            if *old != name {
                plan.label_names[l.0 as usize] = Some(name);
            }
        }
        // Declarations: rewritten where names changed, moved when nested or late.
        let tree = &w.tree;
        for (k, s) in body.iter().enumerate() {
            let Stmt::Decl(d) = s else { continue };
            if d.space != StateSpace::Reg {
                continue;
            }
            let list = new_lists.remove(&k).unwrap_or_default();
            if list != d.names {
                plan.decls.insert(k, list);
            }
            if k >= lead || tree.stmt_scope[k] != 0 {
                plan.moved.push(k);
            }
        }
        plan
    }

    fn apply(self, f: &mut Function) {
        for (r, n) in self.reg_names.into_iter().enumerate() {
            if let Some(n) = n {
                f.regs[r].name = n;
            }
        }
        for (l, n) in self.label_names.into_iter().enumerate() {
            if let Some(n) = n {
                f.labels[l] = n;
            }
        }
        let body = std::mem::take(f.body.as_mut().unwrap());
        let mut decls = self.decls;
        let mut out = Vec::with_capacity(body.len());
        let mut moved = Vec::new();
        let moved_set: FxHashSet<usize> = self.moved.iter().copied().collect();
        let mut at = 0;
        for (k, mut s) in body.into_iter().enumerate() {
            if let (Stmt::Decl(d), Some(list)) = (&mut s, decls.remove(&k)) {
                d.names = list;
                if d.names.is_empty() {
                    continue;
                }
            }
            if moved_set.contains(&k) {
                moved.push(s);
            } else {
                out.push(s);
                if k < self.lead {
                    at = out.len();
                }
            }
        }
        out.splice(at..at, moved);
        *f.body.as_mut().unwrap() = out;
    }
}

/// Every register declaration (signature first, then the body in order),
/// with its declarator.
fn reg_sites(f: &Function) -> Vec<(Site, &Declarator)> {
    let mut out = Vec::new();
    for (ret, list) in [(true, &f.ret), (false, &f.params)] {
        for (d, decl) in list.iter().flatten().enumerate() {
            if decl.space == StateSpace::Reg {
                for (n, name) in decl.names.iter().enumerate() {
                    out.push((Site::Param { ret, decl: d as u32, name: n as u32 }, name));
                }
            }
        }
    }
    for (k, s) in f.body.iter().flatten().enumerate() {
        if let Stmt::Decl(d) = s {
            if d.space == StateSpace::Reg {
                for (n, name) in d.names.iter().enumerate() {
                    out.push((Site::Body { stmt: k as u32, name: n as u32, member: None }, name));
                }
            }
        }
    }
    out
}

/// Every name of `f` that is no register or label: variables declared in
/// the signature and the body, and every symbol referenced (module
/// variables and functions, call targets, initializers, `.loc`).
fn for_each_fixed_name(f: &Function, out: &mut dyn FnMut(&str)) {
    let decl = |d: &VarDecl, out: &mut dyn FnMut(&str)| {
        for n in &d.names {
            if d.space != StateSpace::Reg {
                out(&n.name);
            }
            if let Some(i) = &n.init {
                i.exprs(&mut |e| e.symbols(out));
            }
        }
    };
    for d in f.ret.iter().chain(&f.params).flatten() {
        decl(d, out);
    }
    for s in f.body.iter().flatten() {
        match s {
            Stmt::Decl(d) => decl(d, out),
            Stmt::Instr(ins) => {
                for u in names_used(ins) {
                    if let NameUse::Var(n) = u {
                        out(n);
                    }
                }
            }
            Stmt::CallTargets(_, fs) => fs.iter().for_each(|n| out(n)),
            Stmt::Loc(l) => {
                if let Some(e) = &l.function_name {
                    e.symbols(out);
                }
            }
            _ => {}
        }
    }
}
