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
//!   included) come before labels, and a range's members before a name
//!   declared on its own earlier (`.reg %r05;` then `.reg %r<9>;`: `%r05`
//!   then means member 5; ptxas reads a member's digits as decimal with
//!   leading zeros, [`range_member`](crate::ir::range_member)).
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

mod check;
mod flatten;

pub use check::{check, ScopeError};
pub use flatten::{flatten_names, flatten_names_undoably, Unflatten};

use super::{is_member_of, range_member};
use super::{AddrBase, Decl, DeclName, Function, Instruction, LabelId, Operand, RegId, Stmt, VarDecl};
use crate::isa::StateSpace;
use smallvec::SmallVec;
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
    /// The body's label definitions ([`Walk::label_stmt`],
    /// [`Walk::block_label`]), found at the first question about them:
    /// [`block_register_users`] asks none, and finding them was 1.3 M of
    /// its 8.5 M host instructions on matrix_free at -O2 (11 walks).
    labels: std::cell::OnceCell<LabelDefs<'f>>,
    /// Changes whenever a step may change what [`Walk::lookup`] gives for a
    /// register's name (a block opens or closes, names are declared, a label
    /// takes a name that meant a register): a register looked up at one
    /// generation means the same at every point of that generation.
    pub generation: u32,
    /// The first bytes of every register name and range prefix declared so
    /// far, a bit per byte value ([`Walk::may_mean_register`]).
    reg_initials: [u64; 4],
}

/// Where a body defines its labels.
struct LabelDefs<'f> {
    /// Every label definition by block and name (the block rule of branches).
    by_block: FxHashMap<(u32, &'f str), LabelId>,
    /// The statement defining each label (the first, if defined twice).
    stmt: Vec<Option<usize>>,
}

impl<'f> LabelDefs<'f> {
    fn of(f: &'f Function, tree: &ScopeTree) -> LabelDefs<'f> {
        let body: &[Stmt] = f.body.as_deref().unwrap_or(&[]);
        let mut defs = LabelDefs { by_block: FxHashMap::default(), stmt: vec![None; f.labels.len()] };
        for (k, s) in body.iter().enumerate() {
            if let Some((l, _)) = label_def(s) {
                if let Some(name) = f.labels.get(l.0 as usize) {
                    defs.by_block.entry((tree.stmt_scope[k], &**name)).or_insert(l);
                    defs.stmt[l.0 as usize].get_or_insert(k);
                }
            }
        }
        defs
    }
}

impl<'f> Walk<'f> {
    pub fn new(f: &'f Function) -> Walk<'f> {
        let body: &[Stmt] = f.body.as_deref().unwrap_or(&[]);
        let tree = ScopeTree::of(body);
        let mut w = Walk { f, tree, open: vec![Open::default()], labels: std::cell::OnceCell::new(), generation: 0, reg_initials: [0; 4] };
        for (ret, list) in [(true, &f.ret), (false, &f.params)] {
            for (d, decl) in list.iter().flatten().enumerate() {
                for (n, name) in decl.names.iter().enumerate() {
                    let site = Site::Param { ret, decl: d as u32, name: n as u32 };
                    w.declare(decl.space, name.into(), site);
                }
            }
        }
        w
    }

    fn label_defs(&self) -> &LabelDefs<'f> {
        self.labels.get_or_init(|| LabelDefs::of(self.f, &self.tree))
    }

    /// The statement defining label `l` (the first, if defined twice).
    pub fn label_stmt(&self, l: LabelId) -> Option<usize> {
        self.label_defs().stmt.get(l.0 as usize).copied().flatten()
    }

    /// The label named `name` that block `scope` itself defines (the first).
    pub(crate) fn block_label(&self, scope: u32, name: &str) -> Option<LabelId> {
        self.label_defs().by_block.get(&(scope, name)).copied()
    }

    fn declare(&mut self, space: StateSpace, name: DeclName<'f>, site: Site) {
        if name.name.as_str() == "_" {
            return;
        }
        if space == StateSpace::Reg {
            match name.name.as_bytes().first() {
                Some(&b) => self.reg_initials[b as usize >> 6] |= 1 << (b & 63),
                None => self.reg_initials = [u64::MAX; 4],
            }
        }
        let top = self.open.last_mut().unwrap();
        match (space, name.range) {
            (StateSpace::Reg, Some(n)) => {
                if !top.names.is_empty() {
                    top.names.retain(|other, _| !is_member_of(other, name.name, n));
                }
                top.ranges.insert(name.name, (n, site));
            }
            (StateSpace::Reg, None) => {
                top.names.insert(name.name, Meaning::Reg(site));
            }
            _ => {
                top.names.insert(name.name, Meaning::Var(site));
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
                self.generation += 1;
            }
            Stmt::ScopeEnd => {
                if self.open.len() > 1 {
                    self.open.pop();
                }
                self.generation += 1;
            }
            Stmt::Decl(d) => {
                for (n, name) in d.names().enumerate() {
                    self.declare(d.space(), name, Site::Body { stmt: k as u32, name: n as u32, member: None });
                }
                self.generation += 1;
            }
            _ => {
                if let Some((l, code)) = label_def(s) {
                    if let Some(name) = f.labels.get(l.0 as usize) {
                        // Only a name that means a register here can come to
                        // mean this label instead.
                        if self.may_mean_register(name) && matches!(self.lookup(name), Some(Meaning::Reg(_))) {
                            self.generation += 1;
                        }
                        self.open.last_mut().unwrap().labels.entry(name).or_insert(Meaning::Label { id: l, code });
                    }
                }
            }
        }
    }

    /// Can [`Walk::lookup`] give a register for `name` here? Not unless a
    /// register name or range prefix declared so far starts as `name` does
    /// (a name means a register only as such a name or a member of such a
    /// range): a label definition asks, and its name (`$L__BB0_3`) rarely
    /// starts as a register's (`%r`); looking every one up was 1.0 M of
    /// matrix_free's -O2 run.
    pub fn may_mean_register(&self, name: &str) -> bool {
        match name.as_bytes().first() {
            Some(&b) => self.reg_initials[b as usize >> 6] & (1 << (b & 63)) != 0,
            None => true,
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
            if let Some(l) = self.block_label(scope, name) {
                return Some(l);
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
            Meaning::Var(site) => site_decl(self.f, site)?.as_var(),
            _ => None,
        }
    }

    /// The block open here.
    pub fn scope(&self) -> u32 {
        self.open.last().unwrap().id
    }
}

/// The label a statement defines, and whether it is a code position.
pub(crate) fn label_def(s: &Stmt) -> Option<(LabelId, bool)> {
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
pub fn names_used(ins: &Instruction) -> SmallVec<[NameUse<'_>; 6]> {
    let mut out = SmallVec::new();
    for_each_name_used(ins, |u| out.push(u));
    out
}

/// [`names_used`], given one at a time: for a caller that needs no list
/// (the scope check's id check and the flattening's variable names ran
/// through 12,293 lists each on histogram at -O2, 183 host instructions a
/// list).
pub fn for_each_name_used<'a>(ins: &'a Instruction, mut visit: impl FnMut(NameUse<'a>)) {
    if let Some(g) = ins.guard {
        visit(NameUse::Reg(g.reg));
    }
    for op in &ins.operands {
        op.for_each_operand(&mut |o| match o {
            Operand::Reg(r) => visit(NameUse::Reg(r.reg)),
            Operand::RegOffset(r, _) => visit(NameUse::Reg(*r)),
            Operand::Pair(_, super::PairPred::Reg(r)) => visit(NameUse::Reg(*r)),
            Operand::Label(l) => visit(NameUse::Label(*l)),
            Operand::Sym(s) => visit(NameUse::Var(&s.name)),
            Operand::ArrayElem(e) => visit(NameUse::Var(&e.name)),
            Operand::Addr(a) => match &a.base {
                AddrBase::Reg(r) => visit(NameUse::Reg(*r)),
                AddrBase::Sym(s) => visit(NameUse::Var(s)),
                AddrBase::Imm(_) => {}
            },
            _ => {}
        });
    }
}

/// The names each instruction of a body uses ([`for_each_name_used`]),
/// found once for the scope check and the flattening: on histogram at -O2
/// they walked every instruction's operands three times (the id check, the
/// check proper, the fixed names), 12,293 instructions a time.
pub(crate) struct BodyNames<'f> {
    uses: Vec<NameUse<'f>>,
    /// By statement, where its names start in `uses` (one past the end last).
    start: Vec<u32>,
}

impl<'f> BodyNames<'f> {
    pub(crate) fn of(body: &'f [Stmt]) -> BodyNames<'f> {
        let mut names = BodyNames { uses: Vec::with_capacity(body.len() * 3), start: Vec::with_capacity(body.len() + 1) };
        for s in body {
            names.start.push(names.uses.len() as u32);
            if let Stmt::Instr(ins) = s {
                for_each_name_used(ins, |u| names.uses.push(u));
            }
        }
        names.start.push(names.uses.len() as u32);
        names
    }

    /// The names statement `k` uses, in the order of [`names_used`] (none
    /// for a statement that is no instruction).
    pub(crate) fn at(&self, k: usize) -> &[NameUse<'f>] {
        &self.uses[self.start[k] as usize..self.start[k + 1] as usize]
    }
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

/// For each statement: does the instruction name a register declared inside
/// a `{ }` block (not among the body's leading declarations)? `None` when a
/// register declaration in a block shadows a name visible where it is
/// declared (then names differ in meaning across blocks, and a pass that
/// moves code must [`flatten_names`] first).
///
/// With `Some`, a pass may leave the function's names as they are and
/// still move every instruction that names no block register: such an
/// instruction names only registers visible everywhere, under names no
/// block declares again. Instructions that name block registers stay in
/// their blocks (the call blocks of NVVM output declare `temp_param_reg`
/// once per call: flattening them gives the function one register per
/// call, which ptxas's debug mode allocates separately).
pub fn block_register_users(f: &Function) -> Option<Vec<bool>> {
    let Some(body) = &f.body else { return Some(Vec::new()) };
    let lead = leading_decls(body);
    let mut w = Walk::new(f);
    let mut out = vec![false; body.len()];
    let block_reg = |w: &Walk, name: &str| matches!(w.lookup(name), Some(Meaning::Reg(Site::Body { stmt, .. })) if stmt as usize >= lead);
    // Only a name some later declaration declares can mean a block's
    // register: the others are answered without a lookup, once per
    // register (looked up again at every generation, matrix_free's -O2
    // run spent 2.9 M host instructions in 8,814 lookups).
    let later = LaterRegNames::of(body, lead);
    let mut may_be_block: Vec<Option<bool>> = vec![None; f.regs.len()];
    // Per register, the walk's generation (plus one) at which its name was
    // last looked up and whether it meant a block's register: at the same
    // generation it means the same.
    let mut looked_up: Vec<(u32, bool)> = vec![(0, false); f.regs.len()];
    for (k, s) in body.iter().enumerate() {
        if let Stmt::Decl(d) = s {
            if k >= lead {
                // A declaration in a block must not shadow a visible name.
                for n in d.names() {
                    match n.range {
                        None if w.lookup(n.name).is_some() => return None,
                        Some(count) if count > 4096 => return None,
                        Some(count) if (0..count).any(|i| w.lookup(&super::member_name(n.name, i)).is_some()) => return None,
                        _ => {}
                    }
                }
            }
        }
        w.step(k);
        let Stmt::Instr(ins) = s else { continue };
        let mut uses = false;
        ins.for_each_reg(|r, _| {
            if let (Some(reg), Some(seen), Some(may)) = (f.regs.get(r.0 as usize), looked_up.get_mut(r.0 as usize), may_be_block.get_mut(r.0 as usize)) {
                if !*may.get_or_insert_with(|| later.may_name(&reg.name)) {
                    return;
                }
                if seen.0 != w.generation + 1 {
                    *seen = (w.generation + 1, block_reg(&w, &reg.name));
                }
                uses |= seen.1;
            }
        });
        out[k] = uses;
    }
    Some(out)
}

/// The names the registers declared after a body's leading declarations
/// are declared under: [`Walk::lookup`] can give such a register's site
/// for these names only.
struct LaterRegNames<'f> {
    plain: FxHashSet<&'f str>,
    /// Per range prefix, the largest count declared.
    ranges: FxHashMap<&'f str, u32>,
    /// The first bytes of the names and range prefixes, a bit per byte
    /// value (all of them for an empty one): a name starting otherwise is
    /// none of them and no member of their ranges, answered without hashing
    /// it (NVVM's block registers are `temp_param_reg`, the others `%r1`:
    /// matrix_free at -O2 hashed 1 M host instructions' worth of names).
    initials: [u64; 4],
}

impl<'f> LaterRegNames<'f> {
    /// The names of the `.reg` declarations of `body` from statement `lead` on.
    fn of(body: &'f [Stmt], lead: usize) -> LaterRegNames<'f> {
        let mut names = LaterRegNames { plain: FxHashSet::default(), ranges: FxHashMap::default(), initials: [0; 4] };
        for s in body.iter().skip(lead) {
            let Stmt::Decl(d) = s else { continue };
            if d.space() != StateSpace::Reg {
                continue;
            }
            for n in d.names() {
                match n.name.as_bytes().first() {
                    Some(&b) => names.initials[b as usize >> 6] |= 1 << (b & 63),
                    None => names.initials = [u64::MAX; 4],
                }
                match n.range {
                    None => {
                        names.plain.insert(n.name);
                    }
                    Some(count) => {
                        let most = names.ranges.entry(n.name).or_insert(0);
                        *most = (*most).max(count);
                    }
                }
            }
        }
        names
    }

    /// May a lookup of `name` give a register these declarations declare?
    fn may_name(&self, name: &str) -> bool {
        if let Some(&b) = name.as_bytes().first() {
            if self.initials[b as usize >> 6] & (1 << (b & 63)) == 0 {
                return false;
            }
        }
        self.plain.contains(name) || (!self.ranges.is_empty() && range_member(name).is_some_and(|(prefix, i)| self.ranges.get(prefix).is_some_and(|count| i < *count)))
    }
}

/// Does the instruction at statement `k` name a block's variable (see
/// [`block_variable_users`], which answers for every statement at once)?
pub fn names_block_variable(f: &Function, k: usize) -> bool {
    block_variable_users(f).get(k).copied().unwrap_or(false)
}

/// How many statements open the body with declarations only.
pub(crate) fn leading_decls(body: &[Stmt]) -> usize {
    body.iter().take_while(|s| matches!(s, Stmt::Decl(_))).count()
}

/// The declaration a site is in: one of the signature or of the body.
pub(crate) enum SiteDecl<'f> {
    Signature(&'f VarDecl),
    Body(&'f Decl),
}

impl<'f> SiteDecl<'f> {
    /// The declaration as a [`VarDecl`]: `None` for a plain register
    /// declaration of the body ([`Decl::as_var`]).
    pub(crate) fn as_var(&self) -> Option<&'f VarDecl> {
        match *self {
            SiteDecl::Signature(d) => Some(d),
            SiteDecl::Body(d) => d.as_var(),
        }
    }

    /// The type and vector width it declares.
    pub(crate) fn ty(&self) -> (crate::isa::ScalarType, Option<u8>) {
        match self {
            SiteDecl::Signature(d) => (d.ty, d.vector),
            SiteDecl::Body(d) => (d.ty(), d.vector()),
        }
    }
}

/// The declaration a site is in (`None` for a site that is none).
pub(crate) fn site_decl(f: &Function, site: Site) -> Option<SiteDecl<'_>> {
    let (d, names) = match site {
        Site::Param { ret, decl, .. } => {
            let d = (if ret { &f.ret } else { &f.params }).as_ref()?.get(decl as usize)?;
            (SiteDecl::Signature(d), d.names.len())
        }
        Site::Body { stmt, .. } => match f.body.as_ref()?.get(stmt as usize)? {
            Stmt::Decl(d) => (SiteDecl::Body(d), d.name_count()),
            _ => return None,
        },
    };
    let n = match site {
        Site::Param { name, .. } | Site::Body { name, .. } => name,
    };
    ((n as usize) < names).then_some(d)
}


#[cfg(test)]
mod tests;
