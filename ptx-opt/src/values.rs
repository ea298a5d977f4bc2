//! The value view of a function: which definition each register read sees.
//!
//! PTX is a statement list over registers, not SSA. This view gives every
//! read of a scalar register the *version* it sees, as SSA construction would
//! name it (Cytron et al.: φ at the iterated dominance frontier of the
//! definitions, then a renaming walk over the dominator tree), without
//! rewriting the function:
//!
//! - [`VersionDef::Def`]: the value written by one statement;
//! - [`VersionDef::Phi`]: the merge of several definitions at a block's entry;
//! - [`VersionDef::Entry`]: the register's value on entry (never written on
//!   some path: a parameter register or an uninitialized read).
//!
//! Invariant: a `Def` or `Phi` version's definition point dominates every read
//! that sees it (the SSA dominance property), so a value computed from such a
//! version may be placed anywhere its definition dominates *as long as the
//! register still holds that version there*; [`ValueView::version_at`] answers
//! that for any point of the original statement list.
//!
//! Which registers a pass may treat as values and which stay *variables*
//! (physically written at every original definition) follows from the view:
//! a register whose reads see a `Phi`, or that has a definition that does not
//! kill (a guarded write, a write of some lanes or bytes), must keep every
//! write ([`ValueView::needs_writes`]). Vector registers (`.v2`/`.v4`) have
//! no versions: passes leave instructions that touch them alone. The view is
//! built on the reachable blocks; statements of unreachable blocks have none.
//!
//! φs are placed with the view only for the registers some block reads
//! before writing (Briggs et al.'s global names, semi-pruned SSA): only their
//! reads can see one. The other registers' φs, which no read sees but
//! [`ValueView::version_at`] may name, are placed for one register when
//! first asked about it (renderer -O2: 275,266 φs over 110 views placed
//! at once, of which 47,918 are of registers read across blocks; `build`
//! 76.5 -> 55.2 M).

use ptx_ir::analysis::{dominance_frontiers, DomTree, Frontiers};
use ptx_ir::cfg::Cfg;
use ptx_ir::ir::{Function, Instruction, RegId, Stmt};
use ptx_ir::isa::Opcode;
use petgraph::stable_graph::NodeIndex;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::cell::RefCell;

/// One version of a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Version {
    pub reg: RegId,
    pub def: VersionDef,
}

/// Where a version comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum VersionDef {
    /// The value on entry to the function.
    Entry,
    /// The merge at the entry of a block (a φ).
    Phi(NodeIndex),
    /// The value written by statement `k` (for a write that does not kill, the
    /// register after the statement: new or old value).
    Def(usize),
}

/// The statements reading one version ([`ValueView::readers`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Readers {
    pub count: usize,
    /// The last statement (in the statement list) that reads it.
    pub last: usize,
}

/// A register's definitions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RegInfo {
    /// Statements that write it, in order (most registers have one).
    pub defs: SmallVec<[usize; 1]>,
    /// Some write leaves the old value in place (guarded, partial).
    pub partial_write: bool,
    /// Some read sees a φ of it.
    pub read_at_phi: bool,
    /// A vector register: no versions.
    pub vector: bool,
}

/// The value view of one function (see the module documentation).
pub struct ValueView {
    /// For each statement, the version of each scalar register it reads.
    reads: Vec<SmallVec<[(RegId, Version); 3]>>,
    regs: Vec<RegInfo>,
    /// Per register: are its φs in `phis_in_block` (a register some block
    /// read before writing when the view was built), else in
    /// `phis_when_asked`. Either says the same ([`ValueView::has_phi`]):
    /// renaming reads ([`ValueView::reads_renamed`]) leaves it as it is.
    placed: Vec<bool>,
    /// The registers of `placed` with a φ at each block's entry (in
    /// register order: looked up by binary search).
    phis_in_block: Vec<Vec<RegId>>,
    /// The blocks with a φ of a register not `placed`, per register asked
    /// about (sorted), found when first asked.
    phis_when_asked: RefCell<FxHashMap<RegId, Box<[NodeIndex]>>>,
    /// Each reachable block's dominance frontier, for the φs placed when asked.
    frontiers: Frontiers,
    /// The placement's marks, kept from `build` for the φs placed when asked.
    placement: RefCell<PhiPlacement>,
    /// The end of each block's statement range (the last write of a
    /// register inside a block is found among its sorted `defs`).
    block_end: Vec<usize>,
    /// Memo of the version at the end of a block.
    end_memo: RefCell<FxHashMap<(u32, u32), VersionDef>>,
    block_of_stmt: Vec<NodeIndex>,
    /// Statements some read sees the value of (a `Def` version read).
    read_defs: Vec<bool>,
    /// Per statement: [`ValueView::operands_all_read`].
    operands_all_read: Vec<bool>,
    /// The scalar registers each statement writes ([`ValueView::writes`]):
    /// statement `k`'s are `written[first_write[k]..first_write[k + 1]]`.
    written: Vec<RegId>,
    first_write: Vec<u32>,
    reachable: Vec<bool>,
    idom: Vec<Option<NodeIndex>>,
    /// Per reachable block, when the renaming walk over the dominator tree
    /// entered and left it (`a` dominates `b` when `a`'s span holds `b`'s).
    dom_span: Vec<(u32, u32)>,
}

impl ValueView {
    /// Builds the view of a function with a body.
    pub fn build(f: &Function, cfg: &Cfg, dom: &DomTree) -> ValueView {
        let empty = Vec::new();
        let body = f.body.as_ref().unwrap_or(&empty);
        let mut regs: Vec<RegInfo> = f.regs.iter().map(|r| RegInfo { vector: r.vector.is_some(), ..RegInfo::default() }).collect();
        let reachable: Vec<bool> = (0..cfg.node_bound()).map(|i| dom.contains(NodeIndex::new(i))).collect();
        let scan = scan(body, cfg, &reachable, &mut regs);
        let placed = scan.read_across.clone();
        ValueView::build_placing(cfg, dom, scan, regs, placed, reachable)
    }

    /// [`ValueView::build`] after the scan, with the φs of the registers
    /// `placed` says placed with the view.
    fn build_placing(cfg: &Cfg, dom: &DomTree, mut scan: Scan, mut regs: Vec<RegInfo>, placed: Vec<bool>, reachable: Vec<bool>) -> ValueView {
        let frontiers = dominance_frontiers(cfg, dom);
        let mut placement = PhiPlacement::new(cfg.node_bound());
        let phi_blocks_of = place_phis(cfg, &frontiers, &regs, &placed, &mut placement);
        let (read_defs, dom_span) = rename(cfg, dom, &mut scan, &phi_blocks_of, &mut regs);
        let Scan { reads, operands_all_read, def_regs: written, def_start: first_write, .. } = scan;
        let idom = (0..cfg.node_bound()).map(|i| dom.idom(NodeIndex::new(i))).collect();
        let block_end = (0..cfg.node_bound()).map(|i| cfg.graph.node_weight(NodeIndex::new(i)).map_or(0, |b| b.stmts.end)).collect();
        ValueView {
            reads,
            regs,
            placed,
            phis_in_block: phi_blocks_of,
            phis_when_asked: RefCell::default(),
            frontiers,
            placement: RefCell::new(placement),
            block_end,
            end_memo: RefCell::default(),
            block_of_stmt: cfg.block_of_stmt.clone(),
            read_defs,
            operands_all_read,
            written,
            first_write,
            reachable,
            idom,
            dom_span,
        }
    }

    /// [`ValueView::build`] with every register's φs placed with the view,
    /// none when asked: the reference the placement when asked is checked
    /// against.
    #[cfg(test)]
    fn build_placing_every_phi(f: &Function, cfg: &Cfg, dom: &DomTree) -> ValueView {
        let body = f.body.as_deref().unwrap_or(&[]);
        let mut regs: Vec<RegInfo> = f.regs.iter().map(|r| RegInfo { vector: r.vector.is_some(), ..RegInfo::default() }).collect();
        let reachable: Vec<bool> = (0..cfg.node_bound()).map(|i| dom.contains(NodeIndex::new(i))).collect();
        let scan = scan(body, cfg, &reachable, &mut regs);
        let placed = vec![true; regs.len()];
        ValueView::build_placing(cfg, dom, scan, regs, placed, reachable)
    }

    /// Makes this the view of `g`, a copy of the function it is of in which
    /// only register reads of statements `changed` were renamed (the same
    /// statements, writes and blocks): the versions those statements read
    /// are taken again, each the version its register holds there
    /// ([`ValueView::version_at`], which only writes decide; a register
    /// still read keeps its version), and what reads decide (which
    /// registers are read at a φ, which definitions are read) is found
    /// again from all reads. Equal to [`ValueView::build`] of `g`.
    pub fn reads_renamed(&mut self, g: &Function, changed: &[usize]) {
        let body = g.body.as_deref().unwrap_or(&[]);
        for &k in changed {
            let Some(Stmt::Instr(ins)) = body.get(k) else { continue };
            if !self.reachable(k) {
                continue;
            }
            let old = std::mem::take(&mut self.reads[k]);
            let mut new: SmallVec<[(RegId, Version); 3]> = SmallVec::new();
            ins.for_each_reg(|r, access| {
                if !access.read || self.regs[r.0 as usize].vector || new.iter().any(|(x, _)| *x == r) {
                    return;
                }
                let v = old.iter().find(|(x, _)| *x == r).map_or_else(|| Version { reg: r, def: self.version_at(r, k) }, |(_, v)| *v);
                new.push((r, v));
            });
            self.reads[k] = new;
        }
        for info in &mut self.regs {
            info.read_at_phi = false;
        }
        self.read_defs.iter_mut().for_each(|d| *d = false);
        for reads in &self.reads {
            for (r, v) in reads {
                match v.def {
                    VersionDef::Phi(_) => self.regs[r.0 as usize].read_at_phi = true,
                    VersionDef::Def(d) => self.read_defs[d] = true,
                    VersionDef::Entry => {}
                }
            }
        }
    }

    /// Do two views say the same of every statement and register (the
    /// check of [`ValueView::reads_renamed`] in debug builds)? Which
    /// registers' φs were placed with the view is left out: the φs are the
    /// same (the frontiers of the same definitions) however they were found.
    pub fn same_as(&self, other: &ValueView) -> bool {
        self.reads == other.reads
            && self.regs == other.regs
            && self.frontiers == other.frontiers
            && self.block_end == other.block_end
            && self.block_of_stmt == other.block_of_stmt
            && self.read_defs == other.read_defs
            && self.operands_all_read == other.operands_all_read
            && self.written == other.written
            && self.first_write == other.first_write
            && self.reachable == other.reachable
            && self.idom == other.idom
            && self.dom_span == other.dom_span
    }

    /// Facts about the versions statements write, to a fixed point: `fact`
    /// sees each reachable instruction of one of `opcodes` (the only ones
    /// that give a fact), in order, with the facts found so far and gives
    /// the register it writes and its fact (a definition may come after its
    /// readers in the text when blocks are laid out out of dominance order,
    /// hence the repeat). `fact` must be a function of the statement and of
    /// the facts of the versions the statement reads ([`Self::read`]).
    pub fn propagate<T>(&self, body: &[Stmt], opcodes: &[Opcode], mut fact: impl FnMut(usize, &Instruction, &FxHashMap<Version, T>) -> Option<(RegId, T)>) -> FxHashMap<Version, T> {
        let asked: Vec<(usize, &Instruction)> = body
            .iter()
            .enumerate()
            .filter_map(|(k, s)| match s {
                Stmt::Instr(ins) if opcodes.contains(&ins.opcode) && self.reachable(k) => Some((k, &**ins)),
                _ => None,
            })
            .collect();
        // When every asked statement reads only versions written before it
        // in the text (blocks laid out in dominance order; a value carried
        // round a loop is read through a φ, which has no fact), each fact
        // is final once made: a second round would see the same inputs and
        // make the same facts, only to find no new one. It is skipped
        // (matrix_free -O2: `propagate` 18.0 -> 12.3 M).
        let in_order = asked.iter().all(|&(k, _)| self.reads(k).iter().all(|(_, v)| !matches!(v.def, VersionDef::Def(j) if j >= k)));
        let mut facts: FxHashMap<Version, T> = FxHashMap::default();
        loop {
            let before = facts.len();
            for &(k, ins) in &asked {
                if let Some((dest, t)) = fact(k, ins, &facts) {
                    facts.insert(Version { reg: dest, def: VersionDef::Def(k) }, t);
                }
            }
            if in_order || facts.len() == before {
                return facts;
            }
        }
    }

    /// The version of `reg` that statement `k` reads (`None` if it does not
    /// read it as a scalar register, or the statement is unreachable).
    pub fn read(&self, k: usize, reg: RegId) -> Option<Version> {
        self.reads.get(k)?.iter().find(|(r, _)| *r == reg).map(|(_, v)| *v)
    }

    /// Per version read anywhere: how many statements read it and the last
    /// one in the statement list (passes that must not stretch a live range
    /// ask whether a version is read past some point).
    pub fn readers(&self) -> FxHashMap<Version, Readers> {
        // Sized for the reads (at least as many as versions read) once, not
        // grown as it fills (renderer -O2: 12.9 -> 9.9 M over 78 calls).
        let reads = self.reads.iter().map(|r| r.len()).sum();
        let mut out: FxHashMap<Version, Readers> = FxHashMap::with_capacity_and_hasher(reads, Default::default());
        for (k, reads) in self.reads.iter().enumerate() {
            for (_, v) in reads {
                let e = out.entry(*v).or_insert(Readers { count: 0, last: k });
                e.count += 1;
                e.last = k;
            }
        }
        out
    }

    /// Every (register, version) statement `k` reads.
    pub fn reads(&self, k: usize) -> &[(RegId, Version)] {
        self.reads.get(k).map_or(&[], |v| v.as_slice())
    }

    /// Does reachable statement `k` read every register of its operands
    /// that it does not write, and some (its guard left out)? Then the
    /// registers it reads are its guard's and those of its sources. Found
    /// with the view's walk over the operands, for `sccp`, which asks it of
    /// every statement that writes a register (its own walk cost renderer
    /// -O2's `sccp` 11.8 M); renaming reads does not change it.
    pub fn operands_all_read(&self, k: usize) -> bool {
        self.operands_all_read.get(k).copied().unwrap_or(false)
    }

    /// Every write of a scalar register, numbered densely: `(first, written)`,
    /// statement `k`'s writes being `written[first[k]..first[k + 1]]`, each
    /// register once, in operand order (for `sccp`, which numbers the
    /// versions statements write so; its own counting sort of every
    /// register's definitions cost renderer -O2 5.6 M).
    pub fn writes(&self) -> (&[u32], &[RegId]) {
        (&self.first_write, &self.written)
    }

    /// Does some read see the value statement `k` writes (directly, not
    /// through a φ)?
    pub fn is_read(&self, k: usize) -> bool {
        self.read_defs.get(k).copied().unwrap_or(false)
    }

    pub fn reg(&self, r: RegId) -> &RegInfo {
        &self.regs[r.0 as usize]
    }

    /// Must every write of `r` stay a physical write of `r`? True when a read
    /// sees a φ of it (the merge happens in the register) or when a write
    /// does not kill (the old value must be in the register).
    pub fn needs_writes(&self, r: RegId) -> bool {
        let i = &self.regs[r.0 as usize];
        i.read_at_phi || i.partial_write || i.vector
    }

    /// The inputs of the φ of `reg` at block `b` (one [`ValueView::has_phi`] says there is):
    /// per reachable predecessor block, once, the version it holds at its
    /// end. Found when asked, not with the view: most φs of a function
    /// (minimal SSA) are read by nothing, and only `sccp` asks, for the
    /// ones that are.
    pub fn phi_inputs(&self, cfg: &Cfg, b: NodeIndex, reg: RegId) -> SmallVec<[(NodeIndex, VersionDef); 4]> {
        let mut inputs: SmallVec<[(NodeIndex, VersionDef); 4]> = SmallVec::new();
        for p in cfg.graph.neighbors_directed(b, petgraph::Direction::Incoming) {
            if self.reachable[p.index()] && !inputs.iter().any(|&(q, _)| q == p) {
                inputs.push((p, self.version_at_end(reg, p)));
            }
        }
        inputs
    }

    /// The block of statement `k`.
    pub fn block_of(&self, k: usize) -> NodeIndex {
        self.block_of_stmt[k]
    }

    /// Is statement `k` in a block the entry reaches?
    pub fn reachable(&self, k: usize) -> bool {
        self.block_of_stmt.get(k).is_some_and(|b| self.reachable[b.index()])
    }

    /// The version `reg` holds just before statement `k` (in the original
    /// statement list), for a reachable statement.
    pub fn version_at(&self, reg: RegId, k: usize) -> VersionDef {
        let b = self.block_of_stmt[k];
        // The last write of `reg` before `k` in the same block.
        let defs = &self.regs[reg.0 as usize].defs;
        let i = defs.partition_point(|&d| d < k);
        if i > 0 {
            let d = defs[i - 1];
            if self.block_of_stmt[d] == b {
                return VersionDef::Def(d);
            }
        }
        self.version_at_entry(reg, b)
    }

    /// The version `reg` holds at the end of block `b`.
    pub fn version_at_end(&self, reg: RegId, b: NodeIndex) -> VersionDef {
        if let Some(k) = self.last_def_in_block(reg, b) {
            return VersionDef::Def(k);
        }
        self.version_at_entry(reg, b)
    }

    /// The last statement of reachable block `b` that writes `reg`.
    fn last_def_in_block(&self, reg: RegId, b: NodeIndex) -> Option<usize> {
        let defs = &self.regs[reg.0 as usize].defs;
        let i = defs.partition_point(|&d| d < self.block_end[b.index()]);
        let d = *defs.get(i.checked_sub(1)?)?;
        (self.block_of_stmt[d] == b).then_some(d)
    }

    /// Every φ (block, register), those a read may see and those it may
    /// not (the debug builds' check of `sccp` numbers them all): the
    /// placement of every register's.
    pub fn all_phis(&self) -> Vec<(NodeIndex, RegId)> {
        let mut all: Vec<(NodeIndex, RegId)> = Vec::new();
        for (b, regs) in self.phis_in_block.iter().enumerate() {
            all.extend(regs.iter().map(|&r| (NodeIndex::new(b), r)));
        }
        for reg in (0..self.regs.len() as u32).map(RegId).filter(|r| !self.placed[r.0 as usize]) {
            self.with_phi_blocks_when_asked(reg, |blocks| all.extend(blocks.iter().map(|&b| (b, reg))));
        }
        all
    }

    /// The blocks with a φ of `reg`, sorted.
    #[cfg(test)]
    fn phi_blocks(&self, reg: RegId) -> Vec<NodeIndex> {
        (0..self.phis_in_block.len()).map(NodeIndex::new).filter(|&b| self.has_phi(reg, b)).collect()
    }

    /// The iterated dominance frontier of the blocks that write `reg`, sorted.
    fn place_phis_of(&self, reg: RegId) -> Box<[NodeIndex]> {
        let mut blocks: Vec<NodeIndex> = Vec::new();
        self.placement.borrow_mut().place(&self.frontiers, &self.block_of_stmt, &self.regs[reg.0 as usize], |b| blocks.push(b));
        blocks.sort_unstable();
        blocks.into()
    }

    /// `answer` of the blocks with a φ of `reg`, a register not `placed`
    /// (sorted; found when first asked, then kept).
    fn with_phi_blocks_when_asked<T>(&self, reg: RegId, answer: impl FnOnce(&[NodeIndex]) -> T) -> T {
        if let Some(blocks) = self.phis_when_asked.borrow().get(&reg) {
            return answer(blocks);
        }
        let blocks = self.place_phis_of(reg);
        let answered = answer(&blocks);
        self.phis_when_asked.borrow_mut().insert(reg, blocks);
        answered
    }

    /// Does block `b` have a φ of `reg`?
    pub fn has_phi(&self, reg: RegId, b: NodeIndex) -> bool {
        if self.placed[reg.0 as usize] {
            self.phis_in_block[b.index()].binary_search(&reg).is_ok()
        } else {
            self.with_phi_blocks_when_asked(reg, |blocks| blocks.binary_search(&b).is_ok())
        }
    }

    /// Does reachable block `a` strictly dominate reachable block `b`?
    fn strictly_dominates(&self, a: NodeIndex, b: NodeIndex) -> bool {
        let ((a_in, a_out), (b_in, b_out)) = (self.dom_span[a.index()], self.dom_span[b.index()]);
        a != b && a_in <= b_in && b_out <= a_out
    }

    fn version_at_entry(&self, reg: RegId, b: NodeIndex) -> VersionDef {
        // A register written once, in a block that strictly dominates `b`,
        // holds that write at `b`'s entry: a block of the iterated
        // dominance frontier of one block `d` is never strictly dominated
        // by `d`, so no φ of it lies on the way. Most registers are written
        // once; this skips the walk and the placement of their φs when
        // asked (-O2: renderer's `copy-prop` 51.1 -> 43.9 M, matrix_free's
        // `sccp` 34.2 -> 32.7 M).
        if let [k] = self.regs[reg.0 as usize].defs[..] {
            if self.strictly_dominates(self.block_of_stmt[k], b) {
                return VersionDef::Def(k);
            }
        }
        self.version_at_entry_by_walk(reg, b)
    }

    /// [`ValueView::version_at_entry`] without the shortcut for registers
    /// written once: its φ at `b`, or the walk up the dominator tree.
    fn version_at_entry_by_walk(&self, reg: RegId, b: NodeIndex) -> VersionDef {
        if self.has_phi(reg, b) {
            return VersionDef::Phi(b);
        }
        // Walk up the dominator tree to the nearest block that writes `reg` or has its φ.
        let mut chain: SmallVec<[NodeIndex; 16]> = SmallVec::new();
        let mut cur = self.idom[b.index()];
        let found = loop {
            let Some(c) = cur else { break VersionDef::Entry };
            if let Some(v) = self.end_memo.borrow().get(&(c.index() as u32, reg.0)) {
                break *v;
            }
            if let Some(k) = self.last_def_in_block(reg, c) {
                break VersionDef::Def(k);
            }
            if self.has_phi(reg, c) {
                break VersionDef::Phi(c);
            }
            chain.push(c);
            cur = self.idom[c.index()];
        };
        let mut memo = self.end_memo.borrow_mut();
        for c in chain {
            memo.insert((c.index() as u32, reg.0), found);
        }
        found
    }
}

/// What one walk over the statements finds (the first step of
/// [`ValueView::build`]; each step is its own function, not inlined:
/// renderer -O2, `build` 79.3 M inlined, 76.7 M as three calls).
struct Scan {
    /// Per statement: the scalar registers it reads, each once, in operand
    /// order, with their versions when an earlier statement of the block
    /// writes them, else `Entry` until [`rename`] sets them.
    reads: Vec<SmallVec<[(RegId, Version); 3]>>,
    /// The scalar registers each statement writes, all statements' in one
    /// list: statement `k`'s are `def_regs[def_start[k]..def_start[k + 1]]`
    /// (a SmallVec per statement for reads and one for writes, filled and
    /// then copied into `reads`, cost renderer -O2's `build` 84.7 M, this
    /// 79.3 M).
    def_regs: Vec<RegId>,
    def_start: Vec<u32>,
    /// Registers some block reads before writing them: only their reads can
    /// see a φ (Briggs et al.'s global names), the others' see a write of
    /// their own block.
    read_across: Vec<bool>,
    /// Per statement: [`ValueView::operands_all_read`].
    operands_all_read: Vec<bool>,
}

impl Scan {
    fn defs(&self, k: usize) -> &[RegId] {
        &self.def_regs[self.def_start[k] as usize..self.def_start[k + 1] as usize]
    }
}

/// The scalar registers each reachable statement reads and writes (what
/// `effects` says it reads and writes: its register lanes, without the
/// carry flag and memory, which have no versions), straight from the
/// operands; each register's definitions and whether one does not kill go
/// into `regs`.
#[inline(never)]
fn scan(body: &[Stmt], cfg: &Cfg, reachable: &[bool], regs: &mut [RegInfo]) -> Scan {
    let mut reads: Vec<SmallVec<[(RegId, Version); 3]>> = std::iter::repeat_with(SmallVec::new).take(body.len()).collect();
    let mut def_regs: Vec<RegId> = Vec::with_capacity(body.len());
    let mut def_start: Vec<u32> = Vec::with_capacity(body.len() + 1);
    let mut read_across = vec![false; regs.len()];
    let mut operands_all_read = vec![false; body.len()];
    // Per register, the last block that wrote it (a block's index plus one).
    let mut written_in = vec![0u32; regs.len()];
    for (k, s) in body.iter().enumerate() {
        def_start.push(def_regs.len() as u32);
        let Stmt::Instr(ins) = s else { continue };
        let block = cfg.block_of_stmt[k].index();
        if !reachable[block] {
            continue;
        }
        let mark = block as u32 + 1;
        let guarded = ins.guard.is_some();
        let first_def = def_regs.len();
        let stmt_reads = &mut reads[k];
        // For `operands_all_read`: registers read and not written (the
        // guard's one of them), and some neither read nor written.
        let (mut reads_not_written, mut unread) = (0u32, false);
        ins.for_each_reg(#[inline(always)] |r, access| {
            reads_not_written += (access.read && !access.write) as u32;
            unread |= !access.read && !access.write;
            let info = &mut regs[r.0 as usize];
            if info.vector {
                return;
            }
            if access.read && !stmt_reads.iter().any(|&(x, _)| x == r) {
                // A register an earlier statement of this block writes: the
                // read sees the last such write (this statement's own, if it
                // writes it too, is on `defs` already when the write came
                // first), what the renaming walk would give it.
                let def = if written_in[r.0 as usize] == mark {
                    VersionDef::Def(*info.defs.iter().rev().find(|&&d| d != k).expect("a write earlier in the block"))
                } else {
                    read_across[r.0 as usize] = true;
                    VersionDef::Entry
                };
                stmt_reads.push((r, Version { reg: r, def }));
            }
            if access.write {
                if guarded || access.merges() {
                    info.partial_write = true;
                }
                if !def_regs[first_def..].contains(&r) {
                    def_regs.push(r);
                    info.defs.push(k);
                }
            }
        });
        operands_all_read[k] = !unread && reads_not_written > guarded as u32;
        #[cfg(debug_assertions)]
        assert_eq!(operands_all_read[k], operands_all_read_by_walk(ins), "operands_all_read of {ins:?}");
        for &r in &def_regs[first_def..] {
            written_in[r.0 as usize] = mark;
        }
    }
    def_start.push(def_regs.len() as u32);
    Scan { reads, def_regs, def_start, read_across, operands_all_read }
}

/// [`ValueView::operands_all_read`] of `ins` by a walk of its own: the
/// reference debug builds check the scan's against.
#[cfg(debug_assertions)]
fn operands_all_read_by_walk(ins: &Instruction) -> bool {
    let mut operand_reads = 0;
    let mut unread = false;
    let mut first = true;
    ins.for_each_reg(|_, a| {
        // The guard comes first.
        if std::mem::take(&mut first) && ins.guard.is_some() {
            return;
        }
        if !a.write {
            if a.read {
                operand_reads += 1;
            } else {
                unread = true;
            }
        }
    });
    !unread && operand_reads > 0
}

/// φ placement: per block, the registers of `placed` with a φ at its entry
/// (in register order).
#[inline(never)]
fn place_phis(cfg: &Cfg, frontiers: &Frontiers, regs: &[RegInfo], placed: &[bool], placement: &mut PhiPlacement) -> Vec<Vec<RegId>> {
    let mut phi_blocks_of: Vec<Vec<RegId>> = vec![Vec::new(); cfg.node_bound()];
    for (ri, info) in regs.iter().enumerate() {
        if placed[ri] {
            placement.place(frontiers, &cfg.block_of_stmt, info, |b| phi_blocks_of[b.index()].push(RegId(ri as u32)));
        }
    }
    phi_blocks_of
}

/// The blocks with a φ of one register: the iterated dominance frontier of
/// its definitions' blocks (Cytron et al.), with marks per block reused
/// from register to register (a placement per register asked about cost
/// renderer -O2's `copy-prop` 1.6 M of allocations).
struct PhiPlacement {
    work: Vec<NodeIndex>,
    /// Per block, the mark of the last placement whose walk reached it.
    seen: Vec<u32>,
    /// Per block, the mark of the last placement that gave it a φ.
    placed: Vec<u32>,
    /// The mark of the next placement.
    next: u32,
}

impl PhiPlacement {
    fn new(blocks: usize) -> PhiPlacement {
        PhiPlacement { work: Vec::new(), seen: vec![u32::MAX; blocks], placed: vec![u32::MAX; blocks], next: 0 }
    }

    /// Gives `phi_at` each block with a φ of the register `info` describes, once.
    fn place(&mut self, frontiers: &Frontiers, block_of_stmt: &[NodeIndex], info: &RegInfo, mut phi_at: impl FnMut(NodeIndex)) {
        if info.defs.is_empty() || info.vector {
            return;
        }
        let PhiPlacement { work, seen, placed, next } = self;
        let mark = *next;
        *next += 1;
        work.clear();
        for &k in &info.defs {
            let b = block_of_stmt[k];
            if seen[b.index()] != mark {
                seen[b.index()] = mark;
                work.push(b);
            }
        }
        while let Some(b) = work.pop() {
            for &d in frontiers.of(b) {
                if placed[d.index()] != mark {
                    placed[d.index()] = mark;
                    phi_at(d);
                    if seen[d.index()] != mark {
                        seen[d.index()] = mark;
                        work.push(d);
                    }
                }
            }
        }
    }
}

/// Renaming walk over the dominator tree: sets the version of every read in
/// `scan.reads`, marks the registers read at a φ in `regs`, and gives the
/// statements whose value some read sees (a `Def` version read).
#[inline(never)]
/// Also gives each reachable block's span in the walk (`ValueView::dom_span`).
fn rename(cfg: &Cfg, dom: &DomTree, scan: &mut Scan, phi_blocks_of: &[Vec<RegId>], regs: &mut [RegInfo]) -> (Vec<bool>, Vec<(u32, u32)>) {
    // The version each register holds (the top of its stack, as Cytron et
    // al. keep one), and a log of the versions a block's definitions
    // replaced, put back on leaving the block.
    let mut current: Vec<VersionDef> = vec![VersionDef::Entry; regs.len()];
    // Sized for every write of the function at once (it holds the
    // writes and read φs of the blocks on the walk's current path, so it
    // rarely grows past that): growing it from empty cost matrix_free
    // -O2's `rename` 0.26 M.
    let mut replaced: Vec<(RegId, VersionDef)> = Vec::with_capacity(scan.def_regs.len());
    let mut read_defs = vec![false; scan.reads.len()];
    let mut span = vec![(u32::MAX, 0u32); cfg.node_bound()];
    let mut clock = 0u32;
    // (block, once entered: the length of `replaced` on entry).
    let mut walk: Vec<(NodeIndex, Option<usize>)> = vec![(cfg.entry, None)];
    while let Some((b, entered)) = walk.pop() {
        clock += 1;
        if let Some(mark) = entered {
            for (r, v) in replaced.drain(mark..).rev() {
                current[r.0 as usize] = v;
            }
            span[b.index()].1 = clock;
            continue;
        }
        span[b.index()].0 = clock;
        walk.push((b, Some(replaced.len())));
        let define = |current: &mut [VersionDef], replaced: &mut Vec<(RegId, VersionDef)>, r: RegId, v: VersionDef| replaced.push((r, std::mem::replace(&mut current[r.0 as usize], v)));
        // A φ of a register no block reads before writing it is read by
        // nothing: the walk skips it (such φs are placed with the view only
        // by `build_placing_every_phi`, the tests' reference).
        for &r in phi_blocks_of[b.index()].iter().filter(|r| scan.read_across[r.0 as usize]) {
            define(&mut current, &mut replaced, r, VersionDef::Phi(b));
        }
        for k in cfg.block(b).stmts.clone() {
            for (r, v) in scan.reads[k].iter_mut() {
                // `scan` set the reads of a write earlier in the block.
                if v.def == VersionDef::Entry {
                    v.def = current[r.0 as usize];
                }
                match v.def {
                    VersionDef::Phi(_) => regs[r.0 as usize].read_at_phi = true,
                    VersionDef::Def(d) => read_defs[d] = true,
                    VersionDef::Entry => {}
                }
            }
            // Only the registers some block reads before writing them are
            // read through `current`: the others' reads were all set by
            // `scan` (renderer -O2: `rename` 13.9 -> 11.8 M).
            for &r in scan.defs(k).iter().filter(|r| scan.read_across[r.0 as usize]) {
                define(&mut current, &mut replaced, r, VersionDef::Def(k));
            }
        }
        for &c in dom.children(b).iter().rev() {
            walk.push((c, None));
        }
    }
    (read_defs, span)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(src: &str) -> (Function, ValueView) {
        let (f, v, _, _) = view_and_graphs(src);
        (f, v)
    }

    /// [`view`], with the CFG and dominator tree the view was built on.
    fn view_and_graphs(src: &str) -> (Function, ValueView, Cfg, DomTree) {
        let text = format!(".version 8.0\n.target sm_80\n.address_size 64\n{src}");
        let m = ptx_ir::parse_str(&text).unwrap();
        let f = match &m.items[0] {
            ptx_ir::ir::Item::Func(f) => (**f).clone(),
            _ => panic!(),
        };
        let cfg = Cfg::build(&f);
        let dom = DomTree::dominators(&cfg);
        let v = ValueView::build(&f, &cfg, &dom);
        (f, v, cfg, dom)
    }

    fn reg(f: &Function, name: &str) -> RegId {
        RegId(f.regs.iter().position(|r| &*r.name == name).unwrap() as u32)
    }

    #[test]
    fn straight_line_versions() {
        let (f, v) = view(".entry k(.param .u64 p) { .reg .b32 %r<4>; .reg .b64 %rd1;
            ld.param.u64 %rd1, [p];
            mov.u32 %r1, 1;
            st.global.u32 [%rd1], %r1;
            mov.u32 %r1, 2;
            st.global.u32 [%rd1], %r1;
            ret; }");
        let r1 = reg(&f, "%r1");
        // statements: 0 decl, 1 decl, 2 ld, 3 mov, 4 st, 5 mov, 6 st
        assert_eq!(v.read(4, r1).unwrap().def, VersionDef::Def(3));
        assert_eq!(v.read(6, r1).unwrap().def, VersionDef::Def(5));
        assert!(!v.needs_writes(r1));
        assert_eq!(v.version_at(r1, 5), VersionDef::Def(3));
        assert_eq!(v.version_at(r1, 3), VersionDef::Entry);
    }

    #[test]
    fn loop_phi_and_merge() {
        let (f, v) = view(".entry k(.param .u64 p) { .reg .b32 %r<4>; .reg .pred %p1; .reg .b64 %rd1;
            ld.param.u64 %rd1, [p];
            mov.u32 %r1, 0;
        L:
            add.u32 %r1, %r1, 1;
            setp.lt.u32 %p1, %r1, 10;
            @%p1 bra L;
            st.global.u32 [%rd1], %r1;
            ret; }");
        let r1 = reg(&f, "%r1");
        // 5: L, 6: add reads the φ at L.
        assert!(matches!(v.read(6, r1).unwrap().def, VersionDef::Phi(_)));
        assert_eq!(v.read(7, r1).unwrap().def, VersionDef::Def(6));
        assert_eq!(v.read(9, r1).unwrap().def, VersionDef::Def(6));
        assert!(v.needs_writes(r1));
    }

    /// The constant each version holds, by `mov` of an immediate and
    /// `add` of two constants, with `propagate`.
    fn constants(f: &Function, v: &ValueView) -> FxHashMap<Version, u64> {
        let body = f.body.as_deref().unwrap();
        v.propagate(body, &[Opcode::MOV, Opcode::ADD], |k, ins, known| {
            let Some(ptx_ir::ir::Operand::Reg(d)) = ins.operands.first() else { return None };
            let value = |o: &ptx_ir::ir::Operand| match o {
                ptx_ir::ir::Operand::Imm(ptx_ir::ir::Imm::Int(i)) => Some(i.value),
                ptx_ir::ir::Operand::Reg(r) => known.get(&v.read(k, r.reg)?).copied(),
                _ => None,
            };
            let c = match ins.opcode {
                Opcode::MOV => value(&ins.operands[1])?,
                _ => value(&ins.operands[1])?.wrapping_add(value(&ins.operands[2])?),
            };
            Some((d.reg, c))
        })
    }

    /// One round of `propagate` is its fixed point when every definition
    /// comes before its readers in the text; a definition laid out after
    /// its reader takes the repeat.
    #[test]
    fn propagate_reaches_the_fixed_point() {
        let (f, v) = view(".entry k(.param .u64 p) { .reg .b32 %r<4>; .reg .b64 %rd1;
            ld.param.u64 %rd1, [p];
            mov.u32 %r1, 5;
            add.u32 %r2, %r1, 1;
            add.u32 %r3, %r2, %r2;
            st.global.u32 [%rd1], %r3;
            ret; }");
        let c = constants(&f, &v);
        assert_eq!(c.get(&v.read(6, reg(&f, "%r3")).unwrap()), Some(&12));
        // The block of the `mov` is laid out after the block reading it.
        let (f, v) = view(".entry k(.param .u64 p) { .reg .b32 %r<4>; .reg .b64 %rd1;
            ld.param.u64 %rd1, [p];
            bra SET;
            USE:
            add.u32 %r2, %r1, 1;
            add.u32 %r3, %r2, %r2;
            st.global.u32 [%rd1], %r3;
            ret;
            SET:
            mov.u32 %r1, 5;
            bra USE; }");
        let c = constants(&f, &v);
        assert_eq!(c.get(&v.read(7, reg(&f, "%r3")).unwrap()), Some(&12));
    }

    /// A loop inside an if: φs at the loop head (entry and back edge) and
    /// at the join (two arms, one of them the loop's exit).
    const LOOP_INSIDE_IF: &str = ".entry k(.param .u64 p) { .reg .b32 %r<4>; .reg .pred %p<3>; .reg .b64 %rd1;
        ld.param.u64 %rd1, [p];
        ld.global.u32 %r1, [%rd1];
        mov.u32 %r2, 0;
        setp.eq.u32 %p1, %r1, 0;
        @%p1 bra SKIP;
    L:
        add.u32 %r2, %r2, %r1;
        sub.u32 %r1, %r1, 1;
        setp.ne.u32 %p2, %r1, 0;
        @%p2 bra L;
    SKIP:
        st.global.u32 [%rd1], %r2;
        ret; }";

    #[test]
    fn phi_inputs_are_the_versions_at_the_predecessors_ends() {
        let (f, v, cfg, _) = view_and_graphs(LOOP_INSIDE_IF);
        let (r1, r2) = (reg(&f, "%r1"), reg(&f, "%r2"));
        let body = f.body.as_ref().unwrap();
        let at = |label: &str| body.iter().position(|s| matches!(s, Stmt::Label(l) if f.label_name(*l) == label)).unwrap();
        let (head, skip) = (cfg.block_of_stmt[at("L")], cfg.block_of_stmt[at("SKIP")]);
        // %r1: the load, then the `sub` in the loop; %r2: the `mov`, then the `add`.
        let (load, sub) = (v.reg(r1).defs[0], v.reg(r1).defs[1]);
        let (mov, add) = (v.reg(r2).defs[0], v.reg(r2).defs[1]);
        let (entry, latch) = (cfg.block_of_stmt[load], cfg.block_of_stmt[sub]);
        let inputs = |b, r| {
            let mut got = v.phi_inputs(&cfg, b, r).to_vec();
            got.sort();
            got
        };
        let want = |pairs: &[(NodeIndex, VersionDef)]| {
            let mut w = pairs.to_vec();
            w.sort();
            w
        };
        // Loop head: from the entry block and the back edge.
        assert_eq!(inputs(head, r1), want(&[(entry, VersionDef::Def(load)), (latch, VersionDef::Def(sub))]));
        assert_eq!(inputs(head, r2), want(&[(entry, VersionDef::Def(mov)), (latch, VersionDef::Def(add))]));
        // SKIP: from the entry block (skipping the loop) and the loop's exit.
        assert_eq!(inputs(skip, r2), want(&[(entry, VersionDef::Def(mov)), (latch, VersionDef::Def(add))]));
        // Each input is what the predecessor holds at its end.
        for r in (0..f.regs.len()).map(|r| RegId(r as u32)) {
            let blocks = v.phi_blocks(r);
            assert!(blocks.windows(2).all(|w| w[0] < w[1]), "φ blocks of {r:?} in order");
            for b in blocks {
                for (p, def) in v.phi_inputs(&cfg, b, r) {
                    assert_eq!(def, v.version_at_end(r, p));
                }
            }
        }
        let r2 = reg(&f, "%r2");
        assert!(matches!(v.read(f.body.as_ref().unwrap().len() - 2, r2).unwrap().def, VersionDef::Phi(_)));
    }

    #[test]
    fn guarded_write_keeps_the_register() {
        let (f, v) = view(".entry k(.param .u64 p) { .reg .b32 %r<4>; .reg .pred %p1; .reg .b64 %rd1;
            ld.param.u64 %rd1, [p];
            ld.global.u32 %r2, [%rd1];
            setp.eq.u32 %p1, %r2, 0;
            mov.u32 %r1, 5;
            @%p1 mov.u32 %r1, 7;
            st.global.u32 [%rd1], %r1;
            ret; }");
        let r1 = reg(&f, "%r1");
        assert!(v.needs_writes(r1));
        assert_eq!(v.read(8, r1).unwrap().def, VersionDef::Def(7));
    }

    /// The versions of the reads, set by the scan (a write earlier in the
    /// block; `UNREAD_PHI`'s `add.u32 %r4, %r4, 1` also writes what it
    /// reads) or by the renaming walk (one pass over the dominator tree),
    /// agree with the general query, `version_at`, for every read, and
    /// `is_read` with the reads.
    #[test]
    fn reads_agree_with_version_at() {
        let sources = [
            LOOP_INSIDE_IF,
            UNREAD_PHI,
            ".entry k(.param .u64 p) { .reg .b32 %r<4>; .reg .pred %p1; .reg .b64 %rd1;
            ld.param.u64 %rd1, [p];
            ld.global.u32 %r2, [%rd1];
            setp.eq.u32 %p1, %r2, 0;
            mov.u32 %r1, 5;
            @%p1 mov.u32 %r1, 7;
            @%p1 bra DONE;
            add.u32 %r1, %r1, %r3;
        DONE:
            st.global.u32 [%rd1], %r1;
            ret; }",
        ];
        for src in sources {
            let (f, v) = view(src);
            let body = f.body.as_ref().unwrap();
            let mut seen_defs = vec![false; body.len()];
            let mut reads = 0;
            for k in (0..body.len()).filter(|&k| v.reachable(k)) {
                for &(r, version) in v.reads(k) {
                    assert_eq!(version.reg, r);
                    assert_eq!(version.def, v.version_at(r, k), "statement {k} reads {r:?}");
                    if let VersionDef::Def(d) = version.def {
                        seen_defs[d] = true;
                    }
                    reads += 1;
                }
            }
            assert!(reads > 5);
            assert!((0..body.len()).all(|k| v.is_read(k) == seen_defs[k]));
        }
    }

    /// Registers whose φs no read sees, which the view places only when
    /// asked: `%r2`, written in both arms of an `if` and, under a guard,
    /// again before its read after the join (`version_at` names the φ as
    /// the old value the guarded write keeps); `%r4`, written in a loop
    /// before each read.
    const UNREAD_PHI: &str = ".entry k(.param .u64 p) { .reg .b32 %r<5>; .reg .pred %p<3>; .reg .b64 %rd1;
        ld.param.u64 %rd1, [p];
        ld.global.u32 %r1, [%rd1];
        setp.eq.u32 %p1, %r1, 0;
        @%p1 bra ELSE;
        mov.u32 %r2, 1;
        bra JOIN;
    ELSE:
        mov.u32 %r2, 2;
    JOIN:
        @%p1 mov.u32 %r2, 3;
        st.global.u32 [%rd1+4], %r2;
        mov.u32 %r3, 4;
    L:
        add.u32 %r3, %r3, 1;
        mov.u32 %r4, %r3;
        add.u32 %r4, %r4, 1;
        st.global.u32 [%rd1+8], %r4;
        setp.ne.u32 %p2, %r3, 9;
        @%p2 bra L;
        ret; }";

    /// The φs of registers no block reads before writing, placed when
    /// `version_at` first asks about them, give every answer the view with
    /// every register's φs placed with it gives: the version each register
    /// holds before every statement and at the end of every block, the φ
    /// blocks and their inputs, and the reads.
    #[test]
    fn phis_placed_when_asked_agree_with_every_phi_placed() {
        for src in [LOOP_INSIDE_IF, UNREAD_PHI] {
            let (f, asked, cfg, dom) = view_and_graphs(src);
            let every = ValueView::build_placing_every_phi(&f, &cfg, &dom);
            assert!(asked.same_as(&every));
            let (mut all_asked, mut all_every) = (asked.all_phis(), every.all_phis());
            all_asked.sort();
            all_every.sort();
            assert_eq!(all_asked, all_every);
            let mut unplaced_phis = 0;
            for r in (0..f.regs.len()).map(|r| RegId(r as u32)) {
                for k in (0..f.body.as_ref().unwrap().len()).filter(|&k| asked.reachable(k)) {
                    assert_eq!(asked.version_at(r, k), every.version_at(r, k), "{r:?} before statement {k}");
                }
                for b in cfg.graph.node_indices().filter(|&b| dom.contains(b)) {
                    assert_eq!(asked.version_at_end(r, b), every.version_at_end(r, b), "{r:?} at the end of {b:?}");
                }
                let blocks = asked.phi_blocks(r);
                assert_eq!(blocks, every.phi_blocks(r), "φ blocks of {r:?}");
                for &b in &blocks {
                    assert_eq!(asked.phi_inputs(&cfg, b, r), every.phi_inputs(&cfg, b, r));
                }
                if !asked.placed[r.0 as usize] {
                    unplaced_phis += blocks.len();
                }
            }
            if src == UNREAD_PHI {
                assert!(unplaced_phis >= 1, "the test has a φ placed when asked");
            }
        }
    }

    /// The shortcut for registers written once (their write, where its
    /// block strictly dominates) gives what the walk up the dominator tree
    /// gives, at the entry of every block, for every register.
    #[test]
    fn registers_written_once_hold_their_write_where_it_dominates() {
        for src in [LOOP_INSIDE_IF, UNREAD_PHI] {
            let (f, v, cfg, dom) = view_and_graphs(src);
            let mut shortcuts = 0;
            for r in (0..f.regs.len()).map(|r| RegId(r as u32)) {
                for b in cfg.graph.node_indices().filter(|&b| dom.contains(b)) {
                    let by_walk = v.version_at_entry_by_walk(r, b);
                    assert_eq!(v.version_at_entry(r, b), by_walk, "{r:?} at the entry of {b:?}");
                    if let [k] = v.reg(r).defs[..] {
                        shortcuts += (cfg.block_of_stmt[k] != b && dom.dominates(cfg.block_of_stmt[k], b)) as usize;
                    }
                }
            }
            assert!(shortcuts > 0, "the test takes the shortcut");
        }
    }
}
