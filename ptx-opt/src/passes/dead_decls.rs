//! `dead-decls`: declarations in a function body that nothing uses.
//!
//! - `.reg` declarators of the outermost scope none of whose registers an
//!   instruction names (a range `%r<9>` goes when none of `%r0`..`%r8` is
//!   named);
//! - `.local` and `.shared` variables of the outermost scope whose name no
//!   statement mentions (a promoted stack, a demoted array nobody reads).
//!
//! Names are compared as text, over every scope: a name used in a nested
//! block keeps an outer declaration of the same name (conservative).
//! Module-level symbols are [`dead_symbols`]'s, which the pass manager runs
//! after the functions (the incremental database, which optimizes one
//! function at a time, does not).

use super::operands::for_each_symbol;
use super::{Analyses, Pass, Preserves};
use crate::{ModuleContext, OptLevel};
use ptx_ir::ir::{Decl, DeclName, Function, Instruction, Stmt};
use ptx_ir::isa::StateSpace;
use rustc_hash::{FxHashMap, FxHashSet};

pub const PASS: Pass = Pass {
    name: "dead-decls",
    description: "removes unused .reg declarations, unused function-scope .local/.shared variables, and internal functions and variables nothing names",
    run,
    preserves: Preserves::Nothing,
    edit: Some(edit),
};

fn run(f: &Function, _analyses: &mut Analyses, _ctx: &ModuleContext, _level: OptLevel) -> Option<Function> {
    let unused = unused_declarators(f)?;
    let mut g = f.clone();
    remove(g.body.as_mut().expect("a body"), &unused);
    Some(g)
}

/// [`run`] in place ([`super::Edit`]).
pub fn edit(f: &mut Function, _analyses: &mut Analyses, _ctx: &ModuleContext, _level: OptLevel) -> bool {
    let Some(unused) = unused_declarators(f) else { return false };
    remove(f.body.as_mut().expect("a body"), &unused);
    true
}

/// Per outermost-scope declaration with an unused name, in order: its
/// statement and, per declarator, whether it is used (`None` when none
/// is: the declaration goes whole, without a vector of flags; renderer
/// -O2 has 14,000 such declarations of one register).
type Unused = Vec<(usize, Option<Vec<bool>>)>;

/// Removes the unused declarators, and the declarations left with none.
fn remove(body: &mut Vec<Stmt>, unused: &Unused) {
    let mut next = unused.iter().peekable();
    let mut k = 0;
    // Inlined in `retain_mut`'s two loops (called per statement, it cost
    // renderer -O2 3.8 M, 123,079 calls).
    body.retain_mut(#[inline(always)] |s| {
        k += 1;
        let Some((_, used)) = next.next_if(|(j, _)| *j == k - 1) else { return true };
        let Stmt::Decl(d) = s else { return true };
        let Some(used) = used else { return false };
        let mut i = 0;
        d.modify(|d| {
            d.names.retain(|_| {
                i += 1;
                used[i - 1]
            });
            !d.names.is_empty()
        })
    });
}

/// The declarators of `f` nothing uses (`None` when there is none).
fn unused_declarators(f: &Function) -> Option<Unused> {
    unused_declarators_by(f, PlainLookup::DeclarationOrder)
}

/// How [`unused_declarators_by`] asks whether a plain register name is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PlainLookup {
    /// By the names of the named registers ([`RegsUsed::used`]) only (the
    /// general way, kept for the test comparing the two).
    #[cfg(test)]
    ByName,
    /// First by the register the declarator declares, found where the
    /// table is expected to list it ([`DeclaredInOrder`]): named, it is
    /// used; else by name, as [`PlainLookup::ByName`].
    DeclarationOrder,
}

fn unused_declarators_by(f: &Function, lookup: PlainLookup) -> Option<Unused> {
    let body = f.body.as_ref()?;
    let mut asked = Asked::default();
    // Registers named, by id (their names are gathered after).
    let mut named = vec![false; f.regs.len()];
    // The symbols instructions mention, gathered from the first `.local`
    // or `.shared` variable of the outermost scope on (and then from the
    // instructions before it).
    let mut syms: FxHashSet<&str> = FxHashSet::default();
    let mut depth = 0usize;
    for (k, s) in body.iter().enumerate() {
        match s {
            Stmt::Instr(ins) => {
                // Guards included: `for_each_reg` names them first.
                ins.for_each_reg(|r, _| {
                    if let Some(n) = named.get_mut(r.0 as usize) {
                        *n = true;
                    }
                });
                if asked.variables {
                    gather_symbols(&mut syms, ins);
                }
            }
            // Initializers of other variables may take a variable's address.
            Stmt::Decl(d) if d.names().any(|n| n.init.is_some()) => return None,
            Stmt::Decl(d) if depth == 0 && asked.notes(d) => asked.note(d, &body[..k], &mut syms),
            Stmt::ScopeBegin => depth += 1,
            Stmt::ScopeEnd => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let regs = RegsUsed::of(f.regs.iter().zip(&named).filter(|(_, n)| **n).map(|(r, _)| r.name.as_ref()), &asked);
    let in_order = DeclaredInOrder { regs: &f.regs, next: std::cell::Cell::new(0) };
    // Few plain names are compared at once ([`PlainUsed::Few`]).
    let in_order_asked = lookup == PlainLookup::DeclarationOrder && matches!(regs.plain, PlainUsed::Many(_));
    let used = |space: StateSpace, n: DeclName| match space {
        StateSpace::Reg if n.range.is_none() && in_order_asked => {
            in_order.find(n.name).is_some_and(|k| named[k]) || regs.used(n.name, None)
        }
        StateSpace::Reg => regs.used(n.name, n.range),
        StateSpace::Local | StateSpace::Shared => syms.contains(n.name.as_str()),
        _ => true,
    };
    // Outermost-scope declarations with an unused name: none in most
    // functions, which are then not changed.
    let mut depth = 0usize;
    let mut unused: Unused = Vec::new();
    for (k, s) in body.iter().enumerate() {
        match s {
            Stmt::ScopeBegin => depth += 1,
            Stmt::ScopeEnd => depth = depth.saturating_sub(1),
            Stmt::Decl(d) if depth == 0 => {
                // Each declarator asked once: those before the first unused
                // one are used (renderer -O2: 14,061 declarations with an
                // unused name, each asked about twice before).
                let Some(first) = d.names().position(|n| !used(d.space(), n)) else { continue };
                let mut rest = d.names().enumerate().skip(first + 1).map(|(i, n)| (i, used(d.space(), n))).peekable();
                let flags = if rest.peek().is_none() && first == 0 {
                    None
                } else {
                    let mut flags = vec![true; d.name_count()];
                    flags[first] = false;
                    for (i, u) in rest {
                        flags[i] = u;
                    }
                    Some(flags)
                };
                unused.push((k, flags));
            }
            // The table lists a block's registers among the outermost
            // scope's, in the body's order: the walk passes them.
            Stmt::Decl(d) if d.space() == StateSpace::Reg && in_order_asked => {
                for n in d.names().filter(|n| n.range.is_none()) {
                    in_order.find(n.name);
                }
            }
            _ => {}
        }
    }
    (!unused.is_empty()).then_some(unused)
}

/// The register a plain `.reg` declarator declares, looked for where the
/// parser puts it: it adds each such register to the table as it reads
/// the declaration, in the body's order (a range's members when first
/// named, passes' fresh registers at the end, in between). So the walk
/// looks a few entries ahead of the last one found. Only a shortcut:
/// a register found by name and named means its name is used, and every
/// other answer is asked of the names ([`RegsUsed::used`]). On renderer
/// -O2, 14,061 of 62,742 plain declarators are then asked by name (with
/// [`PlainUsed::Many`] made when first asked and `remove`'s flags made only
/// for declarations keeping some name, dead-decls 41.7 -> 38.0 M).
struct DeclaredInOrder<'a> {
    regs: &'a [ptx_ir::ir::Reg],
    /// Where the next declarator's register is expected.
    next: std::cell::Cell<usize>,
}

/// How many entries of the table past the expected one [`DeclaredInOrder`]
/// looks at (range members made in between).
const LOOK_AHEAD: usize = 8;

impl DeclaredInOrder<'_> {
    /// The index of the register called `name`, when it is at most
    /// [`LOOK_AHEAD`] entries past the expected one.
    fn find(&self, name: &str) -> Option<usize> {
        let next = self.next.get();
        let end = self.regs.len().min(next + LOOK_AHEAD + 1);
        let k = (next..end).find(|&k| *self.regs[k].name == *name)?;
        self.next.set(k + 1);
        Some(k)
    }
}

/// What the outermost scope declares that [`unused_declarators`] asks
/// about: register names, ranges, and whether any `.local`/`.shared`
/// variable (only then are the instructions' symbols gathered).
#[derive(Default)]
struct Asked<'a> {
    /// The plain register names, up to one more than [`FEW_PLAIN`] (more
    /// are not needed: then the named registers' names are hashed).
    plain: Vec<&'a str>,
    ranges: Vec<(&'a str, u32)>,
    variables: bool,
}

impl<'a> Asked<'a> {
    /// Would [`Asked::note`] note anything of a declaration? Not of plain
    /// registers once there are more than [`FEW_PLAIN`]: renderer -O2 has
    /// 62,742 declarations of one plain register, each a call noting
    /// nothing (dead-decls 38.1 -> 36.3 M without them).
    #[inline]
    fn notes(&self, d: &Decl) -> bool {
        d.space() != StateSpace::Reg || self.plain.len() <= FEW_PLAIN || d.names().any(|n| n.range.is_some())
    }

    /// Notes a declaration of the outermost scope, which follows the
    /// statements `before`; at its first variable, gathers their symbols.
    /// Not inlined: the loop over the instructions stays small enough for
    /// `for_each_reg` to be inlined into it (renderer: 6 M host
    /// instructions of calls otherwise).
    #[inline(never)]
    fn note(&mut self, d: &'a Decl, before: &'a [Stmt], syms: &mut FxHashSet<&'a str>) {
        if matches!(d.space(), StateSpace::Local | StateSpace::Shared) && !self.variables {
            for s in before {
                if let Stmt::Instr(ins) = s {
                    gather_symbols(syms, ins);
                }
            }
        }
        match d.space() {
            StateSpace::Reg => {
                for n in d.names() {
                    match n.range {
                        Some(count) => self.ranges.push((n.name, count)),
                        None if self.plain.len() <= FEW_PLAIN => self.plain.push(n.name),
                        None => {}
                    }
                }
            }
            StateSpace::Local | StateSpace::Shared => self.variables = true,
            _ => {}
        }
    }
}

/// Adds the symbols `ins` mentions to `syms`.
fn gather_symbols<'a>(syms: &mut FxHashSet<&'a str>, ins: &'a Instruction) {
    for_each_symbol(ins, |n| {
        syms.insert(n);
    });
}

/// Which of the outermost scope's register names and ranges the named
/// registers use. Asked per declarator instead of gathering every named
/// register's name and every way of splitting it into a prefix and an
/// index in hash tables (matrix_free -O2: 10.3 M host instructions of
/// `unused_declarators`' own, for NVRTC bodies that declare two plain
/// registers and a few ranges).
struct RegsUsed<'a, I> {
    /// The plain names used; every one asked about when there are few
    /// (looked up by comparing), else those named (looked up by hash).
    plain: PlainUsed<'a>,
    /// Per range asked about (by name), the smallest index named.
    range_min: FxHashMap<&'a str, u32>,
    /// The named registers' names.
    named: I,
}

enum PlainUsed<'a> {
    Few(Vec<(&'a str, bool)>),
    /// Made when first asked: with [`DeclaredInOrder`], the functions
    /// whose plain declarators all declare named registers never ask.
    Many(std::cell::OnceCell<FxHashSet<&'a str>>),
}

/// Up to this many plain register names are compared with each named
/// register's name; more are hashed.
const FEW_PLAIN: usize = 8;

/// Up to this many ranges are matched against each named register's name
/// by prefix; more go through [`smallest_indices`].
const FEW_RANGES: usize = 16;

impl<'a, I: Iterator<Item = &'a str> + Clone> RegsUsed<'a, I> {
    fn of(named: I, asked: &Asked<'a>) -> RegsUsed<'a, I> {
        let mut plain = if asked.plain.len() <= FEW_PLAIN {
            PlainUsed::Few(asked.plain.iter().map(|&n| (n, false)).collect())
        } else {
            PlainUsed::Many(std::cell::OnceCell::new())
        };
        let by_prefix = asked.ranges.len() <= FEW_RANGES;
        // Per range asked about (in `asked.ranges`' order), the smallest
        // index named; merged by name at the end, not per member found
        // (a hash per member).
        let mut smallest: Vec<Option<u32>> = if by_prefix { vec![None; asked.ranges.len()] } else { Vec::new() };
        // The walk over the named registers answers nothing for many plain
        // names (asked later, by hash) and no range asked by prefix.
        let walk = matches!(&plain, PlainUsed::Few(names) if !names.is_empty()) || !smallest.is_empty();
        for name in named.clone().take(if walk { usize::MAX } else { 0 }) {
            if let PlainUsed::Few(names) = &mut plain {
                for (n, used) in names.iter_mut() {
                    *used |= *n == name;
                }
            }
            if smallest.is_empty() {
                continue;
            }
            // A member's name is its range's name followed by digits: a
            // name longer than the prefix by at most its trailing digits.
            // Other prefixes are passed over without comparing.
            let stem = name.len() - name.bytes().rev().take_while(u8::is_ascii_digit).count();
            for (&(prefix, _), min) in asked.ranges.iter().zip(&mut smallest) {
                if !(stem..name.len()).contains(&prefix.len()) {
                    continue;
                }
                if let Some(i) = member_index(name, prefix) {
                    *min = Some(min.map_or(i, |m| m.min(i)));
                }
            }
        }
        let mut range_min: FxHashMap<&str, u32> = FxHashMap::default();
        if by_prefix {
            for (&(prefix, _), min) in asked.ranges.iter().zip(&smallest) {
                if let Some(i) = *min {
                    let e = range_min.entry(prefix).or_insert(i);
                    *e = (*e).min(i);
                }
            }
        } else {
            let used: FxHashSet<&str> = named.clone().collect();
            range_min = smallest_indices(&used);
        }
        RegsUsed { plain, range_min, named }
    }

    #[inline]
    fn used(&self, name: &str, range: Option<u32>) -> bool {
        match range {
            Some(count) => self.range_min.get(name).is_some_and(|&i| i < count),
            None => match &self.plain {
                PlainUsed::Few(names) => names.iter().any(|&(n, used)| used && n == name),
                PlainUsed::Many(set) => set
                    .get_or_init(|| {
                        let mut set = FxHashSet::with_capacity_and_hasher(self.named.clone().count(), Default::default());
                        set.extend(self.named.clone());
                        set
                    })
                    .contains(name),
            },
        }
    }
}

/// The index of `name` as a member of a range named `prefix`: `prefix`
/// followed by decimal digits (leading zeros too) whose value fits a `u32`
/// (what [`smallest_indices`] finds at the split after `prefix`).
fn member_index(name: &str, prefix: &str) -> Option<u32> {
    let (head, digits) = name.as_bytes().split_at_checked(prefix.len())?;
    // Byte by byte, and the digits read as they are checked: names and
    // prefixes are a few bytes, and a call of `memcmp` and `parse` cost
    // more than the work (with the prefixes compared only where the
    // lengths allow and merged per range: matrix_free -O2's dead-decls
    // 8.9 -> 6.9 M).
    if digits.is_empty() || head.iter().zip(prefix.as_bytes()).any(|(a, b)| a != b) {
        return None;
    }
    digits.iter().try_fold(0u32, |n, &c| if c.is_ascii_digit() { n.checked_mul(10)?.checked_add((c - b'0') as u32) } else { None })
}

/// When a range declarator `%r<9>` is used: when some `%rI` (I < 9, also
/// written with leading zeros, as ptxas reads `%r05`: the parser names a
/// member's register `%r5`, IR built otherwise may not) is. Per way of
/// reading a used name as such a name plus index, the smallest index
/// (compares as building every `%rI` and looking it up would, without the
/// strings).
fn smallest_indices<'a>(used: &FxHashSet<&'a str>) -> FxHashMap<&'a str, u32> {
    let mut range_min: FxHashMap<&str, u32> = FxHashMap::default();
    for &name in used {
        let digits = name.bytes().rev().take_while(u8::is_ascii_digit).count();
        for p in name.len() - digits..name.len() {
            if let Ok(i) = name[p..].parse::<u32>() {
                let e = range_min.entry(&name[..p]).or_insert(i);
                *e = (*e).min(i);
            }
        }
    }
    range_min
}

/// What the module-level half of `dead-decls` needs to know of one item.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SymbolFacts {
    /// The names it declares that nothing outside the module sees: an
    /// internal `.func` (no `.visible`, `.extern`, `.weak`, `.common`) or
    /// internal `.global`/`.shared`/`.const` variables. Empty otherwise.
    pub internal: Vec<String>,
    /// The variable and function names it mentions.
    pub mentions: FxHashSet<String>,
    /// A debug section (`.section .debug_*` or `@@DWARF`).
    pub debug: bool,
}

/// The facts of one (optimized) item.
pub fn symbol_facts(item: &ptx_ir::ir::Item) -> SymbolFacts {
    let internal = internal_names(item).map(str::to_string).collect();
    let mut mentions = FxHashSet::default();
    for_each_name_in_item(item, &mut |n| {
        mentions.insert(n.to_string());
    });
    SymbolFacts { internal, mentions, debug: is_debug(item) }
}

/// [`SymbolFacts::internal`], borrowed.
fn internal_names(item: &ptx_ir::ir::Item) -> impl Iterator<Item = &str> {
    use ptx_ir::ir::{FuncKind, Item};
    let names: &[_] = match item {
        Item::Var(v) if v.linkage.is_none() && matches!(v.decl.space, StateSpace::Global | StateSpace::Shared | StateSpace::Const) => &v.decl.names,
        _ => &[],
    };
    let func = match item {
        Item::Func(f) if f.kind == FuncKind::Func && f.linkage.is_none() => Some(&*f.name),
        _ => None,
    };
    func.into_iter().chain(names.iter().map(|n| &*n.name))
}

/// [`SymbolFacts::debug`].
fn is_debug(item: &ptx_ir::ir::Item) -> bool {
    matches!(item, ptx_ir::ir::Item::Section(_) | ptx_ir::ir::Item::Dwarf(_))
}

/// The module-level half of `dead-decls`: the items to remove, given each
/// item's facts. An internal function or variable goes when no item that
/// stays (itself aside) mentions it (an instruction, a `.calltargets`
/// list, an initializer, an `.alias`), until nothing more goes. Modules
/// with debug sections keep everything (DWARF names symbols from outside
/// the code). The pass manager applies it after the functions
/// ([`dead_symbols`]); the incremental database leaves the items out when
/// it prints, from memoized facts.
pub fn dead_items(facts: &[&SymbolFacts]) -> FxHashSet<usize> {
    dead_among(facts)
}

/// What [`dead_items`] reads of one item's facts: owned ([`SymbolFacts`],
/// which the database memoizes) or borrowed from the module
/// ([`ItemNames`], for [`dead_symbols`]).
trait Facts {
    fn internal(&self) -> impl Iterator<Item = &str>;
    fn mentions(&self) -> impl Iterator<Item = &str>;
    fn debug(&self) -> bool;
}

impl Facts for &SymbolFacts {
    fn internal(&self) -> impl Iterator<Item = &str> {
        self.internal.iter().map(String::as_str)
    }
    fn mentions(&self) -> impl Iterator<Item = &str> {
        self.mentions.iter().map(String::as_str)
    }
    fn debug(&self) -> bool {
        self.debug
    }
}

/// [`SymbolFacts`] of an item, borrowed from it (mentions may repeat).
struct ItemNames<'a> {
    internal: Vec<&'a str>,
    mentions: Vec<&'a str>,
    debug: bool,
}

impl<'a> ItemNames<'a> {
    fn of(item: &'a ptx_ir::ir::Item) -> ItemNames<'a> {
        let mut mentions = Vec::new();
        for_each_name_in_item(item, &mut |n| mentions.push(n));
        ItemNames { internal: internal_names(item).collect(), mentions, debug: is_debug(item) }
    }
}

impl Facts for ItemNames<'_> {
    fn internal(&self) -> impl Iterator<Item = &str> {
        self.internal.iter().copied()
    }
    fn mentions(&self) -> impl Iterator<Item = &str> {
        self.mentions.iter().copied()
    }
    fn debug(&self) -> bool {
        self.debug
    }
}

/// [`dead_items`] over either kind of [`Facts`].
fn dead_among(facts: &[impl Facts]) -> FxHashSet<usize> {
    let mut dead: FxHashSet<usize> = FxHashSet::default();
    if facts.iter().any(|f| f.debug()) {
        return dead;
    }
    // Who mentions each internal name (one pass over the mentions).
    let mut by: rustc_hash::FxHashMap<&str, Vec<usize>> = facts.iter().flat_map(|f| f.internal().map(|n| (n, Vec::new()))).collect();
    if by.is_empty() {
        return dead;
    }
    for (j, f) in facts.iter().enumerate() {
        for n in f.mentions() {
            if let Some(v) = by.get_mut(n) {
                v.push(j);
            }
        }
    }
    loop {
        let before = dead.len();
        for (k, f) in facts.iter().enumerate() {
            if f.internal().next().is_none() || dead.contains(&k) {
                continue;
            }
            let mentioned = f.internal().any(|n| by[n].iter().any(|&j| j != k && !dead.contains(&j)));
            if !mentioned {
                dead.insert(k);
            }
        }
        if dead.len() == before {
            return dead;
        }
    }
}

/// [`dead_items`] applied to a module: removes them and says how many went.
pub fn dead_symbols(m: &mut ptx_ir::ir::Module) -> usize {
    // What `dead_items` answers without the mentions, which cost a name
    // string per mention of every item (matrix_free: 6.6 M host
    // instructions, for a module with no internal symbol).
    if m.items.iter().all(|i| internal_names(i).next().is_none()) || m.items.iter().any(is_debug) {
        return 0;
    }
    let facts: Vec<ItemNames> = m.items.iter().map(ItemNames::of).collect();
    let dead = dead_among(&facts);
    let mut k = 0;
    m.items.retain(|_| {
        k += 1;
        !dead.contains(&(k - 1))
    });
    dead.len()
}

/// Every variable or function name an item mentions (declared names of a
/// function's prototypes and of an item's own declaration excluded), to
/// `out` (a name once per mention).
fn for_each_name_in_item<'a>(item: &'a ptx_ir::ir::Item, out: &mut dyn FnMut(&'a str)) {
    use ptx_ir::ir::Item;
    let init = |d: &'a ptx_ir::ir::VarDecl, out: &mut dyn FnMut(&'a str)| {
        for n in &d.names {
            if let Some(i) = &n.init {
                i.symbolic_exprs(&mut |e| e.symbols(&mut *out));
            }
        }
    };
    match item {
        Item::Func(f) => {
            for s in f.body.iter().flatten() {
                match s {
                    // The names `names_used` gives as variables, without
                    // its list of every register (renderer: 12 M host
                    // instructions).
                    Stmt::Instr(ins) => for_each_symbol(ins, |n| out(n)),
                    Stmt::CallTargets(_, names) => names.iter().for_each(|n| out(n)),
                    // Initializers are in boxed declarations.
                    Stmt::Decl(d) => {
                        if let Some(d) = d.as_var() {
                            init(d, out)
                        }
                    }
                    _ => {}
                }
            }
        }
        Item::Var(v) => init(&v.decl, out),
        Item::Alias { aliasee, .. } => out(aliasee),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A used name counts for every range it may be a member of, read as
    /// ptxas reads it: `%r05` uses `%r<6>` (member 5), `%r0` too, and
    /// `%rd010` uses `%rd<11>` and `%rd0<11>`; `%x` no range.
    #[test]
    fn a_used_name_uses_the_ranges_it_may_be_a_member_of() {
        let used: FxHashSet<&str> = ["%r05", "%rd010", "%x"].into_iter().collect();
        let min = smallest_indices(&used);
        assert_eq!(min.get("%r"), Some(&5));
        assert_eq!(min.get("%r0"), Some(&5));
        assert_eq!(min.get("%rd"), Some(&10));
        assert_eq!(min.get("%rd0"), Some(&10));
        assert_eq!(min.get("%rd01"), Some(&0));
        assert_eq!(min.get("%x"), None);
    }

    /// The module half finds the same dead items from names borrowed from
    /// the module as from the facts the database memoizes.
    #[test]
    fn borrowed_names_find_what_memoized_facts_find() {
        let text = ".version 8.0\n.target sm_80\n.address_size 64\n\
            .global .u32 read_by_dead_init = 1;\n.global .u64 ptr = read_by_dead_init;\n.global .u32 unread;\n\
            .func dead_callee()\n{\nret;\n}\n.func dead_caller()\n{\ncall dead_callee, ();\nret;\n}\n\
            .func used()\n{\nret;\n}\n.const .u32 c;\n\
            .visible .entry k()\n{\n.reg .b32 %r<2>;\ncall used, ();\nld.const.u32 %r1, [c];\nret;\n}\n";
        let m = ptx_ir::parse_str(text).unwrap_or_else(|d| panic!("{d}"));
        let owned: Vec<SymbolFacts> = m.items.iter().map(symbol_facts).collect();
        let from_facts = dead_items(&owned.iter().collect::<Vec<_>>());
        let borrowed: Vec<ItemNames> = m.items.iter().map(ItemNames::of).collect();
        assert_eq!(dead_among(&borrowed), from_facts);
        let names: Vec<&str> = {
            let mut v: Vec<usize> = from_facts.into_iter().collect();
            v.sort();
            v.into_iter().flat_map(|k| internal_names(&m.items[k])).collect()
        };
        assert_eq!(names, ["read_by_dead_init", "ptr", "unread", "dead_callee", "dead_caller"]);
    }

    /// Finding a plain declarator's register in the table's order
    /// ([`PlainLookup::DeclarationOrder`]) finds the unused declarators
    /// the names alone find: with many and few plain names, a block
    /// shadowing an unused outer name (kept: names compare as text), range
    /// members made between declarations, declarations after instructions
    /// and several names to a declaration; and on the suite's corpus files.
    #[test]
    fn declaration_order_finds_what_names_find() {
        let made = ".version 8.0\n.target sm_80\n.address_size 64\n\
            .visible .entry many(.param .u64 p)\n{\n.reg .b32 %a;\n.reg .b32 %b;\n.reg .b32 %c, %d, %e;\n.reg .b32 %r<9>;\n\
            .reg .b64 %rd1;\n.reg .b32 %s;\n.reg .b32 %t;\n.reg .b32 %u;\n.reg .b32 %v;\n.reg .b32 %w;\n\
            ld.param.u64 %rd1, [p];\nmov.u32 %r3, 1;\nmov.u32 %a, %r3;\nmov.u32 %d, 2;\n\
            {\n.reg .b32 %b;\n.reg .b32 %x;\nmov.u32 %b, %a;\nmov.u32 %x, %b;\n}\n\
            .reg .b32 %late;\n.reg .b32 %late2;\nmov.u32 %r5, %late;\nmov.u32 %t, %r5;\nst.global.u32 [%rd1], %t;\nret;\n}\n\
            .visible .entry few(.param .u64 p)\n{\n.reg .b32 %a;\n.reg .b32 %b;\n.reg .b64 %rd<3>;\n\
            ld.param.u64 %rd1, [p];\n{\n.reg .b32 %a;\nmov.u32 %a, 1;\n}\nst.global.u32 [%rd1], 3;\nret;\n}\n";
        let texts = [
            made,
            include_str!("../../tests/data/k_warp.sm_80.lineinfo.ptx"),
            include_str!("../../../tests/corpus/block-scoped-names.ptx"),
            include_str!("../../../tests/corpus/control-flow.ptx"),
            include_str!("../../../tests/corpus/legacy-1x.ptx"),
            include_str!("../../../tests/corpus/legacy-dwarf.ptx"),
            include_str!("../../../tests/corpus/syntax-forms.ptx"),
            include_str!("../../../tests/corpus/misc.ptx"),
        ];
        let (mut functions, mut with_unused) = (0, 0);
        for text in texts {
            let m = ptx_ir::parse_str(text).unwrap_or_else(|d| panic!("{d}"));
            for item in &m.items {
                let ptx_ir::ir::Item::Func(f) = item else { continue };
                let by_name = unused_declarators_by(f, PlainLookup::ByName);
                assert_eq!(unused_declarators_by(f, PlainLookup::DeclarationOrder), by_name, "{}", f.name);
                functions += 1;
                with_unused += by_name.is_some() as usize;
            }
        }
        // The made functions: `%b` of `many` stays (a block's `%b` is
        // named), `%c`, `%e`, `%u`.. and `%late2` go; `few` keeps its `%a`.
        let m = ptx_ir::parse_str(made).unwrap_or_else(|d| panic!("{d}"));
        let ptx_ir::ir::Item::Func(many) = &m.items[0] else { panic!() };
        let unused = unused_declarators(many).expect("unused declarators");
        let body = many.body.as_ref().unwrap();
        let gone: Vec<&str> = unused
            .iter()
            .flat_map(|(k, keep)| {
                let Stmt::Decl(d) = &body[*k] else { panic!() };
                d.names().enumerate().filter(|(i, _)| keep.as_ref().is_none_or(|keep| !keep[*i])).map(|(_, n)| n.name.as_str()).collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(gone, ["%c", "%e", "%s", "%u", "%v", "%w", "%late2"]);
        assert!(functions > 10 && with_unused > 2, "{functions} functions, {with_unused} with unused declarators");
    }

    /// The per-declarator answers agree with gathering every name: ranges
    /// matched by prefix with [`smallest_indices`], few plain names
    /// compared with a set of the names.
    #[test]
    fn regs_used_agrees_with_gathering_every_name() {
        let named = ["%r5", "%r012", "%t0100", "%rd0", "%rd7", "%f1", "%SP", "%p01x", "%fd4294967296", "%x", "%r"];
        let ranges = [("%r", 5), ("%r", 6), ("%r", 13), ("%rd", 1), ("%rd", 0), ("%f", 2), ("%fd", 9), ("%p0", 2), ("%", 9), ("%x", 1), ("%q", 4), ("%t", 101), ("%t", 100), ("%r0", 13), ("%r01", 3), ("%r012", 1)];
        let plain = ["%SP", "%SPL", "%x", "%r5", "%r05"];
        let asked = Asked { plain: plain.to_vec(), ranges: ranges.to_vec(), variables: false };
        let regs = RegsUsed::of(named.iter().copied(), &asked);
        let set: FxHashSet<&str> = named.iter().copied().collect();
        let min = smallest_indices(&set);
        for (prefix, count) in ranges {
            assert_eq!(regs.used(prefix, Some(count)), min.get(prefix).is_some_and(|&i| i < count), "{prefix}<{count}>");
        }
        for name in plain {
            assert_eq!(regs.used(name, None), set.contains(name), "{name}");
        }
        assert!(matches!(regs.plain, PlainUsed::Few(_)));
    }
}
