//! The rules as the engine's loop ([`crate::engine::saturate`]) runs them:
//! one walk over the classes finds every rule's matches, and a match is
//! applied as the rule's classes, without egg's substitutions.
//!
//! The matches are those egg's search gives each rule (`Searcher` in
//! `rules/mod.rs`, over every class): per rule, the classes in egg's class
//! order, in each class its nodes in order, at most the rule's limit, and
//! in a class no more node searched once the limit is reached. The walk
//! reads each class and each node's opcode once for every rule instead of
//! once for each rule (matrix_free -O2: 64,211 class visits by 25 rules,
//! 15.6 M of the search's 28.6 M host instructions outside the rules'
//! own matching).

use super::{all, Match, Rule, Target};
use crate::engine::facts::EGraph;
use crate::engine::lang::Node;
use egg::Id;
use ptx_ir::isa::Opcode;
use smallvec::SmallVec;

/// The rules available on a target at a level, in the rule table's order.
pub struct RuleSet {
    rules: Vec<&'static Rule>,
    /// Per root opcode (its place in [`root_opcodes`]), the rules rooted
    /// at it, in order.
    by_root: Vec<SmallVec<[u32; 4]>>,
    /// Per rule, the [`RootIndex`] mask of its root opcodes.
    masks: Vec<u64>,
}

/// The matches of one rule's search: the class each was found in, and the
/// classes it binds.
pub type Found = Vec<(Id, Match)>;

impl RuleSet {
    pub fn new(t: Target, o3: bool) -> RuleSet {
        let rules: Vec<&'static Rule> = super::available(t, o3).collect();
        let mut by_root = vec![SmallVec::new(); root_opcodes().len()];
        for (k, r) in rules.iter().enumerate() {
            for o in r.roots {
                if let Ok(p) = root_opcodes().binary_search(o) {
                    if !by_root[p].contains(&(k as u32)) {
                        by_root[p].push(k as u32);
                    }
                }
            }
        }
        let masks = rules.iter().map(|r| root_mask(r.roots)).collect();
        RuleSet { rules, by_root, masks }
    }

    /// [`RuleSet::new`], made once per thread for each target and level (a
    /// module of many small functions made them again for each).
    pub fn shared(t: Target, o3: bool) -> std::rc::Rc<RuleSet> {
        type Made = Vec<((Target, bool), std::rc::Rc<RuleSet>)>;
        thread_local! {
            static MADE: std::cell::RefCell<Made> = const { std::cell::RefCell::new(Vec::new()) };
        }
        MADE.with(|made| {
            let mut made = made.borrow_mut();
            if let Some((_, r)) = made.iter().find(|(k, _)| *k == (t, o3)) {
                return r.clone();
            }
            let r = std::rc::Rc::new(RuleSet::new(t, o3));
            made.push(((t, o3), r.clone()));
            r
        })
    }

    pub fn len(&self) -> usize {
        self.rules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    pub fn name(&self, k: usize) -> &'static str {
        self.rules[k].name
    }

    /// Every rule's matches in the classes `index` lists: rule `k`'s, at
    /// most `limits[k]`, or none when that is `None` (a banned rule is not
    /// searched).
    pub fn search_all(&self, egraph: &EGraph, index: &RootIndex<'_>, limits: &[Option<usize>]) -> Vec<Found> {
        let mut found: Vec<Found> = vec![Vec::new(); self.rules.len()];
        // What each rule may still find, and the rules' masks of those that may.
        let mut room: Vec<usize> = limits.iter().map(|l| l.unwrap_or(0)).collect();
        let mut wanted = self.masks.iter().zip(&room).filter(|(_, r)| **r > 0).fold(0, |m, (k, _)| m | k);
        // One list per rule for the class being walked.
        let mut here: Vec<Vec<Match>> = vec![Vec::new(); self.rules.len()];
        let mut matched: SmallVec<[u32; 8]> = SmallVec::new();
        for &(class, mask) in &index.classes {
            if mask & wanted == 0 {
                continue;
            }
            let eclass = class.id;
            for n in &class.nodes {
                let Node::Op(s, _) = n else { continue };
                let Some(root) = index.root_of(*s) else { continue };
                for &k in &self.by_root[root] {
                    let k = k as usize;
                    // egg's search of a class stops once it has the limit.
                    if here[k].len() >= room[k] {
                        continue;
                    }
                    (self.rules[k].search)(egraph, n, &mut here[k]);
                    // Only a rule with matches in the class has anything
                    // to hand over: most searches find none (matrix_free
                    // -O2: 2.7 M host instructions in asking every searched
                    // rule whether it was listed, 3.5 M in handing over
                    // nothing).
                    if !here[k].is_empty() && !matched.contains(&(k as u32)) {
                        matched.push(k as u32);
                    }
                }
            }
            for k in matched.drain(..) {
                let k = k as usize;
                let mut matches = std::mem::take(&mut here[k]);
                matches.truncate(room[k]);
                room[k] -= matches.len();
                if room[k] == 0 {
                    wanted = self.masks.iter().zip(&room).filter(|(_, r)| **r > 0).fold(0, |m, (k, _)| m | k);
                }
                found[k].extend(matches.drain(..).map(|m| (eclass, m)));
                here[k] = matches;
            }
        }
        found
    }

    /// Applies rule `k` to its matches, in order; gives how many changed
    /// the e-graph.
    pub fn apply(&self, k: usize, egraph: &mut EGraph, found: &[(Id, Match)]) -> usize {
        found.iter().filter(|(eclass, m)| apply_match(self.rules[k], egraph, *eclass, m)).count()
    }
}

/// Adds the right-hand side of a match of `rule` and merges it into
/// `eclass`; says whether that changed the e-graph.
pub(super) fn apply_match(rule: &Rule, egraph: &mut EGraph, eclass: Id, m: &Match) -> bool {
    match (rule.apply)(egraph, m) {
        Some(new) if egraph.analysis.contradiction.is_none() => egraph.union(eclass, new),
        _ => false,
    }
}

/// The classes of an e-graph that have a node of some rule's root opcode,
/// in egg's class order, each with the mask of the root opcodes it has
/// (bit `i`: [`root_opcodes`]`()[i]`). Made at the start of each iteration
/// of the engine's loop, over the e-graph that iteration searches: the
/// search then visits only classes some rule can match. The classes are
/// held as they are, not by id: finding one by its id hashes it into egg's
/// class map (renderer at -O2: 94,330 visits, 4.5 M host instructions).
pub struct RootIndex<'e> {
    classes: Vec<(&'e crate::engine::facts::EClass, u64)>,
    /// Per shape, its opcode's place in [`root_opcodes`] (`NO_ROOT` if none).
    root_of_shape: Vec<u16>,
}

const NO_ROOT: u16 = u16::MAX;

impl<'e> RootIndex<'e> {
    /// The index of `egraph` as it is now (clean: after a rebuild).
    pub fn of(egraph: &'e EGraph) -> RootIndex<'e> {
        let all = root_opcodes();
        // Per shape, its root (shapes are few; nodes are many).
        let shapes = &egraph.analysis.shapes;
        let root_of_shape: Vec<u16> = (0..shapes.len()).map(|s| all.binary_search(&shapes.get(crate::engine::lang::ShapeId(s as u32)).opcode()).map_or(NO_ROOT, |p| p as u16)).collect();
        let mut classes = Vec::new();
        for c in egraph.classes() {
            let mut m = 0u64;
            for n in &c.nodes {
                if let Node::Op(s, _) = n {
                    match root_of_shape[s.0 as usize] {
                        NO_ROOT => {}
                        p => m |= bit(p as usize),
                    }
                }
            }
            if m != 0 {
                classes.push((c, m));
            }
        }
        RootIndex { classes, root_of_shape }
    }

    fn root_of(&self, s: crate::engine::lang::ShapeId) -> Option<usize> {
        match self.root_of_shape.get(s.0 as usize) {
            Some(&p) if p != NO_ROOT => Some(p as usize),
            _ => None,
        }
    }
}

/// Every rule's root opcodes, without repeats, sorted.
fn root_opcodes() -> &'static [Opcode] {
    static ROOTS: std::sync::OnceLock<Vec<Opcode>> = std::sync::OnceLock::new();
    ROOTS.get_or_init(|| {
        let mut v: Vec<Opcode> = all().flat_map(|(_, r)| r.roots.iter().copied()).collect();
        v.sort();
        v.dedup();
        v
    })
}

/// The mask bit of the root opcode at place `p` of [`root_opcodes`]: one
/// bit each while there are at most 64, else every bit (every class with
/// a root opcode is then visited).
fn bit(p: usize) -> u64 {
    match root_opcodes().len() <= 64 {
        true => 1 << p,
        false => u64::MAX,
    }
}

/// The mask of `roots` in [`RootIndex`] bits.
fn root_mask(roots: &[Opcode]) -> u64 {
    roots.iter().filter_map(|o| root_opcodes().binary_search(o).ok()).fold(0, |m, p| m | bit(p))
}
