//! [`flatten_names`]: one name per register and label in a function, and
//! every `.reg` declaration at the top of the body.

use super::check::check_finding_sites;
use super::{label_def, leading_decls, BodyNames, NameUse, ScopeError, ScopeTree, Site};
use crate::ir::{range_member, DeclName, Declarator, Declarators, Function, Name, RegId, Stmt};
use crate::isa::StateSpace;
use rustc_hash::{FxHashMap, FxHashSet};

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
/// where they are (see [`super::block_variable_users`]), and so do the blocks.
///
/// Fails, changing nothing, when [`check`] finds a problem.
pub fn flatten_names(f: &mut Function) -> Result<(), Vec<ScopeError>> {
    flatten_names_undoably(f).map(drop)
}

/// [`flatten_names`], saying what it changed so that the caller can put
/// the function back ([`Unflatten::undo`]): for a caller that edits the
/// function in place and may find it has nothing to write (the engine:
/// copying the function to flatten the copy was 5.2 M host instructions of
/// histogram's -O2 run, dropping the old one after 2.2 M).
pub fn flatten_names_undoably(f: &mut Function) -> Result<Unflatten, Vec<ScopeError>> {
    let found = check_finding_sites(f);
    if !found.errors.is_empty() {
        return Err(found.errors);
    }
    if f.body.is_none() {
        return Ok(Unflatten::default());
    }
    let plan = Plan::make(f, found.reg_site, &found.names, &found.tree, true);
    Ok(plan.apply(f))
}

/// [`flatten_names`] with [`Taken`]'s shortcuts off: every name kept, new
/// names tried from `_1` each time (the reference the shortcuts are
/// tested against).
#[cfg(test)]
pub(super) fn flatten_names_without_shortcuts(f: &mut Function) -> Result<(), Vec<ScopeError>> {
    let found = check_finding_sites(f);
    if !found.errors.is_empty() {
        return Err(found.errors);
    }
    if f.body.is_some() {
        Plan::make(f, found.reg_site, &found.names, &found.tree, false).apply(f);
    }
    Ok(())
}

/// What [`flatten_names_undoably`] changed in a function.
#[derive(Default)]
pub struct Unflatten {
    /// The old names of the registers and labels renamed, by id.
    reg_names: Vec<(u32, Name)>,
    label_names: Vec<(u32, Name)>,
    /// For each statement of the new body, its index in the old one; `None`
    /// when the body was left as it was.
    origin: Option<Vec<u32>>,
    /// The declarations left with no name (removed), at their old indices.
    removed: Vec<(u32, Stmt)>,
    /// The old declarator lists of the declarations rewritten, at their old indices.
    lists: Vec<(u32, Declarators)>,
}

impl Unflatten {
    /// Did the flattening change the function (is it no longer equal to
    /// the one given)? A renamed register or label, a rewritten
    /// declarator list, a removed or a moved declaration each make it
    /// differ (a moved declaration goes before the statement after the
    /// leading declarations, which is no declaration).
    pub fn changed(&self) -> bool {
        !self.reg_names.is_empty() || !self.label_names.is_empty() || self.origin.is_some()
    }

    /// Puts `f`, flattened, back as it was given.
    pub fn undo(self, f: &mut Function) {
        for (r, n) in self.reg_names {
            f.regs[r as usize].name = n;
        }
        for (l, n) in self.label_names {
            f.labels[l as usize] = n;
        }
        let Some(origin) = self.origin else { return };
        let body = std::mem::take(f.body.as_mut().expect("a flattened body"));
        let mut old: Vec<Option<Stmt>> = Vec::new();
        old.resize_with(body.len() + self.removed.len(), || None);
        for (s, k) in body.into_iter().zip(origin) {
            old[k as usize] = Some(s);
        }
        for (k, s) in self.removed {
            old[k as usize] = Some(s);
        }
        for (k, list) in self.lists {
            if let Some(Stmt::Decl(d)) = &mut old[k as usize] {
                d.replace_names(list);
            }
        }
        *f.body.as_mut().expect("a flattened body") = old.into_iter().map(|s| s.expect("every statement back in place")).collect();
    }
}

/// What [`flatten_names`] renames and moves.
struct Plan {
    /// New names of registers and labels (by id); `None`: unchanged.
    reg_names: Vec<Option<Name>>,
    label_names: Vec<Option<Name>>,
    /// New declarator lists of `.reg` declaration statements, by statement.
    decls: FxHashMap<usize, Declarators>,
    /// `.reg` declaration statements to move to the leading declarations.
    moved: Vec<usize>,
    lead: usize,
}

/// The names a function uses, for picking new ones.
#[derive(Default)]
struct Taken {
    /// Keep only the names [`Taken::fresh`] could make, and start from
    /// [`Taken::next`] (off: every name, from 1; see
    /// `flatten_names_without_shortcuts`).
    shortcuts: bool,
    /// Every name written anywhere in the function (also the old ones) that
    /// [`Taken::fresh`] could make: those ending in `_` and digits
    /// ([`Taken::note`]). Keeping every name hashed each register's
    /// (histogram at -O2: 12,014 names, 2.5 M host instructions, for 260
    /// new names).
    all: FxHashSet<Name>,
    /// Every register range prefix declared anywhere, with the largest count.
    ranges: FxHashMap<Name, u32>,
    /// Per base [`Taken::fresh`] was asked for, the `N` to try first: every
    /// smaller one is taken (and stays taken: names are only added). Trying
    /// from 1 each time was quadratic in the blocks that declare one name
    /// (NVVM's `%temp1` in every `{ }` of a comparison).
    next: FxHashMap<Name, u32>,
}

/// Could [`Taken::fresh`] make `name` (`base_N`: it ends in `_` and digits)?
fn freshly_made_shape(name: &str) -> bool {
    let b = name.as_bytes();
    let digits = b.iter().rev().take_while(|c| c.is_ascii_digit()).count();
    digits > 0 && b.len() > digits && b[b.len() - digits - 1] == b'_'
}

impl Taken {
    /// Notes a name written in the function.
    fn note(&mut self, name: &Name) {
        if !self.shortcuts || freshly_made_shape(name) {
            self.all.insert(name.clone());
        }
    }

    fn covered(&self, name: &str) -> bool {
        range_member(name).is_some_and(|(p, i)| self.ranges.get(p).is_some_and(|&n| i < n))
    }

    /// `base_N` for the smallest `N` naming nothing in the function; taken at once.
    fn fresh(&mut self, base: &str) -> Name {
        let mut n = if self.shortcuts { self.next.get(base).copied().unwrap_or(1) } else { 1 };
        loop {
            let cand: Name = format!("{base}_{n}").into();
            if !self.all.contains(&cand) && !self.covered(&cand) {
                self.all.insert(cand.clone());
                self.next.insert(base.into(), n + 1);
                return cand;
            }
            n += 1;
        }
    }
}

impl Plan {
    /// The plan for `f`, whose used registers mean the declarations
    /// `reg_site` gives and whose body uses the names `names` (as
    /// [`check_finding_sites`] finds them, with the body's blocks `tree`).
    /// `shortcuts`: [`Taken::shortcuts`].
    fn make(f: &Function, mut reg_site: Vec<Option<Site>>, names: &BodyNames, tree: &ScopeTree, shortcuts: bool) -> Plan {
        let body = f.body.as_ref().unwrap();
        let lead = leading_decls(body);
        // Which declaration each register is: from its uses (`reg_site`),
        // then unused table entries to unused declarations of their name,
        // in order.
        // The registers of each declarator (a range's members together),
        // by its place in `sites` (hashing each register's site was 0.9 M
        // host instructions of histogram's -O2 run).
        let sites = reg_sites(f);
        let places = SitePlaces::of(&sites, body.len());
        let mut site_regs: Vec<Vec<RegId>> = vec![Vec::new(); sites.len()];
        for (r, s) in reg_site.iter().enumerate() {
            if let Some(i) = s.and_then(|s| places.of_site(&sites, s)) {
                site_regs[i].push(RegId(r as u32));
            }
        }
        let mut unused: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
        for (i, &(_, d)) in sites.iter().enumerate().rev() {
            if d.range.is_none() && site_regs[i].is_empty() {
                unused.entry(d.name.as_str()).or_default().push(i);
            }
        }
        for (r, reg) in f.regs.iter().enumerate() {
            if reg_site[r].is_some() {
                continue;
            }
            if let Some(i) = unused.get_mut(&*reg.name).and_then(|v| v.pop()) {
                reg_site[r] = Some(sites[i].0);
                site_regs[i].push(RegId(r as u32));
            }
        }

        // Names that registers must not take: labels, variables, symbols.
        let mut taken = Taken { shortcuts, ..Taken::default() };
        let mut fixed: FxHashSet<Name> = FxHashSet::default();
        for r in &f.regs {
            taken.note(&r.name);
        }
        for l in &f.labels {
            taken.note(l);
        }
        for_each_fixed_name(f, names, &mut |n| {
            fixed.insert(n.into());
        });
        for n in &fixed {
            taken.note(n);
        }
        for &(_, d) in &sites {
            taken.note(d.name);
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
        let mut new_lists: FxHashMap<usize, Declarators> = FxHashMap::default();
        for (&(site, d), regs) in sites.iter().zip(&site_regs) {
            let stmt = match site {
                Site::Body { stmt, .. } => Some(stmt as usize),
                Site::Param { .. } => None,
            };
            let free = |name: &str, claimed: &FxHashSet<Name>, cr: &FxHashMap<Name, u32>| !fixed.contains(name) && !claimed.contains(name) && !covered_by_claimed(cr, name);
            let mut decl_out = Declarators::new();
            match d.range {
                None => {
                    let name = if stmt.is_none() || free(d.name, &claimed, &claimed_ranges) { d.name.clone() } else { taken.fresh(d.name) };
                    claim(&name, &mut claimed, &mut claimed_by_prefix);
                    for r in regs {
                        if f.regs[r.0 as usize].name != name {
                            plan.reg_names[r.0 as usize] = Some(name.clone());
                        }
                    }
                    decl_out.push(Declarator { name, ..d.to_declarator() });
                }
                Some(count) => {
                    let clash = |ms: Option<&Vec<u32>>| ms.is_some_and(|v| v.iter().any(|&i| i < count));
                    let whole = stmt.is_none()
                        || !(claimed_ranges.contains_key(d.name)
                            || clash(claimed_by_prefix.get(d.name))
                            || clash(fixed_by_prefix.get(d.name.as_str())));
                    if whole {
                        claimed_ranges.insert(d.name.clone(), count);
                        decl_out.push(d.to_declarator());
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
                            decl_out.push(Declarator { name, range: None, dims: Box::default(), init: None });
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
        for (k, s) in body.iter().enumerate() {
            let Stmt::Decl(d) = s else { continue };
            if d.space() != StateSpace::Reg {
                continue;
            }
            let list = new_lists.remove(&k).unwrap_or_default();
            if !d.names().eq(list.iter().map(DeclName::from)) {
                plan.decls.insert(k, list);
            }
            if k >= lead || tree.stmt_scope[k] != 0 {
                plan.moved.push(k);
            }
        }
        plan
    }

    /// Renames and moves as planned; what it changed.
    fn apply(self, f: &mut Function) -> Unflatten {
        let mut undo = Unflatten::default();
        for (r, n) in self.reg_names.into_iter().enumerate() {
            if let Some(n) = n {
                undo.reg_names.push((r as u32, std::mem::replace(&mut f.regs[r].name, n)));
            }
        }
        for (l, n) in self.label_names.into_iter().enumerate() {
            if let Some(n) = n {
                undo.label_names.push((l as u32, std::mem::replace(&mut f.labels[l], n)));
            }
        }
        if self.decls.is_empty() && self.moved.is_empty() {
            return undo;
        }
        let body = std::mem::take(f.body.as_mut().unwrap());
        let mut decls = self.decls;
        let mut out = Vec::with_capacity(body.len());
        let mut origin: Vec<u32> = Vec::with_capacity(body.len());
        let mut moved = Vec::new();
        let mut moved_origin = Vec::new();
        let moved_set: FxHashSet<usize> = self.moved.iter().copied().collect();
        let mut at = 0;
        for (k, mut s) in body.into_iter().enumerate() {
            if let (Stmt::Decl(d), Some(list)) = (&mut s, decls.remove(&k)) {
                undo.lists.push((k as u32, d.replace_names(list)));
                if d.name_count() == 0 {
                    undo.removed.push((k as u32, s));
                    continue;
                }
            }
            if moved_set.contains(&k) {
                moved.push(s);
                moved_origin.push(k as u32);
            } else {
                out.push(s);
                origin.push(k as u32);
                if k < self.lead {
                    at = out.len();
                }
            }
        }
        out.splice(at..at, moved);
        origin.splice(at..at, moved_origin);
        *f.body.as_mut().unwrap() = out;
        undo.origin = Some(origin);
        undo
    }
}

/// Where the declarator of a site (a range's, for a member) is in the list
/// [`reg_sites`] gives.
struct SitePlaces {
    /// How many declarators the signature has (they come first).
    params: usize,
    /// By statement, the place of its first declarator (a `.reg`
    /// declaration's; `u32::MAX` for any other statement).
    body_first: Vec<u32>,
}

impl SitePlaces {
    fn of(sites: &[(Site, DeclName)], body_len: usize) -> SitePlaces {
        let mut places = SitePlaces { params: 0, body_first: vec![u32::MAX; body_len] };
        for (i, (site, _)) in sites.iter().enumerate() {
            match *site {
                Site::Param { .. } => places.params = i + 1,
                Site::Body { stmt, name: 0, .. } => places.body_first[stmt as usize] = i as u32,
                Site::Body { .. } => {}
            }
        }
        places
    }

    /// The place of `s`'s declarator in `sites`, if there.
    fn of_site(&self, sites: &[(Site, DeclName)], s: Site) -> Option<usize> {
        let i = match s {
            Site::Param { .. } => sites[..self.params].iter().position(|(p, _)| *p == s)?,
            Site::Body { stmt, name, .. } => (*self.body_first.get(stmt as usize)? as usize).checked_add(name as usize)?,
        };
        let declarator = match s {
            Site::Body { stmt, name, .. } => Site::Body { stmt, name, member: None },
            p => p,
        };
        (sites.get(i)?.0 == declarator).then_some(i)
    }
}

/// Every register declaration (signature first, then the body in order),
/// with its declarator.
fn reg_sites(f: &Function) -> Vec<(Site, DeclName<'_>)> {
    let mut out = Vec::new();
    for (ret, list) in [(true, &f.ret), (false, &f.params)] {
        for (d, decl) in list.iter().flatten().enumerate() {
            if decl.space == StateSpace::Reg {
                for (n, name) in decl.names.iter().enumerate() {
                    out.push((Site::Param { ret, decl: d as u32, name: n as u32 }, name.into()));
                }
            }
        }
    }
    for (k, s) in f.body.iter().flatten().enumerate() {
        if let Stmt::Decl(d) = s {
            if d.space() == StateSpace::Reg {
                for (n, name) in d.names().enumerate() {
                    out.push((Site::Body { stmt: k as u32, name: n as u32, member: None }, name));
                }
            }
        }
    }
    out
}

/// Every name of `f` that is no register or label: variables declared in
/// the signature and the body, and every symbol referenced (module
/// variables and functions, call targets, initializers, `.loc`); `names`:
/// the names the body uses.
fn for_each_fixed_name(f: &Function, names: &BodyNames, out: &mut dyn FnMut(&str)) {
    let decl = |space: StateSpace, names: &mut dyn Iterator<Item = DeclName>, out: &mut dyn FnMut(&str)| {
        for n in names {
            if space != StateSpace::Reg {
                out(n.name);
            }
            if let Some(i) = n.init {
                i.symbolic_exprs(&mut |e| e.symbols(out));
            }
        }
    };
    for d in f.ret.iter().chain(&f.params).flatten() {
        decl(d.space, &mut d.names.iter().map(DeclName::from), out);
    }
    for (k, s) in f.body.iter().flatten().enumerate() {
        match s {
            Stmt::Decl(d) => decl(d.space(), &mut d.names(), out),
            Stmt::Instr(_) => {
                for u in names.at(k) {
                    if let NameUse::Var(n) = u {
                        out(n);
                    }
                }
            }
            Stmt::CallTargets(_, fs) => fs.iter().for_each(|n| out(n)),
            Stmt::Loc(l) => {
                if let Some(e) = l.function_name() {
                    e.symbols(out);
                }
            }
            _ => {}
        }
    }
}
