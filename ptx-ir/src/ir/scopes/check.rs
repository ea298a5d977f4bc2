//! The scope-safety check ([`check`]): every name an instruction uses means,
//! by name, the register, label or variable its id says.

use super::{label_def, site_decl, BodyNames, Meaning, NameUse, ScopeTree, Site, Walk};
use crate::ir::{Function, Instruction, LabelId, RegId, Stmt};
use rustc_hash::{FxHashMap, FxHashSet};

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
    check_finding_sites(f).errors
}

/// What [`check_finding_sites`] finds.
pub(super) struct Findings<'f> {
    pub errors: Vec<ScopeError>,
    /// The declaration each register used by an instruction means (by
    /// register id), which a function without errors has one of wherever
    /// it is used: what [`super::flatten_names`] renames by.
    pub reg_site: Vec<Option<Site>>,
    /// The names each statement uses (empty without a body).
    pub names: BodyNames<'f>,
    /// The blocks of the body, where there are no errors (the walk's:
    /// [`super::flatten_names`] needs them too).
    pub tree: ScopeTree,
}

/// [`check`], and the sites of the registers and the names the body uses.
pub(super) fn check_finding_sites(f: &Function) -> Findings<'_> {
    let mut c = Checker { f, out: Vec::new() };
    let reg_site: Vec<Option<Site>> = vec![None; f.regs.len()];
    let Some(body) = &f.body else { return Findings { errors: c.out, reg_site, names: BodyNames::of(&[]), tree: ScopeTree::default() } };
    let names = BodyNames::of(body);
    let (reg_site, tree) = c.find_sites(body, &names, reg_site);
    Findings { errors: c.out, reg_site, names, tree }
}

impl<'f> Checker<'f> {
    /// The walk of [`check_finding_sites`] over a body whose names are
    /// `names`, and the body's blocks (empty when an id is out of range).
    fn find_sites(&mut self, body: &'f [Stmt], names: &BodyNames<'f>, mut reg_site: Vec<Option<Site>>) -> (Vec<Option<Site>>, ScopeTree) {
        let (f, c) = (self.f, self);
        if !c.ids_in_range(body, names) {
            return (reg_site, ScopeTree::default());
        }
        let mut w = Walk::new(f);
        if let Some(k) = w.tree.unbalanced {
            let what = if matches!(body[k], Stmt::ScopeEnd) { "a `}` closes no block" } else { "a `{` is never closed" };
            c.error(Some(k), what.to_string());
            return (reg_site, w.tree);
        }
        // The walk's generation (plus one) at which each register was last
        // found right: at the same generation it would be found right again.
        let mut reg_ok: Vec<u32> = vec![0; f.regs.len()];
        // Sized for every register: growing it was 1.0 M host instructions
        // of histogram's -O2 run (8 functions).
        let mut site_reg: FxHashMap<Site, RegId> = FxHashMap::with_capacity_and_hasher(f.regs.len(), Default::default());
        // Declared names by block (and whether as a range's prefix); labels so far.
        let mut declared: FxHashMap<(u32, &str), (usize, bool)> = FxHashMap::default();
        let mut labels_so_far: FxHashSet<(u32, &str)> = FxHashSet::default();
        for (k, s) in body.iter().enumerate() {
            w.step(k);
            let scope = w.tree.stmt_scope[k];
            match s {
                Stmt::Instr(ins) => c.instruction(&w, k, ins, names.at(k), &mut reg_site, &mut site_reg, &mut reg_ok),
                Stmt::Decl(d) => {
                    for n in d.names().filter(|n| n.name.as_str() != "_") {
                        if let Some((prev, _)) = declared.insert((scope, n.name), (k, n.range.is_some())) {
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
                if w.label_stmt(l) != Some(k) {
                    c.error(Some(k), format!("label `{name}` (label #{}) is defined twice", l.0));
                } else if w.block_label(scope, name) != Some(l) {
                    c.error(Some(k), format!("label `{name}` is defined twice in one block"));
                }
                if let Some((prev, false)) = declared.get(&(scope, name)) {
                    c.error(Some(k), format!("`{name}` is declared in this block (statement {prev}), so it cannot also be a label here"));
                }
                labels_so_far.insert((scope, name));
            }
        }
        (reg_site, w.tree)
    }
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
    fn ids_in_range(&mut self, body: &[Stmt], names: &BodyNames) -> bool {
        let (nregs, nlabels) = (self.f.regs.len(), self.f.labels.len());
        let before = self.out.len();
        for (k, s) in body.iter().enumerate() {
            let mut labels: Vec<LabelId> = Vec::new();
            match s {
                Stmt::Instr(_) => {
                    for &u in names.at(k) {
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

    /// Instruction `ins` at statement `k`, which uses the names `uses`.
    #[allow(clippy::too_many_arguments)]
    fn instruction(&mut self, w: &Walk<'f>, k: usize, ins: &Instruction, uses: &[NameUse], reg_site: &mut [Option<Site>], site_reg: &mut FxHashMap<Site, RegId>, reg_ok: &mut [u32]) {
        let f = self.f;
        for (i, &u) in uses.iter().enumerate() {
            if uses[..i].contains(&u) {
                continue;
            }
            match u {
                NameUse::Reg(r) => {
                    if reg_ok[r.0 as usize] == w.generation + 1 {
                        continue;
                    }
                    let errors_before = self.out.len();
                    self.register(w, k, r, reg_site, site_reg);
                    if self.out.len() == errors_before {
                        reg_ok[r.0 as usize] = w.generation + 1;
                    }
                }
                NameUse::Label(l) => {
                    let name = f.label_name(l);
                    match w.label_operand(name) {
                        Ok(Some(found)) if found == l => {
                            if let Some(def) = w.label_stmt(l) {
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
    /// Register `r` used by statement `k`: its name, looked up here, is its
    /// declaration, the one of its other uses, and of no other register.
    fn register(&mut self, w: &Walk<'f>, k: usize, r: RegId, reg_site: &mut [Option<Site>], site_reg: &mut FxHashMap<Site, RegId>) {
        let f = self.f;
        let reg = f.reg(r);
        let site = match w.lookup(&reg.name) {
            Some(Meaning::Reg(site)) => site,
            None => {
                self.error(Some(k), format!("register `{}` is not declared in a block open here", reg.name));
                return;
            }
            Some(m) => {
                self.error(Some(k), format!("register `{}`: the name means {} here", reg.name, describe(m)));
                return;
            }
        };
        match reg_site[r.0 as usize] {
            None => reg_site[r.0 as usize] = Some(site),
            Some(s) if s == site => {}
            Some(_) => {
                self.error(Some(k), format!("register `{}` (#{}) here means another declaration of that name than at its other uses: moved across a `}}`, or shadowed", reg.name, r.0));
                return;
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
            Some(other) => self.error(Some(k), format!("register `{}` (#{}) here means the declaration of another register of that name (#{}): moved across a `}}`, or shadowed; printed, the two would be one register", reg.name, r.0, other.0)),
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

/// The type and vector width a register site declares.
fn declared_type(f: &Function, site: Site) -> Option<(crate::isa::ScalarType, Option<u8>)> {
    site_decl(f, site).map(|d| d.ty())
}

