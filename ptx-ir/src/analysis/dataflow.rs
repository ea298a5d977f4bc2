//! Liveness, reaching definitions and def-use chains over register lanes and
//! the carry flag, block by block on the CFG, then statement by statement.

use super::effects::{add_effects, Effects, Loc, LocTable};
use crate::cfg::Cfg;
use crate::ir::{Function, Stmt};
use petgraph::stable_graph::NodeIndex;

/// A fixed-size set of small integers.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BitSet {
    words: Vec<u64>,
}

impl BitSet {
    pub fn new(n: usize) -> BitSet {
        BitSet { words: vec![0; n.div_ceil(64)] }
    }
    pub fn insert(&mut self, i: usize) -> bool {
        insert_bit(&mut self.words, i)
    }
    pub fn remove(&mut self, i: usize) {
        remove_bit(&mut self.words, i);
    }
    pub fn contains(&self, i: usize) -> bool {
        self.words[i / 64] & (1u64 << (i % 64)) != 0
    }
    /// `self |= other`; true if it grew.
    pub fn union_with(&mut self, other: &BitSet) -> bool {
        union_words(&mut self.words, &other.words)
    }
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        bits(&self.words)
    }
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|w| *w == 0)
    }
    /// From the locations live after a statement with effects `e` to those
    /// live before it: what it writes and kills leaves, what it reads joins.
    pub fn step_back(&mut self, e: &Effects) {
        for d in &e.defs {
            if d.kills {
                self.remove(d.loc.0 as usize);
            }
        }
        for u in &e.uses {
            self.insert(u.0 as usize);
        }
    }
}

/// Sets bit `i` of a set stored as words; true if it was clear.
fn insert_bit(words: &mut [u64], i: usize) -> bool {
    let (w, b) = (i / 64, 1u64 << (i % 64));
    let new = words[w] & b == 0;
    words[w] |= b;
    new
}

/// Clears bit `i` of a set stored as words.
fn remove_bit(words: &mut [u64], i: usize) {
    words[i / 64] &= !(1u64 << (i % 64));
}

/// `a |= b`, word by word; true if `a` grew.
fn union_words(a: &mut [u64], b: &[u64]) -> bool {
    let mut changed = false;
    for (a, b) in a.iter_mut().zip(b) {
        let n = *a | *b;
        changed |= n != *a;
        *a = n;
    }
    changed
}

/// The set bits of words, in increasing order.
fn bits(words: &[u64]) -> impl Iterator<Item = usize> + '_ {
    words.iter().enumerate().flat_map(|(k, &w)| {
        let mut w = w;
        std::iter::from_fn(move || {
            if w == 0 {
                return None;
            }
            let t = w.trailing_zeros() as usize;
            w &= w - 1;
            Some(k * 64 + t)
        })
    })
}

/// A bit set per block, stored together (one allocation for all blocks):
/// block `b`'s words are the `b`-th run of `width`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BitRows {
    width: usize,
    words: Vec<u64>,
}

impl BitRows {
    /// `rows` empty sets of `bits` bits.
    fn new(rows: usize, bits: usize) -> BitRows {
        let width = bits.div_ceil(64);
        BitRows { width, words: vec![0; rows * width] }
    }

    fn row(&self, b: usize) -> &[u64] {
        &self.words[b * self.width..(b + 1) * self.width]
    }

    fn row_mut(&mut self, b: usize) -> &mut [u64] {
        &mut self.words[b * self.width..(b + 1) * self.width]
    }
}

/// The effects of every statement of a body (`None` for non-instructions).
pub fn statement_effects(f: &Function, locs: &LocTable) -> Vec<Option<Effects>> {
    // Made at its size (grown by doubling, it copied its large elements: a
    // fifth of the function's cost), each instruction's effects made in
    // its slot ([`add_effects`]).
    let body = f.body.as_deref().unwrap_or_default();
    let mut fx: Vec<Option<Effects>> = Vec::with_capacity(body.len());
    for s in body {
        match s {
            Stmt::Instr(i) => add_effects(f, locs, i, fx.push_mut(Some(Effects::default())).as_mut().expect("just pushed")),
            _ => fx.push(None),
        }
    }
    fx
}

/// Which locations are live into and out of each block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Liveness {
    pub live_in: BlockSets,
    pub live_out: BlockSets,
    /// How many locations the function has (the [`LocTable`]'s).
    pub locations: usize,
}

/// A set of locations per block (by block index).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockSets {
    /// A bit set per block.
    Dense(BitRows),
    /// Each block's locations in increasing order, stored together.
    Sparse(Groups),
}

impl BlockSets {
    /// Makes `set` (of every location) block `b`'s set.
    pub fn copy_into(&self, b: usize, set: &mut BitSet) {
        match self {
            BlockSets::Dense(rows) => set.words.copy_from_slice(rows.row(b)),
            BlockSets::Sparse(g) => {
                set.words.fill(0);
                for &l in g.get(b) {
                    set.insert(l as usize);
                }
            }
        }
    }

    /// Calls `f` with each location of block `b`, in increasing order.
    pub fn for_each(&self, b: usize, mut f: impl FnMut(usize)) {
        match self {
            BlockSets::Dense(rows) => bits(rows.row(b)).for_each(f),
            BlockSets::Sparse(g) => g.get(b).iter().for_each(|&l| f(l as usize)),
        }
    }
}

/// How [`Liveness::compute_with`] solves the dataflow equations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LivenessSolver {
    /// Round after round over the blocks, 64 locations a machine word:
    /// fastest while blocks times locations is small.
    Dense,
    /// One location at a time, back from its reads: time and memory follow
    /// what is live, not blocks times locations (a large branchy function
    /// has thousands of each, and a few live at each block's edge).
    Sparse,
}

/// Above this many words of a bit set per block, liveness is solved
/// sparsely (512 KB a set of sets; most functions need a few hundred words).
const DENSE_WORDS: usize = 1 << 16;

impl Liveness {
    /// The least solution of the backward dataflow equations, by the
    /// solver that suits the function's size. A write that does not kill
    /// (guarded, or merging part of a register) leaves the location live.
    pub fn compute(cfg: &Cfg, locs: &LocTable, fx: &[Option<Effects>]) -> Liveness {
        let solver = if cfg.node_bound() * locs.len().div_ceil(64) <= DENSE_WORDS { LivenessSolver::Dense } else { LivenessSolver::Sparse };
        Liveness::compute_with(solver, cfg, locs, fx)
    }

    /// [`Liveness::compute`] by the given solver (both give the same sets).
    pub fn compute_with(solver: LivenessSolver, cfg: &Cfg, locs: &LocTable, fx: &[Option<Effects>]) -> Liveness {
        let m = locs.len();
        let (live_in, live_out) = match solver {
            LivenessSolver::Dense => {
                let (i, o) = solve_dense(cfg, m, fx);
                (BlockSets::Dense(i), BlockSets::Dense(o))
            }
            LivenessSolver::Sparse => {
                let (i, o) = solve_sparse(cfg, m, fx);
                (BlockSets::Sparse(i), BlockSets::Sparse(o))
            }
        };
        Liveness { live_in, live_out, locations: m }
    }

    /// Locations live right after statement `k` of block `b`.
    pub fn live_after(&self, cfg: &Cfg, fx: &[Option<Effects>], b: NodeIndex, k: usize) -> BitSet {
        let mut live = BitSet::new(self.locations);
        self.live_out.copy_into(b.index(), &mut live);
        for j in cfg.block(b).stmts.clone().rev() {
            if j == k {
                break;
            }
            if let Some(e) = &fx[j] {
                live.step_back(e);
            }
        }
        live
    }
}

/// Live-in and live-out sets one location at a time: from the blocks that
/// read it before writing it, back through predecessors until a block
/// that writes it.
fn solve_sparse(cfg: &Cfg, m: usize, fx: &[Option<Effects>]) -> (Groups, Groups) {
    let n = cfg.node_bound();
    // (location, block) pairs: the blocks reading a location before any
    // write that kills it there, and the blocks with a write that kills it.
    let (mut read_first, mut killed_in): (Vec<(u32, u32)>, Vec<(u32, u32)>) = (Vec::new(), Vec::new());
    let mut in_layout = vec![false; n];
    {
        // The last block that marked each location, as read first or
        // killed (a block's index plus one; zero for none).
        let (mut read_by, mut killed_by) = (vec![0u32; m], vec![0u32; m]);
        for &b in &cfg.layout {
            in_layout[b.index()] = true;
            let (block, mark) = (b.index() as u32, b.index() as u32 + 1);
            for k in cfg.block(b).stmts.clone() {
                let Some(e) = &fx[k] else { continue };
                for l in &e.uses {
                    let l = l.0 as usize;
                    if killed_by[l] != mark && read_by[l] != mark {
                        read_by[l] = mark;
                        read_first.push((l as u32, block));
                    }
                }
                for d in e.defs.iter().filter(|d| d.kills) {
                    let l = d.loc.0 as usize;
                    if killed_by[l] != mark {
                        killed_by[l] = mark;
                        killed_in.push((l as u32, block));
                    }
                }
            }
        }
    }
    let (read_first, killed_in) = (Groups::of(m, &read_first), Groups::of(m, &killed_in));
    // Each block's predecessors in the layout.
    let preds: Vec<(u32, u32)> = cfg.edges().filter(|(from, _, _)| in_layout[from.index()]).map(|(from, to, _)| (to.index() as u32, from.index() as u32)).collect();
    let preds = Groups::of(n, &preds);
    // (block, location) pairs of the result, by increasing location.
    let (mut live_in, mut live_out): (Vec<(u32, u32)>, Vec<(u32, u32)>) = (Vec::new(), Vec::new());
    // Per block, the last location marked live into it, out of it,
    // and the last whose killing blocks were flagged (plus one).
    let (mut in_mark, mut out_mark, mut kills_mark) = (vec![0u32; n], vec![0u32; n], vec![0u32; n]);
    let mut work: Vec<u32> = Vec::new();
    for l in 0..m as u32 {
        let mark = l + 1;
        for &b in killed_in.get(l as usize) {
            kills_mark[b as usize] = mark;
        }
        for &b in read_first.get(l as usize) {
            in_mark[b as usize] = mark;
            live_in.push((b, l));
            work.push(b);
        }
        while let Some(b) = work.pop() {
            for &p in preds.get(b as usize) {
                let pi = p as usize;
                if out_mark[pi] == mark {
                    continue;
                }
                out_mark[pi] = mark;
                live_out.push((pi as u32, l));
                if kills_mark[pi] != mark && in_mark[pi] != mark {
                    in_mark[pi] = mark;
                    live_in.push((pi as u32, l));
                    work.push(pi as u32);
                }
            }
        }
    }
    (Groups::of(n, &live_in), Groups::of(n, &live_out))
}

/// Live-in and live-out sets by rounds over the blocks to a fixed point.
fn solve_dense(cfg: &Cfg, m: usize, fx: &[Option<Effects>]) -> (BitRows, BitRows) {
    let n = cfg.node_bound();
    let (mut uses, mut defs) = (BitRows::new(n, m), BitRows::new(n, m));
    for &b in &cfg.layout {
        let (u, d) = (uses.row_mut(b.index()), defs.row_mut(b.index()));
        for k in cfg.block(b).stmts.clone().rev() {
            let Some(e) = &fx[k] else { continue };
            for def in &e.defs {
                if def.kills {
                    remove_bit(u, def.loc.0 as usize);
                    insert_bit(d, def.loc.0 as usize);
                }
            }
            for l in &e.uses {
                insert_bit(u, l.0 as usize);
            }
        }
    }
    let mut live_in = uses.clone();
    let mut live_out = BitRows::new(n, m);
    // One block's out set at a time, in a buffer kept across blocks.
    let mut out = vec![0u64; uses.width];
    // A block is looked at again only when the in set of a successor
    // changed since it was last looked at: the round that confirms the
    // fixed point, and most blocks of the rounds before it, are skipped.
    let mut stale = vec![true; n];
    let mut changed = true;
    while changed {
        changed = false;
        for &b in cfg.layout.iter().rev() {
            if !std::mem::take(&mut stale[b.index()]) {
                continue;
            }
            out.fill(0);
            for s in cfg.successors(b) {
                union_words(&mut out, live_in.row(s.index()));
            }
            // in = uses ∪ (out − defs), word by word.
            let (u, d, inn) = (uses.row(b.index()), defs.row(b.index()), live_in.row_mut(b.index()));
            let mut grew = false;
            for (((i, &o), &d), &u) in inn.iter_mut().zip(&out).zip(d).zip(u) {
                let w = u | (o & !d);
                grew |= w != *i;
                *i = w;
            }
            live_out.row_mut(b.index()).copy_from_slice(&out);
            if grew {
                changed = true;
                for p in cfg.predecessors(b) {
                    stale[p.index()] = true;
                }
            }
        }
    }
    (live_in, live_out)
}

/// Values grouped by a key below some `n`, each group in the order given
/// (a counting sort of (key, value) pairs), stored together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Groups<T = u32> {
    start: Vec<u32>,
    values: Vec<T>,
}

impl<T: Copy> Groups<T> {
    pub fn of(n: usize, pairs: &[(u32, T)]) -> Groups<T> {
        // `start[k]` counts the values of keys up to `k`, then, as each
        // group is filled from its end (the pairs taken from the last),
        // falls to the group's first slot.
        let mut start = vec![0u32; n + 1];
        for &(k, _) in pairs {
            start[k as usize] += 1;
        }
        for i in 1..n {
            start[i] += start[i - 1];
        }
        start[n] = pairs.len() as u32;
        // Every slot is written below; the values in the pairs' order only fill it first.
        let mut values: Vec<T> = pairs.iter().map(|&(_, v)| v).collect();
        for &(k, v) in pairs.iter().rev() {
            start[k as usize] -= 1;
            values[start[k as usize] as usize] = v;
        }
        Groups { start, values }
    }

    /// Groups filled key by key, in key order: `fill(k, values)` pushes
    /// the values of key `k` (`values` holds at most `capacity`).
    pub fn by_key(n: usize, capacity: usize, mut fill: impl FnMut(usize, &mut Vec<T>)) -> Groups<T> {
        let mut start = Vec::with_capacity(n + 1);
        let mut values = Vec::with_capacity(capacity);
        for k in 0..n {
            start.push(values.len() as u32);
            fill(k, &mut values);
        }
        start.push(values.len() as u32);
        Groups { start, values }
    }

    /// The values of key `k`.
    #[inline]
    pub fn get(&self, k: usize) -> &[T] {
        // Both ends under one bounds check (two indexings cost renderer
        // -O2's φ placement 1.1 M more than a `Vec` per key).
        let ends = &self.start[k..k + 2];
        &self.values[ends[0] as usize..ends[1] as usize]
    }

    /// The values of key `k`, to change in place.
    #[inline]
    pub fn get_mut(&mut self, k: usize) -> &mut [T] {
        let ends = &self.start[k..k + 2];
        &mut self.values[ends[0] as usize..ends[1] as usize]
    }

    /// How many keys.
    pub fn keys(&self) -> usize {
        self.start.len() - 1
    }
}

/// A definition: statement `stmt` writes `loc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DefSite {
    pub stmt: usize,
    pub loc: Loc,
}

/// Reaching definitions and the def-use chains they give.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DefUse {
    /// Every definition, in statement order.
    pub defs: Vec<DefSite>,
    /// For each use (statement, location): the definitions that may reach it,
    /// and whether it may also be reached by no definition (read before any write
    /// on some path: a parameter register, or an uninitialized read).
    pub uses: Vec<UseSite>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UseSite {
    pub stmt: usize,
    pub loc: Loc,
    /// Indices into `DefUse::defs`.
    pub reaching: Vec<u32>,
    pub from_entry: bool,
}

impl DefUse {
    pub fn compute(cfg: &Cfg, locs: &LocTable, fx: &[Option<Effects>]) -> DefUse {
        let n = cfg.node_bound();
        let mut defs = Vec::new();
        for (k, e) in fx.iter().enumerate() {
            for d in e.iter().flat_map(|e| e.defs.iter()) {
                defs.push((DefSite { stmt: k, loc: d.loc }, d.kills));
            }
        }
        let nd = defs.len();
        // Per location, the definitions of it.
        let mut of_loc: Vec<Vec<u32>> = vec![Vec::new(); locs.len()];
        for (i, (d, _)) in defs.iter().enumerate() {
            of_loc[d.loc.0 as usize].push(i as u32);
        }
        let first_def_of_stmt = {
            let mut v = vec![0u32; fx.len() + 1];
            let mut i = 0;
            for (k, slot) in v.iter_mut().enumerate().take(fx.len()) {
                *slot = i;
                i += fx[k].as_ref().map_or(0, |e| e.defs.len()) as u32;
            }
            v[fx.len()] = i;
            v
        };
        // gen/kill per block over definitions, and "may be undefined" over locations.
        let mut gen = vec![BitSet::new(nd); n];
        let mut killed_locs = vec![BitSet::new(locs.len()); n];
        for &b in &cfg.layout {
            for k in cfg.block(b).stmts.clone() {
                let Some(e) = &fx[k] else { continue };
                for (j, d) in e.defs.iter().enumerate() {
                    let id = first_def_of_stmt[k] as usize + j;
                    if d.kills {
                        for &other in &of_loc[d.loc.0 as usize] {
                            gen[b.index()].remove(other as usize);
                        }
                        killed_locs[b.index()].insert(d.loc.0 as usize);
                    }
                    gen[b.index()].insert(id);
                }
            }
        }
        let kill_mask = |b: usize, set: &mut BitSet| {
            for l in killed_locs[b].iter() {
                for &d in &of_loc[l] {
                    set.remove(d as usize);
                }
            }
        };
        let mut inn = vec![BitSet::new(nd); n];
        let mut out = gen.clone();
        // Locations that may be unwritten on entry to each block.
        let mut undef_in = vec![BitSet::new(locs.len()); n];
        let mut undef_out = vec![BitSet::new(locs.len()); n];
        let all = {
            let mut s = BitSet::new(locs.len());
            for i in 0..locs.len() {
                s.insert(i);
            }
            s
        };
        let mut changed = true;
        while changed {
            changed = false;
            for &b in &cfg.layout {
                let bi = b.index();
                let mut i = BitSet::new(nd);
                let mut u = if b == cfg.entry { all.clone() } else { BitSet::new(locs.len()) };
                for p in cfg.predecessors(b) {
                    i.union_with(&out[p.index()]);
                    u.union_with(&undef_out[p.index()]);
                }
                let mut o = i.clone();
                kill_mask(bi, &mut o);
                o.union_with(&gen[bi]);
                let mut uo = u.clone();
                for l in killed_locs[bi].iter() {
                    uo.remove(l);
                }
                if o != out[bi] || uo != undef_out[bi] || i != inn[bi] {
                    changed = true;
                    out[bi] = o;
                    undef_out[bi] = uo;
                    inn[bi] = i;
                    undef_in[bi] = u;
                } else {
                    undef_in[bi] = u;
                }
            }
        }
        // Walk each block forward to attach reaching definitions to uses.
        let mut uses = Vec::new();
        for &b in &cfg.layout {
            let mut cur = inn[b.index()].clone();
            let mut undef = undef_in[b.index()].clone();
            for k in cfg.block(b).stmts.clone() {
                let Some(e) = &fx[k] else { continue };
                for l in &e.uses {
                    let reaching: Vec<u32> = of_loc[l.0 as usize].iter().copied().filter(|d| cur.contains(*d as usize)).collect();
                    uses.push(UseSite { stmt: k, loc: *l, reaching, from_entry: undef.contains(l.0 as usize) });
                }
                for (j, d) in e.defs.iter().enumerate() {
                    let id = first_def_of_stmt[k] as usize + j;
                    if d.kills {
                        for &other in &of_loc[d.loc.0 as usize] {
                            cur.remove(other as usize);
                        }
                        undef.remove(d.loc.0 as usize);
                    }
                    cur.insert(id);
                }
            }
        }
        DefUse { defs: defs.into_iter().map(|(d, _)| d).collect(), uses }
    }

    /// The uses each definition reaches, by definition index.
    pub fn uses_of_defs(&self) -> Vec<Vec<u32>> {
        let mut v = vec![Vec::new(); self.defs.len()];
        for (u, site) in self.uses.iter().enumerate() {
            for &d in &site.reaching {
                v[d as usize].push(u as u32);
            }
        }
        v
    }
}
